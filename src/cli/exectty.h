/* SPDX-License-Identifier: Apache-2.0 */
/* exectty.h - warren exec -t: the command's terminal (a master passed by the session) relayed
 * to and from the caller's terminal (cli/exectty.c). */
#ifndef WARREN_CLI_EXECTTY_H
#define WARREN_CLI_EXECTTY_H

#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <termios.h>

struct exec_tty {
	int master, sfd;          /* the command's terminal; SIGWINCH's signalfd */
	struct termios saved;     /* the caller's terminal as it was */
	sigset_t mask;            /* the signal mask before (SIGWINCH, SIGHUP, SIGINT, SIGTERM blocked meanwhile) */
	bool raw, master_gone, in_gone;
	char in[4096];            /* typed, not yet taken by the command's terminal */
	size_t in_off, in_len;
};

/* Take master (the relay closes it): the caller's terminal made raw, its size given. */
void exec_tty_start(struct exec_tty *t, int master);
/* Relay both ways (and the size on SIGWINCH) until sock has something to read. */
void exec_tty_relay(struct exec_tty *t, int sock);
/* The command's last output relayed, the caller's terminal as it was. */
void exec_tty_end(struct exec_tty *t);

#endif
