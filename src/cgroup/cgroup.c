/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup.c - per-run control groups. v2: <unified>/warren/<id> with memory, pids, cpu (a
 * rootless run's: <delegate>/warren/<id>, below the cgroup systemd delegates to its caller,
 * delegate.h); v1 and hybrid hosts: <mount>/<controller>/warren/<id> in memory, pids,
 * cpuacct, cpu and cpuset. Preparing one costs a few mkdir and writes; nothing walks the tree. */
#include "cgroup/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup/delegate.h"
#include "util/cpus.h"
#include "util/fs.h"
#include "util/units.h"

#define CG_ROOT "/sys/fs/cgroup"

static bool v2_has(const char *dir, const char *ctrl)
{
	_cleanup_free_ char *p = xasprintf("%s/cgroup.controllers", dir);
	_cleanup_free_ char *s = read_file(p, NULL);
	if (!s)
		return false;
	size_t n = strlen(ctrl);
	for (char *t = s; (t = strstr(t, ctrl)); t += n)
		if ((t == s || t[-1] == ' ') && (t[n] == ' ' || t[n] == '\n' || t[n] == '\0'))
			return true;
	return false;
}

static bool v1_has(const char *ctrl)
{
	_cleanup_free_ char *p = xasprintf(CG_ROOT "/%s/tasks", ctrl);
	return access(p, F_OK) == 0;
}

/* The controllers a run's cgroup uses, on v2 and on v1 */
static const char *const CTRLS_V2[] = { "memory", "pids", "cpu" };
static const char *const CTRLS_V1[] = { "memory", "pids", "cpuacct" };

/* The host's kind, found once a process (a run asks three times: its limits' defaults, its
 * cgroup): the file system on /sys/fs/cgroup, and the controllers missing from it. */
static enum cgroup_kind host_kind(const char **where, const char **missing)
{
	static enum cgroup_kind kind;
	static char *w, *m;
	static bool known;
	if (known)
		goto out;
	struct statfs fs;
	if (statfs(CG_ROOT, &fs) < 0) {
		w = xstrdup("no cgroup file system at " CG_ROOT);
		m = xstrdup("memory pids cpu");
		kind = CGROUP_NONE;
	} else {
		bool v2 = fs.f_type == CGROUP2_SUPER_MAGIC;
		const char *const *c = v2 ? CTRLS_V2 : CTRLS_V1;
		m = xstrdup("");
		for (int i = 0; i < 3; i++)
			if (!(v2 ? v2_has(CG_ROOT, c[i]) : v1_has(c[i]))) {
				char *t = xasprintf("%s%s%s", m, *m ? " " : "", c[i]);
				free(m);
				m = t;
			}
		w = xstrdup(v2 ? "v2 (unified) at " CG_ROOT : "v1 controllers (hybrid or legacy) at " CG_ROOT);
		kind = v2 ? CGROUP_V2 : CGROUP_V1;
	}
	known = true;
out:
	*where = w;
	*missing = m;
	return kind;
}

/* Is ctrl among the controllers missing (a list of names split by spaces)? */
static bool among_missing(const char *missing, const char *ctrl)
{
	size_t n = strlen(ctrl);
	for (const char *t = missing; (t = strstr(t, ctrl)); t += n)
		if ((t == missing || t[-1] == ' ') && (t[n] == ' ' || t[n] == '\0'))
			return true;
	return false;
}

/* Does the host's cgroup file system offer ctrl? The three the kind was found with are in its
 * list of missing ones; another is looked at. */
static bool ctrl_present(const char *ctrl)
{
	const char *where, *missing;
	enum cgroup_kind k = host_kind(&where, &missing);
	const char *const *known = k == CGROUP_V2 ? CTRLS_V2 : CTRLS_V1;
	for (int i = 0; i < 3; i++)
		if (!strcmp(ctrl, known[i]))
			return k != CGROUP_NONE && !among_missing(missing, ctrl);
	return k == CGROUP_V2 ? v2_has(CG_ROOT, ctrl) : k == CGROUP_V1 && v1_has(ctrl);
}

bool cgroup_can_limit(const char *ctrl, bool rootless)
{
	return rootless ? cgroup_delegate_offers(ctrl) == CGROUP_DELEG_OK : ctrl_present(ctrl);
}

/* Does the v2 tree a run's group is made in (the host's, or the rootless caller's delegate)
 * offer ctrl? */
static bool v2_offers(const struct cgroup *cg, const char *ctrl)
{
	return cg->delegated ? cgroup_delegate_offers(ctrl) == CGROUP_DELEG_OK : ctrl_present(ctrl);
}

enum cgroup_kind cgroup_host_kind(char **where, char **missing)
{
	const char *w, *m;
	enum cgroup_kind k = host_kind(&w, &m);
	*where = xstrdup(w);
	*missing = xstrdup(m);
	return k;
}

static int write_str(const char *dir, const char *file, const char *val)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, file);
	return write_file(p, val, strlen(val));
}

static int write_u64(const char *dir, const char *file, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%llu", (unsigned long long)v);
	return write_str(dir, file, b);
}

static uint64_t read_u64(const char *dir, const char *file)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, file);
	_cleanup_free_ char *s = read_file(p, NULL);
	return s ? strtoull(s, NULL, 10) : 0;
}

/* The value of key in text's "key value" lines, or 0. */
static uint64_t key_value(const char *text, const char *key)
{
	size_t n = strlen(key);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, n) == 0 && l[n] == ' ')
			return strtoull(l + n + 1, NULL, 10);
	return 0;
}

/* "key value" lines: the value of key, or 0. */
static uint64_t read_key(const char *dir, const char *file, const char *key)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, file);
	_cleanup_free_ char *s = read_file(p, NULL);
	return s ? key_value(s, key) : 0;
}

/* The value of key in the "key value" lines of the open cgroup file *fd (opened from dir/file
 * the first time), read from its start; 0 when it cannot be read. */
