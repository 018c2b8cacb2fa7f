/* SPDX-License-Identifier: Apache-2.0 */
/* pasta.c - --net nat for rootless runs: pasta (Debian package passt) attached to the cell's
 * network namespace and its owning user namespace, started by the supervisor between the
 * cell's start and its release. pasta is the supervisor's child with a parent-death signal, so
 * it dies with warren (also on kill -9), and it is killed at the end of the run. The cell gets
 * the same address plan as a root run (10.88.0.2 behind gateway 10.88.0.1, DNS forwarded from
 * the gateway to the host's resolver); no port of the host or of the cell is forwarded, but
 * under --net none with --publish (NET_PUBLISHED) the published ones of the host, to a cell
 * whose firewall refuses every connection it starts itself (and no DNS is forwarded).
 * pasta has no firewall of its own, so a firewall goes into the cell's own namespace (a helper
 * joins the run's first user namespace, which owns it; the job, in a child user namespace,
 * cannot change it): the host's own addresses, its loopback (127.0.0.0/8, 0.0.0.0/8), warren's
 * subnet (the gateway but its DNS, and root runs' cells), the private and link-local ranges
 * (unless lan or an allow= entry lifts them), multicast, broadcast and IPv6 are refused, as in
 * a root run. Refusals are not counted.
 * A rootless VM (passt_start) gets the same through passt: passt runs in a user and network
 * namespace of its own that gets this firewall and pasta first, and makes the guest's
 * connections (its NIC is one end of a socketpair, qemu's -netdev stream) from there. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <sched.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/internal.h"
#include "util/fs.h"
#include "util/proc.h"
#include "util/strv.h"

#define PASTA_READY_MS 5000
/* passt's end of the socket qemu's NIC is on */
#define PASST_FD 3
#define PASST_FD_TEXT "3"

char *pasta_find(void)
{
	return host_tool_find("pasta");
}

static long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* The start of every rule set of the cell's own namespace: its table, an output chain, how a
 * refusal is answered, loopback passed, IPv6 dropped. */
#define CELL_RULES_HEAD                                                                          \
	"add table inet warren\n"                                                                \
	"add chain inet warren output { type filter hook output priority 0; policy accept; }\n"  \
	"add chain inet warren refuse\n"                                                         \
	"add rule inet warren refuse meta l4proto tcp reject with tcp reset\n"                    \
	"add rule inet warren refuse reject with icmpx admin-prohibited\n"                       \
	"add rule inet warren output oifname \"lo\" accept\n"                                    \
	"add rule inet warren output meta nfproto ipv6 drop\n"

/* none+publish: the cell's own namespace passes loopback and the replies of its published
 * ports (whoever asked: the host, the LAN), and refuses every connection the cell starts. The
 * loopback ranges go first: a socket bound to eth0 may send a reply of a loopback flow there. */
static char *published_rules(void)
{
	return xstrdup(CELL_RULES_HEAD
		       "add rule inet warren output ip daddr { 127.0.0.0/8, 0.0.0.0/8 } goto refuse\n"
		       "add rule inet warren output ct state established,related accept\n"
		       "add rule inet warren output goto refuse\n");
}

/* The rules of the cell's own namespace; the host's IPv4 addresses are read here, outside. */
static char *cell_rules(const struct net_state *n)
{
	if (n->mode == NET_PUBLISHED)
		return published_rules();
	char g[INET_ADDRSTRLEN], sn[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &n->gw, g, sizeof g);
	inet_ntop(AF_INET, &n->subnet, sn, sizeof sn);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fprintf(f, CELL_RULES_HEAD
		   "add rule inet warren output ip daddr %1$s udp dport 53 accept\n"
		   "add set inet warren refused { type ipv4_addr; flags interval; auto-merge; }\n"
		   /* loopback and "this network" leave by eth0 too when a socket is bound to it
		    * (SO_BINDTODEVICE needs no privilege), and pasta would deliver them to the host's
		    * own loopback; warren's subnet is where the host routes root runs' cells */
		   "add element inet warren refused { 127.0.0.0/8, 0.0.0.0/8, %2$s/%3$d, 224.0.0.0/4, 255.255.255.255",
		g, sn, n->prefix);
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) == 0) {
		for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
				continue;
			char a[INET_ADDRSTRLEN];
			struct in_addr in = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
			if ((ntohl(in.s_addr) >> 24) == 127 || (in.s_addr & htonl(~0u << (32 - n->prefix))) == n->subnet)
				continue; /* in the set already */
			fprintf(f, ", %s", inet_ntop(AF_INET, &in, a, sizeof a));
		}
		freeifaddrs(ifa);
	}
	fprintf(f, " }\n"
		   "add rule inet warren output ip daddr @refused goto refuse\n");
	fw_private_rules(f, "output", "refuse", n, NULL);
	fclose(f);
	return buf;
}

