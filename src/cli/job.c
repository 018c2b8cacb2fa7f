/* SPDX-License-Identifier: Apache-2.0 */
/* job.c - `warren job run FILE`, `warren logs RUN [STEP]` and `warren kill RUN`. */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <sys/inotify.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/history.h"
#include "cli/spec.h"
#include "job/jobfile.h"
#include "job/logname.h"
#include "job/runner.h"
#include "run/rundir.h"
#include "supervise/supervise.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/units.h"
#include "util/words.h"
#include "util/strv.h"

static const char JOB_HELP[] =
	"usage: warren job run FILE [--work DIR] [--rootfs DIR | --image NAME] [--keep] [--json] [--quiet] [--prefix] [--user UID[:GID]] [--state DIR]\n"
	"       warren job check FILE [--work DIR] [--json]\n"
	"\n"
	"Run a job file: its services, then its steps in order, in one fresh cell (files, /tmp and\n"
	"services persist across steps; the scratch is reclaimed at the end). The run's id is\n"
	"printed first. Each step's output goes to the record's log/ (see 'warren logs').\n"
	"\n"
	"  --work DIR  the worktree, instead of the job file's work: (a job file may only name\n"
	"              directories below its own, and steps may not leave the worktree)\n"
	"  --rootfs DIR, --image NAME   the cell's root, instead of the job file's rootfs: or\n"
	"              image: (a job file's rootfs: may only name a directory below its own)\n"
	"  --work none, --work-ro, --workdir PATH, --hostname NAME, --externals DIR,\n"
	"  --bind SRC[:DST], --ro-bind SRC[:DST]   as for 'warren run' (they win over the job\n"
	"              file's keys; its binds: and ro-binds: come first, and may only name\n"
	"              directories below its own)\n"
	"  --keep      keep the scratch after the job\n"
	"  --json      print result.json on stdout at the end (the view goes to stderr)\n"
	"  --quiet     do not show the steps' output (it is still in the logs)\n"
	"  --prefix    when not on a terminal, prefix each output line with its step's name\n"
	"  --result FILE, --result-fd N   also write result.json there\n"
	HIST_HELP
	"\n"
	"'job check FILE' reports every mistake in FILE (file:line:column) and starts nothing;\n"
	"with --json, as {\"file\", \"ok\", \"services\", \"steps\", \"errors\": [{line, column,\n"
	"message}]} on stdout.\n"
	"Exit status: the failing step's (124 when a time limit stopped it), 0 when all passed,\n"
	"125 when the job file is wrong or warren failed.\n";

/* "file:LINE:COL: ..." lines in the order of the file */
static long line_key(const char *l)
{
	const char *p = strchr(l, ':');
	if (!p)
		return 0;
	char *end;
	long line = strtol(p + 1, &end, 10);
	long col = *end == ':' ? strtol(end + 1, NULL, 10) : 0;
	return line * 100000 + col;
}

static int cmp_lines(const void *a, const void *b)
{
	long x = line_key(*(char *const *)a), y = line_key(*(char *const *)b);
	return x < y ? -1 : x > y;
}

/* Load the job file (its text when given, already read: a warm cell's run from the server),
 * saying each mistake on a line of its own. */
