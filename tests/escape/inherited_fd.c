/* SPDX-License-Identifier: Apache-2.0 */
/* inherited_fd: the test opened fds 5..9 on host files (a marker in the host's /tmp, a file
 * open for appending, the host's /, /root, warren's binary) before starting warren. Any
 * descriptor above 2 the job starts with is the escape; through one, read or walk out. */
#include "attempt.h"

int main(void)
{
	a_start("inherited_fd");
	int open_fds[64], n = 0;
	for (int fd = 3; fd < 1024 && n < 64; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			open_fds[n++] = fd;
	for (int i = 0; i < n; i++) {
		char l[64], t[512] = "";
		snprintf(l, sizeof l, "/proc/self/fd/%d", open_fds[i]);
		ssize_t k = readlink(l, t, sizeof t - 1);
		if (k > 0)
			t[k] = 0;
		tried(true, "fd %d is open at start: %s", open_fds[i], t);
		int up = openat(open_fds[i], "..", O_RDONLY | O_DIRECTORY);
		if (up >= 0)
			tried(true, "openat(fd %d, \"..\") walks out", open_fds[i]);
	}
	for (int fd = 5; fd <= 9; fd++) {
		char b[8];
		ssize_t r = read(fd, b, sizeof b);
		if (r < 0)
			tried(false, "read(fd %d): %s", fd, en());
	}
	finish();
}
