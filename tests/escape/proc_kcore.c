/* SPDX-License-Identifier: Apache-2.0 */
/* proc_kcore: read the kernel's memory: /proc/kcore, /dev/mem, /dev/kmem, /proc/kmem. */
#include "attempt.h"

int main(void)
{
	a_start("proc_kcore");
	const char *files[] = { "/proc/kcore", "/proc/1/root/proc/kcore", "/dev/mem", "/dev/kmem", "/dev/port" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		int fd = open(files[i], O_RDONLY);
		if (fd < 0) {
			tried(false, "opening %s: %s", files[i], en());
			continue;
		}
		char buf[64];
		ssize_t n = read(fd, buf, sizeof buf);
		struct stat st;
		fstat(fd, &st);
		tried(n > 0, "reading %s: %s (%s)", files[i], n > 0 ? "got bytes" : n == 0 ? "empty" : en(),
		      S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3 ? "masked by /dev/null" : "not /dev/null");
		close(fd);
	}
	finish();
}
