/* SPDX-License-Identifier: Apache-2.0 */
/* config.c - an OCI bundle's config.json as a warren cell spec. What warren's cell gives is
 * taken as given, what it can do as asked is done, what it cannot honour is refused with one
 * line naming the field; a bundle asking for less isolation than a cell has gets the cell's
 * (docs/oci.md lists every field). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cell/sysctl.h"
#include "cell/users.h"
#include "cgroup/cgroup.h"
#include "cli/spec.h"
#include "oci/internal.h"
#include "run/rundir.h"
#include "util/cpus.h"
#include "util/conf.h"
#include "util/fs.h"
#include "util/strv.h"

static json_t *jget(json_t *o, const char *k) { return json_is_object(o) ? json_object_get(o, k) : NULL; }
static const char *jstr(json_t *o, const char *k) { return json_string_value(jget(o, k)); }
static bool jnonempty(json_t *v)
{
	return (json_is_array(v) && json_array_size(v)) || (json_is_object(v) && json_object_size(v));
}

/* ---- process ---- */

static const struct { const char *name; int res; } RLIMITS[] = {
	{ "RLIMIT_AS", RLIMIT_AS }, { "RLIMIT_CORE", RLIMIT_CORE }, { "RLIMIT_CPU", RLIMIT_CPU },
	{ "RLIMIT_DATA", RLIMIT_DATA }, { "RLIMIT_FSIZE", RLIMIT_FSIZE }, { "RLIMIT_LOCKS", RLIMIT_LOCKS },
	{ "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE }, { "RLIMIT_NICE", RLIMIT_NICE },
	{ "RLIMIT_NOFILE", RLIMIT_NOFILE }, { "RLIMIT_NPROC", RLIMIT_NPROC }, { "RLIMIT_RSS", RLIMIT_RSS },
	{ "RLIMIT_RTPRIO", RLIMIT_RTPRIO }, { "RLIMIT_RTTIME", RLIMIT_RTTIME }, { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
	{ "RLIMIT_STACK", RLIMIT_STACK },
};

static int take_rlimits(json_t *arr, struct oci_bundle *b, struct error *err)
{
	size_t i;
	json_t *r;
	json_array_foreach(arr, i, r) {
		const char *type = jstr(r, "type");
		size_t k = 0;
		while (type && k < sizeof RLIMITS / sizeof RLIMITS[0] && strcmp(RLIMITS[k].name, type))
			k++;
		if (!type || k == sizeof RLIMITS / sizeof RLIMITS[0])
			return error_set(err, 0, "process.rlimits[%zu].type '%s': not a resource limit this runtime knows", i, type ? type : "");
		if (b->n_rlimits < sizeof b->rlimits / sizeof b->rlimits[0]) {
			b->rlimits[b->n_rlimits].resource = RLIMITS[k].res;
			b->rlimits[b->n_rlimits].name = RLIMITS[k].name;
			b->rlimits[b->n_rlimits].lim.rlim_cur = (rlim_t)json_integer_value(jget(r, "soft"));
			b->rlimits[b->n_rlimits].lim.rlim_max = (rlim_t)json_integer_value(jget(r, "hard"));
			b->n_rlimits++;
		}
	}
	return 0;
}

/* The job's environment is the bundle's, with TMPDIR=/tmp last (warren's contract). */
static void take_env(struct cell_spec *s, json_t *env)
{
	struct envb e = { 0 };
	size_t i;
	json_t *x;
	json_array_foreach(env, i, x) {
		const char *kv = json_string_value(x);
		if (kv && strchr(kv, '=') && strncmp(kv, CELL_TMPDIR_ENV "=", strlen(CELL_TMPDIR_ENV) + 1))
			env_set(&e, kv);
	}
	env_setkv(&e, CELL_TMPDIR_ENV, CELL_TMPDIR_VALUE);
	s->env = e.v;
}

static int take_process(json_t *p, struct oci_bundle *b, struct cell_spec *s, struct error *err)
{
	json_t *args = jget(p, "args");
	if (!json_is_array(args) || !json_array_size(args) || !json_is_string(json_array_get(args, 0)))
		return error_set(err, 0, "process.args: missing or empty; the bundle must name the command to run");
	if (jget(p, "commandLine"))
		return error_set(err, 0, "process.commandLine: a Windows field; give process.args");
	s->argv = strv_from_json(args, false);
	b->terminal = json_is_true(jget(p, "terminal"));
	if (jget(p, "oomScoreAdj")) {
		b->has_oom = true;
		b->oom_score_adj = (int)json_integer_value(jget(p, "oomScoreAdj"));
	}
	if (json_is_array(jget(p, "rlimits")) && take_rlimits(jget(p, "rlimits"), b, err) < 0)
		return -EINVAL;
	if (jnonempty(jget(p, "ioPriority")) || jnonempty(jget(p, "scheduler")) || jnonempty(jget(p, "execCPUAffinity")))
		return error_set(err, 0, "process.%s: not supported by warren; leave it out",
				 jget(p, "ioPriority") ? "ioPriority" : jget(p, "scheduler") ? "scheduler" : "execCPUAffinity");
	return 0;
}

/* ---- mounts ---- */

/* The parts every cell has of its own: the bundle's mounts of these are the cell's. */
static const struct { const char *dst; const char *types; } CELL_OWN[] = {
	{ "/proc", "proc" }, { "/dev", "tmpfs devtmpfs bind" }, { "/dev/pts", "devpts" },
	{ "/dev/shm", "tmpfs shm bind" }, { "/dev/mqueue", "mqueue bind" }, { "/sys", "sysfs bind" },
	{ "/sys/fs/cgroup", "cgroup cgroup2 bind" }, { "/run", "tmpfs" }, { "/tmp", "tmpfs" },
};

static bool has_word(const char *list, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = list; (p = strstr(p, w)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

static bool opt_has(json_t *opts, const char *o)
{
	size_t i;
	json_t *x;
	json_array_foreach(opts, i, x) if (json_string_value(x) && !strcmp(json_string_value(x), o)) return true;
	return false;
}

/* A bind's propagation: private (what every bind of a cell is: rprivate, the pod's
 * mountPropagation None) or a slave of the host's mount (slave, rslave: HostToContainer, what
 * the host mounts below it later shows in the cell; *slave) is honoured; a bind shared with the
 * host (shared, rshared: Bidirectional) is refused naming the field. A slave in root mode only
 * where the node's operator allows it (oci.host_to_container): what the host mounts there later
 * comes in as the host made it, beyond warren's checks of the bind (a device node, a setuid
 * program, a kernel's file system: the host's /proc, writable where the volume is read-only),
 * which warren cannot put on a mount the kernel adds; rootless, the job is the caller, who
 * may reach these mounts already. */
static int take_propagation(size_t i, const char *dst, json_t *opts, const struct cell_spec *s, bool *slave, struct error *err)
{
	static const char *const refused[] = { "shared", "rshared" };
	for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++)
		if (opt_has(opts, refused[k]))
			return error_set(err, 0, "mounts[%zu] (bind on %s) options '%s': a cell's mounts never propagate to the host "
					 "(the pod's mountPropagation: Bidirectional), refused to untrusted pods; leave it out, or give rprivate or rslave",
					 i, dst, refused[k]);
	*slave = opt_has(opts, "slave") || opt_has(opts, "rslave");
	const char *allow = conf_get("oci.host_to_container", NULL);
	if (*slave && !s->rootless && !(allow && !strcmp(allow, "allow")))
		return error_set(err, 0, "mounts[%zu] (bind on %s) options '%s': what the host mounts below it later would come into the "
				 "cell unchecked, with its devices, setuid programs or kernel file system (the pod's mountPropagation: "
				 "HostToContainer), refused to untrusted pods; give rprivate, or the node's operator allows it with "
				 "'oci.host_to_container = allow' in /etc/warren/warren.conf",
				 i, dst, opt_has(opts, "rslave") ? "rslave" : "slave");
	return 0;
}

static int take_mount(size_t i, json_t *m, struct oci_bundle *b, struct cell_spec *s, struct error *err)
{
	const char *dst = jstr(m, "destination"), *type = jstr(m, "type"), *src = jstr(m, "source");
	json_t *opts = jget(m, "options");
	if (!dst || dst[0] != '/')
		return error_set(err, 0, "mounts[%zu].destination '%s': not an absolute path", i, dst ? dst : "");
	bool bind = (type && !strcmp(type, "bind")) || opt_has(opts, "bind") || opt_has(opts, "rbind");
	for (size_t k = 0; k < sizeof CELL_OWN / sizeof CELL_OWN[0]; k++)
		if (!strcmp(dst, CELL_OWN[k].dst) && has_word(CELL_OWN[k].types, bind ? "bind" : type ? type : ""))
			return 0; /* the cell's own */
	if (!bind)
		return error_set(err, 0, "mounts[%zu] (%s on %s): warren mounts only binds besides the cell's own /proc, /dev, /dev/pts, /dev/shm, /dev/mqueue, /sys, /sys/fs/cgroup, /run and /tmp; leave it out or make it a bind",
				 i, type ? type : "no type", dst);
	if (!src)
		return error_set(err, 0, "mounts[%zu] (bind on %s): no source", i, dst);
	bool slave = false;
	if (take_propagation(i, dst, opts, s, &slave, err) < 0)
		return -EINVAL;
	_cleanup_free_ char *abs = src[0] == '/' ? xstrdup(src) : xasprintf("%s/%s", b->path, src);
	_cleanup_free_ char *what = xasprintf("mounts[%zu] (bind of %s on %s)", i, abs, dst);
	/* a runtime's own files under /run (podman's hosts, hostname, resolv.conf, .containerenv)
	 * are bound read-only: no bind of /run may be written from a cell */
	_cleanup_close_ int fd = open(abs, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	bool ro = opt_has(opts, "ro") || (fd >= 0 && run_plain_file(abs, fd));
	if (cellspec_add_bind(s, GATE_BUNDLE, what, abs, dst, ro, err) < 0)
		return -EINVAL;
	s->mounts[s->n_mounts - 1].slave = slave;
	return 0;
}

/* ---- linux ---- */

static const char *const STD_DEVICES[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", NULL };

static int take_devices(json_t *devs, struct error *err)
{
	size_t i;
	json_t *d;
	json_array_foreach(devs, i, d) {
		const char *p = jstr(d, "path");
		size_t k = 0;
		while (p && STD_DEVICES[k] && strcmp(STD_DEVICES[k], p))
			k++;
		if (!p || !STD_DEVICES[k])
			return error_set(err, 0, "linux.devices[%zu] '%s': a cell has only null, zero, full, random, urandom and tty (and its own pts); warren passes no host device", i, p ? p : "");
	}
	return 0;
}

int oci_take_cpu(json_t *cpu, struct limits *l, struct error *err)
{
	json_int_t quota = json_integer_value(jget(cpu, "quota")), period = json_integer_value(jget(cpu, "period"));
	json_int_t shares = json_integer_value(jget(cpu, "shares"));
	if (jget(cpu, "realtimeRuntime") || jget(cpu, "realtimePeriod"))
		return error_set(err, 0, "linux.resources.cpu.realtimeRuntime/realtimePeriod: warren gives a cell no real-time CPU time; leave them out");
	if (period && (period < 1000 || period > 1000000))
		return error_set(err, 0, "linux.resources.cpu.period %lld: give from 1000 to 1000000 (microseconds)", (long long)period);
	if (quota > 0 && quota < 1000)
		return error_set(err, 0, "linux.resources.cpu.quota %lld: give at least 1000 (microseconds), or -1 for none", (long long)quota);
	if (shares && (shares < 2 || shares > 262144))
		return error_set(err, 0, "linux.resources.cpu.shares %lld: give from 2 to 262144", (long long)shares);
	if (quota > 0) {
		l->cpu_quota_us = (uint64_t)quota;
		l->cpu_period_us = period > 0 ? (uint64_t)period : 100000;
	} else if (quota < 0) {
		l->cpu_quota_us = l->cpu_period_us = 0; /* -1: none */
	}
	if (shares > 0)
		l->cpu_shares = (uint64_t)shares;
	const char *cpus = jstr(cpu, "cpus"), *mems = jstr(cpu, "mems");
	if (cpus && *cpus && cpuset_take("linux.resources.cpu.cpus", cpus, false, l->cpuset, sizeof l->cpuset, err) < 0)
		return -EINVAL;
	if (mems && *mems && cpuset_take("linux.resources.cpu.mems", mems, true, l->cpumems, sizeof l->cpumems, err) < 0)
		return -EINVAL;
	return 0;
}

/* resources' "limit" of what (memory, pids): a positive number into *out; absent, 0 or -1 (no
 * limit: kept as it is) leave it */
static int update_limit(json_t *r, const char *what, uint64_t *out, struct error *err)
{
	json_t *v = jget(jget(r, what), "limit");
	if (v && !json_is_integer(v))
		return error_set(err, 0, "%s.limit: not a number (bytes for memory, a count for pids)", what);
	if (json_integer_value(v) > 0)
		*out = (uint64_t)json_integer_value(v);
	return 0;
}

int oci_update_limits(json_t *r, struct limits *l, struct error *err)
{
	if (!json_is_object(r))
		return error_set(err, 0, "the resources must be a JSON object (runtime-spec linux.resources: memory, pids, cpu)");
	if (update_limit(r, "memory", &l->memory, err) < 0 || update_limit(r, "pids", &l->pids, err) < 0 ||
	    oci_take_cpu(jget(r, "cpu"), l, err) < 0)
		return -EINVAL;
	if (jnonempty(jget(r, "hugepageLimits")) || jnonempty(jget(r, "rdma")) || jnonempty(jget(r, "unified")) ||
	    jnonempty(jget(r, "blockIO")))
		return error_set(err, 0, "%s: not supported by warren; give memory, pids and cpu",
				 jnonempty(jget(r, "hugepageLimits")) ? "hugepageLimits" : jnonempty(jget(r, "rdma")) ? "rdma"
				 : jnonempty(jget(r, "unified")) ? "unified" : "blockIO");
	return 0;
}

static int take_resources(json_t *r, struct cell_spec *s, struct error *err)
{
	json_int_t mem = json_integer_value(jget(jget(r, "memory"), "limit"));
	if (mem > 0)
		s->limits.memory = (uint64_t)mem;
	json_int_t pids = json_integer_value(jget(jget(r, "pids"), "limit"));
	if (pids > 0)
		s->limits.pids = (uint64_t)pids;
	if (oci_take_cpu(jget(r, "cpu"), &s->limits, err) < 0)
		return -EINVAL;
	if (jnonempty(jget(r, "hugepageLimits")) || jnonempty(jget(r, "rdma")) || jnonempty(jget(r, "unified")))
		return error_set(err, 0, "linux.resources.%s: not supported by warren; leave it out",
				 jnonempty(jget(r, "hugepageLimits")) ? "hugepageLimits" : jnonempty(jget(r, "rdma")) ? "rdma" : "unified");
	return 0;
}

/* Does path have a ".." part? */
static bool has_dotdot(const char *path)
{
	for (const char *p = path; (p = strstr(p, "..")); p += 2)
		if ((p == path || p[-1] == '/') && (p[2] == '/' || !p[2]))
			return true;
	return false;
}

/* linux.maskedPaths and readonlyPaths: below /proc and /sys, masked as warren masks its own
 * (the rest of /sys is read-only in every cell); elsewhere in the cell as runc does
 * (policy/mask.c). They only take away. */
static int take_masks(json_t *l, struct policy_opts *p, struct error *err)
{
	const char *field[] = { "maskedPaths", "readonlyPaths" };
	for (int ro = 0; ro < 2; ro++) {
		size_t i;
		json_t *x;
		json_array_foreach(jget(l, field[ro]), i, x) {
			const char *path = json_string_value(x);
			if (!path || path[0] != '/' || !path[1] || has_dotdot(path))
				return error_set(err, 0, "linux.%s[%zu] '%s': give an absolute path in the cell, not / and without '..'",
						 field[ro], i, path ? path : "");
			if (ro && !strncmp(path, "/sys/", 5))
				continue; /* /sys is read-only whole */
			p->masks = xrealloc(p->masks, (p->n_masks + 1) * sizeof *p->masks);
			p->masks[p->n_masks++] = (struct policy_mask){ xstrdup(path), ro == 1 };
		}
	}
	return 0;
}

static int take_linux(json_t *l, struct oci_bundle *b, struct cell_spec *s, struct error *err)
{
	if (take_masks(l, &s->policy, err) < 0)
		return -EINVAL;
	if (oci_take_namespaces(jget(l, "namespaces"), b->kept, s, err) < 0 || take_devices(jget(l, "devices"), err) < 0 ||
	    take_resources(jget(l, "resources"), s, err) < 0)
		return -EINVAL;
	const char *cgp = jstr(l, "cgroupsPath");
	if (cgp && *cgp && cgroup_path_parse(cgp, oci_g.systemd_cgroup, s->rootless, &s->cgroup_path, err) < 0)
		return -EINVAL;
	/* rootless: a cell's group is warren's own choice, below the caller's delegated cgroup
	 * where it has one (cgroup/delegate.h), never a path of the bundle's */
	if (s->cgroup_path && s->rootless)
		return error_set(err, 0, "linux.cgroupsPath '%s': a rootless caller's bundle cannot name where its group goes (warren makes a rootless cell's group itself, below the cgroup v2 subtree delegated to the caller where there is one); leave it out (or run as root)",
				 cgp);
	const char *prop = jstr(l, "rootfsPropagation");
	if (prop && (!strcmp(prop, "shared") || !strcmp(prop, "rshared")))
		return error_set(err, 0, "linux.rootfsPropagation '%s': a cell's mounts never propagate to the host; leave it out or use private/slave", prop);
	/* the namespaced safe sysctls (cell/sysctl.h): containerd's ip_unprivileged_port_start,
	 * podman's ping_group_range, a pod's securityContext.sysctls */
	const char *k;
	json_t *v;
	json_object_foreach(jget(l, "sysctl"), k, v) if (cell_sysctl_add(s, "linux.sysctl", k, json_string_value(v), err) < 0)
		return -EINVAL;
	if (jnonempty(jget(l, "timeOffsets")) || jnonempty(jget(l, "intelRdt")) || jnonempty(jget(l, "personality")))
		return error_set(err, 0, "linux.%s: not supported by warren; leave it out",
				 jnonempty(jget(l, "timeOffsets")) ? "timeOffsets" : jnonempty(jget(l, "intelRdt")) ? "intelRdt" : "personality");
	return 0;
}

static int take_hooks(json_t *h, struct error *err)
{
	const char *k;
	json_t *v;
	json_object_foreach(h, k, v) if (jnonempty(v))
		return error_set(err, 0, "hooks.%s: warren runs no hooks (they would run on the host, outside the cell); leave them out", k);
	return 0;
}

/* ---- the whole ---- */

/* As runc: the process's umask when given (an integer: 18 is 022), else 022, not the caller's
 * (the runtime's caller is a shim, whose umask is not the container's). */
static int take_umask(json_t *user, struct cell_spec *s, struct error *err)
{
	json_t *um = jget(user, "umask");
	if (um && (!json_is_integer(um) || json_integer_value(um) < 0 || json_integer_value(um) > 0777))
		return error_set(err, 0, "process.user.umask: give an integer from 0 to 511 (0777)");
	s->has_umask = true;
	s->job_umask = um ? (mode_t)json_integer_value(um) : 022;
	return 0;
}

/* process.user.additionalGids (a pod's supplementalGroups and fsGroup): the job's
 * supplementary groups, cell gids as its uid and gid are. Rootless, the job's user namespace
 * maps its own gid alone (and setgroups is denied there): any other is refused. */
static int take_groups(json_t *user, struct cell_spec *s, struct error *err)
{
	json_t *gids = jget(user, "additionalGids");
	free(s->groups);
	s->groups = NULL;
	s->n_groups = 0;
	if (gids && !json_is_array(gids))
		return error_set(err, 0, "process.user.additionalGids: give an array of gids");
	size_t i;
	json_t *g;
	json_array_foreach(gids, i, g) {
		json_int_t v = json_integer_value(g);
		if (!json_is_integer(g) || v < 0 || v >= CELL_ID_RANGE)
			return error_set(err, 0, "process.user.additionalGids[%zu]: not a group of this cell (gids from 0 to %u)", i,
					 CELL_ID_RANGE - 1);
		bool seen = (gid_t)v == s->gid;
		for (size_t k = 0; k < s->n_groups; k++)
			seen |= s->groups[k] == (gid_t)v;
		if (seen)
			continue;
		if (s->n_groups == 32)
			return error_set(err, 0, "process.user.additionalGids: more than 32 groups; give fewer");
		if (s->rootless)
			return error_set(err, 0, "process.user.additionalGids[%zu] %lld: a rootless cell has only its job's group (gid %u); "
					 "leave it out (or run as root)", i, (long long)v, (unsigned)s->gid);
		s->groups = xrealloc(s->groups, (s->n_groups + 1) * sizeof *s->groups);
		s->groups[s->n_groups++] = (gid_t)v;
	}
	return 0;
}

static int take_user(json_t *user, struct cell_spec *s, struct error *err)
{
	if (jstr(user, "username"))
		return error_set(err, 0, "process.user.username: a Windows field; give uid and gid");
	unsigned uid = (unsigned)json_integer_value(jget(user, "uid")), gid = (unsigned)json_integer_value(jget(user, "gid"));
	_cleanup_free_ char *u = xasprintf("%u:%u", uid, gid);
	if (cellspec_user(s, u, err) < 0) {
		error_prefix(err, "process.user (uid %u, gid %u)", uid, gid);
		return -EINVAL;
	}
	return take_umask(user, s, err) < 0 ? -EINVAL : take_groups(user, s, err);
}

static int take_root(json_t *c, struct oci_bundle *b, struct cell_spec *s, struct error *err)
{
	const char *root = jstr(jget(c, "root"), "path");
	if (!root)
		return error_set(err, 0, "root.path: missing; the bundle must name its root file system");
	_cleanup_free_ char *abs = root[0] == '/' ? xstrdup(root) : xasprintf("%s/%s", b->path, root);
	if (!is_dir(abs))
		return error_set(err, 0, "root.path %s: not a directory", abs);
	s->root_ro = json_is_true(jget(jget(c, "root"), "readonly"));
	/* the bundle's root: below the bundle's directory, or an image elsewhere (cell/gate.h) */
	s->root_face = GATE_BUNDLE;
	free(s->anchor);
	s->anchor = abs_path(b->path);
	return cellspec_paths(s, abs, CELLSPEC_WORK_NONE, err);
}

/* The run user named as the image names its uid (its /etc/passwd), as any runtime's process
 * finds itself: the cell's passwd and group are then the image's (cell/users.h), and `id -nu`
 * in the container or an exec says the image's name, not warren's run user's. */
static void take_image_user(struct cell_spec *s)
{
	_cleanup_free_ char *passwd = users_image_db(s, false);
	char *name = users_name_of(passwd, s->uid);
	if (name) {
		free(s->user_name);
		s->user_name = name;
	}
}

static int take_cell(json_t *c, struct oci_bundle *b, struct cell_spec *s, struct error *err)
{
	json_t *p = jget(c, "process");
	if (take_user(jget(p, "user"), s, err) < 0 || take_root(c, b, s, err) < 0 || take_process(p, b, s, err) < 0)
		return -EINVAL;
	take_image_user(s);
	size_t i;
	json_t *m;
	json_array_foreach(jget(c, "mounts"), i, m) if (take_mount(i, m, b, s, err) < 0) return -EINVAL;
	const char *cwd = jstr(p, "cwd");
	if (cwd && cwd[0] != '/')
		return error_set(err, 0, "process.cwd '%s': not an absolute path", cwd);
	const char *host = jstr(c, "hostname");
	struct cell_opts o = { .workdir = cwd && strcmp(cwd, "/") ? cwd : NULL, .hostname = host && *host ? host : NULL };
	if (cellspec_cell_opts(s, &o, err) < 0)
		return -EINVAL;
	if (cwd && !strcmp(cwd, "/"))
		s->workdir = xstrdup("/");
	return take_linux(jget(c, "linux"), b, s, err) < 0 || take_hooks(jget(c, "hooks"), err) < 0 ? -EINVAL : 0;
}

/* The config: the bundle's config.json, or (kept >= 0) the copy create kept in the container's
 * state directory. */
static int load_config(struct oci_bundle *b, int kept, char **name, struct error *err)
{
	*name = kept >= 0 ? xstrdup("the container's copy of config.json (kept by create)") : xasprintf("%s/config.json", b->path);
	_cleanup_close_ int fd = kept >= 0 ? openat(kept, OCI_KEPT_CONFIG, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
					   : open(*name, O_RDONLY | O_CLOEXEC);
	json_error_t je;
	b->config = fd >= 0 ? json_loadfd(fd, 0, &je) : NULL;
	if (fd < 0)
		return error_set(err, errno, "%s: cannot read it%s", *name, kept >= 0 ? "; delete the container and create it again" : "");
	if (!b->config)
		return error_set(err, 0, "%s: not JSON: %s (line %d)", *name, je.text, je.line);
	return 0;
}

int oci_bundle_keep(int dfd, const struct oci_bundle *b)
{
	_cleanup_free_ char *text = json_dumps(b->config, JSON_COMPACT);
	return text ? write_file_atomic_at(dfd, OCI_KEPT_CONFIG, text, strlen(text), 0600) : -ENOMEM;
}

int oci_bundle_load(const char *bundle, int kept, const char *id, struct oci_bundle *b, struct cell_spec *s, struct error *err)
{
	memset(b, 0, sizeof *b);
	b->kept = kept >= 0;
	b->path = abs_path(bundle);
	if (!b->path || !is_dir(b->path))
		return error_set(err, errno, "bundle %s: not a directory", bundle);
	_cleanup_free_ char *cfg = NULL;
	if (load_config(b, kept, &cfg, err) < 0)
		return -EINVAL;
	const char *ver = jstr(b->config, "ociVersion");
	if (!ver || strncmp(ver, "1.", 2))
		return error_set(err, 0, "%s: ociVersion '%s': this runtime speaks 1.x", cfg, ver ? ver : "");
	if (!json_is_object(jget(b->config, "process")))
		return error_set(err, 0, "%s: process: missing; the bundle must say what to run", cfg);
	s->limits.grace_ms = 5000;
	/* warren's state directory (the runs' records): the bundle's annotation warren.state
	 * (podman --annotation: conmon passes no environment), $WARREN_STATE (containerd passes its
	 * own environment to the shim), else the default */
	const char *ann = jstr(jget(b->config, "annotations"), OCI_STATE_ANNOTATION);
	_cleanup_free_ char *state = ann && *ann ? abs_path(ann) : NULL;
	if (ann && *ann) {   /* a bundle chooses among its caller's state directories, never makes one */
		const struct gate_ask a = { .face = GATE_BUNDLE, .uid = geteuid() };
		_cleanup_free_ char *opt = xasprintf("annotations.%s", OCI_STATE_ANNOTATION);
		if (gate_check_path(state ? state : ann, &a, GATE_STATE, NULL, opt, err) < 0)
			return -EINVAL;
	}
	/* the checked path, resolved once: the state directory is opened by it, never through a link */
	s->statedir = statedir_default(state);
	s->name = xstrdup(id);
	if (take_cell(b->config, b, s, err) < 0 || cellspec_finish(s, err) < 0 || policy_prepare(&s->policy, err) < 0 ||
	    oci_seccomp(jget(jget(b->config, "linux"), "seccomp"), &s->policy, err) < 0 ||
	    oci_caps(jget(jget(b->config, "process"), "capabilities"), &s->policy, err) < 0)
		return -EINVAL;
	take_env(s, jget(jget(b->config, "process"), "env"));
	s->tty = s->tty_stderr = b->terminal;
	return 0;
}

int oci_process_apply(json_t *p, struct oci_bundle *b, struct cell_spec *s, struct error *err)
{
	strv_free(s->argv);
	s->argv = NULL;
	b->terminal = false;
	/* the bundle's rlimits stay, the process's follow: applied in order, each hard limit kept at
	 * most at what is set before it (oci_apply_rlimits), an exec never above the container */
	if (take_process(p, b, s, err) < 0)
		return -EINVAL;
	json_t *user = jget(p, "user");
	json_int_t uid = json_integer_value(jget(user, "uid")), gid = json_integer_value(jget(user, "gid"));
	if (uid < 0 || gid < 0 || uid >= CELL_ID_RANGE || gid >= CELL_ID_RANGE)
		return error_set(err, 0, "process.user (uid %lld, gid %lld): not a user of this cell (ids below %u)", (long long)uid,
				 (long long)gid, CELL_ID_RANGE);
	/* rootless, the job's user namespace maps its own ids alone */
	if (s->rootless && ((uid_t)uid != s->uid || (gid_t)gid != s->gid))
		return error_set(err, 0, "process.user (uid %lld, gid %lld): a rootless cell has only its job's user (uid %u, gid %u)",
				 (long long)uid, (long long)gid, (unsigned)s->uid, (unsigned)s->gid);
	s->uid = (uid_t)uid;
	s->gid = (gid_t)gid;
	if (take_umask(user, s, err) < 0 || take_groups(user, s, err) < 0)
		return -EINVAL;
	const char *cwd = jstr(p, "cwd");
	if (cwd && cwd[0] != '/')
		return error_set(err, 0, "process.cwd '%s': not an absolute path", cwd);
	free(s->workdir);
	s->workdir = xstrdup(cwd ? cwd : "/");
	strv_free(s->env);
	take_env(s, jget(p, "env"));
	/* the process's capabilities narrow the container's (caps_drop holds the bundle's), never
	 * widen them: an exec has no more than the container's own process */
	return oci_caps(jget(p, "capabilities"), &s->policy, err);
}

void oci_bundle_free(struct oci_bundle *b)
{
	json_decref(b->config);
	free(b->path);
	memset(b, 0, sizeof *b);
}
