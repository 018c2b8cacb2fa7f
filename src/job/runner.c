/* SPDX-License-Identifier: Apache-2.0 */
/* runner.c - the supervisor's side of a job: it asks the cell's executor to start services and
 * steps, streams each task's output to its log (log/<n>-<name>.log, with a .times side file)
 * and to the view within the job's output limit, times each step against its limit, probes
 * services for readiness, picks the steps to run (if:, continue-on-error, a cancel that
 * still runs the always() steps), and adds the steps and services to the run's record. */
#include "job/runner.h"

#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cell/executor.h"
#include "job/display.h"
#include "job/logname.h"
#include "job/session.h"
#include "job/summary.h"
#include "job/tasklog.h"
#include "run/record.h"
#include "supervise/supervise.h"
#include "util/fs.h"
#include "util/units.h"
#include "util/strv.h"

enum { EV_CTL = EV_APP + 1, EV_TICK, EV_STEP_TIMER, EV_STEP_GRACE, EV_TASK = EV_APP + 16 };
enum task_kind { T_STEP, T_SERVICE, T_PROBE };
enum step_state { S_WAITING, S_RUNNING, S_OK, S_FAILED, S_LIMIT, S_SKIPPED, S_INTERRUPTED };
enum svc_state { V_WAITING, V_STARTING, V_READY, V_FAILED, V_EXITED, V_STOPPED };
enum phase { P_SERVICES, P_STEPS, P_STOPPING, P_DONE };

static const char *const STEP_STATE[] = { "waiting", "running", "ok", "failed", "limit", "skipped", "interrupted" };
static const char *const SVC_STATE[] = { "waiting", "starting", "ready", "failed", "exited", "stopped" };

struct task {
	enum task_kind kind;
	size_t index;
	uint32_t id;
	pid_t pid;
	int out_r;          /* output pipe, -1 when closed */
	struct task_log log; /* log/<n>-<name>.log, its .times (within the job's output limit) */
	uint64_t bytes;     /* read from its pipe */
	bool exited;
	int status;
};

struct step_rec {
	enum step_state state;
	int exit_code, signal;
	char *cause;
	struct timespec started;
	double t0, duration;
	struct task *task;
	bool term_sent, kill_sent;
	bool cancel_sent;           /* a cancel stopped it */
	double limit_at;            /* when the time limit fired, from the step's start */
	bool have_exit;             /* its end was reported (not when the cell was killed) */
};

struct svc_rec {
	enum svc_state state;
	int status;
	bool have_status;
	double t0, last_probe;
	struct timespec started;
	struct task *task, *probe;
	bool probing;
};

struct runner {
	const struct job *job;
	struct cell_spec *s;
	struct sup u;
	struct display d;
	int ctl, tick_tfd, step_tfd, grace_tfd;
	enum phase phase;
	size_t cur;                 /* current service / step */
	struct task **tasks;
	size_t n_tasks;
	uint32_t next_id;
	struct step_rec *steps;
	struct svc_rec *svcs;
	bool failed;                /* a step failed: later steps only if failure() or always() */
	struct cancel {             /* warren kill or a signal to warren: only always() steps run */
		bool on;
		char *limit, *value, *text;
		int sig;
	} cancel;
	char *job_cause;            /* a service that failed the job */
	char *job_cause_limit;
	int fail_code;
	double stop_t0;
	int logdir_fd;     /* <rundir>/log, opened beneath the run directory's fd */
	uint64_t progress_sig;      /* the states progress.json last showed */
	uint64_t progress_sess;     /* and the session's changes (its execs) */
	bool progress_due;          /* the first tick (100 ms) has come: progress.json is kept */
	bool progress_tick;         /* a tick came since progress.json was last looked at */
	int64_t progress_next_ns;   /* a session's execs are not written again before (mono_ns) */
	bool progress_made;
	char **direct;              /* a warm cell's plain command: its only step's argv, started by
	                               init as the job itself (no executor, no shell) */
	void (*ended)(void *ctx, const struct run_result *res, bool gone); /* job_run_opts' */
	void *ended_ctx;
	bool end_told;              /* a plain command's end was looked at (direct_end) */
	bool steps_paused;          /* the caller has yet to take what was shown: the steps' output is
	                               out of the loop meanwhile (display_settle) */
	bool draining;              /* a step's or the cell's end: its output is read all the same,
	                               queued behind what is shown (bounded by its pipe) */
	int direct_out;             /* its output pipe's read end, sent before the take, or -1 */
	bool plain;                 /* a plain command made a job (serve's): no summary line */
	struct session *sess;       /* a session's (session: in the job), or NULL */
	bool sess_tried;            /* its socket was opened (or could not be) */
};

static double now_s(struct runner *r) { return sup_elapsed(&r->u); }

static void arm_ms(int tfd, uint64_t ms)
{
	struct itimerspec it = { .it_value = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000 } };
	if (!ms)
		it.it_value.tv_nsec = 1;
	timerfd_settime(tfd, 0, &it, NULL);
}

static void disarm(int tfd)
{
	struct itimerspec it = { 0 };
	timerfd_settime(tfd, 0, &it, NULL);
}

/* ---- the environment and command of a task ---- */

char **job_task_env(const struct cell_spec *s, char **extra)
{
	size_t n = 0, m = 0;
	while (s->env[n])
		n++;
	while (extra && extra[m])
		m++;
	char **env = xcalloc(n + m + 2, sizeof *env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *e = s->env[i];
		size_t kl = strcspn(e, "=");
		bool overridden = !strncmp(e, CELL_TMPDIR_ENV "=", sizeof CELL_TMPDIR_ENV);
		for (size_t j = 0; j < m && !overridden; j++)
			overridden = !strncmp(extra[j], e, kl + 1);
		if (!overridden)
			env[k++] = xstrdup(e);
	}
	for (size_t j = 0; j < m; j++)
		if (strncmp(extra[j], CELL_TMPDIR_ENV "=", sizeof CELL_TMPDIR_ENV))
			env[k++] = xstrdup(extra[j]);
	env[k++] = xstrdup(CELL_TMPDIR_ENV "=" CELL_TMPDIR_VALUE); /* last, always */
	env[k] = NULL;
	return env;
}

static char **shell_argv(const char *shell, const char *script)
{
	_cleanup_free_ char *copy = xstrdup(shell && *shell ? shell : "sh -e");
	char **argv = xcalloc(strlen(copy) + 3, sizeof *argv);
	size_t n = 0;
	char *save = NULL;
	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		argv[n++] = xstrdup(w);
	argv[n++] = xstrdup("-c");
	argv[n++] = xstrdup(script ? script : "");
	return argv;
}

