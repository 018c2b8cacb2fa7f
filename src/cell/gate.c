/* SPDX-License-Identifier: Apache-2.0 */
/* gate.c - the one gate (see gate.h): the decision as a pure function of facts, the facts of a
 * path gathered from its descriptor, and the refusal as one line. */
#include "cell/gate.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cell/mounts.h"
#include "util/fs.h"

/* ---- the decision ---- */

static bool own_face(const struct gate_ask *a)
{
	return a->face == GATE_JOBFILE || a->face == GATE_API;
}

static enum gate_reason decide_root(const struct gate_ask *a, const struct gate_facts *f)
{
	if (rootfs_refused(f->path) || !strcmp(f->path, "/"))
		return GATE_SYSTEM_ROOT;
	if (a->face == GATE_BUNDLE && !f->below_anchor && !f->image_shaped)
		return GATE_NOT_IMAGE;
	if (f->home_of)
		return GATE_OTHER_HOME;
	return GATE_OK;
}

static enum gate_reason decide_bind(const struct gate_ask *a, enum gate_use u, const struct gate_facts *f)
{
	bool ro = u == GATE_BIND_RO;
	if (mount_source_refused(f->path) && !(ro && f->run_plain_file))
		return GATE_HOST_PLACE;
	if (!ro && path_is_system_tree(f->path))
		return GATE_SYSTEM_RW;
	if (!ro && f->is_reg && f->nlink > 1)
		return GATE_HARD_LINKS;
	if (a->face != GATE_CLI && f->home_of)
		return GATE_OTHER_HOME;
	return GATE_OK;
}

enum gate_reason gate_decide(const struct gate_ask *a, enum gate_use u, const struct gate_facts *f)
{
	if (u == GATE_STATE)   /* a bundle selects among the caller's state directories, never makes one */
		return f->state_root && f->owner == a->uid ? GATE_OK : GATE_NOT_STATE;
	if (own_face(a) && !f->below_anchor)   /* first: what to do instead is the useful word */
		return GATE_OUTSIDE_ANCHOR;
	if (f->kernel_fs)
		return GATE_KERNEL_FS;
	if (f->in_state)
		return GATE_IN_STATE;
	if (f->holds_state)
		return GATE_HOLDS_STATE;
	switch (u) {
	case GATE_ROOT:
		return decide_root(a, f);
	case GATE_WORKTREE:
		return path_is_system_tree(f->path) ? GATE_SYSTEM_RW : GATE_OK;
	default:
		return decide_bind(a, u, f);
	}
}

/* ---- the message ---- */

static const char *face_name(enum gate_face face)
{
	switch (face) {
	case GATE_JOBFILE: return "a job file";
	case GATE_API: return "a job sent to the server";
	case GATE_BUNDLE: return "an OCI bundle";
	default: return "the command line";
	}
}

static const char *anchor_name(enum gate_face face)
{
	return face == GATE_API ? "its worktree" : face == GATE_BUNDLE ? "the bundle's directory" : "the job file's directory";
}

/* What the caller may do instead, for path outside the face's anchor (heap). */
static char *outside_remedy(const struct gate_ask *a, enum gate_use u, const char *path)
{
	if (a->face == GATE_API)
		return xstrdup(u == GATE_ROOT ? "give an imported image (image: NAME) or a directory below the worktree"
					      : "name a directory below the worktree");
	if (u == GATE_ROOT)
		return xasprintf("import the image (warren image import) and give image: NAME, or pass --rootfs %s on the command line of warren job run", path);
	if (u == GATE_WORKTREE)
		return xasprintf("pass --work %s on the command line if you mean it", path);
	return xasprintf("pass %s %s on the command line of warren job run if you mean it", u == GATE_BIND ? "--bind" : "--ro-bind", path);
}

