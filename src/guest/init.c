/* SPDX-License-Identifier: Apache-2.0 */
/* init.c - pid 1 of the vm driver's guest (a static program in the initramfs warren builds;
 * see cell/vm/vm.c). It loads the modules listed in the initramfs, mounts the run's orders (a 9p
 * share of <rundir>/vm), builds the cell's root from the host's / (9p, read-only, as the
 * container driver's host-root cells see it) or an image (the lower layer of an overlay in
 * the VM's memory) with its own /proc, /sys, /dev, /tmp and /var/tmp (tmpfs 01777), a home,
 * the run user's passwd, the worktree and the binds (9p shares), masks the kernel's files the
 * host names and makes the Landlock ruleset from the host's rules, runs the job as the run
 * user with TMPDIR=/tmp last, forwards the signals the host sends on the control port,
 * records the writes its kernel refused (the audit of write-side calls), the job's peak of
 * processes and the scratch's use (a full scratch at once), reports them and how the job ended
 * as JSON lines on the report port and powers the VM off. Every
 * mode, path and name of the contract comes from cell/contract.h.
 *
 * A job's steps and services: the job is warren's executor (cell/executor.c), whose socket a
 * relay of this init carries over a port (cell/vm/vmexec.c). On a terminal, the job's is the
 * guest's second console (VM_TTY_DEV), sized from the control port.
 *
 * It uses the C library (it is linked statically) and of warren's code only the executor, its
 * relay and util/error.c. This file holds its main and the job; the boot is in boot.c, the
 * root in root.c, the masks and Landlock in policy.c, what it watches in watch.c and audit.c,
 * the report in report.c (guest.h). */
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cell/executor.h"
#include "cell/vmexec.h"
#include "util/sys.h"

#include "guest.h"

/* ---- the job ---- */

/* The job's seccomp program, read from the orders (NULL: the host compiled none). */
static struct sock_fprog *read_seccomp(void)
{
	size_t len;
	char *b = read_small(VM_RUN_MNT "/" VM_SECCOMP_FILE, &len);
	if (!b)
		return NULL;
	if (len == 0 || len % sizeof(struct sock_filter) || len / sizeof(struct sock_filter) > 65535)
		die(EINVAL, "bad seccomp program %s (%zu bytes)", VM_SECCOMP_FILE, len);
	struct sock_fprog *prog = malloc(sizeof *prog);
	if (!prog)
		die(ENOMEM, "out of memory");
	*prog = (struct sock_fprog){ .len = (unsigned short)(len / sizeof(struct sock_filter)), .filter = (struct sock_filter *)b };
	return prog;
}

/* A job's executor (its relay's pid and socket), and the job's terminal as init holds it (to
 * size it): -1 when none. */
static pid_t relay_pid = -1;
static int job_tty = -1;

/* The job's streams in a session of its own: /dev/null and the stdout and stderr ports, or on
 * a terminal VM_TTY_DEV (its controlling terminal) for those that are the terminal. */
static void job_streams(const struct orders *o, int out, int err)
{
	setsid();
	int in = o->tty ? open(VM_TTY_DEV, O_RDWR) : open("/dev/null", O_RDONLY);
	if (in < 0 || (o->tty && ioctl(in, TIOCSCTTY, 0) < 0))
		die(errno, "cannot open the job's %s", o->tty ? "terminal " VM_TTY_DEV : "stdin /dev/null");
	if (dup2(in, 0) < 0 || dup2(o->tty ? in : out, 1) < 0 || dup2(o->tty == 2 ? in : err, 2) < 0)
		die(errno, "cannot give the job its streams");
	if (in > 2)
		close(in);
}

/* In the job's process: become the run user without a way back, then execute the job (or be
 * the executor of a job's steps on the socket executor). */
