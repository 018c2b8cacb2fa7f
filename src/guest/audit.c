/* SPDX-License-Identifier: Apache-2.0 */
/* audit.c - the record of the job's refused writes in the guest: the init is the guest
 * kernel's audit daemon, counts the write-side calls refused (EROFS, EACCES) by path and
 * reports them to the host at the end. */
#include <linux/audit.h>
#include <linux/landlock.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell/contract.h"

#include "guest.h"

/* The guest's kernel is the job's alone, so its audit tells what the container's write watch
 * judges (supervise/refused.c): the init is the audit daemon, with rules for the write-side
 * path calls (opens only with a write flag) that fail with EROFS (a read-only mount: the
 * host's /, an image, --work-ro, a protected path) or EACCES (Landlock; a refusal by the
 * file's mode inside the places the job may write is not the cell's and is left out). */
#define REFUSED_MAX 100 /* distinct paths kept, as the host's REFUSED_MAX_PATHS */

struct refused_w {
	char *path;
	unsigned long long count;
	bool prot;
};
static struct refused_w refused[REFUSED_MAX];
static size_t n_refused;
static unsigned long long refused_total;
static int audit_fd = -1;

static const int audit_calls[] = {
	__NR_creat, __NR_mkdir, __NR_mkdirat, __NR_mknod, __NR_mknodat, __NR_rmdir, __NR_unlink, __NR_unlinkat,
	__NR_rename, __NR_renameat, __NR_renameat2, __NR_link, __NR_linkat, __NR_symlink, __NR_symlinkat,
	__NR_truncate, __NR_chmod, __NR_fchmodat, __NR_chown, __NR_lchown, __NR_fchownat, __NR_utime, __NR_utimes,
	__NR_utimensat, __NR_futimesat, __NR_setxattr, __NR_lsetxattr, __NR_removexattr, __NR_lremovexattr,
};

int audit_socket(void)
{
	return audit_fd;
}

/* One audit rule: the calls (nr < 0: the list above), the exit value, and for an open the
 * argument that holds its flags (-1: none). */
static int audit_rule(int nr, int err, int flags_arg)
{
	struct {
		struct nlmsghdr h;
		struct audit_rule_data r;
	} m = { .h = { .nlmsg_len = sizeof m, .nlmsg_type = AUDIT_ADD_RULE, .nlmsg_flags = NLM_F_REQUEST } };
	m.r.flags = AUDIT_FILTER_EXIT;
	m.r.action = AUDIT_ALWAYS;
	for (size_t i = 0; nr < 0 && i < sizeof audit_calls / sizeof audit_calls[0]; i++)
		m.r.mask[audit_calls[i] / 32] |= 1u << (audit_calls[i] % 32);
	if (nr >= 0)
		m.r.mask[nr / 32] |= 1u << (nr % 32);
	unsigned n = 0;
	m.r.fields[n] = AUDIT_ARCH, m.r.values[n] = AUDIT_ARCH_X86_64, m.r.fieldflags[n++] = AUDIT_EQUAL;
	m.r.fields[n] = AUDIT_EXIT, m.r.values[n] = (uint32_t)-err, m.r.fieldflags[n++] = AUDIT_EQUAL;
	if (flags_arg >= 0)
		m.r.fields[n] = AUDIT_ARG0 + (uint32_t)flags_arg, m.r.values[n] = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC,
		m.r.fieldflags[n++] = AUDIT_BIT_MASK;
	m.r.field_count = n;
	return send(audit_fd, &m, sizeof m, 0) == (ssize_t)sizeof m ? 0 : -1;
}

/* Become the guest's audit daemon with the rules; before the job is forked (a process forked
 * while audit is off is never audited). Without audit, no record (the host says none). */
