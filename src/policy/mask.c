/* SPDX-License-Identifier: Apache-2.0 */
/* mask.c - what init hides and freezes in the cell's root before pivot_root: kernel files of
 * /proc and /sys masked as runc does (a file under /dev/null, a directory under an empty
 * read-only tmpfs), /proc/sys and friends read-only, /sys hidden with --no-sys, the host's
 * cgroup trees out of reach, and the worktree paths the host executes later (.git/hooks,
 * .git/config, --protect) read-only. After pivot_root, the run's own cgroup, read-only, at
 * /sys/fs/cgroup.
 *
 * Every target is opened without following symlinks and without leaving its parent, and its
 * file-system type is checked (procfs, sysfs) before anything is mounted on it, so a planted
 * symlink or a swapped file cannot redirect a mount (the class of runc's 2025 advisories).
 * Mounts go through file descriptors (open_tree, fsmount, move_mount), never through paths. */
#include "policy/policy.h"
#include "util/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>


/* Only what exists is protected; what a job creates anew is moved aside after the run
 * (gitguard.c). */
const char *const policy_default_protect[] = { ".git/hooks", ".git/config", ".git/commondir", ".git/config.worktree",
					       ".git/info/attributes", ".git/objects/info/alternates", NULL };

/* ---- checked opens ---- */

int policy_open_checked(int dirfd, const char *path, int flags, long magic)
{
	int fd = sys_openat2(dirfd, path, flags | O_NOFOLLOW, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH);
	if (fd < 0)
		return errno == ELOOP ? -EXDEV : -errno;
	struct statfs fs;
	if (magic && (fstatfs(fd, &fs) < 0 || fs.f_type != magic)) {
		close(fd);
		return -EXDEV;
	}
	return fd;
}

int policy_write_checked(int dirfd, const char *path, long magic, const char *data, size_t len)
{
	_cleanup_close_ int fd = policy_open_checked(dirfd, path, O_WRONLY, magic);
	if (fd < 0)
		return fd;
	return write_all(fd, data, len);
}

/* ---- the three kinds of mask ---- */

/* The host's /dev/null, checked to be the character device 1:3. */
static int open_devnull(struct error *err)
{
	int fd = sys_openat2(AT_FDCWD, "/dev/null", O_PATH, RESOLVE_NO_SYMLINKS);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return error_set(err, errno, "cannot open /dev/null to mask kernel files with");
	if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != 1 || minor(st.st_rdev) != 3) {
		close(fd);
		return error_set(err, 0, "/dev/null is not the character device 1:3; refusing to mask kernel files with it");
	}
	return fd;
}

/* Mount a clone of src (a file or a tree, with what is mounted below it: a copy without would
 * show what those mounts hide) on target; with attrs, make the clone so first, all of it. */
static int bind_fd(int src, int target, uint64_t attrs)
{
	_cleanup_close_ int t = sys_open_tree(src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (t < 0)
		return -errno;
	if (attrs && sys_mount_setattr_fd(t, attrs, AT_RECURSIVE) < 0)
		return -errno;
	return sys_move_mount_fd(t, target) < 0 ? -errno : 0;
}

/* fsconfig each comma-separated item of opts: "key=value" as a string, "key" as a flag. */
static int fs_config(int fs, const char *opts)
{
	_cleanup_free_ char *copy = xstrdup(opts);
	char *save = NULL;
	for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		char *v = strchr(o, '=');
		if (v)
			*v++ = '\0';
		if (sys_fsconfig(fs, v ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, o, v, 0) < 0)
			return -errno;
	}
	return 0;
}

