/* SPDX-License-Identifier: Apache-2.0 */
/* freezer.c - freezing the processes of a cell, apart from its limits (the OCI face's pause and
 * resume): on v1 and hybrid hosts a group of its own in the freezer hierarchy, which the cell's
 * init joins before its job starts (its children are born in it); on v2 the run's own group's
 * cgroup.freeze. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/freezer.h"
#include "util/fs.h"

#define FREEZER_ROOT "/sys/fs/cgroup/freezer"

char *cgroup_freezer_join(const char *name, pid_t pid, struct error *err)
{
	if (!is_dir(FREEZER_ROOT))
		return NULL;
	/* 0711 as warren's other cgroup parents (cgroup.c): another host user cannot list the runs */
	if (mkdir(FREEZER_ROOT "/warren", 0711) < 0 && errno != EEXIST) {
		error_set(err, errno, "cannot make %s/warren", FREEZER_ROOT);
		return NULL;
	}
	struct stat st;
	if (stat(FREEZER_ROOT "/warren", &st) == 0 && (st.st_mode & 07777) != 0711)
		chmod(FREEZER_ROOT "/warren", 0711);  /* made 0755 by an older warren */
	char *dir = xasprintf(FREEZER_ROOT "/warren/%s", name);
	_cleanup_free_ char *procs = xasprintf("%s/cgroup.procs", dir);
	char v[32];
	snprintf(v, sizeof v, "%d", (int)pid);
	if ((mkdir(dir, 0700) < 0 && errno != EEXIST) || write_file(procs, v, strlen(v)) < 0) {
		error_set(err, errno, "cannot put the cell in the freezer group %s", dir);
		rmdir(dir);
		free(dir);
		return NULL;
	}
	return dir;
}

/* The file that freezes member's group: v1 freezer.state, v2 cgroup.freeze (heap), or NULL. */
static char *freeze_file(pid_t member, bool *v1)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cgroup", (int)member);
	_cleanup_free_ char *text = read_file(path, NULL);
	char *v2 = NULL;
	for (char *line = text ? strtok(text, "\n") : NULL; line; line = strtok(NULL, "\n")) {
		char *ctrl = strchr(line, ':'), *p = ctrl ? strchr(ctrl + 1, ':') : NULL;
		if (!p)
			continue;
		*p++ = 0;
		if (!strcmp(ctrl + 1, "freezer") && strcmp(p, "/")) {
			free(v2);
			*v1 = true;
			return xasprintf(FREEZER_ROOT "%s/freezer.state", p);
		}
		if (!ctrl[1] && strcmp(p, "/") && !v2)
			v2 = xasprintf("/sys/fs/cgroup%s/cgroup.freeze", p);
	}
	*v1 = false;
	if (v2 && access(v2, W_OK) < 0)
		free(steal_pointer(&v2));
	return v2;
}

int cgroup_freezer_set(pid_t member, bool frozen, struct error *err)
{
	bool v1;
	_cleanup_free_ char *f = freeze_file(member, &v1);
	if (!f)
		return error_set(err, 0, "the cell has no freezer (rootless, or a host without the freezer controller)");
	const char *want = v1 ? (frozen ? "FROZEN" : "THAWED") : (frozen ? "1" : "0");
	if (write_file(f, want, strlen(want)) < 0)
		return error_set(err, errno, "cannot write %s to %s", want, f);
	/* v1 freezes asynchronously: FREEZING until every task stopped */
	for (int i = 0; v1 && frozen && i < 200; i++) {
		_cleanup_free_ char *state = read_file(f, NULL);
		if (state && !strncmp(state, "FROZEN", 6))
			return 0;
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
	return v1 && frozen ? error_set(err, 0, "the cell did not freeze within a second (%s)", f) : 0;
}

void cgroup_freezer_remove(const char *path)
{
	if (!path)
		return;
	/* the groups of the cell's execs below it first (execgroup.h; their processes ended with
	 * the cell) */
	DIR *d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		_cleanup_free_ char *sub = xasprintf("%s/%s", path, e->d_name);
		cgroup_freezer_remove(sub);
	}
	if (d)
		closedir(d);
	_cleanup_free_ char *state = xasprintf("%s/freezer.state", path);
	write_file(state, "THAWED", 6);
	rmdir(path);
}
