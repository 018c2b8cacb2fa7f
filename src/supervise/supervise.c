/* SPDX-License-Identifier: Apache-2.0 */
/* supervise.c - the event loop of one run. epoll over: the cell init's pidfd (exit), its report
 * pipe (setup errors, the job's wait status), a signalfd (SIGINT/SIGTERM/SIGHUP from the user,
 * SIGWINCH), timerfds (wall clock, the limit watch, the grace period) and the job's output
 * (pipes or a pty), which is relayed and counted. Every stop gets a cause.
 *
 * The run is over when init's pidfd is readable: init is pid 1 of the cell's pid namespace, so
 * every process of the cell is gone by then. The output is drained without blocking and
 * closed at that moment, never waiting for an end of file: a write end the job handed to a
 * process outside the cell (SCM_RIGHTS, another run) may never close; such a stream is named in
 * the record ("output_held_outside"). Signals are read until then; one that comes later does
 * not change how the run ended.
 *
 * Its pieces (internal.h): control.c stops, kills and signals the cell, relay.c passes the
 * job's output and the terminal on, limits.c watches the limits, outcome.c tells how the run
 * ended (end.h decides it) and writes the record's parts. */
#include "supervise/internal.h"

#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cell/container.h"
#include "cell/contract.h"
#include "cgroup/cgroup.h"
#include "cgroup/orphans.h"
#include "run/history.h"
#include "run/rundir.h"
#include "supervise/worktree.h"
#include "util/fs.h"
#include "util/units.h"
#include "util/sys.h"

/* The next report of the cell's init (a VM's guest reports in JSON: vm.h): true and *msg. */
static bool next_report(struct sup *u, struct cell_report *r, char **msg)
{
	return u->drv->read_report(&u->cell, r, msg) == 1;
}

static void read_reports(struct sup *u)
{
	for (;;) {
		struct cell_report r;
		char *msg;
		if (!next_report(u, &r, &msg))
			return;
		if (r.type == CELL_REPORT_EXIT) {
			if (!u->exit_ns)
				u->exit_ns = mono_ns();
			u->have_exit = true;
			u->job_status = r.status;
			free(msg);
		} else if (r.type == CELL_REPORT_SCRATCH || r.type == CELL_REPORT_SCRATCH_FULL) {
			unsigned long long used = 0, fr = 0;
			if (sscanf(msg, "%llu %llu", &used, &fr) == 2) {
				u->have_scratch = true;
				u->scratch_used = used;
				u->scratch_free = fr;
			}
			free(msg);
			if (r.type == CELL_REPORT_SCRATCH_FULL) {
				char v[32];
				format_size(v, sizeof v, u->s->limits.scratch);
				sup_stop(u, RUN_LIMIT, "scratch", v, SIGTERM,
					  xasprintf("scratch limit %s reached (writes to /tmp, /dev/shm, $HOME and the root fail with ENOSPC)", v));
			}
		} else if (r.type == CELL_REPORT_TIMES) {
			long long a, b, c;
			if (sscanf(msg, "%lld %lld %lld", &a, &b, &c) == 3) {
				u->init_ns[0] = a;
				u->init_ns[1] = b;
				u->init_ns[2] = c;
			}
			free(msg);
		} else if (r.type == CELL_REPORT_PIDS_MAX) {
			free(msg);
			u->guest_pids_hits = (uint64_t)r.status; /* counted with the host cgroup's */
		} else if (r.type == CELL_REPORT_OOM_KILLS) {
			free(msg);
			u->guest_oom_kills = (uint64_t)r.status;
		} else if (r.type == CELL_REPORT_PIDS_PEAK) {
			free(msg);
			u->guest_pids_peak = (uint64_t)r.status;
		} else if (r.type == CELL_REPORT_REFUSED) {
			refused_add_guest(&u->refused, msg, (uint64_t)r.status);
			free(msg);
		} else if (r.type == CELL_REPORT_STARTED) {
			/* a VM's wall clock starts with its job, not its boot */
			free(msg);
			u->job_start_s = sup_elapsed(u);
			struct cgroup_usage cu;
			cgroup_usage(&u->cg, &cu);
			u->job_start_cpu_ns = cu.have_cpu ? cu.cpu_ns : 0;
			if (u->s->limits.time_ms)
				sup_arm(u->wall_tfd, u->s->limits.time_ms, 0);
		} else if (r.type == CELL_REPORT_ERROR && !u->setup_error) {
			u->setup_error = msg;
			u->setup_status = r.status;
			u->setup_errnum = r.errnum;
		} else {
			free(msg);
		}
	}
}

