/* SPDX-License-Identifier: Apache-2.0 */
/* container.h - the container driver: a cell made of Linux namespaces, an overlay of an image
 * or the host's / seen read-only through overlays, a private /tmp, /dev and /proc, and a small
 * init (pid 1). */
#ifndef WARREN_CELL_CONTAINER_H
#define WARREN_CELL_CONTAINER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cell/spec.h"
#include "util/error.h"

struct cgroup;

/* The job's standard streams, prepared by the supervisor (the caller's, pipes or a pty). */
struct cell_io {
	int in, out, err;
	int console;         /* -1, or a unix socket: init opens a terminal in the cell's own devpts,
	                        sends its master over it and gives the job the other end as its
	                        stdin and stdout, and as its stderr when err is -1 */
	int control;         /* -1, or a unix socket: the job is warren's executor (job steps) */
	int watch;           /* -1, or a unix socket: the job sends the write watch's listener
	                        over it (policy_watch_writes) */
	int tap;             /* the vm driver: -1, or a tap on warren's bridge, the guest's NIC */
	uint32_t addr, gw;   /* with tap: the guest's address and gateway (network order) */
	int prefix;
};

struct cell {
	pid_t pid;           /* the cell's init, as seen from the host */
	int pidfd;           /* pidfd of init: readable when it exits */
	int report_fd;       /* messages from init (struct cell_report), EOF when it is gone */
	int go_fd;           /* write one byte to let init start the job (after the network is in place) */
	int take_fd;         /* a warm cell: one byte ('d' a plain command, 'x' the executor) starts its
	                        waiting job itself, when its scratch needs no new size (-1: none) */
	uint64_t made_scratch; /* a warm cell: the size its scratch was made with */
	int cgroup_fd;       /* -1, or a cgroup v2 directory to start init in (CLONE_INTO_CGROUP) */
	const struct cgroup *cgroup; /* NULL, or the run's cgroup: once placed in it, init shows it
	                        (alone, read-only) at the cell's /sys/fs/cgroup */
	struct vm_state *vm; /* the vm driver's (cell/vm.h): NULL for a container */
	struct cell_ctx *ctx; /* the container driver's (cell/container/internal.h): NULL until
	                        container_prepare or container_start, freed by cell_close */
	struct cell_helper { pid_t pid; void *stack; } *helpers; /* the processes of the idmapped
	                        mounts' user namespaces and of the network namespace (pid -1:
	                        none), each on a stack of its own
	                        (a VM's: its relay, forked, no stack):
	                        told to exit at the start; reaped once ended (cell_reap_ended_helpers,
	                        at the release and the job's end), the rest once init is gone
	                        (cell_reap_helpers) */
	size_t n_helpers;
	int netns_sock;      /* -1, or the socket over which init takes the network namespace the
	                        helper of container_prepare made (the helper holds the other end) */
};

enum cell_report_type {
	CELL_REPORT_ERROR = 1, /* setup or exec failed: status, errnum, message */
	CELL_REPORT_EXIT = 2,  /* the job ended: status is its wait status */
	CELL_REPORT_SCRATCH = 3, /* --scratch: "<used bytes> <free bytes>" of the scratch tmpfs */
	CELL_REPORT_SCRATCH_FULL = 4, /* the same, sent once when the scratch is full */
	CELL_REPORT_STARTED = 5, /* the vm driver: the guest started the job (its boot is over) */
	CELL_REPORT_PIDS_MAX = 6, /* the vm driver: status forks refused by the guest's process limit */
	CELL_REPORT_OOM_KILLS = 7, /* the vm driver: status processes the guest's OOM killer killed */
	CELL_REPORT_PIDS_PEAK = 8, /* the vm driver: status is the most processes the job had at once */
	CELL_REPORT_REFUSED = 9, /* the vm driver: status writes the guest refused; message [[path, count, protected]...] */
	CELL_REPORT_TIMES = 10, /* before EXIT: "<root built> <job let go> <job reaped>", CLOCK_MONOTONIC ns */
};

struct cell_report {
	uint32_t type;
	int32_t status;
	int32_t errnum;
	uint32_t len;        /* bytes of message that follow */
};

/* Root mode: make the idmapped mounts' user namespaces (their helpers are cloned before any
 * descriptor of the run exists). Root mode, --net none: begin making the cell's network
 * namespace in a helper process of its own (CLONE_VM, raw system calls), while the supervisor
 * makes the run directory and the cgroup and init builds the cell's root: the kernel takes
 * the better part of a millisecond over a new one. Nobody waits for it but init, once its
 * root is built (the helper sends it over netns_sock, then shuts its end); the helper is
 * reaped with the idmaps' (cell_reap_ended_helpers, cell_reap_helpers). */
void container_prepare(const struct cell_spec *s, struct cell *c);
/* Start the cell's init; it sets up the cell and waits for cell_release(). */
int container_start(const struct cell_spec *s, const struct cell_io *io, struct cell *c, struct error *err);
int container_release(struct cell *c);
/* A warm cell (spec warm): let its init mount the run's own scratch, a tmpfs of scratch bytes
 * (0: the tmpfs default), and start the job; direct: the job is no executor but the command of
 * the EXEC_START the supervisor sends on the control socket next (cell/executor.h). */
int container_take(struct cell *c, uint64_t scratch, bool direct);
/* Send sig to the children of the cell's init (host pids; the job process, or a job's
 * executor, and orphans init adopted). The count signalled, or -errno. */
int container_signal_children(const struct cell *c, int sig);
/* Root mode: the userns of an idmap that makes the owner of what fd is open on (the worktree,
 * a bind's source) the run user's host ids (a container's run user inside; the vm driver's
 * qemu), or -1 when it is already or there is none. A root-owned source is mapped only when
 * writable (map_root): a read-only bind of root's files keeps them root's, as the host's /
 * shows them, but for their group when it is the volume's own and one of the job's
 * supplementary groups, not a system one (spec_volume_group: a pod's fsGroup), host gid g as
 * the cell's gid g. Its helper is one of c's (made before any descriptor of the run exists). */
int cell_owner_idmap(const struct cell_spec *s, int fd, bool map_root, struct cell *c);
/* Clone the tree at path (under dfd; "" dfd itself) as a detached mount, idmapped through
 * userns fd ns, nosuid and nodev, with what is mounted below it (a bind without its submounts
 * would show, and let the job write, what the host hides under them). With whole_ok, every
 * mount of it idmapped (else, or when a submount's file system cannot be, the top one alone:
 * the submounts' files keep their ids). -1 when the kernel or the top's file system cannot. */
int cell_idmapped_tree(int dfd, const char *path, int ns, bool whole_ok);
/* A new slot (pid -1, no stack) in c's list of helper processes, reaped by cell_reap_helpers. */
struct cell_helper *cell_helper_slot(struct cell *c);
#define CELL_HELPER_END_MS 2000
/* Wait for the helpers (told to exit at the start; they may not have been scheduled yet),
 * before telling whether anything outside the cell still holds what the cell had; one that
 * has not ended 2 s after is killed. */
void cell_reap_helpers(struct cell *c);
/* Reap the helpers that have ended already (the idmaps' and the network namespace's end as
 * soon as their work is done, before the job runs), without waiting for any: what is left
 * for the run's end is only what still runs then. */
void cell_reap_ended_helpers(struct cell *c);
void cell_close(struct cell *c);

#endif