/* ---- tasks ---- */

/* The EXEC_START of task id on the control socket: its command (the job's shell running
 * script, or a plain command's argv), env, working directory, and out_w as its stdout and
 * stderr. sendmsg's result. */
static ssize_t send_start(struct runner *r, uint32_t id, bool step, const char *shell, const char *script,
			  char **extra_env, const char *workdir, int out_w)
{
	char **argv = r->direct && step ? strv_copy(r->direct) : shell_argv(shell, script);
	char **env = job_task_env(r->s, extra_env);
	/* a step's working-directory is relative to the worktree (the cell's working directory
	 * with --work none); without one it runs where the job does */
	const char *base = r->s->worktree ? r->s->worktree : spec_cwd(r->s);
	_cleanup_free_ char *cwd = !workdir ? xstrdup(spec_cwd(r->s))
				   : workdir[0] == '/' ? xstrdup(workdir) : xasprintf("%s/%s", base, workdir);
	int fds[2] = { out_w, out_w };
	ssize_t w = exec_start_send(r->ctl, id, cwd, argv, env, fds, 2, -1, 0);
	int e = errno;
	strv_free(argv);
	strv_free(env);
	errno = e;
	return w;
}

/* A plain command's EXEC_START, sent before the take so that the cell's init finds it there
 * (job_run): its output pipe's read end is the step's when it starts (start_task). */
static void send_direct(struct runner *r)
{
	const struct job_step *js = &r->job->steps[0];
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		r->direct = NULL;  /* the step starts on the job path */
		return;
	}
	if (send_start(r, r->next_id + 1, true, js->shell ? js->shell : r->job->shell, js->run, js->env, js->workdir, p[1]) < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		errno = e;
		r->direct = NULL;
		return;
	}
	close(p[1]);
	r->direct_out = p[0];
}

static struct task *start_task(struct runner *r, enum task_kind kind, size_t index, const char *log_base,
			       const char *shell, const char *script, char **extra_env, const char *workdir)
{
	int p[2] = { r->direct_out, -1 };
	if (kind == T_STEP && p[0] >= 0)
		r->direct_out = -1;  /* sent already (send_direct) */
	else if (pipe2(p, O_CLOEXEC) < 0)
		return NULL;
	struct task *t = xcalloc(1, sizeof *t);
	t->kind = kind;
	t->index = index;
	t->id = ++r->next_id;
	t->out_r = p[0];
	task_log_open(&t->log, r->logdir_fd, log_base);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	ssize_t w = p[1] < 0 ? 0 : send_start(r, t->id, kind == T_STEP, shell, script, extra_env, workdir, p[1]);
	closep(&p[1]);
	if (w < 0) {
		close(p[0]);
		task_log_close(&t->log);
		free(t);
		return NULL;
	}
	r->tasks = xrealloc(r->tasks, (r->n_tasks + 1) * sizeof *r->tasks);
	r->tasks[r->n_tasks] = t;
	if (kind != T_STEP || !r->steps_paused)  /* (else display_settle adds it) */
		sup_watch_fd(&r->u, t->out_r, EV_TASK + (uint32_t)r->n_tasks);
	r->n_tasks++;
	return t;
}

static void signal_task(struct runner *r, struct task *t, int sig)
{
	if (!t || t->exited)
		return;
	/* the executor may have been stopped (a step cannot signal it with Landlock's signal
	 * scope, but without it could): wake it from outside first */
	sup_signal_job(&r->u, SIGCONT);
	struct exec_hdr h = { .type = EXEC_SIGNAL, .task = t->id, .a = sig };
	ssize_t w = send(r->ctl, &h, sizeof h, MSG_NOSIGNAL);
	(void)w;
}

static const char *task_name(struct runner *r, struct task *t)
{
	return t->kind == T_STEP ? r->job->steps[t->index].name : r->job->services[t->index].name;
}

/* Take what the task wrote: what its pipe holds now and no more (a writer as fast as this
 * loop must not keep it from its other work); close the pipe at its end. Every byte counts
 * against the job's output limit, and only what passes it reaches the log and the view. */
static void task_output(struct runner *r, struct task *t)
{
	if (t->kind == T_STEP && r->steps_paused && !r->draining)
		return;  /* read once the caller has taken what was shown (display_settle) */
	char buf[65536];
	for (size_t queued = fd_queued(t->out_r), got = 0;;) {
		ssize_t n = read(t->out_r, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			task_log_flush(&t->log, now_s(r));
			sup_unwatch_close(&r->u, &t->out_r);
			return;
		}
		t->bytes += (uint64_t)n;
		size_t pass = sup_output_pass(&r->u, (size_t)n);
		task_log_write(&t->log, &r->u, buf, pass, (size_t)n, now_s(r));
		if (pass && t->kind == T_STEP)
			display_output(&r->d, task_name(r, t), buf, pass);
		got += (size_t)n;
		if (got >= queued)
			return;
	}
}

/* The cell is gone: what each task's pipe still holds is taken, and a pipe whose write end a
 * process outside the cell holds is named in the record; nothing waits for its end. */
static void tasks_drain(struct runner *r)
{
	/* the cell is gone: what its tasks wrote is read all the same, queued behind what is shown
	 * (written once the record is: sup_finish) */
	r->draining = true;
	for (size_t i = 0; i < r->n_tasks; i++) {
		struct task *t = r->tasks[i];
		if (t->out_r < 0)
			continue;
		bool held = fd_writer_open(t->out_r);
		task_output(r, t);
		if (held) {
			const char *kind = t->kind == T_STEP ? "step" : t->kind == T_SERVICE ? "service" : "ready check of";
			_cleanup_free_ char *stream = xasprintf("%s %s", kind, task_name(r, t));
			sup_output_held(&r->u, stream, t->bytes);
		}
		task_log_flush(&t->log, now_s(r));
		sup_unwatch_close(&r->u, &t->out_r);
	}
}

/* ---- steps ---- */

