/* SPDX-License-Identifier: Apache-2.0 */
/* mcp_tools.c - the tools of `warren mcp`, one table: each tool's name, description, parameters
 * (from which its inputSchema is made and a call's arguments are checked, one line for the first
 * mistake), outputSchema and what it does, on the caller's own state (mcp_local.c) or through a
 * warren serve (mcp_via.c). A result carries the structured answer as JSON text too (and as
 * structuredContent from protocol 2025-06-18 on); a failure is a result with isError and one
 * line, for the model to read and correct. A new tool is an entry of TOOLS and its function. */
#include "cli/mcp.h"

#include <errno.h>
#include <string.h>

#include "cli/files.h"
#include "cli/spec.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/units.h"
#include "util/words.h"

/* ---- arguments ---- */

static const char *const TYPE_NAMES[] = {
	[MT_STRING] = "a non-empty string",
	[MT_TEXT] = "a string",
	[MT_COMMAND] = "a command line (a string) or a list of words (strings)",
	[MT_ENV] = "an object of strings {\"NAME\": \"VALUE\"}",
	[MT_DURATION] = "a duration as a string (e.g. \"30s\", \"10m\", \"1h30m\")",
	[MT_BOOL] = "true or false",
};

/* A string of JSON without a NUL inside (jansson keeps \u0000), and not empty unless empty_ok. */
static bool plain_string(json_t *v, bool empty_ok)
{
	return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v) && (empty_ok || json_string_length(v));
}

static bool value_ok(enum mcp_type t, json_t *v)
{
	switch (t) {
	case MT_STRING: return plain_string(v, false);
	case MT_TEXT: return plain_string(v, true);
	case MT_COMMAND: {
		if (json_is_string(v))
			return plain_string(v, false) && strspn(json_string_value(v), " \t\n") < json_string_length(v);
		size_t i;
		json_t *w;
		if (!json_is_array(v) || !json_array_size(v))
			return false;
		json_array_foreach(v, i, w)
			if (!plain_string(w, i > 0))
				return false;
		return true;
	}
	case MT_ENV: {
		const char *k;
		json_t *w;
		if (!json_is_object(v))
			return false;
		json_object_foreach(v, k, w)
			if (!valid_env_name(k, strlen(k)) || !plain_string(w, true))
				return false;
		return true;
	}
	case MT_DURATION: {
		uint64_t ms;
		return plain_string(v, false) && parse_duration_ms(json_string_value(v), &ms) == 0 && ms > 0;
	}
	case MT_BOOL: return json_is_boolean(v);
	}
	return false;
}

/* "a, b and c": the names of params. */
static char *param_names(const struct mcp_param *params)
{
	char *s = xstrdup("");
	for (const struct mcp_param *p = params; p->name; p++) {
		char *n = xasprintf("%s%s%s", s, p == params ? "" : (p + 1)->name ? ", " : " and ", p->name);
		free(s);
		s = n;
	}
	return s;
}

int mcp_args_check(const struct mcp_param *params, json_t *args, char **why)
{
	*why = NULL;
	const char *k;
	json_t *v;
	json_object_foreach(args, k, v) {
		const struct mcp_param *p = params;
		while (p->name && strcmp(p->name, k))
			p++;
		_cleanup_free_ char *name = printable_name(k);
		if (!p->name) {
			_cleanup_free_ char *all = param_names(params);
			*why = *all ? xasprintf("unknown argument '%s'; the arguments are %s", name, all)
				    : xasprintf("unknown argument '%s'; this tool takes none", name);
			return -1;
		}
		if (json_is_null(v))
			continue;  /* as if left out (a required one is missing, below) */
		if (!value_ok(p->type, v)) {
			if (p->type == MT_ENV && json_is_object(v))
				*why = xasprintf("%s: each name must be a variable's (letters, digits, _; not first a digit) and each value a string",
						 name);
			else
				*why = xasprintf("%s must be %s", name, TYPE_NAMES[p->type]);
			return -1;
		}
	}
	for (const struct mcp_param *p = params; p->name; p++) {
		if (p->required && (!(v = json_object_get(args, p->name)) || json_is_null(v))) {
			*why = xasprintf("%s is missing: %s", p->name, p->description);
			return -1;
		}
	}
	return 0;
}

