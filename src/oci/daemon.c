/* SPDX-License-Identifier: Apache-2.0 */
/* daemon.c - create, and the detached supervisor it leaves: `warren oci create` forks a warren
 * supervisor that makes the run directory, cgroup and cell (its init waits), hands a terminal's
 * master to the console socket, writes the state and answers; create then writes the
 * supervisor's pid to --pid-file and returns. The supervisor waits for `start` on its control
 * socket, supervises the run like any warren run (limits, record, reclaim), and ends as its job
 * did (the same exit code; killed by signal S, it dies by S): the pid a runc shim or conmon
 * waits for is warren's supervisor. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "cgroup/freezer.h"
#include "cgroup/orphans.h"
#include "oci/internal.h"
#include "run/rundir.h"
#include "supervise/supervise.h"
#include "util/fs.h"

struct daemon {
	struct sup u;
	struct oci_state st;
	int dfd;          /* <root>/<id> */
	int lfd;          /* the control socket (listening) */
	bool started;
	bool paused;
	int killed_sig;   /* a kill before start: init was killed, the job never ran */
};



/* ---- the terminal ---- */

int oci_console_connect(const char *path, struct error *err)
{
	/* any length of path: through its directory's fd */
	_cleanup_free_ char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : path;
	if (slash)
		*slash = 0;
	_cleanup_close_ int dfd = open(slash ? (*dir ? dir : "/") : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/%s", dfd, base);
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (dfd < 0 || s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
		error_set(err, errno, "--console-socket %s: cannot connect", path);
		closep(&s);
	}
	return s;
}

int oci_console_send(int sock, int master, struct error *err)
{
	int r = fd_send(sock, master, "/dev/ptmx", strlen("/dev/ptmx"));
	return r < 0 ? error_set(err, -r, "--console-socket: cannot send the terminal") : 0;
}

int oci_console_check(const struct oci_bundle *b, const char *console_socket, struct error *err)
{
	if (b->terminal && !console_socket)
		return error_set(err, 0, "process.terminal is true: give --console-socket (where the terminal's master is sent)");
	return 0;
}

/* The master init opened in the cell's devpts goes to the console socket, as runc sends it. */
static int send_console(struct daemon *d, const char *path, struct error *err)
{
	char byte;
	_cleanup_close_ int m = -1;
	if (fd_recv(d->u.console_sock, 0, &byte, 1, &m) <= 0 || m < 0)
		return error_set(err, 0, "the cell's terminal did not come (its init failed; see the run's record)");
	closep(&d->u.console_sock);
	_cleanup_close_ int s = oci_console_connect(path, err);
	return s < 0 ? -EINVAL : oci_console_send(s, m, err);
}

/* ---- the control socket ---- */

static int ctl_listen(int dfd, struct error *err)
{
	struct sockaddr_un a;
	oci_ctl_addr(dfd, &a);
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 16) < 0) {
		error_set(err, errno, "cannot make the container's control socket");
		closep(&s);
	}
	return s;
}

static void set_status(struct daemon *d, const char *status)
{
	free(d->st.status);
	d->st.status = xstrdup(status);
	oci_state_write(d->dfd, &d->st);
}

/* pause and resume (cgroup/freezer.h) */
static const char *freeze(struct daemon *d, bool frozen, char *buf, size_t len)
{
	struct error err = { 0 };
	if (!d->started || d->paused == frozen)
		return frozen ? (d->paused ? "container is already paused" : "cannot pause a container that is not running")
			      : "cannot resume a container that is not paused";
	/* v2 freezes the run's own group, the supervisor's too (enter_groups): it steps out while
	 * the cell is frozen */
	bool step_out = d->st.cgroup && !d->st.freezer && d->u.cg.kind == CGROUP_V2;
	if (step_out && frozen)
		cgroup_leave_self(&d->u.cg);
	if (cgroup_freezer_set(d->u.cell.pid, frozen, &err) < 0) {
		snprintf(buf, len, "%s", err.msg);
		error_clear(&err);
		if (step_out && frozen)
			cgroup_enter_self(&d->u.cg, &err);
		error_clear(&err);
		return buf;
	}
	if (step_out && !frozen && cgroup_enter_self(&d->u.cg, &err) < 0)
		oci_note("%s", err.msg);
	error_clear(&err);
	d->paused = frozen;
	set_status(d, frozen ? "paused" : "running");
	return "ok";
}