static int load_text(const char *file, const char *text, const char *work, bool api, struct job *job)
{
	char *errors = NULL;
	_cleanup_free_ char *work_abs = work && !strcmp(work, CELLSPEC_WORK_NONE) ? xstrdup(work) : work ? abs_path(work) : NULL;
	if (work && !work_abs) {
		warn_line("--work %s: %s; name an existing directory", work, strerror(errno));
		return -1;
	}
	/* a job sent to the server: its own paths resolve in, and stay below, the request's worktree */
	const char *api_work = api ? (work_abs && strcmp(work_abs, CELLSPEC_WORK_NONE) ? work_abs : "/nonexistent") : NULL;
	if ((text ? job_parse(file, text, strlen(text), work_abs, api_work, job, &errors)
		  : job_load(file, work_abs, api_work, job, &errors)) < 0) {
		/* every mistake on a line of its own, in the file's order, prefixed like every
		 * warren error */
		char **lines = NULL;
		size_t n = 0;
		for (char *save = NULL, *l = strtok_r(errors, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			lines = xrealloc(lines, (n + 1) * sizeof *lines);
			lines[n++] = l;
		}
		if (n)
			qsort(lines, n, sizeof *lines, cmp_lines);
		for (size_t i = 0; i < n; i++)
			warn_line("%s", lines[i]);
		free(lines);
		free(errors);
		job_free(job);
		return -1;
	}
	return 0;
}

static int load(const char *file, const char *work, bool api, struct job *job)
{
	return load_text(file, NULL, work, api, job);
}

/* What `job run` takes from its command line to make a job's cell spec. */
struct job_args {
	struct cell_opts co;
	bool work_ro, keep;
	bool api;                 /* --api (warren serve's): the job was sent to the server (cell/gate.h) */
	const char *state, *user, *work;
	const char *rootfs, *image;   /* --rootfs, --image: the command line's root wins over the file's */
};

static void job_args_free(struct job_args *a)
{
	cell_opts_free(&a->co);
}

/* The cell spec of job, as `job run` makes it (the command line's options over the job file's);
 * hist is moved into it. */
static int job_cell_spec(const struct job_args *a, const struct job *job, struct hist_opts *hist, struct cell_spec *s,
			 struct error *err)
{
	s->limits = job->limits;
	s->limits.time_ms = job->timeout_ms;
	s->net = job->net;
	s->keep = a->keep;
	s->statedir = statedir_default(a->state);
	hist_opts_apply(hist, s);
	s->driver = job->driver;
	s->worktree_ro = a->work_ro || job->work_ro;
	/* the job file's binds, then the command line's; --externals, --workdir and --hostname
	 * of the command line win */
	__attribute__((cleanup(cell_opts_free))) struct cell_opts jo = { 0 };
	for (size_t i = 0; i < job->n_binds; i++)
		cell_opts_take(&jo, job->binds[i].ro ? "ro-bind" : "bind", job->binds[i].arg);
	for (size_t i = 0; i < a->co.n_binds; i++)
		cell_opts_take(&jo, a->co.binds[i].ro ? "ro-bind" : "bind", a->co.binds[i].arg);
	for (size_t i = 0; i < job->n_binds; i++)
		jo.binds[i].face = job->face;   /* the job file's own binds, put to the gate as its */
	jo.externals = a->co.externals ? a->co.externals : job->externals;
	jo.externals_face = a->co.externals ? GATE_CLI : job->face;
	s->root_face = a->rootfs || a->image ? GATE_CLI : job->face;
	const char *rootfs = a->rootfs ? a->rootfs : a->image ? NULL : job->rootfs;
	const char *image = a->image ? a->image : a->rootfs ? NULL : job->image;
	s->work_face = a->work ? GATE_CLI : job->face;
	s->anchor = job->anchor ? xstrdup(job->anchor) : NULL;
	jo.workdir = a->co.workdir ? a->co.workdir : job->workdir;
	jo.hostname = a->co.hostname ? a->co.hostname : job->hostname;
	if (cellspec_user(s, a->user, err) < 0 || cellspec_paths(s, rootfs, job->work, err) < 0 ||
	    cellspec_cell_opts(s, &jo, err) < 0 || cellspec_finish(s, err) < 0 || cellspec_image(s, image, err) < 0)
		return -EINVAL;
	s->argv = xcalloc(3, sizeof *s->argv);
	s->argv[0] = xstrdup("warren-job");
	s->argv[1] = xstrdup(job->path);
	struct envb late = { 0 };
	for (char **e = job->env; e && *e; e++)
		env_set(&late, *e);
	cellspec_env(s, &late);
	envb_free(&late);
	return 0;
}

/* ---- a warm cell (`job run --warm-fd N`, started by `warren serve --warm`) ----
 * Over the server's socket (one JSON datagram each): we say {"ready": true, "digest"} once the
 * cell waits; the server sends the run that takes it {"job": FILE, "job_text": its text (then
 * FILE is only its name: not written), "work": DIR, "labels": ["k=v"...], "name", "command"},
 * with a socket for the run's end (SCM_RIGHTS); we start it (nothing said: a word here woke
 * the server's loop for nothing while the job was starting), or say {"cold": WHY} and start
 * it cold ourselves (same run id); then {"exit_code", "status", "start"} as soon as the
 * job's end is known on that socket (the waiting connection's), and on the server's once the
 * cell is gone (at once when no connection took it). */
struct warm {
	int fd;
	const struct job_args *a;
	const char *run_id, *db;
	struct job job;
	struct cell_spec s;       /* the run's, built as for a cold start */
	bool loaded;
	struct error err;         /* why its spec could not be made (the run fails with it) */
	const char *why;          /* why it is cold */
	char **command;           /* a plain command's argv (the server's "command"), or NULL */
	bool ended;               /* its end was said to the server's loop (before the record) */
	int end_fd;               /* the socket of the connection waiting for the run's end, sent with
	                             the run (-1: none): told first, without the server's loop between */
};

static void warm_say(struct warm *w, json_t *j)
{
	_cleanup_free_ char *t = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (t && send(w->fd, t, strlen(t), MSG_NOSIGNAL) < 0) {
		/* the server is gone: we die with it (PR_SET_PDEATHSIG) */
	}
}

/* The run the server sent, loaded and its spec made; false when it cannot be (the cold start
 * then says why, as a plain `job run` would). */
static bool warm_load(struct warm *w, json_t *req)
{
	const char *file = json_string_value(json_object_get(req, "job"));
	const char *work = json_string_value(json_object_get(req, "work"));
	/* the job's text comes in the message (a file of that name is not written) unless it
	 * is too large for one */
	const char *text = json_string_value(json_object_get(req, "job_text"));
	if (!file || load_text(file, text, work, true, &w->job) < 0)
		return false;
	w->loaded = true;
	_cleanup_(hist_opts_free) struct hist_opts h = { .run_id = w->run_id, .db = w->db };
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(req, "labels"), i, v)
		if (hist_opt_parse(&h, 0, json_string_value(v), &w->err) < 0)
			return false;
	h.name = json_string_value(json_object_get(req, "name"));
	w->command = strv_from_json(json_object_get(req, "command"), true);
	return job_cell_spec(w->a, &w->job, &h, &w->s, &w->err) == 0;
}

