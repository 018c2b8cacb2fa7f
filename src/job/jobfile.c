/* SPDX-License-Identifier: Apache-2.0 */
/* jobfile.c - the job file parser: libyaml's document tree, checked key by key with line and
 * column for every mistake, unknown keys with a suggestion, durations and sizes in the units
 * people write. */
#include "job/jobfile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "cell/mounts.h"
#include "image/entry.h"
#include "run/limits.h"
#include "run/rundir.h"
#include "util/cpus.h"
#include "util/error.h"
#include "util/strv.h"
#include "util/sys.h"
#include "util/fs.h"
#include "util/units.h"
#include "util/words.h"

struct ctx {
	const char *path;
	char *anchor;             /* canonical: where relative paths resolve and the job's own paths
	                             stay (the job file's directory, or an API job's worktree) */
	enum gate_face face;      /* GATE_JOBFILE, or GATE_API for a job sent to the server */
	const char *work_cli;     /* --work on the command line: the job file's work: is not used */
	char *worktree;           /* the worktree, symlinks resolved, for working-directory */
	yaml_document_t *doc;
	FILE *errs;
	int n_errs;
};

static void bad(struct ctx *c, const yaml_node_t *n, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void bad(struct ctx *c, const yaml_node_t *n, const char *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(c->errs, "%s:%zu:%zu: %s%s", c->path, n ? n->start_mark.line + 1 : 1, n ? n->start_mark.column + 1 : 1,
		where, *where ? ": " : "");
	vfprintf(c->errs, fmt, ap);
	fputc('\n', c->errs);
	va_end(ap);
	c->n_errs++;
}

static yaml_node_t *node(struct ctx *c, int i) { return yaml_document_get_node(c->doc, i); }

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Check that a mapping's keys are known; report the unknown ones with a suggestion. */
static bool check_keys(struct ctx *c, yaml_node_t *map, const char *where, const char *const *known)
{
	bool ok = true;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(c, p->key);
		const char *key = scalar(k);
		if (!key) {
			bad(c, k, where, "keys must be plain words");
			ok = false;
			continue;
		}
		for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
			const char *other = scalar(node(c, q->key));
			if (other && !strcmp(other, key)) {
				_cleanup_free_ char *w = *where ? xasprintf("%s.%s", where, key) : xstrdup(key);
				bad(c, k, w, "given twice (first at line %zu); keep one", node(c, q->key)->start_mark.line + 1);
				ok = false;
				break;
			}
		}
		bool found = false;
		for (const char *const *n = known; *n; n++)
			if (!strcmp(key, *n))
				found = true;
		if (found)
			continue;
		ok = false;
		const char *near = closest_word(key, known);
		_cleanup_free_ char *w = *where ? xasprintf("%s.%s", where, key) : xstrdup(key);
		if (near)
			bad(c, k, w, "unknown key; did you mean '%s'?", near);
		else {
			char list[512] = "";
			for (const char *const *n = known; *n; n++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", n == known ? "" : ", ", *n);
			bad(c, k, w, "unknown key (known: %s)", list);
		}
	}
	return ok;
}

static yaml_node_t *get(struct ctx *c, yaml_node_t *map, const char *key)
{
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
		if (scalar(node(c, p->key)) && !strcmp(scalar(node(c, p->key)), key))
			return node(c, p->value);
	return NULL;
}

static char *get_string(struct ctx *c, yaml_node_t *map, const char *key, const char *where)
{
	yaml_node_t *v = get(c, map, key);
	if (!v)
		return NULL;
	_cleanup_free_ char *w = *where ? xasprintf("%s.%s", where, key) : xstrdup(key);
	if (!scalar(v)) {
		bad(c, v, w, "must be a string");
		return NULL;
	}
	return xstrdup(scalar(v));
}

static uint64_t get_duration(struct ctx *c, yaml_node_t *map, const char *key, const char *where)
{
	yaml_node_t *v = get(c, map, key);
	if (!v)
		return 0;
	_cleanup_free_ char *w = *where ? xasprintf("%s.%s", where, key) : xstrdup(key);
	uint64_t ms;
	if (!scalar(v) || parse_duration_ms(scalar(v), &ms) < 0 || ms == 0) {
		bad(c, v, w, "\"%s\" is not a duration (e.g. 30s, 10m, 1h30m)", scalar(v) ? scalar(v) : "(not a scalar)");
		return 0;
	}
	return ms;
}

