/* SPDX-License-Identifier: Apache-2.0 */
/* serve.c - the server's life: the state directory and its lock, the listeners, the event loop
 * that starts queued runs in free slots (each this binary's `job run`, a child that dies with
 * the server), reaps them, applies retention; and, at start, what a killed server left. */
#include "serve/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <netdb.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise/gc.h"
#include "supervise/supervise.h"
#include "util/fs.h"
#include "util/strv.h"

const double LAT_BOUNDS[LAT_BUCKETS] = { 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30 };

void server_wake(struct server *s)
{
	uint64_t one = 1;
	if (write(s->wake, &one, sizeof one) < 0) {
		/* the counter is full: the loop wakes anyway */
	}
}

char *server_file(struct server *s, const char *id, const char *suffix)
{
	return xasprintf("%s/%s%s", s->dir, id, suffix);
}

void server_forget_files(struct server *s, const char *id)
{
	static const char *const suffixes[] = { ".out", ".job.json", ".req.json" };
	for (size_t i = 0; i < 3; i++) {
		_cleanup_free_ char *n = xasprintf("%s%s", id, suffixes[i]);
		unlinkat(s->dir_fd, n, 0);
	}
}

long server_queue_pos(struct server *s, const char *id)
{
	long n = 1;
	for (struct srun *r = s->queue; r; r = r->next, n++)
		if (!strcmp(r->id, id))
			return n;
	return 0;
}

struct srun *server_find(struct server *s, const char *id, bool *queued)
{
	for (int q = 0; q < 2; q++)
		for (struct srun *r = q ? s->running : s->queue; r; r = r->next)
			if (!strcmp(r->id, id)) {
				*queued = !q;
				return r;
			}
	return NULL;
}

static void srun_free(struct srun *r)
{
	closep(&r->warm_fd);
	strv_free(r->argv);
	free(r);
}

void server_enqueue(struct server *s, const char *id, uid_t owner, char **argv, int64_t submitted_ms)
{
	struct srun *r = xcalloc(1, sizeof *r);
	memcpy(r->id, id, RUN_ID_LEN + 1);
	r->warm_fd = -1;
	r->owner = owner;
	r->argv = argv;
	r->submitted_ms = submitted_ms;
	struct srun **p = &s->queue;
	while (*p)
		p = &(*p)->next;
	*p = r;
	server_wake(s);
}

/* Unlink r from the list at *head. */
static void unlink_run(struct srun **head, struct srun *r)
{
	for (struct srun **p = head; *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			return;
		}
}

static void record_end(struct server *s, const char *id, const char *state, const char *limit, const char *cause,
		       const char *error)
{
	struct history_end e = { .state = state, .cause_limit = limit, .cause = cause, .error = error,
				 .ended_ms = history_now_ms(), .duration_s = -1, .if_live = true };
	_cleanup_error_ struct error err = { 0 };
	if (history_end(s->h, id, &e, &err) < 0)
		fprintf(stderr, "warren serve: %s\n", err.msg);
}

bool server_live(struct server *s, const char *id)
{
	bool q;
	if (server_find(s, id, &q))
		return true;
	_cleanup_close_ int dir = rundir_open(&s->sd, id, NULL);
	return dir >= 0 && rundir_is_live(dir);
}

int server_kill(struct server *s, const char *id, const char *why)
{
	bool queued;
	struct srun *r = server_find(s, id, &queued);
	if (r && queued) {
		unlink_run(&s->queue, r);
		_cleanup_free_ char *msg = xasprintf("killed while queued (%s); it never started", why);
		record_end(s, id, "interrupted", "kill", msg, NULL);
		server_note_end(s, id, "interrupted", 125, NULL);
		_cleanup_free_ char *req = server_file(s, id, ".req.json");
		unlink(req);
		srun_free(r);
		return 0;
	}
	pid_t pid = r ? r->pid : 0;
	if (!pid) {
		_cleanup_close_ int dir = rundir_open(&s->sd, id, NULL);
		if (dir < 0 || !rundir_is_live(dir))
			return -ENOENT;
		pid = rundir_pid(dir);
	}
	/* as `warren kill`: SIGTERM marked so that the supervisor names the cause */
	union sigval v = { .sival_int = WARREN_KILL_MAGIC };
	return pid > 0 && sigqueue(pid, SIGTERM, v) == 0 ? 0 : -ESRCH;
}

/* ---- starting and reaping runs ---- */

/* The child: dies with the server (PR_SET_PDEATHSIG; fork happens on the main thread, whose
 * end is the process's), its output in <serve>/<id>.out, then this binary's `job run`.
 * Only async-signal-safe calls between fork and exec: the server has threads. */
