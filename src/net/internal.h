/* SPDX-License-Identifier: Apache-2.0 */
/* internal.h - what the pieces of src/net share: links (link.c), the firewall (fw.c), the
 * resolver (dns.c) and the address leases (net.c). Not for use outside src/net. */
#ifndef WARREN_NET_INTERNAL_H
#define WARREN_NET_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "net/net.h"

#define NET_BRIDGE "warren0"
#define NET_CELL_IF "eth0"
#define NET_TABLE "inet warren"
#define NET_RUNDIR "/run/warren/net"     /* leases and their lock: host-wide, like the bridge */

int link_bridge_ensure(uint32_t gw, int prefix, struct error *err);
void link_bridge_remove(void);
int link_veth_attach(const char *host_if, pid_t pid, uint32_t addr, int prefix, uint32_t gw, struct error *err);
/* The vm driver's tap host_if on the bridge, up: its descriptor (for qemu), or -errno. */
int link_tap_attach(const char *host_if, struct error *err);
void link_remove(const char *ifname);
bool link_exists(const char *ifname);

/* Delete the kernel's connection tracking entries of addr (its own connections and those to
 * it): 0 or -errno (ct.c). */
int ct_forget(uint32_t addr);

struct nft_ctx *fw_open(void);
void fw_close(struct nft_ctx *nft);
/* Run nft commands (one transaction); 0, or -EIO with the message of nft in err. */
int fw_run(struct nft_ctx *nft, const char *cmds, struct error *err);
void fw_base_remove(struct nft_ctx *nft);
/* The base (if missing, and its base chains refilled) and the run's objects, in one transaction. */
int fw_run_add(struct nft_ctx *nft, const struct net_state *n, uint16_t dns_port, struct error *err);
/* Rules of chain (table inet warren) that keep the cell off the private ranges: the address
 * entries of n's allow list that lie inside one are accepted (those in the set named set, when
 * given: a root run's l_<id>, filled with its run's or its claim's rules; else n's, inline),
 * then the ranges n->lan does not lift go to chain refuse. Shared by the forward chain of a
 * root run and a rootless cell's own. */
void fw_private_rules(FILE *f, const char *chain, const char *refuse, const struct net_state *n, const char *set);
/* A warm cell's claim: the published ports and the allow list's address entries of n (its
 * run's, set at the claim) added to the cell's objects, in one transaction. */
int fw_claim(struct nft_ctx *nft, const struct net_state *n, struct error *err);
/* Remove a run's chains, sets and map entries (addr 0: unknown, only the named objects); vm_if:
 * the tap of a VM's run (its entries in the bridge's sets), or NULL. */
void fw_run_remove(struct nft_ctx *nft, const char *id, uint32_t addr, const struct net_publish *pub, unsigned npub,
		   const char *vm_if);
/* Add an answered addr (port 0: any port) to the run's sets for timeout_s (an element there
 * already takes the new timeout); 0, or -EIO with nft's message in err. */
int fw_allow_addr(struct nft_ctx *nft, const char *id, uint32_t addr, uint16_t port, uint32_t timeout_s,
		  struct error *err);
/* The refused destinations: a JSON array of {dest, count}, sorted by count. */
json_t *fw_refused(struct nft_ctx *nft, const char *id);

/* Rootless --net nat: pasta (passt) attached to the cell's network namespace. */
int pasta_start(struct net_state *n, pid_t cell_pid, struct error *err);
/* Rootless --net nat of a VM: passt in a network namespace of its own, which gets the
 * firewall and pasta of a rootless cell first; qemu's end of passt's socket, or -errno. */
int passt_start(struct net_state *n, struct error *err);
/* Ends pasta and passt. */
void pasta_stop(struct net_state *n);

/* The resolver of one run, on gw, for the cell at cell; fn gets each answered A record. */
typedef void (*dns_allow_fn)(void *ctx, uint32_t addr, uint16_t port, uint32_t ttl);
struct net_dns *dns_open(uint32_t gw, uint32_t cell, enum net_mode mode, const struct net_allow *allow, size_t nallow,
			 unsigned max_names, dns_allow_fn fn, void *ctx, struct error *err);
/* A warm cell's claim: the names its run allows (allow, nallow: n's, which outlive d). */
void dns_set_allow(struct net_dns *d, const struct net_allow *allow, size_t nallow);
uint16_t dns_port(const struct net_dns *d);
/* which 0: the questions' socket; 1: an epoll descriptor, readable when an answer waits. */
int dns_fd(const struct net_dns *d, int which);
void dns_dispatch(struct net_dns *d);
/* {names, names_cap, names_capped, refused: [{name, count}]}; *line: a note for the terminal or NULL. */
json_t *dns_record(struct net_dns *d, char **line);
void dns_close(struct net_dns *d);

#endif
