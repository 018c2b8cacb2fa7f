/* SPDX-License-Identifier: Apache-2.0 */
/* test_delegate.c - the cgroup v2 subtree delegated to a rootless caller (cgroup/delegate.h):
 * which group is the delegate from the caller's group and whose each group above it is, which
 * controllers a run may use below it, and the line that refuses a limit where there is none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cgroup/delegate.h"

/* owned: one letter a level from the root down to self, 'y' the caller's */
static void test_decide(void **state)
{
	(void)state;
	static const struct {
		bool v2, visible;
		const char *self, *owned;
		enum cgroup_deleg want;
		size_t depth;
	} t[] = {
		/* systemd's user@UID.service: the user's own down from it, root's above */
		{ true, true, "/user.slice/user-1000.slice/user@1000.service/app.slice/test.scope", "nnnyyy", CGROUP_DELEG_OK, 3 },
		/* systemd-run --user --scope: the same top */
		{ true, true, "/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope", "nnnyyy", CGROUP_DELEG_OK, 3 },
		/* a login's session scope: root's */
		{ true, true, "/user.slice/user-1000.slice/session-2.scope", "nnnn", CGROUP_DELEG_NOT_OWNED, 0 },
		/* a system scope with Delegate=yes and User=: the scope alone */
		{ true, true, "/system.slice/run-u7.scope", "nny", CGROUP_DELEG_OK, 2 },
		/* a gap: what is above a group of another's is not the caller's to use */
		{ true, true, "/a/b/c/d", "nyyny", CGROUP_DELEG_OK, 4 },
		{ true, true, "/a/b/c/d", "nynyy", CGROUP_DELEG_OK, 3 },
		/* the caller's own group another's: none, whatever is above */
		{ true, true, "/a/b/c", "nyyn", CGROUP_DELEG_NOT_OWNED, 0 },
		/* never the root, even one the caller owns (a cgroup namespace's) */
		{ true, true, "/a", "yy", CGROUP_DELEG_OK, 1 },
		{ true, true, "/", "y", CGROUP_DELEG_NOT_OWNED, 0 },
		/* v1, hybrid: none */
		{ false, true, "/user.slice/user-1000.slice/user@1000.service/app.slice/test.scope", "nnnyyy", CGROUP_DELEG_NOT_V2, 0 },
		/* not known, not visible (another cgroup namespace) */
		{ true, true, NULL, "n", CGROUP_DELEG_NO_SELF, 0 },
		{ true, false, "/a/b", "nnn", CGROUP_DELEG_NO_SELF, 0 },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		bool owned[16] = { false };
		size_t n = strlen(t[i].owned) - 1;
		for (size_t k = 0; k <= n; k++)
			owned[k] = t[i].owned[k] == 'y';
		struct cgroup_deleg_facts f = { .v2 = t[i].v2, .self = t[i].self, .visible = t[i].visible, .n = n, .owned = owned };
		size_t depth = 99;
		enum cgroup_deleg d = cgroup_deleg_decide(&f, &depth);
		if (d != t[i].want || depth != t[i].depth)
			fail_msg("case %zu (%s, %s): got %d depth %zu, want %d depth %zu", i, t[i].self ? t[i].self : "(null)",
				 t[i].owned, d, depth, t[i].want, t[i].depth);
	}
}

static void test_usable(void **state)
{
	(void)state;
	static const struct {
		const char *ctrl, *controllers, *subtree;
		bool procs;
		enum cgroup_deleg want;
	} t[] = {
		{ "memory", "cpu memory pids\n", "", false, CGROUP_DELEG_OK },
		{ "pids", "cpu memory pids\n", "", false, CGROUP_DELEG_OK },
		{ "cpu", "cpu memory pids\n", "memory", false, CGROUP_DELEG_OK },
		{ "cpuset", "cpu memory pids\n", "", false, CGROUP_DELEG_NO_CTRL },
		{ "memory", "", "", false, CGROUP_DELEG_NO_CTRL },
		/* a name inside another's is not it */
		{ "cpu", "cpuset memory\n", "", false, CGROUP_DELEG_NO_CTRL },
		{ "io", "misc memory\n", "", false, CGROUP_DELEG_NO_CTRL },
		/* with processes: only what it enables already */
		{ "memory", "cpu memory pids\n", "", true, CGROUP_DELEG_BUSY },
		{ "memory", "cpu memory pids\n", "memory pids\n", true, CGROUP_DELEG_OK },
		{ "cpu", "cpu memory pids\n", "memory pids\n", true, CGROUP_DELEG_BUSY },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		enum cgroup_deleg d = cgroup_deleg_usable(t[i].ctrl, t[i].controllers, t[i].subtree, t[i].procs);
		if (d != t[i].want)
			fail_msg("case %zu (%s of '%s', subtree '%s', procs %d): got %d, want %d", i, t[i].ctrl, t[i].controllers,
				 t[i].subtree, t[i].procs, d, t[i].want);
	}
}

/* each refusal names the limit, the reason with its group and what to do */
static void test_refusal(void **state)
{
	(void)state;
	static const struct {
		enum cgroup_deleg d;
		const char *want[3];
	} t[] = {
		{ CGROUP_DELEG_NOT_V2, { "v1 or hybrid", "run warren as root", "drop the limit" } },
		{ CGROUP_DELEG_NO_SELF, { "/s/x.scope", "systemd-run --user --scope -p Delegate=yes", "as root" } },
		{ CGROUP_DELEG_NOT_OWNED, { "cgroup /s/x.scope is not delegated", "uid 1000", "systemd-run --user --scope -p Delegate=yes" } },
		{ CGROUP_DELEG_NO_CTRL, { "/sys/fs/cgroup/d", "'memory' controller", "Delegate=memory pids cpu" } },
		{ CGROUP_DELEG_BUSY, { "/sys/fs/cgroup/d", "holds processes", "a group below it" } },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char *m = cgroup_deleg_refusal("--memory", t[i].d, "/s/x.scope", "/sys/fs/cgroup/d", "memory", 1000);
		if (strncmp(m, "--memory needs a cgroup", 23) || strchr(m, '\n'))
			fail_msg("case %zu: '%s' does not start with the limit, or is not one line", i, m);
		for (size_t k = 0; k < 3; k++)
			if (!strstr(m, t[i].want[k]))
				fail_msg("case %zu: '%s' lacks '%s'", i, m, t[i].want[k]);
		free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_decide), cmocka_unit_test(test_usable),
					    cmocka_unit_test(test_refusal) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
