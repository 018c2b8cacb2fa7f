/* SPDX-License-Identifier: Apache-2.0 */
/* net.c - a run's network from start to end: the address lease (one address of warren's
 * subnet per run, chosen under a host-wide lock in /run/warren/net), the cell's resolv.conf
 * and hosts, the veth and firewall of the run, its resolver, the record of what was refused,
 * and the removal of all of it, also by warren gc after warren itself was killed. */
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cell/contract.h"
#include "net/internal.h"
#include "util/conf.h"
#include "util/fs.h"

/* ---- the subnet ---- */

/* $WARREN_NET_SUBNET (an IPv4 network, /16 to /28): 1 with it in c, 0 when unset, or -EINVAL. */
static int subnet_fixed(struct net_cidr *c, struct error *err)
{
	const char *v = getenv("WARREN_NET_SUBNET");
	if (!v || !*v)
		return 0;
	if (net_cidr_parse(v, NET_SUBNET_LEAST, c) < 0)
		return error_set(err, 0, "WARREN_NET_SUBNET: '%s' is not an IPv4 network from /%d to /%d (e.g. 10.88.0.0/24)",
				 v, NET_SUBNET_LEAST, NET_SUBNET_MOST);
	return 1;
}

/* The pool: net.pool of warren.conf (checked when the file was read) or NET_POOL_DEFAULT;
 * *from says which. */
static int pool_get(struct net_cidr **pool, size_t *n, const char **from, struct error *err)
{
	const char *where = NULL, *v = conf_get("net.pool", &where);
	*from = v ? where : "the default";
	struct error e = { 0 };
	if (net_pool_parse(v ? v : NET_POOL_DEFAULT, pool, n, &e) < 0) {
		error_set(err, 0, "%s: net.pool: %s", *from, e.msg);
		error_clear(&e);
		return -EINVAL;
	}
	return 0;
}

static uint32_t host_n(uint32_t net, uint32_t i)
{
	return htonl(ntohl(net) + i);
}

static int mask_len(uint32_t mask)
{
	return __builtin_popcount(mask);
}

static void host_net_add(struct net_host_net **v, size_t *n, uint32_t addr, int prefix, bool route, const char *fmt,
			 const char *ifn)
{
	char a[INET_ADDRSTRLEN];
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	struct net_host_net *h = &(*v)[(*n)++];
	*h = (struct net_host_net){ .addr = addr, .prefix = prefix, .route = route };
	snprintf(h->why, sizeof h->why, fmt, inet_ntop(AF_INET, &addr, a, sizeof a), prefix, ifn);
}

/* A root run's subnet goes on the host (the bridge, its route): one that meets a network an
 * interface of the host's is on, or holds a route of the host's, would take those addresses
 * from the host (a gateway of the host's with them). The host's networks, read now (warren0's
 * own and loopback left out); net_subnet_taken_by decides. */
static size_t host_nets_read(struct net_host_net **out)
{
	*out = NULL;
	size_t n = 0;
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) == 0) {
		for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask || !strcmp(i->ifa_name, NET_BRIDGE))
				continue;
			uint32_t ad = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
			if ((ntohl(ad) >> 24) == 127)
				continue;
			host_net_add(out, &n, ad, mask_len(((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr), false,
				     "%s/%d on %s", i->ifa_name);
		}
		freeifaddrs(ifa);
	}
	FILE *f = fopen("/proc/net/route", "re");
	char line[256], ifn[IFNAMSIZ + 1];
	unsigned dst, gw, flags, mask;
	while (f && fgets(line, sizeof line, f)) {
		if (sscanf(line, "%16s %x %x %x %*d %*d %*d %x", ifn, &dst, &gw, &flags, &mask) != 5 || !mask ||
		    !strcmp(ifn, NET_BRIDGE))
			continue;
		host_net_add(out, &n, dst, mask_len(mask), true, "the route to %s/%d on %s", ifn);
	}
	if (f)
		fclose(f);
	return n;
}

