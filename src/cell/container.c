/* SPDX-License-Identifier: Apache-2.0 */
/* container.c - the container driver: clone the cell's init into fresh namespaces, build
 * its root (an overlay of --rootfs, or the host's / read-only through overlays: hostroot.c),
 * /dev, /proc, /tmp, home and worktree, pivot_root, then start the job in a user namespace
 * of its own that owns nothing, and reap (pid 1).
 *
 * Root mode: the namespaces belong to the host's user namespace, so the job (in a child user
 * namespace, ids mapped to CELL_ROOT_ID_BASE+N) holds no capability over its mounts, network,
 * hostname or ipc, even as --user 0. Rootless: the first user namespace (the caller's uid
 * mapped) owns the namespaces and init; the job gets a nested one, again owning nothing. */
#include "cell/container.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif
#include <unistd.h>

#include "cell/contract.h"
#include "cell/executor.h"
#include "cell/hostroot.h"
#include "cell/mounts.h"
#include "cell/users.h"
#include "cgroup/cgroup.h"
#include "net/net.h"
#include "policy/policy.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/sys.h"
#include "util/words.h"

/* ---- what init tells the supervisor ---- */

static int report_fd = -1;

#define REPORT_MSG_MAX (4096 - sizeof(struct cell_report)) /* PIPE_BUF */

/* Append one report to buf (*n bytes used; room for sizeof(struct cell_report) +
 * REPORT_MSG_MAX more): the caller writes it, with what else it has to say, in one write
 * below PIPE_BUF (atomic, and one wake-up of the supervisor). */
static void report_put(char *buf, size_t *n, uint32_t type, int status, int errnum, const char *msg)
{
	struct cell_report r = { .type = type, .status = status, .errnum = errnum,
				 .len = msg ? (uint32_t)strlen(msg) : 0 };
	if (r.len > REPORT_MSG_MAX)
		r.len = REPORT_MSG_MAX;
	memcpy(buf + *n, &r, sizeof r);
	if (r.len)
		memcpy(buf + *n + sizeof r, msg, r.len);
	*n += sizeof r + r.len;
}

/* init's steps, for the record's timings (CELL_REPORT_TIMES, with the job's reaping) */
static int64_t root_built_ns, job_go_ns;

static void report(uint32_t type, int status, int errnum, const char *msg)
{
	char buf[sizeof(struct cell_report) + REPORT_MSG_MAX];
	size_t n = 0;
	report_put(buf, &n, type, status, errnum, msg);
	ssize_t w = write(report_fd, buf, n);
	(void)w;
}

/* Setup failed inside the cell: tell the supervisor (the message with the system's reason,
 * as error_set words it) and end init. */
static void __attribute__((noreturn)) die_status(int status, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = NULL;
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	char *full = NULL;
	if (m && errnum > 0 && asprintf(&full, "%s: %s", m, strerror(errnum)) >= 0)
		m = full;
	report(CELL_REPORT_ERROR, status, errnum, m);
	_exit(status);
}

#define die(errnum, ...) die_status(125, errnum, __VA_ARGS__)

/* ---- mounts ---- */

static char *at(const char *root, const char *path)
{
	return xasprintf("%s%s", root, path);
}

/* Paths below the cell's root are resolved inside it, the way the cell will see them: an
 * image's symlinks (an untrusted image may point /etc/group or /var at the host's files) stay
 * within the image, and nothing is read or created on the host through them. Everything is
 * done on descriptors; mount(2) gets their /proc/self/fd paths. */
static const char *cell_root;
static int cell_root_fd = -1;

/* open full (under cell_root: resolved in the root; else as it is) with flags; -1 + errno */
static int in_root(const char *full, int flags)
{
	size_t n = cell_root ? strlen(cell_root) : 0;
	if (cell_root_fd < 0 || strncmp(full, cell_root, n) || (full[n] && full[n] != '/'))
		return open(full, flags | O_CLOEXEC);
	const char *rel = full + n;
	while (*rel == '/')
		rel++;
	return sys_openat2(cell_root_fd, *rel ? rel : ".", (uint64_t)flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

/* A mount point directory made in directory dfd belongs to that directory's owner: one made
 * in the run's home (a --bind on ~/.cache/pip) leaves ~/.cache the run user's. */
static void mountpoint_owner(int dfd, const struct statx *st, const char *name)
{
	(void)!fchownat(dfd, name, st->stx_uid, st->stx_gid, AT_SYMLINK_NOFOLLOW);
}

/* The mounts of host directories in the cell (the worktree, each bind): no mount point is
 * made in them, it would be made in the host's directory. */
static uint64_t host_mnts[64];
static size_t n_host_mnts;

static void note_host_mount(int fd)
{
	struct statx st;
	if (n_host_mnts < sizeof host_mnts / sizeof host_mnts[0] &&
	    statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &st) == 0 && (st.stx_mask & STATX_MNT_ID))
		host_mnts[n_host_mnts++] = st.stx_mnt_id;
}

static bool in_host_mount(const struct statx *st)
{
	for (size_t i = 0; (st->stx_mask & STATX_MNT_ID) && i < n_host_mnts; i++)
		if (host_mnts[i] == st->stx_mnt_id)
			return true;
	return false;
}

/* full as the cell sees it (without the root's path) */
static const char *in_cell(const char *full)
{
	size_t n = cell_root ? strlen(cell_root) : 0;
	return n && !strncmp(full, cell_root, n) && full[n] == '/' ? full + n : full;
}

/* An O_PATH descriptor of target (a directory, or an empty file when file is set), created
 * inside the root where it is missing (overlay, tmpfs); a read-only host / must have it. */
static int ensure_mountpoint(const char *target, bool file)
{
	int fd = in_root(target, O_PATH);
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
	int dfd = in_root(copy, O_RDONLY | O_DIRECTORY);
	if (dfd < 0 && errno == ENOENT) {
		int pfd = ensure_mountpoint(copy, false);
		dfd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(pfd);
	}
	if (dfd < 0)
		die(errno, "cannot open %s", copy);
	/* its mode: its parent's, never more than rwxr-xr-x (init's umask is 0: the caller's
	 * 077 made them closed to the job; a point made on the host, in a bind of the caller's
	 * directory, is no more open than that directory) */
	struct statx pst;
	if (statx(dfd, "", AT_EMPTY_PATH, STATX_MODE | STATX_UID | STATX_GID | STATX_MNT_ID, &pst) < 0)
		die(errno, "cannot open %s", copy);
	/* only in the cell's own file systems (its tmpfs, the overlays of the host's / or of an
	 * image): in the worktree or a bind it would be made in the host's directory */
	if (in_host_mount(&pst))
		die(0, "cannot make the mount point %s: %s is the host's directory (the worktree or a bind), where warren makes "
		       "nothing; make %s there first, or choose a destination that exists or lies outside it",
		    in_cell(target), in_cell(copy), last);
	bool made = false;
	if (file) {
		int f = openat(dfd, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, pst.stx_mode & 0644);
		if (f < 0 && errno != EEXIST)
			die(errno, "cannot create the mount point %s", target);
		made = f >= 0;
		closep(&f);
	} else if (mkdirat(dfd, last, pst.stx_mode & 0755) == 0) {
		mountpoint_owner(dfd, &pst, last);
		made = true;
	} else if (errno != EEXIST) {
		die(errno, "cannot create the mount point %s", target);
	}
	/* what was just made here is what the path leads to; what was there already (an
	 * image's link to nowhere) is resolved once more, in the root */
	fd = made ? openat(dfd, last, O_PATH | O_NOFOLLOW | O_CLOEXEC) : in_root(target, O_PATH);
	close(dfd);
	free(copy);
out:
	if (fd < 0)
		die(errno, "cannot use the mount point %s (in an image: is it, or a directory on its way, a symlink to nowhere inside the image?)", target);
	return fd;
}

static void do_mount_fd(const char *src, int fd, const char *what, const char *type, unsigned long flags,
			const char *data)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	if (mount(src, p, type, flags, data) < 0)
		die(errno, "cannot mount %s on %s", type ? type : src, what);
}

static void do_mount(const char *src, const char *target, const char *type, unsigned long flags,
		     const char *data)
{
	int fd = ensure_mountpoint(target, false);
	do_mount_fd(src, fd, target, type, flags, data);
	close(fd);
}

static void bind_path(const char *src, const char *target, bool rdonly, bool file)
{
	int sfd = in_root(src, O_PATH);
	if (sfd < 0)
		die(errno, "cannot open %s", src);
	char sp[64];
	snprintf(sp, sizeof sp, "/proc/self/fd/%d", sfd);
	int fd = ensure_mountpoint(target, file);
	do_mount_fd(sp, fd, target, NULL, MS_BIND | MS_REC, NULL);
	close(fd);
	close(sfd);
	/* the new mount, as the path now resolves */
	fd = in_root(target, O_PATH);
	if (fd < 0)
		die(errno, "cannot open %s", target);
	struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (rdonly ? MOUNT_ATTR_RDONLY : 0) };
	if (sys_mount_setattr(fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a) < 0)
		die(errno, "cannot restrict the bind mount %s", target);
	close(fd);
}

