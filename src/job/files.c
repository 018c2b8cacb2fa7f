/* SPDX-License-Identifier: Apache-2.0 */
/* files.c - a live session's files (job/files.h), the supervisor's side: a request taken from
 * the session's socket, its path placed in the cell's view (the worktree, /tmp, the home) or
 * refused, a write's body gathered in a memfd, the operation sent to the cell's executor with
 * that memfd (cell/execfiles.c opens the file there, as the run user), and its answer: a read's
 * bytes streamed from the memfd (sealed first: nothing of the cell changes them meanwhile), a
 * list's records as JSON. The supervisor never opens a file of the cell. After its answer a
 * connection is shut for writing and read until its caller closes (a caller still sending a
 * refused body would otherwise lose the answer to a reset). */
#include "job/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cell/contract.h"
#include "job/session.h"
#include "run/record.h"
#include "supervise/supervise.h"
#include "util/fs.h"

enum fstate {
	F_FREE,
	F_BODY,    /* a write's body comes */
	F_CELL,    /* sent to the cell; its answer awaited */
	F_SEND,    /* the answer goes out: out, then a read's bytes */
	F_DRAIN,   /* answered: read until the caller closes */
};

struct fop {
	enum fstate st;
	int fd;                   /* the caller */
	int mem;                  /* the bytes (memfd) */
	struct files_req rq;
	char *path;               /* as asked */
	const char *place;
	char *rel;
	uint32_t serial;
	uint64_t done;            /* F_BODY: bytes of the body in mem; F_SEND: bytes of mem sent */
	uint64_t len;             /* F_SEND: bytes of mem to send */
	double since;             /* when its phase began, or it last moved */
	char *out;                /* F_SEND: the answer's line, then */
	size_t out_len, out_off;
};

struct files {
	struct session_host h;
	struct fop op[FILES_AT_ONCE];
	uint32_t serial;
};

/* ---- pure parts ---- */

bool files_op(const char *op)
{
	return op && (!strcmp(op, "read") || !strcmp(op, "write") || !strcmp(op, "list"));
}

int files_parse_mode(const char *s, int *mode, const char **why)
{
	char *end;
	long v = strtol(s, &end, 8);
	if (!*s || *end || strlen(s) > 5 || v < 0 || v > 07777) {
		*why = "not octal permissions such as 0644 or 755";
		return -EINVAL;
	}
	if (v & 06000) {
		*why = "no set-user-id or set-group-id file is made in a cell (at most 01777)";
		return -EINVAL;
	}
	*mode = (int)v;
	return 0;
}

int files_parse(json_t *req, struct files_req *r, char **why)
{
	*r = (struct files_req){ .mode = -1 };
	const char *op = json_string_value(json_object_get(req, "op"));
	json_t *p = json_object_get(req, "path"), *size = json_object_get(req, "size");
	json_t *mode = json_object_get(req, "mode"), *parents = json_object_get(req, "parents");
	r->op = !op ? 0 : !strcmp(op, "read") ? EXEC_FILE_READ : !strcmp(op, "write") ? EXEC_FILE_WRITE
		: !strcmp(op, "list") ? EXEC_FILE_LIST : 0;
	r->path = json_string_value(p);
	const char *w = NULL;
	if (!r->op)
		w = "op must be \"read\", \"write\" or \"list\"";
	else if (!r->path || !*r->path || strlen(r->path) != json_string_length(p))
		w = "path must be a path in the cell (absolute, or relative to the worktree)";
	else if (r->op == EXEC_FILE_WRITE && (!json_is_integer(size) || json_integer_value(size) < 0))
		w = "size must be the number of bytes that follow the request's line";
	else if (mode && !json_is_null(mode) && !json_is_string(mode))
		w = "mode must be a string of octal permissions such as \"0644\"";
	else if (parents && !json_is_boolean(parents))
		w = "parents must be true or false";
	if (!w && json_is_string(mode) && files_parse_mode(json_string_value(mode), &r->mode, &w) < 0) {
		*why = xasprintf("mode '%s': %s", json_string_value(mode), w);
		return 400;
	}
	if (w) {
		*why = xstrdup(w);
		return 400;
	}
	r->parents = json_is_true(parents);
	if (r->op == EXEC_FILE_WRITE) {
		r->size = (uint64_t)json_integer_value(size);
		if (r->size > EXEC_FILE_MAX) {
			*why = xasprintf("%s: the body is %llu bytes, over the %d MiB a write takes", r->path,
					 (unsigned long long)r->size, EXEC_FILE_MAX >> 20);
			return 413;
		}
	}
	return 0;
}

