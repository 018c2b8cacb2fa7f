/* SPDX-License-Identifier: Apache-2.0 */
/* mcp_exec.c - an exec's answer for `warren mcp`: the session's stream (job/session.h; through a
 * warren serve the same lines, with keepalives) read as it comes, the call's progress told to
 * the client meanwhile, each stream kept as its first and last MCP_OUT_MAX/2 bytes (an agent's
 * context is no place for a megabyte of log: the exec's log in the run's record has all), then
 * the end as the tool's result. */
#include "cli/mcp.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "job/session.h"
#include "util/error.h"
#include "util/units.h"

void mcp_out_init(struct mcp_out *o, size_t max)
{
	*o = (struct mcp_out){ .max = max, .head = xmalloc(max / 2 + 1), .tail = xmalloc(max / 2 + 1) };
}

void mcp_out_free(struct mcp_out *o)
{
	free(o->head);
	free(o->tail);
	o->head = o->tail = NULL;
}

void mcp_out_add(struct mcp_out *o, const char *b, size_t n)
{
	size_t half = o->max / 2;
	o->total += n;
	size_t h = o->hlen < half ? (half - o->hlen < n ? half - o->hlen : n) : 0;
	memcpy(o->head + o->hlen, b, h);
	o->hlen += h;
	b += h;
	n -= h;
	if (n > half) {  /* only its end can stay */
		b += n - half;
		n = half;
	}
	for (size_t i = 0; i < n; i++) {
		o->tail[o->tpos] = b[i];
		o->tpos = (o->tpos + 1) % half;
	}
	o->tlen = o->tlen + n > half ? half : o->tlen + n;
}

json_t *mcp_out_json(const struct mcp_out *o, bool *cut)
{
	size_t half = o->max / 2;
	uint64_t left_out = o->total - o->hlen - o->tlen;
	*cut = left_out > 0;
	char note[128] = "";
	if (*cut)
		snprintf(note, sizeof note, "\n[warren: %llu bytes cut here; the exec's log in the run's record has them]\n",
			 (unsigned long long)left_out);
	size_t nl = strlen(note), n = o->hlen + nl + o->tlen;
	_cleanup_free_ char *all = xmalloc(n + 1);
	memcpy(all, o->head, o->hlen);
	memcpy(all + o->hlen, note, nl);
	/* the ring from its oldest byte: tpos once it is full */
	size_t start = o->tlen == half ? o->tpos : 0;
	for (size_t i = 0; i < o->tlen; i++)
		all[o->hlen + nl + i] = o->tail[(start + i) % (half ? half : 1)];
	size_t len;
	_cleanup_free_ char *text = utf8_lossy(all, n, &len);
	return json_stringn(text, len);
}

/* The answer's reader: what came before (an HTTP answer's body start), then fd, read as it
 * comes with the call's progress and cancel heard between reads. */
struct rd {
	int fd;
	char *buf;
	size_t len, off, cap;
	struct mcp_call *call;
	long exec;
};

/* More bytes into the buffer: 1, 0 at the end, -1 when the call was cancelled. */
static int rd_fill(struct rd *r)
{
	if (r->off) {
		memmove(r->buf, r->buf + r->off, r->len - r->off);
		r->len -= r->off;
		r->off = 0;
	}
	if (r->len == r->cap)
		r->buf = xrealloc(r->buf, r->cap = r->cap ? r->cap * 2 : 65536);
	for (;;) {
		if (mcp_call_cancelled(r->call))
			return -1;
		struct pollfd p = { .fd = r->fd, .events = POLLIN };
		int k = poll(&p, 1, 250);
		if (k < 0 && errno != EINTR)
			return 0;
		if (k <= 0) {
			char m[64], d[32];
			format_seconds(d, sizeof d, mcp_now() - (r->call ? r->call->started : mcp_now()));
			snprintf(m, sizeof m, "exec %ld running for %s", r->exec, d);
			mcp_call_progress(r->call, m);
			continue;
		}
		ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		r->len += (size_t)n;
		return 1;
	}
}

/* The next line (NUL-terminated in the buffer, without its newline), or NULL (*st: 0 at the
 * end, -1 cancelled). Valid until the next read. */