/* The network of the bridge's (first) IPv4 address, when warren0 exists and has one. */
static bool bridge_subnet(struct net_cidr *c)
{
	struct ifaddrs *ifa = NULL;
	bool found = false;
	if (getifaddrs(&ifa) < 0)
		return false;
	for (struct ifaddrs *i = ifa; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask || strcmp(i->ifa_name, NET_BRIDGE))
			continue;
		c->prefix = mask_len(((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr);
		c->addr = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr & htonl(c->prefix ? ~0u << (32 - c->prefix) : 0);
		found = true;
	}
	freeifaddrs(ifa);
	return found;
}

static unsigned leases_live(void);
static void bridge_remove(void);

/* The first free range of the pool into c (and its origin into *from), or a refusal. */
static int pool_pick(const struct net_host_net *h, size_t nh, struct net_cidr *c, const char **from, struct error *err)
{
	_cleanup_free_ struct net_cidr *pool = NULL;
	size_t np = 0;
	if (pool_get(&pool, &np, from, err) < 0)
		return -EINVAL;
	if (net_pool_pick(pool, np, h, nh, c))
		return 0;
	_cleanup_free_ char *first = net_cidr_text(&pool[0]);
	struct net_cidr c0 = { pool[0].addr, pool[0].prefix > NET_POOL_STEP ? pool[0].prefix : NET_POOL_STEP };
	ssize_t t = net_subnet_taken_by(&c0, h, nh);
	return error_set(err, 0, "no range of warren's network pool (net.pool %s%s, from %s) is free of the host's own networks "
			 "(%s, ...); add a free range to net.pool in warren.conf, or set WARREN_NET_SUBNET",
			 first, np > 1 ? ", ..." : "", *from, t >= 0 ? h[t].why : "?");
}

/* The runs' subnet into n (subnet, prefix, subnet_from): WARREN_NET_SUBNET's when set; else
 * the bridge's, since all root runs share warren0; else the first free range of the pool. A
 * root run (root: the caller holds the lock) moves an idle bridge whose range the host has
 * taken since (podman made 10.88.0.0/16 after warren0), or one that WARREN_NET_SUBNET names
 * otherwise, and refuses while runs with a network are live on it. A rootless run's network
 * is its own: it takes the same plan (the bridge's range while the host has not taken it,
 * else the pool's first free one), and nothing of the host's changes. */
static int subnet_choose(struct net_state *n, bool root, struct error *err)
{
	struct net_cidr fixed, br, c;
	int isfixed = subnet_fixed(&fixed, err);
	if (isfixed < 0)
		return -EINVAL;
	_cleanup_free_ struct net_host_net *h = NULL;
	size_t nh = host_nets_read(&h);
	bool bridge = bridge_subnet(&br);
	ssize_t bt = bridge ? net_subnet_taken_by(&br, h, nh) : -1;
	const char *from = NULL;
	if (isfixed) {
		ssize_t t = net_subnet_taken_by(&fixed, h, nh);
		if (t >= 0 && root) {
			_cleanup_free_ char *txt = net_cidr_text(&fixed);
			return error_set(err, 0, "the runs' network %s (WARREN_NET_SUBNET) meets the host's own network (%s); "
					 "set WARREN_NET_SUBNET to a range the host does not use, or unset it (warren then "
					 "takes a free range of its pool)", txt, h[t].why);
		}
		c = fixed;
		from = "WARREN_NET_SUBNET";
	} else if (bridge && bt < 0) {
		c = br;
		from = "the bridge " NET_BRIDGE;
	} else if (pool_pick(h, nh, &c, &from, err) < 0) {
		return -EINVAL;
	}
	if (bridge && root && (br.addr != c.addr || br.prefix != c.prefix)) {
		_cleanup_free_ char *was = net_cidr_text(&br), *now = net_cidr_text(&c);
		unsigned live = leases_live();
		const char *why = bt >= 0 ? h[bt].why : NULL;
		if (live)
			return error_set(err, 0, "the runs' network %s on %s %s%s%s, and %u run%s with a network %s live on it; "
					 "start this run once %s ended (warren then moves %s to %s)",
					 was, NET_BRIDGE, why ? "now meets the host's own network (" : "is not WARREN_NET_SUBNET's ",
					 why ? why : now, why ? ")" : "", live, live == 1 ? "" : "s", live == 1 ? "is" : "are",
					 live == 1 ? "it has" : "they have", NET_BRIDGE, now);
		if (why)
			warn_line("moved the runs' network (the bridge %s) from %s to %s: the host's own network took the old "
				  "range (%s)", NET_BRIDGE, was, now, why);
		else
			warn_line("moved the runs' network (the bridge %s) from %s to %s, WARREN_NET_SUBNET's", NET_BRIDGE, was, now);
		bridge_remove();
	}
	n->subnet = c.addr;
	n->prefix = c.prefix;
	n->subnet_from = from;
	return 0;
}

/* The gateway this process chose (net_prepare), for the cell's resolv.conf: its init is
 * cloned from the supervisor after the choice. 0: none yet. */
static uint32_t chosen_gw;

char *net_subnet_describe(void)
{
	struct net_state n = { 0 };
	struct error e = { 0 };
	if (subnet_choose(&n, false, &e) < 0) {
		char *m = xasprintf("none: %s", e.msg);
		error_clear(&e);
		return m;
	}
	struct net_cidr c = { n.subnet, n.prefix }, br;
	_cleanup_free_ char *t = net_cidr_text(&c);
	const char *where = NULL, *pool = conf_get("net.pool", &where);
	if (bridge_subnet(&br) && (br.addr != c.addr || br.prefix != c.prefix)) {
		/* a root run moves the bridge first (subnet_choose), when no run is live on it */
		_cleanup_free_ char *was = net_cidr_text(&br);
		return xasprintf("%s, moved from %s on %s by the next root run with a network while none is live (%s)", t, was,
				 NET_BRIDGE, n.subnet_from);
	}
	if (!strcmp(n.subnet_from, "WARREN_NET_SUBNET") || !strncmp(n.subnet_from, "the bridge", 10))
		return xasprintf("%s (%s)", t, n.subnet_from);
	return xasprintf("%s (the first free range of net.pool %s, from %s)", t, pool ? pool : NET_POOL_DEFAULT,
			 pool ? where : "the default");
}

/* ---- leases: <NET_RUNDIR>/leases/<addr> = "<id>\n<rundir>\n<published host ports>\n" ---- */

struct lease {
	char id[32];
	char *rundir;
	struct net_publish pub[NET_MAX_PUBLISH];
	unsigned npub;
};

static int lock_net(struct error *err)
{
	int r = mkdir_p(NET_RUNDIR "/leases", 0700);
	if (r < 0)
		return error_set(err, -r, "cannot create %s", NET_RUNDIR "/leases");
	int fd = open(NET_RUNDIR "/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		closep(&fd);
		return error_set(err, errno, "cannot lock %s", NET_RUNDIR "/lock");
	}
	return fd;
}

static bool lease_read(const char *path, struct lease *l)
{
	*l = (struct lease){ 0 };
	_cleanup_free_ char *t = read_file(path, NULL);
	if (!t)
		return false;
	char *save = NULL;
	char *id = strtok_r(t, "\n", &save), *dir = strtok_r(NULL, "\n", &save), *ports = strtok_r(NULL, "\n", &save);
	if (!id || !dir)
		return false;
	snprintf(l->id, sizeof l->id, "%s", id);
	l->rundir = xstrdup(dir);
	for (char *s2 = NULL, *p = ports ? strtok_r(ports, " ", &s2) : NULL; p && l->npub < NET_MAX_PUBLISH;
	     p = strtok_r(NULL, " ", &s2))
		l->pub[l->npub++].host_port = (uint16_t)atoi(p);
	return true;
}

static void host_if_name(const char *id, char *out)
{
	size_t l = strlen(id), k = l > 12 ? 12 : l;
	memcpy(out, "wv", 2);
	memcpy(out + 2, id + l - k, k);
	out[2 + k] = '\0';
}

/* Remove what the run of lease l (at addr) added; the caller holds the lock. */
static void lease_reclaim(struct nft_ctx *nft, const char *path, const struct lease *l, uint32_t addr)
{
	char ifn[16];
	host_if_name(l->id, ifn);
	if (nft)
		fw_run_remove(nft, l->id, addr, l->pub, l->npub, ifn);
	link_remove(ifn);
	if (addr)
		ct_forget(addr);
	unlink(path);
}

static bool leases_empty(void)
{
	DIR *d = opendir(NET_RUNDIR "/leases");
	if (!d)
		return true;
	struct dirent *e;
	bool empty = true;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			empty = false;
	closedir(d);
	return empty;
}

/* Does the supervisor of the lease's run still hold its run directory's lock? */
static bool lease_live(const struct lease *l)
{
	_cleanup_free_ char *lock = xasprintf("%s/lock", l->rundir);
	return lock_held_at(AT_FDCWD, lock);
}

/* The leases of runs whose supervisor is alive (a lease that cannot be read counts: it is
 * left alone elsewhere too). */
static unsigned leases_live(void)
{
	DIR *d = opendir(NET_RUNDIR "/leases");
	struct dirent *e;
	unsigned live = 0;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		_cleanup_free_ char *path = xasprintf(NET_RUNDIR "/leases/%s", e->d_name);
		struct lease l;
		if (!lease_read(path, &l) || lease_live(&l))
			live++;
		free(l.rundir);
	}
	if (d)
		closedir(d);
	return live;
}

