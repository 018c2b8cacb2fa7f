/* SPDX-License-Identifier: Apache-2.0 */
/* delegate.h - a rootless caller's cgroups: the cgroup v2 subtree systemd delegates to a user
 * (Delegate=yes chowns a unit's directory and its cgroup.procs, cgroup.subtree_control and
 * cgroup.threads to the user: the user's user@UID.service, or a scope of its own). The
 * delegate is the highest group above the caller's own that the caller owns and may write
 * processes and controllers into, every group between them its own too; a rootless run's
 * group is made below it (<delegate>/warren/<name>) with the limits a root run's has. None on
 * a v1 or hybrid host, nor where the caller's own group is not its own (a login's
 * session-N.scope). The decisions are pure (tests/unit/test_delegate.c); cgroup_delegate
 * gathers the facts. */
#ifndef WARREN_CGROUP_DELEGATE_H
#define WARREN_CGROUP_DELEGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum cgroup_deleg {
	CGROUP_DELEG_OK,
	CGROUP_DELEG_NOT_V2,    /* /sys/fs/cgroup is not a cgroup2 mount (v1, hybrid, none) */
	CGROUP_DELEG_NO_SELF,   /* the caller's v2 group is unknown, or not visible below /sys/fs/cgroup */
	CGROUP_DELEG_NOT_OWNED, /* the caller's group is not its own (or it is the root) */
	CGROUP_DELEG_NO_CTRL,   /* the delegate does not offer a controller a limit needs */
	CGROUP_DELEG_BUSY,      /* the delegate holds processes: no controller can be enabled below it */
};

struct cgroup_deleg_facts {
	bool v2;            /* /sys/fs/cgroup is a cgroup2 mount */
	const char *self;   /* the caller's group ("/user.slice/.../app.slice/x.scope"), or NULL */
	bool visible;       /* its directory is there below /sys/fs/cgroup */
	size_t n;           /* the components of self */
	const bool *owned;  /* [0..n]: the group of self's first i components (0: the root) is the
			       caller's: it owns the directory, may make groups in it and write
			       its cgroup.procs and cgroup.subtree_control */
};

/* Is there a delegate, and how many components of self its path has (*depth: the highest
 * owned group with every group from it down to self owned; never the root). */
enum cgroup_deleg cgroup_deleg_decide(const struct cgroup_deleg_facts *f, size_t *depth);
/* May a run's group below the delegate use controller ctrl? The delegate's cgroup.controllers
 * (controllers) lists it, and either its cgroup.subtree_control (subtree) enables it already or
 * it holds no process (cgroup v2 enables a controller only below a group without processes).
 * CGROUP_DELEG_OK, NO_CTRL or BUSY. */
enum cgroup_deleg cgroup_deleg_usable(const char *ctrl, const char *controllers, const char *subtree, bool has_procs);
/* The one line refusing limit (the option that asks for it: "--memory") to a rootless run that
 * has no group with its controller ctrl here: why (d, with the caller's group self, the
 * delegate dir, uid) and what to do. Heap. */
char *cgroup_deleg_refusal(const char *limit, enum cgroup_deleg d, const char *self, const char *dir,
			   const char *ctrl, uid_t uid);

/* The caller's delegate (found once a process): its directory below /sys/fs/cgroup, or NULL
 * and *why (a refusal's reason, the caller's group in *self). */
const char *cgroup_delegate(enum cgroup_deleg *why, const char **self);
/* cgroup_deleg_usable of the caller's delegate for ctrl (NOT_V2... when there is none). */
enum cgroup_deleg cgroup_delegate_offers(const char *ctrl);

#endif
