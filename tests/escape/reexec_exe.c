/* SPDX-License-Identifier: Apache-2.0 */
/* reexec_exe [HOSTPATH]: get warren's own binary open for writing (CVE-2019-5736's class):
 * /proc/1/exe (warren's init) and /proc/<pid>/exe of every process the job sees, directly
 * and by reopening an O_PATH/O_RDONLY descriptor through /proc/self/fd; executing
 * /proc/1/exe; and HOSTPATH, warren's binary on the host. Files are opened without O_TRUNC
 * and closed unwritten. */
#include "attempt.h"
#include <sys/wait.h>

static void reopen(const char *p)
{
	for (int i = 0; i < 2; i++) {
		int fd = open(p, i ? O_RDONLY : O_PATH);
		if (fd < 0) {
			tried(false, "opening %s %s: %s", p, i ? "O_RDONLY" : "O_PATH", en());
			continue;
		}
		char via[64];
		snprintf(via, sizeof via, "/proc/self/fd/%d", fd);
		int w = open(via, O_WRONLY | O_APPEND);
		tried(w >= 0, "reopening %s (%s) for writing: %s", p, i ? "O_RDONLY" : "O_PATH", res(w));
		if (w >= 0)
			close(w);
		close(fd);
	}
}

int main(int argc, char **argv)
{
	a_start("reexec_exe");
	pid_t me = getpid();
	DIR *d = opendir("/proc");
	struct dirent *e;
	char p[64];
	while (d && (e = readdir(d))) {
		int pid = atoi(e->d_name);
		if (pid <= 0 || pid == me)
			continue;
		snprintf(p, sizeof p, "/proc/%d/exe", pid);
		int fd = open(p, O_WRONLY | O_APPEND);
		tried(fd >= 0, "opening %s for writing: %s", p, res(fd));
		if (fd >= 0)
			close(fd);
		reopen(p);
	}
	if (d)
		closedir(d);
	/* execute warren's init binary, then try to write it from the child that runs it */
	pid_t c = fork();
	if (c == 0) {
		execl("/proc/1/exe", "warren", "--version", (char *)NULL);
		_exit(errno);
	}
	int st = 0;
	waitpid(c, &st, 0);
	tried(false, "executing /proc/1/exe: %s", WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) < 134 ?
							    strerrorname_np(WEXITSTATUS(st)) : "ran");
	if (argc > 1) {
		int fd = open(argv[1], O_WRONLY | O_APPEND);
		tried(fd >= 0, "opening %s (warren on the host) for writing: %s", argv[1], res(fd));
		if (fd >= 0)
			close(fd);
		reopen(argv[1]);
	}
	finish();
}
