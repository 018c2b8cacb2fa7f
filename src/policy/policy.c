/* SPDX-License-Identifier: Apache-2.0 */
/* policy.c - the policy of a cell as a whole: the options, and the order in which the job
 * process takes on its defences just before it executes the job (rlimits, capabilities,
 * Landlock, seccomp last, so that nothing before it needs a call it refuses). */
#include "policy/policy.h"

#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/prctl.h>

#include "policy/gitguard.h"
#include "util/fs.h"
#include "util/proc.h"

void policy_opts_free(struct policy_opts *p)
{
	free(p->seccomp_file);
	free(p->seccomp_text);
	for (size_t i = 0; i < p->nprotect; i++)
		free(p->protect[i]);
	free(p->protect);
	free(p->bpf);
	free(p->extra_bpf);
	for (size_t i = 0; i < p->n_masks; i++)
		free(p->masks[i].path);
	free(p->masks);
	memset(p, 0, sizeof *p);
}

int policy_add_protect(struct policy_opts *p, const char *path, struct error *err)
{
	if (!*path || path[0] == '/')
		return error_set(err, 0, "--protect '%s': give a path relative to the worktree (e.g. .envrc or .vscode)", path);
	_cleanup_free_ char *copy = xstrdup(path);
	char *save = NULL;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save))
		if (!strcmp(c, ".."))
			return error_set(err, 0, "--protect '%s': '..' would leave the worktree", path);
	/* normalised: no empty or "." components, no trailing slash */
	char *norm = xstrdup(path);
	char *w = norm;
	strcpy(copy, path);
	save = NULL;
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (w != norm)
			*w++ = '/';
		size_t l = strlen(c);
		memcpy(w, c, l);
		w += l;
	}
	*w = '\0';
	if (!*norm) {
		free(norm);
		return error_set(err, 0, "--protect '%s': that is the worktree itself, which stays writable; name a path inside it", path);
	}
	p->protect = xrealloc(p->protect, (p->nprotect + 2) * sizeof *p->protect);
	p->protect[p->nprotect++] = norm;
	p->protect[p->nprotect] = NULL;
	return 0;
}

int policy_apply_job(const struct policy_ctx *s, int watch_sock, struct error *err)
{
	const char *what = proc_reset_inherited();
	if (what)
		return error_set(err, errno, "cannot leave the caller's %s for the job", what);
	/* set by the driver already; Landlock and seccomp need it */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_set(err, errno, "cannot set no_new_privs");
	if (policy_set_rlimits(s, err) < 0 || policy_set_caps(s, err) < 0)
		return -EINVAL;
	int abi;
	if (policy_landlock(s, &abi, err) < 0)
		return -EINVAL;
	/* before the profile, which may refuse seccomp(2) itself; the order of filters does not
	 * change what a call gets */
	if (watch_sock >= 0)
		policy_watch_writes(watch_sock);
	return policy_seccomp(s, err);
}

json_t *policy_json(const struct policy_opts *p)
{
	json_t *prot = json_array();
	for (size_t i = 0; i < p->nprotect; i++)
		json_array_append_new(prot, json_string(p->protect[i]));
	return json_pack("{s:o,s:b,s:b,s:b,s:b,s:o,s:b}", "seccomp", p->seccomp_file ? json_string(p->seccomp_file) : json_null(),
			 "allow_nested", p->allow_nested, "require_landlock", p->require_landlock, "core", p->core,
			 "no_sys", p->no_sys, "protect", prot, "refused_writes", !p->no_refused_writes);
}

int policy_add_git_protect(struct policy_opts *p, int worktree_fd, const char *worktree)
{
	struct stat st;
	struct error e = { 0 };
	if (fstatat(worktree_fd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (S_ISREG(st.st_mode))
		return policy_add_protect(p, ".git", &e) < 0 ? (error_clear(&e), 0) : 0;  /* a gitfile */
	if (!S_ISDIR(st.st_mode))
		return 0;
	_cleanup_close_ int git = openat(worktree_fd, ".git", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *config = git >= 0 ? read_file_at(git, "config", NULL) : NULL;
	if (!config)
		return 0;
	char **paths = git_config_worktree_paths(config, worktree);
	for (size_t i = 0; paths && paths[i]; i++) {
		if (policy_add_protect(p, paths[i], &e) < 0)
			error_clear(&e);
		free(paths[i]);
	}
	free(paths);
	return 0;
}