/* command, to start as the cell's job itself (no executor, no shell), when job is the one
 * step the server made of it (job_is_command); else NULL. */
static char **plain_command(const struct job *j, char **command)
{
	return job_is_command(j, command) ? command : NULL;
}

static char **warm_direct(struct warm *w)
{
	return plain_command(&w->job, w->command);
}

/* The server's --command-json: its run's plain command, a JSON array of strings; NULL when it
 * is not one. */
static char **command_argv(const char *text)
{
	json_t *a = json_loads(text, 0, NULL);
	char **argv = strv_from_json(a, true);
	json_decref(a);
	return argv;
}

#define SWAP(a, b) do { __typeof__(a) t_ = (a); (a) = (b); (b) = t_; } while (0)

/* The run's own fields into the warm cell's spec s: what the cell was not made with. */
static void warm_fill(struct cell_spec *s, struct cell_spec *r)
{
	SWAP(s->argv, r->argv);
	SWAP(s->env, r->env);
	SWAP(s->name, r->name);
	SWAP(s->labels, r->labels);
	SWAP(s->image_fd, r->image_fd);  /* the run holds its image's lock */
	s->limits.time_ms = r->limits.time_ms;
	s->limits.cpu_ms = r->limits.cpu_ms;
	s->limits.output = r->limits.output;
	s->limits.grace_ms = r->limits.grace_ms;
	s->limits.scratch = r->limits.scratch;
	s->keep = r->keep;
	s->start = "warm";
}

/* The take of a plain command rehearsed before the cell says it waits, and undone: its run's
 * spec made from the job the server makes of a command, compared with the cell's, freed. What
 * a process does the first time costs it several times more (its lazy symbol bindings, code
 * and heap pages touched for the first time: the load and spec of a take 61 and ~80 us the
 * first time, 17 and ~25 the second); rehearsed, the run's own take is a second time. Nothing
 * is written: the state directory and the worktree are only looked at, as a take does; what it
 * would say (notes on the worktree) is not said, they are the run's to say. */
static void silent(const char *msg, void *data)
{
	(void)msg;
	(void)data;
}

static void warm_rehearse(struct warm *w, const struct cell_spec *s)
{
	char *const argv[] = { "true", NULL };
	json_t *job = job_command_json(argv);
	_cleanup_free_ char *text = job_json_text(job);
	json_decref(job);
	_cleanup_free_ char *file = xasprintf("%s/serve/%s.job.json", s->statedir, w->run_id);
	json_t *req = json_pack("{s:s,s:s,s:s,s:[],s:[s]}", "job", file, "job_text", text, "work", w->a->work, "labels",
				"command", "true");
	struct warm r = { .fd = -1, .end_fd = -1, .a = w->a, .run_id = w->run_id, .db = w->db };
	warn_set_handler(silent, NULL);
	if (req && warm_load(&r, req))
		(void)cell_spec_shape_diff(s, &r.s);
	warn_set_handler(NULL, NULL);
	json_decref(req);
	if (r.loaded) {
		cell_spec_free(&r.s);
		job_free(&r.job);
	}
	strv_free(r.command);
	error_clear(&r.err);
}

