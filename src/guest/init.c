/* SPDX-License-Identifier: Apache-2.0 */
/* init.c - pid 1 of the vm driver's guest (a static program in the initramfs warren builds;
 * see cell/vm/vm.c). It loads the modules listed in the initramfs, mounts the run's orders (a 9p
 * share of <rundir>/vm), builds the cell's root from the host's / (9p, read-only, as the
 * container driver's host-root cells see it) or an image (the lower layer of an overlay in
 * the VM's memory) with its own /proc, /sys, /dev, /tmp and /var/tmp (tmpfs 01777), a home,
 * the run user's passwd, the worktree and the binds (9p shares), masks the kernel's files the
 * host names and makes the Landlock ruleset from the host's rules, runs the job as the run
 * user with TMPDIR=/tmp last, forwards the signals the host sends on the control port,
 * records the writes its kernel refused (the audit of write-side calls), the job's peak of
 * processes and the scratch's use (a full scratch at once), reports them and how the job ended
 * as JSON lines on the report port and powers the VM off. Every
 * mode, path and name of the contract comes from cell/contract.h.
 *
 * A job's steps and services: the job is warren's executor (cell/executor.c), whose socket a
 * relay of this init carries over a port (cell/vm/vmexec.c). On a terminal, the job's is the
 * guest's second console (VM_TTY_DEV), sized from the control port.
 *
 * It uses the C library (it is linked statically) and of warren's code only the executor, its
 * relay and util/error.c. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/statfs.h>
#include <sys/timerfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <net/route.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <inttypes.h>
#include <stddef.h>
#include <linux/seccomp.h>

#include "cell/contract.h"
#include "cell/executor.h"
#include "cell/vmexec.h"
#include "util/sys.h"

static int report_fd = -1;

/* ---- the report and dying ---- */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A line on the report port (or the console when the port is not there yet). */
static void write_line(const char *line)
{
	int fd = report_fd >= 0 ? report_fd : STDERR_FILENO;
	for (size_t off = 0, len = strlen(line); off < len;) {
		ssize_t w = write(fd, line + off, len - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
}

/* One JSON line on the report port: how the job ended, or why it could not start. */
static void report(const char *error, int errnum, int status)
{
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	if (!f)
		return;
	if (error) {
		fputs("{\"" VM_REPORT_ERROR "\":", f);
		json_str(f, error);
		fprintf(f, ",\"" VM_REPORT_ERRNO "\":%d,\"" VM_REPORT_CODE "\":%d}\n", errnum, status);
	} else {
		fprintf(f, "{\"" VM_REPORT_STATUS "\":%d}\n", status);
	}
	fclose(f);
	write_line(line);
	free(line);
}

static void power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

/* Report the failure ("what: strerror") with the exit code the run gets (125: the cell could
 * not be made) and power off; in the job's process, just end it. */
__attribute__((noreturn, format(printf, 3, 4))) static void die_code(int code, int errnum, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	char *full = NULL;
	if (msg && errnum && asprintf(&full, "%s: %s", msg, strerror(errnum)) < 0)
		full = NULL;
	const char *text = full ? full : msg ? msg : "the guest init failed";
	report(text, errnum, code);
	if (getpid() != 1)
		_exit(code); /* the job's process: its stderr is the job's, warren says it */
	fprintf(stderr, "warren-guest-init: %s\n", text); /* the console */
	power_off();
	__builtin_unreachable();
}

#define die(errnum, ...) die_code(125, errnum, __VA_ARGS__)

static void mount_or_die(const char *src, const char *dst, const char *type, unsigned long flags, const char *data)
{
	if (mount(src, dst, type, flags, data) < 0)
		die(errno, "cannot mount %s (%s) on %s", src ? src : "again", type ? type : "bind", dst);
}

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

static char *read_small(const char *path, size_t *len_out)
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

static void load_modules(const char *which)
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

struct guest_net {
	bool on;
	struct in_addr addr, mask, gw;
	char gw_text[INET_ADDRSTRLEN];
};

/* "warren.net=ADDR/PREFIX,GATEWAY" of the kernel command line, when there is one. */
static void net_orders(struct guest_net *n)
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

static void net_up(const struct guest_net *n)
{
	int sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sk < 0)
		die(errno, "cannot open a socket to configure the network");
	if_up(sk, "lo");
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
static void net_resolv(const struct guest_net *n)
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
static int open_port(const char *name, int flags)
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

struct orders {
	char **argv, **env, **mask, **binds, **ll_rules, **ll_abis, **kmasks, **protect;
	size_t nargv, nenv, nmask, nbinds, nll_rules, nll_abis, nkmasks, nprotect;
	unsigned long long ll_file;         /* the rights a Landlock rule on a file may carry */
	bool ll_require;
	const char *cwd, *home, *worktree, *workdir, *image, *hostname;
	uid_t uid;
	gid_t gid;
	unsigned long long scratch, pids;
	bool core, work_ro, no_sys, executor, no_refused;
	mode_t umask;                       /* the job's (the caller's) */
	int tty;                            /* 1: stdin and stdout on VM_TTY_DEV, 2: stderr too */
	unsigned short rows, cols;          /* its size at the start */
};

static void push(char ***v, size_t *n, char *s)
{
	char **nv = realloc(*v, (*n + 2) * sizeof **v);
	if (!nv)
		die(ENOMEM, "cannot read the orders");
	nv[(*n)++] = s;
	nv[*n] = NULL;
	*v = nv;
}

static void read_orders(struct orders *o)
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

/* ---- the root ---- */

#define NINEP_OPTS "trans=virtio,version=9p2000.L,msize=262144"

static char *under(const char *root, const char *path)
{
	char *s;
	if (asprintf(&s, "%s%s", root, path) < 0)
		die(ENOMEM, "out of memory");
	return s;
}

/* The scratch tmpfs mounts (O_PATH), for their use and the scratch-full report. */
#define MAX_SCRATCH 8
static int scratch_fds[MAX_SCRATCH];
static size_t n_scratch;

/* A scratch tmpfs at path: mode, owner, and the scratch limit as its size. */
static void scratch_tmpfs(const char *path, mode_t mode, uid_t uid, gid_t gid, unsigned long long size)
{
	char data[96];
	if (size)
		snprintf(data, sizeof data, "mode=%o,uid=%u,gid=%u,size=%llu", mode, uid, gid, size);
	else
		snprintf(data, sizeof data, "mode=%o,uid=%u,gid=%u", mode, uid, gid);
	mount_or_die("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, data);
	int fd = n_scratch < MAX_SCRATCH ? open(path, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	if (fd >= 0)
		scratch_fds[n_scratch++] = fd;
}

/* The mount point path (absolute in the guest) made where missing, with the directories on its
 * way (in an image's overlay: in the VM's memory); an empty file when file. */
static void make_point(const char *path, bool file)
{
	char *p = strdup(path);
	if (!p)
		die(ENOMEM, "out of memory");
	for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST && errno != EROFS)
			die(errno, "cannot make the mount point %s", p);
		*slash = '/';
	}
	int fd = file ? open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : mkdir(p, 0755);
	if (fd < 0 && errno != EEXIST && errno != EROFS)
		die(errno, "cannot make the mount point %s", p);
	if (file && fd >= 0)
		close(fd);
	free(p);
}

/* Mount on path (in the cell) under the new root, its mount point made where missing. */
static void mount_in(const char *path, const char *src, const char *type, unsigned long flags, const char *data)
{
	char *p = under(VM_NEWROOT, path);
	make_point(p, false);
	mount_or_die(src, p, type, flags, data);
	free(p);
}

/* A bind's record: "<tag> <ro|rw>[-file] <destination>" split in place. */
static void bind_fields(char *b, char **tag, bool *ro, bool *file, char **dst)
{
	char *m = strchr(b, ' '), *d = m ? strchr(m + 1, ' ') : NULL;
	if (!d || d[1] != '/')
		die(EINVAL, "bad bind in the orders: %s", b);
	*m = *d = '\0';
	*tag = b;
	*file = strlen(m + 1) > 2 && !strcmp(m + 3, VM_BIND_FILE_SUFFIX);
	*ro = !strncmp(m + 1, "ro", 2) && (!m[3] || *file);
	*dst = d + 1;
}

/* A bind of a file: its share (a directory of qemu's view holding it alone, as
 * VM_BIND_FILE_NAME) mounted aside, the file bound at dst in the cell, the share let go. */
static void mount_file_bind(const char *tag, const char *dst, bool ro)
{
	char *share = under(VM_FILE_BINDS_MNT "/", tag), *src = under(share, "/" VM_BIND_FILE_NAME), *p = under(VM_NEWROOT, dst);
	mkdir(VM_FILE_BINDS_MNT, 0700);
	if (mkdir(share, 0700) < 0)
		die(errno, "cannot make %s", share);
	mount_or_die(tag, share, "9p", MS_NOSUID | MS_NODEV | (ro ? MS_RDONLY : 0), NINEP_OPTS ",cache=mmap");
	make_point(p, true);
	mount_or_die(src, p, NULL, MS_BIND, NULL);
	if (ro)
		mount_or_die(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
	umount2(share, MNT_DETACH);
	free(share);
	free(src);
	free(p);
}

/* Does some bind's mount point not exist in the root share mounted on VM_LOWER_MNT? */
static bool points_missing(const struct orders *o)
{
	for (size_t i = 0; i < o->nbinds; i++) {
		/* "<tag> <ro|rw> <destination>": the destination may hold spaces */
		const char *m = strchr(o->binds[i], ' '), *d = m ? strchr(m + 1, ' ') : NULL;
		if (!d)
			die(EINVAL, "bad bind in the orders: %s", o->binds[i]);
		char *p = under(VM_LOWER_MNT, d + 1);
		struct stat st;
		bool missing = lstat(p, &st) < 0;
		free(p);
		if (missing)
			return true;
	}
	return false;
}

/* The root: the root share (the host's / or an image) read-only, or for an image the lower
 * layer of an overlay whose upper layer is a tmpfs in the VM's memory (within the scratch
 * limit). The host's / goes through such an overlay too when a bind's mount point is missing
 * in it (the point is made in memory, never on the host); true then: the root is to be made
 * read-only once everything is mounted on it. */
static bool mount_root(const struct orders *o)
{
	mkdir(VM_LOWER_MNT, 0755);
	mount_or_die(VM_TAG_ROOT, VM_LOWER_MNT, "9p", MS_RDONLY | MS_NOSUID | MS_NODEV, NINEP_OPTS ",cache=loose");
	bool points = !o->image && points_missing(o);
	if (!o->image && !points) {
		if (mount(VM_LOWER_MNT, VM_NEWROOT, NULL, MS_MOVE, NULL) < 0)
			die(errno, "cannot move the root share to %s", VM_NEWROOT);
		return false;
	}
	load_modules(VM_MOD_OVERLAY_LIST);
	mkdir(VM_UPPER_MNT, 0755);
	scratch_tmpfs(VM_UPPER_MNT, 0755, 0, 0, o->scratch);
	if (mkdir(VM_UPPER_MNT "/upper", 0755) < 0 || mkdir(VM_UPPER_MNT "/work", 0755) < 0)
		die(errno, "cannot make the overlay's upper layer in %s", VM_UPPER_MNT);
	if (mount("overlay", VM_NEWROOT, "overlay", MS_NOSUID | MS_NODEV,
		  "lowerdir=" VM_LOWER_MNT ",upperdir=" VM_UPPER_MNT "/upper,workdir=" VM_UPPER_MNT "/work") < 0)
		die(errno, "cannot mount an overlay of %s on %s", o->image ? o->image : "the host's /", VM_NEWROOT);
	return points;
}

/* The run user's passwd and group (in the orders) copied to the cell's /run and bound
 * read-only over the root's, as the container driver does. */
static void mount_users_db(void)
{
	static const char *const dbs[] = { VM_PASSWD_FILE, VM_GROUP_FILE };
	mount_in("/run/.warren", "tmpfs", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=1m");
	for (size_t i = 0; i < 2; i++) {
		char src[64], dst[64], etc[64];
		size_t len;
		snprintf(src, sizeof src, VM_RUN_MNT "/%s", dbs[i]);
		snprintf(dst, sizeof dst, VM_NEWROOT "/run/.warren/%s", dbs[i]);
		snprintf(etc, sizeof etc, VM_NEWROOT "/etc/%s", dbs[i]);
		char *txt = read_small(src, &len);
		int fd = txt ? open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
		if (fd < 0 || write(fd, txt, len) != (ssize_t)len)
			die(errno, "cannot write %s", dst);
		close(fd);
		free(txt);
		make_point(etc, true);
		mount_or_die(dst, etc, NULL, MS_BIND, NULL);
		mount_or_die(NULL, etc, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
	}
}

/* /proc, /sys, /dev (with /dev/shm scratch and /dev/pts), /run: the guest's own. */
static void mount_kernel_fs(const struct orders *o)
{
	mount_in("/proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	/* --no-sys: an empty directory (the root share's own /sys would be the host's) */
	if (o->no_sys)
		mount_in("/sys", "tmpfs", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k");
	else
		mount_in("/sys", "sysfs", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_in("/dev", "/dev", NULL, MS_BIND | MS_REC, NULL);
	/* /dev/shm is scratch like /tmp (POSIX shared memory, semaphores); /dev/pts for terminals */
	mkdir("/dev/shm", CELL_TMP_MODE);
	mkdir("/dev/pts", 0755);
	char *p = under(VM_NEWROOT, "/dev/shm");
	scratch_tmpfs(p, CELL_TMP_MODE, 0, 0, o->scratch);
	free(p);
	mount_in("/dev/pts", "devpts", "devpts", MS_NOSUID | MS_NOEXEC, "ptmxmode=0666,mode=0620");
	p = under(VM_NEWROOT, "/run");
	make_point(p, false);
	mount_or_die("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"); /* not scratch */
	free(p);
}

/* The scratch: /tmp and /var/tmp (01777), /home with the run user's home. */
static void mount_scratch(const struct orders *o)
{
	const char *const parts[][2] = { { CELL_TMP_PATH, "t" }, { CELL_VARTMP_PATH, "t" }, { CELL_HOME_PARENT, "h" } };
	for (size_t i = 0; i < 3; i++) {
		char *p = under(VM_NEWROOT, parts[i][0]);
		make_point(p, false);
		scratch_tmpfs(p, parts[i][1][0] == 't' ? CELL_TMP_MODE : 0755, 0, 0, o->scratch);
		free(p);
	}
	if (!o->home)
		return;
	char *p = under(VM_NEWROOT, o->home);
	/* under the fresh /home, or where the root has one (/root): a tmpfs of its own */
	if (mkdir(p, CELL_HOME_MODE) == 0) {
		if (chown(p, o->uid, o->gid) < 0 || chmod(p, CELL_HOME_MODE) < 0)
			die(errno, "cannot make the home %s", o->home);
	} else if (errno == EEXIST) {
		scratch_tmpfs(p, CELL_HOME_MODE, o->uid, o->gid, o->scratch);
	} else {
		die(errno, "cannot make the home %s", o->home);
	}
	free(p);
}

/* The worktree, the state directory's mask, the binds (--bind, --ro-bind, --externals) in order. */
static void mount_shares(const struct orders *o)
{
	if (o->worktree)
		mount_in(o->worktree, VM_TAG_WORK, "9p", MS_NOSUID | MS_NODEV | (o->work_ro ? MS_RDONLY : 0), NINEP_OPTS ",cache=mmap");
	for (size_t i = 0; i < o->nmask; i++) {
		char *p = under(VM_NEWROOT, o->mask[i]);
		if (mount("tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k") < 0 && errno != ENOENT)
			die(errno, "cannot hide %s", o->mask[i]);
		free(p);
	}
	for (size_t i = 0; i < o->nbinds; i++) {
		char *tag, *dst;
		bool ro, file;
		bind_fields(o->binds[i], &tag, &ro, &file, &dst);
		if (file)
			mount_file_bind(tag, dst, ro);
		else
			mount_in(dst, tag, "9p", MS_NOSUID | MS_NODEV | (ro ? MS_RDONLY : 0), NINEP_OPTS ",cache=mmap");
	}
}

static void build_root(const struct orders *o)
{
	bool make_ro = mount_root(o);
	mount_kernel_fs(o);
	mount_scratch(o);
	mount_users_db();
	mount_shares(o);
	/* a host root that went through an overlay for the binds' mount points: read-only again */
	if (make_ro && mount(NULL, VM_NEWROOT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		die(errno, "cannot make the cell's root read-only");
}

/* Enter the new root: the initramfs cannot be pivoted away, so move over it (switch_root). */
static void enter_root(void)
{
	if (chdir(VM_NEWROOT) < 0 || mount(VM_NEWROOT, "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 || chdir("/") < 0)
		die(errno, "cannot enter the cell's root");
}

/* ---- the job's cgroup: its process limit ---- */

static int cg_procs = -1, cg_events = -1, cg_current = -1, cg_peak = -1;
static unsigned long long pids_hits;

static void write_cg(const char *file, const char *val)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		die(errno, "cannot write %s", file);
	close(fd);
}

/* A cgroup "job" in the guest's cgroup2 (its pids.peak is the record's), with pids.max when
 * there is a process limit. */
static void make_job_cgroup(const struct orders *o)
{
	char max[32];
	snprintf(max, sizeof max, o->pids ? "%llu" : "max", o->pids);
	mkdir(VM_CGROUP_MNT, 0755);
	mount_or_die("cgroup2", VM_CGROUP_MNT, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	write_cg(VM_CGROUP_MNT "/cgroup.subtree_control", "+pids");
	if (mkdir(VM_CGROUP_MNT "/job", 0755) < 0)
		die(errno, "cannot make the job's cgroup");
	write_cg(VM_CGROUP_MNT "/job/pids.max", max);
	cg_procs = open(VM_CGROUP_MNT "/job/cgroup.procs", O_WRONLY | O_CLOEXEC);
	cg_events = open(VM_CGROUP_MNT "/job/pids.events", O_RDONLY | O_CLOEXEC);
	/* the root is entered later: the files are read by their descriptors (no pids.peak in 6.1) */
	cg_current = open(VM_CGROUP_MNT "/job/pids.current", O_RDONLY | O_CLOEXEC);
	cg_peak = open(VM_CGROUP_MNT "/job/pids.peak", O_RDONLY | O_CLOEXEC);
	if (cg_procs < 0 || cg_events < 0)
		die(errno, "cannot open the job's cgroup");
}

/* Tell the host when the process limit refused more forks ({"pids_max": N}). */
static void report_pids(void)
{
	char b[128];
	ssize_t n = cg_events >= 0 ? pread(cg_events, b, sizeof b - 1, 0) : -1;
	if (n <= 0)
		return;
	b[n] = '\0';
	char *m = strstr(b, "max ");
	unsigned long long hits = m ? strtoull(m + 4, NULL, 10) : 0;
	if (hits <= pids_hits)
		return;
	pids_hits = hits;
	char line[64];
	snprintf(line, sizeof line, "{\"" VM_REPORT_PIDS_MAX "\":%llu}\n", hits);
	write_line(line);
}

/* The most processes the job's cgroup was seen with (its pids.current, looked at whenever the
 * init wakes up and ten times a second), for a kernel without pids.peak (6.1). */
static unsigned long long pids_seen;

/* The number in the cgroup file open as fd, or 0. */
static unsigned long long cg_number(int fd)
{
	char b[32];
	ssize_t n = fd >= 0 ? pread(fd, b, sizeof b - 1, 0) : -1;
	b[n > 0 ? n : 0] = '\0';
	return strtoull(b, NULL, 10);
}

static void sample_pids(void)
{
	unsigned long long n = cg_number(cg_current);
	pids_seen = n > pids_seen ? n : pids_seen;
}

/* Tell the host the most processes the job had at once ({"pids_peak": N}: the job's cgroup's
 * pids.peak, or what the init saw). */
static void report_pids_peak(void)
{
	char line[64];
	snprintf(line, sizeof line, "{\"" VM_REPORT_PIDS_PEAK "\":%llu}\n", cg_peak >= 0 ? cg_number(cg_peak) : pids_seen);
	write_line(line);
}

/* The scratch's use: bytes used on all its tmpfs mounts, the least free on one of them; false
 * without any. */
static bool scratch_use(unsigned long long *used, unsigned long long *avail)
{
	*used = 0;
	*avail = ~0ull;
	for (size_t i = 0; i < n_scratch; i++) {
		struct statfs fs;
		if (fstatfs(scratch_fds[i], &fs) < 0)
			continue;
		*used += (unsigned long long)(fs.f_blocks - fs.f_bfree) * fs.f_bsize;
		unsigned long long a = (unsigned long long)fs.f_bfree * fs.f_bsize;
		*avail = a < *avail ? a : *avail;
	}
	return n_scratch > 0;
}

/* Tell the host the scratch's use ({"scratch": [used, free]}), with "full": true when one of
 * its mounts has less than VM_SCRATCH_FULL bytes free; true then. */
static bool report_scratch(bool only_full)
{
	unsigned long long used, avail;
	if (!scratch_use(&used, &avail))
		return false;
	bool full = avail < VM_SCRATCH_FULL;
	if (only_full && !full)
		return false;
	char line[128];
	snprintf(line, sizeof line, "{\"" VM_REPORT_SCRATCH "\":[%llu,%llu]%s}\n", used, avail,
		 full ? ",\"" VM_REPORT_SCRATCH_FULL "\":true" : "");
	write_line(line);
	return full;
}

/* A timer that looks at the job's processes and, with a scratch limit, the scratch, ten
 * times a second (-1: none). */
static int watch_timer(void)
{
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	struct itimerspec it = { .it_value = { 0, 100000000 }, .it_interval = { 0, 100000000 } };
	if (tfd >= 0)
		timerfd_settime(tfd, 0, &it, NULL);
	return tfd;
}

/* Tell the host how many processes the guest's OOM killer killed ({"oom_kills": N}, when
 * any): the VM's RAM is the run's memory limit. */
static void report_oom_kills(void)
{
	char *vm = read_small("/proc/vmstat", NULL);
	char *k = vm ? strstr(vm, "\noom_kill ") : NULL;
	unsigned long long kills = k ? strtoull(k + 10, NULL, 10) : 0;
	free(vm);
	if (!kills)
		return;
	char line[64];
	snprintf(line, sizeof line, "{\"" VM_REPORT_OOM_KILLS "\":%llu}\n", kills);
	write_line(line);
}

/* The kernel's files masked as in a container cell (the host's list, policy/mask.c): 'h' an
 * empty read-only directory or /dev/null, 'r' a /dev/null that refuses writes (read-only,
 * nodev: its open fails), 'o' read-only. In the cell's root; what is not there is skipped. */
static void mask_kernel_files(const struct orders *o)
{
	for (size_t i = 0; i < o->nkmasks; i++) {
		char kind = o->kmasks[i][0], *path = o->kmasks[i] + 2;
		struct stat st;
		if (strlen(o->kmasks[i]) < 3 || lstat(path, &st) < 0)
			continue;
		const unsigned long ro = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
		if (kind == 'h' && S_ISDIR(st.st_mode))
			mount_or_die("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k");
		else if (kind == 'h' || kind == 'r')
			mount_or_die("/dev/null", path, NULL, MS_BIND, NULL);
		else
			mount_or_die(path, path, NULL, MS_BIND | MS_REC, NULL);
		if (kind != 'h')
			mount_or_die(NULL, path, NULL, ro, NULL);
	}
}

/* The worktree's protected paths as the host resolved them (policy/mask.c): each directory on
 * the way a mount of its own ('p': it cannot be renamed away), then each protected path
 * read-only ('l'). */
static void protect_worktree(const struct orders *o)
{
	for (size_t i = 0; i < o->nprotect; i++) {
		char kind = o->protect[i][0], *path = o->protect[i] + 2;
		if (strlen(o->protect[i]) < 3 || access(path, F_OK) < 0)
			continue;
		mount_or_die(path, path, NULL, MS_BIND, NULL);
		if (kind == 'l')
			mount_or_die(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
	}
}

/* ---- Landlock: the host's rules (policy/landlock.c), the ruleset made here ---- */

struct ll_attr {
	uint64_t fs, net, scoped;
};

/* The ruleset of the job from the orders' rules, with what the host said this kernel's ABI
 * handles; -1 when the kernel has no Landlock (refused with landlock-require). Paths are in
 * the cell's root, which the init has entered. */
static int make_landlock(const struct orders *o)
{
	long abi = sys_landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1) {
		if (o->ll_require)
			die(0, "--require-landlock: the guest's kernel has no Landlock");
		return -1;
	}
	struct ll_attr a = { 0 };
	int best = 0;
	for (size_t i = 0; i < o->nll_abis; i++) {
		int n;
		struct ll_attr x;
		if (sscanf(o->ll_abis[i], "%d %" SCNx64 " %" SCNx64 " %" SCNx64, &n, &x.fs, &x.net, &x.scoped) == 4 && n <= abi && n > best)
			best = n, a = x;
	}
	if (!best)
		return -1;
	size_t size = best >= 6 ? sizeof a : best >= 4 ? offsetof(struct ll_attr, scoped) : offsetof(struct ll_attr, net);
	int rs = sys_landlock_create_ruleset(&a, size, 0);
	if (rs < 0)
		die(errno, "cannot create a Landlock ruleset (ABI %d)", best);
	for (size_t i = 0; i < o->nll_rules; i++) {
		char *path = NULL;
		unsigned long long access = strtoull(o->ll_rules[i], &path, 16);
		path = path && *path == ' ' ? path + 1 : NULL;
		int fd = path ? open(path, O_PATH | O_CLOEXEC) : -1;
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0 || !path || (errno != ENOENT && errno != ENOTDIR))
				die(errno, "Landlock: cannot open %s", path ? path : o->ll_rules[i]);
			continue; /* not in this root: no rule */
		}
		struct landlock_path_beneath_attr pb = { .allowed_access = access & a.fs, .parent_fd = fd };
		if (!S_ISDIR(st.st_mode))
			pb.allowed_access &= o->ll_file;
		if (pb.allowed_access && sys_landlock_add_rule(rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
			die(errno, "Landlock: cannot add the rule for %s", path);
		close(fd);
	}
	return rs;
}

/* ---- the record of refused writes: the kernel's audit of write-side calls refused ---- */

/* The guest's kernel is the job's alone, so its audit tells what the container's write watch
 * judges (supervise/refused.c): the init is the audit daemon, with rules for the write-side
 * path calls (opens only with a write flag) that fail with EROFS (a read-only mount: the
 * host's /, an image, --work-ro, a protected path) or EACCES (Landlock; a refusal by the
 * file's mode inside the places the job may write is not the cell's and is left out). */
#define REFUSED_MAX 100 /* distinct paths kept, as the host's REFUSED_MAX_PATHS */

struct refused_w {
	char *path;
	unsigned long long count;
	bool prot;
};
static struct refused_w refused[REFUSED_MAX];
static size_t n_refused;
static unsigned long long refused_total;
static int audit_fd = -1;

static const int audit_calls[] = {
	__NR_creat, __NR_mkdir, __NR_mkdirat, __NR_mknod, __NR_mknodat, __NR_rmdir, __NR_unlink, __NR_unlinkat,
	__NR_rename, __NR_renameat, __NR_renameat2, __NR_link, __NR_linkat, __NR_symlink, __NR_symlinkat,
	__NR_truncate, __NR_chmod, __NR_fchmodat, __NR_chown, __NR_lchown, __NR_fchownat, __NR_utime, __NR_utimes,
	__NR_utimensat, __NR_futimesat, __NR_setxattr, __NR_lsetxattr, __NR_removexattr, __NR_lremovexattr,
};

/* One audit rule: the calls (nr < 0: the list above), the exit value, and for an open the
 * argument that holds its flags (-1: none). */
static int audit_rule(int nr, int err, int flags_arg)
{
	struct {
		struct nlmsghdr h;
		struct audit_rule_data r;
	} m = { .h = { .nlmsg_len = sizeof m, .nlmsg_type = AUDIT_ADD_RULE, .nlmsg_flags = NLM_F_REQUEST } };
	m.r.flags = AUDIT_FILTER_EXIT;
	m.r.action = AUDIT_ALWAYS;
	for (size_t i = 0; nr < 0 && i < sizeof audit_calls / sizeof audit_calls[0]; i++)
		m.r.mask[audit_calls[i] / 32] |= 1u << (audit_calls[i] % 32);
	if (nr >= 0)
		m.r.mask[nr / 32] |= 1u << (nr % 32);
	unsigned n = 0;
	m.r.fields[n] = AUDIT_ARCH, m.r.values[n] = AUDIT_ARCH_X86_64, m.r.fieldflags[n++] = AUDIT_EQUAL;
	m.r.fields[n] = AUDIT_EXIT, m.r.values[n] = (uint32_t)-err, m.r.fieldflags[n++] = AUDIT_EQUAL;
	if (flags_arg >= 0)
		m.r.fields[n] = AUDIT_ARG0 + (uint32_t)flags_arg, m.r.values[n] = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC,
		m.r.fieldflags[n++] = AUDIT_BIT_MASK;
	m.r.field_count = n;
	return send(audit_fd, &m, sizeof m, 0) == (ssize_t)sizeof m ? 0 : -1;
}

/* Become the guest's audit daemon with the rules; before the job is forked (a process forked
 * while audit is off is never audited). Without audit, no record (the host says none). */
static void audit_start(void)
{
	audit_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT);
	struct {
		struct nlmsghdr h;
		struct audit_status st;
	} m = { .h = { .nlmsg_len = sizeof m, .nlmsg_type = AUDIT_SET, .nlmsg_flags = NLM_F_REQUEST },
		/* a full backlog must not hold the job up: it is read as it comes, and what is lost is lost */
		.st = { .mask = AUDIT_STATUS_ENABLED | AUDIT_STATUS_PID | AUDIT_STATUS_BACKLOG_LIMIT | AUDIT_STATUS_BACKLOG_WAIT_TIME,
			.enabled = 1, .pid = (uint32_t)getpid(), .backlog_limit = 8192, .backlog_wait_time = 0 } };
	static const int errs[] = { EROFS, EACCES };
	bool ok = audit_fd >= 0 && send(audit_fd, &m, sizeof m, 0) == (ssize_t)sizeof m;
	for (size_t i = 0; ok && i < 2; i++)
		ok = audit_rule(-1, errs[i], -1) == 0 && audit_rule(__NR_openat, errs[i], 2) == 0 && audit_rule(__NR_open, errs[i], 1) == 0;
	if (!ok && audit_fd >= 0)
		close(audit_fd), audit_fd = -1;
}

/* The value of key="..." (or key=HEX) in an audit record, decoded (heap), or NULL. */
static char *audit_value(const char *rec, const char *key)
{
	char k[16];
	snprintf(k, sizeof k, " %s=", key);
	const char *v = strstr(rec, k);
	if (!v)
		return NULL;
	v += strlen(k);
	if (*v == '"')
		return strndup(v + 1, strcspn(v + 1, "\""));
	size_t n = strspn(v, "0123456789ABCDEF");
	char *out = calloc(1, n / 2 + 1);
	for (size_t i = 0; out && i + 1 < n; i += 2)
		sscanf(v + i, "%2hhx", (unsigned char *)&out[i / 2]);
	return out;
}

/* Which argument of call nr is the path it changes (a rename's or link's new name), and
 * which its directory fd (-1: none, relative to the working directory). */
static int audit_path_arg(long nr, int *dirfd_arg)
{
	*dirfd_arg = -1;
	switch (nr) {
	case __NR_link: case __NR_symlink: case __NR_rename: return 1;
	case __NR_symlinkat: *dirfd_arg = 1; return 2;
	case __NR_linkat: case __NR_renameat: case __NR_renameat2: *dirfd_arg = 2; return 3;
	case __NR_openat: case __NR_mkdirat: case __NR_mknodat: case __NR_unlinkat: case __NR_fchmodat:
	case __NR_fchownat: case __NR_utimensat: case __NR_futimesat: *dirfd_arg = 0; return 1;
	default: return 0;
	}
}

/* The path the call of the SYSCALL record rec named, read from its process (which may have
 * gone on: its path is usually still where it was), made absolute from its working directory
 * or directory fd; NULL when it cannot be read. */
static char *audit_call_path(const char *rec)
{
	const char *f[] = { " syscall=", " pid=", " a0=", " a1=", " a2=", " a3=" };
	unsigned long long v[6];
	for (size_t i = 0; i < 6; i++) {
		const char *p = strstr(rec, f[i]);
		if (!p)
			return NULL;
		v[i] = strtoull(p + strlen(f[i]), NULL, i < 2 ? 10 : 16);
	}
	int dirfd_arg, arg = audit_path_arg((long)v[0], &dirfd_arg);
	char path[4096], link[64], base[4096];
	size_t got = 0;
	while (got < sizeof path - 1) {
		size_t want = 4096 - ((v[2 + arg] + got) & 4095);
		want = want < sizeof path - 1 - got ? want : sizeof path - 1 - got;
		struct iovec l = { path + got, want }, r = { (void *)(uintptr_t)(v[2 + arg] + got), want };
		ssize_t n = process_vm_readv((pid_t)v[1], &l, 1, &r, 1, 0);
		if (n <= 0)
			return NULL;
		if (memchr(path + got, '\0', (size_t)n))
			break;
		got += (size_t)n;
	}
	path[sizeof path - 1] = '\0';
	if (path[0] == '/')
		return strdup(path);
	int dfd = dirfd_arg >= 0 ? (int)v[2 + dirfd_arg] : AT_FDCWD;
	if (dfd == AT_FDCWD)
		snprintf(link, sizeof link, "/proc/%llu/cwd", v[1]);
	else
		snprintf(link, sizeof link, "/proc/%llu/fd/%d", v[1], dfd);
	ssize_t bl = readlink(link, base, sizeof base - 1);
	char *abs = NULL;
	if (bl <= 0 || base[0] != '/')
		return NULL;
	base[bl] = '\0';
	return asprintf(&abs, "%s/%s", strcmp(base, "/") ? base : "", path) < 0 ? NULL : abs;
}

/* Is path at or under dir? */
static bool beneath(const char *path, const char *dir)
{
	size_t l = strlen(dir);
	while (l > 1 && dir[l - 1] == '/')
		l--;
	return !strncmp(path, dir, l) && (path[l] == '/' || !path[l] || l == 1);
}

/* Count the refused write of path (taken): not when EACCES came from the file's mode in a
 * place the job may write (a Landlock rule that lets it write files there). */
static void count_refused(const struct orders *o, char *path, int err)
{
	for (size_t i = 0; err == EACCES && i < o->nll_rules; i++) {
		char *p = NULL;
		unsigned long long access = strtoull(o->ll_rules[i], &p, 16);
		if (p && *p == ' ' && (access & LANDLOCK_ACCESS_FS_WRITE_FILE) && beneath(path, p + 1)) {
			free(path);
			return;
		}
	}
	refused_total++;
	for (size_t i = 0; i < n_refused; i++)
		if (!strcmp(refused[i].path, path)) {
			refused[i].count++;
			free(path);
			return;
		}
	if (n_refused == REFUSED_MAX) {
		free(path);
		return;
	}
	bool prot = false;
	for (size_t i = 0; i < o->nprotect; i++)
		prot |= o->protect[i][0] == 'l' && strlen(o->protect[i]) > 2 && beneath(path, o->protect[i] + 2);
	refused[n_refused++] = (struct refused_w){ .path = path, .count = 1, .prot = prot };
}

/* Read what the kernel audited: a call's records (SYSCALL, CWD, PATH...) end with EOE. */
static void audit_read(const struct orders *o)
{
	static int err;
	static char *cwd, *name, *called;
	char buf[9000];
	ssize_t n;
	while (audit_fd >= 0 && (n = recv(audit_fd, buf, sizeof buf - 1, 0)) > 0) {
		buf[n] = '\0';
		struct nlmsghdr *h = (struct nlmsghdr *)buf;
		char *rec = buf + NLMSG_HDRLEN;
		if (h->nlmsg_type == AUDIT_SYSCALL) {
			char *e = strstr(rec, " exit=");
			err = e ? -atoi(e + 6) : 0;
			free(called);
			free(name), name = NULL;
			called = audit_call_path(rec);
		} else if (h->nlmsg_type == AUDIT_CWD) {
			free(cwd);
			cwd = audit_value(rec, "cwd");
		} else if (h->nlmsg_type == AUDIT_PATH) {
			char *v = audit_value(rec, "name"); /* the last named path: a rename's or link's target */
			if (v)
				free(name), name = v;
		} else if (h->nlmsg_type == AUDIT_EOE && (name || called)) {
			/* the path as the call named it; else the kernel's record of it (for a name
			 * not made, only its directory) */
			char *abs = called;
			if (!abs && (name[0] == '/' ? !(abs = strdup(name)) : asprintf(&abs, "%s/%s", cwd ? cwd : "", name) < 0))
				abs = NULL;
			if (abs)
				count_refused(o, abs, err);
			free(name), name = called = NULL;
		}
	}
}

/* Tell the host the refused writes ({"refused_writes": [[path, count, protected]...],
 * "total": N}), when the kernel audited them. */
static void report_refused(void)
{
	if (audit_fd < 0)
		return;
	char *line = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);
	if (!f)
		return;
	fputs("{\"" VM_REPORT_REFUSED "\":[", f);
	for (size_t i = 0; i < n_refused; i++) {
		fputs(i ? ",[" : "[", f);
		json_str(f, refused[i].path);
		fprintf(f, ",%llu,%s]", refused[i].count, refused[i].prot ? "true" : "false");
	}
	fprintf(f, "],\"" VM_REPORT_REFUSED_TOTAL "\":%llu}\n", refused_total);
	fclose(f);
	write_line(line);
	free(line);
}

/* ---- the job ---- */

/* The job's seccomp program, read from the orders (NULL: the host compiled none). */
static struct sock_fprog *read_seccomp(void)
{
	size_t len;
	char *b = read_small(VM_RUN_MNT "/" VM_SECCOMP_FILE, &len);
	if (!b)
		return NULL;
	if (len == 0 || len % sizeof(struct sock_filter) || len / sizeof(struct sock_filter) > 65535)
		die(EINVAL, "bad seccomp program %s (%zu bytes)", VM_SECCOMP_FILE, len);
	struct sock_fprog *prog = malloc(sizeof *prog);
	if (!prog)
		die(ENOMEM, "out of memory");
	*prog = (struct sock_fprog){ .len = (unsigned short)(len / sizeof(struct sock_filter)), .filter = (struct sock_filter *)b };
	return prog;
}

/* A job's executor (its relay's pid and socket), and the job's terminal as init holds it (to
 * size it): -1 when none. */
static pid_t relay_pid = -1;
static int job_tty = -1;

/* The job's streams in a session of its own: /dev/null and the stdout and stderr ports, or on
 * a terminal VM_TTY_DEV (its controlling terminal) for those that are the terminal. */
static void job_streams(const struct orders *o, int out, int err)
{
	setsid();
	int in = o->tty ? open(VM_TTY_DEV, O_RDWR) : open("/dev/null", O_RDONLY);
	if (in < 0 || (o->tty && ioctl(in, TIOCSCTTY, 0) < 0))
		die(errno, "cannot open the job's %s", o->tty ? "terminal " VM_TTY_DEV : "stdin /dev/null");
	if (dup2(in, 0) < 0 || dup2(o->tty ? in : out, 1) < 0 || dup2(o->tty == 2 ? in : err, 2) < 0)
		die(errno, "cannot give the job its streams");
	if (in > 2)
		close(in);
}

/* In the job's process: become the run user without a way back, then execute the job (or be
 * the executor of a job's steps on the socket executor). */
static void exec_job(const struct orders *o, const struct sock_fprog *seccomp, int landlock, int out, int err, int executor)
{
	job_streams(o, out, err);
	if (cg_procs >= 0 && write(cg_procs, "0", 1) < 0)
		die(errno, "cannot enter the job's cgroup");
	struct rlimit core = { 0, 0 };
	if (!o->core)
		setrlimit(RLIMIT_CORE, &core);
	for (int cap = 0; cap <= CAP_LAST_CAP; cap++)
		prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	if (setgroups(0, NULL) < 0 || setresgid(o->gid, o->gid, o->gid) < 0 || setresuid(o->uid, o->uid, o->uid) < 0)
		die(errno, "cannot become the run user %u:%u", o->uid, o->gid);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die(errno, "cannot set no_new_privs");
	if (chdir(o->cwd) < 0 && o->workdir)
		die(errno, "--workdir %s: cannot enter it in the cell (it must exist there: a directory of the image, the host's /, the worktree or a bind)",
		    o->workdir);
	if (chdir(o->cwd) < 0)
		die(errno, "cannot enter the working directory %s in the cell", o->cwd);
	umask(o->umask);
	environ = o->env;
	if (landlock >= 0 && sys_landlock_restrict_self(landlock, 0) < 0)
		die(errno, "cannot enter the Landlock domain");
	if (seccomp && sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, (void *)seccomp) < 0)
		die(errno, "cannot load the seccomp program");
	/* init's descriptors are all close-on-exec: the executor's tasks get none of them */
	if (executor >= 0)
		executor_main(NULL, executor);
	execvp(o->argv[0], o->argv);
	if (errno == ENOENT || errno == ENOTDIR)
		die_code(127, 0, "command not found in the cell: %s (PATH=%s); install it in the image or give its full path",
			 o->argv[0], getenv("PATH") ? getenv("PATH") : CELL_PATH_ENV);
	die_code(126, errno, "cannot execute %s in the cell", o->argv[0]);
}

/* VM_CTL_WINSIZE's rows and columns from the control port, set on the job's terminal (the
 * kernel tells its foreground process group: SIGWINCH). */
static void set_winsize(int ctl)
{
	unsigned char b[4];
	size_t got = 0;
	for (struct pollfd p = { .fd = ctl, .events = POLLIN }; got < sizeof b && poll(&p, 1, 1000) == 1;) {
		ssize_t n = read(ctl, b + got, sizeof b - got);
		if (n <= 0)
			return;
		got += (size_t)n;
	}
	struct winsize ws = { .ws_row = (unsigned short)(b[0] | b[1] << 8), .ws_col = (unsigned short)(b[2] | b[3] << 8) };
	if (got == sizeof b && job_tty >= 0)
		ioctl(job_tty, TIOCSWINSZ, &ws);
}

/* Wait for the job, reaping what else ends; forward the host's signals (one byte each on the
 * control port) to the job's process group (a job's executor: every process, as a container's
 * init does; its steps have sessions of their own). Its wait status. */
static int wait_job(const struct orders *o, pid_t job, int ctl, bool watch_scratch)
{
	int tfd = watch_timer();
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	for (;;) {
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
			relay_pid = p == relay_pid ? -1 : relay_pid;
			if (p == job)
				return st;
		}
		struct pollfd pf[5] = { { .fd = sfd, .events = POLLIN }, { .fd = ctl, .events = POLLIN },
					{ .fd = cg_events, .events = POLLPRI }, { .fd = tfd, .events = POLLIN },
					{ .fd = audit_fd, .events = POLLIN } };
		if (poll(pf, 5, -1) < 0 && errno != EINTR)
			die(errno, "cannot wait for the job");
		if (pf[2].revents)
			report_pids();
		uint64_t ticks;
		sample_pids();
		if (pf[4].revents & POLLIN)
			audit_read(o);
		if ((pf[3].revents & POLLIN) && read(tfd, &ticks, sizeof ticks) > 0 && watch_scratch && report_scratch(true))
			watch_scratch = false; /* said once, as a container's init does */
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof si) > 0)
			;
		unsigned char sig = 0;
		if ((pf[1].revents & POLLIN) && read(ctl, &sig, 1) == 1 && sig == VM_CTL_WINSIZE)
			set_winsize(ctl);
		else if ((pf[1].revents & POLLIN) && sig > 0 && sig < NSIG && relay_pid > 0)
			kill(-1, sig); /* the relay ignores it */
		else if ((pf[1].revents & POLLIN) && sig > 0 && sig < NSIG)
			kill(-job, sig) < 0 ? kill(job, sig) : 0;
		if (pf[1].revents & (POLLHUP | POLLERR))
			pf[1].fd = -1, ctl = -1;
	}
}

/* The job's terminal, VM_TTY_DEV, held by init (to size it: never its controlling terminal);
 * it appears with the console's port, waiting up to 10 s. */
static int open_tty(void)
{
	for (int tries = 0; tries < 1000; tries++) {
		int fd = open(VM_TTY_DEV, O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	die(errno, "no terminal %s for the job", VM_TTY_DEV);
}

/* A job's executor: the relay of its socket over port (a child of init, which ends when the
 * executor does). The executor's end of the socket, or -1 without a port. */
static int start_relay(int port)
{
	int sp[2];
	if (port < 0)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0 || (relay_pid = fork()) < 0)
		die(errno, "cannot start the relay of the job's executor");
	if (relay_pid == 0) {
		close(sp[1]);
		vmexec_guest_relay(port, sp[0]);
		_exit(0);
	}
	close(sp[0]);
	close(port);
	return sp[1];
}

int main(void)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	umask(022);
	mkdir("/proc", 0755);
	mkdir("/sys", 0755);
	mkdir("/dev", 0755);
	mount_or_die("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_or_die("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_or_die("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
	char *cmdline = read_small("/proc/cmdline", NULL);
	if (cmdline && strstr(cmdline, VM_CMDLINE_POWEROFF))
		power_off();
	free(cmdline);
	/* 0-2 are taken before anything is opened: the console appears with its module */
	for (int fd = open("/dev/null", O_RDWR); fd >= 0 && fd < 2; fd = dup(fd))
		;
	load_modules(VM_MOD_LIST);
	int console = open("/dev/hvc0", O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (console >= 0)
		dup2(console, STDERR_FILENO);
	report_fd = open_port(VM_PORT_REPORT, O_WRONLY);
	int out = open_port(VM_PORT_STDOUT, O_WRONLY);
	int err = open_port(VM_PORT_STDERR, O_WRONLY);
	int ctl = open_port(VM_PORT_CTL, O_RDONLY | O_NONBLOCK);
	mkdir(VM_RUN_MNT, 0755);
	mkdir(VM_NEWROOT, 0755);
	mount_or_die(VM_TAG_RUN, VM_RUN_MNT, "9p", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NINEP_OPTS);
	struct orders o;
	read_orders(&o);
	int execport = o.executor ? open_port(VM_PORT_EXEC, O_RDWR) : -1;
	job_tty = o.tty ? open_tty() : -1;
	struct winsize ws = { .ws_row = o.rows, .ws_col = o.cols };
	if (job_tty >= 0 && o.rows && o.cols)
		ioctl(job_tty, TIOCSWINSZ, &ws);
	struct sock_fprog *seccomp = read_seccomp();
	make_job_cgroup(&o);
	struct guest_net net;
	net_orders(&net);
	net_up(&net);
	build_root(&o);
	umount2(VM_RUN_MNT, MNT_DETACH);
	umount2(VM_LOWER_MNT, MNT_DETACH); /* the overlay holds what it needs of it */
	if (o.hostname && sethostname(o.hostname, strlen(o.hostname)) < 0)
		die(errno, "cannot set the hostname %s", o.hostname);
	enter_root();
	net_resolv(&net);
	mask_kernel_files(&o);
	protect_worktree(&o);
	int landlock = make_landlock(&o);
	int executor = start_relay(execport);
	if (!o.no_refused)
		audit_start();
	pid_t job = fork();
	if (job < 0)
		die(errno, "cannot start the job");
	if (job == 0) {
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
		exec_job(&o, seccomp, landlock, out, err, executor);
	}
	close(out);
	close(err);
	if (executor >= 0)
		close(executor);
	write_line("{\"" VM_REPORT_STARTED "\":true}\n");
	int st = wait_job(&o, job, ctl, o.scratch > 0);
	if (relay_pid > 0) /* the executor's last words and its tasks' output go first */
		waitpid(relay_pid, NULL, 0);
	audit_read(&o);
	report_refused();
	report_pids();
	report_pids_peak();
	report_scratch(false);
	report_oom_kills();
	report(NULL, 0, st);
	power_off();
}
