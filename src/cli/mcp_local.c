/* SPDX-License-Identifier: Apache-2.0 */
/* mcp_local.c - `warren mcp`'s tools on the caller's own state directory, as `warren run`, `warren
 * exec` and `warren end` act without a server. A session is started as `warren run --session`
 * in a process of its own (its own session id, /dev/null for its input and output, its stderr
 * kept to say why it failed), which the server waits for until the run's session.sock is there;
 * exec and end speak to that socket (job/session.h) as `warren exec` does; the list is of the
 * live runs of the state directory that have one. */
#include "cli/mcp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "job/jobfile.h"
#include "job/session.h"
#include "run/id.h"
#include "run/record.h"
#include "run/rundir.h"
#include "util/fs.h"
#include "util/strv.h"
#include "util/units.h"

#define START_WAIT_S 120.0  /* the most a session may take to be ready */
#define END_WAIT_S 60.0     /* ... and to end once told */

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000 }, NULL);
}

/* ---- the processes of the sessions started here, reaped once they end ---- */

static pthread_mutex_t kids_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t *kids;
static size_t n_kids;

static void kid_add(pid_t pid)
{
	pthread_mutex_lock(&kids_mu);
	kids = xrealloc(kids, (n_kids + 1) * sizeof *kids);
	kids[n_kids++] = pid;
	pthread_mutex_unlock(&kids_mu);
}

void local_reap(void)
{
	pthread_mutex_lock(&kids_mu);
	for (size_t i = 0; i < n_kids;) {
		if (waitpid(kids[i], NULL, WNOHANG) != 0)
			kids[i] = kids[--n_kids];  /* ended (or not ours any more) */
		else
			i++;
	}
	pthread_mutex_unlock(&kids_mu);
}

/* ---- runs ---- */

/* Does run directory rfd have its session's socket (it takes execs)? */
static bool has_session(int rfd)
{
	struct stat st;
	return fstatat(rfd, SESSION_SOCK, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode);
}

/* The run (an id or a unique prefix) in the caller's state directory: its full id, its
 * directory in *rfd; NULL with *fail. */
static char *run_open(const struct mcp_conf *c, const char *run, int *rfd, char **fail)
{
	const char *path = c->state_path;
	_cleanup_error_ struct error err = { 0 };
	struct statedir sd;
	*rfd = -1;
	if (statedir_open(&sd, path, false, &err) < 0) {
		*fail = err.errnum == ENOENT ? xasprintf("no run %s: the state directory %s has no runs (start_session makes one)", run, path)
					     : xstrdup(err.msg);
		return NULL;
	}
	char *id = runs_resolve(&sd, run, &err);
	*rfd = id ? rundir_open(&sd, id, &err) : -1;
	statedir_close(&sd);
	if (*rfd < 0) {
		*fail = xstrdup(err.msg);
		free(id);
		return NULL;
	}
	return id;
}

/* The run's session, connected (its id in *id); -1 with *fail. */
static int session_dial(const struct mcp_conf *c, const char *run, char **id, char **fail)
{
	_cleanup_close_ int rfd = -1;
	*id = run_open(c, run, &rfd, fail);
	if (!*id)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/%s", rfd, SESSION_SOCK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
		return fd;
	if (errno == EACCES || errno == EPERM)
		*fail = xasprintf("run %s: its session is not yours (only its owner or root may use it)", *id);
	else if (!rundir_is_live(rfd))
		*fail = xasprintf("run %s has ended; exec needs a live session (start_session makes one)", *id);
	else
		*fail = xasprintf("run %s takes no commands: it is not a session, or its session is not ready yet", *id);
	closep(&fd);
	return -1;
}

/* Send j as one line. */
static int send_line(int fd, json_t *j)
{
	_cleanup_free_ char *t = json_dumps(j, JSON_COMPACT);
	if (!t)
		return -1;
	size_t l = strlen(t);
	t[l] = '\n';
	return write_all(fd, t, l + 1);
}

json_t *local_exec(const struct mcp_conf *c, const char *run, json_t *req, struct mcp_call *call, char **fail)
{
	_cleanup_free_ char *id = NULL;
	_cleanup_close_ int fd = session_dial(c, run, &id, fail);
	if (fd < 0)
		return NULL;
	json_t *r = json_deep_copy(req);
	json_object_set_new(r, "op", json_string("exec"));
	json_object_set_new(r, "stream", json_true());
	/* (refused before it was read, the refusal waits all the same: the answer says it) */
	(void)send_line(fd, r);
	json_decref(r);
	return mcp_exec_answer(fd, NULL, 0, id, call, fail);
}

