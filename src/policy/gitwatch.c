/* SPDX-License-Identifier: Apache-2.0 */
/* gitwatch.c - the directories a run changed in its worktree, from fanotify (see gitwatch.h).
 *
 * Two fanotify groups per run, each with a filesystem mark (FAN_MARK_FILESYSTEM) on the
 * worktree's file system, events reported as the directory's file handle and the entry's name
 * (FAN_REPORT_DFID_NAME): a create, a move in or out, a delete, a write, a close after
 * writing, an attribute change; and in a group of its own the open of a file (a write through
 * a shared mapping has no event of its own, and the close after it may never come: the file
 * can be kept open in flight in a unix socket after the job is gone).
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
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/fanotify.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fs.h"

/* Past this many directories or created directories, walking all is as cheap: give up. */
#define GW_MAX_DIRS 4096
#define GW_MAX_FULL 1024

#define GW_MASK (FAN_CREATE | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_DELETE | FAN_MODIFY | FAN_CLOSE_WRITE | \
		 FAN_ATTRIB | FAN_DELETE_SELF | FAN_MOVE_SELF | FAN_ONDIR | FAN_EVENT_ON_CHILD)
/* A write through a shared mapping has no event, and the close after it none either while the
 * file stays open (in flight in a unix socket nobody reads: it outlives the job): the open of
 * a file is what tells. A group of its own, so that a directory listed (opendir) is no event. */
#define GW_OPEN_MASK (FAN_OPEN | FAN_EVENT_ON_CHILD)

struct gw_dir {
	struct file_handle *fh;   /* NULL: a free slot */
	char **full;              /* names of directories created or moved in here */
	size_t nfull;
};

/* Handles, each once (open addressing, cap slots). */
struct gw_set {
	struct gw_dir *v;
	size_t n, cap;
};

struct git_watch {
	int fd;                   /* an epoll over the two groups */
	int grp[2];               /* the fanotify groups: changes (GW_MASK), opens of files */
	bool marked;
	int mark_fd;              /* the worktree, to unmark */
	const char *doubt;        /* set: walk everything, and this is why */
	struct gw_set dirs;       /* directories */
	struct gw_set gone;       /* files that lost or got a name (deleted, moved away, linked) */
	size_t nfull;
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

static void set_grow(struct gw_set *s)
{
	struct gw_dir *old = s->v;
	size_t oc = s->cap;
	s->cap = oc ? 2 * oc : 1024;
	s->v = xcalloc(s->cap, sizeof *s->v);
	for (size_t i = 0; i < oc; i++) {
		if (!old[i].fh)
			continue;
		size_t j = fh_hash(old[i].fh) & (s->cap - 1);
		while (s->v[j].fh)
			j = (j + 1) & (s->cap - 1);
		s->v[j] = old[i];
	}
	free(old);
}

/* The entry of fh in s, added when new; NULL (and g->doubt) past GW_MAX_DIRS. */
static struct gw_dir *set_find(struct git_watch *g, struct gw_set *s, const struct file_handle *fh)
{
	if (2 * (s->n + 1) > s->cap)
		set_grow(s);
	for (size_t i = fh_hash(fh) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
		struct gw_dir *d = &s->v[i];
		if (d->fh && fh_equal(d->fh, fh))
			return d;
		if (d->fh)
			continue;
		if (s->n >= GW_MAX_DIRS) {
			g->doubt = "the run changed more directories and files than are worth checking one by one";
			return NULL;
		}
		size_t len = sizeof *fh + fh->handle_bytes;
		d->fh = xmalloc(len);
		memcpy(d->fh, fh, len);
		s->n++;
		return d;
	}
}

static void set_free(struct gw_set *s)
{
	for (size_t i = 0; i < s->cap; i++) {
		free(s->v[i].fh);
		for (size_t k = 0; k < s->v[i].nfull; k++)
			free(s->v[i].full[k]);
		free(s->v[i].full);
	}
	free(s->v);
}

/* One directory handle (and the name of a directory made or moved into it, or NULL). */
static void gw_note(struct git_watch *g, const struct file_handle *fh, const char *full)
{
	struct gw_dir *d = g->doubt ? NULL : set_find(g, &g->dirs, fh);
	if (!d || !full || !strcmp(full, "."))
		return;
	if (++g->nfull > GW_MAX_FULL) {
		g->doubt = "the run created more directories than are worth checking one by one";
		return;
	}
	d->full = xrealloc(d->full, (d->nfull + 1) * sizeof *d->full);
	d->full[d->nfull++] = xstrdup(full);
}

/* One fanotify group with a filesystem mark on the worktree's file system; -errno. */
static int gw_group(int worktree_fd, unsigned flags, uint64_t mask)
{
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_DFID_NAME | flags, O_RDONLY);
	if (fd < 0)
		return -errno;
	if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, mask, worktree_fd, ".") < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static const char *gw_why(int e)
{
	switch (e) {
	case EPERM: return "fanotify cannot mark a file system of the host without CAP_SYS_ADMIN (a rootless run)";
	case EOPNOTSUPP: case ENODEV: case EXDEV: return "the worktree's file system does not report events by file handle";
	case ENOSYS: return "fanotify is not available";
	case EMFILE: return "too many fanotify groups at once (fs.fanotify.max_user_groups)";
	}
	return "fanotify cannot mark the worktree's file system";
}

