/* SPDX-License-Identifier: Apache-2.0 */
/* admit.c - the server's pure decisions about connections (conns.h): whether one more is taken
 * (by user on a unix socket, by source on TCP), whose cap a subordinate uid counts against, the
 * source of an address, whether a body may be held, and the line a refused connection is told.
 * conns.c gathers the facts and applies the verdicts; tests/unit/test_conns.c has the tables. */
#include "serve/conns.h"

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "util/error.h"

enum conn_verdict conn_admit(const struct conn_counts *c, uid_t uid, uid_t server_uid)
{
	if (c->total >= CONN_MAX)
		return CONN_FULL;
	if (uid == 0 || uid == server_uid)
		return CONN_TAKE;
	if (c->of_uid >= CONN_PER_USER)
		return CONN_USER_FULL;
	if (c->others >= CONN_MAX - CONN_RESERVED)
		return CONN_OTHERS_FULL;
	return CONN_TAKE;
}

/* The decimal number at p..end (all of it), at most max: 0, or -EINVAL. */
static int parse_num(const char *p, const char *end, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	if (p == end)
		return -EINVAL;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9' || v > (max - (uint64_t)(*p - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return 0;
}

int subid_parse_line(const char *text, const char *end, const char **name, size_t *nlen, struct subid_range *r)
{
	const char *c1 = memchr(text, ':', (size_t)(end - text));
	const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
	if (!c1 || !c2 || c1 == text || *text == '#' || memchr(c2 + 1, ':', (size_t)(end - c2 - 1)))
		return -EINVAL;
	uint64_t owner;
	if (parse_num(c1 + 1, c2, UINT32_MAX, &r->start) < 0 || parse_num(c2 + 1, end, UINT32_MAX, &r->count) < 0 ||
	    !r->count)
		return -EINVAL;
	r->owner = parse_num(text, c1, UINT32_MAX - 1, &owner) == 0 ? (uid_t)owner : (uid_t)-1;
	*name = text;
	*nlen = (size_t)(c1 - text);
	return 0;
}

uid_t conn_owner(const struct subid_range *r, size_t n, uid_t uid, uid_t server_uid)
{
	if (uid == 0 || uid == server_uid)
		return uid;
	for (size_t i = 0; i < n; i++) {
		if (uid < r[i].start || uid - r[i].start >= r[i].count)
			continue;
		uid_t o = r[i].owner;
		return o == (uid_t)-1 || o == 0 || o == server_uid ? (uid_t)r[i].start : o;
	}
	return uid;
}

bool conn_source_of(const struct sockaddr *addr, socklen_t len, struct conn_source *out)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	memset(out, 0, sizeof *out);
	if (addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		memcpy(out->a, mapped, 12);
		memcpy(out->a + 12, &((const struct sockaddr_in *)addr)->sin_addr, 4);
	} else if (addr->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		memcpy(out->a, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
		if (memcmp(out->a, mapped, 12) && !IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)out->a))
			memset(out->a + 8, 0, 8);  /* an IPv6 host has its /64 */
	} else {
		return false;
	}
	/* loopback, every address of it: one source (any local user may bind 127.x.y.z) */
	if (IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)out->a) || (!memcmp(out->a, mapped, 12) && out->a[12] == 127)) {
		memcpy(out->a, mapped, 12);
		memcpy(out->a + 12, (const unsigned char[]){ 127, 0, 0, 1 }, 4);
	}
	return true;
}

enum conn_verdict conn_admit_tcp(const struct tcp_counts *c)
{
	if (c->of_source >= CONN_PER_USER)
		return CONN_EVICT_SOURCE;
	if (c->pending >= CONN_MAX - CONN_RESERVED || c->total >= CONN_MAX)
		return c->pending ? CONN_EVICT_OLDEST : CONN_FULL;
	return CONN_TAKE;
}

bool body_admit(size_t held, size_t want)
{
	return want <= BODIES_MAX && held <= BODIES_MAX - want;
}

char *conn_refusal(enum conn_verdict v, uid_t uid, uid_t owner, const char *source)
{
	switch (v) {
	case CONN_USER_FULL:
		if (owner != uid)
			return xasprintf("uid %u is uid %u's (/etc/subuid), whose uids hold %d connections to warren serve, its most; close some (or finish their requests) and ask again",
					 (unsigned)uid, (unsigned)owner, CONN_PER_USER);
		return xasprintf("uid %u holds %d connections to warren serve, its most; close some (or finish their requests) and ask again",
				 (unsigned)uid, CONN_PER_USER);
	case CONN_OTHERS_FULL:
		return xasprintf("users other than root and the server's hold %d connections to warren serve, their most; ask again later",
				 CONN_MAX - CONN_RESERVED);
	case CONN_FULL:
		return xasprintf("warren serve holds %d connections, its most; ask again later", CONN_MAX);
	case CONN_EVICT_SOURCE:
		return xasprintf("%s opened more than %d connections to warren serve without the token; this one, its oldest, is closed: send a request's head at once, with 'Authorization: Bearer TOKEN'",
				 source ? source : "this address", CONN_PER_USER);
	case CONN_EVICT_OLDEST:
		return xasprintf("warren serve holds %d connections without the token, their most; this one, the oldest, is closed: send a request's head at once, with 'Authorization: Bearer TOKEN'",
				 CONN_MAX - CONN_RESERVED);
	case CONN_TAKE:
		break;
	}
	return xstrdup("");
}
