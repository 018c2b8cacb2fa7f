/* SPDX-License-Identifier: Apache-2.0 */
/* userns: create a user namespace (unshare, clone, clone3) and, in it, a network namespace. */
#include "attempt.h"
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

int main(void)
{
	a_start("userns");
	pid_t p = fork();
	if (p == 0) {
		int r = unshare(CLONE_NEWUSER);
		if (r == 0)
			r = unshare(CLONE_NEWNET);
		_exit(r == 0 ? 0 : errno);
	}
	int st = 0;
	waitpid(p, &st, 0);
	tried(WIFEXITED(st) && WEXITSTATUS(st) == 0, "unshare(CLONE_NEWUSER): %s",
	      WEXITSTATUS(st) ? strerrorname_np(WEXITSTATUS(st)) : "ok");
	long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
	if (r == 0)
		_exit(0);
	tried(r > 0, "clone(CLONE_NEWUSER): %s", res(r));
	if (r > 0)
		waitpid(r, NULL, 0);
	struct clone_args ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };
	r = syscall(SYS_clone3, &ca, sizeof ca);
	if (r == 0)
		_exit(0);
	tried(r > 0, "clone3(CLONE_NEWUSER): %s", res(r));
	if (r > 0)
		waitpid(r, NULL, 0);
	r = unshare(CLONE_NEWUSER | CLONE_NEWNS);
	tried(r == 0, "unshare(CLONE_NEWUSER|CLONE_NEWNS): %s", res(r));
	finish();
}
