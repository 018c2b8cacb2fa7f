/* SPDX-License-Identifier: Apache-2.0 */
/* vm.c - the vm driver on the host: the guest's orders in <rundir>/vm, qemu started (held
 * before it executes until the supervisor has placed it in the run's cgroup), dying with
 * warren (parent-death signal), the job's signals sent over the control port, and the guest's
 * JSON report turned into the container driver's struct cell_report. See cell/vm.h, vmimage.c for
 * the kernel and initramfs, guest/init.c for the other side. */
#include "cell/vm.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "cell/contract.h"
#include "cell/hostroot.h"
#include "cell/users.h"
#include "cell/vmexec.h"
#include "net/net.h"
#include "policy/policy.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/words.h"
#include "util/sys.h"
#include "util/strv.h"

/* "none" as struct limits says it (run/limits.h: LIMIT_NONE) */
#define VM_LIMIT_NONE UINT64_MAX

struct vm_state {
	int ctl_fd;          /* host end of the control port */
	char *line;          /* the report port's bytes not yet a whole line */
	size_t len;
	const char *accel;
	unsigned long long memory;
	struct vm_kernel k;
	pid_t keepers[2];    /* the console's and qemu.log's keepers (vmjail.c), until reaped */
	bool tty;            /* the job's terminal is the guest's VM_TTY_DEV (a virtconsole) */
	int tty_fd;          /* the host's end of it, until the supervisor takes it (vm_take_tty) */
	/* root mode: the userns of the idmap that shows the worktree's (0) and each bind's (1 + i)
	 * owner as the run user's host ids to qemu (vm_prepare; -1: none), until qemu has them */
	int idmap[1 + VM_MAX_BINDS];
};

/* The fds qemu gets (its chardevs, shares, kernel and NIC name them by number): it runs in a
 * view without the state directory (vmjail.c), so what it needs from there comes open. The
 * sources of the binds follow, QFD_END + i for s->mounts[i]. */
enum { QFD_OUT = 3, QFD_ERR, QFD_REPORT, QFD_CTL, QFD_WORK, QFD_GO, QFD_KERNEL, QFD_INITRD, QFD_ORDERS, QFD_CON, QFD_TAP,
       QFD_LOG, QFD_ROOT, QFD_EXEC, QFD_TTY, QFD_END };

/* The descriptors of one qemu, in QFD_* order from QFD_OUT; -1 where there is none. */
struct qemu_fds {
	int fd[QFD_END - QFD_OUT];
};

/* ---- argv ---- */

struct strv {
	char **v;
	size_t n;
};