static void tmpfs(const char *target, const char *opts, unsigned long flags)
{
	do_mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV | flags, opts);
}

/* A directory descriptor of dir (under the root: resolved in it) to create files in. */
static int dir_in_root(const char *dir)
{
	int fd = in_root(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		die(errno, "cannot open %s", dir);
	return fd;
}

/* Write a new file name in directory fd dfd (never through a link). */
static void write_new_at(int dfd, const char *name, const char *txt, const char *what)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	size_t len = strlen(txt);
	if (fd < 0 || write(fd, txt, len) != (ssize_t)len)
		die(errno, "cannot write %s", what);
	close(fd);
}

/* Write a map (uid_map, gid_map, setgroups) of pid under proc. */
static void write_map(const char *proc, pid_t pid, const char *file, const char *line)
{
	char path[128];
	if (pid)
		snprintf(path, sizeof path, "%s/%d/%s", proc, (int)pid, file);
	else
		snprintf(path, sizeof path, "%s/self/%s", proc, file);
	int r = write_file(path, line, strlen(line));
	if (r < 0 && strcmp(file, "setgroups") != 0)
		die(-r, "cannot write %s (%.*s)", path, (int)strcspn(line, "\n"), line);
}

/* The idmap helper's life: hold nothing of the supervisor's (the job's output pipes above all),
 * then wait for the end of its pipe. It shares the supervisor's memory (CLONE_VM): only raw
 * calls here (sys_raw: not even errno is written), on a stack of its own, not instrumented by
 * the sanitizers (their state is the supervisor's thread's). */
static int __attribute__((no_sanitize("address", "undefined"))) idmap_helper_main(void *arg)
{
	int p = (int)(intptr_t)arg;
	if (p > 0)
		sys_raw(SYS_close_range, 0, (unsigned)p - 1, 0);
	sys_raw(SYS_close_range, (unsigned)p + 1, ~0U, 0);
	char c;
	long r = sys_raw(SYS_read, p, &c, 1);
	sys_raw(SYS_exit, r < 0, 0, 0);
	return 0;
}

#define IDMAP_HELPER_STACK (64 * 1024)

/* A helper's stack unmapped. In the sanitizer build its frames left their redzones poisoned
 * (a helper ends by exit, never returning), and the address sanitizer does not clear them on
 * munmap: SQLite's next mapping of the history's -shm at that address then read as a
 * "stack-buffer-underflow" (a run's end folding the history, 1 run in ~200). */
static void helper_stack_free(void *stack)
{
#ifdef __SANITIZE_ADDRESS__
	__asan_unpoison_memory_region(stack, IDMAP_HELPER_STACK);
#endif
	munmap(stack, IDMAP_HELPER_STACK);
}

/* A helper process (idmaps, the network namespace): fn(arg) cloned with flags and the
 * supervisor's memory (CLONE_VM) on a stack of its own, written to *helper; its pid, or -1
 * (nothing made). */
static pid_t helper_clone(int (*fn)(void *), void *arg, int flags, struct cell_helper *helper)
{
	void *stack = mmap(NULL, IDMAP_HELPER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	pid_t pid = clone(fn, (char *)stack + IDMAP_HELPER_STACK, CLONE_VM | SIGCHLD | flags, arg);
	if (pid < 0)
		munmap(stack, IDMAP_HELPER_STACK);
	else
		*helper = (struct cell_helper){ pid, stack };
	return pid;
}

/* A user namespace that maps on-disk ids [from, from+n) to host ids [to, to+n): the idmap of
 * an idmapped mount. Made by the supervisor (host pid namespace, host /proc) before the cell.
 * Its process need only exist while the maps are written and the namespace opened: it is told
 * to exit then, and reaped later (cell_reap_ended_helpers, or at the end cell_reap_helpers:
 * *helper), never waited for here: waiting for
 * another process to be scheduled cost each run 1-8 ms on a loaded machine. It is cloned with
 * the supervisor's memory (CLONE_VM): a copy of that (page tables, and then a copy-on-write
 * fault for each page the supervisor writes next) cost more than the rest of it. */
static int idmap_userns(uid_t from_u, uid_t to_u, gid_t from_g, gid_t to_g, unsigned n, struct cell_helper *helper)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = helper_clone(idmap_helper_main, (void *)(intptr_t)p[0], CLONE_NEWUSER, helper);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	char line[64], path[128];
	int fd = -1;
	snprintf(line, sizeof line, "%u %u %u\n", from_u, to_u, n);
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
	if (write_file(path, line, strlen(line)) == 0) {
		snprintf(line, sizeof line, "%u %u %u\n", from_g, to_g, n);
		snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
		if (write_file(path, line, strlen(line)) == 0) {
			snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
	}
	close(p[1]);
	return fd;
}

/* Clone the tree at path as a detached mount, idmapped through userns fd ns, with what is
 * mounted below it (a bind without its submounts would show, and let the job write, what the
 * host hides under them). With whole, every mount of it idmapped (else, or when a submount's
 * file system cannot be, the top one alone: the submounts' files keep their ids). -1 when the
 * kernel or the top's file system cannot. */
static int idmapped_tree(int dfd, const char *path, int ns, bool whole_ok)
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

static int idmap_ns_work = -1, idmap_ns_image = -1;
/* init: -1, or its end of the socket over which the network namespace made for the cell by
 * the supervisor's helper comes (container_prepare; enter_netns) */
static int cell_netns_sock = -1;

/* A new slot (-1) in c's list of helper processes (idmaps; a VM's relay). */
struct cell_helper *cell_helper_slot(struct cell *c)
{
	c->helpers = xrealloc(c->helpers, (c->n_helpers + 1) * sizeof *c->helpers);
	c->helpers[c->n_helpers] = (struct cell_helper){ -1, NULL };
	return &c->helpers[c->n_helpers++];
}

/* Root mode: the userns of an idmap that makes the owner of what fd is open on (the worktree,
 * a bind's source) the run user inside the cell, or -1 when it is already or there is none.
 * A root-owned source is mapped only when writable (map_root): a read-only bind of root's
 * files keeps them root's, as the host's / shows them. */

static int owner_idmap(const struct cell_spec *s, int fd, bool map_root, struct cell *c)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || (st.st_uid == spec_host_uid(s) && st.st_gid == spec_host_gid(s)))
		return -1;
	if (st.st_uid == 0 && !map_root)
		return -1;
	return idmap_userns(st.st_uid, spec_host_uid(s), st.st_gid, spec_host_gid(s), 1, cell_helper_slot(c));
}

/* Where the scratch parts live: the run directory, or with --scratch a size-limited tmpfs
 * that init mounts over the run directory itself, in the cell's mount namespace only: the
 * parts and the root's mount point keep their paths, private to the cell and gone with it,
 * and nothing of them is made (nor later removed) on the host's disk, where each directory
 * costs its block (ext4 mounted with discard frees a block by a discard the rmdir waits for).
 * The record beside them stays the supervisor's, unseen by the cell. */
static char *scratch_base;
static int scratch_fd = -1;
/* the umask of warren's caller: init's is 0 (init_main), the job's this */
static mode_t caller_umask = 022;

/* A warm cell's scratch is made at its take, here inside the cell, bound on its places, and
 * this mount let go of before the job starts. */
#define WARM_SCRATCH_DIR   "scratch"
#define WARM_SCRATCH_PATH  "/run/.warren/" WARM_SCRATCH_DIR

static char *scratch_part(const char *part)
{
	return xasprintf("%s/%s", scratch_base, part);
}

/* The scratch parts made in directory fd (the tmpfs of --scratch, or of a warm cell's take),
 * with their owners: in root mode init is host root, so they get their host owners. run: the
 * parts the run writes (tmp, var-tmp, shm, home); base: the overlay's and the root's. */
static void make_scratch_parts(const struct cell_spec *s, int fd, const char *where, bool run, bool base)
{
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
			die(errno, "cannot prepare %s/%s", where, parts[i].name);
	}
}