/* update (oci_cmd_update): "update MEMORY PIDS QUOTA PERIOD SHARES CPUS MEMS", 0 and "-" for
 * what is left as it is: written into the cell's groups, and kept in its spec (the record's
 * limits, the causes' values) */
static const char *update(struct daemon *d, const char *cmd, char *buf, size_t len)
{
	struct limits l = { 0 };
	unsigned long long m, p, q, per, sh;
	char cpus[sizeof l.cpuset], mems[sizeof l.cpumems];
	if (sscanf(cmd, "update %llu %llu %llu %llu %llu %127s %63s", &m, &p, &q, &per, &sh, cpus, mems) != 7)
		return "update: a malformed request";
	l = (struct limits){ .memory = m, .pids = p, .cpu_quota_us = q, .cpu_period_us = per, .cpu_shares = sh };
	if (strcmp(cpus, "-"))
		snprintf(l.cpuset, sizeof l.cpuset, "%s", cpus);
	if (strcmp(mems, "-"))
		snprintf(l.cpumems, sizeof l.cpumems, "%s", mems);
	struct error err = { 0 };
	if (cgroup_update(&d->u.cg, &l, &err) < 0) {
		snprintf(buf, len, "update: %s", err.msg);
		error_clear(&err);
		return buf;
	}
	struct limits *sl = &d->u.s->limits;
	if (m) sl->memory = m;
	if (p) sl->pids = p;
	if (q) sl->cpu_quota_us = q, sl->cpu_period_us = per;
	if (sh) sl->cpu_shares = sh;
	if (l.cpuset[0]) memcpy(sl->cpuset, l.cpuset, sizeof l.cpuset);
	if (l.cpumems[0]) memcpy(sl->cpumems, l.cpumems, sizeof l.cpumems);
	return "ok";
}

static const char *ctl_do(struct daemon *d, const char *cmd, char *buf, size_t len)
{
	if (!strncmp(cmd, "update ", 7))
		return update(d, cmd, buf, len);
	if (!strcmp(cmd, "pause") || !strcmp(cmd, "resume"))
		return freeze(d, cmd[0] == 'p', buf, len);
	int sig = 0, all = 0;
	if (!strcmp(cmd, "start")) {
		if (d->started || d->killed_sig)
			return d->killed_sig ? "cannot start a container that has stopped" : "cannot start an already running container";
		struct error err = { 0 };
		if (sup_go(&d->u, &err) < 0) { /* only a warm cell's take can fail; none is here */
			snprintf(buf, len, "%s", err.msg);
			error_clear(&err);
			return buf;
		}
		d->started = true;
		set_status(d, "running");
		return "ok";
	}
	if (sscanf(cmd, "kill %d %d", &sig, &all) == 2) {
		if (sig == 0)
			return "ok";
		if (!d->started) {
			/* the job never ran: its init goes (runc's init dies the same way) */
			d->killed_sig = SIGKILL;
			kill(d->u.cell.pid, SIGKILL);
			return "ok";
		}
		sup_signal_job(&d->u, sig);
		if (d->paused && sig == SIGKILL) /* a frozen process dies only once thawed (as runc) */
			freeze(d, false, buf, len);
		return "ok";
	}
	snprintf(buf, len, "%.200s: not supported by warren yet", cmd);
	return buf;
}

