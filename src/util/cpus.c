/* SPDX-License-Identifier: Apache-2.0 */
/* cpus.c - CPU limits' words (see cpus.h). */
#include "util/cpus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fs.h"

int cpus_quota(const char *v, unsigned ncpu, uint64_t *quota_us, uint64_t *period_us)
{
	if (!v || !*v)
		return -EINVAL;
	uint64_t whole = 0, frac = 0;
	unsigned digits = 0;
	const char *p = v;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > 1000000)
			return -ERANGE;
	}
	bool some = p != v;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			if (digits == 3)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*p - '0');
			some = true;
		}
	}
	if (*p || !some)
		return -EINVAL;
	while (digits++ < 3)
		frac *= 10;
	uint64_t milli = whole * 1000 + frac; /* thousandths of a CPU */
	if (milli < 10 || milli > (uint64_t)ncpu * 1000)
		return -ERANGE;
	*period_us = CPU_PERIOD_US;
	*quota_us = milli * CPU_PERIOD_US / 1000;
	return 0;
}

static int number(const char **p, unsigned *out)
{
	if (**p < '0' || **p > '9')
		return -EINVAL;
	unsigned long n = 0;
	for (; **p >= '0' && **p <= '9'; (*p)++)
		if ((n = n * 10 + (unsigned long)(**p - '0')) >= CPU_LIST_MAX)
			return -EINVAL;
	*out = (unsigned)n;
	return 0;
}

int cpulist_parse(const char *list, uint8_t set[CPU_LIST_MAX / 8])
{
	memset(set, 0, CPU_LIST_MAX / 8);
	const char *p = list;
	if (!p || !*p || *p == '\n')
		return -EINVAL;
	for (;;) {
		unsigned a, b;
		if (number(&p, &a) < 0)
			return -EINVAL;
		b = a;
		if (*p == '-' && (p++, number(&p, &b) < 0 || b < a))
			return -EINVAL;
		for (unsigned i = a; i <= b; i++)
			set[i / 8] |= (uint8_t)(1u << (i % 8));
		if (*p == ',') {
			p++;
			continue;
		}
		return *p == '\0' || (*p == '\n' && p[1] == '\0') ? 0 : -EINVAL;
	}
}

int cpulist_within(const char *list, const char *host, unsigned *outside)
{
	uint8_t want[CPU_LIST_MAX / 8], have[CPU_LIST_MAX / 8];
	if (cpulist_parse(list, want) < 0)
		return -EINVAL;
	if (cpulist_parse(host, have) < 0)
		memset(have, 0, sizeof have);
	for (unsigned i = 0; i < CPU_LIST_MAX; i++)
		if ((want[i / 8] & (1u << (i % 8))) && !(have[i / 8] & (1u << (i % 8)))) {
			*outside = i;
			return -ERANGE;
		}
	return 0;
}

uint64_t cpu_shares_weight(uint64_t shares)
{
	if (shares == 0)
		return 0;
	if (shares < 2)
		shares = 2;
	if (shares > 262144)
		shares = 262144;
	return 1 + ((shares - 2) * 9999) / 262142;
}

/* The host's online CPUs (or memory nodes with memory) as a list, trimmed. */
static char *host_list(bool mems)
{
	char *s = read_file(mems ? "/sys/devices/system/node/has_memory" : "/sys/devices/system/cpu/online", NULL);
	if (!s && mems)
		s = xstrdup("0"); /* no NUMA in the kernel: node 0 */
	if (s)
		s[strcspn(s, "\n")] = '\0';
	return s;
}

int cpuset_take(const char *what, const char *list, bool mems, char *out, size_t len, struct error *err)
{
	if (!strcmp(list, "none")) {
		out[0] = '\0';
		return 0;
	}
	_cleanup_free_ char *host = host_list(mems);
	unsigned bad = 0;
	int r = strlen(list) >= len ? -EINVAL : cpulist_within(list, host ? host : "", &bad);
	const char *kind = mems ? "memory node" : "CPU";
	if (r == -EINVAL)
		return error_set(err, 0, "%s: '%s' is not a %s list (e.g. 0, 0-1, 0,2-3)", what, list, kind);
	if (r == -ERANGE)
		return error_set(err, 0, "%s: '%s' names %s %u, which this host does not have online (it has %s); give a subset of %s",
				 what, list, kind, bad, host ? host : "none", host ? host : "none");
	snprintf(out, len, "%s", list);
	return 0;
}

int cpus_take(const char *what, const char *v, uint64_t *quota_us, uint64_t *period_us, struct error *err)
{
	if (!strcmp(v, "none")) {
		*quota_us = *period_us = 0;
		return 0;
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned ncpu = n > 0 ? (unsigned)n : 1;
	int r = cpus_quota(v, ncpu, quota_us, period_us);
	if (r == -EINVAL)
		return error_set(err, 0, "%s: '%s' is not a number of CPUs (e.g. 0.5, 1, 1.5)", what, v);
	if (r == -ERANGE)
		return error_set(err, 0, "%s: '%s' is out of range: give from 0.01 to %u, as this host has %u CPU%s online", what,
				 v, ncpu, ncpu, ncpu == 1 ? "" : "s");
	return 0;
}