/* One line of the session's answer, within secs; NULL when none came. */
static json_t *read_answer(int fd, double secs)
{
	char buf[4096];
	size_t n = 0;
	double until = mcp_now() + secs;
	while (n < sizeof buf - 1 && mcp_now() < until) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 250) <= 0)
			continue;
		ssize_t r = read(fd, buf + n, sizeof buf - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (memchr(buf, '\n', n))
			break;
	}
	buf[n] = '\0';
	return json_loads(buf, JSON_DISABLE_EOF_CHECK, NULL);
}

/* The end of run rfd (id) as end_session says it, once its record is written. */
static json_t *end_result(int rfd, const char *id)
{
	json_t *res = rundir_load_json(rfd, "result.json");
	json_t *st = json_object_get(res, "status"), *code = json_object_get(res, "exit_code");
	json_t *r = json_pack("{s:s,s:s,s:O,s:O}", "run_id", id, "state", rundir_is_live(rfd) ? "ending" : "ended", "status",
			      st ? st : json_null(), "exit_code", json_is_integer(code) ? code : json_null());
	json_decref(res);
	return r;
}

json_t *local_end(const struct mcp_conf *c, const char *run, struct mcp_call *call, char **fail)
{
	_cleanup_free_ char *id = NULL;
	_cleanup_close_ int fd = session_dial(c, run, &id, fail);
	if (fd < 0)
		return NULL;
	json_t *op = json_pack("{s:s}", "op", "end");
	json_t *a = send_line(fd, op) == 0 ? read_answer(fd, 30) : NULL;
	json_decref(op);
	bool ended = json_is_true(json_object_get(a, "ended"));
	const char *e = json_string_value(json_object_get(a, "error"));
	if (!ended)
		*fail = e ? xasprintf("run %s: %s", id, e) : xasprintf("run %s: its session did not answer", id);
	json_decref(a);
	if (!ended)
		return NULL;
	_cleanup_close_ int rfd = -1;
	_cleanup_free_ char *id2 = run_open(c, id, &rfd, fail);
	if (!id2)
		return NULL;
	for (double t0 = mcp_now(); rundir_is_live(rfd) && mcp_now() - t0 < END_WAIT_S && !mcp_call_cancelled(call);) {
		mcp_call_progress(call, "the session is ending");
		sleep_ms(50);
	}
	return end_result(rfd, id);
}

/* ---- the list ---- */

/* One live session of the list, from its spec.json. */
static json_t *session_row(int rfd, const char *id)
{
	json_t *spec = rundir_load_json(rfd, "spec.json");
	json_t *wt = json_object_get(spec, "worktree"), *img = json_object_get(json_object_get(spec, "image"), "name");
	json_t *net = json_object_get(spec, "network_mode");
	uint64_t ms = run_id_time_ms(id);
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000 };
	char at[40];
	json_t *r = json_pack("{s:s,s:O,s:O,s:O,s:s}", "run_id", id, "worktree", json_is_string(wt) ? wt : json_null(), "image",
			      json_is_string(img) ? img : json_null(), "net", json_is_string(net) ? net : json_null(),
			      "started_at", format_rfc3339(at, sizeof at, &ts));
	json_decref(spec);
	return r;
}

json_t *local_list(const struct mcp_conf *c, char **fail)
{
	const char *path = c->state_path;
	_cleanup_error_ struct error err = { 0 };
	struct statedir sd;
	json_t *list = json_array();
	if (statedir_open(&sd, path, false, &err) < 0) {
		if (err.errnum == ENOENT)
			return json_pack("{s:o}", "sessions", list);  /* no state yet: no runs */
		json_decref(list);
		*fail = xstrdup(err.msg);
		return NULL;
	}
	char **ids = runs_list(&sd);
	for (char **id = ids; *id; id++) {
		_cleanup_close_ int rfd = rundir_open(&sd, *id, NULL);
		if (rfd >= 0 && rundir_is_live(rfd) && !rundir_is_warm(rfd) && has_session(rfd))
			json_array_append_new(list, session_row(rfd, *id));
	}
	runs_list_free(ids);
	statedir_close(&sd);
	return json_pack("{s:o}", "sessions", list);
}

/* ---- the start ---- */

/* `warren run --session` of a: its words (heap). */
static char **start_argv(const struct mcp_conf *c, const struct mcp_start *a, const char *id)
{
	char **v = xcalloc(24 + 2 * json_object_size(a->env), sizeof *v);
	size_t n = 0;
#define ADD(x) (v[n++] = xstrdup(x))
	ADD("warren"), ADD("run"), ADD("--session"), ADD("--run-id"), ADD(id), ADD("--quiet"), ADD("--work"), ADD(a->worktree);
	const char *opt[][2] = { { "--state", c->state_path }, { "--image", a->image }, { "--net", a->net },
				 { "--session-idle", a->idle }, { "--session-max", a->max } };
	for (size_t i = 0; i < sizeof opt / sizeof *opt; i++)
		if (opt[i][1])
			ADD(opt[i][0]), ADD(opt[i][1]);
	const char *k;
	json_t *e;
	json_object_foreach(a->env, k, e) {
		ADD("--env");
		v[n++] = xasprintf("%s=%s", k, json_string_value(e));
	}
#undef ADD
	return v;
}

