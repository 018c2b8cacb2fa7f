/* SPDX-License-Identifier: Apache-2.0 */
/* spec.c - small accessors of a cell spec that every driver needs the same way, and whether a
 * run fits a warm cell. */
#include "cell/spec.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/strv.h"
#include "util/sys.h"

uid_t spec_host_uid(const struct cell_spec *s) { return s->rootless ? s->host_uid : s->id_base + s->uid; }
gid_t spec_host_gid(const struct cell_spec *s) { return s->rootless ? s->host_gid : s->id_base + s->gid; }
uid_t spec_host_root_uid(const struct cell_spec *s) { return s->rootless ? s->host_uid : s->id_base; }

bool spec_volume_group(const struct cell_spec *s, gid_t source_gid)
{
	if (s->rootless || source_gid < SPEC_HOST_SYSTEM_GIDS || source_gid >= CELL_ID_RANGE)
		return false;
	for (size_t i = 0; i < s->n_groups; i++)
		if (s->groups[i] == source_gid)
			return true;
	return false;
}

struct policy_ctx spec_policy_ctx(const struct cell_spec *s)
{
	return (struct policy_ctx){
		.id = s->id, .worktree = s->worktree, .worktree_fd = s->worktree_fd, .home = s->home, .rootfs = s->rootfs,
		.rundir = s->rundir, .statedir = s->statedir, .uid = s->uid,
		.scratch_tmpfs = s->limits.scratch != 0 || s->warm, .policy = &s->policy,
		.worktree_ro = s->worktree_ro, .cwd = spec_cwd(s), .mounts = s->policy_mounts, .n_mounts = s->n_mounts,
	};
}

void spec_add_mount(struct cell_spec *s, struct cell_mount m)
{
	s->mounts = xrealloc(s->mounts, (s->n_mounts + 1) * sizeof *s->mounts);
	s->policy_mounts = xrealloc(s->policy_mounts, (s->n_mounts + 1) * sizeof *s->policy_mounts);
	s->mounts[s->n_mounts] = m;
	s->policy_mounts[s->n_mounts++] = (struct policy_mount){ m.source, m.destination, m.readonly };
}

