/* SPDX-License-Identifier: Apache-2.0 */
/* test_units.c - parse_duration_ms, parse_size, parse_uint and the format_* helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)
#define TiB (1024ULL * GiB)

/* ---------- parse_uint ---------- */

static void ok_uint(const char *s, uint64_t want)
{
	uint64_t v = 0xdeadbeef;
	int r = parse_uint(s, &v);
	if (r != 0 || v != want)
		fail_msg("parse_uint(\"%s\"): r=%d v=%llu, want 0 and %llu", s, r, (unsigned long long)v,
			 (unsigned long long)want);
}

static void bad_uint(const char *s)
{
	uint64_t v = 0;
	int r = parse_uint(s, &v);
	if (r != -EINVAL)
		fail_msg("parse_uint(\"%s\"): r=%d v=%llu, want -EINVAL", s ? s : "(null)", r, (unsigned long long)v);
}

static void test_parse_uint_valid(void **state)
{
	(void)state;
	ok_uint("1", 1);
	ok_uint("42", 42);
	ok_uint("007", 7);
	ok_uint("4294967296", 4294967296ULL);
	ok_uint("18446744073709551615", UINT64_MAX);
}

static void test_parse_uint_invalid(void **state)
{
	(void)state;
	bad_uint(NULL);
	bad_uint("");
	bad_uint("-1");
	bad_uint("+1");
	bad_uint(" 1");
	bad_uint("1 ");
	bad_uint("1.0");
	bad_uint("12a");
	bad_uint("0x10");
	bad_uint("1e3");
	bad_uint("abc");
	bad_uint("18446744073709551616");   /* UINT64_MAX + 1 */
	bad_uint("99999999999999999999999");
}

/* ---------- parse_duration_ms ---------- */

static void ok_dur(const char *s, uint64_t want)
{
	uint64_t v = 0xdeadbeef;
	int r = parse_duration_ms(s, &v);
	if (r != 0 || v != want)
		fail_msg("parse_duration_ms(\"%s\"): r=%d v=%llu, want 0 and %llu", s, r, (unsigned long long)v,
			 (unsigned long long)want);
}

static void bad_dur(const char *s)
{
	uint64_t v = 0;
	int r = parse_duration_ms(s, &v);
	if (r != -EINVAL)
		fail_msg("parse_duration_ms(\"%s\"): r=%d v=%llu, want -EINVAL", s ? s : "(null)", r,
			 (unsigned long long)v);
}

static void test_parse_duration_documented(void **state)
{
	(void)state;
	ok_dur("1h30m", 5400000);
	ok_dur("90s", 90000);
	ok_dur("1.5s", 1500);
	ok_dur("250ms", 250);
	ok_dur("2d", 172800000);
	ok_dur("30s", 30000);
	ok_dur("10m", 600000);
}

static void test_parse_duration_more(void **state)
{
	(void)state;
	ok_dur("10", 10000);       /* bare number is seconds */
	ok_dur("1.5", 1500);
	ok_dur("0", 0);
	ok_dur("0s", 0);
	ok_dur("1ms", 1);
	ok_dur("1m", 60000);       /* m is minutes, ms is milliseconds */
	ok_dur("1h", 3600000);
	ok_dur("0.001s", 1);
	ok_dur(".5s", 500);
	ok_dur("1m30s", 90000);
	ok_dur("1h1m1s", 3661000);
	ok_dur("1m30s500ms", 90500);
	ok_dur("1d2h", 93600000);
	ok_dur("0.5m", 30000);
	ok_dur("1.25h", 4500000);
}

static void test_parse_duration_invalid(void **state)
{
	(void)state;
	bad_dur(NULL);
	bad_dur("");
	bad_dur("s");
	bad_dur("ms");
	bad_dur("abc");
	bad_dur("-1s");
	bad_dur("+1s");
	bad_dur("1x");
	bad_dur("1 s");
	bad_dur(" 1s");
	bad_dur("1s ");
	bad_dur("1h30");      /* bare number only allowed alone */
	bad_dur("1S");
	bad_dur("1e3s");
	bad_dur("1e3");
	bad_dur("0x10s");
	bad_dur("inf");
	bad_dur("nan");
	bad_dur("infs");
	bad_dur(".s");
	bad_dur("1..5s");
	bad_dur("1.2.3s");
	bad_dur("1w");
	bad_dur("1y");
	bad_dur("10msec");
	/* absurdly large values are refused rather than wrapped */
	bad_dur("99999999999999999999d");
	bad_dur("18446744073709551616ms");
	bad_dur("999999999999999999999999999999999999999999999999s");
}

