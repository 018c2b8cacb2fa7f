/* SPDX-License-Identifier: Apache-2.0 */
/* session.c - a session's execs (session.h): the run's socket, who may use it (SO_PEERCRED:
 * the run's owner or root), each exec started by the cell's executor in a session and a
 * cgroup of its own (cgroup/execgroup.h; its time limit takes its whole process tree, also
 * what left the session; what it leaves in the background on a normal end stays until the
 * session ends), its output to its log and to its caller, its end in the record as a step of
 * kind "exec" (its command cut to SESSION_CMD_MAX bytes); the session's idle and maximum life. */
#include "job/session.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/execgroup.h"
#include "job/files.h"
#include "run/record.h"
#include "supervise/supervise.h"
#include "util/fs.h"
#include "util/strv.h"
#include "util/units.h"

enum { TAG_LISTEN = 0, TAG_CONN = 0x100, TAG_PIPE = 0x10000 };
enum { CONN_OUT_HIGH = 1 << 20 };  /* a streaming caller this far behind: its exec's output waits */
#define EXEC_TASK_BIT 0x40000000u  /* executor task ids of execs (the runner's count up from 1) */

/* (XS_GONE: stopped because its caller went away, "interrupted" with the exit code 143) */
enum xstate { XS_RUNNING, XS_OK, XS_FAILED, XS_LIMIT, XS_INTERRUPTED, XS_GONE };
static const char *const XSTATE[] = { "running", "ok", "failed", "limit", "interrupted", "interrupted" };
enum { EXIT_GONE = 128 + SIGTERM };  /* an exec its caller's going stopped: as if SIGTERM ended it */

struct conn {
	int fd;
	char *in;                 /* the request read so far */
	size_t in_len;
	char *out;                /* what waits to be sent */
	size_t out_len, out_off;
	bool closing;             /* close once out is sent */
	bool linger;              /* then only read until the caller closes (its unread request
	                             would reset the connection before it read the answer) */
	long exec;                /* the exec it waits for, or -1 */
	bool keep;                /* keep-alive: open for the next request after the answer */
	int pass_fd;              /* a descriptor sent with the byte at out[pass_at] (-1: none) */
	size_t pass_at;
};

struct xec {
	json_t *command;          /* its argv as the record shows it: at most SESSION_CMD_MAX bytes */
	size_t command_bytes;     /* the whole argv's */
	bool command_cut;
	struct cgroup_exec cg;    /* its group (NULL dir: none, or removed) */
	bool tree_cgroup;         /* it had one: its limit took the group, else its session */
	int pipe[2];              /* stdout, stderr read ends (-1: closed); with a terminal: the
	                             socket its master comes on, and -1 */
	bool tty;
	int log_fd;
	pid_t pid;
	bool stream;
	long conn;                /* its caller's connection, or -1 (gone, or answered) */
	char *buf[2];             /* an answer without stream: what it wrote, at most SESSION_OUT_MAX */
	size_t len[2];
	bool cut[2];
	enum xstate state;
	int exit_code, signal;
	char *cause;
	struct timespec started;
	double t0, duration;
	uint64_t timeout_ms;
	bool stop_on_close;       /* its caller's going stops it (exec_req) */
	bool term_sent, kill_sent;
	bool caller_gone;         /* the stop was for its caller's going, at gone_at; else its limit */
	double limit_at, term_at, gone_at;
};

struct session {
	struct session_host h;
	uint64_t idle_ms, max_ms;
	int lfd;
	bool open, ended;
	bool end_forced;           /* a normal end whose cell did not end in time: stopped */
	double opened_at, last_active;
	double ended_at;           /* when its owner ended it (0: not so) */
	struct conn *conns[SESSION_CONNS_MAX];
	struct xec **x;
	size_t n_x;
	size_t running;
	size_t groups_left;        /* groups of ended execs that a process still held */
	double groups_tried_at;
	uint64_t changes;
	struct files *files;       /* its file operations (job/files.h) */
};

static double now_s(const struct session *se) { return sup_elapsed(se->h.u); }

/* ---- pure parts (the others: job/execreq.c) ---- */

enum session_due session_due(double lived_s, double quiet_s, size_t running, uint64_t idle_ms, uint64_t max_ms)
{
	if (lived_s * 1000 >= (double)max_ms)
		return SESSION_MAX;
	if (!running && quiet_s * 1000 >= (double)idle_ms)
		return SESSION_IDLE;
	return SESSION_GOES_ON;
}

/* ---- connections ---- */

