/* SPDX-License-Identifier: Apache-2.0 */
/* record.c - spec.json and result.json of a run, through jansson. */
#include "run/record.h"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "policy/policy.h"
#include "util/fs.h"
#include "util/words.h"

const char *run_status_name(enum run_status s)
{
	static const char *const n[] = { "exited", "signaled", "limit", "interrupted", "error" };
	return n[s];
}

char *format_rfc3339(char *buf, size_t len, const struct timespec *ts)
{
	struct tm tm;
	gmtime_r(&ts->tv_sec, &tm);
	char b[32];
	strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%s.%03dZ", b, (int)((ts->tv_nsec / 1000000) % 1000));
	return buf;
}

static json_t *strv_json(char **v)
{
	json_t *a = json_array();
	for (char **p = v; p && *p; p++)
		json_array_append_new(a, json_string_lossy(*p));
	return a;
}

static json_t *opt_u64(uint64_t v) { return v ? json_integer((json_int_t)v) : json_null(); }
static json_t *opt_str(const char *s) { return s ? json_string(s) : json_null(); }

/* --image: which stored image, and its digest (null without one) */
static json_t *image_json(const struct cell_spec *s)
{
	return s->image ? json_pack("{s:s,s:o}", "name", s->image, "digest", opt_str(s->image_digest)) : json_null();
}

static json_t *limits_json(const struct limits *l)
{
	json_t *j = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:I}", "time_ms", opt_u64(l->time_ms), "cpu_time_ms",
			      opt_u64(l->cpu_ms), "memory", opt_u64(l->memory), "pids", opt_u64(l->pids), "output",
			      opt_u64(l->output), "scratch", opt_u64(l->scratch), "grace_ms", (json_int_t)l->grace_ms);
	/* the CPU's: its bandwidth as CPUs (quota / period), the shares, the CPUs and nodes */
	uint64_t period = l->cpu_period_us ? l->cpu_period_us : 100000;
	json_object_set_new(j, "cpus", l->cpu_quota_us ? json_real((double)l->cpu_quota_us / (double)period) : json_null());
	json_object_set_new(j, "cpu_quota_us", opt_u64(l->cpu_quota_us));
	json_object_set_new(j, "cpu_period_us", l->cpu_quota_us ? json_integer((json_int_t)period) : json_null());
	json_object_set_new(j, "cpu_shares", opt_u64(l->cpu_shares));
	json_object_set_new(j, "cpuset", l->cpuset[0] ? json_string(l->cpuset) : json_null());
	json_object_set_new(j, "cpuset_mems", l->cpumems[0] ? json_string(l->cpumems) : json_null());
	return j;
}

static json_t *user_json(const struct cell_spec *s)
{
	return json_pack("{s:I,s:I,s:s,s:s,s:I}", "uid", (json_int_t)s->uid, "gid", (json_int_t)s->gid, "name",
			 s->user_name, "home", s->home, "host_uid", (json_int_t)spec_host_uid(s));
}

static int dump_to(const struct cell_spec *s, const char *name, json_t *j, struct error *err)
{
	char *txt = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	if (!txt)
		return error_set(err, ENOMEM, "cannot serialise %s", name);
	size_t n = strlen(txt);
	txt = xrealloc(txt, n + 2);
	txt[n] = '\n';
	txt[n + 1] = '\0';
	int r = write_file_atomic_at(s->rundir_fd, name, txt, n + 1, 0644);
	free(txt);
	if (r < 0)
		return error_set(err, -r, "cannot write %s/%s", s->rundir, name);
	return 0;
}

/* --publish: [{"host_addr": "127.0.0.1", "host_port": 8080, "cell_port": 80}, ...] */
static json_t *published_json(const struct net_opts *n)
{
	json_t *a = json_array();
	for (unsigned i = 0; i < n->npublish; i++) {
		char ip[INET_ADDRSTRLEN];
		struct in_addr in = { .s_addr = n->publish[i].host_addr };
		inet_ntop(AF_INET, &in, ip, sizeof ip);
		json_array_append_new(a, json_pack("{s:s,s:i,s:i}", "host_addr", ip, "host_port", (int)n->publish[i].host_port,
						   "cell_port", (int)n->publish[i].cell_port));
	}
	return a;
}

/* The cell's mounts and names in spec.json: worktree_read_only, workdir, hostname, and
 * mounts: [{source, destination, read_only, kind}] in the order the driver applies them. */
