/* SPDX-License-Identifier: Apache-2.0 */
/* submit.c - POST /v1/runs: a command or a job (JSON), checked field by field with one clear
 * message for the first mistake (its binds, image and published ports as the command line's
 * are: the gate, the store, the host's ports and the leases of live runs), turned into a job (a command is a job of one step "main"):
 * given to a warm cell with its text, or written as a job file of the server's (<state>/serve/
 * <id>.job.json) for the arguments of `warren job run`, then queued with its row in the
 * history. */
#include "serve/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cell/gate.h"
#include "cell/mounts.h"
#include "image/store.h"
#include "job/jobfile.h"
#include "util/fs.h"
#include "serve/slog.h"
#include "util/strv.h"

static const char *const FIELDS[] = { "command", "job", "env", "limits", "worktree", "rootfs", "image", "net", "publish",
				       "binds", "ro-binds", "labels", "name", "timeout", "session", NULL };
static const char *const LIMITS[] = { "time", "cpu-time", "memory", "pids", "output", "scratch", "grace", "cpus", "cpuset", NULL };

static int bad(json_t **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(json_t **out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = xvasprintf(fmt, ap);
	va_end(ap);
	*out = json_pack("{s:s}", "error", m);
	free(m);
	return 400;
}

static bool known(const char *const *list, const char *k)
{
	for (; *list; list++)
		if (!strcmp(*list, k))
			return true;
	return false;
}

/* Check the fields of req; 0, or the HTTP status with *out the error. */
static int check_fields(json_t *req, json_t **out)
{
	if (!json_is_object(req))
		return bad(out, "the body must be a JSON object, e.g. {\"command\": [\"make\", \"test\"], \"worktree\": \"/src/app\"}");
	const char *k;
	json_t *v;
	json_object_foreach(req, k, v) {
		if (!known(FIELDS, k))
			return bad(out, "unknown field '%s'; the fields are command, job, env, limits, timeout, worktree, rootfs, image, "
				   "net, publish, binds, ro-binds, labels, name, session", k);
	}
	json_t *cmd = json_object_get(req, "command"), *job = json_object_get(req, "job"), *ses = json_object_get(req, "session");
	if (ses && (cmd || job))
		return bad(out, "a session has no command (its commands come as POST /v1/runs/{id}/exec); a job's session: goes in its job file");
	if (ses && !json_is_object(ses))
		return bad(out, "session must be an object {\"idle\": \"10m\", \"max\": \"8h\"} ({} for these)");
	if (!!cmd == !!job && !ses)
		return bad(out, "give either command (an array of strings) or job (the job file's text), not %s", cmd ? "both" : "neither");
	if (cmd) {
		if (!json_is_array(cmd) || !json_array_size(cmd))
			return bad(out, "command must be a non-empty array of strings, e.g. [\"make\", \"test\"]");
		size_t i;
		json_array_foreach(cmd, i, v)
			if (!json_is_string(v) || strchr(json_string_value(v), '\n'))
				return bad(out, "command[%zu] must be a string of one line", i);
	}
	if (job && !json_is_string(job))
		return bad(out, "job must be the job file's text (YAML or JSON) as a string");
	static const char *const cell[] = { "env", "limits", "timeout", "rootfs", "image", "net", "publish", "binds", "ro-binds", NULL };
	for (const char *const *f = cell; job && *f; f++)
		if (json_object_get(req, *f))
			return bad(out, "%s: env, limits, timeout, rootfs, image, net, publish, binds and ro-binds of a job go in its "
				   "job file (as env:, limits:, ... network:, publish:), not beside it", *f);
	json_t *wt = json_object_get(req, "worktree");
	if (!json_is_string(wt) || json_string_value(wt)[0] != '/')
		return bad(out, "worktree: required, the absolute path of the directory the run works on (read-write)");
	json_t *rf = json_object_get(req, "rootfs");
	if (rf && (!json_is_string(rf) || json_string_value(rf)[0] != '/'))
		return bad(out, "rootfs: the absolute path of the image directory (a job's text names its root itself)");
	if (rf && json_object_get(req, "image"))
		return bad(out, "image: give image (a stored image's name) or rootfs (a directory), not both");
	static const char *const strs[] = { "rootfs", "image", "net", "name", "timeout", NULL };
	for (const char *const *f = strs; *f; f++)
		if ((v = json_object_get(req, *f)) && !json_is_string(v))
			return bad(out, "%s must be a string", *f);
	static const char *const lists[] = { "publish", "binds", "ro-binds", NULL };
	for (const char *const *f = lists; *f; f++) {
		json_t *l = json_object_get(req, *f);
		size_t i;
		if (l && !json_is_array(l))
			return bad(out, "%s must be an array of strings, e.g. %s", *f,
				   **f == 'p' ? "[\"8080:4096\"]" : "[\"/srv/cache:/cache\"]");
		json_array_foreach(l, i, v)
			if (!json_is_string(v) || !*json_string_value(v) || strchr(json_string_value(v), '\n'))
				return bad(out, "%s[%zu] must be a string of one line", *f, i);
	}
	static const char *const maps[] = { "env", "labels", "limits", NULL };
	for (const char *const *f = maps; *f; f++) {
		json_t *m = json_object_get(req, *f);
		if (!m)
			continue;
		if (!json_is_object(m))
			return bad(out, "%s must be an object of strings, e.g. {\"K\": \"V\"}", *f);
		json_object_foreach(m, k, v) {
			if (!json_is_string(v))
				return bad(out, "%s.%s must be a string", *f, k);
			if (!strcmp(*f, "limits") && !known(LIMITS, k))
				return bad(out, "unknown limit '%s'; the limits are time, cpu-time, memory, pids, output, scratch, grace, cpus, cpuset", k);
		}
	}
	return 0;
}

/* The job file of a command request: one step, the request's env, limits, rootfs, network. */
static json_t *command_job(json_t *req)
{
	_cleanup_strv_ char **argv = strv_from_json(json_object_get(req, "command"), false);
	json_t *v = json_object_get(req, "session");
	json_t *job = v ? json_pack("{s:O}", "session", v) : job_command_json(argv);  /* a session: no step */
	if ((v = json_object_get(req, "name")))
		json_object_set(job, "name", v);
	if ((v = json_object_get(req, "env")))
		json_object_set(job, "env", v);
	if ((v = json_object_get(req, "net")))
		json_object_set(job, "network", v);
	if ((v = json_object_get(req, "publish")))
		json_object_set(job, "publish", v);
	json_t *lim = json_deep_copy(json_object_get(req, "limits"));
	if (lim) {
		json_t *t = json_object_get(lim, "time");
		if (t)
			json_object_set(job, "timeout", t);
		json_object_del(lim, "time");
		if (json_object_size(lim))
			json_object_set(job, "limits", lim);
	}
	json_decref(lim);
	if ((v = json_object_get(req, "timeout")))
		json_object_set(job, "timeout", v);
	return job;
}

/* msg without its leading option word (--publish: , --publish before ADDR:PORT...), which the
 * request names by its field instead. */
static const char *unopt(const char *msg, const char *opt)
{
	size_t n = strlen(opt);
	if (strncmp(msg, opt, n))
		return msg;
	if (msg[n] == ':' && msg[n + 1] == ' ')
		return msg + n + 2;
	return msg[n] == ' ' && msg[n + 1] >= '0' && msg[n + 1] <= '9' ? msg + n + 1 : msg;
}

/* One of a command request's binds (f: binds or ro-binds, at index i): "SRC[:DST]", SRC an
 * absolute path of the host the gate lets a bind of the caller's have (the request's own
 * fields are its caller's words, as its worktree and rootfs: GATE_CLI; the run's `job run`
 * judges it again), DST a place of the cell a bind may take. 0, or 400 naming it. */
static int check_bind(struct server *s, json_t *req, const char *f, size_t i, const char *arg, bool ro, json_t **out)
{
	_cleanup_free_ char *src = NULL, *dst = NULL;
	mount_arg_split(arg, &src, &dst);
	if (src[0] != '/')
		return bad(out, "%s[%zu] '%s': give SRC[:DST] with SRC an absolute path of the host (a request has no current "
			   "directory), e.g. /srv/cache:/cache", f, i, arg);
	const char *why = NULL;
	_cleanup_free_ char *d = mount_dst_normalise(dst, &why);
	struct cell_spec cs = { .worktree = (char *)json_string_value(json_object_get(req, "worktree")), .statedir = s->sd.path };
	if (d)
		why = mount_dst_refused(d, &cs);
	if (why)
		return bad(out, "%s[%zu] '%s': the destination %s: %s", f, i, arg, dst, why);
	const struct gate_ask a = { .face = GATE_CLI, .uid = geteuid() };
	_cleanup_strv_ char **states = statedir_known(s->sd.path, false);
	_cleanup_free_ char *opt = xasprintf("%s[%zu]", f, i);
	_cleanup_error_ struct error err = { 0 };
	/* judged by what was opened; named as given, and where it led when a link was on the way */
	_cleanup_free_ char *canon = abs_path(src);
	_cleanup_close_ int fd = canon ? open(canon, O_PATH | O_CLOEXEC) : -1;
	if (fd < 0)
		return bad(out, "%s %s: %s; give an existing path of the host", opt, src, strerror(errno));
	_cleanup_free_ char *name = strcmp(src, canon) ? xasprintf("%s (that is %s)", src, canon) : NULL;
	if (gate_check(fd, canon, name, &a, ro ? GATE_BIND_RO : GATE_BIND, (const char *const *)states, opt, &err) < 0)
		return bad(out, "%s", err.msg);
	return 0;
}

/* A command request's own cell fields, judged as the command line's are before its run is
 * queued: each publish parsed as --publish, each bind and the rootfs put to the gate, image a
 * stored image of the server's state directory. 0, or 400 naming the field and its value. */
static int check_cell(struct server *s, json_t *req, json_t **out)
{
	_cleanup_error_ struct error err = { 0 };
	struct net_opts n = { 0 };
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(req, "publish"), i, v)
		if (net_parse_publish(&n, json_string_value(v), &err) < 0)
			return bad(out, "publish[%zu]: %s", i, unopt(err.msg, "--publish"));
	for (int ro = 0; ro < 2; ro++) {
		const char *f = ro ? "ro-binds" : "binds";
		json_array_foreach(json_object_get(req, f), i, v)
			if (check_bind(s, req, f, i, json_string_value(v), ro, out))
				return 400;
	}
	const char *rf = json_string_value(json_object_get(req, "rootfs"));
	if (rf && !is_dir(rf))
		return bad(out, "rootfs %s: not a directory; give the directory of an unpacked image (bin/, etc/, usr/ ...), or "
			   "image (a stored image's name)", rf);
	if (rf) {
		const struct gate_ask a = { .face = GATE_CLI, .uid = geteuid() };
		_cleanup_strv_ char **states = statedir_known(s->sd.path, true);
		if (gate_check_path(rf, &a, GATE_ROOT, (const char *const *)states, "rootfs", &err) < 0)
			return bad(out, "%s", err.msg);
	}
	const char *img = json_string_value(json_object_get(req, "image"));
	if (img) {
		struct image_ref ref;
		int r = image_open(s->sd.fd, s->sd.path, img, &ref, &err);
		image_ref_free(&ref);
		if (r < 0)
			return bad(out, "image: %s", err.msg);
	}
	return 0;
}

