/* SPDX-License-Identifier: Apache-2.0 */
/* cmd.c - runc's command line: the global options, then create, start, state, kill, delete,
 * run, features, spec and --version, as containerd's runc shim (go-runc) and podman's conmon
 * call them. Failures are one line on stderr and in --log, exit status 1, as runc's. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/freezer.h"
#include "cli/cli.h"
#include "oci/internal.h"
#include "oci/oci.h"
#include "supervise/gc.h"
#include "util/error.h"
#include "util/fs.h"
#include "util/sys.h"

struct oci_globals oci_g;

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static void log_line(const char *level, const char *msg)
{
	if (!oci_g.log)
		return;
	FILE *f = fopen(oci_g.log, "ae");
	if (!f)
		return;
	char ts[64];
	time_t now = time(NULL);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (oci_g.log_json) {
		json_t *j = json_pack("{s:s, s:s, s:s}", "level", level, "msg", msg, "time", ts);
		char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
		if (t)
			fprintf(f, "%s\n", t);
		free(t);
		json_decref(j);
	} else {
		fprintf(f, "time=\"%s\" level=%s msg=\"%s\"\n", ts, level, msg);
	}
	fclose(f);
}

static int fail_msg(const char *msg)
{
	warn_line("%s", msg);
	log_line("error", msg);
	return OCI_FAIL;
}

int oci_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *m = xvasprintf(fmt, ap);
	va_end(ap);
	return fail_msg(m);
}

int oci_fail_err(struct error *err) { return fail_msg(err->msg ? err->msg : "failed"); }

void oci_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *m = xvasprintf(fmt, ap);
	va_end(ap);
	log_line("warning", m);
}

/* ---- flags: --name VALUE, --name=VALUE, -x VALUE; booleans alone ---- */

struct flag {
	const char *name;   /* long name */
	char shortc;        /* or 0 */
	bool value;         /* takes a value */
	const char **out;   /* the value (or "1" for a boolean) */
};

/* Parse flags from argv[*i] on until the first operand; false after one line on stderr. */
static bool parse_flags(int argc, char **argv, int *i, const struct flag *fl, const char *cmd)
{
	for (; *i < argc; (*i)++) {
		char *a = argv[*i];
		if (a[0] != '-' || !a[1])
			return true;
		if (!strcmp(a, "--")) {
			(*i)++;
			return true;
		}
		const char *name = a + (a[1] == '-' ? 2 : 1), *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		const struct flag *f = fl;
		for (; f->name; f++)
			if (a[1] == '-' ? strlen(f->name) == len && !strncmp(f->name, name, len)
					: (f->shortc && len == 1 && name[0] == f->shortc))
				break;
		if (!f->name) {
			oci_fail("%s: unknown option '%s' (see docs/oci.md)", cmd, a);
			return false;
		}
		if (!f->value) {
			*f->out = eq && !strcmp(eq + 1, "false") ? NULL : "1";
			continue;
		}
		if (eq)
			*f->out = eq + 1;
		else if (*i + 1 < argc)
			*f->out = argv[++(*i)];
		else {
			oci_fail("%s: option '%s' needs a value", cmd, a);
			return false;
		}
	}
	return true;
}

/* ---- signals ---- */

int oci_parse_signal(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);
	if (end != s && !*end)
		return n > 0 && n < NSIG ? (int)n : -1;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbr = sigabbrev_np(sig);
		if (abbr && !strcasecmp(abbr, s))
			return sig;
	}
	return -1;
}

/* ---- state, start, kill, delete ---- */

static int open_container(const char *id, int *dfd, struct oci_state *st, char **root)
{
	_cleanup_error_ struct error err = { 0 };
	*root = oci_root(false, &err);
	if (!*root)
		return oci_fail_err(&err);
	*dfd = oci_dir_open(*root, id, &err);
	if (*dfd < 0 || oci_state_read(*dfd, st, &err) < 0)
		return oci_fail_err(&err);
	return 0;
}