static void cell_json(const struct cell_spec *s, json_t *j)
{
	json_object_set_new(j, "worktree_read_only", json_boolean(s->worktree_ro));
	json_object_set_new(j, "workdir", json_string(spec_cwd(s)));
	json_object_set_new(j, "hostname", json_string(spec_hostname(s)));
	json_t *list = json_array();
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct cell_mount *m = &s->mounts[i];
		json_array_append_new(list, json_pack("{s:s,s:s,s:b,s:s}", "source", m->source, "destination", m->destination,
						      "read_only", m->readonly, "kind", "bind"));
	}
	json_object_set_new(j, "mounts", list);
}

json_t *record_labels_json(char **labels)
{
	json_t *o = json_object();
	for (char **p = labels; p && *p; p++) {
		const char *eq = strchr(*p, '=');
		_cleanup_free_ char *k = eq ? strndup(*p, (size_t)(eq - *p)) : xstrdup(*p);
		json_object_set_new(o, k, json_string(eq ? eq + 1 : ""));
	}
	return o;
}

/* "name" and "labels" (--name, --label) when the run has them; "start" ("warm" and what it
 * "claimed", or "cold" and "start_why") for a server's run */
static void record_add_labels(const struct cell_spec *s, json_t *j)
{
	if (s->start)
		json_object_set_new(j, "start", json_string(s->start));
	if (s->start_why)
		json_object_set_new(j, "start_why", json_string(s->start_why));
	if (s->start && !strcmp(s->start, "warm")) {
		/* what the run set at its warm cell's claim (cell_spec_claims) */
		json_t *c = json_array();
		for (unsigned i = 0; i < CLAIM_N; i++)
			if (s->claimed & (1u << i))
				json_array_append_new(c, json_string(cell_claim_name(i)));
		json_object_set_new(j, "claimed", c);
	}
	if (s->name)
		json_object_set_new(j, "name", json_string(s->name));
	if (s->labels)
		json_object_set_new(j, "labels", record_labels_json(s->labels));
}

int record_write_spec(const struct cell_spec *s, struct error *err)
{
	json_t *j = json_pack("{s:s,s:o,s:o,s:o,s:o,s:b,s:s,s:o}", "id", s->id, "command", strv_json(s->argv),
			      "worktree", opt_str(s->worktree), "rootfs", opt_str(s->rootfs), "user", user_json(s),
			      "rootless", s->rootless, "driver", s->driver == CELL_DRIVER_VM ? "vm" : "container", "limits", limits_json(&s->limits));
	if (!j)
		return error_set(err, ENOMEM, "cannot build spec.json");
	json_object_set_new(j, "published", published_json(&s->net));
	/* the network the cell was given: none, nat, allow or none+publish (net/opts.h) */
	json_object_set_new(j, "network_mode", json_string(net_mode_name(s->net.mode)));
	cell_json(s, j);
	record_add_labels(s, j);
	/* the defences asked for: `warren policy` answers from them */
	json_object_set_new(j, "policy", policy_json(&s->policy));
	json_object_set_new(j, "image", image_json(s));
	/* a bundle's linux.cgroupsPath, where its group is (gc removes it from there) */
	json_object_set_new(j, "cgroup_path", s->cgroup_path ? json_sprintf("/%s", s->cgroup_path) : json_null());
	/* which directory the worktree was: gc checks it is still that one before looking in it */
	struct stat st;
	if (fstat(s->worktree_fd, &st) == 0)
		json_object_set_new(j, "worktree_inode", json_sprintf("%llu:%llu", (unsigned long long)st.st_dev,
								       (unsigned long long)st.st_ino));
	int r = dump_to(s, "spec.json", j, err);
	json_decref(j);
	return r;
}

