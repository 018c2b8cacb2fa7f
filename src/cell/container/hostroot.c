/* SPDX-License-Identifier: Apache-2.0 */
/* hostroot.c - the cell's read-only view of the host's / (without --rootfs), made so that the
 * cell cannot connect to the host's pathname unix sockets.
 *
 * Why overlays: connect() finds a unix socket by the inode its path leads to (unix_find_bsd),
 * and a file seen through an overlay has an inode of the overlay's, not the one a host
 * program bound: a host socket seen through an overlay refuses with ECONNREFUSED (a FIFO is
 * cut off the same way). A read-only overlay has no upper layer, so nothing can be bound in
 * it either; the cell's own sockets live in /tmp, its home and the worktree.
 *
 * Overlayfs does not cross mounts, so each file system of the host gets an overlay of its own,
 * placed where the host mounts it, parents before children (mountinfo, by depth; a mount
 * shadowed by another on its path is left out). An overlay without an upper layer needs two
 * lower ones: the host's directory and an empty tmpfs (one for all, mounted on the target
 * first, under the host's /: unreachable there, and not torn down before the cell is).
 * Kernel file systems (proc, sysfs, cgroup, debugfs...) outside the places the cell has its own
 * (a chroot's /proc, a build tree's /sys) are covered with an empty directory: they would show
 * the host's processes and devices (the cell's /proc and /sys are its own, not the host's: the
 * caller skips them, see mount_sys in root.c). The vm driver's shares cover the same
 * file systems, the root share's /proc, /sys and /dev too, in qemu's copies of its view, the
 * worktree and the binds (hostroot_cover_kernel_fs, from vm/vmjail.c). File systems that cannot hold a
 * listening socket (FAT: no socket files; squashfs, erofs, iso9660: never writable) are bound
 * as they are, their submounts placed as any other. A file mounted on a file is bound (a
 * kernel's file, a process's /proc/PID/cmdline bound elsewhere, covered with an empty file),
 * a socket mounted on a file left out. Nothing is placed at or below what the cell replaces (/proc, /dev, /run,
 * /tmp, /home, the state directory...).
 *
 * Rootless, init's mounts are locked (copied from the host's namespace into one the caller
 * owns): the kernel will not make a layer of a directory with locked mounts below it, which
 * would show what they cover. Such a directory (/ always) is rebuilt on a small tmpfs: its
 * subdirectories become overlays (or are rebuilt in turn when mounts lie below them), its
 * files are bound, its symlinks copied; sockets, FIFOs and devices are left out.
 *
 * When an overlay cannot be made (overlayfs refuses the file system, or the host's / is
 * already an overlay of an overlay: the kernel stacks two deep), no cell is made: a plain bind
 * instead would hand the cell the host's sockets there. The error names the mount, the
 * kernel's reason and the way out (--rootfs: nothing of the host's / is seen). */
#include "cell/hostroot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/sys.h"
#include "util/words.h"

#define VIEW_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

struct mnt {
	int id, parent;
	char *path;          /* the mount point, unescaped */
	char *type;
	size_t depth;        /* components of path: 0 for / */
	bool rbound;         /* bound with its submounts, which came along */
	bool whole;          /* a kernel file system: what is mounted below it came along too */
};

struct view {
	struct mnt *m;
	size_t n;
	const char *const *skip;
	bool rootless;
	const char *target;
	int root;            /* the cell's root once the host's / is on it (O_PATH), else -1 */
	int empty;           /* the empty tmpfs, the second lower layer of every overlay */
	const struct hostroot_point *points; /* mount points to make (see hostroot.h) */
	size_t npoints;
	int files;           /* -1, or a tmpfs of the empty files that cover kernel's files */
	int skel;            /* -1, or a tmpfs of skeletons: directory N holds the points of the
	                        Nth overlay that has some, its second lower layer instead of empty */
	unsigned nskel;
	struct error *err;
};

/* Kernel file systems: no socket files (util/fs.c fs_is_kernel knows them by their magic). */
static const char *const KERNEL_TYPES[] = {
	"proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "debugfs", "tracefs", "securityfs", "pstore",
	"bpf", "configfs", "fusectl", "efivarfs", "binfmt_misc", "selinuxfs", "autofs", "nsfs", "rpc_pipefs", "nfsd",
	"devtmpfs", "hugetlbfs", NULL,
};
/* File systems that cannot hold a listening socket: no socket files, or never writable. */
static const char *const NO_SOCKET_TYPES[] = { "vfat", "msdos", "exfat", "squashfs", "erofs", "iso9660", "cramfs", NULL };

