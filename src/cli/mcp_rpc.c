/* SPDX-License-Identifier: Apache-2.0 */
/* mcp_rpc.c - `warren mcp`'s protocol: JSON-RPC 2.0 over stdio as MCP's stdio transport has it (one
 * message a line, UTF-8, no newline inside one; nothing else on stdout: what else would write
 * there goes to stderr), the lifecycle (initialize with its version, notifications/initialized,
 * ping), tools/list and tools/call. Each tools/call runs in a thread of its own, so that a long
 * exec holds up neither pings nor other calls; its answer is written when it ends, unless the
 * client cancelled it. A batch (an array, which 2025-03-26 has) is answered as one array. */
#include "cli/mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "run/rundir.h"
#include "util/fs.h"
#include "util/error.h"
#include "util/words.h"

const char *const MCP_VERSIONS[] = { "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL };

const char *mcp_version_pick(const char *asked)
{
	for (size_t i = 0; asked && MCP_VERSIONS[i]; i++)
		if (!strcmp(asked, MCP_VERSIONS[i]))
			return MCP_VERSIONS[i];
	return MCP_VERSIONS[0];
}

bool mcp_version_structured(const char *version)
{
	/* the versions are dates: later ones sort after */
	return version && strcmp(version, "2025-06-18") >= 0;
}

enum rpc_kind rpc_kind(json_t *msg, const char **why)
{
	*why = NULL;
	if (!json_is_object(msg)) {
		*why = "a message must be a JSON object (a request, a notification or a response)";
		return RPC_BAD;
	}
	if (!json_is_string(json_object_get(msg, "jsonrpc")) || strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0")) {
		*why = "\"jsonrpc\" must be \"2.0\"";
		return RPC_BAD;
	}
	json_t *id = json_object_get(msg, "id"), *method = json_object_get(msg, "method"), *params = json_object_get(msg, "params");
	if (id && !json_is_string(id) && !json_is_integer(id)) {
		*why = "\"id\" must be a string or an integer";
		return RPC_BAD;
	}
	if (!method) {
		if (id && (json_object_get(msg, "result") || json_object_get(msg, "error")))
			return RPC_RESPONSE;
		*why = "a request needs \"method\" (a string)";
		return RPC_BAD;
	}
	if (!json_is_string(method)) {
		*why = "\"method\" must be a string";
		return RPC_BAD;
	}
	if (params && !json_is_object(params) && !json_is_array(params)) {
		*why = "\"params\" must be an object";
		return RPC_BAD;
	}
	return id ? RPC_REQUEST : RPC_NOTIFICATION;
}

double mcp_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- the server ---- */

struct mcp_server {
	struct mcp_conf conf;
	int out;                  /* the protocol's descriptor: the caller's stdout */
	pthread_mutex_t mu;       /* out, calls[], version */
	const char *version;      /* negotiated by initialize (NULL: not yet) */
	struct mcp_call *calls[MCP_CALLS_MAX];
};

/* Send one message (taken) as a line. */
static void send_msg(struct mcp_server *s, json_t *m)
{
	char *t = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	if (!t)
		return;
	size_t n = strlen(t);
	t[n] = '\n';  /* (the NUL dropped: the line is written with its length) */
	pthread_mutex_lock(&s->mu);
	(void)write_all(s->out, t, n + 1);
	pthread_mutex_unlock(&s->mu);
	free(t);
}

static json_t *reply(json_t *id, json_t *result)
{
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "result", result);
}

static json_t *reply_error(json_t *id, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static json_t *reply_error(json_t *id, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *m = xvasprintf(fmt, ap);
	va_end(ap);
	return json_pack("{s:s,s:O,s:{s:i,s:o}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", "code", code,
			 "message", json_string_lossy(m));
}

void mcp_call_progress(struct mcp_call *c, const char *message)
{
	double now = mcp_now();
	if (!c || !c->token || now - c->told < MCP_PROGRESS_S)
		return;
	c->told = now;
	json_t *p = json_pack("{s:O,s:i,s:s}", "progressToken", c->token, "progress", ++c->progress, "message", message);
	send_msg(c->srv, json_pack("{s:s,s:s,s:o}", "jsonrpc", "2.0", "method", "notifications/progress", "params", p));
}

bool mcp_call_cancelled(struct mcp_call *c)
{
	return c && atomic_load(&c->cancelled);
}

/* notifications/cancelled: the call of that request id (if it runs) is told; it sends no answer. */
static void cancel(struct mcp_server *s, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; rid && i < MCP_CALLS_MAX; i++)
		if (s->calls[i] && json_equal(s->calls[i]->id, rid))
			atomic_store(&s->calls[i]->cancelled, true);
	pthread_mutex_unlock(&s->mu);
}

