/* SPDX-License-Identifier: Apache-2.0 */
/* rlimits: raise RLIMIT_NOFILE above its hard limit, RLIMIT_CORE (off in a cell) above 0,
 * other hard limits, and init's limits with prlimit. */
#include "attempt.h"
#include <sys/resource.h>

static void raise_above(int res_, const char *name)
{
	struct rlimit rl;
	getrlimit(res_, &rl);
	if (rl.rlim_max == RLIM_INFINITY) {
		tried(false, "%s: hard limit already unlimited, nothing to raise", name);
		return;
	}
	struct rlimit up = { rl.rlim_max + 1, rl.rlim_max + 1 };
	int r = setrlimit(res_, &up);
	tried(r == 0, "raising %s above its hard limit %llu: %s", name, (unsigned long long)rl.rlim_max, res(r));
}

int main(void)
{
	a_start("rlimits");
	struct rlimit core;
	getrlimit(RLIMIT_CORE, &core);
	tried(core.rlim_max != 0, "RLIMIT_CORE hard limit is %llu", (unsigned long long)core.rlim_max);
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
	int r = setrlimit(RLIMIT_CORE, &inf);
	tried(r == 0, "setting RLIMIT_CORE unlimited: %s", res(r));
	struct rlimit one = { 1 << 20, 1 << 20 };
	r = setrlimit(RLIMIT_CORE, &one);
	tried(r == 0, "setting RLIMIT_CORE to 1M: %s", res(r));
	raise_above(RLIMIT_NOFILE, "RLIMIT_NOFILE");
	struct rlimit big = { 1 << 30, 1 << 30 };
	r = setrlimit(RLIMIT_NOFILE, &big);
	tried(r == 0, "setting RLIMIT_NOFILE to 2^30: %s", res(r));
	raise_above(RLIMIT_NPROC, "RLIMIT_NPROC");
	raise_above(RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK");
	raise_above(RLIMIT_STACK, "RLIMIT_STACK");
	r = prlimit(1, RLIMIT_CORE, &inf, NULL);
	tried(r == 0, "prlimit(init, RLIMIT_CORE unlimited): %s", res(r));
	r = prlimit(1, RLIMIT_NOFILE, &big, NULL);
	tried(r == 0, "prlimit(init, RLIMIT_NOFILE 2^30): %s", res(r));
	finish();
}
