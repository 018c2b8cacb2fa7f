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
 * not change how the run ended. */
#include "supervise/supervise.h"

#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <termios.h>
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

#define WATCH_MS 100

double sup_elapsed(const struct sup *u)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - u->t0.tv_sec) + (double)(now.tv_nsec - u->t0.tv_nsec) / 1e9;
}

static void arm(int tfd, uint64_t ms, uint64_t interval_ms)
{
	struct itimerspec it = {
		.it_value = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000 },
		.it_interval = { .tv_sec = (time_t)(interval_ms / 1000), .tv_nsec = (long)(interval_ms % 1000) * 1000000 },
	};
	if (ms == 0)
		it.it_value.tv_nsec = 1;
	timerfd_settime(tfd, 0, &it, NULL);
}

/* SIGKILL for every process of the cell. Once the job was let go (init then waits for it, or
 * soon will, in the loop that reads the go pipe), a container's init is asked to kill and
 * reap them itself (CELL_KILL_BYTE: their CPU time then reaches the record) and is SIGKILLed
 * when the backstop (grace_tfd, armed here and watched from then on) fires first; before that
 * (a cell being made, or a warm one waiting for its run) and when hard, init is SIGKILLed. */
static int kill_cell(struct sup *u, bool hard)
{
	if (u->init_gone || u->cell.pidfd < 0)
		return 0;
	if (hard || !u->released_at.tv_sec || !u->drv->ask_kill)
		return u->drv->signal(&u->cell, SIGKILL);
	if (u->kill_asked)
		return 0;
	u->kill_asked = true;
	arm(u->grace_tfd, CELL_KILL_BACKSTOP_MS, 0);
	if (u->drv->ask_kill(&u->cell) == 0)
		return 0;
	return u->drv->signal(&u->cell, SIGKILL);
}

static int signal_cell(struct sup *u, int sig)
{
	if (sig == SIGKILL)
		return kill_cell(u, false);
	if (u->init_gone || u->cell.pidfd < 0)
		return 0;
	return u->drv->signal(&u->cell, sig);
}

/* Stop the whole cell for a named cause: the polite signal now, SIGKILL after the grace. */
void sup_stop(struct sup *u, enum run_status st, const char *limit, const char *value, int sig, char *text)
{
	/* a container's job that ended before the cause (its init ends with it, taking the rest of
	 * the cell) ended as it did: a limit reached while the cell goes is not the run's end, nor
	 * what a warm run's early answer said (sup_end_known); unless the driver does not trust
	 * the cell's word on its end (a VM's guest). */
	if (u->stopping || (u->have_exit && u->drv->trusts_exit)) {
		free(text);
		return;
	}
	u->stopping = true;
	u->cause_status = st;
	u->cause_limit = xstrdup(limit);
	u->cause_value = value ? xstrdup(value) : NULL;
	u->cause_text = text;
	u->stop_signal = sig;
	u->stop_at_s = sup_elapsed(u);
	signal_cell(u, sig);
	if (sig != SIGKILL)  /* (a SIGKILL's backstop is armed instead) */
		arm(u->grace_tfd, u->s->limits.grace_ms, 0);
}

void sup_kill(struct sup *u)
{
	if (u->killed)
		return;
	u->killed = true;
	kill_cell(u, false);
}

/* ---- output relay ---- */

/* Count n more bytes of the job's output against the output limit (stopping the cell when it
 * is passed): how many of them may be passed on. */
size_t sup_output_pass(struct sup *u, size_t n)
{
	size_t pass = n;
	uint64_t lim = u->s->limits.output;
	if (lim && u->output + n > lim) {
		pass = u->output >= lim ? 0 : (size_t)(lim - u->output);
		if (!u->output_capped) {
			u->output_capped = true;
			char v[32];
			format_size(v, sizeof v, lim);
			sup_stop(u, RUN_LIMIT, "output", v, SIGTERM,
				  xasprintf("output limit %s reached (the job wrote more than %llu byte%s)", v,
					    (unsigned long long)lim, lim == 1 ? "" : "s"));
		}
	}
	u->output += (uint64_t)n;
	return pass;
}

/* The caller's stdout or stderr (fd) as the relay writes it. Where a write could wait for a
 * reader (a pipe, a terminal) the relay writes a descriptor of its own, opened non-blocking
 * (the caller's own is not made so: its open file is shared with the caller's shell); a socket
 * is sent to without waiting; a file or /dev/null is written as it is. A caller who does not
 * read (`| less` not scrolled, ^S on a terminal) held the supervisor in write(2) before, where
 * it kept no time limit, no signal and no `warren kill`; now what the caller has not taken
 * waits here, the job's stream is out of the loop meanwhile (the job waits on its full pipe,
 * as in any pipeline) and the loop goes on. Where the descriptor cannot be opened again (a
 * terminal of another user's, one opened exclusively) it is written as it is, waiting. */
static void sink_open(struct sup_sink *k, int fd)
{
	*k = (struct sup_sink){ .fd = fd };
	struct stat st;
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fstat(fd, &st) < 0)
		return;
	if (S_ISSOCK(st.st_mode)) {
		k->nb = k->sock = true;
		return;
	}
	if (!S_ISFIFO(st.st_mode) && (!S_ISCHR(st.st_mode) || st.st_rdev == makedev(1, 3)))
		return;  /* a file, /dev/null: nothing to wait for */
	char p[32];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	int n = open(p, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (fl & O_APPEND));
	if (n >= 0)
		k->fd = n, k->own = k->nb = true;
}