static void step_finish(struct runner *r, size_t i, enum step_state st, char *cause)
{
	struct step_rec *sr = &r->steps[i];
	sr->state = st;
	sr->duration = now_s(r) - sr->t0;
	free(sr->cause);
	sr->cause = cause;
	disarm(r->step_tfd);
	disarm(r->grace_tfd);
	enum step_mark m = st == S_OK ? MARK_OK : st == S_SKIPPED ? MARK_SKIPPED
					 : st == S_INTERRUPTED ? MARK_STOPPED : MARK_FAILED;
	const char *name = r->job->steps[i].name;
	if (st == S_FAILED && !cause) {
		_cleanup_free_ char *c = sr->signal ? xasprintf("killed by SIG%s after %.2fs", sigabbrev_np(sr->signal), sr->duration)
						   : xasprintf("exited with status %d after %.2fs", sr->exit_code, sr->duration);
		display_end(&r->d, m, name, sr->duration, c);
	} else {
		display_end(&r->d, m, name, sr->duration, cause);
	}
	bool tolerated = r->job->steps[i].continue_on_error && (st == S_FAILED || st == S_LIMIT);
	if (st != S_OK && st != S_SKIPPED && !tolerated && !r->failed) {
		r->failed = true;
		r->fail_code = st == S_LIMIT ? 124 : sr->signal ? 128 + sr->signal : sr->exit_code;
	}
}

static void step_start(struct runner *r, size_t i)
{
	const struct job_step *js = &r->job->steps[i];
	struct step_rec *sr = &r->steps[i];
	_cleanup_free_ char *enc = logname_encode(js->name);
	_cleanup_free_ char *base = xasprintf("%zu-%s", i + 1, enc);
	sr->t0 = now_s(r);
	clock_gettime(CLOCK_REALTIME, &sr->started);
	sr->state = S_RUNNING;
	display_start(&r->d, "", js->name, js->timeout_ms);
	sr->task = start_task(r, T_STEP, i, base, js->shell ? js->shell : r->job->shell, js->run, js->env, js->workdir);
	if (!sr->task) {
		sr->exit_code = 125;  /* warren's failure: the run does not end 0 for a step that never ran */
		step_finish(r, i, S_FAILED, xasprintf("warren could not start it: %s", strerror(errno)));
		return;
	}
	if (js->timeout_ms)
		arm_ms(r->step_tfd, js->timeout_ms);
}

static void step_time_limit(struct runner *r)
{
	size_t i = r->cur;
	struct step_rec *sr = &r->steps[i];
	if (r->phase != P_STEPS || sr->state != S_RUNNING || sr->term_sent)
		return;
	sr->term_sent = true;
	sr->limit_at = now_s(r) - sr->t0;
	signal_task(r, sr->task, SIGTERM);
	arm_ms(r->grace_tfd, r->s->limits.grace_ms);
}

/* The grace after a step's SIGTERM is over: SIGKILL its session through the executor. If the
 * step is still running a second later, the executor did not act (a step kept it stopped):
 * the whole cell is stopped, so that the step's clock holds whatever it did. */
static void step_grace_over(struct runner *r)
{
	struct step_rec *sr = &r->steps[r->cur];
	if (sr->state != S_RUNNING)
		return;
	if (!sr->kill_sent) {
		sr->kill_sent = true;
		signal_task(r, sr->task, SIGKILL);
		arm_ms(r->grace_tfd, 1000);
		return;
	}
	if (sr->cancel_sent) {
		sup_stop(&r->u, RUN_INTERRUPTED, r->cancel.limit, r->cancel.value, SIGKILL,
			 xasprintf("%s; step %s did not end (a step kept its executor stopped), so the cell was stopped",
				   r->cancel.text, r->job->steps[r->cur].name));
		return;
	}
	char v[32];
	format_duration_ms(v, sizeof v, r->job->steps[r->cur].timeout_ms);
	sup_stop(&r->u, RUN_LIMIT, "step-time", v, SIGKILL,
		 xasprintf("step %s: time limit %s reached; its executor did not end it (a step kept it stopped), so the cell was stopped",
			   r->job->steps[r->cur].name, v));
}

/* The cause of a step that the whole cell's stop ended. */
static enum step_state stopped_state(struct runner *r)
{
	enum run_status st;
	sup_stopping(&r->u, NULL, &st);
	return st == RUN_INTERRUPTED ? S_INTERRUPTED : S_LIMIT;
}

static void step_exited(struct runner *r, size_t i, int status)
{
	struct step_rec *sr = &r->steps[i];
	const struct job_step *js = &r->job->steps[i];
	sr->have_exit = true;
	if (WIFEXITED(status))
		sr->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status)) {
		sr->signal = WTERMSIG(status);
		sr->exit_code = 128 + sr->signal;
	}
	if (sr->cancel_sent && !sr->term_sent) {
		step_finish(r, i, S_INTERRUPTED, xstrdup(r->cancel.text));
		return;
	}
	const char *cause;
	if (sup_stopping(&r->u, &cause, NULL) && !sr->term_sent) {
		step_finish(r, i, stopped_state(r), xstrdup(cause ? cause : "stopped"));
		return;
	}
	if (sr->term_sent) {
		char v[32], at[32], g[32];
		format_duration_ms(v, sizeof v, js->timeout_ms);
		format_seconds(at, sizeof at, sr->limit_at);
		format_duration_ms(g, sizeof g, r->s->limits.grace_ms);
		step_finish(r, i, S_LIMIT,
			    sr->kill_sent ? xasprintf("time limit %s reached at %s; sent SIGTERM, then SIGKILL after %s", v, at, g)
					  : xasprintf("time limit %s reached at %s; sent SIGTERM", v, at));
		sr->exit_code = 124;
	} else {
		step_finish(r, i, status == 0 ? S_OK : S_FAILED, NULL);
	}
}

/* warren kill, or SIGINT/SIGTERM/SIGHUP to warren, while the steps run: the running step is
 * stopped (the signal, SIGKILL after the grace) and only the always() steps run, each within
 * its own time limit. Before the steps, after them, or a second time: the cell is stopped. */
static bool runner_interrupt(void *ctx, const char *limit, const char *value, int sig, char *text)
{
	struct runner *r = ctx;
	/* a plain command is the cell's job: stopping the cell stops it */
	if (r->cancel.on || r->phase != P_STEPS || r->direct || (r->sess && r->cur >= r->job->n_steps))
		return false;  /* (a session past its steps: its execs are stopped with the cell) */
	r->cancel = (struct cancel){ .on = true, .limit = xstrdup(limit), .value = value ? xstrdup(value) : NULL,
				     .text = text, .sig = sig };
	display_line(&r->d, "⊘ %s: the always() steps still run; interrupt again to stop them", text);
	struct step_rec *sr = r->cur < r->job->n_steps ? &r->steps[r->cur] : NULL;
	if (sr && sr->state == S_RUNNING && !sr->term_sent) {
		sr->cancel_sent = true;
		disarm(r->step_tfd);
		signal_task(r, sr->task, sig);
		arm_ms(r->grace_tfd, r->s->limits.grace_ms);
	}
	return true;
}

