/* SPDX-License-Identifier: Apache-2.0 */
/* fw.c - the firewall through libnftables. One table of warren's (inet warren) whose base
 * chains dispatch on the cell's source address through verdict maps to each run's own chains
 * (f_<id> forward, i_<id> to the host, p_<id> DNS redirect, u_<id> published ports, r_<id>
 * refuse), a set of allowed destinations a_<id> (the allow list's addresses), sets of the
 * addresses the resolver answered, with timeouts, n_<id> (any port) and d_<id> (addr . port;
 * apart, and without intervals, so that no element overlaps another) and a set of refused
 * destinations with counters x_<id>. The private ranges (net_private_ranges) are refused in f_<id> unless lan lifts them
 * or an allow= entry inside one names them. none+publish (NET_PUBLISHED): f_<id> and i_<id>
 * pass only established flows (its published ports' replies), p_<id> is empty (no resolver).
 * Bridged traffic between cells is dropped by table bridge warren. A run's objects
 * (and the base, idempotently) are added in one transaction and removed in another; nothing
 * is listed first and nothing is matched by rule handle. */
#include <arpa/inet.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include <nftables/libnftables.h>

#include "net/internal.h"
#include "util/dl.h"

/* libnftables has no static library: it is loaded when a run asks for a network, so that
 * runs without one (the default) never pay for loading it and its dependencies. */
static struct {
	void *h;
	__typeof__(nft_ctx_new) *ctx_new;
	__typeof__(nft_ctx_free) *ctx_free;
	__typeof__(nft_ctx_buffer_output) *buffer_output;
	__typeof__(nft_ctx_buffer_error) *buffer_error;
	__typeof__(nft_ctx_get_output_buffer) *get_output;
	__typeof__(nft_ctx_get_error_buffer) *get_error;
	__typeof__(nft_ctx_output_set_flags) *set_flags;
	__typeof__(nft_run_cmd_from_buffer) *run;
} lib;

static bool lib_load(void)
{
	const struct dl_sym syms[] = {
		{ "nft_ctx_new", (void **)&lib.ctx_new }, { "nft_ctx_free", (void **)&lib.ctx_free },
		{ "nft_ctx_buffer_output", (void **)&lib.buffer_output }, { "nft_ctx_buffer_error", (void **)&lib.buffer_error },
		{ "nft_ctx_get_output_buffer", (void **)&lib.get_output }, { "nft_ctx_get_error_buffer", (void **)&lib.get_error },
		{ "nft_ctx_output_set_flags", (void **)&lib.set_flags }, { "nft_run_cmd_from_buffer", (void **)&lib.run },
	};
	return dl_load(&lib.h, "libnftables.so.1", syms, sizeof syms / sizeof syms[0], NULL, NULL, NULL) == 0;
}
#define nft_ctx_new lib.ctx_new
#define nft_ctx_free lib.ctx_free
#define nft_ctx_buffer_output lib.buffer_output
#define nft_ctx_buffer_error lib.buffer_error
#define nft_ctx_get_output_buffer lib.get_output
#define nft_ctx_get_error_buffer lib.get_error
#define nft_ctx_output_set_flags lib.set_flags
#define nft_run_cmd_from_buffer lib.run

static const char *ip4(uint32_t a, char *buf)
{
	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

struct nft_ctx *fw_open(void)
{
	if (!lib_load())
		return NULL;
	/* Each ruleset cache libnftables builds allocates hash tables of 128 KiB per table and kind
	 * of object; glibc serves those with mmap and returns them on free, so every command faulted
	 * in ~1 MiB afresh (5-10 ms of page faults on a VM). Kept on the heap, only the first does. */
	mallopt(M_MMAP_THRESHOLD, 4 << 20);
	mallopt(M_TRIM_THRESHOLD, 32 << 20);
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!nft)
		return NULL;
	nft_ctx_buffer_output(nft);
	nft_ctx_buffer_error(nft);
	return nft;
}

void fw_close(struct nft_ctx *nft)
{
	if (nft)
		nft_ctx_free(nft);
}

