/* SPDX-License-Identifier: Apache-2.0 */
/* init.c - the cell's pid 1, cloned by the host's side (container.c) into the cell's fresh
 * namespaces: it takes what it needs, builds the cell's root (root.c), starts the job in a user
 * namespace of its own that owns nothing, passes the supervisor's signals on, reaps, and
 * reports the job's end (report.c). A warm cell's init starts its job's process before the run
 * comes and lets it go at the take. */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cell/executor.h"
#include "cgroup/cgroup.h"
#include "policy/policy.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/sys.h"

#include "internal.h"

/* Write a map (uid_map, gid_map, setgroups) of pid under proc. */
static void write_map(struct cell_ctx *x, const char *proc, pid_t pid, const char *file, const char *line)
{
	char path[128];
	if (pid)
		snprintf(path, sizeof path, "%s/%d/%s", proc, (int)pid, file);
	else
		snprintf(path, sizeof path, "%s/self/%s", proc, file);
	int r = write_file(path, line, strlen(line));
	if (r < 0 && strcmp(file, "setgroups") != 0)
		die(x, -r, "cannot write %s (%.*s)", path, (int)strcspn(line, "\n"), line);
}

/* ---- the job ---- */

/* A plain command's job (a warm cell's take said 'd', or a cold start's spec says direct): its
 * EXEC_START is on the control socket, and it is started here as the job itself, with the
 * cwd, argv, env and streams the executor would give it (cell/executor.h), without the
 * executor. */
static void __attribute__((noreturn)) exec_direct(struct cell_ctx *x, const struct cell_io *io)
{
	char *buf = xmalloc(EXEC_MSG_MAX), *cwd;
	char **argv, **env;
	int fds[EXEC_FDS_MAX];
	ssize_t n = exec_msg_recv(io->control, buf, fds);
	struct exec_hdr h;
	if (n < (ssize_t)sizeof h || fds[0] < 0)
		die(x, n < 0 ? errno : EPROTO, "cannot receive the job's command");
	memcpy(&h, buf, sizeof h);
	if (h.type != EXEC_START || exec_start_parse(&h, buf + sizeof h, (size_t)n - sizeof h, &cwd, &argv, &env) < 0)
		die(x, EPROTO, "the job's command is malformed");
	if (dup2(fds[0], 1) < 0 || dup2(fds[1], 2) < 0)
		die(x, errno, "cannot set up the job's standard streams");
	executor_exec(cwd, argv, env);
}

/* The warm cell's job, its take come: the executor's (returns), or a plain command's. */
static void warm_job_take(struct cell_ctx *x, const struct cell_io *io)
{
	char how;
	if (read(x->take_r, &how, 1) != 1)
		_exit(125);
	if (how == 'd')
		exec_direct(x, io);
}

/* execve argv[0], searching the cell's PATH; reports 127/126 like a shell when it cannot. */
static void __attribute__((noreturn)) exec_job(struct cell_ctx *x)
{
	const struct cell_spec *s = x->s;
	int status;
	char *why = exec_failure(s->argv, s->env, exec_search(s->argv, s->env), &status);
	die_status(x, status, 0, "%s", why);
}

/* Every signal the job's process ignores or catches (what init, the supervisor and warren's
 * caller set: nohup, a shell's background job) back to its default action: those that
 * /proc/self/status lists (SigIgn, SigCgt), not one call for each of the 64 (62 system calls
 * of a cold run's job); all of them when it cannot be read. Through the system call, not
 * signal(): glibc refuses its own two (32 and 33), which a job of another C library may use. */
static void signal_default(int sig)
{
	struct { void (*handler)(int); unsigned long flags; void (*restorer)(void); uint64_t mask; } ka = { SIG_DFL, 0, NULL, 0 };
	syscall(SYS_rt_sigaction, sig, &ka, NULL, sizeof ka.mask);
}

static void signals_default(void)
{
	uint64_t set = ~0ULL;
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = '\0';
		const char *ign = strstr(buf, "\nSigIgn:\t"), *cgt = strstr(buf, "\nSigCgt:\t");
		if (ign && cgt)
			set = strtoull(ign + 9, NULL, 16) | strtoull(cgt + 9, NULL, 16);
	}
	for (int sig = 1; sig < NSIG; sig++)
		if ((set & (1ULL << (sig - 1))) && sig != SIGKILL && sig != SIGSTOP)
			signal_default(sig);
}

