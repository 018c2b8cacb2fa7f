/* SPDX-License-Identifier: Apache-2.0 */
/* ptrace_outside PID: PID is a host process (a sleep the test started, running as the job's
 * host uid). Attach to it, read its memory, get a pidfd of it. */
#include "attempt.h"
#include <sys/ptrace.h>
#include <sys/uio.h>

int main(int argc, char **argv)
{
	a_start("ptrace_outside");
	if (argc < 2)
		untested("usage: ptrace_outside PID");
	pid_t pid = atoi(argv[1]);
	long r = ptrace(PTRACE_SEIZE, pid, 0, 0);
	tried(r == 0, "PTRACE_SEIZE %d: %s", pid, res(r));
	if (r == 0)
		ptrace(PTRACE_DETACH, pid, 0, 0);
	r = ptrace(PTRACE_ATTACH, pid, 0, 0);
	tried(r == 0, "PTRACE_ATTACH %d: %s", pid, res(r));
	if (r == 0)
		ptrace(PTRACE_DETACH, pid, 0, 0);
	char buf[64];
	struct iovec l = { buf, sizeof buf }, rv = { (void *)0x400000, sizeof buf };
	r = process_vm_readv(pid, &l, 1, &rv, 1, 0);
	tried(r >= 0 || errno == EFAULT, "process_vm_readv %d: %s", pid, res(r));
	r = syscall(SYS_pidfd_open, pid, 0);
	tried(r >= 0, "pidfd_open %d: %s", pid, res(r));
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/mem", pid);
	int fd = open(p, O_RDONLY);
	tried(fd >= 0, "opening %s: %s", p, res(fd));
	finish();
}