static void add(struct strv *a, char *s)
{
	a->v = xrealloc(a->v, (a->n + 2) * sizeof *a->v);
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

/* A path inside a qemu option value: commas doubled. */
static char *qesc(const char *s)
{
	char *o = xcalloc(2, strlen(s) + 1), *p = o;
	for (; *s; s++)
		if ((*p++ = *s) == ',')
			*p++ = ',';
	return o;
}

/* The host's TSC rate in kHz for a TCG guest, which cannot measure it against a timer it does
 * not have (the host's "cpu MHz"); 0 when unknown. */
static unsigned long tsc_khz(void)
{
	_cleanup_free_ char *info = read_file("/proc/cpuinfo", NULL);
	char *m = info ? strstr(info, "cpu MHz") : NULL;
	m = m ? strchr(m, ':') : NULL;
	return m ? (unsigned long)(strtod(m + 1, NULL) * 1000) : 0;
}

static char **qemu_base_argv(const char *vmlinux, const char *initramfs, const char *accel, unsigned long long memory,
			     const char *extra)
{
	struct strv a = { 0 };
	bool kvm = !strcmp(accel, "kvm");
	/* from the system's directories, never the caller's $PATH (util/fs.h) */
	char *qemu = host_tool_find(VM_QEMU);
	add(&a, qemu ? qemu : xstrdup(VM_QEMU));
	add(&a, xstrdup("-M"));
	/* TCG has no kvmclock: the RTC (and the TSC rate on the command line) keep its time */
	add(&a, xstrdup("microvm,x-option-roms=off,isa-serial=off,pit=off,pic=off,rtc=on"));
	add(&a, xstrdup("-accel"));
	add(&a, xstrdup(accel));
	if (kvm) {
		add(&a, xstrdup("-cpu"));
		add(&a, xstrdup("host"));
	}
	/* qemu's own seccomp sandbox: a guest that breaks into qemu cannot execute, fork, raise
	 * its privileges or change its scheduling or resource limits */
	static const char *const fixed[] = { "-no-reboot", "-nodefaults", "-no-user-config", "-nographic", "-smp", "1",
					     "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny" };
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		add(&a, xstrdup(fixed[i]));
	add(&a, xstrdup("-m"));
	add(&a, xasprintf("%lluM", memory >> 20));
	add(&a, xstrdup("-kernel"));
	add(&a, xstrdup(vmlinux));
	add(&a, xstrdup("-initrd"));
	add(&a, xstrdup(initramfs));
	unsigned long khz = kvm ? 0 : tsc_khz();
	_cleanup_free_ char *tsc = khz ? xasprintf(" tsc_early_khz=%lu tsc=reliable", khz) : xstrdup("");
	add(&a, xstrdup("-append"));
	add(&a, xasprintf("console=hvc0 quiet panic=-1%s%s%s", tsc, extra ? " " : "", extra ? extra : ""));
	return a.v;
}

static void add_port(struct strv *a, const char *id, char *chardev, const char *name)
{
	add(a, xstrdup("-chardev"));
	add(a, chardev);
	add(a, xstrdup("-device"));
	add(a, xasprintf("%s,chardev=%s%s%s", name ? "virtserialport" : "virtconsole", id, name ? ",name=" : "", name ? name : ""));
}

static void add_share(struct strv *a, const char *id, const char *path, const char *opts, const char *tag)
{
	_cleanup_free_ char *p = qesc(path);
	add(a, xstrdup("-fsdev"));
	add(a, xasprintf("local,id=%s,path=%s,%s", id, p, opts));
	add(a, xstrdup("-device"));
	add(a, xasprintf("virtio-9p-device,fsdev=%s,mount_tag=%s", id, tag));
}

/* A share of the directory open as fd number qfd in qemu, read-only in qemu itself when ro (the
 * host refuses writes whatever the guest kernel does). qemu runs as the run user's host ids
 * (vmjail.c): the files it makes are theirs (security_model=none), which the idmapped copy of
 * a worktree or bind shows as its owner's on the host. */
static void add_fd_share(struct strv *a, const char *id, int qfd, bool ro, const char *tag)
{
	_cleanup_free_ char *path = xasprintf("/proc/self/fd/%d", qfd);
	add_share(a, id, path, ro ? "security_model=none,multidevs=remap,readonly=on" : "security_model=none,multidevs=remap", tag);
}

/* The guest's NIC: a virtio-net device on the tap (a MAC made of the guest's address), or
 * rootless on a stream socket to passt (net/pasta.c), and the address plan on the kernel
 * command line for the guest init. */
static char *add_nic(struct strv *a, const struct cell_spec *s, const struct cell_io *io)
{
	if (io->tap < 0)
		return NULL;
	char addr[INET_ADDRSTRLEN], gw[INET_ADDRSTRLEN], mac[18];
	net_guest_mac(io->addr, mac);
	inet_ntop(AF_INET, &io->addr, addr, sizeof addr);
	inet_ntop(AF_INET, &io->gw, gw, sizeof gw);
	add(a, xstrdup("-netdev"));
	add(a, s->rootless ? xasprintf("stream,id=n0,addr.type=fd,addr.str=%d", QFD_TAP) : xasprintf("tap,id=n0,fd=%d", QFD_TAP));
	add(a, xstrdup("-device"));
	add(a, xasprintf("virtio-net-device,netdev=n0,mac=%s", mac));
	return xasprintf(VM_CMDLINE_NET "%s/%d,%s", addr, io->prefix, gw);
}

static char *fd_path(int fd)
{
	return xasprintf("/proc/self/fd/%d", fd);
}

static char **qemu_argv(const struct cell_spec *s, const struct cell_io *io, const struct vm_state *v)
{
	struct strv a = { 0 }, nic = { 0 };
	_cleanup_free_ char *net = add_nic(&nic, s, io);
	_cleanup_free_ char *kernel = fd_path(QFD_KERNEL), *initrd = fd_path(QFD_INITRD);
	char **base = qemu_base_argv(kernel, initrd, v->accel, v->memory, net);
	for (size_t i = 0; base[i]; i++)
		add(&a, base[i]);
	free(base);
	for (size_t i = 0; i < nic.n; i++)
		add(&a, nic.v[i]);
	free(nic.v);
	/* its name is the run directory: ps (and the tests) tell which run a qemu is */
	add(&a, xstrdup("-name"));
	add(&a, qesc(s->rundir));
	add(&a, xstrdup("-device"));
	add(&a, xstrdup("virtio-serial-device,max_ports=8"));
	add_port(&a, "con", xasprintf("file,id=con,path=/dev/fd/%d", QFD_CON), NULL);
	/* on a terminal, the streams that are the terminal go through the tty port */
	add_port(&a, "out", v->tty ? xstrdup("null,id=out") : xasprintf("file,id=out,path=/dev/fd/%d", QFD_OUT), VM_PORT_STDOUT);
	add_port(&a, "err", io->err < 0 ? xstrdup("null,id=err") : xasprintf("file,id=err,path=/dev/fd/%d", QFD_ERR),
		 VM_PORT_STDERR);
	add_port(&a, "rep", xasprintf("socket,id=rep,fd=%d", QFD_REPORT), VM_PORT_REPORT);
	add_port(&a, "ctl", xasprintf("socket,id=ctl,fd=%d", QFD_CTL), VM_PORT_CTL);
	if (io->control >= 0) /* a job: its executor's frames (vmexec.h) */
		add_port(&a, "exec", xasprintf("socket,id=exec,fd=%d", QFD_EXEC), VM_PORT_EXEC);
	if (v->tty) /* the job's terminal: the guest's second console, VM_TTY_DEV */
		add_port(&a, "tty", xasprintf("socket,id=tty,fd=%d", QFD_TTY), NULL);
	/* the root (a copy of the host's / as qemu's view shows it, or of the image), the worktree
	 * and the binds' sources: private copies, made from the descriptors opened and checked
	 * once (spec.h), without the kernel's file systems; vm_jail puts each at its descriptor */
	_cleanup_free_ char *orders = fd_path(QFD_ORDERS);
	add_fd_share(&a, "root", QFD_ROOT, true, VM_TAG_ROOT);
	if (s->worktree)
		add_fd_share(&a, "work", QFD_WORK, s->worktree_ro, VM_TAG_WORK);
	for (size_t i = 0; i < s->n_mounts; i++) {
		_cleanup_free_ char *id = xasprintf("bind%zu", i), *tag = xasprintf(VM_TAG_BIND "%zu", i);
		add_fd_share(&a, id, QFD_END + (int)i, s->mounts[i].readonly, tag);
	}
	add_share(&a, "run", orders, "security_model=none,readonly=on", VM_TAG_RUN);
	return a.v;
}

/* ---- the orders ---- */

static void rec(FILE *f, const char *key, const char *val)
{
	fprintf(f, "%s=%s", key, val);
	fputc('\0', f);
}

static int rec_rule(void *f, const char *path, uint64_t access)
{
	fprintf(f, VM_KEY_LANDLOCK "=%llx %s", (unsigned long long)access, path);
	fputc('\0', f);
	return 0;
}

static int rec_kmask(void *f, const char *path, char kind)
{
	fprintf(f, VM_KEY_KMASK "=%c %s", kind, path);
	fputc('\0', f);
	return 0;
}

static int rec_protect(void *f, const char *rel, bool leaf)
{
	fprintf(f, VM_KEY_PROTECT "=%c /%s", leaf ? 'l' : 'p', rel);
	fputc('\0', f);
	return 0;
}

/* The worktree's protected paths, resolved here in the host's tree (the worktree is the
 * same there and in the guest), as the container's init resolves them in the cell's. */
static void write_protected(FILE *f, const struct cell_spec *s)
{
	_cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct policy_ctx pc = spec_policy_ctx(s);
	if (rootfd >= 0)
		policy_protected_paths(&pc, rootfd, "", rec_protect, f);
}

/* The job's Landlock rules (the container's list, policy/landlock.c) and, for each ABI the
 * guest's kernel may have, what its ruleset handles: the guest init makes the ruleset. */
static void write_landlock(FILE *f, const struct cell_spec *s)
{
	struct policy_ctx pc = spec_policy_ctx(s);
	landlock_rules(&pc, rec_rule, f);
	for (int abi = 1; abi <= LANDLOCK_ABI_KNOWN; abi++) {
		fprintf(f, VM_KEY_LANDLOCK_ABI "=%d %llx %llx %llx", abi, (unsigned long long)landlock_fs_handled(abi),
			(unsigned long long)landlock_net_handled(abi, s->policy.net), (unsigned long long)landlock_scoped(abi));
		fputc('\0', f);
	}
	fprintf(f, VM_KEY_LANDLOCK_FILE "=%llx", (unsigned long long)landlock_file_rights());
	fputc('\0', f);
	if (s->policy.require_landlock)
		rec(f, VM_KEY_LANDLOCK_REQUIRE, "1");
}

/* The records of the spec file (contract.h, VM_KEY_*): the job, its file systems, the policy
 * and the limits the guest keeps. */
static void spec_records(FILE *f, const struct cell_spec *s, const struct cell_io *io, const struct vm_state *v)
{
	if (io->control >= 0)
		rec(f, VM_KEY_EXECUTOR, "1");
	struct winsize ws = { 0 };
	if (v->tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
		ws = (struct winsize){ 0 };
	if (v->tty) /* the caller's terminal's size now (later ones come over the control port) */
		fprintf(f, VM_KEY_TTY "=%c %u %u%c", io->err < 0 ? '2' : '1', ws.ws_row, ws.ws_col, '\0');
	for (size_t i = 0; s->argv[i]; i++)
		rec(f, VM_KEY_ARG, s->argv[i]);
	for (size_t i = 0; s->env && s->env[i]; i++)
		rec(f, VM_KEY_ENV, s->env[i]);
	rec(f, VM_KEY_CWD, spec_cwd(s));
	if (s->worktree)
		rec(f, VM_KEY_WORKTREE, s->worktree);
	if (s->worktree_ro)
		rec(f, VM_KEY_WORK_RO, "1");
	if (s->workdir)
		rec(f, VM_KEY_WORKDIR, s->workdir);
	if (s->rootfs)
		rec(f, VM_KEY_IMAGE, s->image ? s->image : s->rootfs);
	rec(f, VM_KEY_HOSTNAME, spec_hostname(s));
	if (s->policy.no_sys)
		rec(f, VM_KEY_NO_SYS, "1");
	write_landlock(f, s);
	policy_kernel_masks(rec_kmask, f);
	write_protected(f, s);
	for (size_t i = 0; i < s->n_mounts; i++) {
		_cleanup_free_ char *b = xasprintf(VM_TAG_BIND "%zu %s%s %s", i, s->mounts[i].readonly ? "ro" : "rw",
						   vm_fd_is_file(s->mounts[i].fd) ? VM_BIND_FILE_SUFFIX : "", s->mounts[i].destination);
		rec(f, VM_KEY_BIND, b);
	}
	if (s->home)
		rec(f, VM_KEY_HOME, s->home);
	rec(f, VM_KEY_MASK, s->statedir);
	rec(f, VM_KEY_CORE, s->policy.core ? "1" : "0");
	/* the job's umask is the caller's, as in a container */
	mode_t um = umask(022);
	umask(um);
	if (s->has_umask)
		um = s->job_umask;
	char ums[8];
	snprintf(ums, sizeof ums, "%03o", (unsigned)um);
	rec(f, VM_KEY_UMASK, ums);
	if (s->policy.no_refused_writes)
		rec(f, VM_KEY_NO_REFUSED, "1"); /* the guest's audit costs its job time */
	const struct { const char *key; unsigned long long v; } nums[] = {
		{ VM_KEY_UID, s->uid }, { VM_KEY_GID, s->gid },
		{ VM_KEY_SCRATCH, s->limits.scratch == VM_LIMIT_NONE ? 0 : s->limits.scratch },
		{ VM_KEY_PIDS, s->limits.pids == VM_LIMIT_NONE ? 0 : s->limits.pids },
	};
	for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
		fprintf(f, "%s=%llu", nums[i].key, nums[i].v);
		fputc('\0', f);
	}
}

/* <rundir>/vm: the spec the guest init reads, the run user's passwd and group, and the job's
 * seccomp program. */
static int write_orders(const struct cell_spec *s, const struct cell_io *io, const struct vm_state *v, struct error *err)
{
	/* 0755 whatever the caller's umask (qemu, the run user, opens it again by its path) */
	if ((mkdirat(s->rundir_fd, RUN_VM_DIR, 0755) < 0 && errno != EEXIST) || fchmodat(s->rundir_fd, RUN_VM_DIR, 0755, 0) < 0)
		return error_set(err, errno, "cannot make %s/%s", s->rundir, RUN_VM_DIR);
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return error_set(err, errno, "cannot write the guest's orders");
	spec_records(f, s, io, v);
	fclose(f);
	_cleanup_free_ char *spec = xasprintf(RUN_VM_DIR "/" VM_SPEC_FILE);
	int r = write_file_atomic_at(s->rundir_fd, spec, buf, len, 0644);
	if (r < 0)
		return error_set(err, -r, "cannot write %s/%s", s->rundir, spec);
	/* the run user's passwd and group entries, as the container's (the image's own plus it) */
	static const char *const dbs[] = { VM_PASSWD_FILE, VM_GROUP_FILE };
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *txt = users_db(s, i == 1), *name = xasprintf(RUN_VM_DIR "/%s", dbs[i]);
		if (!txt || (r = write_file_atomic_at(s->rundir_fd, name, txt, strlen(txt), 0644)) < 0)
			return error_set(err, txt ? -r : errno, "cannot write %s/%s", s->rundir, name);
	}
	/* compiled on the host (cli: policy_prepare), or here */
	struct policy_opts q = s->policy;
	if (!q.bpf && policy_prepare(&q, err) < 0)
		return -EINVAL;
	_cleanup_free_ char *bpf = xasprintf(RUN_VM_DIR "/" VM_SECCOMP_FILE);
	r = write_file_atomic_at(s->rundir_fd, bpf, (const char *)q.bpf, q.bpf_len * sizeof *q.bpf, 0644);
	if (q.bpf != s->policy.bpf)
		free(q.bpf);
	if (r < 0)
		return error_set(err, -r, "cannot write %s/%s", s->rundir, bpf);
	return 0;
}

