/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - what the pieces of the supervisor share and nobody else calls: supervise.c (the
 * loop, the start and the end of a run), control.c (stop, kill, signals, watches), relay.c (the
 * job's output, the caller's streams, the terminal), limits.c (the limits watched while the run
 * lives), outcome.c (how the run ended, the record's parts) and outlog.c (a plain run's output
 * kept in its log). */
#ifndef WARREN_SUPERVISE_INTERNAL_H
#define WARREN_SUPERVISE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <jansson.h>

#include "supervise/supervise.h"

/* How often the limits the kernel does not enforce by itself are looked at. */
#define WATCH_MS 100

/* ---- control.c ---- */

/* Arm timerfd tfd to fire in ms (0: at once), then every interval_ms (0: once). */
void sup_arm(int tfd, uint64_t ms, uint64_t interval_ms);
/* SIGKILL for every process of the cell (hard: init too, at once; see control.c). */
int sup_kill_cell(struct sup *u, bool hard);

/* ---- relay.c ---- */

/* The caller's stdout and stderr as the relay writes them (struct sup_sink), and their end. */
void sup_sinks_open(struct sup *u);
void sup_sink_close(struct sup_sink *k);
/* Write what waits in k, as much as the caller takes now. */
void sup_sink_flush(struct sup_sink *k);
/* The record is written and the cell gone: what the caller has yet to take is waited for. */
void sup_sinks_flush_final(struct sup *u);
/* The job's stream *fd has something (or its end): relayed to sink i, closed at its end. */
void sup_relay_event(struct sup *u, int *fd, int i, uint64_t *count);
/* The cell is gone: what *fd holds is passed on and *fd closed (stream: its name). */
void sup_drain_close(struct sup *u, int *fd, int i, uint64_t *count, const char *stream);
/* Room for n more bytes of input for the job's terminal after what waits (u->in_buf). */
char *sup_in_room(struct sup *u, size_t n);
/* Pass on what stdin gave as far as the job's terminal takes it now. */
void sup_pty_input(struct sup *u);
/* The job's terminal gets the caller's size. */
void sup_job_winsize(struct sup *u);
/* The caller's terminal made raw while the job has its own (u->pty); and back. */
void sup_tty_raw(struct sup *u);
void sup_restore_tty(struct sup *u);
/* The job's terminal's master, sent by init over sock: then sup_tty_raw. */
int sup_recv_console(struct sup *u, int sock);

/* The supervisor's ends of what the cell gets: the job's streams (the caller's, pipes, or a
 * terminal made in the cell), the executor's /dev/null stdin, the write watch's socket. */
struct sup_ends {
	int out_w, err_w, devnull, console, watch;
};
void sup_ends_close(struct sup_ends *e);
/* The job's streams and the write watch's socket into io, the supervisor's ends into u and e. */
int sup_streams(struct sup *u, struct cell_io *io, struct sup_ends *e, struct error *err);

/* ---- outlog.c ---- */

/* n bytes the job wrote, of which the first pass are within the output limit: kept in a plain
 * run's log (u->log.on), made at the first of them; its cut marked once pass < n. */
void sup_log_keep(struct sup *u, const char *b, size_t pass, size_t n);
/* "log" and "log_cut" of the record, when the run's log was made; the log closed. */
void sup_log_record(struct sup *u, json_t **extra);

/* ---- limits.c ---- */

/* The cause lines of the memory limit (the OOM killer's kills of s's cell; its value into v)
 * and of the process limit (hits: forks refused). */
char *sup_memory_cause(const struct limits *l, uint64_t kills, const struct cell_spec *s, char *v, size_t vlen);
char *sup_pids_cause(const struct limits *l, uint64_t hits);
/* The limit watch's tick: the memory, process and CPU-time limits. */
void sup_watch_limits(struct sup *u);
/* The wall-clock limit's timer fired. */
void sup_time_limit(struct sup *u);

/* ---- outcome.c ---- */

/* How the run ended, and what it used, into r. */
void sup_build_result(struct sup *u, struct run_result *r);
/* "timings" and "output_held_outside" of the record into *extra (and, unless quiet, a line). */
void sup_timings_record(struct sup *u, json_t **extra);
void sup_held_record(struct sup *u, json_t **extra, bool quiet);
/* CPU time and peak RSS from init's rusage, where no cgroup told them. */
void sup_rusage_fallback(struct run_result *r, const struct rusage *ru);
/* The bytes of the run's scratch on disk. */
uint64_t sup_scratch_bytes(const struct cell_spec *s);
/* The result's JSON where the caller asked for it (--result-fd, --result). */
void sup_emit_result(const struct supervise_opts *o, const char *json);

#endif