static const struct job *warm_take(void *ctx, struct cell_spec *s, char ***direct)
{
	struct warm *w = ctx;
	/* the cell holds no lock on its image while it waits ('warren image rm' is not refused
	 * for it): a run checks at its take that the image is still the one the cell has */
	if (s->image_fd > 0)
		close(s->image_fd);
	s->image_fd = 0;
	tzset();  /* the clock shown of its steps: the zone read now, not when its run comes */
	warm_rehearse(w, s);
	warm_say(w, json_pack("{s:b,s:o}", "ready", 1, "digest", s->image_digest ? json_string(s->image_digest) : json_null()));
	char buf[65536];
	ssize_t n = fd_recv(w->fd, 0, buf, sizeof buf, &w->end_fd);
	if (n <= 0)
		return NULL;  /* discarded, or the server is gone */
	json_t *req = json_loadb(buf, (size_t)n, 0, NULL);
	bool ok = req && warm_load(w, req);
	json_decref(req);
	w->why = !ok ? "its job could not be made ready" : cell_spec_shape_diff(s, &w->s);
	if (w->why) {
		warm_say(w, json_pack("{s:s}", "cold", w->why));
		return NULL;
	}
	warm_fill(s, &w->s);
	*direct = warm_direct(w);
	return &w->job;
}

/* Wait (at most 30 s) for the server's message naming key ("row": the run's row is written;
 * "ack": it took the run's end); at once when the server is gone. */
static void warm_wait_for(struct warm *w, const char *key)
{
	char buf[256];
	struct pollfd p = { .fd = w->fd, .events = POLLIN };
	while (poll(&p, 1, 30000) == 1) {
		ssize_t n = recv(w->fd, buf, sizeof buf - 1, 0);
		if (n <= 0)
			return;
		buf[n] = '\0';
		if (strstr(buf, key))
			return;
	}
}

static void warm_ended(void *ctx, const struct run_result *r, bool gone)
{
	struct warm *w = ctx;
	if (w->ended)
		return;
	json_t *end = json_pack("{s:i,s:s,s:s}", "exit_code", r->exit_code, "status", run_status_name(r->status), "start",
				w->why ? "cold" : "warm");
	if (w->end_fd >= 0) {
		/* the waiting connection first (it answers); the server's loop (its books) once the
		 * cell is gone: told now, it would take the server's lock the answer needs while the
		 * cell's teardown takes the CPUs */
		_cleanup_free_ char *t = json_dumps(end, JSON_COMPACT);
		bool told = t && send(w->end_fd, t, strlen(t), MSG_NOSIGNAL | MSG_DONTWAIT) >= 0;
		closep(&w->end_fd);
		if (told && !gone) {
			json_decref(end);
			return;
		}
		/* (else no one waits: the request did not ask to, or the server is gone) */
	}
	w->ended = true;
	warm_say(w, end);
	/* the server writes the run's row while it starts: its end is written once it says so */
	warm_wait_for(w, "ack");
}

/* A warm cell that was given up: its run (if one came) starts cold, under the same id. */
static int warm_cold(struct warm *w, struct job_run_opts *o, struct error *err)
{
	if (!w->loaded)
		return 0;
	warm_wait_for(w, "row");  /* the server's row first: the cold start updates it */
	if (w->err.msg) {
		/* as its cold start would have: e.g. its image is gone */
		*err = w->err;
		w->err = (struct error){ 0 };
		return -EINVAL;
	}
	w->s.start = "cold";
	w->s.start_why = xasprintf("the warm cell did not fit: %s", w->why);
	o->take = NULL;
	o->direct = warm_direct(w);
	if (policy_prepare(&w->s.policy, err) < 0)
		return -EINVAL;
	return job_run(&w->job, &w->s, o, err);
}

