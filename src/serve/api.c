/* SPDX-License-Identifier: Apache-2.0 */
/* api.c - the HTTP API v1 (docs/api.md): who asks (SO_PEERCRED on a unix socket, the bearer
 * token on TCP, compared in constant time), decided as soon as a request's head is in, so that
 * a request is answered at once and nothing of a body is read unless it is a submission by one
 * who may submit (its bytes counted against BODIES_MAX); the routes, JSON answers with one clear
 * "error". */
#include "serve/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/session.h"
#include "run/record.h"
#include "serve/console.h"
#include "util/fs.h"
#include "util/units.h"

/* The state of one request between the calls libmicrohttpd makes. */
struct req {
	struct who w;          /* who asks: known from the first call on */
	char *body;
	size_t len;
	size_t held;           /* bytes of BODIES_MAX taken for it */
	bool too_big;          /* more than BODY_MAX came (a body of unsaid length) */
	bool too_many;         /* ... or more than BODIES_MAX would be held */
	bool exec;             /* POST /v1/runs/{exec_id}/exec: its body goes to the session */
	char exec_id[RUN_ID_LEN + 1];
	int put_fd;            /* PUT /v1/runs/{id}/files: the session's connection its body goes on (files.c) */
	uint64_t put_left;     /* its bytes still to come */
};

/* Queue text (taken) with status; close: the connection ends after it (a client refused, or a
 * body left unread). */