/* A detached mount of a new file system of type with opts ("size=4k,mode=0555", "cpu,cpuacct"). */
static int new_mount(const char *type, const char *opts, uint64_t attrs)
{
	_cleanup_close_ int fs = sys_fsopen(type, FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	int r = fs_config(fs, opts);
	if (r < 0)
		return r;
	if (sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -errno;
	int m = sys_fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	return m < 0 ? -errno : m;
}

#define RO_ATTRS (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)
#define EMPTY_TMPFS "source=tmpfs,size=4k,mode=0555"

/* Mount a new file system (new_mount's arguments) on the directory target. */
static int mount_on(int target, const char *type, const char *opts, uint64_t attrs)
{
	_cleanup_close_ int m = new_mount(type, opts, attrs);
	if (m < 0)
		return m;
	return sys_move_mount_fd(m, target) < 0 ? -errno : 0;
}

/* The first empty directory's mount while the kernel's files are masked (mask_kernel): the
 * next ones are clones of it, one file system for all (each made and ended costs a run
 * ~15-25 us, more than a clone). A clone of a mount attached in the caller's namespace, as
 * this one is once moved, is what every kernel with open_tree allows. */
static int empty_mnt = -1;

/* An empty read-only tmpfs on the directory target. */
static int empty_dir_on(int target)
{
	if (empty_mnt >= 0)
		return bind_fd(empty_mnt, target, RO_ATTRS);
	int m = new_mount("tmpfs", EMPTY_TMPFS, RO_ATTRS);
	if (m < 0)
		return m;
	if (sys_move_mount_fd(m, target) < 0) {
		int e = -errno;
		close(m);
		return e;
	}
	empty_mnt = m;
	return 0;
}

/* HIDE: an empty read-only directory, or /dev/null (reads empty, writes vanish); REFUSE: a
 * /dev/null that cannot be opened (nodev): a write fails with EACCES instead of vanishing
 * (sysrq-trigger, where a job must learn that its write did nothing) */
enum mask_kind { MASK_HIDE, MASK_REFUSE, MASK_RDONLY };

struct mask {
	const char *path;      /* below the file system's root (proc/ or sys/) */
	enum mask_kind kind;
	long alt_magic;        /* another kernel file system that may be mounted there */
};

/* runc's lists of masked and read-only paths, with sysrq-trigger hidden and /proc/interrupts
 * (Docker's newer list). Files only host root can read (kallsyms, kpage*) need no mask. */
static const struct mask PROC_MASKS[] = {
	{ "kcore", MASK_HIDE, 0 }, { "sysrq-trigger", MASK_REFUSE, 0 }, { "keys", MASK_HIDE, 0 },
	{ "key-users", MASK_HIDE, 0 }, { "timer_list", MASK_HIDE, 0 }, { "timer_stats", MASK_HIDE, 0 },
	{ "sched_debug", MASK_HIDE, 0 }, { "latency_stats", MASK_HIDE, 0 }, { "interrupts", MASK_HIDE, 0 },
	{ "acpi", MASK_HIDE, 0 }, { "asound", MASK_HIDE, 0 }, { "scsi", MASK_HIDE, 0 },
	{ "sys", MASK_RDONLY, 0 }, { "irq", MASK_RDONLY, 0 }, { "bus", MASK_RDONLY, 0 }, { "fs", MASK_RDONLY, 0 },
};

/* (debugfs, tracefs and bpffs, where the host mounts them, are host root's only) */
static const struct mask SYS_MASKS[] = {
	{ "firmware", MASK_HIDE, 0 }, { "devices/virtual/powercap", MASK_HIDE, 0 },
	{ "kernel/security", MASK_HIDE, SECURITYFS_MAGIC },
};

int policy_kernel_masks(int (*fn)(void *arg, const char *path, char kind), void *arg)
{
	static const char kinds[] = { [MASK_HIDE] = 'h', [MASK_REFUSE] = 'r', [MASK_RDONLY] = 'o' };
	const struct { const char *root; const struct mask *m; size_t n; } lists[] = {
		{ "/proc", PROC_MASKS, sizeof PROC_MASKS / sizeof PROC_MASKS[0] },
		{ "/sys", SYS_MASKS, sizeof SYS_MASKS / sizeof SYS_MASKS[0] },
	};
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l].n; i++) {
			_cleanup_free_ char *path = xasprintf("%s/%s", lists[l].root, lists[l].m[i].path);
			if (fn(arg, path, kinds[lists[l].m[i].kind]) < 0)
				return -EINVAL;
		}
	return 0;
}

