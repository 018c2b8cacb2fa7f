/* SPDX-License-Identifier: Apache-2.0 */
/* test_slog.c - the server's log lines (serve/slog.h): text as "warren serve: MSG", JSON as one
 * object of time, level, event, msg and the event's fields; a control character of a request's
 * path or reason never starts a line of its own; a field cannot replace the line's own keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "serve/slog.h"

static const struct timespec AT = { .tv_sec = 1796593888, .tv_nsec = 383000000 };  /* 2026-12-06T21:51:28.383Z */

static void check(enum slog_format f, const char *msg, json_t *fields, const char *want)
{
	char *got = slog_format_line(f, &AT, "warn", "request_refused", msg, fields);
	if (strcmp(got, want))
		fail_msg("got  %s\nwant %s", got, want);
	free(got);
}

static void lines(void **state)
{
	(void)state;
	check(SLOG_TEXT, "run_X ended: exited 0 after 1.00s", json_pack("{s:s}", "id", "run_X"),
	      "warren serve: run_X ended: exited 0 after 1.00s\n");
	/* a newline (%0A in a URL, unescaped by libmicrohttpd), a carriage return, an escape */
	check(SLOG_TEXT, "refused GET /a\nwarren serve: forged\r\x1b[2J for uid 0", NULL,
	      "warren serve: refused GET /a?warren serve: forged??[2J for uid 0\n");
	check(SLOG_JSON, "refused GET /a\nb for uid 0", json_pack("{s:s,s:i,s:s}", "path", "/a\nb", "status", 404, "event", "forged"),
	      "{\"time\":\"2026-12-06T21:51:28.383Z\",\"level\":\"warn\",\"event\":\"request_refused\","
	      "\"msg\":\"refused GET /a?b for uid 0\",\"path\":\"/a\\nb\",\"status\":404}\n");
	check(SLOG_JSON, "started", NULL,
	      "{\"time\":\"2026-12-06T21:51:28.383Z\",\"level\":\"warn\",\"event\":\"request_refused\",\"msg\":\"started\"}\n");
}

static void formats(void **state)
{
	(void)state;
	enum slog_format f = SLOG_JSON;
	assert_int_equal(slog_parse_format("text", &f), 0);
	assert_int_equal(f, SLOG_TEXT);
	assert_int_equal(slog_parse_format("json", &f), 0);
	assert_int_equal(f, SLOG_JSON);
	assert_true(slog_parse_format("JSON", &f) < 0);
	assert_true(slog_parse_format("", &f) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines),
		cmocka_unit_test(formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
