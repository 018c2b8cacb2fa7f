/* SPDX-License-Identifier: Apache-2.0 */
/* tioclinux: TIOCLINUX (console tricks: paste the selection, ...) on every terminal the job
 * reaches: fds 0-2, /dev/tty, /dev/tty0, /dev/console, a pty of its own. Only queries are
 * sent (subcode 7, get the mouse reporting mode). */
#include "attempt.h"
#include <sys/ioctl.h>

static void try(int fd, const char *what)
{
	char sub = 7;
	int r = ioctl(fd, TIOCLINUX, &sub);
	tried(r >= 0, "TIOCLINUX on %s: %s", what, res(r));
}

int main(void)
{
	a_start("tioclinux");
	char what[64];
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd)) {
			snprintf(what, sizeof what, "fd %d", fd);
			try(fd, what);
		}
	const char *devs[] = { "/dev/tty", "/dev/tty0", "/dev/tty1", "/dev/console" };
	for (int i = 0; i < 4; i++) {
		int fd = open(devs[i], O_RDONLY | O_NOCTTY);
		if (fd >= 0) {
			try(fd, devs[i]);
			close(fd);
		} else {
			tried(false, "opening %s: %s", devs[i], en());
		}
	}
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0) {
		int s = open(ptsname(m), O_RDWR | O_NOCTTY);
		if (s >= 0)
			try(s, "a pty of the job's own");
	}
	finish();
}
