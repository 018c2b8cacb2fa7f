/* SPDX-License-Identifier: Apache-2.0 */
/* gitguard.c - after a run, what the job left in the worktree that git on the host would obey,
 * moved aside (see gitguard.h).
 *
 * One walk of the worktree, by descriptor, never following a symlink and never leaving it:
 *  - every entry named .git: a directory is a git directory (its control entries are checked);
 *    anything else (a gitfile "gitdir: X", a symlink git would follow, a FIFO) that changed
 *    since the run started is moved aside, because it sends git elsewhere;
 *  - every directory git would take for a bare repository (HEAD with objects and refs, or
 *    commondir) is a git directory too;
 *  - in a git directory: config, config.worktree, commondir, hooks/ (but *.sample), info/
 *    attributes, objects/info/alternates, remotes/, branches/, rebase-merge/, rebase-apply/
 *    and sequencer/ that changed are moved aside (name + suffix); modules/ (submodules' git
 *    directories, nested by their names) and worktrees/ (linked worktrees: config.worktree,
 *    and a commondir other than git's own "../..") are checked the same way;
 *  - a git directory below the worktree's own that changed is reported: git there obeys it.
 * The job is gone when this runs, so nothing changes under the walk but what the host does.
 *
 * When the kernel said which directories the run changed (gitwatch.h), the walk is the same
 * but goes only down the ways to them: in each directory on the way it looks at what the
 * whole walk would (is it a git directory, has it a .git), and below a directory the run
 * created or moved in, at everything.
 * A directory the walk cannot open is reported, never skipped silently. */
#include "policy/gitguard.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fs.h"
#include "util/words.h"

const struct git_control_path git_control_paths[] = {
	{ "config", GIT_CONFIG },
	{ "config.worktree", GIT_CONFIG },
	{ "commondir", GIT_REDIRECT },
	{ "hooks", GIT_HOOKS },
	{ "info/attributes", GIT_ATTRIBUTES },
	{ "objects/info/alternates", GIT_ALTERNATES },
	{ "objects/info/http-alternates", GIT_ALTERNATES },
	{ "remotes", GIT_REMOTES },
	{ "branches", GIT_REMOTES },
	{ "rebase-merge", GIT_TODO },
	{ "rebase-apply", GIT_TODO },
	{ "sequencer", GIT_TODO },
	{ NULL, GIT_DATA },
};

/* ---- decisions (pure; tests/unit/test_gitguard.c) ---- */

enum git_control git_control_of(const char *path)
{
	for (const struct git_control_path *c = git_control_paths; c->path; c++)
		if (!strcmp(path, c->path))
			return c->kind;
	return GIT_DATA;
}

const char *git_control_what(enum git_control k)
{
	switch (k) {
	case GIT_CONFIG: return "git configuration: it can run commands";
	case GIT_HOOKS: return "git hooks: programs git runs";
	case GIT_REDIRECT: return "a commondir: git would read its configuration elsewhere";
	case GIT_ATTRIBUTES: return "git attributes: they pick filter and diff programs";
	case GIT_ALTERNATES: return "object alternates: git would read objects elsewhere";
	case GIT_REMOTES: return "remote definitions: where git fetches and pushes";
	case GIT_TODO: return "a rebase in progress: its todo list can run commands";
	case GIT_DATA: break;
	}
	return "git data";
}

bool git_dir_looks_like(bool head, bool objects, bool refs, bool commondir)
{
	return head && ((objects && refs) || commondir);
}

bool git_hook_name_runs(const char *name)
{
	size_t n = strlen(name);
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	return !(n >= 7 && !strcmp(name + n - 7, ".sample"));
}

bool git_commondir_is_standard(const char *content)
{
	return !strcmp(content, "../..") || !strcmp(content, "../..\n");
}

/* ---- the walk ---- */

struct walker {
	struct timespec since;
	const char *suffix;
	struct git_audit *out;
	bool links;        /* look for changed files with several names (the fanotify way) */
	bool linked;       /* ... and one was found */
};

static bool changed(const struct walker *w, const struct stat *st)
{
	return st->st_ctim.tv_sec > w->since.tv_sec ||
	       (st->st_ctim.tv_sec == w->since.tv_sec && st->st_ctim.tv_nsec >= w->since.tv_nsec);
}

