/* pasta.c - --net nat for rootless runs: pasta (Debian package passt) attached to the cell's
 * network namespace and its owning user namespace, started by the supervisor between the
 * cell's start and its release. pasta is the supervisor's child with a parent-death signal, so
 * it dies with warren (also on kill -9), and it is killed at the end of the run. The cell gets
 * the same address plan as a root run (10.88.0.2 behind gateway 10.88.0.1, DNS forwarded from
 * the gateway to the host's resolver); no port of the host or of the cell is forwarded.
 * pasta has no firewall of its own, so a firewall goes into the cell's own namespace (a helper
 * joins the run's first user namespace, which owns it; the job, in a child user namespace,
 * cannot change it): the host's own addresses, its loopback (127.0.0.0/8, 0.0.0.0/8), warren's
 * subnet (the gateway but its DNS, and root runs' cells), the private and link-local ranges
 * (unless lan or an allow= entry lifts them), multicast, broadcast and IPv6 are refused, as in
 * a root run. Refusals are not counted. */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/internal.h"
#include "util/fs.h"

#define PASTA_READY_MS 5000

/* The path of pasta on $PATH (heap), or NULL. */
char *pasta_find(void)
{
	const char *path = getenv("PATH");
	_cleanup_free_ char *dirs = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/pasta", d);
		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	return NULL;
}

static long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* The rules of the cell's own namespace; the host's IPv4 addresses are read here, outside. */
static char *cell_rules(const struct net_state *n)
{
	char g[INET_ADDRSTRLEN], sn[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &n->gw, g, sizeof g);
	inet_ntop(AF_INET, &n->subnet, sn, sizeof sn);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	fprintf(f, "add table inet warren\n"
		   "add chain inet warren output { type filter hook output priority 0; policy accept; }\n"
		   "add chain inet warren refuse\n"
		   "add rule inet warren refuse meta l4proto tcp reject with tcp reset\n"
		   "add rule inet warren refuse reject with icmpx admin-prohibited\n"
		   "add rule inet warren output oifname \"lo\" accept\n"
		   "add rule inet warren output meta nfproto ipv6 drop\n"
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
	fw_private_rules(f, "output", "refuse", n);
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
	char a[INET_ADDRSTRLEN], g[INET_ADDRSTRLEN], pfx[8], nsarg[32], usarg[32];
	inet_ntop(AF_INET, &n->addr, a, sizeof a);
	inet_ntop(AF_INET, &n->gw, g, sizeof g);
	snprintf(pfx, sizeof pfx, "%d", n->prefix);
	snprintf(nsarg, sizeof nsarg, "/proc/self/fd/%d", netns);
	snprintf(usarg, sizeof usarg, "/proc/self/fd/%d", userns);
	const char *argv[] = { pasta, "--config-net", "--foreground", "--quiet", "--ipv4-only", "--no-map-gw",
			       "--no-dhcp", "--no-ndp", "--no-dhcpv6", "--no-ra", "-I", NET_CELL_IF,
			       "-a", a, "-n", pfx, "-g", g, "--dns-forward", g,
			       /* no port of the host reaches the cell, and none of the cell the host */
			       "-t", "none", "-u", "none", "-T", "none", "-U", "none",
			       "--pid", n->pasta_pidfile, "--userns", usarg, "--netns", nsarg, NULL };
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return error_set(err, errno, "cannot start pasta");
	if (pid == 0) {
		/* dies with the supervisor, also when warren is killed with SIGKILL */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL); /* pasta takes an ignored SIGPIPE for a failure */
		fcntl(netns, F_SETFD, 0);
		fcntl(userns, F_SETFD, 0);
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, STDIN_FILENO);
			dup2(nul, STDOUT_FILENO);
		}
		execv(pasta, (char *const *)argv);
		_exit(127);
	}
	n->pasta_pid = pid;
	/* pasta writes its pid file once the cell's interface, address and route are configured */
	long until = now_ms() + PASTA_READY_MS;
	for (;;) {
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			n->pasta_pid = 0;
			return error_set(err, 0, "pasta could not attach to the cell's network (it exited with %s %d); "
					 "run 'pasta --version' to check it", WIFEXITED(st) ? "status" : "signal",
					 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		}
		struct stat sb;
		if (stat(n->pasta_pidfile, &sb) == 0 && sb.st_size > 0)
			return 0;
		if (now_ms() > until)
			return error_set(err, ETIMEDOUT, "pasta did not configure the cell's network in %d ms", PASTA_READY_MS);
		poll(NULL, 0, 1);
	}
}

void pasta_stop(struct net_state *n)
{
	if (n->pasta_pid > 0) {
		kill(n->pasta_pid, SIGKILL);
		waitpid(n->pasta_pid, NULL, 0);
		n->pasta_pid = 0;
	}
	if (n->pasta_pidfile)
		unlink(n->pasta_pidfile);
	free(n->pasta_pidfile);
	n->pasta_pidfile = NULL;
}