/* ---- qemu ---- */

/* fd moved to target in a child about to execute (CLOEXEC off). */
static void move_fd(int fd, int target)
{
	if (fd == target)
		fcntl(fd, F_SETFD, 0);
	else
		dup2(fd, target);
}

/* In qemu's child: the fds qemu's options name at their QFD_* numbers, the binds' sources from
 * QFD_END on, then the idmaps' (idmap: the worktree's, each bind's; vm_jail uses them and closes
 * them), their numbers in *maps (-1: none); qemu.log its stdout and stderr; nothing else open. */
static void child_fds(const struct cell_spec *s, const struct qemu_fds *q, const int *idmap, int *maps)
{
	int fixed = QFD_END - QFD_OUT, n = (int)s->n_mounts; /* at most VM_MAX_BINDS (vm_check_spec) */
	int nfd = fixed + n + 1 + n;
	int high[QFD_END - QFD_OUT + 2 * VM_MAX_BINDS + 1];
	for (int i = 0; i < nfd; i++) {
		int fd = i < fixed ? q->fd[i] : i < fixed + n ? s->mounts[i - fixed].fd : idmap[i - fixed - n];
		high[i] = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 100) : -1;
	}
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null < 0)
		_exit(125);
	dup2(null, 0);
	dup2(high[QFD_LOG - QFD_OUT], 1);
	dup2(high[QFD_LOG - QFD_OUT], 2);
	/* after the opens: the numbers they took (and rundir_fd's) may be QFD_* ones */
	for (int i = 0; i < nfd; i++)
		if (high[i] >= 0)
			move_fd(high[i], QFD_OUT + i);
	close_range((unsigned)(QFD_OUT + nfd), ~0U, 0);
	for (int k = 0; k <= n; k++)
		maps[k] = high[fixed + n + k] >= 0 ? QFD_OUT + fixed + n + k : -1;
}

