/* SPDX-License-Identifier: Apache-2.0 */
/* opts.c - the words of the network options: --net none|nat[,lan][,allow=LIST]|[lan,]allow=LIST,
 * --publish [ADDR:]HOSTPORT:CELLPORT (and the mode it implies: nat by default, none+publish
 * with an explicit --net none), --dns-max-names N, the allow list's entries, the
 * private ranges a cell does not reach unless asked (lan, or an allow= entry inside one), and
 * which answered addresses enter the allow set, for how long. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "net/net.h"

static int parse_port(const char *s, size_t len, uint16_t *out)
{
	if (!len || len > 5)
		return -1;
	unsigned v = 0;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (!v || v > 65535)
		return -1;
	*out = (uint16_t)v;
	return 0;
}

/* Letters, digits, '-', '_' in labels of 1 to 63 bytes, a trailing dot allowed; "*." first. */
static bool valid_name(const char *n)
{
	if (!*n || strlen(n) > 253)
		return false;
	if (n[0] == '*' && n[1] == '.')
		n += 2;
	size_t label = 0;
	for (const char *p = n; *p; p++) {
		if (*p == '.' && (!label || label > 63))
			return false;
		if (!isalnum((unsigned char)*p) && *p != '-' && *p != '.' && *p != '_')
			return false;
		label = *p == '.' ? 0 : label + 1;
	}
	return label <= 63 && *n;
}

static int parse_entry(const char *e, struct net_allow *a, struct error *err)
{
	*a = (struct net_allow){ 0 };
	_cleanup_free_ char *w = xstrdup(e);
	if (strchr(w, '[') || strchr(w, ':') != strrchr(w, ':'))
		return error_set(err, 0, "--net allow: '%s': IPv6 is not supported; give IPv4 addresses or host names", e);
	char *colon = strchr(w, ':');
	if (colon) {
		if (parse_port(colon + 1, strlen(colon + 1), &a->port) < 0)
			return error_set(err, 0, "--net allow: '%s': '%s' is not a port (1-65535)", e, colon + 1);
		*colon = '\0';
	}
	char *slash = strchr(w, '/');
	if (slash)
		*slash = '\0';
	struct in_addr in;
	if (inet_pton(AF_INET, w, &in) == 1) {
		a->prefix = 32;
		if (slash) {
			char *end;
			long p = strtol(slash + 1, &end, 10);
			if (!slash[1] || *end || p < 0 || p > 32)
				return error_set(err, 0, "--net allow: '%s': '/%s' is not a prefix length (0-32)", e, slash + 1);
			a->prefix = (int)p;
		}
		uint32_t mask = a->prefix ? htonl(~0u << (32 - a->prefix)) : 0;
		a->addr = in.s_addr & mask;
		return 0;
	}
	if (slash || !valid_name(w))
		return error_set(err, 0, "--net allow: '%s' is neither an IPv4 address, a CIDR nor a host name "
				 "(e.g. pypi.org:443, *.githubusercontent.com, 10.1.2.0/24:5432)", e);
	for (char *p = w; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	size_t l = strlen(w);
	if (l && w[l - 1] == '.')
		w[l - 1] = '\0';
	a->name = steal_pointer(&w);
	return 0;
}

int net_allow_parse(const char *list, struct net_allow **out, size_t *n, struct error *err)
{
	*out = NULL;
	*n = 0;
	_cleanup_free_ char *copy = xstrdup(list);
	char *save = NULL;
	for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*e))
			e++;
		if (!*e)
			continue;
		*out = xrealloc(*out, (*n + 1) * sizeof **out);
		if (parse_entry(e, &(*out)[*n], err) < 0) {
			net_allow_free(*out, *n);
			*out = NULL;
			*n = 0;
			return -EINVAL;
		}
		(*n)++;
	}
	return 0;
}

void net_allow_free(struct net_allow *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i].name);
	free(a);
}

const struct net_range net_private_ranges[] = {
	{ 0x0a000000, 8, true, "10.0.0.0/8" },
	{ 0xac100000, 12, true, "172.16.0.0/12" },
	{ 0xc0a80000, 16, true, "192.168.0.0/16" },
	{ 0x64400000, 10, true, "100.64.0.0/10" },
	{ 0xa9fe0000, 16, false, "169.254.0.0/16" },
	{ 0 },
};