/* Both of the caller's streams: when stdout and stderr are one file (2>&1), one queue for both,
 * so that what one writes never lands inside a line of the other's. */
static void sinks_open(struct sup *u)
{
	sink_open(&u->sink[0], STDOUT_FILENO);
	sink_open(&u->sink[1], STDERR_FILENO);
	struct stat a, b;
	if (u->sink[0].nb && u->sink[1].nb && fstat(STDOUT_FILENO, &a) == 0 && fstat(STDERR_FILENO, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		if (u->sink[1].own)
			closep(&u->sink[1].fd);
		u->sink[1] = (struct sup_sink){ .fd = -1, .alias = true };
	}
}

struct sup_sink *sup_sink(struct sup *u, int i)
{
	return i && u->sink[1].alias ? &u->sink[0] : &u->sink[i];
}

static void sink_close(struct sup_sink *k)
{
	if (k->own)
		closep(&k->fd);
	free(k->pend);
	k->pend = NULL;
	k->len = 0;
}

/* Write b (n bytes) to k, or as much as it takes now; the rest waits in k->pend (empty before). */
static void sink_write(struct sup_sink *k, const char *b, size_t n)
{
	if (k->broken)
		return;
	if (!k->nb) {
		if (write_all(k->fd, b, n) == -EPIPE)
			k->broken = true;
		return;
	}
	while (n) {
		ssize_t w = k->sock ? send(k->fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL) : write(k->fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w < 0) {
			k->broken = errno == EPIPE;  /* (another error: this part is lost, as before) */
			return;
		}
		b += w;
		n -= (size_t)w;
	}
	if (n) {
		k->pend = xrealloc(k->pend, n);
		memmove(k->pend, b, n);
		k->len = n;
	}
}

void sup_sink_put(struct sup_sink *k, const char *b, size_t n)
{
	if (k->broken || !n)
		return;
	if (!k->len) {
		sink_write(k, b, n);
		return;
	}
	/* after what waits, in order */
	k->pend = xrealloc(k->pend, k->len + n);
	memcpy(k->pend + k->len, b, n);
	k->len += n;
}

/* Write what waits in k, as much as the caller takes now. */
static void sink_flush(struct sup_sink *k)
{
	if (k->broken)
		k->len = 0;
	if (!k->len)
		return;
	size_t n = k->len;
	k->len = 0;
	_cleanup_free_ char *b = k->pend;
	k->pend = NULL;
	sink_write(k, b, n);
	if (k->broken)
		k->len = 0;
}

/* The job's stream that sink i relays: stdout (or the terminal) for 0, stderr for 1. */
static int *sink_source(struct sup *u, int i, uint32_t *tag)
{
	*tag = i ? EV_ERR : u->out_r >= 0 ? EV_OUT : EV_PTY;
	return i ? &u->err_r : u->out_r >= 0 ? &u->out_r : &u->pty;
}

/* The job's stream i out of the loop (pause) or back in it. Out of it, not only unwatched for
 * input: epoll reports a hangup even for a descriptor watched for nothing, and a stream the
 * job closed while paused would wake the loop without end. */
static void source_pause(struct sup *u, int i, bool pause)
{
	uint32_t tag;
	int *src = sink_source(u, i, &tag);
	if (*src < 0 || pause == u->src_paused[i]) {
		u->src_paused[i] = *src >= 0 && pause;
		return;
	}
	u->src_paused[i] = pause;
	struct epoll_event ev = { .events = EPOLLIN | (tag == EV_PTY && u->in_len ? EPOLLOUT : 0), .data.u32 = tag };
	epoll_ctl(u->ep, pause ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, *src, pause ? NULL : &ev);
}

/* After a write to sink i: while something waits for the caller, the job's streams that feed it
 * are out of the loop and the caller's descriptor is watched until it takes more; a caller who
 * went away (EPIPE) closes them, and the job's next write gets SIGPIPE, as in a pipeline. */
static void sink_check(struct sup *u, int i)
{
	struct sup_sink *k = sup_sink(u, i);
	bool both = k == &u->sink[0] && u->sink[1].alias;
	int first = both ? 0 : i, last = both ? 1 : i;
	if (k->broken) {
		epoll_ctl(u->ep, EPOLL_CTL_DEL, k->fd, NULL);
		for (int j = first; j <= last; j++) {
			uint32_t tag;
			int *src = sink_source(u, j, &tag);
			if (u->src_paused[j])
				closep(src);
			else
				sup_unwatch_close(u, src);
			u->src_paused[j] = false;
		}
		return;
	}
	bool waiting = k->len != 0;
	for (int j = first; j <= last; j++)
		source_pause(u, j, waiting);
	struct epoll_event out = { .events = EPOLLOUT, .data.u32 = k == &u->sink[1] ? EV_SINK_ERR : EV_SINK_OUT };
	if (waiting && epoll_ctl(u->ep, EPOLL_CTL_ADD, k->fd, &out) < 0 && errno == EEXIST)
		epoll_ctl(u->ep, EPOLL_CTL_MOD, k->fd, &out);
	else if (!waiting)
		epoll_ctl(u->ep, EPOLL_CTL_DEL, k->fd, NULL);
}

void sup_sink_check(struct sup *u, int i)
{
	sink_check(u, i);
}

/* The record is written and the cell gone: what the caller has yet to take is waited for, as
 * long as no SIGINT, SIGTERM or SIGHUP says to give it up. */
static void sinks_flush_final(struct sup *u)
{
	for (int i = 0; i < 2; i++) {
		struct sup_sink *k = &u->sink[i];
		if (k->alias || k->fd < 0)
			continue;
		epoll_ctl(u->ep, EPOLL_CTL_DEL, k->fd, NULL);
		for (sink_flush(k); k->len && !k->broken; sink_flush(k)) {
			struct pollfd p[2] = { { .fd = k->fd, .events = POLLOUT }, { .fd = u->sfd, .events = POLLIN } };
			if (poll(p, u->sfd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR)
				break;
			struct signalfd_siginfo si;
			if ((p[1].revents & POLLIN) && read(u->sfd, &si, sizeof si) == (ssize_t)sizeof si &&
			    (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP)) {
				k->len = 0;
				break;
			}
		}
	}
}

/* Read what the job wrote on fd, count it in *count and pass it on to sink i, within the
 * output limit. The bytes read; 0 at the end (EOF, or EIO on a pty whose slave is gone); -1
 * when nothing is there now (or, unless drain, the caller has yet to take what was read
 * before; a drain queues what it reads behind that). */
static ssize_t relay(struct sup *u, int fd, int i, uint64_t *count, bool drain)
{
	struct sup_sink *k = sup_sink(u, i);
	if (k->len && !drain)
		return -1;
	char buf[65536];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	if (n <= 0)
		return 0;
	size_t pass = sup_output_pass(u, (size_t)n);
	*count += (uint64_t)n;
	if (pass)
		sup_sink_put(k, buf, pass);
	return n;
}

/* The job's stream *fd has something (or its end): relayed to sink i, closed at its end. */
static void relay_event(struct sup *u, int *fd, int i, uint64_t *count)
{
	if (relay(u, *fd, i, count, false) == 0)
		sup_unwatch_close(u, fd);
	else
		sink_check(u, i);
}

void sup_output_held(struct sup *u, const char *stream, uint64_t bytes)
{
	if (!u->held)
		u->held = json_array();
	json_array_append_new(u->held, json_pack("{s:s,s:I}", "stream", stream, "bytes_read", (json_int_t)bytes));
}

/* Once the cell is gone nothing in it writes to fd any more: pass on what fd holds and close
 * it. A write end still open is held by a process outside the cell (passed out over a socket,
 * or to another run): then only what is queued now is taken, never waiting for more. */
static void drain_close(struct sup *u, int *fd, int i, uint64_t *count, const char *stream)
{
	if (*fd < 0)
		return;
	bool held = fd_writer_open(*fd);
	uint64_t queued = held ? fd_queued(*fd) : UINT64_MAX, got = 0;
	ssize_t n;
	/* queued behind what the caller has yet to take (bounded by the pipe's size): the record
	 * does not wait for the caller, the end does (sinks_flush_final) */
	while (got < queued && (n = relay(u, *fd, i, count, true)) > 0)
		got += (uint64_t)n;
	if (held)
		sup_output_held(u, stream, *count);
	if (u->src_paused[i])
		closep(fd);
	else
		sup_unwatch_close(u, fd);
	u->src_paused[i] = false;
}

/* ---- reports from init ---- */

/* "timings" of the record: when the run reached each step, in whole microseconds after the
 * supervisor's start (a warm run: after its take; integers: a real keeps 6 digits in the
 * record, too few past 10 s). From init's own clock reads where the step is init's (a
 * container's), else the supervisor's (a VM guest's clock is not the host's); null where there
 * is none: a warm cell's root was built and its job made before its run came, a VM's guest
 * reports none, and an init killed before it reported the job's end (the grace's SIGKILL)
 * sent none. */
static void timings_record(struct sup *u, json_t **extra)
{
	int64_t t0 = ts_ns(&u->t0);
	bool warm = u->s->warm;
	/* without init's time, the job ended when its end was reported or init was gone, the
	 * earlier (the report may be read only after init's pidfd) */
	int64_t ended = u->init_ns[2] ? u->init_ns[2]
		      : u->exit_ns && u->gone_ns && u->gone_ns < u->exit_ns ? u->gone_ns : u->exit_ns;
	int64_t at[5] = { warm ? 0 : u->init_ns[0], warm ? 0 : u->init_ns[1], ended, u->gone_ns, mono_ns() };
	static const char *const names[] = { "cell_ready_us", "job_started_us", "job_ended_us", "cell_gone_us", "recorded_us" };
	json_t *t = json_object();
	for (int i = 0; i < 5; i++)
		json_object_set_new(t, names[i], at[i] > t0 ? json_integer((json_int_t)((at[i] - t0 + 500) / 1000)) : json_null());
	if (!*extra)
		*extra = json_object();
	json_object_set_new(*extra, "timings", t);
}

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
				arm(u->wall_tfd, u->s->limits.time_ms, 0);
		} else if (r.type == CELL_REPORT_ERROR && !u->setup_error) {
			u->setup_error = msg;
			u->setup_status = r.status;
			u->setup_errnum = r.errnum;
		} else {
			free(msg);
		}
	}
}