int fw_run(struct nft_ctx *nft, const char *cmds, struct error *err)
{
	if (nft_run_cmd_from_buffer(nft, cmds) == 0)
		return 0;
	if (err) {
		const char *e = nft_ctx_get_error_buffer(nft);
		size_t l = e ? strcspn(e, "\n") : 0;
		error_set(err, 0, "nftables refused warren's rules: %.*s", (int)l, e ? e : "?");
	}
	return -EIO;
}

/* The base of table inet warren and table bridge warren, written so that running it again is
 * harmless: objects are added if missing, and the base chains are flushed and refilled in the
 * same transaction (so they always hold exactly these rules, also after someone flushed them).
 * It goes into each run's own transaction: no listing of the ruleset first. The gateway's
 * ports (the runs' resolvers) are for the cells: what reaches warren's subnet on the host by
 * another interface (the uplink, with a route to the subnet; the host's own programs, by lo)
 * is dropped in input. Published ports are DNAT'd before input, to a cell's address. */
static void base_cmds(FILE *f, uint32_t subnet, int prefix)
{
	char net[INET_ADDRSTRLEN];
	fprintf(f,
		"add table inet warren\n"
		"add map inet warren runs_fwd { type ipv4_addr : verdict; }\n"
		"add map inet warren runs_in { type ipv4_addr : verdict; }\n"
		"add map inet warren runs_pre { type ipv4_addr : verdict; }\n"
		"add map inet warren pubs { type inet_service : verdict; }\n"
		"add chain inet warren forward { type filter hook forward priority 0; policy accept; }\n"
		"add chain inet warren input { type filter hook input priority 0; policy accept; }\n"
		"add chain inet warren prerouting { type nat hook prerouting priority -100; policy accept; }\n"
		"add chain inet warren output { type nat hook output priority -100; policy accept; }\n"
		"add chain inet warren postrouting { type nat hook postrouting priority 100; policy accept; }\n"
		"flush chain inet warren forward\n"
		"flush chain inet warren input\n"
		"flush chain inet warren prerouting\n"
		"flush chain inet warren output\n"
		"flush chain inet warren postrouting\n"
		"add rule inet warren forward iifname \"%1$s\" ip saddr vmap @runs_fwd\n"
		"add rule inet warren forward iifname \"%1$s\" drop\n"
		"add rule inet warren forward oifname \"%1$s\" ct state established,related accept\n"
		"add rule inet warren forward oifname \"%1$s\" ct status dnat accept\n"
		"add rule inet warren forward oifname \"%1$s\" drop\n"
		"add rule inet warren input iifname \"%1$s\" ip saddr vmap @runs_in\n"
		"add rule inet warren input iifname \"%1$s\" drop\n"
		"add rule inet warren input iifname != \"%1$s\" ip daddr %2$s/%3$d drop\n"
		"add rule inet warren prerouting iifname \"%1$s\" ip saddr vmap @runs_pre\n"
		"add rule inet warren prerouting fib daddr type local tcp dport vmap @pubs\n"
		"add rule inet warren output fib daddr type local tcp dport vmap @pubs\n"
		"add rule inet warren postrouting oifname != \"%1$s\" ip saddr %2$s/%3$d masquerade\n"
		"add rule inet warren postrouting oifname \"%1$s\" ip saddr 127.0.0.0/8 masquerade\n"
		"add table bridge warren\n"
		"add chain bridge warren forward { type filter hook forward priority 0; policy accept; }\n"
		"flush chain bridge warren forward\n"
		"add rule bridge warren forward iifname \"wv*\" drop\n"
		/* a VM's guest kernel may send as any MAC and address: its tap passes only its own */
		"add set bridge warren vms { type ifname; }\n"
		"add set bridge warren vmsrc { type ifname . ether_addr . ipv4_addr; }\n"
		"add chain bridge warren prerouting { type filter hook prerouting priority -300; policy accept; }\n"
		"flush chain bridge warren prerouting\n"
		"add rule bridge warren prerouting iifname != @vms accept\n"
		"add rule bridge warren prerouting ether type ip iifname . ether saddr . ip saddr @vmsrc accept\n"
		"add rule bridge warren prerouting ether type arp iifname . ether saddr . arp saddr ip @vmsrc accept\n"
		"add rule bridge warren prerouting drop\n",
		NET_BRIDGE, ip4(subnet, net), prefix);
}