static void on_signal(struct sup *u)
{
	struct signalfd_siginfo si;
	while (read(u->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
		int sig = (int)si.ssi_signo;
		if (sig == SIGWINCH) {
			sup_job_winsize(u);
			continue;
		}
		if (sig == SIGCHLD || u->init_gone)
			continue; /* the run is over: it ended as it did, not by this signal */
		if (u->stopping) {
			/* asked twice: no more grace; three times: init is not waited for */
			if (u->killed) {
				sup_kill_cell(u, true);
			} else {
				u->killed_early = u->stop_signal != 0;
				sup_kill(u);
			}
			continue;
		}
		bool by_kill = si.ssi_code == SI_QUEUE && si.ssi_int == WARREN_KILL_MAGIC;
		const char *limit = by_kill ? "kill" : "signal", *value = by_kill ? NULL : sigabbrev_np(sig);
		char *text = by_kill ? xasprintf("killed by warren kill (uid %u)", si.ssi_uid)
				     : xasprintf("interrupted by SIG%s", sigabbrev_np(sig));
		if (by_kill)
			sig = SIGTERM;
		/* a job may take the interrupt itself (its if: always() steps still run) */
		if (!(u->interrupt && u->interrupt(u->interrupt_ctx, limit, value, sig, text)))
			sup_stop(u, RUN_INTERRUPTED, limit, value, sig, text);
	}
}

/* Helpers that ended are let go; at the bound (once), those still alive are killed. Once
 * none is left, all are reaped (cell_reap_helpers, which no longer waits). */
static void helpers_check(struct sup *u, bool bound)
{
	for (size_t i = 0; i < u->cell.n_helpers && u->helper_pfds; i++) {
		struct pollfd p = { .fd = u->helper_pfds[i], .events = POLLIN };
		if (p.fd < 0)
			continue;
		if (poll(&p, 1, 0) == 0) {
			if (!bound)
				continue;
			if (u->cell.helpers[i].pid > 0)  /* (-1: reaped meanwhile, cell_reap_ended_helpers) */
				kill(u->cell.helpers[i].pid, SIGKILL);
		}
		epoll_ctl(u->ep, EPOLL_CTL_DEL, p.fd, NULL);
		closep(&u->helper_pfds[i]);
		u->helpers_left--;
	}
	if (u->helpers_left)
		return;
	timerfd_settime(u->helper_tfd, 0, &(struct itimerspec){ 0 }, NULL);
	cell_reap_helpers(&u->cell); /* a helper still alive would hold the output open */
	free(u->helper_pfds);
	u->helper_pfds = NULL;
}

/* Init is gone: the cell's helpers (a VM's relay passing on what the guest sent before its
 * end) are waited for in the loop, which takes the tasks' output meanwhile, as long as
 * CELL_HELPER_END_MS at most (a hostile guest can leave its relay blocked). */
static void helpers_watch(struct sup *u)
{
	u->helper_pfds = xcalloc(u->cell.n_helpers + 1, sizeof *u->helper_pfds);
	for (size_t i = 0; i < u->cell.n_helpers; i++) {
		pid_t pid = u->cell.helpers[i].pid;
		u->helper_pfds[i] = pid > 0 ? sys_pidfd_open(pid, 0) : -1;
		if (u->helper_pfds[i] >= 0) {
			sup_watch_fd(u, u->helper_pfds[i], EV_HELPER);
			u->helpers_left++;
		}
	}
	if (u->helpers_left)
		sup_arm(u->helper_tfd, CELL_HELPER_END_MS, 0);
	helpers_check(u, false);
}

bool sup_dispatch(struct sup *u, const struct epoll_event *ev)
{
	uint64_t exp;
	switch (ev->data.u32) {
	case EV_PIDFD:
		u->gone_ns = mono_ns();
		git_watch_stop(u->gitwatch); /* the job is gone: its events are all queued */
		read_reports(u);
		u->init_gone = true;
		epoll_ctl(u->ep, EPOLL_CTL_DEL, u->cell.pidfd, NULL);
		helpers_watch(u);
		break;
	case EV_HELPER:
		helpers_check(u, false);
		break;
	case EV_HELPER_BOUND:
		if (read(u->helper_tfd, &exp, sizeof exp) >= 0)
			helpers_check(u, true);
		break;
	case EV_REPORT:
		read_reports(u);
		if (u->have_exit)  /* (while init's exit tears the cell down) */
			cell_reap_ended_helpers(&u->cell);
		if (ev->events & (EPOLLHUP | EPOLLERR))
			epoll_ctl(u->ep, EPOLL_CTL_DEL, u->cell.report_fd, NULL);
		break;
	case EV_SIGNAL:
		on_signal(u);
		break;
	case EV_WALL:
		/* (once the cell ended, its helpers are waited for: no limit is reached then) */
		if (read(u->wall_tfd, &exp, sizeof exp) >= 0 && !u->init_gone)
			sup_time_limit(u);
		break;
	case EV_WATCH:
		if (read(u->watch_tfd, &exp, sizeof exp) >= 0 && !u->init_gone)
			sup_watch_limits(u);
		break;
	case EV_NET:
		net_dispatch(&u->net);
		break;
	case EV_GITWATCH:
		git_watch_drain(u->gitwatch);
		break;
	case EV_WATCH_SOCK:
		/* the socket is closed (and so out of epoll) once read */
		if (refused_take_listener(&u->refused))
			sup_watch_fd(u, u->refused.listener, EV_WATCH_WRITES);
		break;
	case EV_WATCH_WRITES:
		if (!(ev->events & EPOLLIN)) {
			epoll_ctl(u->ep, EPOLL_CTL_DEL, u->refused.listener, NULL);  /* no caller is left */
			break;
		}
		/* the first call: from now on the watch's thread takes them */
		if (!u->refused.taker_failed) {
			epoll_ctl(u->ep, EPOLL_CTL_DEL, u->refused.listener, NULL);
			if (refused_start(&u->refused, u->s) == 0)
				break;
			u->refused.taker_failed = true;
			sup_watch_fd(u, u->refused.listener, EV_WATCH_WRITES);
		}
		if (!refused_serve_one(&u->refused))
			epoll_ctl(u->ep, EPOLL_CTL_DEL, u->refused.listener, NULL);
		break;
	case EV_GRACE:
		/* the grace after the polite signal, or the backstop after init was asked to kill */
		if (read(u->grace_tfd, &exp, sizeof exp) >= 0) {
			if (u->kill_asked)
				sup_kill_cell(u, true);
			else
				sup_kill(u);
		}
		break;
	case EV_OUT:
		sup_relay_event(u, &u->out_r, 0, &u->out_bytes);
		break;
	case EV_ERR:
		sup_relay_event(u, &u->err_r, 1, &u->err_bytes);
		break;
	case EV_PTY:
		if ((ev->events & EPOLLOUT) && u->pty >= 0)
			sup_pty_input(u);
		if ((ev->events & ~(uint32_t)EPOLLOUT) && u->pty >= 0)
			sup_relay_event(u, &u->pty, 0, &u->out_bytes);
		break;
	case EV_SINK_OUT:
	case EV_SINK_ERR: {
		int i = ev->data.u32 == EV_SINK_ERR;
		sup_sink_flush(&u->sink[i]);
		sup_sink_check(u, i);
		break;
	}
	case EV_IN: {
		ssize_t r = read(STDIN_FILENO, sup_in_room(u, 4096), 4096);
		if (r <= 0 || u->pty < 0) {
			if (u->in_open)
				epoll_ctl(u->ep, EPOLL_CTL_DEL, STDIN_FILENO, NULL);
			u->in_open = false;
		} else {
			u->in_len += (size_t)r;
			sup_pty_input(u);
		}
		break;
	}
	default:
		return false;
	}
	/* every process of the cell is gone once init is (pid 1 of its pid namespace): what is
	 * left in the output is taken now, whoever else holds a write end */
	if (u->init_gone) {
		sup_drain_close(u, &u->out_r, 0, &u->out_bytes, "stdout");
		sup_drain_close(u, &u->err_r, 1, &u->err_bytes, "stderr");
		sup_drain_close(u, &u->pty, 0, &u->out_bytes, "terminal");
	}
	return true;
}

bool sup_running(const struct sup *u)
{
	return !u->init_gone || u->helpers_left;
}

bool sup_job_started(const struct sup *u)
{
	return !u->drv->reports_job_start || u->job_start_s > 0;
}

int sup_wait(struct sup *u, struct epoll_event *evs, int max)
{
	return epoll_wait(u->ep, evs, max, -1);
}

static void sup_close(struct sup *u)
{
	sup_restore_tty(u);
	closep(&u->ep);
	closep(&u->sfd);
	closep(&u->wall_tfd);
	closep(&u->watch_tfd);
	closep(&u->grace_tfd);
	closep(&u->helper_tfd);
	for (size_t i = 0; u->helper_pfds && i < u->cell.n_helpers; i++)
		closep(&u->helper_pfds[i]);
	free(u->helper_pfds);
	closep(&u->out_r);
	closep(&u->err_r);
	closep(&u->log.fd);
	sup_sink_close(&u->sink[0]);
	sup_sink_close(&u->sink[1]);
	closep(&u->pty);
	u->drv->close(&u->cell);
	closep(&u->console_sock);
	refused_free(&u->refused);
	git_watch_free(u->gitwatch);
	u->gitwatch = NULL;
	json_decref(u->held);
	u->held = NULL;
	free(u->setup_error);
	free(u->cause_limit);
	free(u->cause_value);
	free(u->cause_text);
	free(u->in_buf);
	u->in_buf = NULL;
}

/* The loop's own descriptors, before anything is made that a failure would leave; the signals
 * it watches blocked before anything can be interrupted. */
static int sup_loop_fds(struct sup *u, struct error *err)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGWINCH);
	sigprocmask(SIG_BLOCK, &mask, &u->old_mask);
	signal(SIGPIPE, SIG_IGN);
	/* SIGCHLD is not watched (init's pidfd tells when the cell is gone): its default action,
	 * nothing, wakes no one, where a watched one woke the loop twice a run for nothing; a
	 * caller's SIG_IGN would have the kernel reap init before its rusage is read */
	signal(SIGCHLD, SIG_DFL);
	u->ep = epoll_create1(EPOLL_CLOEXEC);
	u->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	u->wall_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	u->watch_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	u->grace_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	u->helper_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (u->ep < 0 || u->sfd < 0 || u->wall_tfd < 0 || u->watch_tfd < 0 || u->grace_tfd < 0 || u->helper_tfd < 0)
		return error_set(err, errno, "cannot create the supervisor's event loop (epoll, signalfd, timerfd)");
	return 0;
}