static void ctl_serve(struct daemon *d)
{
	int c;
	while ((c = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		char cmd[512], buf[512];
		/* a caller that connects and says nothing must not hold the supervisor (its limits,
		 * output and job): a second for its command, as oci_ctl writes it at once */
		struct pollfd p = { .fd = c, .events = POLLIN };
		ssize_t n = poll(&p, 1, 1000) == 1 ? read(c, cmd, sizeof cmd - 1) : -1;
		if (n > 0) {
			cmd[n] = 0;
			const char *a = ctl_do(d, cmd, buf, sizeof buf);
			ssize_t w = write(c, a, strlen(a));
			(void)w;
		}
		close(c);
	}
}

/* ---- the supervisor ---- */

/* Until start: the control socket, init's end, and the signals (which end the cell). */
static void wait_start(struct daemon *d)
{
	struct pollfd p[3] = { { .fd = d->lfd, .events = POLLIN }, { .fd = d->u.cell.pidfd, .events = POLLIN },
			       { .fd = d->u.sfd, .events = POLLIN } };
	while (!d->started) {
		if (poll(p, 3, -1) < 0)
			continue;
		if (p[1].revents)
			return; /* init is gone (killed, or failed) */
		if (p[2].revents) {
			struct signalfd_siginfo si;
			while (read(d->u.sfd, &si, sizeof si) == (ssize_t)sizeof si)
				if (si.ssi_signo != SIGCHLD && si.ssi_signo != SIGWINCH && !d->killed_sig) {
					d->killed_sig = SIGKILL;
					kill(d->u.cell.pid, SIGKILL);
				}
		}
		if (p[0].revents)
			ctl_serve(d);
	}
}

static void supervise_started(struct daemon *d)
{
	sup_watch_fd(&d->u, d->lfd, EV_APP);
	struct epoll_event evs[8];
	while (sup_running(&d->u)) {
		int n = sup_wait(&d->u, evs, 8);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u32 == EV_APP)
				ctl_serve(d);
			else
				sup_dispatch(&d->u, &evs[i]);
		}
		/* a limit stops a paused cell: its signals need it thawed */
		char buf[256];
		if (d->paused && sup_stopping(&d->u, NULL, NULL))
			freeze(d, false, buf, sizeof buf);
	}
	if (d->u.in_open)
		sup_unwatch(&d->u, STDIN_FILENO);
}

/* End as the job did: its exit code, or death by its signal (no core: the cell's is gone). */
static void __attribute__((noreturn)) mirror_exit(struct daemon *d, int rc)
{
	int sig = d->u.have_exit && WIFSIGNALED(d->u.job_status) ? WTERMSIG(d->u.job_status) : d->killed_sig;
	if (sig) {
		struct rlimit z = { 0, 0 };
		setrlimit(RLIMIT_CORE, &z);
		signal(sig, SIG_DFL);
		sigset_t m;
		sigemptyset(&m);
		sigaddset(&m, sig);
		sigprocmask(SIG_UNBLOCK, &m, NULL);
		raise(sig);
		rc = 128 + sig;
	}
	_exit(rc & 0xff);
}

/* The bundle's rlimits and oomScoreAdj take away, never give: as root the supervisor could
 * raise a hard limit (RLIMIT_RTPRIO lets any job run SCHED_FIFO, which no CPU limit of warren's
 * bounds) or make the cell unkillable by the OOM killer (-1000); a hard limit above the
 * caller's, or a score below its own, is kept at the caller's with a warning. */
void oci_apply_rlimits(const struct oci_bundle *b)
{
	for (size_t i = 0; i < b->n_rlimits; i++) {
		struct rlimit want = b->rlimits[i].lim, have;
		if (getrlimit(b->rlimits[i].resource, &have) == 0 && want.rlim_max > have.rlim_max) {
			oci_note("process.rlimits: %s hard %llu is above the caller's %llu: kept at the caller's",
				 b->rlimits[i].name, (unsigned long long)want.rlim_max, (unsigned long long)have.rlim_max);
			want.rlim_max = have.rlim_max;
			if (want.rlim_cur > want.rlim_max)
				want.rlim_cur = want.rlim_max;
		}
		if (setrlimit(b->rlimits[i].resource, &want) < 0)
			oci_note("process.rlimits: cannot set %s to %llu/%llu: %s", b->rlimits[i].name,
				 (unsigned long long)want.rlim_cur, (unsigned long long)want.rlim_max, strerror(errno));
	}
}

void oci_apply_oom(const struct oci_bundle *b, pid_t pid)
{
	if (!b->has_oom)
		return;
	_cleanup_free_ char *cur = read_file("/proc/self/oom_score_adj", NULL);
	int have = cur ? atoi(cur) : 0;
	char v[32], path[64];
	snprintf(v, sizeof v, "%d", b->oom_score_adj);
	snprintf(path, sizeof path, "/proc/%d/oom_score_adj", pid > 0 ? (int)pid : (int)getpid());
	if (b->oom_score_adj < have)
		oci_note("process.oomScoreAdj %d is below the caller's %d: kept at the caller's", b->oom_score_adj, have);
	else if (write_file(path, v, strlen(v)) < 0)
		oci_note("process.oomScoreAdj %d: cannot set it", b->oom_score_adj);
}