/* Apply masks below dir (a procfs or sysfs root of type magic). */
static int apply_masks(int dir, const char *what, long magic, const struct mask *m, size_t n, int devnull,
		       struct error *err)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_close_ int t = policy_open_checked(dir, m[i].path, O_PATH, magic);
		if (t == -EXDEV && m[i].alt_magic)
			t = policy_open_checked(dir, m[i].path, O_PATH, m[i].alt_magic);
		if (t == -ENOENT || t == -EXDEV || t == -EACCES)
			continue;  /* not there, or not the kernel's file: nothing to hide */
		if (t < 0)
			return error_set(err, -t, "cannot open %s/%s to mask it", what, m[i].path);
		struct stat st;
		if (fstat(t, &st) < 0)
			return error_set(err, errno, "cannot stat %s/%s", what, m[i].path);
		int r;
		if (m[i].kind == MASK_RDONLY)
			r = bind_fd(t, t, RO_ATTRS);
		else if (S_ISDIR(st.st_mode))
			r = empty_dir_on(t);
		else
			r = bind_fd(devnull, t, m[i].kind == MASK_REFUSE ? RO_ATTRS : 0);
		if (r < 0)
			return error_set(err, -r, "cannot %s %s/%s in the cell", m[i].kind == MASK_RDONLY ? "make read-only" : "mask",
					 what, m[i].path);
	}
	return 0;
}

/* The host's cgroup trees name every run (warren/run_...) and show their memory. The cell's
 * /sys is a sysfs of its own, whose fs/cgroup is an empty mount point; only the host's /sys,
 * bound where the kernel refuses a rootless cell a new sysfs (cell/container/root.c mount_sys),
 * brings the host's trees along, locked in: an empty tmpfs hides them. */
static int hide_host_cgroups(int sys, struct error *err)
{
	_cleanup_close_ int cg = policy_open_checked(sys, "fs/cgroup", O_PATH | O_DIRECTORY, 0);
	struct statfs fs;
	if (cg < 0 || fstatfs(cg, &fs) < 0 ||
	    (fs.f_type != TMPFS_MAGIC && fs.f_type != CGROUP2_SUPER_MAGIC && fs.f_type != OVERLAYFS_SUPER_MAGIC))
		return 0;
	int r = empty_dir_on(cg);
	return r < 0 ? error_set(err, -r, "cannot hide /sys/fs/cgroup in the cell") : 0;
}

/* The policy's own masks (an OCI bundle's) below top ("/proc" or "/sys"), applied as warren's. */
static int apply_extra_masks(const struct policy_opts *p, int dir, const char *top, long magic, int devnull,
			     struct error *err)
{
	size_t n = 0, len = strlen(top);
	struct mask *m = xcalloc(p->n_masks + 1, sizeof *m);
	for (size_t i = 0; i < p->n_masks; i++)
		if (!strncmp(p->masks[i].path, top, len) && p->masks[i].path[len] == '/' && p->masks[i].path[len + 1])
			m[n++] = (struct mask){ p->masks[i].path + len + 1, p->masks[i].readonly ? MASK_RDONLY : MASK_HIDE, 0 };
	int r = apply_masks(dir, top, magic, m, n, devnull, err);
	free(m);
	return r;
}

