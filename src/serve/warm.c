/* SPDX-License-Identifier: Apache-2.0 */
/* warm.c - the warm pool of `warren serve --warm N`: cells made in advance for one shape (each
 * this binary's `job run --warm-fd 3`, a supervisor whose cell is made and whose init waits),
 * taken once by a submitted run that fits, a new one started behind it. A cell that does not
 * fit the run it was given (its image changed since) is given up by its supervisor, which
 * starts that run cold itself and says why. The pool holds nothing that outlives the server:
 * every supervisor dies with it (PR_SET_PDEATHSIG), every cell with its supervisor, and what
 * is left on disk (run directory, cgroup) is reclaimed by the next server (`warren gc`). */
#include "serve/internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/strv.h"

/* The argv of a warm cell's supervisor. */
static char **warm_argv(struct server *s, const char *id)
{
	const char *a[] = { "warren", "job", "run", s->warm_job, "--state", s->sd.path, "--db", s->db, "--run-id", id,
			    "--quiet", "--work", s->warm_work, "--warm-fd", "3", NULL };
	char **v = xcalloc(sizeof a / sizeof a[0], sizeof *v);
	for (size_t i = 0; a[i]; i++)
		v[i] = xstrdup(a[i]);
	return v;
}

/* Start one warm cell; under mu. */
static int warm_start(struct server *s, const sigset_t *mask)
{
	struct warm_cell *w = xcalloc(1, sizeof *w);
	int sp[2] = { -1, -1 };
	if (run_id_new(w->id) < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		free(w);
		return -errno;
	}
	/* its console, <id>.out, is also what the next server finds of it after a kill -9
	 * (warm_recover) */
	_cleanup_free_ char *outp = server_file(s, w->id, ".out");
	_cleanup_close_ int out = open(outp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	char **argv = warm_argv(s, w->id);
	w->pid = out < 0 ? -1 : server_spawn(argv, out, sp[1], getpid(), mask);
	strv_free(argv);
	close(sp[1]);
	if (w->pid < 0) {
		close(sp[0]);
		free(w);
		return -EIO;
	}
	w->fd = sp[0];
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = w->fd };
	epoll_ctl(s->ep, EPOLL_CTL_ADD, w->fd, &ev);
	w->next = s->pool;
	s->pool = w;
	s->pool_n++;
	return 0;
}

/* A cell is made behind a taken one once that run has told its end, or REFILL_DEFER_MS after
 * its take, whichever comes first: making a cell costs the CPU of a cold start, and made at
 * once it competes with the run that took one (on two cores, several ms of its answer). Nor
 * in the moment a run's end came (REFILL_AFTER_END_MS): its start (a marker file, its console
 * file, a fork of the server) is done under mu, which the waiting answer needs. True while
 * something defers it (the refill timer is armed for the first to be due). */
#define REFILL_DEFER_MS 100
#define REFILL_AFTER_END_MS 2

static bool refill_deferred(struct server *s)
{
	int64_t now = history_now_ms(), due = now < s->refill_after_end_ms ? s->refill_after_end_ms : INT64_MAX;
	for (struct srun *r = s->running; r; r = r->next)
		if (r->warm && !r->ended && !r->cold && now - r->submitted_ms < REFILL_DEFER_MS &&
		    r->submitted_ms + REFILL_DEFER_MS < due)
			due = r->submitted_ms + REFILL_DEFER_MS;
	if (due == INT64_MAX)
		return false;
	int64_t ms = due - now < 1 ? 1 : due - now;
	struct itimerspec it = { .it_value = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 } };
	timerfd_settime(s->refill_tfd, 0, &it, NULL);
	return true;
}

void warm_fill(struct server *s, const sigset_t *mask)
{
	if (s->pool_n < s->warm_n && refill_deferred(s))
		return;
	while (s->warm_n && s->pool_n < s->warm_n && !s->stopping)
		if (warm_start(s, mask) < 0) {
			fprintf(stderr, "warren serve: cannot start a warm cell: %s\n", strerror(errno));
			break;
		}
}

