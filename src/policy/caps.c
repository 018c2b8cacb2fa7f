/* SPDX-License-Identifier: Apache-2.0 */
/* caps.c - the job's capabilities and resource limits, set by the job process just before it
 * executes the job: a non-root job holds no capability in any set, `--user 0` keeps a small
 * documented set inside its own user namespace; core dumps off unless --core; RLIMIT_NOFILE
 * sane. The bounding set of a non-root job is dropped by the driver before it leaves uid 0
 * (that needs CAP_SETPCAP) and checked here.
 *
 * Plain prctl/capget/capset rather than libcap here: this runs in a freshly cloned process
 * where every code page and allocation costs a page fault, and it needs no more than that. */
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/sys.h"

/* Docker's default set without NET_RAW, MKNOD and SETFCAP. Inside the job's own user
 * namespace, which owns no mount, network, uts or ipc namespace of the cell: they reach files
 * of ids mapped into the cell and processes of the cell, never the host. */
const int policy_root_caps[] = {
	CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_KILL, CAP_SETGID, CAP_SETUID,
	CAP_SETPCAP, CAP_NET_BIND_SERVICE, CAP_SYS_CHROOT, CAP_AUDIT_WRITE,
};
const size_t policy_root_caps_n = sizeof policy_root_caps / sizeof policy_root_caps[0];

#define NOFILE_SOFT 1024
#define NOFILE_HARD_MAX 524288
/* capabilities the kernel may know (64 bits of sets); prctl says EINVAL beyond the last */
#define CAP_BITS 64

int policy_set_rlimits(const struct policy_ctx *s, struct error *err)
{
	if (!s->policy->core) {
		struct rlimit core = { 0, 0 };
		if (setrlimit(RLIMIT_CORE, &core) < 0)
			return error_set(err, errno, "cannot turn core dumps off (RLIMIT_CORE)");
	}
	struct rlimit nf;
	if (getrlimit(RLIMIT_NOFILE, &nf) < 0)
		return error_set(err, errno, "cannot read RLIMIT_NOFILE");
	if (nf.rlim_max == RLIM_INFINITY || nf.rlim_max > NOFILE_HARD_MAX)
		nf.rlim_max = NOFILE_HARD_MAX;
	/* select() cannot handle descriptors from 1024 on: the soft limit stays there, a job
	 * that needs more raises it itself */
	nf.rlim_cur = nf.rlim_max < NOFILE_SOFT ? nf.rlim_max : NOFILE_SOFT;
	if (setrlimit(RLIMIT_NOFILE, &nf) < 0)
		return error_set(err, errno, "cannot set RLIMIT_NOFILE to %llu/%llu", (unsigned long long)nf.rlim_cur,
				 (unsigned long long)nf.rlim_max);
	return 0;
}

static uint64_t root_mask(void)
{
	uint64_t m = 0;
	for (size_t i = 0; i < policy_root_caps_n; i++)
		m |= 1ULL << policy_root_caps[i];
	return m;
}

static int capset_all(uint64_t eff, uint64_t prm, uint64_t inh)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ (uint32_t)eff, (uint32_t)prm, (uint32_t)inh },
		{ (uint32_t)(eff >> 32), (uint32_t)(prm >> 32), (uint32_t)(inh >> 32) },
	};
	return sys_capset(&h, d);
}

/* Name of a capability for a message (the error path only: libcap's table). */
static const char *cap_name(int cap, char *buf, size_t n)
{
	char *name = cap_to_name((cap_value_t)cap);
	snprintf(buf, n, "%s", name ? name : "?");
	cap_free(name);
	return buf;
}

/* The bounding set, from /proc/self/status (one read rather than a prctl per capability). */
static int read_bounding(uint64_t *out)
{
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	const char *l = strstr(buf, "\nCapBnd:\t");
	if (!l)
		return -EIO;
	*out = strtoull(l + 9, NULL, 16);
	return 0;
}

/* Every capability set of this process holds exactly want (inheritable and ambient none:
 * ambient was cleared). */
static int caps_check(uint64_t want, struct error *err)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	if (sys_capget(&h, d) < 0)
		return error_set(err, errno, "cannot read the job's capabilities");
	uint64_t eff = d[0].effective | (uint64_t)d[1].effective << 32;
	uint64_t prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	uint64_t inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	uint64_t bnd;
	int r = read_bounding(&bnd);
	if (r < 0)
		return error_set(err, -r, "cannot read the job's bounding set (/proc/self/status)");
	uint64_t bad = (eff ^ want) | (prm ^ want) | inh | (bnd ^ want);
	if (bad) {
		int cap = __builtin_ctzll(bad);
		uint64_t bit = 1ULL << cap;
		char name[32];
		return error_set(err, 0, "the job would hold capability %s in a way it must not (effective %d, permitted %d, "
				 "inheritable %d, bounding %d); refusing to start it", cap_name(cap, name, sizeof name),
				 !!(eff & bit), !!(prm & bit), !!(inh & bit), !!(bnd & bit));
	}
	return 0;
}

/* Keep exactly want in every set: ambient cleared, the bounding set cut to want when
 * drop_bounding (that needs CAP_SETPCAP), effective and permitted want, inheritable none. */
static int caps_keep(uint64_t want, bool drop_bounding, struct error *err)
{
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return error_set(err, errno, "cannot clear the ambient capabilities");
	for (int cap = 0; drop_bounding && cap < CAP_BITS; cap++) {
		if (want & (1ULL << cap))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
			if (errno == EINVAL)
				break;
			char name[32];
			return error_set(err, errno, "cannot drop %s from the bounding set", cap_name(cap, name, sizeof name));
		}
	}
	if (capset_all(want, want, 0) < 0)
		return error_set(err, errno, "cannot set the capabilities");
	return caps_check(want, err);
}

int policy_set_caps(const struct policy_ctx *s, struct error *err)
{
	/* a non-root job still holds, until it executes the job, what its user namespace gave
	 * it: leaving the host's uid 0 is not leaving root of this namespace */
	return caps_keep(s->uid == 0 ? root_mask() & ~s->policy->caps_drop : 0, s->uid == 0, err);
}

int policy_drop_all_caps(struct error *err)
{
	return caps_keep(0, true, err);
}