/* warren failed before the job ran: nothing half-made stays. */
static int sup_fail(struct sup *u, bool made_rundir, struct error *err)
{
	struct cell_spec *s = u->s;
	if (u->cell.pid > 0 && !u->init_gone) {
		sup_kill_cell(u, true);  /* (no loop here to watch a backstop) */
		waitpid(u->cell.pid, NULL, 0);
	}
	sup_close(u);
	cgroup_destroy(&u->cg);
	net_teardown(&u->net); /* nothing unless --net made something */
	if (made_rundir) {
		if (err->msg) /* its row, when it was written, says why (an abandoned warm cell's is its cold start's) */
			history_note_failed(s, err->msg);
		struct error e2 = { 0 };
		rundir_reclaim(s->rundir_fd, s->rundir, &e2);
		error_clear(&e2);
		rm_tree_at(s->runs_fd, s->id);
	}
	closep(&u->lock);
	sigprocmask(SIG_SETMASK, &u->old_mask, NULL);
	return err->errnum ? -err->errnum : -EINVAL;
}

/* Run directory, cgroup and the cell, its init waiting to be let go. */
static int sup_make_cell(struct sup *u, int control, struct error *err)
{
	struct cell_spec *s = u->s;
	/* network (opt-in): the run's address and the cell's resolv.conf/hosts, before the cell */
	if (s->net.mode != NET_NONE && net_prepare(&u->net, &s->net, s->id, s->rundir, s->rootless, err) < 0)
		return -EIO;
	char *cg_name = rundir_cgroup_name(s->state_tag, s->id);
	struct limits host_limits = s->limits;
	u->drv->host_limits(s, &host_limits); /* a VM's cgroup holds qemu: the guest's RAM and its own */
	int cgr = cgroup_create(&u->cg, cg_name, s->cgroup_path, &host_limits, s->warm, s->rootless, spec_host_gid(s), err);
	free(cg_name);
	u->cg_made = host_limits;
	if (cgr < 0)
		return -EIO;
	cgroup_mark_owner(&u->cg, s->statedir); /* for gc --orphans, once the state directory is gone */
	struct cell_io io = { .in = STDIN_FILENO, .out = STDOUT_FILENO, .err = STDERR_FILENO, .console = -1,
			      .control = control, .tap = -1 };
	struct sup_ends e = { -1, -1, -1, -1, -1 };
	int r = sup_streams(u, &io, &e, err);
	u->cell.cgroup_fd = u->cg.v2_fd;
	u->cell.cgroup = &u->cg;
	/* a VM's network: its tap, firewall and resolver before qemu, which gets the tap */
	if (r == 0 && u->drv->net_by_tap && s->net.mode != NET_NONE) {
		io.tap = net_attach_tap(&u->net, &s->net, err);
		r = io.tap < 0 ? -EIO : 0;
		io.addr = u->net.addr, io.gw = u->net.gw, io.prefix = u->net.prefix;
	}
	/* (a container's init goes first from here: the driver yields the CPU to it) */
	if (r == 0)
		r = u->drv->start(s, &io, &u->cell, err);
	if (r == 0)
		u->pty = u->drv->take_tty(&u->cell);
	closep(&io.tap);
	sup_ends_close(&e);
	if (r < 0)
		return r;
	/* the supervisor's pid and spec.json while init makes the cell, not before its clone (a
	 * warm cell's spec.json when it is taken: sup_go) */
	rundir_write_pid(u->lock, getpid());
	if (!s->warm && record_write_spec(s, err) < 0)
		return -EIO;
	/* its row's start, a line for <state>/history.db (run/history.h), written while init makes
	 * the cell, before the job is let go (a warm cell's row by the server that gives it its
	 * run: serve/warm.c) */
	if (!s->warm)
		history_note_start(s);
	cgroup_close_join(&u->cg); /* init moves itself into the run's cgroup (v1) */
	/* network (opt-in): veth, address, route, firewall and resolver, set up from outside */
	if (s->net.mode != NET_NONE && !u->drv->net_by_tap && net_attach(&u->net, &s->net, u->cell.pid, err) < 0)
		return -EIO;
	return 0;
}