/* The network of the run's job (a command's, or a job's network: and publish:) as `warren run
 * --publish` checks it before a run: the mode its ports settle allowed for the server's user
 * (a rootless server publishes under net none only, through pasta), no host port taken (a
 * program of the host listens on it, or a live run publishes it). 0, or 400 with the one line. */
static int check_net(const struct job *job, bool command, json_t **out)
{
	struct net_opts n = job->net;
	_cleanup_error_ struct error err = { 0 };
	if (net_opts_finish(&n, &err) < 0 ||
	    net_mode_allowed(n.mode, n.npublish, geteuid() != 0, job->driver == CELL_DRIVER_VM, &err) < 0 ||
	    net_publish_taken(&n, &err) < 0)
		return bad(out, "%s%s: %s", command ? "" : "job:", n.npublish ? "publish" : "net", unopt(err.msg, "--publish"));
	return 0;
}

/* The job's text (a command's job made of it) checked as `warren job run` will, as the job
 * file <serve>/<id>.job.json, which is not written yet (a cold start writes it: job_file_write;
 * a warm cell gets the text itself); 0 or 400 with the first mistake. */
static int make_job(struct server *s, const char *id, json_t *req, json_t **out, char **path, char **text_out,
		    json_t **about)
{
	json_t *jt = json_object_get(req, "job");
	char *text;
	if (jt) {
		text = xstrdup(json_string_value(jt));
	} else {
		json_t *job = command_job(req);
		text = job_json_text(job);
		json_decref(job);
	}
	*path = server_file(s, id, ".job.json");
	struct job job;
	char *errors = NULL;
	const char *wt = json_string_value(json_object_get(req, "worktree"));
	if (job_parse(*path, text, strlen(text), wt, wt, &job, &errors) < 0) {
		free(text);
		char *nl = errors ? strchr(errors, '\n') : NULL;
		if (nl)
			*nl = '\0';
		/* the job file's name is the server's: say "job" */
		const char *msg = errors ? errors : "the job is not valid";
		if (!strncmp(msg, *path, strlen(*path)))
			msg += strlen(*path) + 1;
		bad(out, "job:%s", msg);
		free(errors);
		return 400;
	}
	int st = check_net(&job, !jt, out);
	/* what it runs, for the server's log */
	*about = jt ? json_pack("{s:s?}", "job", job.name) : json_pack("{s:O}", "command", json_object_get(req, "command"));
	if (json_is_string(json_object_get(req, "name")))
		json_object_set(*about, "name", json_object_get(req, "name"));
	job_free(&job);
	if (st) {
		free(text);
		return st;
	}
	*text_out = text;
	return 0;
}