/* The bridge and the base tables go (no run is live on them); the caller holds the lock. */
static void bridge_remove(void)
{
	struct nft_ctx *nft = fw_open();
	if (nft)
		fw_base_remove(nft);
	fw_close(nft);
	link_bridge_remove();
}

int net_publish_taken(const struct net_opts *o, struct error *err)
{
	DIR *d = o->npublish ? opendir(NET_RUNDIR "/leases") : NULL;
	struct dirent *e;
	int r = 0;
	while (r == 0 && d && (e = readdir(d))) {
		_cleanup_free_ char *path = e->d_name[0] == '.' ? NULL : xasprintf(NET_RUNDIR "/leases/%s", e->d_name);
		struct lease l;
		if (!path || !lease_read(path, &l))
			continue;
		for (unsigned k = 0; k < l.npub && r == 0; k++)
			for (unsigned j = 0; j < o->npublish && r == 0; j++)
				if (l.pub[k].host_port == o->publish[j].host_port && lease_live(&l))
					r = error_set(err, 0, "--publish: host port %u is published by %s, which is running; "
						      "choose another HOSTPORT", o->publish[j].host_port, l.id);
		free(l.rundir);
	}
	if (d)
		closedir(d);
	return r < 0 ? -EADDRINUSE : 0;
}

