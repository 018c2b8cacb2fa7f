/* SPDX-License-Identifier: Apache-2.0 */
/* root.c - the cell's file system, built by its init (init.c) in the cell's mount namespace:
 * the scratch, the root (an overlay of --rootfs, or the host's / read-only through overlays:
 * hostroot.c), /proc, /dev, /tmp, /run, the home, the run user's passwd and group, the
 * worktree and the binds, /sys, the policy's masks; then pivot_root into it. A warm cell's
 * take mounts its run's own scratch here too. Every path below the root is resolved inside
 * it, on descriptors. */
#include <fcntl.h>
#include <linux/mount.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cell/hostroot.h"
#include "cell/mounts.h"
#include "cell/sysctl.h"
#include "cell/users.h"
#include "cgroup/cgroup.h"
#include "net/net.h"
#include "policy/policy.h"
#include "util/fs.h"
#include "util/sys.h"

#include "internal.h"

/* ---- mounts ---- */

static char *at(const char *root, const char *path)
{
	return xasprintf("%s%s", root, path);
}

/* Paths below the cell's root are resolved inside it, the way the cell will see them: an
 * image's symlinks (an untrusted image may point /etc/group or /var at the host's files) stay
 * within the image, and nothing is read or created on the host through them. Everything is
 * done on descriptors; mount(2) gets their /proc/self/fd paths.
 * open full (under x->root: resolved in the root; else as it is) with flags; -1 + errno */
static int in_root(struct cell_ctx *x, const char *full, int flags)
{
	size_t n = x->root ? strlen(x->root) : 0;
	if (x->root_fd < 0 || strncmp(full, x->root, n) || (full[n] && full[n] != '/'))
		return open(full, flags | O_CLOEXEC);
	const char *rel = full + n;
	while (*rel == '/')
		rel++;
	return sys_openat2(x->root_fd, *rel ? rel : ".", (uint64_t)flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

/* A mount point directory made in directory dfd belongs to that directory's owner: one made
 * in the run's home (a --bind on ~/.cache/pip) leaves ~/.cache the run user's. */
static void mountpoint_owner(int dfd, const struct statx *st, const char *name)
{
	(void)!fchownat(dfd, name, st->stx_uid, st->stx_gid, AT_SYMLINK_NOFOLLOW);
}

/* A mount of a host directory (the worktree, a bind): no mount point is made in it
 * (in_host_mount), it would be made in the host's directory. */
static void note_host_mount(struct cell_ctx *x, int fd)
{
	struct statx st;
	if (x->n_host_mnts < sizeof x->host_mnts / sizeof x->host_mnts[0] &&
	    statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &st) == 0 && (st.stx_mask & STATX_MNT_ID))
		x->host_mnts[x->n_host_mnts++] = st.stx_mnt_id;
}

static bool in_host_mount(struct cell_ctx *x, const struct statx *st)
{
	for (size_t i = 0; (st->stx_mask & STATX_MNT_ID) && i < x->n_host_mnts; i++)
		if (x->host_mnts[i] == st->stx_mnt_id)
			return true;
	return false;
}

/* full as the cell sees it (without the root's path) */
static const char *in_cell(struct cell_ctx *x, const char *full)
{
	size_t n = x->root ? strlen(x->root) : 0;
	return n && !strncmp(full, x->root, n) && full[n] == '/' ? full + n : full;
}

/* An O_PATH descriptor of target (a directory, or an empty file when file is set), created
 * inside the root where it is missing (overlay, tmpfs); a read-only host / must have it. */
static int ensure_mountpoint(struct cell_ctx *x, const char *target, bool file)
{
	int fd = in_root(x, target, O_PATH);
	if (fd >= 0 || errno != ENOENT)
		goto out;
	char *copy = xstrdup(target);
	char *slash = strrchr(copy, '/');
	if (!slash || slash == copy) {
		free(copy);
		goto out;
	}
	*slash = '\0';
	const char *last = slash + 1;
	/* the parent as a directory to make the point in: opened at once where it is (most
	 * often), else made first */
	int dfd = in_root(x, copy, O_RDONLY | O_DIRECTORY);
	if (dfd < 0 && errno == ENOENT) {
		int pfd = ensure_mountpoint(x, copy, false);
		dfd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(pfd);
	}
	if (dfd < 0)
		die(x, errno, "cannot open %s", copy);
	/* its mode: its parent's, never more than rwxr-xr-x (init's umask is 0: the caller's
	 * 077 made them closed to the job; a point made on the host, in a bind of the caller's
	 * directory, is no more open than that directory) */
	struct statx pst;
	if (statx(dfd, "", AT_EMPTY_PATH, STATX_MODE | STATX_UID | STATX_GID | STATX_MNT_ID, &pst) < 0)
		die(x, errno, "cannot open %s", copy);
	/* only in the cell's own file systems (its tmpfs, the overlays of the host's / or of an
	 * image): in the worktree or a bind it would be made in the host's directory */
	if (in_host_mount(x, &pst))
		die(x, 0, "cannot make the mount point %s: %s is the host's directory (the worktree or a bind), where warren makes "
		       "nothing; make %s there first, or choose a destination that exists or lies outside it",
		    in_cell(x, target), in_cell(x, copy), last);
	bool made = false;
	if (file) {
		int f = openat(dfd, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, pst.stx_mode & 0644);
		if (f < 0 && errno != EEXIST)
			die(x, errno, "cannot create the mount point %s", target);
		made = f >= 0;
		closep(&f);
	} else if (mkdirat(dfd, last, pst.stx_mode & 0755) == 0) {
		mountpoint_owner(dfd, &pst, last);
		made = true;
	} else if (errno != EEXIST) {
		die(x, errno, "cannot create the mount point %s", target);
	}
	/* what was just made here is what the path leads to; what was there already (an
	 * image's link to nowhere) is resolved once more, in the root */
	fd = made ? openat(dfd, last, O_PATH | O_NOFOLLOW | O_CLOEXEC) : in_root(x, target, O_PATH);
	close(dfd);
	free(copy);
out:
	if (fd < 0)
		die(x, errno, "cannot use the mount point %s (in an image: is it, or a directory on its way, a symlink to nowhere inside the image?)", target);
	return fd;
}

static void do_mount_fd(struct cell_ctx *x, const char *src, int fd, const char *what, const char *type, unsigned long flags,
			const char *data)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	if (mount(src, p, type, flags, data) < 0)
		die(x, errno, "cannot mount %s on %s", type ? type : src, what);
}

