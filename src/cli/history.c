/* SPDX-License-Identifier: Apache-2.0 */
/* history.c - `warren history` (and `warren ps -a`): the runs of the history database, live
 * and past, with filters; and the history options of `warren run` and `warren job run`. */
#include "cli/history.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "run/history.h"
#include "run/rundir.h"
#include "run/id.h"
#include "util/units.h"
#include "util/words.h"

int hist_opt_parse(struct hist_opts *h, int which, const char *arg, struct error *err)
{
	switch (which) {
	case 0:
		if (history_check_label(arg, err) < 0)
			return error_prefix(err, "--label"), -EINVAL;
		h->labels = xrealloc(h->labels, (h->n + 2) * sizeof *h->labels);
		h->labels[h->n++] = xstrdup(arg);
		h->labels[h->n] = NULL;
		return 0;
	case 1:
		if (history_check_name(arg, err) < 0)
			return error_prefix(err, "--name"), -EINVAL;
		h->name = arg;
		return 0;
	case 2:
		if (!*arg)
			return error_set(err, 0, "--db: give a path to the history database, or 'none'");
		h->db = arg;
		return 0;
	default:
		if (!run_id_valid(arg))
			return error_set(err, 0, "--run-id: '%s' is not a run id (run_ and 26 Crockford base32 characters)", arg);
		h->run_id = arg;
		return 0;
	}
}

void hist_opts_apply(struct hist_opts *h, struct cell_spec *s)
{
	s->labels = h->labels;
	h->labels = NULL;
	h->n = 0;
	s->name = h->name ? xstrdup(h->name) : NULL;
	s->history_db = h->db ? xstrdup(h->db) : NULL;
	if (h->run_id)
		memcpy(s->id, h->run_id, RUN_ID_LEN + 1);
}

void hist_opts_free(struct hist_opts *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->labels[i]);
	free(h->labels);
	h->labels = NULL;
	h->n = 0;
}

/* ---- warren history ---- */

static const char HISTORY_HELP[] =
	"usage: warren history [--status S] [--label K=V]... [--since WHEN] [--limit N] [--json]\n"
	"                      [--state DIR] [--db PATH]\n"
	"       warren ps -a [same options]\n"
	"\n"
	"List the runs of the history (<state>/history.db), newest first: live ones and past ones,\n"
	"also those whose record 'warren gc' or retention pruned (RECORD says 'pruned').\n"
	"\n"
	"  --status S     only runs in state S: queued, running, live (both), exited, signaled,\n"
	"                 limit, interrupted, error\n"
	"  --label K=V    only runs with this label (repeatable: all must match)\n"
	"  --since WHEN   only runs started since WHEN: a duration ago (1h, 7d) or a UTC time\n"
	"                 (2026-12-03T10:00:00Z)\n"
	"  --limit N      at most N runs, the newest (default: all)\n"
	"  --json         the rows as a JSON array\n";

struct hist_query {
	struct history_filter f;
	const char *state_dir, *db;
	bool json;
};

