/* SPDX-License-Identifier: Apache-2.0 */
/* test_conf.c - warren.conf's parser (util/conf.c, with the keys of cli/config.c): lines,
 * comments, a later file winning, every refusal one line with FILE:LINE (an unknown key with
 * the nearest one, each key's bad value), who may own a file; and the pool of the runs'
 * subnet (net/pool.c): its words and the pure choice of the first free range beside the
 * host's networks (podman's 10.88.0.0/16, a VPN's wide route, a narrow route). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "cli/config.h"
#include "net/net.h"
#include "util/conf.h"

static void expect_msg(const char *what, struct error *e, const char *want)
{
	if (!e->msg || !strstr(e->msg, want) || strchr(e->msg, '\n'))
		fail_msg("%s: '%s' does not say '%s' on one line", what, e->msg ? e->msg : "(null)", want);
	error_clear(e);
}

/* ---------- the parser ---------- */

static void conf_lines(void **state)
{
	(void)state;
	struct error e = { 0 };
	conf_reset();
	assert_int_equal(conf_load_text("/etc/w.conf", "# a comment\n\n  net.pool = 10.1.0.0/16,172.30.0.0/16  # trailing\n"
					"limits.memory=2G\nstate = /srv/warren\n", cli_config_keys(), &e), 0);
	const char *from = NULL;
	assert_string_equal(conf_get("net.pool", &from), "10.1.0.0/16,172.30.0.0/16");
	assert_string_equal(from, "/etc/w.conf:3");
	assert_string_equal(conf_get("limits.memory", NULL), "2G");
	assert_string_equal(conf_get("state", NULL), "/srv/warren");
	assert_null(conf_get("net", NULL));
	/* a later file wins, naming itself */
	assert_int_equal(conf_load_text("/home/u/w.conf", "limits.memory = 1G\n", cli_config_keys(), &e), 0);
	assert_string_equal(conf_get("limits.memory", &from), "1G");
	assert_string_equal(from, "/home/u/w.conf:1");
	const char **keys = conf_keys();
	assert_string_equal(keys[0], "net.pool");
	assert_null(keys[3]);
	free(keys);
	conf_reset();
	assert_null(conf_get("state", NULL));
}

