/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_net_opts.c - the words of the network options (--net, --publish on each line,
 * --dns-max-names, the allow list) on the text before the input's first NUL, and the names of
 * DNS in wire form (dnsname.c, net_allow_name_matches) on the bytes after it (or all of them). */
#include <stdlib.h>

#include "fuzz.h"
#include "net/dnsname.h"
#include "net/net.h"

static void check_name(const uint8_t *name, size_t len)
{
	size_t off[DNS_LABELS_MAX];
	int n = dns_name_labels(name, len, off);
	_cleanup_free_ char *text = dns_name_text(name, len);
	bool safe = dns_name_safe(name, len);
	/* a well-formed name has a text and equals itself; a malformed one has neither, nor is safe */
	if ((n >= 0) != (text != NULL) || (n >= 0) != dns_name_equal(name, len, name, len) || (safe && n < 0))
		abort();
}

static void match_all(const char *list, const uint8_t *name, size_t len)
{
	struct error err = { 0 };
	struct net_allow *a;
	size_t n;
	if (net_allow_parse(list, &a, &n, &err) == 0) {
		for (size_t i = 0; i < n; i++)
			net_allow_name_matches(&a[i], name, len);
		net_allow_free(a, n);
	}
	error_clear(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *text = fuzz_string(data, size);
	size_t tlen = strlen(text);
	const uint8_t *name = tlen < size ? data + tlen + 1 : data;
	size_t nlen = tlen < size ? size - tlen - 1 : size;
	check_name(name, nlen);

	struct error err = { 0 };
	struct net_opts o = { 0 };
	if (net_parse_mode(&o, text, &err) == 0 && o.allow)
		match_all(o.allow, name, nlen);
	error_clear(&err);
	match_all(text, name, nlen);
	net_parse_max_names(&o, text, &err);
	error_clear(&err);
	/* each line a --publish, as the options come one after the other */
	_cleanup_free_ char *lines = xstrdup(text);
	char *save = NULL;
	for (char *l = strtok_r(lines, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		net_parse_publish(&o, l, &err);
		error_clear(&err);
	}
	return 0;
}
