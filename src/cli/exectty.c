/* SPDX-License-Identifier: Apache-2.0 */
/* exectty.c - warren exec -t's side of the command's terminal (cli/exectty.h): a terminal of
 * the cell's, whose master the session passed over its socket, relayed here to and from the
 * caller's terminal, made raw meanwhile (as supervise/relay.c does for warren run); its size
 * given at the start and on SIGWINCH. Input waits in a buffer while the command does not read
 * it: its output is relayed all the same. SIGHUP, SIGINT and SIGTERM (those not ignored) are
 * taken through the same signalfd meanwhile: the caller's terminal is restored, then warren
 * exec ends by the signal, as it would have (its closed connection hangs the command up). */
#include "cli/exectty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fs.h"

static void give_size(struct exec_tty *t)
{
	struct winsize ws;
	if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
		ioctl(t->master, TIOCSWINSZ, &ws);
}

static const int ENDING[] = { SIGHUP, SIGINT, SIGTERM };

void exec_tty_start(struct exec_tty *t, int master)
{
	*t = (struct exec_tty){ .master = master, .sfd = -1 };
	fcntl(master, F_SETFL, O_NONBLOCK);
	give_size(t);
	/* (blocked before the terminal is made raw: none ends warren exec while it is) */
	sigset_t w;
	sigemptyset(&w);
	sigaddset(&w, SIGWINCH);
	for (size_t i = 0; i < sizeof ENDING / sizeof ENDING[0]; i++) {
		struct sigaction sa;
		if (sigaction(ENDING[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			sigaddset(&w, ENDING[i]);
	}
	sigprocmask(SIG_BLOCK, &w, &t->mask);
	t->sfd = signalfd(-1, &w, SFD_NONBLOCK | SFD_CLOEXEC);
	if (tcgetattr(STDIN_FILENO, &t->saved) == 0) {
		struct termios raw = t->saved;
		tcsetattr(master, TCSANOW, &t->saved);  /* the command's starts with the caller's settings */
		cfmakeraw(&raw);
		t->raw = tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0;
	}
}

/* Signal sig, which ends warren exec, came: the caller's terminal as it was, then the signal's
 * own end (its default action). */
static _Noreturn void end_by(struct exec_tty *t, int sig)
{
	if (t->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);  /* (not DRAIN: a terminal hung up may never drain) */
	signal(sig, SIG_DFL);
	raise(sig);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	_exit(128 + sig);
}

/* What the command wrote, to stdout; false once its terminal has no writer left (EIO). */
static bool from_master(struct exec_tty *t)
{
	char buf[65536];
	for (int i = 0; i < 16; i++) {
		ssize_t n = read(t->master, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0)
			return false;
		if (write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
			return false;
	}
	return true;
}

/* What the caller typed and the command's terminal takes now; the rest waits in t->in. */
static void to_master(struct exec_tty *t)
{
	while (t->in_len) {
		ssize_t w = write(t->master, t->in + t->in_off, t->in_len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN)
			return;
		if (w <= 0) {
			t->in_len = 0;  /* its terminal is gone: no more input */
			t->in_gone = true;
			return;
		}
		t->in_off += (size_t)w;
		t->in_len -= (size_t)w;
	}
}

void exec_tty_relay(struct exec_tty *t, int sock)
{
	for (;;) {
		struct pollfd p[4] = {
			{ .fd = t->in_len || t->in_gone ? -1 : STDIN_FILENO, .events = POLLIN },
			{ .fd = t->master_gone ? -1 : t->master, .events = POLLIN | (t->in_len ? POLLOUT : 0) },
			{ .fd = sock, .events = POLLIN },
			{ .fd = t->sfd, .events = POLLIN },
		};
		if (poll(p, 4, -1) < 0)
			continue;
		if (p[3].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(t->sfd, &si, sizeof si) == (ssize_t)sizeof si)
				if (si.ssi_signo != SIGWINCH)
					end_by(t, (int)si.ssi_signo);
			give_size(t);
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
			t->master_gone = !from_master(t);
		if (p[1].revents & POLLOUT)
			to_master(t);
		if (p[0].revents & (POLLIN | POLLHUP)) {
			ssize_t n = read(STDIN_FILENO, t->in, sizeof t->in);
			if (n <= 0 && !(n < 0 && errno == EINTR))
				t->in_gone = true;
			t->in_off = 0;
			t->in_len = n > 0 ? (size_t)n : 0;
			to_master(t);
		}
		if (p[2].revents)
			return;  /* the session says something: the caller reads it */
	}
}

void exec_tty_end(struct exec_tty *t)
{
	/* what the command wrote before it ended */
	while (!t->master_gone && fd_queued(t->master) && from_master(t))
		;
	if (t->raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &t->saved);
	t->raw = false;
	closep(&t->master);
	closep(&t->sfd);
	sigprocmask(SIG_SETMASK, &t->mask, NULL);  /* (one that came meanwhile ends it now, its terminal restored) */
}