static uint64_t read_key_kept(int *fd, const char *dir, const char *file, const char *key)
{
	if (*fd < 0) {
		_cleanup_free_ char *p = xasprintf("%s/%s", dir, file);
		*fd = open(p, O_RDONLY | O_CLOEXEC);
	}
	char buf[1024]; /* memory.events, the longest: 6 short lines */
	ssize_t n = *fd >= 0 ? pread(*fd, buf, sizeof buf - 1, 0) : -1;
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return key_value(buf, key);
}

static bool has_file(const char *dir, const char *file)
{
	_cleanup_free_ char *p = xasprintf("%s/%s", dir, file);
	return access(p, F_OK) == 0;
}

/* A cgroup directory of mode: warren's parents 0711 (other host users cannot list the runs),
 * each run's own 0750 with group reader, the run user's host gid (nor read its figures; the
 * job reads them in its cell's view of the group). */
static int mk(const char *path, mode_t mode, gid_t reader, struct error *err)
{
	bool made = mkdir(path, mode) == 0;
	if (!made && errno != EEXIST)
		return error_set(err, errno, "cannot create the cgroup %s", path);
	if (reader != (gid_t)-1 && chown(path, (uid_t)-1, reader) < 0) {
		/* (without CAP_CHOWN): what was made here goes, the caller knows of no cgroup yet */
		int e = errno;
		if (made)
			rmdir(path);
		return error_set(err, e, "cannot give the cgroup %s to the run's group (as root warren needs CAP_CHOWN)", path);
	}
	struct stat st;
	if (stat(path, &st) == 0 && (st.st_mode & 07777) != mode)
		chmod(path, mode);
	return 0;
}

/* Does l limit the CPU's bandwidth or weight (the cpu controller), its placement (cpuset)? */
static bool wants_cpu(const struct limits *l) { return l->cpu_quota_us || l->cpu_shares; }
static bool wants_cpuset(const struct limits *l) { return l->cpuset[0] || l->cpumems[0]; }

/* v1 cpuset: a new group has no CPUs nor memory nodes, and takes no task until it has; what
 * dir lacks is copied from its parent's. */
static int v1_cpuset_fill(const char *dir, const char *cpus, const char *mems, struct error *err)
{
	_cleanup_free_ char *parent = xstrdup(dir);
	*strrchr(parent, '/') = '\0';
	const char *file[] = { "cpuset.cpus", "cpuset.mems" }, *want[] = { cpus, mems };
	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", parent, file[i]);
		_cleanup_free_ char *from = want[i] && *want[i] ? xstrdup(want[i]) : read_file(p, NULL);
		if (from)
			from[strcspn(from, "\n")] = '\0';
		int r = from && *from ? write_str(dir, file[i], from) : -EINVAL;
		if (r < 0)
			return error_set(err, -r, "cannot set %s to '%s' in %s (a subset of %s's)", file[i], from ? from : "",
					 dir, parent);
	}
	return 0;
}

/* v1: the bandwidth (quota of period) and the shares in the cpu controller's group dir */
static int v1_cpu_set(const char *dir, const struct limits *l, struct error *err)
{
	int r = 0;
	if (l->cpu_quota_us) {
		/* the period first: a quota is refused when above what the period allows */
		if ((r = write_u64(dir, "cpu.cfs_period_us", l->cpu_period_us ? l->cpu_period_us : 100000)) == 0)
			r = write_u64(dir, "cpu.cfs_quota_us", l->cpu_quota_us);
	}
	if (r == 0 && l->cpu_shares)
		r = write_u64(dir, "cpu.shares", l->cpu_shares);
	return r < 0 ? error_set(err, -r, "cannot set the CPU limit in %s", dir) : 0;
}

/* The parents of a bundle's group base/rel (linux.cgroupsPath), made where missing (0755, as
 * runc makes them), the topmost made into *made (removed with the group, when empty); v1
 * cpuset groups get their parent's CPUs and nodes. Existing ones are left as they are. */
static int make_parents(const char *base, const char *rel, bool cpuset, char **made, struct error *err)
{
	for (const char *slash = strchr(rel, '/'); slash; slash = strchr(slash + 1, '/')) {
		_cleanup_free_ char *dir = xasprintf("%s/%.*s", base, (int)(slash - rel), rel);
		if (mkdir(dir, 0755) < 0) {
			if (errno != EEXIST)
				return error_set(err, errno, "cannot create the cgroup %s", dir);
			continue;
		}
		if (!*made)
			*made = xstrdup(dir);
		if (cpuset && v1_cpuset_fill(dir, NULL, NULL, err) < 0)
			return -EIO;
	}
	return 0;
}

/* The group of a run: warren/<id> below base (its parent warren/ 0711, made when missing), or
 * a bundle's rel with its parents; the run's own 0750 for group reader, and a bundle's must be
 * new (another's group is never joined, limited nor removed). */
static int make_group(const char *base, const char *id, const char *rel, bool cpuset, gid_t reader, char **dir,
		      char **made, struct error *err)
{
	int r;
	if (!rel) {
		_cleanup_free_ char *parent = xasprintf("%s/warren", base);
		if ((r = mk(parent, 0711, (gid_t)-1, err)) == 0 && cpuset)
			r = v1_cpuset_fill(parent, NULL, NULL, err);
		if (r < 0)
			return r;
		*dir = xasprintf("%s/%s", parent, id);
	} else {
		if ((r = make_parents(base, rel, cpuset, made, err)) < 0)
			return r;
		*dir = xasprintf("%s/%s", base, rel);
		bool made = mkdir(*dir, 0750) == 0;
		if (made) /* whose it is: gc removes it by this name only (cgroup_remove_path) */
			setxattr(*dir, CGROUP_RUN_XATTR, id, strlen(id), 0);
		if (!made) {
			int e = errno;
			free(*dir);
			*dir = NULL;
			if (e == EEXIST)
				return error_set(err, 0, "linux.cgroupsPath: the cgroup %s/%s already exists; warren puts a cell only in a group it makes (give a path of its own)",
						 base, rel);
			return error_set(err, e, "cannot create the cgroup %s/%s", base, rel);
		}
	}
	if ((r = mk(*dir, 0750, reader, err)) < 0) {
		free(*dir);
		*dir = NULL;
	}
	return r;
}