static char **get_env(struct ctx *c, yaml_node_t *map, const char *where)
{
	yaml_node_t *v = get(c, map, "env");
	if (!v)
		return NULL;
	_cleanup_free_ char *w = *where ? xasprintf("%s.env", where) : xstrdup("env");
	if (v->type != YAML_MAPPING_NODE) {
		bad(c, v, w, "must be a mapping of NAME: value");
		return NULL;
	}
	size_t n = (size_t)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
	char **env = xcalloc(n + 1, sizeof *env);
	size_t k = 0;
	for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
		const char *name = scalar(node(c, p->key));
		const char *val = scalar(node(c, p->value));
		bool valid = name && *name && !isdigit((unsigned char)*name);
		for (const char *s = name; valid && *s; s++)
			valid = isalnum((unsigned char)*s) || *s == '_';
		if (!valid) {
			bad(c, node(c, p->key), w, "'%s' is not a variable name (letters, digits and _)", name ? name : "?");
			continue;
		}
		if (!val) {
			bad(c, node(c, p->value), w, "the value of %s must be a string", name);
			continue;
		}
		env[k++] = xasprintf("%s=%s", name, val);
	}
	return env;
}

/* A path relative to the job's anchor (its file's directory), made absolute. */
static char *job_relative(const struct ctx *c, const char *p)
{
	if (p[0] == '/' || !c->anchor)
		return xstrdup(p);
	return xasprintf("%s/%s", c->anchor, p);
}

/* The gate (cell/gate.h) on the job's own path abs for use u, reported at n; opt is the
 * command line's option for it. */
static bool job_gate(struct ctx *c, yaml_node_t *n, const char *where, const char *abs, enum gate_use u)
{
	const struct gate_ask a = { .face = c->face, .uid = geteuid(), .anchor = c->anchor };
	_cleanup_strv_ char **states = statedir_known(NULL, true);
	_cleanup_error_ struct error err = { 0 };
	if (gate_check_path(abs, &a, u, (const char *const *)states, "", &err) == 0)
		return true;
	bad(c, n, where, "%s", err.msg);
	return false;
}

/* Does a step's working-directory stay inside the worktree (relative without climbing out,
 * or absolute below it)? Decided on the text: it is resolved in the cell. */
bool job_workdir_inside(const char *workdir, const char *worktree)
{
	int depth = 0;
	const char *p = workdir;
	if (workdir[0] == '/') {
		size_t n = strlen(worktree);
		if (strncmp(workdir, worktree, n) != 0 || (workdir[n] != '\0' && workdir[n] != '/'))
			return false;
		p = workdir + n;
	}
	_cleanup_free_ char *copy = xstrdup(p);
	char *save = NULL;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		depth += !strcmp(c, "..") ? -1 : 1;
		if (depth < 0)
			return false;
	}
	return true;
}

/* limits.cpus (N CPUs' worth of time) and limits.cpuset (a list of the host's CPUs) */
static void parse_cpu_limits(struct ctx *c, yaml_node_t *m, struct limits *l)
{
	yaml_node_t *v = get(c, m, "cpus");
	struct error e = { 0 };
	if (v && (!scalar(v) || cpus_take("limits.cpus", scalar(v), &l->cpu_quota_us, &l->cpu_period_us, &e) < 0))
		bad(c, v, "limits.cpus", "%s", scalar(v) ? strchr(e.msg, ' ') + 1 : "must be a number of CPUs (e.g. 0.5, 2)");
	error_clear(&e);
	if ((v = get(c, m, "cpuset")) &&
	    (!scalar(v) || cpuset_take("limits.cpuset", scalar(v), false, l->cpuset, sizeof l->cpuset, &e) < 0))
		bad(c, v, "limits.cpuset", "%s", scalar(v) ? strchr(e.msg, ' ') + 1 : "must be a CPU list (e.g. 0-1)");
	error_clear(&e);
}

static void parse_limits(struct ctx *c, yaml_node_t *m, struct limits *l)
{
	if (m->type != YAML_MAPPING_NODE) {
		bad(c, m, "limits", "must be a mapping, e.g. { memory: 2G, pids: 512, scratch: 4G }");
		return;
	}
	static const char *const known[] = { "memory", "pids", "scratch", "output", "cpu-time", "grace", "cpus", "cpuset", NULL };
	check_keys(c, m, "limits", known);
	static const char *const named[] = { "memory", "pids", "scratch", "output", "cpu-time" };
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
		yaml_node_t *v = get(c, m, named[i]);
		if (!v)
			continue;
		const struct limit_desc *d = limit_find(named[i]);
		_cleanup_free_ char *w = xasprintf("limits.%s", named[i]);
		uint64_t *f = limit_field(l, d);
		int r = scalar(v) ? limit_value(d, scalar(v), f) : -EINVAL;
		if (r == -EINVAL) {
			bad(c, v, w, "\"%s\" is not %s or none", scalar(v) ? scalar(v) : "(not a scalar)", limit_expects(d));
		} else if (r == -ERANGE || r == -EDOM) {
			_cleanup_free_ char *m = r == -EDOM ? limit_zero(d, scalar(v)) : limit_too_small(d, *f);
			bad(c, v, w, "%s", m);
		}
	}
	yaml_node_t *g = get(c, m, "grace");
	if (g)
		l->grace_ms = get_duration(c, m, "grace", "limits");
	parse_cpu_limits(c, m, l);
}

