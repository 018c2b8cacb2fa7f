/* SPDX-License-Identifier: Apache-2.0 */
/* execfiles.c - a session's files, done by the executor (cell/executor.h, EXEC_FILE) inside the
 * cell, as the run user, under the job's seccomp and Landlock, in a child of its own (a slow
 * file system holds that child, never the executor; it tells how it went with EXEC_FILE_DONE).
 *
 * The path is walked one component at a time from the place's directory (the worktree, /tmp,
 * the home), each opened O_PATH | O_NOFOLLOW below the one before, so that nothing is resolved
 * by a name the job could change meanwhile: a symbolic link is read from the descriptor of the
 * link itself and followed only while it stays below the place (what openat2's RESOLVE_BENEATH
 * does; the cell's seccomp refuses openat2 to the job, and so to the executor): an absolute
 * target or one whose ".." climbs above the place is refused (EXDEV). The last part of a write is
 * opened O_NOFOLLOW (a link there is refused, ELOOP). Files are opened O_NONBLOCK | O_NOCTTY and
 * only regular ones are read or written (a FIFO or a device is refused, ENXIO, and never holds
 * the call). The bytes pass in the supervisor's memfd. Plain C library: the static guest init
 * links this file with the executor. */
#include "cell/executor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

enum { LINKS_MAX = 40 };

/* The directories walked from the place down (d[0] is the place), and what is left to walk:
 * rest from pos on, components separated by '/'. */
struct walk {
	int *d;
	size_t n, cap;
	char *rest;
	size_t pos;
	int links;
};

static int top(const struct walk *w)
{
	return w->d[w->n - 1];
}

static void walk_push(struct walk *w, int fd)
{
	if (w->n == w->cap)
		w->d = xrealloc(w->d, (w->cap = w->cap ? w->cap * 2 : 16) * sizeof *w->d);
	w->d[w->n++] = fd;
}

static void walk_free(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		close(w->d[i]);
	free(w->d);
	free(w->rest);
}

/* The next component to walk (heap, in *part; "." ones skipped); false when none is left. */
static bool next_part(struct walk *w, char **part)
{
	for (;;) {
		const char *p = w->rest + w->pos;
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		w->pos = (size_t)(p - w->rest) + n;
		if (!n)
			return false;
		if (n == 1 && *p == '.')
			continue;
		*part = strndup(p, n);
		if (!*part)
			abort();
		return true;
	}
}

/* Is a component other than "." still to walk? */
static bool more_parts(const struct walk *w)
{
	for (const char *p = w->rest + w->pos; *p;) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n && !(n == 1 && *p == '.'))
			return true;
		p += n;
	}
	return false;
}

/* The link name in dir (name "": dir is the link's own O_PATH descriptor) is walked instead
 * of it: its target, relative to the directory it is in, goes before what is left. */
