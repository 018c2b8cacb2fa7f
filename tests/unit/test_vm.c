/* SPDX-License-Identifier: Apache-2.0 */
/* test_vm.c - the vm driver's decisions on plain inputs: the guest's report lines (split
 * across reads, in any order, hostile ones bounded and made printable), the guest's RAM from
 * the memory limit, the host cgroup's limits, and what the driver refuses (what the guest's
 * orders cannot carry, too many binds, too little memory). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cell/container.h"
#include "cell/executor.h"
#include "cell/vm.h"
#include "cell/vmexec.h"

#define MiB (1ull << 20)

/* A cell whose report_fd is one end of a socket pair; *peer the other. */
static void cell_with_report(struct cell *c, int *peer)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	memset(c, 0, sizeof *c);
	c->report_fd = sv[0];
	c->pidfd = c->go_fd = c->cgroup_fd = -1;
	*peer = sv[1];
	vm_cell_init(c); /* the driver's state, without a VM: what vm_read_report needs */
}

/* The next report: its type and status (or 0, 0 when none is complete), message in *msg. */
static int next(struct cell *c, int32_t *status, char **msg)
{
	struct cell_report r;
	*msg = NULL;
	if (vm_read_report(c, &r, msg) != 1)
		return 0;
	*status = r.status;
	return (int)r.type;
}

static void test_reports(void **state)
{
	(void)state;
	struct cell c;
	int peer;
	cell_with_report(&c, &peer);
	int32_t st;
	char *msg;
	/* a line split over two writes, then three lines in one */
	assert_int_equal(write(peer, "{\"started\":", 11), 11);
	assert_int_equal(next(&c, &st, &msg), 0);
	const char *rest = "true}\n{\"pids_max\":3}\nnot json\n{\"status\":768}\n";
	assert_int_equal(write(peer, rest, strlen(rest)), (ssize_t)strlen(rest));
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_STARTED);
	free(msg);
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_PIDS_MAX);
	assert_int_equal(st, 3);
	free(msg);
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_EXIT); /* "not json" is skipped */
	assert_int_equal(st, 768);
	free(msg);
	assert_int_equal(next(&c, &st, &msg), 0);
	/* a hostile guest: an escape sequence in the message, an exit code out of range */
	const char *bad = "{\"error\":\"\\u001b[2Jgone\",\"errno\":2,\"code\":999}\n{\"pids_max\":-5}\n";
	assert_int_equal(write(peer, bad, strlen(bad)), (ssize_t)strlen(bad));
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_ERROR);
	assert_int_equal(st, 125);
	assert_null(strchr(msg, '\x1b'));
	assert_non_null(strstr(msg, "gone"));
	free(msg);
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_PIDS_MAX);
	assert_int_equal(st, 0);
	free(msg);
	/* the guest's OOM kills, bounded */
	const char *oom = "{\"oom_kills\":2}\n{\"oom_kills\":99999999999}\n";
	assert_int_equal(write(peer, oom, strlen(oom)), (ssize_t)strlen(oom));
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_OOM_KILLS);
	assert_int_equal(st, 2);
	free(msg);
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_OOM_KILLS);
	assert_int_equal(st, 0);
	free(msg);
	/* the job's peak of processes, bounded; the scratch's use, and its being full */
	const char *more = "{\"pids_peak\":20}\n{\"pids_peak\":-1}\n{\"scratch\":[8388608,0],\"full\":true}\n{\"scratch\":[4096,-7]}\n";
	assert_int_equal(write(peer, more, strlen(more)), (ssize_t)strlen(more));
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_PIDS_PEAK);
	assert_int_equal(st, 20);
	free(msg);
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_PIDS_PEAK);
	assert_int_equal(st, 0);
	free(msg);
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_SCRATCH_FULL);
	assert_string_equal(msg, "8388608 0");
	free(msg);
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_SCRATCH);
	assert_string_equal(msg, "4096 0");
	free(msg);
	/* the refused writes: the list is passed on whole (the host bounds it), the total bounded */
	const char *rw = "{\"refused_writes\":[[\"/usr/x\",2,false]],\"total\":2}\n";
	assert_int_equal(write(peer, rw, strlen(rw)), (ssize_t)strlen(rw));
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_REFUSED);
	assert_int_equal(st, 2);
	assert_string_equal(msg, "[[\"/usr/x\",2,false]]");
	free(msg);
	/* an error with its own code (a command not found) */
	const char *nf = "{\"error\":\"command not found\",\"errno\":0,\"code\":127}\n";
	assert_int_equal(write(peer, nf, strlen(nf)), (ssize_t)strlen(nf));
	assert_int_equal(next(&c, &st, &msg), CELL_REPORT_ERROR);
	assert_int_equal(st, 127);
	assert_string_equal(msg, "command not found");
	free(msg);
	close(peer);
	assert_int_equal(next(&c, &st, &msg), 0);
	vm_close(&c);
	close(c.report_fd);
}

