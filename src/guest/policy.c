/* SPDX-License-Identifier: Apache-2.0 */
/* policy.c - the host's policy made in the guest's cell: the kernel's files masked, the
 * worktree's protected paths read-only, and the job's Landlock ruleset from the host's rules
 * (policy/mask.c and policy/landlock.c on the host decide them). */
#include <inttypes.h>
#include <linux/landlock.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/sys.h"

#include "guest.h"

/* The kernel's files masked as in a container cell (the host's list, policy/mask.c): 'h' an
 * empty read-only directory or /dev/null, 'r' a /dev/null that refuses writes (read-only,
 * nodev: its open fails), 'o' read-only. In the cell's root; what is not there is skipped. */
void mask_kernel_files(const struct orders *o)
{
	for (size_t i = 0; i < o->nkmasks; i++) {
		char kind = o->kmasks[i][0], *path = o->kmasks[i] + 2;
		struct stat st;
		if (strlen(o->kmasks[i]) < 3 || lstat(path, &st) < 0)
			continue;
		const unsigned long ro = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
		if (kind == 'h' && S_ISDIR(st.st_mode))
			mount_or_die("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k");
		else if (kind == 'h' || kind == 'r')
			mount_or_die("/dev/null", path, NULL, MS_BIND, NULL);
		else
			mount_or_die(path, path, NULL, MS_BIND | MS_REC, NULL);
		if (kind != 'h')
			mount_or_die(NULL, path, NULL, ro, NULL);
	}
}

/* The worktree's protected paths as the host resolved them (policy/mask.c): each directory on
 * the way a mount of its own ('p': it cannot be renamed away), then each protected path
 * read-only ('l'). */
void protect_worktree(const struct orders *o)
{
	for (size_t i = 0; i < o->nprotect; i++) {
		char kind = o->protect[i][0], *path = o->protect[i] + 2;
		if (strlen(o->protect[i]) < 3 || access(path, F_OK) < 0)
			continue;
		mount_or_die(path, path, NULL, MS_BIND, NULL);
		if (kind == 'l')
			mount_or_die(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
	}
}

/* ---- Landlock: the host's rules (policy/landlock.c), the ruleset made here ---- */

struct ll_attr {
	uint64_t fs, net, scoped;
};

/* The ruleset of the job from the orders' rules, with what the host said this kernel's ABI
 * handles; -1 when the kernel has no Landlock (refused with landlock-require). Paths are in
 * the cell's root, which the init has entered. */
int make_landlock(const struct orders *o)
{
	long abi = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1) {
		if (o->ll_require)
			die(0, "--require-landlock: the guest's kernel has no Landlock");
		return -1;
	}
	struct ll_attr a = { 0 };
	int best = 0;
	for (size_t i = 0; i < o->nll_abis; i++) {
		int n;
		struct ll_attr x;
		if (sscanf(o->ll_abis[i], "%d %" SCNx64 " %" SCNx64 " %" SCNx64, &n, &x.fs, &x.net, &x.scoped) == 4 && n <= abi && n > best)
			best = n, a = x;
	}
	if (!best)
		return -1;
	size_t size = best >= 6 ? sizeof a : best >= 4 ? offsetof(struct ll_attr, scoped) : offsetof(struct ll_attr, net);
	int rs = sys_landlock_create_ruleset(&a, size, 0);
	if (rs < 0)
		die(errno, "cannot create a Landlock ruleset (ABI %d)", best);
	for (size_t i = 0; i < o->nll_rules; i++) {
		char *path = NULL;
		unsigned long long access = strtoull(o->ll_rules[i], &path, 16);
		path = path && *path == ' ' ? path + 1 : NULL;
		int fd = path ? open(path, O_PATH | O_CLOEXEC) : -1;
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0 || !path || (errno != ENOENT && errno != ENOTDIR))
				die(errno, "Landlock: cannot open %s", path ? path : o->ll_rules[i]);
			continue; /* not in this root: no rule */
		}
		struct landlock_path_beneath_attr pb = { .allowed_access = access & a.fs, .parent_fd = fd };
		if (!S_ISDIR(st.st_mode))
			pb.allowed_access &= o->ll_file;
		if (pb.allowed_access && sys_landlock_add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
			die(errno, "Landlock: cannot add the rule for %s", path);
		close(fd);
	}
	return rs;
}
