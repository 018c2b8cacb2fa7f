/* SPDX-License-Identifier: Apache-2.0 */
/* selfcheck.c - `warren selfcheck [--rootfs DIR]`: is this host able to make cells, and is the
 * image clean (nothing in its /tmp, /tmp sticky, no root-owned directory where a job writes)? */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cgroup/cgroup.h"
#include "cgroup/delegate.h"
#include "cli/cli.h"
#include "cli/config.h"
#include "cli/opts.h"
#include "image/store.h"
#include "net/net.h"
#include "policy/policy.h"
#include "run/limits.h"
#include "run/rundir.h"
#include "supervise/refused.h"
#include "util/conf.h"
#include "util/fs.h"
#include "util/strv.h"
#include "util/sys.h"

static int failures;

static void check(bool ok, const char *what, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void check(bool ok, const char *what, const char *fmt, ...)
{
	if (ok) {
		printf("ok    %s\n", what);
		return;
	}
	failures++;
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL  %s: ", what);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("note  ");
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

static bool can_unshare_user(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 0 : 1);
	int st;
	return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static bool has_fs(const char *name)
{
	_cleanup_free_ char *s = read_file("/proc/filesystems", NULL);
	if (!s)
		return false;
	_cleanup_free_ char *pat = xasprintf("\t%s\n", name);
	return strstr(s, pat) != NULL;
}

/* Load the default seccomp profile in a child and see it refuse keyctl with EPERM (a call any
 * process may make on a bare host). 0, or the errno that broke it (ENOSYS: keyctl got through). */
static int seccomp_works(const struct policy_opts *p)
{
	pid_t c = fork();
	if (c == 0) {
		struct sock_fprog prog = { .len = p->bpf_len, .filter = p->bpf };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || sys_seccomp(SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			_exit(errno & 0x7f);
		long r = sys_keyctl(KEYCTL_GET_KEYRING_ID, (unsigned long)KEY_SPEC_SESSION_KEYRING, 0);
		_exit(r < 0 && errno == EPERM ? 0 : ENOSYS);
	}
	int st;
	if (c < 0 || waitpid(c, &st, 0) != c)
		return ECHILD;
	return WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
}

/* The write watch (refused writes in the record): a child loads its filter and sends the
 * listener as a job does, then makes one watched call (a mkdir that fails with ENOENT); it
 * must arrive here and go on. 0, or the errno that broke it. */
static int watch_works(char **why)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return errno;
	pid_t c = fork();
	if (c == 0) {
		close(sv[0]);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(1);
		policy_watch_writes(sv[1]);
		_exit(mkdir("/nonexistent-warren-selfcheck/x", 0700) < 0 && errno == ENOENT ? 0 : 2);
	}
	close(sv[1]);
	struct refused r;
	refused_init(&r);
	r.sock = sv[0];
	int e = ETIMEDOUT;
	struct pollfd pf = { .fd = sv[0], .events = POLLIN };
	if (c > 0 && poll(&pf, 1, 5000) == 1 && refused_take_listener(&r)) {
		pf.fd = r.listener;
		struct seccomp_notif *req = r.req;
		struct seccomp_notif_resp *resp = r.resp;
		int p = poll(&pf, 1, 5000);
		if (p == 1 && ioctl(r.listener, SECCOMP_IOCTL_NOTIF_RECV, req) == 0) {
			resp->id = req->id;
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
			e = ioctl(r.listener, SECCOMP_IOCTL_NOTIF_SEND, resp) == 0 ? 0 : errno;
		} else {
			e = p == 0 ? ETIMEDOUT : errno;
		}
	} else if (r.off) {
		*why = xstrdup(r.off);
		e = EOPNOTSUPP;
	}
	refused_free(&r);
	int st;
	if (c < 0 || waitpid(c, &st, 0) != c)
		return ECHILD;
	if (!e && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		e = EPROTO;
	return e;
}

/* The defences of docs/hardening.md this host supports: seccomp filters (the default profile,
 * compiled and loaded in a child) and the Landlock ABI. */
static void defence_checks(void)
{
	int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	if (mode == 2)
		note("seccomp: warren itself runs under a seccomp filter (a container?); the cell's filter stacks on it");
	_cleanup_error_ struct error err = { 0 };
	struct policy_opts p = { 0 };
	if (policy_prepare(&p, &err) < 0) {
		check(false, "seccomp", "the default profile does not compile: %s", err.msg ? err.msg : "");
	} else {
		int e = seccomp_works(&p);
		_cleanup_free_ char *w = xasprintf("seccomp (the default profile, %u instructions, refuses keyctl with EPERM)", p.bpf_len);
		if (e == ENOSYS)
			check(false, "seccomp", "the default profile loaded but keyctl was not refused; report this with 'warren run --seccomp-print'");
		else
			check(e == 0, w, "cannot load a seccomp filter (%s); the kernel needs CONFIG_SECCOMP_FILTER, and no run can start without it",
			      strerror(e));
	}
	free(p.bpf);
	_cleanup_free_ char *why = NULL;
	int we = watch_works(&why);
	if (we)
		note("refused writes: not recorded on this host (%s); runs go on and their record says so. "
		     "The kernel needs seccomp user notification (5.5+, 5.19+ for killable waits); EBUSY means warren itself runs under a seccomp listener",
		     why ? why : strerror(we));
	else
		check(true, "refused writes recorded (seccomp user notification)", " ");
	int abi = landlock_abi();
	if (abi > 0) {
		_cleanup_free_ char *w = xasprintf("Landlock ABI %d (%s)", abi,
						   abi >= 6 ? "file system, TCP, signal and abstract socket scoping" :
						   abi >= 4 ? "file system and TCP" :
						   abi >= 2 ? "file system, with moves across directories" :
							      "file system; moves across directories fail with EXDEV");
		check(true, w, " ");
	} else {
		note("Landlock: not available (kernel older than 5.13, or 'landlock' missing from the lsm= boot parameter); runs go on with the other defences, and --require-landlock refuses to start");
	}
}

/* The limits a run gets without flags, and where they come from. */
static void defaults_check(const char *state)
{
	struct limit_host h;
	struct limits def;
	_cleanup_error_ struct error err = { 0 };
	_cleanup_free_ char *from = NULL;
	limits_host(&h, geteuid() != 0);
	if (limits_defaults(&h, state, &def, &from, &err) < 0) {
		check(false, "default limits", "%s", err.msg);
		return;
	}
	char *line = xstrdup("");
	for (const struct limit_desc *d = limit_descs; d->name; d++) {
		char b[32];
		const char *txt = limit_format(d, *limit_field(&def, d), b, sizeof b);
		bool off = (!strcmp(d->name, "memory") && !h.memory) || (!strcmp(d->name, "pids") && !h.pids);
		char *n = xasprintf("%s%s%s %s%s", line, *line ? ", " : "", d->name, txt,
				    off && strcmp(txt, "none") ? " (not enforced: no cgroup controller for it)" : "");
		free(line);
		line = n;
	}
	note("default limits: %s (from the host's size%s%s; 'none' or a value on the command line lifts or changes one)",
	     line, *from ? ", " : "", from);
	free(line);
}

/* The configuration in force and where each value comes from: the files read, each key they
 * set, the state directory, the network mode a run gets and the subnet runs take now. */
static void config_report(const char *state, const char *state_opt)
{
	_cleanup_strv_ char **files = conf_files();
	char *line = xstrdup("");
	for (size_t i = 0; files[i]; i++) {
		struct stat st;
		char *n = xasprintf("%s%s%s%s", line, i ? ", " : "", files[i], stat(files[i], &st) == 0 ? "" : " (none)");
		free(line);
		line = n;
	}
	note("configuration files: %s%s", *line ? line : "none", getenv(CONF_ENV) ? " ($" CONF_ENV ")" : "");
	free(line);
	/* main only warned of a file that is wrong, so that this report could be made */
	_cleanup_error_ struct error cerr = { 0 };
	if (cli_config_load(&cerr) < 0)
		check(false, "configuration", "%s; the defaults below stand in for it", cerr.msg);
	_cleanup_free_ const char **keys = conf_keys();
	for (size_t i = 0; keys[i]; i++) {
		const char *from = NULL, *v = conf_get(keys[i], &from);
		note("  %s = %s (%s)", keys[i], v, from);
	}
	const char *sfrom = NULL, *env = getenv("WARREN_STATE");
	const char *cs = conf_get("state", &sfrom);
	note("state directory: %s (%s)", state,
	     state_opt && *state_opt ? "--state" : env && *env ? "$WARREN_STATE" : cs ? sfrom : "the default");
	const char *nfrom = NULL, *net = conf_get("net", &nfrom);
	note("network of a run that names none: %s (%s; --net or a job's network: changes it)", net ? net : "none",
	     net ? nfrom : "the default");
	_cleanup_free_ char *sn = net_subnet_describe();
	note("runs' network: %s", sn);
}

/* A rootless caller's cgroups: the subtree delegated to it and what it offers, or why none. */
static void rootless_cgroups(const char *where)
{
	enum cgroup_deleg why;
	const char *self, *dir = cgroup_delegate(&why, &self);
	if (!dir) {
		_cleanup_free_ char *m = cgroup_deleg_refusal("a limit (--memory, --pids, --cpu-time, --cpus)", why, self, NULL, NULL, geteuid());
		note("cgroups: %s; %s", where, m);
		return;
	}
	const char *ctrl[] = { "memory", "pids", "cpu", "cpuset" };
	char *have = xstrdup(""), *lack = xstrdup("");
	for (size_t i = 0; i < sizeof ctrl / sizeof ctrl[0]; i++) {
		char **to = cgroup_delegate_offers(ctrl[i]) == CGROUP_DELEG_OK ? &have : &lack;
		char *t = xasprintf("%s%s%s", *to, **to ? " " : "", ctrl[i]);
		free(*to);
		*to = t;
	}
	note("cgroups: %s; rootless runs' groups go below the cgroup delegated to uid %u, %s (controllers: %s%s%s)", where,
	     (unsigned)geteuid(), dir, *have ? have : "none", *lack ? "; not offered: " : "", lack);
	free(have);
	free(lack);
}

static void host_checks(const char *state)
{
	struct utsname u;
	uname(&u);
	int maj = 0, min = 0;
	sscanf(u.release, "%d.%d", &maj, &min);
	check(maj > 5 || (maj == 5 && min >= 12), "kernel", "%s is older than 5.12 (mount_setattr, idmapped mounts); upgrade the kernel", u.release);
	check(can_unshare_user(), "user namespaces",
	      "cannot create one (check sysctl user.max_user_namespaces and kernel.unprivileged_userns_clone, or AppArmor's restrict_unprivileged_userns)");
	check(has_fs("overlay"), "overlayfs (the cell's view of the host's /, and --rootfs)",
	      "not in /proc/filesystems; run 'modprobe overlay' (no cell can be made without it)");
	char *where = NULL, *missing = NULL;
	enum cgroup_kind k = cgroup_host_kind(&where, &missing);
	if (geteuid() != 0) {
		rootless_cgroups(where);
	} else {
		_cleanup_free_ char *w = xasprintf("cgroups: %s", where);
		check(k != CGROUP_NONE && !*missing, w, "controllers missing: %s; limits that need them (--memory, --pids, --cpu-time) are refused",
		      missing);
	}
	free(where);
	free(missing);
	defence_checks();
	_cleanup_error_ struct error err = { 0 };
	_cleanup_free_ char *w = xasprintf("state directory %s", state);
	struct stat st;
	if (stat(state, &st) < 0) {
		note("state directory %s does not exist yet; the first run creates it", state);
	} else {
		struct statedir sd;
		int r = statedir_open(&sd, state, true, &err);
		check(r == 0, w, "%s", err.msg ? err.msg : "");
		if (r == 0)
			statedir_close(&sd);
	}
	defaults_check(state);
}

/* Directories owned by root below dir (depth-limited): a job running as its user cannot
 * write into them. Reports the first few. */
static void root_owned_below(const char *image, const char *rel, int depth, int *found)
{
	_cleanup_free_ char *dir = xasprintf("%s%s", image, rel);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) && *found < 5) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		_cleanup_free_ char *sub = xasprintf("%s/%s", rel, e->d_name);
		if (st.st_uid == 0 && !(st.st_mode & 0002)) {
			(*found)++;
			check(false, "no root-owned directory where a job writes",
			      "%s%s is a directory owned by root (mode %04o) left by the image build; a job running as its user cannot write it. Remove it from the image (rm -rf %s%s) or let the job create it",
			      image, sub, st.st_mode & 07777, image, sub);
		}
		if (depth > 0)
			root_owned_below(image, sub, depth - 1, found);
	}
	closedir(d);
}