static void parse_service(struct ctx *c, const char *name, yaml_node_t *m, struct job_service *s)
{
	_cleanup_free_ char *where = xasprintf("services.%s", name);
	s->name = xstrdup(name);
	if (m->type != YAML_MAPPING_NODE) {
		bad(c, m, where, "must be a mapping with at least 'run'");
		return;
	}
	static const char *const known[] = { "run", "ready", "env", NULL };
	check_keys(c, m, where, known);
	s->run = get_string(c, m, "run", where);
	if (!s->run && !get(c, m, "run"))
		bad(c, m, where, "has no 'run' (the command that starts it)");
	s->env = get_env(c, m, where);
	yaml_node_t *r = get(c, m, "ready");
	if (!r)
		return;
	_cleanup_free_ char *rw = xasprintf("%s.ready", where);
	if (r->type != YAML_MAPPING_NODE) {
		bad(c, r, rw, "must be { tcp: PORT, timeout: D } or { run: COMMAND, timeout: D }");
		return;
	}
	static const char *const rk[] = { "tcp", "run", "timeout", NULL };
	check_keys(c, r, rw, rk);
	yaml_node_t *tcp = get(c, r, "tcp");
	if (tcp) {
		uint64_t port;
		if (!scalar(tcp) || parse_uint(scalar(tcp), &port) < 0 || port == 0 || port > 65535) {
			_cleanup_free_ char *tw = xasprintf("%s.tcp", rw);
			bad(c, tcp, tw, "\"%s\" is not a TCP port (1-65535)", scalar(tcp) ? scalar(tcp) : "(not a scalar)");
		} else {
			s->ready = READY_TCP;
			s->tcp_port = (unsigned)port;
		}
	}
	char *rr = get_string(c, r, "run", rw);
	if (rr) {
		if (tcp) {
			bad(c, r, rw, "give either tcp or run, not both");
			free(rr);
		} else {
			s->ready = READY_RUN;
			s->ready_run = rr;
		}
	}
	if (!tcp && !get(c, r, "run"))
		bad(c, r, rw, "needs tcp: PORT or run: COMMAND");
	s->ready_timeout_ms = get_duration(c, r, "timeout", rw);
	if (!s->ready_timeout_ms)
		s->ready_timeout_ms = 30000;
}

/* The condition in v, "${{ EXPR }}" as GitHub writes it or EXPR alone: its first character,
 * *len its length (blanks around it left out). */
static const char *condition_expr(const char *v, size_t *len)
{
	size_t n = strlen(v);
	if (n >= 5 && !strncmp(v, "${{", 3) && !strcmp(v + n - 2, "}}")) {
		v += 3;
		n -= 5;
	}
	while (n && isblank((unsigned char)*v))
		v++, n--;
	while (n && isblank((unsigned char)v[n - 1]))
		n--;
	*len = n;
	return v;
}

/* if: always(), success() or failure() (the parentheses may be left out), alone or as
 * ${{ failure() }}. */
static enum step_if get_condition(struct ctx *c, yaml_node_t *m, const char *where)
{
	static const char *const names[] = { [IF_SUCCESS] = "success", [IF_FAILURE] = "failure", [IF_ALWAYS] = "always" };
	yaml_node_t *cond = get(c, m, "if");
	if (!cond)
		return IF_SUCCESS;
	const char *v = scalar(cond);
	size_t n = 0;
	const char *e = v ? condition_expr(v, &n) : NULL;
	for (size_t k = 0; e && k < sizeof names / sizeof *names; k++) {
		size_t l = strlen(names[k]);
		if (n >= l && !strncmp(e, names[k], l) && (n == l || (n == l + 2 && !strncmp(e + l, "()", 2))))
			return (enum step_if)k;
	}
	_cleanup_free_ char *w = xasprintf("%s.if", where);
	bad(c, cond, w, "\"%s\" is not a condition this job file knows (always(), success() or failure())",
	    v ? v : "(not a scalar)");
	return IF_SUCCESS;
}

/* key: true or false (false when it is left out). */
static bool get_bool(struct ctx *c, yaml_node_t *m, const char *key, const char *where)
{
	yaml_node_t *n = get(c, m, key);
	const char *v = n ? scalar(n) : "false";
	if (v && (!strcmp(v, "true") || !strcmp(v, "false")))
		return !strcmp(v, "true");
	_cleanup_free_ char *w = *where ? xasprintf("%s.%s", where, key) : xstrdup(key);
	bad(c, n, w, "\"%s\" is not true or false", v ? v : "(not a scalar)");
	return false;
}

