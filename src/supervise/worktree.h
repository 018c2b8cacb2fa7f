/* SPDX-License-Identifier: Apache-2.0 */
/* worktree.h - after the run, before the record: the worktree's git check (policy/gitguard.h),
 * its findings in result.json ("git_moved_aside") and one line each on stderr. */
#ifndef WARREN_SUPERVISE_WORKTREE_H
#define WARREN_SUPERVISE_WORKTREE_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

struct cell_spec;

/* Check the worktree for what changed since `since` that git would obey, move it aside, add
 * "git_check" {moved_aside: [{path, what, moved_to}], reported: [...], unchecked: [...],
 * total, dirs, seconds} to *extra, and unless quiet say so on stderr. worktree_fd: an fd on
 * the worktree; rundir: where the record is, for the message. since: the kernel's coarse
 * clock (CLOCK_REALTIME_COARSE, which file times come from) when the job was let go. */
void worktree_git_check(int worktree_fd, const char *id, const char *rundir, const struct timespec *since,
			json_t **extra, bool quiet);

#endif
