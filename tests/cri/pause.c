// SPDX-License-Identifier: Apache-2.0
// pause.c - the pod sandbox's process for tests/integration/cri.t (built there with cc -static
// into the pause image): it holds the pod's namespaces open and does nothing else; SIGTERM or
// SIGINT end it with status 0, as the kubelet's pause does. pid 1 of its PID namespace, it
// also reaps any child that lands on it.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig)
{
	(void)sig;
	_exit(0);
}

static void on_child(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(void)
{
	struct sigaction stop = { .sa_handler = on_stop }, child = { .sa_handler = on_child };

	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGCHLD, &child, NULL);
	for (;;)
		pause();
	return 0;
}
