/* SPDX-License-Identifier: Apache-2.0 */
/* gate_ns.c - the one gate (gate.h) for namespaces: a pod's network, IPC, UTS or PID namespace
 * an OCI bundle names to join (linux.namespaces[].path), or the host's, which a bundle asks for
 * by leaving the namespace out (a pod's hostNetwork, hostIPC, hostPID). A path must be a
 * namespace (nsfs) of the type it is named as, and not the host's own (its pid 1's, or the
 * caller's: a bind mount of /proc/1/ns/net is the host's network by another name); the host's
 * namespaces only where the node's operator allows them (warren.conf, oci.host_network...).
 * Only a root caller joins: a rootless cell's user namespace has no power over another's. */
#include "cell/gate.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "util/fs.h"

#ifndef NSFS_MAGIC
#define NSFS_MAGIC 0x6e736673
#endif

static const struct {
	const char *type, *proc, *field, *key;
	int flag;
} KINDS[GATE_NS_KINDS] = {
	[GATE_NS_NET] = { "network", "net", "hostNetwork", "oci.host_network", CLONE_NEWNET },
	[GATE_NS_IPC] = { "ipc", "ipc", "hostIPC", "oci.host_ipc", CLONE_NEWIPC },
	/* a pod with the host's network has the host's UTS namespace (its hostname) too */
	[GATE_NS_UTS] = { "uts", "uts", "hostNetwork", "oci.host_network", CLONE_NEWUTS },
	[GATE_NS_PID] = { "pid", "pid", "hostPID", "oci.host_pid", CLONE_NEWPID },
};

const char *gate_ns_type_name(enum gate_ns_kind k) { return KINDS[k].type; }
const char *gate_ns_proc_name(enum gate_ns_kind k) { return KINDS[k].proc; }
const char *gate_ns_pod_field(enum gate_ns_kind k) { return KINDS[k].field; }
const char *gate_ns_conf_key(enum gate_ns_kind k) { return KINDS[k].key; }
int gate_ns_clone_flag(enum gate_ns_kind k) { return KINDS[k].flag; }

/* ---- the decision ---- */

enum gate_reason gate_decide_ns(const struct gate_ask *a, const struct gate_ns_facts *f)
{
	if (f->given && (!f->nsfs || f->open_errno))
		return GATE_NS_NOT_NS;
	if (f->given && f->type != KINDS[f->kind].flag)
		return GATE_NS_WRONG_TYPE;
	if ((!f->given || f->host) && !f->host_allowed)
		return GATE_NS_HOST;
	/* rootless, the cell's own user namespace owns its namespaces: none of another's, nor
	 * the host's, can be had (the kernel's setns asks for CAP_SYS_ADMIN over their owner) */
	if (a->uid != 0)
		return GATE_NS_ROOTLESS;
	return GATE_OK;
}

/* ---- the message ---- */

static const char *type_of_flag(int flag)
{
	for (int k = 0; k < GATE_NS_KINDS; k++)
		if (KINDS[k].flag == flag)
			return KINDS[k].type;
	return flag == CLONE_NEWUSER ? "user" : flag == CLONE_NEWNS ? "mount" : flag == CLONE_NEWCGROUP ? "cgroup" : "time";
}

static char *host_text(const struct gate_ns_facts *f)
{
	const char *t = KINDS[f->kind].type, *field = KINDS[f->kind].field, *key = KINDS[f->kind].key;
	if (f->given)
		return xasprintf("the host's own %s namespace, which is the pod's %s: refused to untrusted pods; give the pod's own "
				 "namespace, or the node's operator allows it with '%s = allow' in " "/etc/warren/warren.conf", t, field, key);
	return xasprintf("no %s namespace: the bundle asks for the host's (the pod's %s), refused to untrusted pods; give the "
			 "bundle a %s namespace, or the node's operator allows it with '%s = allow' in /etc/warren/warren.conf",
			 t, field, t, key);
}