static enum MHD_Result answer(struct MHD_Connection *c, int status, const char *type, char *text, bool close)
{
	struct MHD_Response *r = mhd.response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	mhd.add_header(r, "Content-Type", type);
	if (close)
		mhd.add_header(r, "Connection", "close");
	enum MHD_Result ret = mhd.queue_response(c, (unsigned)status, r);
	mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result send_text(struct MHD_Connection *c, int status, const char *type, char *text)
{
	return answer(c, status, type, text, false);
}

static char *json_text(json_t *j)
{
	char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(j);
	char *body = xasprintf("%s\n", t ? t : "{}");
	free(t);
	return body;
}

/* Answer j (stolen) as JSON with status. */
static enum MHD_Result send_json(struct MHD_Connection *c, int status, json_t *j)
{
	return send_text(c, status, "application/json", json_text(j));
}

enum MHD_Result api_json(struct MHD_Connection *c, int status, json_t *j)
{
	return send_json(c, status, j);
}

static enum MHD_Result send_error_v(struct MHD_Connection *c, int status, bool close, const char *fmt, va_list ap)
{
	char *m = xvasprintf(fmt, ap);
	enum MHD_Result r = answer(c, status, "application/json", json_text(json_pack("{s:s}", "error", m)), close);
	free(m);
	return r;
}

static enum MHD_Result send_error(struct MHD_Connection *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum MHD_Result send_error(struct MHD_Connection *c, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	enum MHD_Result r = send_error_v(c, status, false, fmt, ap);
	va_end(ap);
	return r;
}

/* An error, and the connection closed after it. */
static enum MHD_Result refuse(struct MHD_Connection *c, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static enum MHD_Result refuse(struct MHD_Connection *c, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	enum MHD_Result r = send_error_v(c, status, true, fmt, ap);
	va_end(ap);
	return r;
}

/* Equal in time that does not depend on where they differ. */
bool same_secret(const char *a, size_t alen, const char *b, size_t blen)
{
	volatile unsigned char d = (unsigned char)(alen != blen);
	for (size_t i = 0; i < blen; i++)
		d |= (unsigned char)(b[i] ^ (i < alen ? a[i] : 0));
	return d == 0;
}

/* Who asks; false (and an answer queued in *ret) when nobody we know. */
static bool identify(struct listener *l, struct MHD_Connection *c, struct who *w, enum MHD_Result *ret)
{
	struct server *s = l->s;
	if (l->tcp) {
		const char *h = mhd.lookup(c, MHD_HEADER_KIND, "Authorization");
		_cleanup_free_ char *cookie = h ? NULL : console_cookie_token(c);  /* the console's browser */
		const char *t = h && !strncmp(h, "Bearer ", 7) ? h + 7 : cookie;
		if (!t || !same_secret(t, strlen(t), s->token, s->token_len)) {
			*ret = refuse(c, 401, "a valid 'Authorization: Bearer TOKEN' header is needed (the token of the server's --token-file; in a browser open /?token=TOKEN)");
			return false;
		}
		*w = (struct who){ .uid = s->uid, .all = true };
		conns_authenticated(s, c);
		return true;
	}
	const union MHD_ConnectionInfo *ci = mhd.connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0) {
		*ret = refuse(c, 403, "cannot tell who is asking (SO_PEERCRED)");
		return false;
	}
	*w = (struct who){ .uid = cr.uid, .all = cr.uid == 0 || cr.uid == s->uid };
	return true;
}

/* The row of id if w may see it (NULL: 404 answered). */
static json_t *visible_row(struct server *s, const struct who *w, const char *id)
{
	if (!run_id_valid(id))
		return NULL;
	_cleanup_error_ struct error err = { 0 };
	pthread_mutex_lock(&s->rmu);
	json_t *row = history_get(s->hr, id, &err);
	pthread_mutex_unlock(&s->rmu);
	if (row && !w->all && (uid_t)json_integer_value(json_object_get(row, "owner")) != w->uid) {
		json_decref(row);
		return NULL;
	}
	return row;
}

static json_t *record_file(struct server *s, const char *id, const char *name)
{
	_cleanup_close_ int dir = rundir_open(&s->sd, id, NULL);
	_cleanup_free_ char *t = dir >= 0 ? rundir_read(dir, name) : NULL;
	return t ? json_loads(t, 0, NULL) : NULL;
}

static json_t *log_names(struct server *s, const char *id)
{
	json_t *a = json_array();
	struct dirent **ents = NULL;
	_cleanup_free_ char *p = xasprintf("%s/runs/%s/log", s->sd.path, id);
	int n = scandir(p, &ents, NULL, versionsort);
	for (int i = 0; i < n; i++) {
		size_t l = strlen(ents[i]->d_name);
		if (l > 4 && !strcmp(ents[i]->d_name + l - 4, ".log"))
			json_array_append_new(a, json_stringn(ents[i]->d_name, l - 4));
		free(ents[i]);
	}
	free(ents);
	return a;
}

/* Does the run of row r take execs now (a live session: its socket is there)? */
static bool takes_execs(struct server *s, json_t *r)
{
	const char *id = json_string_value(json_object_get(r, "id"));
	const char *state = json_string_value(json_object_get(r, "state"));
	struct stat st;
	_cleanup_free_ char *sock = id && run_id_valid(id) ? xasprintf("%s/%s", id, SESSION_SOCK) : NULL;
	return sock && state && !strcmp(state, "running") && fstatat(s->sd.runs, sock, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISSOCK(st.st_mode);
}

/* GET /v1/runs/{id}: the row, the queue position, spec.json, result.json, steps, logs, the
 * published ports. */
static json_t *run_detail(struct server *s, json_t *row, const char *id)
{
	json_t *result = record_file(s, id, "result.json");
	json_t *spec = record_file(s, id, "spec.json");
	json_object_set_new(row, "session", json_boolean(takes_execs(s, row)));
	json_t *j = json_pack("{s:o}", "run", row);
	long pos = server_queue_pos(s, id);
	json_object_set_new(j, "queue_position", pos ? json_integer(pos) : json_null());
	json_object_set_new(j, "live", json_boolean(server_live(s, id)));
	/* a live job's steps (or those of one whose supervisor died): progress.json, which its runner keeps */
	json_t *tasks = json_object_get(result, "steps") ? json_incref(result) : record_file(s, id, "progress.json");
	json_t *steps = json_object_get(tasks, "steps");
	json_object_set_new(j, "steps", steps ? json_incref(steps) : json_array());
	json_t *services = json_object_get(tasks, "services");
	json_object_set_new(j, "services", services ? json_incref(services) : json_array());
	/* a live session lists its last execs only (job/session.h): how many came before */
	json_t *left_out = json_object_get(tasks, "execs_left_out");
	if (json_is_integer(left_out))
		json_object_set(j, "execs_left_out", left_out);
	json_decref(tasks);
	json_object_set_new(j, "now_ms", json_integer(history_now_ms()));  /* the clocks of a remote browser */
	json_object_set_new(j, "logs", log_names(s, id));
	/* where the host reaches the cell (publish): the record's, once the run started */
	json_t *pub = json_object_get(spec ? spec : result, "published");
	json_object_set_new(j, "published", json_is_array(pub) ? json_incref(pub) : json_array());
	json_object_set_new(j, "spec", spec ? spec : json_null());
	json_object_set_new(j, "result", result ? result : json_null());
	return j;
}

static enum MHD_Result list_runs(struct server *s, struct MHD_Connection *c, const struct who *w)
{
	struct history_filter f = { .any_owner = w->all, .owner = w->uid, .limit = 100 };
	const char *v;
	if ((v = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "state")))
		f.state = v;
	if ((v = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "since")) &&
	    history_parse_since(v, history_now_ms(), &f.since_ms) < 0)
		return send_error(c, 400, "since: '%s' is neither a duration (1h, 7d) nor a UTC time (2026-12-03T10:00:00Z)", v);
	char *lab = (char *)mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "label");
	_cleanup_error_ struct error err = { 0 };
	if (lab) {
		if (history_check_label(lab, &err) < 0)
			return send_error(c, 400, "%s", err.msg);
		f.labels = &lab;
		f.nlabels = 1;
	}
	uint64_t n;
	if ((v = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "limit"))) {
		if (parse_uint(v, &n) < 0 || n < 1 || n > 1000)
			return send_error(c, 400, "limit: '%s' is not a number from 1 to 1000", v);
		f.limit = (long)n;
	}
	if ((v = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "cursor"))) {
		if (!run_id_valid(v))
			return send_error(c, 400, "cursor: '%s' is not a run id (use next_cursor of the last page)", v);
		f.before = v;
	}
	pthread_mutex_lock(&s->rmu);
	json_t *rows = history_query(s->hr, &f, &err);
	pthread_mutex_unlock(&s->rmu);
	pthread_mutex_lock(&s->mu);
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r) {
		long pos = server_queue_pos(s, json_string_value(json_object_get(r, "id")));
		json_object_set_new(r, "queue_position", pos ? json_integer(pos) : json_null());
	}
	pthread_mutex_unlock(&s->mu);
	json_array_foreach(rows, i, r)
		json_object_set_new(r, "session", json_boolean(takes_execs(s, r)));
	if (!rows)
		return send_error(c, 500, "%s", err.msg);
	size_t got = json_array_size(rows);
	json_t *next = got == (size_t)f.limit ? json_object_get(json_array_get(rows, got - 1), "id") : NULL;
	return send_json(c, 200, json_pack("{s:o,s:O}", "runs", rows, "next_cursor", next ? next : json_null()));
}