static int oci_cmd_state(const char *id)
{
	_cleanup_free_ char *root = NULL;
	_cleanup_close_ int dfd = -1;
	struct oci_state st;
	if (open_container(id, &dfd, &st, &root))
		return OCI_FAIL;
	const char *status = oci_status(&st);
	bool live = strcmp(status, "stopped") != 0;
	json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:s, s:s, s:O, s:s, s:s}", "ociVersion", OCI_SPEC_VERSION, "id", st.id,
			      "status", status, "pid", (json_int_t)(live ? st.pid : 0), "bundle", st.bundle, "created",
			      st.created, "annotations", st.annotations ? st.annotations : json_object(), "owner", "",
			      "warren_run", st.run_id);
	char *t = json_dumps(j, JSON_INDENT(2));
	printf("%s\n", t);
	free(t);
	json_decref(j);
	oci_state_free(&st);
	return 0;
}

static int oci_cmd_start(const char *id)
{
	_cleanup_free_ char *root = NULL;
	_cleanup_close_ int dfd = -1;
	_cleanup_error_ struct error err = { 0 };
	struct oci_state st;
	if (open_container(id, &dfd, &st, &root))
		return OCI_FAIL;
	const char *status = oci_status(&st);
	oci_state_free(&st);
	if (strcmp(status, "created"))
		return oci_fail("cannot start a container that is %s: %s", status, id);
	return oci_ctl(dfd, id, "start", &err) < 0 ? oci_fail_err(&err) : 0;
}

/* Ask the supervisor of a live container CMD (kill, pause, resume); a stopped one is refused,
 * or left as it is (0) with stopped_ok (kill --all). */
static int ctl_live(const char *id, const char *cmd, bool stopped_ok)
{
	_cleanup_free_ char *root = NULL;
	_cleanup_close_ int dfd = -1;
	_cleanup_error_ struct error err = { 0 };
	struct oci_state st;
	if (open_container(id, &dfd, &st, &root))
		return OCI_FAIL;
	bool live = strcmp(oci_status(&st), "stopped") != 0;
	oci_state_free(&st);
	if (!live)
		return stopped_ok ? 0 : oci_fail("container not running: %s", id);
	return oci_ctl(dfd, id, cmd, &err) < 0 ? oci_fail_err(&err) : 0;
}

static int oci_cmd_kill(const char *id, const char *signame, bool all)
{
	int sig = oci_parse_signal(signame ? signame : "SIGTERM");
	if (sig < 0)
		return oci_fail("kill: '%s' is not a signal (a name such as SIGTERM or KILL, or a number)", signame);
	_cleanup_free_ char *cmd = xasprintf("kill %d %d", sig, all ? 1 : 0);
	return ctl_live(id, cmd, all);
}

/* Wait up to ms for pid to end (it is not our child: a pidfd tells). */
static bool wait_gone(const struct oci_state *st, int ms)
{
	int pfd = sys_pidfd_open(st->pid, 0);
	if (pfd < 0)
		return !oci_pid_alive(st->pid, st->start_time);
	struct pollfd p = { .fd = pfd, .events = POLLIN };
	int r = poll(&p, 1, ms);
	close(pfd);
	return r == 1 || !oci_pid_alive(st->pid, st->start_time);
}

/* A supervisor that died without its record (killed -9): gc (supervise/gc.h) reclaims what it left. */
static void reclaim_run(const struct oci_state *st)
{
	if (!st->statedir || !st->run_id)
		return;
	_cleanup_free_ char *res = xasprintf("%s/runs/%s/result.json", st->statedir, st->run_id);
	_cleanup_free_ char *dir = xasprintf("%s/runs/%s", st->statedir, st->run_id);
	if (!is_dir(dir) || path_exists(res))
		return;
	char *ids[] = { st->run_id, NULL };
	gc_run_ids(st->statedir, ids, NULL); /* delete prints nothing of gc's */
}

