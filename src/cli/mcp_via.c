/* SPDX-License-Identifier: Apache-2.0 */
/* mcp_via.c - `warren mcp --via`: the tools through a warren serve's API (docs/api.md), as `warren
 * exec --via` and `warren submit` reach it (cli/submit.c's client): POST /v1/runs {"session"}
 * ?wait=ready, POST .../exec?stream=1, POST .../end (then its end waited for on GET
 * /v1/runs/{id}), GET /v1/runs?state=running for the runs that take execs. The server decides
 * who may see and use which run. */
#include "cli/mcp.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "run/id.h"
#include "util/error.h"

#define END_WAIT_S 60.0

/* Read what is left of an answer (after rest, rlen bytes) to its end, and close fd. */
static void read_rest(int fd, char **rest, size_t *rlen)
{
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		*rest = xrealloc(*rest, *rlen + (size_t)n + 1);
		memcpy(*rest + *rlen, buf, (size_t)n);
		*rlen += (size_t)n;
	}
	close(fd);
}

/* One request: its HTTP status and its body parsed (*ans; NULL when not JSON); -1 with *fail. */
static int request(const struct mcp_conf *c, const char *method, const char *path, json_t *body, json_t **ans, char **fail)
{
	_cleanup_free_ char *b = body ? json_dumps(body, JSON_COMPACT) : NULL;
	_cleanup_error_ struct error err = { 0 };
	int status;
	char *rest = NULL;
	size_t rlen = 0;
	int fd = cli_via_request(c->via, c->state, c->token, method, path, b, &status, &rest, &rlen, &err);
	*ans = NULL;
	if (fd < 0) {
		*fail = xstrdup(err.msg ? err.msg : "cannot reach the warren serve");
		return -1;
	}
	read_rest(fd, &rest, &rlen);
	*ans = rest ? json_loadb(rest, rlen, 0, NULL) : NULL;
	free(rest);
	return status;
}

/* The server's refusal as one line. */
static char *refusal(json_t *ans, int status)
{
	const char *e = json_string_value(json_object_get(ans, "error"));
	return e ? xstrdup(e) : xasprintf("warren serve answered HTTP %d", status);
}

/* A full run id, which the API takes (a prefix is the command line's); false with *fail. */
static bool full_id(const char *run, char **fail)
{
	if (run_id_valid(run))
		return true;
	*fail = xasprintf("'%.40s' is not a run id: through a warren serve give the full id (run_ and 26 characters, "
			  "from start_session)", run);
	return false;
}

json_t *via_start(const struct mcp_conf *c, const struct mcp_start *a, char **fail)
{
	json_t *ses = json_object();
	if (a->idle)
		json_object_set_new(ses, "idle", json_string(a->idle));
	if (a->max)
		json_object_set_new(ses, "max", json_string(a->max));
	json_t *body = json_pack("{s:o,s:s}", "session", ses, "worktree", a->worktree);
	if (a->image)
		json_object_set_new(body, "image", json_string(a->image));
	if (a->net)
		json_object_set_new(body, "net", json_string(a->net));
	if (json_object_size(a->env))
		json_object_set(body, "env", a->env);
	json_t *ans;
	int st = request(c, "POST", "/v1/runs?wait=ready", body, &ans, fail);
	json_decref(body);
	json_t *r = NULL;
	const char *id = json_string_value(json_object_get(ans, "id"));
	const char *state = json_string_value(json_object_get(ans, "state"));
	if (st < 0)
		;
	else if (st != 201 || !id)
		*fail = refusal(ans, st);
	else if (!state || strcmp(state, "ready"))
		*fail = xasprintf("the session %s ended before it was ready (%s; see GET /v1/runs/%s)", id, state ? state : "?", id);
	else
		r = json_pack("{s:s,s:s,s:s}", "run_id", id, "state", state, "worktree", a->worktree);
	json_decref(ans);
	return r;
}

json_t *via_exec(const struct mcp_conf *c, const char *run, json_t *req, struct mcp_call *call, char **fail)
{
	if (!full_id(run, fail))
		return NULL;
	_cleanup_free_ char *path = xasprintf("/v1/runs/%s/exec?stream=1", run);
	_cleanup_free_ char *body = json_dumps(req, JSON_COMPACT);
	_cleanup_error_ struct error err = { 0 };
	int status;
	char *rest = NULL;
	size_t rlen = 0;
	int fd = cli_via_request(c->via, c->state, c->token, "POST", path, body, &status, &rest, &rlen, &err);
	if (fd < 0) {
		*fail = xstrdup(err.msg ? err.msg : "cannot reach the warren serve");
		return NULL;
	}
	json_t *r = NULL;
	if (status == 200) {
		r = mcp_exec_answer(fd, rest, rlen, run, call, fail);
		close(fd);
	} else {
		read_rest(fd, &rest, &rlen);
		json_t *ans = rest ? json_loadb(rest, rlen, 0, NULL) : NULL;
		*fail = refusal(ans, status);
		json_decref(ans);
	}
	free(rest);
	return r;
}

json_t *via_end(const struct mcp_conf *c, const char *run, struct mcp_call *call, char **fail)
{
	if (!full_id(run, fail))
		return NULL;
	_cleanup_free_ char *path = xasprintf("/v1/runs/%s/end", run);
	json_t *ans;
	int st = request(c, "POST", path, NULL, &ans, fail);
	if (st >= 0 && st != 202)
		*fail = refusal(ans, st);
	json_decref(ans);
	if (st != 202)
		return NULL;
	/* its end: GET /v1/runs/{id} says live false once the record is written */
	path[strlen(path) - 4] = '\0';
	json_t *d = NULL;
	for (double t0 = mcp_now(); mcp_now() - t0 < END_WAIT_S && !mcp_call_cancelled(call);) {
		json_decref(d);
		_cleanup_free_ char *ignored = NULL;
		if (request(c, "GET", path, NULL, &d, &ignored) == 200 && json_is_false(json_object_get(d, "live")))
			break;
		mcp_call_progress(call, "the session is ending");
		nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
	}
	json_t *res = json_object_get(d, "result");
	json_t *status = json_object_get(res, "status"), *code = json_object_get(res, "exit_code");
	json_t *r = json_pack("{s:s,s:s,s:O,s:O}", "run_id", run, "state", json_is_false(json_object_get(d, "live")) ? "ended" : "ending",
			      "status", json_is_string(status) ? status : json_null(), "exit_code",
			      json_is_integer(code) ? code : json_null());
	json_decref(d);
	return r;
}

json_t *via_list(const struct mcp_conf *c, char **fail)
{
	json_t *ans;
	int st = request(c, "GET", "/v1/runs?state=running&limit=1000", NULL, &ans, fail);
	if (st != 200) {
		if (st >= 0)
			*fail = refusal(ans, st);
		json_decref(ans);
		return NULL;
	}
	json_t *list = json_array(), *row;
	size_t i;
	json_array_foreach(json_object_get(ans, "runs"), i, row) {
		if (!json_is_true(json_object_get(row, "session")))
			continue;
		json_t *wt = json_object_get(row, "worktree"), *at = json_object_get(row, "started_at");
		json_array_append_new(list, json_pack("{s:O,s:O,s:n,s:n,s:O}", "run_id", json_object_get(row, "id"), "worktree",
						      json_is_string(wt) ? wt : json_null(), "image", "net", "started_at",
						      json_is_string(at) ? at : json_null()));
	}
	json_decref(ans);
	return json_pack("{s:o}", "sessions", list);
}