static void do_mount(struct cell_ctx *x, const char *src, const char *target, const char *type, unsigned long flags,
		     const char *data)
{
	int fd = ensure_mountpoint(x, target, false);
	do_mount_fd(x, src, fd, target, type, flags, data);
	close(fd);
}

static void bind_path(struct cell_ctx *x, const char *src, const char *target, bool rdonly, bool file)
{
	int sfd = in_root(x, src, O_PATH);
	if (sfd < 0)
		die(x, errno, "cannot open %s", src);
	char sp[64];
	snprintf(sp, sizeof sp, "/proc/self/fd/%d", sfd);
	int fd = ensure_mountpoint(x, target, file);
	do_mount_fd(x, sp, fd, target, NULL, MS_BIND | MS_REC, NULL);
	close(fd);
	close(sfd);
	/* the new mount, as the path now resolves */
	fd = in_root(x, target, O_PATH);
	if (fd < 0)
		die(x, errno, "cannot open %s", target);
	struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (rdonly ? MOUNT_ATTR_RDONLY : 0) };
	if (sys_mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a) < 0)
		die(x, errno, "cannot restrict the bind mount %s", target);
	close(fd);
}

static void tmpfs(struct cell_ctx *x, const char *target, const char *opts, unsigned long flags)
{
	do_mount(x, "tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | flags, opts);
}

/* A directory descriptor of dir (under the root: resolved in it) to create files in. */
static int dir_in_root(struct cell_ctx *x, const char *dir)
{
	int fd = in_root(x, dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		die(x, errno, "cannot open %s", dir);
	return fd;
}

/* Write a new file name in directory fd dfd (never through a link). */
static void write_new_at(struct cell_ctx *x, int dfd, const char *name, const char *txt, const char *what)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	size_t len = strlen(txt);
	if (fd < 0 || write(fd, txt, len) != (ssize_t)len)
		die(x, errno, "cannot write %s", what);
	close(fd);
}

int cell_idmapped_tree(int dfd, const char *path, int ns, bool whole_ok)
{
	if (ns < 0)
		return -1;
	struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
				.userns_fd = (uint64_t)ns };
	for (int whole = whole_ok; whole >= 0; whole--) {
		int t = sys_open_tree(dfd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | (*path ? 0 : AT_EMPTY_PATH));
		if (t < 0)
			return -1;
		if (sys_mount_setattr(t, "", AT_EMPTY_PATH | (whole ? AT_RECURSIVE : 0), &a) == 0) {
			if (!whole && sys_mount_setattr_fd(t, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, AT_RECURSIVE) < 0) {
				close(t);
				return -1;
			}
			return t;
		}
		close(t);
	}
	return -1;
}

/* ---- the scratch ---- */

/* Where the scratch parts live (x->scratch_base): the run directory, or with --scratch a size-limited tmpfs
 * that init mounts over the run directory itself, in the cell's mount namespace only: the
 * parts and the root's mount point keep their paths, private to the cell and gone with it,
 * and nothing of them is made (nor later removed) on the host's disk, where each directory
 * costs its block (ext4 mounted with discard frees a block by a discard the rmdir waits for).
 * The record beside them stays the supervisor's, unseen by the cell. */

/* A warm cell's scratch is made at its take, here inside the cell, bound on its places, and
 * this mount let go of before the job starts. */
#define WARM_SCRATCH_DIR   "scratch"
#define WARM_SCRATCH_PATH  "/run/.warren/" WARM_SCRATCH_DIR

static char *scratch_part(struct cell_ctx *x, const char *part)
{
	return xasprintf("%s/%s", x->scratch_base, part);
}

/* The scratch parts made in directory fd (the tmpfs of --scratch, or of a warm cell's take),
 * with their owners: in root mode init is host root, so they get their host owners. run: the
 * parts the run writes (tmp, var-tmp, shm, home); base: the overlay's and the root's. */