static void image_checks(const char *image)
{
	_cleanup_free_ char *w = xasprintf("image %s", image);
	check(is_dir(image), w, "not a directory; give --rootfs DIR holding a root file system");
	if (!is_dir(image))
		return;
	_cleanup_free_ char *sh = xasprintf("%s/bin/sh", image);
	check(access(sh, X_OK) == 0, "image has /bin/sh", "%s is missing or not executable; job steps run with sh", sh);
	static const char *const tmps[] = { "/tmp", "/var/tmp" };
	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *p = xasprintf("%s%s", image, tmps[i]);
		_cleanup_free_ char *what = xasprintf("image %s is empty", tmps[i]);
		DIR *d = opendir(p);
		int n = 0;
		char first[256] = "";
		if (d) {
			struct dirent *e;
			while ((e = readdir(d)))
				if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && n++ == 0)
					snprintf(first, sizeof first, "%s", e->d_name);
			closedir(d);
		}
		if (!d) {
			note("image has no %s (the cell mounts its own)", tmps[i]);
			continue;
		}
		check(n == 0, what, "%s holds %d entr%s (e.g. %s) left by the image build; clean it (rm -rf %s/* %s/.[!.]*)", p, n,
		      n == 1 ? "y" : "ies", first, p, p);
		struct stat st;
		if (stat(p, &st) == 0) {
			_cleanup_free_ char *m = xasprintf("image %s mode is 01777", tmps[i]);
			check((st.st_mode & 07777) == CELL_TMP_MODE, m, "%s has mode %04o; programs that check their temp directory refuse it; run 'chmod 1777 %s'",
			      p, st.st_mode & 07777, p);
		}
	}
	int found = 0;
	root_owned_below(image, "/tmp", 3, &found);
	root_owned_below(image, "/var/tmp", 3, &found);
	_cleanup_free_ char *home = xasprintf("%s" CELL_HOME_PARENT "/" CELL_DEFAULT_USER, image);
	if (is_dir(home))
		root_owned_below(image, CELL_HOME_PARENT "/" CELL_DEFAULT_USER, 3, &found);
	if (!found)
		check(true, "no root-owned directory where a job writes (/tmp, /var/tmp, the run user's home)", " ");
	_cleanup_free_ char *pw = xasprintf("%s/etc/passwd", image);
	if (path_exists(pw))
		check(access(pw, R_OK) == 0, "image /etc/passwd readable", "%s cannot be read; the run user's entry is added to it in the cell", pw);
	else
		note("image has no /etc/passwd (the cell's has the run user alone)");
	note("the run user is %s (uid %d) when root starts warren, added to the cell's /etc/passwd", CELL_DEFAULT_USER, CELL_DEFAULT_UID);
}

