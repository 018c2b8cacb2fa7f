/* SPDX-License-Identifier: Apache-2.0 */
/* units.c - durations and sizes as people write them, and back. */
#include "util/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* x >= 0 to the nearest integer, halves up: llround without libm, the only thing the binary
 * took from it (and loading libm cost every run its mapping: 0.3 MiB of the supervisor's RSS). */
static long long round_half_up(double x)
{
	return (long long)(x + 0.5);
}

int parse_uint(const char *s, uint64_t *v)
{
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

/* Parse a non-negative decimal number at *p, advancing it. */
static int number(const char **p, double *out)
{
	const char *s = *p;
	if (!isdigit((unsigned char)*s) && !(*s == '.' && isdigit((unsigned char)s[1])))
		return -EINVAL;
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (errno || end == s || d < 0 || !isfinite(d))
		return -EINVAL;
	/* refuse exponents and hex that strtod accepts */
	for (const char *c = s; c < end; c++)
		if (!isdigit((unsigned char)*c) && *c != '.')
			return -EINVAL;
	*p = end;
	*out = d;
	return 0;
}

int parse_duration_ms(const char *s, uint64_t *ms)
{
	if (!s || !*s)
		return -EINVAL;
	double total = 0;
	const char *p = s;
	int parts = 0;
	while (*p) {
		double d;
		if (number(&p, &d) < 0)
			return -EINVAL;
		double unit;
		if (strncmp(p, "ms", 2) == 0) { unit = 1; p += 2; }
		else if (*p == 's') { unit = 1000; p++; }
		else if (*p == 'm') { unit = 60000; p++; }
		else if (*p == 'h') { unit = 3600000; p++; }
		else if (*p == 'd') { unit = 86400000; p++; }
		else if (*p == '\0' && parts == 0) unit = 1000;
		else return -EINVAL;
		total += d * unit;
		parts++;
	}
	if (total > 1e15)
		return -EINVAL;
	*ms = (uint64_t)round_half_up(total);
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	if (!s || !*s)
		return -EINVAL;
	const char *p = s;
	double d;
	if (number(&p, &d) < 0)
		return -EINVAL;
	/* whole numbers of bytes stay exact (a double has 53 bits) */
	if (*p == '\0' || ((*p == 'B' || *p == 'b') && p[1] == '\0')) {
		if (memchr(s, '.', (size_t)(p - s)))
			return -EINVAL;
		errno = 0;
		unsigned long long v = strtoull(s, NULL, 10);
		if (errno)
			return -EINVAL;
		*bytes = v;
		return 0;
	}
	double mul = 1;
	switch (toupper((unsigned char)*p)) {
	case '\0': break;
	case 'B': break;
	case 'K': mul = 1024.0; p++; break;
	case 'M': mul = 1024.0 * 1024; p++; break;
	case 'G': mul = 1024.0 * 1024 * 1024; p++; break;
	case 'T': mul = 1024.0 * 1024 * 1024 * 1024; p++; break;
	default: return -EINVAL;
	}
	if (mul > 1) {
		if (*p == 'i' && toupper((unsigned char)p[1]) == 'B') p += 2;
		else if (toupper((unsigned char)*p) == 'B') p++;
	} else if (toupper((unsigned char)*p) == 'B') {
		p++;
	}
	if (*p)
		return -EINVAL;
	double v = d * mul;
	if (v > 9.0e18)
		return -EINVAL;
	*bytes = (uint64_t)round_half_up(v);
	return 0;
}

char *format_duration_ms(char *buf, size_t len, uint64_t ms)
{
	uint64_t h = ms / 3600000, m = (ms / 60000) % 60, s = (ms / 1000) % 60, r = ms % 1000;
	int n = 0;
	buf[0] = '\0';
	if (ms == 0) {
		snprintf(buf, len, "0s");
		return buf;
	}
	if (h) n += snprintf(buf + n, len - n, "%lluh", (unsigned long long)h);
	if (m && (size_t)n < len) n += snprintf(buf + n, len - n, "%llum", (unsigned long long)m);
	if ((s || r) && (size_t)n < len) {
		if (r && !h && !m && !s)
			snprintf(buf + n, len - n, "%llums", (unsigned long long)r);
		else if (r) {
			/* 1.5s, 1.25s, 1.125s */
			unsigned long long frac = r, digits = 3;
			while (frac % 10 == 0) {
				frac /= 10;
				digits--;
			}
			snprintf(buf + n, len - n, "%llu.%0*llus", (unsigned long long)s, (int)digits, frac);
		}
		else
			snprintf(buf + n, len - n, "%llus", (unsigned long long)s);
	}
	return buf;
}

char *format_seconds(char *buf, size_t len, double s)
{
	if (!(s >= 0)) /* also NaN */
		s = 0;
	if (s > 1e9)
		s = 1e9;
	if (s < 59.995) {
		snprintf(buf, len, "%.2fs", s);
		return buf;
	}
	/* round to tenths first, so that 119.97 is 2m00.0s and never 1m60.0s */
	long long tenths = round_half_up(s * 10);
	if (tenths < 36000) {
		snprintf(buf, len, "%lldm%02lld.%llds", tenths / 600, (tenths % 600) / 10, tenths % 10);
	} else {
		long long secs = round_half_up(s);
		snprintf(buf, len, "%lldh%02lldm%02llds", secs / 3600, (secs % 3600) / 60, secs % 60);
	}
	return buf;
}

char *format_size(char *buf, size_t len, uint64_t b)
{
	static const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int i = 0;
	double v = (double)b;
	/* move up a unit also when rounding to one decimal would print 1024.0 */
	while ((v >= 1024 || (i > 0 && v >= 1023.95)) && i < 5) {
		v /= 1024;
		i++;
	}
	if (i == 0 && v >= 1023.95 && b >= 1024) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)b);
	else if (v == (double)(unsigned long long)v) /* whole (v is below 1024) */
		snprintf(buf, len, "%.0f %s", v, u[i]);
	else
		snprintf(buf, len, "%.1f %s", v, u[i]);
	return buf;
}