static void conn_watch(struct session *se, long i)
{
	struct conn *c = se->conns[i];
	struct epoll_event ev = { .events = EPOLLIN | (c->out_len > c->out_off ? EPOLLOUT : 0),
				  .data.u32 = EV_SESSION + TAG_CONN + (uint32_t)i };
	epoll_ctl(se->h.u->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void pipes_watch(struct session *se, size_t k, bool on);
static void conn_next(struct session *se, long i);
static void exec_stop(struct session *se, size_t k, double t);

static void conn_close(struct session *se, long i)
{
	struct conn *c = se->conns[i];
	if (!c)
		return;
	struct xec *x = c->exec >= 0 ? se->x[c->exec] : NULL;
	if (x && x->conn == i) {
		/* its caller went away while it ran: stopped when it asked so (stop_on_close), else it
		 * runs on to its end or its limit, to its log only */
		x->conn = -1;
		if (x->stop_on_close && !x->term_sent) {
			x->caller_gone = true;
			x->gone_at = now_s(se) - x->t0;
			exec_stop(se, (size_t)c->exec, now_s(se));
		}
		pipes_watch(se, (size_t)c->exec, true);
	}
	epoll_ctl(se->h.u->ep, EPOLL_CTL_DEL, c->fd, NULL);
	closep(&c->fd);  /* (-1: handed to the files) */
	closep(&c->pass_fd);
	free(c->in);
	free(c->out);
	free(c);
	se->conns[i] = NULL;
}

/* Send what waits on connection i, as much as it takes now; close it when all is sent and it
 * is closing. */
static void conn_flush(struct session *se, long i)
{
	struct conn *c = se->conns[i];
	while (c->out_off < c->out_len) {
		bool with_fd = c->pass_fd >= 0 && c->out_off == c->pass_at;
		size_t end = c->pass_fd >= 0 && c->out_off < c->pass_at ? c->pass_at : c->out_len;
		struct msghdr mh;
		struct iovec iov;
		union fd_cmsg cm;
		fd_msg(&mh, &iov, &cm, with_fd ? c->pass_fd : -1, c->out + c->out_off, end - c->out_off);
		ssize_t n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			conn_close(se, i);
			return;
		}
		if (with_fd)
			closep(&c->pass_fd);
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		if (c->closing && !c->linger) {
			conn_close(se, i);
			return;
		}
		if (c->closing) {
			shutdown(c->fd, SHUT_WR);
			c->exec = -1;
		}
		if (c->exec >= 0)
			pipes_watch(se, (size_t)c->exec, true);
	} else if (c->exec >= 0 && c->out_len - c->out_off > CONN_OUT_HIGH) {
		pipes_watch(se, (size_t)c->exec, false);  /* the caller is behind: its exec's output waits */
	}
	conn_watch(se, i);
}

static void conn_put(struct session *se, long i, const void *b, size_t n)
{
	struct conn *c = se->conns[i];
	c->out = xrealloc(c->out, c->out_len + n);
	memcpy(c->out + c->out_len, b, n);
	c->out_len += n;
}

/* Put j (taken) as one line on connection i. */
static void conn_json(struct session *se, long i, json_t *j)
{
	_cleanup_free_ char *t = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!t)
		return;
	conn_put(se, i, t, strlen(t));
	conn_put(se, i, "\n", 1);
}

static void conn_refuse(struct session *se, long i, int status, const char *why)
{
	conn_json(se, i, json_pack("{s:s,s:i}", "error", why, "status", status));
	se->conns[i]->closing = true;
	se->conns[i]->linger = status != 403;  /* (a stranger gets no more of the session's time) */
	conn_flush(se, i);
}

static void on_accept(struct session *se)
{
	for (;;) {
		int fd = accept4(se->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred cr;
		socklen_t len = sizeof cr;
		bool allowed = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 && (cr.uid == 0 || cr.uid == getuid());
		long i = 0;
		while (i < SESSION_CONNS_MAX && se->conns[i])
			i++;
		if (i == SESSION_CONNS_MAX) {
			static const char busy[] = "{\"error\":\"too many connections to this session at once; try again\",\"status\":429}\n";
			ssize_t w = send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			(void)w;
			close(fd);
			continue;
		}
		struct conn *c = xcalloc(1, sizeof *c);
		c->fd = fd;
		c->exec = -1;
		c->pass_fd = -1;
		se->conns[i] = c;
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = EV_SESSION + TAG_CONN + (uint32_t)i };
		epoll_ctl(se->h.u->ep, EPOLL_CTL_ADD, fd, &ev);
		if (!allowed) {
			_cleanup_free_ char *why = xasprintf("uid %u may not use run %s: only its owner (uid %u) or root may",
							     (unsigned)cr.uid, se->h.s->id, (unsigned)getuid());
			conn_refuse(se, i, 403, why);
		}
	}
}

/* ---- execs ---- */

static void pipes_watch(struct session *se, size_t k, bool on)
{
	struct xec *x = se->x[k];
	for (int j = 0; j < 2; j++) {
		if (x->pipe[j] < 0)
			continue;
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = EV_SESSION + TAG_PIPE + (uint32_t)(k * 2 + (size_t)j) };
		if (epoll_ctl(se->h.u->ep, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, x->pipe[j], on ? &ev : NULL) < 0 && on &&
		    errno == EEXIST)
			continue;
	}
}

static const char *const STREAM[] = { "stdout", "stderr" };
enum { LOG_NOT_YET = -2 };  /* an exec's log_fd before its first byte */
static int exec_log(struct session *se, size_t k);

/* n bytes exec k wrote on stream j: to its log (within the job's output limit), and to its
 * caller while it waits. */