static bool among(const char *type, const char *const *types)
{
	for (; *types; types++)
		if (!strcmp(type, *types))
			return true;
	return false;
}

/* ---- the host's mounts ---- */

/* mountinfo writes space, tab, newline and backslash as \ooo */
static char *unescape(const char *s)
{
	char *out = xmalloc(strlen(s) + 1), *o = out;
	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return out;
}

static int by_depth(const void *a, const void *b)
{
	const struct mnt *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->id - y->id;
}

/* The kernel file systems among the mounts read_mounts read last in this process (the host's,
 * copied into init's namespace when it was cloned, do not change after): what
 * kernel_fs_below looks at, not a new read and parse of the whole table (on a host of
 * hundreds of mounts a noticeable part of a cold start). */
static struct mnt *kernel_mnts;
static size_t n_kernel_mnts;
static bool kernel_mnts_known;

static void note_kernel_mnt(const struct mnt *m)
{
	kernel_mnts = xrealloc(kernel_mnts, (n_kernel_mnts + 1) * sizeof *kernel_mnts);
	kernel_mnts[n_kernel_mnts++] = (struct mnt){ .path = xstrdup(m->path), .type = xstrdup(m->type) };
}

/* Read init's mounts (a copy of the host's), parents before children; the kernel's file
 * systems among them noted (kernel_mnts). */
static int read_mounts(struct view *v)
{
	_cleanup_free_ char *txt = read_file("/proc/self/mountinfo", NULL);
	if (!txt)
		return error_set(v->err, errno, "cannot read /proc/self/mountinfo");
	for (size_t i = 0; i < n_kernel_mnts; i++) {
		free(kernel_mnts[i].path);
		free(kernel_mnts[i].type);
	}
	n_kernel_mnts = 0;
	kernel_mnts_known = true;
	char *save = NULL;
	for (char *line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER-OPTIONS */
		char *f[6], *type = NULL, *s2 = NULL;
		int k = 0;
		for (char *t = strtok_r(line, " ", &s2); t && !type; t = strtok_r(NULL, " ", &s2)) {
			if (k < 6)
				f[k++] = t;
			else if (!strcmp(t, "-"))
				type = strtok_r(NULL, " ", &s2);
		}
		if (!type)
			continue;
		v->m = xrealloc(v->m, (v->n + 1) * sizeof *v->m);
		struct mnt *m = &v->m[v->n++];
		*m = (struct mnt){ .id = atoi(f[0]), .parent = atoi(f[1]), .path = unescape(f[4]), .type = unescape(type) };
		for (const char *p = m->path; *p; p++)
			m->depth += *p == '/' && p[1];
		if (among(m->type, KERNEL_TYPES))
			note_kernel_mnt(m);
	}
	qsort(v->m, v->n, sizeof *v->m, by_depth);
	return 0;
}

static void free_view_mnts(struct view *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->m[i].path);
		free(v->m[i].type);
	}
	free(v->m);
}

/* Whether a kernel file system (proc, sysfs, cgroup, devtmpfs...) is mounted below the directory
 * dir (an absolute, normalised path of this mount namespace), at it or above it: its mount point
 * and type (heap) then. */
static bool kernel_fs_below(const char *dir, char **mountpoint, char **type)
{
	if (!kernel_mnts_known) {  /* (a --rootfs run: the host's / was not placed) */
		struct error err = { 0 };
		struct view v = { .err = &err };
		read_mounts(&v);
		free_view_mnts(&v);
		error_clear(&err);
	}
	/* below it, at it, or holding it: a bind of a bind of /dev is a devtmpfs mount, which
	 * fstatfs reports as tmpfs (fs_is_kernel cannot tell) */
	for (size_t i = 0; i < n_kernel_mnts; i++)
		if (path_beneath(kernel_mnts[i].path, dir) || path_beneath(dir, kernel_mnts[i].path)) {
			*mountpoint = xstrdup(kernel_mnts[i].path);
			*type = xstrdup(kernel_mnts[i].type);
			return true;
		}
	return false;
}