json_t *mcp_input_schema(const struct mcp_param *params)
{
	json_t *props = json_object(), *req = json_array();
	for (const struct mcp_param *p = params; p->name; p++) {
		json_t *s;
		switch (p->type) {
		case MT_COMMAND:
			s = json_pack("{s:[{s:s,s:i},{s:s,s:{s:s},s:i}]}", "anyOf", "type", "string", "minLength", 1, "type", "array",
				      "items", "type", "string", "minItems", 1);
			break;
		case MT_ENV: s = json_pack("{s:s,s:{s:s}}", "type", "object", "additionalProperties", "type", "string"); break;
		case MT_TEXT: s = json_pack("{s:s}", "type", "string"); break;
		case MT_BOOL: s = json_pack("{s:s}", "type", "boolean"); break;
		default: s = json_pack("{s:s,s:i}", "type", "string", "minLength", 1); break;
		}
		json_object_set_new(s, "description", json_string(p->description));
		json_object_set_new(props, p->name, s);
		if (p->required)
			json_array_append_new(req, json_string(p->name));
	}
	json_t *o = json_pack("{s:s,s:o,s:b}", "type", "object", "properties", props, "additionalProperties", false);
	if (json_array_size(req))
		json_object_set_new(o, "required", req);
	else
		json_decref(req);
	return o;
}

/* ---- the tools ---- */

static const char *arg(json_t *a, const char *name)
{
	return json_string_value(json_object_get(a, name));
}

char *mcp_worktree(const char *work, const char *given, char **why)
{
	_cleanup_free_ char *path = !given ? xstrdup(work) : given[0] == '/' ? xstrdup(given) : xasprintf("%s/%s", work, given);
	char *canon = abs_path(path);
	*why = NULL;
	if (!canon || !is_dir(canon)) {
		*why = xasprintf("worktree %s: %s; give a directory that exists", path, canon ? strerror(ENOTDIR) : strerror(errno));
	} else if (!path_beneath(canon, work)) {
		_cleanup_free_ char *that = strcmp(path, canon) ? xasprintf(" (that is %s)", canon) : xstrdup("");
		*why = xasprintf("worktree %s%s: not in %s, the directory warren mcp works in; give it or a directory below it "
				 "(or start warren mcp with --work DIR)", path, that, work);
	}
	if (*why) {
		free(canon);
		return NULL;
	}
	return canon;
}

static json_t *start_session(const struct mcp_conf *c, json_t *a, struct mcp_call *call, char **fail)
{
	_cleanup_free_ char *work = mcp_worktree(c->work, arg(a, "worktree"), fail);
	if (!work)
		return NULL;
	const struct mcp_start s = { .worktree = work, .image = arg(a, "image"), .net = arg(a, "net"), .idle = arg(a, "idle"),
				     .max = arg(a, "max"), .env = json_object_get(a, "env") };
	return c->via ? via_start(c, &s, fail) : local_start(c, &s, call, fail);
}

/* The session's exec request of a call's arguments: a command line is sh -c's. A call the
 * client cancels (or a server that ends first) closes the connection to the session, which
 * then stops the command (stop_on_close): MCP's server SHOULD stop what a cancel names. */
static json_t *exec_request(json_t *a)
{
	json_t *cmd = json_object_get(a, "command");
	json_t *req = json_pack("{s:o,s:b}", "command", json_is_string(cmd) ? json_pack("[s,s,O]", "sh", "-c", cmd) : json_incref(cmd),
				"stop_on_close", 1);
	static const char *const pass[] = { "env", "cwd", "stdin", "timeout", NULL };
	for (const char *const *k = pass; *k; k++) {
		json_t *v = json_object_get(a, *k);
		if (v && !json_is_null(v))
			json_object_set(req, *k, v);
	}
	return req;
}