static enum MHD_Result delete_run(struct server *s, struct MHD_Connection *c, const char *id)
{
	if (server_live(s, id))
		return send_error(c, 409, "%s is live; kill it first (POST /v1/runs/%s/kill)", id, id);
	int r = rm_tree_at(s->sd.runs, id);
	if (r < 0 && r != -ENOENT)
		return send_error(c, 500, "cannot delete the record of %s: %s", id, strerror(-r));
	server_forget_files(s, id);
	_cleanup_error_ struct error err = { 0 };
	if (history_delete(s->h, id, &err) < 0)
		return send_error(c, 500, "%s", err.msg);
	return send_json(c, 200, json_pack("{s:s,s:b}", "id", id, "deleted", 1));
}

/* GET /v1/runs/{id}/policy: what `warren policy` answers (cli/policy.c), from the run's spec. */
static enum MHD_Result policy(struct server *s, struct MHD_Connection *c, const char *id)
{
	const char *path = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "path");
	const char *access = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "access");
	if (!path || !*path)
		return send_error(c, 400, "path: required, a path in the cell (relative: from its worktree)");
	if (!access)
		access = "write";
	enum policy_access how = !strcmp(access, "write") ? POLICY_WRITE : !strcmp(access, "read") ? POLICY_READ
			       : !strcmp(access, "exec") ? POLICY_EXEC : 0;
	if (!how)
		return send_error(c, 400, "access: '%s'; use write, read or exec", access);
	json_t *spec = record_file(s, id, "spec.json");
	if (!spec)
		return send_error(c, 409, "%s has no spec.json yet (queued, or its record was pruned)", id);
	_cleanup_error_ struct error err = { 0 };
	_cleanup_free_ char *why = NULL;
	bool ok = false;
	int r = record_policy_answer(s->sd.path, id, spec, path, how, &ok, &why, &err);
	json_decref(spec);
	if (r < 0)
		return send_error(c, 500, "%s", err.msg);
	return send_json(c, 200, json_pack("{s:s,s:s,s:s,s:b,s:s}", "id", id, "path", path, "access", access, "allowed", ok,
					   "answer", ok ? "allowed" : why ? why : "denied"));
}

