/* SPDX-License-Identifier: Apache-2.0 */
/* refused.c - the write watch, supervisor side (see refused.h and policy/watch.c).
 *
 * A thread of its own, the taker, blocks in SECCOMP_IOCTL_NOTIF_RECV. For each call the job's
 * filter hands over it reads what may change once the caller runs on (the path strings, the
 * caller's working directory or directory fd, its root), lets the call go on at once
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel decides, as without the watch), and then,
 * while the job runs on, decides whether the kernel refused it for the cell's rules: the
 * path is resolved inside the caller's root as the kernel resolves it (openat2
 * RESOLVE_IN_ROOT, symlinks followed where the call follows them), and the call counts when
 * it would change something where the file system is mounted read-only, or where Landlock
 * (policy_allows()) does not let the job write, in the kernel's own order of checks (EEXIST,
 * ENOENT, EXDEV and EISDIR come before or instead of a refusal in the cases
 * docs/hardening.md lists). Nothing the job does can make the supervisor look outside the
 * cell: every lookup starts at the caller's root and stays below it, and every open is
 * O_PATH. The taker holds the cell's mount namespace, so that a call judged after the job
 * has ended still sees the cell's mounts.
 *
 * A connect() to a unix pathname address is judged the same way: it is refused when the
 * address resolves (in the caller's root, symlinks followed as connect follows them) to a
 * socket file on a read-only overlay, which is how the cell sees the host's / (no listener
 * can be reached through it: cell/container/hostroot.c). It goes to a list of its own. The overlay is
 * what refuses; the record only tells.
 *
 * The thread starts at the first call (the event loop takes the listener and watches it until
 * then): a second thread in the supervisor makes every copy-on-write fault it takes after
 * cloning the cell's init flush the TLB of the other CPU too, which cost a run of /bin/true
 * 2.4 ms of CPU here, so runs that make no watched call do without it.
 *
 * Why a thread: until a call is taken, a signal to the caller interrupts it (and with a
 * handler set without SA_RESTART the call fails with EINTR); once taken, only SIGKILL does
 * (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV). A thread blocked in RECV takes it soonest. (Two
 * things measured worse on a 2-core machine and were dropped: a second thread judging from a
 * queue, which kept the taker from a CPU, and SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP, which made
 * the round trip cheaper but the window before RECV three times longer.) */
#include "supervise/refused.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cell/spec.h"
#include "policy/policy.h"
#include "supervise/refusal.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/words.h"
#include "util/sys.h"

/* Set when refused_stop() gave up waiting for the taker: the struct refused and the spec it
 * points to may be gone by the time the taker comes back from a lookup, so it checks this
 * (static) flag and leaves without touching them. One watched run per process. */
static atomic_bool taker_abandoned;

static void leave_if_abandoned(void)
{
	if (atomic_load(&taker_abandoned))
		pthread_exit(NULL);
}

void refused_init(struct refused *r)
{
	*r = (struct refused){ .sock = -1, .listener = -1, .mntns = -1 };
	pthread_mutex_init(&r->lock, NULL);
}

/* ---- a call, as read from the caller ---- */

/* One path of a call: what the call asks of it, and what look_up() found (refusal.h). */
struct target {
	struct path_facts f;
	char *path;          /* absolute, in the caller's root, not yet resolved (f.name points in it) */
	char *dir;           /* f.dir */
	char *resolved;      /* f.resolved */
};

struct refused_call {
	int nr;
	int rootfd;
	bool unread;         /* counted as unread when it was taken */
	size_t nt;
	struct target t[2];
};

static void call_free(struct refused_call *c)
{
	for (size_t i = 0; i < c->nt; i++) {
		free(c->t[i].path);
		free(c->t[i].dir);
		free(c->t[i].resolved);
	}
	closep(&c->rootfd);
	free(c);
}

/* A NUL-terminated string of the caller's, at most PATH_MAX bytes, read page by page. */
static char *read_string(pid_t pid, uint64_t addr)
{
	static size_t page;
	if (!page)
		page = (size_t)sysconf(_SC_PAGESIZE);
	char *buf = xmalloc(PATH_MAX + 1);
	size_t got = 0;
	while (got < PATH_MAX) {
		/* most paths are short: the first read is of 256 bytes at most, not the page's rest */
		size_t want = page - ((addr + got) & (page - 1));
		if (!got && want > 256)
			want = 256;
		if (want > PATH_MAX - got)
			want = PATH_MAX - got;
		struct iovec l = { buf + got, want }, rm = { (void *)(uintptr_t)(addr + got), want };
		ssize_t n = process_vm_readv(pid, &l, 1, &rm, 1, 0);
		if (n <= 0)
			break;
		if (memchr(buf + got, '\0', (size_t)n))
			return buf;
		got += (size_t)n;
	}
	free(buf);
	return NULL;
}

/* The target of the symlink name (relative to dirfd), whole; NULL when it is none, or
 * (errno ENAMETOOLONG) when it is PATH_MAX bytes or longer: never a cut one. */
