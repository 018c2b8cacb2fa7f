/* SPDX-License-Identifier: Apache-2.0 */
/* container.c - the container driver, the host's side: what the supervisor makes before the
 * cell (the idmapped mounts' user namespaces, the network namespace, in helper processes of
 * their own), the clone of the cell's init into fresh namespaces (init.c: it builds the root,
 * root.c, and starts the job), and the cell's life from the host: release, a warm cell's take,
 * signals, its helpers reaped, its descriptors closed.
 *
 * Root mode: the namespaces belong to the host's user namespace, so the job (in a child user
 * namespace, ids mapped to CELL_ROOT_ID_BASE+N) holds no capability over its mounts, network,
 * hostname or ipc, even as --user 0. Rootless: the first user namespace (the caller's uid
 * mapped) owns the namespaces and init; the job gets a nested one, again owning nothing. */
#include "cell/container.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif
#include <unistd.h>

#include "cell/contract.h"
#include "net/net.h"
#include "util/fs.h"
#include "util/sys.h"

#include "internal.h"

struct cell_ctx *cell_ctx_new(const struct cell_spec *s)
{
	struct cell_ctx *x = xcalloc(1, sizeof *x);
	x->s = s;
	x->idmap_work = x->idmap_image = x->netns_sock = -1;
	x->report = x->go = x->take_r = x->take_w = -1;
	x->caller_umask = 022;
	x->root_fd = x->scratch_fd = x->kept_worktree = -1;
	return x;
}

/* The idmap helper's life: hold nothing of the supervisor's (the job's output pipes above all),
 * then wait for the end of its pipe. It shares the supervisor's memory (CLONE_VM): only raw
 * calls here (sys_raw: not even errno is written), on a stack of its own, not instrumented by
 * the sanitizers (their state is the supervisor's thread's). */
static int __attribute__((no_sanitize("address", "undefined"))) idmap_helper_main(void *arg)
{
	int p = (int)(intptr_t)arg;
	if (p > 0)
		sys_raw(SYS_close_range, 0, (unsigned)p - 1, 0);
	sys_raw(SYS_close_range, (unsigned)p + 1, ~0U, 0);
	char c;
	long r = sys_raw(SYS_read, p, &c, 1);
	sys_raw(SYS_exit, r < 0, 0, 0);
	return 0;
}

#define IDMAP_HELPER_STACK (64 * 1024)

/* A helper's stack unmapped. In the sanitizer build its frames left their redzones poisoned
 * (a helper ends by exit, never returning), and the address sanitizer does not clear them on
 * munmap: SQLite's next mapping of the history's -shm at that address then read as a
 * "stack-buffer-underflow" (a run's end folding the history, 1 run in ~200). */
static void helper_stack_free(void *stack)
{
#ifdef __SANITIZE_ADDRESS__
	__asan_unpoison_memory_region(stack, IDMAP_HELPER_STACK);
#endif
	munmap(stack, IDMAP_HELPER_STACK);
}

/* A helper process (idmaps, the network namespace): fn(arg) cloned with flags and the
 * supervisor's memory (CLONE_VM) on a stack of its own, written to *helper; its pid, or -1
 * (nothing made). */
