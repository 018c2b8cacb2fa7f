/* SPDX-License-Identifier: Apache-2.0 */
/* test_end.c - how a run ended (supervise/end.h), case by case: from the job's wait status, a
 * setup error and the cause that stopped the run (what was sent for it, whether SIGKILL
 * followed), the status, exit status, signal, cause and its line that the record and the
 * caller get; and which limit the kernel enforced names the end of a run no cause stopped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "supervise/end.h"

#define EXITED(n) .have_exit = true, .job_status = ((n) << 8)
#define KILLED_BY(s) .have_exit = true, .job_status = (s)
#define CAUSE(st, lim, val, txt) .stopping = true, .cause_status = (st), .cause_limit = (lim), .cause_value = (val), .cause_text = (txt)
#define GRACE .grace_ms = 10000

struct row {
	const char *what;
	struct run_end_facts f;
	enum run_status status;
	int exit_code;
	int signal;
	const char *limit, *value;   /* the cause's (NULL: none) */
	const char *message;         /* the cause's line (NULL: none) */
	const char *error;           /* the setup error (NULL: none) */
};

static const struct row rows[] = {
	/* the job's own end */
	{ "exited 0", { EXITED(0), GRACE }, RUN_EXITED, 0, 0, NULL, NULL, NULL, NULL },
	{ "exited 3", { EXITED(3), GRACE }, RUN_EXITED, 3, 0, NULL, NULL, NULL, NULL },
	{ "killed by SIGSEGV", { KILLED_BY(SIGSEGV), GRACE }, RUN_SIGNALED, 128 + SIGSEGV, SIGSEGV, NULL, NULL, NULL, NULL },
	{ "init gone without the job's end: SIGKILL took it", { GRACE }, RUN_SIGNALED, 137, SIGKILL, NULL, NULL, NULL, NULL },
	/* setup errors win over everything */
	{ "setup error without a status: 125", { .setup_error = "cannot mount", GRACE }, RUN_ERROR, 125, 0, NULL, NULL, NULL,
	  "cannot mount" },
	{ "setup error with its status (exec failed: 127)", { EXITED(1), .setup_error = "no such command", .setup_status = 127 },
	  RUN_ERROR, 127, 0, NULL, NULL, NULL, "no such command" },
	{ "setup error over a cause", { .setup_error = "boom", CAUSE(RUN_LIMIT, "time", "1s", "wall-clock limit 1s reached"),
	  .stop_signal = SIGTERM }, RUN_ERROR, 125, 0, NULL, NULL, NULL, "boom" },
	/* time limits: 124 */
	{ "time limit, the job ended on SIGTERM", { KILLED_BY(SIGTERM), CAUSE(RUN_LIMIT, "time", "1s", "wall-clock limit 1s reached at 1.00s"),
	  .stop_signal = SIGTERM, GRACE }, RUN_LIMIT, 124, SIGTERM, "time", "1s",
	  "wall-clock limit 1s reached at 1.00s; sent SIGTERM", NULL },
	{ "time limit, SIGKILL after the grace", { CAUSE(RUN_LIMIT, "time", "1s", "wall-clock limit 1s reached"), .stop_signal = SIGTERM,
	  .killed = true, .grace_ms = 2000 }, RUN_LIMIT, 124, SIGKILL, "time", "1s",
	  "wall-clock limit 1s reached; sent SIGTERM, then SIGKILL after 2s", NULL },
	{ "cpu-time limit, the job exited 0 on SIGTERM", { EXITED(0), CAUSE(RUN_LIMIT, "cpu-time", "2s", "CPU-time limit 2s reached"),
	  .stop_signal = SIGTERM, GRACE }, RUN_LIMIT, 124, 0, "cpu-time", "2s", "CPU-time limit 2s reached; sent SIGTERM", NULL },
	/* other limits: the job's status, never a pass */
	{ "output limit, the job exited 0: 123", { EXITED(0), CAUSE(RUN_LIMIT, "output", "1 KiB", "output limit 1 KiB reached"),
	  .stop_signal = SIGTERM, GRACE }, RUN_LIMIT, EXIT_LIMIT, 0, "output", "1 KiB", "output limit 1 KiB reached; sent SIGTERM", NULL },
	{ "output limit, the job exited 3: 3", { EXITED(3), CAUSE(RUN_LIMIT, "output", "1 KiB", "output limit 1 KiB reached"),
	  .stop_signal = SIGTERM, GRACE }, RUN_LIMIT, 3, 0, "output", "1 KiB", "output limit 1 KiB reached; sent SIGTERM", NULL },
	{ "memory limit: SIGKILL and no signal named", { KILLED_BY(SIGKILL), CAUSE(RUN_LIMIT, "memory", "64 MiB", "memory limit 64 MiB reached"),
	  .killed = true, GRACE }, RUN_LIMIT, 137, SIGKILL, "memory", "64 MiB", "memory limit 64 MiB reached", NULL },
	{ "memory limit found late, the job exited 0", { EXITED(0), CAUSE(RUN_LIMIT, "memory", "64 MiB", "memory limit 64 MiB reached"), GRACE },
	  RUN_LIMIT, EXIT_LIMIT, 0, "memory", "64 MiB", "memory limit 64 MiB reached; the job exited with 0", NULL },
	{ "pids limit found late, the job exited 2", { EXITED(2), CAUSE(RUN_LIMIT, "pids", "10", "process limit 10 reached"), GRACE },
	  RUN_LIMIT, 2, 0, "pids", "10", "process limit 10 reached; the job exited with 2", NULL },
	{ "a limit without a signal, the job killed: its line alone", { KILLED_BY(SIGSEGV), CAUSE(RUN_LIMIT, "scratch", "1 MiB", "scratch full"),
	  GRACE }, RUN_LIMIT, 128 + SIGSEGV, SIGSEGV, "scratch", "1 MiB", "scratch full", NULL },
	/* interrupts: 128 + the signal passed on */
	{ "SIGINT passed on", { KILLED_BY(SIGINT), CAUSE(RUN_INTERRUPTED, "signal", "INT", "interrupted by SIGINT"), .stop_signal = SIGINT,
	  GRACE }, RUN_INTERRUPTED, 130, SIGINT, "signal", "INT", "interrupted by SIGINT; sent SIGINT", NULL },
	{ "SIGINT, the job exited 0 on it", { EXITED(0), CAUSE(RUN_INTERRUPTED, "signal", "INT", "interrupted by SIGINT"), .stop_signal = SIGINT,
	  GRACE }, RUN_INTERRUPTED, 130, 0, "signal", "INT", "interrupted by SIGINT; sent SIGINT", NULL },
	{ "interrupted again: SIGKILL before the grace", { CAUSE(RUN_INTERRUPTED, "signal", "INT", "interrupted by SIGINT"), .stop_signal = SIGINT,
	  .killed = true, .killed_early = true, GRACE }, RUN_INTERRUPTED, 130, SIGKILL, "signal", "INT",
	  "interrupted by SIGINT; sent SIGINT, then SIGKILL when interrupted again", NULL },
	{ "warren kill: SIGTERM, no value", { KILLED_BY(SIGTERM), CAUSE(RUN_INTERRUPTED, "kill", NULL, "killed by warren kill (uid 0)"),
	  .stop_signal = SIGTERM, GRACE }, RUN_INTERRUPTED, 143, SIGTERM, "kill", NULL, "killed by warren kill (uid 0); sent SIGTERM", NULL },
	{ "warren kill, SIGKILL after the grace", { CAUSE(RUN_INTERRUPTED, "kill", NULL, "killed by warren kill (uid 0)"), .stop_signal = SIGTERM,
	  .killed = true, .grace_ms = 10000 }, RUN_INTERRUPTED, 143, SIGKILL, "kill", NULL,
	  "killed by warren kill (uid 0); sent SIGTERM, then SIGKILL after 10s", NULL },
};