/* ---- services ---- */

static void services_fail(struct runner *r, size_t i, char *cause)
{
	r->svcs[i].state = V_FAILED;
	display_line(&r->d, "✖ service %s: %s", r->job->services[i].name, cause);
	if (!r->job_cause) {
		r->job_cause = xasprintf("service %s: %s", r->job->services[i].name, cause);
		r->job_cause_limit = xstrdup("service");
	}
	free(cause);
	r->failed = true;
	r->fail_code = 1;
	/* nothing of the job runs without its services */
	for (size_t k = 0; k < r->job->n_steps; k++) {
		r->steps[k].state = S_SKIPPED;
		display_end(&r->d, MARK_SKIPPED, r->job->steps[k].name, 0, NULL);
	}
	r->phase = P_STOPPING;
}

static void service_start(struct runner *r, size_t i)
{
	const struct job_service *js = &r->job->services[i];
	struct svc_rec *v = &r->svcs[i];
	_cleanup_free_ char *enc = logname_encode(js->name);
	_cleanup_free_ char *base = xasprintf("service-%s", enc);
	v->t0 = now_s(r);
	clock_gettime(CLOCK_REALTIME, &v->started);
	v->state = V_STARTING;
	display_start(&r->d, "service", js->name, js->ready != READY_NONE ? js->ready_timeout_ms : 0);
	v->task = start_task(r, T_SERVICE, i, base, r->job->shell ? r->job->shell : "sh", js->run, js->env, NULL);
	if (!v->task)
		services_fail(r, i, xasprintf("warren could not start it: %s", strerror(errno)));
	else if (js->ready == READY_NONE) {
		v->state = V_READY;
		display_line(&r->d, "✔ service %s started", js->name);
	}
}

static void service_ready(struct runner *r, size_t i)
{
	struct svc_rec *v = &r->svcs[i];
	v->state = V_READY;
	char d[32];
	display_line(&r->d, "✔ service %s ready after %s", r->job->services[i].name, format_seconds(d, sizeof d, now_s(r) - v->t0));
}

static void probe_services(struct runner *r)
{
	if (r->phase != P_SERVICES || r->cur >= r->job->n_services)
		return;
	size_t i = r->cur;
	const struct job_service *js = &r->job->services[i];
	struct svc_rec *v = &r->svcs[i];
	if (v->state != V_STARTING)
		return;
	double t = now_s(r);
	if ((t - v->t0) * 1000 > (double)js->ready_timeout_ms) {
		char lim[32];
		format_duration_ms(lim, sizeof lim, js->ready_timeout_ms);
		services_fail(r, i, js->ready == READY_TCP
					    ? xasprintf("not ready after %s (nothing accepted connections on port %u in the cell)", lim, js->tcp_port)
					    : xasprintf("not ready after %s (its ready check never succeeded)", lim));
		return;
	}
	if (t - v->last_probe < (js->ready == READY_TCP ? 0.1 : 0.25) || v->probing)
		return;
	v->last_probe = t;
	v->probing = true;
	if (js->ready == READY_TCP) {
		struct exec_hdr h = { .type = EXEC_PROBE_TCP, .task = (uint32_t)(0x80000000u | i), .a = (int32_t)js->tcp_port };
		if (send(r->ctl, &h, sizeof h, MSG_NOSIGNAL) < 0)
			v->probing = false;
	} else {
		_cleanup_free_ char *enc = logname_encode(js->name);
		_cleanup_free_ char *base = xasprintf("service-%s.ready", enc);
		v->probe = start_task(r, T_PROBE, i, base, r->job->shell ? r->job->shell : "sh", js->ready_run, js->env, NULL);
		if (!v->probe)
			v->probing = false;
	}
}

static void service_exited(struct runner *r, size_t i, int status)
{
	struct svc_rec *v = &r->svcs[i];
	v->status = status;
	v->have_status = true;
	const char *name = r->job->services[i].name;
	_cleanup_free_ char *how = WIFSIGNALED(status) ? xasprintf("killed by SIG%s", sigabbrev_np(WTERMSIG(status)))
						       : xasprintf("exited with status %d", WEXITSTATUS(status));
	if (r->phase == P_STOPPING || r->phase == P_DONE) {
		if (v->state != V_FAILED)
			v->state = V_STOPPED;
		return;
	}
	if (v->state == V_STARTING) {
		services_fail(r, i, xasprintf("%s before it was ready", how));
		return;
	}
	v->state = V_EXITED;
	if (r->phase == P_STEPS && r->cur < r->job->n_steps)
		display_line(&r->d, "✖ service %s %s during step %s", name, how, r->job->steps[r->cur].name);
	else
		display_line(&r->d, "✖ service %s %s", name, how);
}

/* ---- messages from the executor ---- */

static struct task *find_task(struct runner *r, uint32_t id)
{
	for (size_t i = 0; i < r->n_tasks; i++)
		if (r->tasks[i]->id == id)
			return r->tasks[i];
	return NULL;
}

static void on_ctl(struct runner *r)
{
	struct exec_hdr h;
	for (;;) {
		ssize_t n = recv(r->ctl, &h, sizeof h, MSG_DONTWAIT);
		if (n != (ssize_t)sizeof h)
			return;
		if (h.type == EXEC_PROBED) {
			size_t i = h.task & 0x7fffffffu;
			if (i < r->job->n_services) {
				r->svcs[i].probing = false;
				if (h.a && r->svcs[i].state == V_STARTING && r->phase == P_SERVICES)
					service_ready(r, i);
			}
			continue;
		}
		struct task *t = find_task(r, h.task);
		if (!t) {
			if (r->sess)
				session_ctl(r->sess, &h);  /* one of its execs */
			continue;
		}
		if (h.type == EXEC_STARTED) {
			t->pid = h.a;
		} else if (h.type == EXEC_FAILED || h.type == EXEC_EXITED) {
			t->exited = true;
			t->status = h.type == EXEC_EXITED ? h.a : (125 << 8);
			/* the output of a task that ended is drained before its end is shown (waiting
			 * for a caller who has yet to take what was shown: the order stays) */
			if (t->out_r >= 0) {
				bool w = r->draining;
				r->draining = true;  /* (what its pipe holds, queued behind what is shown) */
				task_output(r, t);
				r->draining = w;
			}
			if (t->kind == T_STEP && r->steps[t->index].state == S_RUNNING)
				step_exited(r, t->index, t->status);
			else if (t->kind == T_SERVICE)
				service_exited(r, t->index, t->status);
			else if (t->kind == T_PROBE) {
				struct svc_rec *v = &r->svcs[t->index];
				v->probing = false;
				if (t->status == 0 && v->state == V_STARTING && r->phase == P_SERVICES)
					service_ready(r, t->index);
			}
		}
	}
}