static void conf_refusals(void **state)
{
	(void)state;
	static const struct { const char *text, *want; } bad[] = {
		{ "net.pol = 10.0.0.0/16\n", "f:1: unknown key 'net.pol'; did you mean 'net.pool'?" },
		{ "\nlimit.memory = 2G\n", "f:2: unknown key 'limit.memory'; did you mean 'limits.memory'?" },
		{ "colour = blue\n", "f:1: unknown key 'colour'; the keys are state, oci.root, net, net.pool, limits.time" },
		{ "just words\n", "f:1: 'just words' is not a line key = value" },
		{ "state =\n", "f:1: state: '' is not a directory" },
		{ "state = relative/dir\n", "f:1: state: 'relative/dir' is not an absolute path" },
		{ "net = natt\n", "f:1: net: 'natt' is not a network mode" },
		{ "net.pool = 10.88.0.0\n", "f:1: net.pool: '10.88.0.0' is not an IPv4 network from /8 to /28" },
		{ "net.pool = 10.88.0.0/30\n", "f:1: net.pool: '10.88.0.0/30' is not an IPv4 network" },
		{ "limits.memory = lots\n", "f:1: limits.memory: 'lots' is not a size (e.g. 512M, 2G, 100K) or none" },
		{ "limits.memory = 0\n", "f:1: limits.memory: '0' is zero" },
		{ "limits.memory = 10K\n", "f:1: limits.memory: 10 KiB is too small to start a cell" },
		{ "limits.time = soon\n", "f:1: limits.time: 'soon' is not a duration" },
		{ "limits.pids = -1\n", "f:1: limits.pids: '-1' is not a positive whole number or none" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct error e = { 0 };
		conf_reset();
		if (conf_load_text("f", bad[i].text, cli_config_keys(), &e) != -EINVAL)
			fail_msg("'%s' was taken", bad[i].text);
		expect_msg(bad[i].text, &e, bad[i].want);
	}
	conf_reset();
}

static void conf_owners(void **state)
{
	(void)state;
	assert_null(conf_file_untrusted(0, 0, 0100644, 1000));
	assert_null(conf_file_untrusted(1000, 1000, 0100600, 1000));
	assert_null(conf_file_untrusted(0, 0, 0100664, 1000)); /* root's group */
	assert_non_null(conf_file_untrusted(1001, 1001, 0100644, 1000));
	assert_non_null(conf_file_untrusted(1001, 1001, 0100644, 0));
	assert_non_null(conf_file_untrusted(0, 0, 0100646, 0));
	assert_non_null(conf_file_untrusted(1000, 1000, 0100664, 1000));
}

/* ---------- the pool ---------- */

static struct net_cidr cidr(const char *t)
{
	struct net_cidr c;
	assert_int_equal(net_cidr_parse(t, 8, &c), 0);
	return c;
}

static void pool_words(void **state)
{
	(void)state;
	struct net_cidr *p = NULL;
	size_t n = 0;
	struct error e = { 0 };
	assert_int_equal(net_pool_parse("10.88.0.0/13, 172.30.9.9/16\t192.168.77.0/24", &p, &n, &e), 0);
	assert_int_equal(n, 3);
	_cleanup_free_ char *t1 = net_cidr_text(&p[1]);
	assert_string_equal(t1, "172.30.0.0/16"); /* the host bits cleared */
	free(p);
	assert_int_equal(net_pool_parse(" , ", &p, &n, &e), -EINVAL);
	expect_msg("empty", &e, "no network given");
	assert_int_equal(net_pool_parse("10.0.0.0/8, 300.1.0.0/16", &p, &n, &e), -EINVAL);
	expect_msg("bad", &e, "'300.1.0.0/16' is not an IPv4 network");
	assert_null(p);
	assert_int_equal(net_pool_parse("10.0.0.0/7", &p, &n, &e), -EINVAL);
	expect_msg("wide", &e, "from /8 to /28");
}

static void pool_pick(void **state)
{
	(void)state;
	struct net_host_net podman = { .prefix = 16, .why = "podman" }, vpn = { .prefix = 8, .route = true, .why = "vpn" },
			    narrow = { .prefix = 28, .route = true, .why = "narrow" }, docker = { .prefix = 16, .why = "docker" };
	inet_pton(AF_INET, "10.88.0.1", &podman.addr);
	inet_pton(AF_INET, "10.0.0.0", &vpn.addr);
	inet_pton(AF_INET, "10.89.0.16", &narrow.addr);
	inet_pton(AF_INET, "172.17.0.1", &docker.addr);
	struct net_cidr def = cidr(NET_POOL_DEFAULT), out;
	static const struct { int hosts; const char *want; } cases[] = {
		{ 0, "10.88.0.0/24" },          /* nothing of the host's: the old default */
		{ 1, "10.89.0.0/24" },          /* podman's /16: past it */
		{ 2, "10.89.0.0/24" },          /* + a VPN's 10/8 route: shadowed, as docker's bridge does */
		{ 3, "10.89.1.0/24" },          /* + a /28 route inside 10.89.0.0/24 */
	};
	struct net_host_net h[] = { podman, vpn, narrow };
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		assert_true(net_pool_pick(&def, 1, h, (size_t)cases[i].hosts, &out));
		_cleanup_free_ char *t = net_cidr_text(&out);
		if (strcmp(t, cases[i].want))
			fail_msg("%d host networks: %s, not %s", cases[i].hosts, t, cases[i].want);
	}
	/* a narrower pool entry is one range; a pool all taken picks nothing */
	struct net_cidr two[] = { cidr("10.88.5.0/26"), cidr("172.17.0.0/16") };
	assert_false(net_pool_pick(two, 2, (struct net_host_net[]){ podman, docker }, 2, &out));
	assert_true(net_pool_pick(two, 2, &docker, 1, &out));
	_cleanup_free_ char *t = net_cidr_text(&out);
	assert_string_equal(t, "10.88.5.0/26");
	/* an interface's network counts however wide; which one is named */
	struct net_cidr c = cidr("10.88.200.0/24");
	assert_int_equal(net_subnet_taken_by(&c, h, 3), 0);
	c = cidr("10.200.0.0/24");
	assert_int_equal(net_subnet_taken_by(&c, h, 3), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conf_lines),
		cmocka_unit_test(conf_refusals),
		cmocka_unit_test(conf_owners),
		cmocka_unit_test(pool_words),
		cmocka_unit_test(pool_pick),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