static int oci_cmd_delete(const char *id, bool force)
{
	_cleanup_free_ char *root = NULL;
	_cleanup_error_ struct error err = { 0 };
	root = oci_root(false, &err);
	if (!root)
		return oci_fail_err(&err);
	_cleanup_close_ int dfd = oci_dir_open(root, id, &err);
	if (dfd < 0) /* --force: gone already is done (runc's word; podman's --rm races its stop) */
		return force && oci_valid_id(id) ? 0 : oci_fail_err(&err);
	oci_lock(dfd);
	struct oci_state st;
	if (oci_state_read(dfd, &st, &err) == 0) {
		const char *status = oci_status(&st);
		if (strcmp(status, "stopped")) {
			if (strcmp(status, "created") && !force) {
				oci_state_free(&st);
				return oci_fail("cannot delete container %s that is not stopped: %s (use --force)", id, status);
			}
			oci_ctl(dfd, id, "kill 9 1", &err); /* thaws a paused one */
			if (!wait_gone(&st, 15000)) {
				kill(st.pid, SIGKILL); /* its cell dies with it; gc below reclaims the rest */
				wait_gone(&st, 5000);
			}
		}
		/* a supervisor killed -9 leaves its freezer group: thawed, its processes die */
		for (int i = 0; st.freezer && is_dir(st.freezer) && i < 100; i++) {
			cgroup_freezer_remove(st.freezer);
			usleep(10000);
		}
		reclaim_run(&st);
		oci_state_free(&st);
	}
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = rootfd < 0 ? -errno : rm_tree_at(rootfd, id);
	return r < 0 ? oci_fail("cannot remove the state of %s under %s: %s", id, root, strerror(-r)) : 0;
}

/* Which column of ps's header line is PID (0-based), or -1 */
static int pid_column(const char *header)
{
	int col = 0;
	for (const char *t = header; *t;) {
		t += strspn(t, " \t");
		size_t n = strcspn(t, " \t\n");
		if (n == 3 && !strncmp(t, "PID", 3))
			return col;
		if (!n)
			break;
		t += n;
		col++;
	}
	return -1;
}

/* The field col of line as a pid, or -1 */
static long field_pid(const char *line, int col)
{
	const char *t = line;
	for (int c = 0; c < col && *t; c++) {
		t += strspn(t, " \t");
		t += strcspn(t, " \t\n");
	}
	char *end;
	long v = strtol(t, &end, 10);
	return end == t ? -1 : v;
}

/* ps's table (args, default -ef), its header and the lines of pids */
static int ps_table(json_t *pids, char **args)
{
	int fd[2];
	if (pipe2(fd, O_CLOEXEC) < 0)
		return oci_fail("ps: cannot make a pipe: %s", strerror(errno));
	pid_t c = fork();
	if (c == 0) {
		dup2(fd[1], STDOUT_FILENO);
		size_t n = 0;
		while (args && args[n])
			n++;
		char **argv = xcalloc(n + 2 + !n, sizeof *argv);
		argv[0] = "ps";
		for (size_t k = 0; k < n; k++)
			argv[k + 1] = args[k];
		if (!n)
			argv[1] = "-ef";
		execvp("ps", argv);
		_exit(127);
	}
	close(fd[1]);
	FILE *f = c > 0 ? fdopen(fd[0], "re") : NULL;
	if (!f) {
		close(fd[0]);
		return oci_fail("ps: cannot run ps: %s", strerror(errno));
	}
	char *line = NULL;
	size_t cap = 0;
	int col = -1;
	for (bool first = true; getline(&line, &cap, f) > 0; first = false) {
		if (first) {
			col = pid_column(line);
			fputs(line, stdout);
			continue;
		}
		long p = col >= 0 ? field_pid(line, col) : -1;
		size_t i;
		json_t *v;
		json_array_foreach(pids, i, v) if (json_integer_value(v) == p) {
			fputs(line, stdout);
			break;
		}
	}
	free(line);
	fclose(f);
	int st = 0;
	waitpid(c, &st, 0);
	if (col < 0)
		return oci_fail("ps: the output of ps has no PID column (give ps options that print it)");
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : oci_fail("ps: ps failed (exit %d)", WEXITSTATUS(st));
}

