/* SPDX-License-Identifier: Apache-2.0 */
/* test_mounts.c - the decisions about a cell's extra mounts and names (cell/mounts.h): which
 * host trees a bind may show, where in the cell it may go, SRC[:DST], hostnames; case by case;
 * and that the policy sees the mounts the spec holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cell/mounts.h"
#include "cell/spec.h"

static void system_trees(void **state)
{
	(void)state;
	const char *yes[] = { "/", "/etc", "/etc/ssl", "/usr/share", "/lib64", "/var", "/var/lib", "/home", "/root",
			      "/opt", "/run/user/1000", "/var/run/docker.sock", "/proc/1", "/boot/efi" };
	const char *no[] = { "/var/lib/x", "/home/alice", "/home/alice/.cache/pip", "/opt/tools", "/srv/data", "/usrlocal",
			     "/etcetera", "/root/proj", "/tmp/build" };
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		if (!path_is_system_tree(yes[i]))
			fail_msg("%s: expected a system tree", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		if (path_is_system_tree(no[i]))
			fail_msg("%s: not a system tree", no[i]);
}

/* an image's root: never a tree of the host's own whose root-owned files hold its secrets */
static void rootfs_trees(void **state)
{
	(void)state;
	const char *refused[] = { "/etc", "/etc/ssl", "/root", "/root/.ssh", "/boot", "/proc/1/root", "/sys", "/dev",
				  "/tmp", "/var", "/var/lib", "/home", "/srv", "/opt", "/mnt", "/media", "/run", "/var/run" };
	const char *fine[] = { "/var/lib/warren/images/bb/rootfs", "/run/containerd/io.containerd.runtime.v2.task/default/c1/rootfs",
			       "/home/alice/img", "/tmp/build/rootfs", "/srv/images/debian", "/etcetera", "/usr/share/img" };
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
		if (!rootfs_refused(refused[i]))
			fail_msg("%s: expected refused as an image's root", refused[i]);
	for (size_t i = 0; i < sizeof fine / sizeof *fine; i++)
		if (rootfs_refused(fine[i]))
			fail_msg("%s: refused as an image's root", fine[i]);
}

static void sources(void **state)
{
	(void)state;
	const char *refused[] = { "/", "/proc", "/proc/1/root", "/sys/fs", "/dev", "/dev/shm", "/run", "/run/user/1000",
				  "/var/run", "/tmp", "/var/tmp" };
	const char *fine[] = { "/etc", "/usr/share/zoneinfo", "/tmp/cache", "/home/alice/.npm", "/runner", "/proceeds" };
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
		if (!mount_source_refused(refused[i]))
			fail_msg("%s: expected refused", refused[i]);
	for (size_t i = 0; i < sizeof fine / sizeof *fine; i++)
		if (mount_source_refused(fine[i]))
			fail_msg("%s: refused: %s", fine[i], mount_source_refused(fine[i]));
}

static void split(void **state)
{
	(void)state;
	struct { const char *arg, *src, *dst; } t[] = {
		{ "/a/b", "/a/b", "/a/b" }, { "/a:/b", "/a", "/b" }, { "rel:/x/y", "rel", "/x/y" }, { "/a:", "/a", "" },
		{ "/a:/b:c", "/a", "/b:c" },
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		char *src, *dst;
		mount_arg_split(t[i].arg, &src, &dst);
		assert_string_equal(src, t[i].src);
		assert_string_equal(dst, t[i].dst);
		free(src);
		free(dst);
	}
}

