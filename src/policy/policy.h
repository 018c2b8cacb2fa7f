/* SPDX-License-Identifier: Apache-2.0 */
/* policy.h - the defences a cell puts around its job: a seccomp profile, Landlock rules,
 * capabilities and rlimits (applied by the job process itself, just before it executes the
 * job), masked kernel files and read-only protected worktree paths (mounted by init while it
 * builds the cell's root). See docs/hardening.md. */
#ifndef WARREN_POLICY_POLICY_H
#define WARREN_POLICY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "util/error.h"

/* system calls newer than some C libraries' headers (__NR_fchmodat2...) */
#include "util/sys.h"

/* What TCP the job may use under Landlock ABI >= 4. Decided by the network mode: the cell has
 * loopback only for now, so any TCP is allowed (NET_ANY leaves TCP unhandled). */
enum policy_net {
	POLICY_NET_ANY = 0,   /* TCP bind/connect not restricted by Landlock */
	POLICY_NET_NONE,      /* no TCP bind or connect at all */
};

struct sock_filter;

/* The user's choices; zero is the default (every defence on). */
struct policy_opts {
	char *seccomp_file;     /* --seccomp FILE, or NULL: the default profile */
	char *seccomp_text;     /* its text, read (and checked) by the CLI on the host: warren's
	                           format or JSON (seccomp_text_is_json) */
	bool allow_nested;      /* --allow-nested: user namespaces may be created inside */
	bool require_landlock;  /* --require-landlock: refuse to start without Landlock */
	bool core;              /* --core: keep RLIMIT_CORE as the caller had it */
	bool no_sys;            /* --no-sys: no /sys in the cell */
	char **protect;         /* --protect PATH (relative to the worktree), NULL-terminated */
	size_t nprotect;
	enum policy_net net;
	bool no_refused_writes; /* --no-refused-writes: no write watch (policy/watch.c) */
	/* made by policy_prepare() on the host, so that the freshly cloned job process only
	 * loads it: the seccomp program */
	struct sock_filter *bpf;
	unsigned short bpf_len;
	/* a second program loaded after warren's (an OCI bundle's linux.seccomp): the kernel runs
	 * both and the stricter action wins, so it can only take away (NULL: none) */
	struct sock_filter *extra_bpf;
	unsigned short extra_len;
	uint64_t caps_drop;     /* capabilities root of the cell gives up too (an OCI bundle's
	                           process.capabilities lacks them); 0: none */
	/* more of the cell hidden (or made read-only) beside warren's own lists (an OCI bundle's
	 * linux.maskedPaths and readonlyPaths): absolute; below /proc and /sys checked as
	 * warren's own are, elsewhere resolved in the cell's root (policy/mask.c) */
	struct policy_mask { char *path; bool readonly; } *masks;
	size_t n_masks;
};

/* An extra mount of the cell (--bind, --ro-bind, --externals) as the policy sees it: where it
 * is in the cell, what of the host it shows, and whether the job may write there. */
struct policy_mount {
	const char *source;       /* the host's path */
	const char *destination;  /* the path in the cell */
	bool readonly;
};

/* What the policy knows of the cell it defends: a few fields of the cell spec and the user's
 * choices, filled in one place (cell/spec.c, spec_policy_ctx()). Strings are the spec's. */
struct policy_ctx {
	const char *id;         /* the run id, for messages */
	const char *worktree;   /* absolute: the same path in the cell as on the host (NULL: --work none) */
	int worktree_fd;        /* its O_PATH descriptor on the host, opened and checked once (-1, or 0: none) */
	bool worktree_ro;       /* --work-ro */
	const char *cwd;        /* the job's working directory in the cell */
	const struct policy_mount *mounts;  /* --bind, --ro-bind, --externals */
	size_t n_mounts;
	const char *home;       /* the run user's home in the cell (NULL: none) */
	const char *rootfs;     /* --rootfs (the overlay root is the run's own), or NULL */
	const char *rundir;     /* <state>/runs/<id> on the host (NULL: not made) */
	const char *statedir;   /* <state> on the host, hidden in the cell (NULL: not known) */
	uid_t uid;              /* the run user in the cell */
	bool scratch_tmpfs;     /* --scratch: the run's tmp is a tmpfs of its own */
	const struct policy_opts *policy;
};

