/* SPDX-License-Identifier: Apache-2.0 */
/* sysctl.c - a cell's own sysctls (sysctl.h): the kubelet's safe set of namespaced ones. Each
 * is checked where it is taken (the face's bundle) and written by init through /proc/sys,
 * which the kernel resolves by the writer's network or IPC namespace: the cell's. */
#include "cell/sysctl.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "util/fs.h"

/* The kubelet's safe sysctls (pkg/kubelet/sysctl/safe_sysctls.go, 1.32), all namespaced */
static const struct { const char *key; enum gate_ns_kind ns; } SAFE[] = {
	{ "kernel.shm_rmid_forced", GATE_NS_IPC },
	{ "net.ipv4.ip_local_port_range", GATE_NS_NET },
	{ "net.ipv4.ip_local_reserved_ports", GATE_NS_NET },
	{ "net.ipv4.ip_unprivileged_port_start", GATE_NS_NET },
	{ "net.ipv4.ping_group_range", GATE_NS_NET },
	{ "net.ipv4.tcp_syncookies", GATE_NS_NET },
	{ "net.ipv4.tcp_keepalive_time", GATE_NS_NET },
	{ "net.ipv4.tcp_fin_timeout", GATE_NS_NET },
	{ "net.ipv4.tcp_keepalive_intvl", GATE_NS_NET },
	{ "net.ipv4.tcp_keepalive_probes", GATE_NS_NET },
	{ "net.ipv4.tcp_rmem", GATE_NS_NET },
	{ "net.ipv4.tcp_wmem", GATE_NS_NET },
};

/* key with '/' as '.', or NULL when it is too long to be one of the set */
static bool normal_key(const char *key, char *out, size_t len)
{
	size_t n = strlen(key);
	if (n >= len)
		return false;
	for (size_t i = 0; i <= n; i++)
		out[i] = key[i] == '/' ? '.' : key[i];
	return true;
}

int cell_sysctl_kind(const char *key)
{
	char k[64];
	if (!normal_key(key, k, sizeof k))
		return -1;
	for (size_t i = 0; i < sizeof SAFE / sizeof SAFE[0]; i++)
		if (!strcmp(SAFE[i].key, k))
			return (int)SAFE[i].ns;
	return -1;
}

int cell_sysctl_add(struct cell_spec *s, const char *field, const char *key, const char *value, struct error *err)
{
	int kind = cell_sysctl_kind(key);
	if (kind < 0)
		return error_set(err, 0, "%s '%s': not one of the namespaced safe sysctls a cell may set (the kubelet's "
				 "safe set: docs/kubernetes.md); leave it out", field, key);
	if (s->ns[kind].from == CELL_NS_HOST)
		return error_set(err, 0, "%s '%s': the cell shares the host's %s namespace (the pod's %s): the sysctl would be the "
				 "node's; leave it out", field, key, gate_ns_type_name(kind), kind == GATE_NS_NET ? "hostNetwork" : "hostIPC");
	if (!value || !*value || strlen(value) > 256 || strpbrk(value, "\n\r"))
		return error_set(err, 0, "%s '%s' = '%s': give one line of at most 256 characters", field, key, value ? value : "");
	char k[64];
	normal_key(key, k, sizeof k);
	s->sysctls = xrealloc(s->sysctls, (s->n_sysctls + 1) * sizeof *s->sysctls);
	s->sysctls[s->n_sysctls++] = (struct cell_sysctl){ xstrdup(k), xstrdup(value) };
	return 0;
}

int cell_sysctls_set(const struct cell_spec *s, struct error *err)
{
	for (size_t i = 0; i < s->n_sysctls; i++) {
		char path[96] = "/proc/sys/";
		size_t n = strlen(path);
		for (const char *c = s->sysctls[i].key; *c && n < sizeof path - 1; c++)
			path[n++] = *c == '.' ? '/' : *c;
		path[n] = '\0';
		_cleanup_close_ int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		const char *v = s->sysctls[i].value;
		if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v))
			return error_set(err, errno, "linux.sysctl '%s' = '%s': the kernel refused it in the cell's namespace",
					 s->sysctls[i].key, v);
	}
	return 0;
}