int sup_prepare(struct sup *u, struct cell_spec *s, int control, struct error *err)
{
	*u = (struct sup){ .s = s, .drv = cell_driver_for(s->driver), .ep = -1, .sfd = -1, .wall_tfd = -1, .watch_tfd = -1, .grace_tfd = -1,
			   .helper_tfd = -1, .out_r = -1, .err_r = -1, .pty = -1, .lock = -1, .console_sock = -1,
			   .log.fd = -1 };
	u->cell.pid = -1;
	u->cell.pidfd = u->cell.report_fd = u->cell.go_fd = u->cell.cgroup_fd = u->cell.take_fd = -1;
	u->cell.netns_sock = -1;
	cgroup_init(&u->cg);
	clock_gettime(CLOCK_REALTIME, &u->started);
	clock_gettime(CLOCK_MONOTONIC, &u->t0);
	refused_init(&u->refused);
	sup_sinks_open(u);
	if (u->drv->check_spec(s, control >= 0, err) < 0)
		return -EINVAL;
	if (!u->drv->take && s->warm)
		return error_set(err, 0, "a warm cell is a container; the %s driver has none", u->drv->name);
	if (sup_loop_fds(u, err) < 0)
		return sup_fail(u, false, err);
	/* a container's namespaces begin on a thread of their own while the run directory is made */
	u->drv->prepare(s, &u->cell);
	u->lock = rundir_create(s, err);
	if (u->lock < 0)
		return sup_fail(u, false, err);
	if (sup_make_cell(u, control, err) < 0)
		return sup_fail(u, true, err);
	/* what the run's end reads of its cgroup, open before its run comes */
	if (s->warm)
		cgroup_open_hits(&u->cg);
	return 0;
}

