/* SPDX-License-Identifier: Apache-2.0 */
/* tasklog.h - the log of one task of a job (a step, a service, its ready checks): the bytes it
 * wrote within the job's output limit in log/<base>.log, the time of each chunk in the
 * .times side file beside it, and the line that marks where the output limit cut it. */
#ifndef WARREN_JOB_TASKLOG_H
#define WARREN_JOB_TASKLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct sup;

/* A line of a .times file: the time of a chunk of output, its offset in the log and its size.
 * Chunks are coalesced into one line until TASKLOG_TIMES_BYTES of them or TASKLOG_TIMES_MS
 * since the last line, so a task that writes a byte at a time does not make a line per byte;
 * a .times file stops growing at TASKLOG_TIMES_MAX. */
enum { TASKLOG_TIMES_BYTES = 4096, TASKLOG_TIMES_MS = 100, TASKLOG_TIMES_MAX = 1024 * 1024 };
struct times_line {
	struct timespec at;
	uint64_t offset, size;
};

struct task_log {
	int fd, times_fd;           /* -1 when it could not be opened */
	uint64_t logged;            /* bytes written to the log (within the job's output limit) */
	struct times_line pending;  /* output not yet on a line of the .times file */
	double last_line;           /* when the last line of the .times file was written (s) */
	uint64_t times_size;
	bool cut;                   /* the output limit cut it: its marker is written */
	bool midline;               /* its last byte is not a newline */
};

/* Open (append to: a service's ready checks share one) log/<base>.log and its .times beneath
 * logdir_fd. */
void task_log_open(struct task_log *l, int logdir_fd, const char *base);
/* n bytes the task wrote, of which the first pass are within the output limit (u's): those
 * to the log, their time to the .times file (now: the run's clock, in s); the cut marked once
 * pass < n. */
void task_log_write(struct task_log *l, const struct sup *u, const char *b, size_t pass, size_t n, double now);
/* Write the pending line of the .times file, if any. */
void task_log_flush(struct task_log *l, double now);
void task_log_close(struct task_log *l);

#endif