/* ---- limits watched while the run lives ---- */

/* Which process the kernel's OOM killer chose in this run's cgroup, from the kernel log
 * ("oom-kill:...,oom_memcg=/warren/<id>,...,task=cc1,pid=41,..."): "cc1 (host pid 41)", or
 * NULL when the log cannot be read (not root, or the kernel restricts it). */
static char *oom_victim(const char *id)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *found = NULL;
	char rec[8192];
	_cleanup_free_ char *memcg = xasprintf("oom_memcg=/warren/%s,", id);
	for (;;) {
		ssize_t n = read(fd, rec, sizeof rec - 1);
		if (n < 0 && errno == EPIPE)
			continue; /* records overwritten while we read: go on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (!strstr(rec, memcg))
			continue;
		char *task = strstr(rec, ",task=");
		char *pid = strstr(rec, ",pid=");
		if (!task || !pid)
			continue;
		task += 6;
		pid += 5;
		free(found);
		found = xasprintf("%.*s (host pid %.*s)", (int)strcspn(task, ","), task, (int)strcspn(pid, ",\n"), pid);
	}
	close(fd);
	return found;
}

static char *memory_cause(const struct limits *l, uint64_t kills, const struct cell_spec *s, char *v, size_t vlen)
{
	format_size(v, vlen, l->memory);
	_cleanup_free_ char *cg = rundir_cgroup_name(s->state_tag, s->id);
	_cleanup_free_ char *who = oom_victim(cg);
	if (who && kills == 1)
		return xasprintf("memory limit %s reached; the kernel killed %s", v, who);
	if (who)
		return xasprintf("memory limit %s reached; the kernel killed %llu processes, the last %s", v,
				 (unsigned long long)kills, who);
	return xasprintf("memory limit %s reached; the kernel killed %llu process%s", v, (unsigned long long)kills,
			 kills == 1 ? "" : "es");
}

static char *pids_cause(const struct limits *l, uint64_t hits)
{
	return xasprintf("process limit %llu reached (fork failed %llu time%s)", (unsigned long long)l->pids,
			 (unsigned long long)hits, hits == 1 ? "" : "s");
}

static void watch_limits(struct sup *u)
{
	struct cgroup_usage cu;
	cgroup_usage(&u->cg, &cu);
	cu.pids_max_hits += u->guest_pids_hits;
	cu.oom_kills += u->guest_oom_kills;
	if (cu.pids_current > u->pids_sampled)
		u->pids_sampled = cu.pids_current;
	const struct limits *l = &u->s->limits;
	char v[32];
	if (l->memory && cu.oom_kills) {
		char *text = memory_cause(l, cu.oom_kills, u->s, v, sizeof v);
		bool first = !u->stopping;
		sup_stop(u, RUN_LIMIT, "memory", v, SIGKILL, text);
		if (first)  /* (a cause set before keeps the signal it named) */
			u->stop_signal = 0;
		sup_kill(u);
	} else if (l->pids && cu.pids_max_hits) {
		sup_stop(u, RUN_LIMIT, "pids", NULL, SIGTERM, pids_cause(l, cu.pids_max_hits));
		free(u->cause_value);
		u->cause_value = xasprintf("%llu", (unsigned long long)l->pids);
	} else if (l->cpu_ms && cu.have_cpu && sup_job_started(u) && (cu.cpu_ns - u->job_start_cpu_ns) / 1000000 >= l->cpu_ms) {
		format_duration_ms(v, sizeof v, l->cpu_ms);
		char at[32];
		format_seconds(at, sizeof at, sup_elapsed(u));
		sup_stop(u, RUN_LIMIT, "cpu-time", v, SIGTERM,
			  xasprintf("CPU-time limit %s reached at %s of wall-clock time", v, at));
	}
}