static void make_scratch_parts(struct cell_ctx *x, int fd, const char *where, bool run, bool base)
{
	const struct cell_spec *s = x->s;
	uid_t root_uid = s->rootless ? s->uid : 0, run_uid = s->uid;
	gid_t root_gid = s->rootless ? s->gid : 0, run_gid = s->gid;
	if (!s->rootless) {
		root_uid = spec_host_root_uid(s);
		root_gid = s->id_base;
		run_uid = spec_host_uid(s);
		run_gid = spec_host_gid(s);
	}
	struct { const char *name; mode_t mode; uid_t u; gid_t g; bool run, image; } parts[] = {
		{ RUN_TMP_DIR, CELL_TMP_MODE, root_uid, root_gid, true, false },
		{ RUN_VARTMP_DIR, CELL_TMP_MODE, root_uid, root_gid, true, false },
		{ RUN_SHM_DIR, CELL_TMP_MODE, root_uid, root_gid, true, false },
		{ RUN_HOME_DIR, CELL_HOME_MODE, run_uid, run_gid, true, false },
		/* mount points, init's own */
		{ RUN_ROOT_DIR, 0755, (uid_t)-1, (gid_t)-1, false, false },
		/* an image's overlay: its upper and work directories, and where the image is idmapped */
		{ RUN_UPPER_DIR, 0755, root_uid, root_gid, false, true }, { RUN_WORK_DIR, 0755, root_uid, root_gid, false, true },
		{ RUN_LOWER_DIR, 0755, (uid_t)-1, (gid_t)-1, false, true },
	};
	/* init's umask is 0: mkdirat gives the mode as it is, the sticky bit too */
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		if ((parts[i].run ? !run : !base) || (parts[i].image && !s->rootfs))
			continue;
		if (mkdirat(fd, parts[i].name, parts[i].mode) < 0 ||
		    (parts[i].u != (uid_t)-1 && fchownat(fd, parts[i].name, parts[i].u, parts[i].g, 0) < 0))
			die(x, errno, "cannot prepare %s/%s", where, parts[i].name);
	}
}

