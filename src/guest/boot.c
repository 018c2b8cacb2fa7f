/* SPDX-License-Identifier: Apache-2.0 */
/* boot.c - the guest init's boot: the kernel modules the initramfs lists, the network
 * (loopback; with VM_CMDLINE_NET the NIC, its route and the cell's resolv.conf), the
 * virtio-serial ports, and the run's orders (<rundir>/vm/VM_SPEC_FILE, shared over 9p). */
#include <arpa/inet.h>
#include <dirent.h>
#include <net/if.h>
#include <net/route.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <time.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell/contract.h"
#include "util/sys.h"

#include "guest.h"

/* ---- modules ---- */

/* The "virtio_mmio.device=..." words of the kernel command line (set when the VM has no
 * ACPI): a module's parameters are the loader's to pass. */
static char *module_params(const char *cmdline, const char *mod)
{
	size_t ml = strlen(mod), n = 0;
	char *out = calloc(1, strlen(cmdline) + 1);
	if (!out)
		return NULL;
	for (const char *p = cmdline; *p;) {
		size_t wl = strcspn(p, " \n");
		if (wl > ml + 1 && !strncmp(p, mod, ml) && p[ml] == '.') {
			memcpy(out + n, p + ml + 1, wl - ml - 1);
			n += wl - ml - 1;
			out[n++] = ' ';
		}
		p += wl;
		p += strspn(p, " \n");
	}
	out[n ? n - 1 : 0] = '\0';
	return out;
}

