/* rundir.c - run directories: <state>/runs/run_<ULID>/ holds the scratch (tmp, var-tmp, home,
 * upper, work, root, etc) and the record (spec.json, result.json, pid, lock). */
#include "run/rundir.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/mount.h>
#include <unistd.h>

#include "cell/contract.h"
#include "util/fs.h"

static const char *const SCRATCH[] = { RUN_TMP_DIR, RUN_VARTMP_DIR, RUN_HOME_DIR, RUN_UPPER_DIR,
				       RUN_WORK_DIR, RUN_ROOT_DIR, RUN_LOWER_DIR, RUN_ETC_DIR, "scratch", NULL };

char *statedir_default(const char *opt)
{
	if (opt && *opt)
		return xstrdup(opt);
	const char *e = getenv("WARREN_STATE");
	if (e && *e)
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

int statedir_prepare(const char *state, struct error *err)
{
	/* runs/ and every run directory are the invoker's alone (0700): no other host user may
	 * reach into a cell's /tmp or home, nor move directories under warren's reclaim */
	_cleanup_free_ char *runs = xasprintf("%s/runs", state);
	int r = mkdir_p(runs, 0700);
	if (r < 0)
		return error_set(err, -r, "cannot create the state directory %s (pass --state DIR or set WARREN_STATE to a directory you can write)", runs);
	struct stat st;
	if (stat(state, &st) < 0)
		return error_set(err, errno, "cannot use the state directory %s", state);
	if (st.st_uid != geteuid())
		return error_set(err, 0, "the state directory %s belongs to uid %u, not to you (uid %u); pass --state DIR with a directory of your own",
				 state, st.st_uid, geteuid());
	if (st.st_mode & 022)
		return error_set(err, 0, "the state directory %s is writable by others (mode %04o); run 'chmod go-w %s'",
				 state, st.st_mode & 07777, state);
	if (access(runs, W_OK) < 0)
		return error_set(err, errno, "cannot write the state directory %s (pass --state DIR)", runs);
	struct stat rst;
	if (stat(runs, &rst) == 0 && (rst.st_mode & 077) && rst.st_uid == geteuid() && chmod(runs, 0700) < 0)
		return error_set(err, errno, "cannot make %s private (chmod 0700)", runs);
	return 0;
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

int rundir_create(const struct cell_spec *s, struct error *err)
{
	if (mkdir(s->rundir, 0700) < 0)
		return error_set(err, errno, "cannot create the run directory %s", s->rundir);
	_cleanup_close_ int dfd = open(s->rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
		{ RUN_HOME_DIR, CELL_HOME_MODE, spec_host_uid(s), spec_host_gid(s) },
		{ RUN_ROOT_DIR, 0755, 0, 0 },
	};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		uid_t u = parts[i].uid, g = parts[i].gid;
		if (i >= 3) {
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
	return lock;
fail:
	error_set(err, -r, "cannot prepare the run directory %s (%s)", s->rundir, what);
	if (lock >= 0)
		close(lock);
	rm_tree(s->rundir);
	return r;
}

bool rundir_has_scratch(const char *rundir)
{
	for (const char *const *p = SCRATCH; *p; p++) {
		_cleanup_free_ char *path = xasprintf("%s/%s", rundir, *p);
		if (path_exists(path))
			return true;
	}
	return false;
}

int rundir_reclaim(const char *rundir, struct error *err)
{
	_cleanup_close_ int dfd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : error_set(err, errno, "cannot open the run directory %s", rundir);
	int first = 0;
	const char *bad = NULL;
	/* (a --scratch tmpfs is mounted by init in the cell's mount namespace: gone with the cell;
	 * what stays here is its empty mount point) */
	for (const char *const *p = SCRATCH; *p; p++) {
		int r = rm_tree_at(dfd, *p);
		if (r < 0 && !first) {
			first = r;
			bad = *p;
		}
	}
	if (first)
		return error_set(err, -first, "cannot reclaim %s/%s (run 'warren gc' to retry)", rundir, bad);
	return 0;
}

bool rundir_is_live(const char *rundir)
{
	_cleanup_free_ char *p = xasprintf("%s/lock", rundir);
	_cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		return errno == EWOULDBLOCK;
	return false;
}

pid_t rundir_pid(const char *rundir)
{
	_cleanup_free_ char *p = xasprintf("%s/pid", rundir);
	_cleanup_free_ char *s = read_file(p, NULL);
	return s ? (pid_t)atoi(s) : 0;
}

int rundir_write_pid(const char *rundir, pid_t pid)
{
	_cleanup_free_ char *p = xasprintf("%s/pid", rundir);
	char buf[32];
	int n = snprintf(buf, sizeof buf, "%d\n", (int)pid);
	return write_file(p, buf, (size_t)n);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

char **runs_list(const char *state)
{
	_cleanup_free_ char *runs = xasprintf("%s/runs", state);
	size_t n = 0, cap = 16;
	char **v = xmalloc(cap * sizeof *v);
	DIR *d = opendir(runs);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!run_id_valid(e->d_name))
				continue;
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
	if (!ids)
		return;
	for (char **p = ids; *p; p++)
		free(*p);
	free(ids);
}

char *runs_resolve(const char *state, const char *prefix, struct error *err)
{
	char **ids = runs_list(state);
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