/* Start argv (this very binary) in a session of its own: stdin and stdout /dev/null, stderr
 * err; its pid, or -1 with errno. Between fork and exec only async-signal-safe calls (the
 * server has threads). */
static pid_t start_child(char **argv, int err)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		sigaction(SIGPIPE, &dfl, NULL);  /* (the server ignores it) */
		setsid();
		if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(err, 2) < 0)
			_exit(125);
		close_range(3, ~0U, 0);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	int e = errno;
	close(null);
	errno = e;
	return pid;
}

/* The last line of what the start wrote on its stderr (fd), without "warren: " (heap). */
static char *last_line(int fd)
{
	lseek(fd, 0, SEEK_SET);
	_cleanup_free_ char *t = read_fd(fd, NULL);
	if (!t)
		return NULL;
	size_t n = strlen(t);
	while (n && (t[n - 1] == '\n' || t[n - 1] == ' '))
		t[--n] = '\0';
	char *l = strrchr(t, '\n');
	l = l ? l + 1 : t;
	if (!strncmp(l, "warren: ", 8))
		l += 8;
	return *l ? xstrdup(l) : NULL;
}

/* Is the session of run id ready (its socket there)? sd is opened once the state is there. */
static bool start_ready(const char *state, struct statedir *sd, const char *id)
{
	if (sd->fd < 0) {
		struct error err = { 0 };
		if (statedir_open(sd, state, false, &err) < 0) {
			error_clear(&err);
			*sd = (struct statedir){ .fd = -1, .runs = -1 };
			return false;
		}
	}
	_cleanup_close_ int rfd = rundir_open(sd, id, NULL);
	return rfd >= 0 && has_session(rfd);
}

/* Wait for the session id started as pid to be ready: 0, or -1 with *fail (the start's
 * own line when it failed; pid stopped when it took too long or the call was cancelled). */
static int start_wait(const struct mcp_conf *c, pid_t pid, int err, const char *id, struct mcp_call *call, char **fail)
{
	const char *state = c->state_path;
	struct statedir sd = { .fd = -1, .runs = -1 };
	int rc = -1, st;
	for (double t0 = mcp_now();; sleep_ms(20)) {
		if (start_ready(state, &sd, id)) {
			rc = 0;
			break;
		}
		if (waitpid(pid, &st, WNOHANG) == pid) {
			_cleanup_free_ char *l = last_line(err);
			*fail = l ? xasprintf("the session did not start: %s", l)
				  : xasprintf("the session %s ended before it was ready (%s %d; see 'warren show %s')", id,
					      WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), id);
			pid = -1;
			break;
		}
		if (mcp_call_cancelled(call) || mcp_now() - t0 > START_WAIT_S) {
			*fail = mcp_call_cancelled(call) ? xstrdup("cancelled")
							 : xasprintf("the session %s was not ready within %.0fs; it was stopped", id, START_WAIT_S);
			kill(pid, SIGTERM);
			break;
		}
		mcp_call_progress(call, "the session's cell is being made");
	}
	if (pid > 0)
		kid_add(pid);  /* reaped when it ends (local_reap) */
	if (sd.fd >= 0)
		statedir_close(&sd);
	return rc;
}

json_t *local_start(const struct mcp_conf *c, const struct mcp_start *a, struct mcp_call *call, char **fail)
{
	char id[RUN_ID_LEN + 1];
	if (run_id_new(id) < 0) {
		*fail = xasprintf("cannot make a run id: %s", strerror(errno));
		return NULL;
	}
	__attribute__((cleanup(strv_freep))) char **argv = start_argv(c, a, id);
	_cleanup_close_ int err = memfd_create("warren-mcp-start", MFD_CLOEXEC);
	pid_t pid = err >= 0 ? start_child(argv, err) : -1;
	if (pid < 0) {
		*fail = xasprintf("cannot start warren run --session: %s", strerror(errno));
		return NULL;
	}
	if (start_wait(c, pid, err, id, call, fail) < 0)
		return NULL;
	char i[32], m[32];
	return json_pack("{s:s,s:s,s:s,s:s,s:s}", "run_id", id, "state", "ready", "worktree", a->worktree, "idle",
			 a->idle ? a->idle : format_duration_ms(i, sizeof i, JOB_SESSION_IDLE_MS), "max",
			 a->max ? a->max : format_duration_ms(m, sizeof m, JOB_SESSION_MAX_MS));
}