static char *reason_text(enum gate_reason r, const struct gate_ask *a, enum gate_use u, const struct gate_facts *f)
{
	switch (r) {
	case GATE_KERNEL_FS:
		return xstrdup("it is on a kernel's file system (processes, devices, kernel settings), which stays out of cells; give a directory of files");
	case GATE_IN_STATE:
		return xstrdup(u == GATE_ROOT ? "it lies in a warren state directory (runs' records and scratch, served jobs, the image store); give an image by its name (--image, image:) or a directory outside it"
					      : "it lies in a warren state directory (runs' records and scratch, served jobs, the image store); give a directory outside it");
	case GATE_HOLDS_STATE:
		return xasprintf("warren's state directory %s is inside the %s, where the job could change the records and other runs' scratch; give another directory, or pass --state DIR outside it",
				 f->holds_state, u == GATE_ROOT ? "root file system" : u == GATE_WORKTREE ? "worktree" : "bind's source");
	case GATE_OUTSIDE_ANCHOR: {
		_cleanup_free_ char *remedy = outside_remedy(a, u, f->path);
		return xasprintf("it is outside %s: %s may only name paths below %s; %s", anchor_name(a->face), face_name(a->face),
				 a->face == GATE_API ? "the worktree" : "its own", remedy);
	}
	case GATE_NOT_IMAGE:
		return xstrdup("a root file system outside the bundle's directory must be an image (holding etc/, bin/ or usr/), and this holds none of them; give the container's root file system");
	case GATE_OTHER_HOME:
		return xasprintf("it %s the home of %s, whose private files the cell would show as its own run user's; %s", f->holds_home ? "holds" : "is or lies in",
				 f->home_of, u == GATE_ROOT ? "import it as an image (warren image import), or run warren as that user" : "run warren as that user");
	case GATE_SYSTEM_ROOT:
		return xstrdup("a directory of the host's own, whose root-owned files (/etc/shadow, keys) would be the cell root's to read; give the directory of an unpacked image");
	case GATE_SYSTEM_RW:
		return u == GATE_WORKTREE ? xstrdup("a system directory a job may not have read-write; cd into a project directory or pass --work DIR")
					  : xstrdup("a system directory a job may not have read-write; use --ro-bind, or bind a directory of your own");
	case GATE_HOST_PLACE:
		return xasprintf("%s; bind a directory of your own below it", mount_source_refused(f->path));
	case GATE_HARD_LINKS:
		return xasprintf("the file has %ju other hard links, which a write would change too; copy it, or use --ro-bind", (uintmax_t)f->nlink - 1);
	case GATE_NOT_STATE:
		return xasprintf("not a state directory of uid %u's that exists: a bundle may choose among its caller's state directories, never make one; make it first (a run makes it: 'warren run --state %s --work none -- true'), or set WARREN_STATE for the runtime",
				 (unsigned)a->uid, f->path);
	default:
		return xstrdup("allowed");
	}
}

char *gate_message(enum gate_reason r, const struct gate_ask *a, enum gate_use u, const struct gate_facts *f, const char *opt,
		   const char *name)
{
	_cleanup_free_ char *why = reason_text(r, a, u, f);
	return xasprintf("%s%s%s: %s", opt && *opt ? opt : "", opt && *opt ? " " : "", name ? name : f->path, why);
}

/* ---- the facts ---- */

/* Does the directory dfd look like a warren state directory: runs/ (0700) beside its mark,
 * history.db (or its pending file), images/ or serve/? */
static bool state_shaped(int dfd)
{
	struct stat st;
	if (fstatat(dfd, "runs", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 077))
		return false;
	static const char *const marks[] = { GATE_STATE_MARK, "history.db", "history.db.pending", "images", "serve" };
	for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
		if (fstatat(dfd, marks[i], &st, AT_SYMLINK_NOFOLLOW) == 0)
			return true;
	return false;
}

bool gate_is_state_dir(const char *path)
{
	_cleanup_close_ int fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 && state_shaped(fd);
}

/* Walk from the directory dir up to / (through "..", by descriptor): is it, or a directory above
 * it, a state directory? *root: dir itself is one. */
