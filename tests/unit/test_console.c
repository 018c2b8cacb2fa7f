/* SPDX-License-Identifier: Apache-2.0 */
/* test_console.c - the console's decisions: the CSRF check (console_origin_ok), the cookie's
 * token (console_unhex), the embedded files and their types. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "serve/console.h"

static void test_origin(void **state)
{
	(void)state;
	static const struct {
		const char *method, *origin, *host, *site;
		bool by_cookie, want;
	} cases[] = {
		{ "GET", "http://evil.example", "127.0.0.1:8280", "cross-site", true, true },   /* reads change nothing */
		{ "HEAD", NULL, NULL, NULL, true, true },
		{ "POST", "http://127.0.0.1:8280", "127.0.0.1:8280", "same-origin", true, true },
		{ "POST", "https://warren.example", "warren.example", NULL, true, true },       /* behind a TLS proxy */
		{ "POST", "http://evil.example", "127.0.0.1:8280", NULL, true, false },
		{ "POST", "http://127.0.0.1:8280", "127.0.0.1:8280", "cross-site", true, false },
		{ "POST", "http://127.0.0.1:8280", "127.0.0.1:8280", "same-site", true, false },
		{ "POST", "http://127.0.0.1:8281", "127.0.0.1:8280", NULL, true, false },       /* another port */
		{ "POST", "http://127.0.0.1:8280.evil", "127.0.0.1:8280", NULL, true, false },
		{ "POST", "http://127.0.0.1", "127.0.0.1:8280", NULL, true, false },
		{ "POST", "null", "127.0.0.1:8280", NULL, true, false },                        /* a sandboxed frame */
		{ "POST", "ftp://127.0.0.1:8280", "127.0.0.1:8280", NULL, true, false },
		{ "POST", "http://127.0.0.1:8280", NULL, NULL, true, false },                   /* no Host */
		{ "POST", NULL, "127.0.0.1:8280", NULL, true, false },                          /* the cookie, no Origin */
		{ "POST", NULL, "127.0.0.1:8280", NULL, false, true },                          /* curl with a bearer */
		{ "DELETE", "http://evil.example", "127.0.0.1:8280", NULL, false, false },      /* a foreign page, unix socket */
		{ "DELETE", NULL, NULL, "cross-site", false, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bool got = console_origin_ok(cases[i].method, cases[i].origin, cases[i].host, cases[i].site, cases[i].by_cookie);
		if (got != cases[i].want)
			fail_msg("case %zu: %s Origin %s Host %s Sec-Fetch-Site %s cookie %d: got %d, want %d", i, cases[i].method,
				 cases[i].origin ?: "-", cases[i].host ?: "-", cases[i].site ?: "-", cases[i].by_cookie, got, cases[i].want);
	}
}

static void test_unhex(void **state)
{
	(void)state;
	char *t = console_unhex("3031617a");
	assert_non_null(t);
	assert_string_equal(t, "01az");
	free(t);
	static const char *const bad[] = { NULL, "", "3", "303", "zz", "3G", "4142 ", "00", "4100", "41%00" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		t = console_unhex(bad[i]);
		if (t)
			fail_msg("console_unhex(\"%s\"): got \"%s\", want NULL", bad[i] ?: "(null)", t);
	}
}

static void test_assets(void **state)
{
	(void)state;
	const struct console_asset *a = console_asset_find("index.html");
	assert_non_null(a);
	assert_true(a->len > 100);
	assert_non_null(memmem(a->data, a->len, "<script src=\"/console/app.js\"", 29));
	assert_non_null(console_asset_find("app.js"));
	assert_non_null(console_asset_find("style.css"));
	assert_null(console_asset_find("../index.html"));
	assert_null(console_asset_find(""));
	assert_string_equal(console_content_type("app.js"), "text/javascript; charset=utf-8");
	assert_string_equal(console_content_type("index.html"), "text/html; charset=utf-8");
	assert_string_equal(console_content_type("style.css"), "text/css; charset=utf-8");
	assert_string_equal(console_content_type("x.bin"), "application/octet-stream");
	assert_string_equal(console_content_type("noext"), "application/octet-stream");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_origin),
		cmocka_unit_test(test_unhex),
		cmocka_unit_test(test_assets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