/* /v1/runs/{id}[/what]: the id and what follows it */
static bool split_run_url(const char *url, char *id, const char **what)
{
	const char *p = url + strlen("/v1/runs/");
	size_t n = strcspn(p, "/");
	if (n != RUN_ID_LEN)
		return false;
	memcpy(id, p, n);
	id[n] = '\0';
	*what = p[n] ? p + n + 1 : "";
	return run_id_valid(id);
}

static enum MHD_Result logs(struct server *s, struct MHD_Connection *c, const char *id)
{
	const char *step = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "step");
	const char *off = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "offset");
	const char *last = mhd.lookup(c, MHD_HEADER_KIND, "Last-Event-ID");
	const char *fol = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "follow");
	uint64_t offset = 0, l = 0;
	if (off && parse_uint(off, &offset) < 0)
		return send_error(c, 400, "offset: '%s' is not a byte offset", off);
	if (last && parse_uint(last, &l) == 0 && l > offset)
		offset = l;  /* a reconnecting EventSource resumes after the last event it got */
	bool follow = fol && strcmp(fol, "0");
	int status = 200;
	json_t *e = NULL;
	struct MHD_Response *r = logs_response(s, id, step, offset, follow, &status, &e);
	if (!r)
		return send_json(c, status, e);
	enum MHD_Result ret = mhd.queue_response(c, (unsigned)status, r);
	mhd.destroy_response(r);
	return ret;
}

/* The routes below /v1/runs/{id}. */
static enum MHD_Result run_route(struct server *s, struct MHD_Connection *c, const struct who *w, const char *url,
				 const char *method)
{
	char id[RUN_ID_LEN + 1];
	const char *what;
	if (!split_run_url(url, id, &what))
		return send_error(c, 404, "no such path %s; run ids look like run_01J...", url);
	server_settle(s, id, false);  /* a run that said how it ended is shown once its record is whole */
	json_t *row = visible_row(s, w, id);
	if (!row)
		return send_error(c, 404, "no run %s (of yours) on this server", id);
	/* and one whose row says so (its supervisor writes the row, then reclaims and ends): once
	 * it is not live, so that a DELETE after it is not refused */
	const char *st = json_string_value(json_object_get(row, "state"));
	if (st && strcmp(st, "queued") && strcmp(st, "running"))
		server_settle(s, id, true);
	enum MHD_Result ret;
	bool get = !strcmp(method, "GET");
	if (!*what && get) {
		pthread_mutex_lock(&s->mu);
		json_t *j = run_detail(s, row, id);
		pthread_mutex_unlock(&s->mu);
		return send_json(c, 200, j);
	}
	json_decref(row);
	if (!strcmp(what, "logs") && get)
		return logs(s, c, id);
	if (!strcmp(what, "policy") && get)
		return policy(s, c, id);
	if (!strcmp(what, "files") && get)
		return serve_files_get(s, c, id);
	pthread_mutex_lock(&s->mu);
	if (!strcmp(what, "end") && !strcmp(method, "POST")) {
		pthread_mutex_unlock(&s->mu);
		return serve_end(s, c, id);
	}
	if (!strcmp(what, "kill") && !strcmp(method, "POST")) {
		_cleanup_free_ char *why = xasprintf("POST /v1/runs/%s/kill", id);
		int r = server_kill(s, id, why);
		ret = r == 0 ? send_json(c, 202, json_pack("{s:s,s:s}", "id", id, "state", "stopping"))
			     : send_error(c, 409, "%s is not live; nothing to kill", id);
	} else if (!*what && !strcmp(method, "DELETE")) {
		ret = delete_run(s, c, id);
	} else {
		ret = send_error(c, 405, "%s %s: not a method of this path; see docs/api.md", method, url);
	}
	pthread_mutex_unlock(&s->mu);
	return ret;
}

