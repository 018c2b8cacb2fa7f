/* SPDX-License-Identifier: Apache-2.0 */
/* execgroup.c - the group of each exec of a live cell (execgroup.h): made below the run's
 * (v2) or in the freezer hierarchy (v1), joined by the exec's first process through a file
 * the supervisor opened, signalled and killed whole at its time limit, removed once empty. */
#include "cgroup/execgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/orphans.h"
#include "util/fs.h"

#define FREEZER_ROOT "/sys/fs/cgroup/freezer"

/* v1: the run's group in the freezer hierarchy (cg->freezer), made the first time: 0700 below
 * warren/ (0711, as cgroup.c's parents), marked with the state directory its memory group
 * names (for gc --orphans). A bundle's cell that joined it already (freezer.h) keeps it. */
static int freezer_parent(struct cgroup *cg)
{
	if (cg->freezer)
		return 0;
	if (!cg->name || access(FREEZER_ROOT "/tasks", F_OK) < 0)
		return -EOPNOTSUPP;
	if (mkdir(FREEZER_ROOT "/warren", 0711) < 0 && errno != EEXIST)
		return -errno;
	char *dir = xasprintf(FREEZER_ROOT "/warren/%s", cg->name);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int e = errno;
		free(dir);
		return -e;
	}
	char owner[4096];
	ssize_t n = cg->memory ? getxattr(cg->memory, CGROUP_OWNER_XATTR, owner, sizeof owner - 1) : -1;
	if (n > 0) {
		owner[n] = '\0';
		cgroup_mark_dir(dir, owner);
	}
	cg->freezer = dir;
	return 0;
}

int cgroup_exec_make(struct cgroup *cg, const char *name, struct cgroup_exec *x, int *join)
{
	*x = (struct cgroup_exec){ 0 };
	*join = -1;
	if (cg->kind == CGROUP_V2 && cg->v2)
		return cgroup_exec_make_in(cg->v2, true, name, x, join);
	int r = cg->kind == CGROUP_V1 ? freezer_parent(cg) : -EOPNOTSUPP;
	return r < 0 ? r : cgroup_exec_make_in(cg->freezer, false, name, x, join);
}

int cgroup_exec_make_in(const char *parent, bool v2, const char *name, struct cgroup_exec *x, int *join)
{
	*x = (struct cgroup_exec){ .v2 = v2 };
	*join = -1;
	char *dir = xasprintf("%s/%s", parent, name);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int e = errno;
		free(dir);
		return -e;
	}
	_cleanup_free_ char *file = xasprintf("%s/%s", dir, v2 ? "cgroup.procs" : "tasks");
	*join = open(file, O_WRONLY | O_CLOEXEC);
	if (*join < 0) {
		int e = errno;
		rmdir(dir);
		free(dir);
		return -e;
	}
	x->dir = dir;
	return 0;
}

/* sig to each process cgroup.procs of dir lists. */
static void signal_each(const char *dir, int sig)
{
	_cleanup_free_ char *p = xasprintf("%s/cgroup.procs", dir);
	_cleanup_free_ char *s = read_file(p, NULL);
	for (char *t = s; t && *t;) {
		char *end;
		long pid = strtol(t, &end, 10);
		if (end == t)
			break;
		if (pid > 0)
			kill((pid_t)pid, sig);
		t = end + strspn(end, "\n");
	}
}

void cgroup_exec_signal(const struct cgroup_exec *x, int sig)
{
	if (x->dir)
		signal_each(x->dir, sig);
}

/* v1: write state to dir's freezer.state; FROZEN waits (a few ms, at most a second) until
 * the kernel says every task stopped. */
static void freezer_state(const char *dir, const char *state)
{
	_cleanup_free_ char *f = xasprintf("%s/freezer.state", dir);
	if (write_file(f, state, strlen(state)) < 0 || strcmp(state, "FROZEN"))
		return;
	for (int i = 0; i < 200; i++) {
		_cleanup_free_ char *now = read_file(f, NULL);
		if (!now || !strncmp(now, "FROZEN", 6))
			return;
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
}

void cgroup_exec_kill(const struct cgroup_exec *x)
{
	if (!x->dir)
		return;
	if (x->v2) {
		_cleanup_free_ char *f = xasprintf("%s/cgroup.kill", x->dir);
		if (write_file(f, "1", 1) == 0)
			return;
	}
	/* frozen, nothing in it forks between the read and the kill: one round takes them all
	 * (a v2 kernel without cgroup.kill, before 5.14, is sent one round unfrozen) */
	if (!x->v2)
		freezer_state(x->dir, "FROZEN");
	signal_each(x->dir, SIGKILL);
	if (!x->v2)
		freezer_state(x->dir, "THAWED");
}

bool cgroup_exec_remove(struct cgroup_exec *x)
{
	if (!x->dir)
		return true;
	if (rmdir(x->dir) < 0 && errno != ENOENT)
		return false;
	free(x->dir);
	x->dir = NULL;
	return true;
}

void cgroup_exec_free(struct cgroup_exec *x)
{
	free(x->dir);
	x->dir = NULL;
}
