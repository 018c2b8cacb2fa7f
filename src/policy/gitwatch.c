/* SPDX-License-Identifier: Apache-2.0 */
/* gitwatch.c - the directories a run changed in its worktree, from fanotify (see gitwatch.h).
 *
 * One fanotify group per run, a filesystem mark (FAN_MARK_FILESYSTEM) on the worktree's file
 * system, events reported as the directory's file handle and the entry's name
 * (FAN_REPORT_DFID_NAME): a create, a move in or out, a delete, a write, a close after
 * writing (a write through a shared mapping has no event of its own), an attribute change.
 * Each event is kept as its directory's handle, once; a directory created or moved in is kept
 * by name too, and walked whole after the run (its tree came with it). Events of the host on
 * the same file system only add directories (those outside the worktree are dropped when
 * resolved). At the end each handle is opened (open_by_handle_at), its path read, and that
 * path followed down from the worktree's descriptor, one component at a time without
 * following a symlink, to the same inode: a directory that is not reached so is not taken by
 * its path. A queue overflow, too many directories or names, or any directory that does not
 * lead back, and the caller walks everything. */
#include "policy/gitwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fs.h"

/* Past this many directories or created directories, walking all is as cheap: give up. */
#define GW_MAX_DIRS 4096
#define GW_MAX_FULL 1024

#define GW_MASK (FAN_CREATE | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_DELETE | FAN_MODIFY | FAN_CLOSE_WRITE | \
		 FAN_ATTRIB | FAN_DELETE_SELF | FAN_MOVE_SELF | FAN_ONDIR | FAN_EVENT_ON_CHILD)

struct gw_dir {
	struct file_handle *fh;   /* NULL: a free slot */
	char **full;              /* names of directories created or moved in here */
	size_t nfull;
};

struct git_watch {
	int fd;
	bool marked;
	int mark_fd;              /* the worktree, to unmark */
	const char *doubt;        /* set: walk everything, and this is why */
	struct gw_dir *dirs;      /* open addressing, cap slots */
	size_t ndirs, cap, nfull;
};

static uint64_t fh_hash(const struct file_handle *fh)
{
	uint64_t h = 1469598103934665603ULL ^ (uint32_t)fh->handle_type;
	for (unsigned i = 0; i < fh->handle_bytes; i++)
		h = (h ^ fh->f_handle[i]) * 1099511628211ULL;
	return h;
}

static bool fh_equal(const struct file_handle *a, const struct file_handle *b)
{
	return a->handle_type == b->handle_type && a->handle_bytes == b->handle_bytes &&
	       !memcmp(a->f_handle, b->f_handle, a->handle_bytes);
}

static struct gw_dir *gw_find(struct git_watch *g, const struct file_handle *fh)
{
	if (!g->cap) {
		g->cap = 1024;
		g->dirs = xcalloc(g->cap, sizeof *g->dirs);
	}
	for (size_t i = fh_hash(fh) & (g->cap - 1);; i = (i + 1) & (g->cap - 1)) {
		struct gw_dir *d = &g->dirs[i];
		if (!d->fh) {
			if (g->ndirs >= GW_MAX_DIRS) {
				g->doubt = "the run changed more directories than are worth checking one by one";
				return NULL;
			}
			size_t len = sizeof *fh + fh->handle_bytes;
			d->fh = xmalloc(len);
			memcpy(d->fh, fh, len);
			g->ndirs++;
			return d;
		}
		if (fh_equal(d->fh, fh))
			return d;
	}
}

/* One directory handle (and the name of a directory made or moved into it, or NULL). */
static void gw_note(struct git_watch *g, const struct file_handle *fh, const char *full)
{
	if (g->doubt)
		return;
	if (2 * (g->ndirs + 1) > g->cap && g->cap) {
		/* grow: rehash into twice the slots */
		struct gw_dir *old = g->dirs;
		size_t oc = g->cap;
		g->cap *= 2;
		g->dirs = xcalloc(g->cap, sizeof *g->dirs);
		for (size_t i = 0; i < oc; i++) {
			if (!old[i].fh)
				continue;
			size_t j = fh_hash(old[i].fh) & (g->cap - 1);
			while (g->dirs[j].fh)
				j = (j + 1) & (g->cap - 1);
			g->dirs[j] = old[i];
		}
		free(old);
	}
	struct gw_dir *d = gw_find(g, fh);
	if (!d || !full || !strcmp(full, "."))
		return;
	if (++g->nfull > GW_MAX_FULL) {
		g->doubt = "the run created more directories than are worth checking one by one";
		return;
	}
	d->full = xrealloc(d->full, (d->nfull + 1) * sizeof *d->full);
	d->full[d->nfull++] = xstrdup(full);
}