static void drop_bounding_caps(void)
{
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
			break;
}

static void __attribute__((noreturn)) job_main(struct cell_ctx *x, const struct cell_io *io, int go)
{
	const struct cell_spec *s = x->s;
	closep(&x->go);
	char c;
	if (read(go, &c, 1) != 1)
		_exit(125);
	close(go);
	umask(s->has_umask ? s->job_umask : x->caller_umask);
	closep(&x->take_w);
	sigset_t none;
	sigemptyset(&none);
	signals_default();
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() < 0)
		die(x, errno, "setsid");
	if (io->console >= 0 && ioctl(io->in, TIOCSCTTY, 0) < 0)
		die(x, errno, "cannot give the job its terminal");
	int fds[3] = { io->in, io->out, io->err };
	for (int i = 0; i < 3; i++) {
		/* a stream that is already at its number must lose CLOEXEC, dup2 would keep it */
		if (fds[i] == i) {
			fcntl(i, F_SETFD, 0);
		} else if (dup2(fds[i], i) < 0) {
			die(x, errno, "cannot set up the job's standard streams");
		}
	}
	if (setgroups(s->n_groups, s->groups) < 0 && (errno != EPERM || s->n_groups))
		die(x, errno, "cannot set the job's supplementary groups");
	if (setresgid(s->gid, s->gid, s->gid) < 0)
		die(x, errno, "cannot become gid %u in the cell", (unsigned)s->gid);
	if (s->uid != 0)
		drop_bounding_caps();
	if (setresuid(s->uid, s->uid, s->uid) < 0)
		die(x, errno, "cannot become uid %u in the cell", (unsigned)s->uid);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die(x, errno, "cannot set no_new_privs");
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (chdir(spec_cwd(s)) < 0)
		die(x, errno, s->workdir ? "--workdir %s: cannot enter it in the cell (it must exist there: a directory of the image, the host's /, the worktree or a bind)"
				      : "cannot enter the working directory %s in the cell", spec_cwd(s));
	/* nothing of warren's leaks into the job: every fd but 0-2 and the report is closed */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	/* rlimits, capabilities, Landlock, seccomp: for the job and for the executor's steps */
	struct error perr = { 0 };
	struct policy_ctx pc = spec_policy_ctx(s);
	if (policy_apply_job(&pc, io->watch, &perr) < 0)
		die(x, 0, "%s", perr.msg);
	if (x->take_r >= 0)
		warm_job_take(x, io);
	else if (s->direct && io->control >= 0)
		exec_direct(x, io);
	if (io->control >= 0)
		executor_main(s, io->control);
	exec_job(x);
}

/* Start the job in a user namespace of its own, write its id maps, let it go. */
static pid_t start_job(struct cell_ctx *x, const struct cell_io *io)
{
	const struct cell_spec *s = x->s;
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		die(x, errno, "pipe");
	struct clone_args a = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
	pid_t pid = sys_clone3(&a);
	if (pid < 0)
		die(x, errno, "cannot create the job's user namespace");
	if (pid == 0) {
		close(go[1]);
		job_main(x, io, go[0]);
	}
	close(go[0]);
	char line[64];
	if (s->rootless) {
		snprintf(line, sizeof line, "%u %u 1\n", (unsigned)s->uid, (unsigned)s->uid);
		write_map(x, "/proc", pid, "uid_map", line);
		write_map(x, "/proc", pid, "setgroups", "deny");
		snprintf(line, sizeof line, "%u %u 1\n", (unsigned)s->gid, (unsigned)s->gid);
		write_map(x, "/proc", pid, "gid_map", line);
	} else {
		snprintf(line, sizeof line, "0 %u %u\n", (unsigned)s->id_base, CELL_ID_RANGE);
		write_map(x, "/proc", pid, "uid_map", line);
		write_map(x, "/proc", pid, "gid_map", line);
	}
	/* from here on the job runs code of its own: init must not be ptrace-able or readable
	 * through /proc by it (earlier would break the rootless id maps) */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	x->job_go_ns = mono_ns();
	if (write(go[1], "g", 1) != 1)
		die(x, errno, "cannot start the job");
	close(go[1]);
	return pid;
}

/* A terminal from the cell's own devpts (so that tty(1) and ttyname work inside): its master
 * goes to the supervisor over the console socket, the job gets the other end. */
