/* SPDX-License-Identifier: Apache-2.0 */
/* spec.c - building a cell spec from what a user gave (command line or job file): the run
 * user, the paths, the environment (TMPDIR last), the state directory and the run id; a job
 * file loaded with its mistakes said, and its cell spec as `warren job run` makes it. */
#include <ctype.h>
#include <libgen.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "cell/contract.h"
#include "cell/mounts.h"
#include "cli/config.h"
#include "cli/history.h"
#include "cli/spec.h"
#include "image/config.h"
#include "image/store.h"
#include "job/jobfile.h"
#include "run/id.h"
#include "run/limits.h"
#include "run/rundir.h"
#include "util/cpus.h"
#include "util/fs.h"
#include "util/strv.h"
#include "util/sys.h"
#include "util/words.h"
#include "util/units.h"

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
			warn_line("note: %s is always %s in the cell (it is the run's own scratch); %s ignored",
				CELL_TMPDIR_ENV, CELL_TMPDIR_VALUE, kv);
		return 0;
	}
	env_set(e, kv);
	return 0;
}

int env_add_arg(struct envb *e, const char *arg, const char *what, struct error *err)
{
	if (strchr(arg, '=') || !valid_env_name(arg, strlen(arg)))
		return env_add_checked(e, arg, what, err);
	const char *v = getenv(arg);   /* NAME alone: the caller's, or nothing when unset */
	if (!v)
		return 0;
	_cleanup_free_ char *kv = xasprintf("%s=%s", arg, v);
	return env_add_checked(e, kv, what, err);
}

/* The quoted part of an env file's value at *p (past the quote q), into o; *p after the
 * closing quote. -1 when it does not close on the line. */
