/* conns.h - how many connections each user may hold on the server's unix sockets. A root
 * server's socket is 0666 (others get their own view of the API), so any local user could
 * otherwise fill every connection with requests never finished and lock root out: each user
 * other than root and the server's own has a cap, all of them together another, and a share
 * stays for root and the server's user; a request's head has seconds, not minutes. The
 * decision is pure (tests/unit/test_conns.c); conns.c applies it to libmicrohttpd's connections. */
#ifndef WARREN_SERVE_CONNS_H
#define WARREN_SERVE_CONNS_H

#include <sys/types.h>

#define CONN_MAX 1000       /* connections at once on the unix sockets, every user's */
#define CONN_RESERVED 200   /* ... of which the last are root's and the server's user's alone */
#define CONN_PER_USER 64    /* at most, each other user's */
#define CONN_HEAD_S 5       /* seconds of silence a request's head may have (and a connection
                               kept alive between requests) */
#define CONN_REQUEST_S 300  /* ... once the head is in: its body, its answer, a stream of logs */
#define CONN_LIB_MAX (CONN_MAX + 500)  /* libmicrohttpd's own cap, each unix socket's: above ours
                                          (the refused connections it holds a moment count) */
#define CONN_FDS 4096       /* the server's soft RLIMIT_NOFILE at least (if its hard one allows) */

/* The connections held when one more is asked for. */
struct conn_counts {
	unsigned total;     /* every user's */
	unsigned others;    /* those of users other than root and the server's */
	unsigned of_uid;    /* those of the uid asking */
};

enum conn_verdict {
	CONN_TAKE,
	CONN_FULL,          /* CONN_MAX are held */
	CONN_OTHERS_FULL,   /* other users hold CONN_MAX - CONN_RESERVED */
	CONN_USER_FULL,     /* this user holds CONN_PER_USER */
};

/* May uid have one connection more, the server running as server_uid? */
enum conn_verdict conn_admit(const struct conn_counts *c, uid_t uid, uid_t server_uid);
/* The one line a refused connection is told (a heap string). */
char *conn_refusal(enum conn_verdict v, uid_t uid);

#endif