static char *join(const char *dir, const char *name)
{
	return *dir ? xasprintf("%s/%s", dir, name) : xstrdup(name);
}

static void add(struct walker *w, const char *rel, const char *moved_to, const char *what, enum git_action a,
		int errnum)
{
	struct git_audit *o = w->out;
	o->total++;
	if (o->n == GIT_AUDIT_MAX_FINDINGS)
		return;
	if (!o->v)
		o->v = xcalloc(GIT_AUDIT_MAX_FINDINGS, sizeof *o->v);
	o->v[o->n++] = (struct git_finding){
		.path = printable_name(rel),
		.moved_to = moved_to ? printable_name(moved_to) : NULL,
		.what = what,
		.action = a,
		.error = errnum ? xstrdup(strerror(errnum)) : NULL,
	};
}

/* Rename dir/name to name+suffix (name+suffix.2, ... when taken). A directory of the host
 * user's that the job made read-only is made writable for the rename and set back. */
static int move_aside(const struct walker *w, int dir, const char *name, char **to)
{
	for (int tries = 0; tries < 2; tries++) {
		for (int k = 1; k < 100; k++) {
			_cleanup_free_ char *n = k == 1 ? xasprintf("%s%s", name, w->suffix)
						       : xasprintf("%s%s.%d", name, w->suffix, k);
			if (renameat2(dir, name, dir, n, RENAME_NOREPLACE) == 0) {
				*to = steal_pointer(&n);
				return 0;
			}
			if (errno != EEXIST)
				break;
		}
		int e = errno;
		struct stat st;
		if (tries || (e != EACCES && e != EPERM) || fstat(dir, &st) < 0 || st.st_uid != geteuid())
			return -e;
		/* our own directory, made read-only by the job: writable for the rename */
		_cleanup_close_ int wd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (wd < 0 || fchmod(wd, (st.st_mode & 07777) | S_IRWXU) < 0)
			return -e;
		int r = move_aside(w, dir, name, to);
		fchmod(wd, st.st_mode & 07777);
		return r;
	}
	return -EINVAL;
}

static void move_finding(struct walker *w, int dir, const char *dirrel, const char *name, const char *what)
{
	_cleanup_free_ char *rel = join(dirrel, name);
	_cleanup_free_ char *to = NULL;
	int r = move_aside(w, dir, name, &to);
	if (r < 0) {
		add(w, rel, NULL, what, GIT_NOT_MOVED, -r);
		return;
	}
	_cleanup_free_ char *torel = join(dirrel, to);
	add(w, rel, torel, what, GIT_MOVED, 0);
}

/* Open a subdirectory without following a symlink. */
static int open_sub(int dir, const char *name)
{
	return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Did the directory dirfd change in a way git would notice: an entry git reads (for hooks, one
 * that runs) that changed, or is there at all while the directory itself changed? */
static bool dir_changed(const struct walker *w, int dirfd, const struct stat *st, bool hooks)
{
	int dup_fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		closep(&dup_fd);
		return true;  /* cannot look inside: count it */
	}
	bool self = changed(w, st), any = false, read = false;
	struct dirent *e;
	while ((e = readdir(d)) && !any) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (hooks && !git_hook_name_runs(e->d_name))
			continue;
		read = true;
		struct stat es;
		if (fstatat(dirfd, e->d_name, &es, AT_SYMLINK_NOFOLLOW) < 0 || changed(w, &es))
			any = true;
	}
	closedir(d);
	return any || (self && read);
}

/* The first bytes of a small file, or "" . */
static void read_small(int dir, const char *name, char *buf, size_t len)
{
	buf[0] = '\0';
	_cleanup_close_ int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = '\0';
}