/* The text of n's lease (its length in *len), heap. */
static char *lease_text(const struct net_state *n, const char *rundir, size_t *len)
{
	char *txt = NULL;
	FILE *f = open_memstream(&txt, len);
	fprintf(f, "%s\n%s\n", n->id, rundir);
	for (unsigned j = 0; j < n->npublish; j++)
		fprintf(f, "%s%u", j ? " " : "", n->publish[j].host_port);
	fprintf(f, "\n");
	fclose(f);
	return txt;
}

/* Choose a free address for the run: one pass over the lease directory (reclaiming leases of
 * runs whose supervisor is gone, refusing a host port another live run publishes), then the
 * first address no lease names. The caller holds the lock. */
static int lease_take(struct net_state *n, const char *rundir, struct error *err)
{
	uint32_t size = 1u << (32 - n->prefix);
	_cleanup_free_ uint8_t *used = xcalloc(size, 1);
	DIR *d = opendir(NET_RUNDIR "/leases");
	struct dirent *e;
	int r = 0;
	while (r == 0 && d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		_cleanup_free_ char *path = xasprintf(NET_RUNDIR "/leases/%s", e->d_name);
		struct in_addr in;
		bool ours = inet_pton(AF_INET, e->d_name, &in) == 1 &&
			    (in.s_addr & htonl(~0u << (32 - n->prefix))) == n->subnet;
		struct lease l;
		if (!lease_read(path, &l)) {
			if (ours)
				used[ntohl(in.s_addr) - ntohl(n->subnet)] = 1; /* unreadable: leave it alone */
			continue;
		}
		bool live = lease_live(&l);
		for (unsigned k = 0; live && k < l.npub && r == 0; k++)
			for (unsigned j = 0; j < n->npublish; j++)
				if (l.pub[k].host_port == n->publish[j].host_port) {
					r = error_set(err, EADDRINUSE, "--publish: host port %u is published by %s",
						      n->publish[j].host_port, l.id);
					break;
				}
		if (!live)
			lease_reclaim(n->nft, path, &l, inet_pton(AF_INET, e->d_name, &in) == 1 ? in.s_addr : 0);
		else if (ours)
			used[ntohl(in.s_addr) - ntohl(n->subnet)] = 1;
		free(l.rundir);
	}
	if (d)
		closedir(d);
	if (r < 0)
		return r;
	for (uint32_t i = 2; i < size - 1; i++) {
		if (used[i])
			continue;
		uint32_t a = host_n(n->subnet, i);
		char as[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &a, as, sizeof as);
		_cleanup_free_ char *path = xasprintf(NET_RUNDIR "/leases/%s", as);
		size_t len;
		char *txt = lease_text(n, rundir, &len);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		bool ok = fd >= 0 && write(fd, txt, len) == (ssize_t)len;
		int saved = errno;
		closep(&fd);
		free(txt);
		if (!ok) {
			if (fd < 0 && saved == EEXIST)
				continue;
			unlink(path);
			return error_set(err, saved, "cannot write the address lease %s", path);
		}
		n->lease = steal_pointer(&path);
		n->addr = a;
		return 0;
	}
	return error_set(err, EADDRNOTAVAIL, "no free address left in warren's subnet (%u runs with a network are live); "
			 "set WARREN_NET_SUBNET to a larger range the host does not use", size - 3);
}

