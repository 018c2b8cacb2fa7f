/* SPDX-License-Identifier: Apache-2.0 */
/* end.c - how a run ended, from plain facts (end.h): the job's own end, a setup error over it,
 * a cause over both (its line says what was sent for it), and the exit status warren passes on:
 * the job's, 128+N for a signal, 124 for a time limit, 123 (EXIT_LIMIT) for another limit that
 * would have passed, 125 for warren's own failure. */
#include "supervise/end.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "util/error.h"
#include "util/units.h"

/* How the job itself ended. */
static void job_end(const struct run_end_facts *f, struct run_result *r)
{
	if (f->have_exit && WIFEXITED(f->job_status)) {
		r->status = RUN_EXITED;
		r->exit_code = WEXITSTATUS(f->job_status);
	} else if (f->have_exit && WIFSIGNALED(f->job_status)) {
		r->status = RUN_SIGNALED;
		r->signal = WTERMSIG(f->job_status);
		r->exit_code = 128 + r->signal;
	} else {
		/* init was killed before the job's end was reported: SIGKILL took everything */
		r->status = RUN_SIGNALED;
		r->signal = SIGKILL;
		r->exit_code = 128 + SIGKILL;
	}
}

static const char *signal_name(int sig, char *buf, size_t len)
{
	snprintf(buf, len, "SIG%s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	return buf;
}

/* The cause's line: its text and what was sent for it. */
static char *cause_message(const struct run_end_facts *f, enum run_status status)
{
	char sig[16];
	if (!f->stop_signal && f->have_exit && status == RUN_LIMIT && WIFEXITED(f->job_status))
		return xasprintf("%s; the job exited with %d", f->cause_text, WEXITSTATUS(f->job_status));
	if (!f->stop_signal)
		return xstrdup(f->cause_text);
	if (f->killed && f->killed_early)
		return xasprintf("%s; sent %s, then SIGKILL when interrupted again", f->cause_text,
				 signal_name(f->stop_signal, sig, sizeof sig));
	if (f->killed) {
		char g[32];
		format_duration_ms(g, sizeof g, f->grace_ms);
		return xasprintf("%s; sent %s, then SIGKILL after %s", f->cause_text, signal_name(f->stop_signal, sig, sizeof sig), g);
	}
	return xasprintf("%s; sent %s", f->cause_text, signal_name(f->stop_signal, sig, sizeof sig));
}

void run_end_decide(const struct run_end_facts *f, struct run_result *r)
{
	r->signal = 0;
	r->error = r->cause_limit = r->cause_value = r->cause_message = NULL;
	job_end(f, r);
	if (f->setup_error) {
		r->status = RUN_ERROR;
		r->exit_code = f->setup_status ? f->setup_status : 125;
		r->signal = 0;
		r->error = xstrdup(f->setup_error);
		return;
	}
	if (!f->stopping)
		return;
	r->status = f->cause_status;
	r->cause_message = cause_message(f, r->status);
	if (!strcmp(f->cause_limit, "time") || !strcmp(f->cause_limit, "cpu-time"))
		r->exit_code = 124;
	else if (r->status == RUN_INTERRUPTED)
		r->exit_code = 128 + f->stop_signal;
	else if (r->exit_code == 0)
		r->exit_code = EXIT_LIMIT; /* a run a limit stopped never passes */
	r->cause_limit = xstrdup(f->cause_limit);
	r->cause_value = f->cause_value ? xstrdup(f->cause_value) : NULL;
}

enum run_end_late run_end_late_limit(const struct limits *l, uint64_t oom_kills, uint64_t pids_max_hits,
				     bool have_scratch, uint64_t scratch_free)
{
	if (l->memory && oom_kills)
		return RUN_END_LATE_MEMORY;
	if (l->pids && pids_max_hits)
		return RUN_END_LATE_PIDS;
	if (l->scratch && have_scratch && scratch_free < RUN_END_SCRATCH_FULL)
		return RUN_END_LATE_SCRATCH;
	return RUN_END_LATE_NONE;
}