/* Does the worktree's file system tell every change to its files through this host's kernel,
 * and decode its handles back? A network or FUSE file system takes writes that never pass here
 * (another client, the server; a job with a network could make them), and a handle that cannot
 * be decoded would read as gone (ESTALE): such a worktree gets the full walk. NULL when fit,
 * else why not. */
static const char *gw_fs_unfit(int worktree_fd)
{
	struct statfs sf;
	if (fstatfs(worktree_fd, &sf) < 0)
		return "the worktree's file system cannot be asked its type";
	switch ((unsigned long)sf.f_type) {
	case EXT4_SUPER_MAGIC: /* also ext2, ext3 */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case TMPFS_MAGIC:
	case F2FS_SUPER_MAGIC:
		break;
	default:
		return "the worktree's file system is not one whose every change this kernel sees (a network, FUSE or "
		       "unknown file system)";
	}
	struct { struct file_handle fh; unsigned char b[MAX_HANDLE_SZ]; } h = { .fh.handle_bytes = MAX_HANDLE_SZ };
	int mnt;
	if (name_to_handle_at(worktree_fd, "", &h.fh, &mnt, AT_EMPTY_PATH) < 0)
		return "the worktree's file system gives no file handles";
	/* (open_by_handle_at takes no O_PATH descriptor for its mount) */
	_cleanup_close_ int mount_fd = openat(worktree_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = mount_fd < 0 ? -1 : open_by_handle_at(mount_fd, &h.fh, O_PATH | O_CLOEXEC);
	if (fd < 0 && errno == EPERM)  /* (it takes CAP_DAC_READ_SEARCH, as the mark takes CAP_SYS_ADMIN) */
		return gw_why(EPERM);
	if (fd < 0)
		return "the worktree's file system does not decode its file handles";
	close(fd);
	return NULL;
}

struct git_watch *git_watch_start(int worktree_fd, const char **why)
{
	if ((*why = gw_fs_unfit(worktree_fd)))
		return NULL;
	struct git_watch *g = xcalloc(1, sizeof *g);
	g->fd = g->grp[0] = g->grp[1] = g->mark_fd = -1;
	for (int i = 0; i < 2; i++) {
		/* the changes with the file's own handle too (FAN_REPORT_FID): a file that lost a
		 * name is looked for at the name it has left */
		g->grp[i] = i ? gw_group(worktree_fd, 0, GW_OPEN_MASK) : gw_group(worktree_fd, FAN_REPORT_FID, GW_MASK);
		if (g->grp[i] < 0) {
			*why = gw_why(-g->grp[i]);
			g->grp[i] = -1;
			git_watch_free(g);
			return NULL;
		}
	}
	g->marked = true;
	g->mark_fd = fcntl(worktree_fd, F_DUPFD_CLOEXEC, 3);
	g->fd = epoll_create1(EPOLL_CLOEXEC);
	for (int i = 0; i < 2 && g->fd >= 0; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		epoll_ctl(g->fd, EPOLL_CTL_ADD, g->grp[i], &ev);
	}
	return g;
}

int git_watch_fd(const struct git_watch *g)
{
	return g ? g->fd : -1;
}

/* One event: m, its header (copied: the kernel packs events at 4-byte steps, and the header
 * holds a 64-bit mask), and raw, the event as read, for its information records (4-byte
 * fields only). */
static void gw_event(struct git_watch *g, const struct fanotify_event_metadata *m, const char *raw)
{
	if (m->vers != FANOTIFY_METADATA_VERSION) {
		g->doubt = "fanotify reported events in a format warren does not know";
		return;
	}
	if (m->mask & FAN_Q_OVERFLOW) {
		g->doubt = "the kernel's event queue overflowed";
		return;
	}
	bool ondir = m->mask & FAN_ONDIR;
	bool made_dir = ondir && (m->mask & (FAN_CREATE | FAN_MOVED_TO));
	const char *p = raw + m->metadata_len, *end = raw + m->event_len;
	const struct file_handle *child = NULL;
	bool dir = false;
	while (p + sizeof(struct fanotify_event_info_header) <= end) {
		const struct fanotify_event_info_fid *fid = (const void *)p;
		if (fid->hdr.len < sizeof *fid || p + fid->hdr.len > end)
			break;
		uint8_t t = fid->hdr.info_type;
		const struct file_handle *fh = (const void *)fid->handle;
		if (t == FAN_EVENT_INFO_TYPE_DFID_NAME || t == FAN_EVENT_INFO_TYPE_DFID) {
			const char *name = t == FAN_EVENT_INFO_TYPE_DFID_NAME ? (const char *)fh->f_handle + fh->handle_bytes : NULL;
			gw_note(g, fh, made_dir ? name : NULL);
			dir = true;
		} else if (t == FAN_EVENT_INFO_TYPE_FID) {
			child = fh;
		}
		p += fid->hdr.len;
	}
	if (child && ondir)
		gw_note(g, child, NULL);  /* the directory itself */
	/* a file that lost a name (deleted, moved away), or whose link count changed (an event
	 * without a directory: a hard link made or removed): a name of it may be left elsewhere,
	 * written through the other; it is looked for where it is at the end */
	else if (child && (!dir || (m->mask & (FAN_DELETE | FAN_MOVED_FROM))) && !g->doubt)
		set_find(g, &g->gone, child);
	else if (!dir)
		g->doubt = "fanotify reported an event without the directory or file it concerns";
}

static void gw_read(struct git_watch *g, int fd)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	for (;;) {
		ssize_t n = read(fd, buf, sizeof buf);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno != EAGAIN && !g->doubt)
				g->doubt = "the fanotify events could not be read";
			return;
		}
		for (size_t off = 0; off + FAN_EVENT_METADATA_LEN <= (size_t)n;) {
			struct fanotify_event_metadata m;
			memcpy(&m, buf + off, sizeof m);
			if (m.event_len < FAN_EVENT_METADATA_LEN || m.metadata_len < FAN_EVENT_METADATA_LEN ||
			    m.event_len > (size_t)n - off) {
				if (!g->doubt)
					g->doubt = "fanotify reported events in a format warren does not know";
				break;
			}
			if (!g->doubt)
				gw_event(g, &m, buf + off);
			off += m.event_len;
		}
	}
}

