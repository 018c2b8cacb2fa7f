/* SPDX-License-Identifier: Apache-2.0 */
/* test_summary.c - the line a job ends with (job/summary.h), case by case: steps counted by
 * how they ended, the failures that failed the job named apart from those continue-on-error
 * let pass, causes cut to their first clause, at most three names per kind, names made safe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "job/summary.h"

#define OK(n) { n, STEP_END_OK, NULL }
#define FAILED(n, why) { n, STEP_END_FAILED, why }
#define TOLERATED(n, why) { n, STEP_END_TOLERATED, why }
#define SKIPPED(n) { n, STEP_END_SKIPPED, NULL }

struct row {
	const char *what, *job;
	struct step_summary steps[6];
	size_t n;
	double wall_s;
	const char *want;
};

static const struct row rows[] = {
	{ "all ok", "ci", { OK("build"), OK("test") }, 2, 1.5, "job ci: 2 steps, 2 ok, 1.50s" },
	{ "one step", "one", { OK("only") }, 1, 0.25, "job one: 1 step, 1 ok, 0.25s" },
	{ "a failure and the steps it skipped", "build", { OK("a"), OK("b"), FAILED("test", "exit 1"), SKIPPED("deploy") }, 4, 12.3,
	  "job build: 4 steps, 2 ok, 1 failed (test: exit 1), 1 skipped, 12.30s" },
	{ "a tolerated failure apart from the one that failed the job", "ci",
	  { OK("build"), TOLERATED("flaky", "exit 3"), FAILED("test", "exit 1"), SKIPPED("after") }, 4, 0.03,
	  "job ci: 4 steps, 1 ok, 1 failed (test: exit 1), 1 failed but tolerated (flaky: exit 3; continue-on-error), 1 skipped, 0.03s" },
	{ "only tolerated failures: the job passed", "lint", { TOLERATED("style", "exit 2"), OK("build") }, 2, 2.0,
	  "job lint: 2 steps, 1 ok, 1 failed but tolerated (style: exit 2; continue-on-error), 2.00s" },
	{ "a limit's cause up to its first clause", "slow",
	  { FAILED("slow", "time limit 2s reached at 2.01s; sent SIGTERM, then SIGKILL after 5s") }, 1, 7.0,
	  "job slow: 1 step, 1 failed (slow: time limit 2s reached at 2.01s), 7.00s" },
	{ "the output limit's parenthesis cut", "big",
	  { FAILED("big", "output limit 1 KiB reached (the job wrote more than 1024 bytes)"), SKIPPED("after") }, 2, 0.5,
	  "job big: 2 steps, 1 failed (big: output limit 1 KiB reached), 1 skipped, 0.50s" },
	{ "a signal", "seg", { FAILED("crash", "killed by SIGSEGV") }, 1, 0.1, "job seg: 1 step, 1 failed (crash: killed by SIGSEGV), 0.10s" },
	{ "more than three failures: three named", "many",
	  { FAILED("a", "exit 1"), FAILED("b", "exit 2"), FAILED("c", "exit 3"), FAILED("d", "exit 4"), FAILED("e", "exit 5") }, 5, 1.0,
	  "job many: 5 steps, 5 failed (a: exit 1, b: exit 2, c: exit 3, ...), 1.00s" },
	{ "interrupted and not run", "stop",
	  { OK("a"), { "b", STEP_END_INTERRUPTED, NULL }, { "c", STEP_END_NOT_RUN, NULL } }, 3, 1.0,
	  "job stop: 3 steps, 1 ok, 1 interrupted, 1 not run, 1.00s" },
	{ "a name with a newline and an escape is made safe", "j\n\033[2J",
	  { FAILED("bad\nname", "exit 1") }, 1, 1.0, NULL },
};

static void table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct row *w = &rows[i];
		char *got = job_summary(w->job, w->steps, w->n, w->wall_s);
		if (w->want && strcmp(got, w->want))
			fail_msg("%s:\n want %s\n got  %s", w->what, w->want, got);
		if (!w->want && strpbrk(got, "\n\033"))
			fail_msg("%s: a control character got through: %s", w->what, got);
		free(got);
	}
}

static void failure_words(void **state)
{
	(void)state;
	char *s = job_step_failure(NULL, 0, 1);
	assert_string_equal(s, "exit 1");
	free(s);
	s = job_step_failure(NULL, SIGKILL, 137);
	assert_string_equal(s, "killed by SIGKILL");
	free(s);
	s = job_step_failure("time limit 1s reached at 1.00s; sent SIGTERM", SIGTERM, 124);
	assert_string_equal(s, "time limit 1s reached at 1.00s; sent SIGTERM");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(failure_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