static int env_quoted(const char **p, char q, char *o)
{
	const char *s = *p;
	for (; *s && *s != q; s++) {
		if (q == '"' && *s == '\\' && s[1] && strchr("\"\\$`n", s[1])) {
			s++;
			*o++ = *s == 'n' ? '\n' : *s;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	if (*s != q)
		return -1;
	*p = s + 1;
	return 0;
}

int env_file_line(const char *line, char **kv, const char **why)
{
	*kv = NULL;
	const char *p = line + strspn(line, " \t");
	if (!*p || *p == '#')
		return 1;
	if (!strncmp(p, "export", 6) && (p[6] == ' ' || p[6] == '\t'))
		p += 6 + strspn(p + 6, " \t");
	size_t nl = strcspn(p, "= \t");
	if (!p[nl] || p[nl + strspn(p + nl, " \t")] == '#') {
		*kv = strndup(p, nl);   /* NAME alone */
		return 0;
	}
	if (p[nl] != '=') {
		*why = "is not NAME=VALUE (no blanks around =)";
		return -1;
	}
	const char *v = p + nl + 1;
	char *out = xmalloc(nl + 2 + strlen(v) + 1);
	memcpy(out, p, nl + 1);
	char *o = out + nl + 1;
	if (*v == '"' || *v == '\'') {
		v++;
		if (env_quoted(&v, v[-1], o) < 0) {
			free(out);
			*why = "has a quote that does not close on its line";
			return -1;
		}
		v += strspn(v, " \t");
		if (*v && *v != '#') {
			free(out);
			*why = "has more after the closing quote";
			return -1;
		}
	} else {
		size_t n = 0;   /* bare: up to a comment that follows a blank, trailing blanks dropped */
		while (v[n] && !(v[n] == '#' && n && (v[n - 1] == ' ' || v[n - 1] == '\t')))
			n++;
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
			n--;
		memcpy(o, v, n);
		o[n] = '\0';
	}
	*kv = out;
	return 0;
}

int env_add_file(struct envb *e, const char *file, struct error *err)
{
	_cleanup_free_ char *txt = read_file(file, NULL);
	if (!txt)
		return error_set(err, errno, "--env-file %s", file);
	int lineno = 0;
	for (char *save = txt, *l; (l = strsep(&save, "\n"));) {
		lineno++;
		_cleanup_free_ char *kv = NULL;
		const char *why = NULL;
		int r = env_file_line(l, &kv, &why);
		if (r < 0)
			return error_set(err, 0, "--env-file %s, line %d %s; write NAME=VALUE, NAME=\"VALUE\" or NAME='VALUE'", file, lineno, why);
		_cleanup_free_ char *what = xasprintf("--env-file %s, line %d", file, lineno);
		if (r == 0 && env_add_arg(e, kv, what, err) < 0)
			return -EINVAL;
	}
	return 0;
}

int result_file_check(const char *file, struct error *err)
{
	if (!file)
		return 0;
	_cleanup_free_ char *copy = xstrdup(file);
	const char *dir = dirname(copy);
	if (!is_dir(dir))
		return error_set(err, 0, "--result %s: %s is not a directory; name a file in an existing directory", file, dir);
	if (access(dir, W_OK) < 0)
		return error_set(err, errno, "--result %s: cannot write in %s", file, dir);
	if (is_dir(file))
		return error_set(err, 0, "--result %s: is a directory; name a file", file);
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

/* Is dir the caller's home directory, or one of its ancestors? The home as the password
 * database has it and as $HOME says. */
static const char *home_within(const char *dir)
{
	/* the caller's homes, learned once a process (a warm cell's take asks again: ~0.07 ms of
	 * passwd lookup and path resolution less before its job starts) */
	static char *homes[2];
	static bool known;
	if (!known) {
		struct passwd *pw = getpwuid(getuid());
		homes[0] = pw && pw->pw_dir && *pw->pw_dir ? abs_path(pw->pw_dir) : NULL;
		homes[1] = getenv("HOME") && *getenv("HOME") ? abs_path(getenv("HOME")) : NULL;
		known = true;
	}
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
	warn_line("note: the worktree %s is %s: the job can change your dotfiles and read ~/.ssh", worktree,
		is_home ? "your home directory" : "a directory holding your home directory");
	return 0;
}

/* Open the path w once (a worktree, a bind's source), component by component, holding a
 * descriptor all the way: what is opened is what was checked, and a symlink on the way that
 * someone else owns (who could swap it: root running warren in alice's project) is refused
 * instead of followed. The canonical path comes from the descriptor. opt names the option
 * (--work, --bind...) and noun the thing ("the worktree") in messages; files_ok: the last
 * component may be a regular file. */
static int open_checked(const char *w, const char *opt, const char *noun, bool files_ok, int *out_fd, char **canon,
			struct error *err)
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
			r = error_set(err, 0, "%s %s: %s; create it, or name an existing %s as %s", opt, w, strerror(errno),
				      files_ok ? "path" : "directory", noun);
			closep(&fd);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlinkat(fd, "", target, sizeof target - 1);
			close(fd);
			if (st.st_uid != geteuid() && st.st_uid != 0) {
				r = error_set(err, 0, "%s %s: the path of %s goes through the symlink %s, owned by uid %u; give the real path",
					      opt, w, noun, comp, st.st_uid);
				break;
			}
			if (n < 0 || ++hops > 40) {
				r = error_set(err, n < 0 ? errno : ELOOP, "%s %s", opt, w);
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
		if (!S_ISDIR(st.st_mode) && !(files_ok && S_ISREG(st.st_mode) && !*after)) {
			close(fd);
			r = error_set(err, ENOTDIR, "%s %s", opt, w);
			break;
		}
		close(cur);
		cur = fd;
		p = after;
	}
	free(rest);
	if (r < 0 || cur < 0) {
		closep(&cur);
		return r < 0 ? r : error_set(err, errno, "%s %s", opt, w);
	}
	char link[64], path[4096];
	snprintf(link, sizeof link, "/proc/self/fd/%d", cur);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n <= 0) {
		close(cur);
		return error_set(err, errno, "cannot find the path of %s %s", noun, w);
	}
	path[n] = '\0';
	*out_fd = cur;
	*canon = xstrdup(path);
	return 0;
}

/* The gate's answer (cell/gate.h) for the path open at fd, canonical canon, named by face for
 * use u; opt names it in the message. */
static int gate(const struct cell_spec *s, enum gate_face face, int fd, const char *canon, const char *name, enum gate_use u,
		const char *opt, struct error *err)
{
	const struct gate_ask a = { .face = face, .uid = geteuid(), .anchor = face == GATE_CLI ? NULL : s->anchor };
	/* the registry of the caller's state directories where the gate reads more than the run's */
	_cleanup_strv_ char **states = statedir_known(s->statedir, u == GATE_ROOT || face != GATE_CLI);
	return gate_check(fd, canon, name, &a, u, (const char *const *)states, opt, err);
}

/* The root file system rootfs, opened once and put to the gate. */
static int cellspec_rootfs(struct cell_spec *s, const char *rootfs, struct error *err)
{
	const char *opt = s->root_face == GATE_CLI ? "--rootfs" : s->root_face == GATE_BUNDLE ? "root.path" : "rootfs";
	_cleanup_free_ char *abs = abs_path(rootfs);
	if (!abs)
		return error_set(err, errno, "%s %s: cannot use it as the image (give a directory holding a root file system)", opt, rootfs);
	if (!is_dir(abs))
		return error_set(err, 0, "%s %s: not a directory; give the directory of an unpacked image (a root file system: bin/, etc/, usr/ ...)", opt, rootfs);
	if (!json_text_ok(abs)) {
		_cleanup_free_ char *pn = printable_name(abs);
		return error_set(err, 0, "%s %s: its path is not UTF-8, which the run's record (JSON) cannot hold; rename it", opt, pn);
	}
	if (!strcmp(abs, "/"))
		return error_set(err, 0, "%s /: the host's / is the default (read-only); leave out --rootfs", opt);
	_cleanup_close_ int fd = -1;
	if (open_checked(abs, opt, "the image", false, &fd, &s->rootfs, err) < 0)
		return -EINVAL;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return error_set(err, errno, "%s %s", opt, rootfs);
	s->rootfs_dev = st.st_dev;   /* what is mounted must be what was judged (cell/spec.h) */
	s->rootfs_ino = st.st_ino;
	return gate(s, s->root_face, fd, s->rootfs, NULL, GATE_ROOT, opt, err);
}

int cellspec_paths(struct cell_spec *s, const char *rootfs, const char *work, struct error *err)
{
	if (rootfs && cellspec_rootfs(s, rootfs, err) < 0)
		return -EINVAL;
	if (work && !strcmp(work, CELLSPEC_WORK_NONE)) {
		s->worktree_fd = -1;   /* no worktree: the job starts in its home (or --workdir) */
		if (s->policy.nprotect)
			return error_set(err, 0, "--protect %s: with --work none there is no worktree to protect a path of; leave out --protect",
					 s->policy.protect[0]);
		if (s->worktree_ro)
			return error_set(err, 0, "--work-ro: with --work none there is no worktree to make read-only; leave out one of them");
		return 0;
	}
	const char *w = work ? work : ".";
	struct stat cwd;
	if (!work && stat(".", &cwd) < 0 && errno != ENOENT)
		return error_set(err, errno, "the current directory (the default worktree) cannot be looked at; cd into a directory of yours, or pass --work DIR");
	if (!work && (stat(".", &cwd) < 0 || cwd.st_nlink == 0))
		return error_set(err, 0, "the current directory (the default worktree) was deleted; cd into a directory that exists, or pass --work DIR");
	if (open_checked(w, "--work", "the worktree", false, &s->worktree_fd, &s->worktree, err) < 0)
		return -EINVAL;
	if (!json_text_ok(s->worktree)) {
		_cleanup_free_ char *pn = printable_name(s->worktree);
		return error_set(err, 0, "the worktree %s: its path is not UTF-8, which the run's record (JSON) cannot hold; rename it, or pass --work DIR with a UTF-8 path", pn);
	}
	if (!is_dir(s->worktree))
		return error_set(err, ENOTDIR, "--work %s", w);
	if (!work && path_is_system_tree(s->worktree))
		return error_set(err, 0, "the worktree would be %s (the current directory), a system directory a job may not have read-write; cd into a project directory or pass --work DIR",
				 s->worktree);
	const char *opt = s->work_face == GATE_CLI ? "--work" : "work";
	if (gate(s, s->work_face, s->worktree_fd, s->worktree, NULL, GATE_WORKTREE, opt, err) < 0 || home_check(s->worktree, work, err) < 0)
		return -EINVAL;
	/* what the worktree's git runs from the worktree is read-only in the cell */
	policy_add_git_protect(&s->policy, s->worktree_fd, s->worktree);
	return 0;
}

/* The checked source src of a bind (opt: --bind, --ro-bind, --externals): refused when it is
 * a tree no bind may show, or one a job may not write when rw; a note when it is the
 * caller's home. */
bool run_plain_file(const char *src, int fd)
{
	struct stat st;
	return (!strncmp(src, "/run/", 5) || !strncmp(src, "/var/run/", 9)) && fstat(fd, &st) == 0 &&
	       S_ISREG(st.st_mode) && st.st_nlink == 1;
}

static int bind_source_check(const struct cell_spec *s, enum gate_face face, const char *opt, const char *given, const char *src,
			     int fd, bool ro, struct error *err)
{
	/* the path as given, and where it led when a symlink was on the way */
	_cleanup_free_ char *name = strcmp(given, src) ? xasprintf("%s (that is %s)", given, src) : xstrdup(src);
	if (gate(s, face, fd, src, name, ro ? GATE_BIND_RO : GATE_BIND, opt, err) < 0)
		return -EINVAL;
	const char *home = home_within(src);
	if (home)
		warn_line("note: %s %s is %s: the job can %s your dotfiles and ~/.ssh", opt, name,
			!strcmp(home, src) ? "your home directory" : "a directory holding your home directory", ro ? "read" : "change and read");
	return 0;
}

char *bind_dst_instead(const char *dst, const char *src, const char *home)
{
	static const char *const scratch[] = { CELL_VARTMP_PATH, CELL_TMP_PATH };
	for (size_t i = 0; home && i < sizeof scratch / sizeof *scratch; i++) {
		size_t n = strlen(scratch[i]);
		if (!path_beneath(dst, scratch[i]))
			continue;
		if (dst[n])
			return xasprintf("%s%s", home, dst + n);
		/* the scratch itself: HOME/<the source's last name> */
		size_t end = strlen(src);
		while (end > 1 && src[end - 1] == '/')
			end--;
		size_t start = end;
		while (start && src[start - 1] != '/')
			start--;
		bool plain = end > start && strncmp(src + start, ".", end - start) && strncmp(src + start, "..", end - start);
		return plain ? xasprintf("%s/%.*s", home, (int)(end - start), src + start) : xasprintf("%s/data", home);
	}
	return NULL;
}

int cellspec_add_bind(struct cell_spec *s, enum gate_face face, const char *opt, const char *src, const char *dst, bool ro,
		      struct error *err)
{
	if (!json_text_ok(src) || !json_text_ok(dst)) {
		_cleanup_free_ char *ps = printable_name(src), *pd = printable_name(dst);
		return error_set(err, 0, "%s %s:%s: a path that is not UTF-8, which the run's record (JSON) cannot hold; rename it", opt, ps, pd);
	}
	const char *why = NULL;
	_cleanup_free_ char *d = mount_dst_normalise(dst, &why);
	if (!d)
		return error_set(err, 0, "%s %s:%s: the destination %s: %s", opt, src, dst, dst, why);
	bool pod = face == GATE_BUNDLE;
	why = mount_dst_refused_for(d, s, pod);
	if (why) {
		/* the scratch: a destination of the cell's own that a bind may have instead */
		_cleanup_free_ char *instead = bind_dst_instead(d, src, s->home);
		if (instead && !mount_dst_refused(instead, s))
			return error_set(err, 0, "%s %s:%s: %s; bind it elsewhere, e.g. %s %s:%s", opt, src, dst, why, opt, src, instead);
		return error_set(err, 0, "%s %s:%s: %s", opt, src, dst, why);
	}
	struct cell_mount m = { .readonly = ro, .kind = CELL_MOUNT_BIND, .fd = -1, .pod = pod };
	if (open_checked(src, opt, "a bind source", true, &m.fd, &m.source, err) < 0)
		return -EINVAL;
	if (bind_source_check(s, face, opt, src, m.source, m.fd, ro, err) < 0) {
		close(m.fd);
		free(m.source);
		return -EINVAL;
	}
	m.destination = d;
	d = NULL;
	spec_add_mount(s, m);
	return 0;
}

int cellspec_add_bind_arg(struct cell_spec *s, enum gate_face face, const char *opt, const char *arg, bool ro, struct error *err)
{
	_cleanup_free_ char *src = NULL, *dst = NULL;
	mount_arg_split(arg, &src, &dst);
	if (!*src)
		return error_set(err, 0, "%s '%s': give SRC[:DST], a host path and where it goes in the cell", opt, arg);
	/* DST defaults to SRC as the caller wrote it, made absolute */
	if (!strchr(arg, ':') && src[0] != '/') {
		free(dst);
		dst = abs_path_would_be(src);
	}
	return cellspec_add_bind(s, face, opt, src, dst, ro, err);
}

static int cellspec_cell_names(struct cell_spec *s, const char *workdir, const char *hostname, struct error *err)
{
	if (hostname) {
		if (!hostname_valid(hostname))
			return error_set(err, 0, "--hostname '%s': not a host name (1-63 letters, digits and '-', not starting or ending with '-')",
					 hostname);
		s->hostname = xstrdup(hostname);
	}
	if (workdir) {
		const char *why = NULL;
		s->workdir = mount_dst_normalise(workdir, &why);
		if (!s->workdir)
			return error_set(err, 0, "--workdir %s: %s", workdir, why);
	}
	return 0;
}

bool cell_opts_take(struct cell_opts *o, const char *name, const char *value)
{
	if (!strcmp(name, "bind") || !strcmp(name, "ro-bind")) {
		o->binds = xrealloc(o->binds, (o->n_binds + 1) * sizeof *o->binds);
		o->binds[o->n_binds++] = (struct cell_opts_bind){ value, name[0] == 'r' ? "--ro-bind" : "--bind", name[0] == 'r', GATE_CLI };
	} else if (!strcmp(name, "externals")) {
		o->externals = value;
	} else if (!strcmp(name, "workdir")) {
		o->workdir = value;
	} else if (!strcmp(name, "hostname")) {
		o->hostname = value;
	} else {
		return false;
	}
	return true;
}

int cellspec_cell_opts(struct cell_spec *s, const struct cell_opts *o, struct error *err)
{
	for (size_t i = 0; i < o->n_binds; i++)
		if (cellspec_add_bind_arg(s, o->binds[i].face, o->binds[i].opt, o->binds[i].arg, o->binds[i].ro, err) < 0)
			return -EINVAL;
	if (o->externals && cellspec_add_bind(s, o->externals_face, o->externals_face == GATE_CLI ? "--externals" : "externals",
					      o->externals, CELL_EXTERNALS_PATH, true, err) < 0)
		return -EINVAL;
	return cellspec_cell_names(s, o->workdir, o->hostname, err);
}

void cell_opts_free(struct cell_opts *o)
{
	free(o->binds);
	o->binds = NULL;
	o->n_binds = 0;
}

/* The image's file rel (etc/passwd), a regular file of at most 1 MiB, its links resolved in the
 * image's root; NULL when there is none. */
static char *image_file(const char *rootfs, const char *rel)
{
	_cleanup_close_ int rfd = open(rootfs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int fd = rfd < 0 ? -1 : sys_openat2(rfd, rel, O_RDONLY | O_NONBLOCK | O_CLOEXEC,
							    RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 20))
		return NULL;
	return read_fd(fd, NULL);
}

/* The image's User as the run user, when the caller gave none: numeric or in the image's
 * passwd, and one the caller may choose (root: any below CELL_ID_RANGE; rootless: itself or
 * 0); else a note, and the default user stays. */
static int image_user(struct cell_spec *s, const char *image, const char *user, struct error *err)
{
	_cleanup_free_ char *passwd = image_file(s->rootfs, "etc/passwd"), *group = image_file(s->rootfs, "etc/group");
	uid_t u;
	gid_t g;
	const char *why = NULL;
	if (image_user_lookup(user, passwd, group, &u, &g, &why) < 0) {
		warn_line("note: image %s: its user '%s' is not one warren can find (%s); the run is %s (give --user UID[:GID] to choose)",
			  image, user, why, s->user_name);
		return 0;
	}
	_cleanup_free_ char *ids = NULL;
	if (!s->rootless && u < CELL_ID_RANGE && g < CELL_ID_RANGE)
		ids = xasprintf("%u:%u", u, g);
	else if (s->rootless && u == 0)
		ids = xstrdup("0");
	else if (s->rootless && u == s->host_uid)
		return 0;   /* the default already */
	if (!ids) {
		warn_line("note: image %s: its user '%s' (uid %u) is not one this run can be (%s); the run is %s (give --user to choose)",
			  image, user, u, s->rootless ? "a rootless run is you or 0" : "ids below 65536", s->user_name);
		return 0;
	}
	free(s->user_name);
	free(s->home);
	s->user_name = s->home = NULL;
	return cellspec_user(s, ids, err);
}

/* The defaults of the image's config cfg that g leaves open. */
static int image_defaults(struct cell_spec *s, const char *image, const json_t *cfg, const struct image_given *g, struct error *err)
{
	json_t *env = json_object_get(cfg, "Env");
	if (env)
		s->image_env = strv_from_json(env, false);
	const char *wd = json_string_value(json_object_get(cfg, "WorkingDir"));
	if (wd && !s->workdir) {
		const char *why = NULL;
		s->workdir = mount_dst_normalise(wd, &why);
		if (!s->workdir)
			warn_line("note: image %s: its WorkingDir %s is not one a cell can have (%s); left out", image, wd, why);
	}
	const char *user = json_string_value(json_object_get(cfg, "User"));
	if (user && !g->user && image_user(s, image, user, err) < 0)
		return -EINVAL;
	if (!g->commands)
		return 0;
	s->argv = image_command(cfg, g->entrypoint, g->command, g->n);
	if (!s->argv[0])
		return error_set(err, 0, "run: no command given, and the image %s has no Entrypoint or Cmd%s; usage: warren run --image %s [OPTIONS] -- COMMAND [ARG...]",
				 image, g->entrypoint && !*g->entrypoint ? " (--entrypoint '' leaves out its Entrypoint)" : "", image);
	return 0;
}

int cellspec_image(struct cell_spec *s, const char *image, const struct image_given *g, struct error *err)
{
	if (!image)
		return 0;
	if (s->rootfs)
		return error_set(err, 0, "--image %s and --rootfs %s: give one root, not both", image, s->rootfs);
	_cleanup_close_ int sfd = open(s->statedir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct image_ref ref;
	if (image_open(sfd, s->statedir, image, &ref, err) < 0) {
		image_ref_free(&ref);
		return -EINVAL;
	}
	/* the tree mounted must be the one locked and read here: an image replaced meanwhile
	 * (image import --replace) is refused at the mount (spec_root_open), not mixed */
	struct stat st;
	if (fstatat(ref.fd, "rootfs", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		s->rootfs_dev = st.st_dev;
		s->rootfs_ino = st.st_ino;
	}
	s->rootfs = steal_pointer(&ref.rootfs);
	s->image_digest = steal_pointer(&ref.digest);
	s->image_fd = steal_fd(&ref.fd);
	s->image = xstrdup(image);
	int r = image_defaults(s, image, ref.config, g, err);
	image_ref_free(&ref);
	return r;
}

void cellspec_env(struct cell_spec *s, struct envb *late)
{
	struct envb e = { 0 };
	env_setkv(&e, "PATH", CELL_PATH_ENV);
	env_setkv(&e, "HOME", s->home);
	env_setkv(&e, "USER", s->user_name);
	env_setkv(&e, "LOGNAME", s->user_name);
	env_setkv(&e, "SHELL", CELL_SHELL_PATH);
	for (size_t i = 0; i < s->n_mounts; i++)
		if (!strcmp(s->mounts[i].destination, CELL_EXTERNALS_PATH))
			env_setkv(&e, CELL_EXTERNALS_ENV, CELL_EXTERNALS_PATH);
	const char *term = getenv("TERM");
	env_setkv(&e, "TERM", term && *term ? term : "dumb");
	const char *lang = getenv("LANG");
	if (lang && *lang)
		env_setkv(&e, "LANG", lang);
	for (char **i = s->image_env; i && *i; i++)   /* the image's, under the caller's */
		env_set(&e, *i);
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
	if (!s->id[0] && run_id_new(s->id) < 0) /* an id given by warren serve (--run-id) stays */
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

int cellspec_limit_option(const char *name, const char *v, struct limits *l, struct error *err)
{
	if (!strcmp(name, "grace")) {
		if (parse_duration_ms(v, &l->grace_ms) < 0)
			return error_set(err, 0, "--grace: '%s' is not a duration (e.g. 5s, 500ms)", v);
		return 0;
	}
	if (!strcmp(name, "cpus"))
		return cpus_take("--cpus", v, &l->cpu_quota_us, &l->cpu_period_us, err);
	if (!strcmp(name, "cpuset"))
		return cpuset_take("--cpuset", v, false, l->cpuset, sizeof l->cpuset, err);
	const struct limit_desc *d = limit_find(name);
	_cleanup_free_ char *what = xasprintf("--%s", name);
	return limit_parse(d, what, v, limit_field(l, d), err);
}

/* ---- a job's cell spec (`warren job run`, a warm cell's run: cli/warm.c) ---- */

/* "file:LINE:COL: ..." lines in the order of the file */
static long line_key(const char *l)
{
	const char *p = strchr(l, ':');
	if (!p)
		return 0;
	char *end;
	long line = strtol(p + 1, &end, 10);
	long col = *end == ':' ? strtol(end + 1, NULL, 10) : 0;
	return line * 100000 + col;
}

static int cmp_lines(const void *a, const void *b)
{
	long x = line_key(*(char *const *)a), y = line_key(*(char *const *)b);
	return x < y ? -1 : x > y;
}

int cli_job_load_text(const char *file, const char *text, const char *work, bool api, struct job *job)
{
	char *errors = NULL;
	_cleanup_free_ char *work_abs = work && !strcmp(work, CELLSPEC_WORK_NONE) ? xstrdup(work) : work ? abs_path(work) : NULL;
	if (work && !work_abs) {
		warn_line("--work %s: %s; name an existing directory", work, strerror(errno));
		return -1;
	}
	/* a job sent to the server: its own paths resolve in, and stay below, the request's worktree */
	const char *api_work = api ? (work_abs && strcmp(work_abs, CELLSPEC_WORK_NONE) ? work_abs : "/nonexistent") : NULL;
	if ((text ? job_parse(file, text, strlen(text), work_abs, api_work, job, &errors)
		  : job_load(file, work_abs, api_work, job, &errors)) < 0) {
		/* every mistake on a line of its own, in the file's order, prefixed like every
		 * warren error */
		char **lines = NULL;
		size_t n = 0;
		for (char *save = NULL, *l = strtok_r(errors, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			lines = xrealloc(lines, (n + 1) * sizeof *lines);
			lines[n++] = l;
		}
		if (n)
			qsort(lines, n, sizeof *lines, cmp_lines);
		for (size_t i = 0; i < n; i++)
			warn_line("%s", lines[i]);
		free(lines);
		free(errors);
		job_free(job);
		return -1;
	}
	return 0;
}

int cli_job_load(const char *file, const char *work, bool api, struct job *job)
{
	return cli_job_load_text(file, NULL, work, api, job);
}

void job_args_free(struct job_args *a)
{
	cell_opts_free(&a->co);
}

int job_cell_spec(const struct job_args *a, const struct job *job, struct hist_opts *hist, struct cell_spec *s,
		  struct error *err)
{
	s->limits = job->limits;
	s->limits.time_ms = job->timeout_ms;
	s->net = job->net;
	/* a job without network: gets warren.conf's net; its publish: settled with its network:,
	 * and a host port in use refused, as --publish */
	if (cli_net_default(&s->net, err) < 0 || net_opts_finish(&s->net, err) < 0)
		return -EINVAL;
	s->keep = a->keep;
	s->statedir = statedir_default(a->state);
	hist_opts_apply(hist, s);
	s->driver = job->driver;
	s->worktree_ro = a->work_ro || job->work_ro;
	/* the job file's binds, then the command line's; --externals, --workdir and --hostname
	 * of the command line win */
	__attribute__((cleanup(cell_opts_free))) struct cell_opts jo = { 0 };
	for (size_t i = 0; i < job->n_binds; i++)
		cell_opts_take(&jo, job->binds[i].ro ? "ro-bind" : "bind", job->binds[i].arg);
	for (size_t i = 0; i < a->co.n_binds; i++)
		cell_opts_take(&jo, a->co.binds[i].ro ? "ro-bind" : "bind", a->co.binds[i].arg);
	for (size_t i = 0; i < job->n_binds; i++)
		jo.binds[i].face = job->face;   /* the job file's own binds, put to the gate as its */
	jo.externals = a->co.externals ? a->co.externals : job->externals;
	jo.externals_face = a->co.externals ? GATE_CLI : job->face;
	s->root_face = a->rootfs || a->image ? GATE_CLI : job->face;
	const char *rootfs = a->rootfs ? a->rootfs : a->image ? NULL : job->rootfs;
	const char *image = a->image ? a->image : a->rootfs ? NULL : job->image;
	s->work_face = a->work ? GATE_CLI : job->face;
	s->anchor = job->anchor ? xstrdup(job->anchor) : NULL;
	jo.workdir = a->co.workdir ? a->co.workdir : job->workdir;
	jo.hostname = a->co.hostname ? a->co.hostname : job->hostname;
	if (cellspec_user(s, a->user, err) < 0 || cellspec_paths(s, rootfs, job->work, err) < 0 ||
	    cellspec_cell_opts(s, &jo, err) < 0 || cellspec_finish(s, err) < 0 ||
	    cellspec_image(s, image, &(struct image_given){ .user = a->user }, err) < 0)
		return -EINVAL;
	s->argv = xcalloc(3, sizeof *s->argv);
	s->argv[0] = xstrdup("warren-job");
	s->argv[1] = xstrdup(job->path);
	struct envb late = { 0 };
	for (char **e = job->env; e && *e; e++)
		env_set(&late, *e);
	cellspec_env(s, &late);
	envb_free(&late);
	return 0;
}

char **job_plain_command(const struct job *j, char **command)
{
	return job_is_command(j, command) ? command : NULL;
}

char **command_json_argv(const char *text)
{
	json_t *a = json_loads(text, 0, NULL);
	char **argv = strv_from_json(a, true);
	json_decref(a);
	return argv;
}