void git_watch_drain(struct git_watch *g)
{
	for (int i = 0; g && i < 2; i++)
		if (g->grp[i] >= 0)
			gw_read(g, g->grp[i]);
}

/* Closing a group waits for the kernel to free the marks it had (an RCU grace period after a
 * delay of a tick: up to some 15 ms here), which would be the run's to wait for: a thread of
 * its own does it while the supervisor writes the record. */
static void *gw_closer(void *arg)
{
	int *fds = arg;
	close(fds[0]);
	close(fds[1]);
	free(fds);
	return NULL;
}

void git_watch_stop(struct git_watch *g)
{
	if (!g || !g->marked)
		return;
	/* the job is gone: its events are all queued; read them, then no more */
	git_watch_drain(g);
	fanotify_mark(g->grp[0], FAN_MARK_REMOVE | FAN_MARK_FILESYSTEM, GW_MASK, g->mark_fd, ".");
	fanotify_mark(g->grp[1], FAN_MARK_REMOVE | FAN_MARK_FILESYSTEM, GW_OPEN_MASK, g->mark_fd, ".");
	g->marked = false;
	int *fds = xmalloc(2 * sizeof *fds);
	fds[0] = g->grp[0];
	fds[1] = g->grp[1];
	g->grp[0] = g->grp[1] = -1;
	pthread_t t;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, gw_closer, fds) != 0)
		gw_closer(fds);
	pthread_attr_destroy(&attr);
}