static void mount_scratch(struct cell_ctx *x)
{
	const struct cell_spec *s = x->s;
	x->scratch_base = xstrdup(s->rundir);
	if (!s->limits.scratch && !s->warm)
		return;
	/* a warm cell's base holds only the overlay's upper and the mount points: what the run
	 * writes is a tmpfs of its own, made when the cell is taken (take_scratch) */
	_cleanup_free_ char *opts = s->limits.scratch && !s->warm
		? xasprintf("size=%llu,mode=0755", (unsigned long long)s->limits.scratch) : xstrdup("mode=0755");
	do_mount(x, "tmpfs", x->scratch_base, "tmpfs", MS_NOSUID | MS_NODEV, opts);
	int fd = open(x->scratch_base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		die(x, errno, "cannot open %s", x->scratch_base);
	make_scratch_parts(x, fd, x->scratch_base, !s->warm, true);
	if (s->warm)
		close(fd);
	else
		x->scratch_fd = fd;
}

/* ---- the host's paths, the cell's own places, its root ---- */

/* The host's path (opened and checked before as checked_fd) as a detached tree, read-only when
 * rdonly; in root mode through an idmapped mount (userns fd idmap, or -1) so that its owner is
 * the run user inside the cell, else (rootless, or a file system that cannot be idmapped) a
 * copy of the mount with what is mounted below it, as a recursive bind. The tree is made
 * detached and restricted before it is put in place (place_tree): no moment on the mount point
 * without its restrictions. */
static int bind_tree(struct cell_ctx *x, const char *path, int checked_fd, bool rdonly, int idmap, const char *what)
{
	/* the directory that was checked, not whatever its path names now: open it again in
	 * this mount namespace without following links, and it must be the same inode */
	_cleanup_close_ int wfd = sys_openat2(AT_FDCWD, path, O_PATH, RESOLVE_NO_SYMLINKS);
	struct stat a, b;
	if (wfd < 0 || fstat(wfd, &a) < 0 || fstat(checked_fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		die(x, wfd < 0 ? errno : 0, "%s %s changed while the cell was being made (a directory on its way was replaced); run again", what, path);
	/* a source that is on a kernel's file system, or has one mounted below it (a chroot's
	 * /proc in a worktree), would show the host's processes or devices in the cell: refused
	 * (from the mount table hostroot read) */
	struct error kerr = { 0 };
	if (hostroot_check_source(what, path, wfd, false, &kerr) < 0)
		die(x, 0, "%s", kerr.msg);
	/* the owner's files are the run user's in every mount below the source, unless the owner
	 * is root: then in the source's own file system only (a root-owned worktree holding a
	 * bind of a system directory does not give the job that directory) */
	int t = cell_idmapped_tree(wfd, "", idmap, a.st_uid != 0);
	if (t < 0) {
		t = sys_open_tree(wfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
		if (t < 0 || sys_mount_setattr_fd(t, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, AT_RECURSIVE) < 0)
			die(x, errno, "cannot bind %s", path);
	}
	if (rdonly && sys_mount_setattr_fd(t, MOUNT_ATTR_RDONLY, AT_RECURSIVE) < 0)
		die(x, errno, "cannot make the bind of %s read-only", path);
	return t;
}

/* The tree t (bind_tree's) of path put on the mount point fd (resolved and checked once by the
 * caller: never looked up again by its path, which a process writing into a host directory on
 * the way could have changed meanwhile). Returns t, now the mount in place (an O_PATH
 * descriptor of its root). */
static int place_tree(struct cell_ctx *x, int t, int fd, const char *path, const char *target)
{
	if (sys_move_mount_fd(t, fd) < 0)
		die(x, errno, "cannot bind %s on %s", path, target);
	note_host_mount(x, t);
	return t;
}

/* The host's path mounted on the mount point fd (bind_tree, place_tree). The worktree and every
 * --bind go through here. */
static int mount_checked(struct cell_ctx *x, const char *path, int checked_fd, int fd, const char *target, bool rdonly, int idmap,
			 const char *what)
{
	return place_tree(x, bind_tree(x, path, checked_fd, rdonly, idmap, what), fd, path, target);
}

/* A pod's volumes bound as slaves of the host's mounts (rslave: mountPropagation
 * HostToContainer): their trees are cloned while the cell's copies of the host's mounts are
 * still in the host's peer groups, before build_root makes them all private; each is made a
 * slave once in place (mount_extra). */
static void clone_slave_trees(struct cell_ctx *x)
{
	const struct cell_spec *s = x->s;
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct cell_mount *m = &s->mounts[i];
		if (!m->slave)
			continue;
		if (!x->slave_trees) {
			x->slave_trees = xcalloc(s->n_mounts, sizeof *x->slave_trees);
			for (size_t k = 0; k < s->n_mounts; k++)
				x->slave_trees[k] = -1;
		}
		x->slave_trees[i] = bind_tree(x, m->source, m->fd, m->readonly, x->idmap_mounts ? x->idmap_mounts[i] : -1,
					      "the bind source");
	}
}

/* The worktree on target; returns its mount (see mount_checked). */
static int mount_worktree(struct cell_ctx *x, const char *target)
{
	const struct cell_spec *s = x->s;
	struct stat st;
	if (fstat(s->worktree_fd, &st) < 0)
		die(x, errno, "cannot stat the worktree %s", s->worktree);
	_cleanup_close_ int fd = ensure_mountpoint(x, target, !S_ISDIR(st.st_mode));
	return mount_checked(x, s->worktree, s->worktree_fd, fd, target, s->worktree_ro, x->idmap_work, "the worktree");
}

/* The spec's extra mounts (--bind, --ro-bind, --externals), in order. Each destination is
 * resolved inside the cell's root (an image's symlinks stay in it) and created there where it
 * is missing (overlay, tmpfs: never on the host); where it resolved to is checked again, so
 * that a symlink of the image cannot lead a mount onto /proc, /tmp or the worktree. */
static void mount_extra(struct cell_ctx *x, const char *root)
{
	const struct cell_spec *s = x->s;
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct cell_mount *m = &s->mounts[i];
		struct stat st;
		if (fstat(m->fd, &st) < 0)
			die(x, errno, "cannot stat the bind source %s", m->source);
		_cleanup_free_ char *target = at(root, m->destination);
		_cleanup_close_ int fd = ensure_mountpoint(x, target, !S_ISDIR(st.st_mode));
		char link[64], real[4096];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, real, sizeof real - 1);
		size_t rl = strlen(root);
		if (n < 0 || (size_t)n < rl || strncmp(real, root, rl) || (real[rl] && real[rl] != '/'))
			die(x, n < 0 ? errno : 0, "cannot place the bind of %s on %s in the cell", m->source, m->destination);
		real[n] = '\0';
		const char *inside = real[rl] ? real + rl : "/";
		const char *why = mount_dst_refused_for(inside, s, m->pod);
		if (why)
			die(x, 0, "the bind of %s on %s lands on %s in the cell: %s", m->source, m->destination, inside, why);
		switch (m->kind) {
		case CELL_MOUNT_BIND:
			if (x->slave_trees && x->slave_trees[i] >= 0) {
				struct mount_attr sl = { .propagation = MS_SLAVE };
				int t = place_tree(x, x->slave_trees[i], fd, m->source, target);
				x->slave_trees[i] = -1;
				if (sys_mount_setattr(t, "", AT_EMPTY_PATH | AT_RECURSIVE, &sl) < 0)
					die(x, errno, "cannot make the bind of %s on %s a slave of the host's mount", m->source, m->destination);
				close(t);
				break;
			}
			close(mount_checked(x, m->source, m->fd, fd, target, m->readonly, x->idmap_mounts ? x->idmap_mounts[i] : -1,
					    "the bind source"));
			break;
		}
	}
}

/* Bind the scratch part on target; a warm cell only makes the mount point: its scratch is
 * mounted there when it is taken (take_scratch). */
static void scratch_bind(struct cell_ctx *x, const char *part, const char *target)
{
	const struct cell_spec *s = x->s;
	if (s->warm) {
		close(ensure_mountpoint(x, target, false));
		return;
	}
	_cleanup_free_ char *src = scratch_part(x, part);
	bind_path(x, src, target, false, false);
}

/* The mount points of a pod's volumes in /dev (its termination log: a new name there,
 * cell/mounts.h), made in the cell's /dev tmpfs (dfd) before it is made read-only: a file or a
 * directory as the source is. */
static void dev_pod_points(struct cell_ctx *x, int dfd, const char *dev)
{
	const struct cell_spec *s = x->s;
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct cell_mount *m = &s->mounts[i];
		struct stat st;
		if (!m->pod || strncmp(m->destination, "/dev/", 5) || fstat(m->fd, &st) < 0)
			continue;
		const char *name = m->destination + 5;
		int r = S_ISDIR(st.st_mode) ? mkdirat(dfd, name, 0755)
					    : openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (r < 0 && errno != EEXIST)
			die(x, errno, "cannot create the mount point %s/%s", dev, name);
		if (r >= 0 && !S_ISDIR(st.st_mode))
			close(r);
	}
}