static void exec_output(struct session *se, size_t k, int j, const char *b, size_t n)
{
	struct xec *x = se->x[k];
	size_t pass = sup_output_pass(se->h.u, n);
	if (pass && x->log_fd == LOG_NOT_YET)
		x->log_fd = exec_log(se, k);  /* made at the first byte: a silent exec makes no file */
	if (pass && x->log_fd >= 0 && write_all(x->log_fd, b, pass) < 0)
		closep(&x->log_fd);
	if (x->conn < 0 || x->state != XS_RUNNING)
		return;
	if (x->stream) {
		char head[48];
		int l = snprintf(head, sizeof head, "{\"%s\":%zu}\n", STREAM[j], pass);
		conn_put(se, x->conn, head, (size_t)l);
		conn_put(se, x->conn, b, pass);
		conn_flush(se, x->conn);
		return;
	}
	size_t room = SESSION_OUT_MAX - x->len[j], take = pass < room ? pass : room;
	if (take < n)
		x->cut[j] = true;
	x->buf[j] = xrealloc(x->buf[j], x->len[j] + take + 1);
	memcpy(x->buf[j] + x->len[j], b, take);
	x->len[j] += take;
}

/* Exec k's terminal: its master, passed to its caller with a line {"tty":true}; or why the
 * cell could not open one, as its stderr. The socket it came on is closed. */
static void tty_take(struct session *se, size_t k)
{
	struct xec *x = se->x[k];
	char why[256];
	int m = -1;
	ssize_t n = fd_recv(x->pipe[0], MSG_DONTWAIT, why, sizeof why, &m);
	if (n == -EAGAIN)
		return;
	if (m >= 0 && x->conn >= 0 && x->state == XS_RUNNING) {
		struct conn *c = se->conns[x->conn];
		closep(&c->pass_fd);
		c->pass_fd = steal_fd(&m);
		c->pass_at = c->out_len;
		conn_json(se, x->conn, json_pack("{s:b}", "tty", 1));
		conn_flush(se, x->conn);
	} else if (m < 0 && n > 0) {
		exec_output(se, k, 1, why, (size_t)n);
	}
	closep(&m);
	sup_unwatch_close(se->h.u, &x->pipe[0]);
	closep(&x->log_fd);
}

/* Take what exec k's stream j holds now (no more: a fast writer must not keep the loop);
 * close it at its end. */
static void pipe_read(struct session *se, size_t k, int j)
{
	struct xec *x = se->x[k];
	if (x->tty)
		return tty_take(se, k);
	char buf[65536];
	for (size_t queued = fd_queued(x->pipe[j]), got = 0;;) {
		ssize_t n = read(x->pipe[j], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			sup_unwatch_close(se->h.u, &x->pipe[j]);
			if (x->pipe[0] < 0 && x->pipe[1] < 0)
				closep(&x->log_fd);  /* nothing more can come: a session of many execs holds no log open */
			return;
		}
		exec_output(se, k, j, buf, (size_t)n);
		got += (size_t)n;
		if (got >= queued)
			return;
	}
}

static json_t *exec_end_json(const struct xec *x, size_t k)
{
	json_t *o = json_pack("{s:I}", "exec", (json_int_t)(k + 1));
	/* (one the session's end cut has no status of its own: warren exec says why, 125) */
	json_object_set_new(o, "exit_code", x->state != XS_INTERRUPTED ? json_integer(x->exit_code) : json_null());
	json_object_set_new(o, "signal", x->signal ? json_string(sigabbrev_np(x->signal)) : json_null());
	json_object_set_new(o, "cause", x->cause ? json_string(x->cause) : json_null());
	json_object_set_new(o, "duration_ms", json_integer((json_int_t)(x->duration * 1000)));
	return o;
}

/* Exec k ended (state st, cause): its caller answered; it is in the record. What it left
 * running in the background stays (in its group, removed once empty), and what that writes
 * on its streams goes to its log. */
static void exec_finish(struct session *se, size_t k, enum xstate st, char *cause)
{
	struct xec *x = se->x[k];
	for (int j = 0; j < 2; j++)
		if (x->pipe[j] >= 0)
			pipe_read(se, k, j);
	if (!cgroup_exec_remove(&x->cg))
		se->groups_left++;
	x->state = st;
	free(x->cause);
	x->cause = cause;
	x->duration = now_s(se) - x->t0;
	se->running--;
	se->changes++;
	se->last_active = now_s(se);
	char d[32];
	format_seconds(d, sizeof d, x->duration);
	if (cause)
		display_line(se->h.d, "%s exec %zu: %s", st == XS_LIMIT ? "⏱" : "✖", k + 1, cause);
	else
		display_line(se->h.d, "%s exec %zu: exited with status %d after %s", st == XS_OK ? "✔" : "✖", k + 1, x->exit_code, d);
	long c = x->conn;
	x->conn = -1;
	if (c >= 0 && se->conns[c]) {
		json_t *end = exec_end_json(x, k);
		if (x->stream) {
			conn_json(se, c, json_pack("{s:o}", "end", end));
		} else {
			for (int j = 0; j < 2; j++) {
				size_t l;
				_cleanup_free_ char *t = utf8_lossy(x->buf[j] ? x->buf[j] : "", x->len[j], &l);
				json_object_set_new(end, STREAM[j], json_stringn(t, l));
				_cleanup_free_ char *cut = xasprintf("%s_truncated", STREAM[j]);
				json_object_set_new(end, cut, json_boolean(x->cut[j]));
			}
			conn_json(se, c, end);
		}
		se->conns[c]->exec = -1;
		se->conns[c]->closing = !se->conns[c]->keep;
		conn_flush(se, c);
		conn_next(se, c);
	}
	for (int j = 0; j < 2; j++) {
		free(x->buf[j]);
		x->buf[j] = NULL;
	}
	pipes_watch(se, k, true);  /* (paused for a caller behind) its log takes the rest */
}