/* ---------- parse_size ---------- */

static void ok_size(const char *s, uint64_t want)
{
	uint64_t v = 0xdeadbeef;
	int r = parse_size(s, &v);
	if (r != 0 || v != want)
		fail_msg("parse_size(\"%s\"): r=%d v=%llu, want 0 and %llu", s, r, (unsigned long long)v,
			 (unsigned long long)want);
}

static void bad_size(const char *s)
{
	uint64_t v = 0;
	int r = parse_size(s, &v);
	if (r != -EINVAL)
		fail_msg("parse_size(\"%s\"): r=%d v=%llu, want -EINVAL", s ? s : "(null)", r, (unsigned long long)v);
}

static void test_parse_size_documented(void **state)
{
	(void)state;
	ok_size("512M", 512 * MiB);
	ok_size("2G", 2 * GiB);
	ok_size("1.5GiB", 1536 * MiB);
	ok_size("4096", 4096);
	ok_size("100k", 100 * KiB);
}

static void test_parse_size_more(void **state)
{
	(void)state;
	ok_size("0", 0);
	ok_size("1", 1);
	ok_size("17B", 17);
	ok_size("17b", 17);
	ok_size("1K", KiB);
	ok_size("1KB", KiB);
	ok_size("1KiB", KiB);
	ok_size("1M", MiB);
	ok_size("1MB", MiB);
	ok_size("1MiB", MiB);
	ok_size("1m", MiB);
	ok_size("1g", GiB);
	ok_size("1T", TiB);
	ok_size("1TiB", TiB);
	ok_size("0.5K", 512);
	ok_size(".5M", 512 * KiB);
	ok_size("1.25G", 1280 * MiB);
	ok_size("8T", 8 * TiB);
	ok_size("4294967296", 4294967296ULL);
}

/* Plain byte counts are integers: they must not lose precision by going through a double. */
static void test_parse_size_exact_large_integers(void **state)
{
	(void)state;
	ok_size("9007199254740992", 9007199254740992ULL);  /* 2^53 */
	ok_size("9007199254740993", 9007199254740993ULL);  /* 2^53 + 1 */
	ok_size("1000000000000000001", 1000000000000000001ULL);
}

static void test_parse_size_invalid(void **state)
{
	(void)state;
	bad_size(NULL);
	bad_size("");
	bad_size("M");
	bad_size("B");
	bad_size("-1");
	bad_size("-1M");
	bad_size("+1M");
	bad_size("1 M");
	bad_size(" 1M");
	bad_size("1M ");
	bad_size("1X");
	bad_size("1MiBx");
	bad_size("1MBB");
	bad_size("1BB");
	bad_size("1Bi");
	bad_size("1e3");
	bad_size("1e3M");
	bad_size("0x10");
	bad_size("inf");
	bad_size("nan");
	bad_size("1..5M");
	bad_size("1.2.3");
	/* too large for uint64: refused, not wrapped */
	bad_size("18446744073709551616");
	bad_size("100000000T");
	bad_size("99999999999999999999999999G");
}

/* ---------- format_duration_ms ---------- */

static void want_dur(uint64_t ms, const char *want)
{
	char buf[64];
	memset(buf, 'X', sizeof buf);
	char *r = format_duration_ms(buf, sizeof buf, ms);
	assert_ptr_equal(r, buf);
	if (strcmp(buf, want) != 0)
		fail_msg("format_duration_ms(%llu) = \"%s\", want \"%s\"", (unsigned long long)ms, buf, want);
}

static void test_format_duration_documented(void **state)
{
	(void)state;
	want_dur(30000, "30s");
	want_dur(600000, "10m");
	want_dur(5400000, "1h30m");
}

static void test_format_duration_more(void **state)
{
	(void)state;
	want_dur(0, "0s");
	want_dur(1, "1ms");
	want_dur(250, "250ms");
	want_dur(999, "999ms");
	want_dur(1000, "1s");
	want_dur(59000, "59s");
	want_dur(60000, "1m");
	want_dur(61000, "1m1s");
	want_dur(3600000, "1h");
	want_dur(3661000, "1h1m1s");
	want_dur(86400000, "24h");
	want_dur(172800000, "48h");
}