/* ---- the terminal ---- */

/* Room for n more bytes of input for the job's terminal after what waits (u->in_buf). */
static char *in_room(struct sup *u, size_t n)
{
	if (u->in_len == 0)
		u->in_off = 0;
	if (u->in_off + u->in_len + n > u->in_cap) {
		size_t need = u->in_off + u->in_len + n;
		u->in_cap = need > 2 * u->in_cap ? need : 2 * u->in_cap;
		u->in_buf = xrealloc(u->in_buf, u->in_cap);
	}
	return u->in_buf + u->in_off + u->in_len;
}

/* What the caller's terminal holds before warren makes it raw, read as its line discipline
 * made it: whole lines pass to the job's terminal as they are, an EOF typed (script(1) types
 * one when its input ends) as that terminal's EOF; left there, raw mode would read the EOF as
 * the NUL byte the line discipline keeps for it. The caller's terminal first stops making EOFs
 * and echoing: one typed from then on stays the byte ^D, which raw mode passes on as typed.
 * It waits in u->in_buf, which the job's terminal takes as it has room (pty_input), like
 * what stdin gives later: more than that terminal holds, typed ahead, never blocks the
 * supervisor. True when the caller's terminal was changed. */
static bool pass_typed_ahead(struct sup *u)
{
	struct termios quiet = u->saved_tio;
	quiet.c_lflag &= ~(tcflag_t)ECHO;
	quiet.c_cc[VEOF] = _POSIX_VDISABLE;
	if (!(u->saved_tio.c_lflag & ICANON) || tcsetattr(STDIN_FILENO, TCSANOW, &quiet) < 0)
		return false;
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	for (int i = 0; i < 64 && poll(&p, 1, 0) == 1 && p.revents == POLLIN; i++) {
		ssize_t n = read(STDIN_FILENO, in_room(u, 4096), 4096);
		if (n < 0)
			break;
		if (n == 0) { /* an EOF */
			*in_room(u, 1) = (char)u->saved_tio.c_cc[VEOF];
			n = 1;
		}
		u->in_len += (size_t)n;
	}
	return true;
}

/* The job's terminal gets the caller's size (a VM's through its control port: u->pty is a
 * socket to the guest's console). */