static json_t *exec(const struct mcp_conf *c, json_t *a, struct mcp_call *call, char **fail)
{
	json_t *req = exec_request(a);
	json_t *r = c->via ? via_exec(c, arg(a, "run_id"), req, call, fail) : local_exec(c, arg(a, "run_id"), req, call, fail);
	json_decref(req);
	return r;
}

static json_t *end_session(const struct mcp_conf *c, json_t *a, struct mcp_call *call, char **fail)
{
	return c->via ? via_end(c, arg(a, "run_id"), call, fail) : local_end(c, arg(a, "run_id"), call, fail);
}

static json_t *list_sessions(const struct mcp_conf *c, json_t *a, struct mcp_call *call, char **fail)
{
	(void)a;
	(void)call;
	return c->via ? via_list(c, fail) : local_list(c, fail);
}

/* ---- a session's files (cli/files.h: done by the cell's executor, as the run user) ---- */

#define READ_MAX (256 * 1024)  /* what read_file gives the model of a file: its start */

static struct cli_files_at files_at(const struct mcp_conf *c)
{
	return (struct cli_files_at){ .state = c->state_path ? c->state_path : c->state, .via = c->via, .token_file = c->token };
}

static json_t *files_fail(struct error *err, char **fail)
{
	*fail = xstrdup(err->msg ? err->msg : "the file operation failed");
	error_clear(err);
	return NULL;
}

/* A file's text: UTF-8 without NUL (a model reads text); a binary file is refused, naming a way. */
static json_t *file_read_tool(const struct mcp_conf *c, json_t *a, struct mcp_call *call, char **fail)
{
	(void)call;
	struct cli_files_at at = files_at(c);
	struct error err = { 0 };
	size_t len = 0;
	_cleanup_free_ char *b = cli_file_read(&at, arg(a, "run_id"), arg(a, "path"), &len, &err);
	if (!b)
		return files_fail(&err, fail);
	size_t n = len > READ_MAX ? READ_MAX : len;
	while (n < len && n > 0 && ((unsigned char)b[n] & 0xc0) == 0x80)
		n--;  /* cut at a character's start */
	json_t *text = memchr(b, '\0', n) ? NULL : json_stringn(b, n);
	if (!text) {
		*fail = xasprintf("%s is not text (%zu bytes, not UTF-8 or with NUL bytes); read it with exec, e.g. "
				  "'base64 FILE' or 'od -c FILE | head'", arg(a, "path"), len);
		return NULL;
	}
	return json_pack("{s:s,s:s,s:o,s:I,s:b}", "run_id", arg(a, "run_id"), "path", arg(a, "path"), "content", text, "size",
			 (json_int_t)len, "truncated", n < len);
}

static json_t *file_write_tool(const struct mcp_conf *c, json_t *a, struct mcp_call *call, char **fail)
{
	(void)call;
	struct cli_files_at at = files_at(c);
	struct error err = { 0 };
	json_t *content = json_object_get(a, "content");
	size_t len = json_string_length(content);
	if (cli_file_write(&at, arg(a, "run_id"), arg(a, "path"), json_string_value(content), len, arg(a, "mode"),
			   json_is_true(json_object_get(a, "parents")), &err) < 0)
		return files_fail(&err, fail);
	return json_pack("{s:s,s:s,s:I}", "run_id", arg(a, "run_id"), "path", arg(a, "path"), "written", (json_int_t)len);
}