/* In the child: leave warren's terminal's signals, take the fds qemu's options name, leave
 * root for the run user's ids in a read-only view of the host (vmjail.c), die with warren,
 * wait for the supervisor's go, and become qemu (its messages in qemu.log). */
static void __attribute__((noreturn)) qemu_child(const struct cell_spec *s, const struct qemu_fds *q, const int *idmap, bool kvm,
						  pid_t parent, char **argv)
{
	setsid();
	/* a guest's vCPU at the caller's SCHED_FIFO would hold a CPU of the host */
	(void)proc_reset_inherited();
	signal(SIGXFSZ, SIG_DFL);
	int maps[1 + VM_MAX_BINDS];
	child_fds(s, q, idmap, maps);
	/* qemu opens its pipes again by /dev/fd (chardev file): they are the run user's */
	int pipes[] = { QFD_OUT, QFD_ERR, QFD_CON };
	for (size_t i = 0; !s->rootless && i < sizeof pipes / sizeof pipes[0]; i++)
		if (q->fd[pipes[i] - QFD_OUT] >= 0 && fchown(pipes[i], spec_host_uid(s), spec_host_gid(s)) < 0)
			_exit(125);
	struct error err = { 0 };
	if (vm_jail(s, kvm, QFD_ROOT, QFD_WORK, QFD_END, maps, &err) < 0) {
		dprintf(2, "warren: %s\n", err.msg);
		_exit(125);
	}
	if (s->worktree && faccessat(QFD_WORK, ".", R_OK | X_OK, AT_EACCESS) < 0) {
		/* root mode: its owner's files are qemu's through an idmapped copy (vmjail.c), unless its
		 * file system takes no idmapped mount */
		dprintf(2, "warren: the VM's qemu runs as uid %u, which cannot read the worktree %s (%s%s); chown it to %u or "
			   "open its modes (docs/vm.md, \"The wall around qemu\")\n", (unsigned)spec_host_uid(s), s->worktree,
			strerror(errno), s->rootless ? "" : ": its file system cannot be idmapped to that uid", (unsigned)spec_host_uid(s));
		_exit(125);
	}
	/* after the change of ids, which clears it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
	char byte;
	if (read(QFD_GO, &byte, 1) != 1)
		_exit(125); /* the supervisor gave up before the VM could start */
	close(QFD_GO);
	execv(argv[0], argv);
	dprintf(2, "warren: cannot execute %s: %s; install qemu-system-x86 (warren looks in " HOST_TOOL_DIRS ")\n", argv[0], strerror(errno));
	_exit(127);
}

