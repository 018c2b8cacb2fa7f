/* SPDX-License-Identifier: Apache-2.0 */
/* refusal.h - the write watch's decision (refused.c), as pure functions: from what the lookups
 * in the cell found of a path (plain facts: does its directory resolve, is it read-only, does
 * the name exist, what is it), whether the kernel refused the call for the cell's rules (a
 * read-only mount, Landlock as policy_allows() answers, a mount point), in the kernel's order
 * of checks. refused.c gathers the facts with its system calls; tests/unit/test_refusal.c
 * checks the decision case by case. */
#ifndef WARREN_SUPERVISE_REFUSAL_H
#define WARREN_SUPERVISE_REFUSAL_H

#include <stdbool.h>
#include <stdint.h>

#include "policy/policy.h"

/* What a call does to one of its paths. */
enum want {
	W_CREATE,   /* a new name (mkdir, mknod, symlink, a link's new name): EEXIST when it exists */
	W_REMOVE,   /* unlink, rmdir, a rename's source: the kernel asks for a writable mount
	               before it looks the name up (EROFS even when it does not exist) */
	W_CHANGE,   /* chmod, chown, utimes, xattrs, truncate: the name is looked up first */
	W_OPEN,     /* open with flags */
	W_TO,       /* a rename's target */
	W_FROM,     /* a link's source: only looked up */
	W_CONNECT,  /* connect() to a unix pathname address: the socket file, symlinks followed */
};

/* The Landlock ABI from which LANDLOCK_ACCESS_FS_TRUNCATE rules a call. */
#define REFUSAL_LANDLOCK_TRUNCATE 3

/* One path of a call: what the call asks (set from its arguments), then what the lookups in
 * the caller's root found. */
struct path_facts {
	enum want want;
	uint64_t flags;      /* W_OPEN: open flags; W_TO: rename flags */
	int landlock;        /* the Landlock ABI from which Landlock rules this call (0: never:
	                        chmod, chown, utimes and xattrs are not file-system rights) */
	bool nofollow;       /* the call does not follow a symlink in the last component */
	/* found by the lookups */
	bool too_long;       /* a path (or a symlink's target) longer than PATH_MAX to look up:
	                        not judged, counted as unread */
	bool found_dir;      /* its directory resolves (if not: ENOENT, nothing to judge) */
	const char *dir;     /* its directory, resolved */
	const char *name;    /* its last name ("." and ".." included) */
	const char *resolved;  /* what the name leads to, resolved, when the lookups opened it (a
	                        symlink followed, a mount point, a dot), or NULL */
	bool slash_end;      /* the path ended in '/' */
	bool exists;         /* the name exists (a dangling symlink does) */
	bool dots;           /* the name is "." or ".." */
	bool is_dir, is_link, is_reg;  /* what the name leads to (after a followed symlink) */
	bool own_mount;      /* it is a mount point (a protected path): EBUSY to remove or replace */
	bool ro_dir;         /* its directory is on a read-only mount */
	bool ro_name;        /* what the name leads to is on a read-only mount (ro_dir unless opened) */
	bool procfs;         /* its directory is on procfs (no new names there: ENOENT) */
	uint64_t mnt;        /* the mount id of its directory (0: unknown) */
};

enum refusal_verdict {
	REFUSAL_NO,          /* not refused for the cell's rules (allowed, or failed otherwise) */
	REFUSAL_YES,         /* refused: EROFS or EACCES from the cell's rules */
	REFUSAL_TOO_LONG,    /* a path too long to look up: not judged */
};

struct refusal {
	enum refusal_verdict verdict;
	char *path;          /* the path as the cell resolves it (the caller frees it), or NULL */
	bool is_protected;   /* a protected worktree path (.git/hooks...) */
	bool landlock_denied;  /* Landlock does not let the job write there */
};

/* The call opens with O_CREAT to make a named file (not O_TMPFILE). */
bool refusal_creates(const struct path_facts *f);
/* Whether the lookups must open what an existing name leads to (its own mount, symlink
 * target or dot may differ from its directory), and whether they follow a symlink there. */
bool refusal_looks_at_name(const struct path_facts *f);
bool refusal_follows(const struct path_facts *f);
/* Decide one path as a call of its own, for a cell with policy p under Landlock ABI
 * landlock_abi (0: none). */
void refusal_decide(const struct path_facts *f, const struct policy_ctx *p, int landlock_abi, struct refusal *out);
/* Decide a call of two paths, in the kernel's order: a rename (a: W_REMOVE, b: W_TO) or a
 * link (a: W_FROM, b: W_CREATE), given each path decided alone (va, vb); hit[i]: whether
 * path i counts as refused. */
void refusal_decide_pair(const struct path_facts *a, const struct path_facts *b, const struct refusal *va,
			 const struct refusal *vb, int landlock_abi, bool hit[2]);

#endif
