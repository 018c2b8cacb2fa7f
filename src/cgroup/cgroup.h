/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup.h - the run's control group on v1, v2 and hybrid hosts: create it with its limits,
 * put the cell in it, read what the cell used and why the kernel stopped it, remove it. */
#ifndef WARREN_CGROUP_CGROUP_H
#define WARREN_CGROUP_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"
#include "util/limits.h"

enum cgroup_kind { CGROUP_NONE, CGROUP_V1, CGROUP_V2 };

#define CGROUP_V1_N 5 /* the v1 controllers a run may use: memory, pids, cpuacct, cpu, cpuset */

struct cgroup {
	enum cgroup_kind kind;
	char *v2;             /* v2: the run's directory */
	bool delegated;       /* v2: made below the rootless caller's delegated cgroup (delegate.h) */
	char *memory, *pids, *cpuacct, *cpu, *cpuset; /* v1: the run's directory per controller (or NULL) */
	int v2_fd;            /* v2: directory fd for CLONE_INTO_CGROUP */
	int tasks_fd[CGROUP_V1_N]; /* v1: the memory, pids, cpuacct, cpu and cpuset groups' tasks files (or -1), open
	                         for the cell's init to join them (cgroup_join_self) */
	char *name;           /* the run's name (warren/<name>), for its execs' groups (execgroup.h) */
	char *freezer;        /* v1: the run's group in the freezer hierarchy, made for its execs'
	                         groups (execgroup.h), or NULL; removed with the run's */
	char *made[CGROUP_V1_N]; /* a bundle's group (linux.cgroupsPath): the topmost parent the run
	                            made in each hierarchy (v2: [0]), removed with it when empty */
	char *home[CGROUP_V1_N]; /* cgroup_enter_self: the group the calling process came from, one
	                            per group of the run it joined (v2: [0]), or NULL */
	uint64_t oom_kills_at_start;
	int hits_fd[2];       /* the files cgroup_limit_hits reads (memory's OOM kills, pids.events),
	                         kept open once read (the memory one when the group is made; both
	                         by cgroup_open_hits): read again from their start, without a path
	                         walk in the cgroup file system (~40 us a run's end, the moment its
	                         caller waits for). A cell's init made after the first closes it
	                         (it keeps only what it needs). */
};

struct cgroup_usage {
	bool have_cpu, have_memory, have_pids;
	double cpu_user_s, cpu_sys_s;
	uint64_t cpu_ns;            /* user + system */
	uint64_t peak_memory;
	uint64_t pids_peak;         /* 0 when the host cannot tell */
	uint64_t pids_current;
	uint64_t oom_kills;
	uint64_t pids_max_hits;     /* forks refused by the pids limit */
	bool have_throttle;         /* a CPU bandwidth limit: how often and how long it held the run */
	uint64_t nr_throttled;      /* periods the quota ran out in */
	uint64_t throttled_us;      /* time the run's processes waited for the next period */
};

/* An OCI bundle's linux.cgroupsPath v (untrusted): the cgroupfs form "/a/b/NAME" or, when
 * systemd (runc's --systemd-cgroup) or v is "slice:prefix:name", the systemd form mapped as
 * runc maps it ("kubepods-besteffort-pod1.slice:cri-containerd:abc" -> kubepods.slice/
 * kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/cri-containerd-abc.scope; an empty
 * slice is system.slice, user.slice when rootless). *rel: the path relative to a hierarchy's
 * root, each component a plain name (no '.', '..', empty, nor warren's own warren/). One line
 * otherwise. */
int cgroup_path_parse(const char *v, bool systemd, bool rootless, char **rel, struct error *err);
/* Which controllers this host offers for a run started by us: a short text for selfcheck
 * ("v1: memory pids cpuacct", "v2: memory pids cpu") and what is missing. */
enum cgroup_kind cgroup_host_kind(char **where, char **missing);
/* Can a run started by us be limited by controller ctrl ("memory", "pids") here? (Rootless:
 * when the cgroup v2 subtree systemd delegates to the caller gives it, delegate.h.) */
bool cgroup_can_limit(const char *ctrl, bool rootless);
/* Create <mount>/warren/<id> in the controllers the limits need (and for accounting, when we
 * may), readable by the host group reader (the run user's) and host root only (rootless:
 * <delegate>/warren/<id>, below the caller's delegated v2 cgroup; none where there is no
 * delegate, and a limit then refused with why and what to do); or, with rel
 * (cgroup_path_parse's), <mount>/<rel> in every controller, with the parents it lacks (those
 * made are removed with it), and never one that exists; with every (a warm cell, whose run's
 * limits come at its claim), in every controller the host offers. Fails with a named reason
 * when a requested limit cannot be enforced here. */