static int mask_kernel_all(const struct policy_ctx *s, int rootfd, struct error *err)
{
	_cleanup_close_ int devnull = open_devnull(err);
	if (devnull < 0)
		return devnull;
	_cleanup_close_ int proc = policy_open_checked(rootfd, "proc", O_PATH | O_DIRECTORY, PROC_SUPER_MAGIC);
	if (proc < 0)
		return error_set(err, -proc, "the cell's /proc is not a procfs; refusing to go on");
	if (apply_masks(proc, "/proc", PROC_SUPER_MAGIC, PROC_MASKS, sizeof PROC_MASKS / sizeof PROC_MASKS[0], devnull, err) < 0 ||
	    apply_extra_masks(s->policy, proc, "/proc", PROC_SUPER_MAGIC, devnull, err) < 0)
		return -EINVAL;
	_cleanup_close_ int sys = policy_open_checked(rootfd, "sys", O_PATH | O_DIRECTORY, 0);
	if (s->policy->no_sys) {
		int r = sys < 0 ? 0 : empty_dir_on(sys);
		return r < 0 ? error_set(err, -r, "--no-sys: cannot hide /sys in the cell") : 0;
	}
	/* every cell has a sysfs there (cell/container/root.c mount_sys): anything else, and the masks
	 * would be applied to nothing */
	struct statfs fs;
	if (sys < 0 || fstatfs(sys, &fs) < 0 || fs.f_type != SYSFS_MAGIC)
		return error_set(err, sys < 0 ? -sys : 0, "the cell's /sys is not a sysfs; refusing to go on");
	/* read-only (the host's, where a rootless cell has it, too); make sure of it */
	if (!(fs.f_flags & ST_RDONLY)) {
		int r = bind_fd(sys, sys, RO_ATTRS);
		if (r < 0)
			return error_set(err, -r, "cannot make /sys read-only in the cell");
		closep(&sys);
		sys = policy_open_checked(rootfd, "sys", O_PATH | O_DIRECTORY, SYSFS_MAGIC);
		if (sys < 0)
			return error_set(err, -sys, "cannot reopen the cell's /sys");
	}
	if (apply_masks(sys, "/sys", SYSFS_MAGIC, SYS_MASKS, sizeof SYS_MASKS / sizeof SYS_MASKS[0], devnull, err) < 0 ||
	    apply_extra_masks(s->policy, sys, "/sys", SYSFS_MAGIC, devnull, err) < 0)
		return -EINVAL;
	return hide_host_cgroups(sys, err);
}

/* The policy's masks elsewhere in the cell (an OCI bundle's maskedPaths and readonlyPaths
 * outside /proc and /sys: a pod's, docker's): resolved in the cell's root, as runc resolves
 * them (an image's symlinks are followed but stay in it), once its binds are in place; what is
 * not there is left, as by runc. Each only takes away: a file under /dev/null, a directory
 * under an empty read-only tmpfs, or the path read-only (its programs still run). */
