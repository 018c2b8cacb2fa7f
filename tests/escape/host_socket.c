/* SPDX-License-Identifier: Apache-2.0 */
/* host_socket STREAM DGRAM: reach a host service over the world-writable unix sockets the
 * test listens on (STREAM, SOCK_STREAM; DGRAM, SOCK_DGRAM) in a directory of the host's /
 * the cell can see: connect, then hand the host our stdout with SCM_RIGHTS (issue 10: a
 * cell passed its stdout/stderr to a host process that way). Tried by the path, relative to
 * its directory, through a symlink the job makes in /tmp, through /proc/self/root, and by
 * sendto() on the datagram one. The host side records what reached it. */
#include "attempt.h"

#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

/* Send fd 1 over s with SCM_RIGHTS (to addr when given); true when the kernel took it. */
static bool pass_stdout(int s, const struct sockaddr_un *to)
{
	char byte = 'x';
	struct iovec iov = { &byte, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = { 0 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
	if (to) {
		m.msg_name = (void *)to;
		m.msg_namelen = sizeof *to;
	}
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	int one = 1;
	memcpy(CMSG_DATA(c), &one, sizeof one);
	return sendmsg(s, &m, 0) == 1;
}

static struct sockaddr_un addr_of(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	return a;
}

/* connect() a stream socket to path and pass stdout over it. */
static void try_stream(const char *how, const char *path)
{
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = addr_of(path);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
		tried(false, "connect %s (%s): %s", path, how, en());
	} else {
		bool passed = pass_stdout(s, NULL);
		tried(true, "connect %s (%s): connected; stdout passed with SCM_RIGHTS: %s", path, how, passed ? "yes" : en());
	}
	if (s >= 0)
		close(s);
}

int main(int argc, char **argv)
{
	a_start("host_socket");
	if (argc < 3)
		untested("usage: host_socket STREAM DGRAM");
	const char *stream = argv[1], *dgram = argv[2];
	try_stream("its path", stream);

	char dir[sizeof((struct sockaddr_un *)0)->sun_path];
	snprintf(dir, sizeof dir, "%s", stream);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (chdir(dir) == 0)
			try_stream("relative to its directory", slash + 1);
		else
			tried(false, "chdir %s: %s", dir, en());
	}
	char link[64];
	snprintf(link, sizeof link, "/tmp/host-socket-link-%d", (int)getpid());
	if (symlink(stream, link) == 0) {
		try_stream("through a symlink in /tmp", link);
		unlink(link);
	} else {
		tried(false, "symlink %s in /tmp: %s", link, en());
	}
	char viaproc[sizeof dir];
	snprintf(viaproc, sizeof viaproc, "/proc/self/root%s", stream);
	try_stream("through /proc/self/root", viaproc);

	int d = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un to = addr_of(dgram);
	bool sent = d >= 0 && pass_stdout(d, &to);
	tried(sent, "sendto %s with stdout attached: %s", dgram, sent ? "sent" : en());
	finish();
}
