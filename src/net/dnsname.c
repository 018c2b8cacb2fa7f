/* SPDX-License-Identifier: Apache-2.0 */
/* dnsname.c - names of DNS in wire form: checked label by label, compared without ASCII case,
 * matched against the allow list's names, and written as text for the record. A name is
 * never turned into text to be compared: the label "x.web1" is one label, and it matches no
 * label of a pattern (see dnsname.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/dnsname.h"
#include "net/net.h"
#include "util/error.h"

static bool safe_byte(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

void dns_name_lower(uint8_t *name, size_t len)
{
	for (size_t i = 0; i < len; i++)
		name[i] = lower(name[i]);
}

int dns_name_labels(const uint8_t *name, size_t len, size_t off[DNS_LABELS_MAX])
{
	int n = 0;
	for (size_t pos = 0; pos < len && len <= DNS_NAME_MAX;) {
		uint8_t l = name[pos];
		if (l == 0)
			return pos + 1 == len ? n : -1;
		if (l > 63 || n == DNS_LABELS_MAX - 1) /* compression pointers and extended labels too */
			return -1;
		off[n++] = pos;
		pos += 1 + (size_t)l;
	}
	return -1;
}

bool dns_name_safe(const uint8_t *name, size_t len)
{
	size_t off[DNS_LABELS_MAX];
	int n = dns_name_labels(name, len, off);
	for (int i = 0; i < n; i++)
		for (size_t k = 1; k <= name[off[i]]; k++)
			if (!safe_byte(name[off[i] + k]))
				return false;
	return n >= 0;
}

bool dns_name_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t off[DNS_LABELS_MAX];
	if (alen != blen || dns_name_labels(a, alen, off) < 0 || dns_name_labels(b, blen, off) < 0)
		return false;
	/* the length bytes (0-63) are below 'A': lowering every byte leaves them alone, so two
	 * names of the same length that agree byte by byte have the same labels */
	for (size_t i = 0; i < alen; i++)
		if (lower(a[i]) != lower(b[i]))
			return false;
	return true;
}

char *dns_name_text(const uint8_t *name, size_t len)
{
	size_t off[DNS_LABELS_MAX];
	int n = dns_name_labels(name, len, off);
	if (n < 0)
		return NULL;
	if (n == 0)
		return xstrdup(".");
	char *s = xcalloc(1, len * 4 + 1), *p = s; /* \DDD at most, for each byte */
	for (int i = 0; i < n; i++) {
		if (i)
			*p++ = '.';
		for (size_t k = 1; k <= name[off[i]]; k++) {
			uint8_t c = name[off[i] + k];
			p += safe_byte(c) ? sprintf(p, "%c", lower(c)) : sprintf(p, "\\%03u", c);
		}
	}
	return s;
}

/* True when the label at w (its length byte first) is the pattern label p (pl bytes, lower case). */
static bool label_is(const uint8_t *w, const char *p, size_t pl)
{
	if (w[0] != pl)
		return false;
	for (size_t k = 0; k < pl; k++)
		if (lower(w[1 + k]) != (uint8_t)p[k])
			return false;
	return true;
}

bool net_allow_name_matches(const struct net_allow *a, const uint8_t *name, size_t len)
{
	if (!a->name)
		return false;
	bool wild = a->name[0] == '*' && a->name[1] == '.';
	const char *pat = a->name + (wild ? 2 : 0), *end = pat + strlen(pat);
	size_t off[DNS_LABELS_MAX];
	int n = dns_name_labels(name, len, off);
	if (n < 0 || !dns_name_safe(name, len)) /* an odd label matches nothing, not even '*' */
		return false;
	/* the pattern's labels from the right, each against the name's label in that place */
	while (end > pat) {
		const char *dot = memrchr(pat, '.', (size_t)(end - pat)), *lab = dot ? dot + 1 : pat;
		if (--n < 0 || !label_is(name + off[n], lab, (size_t)(end - lab)))
			return false;
		end = dot ? dot : pat;
	}
	/* "*.x.y": one label or more before x.y */
	return wild ? n > 0 : n == 0;
}
