/* SPDX-License-Identifier: Apache-2.0 */
/* vmexec.c - the two relays that carry a job's executor across the VM's wall (vmexec.h): the
 * host's keeps the runner's socket and the tasks' output pipes, the guest's the executor's
 * socket and a pipe per task; between them, frames on a virtio-serial port. The guest is as
 * untrusted as its job: the host's relay bounds every frame and writes only into the pipes
 * the runner gave it. */
#include "cell/vmexec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cell/executor.h"
#include "util/error.h"

/* ---- frames ---- */

static int put(int fd, const void *p, size_t n)
{
	for (const char *c = p; n;) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int get(int fd, void *p, size_t n)
{
	for (char *c = p; n;) {
		ssize_t r = read(fd, c, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

static int frame_send(int port, uint32_t kind, uint32_t task, const void *p, size_t n)
{
	struct vmx_frame h = { .len = (uint32_t)n, .kind = kind, .task = task };
	return put(port, &h, sizeof h) < 0 || (n && put(port, p, n) < 0) ? -1 : 0;
}

/* The next frame into h and buf (EXEC_MSG_MAX bytes): -1 at the end or on a frame too long. */
static int frame_recv(int port, struct vmx_frame *h, char *buf)
{
	if (get(port, h, sizeof *h) < 0 || h->len > EXEC_MSG_MAX)
		return -1;
	return h->len ? get(port, buf, h->len) : 0;
}

/* ---- the tasks' pipes, by task id ---- */

struct pipes {
	struct { uint32_t task; int fd; } *v;
	size_t n;
};

static void pipes_add(struct pipes *p, uint32_t task, int fd)
{
	p->v = xrealloc(p->v, (p->n + 1) * sizeof *p->v);
	p->v[p->n].task = task;
	p->v[p->n++].fd = fd;
}

static int pipes_find(const struct pipes *p, uint32_t task)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].task == task)
			return (int)i;
	return -1;
}

static void pipes_close(struct pipes *p, size_t i)
{
	close(p->v[i].fd);
	p->v[i] = p->v[--p->n];
}

static void ignore_signals(void)
{
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD)
			signal(sig, SIG_IGN);
}

/* ---- the host's side ---- */

/* A message of the runner: its pipe kept (EXEC_START), the message passed on without it.
 * -1 when the runner is done. */
static int host_from_runner(int runner, int port, struct pipes *p, char *buf)
{
	int fds[2] = { -1, -1 };
	char cbuf[CMSG_SPACE(sizeof fds)];
	struct iovec iov = { .iov_base = buf, .iov_len = EXEC_MSG_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf };
	ssize_t n = recvmsg(runner, &mh, MSG_CMSG_CLOEXEC);
	if (n <= 0)
		return -1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len >= CMSG_LEN(sizeof fds))
			memcpy(fds, CMSG_DATA(cm), sizeof fds);
	struct exec_hdr h;
	if (fds[1] >= 0 && fds[1] != fds[0])
		close(fds[1]); /* the runner gives one pipe for both streams */
	if ((size_t)n >= sizeof h) {
		memcpy(&h, buf, sizeof h);
		if (h.type == EXEC_START && fds[0] >= 0 && pipes_find(p, h.task) < 0)
			pipes_add(p, h.task, fds[0]), fds[0] = -1;
	}
	if (fds[0] >= 0)
		close(fds[0]);
	frame_send(port, VMX_MSG, 0, buf, (size_t)n);
	return 0;
}

/* A frame of the guest: -1 at the port's end. */
static int host_from_guest(int runner, int port, struct pipes *p, char *buf)
{
	struct vmx_frame f;
	if (frame_recv(port, &f, buf) < 0)
		return -1;
	int i = pipes_find(p, f.task);
	if (f.kind == VMX_MSG)
		send(runner, buf, f.len, MSG_NOSIGNAL);
	else if (f.kind == VMX_OUT && i >= 0 && put(p->v[i].fd, buf, f.len) < 0)
		pipes_close(p, (size_t)i); /* the runner stopped reading it */
	else if (f.kind == VMX_EOF && i >= 0)
		pipes_close(p, (size_t)i);
	return 0;
}

void vmexec_host_relay(int runner, int port)
{
	ignore_signals();
	struct pipes p = { 0 };
	char *buf = xmalloc(EXEC_MSG_MAX);
	struct pollfd pf[2] = { { .fd = runner, .events = POLLIN }, { .fd = port, .events = POLLIN } };
	for (;;) {
		if (poll(pf, 2, -1) < 0)
			continue;
		if (pf[0].revents && host_from_runner(runner, port, &p, buf) < 0) {
			frame_send(port, VMX_SHUT, 0, NULL, 0);
			pf[0].fd = -1;
		}
		if (pf[1].revents && host_from_guest(runner, port, &p, buf) < 0)
			break;
	}
	while (p.n)
		pipes_close(&p, 0);
	free(p.v);
	free(buf);
}

