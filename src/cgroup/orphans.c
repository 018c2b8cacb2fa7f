/* SPDX-License-Identifier: Apache-2.0 */
/* orphans.c - run groups left by a state directory that is gone: marking a group with its
 * state directory when the run makes it, and the sweep of `warren gc --orphans`, which removes
 * only empty groups that a test of the caller's calls orphans, never killing anything. */
#include "cgroup/orphans.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <time.h>
#include <linux/magic.h>

#include "cgroup/delegate.h"
#include "util/fs.h"

#define CG_ROOT "/sys/fs/cgroup"

/* owner as attribute attr of dir; refused: unmarked, which gc --orphans leaves alone */
static void mark(const char *dir, const char *attr, const char *owner)
{
	if (dir && owner)
		setxattr(dir, attr, owner, strlen(owner), 0);
}

void cgroup_mark_dir(const char *dir, const char *owner)
{
	mark(dir, CGROUP_OWNER_XATTR, owner);
}

void cgroup_mark_owner(const struct cgroup *cg, const char *owner)
{
	const char *dirs[] = { cg->v2, cg->memory, cg->pids, cg->cpuacct, cg->cpu, cg->cpuset };
	for (size_t i = 0; i < 6; i++)
		mark(dirs[i], cg->delegated ? CGROUP_OWNER_XATTR_USER : CGROUP_OWNER_XATTR, owner);
}

/* The state directory recorded on dir as attr (heap), or NULL when none. */
static char *owner_of(const char *dir, const char *attr)
{
	ssize_t n = getxattr(dir, attr, NULL, 0);
	if (n <= 0)
		return NULL;
	char *v = xcalloc((size_t)n + 1, 1);
	if (getxattr(dir, attr, v, (size_t)n) != n) {
		free(v);
		return NULL;
	}
	return v;
}

/* False when a process is in the group dir (its cgroup.procs, v1 and v2 alike, names one); one
 * that cannot be read is left to rmdir, which the kernel refuses for a group in use. */
static bool empty(const char *dir)
{
	_cleanup_free_ char *p = xasprintf("%s/cgroup.procs", dir);
	size_t len = 0;
	_cleanup_free_ char *procs = read_file(p, &len);
	return !procs || len == 0;
}

/* True when the group dir was made (or marked) less than CGROUP_ORPHAN_MIN_AGE seconds ago: a
 * run's group is made and marked empty just before its cell joins it, so one whose state
 * directory looks gone at that moment (a directory above it renamed by its owner) must stay.
 * The time is the dir's mtime: cgroupfs (kernfs, v1 and v2) gives no birth time, and sets the
 * mtime when the dir is made, when it is marked and when a group is made in it; one that cannot
 * be read counts as young. */
static bool young(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) < 0)
		return true;
	return time(NULL) - st.st_mtime < CGROUP_ORPHAN_MIN_AGE;
}

/* Remove the groups below dir, deepest first (a session's exec groups, exec-N): one in use
 * stays, and then so does dir (its rmdir says EBUSY). */
static void rmdir_below(const char *dir, int depth)
{
	DIR *d = depth < 8 ? opendir(dir) : NULL;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		_cleanup_free_ char *sub = xasprintf("%s/%s", dir, e->d_name);
		rmdir_below(sub, depth + 1);
		rmdir(sub);
	}
	if (d)
		closedir(d);
}

/* One hierarchy's warren/ (parent), its groups marked as attr: its orphans removed, counted in n. */
static void sweep(const char *parent, const char *attr, bool (*orphan)(const char *, const char *, void *), void *ctx,
		  struct cgroup_orphans *n)
{
	DIR *d = opendir(parent);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		_cleanup_free_ char *dir = xasprintf("%s/%s", parent, e->d_name);
		_cleanup_free_ char *owner = owner_of(dir, attr);
		if (!orphan(e->d_name, owner, ctx))
			continue;
		if (young(dir)) {
			n->young++;
			continue;
		}
		bool idle = empty(dir);
		if (idle)
			rmdir_below(dir, 0);
		int r = idle && rmdir(dir) < 0 ? errno : idle ? 0 : EBUSY;
		if (r == 0) {
			n->removed++;
		} else if (r == EBUSY) {
			n->busy++;
			warn_line("the run cgroup %s: its state directory %s is gone, but a process is in it; left alone (see its cgroup.procs)",
				  dir, owner);
		} else if (r != ENOENT) {
			n->failed++;
			warn_line("cannot remove the run cgroup %s: %s", dir, strerror(r));
		}
	}
	if (d)
		closedir(d);
}

void cgroup_remove_orphans(bool (*orphan)(const char *name, const char *owner, void *ctx), void *ctx, bool rootless,
			   struct cgroup_orphans *n)
{
	*n = (struct cgroup_orphans){ 0 };
	if (rootless) {
		enum cgroup_deleg why;
		const char *self, *base = cgroup_delegate(&why, &self);
		_cleanup_free_ char *parent = base ? xasprintf("%s/warren", base) : NULL;
		if (parent)
			sweep(parent, CGROUP_OWNER_XATTR_USER, orphan, ctx, n);
		return;
	}
	struct statfs fs;
	if (statfs(CG_ROOT, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC) {
		sweep(CG_ROOT "/warren", CGROUP_OWNER_XATTR, orphan, ctx, n);
		return;
	}
	/* v1 and hybrid: each hierarchy once (a link such as cpu -> cpu,cpuacct is skipped) */
	DIR *d = opendir(CG_ROOT);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		_cleanup_free_ char *parent = xasprintf(CG_ROOT "/%s/warren", e->d_name);
		sweep(parent, CGROUP_OWNER_XATTR, orphan, ctx, n);
	}
	if (d)
		closedir(d);
}
