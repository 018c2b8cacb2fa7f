/* SPDX-License-Identifier: Apache-2.0 */
/* test_conns.c - the caps on connections of the server's sockets: on a unix socket (conn_admit)
 * each other user's, all others' together, the share kept for root and the server's user; whose
 * cap a subordinate uid counts against (subid_parse_line, conn_owner); on TCP the source of an
 * address (conn_source_of) and the connections without the token (conn_admit_tcp); the bodies
 * held at once (body_admit); and the line a refused connection is told (conn_refusal). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
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

static void test_subid_line(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int ok;
		const char *name;
		uid_t owner;
		uint64_t start, count;
	} cases[] = {
		{ "warren-test:100000:65536", 1, "warren-test", (uid_t)-1, 100000, 65536 },  /* a name: resolved by the caller */
		{ "1001:165536:65536", 1, "1001", 1001, 165536, 65536 },                      /* a number: the owner */
		{ "root:1000000:1", 1, "root", (uid_t)-1, 1000000, 1 },
		{ "x:4294967295:1", 1, "x", (uid_t)-1, 4294967295u, 1 },
		{ "4294967295:1:1", 1, "4294967295", (uid_t)-1, 1, 1 },                       /* (uid_t)-1 is no uid */
		{ "", 0, NULL, 0, 0, 0 },
		{ "# a comment:1:2", 0, NULL, 0, 0, 0 },
		{ "name:100000", 0, NULL, 0, 0, 0 },                                          /* two fields */
		{ "name:100000:65536:9", 0, NULL, 0, 0, 0 },                                  /* four */
		{ ":100000:65536", 0, NULL, 0, 0, 0 },                                        /* no name */
		{ "name:-1:65536", 0, NULL, 0, 0, 0 },
		{ "name:100000:0", 0, NULL, 0, 0, 0 },                                        /* an empty range */
		{ "name:4294967296:1", 0, NULL, 0, 0, 0 },                                    /* beyond 32 bits */
		{ "name:1x:5", 0, NULL, 0, 0, 0 },
		{ "name:100000: 5", 0, NULL, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *l = cases[i].line, *name = NULL;
		size_t nlen = 0;
		struct subid_range r = { 0 };
		int got = subid_parse_line(l, l + strlen(l), &name, &nlen, &r);
		if ((got == 0) != cases[i].ok)
			fail_msg("case %zu '%s': got %d", i, l, got);
		if (!cases[i].ok)
			continue;
		if (nlen != strlen(cases[i].name) || strncmp(name, cases[i].name, nlen) || r.owner != cases[i].owner ||
		    r.start != cases[i].start || r.count != cases[i].count)
			fail_msg("case %zu '%s': name '%.*s' owner %u start %llu count %llu", i, l, (int)nlen, name,
				 (unsigned)r.owner, (unsigned long long)r.start, (unsigned long long)r.count);
	}
}

static void test_owner(void **state)
{
	(void)state;
	static const struct subid_range r[] = {
		{ 1001, 100000, 65536 },        /* warren-test's */
		{ 1002, 165536, 65536 },
		{ 0, 300000, 1000 },            /* root's own */
		{ SRV, 400000, 10 },            /* the server's user's (a rootless server) */
		{ (uid_t)-1, 500000, 5 },       /* a name without a user */
		{ 1003, 100000, 10 },           /* overlaps the first: the first line wins */
	};
	static const struct {
		uid_t uid, server, want;
	} cases[] = {
		{ 100000, 0, 1001 },            /* the range's first */
		{ 165535, 0, 1001 },            /* its last */
		{ 165536, 0, 1002 },            /* the next range's first */
		{ 100005, 0, 1001 },
		{ 99999, 0, 99999 },            /* outside any: itself */
		{ 231072, 0, 231072 },
		{ 1001, 0, 1001 },              /* the owner itself */
		{ 0, 0, 0 },                    /* root: itself */
		{ SRV, SRV, SRV },              /* the server's user: itself */
		{ 300005, 0, 300000 },          /* root's subordinates: one other user, never root */
		{ 400003, SRV, 400000 },        /* the server's user's: one other user */
		{ 400003, 0, SRV },             /* ... but another user's to a root server */
		{ 500004, 0, 500000 },          /* an owner not known: the range is one user */
		{ (uid_t)-1, 0, (uid_t)-1 },    /* a peer not known */
		{ 65534, 0, 65534 },            /* the overflow uid (not mapped): itself */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uid_t got = conn_owner(r, sizeof r / sizeof r[0], cases[i].uid, cases[i].server);
		if (got != cases[i].want)
			fail_msg("case %zu: uid %u server %u: got %u, want %u", i, (unsigned)cases[i].uid,
				 (unsigned)cases[i].server, (unsigned)got, (unsigned)cases[i].want);
	}
	assert_int_equal(conn_owner(NULL, 0, 100000, 0), 100000);  /* no /etc/subuid */
}

/* The source of text (an IPv4 or IPv6 address), as text. */
static void source_text(const char *text, char *out, size_t len)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct conn_source src;
	bool ok = inet_pton(AF_INET, text, &a4.sin_addr) == 1 ? conn_source_of((struct sockaddr *)&a4, sizeof a4, &src)
		  : inet_pton(AF_INET6, text, &a6.sin6_addr) == 1 ? conn_source_of((struct sockaddr *)&a6, sizeof a6, &src)
								  : false;
	if (!ok || !inet_ntop(AF_INET6, src.a, out, (socklen_t)len))
		snprintf(out, len, "none");
}