void fw_base_remove(struct nft_ctx *nft)
{
	if (fw_run(nft, "delete table inet warren\ndelete table bridge warren\n", NULL) < 0) {
		fw_run(nft, "delete table inet warren", NULL);
		fw_run(nft, "delete table bridge warren", NULL);
	}
}

static char *port_key(uint16_t port, char *buf, size_t len)
{
	if (port)
		snprintf(buf, len, "%u", port);
	else
		snprintf(buf, len, "0-65535");
	return buf;
}

static void allow_elem(FILE *f, const struct net_allow *a, bool first)
{
	char na[INET_ADDRSTRLEN], pk[16];
	fprintf(f, "%s%s/%d . %s", first ? "" : ", ", ip4(a->addr, na), a->prefix, port_key(a->port, pk, sizeof pk));
}

void fw_private_rules(FILE *f, const char *chain, const char *refuse, const struct net_state *n, const char *set)
{
	size_t k = 0;
	if (set)  /* a root run's: its set, whose elements come with the run's or its claim's (fw_allow_elems) */
		fprintf(f, "add rule inet warren %s ip daddr . th dport @%s accept\n", chain, set);
	for (size_t i = 0; !set && i < n->nallow; i++) {
		const struct net_allow *a = &n->allow[i];
		if (a->name || !net_private_range(a->addr, a->prefix))
			continue;
		if (!k++)
			fprintf(f, "add rule inet warren %s ip daddr . th dport { ", chain);
		allow_elem(f, a, k == 1);
	}
	if (k)
		fprintf(f, " } accept\n");
	fprintf(f, "add rule inet warren %s ip daddr { ", chain);
	k = 0;
	for (const struct net_range *r = net_private_ranges; r->name; r++)
		if (!n->lan || !r->lan)
			fprintf(f, "%s%s", k++ ? ", " : "", r->name);
	fprintf(f, " } goto %s\n", refuse);
}

/* The run's published ports: its chain u_<id> of DNAT rules, and the base's map entries. */
static void publish_cmds(FILE *f, const struct net_state *n)
{
	char a[INET_ADDRSTRLEN];
	ip4(n->addr, a);
	if (n->npublish)
		fprintf(f, "add chain inet warren u_%s\n", n->id);
	for (unsigned i = 0; i < n->npublish; i++) {
		char ha[INET_ADDRSTRLEN];
		const struct net_publish *p = &n->publish[i];
		fprintf(f, "add rule inet warren u_%s ip daddr %s tcp dport %u dnat ip to %s:%u\n", n->id,
			ip4(p->host_addr, ha), p->host_port, a, p->cell_port);
		fprintf(f, "add element inet warren pubs { %u : jump u_%s }\n", p->host_port, n->id);
	}
}

/* The run's allow list's address entries: those inside a private range into l_<id> (accepted
 * before the ranges are refused: fw_private_rules), the others into a_<id> under allow=
 * (nat reaches those anyway). */
static void allow_cmds(FILE *f, const struct net_state *n)
{
	for (size_t i = 0; n->mode != NET_PUBLISHED && i < n->nallow; i++) {
		bool private = net_private_range(n->allow[i].addr, n->allow[i].prefix) != NULL;
		if (n->allow[i].name || (!private && n->mode != NET_ALLOW))
			continue;
		fprintf(f, "add element inet warren %c_%s { ", private ? 'l' : 'a', n->id);
		allow_elem(f, &n->allow[i], true);
		fprintf(f, " }\n");
	}
}

