/* SPDX-License-Identifier: Apache-2.0 */
/* gitguard.h - after a run: what the job left in its worktree that git on the host would obey
 * (a configuration, hooks, a redirect to another git directory, a todo list with commands, a
 * new repository), found by one walk of the worktree and moved aside, so that the host user's
 * next `git status` runs nothing the job wrote. See docs/hardening.md, "Git in the worktree".
 *
 * "Left by the run" means changed since the run started: the entry's ctime, which the kernel
 * sets on every create, write, rename, link and attribute change, and which a job cannot set
 * back (that needs the clock). */
#ifndef WARREN_POLICY_GITGUARD_H
#define WARREN_POLICY_GITGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "policy/gitwatch.h"

/* What a file or directory inside a git directory is to git. */
enum git_control {
	GIT_DATA = 0,        /* objects, refs, index, HEAD, logs...: data, nothing runs from it */
	GIT_CONFIG,          /* config, config.worktree: can run commands (core.fsmonitor, ...) */
	GIT_HOOKS,           /* hooks/: programs git runs */
	GIT_REDIRECT,        /* commondir: git takes its configuration and refs from elsewhere */
	GIT_ATTRIBUTES,      /* info/attributes: chooses filter, diff and merge programs */
	GIT_ALTERNATES,      /* objects/info/alternates: objects read from elsewhere */
	GIT_REMOTES,         /* remotes/, branches/: where fetch and push go */
	GIT_TODO,            /* rebase-merge/, rebase-apply/, sequencer/: todo lists with exec lines */
};

/* The control entries of a git directory, by path inside it, in the order they are checked. */
struct git_control_path {
	const char *path;
	enum git_control kind;
};
extern const struct git_control_path git_control_paths[];

/* What kind a path inside a git directory is (GIT_DATA for anything not listed, and for a
 * path below a listed directory: the directory is the unit). */
enum git_control git_control_of(const char *path);
/* One line for people: "a git configuration (it can run commands)". */
const char *git_control_what(enum git_control k);
/* Would git take a directory holding these entries for a git directory (a bare repository)?
 * HEAD with objects and refs, or HEAD with commondir (git's is_git_directory()). */
bool git_dir_looks_like(bool head, bool objects, bool refs, bool commondir);
/* Is name a hook git runs (not a *.sample that `git init` writes)? */
bool git_hook_name_runs(const char *name);
/* A linked worktree's commondir as `git worktree add` writes it ("../.."): no redirect. */
bool git_commondir_is_standard(const char *content);

/* The paths inside the worktree that the worktree's own .git/config (text) makes git run or
 * read configuration from: core.hooksPath (relative to the worktree's top), include.path and
 * includeIf.*.path (relative to .git), each as a path relative to the worktree (absolute
 * (worktree) values inside it too); outside ones are left out. NULL-terminated (heap), or
 * NULL when there are none. */
char **git_config_worktree_paths(const char *text, const char *worktree);

enum git_action {
	GIT_MOVED,           /* renamed to moved_to: git no longer reads it */
	GIT_REPORTED,        /* a repository the run created or changed: git there obeys it */
	GIT_NOT_MOVED,       /* could not be moved (error says why): do not run git there */
	GIT_UNCHECKED,       /* a directory the walk could not enter (error says why) */
};

struct git_finding {
	char *path;          /* relative to the worktree, printable (\xNN for odd bytes) */
	char *moved_to;      /* GIT_MOVED: the new path, relative to the worktree */
	const char *what;
	enum git_action action;
	char *error;
};

#define GIT_AUDIT_MAX_FINDINGS 100
#define GIT_AUDIT_MAX_DEPTH 400

struct git_audit {
	struct git_finding *v;   /* the first GIT_AUDIT_MAX_FINDINGS */
	size_t n;
	uint64_t total;          /* all findings, listed or not */
	uint64_t dirs;           /* directories walked */
	uint64_t changed;        /* method "fanotify": the directories the run changed */
	double seconds;          /* the walk's wall time */
	const char *method;      /* "walk" (all of the worktree) or "fanotify" (what changed) */
	const char *fallback;    /* "walk" where fanotify was meant: why (static text) */
};

/* Walk the worktree (an fd on it; O_PATH is fine), find what changed since `since` that git
 * would obey, and move each aside to its name + suffix (e.g. ".warren-run_01..."). Never
 * follows a symlink, never leaves the worktree. */
void git_audit_worktree(int worktree_fd, const struct timespec *since, const char *suffix, struct git_audit *out);
/* The same, but only on the ways to the directories the run changed (v, from gitwatch.h), and
 * all of those created or moved in: what the whole walk finds there, no more. */
void git_audit_changed(int worktree_fd, const struct timespec *since, const char *suffix,
		       const struct git_changed *v, size_t n, struct git_audit *out);
void git_audit_free(struct git_audit *a);

#endif