void vm_cell_init(struct cell *c)
{
	c->vm = xcalloc(1, sizeof *c->vm);
	c->vm->ctl_fd = -1;
	c->vm->accel = "tcg";
	c->vm->tty_fd = -1;
	for (size_t i = 0; i < 1 + VM_MAX_BINDS; i++)
		c->vm->idmap[i] = -1;
}

static void close_idmaps(struct vm_state *v)
{
	for (size_t i = 0; i < 1 + VM_MAX_BINDS; i++)
		closep(&v->idmap[i]);
}

void vm_prepare(const struct cell_spec *s, struct cell *c)
{
	vm_cell_init(c);
	if (s->rootless || s->n_mounts > VM_MAX_BINDS) /* (too many: vm_check_spec refused the run) */
		return;
	c->vm->idmap[0] = cell_owner_idmap(s, s->worktree ? s->worktree_fd : -1, true, c);
	for (size_t i = 0; i < s->n_mounts; i++)
		c->vm->idmap[1 + i] = cell_owner_idmap(s, s->mounts[i].fd, !s->mounts[i].readonly, c);
}

/* What qemu reads from the state directory, opened here (qemu's view hides it). */
static int open_inputs(const struct cell_spec *s, const struct vm_state *v, int *kernel, int *initrd, int *orders,
		       struct error *err)
{
	*kernel = open(v->k.vmlinux, O_RDONLY | O_CLOEXEC);
	*initrd = open(v->k.initramfs, O_RDONLY | O_CLOEXEC);
	*orders = openat(s->rundir_fd, RUN_VM_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*kernel < 0 || *initrd < 0 || *orders < 0)
		return error_set(err, errno, "cannot open the VM's kernel, initramfs or orders (%s, %s, %s/%s)", v->k.vmlinux,
				 v->k.initramfs, s->rundir, RUN_VM_DIR);
	return 0;
}

/* A job's executor port (its relay one of the cell's helpers) and the job's terminal: qemu's
 * ends in *exec and *tty (-1: none). */
static int job_ports(const struct cell_spec *s, const struct cell_io *io, struct cell *c, int *exec, int *tty,
		     struct error *err)
{
	if (io->control >= 0) {
		pid_t relay = vm_exec_relay_start(s, io->control, exec, err);
		if (relay < 0)
			return -EIO;
		cell_helper_slot(c)->pid = relay;
	}
	int t[2];
	if (c->vm->tty && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, t) < 0)
		return error_set(err, errno, "cannot make the VM's terminal port");
	if (c->vm->tty) {
		c->vm->tty_fd = t[0];
		*tty = t[1];
	}
	return 0;
}

/* The worktree and the binds' sources, checked as a container's init checks them (container/hostroot.c):
 * one on a kernel's file system, or with one mounted below it (a chroot's /proc), is refused,
 * as a container's is; 9p would show it (it crosses mounts). What the host mounts there later
 * does not reach qemu's copies (vmjail.c), which cover what came between. */
static int check_sources(const struct cell_spec *s, struct error *err)
{
	int r = s->worktree ? hostroot_check_source("the worktree", s->worktree, s->worktree_fd, true, err) : 0;
	for (size_t i = 0; r == 0 && i < s->n_mounts; i++)
		r = hostroot_check_source("the bind source", s->mounts[i].source, s->mounts[i].fd, i == 0 && !s->worktree, err);
	return r;
}

int vm_start(const struct cell_spec *s, const struct cell_io *io, struct cell *c, struct error *err)
{
	if (!c->vm)
		vm_cell_init(c);
	struct vm_state *v = c->vm;
	v->tty = s->tty && io->control < 0;
	int rep[2] = { -1, -1 }, ctl[2] = { -1, -1 }, go[2] = { -1, -1 };
	_cleanup_close_ int kernel = -1, initrd = -1, orders = -1, con = -1, log = -1, root = -1, exec = -1, tty = -1;
	if (check_sources(s, err) < 0 || vm_kernel_prepare(&v->k, s->statedir, err) < 0 || write_orders(s, io, v, err) < 0 ||
	    open_inputs(s, v, &kernel, &initrd, &orders, err) < 0 || job_ports(s, io, c, &exec, &tty, err) < 0)
		goto fail;
	v->accel = vm_accel(&v->k, s);
	v->memory = vm_guest_memory(s);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rep) < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    pipe2(go, O_CLOEXEC) < 0) {
		error_set(err, errno, "cannot make the VM's ports");
		goto fail;
	}
	v->keepers[0] = vm_log_start(s, VM_CONSOLE_FILE, VM_CONSOLE_HEAD, VM_CONSOLE_TAIL, &con, err);
	v->keepers[1] = v->keepers[0] > 0 ? vm_log_start(s, VM_QEMU_LOG_FILE, VM_QEMU_LOG_HEAD, VM_QEMU_LOG_TAIL, &log, err) : 0;
	if (v->keepers[0] < 0 || v->keepers[1] <= 0) {
		for (int i = 0; i < 2; i++)
			v->keepers[i] = v->keepers[i] < 0 ? 0 : v->keepers[i];
		goto fail;
	}
	/* the image or --rootfs: qemu's view may hide where it lies (the state directory) */
	if (s->rootfs && (root = spec_root_open(s)) < 0) {
		error_set(err, errno, "cannot open the root %s for the VM", s->rootfs);
		goto fail;
	}
	struct qemu_fds q = { { v->tty ? -1 : io->out, io->err, rep[1], ctl[1], s->worktree_fd, go[0], kernel, initrd, orders, con,
				io->tap, log, root, exec, tty } };
	char **argv = qemu_argv(s, io, v);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0)
		qemu_child(s, &q, v->idmap, !strcmp(v->accel, "kvm"), parent, argv);
	strv_free(argv);
	if (pid < 0) {
		error_set(err, errno, "cannot start %s", VM_QEMU);
		goto fail;
	}
	close_idmaps(v); /* qemu's child has them */
	c->pid = pid;
	c->pidfd = sys_pidfd_open(pid, 0);
	c->report_fd = steal_fd(&rep[0]);
	c->go_fd = steal_fd(&go[1]);
	v->ctl_fd = steal_fd(&ctl[0]);
	fcntl(v->ctl_fd, F_SETFL, O_NONBLOCK);
	closep(&rep[1]);
	closep(&ctl[1]);
	closep(&go[0]);
	if (c->pidfd < 0) {
		error_set(err, errno, "cannot watch %s (pidfd_open)", VM_QEMU);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -EINVAL;
	}
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		closep(&rep[i]);
		closep(&ctl[i]);
		closep(&go[i]);
	}
	return err->errnum ? -err->errnum : -EINVAL;
}