static int create_v1(struct cgroup *cg, const char *id, const char *rel, const struct limits *l, bool every,
		     gid_t reader, struct error *err)
{
	struct {
		const char *ctrl;
		char **dir;
		bool needed;
		const char *flag;
	} c[CGROUP_V1_N] = {
		{ "memory", &cg->memory, l->memory != 0, "--memory" },
		{ "pids", &cg->pids, l->pids != 0, "--pids" },
		{ "cpuacct", &cg->cpuacct, l->cpu_ms != 0, "--cpu-time" },
		{ "cpu", &cg->cpu, wants_cpu(l), "--cpus" },
		{ "cpuset", &cg->cpuset, wants_cpuset(l), "--cpuset" },
	};
	for (int i = 0; i < CGROUP_V1_N; i++) {
		if (!ctrl_present(c[i].ctrl)) {
			if (c[i].needed)
				return error_set(err, 0, "%s needs the cgroup '%s' controller, which this host does not mount (see 'warren selfcheck')",
						 c[i].flag, c[i].ctrl);
			continue;
		}
		/* on v1 each controller is a hierarchy of its own, and moving the cell into each
		 * costs the start of every run: memory always (the peak of the whole cell), the
		 * others only for their limits (CPU time comes from rusage otherwise); a bundle's
		 * group is in every one (its pod's limits hold above it), and so is a warm cell's
		 * (its run's limits come at its claim: cgroup_claim) */
		if (!c[i].needed && i != 0 && !rel && !every)
			continue;
		_cleanup_free_ char *base = xasprintf(CG_ROOT "/%s", c[i].ctrl);
		int r = make_group(base, id, rel, i == 4, reader, c[i].dir, &cg->made[i], err);
		if (r < 0)
			return r;
		if (i == 4 && (r = v1_cpuset_fill(*c[i].dir, l->cpuset, l->cpumems, err)) < 0)
			return r;
		_cleanup_free_ char *tasks = xasprintf("%s/tasks", *c[i].dir);
		cg->tasks_fd[i] = open(tasks, O_WRONLY | O_CLOEXEC);
		if (cg->tasks_fd[i] < 0)
			return error_set(err, errno, "cannot open %s", tasks);
	}
	if (l->memory && cg->memory) {
		int r = write_u64(cg->memory, "memory.limit_in_bytes", l->memory);
		if (r == 0 && has_file(cg->memory, "memory.memsw.limit_in_bytes"))
			r = write_u64(cg->memory, "memory.memsw.limit_in_bytes", l->memory);
		if (r < 0)
			return error_set(err, -r, "cannot set the memory limit in %s", cg->memory);
		cg->oom_kills_at_start = read_key_kept(&cg->hits_fd[0], cg->memory, "memory.oom_control", "oom_kill");
	}
	if (l->pids && cg->pids) {
		int r = write_u64(cg->pids, "pids.max", l->pids);
		if (r < 0)
			return error_set(err, -r, "cannot set the process limit in %s", cg->pids);
	}
	if (cg->cpu && v1_cpu_set(cg->cpu, l, err) < 0)
		return -EIO;
	return 0;
}

/* v2: cpu.max, cpu.weight, cpuset.cpus and cpuset.mems of dir, those l names */
static int v2_cpu_set(const char *dir, const struct limits *l, struct error *err)
{
	int r = 0;
	char b[64];
	if (l->cpu_quota_us) {
		snprintf(b, sizeof b, "%llu %llu", (unsigned long long)l->cpu_quota_us,
			 (unsigned long long)(l->cpu_period_us ? l->cpu_period_us : 100000));
		r = write_str(dir, "cpu.max", b);
	}
	if (r == 0 && l->cpu_shares)
		r = write_u64(dir, "cpu.weight", cpu_shares_weight(l->cpu_shares));
	if (r < 0)
		return error_set(err, -r, "cannot set the CPU limit in %s", dir);
	if (l->cpuset[0] && (r = write_str(dir, "cpuset.cpus", l->cpuset)) < 0)
		return error_set(err, -r, "cannot set cpuset.cpus to '%s' in %s", l->cpuset, dir);
	if (l->cpumems[0] && (r = write_str(dir, "cpuset.mems", l->cpumems)) < 0)
		return error_set(err, -r, "cannot set cpuset.mems to '%s' in %s", l->cpumems, dir);
	return 0;
}

/* The v2 controllers a run's group may use, whether its limits l need each, and the option
 * that asks for it */
struct v2_need {
	const char *ctrl;
	bool needed;
	const char *flag;
};
#define V2_NEEDS 4
static void v2_needs(const struct limits *l, struct v2_need c[V2_NEEDS])
{
	c[0] = (struct v2_need){ "memory", l->memory != 0, "--memory" };
	c[1] = (struct v2_need){ "pids", l->pids != 0, "--pids" };
	c[2] = (struct v2_need){ "cpu", l->cpu_ms != 0 || wants_cpu(l), l->cpu_ms ? "--cpu-time" : "--cpus" };
	c[3] = (struct v2_need){ "cpuset", wants_cpuset(l), "--cpuset" };
}

