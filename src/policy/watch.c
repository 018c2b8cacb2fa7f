/* SPDX-License-Identifier: Apache-2.0 */
/* watch.c - the write watch, job side: a second seccomp filter that hands the job's write-side
 * path calls (open/openat with a write flag or O_CREAT, creat, mkdir, unlink, rename, link,
 * symlink, truncate, chmod, chown, utimes, setxattr...) to the supervisor as user
 * notifications, so that it can record the writes the cell refuses (supervise/refused.c);
 * and connect() when its address may name a unix socket by path (the host's, which the cell
 * cannot reach: cell/container/hostroot.c). seccomp cannot read the address, only its length: a
 * pathname one is 3 to 110 bytes long, and the lengths of AF_INET (16) and AF_INET6 (28)
 * stay in the kernel, so TCP and UDP connects are never handed over (a unix address padded
 * to 16 or 28 bytes is not recorded, and is refused all the same).
 * utimensat with no path (futimens) changes an open file, as fchmod, fchown and ftruncate
 * do: like them it is not handed over (tar calls it once per file it extracts).
 * The filter decides nothing: the supervisor always answers "continue" and the kernel then
 * decides as it would without it. A call the profile's filter refuses fails with the profile's
 * errno (ERRNO outranks USER_NOTIF whatever the order of the filters) and is never seen.
 * Read-only opens, reads, writes on open files and every other call never leave the kernel.
 *
 * Written as classic BPF by hand rather than with libseccomp: the listener must be created
 * with SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, which libseccomp exposes only from 2.6
 * (Debian 12 has 2.5.4), and the program is 56 instructions on x86-64. */
#include "policy/policy.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "util/fs.h"
#include "util/sys.h"

#if defined(__x86_64__)
#define WATCH_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define WATCH_ARCH AUDIT_ARCH_AARCH64
#endif

/* open flags that make an open a write (or a create) */
#define WATCH_OPEN_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)

/* connect() address lengths: a unix pathname address (offsetof sun_path + 1 to sizeof
 * struct sockaddr_un), and the inet ones that never are handed over */
#define WATCH_UNIX_MIN 3
#define WATCH_UNIX_MAX 110
#define WATCH_INET_LEN 16
#define WATCH_INET6_LEN 28

/* The calls handed over whatever their arguments. */
static const int watch_always[] = {
#ifdef __NR_creat
	__NR_creat,
#endif
#ifdef __NR_mkdir
	__NR_mkdir, __NR_mknod, __NR_rmdir, __NR_unlink, __NR_rename, __NR_link, __NR_symlink,
	__NR_chmod, __NR_chown, __NR_lchown, __NR_utime, __NR_utimes, __NR_futimesat,
#endif
	__NR_openat2, __NR_mkdirat, __NR_mknodat, __NR_unlinkat, __NR_renameat, __NR_renameat2,
	__NR_linkat, __NR_symlinkat, __NR_truncate, __NR_fchmodat, __NR_fchmodat2, __NR_fchownat,
	__NR_setxattr, __NR_lsetxattr, __NR_removexattr, __NR_lremovexattr,
	__NR_setxattrat, __NR_removexattrat,
};

#define NALWAYS (sizeof watch_always / sizeof watch_always[0])
#define ARG_LO(n) (offsetof(struct seccomp_data, args) + (n) * sizeof(__u64))
#define ARG_HI(n) (ARG_LO(n) + sizeof(__u32))   /* both arches above are little-endian */

int policy_watch_filter(struct sock_filter *f, size_t cap)
{
#ifndef WATCH_ARCH
	(void)f;
	(void)cap;
	return -ENOTSUP;
#else
	/* layout (classic BPF jumps only forward): arch check, nr load, open/openat/connect/
	 * utimensat tests, NALWAYS tests, allow, open: flags test, openat: flags test, connect:
	 * length tests, utimensat: path tests, notify, allow */
	size_t n = 0;
	const size_t n_total = 2 + 1 + 4 + NALWAYS + 1 + 4 + 5 + 4 + 2;
	if (cap < n_total)
		return -ENOSPC;
	const size_t allow = 7 + NALWAYS, l_open = allow + 1, l_openat = l_open + 2, l_connect = l_openat + 2,
		     l_utimens = l_connect + 5, notify = l_utimens + 4, allow2 = notify + 1;
	/* classic BPF jumps are 8 bits: the whole program must stay within reach */
	_Static_assert(2 + 1 + 4 + NALWAYS + 1 + 4 + 5 + 4 + 2 < 256, "the write watch's filter is too long for its jumps");
#define EMIT(code, jt, jf, k) (f[n] = (struct sock_filter){ (code), (jt), (jf), (k) }, n++)
#define TO(label) ((uint8_t)((label) - n - 1))
	EMIT(BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, arch));
	EMIT(BPF_JMP | BPF_JEQ | BPF_K, 0, TO(allow), WATCH_ARCH);
	EMIT(BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(struct seccomp_data, nr));