static bool in_state_dir(int dir, bool *root)
{
	*root = false;
	int cur = dir >= 0 ? openat(dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	struct stat st, up;
	for (int depth = 0; cur >= 0 && depth < 256; depth++) {
		if (state_shaped(cur)) {
			*root = depth == 0;
			close(cur);
			return true;
		}
		int parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		bool top = parent < 0 || fstat(cur, &st) < 0 || fstat(parent, &up) < 0 || (st.st_dev == up.st_dev && st.st_ino == up.st_ino);
		close(cur);
		cur = top ? -1 : parent;
		if (top && parent >= 0)
			close(parent);
	}
	if (cur >= 0)
		close(cur);
	return false;
}

/* For a root caller: the login user (uid 1000 and up, not nobody) whose home path is, lies in
 * or holds (*holds). Their name (heap), or NULL. */
static char *other_home(const char *path, uid_t asker, bool *holds)
{
	if (asker != 0)
		return NULL;   /* the kernel keeps any other caller to what they may read */
	char *who = NULL;
	setpwent();
	for (struct passwd *pw; !who && (pw = getpwent());) {
		if (pw->pw_uid < 1000 || pw->pw_uid == 65534 || !pw->pw_dir || pw->pw_dir[0] != '/' || !strcmp(pw->pw_dir, "/"))
			continue;
		_cleanup_free_ char *home = abs_path(pw->pw_dir);
		if (!home || !strcmp(home, "/"))
			continue;
		if (path_beneath(path, home) || path_beneath(home, path)) {
			*holds = !path_beneath(path, home);
			who = xstrdup(pw->pw_name);
		}
	}
	endpwent();
	return who;
}

static bool image_shaped(int fd)
{
	static const char *const dirs[] = { "etc", "bin", "usr" };
	struct stat st;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (fstatat(fd, dirs[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
			return true;
	return false;
}

void gate_facts_at(int fd, const char *canon, const struct gate_ask *a, enum gate_use u, const char *const *states,
		   struct gate_facts *f)
{
	*f = (struct gate_facts){ .path = canon };
	struct stat st;
	if (fstat(fd, &st) == 0) {
		f->is_dir = S_ISDIR(st.st_mode);
		f->is_reg = S_ISREG(st.st_mode);
		f->owner = st.st_uid;
		f->nlink = st.st_nlink;
	}
	f->kernel_fs = fs_is_kernel(fd);
	if (f->is_dir) {
		f->in_state = in_state_dir(fd, &f->state_root);
	} else {   /* a file: from its directory (by its path: a file's descriptor has no "..") */
		_cleanup_free_ char *dir = xstrdup(canon);
		*strrchr(dir, '/') = '\0';
		_cleanup_close_ int dfd = open(*dir ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		bool r;
		f->in_state = in_state_dir(dfd, &r);
	}
	/* the run's own state directory, made or not yet; another known one (canonical) that is
	 * there, for what the caller's command line does not choose read-write itself */
	bool others = u == GATE_ROOT || a->face != GATE_CLI;
	for (const char *const *s = states; s && *s && !f->holds_state; s++) {
		if (s == states) {
			_cleanup_free_ char *own = **s ? abs_path_would_be(*s) : NULL;
			if (own && path_beneath(own, canon) && strcmp(own, canon))
				f->holds_state = xstrdup(own);
		} else if (others && path_beneath(*s, canon) && strcmp(*s, canon) && gate_is_state_dir(*s)) {
			f->holds_state = xstrdup(*s);
		}
	}
	/* the homes (the password database) only where the decision reads them */
	if (u == GATE_ROOT || (u != GATE_WORKTREE && a->face != GATE_CLI))
		f->home_of = other_home(canon, a->uid, &f->holds_home);
	f->below_anchor = a->anchor && path_beneath(canon, a->anchor);
	f->image_shaped = u == GATE_ROOT && f->is_dir && image_shaped(fd);
	f->run_plain_file = (path_beneath(canon, "/run") || path_beneath(canon, "/var/run")) && f->is_reg && f->nlink == 1;
}

void gate_facts_free(struct gate_facts *f)
{
	free((char *)f->holds_state);
	free((char *)f->home_of);
	f->holds_state = f->home_of = NULL;
}

int gate_check(int fd, const char *canon, const char *name, const struct gate_ask *a, enum gate_use u,
	       const char *const *states, const char *opt, struct error *err)
{
	struct gate_facts f;
	gate_facts_at(fd, canon, a, u, states, &f);
	enum gate_reason r = gate_decide(a, u, &f);
	if (r != GATE_OK) {
		_cleanup_free_ char *m = gate_message(r, a, u, &f, opt, name);
		error_set(err, 0, "%s", m);
	}
	gate_facts_free(&f);
	return r == GATE_OK ? 0 : -EPERM;
}

int gate_check_path(const char *path, const struct gate_ask *a, enum gate_use u, const char *const *states, const char *opt,
		    struct error *err)
{
	_cleanup_free_ char *canon = abs_path(path);
	_cleanup_close_ int fd = canon ? open(canon, O_PATH | O_CLOEXEC) : -1;
	if (fd < 0 && u == GATE_STATE) {   /* not there: not one of the caller's state directories */
		const struct gate_facts f = { .path = path };
		_cleanup_free_ char *m = gate_message(GATE_NOT_STATE, a, u, &f, opt, NULL);
		error_set(err, 0, "%s", m);
		return -EPERM;
	}
	if (fd < 0)
		return error_set(err, errno, "%s %s", opt, path);
	return gate_check(fd, canon, NULL, a, u, states, opt, err);
}