static void open_console(struct cell_ctx *x, struct cell_io *io)
{
	const struct cell_spec *s = x->s;
	int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || unlockpt(m) < 0)
		die(x, errno, "cannot open a terminal in the cell (/dev/ptmx)");
	int sl = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (sl < 0)
		die(x, errno, "cannot open the job's terminal");
	/* the job owns its terminal, as after a login */
	if (!s->rootless && fchown(sl, spec_host_uid(s), spec_host_gid(s)) < 0)
		die(x, errno, "cannot give the terminal to the run user");
	int r = fd_send(io->console, m, "t", 1);
	if (r < 0)
		die(x, -r, "cannot hand the terminal to the supervisor");
	close(m);
	close(io->console);
	io->in = io->out = sl;
	if (io->err < 0)
		io->err = sl; /* stderr too is the terminal (else the caller redirected it: a pipe) */
}

/* ---- init: pid 1 of the cell ---- */

/* The scratch tmpfs's use as a report's message ("<used> <free>"); false without one. */
static bool scratch_use(struct cell_ctx *x, char *m, size_t len, bool *full)
{
	struct statfs fs;
	if (x->scratch_fd < 0 || fstatfs(x->scratch_fd, &fs) < 0)
		return false;
	unsigned long long used = (unsigned long long)(fs.f_blocks - fs.f_bfree) * fs.f_bsize;
	unsigned long long avail = (unsigned long long)fs.f_bfree * fs.f_bsize;
	*full = avail < 65536;
	snprintf(m, len, "%llu %llu", used, avail);
	return true;
}

/* Report a full scratch; returns true when it is full. */
static bool report_scratch_full(struct cell_ctx *x)
{
	char m[64];
	bool full = false;
	if (scratch_use(x, m, sizeof m, &full) && full)
		report(x, CELL_REPORT_SCRATCH_FULL, 0, 0, m);
	return full;
}

/* The job ended with status: its scratch's use and its end, in one message. */
static void report_end(struct cell_ctx *x, int status)
{
	char buf[3 * sizeof(struct cell_report) + 64 + 72], m[64], t[72];
	size_t n = 0;
	bool full;
	snprintf(t, sizeof t, "%lld %lld %lld", (long long)x->root_built_ns, (long long)x->job_go_ns, (long long)mono_ns());
	if (scratch_use(x, m, sizeof m, &full))
		report_put(buf, &n, CELL_REPORT_SCRATCH, 0, 0, m);
	report_put(buf, &n, CELL_REPORT_TIMES, 0, 0, t);
	report_put(buf, &n, CELL_REPORT_EXIT, status, 0, NULL);
	ssize_t w = write(x->report, buf, n);
	(void)w;
}

/* ---- init in a pid namespace not its own ---- */

/* init is pid 1 of the cell's own pid namespace. In a pod's (joined: shareProcessNamespace) or
 * the host's it is not, and kill(-1) would reach every process of that namespace: the pod's
 * other containers, the host's. There init is a subreaper (an orphan of the cell comes back to
 * it, never to the namespace's pid 1) and signals its own descendants alone. */
static bool own_pid_ns(const struct cell_ctx *x) { return spec_ns_own(x->s, GATE_NS_PID); }

/* Signal each child of parent (every thread's: /proc/P/task/T/children), through a pidfd opened
 * while it is still parent's child (a pid reused meanwhile is not signalled); each one signalled
 * is pushed on the stack (*st, *n, *cap) to be walked in turn. */
static void signal_children_of(pid_t parent, int sig, pid_t **st, size_t *n, size_t *cap)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)parent);
	DIR *d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		_cleanup_free_ char *cp = xasprintf("%s/%s/children", path, e->d_name);
		_cleanup_free_ char *list = read_file(cp, NULL);
		for (char *p = list, *end; p && *p; p = end) {
			long c = strtol(p, &end, 10);
			if (end == p)
				break;
			_cleanup_close_ int pfd = sys_pidfd_open((pid_t)c, 0);
			if (pfd < 0 || proc_parent((pid_t)c) != parent || sys_pidfd_send_signal(pfd, sig, NULL, 0) < 0)
				continue;
			if (*n == *cap)
				*st = xrealloc(*st, (*cap *= 2) * sizeof **st);
			(*st)[(*n)++] = (pid_t)c;
		}
	}
	if (d)
		closedir(d);
}