static void sup_watch_all(struct sup *u)
{
	const struct cell_spec *s = u->s;
	fcntl(u->cell.report_fd, F_SETFL, O_NONBLOCK);
	sup_watch_fd(u, u->cell.pidfd, EV_PIDFD);
	sup_watch_fd(u, u->cell.report_fd, EV_REPORT);
	sup_watch_fd(u, u->sfd, EV_SIGNAL);
	sup_watch_fd(u, u->wall_tfd, EV_WALL);
	sup_watch_fd(u, u->watch_tfd, EV_WATCH);
	sup_watch_fd(u, u->grace_tfd, EV_GRACE);
	sup_watch_fd(u, u->helper_tfd, EV_HELPER_BOUND);
	for (int i = 0; u->net.on && i < 2; i++)
		sup_watch_fd(u, net_fd(&u->net, i), EV_NET);
	if (u->refused.sock >= 0)
		sup_watch_fd(u, u->refused.sock, EV_WATCH_SOCK);
	if (git_watch_fd(u->gitwatch) >= 0)
		sup_watch_fd(u, git_watch_fd(u->gitwatch), EV_GITWATCH);
	if (u->out_r >= 0)
		sup_watch_fd(u, u->out_r, EV_OUT);
	if (u->err_r >= 0)
		sup_watch_fd(u, u->err_r, EV_ERR);
	if (u->pty >= 0) {
		fcntl(u->pty, F_SETFL, O_NONBLOCK);
		sup_watch_fd(u, u->pty, EV_PTY);
		sup_watch_fd(u, STDIN_FILENO, EV_IN);
		u->in_open = true;
		if (u->in_len) /* typed ahead */
			sup_pty_input(u);
	}
	if (s->limits.time_ms && !u->drv->reports_job_start) {
		/* the cause line's time is on the limit's clock: from here, not from before the cell was made */
		u->job_start_s = sup_elapsed(u);
		sup_arm(u->wall_tfd, s->limits.time_ms, 0);
	}
	if (s->limits.cpu_ms || s->limits.pids || s->limits.memory)
		sup_arm(u->watch_tfd, WATCH_MS, WATCH_MS);
}