/* --image NAME: the same checks on a stored image's root */
static void stored_image_checks(const char *state_opt, const char *name)
{
	_cleanup_error_ struct error err = { 0 };
	struct statedir sd;
	struct image_ref ref = { .fd = -1 };
	_cleanup_free_ char *what = xasprintf("image %s is stored", name);
	if (cli_state_open(state_opt, &sd) != 0) {
		check(false, what, "the state directory cannot be opened (see above)");
		return;
	}
	if (image_open(sd.fd, sd.path, name, &ref, &err) < 0)
		check(false, what, "%s", err.msg);
	else
		image_checks(ref.rootfs);
	image_ref_free(&ref);
	statedir_close(&sd);
}

int cmd_selfcheck(int argc, char **argv)
{
	enum { O_STATE = 256, O_ROOTFS, O_HELP, O_IMAGE };
	static const struct option opts[] = { { "state", required_argument, NULL, O_STATE },
					      { "rootfs", required_argument, NULL, O_ROOTFS },
					      { "image", required_argument, NULL, O_IMAGE },
					      { "help", no_argument, NULL, O_HELP },
					      { NULL, 0, NULL, 0 } };
	const char *state_opt = NULL, *rootfs = NULL, *image = NULL;
	_cleanup_error_ struct error perr = { 0 };
	optind = 1;
	int c;
	while ((c = cli_getopt(argc, argv, "", opts, "selfcheck", &perr)) != -1) {
		switch (c) {
		case O_STATE: state_opt = optarg; break;
		case O_ROOTFS: rootfs = optarg; break;
		case O_IMAGE: image = optarg; break;
		case O_HELP:
			puts("usage: warren selfcheck [--rootfs DIR | --image NAME] [--state DIR]\n\n"
			     "Check this host (user namespaces, overlayfs, cgroups, seccomp, the Landlock ABI, the\n"
			     "state directory) and, with --rootfs or --image (a stored image), an image (empty sticky\n"
			     "/tmp, no root-owned directories where a job writes). One line per check; exit 1 when\n"
			     "any fails.");
			return 0;
		default:
			return cli_fail(&perr);
		}
	}
	if (optind < argc)
		return cli_usage_error("selfcheck", "selfcheck takes no operands, got '%s'", argv[optind]);
	_cleanup_free_ char *state = statedir_default(state_opt);
	failures = 0;
	config_report(state, state_opt);
	host_checks(state);
	if (rootfs)
		image_checks(rootfs);
	if (image)
		stored_image_checks(state_opt, image);
	printf("%s\n", failures ? "selfcheck: FAILED" : "selfcheck: all good");
	return failures ? 1 : 0;
}
