/* SPDX-License-Identifier: Apache-2.0 */
/* guest.h - what the files of the vm driver's guest init share (src/guest/: init.c, main and
 * the job; boot.c, modules, network, ports and orders; root.c, the cell's root; policy.c,
 * masks and Landlock; watch.c, the job's cgroup and scratch; audit.c, the refused writes;
 * report.c, the report port and dying). The guest init is a program of its own (static, built
 * apart from warren: Makefile's warren-guest-init); nothing of warren includes this. */
#ifndef WARREN_GUEST_GUEST_H
#define WARREN_GUEST_GUEST_H

#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#define NINEP_OPTS "trans=virtio,version=9p2000.L,msize=262144"

/* ---- the orders (boot.c) ---- */

struct orders {
	char **argv, **env, **mask, **binds, **ll_rules, **ll_abis, **kmasks, **protect;
	size_t nargv, nenv, nmask, nbinds, nll_rules, nll_abis, nkmasks, nprotect;
	unsigned long long ll_file;         /* the rights a Landlock rule on a file may carry */
	bool ll_require;
	const char *cwd, *home, *worktree, *workdir, *image, *hostname;
	uid_t uid;
	gid_t gid;
	unsigned long long scratch, pids;
	bool core, work_ro, no_sys, executor, no_refused;
	mode_t umask;                       /* the job's (the caller's) */
	int tty;                            /* 1: stdin and stdout on VM_TTY_DEV, 2: stderr too */
	unsigned short rows, cols;          /* its size at the start */
};

/* The orders read from the run's share (VM_RUN_MNT); dies on a bad record. */
void read_orders(struct orders *o);

/* ---- boot.c ---- */

/* A small file's contents (heap, NUL-terminated; its length in *len_out), or NULL + errno. */
char *read_small(const char *path, size_t *len_out);
/* Load the modules the list file which names (VM_MOD_DIR), with their command-line parameters. */
void load_modules(const char *which);
/* The /dev node of the virtio-serial port named name, open with flags (waits up to 10 s). */
int open_port(const char *name, int flags);

/* The network: loopback, and with VM_CMDLINE_NET the NIC and resolv.conf */
struct guest_net {
	bool on;
	struct in_addr addr, mask, gw;
	char gw_text[INET_ADDRSTRLEN];
};

void net_orders(struct guest_net *n);
void net_up(const struct guest_net *n);
void net_resolv(const struct guest_net *n);

/* ---- root.c ---- */

void build_root(const struct orders *o);
void enter_root(void);

/* ---- policy.c ---- */

void mask_kernel_files(const struct orders *o);
void protect_worktree(const struct orders *o);
/* The job's Landlock ruleset, or -1 without one. */
int make_landlock(const struct orders *o);

/* ---- watch.c ---- */

/* Count the tmpfs at path as the scratch's (its use, a full scratch). */
void scratch_watch(const char *path);
void make_job_cgroup(const struct orders *o);
void enter_job_cgroup(void);
int pids_events_fd(void);
void report_pids(void);
void sample_pids(void);
void report_pids_peak(void);
bool report_scratch(bool only_full);
int watch_timer(void);
void report_oom_kills(void);

/* ---- audit.c ---- */

void audit_start(void);
int audit_socket(void);    /* -1 without audit */
void audit_read(const struct orders *o);
void report_refused(void);

/* ---- report.c ---- */

/* Where the report lines go from now on (the report port). */
void report_to(int fd);
void json_str(FILE *f, const char *s);
void write_line(const char *line);
void report(const char *error, int errnum, int status);
void power_off(void);
/* Report the failure ("what: strerror") with the exit code the run gets (125: the cell could
 * not be made) and power off; in the job's process, just end it. */
__attribute__((noreturn, format(printf, 3, 4))) void die_code(int code, int errnum, const char *fmt, ...);
#define die(errnum, ...) die_code(125, errnum, __VA_ARGS__)
void mount_or_die(const char *src, const char *dst, const char *type, unsigned long flags, const char *data);

#endif