/* Put the rules into the cell's namespace: a child joins its owning user namespace (as its
 * owner, it holds CAP_NET_ADMIN there) and its network namespace. */
static int cell_firewall(const struct net_state *n, int userns, int netns, struct error *err)
{
	_cleanup_free_ char *rules = cell_rules(n);
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return error_set(err, errno, "cannot make the cell's firewall");
	pid_t pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return error_set(err, errno, "cannot make the cell's firewall");
	}
	if (pid == 0) {
		close(pfd[0]);
		const char *why = "cannot enter the cell's namespaces";
		if (setns(userns, CLONE_NEWUSER) == 0 && setns(netns, CLONE_NEWNET) == 0) {
			struct nft_ctx *nft = fw_open();
			struct error e = { 0 };
			why = !nft ? "cannot load libnftables.so.1" : fw_run(nft, rules, &e) < 0 ? e.msg : NULL;
		}
		if (why && write(pfd[1], why, strlen(why)) < 0)
			_exit(2);
		_exit(why ? 1 : 0);
	}
	close(pfd[1]);
	char msg[512];
	ssize_t l = read(pfd[0], msg, sizeof msg - 1);
	close(pfd[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	if (l > 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		msg[l > 0 ? l : 0] = '\0';
		return error_set(err, 0, "cannot put the firewall into the cell's network namespace: %s", l > 0 ? msg : "the helper failed");
	}
	return 0;
}

/* In a child about to execute pasta or passt: it dies with the supervisor (also when warren is
 * killed with SIGKILL), has the signals a fresh program has, and /dev/null as stdin and stdout.
 * False when the supervisor is gone already. */
static bool helper_child(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		return false;
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL); /* pasta takes an ignored SIGPIPE for a failure */
	signal(SIGXFSZ, SIG_DFL);
	(void)proc_reset_inherited(); /* the caller's real-time scheduling, negative nice, no ASLR */
	int nul = open("/dev/null", O_RDWR);
	if (nul >= 0) {
		dup2(nul, STDIN_FILENO);
		dup2(nul, STDOUT_FILENO);
	}
	return true;
}

/* Wait until the helper name (*pid) has written its pid file, which pasta and passt do once
 * they are set up; an error when it exits first (*pid then 0) or takes too long. */
static int wait_ready(pid_t *pid, const char *pidfile, const char *name, struct error *err)
{
	long until = now_ms() + PASTA_READY_MS;
	for (;;) {
		int st;
		if (waitpid(*pid, &st, WNOHANG) == *pid) {
			*pid = 0;
			return error_set(err, 0, "%s could not attach to the cell's network (it exited with %s %d); "
					 "run '%s --version' to check it", name, WIFEXITED(st) ? "status" : "signal",
					 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), name);
		}
		struct stat sb;
		if (stat(pidfile, &sb) == 0 && sb.st_size > 0)
			return 0;
		if (now_ms() > until)
			return error_set(err, ETIMEDOUT, "%s did not configure the cell's network in %d ms", name, PASTA_READY_MS);
		poll(NULL, 0, 1);
	}
}

/* pasta's command line: the cell's address plan; no port of the cell reaches the host (-T, -U
 * none), and none of the host the cell but the published ones (-t ADDR/HOSTPORT:CELLPORT,
 * none+publish only; which also has no DNS forwarded). A NULL-ended heap vector. */
