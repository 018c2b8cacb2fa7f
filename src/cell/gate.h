/* SPDX-License-Identifier: Apache-2.0 */
/* gate.h - the one gate: may the one who asked, through the face they used, have this host
 * path for this use in a cell? Every host path a spec names (the root file system, the
 * worktree, a bind or the externals, an OCI bundle's state directory) goes through it, whichever
 * face named it: the command line, a job file, the server's API, an OCI bundle.
 *
 * The decision (gate_decide) is a pure function of plain facts, unit-tested as a table
 * (tests/unit/test_gate.c); gate_facts_at gathers the facts of a path from its descriptor (what
 * was opened is what is judged) and gate_check joins the two with one message a user reads.
 *
 * Its rules, allowed rather than refused where it can say so (docs/hardening.md "The gate"):
 *  - a job file, an API job or a bundle may only narrow what its caller could choose: their own
 *    paths stay below their anchor (the job file's directory; the API request's worktree; for a
 *    bundle's root, the bundle's directory, or else a directory shaped as an image);
 *  - nothing on a kernel file system, nothing inside or holding a warren state directory (other
 *    runs' records, scratch, served jobs, the image store: images are given by name);
 *  - for a root caller, no root file system that is, lies in or holds the home of another
 *    user (the image's idmap would show her files as the run user's);
 *  - the host's own directories stay the host's (a root file system, a read-write worktree or
 *    bind, /proc, /run...: cell/mounts.c's lists). */
#ifndef WARREN_CELL_GATE_H
#define WARREN_CELL_GATE_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/error.h"

/* The file that marks a warren state directory (beside runs/, 0700), made when one is opened
 * to be written (run/rundir.c); older ones are known by runs/ beside history.db, images/ or
 * serve/. */
#define GATE_STATE_MARK ".warren-state"

/* Is path, by name with no link at its end, a warren state directory (its shape, above)? */
bool gate_is_state_dir(const char *path);

/* Which face named the path. */
enum gate_face {
	GATE_CLI,      /* the caller's own command line (or an API request's own fields) */
	GATE_JOBFILE,  /* a job file's keys */
	GATE_API,      /* a job sent to the server (its text: a job file without a directory) */
	GATE_BUNDLE,   /* an OCI bundle's config.json */
};

/* What the path is for. */
enum gate_use {
	GATE_ROOT,     /* the cell's root file system (an image directory) */
	GATE_WORKTREE, /* the worktree (read-write unless --work-ro) */
	GATE_BIND,     /* a read-write bind's source */
	GATE_BIND_RO,  /* a read-only bind's source (and the externals) */
	GATE_STATE,    /* a state directory a bundle names (the annotation warren.state) */
};

/* Who asked, and through which face. */
struct gate_ask {
	enum gate_face face;
	uid_t uid;              /* the caller's uid */
	const char *anchor;     /* canonical: the directory the face's own paths must stay below
	                           (a job file's directory, an API job's worktree, a bundle's
	                           directory); NULL for the command line */
};

/* What the path is (gate_facts_at fills them from a descriptor). */
struct gate_facts {
	const char *path;       /* canonical */
	bool is_dir, is_reg;
	uid_t owner;
	nlink_t nlink;
	bool kernel_fs;         /* on a kernel's file system (proc, sysfs, devtmpfs...) */
	bool in_state;          /* is or lies inside a warren state directory */
	bool state_root;        /* is itself a state directory */
	const char *holds_state;  /* a known state directory below it, or NULL */
	const char *home_of;    /* the user (name) whose home it is, lies in or holds: another
	                           than the caller, for a root caller; NULL */
	bool holds_home;        /* ... it holds that home (else: is it or lies in it) */
	bool below_anchor;      /* below (or at) the ask's anchor */
	bool image_shaped;      /* holds etc/, bin/ or usr/ (a root file system's shape) */
	bool run_plain_file;    /* a regular file with one name under /run (cli's run_plain_file) */
};

/* Why a path is refused; GATE_OK: allowed. */
enum gate_reason {
	GATE_OK,
	GATE_KERNEL_FS,         /* on a kernel file system */
	GATE_IN_STATE,          /* in a state directory (the store too) */
	GATE_HOLDS_STATE,       /* holds a state directory */
	GATE_OUTSIDE_ANCHOR,    /* a face's own path outside its anchor */
	GATE_NOT_IMAGE,         /* a bundle's root outside the bundle, not shaped as an image */
	GATE_OTHER_HOME,        /* root: another user's home (is, in, holds) */
	GATE_SYSTEM_ROOT,       /* a host directory as the root file system */
	GATE_SYSTEM_RW,         /* a host directory read-write (worktree, bind) */
	GATE_HOST_PLACE,        /* a bind of /proc, /run, / ... (mount_source_refused) */
	GATE_HARD_LINKS,        /* a read-write bind of a file with other names */
	GATE_NOT_STATE,         /* a bundle's state directory that is not an existing one of the caller's */
};

/* The decision: a pure function of the ask, the use and the facts. */
enum gate_reason gate_decide(const struct gate_ask *a, enum gate_use u, const struct gate_facts *f);

/* The refusal as one line: "OPT NAME: why; what to do" (opt: "--rootfs", "rootfs", "root.path"...;
 * name: the path as the user should read it, NULL for f->path). */
char *gate_message(enum gate_reason r, const struct gate_ask *a, enum gate_use u, const struct gate_facts *f,
		   const char *opt, const char *name);

/* The facts of the path open at fd (any descriptor; canon its canonical path) that the decision
 * of use u for a reads. states (NULL-terminated, run/rundir.c statedir_known) are the state
 * directories the path may not hold: the first is the run's own (made or not yet; "" for
 * none), the others canonical names that count where they are still state directories, for a
 * root file system or a path a job file, an API job or a bundle named (the command line's own
 * worktree or bind is the caller's choice). f->path is canon; gate_facts_free frees the rest. */
void gate_facts_at(int fd, const char *canon, const struct gate_ask *a, enum gate_use u, const char *const *states,
		   struct gate_facts *f);
void gate_facts_free(struct gate_facts *f);

/* Gather and decide: 0, or -EPERM with err set to the one line. */
int gate_check(int fd, const char *canon, const char *name, const struct gate_ask *a, enum gate_use u,
	       const char *const *states, const char *opt, struct error *err);

/* The same for a path not yet opened (a job file's keys while it is read): opened without
 * following a last symlink's owner checks (the run opens it again, checked, and asks again). */
int gate_check_path(const char *path, const struct gate_ask *a, enum gate_use u, const char *const *states,
		    const char *opt, struct error *err);

#endif