pid_t server_spawn(char **argv, int out, int keep, pid_t parent, const sigset_t *mask)
{
	int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nul < 0)
		return -1;
	/* vfork: the server's memory is not copied for a child that only makes system calls until
	 * its exec (a fork cost ~0.3 ms of the server's CPU, under its lock, per warm cell) */
	pid_t pid = vfork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)
			_exit(125);
		if (dup2(nul, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0 || (keep >= 0 && dup2(keep, 3) < 0))
			_exit(125);
		setsid();
		sigprocmask(SIG_UNBLOCK, mask, NULL);
		signal(SIGPIPE, SIG_DFL);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	int e = errno;
	close(nul);
	errno = e;
	return pid;
}

static void observe_latency(struct server *s, double secs)
{
	s->lat_count++;
	s->lat_sum += secs;
	for (int i = 0; i < LAT_BUCKETS; i++)
		if (secs <= LAT_BOUNDS[i])
			s->lat_le[i]++;
}

static void start_queued(struct server *s, const sigset_t *mask)
{
	while (s->queue && s->busy < s->slots) {
		struct srun *r = s->queue;
		s->queue = r->next;
		_cleanup_free_ char *outp = server_file(s, r->id, ".out");
		_cleanup_close_ int out = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		pid_t pid = out < 0 ? -1 : server_spawn(r->argv, out, -1, getpid(), mask);
		if (pid < 0) {
			_cleanup_free_ char *msg = xasprintf("warren serve could not start it: %s", strerror(errno));
			record_end(s, r->id, "error", NULL, NULL, msg);
			server_note_end(s, r->id, "error", 125, NULL);
			srun_free(r);
			continue;
		}
		r->pid = pid;
		r->next = s->running;
		s->running = r;
		s->busy++;
		/* the row turns "running" when the run's supervisor starts (its line, folded in by the
		 * next use of the history: run/history.h) */
		observe_latency(s, (double)(history_now_ms() - r->submitted_ms) / 1000.0);
	}
}

int server_write_job(struct server *s, const char *path, const char *text)
{
	return write_file_atomic_at(s->dir_fd, strrchr(path, '/') + 1, text, strlen(text), 0600);
}