static void parse_step(struct ctx *c, size_t i, yaml_node_t *m, struct job_step *s)
{
	_cleanup_free_ char *where = xasprintf("steps[%zu]", i);
	if (m->type != YAML_MAPPING_NODE) {
		bad(c, m, where, "must be a mapping with at least 'run'");
		return;
	}
	static const char *const known[] = { "name", "run", "timeout", "timeout-minutes", "env", "working-directory", "if", "continue-on-error",
					     "shell", NULL };
	check_keys(c, m, where, known);
	s->name = get_string(c, m, "name", where);
	s->run = get_string(c, m, "run", where);
	if (!get(c, m, "run"))
		bad(c, m, where, "has no 'run' (the script of the step)");
	if (!s->name)
		s->name = xasprintf("step%zu", i + 1);
	for (char *p = s->name; *p; p++)   /* one line on the terminal; log/ encodes the rest */
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	s->shell = get_string(c, m, "shell", where);
	s->workdir = get_string(c, m, "working-directory", where);
	if (s->workdir && !c->work_cli && c->worktree && !job_workdir_inside(s->workdir, c->worktree)) {
		_cleanup_free_ char *w = xasprintf("%s.working-directory", where);
		bad(c, get(c, m, "working-directory"), w,
		    "%s leaves the worktree %s: a job file may not run steps elsewhere; pass --work DIR on the command line to lift this",
		    s->workdir, c->worktree);
	}
	s->env = get_env(c, m, where);
	s->timeout_ms = get_duration(c, m, "timeout", where);
	yaml_node_t *tm = get(c, m, "timeout-minutes");
	if (tm) {
		_cleanup_free_ char *w = xasprintf("%s.timeout-minutes", where);
		char *end = NULL;
		double mins = scalar(tm) ? strtod(scalar(tm), &end) : -1;
		if (!scalar(tm) || !end || *end || mins <= 0)
			bad(c, tm, w, "\"%s\" is not a number of minutes", scalar(tm) ? scalar(tm) : "(not a scalar)");
		else if (get(c, m, "timeout"))
			bad(c, tm, w, "give either timeout or timeout-minutes, not both");
		else
			s->timeout_ms = (uint64_t)(mins * 60000);
	}
	s->when = get_condition(c, m, where);
	s->continue_on_error = get_bool(c, m, "continue-on-error", where);
}

/* A host path SRC of the job file (relative to its directory) that must exist inside that
 * directory: a job file is part of what it builds, and may not show the cell a cache or a key
 * of its user's elsewhere; the command line may (warren job run --ro-bind ...). The absolute
 * path, or NULL after reporting. */
static char *job_source(struct ctx *c, yaml_node_t *n, const char *where, const char *src, bool ro)
{
	char *abs = job_relative(c, src);
	if (access(abs, F_OK) < 0)
		bad(c, n, where, "%s does not exist; create it, or leave it out", abs);
	else if (job_gate(c, n, where, abs, ro ? GATE_BIND_RO : GATE_BIND))
		return abs;
	free(abs);
	return NULL;
}

/* binds: and ro-binds: lists of "SRC[:DST]" (SRC relative to the job file; DST in the cell,
 * absolute; default: SRC's absolute path). */
static void parse_binds(struct ctx *c, yaml_node_t *root, const char *key, bool ro, struct job *job)
{
	yaml_node_t *l = get(c, root, key);
	if (!l)
		return;
	if (l->type != YAML_SEQUENCE_NODE) {
		bad(c, l, key, "must be a list of SRC[:DST] (a directory below the job file's, and where it goes in the cell)");
		return;
	}
	for (yaml_node_item_t *it = l->data.sequence.items.start; it < l->data.sequence.items.top; it++) {
		yaml_node_t *n = node(c, *it);
		const char *v = scalar(n);
		_cleanup_free_ char *w = xasprintf("%s[%zu]", key, (size_t)(it - l->data.sequence.items.start));
		if (!v || !*v || *v == ':') {
			bad(c, n, w, "must be SRC[:DST], e.g. cache:/opt/cache");
			continue;
		}
		_cleanup_free_ char *src = NULL, *dst = NULL;
		mount_arg_split(v, &src, &dst);
		const char *why = NULL;
		_cleanup_free_ char *abs = job_source(c, n, w, src, ro);
		_cleanup_free_ char *d = abs && strchr(v, ':') ? mount_dst_normalise(dst, &why) : NULL;
		if (abs && strchr(v, ':') && !d)
			bad(c, n, w, "the destination %s: %s", dst, why);
		if (!abs || (strchr(v, ':') && !d))
			continue;
		job->binds = xrealloc(job->binds, (job->n_binds + 1) * sizeof *job->binds);
		job->binds[job->n_binds++] = (struct job_bind){ xasprintf("%s:%s", abs, d ? d : abs), ro };
	}
}