/* The pid the caller knows (--pid-file) in the container's groups, as runc's container process
 * is: containerd's runc shim reads them from /proc/PID/cgroup for the container's stats and its
 * OOM events (docs/architecture.md, "The OCI face"). */
static void enter_groups(struct daemon *d)
{
	struct error err = { 0 };
	if (d->u.s->rootless)
		return;
	if (cgroup_enter_self(&d->u.cg, &err) < 0)
		oci_note("the container's stats and OOM events will be its caller's group's: %s", err.msg);
	else
		d->st.cgroup = d->u.cg.home[0] != NULL;
	error_clear(&err);
}

static void __attribute__((noreturn)) daemon_main(const struct oci_create *c, struct oci_bundle *b, struct cell_spec *s,
						   int dfd, int ready)
{
	struct daemon d = { .dfd = dfd, .lfd = -1 };
	_cleanup_error_ struct error err = { 0 };
	ssize_t w;
	if (chdir("/") < 0) /* pin no directory of the caller's */
		_exit(OCI_FAIL);
	oci_apply_rlimits(b);
	if (sup_prepare(&d.u, s, -1, &err) < 0)
		goto fail_early;
	/* the cell's score (its init's, which its job inherits): the supervisor keeps the caller's,
	 * lower when the bundle's is higher, as the OOM killer's victim in the container's memory
	 * group is to be the job, not the supervisor (enter_groups) */
	oci_apply_oom(b, d.u.cell.pid);
	/* its own freezer group before the job starts (v1; v2 freezes the run's group) */
	struct error ferr = { 0 };
	char *cgname = rundir_cgroup_name(s->state_tag, s->id); /* no cleanup attribute: fail_early jumps over it */
	char *freezer = s->rootless ? NULL : cgroup_freezer_join(cgname, d.u.cell.pid, &ferr);
	free(cgname);
	cgroup_mark_dir(freezer, s->statedir);
	if (ferr.msg)
		oci_note("pause and resume will fail: %s", ferr.msg);
	error_clear(&ferr);
	d.lfd = ctl_listen(dfd, &err);
	if (d.lfd < 0 || (s->tty && send_console(&d, c->console_socket, &err) < 0))
		goto fail;
	char created[64];
	time_t now = time(NULL);
	strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	d.st = (struct oci_state){ .id = xstrdup(c->id), .bundle = xstrdup(b->path), .run_id = xstrdup(s->id),
				   .statedir = xstrdup(s->statedir), .created = xstrdup(created), .pid = getpid(),
				   .start_time = oci_pid_start_time(getpid()), .init_pid = d.u.cell.pid,
				   .annotations = json_incref(json_object_get(b->config, "annotations")),
				   .status = xstrdup("created"), .freezer = freezer };
	enter_groups(&d);
	int r = oci_bundle_keep(dfd, b);
	if (r < 0 || oci_state_write(dfd, &d.st) < 0) {
		error_set(&err, r < 0 ? -r : errno, "cannot write the container's %s", r < 0 ? OCI_KEPT_CONFIG : "state.json");
		goto fail;
	}
	w = write(ready, "ok", 2);
	(void)w;
	close(ready);
	wait_start(&d);
	if (d.started)
		supervise_started(&d);
	set_status(&d, "stopped");
	struct supervise_opts so = { .result_fd = -1, .quiet = true };
	int rc = sup_finish(&d.u, &so);
	cgroup_freezer_remove(d.st.freezer);
	mirror_exit(&d, rc);
fail:
	kill(d.u.cell.pid, SIGKILL);
	d.killed_sig = SIGKILL;
	sup_finish(&d.u, &(struct supervise_opts){ .result_fd = -1, .quiet = true });
	cgroup_freezer_remove(freezer);
fail_early:
	w = write(ready, err.msg ? err.msg : "failed", strlen(err.msg ? err.msg : "failed"));
	_exit(OCI_FAIL);
}

/* ---- create and run ---- */

int oci_write_pid_file(const char *path, pid_t pid)
{
	char v[32];
	snprintf(v, sizeof v, "%d", (int)pid);
	_cleanup_free_ char *abs = abs_path_would_be(path);
	int r = abs ? write_file_atomic(abs, v, strlen(v), 0644) : -errno;
	return r < 0 ? oci_fail("--pid-file %s: cannot write it: %s", path, strerror(-r)) : 0;
}

