/* SPDX-License-Identifier: Apache-2.0 */
/* cgroup_move: move the job into another cgroup (out of the run's, and its limits): write its
 * pid to every cgroup.procs it can find under /sys/fs/cgroup (depth 3), create a cgroup,
 * change subtree_control. The test compares /proc/self/cgroup. */
#include "attempt.h"

static int seen;

static void walk(const char *dir, int depth)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/cgroup.procs", dir);
	int fd = open(p, O_WRONLY);
	if (fd >= 0 || errno != ENOENT) {
		seen++;
		if (fd >= 0) {
			char b[32];
			int n = snprintf(b, sizeof b, "%d\n", getpid());
			ssize_t w = write(fd, b, n);
			tried(w == n, "writing my pid to %s: %s", p, w == n ? "moved" : en());
			close(fd);
		} else if (seen <= 12) {
			tried(false, "opening %s for writing: %s", p, en());
		} else {
			a_tries++;
		}
	}
	if (depth == 0)
		return;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
			walk(p, depth - 1);
		}
	if (d)
		closedir(d);
}

int main(void)
{
	a_start("cgroup_move");
	walk("/sys/fs/cgroup", 3);
	printf("%s: tried %d cgroup.procs files\n", a_name, seen);
	int r = mkdir("/sys/fs/cgroup/warren-escape", 0755);
	tried(r == 0, "mkdir /sys/fs/cgroup/warren-escape: %s", res(r));
	if (r == 0)
		rmdir("/sys/fs/cgroup/warren-escape");
	int fd = open("/sys/fs/cgroup/cgroup.subtree_control", O_WRONLY);
	tried(fd >= 0, "opening /sys/fs/cgroup/cgroup.subtree_control for writing: %s", res(fd));
	/* its own cgroup (the cell's cgroup namespace root) */
	fd = open("/proc/self/cgroup", O_RDONLY);
	char b[1024] = "";
	if (fd >= 0) {
		ssize_t n = read(fd, b, sizeof b - 1);
		if (n > 0)
			b[n] = 0;
	}
	for (char *s = b; *s; s++)
		if (*s == '\n')
			*s = ' ';
	printf("%s: tried reading /proc/self/cgroup: %s\n", a_name, b);
	finish();
}
