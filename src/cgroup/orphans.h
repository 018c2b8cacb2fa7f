/* SPDX-License-Identifier: Apache-2.0 */
/* orphans.h - the run groups whose state directory is gone: each run group carries the path
 * of its state directory (an extended attribute only root may set; a rootless run's, in the
 * caller's own delegated cgroup, one of the user's), and `warren gc --orphans` removes the
 * empty ones whose state directory is no more, in every hierarchy (rootless: below the
 * caller's delegate). */
#ifndef WARREN_CGROUP_ORPHANS_H
#define WARREN_CGROUP_ORPHANS_H

#include <stdbool.h>
#include <stddef.h>

#include "cgroup/cgroup.h"

/* the attribute naming the state directory whose run a group is (rootless: in the caller's
 * delegated cgroup, delegate.h, where the user may set the user.* names only, and owns all) */
#define CGROUP_OWNER_XATTR "trusted.warren.state"
#define CGROUP_OWNER_XATTR_USER "user.warren.state"

/* Record owner (the state directory's path) on the group dir (nothing for NULL); a host that
 * refuses it leaves the group unmarked, which gc --orphans never removes. */
void cgroup_mark_dir(const char *dir, const char *owner);
/* The same on each of cg's groups (v2, or each v1 controller's; CGROUP_OWNER_XATTR_USER on a
 * rootless run's). */
void cgroup_mark_owner(const struct cgroup *cg, const char *owner);

/* seconds an orphan's group must have been there before it is removed (its run may be starting) */
#define CGROUP_ORPHAN_MIN_AGE 10

struct cgroup_orphans {
	size_t removed;   /* empty orphans removed */
	size_t busy;      /* orphans with a process in them: left alone, each named on stderr */
	size_t young;     /* orphans made less than CGROUP_ORPHAN_MIN_AGE s ago: left */
	size_t failed;    /* orphans rmdir refused for another reason, each named on stderr */
};
/* Every group below warren/ of each hierarchy (v2's, and each v1 hierarchy's, the freezer's
 * too; rootless: the caller's delegate's warren/ only), asked of orphan(name, owner or NULL
 * when unmarked, ctx); an orphan with no process in it is removed unless it is younger than
 * CGROUP_ORPHAN_MIN_AGE (rmdir, which the kernel refuses for a group in use); none is killed. */
void cgroup_remove_orphans(bool (*orphan)(const char *name, const char *owner, void *ctx), void *ctx, bool rootless,
			   struct cgroup_orphans *n);

#endif