static int job_run_cmd(int argc, char **argv)
{
	enum { O_STATE = 256, O_KEEP, O_JSON, O_QUIET, O_PREFIX, O_USER, O_RESULT, O_RESULT_FD, O_HELP, O_WORK,
	       O_WORK_RO, O_CELL_OPT, O_WARM_FD, O_START, O_ROOTFS, O_IMAGE,
	       O_COMMAND, O_LABEL, O_NAME, O_DB, O_RUN_ID, O_API };
	static const struct option opts[] = {
		{ "state", required_argument, NULL, O_STATE }, { "keep", no_argument, NULL, O_KEEP },
		{ "work", required_argument, NULL, O_WORK },
		{ "json", no_argument, NULL, O_JSON }, { "quiet", no_argument, NULL, O_QUIET },
		{ "prefix", no_argument, NULL, O_PREFIX }, { "user", required_argument, NULL, O_USER },
		{ "result", required_argument, NULL, O_RESULT }, { "result-fd", required_argument, NULL, O_RESULT_FD },
		{ "help", no_argument, NULL, O_HELP },
		{ "rootfs", required_argument, NULL, O_ROOTFS }, { "image", required_argument, NULL, O_IMAGE },
		{ "work-ro", no_argument, NULL, O_WORK_RO }, { "bind", required_argument, NULL, O_CELL_OPT },
		{ "ro-bind", required_argument, NULL, O_CELL_OPT }, { "externals", required_argument, NULL, O_CELL_OPT },
		{ "workdir", required_argument, NULL, O_CELL_OPT }, { "hostname", required_argument, NULL, O_CELL_OPT },
		{ "warm-fd", required_argument, NULL, O_WARM_FD }, { "start-cold", required_argument, NULL, O_START },
		{ "command-json", required_argument, NULL, O_COMMAND }, { "api", no_argument, NULL, O_API },
		HIST_OPTIONS(O_LABEL), { NULL, 0, NULL, 0 },
	};
	_cleanup_(job_args_free) struct job_args a = { 0 };
	_cleanup_(hist_opts_free) struct hist_opts hist = { 0 };
	_cleanup_error_ struct error herr = { 0 };
	struct job_run_opts o = { .result_fd = -1 };
	struct warm w = { .fd = -1, .end_fd = -1, .a = &a };
	const char *cold_why = NULL;
	__attribute__((cleanup(strv_freep))) char **command = NULL;
	_cleanup_error_ struct error perr = { 0 };
	optind = 1;
	int c;
	while ((c = cli_getopt(argc, argv, "", opts, "job run", &perr)) != -1) {
		switch (c) {
		case O_WORK_RO: a.work_ro = true; break;
		case O_ROOTFS: a.rootfs = optarg; break;
		case O_IMAGE: a.image = optarg; break;
		case O_CELL_OPT: cell_opts_take(&a.co, opts[cli_longindex].name, optarg); break;
		case O_STATE: a.state = optarg; break;
		case O_WORK: a.work = optarg; break;
		case O_KEEP: a.keep = true; break;
		case O_JSON: o.json = true; break;
		case O_QUIET: o.quiet = true; break;
		case O_PREFIX: o.prefix = true; break;
		case O_USER: a.user = optarg; break;
		case O_RESULT: o.result_file = optarg; break;
		case O_RESULT_FD: {
			uint64_t fd;
			if (parse_uint(optarg, &fd) < 0 || fd > 1 << 20 || fcntl((int)fd, F_GETFD) < 0 || std_fd_was_closed((int)fd))
				return cli_usage_error("job", "--result-fd: '%s' is not an open file descriptor", optarg);
			o.result_fd = (int)fd;
			break;
		}
		case O_WARM_FD: w.fd = atoi(optarg); break;   /* warren serve's, not a user's */
		case O_API: a.api = true; break;              /* warren serve's: narrows, never widens */
		case O_START: cold_why = optarg; break;       /* warren serve's: why its run is cold */
		case O_COMMAND:                               /* warren serve's: the run's plain command */
			strv_free(command);
			command = command_argv(optarg);
			if (!command)
				return cli_usage_error("job", "--command-json: '%.60s%s' is not a JSON array of strings (it is warren serve's option)",
						       optarg, strlen(optarg) > 60 ? "..." : "");
			break;
		case O_HELP: fputs(JOB_HELP, stdout); return 0;
		case O_LABEL: case O_NAME: case O_DB: case O_RUN_ID:
			if (hist_opt_parse(&hist, c - O_LABEL, optarg, &herr) < 0)
				return cli_fail(&herr);
			break;
		default: return cli_fail(&perr);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("job", "job run takes one job file");
	struct job job;
	if (load(argv[optind], a.work, a.api, &job) < 0)
		return 125;
	_cleanup_error_ struct error err = { 0 };
	struct cell_spec s = { 0 };
	int rc = 125;
	w.run_id = hist.run_id;
	w.db = hist.db;
	if (result_file_check(o.result_file, &err) < 0 || job_cell_spec(&a, &job, &hist, &s, &err) < 0)
		goto fail;
	if (cold_why) {
		s.start = "cold";
		s.start_why = xstrdup(cold_why);
	}
	if (w.fd >= 0) {
		s.warm = true;
		o.take = warm_take;
		o.ended = warm_ended;
		o.take_ctx = &w;
	} else {
		o.direct = plain_command(&job, command);
	}
	/* the seccomp profile is compiled here, once, not in the cell */
	if (policy_prepare(&s.policy, &err) < 0)
		goto fail;
	rc = job_run(&job, &s, &o, &err);
	if (rc == -ECANCELED)
		rc = warm_cold(&w, &o, &err);
	if (rc < 0)
		goto fail;
	goto out;
fail:
	rc = cli_fail(&err);
out:
	cell_spec_free(&s);
	job_free(&job);
	if (w.loaded) {
		cell_spec_free(&w.s);
		job_free(&w.job);
	}
	strv_free(w.command);
	error_clear(&w.err);
	closep(&w.end_fd);
	return rc;
}

/* The mistakes of errors ("file:LINE:COL: message" lines) as JSON objects. */
static json_t *errors_json(const char *file, const char *errors)
{
	json_t *a = json_array();
	size_t fl = strlen(file);
	_cleanup_free_ char *copy = xstrdup(errors ? errors : "");
	for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long line = 0, col = 0;
		int used = 0;
		const char *rest = !strncmp(l, file, fl) && l[fl] == ':' ? l + fl + 1 : l;
		if (sscanf(rest, "%lu:%lu: %n", &line, &col, &used) == 2 && used)
			rest += used;
		else if (rest != l && *rest == ' ')
			rest++;
		json_array_append_new(a, json_pack("{s:s,s:I,s:I,s:s}", "file", file, "line", (json_int_t)line,
						   "column", (json_int_t)col, "message", rest));
	}
	return a;
}

/* `warren job check FILE [--work DIR] [--json]` */
static int job_check_cmd(int argc, char **argv)
{
	enum { O_WORK = 256, O_JSON, O_HELP };
	static const struct option opts[] = { { "work", required_argument, NULL, O_WORK }, { "json", no_argument, NULL, O_JSON },
					      { "help", no_argument, NULL, O_HELP }, { NULL, 0, NULL, 0 } };
	const char *work = NULL;
	bool as_json = false;
	_cleanup_error_ struct error perr = { 0 };
	optind = 1;
	int c;
	while ((c = cli_getopt(argc, argv, "", opts, "job check", &perr)) != -1) {
		switch (c) {
		case O_WORK: work = optarg; break;
		case O_JSON: as_json = true; break;
		case O_HELP: fputs(JOB_HELP, stdout); return 0;
		default: return cli_fail(&perr);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("job", "job check takes one job file (and --work DIR, --json)");
	const char *file = argv[optind];
	struct job job = { 0 };
	if (!as_json) {
		if (load(file, work, false, &job) < 0)
			return 125;
	} else {
		char *errors = NULL;
		_cleanup_free_ char *work_abs = work ? abs_path(work) : NULL;
		int r = work && !work_abs ? -1 : job_load(file, work_abs, NULL, &job, &errors);
		if (work && !work_abs)
			errors = xasprintf("--work %s: %s; name an existing directory\n", work, strerror(errno));
		json_t *o = json_pack("{s:s,s:b}", "file", file, "ok", r == 0);
		json_object_set_new(o, "services", json_integer(r == 0 ? (json_int_t)job.n_services : 0));
		json_object_set_new(o, "steps", json_integer(r == 0 ? (json_int_t)job.n_steps : 0));
		json_object_set_new(o, "errors", errors_json(file, errors));
		char *t = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		printf("%s\n", t);
		free(t);
		json_decref(o);
		free(errors);
		job_free(&job);
		return r < 0 ? 125 : 0;
	}
	printf("%s: ok (%zu service%s, %zu step%s)\n", file, job.n_services, job.n_services == 1 ? "" : "s",
	       job.n_steps, job.n_steps == 1 ? "" : "s");
	job_free(&job);
	return 0;
}

int cmd_job(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(JOB_HELP, argc < 2 ? stderr : stdout);
		return argc < 2 ? 125 : 0;
	}
	if (!strcmp(argv[1], "run"))
		return job_run_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return job_check_cmd(argc - 1, argv + 1);
	return cli_usage_error("job", "unknown job command '%s'; use 'job run FILE' or 'job check FILE'", argv[1]);
}

/* ---- logs ---- */

static int cmp_log(const struct dirent **a, const struct dirent **b)
{
	return strverscmp((*a)->d_name, (*b)->d_name);
}

static int is_log(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return n > 4 && !strcmp(e->d_name + n - 4, ".log");
}

/* A log file of log/ as job/logname.h names it: "<n>-<enc>.log" (kind the number),
 * "service-<enc>.log" or "service-<enc>.ready.log" (kind "service"); the name decoded. */
struct log_file {
	char *kind, *name;
	bool probe;
};

static void log_file_parse(const char *f, struct log_file *lf)
{
	size_t n = strlen(f) - 4, dash = strcspn(f, "-");
	if (dash >= n)
		dash = 0;
	lf->kind = strndup(f, dash);
	const char *enc = f + dash + (dash ? 1 : 0);
	size_t len = n - (size_t)(enc - f);
	lf->probe = !strcmp(lf->kind, "service") && len > 6 && !strncmp(enc + len - 6, ".ready", 6);
	lf->name = logname_decode(enc, len - (lf->probe ? 6 : 0));
}

static void log_file_free(struct log_file *lf)
{
	free(lf->kind);
	free(lf->name);
}

/* Does log file f belong to STEP (a step's number or name, "service", or the file's name)? */
static bool log_matches(const char *f, const char *step)
{
	if (!step)
		return true;
	struct log_file lf;
	log_file_parse(f, &lf);
	bool m = !strcmp(lf.kind, step) || !strcmp(lf.name, step) ||
		 (strlen(f) - 4 == strlen(step) && !strncmp(f, step, strlen(step)));
	log_file_free(&lf);
	return m;
}

/* "step 2: NAME", "service NAME" (heap; the name made safe to print) */
static char *log_title(const char *f)
{
	struct log_file lf;
	log_file_parse(f, &lf);
	_cleanup_free_ char *name = printable_name(lf.name);
	char *t = !strcmp(lf.kind, "service") ? xasprintf("service %s%s", name, lf.probe ? " (its ready probe)" : "")
					      : xasprintf("step %s: %s", lf.kind, name);
	log_file_free(&lf);
	return t;
}

/* What `warren logs` has printed of each log file, and which it printed last. */
struct logs {
	char **names;
	off_t *offs;
	size_t n;
	size_t last;     /* index of the file printed last; SIZE_MAX before the first */
	bool headers;    /* a header before each file's output (when showing more than one) */
	bool any;
};

static size_t logs_slot(struct logs *L, const char *f)
{
	size_t k = 0;
	while (k < L->n && strcmp(L->names[k], f))
		k++;
	if (k == L->n) {
		L->names = xrealloc(L->names, (L->n + 1) * sizeof *L->names);
		L->offs = xrealloc(L->offs, (L->n + 1) * sizeof *L->offs);
		L->names[L->n] = xstrdup(f);
		L->offs[L->n++] = 0;
	}
	return k;
}

/* Print what log file f gained since the last pass; true when it grew. */
static bool logs_print(struct logs *L, int logdir, const char *f)
{
	size_t k = logs_slot(L, f);
	_cleanup_close_ int fd = openat(logdir, f, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool grew = false;
	char buf[65536];
	ssize_t r;
	if (fd < 0 || lseek(fd, L->offs[k], SEEK_SET) < 0)
		return false;
	while ((r = read(fd, buf, sizeof buf)) > 0) {
		if (L->headers && L->last != k) {
			_cleanup_free_ char *t = log_title(f);
			printf("%s==> %s <==\n", L->last != SIZE_MAX ? "\n" : "", t);
			L->last = k;
		}
		fwrite(buf, 1, (size_t)r, stdout);
		L->offs[k] += r;
		grew = true;
	}
	return grew;
}

/* One pass over log/: the new output of every log of step; true when some grew. */
static bool logs_pass(struct logs *L, int logdir, const char *step)
{
	struct dirent **ents = NULL;
	int n = logdir >= 0 ? scandirat(logdir, ".", &ents, is_log, cmp_log) : -1;
	bool grew = false;
	for (int i = 0; i < n; i++) {
		if (log_matches(ents[i]->d_name, step)) {
			grew |= logs_print(L, logdir, ents[i]->d_name);
			L->any = true;
		}
		free(ents[i]);
	}
	free(ents);
	fflush(stdout);
	return grew;
}

/* Wait for a log of the run to grow or the run to end (its record written), up to a second
 * (a supervisor killed writes nothing). */
static void logs_wait(int ino)
{
	struct pollfd p = { .fd = ino, .events = POLLIN };
	if (poll(&p, 1, 1000) > 0) {
		char buf[4096];
		while (read(ino, buf, sizeof buf) > 0)
			;
	}
}

static int inotify_at(int ino, int dirfd, uint32_t mask)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", dirfd);
	return ino >= 0 && dirfd >= 0 ? inotify_add_watch(ino, path, mask) : -1;
}

/* STEP matched no log: which steps the run has. */
static int logs_none(const char *id, const char *step, int logdir)
{
	if (!step) {
		warn_line("%s has no logs (only jobs have step logs: 'warren job run')", id);
		return 125;
	}
	struct dirent **ents = NULL;
	int n = logdir >= 0 ? scandirat(logdir, ".", &ents, is_log, cmp_log) : -1;
	char *list = xstrdup("");
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *t = log_title(ents[i]->d_name);
		char *l = xasprintf("%s%s%s", list, *list ? ", " : "", t);
		free(list);
		list = l;
		free(ents[i]);
	}
	free(ents);
	_cleanup_free_ char *s = printable_name(step);
	warn_line("%s has no step '%s'%s%s%s", id, s, *list ? "; its logs are of " : " (it has no step logs: only jobs have them)",
		list, *list ? " (give a step's number or name)" : "");
	free(list);
	return 125;
}

static const char LOGS_HELP[] =
	"usage: warren logs [RUN] [STEP] [-f|--follow] [--state DIR]\n\n"
	"Print the output of a job's steps (and services) from its record, in order, each under a\n"
	"header '==> step N: NAME <=='; STEP is a step's number or name, and prints that step's\n"
	"output alone. With -f or --follow, keep printing while the run is live. RUN defaults to\n"
	"the latest run. Timestamps of each chunk are in the .times file beside each log.\n";

int cmd_logs(int argc, char **argv)
{
	if (cli_has_via(argc, argv))
		return cmd_logs_via(argc, argv); /* from a warren serve (cli/submit.c) */
	enum { O_STATE = 256, O_FOLLOW, O_HELP };
	static const struct option opts[] = { { "state", required_argument, NULL, O_STATE },
					      { "follow", no_argument, NULL, O_FOLLOW },
					      { "help", no_argument, NULL, O_HELP },
					      { NULL, 0, NULL, 0 } };
	const char *state_opt = NULL;
	bool follow = false;
	_cleanup_error_ struct error perr = { 0 };
	optind = 1;
	int c;
	while ((c = cli_getopt(argc, argv, "f", opts, "logs", &perr)) != -1) {
		switch (c) {
		case O_STATE: state_opt = optarg; break;
		case 'f':
		case O_FOLLOW: follow = true; break;
		case O_HELP: fputs(LOGS_HELP, stdout); return 0;
		default: return cli_fail(&perr);
		}
	}
	if (argc - optind > 2)
		return cli_usage_error("logs", "logs takes a run and a step");
	int rc;
	_cleanup_close_ int dir = -1;
	_cleanup_free_ char *id = cli_run_open(state_opt, optind < argc ? argv[optind] : NULL, &dir, NULL, &rc);
	if (!id)
		return rc;
	const char *step = optind + 1 < argc ? argv[optind + 1] : NULL;
	/* log/ as the run made it: a directory of the run's, not through a link */
	_cleanup_close_ int logdir = openat(dir, "log", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int ino = follow ? inotify_init1(IN_NONBLOCK | IN_CLOEXEC) : -1;
	inotify_at(ino, dir, IN_CREATE | IN_MOVED_TO);
	inotify_at(ino, logdir, IN_MODIFY | IN_CREATE);
	struct logs L = { .headers = !step, .last = SIZE_MAX };
	for (;;) {
		bool live = rundir_is_live(dir);
		if (logdir < 0 && live) {
			logdir = openat(dir, "log", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			inotify_at(ino, logdir, IN_MODIFY | IN_CREATE);
		}
		bool grew = logs_pass(&L, logdir, step);
		if (!follow || (!live && !grew))
			break;
		if (!grew)
			logs_wait(ino);
	}
	for (size_t i = 0; i < L.n; i++)
		free(L.names[i]);
	free(L.names);
	free(L.offs);
	return L.any ? 0 : logs_none(id, step, logdir);
}

/* ---- kill ---- */

int cmd_kill(int argc, char **argv)
{
	if (cli_has_via(argc, argv))
		return cmd_kill_via(argc, argv); /* through a warren serve (cli/submit.c) */
	enum { O_STATE = 256, O_HELP };
	static const struct option opts[] = { { "state", required_argument, NULL, O_STATE },
					      { "help", no_argument, NULL, O_HELP },
					      { NULL, 0, NULL, 0 } };
	const char *state_opt = NULL;
	_cleanup_error_ struct error perr = { 0 };
	optind = 1;
	int c;
	while ((c = cli_getopt(argc, argv, "", opts, "kill", &perr)) != -1) {
		if (c == O_STATE) {
			state_opt = optarg;
		} else if (c == O_HELP) {
			puts("usage: warren kill RUN [--state DIR]\n\nStop a live run: SIGTERM to every process of its cell, SIGKILL after its grace.\nThe record names the cause: killed by warren kill (uid N).");
			return 0;
		} else {
			return cli_fail(&perr);
		}
	}
	int i = optind;
	if (i != argc - 1)
		return cli_usage_error("kill", "kill takes one run id (or a unique prefix)");
	int rc;
	_cleanup_close_ int dir = -1;
	_cleanup_free_ char *id = cli_run_open(state_opt, argv[i], &dir, NULL, &rc);
	if (!id)
		return rc;
	pid_t pid = rundir_pid(dir);
	if (!rundir_is_live(dir) || pid <= 0) {
		warn_line("%s is not running (see 'warren show %s')", id, id);
		return 125;
	}
	union sigval v = { .sival_int = WARREN_KILL_MAGIC };
	if (sigqueue(pid, SIGTERM, v) < 0) {
		warn_line("cannot signal the supervisor of %s (pid %d): %s", id, (int)pid, strerror(errno));
		return 125;
	}
	printf("warren: asked %s to stop\n", id);
	return 0;
}
