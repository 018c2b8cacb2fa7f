/* SPDX-License-Identifier: Apache-2.0 */
/* rundir.c - run directories: <state>/runs/run_<ULID>/ holds the scratch (tmp, var-tmp, home,
 * upper, work, root, etc) and the record (spec.json, result.json; lock: the supervisor's lock,
 * its pid inside). */
#include "run/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cell/gate.h"
#include "run/id.h"
#include "util/conf.h"
#include "util/fs.h"
#include "util/sys.h"
#include "util/strv.h"

static const char *const SCRATCH[] = { RUN_TMP_DIR, RUN_VARTMP_DIR, RUN_SHM_DIR, RUN_HOME_DIR, RUN_UPPER_DIR,
				       RUN_WORK_DIR, RUN_ROOT_DIR, RUN_LOWER_DIR, RUN_ETC_DIR, "scratch", NULL };

char *statedir_default(const char *opt)
{
	if (opt && *opt)
		return xstrdup(opt);
	const char *e = getenv("WARREN_STATE");
	if (e && *e)
		return xstrdup(e);
	e = conf_get("state", NULL); /* warren.conf's state = DIR */
	if (e)
		return xstrdup(e);
	if (geteuid() == 0)
		return xstrdup("/var/lib/warren");
	const char *x = getenv("XDG_STATE_HOME");
	if (x && *x == '/')
		return xasprintf("%s/warren", x);
	const char *home = getenv("HOME");
	if (!home || *home != '/') {
		struct passwd *pw = getpwuid(geteuid());
		home = pw ? pw->pw_dir : "/";
	}
	return xasprintf("%s/.local/state/warren", home);
}

char *statedir_registry(void)
{
	if (geteuid() == 0)
		return xstrdup("/var/lib/warren.known");
	const char *x = getenv("XDG_STATE_HOME");
	if (x && *x == '/')
		return xasprintf("%s/warren.known", x);
	const char *home = getenv("HOME");
	if (!home || *home != '/') {
		struct passwd *pw = getpwuid(geteuid());
		home = pw ? pw->pw_dir : "/";
	}
	return xasprintf("%s/.local/state/warren.known", home);
}

/* Add the state directory path (canonical) to the caller's registry: best effort (a registry
 * that cannot be written leaves the gate the defaults and the marks it walks up to). */
