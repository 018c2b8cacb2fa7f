/* job.c - `warren job run FILE`, `warren logs RUN [STEP]` and `warren kill RUN`. */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/spec.h"
#include "job/jobfile.h"
#include "job/runner.h"
#include "run/rundir.h"
#include "supervise/supervise.h"
#include "util/fs.h"

static const char JOB_HELP[] =
	"usage: warren job run FILE [--work DIR] [--keep] [--json] [--quiet] [--prefix] [--user UID[:GID]] [--state DIR]\n"
	"       warren job check FILE [--work DIR]\n"
	"\n"
	"Run a job file: its services, then its steps in order, in one fresh cell (files, /tmp and\n"
	"services persist across steps; the scratch is reclaimed at the end). The run's id is\n"
	"printed first. Each step's output goes to the record's log/ (see 'warren logs').\n"
	"\n"
	"  --work DIR  the worktree, instead of the job file's work: (a job file may only name\n"
	"              directories below its own, and steps may not leave the worktree)\n"
	"  --keep      keep the scratch after the job\n"
	"  --json      print result.json on stdout at the end (the view goes to stderr)\n"
	"  --quiet     do not show the steps' output (it is still in the logs)\n"
	"  --prefix    when not on a terminal, prefix each output line with its step's name\n"
	"  --result FILE, --result-fd N   also write result.json there\n"
	"\n"
	"'job check FILE' reports every mistake in FILE (file:line:column) and starts nothing.\n"
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

static int load(const char *file, const char *work, struct job *job)
{
	char *errors = NULL;
	_cleanup_free_ char *work_abs = work ? abs_path(work) : NULL;
	if (work && !work_abs) {
		fprintf(stderr, "warren: --work %s: %s; name an existing directory\n", work, strerror(errno));
		return -1;
	}
	if (job_load(file, work_abs, job, &errors) < 0) {
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
			fprintf(stderr, "warren: %s\n", lines[i]);
		free(lines);
		free(errors);
		job_free(job);
		return -1;
	}
	return 0;
}

