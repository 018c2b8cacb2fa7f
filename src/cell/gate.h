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
 *    bind, /proc, /run...: cell/mounts.c's lists);
 *  - a namespace a bundle names to join (linux.namespaces[].path: a pod's network, IPC, UTS or
 *    PID namespace) is a namespace of the type it names and not the host's own; the host's (named,
 *    or asked for by leaving the namespace out: hostNetwork, hostIPC, hostPID) only where the
 *    node's operator allows it in warren.conf (gate_decide_ns, cell/gate_ns.c). */
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
	GATE_NS_NOT_NS,         /* a namespace to join: the file is no namespace (or cannot be opened) */
	GATE_NS_WRONG_TYPE,     /* ... a namespace of another type than named */
	GATE_NS_HOST,           /* the host's own namespace (named, or the bundle left it out), not allowed */
	GATE_NS_ROOTLESS,       /* a namespace to join or the host's, for a caller without root */
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

/* ---- namespaces (cell/gate_ns.c) ---- */

/* The namespaces a cell may have other than its own: joined by path, or the host's. */
enum gate_ns_kind { GATE_NS_NET, GATE_NS_IPC, GATE_NS_UTS, GATE_NS_PID, GATE_NS_KINDS };

/* What a namespace a bundle names (or leaves out) is. */
struct gate_ns_facts {
	enum gate_ns_kind kind; /* the type the bundle names */
	bool given;             /* a path was given; else the namespace was left out: the host's */
	bool nsfs;              /* the path is a namespace's file (nsfs) */
	int open_errno;         /* it could not be opened (errno), 0 */
	int type;               /* its type (CLONE_NEWNET...: NS_GET_NSTYPE), 0 unknown */
	bool host;              /* the host's own (its pid 1's) or the caller's own */
	bool host_allowed;      /* the node's operator allows the host's namespace of this kind */
};

/* The decision, a pure function (a->uid: 0 is a root caller, who alone can join). */
enum gate_reason gate_decide_ns(const struct gate_ask *a, const struct gate_ns_facts *f);
/* The refusal as one line naming the field (opt: "linux.namespaces[4]"), the path (NULL when
 * left out) and the setting that allows the host's namespace. */
char *gate_ns_message(enum gate_reason r, const struct gate_ns_facts *f, const char *opt, const char *path);
/* The kind's names: "network", "net" (/proc/PID/ns/), the pod's field ("hostNetwork") and
 * warren.conf's key that allows the host's ("oci.host_network"); the CLONE_NEW* flag. */
const char *gate_ns_type_name(enum gate_ns_kind k);
const char *gate_ns_proc_name(enum gate_ns_kind k);
const char *gate_ns_pod_field(enum gate_ns_kind k);
const char *gate_ns_conf_key(enum gate_ns_kind k);
int gate_ns_clone_flag(enum gate_ns_kind k);
/* Open the namespace at path (following links: /proc/PID/ns/net is one) and gather f's facts
 * (f->kind, f->host_allowed are the caller's): a descriptor setns() takes (O_RDONLY), or -1
 * when it is no namespace. */
int gate_ns_open(const char *path, struct gate_ns_facts *f);
/* Gather and decide for the namespace of kind at path (NULL: left out, the host's; name: the
 * path as the user wrote it): 0 with *fd (-1 for the host's) or -EPERM with err set to the one
 * line. */
int gate_check_ns(const struct gate_ask *a, enum gate_ns_kind kind, const char *path, const char *name, bool host_allowed,
		  const char *opt, int *fd, struct error *err);

#endif