/* ---- the guest's side ---- */

/* What task i's pipe holds now, passed on; at its end (or when the relay ends: all) VMX_EOF. */
static void guest_output(int port, struct pipes *p, size_t i, bool last, char *buf)
{
	for (;;) {
		ssize_t n = read(p->v[i].fd, buf, 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0) {
			frame_send(port, VMX_OUT, p->v[i].task, buf, (size_t)n);
			continue;
		}
		if (n == 0 || last) {
			frame_send(port, VMX_EOF, p->v[i].task, NULL, 0);
			pipes_close(p, i);
		}
		return;
	}
}

/* A frame of the host: a task's pipe made and its write end given to the executor with the
 * message (EXEC_START), other messages passed on. -1 at the port's end. */
static int guest_from_host(int port, int executor, struct pipes *p, char *buf)
{
	struct vmx_frame f;
	if (frame_recv(port, &f, buf) < 0)
		return -1;
	if (f.kind == VMX_SHUT)
		shutdown(executor, SHUT_WR);
	if (f.kind != VMX_MSG || f.len < sizeof(struct exec_hdr))
		return 0;
	struct exec_hdr h;
	memcpy(&h, buf, sizeof h);
	struct iovec iov = { .iov_base = buf, .iov_len = f.len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fds[2] = { -1, -1 }, pp[2];
	char cbuf[CMSG_SPACE(sizeof fds)] = { 0 };
	if (h.type == EXEC_START && pipes_find(p, h.task) < 0 && pipe2(pp, O_CLOEXEC) == 0) {
		fcntl(pp[0], F_SETFL, O_NONBLOCK);
		pipes_add(p, h.task, pp[0]);
		fds[0] = fds[1] = pp[1];
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof cbuf;
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof fds);
		memcpy(CMSG_DATA(cm), fds, sizeof fds);
	}
	sendmsg(executor, &mh, MSG_NOSIGNAL);
	if (fds[0] >= 0)
		close(fds[0]);
	return 0;
}

/* A message of the executor, passed on; a task's end after what its pipe holds (the runner
 * takes a task's output before it shows its end, as with a container's pipe). -1 at its end. */
static int guest_from_executor(int port, int executor, struct pipes *p, char *buf)
{
	ssize_t n = recv(executor, buf, EXEC_MSG_MAX, 0);
	if (n <= 0)
		return -1;
	struct exec_hdr h;
	if ((size_t)n >= sizeof h) {
		memcpy(&h, buf, sizeof h);
		int i = pipes_find(p, h.task);
		if ((h.type == EXEC_EXITED || h.type == EXEC_FAILED) && i >= 0) {
			char *out = xmalloc(65536);
			guest_output(port, p, (size_t)i, false, out);
			free(out);
		}
	}
	frame_send(port, VMX_MSG, 0, buf, (size_t)n);
	return 0;
}

void vmexec_guest_relay(int port, int executor)
{
	ignore_signals();
	struct pipes p = { 0 };
	char *buf = xmalloc(EXEC_MSG_MAX), *out = xmalloc(65536);
	struct pollfd *pf = NULL;
	for (bool done = false; !done;) {
		size_t n = p.n + 2;
		pf = xrealloc(pf, n * sizeof *pf);
		pf[0] = (struct pollfd){ .fd = port, .events = POLLIN };
		pf[1] = (struct pollfd){ .fd = executor, .events = POLLIN };
		for (size_t i = 0; i < p.n; i++)
			pf[i + 2] = (struct pollfd){ .fd = p.v[i].fd, .events = POLLIN };
		if (poll(pf, (nfds_t)n, -1) < 0)
			continue;
		/* the pipes first, from the last (closing one moves the last into its place) */
		for (size_t i = n - 2; i-- > 0;)
			if (pf[i + 2].revents)
				guest_output(port, &p, i, false, out);
		if (pf[1].revents && guest_from_executor(port, executor, &p, buf) < 0)
			done = true;
		if (pf[0].revents && guest_from_host(port, executor, &p, buf) < 0)
			done = true;
	}
	while (p.n)
		guest_output(port, &p, 0, true, out);
	free(pf);
	free(out);
	free(buf);
}