static void mount_dev(struct cell_ctx *x, const char *root)
{
	_cleanup_free_ char *dev = at(root, "/dev");
	tmpfs(x, dev, "mode=0755,size=512k", MS_NOEXEC);
	/* the tmpfs just mounted is empty and init's own: its mount points are made in it
	 * directly, no path of the image's on the way */
	int dfd = dir_in_root(x, dev);
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		_cleanup_free_ char *host = xasprintf("/dev/%s", nodes[i]);
		_cleanup_free_ char *t = xasprintf("%s/%s", dev, nodes[i]);
		int fd = openat(dfd, nodes[i], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			die(x, errno, "cannot create the mount point %s", t);
		do_mount_fd(x, host, fd, t, NULL, MS_BIND, NULL);
		close(fd);
	}
	_cleanup_free_ char *pts = xasprintf("%s/pts", dev);
	int pfd = mkdirat(dfd, "pts", 0755) < 0 ? -1 : openat(dfd, "pts", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		die(x, errno, "cannot create the mount point %s", pts);
	do_mount_fd(x, "devpts", pfd, pts, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620");
	close(pfd);
	/* /dev/shm is scratch like /tmp: within the scratch limit, reclaimed with it */
	_cleanup_free_ char *shm = xasprintf("%s/shm", dev);
	if (mkdirat(dfd, "shm", 0755) < 0)
		die(x, errno, "cannot create the mount point %s", shm);
	scratch_bind(x, RUN_SHM_DIR, shm);
	static const char *const links[][2] = {
		{ "pts/ptmx", "ptmx" }, { "/proc/self/fd", "fd" }, { "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" }, { "/proc/self/fd/2", "stderr" },
	};
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
		if (symlinkat(links[i][0], dfd, links[i][1]) < 0)
			die(x, errno, "cannot create %s/%s", dev, links[i][1]);
	dev_pod_points(x, dfd, dev);
	struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
	if (sys_mount_setattr(dfd, "", AT_EMPTY_PATH, &a) < 0)
		die(x, errno, "cannot make %s read-only", dev);
	close(dfd);
}

static void mount_root(struct cell_ctx *x, const char *root)
{
	const struct cell_spec *s = x->s;
	if (s->rootfs) {
		/* the root the gate judged, and no other: opened without a link on the way and
		 * compared, then used by its descriptor (a path component swapped for a symlink to /
		 * since the check would otherwise give the cell the host's /) */
		_cleanup_close_ int rfd = spec_root_open(s);
		if (rfd < 0)
			die(x, errno, "the root %s changed since it was checked (a path on the way was replaced); run again", s->rootfs);
		_cleanup_free_ char *by_fd = xasprintf("/proc/self/fd/%d", rfd);
		/* root mode: the image's own ids are the cell's (its root files belong to cell root) */
		const char *lower = by_fd;
		_cleanup_free_ char *idmapped = xasprintf("%s/" RUN_LOWER_DIR, s->rundir);
		_cleanup_close_ int t = cell_idmapped_tree(rfd, "", x->idmap_image, false);
		if (t >= 0 && sys_move_mount(t, "", AT_FDCWD, idmapped, MOVE_MOUNT_F_EMPTY_PATH) == 0)
			lower = idmapped;
		_cleanup_free_ char *opts = xasprintf("lowerdir=%s,upperdir=%s/" RUN_UPPER_DIR ",workdir=%s/" RUN_WORK_DIR "%s",
						      lower, x->scratch_base, x->scratch_base, s->rootless ? ",userxattr" : "");
		if (mount("overlay", root, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
			die(x, errno, "cannot mount an overlay of --rootfs %s on %s (is overlayfs available? see 'warren selfcheck')",
			    s->rootfs, root);
		return;
	}
	/* the host's / through overlays, so that its unix sockets refuse the cell (hostroot.c);
	 * nothing of the host is placed where the cell has its own */
	const char *const skip[] = { "/proc", "/dev", "/sys", "/run", CELL_TMP_PATH, CELL_VARTMP_PATH, CELL_HOME_PARENT,
				     s->home, s->statedir, s->worktree, NULL };
	struct error err = { 0 };
	struct hostroot_point *points = xcalloc(s->n_mounts + 1, sizeof *points);
	for (size_t i = 0; i < s->n_mounts; i++) {
		struct stat st;
		points[i].path = s->mounts[i].destination;
		points[i].file = fstat(s->mounts[i].fd, &st) == 0 && !S_ISDIR(st.st_mode);
	}
	int r = hostroot_mount(root, s->rootless, skip, points, s->n_mounts, &err);
	free(points);
	if (r < 0)
		die(x, 0, "%s", err.msg);
}

/* ---- the network namespace ---- */

/* Bring up lo in the caller's network namespace: 0, or -1 and errno. */
static int lo_up(void)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = { 0 };
	strcpy(ifr.ifr_name, "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 || (ifr.ifr_flags |= IFF_UP, ioctl(fd, SIOCSIFFLAGS, &ifr) < 0))
		return -1;
	return 0;
}

/* In the cell's new network namespace: lo up, and the ports below 1024 the job's (net/ports.c). */
void loopback_up(struct cell_ctx *x)
{
	if (lo_up() < 0)
		die(x, errno, "cannot bring up the loopback interface");
	net_open_low_ports();
}

/* Into the network namespace the supervisor's helper made (its loopback up), once the root is
 * built but for /sys (mount_sys): it was being made meanwhile. Before the job's process is
 * made, which stays in it. If the helper could not make it (or ended without a word), init
 * makes one itself, as a clone with CLONE_NEWNET would have. */
static void enter_netns(struct cell_ctx *x)
{
	const struct cell_spec *s = x->s;
	if (s->ns[GATE_NS_NET].from == CELL_NS_JOIN) {
		/* a pod's, made by its CNI or its sandbox: its links are theirs; the ports below
		 * 1024 are its jobs', as in a cell's own */
		if (setns(s->ns[GATE_NS_NET].fd, CLONE_NEWNET) < 0)
			die(x, errno, "cannot join the pod's network namespace");
		close(s->ns[GATE_NS_NET].fd);
		net_open_low_ports();
		return;
	}
	if (x->netns_sock < 0)
		return;
	char made;
	int ns = -1;
	ssize_t n = fd_recv(x->netns_sock, 0, &made, 1, &ns);
	closep(&x->netns_sock);
	if (n == 1 && ns >= 0) {
		if (setns(ns, CLONE_NEWNET) < 0)
			die(x, errno, "cannot enter the cell's network namespace");
		close(ns);
		return;
	}
	closep(&ns);
	if (unshare(CLONE_NEWNET) < 0)
		die(x, errno, "cannot create the cell's network namespace");
	loopback_up(x);
}

/* The cell's /sys: a sysfs of its own, read-only, made once init is in the cell's network
 * namespace, so that what it shows of the network (class/net, devices/virtual/net) is the
 * cell's: the host's /sys would list the host's interfaces, their addresses and counters
 * (and the host's eth0 where the cell has its own). The kernel's files are masked and the
 * run's cgroup placed on it later (policy). Rootless, the kernel gives a new sysfs only when
 * the host's /sys is fully visible in the cell's mount namespace (no mount of the host's
 * hides a part of it); else the host's /sys is bound, as before (its class/net is the
 * host's). With --no-sys there is none: the mask hides the mount point. */
static void mount_sys(struct cell_ctx *x)
{
	const struct cell_spec *s = x->s;
	if (s->policy.no_sys)
		return;
	/* the root's own sys directory, made where missing: not through an image's symlink (the
	 * masks below open /sys without following one: they would find none, and the sysfs
	 * where it led would be unmasked) */
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 2; tries++) {
		fd = sys_openat2(x->root_fd, "sys", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH);
		if (fd >= 0 || errno != ENOENT || (mkdirat(x->root_fd, "sys", 0555) < 0 && errno != EEXIST))
			break;
	}
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		die(x, 0, "the image's /sys is not a directory (a symlink or a file): the cell's own sysfs is mounted there; "
		       "make it an empty directory in the image");
	if (fd < 0)
		die(x, errno, "cannot open the cell's /sys");
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	if (mount("sysfs", p, "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		if (!s->rootless || (errno != EPERM && errno != EACCES))
			die(x, errno, "cannot mount a sysfs on the cell's /sys");
		/* with what is mounted in it (locked in: the kernel will not part them), read-only */
		_cleanup_close_ int t = sys_open_tree(AT_FDCWD, "/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
		if (t < 0 || sys_mount_setattr(t, "", AT_EMPTY_PATH | AT_RECURSIVE, &a) < 0 ||
		    sys_move_mount(t, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
			die(x, errno, "cannot bind the host's /sys on the cell's /sys (the kernel refused a sysfs of the cell's own)");
	}
	close(fd);
}

/* ---- a warm cell's worktree below /tmp ---- */

/* A worktree below /tmp or /var/tmp would be hidden by the scratch its take mounts there: a
 * copy of its mount is kept, and put back on top then. */
static bool below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && path[n] == '/';
}

static void keep_worktree(struct cell_ctx *x, int mnt)
{
	const struct cell_spec *s = x->s;
	if (!s->warm || !(below(s->worktree, CELL_TMP_PATH) || below(s->worktree, CELL_VARTMP_PATH)))
		return;
	x->kept_worktree = sys_open_tree(mnt, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (x->kept_worktree < 0)
		die(x, errno, "cannot keep the worktree's mount for the warm cell's take");
}

/* ---- the whole root ---- */

/* The cell's files of /etc: the run user's passwd and group entries, written into the cell's
 * /run (a tmpfs that dies with the cell, nothing on the host's disk), bound read-only over the
 * image's; with --net nat|allow its resolv.conf and hosts. */
static void mount_etc_files(struct cell_ctx *x, const char *root, const char *run)
{
	const struct cell_spec *s = x->s;
	static const char *const dbs[] = { "passwd", "group" };
	_cleanup_free_ char *dbdir = xasprintf("%s/.warren", run);
	int rfd = dir_in_root(x, run);
	if (mkdirat(rfd, ".warren", 0755) < 0)
		die(x, errno, "cannot create %s", dbdir);
	if (s->warm && mkdirat(rfd, ".warren/" WARM_SCRATCH_DIR, 0700) < 0)
		die(x, errno, "cannot create %s/" WARM_SCRATCH_DIR, dbdir);
	close(rfd);
	int dbfd = dir_in_root(x, dbdir);
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *t = xasprintf("%s/etc/%s", root, dbs[i]);
		_cleanup_free_ char *src = xasprintf("%s/%s", dbdir, dbs[i]);
		_cleanup_free_ char *txt = users_db(s, i == 1);
		if (!txt)
			die(x, errno, "cannot build %s", src);
		write_new_at(x, dbfd, dbs[i], txt, src);
		/* root of the cell owns it */
		if (!s->rootless && fchownat(dbfd, dbs[i], s->id_base, s->id_base, AT_SYMLINK_NOFOLLOW) < 0)
			die(x, errno, "cannot chown %s", src);
		bind_path(x, src, t, true, true);
	}
	/* --net nat|allow: resolv.conf names warren's resolver on the gateway (none+publish: no
	 * resolver); hosts has localhost and the run's hostname (net/net.h) */
	for (int i = 0; s->net.mode != NET_NONE && i < 2; i++) {
		const char *name = i ? "hosts" : "resolv.conf";
		_cleanup_free_ char *t = xasprintf("%s/etc/%s", root, name);
		_cleanup_free_ char *src = xasprintf("%s/%s", dbdir, name);
		_cleanup_free_ char *txt = net_cell_file(s->net.mode, spec_hostname(s), i);
		if (!txt)
			die(x, errno, "cannot build %s", src);
		write_new_at(x, dbfd, name, txt, src);
		bind_path(x, src, t, true, true);
	}
	close(dbfd);
}

/* The cell's own places on its root: /proc, /dev, /tmp, /var/tmp, an empty /run, /home with
 * only the run's home, the files of /etc. */
static void mount_places(struct cell_ctx *x, const char *root)
{
	const struct cell_spec *s = x->s;
	_cleanup_free_ char *proc = at(root, "/proc");
	do_mount(x, "proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_dev(x, root);

	_cleanup_free_ char *tmp = at(root, CELL_TMP_PATH);
	scratch_bind(x, RUN_TMP_DIR, tmp);
	_cleanup_free_ char *vartmp = at(root, CELL_VARTMP_PATH);
	scratch_bind(x, RUN_VARTMP_DIR, vartmp);

	/* /run: empty (the host's sockets, e.g. docker.sock, stay out of reach) */
	_cleanup_free_ char *run = at(root, "/run");
	tmpfs(x, run, "mode=0755,size=1m", MS_NOEXEC);

	/* /home: only the run user's home, which is the run's home/ (an image's own /home
	 * entries are hidden too: they are not the run's) */
	_cleanup_free_ char *home_parent = at(root, CELL_HOME_PARENT);
	tmpfs(x, home_parent, "mode=0755,size=1m", MS_NOEXEC);
	_cleanup_free_ char *home = at(root, s->home);
	scratch_bind(x, RUN_HOME_DIR, home);

	mount_etc_files(x, root, run);
}

/* The host's paths: the worktree (its mount returned, or -1), the state directory hidden,
 * the binds. */
static int mount_host_paths(struct cell_ctx *x, const char *root)
{
	const struct cell_spec *s = x->s;
	int work_mnt = -1;
	if (s->worktree) {
		_cleanup_free_ char *work = at(root, s->worktree);
		work_mnt = mount_worktree(x, work);
	}

	/* the state directory (other runs' scratch and records) is hidden, also when it lies
	 * inside the worktree */
	_cleanup_free_ char *state = at(root, s->statedir);
	int sfd = in_root(x, state, O_RDONLY | O_DIRECTORY);
	if (sfd >= 0) {
		close(sfd);
		tmpfs(x, state, "mode=0755,size=4k", MS_RDONLY | MS_NOEXEC);
	}
	mount_extra(x, root);
	return work_mnt;
}

/* Into the root built: pivot_root, the old root detached. */
static void pivot_into(struct cell_ctx *x, const char *root)
{
	if (chdir(root) < 0)
		die(x, errno, "cannot enter %s", root);
	if (sys_pivot_root(".", ".") < 0)
		die(x, errno, "cannot pivot_root into %s", root);
	if (umount2(".", MNT_DETACH) < 0)
		die(x, errno, "cannot detach the old root");
	if (chdir("/") < 0)
		die(x, errno, "cannot enter the new root");
	/* paths are the cell's own from here on (a warm cell's take mounts more) */
	x->root = NULL;
	closep(&x->root_fd);
}

void build_root(struct cell_ctx *x)
{
	const struct cell_spec *s = x->s;
	clone_slave_trees(x);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die(x, errno, "cannot make the cell's mounts private");
	_cleanup_free_ char *root = xasprintf("%s/" RUN_ROOT_DIR, s->rundir);
	mount_scratch(x);
	mount_root(x, root);
	x->root = root;
	x->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (x->root_fd < 0)
		die(x, errno, "cannot open %s", root);

	mount_places(x, root);
	_cleanup_close_ int work_mnt = mount_host_paths(x, root);
	/* the network namespace, made meanwhile by the supervisor's helper, before /sys */
	enter_netns(x);
	/* a pod's sysctls, in its own network and IPC namespaces (init is in both now) */
	struct error serr = { 0 };
	if (cell_sysctls_set(s, &serr) < 0)
		die(x, 0, "%s", serr.msg);
	mount_sys(x);

	/* kernel files masked, /proc/sys read-only, .git/hooks and --protect read-only; the
	 * Landlock ruleset the job enters */
	struct error perr = { 0 };
	struct policy_ctx pc = spec_policy_ctx(s);
	if (policy_build_root(&pc, root, &perr) < 0)
		die(x, 0, "%s", perr.msg);
	/* a warm cell's worktree below /tmp: its mount kept for the take, with what was mounted
	 * on it since (.git's guards, a hidden state directory) */
	keep_worktree(x, work_mnt);
	/* an OCI bundle's root.readonly: the image's overlay read-only, the cell's own parts
	 * mounted on it (/tmp, home, /dev, /proc, /run, binds) as they are */
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	if (s->root_ro && s->rootfs && sys_mount_setattr(x->root_fd, "", AT_EMPTY_PATH, &ro) < 0)
		die(x, errno, "cannot make the cell's root read-only");
	pivot_into(x, root);
}

/* The run's cgroup, alone and read-only, at /sys/fs/cgroup, in a cgroup namespace rooted at
 * it: on v1 init moved itself there after the clone, so the namespace the clone made is
 * rooted at the supervisor's groups. A rootless run has one only below a cgroup delegated to
 * its caller (v2, cgroup/delegate.h); without, /sys/fs/cgroup stays empty. */
void show_cgroup(struct cell_ctx *x)
{
	const struct cgroup *cg = x->cg;
	if (!cg || cg->kind == CGROUP_NONE)
		return;
	if (unshare(CLONE_NEWCGROUP) < 0)
		die(x, errno, "cannot root the cell's cgroup namespace at the run's cgroup");
	char *v1[CGROUP_V1_N + 1] = { NULL };
	if (cg->kind == CGROUP_V1 && !cgroup_v1_hierarchies(cg, v1))
		return;
	struct error err = { 0 };
	int r = policy_show_cgroup(cg->kind == CGROUP_V1 ? (const char *const *)v1 : NULL, &err);
	for (char **h = v1; *h; h++)
		free(*h);
	if (r < 0)
		die(x, 0, "%s", err.msg);
}

/* ---- a warm cell's take ---- */

static void put_back_worktree(struct cell_ctx *x)
{
	const struct cell_spec *s = x->s;
	if (x->kept_worktree < 0)
		return;
	_cleanup_close_ int fd = ensure_mountpoint(x, s->worktree, false);
	if (sys_move_mount(x->kept_worktree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		die(x, errno, "cannot mount the worktree %s over the run's scratch", s->worktree);
	closep(&x->kept_worktree);
}

/* The run's own scratch, a fresh tmpfs (of the cell's shape's size; a take of another size
 * resizes it: scratch_resize), bound on /tmp, /var/tmp, /dev/shm and the home; the job's
 * Landlock domain allows the new mounts. */
void take_scratch(struct cell_ctx *x)
{
	const struct cell_spec *s = x->s;
	/* of the size of the cell's shape: a run of that size is started without init */
	char opts[64] = "mode=0755";
	if (s->limits.scratch)
		snprintf(opts, sizeof opts, "mode=0755,size=%llu", (unsigned long long)s->limits.scratch);
	do_mount(x, "tmpfs", WARM_SCRATCH_PATH, "tmpfs", MS_NOSUID | MS_NODEV, opts);
	x->scratch_fd = open(WARM_SCRATCH_PATH, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->scratch_fd < 0)
		die(x, errno, "cannot open %s", WARM_SCRATCH_PATH);
	make_scratch_parts(x, x->scratch_fd, WARM_SCRATCH_PATH, true, false);
	free(x->scratch_base);
	x->scratch_base = xstrdup(WARM_SCRATCH_PATH);
	const char *const places[][2] = { { RUN_TMP_DIR, CELL_TMP_PATH }, { RUN_VARTMP_DIR, CELL_VARTMP_PATH },
					  { RUN_SHM_DIR, "/dev/shm" }, { RUN_HOME_DIR, s->home } };
	for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
		_cleanup_free_ char *src = scratch_part(x, places[i][0]);
		bind_path(x, src, places[i][1], false, false);
	}
	if (umount2(WARM_SCRATCH_PATH, MNT_DETACH) < 0)
		die(x, errno, "cannot let go of %s", WARM_SCRATCH_PATH);
	put_back_worktree(x);
	struct error perr = { 0 };
	struct policy_ctx pc = spec_policy_ctx(s);
	if (policy_landlock_allow_scratch(&pc, &perr) < 0)
		die(x, 0, "%s", perr.msg);
}

/* The take's --scratch: the scratch tmpfs made before (take_scratch) gets its size, bytes (0:
 * the tmpfs default). */
void scratch_resize(struct cell_ctx *x, uint64_t size)
{
	char opts[64] = "size=50%";
	if (size)
		snprintf(opts, sizeof opts, "size=%llu", (unsigned long long)size);
	if (mount(NULL, CELL_TMP_PATH, NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, opts) < 0)
		die(x, errno, "cannot size the run's scratch (%s)", opts);
}