/* ---- the job's course ---- */

static bool services_all_stopped(struct runner *r)
{
	for (size_t i = 0; i < r->job->n_services; i++)
		if (r->svcs[i].task && !r->svcs[i].task->exited)
			return false;
	return true;
}

/* The step that runs while the whole cell is stopped (its end not yet reported), or NULL. */
static struct task *step_still_running(struct runner *r)
{
	if (r->cur >= r->job->n_steps || r->steps[r->cur].state != S_RUNNING)
		return NULL;
	struct task *t = r->steps[r->cur].task;
	return t && !t->exited ? t : NULL;
}

/* Does step js run now (if: as on GitHub Actions)? */
static bool step_due(const struct runner *r, const struct job_step *js)
{
	if (js->when == IF_ALWAYS)
		return true;
	if (r->cancel.on)
		return false;
	return js->when == (r->failed ? IF_FAILURE : IF_SUCCESS);
}

/* A session's steps ran: it listens for execs (opened once); true while it lives. */
static bool session_wait(struct runner *r)
{
	if (!r->sess_tried) {
		r->sess_tried = true;
		struct error e = { 0 };
		if (session_open(r->sess, &e) < 0) {
			r->job_cause = xstrdup(e.msg);
			r->job_cause_limit = xstrdup("session");
			r->failed = true;
			r->fail_code = 125;
			error_clear(&e);
			return false;
		}
	}
	return session_live(r->sess);
}

static void advance(struct runner *r)
{
	for (;;) {
		if (sup_stopping(&r->u, NULL, NULL) && r->phase < P_STOPPING) {
			/* the whole cell is being stopped (job timeout, interrupt, a cell limit): every
			 * process got the signal; the running step's end is recorded when it comes */
			for (size_t i = 0; i < r->job->n_steps; i++)
				if (r->steps[i].state == S_WAITING) {
					r->steps[i].state = S_SKIPPED;
					display_end(&r->d, MARK_SKIPPED, r->job->steps[i].name, 0, NULL);
				}
			r->phase = P_STOPPING;
		}
		if (r->phase < P_STOPPING && !sup_job_started(&r->u))
			return; /* a VM boots: its services' and steps' clocks start when it has */
		switch (r->phase) {
		case P_SERVICES:
			if (r->cur < r->job->n_services) {
				if (r->svcs[r->cur].state == V_WAITING)
					service_start(r, r->cur);
				if (r->phase == P_SERVICES && r->svcs[r->cur].state == V_READY) {
					r->cur++;
					continue;
				}
				return;
			}
			r->phase = P_STEPS;
			r->cur = 0;
			continue;
		case P_STEPS:
			while (r->cur < r->job->n_steps && r->steps[r->cur].state != S_WAITING &&
			       r->steps[r->cur].state != S_RUNNING)
				r->cur++;
			if (r->cur >= r->job->n_steps) {
				if (r->sess && !r->failed && !r->cancel.on && session_wait(r))
					return;  /* a session: its execs come, until its end */
				r->phase = P_STOPPING;
				continue;
			}
			if (r->steps[r->cur].state == S_RUNNING)
				return;
			if (!step_due(r, &r->job->steps[r->cur])) {
				r->steps[r->cur].state = S_SKIPPED;
				display_end(&r->d, MARK_SKIPPED, r->job->steps[r->cur].name, 0, NULL);
				continue;
			}
			step_start(r, r->cur);
			continue;
		case P_STOPPING:
			if (r->stop_t0 == 0) {
				r->stop_t0 = now_s(r);
				for (size_t i = 0; i < r->job->n_services; i++)
					signal_task(r, r->svcs[i].task, SIGTERM);
			}
			/* the running step (told by the cell's stop) has the grace to end, as the
			 * services have: its end is recorded, not cut by the executor's end */
			if (!services_all_stopped(r) || step_still_running(r)) {
				if ((now_s(r) - r->stop_t0) * 1000 < (double)r->s->limits.grace_ms)
					return;
				for (size_t i = 0; i < r->job->n_services; i++)
					signal_task(r, r->svcs[i].task, SIGKILL);
				signal_task(r, step_still_running(r), SIGKILL);
				if ((now_s(r) - r->stop_t0) * 1000 < (double)r->s->limits.grace_ms + 2000)
					return;
			}
			r->phase = P_DONE;
			continue;
		case P_DONE:
			/* closing the control socket ends the executor, and with it the cell */
			if (r->ctl >= 0) {
				shutdown(r->ctl, SHUT_WR);
			}
			return;
		}
	}
}

/* ---- the record ---- */

/* Did step i fail: its own failure (failed, or its limit), which fails the job unless it may
 * (continue-on-error: then it is tolerated)? */
static bool step_failed(const struct runner *r, size_t i)
{
	return r->steps[i].state == S_FAILED || r->steps[i].state == S_LIMIT;
}

static bool step_tolerated(const struct runner *r, size_t i)
{
	return step_failed(r, i) && r->job->steps[i].continue_on_error;
}

/* How step sr failed: its cause (a limit, warren's), or "exit N", "killed by SIGX". Heap. */
static char *step_failure(const struct step_rec *sr)
{
	return job_step_failure(sr->cause, sr->signal, sr->exit_code);
}

/* The step that failed the job, for the record's "failed_step" and the history: the first one
 * that failed and was not let fail; NULL when none did (a service's failure, an interrupt, a
 * job that passed). */
static json_t *failed_step_json(struct runner *r)
{
	for (size_t i = 0; i < r->job->n_steps; i++) {
		if (!step_failed(r, i) || step_tolerated(r, i))
			continue;
		struct step_rec *sr = &r->steps[i];
		_cleanup_free_ char *why = step_failure(sr);
		json_t *o = json_pack("{s:I,s:s,s:s,s:o,s:s}", "number", (json_int_t)(i + 1), "name", r->job->steps[i].name,
				      "status", STEP_STATE[sr->state], "exit_code", sr->have_exit ? json_integer(sr->exit_code) : json_null(),
				      "cause", why);
		return o;
	}
	return NULL;
}