static char *link_target(int dirfd, const char *name)
{
	char *buf = xmalloc(PATH_MAX + 1);
	ssize_t n = readlinkat(dirfd, name, buf, PATH_MAX + 1);
	if (n <= 0 || n >= PATH_MAX) {
		if (n >= PATH_MAX)
			errno = ENAMETOOLONG;
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* A link's target when it is an absolute path (a directory of the cell, as /proc shows it
 * from here); NULL for a pipe, a socket, anon_inode:..., or a path too long to read whole. */
static char *read_link(const char *link)
{
	char *buf = link_target(AT_FDCWD, link);
	if (buf && buf[0] != '/') {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The caller's process and thread ids in its own pid namespace (the cell's), from the last
 * fields of NStgid and NSpid in /proc/PID/status. */
static bool ns_ids(pid_t pid, long *tgid, long *tid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char line[512];
	*tgid = *tid = -1;
	while (fgets(line, sizeof line, f)) {
		long *out = !strncmp(line, "NStgid:", 7) ? tgid : !strncmp(line, "NSpid:", 6) ? tid : NULL;
		if (!out)
			continue;
		char *last = strrchr(line, '\t');
		if (last)
			*out = strtol(last + 1, NULL, 10);
	}
	return *tgid > 0 && *tid > 0;
}

/* A /proc/self/... or /proc/thread-self/... path as the caller sees it: its root, working
 * directory and fds are where those links lead (followed here by hand: the lookups refuse
 * magic links), anything else is /proc/<its pid in the cell>/... (the supervisor's own
 * /proc/self is not the caller's). Takes abs; NULL when it leads nowhere we can see. */
static char *proc_self(pid_t pid, char *abs)
{
	const char *rest;
	bool thread = false;
	if (!strncmp(abs, "/proc/self", 10) && (abs[10] == '/' || !abs[10])) {
		rest = abs + 10;
	} else if (!strncmp(abs, "/proc/thread-self", 17) && (abs[17] == '/' || !abs[17])) {
		rest = abs + 17;
		thread = true;
	} else {
		return abs;
	}
	_cleanup_free_ char *own = abs;
	char link[64];
	const char *more = NULL;
	if (!strncmp(rest, "/root", 5) && (rest[5] == '/' || !rest[5]))
		return xstrdup(rest[5] ? rest + 5 : "/");
	if (!strncmp(rest, "/cwd", 4) && (rest[4] == '/' || !rest[4])) {
		snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
		more = rest + 4;
	} else if (!strncmp(rest, "/fd/", 4)) {
		char *end;
		long fd = strtol(rest + 4, &end, 10);
		if (end == rest + 4 || (*end && *end != '/'))
			return NULL;
		snprintf(link, sizeof link, "/proc/%d/fd/%ld", (int)pid, fd);
		more = end;
	}
	if (more) {
		_cleanup_free_ char *base = read_link(link);
		return !base ? NULL : !*more ? xstrdup(base) : xasprintf("%s%s", strcmp(base, "/") ? base : "", more);
	}
	long tgid, tid;
	if (!ns_ids(pid, &tgid, &tid))
		return NULL;
	return thread ? xasprintf("/proc/%ld/task/%ld%s", tgid, tid, rest) : xasprintf("/proc/%ld%s", tgid, rest);
}

/* The path p (taken) the caller named relative to dirfd, made absolute from its working
 * directory or its dirfd; NULL when it names nothing we can see. */
static char *caller_abs_path(pid_t pid, int dirfd, char *p)
{
	_cleanup_free_ char *own = p;
	if (p[0] == '/')
		return proc_self(pid, xstrdup(p));
	char link[64];
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
	else
		snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)pid, dirfd);
	_cleanup_free_ char *base = read_link(link);
	if (!base)
		return NULL;
	if (!*p)
		return xstrdup(base);   /* the directory fd itself (AT_EMPTY_PATH, utimensat NULL) */
	return proc_self(pid, xasprintf("%s/%s", strcmp(base, "/") ? base : "", p));
}

/* The path the caller named (addr: its string, 0 for none) relative to dirfd, made absolute. */
static char *caller_path(pid_t pid, int dirfd, uint64_t addr, bool *unread)
{
	char *p = addr ? read_string(pid, addr) : xstrdup("");
	if (!p) {
		*unread = true;
		return NULL;
	}
	return caller_abs_path(pid, dirfd, p);
}

/* The path of the unix pathname address (addr, len) connect() was given, made absolute; NULL
 * for any other address (inet, abstract or unnamed unix...). */
static char *caller_unix_path(pid_t pid, uint64_t addr, uint64_t len, bool *unread)
{
	struct sockaddr_un sun = { 0 };
	size_t want = len < sizeof sun ? (size_t)len : sizeof sun;
	struct iovec l = { &sun, want }, rm = { (void *)(uintptr_t)addr, want };
	if (process_vm_readv(pid, &l, 1, &rm, 1, 0) != (ssize_t)want) {
		*unread = true;
		return NULL;
	}
	size_t max = want - offsetof(struct sockaddr_un, sun_path);
	if (want <= offsetof(struct sockaddr_un, sun_path) || sun.sun_family != AF_UNIX || !sun.sun_path[0])
		return NULL;
	/* the kernel ends the path at the address's length */
	return caller_abs_path(pid, AT_FDCWD, xasprintf("%.*s", (int)max, sun.sun_path));
}