/* pid's group in the pids controller (v1), or the unified one (v2): the line of its
 * /proc/PID/cgroup (heap), or NULL */
static char *cgroup_of(long pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/cgroup", pid);
	_cleanup_free_ char *t = read_file(path, NULL);
	for (char *l = t, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		char *c = strchr(l, ':');
		if (c && (!strncmp(c, ":pids:", 6) || !strncmp(c, "::", 2)))
			return xstrdup(l);
	}
	return NULL;
}

/* ps: the processes in the cell's pid namespace (its init, the job, what the job started,
 * exec's processes) and, when the cell has a cgroup of its own (root: init and exec's keeper
 * join it), in that cgroup: a pod's containers share one pid namespace (the supervisor, in the
 * container's groups too, is in none of the cell's). Their host pids as a
 * JSON array, or the lines of ps's table (args, runc's default -ef) of them. */
static int oci_cmd_ps(const char *id, const char *format, char **args)
{
	_cleanup_free_ char *root = NULL;
	_cleanup_close_ int dfd = -1;
	struct oci_state st;
	if (open_container(id, &dfd, &st, &root))
		return OCI_FAIL;
	if (format && strcmp(format, "json") && strcmp(format, "table")) {
		oci_state_free(&st);
		return oci_fail("ps: --format '%s': give table or json", format);
	}
	bool live = strcmp(oci_status(&st), "stopped") != 0;
	char path[64], ns[64] = "", other[64];
	/* the job's (init is not readable by its user: it is not dumpable) */
	pid_t job = !strcmp(oci_status(&st), "running") ? oci_job_pid_wait(st.init_pid) : oci_job_pid(st.init_pid);
	snprintf(path, sizeof path, "/proc/%d/ns/pid", (int)job);
	ssize_t n = live ? readlink(path, ns, sizeof ns - 1) : -1;
	_cleanup_free_ char *cg = n > 0 ? cgroup_of(job) : NULL, *sup = cg ? cgroup_of(st.pid) : NULL;
	/* rootless: no group of its own (the job is in its supervisor's, the caller's); as root
	 * the supervisor is in the container's (state.json's "cgroup") */
	if (cg && sup && !strcmp(cg, sup) && !st.cgroup) {
		free(cg);
		cg = NULL;
	}
	oci_state_free(&st);
	if (n <= 0)
		return oci_fail("container %s is not running", id);
	ns[n] = 0;
	json_t *pids = json_array();
	_cleanup_(closedirp) DIR *d = opendir("/proc");
	for (struct dirent *e; d && (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof path, "/proc/%ld/ns/pid", pid);
		ssize_t m = readlink(path, other, sizeof other - 1);
		if (m != n || memcmp(other, ns, (size_t)n))
			continue;
		_cleanup_free_ char *pcg = cg ? cgroup_of(pid) : NULL;
		if (!cg || (pcg && !strcmp(pcg, cg)))
			json_array_append_new(pids, json_integer(pid));
	}
	int r = 0;
	if (format && !strcmp(format, "json")) {
		char *t = json_dumps(pids, JSON_COMPACT);
		printf("%s\n", t);
		free(t);
	} else {
		fflush(stdout);
		r = ps_table(pids, args);
	}
	json_decref(pids);
	return r;
}

/* update --resources FILE (or - for stdin): the live container's memory, pids and CPU limits,
 * set by its supervisor (which keeps them for the record) */