void git_watch_free(struct git_watch *g)
{
	if (!g)
		return;
	git_watch_stop(g);
	set_free(&g->dirs);
	set_free(&g->gone);
	closep(&g->fd);
	closep(&g->grp[0]);
	closep(&g->grp[1]);
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

/* Follow rel down from the worktree (no symlink on the way, nor at its end) to the inode of
 * st: 1 when it is there, 0 when the path leads nowhere, -1 when it leads elsewhere. */
static int leads_back(int worktree_fd, const char *rel, const struct stat *st)
{
	_cleanup_close_ int fd = openat(worktree_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *copy = xstrdup(rel);
	char *last = strrchr(copy, '/');
	const char *name = last ? last + 1 : copy;
	if (last) {
		*last = '\0';
		char *save = NULL;
		for (char *c = strtok_r(copy, "/", &save); c && fd >= 0; c = strtok_r(NULL, "/", &save)) {
			int next = openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			close(fd);
			fd = next;
		}
	}
	struct stat here;
	if (fd < 0 || fstatat(fd, name, &here, AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH) < 0)
		return 0;
	return here.st_dev == st->st_dev && here.st_ino == st->st_ino ? 1 : -1;
}

/* path below top: the rest ("" for top itself), or NULL. */
static const char *below(const char *top, const char *path)
{
	size_t tl = strlen(top);
	if (!strcmp(path, top))
		return "";
	if (tl == 1)
		return path + 1;
	if (!strncmp(path, top, tl) && path[tl] == '/')
		return path + tl + 1;
	return NULL;
}

static void push_changed(struct git_changed **v, size_t *n, char *rel, bool full)
{
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = (struct git_changed){ .rel = rel, .full = full };
}

/* Open a handle (O_PATH): -1 with *gone when it is gone (deleted, or removed and only open
 * somewhere), -1 without when it cannot be opened. */
static int handle_open(int mount_fd, const struct file_handle *fh, struct stat *st, bool *gone)
{
	*gone = false;
	int fd = open_by_handle_at(mount_fd, (struct file_handle *)fh, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		*gone = errno == ESTALE || errno == ENOENT;
		return -1;
	}
	if (fstat(fd, st) < 0) {  /* in doubt: not gone */
		close(fd);
		return -1;
	}
	if (st->st_nlink == 0) {
		*gone = true;
		close(fd);
		return -1;
	}
	return fd;
}

#define GW_MAX_UP 4096

/* Is the directory dfd below the worktree (wt: its inode), by descriptor: up through ".." to
 * the worktree (1) or to the top of the file system (0); -1 when in doubt, -2 when it went
 * away meanwhile. The worktree itself is below it. */
static int up_to(int dfd, const struct stat *wt)
{
	_cleanup_close_ int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	struct stat st, up;
	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	for (int i = 0; i < GW_MAX_UP; i++) {
		if (st.st_dev == wt->st_dev && st.st_ino == wt->st_ino)
			return 1;
		int p = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (p < 0)
			return errno == ENOENT ? -2 : -1;
		close(fd);
		fd = p;
		if (fstat(fd, &up) < 0)
			return -1;
		if (up.st_dev == st.st_dev && up.st_ino == st.st_ino)
			return 0;  /* the root: ".." is itself */
		st = up;
	}
	return -1;
}

/* The directory dfd, known to be below the worktree: its path there, confirmed by following it
 * down from the worktree to the same inode; NULL when it is not. */
static char *rel_of(int dfd, int worktree_fd, const char *top, const struct stat *st)
{
	_cleanup_free_ char *path = fd_path(dfd);
	const char *rel = path && path[0] == '/' ? below(top, path) : NULL;
	if (!rel || leads_back(worktree_fd, rel, st) != 1)
		return NULL;
	return xstrdup(rel);
}

/* One directory handle: nothing (gone, or outside the worktree: the host's), or its path and
 * those of the directories made in it; false when in doubt. */
static bool resolve(int mount_fd, int worktree_fd, const struct stat *wt, const char *top, const struct gw_dir *d,
		    struct git_changed **v, size_t *n)
{
	struct stat st;
	bool gone;
	_cleanup_close_ int fd = handle_open(mount_fd, d->fh, &st, &gone);
	if (fd < 0)
		return gone;
	if (!S_ISDIR(st.st_mode))
		return false;
	int in = up_to(fd, wt);
	if (in != 1)
		return in == 0 || in == -2;
	char *rel = rel_of(fd, worktree_fd, top, &st);
	if (!rel)
		return false;
	push_changed(v, n, rel, false);
	for (size_t k = 0; k < d->nfull; k++)
		push_changed(v, n, *rel ? xasprintf("%s/%s", rel, d->full[k]) : xstrdup(d->full[k]), true);
	return true;
}

/* A file that lost or got a name in the run (deleted, moved away, linked): gone, or the one
 * name it has left, whose directory is checked (it may be a hard link the run wrote through);
 * false when in doubt (several names left, or a name that is not where its path says). */
static bool resolve_gone(int mount_fd, int worktree_fd, const struct stat *wt, const char *top,
			 const struct gw_dir *d, struct git_changed **v, size_t *n)
{
	struct stat st, here, dst;
	bool gone;
	_cleanup_close_ int fd = handle_open(mount_fd, d->fh, &st, &gone);
	if (fd < 0)
		return gone;
	if (S_ISDIR(st.st_mode) || st.st_nlink > 1)
		return false;  /* hard links: which one was written through is not known */
	/* its one name: the path the kernel gives, if the file is there; then its directory, by
	 * descriptor */
	_cleanup_free_ char *path = fd_path(fd);
	char *slash = path && path[0] == '/' ? strrchr(path, '/') : NULL;
	if (!slash || fstatat(AT_FDCWD, path, &here, AT_SYMLINK_NOFOLLOW) < 0 || here.st_dev != st.st_dev ||
	    here.st_ino != st.st_ino)
		return false;
	*slash = '\0';
	_cleanup_close_ int dfd = open(*path ? path : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &dst) < 0 || fstatat(dfd, slash + 1, &here, AT_SYMLINK_NOFOLLOW) < 0 ||
	    here.st_ino != st.st_ino || here.st_dev != st.st_dev)
		return false;
	int in = up_to(dfd, wt);
	if (in != 1)
		return in == 0;
	char *rel = rel_of(dfd, worktree_fd, top, &dst);
	if (!rel)
		return false;
	push_changed(v, n, rel, false);
	return true;
}

int git_watch_changed(struct git_watch *g, int worktree_fd, struct git_changed **v, size_t *n, const char **why)
{
	*v = NULL;
	*n = 0;
	*why = NULL;
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
	struct stat wt;
	if (fstat(mount_fd, &wt) < 0) {
		*why = "the worktree could not be read";
		return -1;
	}
	bool ok = true;
	for (size_t i = 0; ok && i < g->dirs.cap; i++)
		ok = !g->dirs.v[i].fh || resolve(mount_fd, worktree_fd, &wt, top, &g->dirs.v[i], v, n);
	if (!ok)
		*why = "a directory the run changed could not be traced back to the worktree";
	for (size_t i = 0; ok && i < g->gone.cap; i++)
		ok = !g->gone.v[i].fh || resolve_gone(mount_fd, worktree_fd, &wt, top, &g->gone.v[i], v, n);
	if (!ok && !*why)
		*why = "a file that lost a name in the run has other names (hard links) or none that leads back";
	if (ok)
		return 0;
	git_changed_free(*v, *n);
	*v = NULL;
	*n = 0;
	return -1;
}

void git_changed_free(struct git_changed *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].rel);
	free(v);
}
