/* internal.h - what the pieces of the server share: the server, its queue and runs, the API's
 * entry points. */
#ifndef WARREN_SERVE_INTERNAL_H
#define WARREN_SERVE_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "run/history.h"
#include "run/id.h"
#include "run/rundir.h"
#include "serve/mhd.h"
#include "serve/serve.h"

/* A run of the server: queued (pid 0) or started (pid > 0). */
struct srun {
	char id[RUN_ID_LEN + 1];
	uid_t owner;
	char **argv;           /* the child's: this binary's `job run ...` */
	int64_t submitted_ms;
	pid_t pid;
	struct srun *next;
};

/* One listening socket: the daemon's closure. */
struct listener {
	struct server *s;
	bool tcp;              /* the bearer token is required */
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
};

/* Who asks: the peer of a unix socket (uid), or a holder of the token (the server's uid). */
struct who {
	uid_t uid;
	bool all;              /* sees every run (root, the server's own user, the token) */
};

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
/* The file <state>/serve/<id><suffix> of run id. */
char *server_file(struct server *s, const char *id, const char *suffix);

/* submit.c: POST /v1/runs body -> a queued run; HTTP status and the JSON answer */
int submit_run(struct server *s, const struct who *w, const char *body, size_t len, json_t **out);

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
