/* SPDX-License-Identifier: Apache-2.0 */
/* units.h - parsing and printing of durations (30s, 10m, 1h30m) and sizes (512M, 2G). */
#ifndef WARREN_UTIL_UNITS_H
#define WARREN_UTIL_UNITS_H

#include <stdint.h>
#include <stddef.h>

/* "1h30m", "90s", "1.5s", "250ms", "2d". Returns 0 and milliseconds, or -EINVAL. A bare number is seconds. */
int parse_duration_ms(const char *s, uint64_t *ms);
/* "512M", "2G", "1.5GiB", "4096", "100k". Binary units (K=1024). Returns 0 or -EINVAL. */
int parse_size(const char *s, uint64_t *bytes);
/* A positive decimal integer. */
int parse_uint(const char *s, uint64_t *v);

/* "30s", "10m", "1h30m", "1.50s" ... into buf; returns buf. */
char *format_duration_ms(char *buf, size_t len, uint64_t ms);
/* Human seconds with two decimals, clock style for long ones: "30.00s", "3m12.4s". */
char *format_seconds(char *buf, size_t len, double s);
/* "512 MiB", "2 GiB", "1.5 KiB", "17 B". */
char *format_size(char *buf, size_t len, uint64_t bytes);

#endif
