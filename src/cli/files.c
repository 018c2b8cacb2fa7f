/* SPDX-License-Identifier: Apache-2.0 */
/* files.c - `warren files get|put|ls RUN PATH`: a live session's files (cli/files.h), over the
 * run's own socket (job/files.h: a JSON line, then the bytes) or through a warren serve (--via:
 * GET and PUT /v1/runs/{id}/files); and the calls under them, which warren mcp makes too. */
#include "cli/files.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "job/files.h"
#include "job/session.h"
#include "run/id.h"
#include "run/rundir.h"
#include "util/fs.h"

static const char FILES_HELP[] =
	"usage: warren files get [--state DIR | --via SOCKET [--token-file F]] RUN PATH\n"
	"       warren files put [--mode MODE] [--parents] [--state DIR | --via ...] RUN PATH\n"
	"       warren files ls [--json] [--state DIR | --via ...] RUN [PATH]\n\n"
	"Read, write or list the files of a live session's cell (a job with session:), as its run\n"
	"user does inside the cell: get prints PATH's bytes on standard output, put writes standard\n"
	"input's to PATH (created or truncated), ls lists the directory PATH (default: the\n"
	"worktree). PATH is the cell's: absolute, or relative to the worktree; only below the\n"
	"worktree, /tmp ($TMPDIR) and the home; symbolic links are followed only while they stay\n"
	"below them, and a write through a link is refused. At most 64 MiB a file. Exit 0, or 125\n"
	"after one line.\n\n"
	"  --mode MODE         put: the file's permissions, octal (e.g. 0755)\n"
	"  --parents           put: make the missing directories above PATH\n"
	"  --json              ls: the answer as JSON (name, type, size, mode, mtime, target)\n"
	"  --state DIR         the state directory of the run\n"
	"  --via SOCKET        through a warren serve (unix:PATH or tcp:HOST:PORT; RUN a full id)\n"
	"  --token-file F      the server's token, for tcp:\n";

/* Where the bytes of a read go: fd, or (fd < 0) a heap buffer. */
struct sink {
	int fd;
	char *buf;
	size_t len;
};

static int sink_put(struct sink *k, const char *b, size_t n, struct error *err)
{
	if (k->len + n > EXEC_FILE_MAX)
		return error_set(err, 0, "the file is over %d MiB, the most a read takes", EXEC_FILE_MAX >> 20);
	if (k->fd >= 0 && write_all(k->fd, b, n) < 0)
		return error_set(err, errno, "cannot write the file's bytes out");
	if (k->fd < 0) {
		k->buf = xrealloc(k->buf, k->len + n + 1);
		memcpy(k->buf + k->len, b, n);
		k->buf[k->len + n] = '\0';
	}
	k->len += n;
	return 0;
}

/* All of len bytes to the socket fd, without SIGPIPE: 0 or -errno. */
static int send_all(int fd, const void *b, size_t len)
{
	for (size_t w = 0; w < len;) {
		ssize_t n = send(fd, (const char *)b + w, len - w, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		w += (size_t)n;
	}
	return 0;
}

/* The refusal j ({"error"}) of run id as err's line. */
static int refusal(json_t *j, const char *id, struct error *err)
{
	const char *e = json_string_value(json_object_get(j, "error"));
	if (e && strstr(e, id))
		return error_set(err, 0, "%s", e);
	return error_set(err, 0, "run %s: %s", id, e ? e : "its session refused the request");
}

/* ---- over the run's own socket ---- */

/* The session of run (id or prefix) in at's state directory, connected; its full id in *id.
 * -1 after err. */
static int dial(const struct cli_files_at *at, const char *run, char **id, struct error *err)
{
	_cleanup_free_ char *state = statedir_default(at->state);
	struct statedir sd;
	if (statedir_open(&sd, state, false, err) < 0) {
		if (err->errnum == ENOENT)
			error_set(err, 0, "no run %s in %s: it holds no runs", run, state);
		return -1;
	}
	_cleanup_free_ char *full = runs_resolve(&sd, run, err);
	_cleanup_close_ int rfd = full ? rundir_open(&sd, full, err) : -1;
	statedir_close(&sd);
	if (rfd < 0)
		return -1;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/%s", rfd, SESSION_SOCK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
		*id = steal_pointer(&full);
		return fd;
	}
	int e = errno;
	closep(&fd);
	if (e == EACCES || e == EPERM)
		error_set(err, 0, "run %s: its session is not yours (only its owner or root may use it)", full);
	else if (!rundir_is_live(rfd))
		error_set(err, 0, "run %s has ended; its files need a live session (see 'warren show %s')", full, full);
	else
		error_set(err, 0, "run %s is not a session (session: in its job), or its session is not ready yet: its files are reached only while it takes requests", full);
	return -1;
}