int vm_release(struct cell *c)
{
	if (c->go_fd < 0)
		return 0;
	ssize_t w = write(c->go_fd, "g", 1);
	int e = errno;
	closep(&c->go_fd);
	return w == 1 ? 0 : -e;
}

int vm_take_tty(struct cell *c)
{
	return c->vm ? steal_fd(&c->vm->tty_fd) : -1;
}

void vm_winsize(struct cell *c, unsigned short rows, unsigned short cols)
{
	unsigned char b[5] = { VM_CTL_WINSIZE, (unsigned char)(rows & 0xff), (unsigned char)(rows >> 8), (unsigned char)(cols & 0xff),
			       (unsigned char)(cols >> 8) };
	if (c->vm && c->vm->ctl_fd >= 0 && write(c->vm->ctl_fd, b, sizeof b) < 0) {
		/* a guest that is gone has no terminal to size */
	}
}

int vm_signal(struct cell *c, int sig)
{
	unsigned char b = (unsigned char)sig;
	if (sig != SIGKILL && c->vm && c->vm->ctl_fd >= 0 && write(c->vm->ctl_fd, &b, 1) == 1)
		return 0;
	return sys_pidfd_send_signal(c->pidfd, SIGKILL, NULL, 0);
}

/* The logs' keepers write the kept ends once qemu is gone: wait for them. */
static void console_wait(struct vm_state *v)
{
	for (int i = 0; v && i < 2; i++) {
		if (v->keepers[i] > 0)
			waitpid(v->keepers[i], NULL, 0);
		v->keepers[i] = 0;
	}
}

void vm_close(struct cell *c)
{
	if (!c->vm)
		return;
	console_wait(c->vm); /* qemu was reaped: its end of the console is closed */
	closep(&c->vm->ctl_fd);
	closep(&c->vm->tty_fd);
	close_idmaps(c->vm);
	free(c->vm->line);
	vm_kernel_free(&c->vm->k);
	free(c->vm);
	c->vm = NULL;
}

/* ---- the report ---- */

/* The reports that carry one count ({"<key>": N}), and what each becomes. */
static const struct {
	const char *key;
	enum cell_report_type type;
} vm_counts[] = {
	{ VM_REPORT_PIDS_MAX, CELL_REPORT_PIDS_MAX },
	{ VM_REPORT_OOM_KILLS, CELL_REPORT_OOM_KILLS },
	{ VM_REPORT_PIDS_PEAK, CELL_REPORT_PIDS_PEAK },
};

/* A count of the guest's, bounded: 0 when it is not one a real guest sends. */
static int32_t guest_count(json_t *v)
{
	json_int_t n = json_integer_value(v);
	return n > 0 && n < INT32_MAX ? (int32_t)n : 0;
}

/* {"scratch": [used, free]} (with "full": true once a scratch mount is full): the container's
 * scratch report, "<used> <free>". */
static void parse_scratch(json_t *j, struct cell_report *r, char **msg)
{
	json_t *sc = json_object_get(j, VM_REPORT_SCRATCH);
	json_int_t used = json_integer_value(json_array_get(sc, 0)), avail = json_integer_value(json_array_get(sc, 1));
	r->type = json_is_true(json_object_get(j, VM_REPORT_SCRATCH_FULL)) ? CELL_REPORT_SCRATCH_FULL : CELL_REPORT_SCRATCH;
	*msg = xasprintf("%llu %llu", (unsigned long long)(used > 0 ? used : 0), (unsigned long long)(avail > 0 ? avail : 0));
}

/* One line of the guest into r and *msg: 1, or 0 when it is not a report. The guest is as
 * untrusted as its job (a job that took its kernel writes here): numbers are bounded and the
 * message is made printable. */
static int parse_report(const char *line, struct cell_report *r, char **msg)
{
	json_error_t je;
	json_t *j = json_loads(line, 0, &je);
	json_t *st = json_object_get(j, VM_REPORT_STATUS), *e = json_object_get(j, VM_REPORT_ERROR);
	*r = (struct cell_report){ 0 };
	*msg = NULL;
	for (size_t i = 0; i < sizeof vm_counts / sizeof vm_counts[0] && !r->type; i++)
		if (json_is_integer(json_object_get(j, vm_counts[i].key))) {
			r->type = vm_counts[i].type;
			r->status = guest_count(json_object_get(j, vm_counts[i].key));
		}
	if (r->type) {
		/* a count */
	} else if (json_is_string(e)) {
		r->type = CELL_REPORT_ERROR;
		r->errnum = (int32_t)json_integer_value(json_object_get(j, VM_REPORT_ERRNO));
		json_int_t code = json_integer_value(json_object_get(j, VM_REPORT_CODE));
		r->status = code > 0 && code < 256 ? (int32_t)code : 125;
		*msg = printable_name(json_string_value(e));
	} else if (json_is_array(json_object_get(j, VM_REPORT_SCRATCH))) {
		parse_scratch(j, r, msg);
	} else if (json_is_array(json_object_get(j, VM_REPORT_REFUSED))) {
		/* the paths are the host's to make printable and bound (supervise/refused.c) */
		r->type = CELL_REPORT_REFUSED;
		r->status = guest_count(json_object_get(j, VM_REPORT_REFUSED_TOTAL));
		*msg = json_dumps(json_object_get(j, VM_REPORT_REFUSED), JSON_COMPACT);
	} else if (json_is_true(json_object_get(j, VM_REPORT_STARTED))) {
		r->type = CELL_REPORT_STARTED;
	} else if (json_is_integer(st)) {
		r->type = CELL_REPORT_EXIT;
		r->status = (int32_t)(json_integer_value(st) & 0xffff); /* a wait status */
	}
	json_decref(j);
	if (r->type && !*msg)
		*msg = xstrdup("");
	return r->type ? 1 : 0;
}

