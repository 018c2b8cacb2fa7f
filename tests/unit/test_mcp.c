/* SPDX-License-Identifier: Apache-2.0 */
/* test_mcp.c - the pure parts of `warren mcp` (mcp/mcp.h), case by case: which protocol
 * version answers a client's, what a JSON-RPC message is (request, notification, response,
 * bad and why), a tool call's arguments against its parameters (each mistake one line naming
 * the argument), the inputSchema made of the same table, and what an exec's result keeps of a
 * long stream (its start and end, and a line naming what was cut). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "cli/mcp.h"

static void versions(void **state)
{
	(void)state;
	static const struct { const char *asked, *want; } rows[] = {
		{ "2025-11-25", "2025-11-25" }, { "2025-06-18", "2025-06-18" }, { "2025-03-26", "2025-03-26" },
		{ "2024-11-05", "2024-11-05" },
		{ "2024-10-07", "2025-11-25" },  /* one it does not speak: its newest, the client decides */
		{ "2099-01-01", "2025-11-25" }, { "", "2025-11-25" }, { NULL, "2025-11-25" },
	};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
		if (strcmp(mcp_version_pick(rows[i].asked), rows[i].want))
			fail_msg("asked %s: want %s, got %s", rows[i].asked ? rows[i].asked : "(none)", rows[i].want,
				 mcp_version_pick(rows[i].asked));
	assert_true(mcp_version_structured("2025-06-18"));
	assert_true(mcp_version_structured("2025-11-25"));
	assert_false(mcp_version_structured("2025-03-26"));
	assert_false(mcp_version_structured("2024-11-05"));
}

static void kinds(void **state)
{
	(void)state;
	static const struct { const char *msg; enum rpc_kind want; const char *why; } rows[] = {
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", RPC_REQUEST, NULL },
		{ "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/list\",\"params\":{}}", RPC_REQUEST, NULL },
		{ "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", RPC_NOTIFICATION, NULL },
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", RPC_RESPONSE, NULL },
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":1,\"message\":\"x\"}}", RPC_RESPONSE, NULL },
		{ "[1]", RPC_BAD, "a message must be a JSON object" },
		{ "{\"id\":1,\"method\":\"ping\"}", RPC_BAD, "\"jsonrpc\" must be \"2.0\"" },
		{ "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", RPC_BAD, "\"jsonrpc\" must be \"2.0\"" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", RPC_BAD, "\"id\" must be a string or an integer" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", RPC_BAD, "\"id\" must be a string or an integer" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1}", RPC_BAD, "a request needs \"method\"" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":3}", RPC_BAD, "\"method\" must be a string" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":\"x\"}", RPC_BAD, "\"params\" must be an object" },
	};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		json_t *m = json_loads(rows[i].msg, JSON_DECODE_ANY, NULL);
		const char *why;
		enum rpc_kind k = rpc_kind(m, &why);
		if (k != rows[i].want)
			fail_msg("%s: want kind %d, got %d", rows[i].msg, (int)rows[i].want, (int)k);
		if (rows[i].why && (!why || strncmp(why, rows[i].why, strlen(rows[i].why))))
			fail_msg("%s: want why '%s', got '%s'", rows[i].msg, rows[i].why, why ? why : "(none)");
		json_decref(m);
	}
}

static const struct mcp_param PARAMS[] = {
	{ "run_id", MT_STRING, true, "the session's run id" },
	{ "command", MT_COMMAND, false, "a command" },
	{ "env", MT_ENV, false, "variables" },
	{ "stdin", MT_TEXT, false, "input" },
	{ "timeout", MT_DURATION, false, "a limit" },
	{ NULL, 0, false, NULL },
};

