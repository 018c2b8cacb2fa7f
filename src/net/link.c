/* SPDX-License-Identifier: Apache-2.0 */
/* link.c - links, addresses and routes through libnl-route-3: warren's bridge, a run's veth
 * pair (the cell's end created straight in the cell's network namespace), the cell's address
 * and default route set from outside the cell (a netlink socket opened inside its namespace);
 * for the vm driver, a tap on the bridge instead (the guest configures its own end). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/bridge.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>

#include "net/internal.h"
#include "util/fs.h"

static struct nl_sock *nl_open(struct error *err)
{
	struct nl_sock *sk = nl_socket_alloc();
	if (!sk) {
		error_set(err, ENOMEM, "cannot allocate a netlink socket");
		return NULL;
	}
	int r = nl_connect(sk, NETLINK_ROUTE);
	if (r < 0) {
		nl_socket_free(sk);
		error_set(err, 0, "cannot open a netlink socket: %s", nl_geterror(r));
		return NULL;
	}
	return sk;
}

static int add_addr(struct nl_sock *sk, int ifindex, uint32_t addr, int prefix)
{
	struct rtnl_addr *a = rtnl_addr_alloc();
	struct nl_addr *l = nl_addr_build(AF_INET, &addr, 4);
	nl_addr_set_prefixlen(l, prefix);
	rtnl_addr_set_ifindex(a, ifindex);
	rtnl_addr_set_local(a, l);
	int r = rtnl_addr_add(sk, a, 0);
	nl_addr_put(l);
	rtnl_addr_put(a);
	return r == -NLE_EXIST ? 0 : r;
}

/* Bring ifname up (and put it on master when master > 0). */
static int link_up(struct nl_sock *sk, const char *ifname, int master, int *ifindex)
{
	struct rtnl_link *l = NULL;
	int r = rtnl_link_get_kernel(sk, 0, ifname, &l);
	if (r < 0)
		return r;
	struct rtnl_link *ch = rtnl_link_alloc();
	rtnl_link_set_flags(ch, IFF_UP);
	if (master > 0)
		rtnl_link_set_master(ch, master);
	r = rtnl_link_change(sk, l, ch, 0);
	if (ifindex)
		*ifindex = rtnl_link_get_ifindex(l);
	rtnl_link_put(ch);
	rtnl_link_put(l);
	return r;
}

int link_bridge_ensure(uint32_t gw, int prefix, struct error *err)
{
	struct nl_sock *sk = nl_open(err);
	if (!sk)
		return -EIO;
	int idx = 0, r = rtnl_link_bridge_add(sk, NET_BRIDGE);
	if (r < 0 && r != -NLE_EXIST) {
		error_set(err, 0, "cannot create the bridge %s: %s", NET_BRIDGE, nl_geterror(r));
		goto out;
	}
	r = link_up(sk, NET_BRIDGE, 0, &idx);
	if (r >= 0)
		r = add_addr(sk, idx, gw, prefix);
	if (r < 0) {
		error_set(err, 0, "cannot configure the bridge %s: %s", NET_BRIDGE, nl_geterror(r));
		goto out;
	}
	/* loopback-published ports are DNATed out of warren0; the cells' traffic is routed */
	write_file("/proc/sys/net/ipv4/conf/" NET_BRIDGE "/route_localnet", "1", 1);
	write_file("/proc/sys/net/ipv6/conf/" NET_BRIDGE "/disable_ipv6", "1", 1);
	if (write_file("/proc/sys/net/ipv4/ip_forward", "1", 1) < 0) {
		r = -1;
		error_set(err, errno, "cannot enable IPv4 forwarding (/proc/sys/net/ipv4/ip_forward)");
	}
out:
	nl_socket_free(sk);
	return r < 0 ? -EIO : 0;
}

void link_bridge_remove(void)
{
	link_remove(NET_BRIDGE);
}

/* Configure the cell's end from inside its network namespace: IPv6 off, the address, up,
 * the default route via the gateway. The supervisor enters the namespace only to open the
 * socket and the sysctl, and comes straight back. */