/* The last line warren wrote to the run's console, for a run that ended without its row. */
char *server_console_error(struct server *s, const char *id)
{
	_cleanup_free_ char *p = server_file(s, id, ".out");
	_cleanup_free_ char *txt = read_file(p, NULL);
	if (!txt)
		return xstrdup("its supervisor ended without a record");
	char *last = NULL;
	for (char *save = NULL, *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (!strncmp(l, "warren: ", 8))
			last = l + 8;
	return xstrdup(last ? last : "its supervisor ended without a record");
}

void server_note_end(struct server *s, const char *id, const char *state, int exit_code, const char *start)
{
	struct run_end *e = xcalloc(1, sizeof *e);
	memcpy(e->id, id, RUN_ID_LEN + 1);
	snprintf(e->state, sizeof e->state, "%s", state ? state : "error");
	e->exit_code = exit_code;
	e->start = start;
	e->next = s->ends;
	s->ends = e;
	/* the last 64 are enough for the waiters: they wait for runs that are live */
	int n = 0;
	for (struct run_end *x = s->ends; x; x = x->next)
		if (++n == 64) {
			for (struct run_end *y = x->next, *nx; y; y = nx) {
				nx = y->next;
				free(y);
			}
			x->next = NULL;
			break;
		}
	/* its waiters only: with many runs in flight, not every waiting connection */
	for (struct end_waiter *w = s->waiters; w; w = w->next)
		if (!strcmp(w->id, id)) {
			w->end = *e;
			w->have_end = true;
			pthread_cond_signal(&w->cond);
		}
}

/* Wake every waiting connection (the server stops). Under mu. */
static void wake_waiters(struct server *s)
{
	for (struct end_waiter *w = s->waiters; w; w = w->next)
		pthread_cond_signal(&w->cond);
}

/* The end its supervisor sent on end_fd ({"exit_code", "status", "start"}), or NULL when it
 * ended without one (the server's loop then learns how it ended). */
static json_t *read_end(int end_fd)
{
	struct pollfd p = { .fd = end_fd, .events = POLLIN };
	int n;
	while ((n = poll(&p, 1, -1)) < 0 && errno == EINTR)
		;
	char buf[4096];
	ssize_t len = n == 1 ? recv(end_fd, buf, sizeof buf, MSG_DONTWAIT) : -1;
	json_t *m = len > 0 ? json_loadb(buf, (size_t)len, 0, NULL) : NULL;
	if (m && (!json_is_integer(json_object_get(m, "exit_code")) || !json_is_string(json_object_get(m, "status")))) {
		json_decref(m);
		m = NULL;
	}
	return m;
}

/* A run's end into the answer out of POST ?wait=1 (start: NULL when not said). */
static void answer_end(json_t *out, const char *state, int exit_code, const char *start)
{
	json_object_set_new(out, "state", json_string(state ? state : "error"));
	json_object_set_new(out, "exit_code", json_integer(exit_code));
	if (start)
		json_object_set_new(out, "start", json_string(start));
	json_object_set_new(out, "queue_position", json_null());
}

void server_wait_end(struct server *s, json_t *out, int end_fd)
{
	const char *id = json_string_value(json_object_get(out, "id"));
	if (end_fd >= 0) {
		/* a warm run: its end straight from its supervisor, one wake-up instead of the
		 * server's loop's and then this thread's */
		json_t *m = read_end(end_fd);
		close(end_fd);
		if (m) {
			/* marked ended before the answer goes: a GET that follows it waits for the
			 * record (server_settle), as after the loop's note of the end */
			pthread_mutex_lock(&s->mu);
			bool q;
			struct srun *r = server_find(s, id, &q);
			if (r && !q)
				warm_note_end(s, r);
			pthread_mutex_unlock(&s->mu);
			answer_end(out, json_string_value(json_object_get(m, "status")),
				   (int)json_integer_value(json_object_get(m, "exit_code")),
				   json_string_value(json_object_get(m, "start")));
			json_decref(m);
			return;
		}
	}
	struct end_waiter me = { .id = id };
	pthread_cond_init(&me.cond, NULL);
	pthread_mutex_lock(&s->mu);
	me.next = s->waiters;
	s->waiters = &me;
	for (;;) {
		struct run_end *e = me.have_end ? &me.end : s->ends;
		while (e && strcmp(e->id, id))
			e = e->next;
		if (e) {
			answer_end(out, e->state, e->exit_code, e->start);
			break;
		}
		if (s->stopped)
			break;  /* the server stops: a run still queued stays so, as the answer says */
		pthread_cond_wait(&me.cond, &s->mu);
	}
	for (struct end_waiter **p = &s->waiters; *p; p = &(*p)->next)
		if (*p == &me) {
			*p = me.next;
			break;
		}
	pthread_mutex_unlock(&s->mu);
	pthread_cond_destroy(&me.cond);
}

void server_settle(struct server *s, const char *id, bool row_ended)
{
	/* bounded: a supervisor stuck after its row (reclaiming) does not hang the API */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 10;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		bool q;
		struct srun *r = server_find(s, id, &q);
		if (!r || q || !(r->ended || row_ended))
			break;
		if (pthread_cond_timedwait(&s->ended, &s->mu, &until) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&s->mu);
}

static void reaped(struct server *s, struct srun *r, int status)
{
	unlink_run(&s->running, r);
	s->busy--;
	if (r->warm_fd >= 0) {
		epoll_ctl(s->ep, EPOLL_CTL_DEL, r->warm_fd, NULL);
		closep(&r->warm_fd);
	}
	_cleanup_error_ struct error err = { 0 };
	json_t *row = history_get(s->h, r->id, &err);
	const char *st = json_string_value(json_object_get(row, "state"));
	if (!r->ended)
		server_note_end(s, r->id, st && strcmp(st, "running") ? st : "error",
				(int)json_integer_value(json_object_get(row, "exit_code")),
				!r->warm ? NULL : r->cold ? "cold" : "warm");
	pthread_cond_broadcast(&s->ended);
	if (!st || !strcmp(st, "running") || !strcmp(st, "queued")) {
		/* it ended without writing its end: warren failed before or while running it */
		_cleanup_free_ char *msg = server_console_error(s, r->id);
		_cleanup_free_ char *full = WIFSIGNALED(status)
			? xasprintf("its supervisor was killed by signal %d (%s)", WTERMSIG(status), msg)
			: xstrdup(msg);
		record_end(s, r->id, "error", NULL, NULL, full);
	}
	json_decref(row);
	_cleanup_free_ char *req = server_file(s, r->id, ".req.json");
	unlink(req);
	srun_free(r);
}

static void reap(struct server *s)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		bool ours = false;
		for (struct srun *r = s->running; r; r = r->next)
			if (r->pid == pid) {
				reaped(s, r, status);
				ours = true;
				break;
			}
		if (!ours)
			warm_reaped(s, pid);
	}
}

/* ---- retention ---- */

static void retention(struct server *s)
{
	if (!s->keep_runs && !s->keep_for_ms)
		return;
	_cleanup_error_ struct error err = { 0 };
	char **ids = history_retain(s->h, &s->sd, s->keep_runs, s->keep_for_ms, &err);
	if (!ids) {
		fprintf(stderr, "warren serve: %s\n", err.msg);
		return;
	}
	for (char **id = ids; *id; id++)
		server_forget_files(s, *id);
	history_ids_free(ids);
}

