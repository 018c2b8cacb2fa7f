/* conns.c - the connections of the server's unix sockets counted by their peer's uid
 * (SO_PEERCRED) as libmicrohttpd starts and closes them, one refused when its user holds too
 * many (conns.h); and the timeouts of a connection: seconds for a request's head, minutes
 * once it is in. */
#include "serve/conns.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "serve/internal.h"

enum conn_verdict conn_admit(const struct conn_counts *c, uid_t uid, uid_t server_uid)
{
	if (c->total >= CONN_MAX)
		return CONN_FULL;
	if (uid == 0 || uid == server_uid)
		return CONN_TAKE;
	if (c->of_uid >= CONN_PER_USER)
		return CONN_USER_FULL;
	if (c->others >= CONN_MAX - CONN_RESERVED)
		return CONN_OTHERS_FULL;
	return CONN_TAKE;
}

char *conn_refusal(enum conn_verdict v, uid_t uid)
{
	switch (v) {
	case CONN_USER_FULL:
		return xasprintf("uid %u holds %d connections to warren serve, its most; close some (or finish their requests) and ask again",
				 (unsigned)uid, CONN_PER_USER);
	case CONN_OTHERS_FULL:
		return xasprintf("users other than root and the server's hold %d connections to warren serve, their most; ask again later",
				 CONN_MAX - CONN_RESERVED);
	case CONN_FULL:
		return xasprintf("warren serve holds %d connections, its most; ask again later", CONN_MAX);
	case CONN_TAKE:
		break;
	}
	return xstrdup("");
}

/* The counts of the uids holding connections (under cmu). */
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

/* Answer a refused connection its line (503) and shut it: libmicrohttpd, which has started
 * it, reads its end and closes it; api_handle answers nothing it may have read before. */
static void refuse(int fd, enum conn_verdict v, uid_t uid)
{
	_cleanup_free_ char *why = conn_refusal(v, uid);
	json_t *j = json_pack("{s:s}", "error", why);
	_cleanup_free_ char *body = json_dumps(j, 0);
	json_decref(j);
	_cleanup_free_ char *t = xasprintf("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
					   "Content-Length: %zu\r\nConnection: close\r\n\r\n%s\n",
					   strlen(body) + 1, body);
	if (send(fd, t, strlen(t), MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		/* its buffer is full or it left: the shutdown says enough */
	}
	shutdown(fd, SHUT_RDWR);
}

static void conn_started(struct server *s, struct MHD_Connection *c, void **ctx)
{
	const union MHD_ConnectionInfo *ci = mhd.connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct ucred cr = { .uid = (uid_t)-1 };  /* not known: counted as another user's */
	socklen_t len = sizeof cr;
	if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		cr.uid = (uid_t)-1;
	bool other = cr.uid != 0 && cr.uid != s->uid;
	struct conn *cn = xcalloc(1, sizeof *cn);
	cn->uid = cr.uid;
	pthread_mutex_lock(&s->cmu);
	struct conn_user *u = user_of(s, cr.uid, false);
	struct conn_counts n = { .total = s->conn_total, .others = s->conn_others, .of_uid = u ? u->n : 0 };
	enum conn_verdict v = conn_admit(&n, cr.uid, s->uid);
	if (v == CONN_TAKE) {
		user_of(s, cr.uid, true)->n++;
		s->conn_total++;
		s->conn_others += other;
		cn->counted = true;
	}
	pthread_mutex_unlock(&s->cmu);
	/* (libmicrohttpd starts the connection's thread after this notice: it sees refused) */
	cn->refused = v != CONN_TAKE;
	*ctx = cn;
	if (cn->refused && ci)
		refuse(ci->connect_fd, v, cr.uid);
}

static void conn_closed(struct server *s, struct conn *cn)
{
	pthread_mutex_lock(&s->cmu);
	struct conn_user *u = user_of(s, cn->uid, false);
	if (u && --u->n == 0)
		*u = s->conn_users[--s->n_conn_users];
	s->conn_total--;
	s->conn_others -= cn->uid != 0 && cn->uid != s->uid;
	pthread_mutex_unlock(&s->cmu);
}

void conns_notify(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_ConnectionNotificationCode toe)
{
	struct listener *l = cls;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		conn_started(l->s, c, ctx);
		return;
	}
	struct conn *cn = *ctx;
	if (cn && cn->counted)
		conn_closed(l->s, cn);
	free(cn);
	*ctx = NULL;
}

bool conns_refused(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = mhd.connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	const struct conn *cn = ci ? ci->socket_context : NULL;
	return cn && cn->refused;
}

void conns_request_timeout(struct MHD_Connection *c, bool head_in)
{
	mhd.set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)(head_in ? CONN_REQUEST_S : CONN_HEAD_S));
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
	s->conn_users = NULL;
	pthread_mutex_destroy(&s->cmu);
}