/* Send req (taken) and len bytes of body on the session fd of run id; its answer's first line
 * (NULL after err). */
static json_t *ask(int fd, const char *id, json_t *req, const void *body, size_t len, struct error *err)
{
	_cleanup_free_ char *t = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	_cleanup_free_ char *line = xasprintf("%s\n", t ? t : "{}");
	int r = send_all(fd, line, strlen(line));
	if (r == 0 && len)
		r = send_all(fd, body, len);
	/* (refused before it was all read: the answer waits all the same) */
	if (r < 0 && r != -EPIPE && r != -ECONNRESET) {
		error_set(err, -r, "run %s: cannot send the request to its session", id);
		return NULL;
	}
	_cleanup_free_ char *ans = cli_line_from(fd);
	json_t *j = ans ? json_loads(ans, 0, NULL) : NULL;
	if (!j)
		error_set(err, 0, "run %s: its session ended before it answered (see 'warren show %s')", id, id);
	else if (json_object_get(j, "error")) {
		refusal(j, id, err);
		json_decref(j);
		j = NULL;
	}
	return j;
}

/* The request req (taken) with body on run's own socket; the answer and the connection (*fd). */
static json_t *direct(const struct cli_files_at *at, const char *run, json_t *req, const void *body, size_t len,
		      int *fd, char **id, struct error *err)
{
	*fd = dial(at, run, id, err);
	if (*fd < 0) {
		json_decref(req);
		return NULL;
	}
	return ask(*fd, *id, req, body, len, err);
}

/* ---- through a warren serve ---- */

/* path, percent-encoded for a query */
static char *query_encode(const char *s)
{
	char *o = xmalloc(strlen(s) * 3 + 1), *p = o;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr("-._~/", *c))
			*p++ = (char)*c;
		else
			p += sprintf(p, "%%%02X", *c);
	}
	*p = '\0';
	return o;
}

/* method on /v1/runs/{run}/files?path=P&extra (body: len bytes of it); the status, the
 * answer's body whole (*ans, heap) or, to sink (200 only), its bytes. -1 after err. */
static int via(const struct cli_files_at *at, const char *method, const char *run, const char *path, const char *extra,
	       const void *body, size_t len, struct sink *sink, char **ans, struct error *err)
{
	if (!run_id_valid(run))
		return error_set(err, 0, "--via takes a full run id (run_...), not '%s'", run), -1;
	_cleanup_free_ char *enc = query_encode(path);
	_cleanup_free_ char *url = xasprintf("/v1/runs/%s/files?path=%s%s", run, enc, extra);
	int status;
	char *rest = NULL;
	size_t rlen = 0;
	_cleanup_close_ int fd = cli_via_request_n(at->via, at->state, at->token_file, method, url, "application/octet-stream",
						   body, len, &status, &rest, &rlen, err);
	if (fd < 0)
		return -1;
	struct sink whole = { .fd = -1 }, *k = status == 200 && sink ? sink : &whole;
	int r = sink_put(k, rest, rlen, err);
	free(rest);
	char buf[65536];
	ssize_t n;
	while (r == 0 && ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0)
			r = sink_put(k, buf, (size_t)n, err);
	if (r < 0) {
		free(whole.buf);
		return -1;
	}
	*ans = whole.buf ? whole.buf : xstrdup("");
	return status;
}

/* A serve's answer ans of status: its JSON when 200, else NULL after err. */
static json_t *via_json(int status, char *ans, const char *run, struct error *err)
{
	json_t *j = json_loads(ans, 0, NULL);
	free(ans);
	if (status == 200 && j)
		return j;
	if (status == 200 || !json_object_get(j, "error"))
		error_set(err, 0, "run %s: the server answered %d without a JSON answer", run, status);
	else
		refusal(j, run, err);
	json_decref(j);
	return NULL;
}

/* ---- the calls ---- */

