/* SPDX-License-Identifier: Apache-2.0 */
/* supervise.h - one run from start to record: run directory, cgroup, cell, the event loop that
 * watches exit, limits and signals, the cause, result.json and the reclaim of the scratch. */
#ifndef WARREN_SUPERVISE_SUPERVISE_H
#define WARREN_SUPERVISE_SUPERVISE_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include <signal.h>
#include <sys/epoll.h>
#include <termios.h>
#include <time.h>

#include "cell/container.h"
#include "cell/driver.h"
#include "cell/spec.h"
#include "cgroup/cgroup.h"
#include "net/net.h"
#include "run/record.h"
#include "supervise/refused.h"
#include "util/error.h"

enum { EV_PIDFD = 1, EV_REPORT, EV_SIGNAL, EV_WALL, EV_WATCH, EV_GRACE, EV_OUT, EV_ERR, EV_IN, EV_PTY,
       EV_NET /* the run's DNS resolver (net/net.h) */, EV_WATCH_SOCK, EV_WATCH_WRITES,
       EV_HELPER /* a helper of the cell ended */, EV_HELPER_BOUND,
       EV_SINK_OUT, EV_SINK_ERR /* the caller's stdout, stderr can take what waits for it */,
       EV_GITWATCH /* what the job changes in the worktree (policy/gitwatch.h) */ };

/* The caller's stdout or stderr as the relay of the job's output writes it (relay.c). */
struct sup_sink {
	int fd;                    /* the caller's descriptor, or a non-blocking one of its own */
	bool own;                  /* fd is ours (to close) */
	bool nb;                   /* writes do not wait: what is not taken waits in pend */
	bool sock;                 /* a socket: sent to with MSG_DONTWAIT */
	bool broken;               /* its reader is gone (EPIPE): the job's stream is closed */
	bool alias;                /* (stderr) one file with stdout: sink[0]'s queue is used */
	char *pend;                /* what the caller has not taken yet (at most one read's) */
	size_t len;
};

/* n more bytes for the caller's stream k, after what waits there (written now when nothing
 * does, as much as it takes); sup_sink_check then watches the caller's descriptor while
 * something waits, and takes the job's streams that feed it (0 stdout or terminal, 1
 * stderr) out of the loop meanwhile. What waits at the end is written once the record is. */
struct sup;
void sup_sink_put(struct sup_sink *k, const char *b, size_t n);
void sup_sink_check(struct sup *u, int i);
/* The writer of the caller's stream i (stderr's is stdout's when they are one file). */
struct sup_sink *sup_sink(struct sup *u, int i);

/* One live run as the supervisor sees it. */
/* sigqueue value that tells a supervisor its SIGTERM came from `warren kill` */
#define WARREN_KILL_MAGIC 0x57524b4c

struct sup {
	struct cell_spec *s;
	const struct cell_driver_ops *drv; /* what makes the cell (cell/driver.h) */
	struct cell cell;
	struct cgroup cg;
	struct limits cg_made;     /* the limits cg was made with (a warm cell's claim writes its run's) */
	int ep, sfd, wall_tfd, watch_tfd, grace_tfd;
	int out_r, err_r;          /* job output pipes (read ends), -1 when closed */
	int pty;                   /* pty master, -1 when none */
	int console_sock;          /* until the cell is let go: where init sends the pty master */
	bool tty_raw;
	struct termios saved_tio;
	struct timespec t0;        /* CLOCK_MONOTONIC at start */
	int64_t init_ns[3];        /* init's steps (CELL_REPORT_TIMES): root built, job let go, job reaped */
	int64_t exit_ns, gone_ns;  /* the job's end reported, init gone (0: not yet) */
	double job_start_s;        /* when the job's wall clock started, after t0 (a VM's boot, a container's making) */
	uint64_t job_start_cpu_ns; /* the cgroup's CPU time then (a VM's boot is not the job's) */
	uint64_t guest_pids_hits;  /* forks a VM's guest refused for the process limit */
	uint64_t guest_oom_kills;  /* processes a VM's guest killed for want of memory (its RAM is the limit) */
	uint64_t guest_pids_peak;  /* the most processes a VM's job had at once (the guest's word) */
	uint64_t output;           /* bytes the job wrote */
	uint64_t out_bytes, err_bytes; /* of them, read from stdout (or the pty) and stderr */
	json_t *held;              /* [{stream, bytes_read}] held open outside the cell at its end */
	bool output_capped;
	struct sup_log {           /* a plain run's output kept as it is relayed (outlog.c) */
		bool on;           /* kept (supervise_run: a plain `warren run`) */
		int fd;            /* log/output.log, made at the first byte; -1 before, or once a write failed */
		bool made, failed; /* it was made (the record names it); it could not be made or written */
		bool cut;          /* the output limit cut it: its marker is written */
		bool midline;      /* its last byte is not a newline */
	} log;
	struct sup_sink sink[2];   /* the caller's stdout and stderr */
	bool src_paused[2];        /* the job's stream for sink[i] is out of the loop (sink_check) */

