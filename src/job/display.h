/* SPDX-License-Identifier: Apache-2.0 */
/* display.h - what a job shows while it runs: on a terminal, a live line for the running step
 * with its clock ("3m12s / 10m") under the step's output, finished steps with their marker and
 * duration; elsewhere (CI logs, pipes) plain timestamped lines. */
#ifndef WARREN_JOB_DISPLAY_H
#define WARREN_JOB_DISPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum step_mark { MARK_WAITING, MARK_RUNNING, MARK_OK, MARK_FAILED, MARK_SKIPPED, MARK_STOPPED };

struct sup_sink;

struct display {
	bool tty;        /* redraw the live line in place */
	bool quiet;      /* no step output */
	bool prefix;     /* plain mode: prefix output lines with "name | " */
	int out;         /* fd to draw on */
	struct sup_sink *sink; /* the supervisor's writer of out (a caller who does not read does not
	                          hold the runner: supervise/relay.c), or NULL: out is written as it is */
	bool live;       /* the live line is on screen */
	bool midline;    /* output ended without a newline */
	char *pending;   /* tty: a partial output line held back */
	size_t pending_len;
};

void display_init(struct display *d, int fd, bool tty, bool quiet, bool prefix);
/* Is output waiting for the caller to take it (its sink)? */
bool display_blocked(const struct display *d);
void display_line(struct display *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void display_start(struct display *d, const char *kind, const char *name, uint64_t limit_ms);
void display_output(struct display *d, const char *name, const char *buf, size_t len);
void display_tick(struct display *d, const char *name, double elapsed_s, uint64_t limit_ms);
void display_end(struct display *d, enum step_mark m, const char *name, double duration_s, const char *cause);
void display_free(struct display *d);

#endif