static void destinations(void **state)
{
	(void)state;
	struct { const char *in, *out; } ok[] = {
		{ "/opt/cache", "/opt/cache" }, { "/opt//cache/", "/opt/cache" }, { "/./opt/./x", "/opt/x" }, { "/", "/" },
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		const char *why = NULL;
		char *n = mount_dst_normalise(ok[i].in, &why);
		assert_non_null(n);
		assert_string_equal(n, ok[i].out);
		free(n);
	}
	const char *bad[] = { "opt/cache", "", "/opt/../proc", "/a/..", "./x" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		const char *why = NULL;
		if (mount_dst_normalise(bad[i], &why) || !why)
			fail_msg("'%s': expected refused with a reason", bad[i]);
	}
	struct cell_spec s = { .worktree = (char *)"/src/app", .home = (char *)"/home/warren", .statedir = (char *)"/var/lib/warren" };
	const char *refused[] = { "/", "/proc", "/proc/sys", "/dev/shm", "/sys", "/tmp", "/tmp/x", "/var/tmp/y", "/var",
				  "/src", "/src/app", "/src/app/node_modules", "/var/lib/warren/runs", "/var/lib", "/home", "/home/warren" };
	const char *fine[] = { "/opt/cache", "/home/warren/.cache/pip", "/srv/app", "/src/application",
			       "/procx", "/etc/ssl/certs", "/opt/warren/externals" };
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
		if (!mount_dst_refused(refused[i], &s))
			fail_msg("%s: expected refused", refused[i]);
	for (size_t i = 0; i < sizeof fine / sizeof *fine; i++)
		if (mount_dst_refused(fine[i], &s))
			fail_msg("%s: refused: %s", fine[i], mount_dst_refused(fine[i], &s));
	/* a pod's volume (an OCI bundle's bind): also /tmp, /var/tmp and a new file in /dev */
	const char *pod_fine[] = { "/tmp", "/tmp/x", "/var/tmp", "/var/tmp/y", "/dev/termination-log", "/etc/hosts" };
	const char *pod_refused[] = { "/", "/proc", "/sys", "/dev", "/dev/null", "/dev/pts", "/dev/shm", "/dev/shm/x",
				      "/dev/a/b", "/var", "/src/app", "/home" };
	for (size_t i = 0; i < sizeof pod_fine / sizeof *pod_fine; i++)
		if (mount_dst_refused_for(pod_fine[i], &s, true))
			fail_msg("pod %s: refused: %s", pod_fine[i], mount_dst_refused_for(pod_fine[i], &s, true));
	for (size_t i = 0; i < sizeof pod_refused / sizeof *pod_refused; i++)
		if (!mount_dst_refused_for(pod_refused[i], &s, true))
			fail_msg("pod %s: expected refused", pod_refused[i]);
	s.worktree = NULL;   /* --work none */
	assert_null(mount_dst_refused("/src/app", &s));
}

static void hostnames(void **state)
{
	(void)state;
	const char *yes[] = { "a", "build-42", "A1", "x123456789012345678901234567890123456789012345678901234567890ab" };
	const char *no[] = { "", "-a", "a-", "a_b", "a.b", "é", "x123456789012345678901234567890123456789012345678901234567890abc" };
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
		if (!hostname_valid(yes[i]))
			fail_msg("'%s': expected valid", yes[i]);
	for (size_t i = 0; i < sizeof no / sizeof *no; i++)
		if (hostname_valid(no[i]))
			fail_msg("'%s': expected invalid", no[i]);
}

/* spec_add_mount: the cell's mounts and the policy's view of them (spec_policy_ctx) agree. */
static void policy_view(void **state)
{
	(void)state;
	struct cell_spec s = { .id = "run_TEST", .worktree = strdup("/work/repo"), .home = strdup("/home/warren") };
	spec_add_mount(&s, (struct cell_mount){ .source = strdup("/srv/data"), .destination = strdup("/data"), .readonly = true,
						.fd = -1 });
	spec_add_mount(&s, (struct cell_mount){ .source = strdup("/srv/out"), .destination = strdup("/out"), .fd = -1 });
	struct policy_ctx p = spec_policy_ctx(&s);
	assert_int_equal(p.n_mounts, 2);
	assert_string_equal(p.mounts[0].source, "/srv/data");
	assert_string_equal(p.mounts[1].destination, "/out");
	assert_true(p.mounts[0].readonly);
	assert_false(p.mounts[1].readonly);
	char *why = NULL;
	assert_false(policy_allows(&p, "/data/x", POLICY_WRITE, &why));
	assert_non_null(strstr(why, "read-only bind of /srv/data at /data"));
	free(why);
	assert_true(policy_allows(&p, "/out/x", POLICY_WRITE, &why));
	cell_spec_free(&s);
	assert_null(s.mounts);
	assert_null(s.policy_mounts);
}

/* A volume's group is the job's supplementary group of that number only when it is one of
 * them and none of the host's system groups (root's, shadow's...); never rootless. */
static void volume_groups(void **state)
{
	(void)state;
	gid_t groups[] = { 0, 42, 2000, 3000 };
	struct cell_spec s = { .gid = 1000, .groups = groups, .n_groups = 4, .id_base = 1000000000 };
	const struct { gid_t source; bool mapped; } cases[] = {
		{ 2000, true }, { 3000, true }, { 0, false }, { 42, false }, { 999, false }, { 1000, false }, { 4000, false },
		{ 1000002000, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		if (spec_volume_group(&s, cases[i].source) != cases[i].mapped)
			fail_msg("source gid %u: %s", (unsigned)cases[i].source, cases[i].mapped ? "not mapped" : "mapped");
	s.rootless = true;
	assert_false(spec_volume_group(&s, 2000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(system_trees), cmocka_unit_test(rootfs_trees), cmocka_unit_test(sources), cmocka_unit_test(split),
		cmocka_unit_test(destinations), cmocka_unit_test(hostnames), cmocka_unit_test(policy_view),
		cmocka_unit_test(volume_groups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