void audit_start(void)
{
	audit_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT);
	struct {
		struct nlmsghdr h;
		struct audit_status st;
	} m = { .h = { .nlmsg_len = sizeof m, .nlmsg_type = AUDIT_SET, .nlmsg_flags = NLM_F_REQUEST },
		/* a full backlog must not hold the job up: it is read as it comes, and what is lost is lost */
		.st = { .mask = AUDIT_STATUS_ENABLED | AUDIT_STATUS_PID | AUDIT_STATUS_BACKLOG_LIMIT | AUDIT_STATUS_BACKLOG_WAIT_TIME,
			.enabled = 1, .pid = (uint32_t)getpid(), .backlog_limit = 8192, .backlog_wait_time = 0 } };
	static const int errs[] = { EROFS, EACCES };
	bool ok = audit_fd >= 0 && send(audit_fd, &m, sizeof m, 0) == (ssize_t)sizeof m;
	for (size_t i = 0; ok && i < 2; i++)
		ok = audit_rule(-1, errs[i], -1) == 0 && audit_rule(__NR_openat, errs[i], 2) == 0 && audit_rule(__NR_open, errs[i], 1) == 0;
	if (!ok && audit_fd >= 0)
		close(audit_fd), audit_fd = -1;
}

/* The value of key="..." (or key=HEX) in an audit record, decoded (heap), or NULL. */
static char *audit_value(const char *rec, const char *key)
{
	char k[16];
	snprintf(k, sizeof k, " %s=", key);
	const char *v = strstr(rec, k);
	if (!v)
		return NULL;
	v += strlen(k);
	if (*v == '"')
		return strndup(v + 1, strcspn(v + 1, "\""));
	size_t n = strspn(v, "0123456789ABCDEF");
	char *out = calloc(1, n / 2 + 1);
	for (size_t i = 0; out && i + 1 < n; i += 2)
		sscanf(v + i, "%2hhx", (unsigned char *)&out[i / 2]);
	return out;
}

/* Which argument of call nr is the path it changes (a rename's or link's new name), and
 * which its directory fd (-1: none, relative to the working directory). */
static int audit_path_arg(long nr, int *dirfd_arg)
{
	*dirfd_arg = -1;
	switch (nr) {
	case __NR_link: case __NR_symlink: case __NR_rename: return 1;
	case __NR_symlinkat: *dirfd_arg = 1; return 2;
	case __NR_linkat: case __NR_renameat: case __NR_renameat2: *dirfd_arg = 2; return 3;
	case __NR_openat: case __NR_mkdirat: case __NR_mknodat: case __NR_unlinkat: case __NR_fchmodat:
	case __NR_fchownat: case __NR_utimensat: case __NR_futimesat: *dirfd_arg = 0; return 1;
	default: return 0;
	}
}

/* The path the call of the SYSCALL record rec named, read from its process (which may have
 * gone on: its path is usually still where it was), made absolute from its working directory
 * or directory fd; NULL when it cannot be read. */
static char *audit_call_path(const char *rec)
{
	const char *f[] = { " syscall=", " pid=", " a0=", " a1=", " a2=", " a3=" };
	unsigned long long v[6];
	for (size_t i = 0; i < 6; i++) {
		const char *p = strstr(rec, f[i]);
		if (!p)
			return NULL;
		v[i] = strtoull(p + strlen(f[i]), NULL, i < 2 ? 10 : 16);
	}
	int dirfd_arg, arg = audit_path_arg((long)v[0], &dirfd_arg);
	char path[4096], link[64], base[4096];
	size_t got = 0;
	while (got < sizeof path - 1) {
		size_t want = 4096 - ((v[2 + arg] + got) & 4095);
		want = want < sizeof path - 1 - got ? want : sizeof path - 1 - got;
		struct iovec l = { path + got, want }, r = { (void *)(uintptr_t)(v[2 + arg] + got), want };
		ssize_t n = process_vm_readv((pid_t)v[1], &l, 1, &r, 1, 0);
		if (n <= 0)
			return NULL;
		if (memchr(path + got, '\0', (size_t)n))
			break;
		got += (size_t)n;
	}
	path[sizeof path - 1] = '\0';
	if (path[0] == '/')
		return strdup(path);
	int dfd = dirfd_arg >= 0 ? (int)v[2 + dirfd_arg] : AT_FDCWD;
	if (dfd == AT_FDCWD)
		snprintf(link, sizeof link, "/proc/%llu/cwd", v[1]);
	else
		snprintf(link, sizeof link, "/proc/%llu/fd/%d", v[1], dfd);
	ssize_t bl = readlink(link, base, sizeof base - 1);
	char *abs = NULL;
	if (bl <= 0 || base[0] != '/')
		return NULL;
	base[bl] = '\0';
	return asprintf(&abs, "%s/%s", strcmp(base, "/") ? base : "", path) < 0 ? NULL : abs;
}

