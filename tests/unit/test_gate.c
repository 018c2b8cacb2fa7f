/* SPDX-License-Identifier: Apache-2.0 */
/* test_gate.c - the one gate's decision (cell/gate.h) as a table: who asked, through which
 * face, for what, and what the path is -> allowed, or the reason it is refused; then the
 * facts gathered from a real descriptor (a state directory's shape, below an anchor, an
 * image's shape) and one message a user reads; the same for the namespaces a bundle names to
 * join or leaves out (cell/gate_ns.c), their facts from this process's own namespaces. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cell/gate.h"
#include "util/fs.h"

#define CLI(uid_) { GATE_CLI, (uid_), NULL }
#define JOB(uid_) { GATE_JOBFILE, (uid_), "/src/app" }
#define API(uid_) { GATE_API, (uid_), "/src/app" }
#define BUNDLE(uid_) { GATE_BUNDLE, (uid_), "/run/c/b1" }

struct row {
	const char *what;
	struct gate_ask ask;
	enum gate_use use;
	struct gate_facts facts;
	enum gate_reason want;
};

/* facts: a directory at p, owned by uid 0, nothing else known about it */
#define DIR_AT(p) .path = (p), .is_dir = true
#define BELOW .below_anchor = true

static const struct row rows[] = {
	/* the command line: the caller's own choice, within the host's and warren's own places */
	{ "cli root: an image directory", CLI(0), GATE_ROOT, { DIR_AT("/srv/images/debian"), .image_shaped = true }, GATE_OK },
	{ "cli root: not shaped as an image is still the caller's choice", CLI(0), GATE_ROOT, { DIR_AT("/srv/x") }, GATE_OK },
	{ "cli root: /etc", CLI(0), GATE_ROOT, { DIR_AT("/etc") }, GATE_SYSTEM_ROOT },
	{ "cli root: /home", CLI(0), GATE_ROOT, { DIR_AT("/home") }, GATE_SYSTEM_ROOT },
	{ "cli root: a state directory", CLI(0), GATE_ROOT, { DIR_AT("/var/lib/warren"), .in_state = true, .state_root = true }, GATE_IN_STATE },
	{ "cli root: the store's image by path", CLI(0), GATE_ROOT, { DIR_AT("/var/lib/warren/images/bb/rootfs"), .in_state = true }, GATE_IN_STATE },
	{ "cli root: holds a state directory", CLI(0), GATE_ROOT, { DIR_AT("/srv/x"), .holds_state = "/srv/x/state" }, GATE_HOLDS_STATE },
	{ "cli root: a chroot's /proc", CLI(0), GATE_ROOT, { DIR_AT("/srv/chroot/proc"), .kernel_fs = true }, GATE_KERNEL_FS },
	{ "cli root as root: alice's home", CLI(0), GATE_ROOT, { DIR_AT("/home/alice"), .home_of = "alice" }, GATE_OTHER_HOME },
	{ "cli root as root: inside alice's home", CLI(0), GATE_ROOT, { DIR_AT("/home/alice/img"), .home_of = "alice" }, GATE_OTHER_HOME },
	{ "cli root as root: holds alice's home", CLI(0), GATE_ROOT, { DIR_AT("/data"), .home_of = "alice", .holds_home = true }, GATE_OTHER_HOME },
	{ "cli worktree: a project", CLI(1000), GATE_WORKTREE, { DIR_AT("/src/app") }, GATE_OK },
	{ "cli worktree: /usr", CLI(0), GATE_WORKTREE, { DIR_AT("/usr") }, GATE_SYSTEM_RW },
	{ "cli worktree: holds the state", CLI(1000), GATE_WORKTREE, { DIR_AT("/src"), .holds_state = "/src/st" }, GATE_HOLDS_STATE },
	{ "cli worktree: in a state directory", CLI(1000), GATE_WORKTREE, { DIR_AT("/st/serve"), .in_state = true }, GATE_IN_STATE },
	{ "cli worktree as root: in alice's home is root's choice", CLI(0), GATE_WORKTREE, { DIR_AT("/home/alice/p") }, GATE_OK },
	{ "cli bind: /etc read-only", CLI(0), GATE_BIND_RO, { DIR_AT("/etc") }, GATE_OK },
	{ "cli bind: /etc read-write", CLI(0), GATE_BIND, { DIR_AT("/etc") }, GATE_SYSTEM_RW },
	{ "cli bind: /proc", CLI(0), GATE_BIND_RO, { DIR_AT("/proc/1") }, GATE_HOST_PLACE },
	{ "cli bind: /run", CLI(0), GATE_BIND_RO, { DIR_AT("/run/user/1000") }, GATE_HOST_PLACE },
	{ "cli bind: a plain file of /run read-only", CLI(0), GATE_BIND_RO, { .path = "/run/c/hosts", .is_reg = true, .nlink = 1, .run_plain_file = true }, GATE_OK },
	{ "cli bind: a plain file of /run read-write", CLI(0), GATE_BIND, { .path = "/run/c/hosts", .is_reg = true, .nlink = 1, .run_plain_file = true }, GATE_HOST_PLACE },
	{ "cli bind: a file with 2 names read-write", CLI(0), GATE_BIND, { .path = "/src/f", .is_reg = true, .nlink = 2 }, GATE_HARD_LINKS },
	{ "cli bind: a file with 2 names read-only", CLI(0), GATE_BIND_RO, { .path = "/src/f", .is_reg = true, .nlink = 2 }, GATE_OK },
	{ "cli bind: a kernel fs", CLI(0), GATE_BIND_RO, { DIR_AT("/srv/ch/sys"), .kernel_fs = true }, GATE_KERNEL_FS },
	{ "cli bind: runs of a state directory", CLI(0), GATE_BIND_RO, { DIR_AT("/var/lib/warren/runs"), .in_state = true }, GATE_IN_STATE },
	{ "cli bind as root: alice's home is root's choice", CLI(0), GATE_BIND_RO, { DIR_AT("/home/alice"), .home_of = "alice" }, GATE_OK },

	/* a job file: only below its own directory, however it is written */
	{ "job root: below its directory", JOB(1000), GATE_ROOT, { DIR_AT("/src/app/img"), BELOW }, GATE_OK },
	{ "job root: .. (the caller's home)", JOB(1000), GATE_ROOT, { DIR_AT("/home/bob") }, GATE_OUTSIDE_ANCHOR },
	{ "job root: an absolute image directory", JOB(0), GATE_ROOT, { DIR_AT("/srv/images/debian"), .image_shaped = true }, GATE_OUTSIDE_ANCHOR },
	{ "job root as root: alice's home", JOB(0), GATE_ROOT, { DIR_AT("/home/alice"), .home_of = "alice" }, GATE_OUTSIDE_ANCHOR },
	{ "job root: below, but a state directory", JOB(0), GATE_ROOT, { DIR_AT("/src/app/st"), BELOW, .in_state = true }, GATE_IN_STATE },
	{ "job root: below, a kernel fs", JOB(0), GATE_ROOT, { DIR_AT("/src/app/proc"), BELOW, .kernel_fs = true }, GATE_KERNEL_FS },
	{ "job root as root: below, in alice's home", JOB(0), GATE_ROOT, { DIR_AT("/home/alice/p/img"), BELOW, .home_of = "alice" }, GATE_OTHER_HOME },
	{ "job worktree: below", JOB(1000), GATE_WORKTREE, { DIR_AT("/src/app/sub"), BELOW }, GATE_OK },
	{ "job worktree: outside", JOB(1000), GATE_WORKTREE, { DIR_AT("/src") }, GATE_OUTSIDE_ANCHOR },
	{ "job bind: below", JOB(1000), GATE_BIND, { DIR_AT("/src/app/cache"), BELOW }, GATE_OK },
	{ "job bind: ~/.ssh", JOB(1000), GATE_BIND_RO, { DIR_AT("/home/bob/.ssh") }, GATE_OUTSIDE_ANCHOR },
	{ "job bind: /etc read-only", JOB(0), GATE_BIND_RO, { DIR_AT("/etc") }, GATE_OUTSIDE_ANCHOR },
	{ "job bind as root: below, in alice's home", JOB(0), GATE_BIND_RO, { DIR_AT("/home/alice/p/c"), BELOW, .home_of = "alice" }, GATE_OTHER_HOME },

	/* a job sent to the server: below the request's worktree */
	{ "api root: . was the server's directory", API(0), GATE_ROOT, { DIR_AT("/var/lib/warren/serve"), .in_state = true }, GATE_OUTSIDE_ANCHOR },
	{ "api root: below the worktree", API(0), GATE_ROOT, { DIR_AT("/src/app/img"), BELOW }, GATE_OK },
	{ "api root: below the worktree, in a state directory", API(0), GATE_ROOT, { DIR_AT("/src/app/st/serve"), BELOW, .in_state = true }, GATE_IN_STATE },
	{ "api bind: outside the worktree", API(0), GATE_BIND_RO, { DIR_AT("/srv/data") }, GATE_OUTSIDE_ANCHOR },

	/* a bundle: its root below its directory, or an image elsewhere */
	{ "bundle root: rootfs below the bundle", BUNDLE(0), GATE_ROOT, { DIR_AT("/run/c/b1/rootfs"), BELOW }, GATE_OK },
	{ "bundle root: the pause image (no etc, bin or usr)", BUNDLE(0), GATE_ROOT, { DIR_AT("/run/c/b1/rootfs"), BELOW }, GATE_OK },
	{ "bundle root: an image in podman's store", BUNDLE(0), GATE_ROOT,
	  { DIR_AT("/var/lib/containers/storage/overlay/x/merged"), .image_shaped = true }, GATE_OK },
	{ "bundle root: the state directory", BUNDLE(0), GATE_ROOT, { DIR_AT("/var/lib/warren"), .in_state = true, .state_root = true }, GATE_IN_STATE },
	{ "bundle root: /var/lib/containers", BUNDLE(0), GATE_ROOT, { DIR_AT("/var/lib/containers") }, GATE_NOT_IMAGE },
	{ "bundle root: /var/lib/kubelet", BUNDLE(0), GATE_ROOT, { DIR_AT("/var/lib/kubelet") }, GATE_NOT_IMAGE },
	{ "bundle root: /var/log", BUNDLE(0), GATE_ROOT, { DIR_AT("/var/log") }, GATE_NOT_IMAGE },
	{ "bundle root: a home with bin/", BUNDLE(0), GATE_ROOT, { DIR_AT("/home/alice"), .image_shaped = true, .home_of = "alice" }, GATE_OTHER_HOME },
	{ "bundle root: /etc", BUNDLE(0), GATE_ROOT, { DIR_AT("/etc"), .image_shaped = false }, GATE_SYSTEM_ROOT },
	{ "bundle root: /root (shaped, the host's)", BUNDLE(0), GATE_ROOT, { DIR_AT("/root"), .image_shaped = true }, GATE_SYSTEM_ROOT },
	{ "bundle bind: the runtime's hosts file", BUNDLE(0), GATE_BIND_RO, { .path = "/run/c/b1/hosts", .is_reg = true, .nlink = 1, .run_plain_file = true }, GATE_OK },
	{ "bundle bind: a volume of the kubelet", BUNDLE(0), GATE_BIND, { DIR_AT("/var/lib/kubelet/pods/u/volumes/v") }, GATE_OK },
	{ "bundle bind as root: alice's home", BUNDLE(0), GATE_BIND_RO, { DIR_AT("/home/alice"), .home_of = "alice" }, GATE_OTHER_HOME },

	/* a bundle's state directory: one of its caller's that exists, never a new place */
	{ "bundle state: the caller's", BUNDLE(0), GATE_STATE, { DIR_AT("/var/lib/w2"), .in_state = true, .state_root = true }, GATE_OK },
	{ "bundle state: a new directory", BUNDLE(0), GATE_STATE, { DIR_AT("/srv/new") }, GATE_NOT_STATE },
	{ "bundle state: inside one", BUNDLE(0), GATE_STATE, { DIR_AT("/var/lib/warren/runs"), .in_state = true }, GATE_NOT_STATE },
	{ "bundle state: another user's", BUNDLE(1000), GATE_STATE,
	  { DIR_AT("/home/alice/.local/state/warren"), .in_state = true, .state_root = true, .owner = 1001 }, GATE_NOT_STATE },
};