static void call_free(struct mcp_call *c)
{
	json_decref(c->id);
	json_decref(c->token);
	free(c);
}

struct call_job {
	struct mcp_call *c;
	char *name;
	json_t *args;
	bool structured;
	size_t slot;
};

static void *call_thread(void *arg)
{
	struct call_job *j = arg;
	struct mcp_server *s = j->c->srv;
	json_t *r = mcp_tool_call(&s->conf, j->name, j->args, j->structured, j->c);
	pthread_mutex_lock(&s->mu);
	s->calls[j->slot] = NULL;
	pthread_mutex_unlock(&s->mu);
	if (mcp_call_cancelled(j->c))
		json_decref(r);
	else
		send_msg(s, reply(j->c->id, r));
	call_free(j->c);
	json_decref(j->args);
	free(j->name);
	free(j);
	return NULL;
}

/* tools/call: checked, then run in a thread of its own (its answer sent when it ends: NULL
 * here), or at once when inline (a batch's). */
static json_t *tools_call(struct mcp_server *s, json_t *id, json_t *params, bool inline_call)
{
	json_t *name = json_object_get(params, "name"), *args = json_object_get(params, "arguments");
	if (!json_is_string(name))
		return reply_error(id, RPC_PARAMS, "tools/call needs \"name\", the tool's name (see tools/list)");
	if (!mcp_tool_known(json_string_value(name))) {
		_cleanup_free_ char *n = printable_name(json_string_value(name));
		return reply_error(id, RPC_PARAMS, "Unknown tool: %s (see tools/list)", n);
	}
	if (args && !json_is_object(args) && !json_is_null(args))
		return reply_error(id, RPC_PARAMS, "tools/call: \"arguments\" must be an object of the tool's parameters");
	pthread_mutex_lock(&s->mu);
	bool structured = mcp_version_structured(s->version ? s->version : MCP_VERSIONS[0]);
	size_t slot = 0;
	while (slot < MCP_CALLS_MAX && s->calls[slot])
		slot++;
	pthread_mutex_unlock(&s->mu);
	struct mcp_call *c = xcalloc(1, sizeof *c);
	c->srv = s;
	/* copies: the call's thread owns them (the message is freed here) */
	c->id = json_deep_copy(id);
	c->token = json_deep_copy(json_object_get(json_object_get(params, "_meta"), "progressToken"));
	c->started = c->told = mcp_now();
	if (inline_call) {
		json_t *r = mcp_tool_call(&s->conf, json_string_value(name), args, structured, c);
		call_free(c);
		return reply(id, r);
	}
	if (slot == MCP_CALLS_MAX) {
		call_free(c);
		return reply_error(id, RPC_INTERNAL, "%d tool calls already run at once; wait for one to end", MCP_CALLS_MAX);
	}
	struct call_job *j = xcalloc(1, sizeof *j);
	*j = (struct call_job){ .c = c, .name = xstrdup(json_string_value(name)), .args = json_deep_copy(args),
				.structured = structured, .slot = slot };
	pthread_mutex_lock(&s->mu);
	s->calls[slot] = c;
	pthread_mutex_unlock(&s->mu);
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_t t;
	int e = pthread_create(&t, &at, call_thread, j);
	pthread_attr_destroy(&at);
	if (e) {
		pthread_mutex_lock(&s->mu);
		s->calls[slot] = NULL;
		pthread_mutex_unlock(&s->mu);
		json_t *r = reply_error(id, RPC_INTERNAL, "cannot start a thread for the call: %s", strerror(e));
		call_free(c);
		json_decref(j->args);
		free(j->name);
		free(j);
		return r;
	}
	return NULL;
}

static const char INSTRUCTIONS[] =
	"warren runs commands in a sandbox of their own on this machine (a cell): start_session makes one on a "
	"worktree (the project warren mcp was started in, or a directory below it; the cell may write it), exec runs commands "
	"in it (files, /tmp and processes left running in the background stay between execs), end_session ends "
	"it and reclaims everything but the worktree. In the cell $TMPDIR is /tmp, the cell's own; the user is "
	"unprivileged; the network is off unless start_session's net says otherwise. A session ends by itself "
	"after its idle time without an exec (10m unless given).";

