/* SPDX-License-Identifier: Apache-2.0 */
/* config.c - the keys of warren.conf (util/conf.h reads the files) and the checks of their
 * values, borrowed from the layers that use them: state (the state directory, as --state),
 * net (the network of a run that names none, as --net), net.pool (the ranges runs' networks
 * are taken from, net/net.h), limits.NAME (the default limits, as /etc/warren/defaults),
 * oci.root (the OCI face's state root when runc's --root is not given), oci.host_network,
 * oci.host_ipc and oci.host_pid (allow: the OCI face gives a pod the host's namespaces it
 * asks for; the gate refuses them otherwise, cell/gate.h), oci.host_to_container (allow: a
 * pod's rslave binds in root mode, oci/config.c). The
 * environment and the command line win over the files: each reader asks conf_get last. */
#include <stdlib.h>
#include <string.h>

#include "cli/config.h"
#include "net/net.h"
#include "run/limits.h"
#include "util/conf.h"
#include "util/fs.h"

static int check_state(const char *key, const char *v, char **why)
{
	(void)key;
	if (v[0] == '/')
		return 0;
	*why = xasprintf("'%s' is not an absolute path; give the directory as /DIR", v);
	return -1;
}

static int check_net(const char *key, const char *v, char **why)
{
	(void)key;
	struct net_opts o = { 0 };
	struct error e = { 0 };
	if (net_parse_mode(&o, v, &e) == 0)
		return 0;
	*why = xstrdup(e.msg + (strncmp(e.msg, "--net", 5) ? 0 : 5 + strspn(e.msg + 5, ": ")));
	error_clear(&e);
	return -1;
}

static int check_pool(const char *key, const char *v, char **why)
{
	(void)key;
	struct net_cidr *pool = NULL;
	size_t n = 0;
	struct error e = { 0 };
	int r = net_pool_parse(v, &pool, &n, &e);
	free(pool);
	if (r == 0)
		return 0;
	*why = steal_pointer(&e.msg);
	return -1;
}

static int check_limit(const char *key, const char *v, char **why)
{
	const struct limit_desc *d = limit_find(key + strlen(LIMITS_CONF_PREFIX));
	uint64_t out;
	int r = limit_value(d, v, &out);
	if (r == -EDOM)
		*why = limit_zero(d, v);
	else if (r == -ERANGE)
		*why = limit_too_small(d, out);
	return r < 0 ? -1 : 0;
}

static int check_allow(const char *key, const char *v, char **why)
{
	(void)key;
	if (!strcmp(v, "allow") || !strcmp(v, "refuse"))
		return 0;
	*why = xasprintf("'%s' is neither allow nor refuse; give one of them", v);
	return -1;
}

static const struct conf_key KEYS[] = {
	{ "state", "a directory (an absolute path)", check_state },
	{ "oci.root", "a directory (an absolute path)", check_state },
	{ "net", "a network mode (none, nat, nat,lan, nat,allow=ADDRS or allow=LIST)", check_net },
	{ "net.pool", "a list of IPv4 networks (e.g. 10.88.0.0/16, 172.30.0.0/16)", check_pool },
	{ "limits.time", "a duration (e.g. 30s, 10m, 1h30m, 250ms) or none", check_limit },
	{ "limits.cpu-time", "a duration (e.g. 30s, 10m, 1h30m, 250ms) or none", check_limit },
	{ "limits.memory", "a size (e.g. 512M, 2G, 100K) or none", check_limit },
	{ "limits.pids", "a positive whole number or none", check_limit },
	{ "limits.output", "a size (e.g. 512M, 2G, 100K) or none", check_limit },
	{ "limits.scratch", "a size (e.g. 512M, 2G, 100K) or none", check_limit },
	{ "oci.host_network", "allow or refuse (a pod's hostNetwork: the host's network and UTS namespaces)", check_allow },
	{ "oci.host_ipc", "allow or refuse (a pod's hostIPC: the host's IPC namespace)", check_allow },
	{ "oci.host_pid", "allow or refuse (a pod's hostPID: the host's PID namespace)", check_allow },
	{ "oci.host_to_container", "allow or refuse (a pod's mountPropagation HostToContainer: rslave binds in root mode)", check_allow },
	{ NULL, NULL, NULL },
};

int cli_config_load(struct error *err)
{
	return conf_load(KEYS, err);
}

const struct conf_key *cli_config_keys(void)
{
	return KEYS;
}

int cli_net_default(struct net_opts *o, struct error *err)
{
	const char *from = NULL, *v = o->mode_given ? NULL : conf_get("net", &from);
	if (!v)
		return 0;
	if (net_parse_mode(o, v, err) < 0)
		return -EINVAL;
	o->mode_given = false; /* a default: --publish alone still means nat */
	return 0;
}