static char **pasta_argv(const struct net_state *n, const char *pasta, const char *usarg, const char *nsarg)
{
	char a[INET_ADDRSTRLEN], g[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &n->addr, a, sizeof a);
	inet_ntop(AF_INET, &n->gw, g, sizeof g);
	const char *fixed[] = { pasta, "--config-net", "--foreground", "--quiet", "--ipv4-only", "--no-map-gw",
				"--no-dhcp", "--no-ndp", "--no-dhcpv6", "--no-ra", "-I", NET_CELL_IF, "-a", a, "-g", g,
				"-u", "none", "-T", "none", "-U", "none", "--pid", n->pasta_pidfile,
				"--userns", usarg, "--netns", nsarg };
	size_t nf = sizeof fixed / sizeof fixed[0], k = 0;
	char **v = xcalloc(nf + 6 + 2 * NET_MAX_PUBLISH + 1, sizeof *v);
	for (size_t i = 0; i < nf; i++)
		v[k++] = xstrdup(fixed[i]);
	v[k++] = xstrdup("-n");
	v[k++] = xasprintf("%d", n->prefix);
	if (n->mode != NET_PUBLISHED) {
		v[k++] = xstrdup("--dns-forward");
		v[k++] = xstrdup(g);
	}
	if (n->npublish) {
		/* pasta sends inbound frames to the guest's MAC, which it learns from the first frame
		 * the guest sends: a cell that sends nothing would never get them. Named, it is known. */
		char mac[18];
		net_guest_mac(n->addr, mac);
		v[k++] = xstrdup("--ns-mac-addr");
		v[k++] = xstrdup(mac);
	}
	for (unsigned i = 0; i < n->npublish; i++) {
		char ha[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &n->publish[i].host_addr, ha, sizeof ha);
		v[k++] = xstrdup("-t");
		v[k++] = xasprintf("%s/%u:%u", ha, n->publish[i].host_port, n->publish[i].cell_port);
	}
	if (!n->npublish) {
		v[k++] = xstrdup("-t");
		v[k++] = xstrdup("none");
	}
	return v;
}

int pasta_start(struct net_state *n, pid_t cell_pid, struct error *err)
{
	_cleanup_free_ char *pasta = pasta_find();
	if (!pasta)
		return error_set(err, ENOENT, "--net nat in a rootless run needs pasta; install the Debian package passt");
	_cleanup_free_ char *nspath = xasprintf("/proc/%d/ns/net", (int)cell_pid);
	_cleanup_close_ int netns = open(nspath, O_RDONLY | O_CLOEXEC);
	/* the user namespace that owns the cell's network namespace (the run's first one) */
	_cleanup_close_ int userns = netns >= 0 ? ioctl(netns, NS_GET_USERNS) : -1;
	if (netns < 0 || userns < 0)
		return error_set(err, errno, "cannot open the network namespace of the cell (%s) and its owner", nspath);
	if (cell_firewall(n, userns, netns, err) < 0)
		return -EIO;
	n->pasta_pidfile = xasprintf("%s/pasta.pid", n->rundir);
	unlink(n->pasta_pidfile);
	char nsarg[32], usarg[32];
	snprintf(nsarg, sizeof nsarg, "/proc/self/fd/%d", netns);
	snprintf(usarg, sizeof usarg, "/proc/self/fd/%d", userns);
	_cleanup_strv_ char **argv = pasta_argv(n, pasta, usarg, nsarg);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return error_set(err, errno, "cannot start pasta");
	if (pid == 0) {
		if (!helper_child(parent))
			_exit(127);
		fcntl(netns, F_SETFD, 0);
		fcntl(userns, F_SETFD, 0);
		execv(pasta, argv);
		_exit(127);
	}
	n->pasta_pid = pid;
	/* pasta writes its pid file once the cell's interface, address and route are configured */
	return wait_ready(&n->pasta_pid, n->pasta_pidfile, "pasta", err);
}

/* ---- a rootless VM: passt in a network namespace of its own, behind pasta ---- */

/* The holder of the VM's network namespace, in the child: a user and network namespace of its
 * own (the caller's ids mapped to themselves), ready said, then, once the supervisor has put
 * the firewall and pasta into it (go), passt on the qemu socket's end as descriptor 3. */