int fw_run_add(struct nft_ctx *nft, const struct net_state *n, uint16_t dns_port, struct error *err)
{
	char a[INET_ADDRSTRLEN], gw[INET_ADDRSTRLEN], sn[INET_ADDRSTRLEN];
	const char *id = n->id;
	ip4(n->addr, a);
	ip4(n->gw, gw);
	ip4(n->subnet, sn);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return error_set(err, errno, "cannot build the firewall rules");
	base_cmds(f, n->subnet, n->prefix);
	fprintf(f,
		"add set inet warren a_%1$s { type ipv4_addr . inet_service; flags interval; }\n"
		"add set inet warren l_%1$s { type ipv4_addr . inet_service; flags interval; }\n"
		"add set inet warren n_%1$s { type ipv4_addr; flags timeout; }\n"
		"add set inet warren d_%1$s { type ipv4_addr . inet_service; flags timeout; }\n"
		"add set inet warren x_%1$s { type ipv4_addr . inet_service; size 4096; flags dynamic; counter; }\n"
		"add chain inet warren r_%1$s\n"
		"add rule inet warren r_%1$s meta l4proto { tcp, udp } add @x_%1$s { ip daddr . th dport }\n"
		"add rule inet warren r_%1$s meta l4proto tcp reject with tcp reset\n"
		"add rule inet warren r_%1$s reject with icmpx admin-prohibited\n"
		"add chain inet warren f_%1$s\n"
		"add rule inet warren f_%1$s ct state established,related accept\n"
		"add rule inet warren f_%1$s ip daddr { 224.0.0.0/4, 255.255.255.255, %2$s/%3$d } goto r_%1$s\n"
		"add rule inet warren f_%1$s fib daddr type { local, broadcast, multicast } goto r_%1$s\n",
		id, sn, n->prefix);
	_cleanup_free_ char *fchain = xasprintf("f_%s", id), *rchain = xasprintf("r_%s", id), *lset = xasprintf("l_%s", id);
	/* none+publish: the replies of its published ports (above) and nothing the cell starts */
	if (n->mode != NET_PUBLISHED)
		fw_private_rules(f, fchain, rchain, n, lset);
	if (n->mode == NET_NAT)
		fprintf(f, "add rule inet warren f_%s accept\n", id);
	else if (n->mode == NET_ALLOW)
		fprintf(f, "add rule inet warren f_%1$s ip daddr . th dport @a_%1$s accept\n"
			   "add rule inet warren f_%1$s ip daddr @n_%1$s accept\n"
			   "add rule inet warren f_%1$s ip daddr . th dport @d_%1$s accept\n", id);
	fprintf(f,
		"add rule inet warren f_%1$s goto r_%1$s\n"
		"add chain inet warren i_%1$s\n"
		"add rule inet warren i_%1$s ct state established,related accept\n"
		"add chain inet warren p_%1$s\n", id);
	if (dns_port) /* the run's resolver (none for none+publish) */
		fprintf(f, "add rule inet warren i_%1$s ip daddr %2$s udp dport %3$u accept\n"
			   "add rule inet warren p_%1$s ip daddr %2$s udp dport 53 redirect to :%3$u\n", id, gw, dns_port);
	fprintf(f,
		"add rule inet warren i_%1$s goto r_%1$s\n"
		"add element inet warren runs_fwd { %2$s : jump f_%1$s }\n"
		"add element inet warren runs_in { %2$s : jump i_%1$s }\n"
		"add element inet warren runs_pre { %2$s : jump p_%1$s }\n",
		id, a);
	publish_cmds(f, n);
	if (n->tap) {
		char mac[18];
		net_guest_mac(n->addr, mac);
		fprintf(f, "add element bridge warren vms { \"%1$s\" }\nadd element bridge warren vmsrc { \"%1$s\" . %2$s . %3$s }\n",
			n->host_if, mac, a);
	}
	allow_cmds(f, n);
	fclose(f);
	int r = fw_run(nft, buf, err);
	free(buf);
	return r;
}

int fw_claim(struct nft_ctx *nft, const struct net_state *n, struct error *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return error_set(err, errno, "cannot build the firewall rules");
	publish_cmds(f, n);
	allow_cmds(f, n);
	fclose(f);
	int r = len ? fw_run(nft, buf, err) : 0;
	free(buf);
	return r;
}