/* One control path of the git directory gfd (at grel) of kind k. */
static void check_control(struct walker *w, int gfd, const char *grel, const char *path, enum git_control k,
			  bool linked)
{
	/* the directories on the way (info/, objects/info/): a changed symlink there redirects */
	_cleanup_close_ int dir = fcntl(gfd, F_DUPFD_CLOEXEC, 0);
	_cleanup_free_ char *dirrel = xstrdup(grel);
	const char *p = path;
	for (const char *slash; dir >= 0 && (slash = strchr(p, '/')); p = slash + 1) {
		_cleanup_free_ char *comp = strndup(p, (size_t)(slash - p));
		struct stat st;
		if (fstatat(dir, comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return;
		if (S_ISLNK(st.st_mode)) {
			if (changed(w, &st))
				move_finding(w, dir, dirrel, comp, git_control_what(k));
			return;
		}
		int next = open_sub(dir, comp);
		if (next < 0)
			return;
		close(dir);
		dir = next;
		char *nr = join(dirrel, comp);
		free(dirrel);
		dirrel = nr;
	}
	struct stat st;
	if (dir < 0 || fstatat(dir, p, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	bool hit;
	if (S_ISDIR(st.st_mode)) {
		_cleanup_close_ int d = open_sub(dir, p);
		hit = d < 0 || dir_changed(w, d, &st, k == GIT_HOOKS);
	} else {
		hit = changed(w, &st);
		if (hit && linked && k == GIT_REDIRECT && S_ISREG(st.st_mode)) {
			char buf[16];
			read_small(dir, p, buf, sizeof buf);
			hit = !git_commondir_is_standard(buf);
		}
	}
	if (hit)
		move_finding(w, dir, dirrel, p, git_control_what(k));
}

static void audit_gitdir(struct walker *w, int gfd, const char *grel, int depth);

/* Call fn for each subdirectory of dir (at rel), opened without following a symlink. */
static void each_subdir(struct walker *w, int dir, const char *rel, int depth,
			void (*fn)(struct walker *, int, const char *, int))
{
	int dup_fd = fcntl(dir, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		closep(&dup_fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		_cleanup_close_ int sub = open_sub(dir, e->d_name);
		if (sub < 0)
			continue;
		_cleanup_free_ char *srel = join(rel, e->d_name);
		fn(w, sub, srel, depth);
	}
	closedir(d);
}

/* modules/: each submodule's git directory, at the path of its name (which may hold '/'). */
static void audit_module(struct walker *w, int fd, const char *rel, int depth)
{
	struct stat st;
	if (fstatat(fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0)
		audit_gitdir(w, fd, rel, depth + 1);
	else if (depth < GIT_AUDIT_MAX_DEPTH)
		each_subdir(w, fd, rel, depth + 1, audit_module);
}

/* worktrees/<id>/: a linked worktree's own git directory. */
static void audit_linked(struct walker *w, int fd, const char *rel, int depth)
{
	(void)depth;
	check_control(w, fd, rel, "config.worktree", GIT_CONFIG, true);
	check_control(w, fd, rel, "commondir", GIT_REDIRECT, true);
}

static void audit_gitdir(struct walker *w, int gfd, const char *grel, int depth)
{
	for (const struct git_control_path *c = git_control_paths; c->path; c++)
		check_control(w, gfd, grel, c->path, c->kind, false);
	_cleanup_close_ int m = open_sub(gfd, "modules");
	if (m >= 0) {
		_cleanup_free_ char *rel = join(grel, "modules");
		each_subdir(w, m, rel, depth + 1, audit_module);
	}
	_cleanup_close_ int l = open_sub(gfd, "worktrees");
	if (l >= 0) {
		_cleanup_free_ char *rel = join(grel, "worktrees");
		each_subdir(w, l, rel, depth + 1, audit_linked);
	}
}

/* The names of one directory: its subdirectories, and what git looks for. */
struct listing {
	char **subdirs;
	size_t n, cap;
	bool head, objects, refs, commondir, dotgit;
};

static void listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->subdirs[i]);
	free(l->subdirs);
}

static int list_dir(int fd, struct listing *l)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		int e = errno;
		closep(&dup_fd);
		return -e;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		l->head |= !strcmp(n, "HEAD");
		l->objects |= !strcmp(n, "objects");
		l->refs |= !strcmp(n, "refs");
		l->commondir |= !strcmp(n, "commondir");
		if (!strcmp(n, ".git")) {
			l->dotgit = true;
			continue;
		}
		unsigned char t = e->d_type;
		if (t == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			t = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if (t != DT_DIR)
			continue;
		if (l->n == l->cap)
			l->subdirs = xrealloc(l->subdirs, (l->cap = l->cap ? 2 * l->cap : 16) * sizeof *l->subdirs);
		l->subdirs[l->n++] = xstrdup(n);
	}
	closedir(d);
	return 0;
}

/* The entry .git of the directory fd (at rel). */
static void check_dotgit(struct walker *w, int fd, const char *rel, bool top, int depth)
{
	_cleanup_free_ char *grel = join(rel, ".git");
	struct stat st;
	if (fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		/* a gitfile, a symlink, a FIFO...: git follows or chokes on it */
		if (changed(w, &st))
			move_finding(w, fd, rel, ".git", S_ISREG(st.st_mode) ? "a gitfile: it sends git to another git directory"
						    : S_ISLNK(st.st_mode) ? "a symlink named .git: git follows it"
									   : "an entry named .git that is not a directory");
		return;
	}
	_cleanup_close_ int g = open_sub(fd, ".git");
	if (g < 0) {
		add(w, grel, NULL, "a git directory warren could not open", GIT_UNCHECKED, errno);
		return;
	}
	size_t before = w->out->total;
	audit_gitdir(w, g, grel, depth);
	/* a repository below the worktree's own, new or used by the run: say so */
	if (!top && changed(w, &st) && w->out->total == before)
		add(w, grel, NULL, "a repository the run created or changed: git there obeys it", GIT_REPORTED, 0);
}

/* A directory's tree to walk after the run: only the children named (the directories the run
 * changed, and the way to them), or everything below (full). */
struct tnode {
	char *name;
	struct tnode *kids;
	size_t n;
	bool full;
	bool self;       /* the run changed this directory (not only one below) */
};

static void walk(struct walker *w, int fd, const char *rel, int depth, const struct tnode *t);

/* The subdirectory name of fd (at rel), walked (all of it, or t's part). */
static void descend(struct walker *w, int fd, const char *rel, const char *name, int depth, const struct tnode *t)
{
	_cleanup_free_ char *sub = join(rel, name);
	if (depth + 1 > GIT_AUDIT_MAX_DEPTH) {
		add(w, sub, NULL, "a directory deeper than warren checks for git files", GIT_UNCHECKED, 0);
		return;
	}
	_cleanup_close_ int s = open_sub(fd, name);
	if (s < 0) {
		if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
			add(w, sub, NULL, "a directory warren could not open", GIT_UNCHECKED, errno);
		return;
	}
	/* a kernel's file system (one is refused at the start, but may be mounted later by
	 * the host): no git file a job could have left is there */
	if (fs_is_kernel(s))
		return;
	walk(w, s, sub, depth + 1, t);
}

/* A file changed in the run that has other names (hard links) in this directory: the run may
 * have written through one, and fanotify told only that one's directory. */
static void scan_links(struct walker *w, int fd)
{
	/* a descriptor of its own: a dup would share the offset with the walk's listing */
	int own = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = own >= 0 ? fdopendir(own) : NULL;
	if (!d) {
		closep(&own);
		w->linked = true;  /* cannot tell */
		return;
	}
	struct dirent *e;
	while (!w->linked && (e = readdir(d))) {
		struct stat st;
		if (e->d_type == DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) && st.st_nlink > 1 &&
		    changed(w, &st))
			w->linked = true;
	}
	closedir(d);
}

static bool has(int fd, const char *name)
{
	struct stat st;
	return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* A directory on the way to what the run changed: what the whole walk looks at in it (is it a
 * git directory, has it a .git), then only the children on the way. */
static void walk_some(struct walker *w, int fd, const char *rel, int depth, const struct tnode *t)
{
	w->out->dirs++;
	if (t->self)
		scan_links(w, fd);
	if (git_dir_looks_like(has(fd, "HEAD"), has(fd, "objects"), has(fd, "refs"), has(fd, "commondir"))) {
		audit_gitdir(w, fd, rel, depth);
		return;
	}
	if (has(fd, ".git"))
		check_dotgit(w, fd, rel, depth == 0, depth);
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->kids[i].name, ".git"))  /* a git directory: check_dotgit's */
			descend(w, fd, rel, t->kids[i].name, depth, &t->kids[i]);
}

/* t: NULL to walk everything below */
static void walk(struct walker *w, int fd, const char *rel, int depth, const struct tnode *t)
{
	if (t && !t->full) {
		walk_some(w, fd, rel, depth, t);
		return;
	}
	w->out->dirs++;
	if (w->links)
		scan_links(w, fd);
	struct listing l = { 0 };
	int r = list_dir(fd, &l);
	if (r < 0) {
		add(w, *rel ? rel : ".", NULL, "a directory warren could not read", GIT_UNCHECKED, -r);
		listing_free(&l);
		return;
	}
	if (git_dir_looks_like(l.head, l.objects, l.refs, l.commondir)) {
		/* a bare repository (or the inside of a git directory): git takes it as one */
		audit_gitdir(w, fd, rel, depth);
		listing_free(&l);
		return;
	}
	if (l.dotgit)
		check_dotgit(w, fd, rel, depth == 0, depth);
	for (size_t i = 0; i < l.n; i++)
		descend(w, fd, rel, l.subdirs[i], depth, NULL);
	listing_free(&l);
}

static struct tnode *tnode_kid(struct tnode *t, const char *name, size_t len)
{
	for (size_t i = 0; i < t->n; i++)
		if (strlen(t->kids[i].name) == len && !memcmp(t->kids[i].name, name, len))
			return &t->kids[i];
	t->kids = xrealloc(t->kids, (t->n + 1) * sizeof *t->kids);
	t->kids[t->n] = (struct tnode){ .name = strndup(name, len) };
	return &t->kids[t->n++];
}

static void tnode_free(struct tnode *t)
{
	for (size_t i = 0; i < t->n; i++)
		tnode_free(&t->kids[i]);
	free(t->kids);
	free(t->name);
}

/* The tree of the changed directories: each path's components, the last one full or not. */
static void tnode_build(struct tnode *root, const struct git_changed *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct tnode *t = root;
		for (const char *p = v[i].rel; *p;) {
			const char *slash = strchr(p, '/');
			size_t len = slash ? (size_t)(slash - p) : strlen(p);
			if (len)
				t = tnode_kid(t, p, len);
			p += len + (slash ? 1 : 0);
		}
		t->full |= v[i].full;
		t->self = true;
	}
}

