/* SPDX-License-Identifier: Apache-2.0 */
/* mcp.h - `warren mcp`: a Model Context Protocol server over stdio (JSON-RPC 2.0, one message a
 * line) whose tools start a session (a cell that stays up: `warren run --session`), run
 * commands in it and end it, as the one who started the server: on the caller's own state
 * directory, or through a warren serve (--via). The room's files: mcp_rpc.c the protocol (framing,
 * lifecycle, dispatch, each tools/call in a thread of its own), mcp_tools.c the tool table (from
 * which tools/list and the checks of a call's arguments are made) and the results, exec.c an
 * exec's answer as it streams in, local.c and mcp_via.c the two ways to a session. */
#ifndef WARREN_MCP_MCP_H
#define WARREN_MCP_MCP_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int cmd_mcp(int argc, char **argv);

/* ---- the protocol (mcp_rpc.c) ---- */

/* JSON-RPC 2.0's error codes */
enum { RPC_PARSE = -32700, RPC_INVALID = -32600, RPC_NO_METHOD = -32601, RPC_PARAMS = -32602, RPC_INTERNAL = -32603 };
#define MCP_LINE_MAX (8 << 20)    /* bytes of one message from the client */
#define MCP_CALLS_MAX 32          /* tools/call running at once */
#define MCP_END_WAIT_S 3          /* seconds the calls running when the client closes its side may take */

/* The protocol versions answered, newest first, NULL-terminated. */
extern const char *const MCP_VERSIONS[];
/* The version to answer a client that asked for asked (NULL: none): asked when it is one of
 * MCP_VERSIONS, else the newest (the client then decides whether it can go on). Pure. */
const char *mcp_version_pick(const char *asked);
/* Does version know tools' structured results (outputSchema, structuredContent: 2025-06-18)? */
bool mcp_version_structured(const char *version);
/* What a message is (pure): a request (method and id), a notification (method, no id), a
 * response (the client's answer to a request: this server sends none, so it is dropped), or
 * bad with *why (static) said in the -32600 answer. */
enum rpc_kind { RPC_REQUEST, RPC_NOTIFICATION, RPC_RESPONSE, RPC_BAD };
enum rpc_kind rpc_kind(json_t *msg, const char **why);

/* Where the tools act. */
struct mcp_conf {
	const char *state;        /* --state, or NULL: $WARREN_STATE or the caller's default */
	char *state_path;         /* the state directory that makes (run/rundir.h: statedir_default) */
	const char *via, *token;  /* --via unix:PATH|tcp:HOST:PORT, --token-file: through a warren serve */
	char *work;               /* --work or the server's working directory, canonical: a session's
	                             default worktree, and the directory every worktree must be in
	                             (the model chooses the others: they may narrow it, never widen) */
};

/* One tools/call while it runs: its progress said to the client (when it asked with a
 * progressToken), its cancel heard (notifications/cancelled: no answer is sent). */
struct mcp_call {
	struct mcp_server *srv;
	json_t *id, *token;       /* the request's id; its _meta.progressToken, or NULL */
	atomic_bool cancelled;
	double started, told;     /* monotonic seconds: its start, its last progress */
	int progress;             /* notifications/progress sent */
};
/* Tell the client that the call goes on (at most every MCP_PROGRESS_S seconds; nothing when
 * it gave no progressToken): message, e.g. "exec 3 running for 20s". */
#define MCP_PROGRESS_S 5.0
void mcp_call_progress(struct mcp_call *c, const char *message);
bool mcp_call_cancelled(struct mcp_call *c);
double mcp_now(void);

/* ---- the tools (mcp_tools.c) ---- */

/* The parameter types a tool takes; each is checked against its type, and its JSON Schema is
 * made from the same table. */