char *record_result_json(const struct cell_spec *s, const struct run_result *r, json_t *extra)
{
	char st[64], en[64];
	format_rfc3339(st, sizeof st, &r->started);
	format_rfc3339(en, sizeof en, &r->ended);
	json_t *cause = json_null();
	if (r->cause_limit)
		cause = json_pack("{s:s,s:o,s:o}", "limit", r->cause_limit, "value", opt_str(r->cause_value),
				  "message", opt_str(r->cause_message));
	json_t *j = json_pack("{s:s,s:o,s:o,s:o,s:o,s:s,s:s,s:s,s:i,s:o,s:o,s:o,s:f}", "id", s->id, "command",
			      strv_json(s->argv), "worktree", opt_str(s->worktree), "rootfs", opt_str(s->rootfs), "user",
			      user_json(s), "started_at", st, "ended_at", en, "status", run_status_name(r->status),
			      "exit_code", r->exit_code, "signal",
			      r->signal ? json_string(sigabbrev_np(r->signal) ? sigabbrev_np(r->signal) : "?") : json_null(),
			      "cause", cause, "error", opt_str(r->error), "wall_s", r->wall_s);
	if (r->signal) {
		char name[32];
		snprintf(name, sizeof name, "SIG%s", sigabbrev_np(r->signal) ? sigabbrev_np(r->signal) : "?");
		json_object_set_new(j, "signal", json_string(name));
	}
	json_object_set_new(j, "cpu_user_s", r->have_cpu ? json_real(r->cpu_user_s) : json_null());
	json_object_set_new(j, "cpu_sys_s", r->have_cpu ? json_real(r->cpu_sys_s) : json_null());
	json_object_set_new(j, "peak_memory_bytes", r->have_memory ? json_integer((json_int_t)r->peak_memory) : json_null());
	json_object_set_new(j, "pids_peak", r->have_pids ? json_integer((json_int_t)r->pids_peak) : json_null());
	/* CPU bandwidth (--cpus): the periods the quota ran out in, the time held back */
	json_object_set_new(j, "cpu_throttled_periods", r->have_throttle ? json_integer((json_int_t)r->nr_throttled) : json_null());
	json_object_set_new(j, "cpu_throttled_s", r->have_throttle ? json_real((double)r->throttled_us / 1e6) : json_null());
	json_object_set_new(j, "output_bytes", r->have_output ? json_integer((json_int_t)r->output_bytes) : json_null());
	json_object_set_new(j, "scratch_bytes", json_integer((json_int_t)r->scratch_bytes));
	json_object_set_new(j, "limits", limits_json(&s->limits));
	json_object_set_new(j, "published", published_json(&s->net));
	json_object_set_new(j, "network_mode", json_string(net_mode_name(s->net.mode)));
	json_object_set_new(j, "image", image_json(s));
	record_add_labels(s, j);
	if (extra)
		json_object_update(j, extra);
	char *txt = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
	json_decref(j);
	if (!txt)
		return NULL;
	char *out = xasprintf("%s\n", txt);
	free(txt);
	return out;
}

int record_write_result(const struct cell_spec *s, const char *json, struct error *err)
{
	int r = write_file_atomic_at(s->rundir_fd, "result.json", json, strlen(json), 0644);
	if (r < 0)
		return error_set(err, -r, "cannot write %s/result.json", s->rundir);
	return 0;
}

void run_result_free(struct run_result *r)
{
	free(r->cause_limit);
	free(r->cause_value);
	free(r->cause_message);
	free(r->error);
	json_decref(r->failed_step);
	r->failed_step = NULL;
}

/* ---- the policy's answer for a recorded run ---- */

static char *json_str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));
	return v ? xstrdup(v) : NULL;
}

/* The parts of cell spec s the policy needs, from the run's spec.json j (what
 * record_write_spec() wrote). */
static int spec_from_record_json(struct cell_spec *s, json_t *j, struct error *err)
{
	s->worktree = json_str(j, "worktree");
	s->rootfs = json_str(j, "rootfs");
	json_t *user = json_object_get(j, "user");
	s->home = json_str(user, "home");
	s->uid = (uid_t)json_integer_value(json_object_get(user, "uid"));
	s->limits.scratch = (uint64_t)json_integer_value(json_object_get(json_object_get(j, "limits"), "scratch"));
	json_t *prot = json_object_get(json_object_get(j, "policy"), "protect");
	size_t i;
	json_t *v;
	json_array_foreach(prot, i, v) {
		if (json_string_value(v) && policy_add_protect(&s->policy, json_string_value(v), err) < 0)
			return -EINVAL;
	}
	if (!json_object_get(j, "worktree"))
		return error_set(err, 0, "%s/spec.json names no worktree", s->rundir);
	s->worktree_ro = json_is_true(json_object_get(j, "worktree_read_only"));
	s->workdir = json_str(j, "workdir");
	json_array_foreach(json_object_get(j, "mounts"), i, v) {
		struct cell_mount m = { .source = json_str(v, "source"), .destination = json_str(v, "destination"),
					.readonly = json_is_true(json_object_get(v, "read_only")), .fd = -1 };
		spec_add_mount(s, m);   /* the spec frees what it holds */
		if (!m.source || !m.destination)
			return error_set(err, 0, "%s/spec.json: mounts[%zu] has no source or destination", s->rundir, i);
	}
	return 0;
}

int record_policy_answer(const char *statedir, const char *id, json_t *spec, const char *path, enum policy_access how,
			 bool *allowed, char **why, struct error *err)
{
	struct cell_spec s = { 0 };
	snprintf(s.id, sizeof s.id, "%s", id);
	s.statedir = xstrdup(statedir);
	s.rundir = xasprintf("%s/runs/%s", statedir, id);
	int r = spec_from_record_json(&s, spec, err);
	if (r == 0) {
		struct policy_ctx pc = spec_policy_ctx(&s);
		*allowed = policy_allows(&pc, path, how, why);
	}
	cell_spec_free(&s);
	return r;
}
