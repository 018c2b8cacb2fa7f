/* SPDX-License-Identifier: Apache-2.0 */
/* executor.h - warren's executor: the process that starts a job's steps and services inside
 * the cell, as the run user, on the supervisor's request over a unix socket; and the protocol
 * they speak. Messages are one SOCK_SEQPACKET datagram each: a header, then for EXEC_START the
 * strings cwd, argv[0..a), env[0..b) NUL-terminated, and two fds (stdout, stderr) or three
 * (stdout, stderr, stdin: a session's exec with its input; else stdin is /dev/null);
 * EXEC_START_CG the same and one fd more, last: the file whose write of "0" puts the task's
 * process in its exec's cgroup (cgroup/execgroup.h) before it executes.
 * EXEC_FILE (a session's files, cell/execfiles.c): the strings place and path below it, and one
 * fd, the supervisor's memfd the bytes pass in. */
#ifndef WARREN_CELL_EXECUTOR_H
#define WARREN_CELL_EXECUTOR_H

#include <stdint.h>
#include <sys/types.h>

#include "cell/spec.h"

enum exec_msg {
	EXEC_START = 1,   /* task, a = argc, b = envc; payload and 2 fds */
	EXEC_SIGNAL,      /* task, a = signal: to every process of the task's session */
	EXEC_PROBE_TCP,   /* task, a = port: can 127.0.0.1:port be connected to in the cell? */
	EXEC_FILE,        /* task, a = enum exec_file_op, b = EXEC_FILE_* flags | mode; place, path; memfd */
	EXEC_START_CG,    /* EXEC_START, and the exec's cgroup's file last (3 or 4 fds) */
	EXEC_STARTED = 100, /* task, a = pid in the cell */
	EXEC_FAILED,      /* task, a = errno (fork failed) */
	EXEC_EXITED,      /* task, a = wait status */
	EXEC_PROBED,      /* task, a = 1 when the port answered */
	EXEC_FILE_DONE,   /* task, a = 0 or the errno of the failure, b = EXEC_FILE_CUT when a list was cut */
};

/* A session's file operation, done as the run user inside the cell (cell/execfiles.c): the file
 * at path below place (a directory of the cell: the worktree, /tmp, the home; path relative to
 * it) read into the memfd, the memfd's bytes written to it (created or truncated), or the
 * directory listed into the memfd as exec_file_ent records. Only regular files are read or
 * written; symbolic links are followed only while they stay below place, and never at the end
 * of a write. */
enum exec_file_op { EXEC_FILE_READ = 1, EXEC_FILE_WRITE, EXEC_FILE_LIST };
#define EXEC_FILE_MODE_SET 0x10000   /* b: chmod the written file to b & 07777 */
#define EXEC_FILE_PARENTS  0x20000   /* b: make the missing directories above it */
#define EXEC_FILE_CUT      1         /* EXEC_FILE_DONE's b: the list holds EXEC_FILE_LIST_MAX entries, not all */
#define EXEC_FILE_MAX      (64 << 20)  /* bytes a read or a write may take */
#define EXEC_FILE_LIST_MAX 10000       /* entries a list holds */

/* One entry of a list, followed by its name (name_len bytes) and for a symbolic link its target
 * (target_len bytes). */
struct exec_file_ent {
	uint32_t mode;            /* st_mode (0: unknown, not stat-able by the run user) */
	uint32_t name_len, target_len, pad;
	int64_t size;
	int64_t mtime_s;
};

struct exec_hdr {
	uint32_t type;
	uint32_t task;
	int32_t a, b;
};

#define EXEC_MSG_MAX (256 * 1024)
#define EXEC_FDS_MAX 4   /* the fds of one message: stdout, stderr, stdin, the cgroup's file */

/* execve argv searching PATH of env (a file without "#!" run by /bin/sh, as execvp does);
 * returns the errno of the failure (ENOENT: not found). */
int exec_search(char **argv, char **env);
/* The PATH of env, or the cell's default. */
const char *exec_path_of(char **env);
/* Why argv could not be executed (err: exec_search's), one line without "warren: " (heap),
 * and the status a shell would end with in *status: 127 not found, 126 not executable. */
char *exec_failure(char **argv, char **env, int err, int *status);
/* Receive one message of the control socket ctl into buf (EXEC_MSG_MAX bytes), its fds (-1:
 * none) into fds in the order sent (stdout, stderr, stdin, cgroup: exec_start_fds); recvmsg's
 * result. */
ssize_t exec_msg_recv(int ctl, char *buf, int fds[EXEC_FDS_MAX]);
/* Of the fds of an EXEC_START or EXEC_START_CG h: the cgroup's file (the last; -1 when none)
 * moved out into *cg, the rest left as stdout, stderr and stdin (-1: /dev/null). */
void exec_start_fds(const struct exec_hdr *h, int fds[EXEC_FDS_MAX], int *cg);
/* Send the start of task on ctl: cwd, argv, env, nfds (2 or 3) fds as above, and cg (-1:
 * none; else an EXEC_START_CG). sendmsg's result (-1 with E2BIG when the message is over
 * EXEC_MSG_MAX). */
ssize_t exec_start_send(int ctl, uint32_t task, const char *cwd, char **argv, char **env, const int *fds, int nfds,
			int cg, int flags);
/* The strings of an EXEC_START (header h, payload of len bytes after it): cwd, argv and env
 * point into payload (argv and env are allocated, NULL-terminated); -EINVAL when malformed. */
int exec_start_parse(const struct exec_hdr *h, char *payload, size_t len, char **cwd, char ***argv, char ***env);
/* Enter cwd (when not empty) and execve argv searching PATH of env; on failure say why on
 * stderr ("warren: " and exec_failure's line) and exit 127 (not found), 126 (not
 * executable) or 125 (no such cwd), as a shell would. A task's process, after its streams. */
void executor_exec(const char *cwd, char **argv, char **env) __attribute__((noreturn));
/* EXEC_FILE (header h, payload of len bytes after it, memfd mem): done in a child of the
 * executor, which sends EXEC_FILE_DONE on ctl (a slow file system holds that child, never the
 * executor). */
void executor_file(int ctl, const struct exec_hdr *h, const char *payload, size_t len, int mem);
/* Run the executor on control socket ctl; never returns. */
void executor_main(const struct cell_spec *s, int ctl) __attribute__((noreturn));

#endif