#ifdef __NR_open
	EMIT(BPF_JMP | BPF_JEQ | BPF_K, TO(l_open), 0, __NR_open);
#else
	EMIT(BPF_JMP | BPF_JEQ | BPF_K, TO(l_openat), 0, __NR_openat);
#endif
	EMIT(BPF_JMP | BPF_JEQ | BPF_K, TO(l_openat), 0, __NR_openat);
	EMIT(BPF_JMP | BPF_JEQ | BPF_K, TO(l_connect), 0, __NR_connect);
	EMIT(BPF_JMP | BPF_JEQ | BPF_K, TO(l_utimens), 0, __NR_utimensat);
	for (size_t i = 0; i < NALWAYS; i++)
		EMIT(BPF_JMP | BPF_JEQ | BPF_K, TO(notify), 0, (uint32_t)watch_always[i]);
	EMIT(BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW);                 /* allow */
	EMIT(BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG_LO(1));               /* open: flags */
	EMIT(BPF_JMP | BPF_JSET | BPF_K, TO(notify), TO(allow2), WATCH_OPEN_FLAGS);
	EMIT(BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG_LO(2));               /* openat: flags */
	EMIT(BPF_JMP | BPF_JSET | BPF_K, TO(notify), TO(allow2), WATCH_OPEN_FLAGS);
	EMIT(BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG_LO(2));               /* connect: addrlen */
	EMIT(BPF_JMP | BPF_JEQ | BPF_K, TO(allow2), 0, WATCH_INET_LEN);
	EMIT(BPF_JMP | BPF_JEQ | BPF_K, TO(allow2), 0, WATCH_INET6_LEN);
	EMIT(BPF_JMP | BPF_JGT | BPF_K, TO(allow2), 0, WATCH_UNIX_MAX);
	EMIT(BPF_JMP | BPF_JGE | BPF_K, TO(notify), TO(allow2), WATCH_UNIX_MIN);
	EMIT(BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG_LO(1));               /* utimensat: path */
	EMIT(BPF_JMP | BPF_JEQ | BPF_K, 0, TO(notify), 0);
	EMIT(BPF_LD | BPF_W | BPF_ABS, 0, 0, ARG_HI(1));
	EMIT(BPF_JMP | BPF_JEQ | BPF_K, TO(allow2), TO(notify), 0);
	EMIT(BPF_RET | BPF_K, 0, 0, SECCOMP_RET_USER_NOTIF);            /* notify */
	EMIT(BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW);                 /* allow2 */
#undef TO
#undef EMIT
	return (int)n;
#endif
}

/* Send the listener (or, when there is none, why) to the supervisor: 4 bytes of errno, and
 * the descriptor when errno is 0. */
static void send_listener(int sock, int fd, int errnum)
{
	int32_t e = errnum;
	fd_send(sock, fd, &e, sizeof e);
}

void policy_watch_writes(int sock)
{
	struct sock_filter f[96];
	int n = policy_watch_filter(f, sizeof f / sizeof f[0]);
	if (n < 0) {
		send_listener(sock, -1, -n);
		close(sock);
		return;
	}
	struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };
	/* once the supervisor has the call, only SIGKILL interrupts the wait (5.19+): a signal
	 * cannot make an open fail with EINTR because it was being looked at */
	int fd = sys_seccomp(SECCOMP_SET_MODE_FILTER,
			     SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
	if (fd < 0 && errno == EINVAL)
		fd = sys_seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	/* from here until the supervisor holds the listener no watched call may be made */
	send_listener(sock, (int)fd, fd < 0 ? errno : 0);
	if (fd >= 0)
		close((int)fd);
	close(sock);
}
