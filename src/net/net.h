/* SPDX-License-Identifier: Apache-2.0 */
/* net.h - a run's network beyond loopback (opt-in with --net): a veth pair whose host end is
 * on warren's bridge warren0, the cell's address and default route set from outside the cell,
 * a default-deny nftables firewall per run (table inet warren), warren's own DNS resolver for
 * the allowlist by name, published ports, and the removal of all of it (also by warren gc);
 * for rootless runs, nat through pasta (pasta.c). `--net none` (the default) never reaches
 * any of this, unless with --publish (NET_PUBLISHED: a link for the published ports only, no
 * resolver, every connection of the cell's own refused). See docs/network.md. */
#ifndef WARREN_NET_NET_H
#define WARREN_NET_NET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/opts.h"
#include "util/error.h"

/* One entry of an allow list: a name (exact or "*.suffix") or an IPv4 network, a port or 0. */
struct net_allow {
	char *name;           /* lower case, no trailing dot; NULL for an address entry */
	uint32_t addr;        /* network order */
	int prefix;
	uint16_t port;        /* 0: any port */
};
int net_allow_parse(const char *list, struct net_allow **out, size_t *n, struct error *err);
void net_allow_free(struct net_allow *a, size_t n);
/* True when the name in wire form (len bytes, see net/dnsname.h) is allowed by entry a: label
 * by label, without ASCII case; "*.x.y" takes one label or more before x.y. A label holding a
 * byte that no allowed name holds (a '.', a space, ...) matches nothing. */
bool net_allow_name_matches(const struct net_allow *a, const uint8_t *name, size_t len);

/* The ranges a cell does not reach unless asked: the private ones (lan: --net nat,lan lifts
 * them) and link-local (only an allow= entry inside it does). Host byte order; ends with a
 * zero entry. */
struct net_range {
	uint32_t host_addr;
	int prefix;
	bool lan;
	const char *name;
};
extern const struct net_range net_private_ranges[];
/* The range of net_private_ranges that holds all of addr/prefix (addr in network order), or NULL. */
const struct net_range *net_private_range(uint32_t addr, int prefix);

/* An address answered by warren's resolver enters the run's allow set for its TTL plus a
 * little slack, held to at least a minute (a name resolved and then connected to just works,
 * whatever TTL 0 says) and at most a day (the set does not keep an address for ever). */
#define NET_DNS_TTL_SLACK 30
#define NET_DNS_TIMEOUT_MIN 60
#define NET_DNS_TIMEOUT_MAX 86400
/* The seconds an address answered with ttl stays in the allow set. */
uint32_t net_dns_timeout(uint32_t ttl);
/* True when an answered address (network order) may enter the allow set of a run on
 * subnet/prefix: not martian (0/8, 127/8, multicast, 240/4 and broadcast), not warren's own
 * subnet, and not in a private range unless lan lifts it (never link-local). The host's own
 * addresses are the caller's to check. The firewall refuses all of these before the set. */
bool net_answer_allowable(uint32_t addr, bool lan, uint32_t subnet, int prefix);

/* ---- the runs' subnet (pool.c; chosen by net.c) ---- */

/* An IPv4 network, network order. */
struct net_cidr {
	uint32_t addr;
	int prefix;
};
/* The ranges runs take when neither WARREN_NET_SUBNET nor the bridge warren0 names one: the
 * first /24 (NET_POOL_STEP) of the pool that meets none of the host's networks. The default
 * begins with 10.88.0.0/24, which warren took alone before the pool; podman's default network
 * (10.88.0.0/16) pushes it to 10.89.0.0/24 and on; podman's own further networks come from
 * 10.89.0.0/24 upwards too, and are seen as they are made. */
#define NET_POOL_DEFAULT "10.88.0.0/13"
#define NET_POOL_STEP 24
#define NET_POOL_LEAST 8   /* the widest network of a pool */
#define NET_SUBNET_LEAST 16 /* the widest WARREN_NET_SUBNET */
#define NET_SUBNET_MOST 28  /* the narrowest network of either */
/* A network of the host's: an interface's address and prefix, or a route (why: for messages). */
struct net_host_net {
	uint32_t addr;
	int prefix;
	bool route;
	char why[96];
};
/* "A.B.C.D/P" with P from least to NET_SUBNET_MOST, the host bits cleared: 0 or -EINVAL. */
int net_cidr_parse(const char *text, int least, struct net_cidr *out);
/* net.pool's words: networks separated by commas or blanks (heap array). 0, or -EINVAL with
 * err naming the word (without the key: the caller's prefix). */
int net_pool_parse(const char *text, struct net_cidr **out, size_t *n, struct error *err);
/* The index of the first network of h that c meets (a route wider than c does not count: it
 * is shadowed for c alone), or -1. */
ssize_t net_subnet_taken_by(const struct net_cidr *c, const struct net_host_net *h, size_t nh);
/* The first range of the pool, in order and /24 steps (a narrower entry is one range), that h
 * leaves free: true with it in out; false when none is. */
bool net_pool_pick(const struct net_cidr *pool, size_t npool, const struct net_host_net *h, size_t nh,
		   struct net_cidr *out);
