/* SPDX-License-Identifier: Apache-2.0 */
/* tiocsti [need-tty]: push a keystroke into a terminal with TIOCSTI: the job's stdin, stdout,
 * stderr when they are terminals (the test runs warren under a pty with script(1)), /dev/tty,
 * and a pty the job opens itself. With need-tty, no terminal on 0-2 is "untested". */
#include "attempt.h"
#include <sys/ioctl.h>
#include <termios.h>

static void push(int fd, const char *what)
{
	char c = ' ';
	int r = ioctl(fd, TIOCSTI, &c);
	tried(r == 0, "TIOCSTI on %s: %s", what, res(r));
	/* the kernel compares 32 bits; a request with high bits set must not slip through */
	r = syscall(SYS_ioctl, fd, 0xdead00000000UL | TIOCSTI, &c);
	tried(r == 0, "TIOCSTI|high bits on %s: %s", what, res(r));
}

int main(int argc, char **argv)
{
	a_start("tiocsti");
	int ttys = 0;
	char what[64];
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd)) {
			ttys++;
			snprintf(what, sizeof what, "fd %d (%s)", fd, ttyname(fd) ? ttyname(fd) : "?");
			push(fd, what);
		}
	if (argc > 1 && !strcmp(argv[1], "need-tty") && !ttys)
		untested("no terminal on fds 0-2 (run warren under a pty)");
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
	if (fd >= 0) {
		push(fd, "/dev/tty");
		close(fd);
	} else {
		tried(false, "opening /dev/tty: %s", en());
	}
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	if (m >= 0 && grantpt(m) == 0 && unlockpt(m) == 0) {
		int s = open(ptsname(m), O_RDWR | O_NOCTTY);
		if (s >= 0)
			push(s, "a pty of the job's own");
	} else {
		tried(false, "opening /dev/ptmx: %s", en());
	}
	finish();
}