/* The run's group below base (the host's v2 root, or a rootless caller's delegate). */
static int create_v2(struct cgroup *cg, const char *base, const char *id, const char *rel, const struct limits *l,
		     bool every, gid_t reader, struct error *err)
{
	struct v2_need c[V2_NEEDS];
	v2_needs(l, c);
	/* a warm cell's group may take a cpuset at its claim */
	c[3].needed |= every && v2_offers(cg, "cpuset");
	for (int i = 0; i < V2_NEEDS; i++)
		if (c[i].needed && !v2_offers(cg, c[i].ctrl))
			return error_set(err, 0, "%s needs the cgroup v2 '%s' controller, which %s does not offer (see 'warren selfcheck')",
					 c[i].flag, c[i].ctrl, base);
	/* delegate what base offers down to the run's parent (warren/, or each of a bundle's
	 * parents); ignore what is refused, a limit that needs it fails below with a named reason */
	_cleanup_free_ char *chain = rel ? xstrdup(rel) : xstrdup("warren/x");
	int r = 0;
	for (int i = 0; i < V2_NEEDS; i++) {
		_cleanup_free_ char *plus = xasprintf("+%s", c[i].ctrl);
		if (v2_offers(cg, c[i].ctrl) && (i != 3 || c[i].needed))
			write_str(base, "cgroup.subtree_control", plus);
	}
	for (char *slash = chain; r == 0 && slash;) {
		slash = strchr(slash + 1, '/');
		if (slash)
			*slash = '\0';
		_cleanup_free_ char *dir = xasprintf("%s/%s", base, chain);
		if (slash && !rel)
			r = mk(dir, 0711, (gid_t)-1, err);
		else if (slash && mkdir(dir, 0755) == 0 && !cg->made[0])
			cg->made[0] = xstrdup(dir);
		for (int i = 0; i < V2_NEEDS && slash; i++) {
			if (!v2_offers(cg, c[i].ctrl) || (i == 3 && !c[i].needed))
				continue;
			_cleanup_free_ char *plus = xasprintf("+%s", c[i].ctrl);
			write_str(dir, "cgroup.subtree_control", plus);
		}
		if (slash)
			*slash = '/';
	}
	if (r < 0 || (r = make_group(base, id, rel, false, reader, &cg->v2, &cg->made[0], err)) < 0)
		return r;
	cg->v2_fd = open(cg->v2, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->v2_fd < 0)
		return error_set(err, errno, "cannot open the cgroup %s", cg->v2);
	if (l->memory) {
		if ((r = write_u64(cg->v2, "memory.max", l->memory)) < 0 ||
		    (has_file(cg->v2, "memory.swap.max") && (r = write_u64(cg->v2, "memory.swap.max", 0)) < 0))
			return error_set(err, -r, "cannot set the memory limit in %s", cg->v2);
		cg->oom_kills_at_start = read_key_kept(&cg->hits_fd[0], cg->v2, "memory.events", "oom_kill");
	}
	if (l->pids && (r = write_u64(cg->v2, "pids.max", l->pids)) < 0)
		return error_set(err, -r, "cannot set the process limit in %s", cg->v2);
	return v2_cpu_set(cg->v2, l, err);
}

/* A rootless run's group: below the caller's delegate (delegate.h), made with the limits l
 * asks for; none without a delegate (or when it fails and no limit needs it), and a limit
 * the delegate cannot give refused with its reason and what to do. */
static int create_rootless(struct cgroup *cg, const char *id, const struct limits *l, bool every, gid_t reader,
			   struct error *err)
{
	struct v2_need c[V2_NEEDS];
	v2_needs(l, c);
	enum cgroup_deleg why;
	const char *self, *base = cgroup_delegate(&why, &self);
	bool wanted = false;
	for (int i = 0; i < V2_NEEDS; i++) {
		enum cgroup_deleg d = c[i].needed ? cgroup_delegate_offers(c[i].ctrl) : CGROUP_DELEG_OK;
		wanted |= c[i].needed;
		if (d != CGROUP_DELEG_OK) {
			/* the option, and the key of a job file's limits: ("--memory" and "memory") */
			_cleanup_free_ char *what = xasprintf("%s (limits: %s)", c[i].flag, c[i].flag + 2);
			_cleanup_free_ char *m = cgroup_deleg_refusal(what, d, self, base, c[i].ctrl, geteuid());
			return error_set(err, 0, "%s", m);
		}
	}
	if (!base)
		return 0;
	cg->kind = CGROUP_V2;
	cg->delegated = true;
	int r = create_v2(cg, base, id, NULL, l, every, reader, err);
	if (r < 0 && !wanted) { /* accounting only: the run goes on without, as where none is delegated */
		cgroup_destroy(cg);
		cgroup_init(cg);
		cg->name = xstrdup(id);
		error_clear(err);
		return 0;
	}
	return r;
}

int cgroup_create(struct cgroup *cg, const char *id, const char *rel, const struct limits *l, bool every,
		  bool rootless, gid_t reader, struct error *err)
{
	cgroup_init(cg);
	bool wanted = l->memory || l->pids || l->cpu_ms || wants_cpu(l) || wants_cpuset(l);
	cg->name = xstrdup(id);
	if (rootless && rel)
		return error_set(err, 0, "linux.cgroupsPath '/%s': a rootless caller's bundle cannot name where its group goes; leave it out (or run as root)", rel);
	int r;
	if (rootless) {
		r = create_rootless(cg, id, l, every, reader, err);
	} else {
		char *where = NULL, *missing = NULL;
		cg->kind = cgroup_host_kind(&where, &missing);
		free(where);
		free(missing);
		if (cg->kind == CGROUP_V2)
			r = create_v2(cg, CG_ROOT, id, rel, l, every, reader, err);
		else if (cg->kind == CGROUP_V1)
			r = create_v1(cg, id, rel, l, every, reader, err);
		else
			r = wanted ? error_set(err, 0, "--memory, --pids, --cpu-time, --cpus and --cpuset need cgroups, and none are mounted at " CG_ROOT)
				   : 0;
	}
	if (r < 0)
		cgroup_destroy(cg);
	return r;
}

