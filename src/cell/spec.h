/* SPDX-License-Identifier: Apache-2.0 */
/* spec.h - the driver-independent description of one cell: what to run, where, as whom, with
 * which limits. The CLI and the job layer fill it; the supervisor and a driver read it. */
#ifndef WARREN_CELL_SPEC_H
#define WARREN_CELL_SPEC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cell/cellmount.h"
#include "cell/contract.h"   /* RUN_ID_LEN */
#include "cell/gate.h"       /* enum gate_face */
#include "net/opts.h"    /* struct net_opts (--net, --publish) */
#include "policy/policy.h"
#include "util/limits.h"

/* How the cell is made: Linux namespaces (cell/container.h) or a microVM (cell/vm.h). */
enum cell_driver { CELL_DRIVER_CONTAINER = 0, CELL_DRIVER_VM };

struct cell_spec {
	char id[RUN_ID_LEN + 1];
	enum cell_driver driver;
	char **argv;          /* NULL-terminated */
	char **env;           /* final environment, TMPDIR last; NULL-terminated */
	char *rootfs;         /* absolute, or NULL for the host's / read-only */
	bool root_ro;         /* with rootfs: its overlay read-only too (an OCI bundle's root.readonly) */
	bool has_umask;       /* the job's umask is job_umask (an OCI bundle's process.user.umask); */
	mode_t job_umask;     /* else the caller's */
	char *worktree;       /* absolute, symlink-free; NULL with --work none */
	bool worktree_ro;     /* --work-ro: mounted read-only */
	char *workdir;        /* --workdir: the job's working directory in the cell, or NULL (the
	                         worktree; the home with --work none) */
	char *hostname;       /* --hostname, or NULL: the run id */
	struct cell_mount *mounts; /* applied in order (cell/mounts.h); added by spec_add_mount() */
	struct policy_mount *policy_mounts;  /* the same, as the policy sees them (its strings are mounts') */
	size_t n_mounts;
	char *image;          /* --image NAME: a stored image, whose root is rootfs (or NULL) */
	char *image_digest;
	char **image_env;     /* the image's Env (NULL-terminated, or NULL): defaults under the
	                         caller's variables (cli/spec.c) */
	int image_fd;         /* the image's shared lock (image/store.h), held for the run's life (0: none) */
	int worktree_fd;      /* O_PATH of the worktree, opened once: what is mounted is what was
	                         checked, whatever happens to the path later (-1 until opened) */
	char *rundir;         /* absolute <state>/runs/<id> */
	char *statedir;       /* absolute <state> (masked inside the cell) */
	int runs_fd;          /* <state>/runs and the run directory, opened once (run/rundir.h);
	                         the supervisor writes the record through them (0: not open) */
	int rundir_fd;
	char state_tag[9];    /* the state directory's identity, in the run's cgroup names */
	char *cgroup_path;    /* an OCI bundle's linux.cgroupsPath, checked and relative to each
	                         hierarchy's root (cgroup_path_parse); NULL: warren/<name> */

	uid_t uid;            /* the run user inside the cell */
	gid_t gid;
	char *user_name;
	char *home;           /* the home path inside the cell */

	bool rootless;        /* started by a non-root user */
	uid_t host_uid;       /* the caller */
	gid_t host_gid;
	uid_t id_base;        /* root mode: cell id N is host id id_base + N */

	bool keep;
	bool warm;            /* a warm cell (serve --warm): made before its run; its init waits for
	                         container_take, which mounts the run's own scratch then */
	bool direct;          /* a job that is a plain command, started cold: its EXEC_START waits on
	                         the control socket and the cell's job process execs it (no
	                         executor, no shell), as a warm cell's take does (job_run) */
	const char *start;    /* NULL (a plain run), "warm" or "cold": how the cell of a server's
	                         run was had, in the record and the history */
	char *start_why;      /* with "cold": why no warm cell was taken (or NULL) */
	unsigned claimed;     /* with "warm": the settings its run set at the claim (CLAIM_*) */
	bool tty;             /* give the job a pseudo-terminal of its own */
	bool tty_stderr;      /* its stderr too is the terminal, whatever warren's is (OCI) */
	struct limits limits;
	struct policy_opts policy; /* seccomp, Landlock, masks, protected paths (policy/policy.h) */
	struct net_opts net;  /* --net, --publish, --dns-max-names (net/net.h); mode 0: none */
	char *name;           /* --name, or NULL */
	char **labels;        /* --label k=v, NULL-terminated (or NULL) */
	char *history_db;     /* --db (run/history.h): NULL for <state>/history.db, "none" for none */
	/* which face named the root and the worktree (cell/gate.h; 0: the command line), and the
	 * directory a job file's or a bundle's own paths must stay below (canonical, or NULL) */
	enum gate_face root_face, work_face;
	char *anchor;
	/* The namespaces the cell has other than its own, indexed by enum gate_ns_kind (network,
	 * ipc, uts, pid): an OCI bundle's, judged by the gate (cell/gate.h): a pod's, joined by
	 * the descriptor the gate opened (fd), or the host's (the supervisor's), which the node's
	 * operator allowed. Root mode only. */
	struct cell_ns { enum cell_ns_from { CELL_NS_OWN = 0, CELL_NS_JOIN, CELL_NS_HOST } from; int fd; } ns[GATE_NS_KINDS];
	/* An OCI bundle's linux.sysctl: the namespaced safe ones alone (cell/sysctl.h), set by init
	 * in the cell's own namespaces or the pod's it joined, never the host's */
	struct cell_sysctl { char *key; char *value; } *sysctls;
	size_t n_sysctls;
	gid_t *groups;        /* the job's supplementary groups (cell gids: process.user.additionalGids) */
	size_t n_groups;
	dev_t rootfs_dev;     /* the root the gate judged (cli/spec.c): the one mounted, or none */
	ino_t rootfs_ino;
};