static json_t *file_list_tool(const struct mcp_conf *c, json_t *a, struct mcp_call *call, char **fail)
{
	(void)call;
	struct cli_files_at at = files_at(c);
	struct error err = { 0 };
	const char *path = arg(a, "path");
	json_t *l = cli_file_list(&at, arg(a, "run_id"), path ? path : ".", &err);
	if (!l)
		return files_fail(&err, fail);
	json_object_set_new(l, "run_id", json_string(arg(a, "run_id")));
	return l;
}

#define RUN_ID_PARAM { "run_id", MT_STRING, true, "the session's run id (run_..., from start_session)" }

static const struct mcp_param START_PARAMS[] = {
	{ "worktree", MT_STRING, false, "the directory the session works on: read-write, at the same path in the cell, "
	  "the commands' working directory; the project warren mcp was started in or a directory below it (absolute, or "
	  "relative to the project; default: the project)" },
	{ "image", MT_STRING, false, "a stored image as the cell's root file system ('warren image ls'; default: the host's / read-only)" },
	{ "net", MT_STRING, false, "the network: none (the default: loopback only), nat (the internet, not the host's private "
	  "ranges), allow=LIST (only to these names or addresses, e.g. pypi.org:443,github.com)" },
	{ "idle", MT_DURATION, false, "end the session after this long without an exec (default 10m)" },
	{ "max", MT_DURATION, false, "end the session after this long, whatever it does (default 8h)" },
	{ "env", MT_ENV, false, "variables for every command of the session ($TMPDIR is always /tmp)" },
	{ NULL, 0, false, NULL },
};
static const struct mcp_param EXEC_PARAMS[] = {
	RUN_ID_PARAM,
	{ "command", MT_COMMAND, true, "a command line (run by sh -c), or a list of words run as they are, e.g. [\"make\", \"test\"]" },
	{ "env", MT_ENV, false, "variables for this command, over the session's" },
	{ "cwd", MT_STRING, false, "where it runs: relative to the worktree, or absolute (default: the worktree)" },
	{ "stdin", MT_TEXT, false, "its standard input, as text (default: none)" },
	{ "timeout", MT_DURATION, false, "its time limit (e.g. 30s, 10m): SIGTERM, then SIGKILL, to every process it started "
	  "(default: none, the session's own limits hold)" },
	{ NULL, 0, false, NULL },
};
#define PATH_DOC "a path in the cell: absolute, or relative to the worktree; only below the worktree, /tmp and the home"
static const struct mcp_param READ_PARAMS[] = {
	RUN_ID_PARAM,
	{ "path", MT_STRING, true, "the file to read (text; its first 256 KiB): " PATH_DOC },
	{ NULL, 0, false, NULL },
};
static const struct mcp_param WRITE_PARAMS[] = {
	RUN_ID_PARAM,
	{ "path", MT_STRING, true, "the file to write (created, or its old content replaced): " PATH_DOC },
	{ "content", MT_TEXT, true, "the file's whole new content, as text" },
	{ "mode", MT_STRING, false, "its permissions in octal, e.g. \"0755\" for a script (default: 0644 for a new file)" },
	{ "parents", MT_BOOL, false, "make the directories above it that are missing (default: false)" },
	{ NULL, 0, false, NULL },
};
static const struct mcp_param LIST_PARAMS[] = {
	RUN_ID_PARAM,
	{ "path", MT_STRING, false, "the directory to list (default: the worktree): " PATH_DOC },
	{ NULL, 0, false, NULL },
};
static const struct mcp_param END_PARAMS[] = { RUN_ID_PARAM, { NULL, 0, false, NULL } };
static const struct mcp_param NO_PARAMS[] = { { NULL, 0, false, NULL } };

#define NUL_OR(t) "{\"type\":[\"" t "\",\"null\"]}"
static const char START_OUT[] =
	"{\"type\":\"object\",\"required\":[\"run_id\",\"state\"],\"properties\":{\"run_id\":{\"type\":\"string\"},"
	"\"state\":{\"type\":\"string\"},\"worktree\":{\"type\":\"string\"},\"idle\":{\"type\":\"string\"},\"max\":{\"type\":\"string\"}}}";