/* ---- the cell's /etc/resolv.conf and /etc/hosts ---- */

char *net_cell_file(enum net_mode mode, const char *hostname, int which)
{
	uint32_t gw;
	struct error e = { 0 };
	if (which == 0 && mode == NET_PUBLISHED) /* no resolver: a lookup fails at once (loopback) */
		return xstrdup("# warren: --net none with --publish: no resolver, the cell starts no connection of its own\n");
	if (chosen_gw) {
		gw = chosen_gw;
	} else {
		struct net_state n = { 0 };
		if (subnet_choose(&n, false, &e) < 0) {
			error_clear(&e);
			return NULL;
		}
		gw = host_n(n.subnet, 1);
	}
	char g[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &gw, g, sizeof g);
	if (which == 0)
		return xasprintf(CELL_RESOLV_FMT, g);
	return xasprintf("127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n", hostname);
}

/* ---- the run's network ---- */

/* A rootless run: its network namespace is its own (owned by its user namespace), so the
 * address plan of a root run is reused as is; pasta carries the traffic and a firewall in the
 * cell's own namespace refuses what a root run refuses (pasta.c), private ranges included
 * (nat,lan and nat,allow=ADDR lift them as for root). allow=LIST would also need warren's
 * resolver and the allow set in that namespace: refused, not half-enforced. Published ports
 * go through pasta's -t for --net none only, whose firewall refuses all the cell starts. */
static int rootless_prepare(struct net_state *n, const char *rundir, struct error *err)
{
	if (net_mode_allowed(n->mode, n->npublish, true, false, err) < 0)
		return -EPERM;
	const char *what = n->mode == NET_PUBLISHED ? "--publish" : "--net nat";
	_cleanup_free_ char *pasta = pasta_find();
	if (!pasta)
		return error_set(err, ENOENT, "%s in a rootless run needs pasta; install the Debian package passt", what);
	if (access("/dev/net/tun", R_OK | W_OK) < 0)
		return error_set(err, errno, "%s in a rootless run needs /dev/net/tun open to you (pasta's tap); "
				 "it is usually mode 0666 (udev's rule), check 'ls -l /dev/net/tun'", what);
	n->rootless = true;
	n->addr = host_n(n->subnet, 2);
	n->rundir = xstrdup(rundir);
	n->on = true;
	return 0;
}

int net_prepare(struct net_state *n, const struct net_opts *o, const char *id, const char *rundir, bool rootless,
		struct error *err)
{
	*n = (struct net_state){ .mode = o->mode, .lan = o->lan, .npublish = o->npublish };
	memcpy(n->publish, o->publish, sizeof n->publish);
	snprintf(n->id, sizeof n->id, "%s", id);
	host_if_name(id, n->host_if);
	if (rootless) {
		if (subnet_choose(n, false, err) < 0)
			return -EINVAL;
		n->gw = chosen_gw = host_n(n->subnet, 1);
		return rootless_prepare(n, rundir, err);
	}
	n->on = true;
	n->nft = fw_open();
	if (!n->nft)
		return error_set(err, ENOENT, "cannot load libnftables.so.1 (%s); install the Debian package libnftables1",
				 dlerror() ? dlerror() : "no such library");
	_cleanup_close_ int lock = lock_net(err);
	if (lock < 0)
		return lock;
	if (subnet_choose(n, true, err) < 0)
		return -EINVAL;
	n->gw = chosen_gw = host_n(n->subnet, 1);
	/* the nftables base comes with the run's own rules, in net_attach's one transaction */
	if (link_bridge_ensure(n->gw, n->prefix, err) < 0 || lease_take(n, rundir, err) < 0)
		return -EIO;
	return 0;
}

