/* SPDX-License-Identifier: Apache-2.0 */
/* test_session.c - a session's pure parts (job/session.h): when it is due to end (idle, max),
 * what an exec request is made of (and the one line for each mistake; a NUL only in stdin;
 * stop_on_close strictly a boolean),
 * output shown as UTF-8 (invalid bytes as U+FFFD), and an exec's command as its record keeps
 * it (cut to a bound). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "job/session.h"

static void test_due(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		double lived, quiet;
		size_t running;
		enum session_due want;
	} rows[] = {
		{ "young and busy", 1, 1, 0, SESSION_GOES_ON },
		{ "quiet just under idle", 9.99, 9.99, 0, SESSION_GOES_ON },
		{ "quiet for idle", 10, 10, 0, SESSION_IDLE },
		{ "quiet for idle but an exec runs: it goes on", 30, 20, 1, SESSION_GOES_ON },
		{ "at max, busy: max", 60, 0, 3, SESSION_MAX },
		{ "at max and idle: max is named", 60, 60, 0, SESSION_MAX },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		enum session_due got = session_due(rows[i].lived, rows[i].quiet, rows[i].running, 10000, 60000);
		if (got != rows[i].want)
			fail_msg("%s: got %d, want %d", rows[i].what, got, rows[i].want);
	}
}

static void test_parse(void **state)
{
	(void)state;
	static const struct {
		const char *json;
		const char *why;          /* NULL: accepted */
		const char *argv0, *env0, *cwd, *in;
		uint64_t timeout_ms;
		bool stream;
	} rows[] = {
		{ "{\"command\":[\"sh\",\"-c\",\"x\"]}", NULL, "sh", NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"env\":{\"A\":\"1\"},\"cwd\":\"sub\",\"stdin\":\"hi\",\"timeout\":\"30s\",\"stream\":true}", NULL,
		  "ls", "A=1", "sub", "hi", 30000, true },
		{ "{\"command\":[\"ls\"],\"env\":[\"B=2\"],\"timeout\":1500,\"keep\":true}", NULL, "ls", "B=2", NULL, NULL, 1500, false },
		{ "{}", "command must be a non-empty list of strings", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[]}", "command must be a non-empty list of strings", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"a\",1]}", "command must be a non-empty list of strings", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":\"ls\"}", "command must be a non-empty list of strings", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"env\":{\"A=B\":\"1\"}}", "env: each entry must be \"NAME\": \"VALUE\"", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"env\":[\"novalue\"]}", "env: each entry must be a string NAME=VALUE", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"env\":\"A=1\"}", "env must be an object", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"cwd\":\"\"}", "cwd must be a directory's path", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"stdin\":5}", "stdin must be a string", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"timeout\":\"soon\"}", "timeout must be a duration", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"timeout\":0}", "timeout must be a duration", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"stream\":\"yes\"}", "stream must be true or false", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"cat\"],\"stdin\":\"a\\u0000b\"}", NULL, "cat", NULL, NULL, "a", 0, false }, /* (its 3 bytes: below) */
		{ "{\"command\":[\"echo\",\"a\\u0000b\"]}", "command: an argument holds a NUL character", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"env\":{\"A\":\"1\\u0000\"}}", "env: each entry must be \"NAME\": \"VALUE\"", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"env\":[\"A=\\u0000\"]}", "env: each entry must be a string NAME=VALUE", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"cwd\":\"a\\u0000\"}", "cwd must be a directory's path", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"keep\":1}", "keep must be true or false", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"stop_on_close\":true}", NULL, "ls", NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"stop_on_close\":false,\"stream\":true}", NULL, "ls", NULL, NULL, NULL, 0, true },
		{ "{\"command\":[\"ls\"],\"stop_on_close\":null}", "stop_on_close must be true or false", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"stop_on_close\":1}", "stop_on_close must be true or false", NULL, NULL, NULL, NULL, 0, false },
		{ "{\"command\":[\"ls\"],\"stop_on_close\":\"true\"}", "stop_on_close must be true or false", NULL, NULL, NULL, NULL, 0, false },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		json_t *j = json_loads(rows[i].json, JSON_ALLOW_NUL, NULL);  /* (as the session reads them) */
		assert_non_null(j);
		struct exec_req x;
		const char *why = NULL;
		int r = session_parse_exec(j, &x, &why);
		json_decref(j);
		if (rows[i].why) {
			if (r == 0 || !why || strncmp(why, rows[i].why, strlen(rows[i].why)))
				fail_msg("%s: want the refusal '%s', got %d '%s'", rows[i].json, rows[i].why, r, why ? why : "(none)");
			continue;
		}
		if (r < 0)
			fail_msg("%s: refused: %s", rows[i].json, why);
		assert_string_equal(x.argv[0], rows[i].argv0);
		if (rows[i].env0)
			assert_string_equal(x.env[0], rows[i].env0);
		else
			assert_null(x.env[0]);
		if (rows[i].cwd)
			assert_string_equal(x.cwd, rows[i].cwd);
		else
			assert_null(x.cwd);
		if (rows[i].in)
			assert_string_equal(x.stdin_text, rows[i].in);
		else
			assert_null(x.stdin_text);
		assert_int_equal(x.timeout_ms, rows[i].timeout_ms);
		assert_int_equal(x.stream, rows[i].stream);
		if (strstr(rows[i].json, "\\u0000")) {
			assert_int_equal(x.stdin_len, 3);
			assert_memory_equal(x.stdin_text, "a\0b", 3);
		}
		assert_int_equal(x.keep, strstr(rows[i].json, "\"keep\":true") != NULL);
		assert_int_equal(x.stop_on_close, strstr(rows[i].json, "\"stop_on_close\":true") != NULL);
		exec_req_free(&x);
	}
}

