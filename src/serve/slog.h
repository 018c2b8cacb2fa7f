/* SPDX-License-Identifier: Apache-2.0 */
/* slog.h - what the server says on its stderr: its own lines ("warren serve: ...") and one line
 * per event (a run started, a run ended, a request or a connection refused), as text, or with
 * `--log-format json` one JSON object per line for collectors: time, level, event, msg (the
 * text line's words) and the event's fields (docs/api.md, "The server's log"). */
#ifndef WARREN_SERVE_SLOG_H
#define WARREN_SERVE_SLOG_H

#include <jansson.h>
#include <sys/types.h>
#include <time.h>

enum slog_format { SLOG_TEXT, SLOG_JSON };

/* "text" or "json" into *f: 0, or -EINVAL. */
int slog_parse_format(const char *v, enum slog_format *f);
/* The format of every line from now on (json: warren's warnings too). Before any thread. */
void slog_set_format(enum slog_format f);

/* One line (heap, with its newline): text "warren serve: MSG", or json {"time": RFC 3339 of
 * now, "level", "event", "msg", and each of fields (taken; NULL: none)}. Pure. */
char *slog_format_line(enum slog_format f, const struct timespec *now, const char *level, const char *event,
		       const char *msg, json_t *fields);

/* An event's line on stderr, written at once (one write: lines of threads never mix); fields
 * taken (NULL: none). level: "info", "warn" or "error". */
void slog_event(const char *level, const char *event, json_t *fields, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A plain line of the server (event "message"). */
void slog_line(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The events. A run started: who asked, what (about: {"command": [...]} or {"job": NAME},
 * borrowed, or NULL), how ("warm", or NULL). */
void slog_run_started(const char *id, uid_t owner, json_t *about, const char *start);
/* A run ended, as its history row (borrowed) says: state, exit code, cause, duration. */
void slog_run_ended(const char *id, json_t *row);
/* A request refused (answered 400 or more): its method and path, the status, the answer's one
 * line, and who asked: uid (a unix socket's peer; -1: not known) or addr (TCP's, or NULL). */
void slog_refused(const char *method, const char *path, int status, const char *reason, uid_t uid, const char *addr);
/* A connection refused before its request (a cap, a head out of time): who, why. */
void slog_conn_refused(int status, const char *reason, uid_t uid, const char *addr);

#endif