struct git_watch *git_watch_start(int worktree_fd, const char **why)
{
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME, O_RDONLY);
	if (fd < 0) {
		*why = errno == EPERM ? "fanotify needs CAP_SYS_ADMIN (a rootless run)" : "fanotify is not available";
		return NULL;
	}
	if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, GW_MASK, worktree_fd, ".") < 0) {
		int e = errno;
		close(fd);
		*why = e == EPERM	       ? "fanotify cannot mark a file system of the host here (a rootless run)"
		       : e == EOPNOTSUPP || e == ENODEV || e == EXDEV ? "the worktree's file system does not report events by file handle"
							       : "fanotify cannot mark the worktree's file system";
		return NULL;
	}
	struct git_watch *g = xcalloc(1, sizeof *g);
	g->fd = fd;
	g->marked = true;
	g->mark_fd = fcntl(worktree_fd, F_DUPFD_CLOEXEC, 3);
	return g;
}

int git_watch_fd(const struct git_watch *g)
{
	return g ? g->fd : -1;
}

/* One event's information records. */
static void gw_event(struct git_watch *g, const struct fanotify_event_metadata *m)
{
	if (m->vers != FANOTIFY_METADATA_VERSION) {
		g->doubt = "fanotify reported events in a format warren does not know";
		return;
	}
	if (m->mask & FAN_Q_OVERFLOW) {
		g->doubt = "the kernel's event queue overflowed";
		return;
	}
	bool made_dir = (m->mask & FAN_ONDIR) && (m->mask & (FAN_CREATE | FAN_MOVED_TO));
	const char *p = (const char *)(m + 1), *end = (const char *)m + m->event_len;
	bool any = false;
	while (p + sizeof(struct fanotify_event_info_header) <= end) {
		const struct fanotify_event_info_fid *fid = (const void *)p;
		if (fid->hdr.len < sizeof *fid || p + fid->hdr.len > end)
			break;
		uint8_t t = fid->hdr.info_type;
		if (t == FAN_EVENT_INFO_TYPE_DFID_NAME || t == FAN_EVENT_INFO_TYPE_DFID || t == FAN_EVENT_INFO_TYPE_FID) {
			const struct file_handle *fh = (const void *)fid->handle;
			const char *name = t == FAN_EVENT_INFO_TYPE_DFID_NAME ? (const char *)fh->f_handle + fh->handle_bytes : NULL;
			gw_note(g, fh, made_dir ? name : NULL);
			any = true;
		}
		p += fid->hdr.len;
	}
	if (!any)
		g->doubt = "fanotify reported an event without the directory it concerns";
}

void git_watch_drain(struct git_watch *g)
{
	if (!g || g->fd < 0)
		return;
	char buf[16384] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	for (;;) {
		ssize_t n = read(g->fd, buf, sizeof buf);
		if (n <= 0) {
			if (n < 0 && errno != EAGAIN && errno != EINTR && !g->doubt)
				g->doubt = "the fanotify events could not be read";
			if (n < 0 && errno == EINTR)
				continue;
			return;
		}
		const struct fanotify_event_metadata *m = (const void *)buf;
		for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n))
			if (!g->doubt)
				gw_event(g, m);
	}
}

void git_watch_stop(struct git_watch *g)
{
	if (!g || !g->marked)
		return;
	/* unmarked now, the kernel frees the mark in the background: closing the group later
	 * does not wait for it */
	fanotify_mark(g->fd, FAN_MARK_REMOVE | FAN_MARK_FILESYSTEM, GW_MASK, g->mark_fd, ".");
	g->marked = false;
}

void git_watch_free(struct git_watch *g)
{
	if (!g)
		return;
	git_watch_stop(g);
	for (size_t i = 0; i < g->cap; i++) {
		free(g->dirs[i].fh);
		for (size_t k = 0; k < g->dirs[i].nfull; k++)
			free(g->dirs[i].full[k]);
		free(g->dirs[i].full);
	}
	free(g->dirs);
	closep(&g->fd);
	closep(&g->mark_fd);
	free(g);
}