/* The steps and services as the record shows them: {"steps": [...], "services": [...]};
 * progress: a session's last execs only (and "execs_left_out": how many earlier ones). */
static json_t *tasks_json(struct runner *r, bool progress)
{
	json_t *steps = json_array();
	for (size_t i = 0; i < r->job->n_steps; i++) {
		struct step_rec *sr = &r->steps[i];
		char st[64];
		json_t *o = json_pack("{s:s,s:s}", "name", r->job->steps[i].name, "status", STEP_STATE[sr->state]);
		bool ran = sr->state != S_SKIPPED && sr->state != S_WAITING;
		json_object_set_new(o, "exit_code", ran && sr->have_exit ? json_integer(sr->exit_code) : json_null());
		json_object_set_new(o, "cause", sr->cause ? json_string(sr->cause) : json_null());
		/* failed under continue-on-error: the job went on, and passes unless another fails */
		json_object_set_new(o, "tolerated", json_boolean(step_tolerated(r, i)));
		json_object_set_new(o, "started_at", ran ? json_string(format_rfc3339(st, sizeof st, &sr->started)) : json_null());
		json_object_set_new(o, "duration_s", ran && sr->state != S_RUNNING ? json_real(sr->duration) : json_null());
		json_object_set_new(o, "timeout_ms", r->job->steps[i].timeout_ms ? json_integer((json_int_t)r->job->steps[i].timeout_ms) : json_null());
		_cleanup_free_ char *enc = logname_encode(r->job->steps[i].name);
		_cleanup_free_ char *log = xasprintf("log/%zu-%s.log", i + 1, enc);
		json_object_set_new(o, "log", ran ? json_string(log) : json_null());
		json_array_append_new(steps, o);
	}
	size_t left_out = r->sess ? session_json(r->sess, steps, progress ? SESSION_PROGRESS_EXECS : 0) : 0;
	json_t *svcs = json_array();
	for (size_t i = 0; i < r->job->n_services; i++) {
		struct svc_rec *v = &r->svcs[i];
		json_t *o = json_pack("{s:s,s:s}", "name", r->job->services[i].name, "status", SVC_STATE[v->state]);
		json_object_set_new(o, "exit_code", v->have_status && WIFEXITED(v->status) ? json_integer(WEXITSTATUS(v->status)) : json_null());
		json_object_set_new(o, "signal", v->have_status && WIFSIGNALED(v->status) ? json_string(sigabbrev_np(WTERMSIG(v->status))) : json_null());
		char st[64];
		json_object_set_new(o, "started_at", v->started.tv_sec ? json_string(format_rfc3339(st, sizeof st, &v->started)) : json_null());
		const struct job_service *js = &r->job->services[i];
		json_object_set_new(o, "ready_timeout_ms", js->ready != READY_NONE ? json_integer((json_int_t)js->ready_timeout_ms) : json_null());
		json_array_append_new(svcs, o);
	}
	json_t *j = json_pack("{s:o,s:o}", "steps", steps, "services", svcs);
	if (left_out)
		json_object_set_new(j, "execs_left_out", json_integer((json_int_t)left_out));
	return j;
}

/* While the job runs, <rundir>/progress.json holds tasks_json(), rewritten when a step or a
 * service changes state: what the server's console shows of a live job (the clocks run from
 * each started_at; result.json replaces it at the end). From the first tick on (100 ms): a run
 * over before it (most of a warm pool's) makes and removes no file for it, which on ext4
 * without a journal slows every file made after it (README, the tenth round). */
static void progress_update(struct runner *r)
{
	if (!r->progress_due)
		return;
	uint64_t sig = 1469598103934665603ULL;  /* FNV-1a of the states */
	for (size_t i = 0; i < r->job->n_steps; i++)
		sig = (sig ^ (uint64_t)r->steps[i].state) * 1099511628211ULL;
	for (size_t i = 0; i < r->job->n_services; i++)
		sig = (sig ^ (uint64_t)(r->svcs[i].state + 16)) * 1099511628211ULL;
	/* a session's execs are shown at the next tick, not at each start and end: the whole
	 * file for each of an agent's hundreds of execs was most of an exec's cost (its JSON, and
	 * a new inode each time: bench/exec-client) */
	uint64_t sess = r->sess ? session_changes(r->sess) : 0;
	bool tick = r->progress_tick;
	r->progress_tick = false;
	/* nor, once the file is large (thousands of execs), more often than keeps its writing
	 * under a twentieth of a CPU */
	if (sig == r->progress_sig && (sess == r->progress_sess || !tick || mono_ns() < r->progress_next_ns))
		return;
	int64_t t0 = mono_ns();
	r->progress_sig = sig;
	r->progress_sess = sess;
	json_t *j = tasks_json(r, true);
	_cleanup_free_ char *txt = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (txt && write_file_atomic_at(r->s->rundir_fd, "progress.json", txt, strlen(txt), 0644) == 0)
		r->progress_made = true;
	int64_t t1 = mono_ns();
	r->progress_next_ns = t1 + 20 * (t1 - t0);
}

static void amend(void *ctx, struct run_result *res, json_t **extra)
{
	struct runner *r = ctx;
	*extra = tasks_json(r, false);
	json_object_set_new(*extra, "job", json_pack("{s:s,s:s}", "name", r->job->name, "file", r->job->path));
	json_t *failed = failed_step_json(r);
	json_object_set_new(*extra, "failed_step", failed ? json_incref(failed) : json_null());
	res->failed_step = failed;
	res->tolerated = 0;
	for (size_t i = 0; i < r->job->n_steps; i++)
		res->tolerated += step_tolerated(r, i);
	if (res->status == RUN_ERROR || res->cause_limit)
		return; /* warren's own failure, or the cell was stopped: that is the cause */
	if (r->cancel.on) {
		res->status = RUN_INTERRUPTED;
		res->exit_code = 128 + r->cancel.sig;
		res->signal = 0;
		res->cause_limit = xstrdup(r->cancel.limit);
		res->cause_value = r->cancel.value ? xstrdup(r->cancel.value) : NULL;
		res->cause_message = xasprintf("%s; sent SIG%s to the running step, then ran the always() steps", r->cancel.text,
					       sigabbrev_np(r->cancel.sig));
		return;
	}
	if (r->job_cause) {
		res->status = RUN_EXITED;
		res->exit_code = r->fail_code;
		res->signal = 0;
		res->cause_limit = xstrdup(r->job_cause_limit);
		res->cause_message = xstrdup(r->job_cause);
		return;
	}
	if (r->failed) {
		for (size_t i = 0; i < r->job->n_steps; i++) {
			struct step_rec *sr = &r->steps[i];
			if ((sr->state != S_FAILED && sr->state != S_LIMIT) || r->job->steps[i].continue_on_error)
				continue; /* the failing step names the job's end, not one that was let fail */
			res->exit_code = r->fail_code;
			res->signal = 0;
			res->status = sr->state == S_LIMIT ? RUN_LIMIT : RUN_EXITED;
			if (sr->state == S_LIMIT) {
				char v[32];
				res->cause_limit = xstrdup("step-time");
				res->cause_value = xstrdup(format_duration_ms(v, sizeof v, r->job->steps[i].timeout_ms));
				res->cause_message = xasprintf("step %s: %s", r->job->steps[i].name, sr->cause);
			}
			break;
		}
	} else {
		res->exit_code = 0;
		res->status = RUN_EXITED;
	}
}