/* ---- what a killed server left ---- */

/* Called at start only, before any listener's thread: the one gc (supervise/gc.c) runs in a
 * child of its own, so that whatever a dead run left that trips it (a half-made run directory
 * of a server killed at any moment) cannot take the server down with it. */
void server_gc(struct server *s, char **ids)
{
	if (!ids[0])
		return;
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid == 0) {
		struct gc_counts n;
		int r = gc_runs(&s->sd, ids, &(struct gc_opts){ .out = stdout }, &n);
		fflush(stdout);
		_exit(r < 0 ? 1 : 0);
	}
	int st = 0;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (pid < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fprintf(stderr, "warren serve: the gc of the runs the last server left did not finish cleanly%s; run 'warren gc --state %s'\n",
			pid > 0 && WIFSIGNALED(st) ? " (it was killed by a signal)" : "", s->sd.path);
}

/* The supervisors of a killed server die with it (PR_SET_PDEATHSIG), but one inside a long
 * system call (a namespace or cgroup made under load) holds its run's lock until that call
 * returns: how long the next server waits for them. */
#define RECOVER_WAIT_MS 5000

/* Is the run of directory dir no longer live, or within ms? */
static bool gone_within(int dir, int ms)
{
	for (int waited = 0; rundir_is_live(dir); waited += 20) {
		if (waited >= ms)
			return false;
		usleep(20000);
	}
	return true;
}

/* Runs the last server left running: interrupted, reclaimed with gc. */
static int recover_running(struct server *s, struct error *err)
{
	char **ids = history_ids_in_state(s->h, "running", "serve", s->sd.path, err);
	char **queued = ids ? history_ids_in_state(s->h, "queued", "serve", s->sd.path, err) : NULL;
	if (!queued) {
		history_ids_free(ids);
		return -EIO;
	}
	/* a queued row whose run directory exists was started (killed before its row said so) */
	size_t k = 0;
	while (ids[k])
		k++;
	for (char **q = queued; *q; q++) {
		_cleanup_close_ int dir = rundir_open(&s->sd, *q, NULL);
		if (dir >= 0) {
			ids = xrealloc(ids, (k + 2) * sizeof *ids);
			ids[k++] = xstrdup(*q);
			ids[k] = NULL;
		}
	}
	history_ids_free(queued);
	char **dead = xcalloc(1, sizeof *dead);
	size_t n = 0;
	for (char **id = ids; *id; id++) {
		_cleanup_close_ int dir = rundir_open(&s->sd, *id, NULL);
		if (dir >= 0 && !gone_within(dir, RECOVER_WAIT_MS)) {
			fprintf(stderr, "warren serve: %s is still live (its supervisor outlived the last server); leaving it alone\n", *id);
			continue;
		}
		record_end(s, *id, "interrupted", "serve",
			   "warren serve stopped while it ran (killed or crashed); reclaimed when the server started again", NULL);
		_cleanup_free_ char *req = server_file(s, *id, ".req.json");
		unlink(req);
		if (dir >= 0) {
			dead = xrealloc(dead, (n + 2) * sizeof *dead);
			dead[n++] = *id;
			dead[n] = NULL;
		}
	}
	if (n)
		fprintf(stderr, "warren serve: %zu run%s of the last server interrupted; reclaiming them\n", n, n == 1 ? "" : "s");
	server_gc(s, dead);
	free(dead);
	history_ids_free(ids);
	return 0;
}

/* Runs the last server had queued: queued again, in their order, from their requests. */
static int recover_queued(struct server *s, struct error *err)
{
	char **ids = history_ids_in_state(s->h, "queued", "serve", s->sd.path, err);
	if (!ids)
		return -EIO;
	for (char **id = ids; *id; id++) {
		/* one whose directory exists was started, by a supervisor still live (recover_running
		 * left it alone): not started twice */
		_cleanup_close_ int dir = rundir_open(&s->sd, *id, NULL);
		if (dir >= 0)
			continue;
		_cleanup_free_ char *p = server_file(s, *id, ".req.json");
		json_t *req = json_load_file(p, 0, NULL);
		json_t *av = json_object_get(req, "argv");
		if (!json_is_array(av) || !json_array_size(av)) {
			record_end(s, *id, "interrupted", "serve", "warren serve stopped before it started and its request is gone", NULL);
			json_decref(req);
			continue;
		}
		char **argv = strv_from_json(av, false);
		server_enqueue(s, *id, (uid_t)json_integer_value(json_object_get(req, "owner")), argv,
			       json_integer_value(json_object_get(req, "submitted_ms")));
		json_decref(req);
	}
	history_ids_free(ids);
	return 0;
}

