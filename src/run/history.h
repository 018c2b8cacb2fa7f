/* SPDX-License-Identifier: Apache-2.0 */
/* history.h - the history of runs in SQLite (<state>/history.db): one row per run, inserted
 * when it starts (or is queued by `warren serve`), updated when it ends; labels and a name to
 * find runs by; retention. A run's own start and end wait as lines in <db>.pending until the
 * database's next user folds them in; WAL mode and a busy timeout for its users at once. */
#ifndef WARREN_RUN_HISTORY_H
#define WARREN_RUN_HISTORY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cell/spec.h"
#include "run/record.h"
#include "util/error.h"

#define HISTORY_SCHEMA_VERSION 3
#define HISTORY_FILE "history.db"
/* --db none: no history */
#define HISTORY_NONE "none"

struct history;

/* The database of state directory statedir: opt (--db) when given, else <statedir>/history.db.
 * NULL for --db none. A heap string. */
char *history_path(const char *statedir, const char *opt);
/* Open (create, migrate to HISTORY_SCHEMA_VERSION) the database at path, and fold in the
 * lines runs left pending (see history_note_start): every reader and writer below folds them
 * in first, so that what it reads or writes comes after them. */
int history_open(struct history **out, const char *path, struct error *err);
void history_close(struct history *h);
/* Whether path, or lines pending for it, exist: a history to open. */
bool history_exists(const char *path);

/* What is known of a run when it is queued or starts. */
struct history_run {
	const char *id, *name, *state;   /* state: "queued" or "running" */
	const char *kind;                /* "command" or "job" */
	const char *worktree, *statedir;
	const char *via;                 /* "cli" (NULL) or "serve" */
	const char *start, *start_why;   /* a server's run: "warm", or "cold" and why (or NULL) */
	json_t *command;                 /* array of words (borrowed) */
	json_t *labels;                  /* object of strings (borrowed), or NULL */
	uid_t owner;                     /* the host user who asked for it */
	int64_t submitted_ms, started_ms; /* 0: not known */
};
/* Insert the row, or (a queued row starting) update its state, start and what ran; a row
 * that has ended stays ended. */
int history_begin(struct history *h, const struct history_run *r, struct error *err);

/* How a run ended. */
struct history_end {
	const char *state;               /* run_status_name(), or "interrupted" */
	bool have_exit;
	int exit_code;
	const char *signal, *cause_limit, *cause, *error;
	json_t *failed_step;             /* a job: the step that failed it (the record's), or NULL */
	unsigned tolerated;              /* a job: its steps that failed under continue-on-error */
	int64_t ended_ms;
	double duration_s;               /* < 0: from the start to ended_ms */
	bool if_live;                    /* an end concluded by another (the server, gc): only over a
	                                    row still queued or running, never over the run's own */
};
int history_end(struct history *h, const char *id, const struct history_end *e, struct error *err);
/* The record of id is gone (gc, retention): its row stays and says so. */
int history_mark_pruned(struct history *h, const char *id, struct error *err);
/* Forget id entirely (DELETE /v1/runs/{id}). */
int history_delete(struct history *h, const char *id, struct error *err);

struct history_filter {
	const char *state;               /* NULL: any; "live": queued or running */
	char **labels;                   /* "k=v", each must match */
	size_t nlabels;
	int64_t since_ms;                /* started (or submitted) at or after; 0: any */
	long limit;                      /* 0: no limit */
	const char *before;              /* paging: ids older than this one */
	bool any_owner;
	uid_t owner;                     /* when !any_owner */
};
/* The rows matching f, newest first, as a JSON array of objects (see history_row_json). */
json_t *history_query(struct history *h, const struct history_filter *f, struct error *err);
/* The row of id as a JSON object; NULL with err->errnum ENOENT when there is none. */
json_t *history_get(struct history *h, const char *id, struct error *err);
/* Ids (NULL-terminated, free with history_ids_free) of rows in state (e.g. "running") that
 * came via ("cli", "serve") into statedir. */
char **history_ids_in_state(struct history *h, const char *state, const char *via, const char *statedir,
			    struct error *err);
/* Ids of ended runs whose record retention prunes: all but the newest keep_runs (0: no
 * count limit) and those that ended more than keep_for_ms before now_ms (0: no age limit);
 * rows already pruned are not listed. */
char **history_expired(struct history *h, long keep_runs, int64_t keep_for_ms, int64_t now_ms,
		       struct error *err);
void history_ids_free(char **ids);
/* How many runs per state and cause limit: [{state, cause ("" for none), runs}]. */
json_t *history_counts(struct history *h, struct error *err);
struct statedir;
/* Retention (warren serve --keep-runs/--keep-for, warren gc --keep-runs/--keep-for): delete the
 * records in sd of the runs history_expired lists, except live ones, and mark their rows
 * pruned. The ids pruned (history_ids_free), or NULL + err. */
char **history_retain(struct history *h, const struct statedir *sd, long keep_runs, int64_t keep_for_ms,
		      struct error *err);

/* What the supervisor writes: the row of spec s at its start and at its end, as lines
 * appended to <db>.pending (the supervisor never opens the database: the next reader or
 * writer folds them in). A failure is a warning on stderr (the run goes on; its record is in
 * the run directory). */
void history_note_start(const struct cell_spec *s);
void history_note_end(const struct cell_spec *s, const struct run_result *r, const char *status);
/* The run failed to start: its row (written now when history_note_start had not been called)
 * says so (state error, msg). */
void history_note_failed(const struct cell_spec *s, const char *msg);

int64_t history_now_ms(void);
/* Checks of --label K=V and --name (and the API's): 0, or -EINVAL + err naming the value. */
int history_check_label(const char *kv, struct error *err);
int history_check_name(const char *name, struct error *err);
/* --since / ?since=: a duration ago (1h, 7d) or a UTC time (2026-12-03T10:00:00Z, 2026-12-03)
 * into milliseconds since the epoch; -EINVAL when it is neither. */
int history_parse_since(const char *s, int64_t now_ms, int64_t *out);

#endif