static int job_run_cmd(int argc, char **argv)
{
	enum { O_STATE = 256, O_KEEP, O_JSON, O_QUIET, O_PREFIX, O_USER, O_RESULT, O_RESULT_FD, O_HELP, O_WORK };
	static const struct option opts[] = {
		{ "state", required_argument, NULL, O_STATE }, { "keep", no_argument, NULL, O_KEEP },
		{ "work", required_argument, NULL, O_WORK },
		{ "json", no_argument, NULL, O_JSON }, { "quiet", no_argument, NULL, O_QUIET },
		{ "prefix", no_argument, NULL, O_PREFIX }, { "user", required_argument, NULL, O_USER },
		{ "result", required_argument, NULL, O_RESULT }, { "result-fd", required_argument, NULL, O_RESULT_FD },
		{ "help", no_argument, NULL, O_HELP }, { NULL, 0, NULL, 0 },
	};
	const char *state = NULL, *user = NULL, *work = NULL;
	bool keep = false;
	struct job_run_opts o = { .result_fd = -1 };
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_STATE: state = optarg; break;
		case O_WORK: work = optarg; break;
		case O_KEEP: keep = true; break;
		case O_JSON: o.json = true; break;
		case O_QUIET: o.quiet = true; break;
		case O_PREFIX: o.prefix = true; break;
		case O_USER: user = optarg; break;
		case O_RESULT: o.result_file = optarg; break;
		case O_RESULT_FD:
			o.result_fd = atoi(optarg);
			if (fcntl(o.result_fd, F_GETFD) < 0)
				return cli_usage_error("job", "--result-fd: '%s' is not an open file descriptor", optarg);
			break;
		case O_HELP: fputs(JOB_HELP, stdout); return 0;
		default: return cli_usage_error("job", "job run: unknown option or missing value '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cli_usage_error("job", "job run takes one job file");
	struct job job;
	if (load(argv[optind], work, &job) < 0)
		return 125;
	_cleanup_error_ struct error err = { 0 };
	struct cell_spec s = { 0 };
	struct envb late = { 0 };
	int rc = 125;
	s.limits = job.limits;
	s.limits.time_ms = job.timeout_ms;
	s.net = job.net;
	s.keep = keep;
	s.statedir = statedir_default(state);
	s.driver = job.driver;
	if (cellspec_user(&s, user, &err) < 0 || cellspec_paths(&s, job.rootfs, job.work, &err) < 0 ||
	    cellspec_finish(&s, &err) < 0)
		goto fail;
	s.argv = xcalloc(3, sizeof *s.argv);
	s.argv[0] = xstrdup("warren-job");
	s.argv[1] = xstrdup(job.path);
	for (char **e = job.env; e && *e; e++)
		env_set(&late, *e);
	cellspec_env(&s, &late);
	/* the seccomp profile is compiled here, once, not in the cell */
	if (policy_prepare(&s.policy, &err) < 0)
		goto fail;
	rc = job_run(&job, &s, &o, &err);
	if (rc < 0)
		goto fail;
	goto out;
fail:
	rc = cli_fail(&err);
out:
	envb_free(&late);
	cell_spec_free(&s);
	job_free(&job);
	return rc;
}

int cmd_job(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(JOB_HELP, argc < 2 ? stderr : stdout);
		return argc < 2 ? 125 : 0;
	}
	if (!strcmp(argv[1], "run"))
		return job_run_cmd(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check")) {
		const char *work = NULL;
		if (argc == 5 && !strcmp(argv[3], "--work"))
			work = argv[4];
		else if (argc != 3)
			return cli_usage_error("job", "job check takes one job file (and --work DIR)");
		struct job job;
		if (load(argv[2], work, &job) < 0)
			return 125;
		printf("%s: ok (%zu service%s, %zu step%s)\n", argv[2], job.n_services, job.n_services == 1 ? "" : "s",
		       job.n_steps, job.n_steps == 1 ? "" : "s");
		job_free(&job);
		return 0;
	}
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

/* Does log file name match STEP (its number, its name, or the whole file name)? */
static bool log_matches(const char *file, const char *step)
{
	if (!step)
		return true;
	size_t n = strlen(file) - 4;
	const char *dash = strchr(file, '-');
	if (!strncmp(file, step, n) && strlen(step) == n)
		return true;
	if (dash && (size_t)(dash - file) == strlen(step) && !strncmp(file, step, strlen(step)))
		return true;
	return dash && strlen(dash + 1) - 4 == strlen(step) && !strncmp(dash + 1, step, strlen(step));
}

static const char LOGS_HELP[] =
	"usage: warren logs [RUN] [STEP] [--follow] [--state DIR]\n\n"
	"Print the output of a job's steps (and services) from its record, in order; STEP is a step's\n"
	"name or number. With --follow, keep printing while the run is live. RUN defaults to the\n"
	"latest run. Timestamps of each chunk are in the .times file beside each log.\n";

int cmd_logs(int argc, char **argv)
{
	enum { O_STATE = 256, O_FOLLOW, O_HELP };
	static const struct option opts[] = { { "state", required_argument, NULL, O_STATE },
					      { "follow", no_argument, NULL, O_FOLLOW },
					      { "help", no_argument, NULL, O_HELP },
					      { NULL, 0, NULL, 0 } };
	const char *state_opt = NULL;
	bool follow = false;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "f", opts, NULL)) != -1) {
		switch (c) {
		case O_STATE: state_opt = optarg; break;
		case 'f':
		case O_FOLLOW: follow = true; break;
		case O_HELP: fputs(LOGS_HELP, stdout); return 0;
		default: return cli_usage_error("logs", "logs: unknown option or missing value '%s'", argv[optind - 1]);
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
	size_t n_files = 0;
	char **names = NULL;
	off_t *offs = NULL;
	bool any = false;
	for (;;) {
		bool live = rundir_is_live(dir);
		struct dirent **ents = NULL;
		int n = logdir >= 0 ? scandirat(logdir, ".", &ents, is_log, cmp_log) : -1;
		bool grew = false;
		for (int i = 0; i < n; i++) {
			const char *f = ents[i]->d_name;
			if (log_matches(f, step)) {
				size_t k = 0;
				while (k < n_files && strcmp(names[k], f))
					k++;
				if (k == n_files) {
					names = xrealloc(names, (n_files + 1) * sizeof *names);
					offs = xrealloc(offs, (n_files + 1) * sizeof *offs);
					names[n_files] = xstrdup(f);
					offs[n_files++] = 0;
				}
				int fd = openat(logdir, f, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
				if (fd >= 0) {
					char buf[65536];
					ssize_t r;
					lseek(fd, offs[k], SEEK_SET);
					while ((r = read(fd, buf, sizeof buf)) > 0) {
						fwrite(buf, 1, (size_t)r, stdout);
						offs[k] += r;
						grew = true;
					}
					close(fd);
				}
				any = true;
			}
			free(ents[i]);
		}
		free(ents);
		fflush(stdout);
		if (!follow || (!live && !grew))
			break;
		if (!grew)
			usleep(200000);
	}
	for (size_t i = 0; i < n_files; i++)
		free(names[i]);
	free(names);
	free(offs);
	if (!any) {
		fprintf(stderr, "warren: %s has no %s%s%s (only jobs have step logs: 'warren job run')\n", id,
			step ? "log for step '" : "logs", step ? step : "", step ? "'" : "");
		return 1;
	}
	return 0;
}

/* ---- kill ---- */

int cmd_kill(int argc, char **argv)
{
	enum { O_STATE = 256, O_HELP };
	static const struct option opts[] = { { "state", required_argument, NULL, O_STATE },
					      { "help", no_argument, NULL, O_HELP },
					      { NULL, 0, NULL, 0 } };
	const char *state_opt = NULL;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == O_STATE) {
			state_opt = optarg;
		} else if (c == O_HELP) {
			puts("usage: warren kill RUN [--state DIR]\n\nStop a live run: SIGTERM to every process of its cell, SIGKILL after its grace.\nThe record names the cause: killed by warren kill (uid N).");
			return 0;
		} else {
			return cli_usage_error("kill", "kill: unknown option or missing value '%s'", argv[optind - 1]);
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
		fprintf(stderr, "warren: %s is not running (see 'warren show %s')\n", id, id);
		return 1;
	}
	union sigval v = { .sival_int = WARREN_KILL_MAGIC };
	if (sigqueue(pid, SIGTERM, v) < 0) {
		fprintf(stderr, "warren: cannot signal the supervisor of %s (pid %d): %s\n", id, (int)pid, strerror(errno));
		return 125;
	}
	printf("warren: asked %s to stop\n", id);
	return 0;
}