static enum MHD_Result healthz(struct server *s, struct MHD_Connection *c)
{
	pthread_mutex_lock(&s->mu);
	long q = 0;
	for (struct srun *r = s->queue; r; r = r->next)
		q++;
	json_t *j = json_pack("{s:s,s:I,s:I,s:I}", "status", "ok", "slots", (json_int_t)s->slots, "busy",
			      (json_int_t)s->busy, "queued", (json_int_t)q);
	pthread_mutex_unlock(&s->mu);
	return send_json(c, 200, j);
}

static bool is_submission(const char *url, const char *method)
{
	return (!strcmp(url, "/v1/runs") || !strcmp(url, "/v1/runs/")) && !strcmp(method, "POST");
}

/* POST /v1/runs, its body in: queue the run (and with ?wait=1, wait for its end). */
static enum MHD_Result submission(struct server *s, struct MHD_Connection *c, struct req *rq)
{
	if (rq->too_big)
		return send_error(c, 413, "the body is larger than %d bytes", BODY_MAX);
	if (rq->too_many)
		return send_error(c, 503, "warren serve holds %u bytes of request bodies, its most; ask again later", BODIES_MAX);
	json_t *out = NULL;
	int end_fd = -1;
	int st = submit_run(s, &rq->w, rq->body ? rq->body : "", rq->len, &out, &end_fd);
	const char *wait = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "wait");
	if (st == 201 && wait && !strcmp(wait, "1"))
		server_wait_end(s, out, end_fd);
	else if (end_fd >= 0)
		close(end_fd);
	if (st == 201 && wait && !strcmp(wait, "ready"))
		serve_wait_ready(s, out);  /* a session's: answered once it takes execs */
	return send_json(c, st, out);
}

/* The request of rq->w (who is known), but for a submission: its answer. */
static enum MHD_Result route(struct server *s, struct MHD_Connection *c, const char *url, const char *method,
			     const struct who *w)
{
	enum MHD_Result ret;
	if (console_route(c, url, method, &ret))
		return ret;
	if (!strcmp(url, "/metrics") && !strcmp(method, "GET"))
		return w->all ? send_text(c, 200, "text/plain; version=0.0.4", metrics_text(s))
			      : send_error(c, 403, "the metrics count every user's runs: ask as root, the server's user or with the token");
	if (!strcmp(url, "/v1/runs") || !strcmp(url, "/v1/runs/"))
		return !strcmp(method, "GET") ? list_runs(s, c, w) : send_error(c, 405, "%s /v1/runs: use GET or POST", method);
	if (!strncmp(url, "/v1/runs/", 9))
		return run_route(s, c, w, url, method);
	return send_error(c, 404, "no such path %s; the API is under /v1/runs (see docs/api.md)", url);
}

/* A submission's head, by one who may submit: may its body be read? (false: *ret answered,
 * the body left unread.) Its declared length is taken from BODIES_MAX at once. */
static bool body_may_come(struct server *s, struct MHD_Connection *c, struct req *rq, enum MHD_Result *ret)
{
	const char *cl = mhd.lookup(c, MHD_HEADER_KIND, "Content-Length");
	uint64_t n = 0;
	if (cl && parse_uint(cl, &n) < 0) {
		*ret = refuse(c, 400, "Content-Length: '%s' is not a number of bytes", cl);
		return false;
	}
	if (n > BODY_MAX) {
		*ret = refuse(c, 413, "the body is larger than %d bytes", BODY_MAX);
		return false;
	}
	if (n && !conns_body_take(s, (size_t)n)) {
		*ret = refuse(c, 503, "warren serve holds %u bytes of request bodies, its most; ask again later", BODIES_MAX);
		return false;
	}
	rq->held = (size_t)n;
	return true;
}

/* A request's head is in: who asks, decided now. True when its body is to be read (a
 * submission by one who may submit); else its answer is queued in *ret at once, and nothing of
 * a body is read (libmicrohttpd closes the connection after the answer if one was sent). */