/* The arguments of the child: this binary's `job run FILE ...`. */
static char **child_argv(struct server *s, json_t *req, const char *id, const char *file, const char *cold_why)
{
	const char *fixed[] = { "warren", "job", "run", file, "--state", s->sd.path, "--db", s->db, "--run-id", id,
				"--quiet", "--api", "--work", json_string_value(json_object_get(req, "worktree")) };
	size_t n_fixed = sizeof fixed / sizeof fixed[0], n = 0;
	/* the fixed words; --name, --start-cold and --command-json with their values; two words a
	 * label; the NULL */
	json_t *binds = json_object_get(req, "binds"), *ro_binds = json_object_get(req, "ro-binds");
	char **a = xcalloc(n_fixed + 10 + 2 * (json_object_size(json_object_get(req, "labels")) + json_array_size(binds) +
					       json_array_size(ro_binds)) + 1, sizeof *a);
	for (size_t i = 0; i < n_fixed; i++)
		a[n++] = xstrdup(fixed[i]);
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(req, "labels"), k, v) {
		a[n++] = xstrdup("--label");
		a[n++] = xasprintf("%s=%s", k, json_string_value(v));
	}
	/* a command's rootfs is the request's own word (its caller's, as on a command line), not
	 * the job's text: the job's own paths stay below the worktree (cell/gate.h) */
	if ((v = json_object_get(req, "rootfs")) && !json_object_get(req, "job")) {
		a[n++] = xstrdup("--rootfs");
		a[n++] = xstrdup(json_string_value(v));
	}
	/* so are its image and binds (check_cell judged them; the run's `job run` judges them again) */
	if ((v = json_object_get(req, "image")) && !json_object_get(req, "job")) {
		a[n++] = xstrdup("--image");
		a[n++] = xstrdup(json_string_value(v));
	}
	size_t i;
	json_array_foreach(binds, i, v) {
		a[n++] = xstrdup("--bind");
		a[n++] = xstrdup(json_string_value(v));
	}
	json_array_foreach(ro_binds, i, v) {
		a[n++] = xstrdup("--ro-bind");
		a[n++] = xstrdup(json_string_value(v));
	}
	if ((v = json_object_get(req, "name"))) {
		a[n++] = xstrdup("--name");
		a[n++] = xstrdup(json_string_value(v));
	}
	if (cold_why) {
		a[n++] = xstrdup("--start-cold");
		a[n++] = xstrdup(cold_why);
	}
	/* a plain command is started as the cell's job itself, as a warm cell's take does (no
	 * executor, no shell: two execs less); one too long for an argument (the kernel's 128 KiB)
	 * goes the job path, through the shell */
	json_t *cmd = json_object_get(req, "job") ? NULL : json_object_get(req, "command");
	char *cj = cmd ? json_dumps(cmd, JSON_COMPACT) : NULL;
	if (cj && strlen(cj) < 65536) {
		a[n++] = xstrdup("--command-json");
		a[n++] = cj;
	} else {
		free(cj);
	}
	return a;
}

