/* SPDX-License-Identifier: Apache-2.0 */
/* runs.c - `warren ps`, `warren show` and `warren gc`: the runs of a state directory, live
 * or recorded, and the command line of the reclaim of what dead ones left (the reclaim
 * itself is supervise/gc.c's, which the server and the OCI face call too). */
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "run/id.h"
#include "run/record.h"
#include "run/history.h"
#include "run/rundir.h"
#include "supervise/gc.h"
#include "util/fs.h"
#include "util/units.h"
#include "util/words.h"


static char *command_text(json_t *cmd)
{
	char *s = xstrdup("");
	size_t i;
	json_t *a;
	json_array_foreach(cmd, i, a) {
		const char *w = json_string_value(a);
		bool quote = !w || !*w || strpbrk(w, " \t'\"$;&|<>()*?");
		char *n = xasprintf("%s%s%s%s%s", s, i ? " " : "", quote ? "'" : "", w ? w : "", quote ? "'" : "");
		free(s);
		s = n;
	}
	return s;
}

/* The published ports of a record as docker prints them: "127.0.0.1:8080->80/tcp, ...", or "-". */
static char *ports_text(json_t *published)
{
	char *s = xstrdup("");
	size_t i;
	json_t *p;
	json_array_foreach(published, i, p) {
		char *n = xasprintf("%s%s%s:%lld->%lld/tcp", s, i ? "," : "", json_string_value(json_object_get(p, "host_addr")) ?: "?",
				    json_integer_value(json_object_get(p, "host_port")), json_integer_value(json_object_get(p, "cell_port")));
		free(s);
		s = n;
	}
	if (!*s) {
		free(s);
		s = xstrdup("-");
	}
	return s;
}

static const char *gc_keep_runs, *gc_keep_for; /* gc --keep-runs N, --keep-for D */
static bool gc_orphans_opt;                    /* gc --orphans */

/* Parse the options shared by ps/show/gc (before or after the operands). Returns the index
 * of the first operand, or -1 (error printed) / -2 (help printed). */
static int parse_common(const char *cmd, const char *help, int argc, char **argv, const char **state,
			bool *json, const char **older)
{
	enum { O_STATE = 256, O_JSON, O_OLDER, O_HELP, O_KEEP_RUNS, O_KEEP_FOR, O_ORPHANS };
	struct option opts[8] = { { "state", required_argument, NULL, O_STATE }, { "help", no_argument, NULL, O_HELP } };
	int n = 2;
	if (json)
		opts[n++] = (struct option){ "json", no_argument, NULL, O_JSON };
	if (older)
		opts[n++] = (struct option){ "older-than", required_argument, NULL, O_OLDER };
	if (older) {   /* gc only: retention by the history */
		opts[n++] = (struct option){ "keep-runs", required_argument, NULL, O_KEEP_RUNS };
		opts[n++] = (struct option){ "keep-for", required_argument, NULL, O_KEEP_FOR };
		opts[n++] = (struct option){ "orphans", no_argument, NULL, O_ORPHANS };
	}
	_cleanup_error_ struct error err = { 0 };
	optind = 1;
	int c;
	while ((c = cli_getopt(argc, argv, "", opts, cmd, &err)) != -1) {
		switch (c) {
		case O_STATE: *state = optarg; break;
		case O_JSON: *json = true; break;
		case O_OLDER: *older = optarg; break;
		case O_KEEP_RUNS: case O_KEEP_FOR: *(c == O_KEEP_RUNS ? &gc_keep_runs : &gc_keep_for) = optarg; break;
		case O_ORPHANS: gc_orphans_opt = true; break;
		case O_HELP: fputs(help, stdout); return -2;
		default: cli_fail(&err); return -1;
		}
	}
	return optind;
}

/* ---- ps ---- */

static const char PS_HELP[] = "usage: warren ps [--json] [--state DIR]\n       warren ps -a [FILTERS] (see 'warren history --help')\n\nList the live runs: id, supervisor pid, age, command, worktree. With -a, every run of\nthe history, past ones too.\n";