int vm_read_report(struct cell *c, struct cell_report *r, char **msg)
{
	struct vm_state *v = c->vm;
	for (;;) {
		char *nl = v->line ? memchr(v->line, '\n', v->len) : NULL;
		if (nl) {
			*nl = '\0';
			int got = parse_report(v->line, r, msg);
			v->len -= (size_t)(nl + 1 - v->line);
			memmove(v->line, nl + 1, v->len);
			if (got)
				return 1;
			continue;
		}
		if (v->len >= 65536)
			v->len = 0; /* no report is this long: not one */
		v->line = xrealloc(v->line, v->len + 4096);
		ssize_t n = read(c->report_fd, v->line + v->len, 4096);
		if (n <= 0)
			return 0;
		v->len += (size_t)n;
	}
}

/* The last line of <rundir>/vm/<name> that is not empty (of its last 4 KiB: the guest may
 * have made it large), or NULL. */
static char *last_line(const struct cell_spec *s, const char *name)
{
	_cleanup_free_ char *path = xasprintf(RUN_VM_DIR "/%s", name);
	_cleanup_close_ int fd = openat(s->rundir_fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char text[4097];
	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	ssize_t got = pread(fd, text, sizeof text - 1, st.st_size > 4096 ? st.st_size - 4096 : 0);
	if (got <= 0)
		return NULL;
	text[got] = '\0';
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		text[--n] = '\0';
	char *l = strrchr(text, '\n');
	return n ? printable_name(l ? l + 1 : text) : NULL; /* the guest wrote it */
}

char *vm_missing_report(const struct cell_spec *s, const struct cell *c, int qemu_status)
{
	_cleanup_free_ char *how = WIFSIGNALED(qemu_status) ? xasprintf("was killed by SIG%s", sigabbrev_np(WTERMSIG(qemu_status)))
							    : xasprintf("exited with %d", WEXITSTATUS(qemu_status));
	console_wait(c->vm);
	_cleanup_free_ char *qemu = last_line(s, VM_QEMU_LOG_FILE);
	_cleanup_free_ char *con = last_line(s, VM_CONSOLE_FILE);
	return xasprintf("the VM of %s ended without a report from its init: %s %s (%s)%s%s%s%s; its console and qemu's messages are in %s/%s",
			 s->id, VM_QEMU, how, c->vm ? c->vm->accel : "?", qemu ? "; qemu: " : "", qemu ? qemu : "",
			 con ? "; console: " : "", con ? con : "", s->rundir, RUN_VM_DIR);
}

void vm_record(const struct cell *c, json_t **extra)
{
	if (!c->vm)
		return;
	if (!*extra)
		*extra = json_object();
	json_object_set_new(*extra, "vm", json_pack("{s:s,s:s,s:I}", "accel", c->vm->accel, "kernel", c->vm->k.image,
						    "memory", (json_int_t)c->vm->memory));
}

/* ---- which accelerator ---- */

/* In the probe's child: the kernel and initramfs at their QFD_* numbers, nothing else open
 * but /dev/null as 0-2, walled in as a run's qemu (vmjail.c), dying with warren. */
static void __attribute__((noreturn)) probe_child(const struct cell_spec *s, int kernel, int initrd, pid_t parent, char **argv)
{
	setsid();
	(void)proc_reset_inherited();
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int hk = fcntl(kernel, F_DUPFD_CLOEXEC, 100), hi = fcntl(initrd, F_DUPFD_CLOEXEC, 100);
	if (null < 0 || hk < 0 || hi < 0)
		_exit(125);
	for (int fd = 0; fd < 3; fd++)
		dup2(null, fd);
	move_fd(hk, QFD_KERNEL);
	move_fd(hi, QFD_INITRD);
	close_range(3, QFD_KERNEL - 1, 0);
	close_range(QFD_INITRD + 1, ~0U, 0);
	/* the run's wall without its shares: the same ids, view, capabilities and seccomp */
	struct cell_spec probe = *s;
	probe.worktree = NULL;
	probe.n_mounts = 0; /* no binds either (their fds are closed here) */
	struct error err = { 0 };
	if (vm_jail(&probe, true, -1, -1, QFD_END, NULL, &err) < 0)
		_exit(125);
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* after the change of ids, which clears it */
	if (getppid() != parent)
		_exit(125);
	execv(argv[0], argv);
	_exit(127);
}

/* Boot k under KVM with an init that powers off at once: true when it does within 10 s (a
 * /dev/kvm that opens may still hang a real guest: nested KVM without what the kernel needs).
 * The probe's qemu is walled in as the run's will be (it boots warren's own kernel and init,
 * but it is the same qemu on the same /dev/kvm). */
static bool kvm_boots(const struct vm_kernel *k, const struct cell_spec *s)
{
	_cleanup_close_ int kernel = open(k->vmlinux, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int initrd = open(k->initramfs, O_RDONLY | O_CLOEXEC);
	if (kernel < 0 || initrd < 0)
		return false;
	_cleanup_free_ char *kpath = fd_path(QFD_KERNEL), *ipath = fd_path(QFD_INITRD);
	char **argv = qemu_base_argv(kpath, ipath, "kvm", VM_MIN_MEMORY, VM_CMDLINE_POWEROFF);
	pid_t parent = getpid(), pid = fork();
	if (pid == 0)
		probe_child(s, kernel, initrd, parent, argv);
	strv_free(argv);
	if (pid < 0)
		return false;
	_cleanup_close_ int pfd = sys_pidfd_open(pid, 0);
	struct pollfd p = { .fd = pfd, .events = POLLIN };
	if (pfd < 0 || poll(&p, 1, 10000) != 1)
		kill(pid, SIGKILL);
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

const char *vm_accel(const struct vm_kernel *k, const struct cell_spec *s)
{
	const char *env = getenv("WARREN_VM_ACCEL");
	if (env && (!strcmp(env, "kvm") || !strcmp(env, "tcg")))
		return !strcmp(env, "kvm") ? "kvm" : "tcg";
	_cleanup_close_ int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		return "tcg";
	const char *base = strrchr(k->vmlinux, '/') + 1;
	_cleanup_free_ char *memo = xasprintf("%s/vm-cache/accel-%s", s->statedir, base);
	_cleanup_free_ char *known = read_file(memo, NULL);
	if (known)
		return !strncmp(known, "kvm", 3) ? "kvm" : "tcg";
	const char *a = kvm_boots(k, s) ? "kvm" : "tcg";
	write_file_atomic(memo, a, strlen(a), 0644);
	return a;
}

/* ---- what the guest can carry ---- */

static bool asks_net(const struct cell_spec *s, bool job) { (void)job; return s->net.mode != NET_NONE; }
static bool asks_image(const struct cell_spec *s, bool job) { (void)job; return s->rootfs; }
static bool asks_mounts(const struct cell_spec *s, bool job) { (void)job; return s->n_mounts; }
static bool asks_no_work(const struct cell_spec *s, bool job) { (void)job; return !s->worktree; }
static bool asks_work_ro(const struct cell_spec *s, bool job) { (void)job; return s->worktree_ro; }
static bool asks_workdir(const struct cell_spec *s, bool job) { (void)job; return s->workdir; }
static bool asks_hostname(const struct cell_spec *s, bool job) { (void)job; return s->hostname; }
static bool asks_landlock(const struct cell_spec *s, bool job) { (void)job; return s->policy.require_landlock; }
static bool asks_no_sys(const struct cell_spec *s, bool job) { (void)job; return s->policy.no_sys; }

/* What a cell spec may ask of the vm driver and the key of the guest's orders (contract.h)
 * that carries it to the guest init, or NULL when the guest cannot do it yet: such a run is
 * refused, naming it. Teaching the guest a capability is giving its row a key. */
static const struct vm_ask {
	const char *what;
	bool (*asked)(const struct cell_spec *s, bool job);
	const char *key;
} vm_asks[] = {
	{ "--net nat or allow=", asks_net, VM_CMDLINE_NET },
	{ "--rootfs or --image (an image)", asks_image, VM_KEY_IMAGE },
	{ "--bind, --ro-bind or --externals", asks_mounts, VM_KEY_BIND },
	{ "--work none", asks_no_work, VM_KEY_WORKTREE }, /* carried by its absence */
	{ "--work-ro", asks_work_ro, VM_KEY_WORK_RO },
	{ "--workdir", asks_workdir, VM_KEY_WORKDIR },
	{ "--hostname", asks_hostname, VM_KEY_HOSTNAME },
	{ "--require-landlock", asks_landlock, VM_KEY_LANDLOCK_REQUIRE },
	{ "--no-sys", asks_no_sys, VM_KEY_NO_SYS },
};

int vm_check_spec(const struct cell_spec *s, bool job, struct error *err)
{
	for (size_t i = 0; i < sizeof vm_asks / sizeof vm_asks[0]; i++)
		if (!vm_asks[i].key && vm_asks[i].asked(s, job))
			return error_set(err, 0, "the vm driver: %s is not done yet; use the container driver (--driver container, or driver: container in a job file)",
					 vm_asks[i].what);
	if (s->n_mounts > VM_MAX_BINDS)
		return error_set(err, 0, "the vm driver: %zu binds (--bind, --ro-bind, --externals), at most %d (each is a device of the VM); bind a directory that holds several",
				 s->n_mounts, VM_MAX_BINDS);
	/* qemu shares the worktree as it is on the host: the state directory inside it (other
	 * runs' scratch and records) would be one guest-kernel exploit away */
	size_t wl = s->worktree ? strlen(s->worktree) : 0;
	if (wl && s->statedir && !strncmp(s->statedir, s->worktree, wl) && (s->statedir[wl] == '/' || !s->statedir[wl]))
		return error_set(err, 0, "the vm driver: the state directory %s lies inside the worktree %s, which the VM gets "
				 "whole; give --state a directory outside it (or use the container driver)", s->statedir, s->worktree);
	if (s->limits.memory && s->limits.memory < VM_MIN_MEMORY)
		return error_set(err, 0, "the vm driver: --memory %lluM is too small for a VM (it boots a kernel); give --memory %lluM or more",
				 (unsigned long long)(s->limits.memory >> 20), VM_MIN_MEMORY >> 20);
	return 0;
}

unsigned long long vm_guest_memory(const struct cell_spec *s)
{
	uint64_t m = s->limits.memory == VM_LIMIT_NONE ? 0 : s->limits.memory;
	return (m && m < VM_MAX_MEMORY ? m : m ? VM_MAX_MEMORY : VM_DEFAULT_MEMORY) >> 20 << 20;
}

void vm_host_limits(const struct cell_spec *s, struct limits *out)
{
	*out = s->limits;
	if (s->limits.memory && s->limits.memory != VM_LIMIT_NONE)
		out->memory = vm_guest_memory(s) + VM_QEMU_OVERHEAD;
	out->pids = 0;
}
