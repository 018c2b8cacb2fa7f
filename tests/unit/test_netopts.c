/* SPDX-License-Identifier: Apache-2.0 */
/* test_netopts.c - the network options of net/opts.c, every form good and bad with its
 * message: the entries of --net allow=LIST (addresses, CIDRs, ports, names), --publish
 * [ADDR:]HOSTPORT:CELLPORT and the mode it implies (nat by default, none+publish with an
 * explicit --net none, in either order), --dns-max-names N, and net_opts_finish's refusals (a
 * host port in use, an address the host does not have). The words of --net themselves are
 * test_net.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net.h"

/* The message of a refusal must hold want and be one line. */
static void expect_msg(const char *what, struct error *e, const char *want)
{
	if (!e->msg || !strstr(e->msg, want) || strchr(e->msg, '\n'))
		fail_msg("%s: '%s' does not say '%s' on one line", what, e->msg ? e->msg : "(null)", want);
	error_clear(e);
}

static uint32_t ip(const char *a)
{
	struct in_addr in;
	assert_int_equal(inet_pton(AF_INET, a, &in), 1);
	return in.s_addr;
}

/* ---------- --net allow=LIST ---------- */

static void allow_entries(void **state)
{
	(void)state;
	static const struct { const char *list; const char *name, *addr; int prefix; uint16_t port; } one[] = {
		{ "10.1.2.3", NULL, "10.1.2.3", 32, 0 },
		{ "10.1.2.3:5432", NULL, "10.1.2.3", 32, 5432 },
		{ "10.1.2.99/24", NULL, "10.1.2.0", 24, 0 },   /* the host bits are cleared */
		{ "10.1.2.0/24:443", NULL, "10.1.2.0", 24, 443 },
		{ "0.0.0.0/0", NULL, "0.0.0.0", 0, 0 },
		{ "PyPI.org:443", "pypi.org", NULL, 0, 443 },   /* lower case */
		{ "pypi.org.", "pypi.org", NULL, 0, 0 },        /* no trailing dot */
		{ "*.githubusercontent.com", "*.githubusercontent.com", NULL, 0, 0 },
		{ "my_host-1.corp.test:65535", "my_host-1.corp.test", NULL, 0, 65535 },
	};
	for (size_t i = 0; i < sizeof one / sizeof *one; i++) {
		struct net_allow *a = NULL;
		size_t n = 0;
		struct error e = { 0 };
		if (net_allow_parse(one[i].list, &a, &n, &e) < 0 || n != 1)
			fail_msg("allow=%s: %s (n %zu)", one[i].list, e.msg ? e.msg : "", n);
		if (one[i].name ? !a[0].name || strcmp(a[0].name, one[i].name) : a[0].name != NULL)
			fail_msg("allow=%s: name %s", one[i].list, a[0].name ? a[0].name : "(null)");
		if (one[i].addr && (a[0].addr != ip(one[i].addr) || a[0].prefix != one[i].prefix))
			fail_msg("allow=%s: address %08x/%d", one[i].list, a[0].addr, a[0].prefix);
		if (a[0].port != one[i].port)
			fail_msg("allow=%s: port %u", one[i].list, a[0].port);
		net_allow_free(a, n);
	}
	struct net_allow *a = NULL;
	size_t n = 0;
	struct error e = { 0 };
	assert_int_equal(net_allow_parse("web1.test,10.0.0.0/8:22,*.corp.test", &a, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_string_equal(a[0].name, "web1.test");
	assert_int_equal(a[1].prefix, 8);
	assert_int_equal(a[1].port, 22);
	assert_string_equal(a[2].name, "*.corp.test");
	net_allow_free(a, n);
}

static void allow_entries_bad(void **state)
{
	(void)state;
	static const struct { const char *list, *want; } bad[] = {
		{ "::1", "'::1': IPv6 is not supported" },
		{ "[2001:db8::1]:443", "IPv6 is not supported" },
		{ "10.1.2.3:0", "'10.1.2.3:0': '0' is not a port (1-65535)" },
		{ "10.1.2.3:65536", "'65536' is not a port" },
		{ "10.1.2.3:http", "'http' is not a port" },
		{ "10.1.2.3:", "'' is not a port" },
		{ "10.0.0.0/33", "'/33' is not a prefix length (0-32)" },
		{ "10.0.0.0/", "'/' is not a prefix length" },
		{ "10.0.0.0/8x", "'/8x' is not a prefix length" },
		{ "web1.test/24", "'web1.test/24' is neither an IPv4 address, a CIDR nor a host name" },
		{ "bad name.test", "is neither an IPv4 address" },
		{ "a..b", "is neither" },
		{ "10.1.2.3,,web1.test", NULL },   /* strtok: an empty entry is skipped */
		{ "", NULL },                      /* allow= alone: an empty list (nothing allowed) */
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct net_allow *a = NULL;
		size_t n = 0;
		struct error e = { 0 };
		int r = net_allow_parse(bad[i].list, &a, &n, &e);
		if (!bad[i].want) {
			assert_int_equal(r, 0);
			net_allow_free(a, n);
			continue;
		}
		if (r >= 0)
			fail_msg("allow=%s: accepted", bad[i].list);
		assert_null(a);
		assert_int_equal(n, 0);
		expect_msg(bad[i].list, &e, bad[i].want);
	}
}

/* ---------- --publish ---------- */

static void publish(void **state)
{
	(void)state;
	struct net_opts o = { 0 };
	struct error e = { 0 };
	assert_int_equal(net_parse_publish(&o, "8080:80", &e), 0);
	assert_int_equal(o.mode, NET_NONE);  /* settled after all the options: net_opts_finish */
	assert_int_equal(o.publish[0].host_addr, htonl(INADDR_LOOPBACK));
	assert_int_equal(o.publish[0].host_port, 8080);
	assert_int_equal(o.publish[0].cell_port, 80);
	assert_int_equal(net_parse_publish(&o, "0.0.0.0:65535:1", &e), 0);
	assert_int_equal(o.publish[1].host_addr, ip("0.0.0.0"));
	assert_int_equal(o.publish[1].host_port, 65535);
	assert_int_equal(o.publish[1].cell_port, 1);
	assert_int_equal(o.npublish, 2);
	/* a --net given before stays: allow= with a published port */
	struct net_opts al = { 0 };
	assert_int_equal(net_parse_mode(&al, "allow=web1.test", &e), 0);
	assert_int_equal(net_parse_publish(&al, "127.0.0.1:9000:9000", &e), 0);
	assert_int_equal(al.mode, NET_ALLOW);
}

static void publish_bad(void **state)
{
	(void)state;
	static const struct { const char *arg, *want; } bad[] = {
		{ "8080", "--publish: '8080' is not [ADDR:]HOSTPORT:CELLPORT (e.g. 8080:80)" },
		{ "8080:", "'8080:' is not [ADDR:]HOSTPORT:CELLPORT with ports 1-65535" },
		{ ":80", "with ports 1-65535" },
		{ "0:80", "with ports 1-65535" },
		{ "8080:65536", "with ports 1-65535" },
		{ "80a:80", "with ports 1-65535" },
		{ "localhost:8080:80", "--publish: 'localhost' is not an IPv4 address of this host" },
		{ "::1:8080:80", "is not an IPv4 address" },
		{ "1.2.3:8080:80", "'1.2.3' is not an IPv4 address" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct net_opts o = { 0 };
		struct error e = { 0 };
		if (net_parse_publish(&o, bad[i].arg, &e) >= 0)
			fail_msg("--publish %s: accepted", bad[i].arg);
		assert_int_equal(o.npublish, 0);
		expect_msg(bad[i].arg, &e, bad[i].want);
	}
	struct net_opts o = { 0 };
	struct error e = { 0 };
	assert_int_equal(net_parse_publish(&o, "8080:80", &e), 0);
	assert_true(net_parse_publish(&o, "127.0.0.1:8080:81", &e) < 0);
	expect_msg("twice", &e, "--publish: host port 8080 is given twice");
	for (unsigned i = 1; i < NET_MAX_PUBLISH; i++) {
		char a[32];
		snprintf(a, sizeof a, "%u:80", 9000 + i);
		assert_int_equal(net_parse_publish(&o, a, &e), 0);
	}
	assert_true(net_parse_publish(&o, "9999:80", &e) < 0);
	expect_msg("17th", &e, "--publish: at most 16 ports");
}

/* ---------- the mode of a run with published ports ---------- */

static void publish_mode(void **state)
{
	(void)state;
	static const struct { enum net_mode mode; bool given; unsigned npublish; enum net_mode want; } t[] = {
		{ NET_NONE, false, 0, NET_NONE },       /* nothing asked */
		{ NET_NONE, true, 0, NET_NONE },        /* --net none */
		{ NET_NONE, false, 1, NET_NAT },        /* --publish alone: nat, as always */
		{ NET_NONE, true, 1, NET_PUBLISHED },   /* --net none --publish: never nat */
		{ NET_NONE, true, 16, NET_PUBLISHED },
		{ NET_NAT, true, 1, NET_NAT },
		{ NET_ALLOW, true, 2, NET_ALLOW },
		{ NET_NAT, true, 0, NET_NAT },
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		if (net_publish_mode(t[i].mode, t[i].given, t[i].npublish) != t[i].want)
			fail_msg("case %zu: mode %d given %d npublish %u: got %d, want %d", i, t[i].mode, t[i].given,
				 t[i].npublish, net_publish_mode(t[i].mode, t[i].given, t[i].npublish), t[i].want);
	assert_string_equal(net_mode_name(NET_NONE), "none");
	assert_string_equal(net_mode_name(NET_NAT), "nat");
	assert_string_equal(net_mode_name(NET_ALLOW), "allow");
	assert_string_equal(net_mode_name(NET_PUBLISHED), "none+publish");
}

/* ---------- which modes a rootless run (a rootless server's) may have ---------- */

static void mode_allowed(void **state)
{
	(void)state;
	static const struct { enum net_mode mode; unsigned npublish; bool rootless, vm; const char *want; } t[] = {
		{ NET_NAT, 1, false, false, NULL },          /* root: all */
		{ NET_ALLOW, 1, false, false, NULL },
		{ NET_PUBLISHED, 1, false, true, NULL },
		{ NET_NONE, 0, true, false, NULL },          /* rootless: none, nat, none+publish */
		{ NET_NAT, 0, true, false, NULL },
		{ NET_PUBLISHED, 2, true, false, NULL },
		{ NET_ALLOW, 0, true, false, "--net allow= needs root: " },
		{ NET_NAT, 1, true, false, "--publish with --net nat needs root: " },
		{ NET_PUBLISHED, 1, true, true, "--publish in a rootless VM: " },
		{ NET_NAT, 0, true, true, NULL },
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		struct error e = { 0 };
		int r = net_mode_allowed(t[i].mode, t[i].npublish, t[i].rootless, t[i].vm, &e);
		if (!t[i].want ? r != 0 : r != -EPERM || !e.msg || strncmp(e.msg, t[i].want, strlen(t[i].want)))
			fail_msg("case %zu: got %d %s, want %s", i, r, e.msg ? e.msg : "", t[i].want ? t[i].want : "allowed");
		error_clear(&e);
	}
}

/* A TCP port of 127.0.0.1 that nothing listens on (the kernel's pick, let go). */
static char *free_port_arg(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof sa;
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	return xasprintf("%u:80", ntohs(sa.sin_port));
}

/* The options in the order a command line gives them; the mode once all are read. */
static enum net_mode mode_of(const char *const *args)
{
	struct net_opts o = { 0 };
	struct error e = { 0 };
	for (; *args; args += 2) {
		_cleanup_free_ char *port = strcmp(args[0], "--publish") ? NULL : free_port_arg();
		assert_int_equal(port ? net_parse_publish(&o, port, &e) : net_parse_mode(&o, args[1], &e), 0);
	}
	assert_int_equal(net_opts_finish(&o, &e), 0);
	return o.mode;
}

static void publish_order(void **state)
{
	(void)state;
	static const char *const none_first[] = { "--net", "none", "--publish", "", NULL };
	static const char *const none_last[] = { "--publish", "", "--net", "none", NULL };
	static const char *const alone[] = { "--publish", "", NULL };
	static const char *const nat_last[] = { "--publish", "", "--net", "nat", NULL };
	static const char *const none_then_nat[] = { "--net", "none", "--publish", "", "--net", "nat", NULL };
	static const char *const nat_then_none[] = { "--net", "nat", "--publish", "", "--net", "none", NULL };
	static const char *const allow_first[] = { "--net", "allow=web1.test", "--publish", "", NULL };
	assert_int_equal(mode_of(none_first), NET_PUBLISHED);
	assert_int_equal(mode_of(none_last), NET_PUBLISHED);
	assert_int_equal(mode_of(alone), NET_NAT);
	assert_int_equal(mode_of(nat_last), NET_NAT);
	assert_int_equal(mode_of(none_then_nat), NET_NAT);    /* the last --net wins */
	assert_int_equal(mode_of(nat_then_none), NET_PUBLISHED);
	assert_int_equal(mode_of(allow_first), NET_ALLOW);
}

/* ---------- net_opts_finish: before the run ---------- */

static void check_publish(void **state)
{
	(void)state;
	struct error e = { 0 };
	/* a port a program of the host listens on */
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(listen(fd, 1), 0);
	socklen_t sl = sizeof sa;
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	unsigned port = ntohs(sa.sin_port);
	struct net_opts used = { .mode = NET_NAT, .npublish = 1, .publish = { { htonl(INADDR_LOOPBACK), (uint16_t)port, 80 } } };
	assert_true(net_opts_finish(&used, &e) < 0);
	char want[128];
	snprintf(want, sizeof want, "--publish 127.0.0.1:%u:80: host port %u is in use on 127.0.0.1", port, port);
	expect_msg("in use", &e, want);
	close(fd);
	/* the port is free again */
	assert_int_equal(net_opts_finish(&used, &e), 0);
	/* an address the host does not have (TEST-NET-3) */
	struct net_opts far = { .mode = NET_NAT, .npublish = 1, .publish = { { ip("203.0.113.77"), 8080, 80 } } };
	assert_true(net_opts_finish(&far, &e) < 0);
	expect_msg("not an address", &e, "203.0.113.77 is not an address of this host");
}

/* ---------- --dns-max-names ---------- */

static void max_names(void **state)
{
	(void)state;
	struct net_opts o = { 0 };
	struct error e = { 0 };
	assert_int_equal(net_parse_max_names(&o, "1", &e), 0);
	assert_int_equal(o.dns_max_names, 1);
	assert_int_equal(net_parse_max_names(&o, "1000000", &e), 0);
	assert_int_equal(o.dns_max_names, 1000000);
	static const char *const bad[] = { "0", "1000001", "", "ten", "5x", "-1", "99999999999999999999" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		if (net_parse_max_names(&o, bad[i], &e) >= 0)
			fail_msg("--dns-max-names '%s': accepted", bad[i]);
		char want[96];
		snprintf(want, sizeof want, "--dns-max-names: '%s' is not a whole number from 1 to 1000000", bad[i]);
		expect_msg(bad[i], &e, want);
	}
	assert_int_equal(o.dns_max_names, 1000000);   /* a refused value leaves the last good one */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allow_entries), cmocka_unit_test(allow_entries_bad), cmocka_unit_test(publish),
		cmocka_unit_test(publish_bad),   cmocka_unit_test(publish_mode),      cmocka_unit_test(publish_order),
		cmocka_unit_test(check_publish), cmocka_unit_test(max_names),     cmocka_unit_test(mode_allowed),
	};
	return cmocka_run_group_tests_name("netopts", tests, NULL, NULL);
}