/* Is path at or under dir? */
static bool beneath(const char *path, const char *dir)
{
	size_t l = strlen(dir);
	while (l > 1 && dir[l - 1] == '/')
		l--;
	return !strncmp(path, dir, l) && (path[l] == '/' || !path[l] || l == 1);
}

/* Count the refused write of path (taken): not when EACCES came from the file's mode in a
 * place the job may write (a Landlock rule that lets it write files there). */
static void count_refused(const struct orders *o, char *path, int err)
{
	for (size_t i = 0; err == EACCES && i < o->nll_rules; i++) {
		char *p = NULL;
		unsigned long long access = strtoull(o->ll_rules[i], &p, 16);
		if (p && *p == ' ' && (access & LANDLOCK_ACCESS_FS_WRITE_FILE) && beneath(path, p + 1)) {
			free(path);
			return;
		}
	}
	refused_total++;
	for (size_t i = 0; i < n_refused; i++)
		if (!strcmp(refused[i].path, path)) {
			refused[i].count++;
			free(path);
			return;
		}
	if (n_refused == REFUSED_MAX) {
		free(path);
		return;
	}
	bool prot = false;
	for (size_t i = 0; i < o->nprotect; i++)
		prot |= o->protect[i][0] == 'l' && strlen(o->protect[i]) > 2 && beneath(path, o->protect[i] + 2);
	refused[n_refused++] = (struct refused_w){ .path = path, .count = 1, .prot = prot };
}

/* Read what the kernel audited: a call's records (SYSCALL, CWD, PATH...) end with EOE. */
void audit_read(const struct orders *o)
{
	static int err;
	static char *cwd, *name, *called;
	char buf[9000];
	ssize_t n;
	while (audit_fd >= 0 && (n = recv(audit_fd, buf, sizeof buf - 1, 0)) > 0) {
		buf[n] = '\0';
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		char *rec = buf + NLMSG_HDRLEN;
		if (h->nlmsg_type == AUDIT_SYSCALL) {
			char *e = strstr(rec, " exit=");
			err = e ? -atoi(e + 6) : 0;
			free(called);
			free(name), name = NULL;
			called = audit_call_path(rec);
		} else if (h->nlmsg_type == AUDIT_CWD) {
			free(cwd);
			cwd = audit_value(rec, "cwd");
		} else if (h->nlmsg_type == AUDIT_PATH) {
			char *v = audit_value(rec, "name"); /* the last named path: a rename's or link's target */
			if (v)
				free(name), name = v;
		} else if (h->nlmsg_type == AUDIT_EOE && (name || called)) {
			/* the path as the call named it; else the kernel's record of it (for a name
			 * not made, only its directory) */
			char *abs = called;
			if (!abs && (name[0] == '/' ? !(abs = strdup(name)) : asprintf(&abs, "%s/%s", cwd ? cwd : "", name) < 0))
				abs = NULL;
			if (abs)
				count_refused(o, abs, err);
			free(name), name = called = NULL;
		}
	}
}

/* Tell the host the refused writes ({"refused_writes": [[path, count, protected]...],
 * "total": N}), when the kernel audited them. */
void report_refused(void)
{
	if (audit_fd < 0)
		return;
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	if (!f)
		return;
	fputs("{\"" VM_REPORT_REFUSED "\":[", f);
	for (size_t i = 0; i < n_refused; i++) {
		fputs(i ? ",[" : "[", f);
		json_str(f, refused[i].path);
		fprintf(f, ",%llu,%s]", refused[i].count, refused[i].prot ? "true" : "false");
	}
	fprintf(f, "],\"" VM_REPORT_REFUSED_TOTAL "\":%llu}\n", refused_total);
	fclose(f);
	write_line(line);
	free(line);
}
