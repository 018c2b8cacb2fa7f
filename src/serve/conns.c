/* SPDX-License-Identifier: Apache-2.0 */
/* conns.c - the server's connections as libmicrohttpd starts and closes them (conns.h): counted
 * by their peer's uid (SO_PEERCRED, a subordinate uid as its owner's) on a unix socket and by
 * their source address on TCP, one refused (or, on TCP, the source's oldest without the token
 * closed) when over a cap (admit.c decides); the fixed time of a request's head, checked each
 * second by the server's loop (conns_sweep); the bytes of request bodies held at once. */
#include "serve/conns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pwd.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "serve/internal.h"
#include "serve/slog.h"
#include "util/fs.h"

#define SUBUID_FILE "/etc/subuid"

static int64_t now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- /etc/subuid (under cmu) */

static uid_t owner_named(const char *name, size_t len)
{
	_cleanup_free_ char *n = xasprintf("%.*s", (int)len, name);
	char buf[4096];
	struct passwd pw, *p = NULL;
	return getpwnam_r(n, &pw, buf, sizeof buf, &p) == 0 && p ? p->pw_uid : (uid_t)-1;
}

/* Read /etc/subuid again when it changed since it was last read (or is gone). */
static void subids_refresh(struct server *s)
{
	struct stat st;
	if (stat(SUBUID_FILE, &st) < 0)
		memset(&st, 0, sizeof st);
	struct subids *x = &s->subids;
	if (x->read && st.st_ino == x->ino && st.st_size == x->size && st.st_mtim.tv_sec == x->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == x->mtime.tv_nsec)
		return;
	x->read = true;
	x->ino = st.st_ino;
	x->size = st.st_size;
	x->mtime = st.st_mtim;
	x->n = 0;
	_cleanup_free_ char *t = st.st_ino ? read_file(SUBUID_FILE, NULL) : NULL;
	for (const char *p = t; p && *p;) {
		const char *end = strchrnul(p, '\n'), *name;
		size_t nlen;
		struct subid_range r;
		if (subid_parse_line(p, end, &name, &nlen, &r) == 0) {
			if (r.owner == (uid_t)-1)
				r.owner = owner_named(name, nlen);
			x->r = xrealloc(x->r, (x->n + 1) * sizeof *x->r);
			x->r[x->n++] = r;
		}
		p = *end ? end + 1 : end;
	}
}

/* ---- the counts (under cmu) */

static struct conn_user *user_of(struct server *s, uid_t uid, bool add)
{
	for (size_t i = 0; i < s->n_conn_users; i++)
		if (s->conn_users[i].uid == uid)
			return &s->conn_users[i];
	if (!add)
		return NULL;
	s->conn_users = xrealloc(s->conn_users, (s->n_conn_users + 1) * sizeof *s->conn_users);
	s->conn_users[s->n_conn_users] = (struct conn_user){ .uid = uid };
	return &s->conn_users[s->n_conn_users++];
}

static struct conn_src *source_of(struct server *s, const struct conn_source *src, bool add)
{
	for (size_t i = 0; i < s->n_conn_srcs; i++)
		if (!memcmp(&s->conn_srcs[i].src, src, sizeof *src))
			return &s->conn_srcs[i];
	if (!add)
		return NULL;
	s->conn_srcs = xrealloc(s->conn_srcs, (s->n_conn_srcs + 1) * sizeof *s->conn_srcs);
	s->conn_srcs[s->n_conn_srcs] = (struct conn_src){ .src = *src };
	return &s->conn_srcs[s->n_conn_srcs++];
}

/* A TCP connection no longer counted as one without the token (it brought it, or it ends). */
static void unpend(struct server *s, struct conn *cn)
{
	if (!cn->pending)
		return;
	cn->pending = false;
	s->tcp_pending--;
	struct conn_src *x = source_of(s, &cn->src, false);
	if (x && --x->n == 0)
		*x = s->conn_srcs[--s->n_conn_srcs];
}

/* cn out of the counts (it ends, or is closed for another). */
static void uncount(struct server *s, struct conn *cn)
{
	if (!cn->counted)
		return;
	cn->counted = false;
	if (cn->tcp) {
		unpend(s, cn);
		s->tcp_total--;
		return;
	}
	struct conn_user *u = user_of(s, cn->owner, false);
	if (u && --u->n == 0)
		*u = s->conn_users[--s->n_conn_users];
	s->conn_total--;
	s->conn_others -= cn->uid != 0 && cn->uid != s->uid;
}