/* Walk (all, or t's part); true when a changed file with other names was seen (t only). */
static bool audit(int worktree_fd, const struct timespec *since, const char *suffix, const struct tnode *t,
		  struct git_audit *out)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct walker w = { .since = *since, .suffix = suffix, .out = out, .links = t != NULL };
	_cleanup_close_ int fd = openat(worktree_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		add(&w, ".", NULL, "the worktree, which warren could not open", GIT_UNCHECKED, errno);
	else
		walk(&w, fd, "", 0, t);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->seconds += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return w.linked;
}

void git_audit_changed(int worktree_fd, const struct timespec *since, const char *suffix,
		       const struct git_changed *v, size_t n, struct git_audit *out)
{
	*out = (struct git_audit){ 0 };
	struct tnode root = { 0 };
	tnode_build(&root, v, n);
	bool linked = audit(worktree_fd, since, suffix, &root, out);
	out->method = "fanotify";
	out->changed = n;
	tnode_free(&root);
	if (linked) {
		/* what was found stays found (and moved aside); the rest is looked for everywhere */
		audit(worktree_fd, since, suffix, NULL, out);
		out->method = "walk";
		out->fallback = "a file the run changed has other names (hard links): where they are is not known";
	}
}

void git_audit_worktree(int worktree_fd, const struct timespec *since, const char *suffix, struct git_audit *out)
{
	*out = (struct git_audit){ 0 };
	audit(worktree_fd, since, suffix, NULL, out);
	out->method = "walk";
}