void fw_run_remove(struct nft_ctx *nft, const char *id, uint32_t addr, const struct net_publish *pub, unsigned npub,
		   const char *vm_if)
{
	char a[INET_ADDRSTRLEN];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	if (addr) {
		ip4(addr, a);
		fprintf(f, "delete element inet warren runs_fwd { %1$s }\ndelete element inet warren runs_in { %1$s }\n"
			   "delete element inet warren runs_pre { %1$s }\n", a);
	}
	for (unsigned i = 0; i < npub; i++)
		fprintf(f, "delete element inet warren pubs { %u }\n", pub[i].host_port);
	/* u_<id> exists only with published ports (fw_run_add): the transaction names exactly
	 * what the run made, so it goes through in one piece */
	static const char *const chains[] = { "f", "i", "p", "u", "r" };
	for (size_t i = 0; i < 5; i++)
		if (chains[i][0] != 'u' || npub)
			fprintf(f, "flush chain inet warren %s_%s\n", chains[i], id);
	for (size_t i = 0; i < 5; i++)
		if (chains[i][0] != 'u' || npub)
			fprintf(f, "delete chain inet warren %s_%s\n", chains[i], id);
	fprintf(f, "delete set inet warren a_%1$s\ndelete set inet warren l_%1$s\ndelete set inet warren n_%1$s\n"
		   "delete set inet warren d_%1$s\ndelete set inet warren x_%1$s\n", id);
	fclose(f);
	if (fw_run(nft, buf, NULL) < 0) {
		/* something was not there (no published ports, a half-made run): one at a time */
		for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			fw_run(nft, l, NULL);
	}
	free(buf);
	if (vm_if && addr) {
		char mac[18];
		net_guest_mac(addr, mac);
		_cleanup_free_ char *vm = xasprintf("delete element bridge warren vms { \"%1$s\" }\n"
						   "delete element bridge warren vmsrc { \"%1$s\" . %2$s . %3$s }\n", vm_if, mac, a);
		fw_run(nft, vm, NULL); /* warren gc does not know a VM's run: nothing there then */
	}
}

int fw_allow_addr(struct nft_ctx *nft, const char *id, uint32_t addr, uint16_t port, uint32_t timeout_s,
		  struct error *err)
{
	char a[INET_ADDRSTRLEN];
	_cleanup_free_ char *cmd = port ? xasprintf("add element inet warren d_%s { %s . %u timeout %us }", id, ip4(addr, a),
						    port, timeout_s)
					: xasprintf("add element inet warren n_%s { %s timeout %us }", id, ip4(addr, a), timeout_s);
	return fw_run(nft, cmd, err);
}

static int by_count(const void *x, const void *y)
{
	json_int_t a = json_integer_value(json_object_get(*(json_t *const *)x, "count"));
	json_int_t b = json_integer_value(json_object_get(*(json_t *const *)y, "count"));
	return a < b ? 1 : a > b ? -1 : 0;
}

json_t *fw_refused(struct nft_ctx *nft, const char *id)
{
	json_t *out = json_array();
	_cleanup_free_ char *cmd = xasprintf("list set inet warren x_%s", id);
	nft_ctx_output_set_flags(nft, NFT_CTX_OUTPUT_JSON);
	int r = nft_run_cmd_from_buffer(nft, cmd);
	nft_ctx_output_set_flags(nft, 0);
	if (r != 0)
		return out;
	json_t *j = json_loads(nft_ctx_get_output_buffer(nft), 0, NULL);
	json_t *items = json_object_get(j, "nftables"), *it;
	size_t i;
	json_array_foreach(items, i, it) {
		json_t *elems = json_object_get(json_object_get(it, "set"), "elem"), *e;
		size_t k;
		json_array_foreach(elems, k, e) {
			json_t *el = json_object_get(e, "elem");
			json_t *cat = json_object_get(json_object_get(el, "val"), "concat");
			json_t *cnt = json_object_get(json_object_get(el, "counter"), "packets");
			const char *addr = json_string_value(json_array_get(cat, 0));
			json_t *port = json_array_get(cat, 1);
			if (!addr || !json_is_integer(port))
				continue;
			_cleanup_free_ char *dest = xasprintf("%s:%lld", addr, (long long)json_integer_value(port));
			json_array_append_new(out, json_pack("{s:s,s:I}", "dest", dest, "count",
							     (json_int_t)(json_is_integer(cnt) ? json_integer_value(cnt) : 1)));
		}
	}
	json_decref(j);
	size_t n = json_array_size(out);
	if (n > 1) {
		json_t **v = xcalloc(n, sizeof *v);
		for (i = 0; i < n; i++)
			v[i] = json_incref(json_array_get(out, i));
		qsort(v, n, sizeof *v, by_count);
		json_array_clear(out);
		for (i = 0; i < n; i++)
			json_array_append_new(out, v[i]);
		free(v);
	}
	return out;
}