/* v1: a new memory limit; memory + swap is never below memory, so the one raised goes first */
static int v1_memory_update(const char *dir, uint64_t v)
{
	bool sw = has_file(dir, "memory.memsw.limit_in_bytes");
	int r = write_u64(dir, "memory.limit_in_bytes", v);
	if (r == -EINVAL && sw && (r = write_u64(dir, "memory.memsw.limit_in_bytes", v)) == 0)
		return write_u64(dir, "memory.limit_in_bytes", v);
	return r == 0 && sw ? write_u64(dir, "memory.memsw.limit_in_bytes", v) : r;
}

int cgroup_update(struct cgroup *cg, const struct limits *l, struct error *err)
{
	bool v2 = cg->kind == CGROUP_V2 && cg->v2;
	const char *mem = v2 ? cg->v2 : cg->memory, *pid = v2 ? cg->v2 : cg->pids, *cpu = v2 ? cg->v2 : cg->cpu,
		   *set = v2 ? cg->v2 : cg->cpuset;
	const char *lacks = l->memory && !mem ? "memory" : l->pids && !pid ? "pids" : wants_cpu(l) && !cpu ? "cpu"
			  : wants_cpuset(l) && !set ? "cpuset" : NULL;
	if (lacks)
		return error_set(err, 0, "the container's cell has no group in the '%s' controller (it was made without such a limit, or rootless); give the limit when it is created", lacks);
	int r = 0;
	if (l->memory && (r = v2 ? write_u64(mem, "memory.max", l->memory) : v1_memory_update(mem, l->memory)) < 0)
		return error_set(err, -r, "cannot set the memory limit %llu in %s%s", (unsigned long long)l->memory, mem,
				 r == -EBUSY ? " (the cell uses more now)" : "");
	if (l->pids && (r = write_u64(pid, "pids.max", l->pids)) < 0)
		return error_set(err, -r, "cannot set the process limit in %s", pid);
	if (v2)
		return v2_cpu_set(cg->v2, l, err);
	if (cpu && wants_cpu(l) && v1_cpu_set(cpu, l, err) < 0)
		return -EIO;
	if (set && wants_cpuset(l) && v1_cpuset_fill(set, l->cpuset, l->cpumems, err) < 0)
		return -EIO;
	return 0;
}

/* v1 memory: the limit v (0: none) in dir, memory + swap first when it widens (the kernel wants
 * memsw.limit >= limit at every moment). */
static int v1_memory_claim(const char *dir, uint64_t v)
{
	if (v)
		return v1_memory_update(dir, v);
	int r = has_file(dir, "memory.memsw.limit_in_bytes") ? write_str(dir, "memory.memsw.limit_in_bytes", "-1") : 0;
	return r < 0 ? r : write_str(dir, "memory.limit_in_bytes", "-1");
}

/* v2 memory: the limit v (0: none) and no swap under it, as a cold run's group has. */
static int v2_memory_claim(const char *dir, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof b, v ? "%llu" : "max", (unsigned long long)v);
	int r = write_str(dir, "memory.max", b);
	if (r == 0 && has_file(dir, "memory.swap.max"))
		r = write_str(dir, "memory.swap.max", v ? "0" : "max");
	return r;
}

int cgroup_claim(struct cgroup *cg, const struct limits *made, const struct limits *l, struct error *err)
{
	if (cg->kind == CGROUP_NONE) {
		bool wanted = l->memory != made->memory || l->pids != made->pids || l->cpu_ms != made->cpu_ms ||
			      wants_cpu(l) || wants_cpuset(l);
		return wanted ? error_set(err, 0, "--memory, --pids, --cpu-time, --cpus and --cpuset need a cgroup warren can manage; the warm cell has none (run warren as root, or drop the limit)")
			      : 0;
	}
	bool v2 = cg->kind == CGROUP_V2 && cg->v2;
	const char *mem = v2 ? cg->v2 : cg->memory, *pid = v2 ? cg->v2 : cg->pids;
	int r = 0;
	if (l->memory != made->memory) {
		r = !mem ? -ENOENT : v2 ? v2_memory_claim(mem, l->memory) : v1_memory_claim(mem, l->memory);
		if (r < 0)
			return error_set(err, -r, "cannot set the memory limit %llu of the warm cell's group %s%s",
					 (unsigned long long)l->memory, mem ? mem : "(none)",
					 r == -EBUSY ? " (the cell uses more now)" : "");
		if (!made->memory)  /* its OOM kills count from here */
			cg->oom_kills_at_start = read_key_kept(&cg->hits_fd[0], mem, v2 ? "memory.events" : "memory.oom_control",
							       "oom_kill");
	}
	if (l->pids != made->pids) {
		r = !pid ? -ENOENT : l->pids ? write_u64(pid, "pids.max", l->pids) : write_str(pid, "pids.max", "max");
		if (r < 0)
			return error_set(err, -r, "cannot set the process limit %llu of the warm cell's group %s",
					 (unsigned long long)l->pids, pid ? pid : "(none)");
	}
	/* the CPU's: a warm cell is made without (they have no defaults), its run's are set */
	struct limits cpu = { .cpu_quota_us = l->cpu_quota_us, .cpu_period_us = l->cpu_period_us, .cpu_shares = l->cpu_shares };
	memcpy(cpu.cpuset, l->cpuset, sizeof cpu.cpuset);
	memcpy(cpu.cpumems, l->cpumems, sizeof cpu.cpumems);
	return wants_cpu(&cpu) || wants_cpuset(&cpu) ? cgroup_update(cg, &cpu, err) : 0;
}

int cgroup_join_self(const struct cgroup *cg, struct error *err)
{
	const char *dirs[] = { cg->memory, cg->pids, cg->cpuacct, cg->cpu, cg->cpuset };
	for (int i = 0; i < CGROUP_V1_N; i++) {
		if (cg->tasks_fd[i] < 0)
			continue;
		/* "0": the writer, this one thread (init has no other) */
		bool ok = write(cg->tasks_fd[i], "0", 1) == 1;
		int e = errno;
		close(cg->tasks_fd[i]);
		if (!ok)
			return error_set(err, e, "cannot move the cell into %s", dirs[i]);
	}
	return 0;
}