/* What the worktree's git would run from it, read-only in the cell: a gitfile .git (it names
 * the git directory), and the paths its .git/config names (core.hooksPath, include.path,
 * includeIf.*.path) inside the worktree. Added to p->protect; errors are not the user's. */
int policy_add_git_protect(struct policy_opts *p, int worktree_fd, const char *worktree);

/* The worktree paths that are read-only in every cell (the host executes them later). */
extern const char *const policy_default_protect[];

void policy_opts_free(struct policy_opts *p);
/* The user's choices for spec.json: {"seccomp": FILE|null, "allow_nested": bool,
 * "require_landlock": bool, "core": bool, "no_sys": bool, "protect": [PATH...]} (a jansson
 * json_t *, new reference; `warren policy` reads "protect" back). */
struct json_t;
struct json_t *policy_json(const struct policy_opts *p);
/* On the host, before the cell is made: the seccomp program of the profile p selects into
 * p->bpf (the default profile's was compiled when warren was built, a --seccomp FILE's is
 * compiled now). (Without it the job compiles the profile itself, which costs it a
 * millisecond.) */
int policy_prepare(struct policy_opts *p, struct error *err);
/* The same, always compiled with libseccomp now (what the build embeds, and its check). */
int policy_compile(struct policy_opts *p, struct error *err);
/* A seccomp program compiled at build time (build/gen/seccomp_prebuilt.c). */
struct sock_filter;
struct policy_filter {
	const struct sock_filter *bpf;
	unsigned short len;
};

/* ---- the command line (host side) ---- */

/* --seccomp FILE: read and check the profile (syntax, names, values) into p: warren's format,
 * or a JSON profile (OCI linux.seccomp, docker's, podman's, containerd's). */
int policy_set_seccomp_file(struct policy_opts *p, const char *file, struct error *err);
/* --protect PATH: a relative path inside the worktree, without '..'. */
int policy_add_protect(struct policy_opts *p, const char *path, struct error *err);
/* --seccomp-print: the profile p selects (the default, or --seccomp's), in the text format,
 * with the rules --allow-nested lifts commented out when it is set. */
int policy_seccomp_print(FILE *out, const struct policy_opts *p, struct error *err);

/* ---- the seccomp profile ---- */

/* The default profile, in the text format of docs/hardening.md. */
extern const char policy_default_seccomp[];

enum seccomp_cmp { CMP_NE = 1, CMP_LT, CMP_LE, CMP_EQ, CMP_GE, CMP_GT, CMP_MASKED_EQ };

struct seccomp_cond {
	unsigned arg;          /* 0..5 */
	enum seccomp_cmp op;
	uint64_t mask;         /* CMP_MASKED_EQ only */
	uint64_t value;
};

#define SECCOMP_MAX_COND 6
#define SECCOMP_MAX_SET 16

struct seccomp_rule {
	bool allow;            /* allow or deny */
	int errnum;            /* deny: the errno the call fails with */
	char name[40];
	int nr;                /* the native syscall number */
	int line;              /* in the profile's text */
	unsigned ncond;
	struct seccomp_cond cond[SECCOMP_MAX_COND];   /* "if": all must hold */
	bool unless;           /* "unless argN in V,...": deny when argN's low 32 bits are none of set */
	unsigned unless_arg;
	unsigned nset;
	uint32_t set[SECCOMP_MAX_SET];
	bool lifted;           /* removed by --allow-nested */
	bool dropped;          /* removed by a later 'allow NAME' */
};

struct seccomp_profile {
	bool default_allow;
	int default_errnum;    /* default deny: its errno */
	struct seccomp_rule *rules;
	size_t n, cap;
};

