/* SPDX-License-Identifier: Apache-2.0 */
/* gitwatch.h - what a run changed in its worktree, known from the kernel (fanotify on the
 * worktree's file system) instead of found by walking it all: the directories the git check
 * after the run (gitguard.h) has to look at. See docs/hardening.md, "Git in the worktree".
 *
 * Marked before the job is let go, drained while it runs, read at its end. Anything in doubt
 * (the kernel's queue overflowed, too many directories, a mount below the worktree, a
 * directory whose path does not lead back to it) makes the caller walk the whole worktree as
 * before, and says why. Needs CAP_SYS_ADMIN over the file system's user namespace: root runs
 * only (a rootless run's worktree is on a file system of the host's). */
#ifndef WARREN_POLICY_GITWATCH_H
#define WARREN_POLICY_GITWATCH_H

#include <stdbool.h>
#include <stddef.h>

struct git_watch;

/* Watch the file system of the worktree (fd on it) for creates, moves, writes, closes after
 * writing, attribute changes and deletes. NULL, with *why (static text) set, when it cannot. */
struct git_watch *git_watch_start(int worktree_fd, const char **why);
/* The descriptor to poll for events (readable), or -1. */
int git_watch_fd(const struct git_watch *g);
/* Read the events there are now (never blocks); the events themselves are kept small: the
 * directory each concerns, once. */
void git_watch_drain(struct git_watch *g);
/* Stop watching (the job is over): the events there are read, the marks removed and the
 * groups closed in the background; no event after this is counted. */
void git_watch_stop(struct git_watch *g);
void git_watch_free(struct git_watch *g);

/* The directories to check, relative to the worktree ("" is the worktree itself): full means
 * the directory was created or moved in during the run, and everything below it is checked. */
struct git_changed {
	char *rel;
	bool full;
};

/* Drain what is left, and turn what the events named into directories of the worktree (each
 * confirmed below it by descriptor, never by its path alone). 0 with *v (heap, free with
 * git_changed_free) and *n; -1 with *why (static text) when the whole worktree must be
 * walked instead. */
int git_watch_changed(struct git_watch *g, int worktree_fd, struct git_changed **v, size_t *n, const char **why);
void git_changed_free(struct git_changed *v, size_t n);

#endif
