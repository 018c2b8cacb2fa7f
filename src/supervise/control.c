/* SPDX-License-Identifier: Apache-2.0 */
/* control.c - the supervisor's hold on a live cell: the run's clock and timers, signals to the
 * cell (through its driver) and to its job, a stop for a named cause (the polite signal now,
 * SIGKILL after the grace), and what the event loop watches. */
#include "supervise/internal.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "cell/contract.h"
#include "util/fs.h"
#include "util/sys.h"

double sup_elapsed(const struct sup *u)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - u->t0.tv_sec) + (double)(now.tv_nsec - u->t0.tv_nsec) / 1e9;
}

void sup_arm(int tfd, uint64_t ms, uint64_t interval_ms)
{
	struct itimerspec it = {
		.it_value = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000 },
		.it_interval = { .tv_sec = (time_t)(interval_ms / 1000), .tv_nsec = (long)(interval_ms % 1000) * 1000000 },
	};
	if (ms == 0)
		it.it_value.tv_nsec = 1;
	timerfd_settime(tfd, 0, &it, NULL);
}

/* SIGKILL for every process of the cell. Once the job was let go (init then waits for it, or
 * soon will, in the loop that reads the go pipe), a container's init is asked to kill and
 * reap them itself (CELL_KILL_BYTE: their CPU time then reaches the record) and is SIGKILLed
 * when the backstop (grace_tfd, armed here and watched from then on) fires first; before that
 * (a cell being made, or a warm one waiting for its run) and when hard, init is SIGKILLed. */
int sup_kill_cell(struct sup *u, bool hard)
{
	if (u->init_gone || u->cell.pidfd < 0)
		return 0;
	if (hard || !u->released_at.tv_sec || !u->drv->ask_kill)
		return u->drv->signal(&u->cell, SIGKILL);
	if (u->kill_asked)
		return 0;
	u->kill_asked = true;
	sup_arm(u->grace_tfd, CELL_KILL_BACKSTOP_MS, 0);
	if (u->drv->ask_kill(&u->cell) == 0)
		return 0;
	return u->drv->signal(&u->cell, SIGKILL);
}

static int signal_cell(struct sup *u, int sig)
{
	if (sig == SIGKILL)
		return sup_kill_cell(u, false);
	if (u->init_gone || u->cell.pidfd < 0)
		return 0;
	return u->drv->signal(&u->cell, sig);
}

/* Stop the whole cell for a named cause: the polite signal now, SIGKILL after the grace. */
void sup_stop(struct sup *u, enum run_status st, const char *limit, const char *value, int sig, char *text)
{
	/* a container's job that ended before the cause (its init ends with it, taking the rest of
	 * the cell) ended as it did: a limit reached while the cell goes is not the run's end, nor
	 * what a warm run's early answer said (sup_end_known); unless the driver does not trust
	 * the cell's word on its end (a VM's guest). */
	if (u->stopping || (u->have_exit && u->drv->trusts_exit)) {
		free(text);
		return;
	}
	u->stopping = true;
	u->cause_status = st;
	u->cause_limit = xstrdup(limit);
	u->cause_value = value ? xstrdup(value) : NULL;
	u->cause_text = text;
	u->stop_signal = sig;
	u->stop_at_s = sup_elapsed(u);
	signal_cell(u, sig);
	if (sig != SIGKILL)  /* (a SIGKILL's backstop is armed instead) */
		sup_arm(u->grace_tfd, u->s->limits.grace_ms, 0);
}

void sup_kill(struct sup *u)
{
	if (u->killed)
		return;
	u->killed = true;
	sup_kill_cell(u, false);
}

void sup_watch_fd(struct sup *u, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };
	epoll_ctl(u->ep, EPOLL_CTL_ADD, fd, &ev);
}

void sup_unwatch(struct sup *u, int fd)
{
	epoll_ctl(u->ep, EPOLL_CTL_DEL, fd, NULL);
}

void sup_unwatch_close(struct sup *u, int *fd)
{
	if (*fd < 0)
		return;
	epoll_ctl(u->ep, EPOLL_CTL_DEL, *fd, NULL);
	closep(fd);
}

void sup_on_interrupt(struct sup *u, bool (*fn)(void *, const char *, const char *, int, char *), void *ctx)
{
	u->interrupt = fn;
	u->interrupt_ctx = ctx;
}

bool sup_stopping(const struct sup *u, const char **text, enum run_status *status)
{
	if (text)
		*text = u->cause_text;
	if (status)
		*status = u->cause_status;
	return u->stopping;
}

void sup_signal_job(struct sup *u, int sig)
{
	u->drv->signal_job(&u->cell, sig);
}
