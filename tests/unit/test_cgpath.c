/* SPDX-License-Identifier: Apache-2.0 */
/* test_cgpath.c - cgroup_path_parse: an OCI bundle's linux.cgroupsPath (untrusted) in the
 * cgroupfs and the systemd form, and what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"

static void test_paths(void **state)
{
	(void)state;
	static const struct { const char *v; bool systemd, rootless; const char *want; } t[] = {
		{ "/kubepods/burstable/pod1/abc", false, false, "kubepods/burstable/pod1/abc" },
		{ "/kubepods/burstable/pod1/abc/", false, false, "kubepods/burstable/pod1/abc" },
		{ "/a", false, false, "a" },
		{ "kubepods-burstable-pod123.slice:cri-containerd:abc", false, false,
		  "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod123.slice/cri-containerd-abc.scope" },
		{ "kubepods-burstable-pod123.slice:cri-containerd:abc", true, false,
		  "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod123.slice/cri-containerd-abc.scope" },
		{ ":libpod:abc", true, false, "system.slice/libpod-abc.scope" },
		{ ":libpod:abc", true, true, "user.slice/libpod-abc.scope" },
		{ "-.slice:p:n", true, false, "p-n.scope" },
		{ "machine.slice::n", true, false, "machine.slice/n.scope" },
		{ "a-b.slice:p:c.slice", true, false, "a.slice/a-b.slice/c.slice" },
		{ "a.slice:p:..", true, false, "a.slice/p-...scope" }, /* one name, no way up */
		/* refused */
		{ "/kubepods/../escape", false, false, NULL }, { "/..", false, false, NULL }, { "/a/./b", false, false, NULL },
		{ "/a//b", false, false, NULL }, { "/", false, false, NULL }, { "//", false, false, NULL },
		{ "", false, false, NULL }, { "kubepods/x", false, false, NULL }, { "/warren", false, false, NULL },
		{ "/warren/run_x/y", false, false, NULL }, { "/a/.hidden", false, false, NULL },
		{ "/a/b c", false, false, NULL }, { "/a/b\nc", false, false, NULL }, { "a:b", false, false, NULL },
		{ "a:b:c:d", false, false, NULL }, { "a--b.slice:p:n", true, false, NULL }, { "-a.slice:p:n", true, false, NULL },
		{ "a-.slice:p:n", true, false, NULL }, { ".slice:p:n", true, false, NULL }, { "a/b.slice:p:n", true, false, NULL },
		{ "a.slice:p:", true, false, NULL }, { "a.slice::..", true, false, NULL }, { "a.slice:p:x/../../y", true, false, NULL }, { "a.slice:p:x/y", true, false, NULL }, { "a.slice:p/q:n", true, false, NULL },
		{ "notaslice:p:n", true, false, NULL }, { "/kubepods", true, false, NULL }, { "-.slice:warren:x.slice", true, false, "x.slice" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char *rel = NULL;
		struct error err = { 0 };
		int r = cgroup_path_parse(t[i].v, t[i].systemd, t[i].rootless, &rel, &err);
		if (t[i].want ? r != 0 || !rel || strcmp(rel, t[i].want) : r == 0)
			fail_msg("cgroup_path_parse(\"%s\", systemd %d): r=%d rel=%s err=%s, want %s", t[i].v, t[i].systemd, r,
				 rel ? rel : "(null)", err.msg ? err.msg : "", t[i].want ? t[i].want : "refused");
		if (r < 0 && (!err.msg || !strstr(err.msg, "linux.cgroupsPath")))
			fail_msg("cgroup_path_parse(\"%s\"): the refusal does not name the field: %s", t[i].v, err.msg ? err.msg : "");
		free(rel);
		error_clear(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_paths) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
