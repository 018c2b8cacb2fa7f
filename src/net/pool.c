/* SPDX-License-Identifier: Apache-2.0 */
/* pool.c - the ranges warren's runs may take (net.pool in warren.conf, default
 * NET_POOL_DEFAULT): their words, and the pure choice of the first range of the pool that meets
 * none of the host's own networks (read by net.c; podman's 10.88.0.0/16, docker's
 * 172.17.0.0/16, a VPN's routes). See docs/network.md. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "net/net.h"
#include "util/fs.h"

int net_cidr_parse(const char *text, int least, struct net_cidr *out)
{
	char a[32], extra;
	int p;
	struct in_addr in;
	if (sscanf(text, "%31[0-9.]/%d%c", a, &p, &extra) != 2 || inet_pton(AF_INET, a, &in) != 1 || p < least ||
	    p > NET_SUBNET_MOST)
		return -EINVAL;
	out->prefix = p;
	out->addr = in.s_addr & htonl(~0u << (32 - p));
	return 0;
}

int net_pool_parse(const char *text, struct net_cidr **out, size_t *n, struct error *err)
{
	_cleanup_free_ char *copy = xstrdup(text);
	*out = NULL;
	*n = 0;
	char *save = NULL;
	for (char *w = strtok_r(copy, ", \t", &save); w; w = strtok_r(NULL, ", \t", &save)) {
		struct net_cidr c;
		if (net_cidr_parse(w, NET_POOL_LEAST, &c) < 0) {
			free(*out);
			*out = NULL;
			*n = 0;
			return error_set(err, 0, "'%s' is not an IPv4 network from /%d to /%d (e.g. 10.88.0.0/16)", w,
					 NET_POOL_LEAST, NET_SUBNET_MOST);
		}
		*out = xrealloc(*out, (*n + 1) * sizeof **out);
		(*out)[(*n)++] = c;
	}
	if (!*n)
		return error_set(err, 0, "no network given (e.g. 10.88.0.0/16, 172.30.0.0/16)");
	return 0;
}

static bool nets_meet(uint32_t a, int pa, uint32_t b, int pb)
{
	int p = pa < pb ? pa : pb;
	uint32_t m = p ? htonl(~0u << (32 - p)) : 0;
	return (a & m) == (b & m);
}

ssize_t net_subnet_taken_by(const struct net_cidr *c, const struct net_host_net *h, size_t nh)
{
	for (size_t i = 0; i < nh; i++) {
		/* a wider route that holds the range (a VPN's 10.0.0.0/8, the default) is shadowed
		 * for the range alone, as docker's bridge does; an interface's network never is */
		if (h[i].route && h[i].prefix < c->prefix)
			continue;
		if (nets_meet(h[i].addr, h[i].prefix, c->addr, c->prefix))
			return (ssize_t)i;
	}
	return -1;
}

bool net_pool_pick(const struct net_cidr *pool, size_t npool, const struct net_host_net *h, size_t nh,
		   struct net_cidr *out)
{
	for (size_t i = 0; i < npool; i++) {
		int step = pool[i].prefix > NET_POOL_STEP ? pool[i].prefix : NET_POOL_STEP;
		uint32_t count = 1u << (step - pool[i].prefix), first = ntohl(pool[i].addr);
		for (uint32_t k = 0; k < count; k++) {
			struct net_cidr c = { htonl(first + (k << (32 - step))), step };
			if (net_subnet_taken_by(&c, h, nh) < 0) {
				*out = c;
				return true;
			}
		}
	}
	return false;
}

char *net_cidr_text(const struct net_cidr *c)
{
	char a[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &c->addr, a, sizeof a);
	return xasprintf("%s/%d", a, c->prefix);
}
