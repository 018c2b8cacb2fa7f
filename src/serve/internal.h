/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - what the pieces of the server share: the server, its queue and runs, the API's
 * entry points. */
#ifndef WARREN_SERVE_INTERNAL_H
#define WARREN_SERVE_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "net/opts.h"
#include "run/history.h"
#include "run/id.h"
#include "run/rundir.h"
#include "serve/conns.h"
#include "serve/mhd.h"
#include "serve/serve.h"

/* A run of the server: queued (pid 0) or started (pid > 0). */
struct srun {
	char id[RUN_ID_LEN + 1];
	uid_t owner;
	char **argv;           /* the child's: this binary's `job run ...` */
	int64_t submitted_ms;
	pid_t pid;
	int warm_fd;           /* a warm cell's supervisor: its socket (-1: none, closed) */
	bool ended;            /* its supervisor said how it ended (it writes the record now) */
	bool warm;             /* given a warm cell */
	bool cold;             /* ... whose supervisor gave it up: the run started cold */
	struct srun *next;
};

/* A cell of the warm pool (warm.c): its supervisor, and the run id it will give its run. */
struct warm_cell {
	char id[RUN_ID_LEN + 1];
	pid_t pid;
	int fd;                /* its supervisor's socket */
	bool ready;            /* the cell is made, its init waits */
	bool discarded;
	struct warm_cell *next;
};

/* A run's end as its waiters (POST ?wait=1) learn it. */
struct run_end {
	char id[RUN_ID_LEN + 1];
	char state[16];
	const char *start;     /* "warm", "cold" or NULL (not said) */
	int exit_code;
	struct run_end *next;
};

/* A connection waiting for a run's end (POST ?wait=1): woken by that run's end alone. */
struct end_waiter {
	const char *id;
	pthread_cond_t cond;
	struct run_end end;    /* its run's end, once have_end (copied: the list of ends is cut) */
	bool have_end;
	struct end_waiter *next;
};

/* One listening socket: the daemon's closure. */
struct listener {
	struct server *s;
	bool tcp;              /* the bearer token is required */
};

/* A connection (conns.c): its peer, counted or refused, and since when its request's head is
 * awaited. */
struct conn {
	struct conn *prev, *next;  /* the server's connections, oldest first */
	int fd;
	bool tcp;
	uid_t uid;             /* unix: the peer's (SO_PEERCRED; -1: not known) */
	uid_t owner;           /* ... whose cap it counts against (conn_owner) */
	struct conn_source src;  /* TCP: the peer's source */
	int64_t head_since_ms; /* a request's head is awaited since (CLOCK_MONOTONIC; 0: one is in) */
	bool counted;
	bool pending;          /* TCP: no request of it brought the token (yet) */
	bool refused;          /* over a cap, closed for another or out of time: shut, nothing
	                          it sent is answered */
};

/* A uid holding connections, and how many. */
struct conn_user {
	uid_t uid;
	unsigned n;
};

/* A TCP source holding connections without the token, and how many. */
struct conn_src {
	struct conn_source src;
	unsigned n;
};

