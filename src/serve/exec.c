/* SPDX-License-Identifier: Apache-2.0 */
/* exec.c - a live session through the API (docs/api.md): POST /v1/runs/{id}/exec and
 * /v1/runs/{id}/end are sent on to the run's own socket (<rundir>/session.sock, job/session.h),
 * as the server's user (whom the session answers: the run's owner or root); the answer comes
 * back as the session gave it: one JSON object, or with ?stream=1 its lines and output as they
 * come (a keepalive line every 5 s of silence). An exec that asks "stop_on_close" is stopped
 * when its client goes away: the server watches the client's connection while it waits, and
 * closes the session's once that one closed (the session then stops the command). POST
 * /v1/runs?wait=ready answers once a session's socket is there. */
#include "serve/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "job/session.h"
#include "util/fs.h"

enum { KEEPALIVE_MS = 5000 };

int serve_session_dial(struct server *s, const char *id, int *status, char **why)
{
	_cleanup_close_ int dir = rundir_open(&s->sd, id, NULL);
	int fd = dir < 0 ? -1 : socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/%s", dir, SESSION_SOCK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
		return fd;
	closep(&fd);
	pthread_mutex_lock(&s->mu);
	bool live = server_live(s, id), queued = server_queue_pos(s, id) > 0;
	pthread_mutex_unlock(&s->mu);
	*status = 409;
	*why = !live ? xasprintf("%s has ended; exec and files need a live session (GET /v1/runs/%s)", id, id)
	       : queued ? xasprintf("%s is queued; its session is not ready yet (POST /v1/runs?wait=ready waits for it)", id)
			: xasprintf("%s takes no requests: it is not a session, or its session is not ready yet", id);
	return -1;
}

/* Wait until fd has something to read (ms: -1 for ever); 1, 0 when ms passed, -1 when the
 * client's connection cfd (-1: not watched) was closed first. */
static int wait_readable(int fd, int cfd, int ms)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = cfd, .events = POLLRDHUP } };
		int r = poll(p, 2, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0 && (p[1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
			return -1;
		return r != 0;  /* (an error: the read says it) */
	}
}

/* Read one line from fd (heap, without its \n); NULL at the end. */
static char *line_from(int fd)
{
	size_t n = 0, cap = 256;
	char *b = xmalloc(cap);
	for (;;) {
		char ch;
		ssize_t r = read(fd, &ch, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(b);
			return NULL;
		}
		if (ch == '\n')
			break;
		if (n + 1 >= cap)
			b = xrealloc(b, cap *= 2);
		b[n++] = ch;
	}
	b[n] = '\0';
	return b;
}

int serve_send_line(int fd, json_t *req)
{
	char *t = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!t)
		return -1;
	size_t l = strlen(t);
	t[l] = '\n';
	int r = write_all(fd, t, l + 1);
	free(t);
	return r;
}

int serve_first_answer(int fd, json_t **out)
{
	_cleanup_free_ char *line = line_from(fd);
	json_t *j = line ? json_loads(line, 0, NULL) : NULL;
	if (!j) {
		*out = json_pack("{s:s}", "error", "the session ended before it answered");
		return 409;
	}
	json_t *st = json_object_get(j, "status");
	if (json_object_get(j, "error")) {
		int status = json_is_integer(st) ? (int)json_integer_value(st) : 500;
		json_object_del(j, "status");
		*out = j;
		return status;
	}
	*out = j;
	return 200;
}

/* ---- ?stream=1: the session's lines and output passed on as they come ---- */

struct pass {
	int fd;
	int cfd;           /* the client's connection, watched (stop_on_close), or -1 */
	char *head;        /* the first line, sent first */
	size_t hlen, hoff;
};

static ssize_t pass_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct pass *p = cls;
	if (p->hoff < p->hlen) {
		size_t n = p->hlen - p->hoff < max ? p->hlen - p->hoff : max;
		memcpy(buf, p->head + p->hoff, n);
		p->hoff += n;
		return (ssize_t)n;
	}
	static const char keep[] = "{\"keepalive\":true}\n";
	for (;;) {
		int r = wait_readable(p->fd, p->cfd, KEEPALIVE_MS);
		if (r < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;  /* the client went away: pass_free */
		if (r == 0 && max >= sizeof keep - 1) {
			memcpy(buf, keep, sizeof keep - 1);
			return (ssize_t)(sizeof keep - 1);
		}
		ssize_t n = read(p->fd, buf, max);
		if (n < 0 && errno == EINTR)
			continue;
		return n > 0 ? n : n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
	}
}

static void pass_free(void *cls)
{
	struct pass *p = cls;
	closep(&p->fd);  /* (a caller gone: the exec runs on to its end, to its log, or is stopped) */
	free(p->head);
	free(p);
}