static int oci_cmd_update(const char *id, const char *resources)
{
	if (!resources)
		return oci_fail("update: give --resources FILE (or - for standard input), the JSON of linux.resources");
	json_error_t je;
	json_t *j = !strcmp(resources, "-") ? json_loadf(stdin, 0, &je) : json_load_file(resources, 0, &je);
	if (!j)
		return oci_fail("update: --resources %s: %s (line %d)", resources, je.text, je.line);
	struct limits l = { 0 };
	_cleanup_error_ struct error err = { 0 };
	int r = oci_update_limits(j, &l, &err);
	json_decref(j);
	if (r < 0)
		return oci_fail("update: --resources %s: %s", resources, err.msg);
	_cleanup_free_ char *cmd = xasprintf("update %llu %llu %llu %llu %llu %s %s", (unsigned long long)l.memory,
					     (unsigned long long)l.pids, (unsigned long long)l.cpu_quota_us,
					     (unsigned long long)l.cpu_period_us, (unsigned long long)l.cpu_shares,
					     l.cpuset[0] ? l.cpuset : "-", l.cpumems[0] ? l.cpumems : "-");
	return ctl_live(id, cmd, false);
}

/* ---- dispatch ---- */

static const char OCI_HELP[] =
	"usage: warren oci [--root DIR] [--log FILE] [--log-format json|text] COMMAND ...\n"
	"       (the same when warren is called as warren-runc)\n"
	"\n"
	"runc's command line over warren cells, for containerd's runc shim and podman --runtime:\n"
	"  create --bundle DIR [--pid-file F] [--console-socket S] ID   make the cell, wait for start\n"
	"  start ID            let its process run\n"
	"  state ID            its state as JSON (created, running, stopped)\n"
	"  kill [--all] ID [SIGNAL]   signal its process (default SIGTERM)\n"
	"  delete [--force] ID reclaim it (--force: a running one too)\n"
	"  run --bundle DIR [--detach] ID   create + start, wait, exit as its process did\n"
	"  exec --process FILE [--detach] [--pid-file F] [--console-socket S] ID\n"
	"                      a new process in the running container's cell\n"
	"  ps [--format json|table] ID [PS-ARGS]   the container's own processes: ps's lines\n"
	"                      (ps -ef, or PS-ARGS) of them, or their host pids as JSON\n"
	"  update --resources FILE|- ID   new memory, pids and cpu limits of a live container\n"
	"                      (linux.resources JSON)\n"
	"  pause ID, resume ID freeze and thaw its processes (cgroup freezer)\n"
	"  features            what this runtime supports (JSON, runtime-spec features.md)\n"
	"  spec [--bundle DIR] write a default config.json\n"
	"  --version           runc-style version lines\n"
	"\n"
	"See docs/oci.md for the config.json fields honoured, refused and ignored.\n";

struct cmdopts {
	const char *bundle, *pid_file, *console_socket, *preserve_fds, *detach, *force, *all, *nopivot, *nokeyring,
		*process, *format, *rootless, *tty, *nnp, *ignored, *help, *resources;
};