static json_t *initialize(struct mcp_server *s, json_t *id, json_t *params)
{
	json_t *v = json_object_get(params, "protocolVersion");
	if (!json_is_string(v))
		return reply_error(id, RPC_PARAMS, "initialize needs \"protocolVersion\" (a string, e.g. \"%s\")", MCP_VERSIONS[0]);
	pthread_mutex_lock(&s->mu);
	s->version = mcp_version_pick(json_string_value(v));
	const char *ver = s->version;
	pthread_mutex_unlock(&s->mu);
	json_t *r = json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s,s:s},s:s}", "protocolVersion", ver, "capabilities", "tools",
			      "listChanged", false, "serverInfo", "name", "warren", "title", "warren", "version",
			      warren_version(), "instructions", INSTRUCTIONS);
	return reply(id, r);
}

/* One message: its answer (new reference), or NULL (a notification, a response, a call that
 * answers when it ends). inline_call: a batch's tools/call, answered here. */
static json_t *handle(struct mcp_server *s, json_t *m, bool inline_call)
{
	const char *why;
	enum rpc_kind k = rpc_kind(m, &why);
	json_t *id = json_object_get(m, "id");
	if (k == RPC_BAD)
		return reply_error(json_is_string(id) || json_is_integer(id) ? id : NULL, RPC_INVALID, "Invalid Request: %s", why);
	if (k == RPC_RESPONSE)
		return NULL;
	const char *method = json_string_value(json_object_get(m, "method"));
	json_t *params = json_object_get(m, "params");
	if (k == RPC_NOTIFICATION) {
		if (!strcmp(method, "notifications/cancelled"))
			cancel(s, params);
		return NULL;  /* notifications/initialized and those of other capabilities: nothing to do */
	}
	if (json_is_array(params))
		return reply_error(id, RPC_PARAMS, "%s takes its params by name (an object)", method);
	if (!strcmp(method, "initialize"))
		return initialize(s, id, params);
	if (!strcmp(method, "ping"))
		return reply(id, json_object());
	if (!strcmp(method, "tools/list")) {
		pthread_mutex_lock(&s->mu);
		bool st = mcp_version_structured(s->version ? s->version : MCP_VERSIONS[0]);
		pthread_mutex_unlock(&s->mu);
		return reply(id, json_pack("{s:o}", "tools", mcp_tools_list(st)));
	}
	if (!strcmp(method, "tools/call"))
		return tools_call(s, id, params, inline_call);
	_cleanup_free_ char *name = printable_name(method);
	return reply_error(id, RPC_NO_METHOD, "Method not found: %s (warren mcp has initialize, ping, tools/list, tools/call)", name);
}

/* One line from the client. */
static void line(struct mcp_server *s, const char *l, size_t n)
{
	while (n && (l[n - 1] == '\r' || l[n - 1] == ' ' || l[n - 1] == '\t'))
		n--;
	size_t i = 0;
	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i == n)
		return;
	json_error_t je;
	json_t *m = json_loadb(l, n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (!m) {
		send_msg(s, reply_error(NULL, RPC_PARSE, "Parse error: %s (at character %d); each message is one line of JSON", je.text,
					je.position));
		return;
	}
	if (!json_is_array(m)) {
		json_t *r = handle(s, m, false);
		if (r)
			send_msg(s, r);
	} else if (!json_array_size(m)) {
		send_msg(s, reply_error(NULL, RPC_INVALID, "Invalid Request: an empty batch"));
	} else {
		json_t *all = json_array(), *e;
		size_t k;
		json_array_foreach(m, k, e) {
			json_t *r = handle(s, e, true);
			if (r)
				json_array_append_new(all, r);
		}
		if (json_array_size(all))
			send_msg(s, all);
		else
			json_decref(all);
	}
	json_decref(m);
}

/* Read the client's lines from fd 0 until it closes it; a line over MCP_LINE_MAX is skipped to
 * its end and answered -32600. */
static void serve_stdin(struct mcp_server *s)
{
	size_t cap = 65536, len = 0;
	char *b = xmalloc(cap);
	bool skipping = false;
	for (;;) {
		if (len == cap)
			b = xrealloc(b, cap *= 2);
		ssize_t r = read(0, b + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t start = 0, scan = len;
		len += (size_t)r;
		for (size_t i = scan; i < len; i++) {
			if (b[i] != '\n')
				continue;
			if (!skipping)
				line(s, b + start, i - start);
			skipping = false;
			start = i + 1;
		}
		memmove(b, b + start, len - start);
		len -= start;
		if (len > MCP_LINE_MAX) {
			if (!skipping)
				send_msg(s, reply_error(NULL, RPC_INVALID, "Invalid Request: a message over %d bytes", MCP_LINE_MAX));
			skipping = true;
			len = 0;
		}
		local_reap();
	}
	if (len && !skipping)
		line(s, b, len);
	free(b);
}

static bool calls_running(struct mcp_server *s)
{
	bool any = false;
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < MCP_CALLS_MAX; i++)
		any |= s->calls[i] != NULL;
	pthread_mutex_unlock(&s->mu);
	return any;
}