/* ---- refusing and closing */

/* Tell fd status and why as the JSON {"error"} (one line), and shut it: libmicrohttpd, which
 * holds the connection, reads its end and closes it; api_handle answers nothing of it. */
static void tell_and_shut(int fd, const char *status, const char *why)
{
	json_t *j = json_pack("{s:s}", "error", why);
	_cleanup_free_ char *body = json_dumps(j, 0);
	json_decref(j);
	_cleanup_free_ char *t = xasprintf("HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
					   "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
					   status, strlen(body) + 1, body);
	if (send(fd, t, strlen(t), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* its buffer is full or it left: the shutdown says enough */
	}
	shutdown(fd, SHUT_RDWR);
}

static void refuse(struct server *s, struct conn *cn, enum conn_verdict v)
{
	char addr[INET6_ADDRSTRLEN] = "";
	if (cn->tcp)
		inet_ntop(AF_INET6, cn->src.a, addr, sizeof addr);
	_cleanup_free_ char *why = conn_refusal(v, cn->uid, cn->owner, cn->tcp ? addr : NULL);
	slog_conn_refused(503, why, cn->uid, cn->tcp ? addr : NULL);
	cn->refused = true;
	uncount(s, cn);
	if (cn->fd >= 0 && cn->head_since_ms)
		tell_and_shut(cn->fd, "503 Service Unavailable", why);
	else if (cn->fd >= 0)
		shutdown(cn->fd, SHUT_RDWR);  /* being answered: libmicrohttpd writes to it */
}

/* The oldest TCP connection without the token (of src, or of any source: NULL). */
static struct conn *oldest_pending(struct server *s, const struct conn_source *src)
{
	for (struct conn *c = s->conns; c; c = c->next)
		if (c->pending && c->counted && (!src || !memcmp(&c->src, src, sizeof *src)))
			return c;
	return NULL;
}

/* ---- starting and closing */

static enum conn_verdict admit_unix(struct server *s, struct conn *cn)
{
	struct ucred cr = { .uid = (uid_t)-1 };  /* not known: counted as another user's */
	socklen_t len = sizeof cr;
	if (cn->fd < 0 || getsockopt(cn->fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		cr.uid = (uid_t)-1;
	subids_refresh(s);
	cn->uid = cr.uid;
	cn->owner = conn_owner(s->subids.r, s->subids.n, cr.uid, s->uid);
	struct conn_user *u = user_of(s, cn->owner, false);
	struct conn_counts n = { .total = s->conn_total, .others = s->conn_others, .of_uid = u ? u->n : 0 };
	enum conn_verdict v = conn_admit(&n, cn->owner, s->uid);
	if (v == CONN_TAKE) {
		user_of(s, cn->owner, true)->n++;
		s->conn_total++;
		s->conn_others += cr.uid != 0 && cr.uid != s->uid;
		cn->counted = true;
	}
	return v;
}

static enum conn_verdict admit_tcp(struct server *s, struct conn *cn, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ai = mhd.connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!ai || !ai->client_addr || !conn_source_of(ai->client_addr, sizeof(struct sockaddr_in6), &cn->src))
		memset(&cn->src, 0, sizeof cn->src);  /* not known: one source, all of those */
	cn->tcp = true;
	cn->uid = cn->owner = (uid_t)-1;
	struct conn_src *x = source_of(s, &cn->src, false);
	struct tcp_counts n = { .total = s->tcp_total, .pending = s->tcp_pending, .of_source = x ? x->n : 0 };
	enum conn_verdict v = conn_admit_tcp(&n);
	if (v == CONN_EVICT_SOURCE || v == CONN_EVICT_OLDEST) {
		struct conn *old = oldest_pending(s, v == CONN_EVICT_SOURCE ? &cn->src : NULL);
		if (old)
			refuse(s, old, v);
		v = old ? CONN_TAKE : CONN_FULL;
	}
	if (v == CONN_TAKE) {
		source_of(s, &cn->src, true)->n++;
		s->tcp_total++;
		s->tcp_pending++;
		cn->pending = cn->counted = true;
	}
	return v;
}

static void conn_started(struct listener *l, struct MHD_Connection *c, void **ctx)
{
	struct server *s = l->s;
	const union MHD_ConnectionInfo *ci = mhd.connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct conn *cn = xcalloc(1, sizeof *cn);
	cn->fd = ci ? ci->connect_fd : -1;
	cn->head_since_ms = now_ms();
	pthread_mutex_lock(&s->cmu);
	enum conn_verdict v = l->tcp ? admit_tcp(s, cn, c) : admit_unix(s, cn);
	cn->prev = s->conns_last;  /* oldest first */
	if (s->conns_last)
		s->conns_last->next = cn;
	else
		s->conns = cn;
	s->conns_last = cn;
	/* (libmicrohttpd starts the connection's thread after this notice: it sees refused) */
	if (v != CONN_TAKE)
		refuse(s, cn, v);
	pthread_mutex_unlock(&s->cmu);
	*ctx = cn;
}

/* libmicrohttpd closes the socket after this notice: under cmu, fd is cn's while it is listed */
static void conn_closed(struct server *s, struct conn *cn)
{
	pthread_mutex_lock(&s->cmu);
	uncount(s, cn);
	if (cn->prev)
		cn->prev->next = cn->next;
	else
		s->conns = cn->next;
	if (cn->next)
		cn->next->prev = cn->prev;
	else
		s->conns_last = cn->prev;
	pthread_mutex_unlock(&s->cmu);
	free(cn);
}

void conns_notify(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_ConnectionNotificationCode toe)
{
	struct listener *l = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		conn_started(l, c, ctx);
		return;
	}
	if (*ctx)
		conn_closed(l->s, *ctx);
	*ctx = NULL;
}

/* ---- a connection's life */

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = mhd.connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

bool conns_head_in(struct server *s, struct MHD_Connection *c)
{
	struct conn *cn = conn_of(c);
	pthread_mutex_lock(&s->cmu);
	bool ok = cn && !cn->refused;
	if (ok)
		cn->head_since_ms = 0;
	pthread_mutex_unlock(&s->cmu);
	if (ok)
		mhd.set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)CONN_REQUEST_S);
	return ok;
}