/* Read the targets of the call d of pid. */
static void collect(pid_t pid, const struct seccomp_data *d, struct refused_call *c, bool *unread)
{
	const __u64 *a = d->args;
	struct target *t = c->t;
	size_t n = 0;
#define AT(i) ((int)(uint32_t)a[i])
#define TL(dfd, addr, w, fl, ll, nf)                                                                   \
	(t[n] = (struct target){ .f = { .want = (w), .flags = (fl), .landlock = (ll), .nofollow = (nf) }, \
				 .path = caller_path(pid, (dfd), (addr), unread) },                    \
	 n++)
#define T(dfd, addr, w, fl) TL(dfd, addr, w, fl, 1, false)
#define TA(dfd, addr, nf) TL(dfd, addr, W_CHANGE, 0, 0, nf)   /* attributes: not Landlock's */
	c->nr = d->nr;
	switch (d->nr) {
#ifdef __NR_open
	case __NR_open: T(AT_FDCWD, a[0], W_OPEN, a[1]); break;
	case __NR_creat: T(AT_FDCWD, a[0], W_OPEN, O_CREAT | O_WRONLY | O_TRUNC); break;
	case __NR_mkdir:
	case __NR_mknod: T(AT_FDCWD, a[0], W_CREATE, 0); break;
	case __NR_symlink: T(AT_FDCWD, a[1], W_CREATE, 0); break;
	case __NR_link:
		TL(AT_FDCWD, a[0], W_FROM, 0, 0, true);
		T(AT_FDCWD, a[1], W_CREATE, 0);
		break;
	case __NR_rmdir:
	case __NR_unlink: T(AT_FDCWD, a[0], W_REMOVE, 0); break;
	case __NR_chmod:
	case __NR_chown:
	case __NR_utime:
	case __NR_utimes: TA(AT_FDCWD, a[0], false); break;
	case __NR_lchown: TA(AT_FDCWD, a[0], true); break;
	case __NR_rename:
		T(AT_FDCWD, a[0], W_REMOVE, 0);
		T(AT_FDCWD, a[1], W_TO, 0);
		break;
	case __NR_futimesat: TA(AT(0), a[1], false); break;
#endif
	case __NR_fchmodat: TA(AT(0), a[1], false); break;
	case __NR_fchmodat2: TA(AT(0), a[1], a[3] & AT_SYMLINK_NOFOLLOW); break;
	case __NR_fchownat: TA(AT(0), a[1], a[4] & AT_SYMLINK_NOFOLLOW); break;
	case __NR_utimensat: TA(AT(0), a[1], a[3] & AT_SYMLINK_NOFOLLOW); break;
	case __NR_setxattrat:
	case __NR_removexattrat: TA(AT(0), a[1], a[2] & AT_SYMLINK_NOFOLLOW); break;
	case __NR_unlinkat: T(AT(0), a[1], W_REMOVE, 0); break;
	case __NR_openat: T(AT(0), a[1], W_OPEN, a[2]); break;
	case __NR_openat2: {
		struct open_how how = { 0 };
		struct iovec l = { &how, sizeof how.flags }, rm = { (void *)(uintptr_t)a[2], sizeof how.flags };
		if (process_vm_readv(pid, &l, 1, &rm, 1, 0) == (ssize_t)sizeof how.flags)
			T(AT(0), a[1], W_OPEN, how.flags);
		else
			*unread = true;
		break;
	}
	case __NR_mkdirat:
	case __NR_mknodat: T(AT(0), a[1], W_CREATE, 0); break;
	case __NR_symlinkat: T(AT(1), a[2], W_CREATE, 0); break;
	case __NR_linkat:
		TL(AT(0), a[1], W_FROM, 0, 0, !(a[4] & AT_SYMLINK_FOLLOW));
		T(AT(2), a[3], W_CREATE, 0);
		break;
	case __NR_renameat:
	case __NR_renameat2:
		T(AT(0), a[1], W_REMOVE, 0);
		T(AT(2), a[3], W_TO, d->nr == __NR_renameat2 ? a[4] : 0);
		break;
	case __NR_truncate: TL(AT_FDCWD, a[0], W_CHANGE, 0, REFUSAL_LANDLOCK_TRUNCATE, false); break;
	case __NR_connect:
		t[0] = (struct target){ .f = { .want = W_CONNECT }, .path = caller_unix_path(pid, a[1], a[2], unread) };
		n = t[0].path ? 1 : 0;
		break;
	case __NR_setxattr:
	case __NR_removexattr: TA(AT_FDCWD, a[0], false); break;
	case __NR_lsetxattr:
	case __NR_lremovexattr: TA(AT_FDCWD, a[0], true); break;
	default: break;
	}
#undef TA
#undef T
#undef TL
#undef AT
	c->nt = n;
}

/* ---- the judgement ---- */

/* Split abs (absolute) into its directory and last name, dropping trailing slashes (true
 * when there were some). */
static bool split(char *abs, const char **dir, const char **name)
{
	size_t l = strlen(abs);
	bool slash_end = l > 1 && abs[l - 1] == '/';
	while (l > 1 && abs[l - 1] == '/')
		abs[--l] = '\0';
	char *slash = strrchr(abs, '/');
	if (slash == abs) {
		*dir = "/";
		*name = abs[1] ? abs + 1 : ".";
	} else {
		*slash = '\0';
		*dir = abs;
		*name = slash + 1;
	}
	return slash_end;
}

/* Open path below the caller's root as the kernel resolves it (O_PATH; flags: O_DIRECTORY,
 * O_NOFOLLOW); its path in the cell into *canon. -1 (errno set) when it does not resolve, with
 * *too_long set (when too_long is not NULL) when path or the path it resolves to is too long
 * for us to look up, which the kernel does not refuse the caller. */