/* The job's last line, on stderr (job/summary.h), after the cause line when the run has one:
 * that says why the cell was stopped, this what became of each step. */
static void summary(void *ctx, const struct run_result *res)
{
	struct runner *r = ctx;
	if (r->plain || !r->job->n_steps)
		return;  /* a command made a job, a session's execs: no steps of a job file to count */
	size_t n = r->job->n_steps;
	struct step_summary *ss = xcalloc(n, sizeof *ss);
	for (size_t i = 0; i < n; i++) {
		enum step_state st = r->steps[i].state;
		ss[i].name = r->job->steps[i].name;
		ss[i].end = step_tolerated(r, i) ? STEP_END_TOLERATED : step_failed(r, i) ? STEP_END_FAILED
			  : st == S_OK ? STEP_END_OK : st == S_SKIPPED ? STEP_END_SKIPPED
			  : st == S_INTERRUPTED ? STEP_END_INTERRUPTED : STEP_END_NOT_RUN;
		if (step_failed(r, i))
			ss[i].failure = step_failure(&r->steps[i]);
	}
	_cleanup_free_ char *line = job_summary(r->job->name, ss, n, res->wall_s);
	warn_line("%s", line);
	for (size_t i = 0; i < n; i++)
		free((char *)ss[i].failure);
	free(ss);
}

/* ---- the loop ---- */

/* A plain command's end is known when init reports its job's exit, before the cell is torn
 * down (its mounts' release costs ms) and the record written: the caller (a warm run's
 * server) is told then, when it is what the record will say (no cause, no late limit, the
 * output well within its limit, the step's exit code the run's). */
static void direct_end(struct runner *r)
{
	r->end_told = true;
	struct task *t = r->steps[0].task;
	if (!r->ended || !t || r->cancel.on)
		return;
	if (t->out_r >= 0)
		task_output(r, t);
	uint64_t lim = r->s->limits.output, left = t->out_r >= 0 ? fd_queued(t->out_r) : 0;
	int code;
	if ((lim && r->u.output + left + (1 << 20) > lim) || !sup_end_known(&r->u, &code))
		return;
	struct run_result res = { .status = RUN_EXITED, .exit_code = code };
	r->ended(r->ended_ctx, &res, false);
}

/* While the caller has yet to take what was shown (a pipe no one reads, ^S on a terminal), the
 * steps' output is not read (their pipes fill and they wait, as in any pipeline) and the
 * caller's descriptor is watched; the loop goes on, with every time limit and signal. */
static void display_settle(struct runner *r)
{
	bool blocked = display_blocked(&r->d);
	if (blocked == r->steps_paused)
		return;
	r->steps_paused = blocked;
	sup_sink_check(&r->u, r->d.out == STDERR_FILENO);
	/* out of the loop, not only unwatched: epoll reports a hangup even for a descriptor
	 * watched for nothing, and a step that closed its output would wake the loop without end */
	for (size_t i = 0; i < r->n_tasks; i++) {
		struct task *t = r->tasks[i];
		if (t->kind != T_STEP || t->out_r < 0)
			continue;
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = EV_TASK + (uint32_t)i };
		epoll_ctl(r->u.ep, blocked ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, t->out_r, blocked ? NULL : &ev);
	}
}

static int runner_loop(struct runner *r)
{
	struct epoll_event evs[16];
	advance(r);
	progress_update(r);
	while (sup_running(&r->u)) {
		int n = sup_wait(&r->u, evs, 16);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			uint64_t x;
			uint32_t tag = evs[i].data.u32;
			if (sup_dispatch(&r->u, &evs[i]))
				continue;
			/* the cell ended: while its helpers end, the guest's last words and output only */
			if (r->u.init_gone && tag != EV_CTL && tag < EV_TASK) {
				sup_unwatch(&r->u, tag == EV_TICK ? r->tick_tfd : tag == EV_STEP_TIMER ? r->step_tfd : r->grace_tfd);
				continue;
			}
			if (tag == EV_CTL) {
				on_ctl(r);
				if (evs[i].events & (EPOLLHUP | EPOLLERR))
					sup_unwatch(&r->u, r->ctl);
			} else if (tag == EV_TICK) {
				if (read(r->tick_tfd, &x, sizeof x) < 0)
					continue;
				r->progress_due = true;  /* (written below, after advance) */
				r->progress_tick = true;
				probe_services(r);
				if (r->sess)
					session_tick(r->sess);
				if (r->phase == P_STEPS && r->cur < r->job->n_steps && r->steps[r->cur].state == S_RUNNING)
					display_tick(&r->d, r->job->steps[r->cur].name, now_s(r) - r->steps[r->cur].t0,
						     r->job->steps[r->cur].timeout_ms);
			} else if (tag == EV_STEP_TIMER) {
				if (read(r->step_tfd, &x, sizeof x) >= 0)
					step_time_limit(r);
			} else if (tag == EV_STEP_GRACE) {
				if (read(r->grace_tfd, &x, sizeof x) >= 0 && r->cur < r->job->n_steps)
					step_grace_over(r);
			} else if (tag >= EV_SESSION && r->sess) {
				session_event(r->sess, tag, evs[i].events);
			} else if (tag >= EV_TASK && tag - EV_TASK < r->n_tasks) {
				task_output(r, r->tasks[tag - EV_TASK]);
			}
		}
		display_settle(r);
		if (r->direct && !r->end_told && r->u.have_exit)
			direct_end(r);
		if (r->u.init_gone)
			continue; /* nothing starts in a cell that ended */
		advance(r);
		progress_update(r);
	}
	return 0;
}