static struct warm_cell *pool_unlink(struct server *s, struct warm_cell *w)
{
	for (struct warm_cell **p = &s->pool; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			s->pool_n--;
			return w;
		}
	return NULL;
}

/* Is the network mode of a command's request (net, and publish: nat unless net is none, then
 * none+publish) the warm cells'? Its ports and allow list are its own (net_claim). */
static bool warm_net_fits(const struct server *s, json_t *req)
{
	const char *net = json_string_value(json_object_get(req, "net"));
	struct net_opts n = { 0 };
	_cleanup_error_ struct error err = { 0 };
	if (net && net_parse_mode(&n, net, &err) < 0)
		return false;  /* (checked before: make_job) */
	n.mode = net_publish_mode(n.mode, n.mode_given, (unsigned)json_array_size(json_object_get(req, "publish")));
	return n.mode == s->warm_net && n.lan == s->warm_lan;
}

const char *warm_fits(struct server *s, json_t *req)
{
	if (!s->warm_n)
		return NULL;
	const char *wt = json_string_value(json_object_get(req, "worktree"));
	if (!wt || strcmp(wt, s->warm_work))
		return "no warm cell of this shape: its worktree is not the warm cells' (serve --warm-work)";
	if (json_object_get(req, "command")) {
		const char *image = json_string_value(json_object_get(req, "image"));
		if (json_object_get(req, "rootfs") || !!image != !!s->warm_image || (image && strcmp(image, s->warm_image)))
			return "no warm cell of this shape: its root (rootfs or image) is not the warm cells'";
		if (!warm_net_fits(s, req))
			return "no warm cell of this shape: its network mode is not the warm cells' (serve --warm-net)";
		if (json_array_size(json_object_get(req, "binds")) || json_array_size(json_object_get(req, "ro-binds")))
			return "no warm cell of this shape: its binds are not the warm cells' (they have none)";
		/* its env, labels and limits are its own: set at the claim (cli/warm.c, sup_go) */
	}
	return "";
}

struct warm_cell *warm_ready(struct server *s)
{
	struct warm_cell *w = s->pool;
	while (w && (!w->ready || w->discarded || w->fd < 0))
		w = w->next;
	return w && s->busy < s->slots && !s->queue ? w : NULL;
}

/* The most a message to a warm cell's supervisor may be (it reads 64 KiB at most). */
#define GIVE_MAX 60000

int warm_give(struct server *s, struct warm_cell *w, const char *file, const char *text, json_t *req, int *end_fd)
{
	json_t *labels = json_array();
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(req, "labels"), k, v)
		json_array_append_new(labels, json_sprintf("%s=%s", k, json_string_value(v)));
	/* a plain command's argv too: its warm cell starts it as its job, without the executor */
	json_t *m = json_pack("{s:s,s:s,s:s,s:o,s:O?,s:O?}", "job", file, "job_text", text, "work", s->warm_work, "labels",
			      labels, "name", json_object_get(req, "name"), "command", json_object_get(req, "command"));
	_cleanup_free_ char *t = json_dumps(m, JSON_COMPACT);
	if (t && strlen(t) > GIVE_MAX) {
		/* too large for one message: the job file is written, and named */
		json_object_del(m, "job_text");
		free(t);
		t = server_write_job(s, file, text) == 0 ? json_dumps(m, JSON_COMPACT) : NULL;
	}
	json_decref(m);
	/* the run's end comes on a socket of its own too: a connection waiting for it reads it
	 * there, without the server's loop between */
	int sp[2];
	if (!t || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -EIO;
	int sent = fd_send(w->fd, sp[1], t, strlen(t));
	close(sp[1]);
	if (sent < 0) {
		close(sp[0]);
		return sent;
	}
	*end_fd = sp[0];
	pool_unlink(s, w);
	struct srun *r = xcalloc(1, sizeof *r);
	memcpy(r->id, w->id, RUN_ID_LEN + 1);
	r->pid = w->pid;
	r->warm_fd = w->fd;
	r->warm = true;
	r->submitted_ms = history_now_ms();
	r->next = s->running;
	s->running = r;
	s->busy++;
	s->warm_taken++;
	free(w);
	/* the pool refills once the run has ended, or REFILL_DEFER_MS after its take: the timer is
	 * armed here, not by a wake of the server's loop, which would take a CPU from the
	 * supervisor the take has just woken */
	if (!refill_deferred(s))
		server_wake(s);
	return 0;
}