static void __attribute__((noreturn)) passt_child(const char *passt, const char *const *argv, int sock, int ready, int go,
						   pid_t parent)
{
	char um[32], gm[32], b;
	snprintf(um, sizeof um, "%u %u 1\n", (unsigned)geteuid(), (unsigned)geteuid());
	snprintf(gm, sizeof gm, "%u %u 1\n", (unsigned)getegid(), (unsigned)getegid());
	if (!helper_child(parent) || unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0 ||
	    write_file("/proc/self/uid_map", um, strlen(um)) < 0 || write_file("/proc/self/setgroups", "deny", 4) < 0 ||
	    write_file("/proc/self/gid_map", gm, strlen(gm)) < 0 || write(ready, "r", 1) != 1)
		_exit(127);
	if (read(go, &b, 1) != 1)
		_exit(127); /* the supervisor gave up */
	if (sock == PASST_FD ? fcntl(sock, F_SETFD, 0) < 0 : dup2(sock, PASST_FD) < 0)
		_exit(127);
	execv(passt, (char *const *)argv);
	_exit(127);
}

/* passt's command line: the rootless cell's address plan on the guest's side, nothing mapped
 * to the namespace's own addresses, no DHCP or NDP (the guest configures itself), no port
 * forwarded; DNS to the gateway goes to the gateway in the namespace, which is pasta's. */
static const char **passt_argv(const struct net_state *n, const char *passt, char a[INET_ADDRSTRLEN],
			       char g[INET_ADDRSTRLEN], char pfx[8])
{
	inet_ntop(AF_INET, &n->addr, a, INET_ADDRSTRLEN);
	inet_ntop(AF_INET, &n->gw, g, INET_ADDRSTRLEN);
	snprintf(pfx, 8, "%d", n->prefix);
	const char *v[] = { passt, "--foreground", "--quiet", "--ipv4-only", "--no-map-gw", "--no-dhcp", "--no-ndp",
			    "--no-dhcpv6", "--no-ra", "--fd", PASST_FD_TEXT, "-a", a, "-n", pfx, "-g", g,
			    "-t", "none", "-u", "none", "--pid", n->passt_pidfile, NULL };
	const char **argv = xcalloc(sizeof v / sizeof v[0], sizeof *argv);
	memcpy(argv, v, sizeof v);
	return argv;
}

int passt_start(struct net_state *n, struct error *err)
{
	if (net_mode_allowed(n->mode, n->npublish, true, true, err) < 0)
		return -EPERM;
	_cleanup_free_ char *passt = host_tool_find("passt");
	if (!passt)
		return error_set(err, ENOENT, "--net nat for a rootless VM needs passt; install the Debian package passt");
	n->passt_pidfile = xasprintf("%s/passt.pid", n->rundir);
	unlink(n->passt_pidfile);
	char a[INET_ADDRSTRLEN], g[INET_ADDRSTRLEN], pfx[8];
	_cleanup_free_ const char **argv = passt_argv(n, passt, a, g, pfx);
	int sv[2] = { -1, -1 }, ready[2] = { -1, -1 }, go[2] = { -1, -1 };
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		error_set(err, errno, "cannot make the VM's network");
		goto fail;
	}
	pid_t parent = getpid(), pid = fork();
	if (pid == 0)
		passt_child(passt, argv, sv[1], ready[1], go[0], parent);
	int e = errno;
	closep(&sv[1]);
	closep(&ready[1]);
	closep(&go[0]);
	n->passt_pid = pid > 0 ? pid : 0; /* pasta_stop() ends it */
	char b;
	if (pid < 0 || read(ready[0], &b, 1) != 1) {
		error_set(err, pid < 0 ? e : 0, "cannot make a user and network namespace for passt (the rootless VM's "
			  "network); 'warren selfcheck' tells whether this host lets you make user namespaces");
		goto fail;
	}
	/* the firewall and pasta before passt sends anything */
	if (pasta_start(n, pid, err) < 0 || write(go[1], "g", 1) != 1 ||
	    wait_ready(&n->passt_pid, n->passt_pidfile, "passt", err) < 0)
		goto fail;
	closep(&ready[0]);
	closep(&go[1]);
	return sv[0];
fail:
	for (int i = 0; i < 2; i++) {
		closep(&sv[i]);
		closep(&ready[i]);
		closep(&go[i]);
	}
	if (!err->msg)
		error_set(err, EIO, "cannot start passt");
	return -EIO;
}

static void stop_helper(pid_t *pid, char **pidfile)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
		*pid = 0;
	}
	if (*pidfile)
		unlink(*pidfile);
	free(*pidfile);
	*pidfile = NULL;
}

void pasta_stop(struct net_state *n)
{
	stop_helper(&n->passt_pid, &n->passt_pidfile);
	stop_helper(&n->pasta_pid, &n->pasta_pidfile);
}
