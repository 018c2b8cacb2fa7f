/* SPDX-License-Identifier: Apache-2.0 */
/* conns.h - how many connections each client may hold, and for how long before its request is
 * in. A root server's unix socket is 0666 (others get their own view of the API), so any local
 * user could otherwise fill every connection with requests never finished and lock root out:
 * each user other than root and the server's own has a cap (a uid of a user's /etc/subuid range
 * counts as that user's: a user namespace gives one user 65 536 uids), all of them together
 * another, and a share stays for root and the server's user. On TCP nobody is known until a
 * request's head brings the token: each source (an address; all of loopback one, an IPv6 /64
 * one) holds a few connections without it, beyond which its oldest is closed for the new one
 * (so a token holder on an attacker's address still gets in), and those without the token
 * together hold at most what leaves a share to token holders. A request's head has a fixed
 * time, however slowly it comes; nothing of a body is read before the server knows its sender
 * may send it, and the bodies held at once have a cap. The decisions are pure
 * (tests/unit/test_conns.c); conns.c applies them to libmicrohttpd's connections. */
#ifndef WARREN_SERVE_CONNS_H
#define WARREN_SERVE_CONNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define CONN_MAX 1000       /* connections at once on the unix sockets (and on each TCP one) */
#define CONN_RESERVED 200   /* ... of which the last are root's and the server's user's alone
                               (on TCP: those whose request brought the token) */
#define CONN_PER_USER 64    /* at most, each other user's (unix) or each source's without the token (TCP) */
#define CONN_HEAD_S 5       /* seconds a request's head may take, all of it, however it trickles
                               (and a connection may idle between requests) */
#define CONN_REQUEST_S 300  /* ... once the head is in: seconds of silence of its body, its answer,
                               a stream of logs */
#define CONN_LIB_MAX (CONN_MAX + 500)  /* libmicrohttpd's own cap, each socket's: above ours (the
                                          refused and the closed connections it holds a moment count) */
#define CONN_FDS 4096       /* the server's soft RLIMIT_NOFILE at least (if its hard one allows) */
#define BODY_MAX (1 << 20)  /* bytes of one request's body */
#define BODIES_MAX (64u << 20)  /* bytes of the bodies held at once, every request's */

/* ---- unix sockets: by user */

/* The connections held when one more is asked for. */
struct conn_counts {
	unsigned total;     /* every user's */
	unsigned others;    /* those of users other than root and the server's */
	unsigned of_uid;    /* those of the uid asking (its owner's: conn_owner) */
};

enum conn_verdict {
	CONN_TAKE,
	CONN_FULL,          /* CONN_MAX are held */
	CONN_OTHERS_FULL,   /* other users hold CONN_MAX - CONN_RESERVED (TCP: those without the token) */
	CONN_USER_FULL,     /* this user holds CONN_PER_USER */
	CONN_EVICT_SOURCE,  /* TCP: take it, closing the oldest of its source's without the token */
	CONN_EVICT_OLDEST,  /* TCP: take it, closing the oldest of all without the token */
};

/* May uid have one connection more, the server running as server_uid? */
enum conn_verdict conn_admit(const struct conn_counts *c, uid_t uid, uid_t server_uid);

/* A range of subordinate uids (a line of /etc/subuid: NAME-OR-UID:START:COUNT). */
struct subid_range {
	uid_t owner;        /* (uid_t)-1: not known (a name without a user) */
	uint64_t start, count;
};

/* The line of /etc/subuid at text..end parsed: 0 (*r and the owner's name or number in
 * name[0..*nlen)), -EINVAL when it is not a range (a comment, an empty or a broken line). */
int subid_parse_line(const char *text, const char *end, const char **name, size_t *nlen, struct subid_range *r);
/* The uid whose cap the connection of uid counts against: root and the server's user
 * themselves; a uid in a range of /etc/subuid its owner, or the range's first uid when the
 * owner is not known, root or the server's user (the range is one other user then: it never
 * takes their share); any other uid itself. */
uid_t conn_owner(const struct subid_range *r, size_t n, uid_t uid, uid_t server_uid);

/* ---- TCP: by source, until the token is seen */

/* A client's source: its address, IPv4 as ::ffff:a.b.c.d; all of loopback (127/8, ::1) one,
 * an IPv6 address its /64. */
struct conn_source {
	unsigned char a[16];
};
/* The source of addr (false: not an address of IPv4 or IPv6). */
bool conn_source_of(const struct sockaddr *addr, socklen_t len, struct conn_source *out);

/* The connections of a TCP listener held when one more is asked for. */
struct tcp_counts {
	unsigned total;     /* every connection */
	unsigned pending;   /* those whose request has not brought the token (yet) */
	unsigned of_source; /* ... of those, the asking source's */
};
/* May one more connection of a source be taken (and whose is closed for it)? */
enum conn_verdict conn_admit_tcp(const struct tcp_counts *c);

/* ---- bodies */

/* May a body of want bytes more be held, held bytes being held (false: 503)? */
bool body_admit(size_t held, size_t want);

/* The one line a refused connection is told (a heap string); uid: the peer's, owner: whose cap
 * it counts against (conn_owner); source: the TCP peer's (its text), or NULL. */
char *conn_refusal(enum conn_verdict v, uid_t uid, uid_t owner, const char *source);

#endif
