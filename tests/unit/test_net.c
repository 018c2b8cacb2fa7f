/* SPDX-License-Identifier: Apache-2.0 */
/* test_net.c - the words of --net (net_parse_mode), the private ranges a cell does not
 * reach unless asked (net_private_range), and which answered addresses enter the allow set for
 * how long (net_answer_allowable, net_dns_timeout), case by case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <string.h>

#include "net/net.h"

/* ---------- net_private_range ---------- */

/* The name of the range that holds all of cidr ("a.b.c.d/p"), or "-" for none. */
static const char *range_of(const char *cidr)
{
	char a[32];
	int p;
	struct in_addr in;
	assert_int_equal(sscanf(cidr, "%31[0-9.]/%d", a, &p), 2);
	assert_int_equal(inet_pton(AF_INET, a, &in), 1);
	const struct net_range *r = net_private_range(in.s_addr, p);
	return r ? r->name : "-";
}

static void test_private_range(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "10.0.0.0/8", "10.0.0.0/8" },        { "10.20.30.40/32", "10.0.0.0/8" },
		{ "10.255.255.255/32", "10.0.0.0/8" }, { "11.0.0.0/32", "-" },
		{ "10.0.0.0/7", "-" },                 /* wider than the range: not "named" */
		{ "172.16.0.0/12", "172.16.0.0/12" },  { "172.31.255.1/32", "172.16.0.0/12" },
		{ "172.32.0.1/32", "-" },              { "172.15.255.255/32", "-" },
		{ "192.168.50.5/32", "192.168.0.0/16" }, { "192.168.0.0/15", "-" },
		{ "192.169.0.1/32", "-" },             { "100.64.0.0/10", "100.64.0.0/10" },
		{ "100.127.255.255/32", "100.64.0.0/10" }, { "100.128.0.0/32", "-" },
		{ "100.63.255.255/32", "-" },          { "169.254.169.254/32", "169.254.0.0/16" },
		{ "203.0.113.10/32", "-" },            { "0.0.0.0/0", "-" },
		{ "8.8.8.8/32", "-" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (strcmp(range_of(cases[i][0]), cases[i][1]))
			fail_msg("net_private_range(%s) = %s, want %s", cases[i][0], range_of(cases[i][0]), cases[i][1]);
}

static void test_private_range_lan(void **state)
{
	(void)state;
	size_t lan = 0, n = 0;
	for (const struct net_range *r = net_private_ranges; r->name; r++, n++)
		lan += r->lan;
	assert_int_equal(n, 5);
	assert_int_equal(lan, 4);
	struct in_addr in;
	inet_pton(AF_INET, "169.254.169.254", &in);
	assert_false(net_private_range(in.s_addr, 32)->lan); /* nat,lan does not lift link-local */
}

/* ---------- net_parse_mode ---------- */

static void ok_mode(const char *arg, enum net_mode mode, bool lan, const char *allow)
{
	struct net_opts o = { .mode = NET_ALLOW, .lan = true, .allow = "stale" };
	struct error e = { 0 };
	if (net_parse_mode(&o, arg, &e) < 0)
		fail_msg("--net %s: %s", arg, e.msg);
	if (o.mode != mode || o.lan != lan || (allow ? !o.allow || strcmp(o.allow, allow) : o.allow != NULL))
		fail_msg("--net %s: mode %d lan %d allow %s", arg, o.mode, o.lan, o.allow ? o.allow : "(null)");
}

static void bad_mode(const char *arg, const char *want)
{
	struct net_opts o = { 0 };
	struct error e = { 0 };
	if (net_parse_mode(&o, arg, &e) >= 0)
		fail_msg("--net %s: accepted", arg);
	if (!e.msg || !strstr(e.msg, want) || strchr(e.msg, '\n'))
		fail_msg("--net %s: '%s' does not name '%s' on one line", arg, e.msg ? e.msg : "(null)", want);
	error_clear(&e);
}

/* ---------- what an answer puts into the allow set, for how long ---------- */

