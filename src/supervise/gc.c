/* SPDX-License-Identifier: Apache-2.0 */
/* gc.c - the reclaim of what runs left (gc.h): the scratch, cgroup, network and stale files of a
 * run whose supervisor is gone, a record for it that says so (and the git check it did not
 * live to do), the records past their time, the history's retention, a plain gc's
 * housekeeping of the store and the host, and the run cgroups of state directories that are
 * gone (gc --orphans). */
#include "supervise/gc.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cell/vm.h"
#include "cgroup/cgroup.h"
#include "cgroup/delegate.h"
#include "cgroup/orphans.h"
#include "image/store.h"
#include "net/net.h"
#include "run/history.h"
#include "run/id.h"
#include "run/record.h"
#include "supervise/worktree.h"
#include "util/fs.h"
#include "util/units.h"


/* The record of a run whose supervisor died: how it ended, as far as we know, and the git
 * check the supervisor did not live to do (since the run started). */
static void gc_record(int dir, const char *id, const char *where)
{
	json_t *r = rundir_load_json(dir, "spec.json");
	pid_t pid = rundir_pid(dir);
	_cleanup_free_ char *who = pid > 0 ? xasprintf("the supervisor (pid %d)", (int)pid) : xstrdup("the supervisor");
	if (!r) {
		/* killed between making the run directory and writing spec.json: no cell, cgroup or
		 * network was made yet, and what ran is not known; a record all the same, so that
		 * every run directory has one */
		uint64_t ms = run_id_time_ms(id);
		struct timespec t = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L };
		char st[64];
		format_rfc3339(st, sizeof st, &t);
		_cleanup_free_ char *msg = xasprintf("%s died while preparing the run, before its spec was written (killed, or the host crashed): nothing of it ran; reclaimed by warren gc", who);
		r = json_pack("{s:s,s:n,s:s,s:s,s:n,s:s,s:n}", "id", id, "command", "started_at", st, "status", "error",
			      "exit_code", "error", msg, "cause");
		char *txt = r ? json_dumps(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
		if (txt) {
			_cleanup_free_ char *t2 = xasprintf("%s\n", txt);
			write_file_atomic_at(dir, "result.json", t2, strlen(t2), 0644);
			free(txt);
		}
		json_decref(r);
		return;
	}
	_cleanup_free_ char *msg = xasprintf("%s died before the run ended (killed, or the host crashed); reclaimed by warren gc", who);
	json_object_set_new(r, "status", json_string("error"));
	json_object_set_new(r, "exit_code", json_null());
	json_object_set_new(r, "error", json_string(msg));
	json_object_set_new(r, "cause", json_null());
	const char *wt = json_string_value(json_object_get(r, "worktree"));
	_cleanup_close_ int wfd = wt ? open(wt, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	struct stat st;
	_cleanup_free_ char *inode = wfd >= 0 && fstat(wfd, &st) == 0
		? xasprintf("%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino) : NULL;
	const char *was = json_string_value(json_object_get(r, "worktree_inode"));
	if (inode && (!was || strcmp(was, inode))) {
		/* the path names another directory now: not the run's to check */
		warn_line("the worktree %s of %s is no longer the directory the run had; not checking git there", wt, id);
		closep(&wfd);
	}
	if (wfd >= 0) {
		uint64_t ms = run_id_time_ms(id);
		struct timespec since = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L };
		worktree_git_check(wfd, id, where, &since, NULL, "its supervisor ended before the check", &r, false);
	}
	char *txt = json_dumps(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (txt) {
		_cleanup_free_ char *t2 = xasprintf("%s\n", txt);
		write_file_atomic_at(dir, "result.json", t2, strlen(t2), 0644);
		free(txt);
	}
	json_decref(r);
}

/* The history of sd (run/history.h), or NULL when it has none (a note when it cannot be opened). */
static struct history *state_history(const struct statedir *sd)
{
	_cleanup_free_ char *path = history_path(sd->path, NULL);
	struct history *h = NULL;
	_cleanup_error_ struct error err = { 0 };
	if (history_exists(path) && history_open(&h, path, &err) < 0)
		warn_line("%s", err.msg);
	return h;
}

/* The history row of a run whose supervisor died: it ended, as its record now says. */
static void history_gc_ended(const struct statedir *sd, const char *id)
{
	struct history *h = state_history(sd);
	_cleanup_error_ struct error err = { 0 };
	if (!h)
		return;
	json_t *row = history_get(h, id, &err);
	const char *st = json_string_value(json_object_get(row, "state"));
	struct history_end e = { .state = "error", .error = "the supervisor died before the run ended (killed, or the host crashed); reclaimed by warren gc",
				 .ended_ms = history_now_ms(), .duration_s = -1, .if_live = true };
	if (st && (!strcmp(st, "running") || !strcmp(st, "queued")))
		history_end(h, id, &e, &err);
	json_decref(row);
	history_close(h);
}

/* A bundle's group (spec.json's cgroup_path, checked again): removed where it is still the
 * run's (cgroup/cgroup.h). */
static int gc_cgroup_path(int dir, const char *name)
{
	json_t *j = rundir_load_json(dir, "spec.json");
	const char *p = json_string_value(json_object_get(j, "cgroup_path"));
	char *rel = NULL;
	struct error err = { 0 };
	int r = p && cgroup_path_parse(p, false, false, &rel, &err) == 0 ? cgroup_remove_path(rel, name) : 0;
	error_clear(&err);
	free(rel);
	json_decref(j);
	return r;
}

/* Reclaim one dead run of sd. Returns 1 when something was reclaimed, 0 when nothing, -1 on
 * error. Everything below the run directory goes through its descriptor; the cgroups and
 * the network leases touched are the ones named for this state directory's run. */
static int gc_one(const struct statedir *sd, const char *id, uint64_t older_ms, bool *pruned)
{
	_cleanup_error_ struct error err = { 0 };
	_cleanup_close_ int dir = rundir_open(sd, id, &err);
	if (dir < 0) {
		warn_line("%s", err.msg);
		return -1;
	}
	if (rundir_is_live(dir))
		return 0;
	_cleanup_free_ char *where = xasprintf("%s/runs/%s", sd->path, id);
	int did = 0;
	/* a supervisor that died may leave its cell's init, stopped by PDEATHSIG, and the group */
	_cleanup_free_ char *cg = rundir_cgroup_name(sd->tag, id);
	bool root = geteuid() == 0; /* (rootless: its group below the caller's delegated cgroup) */
	if (root ? cgroup_remove_by_id(cg, false) < 0 || gc_cgroup_path(dir, cg) < 0 : cgroup_remove_by_id(cg, true) < 0)
		warn_line("cannot remove the cgroup of %s; is a process of it stuck?", id);
	/* a warm cell no run took (its server was killed): it was never a run */
	if (rundir_is_warm(dir) && faccessat(dir, "spec.json", F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
		int r = rm_tree_at(sd->runs, id);
		if (r < 0)
			warn_line("cannot remove the warm cell's directory %s: %s", where, strerror(-r));
		return r < 0 ? -1 : 1;
	}
	/* --net: its veth, firewall chains and sets, published ports and address lease */
	if (geteuid() == 0 && net_gc_run(id, where) > 0)
		did = 1;
	/* a supervisor killed while it wrote spec.json or the pid leaves "<name>.tmp.<pid>" */
	if (rundir_remove_stale_tmp(dir) > 0)
		did = 1;
	struct stat st;
	if (fstatat(dir, "result.json", &st, AT_SYMLINK_NOFOLLOW) < 0) {
		gc_record(dir, id, where);
		history_gc_ended(sd, id);
	}
	if (rundir_has_scratch(dir)) {
		if (rundir_reclaim(dir, where, &err) < 0) {
			warn_line("%s", err.msg);
			return -1;
		}
		did = 1;
	}
	if (older_ms && (uint64_t)history_now_ms() - run_id_time_ms(id) > older_ms) {
		int r = rm_tree_at(sd->runs, id);
		if (r < 0) {
			warn_line("cannot delete the record %s: %s", where, strerror(-r));
			return -1;
		}
		*pruned = true;
		did = 1;
	}
	return did;
}

/* Mark id pruned in the history of sd (run/history.h), when there is one. */
static void history_pruned(const struct statedir *sd, const char *id)
{
	struct history *h = state_history(sd);
	_cleanup_error_ struct error err = { 0 };
	if (h && history_mark_pruned(h, id, &err) < 0)
		warn_line("%s", err.msg);
	history_close(h);
}

/* gc --keep-runs N / --keep-for D: the history's retention (run/history.h); adds to *pruned. */
static int gc_retain(const struct statedir *sd, uint64_t keep, uint64_t ms, int *pruned)
{
	struct history *h = state_history(sd);
	_cleanup_error_ struct error err = { 0 };
	char **ids = h ? history_retain(h, sd, (long)keep, (int64_t)ms, &err) : NULL;
	history_close(h);
	if (err.msg)
		warn_line("%s", err.msg);
	for (char **id = ids; id && *id; id++)
		(*pruned)++;
	history_ids_free(ids);
	return err.msg ? -1 : 0;
}

/* A plain gc's housekeeping of the store and the host (a gc of RUN ids does none): what
 * interrupted image imports and removals left, the vm driver's stale cache, and the bridge
 * and base tables runs keep for the next one when none is left to use them. The failures. */
static int gc_housekeeping(const struct statedir *sd, FILE *out)
{
	int failed = 0;
	int half = image_gc(sd->fd);
	if (half && out)
		fprintf(out, "gc: removed %d half-made image import%s or removal%s\n", half, half == 1 ? "" : "s", half == 1 ? "" : "s");
	int stale = 0;
	int pr = vm_cache_prune(sd->path, &stale);
	if (pr < 0 && ++failed)
		warn_line("cannot prune %s/vm-cache: %s", sd->path, strerror(-pr));
	if (stale && out)
		fprintf(out, "gc: removed %d old file%s of the vm driver's cache\n", stale, stale == 1 ? "" : "s");
	if (geteuid() == 0)
		net_gc_idle();
	int gone = statedir_registry_prune();
	if (gone < 0 && ++failed)
		warn_line("cannot prune the registry of state directories: %s", strerror(-gone));
	return failed;
}

/* gc --orphans: the run cgroup name is warren's, its state directory gone (run/rundir.h);
 * counts the run cgroups that name no state directory (made before warren marked them). */
static bool orphan_of_gone_state(const char *name, const char *owner, void *unmarked)
{
	if (!owner && rundir_cgroup_tag(name))
		++*(size_t *)unmarked;
	return rundir_cgroup_orphaned(name, owner);
}

int gc_orphans(FILE *out, struct error *err)
{
	/* rootless: the caller's own runs' groups, below its delegated cgroup */
	enum cgroup_deleg why;
	const char *self;
	bool rootless = geteuid() != 0;
	if (rootless && !cgroup_delegate(&why, &self))
		return error_set(err, 0, "gc --orphans: no cgroup v2 subtree is delegated to uid %u here, so its runs have no cgroups; the run cgroups of root's runs are root's to sweep: run it as root",
				 (unsigned)geteuid());
	size_t unmarked = 0;
	struct cgroup_orphans n;
	cgroup_remove_orphans(orphan_of_gone_state, &unmarked, rootless, &n);
	if (!out)
		return n.failed ? 1 : 0;
	fprintf(out, "gc: removed %zu run cgroup%s of state directories that are gone, left %zu with a process in it alone, too new: left %zu (made less than %d s ago, their run may be starting)\n",
		n.removed, n.removed == 1 ? "" : "s", n.busy, n.young, CGROUP_ORPHAN_MIN_AGE);
	if (unmarked)
		fprintf(out, "gc: %zu run cgroup%s name%s no state directory (made by an older warren, or being made): not touched\n",
			unmarked, unmarked == 1 ? "" : "s", unmarked == 1 ? "s" : "");
	return n.failed ? 1 : 0;
}

int gc_runs(const struct statedir *sd, char **ids, const struct gc_opts *o, struct gc_counts *n)
{
	*n = (struct gc_counts){ 0 };
	for (char **id = ids; *id; id++) {
		_cleanup_close_ int dir = rundir_open(sd, *id, NULL);
		if (dir >= 0 && rundir_is_live(dir)) {
			n->live++;
			continue;
		}
		bool pruned = false;
		int r = gc_one(sd, *id, o->older_ms, &pruned);
		if (r < 0)
			n->failed++;
		else if (pruned && ++n->pruned)
			history_pruned(sd, *id); /* the history keeps the run's row, saying so */
		else if (r > 0)
			n->reclaimed++;
	}
	if ((o->keep_runs || o->keep_for_ms) && gc_retain(sd, o->keep_runs, o->keep_for_ms, &n->pruned) < 0)
		n->failed++;
	if (o->housekeeping)
		n->failed += gc_housekeeping(sd, o->out);
	if (o->out)
		fprintf(o->out, "gc: reclaimed the scratch of %d run%s, deleted %d record%s, left %d live run%s alone%s\n",
			n->reclaimed, n->reclaimed == 1 ? "" : "s", n->pruned, n->pruned == 1 ? "" : "s", n->live,
			n->live == 1 ? "" : "s", n->failed ? "; some failed (see above)" : "");
	return n->failed ? -1 : 0;
}

int gc_run_ids(const char *statedir, char **ids, FILE *out)
{
	struct statedir sd;
	_cleanup_error_ struct error err = { 0 };
	if (statedir_open(&sd, statedir, false, &err) < 0) {
		warn_line("%s", err.msg);
		return -1;
	}
	struct gc_counts n;
	int r = gc_runs(&sd, ids, &(struct gc_opts){ .out = out }, &n);
	statedir_close(&sd);
	return r;
}