static void mount_scratch(const struct cell_spec *s)
{
	scratch_base = xstrdup(s->rundir);
	if (!s->limits.scratch && !s->warm)
		return;
	/* a warm cell's base holds only the overlay's upper and the mount points: what the run
	 * writes is a tmpfs of its own, made when the cell is taken (take_scratch) */
	_cleanup_free_ char *opts = s->limits.scratch && !s->warm
		? xasprintf("size=%llu,mode=0755", (unsigned long long)s->limits.scratch) : xstrdup("mode=0755");
	do_mount("tmpfs", scratch_base, "tmpfs", MS_NOSUID | MS_NODEV, opts);
	int fd = open(scratch_base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		die(errno, "cannot open %s", scratch_base);
	make_scratch_parts(s, fd, scratch_base, !s->warm, true);
	if (s->warm)
		close(fd);
	else
		scratch_fd = fd;
}

/* The host's path (opened and checked before as checked_fd) mounted on the mount point fd
 * (resolved and checked once by the caller: never looked up again by its path, which a process
 * writing into a host directory on the way could have changed meanwhile), read-only when
 * rdonly; in root mode through an idmapped mount (userns fd idmap, or -1) so that its owner is
 * the run user inside the cell, else (rootless, or a file system that cannot be idmapped) a
 * copy of the mount with what is mounted below it, as a recursive bind. The tree is made
 * detached, restricted, then put in place: no moment on the mount point without its
 * restrictions. The worktree and every --bind go through here. Returns the mount put in place
 * (an O_PATH descriptor of its root). */
static int mount_checked(const char *path, int checked_fd, int fd, const char *target, bool rdonly, int idmap,
			 const char *what)
{
	/* the directory that was checked, not whatever its path names now: open it again in
	 * this mount namespace without following links, and it must be the same inode */
	_cleanup_close_ int wfd = sys_openat2(AT_FDCWD, path, O_PATH, RESOLVE_NO_SYMLINKS);
	struct stat a, b;
	if (wfd < 0 || fstat(wfd, &a) < 0 || fstat(checked_fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		die(wfd < 0 ? errno : 0, "%s %s changed while the cell was being made (a directory on its way was replaced); run again", what, path);
	/* a source that is on a kernel's file system, or has one mounted below it (a chroot's
	 * /proc in a worktree), would show the host's processes or devices in the cell: refused
	 * (from the mount table hostroot read) */
	struct error kerr = { 0 };
	if (hostroot_check_source(what, path, wfd, false, &kerr) < 0)
		die(0, "%s", kerr.msg);
	/* the owner's files are the run user's in every mount below the source, unless the owner
	 * is root: then in the source's own file system only (a root-owned worktree holding a
	 * bind of a system directory does not give the job that directory) */
	int t = idmapped_tree(wfd, "", idmap, a.st_uid != 0);
	if (t < 0) {
		t = sys_open_tree(wfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
		if (t < 0 || sys_mount_setattr_fd(t, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, AT_RECURSIVE) < 0)
			die(errno, "cannot bind %s on %s", path, target);
	}
	if (rdonly && sys_mount_setattr_fd(t, MOUNT_ATTR_RDONLY, AT_RECURSIVE) < 0)
		die(errno, "cannot make the bind of %s on %s read-only", path, target);
	if (sys_move_mount_fd(t, fd) < 0)
		die(errno, "cannot bind %s on %s", path, target);
	note_host_mount(t);
	return t;
}

/* The worktree on target; returns its mount (see mount_checked). */
static int mount_worktree(const struct cell_spec *s, const char *target)
{
	struct stat st;
	if (fstat(s->worktree_fd, &st) < 0)
		die(errno, "cannot stat the worktree %s", s->worktree);
	_cleanup_close_ int fd = ensure_mountpoint(target, !S_ISDIR(st.st_mode));
	return mount_checked(s->worktree, s->worktree_fd, fd, target, s->worktree_ro, idmap_ns_work, "the worktree");
}

static int *idmap_ns_mounts;   /* per entry of s->mounts: -1 or the userns of its idmap */
static size_t n_idmap_mounts;

static void close_idmap_mounts(void)
{
	for (size_t i = 0; idmap_ns_mounts && i < n_idmap_mounts; i++)
		closep(&idmap_ns_mounts[i]);
	free(idmap_ns_mounts);
	idmap_ns_mounts = NULL;
}

/* The spec's extra mounts (--bind, --ro-bind, --externals), in order. Each destination is
 * resolved inside the cell's root (an image's symlinks stay in it) and created there where it
 * is missing (overlay, tmpfs: never on the host); where it resolved to is checked again, so
 * that a symlink of the image cannot lead a mount onto /proc, /tmp or the worktree. */
static void mount_extra(const struct cell_spec *s, const char *root)
{
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct cell_mount *m = &s->mounts[i];
		struct stat st;
		if (fstat(m->fd, &st) < 0)
			die(errno, "cannot stat the bind source %s", m->source);
		_cleanup_free_ char *target = at(root, m->destination);
		_cleanup_close_ int fd = ensure_mountpoint(target, !S_ISDIR(st.st_mode));
		char link[64], real[4096];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, real, sizeof real - 1);
		size_t rl = strlen(root);
		if (n < 0 || (size_t)n < rl || strncmp(real, root, rl) || (real[rl] && real[rl] != '/'))
			die(n < 0 ? errno : 0, "cannot place the bind of %s on %s in the cell", m->source, m->destination);
		real[n] = '\0';
		const char *inside = real[rl] ? real + rl : "/";
		const char *why = mount_dst_refused(inside, s);
		if (why)
			die(0, "the bind of %s on %s lands on %s in the cell: %s", m->source, m->destination, inside, why);
		switch (m->kind) {
		case CELL_MOUNT_BIND:
			close(mount_checked(m->source, m->fd, fd, target, m->readonly, idmap_ns_mounts ? idmap_ns_mounts[i] : -1,
					    "the bind source"));
			break;
		}
	}
}

/* Bind the scratch part on target; a warm cell only makes the mount point: its scratch is
 * mounted there when it is taken (take_scratch). */
static void scratch_bind(const struct cell_spec *s, const char *part, const char *target)
{
	if (s->warm) {
		close(ensure_mountpoint(target, false));
		return;
	}
	_cleanup_free_ char *src = scratch_part(part);
	bind_path(src, target, false, false);
}

static void mount_dev(const struct cell_spec *s, const char *root)
{
	_cleanup_free_ char *dev = at(root, "/dev");
	tmpfs(dev, "mode=0755,size=512k", MS_NOEXEC);
	/* the tmpfs just mounted is empty and init's own: its mount points are made in it
	 * directly, no path of the image's on the way */
	int dfd = dir_in_root(dev);
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		_cleanup_free_ char *host = xasprintf("/dev/%s", nodes[i]);
		_cleanup_free_ char *t = xasprintf("%s/%s", dev, nodes[i]);
		int fd = openat(dfd, nodes[i], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			die(errno, "cannot create the mount point %s", t);
		do_mount_fd(host, fd, t, NULL, MS_BIND, NULL);
		close(fd);
	}
	_cleanup_free_ char *pts = xasprintf("%s/pts", dev);
	int pfd = mkdirat(dfd, "pts", 0755) < 0 ? -1 : openat(dfd, "pts", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		die(errno, "cannot create the mount point %s", pts);
	do_mount_fd("devpts", pfd, pts, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620");
	close(pfd);
	/* /dev/shm is scratch like /tmp: within the scratch limit, reclaimed with it */
	_cleanup_free_ char *shm = xasprintf("%s/shm", dev);
	if (mkdirat(dfd, "shm", 0755) < 0)
		die(errno, "cannot create the mount point %s", shm);
	scratch_bind(s, RUN_SHM_DIR, shm);
	static const char *const links[][2] = {
		{ "pts/ptmx", "ptmx" }, { "/proc/self/fd", "fd" }, { "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" }, { "/proc/self/fd/2", "stderr" },
	};
	for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
		if (symlinkat(links[i][0], dfd, links[i][1]) < 0)
			die(errno, "cannot create %s/%s", dev, links[i][1]);
	struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
	if (sys_mount_setattr(dfd, "", AT_EMPTY_PATH, &a) < 0)
		die(errno, "cannot make %s read-only", dev);
	close(dfd);
}

static void mount_root(const struct cell_spec *s, const char *root)
{
	if (s->rootfs) {
		/* the root the gate judged, and no other: opened without a link on the way and
		 * compared, then used by its descriptor (a path component swapped for a symlink to /
		 * since the check would otherwise give the cell the host's /) */
		_cleanup_close_ int rfd = spec_root_open(s);
		if (rfd < 0)
			die(errno, "the root %s changed since it was checked (a path on the way was replaced); run again", s->rootfs);
		_cleanup_free_ char *by_fd = xasprintf("/proc/self/fd/%d", rfd);
		/* root mode: the image's own ids are the cell's (its root files belong to cell root) */
		const char *lower = by_fd;
		_cleanup_free_ char *idmapped = xasprintf("%s/" RUN_LOWER_DIR, s->rundir);
		_cleanup_close_ int t = idmapped_tree(rfd, "", idmap_ns_image, false);
		if (t >= 0 && sys_move_mount(t, "", AT_FDCWD, idmapped, MOVE_MOUNT_F_EMPTY_PATH) == 0)
			lower = idmapped;
		_cleanup_free_ char *opts = xasprintf("lowerdir=%s,upperdir=%s/" RUN_UPPER_DIR ",workdir=%s/" RUN_WORK_DIR "%s",
						      lower, scratch_base, scratch_base, s->rootless ? ",userxattr" : "");
		if (mount("overlay", root, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
			die(errno, "cannot mount an overlay of --rootfs %s on %s (is overlayfs available? see 'warren selfcheck')",
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
		die(0, "%s", err.msg);
}

static void keep_worktree(const struct cell_spec *s, int mnt);
static void enter_netns(void);

/* The cell's /sys: a sysfs of its own, read-only, made once init is in the cell's network
 * namespace, so that what it shows of the network (class/net, devices/virtual/net) is the
 * cell's: the host's /sys would list the host's interfaces, their addresses and counters
 * (and the host's eth0 where the cell has its own). The kernel's files are masked and the
 * run's cgroup placed on it later (policy). Rootless, the kernel gives a new sysfs only when
 * the host's /sys is fully visible in the cell's mount namespace (no mount of the host's
 * hides a part of it); else the host's /sys is bound, as before (its class/net is the
 * host's). With --no-sys there is none: the mask hides the mount point. */
static void mount_sys(const struct cell_spec *s)
{
	if (s->policy.no_sys)
		return;
	/* the root's own sys directory, made where missing: not through an image's symlink (the
	 * masks below open /sys without following one: they would find none, and the sysfs
	 * where it led would be unmasked) */
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 2; tries++) {
		fd = sys_openat2(cell_root_fd, "sys", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH);
		if (fd >= 0 || errno != ENOENT || (mkdirat(cell_root_fd, "sys", 0555) < 0 && errno != EEXIST))
			break;
	}
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		die(0, "the image's /sys is not a directory (a symlink or a file): the cell's own sysfs is mounted there; "
		       "make it an empty directory in the image");
	if (fd < 0)
		die(errno, "cannot open the cell's /sys");
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	if (mount("sysfs", p, "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		if (!s->rootless || (errno != EPERM && errno != EACCES))
			die(errno, "cannot mount a sysfs on the cell's /sys");
		/* with what is mounted in it (locked in: the kernel will not part them), read-only */
		_cleanup_close_ int t = sys_open_tree(AT_FDCWD, "/sys", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC };
		if (t < 0 || sys_mount_setattr(t, "", AT_EMPTY_PATH | AT_RECURSIVE, &a) < 0 ||
		    sys_move_mount(t, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
			die(errno, "cannot bind the host's /sys on the cell's /sys (the kernel refused a sysfs of the cell's own)");
	}
	close(fd);
}

/* Build the whole file system of the cell under <rundir>/root and pivot into it. */
static void build_root(const struct cell_spec *s)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		die(errno, "cannot make the cell's mounts private");
	_cleanup_free_ char *root = xasprintf("%s/" RUN_ROOT_DIR, s->rundir);
	mount_scratch(s);
	mount_root(s, root);
	cell_root = root;
	cell_root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cell_root_fd < 0)
		die(errno, "cannot open %s", root);

	_cleanup_free_ char *proc = at(root, "/proc");
	do_mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_dev(s, root);

	_cleanup_free_ char *tmp = at(root, CELL_TMP_PATH);
	scratch_bind(s, RUN_TMP_DIR, tmp);
	_cleanup_free_ char *vartmp = at(root, CELL_VARTMP_PATH);
	scratch_bind(s, RUN_VARTMP_DIR, vartmp);

	/* /run: empty (the host's sockets, e.g. docker.sock, stay out of reach) */
	_cleanup_free_ char *run = at(root, "/run");
	tmpfs(run, "mode=0755,size=1m", MS_NOEXEC);

	/* /home: only the run user's home, which is the run's home/ (an image's own /home
	 * entries are hidden too: they are not the run's) */
	_cleanup_free_ char *home_parent = at(root, CELL_HOME_PARENT);
	tmpfs(home_parent, "mode=0755,size=1m", MS_NOEXEC);
	_cleanup_free_ char *home = at(root, s->home);
	scratch_bind(s, RUN_HOME_DIR, home);

	/* the run user's passwd and group entries: written into the cell's /run (a tmpfs that
	 * dies with the cell, nothing on the host's disk), bound read-only over the image's */
	static const char *const dbs[] = { "passwd", "group" };
	_cleanup_free_ char *dbdir = xasprintf("%s/.warren", run);
	int rfd = dir_in_root(run);
	if (mkdirat(rfd, ".warren", 0755) < 0)
		die(errno, "cannot create %s", dbdir);
	if (s->warm && mkdirat(rfd, ".warren/" WARM_SCRATCH_DIR, 0700) < 0)
		die(errno, "cannot create %s/" WARM_SCRATCH_DIR, dbdir);
	close(rfd);
	int dbfd = dir_in_root(dbdir);
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *t = xasprintf("%s/etc/%s", root, dbs[i]);
		_cleanup_free_ char *src = xasprintf("%s/%s", dbdir, dbs[i]);
		_cleanup_free_ char *txt = users_db(s, i == 1);
		if (!txt)
			die(errno, "cannot build %s", src);
		write_new_at(dbfd, dbs[i], txt, src);
		/* root of the cell owns it */
		if (!s->rootless && fchownat(dbfd, dbs[i], s->id_base, s->id_base, AT_SYMLINK_NOFOLLOW) < 0)
			die(errno, "cannot chown %s", src);
		bind_path(src, t, true, true);
	}
	/* --net nat|allow: resolv.conf names warren's resolver on the gateway (none+publish: no
	 * resolver); hosts has localhost and the run's hostname (net/net.h) */
	for (int i = 0; s->net.mode != NET_NONE && i < 2; i++) {
		const char *name = i ? "hosts" : "resolv.conf";
		_cleanup_free_ char *t = xasprintf("%s/etc/%s", root, name);
		_cleanup_free_ char *src = xasprintf("%s/%s", dbdir, name);
		_cleanup_free_ char *txt = net_cell_file(s->net.mode, spec_hostname(s), i);
		if (!txt)
			die(errno, "cannot build %s", src);
		write_new_at(dbfd, name, txt, src);
		bind_path(src, t, true, true);
	}
	close(dbfd);

	_cleanup_close_ int work_mnt = -1;
	if (s->worktree) {
		_cleanup_free_ char *work = at(root, s->worktree);
		work_mnt = mount_worktree(s, work);
	}

	/* the state directory (other runs' scratch and records) is hidden, also when it lies
	 * inside the worktree */
	_cleanup_free_ char *state = at(root, s->statedir);
	int sfd = in_root(state, O_RDONLY | O_DIRECTORY);
	if (sfd >= 0) {
		close(sfd);
		tmpfs(state, "mode=0755,size=4k", MS_RDONLY | MS_NOEXEC);
	}
	mount_extra(s, root);
	/* the network namespace, made meanwhile by the supervisor's helper, before /sys */
	enter_netns();
	mount_sys(s);

	/* kernel files masked, /proc/sys read-only, .git/hooks and --protect read-only; the
	 * Landlock ruleset the job enters */
	struct error perr = { 0 };
	struct policy_ctx pc = spec_policy_ctx(s);
	if (policy_build_root(&pc, root, &perr) < 0)
		die(0, "%s", perr.msg);
	/* a warm cell's worktree below /tmp: its mount kept for the take, with what was mounted
	 * on it since (.git's guards, a hidden state directory) */
	keep_worktree(s, work_mnt);
	/* an OCI bundle's root.readonly: the image's overlay read-only, the cell's own parts
	 * mounted on it (/tmp, home, /dev, /proc, /run, binds) as they are */
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	if (s->root_ro && s->rootfs && sys_mount_setattr(cell_root_fd, "", AT_EMPTY_PATH, &ro) < 0)
		die(errno, "cannot make the cell's root read-only");

	if (chdir(root) < 0)
		die(errno, "cannot enter %s", root);
	if (sys_pivot_root(".", ".") < 0)
		die(errno, "cannot pivot_root into %s", root);
	if (umount2(".", MNT_DETACH) < 0)
		die(errno, "cannot detach the old root");
	if (chdir("/") < 0)
		die(errno, "cannot enter the new root");
	/* paths are the cell's own from here on (a warm cell's take mounts more) */
	cell_root = NULL;
	closep(&cell_root_fd);
}

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
static void loopback_up(void)
{
	if (lo_up() < 0)
		die(errno, "cannot bring up the loopback interface");
	net_open_low_ports();
}

/* The run's cgroup, alone and read-only, at /sys/fs/cgroup, in a cgroup namespace rooted at
 * it: on v1 init moved itself there after the clone, so the namespace the clone made is
 * rooted at the supervisor's groups. Rootless runs have none: /sys/fs/cgroup stays empty. */
static void show_cgroup(const struct cgroup *cg)
{
	if (!cg || cg->kind == CGROUP_NONE)
		return;
	if (unshare(CLONE_NEWCGROUP) < 0)
		die(errno, "cannot root the cell's cgroup namespace at the run's cgroup");
	char *v1[4] = { NULL };
	if (cg->kind == CGROUP_V1 && !cgroup_v1_hierarchies(cg, v1))
		return;
	struct error err = { 0 };
	int r = policy_show_cgroup(cg->kind == CGROUP_V1 ? (const char *const *)v1 : NULL, &err);
	for (char **h = v1; *h; h++)
		free(*h);
	if (r < 0)
		die(0, "%s", err.msg);
}

/* ---- the job ---- */

/* A warm cell's job is made before its run comes and waits, set up to its last step, for
 * init to tell it its take over this pipe: 'x' the executor, 'd' a plain command. */
static int warm_take_r = -1, warm_take_w = -1;
/* init's end of the supervisor's go pipe, on which its kill comes (init_loop): not the job's,
 * which closes it first thing (the executor never execs: CLOEXEC alone would leave it there) */
static int init_go = -1;

/* A plain command's job (a warm cell's take said 'd', or a cold start's spec says direct): its
 * EXEC_START is on the control socket, and it is started here as the job itself, with the
 * cwd, argv, env and streams the executor would give it (cell/executor.h), without the
 * executor. */
static void __attribute__((noreturn)) exec_direct(const struct cell_io *io)
{
	char *buf = xmalloc(EXEC_MSG_MAX), *cwd;
	char **argv, **env;
	int fds[2];
	ssize_t n = exec_msg_recv(io->control, buf, fds);
	struct exec_hdr h;
	if (n < (ssize_t)sizeof h || fds[0] < 0)
		die(n < 0 ? errno : EPROTO, "cannot receive the job's command");
	memcpy(&h, buf, sizeof h);
	if (h.type != EXEC_START || exec_start_parse(&h, buf + sizeof h, (size_t)n - sizeof h, &cwd, &argv, &env) < 0)
		die(EPROTO, "the job's command is malformed");
	if (dup2(fds[0], 1) < 0 || dup2(fds[1], 2) < 0)
		die(errno, "cannot set up the job's standard streams");
	executor_exec(cwd, argv, env);
}

/* The warm cell's job, its take come: the executor's (returns), or a plain command's. */
static void warm_job_take(const struct cell_io *io)
{
	char how;
	if (read(warm_take_r, &how, 1) != 1)
		_exit(125);
	if (how == 'd')
		exec_direct(io);
}

/* execve argv[0], searching the cell's PATH; reports 127/126 like a shell when it cannot. */
static void __attribute__((noreturn)) exec_job(const struct cell_spec *s)
{
	int status;
	char *why = exec_failure(s->argv, s->env, exec_search(s->argv, s->env), &status);
	die_status(status, 0, "%s", why);
}

/* Every signal the job's process ignores or catches (what init, the supervisor and warren's
 * caller set: nohup, a shell's background job) back to its default action: those that
 * /proc/self/status lists (SigIgn, SigCgt), not one call for each of the 64 (62 system calls
 * of a cold run's job); all of them when it cannot be read. Through the system call, not
 * signal(): glibc refuses its own two (32 and 33), which a job of another C library may use. */
static void signal_default(int sig)
{
	struct { void (*handler)(int); unsigned long flags; void (*restorer)(void); uint64_t mask; } ka = { SIG_DFL, 0, NULL, 0 };
	syscall(SYS_rt_sigaction, sig, &ka, NULL, sizeof ka.mask);
}

static void signals_default(void)
{
	uint64_t set = ~0ULL;
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0) {
		buf[n] = '\0';
		const char *ign = strstr(buf, "\nSigIgn:\t"), *cgt = strstr(buf, "\nSigCgt:\t");
		if (ign && cgt)
			set = strtoull(ign + 9, NULL, 16) | strtoull(cgt + 9, NULL, 16);
	}
	for (int sig = 1; sig < NSIG; sig++)
		if ((set & (1ULL << (sig - 1))) && sig != SIGKILL && sig != SIGSTOP)
			signal_default(sig);
}

static void drop_bounding_caps(void)
{
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
			break;
}

static void __attribute__((noreturn)) job_main(const struct cell_spec *s, const struct cell_io *io, int go)
{
	closep(&init_go);
	char c;
	if (read(go, &c, 1) != 1)
		_exit(125);
	close(go);
	umask(s->has_umask ? s->job_umask : caller_umask);
	closep(&warm_take_w);
	sigset_t none;
	sigemptyset(&none);
	signals_default();
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() < 0)
		die(errno, "setsid");
	if (io->console >= 0 && ioctl(io->in, TIOCSCTTY, 0) < 0)
		die(errno, "cannot give the job its terminal");
	int fds[3] = { io->in, io->out, io->err };
	for (int i = 0; i < 3; i++) {
		/* a stream that is already at its number must lose CLOEXEC, dup2 would keep it */
		if (fds[i] == i) {
			fcntl(i, F_SETFD, 0);
		} else if (dup2(fds[i], i) < 0) {
			die(errno, "cannot set up the job's standard streams");
		}
	}
	if (setgroups(0, NULL) < 0 && errno != EPERM)
		die(errno, "setgroups");
	if (setresgid(s->gid, s->gid, s->gid) < 0)
		die(errno, "cannot become gid %u in the cell", (unsigned)s->gid);
	if (s->uid != 0)
		drop_bounding_caps();
	if (setresuid(s->uid, s->uid, s->uid) < 0)
		die(errno, "cannot become uid %u in the cell", (unsigned)s->uid);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die(errno, "cannot set no_new_privs");
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (chdir(spec_cwd(s)) < 0)
		die(errno, s->workdir ? "--workdir %s: cannot enter it in the cell (it must exist there: a directory of the image, the host's /, the worktree or a bind)"
				      : "cannot enter the working directory %s in the cell", spec_cwd(s));
	/* nothing of warren's leaks into the job: every fd but 0-2 and the report is closed */
	close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
	/* rlimits, capabilities, Landlock, seccomp: for the job and for the executor's steps */
	struct error perr = { 0 };
	struct policy_ctx pc = spec_policy_ctx(s);
	if (policy_apply_job(&pc, io->watch, &perr) < 0)
		die(0, "%s", perr.msg);
	if (warm_take_r >= 0)
		warm_job_take(io);
	else if (s->direct && io->control >= 0)
		exec_direct(io);
	if (io->control >= 0)
		executor_main(s, io->control);
	exec_job(s);
}

/* Start the job in a user namespace of its own, write its id maps, let it go. */
static pid_t start_job(const struct cell_spec *s, const struct cell_io *io)
{
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		die(errno, "pipe");
	struct clone_args a = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
	pid_t pid = sys_clone3(&a);
	if (pid < 0)
		die(errno, "cannot create the job's user namespace");
	if (pid == 0) {
		close(go[1]);
		job_main(s, io, go[0]);
	}
	close(go[0]);
	char line[64];
	if (s->rootless) {
		snprintf(line, sizeof line, "%u %u 1\n", (unsigned)s->uid, (unsigned)s->uid);
		write_map("/proc", pid, "uid_map", line);
		write_map("/proc", pid, "setgroups", "deny");
		snprintf(line, sizeof line, "%u %u 1\n", (unsigned)s->gid, (unsigned)s->gid);
		write_map("/proc", pid, "gid_map", line);
	} else {
		snprintf(line, sizeof line, "0 %u %u\n", (unsigned)s->id_base, CELL_ID_RANGE);
		write_map("/proc", pid, "uid_map", line);
		write_map("/proc", pid, "gid_map", line);
	}
	/* from here on the job runs code of its own: init must not be ptrace-able or readable
	 * through /proc by it (earlier would break the rootless id maps) */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	job_go_ns = mono_ns();
	if (write(go[1], "g", 1) != 1)
		die(errno, "cannot start the job");
	close(go[1]);
	return pid;
}

/* A terminal from the cell's own devpts (so that tty(1) and ttyname work inside): its master
 * goes to the supervisor over the console socket, the job gets the other end. */
static void open_console(const struct cell_spec *s, struct cell_io *io)
{
	int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || unlockpt(m) < 0)
		die(errno, "cannot open a terminal in the cell (/dev/ptmx)");
	int sl = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (sl < 0)
		die(errno, "cannot open the job's terminal");
	/* the job owns its terminal, as after a login */
	if (!s->rootless && fchown(sl, spec_host_uid(s), spec_host_gid(s)) < 0)
		die(errno, "cannot give the terminal to the run user");
	int r = fd_send(io->console, m, "t", 1);
	if (r < 0)
		die(-r, "cannot hand the terminal to the supervisor");
	close(m);
	close(io->console);
	io->in = io->out = sl;
	if (io->err < 0)
		io->err = sl; /* stderr too is the terminal (else the caller redirected it: a pipe) */
}

/* ---- a warm cell's take ---- */

/* A worktree below /tmp or /var/tmp would be hidden by the scratch its take mounts there: a
 * copy of its mount is kept, and put back on top then. */
static int kept_worktree = -1;

static bool below(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && path[n] == '/';
}

static void keep_worktree(const struct cell_spec *s, int mnt)
{
	if (!s->warm || !(below(s->worktree, CELL_TMP_PATH) || below(s->worktree, CELL_VARTMP_PATH)))
		return;
	kept_worktree = sys_open_tree(mnt, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (kept_worktree < 0)
		die(errno, "cannot keep the worktree's mount for the warm cell's take");
}

static void put_back_worktree(const struct cell_spec *s)
{
	if (kept_worktree < 0)
		return;
	_cleanup_close_ int fd = ensure_mountpoint(s->worktree, false);
	if (sys_move_mount(kept_worktree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		die(errno, "cannot mount the worktree %s over the run's scratch", s->worktree);
	closep(&kept_worktree);
}

/* The go message of a take: 'w', then the run's scratch size (bytes, 0: the tmpfs default),
 * whether the job is started directly (a plain command: its EXEC_START follows on the control
 * socket), and whether init is to start it (after giving the scratch its new size). */
struct take_msg {
	char tag;
	uint64_t scratch;
	char direct;
	char relay;    /* init sizes the scratch anew, then starts the job; else the supervisor
	                  started it (container_take) */
} __attribute__((packed));

/* The run's own scratch, a fresh tmpfs (of the cell's shape's size; a take of another size
 * resizes it: scratch_resize), bound on /tmp, /var/tmp, /dev/shm and the home; the job's
 * Landlock domain allows the new mounts. */
static void take_scratch(const struct cell_spec *s)
{
	/* of the size of the cell's shape: a run of that size is started without init */
	char opts[64] = "mode=0755";
	if (s->limits.scratch)
		snprintf(opts, sizeof opts, "mode=0755,size=%llu", (unsigned long long)s->limits.scratch);
	do_mount("tmpfs", WARM_SCRATCH_PATH, "tmpfs", MS_NOSUID | MS_NODEV, opts);
	scratch_fd = open(WARM_SCRATCH_PATH, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (scratch_fd < 0)
		die(errno, "cannot open %s", WARM_SCRATCH_PATH);
	make_scratch_parts(s, scratch_fd, WARM_SCRATCH_PATH, true, false);
	free(scratch_base);
	scratch_base = xstrdup(WARM_SCRATCH_PATH);
	const char *const places[][2] = { { RUN_TMP_DIR, CELL_TMP_PATH }, { RUN_VARTMP_DIR, CELL_VARTMP_PATH },
					  { RUN_SHM_DIR, "/dev/shm" }, { RUN_HOME_DIR, s->home } };
	for (size_t i = 0; i < sizeof places / sizeof places[0]; i++) {
		_cleanup_free_ char *src = scratch_part(places[i][0]);
		bind_path(src, places[i][1], false, false);
	}
	if (umount2(WARM_SCRATCH_PATH, MNT_DETACH) < 0)
		die(errno, "cannot let go of %s", WARM_SCRATCH_PATH);
	put_back_worktree(s);
	struct error perr = { 0 };
	struct policy_ctx pc = spec_policy_ctx(s);
	if (policy_landlock_allow_scratch(&pc, &perr) < 0)
		die(0, "%s", perr.msg);
}

/* The take's --scratch: the scratch tmpfs made before (take_scratch) gets its size, bytes (0:
 * the tmpfs default). */
static void scratch_resize(uint64_t size)
{
	char opts[64] = "size=50%";
	if (size)
		snprintf(opts, sizeof opts, "size=%llu", (unsigned long long)size);
	if (mount(NULL, CELL_TMP_PATH, NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, opts) < 0)
		die(errno, "cannot size the run's scratch (%s)", opts);
}

/* ---- init: pid 1 of the cell ---- */

/* The scratch tmpfs's use as a report's message ("<used> <free>"); false without one. */
static bool scratch_use(char *m, size_t len, bool *full)
{
	struct statfs fs;
	if (scratch_fd < 0 || fstatfs(scratch_fd, &fs) < 0)
		return false;
	unsigned long long used = (unsigned long long)(fs.f_blocks - fs.f_bfree) * fs.f_bsize;
	unsigned long long avail = (unsigned long long)fs.f_bfree * fs.f_bsize;
	*full = avail < 65536;
	snprintf(m, len, "%llu %llu", used, avail);
	return true;
}

/* Report a full scratch; returns true when it is full. */
static bool report_scratch_full(void)
{
	char m[64];
	bool full = false;
	if (scratch_use(m, sizeof m, &full) && full)
		report(CELL_REPORT_SCRATCH_FULL, 0, 0, m);
	return full;
}

/* The job ended with status: its scratch's use and its end, in one message. */
static void report_end(int status)
{
	char buf[3 * sizeof(struct cell_report) + 64 + 72], m[64], t[72];
	size_t n = 0;
	bool full;
	snprintf(t, sizeof t, "%lld %lld %lld", (long long)root_built_ns, (long long)job_go_ns, (long long)mono_ns());
	if (scratch_use(m, sizeof m, &full))
		report_put(buf, &n, CELL_REPORT_SCRATCH, 0, 0, m);
	report_put(buf, &n, CELL_REPORT_TIMES, 0, 0, t);
	report_put(buf, &n, CELL_REPORT_EXIT, status, 0, NULL);
	ssize_t w = write(report_fd, buf, n);
	(void)w;
}

/* The cell's end: every other process of the cell SIGKILLed and reaped here, by pid 1, before
 * it ends (their CPU time is then in init's rusage, which the supervisor reads when it reaps
 * init: the kernel's own sweep after pid 1 is gone accounts them to no one). The job's end is
 * reported when it is reaped here, unless it was already. */
static void __attribute__((noreturn)) end_cell(pid_t job, bool reported)
{
	/* kill(-1) walks every process of the host: only when init has a child left (every other
	 * process of the cell is one's descendant, or init's when its parent is gone) */
	siginfo_t si = { 0 };
	if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT | __WALL) == 0)
		kill(-1, SIGKILL);  /* (pid 1 itself is spared) */
	int status;
	pid_t p;
	while ((p = waitpid(-1, &status, __WALL)) > 0 || (p < 0 && errno == EINTR))
		if (p == job && !reported) {
			report_end(status);
			reported = true;
		}
	_exit(0);
}

/* The job's life: its end reported, the supervisor's signals passed on, its kill taken from the
 * go pipe (init_go: CELL_KILL_BYTE ends the cell, end_cell). */
static void __attribute__((noreturn)) init_loop(pid_t job, bool watch_full)
{
	sigset_t all;
	sigfillset(&all);
	int sfd = signalfd(-1, &all, SFD_CLOEXEC);
	if (sfd < 0)
		die(errno, "signalfd");
	/* with --scratch, a full scratch stops the run: look at it ten times a second */
	int tfd = -1;
	if (scratch_fd >= 0 && watch_full) {
		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		struct itimerspec it = { .it_value = { 0, 100000000 }, .it_interval = { 0, 100000000 } };
		timerfd_settime(tfd, 0, &it, NULL);
	}
	struct pollfd pf[3] = { { .fd = sfd, .events = POLLIN }, { .fd = init_go, .events = POLLIN }, { .fd = tfd, .events = POLLIN } };
	for (;;) {
		if (poll(pf, tfd >= 0 ? 3 : 2, -1) < 0)
			continue;
		if (tfd >= 0 && (pf[2].revents & POLLIN)) {
			uint64_t n;
			if (read(tfd, &n, sizeof n) > 0 && report_scratch_full()) {
				closep(&tfd);
			}
		}
		if (pf[1].revents) {
			char c = 0;
			if (read(init_go, &c, 1) == 1 && c == CELL_KILL_BYTE)
				end_cell(job, false);  /* the supervisor's SIGKILL */
			if (pf[1].revents & (POLLHUP | POLLERR))
				pf[1].fd = -1;  /* the supervisor is gone (its death signal follows) */
		}
		if (!(pf[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof si);
		if (n != (ssize_t)sizeof si)
			continue;
		if (si.ssi_signo != SIGCHLD) {
			/* the supervisor's polite signals go to every process of the cell */
			kill(-1, (int)si.ssi_signo);
			continue;
		}
		int status;
		pid_t p;
		while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
			if (p == job) {
				report_end(status);
				/* the supervisor, just woken by the report, goes first (a warm run's
				 * answer is sent then): woken on this CPU, it waited behind all of
				 * init's exit up to its first sleep (0.1 ms), the other CPU idle */
				sched_yield();
				/* pid 1 leaving takes every other process of the cell with it: killed
				 * and reaped here, so that their CPU time is counted */
				end_cell(job, true);
			}
		}
	}
}

/* Into the network namespace the supervisor's helper made (its loopback up), once the root is
 * built but for /sys (mount_sys): it was being made meanwhile. Before the job's process is
 * made, which stays in it. If the helper could not make it (or ended without a word), init
 * makes one itself, as a clone with CLONE_NEWNET would have. */
static void enter_netns(void)
{
	if (cell_netns_sock < 0)
		return;
	char made;
	int ns = -1;
	ssize_t n = fd_recv(cell_netns_sock, 0, &made, 1, &ns);
	closep(&cell_netns_sock);
	if (n == 1 && ns >= 0) {
		if (setns(ns, CLONE_NEWNET) < 0)
			die(errno, "cannot enter the cell's network namespace");
		close(ns);
		return;
	}
	closep(&ns);
	if (unshare(CLONE_NEWNET) < 0)
		die(errno, "cannot create the cell's network namespace");
	loopback_up();
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Close every descriptor but those in keep (negative entries are ignored). */
static void close_all_but(int *keep, size_t n)
{
	qsort(keep, n, sizeof *keep, cmp_int);
	unsigned from = 0;
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < 0)
			continue;
		if ((unsigned)keep[i] > from)
			close_range(from, (unsigned)keep[i] - 1, 0);
		from = (unsigned)keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

static void __attribute__((noreturn)) init_main(const struct cell_spec *s, const struct cell_io *io,
						 const struct cgroup *cg, int go)
{
	init_go = go;
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* the supervisor may have died before PDEATHSIG was armed (even after letting us go):
	 * the report pipe has no reader then */
	struct pollfd pfd = { .fd = report_fd, .events = POLLOUT };
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR))
		_exit(125);

	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	/* what init makes gets the modes it names: the caller's umask (077 on a hardened host)
	 * made the cell's passwd and group unreadable by the job and the directories made on the
	 * way to a --bind's destination closed to it. The job gets the caller's umask back. */
	caller_umask = umask(0);
	/* init keeps only what it needs of the supervisor's descriptors (not its lock, epoll,
	 * other pipes' ends, nor what warren's caller left open) */
	int fixed[] = { 0, 1, 2, report_fd, go, cell_netns_sock, warm_take_r, warm_take_w, io->in, io->out, io->err, io->console, io->control, io->watch,
			idmap_ns_work, idmap_ns_image, s->worktree_fd,
			cg ? cg->tasks_fd[0] : -1, cg ? cg->tasks_fd[1] : -1, cg ? cg->tasks_fd[2] : -1 };
	size_t nfixed = sizeof fixed / sizeof fixed[0], nkeep = nfixed + 2 * s->n_mounts;
	int *keep = xcalloc(nkeep, sizeof *keep);
	memcpy(keep, fixed, sizeof fixed);
	for (size_t i = 0; i < s->n_mounts; i++) {
		keep[nfixed + 2 * i] = s->mounts[i].fd;
		keep[nfixed + 2 * i + 1] = idmap_ns_mounts ? idmap_ns_mounts[i] : -1;
	}
	close_all_but(keep, nkeep);
	free(keep);
	/* into the run's cgroup before anything else (v1; v2 was cloned into it) */
	struct error cerr = { 0 };
	if (cg && cgroup_join_self(cg, &cerr) < 0)
		die(0, "%s", cerr.msg);
	/* rootless, the job has init's host uid and may prlimit() it: what init allows itself
	 * is fixed here, where nothing can raise it again (no core dumps, a bounded NOFILE) */
	struct rlimit core0 = { 0, 0 }, nofile;
	if (!s->policy.core)
		setrlimit(RLIMIT_CORE, &core0);
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_max > 524288) {
		nofile.rlim_max = 524288;
		if (nofile.rlim_cur > nofile.rlim_max)
			nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}

	if (s->rootless) {
		char line[64];
		snprintf(line, sizeof line, "%u %u 1\n", (unsigned)s->uid, (unsigned)s->host_uid);
		write_map("/proc", 0, "uid_map", line);
		write_map("/proc", 0, "setgroups", "deny");
		snprintf(line, sizeof line, "%u %u 1\n", (unsigned)s->gid, (unsigned)s->host_gid);
		write_map("/proc", 0, "gid_map", line);
	}
	if (sethostname(spec_hostname(s), strlen(spec_hostname(s))) < 0)
		die(errno, "cannot set the cell's hostname");
	if (cell_netns_sock < 0)
		loopback_up();
	build_root(s);
	root_built_ns = mono_ns();

	/* the terminal's master goes out before the job may run (an OCI runtime's caller waits
	 * for it between create and start) */
	struct cell_io jio = *io;
	if (io->console >= 0)
		open_console(s, &jio);
	/* a warm cell: all that does not depend on its run before it comes: its scratch (no one
	 * but its run ever sees it: a warm cell is taken once), and its job's process, set up to
	 * its last step (warm_job_take) */
	pid_t job = -1;
	if (s->warm) {
		take_scratch(s);
		show_cgroup(cg);
		/* its take pipe: made by the supervisor, which holds the other write end */
		job = start_job(s, &jio);
		closep(&warm_take_r);
	}
	/* wait for the supervisor (the network, from outside; a warm cell: its take), its message
	 * alone: what follows on the pipe is its kill (init_loop) */
	struct take_msg take = { 0 };
	ssize_t want = s->warm ? (ssize_t)sizeof take : 1;
	if (read(go, &take, (size_t)want) != want)
		_exit(125);
	if (s->warm) {
		/* a run whose scratch is of another size than the cell's: sized first, then started;
		 * else the supervisor started it already */
		if (take.relay) {
			scratch_resize(take.scratch);
			if (write(warm_take_w, take.direct ? "d" : "x", 1) != 1)
				die(errno, "cannot start the warm cell's job");
		}
		closep(&warm_take_w);
	} else {
		show_cgroup(cg);
		job = start_job(s, &jio);
	}
	if (io->watch >= 0)
		close(io->watch);
	/* init keeps no stream of the job open: end of output is the job's */
	for (int i = 0; i < 3; i++) {
		int fd = i == 0 ? jio.in : i == 1 ? jio.out : jio.err;
		if (fd > 2)
			close(fd);
	}
	int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, 0);
		dup2(devnull, 1);
		dup2(devnull, 2);
		if (devnull > 2)
			close(devnull);
	}
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* the job has its copy: warren's command line (host paths, options) is not shown to it as
	 * pid 1's (/proc/1/cmdline is readable by all who see the pid) */
	proc_args_wipe("warren-init");
	init_loop(job, s->warm ? take.scratch != 0 : s->limits.scratch != 0);
}

/* ---- made before the clone: the idmaps' user namespaces; the network, on a thread ---- */

/* Root mode: the worktree's and the binds' owners are the run user inside; the image's ids
 * are the cell's. */
static void make_idmaps(const struct cell_spec *s, struct cell *c)
{
	idmap_ns_work = owner_idmap(s, s->worktree_fd, true, c);
	if (s->rootfs)
		idmap_ns_image = idmap_userns(0, s->id_base, 0, s->id_base, CELL_ID_RANGE, cell_helper_slot(c));
	idmap_ns_mounts = s->n_mounts ? xcalloc(s->n_mounts, sizeof *idmap_ns_mounts) : NULL;
	n_idmap_mounts = s->n_mounts;
	for (size_t i = 0; i < s->n_mounts; i++)
		idmap_ns_mounts[i] = owner_idmap(s, s->mounts[i].fd, !s->mounts[i].readonly, c);
}

/* The network namespace's helper: a process in the supervisor's memory (CLONE_VM), on a
 * stack of its own, that makes a new network namespace (moving itself into it), brings its
 * loopback up and sends it to init over sock; then word of its end (shutdown), so that init
 * never waits for more than that. Raw system calls only (sys_raw: not even errno, which is
 * the supervisor's thread's), not instrumented by the sanitizers: no C library or sanitizer
 * lock or state is taken, since init is cloned from the supervisor meanwhile (a thread, as
 * first tried, put its C library's and its sanitizer's state into init's copy). */
static int __attribute__((no_sanitize("address", "undefined"))) netns_helper_main(void *arg)
{
	long sock = (long)(intptr_t)arg, ns = -1, fd;
	if (sys_raw(SYS_unshare, CLONE_NEWNET, 0, 0) == 0 && (fd = sys_raw(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) >= 0) {
		struct ifreq ifr;
		memset(&ifr, 0, sizeof ifr);
		memcpy(ifr.ifr_name, "lo", 3);
		if (sys_raw(SYS_ioctl, fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags |= IFF_UP, sys_raw(SYS_ioctl, fd, SIOCSIFFLAGS, &ifr) == 0)) {
			net_open_low_ports(); /* the ports below 1024 the job's (net/ports.c) */
			ns = sys_raw6(SYS_openat, AT_FDCWD, (long)"/proc/self/ns/net", O_RDONLY | O_CLOEXEC, 0, 0, 0);
		}
		sys_raw(SYS_close, fd, 0, 0);
	}
	union fd_cmsg c;
	struct iovec iov;
	struct msghdr mh;
	fd_msg(&mh, &iov, &c, ns >= 0 ? (int)ns : -1, ns >= 0 ? "n" : "x", 1);
	sys_raw(SYS_sendmsg, sock, &mh, MSG_NOSIGNAL);
	sys_raw(SYS_shutdown, sock, SHUT_WR, 0);
	sys_raw(SYS_exit, 0, 0, 0);
	return 0;
}

void container_prepare(const struct cell_spec *s, struct cell *c)
{
	c->helpers = NULL;
	c->n_helpers = 0;
	c->netns_sock = -1;
	/* the idmaps' helpers first, before any descriptor of the run exists: each gets a copy of
	 * the supervisor's table and closes it only once it is scheduled, which on a busy host can
	 * be after the job has ended; made after the job's output pipes, a helper not yet run held
	 * them open, and the run's end took that for a process outside the cell holding its output
	 * (4 runs in 100 while a test suite ran beside) */
	if (!s->rootless)
		make_idmaps(s, c);
	/* rootless, the network is owned by the cell's own user namespace; --net's link is moved
	 * into init's namespace by its pid */
	if (s->rootless || s->net.mode != NET_NONE)
		return;
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return;
	pid_t pid = helper_clone(netns_helper_main, (void *)(intptr_t)sp[0], 0, cell_helper_slot(c));
	/* the helper holds the sending end alone: its end, however it comes, is init's EOF */
	close(sp[0]);
	if (pid < 0)
		close(sp[1]);
	else
		c->netns_sock = sp[1];
}

/* The supervisor's copies of what was prepared, once init has its own (or on failure). */
static void drop_prepared(struct cell *c)
{
	closep(&c->netns_sock);
	cell_netns_sock = -1; /* (init's copy of that number, in the supervisor) */
	closep(&idmap_ns_work);
	closep(&idmap_ns_image);
	close_idmap_mounts();
}

int container_start(const struct cell_spec *s, const struct cell_io *io, struct cell *c, struct error *err)
{
	int rep[2] = { -1, -1 }, go[2] = { -1, -1 }, take[2] = { -1, -1 };
	c->pid = -1;
	c->pidfd = c->report_fd = c->go_fd = c->take_fd = -1;
	/* a warm cell's job waits on the take pipe: init writes it after sizing the scratch anew,
	 * or the supervisor does itself (container_take) */
	if (pipe2(rep, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 || (s->warm && pipe2(take, O_CLOEXEC) < 0)) {
		int e = errno;
		closep(&rep[0]);
		closep(&rep[1]);
		closep(&go[0]);
		closep(&go[1]);
		drop_prepared(c);
		return error_set(err, e, "cannot create pipes for the cell");
	}
	int pidfd = -1;
	cell_netns_sock = c->netns_sock;
	struct clone_args a = {
		.flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | (cell_netns_sock >= 0 ? 0 : CLONE_NEWNET) |
			 CLONE_NEWCGROUP | CLONE_PIDFD | (s->rootless ? CLONE_NEWUSER : 0),
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
	};
	if (c->cgroup_fd >= 0) {
		a.flags |= CLONE_INTO_CGROUP;
		a.cgroup = (uint64_t)c->cgroup_fd;
	}
	pid_t pid = sys_clone3(&a);
	if (pid < 0) {
		int e = errno;
		close(rep[0]);
		close(rep[1]);
		close(go[0]);
		close(go[1]);
		closep(&take[0]);
		closep(&take[1]);
		drop_prepared(c);
		struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct d[2] = { 0 };
		if (e == EPERM && !s->rootless && sys_capget(&h, d) == 0 && !(d[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))))
			return error_set(err, e, "cannot create the cell's namespaces: warren runs as root without CAP_SYS_ADMIN "
						 "(a narrowed bounding set, a container's default capabilities?); give it the capability, or run it as a user (rootless)");
		if (e == EPERM || e == ENOSPC || e == EINVAL)
			return error_set(err, e, "cannot create the cell's namespaces (are user namespaces enabled? see 'warren selfcheck')");
		return error_set(err, e, "cannot create the cell");
	}
	if (pid == 0) {
		close(rep[0]);
		close(go[1]);
		report_fd = rep[1];
		warm_take_r = take[0];
		warm_take_w = take[1];
		init_main(s, io, c->cgroup, go[0]);
	}
	close(rep[1]);
	close(go[0]);
	closep(&take[0]);
	drop_prepared(c);
	c->pid = pid;
	c->pidfd = pidfd;
	c->report_fd = rep[0];
	c->go_fd = go[1];
	c->take_fd = take[1];
	c->made_scratch = s->limits.scratch;
	return 0;
}

int container_release(struct cell *c)
{
	if (c->go_fd < 0)
		return 0;
	ssize_t w = write(c->go_fd, "g", 1);
	/* keep go_fd open: its closing tells a not-yet-armed init that we died */
	return w == 1 ? 0 : -errno;
}

int container_take(struct cell *c, uint64_t scratch, bool direct)
{
	/* a run of the cell's scratch size: its job is started from here (one wake-up fewer on
	 * the way to its exec), then init is let go */
	bool relay = scratch != c->made_scratch || c->take_fd < 0;
	/* a job that is gone (EPIPE): init finds it so when it relays, and says why the cell
	 * failed */
	if (!relay && write(c->take_fd, direct ? "d" : "x", 1) != 1)
		relay = true;
	closep(&c->take_fd);
	struct take_msg m = { .tag = 'w', .scratch = scratch, .direct = direct, .relay = relay };
	ssize_t w = c->go_fd < 0 ? -1 : write(c->go_fd, &m, sizeof m);
	return w == (ssize_t)sizeof m ? 0 : -EPIPE;
}

int container_signal_children(const struct cell *c, int sig)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)c->pid, (int)c->pid);
	_cleanup_free_ char *list = read_file(path, NULL);
	if (!list)
		return -errno;
	int n = 0;
	for (char *p = list, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0 && kill((pid_t)pid, sig) == 0)
			n++;
	}
	return n;
}