static char *reason_text(enum gate_reason r, const struct gate_ns_facts *f)
{
	const char *t = KINDS[f->kind].type;
	switch (r) {
	case GATE_NS_NOT_NS:
		if (f->open_errno)
			return xasprintf("cannot open it (%s); give the file of the pod's %s namespace (a bind mount such as "
					 "/run/netns/NAME, or /proc/PID/ns/%s)", strerror(f->open_errno), t, KINDS[f->kind].proc);
		return xasprintf("not a namespace; give the file of the pod's %s namespace (a bind mount such as /run/netns/NAME, "
				 "or /proc/PID/ns/%s)", t, KINDS[f->kind].proc);
	case GATE_NS_WRONG_TYPE:
		return xasprintf("a%s %s namespace, not a%s %s namespace; give the pod's %s namespace", f->type == CLONE_NEWIPC ? "n" : "",
				 type_of_flag(f->type), f->kind == GATE_NS_IPC ? "n" : "", t, t);
	case GATE_NS_HOST:
		return host_text(f);
	case GATE_NS_ROOTLESS:
		return f->given ? xasprintf("a rootless warren-runc cannot join a namespace (its cell's user namespace has no power "
					    "over another's); run warren-runc as root")
				: xasprintf("no %s namespace (the host's): a rootless warren-runc makes every namespace of its cell "
					    "itself; give the bundle a %s namespace, or run warren-runc as root", t, t);
	default:
		return xstrdup("allowed");
	}
}

char *gate_ns_message(enum gate_reason r, const struct gate_ns_facts *f, const char *opt, const char *path)
{
	_cleanup_free_ char *why = reason_text(r, f);
	if (!f->given)
		return xasprintf("%s: %s", opt, why);
	return xasprintf("%s (%s) path %s: %s", opt, KINDS[f->kind].type, path, why);
}

/* ---- the facts ---- */

/* Is the namespace open at fd the one of /proc/<who>/ns/<kind>? */
static bool same_ns(const struct stat *st, const char *who, enum gate_ns_kind k)
{
	char p[64];
	struct stat o;
	snprintf(p, sizeof p, "/proc/%s/ns/%s", who, KINDS[k].proc);
	return stat(p, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

int gate_ns_open(const char *path, struct gate_ns_facts *f)
{
	f->given = true;
	/* O_PATH first: what is no namespace is never opened for reading (a FIFO would block, a
	 * device would be opened); a namespace is then opened again, for setns, through its fd */
	_cleanup_close_ int p = open(path, O_PATH | O_CLOEXEC);
	struct statfs fs;
	if (p < 0) {
		f->open_errno = errno;
		return -1;
	}
	f->nsfs = fstatfs(p, &fs) == 0 && fs.f_type == NSFS_MAGIC;
	if (!f->nsfs)
		return -1;
	char by_fd[64];
	snprintf(by_fd, sizeof by_fd, "/proc/self/fd/%d", p);
	int fd = open(by_fd, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		f->open_errno = errno;
		closep(&fd);
		return -1;
	}
	int t = ioctl(fd, NS_GET_NSTYPE);
	f->type = t > 0 ? t : 0;
	f->host = same_ns(&st, "1", f->kind) || same_ns(&st, "self", f->kind);
	return fd;
}

int gate_check_ns(const struct gate_ask *a, enum gate_ns_kind kind, const char *path, const char *name, bool host_allowed,
		  const char *opt, int *fd, struct error *err)
{
	struct gate_ns_facts f = { .kind = kind, .host_allowed = host_allowed };
	*fd = path ? gate_ns_open(path, &f) : -1;
	enum gate_reason r = gate_decide_ns(a, &f);
	if (r == GATE_OK && f.host)
		closep(fd);   /* the host's, allowed: the cell stays in it, as when left out */
	if (r == GATE_OK)
		return 0;
	closep(fd);
	_cleanup_free_ char *m = gate_ns_message(r, &f, opt, name ? name : path);
	error_set(err, 0, "%s", m);
	return -EPERM;
}