/* ---- the addresses the resolver allows ---- */

/* An address . port of the allow set and when it leaves it (CLOCK_MONOTONIC seconds). */
struct net_allowed {
	uint32_t addr;
	uint16_t port;
	int64_t until;
};

static int64_t now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec;
}

/* True when addr is one of the host's own (read now: addresses come and go). */
static bool host_address(uint32_t addr)
{
	struct ifaddrs *ifa = NULL;
	bool found = false;
	if (getifaddrs(&ifa) < 0)
		return false;
	for (struct ifaddrs *i = ifa; i && !found; i = i->ifa_next)
		found = i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == addr;
	freeifaddrs(ifa);
	return found;
}

static struct net_allowed *allowed_entry(struct net_state *n, uint32_t addr, uint16_t port)
{
	for (size_t i = 0; i < n->nallowed; i++)
		if (n->allowed[i].addr == addr && n->allowed[i].port == port)
			return &n->allowed[i];
	n->allowed = xrealloc(n->allowed, (n->nallowed + 1) * sizeof *n->allowed);
	n->allowed[n->nallowed] = (struct net_allowed){ addr, port, 0 };
	return &n->allowed[n->nallowed++];
}

/* An answered address enters the allow set (unless the firewall refuses it before the set
 * anyway: net_answer_allowable, the host's own), for net_dns_timeout(ttl), or keeps a later
 * expiry it has (an element added again takes the new timeout: a short TTL of one name must
 * not cut another name's long one for the same address). A failure of nft is counted. */
static void allow_addr(void *ctx, uint32_t addr, uint16_t port, uint32_t ttl)
{
	struct net_state *n = ctx;
	if (!net_answer_allowable(addr, n->lan, n->subnet, n->prefix) || host_address(addr))
		return;
	uint32_t timeout = net_dns_timeout(ttl);
	int64_t now = now_s();
	struct net_allowed *e = allowed_entry(n, addr, port);
	if (e->until >= now + timeout)
		return;
	struct error err = { 0 };
	if (fw_allow_addr(n->nft, n->id, addr, port, timeout, &err) < 0) {
		if (!n->allow_failed++)
			n->allow_error = steal_pointer(&err.msg);
		error_clear(&err);
		return;
	}
	e->until = now + timeout;
}

/* The resolver and the firewall of a run whose link is in place (veth or tap); none+publish
 * has no resolver (its cell asks nothing of the outside). */
static int attach_rules(struct net_state *n, const struct net_opts *o, struct error *err)
{
	if (n->mode != NET_PUBLISHED) {
		n->dns = dns_open(n->gw, n->addr, n->mode, n->allow, n->nallow,
				  o->dns_max_names ? o->dns_max_names : NET_DNS_MAX_NAMES_DEFAULT, allow_addr, n, err);
		if (!n->dns)
			return -EIO;
	}
	if (fw_run_add(n->nft, n, n->dns ? dns_port(n->dns) : 0, err) < 0)
		return -EIO;
	n->nft_made = true; /* all of it: the transaction is atomic */
	return 0;
}

int net_attach(struct net_state *n, const struct net_opts *o, pid_t cell_pid, struct error *err)
{
	if (o->allow && net_allow_parse(o->allow, &n->allow, &n->nallow, err) < 0)
		return -EINVAL;
	if (n->rootless)
		return pasta_start(n, cell_pid, err);
	if (link_veth_attach(n->host_if, cell_pid, n->addr, n->prefix, n->gw, err) < 0)
		return -EIO;
	return attach_rules(n, o, err);
}

/* A warm cell's published ports, o's: refused when a live run publishes one (under the lock),
 * else written into its lease (what the others' checks and warren gc read), then n's. */