static void args(void **state)
{
	(void)state;
	static const struct { const char *args; const char *why; } rows[] = {
		{ "{\"run_id\":\"run_x\"}", NULL },
		{ "{\"run_id\":\"r\",\"command\":\"make test\",\"env\":{\"CI\":\"1\",\"_A1\":\"\"},\"stdin\":\"\",\"timeout\":\"1h30m\"}", NULL },
		{ "{\"run_id\":\"r\",\"command\":[\"make\",\"\"],\"timeout\":null}", NULL },  /* null: as left out */
		{ "{}", "run_id is missing: the session's run id" },
		{ "{\"run_id\":null}", "run_id is missing" },
		{ "{\"run_id\":\"\"}", "run_id must be a non-empty string" },
		{ "{\"run_id\":\"a\\u0000b\"}", "run_id must be a non-empty string" },
		{ "{\"run_id\":1}", "run_id must be a non-empty string" },
		{ "{\"run_id\":\"r\",\"colour\":\"red\"}", "unknown argument 'colour'; the arguments are run_id, command, env, stdin and timeout" },
		{ "{\"run_id\":\"r\",\"command\":42}", "command must be a command line (a string) or a list of words" },
		{ "{\"run_id\":\"r\",\"command\":[]}", "command must be" },
		{ "{\"run_id\":\"r\",\"command\":[\"\"]}", "command must be" },
		{ "{\"run_id\":\"r\",\"command\":\"  \"}", "command must be" },
		{ "{\"run_id\":\"r\",\"command\":[\"ls\",3]}", "command must be" },
		{ "{\"run_id\":\"r\",\"env\":[\"A=1\"]}", "env must be an object of strings" },
		{ "{\"run_id\":\"r\",\"env\":{\"A=B\":\"1\"}}", "env: each name must be a variable's" },
		{ "{\"run_id\":\"r\",\"env\":{\"1A\":\"1\"}}", "env: each name must be a variable's" },
		{ "{\"run_id\":\"r\",\"env\":{\"A\":1}}", "env: each name must be a variable's" },
		{ "{\"run_id\":\"r\",\"stdin\":5}", "stdin must be a string" },
		{ "{\"run_id\":\"r\",\"timeout\":30}", "timeout must be a duration as a string (e.g. \"30s\"" },
		{ "{\"run_id\":\"r\",\"timeout\":\"soon\"}", "timeout must be a duration" },
		{ "{\"run_id\":\"r\",\"timeout\":\"0s\"}", "timeout must be a duration" },
	};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		json_t *a = json_loads(rows[i].args, JSON_ALLOW_NUL, NULL);
		assert_non_null(a);
		char *why = NULL;
		int r = mcp_args_check(PARAMS, a, &why);
		if (!rows[i].why && r != 0)
			fail_msg("%s: want ok, got '%s'", rows[i].args, why);
		if (rows[i].why && (r == 0 || !why || strncmp(why, rows[i].why, strlen(rows[i].why))))
			fail_msg("%s: want '%s', got '%s'", rows[i].args, rows[i].why, why ? why : "(ok)");
		if (why && strchr(why, '\n'))
			fail_msg("%s: more than one line: '%s'", rows[i].args, why);
		free(why);
		json_decref(a);
	}
	static const struct mcp_param none[] = { { NULL, 0, false, NULL } };
	json_t *a = json_pack("{s:i}", "x", 1);
	char *why = NULL;
	assert_int_equal(mcp_args_check(none, a, &why), -1);
	assert_string_equal(why, "unknown argument 'x'; this tool takes none");
	free(why);
	json_decref(a);
}

static void schema(void **state)
{
	(void)state;
	json_t *s = mcp_input_schema(PARAMS);
	char *t = json_dumps(s, JSON_COMPACT);
	assert_non_null(strstr(t, "\"type\":\"object\""));
	assert_non_null(strstr(t, "\"required\":[\"run_id\"]"));
	assert_non_null(strstr(t, "\"additionalProperties\":false"));
	assert_non_null(strstr(t, "\"command\":{\"anyOf\":[{\"type\":\"string\",\"minLength\":1},{\"type\":\"array\""));
	assert_non_null(strstr(t, "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}"));
	assert_non_null(strstr(t, "\"description\":\"the session's run id\""));
	free(t);
	json_decref(s);
	/* every tool's schema and output schema are JSON objects, each with a name */
	json_t *tools = mcp_tools_list(true), *tool;
	size_t i;
	assert_true(json_array_size(tools) >= 4);
	json_array_foreach(tools, i, tool) {
		assert_true(json_is_string(json_object_get(tool, "name")));
		assert_true(json_is_object(json_object_get(tool, "inputSchema")));
		assert_true(json_is_object(json_object_get(tool, "outputSchema")));
		assert_true(mcp_tool_known(json_string_value(json_object_get(tool, "name"))));
	}
	json_decref(tools);
	tools = mcp_tools_list(false);
	assert_null(json_object_get(json_array_get(tools, 0), "outputSchema"));
	json_decref(tools);
	assert_false(mcp_tool_known("no_such_tool"));
}

/* What o keeps of text fed in chunks of n. */
static char *kept(const char *text, size_t max, size_t n, bool *cut)
{
	struct mcp_out o;
	mcp_out_init(&o, max);
	for (size_t i = 0, len = strlen(text); i < len; i += n)
		mcp_out_add(&o, text + i, len - i < n ? len - i : n);
	json_t *j = mcp_out_json(&o, cut);
	char *s = strdup(json_string_value(j));
	json_decref(j);
	mcp_out_free(&o);
	return s;
}

static void out_clip(void **state)
{
	(void)state;
	static const struct { const char *text; size_t max, chunk; const char *want; bool cut; } rows[] = {
		{ "", 8, 1, "", false },
		{ "abc", 8, 1, "abc", false },
		{ "abcdefgh", 8, 3, "abcdefgh", false },                   /* just all of it */
		{ "abcdefghi", 8, 1, "abcd\n[warren: 1 bytes cut here; the exec's log in the run's record has them]\nfghi", true },
		{ "abcdefghijklmnop", 8, 5, "abcd\n[warren: 8 bytes cut here; the exec's log in the run's record has them]\nmnop", true },
		{ "abcdefghijklmnop", 8, 100, "abcd\n[warren: 8 bytes cut here; the exec's log in the run's record has them]\nmnop", true },
		{ "ab\xff", 8, 1, "ab\xef\xbf\xbd", false },               /* not UTF-8: U+FFFD */
	};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		bool cut;
		char *s = kept(rows[i].text, rows[i].max, rows[i].chunk, &cut);
		if (strcmp(s, rows[i].want) || cut != rows[i].cut)
			fail_msg("'%s' (max %zu, chunks of %zu): want '%s' (cut %d), got '%s' (cut %d)", rows[i].text, rows[i].max,
				 rows[i].chunk, rows[i].want, rows[i].cut, s, cut);
		free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(versions), cmocka_unit_test(kinds), cmocka_unit_test(args),
		cmocka_unit_test(schema), cmocka_unit_test(out_clip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