static char *rd_line(struct rd *r, int *st)
{
	for (;;) {
		char *nl = memchr(r->buf + r->off, '\n', r->len - r->off);
		if (nl) {
			*nl = '\0';
			char *l = r->buf + r->off;
			r->off = (size_t)(nl - r->buf) + 1;
			return l;
		}
		if (r->len - r->off > SESSION_REQ_MAX) {
			*st = 0;  /* no line of a session is that long */
			return NULL;
		}
		if ((*st = rd_fill(r)) <= 0)
			return NULL;
	}
}

/* n bytes of output into o: 0, or -1 (the end came first, or a cancel). */
static int rd_take(struct rd *r, size_t n, struct mcp_out *o)
{
	while (n) {
		if (r->off == r->len && rd_fill(r) <= 0)
			return -1;
		size_t k = r->len - r->off < n ? r->len - r->off : n;
		mcp_out_add(o, r->buf + r->off, k);
		r->off += k;
		n -= k;
	}
	return 0;
}

/* The session's {"end": {...}} with what was kept of the streams: the tool's result. */
static json_t *exec_result(json_t *end, const char *run, struct mcp_out out[2])
{
	static const char *const names[2] = { "stdout", "stderr" };
	json_t *r = json_pack("{s:s,s:O}", "run_id", run, "exec", json_object_get(end, "exec"));
	static const char *const keys[] = { "exit_code", "signal", "cause", NULL };
	for (const char *const *k = keys; *k; k++) {
		json_t *v = json_object_get(end, *k);
		json_object_set(r, *k, v ? v : json_null());
	}
	for (int j = 0; j < 2; j++) {
		bool cut;
		json_object_set_new(r, names[j], mcp_out_json(&out[j], &cut));
		_cleanup_free_ char *k = xasprintf("%s_truncated", names[j]);
		json_object_set_new(r, k, json_boolean(cut));
	}
	json_t *d = json_object_get(end, "duration_ms");
	json_object_set_new(r, "duration_ms", json_integer(json_is_integer(d) ? json_integer_value(d) : 0));
	return r;
}

/* One line of the stream: 1 the end (*res set), 0 go on, -1 failed (*fail set). */
static int exec_line(struct rd *r, const char *l, const char *run, struct mcp_out out[2], json_t **res, char **fail)
{
	json_t *j = json_loads(l, 0, NULL), *v;
	int st = 0;
	if (!j) {
		*fail = xasprintf("run %s: the session answered something that is not JSON", run);
		st = -1;
	} else if ((v = json_object_get(j, "error"))) {
		const char *e = json_string_value(v);
		*fail = e && strstr(e, run) ? xstrdup(e) : xasprintf("run %s: %s", run, e ? e : "the session refused the command");
		st = -1;
	} else if ((v = json_object_get(j, "stdout")) || (v = json_object_get(j, "stderr"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    rd_take(r, (size_t)json_integer_value(v), &out[json_object_get(j, "stdout") ? 0 : 1]) < 0) {
			*fail = mcp_call_cancelled(r->call) ? xstrdup("cancelled")
							    : xasprintf("run %s: the session ended before the command did", run);
			st = -1;
		}
	} else if ((v = json_object_get(j, "end"))) {
		*res = exec_result(v, run, out);
		st = 1;
	} else if ((v = json_object_get(j, "exec"))) {
		r->exec = (long)json_integer_value(v);
	}
	json_decref(j);
	return st;
}

json_t *mcp_exec_answer(int fd, const char *pre, size_t plen, const char *run, struct mcp_call *call, char **fail)
{
	struct rd r = { .fd = fd, .call = call, .cap = plen + 65536 };
	r.buf = xmalloc(r.cap);
	if (plen)
		memcpy(r.buf, pre, plen);
	r.len = plen;
	struct mcp_out out[2];
	mcp_out_init(&out[0], MCP_OUT_MAX);
	mcp_out_init(&out[1], MCP_OUT_MAX);
	json_t *res = NULL;
	for (;;) {
		int st;
		char *l = rd_line(&r, &st);
		if (!l) {
			*fail = st < 0 ? xstrdup("cancelled")
				       : xasprintf("run %s: the session ended before the command did (see 'warren show %s')", run, run);
			break;
		}
		if ((st = exec_line(&r, l, run, out, &res, fail)) != 0)
			break;
	}
	mcp_out_free(&out[0]);
	mcp_out_free(&out[1]);
	free(r.buf);
	return res;
}