static void statedir_register(const char *path)
{
	_cleanup_free_ char *reg = statedir_registry();
	_cleanup_close_ int fd = open(reg, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == ENOENT) {   /* ~/.local/state not made yet: as the default state's parent */
		_cleanup_free_ char *dir = xstrdup(reg);
		*strrchr(dir, '/') = '\0';
		if (mkdir_p(dir, 0700) == 0)
			fd = open(reg, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return;
	_cleanup_free_ char *line = xasprintf("%s\n", path);
	if (flock(fd, LOCK_EX) == 0 && write_all(fd, line, strlen(line)) == 0)
		(void)fchmod(fd, 0600);
}

static int cmp_str(const void *a, const void *b);

int statedir_registry_prune(void)
{
	_cleanup_free_ char *reg = statedir_registry();
	_cleanup_close_ int fd = open(reg, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (flock(fd, LOCK_EX) < 0)   /* appenders wait (statedir_register) */
		return -errno;
	_cleanup_free_ char *txt = read_fd(fd, NULL);
	if (!txt)
		return -errno;
	_cleanup_free_ char **lines = NULL;
	size_t n = 0, cap = 0, gone = 0;
	char *save = NULL;
	for (char *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (n == cap)
			lines = xrealloc(lines, (cap = cap ? cap * 2 : 64) * sizeof *lines);
		lines[n++] = l;
	}
	if (n)
		qsort(lines, n, sizeof *lines, cmp_str);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	for (size_t i = 0; i < n; i++) {
		if (lines[i][0] == '/' && (i == 0 || strcmp(lines[i], lines[i - 1])) && gate_is_state_dir(lines[i]))
			fprintf(out, "%s\n", lines[i]);   /* once, and a state directory still */
		else
			gone++;
	}
	fclose(out);
	int r = 0;
	if (gone && (ftruncate(fd, 0) < 0 || pwrite(fd, buf, len, 0) != (ssize_t)len))
		r = -errno;
	free(buf);
	return r < 0 ? r : (int)gone;
}

static void known_add(char ***v, size_t *n, size_t *cap, char *p)
{
	if (!p)
		return;
	if (*n + 2 > *cap)
		*v = xrealloc(*v, (*cap = *cap ? *cap * 2 : 16) * sizeof **v);
	(*v)[(*n)++] = p;
	(*v)[*n] = NULL;
}

char **statedir_known(const char *given, bool registered)
{
	char **v = NULL;
	size_t n = 0, cap = 0;
	known_add(&v, &n, &cap, xstrdup(given ? given : ""));
	const char *e = getenv("WARREN_STATE");
	if (e && *e)
		known_add(&v, &n, &cap, abs_path(e));
	e = conf_get("state", NULL);
	if (e)
		known_add(&v, &n, &cap, abs_path(e));
	_cleanup_free_ char *def = statedir_default(NULL);
	known_add(&v, &n, &cap, abs_path(def));
	known_add(&v, &n, &cap, abs_path("/var/lib/warren"));
	known_add(&v, &n, &cap, abs_path("/run/warren-oci"));
	e = conf_get("oci.root", NULL);
	if (e)
		known_add(&v, &n, &cap, abs_path(e));
	_cleanup_free_ char *reg = registered ? statedir_registry() : NULL;
	_cleanup_free_ char *txt = reg ? read_file(reg, NULL) : NULL;
	char *save = NULL;
	for (char *l = txt ? strtok_r(txt, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
		if (l[0] == '/')
			known_add(&v, &n, &cap, xstrdup(l));
	return v;
}

/* An access ACL on fd: its named entries may grant write to others, whatever the mode says
 * (the group bits then show the ACL's mask). */
static bool has_acl(int fd)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
	return getxattr(p, "system.posix_acl_access", NULL, 0) > 0;
}

/* Who may change a directory on the way to the state directory: nobody but root and the
 * caller (its owner; group write only for root's group and without an ACL; others' write
 * only with the sticky bit, which keeps them from renaming what is not theirs). */
static int check_way(int fd, const struct stat *st, const char *path, struct error *err)
{
	uid_t me = geteuid();
	if (st->st_uid != 0 && st->st_uid != me)
		return error_set(err, 0, "the state directory lies under %s, which belongs to uid %u (neither you nor root), who could replace it; pass --state DIR with a directory of your own",
				 path, st->st_uid);
	bool sticky = st->st_mode & S_ISVTX;
	bool group_w = (st->st_mode & S_IWGRP) && !sticky && (st->st_gid != 0 || has_acl(fd));
	bool other_w = (st->st_mode & S_IWOTH) && !sticky;
	if (group_w || other_w)
		return error_set(err, 0, "the state directory lies under %s, which others may change (mode %04o%s); pass --state DIR with a directory of your own",
				 path, st->st_mode & 07777, has_acl(fd) ? " and an ACL" : "");
	return 0;
}

/* The state directory itself: the caller's (or, to read, root's) and writable by nobody else. */
static int check_state(int fd, const struct stat *st, const char *path, bool create, struct error *err)
{
	uid_t me = geteuid();
	if (st->st_uid != me && (create || st->st_uid != 0))
		return error_set(err, 0, "the state directory %s belongs to uid %u, not to you (uid %u); run warren as uid %u, or pass --state DIR with a directory of your own",
				 path, st->st_uid, me, st->st_uid);
	if ((st->st_mode & 022) || has_acl(fd))
		return error_set(err, 0, "the state directory %s is writable by others (mode %04o%s); run 'chmod go-w %s'%s",
				 path, st->st_mode & 07777, has_acl(fd) ? ", an ACL" : "", path, has_acl(fd) ? " and 'setfacl -b'" : "");
	return 0;
}

/* Open dfd/name as a directory without following a link; with create, make it first (0700). */
static int open_step(int dfd, const char *name, bool create, int flags)
{
	int fd = openat(dfd, name, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		/* 0700 whatever the caller's umask (0222 made it 0500: no state directory below) */
		if (mkdirat(dfd, name, 0700) == 0)
			(void)fchmodat(dfd, name, 0700, 0);
		else if (errno != EEXIST)
			return -1;
		fd = openat(dfd, name, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	return fd;
}

int statedir_open(struct statedir *sd, const char *path, bool create, struct error *err)
{
	*sd = (struct statedir){ .fd = -1, .runs = -1 };
	sd->path = abs_path_would_be(path);
	if (*sd->path != '/')
		return error_set(err, 0, "cannot find the state directory %s (pass --state DIR with an absolute path)", path);
	/* from / down, one component at a time, never through a link (the path was made
	 * symlink-free above; a link that appears since is refused, not followed) */
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	int r = 0;
	for (const char *p = sd->path; fd >= 0;) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		size_t n = strcspn(p, "/");
		size_t here_len = p - sd->path > 1 ? (size_t)(p - sd->path) - 1 : 1;
		_cleanup_free_ char *here = xasprintf("%.*s", (int)here_len, sd->path);
		_cleanup_free_ char *name = xasprintf("%.*s", (int)n, p);
		if (fstat(fd, &st) < 0 || (r = check_way(fd, &st, here, err)) < 0)
			break;
		int nfd = open_step(fd, name, create, O_PATH);
		close(fd);
		fd = nfd;
		p += n;
	}
	if (r < 0 || fd < 0) {
		closep(&fd);
		if (r == 0)
			r = error_set(err, errno, create ? "cannot create the state directory %s (pass --state DIR or set WARREN_STATE to a directory you can write)"
						  : "cannot open the state directory %s (pass --state DIR)", sd->path);
		statedir_close(sd);
		return r;
	}
	sd->fd = fd;
	if (fstat(fd, &st) < 0 || check_state(fd, &st, sd->path, create, err) < 0) {
		r = err->msg ? -EPERM : error_set(err, errno, "cannot use the state directory %s", sd->path);
		statedir_close(sd);
		return r;
	}
	sd->owner = st.st_uid;
	statedir_tag(&st, sd->tag);
	/* runs/ and every run directory are the invoker's alone (0700): no other host user may
	 * reach into a cell's /tmp or home, nor move directories under warren's reclaim */
	sd->runs = open_step(sd->fd, "runs", create, O_RDONLY);
	struct stat rst;
	if (sd->runs < 0 || fstat(sd->runs, &rst) < 0) {
		r = error_set(err, errno, "cannot %s %s/runs (pass --state DIR)", create ? "create" : "open", sd->path);
	} else if (rst.st_uid != sd->owner) {
		r = error_set(err, 0, "%s/runs belongs to uid %u, not to the state directory's owner (uid %u); remove it or pass --state DIR",
			      sd->path, rst.st_uid, sd->owner);
	} else if (create && faccessat(sd->runs, ".", W_OK, AT_EACCESS) < 0) {
		r = error_set(err, errno, "cannot write the state directory %s/runs (pass --state DIR)", sd->path);
	} else if ((rst.st_mode & 077) && rst.st_uid == geteuid() && fchmod(sd->runs, 0700) < 0) {
		r = error_set(err, errno, "cannot make %s/runs private (chmod 0700)", sd->path);
	} else if (create && sd->owner == geteuid()) {
		/* the mark the gate knows a state directory by (cell/gate.h), made once */
		int m = openat(sd->fd, GATE_STATE_MARK, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (m >= 0) {   /* new: known to the caller's registry too (a path may not hold it) */
			close(m);
			statedir_register(sd->path);
		}
	}
	if (r < 0)
		statedir_close(sd);
	return r;
}

void statedir_close(struct statedir *sd)
{
	closep(&sd->fd);
	closep(&sd->runs);
	free(sd->path);
	sd->path = NULL;
}

int rundir_open(const struct statedir *sd, const char *id, struct error *err)
{
	int fd = sys_openat2(sd->runs, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
			     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
	if (fd < 0) {
		error_set(err, errno, "cannot open the run directory %s/runs/%s%s", sd->path, id,
			  errno == ELOOP || errno == ENOTDIR ? " (it is not a directory: a symlink?)" : "");
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_uid != sd->owner) {
		error_set(err, 0, "the run directory %s/runs/%s belongs to uid %u, not to the state directory's owner (uid %u); not touched",
			  sd->path, id, st.st_uid, sd->owner);
		close(fd);
		return -1;
	}
	return fd;
}

void statedir_tag(const struct stat *st, char tag[9])
{
	unsigned long long h = 1469598103934665603ull;
	for (unsigned long long v[2] = { (unsigned long long)st->st_dev, (unsigned long long)st->st_ino }, i = 0; i < 2; i++)
		h = (h ^ v[i]) * 1099511628211ull;
	snprintf(tag, 9, "%08llx", (h ^ (h >> 32)) & 0xffffffffull);
}

char *rundir_cgroup_name(const char *tag, const char *id)
{
	return xasprintf("%s.%s", id, tag);
}

const char *rundir_cgroup_tag(const char *name)
{
	if (strlen(name) != RUN_ID_LEN + 9 || name[RUN_ID_LEN] != '.')
		return NULL;
	const char *tag = name + RUN_ID_LEN + 1;
	return run_id_valid(strndupa(name, RUN_ID_LEN)) && strspn(tag, "0123456789abcdef") == 8 ? tag : NULL;
}

bool rundir_cgroup_orphaned(const char *name, const char *owner)
{
	const char *tag = rundir_cgroup_tag(name);
	if (!tag || !owner || owner[0] != '/')
		return false;
	struct stat st;
	if (stat(owner, &st) < 0)
		return errno == ENOENT || errno == ENOTDIR;
	char now[9];
	statedir_tag(&st, now);
	return !S_ISDIR(st.st_mode) || strcmp(now, tag) != 0;
}

static int mkdir_owned(int dfd, const char *name, mode_t mode, uid_t uid, gid_t gid)
{
	if (mkdirat(dfd, name, mode) < 0)
		return -errno;
	/* mkdir applies the umask and never sets the sticky bit: set the mode exactly. */
	if (fchmodat(dfd, name, mode, 0) < 0)
		return -errno;
	if (geteuid() == 0 && fchownat(dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	return 0;
}

int rundir_create(struct cell_spec *s, struct error *err)
{
	if (mkdirat(s->runs_fd, s->id, 0700) < 0)
		return error_set(err, errno, "cannot create the run directory %s", s->rundir);
	int dfd = openat(s->runs_fd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* 0700 whatever the caller's umask (mkdir takes it off) */
	if (dfd >= 0)
		(void)fchmod(dfd, 0700);
	int lock = -1;
	int r = 0;
	const char *what = s->rundir;
	if (dfd < 0) {
		r = -errno;
		goto fail;
	}
	lock = openat(dfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		what = "lock";
		goto fail;
	}
	/* a warm cell's directory is not a run's until its take (rundir_taken) */
	if (s->warm)
		close(openat(dfd, RUNDIR_WARM, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	/* with a scratch limit (and in a warm cell) the cell's init makes the parts in a tmpfs
	 * over this directory (cell/container/root.c): nothing of them on the host's disk */
	if (s->limits.scratch || s->warm) {
		s->rundir_fd = dfd;
		return lock;
	}
	uid_t ru = spec_host_root_uid(s);
	gid_t rg = s->rootless ? s->host_gid : s->id_base;
	struct {
		const char *name;
		mode_t mode;
		uid_t uid;
		gid_t gid;
	} parts[] = {
		{ RUN_TMP_DIR, CELL_TMP_MODE, ru, rg },
		{ RUN_VARTMP_DIR, CELL_TMP_MODE, ru, rg },
		{ RUN_SHM_DIR, CELL_TMP_MODE, ru, rg },
		{ RUN_HOME_DIR, CELL_HOME_MODE, spec_host_uid(s), spec_host_gid(s) },
		{ RUN_ROOT_DIR, 0755, 0, 0 },
	};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		uid_t u = parts[i].uid, g = parts[i].gid;
		if (!strcmp(parts[i].name, RUN_ROOT_DIR)) {
			u = geteuid();
			g = getegid();
		}
		if ((r = mkdir_owned(dfd, parts[i].name, parts[i].mode, u, g)) < 0) {
			what = parts[i].name;
			goto fail;
		}
	}
	if (s->rootfs) {
		/* the overlay's root directory takes its owner from upper: cell root */
		if ((r = mkdir_owned(dfd, RUN_UPPER_DIR, 0755, ru, rg)) < 0 ||
		    (r = mkdir_owned(dfd, RUN_WORK_DIR, 0755, geteuid(), getegid())) < 0 ||
		    (r = mkdir_owned(dfd, RUN_LOWER_DIR, 0755, geteuid(), getegid())) < 0) {
			what = "upper";
			goto fail;
		}
	}
	s->rundir_fd = dfd;
	return lock;
fail:
	error_set(err, -r, "cannot prepare the run directory %s (%s)", s->rundir, what);
	closep(&lock);
	closep(&dfd);
	rm_tree_at(s->runs_fd, s->id);
	return r;
}

void rundir_taken(int rfd)
{
	unlinkat(rfd, RUNDIR_WARM, 0);
}

bool rundir_is_warm(int rfd)
{
	return faccessat(rfd, RUNDIR_WARM, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

bool rundir_has_scratch(int rfd)
{
	struct stat st;
	for (const char *const *p = SCRATCH; *p; p++)
		if (fstatat(rfd, *p, &st, AT_SYMLINK_NOFOLLOW) == 0)
			return true;
	return false;
}

int rundir_remove_stale_tmp(int rfd)
{
	int dfd = openat(rfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		closep(&dfd);
		return 0;
	}
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if ((e->d_type == DT_REG || e->d_type == DT_UNKNOWN) && is_atomic_tmp_name(e->d_name) &&
		    unlinkat(rfd, e->d_name, 0) == 0)
			n++;
	closedir(d);
	return n;
}

int rundir_reclaim(int rfd, const char *rundir, struct error *err)
{
	int first = 0;
	const char *bad = NULL;
	/* (a --scratch tmpfs is mounted by init in the cell's mount namespace: gone with the cell;
	 * what stays here is its empty mount point) */
	for (const char *const *p = SCRATCH; *p; p++) {
		int r = rm_tree_at(rfd, *p);
		if (r < 0 && !first) {
			first = r;
			bad = *p;
		}
	}
	if (first)
		return error_set(err, -first, "cannot reclaim %s/%s (run 'warren gc' to retry)", rundir, bad);
	return 0;
}

bool rundir_is_live(int rfd)
{
	return lock_held_at(rfd, "lock");
}

/* A record file is small; one larger than this is not warren's */
#define RUNDIR_FILE_MAX (16u << 20)

json_t *rundir_load_json(int rfd, const char *name)
{
	_cleanup_free_ char *txt = rundir_read(rfd, name);
	return txt ? json_loads(txt, 0, NULL) : NULL;
}

char *rundir_read(int rfd, const char *name)
{
	/* O_NONBLOCK: a FIFO planted under the name must not hang the reader */
	_cleanup_close_ int fd = openat(rfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > RUNDIR_FILE_MAX)
		return NULL;
	return read_fd(fd, NULL);
}

pid_t rundir_pid(int rfd)
{
	_cleanup_free_ char *s = rundir_read(rfd, "lock");
	if (!s || !*s) {  /* (an older warren's run directory: its own file) */
		free(s);
		s = rundir_read(rfd, "pid");
	}
	/* a whole line only: a reader that came in the middle of the write reads no pid */
	char *end;
	long pid = s ? strtol(s, &end, 10) : 0;
	return s && end != s && *end == '\n' && pid > 0 && pid <= INT32_MAX ? (pid_t)pid : 0;
}

int rundir_write_pid(int lock, pid_t pid)
{
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%d\n", (int)pid);
	ssize_t w = pwrite(lock, buf, (size_t)n, 0);
	return w == n ? 0 : w < 0 ? -errno : -EIO;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char **runs_list(const struct statedir *sd)
{
	size_t n = 0, cap = 16;
	char **v = xmalloc(cap * sizeof *v);
	int dfd = openat(sd->runs, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d && dfd >= 0)
		close(dfd);
	if (d) {
		struct dirent *e;
		struct stat st;
		while ((e = readdir(d))) {
			if (!run_id_valid(e->d_name))
				continue;
			/* a link or another user's directory is no run of this state's */
			if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			if (!S_ISDIR(st.st_mode) || st.st_uid != sd->owner) {
				warn_line("skipped %s/runs/%s: %s%u, not a run directory of this state's (owner uid %u)",
					sd->path, e->d_name, S_ISDIR(st.st_mode) ? "a directory of uid " : S_ISLNK(st.st_mode) ? "a symlink of uid " : "a file of uid ",
					st.st_uid, sd->owner);
				continue;
			}
			if (n + 2 > cap)
				v = xrealloc(v, (cap *= 2) * sizeof *v);
			v[n++] = xstrdup(e->d_name);
		}
		closedir(d);
	}
	qsort(v, n, sizeof *v, cmp_str);
	v[n] = NULL;
	return v;
}

void runs_list_free(char **ids)
{
	strv_free(ids);
}

char *runs_resolve(const struct statedir *sd, const char *prefix, struct error *err)
{
	const char *state = sd->path;
	char **ids = runs_list(sd);
	char *found = NULL;
	size_t matches = 0;
	if (!prefix || !*prefix) {
		size_t n = 0;
		while (ids[n])
			n++;
		if (n)
			found = xstrdup(ids[n - 1]);
		else
			error_set(err, 0, "there are no runs in %s/runs yet", state);
		runs_list_free(ids);
		return found;
	}
	_cleanup_free_ char *want = strncmp(prefix, RUN_ID_PREFIX, 4) == 0 ? xstrdup(prefix)
									  : xasprintf(RUN_ID_PREFIX "%s", prefix);
	for (char *p = want; *p; p++)
		if (*p >= 'a' && *p <= 'z' && p >= want + 4)
			*p = (char)(*p - 'a' + 'A');
	for (char **p = ids; *p; p++) {
		if (strncmp(*p, want, strlen(want)) == 0) {
			matches++;
			if (!found)
				found = xstrdup(*p);
		}
	}
	runs_list_free(ids);
	if (matches == 1)
		return found;
	free(found);
	if (matches == 0)
		error_set(err, 0, "no run matches '%s' in %s/runs (see 'warren ps' or 'ls %s/runs')", prefix, state, state);
	else
		error_set(err, 0, "'%s' matches %zu runs; give more characters of the id", prefix, matches);
	return NULL;
}