void cell_spec_free(struct cell_spec *s)
{
	strv_free(s->argv);
	strv_free(s->env);
	free(s->rootfs);
	free(s->cgroup_path);
	free(s->anchor);
	free(s->image);
	free(s->image_digest);
	strv_free(s->image_env);
	s->image_env = NULL;
	if (s->image_fd > 0)
		close(s->image_fd);
	s->image_fd = 0;
	free(s->worktree);
	free(s->workdir);
	free(s->hostname);
	free(s->start_why);
	for (size_t i = 0; i < s->n_mounts; i++) {
		free(s->mounts[i].source);
		free(s->mounts[i].destination);
		closep(&s->mounts[i].fd);
	}
	free(s->mounts);
	free(s->policy_mounts);
	for (size_t i = 0; i < s->n_sysctls; i++) {
		free(s->sysctls[i].key);
		free(s->sysctls[i].value);
	}
	free(s->sysctls);
	s->sysctls = NULL;
	s->n_sysctls = 0;
	free(s->groups);
	s->groups = NULL;
	s->n_groups = 0;
	for (int k = 0; k < GATE_NS_KINDS; k++)
		if (s->ns[k].from == CELL_NS_JOIN)
			closep(&s->ns[k].fd);
	s->mounts = NULL;
	s->policy_mounts = NULL;
	s->n_mounts = 0;
	free(s->rundir);
	free(s->statedir);
	free(s->user_name);
	free(s->home);
	free(s->name);
	strv_free(s->labels);
	free(s->history_db);
	policy_opts_free(&s->policy);
	if (s->worktree_fd > 0)
		close(s->worktree_fd);
	s->worktree_fd = -1;
	if (s->runs_fd > 0)
		close(s->runs_fd);
	if (s->rundir_fd > 0)
		close(s->rundir_fd);
	s->runs_fd = s->rundir_fd = 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same_file(int a, int b)
{
	struct stat x, y;
	if (a < 0 || b < 0)
		return a == b;
	return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static bool same_mounts(const struct cell_spec *a, const struct cell_spec *b)
{
	if (a->n_mounts != b->n_mounts)
		return false;
	for (size_t i = 0; i < a->n_mounts; i++)
		if (a->mounts[i].kind != b->mounts[i].kind || a->mounts[i].readonly != b->mounts[i].readonly ||
		    !same_str(a->mounts[i].destination, b->mounts[i].destination) ||
		    !same_file(a->mounts[i].fd, b->mounts[i].fd))
			return false;
	return true;
}

static bool same_policy(const struct policy_opts *a, const struct policy_opts *b)
{
	json_t *x = policy_json(a), *y = policy_json(b);
	bool same = json_equal(x, y) && same_str(a->seccomp_text, b->seccomp_text) && a->net == b->net;
	json_decref(x);
	json_decref(y);
	return same;
}

static bool has_cpu(const struct limits *l)
{
	return l->cpu_quota_us || l->cpu_shares || l->cpuset[0] || l->cpumems[0];
}

static bool same_cpu(const struct cell_spec *w, const struct cell_spec *r)
{
	const struct limits *a = &w->limits, *b = &r->limits;
	return a->cpu_quota_us == b->cpu_quota_us && a->cpu_period_us == b->cpu_period_us && a->cpu_shares == b->cpu_shares &&
	       !strcmp(a->cpuset, b->cpuset) && !strcmp(a->cpumems, b->cpumems);
}

const char *cell_spec_shape_diff(const struct cell_spec *w, const struct cell_spec *r)
{
	if (r->driver != CELL_DRIVER_CONTAINER || r->tty)
		return "it asks for a microVM or a terminal; warm cells are containers without one";
	if (r->net.mode != w->net.mode || r->net.lan != w->net.lan)
		return "its network mode is not the warm cells' (serve --warm-net)";
	if (w->rootless && (r->net.npublish || !same_str(w->net.allow, r->net.allow)))
		return "its published ports or allow list are a rootless cell's pasta's, set when a cell is made";
	if (r->net.dns_max_names != w->net.dns_max_names)
		return "its --dns-max-names is not the warm cells'";
	if (!same_str(w->image, r->image) || !same_str(w->rootfs, r->rootfs))
		return "its root (rootfs or image) is not the warm cells'";
	if (!same_str(w->image_digest, r->image_digest))
		return "its image changed (re-imported) since the warm cell was made";
	if (!same_str(w->worktree, r->worktree) || w->worktree_ro != r->worktree_ro || !same_file(w->worktree_fd, r->worktree_fd))
		return "its worktree is not the warm cells' (another directory, read-only, or replaced)";
	if (w->uid != r->uid || w->gid != r->gid || !same_str(w->home, r->home) || w->rootless != r->rootless ||
	    w->id_base != r->id_base || !same_str(w->user_name, r->user_name))
		return "its run user is not the warm cells'";
	if (!same_str(w->workdir, r->workdir) || !same_str(w->hostname, r->hostname) || !same_mounts(w, r))
		return "its workdir, hostname or binds are not the warm cells'";
	if (w->rootless && (w->limits.memory != r->limits.memory || w->limits.pids != r->limits.pids ||
			    w->limits.cpu_ms != r->limits.cpu_ms || !same_cpu(w, r)))
		return "its memory, process or CPU limit needs a cgroup, and a rootless warm cell has none";
	if (has_cpu(&w->limits) && !same_cpu(w, r))
		return "its CPU limits (--cpus, --cpuset) are not the warm cell's, which was made with some";
	if (!same_policy(&w->policy, &r->policy))
		return "its policy options (seccomp, Landlock, --protect, ...) are not the warm cells'";
	return NULL;
}

static bool same_strv(char **a, char **b)
{
	while (a && b && *a && *b && !strcmp(*a, *b))
		a++, b++;
	return (!a || !*a) && (!b || !*b);
}

unsigned cell_spec_claims(const struct cell_spec *w, const struct cell_spec *r)
{
	const struct limits *a = &w->limits, *b = &r->limits;
	unsigned c = 0;
	c |= !same_strv(w->env, r->env) ? CLAIM_ENV : 0;
	c |= r->labels && *r->labels ? CLAIM_LABELS : 0;
	c |= a->time_ms != b->time_ms ? CLAIM_TIME : 0;
	c |= a->cpu_ms != b->cpu_ms ? CLAIM_CPU_TIME : 0;
	c |= a->memory != b->memory ? CLAIM_MEMORY : 0;
	c |= a->pids != b->pids ? CLAIM_PIDS : 0;
	c |= !same_cpu(w, r) ? CLAIM_CPUS : 0;
	c |= a->output != b->output ? CLAIM_OUTPUT : 0;
	c |= a->scratch != b->scratch ? CLAIM_SCRATCH : 0;
	c |= r->net.npublish ? CLAIM_PUBLISH : 0;
	c |= !same_str(w->net.allow, r->net.allow) ? CLAIM_ALLOW : 0;
	return c;
}

const char *cell_claim_name(unsigned i)
{
	static const char *const names[CLAIM_N] = { "env", "labels", "time", "cpu-time", "memory", "pids",
						    "cpus", "output", "scratch", "publish", "allow" };
	return i < CLAIM_N ? names[i] : NULL;
}

int spec_root_open(const struct cell_spec *s)
{
	int fd = sys_openat2(AT_FDCWD, s->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0 && errno == ENOSYS)   /* no openat2 (warren in a cell): the comparison below decides */
		fd = open(s->rootfs, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && s->rootfs_ino && (fstat(fd, &st) < 0 || st.st_dev != s->rootfs_dev || st.st_ino != s->rootfs_ino)) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}