void conns_head_next(struct server *s, struct MHD_Connection *c)
{
	struct conn *cn = conn_of(c);
	pthread_mutex_lock(&s->cmu);
	if (cn)
		cn->head_since_ms = now_ms();
	pthread_mutex_unlock(&s->cmu);
	mhd.set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)CONN_HEAD_S);
}

void conns_authenticated(struct server *s, struct MHD_Connection *c)
{
	struct conn *cn = conn_of(c);
	pthread_mutex_lock(&s->cmu);
	if (cn && cn->counted)
		unpend(s, cn);
	pthread_mutex_unlock(&s->cmu);
}

void conns_sweep(struct server *s)
{
	int64_t now = now_ms();
	_cleanup_free_ char *why = xasprintf("the request's head did not come whole within %d s; send it at once", CONN_HEAD_S);
	pthread_mutex_lock(&s->cmu);
	for (struct conn *cn = s->conns; cn; cn = cn->next)
		if (cn->head_since_ms && now - cn->head_since_ms >= CONN_HEAD_S * 1000 && !cn->refused && cn->fd >= 0) {
			cn->refused = true;
			tell_and_shut(cn->fd, "408 Request Timeout", why);
		}
	pthread_mutex_unlock(&s->cmu);
}

bool conns_body_take(struct server *s, size_t n)
{
	pthread_mutex_lock(&s->cmu);
	bool ok = body_admit(s->body_held, n);
	if (ok)
		s->body_held += n;
	pthread_mutex_unlock(&s->cmu);
	return ok;
}

void conns_body_give(struct server *s, size_t n)
{
	pthread_mutex_lock(&s->cmu);
	s->body_held -= n;
	pthread_mutex_unlock(&s->cmu);
}

void conns_init(struct server *s)
{
	pthread_mutex_init(&s->cmu, NULL);
	/* CONN_MAX and more at once (a flood refused is briefly held too): a soft limit of 1024
	 * (systemd's) would refuse root's connection with EMFILE before the caps could */
	struct rlimit nf;
	if (getrlimit(RLIMIT_NOFILE, &nf) == 0 && nf.rlim_cur < CONN_FDS) {
		nf.rlim_cur = nf.rlim_max == RLIM_INFINITY || nf.rlim_max > CONN_FDS ? CONN_FDS : nf.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nf);
	}
}

void conns_free(struct server *s)
{
	free(s->conn_users);
	free(s->conn_srcs);
	free(s->subids.r);
	s->conn_users = NULL;
	s->conn_srcs = NULL;
	s->subids.r = NULL;
	pthread_mutex_destroy(&s->cmu);
}