static int check_meta(json_t *req, json_t **out)
{
	_cleanup_error_ struct error err = { 0 };
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(req, "labels"), k, v) {
		_cleanup_free_ char *kv = xasprintf("%s=%s", k, json_string_value(v));
		if (history_check_label(kv, &err) < 0)
			return bad(out, "labels: %s", err.msg);
	}
	if ((v = json_object_get(req, "name")) && history_check_name(json_string_value(v), &err) < 0)
		return bad(out, "%s", err.msg);
	return 0;
}

static void save_request(struct server *s, const char *id, char **argv, uid_t owner, int64_t ms, json_t *about)
{
	json_t *a = json_array();
	for (char **p = argv; *p; p++)
		json_array_append_new(a, json_string(*p));
	json_t *j = json_pack("{s:o,s:I,s:I,s:O?}", "argv", a, "owner", (json_int_t)owner, "submitted_ms", (json_int_t)ms,
			      "about", about);
	_cleanup_free_ char *t = json_dumps(j, JSON_COMPACT);
	_cleanup_free_ char *name = xasprintf("%s.req.json", id);
	write_file_atomic_at(s->dir_fd, name, t, strlen(t), 0600);
	json_decref(j);
}

/* Hand the run of req (its job's text) to warm cell wc (which is freed then): its job file is
 * named by the cell's id (the run's now) and not written (its text goes with it) unless the
 * text is too large for the message. Under mu. */