/* Sub-second remainders above one second: the header shows "1.50s"; whatever the exact
 * digits, the text must start with the seconds, carry the fraction, and parse back. */
static void test_format_duration_fraction(void **state)
{
	(void)state;
	char buf[64];
	format_duration_ms(buf, sizeof buf, 1500);
	assert_true(strncmp(buf, "1.5", 3) == 0);
	assert_int_equal(buf[strlen(buf) - 1], 's');
	uint64_t back;
	assert_int_equal(parse_duration_ms(buf, &back), 0);
	assert_int_equal(back, 1500);
}

/* parse_duration_ms(format_duration_ms(x)) == x for many values. */
static void test_format_duration_roundtrip(void **state)
{
	(void)state;
	static const uint64_t fixed[] = {
		0, 1, 9, 10, 99, 100, 999, 1000, 1001, 1010, 1100, 1500, 59999, 60000, 60001, 61500,
		3599999, 3600000, 3600001, 3600500, 3661001, 86399999, 86400000, 90061001,
		1000000000000ULL, 999999999999999ULL,
	};
	char buf[96];
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		uint64_t back = 0;
		format_duration_ms(buf, sizeof buf, fixed[i]);
		int r = parse_duration_ms(buf, &back);
		if (r != 0 || back != fixed[i])
			fail_msg("roundtrip %llu -> \"%s\" -> r=%d %llu", (unsigned long long)fixed[i], buf, r,
				 (unsigned long long)back);
	}
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 20000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t ms = x % (i % 2 ? 100000000ULL : 1000000000000ULL);
		uint64_t back = 0;
		format_duration_ms(buf, sizeof buf, ms);
		int r = parse_duration_ms(buf, &back);
		if (r != 0 || back != ms)
			fail_msg("roundtrip %llu -> \"%s\" -> r=%d %llu", (unsigned long long)ms, buf, r,
				 (unsigned long long)back);
	}
}

/* Small buffers: always NUL-terminated, never written past len (ASan checks the heap buffer). */
static void test_format_small_buffers(void **state)
{
	(void)state;
	static const uint64_t vals[] = { 0, 250, 1500, 61500, 3661001, 90061001, UINT64_MAX };
	for (size_t len = 1; len <= 24; len++) {
		for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
			char *buf = malloc(len);
			assert_non_null(buf);
			format_duration_ms(buf, len, vals[i]);
			assert_true(strlen(buf) < len);
			format_size(buf, len, vals[i]);
			assert_true(strlen(buf) < len);
			format_seconds(buf, len, (double)vals[i] / 1000.0);
			assert_true(strlen(buf) < len);
			free(buf);
		}
	}
}

/* ---------- format_seconds ---------- */

static void want_sec(double s, const char *want)
{
	char buf[64];
	format_seconds(buf, sizeof buf, s);
	if (strcmp(buf, want) != 0)
		fail_msg("format_seconds(%.17g) = \"%s\", want \"%s\"", s, buf, want);
}

static void test_format_seconds_documented(void **state)
{
	(void)state;
	want_sec(30.0, "30.00s");
	want_sec(192.4, "3m12.4s");
}

static void test_format_seconds_more(void **state)
{
	(void)state;
	want_sec(0.0, "0.00s");
	want_sec(-5.0, "0.00s");
	want_sec(0.004, "0.00s");
	want_sec(0.005001, "0.01s");
	want_sec(1.5, "1.50s");
	want_sec(59.5, "59.50s");
	want_sec(60.0, "1m00.0s");
	want_sec(62.25, "1m02.3s"); /* halves round up */
	want_sec(600.0, "10m00.0s");
	want_sec(3599.0, "59m59.0s");
	want_sec(3600.0, "1h00m00s");
	want_sec(3725.0, "1h02m05s");
	want_sec(36000.0, "10h00m00s");
}

/* Rounding must carry into the minute: 119.97 s is "2m00.0s", never "1m60.0s". */
static void test_format_seconds_no_sixty(void **state)
{
	(void)state;
	want_sec(119.97, "2m00.0s");
	want_sec(59.999, "1m00.0s");
	char buf[64];
	for (int m = 1; m < 60; m++) {
		for (int k = 0; k < 10; k++) {
			double s = m * 60.0 + 59.95 + k * 0.0049;
			format_seconds(buf, sizeof buf, s);
			const char *p = strchr(buf, 'm');
			if (p && strncmp(p + 1, "60", 2) == 0)
				fail_msg("format_seconds(%.4f) = \"%s\": seconds field reads 60", s, buf);
		}
	}
}