/* The host uid/gid the run user's files carry. */
uid_t spec_host_uid(const struct cell_spec *s);
gid_t spec_host_gid(const struct cell_spec *s);
/* Host id of cell root (root mode) or of the caller (rootless). */
uid_t spec_host_root_uid(const struct cell_spec *s);
/* The host's system groups (root's, shadow, adm, disk, systemd-journal...): gids below this
 * (login.defs' SYS_GID_MAX + 1 on Debian, Fedora, Arch), never one of a job's groups. */
#define SPEC_HOST_SYSTEM_GIDS 1000u
/* Is the host gid of a volume (a bind's source, its own group: source_gid) the job's
 * supplementary group of the same number in the cell (a pod's fsGroup: the kubelet chowned
 * the volume to it)? Only that one group of the job's, and never a host system group: a
 * volume's other files, and /etc/shadow's or the journal's group, stay as the host shows them. */
bool spec_volume_group(const struct cell_spec *s, gid_t source_gid);
/* What the policy layer reads of s (policy/policy.h): the one place that fills it. */
struct policy_ctx spec_policy_ctx(const struct cell_spec *s);
/* Add m (its strings and fd are the spec's now) to the cell's mounts, and to the policy's view
 * of them. */
void spec_add_mount(struct cell_spec *s, struct cell_mount m);
/* The job's working directory in the cell: workdir, else the worktree, else the home (inline:
 * the policy context carries it down). */
static inline const char *spec_cwd(const struct cell_spec *s)
{
	return s->workdir ? s->workdir : s->worktree ? s->worktree : s->home;
}
/* Is the cell's namespace of kind k its own (made with the cell)? */
static inline bool spec_ns_own(const struct cell_spec *s, enum gate_ns_kind k) { return s->ns[k].from == CELL_NS_OWN; }
/* The cell's hostname: --hostname, else the run id. */
static inline const char *spec_hostname(const struct cell_spec *s) { return s->hostname ? s->hostname : s->id; }
void cell_spec_free(struct cell_spec *s);
/* The root file system rootfs, opened with no symlink on the way and, when the gate judged
 * it, the same (device and inode) as it judged; -1 with errno (ESTALE: another). */
int spec_root_open(const struct cell_spec *s);
/* Can run r (its spec built as for a cold start) take warm cell w? NULL when it can, else why
 * not, one phrase ("its image changed (re-imported) since the warm cell was made"). What
 * makes a cell's shape: its root (rootfs, image), worktree, run user, network mode, binds,
 * workdir, hostname and policy. The run's own command, environment, labels and limits (time,
 * CPU time, memory, processes, CPU bandwidth and placement, output, scratch) are set at its
 * claim (cell_spec_claims), but for a rootless cell, which has no cgroup to take its memory,
 * process or CPU limits. */
const char *cell_spec_shape_diff(const struct cell_spec *w, const struct cell_spec *r);

/* The settings a run sets at a warm cell's claim, in the record's "claimed" (cell_claim_names). */
enum cell_claim {
	CLAIM_ENV = 1 << 0, CLAIM_LABELS = 1 << 1, CLAIM_TIME = 1 << 2, CLAIM_CPU_TIME = 1 << 3,
	CLAIM_MEMORY = 1 << 4, CLAIM_PIDS = 1 << 5, CLAIM_CPUS = 1 << 6, CLAIM_OUTPUT = 1 << 7,
	CLAIM_SCRATCH = 1 << 8, CLAIM_PUBLISH = 1 << 9, CLAIM_ALLOW = 1 << 10,
};
#define CLAIM_N 11
/* Which of run r's settings are its own at warm cell w's claim (CLAIM_* bits): those it has
 * and the cell was not made with. */
unsigned cell_spec_claims(const struct cell_spec *w, const struct cell_spec *r);
/* The name of claim bit i (0 .. CLAIM_N-1): "env", "labels", "time", "cpu-time", "memory",
 * "pids", "cpus", "output", "scratch", "publish", "allow". */
const char *cell_claim_name(unsigned i);

#endif