static void test_source(void **state)
{
	(void)state;
	static const struct {
		const char *addr, *want;
	} cases[] = {
		{ "192.0.2.7", "::ffff:192.0.2.7" },                  /* an IPv4 address: itself */
		{ "192.0.2.8", "::ffff:192.0.2.8" },
		{ "127.0.0.1", "::ffff:127.0.0.1" },                  /* loopback: one source */
		{ "127.0.0.2", "::ffff:127.0.0.1" },
		{ "127.255.3.4", "::ffff:127.0.0.1" },
		{ "::1", "::ffff:127.0.0.1" },
		{ "::ffff:127.9.9.9", "::ffff:127.0.0.1" },
		{ "::ffff:192.0.2.7", "::ffff:192.0.2.7" },           /* IPv4 mapped: as IPv4 */
		{ "2001:db8:1:2:3:4:5:6", "2001:db8:1:2::" },         /* IPv6: its /64 */
		{ "2001:db8:1:2:ffff::1", "2001:db8:1:2::" },
		{ "2001:db8:1:3::1", "2001:db8:1:3::" },
		{ "fe80::1", "fe80::" },
		{ "128.0.0.1", "::ffff:128.0.0.1" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char got[INET6_ADDRSTRLEN];
		source_text(cases[i].addr, got, sizeof got);
		if (strcmp(got, cases[i].want))
			fail_msg("case %zu: %s: got %s, want %s", i, cases[i].addr, got, cases[i].want);
	}
	struct sockaddr_un { sa_family_t f; char p[108]; } u = { .f = AF_UNIX };
	struct conn_source src;
	assert_false(conn_source_of((struct sockaddr *)&u, sizeof u, &src));
}

static void test_admit_tcp(void **state)
{
	(void)state;
	static const struct {
		unsigned total, pending, of_source;
		enum conn_verdict want;
	} cases[] = {
		{ 0, 0, 0, CONN_TAKE },
		{ 100, 50, CONN_PER_USER - 1, CONN_TAKE },                    /* the source's last */
		{ 100, 50, CONN_PER_USER, CONN_EVICT_SOURCE },                /* its oldest closed for it */
		{ OTHERS - 1, OTHERS - 1, 3, CONN_TAKE },                    /* all without the token: the last */
		{ OTHERS, OTHERS, 3, CONN_EVICT_OLDEST },                    /* ... then the oldest of any source closed */
		{ CONN_MAX - 1, 10, 0, CONN_TAKE },                           /* token holders hold the rest */
		{ CONN_MAX, 10, 0, CONN_EVICT_OLDEST },
		{ CONN_MAX, 0, 0, CONN_FULL },                                /* all held by token holders */
		{ CONN_MAX, OTHERS, CONN_PER_USER, CONN_EVICT_SOURCE },       /* the source first */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct tcp_counts c = { cases[i].total, cases[i].pending, cases[i].of_source };
		enum conn_verdict got = conn_admit_tcp(&c);
		if (got != cases[i].want)
			fail_msg("case %zu: total %u pending %u of_source %u: got %d, want %d", i, c.total, c.pending,
				 c.of_source, got, cases[i].want);
	}
}

static void test_bodies(void **state)
{
	(void)state;
	assert_true(body_admit(0, BODY_MAX));
	assert_true(body_admit(BODIES_MAX - BODY_MAX, BODY_MAX));      /* to the last byte */
	assert_false(body_admit(BODIES_MAX - BODY_MAX + 1, BODY_MAX));
	assert_true(body_admit(BODIES_MAX, 0));
	assert_false(body_admit(BODIES_MAX, 1));
	assert_false(body_admit(0, (size_t)BODIES_MAX + 1));
	assert_false(body_admit(5, SIZE_MAX));                         /* no overflow */
	/* 64 bodies of the most at once, not 65 */
	size_t held = 0;
	unsigned n = 0;
	while (body_admit(held, BODY_MAX) && n < 1000) {
		held += BODY_MAX;
		n++;
	}
	assert_int_equal(n, BODIES_MAX / BODY_MAX);
}

static void test_refusal(void **state)
{
	(void)state;
	char *m = conn_refusal(CONN_USER_FULL, 1001, 1001, NULL);
	assert_string_equal(m, "uid 1001 holds 64 connections to warren serve, its most; close some (or finish their requests) and ask again");
	free(m);
	m = conn_refusal(CONN_USER_FULL, 100005, 1001, NULL);
	assert_string_equal(m, "uid 100005 is uid 1001's (/etc/subuid), whose uids hold 64 connections to warren serve, its most; close some (or finish their requests) and ask again");
	free(m);
	m = conn_refusal(CONN_OTHERS_FULL, 1001, 1001, NULL);
	assert_non_null(strstr(m, "other than root"));
	free(m);
	m = conn_refusal(CONN_FULL, 0, 0, NULL);
	assert_non_null(strstr(m, "1000 connections"));
	free(m);
	m = conn_refusal(CONN_EVICT_SOURCE, (uid_t)-1, (uid_t)-1, "::ffff:127.0.0.1");
	assert_non_null(strstr(m, "::ffff:127.0.0.1 opened more than 64 connections to warren serve without the token"));
	free(m);
	for (int v = CONN_TAKE; v <= CONN_EVICT_OLDEST; v++) {
		m = conn_refusal((enum conn_verdict)v, 5, 5, "x");
		assert_null(strchr(m, '\n'));
		free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_admit),
		cmocka_unit_test(test_reserve_holds),
		cmocka_unit_test(test_subid_line),
		cmocka_unit_test(test_owner),
		cmocka_unit_test(test_source),
		cmocka_unit_test(test_admit_tcp),
		cmocka_unit_test(test_bodies),
		cmocka_unit_test(test_refusal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
