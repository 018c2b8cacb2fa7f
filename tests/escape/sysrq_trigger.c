/* SPDX-License-Identifier: Apache-2.0 */
/* sysrq_trigger: open /proc/sysrq-trigger for writing. Only its masked stand-in (/dev/null)
 * is ever written to ("h", the help key, harmless even on the real file); the real one
 * opened for writing is already the escape and is closed unwritten. Also /proc/sys/kernel/sysrq. */
#include "attempt.h"

int main(void)
{
	a_start("sysrq_trigger");
	const char *files[] = { "/proc/sysrq-trigger", "/proc/1/root/proc/sysrq-trigger" };
	for (int i = 0; i < 2; i++) {
		int fd = open(files[i], O_WRONLY);
		if (fd < 0) {
			tried(false, "opening %s for writing: %s", files[i], en());
			continue;
		}
		struct stat st;
		fstat(fd, &st);
		bool masked = S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
		if (masked) {
			ssize_t n = write(fd, "h", 1);
			tried(false, "writing %s: %s into the /dev/null that masks it", files[i], n == 1 ? "went" : en());
		} else {
			tried(true, "opened the real %s for writing (closed unwritten)", files[i]);
		}
		close(fd);
	}
	int fd = open("/proc/sys/kernel/sysrq", O_WRONLY);
	tried(fd >= 0, "opening /proc/sys/kernel/sysrq for writing: %s", res(fd));
	finish();
}