static int follow(struct walk *w, int dir, const char *name)
{
	if (++w->links > LINKS_MAX)
		return -ELOOP;
	char buf[PATH_MAX];
	ssize_t n = readlinkat(dir, name, buf, sizeof buf - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (buf[0] == '/')
		return -EXDEV;  /* an absolute target: the place is left */
	char *r = xasprintf("%s/%s", buf, w->rest + w->pos);
	free(w->rest);
	w->rest = r;
	w->pos = 0;
	return 0;
}

/* Walk w to the directory of its last component: 0 with that component in *last (heap; "."
 * when the path ends at a directory), or -errno (EXDEV: it would leave the place). parents:
 * make the missing directories on the way (mode 0777 less the umask, as mkdir -p). */
static int walk_to_last(struct walk *w, bool parents, char **last)
{
	char *part;
	while (next_part(w, &part)) {
		if (!strcmp(part, "..")) {
			free(part);
			if (w->n == 1)
				return -EXDEV;
			close(w->d[--w->n]);
			continue;
		}
		if (!more_parts(w)) {
			*last = part;
			return 0;
		}
		int fd = openat(top(w), part, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && parents && (mkdirat(top(w), part, 0777) == 0 || errno == EEXIST))
			fd = openat(top(w), part, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		free(part);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			e = fd < 0 ? e : errno;
			if (fd >= 0)
				close(fd);
			return -e;
		}
		if (S_ISLNK(st.st_mode)) {
			int r = follow(w, fd, "");
			close(fd);
			if (r < 0)
				return r;
		} else if (S_ISDIR(st.st_mode)) {
			walk_push(w, fd);
		} else {
			close(fd);
			return -ENOTDIR;
		}
	}
	*last = xstrdup(".");
	return 0;
}

/* Open the last component of w with flags (O_NOFOLLOW among them); a symbolic link there is
 * followed below the place when follow_last, else refused (ELOOP). The descriptor or -errno. */
static int open_last(struct walk *w, int flags, mode_t mode, bool parents, bool follow_last)
{
	for (;;) {
		char *last = NULL;
		int r = walk_to_last(w, parents, &last);
		if (r < 0)
			return r;
		int fd = openat(top(w), last, flags | O_NOFOLLOW | O_CLOEXEC, mode);
		int e = errno;
		/* (a link opened O_DIRECTORY | O_NOFOLLOW says ENOTDIR, not ELOOP) */
		if (fd < 0 && follow_last && (e == ELOOP || e == ENOTDIR)) {
			r = follow(w, top(w), last);
			free(last);
			if (r == -EINVAL)
				return -e;  /* not a link after all */
			if (r < 0)
				return r;
			continue;
		}
		free(last);
		return fd < 0 ? -e : fd;
	}
}

/* Is fd a regular file (0), or what it is instead (-EISDIR, -ENXIO)? Clears O_NONBLOCK. */
static int regular(int fd, struct stat *st)
{
	if (fstat(fd, st) < 0)
		return -errno;
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (!S_ISREG(st->st_mode))
		return -ENXIO;
	fcntl(fd, F_SETFL, 0);
	return 0;
}

static int put_all(int fd, const void *b, size_t n)
{
	for (size_t w = 0; w < n;) {
		ssize_t k = write(fd, (const char *)b + w, n - w);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		w += (size_t)k;
	}
	return 0;
}

/* Copy from in (at *off, or its position when off is NULL) to out until in's end or limit
 * bytes; the bytes copied or -errno. */
static long long copy(int out, int in, off_t *off, long long limit)
{
	long long total = 0;
	char buf[65536];
	bool plain = false;  /* a file system without splice: read and write */
	while (total < limit) {
		size_t want = limit - total < (long long)sizeof buf ? (size_t)(limit - total) : sizeof buf;
		ssize_t n;
		if (!plain) {
			n = sendfile(out, in, off, want);
			if (n < 0 && (errno == EINVAL || errno == ENOSYS)) {
				plain = true;
				continue;
			}
		} else {
			n = off ? pread(in, buf, want, *off) : read(in, buf, want);
			int r = n > 0 ? put_all(out, buf, (size_t)n) : 0;
			if (r < 0)
				return r;
			if (n > 0 && off)
				*off += n;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		total += n;
	}
	return total;
}

static int op_read(struct walk *w, int mem)
{
	int fd = open_last(w, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, false, true);
	if (fd < 0)
		return fd;
	struct stat st;
	int r = regular(fd, &st);
	long long n = r < 0 ? r : st.st_size > EXEC_FILE_MAX ? -EFBIG : copy(mem, fd, NULL, EXEC_FILE_MAX + 1LL);
	close(fd);
	return n < 0 ? (int)n : n > EXEC_FILE_MAX ? -EFBIG : 0;
}

static int op_write(struct walk *w, int mem, uint32_t how)
{
	mode_t mode = (how & EXEC_FILE_MODE_SET) ? how & 07777 : 0666;
	int fd = open_last(w, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY, mode & 0777, how & EXEC_FILE_PARENTS, false);
	if (fd < 0)
		return fd;
	struct stat st, ms;
	int r = regular(fd, &st);
	if (r == 0 && (how & EXEC_FILE_MODE_SET) && fchmod(fd, mode) < 0)
		r = -errno;
	if (r == 0 && (fstat(mem, &ms) < 0 || ftruncate(fd, 0) < 0))
		r = -errno;
	off_t off = 0;
	long long n = r < 0 ? r : copy(fd, mem, &off, ms.st_size);
	if (n >= 0 && n != ms.st_size)
		n = -EIO;
	if (close(fd) < 0 && n >= 0)
		n = -errno;  /* (a network file system says so at close) */
	return n < 0 ? (int)n : 0;
}

/* One entry of the directory dfd as a record in mem. */
static int list_one(int dfd, const char *name, int mem)
{
	struct stat st;
	struct exec_file_ent e = { .name_len = (uint32_t)strlen(name) };
	char target[PATH_MAX];
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		e.mode = st.st_mode;
		e.size = st.st_size;
		e.mtime_s = st.st_mtim.tv_sec;
	}
	ssize_t t = S_ISLNK(e.mode) ? readlinkat(dfd, name, target, sizeof target) : -1;
	e.target_len = t > 0 ? (uint32_t)t : 0;
	int r = put_all(mem, &e, sizeof e);
	if (r == 0)
		r = put_all(mem, name, e.name_len);
	if (r == 0 && e.target_len)
		r = put_all(mem, target, e.target_len);
	return r;
}

static int op_list(struct walk *w, int mem, int *cut)
{
	int fd = open_last(w, O_RDONLY | O_DIRECTORY, 0, false, true);
	if (fd < 0)
		return fd;
	DIR *d = fdopendir(fd);
	if (!d) {
		int e = errno;
		close(fd);
		return -e;
	}
	int r = 0, n = 0;
	struct dirent *de;
	while (r == 0 && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n++ == EXEC_FILE_LIST_MAX) {
			*cut = EXEC_FILE_CUT;
			break;
		}
		r = list_one(dirfd(d), de->d_name, mem);
	}
	if (r == 0 && !de && errno)
		r = -errno;
	closedir(d);
	return r;
}