static int claim_ports(struct net_state *n, const struct net_opts *o, struct error *err)
{
	_cleanup_close_ int lock = lock_net(err);
	if (lock < 0 || net_publish_taken(o, err) < 0)
		return -EADDRINUSE;
	struct lease l;
	if (!n->lease || !lease_read(n->lease, &l))
		return error_set(err, EIO, "cannot read the warm cell's address lease %s", n->lease ? n->lease : "(none)");
	_cleanup_free_ char *rundir = l.rundir;
	n->npublish = o->npublish;
	memcpy(n->publish, o->publish, sizeof n->publish);
	size_t len;
	_cleanup_free_ char *txt = lease_text(n, rundir, &len);
	int r = write_file(n->lease, txt, len);
	if (r < 0) {
		n->npublish = 0;
		return error_set(err, -r, "cannot write the address lease %s", n->lease);
	}
	return 0;
}

int net_claim(struct net_state *n, const struct net_opts *o, struct error *err)
{
	if (!n->on || n->rootless || n->tap)
		return 0;  /* (a rootless cell's ports and list are pasta's: its run's shape said so) */
	struct net_allow *a = NULL;
	size_t na = 0;
	if (o->allow && net_allow_parse(o->allow, &a, &na, err) < 0)
		return -EINVAL;
	net_allow_free(n->allow, n->nallow);
	n->allow = a;
	n->nallow = na;
	if (o->npublish && claim_ports(n, o, err) < 0)
		return -EADDRINUSE;
	if (fw_claim(n->nft, n, err) < 0)
		return -EIO;
	dns_set_allow(n->dns, n->allow, n->nallow);
	return 0;
}