/* The cell's mounts and names: binds:, ro-binds:, externals:, work-ro:, workdir:, hostname:. */
static void parse_cell(struct ctx *c, yaml_node_t *root, struct job *job)
{
	parse_binds(c, root, "binds", false, job);
	parse_binds(c, root, "ro-binds", true, job);
	_cleanup_free_ char *ext = get_string(c, root, "externals", "");
	if (ext)
		job->externals = job_source(c, get(c, root, "externals"), "externals", ext, true);
	if (get(c, root, "work-ro"))
		job->work_ro = get_bool(c, root, "work-ro", "");
	job->workdir = get_string(c, root, "workdir", "");
	if (job->workdir && job->workdir[0] != '/')
		bad(c, get(c, root, "workdir"), "workdir", "%s is not an absolute path in the cell", job->workdir);
	job->hostname = get_string(c, root, "hostname", "");
	if (job->hostname && !hostname_valid(job->hostname))
		bad(c, get(c, root, "hostname"), "hostname", "'%s' is not a host name (1-63 letters, digits and '-', not starting or ending with '-')",
		    job->hostname);
}

/* publish: ["8080:4096", "127.0.0.1:8081:80"]: the cell's TCP ports the host reaches, each as
 * --publish [ADDR:]HOSTPORT:CELLPORT (the mode they imply is settled when the run is made:
 * nat, or none+publish under network: none). */
static void parse_publish(struct ctx *c, yaml_node_t *root, struct job *job)
{
	yaml_node_t *l = get(c, root, "publish");
	if (!l)
		return;
	if (l->type != YAML_SEQUENCE_NODE) {
		bad(c, l, "publish", "must be a list of \"[ADDR:]HOSTPORT:CELLPORT\", e.g. [\"8080:4096\"]");
		return;
	}
	for (yaml_node_item_t *it = l->data.sequence.items.start; it < l->data.sequence.items.top; it++) {
		yaml_node_t *n = node(c, *it);
		_cleanup_free_ char *w = xasprintf("publish[%zu]", (size_t)(it - l->data.sequence.items.start));
		struct error e = { 0 };
		if (!scalar(n))
			bad(c, n, w, "must be a string \"[ADDR:]HOSTPORT:CELLPORT\", e.g. \"8080:4096\"");
		else if (net_parse_publish(&job->net, scalar(n), &e) < 0)   /* its words, named as the key */
			bad(c, n, w, "%s", e.msg + (strncmp(e.msg, "--publish", 9) ? 0 : 9 + strspn(e.msg + 9, ": ")));
		error_clear(&e);
	}
}

/* session: { idle: D, max: D } (either may be left out: 10m, 8h): the cell stays up after its
 * steps, for the commands `warren exec` sends it, until it is ended, idle or at its max. */
static void parse_session(struct ctx *c, yaml_node_t *root, struct job *job)
{
	yaml_node_t *v = get(c, root, "session");
	if (!v)
		return;
	if (job->driver == CELL_DRIVER_VM)
		bad(c, v, "session", "a session needs the container driver (driver: vm cannot yet take execs: its relay has one stream a task)");
	job->session = true;
	job->session_idle_ms = JOB_SESSION_IDLE_MS;
	job->session_max_ms = JOB_SESSION_MAX_MS;
	if (v->type != YAML_MAPPING_NODE) {
		bad(c, v, "session", "must be a mapping { idle: D, max: D } (e.g. { idle: 10m, max: 8h }; {} for these)");
		return;
	}
	static const char *const known[] = { "idle", "max", NULL };
	check_keys(c, v, "session", known);
	uint64_t idle = get_duration(c, v, "idle", "session"), max = get_duration(c, v, "max", "session");
	job->session_idle_ms = idle ? idle : job->session_idle_ms;
	job->session_max_ms = max ? max : job->session_max_ms;
}

