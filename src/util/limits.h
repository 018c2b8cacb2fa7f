/* SPDX-License-Identifier: Apache-2.0 */
/* limits.h - the limits of one run as plain numbers, in the lowest layer: the cgroup layer
 * sets them, the cell spec, the supervisor and the record read them. */
#ifndef WARREN_UTIL_LIMITS_H
#define WARREN_UTIL_LIMITS_H

#include <stdint.h>

/* Limits; 0 means "not set". */
struct limits {
	uint64_t time_ms;     /* wall clock */
	uint64_t cpu_ms;      /* CPU time over all processes of the cell */
	uint64_t memory;      /* bytes, memory + swap */
	uint64_t pids;        /* processes and threads */
	uint64_t output;      /* bytes written to stdout + stderr */
	uint64_t scratch;     /* bytes in tmp + home + upper */
	uint64_t grace_ms;    /* SIGTERM -> SIGKILL */
	/* CPU bandwidth and placement (0 and "": none; no defaults) */
	uint64_t cpu_quota_us;  /* CPU time of every cpu_period_us (--cpus 1.5: 150000 of 100000) */
	uint64_t cpu_period_us;
	uint64_t cpu_shares;    /* v1 cpu.shares (2-262144); v2's cpu.weight mapped from it */
	char cpuset[128];       /* cpuset.cpus ("0-1,3"), a subset of the host's online CPUs */
	char cpumems[64];       /* cpuset.mems */
};

#endif