static int read_to(const struct cli_files_at *at, const char *run, const char *path, struct sink *k, struct error *err)
{
	if (at->via) {
		char *ans = NULL;
		int st = via(at, "GET", run, path, "", NULL, 0, k, &ans, err);
		if (st == 200)
			free(ans);
		else if (st > 0)
			json_decref(via_json(st, ans, run, err));
		return st == 200 ? 0 : -1;
	}
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *id = NULL;
	json_t *j = direct(at, run, json_pack("{s:s,s:s}", "op", "read", "path", path), NULL, 0, &fd, &id, err);
	if (!j)
		return -1;
	uint64_t size = (uint64_t)json_integer_value(json_object_get(j, "size"));
	json_decref(j);
	char buf[65536];
	while (size) {
		ssize_t n = read(fd, buf, size < sizeof buf ? (size_t)size : sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return error_set(err, n < 0 ? errno : 0, "run %s: the session ended before %s was whole", id, path), -1;
		if (sink_put(k, buf, (size_t)n, err) < 0)
			return -1;
		size -= (uint64_t)n;
	}
	return 0;
}

int cli_file_read_fd(const struct cli_files_at *at, const char *run, const char *path, int out, struct error *err)
{
	struct sink k = { .fd = out };
	return read_to(at, run, path, &k, err);
}

char *cli_file_read(const struct cli_files_at *at, const char *run, const char *path, size_t *len, struct error *err)
{
	struct sink k = { .fd = -1 };
	if (read_to(at, run, path, &k, err) < 0) {
		free(k.buf);
		return NULL;
	}
	*len = k.len;
	return k.buf ? k.buf : xstrdup("");
}

int cli_file_write(const struct cli_files_at *at, const char *run, const char *path, const void *data, size_t len,
		   const char *mode, bool parents, struct error *err)
{
	if (len > EXEC_FILE_MAX)
		return error_set(err, 0, "%s: %zu bytes, over the %d MiB a write takes", path, len, EXEC_FILE_MAX >> 20), -1;
	json_t *j;
	if (at->via) {
		_cleanup_free_ char *m = mode ? query_encode(mode) : NULL;
		_cleanup_free_ char *extra = xasprintf("%s%s%s", m ? "&mode=" : "", m ? m : "", parents ? "&parents=1" : "");
		char *ans = NULL;
		int st = via(at, "PUT", run, path, extra, data, len, NULL, &ans, err);
		j = st > 0 ? via_json(st, ans, run, err) : NULL;
	} else {
		_cleanup_close_ int fd = -1;
		_cleanup_free_ char *id = NULL;
		json_t *req = json_pack("{s:s,s:s,s:I,s:b}", "op", "write", "path", path, "size", (json_int_t)len, "parents", parents);
		if (mode)
			json_object_set_new(req, "mode", json_string(mode));
		j = direct(at, run, req, data, len, &fd, &id, err);
	}
	json_decref(j);
	return j ? 0 : -1;
}

json_t *cli_file_list(const struct cli_files_at *at, const char *run, const char *path, struct error *err)
{
	if (at->via) {
		char *ans = NULL;
		int st = via(at, "GET", run, path, "&list=1", NULL, 0, NULL, &ans, err);
		return st > 0 ? via_json(st, ans, run, err) : NULL;
	}
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *id = NULL;
	return direct(at, run, json_pack("{s:s,s:s}", "op", "list", "path", path), NULL, 0, &fd, &id, err);
}

/* ---- warren files ---- */

/* Standard input, at most EXEC_FILE_MAX bytes (heap, *len); NULL after err. */
static char *read_stdin(size_t *len, struct error *err)
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
		if (r <= 0 || *len + (size_t)r > EXEC_FILE_MAX) {
			if (r < 0)
				error_set(err, errno, "cannot read standard input");
			else if (r > 0)
				error_set(err, 0, "standard input is over %d MiB, the most a write takes", EXEC_FILE_MAX >> 20);
			if (r == 0)
				return b;
			free(b);
			return NULL;
		}
		*len += (size_t)r;
	}
}