static const char EXEC_OUT[] =
	"{\"type\":\"object\",\"required\":[\"run_id\",\"exit_code\",\"signal\",\"cause\",\"stdout\",\"stderr\",\"duration_ms\"],"
	"\"properties\":{\"run_id\":{\"type\":\"string\"},\"exec\":{\"type\":\"integer\"},\"exit_code\":" NUL_OR("integer") ","
	"\"signal\":" NUL_OR("string") ",\"cause\":" NUL_OR("string") ",\"stdout\":{\"type\":\"string\"},"
	"\"stderr\":{\"type\":\"string\"},\"stdout_truncated\":{\"type\":\"boolean\"},\"stderr_truncated\":{\"type\":\"boolean\"},"
	"\"duration_ms\":{\"type\":\"integer\"}}}";
static const char END_OUT[] =
	"{\"type\":\"object\",\"required\":[\"run_id\",\"state\"],\"properties\":{\"run_id\":{\"type\":\"string\"},"
	"\"state\":{\"type\":\"string\"},\"status\":" NUL_OR("string") ",\"exit_code\":" NUL_OR("integer") "}}";
static const char LIST_OUT[] =
	"{\"type\":\"object\",\"required\":[\"sessions\"],\"properties\":{\"sessions\":{\"type\":\"array\",\"items\":"
	"{\"type\":\"object\",\"required\":[\"run_id\"],\"properties\":{\"run_id\":{\"type\":\"string\"},"
	"\"worktree\":" NUL_OR("string") ",\"image\":" NUL_OR("string") ",\"net\":" NUL_OR("string") ","
	"\"started_at\":" NUL_OR("string") "}}}}}";

static const char READ_OUT[] =
	"{\"type\":\"object\",\"required\":[\"run_id\",\"path\",\"content\",\"size\",\"truncated\"],\"properties\":"
	"{\"run_id\":{\"type\":\"string\"},\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"},"
	"\"size\":{\"type\":\"integer\"},\"truncated\":{\"type\":\"boolean\"}}}";
static const char WRITE_OUT[] =
	"{\"type\":\"object\",\"required\":[\"run_id\",\"path\",\"written\"],\"properties\":{\"run_id\":{\"type\":\"string\"},"
	"\"path\":{\"type\":\"string\"},\"written\":{\"type\":\"integer\"}}}";
static const char LS_OUT[] =
	"{\"type\":\"object\",\"required\":[\"run_id\",\"path\",\"entries\"],\"properties\":{\"run_id\":{\"type\":\"string\"},"
	"\"path\":{\"type\":\"string\"},\"truncated\":{\"type\":\"boolean\"},\"entries\":{\"type\":\"array\",\"items\":"
	"{\"type\":\"object\",\"required\":[\"name\",\"type\"],\"properties\":{\"name\":{\"type\":\"string\"},"
	"\"type\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},\"mode\":{\"type\":\"string\"},"
	"\"mtime\":" NUL_OR("string") ",\"target\":" NUL_OR("string") "}}}}}";

struct mcp_tool {
	const char *name, *title, *description;
	const struct mcp_param *params;
	const char *output;       /* its outputSchema, JSON */
	bool read_only, destructive, idempotent, open_world;
	json_t *(*run)(const struct mcp_conf *c, json_t *args, struct mcp_call *call, char **fail);
};

