/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - what the container driver's files share: the cell's context (struct cell_ctx),
 * made by the host's side (container.c) before the clone and carried on by the cell's pid 1
 * (init.c) as it builds the root (root.c) and reports to the supervisor (report.c). Nothing
 * outside src/cell/container/ includes it. */
#ifndef WARREN_CELL_CONTAINER_INTERNAL_H
#define WARREN_CELL_CONTAINER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cell/container.h"

/* One cell's state. The host's side fills the first part (container_prepare, container_start);
 * init gets its own copy of all of it with the clone, and fills the rest. */
struct cell_ctx {
	const struct cell_spec *s;
	const struct cgroup *cg;   /* NULL, or the run's cgroup (init joins it, shows it) */
	/* made by the supervisor before the clone: the userns of the idmaps of the worktree, the
	 * image and each of s->mounts (-1: none) */
	int idmap_work, idmap_image;
	int *idmap_mounts;
	size_t n_idmap_mounts;
	/* init: -1, or its end of the socket over which the network namespace made for the cell
	 * by the supervisor's helper comes (container_prepare; enter_netns) */
	int netns_sock;

	/* ---- init's ---- */
	int report;                /* the report pipe's write end (report.c) */
	/* init's end of the supervisor's go pipe, on which its kill comes (init_loop): not the
	 * job's, which closes it first thing (the executor never execs: CLOEXEC alone would
	 * leave it there) */
	int go;
	/* A warm cell's job is made before its run comes and waits, set up to its last step, for
	 * init to tell it its take over this pipe: 'x' the executor, 'd' a plain command. */
	int take_r, take_w;
	mode_t caller_umask;       /* the umask of warren's caller: init's is 0, the job's this */
	int64_t root_built_ns, job_go_ns; /* init's steps, for the record's timings */

	/* ---- the root being built (root.c) ---- */
	/* Paths below the cell's root are resolved inside it (in_root); NULL and -1 once init
	 * has pivoted into it */
	const char *root;
	int root_fd;
	/* The mounts of host directories in the cell (the worktree, each bind): no mount point
	 * is made in them, it would be made in the host's directory. */
	uint64_t host_mnts[64];
	size_t n_host_mnts;
	/* Where the scratch parts live: the run directory, or the tmpfs of --scratch or of a
	 * warm cell's take (root.c, mount_scratch); scratch_fd: that tmpfs, or -1 */
	char *scratch_base;
	int scratch_fd;
	/* A worktree below /tmp or /var/tmp would be hidden by the scratch a warm cell's take
	 * mounts there: a copy of its mount is kept, and put back on top then. */
	int kept_worktree;
	/* The trees of s->mounts bound as slaves of the host's (cell_mount.slave), cloned before
	 * the cell's mounts are made private (build_root); NULL, or -1 for each other one */
	int *slave_trees;
};

/* A context with nothing made yet (every descriptor -1), for spec s. */
struct cell_ctx *cell_ctx_new(const struct cell_spec *s);

/* The go message of a take: 'w', then the run's scratch size (bytes, 0: the tmpfs default),
 * whether the job is started directly (a plain command: its EXEC_START follows on the control
 * socket), and whether init is to start it (after giving the scratch its new size). */
struct take_msg {
	char tag;
	uint64_t scratch;
	char direct;
	char relay;    /* init sizes the scratch anew, then starts the job; else the supervisor
	                  started it (container_take) */
} __attribute__((packed));

/* ---- init.c: the cell's pid 1 ---- */

/* init, in the clone: sets up the cell, starts the job once the supervisor's go comes on go,
 * reaps, and ends with the cell. */
void __attribute__((noreturn)) init_main(struct cell_ctx *x, const struct cell_io *io, int go);

/* ---- root.c: the cell's file system ---- */

/* Build the whole file system of the cell under <rundir>/root and pivot into it. */
void build_root(struct cell_ctx *x);
/* A warm cell: its run's own scratch, mounted on its places (take_scratch), and sized anew
 * at its take (scratch_resize: bytes, 0 the tmpfs default). */
void take_scratch(struct cell_ctx *x);
void scratch_resize(struct cell_ctx *x, uint64_t size);
void loopback_up(struct cell_ctx *x);
/* The run's cgroup, alone and read-only, at /sys/fs/cgroup (nothing without one). */
void show_cgroup(struct cell_ctx *x);

/* ---- report.c: the report pipe ---- */

#define REPORT_MSG_MAX (4096 - sizeof(struct cell_report)) /* PIPE_BUF */

void report_put(char *buf, size_t *n, uint32_t type, int status, int errnum, const char *msg);
void report(struct cell_ctx *x, uint32_t type, int status, int errnum, const char *msg);
/* Setup failed inside the cell: tell the supervisor (the message with the system's reason,
 * as error_set words it) and end init. */
void __attribute__((noreturn, format(printf, 4, 5))) die_status(struct cell_ctx *x, int status, int errnum,
								  const char *fmt, ...);
#define die(x, errnum, ...) die_status(x, 125, errnum, __VA_ARGS__)

#endif
