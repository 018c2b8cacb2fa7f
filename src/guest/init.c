/* init.c - pid 1 of the vm driver's guest (a static program in the initramfs warren builds;
 * see cell/vm.c). It loads the modules listed in the initramfs, mounts the run's orders (a 9p
 * share of <rundir>/vm), builds the cell's root from the host's / (9p, read-only, as the
 * container driver's host-root cells see it) with its own /proc, /sys, /dev, /tmp and /var/tmp
 * (tmpfs 01777), a home and the worktree (9p, read-write), runs the job as the run user with
 * TMPDIR=/tmp last, forwards the signals the host sends on the control port, reports how the
 * job ended as one JSON line on the report port and powers the VM off. Every mode, path and
 * name of the contract comes from cell/contract.h.
 *
 * It uses nothing but the C library (it is linked statically): no warren library code. */
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
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "cell/contract.h"
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
		die(errno, "cannot mount %s (%s) on %s", src, type, dst);
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
 * waiting up to 10 s. */
static int open_port(const char *name, int flags)
{
	for (int tries = 0; tries < 1000; tries++) {
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
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	die(ENOENT, "no virtio-serial port %s", name);
}

/* ---- the orders ---- */

struct orders {
	char **argv, **env, **mask;
	size_t nargv, nenv, nmask;
	const char *cwd, *home, *worktree;
	uid_t uid;
	gid_t gid;
	unsigned long long scratch, pids;
	bool core;
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
	*o = (struct orders){ .uid = CELL_DEFAULT_UID, .gid = CELL_DEFAULT_GID, .cwd = "/" };
	for (char *p = b, *next; p < b + len; p = next) {
		next = p + strlen(p) + 1;
		char *v = strchr(p, '=');
		if (!v)
			die(EINVAL, "bad record in the orders: %s", p);
		*v++ = '\0';
		if (!strcmp(p, VM_KEY_ARG)) push(&o->argv, &o->nargv, v);
		else if (!strcmp(p, VM_KEY_ENV)) push(&o->env, &o->nenv, v);
		else if (!strcmp(p, VM_KEY_MASK)) push(&o->mask, &o->nmask, v);
		else if (!strcmp(p, VM_KEY_CWD)) o->cwd = v;
		else if (!strcmp(p, VM_KEY_HOME)) o->home = v;
		else if (!strcmp(p, VM_KEY_WORKTREE)) o->worktree = v;
		else if (!strcmp(p, VM_KEY_UID)) o->uid = (uid_t)strtoul(v, NULL, 10);
		else if (!strcmp(p, VM_KEY_GID)) o->gid = (gid_t)strtoul(v, NULL, 10);
		else if (!strcmp(p, VM_KEY_SCRATCH)) o->scratch = strtoull(v, NULL, 10);
		else if (!strcmp(p, VM_KEY_PIDS)) o->pids = strtoull(v, NULL, 10);
		else if (!strcmp(p, VM_KEY_CORE)) o->core = !strcmp(v, "1");
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

/* A scratch tmpfs at path: mode, owner, and the scratch limit as its size. */
static void scratch_tmpfs(const char *path, mode_t mode, uid_t uid, gid_t gid, unsigned long long size)
{
	char data[96];
	if (size)
		snprintf(data, sizeof data, "mode=%o,uid=%u,gid=%u,size=%llu", mode, uid, gid, size);
	else
		snprintf(data, sizeof data, "mode=%o,uid=%u,gid=%u", mode, uid, gid);
	mount_or_die("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, data);
}

/* The directories of path after its first skip bytes, where they are missing (a read-only
 * part that lacks one fails the mount after, which says so). */
static void mkdir_parents(const char *path, size_t skip)
{
	char *p = strdup(path);
	for (char *c = p ? p + skip + 1 : NULL; c && *c; c++) {
		if (*c != '/')
			continue;
		*c = '\0';
		mkdir(p, 0755);
		*c = '/';
	}
	if (p)
		mkdir(p, 0755);
	free(p);
}

static void build_root(const struct orders *o)
{
	const char *r = VM_NEWROOT;
	mount_or_die(VM_TAG_ROOT, r, "9p", MS_RDONLY | MS_NOSUID | MS_NODEV, NINEP_OPTS ",cache=loose");
	char *p = under(r, "/proc");
	mount_or_die("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	free(p);
	p = under(r, "/sys");
	mount_or_die("sysfs", p, "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	free(p);
	p = under(r, "/dev");
	mount_or_die("/dev", p, NULL, MS_BIND | MS_REC, NULL);
	free(p);
	/* /dev/shm is scratch like /tmp (POSIX shared memory, semaphores); /dev/pts for terminals */
	mkdir("/dev/shm", CELL_TMP_MODE);
	mkdir("/dev/pts", 0755);
	p = under(r, "/dev/shm");
	scratch_tmpfs(p, CELL_TMP_MODE, 0, 0, o->scratch);
	free(p);
	p = under(r, "/dev/pts");
	mount_or_die("devpts", p, "devpts", MS_NOSUID | MS_NOEXEC, "ptmxmode=0666,mode=0620");
	free(p);
	p = under(r, "/run");
	scratch_tmpfs(p, 0755, 0, 0, 0);
	free(p);
	p = under(r, CELL_TMP_PATH);
	scratch_tmpfs(p, CELL_TMP_MODE, 0, 0, o->scratch);
	free(p);
	p = under(r, CELL_VARTMP_PATH);
	scratch_tmpfs(p, CELL_TMP_MODE, 0, 0, o->scratch);
	free(p);
	p = under(r, CELL_HOME_PARENT);
	scratch_tmpfs(p, 0755, 0, 0, o->scratch);
	free(p);
	if (o->home) {
		p = under(r, o->home);
		/* under the fresh /home, or where the host has one (/root): a tmpfs of its own */
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
	for (size_t i = 0; i < o->nmask; i++) {
		p = under(r, o->mask[i]);
		if (mount("tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k") < 0 && errno != ENOENT)
			die(errno, "cannot hide %s", o->mask[i]);
		free(p);
	}
	if (o->worktree) {
		p = under(r, o->worktree);
		mkdir_parents(p, strlen(r)); /* under a tmpfs of the guest's own (/tmp, /home) */
		mount_or_die(VM_TAG_WORK, p, "9p", MS_NOSUID | MS_NODEV, NINEP_OPTS ",cache=mmap");
		free(p);
	}
}

/* Enter the new root: the initramfs cannot be pivoted away, so move over it (switch_root). */
static void enter_root(void)
{
	if (chdir(VM_NEWROOT) < 0 || mount(VM_NEWROOT, "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 || chdir("/") < 0)
		die(errno, "cannot enter the cell's root");
}

/* ---- the job's cgroup: its process limit ---- */

static int cg_procs = -1, cg_events = -1;
static unsigned long long pids_hits;

static void write_cg(const char *file, const char *val)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		die(errno, "cannot write %s", file);
	close(fd);
}

/* A cgroup "job" in the guest's cgroup2 with pids.max, when there is a process limit. */
static void make_job_cgroup(const struct orders *o)
{
	if (!o->pids)
		return;
	char max[32];
	snprintf(max, sizeof max, "%llu", o->pids);
	mkdir(VM_CGROUP_MNT, 0755);
	mount_or_die("cgroup2", VM_CGROUP_MNT, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	write_cg(VM_CGROUP_MNT "/cgroup.subtree_control", "+pids");
	if (mkdir(VM_CGROUP_MNT "/job", 0755) < 0)
		die(errno, "cannot make the job's cgroup");
	write_cg(VM_CGROUP_MNT "/job/pids.max", max);
	cg_procs = open(VM_CGROUP_MNT "/job/cgroup.procs", O_WRONLY | O_CLOEXEC);
	cg_events = open(VM_CGROUP_MNT "/job/pids.events", O_RDONLY | O_CLOEXEC);
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

/* In the job's process: become the run user without a way back, then execute the job. */
static void exec_job(const struct orders *o, const struct sock_fprog *seccomp, int out, int err)
{
	int in = open("/dev/null", O_RDONLY);
	if (in < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		die(errno, "cannot give the job its streams");
	setsid();
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
	if (chdir(o->cwd) < 0)
		die(errno, "cannot enter %s in the cell", o->cwd);
	environ = o->env;
	if (seccomp && sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, (void *)seccomp) < 0)
		die(errno, "cannot load the seccomp program");
	execvp(o->argv[0], o->argv);
	if (errno == ENOENT || errno == ENOTDIR)
		die_code(127, 0, "command not found in the cell: %s (PATH=%s); install it in the image or give its full path",
			 o->argv[0], getenv("PATH") ? getenv("PATH") : CELL_PATH_ENV);
	die_code(126, errno, "cannot execute %s in the cell", o->argv[0]);
}

/* Wait for the job, reaping what else ends; forward the host's signals (one byte each on the
 * control port) to the job's process group. Its wait status. */
static int wait_job(pid_t job, int ctl)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	for (;;) {
		int st;
		pid_t p;
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			if (p == job)
				return st;
		struct pollfd pf[3] = { { .fd = sfd, .events = POLLIN }, { .fd = ctl, .events = POLLIN },
					{ .fd = cg_events, .events = POLLPRI } };
		if (poll(pf, 3, -1) < 0 && errno != EINTR)
			die(errno, "cannot wait for the job");
		if (pf[2].revents)
			report_pids();
		struct signalfd_siginfo si;
		while (read(sfd, &si, sizeof si) > 0)
			;
		unsigned char sig;
		if ((pf[1].revents & POLLIN) && read(ctl, &sig, 1) == 1 && sig > 0 && sig < NSIG)
			kill(-job, sig) < 0 ? kill(job, sig) : 0;
		if (pf[1].revents & (POLLHUP | POLLERR))
			pf[1].fd = -1, ctl = -1;
	}
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
	struct sock_fprog *seccomp = read_seccomp();
	make_job_cgroup(&o);
	struct guest_net net;
	net_orders(&net);
	net_up(&net);
	build_root(&o);
	umount2(VM_RUN_MNT, MNT_DETACH);
	enter_root();
	net_resolv(&net);
	pid_t job = fork();
	if (job < 0)
		die(errno, "cannot start the job");
	if (job == 0) {
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
		exec_job(&o, seccomp, out, err);
	}
	close(out);
	close(err);
	write_line("{\"" VM_REPORT_STARTED "\":true}\n");
	int st = wait_job(job, ctl);
	report_pids();
	report(NULL, 0, st);
	power_off();
}
