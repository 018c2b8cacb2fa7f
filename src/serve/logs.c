/* SPDX-License-Identifier: Apache-2.0 */
/* logs.c - GET /v1/runs/{id}/logs: a step's log (log/<n>-<name>.log of the run's record) from
 * a byte offset, whole (text/plain) or followed as Server-Sent Events: one event per line,
 * its `id:` the byte offset just after that line, so that a client reconnecting with
 * Last-Event-ID (or ?offset=) gets exactly the bytes after the last event it had; or all of
 * it as a file to save (?download=1), or its .times (when each chunk of it came, ?times=1). */
#include "serve/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK 65536
#define WAIT_STEP_MS 100
#define KEEPALIVE_MS 5000
#define WHOLE_MAX (16u << 20) /* a plain answer's bytes at most; X-Offset says where to go on */

struct sse {
	struct server *s;
	char id[RUN_ID_LEN + 1];
	char *step;
	int fd;               /* the log, -1 until it exists */
	uint64_t off;         /* the first byte not yet sent */
	char *pend;           /* formatted events not yet handed to libmicrohttpd */
	size_t plen, ppos;
	bool done;
};

/* Does log file name (n-name.log) match step: its number or its name; NULL: any. */
static bool step_matches(const char *file, const char *step)
{
	if (!step || !*step)
		return true;
	size_t n = strspn(file, "0123456789");
	if (step[strspn(step, "0123456789")] == '\0')
		return n == strlen(step) && !strncmp(file, step, n) && file[n] == '-';
	const char *name = file + n + (file[n] == '-');
	size_t l = strlen(step);
	return !strncmp(name, step, l) && !strcmp(name + l, ".log");
}

/* The log of step (the first one when NULL), opened; -1 when there is none yet. With name,
 * its file's name (heap); with times, its .times file instead. */
static int open_log(struct server *s, const char *id, const char *step, bool times, char **name)
{
	_cleanup_free_ char *dir = xasprintf("%s/runs/%s/log", s->sd.path, id);
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, versionsort), fd = -1;
	for (int i = 0; i < n; i++) {
		size_t l = strlen(ents[i]->d_name);
		if (fd < 0 && l > 4 && !strcmp(ents[i]->d_name + l - 4, ".log") && step_matches(ents[i]->d_name, step)) {
			_cleanup_free_ char *p = xasprintf("%s/%.*s%s", dir, (int)(l - 4), ents[i]->d_name, times ? ".times" : ".log");
			fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
			if (fd >= 0 && name)
				*name = xstrdup(ents[i]->d_name);
		}
		free(ents[i]);
	}
	free(ents);
	return fd;
}

