/* SPDX-License-Identifier: Apache-2.0 */
/* landlock.c - the job's Landlock domain: it may write its worktree, its scratch (/tmp,
 * /var/tmp, $HOME), /dev/{null,zero,full,tty,pts,shm} (and with --rootfs the whole overlay
 * root), and read and execute what else is mounted. The ABI is detected at run time and used
 * best effort down to ABI 1; without Landlock the run goes on unless --require-landlock.
 * With ABI >= 4 TCP bind/connect follow the network mode; with ABI >= 6 signals and abstract
 * unix sockets are scoped to the job's own domain. */
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cell/contract.h"
#include "util/sys.h"

/* The ABI 6 ruleset attribute (handled_access_net from ABI 4, scoped from ABI 6). */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define FS_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_EXEC LANDLOCK_ACCESS_FS_EXECUTE
#define FS_WRITE_FILE (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)
#define FS_WRITE_TREE (FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
		       LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
		       LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | \
		       LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_REFER)
/* the rights a rule on a file (not a directory) may carry */
#define FS_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
			LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

int landlock_abi(void)
{
	int abi = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : abi;
}

uint64_t landlock_fs_handled(int abi)
{
	if (abi < 1)
		return 0;
	uint64_t fs = FS_READ | FS_EXEC | FS_WRITE_TREE;
	/* ABI 1 cannot handle REFER: renames and links across directories are always refused */
	if (abi < 2)
		fs &= ~LANDLOCK_ACCESS_FS_REFER;
	if (abi < 3)
		fs &= ~LANDLOCK_ACCESS_FS_TRUNCATE;
	/* IOCTL_DEV (ABI 5) is left unhandled: device files exist only in the cell's /dev, and
	 * the terminal ioctls that matter (TIOCSTI, TIOCLINUX) are refused by seccomp */
	return fs;
}

uint64_t landlock_scoped(int abi)
{
	return abi >= 6 ? LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL : 0;
}

uint64_t landlock_net_handled(int abi, enum policy_net net)
{
	if (abi < 4)
		return 0;
	switch (net) {
	case POLICY_NET_ANY:
		return 0;
	case POLICY_NET_NONE:
		return LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
	}
	return 0;
}

/* Allow access beneath prefix+path; a path that does not exist is skipped. */
static int allow_path(int ruleset, const char *prefix, const char *path, uint64_t access, uint64_t handled,
		      struct error *err)
{
	_cleanup_free_ char *full = xasprintf("%s%s", prefix, path);
	int fd = open(*full ? full : "/", O_PATH | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		return error_set(err, errno, "Landlock: cannot open %s", path);
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return error_set(err, e, "Landlock: cannot stat %s", path);
	}
	if (!S_ISDIR(st.st_mode))
		access &= FS_FILE_RIGHTS;
	struct ll_path_beneath pb = { .allowed_access = access & handled, .parent_fd = fd };
	int r = pb.allowed_access ? sys_landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) : 0;
	int e = errno;
	close(fd);
	if (r < 0)
		return error_set(err, e, "Landlock: cannot add the rule for %s", path);
	return 0;
}

int landlock_rules(const struct policy_ctx *s, int (*fn)(void *arg, const char *path, uint64_t access), void *arg)
{
	const uint64_t rw = FS_READ | FS_EXEC | FS_WRITE_TREE;
	struct { const char *path; uint64_t access; } rules[] = {
		/* the rest of what is mounted: read and execute; with --rootfs the overlay root is the
		 * run's own (its upper layer is scratch): the job may write anywhere its ids allow */
		{ "/", s->rootfs ? rw : FS_READ | FS_EXEC },
		{ s->worktree, s->worktree_ro ? FS_READ | FS_EXEC : rw },
		{ CELL_TMP_PATH, rw },
		{ CELL_VARTMP_PATH, rw },
		{ s->home, rw },
		{ "/dev/shm", rw },
		{ "/dev/pts", FS_READ | FS_WRITE_FILE },
		{ "/dev/null", FS_READ | FS_WRITE_FILE },
		{ "/dev/zero", FS_READ | FS_WRITE_FILE },
		{ "/dev/full", FS_READ | FS_WRITE_FILE },
		{ "/dev/tty", FS_READ | FS_WRITE_FILE },
		/* procfs files are kernel interfaces with checks of their own (/proc/sys and the
		 * like are read-only mounts, the dangerous ones masked): writing /proc/self/... as
		 * programs do (oom_score_adj, comm) stays possible */
		{ "/proc", FS_READ | FS_WRITE_FILE },   /* with truncate: a shell's '>' opens O_TRUNC */
	};
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++)
		if (rules[i].path && fn(arg, rules[i].path, rules[i].access) < 0)
			return -EINVAL;
	/* --bind: read-write where it is mounted (--ro-bind: the read-only mount refuses) */
	for (size_t i = 0; i < s->n_mounts; i++)
		if (!s->mounts[i].readonly && fn(arg, s->mounts[i].destination, rw) < 0)
			return -EINVAL;
	return 0;
}

