/* spec.c - building a cell spec from what a user gave (command line or job file): the run
 * user, the paths, the environment (TMPDIR last), the state directory and the run id. */
#include <ctype.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cell/contract.h"
#include "cli/spec.h"
#include "run/limits.h"
#include "run/rundir.h"
#include "util/fs.h"

void envb_free(struct envb *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	e->v = NULL;
	e->n = e->cap = 0;
}

void env_set(struct envb *e, const char *kv)
{
	size_t klen = strcspn(kv, "=");
	for (size_t i = 0; i < e->n; i++) {
		if (strncmp(e->v[i], kv, klen) == 0 && e->v[i][klen] == '=') {
			free(e->v[i]);
			memmove(e->v + i, e->v + i + 1, (e->n - i - 1) * sizeof *e->v);
			e->n--;
			break;
		}
	}
	if (e->n + 2 > e->cap)
		e->v = xrealloc(e->v, (e->cap = e->cap ? e->cap * 2 : 16) * sizeof *e->v);
	e->v[e->n++] = xstrdup(kv);
	e->v[e->n] = NULL;
}

void env_setkv(struct envb *e, const char *k, const char *v)
{
	_cleanup_free_ char *kv = xasprintf("%s=%s", k, v);
	env_set(e, kv);
}

bool valid_env_name(const char *s, size_t len)
{
	if (!len || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

int env_add_checked(struct envb *e, const char *kv, const char *what, struct error *err)
{
	const char *eq = strchr(kv, '=');
	if (!eq || !valid_env_name(kv, (size_t)(eq - kv)))
		return error_set(err, 0, "%s: '%s' is not NAME=VALUE (NAME of letters, digits and _)", what, kv);
	if (strncmp(kv, CELL_TMPDIR_ENV "=", sizeof CELL_TMPDIR_ENV) == 0) {
		if (strcmp(eq + 1, CELL_TMPDIR_VALUE) != 0)
			fprintf(stderr, "warren: note: %s is always %s in the cell (it is the run's own scratch); %s ignored\n",
				CELL_TMPDIR_ENV, CELL_TMPDIR_VALUE, kv);
		return 0;
	}
	env_set(e, kv);
	return 0;
}

int env_add_file(struct envb *e, const char *file, struct error *err)
{
	_cleanup_free_ char *txt = read_file(file, NULL);
	if (!txt)
		return error_set(err, errno, "--env-file %s", file);
	int lineno = 0;
	for (char *save = NULL, *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		lineno++;
		while (isspace((unsigned char)*l))
			l++;
		if (!*l || *l == '#')
			continue;
		if (!strncmp(l, "export ", 7))
			l += 7;
		_cleanup_free_ char *what = xasprintf("--env-file %s, line %d", file, lineno);
		if (env_add_checked(e, l, what, err) < 0)
			return -EINVAL;
	}
	return 0;
}

int cellspec_user(struct cell_spec *s, const char *user, struct error *err)
{
	s->rootless = geteuid() != 0;
	s->host_uid = geteuid();
	s->host_gid = getegid();
	s->id_base = s->rootless ? 0 : CELL_ROOT_ID_BASE;
	if (s->rootless) {
		s->uid = s->host_uid;
		s->gid = s->host_gid;
	} else {
		s->uid = CELL_DEFAULT_UID;
		s->gid = CELL_DEFAULT_GID;
	}
	if (user) {
		unsigned long u, g;
		char *end;
		errno = 0;
		u = strtoul(user, &end, 10);
		g = u;
		if (*end == ':') {
			char *e2;
			g = strtoul(end + 1, &e2, 10);
			if (e2 == end + 1 || *e2)
				end = e2, g = ~0UL;
			else
				end = e2;
		}
		if (errno || end == user || *end || u >= CELL_ID_RANGE || g >= CELL_ID_RANGE)
			return error_set(err, 0, "--user: '%s' is not UID[:GID] with ids below %u", user, CELL_ID_RANGE);
		if (s->rootless && u != 0 && u != s->host_uid)
			return error_set(err, 0, "--user %s: a rootless run can be only you (uid %u) or 0 (root of the cell); run warren as root for other users",
					 user, s->host_uid);
		s->uid = (uid_t)u;
		s->gid = (gid_t)g;
		if (s->rootless && u == 0 && !strchr(user, ':'))
			s->gid = 0;
	}
	if (s->uid == 0) {
		s->user_name = xstrdup("root");
		s->home = xstrdup("/root");
	} else if (s->rootless && s->uid == s->host_uid) {
		struct passwd *pw = getpwuid(s->host_uid);
		s->user_name = xstrdup(pw ? pw->pw_name : "user");
		s->home = xasprintf(CELL_HOME_PARENT "/%s", s->user_name);
	} else {
		s->user_name = xstrdup(CELL_DEFAULT_USER);
		s->home = xstrdup(CELL_HOME_PARENT "/" CELL_DEFAULT_USER);
	}
	return 0;
}

/* Open the worktree w once, component by component, holding a descriptor all the way: what
 * is opened is what was checked, and a symlink on the way that someone else owns (who could
 * swap it: root running warren in alice's project) is refused instead of followed. The
 * canonical path comes from the descriptor. */
/* Is dir the caller's home directory, or one of its ancestors? The home as the password
 * database has it and as $HOME says. */
static const char *home_within(const char *dir)
{
	static char *homes[2];
	struct passwd *pw = getpwuid(getuid());
	free(homes[0]);
	free(homes[1]);
	homes[0] = pw && pw->pw_dir && *pw->pw_dir ? abs_path(pw->pw_dir) : NULL;
	homes[1] = getenv("HOME") && *getenv("HOME") ? abs_path(getenv("HOME")) : NULL;
	size_t dl = strlen(dir);
	for (int i = 0; i < 2; i++) {
		const char *h = homes[i];
		if (h && strcmp(h, "/") && !strncmp(h, dir, dl) && (h[dl] == '\0' || h[dl] == '/' || !strcmp(dir, "/")))
			return h;
	}
	return NULL;
}

/* The caller's home (or a directory holding it) as the worktree: refused when it only came
 * from the current directory (the job could change ~/.bashrc and read ~/.ssh), a note when
 * --work named it. */
static int home_check(const char *worktree, const char *work, struct error *err)
{
	const char *home = home_within(worktree);
	if (!home)
		return 0;
	bool is_home = !strcmp(home, worktree);
	if (!work)
		return error_set(err, 0, "the worktree would be %s (the current directory), %s: the job could change your dotfiles and read ~/.ssh; cd into a project directory, or pass --work %s if you mean it",
				 worktree, is_home ? "your home directory" : "a directory holding your home directory", worktree);
	fprintf(stderr, "warren: note: the worktree %s is %s: the job can change your dotfiles and read ~/.ssh\n", worktree,
		is_home ? "your home directory" : "a directory holding your home directory");
	return 0;
}

static int open_worktree(const char *w, int *out_fd, char **canon, struct error *err)
{
	char *rest = xstrdup(w);
	int cur = open(w[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int hops = 0, r = 0;
	char *p = rest;
	while (cur >= 0 && *p) {
		char *slash = strchr(p, '/');
		if (slash)
			*slash = '\0';
		char *comp = p;
		char *after = slash ? slash + 1 : p + strlen(p);
		if (!*comp || !strcmp(comp, ".")) {
			p = after;
			continue;
		}
		int fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			r = error_set(err, errno, "%s %s: cannot use it as the worktree (create it, or pass --work DIR)", "--work", w);
			closep(&fd);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlinkat(fd, "", target, sizeof target - 1);
			close(fd);
			if (st.st_uid != geteuid() && st.st_uid != 0) {
				r = error_set(err, 0, "the worktree path %s goes through the symlink %s, owned by uid %u; pass the real directory with --work",
					      w, comp, st.st_uid);
				break;
			}
			if (n < 0 || ++hops > 40) {
				r = error_set(err, n < 0 ? errno : ELOOP, "--work %s", w);
				break;
			}
			target[n] = '\0';
			char *next = xasprintf("%s/%s", target, after);
			if (target[0] == '/') {
				close(cur);
				cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			}
			free(rest);
			rest = p = next;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			r = error_set(err, ENOTDIR, "--work %s", w);
			break;
		}
		close(cur);
		cur = fd;
		p = after;
	}
	free(rest);
	if (r < 0 || cur < 0) {
		closep(&cur);
		return r < 0 ? r : error_set(err, errno, "--work %s", w);
	}
	char link[64], path[4096];
	snprintf(link, sizeof link, "/proc/self/fd/%d", cur);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0) {
		close(cur);
		return error_set(err, errno, "cannot find the path of the worktree %s", w);
	}
	path[n] = '\0';
	*out_fd = cur;
	*canon = xstrdup(path);
	return 0;
}

int cellspec_paths(struct cell_spec *s, const char *rootfs, const char *work, struct error *err)
{
	if (rootfs) {
		s->rootfs = abs_path(rootfs);
		if (!s->rootfs)
			return error_set(err, errno, "--rootfs %s: cannot use it as the image (give a directory holding a root file system)", rootfs);
		if (!is_dir(s->rootfs))
			return error_set(err, ENOTDIR, "--rootfs %s", rootfs);
		if (!strcmp(s->rootfs, "/"))
			return error_set(err, 0, "--rootfs /: the host's / is the default (read-only); leave out --rootfs");
	}
	const char *w = work ? work : ".";
	if (open_worktree(w, &s->worktree_fd, &s->worktree, err) < 0)
		return -EINVAL;
	if (!is_dir(s->worktree))
		return error_set(err, ENOTDIR, "--work %s", w);
	/* the system's own trees never become a job's worktree: neither these directories nor
	 * anything below the first group (the host would run what a job wrote there) */
	static const char *const below[] = { "/proc", "/sys", "/dev", "/etc", "/usr", "/boot", "/bin", "/sbin",
					     "/lib", "/lib32", "/lib64", "/libx32", "/run" };
	static const char *const exactly[] = { "/", "/tmp", "/var", "/var/tmp", "/var/lib", "/home", "/root", "/srv", "/opt", "/mnt", "/media" };
	bool refuse = false;
	for (size_t i = 0; i < sizeof exactly / sizeof exactly[0]; i++)
		refuse |= !strcmp(s->worktree, exactly[i]);
	for (size_t i = 0; i < sizeof below / sizeof below[0]; i++) {
		size_t n = strlen(below[i]);
		refuse |= !strncmp(s->worktree, below[i], n) && (s->worktree[n] == '/' || !s->worktree[n]);
	}
	if (refuse)
		return error_set(err, 0, "the worktree would be %s%s, a system directory a job may not have read-write; cd into a project directory or pass --work DIR",
				 s->worktree, work ? "" : " (the current directory)");
	if (home_check(s->worktree, work, err) < 0)
		return -EINVAL;
	/* the state directory as it is, or will be once made (it is made after this check) */
	_cleanup_free_ char *state = abs_path_would_be(s->statedir);
	size_t sl = strlen(state);
	if (!strncmp(s->worktree, state, sl) && (s->worktree[sl] == '/' || !s->worktree[sl] || sl == 1))
		return error_set(err, 0, "the worktree %s is inside warren's state directory %s; pass --work DIR elsewhere", s->worktree, state);
	size_t wl = strlen(s->worktree);
	if (!strncmp(state, s->worktree, wl) && state[wl] == '/')
		return error_set(err, 0, "warren's state directory %s is inside the worktree %s, where the job could change the record and the run directory; pass --state DIR outside it",
				 state, s->worktree);
	/* what the worktree's git runs from the worktree is read-only in the cell */
	policy_add_git_protect(&s->policy, s->worktree_fd, s->worktree);
	return 0;
}

void cellspec_env(struct cell_spec *s, struct envb *late)
{
	struct envb e = { 0 };
	env_setkv(&e, "PATH", CELL_PATH_ENV);
	env_setkv(&e, "HOME", s->home);
	env_setkv(&e, "USER", s->user_name);
	env_setkv(&e, "LOGNAME", s->user_name);
	env_setkv(&e, "SHELL", CELL_SHELL_PATH);
	const char *term = getenv("TERM");
	env_setkv(&e, "TERM", term && *term ? term : "dumb");
	const char *lang = getenv("LANG");
	if (lang && *lang)
		env_setkv(&e, "LANG", lang);
	for (size_t i = 0; i < late->n; i++)
		env_set(&e, late->v[i]);
	/* last, so nobody's TMPDIR wins */
	env_setkv(&e, CELL_TMPDIR_ENV, CELL_TMPDIR_VALUE);
	s->env = e.v;
}

int cellspec_finish(struct cell_spec *s, struct error *err)
{
	struct statedir sd;
	if (statedir_open(&sd, s->statedir, true, err) < 0)
		return -EINVAL;
	free(s->statedir);
	s->statedir = sd.path;
	sd.path = NULL;
	s->runs_fd = sd.runs;
	sd.runs = -1;
	memcpy(s->state_tag, sd.tag, sizeof sd.tag);
	statedir_close(&sd);
	/* the limits the run does not name: the defaults in force here */
	struct limit_host h;
	struct limits def;
	limits_host(&h, s->rootless);
	if (limits_defaults(&h, s->statedir, &def, NULL, err) < 0)
		return -EINVAL;
	limits_apply(&s->limits, &def, &h, s->keep);
	if (run_id_new(s->id) < 0)
		return error_set(err, errno, "cannot make a run id (getrandom)");
	s->rundir = xasprintf("%s/runs/%s", s->statedir, s->id);
	return 0;
}

int cellspec_driver(enum cell_driver *d, const char *name, struct error *err)
{
	if (!strcmp(name, "container") || !strcmp(name, "vm")) {
		*d = !strcmp(name, "vm") ? CELL_DRIVER_VM : CELL_DRIVER_CONTAINER;
		return 0;
	}
	return error_set(err, 0, "--driver: '%s' is not a driver; give container or vm", name);
}