const struct net_range *net_private_range(uint32_t addr, int prefix)
{
	for (const struct net_range *r = net_private_ranges; r->name; r++)
		if (prefix >= r->prefix && (ntohl(addr) >> (32 - r->prefix)) == r->host_addr >> (32 - r->prefix))
			return r;
	return NULL;
}

uint32_t net_dns_timeout(uint32_t ttl)
{
	uint64_t t = (uint64_t)ttl + NET_DNS_TTL_SLACK;
	return t < NET_DNS_TIMEOUT_MIN ? NET_DNS_TIMEOUT_MIN : t > NET_DNS_TIMEOUT_MAX ? NET_DNS_TIMEOUT_MAX : (uint32_t)t;
}

bool net_answer_allowable(uint32_t addr, bool lan, uint32_t subnet, int prefix)
{
	uint32_t h = ntohl(addr);
	if ((h >> 24) == 0 || (h >> 24) == 127 || (h >> 28) >= 14) /* this network, loopback, 224/4, 240/4 */
		return false;
	if ((addr & htonl(~0u << (32 - prefix))) == subnet)
		return false;
	const struct net_range *r = net_private_range(addr, 32);
	return !r || (lan && r->lan);
}

/* The words of --net after none: nat and lan in any order, then allow=LIST (it takes the rest,
 * commas included). nat,allow= adds addresses only: names all resolve under nat already. */
static int parse_words(struct net_opts *o, const char *arg, struct error *err)
{
	bool nat = false, lan = false;
	const char *w = arg;
	while (*w && strncmp(w, "allow=", 6)) {
		size_t l = strcspn(w, ",");
		if (l == 3 && !strncmp(w, "nat", 3))
			nat = true;
		else if (l == 3 && !strncmp(w, "lan", 3))
			lan = true;
		else if (!w[l] && w == arg)
			return error_set(err, 0, "--net: '%s' is not a network mode (none, nat, nat,lan, nat,allow=ADDRS, "
					 "allow=LIST or lan,allow=LIST)", arg);
		else
			return error_set(err, 0, "--net: '%.*s' in '%s' is not a word --net combines: give none alone, "
					 "or nat, lan and allow=LIST (last), e.g. nat,lan or nat,allow=10.1.2.3",
					 (int)l, w, arg);
		w += l + (w[l] == ',');
	}
	if (*w) {
		struct net_allow *a;
		size_t n;
		if (net_allow_parse(w + 6, &a, &n, err) < 0)
			return -EINVAL;
		int r = 0;
		for (size_t i = 0; nat && i < n && !r; i++)
			if (a[i].name)
				r = error_set(err, 0, "--net %s: '%s' is a name; nat resolves every name and reaches public "
					      "addresses already, so nat,allow= takes private addresses and CIDRs "
					      "(e.g. nat,allow=10.1.2.3:5432), or use allow=LIST alone", arg, a[i].name);
		net_allow_free(a, n);
		if (r < 0)
			return r;
		o->allow = w + 6;
	} else if (!nat) {
		return error_set(err, 0, "--net: '%s' names no mode: lan goes with nat or allow=LIST (e.g. --net nat,lan)", arg);
	}
	o->mode = nat ? NET_NAT : NET_ALLOW;
	o->lan = lan;
	return 0;
}

int net_parse_mode(struct net_opts *o, const char *arg, struct error *err)
{
	o->mode_given = true;
	o->mode = NET_NONE;
	o->lan = false;
	o->allow = NULL;
	if (!strcmp(arg, "none"))
		return 0;
	return parse_words(o, arg, err);
}