static void exec_job(const struct orders *o, const struct sock_fprog *seccomp, int landlock, int out, int err, int executor)
{
	job_streams(o, out, err);
	enter_job_cgroup();
	struct rlimit core = { 0, 0 };
	if (!o->core)
		setrlimit(RLIMIT_CORE, &core);
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	if (setgroups(0, NULL) < 0 || setresgid(o->gid, o->gid, o->gid) < 0 || setresuid(o->uid, o->uid, o->uid) < 0)
		die(errno, "cannot become the run user %u:%u", o->uid, o->gid);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die(errno, "cannot set no_new_privs");
	if (chdir(o->cwd) < 0 && o->workdir)
		die(errno, "--workdir %s: cannot enter it in the cell (it must exist there: a directory of the image, the host's /, the worktree or a bind)",
		    o->workdir);
	if (chdir(o->cwd) < 0)
		die(errno, "cannot enter the working directory %s in the cell", o->cwd);
	umask(o->umask);
	environ = o->env;
	if (landlock >= 0 && sys_landlock_restrict_self(landlock, 0) < 0)
		die(errno, "cannot enter the Landlock domain");
	if (seccomp && sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, (void *)seccomp) < 0)
		die(errno, "cannot load the seccomp program");
	/* init's descriptors are all close-on-exec: the executor's tasks get none of them */
	if (executor >= 0)
		executor_main(NULL, executor);
	execvp(o->argv[0], o->argv);
	if (errno == ENOENT || errno == ENOTDIR)
		die_code(127, 0, "command not found in the cell: %s (PATH=%s); install it in the image or give its full path",
			 o->argv[0], getenv("PATH") ? getenv("PATH") : CELL_PATH_ENV);
	die_code(126, errno, "cannot execute %s in the cell", o->argv[0]);
}

/* VM_CTL_WINSIZE's rows and columns from the control port, set on the job's terminal (the
 * kernel tells its foreground process group: SIGWINCH). */
static void set_winsize(int ctl)
{
	unsigned char b[4];
	size_t got = 0;
	for (struct pollfd p = { .fd = ctl, .events = POLLIN }; got < sizeof b && poll(&p, 1, 1000) == 1;) {
		ssize_t n = read(ctl, b + got, sizeof b - got);
		if (n <= 0)
			return;
		got += (size_t)n;
	}
	struct winsize ws = { .ws_row = (unsigned short)(b[0] | b[1] << 8), .ws_col = (unsigned short)(b[2] | b[3] << 8) };
	if (got == sizeof b && job_tty >= 0)
		ioctl(job_tty, TIOCSWINSZ, &ws);
}

/* Wait for the job, reaping what else ends; forward the host's signals (one byte each on the
 * control port) to the job's process group (a job's executor: every process, as a container's
 * init does; its steps have sessions of their own). Its wait status. */
static int wait_job(const struct orders *o, pid_t job, int ctl, bool watch_scratch)
{
	int tfd = watch_timer();
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	for (;;) {
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			relay_pid = p == relay_pid ? -1 : relay_pid;
			if (p == job)
				return st;
		}
		struct pollfd pf[5] = { { .fd = sfd, .events = POLLIN }, { .fd = ctl, .events = POLLIN },
					{ .fd = pids_events_fd(), .events = POLLPRI }, { .fd = tfd, .events = POLLIN },
					{ .fd = audit_socket(), .events = POLLIN } };
		if (poll(pf, 5, -1) < 0 && errno != EINTR)
			die(errno, "cannot wait for the job");
		if (pf[2].revents)
			report_pids();
		uint64_t ticks;
		sample_pids();
		if (pf[4].revents & POLLIN)
			audit_read(o);
		if ((pf[3].revents & POLLIN) && read(tfd, &ticks, sizeof ticks) > 0 && watch_scratch && report_scratch(true))
			watch_scratch = false; /* said once, as a container's init does */
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof si) > 0)
			;
		unsigned char sig = 0;
		if ((pf[1].revents & POLLIN) && read(ctl, &sig, 1) == 1 && sig == VM_CTL_WINSIZE)
			set_winsize(ctl);
		else if ((pf[1].revents & POLLIN) && sig > 0 && sig < NSIG && relay_pid > 0)
			kill(-1, sig); /* the relay ignores it */
		else if ((pf[1].revents & POLLIN) && sig > 0 && sig < NSIG)
			kill(-job, sig) < 0 ? kill(job, sig) : 0;
		if (pf[1].revents & (POLLHUP | POLLERR))
			pf[1].fd = -1, ctl = -1;
	}
}

/* The job's terminal, VM_TTY_DEV, held by init (to size it: never its controlling terminal);
 * it appears with the console's port, waiting up to 10 s. */