/* sig to every descendant of init, walked from init down. */
static void signal_descendants(int sig)
{
	size_t n = 0, cap = 64;
	pid_t *st = xmalloc(cap * sizeof *st);
	st[n++] = getpid();
	while (n)
		signal_children_of(st[--n], sig, &st, &n, &cap);
	free(st);
}

/* sig to every process of the cell but init. */
static void signal_cell(struct cell_ctx *x, int sig)
{
	if (own_pid_ns(x))
		kill(-1, sig);  /* (pid 1 itself is spared) */
	else
		signal_descendants(sig);
}

/* The cell's end: every other process of the cell SIGKILLed and reaped here, by pid 1, before
 * it ends (their CPU time is then in init's rusage, which the supervisor reads when it reaps
 * init: the kernel's own sweep after pid 1 is gone accounts them to no one). The job's end is
 * reported when it is reaped here, unless it was already. */
static void __attribute__((noreturn)) end_cell(struct cell_ctx *x, pid_t job, bool reported)
{
	/* kill(-1) walks every process of the host: only when init has a child left (every other
	 * process of the cell is one's descendant, or init's when its parent is gone) */
	siginfo_t si = { 0 };
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0)
		signal_cell(x, SIGKILL);
	int status;
	pid_t p;
	while ((p = waitpid(-1, &status, __WALL)) > 0 || (p < 0 && errno == EINTR)) {
		if (p == job && !reported) {
			report_end(x, status);
			reported = true;
		}
		/* not pid 1: what was forked while the walk went, or orphaned to init since */
		if (!own_pid_ns(x))
			signal_descendants(SIGKILL);
	}
	_exit(0);
}

/* The job's life: its end reported, the supervisor's signals passed on, its kill taken from the
 * go pipe (x->go: CELL_KILL_BYTE ends the cell, end_cell). */
static void __attribute__((noreturn)) init_loop(struct cell_ctx *x, pid_t job, bool watch_full)
{
	sigset_t all;
	sigfillset(&all);
	int sfd = signalfd(-1, &all, SFD_CLOEXEC);
	if (sfd < 0)
		die(x, errno, "signalfd");
	/* with --scratch, a full scratch stops the run: look at it ten times a second */
	int tfd = -1;
	if (x->scratch_fd >= 0 && watch_full) {
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		struct itimerspec it = { .it_value = { 0, 100000000 }, .it_interval = { 0, 100000000 } };
		timerfd_settime(tfd, 0, &it, NULL);
	}
	struct pollfd pf[3] = { { .fd = sfd, .events = POLLIN }, { .fd = x->go, .events = POLLIN }, { .fd = tfd, .events = POLLIN } };
	for (;;) {
		if (poll(pf, tfd >= 0 ? 3 : 2, -1) < 0)
			continue;
		if (tfd >= 0 && (pf[2].revents & POLLIN)) {
			uint64_t n;
			if (read(tfd, &n, sizeof n) > 0 && report_scratch_full(x)) {
				closep(&tfd);
			}
		}
		if (pf[1].revents) {
			char c = 0;
			if (read(x->go, &c, 1) == 1 && c == CELL_KILL_BYTE)
				end_cell(x, job, false);  /* the supervisor's SIGKILL */
			if (pf[1].revents & (POLLHUP | POLLERR))
				pf[1].fd = -1;  /* the supervisor is gone (its death signal follows) */
		}
		if (!(pf[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof si);
		if (n != (ssize_t)sizeof si)
			continue;
		if (si.ssi_signo != SIGCHLD) {
			/* the supervisor's polite signals go to every process of the cell */
			signal_cell(x, (int)si.ssi_signo);
			continue;
		}
		int status;
		pid_t p;
		while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
			if (p == job) {
				report_end(x, status);
				/* the supervisor, just woken by the report, goes first (a warm run's
				 * answer is sent then): woken on this CPU, it waited behind all of
				 * init's exit up to its first sleep (0.1 ms), the other CPU idle */
				sched_yield();
				/* pid 1 leaving takes every other process of the cell with it: killed
				 * and reaped here, so that their CPU time is counted */
				end_cell(x, job, true);
			}
		}
	}
}
static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Close every descriptor but those in keep (negative entries are ignored). */
static void close_all_but(int *keep, size_t n)
{
	qsort(keep, n, sizeof *keep, cmp_int);
	unsigned from = 0;
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 0)
			continue;
		if ((unsigned)keep[i] > from)
			close_range(from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}


/* ---- init's steps ---- */

/* Die with the supervisor; every signal blocked (init_loop reads them from a signalfd); what
 * init makes gets the modes it names: the caller's umask (077 on a hardened host) made the
 * cell's passwd and group unreadable by the job and the directories made on the way to a
 * --bind's destination closed to it. The job gets the caller's umask back. */
static void arm(struct cell_ctx *x)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* the supervisor may have died before PDEATHSIG was armed (even after letting us go):
	 * the report pipe has no reader then */
	struct pollfd pfd = { .fd = x->report, .events = POLLOUT };
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR))
		_exit(125);

	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	x->caller_umask = umask(0);
}