/* ls's answer as lines: type, mode, size, mtime, name (-> target). */
static void print_list(json_t *j)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(j, "entries"), i, e) {
		const char *t = json_string_value(json_object_get(e, "target"));
		json_t *size = json_object_get(e, "size");
		const char *mode = json_string_value(json_object_get(e, "mode"));
		const char *mtime = json_string_value(json_object_get(e, "mtime"));
		char sz[32] = "-";
		if (json_is_integer(size))
			snprintf(sz, sizeof sz, "%lld", (long long)json_integer_value(size));
		printf("%-7s %-4s %10s %-24s %s%s%s\n", json_string_value(json_object_get(e, "type")), mode ? mode : "-", sz,
		       mtime ? mtime : "-", json_string_value(json_object_get(e, "name")), t ? " -> " : "", t ? t : "");
	}
	if (json_is_true(json_object_get(j, "truncated")))
		warn_line("%s: only its first %d entries are listed", json_string_value(json_object_get(j, "path")), EXEC_FILE_LIST_MAX);
}

struct files_opts {
	struct cli_files_at at;
	const char *mode;
	bool parents, json;
};

/* The options anywhere among the words; the operands' index, or -1 - the exit code. */
static int files_opts(int argc, char **argv, struct files_opts *o)
{
	enum { O_STATE = 256, O_HELP, O_VIA, O_TOKEN, O_MODE, O_PARENTS, O_JSON };
	static const struct option opts[] = { { "state", required_argument, NULL, O_STATE },
					      { "via", required_argument, NULL, O_VIA },
					      { "token-file", required_argument, NULL, O_TOKEN },
					      { "mode", required_argument, NULL, O_MODE },
					      { "parents", no_argument, NULL, O_PARENTS },
					      { "json", no_argument, NULL, O_JSON },
					      { "help", no_argument, NULL, O_HELP },
					      { NULL, 0, NULL, 0 } };
	_cleanup_error_ struct error perr = { 0 };
	optind = 1;
	int c, m;
	const char *why;
	while ((c = cli_getopt(argc, argv, "", opts, "files", &perr)) != -1) {
		switch (c) {
		case O_STATE: o->at.state = optarg; break;
		case O_VIA: o->at.via = optarg; break;
		case O_TOKEN: o->at.token_file = optarg; break;
		case O_MODE:
			if (files_parse_mode(optarg, &m, &why) < 0)
				return -1 - cli_usage_error("files", "--mode '%s': %s", optarg, why);
			o->mode = optarg;
			break;
		case O_PARENTS: o->parents = true; break;
		case O_JSON: o->json = true; break;
		case O_HELP: fputs(FILES_HELP, stdout); return -1;
		default: return -1 - cli_fail(&perr);
		}
	}
	return optind;
}

int cmd_files(int argc, char **argv)
{
	struct files_opts o = { 0 };
	int i = files_opts(argc, argv, &o);
	if (i < 0)
		return -1 - i;
	const char *sub = i < argc ? argv[i] : NULL;
	int nargs = argc - i - 1;
	bool ls = sub && (!strcmp(sub, "ls") || !strcmp(sub, "list"));
	if (!sub || (strcmp(sub, "get") && strcmp(sub, "put") && !ls))
		return cli_usage_error("files", "files takes get, put or ls: files get RUN PATH");
	if (nargs != 2 && !(ls && nargs == 1))
		return cli_usage_error("files", ls ? "files ls takes a run and a directory: files ls RUN [PATH]"
						   : "files %s takes a run and a path: files %s RUN PATH", sub, sub);
	if ((o.mode || o.parents) && strcmp(sub, "put"))
		return cli_usage_error("files", "--mode and --parents are put's");
	if (o.json && !ls)
		return cli_usage_error("files", "--json is ls's");
	const char *run = argv[i + 1], *path = nargs == 2 ? argv[i + 2] : ".";
	_cleanup_error_ struct error err = { 0 };
	if (!strcmp(sub, "get"))
		return cli_file_read_fd(&o.at, run, path, 1, &err) < 0 ? cli_fail(&err) : 0;
	if (!strcmp(sub, "put")) {
		size_t len;
		_cleanup_free_ char *data = read_stdin(&len, &err);
		if (!data || cli_file_write(&o.at, run, path, data, len, o.mode, o.parents, &err) < 0)
			return cli_fail(&err);
		return 0;
	}
	json_t *j = cli_file_list(&o.at, run, path, &err);
	if (!j)
		return cli_fail(&err);
	if (o.json) {
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
	} else {
		print_list(j);
	}
	json_decref(j);
	return 0;
}
