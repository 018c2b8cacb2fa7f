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
};

#endif