static void append(struct sse *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void append(struct sse *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *t = xvasprintf(fmt, ap);
	va_end(ap);
	size_t n = strlen(t);
	e->pend = xrealloc(e->pend, e->plen + (size_t)n);
	memcpy(e->pend + e->plen, t, (size_t)n);
	e->plen += (size_t)n;
	free(t);
}

/* One event for the line b[0..n) (without its newline) that ends at offset end. */
static void line_event(struct sse *e, const char *b, size_t n, uint64_t end)
{
	append(e, "id: %llu\ndata: ", (unsigned long long)end);
	e->pend = xrealloc(e->pend, e->plen + n + 2);
	for (size_t i = 0; i < n; i++)
		if (b[i] != '\r')  /* a carriage return would end the SSE line */
			e->pend[e->plen++] = b[i];
	e->pend[e->plen++] = '\n';
	e->pend[e->plen++] = '\n';
}

/* Read what the log has after e->off into events: whole lines, or all of it when the run has
 * ended (ended) or a line is longer than CHUNK. True when it found something. */
static bool read_events(struct sse *e, bool ended)
{
	char *b = xmalloc(CHUNK);
	ssize_t n = pread(e->fd, b, CHUNK, (off_t)e->off);
	bool got = false;
	if (n > 0) {
		size_t start = 0;
		for (size_t i = 0; i < (size_t)n; i++)
			if (b[i] == '\n') {
				line_event(e, b + start, i - start, e->off + i + 1);
				start = i + 1;
			}
		if (start < (size_t)n && (ended || (start == 0 && n == CHUNK))) {
			line_event(e, b + start, (size_t)n - start, e->off + (uint64_t)n);
			start = (size_t)n;
		}
		e->off += start;
		got = start > 0;
	}
	free(b);
	return got;
}

static bool is_live(struct sse *e)
{
	pthread_mutex_lock(&e->s->mu);
	bool live = server_live(e->s, e->id);
	pthread_mutex_unlock(&e->s->mu);
	return live;
}

/* Fill e->pend: events, or the end, or a keepalive after a while of nothing. */
static void produce(struct sse *e)
{
	for (int waited = 0; waited < KEEPALIVE_MS; waited += WAIT_STEP_MS) {
		if (e->fd < 0)
			e->fd = open_log(e->s, e->id, e->step, false, NULL);
		bool live = is_live(e);
		if (e->fd >= 0 && read_events(e, !live))
			return;
		if (!live) {
			/* what it wrote before it ended was read above; the end */
			append(e, "event: end\ndata: {\"offset\": %llu}\n\n", (unsigned long long)e->off);
			e->done = true;
			return;
		}
		struct timespec ts = { 0, WAIT_STEP_MS * 1000000L };
		nanosleep(&ts, NULL);
	}
	append(e, ": keepalive\n\n");
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	struct sse *e = cls;
	if (e->ppos == e->plen) {
		e->ppos = e->plen = 0;
		if (e->done)
			return MHD_CONTENT_READER_END_OF_STREAM;
		produce(e);
	}
	size_t n = e->plen - e->ppos < max ? e->plen - e->ppos : max;
	memcpy(buf, e->pend + e->ppos, n);
	e->ppos += n;
	return (ssize_t)n;
}

static void sse_free(void *cls)
{
	struct sse *e = cls;
	closep(&e->fd);
	free(e->step);
	free(e->pend);
	free(e);
}

/* The log from offset, whole, as text/plain (X-Offset: where it ends). */
static struct MHD_Response *whole(struct server *s, const char *id, const char *step, uint64_t offset, int *status,
				  json_t **err)
{
	_cleanup_close_ int fd = open_log(s, id, step, false, NULL);
	if (fd < 0) {
		*status = 404;
		*err = json_pack("{s:s}", "error", step ? "no log of that step (yet)" : "no log yet (queued or starting)");
		return NULL;
	}
	off_t end = lseek(fd, 0, SEEK_END);
	size_t n = end > (off_t)offset ? (size_t)(end - (off_t)offset) : 0;
	if (n > WHOLE_MAX)
		n = WHOLE_MAX;
	char *b = xmalloc(n + 1);
	ssize_t got = n ? pread(fd, b, n, (off_t)offset) : 0;
	struct MHD_Response *r = mhd.response_from_buffer(got > 0 ? (size_t)got : 0, b, MHD_RESPMEM_MUST_FREE);
	mhd.add_header(r, "Content-Type", "text/plain; charset=utf-8");
	char o[32];
	snprintf(o, sizeof o, "%llu", (unsigned long long)offset + (unsigned long long)(got > 0 ? got : 0));
	mhd.add_header(r, "X-Offset", o);
	return r;
}

/* ---- the whole file, to save: streamed as it is read ---- */

static ssize_t file_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	int fd = (int)(intptr_t)cls;
	ssize_t n = pread(fd, buf, max, (off_t)pos);
	return n > 0 ? n : n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void file_free(void *cls)
{
	close((int)(intptr_t)cls);
}

struct MHD_Response *logs_file(struct server *s, const char *id, const char *step, bool times, bool download,
			       int *status, json_t **err)
{
	_cleanup_free_ char *name = NULL;
	int fd = open_log(s, id, step, times, &name);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		*status = 404;
		*err = json_pack("{s:s}", "error", times ? "no times of that log (the run kept none, or none yet)"
						   : step ? "no log of that step (yet)" : "no log yet (queued or starting)");
		return NULL;
	}
	struct MHD_Response *r = mhd.response_from_callback((uint64_t)st.st_size, 65536, file_read, (void *)(intptr_t)fd,
							    file_free);
	mhd.add_header(r, "Content-Type", download ? "application/octet-stream" : "text/plain; charset=utf-8");
	mhd.add_header(r, "X-Content-Type-Options", "nosniff");
	if (download) {
		/* <id>-<n>-<name>.log: the name is logname_encode()'s (letters, digits, "_+,-%") */
		name[strlen(name) - 4] = '\0';
		_cleanup_free_ char *cd = xasprintf("attachment; filename=\"%s-%s%s\"", id, name, times ? ".times" : ".log");
		mhd.add_header(r, "Content-Disposition", cd);
	}
	*status = 200;
	return r;
}

struct MHD_Response *logs_response(struct server *s, const char *id, const char *step, uint64_t offset,
				   bool follow, int *status, json_t **err)
{
	if (!follow)
		return whole(s, id, step, offset, status, err);
	struct sse *e = xcalloc(1, sizeof *e);
	e->s = s;
	memcpy(e->id, id, RUN_ID_LEN + 1);
	e->step = step ? xstrdup(step) : NULL;
	e->fd = -1;
	e->off = offset;
	struct MHD_Response *r = mhd.response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_read, e, sse_free);
	mhd.add_header(r, "Content-Type", "text/event-stream");
	mhd.add_header(r, "Cache-Control", "no-cache");
	*status = 200;
	return r;
}