/* The descriptor of the pod's namespace of kind k the cell joins, or -1. */
static int ns_fd(const struct cell_spec *s, enum gate_ns_kind k)
{
	return s->ns[k].from == CELL_NS_JOIN ? s->ns[k].fd : -1;
}

/* init keeps only what it needs of the supervisor's descriptors (not its lock, epoll, other
 * pipes' ends, nor what warren's caller left open) */
static void keep_own_fds(struct cell_ctx *x, const struct cell_io *io)
{
	const struct cell_spec *s = x->s;
	const struct cgroup *cg = x->cg;
	int fixed[] = { 0, 1, 2, x->report, x->go, x->netns_sock, x->take_r, x->take_w, io->in, io->out, io->err, io->console, io->control, io->watch,
			x->idmap_work, x->idmap_image, s->worktree_fd, ns_fd(s, GATE_NS_NET), ns_fd(s, GATE_NS_IPC), ns_fd(s, GATE_NS_UTS),
			cg ? cg->tasks_fd[0] : -1, cg ? cg->tasks_fd[1] : -1, cg ? cg->tasks_fd[2] : -1,
			cg ? cg->tasks_fd[3] : -1, cg ? cg->tasks_fd[4] : -1 };
	size_t nfixed = sizeof fixed / sizeof fixed[0], nkeep = nfixed + 2 * s->n_mounts;
	int *keep = xcalloc(nkeep, sizeof *keep);
	memcpy(keep, fixed, sizeof fixed);
	for (size_t i = 0; i < s->n_mounts; i++) {
		keep[nfixed + 2 * i] = s->mounts[i].fd;
		keep[nfixed + 2 * i + 1] = x->idmap_mounts ? x->idmap_mounts[i] : -1;
	}
	close_all_but(keep, nkeep);
	free(keep);
}

/* Into the run's cgroup before anything else (v1; v2 was cloned into it). */
static void join_cgroup(struct cell_ctx *x)
{
	struct error cerr = { 0 };
	if (x->cg && cgroup_join_self(x->cg, &cerr) < 0)
		die(x, 0, "%s", cerr.msg);
}

/* Rootless, the job has init's host uid and may prlimit() it: what init allows itself is
 * fixed here, where nothing can raise it again (no core dumps, a bounded NOFILE). */
static void limit_self(struct cell_ctx *x)
{
	struct rlimit core0 = { 0, 0 }, nofile;
	if (!x->s->policy.core)
		setrlimit(RLIMIT_CORE, &core0);
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_max > 524288) {
		nofile.rlim_max = 524288;
		if (nofile.rlim_cur > nofile.rlim_max)
			nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
}

/* Rootless: init's own id maps; the cell's hostname; its loopback (when no network namespace
 * comes from the supervisor's helper: enter_netns). */
static void set_identity(struct cell_ctx *x)
{
	const struct cell_spec *s = x->s;
	if (s->rootless) {
		char line[64];
		snprintf(line, sizeof line, "%u %u 1\n", (unsigned)s->uid, (unsigned)s->host_uid);
		write_map(x, "/proc", 0, "uid_map", line);
		write_map(x, "/proc", 0, "setgroups", "deny");
		snprintf(line, sizeof line, "%u %u 1\n", (unsigned)s->gid, (unsigned)s->host_gid);
		write_map(x, "/proc", 0, "gid_map", line);
	}
	/* a pod's UTS namespace, joined, has the pod's hostname already (its sandbox's); the
	 * host's is the host's */
	if (spec_ns_own(s, GATE_NS_UTS) && sethostname(spec_hostname(s), strlen(spec_hostname(s))) < 0)
		die(x, errno, "cannot set the cell's hostname");
	if (x->netns_sock < 0 && spec_ns_own(s, GATE_NS_NET))
		loopback_up(x);
}

