/* SPDX-License-Identifier: Apache-2.0 */
/* exec.c - `warren exec RUN -- CMD...` and `warren end RUN`: a command in a live session's cell
 * (session: in a job file), over the run's socket <rundir>/session.sock (job/session.h: JSON
 * lines, the output streamed as it comes), or through a warren serve (--via, cli/submit.c);
 * and the session's end. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/exectty.h"
#include "cli/opts.h"
#include "job/session.h"
#include "run/id.h"
#include "run/rundir.h"
#include "util/fs.h"
#include "util/strv.h"
#include "util/units.h"

static const char EXEC_HELP[] =
	"usage: warren exec [--state DIR | --via SOCKET [--token-file F]] RUN [-e K=V]... [-w DIR]\n"
	"                   [--timeout D] [-i] [-t] -- CMD...\n\n"
	"Run CMD in the cell of a live session (a job with session:), as its steps run: the job's\n"
	"environment and -e's over it ($TMPDIR is /tmp), in the worktree or -w DIR (relative to\n"
	"it), its output shown as it comes. It ends with CMD's status (124 when --timeout stopped\n"
	"its whole process tree); 125 after one line when warren cannot (the run ended: 'warren\n"
	"show RUN'). What CMD leaves running in the background stays until the session ends.\n"
	"When warren exec ends before CMD (Ctrl-C, killed), CMD's process tree is stopped as by\n"
	"--timeout (its record: interrupted, 143); with -t its terminal hangs up (SIGHUP).\n\n"
	"  -e, --env K=V       a variable for CMD (repeat)\n"
	"  -w, --workdir DIR   where CMD runs (relative to the worktree, or absolute)\n"
	"  --timeout D         CMD's time limit (e.g. 30s, 10m): SIGTERM to its process tree, then SIGKILL\n"
	"  -i, --stdin         pass warren's standard input to CMD (at most 1 MiB; else /dev/null)\n"
	"  -t, --tty           CMD gets a terminal of the cell's, relayed to this one (raw meanwhile;\n"
	"                      its size follows this one's; not with --via)\n"
	"  --state DIR         the state directory of the run\n"
	"  --via SOCKET        through a warren serve (unix:PATH or tcp:HOST:PORT; RUN a full id)\n"
	"  --token-file F      the server's token, for tcp:\n";

static const char END_HELP[] =
	"usage: warren end [--state DIR | --via SOCKET [--token-file F]] RUN\n\n"
	"End a live session normally: its services are stopped, its cell reclaimed, its record\n"
	"written (exit 0). Waits until the run has ended (with --via: until it is told).\n";

/* Connect to the session socket of the run directory rfd; -1 (errno) when none answers. */
static int session_connect(int rfd)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/%s", rfd, SESSION_SOCK);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The run's session, connected; -1 after one line on stderr. */
static int open_session(const char *state, const char *run, char **id_out)
{
	int rc;
	_cleanup_close_ int rfd = -1;
	char *id = cli_run_open(state, run, &rfd, NULL, &rc);
	if (!id)
		return -1;
	*id_out = id;
	int fd = session_connect(rfd);
	if (fd >= 0)
		return fd;
	if (errno == EACCES || errno == EPERM)
		warn_line("run %s: its session is not yours (only its owner or root may use it)", id);
	else if (!rundir_is_live(rfd))
		warn_line("run %s has ended; exec needs a live session (see 'warren show %s')", id, id);
	else
		warn_line("run %s takes no commands: it is not a session (session: in its job), or its session is not ready yet", id);
	return -1;
}

/* The answer's reader: what came with an HTTP answer's head first, then the connection. */
struct rd {
	int fd;
	char *pre;
	size_t plen, poff;
	int passed;       /* a descriptor the session passed (-1: none) */
	char *cause;      /* the exec's cause, said once the caller's terminal is back */
};