static void warm_say_to(int fd, const char *msg)
{
	if (fd >= 0 && send(fd, msg, strlen(msg), MSG_NOSIGNAL) < 0) {
		/* it is gone: reaped() records what it could not */
	}
}

void warm_row_written(struct server *s, const char *id)
{
	bool q;
	struct srun *r = server_find(s, id, &q);
	if (r && !q)
		warm_say_to(r->warm_fd, "{\"row\":true}");
}

void warm_note_end(struct server *s, struct srun *r)
{
	r->ended = true;
	s->refill_after_end_ms = history_now_ms() + REFILL_AFTER_END_MS;
}

/* A message of a warm cell's supervisor (a pool cell's, or a taken one's: r). */
static void warm_message(struct server *s, struct warm_cell *w, struct srun *r, json_t *m)
{
	if (w && json_is_true(json_object_get(m, "ready"))) {
		w->ready = true;
		s->warm_failed = 0;
	}
	if (r && json_object_get(m, "cold")) {
		r->cold = true;
		fprintf(stderr, "warren serve: %s: the warm cell did not fit, started cold: %s\n", r->id,
			json_string_value(json_object_get(m, "cold")));
		/* the others were made the same way (its image changed since): new ones replace them */
		warm_discard_all(s);
	}
	if (r && json_object_get(m, "exit_code")) {
		warm_note_end(s, r);
		server_note_end(s, r->id, json_string_value(json_object_get(m, "status")),
				(int)json_integer_value(json_object_get(m, "exit_code")), r->cold ? "cold" : "warm");
		/* its row is written (submit.c, under mu): the supervisor may write its end */
		warm_say_to(r->warm_fd, "{\"ack\":true}");
	}
}

bool warm_read(struct server *s, int fd)
{
	struct warm_cell *w = s->pool;
	while (w && w->fd != fd)
		w = w->next;
	struct srun *r = s->running;
	while (!w && r && r->warm_fd != fd)
		r = r->next;
	if (!w && !r)
		return false;
	char buf[4096];
	ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN)
		return true;
	if (n <= 0) {
		epoll_ctl(s->ep, EPOLL_CTL_DEL, fd, NULL);
		close(fd);
		if (w)
			w->fd = -1;
		else
			r->warm_fd = -1;
		return true;
	}
	json_t *m = json_loadb(buf, (size_t)n, 0, NULL);
	warm_message(s, w, r, m);
	json_decref(m);
	return true;
}

/* What the supervisor of a failed cell left (killed: its run directory, its cgroup, its cell's
 * processes still dying) is reclaimed now by `warren gc --state S ID`, not waited for (the
 * loop reaps it as a child no cell has): with its console forgotten, the next server would
 * not know it for a warm cell. */
static void warm_gc(struct server *s, const char *id)
{
	_cleanup_close_ int dir = rundir_open(&s->sd, id, NULL);
	if (dir < 0 || !rundir_is_warm(dir))
		return;
	char *argv[] = { (char *)"warren", (char *)"gc", (char *)"--state", s->sd.path, (char *)id, NULL };
	sigset_t all;
	sigfillset(&all);
	if (server_spawn(argv, STDERR_FILENO, -1, getpid(), &all) < 0)
		fprintf(stderr, "warren serve: cannot start 'warren gc --state %s %s' for a failed warm cell: %s; run it by hand\n",
			s->sd.path, id, strerror(errno));
}