void cgroup_close_join(struct cgroup *cg)
{
	for (int i = 0; i < CGROUP_V1_N; i++)
		closep(&cg->tasks_fd[i]);
}

void cgroup_init(struct cgroup *cg)
{
	*cg = (struct cgroup){ .v2_fd = -1, .tasks_fd = { -1, -1, -1, -1, -1 }, .hits_fd = { -1, -1 } };
}

/* The controllers field of the line of /proc/self/cgroup's text that lists ctrl (v2's "0::"
 * line for ""): where it starts, its length in *n; NULL when no line does. */
static const char *cgroup_line(const char *text, const char *ctrl, int *n)
{
	_cleanup_free_ char *want = xasprintf(",%s,", ctrl);
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *f = strchr(l, ':'), *end = f ? strchr(f + 1, ':') : NULL;
		if (!end)
			return NULL;
		*n = (int)(end - f - 1);
		_cleanup_free_ char *field = xasprintf(",%.*s,", *n, f + 1);
		if (*ctrl ? strstr(field, want) != NULL : *n == 0)
			return f + 1;
	}
	return NULL;
}

/* The controllers field ("cpu,cpuacct") of the line that lists ctrl, heap, or NULL. */
static char *hierarchy_of(const char *text, const char *ctrl)
{
	int n;
	const char *f = cgroup_line(text, ctrl, &n);
	return f ? xasprintf("%.*s", n, f) : NULL;
}

size_t cgroup_v1_hierarchies(const struct cgroup *cg, char *out[CGROUP_V1_N + 1])
{
	const char *ctrl[] = { "memory", "pids", "cpuacct", "cpu", "cpuset" };
	const char *dir[] = { cg->memory, cg->pids, cg->cpuacct, cg->cpu, cg->cpuset };
	_cleanup_free_ char *text = read_file("/proc/self/cgroup", NULL);
	size_t n = 0;
	for (int i = 0; i < CGROUP_V1_N && text; i++) {
		_cleanup_free_ char *h = dir[i] ? hierarchy_of(text, ctrl[i]) : NULL;
		bool seen = !h;
		for (size_t j = 0; j < n && !seen; j++)
			seen = !strcmp(out[j], h);
		if (!seen)
			out[n++] = steal_pointer(&h);
	}
	out[n] = NULL;
	return n;
}

void cgroup_limit_hits(struct cgroup *cg, bool memory, bool pids, uint64_t *oom_kills, uint64_t *pids_max_hits)
{
	*oom_kills = *pids_max_hits = 0;
	bool v2 = cg->kind == CGROUP_V2 && cg->v2;
	const char *mem = v2 ? cg->v2 : cg->kind == CGROUP_V1 ? cg->memory : NULL;
	const char *pid = v2 ? cg->v2 : cg->kind == CGROUP_V1 ? cg->pids : NULL;
	if (memory && mem)
		*oom_kills = read_key_kept(&cg->hits_fd[0], mem, v2 ? "memory.events" : "memory.oom_control", "oom_kill") -
			     cg->oom_kills_at_start;
	if (pids && pid)
		*pids_max_hits = read_key_kept(&cg->hits_fd[1], pid, "pids.events", "max");
}

/* (the values read are dropped: the reads open the files) */
void cgroup_open_hits(struct cgroup *cg)
{
	uint64_t a, b;
	cgroup_limit_hits(cg, true, true, &a, &b);
}

void cgroup_usage(struct cgroup *cg, struct cgroup_usage *u)
{
	memset(u, 0, sizeof *u);
	long hz = sysconf(_SC_CLK_TCK);
	if (cg->kind == CGROUP_V2 && cg->v2) {
		u->have_cpu = true;
		u->cpu_ns = read_key(cg->v2, "cpu.stat", "usage_usec") * 1000;
		u->cpu_user_s = (double)read_key(cg->v2, "cpu.stat", "user_usec") / 1e6;
		u->cpu_sys_s = (double)read_key(cg->v2, "cpu.stat", "system_usec") / 1e6;
		if (has_file(cg->v2, "memory.peak")) {
			u->have_memory = true;
			u->peak_memory = read_u64(cg->v2, "memory.peak");
		}
		if (has_file(cg->v2, "pids.peak")) {
			u->have_pids = true;
			u->pids_peak = read_u64(cg->v2, "pids.peak");
		}
		cgroup_limit_hits(cg, true, true, &u->oom_kills, &u->pids_max_hits);
		u->pids_current = read_u64(cg->v2, "pids.current");
		/* a CPU bandwidth limit: cpu.max has a quota ("max 100000" is none; the file is there
		 * whenever the cpu controller is) */
		_cleanup_free_ char *cpu_max = xasprintf("%s/cpu.max", cg->v2);
		_cleanup_free_ char *quota = read_file(cpu_max, NULL);
		if ((u->have_throttle = quota && strncmp(quota, "max", 3) != 0)) {
			u->nr_throttled = read_key(cg->v2, "cpu.stat", "nr_throttled");
			u->throttled_us = read_key(cg->v2, "cpu.stat", "throttled_usec");
		}
		return;
	}
	if (cg->kind != CGROUP_V1)
		return;
	if (cg->cpuacct) {
		u->have_cpu = true;
		u->cpu_ns = read_u64(cg->cpuacct, "cpuacct.usage");
		u->cpu_user_s = (double)read_key(cg->cpuacct, "cpuacct.stat", "user") / (double)hz;
		u->cpu_sys_s = (double)read_key(cg->cpuacct, "cpuacct.stat", "system") / (double)hz;
	}
	if (cg->memory) {
		u->have_memory = true;
		u->peak_memory = has_file(cg->memory, "memory.memsw.max_usage_in_bytes")
					 ? read_u64(cg->memory, "memory.memsw.max_usage_in_bytes")
					 : read_u64(cg->memory, "memory.max_usage_in_bytes");
	}
	cgroup_limit_hits(cg, true, true, &u->oom_kills, &u->pids_max_hits);
	if (cg->pids)
		u->pids_current = read_u64(cg->pids, "pids.current");
	if ((u->have_throttle = cg->cpu != NULL)) {
		u->nr_throttled = read_key(cg->cpu, "cpu.stat", "nr_throttled");
		u->throttled_us = read_key(cg->cpu, "cpu.stat", "throttled_time") / 1000;
	}
}