int net_parse_publish(struct net_opts *o, const char *arg, struct error *err)
{
	if (o->npublish >= NET_MAX_PUBLISH)
		return error_set(err, 0, "--publish: at most %d ports", NET_MAX_PUBLISH);
	struct net_publish p = { .host_addr = htonl(INADDR_LOOPBACK) };
	const char *last = strrchr(arg, ':');
	if (!last)
		return error_set(err, 0, "--publish: '%s' is not [ADDR:]HOSTPORT:CELLPORT (e.g. 8080:80)", arg);
	const char *mid = last;
	while (mid > arg && mid[-1] != ':')
		mid--;
	if (parse_port(last + 1, strlen(last + 1), &p.cell_port) < 0 ||
	    parse_port(mid, (size_t)(last - mid), &p.host_port) < 0)
		return error_set(err, 0, "--publish: '%s' is not [ADDR:]HOSTPORT:CELLPORT with ports 1-65535 (e.g. 8080:80)", arg);
	if (mid > arg) {
		_cleanup_free_ char *a = xasprintf("%.*s", (int)(mid - 1 - arg), arg);
		struct in_addr in;
		if (inet_pton(AF_INET, a, &in) != 1)
			return error_set(err, 0, "--publish: '%s' is not an IPv4 address of this host", a);
		p.host_addr = in.s_addr;
	}
	for (unsigned i = 0; i < o->npublish; i++)
		if (o->publish[i].host_port == p.host_port)
			return error_set(err, 0, "--publish: host port %u is given twice", p.host_port);
	o->publish[o->npublish++] = p; /* the mode is settled after all the options: net_opts_finish */
	return 0;
}

/* Can the host take connections on a of p? The check a listener's bind does: a port some
 * program listens on, or an address the host does not have, is refused before the run. */
static int publish_bindable(const struct net_publish *p, struct error *err)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(p->host_port), .sin_addr.s_addr = p->host_addr };
	char a[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &sa.sin_addr, a, sizeof a);
	_cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0)
		return error_set(err, errno, "--publish: cannot make a socket to check %s:%u", a, p->host_port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 || errno == EACCES)
		return 0;
	if (errno == EADDRINUSE)
		return error_set(err, 0, "--publish %s:%u:%u: host port %u is in use on %s (a program of the host listens on it); choose another HOSTPORT",
				 a, p->host_port, p->cell_port, p->host_port, a);
	if (errno == EADDRNOTAVAIL)
		return error_set(err, 0, "--publish %s:%u:%u: %s is not an address of this host; give one it has ('ip -4 addr') or leave ADDR out for 127.0.0.1",
				 a, p->host_port, p->cell_port, a);
	return error_set(err, errno, "--publish %s:%u:%u: cannot check the host port", a, p->host_port, p->cell_port);
}

enum net_mode net_publish_mode(enum net_mode mode, bool given, unsigned npublish)
{
	if (!npublish || mode != NET_NONE)
		return mode;
	return given ? NET_PUBLISHED : NET_NAT;
}

const char *net_mode_name(enum net_mode mode)
{
	switch (mode) {
	case NET_NONE: return "none";
	case NET_NAT: return "nat";
	case NET_ALLOW: return "allow";
	case NET_PUBLISHED: return "none+publish";
	}
	return "?";
}

int net_mode_allowed(enum net_mode mode, unsigned npublish, bool rootless, bool vm, struct error *err)
{
	if (!rootless)
		return 0;
	if (mode == NET_ALLOW)
		return error_set(err, EPERM, "--net allow= needs root: a rootless run's traffic leaves through pasta, "
				 "and warren does not enforce an allow list there yet; use --net nat (nat,allow=ADDR adds "
				 "private addresses), or run warren as root");
	if (npublish && vm)
		return error_set(err, EPERM, "--publish in a rootless VM: warren does not forward ports to a rootless "
				 "guest (pasta, then passt); use --driver container, or run warren as root");
	if (npublish && mode != NET_PUBLISHED)
		return error_set(err, EPERM, "--publish with --net %s needs root: a rootless run publishes ports only with "
				 "--net none (the cell answers on them and reaches nothing); run warren as root for both",
				 net_mode_name(mode));
	return 0;
}

int net_opts_finish(struct net_opts *o, struct error *err)
{
	o->mode = net_publish_mode(o->mode, o->mode_given, o->npublish);
	for (unsigned i = 0; i < o->npublish; i++)
		if (publish_bindable(&o->publish[i], err) < 0)
			return -EINVAL;
	return 0;
}

int net_parse_max_names(struct net_opts *o, const char *arg, struct error *err)
{
	char *end;
	unsigned long v = strtoul(arg, &end, 10);
	if (!*arg || *end || !v || v > 1000000)
		return error_set(err, 0, "--dns-max-names: '%s' is not a whole number from 1 to 1000000", arg);
	o->dns_max_names = (unsigned)v;
	return 0;
}