static void parse_root(struct ctx *c, yaml_node_t *root, struct job *job)
{
	static const char *const known[] = { "name", "rootfs", "work", "timeout", "limits", "env", "services", "steps", "shell", "network",
					     "binds", "ro-binds", "externals", "work-ro", "workdir", "hostname", "image", "driver", "publish",
					     "session", NULL };
	check_keys(c, root, "", known);
	char *driver = get_string(c, root, "driver", "");
	if (driver && (!strcmp(driver, "vm") || !strcmp(driver, "container")))
		job->driver = !strcmp(driver, "vm") ? CELL_DRIVER_VM : CELL_DRIVER_CONTAINER;
	else if (driver)
		bad(c, get(c, root, "driver"), "driver", "'%s' is not a driver; give container or vm", driver);
	free(driver);
	job->name = get_string(c, root, "name", "");
	char *rootfs = get_string(c, root, "rootfs", "");
	if (rootfs) {
		job->rootfs = job_relative(c, rootfs);
		if (!is_dir(job->rootfs))
			bad(c, get(c, root, "rootfs"), "rootfs", "%s is not a directory (build the image first, or leave out rootfs for the host's /)", job->rootfs);
		else
			job_gate(c, get(c, root, "rootfs"), "rootfs", job->rootfs, GATE_ROOT);
		free(rootfs);
	}
	job->image = get_string(c, root, "image", ""); /* a stored image's name: warren image ls */
	if (job->image && job->rootfs)
		bad(c, get(c, root, "image"), "image", "give image or rootfs, not both");
	else if (job->image && image_name_problem(job->image))
		bad(c, get(c, root, "image"), "image", "%s", image_name_problem(job->image));
	char *work = get_string(c, root, "work", "");
	if (!c->work_cli && work && !strcmp(work, "none")) {
		job->work = xstrdup("none");
	} else if (c->work_cli) {
		job->work = xstrdup(c->work_cli);
	} else {
		job->work = job_relative(c, work ? work : ".");
		if (work && !is_dir(job->work))
			bad(c, get(c, root, "work"), "work", "%s is not a directory", job->work);
		else if (work)
			job_gate(c, get(c, root, "work"), "work", job->work, GATE_WORKTREE);
	}
	free(work);
	c->worktree = strcmp(job->work, "none") ? abs_path(job->work) : NULL;
	parse_cell(c, root, job);
	job->shell = get_string(c, root, "shell", "");
	job->timeout_ms = get_duration(c, root, "timeout", "");
	job->env = get_env(c, root, "");
	job->limits.grace_ms = 5000;
	yaml_node_t *l = get(c, root, "limits");
	if (l)
		parse_limits(c, l, &job->limits);
	yaml_node_t *net = get(c, root, "network");
	if (net) {
		struct error e = { 0 };
		job->network = scalar(net) ? xstrdup(scalar(net)) : NULL;
		if (!job->network)
			bad(c, net, "network", "must be none, nat, nat,lan, nat,allow=ADDRS or allow=LIST");
		else if (net_parse_mode(&job->net, job->network, &e) < 0)   /* its words, named as the key */
			bad(c, net, "network", "%s", e.msg + (strncmp(e.msg, "--net", 5) ? 0 : 5 + strspn(e.msg + 5, ": ")));
		error_clear(&e);
	}
	parse_publish(c, root, job);

	yaml_node_t *sv = get(c, root, "services");
	if (sv && sv->type != YAML_MAPPING_NODE) {
		bad(c, sv, "services", "must be a mapping of NAME: { run: ..., ready: ... }");
	} else if (sv) {
		size_t n = (size_t)(sv->data.mapping.pairs.top - sv->data.mapping.pairs.start);
		job->services = xcalloc(n, sizeof *job->services);
		for (yaml_node_pair_t *p = sv->data.mapping.pairs.start; p < sv->data.mapping.pairs.top; p++) {
			const char *name = scalar(node(c, p->key));
			if (!name) {
				bad(c, node(c, p->key), "services", "service names must be plain words");
				continue;
			}
			parse_service(c, name, node(c, p->value), &job->services[job->n_services++]);
		}
	}
	parse_session(c, root, job);
	yaml_node_t *st = get(c, root, "steps");
	if (!st && job->session) {
		job->steps = xcalloc(1, sizeof *job->steps);  /* a session: its execs come later */
	} else if (!st) {
		bad(c, root, "steps", "the job has no steps (a list of { name, run }); or give session: for one whose commands come later");
	} else if (st->type != YAML_SEQUENCE_NODE) {
		bad(c, st, "steps", "must be a list of { name: ..., run: ... }");
	} else {
		size_t n = (size_t)(st->data.sequence.items.top - st->data.sequence.items.start);
		if (n == 0)
			bad(c, st, "steps", "the list is empty");
		job->steps = xcalloc(n ? n : 1, sizeof *job->steps);
		for (yaml_node_item_t *it = st->data.sequence.items.start; it < st->data.sequence.items.top; it++) {
			size_t i = job->n_steps++;
			parse_step(c, i, node(c, *it), &job->steps[i]);
			for (size_t k = 0; k < i; k++)
				if (job->steps[k].name && job->steps[i].name && !strcmp(job->steps[k].name, job->steps[i].name)) {
					_cleanup_free_ char *w = xasprintf("steps[%zu].name", i);
					yaml_node_t *sn = node(c, *it);
					yaml_node_t *nn = sn->type == YAML_MAPPING_NODE ? get(c, sn, "name") : NULL;
					bad(c, nn ? nn : sn, w, "\"%s\" is already the name of steps[%zu]; names must differ", job->steps[i].name, k);
				}
		}
	}
}

