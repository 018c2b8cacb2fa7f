/* SPDX-License-Identifier: Apache-2.0 */
/* freezer.h - freezing the processes of a cell (the OCI face's pause and resume). */
#ifndef WARREN_CGROUP_FREEZER_H
#define WARREN_CGROUP_FREEZER_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/error.h"

/* v1 and hybrid hosts: a group warren/<name> of the freezer hierarchy, pid (the cell's init,
 * before its job starts) moved into it; its path (heap), or NULL when the host has no v1
 * freezer (v2 freezes the run's own group) or on failure (err). */
char *cgroup_freezer_join(const char *name, pid_t pid, struct error *err);
/* Freeze (or thaw) the group member is in: v1 freezer.state, else v2 cgroup.freeze; waits
 * until the kernel says frozen. */
int cgroup_freezer_set(pid_t member, bool frozen, struct error *err);
/* Thaw and remove a v1 group of cgroup_freezer_join (its path), the groups below it first (an
 * exec's, execgroup.h); nothing for NULL. */
void cgroup_freezer_remove(const char *path);

#endif