static int open_in_root(int rootfd, const char *path, int flags, char **canon, bool *too_long)
{
	if (strlen(path) >= PATH_MAX) {
		if (too_long)
			*too_long = true;
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = sys_openat2(rootfd, path, (uint64_t)(O_PATH | flags), RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	if (fd < 0)
		return -1;
	char link[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	*canon = read_link(link);
	if (!*canon) {
		close(fd);
		if (too_long)
			*too_long = true;
		errno = ENAMETOOLONG;
		return -1;
	}
	return fd;
}

static bool is_ro(int fd)
{
	struct statvfs vfs;
	return fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY);
}

/* A connect() to t: refused when it leads to a socket file on a read-only overlay (the host's
 * /, where no listener can be reached; the cell's own sockets are elsewhere). */
static void judge_connect(int rootfd, const struct target *t, struct refusal *v)
{
	_cleanup_free_ char *canon = NULL;
	_cleanup_close_ int fd = open_in_root(rootfd, t->path, 0, &canon, NULL);
	leave_if_abandoned();
	struct stat st;
	struct statfs fs;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) || fstatfs(fd, &fs) < 0 ||
	    fs.f_type != OVERLAYFS_SUPER_MAGIC || !is_ro(fd))
		return;
	v->path = canon;
	canon = NULL;
	v->verdict = REFUSAL_YES;
}

/* What look_up() found: the facts to decide on, nothing to judge (the call fails otherwise),
 * or a dangling symlink an O_CREAT open creates through (t->path is where it points now). */
enum looked { LOOKED, LOOKED_NOTHING, LOOKED_AGAIN };

/* What an existing name leads to (refusal_looks_at_name()), opened: its mount and its type.
 * dfd: its directory; full: t's path before split(). */
static enum looked look_at_name(int rootfd, struct target *t, int dfd, const char *full)
{
	struct path_facts *f = &t->f;
	bool follow = refusal_follows(f);
	_cleanup_close_ int fd = open_in_root(rootfd, full, follow ? 0 : O_NOFOLLOW, &t->resolved, &f->too_long);
	leave_if_abandoned();
	if (fd < 0 && follow && refusal_creates(f) && errno == ENOENT) {
		/* a dangling symlink opened with O_CREAT: the kernel creates where it points */
		_cleanup_free_ char *to = link_target(dfd, f->name);
		if (!to) {
			f->too_long = errno == ENAMETOOLONG;
			return f->too_long ? LOOKED : LOOKED_NOTHING;
		}
		char *next = to[0] == '/' ? xstrdup(to) : xasprintf("%s/%s", strcmp(t->dir, "/") ? t->dir : "", to);
		free(t->path);
		t->path = next;
		return LOOKED_AGAIN;
	}
	if (fd < 0)
		return f->too_long ? LOOKED : LOOKED_NOTHING;
	f->resolved = t->resolved;
	f->ro_name = is_ro(fd);
	struct stat st;
	if (fstat(fd, &st) == 0) {
		f->is_link = S_ISLNK(st.st_mode);
		f->is_dir = S_ISDIR(st.st_mode);
		f->is_reg = S_ISREG(st.st_mode);
	}
	return LOOKED;
}

/* The facts of t (t->f) as the caller's root shows its directory and its name. */
static enum looked look_up(int rootfd, struct target *t)
{
	struct path_facts *f = &t->f;
	*f = (struct path_facts){ .want = f->want, .flags = f->flags, .landlock = f->landlock, .nofollow = f->nofollow };
	free(t->dir);
	free(t->resolved);
	t->dir = t->resolved = NULL;
	_cleanup_free_ char *full = xstrdup(t->path);
	const char *dirpath;
	f->slash_end = split(t->path, &dirpath, &f->name);
	_cleanup_close_ int dfd = open_in_root(rootfd, dirpath, O_DIRECTORY, &t->dir, &f->too_long);
	leave_if_abandoned();
	if (dfd < 0)
		return f->too_long ? LOOKED : LOOKED_NOTHING;   /* no such directory: ENOENT, not a refusal */
	f->found_dir = true;
	f->dir = t->dir;
	struct statx stx;
	if (statx(dfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0)
		f->mnt = stx.stx_mnt_id;
	f->dots = f->is_dir = !strcmp(f->name, ".") || !strcmp(f->name, "..");
	struct statx nx;
	f->exists = f->dots || statx(dfd, f->name, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MNT_ID, &nx) == 0;
	leave_if_abandoned();
	if (f->exists && !f->dots) {
		f->is_link = S_ISLNK(nx.stx_mode);
		f->is_dir = S_ISDIR(nx.stx_mode);
		f->is_reg = S_ISREG(nx.stx_mode);
		f->own_mount = nx.stx_mnt_id != f->mnt;   /* a file or directory mounted over */
	}
	f->ro_dir = f->ro_name = is_ro(dfd);
	struct statfs sfs;   /* procfs has no new names (asked only of a name that is not there) */
	f->procfs = !f->exists && fstatfs(dfd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
	return refusal_looks_at_name(f) ? look_at_name(rootfd, t, dfd, full) : LOOKED;
}

/* Look t up in the caller's root and decide it as a call of its own (refusal_decide()). */
static void judge_target(const struct refused *r, int rootfd, struct target *t, struct refusal *v)
{
	*v = (struct refusal){ 0 };
	if (!t->path)
		return;
	if (t->f.want == W_CONNECT) {
		judge_connect(rootfd, t, v);
		return;
	}
	enum looked l;
	/* a dangling symlink leads to another path: followed 8 times at most */
	for (int depth = 0; (l = look_up(rootfd, t)) == LOOKED_AGAIN; depth++)
		if (depth == 8)
			return;
	if (l == LOOKED)
		refusal_decide(&t->f, &r->policy, r->landlock_abi, v);
}

/* Count path (taken) in l for the record; under r->lock. Its entry, or NULL past the first
 * REFUSED_MAX_PATHS paths. */
static struct refused_path *count(struct refused_list *l, char *path, bool is_protected)
{
	_cleanup_free_ char *raw = path;
	char *p = printable_name(raw);
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->paths[i].path, p)) {
			l->paths[i].count++;
			free(p);
			return &l->paths[i];
		}
	if (l->n == REFUSED_MAX_PATHS) {
		free(p);
		return NULL;
	}
	if (!l->n)
		l->paths = xcalloc(REFUSED_MAX_PATHS, sizeof *l->paths);
	l->paths[l->n++] = (struct refused_path){ .path = p, .count = 1, .is_protected = is_protected };
	return &l->paths[l->n - 1];
}