static int mask_elsewhere(const struct policy_opts *p, int rootfd, struct error *err)
{
	_cleanup_close_ int devnull = -1;
	for (size_t i = 0; i < p->n_masks; i++) {
		const struct policy_mask *m = &p->masks[i];
		if (!strncmp(m->path, "/proc/", 6) || !strncmp(m->path, "/sys/", 5))
			continue;  /* mask_kernel_all's */
		const char *field = m->readonly ? "readonlyPaths" : "maskedPaths";
		if (devnull < 0 && (devnull = open_devnull(err)) < 0)
			return -EINVAL;
		_cleanup_close_ int t = sys_openat2(rootfd, m->path + 1, O_PATH | O_CLOEXEC, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
		struct stat st;
		if (t < 0 && errno == ENOENT)
			continue;
		if (t < 0 || fstat(t, &st) < 0)
			return error_set(err, errno, "linux.%s '%s': cannot open it in the cell", field, m->path);
		int r = m->readonly ? bind_fd(t, t, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
			: S_ISDIR(st.st_mode) ? empty_dir_on(t) : bind_fd(devnull, t, 0);
		if (r < 0)
			return error_set(err, -r, "linux.%s '%s': cannot %s it in the cell", field, m->path,
					 m->readonly ? "make read-only" : "mask");
	}
	return 0;
}

static int mask_kernel(const struct policy_ctx *s, int rootfd, struct error *err)
{
	int r = mask_kernel_all(s, rootfd, err);
	if (r == 0)
		r = mask_elsewhere(s->policy, rootfd, err);
	closep(&empty_mnt);
	return r;
}

/* ---- the run's own cgroup at /sys/fs/cgroup ---- */

/* v1: the hierarchy of the controllers ctrls ("memory", "cpu,cpuacct") read-only on a new
 * directory of that name in dir, and a symlink for each controller of a joint one
 * (cpuacct -> cpu,cpuacct), as systemd lays them out. */
static int show_v1(int dir, const char *ctrls)
{
	if (mkdirat(dir, ctrls, 0555) < 0)
		return -errno;
	_cleanup_close_ int at = policy_open_checked(dir, ctrls, O_PATH | O_DIRECTORY, TMPFS_MAGIC);
	if (at < 0)
		return at;
	int r = mount_on(at, "cgroup", ctrls, RO_ATTRS);
	if (r < 0 || !strchr(ctrls, ','))
		return r;
	_cleanup_free_ char *copy = xstrdup(ctrls);
	char *save = NULL;
	for (char *c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save))
		if (!strchr(c, '=') && symlinkat(ctrls, dir, c) < 0)
			return -errno;
	return 0;
}

int policy_show_cgroup(const char *const *v1, struct error *err)
{
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int sys = policy_open_checked(root, "sys", O_PATH | O_DIRECTORY, SYSFS_MAGIC);
	_cleanup_close_ int cg = sys < 0 ? -1 : policy_open_checked(sys, "fs/cgroup", O_PATH | O_DIRECTORY, SYSFS_MAGIC);
	if (cg < 0)
		return 0;  /* --no-sys, an image's /sys, or the host's trees only hidden: nothing to show */
	if (!v1) {
		int r = mount_on(cg, "cgroup2", "", RO_ATTRS);
		return r < 0 ? error_set(err, -r, "cannot mount the run's cgroup (cgroup2) on /sys/fs/cgroup in the cell") : 0;
	}
	/* a tmpfs to hold one directory per hierarchy, read-only once they are in */
	int r = mount_on(cg, "tmpfs", EMPTY_TMPFS, RO_ATTRS & ~(uint64_t)MOUNT_ATTR_RDONLY);
	if (r < 0)
		return error_set(err, -r, "cannot mount a tmpfs on /sys/fs/cgroup in the cell");
	_cleanup_close_ int dir = policy_open_checked(sys, "fs/cgroup", O_RDONLY | O_DIRECTORY, TMPFS_MAGIC);
	if (dir < 0)
		return error_set(err, -dir, "cannot open the cell's new /sys/fs/cgroup");
	for (; *v1; v1++)
		if ((r = show_v1(dir, *v1)) < 0)
			return error_set(err, -r, "cannot mount the run's cgroup (v1 %s) on /sys/fs/cgroup/%s in the cell", *v1, *v1);
	if (sys_mount_setattr_fd(dir, MOUNT_ATTR_RDONLY, 0) < 0)
		return error_set(err, errno, "cannot make /sys/fs/cgroup read-only in the cell");
	return 0;
}

/* ---- protected worktree paths ---- */

/* The path (as init sees it) of what fd is open on. */
static char *fd_path(int fd)
{
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	char buf[4096];
	ssize_t n = readlink(link, buf, sizeof buf - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return xstrdup(buf);
}

/* .git/hooks is created (empty, owned like .git) when .git exists without it, so that a job
 * cannot create it with a hook inside. In the worktree's directory as it was opened and
 * checked (its descriptor), never its host path looked up again: a link put on that path
 * meanwhile would have had root make the directory wherever it led. (Not through the cell's
 * idmapped mount of it: host root is no id of that mount, EOVERFLOW.) */
static void create_hooks_dir(const struct policy_ctx *s)
{
	if (s->worktree_fd <= 0)
		return;
	_cleanup_close_ int git = sys_openat2(s->worktree_fd, ".git", O_RDONLY | O_DIRECTORY, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
	struct stat st;
	if (git < 0 || fstat(git, &st) < 0)
		return;
	/* as open as .git, no more (init's umask is 0); given .git's owner through the directory
	 * just made, opened as one (a name changed in between is not followed to a file) */
	if (mkdirat(git, "hooks", st.st_mode & 0775) < 0)
		return;
	_cleanup_close_ int h = openat(git, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (h >= 0 && fchown(h, st.st_uid, st.st_gid) < 0)
		return;
}

struct target {
	char *rel;    /* symlink-free path below the cell's root, e.g. "src/app/.git/hooks" */
	bool leaf;    /* the protected path itself (read-only), or a directory on the way (pinned) */
};

static int add_target(struct target **v, size_t *n, const char *rel, bool leaf)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].rel, rel)) {
			(*v)[i].leaf |= leaf;
			return 0;
		}
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[(*n)++] = (struct target){ xstrdup(rel), leaf };
	return 0;
}

