/* SPDX-License-Identifier: Apache-2.0 */
/* test_dnsname.c - names of DNS in wire form (net/dnsname.h): well-formedness, the safe names,
 * comparison without case, the lower case asked upstream, the text of the record, and the
 * allow list's matching label by label (a label holding a dot matches no label of a pattern). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/dnsname.h"
#include "net/net.h"

/* The wire form of labels separated by '/' ("x.web1/test" is the label "x.web1", then "test";
 * "" is the root) into out; its length. */
static size_t wire(const char *labels, uint8_t out[DNS_NAME_MAX])
{
	size_t n = 0;
	for (const char *l = labels; *l;) {
		size_t len = strcspn(l, "/");
		out[n++] = (uint8_t)len;
		memcpy(out + n, l, len);
		n += len;
		l += len + (l[len] == '/');
	}
	out[n++] = 0;
	return n;
}

#define RAW(s) (const uint8_t *)(s), sizeof(s) /* a literal's NUL is the root's label */

static void labels_well_formed(void **state)
{
	(void)state;
	size_t off[DNS_LABELS_MAX];
	uint8_t w[DNS_NAME_MAX];
	assert_int_equal(dns_name_labels(w, wire("www/web1/test", w), off), 3);
	assert_int_equal(off[0], 0);
	assert_int_equal(off[1], 4);
	assert_int_equal(off[2], 9);
	assert_int_equal(dns_name_labels(RAW(""), off), 0);
	assert_int_equal(dns_name_labels(RAW("\006x.web1\004test"), off), 2);
}

static void labels_malformed(void **state)
{
	(void)state;
	size_t off[DNS_LABELS_MAX];
	static const uint8_t pointer[] = { 3, 'w', 'w', 'w', 0xc0, 12 }, no_end[] = { 4, 't', 'e', 's', 't' },
			     past[] = { 9, 't', 'e', 's', 't', 0 }, extra[] = { 1, 'a', 0, 0 }, long_label[] = { 64 };
	assert_int_equal(dns_name_labels(pointer, sizeof pointer, off), -1);
	assert_int_equal(dns_name_labels(no_end, sizeof no_end, off), -1);
	assert_int_equal(dns_name_labels(past, sizeof past, off), -1);
	assert_int_equal(dns_name_labels(extra, sizeof extra, off), -1);
	assert_int_equal(dns_name_labels(long_label, sizeof long_label, off), -1);
	assert_int_equal(dns_name_labels(pointer, 0, off), -1);
	uint8_t big[DNS_NAME_MAX + 1];
	memset(big, 1, sizeof big); /* 1, 1, 1, ...: labels of one byte "\001" */
	big[DNS_NAME_MAX] = 0;
	assert_int_equal(dns_name_labels(big, sizeof big, off), -1);
	assert_int_equal(dns_name_labels(big + 1, sizeof big - 1, off), 127);
}

