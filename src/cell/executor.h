/* SPDX-License-Identifier: Apache-2.0 */
/* executor.h - warren's executor: the process that starts a job's steps and services inside
 * the cell, as the run user, on the supervisor's request over a unix socket; and the protocol
 * they speak. Messages are one SOCK_SEQPACKET datagram each: a header, then for EXEC_START the
 * strings cwd, argv[0..a), env[0..b) NUL-terminated, and two fds (stdout, stderr) or three
 * (stdout, stderr, stdin: a session's exec with its input; else stdin is /dev/null). */
#ifndef WARREN_CELL_EXECUTOR_H
#define WARREN_CELL_EXECUTOR_H

#include <stdint.h>
#include <sys/types.h>

#include "cell/spec.h"

enum exec_msg {
	EXEC_START = 1,   /* task, a = argc, b = envc; payload and 2 fds */
	EXEC_SIGNAL,      /* task, a = signal: to every process of the task's session */
	EXEC_PROBE_TCP,   /* task, a = port: can 127.0.0.1:port be connected to in the cell? */
	EXEC_STARTED = 100, /* task, a = pid in the cell */
	EXEC_FAILED,      /* task, a = errno (fork failed) */
	EXEC_EXITED,      /* task, a = wait status */
	EXEC_PROBED,      /* task, a = 1 when the port answered */
};

struct exec_hdr {
	uint32_t type;
	uint32_t task;
	int32_t a, b;
};

#define EXEC_MSG_MAX (256 * 1024)

/* execve argv searching PATH of env (a file without "#!" run by /bin/sh, as execvp does);
 * returns the errno of the failure (ENOENT: not found). */
int exec_search(char **argv, char **env);
/* The PATH of env, or the cell's default. */
const char *exec_path_of(char **env);
/* Why argv could not be executed (err: exec_search's), one line without "warren: " (heap),
 * and the status a shell would end with in *status: 127 not found, 126 not executable. */
char *exec_failure(char **argv, char **env, int err, int *status);
/* Receive one message of the control socket ctl into buf (EXEC_MSG_MAX bytes), its fds (-1:
 * none) into fds (stdout, stderr, stdin); recvmsg's result. */
ssize_t exec_msg_recv(int ctl, char *buf, int fds[3]);
/* Send the EXEC_START of task on ctl: cwd, argv, env, and nfds (2 or 3) fds as above. sendmsg's
 * result (-1 with E2BIG when the message is over EXEC_MSG_MAX). */
ssize_t exec_start_send(int ctl, uint32_t task, const char *cwd, char **argv, char **env, const int *fds, int nfds,
			int flags);
/* The strings of an EXEC_START (header h, payload of len bytes after it): cwd, argv and env
 * point into payload (argv and env are allocated, NULL-terminated); -EINVAL when malformed. */
int exec_start_parse(const struct exec_hdr *h, char *payload, size_t len, char **cwd, char ***argv, char ***env);
/* Enter cwd (when not empty) and execve argv searching PATH of env; on failure say why on
 * stderr ("warren: " and exec_failure's line) and exit 127 (not found), 126 (not
 * executable) or 125 (no such cwd), as a shell would. A task's process, after its streams. */
void executor_exec(const char *cwd, char **argv, char **env) __attribute__((noreturn));
/* Run the executor on control socket ctl; never returns. */
void executor_main(const struct cell_spec *s, int ctl) __attribute__((noreturn));

#endif