/* A warm cell's claim: its run's limits into the cell's group, its published ports and allow
 * list into its network, before its job may run. */
static int sup_claim(struct sup *u, struct error *err)
{
	struct limits want = u->s->limits;
	u->drv->host_limits(u->s, &want);
	int r = cgroup_claim(&u->cg, &u->cg_made, &want, err);
	if (r == 0)
		u->cg_made = want;
	if (r == 0 && u->s->net.mode != NET_NONE)
		r = net_claim(&u->net, &u->s->net, err);
	return r;
}

int sup_go(struct sup *u, struct error *err)
{
	struct cell_spec *s = u->s;
	if (s->warm) {
		/* the run starts now, not when its cell was made */
		clock_gettime(CLOCK_REALTIME, &u->started);
		clock_gettime(CLOCK_MONOTONIC, &u->t0);
		if (sup_claim(u, err) < 0)
			return sup_fail(u, true, err);
	}
	/* from here on the job may run: what changes in the worktree after this is its doing */
	u->gitwatch = worktree_watch_start(s->worktree_fd, &u->gitwatch_why);
	clock_gettime(CLOCK_REALTIME_COARSE, &u->released_at);
	/* (the job and init just woken go first: the driver yields the CPU to them) */
	if (s->warm)
		u->drv->take(&u->cell, s->limits.scratch, u->take_direct);
	else
		u->drv->release(&u->cell);
	/* a warm cell's spec.json while its init makes the scratch (its history row was written
	 * by the server that gave it its run: serve/warm.c) */
	if (s->warm && record_write_spec(s, err) < 0)
		return sup_fail(u, true, err);
	if (s->warm)
		rundir_taken(s->rundir_fd);
	/* the helpers that made the cell's namespaces have ended by now as a rule: those that
	 * have are reaped while the job runs, not on the way from its end to the caller */
	cell_reap_ended_helpers(&u->cell);
	if (u->console_sock >= 0) {
		sup_recv_console(u, u->console_sock);
		closep(&u->console_sock);
	} else if (u->pty >= 0) {
		sup_tty_raw(u); /* a VM's */
	}
	sup_watch_all(u);
	return 0;
}

void sup_abandon(struct sup *u)
{
	/* no word in the history: the run (if one came) starts cold under the same id, and its row
	 * is that start's (ended here, it would say "given up" whatever the cold start did) */
	struct error err = { 0 };
	sup_fail(u, true, &err);
}

int sup_start(struct sup *u, struct cell_spec *s, int control, struct error *err)
{
	int r = sup_prepare(u, s, control, err);
	return r < 0 ? r : sup_go(u, err);
}