static pid_t helper_clone(int (*fn)(void *), void *arg, int flags, struct cell_helper *helper)
{
	void *stack = mmap(NULL, IDMAP_HELPER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	pid_t pid = clone(fn, (char *)stack + IDMAP_HELPER_STACK, CLONE_VM | SIGCHLD | flags, arg);
	if (pid < 0)
		munmap(stack, IDMAP_HELPER_STACK);
	else
		*helper = (struct cell_helper){ pid, stack };
	return pid;
}

/* A user namespace that maps on-disk ids [from, from+n) to host ids [to, to+n): the idmap of
 * an idmapped mount. Made by the supervisor (host pid namespace, host /proc) before the cell.
 * Its process need only exist while the maps are written and the namespace opened: it is told
 * to exit then, and reaped later (cell_reap_ended_helpers, or at the end cell_reap_helpers:
 * *helper), never waited for here: waiting for
 * another process to be scheduled cost each run 1-8 ms on a loaded machine. It is cloned with
 * the supervisor's memory (CLONE_VM): a copy of that (page tables, and then a copy-on-write
 * fault for each page the supervisor writes next) cost more than the rest of it. */
static int idmap_userns(const char *uid_map, const char *gid_map, struct cell_helper *helper)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = helper_clone(idmap_helper_main, (void *)(intptr_t)p[0], CLONE_NEWUSER, helper);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	char path[128];
	int fd = -1;
	snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
	if (write_file(path, uid_map, strlen(uid_map)) == 0) {
		snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
		if (write_file(path, gid_map, strlen(gid_map)) == 0) {
			snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
	}
	close(p[1]);
	return fd;
}

/* The idmap of one range of n ids, the same for users and groups. */
static int idmap_range(unsigned from, unsigned to, unsigned n, struct cell_helper *helper)
{
	char line[64];
	snprintf(line, sizeof line, "%u %u %u\n", from, to, n);
	return idmap_userns(line, line, helper);
}

/* A new slot (-1) in c's list of helper processes (idmaps; a VM's relay). */
struct cell_helper *cell_helper_slot(struct cell *c)
{
	c->helpers = xrealloc(c->helpers, (c->n_helpers + 1) * sizeof *c->helpers);
	c->helpers[c->n_helpers] = (struct cell_helper){ -1, NULL };
	return &c->helpers[c->n_helpers++];
}

int cell_owner_idmap(const struct cell_spec *s, int fd, bool map_root, struct cell *c)
{
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	bool owner = !(st.st_uid == spec_host_uid(s) && st.st_gid == spec_host_gid(s)) && (st.st_uid != 0 || map_root);
	/* else (a read-only bind of root's): the volume's own group, when it is one of the job's
	 * supplementary groups (a pod's fsGroup: spec_volume_group) */
	bool group = !owner && spec_volume_group(s, st.st_gid);
	if (!owner && !group)
		return -1;
	/* the owner: the run user (or itself, when it is already); a root owner not mapped: a
	 * uid no file has (the cell's nobody) fills the map */
	char uid_map[64], gid_map[96];
	if (st.st_uid != 0 || map_root)
		snprintf(uid_map, sizeof uid_map, "%u %u 1\n", (unsigned)st.st_uid, (unsigned)spec_host_uid(s));
	else
		snprintf(uid_map, sizeof uid_map, "%u %u 1\n", 4294967293u, (unsigned)(s->id_base + 65534));
	/* host gid g of the volume is the cell's gid g, as the kubelet, which chowned the volume,
	 * meant it (the run user's own gid beside it, as it is); else the owner's group the run
	 * user's */
	if (group)
		snprintf(gid_map, sizeof gid_map, "%u %u 1\n%u %u 1\n", (unsigned)st.st_gid, (unsigned)(s->id_base + st.st_gid),
			 (unsigned)spec_host_gid(s), (unsigned)spec_host_gid(s));
	else
		snprintf(gid_map, sizeof gid_map, "%u %u 1\n", (unsigned)st.st_gid, (unsigned)spec_host_gid(s));
	return idmap_userns(uid_map, gid_map, cell_helper_slot(c));
}
/* ---- made before the clone: the idmaps' user namespaces; the network, on a thread ---- */

/* Root mode: the worktree's and the binds' owners are the run user inside; the image's ids
 * are the cell's. A pod's volume (an OCI bundle's bind: the pod's author named it, not the
 * caller) owned by root is never made the run user's: a hostPath of root's files written by
 * the job as their owner would be the host's root's (a /root/.ssh of the bundle's choosing);
 * the job writes it only as its mode lets others (an emptyDir is 0777), its files its own. */
static void make_idmaps(struct cell_ctx *x, struct cell *c)
{
	const struct cell_spec *s = x->s;
	x->idmap_work = cell_owner_idmap(s, s->worktree_fd, true, c);
	if (s->rootfs)
		x->idmap_image = idmap_range(0, s->id_base, CELL_ID_RANGE, cell_helper_slot(c));
	x->idmap_mounts = s->n_mounts ? xcalloc(s->n_mounts, sizeof *x->idmap_mounts) : NULL;
	x->n_idmap_mounts = s->n_mounts;
	for (size_t i = 0; i < s->n_mounts; i++)
		x->idmap_mounts[i] = cell_owner_idmap(s, s->mounts[i].fd, !s->mounts[i].readonly && !s->mounts[i].pod, c);
}

/* The network namespace's helper: a process in the supervisor's memory (CLONE_VM), on a
 * stack of its own, that makes a new network namespace (moving itself into it), brings its
 * loopback up and sends it to init over sock; then word of its end (shutdown), so that init
 * never waits for more than that. Raw system calls only (sys_raw: not even errno, which is
 * the supervisor's thread's), not instrumented by the sanitizers: no C library or sanitizer
 * lock or state is taken, since init is cloned from the supervisor meanwhile (a thread, as
 * first tried, put its C library's and its sanitizer's state into init's copy). */
static int __attribute__((no_sanitize("address", "undefined"))) netns_helper_main(void *arg)
{
	long sock = (long)(intptr_t)arg, ns = -1, fd;
	if (sys_raw(SYS_unshare, CLONE_NEWNET, 0, 0) == 0 && (fd = sys_raw(SYS_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) >= 0) {
		struct ifreq ifr;
		memset(&ifr, 0, sizeof ifr);
		memcpy(ifr.ifr_name, "lo", 3);
		if (sys_raw(SYS_ioctl, fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags |= IFF_UP, sys_raw(SYS_ioctl, fd, SIOCSIFFLAGS, &ifr) == 0)) {
			net_open_low_ports(); /* the ports below 1024 the job's (net/ports.c) */
			ns = sys_raw6(SYS_openat, AT_FDCWD, (long)"/proc/self/ns/net", O_RDONLY | O_CLOEXEC, 0, 0, 0);
		}
		sys_raw(SYS_close, fd, 0, 0);
	}
	union fd_cmsg c;
	struct iovec iov;
	struct msghdr mh;
	fd_msg(&mh, &iov, &c, ns >= 0 ? (int)ns : -1, ns >= 0 ? "n" : "x", 1);
	sys_raw(SYS_sendmsg, sock, &mh, MSG_NOSIGNAL);
	sys_raw(SYS_shutdown, sock, SHUT_WR, 0);
	sys_raw(SYS_exit, 0, 0, 0);
	return 0;
}

static void close_idmap_mounts(struct cell_ctx *x)
{
	for (size_t i = 0; x->idmap_mounts && i < x->n_idmap_mounts; i++)
		closep(&x->idmap_mounts[i]);
	free(x->idmap_mounts);
	x->idmap_mounts = NULL;
}

void container_prepare(const struct cell_spec *s, struct cell *c)
{
	c->ctx = cell_ctx_new(s);
	c->helpers = NULL;
	c->n_helpers = 0;
	c->netns_sock = -1;
	/* the idmaps' helpers first, before any descriptor of the run exists: each gets a copy of
	 * the supervisor's table and closes it only once it is scheduled, which on a busy host can
	 * be after the job has ended; made after the job's output pipes, a helper not yet run held
	 * them open, and the run's end took that for a process outside the cell holding its output
	 * (4 runs in 100 while a test suite ran beside) */
	if (!s->rootless)
		make_idmaps(c->ctx, c);
	/* rootless, the network is owned by the cell's own user namespace; --net's link is moved
	 * into init's namespace by its pid; a pod's network is joined by init (enter_netns), the
	 * host's kept */
	if (s->rootless || s->net.mode != NET_NONE || !spec_ns_own(s, GATE_NS_NET))
		return;
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return;
	pid_t pid = helper_clone(netns_helper_main, (void *)(intptr_t)sp[0], 0, cell_helper_slot(c));
	/* the helper holds the sending end alone: its end, however it comes, is init's EOF */
	close(sp[0]);
	if (pid < 0)
		close(sp[1]);
	else
		c->netns_sock = sp[1];
}

/* The supervisor's copies of what was prepared, once init has its own (or on failure). */
static void drop_prepared(struct cell *c)
{
	closep(&c->netns_sock);
	struct cell_ctx *x = c->ctx;
	if (!x)
		return;
	x->netns_sock = -1; /* (init's copy of that number, in the supervisor) */
	closep(&x->idmap_work);
	closep(&x->idmap_image);
	close_idmap_mounts(x);
}

/* Why the clone of the cell's init failed (errno e), as the user's line. */
static int clone_failed(const struct cell_spec *s, int e, struct error *err)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };
	if (e == EPERM && !s->rootless && sys_capget(&h, d) == 0 && !(d[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))))
		return error_set(err, e, "cannot create the cell's namespaces: warren runs as root without CAP_SYS_ADMIN "
					 "(a narrowed bounding set, a container's default capabilities?); give it the capability, or run it as a user (rootless)");
	if (e == EPERM || e == ENOSPC || e == EINVAL)
		return error_set(err, e, "cannot create the cell's namespaces (are user namespaces enabled? see 'warren selfcheck')");
	return error_set(err, e, "cannot create the cell");
}