static bool head_in(struct listener *l, struct MHD_Connection *c, const char *url, const char *method, struct req *rq,
		    enum MHD_Result *ret)
{
	struct server *s = l->s;
	if (!strcmp(url, "/healthz") && !strcmp(method, "GET")) {
		*ret = healthz(s, c);
		return false;
	}
	if (console_login(l, c, url, method, ret) || !identify(l, c, &rq->w, ret) || !console_same_origin(l, c, method, ret))
		return false;
	char id[RUN_ID_LEN + 1];
	const char *what;
	if (!strcmp(method, "POST") && !strncmp(url, "/v1/runs/", 9) && split_run_url(url, id, &what) && !strcmp(what, "exec")) {
		json_t *row = visible_row(s, &rq->w, id);
		if (!row) {
			*ret = refuse(c, 404, "no run %s (of yours) on this server", id);
			return false;
		}
		json_decref(row);
		rq->exec = true;
		memcpy(rq->exec_id, id, sizeof id);
		return body_may_come(s, c, rq, ret);
	}
	if (!strcmp(method, "PUT") && !strncmp(url, "/v1/runs/", 9) && split_run_url(url, id, &what) && !strcmp(what, "files")) {
		json_t *row = visible_row(s, &rq->w, id);
		if (!row) {
			*ret = refuse(c, 404, "no run %s (of yours) on this server", id);
			return false;
		}
		json_decref(row);
		/* (its body goes to the session as it comes: not held, not counted in BODIES_MAX) */
		return serve_files_put_head(s, c, id, &rq->put_fd, &rq->put_left, ret);
	}
	if (!is_submission(url, method)) {
		*ret = route(s, c, url, method, &rq->w);
		return false;
	}
	if (!rq->w.all) {
		*ret = refuse(c, 403, "this server runs jobs as its own user; start your own 'warren serve' to submit runs");
		return false;
	}
	return body_may_come(s, c, rq, ret);
}

/* A piece of a submission's body. */
static void body_piece(struct server *s, struct req *rq, const char *data, size_t n)
{
	if (rq->too_big || rq->too_many)
		return;
	if (rq->len + n > BODY_MAX) {
		rq->too_big = true;
	} else if (rq->len + n > rq->held && !conns_body_take(s, rq->len + n - rq->held)) {
		rq->too_many = true;  /* a body of unsaid length (chunked) */
	} else {
		rq->held = rq->len + n > rq->held ? rq->len + n : rq->held;
		rq->body = xrealloc(rq->body, rq->len + n + 1);
		memcpy(rq->body + rq->len, data, n);
		rq->len += n;
		rq->body[rq->len] = '\0';
		return;
	}
	free(rq->body);
	rq->body = NULL;
	rq->len = 0;
}

enum MHD_Result api_handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			   const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	(void)version;
	struct listener *l = cls;
	struct req *rq = *con_cls;
	if (!rq) {
		if (!conns_head_in(l->s, c))
			return MHD_NO;  /* refused or out of time, told so and shut: its head read before */
		rq = *con_cls = xcalloc(1, sizeof *rq);
		rq->put_fd = -1;
		enum MHD_Result ret = MHD_YES;
		return head_in(l, c, url, method, rq, &ret) ? MHD_YES : ret;
	}
	if (*upload_size && rq->put_fd >= 0) {
		/* (more than it said is dropped; a session that refused it drains what comes) */
		size_t n = *upload_size < rq->put_left ? *upload_size : (size_t)rq->put_left;
		if (n && write_all(rq->put_fd, upload, n) == 0)
			rq->put_left -= n;
		else if (n)
			rq->put_left = 0;  /* the session is gone: its answer says why */
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size) {
		body_piece(l->s, rq, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (rq->put_fd >= 0) {
		int fd = rq->put_fd;
		rq->put_fd = -1;
		return serve_files_put_end(c, fd);
	}
	if (rq->exec && rq->too_big)
		return send_error(c, 413, "the body is larger than %d bytes", BODY_MAX);
	if (rq->exec && rq->too_many)
		return send_error(c, 503, "warren serve holds %u bytes of request bodies, its most; ask again later", BODIES_MAX);
	if (rq->exec)
		return serve_exec(l->s, c, rq->exec_id, rq->body, rq->len);
	return submission(l->s, c, rq);
}

void api_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
	struct listener *l = cls;
	struct req *rq = *con_cls;
	if (rq) {
		conns_body_give(l->s, rq->held);
		closep(&rq->put_fd);
		free(rq->body);
		free(rq);
		if (t == MHD_REQUEST_TERMINATED_COMPLETED_OK)
			conns_head_next(l->s, c);  /* kept alive: the next head has seconds */
	}
	*con_cls = NULL;
}