static int dispatch(const char *cmd, int argc, char **argv, int i)
{
	struct cmdopts o = { 0 };
	const struct flag fl[] = {
		{ "bundle", 'b', true, &o.bundle }, { "pid-file", 0, true, &o.pid_file },
		{ "console-socket", 0, true, &o.console_socket }, { "preserve-fds", 0, true, &o.preserve_fds },
		{ "detach", 'd', false, &o.detach }, { "force", 'f', false, &o.force }, { "all", 'a', false, &o.all },
		{ "no-pivot", 0, false, &o.nopivot }, { "no-new-keyring", 0, false, &o.nokeyring },
		{ "process", 'p', true, &o.process }, { "format", 0, true, &o.format },
		/* exec's: the process JSON says what they would (podman passes --tty with it) */
		{ "tty", 't', false, &o.tty }, { "no-new-privs", 0, false, &o.nnp },
		{ "process-label", 0, true, &o.ignored }, { "apparmor", 0, true, &o.ignored },
		{ "resources", 'r', true, &o.resources }, { "help", 'h', false, &o.help }, { NULL, 0, false, NULL },
	};
	if (!parse_flags(argc, argv, &i, fl, cmd))
		return OCI_FAIL;
	if (o.help) {
		fputs(OCI_HELP, stdout);   /* one text names every command's flags */
		return 0;
	}
	const char *id = i < argc ? argv[i] : NULL;
	if (!strcmp(cmd, "features"))
		return oci_features();
	if (!id)
		return oci_fail("%s: no container id given (see 'warren oci --help')", cmd);
	if (!strcmp(cmd, "create") || !strcmp(cmd, "run")) {
		struct oci_create c = { .id = id, .bundle = o.bundle ? o.bundle : ".", .pid_file = o.pid_file,
					.console_socket = o.console_socket,
					.preserve_fds = o.preserve_fds ? atoi(o.preserve_fds) : 0, .detach = o.detach != NULL,
					.foreground = !strcmp(cmd, "run") && !o.detach };
		return oci_create(&c, !strcmp(cmd, "run"));
	}
	if (!strcmp(cmd, "exec")) {
		struct oci_create c = { .id = id, .pid_file = o.pid_file, .console_socket = o.console_socket,
					.detach = o.detach != NULL };
		return oci_exec(&c, o.process);
	}
	if (!strcmp(cmd, "start"))
		return oci_cmd_start(id);
	if (!strcmp(cmd, "ps"))
		return oci_cmd_ps(id, o.format, argv + i + 1);
	if (!strcmp(cmd, "update"))
		return oci_cmd_update(id, o.resources);
	if (!strcmp(cmd, "pause") || !strcmp(cmd, "resume"))
		return ctl_live(id, cmd, false);
	if (!strcmp(cmd, "state"))
		return oci_cmd_state(id);
	if (!strcmp(cmd, "kill"))
		return oci_cmd_kill(id, i + 1 < argc ? argv[i + 1] : NULL, o.all != NULL);
	if (!strcmp(cmd, "delete"))
		return oci_cmd_delete(id, o.force != NULL);
	return oci_fail("%s: not supported by warren yet (docs/oci.md)", cmd);
}

int cmd_oci(int argc, char **argv)
{
	const char *root = NULL, *log = NULL, *fmt = NULL, *sysd = NULL, *debug = NULL, *version = NULL, *help = NULL,
		   *criu = NULL, *rootless = NULL;
	const struct flag gl[] = {
		{ "root", 0, true, &root }, { "log", 0, true, &log }, { "log-format", 0, true, &fmt },
		{ "systemd-cgroup", 0, false, &sysd }, { "debug", 0, false, &debug }, { "version", 'v', false, &version },
		{ "help", 'h', false, &help }, { "criu", 0, true, &criu }, { "rootless", 0, true, &rootless },
		{ NULL, 0, false, NULL },
	};
	int i = 1;
	if (!parse_flags(argc, argv, &i, gl, "warren oci"))
		return OCI_FAIL;
	oci_g = (struct oci_globals){ .root = root, .log = log, .log_json = fmt && !strcmp(fmt, "json"),
				      .systemd_cgroup = sysd != NULL, .debug = debug != NULL };
	if (fmt && strcmp(fmt, "json") && strcmp(fmt, "text"))
		return oci_fail("--log-format '%s': give json or text", fmt);
	if (version)
		return oci_version();
	if (help || i >= argc || !strcmp(argv[i], "help")) {
		fputs(OCI_HELP, help ? stdout : stderr);
		return help ? 0 : OCI_FAIL;
	}
	const char *cmd = argv[i++];
	if (!strcmp(cmd, "spec"))
		return oci_spec(argc - i, argv + i);
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version"))
		return oci_version();
	return dispatch(cmd, argc, argv, i);
}