/* Refuse, before the document is loaded, the shapes whose checks would take more than time in
 * proportion to the file: more than JOB_DEPTH_MAX levels of mappings and lists (libyaml's
 * scanner is quadratic in the depth: 200 000 levels took minutes), more than JOB_ENTRIES_MAX
 * entries in one of them (keys and step names are compared pair by pair), and aliases (each
 * use is checked again: a 13 KB file took 15 s). True when refused, the reason reported at
 * its place. A syntax error ends the walk quietly: the load reports it. */
static bool shape_refused(struct ctx *c, const char *text, size_t len)
{
	yaml_parser_t parser;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	/* the nodes directly in each open collection (a mapping's are two an entry), and its kind */
	size_t nodes[JOB_DEPTH_MAX + 1] = { 0 };
	bool mapping[JOB_DEPTH_MAX + 1] = { false };
	int depth = 0;
	_cleanup_free_ char *why = NULL;
	yaml_event_t e;
	while (!why && yaml_parser_parse(&parser, &e)) {
		yaml_event_type_t t = e.type;
		if (t == YAML_ALIAS_EVENT)
			why = xstrdup("an alias (*name) repeats a part of the file; write the part out instead");
		else if (depth && (t == YAML_SCALAR_EVENT || t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) &&
			 ++nodes[depth] > (mapping[depth] ? 2 : 1) * (size_t)JOB_ENTRIES_MAX)
			why = xasprintf("more than %d entries in one mapping or list; a job file needs far fewer, split it into smaller jobs",
					JOB_ENTRIES_MAX);
		if (!why && (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT)) {
			if (++depth > JOB_DEPTH_MAX)
				why = xasprintf("mappings and lists nested more than %d deep; a job file needs a few levels, flatten this one",
						JOB_DEPTH_MAX);
			else {
				nodes[depth] = 0;
				mapping[depth] = t == YAML_MAPPING_START_EVENT;
			}
		} else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) {
			depth--;
		}
		if (why)
			fprintf(c->errs, "%s:%zu:%zu: %s\n", c->path, e.start_mark.line + 1, e.start_mark.column + 1, why);
		bool end = t == YAML_DOCUMENT_END_EVENT || t == YAML_STREAM_END_EVENT;
		yaml_event_delete(&e);
		if (end)
			break;
	}
	yaml_parser_delete(&parser);
	c->n_errs += why != NULL;
	return why != NULL;
}

/* Is line (from 0) of text indented with a tab (libyaml's words for it are "found character
 * that cannot start any token")? */
static bool tab_indented(const char *text, size_t len, size_t line)
{
	const char *p = text, *end = text + len;
	for (size_t l = 0; l < line && p < end; l++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	while (p < end && *p == ' ')
		p++;
	return p < end && *p == '\t';
}

/* Load the document of text and check it into job. */
static void load_document(struct ctx *c, const char *text, size_t len, struct job *job)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc) && tab_indented(text, len, parser.problem_mark.line)) {
		fprintf(c->errs, "%s:%zu:1: tabs are not allowed for indentation in YAML; indent with spaces\n", c->path,
			parser.problem_mark.line + 1);
		c->n_errs++;
	} else if (parser.error != YAML_NO_ERROR) {
		fprintf(c->errs, "%s:%zu:%zu: not valid YAML: %s%s%s\n", c->path, parser.problem_mark.line + 1,
			parser.problem_mark.column + 1, parser.problem ? parser.problem : "syntax error",
			parser.context ? " " : "", parser.context ? parser.context : "");
		c->n_errs++;
	} else {
		c->doc = &doc;
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		if (!root)
			bad(c, NULL, "", "the job file is empty");
		else if (root->type != YAML_MAPPING_NODE)
			bad(c, root, "", "the job file must be a mapping (name:, steps:, ...)");
		else
			parse_root(c, root, job);
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&parser);
}

/* job_parse, with path's resolved name real (heap, taken; NULL: path as given). */
static int parse_named(const char *path, char *real, const char *text, size_t len, const char *work_cli, const char *api_work,
		       struct job *job, char **errors)
{
	memset(job, 0, sizeof *job);
	*errors = NULL;
	job->path = real ? real : xstrdup(path);
	char *buf = NULL;
	size_t blen = 0;
	struct ctx c = { .path = path, .work_cli = work_cli, .errs = open_memstream(&buf, &blen),
			 .face = api_work ? GATE_API : GATE_JOBFILE };
	_cleanup_free_ char *dir = xstrdup(job->path);
	c.anchor = abs_path(api_work ? api_work : dirname(dir));
	if (len > JOB_FILE_MAX) {
		char max[32];
		fprintf(c.errs, "%s: the job file is larger than %s, the most a job file may be; split it into smaller jobs\n",
			path, format_size(max, sizeof max, JOB_FILE_MAX));
		c.n_errs++;
	} else if (!shape_refused(&c, text, len)) {
		load_document(&c, text, len, job);
	}
	free(c.worktree);
	job->face = c.face;
	job->anchor = c.anchor;
	fclose(c.errs);
	if (c.n_errs) {
		*errors = buf;
		return -EINVAL;
	}
	free(buf);
	if (!job->name) {
		_cleanup_free_ char *copy = xstrdup(path);
		job->name = xstrdup(basename(copy));
	}
	return 0;
}

