/* SPDX-License-Identifier: Apache-2.0 */
/* version.c - `warren --version`: the version (from debian/changelog, the one source the
 * Makefile reads) and what this build and this host offer a cell: the libraries built in, the
 * Landlock ABI, the cgroup mode, seccomp user notification (the write watch), user
 * namespaces, mount_setattr (idmapped mounts) and pasta (rootless --net nat). Each line is
 * "name: value", one per feature, for people and scripts alike. */
#include <errno.h>
#include <jansson.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml.h>
#include <linux/magic.h>

#include "cli/cli.h"
#include "net/net.h"
#include "policy/policy.h"
#include "util/sys.h"

#ifndef WARREN_VERSION
#define WARREN_VERSION "unknown"
#endif

/* "v2", "v1" (legacy: no cgroup2 mount), "hybrid" (v1 controllers and a cgroup2 tree at
 * /sys/fs/cgroup/unified), or "none". */
static const char *cgroup_mode(void)
{
	struct statfs fs;
	if (statfs("/sys/fs/cgroup", &fs) < 0)
		return "none";
	if (fs.f_type == CGROUP2_SUPER_MAGIC)
		return "v2";
	if (statfs("/sys/fs/cgroup/unified", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
		return "hybrid";
	return fs.f_type == TMPFS_MAGIC ? "v1" : "none";
}

/* The kernel knows SECCOMP_RET_USER_NOTIF (Linux 5.0; CONTINUE, which the watch needs: 5.5). */
static bool seccomp_notify(void)
{
	unsigned action = SECCOMP_RET_USER_NOTIF;
	return sys_seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/* Can this user make a user namespace (a child tries)? */
static bool user_namespaces(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
	int st;
	return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* mount_setattr(2) exists (Linux 5.12): an invalid call fails with EBADF, not ENOSYS. */
static bool mount_setattr_present(void)
{
	return sys_mount_setattr(-1, "", 0, NULL) < 0 && errno != ENOSYS;
}

const char *warren_version(void)
{
	return WARREN_VERSION;
}

int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	const struct scmp_version *sv = seccomp_version();
	struct utsname u;
	uname(&u);
	printf("warren %s\n", WARREN_VERSION);
	printf("build: libseccomp %u.%u.%u, jansson %s, libyaml %s, libnl-route-3; libnftables loaded when --net needs it\n",
	       sv->major, sv->minor, sv->micro, JANSSON_VERSION, yaml_get_version_string());
	printf("kernel: %s %s\n", u.sysname, u.release);
	int abi = landlock_abi();
	if (abi > 0)
		printf("landlock: ABI %d\n", abi);
	else
		printf("landlock: no (the kernel lacks it or it is not in lsm=)\n");
	printf("cgroup: %s\n", cgroup_mode());
	printf("seccomp user notification: %s\n", seccomp_notify() ? "yes (refused writes are recorded)" : "no");
	printf("user namespaces: %s\n", user_namespaces() ? "yes" : "no (see 'warren selfcheck')");
	printf("idmapped mounts: %s\n", mount_setattr_present() ? "yes (mount_setattr; each file system must support them too)" : "no (kernel older than 5.12)");
	char *pasta = pasta_find();
	printf("pasta: %s\n", pasta ? pasta : "no (rootless --net nat needs the Debian package passt)");
	free(pasta);
	return 0;
}