/* Decide a whole call, in the kernel's order for renames and links, and count it; a path too
 * long to look up makes it a call not read. */
static void judge_call(struct refused *r, struct refused_call *c)
{
	struct refusal v[2] = { 0 };
	bool too_long = false;
	for (size_t i = 0; i < c->nt; i++) {
		judge_target(r, c->rootfd, &c->t[i], &v[i]);
		too_long |= v[i].verdict == REFUSAL_TOO_LONG;
	}
	bool hit[2] = { v[0].verdict == REFUSAL_YES && !too_long, v[1].verdict == REFUSAL_YES && !too_long };
	if (c->nt == 2 && !too_long)
		refusal_decide_pair(&c->t[0].f, &c->t[1].f, &v[0], &v[1], r->landlock_abi, hit);
	bool refused = false;
	struct refused_list *l = c->nr == __NR_connect ? &r->connects : &r->writes;
	pthread_mutex_lock(&r->lock);
	if (!r->abandoned) {
		for (size_t i = 0; i < c->nt; i++)
			if (hit[i] && v[i].path) {
				count(l, v[i].path, v[i].is_protected);
				v[i].path = NULL;
				refused = true;
			}
		/* one call is one write, even a rename that names two refused paths */
		l->total += refused;
		r->unread += too_long && !c->unread;
	}
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < c->nt; i++)
		free(v[i].path);
}

/* ---- calls that cannot be refused ---- */

/* The cell's mounts where the job may make and remove any name: the scratch (/tmp, /var/tmp,
 * $HOME, /dev/shm), the worktree and the --bind destinations, each one when it is a writable
 * mount whose root is where the job's Landlock rule for it is (a protected path or a read-only
 * bind inside is a mount of its own). Looked up once, at the first call, in the caller's root. */
static void find_free_mounts(struct refused *r, pid_t pid)
{
	const struct policy_ctx *s = &r->policy;
	r->free_found = true;
	char link[64];
	snprintf(link, sizeof link, "/proc/%d/root", (int)pid);
	_cleanup_close_ int rootfd = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return;
	size_t cap = sizeof r->free_mnt / sizeof r->free_mnt[0];
	const char *scratch[] = { CELL_TMP_PATH, CELL_VARTMP_PATH, s->home, "/dev/shm",
				  s->worktree_ro ? NULL : s->worktree };
	size_t n_scratch = sizeof scratch / sizeof scratch[0];
	for (size_t i = 0; i < n_scratch + s->n_mounts && r->n_free < cap; i++) {
		const struct policy_mount *m = i < n_scratch ? NULL : &s->mounts[i - n_scratch];
		const char *path = m ? (m->readonly ? NULL : m->destination) : scratch[i];
		_cleanup_free_ char *canon = NULL;
		_cleanup_close_ int fd = path ? open_in_root(rootfd, path, O_DIRECTORY, &canon, NULL) : -1;
		struct statx stx;
		if (fd >= 0 && statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) == 0 &&
		    (stx.stx_attributes_mask & stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) && !is_ro(fd))
			r->free_mnt[r->n_free++] = stx.stx_mnt_id;
	}
}

static bool is_free_mount(const struct refused *r, uint64_t mnt)
{
	for (size_t i = 0; i < r->n_free; i++)
		if (r->free_mnt[i] == mnt)
			return true;
	return false;
}

/* The directory the caller's path p names its last name in (p: relative to the directory
 * link, or absolute in the caller's root), opened O_PATH the way the kernel finds it when no
 * symlink is on the way and no ".." leaves where it starts; -1 otherwise, or when p ends in
 * '/'. *last: p's last name. */
