/* SPDX-License-Identifier: Apache-2.0 */
/* session.h - a session: a job whose commands come later (session: in a job file). Once its
 * services are ready and its steps (if any) ran, the runner listens on <rundir>/session.sock
 * (mode 0600; only the run's owner or root are answered) for execs, each started by the
 * cell's executor as a step is, and for the session's end; idle and max end it with a cause.
 *
 * The socket speaks JSON lines. A request, one line of at most SESSION_REQ_MAX bytes:
 *   {"op":"exec","command":[...],"env":["K=V"] or {"K":"V"},"cwd":D,"stdin":TEXT,
 *    "timeout":"30s" or ms,"stream":bool,"keep":bool,"tty":bool,"stop_on_close":bool}
 *                                            (stdin's text may hold \u0000; no other string)
 *   {"op":"end"}                              answered {"ended":true}
 * An exec's answer without stream: one line {"exec":N,"exit_code","signal","cause","stdout",
 * "stderr","stdout_truncated","stderr_truncated","duration_ms"} (each stream at most
 * SESSION_OUT_MAX bytes, invalid UTF-8 shown as U+FFFD); with stream: {"exec":N} first, then
 * for each chunk of output a line {"stdout":LEN} or {"stderr":LEN} followed by LEN raw bytes,
 * then {"end":{...the same fields without stdout and stderr}}. With tty (and stream; no stdin):
 * the command's streams are a terminal of the cell's, its controlling terminal; its master
 * comes as the SCM_RIGHTS descriptor of a line {"tty":true} after {"exec":N} (the caller
 * relays it, sets its size), then the end as above; its log holds no output. The connection
 * closes after the answer, unless the exec asked "keep": true: then it takes the next request
 * line (keep-alive; one already sent waits until the exec's answer). A caller whose connection
 * closes before the exec's answer leaves it running to its end or its limit, to its log only;
 * unless it asked "stop_on_close": true: then it is stopped as its time limit stops it (SIGTERM
 * to its process tree, SIGKILL after the run's grace), recorded "interrupted", exit code 143,
 * its cause "its caller went away ...". A refusal is one line
 * {"error":TEXT,"status":HTTP-STATUS} (400, 403, 409, 413, 429) and the connection closes.
 * The requests read, write and list of the cell's files: job/files.h. */
#ifndef WARREN_JOB_SESSION_H
#define WARREN_JOB_SESSION_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cell/executor.h"
#include "cell/spec.h"
#include "job/display.h"
#include "job/jobfile.h"
#include "util/error.h"

#define SESSION_SOCK "session.sock"
#define SESSION_REQ_MAX (1 << 20)    /* bytes of a request line (its stdin included) */
#define SESSION_OUT_MAX (1 << 20)    /* bytes of each stream an answer without stream holds */
#define SESSION_EXECS_MAX 16         /* execs running at once in one session */
#define SESSION_CONNS_MAX 64         /* connections at once */
#define SESSION_CMD_MAX 4096         /* bytes of an exec's arguments its record keeps (the rest cut) */
#define SESSION_PROGRESS_EXECS 50    /* execs progress.json lists: the last ones, and all running */
#define SESSION_END_SLACK_S 5.0      /* seconds past twice the grace that an ended session's cell may take */
#define EV_SESSION 0x100000u         /* epoll tags from here on are the session's */

struct sup;
struct session;

/* What the runner lends its session. */
struct session_host {
	struct sup *u;
	struct cell_spec *s;
	struct display *d;
	int ctl;                  /* the executor's socket */
	int logdir_fd;            /* <rundir>/log */
	size_t first_log;         /* an exec's log is log/<first_log + N>-exec-N.log */
};

/* An exec request as parsed: what parse_exec_request makes of a request's JSON. */
struct exec_req {
	char **argv, **env;       /* env: K=V */
	char *cwd;                /* NULL: the job's */
	char *stdin_text;         /* NULL: /dev/null */
	size_t stdin_len;
	uint64_t timeout_ms;      /* 0: none (the session's max holds) */
	bool stream;
	bool keep;                /* the connection stays open for the next request */
	bool tty;                 /* a terminal of the cell's (stream only): its master passed to the caller */
	bool stop_on_close;       /* its caller's connection closing while it runs stops it */
};

/* Is a session due to end (pure)? lived_s since it was ready, quiet_s since an exec last
 * started or ended, running execs now: its max first; idle only while no exec runs. */
enum session_due { SESSION_GOES_ON, SESSION_IDLE, SESSION_MAX };
enum session_due session_due(double lived_s, double quiet_s, size_t running, uint64_t idle_ms, uint64_t max_ms);
/* Parse an exec request (pure): 0, or -EINVAL with a one-line reason in *why (static). */
int session_parse_exec(json_t *req, struct exec_req *x, const char **why);
void exec_req_free(struct exec_req *x);
/* argv as a record shows it (pure): a JSON list of its arguments' first max bytes (the
 * argument that crosses it cut at a character's start, those after it left out; *cut then),
 * and in *bytes the length of the whole (each argument and its NUL). */
json_t *session_command_json(char **argv, size_t max, size_t *bytes, bool *cut);
/* The bytes b[0..n) as valid UTF-8 (invalid sequences as U+FFFD), heap, NUL-terminated;
 * its length in *out_len. */
char *utf8_lossy(const char *b, size_t n, size_t *out_len);

struct session *session_new(const struct job *job, const struct session_host *h);
/* The cell is ready: listen (the socket made 0600 where no one else can reach it, then put in
 * place). */
int session_open(struct session *se, struct error *err);
/* True while it listens and no end came (the runner stays in its steps' phase). */
bool session_live(const struct session *se);
/* One of the session's epoll events (tag >= EV_SESSION). */
void session_event(struct session *se, uint32_t tag, uint32_t events);
/* An executor's message about one of its execs: true when it was one. */
bool session_ctl(struct session *se, const struct exec_hdr *h);
/* The runner's tick: exec time limits, idle, max. */
void session_tick(struct session *se);
/* Its execs, appended to the record's steps[] (kind "exec"): all of them (last 0), or the last
 * ones and those still running (progress.json); how many were left out. */
size_t session_json(const struct session *se, json_t *steps, size_t last);
/* Changes so far (progress.json is rewritten when it changes). */
uint64_t session_changes(const struct session *se);
/* The cell is gone (or going): running execs ended with why, their callers told, the socket
 * removed. */
void session_close(struct session *se, const char *why);
void session_free(struct session *se);

/* (runner.c) the environment of a task: the cell's, extra's over it, TMPDIR last. */
char **job_task_env(const struct cell_spec *s, char **extra);

#endif