static const char MCP_HELP[] =
	"usage: warren mcp [--work DIR] [--state DIR | --via SOCKET [--token-file F]]\n\n"
	"An MCP server (Model Context Protocol) on standard input and output, for coding agents:\n"
	"its tools start a session (a cell that stays up on a worktree: 'warren run --session'),\n"
	"exec commands in it and end it, as you: on your own state directory, or through a warren\n"
	"serve with --via. Add it to an agent's MCP servers, e.g. 'claude mcp add warren -- warren\n"
	"mcp' (docs/guide.md shows Claude Code's and opencode's files).\n\n"
	"  --work DIR          the sessions' default worktree, and the directory each worktree the\n"
	"                      agent names must be in (default: the current directory)\n"
	"  --state DIR         the state directory of the sessions (default: as 'warren run')\n"
	"  --via SOCKET        through a warren serve (unix:PATH or tcp:HOST:PORT), as 'warren exec --via'\n"
	"  --token-file F      the server's token, for tcp:\n";

int cmd_mcp(int argc, char **argv)
{
	enum { O_STATE = 256, O_VIA, O_TOKEN, O_WORK, O_HELP };
	static const struct option opts[] = { { "state", required_argument, NULL, O_STATE },
					      { "work", required_argument, NULL, O_WORK },
					      { "via", required_argument, NULL, O_VIA },
					      { "token-file", required_argument, NULL, O_TOKEN },
					      { "help", no_argument, NULL, O_HELP },
					      { NULL, 0, NULL, 0 } };
	static struct mcp_server s = { .mu = PTHREAD_MUTEX_INITIALIZER };
	const char *work = NULL;
	_cleanup_error_ struct error perr = { 0 };
	optind = 1;
	int c;
	while ((c = cli_getopt(argc, argv, "", opts, "mcp", &perr)) != -1) {
		switch (c) {
		case O_STATE: s.conf.state = optarg; break;
		case O_VIA: s.conf.via = optarg; break;
		case O_TOKEN: s.conf.token = optarg; break;
		case O_WORK: work = optarg; break;
		case O_HELP: fputs(MCP_HELP, stdout); return 0;
		default: return cli_fail(&perr);
		}
	}
	if (optind < argc)
		return cli_usage_error("mcp", "mcp takes no operands, got '%s'", argv[optind]);
	if (s.conf.token && !s.conf.via)
		return cli_usage_error("mcp", "--token-file is for --via tcp:HOST:PORT");
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	const char *w = work ? work : cwd ? cwd : "/";
	s.conf.work = abs_path(w);
	if (!s.conf.work || !is_dir(s.conf.work))
		return cli_usage_error("mcp", "--work %s: %s; name the directory the sessions may work in", w,
				       s.conf.work ? strerror(ENOTDIR) : strerror(errno));
	s.conf.state_path = statedir_default(s.conf.state);  /* (once: the calls' threads share it) */
	/* the protocol's alone: whatever else would write to stdout writes to stderr */
	s.out = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (s.out < 0 || dup2(2, 1) < 0) {
		warn_line("mcp: cannot set up standard output: %s", strerror(errno));
		return 125;
	}
	signal(SIGPIPE, SIG_IGN);  /* a client gone: its writes fail, the server ends at its stdin's end */
	serve_stdin(&s);
	/* the client closed its side: the calls still running are answered if they end within
	 * MCP_END_WAIT_S; then they are cancelled (an exec's command is stopped by its session, a
	 * session not yet ready is stopped) and given a moment to end */
	for (int i = 0; i < MCP_END_WAIT_S * 20 && calls_running(&s); i++)
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	pthread_mutex_lock(&s.mu);
	for (size_t i = 0; i < MCP_CALLS_MAX; i++)
		if (s.calls[i])
			atomic_store(&s.calls[i]->cancelled, true);
	pthread_mutex_unlock(&s.mu);
	for (int i = 0; i < 40 && calls_running(&s); i++)
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	return 0;
}
