/* SPDX-License-Identifier: Apache-2.0 */
/* worktree.c - the worktree's git check after a run, and how it is recorded and said (see
 * worktree.h and policy/gitguard.c). */
#include "supervise/worktree.h"

#include <stdio.h>
#include <string.h>

#include "policy/gitguard.h"
#include "util/error.h"

#define MAX_LINES 5

static void say(const char *id, const struct git_finding *f)
{
	switch (f->action) {
	case GIT_MOVED:
		warn_line("%s left %s (%s); moved it to %s so that git ignores it: review it before you move it back",
			id, f->path, f->what, f->moved_to);
		break;
	case GIT_NOT_MOVED:
		warn_line("%s left %s (%s) and it could not be moved aside (%s): remove it before you run git in the worktree",
			id, f->path, f->what, f->error ? f->error : "?");
		break;
	case GIT_REPORTED:
		warn_line("%s created or changed the repository %s: review it before you run git there",
			id, f->path);
		break;
	case GIT_UNCHECKED:
		warn_line("%s left %s (%s%s%s%s) and git files in it were not checked: review it before you run git there",
			id, f->path, f->what, f->error ? " (" : "", f->error ? f->error : "", f->error ? ")" : "");
		break;
	}
}

static const char *action_key(enum git_action a)
{
	switch (a) {
	case GIT_MOVED: return "moved_aside";
	case GIT_NOT_MOVED: return "not_moved";
	case GIT_REPORTED: return "reported";
	case GIT_UNCHECKED: return "unchecked";
	}
	return "reported";
}

struct git_watch *worktree_watch_start(int worktree_fd, const char **why)
{
	*why = "the run has no worktree";
	return worktree_fd >= 0 ? git_watch_start(worktree_fd, why) : NULL;
}

/* What changed, from the watch, or everything when there is none or it is in doubt. */
static void audit(int worktree_fd, const struct timespec *since, const char *suffix, struct git_watch *gw,
		  const char *why, struct git_audit *a)
{
	struct git_changed *v = NULL;
	size_t n = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (gw && git_watch_changed(gw, worktree_fd, &v, &n, &why) == 0) {
		git_audit_changed(worktree_fd, since, suffix, v, n, a);
		git_changed_free(v, n);
	} else {
		git_audit_worktree(worktree_fd, since, suffix, a);
		a->fallback = why;
	}
	/* the events' reading and resolving included */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	a->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

void worktree_git_check(int worktree_fd, const char *id, const char *rundir, const struct timespec *since,
			struct git_watch *gw, const char *why, json_t **extra, bool quiet)
{
	if (worktree_fd < 0)
		return;
	_cleanup_free_ char *suffix = xasprintf(".warren-%s", id);
	struct git_audit a;
	audit(worktree_fd, since, suffix, gw, why, &a);

	if (!*extra)
		*extra = json_object();
	json_t *g = json_object();
	static const enum git_action order[] = { GIT_MOVED, GIT_NOT_MOVED, GIT_REPORTED, GIT_UNCHECKED };
	for (size_t k = 0; k < 4; k++) {
		json_t *list = json_array();
		for (size_t i = 0; i < a.n; i++) {
			const struct git_finding *f = &a.v[i];
			if (f->action != order[k])
				continue;
			json_t *o = json_pack("{s:s,s:s}", "path", f->path, "what", f->what);
			if (f->moved_to)
				json_object_set_new(o, "moved_to", json_string(f->moved_to));
			if (f->error)
				json_object_set_new(o, "error", json_string(f->error));
			json_array_append_new(list, o);
		}
		json_object_set_new(g, action_key(order[k]), list);
	}
	json_object_set_new(g, "total", json_integer((json_int_t)a.total));
	json_object_set_new(g, "dirs", json_integer((json_int_t)a.dirs));
	json_object_set_new(g, "method", json_string(a.method));
	if (a.fallback)
		json_object_set_new(g, "fallback", json_string(a.fallback));
	if (!strcmp(a.method, "fanotify"))
		json_object_set_new(g, "changed_dirs", json_integer((json_int_t)a.changed));
	json_object_set_new(g, "seconds", json_real(a.seconds));
	json_object_set_new(*extra, "git_check", g);

	if (!quiet) {
		size_t shown = 0;
		for (size_t k = 0; k < 4; k++)
			for (size_t i = 0; i < a.n && shown < MAX_LINES; i++)
				if (a.v[i].action == order[k]) {
					say(id, &a.v[i]);
					shown++;
				}
		if (a.total > shown)
			warn_line("%s: and %llu more git files (all in %s/result.json, \"git_check\")",
				id, (unsigned long long)(a.total - shown), rundir);
	}
	git_audit_free(&a);
}