/* "A.B.C.D/P" (heap). */
char *net_cidr_text(const struct net_cidr *c);
/* The subnet runs with a network take now and why, as selfcheck says it (heap, one line): the
 * bridge's, WARREN_NET_SUBNET's, or the first free one of the pool (naming where it was set). */
char *net_subnet_describe(void);

struct net_dns;
struct nft_ctx;
struct net_allowed;

/* A run's network as the supervisor holds it. All zero means "nothing made". */
struct net_state {
	bool on;
	enum net_mode mode;
	bool lan;             /* the private ranges are reachable (net_private_ranges' lan ones) */
	char id[32];
	char host_if[16];     /* the host end of the veth */
	uint32_t gw, addr, subnet; /* network order */
	int prefix;
	const char *subnet_from; /* why this subnet: the bridge's, WARREN_NET_SUBNET, the pool (static text) */
	char *lease;          /* the lease file that holds addr */
	bool nft_made;
	struct nft_ctx *nft;
	struct net_dns *dns;  /* the resolver; NULL when none */
	struct net_allowed *allowed; /* what the resolver put into the allow set, until when */
	size_t nallowed;
	unsigned allow_failed; /* answered addresses nft would not take */
	char *allow_error;    /* nft's message for the first of them */
	struct net_allow *allow; /* the parsed allow list */
	size_t nallow;
	unsigned npublish;
	struct net_publish publish[NET_MAX_PUBLISH];
	bool rootless;        /* nat through pasta instead of the bridge and firewall */
	bool tap;             /* the vm driver's tap instead of a veth */
	char *rundir;
	pid_t pasta_pid;      /* 0: none */
	char *pasta_pidfile;
	pid_t passt_pid;      /* a rootless VM's passt (pasta.c); 0: none */
	char *passt_pidfile;
};

/* The cell's /etc/resolv.conf (which 0: the gateway's resolver; none under mode NET_PUBLISHED)
 * or /etc/hosts (1: localhost and the run's hostname), for init to bind over the image's. Heap string. */
char *net_cell_file(enum net_mode mode, const char *hostname, int which);
/* Before the cell of run id (run directory rundir): the bridge (created on demand) and the run's
 * address (under a host-wide lock); rootless runs: only the checks (nat only, pasta installed). */
int net_prepare(struct net_state *n, const struct net_opts *o, const char *id, const char *rundir, bool rootless,
		struct error *err);
/* Before a run is accepted (warren serve): a host port of o that a live run publishes already,
 * by the leases (read, not locked: net_prepare decides under the lock); 0, or -EADDRINUSE with
 * the one line naming the port and the run. Nothing to read (a rootless caller): 0. */
int net_publish_taken(const struct net_opts *o, struct error *err);
/* Between the cell's start and its release: veth, bridge, address, route, firewall, resolver;
 * rootless runs: pasta attached to the cell's network namespace. */
int net_attach(struct net_state *n, const struct net_opts *o, pid_t cell_pid, struct error *err);
/* A warm cell's claim, before its run's job starts: o's published ports (refused, one line,
 * when a live run publishes one; written into the lease) and allow list (the address entries
 * into the firewall's sets, the names to the resolver) added to the cell's network n, made
 * with none of either; a rootless cell's are pasta's (nothing is done: its run's shape was
 * another). 0 or -errno. */
int net_claim(struct net_state *n, const struct net_opts *o, struct error *err);
/* The vm driver, before qemu starts: a tap on the bridge (its descriptor, for qemu, or -errno),
 * the firewall (the tap's frames held to the guest's MAC, net_guest_mac, and address) and the
 * resolver. The guest configures its own end. Rootless: the descriptor is a stream socket to
 * passt (qemu's -netdev stream), which sits in a network namespace of its own behind the
 * firewall and pasta of a rootless cell (pasta.c). */
int net_attach_tap(struct net_state *n, const struct net_opts *o, struct error *err);
/* The guest's MAC for address addr (network order): "02:77:" and the address's four bytes. */
void net_guest_mac(uint32_t addr, char out[18]);
/* The resolver's sockets, to watch in the supervisor's loop (-1 when none). */
int net_fd(const struct net_state *n, int which);
/* Something arrived on one of the resolver's sockets. */
void net_dispatch(struct net_state *n);
/* Add "network" to the record (refused connections, DNS names) and print the refusals. */
struct json_t;
void net_record(struct net_state *n, struct json_t **extra, bool quiet);
/* Remove everything the run added. Safe to call twice and on a state never made. */
void net_teardown(struct net_state *n);
/* The path of pasta (passt), which rootless --net nat needs, on $PATH (heap), or NULL. */
/* In a cell's own, new network namespace (never the host's): net.ipv4.ip_unprivileged_port_start
 * 0, so the job binds ports below 1024 as runc's and containerd's containers do (ports.c). 0 or
 * -errno (a kernel without the sysctl); raw system calls only, for the netns helper. */
int net_open_low_ports(void);
char *pasta_find(void);
/* warren gc: remove what a dead run (its supervisor killed) left: only leases of that run id
 * whose record names the same run directory. 1 when something was removed. */
int net_gc_run(const char *id, const char *rundir);
/* warren gc: when no run holds a lease, remove the bridge and the base tables that runs leave
 * for the next one (also after runs that ended normally). 1 when something was removed. */
int net_gc_idle(void);

#endif
