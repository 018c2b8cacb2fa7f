/* SPDX-License-Identifier: Apache-2.0 */
/* notify-floor.c - the floor of the write watch's round trip (docs/performance.md): times
 * 20000 open(O_CREAT|O_TRUNC)+close of one file in DIR (default: $TMPDIR, else /tmp) without a
 * filter, then in a child whose seccomp filter hands every openat to a thread of the parent
 * that answers "continue" at once, reading nothing (what policy/watch.c and
 * supervise/refused.c do, minus the taker's reads and lookups). Prints microseconds per
 * iteration for each; their difference is what any watch that hands a call over costs here.
 *   cc -O2 -pthread -o notify-floor bench/notify-floor.c && ./notify-floor [DIR] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { N = 20000 };
static int listener = -1;
static char probe[4096];

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void *taker(void *arg)
{
	(void)arg;
	for (;;) {
		struct seccomp_notif req;
		struct seccomp_notif_resp resp;
		memset(&req, 0, sizeof req);
		if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
			return NULL;
		memset(&resp, 0, sizeof resp);
		resp.id = req.id;
		resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
}

static void loop(const char *what)
{
	double a = now_us();
	for (int i = 0; i < N; i++) {
		int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0) {
			perror(probe);
			exit(1);
		}
		close(fd);
	}
	printf("%-26s %6.2f us\n", what, (now_us() - a) / N);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(probe, sizeof probe, "%s/notify-floor.%d", dir, (int)getpid());
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 1;
	loop("no filter");
	pid_t pid = fork();
	if (pid == 0) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { sizeof f / sizeof f[0], f };
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		int fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		char c = (char)fd, go;
		if (fd < 0 || write(sv[1], &c, 1) != 1 || read(sv[1], &go, 1) != 1)
			_exit(1);
		loop("each openat handed over");
		unlink(probe);
		_exit(0);
	}
	char c;
	if (pid < 0 || read(sv[0], &c, 1) != 1)
		return 1;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	listener = (int)syscall(SYS_pidfd_getfd, pidfd, c, 0);
	pthread_t t;
	if (listener < 0 || pthread_create(&t, NULL, taker, NULL) != 0 || write(sv[0], "x", 1) != 1)
		return 1;
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