static int give_warm(struct server *s, struct warm_cell *wc, char **file, const char *text, json_t *req, int *end_fd)
{
	char *to = server_file(s, wc->id, ".job.json");
	if (warm_give(s, wc, to, text, req, end_fd) < 0) {
		free(to);
		return -1;
	}
	free(*file);
	*file = to;
	return 0;
}

/* Give the checked run of req (id, its job *file) a ready warm cell of its shape (its id then
 * the cell's), or queue it for a cold start, with its row: the HTTP status, *out the answer. */
static int start_run(struct server *s, const struct who *w, json_t *req, char *id, char **file_, const char *text,
		     json_t *about, json_t **out, int *end_fd)
{
	char *file = *file_;
	/* without a warm pool the run starts cold: its job file is written before the lock (the
	 * pool's size is read without it: where the file is written is all it decides) */
	bool written = false;
	if (!__atomic_load_n(&s->warm_n, __ATOMIC_RELAXED)) {
		if (server_write_job(s, file, text) < 0) {
			*out = json_pack("{s:s}", "error", "the server cannot write the job file");
			return 500;
		}
		written = true;
	}
	int64_t now = history_now_ms();
	json_t *cmd = json_object_get(req, "command") ? json_incref(json_object_get(req, "command")) : NULL;
	struct history_run hr = { .id = id, .name = json_string_value(json_object_get(req, "name")), .state = "queued",
				  .kind = json_object_get(req, "command") ? "command" : "job",
				  .worktree = json_string_value(json_object_get(req, "worktree")), .statedir = s->sd.path,
				  .via = "serve", .labels = json_object_get(req, "labels"), .owner = w->uid,
				  .submitted_ms = now };
	_cleanup_error_ struct error err = { 0 };
	char **argv = NULL;
	pthread_mutex_lock(&s->mu);
	const char *fits = warm_fits(s, req);
	struct warm_cell *wc = fits && !*fits ? warm_ready(s) : NULL;
	if (fits && !*fits && !wc)
		fits = "no warm cell of this shape was ready (or no slot was free)";
	char wid[RUN_ID_LEN + 1];
	if (wc)
		memcpy(wid, wc->id, sizeof wid);  /* wc is freed once given */
	if (wc && give_warm(s, wc, file_, text, req, end_fd) == 0) {
		file = *file_;
		memcpy(id, wid, sizeof wid);
		hr.state = "running";
		hr.start = "warm";
		hr.started_ms = now;
	} else {
		if (wc)
			fits = "its warm cell was gone when it was handed over";
		wc = NULL;
		argv = child_argv(s, req, id, file, fits);
		hr.start = fits ? "cold" : NULL;
		hr.start_why = fits;
	}
	if (!cmd)
		cmd = json_pack("[s,s]", "warren-job", file);
	hr.command = cmd;
	/* a warm cell got its run first and the row is written while the run starts: under mu,
	 * so the run's end (warm.c) is taken only once its row is there, and its supervisor
	 * writes its own rows only once told so */
	int r = !wc && !written ? server_write_job(s, file, text) : 0;
	r = r < 0 ? error_set(&err, -r, "the server cannot write the job file") : history_begin(s->h, &hr, &err);
	if (wc) {
		if (r < 0)
			slog_line("warn", "%s: %s (it runs all the same)", id, err.msg);
		warm_row_written(s, id);
		slog_run_started(id, w->uid, about, "warm");
		r = 0;
		s->submitted++;
		*out = json_pack("{s:s,s:s,s:n,s:s}", "id", id, "state", "running", "queue_position", "start", "warm");
	} else if (r == 0) {
		save_request(s, id, argv, w->uid, now, about);
		server_enqueue(s, id, w->uid, argv, now, json_incref(about));
		argv = NULL;
		s->submitted++;
		s->cold_started++;
		*out = json_pack("{s:s,s:s,s:I,s:o}", "id", id, "state", "queued", "queue_position",
				 (json_int_t)server_queue_pos(s, id), "start", fits ? json_string("cold") : json_null());
	}
	pthread_mutex_unlock(&s->mu);
	json_decref(cmd);
	strv_free(argv);
	if (r < 0) {
		if (!*out)
			*out = json_pack("{s:s}", "error", err.msg);
		return 500;
	}
	return 201;
}