static void test_dns_timeout(void **state)
{
	(void)state;
	static const uint32_t cases[][2] = {
		{ 0, 60 }, { 29, 60 }, { 30, 60 }, { 31, 61 }, { 300, 330 }, { 86370, 86400 }, { 86371, 86400 },
		{ 0x7fffffff, 86400 }, { 0xffffffe2, 86400 }, { 0xffffffff, 86400 }, /* no wrap to 29 s */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (net_dns_timeout(cases[i][0]) != cases[i][1])
			fail_msg("net_dns_timeout(%u) = %u, want %u", cases[i][0], net_dns_timeout(cases[i][0]), cases[i][1]);
}

static void test_answer_allowable(void **state)
{
	(void)state;
	static const struct { const char *addr; bool lan, want; } cases[] = {
		{ "203.0.113.10", false, true },   { "8.8.8.8", false, true },       { "0.0.0.0", false, false },
		{ "0.1.2.3", true, false },        { "127.0.0.1", true, false },     { "127.255.0.9", false, false },
		{ "224.0.0.251", true, false },    { "239.255.255.250", false, false }, { "240.0.0.1", true, false },
		{ "255.255.255.255", true, false }, { "10.88.0.1", true, false },    { "10.88.0.77", true, false },
		{ "10.88.1.1", true, true },       { "10.88.1.1", false, false },    { "10.20.30.40", false, false },
		{ "192.168.50.5", true, true },    { "100.64.7.7", false, false },   { "169.254.169.254", true, false },
		{ "169.254.169.254", false, false }, { "223.255.255.255", false, true }, { "1.0.0.1", false, true },
	};
	struct in_addr sn;
	inet_pton(AF_INET, "10.88.0.0", &sn);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct in_addr in;
		assert_int_equal(inet_pton(AF_INET, cases[i].addr, &in), 1);
		if (net_answer_allowable(in.s_addr, cases[i].lan, sn.s_addr, 24) != cases[i].want)
			fail_msg("net_answer_allowable(%s, lan %d) = %d, want %d", cases[i].addr, cases[i].lan, !cases[i].want,
				 cases[i].want);
	}
}

static void test_parse_mode(void **state)
{
	(void)state;
	ok_mode("none", NET_NONE, false, NULL);
	ok_mode("nat", NET_NAT, false, NULL);
	ok_mode("nat,lan", NET_NAT, true, NULL);
	ok_mode("lan,nat", NET_NAT, true, NULL);
	ok_mode("nat,allow=10.1.2.3:5432", NET_NAT, false, "10.1.2.3:5432");
	ok_mode("nat,allow=10.1.2.3,192.168.0.0/16", NET_NAT, false, "10.1.2.3,192.168.0.0/16");
	ok_mode("nat,lan,allow=169.254.169.254", NET_NAT, true, "169.254.169.254");
	ok_mode("allow=web1.test,10.1.2.3", NET_ALLOW, false, "web1.test,10.1.2.3");
	ok_mode("allow=lan,nat", NET_ALLOW, false, "lan,nat"); /* after allow=, names */
	ok_mode("lan,allow=git.corp.test", NET_ALLOW, true, "git.corp.test");
}

static void test_parse_mode_bad(void **state)
{
	(void)state;
	bad_mode("bogus", "'bogus'");
	bad_mode("nat,bogus", "'bogus' in 'nat,bogus'");
	bad_mode("none,nat", "none alone");
	bad_mode("nat,none", "'none'");
	bad_mode("lan", "lan goes with nat or allow=LIST");
	bad_mode("", "names no mode");
	bad_mode("nat,allow=web1.test", "'web1.test' is a name");
	bad_mode("nat,allow=10.1.2.3,*.corp.test", "'*.corp.test' is a name");
	bad_mode("nat,allow=10.0.0.0/33", "not a prefix length");
	bad_mode("allow=10.1.2.3:0", "not a port");
	bad_mode("NAT", "'NAT'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_private_range),
		cmocka_unit_test(test_private_range_lan),
		cmocka_unit_test(test_dns_timeout),
		cmocka_unit_test(test_answer_allowable),
		cmocka_unit_test(test_parse_mode),
		cmocka_unit_test(test_parse_mode_bad),
	};
	return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
