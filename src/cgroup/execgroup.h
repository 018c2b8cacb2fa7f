/* SPDX-License-Identifier: Apache-2.0 */
/* execgroup.h - a control group of its own for each exec of a live cell (a command that came
 * later: a session's exec): its time limit takes every process in it, also one that left the
 * exec's session (setsid, a double fork), while the run's limits keep holding for them all.
 *   v2: a group below the run's, with no controller enabled in between (the run's group goes
 *       on counting and limiting its processes; its events are the run's);
 *   v1 and hybrid hosts: a group in the freezer hierarchy below the run's own there
 *       (freezer/warren/<name>, made for its execs), the other hierarchies left as they are
 *       (v1 memory counts an OOM kill in the victim's own group, not in the run's);
 *   none for a run without a group (rootless where no cgroup is delegated to the caller,
 *       cgroup/delegate.h), nor on a v1 host without the freezer: the exec's session is its
 *       tree. */
#ifndef WARREN_CGROUP_EXECGROUP_H
#define WARREN_CGROUP_EXECGROUP_H

#include <stdbool.h>

#include "cgroup/cgroup.h"

struct cgroup_exec {
	char *dir;   /* the exec's group, or NULL: none */
	bool v2;
};

/* Make the group name for an exec of the run whose groups are cg; *join (close-on-exec): the
 * file a process of the exec writes "0" into to move itself there before it executes (v1
 * "tasks": the writer alone, without the kernel's global lock; v2 cgroup.procs); the kernel
 * checks the rights of its opener (root), not the writer's. 0, or -errno when there is none
 * (no group of the run: rootless without a delegate, a v1 host without the freezer; or
 * refused). */
int cgroup_exec_make(struct cgroup *cg, const char *name, struct cgroup_exec *x, int *join);
/* The same below parent, a v2 group or a v1 freezer group (another process's cell: the OCI
 * face's exec). */
int cgroup_exec_make_in(const char *parent, bool v2, const char *name, struct cgroup_exec *x, int *join);
/* sig to every process in the group (from the host: the pids of its cgroup.procs). */
void cgroup_exec_signal(const struct cgroup_exec *x, int sig);
/* SIGKILL every process in the group: v2 cgroup.kill; v1 frozen, each killed, thawed (no
 * fork in between). */
void cgroup_exec_kill(const struct cgroup_exec *x);
/* Remove the group once empty: true when it is gone (or was none), false while a process is
 * in it. */
bool cgroup_exec_remove(struct cgroup_exec *x);
void cgroup_exec_free(struct cgroup_exec *x);

#endif
