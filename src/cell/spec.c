/* spec.c - small accessors of a cell spec that every driver needs the same way. */
#include "cell/spec.h"

#include <stdlib.h>

#include "policy/policy.h"

uid_t spec_host_uid(const struct cell_spec *s) { return s->rootless ? s->host_uid : s->id_base + s->uid; }
gid_t spec_host_gid(const struct cell_spec *s) { return s->rootless ? s->host_gid : s->id_base + s->gid; }
uid_t spec_host_root_uid(const struct cell_spec *s) { return s->rootless ? s->host_uid : s->id_base; }

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
	free(s->worktree);
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