/* The CPU time of the processes of the v1 group dir (its cgroup.procs), each process's own
 * and that of the children it reaped (/proc/PID/stat): a group of more than SAMPLE_PROCS_MAX
 * is not read (-E2BIG). */
#define SAMPLE_PROCS_MAX 1024
static int procs_cpu_ns(const char *dir, uint64_t *ns)
{
	_cleanup_free_ char *p = xasprintf("%s/cgroup.procs", dir);
	_cleanup_free_ char *pids = read_file(p, NULL);
	if (!pids)
		return -errno;
	uint64_t ticks = 0;
	int n = 0;
	for (char *t = pids, *end; *t; t = end + (*end == '\n')) {
		long pid = strtol(t, &end, 10);
		if (end == t)
			break;
		if (++n > SAMPLE_PROCS_MAX)
			return -E2BIG;
		char sp[48];
		snprintf(sp, sizeof sp, "/proc/%ld/stat", pid);
		_cleanup_free_ char *st = read_file(sp, NULL);
		const char *rp = st ? strrchr(st, ')') : NULL;  /* its name may hold anything but this */
		unsigned long long ut, stm, cut, cst;
		/* after the name: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
		 * utime stime cutime cstime */
		if (rp && sscanf(rp + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &ut, &stm, &cut,
				 &cst) == 4)
			ticks += ut + stm + cut + cst;  /* (one that ended meanwhile: its parent's soon) */
	}
	*ns = ticks * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK));
	return 0;
}

int cgroup_sample(struct cgroup *cg, struct cgroup_sample *out)
{
	memset(out, 0, sizeof *out);
	if (cg->kind == CGROUP_V2 && cg->v2) {
		out->memory = read_u64(cg->v2, "memory.current");
		out->cpu_ns = read_key(cg->v2, "cpu.stat", "usage_usec") * 1000;
		out->have_memory = out->have_cpu = true;
		return 0;
	}
	if (cg->kind != CGROUP_V1 || (!cg->memory && !cg->cpuacct))
		return -ENOENT;
	if ((out->have_memory = cg->memory != NULL))
		out->memory = read_u64(cg->memory, "memory.usage_in_bytes");
	/* a run's group on v1 is in cpuacct only for a CPU-time limit (create_v1): else its
	 * processes tell their CPU time */
	if (cg->cpuacct) {
		out->cpu_ns = read_u64(cg->cpuacct, "cpuacct.usage");
		out->have_cpu = true;
	} else {
		out->have_cpu = procs_cpu_ns(cg->memory, &out->cpu_ns) == 0;
	}
	return 0;
}

/* ---- the OCI face's supervisor in the run's groups ---- */

static const char *const V1_CTRLS[CGROUP_V1_N] = { "memory", "pids", "cpuacct", "cpu", "cpuset" };

/* The path of the group of /proc/self/cgroup's text in the hierarchy that lists ctrl (v2's
 * "0::" line for ""), heap, or NULL. */
static char *self_path(const char *text, const char *ctrl)
{
	int n;
	const char *f = cgroup_line(text, ctrl, &n);
	return f ? xasprintf("%.*s", (int)strcspn(f + n + 1, "\n"), f + n + 1) : NULL;
}

/* Move the calling process into dir: "0" into v1's tasks (this thread alone: no global lock of
 * the kernel's) or v2's cgroup.procs. */
static int move_self(const char *dir, bool v2)
{
	return write_str(dir, v2 ? "cgroup.procs" : "tasks", "0");
}

int cgroup_enter_self(struct cgroup *cg, struct error *err)
{
	bool v2 = cg->kind == CGROUP_V2;
	const char *dirs[CGROUP_V1_N] = { v2 ? cg->v2 : cg->memory, NULL, NULL, NULL, NULL };
	if (!v2 && cg->kind == CGROUP_V1)
		dirs[1] = cg->pids, dirs[2] = cg->cpuacct, dirs[3] = cg->cpu, dirs[4] = cg->cpuset;
	_cleanup_free_ char *text = read_file("/proc/self/cgroup", NULL);
	for (int i = 0; i < CGROUP_V1_N && text; i++) {
		if (!dirs[i])
			continue;
		_cleanup_free_ char *base = v2 ? xstrdup(CG_ROOT) : xasprintf(CG_ROOT "/%s", V1_CTRLS[i]);
		_cleanup_free_ char *from = self_path(text, v2 ? "" : V1_CTRLS[i]);
		int r = move_self(dirs[i], v2);
		if (r < 0) {
			cgroup_leave_self(cg);
			return error_set(err, -r, "cannot move the container's supervisor into %s", dirs[i]);
		}
		cg->home[i] = from && strcmp(from, "/") ? xasprintf("%s%s", base, from) : steal_pointer(&base);
	}
	return text ? 0 : error_set(err, errno, "cannot read /proc/self/cgroup");
}

void cgroup_leave_self(struct cgroup *cg)
{
	bool v2 = cg->kind == CGROUP_V2;
	for (int i = 0; i < CGROUP_V1_N; i++) {
		if (!cg->home[i])
			continue;
		/* the group it came from may be gone, or (v2) have controllers for its children now */
		if (move_self(cg->home[i], v2) < 0) {
			_cleanup_free_ char *root = v2 ? xstrdup(CG_ROOT) : xasprintf(CG_ROOT "/%s", V1_CTRLS[i]);
			move_self(root, v2);
		}
		free(cg->home[i]);
		cg->home[i] = NULL;
	}
}