static int open_parent(pid_t pid, const char *link, char *p, const char **last)
{
	char *slash = strrchr(p, '/');
	if (!slash) {
		*last = p;
		return open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (!slash[1])
		return -1;
	*last = slash + 1;
	char root[64];
	snprintf(root, sizeof root, "/proc/%d/root", (int)pid);
	_cleanup_close_ int base = open(p[0] == '/' ? root : link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (base < 0)
		return -1;
	*slash = '\0';
	const char *dir = p[0] == '/' ? (p[1] ? p + 1 : ".") : p;
	uint64_t resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (p[0] == '/' ? RESOLVE_IN_ROOT : RESOLVE_BENEATH);
	int fd = sys_openat2(base, dir, O_PATH | O_DIRECTORY | O_CLOEXEC, resolve);
	*slash = '/';
	return fd;
}

/* True when the call d cannot be refused, so that it needs no judgement: one name made or
 * removed (mkdir, mknod, symlink, unlink, rmdir) or opened, in a directory on a free mount
 * still writable (a removal or an open only when the name is not a mount point, an open only
 * when it is not a symlink to follow), the directory found from the caller's working
 * directory, its dirfd or its root with no symlink on the way. Read before the call goes on;
 * its cost grows with the path's depth only in the kernel's one lookup of it. */
static bool cannot_be_refused(struct refused *r, pid_t pid, const struct seccomp_data *d)
{
	const __u64 *a = d->args;
	int dirfd = AT_FDCWD;
	uint64_t addr, flags = 0;
	bool is_open = false, is_remove = false;
	switch (d->nr) {
#ifdef __NR_open
	case __NR_mkdir: case __NR_mknod: addr = a[0]; break;
	case __NR_rmdir: case __NR_unlink: addr = a[0], is_remove = true; break;
	case __NR_symlink: addr = a[1]; break;
	case __NR_open: addr = a[0], flags = a[1], is_open = true; break;
	case __NR_creat: addr = a[0], flags = O_CREAT | O_WRONLY | O_TRUNC, is_open = true; break;
#endif
	case __NR_mkdirat: case __NR_mknodat: dirfd = (int)(uint32_t)a[0], addr = a[1]; break;
	case __NR_unlinkat: dirfd = (int)(uint32_t)a[0], addr = a[1], is_remove = true; break;
	case __NR_symlinkat: dirfd = (int)(uint32_t)a[1], addr = a[2]; break;
	case __NR_openat: dirfd = (int)(uint32_t)a[0], addr = a[1], flags = a[2], is_open = true; break;
	default: return false;
	}
	if (!r->free_found)
		find_free_mounts(r, pid);
	if (!r->n_free)
		return false;
	_cleanup_free_ char *path = read_string(pid, addr);
	if (!path || !*path)
		return false;
	char link[64];
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
	else
		snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)pid, dirfd);
	const char *name;
	_cleanup_close_ int dfd = open_parent(pid, link, path, &name);
	if (dfd < 0 || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	struct statx dx, nx;
	if (statx(dfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &dx) < 0 || !is_free_mount(r, dx.stx_mnt_id) || is_ro(dfd))
		return false;
	/* a name made anew: EEXIST at worst; an O_EXCL create follows no symlink */
	if (!is_open && !is_remove)
		return true;
	if (is_open && (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return true;
	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_MNT_ID, &nx) < 0)
		return errno == ENOENT;
	/* a mount point (a protected path) refuses its removal (EBUSY); an open follows a symlink */
	return nx.stx_mnt_id == dx.stx_mnt_id && !(is_open && S_ISLNK(nx.stx_mode));
}

/* ---- taking calls ---- */

/* Take one call (already received into r->req): read it, let it go on; the call to judge,
 * or NULL. */
static struct refused_call *take(struct refused *r)
{
	struct seccomp_notif *req = r->req;
	struct seccomp_notif_resp *resp = r->resp;
	pid_t pid = (pid_t)req->pid;
	struct refused_call *c = xcalloc(1, sizeof *c);
	bool unread = false;
	if (!cannot_be_refused(r, pid, &req->data))
		collect(pid, &req->data, c, &unread);
	char link[64];
	snprintf(link, sizeof link, "/proc/%d/root", (int)pid);
	c->rootfd = c->nt ? open(link, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	int ns = -1;
	if (r->mntns < 0 && c->rootfd >= 0) {
		/* keep the cell's mounts for judging the last calls after the job has ended */
		snprintf(link, sizeof link, "/proc/%d/ns/mnt", (int)pid);
		ns = open(link, O_RDONLY | O_CLOEXEC);
	}
	if (c->nt && c->rootfd < 0)
		unread = true;
	c->unread = unread;
	memset(resp, 0, r->resp_size);
	resp->id = req->id;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	/* the answer reaches a caller that waited all along, so what we read was its own; when
	 * it was killed meanwhile (its pid maybe reused) the answer fails and we drop it all */
	int sent;
	while ((sent = ioctl(r->listener, SECCOMP_IOCTL_NOTIF_SEND, resp)) < 0 && errno == EINTR)
		;
	bool valid = sent == 0;
	if (ns >= 0 && valid)
		r->mntns = ns;   /* a caller that was still ours (its pid not reused) */
	else if (ns >= 0)
		close(ns);
	pthread_mutex_lock(&r->lock);
	r->looked += valid;
	r->unread += valid && unread;
	pthread_mutex_unlock(&r->lock);
	if (!valid || !c->nt || c->rootfd < 0) {
		call_free(c);
		return NULL;
	}
	return c;
}

static bool recv_call(struct refused *r)
{
	memset(r->req, 0, r->req_size);
	return ioctl(r->listener, SECCOMP_IOCTL_NOTIF_RECV, r->req) == 0;
}

bool refused_serve_one(struct refused *r)
{
	if (!recv_call(r))
		return errno == ENOENT || errno == EINTR;   /* ENOENT: the caller was killed meanwhile */
	struct refused_call *c = take(r);
	if (c) {
		judge_call(r, c);
		call_free(c);
	}
	return true;
}

static void on_wake(int sig) { (void)sig; }

static void *taker_main(void *arg)
{
	struct refused *r = arg;
	sigset_t wake;
	sigemptyset(&wake);
	sigaddset(&wake, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	for (;;) {
		pthread_mutex_lock(&r->lock);
		bool stop = r->stop;
		pthread_mutex_unlock(&r->lock);
		if (stop)
			break;
		if (!recv_call(r)) {
			if (errno == EINTR)
				continue;   /* woken to stop */
			if (errno != ENOENT)
				break;      /* EBADF, EFAULT...: not from a live listener */
			/* ENOENT: the caller was gone before we took it, or no process uses the filter
			 * any more (the job has ended): then RECV fails at once, and the listener
			 * says so with POLLHUP */
			struct pollfd pf = { .fd = r->listener, .events = POLLIN };
			if (poll(&pf, 1, 0) == 1 && (pf.revents & POLLHUP))
				break;
			continue;
		}
		struct refused_call *c = take(r);
		leave_if_abandoned();
		if (c) {
			judge_call(r, c);
			call_free(c);
		}
	}
	return NULL;
}

int refused_start(struct refused *r, const struct cell_spec *s)
{
	r->policy = spec_policy_ctx(s);
	r->landlock_abi = landlock_abi();
	/* SIGUSR1 wakes the taker from RECV: a handler without SA_RESTART, blocked elsewhere */
	struct sigaction sa = { .sa_handler = on_wake };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, NULL);
	int e = pthread_create(&r->taker, NULL, taker_main, r);
	r->taker_on = e == 0;
	if (!r->taker_on)
		return -e;   /* the caller serves the listener from its loop (judging inline) */
	return 0;
}

/* Join t within 5 s (waking it with SIGUSR1 when wake); false if it is stuck (in a lookup
 * on a file system that does not answer, say). */
static bool join_within(pthread_t t, bool wake)
{
	for (int i = 0; i < 500; i++) {
		if (wake)
			pthread_kill(t, SIGUSR1);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		if (pthread_timedjoin_np(t, NULL, &ts) == 0)
			return true;
	}
	return false;
}

void refused_stop(struct refused *r)
{
	if (!r->taker_on) {
		closep(&r->mntns);   /* the event loop served the calls, or none came */
		return;
	}
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_mutex_unlock(&r->lock);
	/* the signal may come just before the taker enters RECV: it is sent until it has left */
	if (!join_within(r->taker, true)) {
		/* leave the stuck thread what it uses (r's buffers and queue), record what we have */
		atomic_store(&taker_abandoned, true);
		pthread_mutex_lock(&r->lock);
		r->abandoned = true;
		pthread_mutex_unlock(&r->lock);
		pthread_detach(r->taker);
		free(r->off);
		r->off = xstrdup("incomplete: the write watch was stuck looking up a path (a file system that does not answer?)");
	}
	r->taker_on = false;
	closep(&r->mntns);
}

static void list_free(struct refused_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->paths[i].path);
	free(l->paths);
}

void refused_add_guest(struct refused *r, const char *msg, uint64_t total)
{
	json_t *a = msg ? json_loads(msg, 0, NULL) : NULL;
	free(r->off);
	r->off = NULL;
	for (size_t i = 0; i < json_array_size(a) && i < REFUSED_MAX_PATHS; i++) {
		json_t *e = json_array_get(a, i);
		const char *path = json_string_value(json_array_get(e, 0));
		json_int_t n = json_integer_value(json_array_get(e, 1));
		if (!path || n < 1)
			continue;
		struct refused_path *p = count(&r->writes, xstrdup(path), json_is_true(json_array_get(e, 2)));
		if (p)
			p->count += (uint64_t)n - 1;
	}
	json_decref(a);
	r->writes.total = total;
	r->looked = total; /* the guest's kernel tells its refusals only */
}

void refused_free(struct refused *r)
{
	refused_stop(r);
	closep(&r->sock);
	list_free(&r->writes);
	list_free(&r->connects);
	free(r->off);
	if (r->abandoned) {
		/* a detached thread may still hold the listener, the buffers and the queue */
		return;
	}
	closep(&r->listener);
	free(r->req);
	free(r->resp);
	pthread_mutex_destroy(&r->lock);
	refused_init(r);
}

bool refused_take_listener(struct refused *r)
{
	int32_t e = 0;
	int fd;
	ssize_t n = fd_recv(r->sock, MSG_DONTWAIT, &e, sizeof e, &fd);
	if (n == -EAGAIN)
		return false;
	closep(&r->sock);
	if (n != (ssize_t)sizeof e || e != 0 || fd < 0) {
		closep(&fd);
		free(r->off);
		r->off = n == 0 ? xstrdup("the job ended before the write watch was in place")
				: xasprintf("the cell could not install the write watch (%s); see 'warren selfcheck'",
					    strerror(e ? e : EPROTO));
		return false;
	}
	r->listener = fd;
	struct seccomp_notif_sizes sz = { 0 };
	if (sys_seccomp(SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0) {
		sz.seccomp_notif = sizeof(struct seccomp_notif);
		sz.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
	}
	r->req_size = sz.seccomp_notif > sizeof(struct seccomp_notif) ? sz.seccomp_notif : sizeof(struct seccomp_notif);
	r->resp_size = sz.seccomp_notif_resp > sizeof(struct seccomp_notif_resp) ? sz.seccomp_notif_resp
										  : sizeof(struct seccomp_notif_resp);
	r->req = xcalloc(1, r->req_size);
	r->resp = xcalloc(1, r->resp_size);
	return true;
}

/* ---- the record ---- */

static json_t *list_json(const struct refused_list *l)
{
	json_t *list = json_array();
	for (size_t i = 0; i < l->n; i++)
		json_array_append_new(list, json_pack("{s:s,s:I}", "path", l->paths[i].path, "count", (json_int_t)l->paths[i].count));
	return list;
}

/* The line of refused writes: the outside paths first (where to write instead), then the
 * protected ones. */
static void writes_line(const struct refused_list *w, const struct cell_spec *s)
{
	char *line = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&line, &len);
	if (!m)
		return;
	size_t outside = 0, prot = 0, shown = 0;
	for (size_t i = 0; i < w->n; i++)
		*(w->paths[i].is_protected ? &prot : &outside) += 1;
	fprintf(m, "%s refused %llu write%s", s->id, (unsigned long long)w->total, w->total == 1 ? "" : "s");
	if (outside) {
		fprintf(m, " outside the run: ");
		for (size_t i = 0; i < w->n && shown < 5; i++)
			if (!w->paths[i].is_protected)
				fprintf(m, "%s%s", shown++ ? ", " : "", w->paths[i].path);
		/* past the first REFUSED_MAX_PATHS paths, the rest are counted only */
		if (outside > shown || w->n == REFUSED_MAX_PATHS)
			fprintf(m, ", … (all in %s/result.json)", s->rundir);
		fprintf(m, " — write scratch files under $" CELL_TMPDIR_ENV " (" CELL_TMP_PATH " in the cell; ");
		if (s->limits.scratch)
			fprintf(m, "a tmpfs of the run's own");
		else
			fprintf(m, "%s/" RUN_TMP_DIR " on the host", s->rundir);
		fprintf(m, ")");
		if (s->worktree && !s->worktree_ro)
			fprintf(m, " or in the worktree %s", s->worktree);
	}
	if (prot) {
		fprintf(m, "%s", outside ? "; " : ": ");
		size_t k = 0;
		for (size_t i = 0; i < w->n && k < 5; i++)
			if (w->paths[i].is_protected)
				fprintf(m, "%s%s", k++ ? ", " : "", w->paths[i].path);
		fprintf(m, "%s %s read-only (the host runs %s after the run)", prot > k ? ", …" : "", prot == 1 ? "is" : "are",
			prot == 1 ? "it" : "them");
	}
	fclose(m);
	warn_line("%s", line);
	free(line);
}

/* The line of refused connects: the host's sockets the job tried, and where its own go. */
static void connects_line(const struct refused_list *c, const struct cell_spec *s)
{
	_cleanup_free_ char *paths = xstrdup("");
	for (size_t i = 0; i < c->n && i < 5; i++) {
		char *more = xasprintf("%s%s%s", paths, i ? ", " : "", c->paths[i].path);
		free(paths);
		paths = more;
	}
	warn_line("%s refused %llu connect%s to the host's unix sockets: %s%s — the cell cannot reach the host's services; "
		  "a socket the job binds itself under $" CELL_TMPDIR_ENV " or in the worktree works (docs/hardening.md, "
		  "\"Host sockets\")", s->id, (unsigned long long)c->total, c->total == 1 ? "" : "s", paths,
		  c->n > 5 || c->n == REFUSED_MAX_PATHS ? ", …" : "");
}

void refused_record(const struct refused *r, const struct cell_spec *s, json_t **extra, bool quiet)
{
	if (!*extra)
		*extra = json_object();
	if (s->policy.no_refused_writes || (r->off && !r->abandoned)) {
		json_object_set_new(*extra, "refused_writes", json_null());
		json_object_set_new(*extra, "refused_connects", json_null());
		json_object_set_new(*extra, "refused_writes_off",
				    json_string(r->off ? r->off : "not recorded (--no-refused-writes)"));
		if (r->off && !quiet && !r->by_cell &&
		    strcmp(r->off, "the job ended before the write watch was in place") != 0)
			warn_line("note: refused writes of %s were not recorded: %s", s->id, r->off);
		return;
	}
	json_object_set_new(*extra, "refused_writes", list_json(&r->writes));
	/* which way the refusals were seen: this watch, or the VM guest kernel's audit */
	json_object_set_new(*extra, "refused_writes_method", json_string(r->by_cell ? "audit" : "watch"));
	json_object_set_new(*extra, "refused_writes_total", json_integer((json_int_t)r->writes.total));
	json_object_set_new(*extra, "refused_connects", list_json(&r->connects));
	json_object_set_new(*extra, "refused_connects_total", json_integer((json_int_t)r->connects.total));
	json_object_set_new(*extra, "watched_write_calls", json_integer((json_int_t)r->looked));
	if (r->unread)
		json_object_set_new(*extra, "watched_write_calls_unread", json_integer((json_int_t)r->unread));
	if (r->abandoned)
		json_object_set_new(*extra, "refused_writes_incomplete", json_string(r->off));
	if (!quiet && r->unread)
		warn_line("note: %llu write calls of %s could not be read (a process that forbids it, or a path longer than PATH_MAX); refused writes among them are not counted",
			(unsigned long long)r->unread, s->id);
	if (!quiet && r->writes.total)
		writes_line(&r->writes, s);
	if (!quiet && r->connects.total)
		connects_line(&r->connects, s);
}