static void test_guest_memory(void **state)
{
	(void)state;
	static const struct { uint64_t limit, want; } cases[] = {
		{ 0, VM_DEFAULT_MEMORY },                 /* no limit */
		{ UINT64_MAX, VM_DEFAULT_MEMORY },        /* "none" */
		{ 300 * MiB, 300 * MiB },
		{ 300 * MiB + 12345, 300 * MiB },         /* whole MiB */
		{ 16384 * MiB, VM_MAX_MEMORY },           /* at most */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct cell_spec s = { 0 };
		s.limits.memory = cases[i].limit;
		assert_int_equal(vm_guest_memory(&s), cases[i].want);
		struct limits host;
		s.limits.pids = 20;
		vm_host_limits(&s, &host);
		assert_int_equal(host.pids, 0); /* qemu's threads are not the job's */
		if (cases[i].limit && cases[i].limit != UINT64_MAX)
			assert_int_equal(host.memory, cases[i].want + VM_QEMU_OVERHEAD);
		else
			assert_int_equal(host.memory, cases[i].limit); /* none stays none */
	}
}

static void test_refused(void **state)
{
	(void)state;
	struct cell_spec s = { .worktree = (char *)"/src/app" };
	struct error err = { 0 };
	assert_int_equal(vm_check_spec(&s, false, &err), 0);
	assert_int_equal(vm_check_spec(&s, true, &err), 0); /* a job: its executor over a port */
	s.net.mode = NET_NAT;
	assert_int_equal(vm_check_spec(&s, false, &err), 0); /* a tap on warren's bridge */
	s.rootless = true;
	assert_int_equal(vm_check_spec(&s, false, &err), 0); /* passt behind pasta (net/pasta.c) */
	s.rootless = false;
	s.net.mode = NET_NONE;
	/* the state directory inside the worktree: the guest would get it through the share */
	static const struct { const char *state; bool refused; } st[] = {
		{ "/src/app/.warren", true }, { "/src/app", true }, { "/src/application", false }, { "/var/lib/warren", false },
	};
	for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
		struct cell_spec t = s;
		t.statedir = (char *)st[i].state;
		assert_int_equal(vm_check_spec(&t, false, &err) < 0, st[i].refused);
		if (st[i].refused)
			assert_non_null(strstr(err.msg, "lies inside the worktree /src/app"));
		error_clear(&err);
	}
	s.limits.memory = 64 * MiB;
	assert_true(vm_check_spec(&s, false, &err) < 0);
	assert_non_null(strstr(err.msg, "--memory 64M is too small for a VM"));
	error_clear(&err);
	s.limits.memory = VM_MIN_MEMORY;
	assert_int_equal(vm_check_spec(&s, false, &err), 0);
	/* what the guest's orders carry is not refused */
	int dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), file = open("/dev/null", O_PATH | O_CLOEXEC);
	struct cell_mount m = { .source = (char *)"/srv/cache", .destination = (char *)"/opt/cache", .fd = dir };
	struct cell_spec t = s;
	t.worktree = NULL;
	t.workdir = (char *)"/src";
	t.hostname = (char *)"box";
	t.rootfs = (char *)"/srv/image";
	t.mounts = &m, t.n_mounts = 1;
	t.policy.no_sys = t.policy.require_landlock = true;
	assert_int_equal(vm_check_spec(&t, false, &err), 0);
	t = s;
	t.worktree_ro = true;
	assert_int_equal(vm_check_spec(&t, false, &err), 0);
	/* a bind of a file is (qemu shares a directory holding it alone), not more binds than the
	 * VM has devices */
	m.fd = file;
	t.mounts = &m, t.n_mounts = 1;
	assert_int_equal(vm_check_spec(&t, false, &err), 0);
	assert_true(vm_fd_is_file(file));
	assert_false(vm_fd_is_file(dir));
	struct cell_mount many[VM_MAX_BINDS + 1];
	for (size_t i = 0; i <= VM_MAX_BINDS; i++)
		many[i] = (struct cell_mount){ .source = (char *)"/srv", .destination = (char *)"/opt/x", .fd = dir };
	t.mounts = many, t.n_mounts = VM_MAX_BINDS;
	assert_int_equal(vm_check_spec(&t, false, &err), 0);
	t.n_mounts = VM_MAX_BINDS + 1;
	assert_true(vm_check_spec(&t, false, &err) < 0);
	assert_non_null(strstr(err.msg, "17 binds"));
	error_clear(&err);
	close(dir);
	close(file);
}