/* Parse text (name: for messages) into prof. 0, or -EINVAL with "NAME, line N: ..." in err. */
int seccomp_profile_parse(struct seccomp_profile *prof, const char *text, const char *name, struct error *err);
void seccomp_profile_free(struct seccomp_profile *prof);
/* Mark the rules --allow-nested lifts: clone3, and clone/unshare rules on CLONE_NEWUSER. */
void seccomp_profile_allow_nested(struct seccomp_profile *prof);
/* Build the libseccomp filter of prof (a scmp_filter_ctx, returned as void *). NULL and err
 * on failure. Non-native architectures fail every call with EPERM. */
void *seccomp_profile_compile(const struct seccomp_profile *prof, struct error *err);
/* The program of a libseccomp filter (a scmp_filter_ctx as void *), ready for seccomp(2); *out
 * is the caller's to free. */
int seccomp_ctx_bpf(void *ctx, struct sock_filter **out, unsigned short *len, struct error *err);
/* A profile in JSON (the OCI spec's linux.seccomp, or a docker/podman/containerd profile file),
 * compiled with libseccomp as runc does (seccomp_json.c) into a program ready for seccomp(2);
 * *out is the caller's to free. where names it in messages ("linux.seccomp"). */
int seccomp_json_bpf(struct json_t *prof, const char *where, struct sock_filter **out, unsigned short *len,
		     struct error *err);
/* Is text a JSON profile (its first character not a space is '{') rather than warren's format? */
bool seccomp_text_is_json(const char *text);
/* The whole program of prof, ready for seccomp(2): libseccomp's filter with the 'unless'
 * rules before it (see seccomp.c). *out is the caller's to free. */
int seccomp_profile_bpf(const struct seccomp_profile *prof, struct sock_filter **out, unsigned short *len,
			struct error *err);

/* ---- in the job process, just before exec ---- */

/* Apply everything, in this order: rlimits, capabilities, Landlock, the write watch (when
 * watch_sock >= 0), seccomp (the last needs no call the filter refuses). */
int policy_apply_job(const struct policy_ctx *s, int watch_sock, struct error *err);
int policy_set_rlimits(const struct policy_ctx *s, struct error *err);
/* Non-root: check every capability set is empty. --user 0: keep only the documented set. */
int policy_set_caps(const struct policy_ctx *s, struct error *err);
/* No capability in any set, the bounding set empty (a helper such as the vm driver's qemu,
 * before it executes; needs CAP_SETPCAP, e.g. in a user namespace of its own). */
int policy_drop_all_caps(struct error *err);
extern const int policy_root_caps[];
extern const size_t policy_root_caps_n;
/* Landlock, best effort down to ABI 1; an error only with --require-landlock (or a failure
 * the kernel should not give). *abi_out: the ABI used, 0 when Landlock is unavailable. */
int policy_landlock(const struct policy_ctx *s, int *abi_out, struct error *err);
/* In init, before pivot_root (paths under root): make the ruleset the job will enter. */
int policy_landlock_prepare(const struct policy_ctx *s, const char *root, struct error *err);
/* In a warm cell's init, once its take mounted the scratch (/tmp, /var/tmp, the home, /dev/shm)
 * over the mount points the prepared rules name: allow the new mounts too (a rule covers the
 * directory it was made on, not what is mounted over it later). */
int policy_landlock_allow_scratch(const struct policy_ctx *s, struct error *err);
int landlock_abi(void);
/* The file-system and net accesses a ruleset handles at ABI abi. */
uint64_t landlock_fs_handled(int abi);
uint64_t landlock_net_handled(int abi, enum policy_net net);
/* What the ruleset scopes to the job's domain at ABI abi (signals, abstract unix sockets). */
uint64_t landlock_scoped(int abi);
/* The kernel's files every cell has masked (/proc/kcore, /proc/sysrq-trigger, /sys/firmware...,
 * policy/mask.c): fn(arg, path in the cell, kind) with kind 'h' (hidden: /dev/null or an empty
 * directory), 'r' (a /dev/null that refuses writes) or 'o' (read-only); stops at fn's first
 * negative return. The vm driver sends the list to its guest. */