static void decisions(void **state)
{
	(void)state;
	int bad = 0;
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		struct gate_facts f = rows[i].facts;
		if (rows[i].use == GATE_STATE && f.state_root && !f.owner)
			f.owner = rows[i].ask.uid;
		enum gate_reason got = gate_decide(&rows[i].ask, rows[i].use, &f);
		if (got != rows[i].want) {
			fprintf(stderr, "%s: got reason %d, want %d\n", rows[i].what, got, rows[i].want);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* A scratch directory of this test's own (never the host's /tmp), removed at the end. */
static char scratch[4096];

static int setup(void **state)
{
	(void)state;
	char cwd[2048];
	assert_non_null(getcwd(cwd, sizeof cwd));
	snprintf(scratch, sizeof scratch, "%s/build/test-scratch/test_gate.XXXXXX", cwd);
	mkdir("build/test-scratch", 0755);
	return mkdtemp(scratch) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
	return system(cmd);
}

static char *at(const char *rel)
{
	return xasprintf("%s/%s", scratch, rel);
}

static void mk(const char *rel, mode_t mode)
{
	_cleanup_free_ char *p = at(rel);
	assert_int_equal(mkdir(p, mode), 0);
	chmod(p, mode);
}

/* The facts from real descriptors: the state directory's shape and the walk up to it, a known
 * state below, the anchor, an image's shape. */
static void facts(void **state)
{
	(void)state;
	mk("st", 0755);
	mk("st/runs", 0700);
	mk("st/runs/run_x", 0700);
	mk("st/serve", 0700);
	mk("img", 0755);
	mk("img/etc", 0755);
	mk("notst", 0755);
	mk("notst/runs", 0755);   /* a project's runs/, open to all: not a state directory */
	_cleanup_free_ char *st = at("st"), *run = at("st/runs/run_x"), *serve = at("st/serve"), *img = at("img"), *notst = at("notst");
	_cleanup_free_ char *canon_scratch = abs_path(scratch);
	const char *states[] = { st, NULL };
	const struct gate_ask cli = { GATE_CLI, 0, NULL }, job = { GATE_JOBFILE, 0, canon_scratch };
	struct gate_facts f;

	int fd = open(run, O_PATH | O_CLOEXEC);
	gate_facts_at(fd, run, &cli, GATE_BIND_RO, states, &f);
	assert_true(f.in_state);
	assert_false(f.state_root);
	gate_facts_free(&f);
	close(fd);

	fd = open(st, O_PATH | O_CLOEXEC);
	gate_facts_at(fd, st, &cli, GATE_STATE, NULL, &f);
	assert_true(f.in_state);
	assert_true(f.state_root);
	gate_facts_free(&f);
	close(fd);

	fd = open(serve, O_PATH | O_CLOEXEC);
	gate_facts_at(fd, serve, &job, GATE_ROOT, states, &f);
	assert_true(f.in_state);
	assert_true(f.below_anchor);
	assert_int_equal(gate_decide(&job, GATE_ROOT, &f), GATE_IN_STATE);
	gate_facts_free(&f);
	close(fd);

	fd = open(scratch, O_PATH | O_CLOEXEC);
	gate_facts_at(fd, scratch, &cli, GATE_ROOT, states, &f);
	assert_false(f.in_state);
	assert_string_equal(f.holds_state, st);
	gate_facts_free(&f);
	close(fd);

	fd = open(img, O_PATH | O_CLOEXEC);
	gate_facts_at(fd, img, &cli, GATE_ROOT, states, &f);
	assert_true(f.image_shaped);
	assert_false(f.in_state);
	assert_null(f.holds_state);
	assert_false(f.below_anchor);   /* the command line has no anchor */
	gate_facts_free(&f);
	close(fd);

	/* another state directory, known (registered), below a path: counted for a root file system
	 * and a job file's paths, not for the command line's own worktree */
	const char *others[] = { "", st, NULL };
	fd = open(scratch, O_PATH | O_CLOEXEC);
	gate_facts_at(fd, scratch, &cli, GATE_ROOT, others, &f);
	assert_string_equal(f.holds_state, st);
	gate_facts_free(&f);
	gate_facts_at(fd, scratch, &cli, GATE_WORKTREE, others, &f);
	assert_null(f.holds_state);
	gate_facts_free(&f);
	mk("st2", 0755);   /* a name once registered that is no state directory now */
	_cleanup_free_ char *st2 = at("st2");
	const char *stale[] = { "", st2, NULL };
	gate_facts_at(fd, scratch, &job, GATE_BIND_RO, stale, &f);
	assert_null(f.holds_state);
	gate_facts_free(&f);
	close(fd);

	fd = open(notst, O_PATH | O_CLOEXEC);
	gate_facts_at(fd, notst, &cli, GATE_ROOT, states, &f);
	assert_false(f.in_state);
	assert_false(f.image_shaped);
	gate_facts_free(&f);
	close(fd);
}

/* One line: the option, the path, why, what to do. */
static void messages(void **state)
{
	(void)state;
	const struct gate_ask job = { GATE_JOBFILE, 1000, "/src/app" };
	const struct gate_facts f = { .path = "/home/bob", .is_dir = true };
	_cleanup_free_ char *m = gate_message(GATE_OUTSIDE_ANCHOR, &job, GATE_ROOT, &f, "rootfs", NULL);
	assert_string_equal(m, "rootfs /home/bob: it is outside the job file's directory: a job file may only name paths below its own; "
			       "import the image (warren image import) and give image: NAME, or pass --rootfs /home/bob on the command line of warren job run");
	assert_null(strchr(m, '\n'));
	const struct gate_ask bundle = { GATE_BUNDLE, 0, NULL };
	const struct gate_facts s = { .path = "/srv/new" };
	_cleanup_error_ struct error err = { 0 };
	assert_int_equal(gate_check_path("/nonexistent/warren-state", &bundle, GATE_STATE, NULL, "annotations.warren.state", &err), -EPERM);
	assert_non_null(strstr(err.msg, "annotations.warren.state /nonexistent/warren-state: not a state directory of uid 0's that exists"));
	_cleanup_free_ char *m2 = gate_message(GATE_NOT_STATE, &bundle, GATE_STATE, &s, "annotations.warren.state", NULL);
	assert_non_null(strstr(m2, "never make one"));
}

/* ---- namespaces ---- */

struct ns_row {
	const char *what;
	uid_t uid;
	struct gate_ns_facts f;
	enum gate_reason want;
};

#define NS_AT(k, t) .kind = (k), .given = true, .nsfs = true, .type = (t)

static const struct ns_row ns_rows[] = {
	{ "the pod's network namespace (a bind mount by containerd)", 0, { NS_AT(GATE_NS_NET, CLONE_NEWNET) }, GATE_OK },
	{ "the sandbox cell's ipc namespace", 0, { NS_AT(GATE_NS_IPC, CLONE_NEWIPC) }, GATE_OK },
	{ "the sandbox cell's uts namespace", 0, { NS_AT(GATE_NS_UTS, CLONE_NEWUTS) }, GATE_OK },
	{ "the sandbox cell's pid namespace", 0, { NS_AT(GATE_NS_PID, CLONE_NEWPID) }, GATE_OK },
	{ "a regular file as the network", 0, { .kind = GATE_NS_NET, .given = true }, GATE_NS_NOT_NS },
	{ "a path that does not open", 0, { .kind = GATE_NS_NET, .given = true, .open_errno = ENOENT }, GATE_NS_NOT_NS },
	{ "an ipc namespace named as the network", 0, { NS_AT(GATE_NS_NET, CLONE_NEWIPC) }, GATE_NS_WRONG_TYPE },
	{ "a user namespace named as pid", 0, { NS_AT(GATE_NS_PID, CLONE_NEWUSER) }, GATE_NS_WRONG_TYPE },
	{ "the host's network by path", 0, { NS_AT(GATE_NS_NET, CLONE_NEWNET), .host = true }, GATE_NS_HOST },
	{ "the host's network by path, allowed", 0, { NS_AT(GATE_NS_NET, CLONE_NEWNET), .host = true, .host_allowed = true }, GATE_OK },
	{ "the host's pid, wrong type still refused first", 0, { NS_AT(GATE_NS_PID, CLONE_NEWNET), .host = true, .host_allowed = true }, GATE_NS_WRONG_TYPE },
	{ "no network entry: hostNetwork", 0, { .kind = GATE_NS_NET }, GATE_NS_HOST },
	{ "no ipc entry: hostIPC", 0, { .kind = GATE_NS_IPC }, GATE_NS_HOST },
	{ "no pid entry: hostPID", 0, { .kind = GATE_NS_PID }, GATE_NS_HOST },
	{ "no uts entry: hostNetwork's hostname", 0, { .kind = GATE_NS_UTS }, GATE_NS_HOST },
	{ "no network entry, allowed", 0, { .kind = GATE_NS_NET, .host_allowed = true }, GATE_OK },
	{ "rootless: a pod's network", 1000, { NS_AT(GATE_NS_NET, CLONE_NEWNET) }, GATE_NS_ROOTLESS },
	{ "rootless: no network entry, allowed", 1000, { .kind = GATE_NS_NET, .host_allowed = true }, GATE_NS_ROOTLESS },
	{ "rootless: no network entry", 1000, { .kind = GATE_NS_NET }, GATE_NS_HOST },
	{ "rootless: a regular file", 1000, { .kind = GATE_NS_NET, .given = true }, GATE_NS_NOT_NS },
};

static void ns_decisions(void **state)
{
	(void)state;
	int bad = 0;
	for (size_t i = 0; i < sizeof ns_rows / sizeof *ns_rows; i++) {
		const struct gate_ask a = { GATE_BUNDLE, ns_rows[i].uid, NULL };
		enum gate_reason got = gate_decide_ns(&a, &ns_rows[i].f);
		if (got != ns_rows[i].want) {
			fprintf(stderr, "%s: got reason %d, want %d\n", ns_rows[i].what, got, ns_rows[i].want);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

/* The facts of this process's own namespaces (the caller's: the host's, to the gate), of a
 * file that is none, and of a path that is not there. */
static void ns_facts(void **state)
{
	(void)state;
	struct gate_ns_facts f = { .kind = GATE_NS_NET };
	int fd = gate_ns_open("/proc/self/ns/net", &f);
	assert_true(fd >= 0);
	assert_true(f.nsfs && f.host);
	assert_int_equal(f.type, CLONE_NEWNET);
	close(fd);
	f = (struct gate_ns_facts){ .kind = GATE_NS_NET };
	fd = gate_ns_open("/proc/self/ns/ipc", &f);
	assert_int_equal(f.type, CLONE_NEWIPC);
	close(fd);
	f = (struct gate_ns_facts){ .kind = GATE_NS_NET };
	assert_int_equal(gate_ns_open("/proc/self/status", &f), -1);
	assert_true(f.given && !f.nsfs && !f.open_errno);
	f = (struct gate_ns_facts){ .kind = GATE_NS_NET };
	assert_int_equal(gate_ns_open("/nonexistent/netns", &f), -1);
	assert_int_equal(f.open_errno, ENOENT);
	const struct gate_ask a = { GATE_BUNDLE, 0, NULL };
	_cleanup_error_ struct error err = { 0 };
	int jfd = 7;
	assert_int_equal(gate_check_ns(&a, GATE_NS_NET, "/proc/self/ns/net", "/run/netns/x", false, "linux.namespaces[1]", &jfd, &err), -EPERM);
	assert_int_equal(jfd, -1);
	assert_non_null(strstr(err.msg, "linux.namespaces[1] (network) path /run/netns/x: the host's own network namespace, which is the pod's hostNetwork"));
	error_clear(&err);
	assert_int_equal(gate_check_ns(&a, GATE_NS_NET, "/proc/self/ns/net", NULL, true, "linux.namespaces[1]", &jfd, &err), 0);
	assert_int_equal(jfd, -1);   /* the host's, allowed: none to join */
}

static void ns_messages(void **state)
{
	(void)state;
	const struct gate_ns_facts left = { .kind = GATE_NS_PID };
	_cleanup_free_ char *m = gate_ns_message(GATE_NS_HOST, &left, "linux.namespaces", NULL);
	assert_string_equal(m, "linux.namespaces: no pid namespace: the bundle asks for the host's (the pod's hostPID), refused to untrusted pods; "
			       "give the bundle a pid namespace, or the node's operator allows it with 'oci.host_pid = allow' in /etc/warren/warren.conf");
	const struct gate_ns_facts wrong = { NS_AT(GATE_NS_NET, CLONE_NEWIPC) };
	_cleanup_free_ char *m2 = gate_ns_message(GATE_NS_WRONG_TYPE, &wrong, "linux.namespaces[4]", "/proc/9/ns/ipc");
	assert_string_equal(m2, "linux.namespaces[4] (network) path /proc/9/ns/ipc: an ipc namespace, not a network namespace; give the pod's network namespace");
	const struct gate_ns_facts file = { .kind = GATE_NS_IPC, .given = true };
	_cleanup_free_ char *m3 = gate_ns_message(GATE_NS_NOT_NS, &file, "linux.namespaces[2]", "/etc/passwd");
	assert_non_null(strstr(m3, "linux.namespaces[2] (ipc) path /etc/passwd: not a namespace; give the file of the pod's ipc namespace"));
	assert_null(strchr(m3, '\n'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decisions),
		cmocka_unit_test(facts),
		cmocka_unit_test(messages),
		cmocka_unit_test(ns_decisions),
		cmocka_unit_test(ns_facts),
		cmocka_unit_test(ns_messages),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