static void job_winsize(struct sup *u)
{
	struct winsize ws;
	if (u->pty < 0 || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
		return;
	u->drv->winsize(&u->cell, u->pty, &ws);
}

/* The caller's terminal made raw while the job has its own (u->pty). */
static void tty_raw(struct sup *u)
{
	job_winsize(u);
	if (tcgetattr(STDIN_FILENO, &u->saved_tio) == 0) {
		struct termios raw = u->saved_tio;
		/* the job's terminal starts with the caller's settings */
		tcsetattr(u->pty, TCSANOW, &u->saved_tio);
		bool changed = pass_typed_ahead(u);
		cfmakeraw(&raw);
		if (tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0 || changed)
			u->tty_raw = true;
	}
}

/* The job's terminal is opened by init in the cell's devpts; its master comes back over a
 * socket. Until then the caller's terminal is left as it is. */
static int recv_console(struct sup *u, int sock)
{
	char byte;
	if (fd_recv(sock, 0, &byte, 1, &u->pty) <= 0 || u->pty < 0)
		return -1; /* init failed before: its report says why */
	tty_raw(u);
	return 0;
}

static void restore_tty(struct sup *u)
{
	if (u->tty_raw) {
		tcsetattr(STDIN_FILENO, TCSADRAIN, &u->saved_tio);
		u->tty_raw = false;
	}
}

/* ---- the loop ---- */

void sup_watch_fd(struct sup *u, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };
	epoll_ctl(u->ep, EPOLL_CTL_ADD, fd, &ev);
}

void sup_unwatch_close(struct sup *u, int *fd)
{
	if (*fd < 0)
		return;
	epoll_ctl(u->ep, EPOLL_CTL_DEL, *fd, NULL);
	closep(fd);
}

