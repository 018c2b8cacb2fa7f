/* SPDX-License-Identifier: Apache-2.0 */
/* sys.h - the one home of raw system calls and of constants older C library and kernel
 * headers lack (as systemd's missing_syscall.h): openat2, the new mount API, pidfds, clone3,
 * Landlock, seccomp, capabilities, pivot_root, keyctl and finit_module, each wrapped once with
 * named flags. Each returns what the system call returns (-1 and errno on failure). Plain
 * libc and kernel headers only, so that the static guest init (src/guest) includes it too. */
#ifndef WARREN_UTIL_SYS_H
#define WARREN_UTIL_SYS_H

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- constants newer than some headers (the same on every architecture) ---- */

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
/* system calls the write watch's filter and its supervisor side name */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
/* linux/landlock.h of Debian 12 knows ABI 2; the later rights and scopes */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* ---- openat2 ---- */

/* Open path below dfd with flags (O_CLOEXEC always added) and RESOLVE_* flags. */
static inline int sys_openat2(int dfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = { .flags = flags | O_CLOEXEC, .resolve = resolve };
	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof how);
}

/* ---- the mount API ---- */

static inline int sys_open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static inline int sys_move_mount(int from_dfd, const char *from, int to_dfd, const char *to, unsigned flags)
{
	return (int)syscall(SYS_move_mount, from_dfd, from, to_dfd, to, flags);
}

/* attr NULL: a probe (size 0) */
static inline int sys_mount_setattr(int dfd, const char *path, unsigned flags, const struct mount_attr *attr)
{
	return (int)syscall(SYS_mount_setattr, dfd, path, flags, attr, attr ? sizeof *attr : 0);
}

/* Move the detached mount from onto the mount point to (both descriptors). */
static inline int sys_move_mount_fd(int from, int to)
{
	return sys_move_mount(from, "", to, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

/* Set attrs (MOUNT_ATTR_*) on the mount fd (flags: AT_RECURSIVE or 0). */
static inline int sys_mount_setattr_fd(int fd, uint64_t attrs, unsigned flags)
{
	struct mount_attr a = { .attr_set = attrs };
	return sys_mount_setattr(fd, "", AT_EMPTY_PATH | flags, &a);
}

static inline int sys_fsopen(const char *type, unsigned flags)
{
	return (int)syscall(SYS_fsopen, type, flags);
}

static inline int sys_fsconfig(int fs, unsigned cmd, const char *key, const void *value, int aux)
{
	return (int)syscall(SYS_fsconfig, fs, cmd, key, value, aux);
}

static inline int sys_fsmount(int fs, unsigned flags, uint64_t attrs)
{
	return (int)syscall(SYS_fsmount, fs, flags, attrs);
}

static inline int sys_pivot_root(const char *new_root, const char *put_old)
{
	return (int)syscall(SYS_pivot_root, new_root, put_old);
}

/* ---- processes ---- */

static inline pid_t sys_clone3(struct clone_args *a)
{
	return (pid_t)syscall(SYS_clone3, a, sizeof *a);
}

static inline int sys_pidfd_open(pid_t pid, unsigned flags)
{
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

static inline int sys_pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned flags)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, info, flags);
}

/* ---- Landlock, seccomp, capabilities, keys, modules ---- */

static inline int sys_landlock_create_ruleset(const void *attr, size_t size, uint32_t flags)
{
	return (int)syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

static inline int sys_landlock_add_rule(int ruleset, int type, const void *attr, uint32_t flags)
{
	return (int)syscall(SYS_landlock_add_rule, ruleset, type, attr, flags);
}

static inline int sys_landlock_restrict_self(int ruleset, uint32_t flags)
{
	return (int)syscall(SYS_landlock_restrict_self, ruleset, flags);
}

/* seccomp(2): SECCOMP_SET_MODE_FILTER (a listener fd with NEW_LISTENER), GET_ACTION_AVAIL, ... */
static inline int sys_seccomp(unsigned op, unsigned flags, void *args)
{
	return (int)syscall(SYS_seccomp, op, flags, args);
}

static inline int sys_capget(struct __user_cap_header_struct *h, struct __user_cap_data_struct *d)
{
	return (int)syscall(SYS_capget, h, d);
}

static inline int sys_capset(struct __user_cap_header_struct *h, const struct __user_cap_data_struct *d)
{
	return (int)syscall(SYS_capset, h, d);
}

/* A system call that leaves errno alone: -errno on failure. For a helper process in another
 * process's memory (CLONE_VM, no TLS of its own), whose errno is that process's main
 * thread's: syscall() would write it under that thread's feet. x86_64 and aarch64; elsewhere
 * syscall(), and the hazard is back (only when a call of the helper fails). */
static inline long sys_raw6(long n, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b, x2 __asm__("x2") = c,
		      x3 __asm__("x3") = d, x4 __asm__("x4") = e, x5 __asm__("x5") = f;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
	return x0;
#else
	long r = syscall(n, a, b, c, d, e, f);
	return r < 0 ? -errno : r;
#endif
}
#define sys_raw(n, a, b, c) sys_raw6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)

static inline long sys_keyctl(int op, unsigned long a2, unsigned long a3)
{
	return syscall(SYS_keyctl, op, a2, a3);
}

static inline int sys_finit_module(int fd, const char *params, int flags)
{
	return (int)syscall(SYS_finit_module, fd, params, flags);
}

/* CLOCK_MONOTONIC in ns: one clock for every process of the host (no time namespace is made),
 * so that init's steps and the supervisor's can be set side by side (the record's timings). A
 * VM guest's clock is its own kernel's: never compared with the host's. */
static inline int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static inline int64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return ts_ns(&t);
}

#endif
