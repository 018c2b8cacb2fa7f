/* SPDX-License-Identifier: Apache-2.0 */
/* driver.c - the two drivers' tables (driver.h): the container driver's and the vm driver's
 * functions (container.h, vm.h) behind one interface, and the little that is the same for
 * both done once here. */
#include "cell/driver.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cell/vm.h"
#include "util/sys.h"

static int no_check(const struct cell_spec *s, bool job, struct error *err)
{
	(void)s, (void)job, (void)err;
	return 0;
}

/* A container's cgroup holds the cell itself: its limits are the cell's. */
static void same_limits(const struct cell_spec *s, struct limits *out)
{
	(void)s, (void)out;
}

/* init has the long part to do (the cell's root): it goes first. Cloned onto this CPU, it
 * waited here until the supervisor slept (0.2-0.35 ms: the pid, spec.json and history lines
 * that follow), the other CPU idle or making the network namespace; the supervisor's part
 * waits for init's first block (an RCU grace period) or its end instead. */
static int ct_start(const struct cell_spec *s, const struct cell_io *io, struct cell *c, struct error *err)
{
	int r = container_start(s, io, c, err);
	if (r == 0)
		sched_yield();
	return r;
}

static int no_tty(struct cell *c)
{
	(void)c;
	return -1;
}

/* The job (and init) just woken go first: what follows in the supervisor is bookkeeping
 * (spec.json, the loop's watches), and on a busy CPU it held the job's exec back (warm runs'
 * median 7-10% lower, interleaved A/B of two servers). */
static int ct_take(struct cell *c, uint64_t scratch, bool direct)
{
	int r = container_take(c, scratch, direct);
	sched_yield();
	return r;
}

static int ct_signal(struct cell *c, int sig)
{
	return sys_pidfd_send_signal(c->pidfd, sig, NULL, 0);
}

/* CELL_KILL_BYTE on the go pipe: init kills and reaps the cell's processes itself. */
static int ct_ask_kill(struct cell *c)
{
	char k = CELL_KILL_BYTE;
	return c->go_fd >= 0 && write(c->go_fd, &k, 1) == 1 ? 0 : -EPIPE;
}

/* A struct cell_report and its message, as init writes them on the report pipe. */
static int ct_read_report(struct cell *c, struct cell_report *r, char **msg)
{
	ssize_t n = read(c->report_fd, r, sizeof *r);
	if (n != (ssize_t)sizeof *r)
		return 0;
	*msg = xcalloc(1, r->len + 1);
	if (r->len && read(c->report_fd, *msg, r->len) != (ssize_t)r->len) {
		free(*msg);
		return 0;
	}
	return 1;
}

static char *ct_missing_report(const struct cell_spec *s, const struct cell *c, int init_status)
{
	(void)s, (void)c, (void)init_status;
	return NULL;
}

static void ct_winsize(struct cell *c, int tty, const struct winsize *ws)
{
	(void)c;
	ioctl(tty, TIOCSWINSZ, ws);
}

static void ct_record(const struct cell *c, json_t **extra)
{
	(void)c, (void)extra;
}

static const struct cell_driver_ops container_driver = {
	.name = "container",
	.trusts_exit = true,
	.tty_over_console = true,
	.tasks_on_host = true,
	.check_spec = no_check,
	.host_limits = same_limits,
	.prepare = container_prepare,
	.start = ct_start,
	.take_tty = no_tty,
	.release = container_release,
	.take = ct_take,
	.signal = ct_signal,
	.ask_kill = ct_ask_kill,
	.signal_job = container_signal_children,
	.read_report = ct_read_report,
	.missing_report = ct_missing_report,
	.winsize = ct_winsize,
	.record = ct_record,
	.close = cell_close,
};

/* The guest's terminal is its console: the control port sets its size. */
static void vmd_winsize(struct cell *c, int tty, const struct winsize *ws)
{
	(void)tty;
	vm_winsize(c, ws->ws_row, ws->ws_col);
}

static void vmd_close(struct cell *c)
{
	vm_close(c);
	cell_close(c);
}

static const struct cell_driver_ops vm_driver = {
	.name = "vm",
	.reports_job_start = true,
	.reports_pids_peak = true,
	.reports_refused_writes = true,
	.net_by_tap = true,
	.check_spec = vm_check_spec,
	.host_limits = vm_host_limits,
	.prepare = vm_prepare,
	.start = vm_start,
	.take_tty = vm_take_tty,
	.release = vm_release,
	.signal = vm_signal,
	/* (qemu's children: none of them is the guest's job) */
	.signal_job = container_signal_children,
	.read_report = vm_read_report,
	.missing_report = vm_missing_report,
	.winsize = vmd_winsize,
	.record = vm_record,
	.close = vmd_close,
};

const struct cell_driver_ops *cell_driver_for(enum cell_driver d)
{
	return d == CELL_DRIVER_VM ? &vm_driver : &container_driver;
}
