/* test_conns.c - the caps on connections of the server's unix sockets (conn_admit): each other
 * user's, all others' together, the share kept for root and the server's user; and the line a
 * refused connection is told (conn_refusal). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "serve/conns.h"

#define SRV 1000u   /* the server's uid, in the cases of a rootless server */
#define OTHERS (CONN_MAX - CONN_RESERVED)

static void test_admit(void **state)
{
	(void)state;
	static const struct {
		unsigned total, others, of_uid;
		uid_t uid, server;
		enum conn_verdict want;
	} cases[] = {
		{ 0, 0, 0, 1001, 0, CONN_TAKE },                                           /* the first */
		{ 10, 5, CONN_PER_USER - 1, 1001, 0, CONN_TAKE },                           /* its last */
		{ 10, 5, CONN_PER_USER, 1001, 0, CONN_USER_FULL },                          /* one over */
		{ 900, 500, CONN_PER_USER + 7, 1001, 0, CONN_USER_FULL },
		{ OTHERS, OTHERS, 3, 1002, 0, CONN_OTHERS_FULL },                            /* others together */
		{ OTHERS - 1, OTHERS - 1, 3, 1002, 0, CONN_TAKE },
		{ OTHERS, OTHERS, CONN_PER_USER, 0, 0, CONN_TAKE },                          /* root: the reserve */
		{ CONN_MAX - 1, OTHERS, 0, 0, 0, CONN_TAKE },                                /* ... to its last */
		{ CONN_MAX, OTHERS, 0, 0, 0, CONN_FULL },                                    /* all of it */
		{ CONN_MAX - 1, OTHERS, 500, SRV, SRV, CONN_TAKE },                          /* the server's user: no cap of its own */
		{ CONN_MAX, OTHERS, 500, SRV, SRV, CONN_FULL },
		{ OTHERS, OTHERS, 0, 0, SRV, CONN_TAKE },                                    /* root, a rootless server */
		{ OTHERS, OTHERS, 0, SRV + 1, SRV, CONN_OTHERS_FULL },                       /* another user there */
		{ 100, 100, CONN_PER_USER, (uid_t)-1, 0, CONN_USER_FULL },                   /* a peer not known: another user */
		{ CONN_MAX, 0, 0, 1001, 0, CONN_FULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct conn_counts c = { cases[i].total, cases[i].others, cases[i].of_uid };
		enum conn_verdict got = conn_admit(&c, cases[i].uid, cases[i].server);
		if (got != cases[i].want)
			fail_msg("case %zu: total %u others %u of_uid %u uid %u server %u: got %d, want %d", i, c.total, c.others,
				 c.of_uid, (unsigned)cases[i].uid, (unsigned)cases[i].server, got, cases[i].want);
	}
}

static void test_reserve_holds(void **state)
{
	(void)state;
	/* other users, one connection after another, as many as they may: root still has its share */
	struct conn_counts c = { 0 };
	unsigned per[100] = { 0 };
	for (unsigned k = 0; k < 100 * CONN_PER_USER; k++) {
		unsigned u = k % 100;
		c.of_uid = per[u];
		if (conn_admit(&c, 2000 + u, 0) == CONN_TAKE) {
			per[u]++;
			c.total++;
			c.others++;
		}
	}
	assert_int_equal(c.others, OTHERS);
	for (unsigned u = 0; u < 100; u++)
		assert_true(per[u] <= CONN_PER_USER);
	for (unsigned k = 0; k < CONN_RESERVED; k++) {
		assert_int_equal(conn_admit(&c, 0, 0), CONN_TAKE);
		c.total++;
	}
	assert_int_equal(conn_admit(&c, 0, 0), CONN_FULL);
}

static void test_refusal(void **state)
{
	(void)state;
	char *m = conn_refusal(CONN_USER_FULL, 1001);
	assert_non_null(strstr(m, "uid 1001 holds 64 connections"));
	assert_null(strchr(m, '\n'));
	free(m);
	m = conn_refusal(CONN_OTHERS_FULL, 1001);
	assert_non_null(strstr(m, "other than root"));
	free(m);
	m = conn_refusal(CONN_FULL, 0);
	assert_non_null(strstr(m, "1000 connections"));
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admit),
		cmocka_unit_test(test_reserve_holds),
		cmocka_unit_test(test_refusal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
