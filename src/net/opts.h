/* SPDX-License-Identifier: Apache-2.0 */
/* opts.h - what the user asked of a run's network (--net, --publish, --dns-max-names): the
 * plain types the cell spec holds, and their parsers (opts.c). See net.h for the rest. */
#ifndef WARREN_NET_OPTS_H
#define WARREN_NET_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

#define NET_MAX_PUBLISH 16
#define NET_DNS_MAX_NAMES_DEFAULT 1000

/* NET_PUBLISHED: --net none given with --publish: a link for the published ports only (they
 * are reachable from the host; every connection the cell starts is refused, no resolver). */
enum net_mode { NET_NONE = 0, NET_NAT, NET_ALLOW, NET_PUBLISHED };

struct net_publish {
	uint32_t host_addr;   /* network order; 127.0.0.1 by default */
	uint16_t host_port, cell_port;
};

/* What the user asked for (part of the cell spec). Strings point into argv or the job. */
struct net_opts {
	enum net_mode mode;
	bool mode_given;      /* --net (or a job's network:) was given: none is asked, not the default */
	bool lan;             /* --net nat,lan / lan,allow=: the private ranges are reachable */
	const char *allow;    /* LIST of --net [nat,]allow=LIST; NULL: none */
	unsigned npublish;
	struct net_publish publish[NET_MAX_PUBLISH];
	unsigned dns_max_names; /* 0: NET_DNS_MAX_NAMES_DEFAULT */
};

/* Parse --net WORDS (none, nat, lan, allow=LIST), --publish SPEC, --dns-max-names N into o
 * (checked: errors name the value). */
int net_parse_mode(struct net_opts *o, const char *arg, struct error *err);
int net_parse_publish(struct net_opts *o, const char *arg, struct error *err);
int net_parse_max_names(struct net_opts *o, const char *arg, struct error *err);
/* The mode of a run with npublish published ports: the default (no --net given) becomes nat,
 * as --publish alone always meant; an explicit --net none becomes NET_PUBLISHED; others stay. */
enum net_mode net_publish_mode(enum net_mode mode, bool given, unsigned npublish);
/* After all the options, in whatever order they came: the mode settled (net_publish_mode), and
 * a host port in use or an address the host does not have refused (one line naming the port
 * and what to do). */
int net_opts_finish(struct net_opts *o, struct error *err);
/* Whether a run may have the network mode (settled: net_opts_finish) with npublish published
 * ports: a rootless run (rootless) has no allow= (its traffic leaves through pasta, where warren
 * keeps no allow set) and publishes ports only under --net none (NET_PUBLISHED); a rootless VM
 * (vm) publishes none. 0, or -EPERM with the one line why and what to do. */
int net_mode_allowed(enum net_mode mode, unsigned npublish, bool rootless, bool vm, struct error *err);
/* The mode as the record writes it: "none", "nat", "allow", "none+publish". */
const char *net_mode_name(enum net_mode mode);

#endif