static void on_signal(struct sup *u)
{
	struct signalfd_siginfo si;
	while (read(u->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
		int sig = (int)si.ssi_signo;
		if (sig == SIGWINCH) {
			job_winsize(u);
			continue;
		}
		if (sig == SIGCHLD || u->init_gone)
			continue; /* the run is over: it ended as it did, not by this signal */
		if (u->stopping) {
			/* asked twice: no more grace; three times: init is not waited for */
			if (u->killed) {
				kill_cell(u, true);
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

/* Pass on what stdin gave (u->in_buf) as far as the job's terminal takes it now: never wait
 * for a job that does not read its terminal (its limits are watched meanwhile). While some is
 * left, stdin is not read and the terminal is watched for room; a terminal that fails takes
 * no more. */
static void pty_input(struct sup *u)
{
	while (u->in_len) {
		ssize_t w = write(u->pty, u->in_buf + u->in_off, u->in_len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			break;
		if (w <= 0) {
			u->in_len = 0;
			break;
		}
		u->in_off += (size_t)w;
		u->in_len -= (size_t)w;
	}
	bool waiting = u->in_len != 0;
	struct epoll_event pe = { .events = EPOLLIN | (waiting ? EPOLLOUT : 0), .data.u32 = EV_PTY };
	if (!u->src_paused[0])  /* (out of the loop while the caller has output to take) */
		epoll_ctl(u->ep, EPOLL_CTL_MOD, u->pty, &pe);
	if (u->in_open) {
		struct epoll_event ie = { .events = EPOLLIN, .data.u32 = EV_IN };
		epoll_ctl(u->ep, waiting ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, STDIN_FILENO, &ie);
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
		arm(u->helper_tfd, CELL_HELPER_END_MS, 0);
	helpers_check(u, false);
}

bool sup_dispatch(struct sup *u, const struct epoll_event *ev)
{
	uint64_t exp;
	switch (ev->data.u32) {
	case EV_PIDFD:
		u->gone_ns = mono_ns();
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
	case EV_WALL: {
		if (read(u->wall_tfd, &exp, sizeof exp) < 0 || u->init_gone)
			break;  /* (the cell ended: its helpers are waited for) */
		char v[32], at[32];
		format_duration_ms(v, sizeof v, u->s->limits.time_ms);
		format_seconds(at, sizeof at, sup_elapsed(u) - u->job_start_s);
		sup_stop(u, RUN_LIMIT, "time", v, SIGTERM, xasprintf("wall-clock limit %s reached at %s", v, at));
		break;
	}
	case EV_WATCH:
		if (read(u->watch_tfd, &exp, sizeof exp) >= 0 && !u->init_gone)
			watch_limits(u);
		break;
	case EV_NET:
		net_dispatch(&u->net);
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
				kill_cell(u, true);
			else
				sup_kill(u);
		}
		break;
	case EV_OUT:
		relay_event(u, &u->out_r, 0, &u->out_bytes);
		break;
	case EV_ERR:
		relay_event(u, &u->err_r, 1, &u->err_bytes);
		break;
	case EV_PTY:
		if ((ev->events & EPOLLOUT) && u->pty >= 0)
			pty_input(u);
		if ((ev->events & ~(uint32_t)EPOLLOUT) && u->pty >= 0)
			relay_event(u, &u->pty, 0, &u->out_bytes);
		break;
	case EV_SINK_OUT:
	case EV_SINK_ERR: {
		int i = ev->data.u32 == EV_SINK_ERR;
		sink_flush(&u->sink[i]);
		sink_check(u, i);
		break;
	}
	case EV_IN: {
		ssize_t r = read(STDIN_FILENO, in_room(u, 4096), 4096);
		if (r <= 0 || u->pty < 0) {
			if (u->in_open)
				epoll_ctl(u->ep, EPOLL_CTL_DEL, STDIN_FILENO, NULL);
			u->in_open = false;
		} else {
			u->in_len += (size_t)r;
			pty_input(u);
		}
		break;
	}
	default:
		return false;
	}
	/* every process of the cell is gone once init is (pid 1 of its pid namespace): what is
	 * left in the output is taken now, whoever else holds a write end */
	if (u->init_gone) {
		drain_close(u, &u->out_r, 0, &u->out_bytes, "stdout");
		drain_close(u, &u->err_r, 1, &u->err_bytes, "stderr");
		drain_close(u, &u->pty, 0, &u->out_bytes, "terminal");
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

void sup_unwatch(struct sup *u, int fd)
{
	epoll_ctl(u->ep, EPOLL_CTL_DEL, fd, NULL);
}

void sup_on_interrupt(struct sup *u, bool (*fn)(void *, const char *, const char *, int, char *), void *ctx)
{
	u->interrupt = fn;
	u->interrupt_ctx = ctx;
}

bool sup_stopping(const struct sup *u, const char **text, enum run_status *status)
{
	if (text)
		*text = u->cause_text;
	if (status)
		*status = u->cause_status;
	return u->stopping;
}

void sup_signal_job(struct sup *u, int sig)
{
	u->drv->signal_job(&u->cell, sig);
}

const char *sup_job_end(const struct sup *u, char *buf, size_t len)
{
	if (u->have_exit && WIFSIGNALED(u->job_status))
		snprintf(buf, len, "killed by SIG%s", sigabbrev_np(WTERMSIG(u->job_status)) ?: "?");
	else if (u->have_exit && WIFEXITED(u->job_status))
		snprintf(buf, len, "exited with %d", WEXITSTATUS(u->job_status));
	else
		snprintf(buf, len, "gone");
	return buf;
}

/* ---- the outcome ---- */

static const char *signal_name(int sig, char *buf, size_t len)
{
	snprintf(buf, len, "SIG%s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	return buf;
}

/* A cause found at the end (the kernel enforced the limit since the last look): limit, value
 * (copied), text (taken). No signal was sent for it. */
static void late_cause(struct sup *u, const char *limit, const char *value, char *text)
{
	u->cause_status = RUN_LIMIT;
	u->cause_limit = xstrdup(limit);
	u->cause_value = xstrdup(value);
	u->cause_text = text;
	u->stop_signal = 0;
	u->stopping = true;
}

static void build_result(struct sup *u, struct run_result *r)
{
	const struct limits *l = &u->s->limits;
	/* how the job itself ended */
	if (u->have_exit && WIFEXITED(u->job_status)) {
		r->status = RUN_EXITED;
		r->exit_code = WEXITSTATUS(u->job_status);
	} else if (u->have_exit && WIFSIGNALED(u->job_status)) {
		r->status = RUN_SIGNALED;
		r->signal = WTERMSIG(u->job_status);
		r->exit_code = 128 + r->signal;
	} else {
		/* init was killed before the job's end was reported: SIGKILL took everything */
		r->status = RUN_SIGNALED;
		r->signal = SIGKILL;
		r->exit_code = 128 + SIGKILL;
	}
	if (u->setup_error) {
		r->status = RUN_ERROR;
		r->exit_code = u->setup_status ? u->setup_status : 125;
		r->signal = 0;
		r->error = xstrdup(u->setup_error);
	}
	struct cgroup_usage cu;
	cgroup_usage(&u->cg, &cu);
	cu.pids_max_hits += u->guest_pids_hits;
	cu.oom_kills += u->guest_oom_kills;
	/* a memory limit the kernel enforced after our last look still names itself */
	/* a limit the kernel enforced after our last look (or that the job got past by itself: a
	 * child OOM-killed, a fork refused, a write refused with ENOSPC) still names itself */
	char v[32];
	if (!u->stopping && l->memory && cu.oom_kills) {
		char *text = memory_cause(l, cu.oom_kills, u->s, v, sizeof v);
		late_cause(u, "memory", v, text);
	}
	if (!u->stopping && l->pids && cu.pids_max_hits) {
		snprintf(v, sizeof v, "%llu", (unsigned long long)l->pids);
		late_cause(u, "pids", v, pids_cause(l, cu.pids_max_hits));
	}
	if (!u->stopping && l->scratch && u->have_scratch && u->scratch_free < 65536) {
		format_size(v, sizeof v, l->scratch);
		late_cause(u, "scratch", v,
			   xasprintf("scratch limit %s reached (writes to /tmp, /dev/shm, $HOME and the root failed with ENOSPC)", v));
	}
	if (u->stopping && !u->setup_error) {
		char sig[16];
		r->status = u->cause_status;
		if (!u->stop_signal && u->have_exit && r->status == RUN_LIMIT && WIFEXITED(u->job_status)) {
			r->cause_message = xasprintf("%s; the job exited with %d", u->cause_text, WEXITSTATUS(u->job_status));
		} else if (!u->stop_signal) {
			r->cause_message = xstrdup(u->cause_text);
		} else if (u->killed && u->killed_early) {
			r->cause_message = xasprintf("%s; sent %s, then SIGKILL when interrupted again", u->cause_text,
						     signal_name(u->stop_signal, sig, sizeof sig));
		} else if (u->killed) {
			char g[32];
			format_duration_ms(g, sizeof g, l->grace_ms);
			r->cause_message = xasprintf("%s; sent %s, then SIGKILL after %s", u->cause_text,
						     signal_name(u->stop_signal, sig, sizeof sig), g);
		} else {
			r->cause_message = xasprintf("%s; sent %s", u->cause_text, signal_name(u->stop_signal, sig, sizeof sig));
		}
		if (!strcmp(u->cause_limit, "time") || !strcmp(u->cause_limit, "cpu-time"))
			r->exit_code = 124;
		else if (r->status == RUN_INTERRUPTED)
			r->exit_code = 128 + u->stop_signal;
		else if (r->exit_code == 0)
			r->exit_code = EXIT_LIMIT; /* a run a limit stopped never passes */
		r->cause_limit = xstrdup(u->cause_limit);
		r->cause_value = u->cause_value ? xstrdup(u->cause_value) : NULL;
	}
	r->have_cpu = cu.have_cpu;
	r->cpu_user_s = cu.cpu_user_s;
	r->cpu_sys_s = cu.cpu_sys_s;
	r->have_memory = cu.have_memory;
	r->peak_memory = cu.peak_memory;
	r->have_pids = cu.have_pids;
	r->pids_peak = cu.pids_peak;
	if (!cu.have_pids && u->pids_sampled) {
		/* no pids.peak (cgroup v1): the highest count seen by the limit watch */
		r->have_pids = true;
		r->pids_peak = u->pids_sampled;
	}
	if (u->drv->reports_pids_peak) {
		/* the host's cgroup counts qemu's threads: the job's processes are the guest's count */
		r->have_pids = u->guest_pids_peak > 0;
		r->pids_peak = u->guest_pids_peak;
	}
	r->have_output = true;
	r->output_bytes = u->output;
}

bool sup_end_known(struct sup *u, int *exit_code)
{
	if (!u->have_exit || u->stopping || u->setup_error || !WIFEXITED(u->job_status))
		return false;
	/* as build_result's late causes: a limit the kernel enforced names the end */
	const struct limits *l = &u->s->limits;
	uint64_t oom_kills, pids_max_hits;
	cgroup_limit_hits(&u->cg, l->memory, l->pids, &oom_kills, &pids_max_hits);
	if (oom_kills || pids_max_hits || (l->scratch && u->have_scratch && u->scratch_free < 65536))
		return false;
	*exit_code = WEXITSTATUS(u->job_status);
	return true;
}

/* "output_held_outside" in the record, and one line: the streams a process outside the cell
 * still held open when the cell was gone; what was written to them later is dropped. */
static void held_record(struct sup *u, json_t **extra, bool quiet)
{
	if (!u->held)
		return;
	if (!*extra)
		*extra = json_object();
	json_object_set(*extra, "output_held_outside", u->held);
	if (quiet)
		return;
	uint64_t bytes = 0;
	_cleanup_free_ char *names = NULL;
	size_t i;
	json_t *h;
	json_array_foreach(u->held, i, h) {
		const char *name = json_string_value(json_object_get(h, "stream"));
		char *more = xasprintf("%s%s%s", names ? names : "", names ? ", " : "", name);
		free(names);
		names = more;
		bytes += (uint64_t)json_integer_value(json_object_get(h, "bytes_read"));
	}
	warn_line("%s: a process outside the cell held the job's output open (%s); %llu bytes read, the rest dropped",
		u->s->id, names, (unsigned long long)bytes);
}

/* CPU time and peak RSS from the kernel's accounting of init and what it reaped, where no
 * cgroup tells us. */
static void rusage_fallback(struct run_result *r, const struct rusage *ru)
{
	if (!r->have_cpu) {
		r->have_cpu = true;
		r->cpu_user_s = (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6;
		r->cpu_sys_s = (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
	}
	if (!r->have_memory) {
		r->have_memory = true;
		r->peak_memory = (uint64_t)ru->ru_maxrss * 1024;
	}
}

static uint64_t scratch_bytes(const struct cell_spec *s)
{
	static const char *const parts[] = { RUN_TMP_DIR, RUN_VARTMP_DIR, RUN_SHM_DIR, RUN_HOME_DIR, RUN_UPPER_DIR };
	uint64_t total = 0;
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		int fd = openat(s->rundir_fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			total += tree_bytes_fd(fd);
	}
	return total;
}

static void sup_close(struct sup *u)
{
	restore_tty(u);
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
	sink_close(&u->sink[0]);
	sink_close(&u->sink[1]);
	closep(&u->pty);
	u->drv->close(&u->cell);
	closep(&u->console_sock);
	refused_free(&u->refused);
	json_decref(u->held);
	u->held = NULL;
	free(u->setup_error);
	free(u->cause_limit);
	free(u->cause_value);
	free(u->cause_text);
	free(u->in_buf);
	u->in_buf = NULL;
}

static void emit_result(const struct supervise_opts *o, const char *json)
{
	if (o->result_fd >= 0)
		write_all(o->result_fd, json, strlen(json));
	if (o->result_file) {
		int r = write_file_atomic(o->result_file, json, strlen(json), 0644);
		if (r < 0)
			warn_line("cannot write --result %s: %s", o->result_file, strerror(-r));
	}
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

/* The supervisor's ends of what the cell gets: the job's streams (the caller's, pipes, or a
 * terminal made in the cell), the executor's /dev/null stdin, the write watch's socket. */
struct sup_ends {
	int out_w, err_w, devnull, console, watch;
};

static void sup_ends_close(struct sup_ends *e)
{
	closep(&e->out_w);
	closep(&e->err_w);
	closep(&e->devnull);
	closep(&e->console);
	closep(&e->watch);
}

static int output_pipe(int *r, int *w, struct error *err)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return error_set(err, errno, "cannot create the output pipes");
	*r = p[0];
	*w = p[1];
	fcntl(*r, F_SETFL, O_NONBLOCK);
	return 0;
}

static int sup_streams(struct sup *u, struct cell_io *io, struct sup_ends *e, struct error *err)
{
	const struct cell_spec *s = u->s;
	if (io->control >= 0) {
		/* a job: its steps get their own streams from the executor; nothing reads stdin */
		e->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (e->devnull < 0)
			return error_set(err, errno, "cannot open /dev/null");
		io->in = e->devnull;
	}
	if (s->tty && io->control < 0) {
		/* (a VM's terminal is its guest's console: vm_start makes its port) */
		int cs[2];
		bool console = u->drv->tty_over_console;
		if (console && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, cs) < 0)
			return error_set(err, errno, "cannot create the console socket");
		if (console)
			u->console_sock = cs[0], io->console = e->console = cs[1];
		/* only the streams that are the terminal go through the job's: a stderr the caller
		 * redirected (2>err.txt) gets a pipe of its own, relayed to where it points */
		io->err = -1;
		if (!isatty(STDERR_FILENO) && !s->tty_stderr) {
			if (output_pipe(&u->err_r, &e->err_w, err) < 0)
				return -EIO;
			io->err = e->err_w;
		}
	} else {
		if (output_pipe(&u->out_r, &e->out_w, err) < 0 || output_pipe(&u->err_r, &e->err_w, err) < 0)
			return -EIO;
		io->out = e->out_w;
		io->err = e->err_w;
	}
	/* the write watch: the job sends its seccomp listener over this socket */
	io->watch = -1;
	if (u->drv->reports_refused_writes && !s->policy.no_refused_writes) {
		/* until the guest reports them (refused_add_guest) */
		u->refused.off = xstrdup("the VM's guest reported no refused writes (its kernel has no audit?)");
		u->refused.by_cell = true;
	} else if (!s->policy.no_refused_writes) {
		int w[2];
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, w) < 0)
			return error_set(err, errno, "cannot create the write watch's socket");
		io->watch = e->watch = w[1];
		u->refused.sock = w[0];
	}
	return 0;
}

/* warren failed before the job ran: nothing half-made stays. */
static int sup_fail(struct sup *u, bool made_rundir, struct error *err)
{
	struct cell_spec *s = u->s;
	if (u->cell.pid > 0 && !u->init_gone) {
		kill_cell(u, true);  /* (no loop here to watch a backstop) */
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
	int cgr = cgroup_create(&u->cg, cg_name, &host_limits, s->rootless, spec_host_gid(s), err);
	free(cg_name);
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
			   .helper_tfd = -1, .out_r = -1, .err_r = -1, .pty = -1, .lock = -1, .console_sock = -1 };
	u->cell.pid = -1;
	u->cell.pidfd = u->cell.report_fd = u->cell.go_fd = u->cell.cgroup_fd = u->cell.take_fd = -1;
	u->cell.netns_sock = -1;
	cgroup_init(&u->cg);
	clock_gettime(CLOCK_REALTIME, &u->started);
	clock_gettime(CLOCK_MONOTONIC, &u->t0);
	refused_init(&u->refused);
	sinks_open(u);
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
			pty_input(u);
	}
	if (s->limits.time_ms && !u->drv->reports_job_start) {
		/* the cause line's time is on the limit's clock: from here, not from before the cell was made */
		u->job_start_s = sup_elapsed(u);
		arm(u->wall_tfd, s->limits.time_ms, 0);
	}
	if (s->limits.cpu_ms || s->limits.pids || s->limits.memory)
		arm(u->watch_tfd, WATCH_MS, WATCH_MS);
}

int sup_go(struct sup *u, struct error *err)
{
	struct cell_spec *s = u->s;
	if (s->warm) {
		/* the run starts now, not when its cell was made */
		clock_gettime(CLOCK_REALTIME, &u->started);
		clock_gettime(CLOCK_MONOTONIC, &u->t0);
	}
	/* from here on the job may run: what changes in the worktree after this is its doing */
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
		recv_console(u, u->console_sock);
		closep(&u->console_sock);
	} else if (u->pty >= 0) {
		tty_raw(u); /* a VM's */
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
	restore_tty(u);
	clock_gettime(CLOCK_REALTIME, &res.ended);
	/* the cell's life, not the time the caller then took to read its output */
	res.wall_s = (double)(u->gone_ns - ts_ns(&u->t0)) / 1e9;
	build_result(u, &res);
	rusage_fallback(&res, &ru);
	res.scratch_bytes = u->have_scratch ? u->scratch_used : scratch_bytes(s);
	json_t *extra = NULL;
	if (o->amend)
		o->amend(o->amend_ctx, &res, &extra);
	if (o->ended)
		o->ended(o->ended_ctx, &res, true);
	net_record(&u->net, &extra, o->quiet); /* "network" in the record; nothing for --net none */
	u->drv->record(&u->cell, &extra);      /* a VM's "vm": accel, kernel, memory */
	held_record(u, &extra, o->quiet);
	refused_stop(&u->refused);  /* every caller is gone with init */
	refused_record(&u->refused, s, &extra, o->quiet);
	/* what the job left in the worktree that git on the host would obey, moved aside */
	if (u->released_at.tv_sec)
		worktree_git_check(s->worktree_fd, s->id, s->rundir, &u->released_at, &extra, o->quiet);

	timings_record(u, &extra);
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
	sinks_flush_final(u);
	if (json)
		emit_result(o, json);
	free(json);
	if (res.error)
		warn_line("%s", res.error);
	else if (res.cause_message && !o->quiet)
		warn_line("%s stopped: %s", s->id, res.cause_message);
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
