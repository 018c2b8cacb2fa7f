/* SPDX-License-Identifier: Apache-2.0 */
/* summary.h - the line a job ends with on stderr: its steps counted by how they ended, the
 * failures named (those continue-on-error let fail apart), its time. Pure: plain facts in, a
 * line out (tests/unit/test_summary.c). */
#ifndef WARREN_JOB_SUMMARY_H
#define WARREN_JOB_SUMMARY_H

#include <stddef.h>

enum step_end { STEP_END_OK, STEP_END_FAILED, STEP_END_TOLERATED, STEP_END_SKIPPED, STEP_END_INTERRUPTED,
		STEP_END_NOT_RUN };

struct step_summary {
	const char *name;
	enum step_end end;
	const char *failure;   /* how it failed (FAILED, TOLERATED): job_step_failure's words */
};

/* How a step failed: its cause (a limit's, warren's) when it has one, else "killed by SIGX"
 * (signal), else "exit N". Heap. */
char *job_step_failure(const char *cause, int signal, int exit_code);
/* "job ci: 4 steps, 2 ok, 1 failed (test: exit 1), 1 skipped, 3.20s" (heap; without the
 * "warren: " of the line): each failure's cause up to its first "; " or " (", at most three
 * named per kind, names made safe to print. */
char *job_summary(const char *job, const struct step_summary *steps, size_t n, double wall_s);

#endif