static ssize_t rd_read(struct rd *r, char *buf, size_t n)
{
	if (r->poff < r->plen) {
		size_t k = r->plen - r->poff < n ? r->plen - r->poff : n;
		memcpy(buf, r->pre + r->poff, k);
		r->poff += k;
		return (ssize_t)k;
	}
	int fd = -1;
	ssize_t got = fd_recv(r->fd, 0, buf, n, &fd);
	if (fd >= 0) {
		closep(&r->passed);
		r->passed = fd;
	}
	if (got < 0)
		errno = (int)-got;
	return got < 0 ? -1 : got;
}

/* Read one line (without its \n) into a heap string; NULL at the end. */
static char *read_line(struct rd *rd)
{
	size_t cap = 256, n = 0;
	char *b = xmalloc(cap);
	for (;;) {
		char c;
		ssize_t r = rd_read(rd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(b);
			return NULL;
		}
		if (c == '\n')
			break;
		if (n + 1 >= cap)
			b = xrealloc(b, cap *= 2);
		b[n++] = c;
	}
	b[n] = '\0';
	return b;
}

char *cli_line_from(int fd)
{
	struct rd rd = { .fd = fd };
	return read_line(&rd);
}

/* Copy len bytes to out. */
static int copy_n(struct rd *rd, int out, size_t len)
{
	char buf[65536];
	while (len) {
		ssize_t r = rd_read(rd, buf, len < sizeof buf ? len : sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		if (write_all(out, buf, (size_t)r) < 0 && errno != EPIPE)
			return -1;
		len -= (size_t)r;
	}
	return 0;
}

/* Send the request j (taken) as one line. */
static int send_request(int fd, json_t *j)
{
	_cleanup_free_ char *t = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (!t)
		return -1;
	size_t l = strlen(t);
	t[l] = '\n';  /* (the NUL dropped: the line is sent with its length) */
	return write_all(fd, t, l + 1);
}

/* A refusal {"error", "status"} as the one line it is; 125. */
static int refused(json_t *j, const char *id)
{
	const char *e = json_string_value(json_object_get(j, "error"));
	if (e && strstr(e, id))
		warn_line("%s", e);  /* (it names the run itself) */
	else
		warn_line("run %s: %s", id, e ? e : "the session refused the request");
	return 125;
}

/* Standard input, at most SESSION_REQ_MAX bytes (heap, *len); NULL after one line. */
static char *read_stdin(size_t *len)
{
	size_t cap = 65536;
	char *b = xmalloc(cap);
	*len = 0;
	for (;;) {
		if (*len == cap)
			b = xrealloc(b, cap *= 2);
		ssize_t r = read(0, b + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			warn_line("cannot read standard input: %s", strerror(errno));
			free(b);
			return NULL;
		}
		if (r == 0)
			return b;
		*len += (size_t)r;
		if (*len > SESSION_REQ_MAX - 4096) {
			warn_line("-i: standard input is over %d bytes; give a file in the worktree instead", SESSION_REQ_MAX - 4096);
			free(b);
			return NULL;
		}
	}
}

/* The answer's lines; a terminal passed with {"tty":true} relayed in t meanwhile. */
static int exec_lines(struct rd *rd, const char *id, struct exec_tty *t)
{
	for (;;) {
		if (t->master >= 0)
			exec_tty_relay(t, rd->fd);
		_cleanup_free_ char *line = read_line(rd);
		if (!line) {
			warn_line("run %s: the session ended before the command did (see 'warren show %s')", id, id);
			return 125;
		}
		json_t *j = json_loads(line, 0, NULL);
		json_t *v;
		int rc = -1;
		if (!j)
			warn_line("run %s: the session answered something that is not JSON", id);
		if (!j || json_object_get(j, "error"))
			rc = j ? refused(j, id) : 125;
		else if ((v = json_object_get(j, "stdout")) || (v = json_object_get(j, "stderr")))
			rc = copy_n(rd, json_object_get(j, "stdout") ? 1 : 2, (size_t)json_integer_value(v)) < 0 ? 125 : -1;
		else if (json_is_true(json_object_get(j, "tty")) && rd->passed >= 0 && t->master < 0)
			exec_tty_start(t, steal_fd(&rd->passed));
		else if ((v = json_object_get(j, "end"))) {
			const char *cause = json_string_value(json_object_get(v, "cause"));
			const char *st = json_string_value(json_object_get(v, "signal"));
			if (cause)
				rd->cause = xasprintf("exec %lld: %s", (long long)json_integer_value(json_object_get(v, "exec")), cause);
			rc = json_is_integer(json_object_get(v, "exit_code")) ? (int)json_integer_value(json_object_get(v, "exit_code")) : 125;
			(void)st;
		}
		json_decref(j);
		if (rc >= 0)
			return rc;
	}
}

/* The exec's answer, streamed: output to stdout and stderr (or its terminal relayed), then
 * its end; the exit status. */
static int exec_answer(struct rd *rd, const char *id)
{
	struct exec_tty t = { .master = -1 };
	int rc = exec_lines(rd, id, &t);
	if (t.master >= 0)
		exec_tty_end(&t);
	closep(&rd->passed);
	/* the cause after the terminal is the caller's again */
	if (rd->cause)
		warn_line("%s", rd->cause);
	free(rd->cause);
	return rc;
}

struct exec_opts {
	const char *state, *cwd, *via, *token;
	uint64_t timeout;
	bool in, tty;
	json_t *env;
};

/* The options up to the next word that is not one (getopt stops there: RUN, or CMD after
 * --); -1, or the exit code (--help, a mistake said). */
static int exec_opts(int argc, char **argv, struct exec_opts *o)
{
	enum { O_STATE = 256, O_HELP, O_TIMEOUT, O_VIA, O_TOKEN };
	static const struct option opts[] = { { "state", required_argument, NULL, O_STATE },
					      { "via", required_argument, NULL, O_VIA },
					      { "token-file", required_argument, NULL, O_TOKEN },
					      { "env", required_argument, NULL, 'e' },
					      { "workdir", required_argument, NULL, 'w' },
					      { "timeout", required_argument, NULL, O_TIMEOUT },
					      { "stdin", no_argument, NULL, 'i' },
					      { "tty", no_argument, NULL, 't' },
					      { "help", no_argument, NULL, O_HELP },
					      { NULL, 0, NULL, 0 } };
	_cleanup_error_ struct error perr = { 0 };
	int c;
	while ((c = cli_getopt(argc, argv, "+e:w:it", opts, "exec", &perr)) != -1) {
		switch (c) {
		case O_STATE: o->state = optarg; break;
		case O_VIA: o->via = optarg; break;
		case O_TOKEN: o->token = optarg; break;
		case 'e':
			if (!strchr(optarg, '=') || *optarg == '=')
				return cli_usage_error("exec", "-e: '%s' is not NAME=VALUE", optarg);
			json_array_append_new(o->env, json_string(optarg));
			break;
		case 'w': o->cwd = optarg; break;
		case 'i': o->in = true; break;
		case 't': o->tty = true; break;
		case O_TIMEOUT:
			if (parse_duration_ms(optarg, &o->timeout) < 0 || !o->timeout)
				return cli_usage_error("exec", "--timeout: '%s' is not a duration (e.g. 30s, 10m)", optarg);
			break;
		case O_HELP: fputs(EXEC_HELP, stdout); return 0;
		default: return cli_fail(&perr);
		}
	}
	return -1;
}

static void exec_opts_free(struct exec_opts *o)
{
	json_decref(o->env);
}

/* The exec through a warren serve: POST /v1/runs/{id}/exec?stream=1 with req (taken). */
static int exec_via(const struct exec_opts *o, const char *run, json_t *req)
{
	if (!run_id_valid(run)) {
		json_decref(req);
		return cli_usage_error("exec", "exec --via takes a full run id (run_...)");
	}
	_cleanup_free_ char *body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	_cleanup_free_ char *path = xasprintf("/v1/runs/%s/exec?stream=1", run);
	_cleanup_error_ struct error err = { 0 };
	int status;
	struct rd rd = { .passed = -1 };
	rd.fd = cli_via_request(o->via, o->state, o->token, "POST", path, body, &status, &rd.pre, &rd.plen, &err);
	if (rd.fd < 0)
		return cli_fail(&err);
	int rc;
	if (status == 200) {
		rc = exec_answer(&rd, run);
	} else {
		/* an error: {"error"} */
		char buf[4096];
		ssize_t n;
		while ((n = read(rd.fd, buf, sizeof buf)) > 0) {
			rd.pre = xrealloc(rd.pre, rd.plen + (size_t)n + 1);
			memcpy(rd.pre + rd.plen, buf, (size_t)n);
			rd.plen += (size_t)n;
		}
		json_t *j = json_loadb(rd.pre, rd.plen, 0, NULL);
		rc = refused(j, run);
		json_decref(j);
	}
	free(rd.pre);
	close(rd.fd);
	return rc;
}

int cmd_exec(int argc, char **argv)
{
	_cleanup_(exec_opts_free) struct exec_opts o = { .env = json_array() };
	optind = 1;
	int c;
	if ((c = exec_opts(argc, argv, &o)) >= 0)
		return c;
	/* RUN [options] -- CMD...: the run first, its options may follow it */
	if (optind >= argc)
		return cli_usage_error("exec", "exec takes a run and a command: exec RUN -- CMD...");
	const char *run = argv[optind++];
	if ((c = exec_opts(argc, argv, &o)) >= 0)
		return c;
	if (optind >= argc)
		return cli_usage_error("exec", "exec takes a command after the run: exec RUN -- CMD...");
	json_t *cmd = json_array();
	for (int i = optind; i < argc; i++)
		json_array_append_new(cmd, json_string(argv[i]));
	json_t *req = json_pack("{s:o,s:O}", "command", cmd, "env", o.env);
	if (o.cwd)
		json_object_set_new(req, "cwd", json_string(o.cwd));
	if (o.timeout)
		json_object_set_new(req, "timeout", json_integer((json_int_t)o.timeout));
	if (o.tty && o.via) {
		json_decref(req);
		return cli_usage_error("exec", "-t: a terminal does not pass through a server (--via); run warren exec -t on the run's host without --via");
	}
	if (o.tty && !isatty(STDIN_FILENO)) {
		json_decref(req);
		warn_line("exec -t: the input device is not a TTY (run it in a terminal, or leave out -t)");
		return 125;
	}
	/* Ctrl-C (or a kill) of warren exec stops CMD, as ssh's hangup does; with -t the closed
	 * terminal hangs it up (SIGHUP) */
	if (!o.tty)
		json_object_set_new(req, "stop_on_close", json_true());
	if (o.tty)
		json_object_set_new(req, "tty", json_true());
	else if (o.in) {
		size_t len;
		_cleanup_free_ char *text = read_stdin(&len);
		json_t *t = text ? json_stringn(text, len) : NULL;
		if (text && !t)
			warn_line("-i: standard input is not UTF-8 text; give a file in the worktree instead");
		if (!t) {
			json_decref(req);
			return 125;
		}
		json_object_set_new(req, "stdin", t);
	}
	if (o.via)
		return exec_via(&o, run, req);
	json_object_set_new(req, "op", json_string("exec"));
	json_object_set_new(req, "stream", json_true());
	_cleanup_free_ char *id = NULL;
	_cleanup_close_ int fd = open_session(o.state, run, &id);
	if (fd < 0) {
		json_decref(req);
		return 125;
	}
	if (send_request(fd, req) < 0) {
		/* refused before it was read (the answer waits all the same), or the session is gone */
		int e = errno;
		struct rd rd = { .fd = fd, .passed = -1 };
		_cleanup_free_ char *line = read_line(&rd);
		json_t *j = line ? json_loads(line, 0, NULL) : NULL;
		if (json_object_get(j, "error")) {
			int rc = refused(j, id);
			json_decref(j);
			return rc;
		}
		json_decref(j);
		warn_line("run %s: cannot send the command to its session: %s", id, strerror(e));
		return 125;
	}
	struct rd rd = { .fd = fd, .passed = -1 };
	return exec_answer(&rd, id);
}

/* Wait (at most a minute) for run rfd's end: its record written, its cell gone. */
static bool wait_ended(int rfd)
{
	for (int i = 0; i < 1200 && rundir_is_live(rfd); i++)
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	return !rundir_is_live(rfd);
}

/* The end through a warren serve: POST /v1/runs/{id}/end. */
static int end_via(const char *via, const char *state, const char *token, const char *run)
{
	if (!run_id_valid(run))
		return cli_usage_error("end", "end --via takes a full run id (run_...)");
	_cleanup_free_ char *path = xasprintf("/v1/runs/%s/end", run);
	_cleanup_error_ struct error err = { 0 };
	int status;
	struct rd rd = { .passed = -1 };
	rd.fd = cli_via_request(via, state, token, "POST", path, NULL, &status, &rd.pre, &rd.plen, &err);
	if (rd.fd < 0)
		return cli_fail(&err);
	char buf[4096];
	ssize_t n;
	while ((n = read(rd.fd, buf, sizeof buf)) > 0) {
		rd.pre = xrealloc(rd.pre, rd.plen + (size_t)n + 1);
		memcpy(rd.pre + rd.plen, buf, (size_t)n);
		rd.plen += (size_t)n;
	}
	close(rd.fd);
	json_t *j = json_loadb(rd.pre, rd.plen, 0, NULL);
	free(rd.pre);
	int rc = status == 202 ? 0 : refused(j, run);
	json_decref(j);
	if (!rc)
		printf("warren: ending %s\n", run);
	return rc;
}

int cmd_end(int argc, char **argv)
{
	enum { O_STATE = 256, O_HELP, O_VIA, O_TOKEN };
	static const struct option opts[] = { { "state", required_argument, NULL, O_STATE },
					      { "via", required_argument, NULL, O_VIA },
					      { "token-file", required_argument, NULL, O_TOKEN },
					      { "help", no_argument, NULL, O_HELP },
					      { NULL, 0, NULL, 0 } };
	const char *state = NULL, *via = NULL, *token = NULL;
	_cleanup_error_ struct error perr = { 0 };
	optind = 1;
	int c;
	while ((c = cli_getopt(argc, argv, "", opts, "end", &perr)) != -1) {
		if (c == O_STATE)
			state = optarg;
		else if (c == O_VIA)
			via = optarg;
		else if (c == O_TOKEN)
			token = optarg;
		else if (c == O_HELP)
			return fputs(END_HELP, stdout), 0;
		else
			return cli_fail(&perr);
	}
	if (optind != argc - 1)
		return cli_usage_error("end", "end takes one run id (or a unique prefix)");
	if (via)
		return end_via(via, state, token, argv[optind]);
	_cleanup_free_ char *id = NULL;
	_cleanup_close_ int fd = open_session(state, argv[optind], &id);
	if (fd < 0)
		return 125;
	struct rd rd = { .fd = fd, .passed = -1 };
	_cleanup_free_ char *line = send_request(fd, json_pack("{s:s}", "op", "end")) == 0 ? read_line(&rd) : NULL;
	json_t *j = line ? json_loads(line, 0, NULL) : NULL;
	if (!json_is_true(json_object_get(j, "ended"))) {
		int rc = j ? refused(j, id) : (warn_line("run %s: its session did not answer", id), 125);
		json_decref(j);
		return rc;
	}
	json_decref(j);
	int rc;
	_cleanup_close_ int rfd = -1;
	_cleanup_free_ char *id2 = cli_run_open(state, id, &rfd, NULL, &rc);
	if (id2 && !wait_ended(rfd)) {
		warn_line("run %s: its session was told to end; it is still ending (see 'warren show %s')", id, id);
		return 125;
	}
	printf("warren: ended %s\n", id);
	return 0;
}