/* ---- listeners ---- */

static int listen_unix(const char *path, bool open_to_all, struct error *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sa.sun_path)
		return error_set(err, 0, "--listen unix:%s: the path is longer than %zu bytes; use a shorter one", path, sizeof sa.sun_path - 1);
	strcpy(sa.sun_path, path);
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, errno, "cannot create a unix socket");
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return error_set(err, 0, "--listen unix:%s: it exists and is not a socket; remove it or choose another path", path);
		if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
			return error_set(err, 0, "--listen unix:%s: another warren serve listens there; stop it first", path);
		unlink(path);
		closep(&fd);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	}
	mode_t old = umask(open_to_all ? 0 : 0077);
	int r = bind(fd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	/* the longest queue the kernel allows (net.core.somaxconn): a burst of another user's
	 * connections, refused one by one as they are taken (conns.c), leaves room for root's */
	if (r < 0 || listen(fd, SOMAXCONN) < 0)
		return error_set(err, errno, "--listen unix:%s: cannot listen there", path);
	return steal_fd(&fd);
}

static int listen_tcp(const char *spec, struct error *err)
{
	_cleanup_free_ char *host = xstrdup(spec);
	char *colon = strrchr(host, ':');
	if (!colon || !colon[1])
		return error_set(err, 0, "--listen tcp:%s: give tcp:ADDRESS:PORT, e.g. tcp:127.0.0.1:8280", spec);
	*colon = '\0';
	const char *port = colon + 1;
	char *h = host;
	if (*h == '[' && h[strlen(h) - 1] == ']') {
		h[strlen(h) - 1] = '\0';
		h++;
	}
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *ai = NULL;
	int g = getaddrinfo(h, port, &hints, &ai);
	if (g)
		return error_set(err, 0, "--listen tcp:%s: %s; give a numeric address and port, e.g. tcp:127.0.0.1:8280", spec, gai_strerror(g));
	_cleanup_close_ int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	int r = fd < 0 ? -1 : bind(fd, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (r < 0 || listen(fd, SOMAXCONN) < 0)
		return error_set(err, errno, "--listen tcp:%s: cannot listen there", spec);
	return steal_fd(&fd);
}

/* Listen on spec (unix:PATH or tcp:ADDR:PORT); own: a unix socket of root's and the server's
 * user's alone, even for a root server (whose other unix sockets are open to all). */
static int start_listener(struct server *s, const char *spec, bool own, struct error *err)
{
	if (s->ndaemons >= 16)
		return error_set(err, 0, "--listen: at most 16 listeners");
	struct listener *l = &s->listeners[s->ndaemons];
	int fd;
	l->s = s;
	if (!strncmp(spec, "unix:", 5)) {
		fd = listen_unix(spec + 5, s->uid == 0 && !own, err);
		if (fd >= 0)
			s->sockets[s->nsockets++] = xstrdup(spec + 5);
	} else if (!strncmp(spec, "tcp:", 4)) {
		if (!s->token)
			return error_set(err, 0, "--listen %s: TCP needs --token-file FILE (a secret clients send as 'Authorization: Bearer ...', the file mode 0600)", spec);
		l->tcp = true;
		fd = listen_tcp(spec + 4, err);
	} else {
		return error_set(err, 0, "--listen '%s': give unix:PATH or tcp:ADDRESS:PORT", spec);
	}
	if (fd < 0)
		return fd;
	/* a unix socket's connections are counted by user, a TCP one's by source until the token
	 * comes (conns.c). The timeout is of silence before a request's head (whose whole time
	 * conns_sweep bounds): conns_head_in lengthens it once the head is in */
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD;
	s->daemons[s->ndaemons] = mhd.start_daemon(flags, 0, NULL, NULL, api_handle, l, MHD_OPTION_LISTEN_SOCKET, fd,
						   MHD_OPTION_NOTIFY_COMPLETED, api_completed, l,
						   MHD_OPTION_NOTIFY_CONNECTION, conns_notify, l,
						   MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_LIB_MAX,
						   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_HEAD_S, MHD_OPTION_END);
	if (!s->daemons[s->ndaemons]) {
		close(fd);
		return error_set(err, 0, "--listen %s: libmicrohttpd could not start on it", spec);
	}
	s->ndaemons++;
	return 0;
}

/* A root server's sockets are open to every user, whose connections the kernel queues before
 * the server counts them (conns.c): a user who connects faster than the server refuses keeps a
 * socket's queue full, and root's connect fails (EAGAIN). <state>/serve/own.sock, in the 0700
 * serve/, is root's alone: no other user reaches its queue (warren submit, logs --via and kill
 * --via take it when they may). Its spec, or NULL (a warning: the server goes on without). */
static char *start_own_listener(struct server *s)
{
	char *spec = xasprintf("unix:%s/own.sock", s->dir);
	_cleanup_error_ struct error err = { 0 };
	if (start_listener(s, spec, true, &err) == 0)
		return spec;
	fprintf(stderr, "warren serve: no socket of root's own (%s); root's requests share the others' queue\n", err.msg);
	free(spec);
	return NULL;
}

static int read_token(struct server *s, const char *file, struct error *err)
{
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return error_set(err, errno, "--token-file %s: cannot read it", file);
	if (st.st_mode & 077)
		return error_set(err, 0, "--token-file %s: its mode %04o lets others read it; chmod 600 %s", file,
				 (unsigned)(st.st_mode & 07777), file);
	if (st.st_uid != geteuid())
		return error_set(err, 0, "--token-file %s: it belongs to uid %u, not to the server's user %u; chown it", file,
				 (unsigned)st.st_uid, (unsigned)geteuid());
	_cleanup_free_ char *self = xasprintf("/proc/self/fd/%d", fd); /* the file checked, not the path again */
	char *t = read_file(self, NULL);
	if (!t)
		return error_set(err, errno, "--token-file %s: cannot read it", file);
	t[strcspn(t, "\r\n")] = '\0';
	if (strlen(t) < 16) {
		free(t);
		return error_set(err, 0, "--token-file %s: the token is shorter than 16 characters; use a long random one (e.g. head -c 32 /dev/urandom | base64)", file);
	}
	s->token = t;
	s->token_len = strlen(t);
	return 0;
}

/* ---- the server ---- */

/* --warm-net MODE: none, nat, nat,lan, allow or lan,allow (the runs bring their lists: the
 * cells' is empty), as a job's network: into *job (NULL: none), the mode into s. */
static int warm_net(struct server *s, const char *mode, char **job, struct error *err)
{
	*job = NULL;
	if (!mode || !strcmp(mode, "none"))
		return 0;
	bool allow = !strcmp(mode, "allow") || !strcmp(mode, "lan,allow");
	if (!allow && strcmp(mode, "nat") && strcmp(mode, "nat,lan"))
		return error_set(err, 0, "--warm-net: '%s' is not a warm cells' network; give none, nat, nat,lan, allow or lan,allow (a run's allow=LIST and ports are its own, set at its claim)", mode);
	*job = allow ? xasprintf("%s=", mode) : xstrdup(mode);
	struct net_opts n = { 0 };
	if (net_parse_mode(&n, *job, err) < 0)
		return -EINVAL;
	if (net_mode_allowed(n.mode, 0, geteuid() != 0, false, err) < 0) {
		error_prefix(err, "--warm-net %s", mode);
		return -EPERM;
	}
	s->warm_net = n.mode;
	s->warm_lan = n.lan;
	return 0;
}

/* --warm N: the shape of the pool's cells, a job file of the server's (a command's job, one
 * step) for --warm-work DIR, --warm-image NAME and --warm-net MODE. */
static int warm_shape(struct server *s, const struct serve_opts *o, struct error *err)
{
	if (!o->warm_work || o->warm_work[0] != '/')
		return error_set(err, 0, "--warm %ld: give the warm cells' worktree as --warm-work DIR (an absolute path); a run takes a warm cell when its worktree is that one", o->warm);
	struct stat st;
	if (stat(o->warm_work, &st) < 0 || !S_ISDIR(st.st_mode))
		return error_set(err, errno ? errno : ENOTDIR, "--warm-work %s: name an existing directory", o->warm_work);
	s->warm_n = o->warm;
	s->warm_work = xstrdup(o->warm_work);
	s->warm_image = o->warm_image ? xstrdup(o->warm_image) : NULL;
	_cleanup_free_ char *net = NULL;
	if (warm_net(s, o->warm_net, &net, err) < 0)
		return -EINVAL;
	json_t *j = json_pack("{s:[{s:s,s:s}]}", "steps", "name", "main", "run", "exec true");
	if (s->warm_image)
		json_object_set_new(j, "image", json_string(s->warm_image));
	if (net)
		json_object_set_new(j, "network", json_string(net));
	_cleanup_free_ char *t = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (write_file_atomic_at(s->dir_fd, "warm.job.json", t, strlen(t), 0600) < 0)
		return error_set(err, errno, "cannot write %s/warm.job.json", s->dir);
	s->warm_job = server_file(s, "warm", ".job.json");
	return 0;
}

/* <state>/serve holds the jobs' files, whose env: may carry a secret (a deploy token): the
 * server's user's alone, the directory 0700 (also one an older warren or an admin made wider)
 * and each file in it 0600. */
static int serve_dir_private(struct server *s, struct error *err)
{
	struct stat st;
	if (fstat(s->dir_fd, &st) < 0)
		return error_set(err, errno, "cannot read %s", s->dir);
	if (st.st_uid != geteuid())
		return error_set(err, 0, "%s belongs to uid %u, not to the server's user %u; remove it or give --state",
				 s->dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if ((st.st_mode & 077) && fchmod(s->dir_fd, 0700) < 0)
		return error_set(err, errno, "cannot make %s private (chmod 0700)", s->dir);
	return 0;
}

static int server_open(struct server *s, const struct serve_opts *o, struct error *err)
{
	_cleanup_free_ char *state = statedir_default(o->state);
	if (statedir_open(&s->sd, state, true, err) < 0)
		return -EINVAL;
	s->dir = xasprintf("%s/serve", s->sd.path);
	if (mkdir(s->dir, 0700) < 0 && errno != EEXIST)
		return error_set(err, errno, "cannot create %s", s->dir);
	s->dir_fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir_fd < 0)
		return error_set(err, errno, "cannot open %s", s->dir);
	if (serve_dir_private(s, err) < 0)
		return -EPERM;
	/* one server per state directory: the lock is held as long as it lives */
	if (flock(s->dir_fd, LOCK_EX | LOCK_NB) < 0)
		return error_set(err, 0, "another warren serve runs on the state directory %s; stop it, or give --state", s->sd.path);
	s->db = history_path(s->sd.path, o->db);
	if (!s->db)
		return error_set(err, 0, "--db none: warren serve needs its history; give a path or leave --db out");
	if (history_open(&s->h, s->db, err) < 0 || history_open(&s->hr, s->db, err) < 0)
		return -EIO;
	s->uid = geteuid();
	s->slots = o->slots > 0 ? o->slots : sysconf(_SC_NPROCESSORS_ONLN);
	if (o->warm && warm_shape(s, o, err) < 0)
		return -EINVAL;
	s->keep_runs = o->keep_runs;
	s->keep_for_ms = (int64_t)o->keep_for_ms;
	s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake < 0)
		return error_set(err, errno, "cannot create an eventfd");
	if (o->token_file && read_token(s, o->token_file, err) < 0)
		return -EINVAL;
	return 0;
}