char *read_small(const char *path, size_t *len_out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, len = 0;
	char *b = malloc(cap + 1);
	ssize_t r;
	while (b && (r = read(fd, b + len, cap - len)) > 0) {
		len += (size_t)r;
		if (len == cap) {
			char *nb = realloc(b, (cap *= 2) + 1);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	close(fd);
	if (b)
		b[len] = '\0';
	if (len_out)
		*len_out = len;
	return b;
}

void load_modules(const char *which)
{
	char *list = read_small(which, NULL);
	char *cmdline = read_small("/proc/cmdline", NULL);
	if (!list || !cmdline)
		die(errno, "cannot read %s or /proc/cmdline", which);
	for (char *save = NULL, *name = strtok_r(list, "\n", &save); name; name = strtok_r(NULL, "\n", &save)) {
		char path[256], mod[64];
		snprintf(path, sizeof path, "%s/%s", VM_MOD_DIR, name);
		snprintf(mod, sizeof mod, "%.*s", (int)strcspn(name, "."), name);
		for (char *c = mod; *c; c++)
			*c = *c == '-' ? '_' : *c;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die(errno, "cannot open the module %s", path);
		char *params = module_params(cmdline, mod);
		if (sys_finit_module(fd, params ? params : "", 0) < 0 && errno != EEXIST)
			die(errno, "cannot load the module %s", name);
		free(params);
		close(fd);
	}
	free(list);
	free(cmdline);
}

/* ---- the network: loopback, and with VM_CMDLINE_NET the NIC and resolv.conf ---- */

/* "warren.net=ADDR/PREFIX,GATEWAY" of the kernel command line, when there is one. */
void net_orders(struct guest_net *n)
{
	char *cmdline = read_small("/proc/cmdline", NULL);
	char *p = cmdline ? strstr(cmdline, " " VM_CMDLINE_NET) : NULL;
	char a[INET_ADDRSTRLEN];
	int prefix;
	*n = (struct guest_net){ 0 };
	if (p) {
		if (sscanf(p + 1 + strlen(VM_CMDLINE_NET), "%15[0-9.]/%d,%15[0-9.]", a, &prefix, n->gw_text) != 3 ||
		    prefix < 1 || prefix > 30 || inet_pton(AF_INET, a, &n->addr) != 1 || inet_pton(AF_INET, n->gw_text, &n->gw) != 1)
			die(0, "the kernel command line's %s is not ADDR/PREFIX,GATEWAY", VM_CMDLINE_NET);
		n->mask.s_addr = htonl(~0u << (32 - prefix));
		n->on = true;
	}
	free(cmdline);
}

static void if_set(int sk, unsigned long req, const char *ifname, struct in_addr a)
{
	struct ifreq r = { 0 };
	snprintf(r.ifr_name, sizeof r.ifr_name, "%s", ifname);
	struct sockaddr_in *sin = (struct sockaddr_in *)&r.ifr_addr;
	sin->sin_family = AF_INET;
	sin->sin_addr = a;
	if (ioctl(sk, req, &r) < 0)
		die(errno, "cannot configure %s", ifname);
}

/* ifname up; the NIC appears when its driver has probed the device: wait up to 5 s */
static void if_up(int sk, const char *ifname)
{
	struct ifreq r = { 0 };
	snprintf(r.ifr_name, sizeof r.ifr_name, "%s", ifname);
	for (int i = 0; ioctl(sk, SIOCGIFFLAGS, &r) < 0; i++) {
		if (errno != ENODEV || i == 500)
			die(errno, "no network interface %s in the VM", ifname);
		usleep(10000);
	}
	r.ifr_flags |= IFF_UP;
	if (ioctl(sk, SIOCSIFFLAGS, &r) < 0)
		die(errno, "cannot bring %s up", ifname);
}

void net_up(const struct guest_net *n)
{
	int sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sk < 0)
		die(errno, "cannot open a socket to configure the network");
	if_up(sk, "lo");
	/* the guest's network is the cell's alone: its ports below 1024 are the job's, as in a
	 * container's namespace (net/ports.c) */
	int ports = open("/proc/sys/net/ipv4/ip_unprivileged_port_start", O_WRONLY | O_CLOEXEC);
	if (ports < 0 || write(ports, "0", 1) != 1)
		die(errno, "cannot open the ports below 1024 to the job (net.ipv4.ip_unprivileged_port_start)");
	close(ports);
	if (n->on) {
		int v6 = open("/proc/sys/net/ipv6/conf/all/disable_ipv6", O_WRONLY | O_CLOEXEC);
		if (v6 >= 0 && write(v6, "1", 1) < 0) {
			/* no IPv6 in the kernel: nothing to turn off */
		}
		if (v6 >= 0)
			close(v6);
		load_modules(VM_MOD_NET_LIST);
		if_up(sk, VM_NET_IF);
		if_set(sk, SIOCSIFADDR, VM_NET_IF, n->addr);
		if_set(sk, SIOCSIFNETMASK, VM_NET_IF, n->mask);
		struct rtentry rt = { .rt_flags = RTF_UP | RTF_GATEWAY, .rt_dev = (char *)VM_NET_IF };
		((struct sockaddr_in *)&rt.rt_dst)->sin_family = AF_INET;
		((struct sockaddr_in *)&rt.rt_genmask)->sin_family = AF_INET;
		((struct sockaddr_in *)&rt.rt_gateway)->sin_family = AF_INET;
		((struct sockaddr_in *)&rt.rt_gateway)->sin_addr = n->gw;
		if (ioctl(sk, SIOCADDRT, &rt) < 0)
			die(errno, "cannot add the default route via %s", n->gw_text);
	}
	close(sk);
}

/* In the cell's root: CELL_RESOLV_CONF names the gateway (a copy in the guest's /run, bound
 * read-only over the host's; a dangling symlink there gets its target made in /run). */
void net_resolv(const struct guest_net *n)
{
	if (!n->on)
		return;
	FILE *f = fopen(VM_RESOLV_COPY, "we");
	if (!f || fprintf(f, CELL_RESOLV_FMT, n->gw_text) < 0 || fclose(f) != 0)
		die(errno, "cannot write %s", VM_RESOLV_COPY);
	if (mount(VM_RESOLV_COPY, CELL_RESOLV_CONF, NULL, MS_BIND, NULL) < 0 && errno == ENOENT) {
		int fd = open(CELL_RESOLV_CONF, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
		mount_or_die(VM_RESOLV_COPY, CELL_RESOLV_CONF, NULL, MS_BIND, NULL);
	}
	mount_or_die(NULL, CELL_RESOLV_CONF, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
}

/* ---- virtio-serial ports ---- */

/* The /dev node of the port named name (its name appears once the device told the driver),
 * waiting up to 10 s, looking each millisecond (the boot waits on it). */
int open_port(const char *name, int flags)
{
	for (int tries = 0; tries < 10000; tries++) {
		DIR *d = opendir("/sys/class/virtio-ports");
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[300];
			snprintf(path, sizeof path, "/sys/class/virtio-ports/%s/name", e->d_name);
			char *n = read_small(path, NULL);
			bool match = n && !strncmp(n, name, strlen(name)) && (n[strlen(name)] == '\n' || !n[strlen(name)]);
			free(n);
			if (!match)
				continue;
			snprintf(path, sizeof path, "/dev/%s", e->d_name);
			closedir(d);
			int fd = open(path, flags | O_CLOEXEC);
			if (fd < 0)
				die(errno, "cannot open the port %s (%s)", name, path);
			return fd;
		}
		if (d)
			closedir(d);
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	die(ENOENT, "no virtio-serial port %s", name);
}

/* ---- the orders ---- */

static void push(char ***v, size_t *n, char *s)
{
	char **nv = realloc(*v, (*n + 2) * sizeof **v);
	if (!nv)
		die(ENOMEM, "cannot read the orders");
	nv[(*n)++] = s;
	nv[*n] = NULL;
	*v = nv;
}

void read_orders(struct orders *o)
{
	size_t len;
	char *b = read_small(VM_RUN_MNT "/" VM_SPEC_FILE, &len);
	if (!b)
		die(errno, "cannot read the orders %s", VM_RUN_MNT "/" VM_SPEC_FILE);
	*o = (struct orders){ .uid = CELL_DEFAULT_UID, .gid = CELL_DEFAULT_GID, .cwd = "/", .umask = 022 };
	for (char *p = b, *next; p < b + len; p = next) {
		next = p + strlen(p) + 1;
		char *v = strchr(p, '=');
		if (!v)
			die(EINVAL, "bad record in the orders: %s", p);
		*v++ = '\0';
		if (!strcmp(p, VM_KEY_ARG)) push(&o->argv, &o->nargv, v);
		else if (!strcmp(p, VM_KEY_ENV)) push(&o->env, &o->nenv, v);
		else if (!strcmp(p, VM_KEY_MASK)) push(&o->mask, &o->nmask, v);
		else if (!strcmp(p, VM_KEY_BIND)) push(&o->binds, &o->nbinds, v);
		else if (!strcmp(p, VM_KEY_LANDLOCK)) push(&o->ll_rules, &o->nll_rules, v);
		else if (!strcmp(p, VM_KEY_KMASK)) push(&o->kmasks, &o->nkmasks, v);
		else if (!strcmp(p, VM_KEY_PROTECT)) push(&o->protect, &o->nprotect, v);
		else if (!strcmp(p, VM_KEY_LANDLOCK_ABI)) push(&o->ll_abis, &o->nll_abis, v);
		else if (!strcmp(p, VM_KEY_LANDLOCK_FILE)) o->ll_file = strtoull(v, NULL, 16);
		else if (!strcmp(p, VM_KEY_LANDLOCK_REQUIRE)) o->ll_require = !strcmp(v, "1");
		else if (!strcmp(p, VM_KEY_WORKDIR)) o->workdir = o->cwd = v;
		else if (!strcmp(p, VM_KEY_IMAGE)) o->image = v;
		else if (!strcmp(p, VM_KEY_HOSTNAME)) o->hostname = v;
		else if (!strcmp(p, VM_KEY_WORK_RO)) o->work_ro = !strcmp(v, "1");
		else if (!strcmp(p, VM_KEY_NO_SYS)) o->no_sys = !strcmp(v, "1");
		else if (!strcmp(p, VM_KEY_NO_REFUSED)) o->no_refused = !strcmp(v, "1");
		else if (!strcmp(p, VM_KEY_CWD) && !o->workdir) o->cwd = v;
		else if (!strcmp(p, VM_KEY_HOME)) o->home = v;
		else if (!strcmp(p, VM_KEY_WORKTREE)) o->worktree = v;
		else if (!strcmp(p, VM_KEY_UID)) o->uid = (uid_t)strtoul(v, NULL, 10);
		else if (!strcmp(p, VM_KEY_GID)) o->gid = (gid_t)strtoul(v, NULL, 10);
		else if (!strcmp(p, VM_KEY_SCRATCH)) o->scratch = strtoull(v, NULL, 10);
		else if (!strcmp(p, VM_KEY_PIDS)) o->pids = strtoull(v, NULL, 10);
		else if (!strcmp(p, VM_KEY_CORE)) o->core = !strcmp(v, "1");
		else if (!strcmp(p, VM_KEY_UMASK)) o->umask = (mode_t)(strtoul(v, NULL, 8) & 0777);
		else if (!strcmp(p, VM_KEY_EXECUTOR)) o->executor = !strcmp(v, "1");
		else if (!strcmp(p, VM_KEY_TTY) && sscanf(v, "%d %hu %hu", &o->tty, &o->rows, &o->cols) < 1) o->tty = 0;
	}
	if (!o->nargv)
		die(EINVAL, "the orders name no command");
}