static const struct mcp_tool TOOLS[] = {
	{ "start_session", "Start a session",
	  "Start a session: a sandboxed cell on a worktree that stays up for exec, until end_session or its idle time. "
	  "Returns its run_id. In the cell $TMPDIR is /tmp (the cell's own), the user is unprivileged, the host's /tmp and "
	  "other runs are out of sight; only the worktree (and /tmp, $HOME) may be written.",
	  START_PARAMS, START_OUT, false, false, false, false, start_session },
	{ "exec", "Run a command in a session",
	  "Run a command in a live session's cell and wait for its end: exit_code (124 when its timeout stopped it), "
	  "signal, cause (why warren stopped it), stdout and stderr (their start and end when long), duration_ms. Files, "
	  "/tmp and processes left in the background stay between execs.",
	  EXEC_PARAMS, EXEC_OUT, false, true, false, true, exec },
	{ "end_session", "End a session",
	  "End a live session: its processes are stopped and everything it wrote outside its worktree is reclaimed; "
	  "the worktree stays.",
	  END_PARAMS, END_OUT, false, true, true, false, end_session },
	{ "read_file", "Read a file of a session",
	  "Read a text file in a live session's cell, as the session's user sees it (its first 256 KiB; truncated says "
	  "when there is more). A binary file is refused: use exec.",
	  READ_PARAMS, READ_OUT, true, false, true, false, file_read_tool },
	{ "write_file", "Write a file of a session",
	  "Write a text file in a live session's cell as the session's user: created, or its content replaced.",
	  WRITE_PARAMS, WRITE_OUT, false, true, true, false, file_write_tool },
	{ "list_files", "List a directory of a session",
	  "List a directory in a live session's cell: each entry's name, type, size, mode, mtime (and a link's target).",
	  LIST_PARAMS, LS_OUT, true, false, true, false, file_list_tool },
	{ "list_sessions", "List live sessions", "The live sessions of this caller: run_id, worktree, image, network, start time.",
	  NO_PARAMS, LIST_OUT, true, false, true, false, list_sessions },
};
#define N_TOOLS (sizeof TOOLS / sizeof *TOOLS)

static const struct mcp_tool *tool_find(const char *name)
{
	for (size_t i = 0; i < N_TOOLS; i++)
		if (!strcmp(TOOLS[i].name, name))
			return &TOOLS[i];
	return NULL;
}

bool mcp_tool_known(const char *name)
{
	return tool_find(name) != NULL;
}

json_t *mcp_tools_list(bool structured)
{
	json_t *list = json_array();
	for (size_t i = 0; i < N_TOOLS; i++) {
		const struct mcp_tool *t = &TOOLS[i];
		json_t *o = json_pack("{s:s,s:s,s:s,s:o,s:{s:s,s:b,s:b,s:b,s:b}}", "name", t->name, "title", t->title, "description",
				      t->description, "inputSchema", mcp_input_schema(t->params), "annotations", "title", t->title,
				      "readOnlyHint", t->read_only, "destructiveHint", t->destructive, "idempotentHint",
				      t->idempotent, "openWorldHint", t->open_world);
		if (structured)
			json_object_set_new(o, "outputSchema", json_loads(t->output, 0, NULL));
		json_array_append_new(list, o);
	}
	return list;
}

static json_t *result_fail(const char *line)
{
	return json_pack("{s:[{s:s,s:o}],s:b}", "content", "type", "text", "text", json_string_lossy(line), "isError", true);
}

json_t *mcp_tool_call(const struct mcp_conf *conf, const char *name, json_t *args, bool structured, struct mcp_call *call)
{
	const struct mcp_tool *t = tool_find(name);
	_cleanup_free_ char *why = NULL;
	json_t *none = NULL;
	if (!args || json_is_null(args))
		args = none = json_object();
	json_t *r = mcp_args_check(t->params, args, &why) < 0 ? NULL : t->run(conf, args, call, &why);
	json_decref(none);
	if (!r)
		return result_fail(why ? why : "the tool failed");
	char *text = json_dumps(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_t *res = json_pack("{s:[{s:s,s:s}]}", "content", "type", "text", "text", text ? text : "{}");
	free(text);
	if (structured)
		json_object_set_new(res, "structuredContent", r);
	else
		json_decref(r);
	return res;
}