static void server_close(struct server *s)
{
	for (int i = 0; i < s->ndaemons; i++)
		mhd.stop_daemon(s->daemons[i]);
	conns_free(s);
	for (int i = 0; i < s->nsockets; i++) {
		unlink(s->sockets[i]);
		free(s->sockets[i]);
	}
	for (int q = 0; q < 2; q++)
		for (struct srun *r = q ? s->running : s->queue, *n; r; r = n) {
			n = r->next;
			srun_free(r);
		}
	history_close(s->h);
	history_close(s->hr);
	if (s->token)
		explicit_bzero(s->token, s->token_len);
	free(s->token);
	free(s->db);
	free(s->dir);
	closep(&s->dir_fd);
	closep(&s->wake);
	statedir_close(&s->sd);
	for (struct run_end *e = s->ends, *n; e; e = n) {
		n = e->next;
		free(e);
	}
	if (s->warm_job)
		unlink(s->warm_job);
	free(s->warm_job);
	free(s->warm_work);
	free(s->warm_image);
	pthread_cond_destroy(&s->ended);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->rmu);
}

/* What the server's loop waits on besides its warm cells' sockets (loop, drain). */
struct loop_fds {
	int sfd, tick, refill;
	unsigned ticks;
};

/* The loop's events (evs[0..n)): signals (true: one that stops the server), the retention's
 * tick, wake-ups, the refill's timer, warm cells' supervisors. Under mu. */
