/* SPDX-License-Identifier: Apache-2.0 */
/* cpus.h - the words of a CPU limit: --cpus N (N CPUs' worth of time, docker's meaning) as a
 * CFS quota and period, a CPU list ("0-1,3") and whether it is a subset of the host's, and
 * the v1 shares as the v2 weight. Pure functions, and one that reads the host's online CPUs. */
#ifndef WARREN_UTIL_CPUS_H
#define WARREN_UTIL_CPUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define CPU_PERIOD_US 100000ull /* the period --cpus uses (docker's, the kernel's default) */
#define CPU_LIST_MAX 1024       /* the highest CPU number a list may name, plus one */

/* "1.5" -> quota 150000 of period 100000 (at most 3 decimals: 0.001 CPU); -EINVAL for what
 * is not a positive decimal, -ERANGE for less than 0.01 or more than ncpu. */
int cpus_quota(const char *v, unsigned ncpu, uint64_t *quota_us, uint64_t *period_us);
/* Parse a CPU (or memory node) list "0-3,5" into set (CPU_LIST_MAX bits); -EINVAL when it is
 * not one (empty, a range backwards, a number past CPU_LIST_MAX). */
int cpulist_parse(const char *list, uint8_t set[CPU_LIST_MAX / 8]);
/* Is list a subset of host (both lists)? -EINVAL when list is not one; -ERANGE with *outside
 * the first one host lacks. */
int cpulist_within(const char *list, const char *host, unsigned *outside);
/* v1 cpu.shares (2-262144) as the v2 cpu.weight (1-10000), as runc and crun map it. */
uint64_t cpu_shares_weight(uint64_t shares);
/* --cpuset LIST (or a bundle's cpus/mems, what names it): checked against the host's online
 * CPUs (or memory nodes: mems), copied into out (len bytes); "none" empties out; one line
 * otherwise. */
int cpuset_take(const char *what, const char *list, bool mems, char *out, size_t len, struct error *err);
/* --cpus V (what names it) against the host's online CPUs; "none": no quota. */
int cpus_take(const char *what, const char *v, uint64_t *quota_us, uint64_t *period_us, struct error *err);

#endif