/* Out-of-range input (NaN, infinity, centuries) must not print garbage like
 * "-2147483648h..." (the double-to-int conversion is undefined behaviour there). */
static void test_format_seconds_huge(void **state)
{
	(void)state;
	const double vals[] = { 1e10, 1e16, 1e300, INFINITY, NAN };
	char buf[128];
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		format_seconds(buf, sizeof buf, vals[i]);
		if (strchr(buf, '-'))
			fail_msg("format_seconds(%g) = \"%s\": negative fields", vals[i], buf);
	}
}

/* ---------- format_size ---------- */

static void want_size(uint64_t b, const char *want)
{
	char buf[64];
	char *r = format_size(buf, sizeof buf, b);
	assert_ptr_equal(r, buf);
	if (strcmp(buf, want) != 0)
		fail_msg("format_size(%llu) = \"%s\", want \"%s\"", (unsigned long long)b, buf, want);
}

static void test_format_size_documented(void **state)
{
	(void)state;
	want_size(512 * MiB, "512 MiB");
	want_size(2 * GiB, "2 GiB");
	want_size(1536, "1.5 KiB");
	want_size(17, "17 B");
}

static void test_format_size_more(void **state)
{
	(void)state;
	want_size(0, "0 B");
	want_size(1, "1 B");
	want_size(1023, "1023 B");
	want_size(1024, "1 KiB");
	want_size(MiB, "1 MiB");
	want_size(GiB + GiB / 2, "1.5 GiB");
	want_size(TiB, "1 TiB");
	want_size(1024 * TiB, "1 PiB");
	want_size(UINT64_MAX, "16384 PiB");   /* no unit above PiB */
}

/* Below the top unit, the number printed is always less than 1024 (no "1024.0 KiB"). */
static void test_format_size_no_1024(void **state)
{
	(void)state;
	static const uint64_t vals[] = { MiB - 1, MiB - 10, GiB - 1, TiB - 1, 1024 * TiB - 1, 1024 * 1024 - 52 };
	char buf[64];
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		format_size(buf, sizeof buf, vals[i]);
		double n = strtod(buf, NULL);
		if (n >= 1024.0)
			fail_msg("format_size(%llu) = \"%s\": the number should be below 1024", (unsigned long long)vals[i],
				 buf);
	}
}

/* format_size output parses back (parse_size accepts "KiB" etc. only without the space). */
static void test_format_size_roundtrip_exact(void **state)
{
	(void)state;
	static const uint64_t vals[] = { 0, 17, 1024, 1536, 512 * MiB, 2 * GiB, 3 * TiB, GiB + GiB / 2 };
	char buf[64], nospace[64];
	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		format_size(buf, sizeof buf, vals[i]);
		size_t k = 0;
		for (const char *c = buf; *c; c++)
			if (*c != ' ')
				nospace[k++] = *c;
		nospace[k] = '\0';
		uint64_t back = 0;
		assert_int_equal(parse_size(nospace, &back), 0);
		assert_int_equal(back, vals[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_uint_valid),
		cmocka_unit_test(test_parse_uint_invalid),
		cmocka_unit_test(test_parse_duration_documented),
		cmocka_unit_test(test_parse_duration_more),
		cmocka_unit_test(test_parse_duration_invalid),
		cmocka_unit_test(test_parse_size_documented),
		cmocka_unit_test(test_parse_size_more),
		cmocka_unit_test(test_parse_size_exact_large_integers),
		cmocka_unit_test(test_parse_size_invalid),
		cmocka_unit_test(test_format_duration_documented),
		cmocka_unit_test(test_format_duration_more),
		cmocka_unit_test(test_format_duration_fraction),
		cmocka_unit_test(test_format_duration_roundtrip),
		cmocka_unit_test(test_format_small_buffers),
		cmocka_unit_test(test_format_seconds_documented),
		cmocka_unit_test(test_format_seconds_more),
		cmocka_unit_test(test_format_seconds_no_sixty),
		cmocka_unit_test(test_format_seconds_huge),
		cmocka_unit_test(test_format_size_documented),
		cmocka_unit_test(test_format_size_more),
		cmocka_unit_test(test_format_size_no_1024),
		cmocka_unit_test(test_format_size_roundtrip_exact),
	};
	return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
