/* SPDX-License-Identifier: Apache-2.0 */
/* driver.h - one interface to the drivers that make a cell, the container driver
 * (container.h) and the vm driver (vm.h): a table of what the supervisor asks of a cell and of
 * what it may count on, so that it never asks which driver it has (as crun puts its cgroup
 * managers behind one table). */
#ifndef WARREN_CELL_DRIVER_H
#define WARREN_CELL_DRIVER_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <sys/ioctl.h>

#include "cell/container.h"
#include "cell/spec.h"
#include "util/error.h"

struct cell_driver_ops {
	const char *name;            /* "container", "vm" */

	/* What the supervisor may count on. */
	/* The job's end as the cell reports it is the cell's: its init ends with the job, taking
	 * the rest of the cell, so a cause found later is not how the run ended. (A VM's guest is
	 * not trusted to end.) */
	bool trusts_exit;
	/* The job's clocks (wall-clock and CPU-time limits) start when the cell reports the job
	 * started (CELL_REPORT_STARTED: a VM's boot is not the job's), not when it is let go. */
	bool reports_job_start;
	/* The run's cgroup counts the cell's own machinery (qemu's threads): the job's peak of
	 * processes is the one the cell reports (CELL_REPORT_PIDS_PEAK). */
	bool reports_pids_peak;
	/* The cell reports the writes it refused itself (CELL_REPORT_REFUSED): the host has no
	 * write watch of its own. */
	bool reports_refused_writes;
	/* The job's terminal is opened by init in the cell, its master sent over io->console
	 * (else the driver has it: take_tty). */
	bool tty_over_console;
	/* The cell's network is a tap given to start (io->tap), not a link the supervisor moves
	 * into the cell's namespace once init runs. */
	bool net_by_tap;
	/* The job's processes are the host's, in the run's cgroup: a session's exec may have a
	 * group of its own below it (cgroup/execgroup.h). (A VM's are the guest's.) */
	bool tasks_on_host;

	/* What it does. */
	/* Refuse, with one line, what the driver cannot carry (job: the cell runs a job's steps). */
	int (*check_spec)(const struct cell_spec *s, bool job, struct error *err);
	/* The limits of the run's cgroup on the host from the cell's (out: a copy of s's first). */
	void (*host_limits)(const struct cell_spec *s, struct limits *out);
	/* Work that may begin before the run directory is made (container_prepare). */
	void (*prepare)(const struct cell_spec *s, struct cell *c);
	/* Start the cell, its init (or machine) waiting to be let go. */
	int (*start)(const struct cell_spec *s, const struct cell_io *io, struct cell *c, struct error *err);
	/* The host's end of the job's terminal when the driver holds it (-1: none; once). */
	int (*take_tty)(struct cell *c);
	/* Let the cell's job go. */
	int (*release)(struct cell *c);
	/* A warm cell's take (container_take); NULL: the driver has no warm cells. */
	int (*take)(struct cell *c, uint64_t scratch, bool direct);
	/* Send sig to the cell (SIGKILL ends it). */
	int (*signal)(struct cell *c, int sig);
	/* Ask the cell's init, once its job is let go, to kill and reap every process of the cell
	 * itself (their CPU time then reaches the record): 0 when it was asked; NULL: the driver
	 * has no such init (signal SIGKILL ends the cell). */
	int (*ask_kill)(struct cell *c);
	/* Send sig to every process of the cell but its init (container_signal_children). */
	int (*signal_job)(const struct cell *c, int sig);
	/* The next report of the cell: 1 (r and *msg filled), 0 when none is complete. */
	int (*read_report)(struct cell *c, struct cell_report *r, char **msg);
	/* Why a cell that ended without reporting the job's end (nor an error) failed, given its
	 * init's wait status; NULL: that needs no word of its own (a container's init is killed). */
	char *(*missing_report)(const struct cell_spec *s, const struct cell *c, int init_status);
	/* Give the job's terminal (tty, the host's end) the size ws. */
	void (*winsize)(struct cell *c, int tty, const struct winsize *ws);
	/* The driver's part of the record (a VM's "vm"; nothing for a container). */
	void (*record)(const struct cell *c, json_t **extra);
	/* Free what the driver holds of c, and c's descriptors (cell_close). */
	void (*close)(struct cell *c);
};

/* The table of driver d. */
const struct cell_driver_ops *cell_driver_for(enum cell_driver d);

#endif