/* The namespaces init is cloned into: its own, but those of a pod it joins (init enters the
 * network, ipc and uts ones itself, join_namespaces; the pid one is the clone's, below) and the
 * host's it keeps. */
static uint64_t clone_ns_flags(const struct cell_spec *s, bool net_made)
{
	uint64_t f = CLONE_NEWNS | CLONE_NEWCGROUP | (s->rootless ? CLONE_NEWUSER : 0);
	for (int k = 0; k < GATE_NS_KINDS; k++)
		if (spec_ns_own(s, k) && !(k == GATE_NS_NET && net_made))
			f |= (uint64_t)gate_ns_clone_flag(k);
	return f;
}

/* clone3 of init; a pod's pid namespace joined: init is cloned into it (this thread's
 * pid_for_children, set for the clone and set back: init is not its pid 1 then, init.c). */
static pid_t clone_init(const struct cell_spec *s, struct clone_args *a)
{
	if (s->ns[GATE_NS_PID].from != CELL_NS_JOIN)
		return sys_clone3(a);
	_cleanup_close_ int own = open("/proc/thread-self/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
	if (own < 0 || setns(s->ns[GATE_NS_PID].fd, CLONE_NEWPID) < 0)
		return -1;
	pid_t pid = sys_clone3(a);
	if (pid == 0)
		return 0;
	int e = errno;
	if (setns(own, CLONE_NEWPID) < 0 && pid > 0) {   /* (its own: it cannot be refused) */
		e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		closep((int *)(uintptr_t)a->pidfd);
		pid = -1;
	}
	errno = e;
	return pid;
}

int container_start(const struct cell_spec *s, const struct cell_io *io, struct cell *c, struct error *err)
{
	if (!c->ctx)
		c->ctx = cell_ctx_new(s);
	struct cell_ctx *x = c->ctx;
	x->s = s;
	x->cg = c->cgroup;
	int rep[2] = { -1, -1 }, go[2] = { -1, -1 }, take[2] = { -1, -1 };
	c->pid = -1;
	c->pidfd = c->report_fd = c->go_fd = c->take_fd = -1;
	/* a warm cell's job waits on the take pipe: init writes it after sizing the scratch anew,
	 * or the supervisor does itself (container_take) */
	if (pipe2(rep, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 || (s->warm && pipe2(take, O_CLOEXEC) < 0)) {
		int e = errno;
		closep(&rep[0]);
		closep(&rep[1]);
		closep(&go[0]);
		closep(&go[1]);
		drop_prepared(c);
		return error_set(err, e, "cannot create pipes for the cell");
	}
	int pidfd = -1;
	x->netns_sock = c->netns_sock;
	struct clone_args a = {
		.flags = clone_ns_flags(s, x->netns_sock >= 0) | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)&pidfd,
		.exit_signal = SIGCHLD,
	};
	if (c->cgroup_fd >= 0) {
		a.flags |= CLONE_INTO_CGROUP;
		a.cgroup = (uint64_t)c->cgroup_fd;
	}
	pid_t pid = clone_init(s, &a);
	if (pid < 0) {
		int e = errno;
		close(rep[0]);
		close(rep[1]);
		close(go[0]);
		close(go[1]);
		closep(&take[0]);
		closep(&take[1]);
		drop_prepared(c);
		return clone_failed(s, e, err);
	}
	if (pid == 0) {
		close(rep[0]);
		close(go[1]);
		x->report = rep[1];
		x->take_r = take[0];
		x->take_w = take[1];
		init_main(x, io, go[0]);
	}
	close(rep[1]);
	close(go[0]);
	closep(&take[0]);
	drop_prepared(c);
	c->pid = pid;
	c->pidfd = pidfd;
	c->report_fd = rep[0];
	c->go_fd = go[1];
	c->take_fd = take[1];
	c->made_scratch = s->limits.scratch;
	return 0;
}

int container_release(struct cell *c)
{
	if (c->go_fd < 0)
		return 0;
	ssize_t w = write(c->go_fd, "g", 1);
	/* keep go_fd open: its closing tells a not-yet-armed init that we died */
	return w == 1 ? 0 : -errno;
}

int container_take(struct cell *c, uint64_t scratch, bool direct)
{
	/* a run of the cell's scratch size: its job is started from here (one wake-up fewer on
	 * the way to its exec), then init is let go */
	bool relay = scratch != c->made_scratch || c->take_fd < 0;
	/* a job that is gone (EPIPE): init finds it so when it relays, and says why the cell
	 * failed */
	if (!relay && write(c->take_fd, direct ? "d" : "x", 1) != 1)
		relay = true;
	closep(&c->take_fd);
	struct take_msg m = { .tag = 'w', .scratch = scratch, .direct = direct, .relay = relay };
	ssize_t w = c->go_fd < 0 ? -1 : write(c->go_fd, &m, sizeof m);
	return w == (ssize_t)sizeof m ? 0 : -EPIPE;
}

int container_signal_children(const struct cell *c, int sig)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)c->pid, (int)c->pid);
	_cleanup_free_ char *list = read_file(path, NULL);
	if (!list)
		return -errno;
	int n = 0;
	for (char *p = list, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0 && kill((pid_t)pid, sig) == 0)
			n++;
	}
	return n;
}