void net_guest_mac(uint32_t addr, char out[18])
{
	const unsigned char *b = (const unsigned char *)&addr;
	snprintf(out, 18, "02:77:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3]);
}

int net_attach_tap(struct net_state *n, const struct net_opts *o, struct error *err)
{
	if (o->allow && net_allow_parse(o->allow, &n->allow, &n->nallow, err) < 0)
		return -EINVAL;
	if (n->rootless)
		return passt_start(n, err);
	n->tap = true; /* the guest may send as anything: fw.c holds its port to its MAC and address */
	int fd = link_tap_attach(n->host_if, err);
	if (fd < 0)
		return fd;
	if (attach_rules(n, o, err) < 0) {
		close(fd);
		return -EIO;
	}
	return fd;
}

int net_fd(const struct net_state *n, int which)
{
	return n->on && n->dns ? dns_fd(n->dns, which) : -1;
}

void net_dispatch(struct net_state *n)
{
	if (n->on && n->dns)
		dns_dispatch(n->dns);
}

void net_record(struct net_state *n, json_t **extra, bool quiet)
{
	if (!n->on)
		return;
	char a[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &n->addr, a, sizeof a);
	json_t *refused = n->nft_made ? fw_refused(n->nft, n->id) : json_array();
	char *dns_line = NULL;
	json_t *dns = n->dns ? dns_record(n->dns, &dns_line) : json_null();
	if (n->dns)
		json_object_set_new(dns, "allow_failed", json_integer(n->allow_failed));
	struct net_cidr sn = { n->subnet, n->prefix };
	_cleanup_free_ char *subnet = net_cidr_text(&sn);
	json_t *net = json_pack("{s:s,s:b,s:s,s:s,s:o,s:o}", "mode", net_mode_name(n->mode), "lan", n->lan,
				"address", a, "subnet", subnet, "refused", refused, "dns", dns);
	if (n->rootless)
		json_object_set_new(net, "via", json_string("pasta"));
	if (!*extra)
		*extra = json_object();
	json_object_set_new(*extra, "network", net);
	if (quiet) {
		free(dns_line);
		return;
	}
	size_t nr = json_array_size(refused);
	if (nr) {
		json_int_t total = 0;
		char *list = xstrdup("");
		for (size_t i = 0; i < nr; i++) {
			json_t *e = json_array_get(refused, i);
			json_int_t c = json_integer_value(json_object_get(e, "count"));
			total += c;
			char *m = nr == 1 ? xasprintf("%s", json_string_value(json_object_get(e, "dest")))
					  : i < 5 ? xasprintf("%s%s%s (%lld)", list, i ? ", " : "", json_string_value(json_object_get(e, "dest")), (long long)c)
						  : xasprintf("%s%s", list, i == 5 ? ", ..." : "");
			free(list);
			list = m;
		}
		warn_line("%s refused %lld connection%s to %s (%s)", n->id, (long long)total,
			total == 1 ? "" : "s", list,
			n->mode == NET_ALLOW ? "not in --net allow"
			: n->mode == NET_PUBLISHED ? "--net none with --publish: the cell answers on its published ports and starts no connection"
			: n->lan ? "the host, other runs, link-local, multicast and broadcast are refused"
				 : "the host, other runs, private and link-local ranges, multicast and broadcast are refused; "
				   "--net nat,lan reaches private ranges, nat,allow=ADDR one address");
		free(list);
	}
	size_t nd = json_array_size(json_object_get(dns, "refused"));
	if (nd) {
		json_t *first = json_array_get(json_object_get(dns, "refused"), 0);
		warn_line("%s refused DNS for %zu name%s, e.g. %s (not in --net allow)", n->id, nd,
			nd == 1 ? "" : "s", json_string_value(json_object_get(first, "name")));
	}
	if (dns_line)
		warn_line("%s %s", n->id, dns_line);
	free(dns_line);
	if (n->allow_failed)
		warn_line("%s could not put %u answered address%s into the allow set (%s); connections to "
			"them were refused", n->id, n->allow_failed, n->allow_failed == 1 ? "" : "es",
			n->allow_error ? n->allow_error : "nftables failed");
}

void net_teardown(struct net_state *n)
{
	if (!n->on)
		return;
	if (n->rootless) {
		pasta_stop(n);
		free(n->rundir);
		n->rundir = NULL;
		net_allow_free(n->allow, n->nallow);
		n->allow = NULL;
		n->on = false;
		return;
	}
	dns_close(n->dns);
	n->dns = NULL;
	struct error e = { 0 };
	int lock = lock_net(&e);
	error_clear(&e);
	/* the run's one transaction either made all of its objects or none */
	if (n->nft && n->nft_made)
		fw_run_remove(n->nft, n->id, n->addr, n->publish, n->npublish, n->tap ? n->host_if : NULL);
	link_remove(n->host_if);
	if (n->lease) {
		/* the next run at the address must not inherit the flows of this one (ct.c) */
		int r = ct_forget(n->addr);
		if (r < 0) {
			char a[INET_ADDRSTRLEN];
			warn_line("cannot clear the connection tracking of %s (%s): the next run at that address may have a "
				  "packet taken for one of %s's%s", inet_ntop(AF_INET, &n->addr, a, sizeof a), strerror(-r), n->id,
				  r == -EOPNOTSUPP || r == -EPROTONOSUPPORT ? "; load the kernel module nf_conntrack_netlink" : "");
		}
		unlink(n->lease);
	}
	/* the bridge and the base tables stay for the next run (making them again costs more than
	 * the run itself); warren gc removes them when no run holds a lease */
	closep(&lock);
	free(n->lease);
	n->lease = NULL;
	fw_close(n->nft);
	n->nft = NULL;
	free(n->allowed);
	n->allowed = NULL;
	n->nallowed = 0;
	free(n->allow_error);
	n->allow_error = NULL;
	net_allow_free(n->allow, n->nallow);
	n->allow = NULL;
	n->on = false;
}

int net_gc_run(const char *id, const char *rundir)
{
	if (!is_dir(NET_RUNDIR "/leases"))
		return 0;
	struct error e = { 0 };
	_cleanup_close_ int lock = lock_net(&e);
	error_clear(&e);
	if (lock < 0)
		return 0;
	struct nft_ctx *nft = fw_open();
	int did = 0;
	DIR *d = opendir(NET_RUNDIR "/leases");
	struct dirent *ent;
	while (d && (ent = readdir(d))) {
		if (ent->d_name[0] == '.')
			continue;
		_cleanup_free_ char *path = xasprintf(NET_RUNDIR "/leases/%s", ent->d_name);
		struct lease l;
		struct in_addr in;
		if (!lease_read(path, &l))
			continue;
		if (!strcmp(l.id, id) && !strcmp(l.rundir, rundir) && !lease_live(&l) && inet_pton(AF_INET, ent->d_name, &in) == 1) {
			lease_reclaim(nft, path, &l, in.s_addr);
			did = 1;
		}
		free(l.rundir);
	}
	if (d)
		closedir(d);
	fw_close(nft);
	return did;
}

int net_gc_idle(void)
{
	if (!if_nametoindex(NET_BRIDGE))
		return 0;
	struct error e = { 0 };
	_cleanup_close_ int lock = lock_net(&e);
	error_clear(&e);
	if (lock < 0 || !leases_empty())
		return 0;
	bridge_remove();
	return 1;
}