/* /etc/subuid as last read, and which file that was. */
struct subids {
	struct subid_range *r;
	size_t n;
	bool read;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

#define LAT_BUCKETS 10
extern const double LAT_BOUNDS[LAT_BUCKETS];

struct server {
	pthread_mutex_t rmu;   /* the reader connection: */
	struct history *hr;    /* the API's reads (WAL: they never wait for a writer) */
	pthread_mutex_t mu;    /* everything below */
	struct history *h;     /* the server's writes */
	struct statedir sd;
	char *db;              /* the history's path */
	char *dir;             /* <state>/serve: job files, requests, consoles */
	int dir_fd;
	int wake;              /* eventfd: the queue changed */
	long slots, busy;
	struct srun *queue, *running;
	char *token;
	size_t token_len;
	uid_t uid;
	long keep_runs;
	int64_t keep_for_ms;
	uint64_t lat_count, lat_le[LAT_BUCKETS];
	double lat_sum;
	uint64_t submitted;
	struct listener listeners[16];
	struct MHD_Daemon *daemons[16];
	int ndaemons;
	char *sockets[16];     /* unix socket paths to remove at the end */
	int nsockets;
	int ep;                /* the main loop's epoll */
	bool stopping;         /* SIGTERM: the runs are being stopped */
	bool stopped;          /* ... and they are: nothing more ends */
	/* the warm pool (warm.c) */
	long warm_n, pool_n;   /* cells wanted, cells made or being made */
	char *warm_work, *warm_image, *warm_job;
	enum net_mode warm_net;  /* --warm-net: the warm cells' network mode */
	bool warm_lan;
	struct warm_cell *pool;
	int refill_tfd;        /* timerfd: a refill deferred behind a taken cell is due (warm.c) */
	int64_t refill_after_end_ms; /* no refill before (a run's end was just told: warm.c) */
	unsigned warm_failed;  /* cells in a row that failed before they were ready */
	uint64_t warm_taken, cold_started;
	pthread_cond_t ended;  /* a run was reaped (server_settle) */
	/* the connections (conns.c) */
	pthread_mutex_t cmu;
	struct conn *conns, *conns_last;
	struct conn_user *conn_users;  /* the unix sockets' */
	size_t n_conn_users;
	unsigned conn_total, conn_others;
	struct conn_src *conn_srcs;    /* TCP's */
	size_t n_conn_srcs;
	unsigned tcp_total, tcp_pending;
	struct subids subids;
	size_t body_held;      /* bytes of request bodies held (BODIES_MAX) */
	struct run_end *ends;  /* the last few */
	struct end_waiter *waiters;  /* each woken by its run's end (server_wait_end) */
};

/* Who asks: the peer of a unix socket (uid), or a holder of the token (the server's uid). */
struct who {
	uid_t uid;
	bool all;              /* sees every run (root, the server's own user, the token) */
};

/* api.c: answer j (taken) as JSON with status */
enum MHD_Result api_json(struct MHD_Connection *c, int status, json_t *j);
/* exec.c: POST /v1/runs/{id}/exec (its body) and /end, sent on to the run's session; POST
 * /v1/runs?wait=ready: wait until the run of out (the 201 answer) takes execs, or ended */
enum MHD_Result serve_exec(struct server *s, struct MHD_Connection *c, const char *id, const char *body, size_t len);
enum MHD_Result serve_end(struct server *s, struct MHD_Connection *c, const char *id);
void serve_wait_ready(struct server *s, json_t *out);
/* exec.c: connect to the session of run id; -1 with *status and *why (heap) when there is none */
int serve_session_dial(struct server *s, const char *id, int *status, char **why);
/* exec.c: send req (taken) as one line on a session's connection fd; 0 or -1 */
int serve_send_line(int fd, json_t *req);
/* exec.c: the session's first line: its refusal as status and {"error"}, else 200 and the line */
int serve_first_answer(int fd, json_t **out);
/* files.c: GET /v1/runs/{id}/files?path=P[&list=1], a session's file or directory */
enum MHD_Result serve_files_get(struct server *s, struct MHD_Connection *c, const char *id);
/* files.c: PUT /v1/runs/{id}/files?path=P[&mode=M][&parents=1]: at its head, its request sent
 * to the session (true: its body is to come, *fd the session's connection, *len its bytes);
 * else false, the answer queued in *ret */
bool serve_files_put_head(struct server *s, struct MHD_Connection *c, const char *id, int *fd, uint64_t *len,
			  enum MHD_Result *ret);
/* files.c: its body whole (sent on fd, taken): the session's answer */
enum MHD_Result serve_files_put_end(struct MHD_Connection *c, int fd);

/* serve.c */
void server_wake(struct server *s);
/* Remove the server's files of run id (console, job file, request). */
void server_forget_files(struct server *s, const char *id);
/* 1-based position of id in the queue, 0 when not queued. Under mu. */
long server_queue_pos(struct server *s, const char *id);
struct srun *server_find(struct server *s, const char *id, bool *queued);
/* Queue a run (takes argv). Under mu. */
void server_enqueue(struct server *s, const char *id, uid_t owner, char **argv, int64_t submitted_ms);
/* Kill a queued (removed, recorded) or running (SIGTERM as `warren kill`) run; under mu.
 * 0, -ENOENT when not the server's and not live. */
int server_kill(struct server *s, const char *id, const char *why);
/* Is run id of this state live (queued, started or another supervisor holding it)? Under mu. */
bool server_live(struct server *s, const char *id);
/* Write the job file path (<state>/serve/<id>.job.json) with text: 0 or -errno. */
int server_write_job(struct server *s, const char *path, const char *text);
/* The file <state>/serve/<id><suffix> of run id. */
char *server_file(struct server *s, const char *id, const char *suffix);

/* Start this binary as a run's supervisor (argv), its output on out, keep (-1: none) as its fd 3. */
pid_t server_spawn(char **argv, int out, int keep, pid_t parent, const sigset_t *mask);
/* The last "warren: " line of the console of id. */
char *server_console_error(struct server *s, const char *id);
/* gc of the runs ids (supervise/gc.h: what `warren gc --state S IDS...` does), its line on stdout. */
void server_gc(struct server *s, char **ids);
/* POST ?wait=1: wait until the run of out (the 201 answer) ended; its state and exit code
 * into out. A warm run's is known before its record is written (server_settle), and read on
 * end_fd (taken; -1: none) from its supervisor. */
void server_wait_end(struct server *s, json_t *out, int end_fd);
/* Wait (10 s at most) until a run that said how it ended (to the server, or in its row:
 * row_ended) has written its record and ended (reaped): until then it is live. */
void server_settle(struct server *s, const char *id, bool row_ended);
/* Note a run's end for its waiters; under mu. */
void server_note_end(struct server *s, const char *id, const char *state, int exit_code, const char *start);

/* warm.c: the warm pool; all under mu */
void warm_fill(struct server *s, const sigset_t *mask);
/* NULL: there is no pool; "": req may take a warm cell; else why it may not */
const char *warm_fits(struct server *s, json_t *req);
/* A ready warm cell, when one is and a slot is free (NULL: none); give it the run of req (its
 * job's text, and file: its name, by the cell's id, written only when the text is too large
 * to go with it) before the run's row is written; *end_fd: a socket its supervisor tells the
 * run's end on (server_wait_end). */
struct warm_cell *warm_ready(struct server *s);
int warm_give(struct server *s, struct warm_cell *w, const char *file, const char *text, json_t *req, int *end_fd);
/* The row of the run given a warm cell is written: tell its supervisor (which writes its own
 * rows only after that: a cold start's, its end). */
void warm_row_written(struct server *s, const char *id);
/* A warm run r has ended (its end said to the waiting connection, or to the loop): no refill
 * in this moment (its cell is being torn down, and the answer needs mu). */
void warm_note_end(struct server *s, struct srun *r);
/* A warm cell's supervisor's socket is readable (false: fd is not one). */
bool warm_read(struct server *s, int fd);
/* pid was a pool cell's supervisor (true): forget it. */
bool warm_reaped(struct server *s, pid_t pid);
void warm_discard_all(struct server *s);
uint64_t warm_pss_per_cell(struct server *s);
/* Reclaim the cells a killed server left (their consoles <serve>/<id>.out, their run
 * directories still warm). */
void warm_recover(struct server *s);

/* submit.c: POST /v1/runs body -> a queued run; HTTP status and the JSON answer; *end_fd: a
 * warm run's end socket (server_wait_end), or -1 */
int submit_run(struct server *s, const struct who *w, const char *body, size_t len, json_t **out, int *end_fd);

/* conns.c: the caps on connections (conns.h); libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION
 * (cls: the listener) */
void conns_init(struct server *s);
void conns_free(struct server *s);
void conns_notify(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_ConnectionNotificationCode toe);
/* A request's head is in (false: c was refused, nothing of it is answered): no more deadline,
 * CONN_REQUEST_S of silence. */
bool conns_head_in(struct server *s, struct MHD_Connection *c);
/* c's request was answered, it stays open: the next head has CONN_HEAD_S from now. */
void conns_head_next(struct server *s, struct MHD_Connection *c);
/* c's request brought the token (TCP): no longer one of its source's without it. */
void conns_authenticated(struct server *s, struct MHD_Connection *c);
/* Close the connections whose head is awaited for CONN_HEAD_S (408); each second. */
void conns_sweep(struct server *s);
/* Hold n bytes more of a body (false: BODIES_MAX would be passed), and give them back. */
bool conns_body_take(struct server *s, size_t n);
void conns_body_give(struct server *s, size_t n);

/* api.c: the request handler and its completion; a comparison of secrets in constant time */
bool same_secret(const char *a, size_t alen, const char *b, size_t blen);
enum MHD_Result api_handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			   const char *version, const char *upload, size_t *upload_size, void **con_cls);
void api_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t);

/* logs.c: GET /v1/runs/{id}/logs */
struct MHD_Response *logs_response(struct server *s, const char *id, const char *step, uint64_t offset,
				   bool follow, int *status, json_t **err);

/* metrics.c */
char *metrics_text(struct server *s);

#endif