/* A memfd holding text: the exec's stdin. */
static int stdin_fd(const char *text, size_t len)
{
	int fd = memfd_create("stdin", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write_all(fd, text, len) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int exec_log(struct session *se, size_t k)
{
	_cleanup_free_ char *p = xasprintf("%zu-exec-%zu.log", se->h.first_log + k + 1, k + 1);
	return openat(se->h.logdir_fd, p, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
}

/* Exec k's group (execgroup.h) into *g when the cell's processes are the host's and the run
 * has groups (a rootless run has them only below a delegated cgroup, cgroup/delegate.h); the
 * file its process joins it by, or -1: its session is its tree. */
static int exec_group(struct session *se, size_t k, struct cgroup_exec *g)
{
	*g = (struct cgroup_exec){ 0 };
	int join = -1;
	_cleanup_free_ char *name = xasprintf("exec-%zu", k + 1);
	if (se->h.u->drv->tasks_on_host && cgroup_exec_make(&se->h.u->cg, name, g, &join) < 0)
		join = -1;
	return join;
}

/* "▶ exec N: COMMAND" on the console, the command's first 200 bytes. */
static void exec_started_line(struct session *se, size_t k, char **argv)
{
	_cleanup_free_ char *line = xstrdup("");
	for (char **a = argv; *a && strlen(line) < 200; a++) {
		char *l = xasprintf("%s%s%.200s", line, a == argv ? "" : " ", *a);
		free(line);
		line = l;
	}
	display_line(se->h.d, "▶ exec %zu: %.200s", k + 1, line);
}

/* Start the exec x asks for on connection i; false with errno when it could not be sent. Its
 * argv stays with rq (the caller frees it): the exec keeps only what the record shows. */
static bool exec_start(struct session *se, long i, struct exec_req *rq)
{
	const struct cell_spec *s = se->h.s;
	int p[2][2] = { { -1, -1 }, { -1, -1 } }, in = -1;
	/* with a terminal: one socket, on which the master comes back */
	if ((rq->tty ? socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p[0])
		     : pipe2(p[0], O_CLOEXEC) < 0 ? -1 : pipe2(p[1], O_CLOEXEC)) < 0 ||
	    (rq->stdin_text && (in = stdin_fd(rq->stdin_text, rq->stdin_len)) < 0)) {
		int e = errno;
		for (int j = 0; j < 2; j++) {
			closep(&p[j][0]);
			closep(&p[j][1]);
		}
		errno = e;
		return false;
	}
	size_t k = se->n_x;
	char **env = job_task_env(s, rq->env);
	const char *base = s->worktree ? s->worktree : spec_cwd(s);
	_cleanup_free_ char *cwd = !rq->cwd ? xstrdup(spec_cwd(s)) : rq->cwd[0] == '/' ? xstrdup(rq->cwd)
									: xasprintf("%s/%s", base, rq->cwd);
	int fds[3] = { p[0][1], p[1][1], in };
	struct cgroup_exec g;
	int join = exec_group(se, k, &g);
	/* the executor runs as the job: an exec may have stopped it (kill -STOP $PPID). It is woken
	 * first, and the start never waits for it: a send that would block is refused (503), so
	 * that the supervisor, and with it the session's limits and warren kill, never hang on
	 * the cell */
	sup_signal_job(se->h.u, SIGCONT);
	ssize_t w = exec_start_send(se->h.ctl, EXEC_TASK_BIT | (uint32_t)k, cwd, rq->argv, env, fds,
				    rq->tty ? 1 : in >= 0 ? 3 : 2, join, MSG_DONTWAIT);
	int e = errno;
	strv_free(env);
	closep(&p[0][1]);
	closep(&p[1][1]);
	closep(&in);
	closep(&join);
	if (w < 0) {
		closep(&p[0][0]);
		closep(&p[1][0]);
		cgroup_exec_remove(&g);
		cgroup_exec_free(&g);
		errno = e;
		return false;
	}
	struct xec *x = xcalloc(1, sizeof *x);
	x->command = session_command_json(rq->argv, SESSION_CMD_MAX, &x->command_bytes, &x->command_cut);
	x->cg = g;
	x->tree_cgroup = g.dir != NULL;
	x->pipe[0] = p[0][0];
	x->pipe[1] = p[1][0];
	fcntl(x->pipe[0], F_SETFL, O_NONBLOCK);
	fcntl(x->pipe[1], F_SETFL, O_NONBLOCK);
	x->stream = rq->stream;
	x->tty = rq->tty;
	x->conn = i;
	x->timeout_ms = rq->timeout_ms;
	x->stop_on_close = rq->stop_on_close;
	x->t0 = now_s(se);
	clock_gettime(CLOCK_REALTIME, &x->started);
	se->x = xrealloc(se->x, (se->n_x + 1) * sizeof *se->x);
	se->x[se->n_x++] = x;
	x->log_fd = LOG_NOT_YET;
	if (x->tty) {
		static const char note[] = "(a terminal: its output went to its caller's terminal only)\n";
		x->log_fd = exec_log(se, k);
		if (x->log_fd >= 0 && write_all(x->log_fd, note, sizeof note - 1) < 0)
			closep(&x->log_fd);
	}
	se->running++;
	se->changes++;
	se->last_active = now_s(se);
	se->conns[i]->exec = (long)k;
	pipes_watch(se, k, true);
	exec_started_line(se, k, rq->argv);
	if (x->stream) {
		conn_json(se, i, json_pack("{s:I}", "exec", (json_int_t)(k + 1)));
		conn_flush(se, i);
	}
	return true;
}

static void on_request_json(struct session *se, long i, json_t *req);

/* A whole request line on connection i. */
static void on_request(struct session *se, long i, const char *line, size_t len)
{
	json_error_t je;
	json_t *req = json_loadb(line, len, JSON_ALLOW_NUL, &je);
	if (!req) {
		_cleanup_free_ char *w = xasprintf("a request is one line of JSON {\"op\": \"exec\" or \"end\", ...}; this one is not (column %d: %s)",
						   je.column, je.text);
		return conn_refuse(se, i, 400, w);
	}
	struct conn *c = se->conns[i];
	if (session_live(se) && files_op(json_string_value(json_object_get(req, "op")))) {
		/* a file's: the connection is the files' now, with what came after the line */
		size_t used = (size_t)(line - c->in) + len + 1;
		epoll_ctl(se->h.u->ep, EPOLL_CTL_DEL, c->fd, NULL);
		se->last_active = now_s(se);
		files_take(se->files, steal_fd(&c->fd), req, c->in + used, c->in_len - used);
		conn_close(se, i);
	} else {
		on_request_json(se, i, req);
	}
	json_decref(req);
}

static void on_request_json(struct session *se, long i, json_t *req)
{
	const char *op = json_string_value(json_object_get(req, "op"));
	if (!json_is_object(req) || !op)
		return conn_refuse(se, i, 400, "a request is one line of JSON {\"op\": \"exec\" or \"end\", ...}");
	if (!se->open || se->ended)
		return conn_refuse(se, i, 409, "the session is ending; it takes no more commands");
	if (!strcmp(op, "end")) {
		se->ended = true;
		se->ended_at = now_s(se);
		se->changes++;
		display_line(se->h.d, "■ session %s: ended by its owner", se->h.s->id);
		conn_json(se, i, json_pack("{s:b}", "ended", 1));
		se->conns[i]->closing = true;
		return conn_flush(se, i);
	}
	if (strcmp(op, "exec"))
		return conn_refuse(se, i, 400, "op must be \"exec\" or \"end\"");
	struct exec_req rq;
	const char *why;
	if (session_parse_exec(req, &rq, &why) < 0)
		return conn_refuse(se, i, 400, why);
	if (rq.tty && !se->h.u->drv->exec_tty) {
		exec_req_free(&rq);
		return conn_refuse(se, i, 400, "tty: this run's cell (a VM) cannot give an exec a terminal; leave out -t");
	}
	se->conns[i]->keep = rq.keep;
	if (se->running >= SESSION_EXECS_MAX) {
		exec_req_free(&rq);
		_cleanup_free_ char *w = xasprintf("%d execs already run in this session at once; wait for one to end", SESSION_EXECS_MAX);
		return conn_refuse(se, i, 429, w);
	}
	if (!exec_start(se, i, &rq)) {
		int e = errno;
		_cleanup_free_ char *w = e == EAGAIN ? xstrdup("the cell's executor is not taking commands now (stopped, or "
							       "behind on earlier ones); try again, or end the session")
				      : e == E2BIG || e == EMSGSIZE ? xstrdup("the command, its environment and working "
								      "directory are too large to send to the cell")
				      : xasprintf("warren could not start the command: %s", strerror(e));
		conn_refuse(se, i, e == E2BIG || e == EMSGSIZE ? 413 : e == EAGAIN ? 503 : 500, w);
	}
	exec_req_free(&rq);
}

static void on_conn(struct session *se, long i, uint32_t events)
{
	struct conn *c = se->conns[i];
	if (!c)
		return;
	if (events & EPOLLOUT)
		conn_flush(se, i);
	if (!se->conns[i] || !(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	char buf[65536];
	ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(se, i);  /* the caller is gone */
		return;
	}
	if (c->closing || (c->exec >= 0 && !c->keep))
		return;  /* one request a connection (what follows is read and dropped), unless keep-alive */
	if (c->in_len + (size_t)n > SESSION_REQ_MAX) {
		_cleanup_free_ char *w = xasprintf("the request is over %d bytes (its stdin included)", SESSION_REQ_MAX);
		return conn_refuse(se, i, 413, w);
	}
	c->in = xrealloc(c->in, c->in_len + (size_t)n + 1);
	memcpy(c->in + c->in_len, buf, (size_t)n);
	c->in_len += (size_t)n;
	conn_next(se, i);
}

/* The next whole request line on connection i, once it waits for no exec; then it is taken
 * out of what was read (keep-alive: what came after it waits for its turn). */
static void conn_next(struct session *se, long i)
{
	struct conn *c = se->conns[i];
	char *nl = c && se->open && c->exec < 0 && !c->closing && c->in_len ? memchr(c->in, '\n', c->in_len) : NULL;
	if (!nl)
		return;
	size_t len = (size_t)(nl - c->in);
	on_request(se, i, c->in, len);
	if (!(c = se->conns[i]))
		return;  /* (closed, or the files' now) */
	c->in_len -= len + 1;
	memmove(c->in, c->in + len + 1, c->in_len);
	if (!c->in_len) {
		/* (done with: a caller whose exec runs long holds no copy of its request) */
		free(c->in);
		c->in = NULL;
	}
}

/* ---- the session ---- */

struct session *session_new(const struct job *job, const struct session_host *h)
{
	struct session *se = xcalloc(1, sizeof *se);
	se->h = *h;
	se->idle_ms = job->session_idle_ms;
	se->max_ms = job->session_max_ms;
	se->lfd = -1;
	se->files = files_new(h);
	return se;
}

/* Bind fd to <rundir>/SESSION_SOCK and listen, mode 0600, never reachable with another: bound
 * in a directory of its own (0700), moved into place once it listens with its mode set. */
static int bind_private(int fd, int rundir_fd)
{
#define SOCK_DIR ".session.sock.d"
	static const char tmp[] = SOCK_DIR, sock[] = SOCK_DIR "/s";
#undef SOCK_DIR
	unlinkat(rundir_fd, SESSION_SOCK, 0);
	unlinkat(rundir_fd, sock, 0);
	unlinkat(rundir_fd, tmp, AT_REMOVEDIR);
	if (mkdirat(rundir_fd, tmp, 0700) < 0)
		return -1;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	/* through the run directory's descriptor: its path may be too long for a socket's */
	snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/%s", rundir_fd, sock);
	int r = bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 64) < 0 ||
			fchmodat(rundir_fd, sock, 0600, 0) < 0 || renameat(rundir_fd, sock, rundir_fd, SESSION_SOCK) < 0
		? -1 : 0;
	int e = errno;
	unlinkat(rundir_fd, sock, 0);
	unlinkat(rundir_fd, tmp, AT_REMOVEDIR);
	errno = e;
	return r;
}

int session_open(struct session *se, struct error *err)
{
	se->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (se->lfd < 0)
		return error_set(err, errno, "cannot make the session's socket");
	if (bind_private(se->lfd, se->h.s->rundir_fd) < 0) {
		int e = errno;
		closep(&se->lfd);
		return error_set(err, e, "cannot listen on the session's socket %s/%s", se->h.s->rundir, SESSION_SOCK);
	}
	sup_watch_fd(se->h.u, se->lfd, EV_SESSION + TAG_LISTEN);
	se->open = true;
	se->opened_at = se->last_active = now_s(se);
	se->changes++;
	char i[32], m[32];
	display_line(se->h.d, "● session %s ready (idle %s, max %s): warren exec %s -- COMMAND", se->h.s->id,
		     format_duration_ms(i, sizeof i, se->idle_ms), format_duration_ms(m, sizeof m, se->max_ms), se->h.s->id);
	return 0;
}

bool session_live(const struct session *se)
{
	return se->open && !se->ended;
}

void session_event(struct session *se, uint32_t tag, uint32_t events)
{
	tag -= EV_SESSION;
	if (tag >= EV_FILES_BASE) {
		files_event(se->files, tag - EV_FILES_BASE, events);
	} else if (tag == TAG_LISTEN) {
		on_accept(se);
	} else if (tag >= TAG_PIPE) {
		size_t k = (tag - TAG_PIPE) / 2;
		if (k < se->n_x && se->x[k]->pipe[(tag - TAG_PIPE) % 2] >= 0)
			pipe_read(se, k, (int)((tag - TAG_PIPE) % 2));
	} else if (tag >= TAG_CONN && tag - TAG_CONN < SESSION_CONNS_MAX) {
		on_conn(se, (long)(tag - TAG_CONN), events);
	}
}

/* Why exec x, which a stop ended (exec_stop), ended: its limit, or its caller's going. */
static char *stop_cause(const struct session *se, const struct xec *x)
{
	char v[32], at[32], g[32];
	format_duration_ms(v, sizeof v, x->timeout_ms);
	format_seconds(at, sizeof at, x->caller_gone ? x->gone_at : x->limit_at);
	format_duration_ms(g, sizeof g, se->h.s->limits.grace_ms);
	_cleanup_free_ char *then = x->kill_sent ? xasprintf(", then SIGKILL after %s", g) : xstrdup("");
	if (x->caller_gone)
		return xasprintf("its caller went away at %s (its connection closed); sent SIGTERM to its process tree%s", at, then);
	return xasprintf("exec time limit %s reached at %s; sent SIGTERM to its process tree%s", v, at, then);
}

bool session_ctl(struct session *se, const struct exec_hdr *h)
{
	if (files_ctl(se->files, h))
		return true;
	if (!(h->task & EXEC_TASK_BIT))
		return false;
	size_t k = h->task & ~EXEC_TASK_BIT;
	if (k >= se->n_x)
		return true;
	struct xec *x = se->x[k];
	if (h->type == EXEC_STARTED) {
		x->pid = h->a;
		return true;
	}
	if ((h->type != EXEC_EXITED && h->type != EXEC_FAILED) || x->state != XS_RUNNING)
		return true;
	int st = h->type == EXEC_EXITED ? h->a : (125 << 8);
	const char *why = NULL;
	x->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	x->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	if (x->term_sent) {
		x->exit_code = x->caller_gone ? EXIT_GONE : 124;
		exec_finish(se, k, x->caller_gone ? XS_GONE : XS_LIMIT, stop_cause(se, x));
	} else if (WIFSIGNALED(st) && sup_stopping(se->h.u, &why, NULL) && why) {
		/* the signal the run's stop sent it (warren kill, a limit of the cell's): the session's
		 * end cut it, as if it had still run when the session closed */
		exec_finish(se, k, XS_INTERRUPTED, xstrdup(why));
	} else {
		exec_finish(se, k, st == 0 ? XS_OK : XS_FAILED, NULL);
	}
	return true;
}

static void exec_signal(struct session *se, size_t k, int sig)
{
	sup_signal_job(se->h.u, SIGCONT);  /* (the executor may be stopped: runner.c's signal_task) */
	struct exec_hdr h = { .type = EXEC_SIGNAL, .task = EXEC_TASK_BIT | (uint32_t)k, .a = sig };
	ssize_t w = send(se->h.ctl, &h, sizeof h, MSG_NOSIGNAL);
	(void)w;
}

/* Ended by its owner: the services are stopped within the grace and the executor leaves. One
 * that does not (an exec left it stopped: kill -STOP $PPID) would hold the run and its cell
 * forever, its max no longer applied: past twice the grace and SESSION_END_SLACK_S, the cell
 * is stopped, with that cause. */
static void session_end_due(struct session *se, double t)
{
	double grace = (double)se->h.s->limits.grace_ms / 1000;
	if (se->end_forced || !se->ended_at || t - se->ended_at < 2 * grace + SESSION_END_SLACK_S ||
	    sup_stopping(se->h.u, NULL, NULL))
		return;
	se->end_forced = true;
	char v[32];
	format_seconds(v, sizeof v, t - se->ended_at);
	sup_stop(se->h.u, RUN_LIMIT, "session-end", v, SIGTERM,
		 xasprintf("the session was ended and its cell had not ended %s later (a process of the cell kept "
			   "its executor stopped?)", v));
}

/* Stop exec k at t, as its time limit does: SIGTERM to its whole tree (its session through the
 * executor, every process of its group); exec_limit_tick sends SIGKILL after the run's grace. */
static void exec_stop(struct session *se, size_t k, double t)
{
	struct xec *x = se->x[k];
	x->term_sent = true;
	x->term_at = t;
	exec_signal(se, k, SIGTERM);
	cgroup_exec_signal(&x->cg, SIGTERM);
}

/* Exec k's time limit at t: its stop when it is reached; SIGKILL after the run's grace of a
 * stop (the limit's, or its caller's going), to its group even when the exec itself ended
 * (what outlived the SIGTERM). */
static void exec_limit_tick(struct session *se, size_t k, double t)
{
	struct xec *x = se->x[k];
	bool running = x->state == XS_RUNNING;
	if (x->kill_sent || (!running && !x->term_sent))
		return;
	if (!x->term_sent && x->timeout_ms && (t - x->t0) * 1000 >= (double)x->timeout_ms) {
		x->limit_at = t - x->t0;
		exec_stop(se, k, t);
	} else if (x->term_sent && (t - x->term_at) * 1000 >= (double)se->h.s->limits.grace_ms) {
		x->kill_sent = true;
		if (running)
			exec_signal(se, k, SIGKILL);
		cgroup_exec_kill(&x->cg);
	}
}

/* The groups of ended execs that a process held (a server started in the background), tried
 * again once a second: removed once empty. */
static void groups_tidy(struct session *se, double t)
{
	if (!se->groups_left || t - se->groups_tried_at < 1)
		return;
	se->groups_tried_at = t;
	for (size_t k = 0; k < se->n_x && se->groups_left; k++) {
		struct xec *x = se->x[k];
		if (x->state != XS_RUNNING && x->cg.dir && cgroup_exec_remove(&x->cg))
			se->groups_left--;
	}
}

void session_tick(struct session *se)
{
	if (!se->open)
		return;
	double t = now_s(se);
	files_tick(se->files);
	if (se->ended) {
		session_end_due(se, t);
		return;
	}
	for (size_t k = 0; k < se->n_x; k++)
		exec_limit_tick(se, k, t);
	groups_tidy(se, t);
	char v[32];
	enum session_due due = session_due(t - se->opened_at, t - se->last_active, se->running, se->idle_ms, se->max_ms);
	if (due == SESSION_MAX) {
		format_duration_ms(v, sizeof v, se->max_ms);
		se->ended = true;
		sup_stop(se->h.u, RUN_LIMIT, "session-max", v, SIGTERM, xasprintf("session reached its maximum life %s", v));
	} else if (due == SESSION_IDLE) {
		format_duration_ms(v, sizeof v, se->idle_ms);
		se->ended = true;
		sup_stop(se->h.u, RUN_LIMIT, "session-idle", v, SIGTERM, xasprintf("session idle for %s", v));
	}
}

/* Exec k as a step of the record. */
static json_t *exec_json(const struct session *se, size_t k)
{
	const struct xec *x = se->x[k];
	char st[64];
	_cleanup_free_ char *name = xasprintf("exec %zu", k + 1);
	_cleanup_free_ char *log = xasprintf("log/%zu-exec-%zu.log", se->h.first_log + k + 1, k + 1);
	json_t *o = json_pack("{s:s,s:s,s:s,s:O}", "name", name, "kind", "exec", "status", XSTATE[x->state], "command",
			      x->command);
	json_object_set_new(o, "command_bytes", json_integer((json_int_t)x->command_bytes));
	json_object_set_new(o, "command_cut", json_boolean(x->command_cut));
	bool done = x->state != XS_RUNNING;
	json_object_set_new(o, "exit_code", done && x->state != XS_INTERRUPTED ? json_integer(x->exit_code) : json_null());
	json_object_set_new(o, "signal", x->signal ? json_string(sigabbrev_np(x->signal)) : json_null());
	json_object_set_new(o, "cause", x->cause ? json_string(x->cause) : json_null());
	json_object_set_new(o, "started_at", json_string(format_rfc3339(st, sizeof st, &x->started)));
	json_object_set_new(o, "duration_s", done ? json_real(x->duration) : json_null());
	json_object_set_new(o, "timeout_ms", x->timeout_ms ? json_integer((json_int_t)x->timeout_ms) : json_null());
	json_object_set_new(o, "tree", json_string(x->tree_cgroup ? "cgroup" : "session"));
	json_object_set_new(o, "log", json_string(log));
	return o;
}

size_t session_json(const struct session *se, json_t *steps, size_t last)
{
	size_t from = last && se->n_x > last ? se->n_x - last : 0, left_out = 0;
	for (size_t k = 0; k < se->n_x; k++) {
		if (k < from && se->x[k]->state != XS_RUNNING)
			left_out++;
		else
			json_array_append_new(steps, exec_json(se, k));
	}
	return left_out;
}

uint64_t session_changes(const struct session *se)
{
	return se->changes;
}

void session_close(struct session *se, const char *why)
{
	se->open = false;  /* (a kept connection's next request is not started now: refused below) */
	for (size_t k = 0; k < se->n_x; k++)
		if (se->x[k]->state == XS_RUNNING)
			exec_finish(se, k, XS_INTERRUPTED, xstrdup(why));
	for (long i = 0; i < SESSION_CONNS_MAX; i++)
		if (se->conns[i] && se->conns[i]->exec < 0 && !se->conns[i]->closing)
			conn_refuse(se, i, 409, why);
	files_close(se->files, why);
	for (long i = 0; i < SESSION_CONNS_MAX; i++)
		if (se->conns[i]) {
			/* one last try, then it is closed: the run is ending */
			conn_flush(se, i);
			conn_close(se, i);
		}
	for (size_t k = 0; k < se->n_x; k++)
		for (int j = 0; j < 2; j++)
			sup_unwatch_close(se->h.u, &se->x[k]->pipe[j]);
	if (se->lfd >= 0) {
		sup_unwatch_close(se->h.u, &se->lfd);
		unlinkat(se->h.s->rundir_fd, SESSION_SOCK, 0);
	}
}

void session_free(struct session *se)
{
	if (!se)
		return;
	for (size_t k = 0; k < se->n_x; k++) {
		struct xec *x = se->x[k];
		json_decref(x->command);
		cgroup_exec_free(&x->cg);
		closep(&x->pipe[0]);
		closep(&x->pipe[1]);
		closep(&x->log_fd);
		free(x->buf[0]);
		free(x->buf[1]);
		free(x->cause);
		free(x);
	}
	free(se->x);
	files_free(se->files);
	free(se);
}