static void safe_names(void **state)
{
	(void)state;
	static const struct { const char *labels; bool safe; } cases[] = {
		{ "web1/test", true }, { "WWW/Web1/TEST", true }, { "_http/_tcp/web1/test", true }, { "a-b/test", true },
		{ "", true }, { "x.web1/test", false }, { "a b/test", false }, { "a\\b/test", false }, { "*/web1/test", false },
		{ "a\"b/test", false }, { "\x7f/test", false }, { "\xc3\xa9/test", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t w[DNS_NAME_MAX];
		size_t len = wire(cases[i].labels, w);
		if (dns_name_safe(w, len) != cases[i].safe)
			fail_msg("%s: safe %d, expected %d", cases[i].labels, !cases[i].safe, cases[i].safe);
	}
	assert_false(dns_name_safe(RAW("\001\000\004test"))); /* a NUL byte inside a label */
	assert_false(dns_name_safe(RAW("\003www\300\014")));
}

static void equal_names(void **state)
{
	(void)state;
	uint8_t a[DNS_NAME_MAX], b[DNS_NAME_MAX];
	static const struct { const char *a, *b; bool equal; } cases[] = {
		{ "web1/test", "web1/test", true }, { "WEB1/Test", "web1/tEST", true }, { "", "", true },
		{ "web1/test", "web2/test", false }, { "x.web1/test", "x/web1/test", false }, { "a.b/c", "a/b.c", false },
		{ "web1/test", "web1/test/x", false }, { "\xc3/test", "\xe3/test", false }, { "@/test", "`/test", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t al = wire(cases[i].a, a), bl = wire(cases[i].b, b);
		if (dns_name_equal(a, al, b, bl) != cases[i].equal)
			fail_msg("%s and %s: equal %d, expected %d", cases[i].a, cases[i].b, !cases[i].equal, cases[i].equal);
	}
	assert_false(dns_name_equal(RAW("\003www\300\014"), RAW("\003www\300\014")));
}

static void text_of_names(void **state)
{
	(void)state;
	static const struct { const char *labels, *text; } cases[] = {
		{ "WWW/Web1/Test", "www.web1.test" }, { "", "." }, { "x.web1/test", "x\\046web1.test" },
		{ "a\\046b/test", "a\\092046b.test" }, { "a b/\xff", "a\\032b.\\255" }, { "_x-1/test", "_x-1.test" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t w[DNS_NAME_MAX];
		char *t = dns_name_text(w, wire(cases[i].labels, w));
		if (!t || strcmp(t, cases[i].text) != 0)
			fail_msg("%s: text '%s', expected '%s'", cases[i].labels, t ? t : "(null)", cases[i].text);
		free(t);
	}
	assert_null(dns_name_text(RAW("\003www\300\014")));
}

static void lower_names(void **state)
{
	(void)state;
	static const struct { const char *labels, *lower; } cases[] = {
		{ "WWW/Web1/Test", "www/web1/test" }, { "", "" }, { "A-Z_@[/09", "a-z_@[/09" }, { "\xc0\xdd/x", "\xc0\xdd/x" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t w[DNS_NAME_MAX], want[DNS_NAME_MAX];
		size_t len = wire(cases[i].labels, w);
		dns_name_lower(w, len);
		assert_int_equal(wire(cases[i].lower, want), len);
		if (memcmp(w, want, len))
			fail_msg("%s: not lowered to %s", cases[i].labels, cases[i].lower);
	}
	uint8_t l63[66] = { 63 }; /* a length byte is below 'A' (65): never changed */
	memset(l63 + 1, 'X', 63);
	dns_name_lower(l63, sizeof l63);
	assert_int_equal(l63[0], 63);
	assert_int_equal(l63[1], 'x');
}

static bool matches(const char *pattern, const char *labels)
{
	struct net_allow *a;
	size_t n;
	struct error err = { 0 };
	if (net_allow_parse(pattern, &a, &n, &err) < 0 || n != 1)
		fail_msg("'%s' is not an allowed name: %s", pattern, err.msg ? err.msg : "?");
	uint8_t w[DNS_NAME_MAX];
	bool m = net_allow_name_matches(&a[0], w, wire(labels, w));
	net_allow_free(a, n);
	return m;
}

static void allow_matches_labels(void **state)
{
	(void)state;
	static const struct { const char *pattern, *labels; bool match; } cases[] = {
		{ "web1.test", "web1/test", true }, { "web1.test", "WEB1/Test", true }, { "Web1.Test.", "web1/test", true },
		{ "web1.test", "x/web1/test", false }, { "web1.test", "web1.test", false }, { "web1.test", "web1/test/x", false },
		{ "web1.test", "web1", false }, { "web1.test", "", false }, { "web1.test", "web1/test.", false },
		{ "*.web1.test", "a/web1/test", true }, { "*.web1.test", "a/b/web1/test", true },
		{ "*.web1.test", "A/WEB1/test", true }, { "*.web1.test", "web1/test", false },
		{ "*.web1.test", "x.web1/test", false }, { "*.web1.test", "x/web1.test", false },
		{ "*.web1.test", "xweb1/test", false }, { "*.web1.test", "a.b/web1/test", false /* an odd label matches nothing, '*' neither */ },
		{ "*.web1.test", "a/web1/te.st", false }, { "*.test", "web1/test", true }, { "*.test", "test", false },
		{ "pypi.org:443", "pypi/org", true }, { "a_b.test", "A_B/test", true }, { "a-b.test", "a_b/test", false },
		{ "web1.test", "web\xb1/test", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (matches(cases[i].pattern, cases[i].labels) != cases[i].match)
			fail_msg("%s against %s: %d, expected %d", cases[i].pattern, cases[i].labels, !cases[i].match, cases[i].match);
	struct net_allow addr = { .addr = 0x0100000a, .prefix = 32 };
	uint8_t w[DNS_NAME_MAX];
	assert_false(net_allow_name_matches(&addr, w, wire("web1/test", w)));
	struct net_allow name = { .name = "web1.test" };
	assert_false(net_allow_name_matches(&name, RAW("\004web1\300\014")));
}

static void allow_refuses_bad_labels(void **state)
{
	(void)state;
	char label64[80] = { 0 };
	memset(label64, 'x', 64);
	strcat(label64, ".test");
	const char *const bad[] = { "a..b", ".web1.test", "*.", "*..test", "web1 .test", label64 };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct net_allow *a = NULL;
		size_t n = 0;
		struct error err = { 0 };
		if (net_allow_parse(bad[i], &a, &n, &err) != -EINVAL || !err.msg || !strstr(err.msg, "host name"))
			fail_msg("'%s': accepted (%zu entries) or without the message", bad[i], n);
		error_clear(&err);
	}
	char pat63[80] = { 0 }, labels63[80] = { 0 }; /* a label of 63 bytes is allowed */
	memset(pat63, 'x', 63);
	memset(labels63, 'x', 63);
	assert_true(matches(strcat(pat63, ".test"), strcat(labels63, "/test")));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(labels_well_formed),
		cmocka_unit_test(labels_malformed),
		cmocka_unit_test(safe_names),
		cmocka_unit_test(equal_names),
		cmocka_unit_test(text_of_names),
		cmocka_unit_test(lower_names),
		cmocka_unit_test(allow_matches_labels),
		cmocka_unit_test(allow_refuses_bad_labels),
	};
	return cmocka_run_group_tests_name("dnsname", tests, NULL, NULL);
}