static bool on_events(struct server *s, struct loop_fds *l, const struct epoll_event *evs, int n)
{
	bool stop = false;
	for (int i = 0; i < n; i++) {
		uint64_t x;
		struct signalfd_siginfo si;
		if (evs[i].data.fd == l->sfd) {
			while (read(l->sfd, &si, sizeof si) == sizeof si)
				if (si.ssi_signo != SIGCHLD)
					stop = true;
			reap(s);
		} else if (evs[i].data.fd == l->tick) {
			if (read(l->tick, &x, sizeof x) > 0)
				conns_sweep(s);  /* heads out of time */
			if (++l->ticks % 5 == 0 && !s->stopping)
				retention(s);
		} else if (evs[i].data.fd == s->wake || evs[i].data.fd == l->refill) {
			if (read(evs[i].data.fd, &x, sizeof x) < 0) {
				/* the eventfd was read by an earlier event */
			}
		} else if (warm_read(s, evs[i].data.fd)) {
			/* a warm cell's supervisor spoke */
		}
		/* else: the event of a warm cell's socket that an earlier event of this batch
		 * closed (its supervisor reaped): its number may be another's by now (the
		 * listener's threads accept without the lock: a client's connection), and is
		 * not touched; before, a read(2) here took 8 bytes of a new request, which the
		 * server then answered "400 Request malformed" */
	}
	return stop;
}