	bool init_gone;
	int helper_tfd;            /* once init is gone: the bound of the wait for the cell's helpers */
	int *helper_pfds;          /* their pidfds (-1: ended or none), helpers_left of them open */
	size_t helpers_left;
	bool have_exit;
	int job_status;            /* wait status of the job */
	char *setup_error;         /* message from init */
	int setup_status;
	int setup_errnum;
	uint64_t scratch_used;
	uint64_t scratch_free;
	bool have_scratch;

	bool stopping;             /* a cause was set and signals sent */
	bool killed;               /* SIGKILL sent after the grace */
	bool kill_asked;           /* init asked to SIGKILL and reap the cell (CELL_KILL_BYTE): it
	                              is SIGKILLed itself when grace_tfd fires then */
	int stop_signal;
	double stop_at_s;
	bool killed_early;         /* the SIGKILL came before the grace was over (asked again) */
	char *cause_limit, *cause_value, *cause_text;
	enum run_status cause_status;

	int lock;                  /* the run directory's lock, held while the run lives */
	uint64_t pids_sampled;     /* highest pids.current seen (hosts without pids.peak) */
	bool in_open;              /* stdin relayed to the pty */
	char *in_buf;              /* stdin read (and what was typed ahead: pass_typed_ahead), not */
	size_t in_off, in_len;     /* yet taken by the job's terminal: while any is left, stdin */
	size_t in_cap;             /* waits and the terminal is watched for room (in_buf's size) */
	struct timespec started;   /* CLOCK_REALTIME at start */
	struct timespec released_at; /* CLOCK_REALTIME_COARSE when the job was let go (0: never) */
	sigset_t old_mask;
	struct net_state net;      /* --net nat|allow: the run's link, firewall, resolver (net/net.h) */
	struct refused refused;    /* the write watch: refused writes (refused.h) */
	struct git_watch *gitwatch; /* the worktree's changes for its git check (worktree.h), or NULL: */
	const char *gitwatch_why;  /* why not */
	/* NULL, or who takes an interrupt (SIGINT/SIGTERM/SIGHUP, warren kill: limit "signal" or
	 * "kill", value the signal's name or NULL, sig the signal to pass on, text the cause) instead
	 * of stopping the cell: true when it took it (and text); a second one stops the cell */
	bool (*interrupt)(void *ctx, const char *limit, const char *value, int sig, char *text);
	void *interrupt_ctx;
	/* a warm cell's take (sup_go): its init starts the job's only step itself, from the
	 * EXEC_START its caller sends on the control socket, without the executor */
	bool take_direct;
};

struct supervise_opts {
	int result_fd;            /* -1, or where to write the result JSON too */
	const char *result_file;  /* NULL, or a file to write the result JSON to */
	bool quiet;               /* no cause line on stderr */
	/* a job adds its steps and services to the record, and may set the status and cause */
	void (*amend)(void *ctx, struct run_result *r, json_t **extra);
	void *amend_ctx;
	/* NULL, or told how the run ended once the cell is gone (gone true), before the record is
	 * written; a runner may have told it earlier (job_run_opts) */
	void (*ended)(void *ctx, const struct run_result *r, bool gone);
	void *ended_ctx;
	/* NULL, or the run's last line on stderr (a job's summary; amend_ctx), after its cause's */
	void (*summary)(void *ctx, const struct run_result *r);
};