int policy_kernel_masks(int (*fn)(void *arg, const char *path, char kind), void *arg);
/* The worktree's protected paths (.git/hooks, .git/config..., --protect) resolved under the
 * cell's root (rootfd, seen at root: "" for the host's /) as the job would: fn(arg, path below
 * the root, leaf) for each directory on the way (leaf false: made a mount point of its own,
 * outermost first) and then each protected path (leaf true: read-only). What is not there is
 * skipped. The container binds them (mask.c); the vm driver sends them to its guest. */
int policy_protected_paths(const struct policy_ctx *s, int rootfd, const char *root,
			   int (*fn)(void *arg, const char *rel, bool leaf), void *arg);
/* The newest Landlock ABI warren knows. */
#define LANDLOCK_ABI_KNOWN 6
/* The job's rules, one call of fn per path in the cell with the access allowed beneath it (the
 * one list both drivers use: the container makes its ruleset from it, the vm driver sends it
 * to the guest); stops at fn's first negative return. */
int landlock_rules(const struct policy_ctx *s, int (*fn)(void *arg, const char *path, uint64_t access), void *arg);
/* The rights a rule on a file (not a directory) may carry. */
uint64_t landlock_file_rights(void);
int policy_seccomp(const struct policy_ctx *s, struct error *err);

/* ---- the write watch (watch.c) ---- */

/* The write watch's filter into f (cap entries): its length, or -errno. */
struct sock_filter;
int policy_watch_filter(struct sock_filter *f, size_t cap);
/* In the job, after no_new_privs: load the write watch's filter and send its listener to the
 * supervisor over sock (4 bytes of errno, the fd attached when errno is 0); closes sock.
 * From then until the supervisor holds the listener, the caller makes no watched call. */
void policy_watch_writes(int sock);

/* ---- in init, while it builds the cell's root (before pivot_root) ---- */

/* Mask kernel files of <root>/proc and <root>/sys, make /proc/sys and friends read-only,
 * hide /sys with --no-sys, take the host's cgroup trees out of <root>/sys/fs/cgroup, make the
 * protected worktree paths read-only, and prepare the Landlock ruleset the job enters. */
int policy_build_root(const struct policy_ctx *s, const char *root, struct error *err);

/* In init, after pivot_root, once in the run's cgroup and a cgroup namespace rooted there:
 * mount that cgroup read-only at /sys/fs/cgroup, which policy_build_root cleared of the host's
 * trees (nothing where it could only hide them, nor with --no-sys or an image's /sys). v1:
 * NULL-terminated controller lists of the hierarchies to show ("memory", "cpu,cpuacct"),
 * each at /sys/fs/cgroup/<list>; NULL: the cgroup2 file system itself. */
int policy_show_cgroup(const char *const *v1, struct error *err);

/* ---- checked access to the cell's kernel file systems ---- */

/* Open path below dirfd without following any symlink and without leaving dirfd, and check
 * that the result lives on a file system of type magic (PROC_SUPER_MAGIC, SYSFS_MAGIC,
 * TMPFS_MAGIC, DEVPTS_SUPER_MAGIC...; 0: any). flags: open flags (O_PATH, O_WRONLY...).
 * -ENOENT when it does not exist, -EXDEV when it is on another file system type. */
int policy_open_checked(int dirfd, const char *path, int flags, long magic);
/* Write data to path below dirfd through policy_open_checked(..., O_WRONLY, magic). */
int policy_write_checked(int dirfd, const char *path, long magic, const char *data, size_t len);

/* ---- the write check of `warren policy` and the supervisor ---- */

enum policy_access { POLICY_READ = 1, POLICY_WRITE, POLICY_EXEC };

/* May a run with spec s access path (a path inside the cell) this way? true or false, and
 * when false a one-line reason naming where the run may write. */
bool policy_allows(const struct policy_ctx *s, const char *path, enum policy_access how, char **why);
/* Is path one of the worktree's protected paths (read-only because the host runs it)? */
bool policy_protected(const struct policy_ctx *s, const char *path);

#endif
