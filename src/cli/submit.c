/* SPDX-License-Identifier: Apache-2.0 */
/* submit.c - the CLI against a running `warren serve`: `warren submit` (a command or a job file
 * to its queue), and `warren logs --via` / `warren kill --via`. A small HTTP/1.0 client over
 * the server's unix socket or TCP (one request per connection, read to its end). */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/spec.h"
#include "run/history.h"
#include "run/id.h"
#include "run/rundir.h"
#include "util/fs.h"

struct via {
	char *spec;      /* unix:PATH or tcp:HOST:PORT */
	char *token;     /* for tcp, from --token-file */
};

static int via_connect(const struct via *v, struct error *err)
{
	if (!strncmp(v->spec, "unix:", 5)) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		if (strlen(v->spec + 5) >= sizeof sa.sun_path)
			return error_set(err, 0, "--via %s: the socket path is too long", v->spec);
		strcpy(sa.sun_path, v->spec + 5);
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
			int e = errno;
			closep(&fd);
			return error_set(err, e, "cannot reach warren serve at %s; is it running (warren serve --state ...)?", v->spec);
		}
		return fd;
	}
	if (strncmp(v->spec, "tcp:", 4))
		return error_set(err, 0, "--via '%s': give unix:PATH or tcp:HOST:PORT", v->spec);
	_cleanup_free_ char *host = xstrdup(v->spec + 4);
	char *colon = strrchr(host, ':');
	if (!colon)
		return error_set(err, 0, "--via '%s': give tcp:HOST:PORT", v->spec);
	*colon = '\0';
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	if (getaddrinfo(host, colon + 1, &hints, &ai))
		return error_set(err, 0, "--via %s: cannot resolve %s", v->spec, host);
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int r = fd < 0 ? -1 : connect(fd, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (r < 0) {
		int e = errno;
		closep(&fd);
		return error_set(err, e, "cannot reach warren serve at %s", v->spec);
	}
	return fd;
}