static int cmp_depth(const void *a, const void *b)
{
	const struct target *x = a, *y = b;
	size_t dx = 0, dy = 0;
	for (const char *p = x->rel; *p; p++)
		dx += *p == '/';
	for (const char *p = y->rel; *p; p++)
		dy += *p == '/';
	if (dx != dy)
		return dx < dy ? -1 : 1;
	return strcmp(x->rel, y->rel);
}

/* Resolve worktree/rel as the job would (symlinks stay inside the cell's root); when it lands
 * in the worktree, note it and every directory between the worktree and it. */
static int resolve_protected(const struct policy_ctx *s, int rootfd, const char *root, const char *rel,
			     struct target **v, size_t *n)
{
	_cleanup_free_ char *inside = xasprintf("%s/%s", s->worktree + 1, rel);
	_cleanup_close_ int fd = sys_openat2(rootfd, inside, O_PATH | O_NOFOLLOW, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	if (fd < 0)
		return 0;  /* not there: nothing to protect */
	_cleanup_free_ char *real = fd_path(fd);
	_cleanup_free_ char *work = xasprintf("%s%s/", root, s->worktree);
	size_t wl = strlen(work);
	/* elsewhere than the worktree (a symlink out of it): not a file the host runs from it */
	if (!real || strncmp(real, work, wl) != 0 || !real[wl])
		return 0;
	const char *below = real + strlen(root) + 1;  /* "<worktree without />/.git/hooks" */
	size_t wtl = strlen(s->worktree + 1);
	for (const char *p = below + wtl + 1; (p = strchr(p, '/')); p++) {
		_cleanup_free_ char *dir = strndup(below, (size_t)(p - below));
		add_target(v, n, dir, false);
	}
	return add_target(v, n, below, true);
}

int policy_protected_paths(const struct policy_ctx *s, int rootfd, const char *root,
			   int (*fn)(void *arg, const char *rel, bool leaf), void *arg)
{
	if (!s->worktree)
		return 0;   /* --work none */
	create_hooks_dir(s);
	struct target *v = NULL;
	size_t n = 0;
	for (const char *const *p = policy_default_protect; *p; p++)
		resolve_protected(s, rootfd, root, *p, &v, &n);
	for (size_t i = 0; i < s->policy->nprotect; i++)
		resolve_protected(s, rootfd, root, s->policy->protect[i], &v, &n);
	/* outer directories first: each becomes a mount point of its own (so it cannot be renamed
	 * away and replaced), then the protected paths go read-only on top */
	if (n)
		qsort(v, n, sizeof *v, cmp_depth);
	int rc = 0;
	for (int pass = 0; pass < 2 && rc == 0; pass++)
		for (size_t i = 0; i < n && rc == 0; i++)
			if (v[i].leaf == (pass == 1))
				rc = fn(arg, v[i].rel, v[i].leaf);
	for (size_t i = 0; i < n; i++)
		free(v[i].rel);
	free(v);
	return rc;
}

struct protect_ctx {
	int rootfd;
	struct error *err;
};

static int bind_protected(void *arg, const char *rel, bool leaf)
{
	struct protect_ctx *c = arg;
	_cleanup_close_ int fd = policy_open_checked(c->rootfd, rel, O_PATH, 0);
	if (fd < 0)
		return error_set(c->err, -fd, "cannot open /%s to protect it", rel);
	int r = bind_fd(fd, fd, leaf ? MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV : 0);
	if (r < 0)
		return error_set(c->err, -r, "cannot make /%s read-only in the cell", rel);
	return 0;
}

static int protect_worktree(const struct policy_ctx *s, int rootfd, const char *root, struct error *err)
{
	struct protect_ctx c = { rootfd, err };
	return policy_protected_paths(s, rootfd, root, bind_protected, &c);
}

int policy_build_root(const struct policy_ctx *s, const char *root, struct error *err)
{
	_cleanup_close_ int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return error_set(err, errno, "cannot open the cell's root %s", root);
	if (mask_kernel(s, rootfd, err) < 0 || protect_worktree(s, rootfd, root, err) < 0)
		return -EINVAL;
	return policy_landlock_prepare(s, root, err);
}
