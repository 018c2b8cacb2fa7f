/* SPDX-License-Identifier: Apache-2.0 */
/* test_cpus.c - --cpus N as a quota, CPU lists and their subsets, shares as weight. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "util/cpus.h"

static void test_quota(void **state)
{
	(void)state;
	static const struct { const char *v; unsigned ncpu; int r; uint64_t quota; } t[] = {
		{ "0.5", 2, 0, 50000 },  { "1.5", 2, 0, 150000 }, { "2", 2, 0, 200000 }, { "1.", 2, 0, 100000 },
		{ ".25", 2, 0, 25000 },  { "0.01", 1, 0, 1000 },  { "0.001", 1, -ERANGE, 0 }, { "0", 2, -ERANGE, 0 },
		{ "3", 2, -ERANGE, 0 },  { "2.001", 2, -ERANGE, 0 }, { "0.0001", 2, -EINVAL, 0 }, { "", 2, -EINVAL, 0 },
		{ ".", 2, -EINVAL, 0 },  { "-1", 2, -EINVAL, 0 }, { "1e3", 2, -EINVAL, 0 }, { "half", 2, -EINVAL, 0 },
		{ "99999999999999999999", 2, -ERANGE, 0 },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		uint64_t q = 0, p = 0;
		int r = cpus_quota(t[i].v, t[i].ncpu, &q, &p);
		if (r != t[i].r || (r == 0 && (q != t[i].quota || p != 100000)))
			fail_msg("cpus_quota(\"%s\", %u): r=%d quota=%llu period=%llu, want %d %llu", t[i].v, t[i].ncpu, r,
				 (unsigned long long)q, (unsigned long long)p, t[i].r, (unsigned long long)t[i].quota);
	}
}

static void test_within(void **state)
{
	(void)state;
	static const struct { const char *list, *host; int r; unsigned outside; } t[] = {
		{ "0", "0-1", 0, 0 },        { "0-1", "0-1", 0, 0 },      { "1,0", "0-1\n", 0, 0 },
		{ "2", "0-1", -ERANGE, 2 },  { "0,3-4", "0-3", -ERANGE, 4 }, { "1", "0,2-3", -ERANGE, 1 },
		{ "", "0-1", -EINVAL, 0 },   { "1-0", "0-1", -EINVAL, 0 }, { "0-", "0-1", -EINVAL, 0 },
		{ "a", "0-1", -EINVAL, 0 },  { "0,,1", "0-1", -EINVAL, 0 }, { "0 ", "0-1", -EINVAL, 0 },
		{ "1024", "0-1", -EINVAL, 0 }, { "0", "", -ERANGE, 0 },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		unsigned out = 9999;
		int r = cpulist_within(t[i].list, t[i].host, &out);
		if (r != t[i].r || (r == -ERANGE && out != t[i].outside))
			fail_msg("cpulist_within(\"%s\", \"%s\"): r=%d outside=%u, want %d %u", t[i].list, t[i].host, r, out,
				 t[i].r, t[i].outside);
	}
}

static void test_weight(void **state)
{
	(void)state;
	assert_int_equal(cpu_shares_weight(0), 0);
	assert_int_equal(cpu_shares_weight(2), 1);
	assert_int_equal(cpu_shares_weight(1024), 39);
	assert_int_equal(cpu_shares_weight(262144), 10000);
	assert_int_equal(cpu_shares_weight(1), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_quota), cmocka_unit_test(test_within),
					    cmocka_unit_test(test_weight) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