int submit_run(struct server *s, const struct who *w, const char *body, size_t len, json_t **out, int *end_fd)
{
	*end_fd = -1;
	json_error_t je;
	json_t *req = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!req)
		return bad(out, "the body is not JSON: %s at line %d column %d", je.text, je.line, je.column);
	if (w->uid != s->uid && w->uid != 0) {
		json_decref(req);
		*out = json_pack("{s:s}", "error", "this server runs jobs as its own user; start your own 'warren serve' to submit runs");
		return 403;
	}
	int st = check_fields(req, out);
	if (!st)
		st = check_meta(req, out);
	if (!st)
		st = check_cell(s, req, out);
	char id[RUN_ID_LEN + 1];
	_cleanup_free_ char *file = NULL, *text = NULL;
	json_t *about = NULL;
	if (!st && run_id_new(id) < 0) {
		*out = json_pack("{s:s}", "error", "cannot make a run id");
		st = 500;
	}
	if (!st)
		st = make_job(s, id, req, out, &file, &text, &about);
	if (!st)
		st = start_run(s, w, req, id, &file, text, about, out, end_fd);
	/* the request as it came, for a run of it again (POST /v1/runs/{id}/rerun): private as
	 * the job file is (its env: may hold a secret) */
	_cleanup_free_ char *kept = st == 201 ? xasprintf("%s.submit.json", id) : NULL;
	int wr = kept ? write_file_atomic_at(s->dir_fd, kept, body, len, 0600) : 0;
	if (wr < 0)
		slog_line("warn", "%s: cannot keep its request (%s); it cannot be run again", id, strerror(-wr));
	json_decref(about);
	json_decref(req);
	return st;
}

bool submit_kept(struct server *s, const char *id)
{
	_cleanup_free_ char *kept = xasprintf("%s.submit.json", id);
	return faccessat(s->dir_fd, kept, F_OK, 0) == 0;
}

int submit_again(struct server *s, const struct who *w, const char *id, json_t **out)
{
	_cleanup_free_ char *kept = xasprintf("%s.submit.json", id);
	size_t len = 0;
	_cleanup_free_ char *body = read_file_at(s->dir_fd, kept, &len);
	if (!body) {
		*out = json_pack("{s:s}", "error", errno == ENOENT
				 ? "this server kept no request of that run (it was not submitted to it, or before it kept them); submit it again with POST /v1/runs"
				 : "the server cannot read the request it kept of that run");
		return errno == ENOENT ? 409 : 500;
	}
	int end_fd = -1;
	int st = submit_run(s, w, body, len, out, &end_fd);
	closep(&end_fd);
	if (st == 201)
		json_object_set_new(*out, "rerun_of", json_string(id));
	return st;
}