/* All of len bytes of b to the socket fd, without SIGPIPE: 0 or -errno. */
static int send_all(int fd, const char *b, size_t len)
{
	while (len) {
		ssize_t w = send(fd, b, len, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		b += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Send one request with len bytes of body of type; the connection (to read the answer from),
 * or -1 + err. */
static int request_n(const struct via *v, const char *method, const char *path, const char *type, const char *body,
		     size_t len, struct error *err)
{
	int fd = via_connect(v, err);
	if (fd < 0)
		return -1;
	_cleanup_free_ char *auth = v->token ? xasprintf("Authorization: Bearer %s\r\n", v->token) : xstrdup("");
	_cleanup_free_ char *head = xasprintf("%s %s HTTP/1.0\r\nHost: warren\r\n%sContent-Type: %s\r\n"
					      "Content-Length: %zu\r\n\r\n", method, path, auth, type, len);
	int r = send_all(fd, head, strlen(head));
	if (r == 0 && len)
		r = send_all(fd, body, len);
	/* a server that refuses the connection (too many of this user's: 503) answers and shuts it
	 * before the request is read: its answer is read all the same */
	if (r < 0 && r != -EPIPE && r != -ECONNRESET) {
		close(fd);
		error_set(err, -r, "cannot send the request to %s", v->spec);
		return -1;
	}
	return fd;
}

/* The same with a JSON body (NULL: none). */
static int request(const struct via *v, const char *method, const char *path, const char *body, struct error *err)
{
	return request_n(v, method, path, "application/json", body, body ? strlen(body) : 0, err);
}

/* Read the head of the answer: the status; *rest gets what came after the head. */
static int read_head(int fd, char **rest, size_t *rlen)
{
	char *b = NULL;
	size_t n = 0;
	char buf[4096];
	ssize_t r;
	char *end = NULL;
	while (!end && (r = read(fd, buf, sizeof buf)) > 0) {
		b = xrealloc(b, n + (size_t)r + 1);
		memcpy(b + n, buf, (size_t)r);
		b[n += (size_t)r] = '\0';
		end = strstr(b, "\r\n\r\n");
	}
	int status = 0;
	if (b && sscanf(b, "HTTP/%*s %d", &status) != 1)
		status = 0;
	*rlen = end ? n - (size_t)(end + 4 - b) : 0;
	*rest = xmalloc(*rlen + 1);
	if (end)
		memcpy(*rest, end + 4, *rlen);
	(*rest)[*rlen] = '\0';
	free(b);
	return status;
}

/* A whole request and answer: the status and the body parsed as JSON (NULL if it is not). */
static int call(const struct via *v, const char *method, const char *path, const char *body, json_t **out,
		struct error *err)
{
	_cleanup_close_ int fd = request(v, method, path, body, err);
	if (fd < 0)
		return -1;
	char *rest;
	size_t len;
	int status = read_head(fd, &rest, &len);
	char buf[65536];
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0) {
		rest = xrealloc(rest, len + (size_t)r + 1);
		memcpy(rest + len, buf, (size_t)r);
		rest[len += (size_t)r] = '\0';
	}
	*out = json_loadb(rest, len, 0, NULL);
	free(rest);
	if (!status)
		return error_set(err, 0, "warren serve at %s gave no HTTP answer", v->spec), -1;
	return status;
}

/* The server's error message of an answer, as one line for the user. */
static int fail_answer(int status, json_t *j)
{
	warn_line("the server refused (HTTP %d): %s", status,
		json_string_value(json_object_get(j, "error")) ?: "no reason given");
	json_decref(j);
	return 125;
}

/* Print the lines of an SSE stream of logs until its end. */
static int follow(const struct via *v, const char *id, const char *step, struct error *err)
{
	_cleanup_free_ char *path = xasprintf("/v1/runs/%s/logs?follow=1%s%s", id, step ? "&step=" : "", step ? step : "");
	_cleanup_close_ int fd = request(v, "GET", path, NULL, err);
	if (fd < 0)
		return -1;
	char *buf;
	size_t len;
	int status = read_head(fd, &buf, &len);
	if (status != 200) {
		free(buf);
		return error_set(err, 0, "warren serve at %s: logs of %s: HTTP %d", v->spec, id, status), -1;
	}
	char chunk[16384];
	ssize_t r;
	bool end = false;
	do {
		buf = xrealloc(buf, len + 1);
		buf[len] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			if (!strcmp(line, "event: end"))
				end = true;  /* its data is the stream's end offset, not the log */
			else if (!strncmp(line, "data: ", 6) && !end)
				printf("%s\n", line + 6);
			line = nl + 1;
		}
		len -= (size_t)(line - buf);
		memmove(buf, line, len);
		fflush(stdout);
		r = read(fd, chunk, sizeof chunk);
		if (r > 0) {
			buf = xrealloc(buf, len + (size_t)r + 1);
			memcpy(buf + len, chunk, (size_t)r);
			len += (size_t)r;
		}
	} while (r > 0);
	free(buf);
	return 0;
}

/* ---- options shared by submit, logs --via, kill --via ---- */

static int via_setup(struct via *v, const char *via, const char *state, const char *token_file, struct error *err)
{
	if (via) {
		v->spec = xstrdup(via);
	} else {
		/* root's own socket of a root server when we may reach it (root): no other user
		 * can fill its queue (serve.c) */
		_cleanup_free_ char *sd = statedir_default(state);
		_cleanup_free_ char *own = xasprintf("%s/serve/own.sock", sd);
		v->spec = access(own, W_OK) == 0 ? xasprintf("unix:%s", own) : xasprintf("unix:%s/serve.sock", sd);
	}
	if (token_file) {
		char *t = read_file(token_file, NULL);
		if (!t)
			return error_set(err, errno, "--token-file %s: cannot read it", token_file);
		t[strcspn(t, "\r\n")] = '\0';
		v->token = t;
	}
	return 0;
}

static void via_free(struct via *v)
{
	free(v->spec);
	free(v->token);
}

bool cli_has_via(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--via") || !strncmp(argv[i], "--via=", 6))
			return true;
	return false;
}

static const char SUBMIT_HELP[] =
	"usage: warren submit [--via unix:PATH|tcp:HOST:PORT] [--token-file F] [--work DIR]\n"
	"                     [--label K=V]... [--name N] [--env K=V]... [--time D] [--memory S]\n"
	"                     [--cpu-time D] [--pids N] [--output S] [--scratch S] [--cpus N] [--cpuset LIST]\n"
	"                     [--rootfs DIR | --image NAME] [--bind SRC[:DST]]... [--ro-bind SRC[:DST]]...\n"
	"                     [--net MODE] [--publish [ADDR:]HOSTPORT:CELLPORT]... [--follow] [--json]\n"
	"                     (--job FILE | -- COMMAND [ARG...])\n"
	"\n"
	"Queue a command (or a job file) on a running 'warren serve' (default: the socket\n"
	"<state>/serve.sock) and print its id and queue position. With --follow, print its output\n"
	"as it runs and exit with its exit status. The run is an ordinary warren run: 'warren\n"
	"history', 'warren show', 'warren logs' and 'warren kill' know it.\n"
	"--rootfs, --image, --bind, --ro-bind, --net and --publish are those of 'warren run', sent as\n"
	"the request's fields; the server checks them as 'warren run' does (the gate, its image\n"
	"store, the host's ports). A job file names its own (rootfs:, binds:, network:, publish:...).\n";

struct submit_opts {
	const char *via, *state, *token_file, *job;
	bool follow, json;
	json_t *req;
};

static int submit_parse(int argc, char **argv, struct submit_opts *o, struct error *err)
{
	enum { O_VIA = 256, O_STATE, O_TOKEN, O_WORK, O_LABEL, O_NAME, O_ENV, O_ROOTFS, O_NET, O_JOB, O_FOLLOW,
	       O_JSON, O_HELP, O_IMAGE, O_PUBLISH, O_BIND, O_RO_BIND, O_LIMIT };
	static const struct option opts[] = {
		{ "via", required_argument, NULL, O_VIA }, { "state", required_argument, NULL, O_STATE },
		{ "token-file", required_argument, NULL, O_TOKEN }, { "work", required_argument, NULL, O_WORK },
		{ "label", required_argument, NULL, O_LABEL }, { "name", required_argument, NULL, O_NAME },
		{ "env", required_argument, NULL, O_ENV }, { "rootfs", required_argument, NULL, O_ROOTFS },
		{ "net", required_argument, NULL, O_NET }, { "job", required_argument, NULL, O_JOB },
		{ "follow", no_argument, NULL, O_FOLLOW }, { "json", no_argument, NULL, O_JSON },
		{ "help", no_argument, NULL, O_HELP }, { "image", required_argument, NULL, O_IMAGE },
		{ "publish", required_argument, NULL, O_PUBLISH }, { "bind", required_argument, NULL, O_BIND },
		{ "ro-bind", required_argument, NULL, O_RO_BIND },
		LIMIT_OPTIONS(O_LIMIT), { NULL, 0, NULL, 0 },
	};
	json_t *r = o->req, *labels = json_object(), *env = json_object(), *limits = json_object();
	json_object_set_new(r, "labels", labels);
	json_object_set_new(r, "env", env);
	json_object_set_new(r, "limits", limits);
	opterr = 0;
	optind = 1;
	int c, idx = 0;
	while ((c = getopt_long(argc, argv, "+fh", opts, &idx)) != -1) {
		const char *eq = optarg ? strchr(optarg, '=') : NULL;
		switch (c) {
		case O_VIA: o->via = optarg; break;
		case O_STATE: o->state = optarg; break;
		case O_TOKEN: o->token_file = optarg; break;
		case O_JOB: o->job = optarg; break;
		case 'f': case O_FOLLOW: o->follow = true; break;
		case O_JSON: o->json = true; break;
		case 'h':
		case O_HELP: fputs(SUBMIT_HELP, stdout); return 1;
		case O_WORK: {
			_cleanup_free_ char *abs = abs_path(optarg);
			if (!abs)
				return error_set(err, errno, "--work %s: name an existing directory", optarg);
			json_object_set_new(r, "worktree", json_string(abs));
			break;
		}
		case O_ROOTFS: {
			_cleanup_free_ char *abs = abs_path(optarg);
			if (!abs)
				return error_set(err, errno, "--rootfs %s: name an existing directory", optarg);
			json_object_set_new(r, "rootfs", json_string(abs));
			break;
		}
		case O_NAME: json_object_set_new(r, "name", json_string(optarg)); break;
		case O_NET: json_object_set_new(r, "net", json_string(optarg)); break;
		case O_IMAGE: json_object_set_new(r, "image", json_string(optarg)); break;
		case O_PUBLISH: case O_BIND: case O_RO_BIND: {
			const char *f = c == O_PUBLISH ? "publish" : c == O_BIND ? "binds" : "ro-binds";
			if (!json_object_get(r, f))
				json_object_set_new(r, f, json_array());
			json_t *v = json_string(optarg);
			if (c != O_PUBLISH) {
				/* SRC made absolute here, as --work and --rootfs are: the server has no current
				 * directory of the caller's (DST defaults to SRC) */
				_cleanup_free_ char *src = xasprintf("%.*s", (int)strcspn(optarg, ":"), optarg);
				_cleanup_free_ char *abs = *src ? abs_path_would_be(src) : NULL;
				if (abs && strcmp(abs, src)) {
					json_decref(v);
					v = strchr(optarg, ':') ? json_sprintf("%s%s", abs, strchr(optarg, ':')) : json_string(abs);
				}
			}
			json_array_append_new(json_object_get(r, f), v);
			break;
		}
		case O_LABEL: case O_ENV:
			if (!eq)
				return error_set(err, 0, "--%s '%s': give KEY=VALUE", c == O_LABEL ? "label" : "env", optarg);
			json_object_set_new(c == O_LABEL ? labels : env, strndupa(optarg, (size_t)(eq - optarg)), json_string(eq + 1));
			break;
		case O_LIMIT: json_object_set_new(limits, opts[idx].name, json_string(optarg)); break;
		default: return error_set(err, 0, "%s: unknown option or missing value '%s' (see 'warren submit --help': those are the options a run sent to a server takes)",
					   argv[0], argv[optind - 1]);
		}
	}
	if (!json_object_get(r, "worktree")) {
		_cleanup_free_ char *cwd = abs_path(".");
		json_object_set_new(r, "worktree", json_string(cwd ? cwd : "/"));
	}
	return 0;
}

/* After --follow: wait for the run's end; its exit code (125 when it has none). */
static int wait_end(const struct via *v, const char *id, struct error *err)
{
	_cleanup_free_ char *path = xasprintf("/v1/runs/%s", id);
	for (;;) {
		json_t *j = NULL;
		int st = call(v, "GET", path, NULL, &j, err);
		if (st < 0)
			return -1;
		if (st != 200)
			return fail_answer(st, j);
		json_t *run = json_object_get(j, "run");
		const char *state = json_string_value(json_object_get(run, "state")) ?: "?";
		if (strcmp(state, "queued") && strcmp(state, "running")) {
			json_t *ec = json_object_get(run, "exit_code");
			const char *cause = json_string_value(json_object_get(json_object_get(run, "cause"), "message"));
			const char *e = json_string_value(json_object_get(run, "error"));
			if (cause || e)
				warn_line("%s %s: %s", id, state, cause ? cause : e);
			int rc = json_is_integer(ec) ? (int)json_integer_value(ec) : 125;
			json_decref(j);
			return rc;
		}
		json_decref(j);
		usleep(200000);
	}
}

/* The plain output of the run's step main (as GET /v1/runs/{id}/logs gives it) to stdout. */
static int print_log(const struct via *v, const char *id, struct error *err)
{
	_cleanup_free_ char *path = xasprintf("/v1/runs/%s/logs?step=main", id);
	_cleanup_close_ int fd = request(v, "GET", path, NULL, err);
	if (fd < 0)
		return -1;
	char *rest;
	size_t len;
	int status = read_head(fd, &rest, &len);
	if (status == 200 && len)
		write_all(STDOUT_FILENO, rest, len);
	free(rest);
	char buf[65536];
	ssize_t r;
	while (status == 200 && (r = read(fd, buf, sizeof buf)) > 0)
		write_all(STDOUT_FILENO, buf, (size_t)r);
	return 0;
}

/* The request's command (argv from optind) and its maps without the empty ones; then the
 * server named by --via (or the state directory's socket). */
static int request_ready(struct submit_opts *o, int argc, char **argv, bool command, struct via *v, struct error *err)
{
	if (command) {
		json_t *cmd = json_array();
		for (int i = optind; i < argc; i++)
			json_array_append_new(cmd, json_string(argv[i]));
		json_object_set_new(o->req, "command", cmd);
	}
	static const char *const maps[] = { "labels", "env", "limits" };
	for (size_t i = 0; i < 3; i++)
		if (!json_object_size(json_object_get(o->req, maps[i])))
			json_object_del(o->req, maps[i]);
	return via_setup(v, o->via, o->state, o->token_file, err);
}

/* POST the request REQ to PATH: 0 with *ans the server's answer when it made the run (201);
 * else the exit status to end with (125), the reason said on stderr. */
static int post_run(const struct via *v, const char *path, json_t *req, json_t **ans, struct error *err)
{
	_cleanup_free_ char *body = json_dumps(req, JSON_COMPACT);
	int st = call(v, "POST", path, body, ans, err);
	if (st < 0)
		return cli_fail(err);
	if (st == 201)
		return 0;
	int rc = fail_answer(st, *ans);
	*ans = NULL;
	return rc;
}

/* `warren run --via unix:PATH|tcp:HOST:PORT [OPTIONS] -- COMMAND...`: a plain run sent to a
 * server (POST /v1/runs?wait=1), which gives it a warm cell when its shape is the pool's and
 * starts it cold when not (said on stderr); its output once it ended, its exit status. */
int cmd_run_via(int argc, char **argv)
{
	_cleanup_error_ struct error err = { 0 };
	struct submit_opts o = { .req = json_object() };
	struct via v = { 0 };
	int r = submit_parse(argc, argv, &o, &err);
	if (r == 0 && (o.job || o.follow || o.json))
		r = error_set(&err, 0, "run --via: --job, --follow and --json are options of 'warren submit'");
	if (r == 0 && optind >= argc)
		r = error_set(&err, 0, "run --via: no command given; usage: warren run --via SOCKET [OPTIONS] -- COMMAND [ARG...]");
	if (r == 0)
		r = request_ready(&o, argc, argv, true, &v, &err);
	json_t *ans = NULL;
	int rc = r > 0 ? 0 : r < 0 ? cli_fail(&err) : post_run(&v, "/v1/runs?wait=1", o.req, &ans, &err);
	if (r == 0 && rc == 0) {
		const char *id = json_string_value(json_object_get(ans, "id")) ?: "?";
		json_t *ec = json_object_get(ans, "exit_code");
		rc = json_is_integer(ec) ? (int)json_integer_value(ec) : 125;
		if (print_log(&v, id, &err) < 0)
			rc = cli_fail(&err);
		_cleanup_free_ char *detail = xasprintf("/v1/runs/%s", id);
		json_t *d = NULL;
		if (call(&v, "GET", detail, NULL, &d, &err) == 200) {
			json_t *run = json_object_get(d, "run");
			const char *start = json_string_value(json_object_get(run, "start"));
			const char *why = json_string_value(json_object_get(run, "start_why"));
			const char *cause = json_string_value(json_object_get(json_object_get(run, "cause"), "message"));
			const char *e = json_string_value(json_object_get(run, "error"));
			if (start && !strcmp(start, "cold"))
				warn_line("%s started cold: %s", id, why ? why : "the server keeps no warm cells");
			if (cause || e)
				warn_line("%s %s: %s", id, json_string_value(json_object_get(run, "state")) ?: "?",
					  cause ? cause : e);
		}
		json_decref(d);
	}
	json_decref(ans);
	json_decref(o.req);
	via_free(&v);
	return rc;
}

int cmd_submit(int argc, char **argv)
{
	_cleanup_error_ struct error err = { 0 };
	struct submit_opts o = { .req = json_object() };
	struct via v = { 0 };
	int rc, r = submit_parse(argc, argv, &o, &err);
	if (r == 0 && o.job && optind < argc)
		r = error_set(&err, 0, "submit: give --job FILE or a command after --, not both");
	if (r == 0 && !o.job && optind >= argc)
		r = error_set(&err, 0, "submit: no command given; usage: warren submit [OPTIONS] -- COMMAND [ARG...] (or --job FILE)");
	if (r == 0 && o.job) {
		char *text = read_file(o.job, NULL);
		if (!text)
			r = error_set(&err, errno, "--job %s: cannot read it", o.job);
		else
			json_object_set_new(o.req, "job", json_string(text));
		free(text);
	}
	if (r == 0)
		r = request_ready(&o, argc, argv, !o.job, &v, &err);
	json_t *ans = NULL;
	rc = r > 0 ? 0 : r < 0 ? cli_fail(&err) : post_run(&v, "/v1/runs", o.req, &ans, &err);
	if (r == 0 && rc == 0) {
		const char *id = json_string_value(json_object_get(ans, "id")) ?: "?";
		if (o.json) {
			_cleanup_free_ char *t = json_dumps(ans, JSON_INDENT(2));
			printf("%s\n", t);
		} else {
			fprintf(o.follow ? stderr : stdout, "%s queued (position %lld)\n", id,
				(long long)json_integer_value(json_object_get(ans, "queue_position")));
		}
		fflush(stdout);
		if (o.follow && (follow(&v, id, NULL, &err) < 0 || (rc = wait_end(&v, id, &err)) < 0))
			rc = cli_fail(&err);
	}
	json_decref(ans);
	json_decref(o.req);
	via_free(&v);
	return rc;
}

/* `warren logs RUN [STEP] --via X [-f]` and `warren kill RUN --via X` (help: the command's
 * --help). */
static int via_cmd(int argc, char **argv, bool kill, const char *help)
{
	enum { O_VIA = 256, O_TOKEN, O_STATE, O_FOLLOW, O_HELP };
	static const struct option opts[] = {
		{ "via", required_argument, NULL, O_VIA }, { "token-file", required_argument, NULL, O_TOKEN },
		{ "state", required_argument, NULL, O_STATE }, { "follow", no_argument, NULL, O_FOLLOW },
		{ "help", no_argument, NULL, O_HELP }, { NULL, 0, NULL, 0 },
	};
	const char *via = NULL, *token = NULL, *state = NULL;
	bool fol = false;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "fh", opts, NULL)) != -1) {
		switch (c) {
		case 'h': case O_HELP: fputs(help, stdout); return 0;
		case O_VIA: via = optarg; break;
		case O_TOKEN: token = optarg; break;
		case O_STATE: state = optarg; break;
		case 'f': case O_FOLLOW: fol = true; break;
		default: return cli_usage_error(argv[0], "%s: unknown option or missing value '%s'", argv[0], argv[optind - 1]);
		}
	}
	if (optind >= argc || !run_id_valid(argv[optind]) || argc - optind > (kill ? 1 : 2))
		return cli_usage_error(argv[0], "%s --via takes a full run id (run_...)%s", argv[0], kill ? "" : " and a step");
	const char *id = argv[optind], *step = kill ? NULL : argv[optind + 1];
	_cleanup_error_ struct error err = { 0 };
	struct via v = { 0 };
	int rc = 0;
	json_t *ans = NULL;
	if (via_setup(&v, via, state, token, &err) < 0) {
		rc = cli_fail(&err);
	} else if (kill) {
		_cleanup_free_ char *p = xasprintf("/v1/runs/%s/kill", id);
		int st = call(&v, "POST", p, "", &ans, &err);
		rc = st < 0 ? cli_fail(&err) : st != 202 ? fail_answer(st, ans) : 0;
		if (st == 202)
			json_decref(ans);
	} else if (fol) {
		if (follow(&v, id, step, &err) < 0)
			rc = cli_fail(&err);
	} else {
		_cleanup_free_ char *p = xasprintf("/v1/runs/%s/logs%s%s", id, step ? "?step=" : "", step ? step : "");
		_cleanup_close_ int fd = request(&v, "GET", p, NULL, &err);
		char *rest;
		size_t len;
		int st = fd < 0 ? -1 : read_head(fd, &rest, &len);
		if (st < 0) {
			rc = cli_fail(&err);
		} else {
			fwrite(rest, 1, len, st == 200 ? stdout : stderr);
			free(rest);
			char b[65536];
			ssize_t n;
			while ((n = read(fd, b, sizeof b)) > 0)
				fwrite(b, 1, (size_t)n, st == 200 ? stdout : stderr);
			rc = st == 200 ? 0 : 125;
		}
	}
	via_free(&v);
	return rc;
}

int cmd_logs_via(int argc, char **argv, const char *help)
{
	return via_cmd(argc, argv, false, help);
}

int cmd_kill_via(int argc, char **argv, const char *help)
{
	return via_cmd(argc, argv, true, help);
}

int cli_via_request(const char *via, const char *state, const char *token_file, const char *method, const char *path,
		    const char *body, int *status, char **rest, size_t *rlen, struct error *err)
{
	return cli_via_request_n(via, state, token_file, method, path, "application/json", body, body ? strlen(body) : 0,
				 status, rest, rlen, err);
}

int cli_via_request_n(const char *via, const char *state, const char *token_file, const char *method, const char *path,
		      const char *type, const char *body, size_t len, int *status, char **rest, size_t *rlen,
		      struct error *err)
{
	struct via v = { 0 };
	int fd = via_setup(&v, via, state, token_file, err) < 0 ? -1 : request_n(&v, method, path, type, body, len, err);
	if (fd >= 0) {
		*status = read_head(fd, rest, rlen);
		if (!*status) {
			error_set(err, 0, "warren serve at %s gave no HTTP answer", v.spec);
			free(*rest);
			closep(&fd);
		}
	}
	via_free(&v);
	return fd;
}