/* What the console keeper writes for input in (head and tail bytes kept). */
static char *kept(const char *in, size_t head, size_t tail)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write(p[1], in, strlen(in)), (ssize_t)strlen(in));
	close(p[1]);
	int out = memfd_create("console", MFD_CLOEXEC); /* nothing in the host's /tmp */
	assert_true(out >= 0);
	vm_console_keep(p[0], out, head, tail);
	close(p[0]);
	off_t n = lseek(out, 0, SEEK_END);
	char *text = calloc(1, (size_t)n + 1);
	assert_int_equal(pread(out, text, (size_t)n, 0), n);
	close(out);
	return text;
}

static void test_console_keep(void **state)
{
	(void)state;
	char *t = kept("0123456789abcdefghijklmnopXYZ", 10, 8);
	assert_string_equal(t, "0123456789\n[warren: 11 bytes of the console cut here]\nlmnopXYZ");
	free(t);
	t = kept("0123456789abcdefgh", 10, 8); /* head and tail hold it all: as it is */
	assert_string_equal(t, "0123456789abcdefgh");
	free(t);
	t = kept("short", 10, 8);
	assert_string_equal(t, "short");
	free(t);
	t = kept("0123456789abcdefghi", 10, 8); /* one byte over */
	assert_string_equal(t, "0123456789\n[warren: 1 bytes of the console cut here]\nbcdefghi");
	free(t);
}

/* A hostile guest sends more executor messages than the runner's socket queues and stops
 * (qemu gone) while the runner waits for the cell's helpers: the host's relay, blocked on the
 * runner, is not waited for forever (it is killed: the run ends). */
static void test_relay_blocked_reaped(void **state)
{
	(void)state;
	int runner[2], port[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, runner), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, port), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(runner[0]);
		close(port[0]);
		vmexec_host_relay(runner[1], port[1]);
		_exit(0);
	}
	close(runner[1]);
	close(port[1]);
	struct { struct vmx_frame f; struct exec_hdr h; } m = { { sizeof(struct exec_hdr), VMX_MSG, 0 }, { .type = 99 } };
	/* in one write: more than the runner's socket takes (its send buffer, some 300 messages) */
	size_t n = 2000;
	char *burst = malloc(n * sizeof m);
	for (size_t i = 0; i < n; i++)
		memcpy(burst + i * sizeof m, &m, sizeof m);
	assert_int_equal(write(port[0], burst, n * sizeof m), (ssize_t)(n * sizeof m));
	free(burst);
	close(port[0]); /* qemu is gone; the runner (runner[0]) reads nothing more */
	struct cell c = { 0 };
	cell_helper_slot(&c)->pid = pid;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cell_reap_helpers(&c);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 10);
	assert_int_equal(waitpid(pid, NULL, WNOHANG), -1); /* reaped */
	close(runner[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reports),
		cmocka_unit_test(test_guest_memory),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_console_keep),
		cmocka_unit_test(test_relay_blocked_reaped),
	};
	return cmocka_run_group_tests_name("vm", tests, NULL, NULL);
}