/* SIGTERM/SIGINT: runs stop as with `warren kill` and write their records; queued ones stay
 * queued for the next server. The warm cells' supervisors are still heard: a taken one whose
 * run ended waits for the server's word before its record (else 30 s, for each). */
static void drain(struct server *s, struct loop_fds *l)
{
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	warm_discard_all(s);
	for (struct srun *r = s->running; r; r = r->next) {
		union sigval v = { .sival_int = WARREN_KILL_MAGIC };
		sigqueue(r->pid, SIGTERM, v);
	}
	pthread_mutex_unlock(&s->mu);
	while (1) {
		pthread_mutex_lock(&s->mu);
		reap(s);
		bool left = s->running != NULL || s->pool != NULL;
		pthread_mutex_unlock(&s->mu);
		if (!left)
			break;
		struct epoll_event evs[8];
		int n = epoll_wait(s->ep, evs, 8, 200);
		pthread_mutex_lock(&s->mu);
		on_events(s, l, evs, n > 0 ? n : 0);
		pthread_mutex_unlock(&s->mu);
	}
}

static void loop(struct server *s, int sfd, const sigset_t *mask)
{
	_cleanup_close_ int ep = epoll_create1(EPOLL_CLOEXEC);
	s->ep = ep;
	_cleanup_close_ int tick = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec its = { .it_interval = { 1, 0 }, .it_value = { 1, 0 } };
	timerfd_settime(tick, 0, &its, NULL);
	_cleanup_close_ int refill = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	s->refill_tfd = refill;
	struct loop_fds l = { .sfd = sfd, .tick = tick, .refill = refill };
	int fds[4] = { sfd, s->wake, tick, refill };
	for (int i = 0; i < 4; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };
		epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
	}
	for (bool stop = false; !stop;) {
		struct epoll_event evs[4];
		int n = epoll_wait(ep, evs, 4, -1);
		pthread_mutex_lock(&s->mu);
		stop = on_events(s, &l, evs, n > 0 ? n : 0);
		if (!stop) {
			start_queued(s, mask);
			warm_fill(s, mask);
		}
		pthread_mutex_unlock(&s->mu);
	}
	drain(s, &l);
	pthread_mutex_lock(&s->mu);
	s->stopped = true;  /* waiters of runs that did not end (queued ones) are answered */
	pthread_cond_broadcast(&s->ended);
	wake_waiters(s);
	pthread_mutex_unlock(&s->mu);
}

int serve_run(const struct serve_opts *o, struct error *err)
{
	struct server s = { .dir_fd = -1, .wake = -1, .ep = -1, .refill_tfd = -1, .sd = { .fd = -1, .runs = -1 } };
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.ended, NULL);
	pthread_mutex_init(&s.rmu, NULL);
	conns_init(&s);
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* blocked before any thread starts: the listeners' threads inherit it */
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	int r = mhd_load(err);
	if (r == 0)
		r = server_open(&s, o, err);
	if (r == 0)
		r = recover_running(&s, err);
	if (r == 0)
		r = recover_queued(&s, err);
	if (r == 0)
		warm_recover(&s);
	_cleanup_free_ char *dflt = xasprintf("unix:%s/serve.sock", s.sd.path ? s.sd.path : ".");
	for (size_t i = 0; r == 0 && i < (o->nlisten ? o->nlisten : 1); i++)
		r = start_listener(&s, o->nlisten ? o->listen[i] : dflt, false, err);
	_cleanup_free_ char *own = r == 0 && s.uid == 0 ? start_own_listener(&s) : NULL;
	_cleanup_close_ int sfd = r == 0 ? signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK) : -1;
	if (r == 0 && sfd < 0)
		r = error_set(err, errno, "cannot create a signalfd");
	if (r == 0) {
		fprintf(stderr, "warren serve: %ld slot%s, state %s, history %s, listening on", s.slots,
			s.slots == 1 ? "" : "s", s.sd.path, s.db);
		for (size_t i = 0; i < (o->nlisten ? o->nlisten : 1); i++)
			fprintf(stderr, " %s", o->nlisten ? o->listen[i] : dflt);
		if (own)
			fprintf(stderr, " (root's own: %s)", own);
		fputc('\n', stderr);
		loop(&s, sfd, &mask);
	}
	server_close(&s);
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
	return r < 0 ? r : 0;
}