int cmd_ps(int argc, char **argv)
{
	for (int a = 1; a < argc && strcmp(argv[a], "--"); a++)
		if (!strcmp(argv[a], "-a") || !strcmp(argv[a], "--all"))
			return cmd_history(argc, argv); /* live and past runs: the history (cli/history.c) */
	const char *state_opt = NULL;
	bool as_json = false;
	int i = parse_common("ps", PS_HELP, argc, argv, &state_opt, &as_json, NULL);
	if (i < 0)
		return i == -2 ? 0 : 125;
	if (i < argc)
		return cli_usage_error("ps", "ps takes no operands, got '%s'", argv[i]);
	struct statedir sd;
	int rc = cli_state_open(state_opt, &sd);
	if (rc)
		return rc;
	char **ids = runs_list(&sd);
	json_t *all = json_array();
	if (!as_json)
		printf("%-30s %8s %9s  %-30s %-22s %s\n", "ID", "PID", "AGE", "COMMAND", "PORTS", "WORKTREE");
	for (char **id = ids; *id; id++) {
		_cleanup_close_ int dir = rundir_open(&sd, *id, NULL);
		if (dir < 0 || !rundir_is_live(dir) || rundir_is_warm(dir))
			continue;  /* a warm cell (serve --warm) is no run until one takes it */
		json_t *spec = rundir_load_json(dir, "spec.json");
		_cleanup_free_ char *cmd = command_text(json_object_get(spec, "command"));
		const char *wt = json_string_value(json_object_get(spec, "worktree"));
		pid_t pid = rundir_pid(dir);
		double age = (double)((uint64_t)history_now_ms() - run_id_time_ms(*id)) / 1000.0;
		json_t *pub = json_object_get(spec, "published");
		if (as_json) {
			json_array_append_new(all, json_pack("{s:s,s:i,s:f,s:s,s:s,s:O}", "id", *id, "pid", (int)pid, "age_s", age,
							     "command", cmd, "worktree", wt ? wt : "", "published",
							     json_is_array(pub) ? pub : json_array()));
		} else {
			char a[32];
			format_seconds(a, sizeof a, age);
			_cleanup_free_ char *ports = ports_text(pub);
			printf("%-30s %8d %9s  %-30.30s %-22s %s\n", *id, (int)pid, a, cmd, ports, wt ? wt : "?");
		}
		json_decref(spec);
	}
	if (as_json) {
		char *t = json_dumps(all, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
		printf("%s\n", t);
		free(t);
	}
	json_decref(all);
	runs_list_free(ids);
	statedir_close(&sd);
	return 0;
}

/* ---- show ---- */

static const char SHOW_HELP[] =
	"usage: warren show [RUN] [--json] [--state DIR]\n\n"
	"Print a run's record for people, or result.json as it is with --json. RUN is an id or a\n"
	"unique prefix of one; without it, the latest run.\n";

static void row(FILE *out, const char *k, const char *v)
{
	fprintf(out, "%-14s %s\n", k, v);
}

/* A list of refused calls of result.json (key, key_total): the count, then the first paths,
 * one row each; nothing for a record without it. */
static void rows_refused(FILE *out, json_t *r, const char *key, const char *label, const char *none, const char *where)
{
	json_t *list = json_object_get(r, key);
	if (!json_is_array(list))
		return;
	_cleanup_free_ char *tkey = xasprintf("%s_total", key);
	json_int_t total = json_integer_value(json_object_get(r, tkey));
	_cleanup_free_ char *t = xasprintf("%lld%s", (long long)total, total ? "" : none);
	row(out, label, t);
	size_t i;
	json_t *w;
	json_array_foreach(list, i, w) {
		if (i == 10) {
			_cleanup_free_ char *more = xasprintf("… %zu more paths in %s/result.json", json_array_size(list) - 10, where);
			row(out, "", more);
			break;
		}
		_cleanup_free_ char *line = xasprintf("%s (%lld)", json_string_value(json_object_get(w, "path")) ?: "?",
						      (long long)json_integer_value(json_object_get(w, "count")));
		row(out, "", line);
	}
}

static void row_size(FILE *out, const char *k, json_t *v)
{
	char b[32];
	if (json_is_integer(v))
		row(out, k, format_size(b, sizeof b, (uint64_t)json_integer_value(v)));
	else
		row(out, k, "-");
}

static void row_secs(FILE *out, const char *k, json_t *v)
{
	char b[32];
	if (json_is_number(v))
		row(out, k, format_seconds(b, sizeof b, json_number_value(v)));
	else
		row(out, k, "-");
}

/* A job's steps and services of result.json, one row each: status, duration, output, cause. */
static void rows_steps(FILE *out, json_t *r, const char *where)
{
	size_t i;
	json_t *st;
	json_array_foreach(json_object_get(r, "steps"), i, st) {
		_cleanup_free_ char *k = xasprintf("step %zu", i + 1);
		_cleanup_free_ char *name = printable_name(json_string_value(json_object_get(st, "name")) ?: "?");
		json_t *ec = json_object_get(st, "exit_code"), *d = json_object_get(st, "duration_s");
		const char *log = json_string_value(json_object_get(st, "log"));
		_cleanup_free_ char *path = log ? xasprintf("%s/%s", where, log) : NULL;
		struct stat sb;
		char dur[32] = "", size[32] = "";
		if (json_is_number(d))
			format_seconds(dur, sizeof dur, json_number_value(d));
		if (path && stat(path, &sb) == 0)
			format_size(size, sizeof size, (uint64_t)sb.st_size);
		_cleanup_free_ char *ecs = json_is_integer(ec) ? xasprintf(" (exit %lld)", json_integer_value(ec)) : xstrdup("");
		const char *cause = json_string_value(json_object_get(st, "cause"));
		/* failed under continue-on-error: the job went on (not what failed it) */
		const char *tol = json_is_true(json_object_get(st, "tolerated")) ? " but tolerated (continue-on-error)" : "";
		_cleanup_free_ char *v = xasprintf("%s: %s%s%s%s%s%s%s%s%s", name, json_string_value(json_object_get(st, "status")) ?: "?", ecs,
						   tol, *dur ? ", " : "", dur, *size ? ", " : "", size, *size ? " of output" : "",
						   cause ? "; " : "");
		_cleanup_free_ char *line = xasprintf("%s%s", v, cause ? cause : "");
		row(out, k, line);
	}
	json_array_foreach(json_object_get(r, "services"), i, st) {
		_cleanup_free_ char *name = printable_name(json_string_value(json_object_get(st, "name")) ?: "?");
		_cleanup_free_ char *k = xasprintf("service %s", name);
		row(out, k, json_string_value(json_object_get(st, "status")) ?: "?");
	}
}

/* What ran, where and as whom: the rows of spec.json (or of result.json, which repeats them). */
static void rows_spec(FILE *out, const char *id, json_t *spec)
{
	_cleanup_free_ char *cmd = command_text(json_object_get(spec, "command"));
	row(out, "id", id);
	row(out, "command", cmd);
	row(out, "worktree", json_string_value(json_object_get(spec, "worktree")) ?: "-");
	row(out, "rootfs", json_string_value(json_object_get(spec, "rootfs")) ?: "host / (read-only)");
	json_t *img = json_object_get(spec, "image");
	if (json_is_object(img)) {
		_cleanup_free_ char *v = xasprintf("%s (%s)", json_string_value(json_object_get(img, "name")) ?: "?",
						   json_string_value(json_object_get(img, "digest")) ?: "?");
		row(out, "image", v);
	}
	json_t *user = json_object_get(spec, "user");
	_cleanup_free_ char *u = xasprintf("%s (uid %lld, gid %lld)", json_string_value(json_object_get(user, "name")) ?: "?",
					   json_integer_value(json_object_get(user, "uid")),
					   json_integer_value(json_object_get(user, "gid")));
	row(out, "user", u);
}

/* A job's step that failed it (result.json's or the history's failed_step) as people read
 * it: "3 test: exit 1"; NULL for none. Heap. */
static char *failed_step_text(json_t *f)
{
	if (!json_is_object(f))
		return NULL;
	_cleanup_free_ char *name = printable_name(json_string_value(json_object_get(f, "name")) ?: "?");
	return xasprintf("%lld %s: %s", json_integer_value(json_object_get(f, "number")), name,
			 json_string_value(json_object_get(f, "cause")) ?: "failed");
}

/* When the run started and ended, how, and why: the rows of result.json r. */
static void rows_status(FILE *out, const char *id, json_t *r)
{
	char idt[64];   /* a record gc wrote: the run's id tells when it started */
	uint64_t ms = run_id_time_ms(id);
	if (ms)
		format_rfc3339(idt, sizeof idt, &(struct timespec){ .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L });
	else
		snprintf(idt, sizeof idt, "-");
	row(out, "started", json_string_value(json_object_get(r, "started_at")) ?: idt);
	const char *start = json_string_value(json_object_get(r, "start"));
	if (start) {
		/* a server's run: on a warm cell (serve --warm) or cold, and why */
		const char *why = json_string_value(json_object_get(r, "start_why"));
		_cleanup_free_ char *v = why ? xasprintf("%s (%s)", start, why) : xstrdup(start);
		row(out, "start", v);
	}
	row(out, "ended", json_string_value(json_object_get(r, "ended_at")) ?: "-");
	const char *st = json_string_value(json_object_get(r, "status"));
	json_t *ec = json_object_get(r, "exit_code");
	_cleanup_free_ char *stl = json_is_integer(ec)
		? xasprintf("%s (exit %lld%s%s)", st ?: "?", json_integer_value(ec),
			    json_is_string(json_object_get(r, "signal")) ? ", " : "",
			    json_string_value(json_object_get(r, "signal")) ?: "")
		: xasprintf("%s (exit status unknown)", st ?: "?");   /* a record gc wrote: none is known */
	row(out, "status", stl);
	json_t *cause = json_object_get(r, "cause");
	if (json_is_object(cause))
		row(out, "cause", json_string_value(json_object_get(cause, "message")) ?: "-");
	if (json_is_string(json_object_get(r, "error")))
		row(out, "error", json_string_value(json_object_get(r, "error")));
	_cleanup_free_ char *failed = failed_step_text(json_object_get(r, "failed_step"));
	if (failed)
		row(out, "failed step", failed);
}

/* When the run reached its steps (result.json's timings, us after its supervisor's start), in
 * ms: "cell ready 2.87 ms, job 3.08 to 4.51 ms, cell gone 5.20 ms, record 5.35 ms"; a step the
 * record has no time for (a warm cell's making, a VM's guest) is left out. */
static void row_timings(FILE *out, json_t *r)
{
	json_t *t = json_object_get(r, "timings");
	if (!json_is_object(t))
		return;
	double ms[5];
	bool has[5];
	static const char *const keys[] = { "cell_ready_us", "job_started_us", "job_ended_us", "cell_gone_us", "recorded_us" };
	for (int i = 0; i < 5; i++) {
		json_t *v = json_object_get(t, keys[i]);
		has[i] = json_is_integer(v);
		ms[i] = has[i] ? (double)json_integer_value(v) / 1000 : 0;
	}
	char part[5][64];
	int n = 0;
	if (has[0])
		snprintf(part[n++], sizeof part[0], "cell ready %.2f ms", ms[0]);
	if (has[1] && has[2])
		snprintf(part[n++], sizeof part[0], "job %.2f to %.2f ms", ms[1], ms[2]);
	else if (has[1] || has[2])
		snprintf(part[n++], sizeof part[0], "job %s %.2f ms", has[1] ? "started" : "ended", has[1] ? ms[1] : ms[2]);
	if (has[3])
		snprintf(part[n++], sizeof part[0], "cell gone %.2f ms", ms[3]);
	if (has[4])
		snprintf(part[n++], sizeof part[0], "record %.2f ms", ms[4]);
	if (!n)
		return;
	char line[5 * sizeof part[0] + 16] = "";
	for (int i = 0; i < n; i++)
		snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s", i ? ", " : "", part[i]);
	row(out, "timings", line);
}

/* The bytes of output and, for a plain run whose output was kept, where to read it. */
static void row_output(FILE *out, json_t *r, const char *id)
{
	json_t *ob = json_object_get(r, "output_bytes");
	const char *log = json_string_value(json_object_get(r, "log"));
	char b[32];
	if (!log || !json_is_integer(ob)) {
		row_size(out, "output", ob);
		return;
	}
	format_size(b, sizeof b, (uint64_t)json_integer_value(ob));
	_cleanup_free_ char *v = xasprintf("%s, %s in %s ('warren logs %s')", b,
					   json_is_true(json_object_get(r, "log_cut")) ? "cut at the output limit" : "kept",
					   log, id);
	row(out, "output", v);
}

/* What the run used: time, memory, processes, output, scratch; and what it was refused. */
static void rows_usage(FILE *out, json_t *r, const char *id, const char *where)
{
	row_secs(out, "wall", json_object_get(r, "wall_s"));
	row_timings(out, r);
	row_secs(out, "cpu user", json_object_get(r, "cpu_user_s"));
	row_secs(out, "cpu system", json_object_get(r, "cpu_sys_s"));
	row_size(out, "peak memory", json_object_get(r, "peak_memory_bytes"));
	json_t *pp = json_object_get(r, "pids_peak");
	_cleanup_free_ char *pps = json_is_integer(pp) ? xasprintf("%lld", json_integer_value(pp)) : xstrdup("-");
	row(out, "pids peak", pps);
	row_output(out, r, id);
	row_size(out, "scratch", json_object_get(r, "scratch_bytes"));
	if (json_is_array(json_object_get(r, "refused_writes"))) {
		rows_refused(out, r, "refused_writes", "refused writes", " (it wrote only where it may)", where);
		rows_refused(out, r, "refused_connects", "host sockets", " (it tried none)", where);
	} else if (json_is_string(json_object_get(r, "refused_writes_off"))) {
		row(out, "refused writes", json_string_value(json_object_get(r, "refused_writes_off")));
	}
}

/* The limits of result.json r on one row: "time 10s, memory 1.0 GiB, pids 100", or "none". */
static void row_limits(FILE *out, json_t *r)
{
	json_t *l = json_object_get(r, "limits"), *v;
	char *lim = xstrdup("");
	const char *key;
	json_object_foreach(l, key, v) {
		if (!json_is_integer(v) || !strcmp(key, "grace_ms"))
			continue;
		char b[32];
		uint64_t x = (uint64_t)json_integer_value(v);
		const char *val = strstr(key, "_ms") ? format_duration_ms(b, sizeof b, x)
			       : !strcmp(key, "pids") ? (snprintf(b, sizeof b, "%llu", (unsigned long long)x), b)
						      : format_size(b, sizeof b, x);
		char *n = xasprintf("%s%s%.*s %s", lim, *lim ? ", " : "", (int)strcspn(key, "_"), key, val);
		free(lim);
		lim = n;
	}
	row(out, "limits", *lim ? lim : "none");
	free(lim);
}

/* The cell's network (spec's network_mode; result.json's network: its address and subnet, pasta's) and
 * its published ports; nothing for a record made before they were kept. */
static void rows_network(FILE *out, json_t *spec, json_t *r)
{
	json_t *net = r ? json_object_get(r, "network") : NULL;
	const char *mode = json_string_value(json_object_get(spec, "network_mode")) ?: json_string_value(json_object_get(net, "mode"));
	if (mode) {
		const char *addr = json_string_value(json_object_get(net, "address"));
		const char *via = json_string_value(json_object_get(net, "via"));
		const char *subnet = json_string_value(json_object_get(net, "subnet"));
		_cleanup_free_ char *v = xasprintf("%s%s%s%s%s%s%s%s", mode, addr ? ", address " : "", addr ?: "",
						   subnet ? " in " : "", subnet ?: "", via ? " (via " : "", via ?: "", via ? ")" : "");
		row(out, "network", v);
	}
	json_t *pub = json_object_get(spec, "published");
	if (json_is_array(pub)) {
		_cleanup_free_ char *ports = ports_text(pub);
		row(out, "ports", ports);
	}
}

void show_record(FILE *out, const char *id, const char *where, json_t *spec, json_t *r, bool live)
{
	rows_spec(out, id, spec);
	rows_network(out, spec, r);
	if (!r) {
		row(out, "status", live ? "running" : "ended without a record (supervisor died; run 'warren gc')");
		return;
	}
	rows_status(out, id, r);
	rows_steps(out, r, where);
	rows_usage(out, r, id, where);
	row_limits(out, r);
	row(out, "record", where);
}

int cmd_show(int argc, char **argv)
{
	const char *state_opt = NULL;
	bool as_json = false;
	int i = parse_common("show", SHOW_HELP, argc, argv, &state_opt, &as_json, NULL);
	if (i < 0)
		return i == -2 ? 0 : 125;
	if (argc - i > 1)
		return cli_usage_error("show", "show takes one run, got %d", argc - i);
	int rc;
	_cleanup_close_ int dir = -1;
	_cleanup_free_ char *state = NULL;
	_cleanup_free_ char *id = cli_run_open(state_opt, i < argc ? argv[i] : NULL, &dir, &state, &rc);
	if (!id)
		return rc;
	_cleanup_free_ char *where = xasprintf("%s/runs/%s", state, id);
	bool live = rundir_is_live(dir);
	if (as_json) {
		_cleanup_free_ char *txt = rundir_read(dir, "result.json");
		if (!txt) {
			warn_line("%s has no result.json yet (%s)", id, live ? "it is still running" : "its supervisor died; run 'warren gc'");
			return 125;
		}
		fputs(txt, stdout);
		return 0;
	}
	json_t *r = rundir_load_json(dir, "result.json");
	json_t *spec = r ? json_incref(r) : rundir_load_json(dir, "spec.json");
	if (!spec) {
		warn_line("%s has no record in %s", id, where);
		return 125;
	}
	show_record(stdout, id, where, spec, r, live);
	json_decref(spec);
	json_decref(r);
	return 0;
}

/* ---- gc ---- */

static const char GC_HELP[] =
	"usage: warren gc [--older-than D] [--keep-runs N] [--keep-for D] [RUN...] [--state DIR]\n"
	"       warren gc --orphans\n\n"
	"Reclaim the scratch, mounts and cgroups that runs whose supervisor is gone left behind\n"
	"(after a crash or kill -9 of warren), and the scratch of runs kept with --keep. Live\n"
	"runs are never touched. With --older-than D (e.g. 7d, 12h; 0s: all), also delete the\n"
	"records of runs that ended more than D ago. With RUN ids or prefixes, only those (without\n"
	"them, also what interrupted image imports left, the vm driver's stale cache, and the\n"
	"network's bridge and tables when no run holds an address).\n"
	"--keep-runs N / --keep-for D: retention by the history (<state>/history.db), as warren\n"
	"serve does it: delete the records of all but the newest N ended runs / of runs that\n"
	"ended more than D ago; their history rows stay, marked pruned.\n"
	"--orphans (root): remove the empty run cgroups of state directories that are gone, on\n"
	"the whole host; a cgroup with a process in it is left alone and named, and one made less\n"
	"than 10 s ago (its run may be starting) is left too.\n";

int cmd_gc(int argc, char **argv)
{
	const char *state_opt = NULL, *older = NULL;
	int i = parse_common("gc", GC_HELP, argc, argv, &state_opt, NULL, &older);
	if (i < 0)
		return i == -2 ? 0 : 125;
	if (gc_orphans_opt && (i < argc || state_opt || older || gc_keep_runs || gc_keep_for))
		return cli_usage_error("gc", "--orphans works on the whole host: give it alone (no RUN, --state, --older-than or --keep-*)");
	if (gc_orphans_opt) {
		_cleanup_error_ struct error err = { 0 };
		int r = gc_orphans(stdout, &err);
		return r < 0 ? cli_fail(&err) : r ? 125 : 0;
	}
	if (i < argc && (gc_keep_runs || gc_keep_for))
		return cli_usage_error("gc", "--keep-runs and --keep-for work on the whole history: give them without RUN");
	struct gc_opts o = { .out = stdout };
	if (older && parse_duration_ms(older, &o.older_ms) < 0)
		return cli_usage_error("gc", "--older-than: '%s' is not a duration (e.g. 12h, 7d, 0s)", older);
	if (older && !o.older_ms)
		o.older_ms = 1;   /* 0s: every ended run's record (gc_runs reads 0 as no --older-than) */
	if (gc_keep_runs && (parse_uint(gc_keep_runs, &o.keep_runs) < 0 || !o.keep_runs))
		return cli_usage_error("gc", "--keep-runs: '%s' is not a number of runs (1 or more)", gc_keep_runs);
	if (gc_keep_for && (parse_duration_ms(gc_keep_for, &o.keep_for_ms) < 0 || !o.keep_for_ms))
		return cli_usage_error("gc", "--keep-for: '%s' is not a duration (e.g. 12h, 7d)", gc_keep_for);
	struct statedir sd;
	int rc = cli_state_open(state_opt, &sd);
	if (rc)
		return rc;
	char **ids;
	o.housekeeping = i == argc;  /* with RUN ids, only those */
	if (!o.housekeeping) {
		size_t n = (size_t)(argc - i);
		ids = xcalloc(n + 1, sizeof *ids);
		for (size_t k = 0; k < n; k++) {
			_cleanup_error_ struct error err = { 0 };
			ids[k] = runs_resolve(&sd, argv[i + (int)k], &err);
			if (!ids[k]) {
				runs_list_free(ids);
				statedir_close(&sd);
				return cli_fail(&err);
			}
		}
	} else {
		ids = runs_list(&sd);
	}
	struct gc_counts n;
	int r = gc_runs(&sd, ids, &o, &n);
	runs_list_free(ids);
	statedir_close(&sd);
	return r < 0 ? 125 : 0;
}