static int history_parse(int argc, char **argv, struct hist_query *q, struct error *err)
{
	enum { O_STATUS = 256, O_LABEL, O_SINCE, O_LIMIT, O_JSON, O_STATE, O_DB, O_HELP, O_ALL };
	static const struct option opts[] = {
		{ "status", required_argument, NULL, O_STATUS }, { "label", required_argument, NULL, O_LABEL },
		{ "since", required_argument, NULL, O_SINCE }, { "limit", required_argument, NULL, O_LIMIT },
		{ "json", no_argument, NULL, O_JSON }, { "state", required_argument, NULL, O_STATE },
		{ "db", required_argument, NULL, O_DB }, { "help", no_argument, NULL, O_HELP },
		{ "all", no_argument, NULL, O_ALL }, { NULL, 0, NULL, 0 },
	};
	static const char *const states[] = { "queued", "running", "live", "exited", "signaled", "limit", "interrupted", "error", NULL };
	opterr = 0;
	optind = 1;
	int c;
	uint64_t n;
	while ((c = getopt_long(argc, argv, "ah", opts, NULL)) != -1) {
		switch (c) {
		case 'a': case O_ALL: break;
		case O_STATUS: {
			const char *const *s = states;
			while (*s && strcmp(*s, optarg))
				s++;
			if (!*s)
				return error_set(err, 0, "--status: '%s' is not a state; use queued, running, live, exited, signaled, limit, interrupted or error", optarg);
			q->f.state = optarg;
			break;
		}
		case O_LABEL:
			if (history_check_label(optarg, err) < 0)
				return -EINVAL;
			q->f.labels = xrealloc(q->f.labels, (q->f.nlabels + 1) * sizeof *q->f.labels);
			q->f.labels[q->f.nlabels++] = optarg;
			break;
		case O_SINCE:
			if (history_parse_since(optarg, history_now_ms(), &q->f.since_ms) < 0)
				return error_set(err, 0, "--since: '%s' is neither a duration (1h, 7d) nor a UTC time (2026-12-03T10:00:00Z)", optarg);
			break;
		case O_LIMIT:
			if (parse_uint(optarg, &n) < 0 || n > 1000000000)
				return error_set(err, 0, "--limit: '%s' is not a number of runs", optarg);
			q->f.limit = (long)n;
			break;
		case O_JSON: q->json = true; break;
		case O_STATE: q->state_dir = optarg; break;
		case O_DB: q->db = optarg; break;
		case 'h':
		case O_HELP: fputs(HISTORY_HELP, stdout); return 1;
		default: return error_set(err, 0, "history: unknown option or missing value '%s' (see 'warren history --help')", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return error_set(err, 0, "history takes no operands, got '%s' (see 'warren history --help')", argv[optind]);
	return 0;
}

/* A row for people: id, state, exit, duration, name, what ended it (or the command). */
static void print_row(json_t *r)
{
	char dur[32] = "-", ex[16] = "-";
	json_t *d = json_object_get(r, "duration_s");
	if (json_is_number(d))
		format_seconds(dur, sizeof dur, json_number_value(d));
	json_t *e = json_object_get(r, "exit_code");
	if (json_is_integer(e))
		snprintf(ex, sizeof ex, "%lld", (long long)json_integer_value(e));
	/* a job: the step that failed it, with its cause, says more than the run's cause */
	json_t *fs = json_object_get(r, "failed_step");
	_cleanup_free_ char *step = NULL;
	if (json_is_object(fs)) {
		_cleanup_free_ char *name = printable_name(json_string_value(json_object_get(fs, "name")) ?: "?");
		step = xasprintf("step %lld %s: %s", json_integer_value(json_object_get(fs, "number")), name,
				 json_string_value(json_object_get(fs, "cause")) ?: "failed");
	}
	const char *why = step ?: json_string_value(json_object_get(json_object_get(r, "cause"), "message"));
	if (!why)
		why = json_string_value(json_object_get(r, "error"));
	_cleanup_free_ char *cmd = NULL;
	if (!why) {
		cmd = xstrdup("");
		size_t i;
		json_t *w;
		json_array_foreach(json_object_get(r, "command"), i, w) {
			char *n = xasprintf("%s%s%s", cmd, i ? " " : "", json_string_value(w) ?: "");
			free(cmd);
			cmd = n;
		}
		why = cmd;
	}
	/* steps that failed under continue-on-error, apart from what failed the job */
	json_int_t tol = json_integer_value(json_object_get(r, "tolerated_failures"));
	_cleanup_free_ char *tols = tol ? xasprintf(" (%lld step%s failed but tolerated)", (long long)tol, tol == 1 ? "" : "s")
				       : xstrdup("");
	printf("%-30s %-11s %4s %9s %-7s %-16.16s %s%s\n", json_string_value(json_object_get(r, "id")) ?: "?",
	       json_string_value(json_object_get(r, "state")) ?: "?", ex, dur,
	       json_is_true(json_object_get(r, "pruned")) ? "pruned" : "kept",
	       json_string_value(json_object_get(r, "name")) ?: "-", why, tols);
}

int cmd_history(int argc, char **argv)
{
	_cleanup_error_ struct error err = { 0 };
	struct hist_query q = { .f = { .any_owner = true } };
	int r = history_parse(argc, argv, &q, &err);
	if (r != 0) {
		free(q.f.labels);
		return r > 0 ? 0 : cli_fail(&err);
	}
	_cleanup_free_ char *state = statedir_default(q.state_dir);
	_cleanup_free_ char *path = history_path(state, q.db);
	struct history *h = NULL;
	json_t *rows = NULL;
	if (!path)
		rows = json_array();
	else if (!history_exists(path))
		rows = json_array();  /* no run wrote a history here yet */
	else if (history_open(&h, path, &err) == 0)
		rows = history_query(h, &q.f, &err);
	history_close(h);
	free(q.f.labels);
	if (!rows)
		return cli_fail(&err);
	if (q.json) {
		_cleanup_free_ char *t = json_dumps(rows, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
		printf("%s\n", t);
	} else {
		printf("%-30s %-11s %4s %9s %-7s %-16s %s\n", "ID", "STATE", "EXIT", "DURATION", "RECORD", "NAME", "CAUSE / COMMAND");
		size_t i;
		json_t *row;
		json_array_foreach(rows, i, row)
			print_row(row);
	}
	json_decref(rows);
	return 0;
}