/* SIGKILL whatever is still in dir, then rmdir it (a few tries while the dead are reaped);
 * the groups below it first (an exec's, execgroup.h), and a v1 freezer's thawed (a frozen
 * process does not die). v2_kill: by v2's cgroup.kill, else one by one (never the caller). */
static int kill_and_remove(const char *dir, bool v2_kill)
{
	if (!dir || access(dir, F_OK) < 0)
		return 0;
	DIR *d = opendir(dir);
	int r = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		_cleanup_free_ char *sub = xasprintf("%s/%s", dir, e->d_name);
		int x = kill_and_remove(sub, v2_kill);
		if (x < 0)
			r = x;
	}
	if (d)
		closedir(d);
	if (r < 0)
		return r;
	bool freezer = has_file(dir, "freezer.state");
	for (int tries = 0; tries < 200; tries++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		if (v2_kill && write_str(dir, "cgroup.kill", "1") == 0) {
			/* the kernel kills them all at once */
		} else {
			_cleanup_free_ char *p = xasprintf("%s/cgroup.procs", dir);
			_cleanup_free_ char *s = read_file(p, NULL);
			for (char *t = s; t && *t;) {
				char *end;
				long pid = strtol(t, &end, 10);
				if (end == t)
					break;
				if (pid > 0 && pid != getpid()) /* (one that could not leave: not itself) */
					kill((pid_t)pid, SIGKILL);
				t = end;
				while (*t == '\n')
					t++;
			}
			if (freezer)
				write_str(dir, "freezer.state", "THAWED");
		}
		usleep(tries < 10 ? 1000 : 10000);
	}
	return -EBUSY;
}

/* The parents of dir up to made (the topmost the run made) removed while empty: those another
 * made, or another's group keeps, stay. */
static void remove_made(const char *dir, const char *made)
{
	if (!dir || !made)
		return;
	_cleanup_free_ char *p = xstrdup(dir);
	for (char *slash; (slash = strrchr(p, '/')) && (size_t)(slash - p) >= strlen(made);) {
		*slash = '\0';
		if (rmdir(p) < 0)
			return;
	}
}

int cgroup_destroy(struct cgroup *cg)
{
	int r = 0, x;
	char *dirs[] = { cg->v2 ? cg->v2 : cg->memory, cg->pids, cg->cpuacct, cg->cpu, cg->cpuset };
	/* the caller, when it was in them, leaves first (v2's cgroup.kill would take it too, had
	 * it not: the processes are killed one by one then, never itself) */
	bool was_in = cg->home[0] != NULL;
	cgroup_leave_self(cg);
	if ((x = kill_and_remove(cg->v2, !was_in)) < 0) r = x;
	if ((x = kill_and_remove(cg->freezer, false)) < 0) r = x;
	for (int i = 0; i < CGROUP_V1_N; i++)
		if ((x = kill_and_remove(i == 0 ? cg->memory : dirs[i], false)) < 0) r = x;
	for (int i = 0; i < CGROUP_V1_N; i++)
		if (!r)
			remove_made(dirs[i], cg->made[i]);
	cgroup_free(cg);
	return r;
}

int cgroup_remove_by_id(const char *id, bool rootless)
{
	int r = 0, x;
	if (rootless) {
		enum cgroup_deleg why;
		const char *self, *base = cgroup_delegate(&why, &self);
		_cleanup_free_ char *dir = base ? xasprintf("%s/warren/%s", base, id) : NULL;
		return kill_and_remove(dir, true);
	}
	_cleanup_free_ char *v2 = xasprintf(CG_ROOT "/warren/%s", id);
	if ((x = kill_and_remove(v2, true)) < 0) r = x;
	const char *c[] = { "memory", "pids", "cpuacct", "cpu", "cpuset", "freezer" };
	for (int i = 0; i < CGROUP_V1_N + 1; i++) {
		_cleanup_free_ char *d = xasprintf(CG_ROOT "/%s/warren/%s", c[i], id);
		if ((x = kill_and_remove(d, false)) < 0) r = x;
	}
	return r;
}

/* Is dir the group of the run name (its CGROUP_RUN_XATTR)? */
static bool group_of(const char *dir, const char *name)
{
	char v[256];
	ssize_t n = getxattr(dir, CGROUP_RUN_XATTR, v, sizeof v - 1);
	if (n <= 0)
		return false;
	v[n] = '\0';
	return !strcmp(v, name);
}

int cgroup_remove_path(const char *rel, const char *name)
{
	int r = 0, x;
	_cleanup_free_ char *v2 = xasprintf(CG_ROOT "/%s", rel);
	if (group_of(v2, name) && (x = kill_and_remove(v2, true)) < 0) r = x;
	const char *c[] = { "memory", "pids", "cpuacct", "cpu", "cpuset" };
	for (int i = 0; i < CGROUP_V1_N; i++) {
		_cleanup_free_ char *d = xasprintf(CG_ROOT "/%s/%s", c[i], rel);
		if (group_of(d, name) && (x = kill_and_remove(d, false)) < 0) r = x;
	}
	return r;
}

void cgroup_free(struct cgroup *cg)
{
	free(cg->v2);
	free(cg->memory);
	free(cg->pids);
	free(cg->cpuacct);
	free(cg->cpu);
	free(cg->cpuset);
	free(cg->name);
	free(cg->freezer);
	cg->name = cg->freezer = NULL;
	for (int i = 0; i < CGROUP_V1_N; i++) {
		free(cg->made[i]);
		free(cg->home[i]);
		cg->made[i] = cg->home[i] = NULL;
	}
	closep(&cg->v2_fd);
	closep(&cg->hits_fd[0]);
	closep(&cg->hits_fd[1]);
	cgroup_close_join(cg);
	cg->v2 = cg->memory = cg->pids = cg->cpuacct = cg->cpu = cg->cpuset = NULL;
	cg->v2_fd = -1;
}