/* A helper has CELL_HELPER_END_MS once the cell is gone to end (a VM's relay passes on what
 * the guest sent before): one that does not is killed. A hostile guest can leave its relay
 * blocked on the runner, whose process is the one waiting here. */
static void reap_helper(pid_t pid)
{
	_cleanup_close_ int pfd = sys_pidfd_open(pid, 0);
	struct pollfd p = { .fd = pfd, .events = POLLIN };
	if (pfd >= 0 && poll(&p, 1, CELL_HELPER_END_MS) == 0)
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

void cell_reap_ended_helpers(struct cell *c)
{
	for (size_t i = 0; i < c->n_helpers; i++) {
		siginfo_t si = { 0 };
		if (c->helpers[i].pid <= 0 ||
		    waitid(P_PID, (id_t)c->helpers[i].pid, &si, WEXITED | WNOHANG) < 0 || si.si_pid != c->helpers[i].pid)
			continue;
		if (c->helpers[i].stack)
			helper_stack_free(c->helpers[i].stack);
		c->helpers[i] = (struct cell_helper){ -1, NULL };
	}
}

void cell_reap_helpers(struct cell *c)
{
	for (size_t i = 0; i < c->n_helpers; i++)
		if (c->helpers[i].pid > 0) {
			reap_helper(c->helpers[i].pid);
			if (c->helpers[i].stack)  /* (after: the helper ran on it) */
				helper_stack_free(c->helpers[i].stack);
		}
	free(c->helpers);
	c->helpers = NULL;
	c->n_helpers = 0;
}

void cell_close(struct cell *c)
{
	drop_prepared(c); /* (the supervisor failed before init's clone) */
	cell_reap_helpers(c);
	closep(&c->pidfd);
	closep(&c->report_fd);
	closep(&c->go_fd);
	closep(&c->take_fd);
}
