/* SPDX-License-Identifier: Apache-2.0 */
/* worktree.h - after the run, before the record: the worktree's git check (policy/gitguard.h),
 * its findings in result.json ("git_moved_aside") and one line each on stderr. */
#ifndef WARREN_SUPERVISE_WORKTREE_H
#define WARREN_SUPERVISE_WORKTREE_H

#include <jansson.h>
#include <stdbool.h>
#include <time.h>

#include "policy/gitwatch.h"

struct cell_spec;


/* Watch what the job changes in the worktree (fd on it; -1: none), from before it is let go:
 * NULL with *why (static text) when it cannot (then the check walks the whole worktree). */
struct git_watch *worktree_watch_start(int worktree_fd, const char **why);

/* Check the worktree for what changed since `since` that git would obey, move it aside, add
 * "git_check" {moved_aside: [{path, what, moved_to}], reported: [...], unchecked: [...],
 * total, dirs, method, fallback, changed_dirs, seconds} to *extra, and unless quiet say so on
 * stderr. worktree_fd: an fd on the worktree; rundir: where the record is, for the message.
 * since: the kernel's coarse clock (CLOCK_REALTIME_COARSE, which file times come from) when
 * the job was let go. gw: the watch (only the directories it names are looked at: method
 * "fanotify"), or NULL and why: the whole worktree is walked (method "walk", fallback why). */
void worktree_git_check(int worktree_fd, const char *id, const char *rundir, const struct timespec *since,
			struct git_watch *gw, const char *why, json_t **extra, bool quiet);

#endif