enum mcp_type {
	MT_STRING,                /* a string, not empty */
	MT_TEXT,                  /* a string (may be empty: stdin) */
	MT_COMMAND,               /* a shell command line (a string: sh -c), or argv (strings) */
	MT_ENV,                   /* {"NAME": "VALUE"} */
	MT_DURATION,              /* a duration: "30s", "10m", "1h30m" */
	MT_BOOL,                  /* true or false */
};
struct mcp_param {
	const char *name;
	enum mcp_type type;
	bool required;
	const char *description;
};
/* Check args (an object, or NULL: none) against params (ending with a NULL name): 0, or -1
 * with *why (heap) the one line the caller reads: an unknown name, a missing one, a wrong type.
 * Pure. */
int mcp_args_check(const struct mcp_param *params, json_t *args, char **why);
/* A tool's inputSchema from its params (new reference). */
json_t *mcp_input_schema(const struct mcp_param *params);
/* tools/list's tools (new reference); structured: with their outputSchema. */
json_t *mcp_tools_list(bool structured);
/* The worktree a session of a call may have: given (NULL: work itself; relative: to work),
 * canonical, a directory, work or below it. Heap, or NULL with *why (heap). */
char *mcp_worktree(const char *work, const char *given, char **why);
/* Is there a tool of this name (else tools/call is answered -32602)? */
bool mcp_tool_known(const char *name);
/* tools/call of tool name with args (checked here): the CallToolResult (new reference); a
 * failure is a result too (isError, one line). structured: with structuredContent. */
json_t *mcp_tool_call(const struct mcp_conf *conf, const char *name, json_t *args, bool structured, struct mcp_call *call);

/* ---- what the tools ask of a session: local.c (the caller's state) and via.c (a warren
 * serve). Each returns its structured result (new reference), or NULL with *fail (heap) one
 * line. ---- */

struct mcp_start {
	const char *worktree;     /* absolute */
	const char *image, *net;  /* NULL: none (the host's / read-only), the default network */
	const char *idle, *max;   /* durations as given, or NULL: the defaults (10m, 8h) */
	json_t *env;              /* {"K": "V"}, or NULL */
};
json_t *local_start(const struct mcp_conf *c, const struct mcp_start *a, struct mcp_call *call, char **fail);
json_t *local_exec(const struct mcp_conf *c, const char *run, json_t *req, struct mcp_call *call, char **fail);
json_t *local_end(const struct mcp_conf *c, const char *run, struct mcp_call *call, char **fail);
json_t *local_list(const struct mcp_conf *c, char **fail);
/* Reap the `warren run --session` processes local_start started that ended since. */
void local_reap(void);

json_t *via_start(const struct mcp_conf *c, const struct mcp_start *a, char **fail);
json_t *via_exec(const struct mcp_conf *c, const char *run, json_t *req, struct mcp_call *call, char **fail);
json_t *via_end(const struct mcp_conf *c, const char *run, struct mcp_call *call, char **fail);
json_t *via_list(const struct mcp_conf *c, char **fail);

/* ---- an exec's answer (mcp_exec.c) ---- */

/* What an exec's result keeps of each stream: its first and its last half of this many bytes,
 * with a line saying how much was cut between them (the exec's log in the run's record holds
 * all of it). */
#define MCP_OUT_MAX (64 << 10)
struct mcp_out {
	char *head, *tail;        /* the first max/2 bytes; a ring of the last max/2 after them */
	size_t max, hlen, tlen, tpos;
	uint64_t total;
};
void mcp_out_init(struct mcp_out *o, size_t max);
void mcp_out_add(struct mcp_out *o, const char *b, size_t n);
/* What o kept, as valid UTF-8 (invalid bytes as U+FFFD; new reference), *cut when bytes were
 * left out. Pure. */
json_t *mcp_out_json(const struct mcp_out *o, bool *cut);
void mcp_out_free(struct mcp_out *o);
/* The streamed answer of an exec (job/session.h: {"exec":N}, {"stdout":LEN} + LEN bytes...,
 * {"end":{...}}; a warren serve's {"keepalive":true} between them) read from fd, after pre
 * (plen bytes already read, or NULL): its structured result, or NULL with *fail. The call's
 * progress is told while it runs; a cancel closes it (the command runs on to its end or its
 * time limit). */
json_t *mcp_exec_answer(int fd, const char *pre, size_t plen, const char *run, struct mcp_call *call, char **fail);

#endif
