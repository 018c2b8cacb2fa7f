/* SPDX-License-Identifier: Apache-2.0 */
/* summary.c - the line a job ends with (see summary.h). */
#include "job/summary.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/units.h"
#include "util/words.h"

char *job_step_failure(const char *cause, int signal, int exit_code)
{
	if (cause)
		return xstrdup(cause);
	if (signal)
		return xasprintf("killed by SIG%s", sigabbrev_np(signal) ?: "?");
	return xasprintf("exit %d", exit_code);
}

/* s's failure added to *list ("test: exit 1, lint: exit 2"), the k-th of its kind (from 1):
 * its cause up to the first "; " or " ("; past three, "...". */
static void add_failure(char **list, size_t k, const struct step_summary *s)
{
	if (k > 4)
		return;
	char *more;
	if (k == 4) {
		more = xasprintf("%s, ...", *list);
	} else {
		_cleanup_free_ char *why = xstrdup(s->failure ? s->failure : "failed");
		why[strcspn(why, ";(")] = '\0';
		for (size_t l = strlen(why); l && why[l - 1] == ' ';)
			why[--l] = '\0';
		_cleanup_free_ char *name = printable_name(s->name ? s->name : "?");
		more = xasprintf("%s%s%s: %s", *list, **list ? ", " : "", name, why);
	}
	free(*list);
	*list = more;
}

/* ", N WORD" (and " (LIST)") appended to *line when n is not 0. */
static void add_count(char **line, size_t n, const char *word, const char *list, const char *after)
{
	if (!n)
		return;
	char *more = xasprintf("%s, %zu %s%s%s%s%s", *line, n, word, list && *list ? " (" : "", list && *list ? list : "",
			       list && *list ? after : "", list && *list ? ")" : "");
	free(*line);
	*line = more;
}

char *job_summary(const char *job, const struct step_summary *steps, size_t n, double wall_s)
{
	size_t count[STEP_END_NOT_RUN + 1] = { 0 };
	_cleanup_free_ char *failed = xstrdup(""), *tolerated = xstrdup("");
	for (size_t i = 0; i < n; i++) {
		enum step_end e = steps[i].end <= STEP_END_NOT_RUN ? steps[i].end : STEP_END_NOT_RUN;
		count[e]++;
		if (e == STEP_END_FAILED)
			add_failure(&failed, count[e], &steps[i]);
		else if (e == STEP_END_TOLERATED)
			add_failure(&tolerated, count[e], &steps[i]);
	}
	_cleanup_free_ char *name = printable_name(job ? job : "?");
	char *line = xasprintf("job %s: %zu step%s", name, n, n == 1 ? "" : "s");
	add_count(&line, count[STEP_END_OK], "ok", NULL, NULL);
	add_count(&line, count[STEP_END_FAILED], "failed", failed, "");
	add_count(&line, count[STEP_END_TOLERATED], "failed but tolerated", tolerated, "; continue-on-error");
	add_count(&line, count[STEP_END_SKIPPED], "skipped", NULL, NULL);
	add_count(&line, count[STEP_END_INTERRUPTED], "interrupted", NULL, NULL);
	add_count(&line, count[STEP_END_NOT_RUN], "not run", NULL, NULL);
	char d[32];
	char *out = xasprintf("%s, %s", line, format_seconds(d, sizeof d, wall_s));
	free(line);
	return out;
}