int cgroup_create(struct cgroup *cg, const char *id, const char *rel, const struct limits *l, bool every,
		  bool rootless, gid_t reader, struct error *err);
/* A live run's new limits: those of l that are set (memory, pids, the CPU's) written into its
 * groups (runc's update); one line when its cell has no group of that controller or the
 * kernel refuses (a memory limit below what it uses). */
int cgroup_update(struct cgroup *cg, const struct limits *l, struct error *err);
/* A warm cell's claim: the limits l of the run that took it written into its group (made with
 * every, and the limits made), before the run's job starts: memory and processes as l has
 * them (0: none, as a cold run without), the CPU's that l sets. One line when the kernel
 * refuses, or when the cell has no group and l asks for a limit that needs one. */
int cgroup_claim(struct cgroup *cg, const struct limits *made, const struct limits *l, struct error *err);
/* v1, in a process placed in cg: the controllers of each hierarchy it is in, as
 * /proc/self/cgroup names them ("memory", "cpu,cpuacct"), each once, into out (heap strings,
 * NULL-terminated); how many. */
size_t cgroup_v1_hierarchies(const struct cgroup *cg, char *out[CGROUP_V1_N + 1]);
/* v1, called by the cell's init, alone in its process: move itself into every controller's
 * group through tasks_fd (v2 starts init there with CLONE_INTO_CGROUP). A process that moves
 * only itself spares the kernel the write lock on every thread group of the host, which waits
 * for an RCU grace period: 1-16 ms under load, where this costs microseconds. */
int cgroup_join_self(const struct cgroup *cg, struct error *err);
/* Close the supervisor's tasks_fd once init has its copies. */
void cgroup_close_join(struct cgroup *cg);
/* An empty cgroup that owns nothing (before cgroup_create). */
void cgroup_init(struct cgroup *cg);
void cgroup_usage(struct cgroup *cg, struct cgroup_usage *u);
/* What the run uses now, for its samples (supervise/sample.h): the memory charged to it
 * (memory.current; v1 memory.usage_in_bytes) and its CPU time so far (cpu.stat, cpuacct.usage;
 * a v1 group outside cpuacct: its processes' /proc/PID/stat); two reads on v2. 0, or -ENOENT
 * when it has no group that tells. */
struct cgroup_sample {
	bool have_memory, have_cpu;
	uint64_t memory, cpu_ns;
};
int cgroup_sample(struct cgroup *cg, struct cgroup_sample *out);
/* Of cgroup_usage, the counts that name a limit the kernel enforced: the OOM kills (when
 * memory), the forks the process limit refused (when pids); two reads at most. */
void cgroup_limit_hits(struct cgroup *cg, bool memory, bool pids, uint64_t *oom_kills, uint64_t *pids_max_hits);
/* The calling process (single-threaded) joins the run's groups, as the OCI face's supervisor
 * does: the pid a runtime's caller knows must be in the container's groups, as runc's container
 * process is (containerd's runc shim takes that pid's /proc/PID/cgroup for the container's
 * stats and OOM events). v1: each controller's group the run has (memory, pids, cpuacct, cpu,
 * cpuset; never the freezer, which pause freezes); v2: the run's group. Where it was is kept for
 * cgroup_leave_self. 0, or -1 + err (it is back where it was then). */
int cgroup_enter_self(struct cgroup *cg, struct error *err);
/* Back to the groups cgroup_enter_self found it in (a hierarchy's root where that one is gone
 * or refuses it); nothing when it did not enter. */
void cgroup_leave_self(struct cgroup *cg);
/* Kill every process left and remove the directories (the calling process leaves them first,
 * when it entered them). */
int cgroup_destroy(struct cgroup *cg);
/* the attribute naming the run (its cgroup name) whose group at a bundle's cgroupsPath it is */
#define CGROUP_RUN_XATTR "trusted.warren.run"
/* gc: remove the group of dead run name at a bundle's cgroupsPath rel (cgroup_path_parse's),
 * in each hierarchy where it is still that run's (CGROUP_RUN_XATTR): never another's made
 * there since. The parents it made are left. */
int cgroup_remove_path(const char *rel, const char *name);
/* gc: remove the group of a dead run by id (all kinds, the freezer's of its execs too;
 * rootless: below the caller's delegate). */
int cgroup_remove_by_id(const char *id, bool rootless);
/* Open the files cgroup_limit_hits reads now (a warm cell, before its run comes), close-on-exec:
 * a cell's init made before this does not hold them. */
void cgroup_open_hits(struct cgroup *cg);
void cgroup_free(struct cgroup *cg);

#endif