int job_run(const struct job *job, struct cell_spec *s, const struct job_run_opts *o, struct error *err)
{
	struct runner r = { .job = job, .s = s, .ctl = -1, .logdir_fd = -1, .tick_tfd = -1, .step_tfd = -1, .grace_tfd = -1,
			    .ended = o->ended, .ended_ctx = o->take_ctx, .direct_out = -1 };
	if (job && job->session && s->driver != CELL_DRIVER_CONTAINER)
		return error_set(err, EINVAL, "a session needs the container driver (the vm driver cannot yet take execs)");
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return error_set(err, errno, "cannot create the executor's socket");
	r.ctl = sp[0];
	/* a cold plain command: its EXEC_START waits on the socket before the cell is made, and
	 * the cell's job process takes it (exec_direct); one that cannot be sent (too large)
	 * starts on the job path, whose step says why */
	if (!o->take && o->direct && s->driver == CELL_DRIVER_CONTAINER && !s->tty) {
		r.direct = o->direct;
		send_direct(&r);
		s->direct = r.direct != NULL;
	}
	int rc = sup_prepare(&r.u, s, sp[1], err);
	close(sp[1]);
	if (rc == 0 && o->take) {
		/* a warm cell: made, its init waiting; its run comes now (or never) */
		job = r.job = o->take(o->take_ctx, s, &r.direct);
		if (!job) {
			sup_abandon(&r.u);
			rc = -ECANCELED;
		}
		if (r.direct)
			send_direct(&r);
		r.u.take_direct = r.direct != NULL;
	}
	r.plain = o->direct || r.direct;
	if (rc == 0)
		rc = sup_go(&r.u, err);
	if (rc < 0) {
		close(sp[0]);
		closep(&r.direct_out);
		return rc;
	}
	r.steps = xcalloc(job->n_steps + 1, sizeof *r.steps);
	r.svcs = xcalloc(job->n_services + 1, sizeof *r.svcs);
	int out = o->json ? STDERR_FILENO : STDOUT_FILENO;
	display_init(&r.d, out, isatty(out), o->quiet, o->prefix);
	r.d.sink = sup_sink(&r.u, out == STDERR_FILENO);
	mkdirat(s->rundir_fd, "log", 0755);
	sup_on_interrupt(&r.u, runner_interrupt, &r);
	r.logdir_fd = openat(s->rundir_fd, "log", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct session_host sh = { .u = &r.u, .s = s, .d = &r.d, .ctl = r.ctl, .logdir_fd = r.logdir_fd, .first_log = job->n_steps };
	r.sess = job->session ? session_new(job, &sh) : NULL;
	if (r.direct)
		advance(&r);  /* the command's EXEC_START, which the cell's init waits for */
	display_line(&r.d, "%s job %s (%zu step%s%s)", s->id, job->name, job->n_steps, job->n_steps == 1 ? "" : "s",
		     job->n_services ? ", with services" : "");
	r.tick_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	r.step_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	r.grace_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	struct itimerspec tick = { .it_value = { 0, 100000000 }, .it_interval = { 0, 100000000 } };
	timerfd_settime(r.tick_tfd, 0, &tick, NULL);
	sup_watch_fd(&r.u, r.ctl, EV_CTL);
	sup_watch_fd(&r.u, r.tick_tfd, EV_TICK);
	sup_watch_fd(&r.u, r.step_tfd, EV_STEP_TIMER);
	sup_watch_fd(&r.u, r.grace_tfd, EV_STEP_GRACE);

	runner_loop(&r);
	if (r.sess) {
		const char *why = NULL;
		sup_stopping(&r.u, &why, NULL);
		session_close(r.sess, why ? why : "the session ended");
	}
	tasks_drain(&r);
	/* a plain command's end is the cell's job's */
	if (r.direct && r.steps[0].state == S_RUNNING && r.u.have_exit)
		step_exited(&r, 0, r.u.job_status);
	/* the cell is gone: what still ran was killed with it */
	for (size_t i = 0; i < job->n_steps; i++) {
		if (r.steps[i].state != S_RUNNING)
			continue;
		const char *cause;
		bool stopping = sup_stopping(&r.u, &cause, NULL);
		if (!stopping && !r.job_cause) {
			/* nothing stopped the cell: its executor ended under the step (a step killed it) */
			char end[48];
			r.job_cause = xasprintf("step %s: the job's executor ended while the step ran (%s); the job is incomplete",
						job->steps[i].name, sup_job_end(&r.u, end, sizeof end));
			r.job_cause_limit = xstrdup("executor");
		}
		step_finish(&r, i, stopping ? stopped_state(&r) : S_FAILED,
			    xstrdup(cause ? cause : "the cell ended before the step did"));
		if (!r.fail_code)
			r.fail_code = 1;
	}
	for (size_t i = 0; i < job->n_services; i++)
		if (r.svcs[i].state == V_READY || r.svcs[i].state == V_STARTING)
			r.svcs[i].state = V_STOPPED;
	display_free(&r.d);

	struct supervise_opts so = { .result_fd = o->json ? STDOUT_FILENO : o->result_fd, .result_file = o->result_file,
				     .quiet = false, .amend = amend, .amend_ctx = &r, .ended = o->ended,
				     .ended_ctx = o->take_ctx, .summary = summary };
	rc = sup_finish(&r.u, &so);
	if (r.progress_made)
		unlinkat(s->rundir_fd, "progress.json", 0);  /* result.json holds the steps now */
	for (size_t i = 0; i < r.n_tasks; i++) {
		closep(&r.tasks[i]->out_r);
		task_log_close(&r.tasks[i]->log);
		free(r.tasks[i]);
	}
	free(r.tasks);
	for (size_t i = 0; i < job->n_steps; i++)
		free(r.steps[i].cause);
	free(r.steps);
	free(r.svcs);
	session_free(r.sess);
	free(r.job_cause);
	free(r.cancel.limit);
	free(r.cancel.value);
	free(r.cancel.text);
	free(r.job_cause_limit);
	closep(&r.logdir_fd);
	closep(&r.direct_out);
	closep(&r.ctl);
	closep(&r.tick_tfd);
	closep(&r.step_tfd);
	closep(&r.grace_tfd);
	return rc;
}
