/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup_peek: find other runs from inside the cell through the host's cgroup trees: any
 * directory named run_* under /sys/fs/cgroup (depth 4) other than this run's own (the
 * hostname is the run id), and its memory figures. The test keeps another run alive. */
#include "attempt.h"

static char self[128];
static int found;

static void walk(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		char p[4096];
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (!strncmp(e->d_name, "run_", 4) && strcmp(e->d_name, self)) {
			found++;
			char f[4200];
			snprintf(f, sizeof f, "%s/memory.usage_in_bytes", p);
			bool rd = access(f, R_OK) == 0;
			tried(true, "another run's cgroup is visible: %s%s", p, rd ? " (and its memory use is readable)" : "");
			continue;
		}
		if (depth > 0)
			walk(p, depth - 1);
	}
	closedir(d);
}

int main(void)
{
	a_start("cgroup_peek");
	if (gethostname(self, sizeof self) < 0)
		untested("no hostname");
	walk("/sys/fs/cgroup", 4);
	if (!found)
		tried(false, "looking for other runs' cgroups under /sys/fs/cgroup: none visible");
	finish();
}