/* Into the pod's IPC and UTS namespaces the cell joins (the network's comes later, enter_netns;
 * the pid one was the clone's), as the host's root, before the job's user namespace is made:
 * that namespace owns none of them, so the job holds no capability over them. Not pid 1 of its
 * pid namespace, init is the subreaper of the cell's processes (signal_descendants). */
static void join_namespaces(struct cell_ctx *x)
{
	const struct cell_spec *s = x->s;
	for (int k = GATE_NS_IPC; k <= GATE_NS_UTS; k++)
		if (ns_fd(s, k) >= 0) {
			if (setns(ns_fd(s, k), gate_ns_clone_flag(k)) < 0)
				die(x, errno, "cannot join the pod's %s namespace", gate_ns_type_name(k));
			close(ns_fd(s, k));  /* (init's copy: nothing of it reaches the job) */
		}
	if (!own_pid_ns(x) && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		die(x, errno, "cannot make the cell's init a subreaper");
}

/* A warm cell: all that does not depend on its run before it comes: its scratch (no one but
 * its run ever sees it: a warm cell is taken once), and its job's process, set up to its last
 * step (warm_job_take). Returns the job. */
static pid_t warm_prestart(struct cell_ctx *x, const struct cell_io *jio)
{
	take_scratch(x);
	show_cgroup(x);
	/* its take pipe: made by the supervisor, which holds the other write end */
	pid_t job = start_job(x, jio);
	closep(&x->take_r);
	return job;
}

/* Wait for the supervisor (the network, from outside; a warm cell: its take), its message
 * alone: what follows on the pipe is its kill (init_loop). */
static struct take_msg wait_for_go(struct cell_ctx *x)
{
	struct take_msg take = { 0 };
	ssize_t want = x->s->warm ? (ssize_t)sizeof take : 1;
	if (read(x->go, &take, (size_t)want) != want)
		_exit(125);
	return take;
}

/* A warm cell's take: a run whose scratch is of another size than the cell's is sized first,
 * then started; else the supervisor started it already. */
static void warm_go(struct cell_ctx *x, const struct take_msg *take)
{
	if (take->relay) {
		scratch_resize(x, take->scratch);
		if (write(x->take_w, take->direct ? "d" : "x", 1) != 1)
			die(x, errno, "cannot start the warm cell's job");
	}
	closep(&x->take_w);
}

/* init keeps no stream of the job open: end of output is the job's. */
static void drop_streams(const struct cell_io *io, const struct cell_io *jio)
{
	if (io->watch >= 0)
		close(io->watch);
	for (int i = 0; i < 3; i++) {
		int fd = i == 0 ? jio->in : i == 1 ? jio->out : jio->err;
		if (fd > 2)
			close(fd);
	}
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		if (devnull > 2)
			close(devnull);
	}
}

/* Not ptrace-able nor readable by the job through /proc; and the job has its copy: warren's
 * command line (host paths, options) is not shown to it as pid 1's (/proc/1/cmdline is
 * readable by all who see the pid). */
static void hide_from_job(void)
{
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	proc_args_wipe("warren-init");
}

void init_main(struct cell_ctx *x, const struct cell_io *io, int go)
{
	const struct cell_spec *s = x->s;
	x->go = go;
	arm(x);
	keep_own_fds(x, io);
	join_cgroup(x);
	limit_self(x);
	join_namespaces(x);
	set_identity(x);
	build_root(x);
	x->root_built_ns = mono_ns();
	/* the terminal's master goes out before the job may run (an OCI runtime's caller waits
	 * for it between create and start) */
	struct cell_io jio = *io;
	if (io->console >= 0)
		open_console(x, &jio);
	pid_t job = s->warm ? warm_prestart(x, &jio) : -1;
	struct take_msg take = wait_for_go(x);
	if (s->warm) {
		warm_go(x, &take);
	} else {
		show_cgroup(x);
		job = start_job(x, &jio);
	}
	drop_streams(io, &jio);
	hide_from_job();
	init_loop(x, job, s->warm ? take.scratch != 0 : s->limits.scratch != 0);
}