int job_parse(const char *path, const char *text, size_t len, const char *work_cli, const char *api_work, struct job *job,
	      char **errors)
{
	return parse_named(path, abs_path(path), text, len, work_cli, api_work, job, errors);
}

/* The bytes of the job file path, at most JOB_FILE_MAX and one more (for job_parse to refuse). */
static char *read_job_file(const char *path, size_t *len)
{
	_cleanup_close_ int fd = sys_openat2(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0 && errno == ENOSYS)   /* no openat2 (a cell's seccomp): no link at the end, at least */
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0 && errno == ELOOP)
		errno = ESTALE;   /* a link appeared where the name resolved to a file */
	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return NULL;
	}
	char *text = xmalloc(JOB_FILE_MAX + 2);
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, text + n, JOB_FILE_MAX + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(text);
			errno = e;
			return NULL;
		}
		n += (size_t)r;
		if (r == 0 || n > JOB_FILE_MAX)
			break;
	}
	text[n] = '\0';
	*len = n;
	return text;
}

int job_load(const char *path, const char *work_cli, const char *api_work, struct job *job, char **errors)
{
	size_t len = 0;
	/* the name resolved once, then read there with no link on the way: the text and the
	 * directory its paths stay below are one file's (a name swapped between a file and a
	 * link, or through /proc/PID/root, gave one the text and another the directory) */
	_cleanup_free_ char *real = abs_path(path);
	_cleanup_free_ char *text = real ? read_job_file(real, &len) : NULL;
	if (!text) {
		memset(job, 0, sizeof *job);
		*errors = errno == EISDIR ? xasprintf("%s: is a directory, not a job file; give the path of a job file (YAML)\n", path)
					  : xasprintf("%s: cannot read the job file: %s\n", path, strerror(errno));
		return -EINVAL;
	}
	return parse_named(path, xstrdup(real), text, len, work_cli, api_work, job, errors);
}

void job_free(struct job *job)
{
	for (size_t i = 0; i < job->n_services; i++) {
		struct job_service *s = &job->services[i];
		free(s->name);
		free(s->run);
		free(s->ready_run);
		strv_free(s->env);
	}
	for (size_t i = 0; i < job->n_steps; i++) {
		struct job_step *s = &job->steps[i];
		free(s->name);
		free(s->run);
		free(s->shell);
		free(s->workdir);
		strv_free(s->env);
	}
	free(job->services);
	free(job->steps);
	strv_free(job->env);
	free(job->path);
	free(job->name);
	free(job->rootfs);
	free(job->anchor);
	free(job->image);
	free(job->work);
	free(job->shell);
	free(job->network);
	for (size_t i = 0; i < job->n_binds; i++)
		free(job->binds[i].arg);
	free(job->binds);
	free(job->externals);
	free(job->workdir);
	free(job->hostname);
}

char *job_exec_line(char *const *argv)
{
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	if (!f)
		abort();
	fputs("exec", f);
	for (char *const *a = argv; a && *a; a++) {
		fputs(" '", f);
		for (const char *p = *a; *p; p++) {
			if (*p == '\'')
				fputs("'\\''", f);  /* ' ends the quote, \' is one, ' opens it again */
			else
				fputc(*p, f);
		}
		fputc('\'', f);
	}
	fclose(f);
	return line;
}

json_t *job_command_json(char *const *argv)
{
	char *run = job_exec_line(argv);
	json_t *job = json_pack("{s:[{s:s,s:s}]}", "steps", "name", "main", "run", run);
	free(run);
	return job;
}

char *job_json_text(json_t *job)
{
	return json_dumps(job, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
}

bool job_is_command(const struct job *job, char *const *argv)
{
	if (!argv || !*argv || job->n_steps != 1 || job->n_services || job->shell)
		return false;
	const struct job_step *st = &job->steps[0];
	if (st->shell || (st->env && *st->env) || st->workdir || st->timeout_ms || st->when != IF_SUCCESS || st->continue_on_error)
		return false;
	char *line = job_exec_line(argv);
	bool same = !strcmp(line, st->run);
	free(line);
	return same;
}
