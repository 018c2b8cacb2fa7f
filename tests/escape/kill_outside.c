/* SPDX-License-Identifier: Apache-2.0 */
/* kill_outside PID: PID is a host process (a sleep the test started, running as the job's
 * host uid). Signal it (SIGKILL), its process group, through a pidfd; the test checks that
 * it still lives. */
#include "attempt.h"
#include <signal.h>

int main(int argc, char **argv)
{
	a_start("kill_outside");
	if (argc < 2)
		untested("usage: kill_outside PID");
	pid_t pid = atoi(argv[1]);
	int r = kill(pid, 0);
	tried(r == 0, "kill(%d, 0): %s", pid, res(r));
	r = kill(pid, SIGKILL);
	tried(r == 0, "kill(%d, SIGKILL): %s", pid, res(r));
	r = kill(-pid, SIGKILL);
	tried(r == 0, "kill(-%d, SIGKILL): %s", pid, res(r));
	r = syscall(SYS_tgkill, pid, pid, SIGKILL);
	tried(r == 0, "tgkill(%d): %s", pid, res(r));
	int fd = syscall(SYS_pidfd_open, pid, 0);
	tried(fd >= 0, "pidfd_open(%d): %s", pid, res(fd));
	if (fd >= 0) {
		r = syscall(SYS_pidfd_send_signal, fd, SIGKILL, NULL, 0);
		tried(r == 0, "pidfd_send_signal: %s", res(r));
	}
	finish();
}