static int open_tty(void)
{
	for (int tries = 0; tries < 1000; tries++) {
		int fd = open(VM_TTY_DEV, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	die(errno, "no terminal %s for the job", VM_TTY_DEV);
}

/* A job's executor: the relay of its socket over port (a child of init, which ends when the
 * executor does). The executor's end of the socket, or -1 without a port. */
static int start_relay(int port)
{
	int sp[2];
	if (port < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0 || (relay_pid = fork()) < 0)
		die(errno, "cannot start the relay of the job's executor");
	if (relay_pid == 0) {
		close(sp[1]);
		vmexec_guest_relay(port, sp[0]);
		_exit(0);
	}
	close(sp[0]);
	close(port);
	return sp[1];
}

/* The guest's first steps: SIGCHLD blocked (wait_job reads it), /proc, /sys and /dev, the
 * kernel command line's power-off, 0-2 taken, the modules, the console as stderr. */
static void boot(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, mask, NULL);
	umask(022);
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/dev", 0755);
	mount_or_die("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_or_die("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_or_die("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
	char *cmdline = read_small("/proc/cmdline", NULL);
	if (cmdline && strstr(cmdline, VM_CMDLINE_POWEROFF))
		power_off();
	free(cmdline);
	/* 0-2 are taken before anything is opened: the console appears with its module */
	for (int fd = open("/dev/null", O_RDWR); fd >= 0 && fd < 2; fd = dup(fd))
		;
	load_modules(VM_MOD_LIST);
	int console = open("/dev/hvc0", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (console >= 0)
		dup2(console, STDERR_FILENO);
}

/* The job's terminal, sized as the orders say, when it has one (job_tty). */
static void open_job_tty(const struct orders *o)
{
	job_tty = o->tty ? open_tty() : -1;
	struct winsize ws = { .ws_row = o->rows, .ws_col = o->cols };
	if (job_tty >= 0 && o->rows && o->cols)
		ioctl(job_tty, TIOCSWINSZ, &ws);
}

/* The cell: the job's cgroup, the network, the root (entered), the hostname, the masks; the
 * job's Landlock ruleset returned (-1: none). */
static int make_cell(const struct orders *o)
{
	make_job_cgroup(o);
	struct guest_net net;
	net_orders(&net);
	net_up(&net);
	build_root(o);
	umount2(VM_RUN_MNT, MNT_DETACH);
	umount2(VM_LOWER_MNT, MNT_DETACH); /* the overlay holds what it needs of it */
	if (o->hostname && sethostname(o->hostname, strlen(o->hostname)) < 0)
		die(errno, "cannot set the hostname %s", o->hostname);
	enter_root();
	net_resolv(&net);
	mask_kernel_files(o);
	protect_worktree(o);
	return make_landlock(o);
}

/* The job ended with wait status st: what the host is told then, its end last. */
static void report_end(const struct orders *o, int st)
{
	if (relay_pid > 0) /* the executor's last words and its tasks' output go first */
		waitpid(relay_pid, NULL, 0);
	audit_read(o);
	report_refused();
	report_pids();
	report_pids_peak();
	report_scratch(false);
	report_oom_kills();
	report(NULL, 0, st);
}

int main(void)
{
	sigset_t mask;
	boot(&mask);
	report_to(open_port(VM_PORT_REPORT, O_WRONLY));
	int out = open_port(VM_PORT_STDOUT, O_WRONLY);
	int err = open_port(VM_PORT_STDERR, O_WRONLY);
	int ctl = open_port(VM_PORT_CTL, O_RDONLY | O_NONBLOCK);
	mkdir(VM_RUN_MNT, 0755);
	mkdir(VM_NEWROOT, 0755);
	mount_or_die(VM_TAG_RUN, VM_RUN_MNT, "9p", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NINEP_OPTS);
	struct orders o;
	read_orders(&o);
	int execport = o.executor ? open_port(VM_PORT_EXEC, O_RDWR) : -1;
	open_job_tty(&o);
	struct sock_fprog *seccomp = read_seccomp();
	int landlock = make_cell(&o);
	int executor = start_relay(execport);
	if (!o.no_refused)
		audit_start();
	pid_t job = fork();
	if (job < 0)
		die(errno, "cannot start the job");
	if (job == 0) {
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
		exec_job(&o, seccomp, landlock, out, err, executor);
	}
	close(out);
	close(err);
	if (executor >= 0)
		close(executor);
	write_line("{\"" VM_REPORT_STARTED "\":true}\n");
	report_end(&o, wait_job(&o, job, ctl, o.scratch > 0));
	power_off();
}