/* "files may be under ...", naming the places (heap). */
static char *places_line(const char *worktree, const char *home)
{
	_cleanup_free_ char *w = worktree ? xasprintf("%s (the worktree), ", worktree) : xstrdup("");
	_cleanup_free_ char *h = home ? xasprintf(" and %s (the home)", home) : xstrdup("");
	char *l = xasprintf("files may be under %s" CELL_TMP_PATH " ($TMPDIR)%s", w, h);
	if (worktree && !home) {
		/* "W (the worktree) and /tmp ($TMPDIR)" */
		free(l);
		l = xasprintf("files may be under %s (the worktree) and " CELL_TMP_PATH " ($TMPDIR)", worktree);
	}
	return l;
}

/* Does path (normalised, absolute) lie at or below dir? */
static bool at_or_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n == 1)
		return true;
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

int files_place(const char *path, const char *worktree, const char *home, const char **place, char **rel, char **why)
{
	*rel = NULL;
	if (!*path || strlen(path) >= PATH_MAX) {
		*why = xasprintf("path must be a path in the cell of at most %d bytes", PATH_MAX - 1);
		return 400;
	}
	const char *base = worktree ? worktree : home;
	_cleanup_free_ char *full = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", base ? base : "/", path);
	/* the parts, without empty and "." ones; a ".." is refused (it would be resolved in the
	 * cell, where a link on the way may point anywhere) */
	char *norm = xmalloc(strlen(full) + 2), *save = NULL;
	size_t n = 0;
	for (char *t = strtok_r(full, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (!strcmp(t, "."))
			continue;
		if (!strcmp(t, "..")) {
			_cleanup_free_ char *pl = places_line(worktree, home);
			*why = xasprintf("%s has a '..' part: give the path without it (%s)", path, pl);
			free(norm);
			return 403;
		}
		n += (size_t)sprintf(norm + n, "/%s", t);
	}
	if (!n)
		strcpy(norm, "/");
	const char *cand[] = { worktree, CELL_TMP_PATH, home };
	const char *best = NULL;
	for (size_t i = 0; i < 3; i++)
		if (cand[i] && at_or_below(norm, cand[i]) && (!best || strlen(cand[i]) > strlen(best)))
			best = cand[i];
	if (!best) {
		_cleanup_free_ char *pl = places_line(worktree, home);
		*why = xasprintf("%s is not among the cell's files: %s", path, pl);
		free(norm);
		return 403;
	}
	size_t bl = strlen(best);
	while (bl > 1 && best[bl - 1] == '/')
		bl--;
	*place = best;
	*rel = xstrdup(norm[bl] == '/' ? norm + bl + 1 : norm + bl);
	free(norm);
	return 0;
}

int files_failure(int err, enum exec_file_op op, const char *path, char **why)
{
	switch (err) {
	case ENOENT:
		*why = op == EXEC_FILE_WRITE ? xasprintf("%s: its directory does not exist in the cell (make it, or ask for the missing directories: parents)", path)
					     : xasprintf("%s: no such file in the cell", path);
		return 404;
	case ENOTDIR:
		if (op == EXEC_FILE_LIST) {
			*why = xasprintf("%s is not a directory: a list takes a directory (read a file)", path);
			return 400;
		}
		*why = xasprintf("%s: a part of it is not a directory in the cell", path);
		return 404;
	case EACCES:
	case EPERM:
		*why = xasprintf("%s: permission denied to the run user in the cell", path);
		return 403;
	case EROFS:
		*why = xasprintf("%s is on a read-only file system in the cell", path);
		return 403;
	case EXDEV:
		*why = xasprintf("%s: a symbolic link on its way leads out of the cell's files (links are followed only while they stay below the worktree, /tmp or the home)", path);
		return 403;
	case ELOOP:
		*why = op == EXEC_FILE_WRITE ? xasprintf("%s is a symbolic link: no file is written through a link (give its target's path)", path)
					     : xasprintf("%s: too many symbolic links on its way", path);
		return 403;
	case EISDIR:
		*why = xasprintf("%s is a directory: %s takes a file (list takes a directory)", path, op == EXEC_FILE_WRITE ? "a write" : "a read");
		return 400;
	case ENXIO:
		*why = xasprintf("%s is not a regular file (a FIFO, a socket or a device): only regular files are read and written", path);
		return 400;
	case EFBIG:
		*why = xasprintf("%s is over %d MiB, the most a read takes: read parts of it with an exec (head -c, tail -c)", path, EXEC_FILE_MAX >> 20);
		return 413;
	case ENOSPC:
	case EDQUOT:
		*why = xasprintf("%s: no space left in the cell (its scratch's size, or the disk's)", path);
		return 507;
	case ENAMETOOLONG:
		*why = xasprintf("%s: a name in it is too long", path);
		return 400;
	case EAGAIN:
		*why = xstrdup("the cell's executor is not taking requests now (stopped, or behind on earlier ones); try again, or end the session");
		return 503;
	case ETIMEDOUT:
		*why = xasprintf("%s: the cell did not answer within %.0f s (its executor stopped, or a slow file system)", path, FILES_CELL_S);
		return 504;
	default:
		*why = xasprintf("%s: %s", path, strerror(err));
		return 500;
	}
}

static const char *type_of(uint32_t mode)
{
	return !mode ? "unknown" : S_ISREG(mode) ? "file" : S_ISDIR(mode) ? "dir" : S_ISLNK(mode) ? "symlink"
	       : S_ISFIFO(mode) ? "fifo" : S_ISSOCK(mode) ? "socket" : S_ISCHR(mode) ? "char" : S_ISBLK(mode) ? "block" : "unknown";
}

static int by_name(const void *a, const void *b)
{
	json_t *const *x = a, *const *y = b;
	return strcmp(json_string_value(json_object_get(*x, "name")), json_string_value(json_object_get(*y, "name")));
}

/* b[0..n) as a JSON string (invalid UTF-8 as U+FFFD). */
static json_t *text(const char *b, size_t n)
{
	size_t l;
	_cleanup_free_ char *t = utf8_lossy(b, n, &l);
	return json_stringn(t, l);
}

json_t *files_entries(const char *b, size_t len)
{
	size_t n = 0, cap = 16;
	json_t **e = xmalloc(cap * sizeof *e);
	for (size_t off = 0; len - off >= sizeof(struct exec_file_ent);) {
		struct exec_file_ent r;
		memcpy(&r, b + off, sizeof r);
		off += sizeof r;
		if (!r.name_len || r.name_len > NAME_MAX || r.target_len > PATH_MAX || len - off < (size_t)r.name_len + r.target_len)
			break;
		char st[64];
		struct timespec ts = { .tv_sec = r.mtime_s };
		json_t *o = json_pack("{s:o,s:s}", "name", text(b + off, r.name_len), "type", type_of(r.mode));
		json_object_set_new(o, "size", r.mode ? json_integer(r.size) : json_null());
		json_object_set_new(o, "mode", r.mode ? json_sprintf("%04o", r.mode & 07777) : json_null());
		json_object_set_new(o, "mtime", r.mode ? json_string(format_rfc3339(st, sizeof st, &ts)) : json_null());
		if (S_ISLNK(r.mode))
			json_object_set_new(o, "target", text(b + off + r.name_len, r.target_len));
		off += (size_t)r.name_len + r.target_len;
		if (n == cap)
			e = xrealloc(e, (cap *= 2) * sizeof *e);
		e[n++] = o;
	}
	qsort(e, n, sizeof *e, by_name);
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, e[i]);
	free(e);
	return a;
}