void git_audit_free(struct git_audit *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].path);
		free(a->v[i].moved_to);
		free(a->v[i].error);
	}
	free(a->v);
	*a = (struct git_audit){ 0 };
}

/* ---- the worktree's own configuration: what it makes git run from the worktree ---- */

/* Lexically normalise dir/rel (both relative, '/'-separated) into a path relative to the
 * worktree; NULL when it climbs out of it or is the worktree itself. */
static char *rel_normalise(const char *dir, const char *rel)
{
	_cleanup_free_ char *joined = *dir ? xasprintf("%s/%s", dir, rel) : xstrdup(rel);
	char **parts = NULL;
	size_t n = 0;
	char *save = NULL;
	bool out = false;
	for (char *c = strtok_r(joined, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			if (!n) {
				out = true;
				break;
			}
			n--;
			continue;
		}
		parts = xrealloc(parts, (n + 1) * sizeof *parts);
		parts[n++] = c;
	}
	char *res = NULL;
	if (!out && n) {
		size_t len = 0;
		for (size_t i = 0; i < n; i++)
			len += strlen(parts[i]) + 1;
		res = xmalloc(len);
		res[0] = '\0';
		for (size_t i = 0; i < n; i++) {
			if (i)
				strcat(res, "/");
			strcat(res, parts[i]);
		}
	}
	free(parts);
	return res;
}

