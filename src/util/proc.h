/* SPDX-License-Identifier: Apache-2.0 */
/* proc.h - the process itself: its standard descriptors and arguments at its start, and what
 * a process warren starts for a run must not inherit from warren's caller; another's parent. */
#ifndef WARREN_UTIL_PROC_H
#define WARREN_UTIL_PROC_H

#include <stdbool.h>
#include <sys/types.h>

/* The process's arguments as the kernel laid them out (main's argv, at its start); wiped
 * later for title alone: /proc/PID/cmdline is readable by every process that sees the pid
 * (the cell's init is pid 1 of the job's /proc, and warren's command line names host paths). */
void proc_args_save(int argc, char **argv);
void proc_args_wipe(const char *title);

/* What a process warren starts for a run (the job, qemu, pasta) must not inherit from warren's
 * caller: a real-time scheduling policy (at SCHED_FIFO an untrusted job, or a guest's vCPU,
 * can hold a CPU of the host), a nice below 0, and the personality flags that weaken its
 * memory layout (setarch -R: no ASLR; READ_IMPLIES_EXEC: every readable mapping executable).
 * Each only lowers what the process has: no capability needed. A nice of 0 or more stays, and
 * so does the personality itself (linux32). NULL, or what could not be left (errno set). */
const char *proc_reset_inherited(void);

/* At a program's start: each of descriptors 0-2 the caller left closed opened on /dev/null
 * (else the first file opened takes its number, and what reads or writes it gets that file);
 * false when /dev/null cannot be opened. */
bool std_fds_open(void);
/* Is fd one of 0-2 that the caller had left closed (std_fds_open: /dev/null now)? */
bool std_fd_was_closed(int fd);

/* The parent of pid as /proc/PID/stat says (in the pid namespace of the /proc mounted), or -1. */
pid_t proc_parent(pid_t pid);

#endif
