/* SPDX-License-Identifier: Apache-2.0 */
/* job.c - `warren job run FILE` (a warm cell's half: cli/warm.c; the job's cell spec:
 * cli/spec.c), `warren job check FILE`, `warren logs RUN [STEP]` and `warren kill RUN`. */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <sys/inotify.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/history.h"
#include "cli/spec.h"
#include "cli/warm.h"
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
			command = command_json_argv(optarg);
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
	if (cli_job_load(argv[optind], a.work, a.api, &job) < 0)
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
		o.direct = job_plain_command(&job, command);
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
	warm_free(&w);
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
		if (cli_job_load(file, work, false, &job) < 0)
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

/* A plain run's log (supervise/outlog.c): its output, no step's. */
static bool is_run_output(const char *f)
{
	return !strcmp(f, "output.log");
}

/* "step 2: NAME", "service NAME", "output" (heap; the name made safe to print) */
static char *log_title(const char *f)
{
	if (is_run_output(f))
		return xstrdup("output");
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
		if (L->headers && L->last != k && !is_run_output(f)) {
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
		warn_line("%s has no logs (it wrote no output)", id);
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
	warn_line("%s has no step '%s'%s%s%s", id, s, *list ? "; its logs are of " : " (it has no logs: it wrote no output)",
		list, *list ? " (give a step's number or name)" : "");
	free(list);
	return 125;
}

static const char LOGS_HELP[] =
	"usage: warren logs [RUN] [STEP] [-f|--follow] [--state DIR]\n\n"
	"Print the output a run kept in its record: a plain run's stdout and stderr as it wrote\n"
	"them; a job's steps (and services) in order, each under a header '==> step N: NAME <=='.\n"
	"STEP is a step's number or name, and prints that step's output alone. A log the output\n"
	"limit cut ends with a line '[warren: output limit ... reached; ...]'. With -f or --follow,\n"
	"keep printing while the run is live. RUN defaults to the latest run, as does '-' (warren\n"
	"logs - STEP). Timestamps of each chunk of a step's output are in the .times file beside\n"
	"its log.\n";

int cmd_logs(int argc, char **argv)
{
	if (cli_has_via(argc, argv))
		return cmd_logs_via(argc, argv, LOGS_HELP); /* from a warren serve (cli/submit.c) */
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
	/* RUN "-": the latest, as when it is left out (`warren logs - STEP`, as `warren policy -`) */
	const char *run = optind < argc && strcmp(argv[optind], "-") ? argv[optind] : NULL;
	_cleanup_free_ char *id = cli_run_open(state_opt, run, &dir, NULL, &rc);
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

static const char KILL_HELP[] =
	"usage: warren kill RUN [--state DIR]\n\n"
	"Stop a live run: SIGTERM to every process of its cell, SIGKILL after its grace.\n"
	"The record names the cause: killed by warren kill (uid N).\n";

int cmd_kill(int argc, char **argv)
{
	if (cli_has_via(argc, argv))
		return cmd_kill_via(argc, argv, KILL_HELP); /* through a warren serve (cli/submit.c) */
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
			fputs(KILL_HELP, stdout);
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