static void eq_str(const char *what, const char *field, const char *want, const char *got)
{
	if ((want == NULL) != (got == NULL) || (want && strcmp(want, got)))
		fail_msg("%s: %s: want %s, got %s", what, field, want ? want : "NULL", got ? got : "NULL");
}

static void table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct row *w = &rows[i];
		struct run_result r = { 0 };
		run_end_decide(&w->f, &r);
		if (r.status != w->status || r.exit_code != w->exit_code || r.signal != w->signal)
			fail_msg("%s: want %s %d signal %d, got %s %d signal %d", w->what, run_status_name(w->status), w->exit_code,
				 w->signal, run_status_name(r.status), r.exit_code, r.signal);
		eq_str(w->what, "cause_limit", w->limit, r.cause_limit);
		eq_str(w->what, "cause_value", w->value, r.cause_value);
		eq_str(w->what, "cause_message", w->message, r.cause_message);
		eq_str(w->what, "error", w->error, r.error);
		run_result_free(&r);
	}
}

struct late_row {
	const char *what;
	struct limits l;
	uint64_t oom_kills, pids_max_hits;
	bool have_scratch;
	uint64_t scratch_free;
	enum run_end_late want;
};

static const struct late_row late_rows[] = {
	{ "nothing hit", { .memory = 1 << 20, .pids = 10, .scratch = 1 << 20 }, 0, 0, true, 1 << 20, RUN_END_LATE_NONE },
	{ "an OOM kill under a memory limit", { .memory = 1 << 20 }, 1, 0, false, 0, RUN_END_LATE_MEMORY },
	{ "an OOM kill without a memory limit (the host's)", { .pids = 10 }, 3, 0, false, 0, RUN_END_LATE_NONE },
	{ "a fork refused under a process limit", { .pids = 10 }, 0, 1, false, 0, RUN_END_LATE_PIDS },
	{ "a fork refused without a process limit", { .memory = 1 << 20 }, 0, 4, false, 0, RUN_END_LATE_NONE },
	{ "memory before pids", { .memory = 1 << 20, .pids = 10 }, 1, 1, false, 0, RUN_END_LATE_MEMORY },
	{ "pids before scratch", { .pids = 10, .scratch = 1 << 20 }, 0, 1, true, 0, RUN_END_LATE_PIDS },
	{ "a full scratch", { .scratch = 1 << 20 }, 0, 0, true, RUN_END_SCRATCH_FULL - 1, RUN_END_LATE_SCRATCH },
	{ "a scratch just not full", { .scratch = 1 << 20 }, 0, 0, true, RUN_END_SCRATCH_FULL, RUN_END_LATE_NONE },
	{ "a scratch never reported", { .scratch = 1 << 20 }, 0, 0, false, 0, RUN_END_LATE_NONE },
	{ "a full scratch without a scratch limit", { 0 }, 0, 0, true, 0, RUN_END_LATE_NONE },
};

static void late_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof late_rows / sizeof late_rows[0]; i++) {
		const struct late_row *w = &late_rows[i];
		enum run_end_late got = run_end_late_limit(&w->l, w->oom_kills, w->pids_max_hits, w->have_scratch, w->scratch_free);
		if (got != w->want)
			fail_msg("%s: want %d, got %d", w->what, (int)w->want, (int)got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(late_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