int sup_finish(struct sup *u, const struct supervise_opts *o)
{
	struct cell_spec *s = u->s;
	struct run_result res = { .started = u->started };
	struct rusage ru;
	siginfo_t si;
	memset(&ru, 0, sizeof ru);
	/* reap init; its rusage covers what it reaped */
	int init_status = 0;
	if (wait4(u->cell.pid, &init_status, 0, &ru) < 0)
		waitid(P_PIDFD, (id_t)u->cell.pidfd, &si, WEXITED);
	if (!u->gone_ns)  /* (the loop ended without init's pidfd: an error, a kill before start) */
		u->gone_ns = mono_ns();
	read_reports(u);
	/* a VM that ended without its guest's word failed, unless it was stopped */
	if (!u->have_exit && !u->setup_error && !u->stopping) {
		u->setup_error = u->drv->missing_report(s, &u->cell, init_status);
		if (u->setup_error)
			u->setup_status = 125;
	}
	sup_restore_tty(u);
	clock_gettime(CLOCK_REALTIME, &res.ended);
	/* the cell's life, not the time the caller then took to read its output */
	res.wall_s = (double)(u->gone_ns - ts_ns(&u->t0)) / 1e9;
	sup_build_result(u, &res);
	sup_rusage_fallback(&res, &ru);
	res.scratch_bytes = u->have_scratch ? u->scratch_used : sup_scratch_bytes(s);
	json_t *extra = NULL;
	if (o->amend)
		o->amend(o->amend_ctx, &res, &extra);
	if (o->ended)
		o->ended(o->ended_ctx, &res, true);
	net_record(&u->net, &extra, o->quiet); /* "network" in the record; nothing for --net none */
	u->drv->record(&u->cell, &extra);      /* a VM's "vm": accel, kernel, memory */
	sup_held_record(u, &extra, o->quiet);
	sup_log_record(u, &extra);
	refused_stop(&u->refused);  /* every caller is gone with init */
	refused_record(&u->refused, s, &extra, o->quiet);
	/* what the job left in the worktree that git on the host would obey, moved aside */
	if (u->released_at.tv_sec)
		worktree_git_check(s->worktree_fd, s->id, s->rundir, &u->released_at, u->gitwatch, u->gitwatch_why,
				   &extra, o->quiet);

	sup_timings_record(u, &extra);
	char *json = record_result_json(s, &res, extra);
	json_decref(extra);
	struct error e2 = { 0 };
	if (json && record_write_result(s, json, &e2) < 0) {
		warn_line("%s", e2.msg);
		error_clear(&e2);
	}
	history_note_end(s, &res, NULL);

	net_teardown(&u->net);
	if (cgroup_destroy(&u->cg) < 0)
		warn_line("cannot remove the cgroup of %s; run 'warren gc'", s->id);
	if (s->keep && s->limits.scratch) {
		warn_line("note: with --scratch the scratch of %s lived in the cell's memory and is gone; the record is in %s", s->id, s->rundir);
		rundir_reclaim(s->rundir_fd, s->rundir, &e2);
		error_clear(&e2);
	} else if (s->keep) {
		warn_line("kept the scratch of %s in %s (remove it with 'warren gc %s')", s->id, s->rundir, s->id);
	} else if (rundir_reclaim(s->rundir_fd, s->rundir, &e2) < 0) {
		warn_line("%s", e2.msg);
		error_clear(&e2);
	}
	/* the record written, nothing of the cell left: what the caller has yet to take of the
	 * job's output, then the result and the run's last line, in that order */
	sup_sinks_flush_final(u);
	if (json)
		sup_emit_result(o, json);
	free(json);
	if (res.error)
		warn_line("%s", res.error);
	else if (res.cause_message && !o->quiet)
		warn_line("%s stopped: %s", s->id, res.cause_message);
	if (!res.error && o->summary)
		o->summary(o->amend_ctx, &res);
	int rc = res.exit_code;
	run_result_free(&res);
	sup_close(u);
	closep(&u->lock);
	sigprocmask(SIG_SETMASK, &u->old_mask, NULL);
	return rc;
}

int supervise_run(struct cell_spec *s, const struct supervise_opts *o, struct error *err)
{
	struct sup u;
	int r = sup_start(&u, s, -1, err);
	if (r < 0)
		return r;
	u.log.on = true;  /* a plain run keeps its output (outlog.c); a job keeps its steps' */
	struct epoll_event evs[8];
	while (sup_running(&u)) {
		int n = epoll_wait(u.ep, evs, 8, -1);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++)
			sup_dispatch(&u, &evs[i]);
	}
	if (u.in_open)
		epoll_ctl(u.ep, EPOLL_CTL_DEL, STDIN_FILENO, NULL);
	return sup_finish(&u, o);
}
