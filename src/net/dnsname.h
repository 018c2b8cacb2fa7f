/* SPDX-License-Identifier: Apache-2.0 */
/* dnsname.h - names of DNS in wire form (length-prefixed labels, a zero at the end, no
 * compression): checked, compared and written as text for the resolver (dns.c) and for the
 * allow list's names (net_allow_name_matches in net.h). Pure functions. */
#ifndef WARREN_NET_DNSNAME_H
#define WARREN_NET_DNSNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_NAME_MAX 255   /* bytes of a name in wire form */
#define DNS_LABELS_MAX 128 /* labels of a name of DNS_NAME_MAX bytes, the root's included */

/* The offsets of the labels of name (len bytes, the root's zero excluded) into off; their
 * count, or -1 when name is not exactly one well-formed uncompressed name. */
int dns_name_labels(const uint8_t *name, size_t len, size_t off[DNS_LABELS_MAX]);
/* True when name is well formed and every label holds only letters, digits, '-' and '_':
 * the names whose text form is unambiguous. */
bool dns_name_safe(const uint8_t *name, size_t len);
/* True when a and b are the same name, ASCII letters compared without case. */
bool dns_name_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);
/* ASCII letters of name to lower case, in place (the length bytes, below 64, are never letters):
 * the form warren asks upstream, so that letter case carries nothing past the count of names. */
void dns_name_lower(uint8_t *name, size_t len);
/* The name as text (heap): lower case, labels joined by '.', no trailing dot ("." for the
 * root); a byte other than a letter, a digit, '-' or '_' is written \DDD (a dot inside a
 * label as \046), so that two names never share a text. NULL when name is malformed. */
char *dns_name_text(const uint8_t *name, size_t len);

#endif
