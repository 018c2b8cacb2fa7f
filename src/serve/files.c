/* SPDX-License-Identifier: Apache-2.0 */
/* files.c - a live session's files through the API (docs/api.md): GET /v1/runs/{id}/files?path=P
 * reads (the bytes as they come from the session's socket, application/octet-stream), with
 * &list=1 lists a directory (JSON), and PUT writes the body (its Content-Length said first,
 * at most 64 MiB; passed on to the session piece by piece, never held whole). Each is a
 * request on the run's own socket (job/files.h), as the server's user, which the session
 * answers as it answers an exec's: the run's owner or root. */
#include "serve/internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "job/files.h"
#include "util/fs.h"
#include "util/units.h"

/* A read's bytes from the session's connection. */
static ssize_t bytes_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	int fd = *(int *)cls;
	for (;;) {
		ssize_t n = read(fd, buf, max);
		if (n < 0 && errno == EINTR)
			continue;
		/* (the answer's length was said: one cut short is an error, not an end) */
		return n > 0 ? n : MHD_CONTENT_READER_END_WITH_ERROR;
	}
}

static void bytes_free(void *cls)
{
	int *fd = cls;
	closep(fd);
	free(fd);
}

static enum MHD_Result error_json(struct MHD_Connection *c, int status, const char *why)
{
	return api_json(c, status, json_pack("{s:s}", "error", why));
}

enum MHD_Result serve_files_get(struct server *s, struct MHD_Connection *c, const char *id)
{
	const char *path = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "path");
	const char *l = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "list");
	bool list = l && strcmp(l, "0");
	if (!path || !*path)
		return error_json(c, 400, "path: required, a path in the cell (absolute, or relative to its worktree)");
	int status = 0;
	_cleanup_free_ char *why = NULL;
	int fd = serve_session_dial(s, id, &status, &why);
	if (fd < 0)
		return error_json(c, status, why);
	json_t *out = NULL;
	status = serve_send_line(fd, json_pack("{s:s,s:s}", "op", list ? "list" : "read", "path", path)) < 0
		 ? 500 : serve_first_answer(fd, &out);
	if (status != 200 || list) {
		close(fd);
		return api_json(c, status, out ? out : json_pack("{s:s}", "error", "cannot send the request to the session"));
	}
	json_int_t size = json_integer_value(json_object_get(out, "size"));
	json_decref(out);
	int *box = xmalloc(sizeof *box);
	*box = fd;
	struct MHD_Response *r = mhd.response_from_callback((uint64_t)size, 65536, bytes_read, box, bytes_free);
	mhd.add_header(r, "Content-Type", "application/octet-stream");
	enum MHD_Result ret = mhd.queue_response(c, 200, r);
	mhd.destroy_response(r);
	return ret;
}

/* An answer at the head of a PUT, the connection closed after it (its body left unread). */
static bool put_refused(struct MHD_Connection *c, int status, char *why, enum MHD_Result *ret)
{
	struct MHD_Response *r;
	_cleanup_free_ char *t = json_dumps(json_pack("{s:s}", "error", why), JSON_COMPACT);
	free(why);
	char *body = xasprintf("%s\n", t ? t : "{}");
	r = mhd.response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	mhd.add_header(r, "Content-Type", "application/json");
	mhd.add_header(r, "Connection", "close");
	*ret = mhd.queue_response(c, (unsigned)status, r);
	mhd.destroy_response(r);
	return false;
}

bool serve_files_put_head(struct server *s, struct MHD_Connection *c, const char *id, int *fd, uint64_t *len,
			  enum MHD_Result *ret)
{
	const char *path = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "path");
	const char *mode = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "mode");
	const char *p = mhd.lookup(c, MHD_GET_ARGUMENT_KIND, "parents");
	const char *cl = mhd.lookup(c, MHD_HEADER_KIND, "Content-Length");
	const char *why;
	int m;
	if (!path || !*path)
		return put_refused(c, 400, xstrdup("path: required, a path in the cell (absolute, or relative to its worktree)"), ret);
	if (mode && files_parse_mode(mode, &m, &why) < 0)
		return put_refused(c, 400, xasprintf("mode '%s': %s", mode, why), ret);
	if (!cl || parse_uint(cl, len) < 0)
		return put_refused(c, 411, xstrdup("a PUT of a file needs its Content-Length (the file's size in bytes)"), ret);
	if (*len > EXEC_FILE_MAX)
		return put_refused(c, 413, xasprintf("%s: the body is %llu bytes, over the %d MiB a write takes", path,
						     (unsigned long long)*len, EXEC_FILE_MAX >> 20), ret);
	int status = 0;
	char *w = NULL;
	*fd = serve_session_dial(s, id, &status, &w);
	if (*fd < 0)
		return put_refused(c, status, w, ret);
	json_t *req = json_pack("{s:s,s:s,s:I,s:b}", "op", "write", "path", path, "size", (json_int_t)*len, "parents",
				p && strcmp(p, "0"));
	if (mode)
		json_object_set_new(req, "mode", json_string(mode));
	if (serve_send_line(*fd, req) < 0 && errno != EPIPE && errno != ECONNRESET) {
		closep(fd);
		return put_refused(c, 500, xstrdup("cannot send the request to the session"), ret);
	}
	return true;
}

enum MHD_Result serve_files_put_end(struct MHD_Connection *c, int fd)
{
	json_t *out = NULL;
	int status = serve_first_answer(fd, &out);
	close(fd);
	return api_json(c, status, out);
}
