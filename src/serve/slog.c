/* SPDX-License-Identifier: Apache-2.0 */
/* slog.c - the server's lines on stderr, text or JSON (slog.h): each built whole and written
 * with one write(2), so that the lines of the listeners' threads and of the main loop never
 * interleave; in JSON, warren's warnings (warn_line) become lines of their own as well. */
#include "serve/slog.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run/record.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/words.h"

static enum slog_format slog_fmt = SLOG_TEXT;

int slog_parse_format(const char *v, enum slog_format *f)
{
	if (!strcmp(v, "text"))
		*f = SLOG_TEXT;
	else if (!strcmp(v, "json"))
		*f = SLOG_JSON;
	else
		return -EINVAL;
	return 0;
}

/* msg with its control characters as '?': a path or a reason from a request never starts a
 * line of its own (a newline in a URL is one after libmicrohttpd unescapes it) */
static char *one_line(const char *msg)
{
	char *m = xstrdup(msg);
	for (unsigned char *p = (unsigned char *)m; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
	return m;
}

char *slog_format_line(enum slog_format f, const struct timespec *now, const char *level, const char *event,
		       const char *text, json_t *fields)
{
	_cleanup_free_ char *msg = one_line(text);
	if (f == SLOG_TEXT) {
		json_decref(fields);
		return xasprintf("warren serve: %s\n", msg);
	}
	char t[64];
	json_t *j = json_pack("{s:s,s:s,s:s,s:o}", "time", format_rfc3339(t, sizeof t, now), "level", level, "event",
			      event, "msg", json_string_lossy(msg));
	const char *k;
	json_t *v;
	json_object_foreach(fields, k, v) {
		if (!json_object_get(j, k))  /* the four above are the line's own */
			json_object_set(j, k, v);
	}
	json_decref(fields);
	char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(j);
	char *line = xasprintf("%s\n", s ? s : "{}");
	free(s);
	return line;
}

static void emit(const char *level, const char *event, json_t *fields, const char *fmt, va_list ap)
{
	_cleanup_free_ char *msg = xvasprintf(fmt, ap);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	_cleanup_free_ char *line = slog_format_line(slog_fmt, &now, level, event, msg, fields);
	if (write_all(STDERR_FILENO, line, strlen(line)) < 0) {
		/* nobody reads the server's stderr: nothing to tell */
	}
}

void slog_event(const char *level, const char *event, json_t *fields, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(level, event, fields, fmt, ap);
	va_end(ap);
}

void slog_line(const char *level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(level, "message", NULL, fmt, ap);
	va_end(ap);
}

/* warn_line's lines ("warren: MSG" in text) as the server's, in JSON */
static void warn_json(const char *msg, void *data)
{
	(void)data;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	_cleanup_free_ char *line = slog_format_line(SLOG_JSON, &now, "warn", "message", msg, NULL);
	if (write_all(STDERR_FILENO, line, strlen(line)) < 0) {
		/* as above */
	}
}

void slog_set_format(enum slog_format f)
{
	slog_fmt = f;
	warn_set_handler(f == SLOG_JSON ? warn_json : NULL, NULL);
}

/* ---- the events ---- */

void slog_run_started(const char *id, uid_t owner, json_t *about, const char *start)
{
	json_t *f = json_pack("{s:s,s:I}", "id", id, "owner", (json_int_t)owner);
	json_t *cmd = json_object_get(about, "command"), *job = json_object_get(about, "job");
	json_t *name = json_object_get(about, "name");
	if (cmd)
		json_object_set(f, "command", cmd);
	if (job)
		json_object_set(f, "job", job);
	if (json_is_string(name))
		json_object_set(f, "name", name);
	if (start)
		json_object_set_new(f, "start", json_string(start));
	_cleanup_free_ char *words = cmd ? json_dumps(cmd, JSON_COMPACT) : NULL;
	_cleanup_free_ char *what = words                 ? xasprintf("command %s", words)
				    : json_is_string(job) ? xasprintf("job %s", json_string_value(job))
							  : xstrdup("a job");
	slog_event("info", "run_started", f, "%s started%s%s for uid %u: %s", id, start ? " " : "", start ? start : "",
		   (unsigned)owner, what);
}

void slog_run_ended(const char *id, json_t *row)
{
	const char *state = json_string_value(json_object_get(row, "state"));
	json_t *cause = json_object_get(row, "cause"), *ec = json_object_get(row, "exit_code");
	json_t *dur = json_object_get(row, "duration_s");
	const char *limit = json_string_value(json_object_get(cause, "limit"));
	const char *why = json_string_value(json_object_get(cause, "message"));
	if (!why)
		why = json_string_value(json_object_get(row, "error"));
	if (!state)
		state = "error";
	json_t *f = json_pack("{s:s,s:s,s:O?,s:s?,s:s?,s:O?}", "id", id, "state", state, "exit_code", json_is_integer(ec) ? ec : NULL,
			      "limit", limit, "cause", why, "duration_s", json_is_number(dur) ? dur : NULL);
	_cleanup_free_ char *exit = !json_is_integer(ec) ? xstrdup("")
				    : !strcmp(state, "exited") ? xasprintf(" %lld", (long long)json_integer_value(ec))
							       : xasprintf(", exit %lld,", (long long)json_integer_value(ec));
	_cleanup_free_ char *after = json_is_number(dur) ? xasprintf(" after %.2fs", json_number_value(dur)) : xstrdup("");
	slog_event(!strcmp(state, "error") ? "error" : "info", "run_ended", f, "%s ended: %s%s%s%s%s", id, state, exit, after,
		   why ? ": " : "", why ? why : "");
}

/* who asked, into f and as words: "uid N", the address, or "an unknown peer" */
static char *peer_words(json_t *f, uid_t uid, const char *addr)
{
	if (addr) {
		json_object_set_new(f, "addr", json_string_lossy(addr));
		return xstrdup(addr);
	}
	json_object_set_new(f, "uid", uid == (uid_t)-1 ? json_null() : json_integer((json_int_t)uid));
	return uid == (uid_t)-1 ? xstrdup("an unknown peer") : xasprintf("uid %u", (unsigned)uid);
}

#define PATH_SHOWN 256  /* of a refused request's path, the bytes a line shows */

void slog_refused(const char *method, const char *path, int status, const char *reason, uid_t uid, const char *addr)
{
	_cleanup_free_ char *p = strndup(path ? path : "", PATH_SHOWN);
	json_t *f = json_pack("{s:o,s:o,s:i,s:o}", "method", json_string_lossy(method ? method : ""), "path",
			      json_string_lossy(p), "status", status, "reason", json_string_lossy(reason ? reason : ""));
	_cleanup_free_ char *who = peer_words(f, uid, addr);
	slog_event(status >= 500 && status != 503 ? "error" : "warn", "request_refused", f, "refused %s %s%s for %s: %d %s",
		   method ? method : "?", p, path && strlen(path) > PATH_SHOWN ? "..." : "", who, status, reason ? reason : "");
}

void slog_conn_refused(int status, const char *reason, uid_t uid, const char *addr)
{
	json_t *f = json_pack("{s:i,s:o}", "status", status, "reason", json_string_lossy(reason));
	_cleanup_free_ char *who = peer_words(f, uid, addr);
	slog_event("warn", "connection_refused", f, "refused a connection of %s: %d %s", who, status, reason);
}