/* The operation h asks for, payload "place\0path\0"; 0 or -errno. */
static int file_op(const struct exec_hdr *h, const char *payload, size_t len, int mem, int *cut)
{
	const char *place = payload, *end = payload + len;
	const char *nul = memchr(place, '\0', len);
	const char *path = nul ? nul + 1 : NULL;
	if (!path || path >= end || !memchr(path, '\0', (size_t)(end - path)) || mem < 0)
		return -EPROTO;
	int pfd = open(place, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	struct walk w = { .rest = xstrdup(path) };
	walk_push(&w, pfd);
	int r = h->a == EXEC_FILE_READ ? op_read(&w, mem)
		: h->a == EXEC_FILE_WRITE ? op_write(&w, mem, (uint32_t)h->b)
		: h->a == EXEC_FILE_LIST ? op_list(&w, mem, cut) : -EPROTO;
	walk_free(&w);
	return r;
}

void executor_file(int ctl, const struct exec_hdr *h, const char *payload, size_t len, int mem)
{
	struct exec_hdr done = { .type = EXEC_FILE_DONE, .task = h->task };
	pid_t pid = fork();
	if (pid > 0)
		return;  /* (reaped with the rest: it is no task) */
	if (pid < 0) {
		done.a = errno;
		send(ctl, &done, sizeof done, MSG_NOSIGNAL);
		return;
	}
	int cut = 0;
	done.a = -file_op(h, payload, len, mem, &cut);
	done.b = cut;
	send(ctl, &done, sizeof done, MSG_NOSIGNAL);
	_exit(0);
}