uint64_t landlock_file_rights(void) { return FS_FILE_RIGHTS; }

struct rule_ctx {
	int rs;
	const char *prefix;
	uint64_t handled;
	struct error *err;
};

static int add_rule(void *arg, const char *path, uint64_t access)
{
	struct rule_ctx *c = arg;
	return allow_path(c->rs, c->prefix, strcmp(path, "/") == 0 && *c->prefix ? "" : path, access, c->handled, c->err);
}

/* The ruleset of the job, its paths seen under prefix (the cell's root before pivot_root, or
 * "" inside the cell). -1 with err, or the ruleset's fd; *abi_out 0 without Landlock. */
static int make_ruleset(const struct policy_ctx *s, const char *prefix, int *abi_out, struct error *err)
{
	int abi = landlock_abi();
	*abi_out = abi;
	if (abi < 1) {
		if (s->policy->require_landlock)
			return error_set(err, 0, "--require-landlock: this kernel has no Landlock (it needs Linux 5.13 or later "
					 "with CONFIG_SECURITY_LANDLOCK and 'landlock' in the lsm= boot parameter); see 'warren selfcheck'");
		return -ENOSYS;
	}
	uint64_t fs = landlock_fs_handled(abi);
	struct ll_ruleset_attr attr = {
		.handled_access_fs = fs,
		.handled_access_net = landlock_net_handled(abi, s->policy->net),
		.scoped = landlock_scoped(abi),
	};
	size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? offsetof(struct ll_ruleset_attr, scoped)
							 : offsetof(struct ll_ruleset_attr, handled_access_net);
	int rs = sys_landlock_create_ruleset(&attr, size, 0);
	if (rs < 0)
		return error_set(err, errno, "cannot create a Landlock ruleset (ABI %d)", abi);

	struct rule_ctx c = { rs, prefix, fs, err };
	if (landlock_rules(s, add_rule, &c) < 0) {
		close(rs);
		return -EINVAL;
	}
	return rs;
}

/* Made by init while it builds the root, inherited by the job (a clone of init). */
static int prepared_ruleset = -1;
static int prepared_abi = -1;

int policy_landlock_allow_scratch(const struct policy_ctx *s, struct error *err)
{
	if (prepared_ruleset < 0)
		return 0;
	const uint64_t rw = FS_READ | FS_EXEC | FS_WRITE_TREE, fs = landlock_fs_handled(prepared_abi);
	const char *const paths[] = { CELL_TMP_PATH, CELL_VARTMP_PATH, s->home, "/dev/shm" };
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
		if (paths[i] && allow_path(prepared_ruleset, "", paths[i], rw, fs, err) < 0)
			return -EINVAL;
	return 0;
}

int policy_landlock_prepare(const struct policy_ctx *s, const char *root, struct error *err)
{
	int rs = make_ruleset(s, root, &prepared_abi, err);
	if (rs == -ENOSYS)
		return 0;
	if (rs < 0)
		return rs;
	prepared_ruleset = rs;
	return 0;
}

int policy_landlock(const struct policy_ctx *s, int *abi_out, struct error *err)
{
	int rs = prepared_ruleset, abi = prepared_abi;
	bool own = false;
	if (abi < 0) {
		/* not prepared by init: make it here, from inside the cell */
		rs = make_ruleset(s, "", &abi, err);
		if (rs == -ENOSYS)
			rs = -1;
		else if (rs < 0)
			return rs;
		own = true;
	}
	*abi_out = abi;
	if (rs < 0)
		return 0;  /* no Landlock on this kernel, and not required */
	int r = sys_landlock_restrict_self(rs, 0);
	int e = errno;
	if (own)
		close(rs);
	if (r < 0)
		return error_set(err, e, "cannot enter the Landlock domain (ABI %d)", abi);
	return 0;
}