static void test_utf8(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		size_t len;
		const char *want;
	} rows[] = {
		{ "plain\n", 6, "plain\n" },
		{ "caf\xc3\xa9", 5, "caf\xc3\xa9" },
		{ "\xe2\x9c\x94 ok", 6, "\xe2\x9c\x94 ok" },
		{ "\xf0\x9f\x90\x87", 4, "\xf0\x9f\x90\x87" },
		{ "a\xffz", 3, "a\xef\xbf\xbdz" },
		{ "cut \xe2\x9c", 6, "cut \xef\xbf\xbd\xef\xbf\xbd" },                /* a sequence cut at the end */
		{ "\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd" },                         /* overlong '/' */
		{ "\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },          /* a surrogate */
		{ "a\0b", 3, "a\xef\xbf\xbd" "b" },                                     /* NUL: not in a JSON string */
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		size_t l;
		char *got = utf8_lossy(rows[i].in, rows[i].len, &l);
		assert_int_equal(l, strlen(rows[i].want));
		assert_memory_equal(got, rows[i].want, l);
		free(got);
	}
}

static void test_command(void **state)
{
	(void)state;
	static const struct {
		const char *what;
		const char *argv[4];
		size_t max;
		const char *want;  /* the list as JSON */
		size_t bytes;
		bool cut;
	} rows[] = {
		{ "under the bound: whole", { "sh", "-c", "make test", NULL }, 64, "[\"sh\", \"-c\", \"make test\"]", 16, false },
		{ "exactly the bound", { "abcd", "ef", NULL }, 6, "[\"abcd\", \"ef\"]", 8, false },
		{ "the argument that crosses it cut, those after left out", { "abcd", "efgh", "ij", NULL }, 6,
		  "[\"abcd\", \"ef\"]", 13, true },
		{ "cut at a character's start", { "\xc3\xa9\xc3\xa9\xc3\xa9", NULL }, 3, "[\"\xc3\xa9\"]", 7, true },
		{ "nothing of one left: left out", { "abc", "\xe2\x9c\x94", NULL }, 4, "[\"abc\"]", 8, true },
		{ "an empty argument kept", { "a", "", NULL }, 8, "[\"a\", \"\"]", 3, false },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		size_t bytes;
		bool cut;
		json_t *got = session_command_json((char **)rows[i].argv, rows[i].max, &bytes, &cut);
		json_t *want = json_loads(rows[i].want, 0, NULL);
		if (!json_equal(got, want) || bytes != rows[i].bytes || cut != rows[i].cut) {
			char *g = json_dumps(got, 0);
			fail_msg("%s: got %s, %zu bytes, cut %d", rows[i].what, g, bytes, cut);
		}
		json_decref(got);
		json_decref(want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