static int cell_side(pid_t pid, uint32_t addr, int prefix, uint32_t gw, struct error *err)
{
	_cleanup_free_ char *nspath = xasprintf("/proc/%d/ns/net", (int)pid);
	_cleanup_close_ int cell_ns = open(nspath, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int self_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (cell_ns < 0 || self_ns < 0)
		return error_set(err, errno, "cannot open the network namespace of the cell (%s)", nspath);
	if (setns(cell_ns, CLONE_NEWNET) < 0)
		return error_set(err, errno, "cannot enter the network namespace of the cell");
	struct error e2 = { 0 };
	struct nl_sock *sk = nl_open(&e2);
	_cleanup_close_ int v6 = open("/proc/sys/net/ipv6/conf/" NET_CELL_IF "/disable_ipv6", O_WRONLY | O_CLOEXEC);
	if (setns(self_ns, CLONE_NEWNET) < 0)
		abort(); /* cannot happen: we came from there; going on in the cell's would be wrong */
	if (!sk) {
		err->errnum = e2.errnum;
		err->msg = steal_pointer(&e2.msg);
		return -EIO;
	}
	if (v6 >= 0 && write(v6, "1", 1) < 0) {
		/* no IPv6 in the kernel: nothing to turn off */
	}
	int idx = 0;
	struct rtnl_link *l = NULL;
	int r = rtnl_link_get_kernel(sk, 0, NET_CELL_IF, &l);
	if (r >= 0) {
		idx = rtnl_link_get_ifindex(l);
		rtnl_link_put(l);
		r = add_addr(sk, idx, addr, prefix);
	}
	if (r >= 0)
		r = link_up(sk, NET_CELL_IF, 0, NULL);
	if (r >= 0) {
		struct rtnl_route *rt = rtnl_route_alloc();
		uint32_t zero = 0;
		struct nl_addr *dst = nl_addr_build(AF_INET, &zero, 4);
		nl_addr_set_prefixlen(dst, 0);
		struct nl_addr *via = nl_addr_build(AF_INET, &gw, 4);
		struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
		rtnl_route_nh_set_ifindex(nh, idx);
		rtnl_route_nh_set_gateway(nh, via);
		rtnl_route_set_family(rt, AF_INET);
		rtnl_route_set_dst(rt, dst);
		rtnl_route_add_nexthop(rt, nh);
		r = rtnl_route_add(sk, rt, NLM_F_CREATE);
		nl_addr_put(dst);
		nl_addr_put(via);
		rtnl_route_put(rt);
	}
	nl_socket_free(sk);
	if (r < 0)
		return error_set(err, 0, "cannot configure %s in the cell: %s", NET_CELL_IF, nl_geterror(r));
	return 0;
}

int link_veth_attach(const char *host_if, pid_t pid, uint32_t addr, int prefix, uint32_t gw, struct error *err)
{
	struct nl_sock *sk = nl_open(err);
	if (!sk)
		return -EIO;
	int br = 0;
	struct rtnl_link *b = NULL;
	int r = rtnl_link_get_kernel(sk, 0, NET_BRIDGE, &b);
	if (r >= 0) {
		br = rtnl_link_get_ifindex(b);
		rtnl_link_put(b);
		r = rtnl_link_veth_add(sk, host_if, NET_CELL_IF, pid);
	}
	if (r < 0) {
		nl_socket_free(sk);
		return error_set(err, 0, "cannot create the veth pair %s/%s: %s", host_if, NET_CELL_IF, nl_geterror(r));
	}
	_cleanup_free_ char *v6 = xasprintf("/proc/sys/net/ipv6/conf/%s/disable_ipv6", host_if);
	write_file(v6, "1", 1);
	r = link_up(sk, host_if, br, NULL);
	nl_socket_free(sk);
	if (r < 0)
		return error_set(err, 0, "cannot put %s on the bridge %s: %s", host_if, NET_BRIDGE, nl_geterror(r));
	return cell_side(pid, addr, prefix, gw, err);
}

void link_remove(const char *ifname)
{
	struct error e = { 0 };
	struct nl_sock *sk = nl_open(&e);
	error_clear(&e);
	if (!sk)
		return;
	struct rtnl_link *l = NULL;
	if (rtnl_link_get_kernel(sk, 0, ifname, &l) == 0) {
		rtnl_link_delete(sk, l);
		rtnl_link_put(l);
	}
	nl_socket_free(sk);
}

bool link_exists(const char *ifname)
{
	return if_nametoindex(ifname) != 0;
}

int link_tap_attach(const char *host_if, struct error *err)
{
	_cleanup_close_ int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, errno, "cannot open /dev/net/tun for the VM's tap (modprobe tun)");
	struct ifreq r = { .ifr_flags = IFF_TAP | IFF_NO_PI };
	snprintf(r.ifr_name, sizeof r.ifr_name, "%s", host_if);
	if (ioctl(fd, TUNSETIFF, &r) < 0)
		return error_set(err, errno, "cannot create the tap %s", host_if);
	_cleanup_free_ char *v6 = xasprintf("/proc/sys/net/ipv6/conf/%s/disable_ipv6", host_if);
	write_file(v6, "1", 1);
	struct nl_sock *sk = nl_open(err);
	if (!sk)
		return -EIO;
	int br = (int)if_nametoindex(NET_BRIDGE);
	int rc = br > 0 ? link_up(sk, host_if, br, NULL) : -NLE_OBJ_NOTFOUND;
	nl_socket_free(sk);
	if (rc < 0)
		return error_set(err, 0, "cannot put %s on the bridge %s: %s", host_if, NET_BRIDGE, nl_geterror(rc));
	return steal_fd(&fd);
}