/* The pieces of supervise_run, for a caller with more to watch (a job's steps): start the
 * cell (control: -1, or the executor's socket for a job), dispatch the supervisor's own
 * events (false: not one of ours), stop it for a cause, finish (record, reclaim; returns the
 * exit status). Callers add their fds with tags >= EV_APP. */
#define EV_APP 64
int sup_start(struct sup *u, struct cell_spec *s, int control, struct error *err);
/* sup_start in two: make the run directory, cgroup and cell, its init waiting (a warm cell:
 * s->warm, its record not written yet); then let it go (a warm cell: its take, with s's run
 * fields filled in since, and the record written). Either cleans up after itself on failure.
 * sup_abandon gives up a prepared cell that will not be let go. */
int sup_prepare(struct sup *u, struct cell_spec *s, int control, struct error *err);
int sup_go(struct sup *u, struct error *err);
void sup_abandon(struct sup *u);
bool sup_dispatch(struct sup *u, const struct epoll_event *ev);
bool sup_running(const struct sup *u);
/* True once the cell's job runs: at once for a container, after its boot for a VM (the guest
 * reported it started): a job's clocks start there. */
bool sup_job_started(const struct sup *u);
/* Wait for the next events of the run and of the caller's fds (epoll_wait without timeout). */
int sup_wait(struct sup *u, struct epoll_event *evs, int max);
/* Stop watching the caller's fd (it stays open). */
void sup_unwatch(struct sup *u, int fd);
/* Who takes an interrupt instead of the supervisor (see struct sup's interrupt). */
void sup_on_interrupt(struct sup *u, bool (*fn)(void *ctx, const char *limit, const char *value, int sig, char *text),
		      void *ctx);
/* True once a cause stops the run; its text (NULL: none) and status into text and status. */
bool sup_stopping(const struct sup *u, const char **text, enum run_status *status);
/* Send sig to every process of the cell but its init. */
void sup_signal_job(struct sup *u, int sig);
/* How the cell's job process ended, as far as init reported it ("exited with 1", "killed by
 * SIGKILL", "gone"), in buf. */
const char *sup_job_end(const struct sup *u, char *buf, size_t len);
/* True when how the run ends is known before its cell is gone: the job exited (its end
 * reported by init), no cause stops the cell and no limit the kernel enforced will name the
 * end; the job's exit code into *exit_code. A warm run's server may answer then. */
bool sup_end_known(struct sup *u, int *exit_code);
void sup_stop(struct sup *u, enum run_status st, const char *limit, const char *value, int sig, char *text);
void sup_kill(struct sup *u);
double sup_elapsed(const struct sup *u);
void sup_watch_fd(struct sup *u, int fd, uint32_t tag);
void sup_unwatch_close(struct sup *u, int *fd);
/* Count n bytes of the job's output against its output limit (the cell is stopped when it is
 * passed); returns how many of them may be passed on. */
size_t sup_output_pass(struct sup *u, size_t n);
/* The line that marks where the output limit cut a log, written to fd (a newline first when
 * the log ends mid-line): one mark for a plain run's log and a job's step logs. */
#define SUP_LOG_OUTPUT "log/output.log"
void sup_log_mark_cut(const struct sup *u, int fd, bool midline);
/* Note for the record that a process outside the cell held stream (of which bytes were read)
 * open when the cell was gone: the rest of it is dropped. */
void sup_output_held(struct sup *u, const char *stream, uint64_t bytes);
int sup_finish(struct sup *u, const struct supervise_opts *o);

/* Run the cell described by s. Returns the exit status warren should exit with (the job's,
 * 128+N, 124, ...) or a negative errno with err filled when warren itself failed before the
 * job could start (nothing is left on the host then). */
int supervise_run(struct cell_spec *s, const struct supervise_opts *o, struct error *err);

#endif