/* A helper has CELL_HELPER_END_MS once the cell is gone to end (a VM's relay passes on what
 * the guest sent before): one that does not is killed. A hostile guest can leave its relay
 * blocked on the runner, whose process is the one waiting here. */
static void reap_helper(pid_t pid)
{
	_cleanup_close_ int pfd = sys_pidfd_open(pid, 0);
	struct pollfd p = { .fd = pfd, .events = POLLIN };
	if (pfd >= 0 && poll(&p, 1, CELL_HELPER_END_MS) == 0)
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

void cell_reap_ended_helpers(struct cell *c)
{
	for (size_t i = 0; i < c->n_helpers; i++) {
		siginfo_t si = { 0 };
		if (c->helpers[i].pid <= 0 ||
		    waitid(P_PID, (id_t)c->helpers[i].pid, &si, WEXITED | WNOHANG) < 0 || si.si_pid != c->helpers[i].pid)
			continue;
		if (c->helpers[i].stack)
			helper_stack_free(c->helpers[i].stack);
		c->helpers[i] = (struct cell_helper){ -1, NULL };
	}
}

void cell_reap_helpers(struct cell *c)
{
	for (size_t i = 0; i < c->n_helpers; i++)
		if (c->helpers[i].pid > 0) {
			reap_helper(c->helpers[i].pid);
			if (c->helpers[i].stack)  /* (after: the helper ran on it) */
				helper_stack_free(c->helpers[i].stack);
		}
	free(c->helpers);
	c->helpers = NULL;
	c->n_helpers = 0;
}

void cell_close(struct cell *c)
{
	drop_prepared(c); /* (the supervisor failed before init's clone) */
	cell_reap_helpers(c);
	closep(&c->pidfd);
	closep(&c->report_fd);
	closep(&c->go_fd);
	closep(&c->take_fd);
	free(c->ctx);
	c->ctx = NULL;
}