enum MHD_Result serve_exec(struct server *s, struct MHD_Connection *c, const char *id, const char *body, size_t len)
{
	json_error_t je;
	json_t *req = json_loadb(body ? body : "", len, JSON_ALLOW_NUL, &je);  /* (stdin may hold \u0000) */
	if (!json_is_object(req)) {
		json_t *e = req ? json_string("the body must be a JSON object, e.g. {\"command\": [\"make\", \"test\"]}")
				: json_sprintf("the body is not JSON (line %d, column %d: %s); it must be an object, e.g. {\"command\": [\"make\", \"test\"]}",
					       je.line, je.column, je.text);
		json_decref(req);
		return api_json(c, 400, json_pack("{s:o}", "error", e));
	}
	static const char *const fields[] = { "command", "env", "cwd", "stdin", "timeout", "stop_on_close", NULL };
	const char *k;
	json_t *v;
	json_object_foreach(req, k, v) {
		bool ok = false;
		for (const char *const *f = fields; *f && !ok; f++)
			ok = !strcmp(*f, k);
		if (!ok) {
			json_t *e = json_pack("{s:o}", "error", json_sprintf("unknown field '%s'; the fields are command, env, cwd, stdin, timeout, stop_on_close", k));
			json_decref(req);
			return api_json(c, 400, e);
		}
	}
	const char *sv = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "stream");
	bool stream = sv && strcmp(sv, "0");
	const union MHD_ConnectionInfo *ci = mhd.connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	int cfd = json_is_true(json_object_get(req, "stop_on_close")) && ci ? ci->connect_fd : -1;
	json_object_set_new(req, "op", json_string("exec"));
	json_object_set_new(req, "stream", json_boolean(stream));
	int status = 0;
	_cleanup_free_ char *why = NULL;
	int fd = serve_session_dial(s, id, &status, &why);
	if (fd < 0) {
		json_decref(req);
		return api_json(c, status, json_pack("{s:s}", "error", why));
	}
	json_t *out = NULL;
	status = serve_send_line(fd, req) < 0 && errno != EPIPE ? 500 : 0;
	if (!status && !stream && wait_readable(fd, cfd, -1) < 0) {
		close(fd);  /* its client went away: the session stops the command */
		return MHD_NO;
	}
	status = status ? status : serve_first_answer(fd, &out);
	if (status != 200 || !stream) {
		close(fd);
		return api_json(c, status, out ? out : json_pack("{s:s}", "error", "cannot send the command to the session"));
	}
	struct pass *p = xcalloc(1, sizeof *p);
	p->fd = fd;
	p->cfd = cfd;
	char *t = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	p->head = xasprintf("%s\n", t ? t : "{}");
	free(t);
	p->hlen = strlen(p->head);
	struct MHD_Response *r = mhd.response_from_callback(MHD_SIZE_UNKNOWN, 65536, pass_read, p, pass_free);
	mhd.add_header(r, "Content-Type", "application/vnd.warren.exec-stream");
	mhd.add_header(r, "Cache-Control", "no-cache");
	enum MHD_Result ret = mhd.queue_response(c, 200, r);
	mhd.destroy_response(r);
	return ret;
}

enum MHD_Result serve_end(struct server *s, struct MHD_Connection *c, const char *id)
{
	int status = 0;
	_cleanup_free_ char *why = NULL;
	_cleanup_close_ int fd = serve_session_dial(s, id, &status, &why);
	if (fd < 0)
		return api_json(c, status, json_pack("{s:s}", "error", why));
	json_t *out = NULL;
	status = serve_send_line(fd, json_pack("{s:s}", "op", "end")) < 0 ? 500 : serve_first_answer(fd, &out);
	if (status != 200)
		return api_json(c, status, out ? out : json_pack("{s:s}", "error", "cannot reach the session"));
	json_decref(out);
	return api_json(c, 202, json_pack("{s:s,s:s}", "id", id, "state", "ending"));
}

void serve_wait_ready(struct server *s, json_t *out)
{
	const char *id = json_string_value(json_object_get(out, "id"));
	if (!id)
		return;
	_cleanup_close_ int dir = -1;
	for (;;) {
		if (dir < 0)
			dir = rundir_open(&s->sd, id, NULL);
		struct stat st;
		if (dir >= 0 && fstatat(dir, SESSION_SOCK, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			json_object_set_new(out, "state", json_string("ready"));
			json_object_set_new(out, "queue_position", json_null());
			return;
		}
		pthread_mutex_lock(&s->mu);
		bool live = server_live(s, id);
		long pos = server_queue_pos(s, id);
		pthread_mutex_unlock(&s->mu);
		if (!live) {
			/* it ended before it was ready (a setup step failed, a bad image): its end */
			server_wait_end(s, out, -1);
			return;
		}
		json_object_set_new(out, "queue_position", pos ? json_integer(pos) : json_null());
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	}
}