static bool skipped(const struct view *v, const char *p)
{
	for (const char *const *s = v->skip; *s; s++)
		if (path_beneath(p, *s))
			return true;
	return false;
}

/* some mount lies strictly below dir (below_only) or at it */
static bool mount_at(const struct view *v, const char *dir, bool below_only)
{
	for (size_t i = 0; i < v->n; i++)
		if (path_beneath(v->m[i].path, dir) && (below_only ? strcmp(v->m[i].path, dir) != 0 : !strcmp(v->m[i].path, dir)))
			return true;
	return false;
}

static const struct mnt *find(const struct view *v, int id)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->m[i].id == id)
			return &v->m[i];
	return NULL;
}

/* ---- mounting ---- */

static int openat2_(int dfd, const char *path, int flags, uint64_t resolve)
{
	return sys_openat2(dfd, path, (uint64_t)(flags | O_NOFOLLOW), resolve);
}

/* path on the host, as it is (no symlink on the way: mount points have none) */
static int host_open(const char *path, int flags)
{
	return openat2_(AT_FDCWD, path, flags, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

/* The mount m where its path leads (no symlink on the way: mount points have none), its type
 * in *stx, or -1 when the path leads elsewhere (m is shadowed, or out of the caller's reach). */
static int open_reached(const struct mnt *m, struct statx *stx)
{
	int fd = host_open(m->path, O_PATH);
	if (fd >= 0 && (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MNT_ID, stx) < 0 ||
			stx->stx_mnt_id != (uint64_t)m->id))
		closep(&fd);
	return fd;
}

/* Configure the new file system fs (key, value pairs, NULL-terminated), create it and make a
 * detached mount of it with attrs: its descriptor, or -errno with the kernel's reason (the
 * log of fs, "e overlayfs: ...") in *why. */
static int fs_make(int fs, const char *const *kv, uint64_t attrs, char **why)
{
	int m = -1;
	bool ok = true;
	for (; ok && *kv; kv += 2)
		ok = sys_fsconfig(fs, FSCONFIG_SET_STRING, kv[0], kv[1], 0) == 0;
	if (ok && sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		m = sys_fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	if (m >= 0)
		return m;
	int e = errno;
	char buf[512];
	ssize_t n = read(fs, buf, sizeof buf - 1);
	if (n > 2) {
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		*why = xstrdup(buf + 2);
	}
	return -e;
}

static int new_fs(const char *type, const char *const *kv, uint64_t attrs, char **why)
{
	_cleanup_close_ int fs = sys_fsopen(type, FSOPEN_CLOEXEC);
	return fs < 0 ? -errno : fs_make(fs, kv, attrs, why);
}

static int move_onto(int from, int to)
{
	return sys_move_mount_fd(from, to) < 0 ? -errno : 0;
}

static int set_attrs(int fd, uint64_t attrs, unsigned flags)
{
	return sys_mount_setattr_fd(fd, attrs, flags) < 0 ? -errno : 0;
}

/* Bind host (with its submounts when rec) read-only on target. */
static int bind_on(int host, int target, bool rec, const char *path, struct error *err)
{
	unsigned r = rec ? AT_RECURSIVE : 0;
	_cleanup_close_ int t = sys_open_tree(host, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | r);
	int e = t < 0 ? -errno : set_attrs(t, VIEW_ATTRS, r);
	if (e == 0)
		e = move_onto(t, target);
	return e < 0 ? error_set(err, -e, "cannot bind the host's %s read-only in the cell", path) : 0;
}

/* A kernel's file system the view does not show (see place): the empty directory (or, for a
 * kernel's file mounted on a file, the empty file) empty bound read-only on target instead. */
static int cover(int empty, int target, const char *path, struct error *err)
{
	return bind_on(empty, target, false, path, err);
}

/* A small tmpfs mounted on the directory at (where), open as *fs: it holds empty ones that
 * cover, made as they are needed (cover_one). */
static int cover_fs(int at, const char *where, int *fs, struct error *err)
{
	_cleanup_free_ char *why = NULL;
	const char *const kv[] = { "source", "warren-empty", "size", "4k", "mode", "0755", NULL };
	*fs = new_fs("tmpfs", kv, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, &why);
	int e = *fs < 0 ? *fs : at < 0 ? -EBADF : move_onto(*fs, at);
	return e < 0 ? error_set(err, -e, "cannot mount an empty tmpfs on %s", where) : 0;
}

/* The kernel's file system m (at is where its path leads, of type mode) covered with an
 * empty directory or file of its own, number n on the tmpfs fs: one shared by several places
 * would be one inode at several paths to a 9p client, which keeps one dentry of a directory
 * (a VM guest's /proc showed its /dev). */
static int cover_one(int fs, size_t n, const struct mnt *m, int at, mode_t mode, struct error *err)
{
	char name[24];
	snprintf(name, sizeof name, "%zu", n);
	int made = S_ISDIR(mode) ? mkdirat(fs, name, 0555) : mknodat(fs, name, S_IFREG | 0444, 0);
	_cleanup_close_ int empty = made < 0 ? -1 : openat2_(fs, name, O_PATH, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (empty < 0)
		return error_set(err, errno, "cannot make an empty place to cover the %s at %s", m->type, m->path);
	return cover(empty, at, m->path, err);
}

/* ---- mount points the cell needs where the host has none ---- */

/* Make rel (below directory dfd) and the directories on its way; a file at the end when file. */
static int make_point(int dfd, const char *rel, bool file)
{
	_cleanup_free_ char *copy = xstrdup(rel);
	_cleanup_close_ int cur = dup(dfd);
	char *save = NULL;
	for (char *c = strtok_r(copy, "/", &save), *next; c && cur >= 0; c = next) {
		next = strtok_r(NULL, "/", &save);
		int r = !next && file ? mknodat(cur, c, S_IFREG | 0644, 0) : mkdirat(cur, c, 0755);
		if (r < 0 && errno != EEXIST)
			return -errno;
		if (!next)
			return 0;
		int fd = openat2_(cur, c, O_PATH | O_DIRECTORY, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
		close(cur);
		cur = fd;
	}
	return cur < 0 ? -errno : 0;
}

/* The point p relative to dir when it lies strictly below it and the cell does not replace
 * it, else NULL. */
static const char *point_below(const struct view *v, const char *p, const char *dir)
{
	if (!path_beneath(p, dir) || !strcmp(p, dir) || skipped(v, p))
		return NULL;
	return p + (strcmp(dir, "/") ? strlen(dir) : 0) + 1;
}

/* The overlay at path gets the points below it in a skeleton of its own: its number in
 * v->skel, 0 when no point lies below path, or -errno. */
static int skeleton(struct view *v, const char *path)
{
	unsigned n = 0;
	for (size_t i = 0; i < v->npoints; i++) {
		const char *rel = point_below(v, v->points[i].path, path);
		if (!rel)
			continue;
		char name[16];
		snprintf(name, sizeof name, "%u", v->nskel + 1);
		if (!n && mkdirat(v->skel, name, 0755) < 0)
			return error_set(v->err, errno, "cannot make the mount points below %s", path);
		n = v->nskel + 1;
		_cleanup_close_ int d = openat2_(v->skel, name, O_PATH | O_DIRECTORY, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
		int r = d < 0 ? -errno : make_point(d, rel, v->points[i].file);
		if (r < 0)
			return error_set(v->err, -r, "cannot make the mount point %s", v->points[i].path);
	}
	v->nskel = n ? n : v->nskel;
	return (int)n;
}

/* Rootless, a directory rebuilt on a tmpfs (tdir) gets the points below it whose first
 * component the host's directory (hd) has not: the others are made in the overlay or the
 * rebuilt directory placed there. */
static int rebuilt_points(struct view *v, const char *path, int hd, int tdir)
{
	for (size_t i = 0; i < v->npoints; i++) {
		const char *rel = point_below(v, v->points[i].path, path);
		if (!rel)
			continue;
		_cleanup_free_ char *first = strndup(rel, strcspn(rel, "/"));
		struct stat st;
		if (fstatat(hd, first, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		int r = make_point(tdir, rel, v->points[i].file);
		if (r < 0)
			return error_set(v->err, -r, "cannot make the mount point %s", v->points[i].path);
	}
	return 0;
}

/* An overlay of the host's directory host (at path) and the empty layer, on target. */
static int overlay_on(struct view *v, int host, int target, const char *path, const char *type)
{
	char lower[96];
	int sk = skeleton(v, path);
	if (sk < 0)
		return sk;
	if (sk)
		snprintf(lower, sizeof lower, "/proc/self/fd/%d:/proc/self/fd/%d/%d", host, v->skel, sk);
	else
		snprintf(lower, sizeof lower, "/proc/self/fd/%d:/proc/self/fd/%d", host, v->empty);
	const char *const kv[] = { "source", "warren-host", "lowerdir", lower, NULL };
	_cleanup_free_ char *why = NULL;
	_cleanup_close_ int m = new_fs("overlay", kv, VIEW_ATTRS, &why);
	int e = m < 0 ? m : move_onto(m, target);
	if (e == 0)
		return 0;
	return error_set(v->err, 0,
			 "cannot show the host's %s (%s) to the cell through an overlay: %s%s%s%s; warren does not bind it "
			 "instead, which would let the cell connect to the host's unix sockets there (run with --rootfs IMAGE, "
			 "where the host's / is not seen; see docs/hardening.md, \"Host sockets\")",
			 path, type, strerror(-e), why ? " (" : "", why ? why : "", why ? ")" : "");
}

static char *join(const char *dir, const char *name)
{
	return xasprintf("%s/%s", strcmp(dir, "/") ? dir : "", name);
}

static int rebuild_dir(struct view *v, const char *path, int tdir);

/* One entry name of the rebuilt directory path (tdir: its copy), as its type asks. */
static int rebuild_entry(struct view *v, const char *path, int hd, const char *name, int tdir)
{
	struct stat st;
	if (fstatat(hd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	_cleanup_free_ char *child = join(path, name);
	if (S_ISLNK(st.st_mode)) {
		_cleanup_free_ char *to = xmalloc((size_t)st.st_size + 1);
		ssize_t n = readlinkat(hd, name, to, (size_t)st.st_size + 1);
		if (n < 0 || n > st.st_size)
			return 0;
		to[n] = '\0';
		return symlinkat(to, tdir, name) < 0 ? error_set(v->err, errno, "cannot copy the symlink %s", child) : 0;
	}
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return 0;   /* sockets, FIFOs and devices are left out */
	int made = S_ISDIR(st.st_mode) ? mkdirat(tdir, name, 0700) : mknodat(tdir, name, S_IFREG | 0600, 0);
	if (made < 0 || fchmodat(tdir, name, st.st_mode & 07777, 0) < 0)
		return error_set(v->err, errno, "cannot make %s in the cell's view of the host", child);
	if (mount_at(v, child, false) || skipped(v, child))
		return 0;   /* placed in its turn, or replaced by the cell */
	_cleanup_close_ int t = openat2_(tdir, name, O_PATH, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (t < 0)
		return error_set(v->err, errno, "cannot open %s in the cell's view of the host", child);
	if (S_ISDIR(st.st_mode) && mount_at(v, child, true))
		return rebuild_dir(v, child, t);
	_cleanup_close_ int h = openat2_(hd, name, O_PATH, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	if (h < 0)
		return 0;   /* gone meanwhile */
	return S_ISDIR(st.st_mode) ? overlay_on(v, h, t, child, "a directory") : bind_on(h, t, false, child, v->err);
}

/* Rebuild the host's directory path in tdir (a directory of the tmpfs). What the caller
 * cannot read, the cell cannot see either: it stays empty. */
static int rebuild_dir(struct view *v, const char *path, int tdir)
{
	_cleanup_close_ int hd = host_open(path, O_RDONLY | O_DIRECTORY);
	if (hd < 0)
		return errno == EACCES ? 0 : error_set(v->err, errno, "cannot read the host's %s", path);
	DIR *d = fdopendir(dup(hd));
	if (!d)
		return error_set(v->err, errno, "cannot read the host's %s", path);
	int r = 0;
	for (struct dirent *e; r == 0 && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			r = rebuild_entry(v, path, hd, e->d_name, tdir);
	closedir(d);
	return r;
}

/* Rootless: the host's directory path (host, with mounts below it) rebuilt on a tmpfs on target. */
static int rebuild_on(struct view *v, int host, int target, const char *path)
{
	struct stat st;
	if (fstat(host, &st) < 0)
		return error_set(v->err, errno, "cannot stat the host's %s", path);
	char mode[16];
	snprintf(mode, sizeof mode, "%o", st.st_mode & 07777);
	const char *const kv[] = { "source", "warren-host", "size", "8m", "mode", mode, NULL };
	_cleanup_free_ char *why = NULL;
	_cleanup_close_ int m = new_fs("tmpfs", kv, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, &why);
	int e = m < 0 ? m : move_onto(m, target);
	if (e < 0)
		return error_set(v->err, -e, "cannot mount a tmpfs to rebuild the host's %s on", path);
	if (rebuild_dir(v, path, m) < 0 || rebuilt_points(v, path, host, m) < 0)
		return -EINVAL;
	e = set_attrs(m, MOUNT_ATTR_RDONLY, 0);
	return e < 0 ? error_set(v->err, -e, "cannot make the cell's copy of %s read-only", path) : 0;
}

/* When the cell would see a kernel's file mounted on a file, the tmpfs of the empty files
 * that cover them, on the target (under the host's /, as the empty layer); else none. */
static int file_covers(struct view *v, int t)
{
	for (size_t i = 0; i < v->n; i++) {
		struct statx stx;
		if (skipped(v, v->m[i].path) || !among(v->m[i].type, KERNEL_TYPES))
			continue;
		_cleanup_close_ int k = open_reached(&v->m[i], &stx);
		if (k >= 0 && !S_ISDIR(stx.stx_mode))
			return cover_fs(t, v->target, &v->files, v->err);
	}
	return 0;
}

/* Place the host's mount m in the cell. */
static int place(struct view *v, struct mnt *m)
{
	if (skipped(v, m->path))
		return 0;
	bool kernel = among(m->type, KERNEL_TYPES), bound = kernel || among(m->type, NO_SOCKET_TYPES);
	const struct mnt *parent = find(v, m->parent);
	if (parent && (parent->whole || (bound && parent->rbound))) {
		m->rbound = true;   /* came along with its parent */
		m->whole = parent->whole || kernel;
		return 0;
	}
	struct statx stx;
	_cleanup_close_ int host = open_reached(m, &stx);
	if (host < 0)
		return 0;
	_cleanup_close_ int target = v->root < 0 ? open(v->target, O_PATH | O_DIRECTORY | O_CLOEXEC)
						 : openat2_(v->root, m->path + 1, O_PATH, RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS);
	if (target < 0)
		return v->root < 0 ? error_set(v->err, errno, "cannot open %s", v->target) : 0;
	int r;
	if (S_ISSOCK(stx.stx_mode))
		r = 0;   /* a socket mounted on a file: what lies under it is seen */
	else if (kernel && S_ISDIR(stx.stx_mode)) {
		/* a kernel's file system where the cell has none of its own (the standard places
		 * are the cell's: skipped above), e.g. a chroot's /proc or /sys: the host's processes
		 * and devices. An empty directory there instead; nothing below it is placed */
		r = cover(v->empty, target, m->path, v->err);
		m->rbound = m->whole = r == 0;
		goto placed;
	} else if (kernel) /* a kernel's file bound on a file (a process's /proc/PID/cmdline): an empty one */
		r = cover_one(v->files, (size_t)(m - v->m), m, target, stx.stx_mode, v->err);
	else if (!S_ISDIR(stx.stx_mode))
		r = bind_on(host, target, false, m->path, v->err);
	else if (bound)
		r = bind_on(host, target, true, m->path, v->err);
	else if (v->rootless && mount_at(v, m->path, true))
		r = rebuild_on(v, host, target, m->path);
	else
		r = overlay_on(v, host, target, m->path, m->type);
	m->rbound = r == 0 && bound && S_ISDIR(stx.stx_mode);
	m->whole = m->rbound && kernel;
placed:
	if (r == 0 && v->root < 0) {
		v->root = open(v->target, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (v->root < 0)
			return error_set(v->err, errno, "cannot open %s", v->target);
	}
	return r;
}

int hostroot_mount(const char *target, bool rootless, const char *const *skip, const struct hostroot_point *points,
		   size_t npoints, struct error *err)
{
	struct view v = { .skip = skip, .rootless = rootless, .target = target, .root = -1, .err = err,
			  .points = points, .npoints = npoints, .skel = -1, .files = -1 };
	_cleanup_free_ char *why = NULL;
	const char *const kv[] = { "source", "warren-empty", "size", "4k", "mode", "0755", NULL };
	v.empty = new_fs("tmpfs", kv, VIEW_ATTRS | MOUNT_ATTR_NOEXEC, &why);
	_cleanup_close_ int t = open(target, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int e = v.empty < 0 ? v.empty : t < 0 ? -errno : move_onto(v.empty, t);
	/* the skeletons' tmpfs, on the target too (under the host's /: unreachable there) */
	const char *const skv[] = { "source", "warren-points", "size", "64k", "mode", "0755", NULL };
	if (e == 0 && npoints && (v.skel = new_fs("tmpfs", skv, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, &why)) >= 0)
		e = move_onto(v.skel, t);
	else if (e == 0 && npoints)
		e = v.skel;
	int r = e < 0 ? error_set(err, -e, "cannot mount an empty tmpfs on %s", target) : read_mounts(&v);
	if (r == 0)
		r = file_covers(&v, t);
	for (size_t i = 0; r == 0 && i < v.n; i++)
		r = place(&v, &v.m[i]);
	if (r == 0 && v.root < 0)
		r = error_set(err, 0, "the host's / is not among the mounts of /proc/self/mountinfo; cannot show it to the cell");
	free_view_mnts(&v);
	closep(&v.root);
	closep(&v.empty);
	closep(&v.skel);
	closep(&v.files);
	return r;
}

/* ---- what both drivers' views leave out ---- */

/* Whether the kernel's file or directory open as k (O_PATH, of type mode), on which the kernel
 * will not mount a cover (ENOENT: its dentry was dropped), is gone: opening or reading it fails
 * as for what is not there (its process was reaped, its device removed). Nothing shows through
 * it then, so it needs no cover: a bind of a process's /proc file made by a process that has
 * ended must not stop every VM of the host. What can still be read (a sysfs directory renamed
 * since it was bound) is not gone. */
static bool kernel_file_gone(int k, mode_t mode)
{
	char path[32], buf[512];
	snprintf(path, sizeof path, "/proc/self/fd/%d", k);
	int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (S_ISDIR(mode) ? O_DIRECTORY : 0);
	_cleanup_close_ int fd = open(path, flags);
	ssize_t n = fd < 0 ? -1 : S_ISDIR(mode) ? getdents64(fd, buf, sizeof buf) : read(fd, buf, sizeof buf);
	return n < 0 && (errno == ENOENT || errno == ESRCH || errno == ENODEV || errno == EINVAL);
}

int hostroot_cover_kernel_fs(const char *dir, const char *spot, struct error *err)
{
	struct view v = { .err = err, .root = -1, .empty = -1, .skel = -1 };
	_cleanup_close_ int at = open(spot, O_PATH | O_DIRECTORY | O_CLOEXEC), fs = -1;
	int r = cover_fs(at, spot, &fs, err);
	if (r == 0)
		r = read_mounts(&v);
	/* parents first: what lies below a covered one is gone from its path (open_reached) */
	for (size_t i = 0; r == 0 && i < v.n; i++) {
		struct statx stx;
		if (!path_beneath(v.m[i].path, dir) || !among(v.m[i].type, KERNEL_TYPES))
			continue;
		_cleanup_close_ int k = open_reached(&v.m[i], &stx);
		if (k >= 0)
			r = cover_one(fs, i, &v.m[i], k, stx.stx_mode, err);
		if (r == -ENOENT && kernel_file_gone(k, stx.stx_mode)) {
			error_clear(err);
			r = 0;
		}
	}
	free_view_mnts(&v);
	int e = r == 0 ? set_attrs(fs, VIEW_ATTRS | MOUNT_ATTR_NOEXEC, 0) : 0;
	return e < 0 ? error_set(err, -e, "cannot make %s read-only", spot) : r;
}

int hostroot_check_source(const char *what, const char *path, int fd, bool fresh, struct error *err)
{
	struct stat st;
	if (fs_is_kernel(fd))
		return error_set(err, 0, "%s %s is on a kernel's file system (the host's processes, devices or settings); give a "
				 "directory of files", what, path);
	if (fresh)
		kernel_mnts_known = false;
	_cleanup_free_ char *kmp = NULL, *ktype = NULL;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && kernel_fs_below(path, &kmp, &ktype)) {
		_cleanup_free_ char *shown = printable_name(kmp);
		return error_set(err, 0, "%s %s is on or holds a %s file system (mounted at %s), which would show the host's in the cell; "
				 "unmount it, or give a directory without it", what, path, ktype, shown);
	}
	return 0;
}