/* ---- operations ---- */

static double now_s(const struct files *f)
{
	return sup_elapsed(f->h.u);
}

static void watch(struct files *f, size_t i, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u32 = EV_SESSION + EV_FILES_BASE + (uint32_t)i };
	epoll_ctl(f->h.u->ep, EPOLL_CTL_MOD, f->op[i].fd, &ev);
}

static void op_free(struct files *f, size_t i)
{
	struct fop *o = &f->op[i];
	if (o->fd >= 0)
		epoll_ctl(f->h.u->ep, EPOLL_CTL_DEL, o->fd, NULL);
	closep(&o->fd);
	closep(&o->mem);
	free(o->path);
	free(o->rel);
	free(o->out);
	*o = (struct fop){ .st = F_FREE, .fd = -1, .mem = -1 };
}

/* Send what op i has to send, as much as goes now; all sent, its connection is drained. */
static void flush(struct files *f, size_t i)
{
	struct fop *o = &f->op[i];
	while (o->out_off < o->out_len || o->done < o->len) {
		ssize_t n;
		if (o->out_off < o->out_len) {
			n = send(o->fd, o->out + o->out_off, o->out_len - o->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		} else {
			off_t off = (off_t)o->done;
			n = sendfile(o->fd, o->mem, &off, o->len - o->done);
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			watch(f, i, EPOLLOUT);
			return;
		}
		if (n <= 0) {
			op_free(f, i);  /* the caller is gone */
			return;
		}
		if (o->out_off < o->out_len)
			o->out_off += (size_t)n;
		else
			o->done += (uint64_t)n;
		o->since = now_s(f);
	}
	shutdown(o->fd, SHUT_WR);
	closep(&o->mem);
	o->st = F_DRAIN;
	o->since = now_s(f);
	watch(f, i, EPOLLIN);
}

/* Answer op i with the line j (taken), then len bytes of its memfd (a read's). */
static void answer(struct files *f, size_t i, json_t *j, uint64_t len)
{
	struct fop *o = &f->op[i];
	_cleanup_free_ char *t = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	free(o->out);
	o->out = xasprintf("%s\n", t ? t : "{}");
	o->out_len = strlen(o->out);
	o->out_off = 0;
	o->len = len;
	o->done = 0;
	o->st = F_SEND;
	o->since = now_s(f);
	flush(f, i);
}

static void refuse(struct files *f, size_t i, int status, char *why)
{
	answer(f, i, json_pack("{s:s,s:i}", "error", why, "status", status), 0);
	free(why);
}

/* Refuse op i for the errno err of its operation. */
static void failed(struct files *f, size_t i, int err)
{
	char *why;
	int st = files_failure(err, f->op[i].rq.op, f->op[i].path, &why);
	refuse(f, i, st, why);
}

/* Send op i to the cell's executor: EXEC_FILE with "place\0rel\0" and the memfd. */
static void to_cell(struct files *f, size_t i)
{
	struct fop *o = &f->op[i];
	o->serial = (++f->serial & 0xffffffu) | 1u << 24;
	uint32_t how = (o->rq.mode >= 0 ? EXEC_FILE_MODE_SET | (uint32_t)o->rq.mode : 0) | (o->rq.parents ? EXEC_FILE_PARENTS : 0);
	struct exec_hdr h = { .type = EXEC_FILE, .task = FILES_TASK_BIT | o->serial, .a = (int32_t)o->rq.op, .b = (int32_t)how };
	size_t pl = strlen(o->place) + 1, rl = strlen(o->rel) + 1;
	_cleanup_free_ char *msg = xmalloc(sizeof h + pl + rl);
	memcpy(msg, &h, sizeof h);
	memcpy(msg + sizeof h, o->place, pl);
	memcpy(msg + sizeof h + pl, o->rel, rl);
	union fd_cmsg c;
	struct iovec iov;
	struct msghdr mh;
	fd_msg(&mh, &iov, &c, o->mem, msg, sizeof h + pl + rl);
	/* as an exec's start: the executor woken, and never waited for (session.c) */
	sup_signal_job(f->h.u, SIGCONT);
	if (sendmsg(f->h.ctl, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return failed(f, i, errno);
	o->st = F_CELL;
	o->since = now_s(f);
	watch(f, i, 0);
}

/* More of a write's body on op i's connection. */
static void body_read(struct files *f, size_t i)
{
	struct fop *o = &f->op[i];
	char buf[65536];
	uint64_t left = o->rq.size - o->done;
	ssize_t n = recv(o->fd, buf, left < sizeof buf ? (size_t)left : sizeof buf, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0)
		return op_free(f, i);  /* the caller left before its body was whole: nothing written */
	if (write_all(o->mem, buf, (size_t)n) < 0)
		return refuse(f, i, 500, xasprintf("%s: cannot hold the body: %s", o->path, strerror(errno)));
	o->done += (uint64_t)n;
	o->since = now_s(f);
	if (o->done == o->rq.size)
		to_cell(f, i);
}

struct files *files_new(const struct session_host *h)
{
	struct files *f = xcalloc(1, sizeof *f);
	f->h = *h;
	for (size_t i = 0; i < FILES_AT_ONCE; i++)
		f->op[i] = (struct fop){ .st = F_FREE, .fd = -1, .mem = -1 };
	return f;
}

void files_take(struct files *f, int fd, json_t *req, const char *rest, size_t n)
{
	size_t i = 0;
	while (i < FILES_AT_ONCE && f->op[i].st != F_FREE)
		i++;
	if (i == FILES_AT_ONCE) {
		_cleanup_free_ char *busy = xasprintf("{\"error\":\"%d file operations already run in this session at once; "
						      "wait for one to end\",\"status\":429}\n", FILES_AT_ONCE);
		ssize_t w = send(fd, busy, strlen(busy), MSG_NOSIGNAL | MSG_DONTWAIT);
		(void)w;
		shutdown(fd, SHUT_WR);
		close(fd);
		return;
	}
	struct fop *o = &f->op[i];
	*o = (struct fop){ .st = F_CELL, .fd = fd, .mem = -1, .since = now_s(f) };
	struct epoll_event ev = { .events = 0, .data.u32 = EV_SESSION + EV_FILES_BASE + (uint32_t)i };
	epoll_ctl(f->h.u->ep, EPOLL_CTL_ADD, fd, &ev);
	char *why = NULL;
	int st = files_parse(req, &o->rq, &why);
	o->path = xstrdup(o->rq.path ? o->rq.path : "");
	o->rq.path = o->path;
	if (st)
		return refuse(f, i, st, why);
	st = files_place(o->path, f->h.s->worktree, f->h.s->home, &o->place, &o->rel, &why);
	if (st)
		return refuse(f, i, st, why);
	o->mem = memfd_create("warren-file", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (o->mem < 0)
		return refuse(f, i, 500, xasprintf("cannot make a memfd for %s: %s", o->path, strerror(errno)));
	if (o->rq.op == EXEC_FILE_WRITE) {
		size_t take = n < o->rq.size ? n : (size_t)o->rq.size;
		if (take && write_all(o->mem, rest, take) < 0)
			return refuse(f, i, 500, xasprintf("%s: cannot hold the body: %s", o->path, strerror(errno)));
		o->done = take;
		if (o->done < o->rq.size) {
			o->st = F_BODY;
			watch(f, i, EPOLLIN);
			return;
		}
	}
	to_cell(f, i);
}

void files_event(struct files *f, uint32_t tag, uint32_t events)
{
	if (tag >= FILES_AT_ONCE)
		return;
	struct fop *o = &f->op[tag];
	char buf[4096];
	ssize_t n;
	switch (o->st) {
	case F_BODY:
		body_read(f, tag);
		break;
	case F_CELL:
		/* (nothing is asked of it now: a hang-up) the caller is gone; the cell's answer is dropped */
		epoll_ctl(f->h.u->ep, EPOLL_CTL_DEL, o->fd, NULL);
		closep(&o->fd);
		break;
	case F_SEND:
		if (events & (EPOLLHUP | EPOLLERR))
			op_free(f, tag);
		else
			flush(f, tag);
		break;
	case F_DRAIN:
		n = recv(o->fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n > 0)
			o->since = now_s(f);
		else if (n == 0 || (errno != EAGAIN && errno != EINTR))
			op_free(f, tag);
		break;
	case F_FREE:
		break;
	}
}

/* A read's or a list's memfd, done: sealed (nothing changes it any more), its size. */
static int sealed_size(int mem, uint64_t *len)
{
	struct stat st;
	if (fcntl(mem, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 || fstat(mem, &st) < 0)
		return -errno;
	*len = (uint64_t)st.st_size;
	return 0;
}

/* Op i's operation ended well in the cell (b: EXEC_FILE_DONE's flags): its answer. */
static void done(struct files *f, size_t i, int32_t b)
{
	struct fop *o = &f->op[i];
	uint64_t len = 0;
	if (o->rq.op == EXEC_FILE_WRITE)
		return answer(f, i, json_pack("{s:I}", "written", (json_int_t)o->rq.size), 0);
	if (sealed_size(o->mem, &len) < 0)
		return refuse(f, i, 500, xasprintf("%s: its bytes could not be sealed: %s", o->path, strerror(errno)));
	if (len > EXEC_FILE_MAX)
		return failed(f, i, EFBIG);
	if (o->rq.op == EXEC_FILE_READ)
		return answer(f, i, json_pack("{s:I}", "size", (json_int_t)len), len);
	_cleanup_free_ char *recs = xmalloc(len + 1);
	ssize_t n = pread(o->mem, recs, len, 0);
	json_t *e = files_entries(recs, n > 0 ? (size_t)n : 0);
	_cleanup_free_ char *full = *o->rel ? xasprintf("%s/%s", strcmp(o->place, "/") ? o->place : "", o->rel) : xstrdup(o->place);
	answer(f, i, json_pack("{s:s,s:o,s:b}", "path", full, "entries", e, "truncated", (b & EXEC_FILE_CUT) != 0), 0);
}

bool files_ctl(struct files *f, const struct exec_hdr *h)
{
	if (!f || (h->task & 0xe0000000u) != FILES_TASK_BIT)
		return false;
	uint32_t serial = h->task & ~FILES_TASK_BIT;
	for (size_t i = 0; i < FILES_AT_ONCE; i++) {
		struct fop *o = &f->op[i];
		if (o->st != F_CELL || o->serial != serial || h->type != EXEC_FILE_DONE)
			continue;
		if (o->fd < 0)
			op_free(f, i);  /* its caller left */
		else if (h->a)
			failed(f, i, h->a);
		else
			done(f, i, h->b);
		break;
	}
	return true;
}

void files_tick(struct files *f)
{
	double t = now_s(f);
	for (size_t i = 0; i < FILES_AT_ONCE; i++) {
		struct fop *o = &f->op[i];
		if (o->st == F_CELL && t - o->since >= FILES_CELL_S)
			o->fd >= 0 ? failed(f, i, ETIMEDOUT) : op_free(f, i);
		else if (o->st != F_FREE && o->st != F_CELL && t - o->since >= FILES_STALL_S)
			op_free(f, i);
	}
}

void files_close(struct files *f, const char *why)
{
	for (size_t i = 0; i < FILES_AT_ONCE; i++) {
		struct fop *o = &f->op[i];
		if ((o->st == F_BODY || o->st == F_CELL) && o->fd >= 0)
			refuse(f, i, 409, xstrdup(why));  /* (one try: the run is ending) */
		if (o->st != F_FREE)
			op_free(f, i);
	}
}

void files_free(struct files *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < FILES_AT_ONCE; i++)
		if (f->op[i].st != F_FREE)
			op_free(f, i);
	free(f);
}