/* One value of a git config line (after '='): quotes, escapes, comments, trailing spaces. */
static char *config_value(const char *v)
{
	char *out = xmalloc(strlen(v) + 1), *o = out, *last_kept = out;
	bool quoted = false;
	while (*v == ' ' || *v == '\t')
		v++;
	for (; *v; v++) {
		if (!quoted && (*v == '#' || *v == ';'))
			break;
		if (*v == '"') {
			quoted = !quoted;
			last_kept = o;
			continue;
		}
		if (*v == '\\' && v[1]) {
			v++;
			*o++ = *v == 'n' ? '\n' : *v == 't' ? '\t' : *v == 'b' ? '\b' : *v;
			last_kept = o;
			continue;
		}
		*o++ = *v;
		if (quoted || (*v != ' ' && *v != '\t'))
			last_kept = o;
	}
	*last_kept = '\0';
	return out;
}

static void push(char ***v, size_t *n, char *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s)) {
			free(s);
			return;
		}
	*v = xrealloc(*v, (*n + 2) * sizeof **v);
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
}

/* A path value of the config as a path relative to the worktree (base: where git takes a
 * relative one from), or NULL when it is outside it. */
static char *config_path(const char *value, const char *worktree, const char *base)
{
	if (!*value || value[0] == '~')
		return NULL;  /* the host user's home: outside the worktree */
	if (value[0] == '/') {
		size_t wl = strlen(worktree);
		if (strncmp(value, worktree, wl) != 0 || value[wl] != '/')
			return NULL;
		return rel_normalise("", value + wl + 1);
	}
	return rel_normalise(base, value);
}

char **git_config_worktree_paths(const char *text, const char *worktree)
{
	char **v = NULL;
	size_t n = 0;
	_cleanup_free_ char *copy = xstrdup(text);
	/* join continuation lines (a backslash at the end of a line) */
	for (char *p = copy; (p = strstr(p, "\\\n"));)
		memmove(p, p + 2, strlen(p + 2) + 1);
	char section[256] = "";
	bool subsection = false;
	char *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '[') {
			/* [core], [includeIf "gitdir:..."], [section.sub]: the name, and whether a
			 * subsection follows */
			size_t k = 0;
			for (line++; *line && *line != ']' && *line != ' ' && *line != '"' && *line != '.' && k < sizeof section - 1; line++)
				section[k++] = (char)tolower((unsigned char)*line);
			section[k] = '\0';
			char *rest = strchr(line, ']');
			if (!rest)
				continue;
			subsection = rest > line && strpbrk(line, ".\"") && strpbrk(line, ".\"") < rest;
			line = rest + 1;  /* a key may follow on the same line */
			while (*line == ' ' || *line == '\t')
				line++;
		}
		char *eq = strchr(line, '=');
		if (!eq || *line == '#' || *line == ';')
			continue;
		size_t kl = (size_t)(eq - line);
		while (kl && (line[kl - 1] == ' ' || line[kl - 1] == '\t'))
			kl--;
		bool hooks = !strcmp(section, "core") && !subsection && kl == 9 && !strncasecmp(line, "hookspath", 9);
		bool include = ((!strcmp(section, "include") && !subsection) || (!strcmp(section, "includeif") && subsection)) &&
			       kl == 4 && !strncasecmp(line, "path", 4);
		if (!hooks && !include)
			continue;
		_cleanup_free_ char *val = config_value(eq + 1);
		/* hooksPath: relative to where hooks run (the worktree's top); include.path: to .git */
		push(&v, &n, config_path(val, worktree, hooks ? "" : ".git"));
	}
	return v;
}
