/* spec.c - small accessors of a cell spec that every driver needs the same way. */
#include "cell/spec.h"

#include <stdlib.h>
#include <unistd.h>


uid_t spec_host_uid(const struct cell_spec *s) { return s->rootless ? s->host_uid : s->id_base + s->uid; }
gid_t spec_host_gid(const struct cell_spec *s) { return s->rootless ? s->host_gid : s->id_base + s->gid; }
uid_t spec_host_root_uid(const struct cell_spec *s) { return s->rootless ? s->host_uid : s->id_base; }

struct policy_ctx spec_policy_ctx(const struct cell_spec *s)
{
	return (struct policy_ctx){
		.id = s->id, .worktree = s->worktree, .home = s->home, .rootfs = s->rootfs,
		.rundir = s->rundir, .statedir = s->statedir, .uid = s->uid,
		.scratch_tmpfs = s->limits.scratch != 0, .policy = &s->policy,
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

static void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

void cell_spec_free(struct cell_spec *s)
{
	strv_free(s->argv);
	strv_free(s->env);
	free(s->rootfs);
	free(s->image);
	free(s->image_digest);
	if (s->image_fd > 0)
		close(s->image_fd);
	s->image_fd = 0;
	free(s->worktree);
	free(s->workdir);
	free(s->hostname);
	for (size_t i = 0; i < s->n_mounts; i++) {
		free(s->mounts[i].source);
		free(s->mounts[i].destination);
		closep(&s->mounts[i].fd);
	}
	free(s->mounts);
	free(s->policy_mounts);
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