static int forward_to;
static void forward(int sig) { if (forward_to > 0) kill(forward_to, sig); }

/* run: start what create made, wait for the supervisor, and go with the container. */
static int run_wait(const struct oci_create *c, const char *root, int rootfd, int dfd, pid_t pid)
{
	_cleanup_error_ struct error err = { 0 };
	if (oci_ctl(dfd, c->id, "start", &err) < 0) {
		/* the supervisor ended before the start: its cell failed, and it said why in one line
		 * of its own; that is the run's failure (no second line), and nothing of the
		 * container stays (another run of the id would find it there) */
		int status = 0;
		pid_t w = 0;
		for (int i = 0; i < 400 && (w = waitpid(pid, &status, WNOHANG)) == 0; i++)
			usleep(5000);
		if (w == pid)
			rm_tree_at(rootfd, c->id);
		return w == pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0) ? OCI_FAIL : oci_fail_err(&err);
	}
	if (c->detach)
		return 0;
	forward_to = pid;
	struct sigaction sa = { .sa_handler = forward, .sa_flags = SA_RESTART };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGINT, SIG_IGN); /* the terminal's ^C reaches the supervisor itself */
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	rm_tree_at(rootfd, c->id);
	(void)root;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int oci_create(const struct oci_create *c, bool run)
{
	_cleanup_error_ struct error err = { 0 };
	_cleanup_free_ char *root = oci_root(true, &err);
	if (!root)
		return oci_fail_err(&err);
	if (!oci_valid_id(c->id))
		return oci_fail("invalid container id '%s': use letters, digits, '_', '+', '.' and '-'", c->id);
	if (c->preserve_fds > 0)
		return oci_fail("--preserve-fds %d: not supported by warren (a cell's job gets only its standard streams)", c->preserve_fds);
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || oci_lock(rootfd) < 0)
		return oci_fail("--root %s: cannot open it: %s", root, strerror(errno));
	if (mkdirat(rootfd, c->id, 0700) < 0)
		return errno == EEXIST ? oci_fail("container with id exists: %s", c->id)
				       : oci_fail("cannot make the state of %s under %s: %s", c->id, root, strerror(errno));
	_cleanup_close_ int dfd = openat(rootfd, c->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct oci_bundle b = { 0 };
	struct cell_spec s = { 0 };
	int ready[2] = { -1, -1 }, rc = OCI_FAIL;
	bool made = false;
	if ((dfd < 0 && error_set(&err, errno, "cannot open the state of %s under %s", c->id, root) < 0) ||
	    oci_bundle_load(c->bundle, -1, c->id, &b, &s, &err) < 0 ||
	    oci_console_check(&b, c->console_socket, &err) < 0 ||
	    (pipe2(ready, O_CLOEXEC) < 0 && error_set(&err, errno, "cannot make a pipe to the supervisor") < 0)) {
		rc = oci_fail_err(&err);
		goto out;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(rootfd); /* the root's lock is the parent's */
		close(ready[0]);
		if (!c->foreground)
			setsid();
		daemon_main(c, &b, &s, dfd, ready[1]);
	}
	closep(&ready[1]);
	char msg[4096];
	ssize_t n = pid < 0 ? -1 : read(ready[0], msg, sizeof msg - 1);
	if (n != 2 || memcmp(msg, "ok", 2)) {
		msg[n > 0 ? n : 0] = 0;
		rc = oci_fail("%s", n > 0 ? msg : "the supervisor failed before the cell was made");
		if (pid > 0)
			waitpid(pid, NULL, 0);
		goto out;
	}
	rc = 0;
	made = true;
	flock(rootfd, LOCK_UN);
	if (c->pid_file && oci_write_pid_file(c->pid_file, pid) < 0) {
		kill(pid, SIGTERM);
		rc = OCI_FAIL;
	} else if (run)
		rc = run_wait(c, root, rootfd, dfd, pid);
out:
	if (rc != 0 && !made && dfd >= 0)
		rm_tree_at(rootfd, c->id); /* nothing half-made stays */
	closep(&ready[0]);
	closep(&ready[1]);
	oci_bundle_free(&b);
	cell_spec_free(&s);
	return rc;
}
