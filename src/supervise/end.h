/* SPDX-License-Identifier: Apache-2.0 */
/* end.h - how a run ended, decided from plain facts: the job's wait status as its cell reported
 * it, a setup error, the cause that stopped the run and what was sent for it, and the limits
 * the kernel enforced since the supervisor last looked. Pure functions, with a table of tests
 * (tests/unit/test_end.c); outcome.c gathers the facts. */
#ifndef WARREN_SUPERVISE_END_H
#define WARREN_SUPERVISE_END_H

#include <stdbool.h>
#include <stdint.h>

#include "run/record.h"
#include "util/limits.h"

/* A scratch with less free than this at the end was full: a write failed with ENOSPC. */
#define RUN_END_SCRATCH_FULL 65536

struct run_end_facts {
	bool have_exit;            /* the cell reported the job's end */
	int job_status;            /* then: its wait status */
	const char *setup_error;   /* NULL, or why the cell could not run the job */
	int setup_status;          /* the exit status it named (0: 125) */
	bool stopping;             /* a cause stopped the run */
	enum run_status cause_status; /* then: RUN_LIMIT or RUN_INTERRUPTED */
	const char *cause_limit;   /* "time", "memory", "signal", ... */
	const char *cause_value;   /* NULL, "30s", "SIGINT", ... */
	const char *cause_text;    /* the cause's line, before what was sent for it */
	int stop_signal;           /* the signal sent for it (0: none, the kernel enforced it) */
	bool killed;               /* SIGKILL followed it */
	bool killed_early;         /* ... before the grace was over (interrupted again) */
	uint64_t grace_ms;         /* the grace between the signal and SIGKILL */
};

/* The end of the run into r: status, exit_code, signal, error, cause_limit, cause_value and
 * cause_message (heap strings, NULL where none); r's other fields are left as they are. */
void run_end_decide(const struct run_end_facts *f, struct run_result *r);

/* The limit the kernel enforced that names the end of a run no cause stopped: the memory limit
 * (oom_kills: the kernel's OOM kills), the process limit (pids_max_hits: forks refused), the
 * scratch limit (a scratch reported full), in that order; the job may have got past it by
 * itself, it still names itself. */
enum run_end_late { RUN_END_LATE_NONE, RUN_END_LATE_MEMORY, RUN_END_LATE_PIDS, RUN_END_LATE_SCRATCH };
enum run_end_late run_end_late_limit(const struct limits *l, uint64_t oom_kills, uint64_t pids_max_hits,
				     bool have_scratch, uint64_t scratch_free);

#endif