/* ---- the end: handles to directories of the worktree ---- */

static char *fd_path(int fd)
{
	char link[64], buf[PATH_MAX + 1];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, PATH_MAX);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return xstrdup(buf);
}

/* Is a mount point below the path top (mountinfo's octal escapes undone)? Its events would not
 * be reported: the whole worktree is walked then. */
static bool mount_below(const char *top)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return true;
	size_t tl = strlen(top);
	char line[8192];
	while (fgets(line, sizeof line, f)) {
		char *save = NULL, *mp = NULL;
		strtok_r(line, " ", &save);
		for (int i = 0; i < 4 && (mp = strtok_r(NULL, " ", &save)); i++)
			;
		if (!mp)
			continue;
		char *o = mp;
		for (const char *s = mp; *s; s++) {
			if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
				*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
				s += 3;
			} else
				*o++ = *s;
		}
		*o = '\0';
		if (!strncmp(mp, top, tl) && (mp[tl] == '/' || (tl == 1 && mp[1])) )
			return true;
	}
	return false;
}

/* Follow rel down from the worktree (no symlink on the way) to the inode of st: 1 when it is
 * there, 0 when the path leads nowhere, -1 when it leads elsewhere. */
static int leads_back(int worktree_fd, const char *rel, const struct stat *st)
{
	_cleanup_close_ int fd = openat(worktree_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *copy = xstrdup(rel);
	char *save = NULL;
	for (char *c = strtok_r(copy, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
		int next = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	struct stat here;
	if (fd < 0 || fstat(fd, &here) < 0)
		return 0;
	return here.st_dev == st->st_dev && here.st_ino == st->st_ino ? 1 : -1;
}

static void push_changed(struct git_changed **v, size_t *n, char *rel, bool full)
{
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = (struct git_changed){ .rel = rel, .full = full };
}

/* One directory handle: nothing (gone, or outside the worktree), or its path and those of the
 * directories made in it; false when in doubt. */
static bool resolve(int mount_fd, int worktree_fd, const char *top, const struct gw_dir *d, struct git_changed **v,
		    size_t *n)
{
	_cleanup_close_ int fd = open_by_handle_at(mount_fd, d->fh, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return errno == ESTALE || errno == ENOENT;  /* deleted since */
	struct stat st;
	if (fstat(fd, &st) < 0)
		return false;
	if (!S_ISDIR(st.st_mode) || st.st_nlink == 0)
		return S_ISDIR(st.st_mode);  /* removed; a non-directory: in doubt */
	_cleanup_free_ char *path = fd_path(fd);
	if (!path || path[0] != '/')
		return false;
	size_t tl = strlen(top);
	const char *rel;
	if (!strcmp(path, top))
		rel = "";
	else if (tl == 1)
		rel = path + 1;
	else if (!strncmp(path, top, tl) && path[tl] == '/')
		rel = path + tl + 1;
	else
		return true;  /* elsewhere on the file system: the host's */
	if (leads_back(worktree_fd, rel, &st) != 1)
		return false;
	push_changed(v, n, xstrdup(rel), false);
	for (size_t k = 0; k < d->nfull; k++)
		push_changed(v, n, *rel ? xasprintf("%s/%s", rel, d->full[k]) : xstrdup(d->full[k]), true);
	return true;
}

int git_watch_changed(struct git_watch *g, int worktree_fd, struct git_changed **v, size_t *n, const char **why)
{
	*v = NULL;
	*n = 0;
	git_watch_drain(g);
	git_watch_stop(g);
	if (g->doubt) {
		*why = g->doubt;
		return -1;
	}
	_cleanup_close_ int mount_fd = openat(worktree_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *top = mount_fd >= 0 ? fd_path(mount_fd) : NULL;
	if (!top || top[0] != '/') {
		*why = "the worktree's path could not be read";
		return -1;
	}
	if (mount_below(top)) {
		*why = "a file system is mounted below the worktree";
		return -1;
	}
	for (size_t i = 0; i < g->cap; i++) {
		if (g->dirs[i].fh && !resolve(mount_fd, worktree_fd, top, &g->dirs[i], v, n)) {
			git_changed_free(*v, *n);
			*v = NULL;
			*n = 0;
			*why = "a changed directory could not be traced back to the worktree";
			return -1;
		}
	}
	return 0;
}

void git_changed_free(struct git_changed *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].rel);
	free(v);
}