bool warm_reaped(struct server *s, pid_t pid)
{
	struct warm_cell *w = s->pool;
	while (w && w->pid != pid)
		w = w->next;
	if (!w)
		return false;
	pool_unlink(s, w);
	if (w->fd >= 0) {
		epoll_ctl(s->ep, EPOLL_CTL_DEL, w->fd, NULL);
		close(w->fd);
	}
	if (!s->stopping && !w->discarded) {
		_cleanup_free_ char *why = server_console_error(s, w->id);
		fprintf(stderr, "warren serve: a warm cell failed: %s\n", why);
		if (++s->warm_failed >= 3) {
			fprintf(stderr, "warren serve: three warm cells in a row failed; no more are made (runs start cold)\n");
			s->warm_n = 0;
		}
		warm_gc(s, w->id);
	}
	server_forget_files(s, w->id);
	free(w);
	return true;
}

void warm_discard_all(struct server *s)
{
	for (struct warm_cell *w = s->pool; w; w = w->next) {
		w->discarded = true;
		if (w->fd >= 0) {
			epoll_ctl(s->ep, EPOLL_CTL_DEL, w->fd, NULL);
			closep(&w->fd);  /* its supervisor gives the cell up and ends */
		}
	}
}

/* Pss of pid and its descendants, in bytes. */
static uint64_t pss_tree(pid_t pid, int depth)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/smaps_rollup", (int)pid);
	_cleanup_free_ char *t = read_file(p, NULL);
	uint64_t kb = 0;
	char *l = t ? strstr(t, "\nPss:") : NULL;
	if (l)
		kb = strtoull(l + 5, NULL, 10);
	snprintf(p, sizeof p, "/proc/%d/task/%d/children", (int)pid, (int)pid);
	_cleanup_free_ char *kids = depth < 4 ? read_file(p, NULL) : NULL;
	uint64_t total = kb * 1024;
	for (char *k = kids, *end; k && *k; k = end) {
		long c = strtol(k, &end, 10);
		if (end == k)
			break;
		total += pss_tree((pid_t)c, depth + 1);
	}
	return total;
}

uint64_t warm_pss_per_cell(struct server *s)
{
	uint64_t total = 0, n = 0;
	for (struct warm_cell *w = s->pool; w; w = w->next)
		if (w->ready) {
			total += pss_tree(w->pid, 0);
			n++;
		}
	return n ? total / n : 0;
}

/* The cells a killed server left: a console <id>.out whose run directory still says warm (no
 * run took it; a run's console is the runs' recovery's: recover_running), or the marker
 * <id>.warm that an earlier version of the server made for each of its cells. */
void warm_recover(struct server *s)
{
	char **ids = NULL;
	size_t n = 0;
	DIR *d = fdopendir(dup(s->dir_fd));
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		bool marker = l == RUN_ID_LEN + 5 && !strcmp(e->d_name + RUN_ID_LEN, ".warm");
		if (!marker && (l != RUN_ID_LEN + 4 || strcmp(e->d_name + RUN_ID_LEN, ".out")))
			continue;
		char id[RUN_ID_LEN + 1];
		memcpy(id, e->d_name, RUN_ID_LEN);
		id[RUN_ID_LEN] = '\0';
		if (marker)
			unlinkat(s->dir_fd, e->d_name, 0);
		_cleanup_close_ int dir = run_id_valid(id) ? rundir_open(&s->sd, id, NULL) : -1;
		if (dir < 0 || !rundir_is_warm(dir))
			continue;
		bool seen = false;
		for (size_t i = 0; i < n && !seen; i++)
			seen = !strcmp(ids[i], id);
		if (seen)
			continue;
		ids = xrealloc(ids, (n + 2) * sizeof *ids);
		ids[n++] = xstrdup(id);
		ids[n] = NULL;
	}
	if (d)
		closedir(d);
	if (!n)
		return;
	fprintf(stderr, "warren serve: reclaiming %zu warm cell%s the last server left\n", n, n == 1 ? "" : "s");
	server_gc(s, ids);
	for (size_t i = 0; i < n; i++) {
		server_forget_files(s, ids[i]);
		free(ids[i]);
	}
	free(ids);
}
