/* SPDX-License-Identifier: Apache-2.0 */
/* test_fs.c - rm_tree on hostile trees, write_file_atomic, mkdir_p, descriptors over sockets
 * and what a pipe's read end tells.
 *
 * Scratch lives under $TEST_SCRATCH (or ./build/test-scratch), never /tmp. When run as root,
 * the permission tests drop CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER from the
 * effective set so that chmod 0000 really locks the owner out, as it would for a user. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/fs.h"

static char scratch[PATH_MAX]; /* absolute */
static int sfd = -1;           /* open on scratch */

/* ---------- capabilities ---------- */

static struct __user_cap_data_struct saved_caps[2];
static bool caps_dropped;

static int capget_(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	return (int)syscall(SYS_capget, &h, d);
}

static int capset_(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	return (int)syscall(SYS_capset, &h, d);
}

/* Make permission bits bind us as they bind an ordinary owner. */
static void drop_dac(void)
{
	if (caps_dropped)
		return;
	struct __user_cap_data_struct d[2];
	if (capget_(d) < 0)
		return;
	memcpy(saved_caps, d, sizeof d);
	d[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH) | (1u << CAP_FOWNER));
	if (capset_(d) == 0)
		caps_dropped = true;
}

static void restore_caps(void)
{
	if (!caps_dropped)
		return;
	capset_(saved_caps);
	caps_dropped = false;
}

/* True when mode bits are enforced against us right now. */
static bool dac_enforced(void)
{
	if (geteuid() != 0)
		return true;
	struct __user_cap_data_struct d[2];
	if (capget_(d) < 0)
		return false;
	return !(d[0].effective & ((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH)));
}

/* ---------- helpers ---------- */

static void run_cmd(char *const argv[])
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, 1);
			dup2(null, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* Last-resort cleanup that does not depend on the code under test. */
static void force_remove(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return;
	char *chmod_argv[] = { "chmod", "-R", "u+rwx", "--", (char *)path, NULL };
	char *rm_argv[] = { "rm", "-rf", "--", (char *)path, NULL };
	if (S_ISDIR(st.st_mode))
		run_cmd(chmod_argv);
	run_cmd(rm_argv);
}

static char *spath(const char *name)
{
	static char buf[4][2 * PATH_MAX];
	static int k;
	char *b = buf[k++ % 4];
	if ((size_t)snprintf(b, sizeof buf[0], "%s/%s", scratch, name) >= sizeof buf[0])
		fail_msg("path too long");
	return b;
}

static bool exists_at(int dfd, const char *name)
{
	struct stat st;
	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void mkfile_at(int dfd, const char *name, const char *content)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		fail_msg("create %s: %s", name, strerror(errno));
	size_t n = strlen(content);
	assert_int_equal(write(fd, content, n), (ssize_t)n);
	close(fd);
}

static void mkdir_at(int dfd, const char *name)
{
	if (mkdirat(dfd, name, 0755) < 0)
		fail_msg("mkdir %s: %s", name, strerror(errno));
}

static int open_dir(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fail_msg("open dir %s: %s", name, strerror(errno));
	return fd;
}

static char *slurp_at(int dfd, const char *name)
{
	size_t len;
	char *s = read_file_at(dfd, name, &len);
	if (!s)
		fail_msg("read %s: %s", name, strerror(errno));
	return s;
}

static void assert_content_at(int dfd, const char *name, const char *want)
{
	char *s = slurp_at(dfd, name);
	if (strcmp(s, want) != 0)
		fail_msg("%s holds \"%s\", want \"%s\"", name, s, want);
	free(s);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void assert_gone(int dfd, const char *name)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		fail_msg("%s still exists (mode %o)", name, st.st_mode);
	assert_int_equal(errno, ENOENT);
}

/* An outside directory and file that symlinks in the doomed trees point at. */
static void make_victims(void)
{
	mkdir_at(sfd, "victim");
	int v = open_dir(sfd, "victim");
	mkfile_at(v, "precious", "keep me");
	mkdir_at(v, "sub");
	int s = open_dir(v, "sub");
	mkfile_at(s, "also", "keep me too");
	close(s);
	close(v);
	mkfile_at(sfd, "victim-file", "victim file");
}

static void check_victims(void)
{
	struct stat st;
	assert_int_equal(fstatat(sfd, "victim", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0755);
	int v = open_dir(sfd, "victim");
	assert_content_at(v, "precious", "keep me");
	assert_content_at(v, "sub/also", "keep me too");
	close(v);
	assert_content_at(sfd, "victim-file", "victim file");
	assert_int_equal(fstatat(sfd, "victim-file", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
}

/* ---------- setup / teardown ---------- */

static int group_setup(void **state)
{
	(void)state;
	const char *base = getenv("TEST_SCRATCH");
	char b[PATH_MAX];
	if (!base || !*base)
		base = "build/test-scratch";
	snprintf(b, sizeof b, "%s", base);
	/* mkdir -p the base by hand: mkdir_p is under test */
	for (char *p = b + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(b, 0755);
			*p = '/';
		}
	}
	mkdir(b, 0755);
	char tmpl[PATH_MAX];
	snprintf(tmpl, sizeof tmpl, "%s/test_fs.XXXXXX", base);
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "mkdtemp %s: %s\n", tmpl, strerror(errno));
		return -1;
	}
	if (!realpath(tmpl, scratch)) {
		fprintf(stderr, "realpath %s: %s\n", tmpl, strerror(errno));
		return -1;
	}
	sfd = open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return sfd < 0 ? -1 : 0;
}

static int group_teardown(void **state)
{
	(void)state;
	restore_caps();
	if (sfd >= 0)
		close(sfd);
	force_remove(scratch);
	return 0;
}

/* After every test: capabilities back, and the scratch emptied for the next one. */
static int teardown(void **state)
{
	(void)state;
	restore_caps();
	umask(022);
	DIR *d = opendir(scratch);
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		force_remove(spath(e->d_name));
	}
	closedir(d);
	return 0;
}

/* ---------- rm_tree ---------- */

static void test_rm_tree_missing(void **state)
{
	(void)state;
	assert_int_equal(rm_tree_at(sfd, "does-not-exist"), 0);
	assert_int_equal(rm_tree(spath("does-not-exist")), 0);
}

static void test_rm_tree_non_directories(void **state)
{
	(void)state;
	make_victims();
	mkfile_at(sfd, "file", "x");
	assert_int_equal(rm_tree_at(sfd, "file"), 0);
	assert_gone(sfd, "file");

	/* a symlink to a directory: the link goes, never the target's content */
	assert_int_equal(symlinkat(spath("victim"), sfd, "link"), 0);
	assert_int_equal(rm_tree_at(sfd, "link"), 0);
	assert_gone(sfd, "link");
	assert_int_equal(symlinkat("victim", sfd, "rellink"), 0);
	assert_int_equal(rm_tree(spath("rellink")), 0);
	assert_gone(sfd, "rellink");
	assert_int_equal(symlinkat("nowhere", sfd, "dangling"), 0);
	assert_int_equal(rm_tree_at(sfd, "dangling"), 0);
	assert_gone(sfd, "dangling");
	check_victims();
}

static void test_rm_tree_plain(void **state)
{
	(void)state;
	mkdir_at(sfd, "plain");
	int t = open_dir(sfd, "plain");
	mkfile_at(t, "a", "a");
	mkdir_at(t, "empty");
	mkdir_at(t, "b");
	mkfile_at(t, "b/c", "c");
	mkdir_at(t, "b/d");
	mkdir_at(t, "b/d/e");
	mkfile_at(t, "b/d/e/f", "f");
	mkdir_at(t, "b/g");
	close(t);
	int before = count_fds();
	assert_int_equal(rm_tree(spath("plain")), 0);
	assert_int_equal(count_fds(), before);
	assert_gone(sfd, "plain");
	/* dirfd is untouched */
	struct stat st;
	assert_int_equal(fstat(sfd, &st), 0);

	mkdir_at(sfd, "empty");
	assert_int_equal(rm_tree_at(sfd, "empty"), 0);
	assert_gone(sfd, "empty");
}

/* A directory holding files and a subdirectory, then chmod'ed to mode. */
static void locked_dir(int dfd, const char *name, mode_t mode)
{
	mkdir_at(dfd, name);
	int d = open_dir(dfd, name);
	mkfile_at(d, "f1", "1");
	mkfile_at(d, "f2", "2");
	mkdir_at(d, "inner");
	int i = open_dir(d, "inner");
	mkfile_at(i, "g", "g");
	assert_int_equal(fchmod(i, mode), 0);
	close(i);
	assert_int_equal(fchmod(d, mode), 0);
	close(d);
}

static void test_rm_tree_readonly_dirs(void **state)
{
	(void)state;
	drop_dac();
	mkdir_at(sfd, "ro");
	int t = open_dir(sfd, "ro");
	locked_dir(t, "r-x", 0500);
	locked_dir(t, "none", 0000);
	locked_dir(t, "w-only", 0200);
	locked_dir(t, "wx-only", 0300);
	locked_dir(t, "x-only", 0100);
	locked_dir(t, "r-only", 0400);
	mkdir_at(t, "empty0000");
	assert_int_equal(fchmodat(t, "empty0000", 0000, 0), 0);
	mkfile_at(t, "ro-file", "x");
	assert_int_equal(fchmodat(t, "ro-file", 0000, 0), 0);
	/* nest a 0000 inside a 0500 inside a 0000 */
	mkdir_at(t, "nest");
	int n = open_dir(t, "nest");
	locked_dir(n, "mid", 0500);
	close(n);
	assert_int_equal(fchmodat(t, "nest", 0000, 0), 0);
	assert_int_equal(fchmod(t, 0500), 0);
	if (dac_enforced()) {
		/* the test is only worth something if the modes bite */
		assert_true(openat(t, "none", O_RDONLY | O_DIRECTORY) < 0 && errno == EACCES);
		assert_true(unlinkat(t, "ro-file", 0) < 0 && errno == EACCES);
	} else {
		print_message("note: cannot drop DAC capabilities; permission modes not enforced\n");
	}
	close(t);

	int before = count_fds();
	assert_int_equal(rm_tree_at(sfd, "ro"), 0);
	assert_int_equal(count_fds(), before);
	assert_gone(sfd, "ro");
}

static void test_rm_tree_top_locked(void **state)
{
	(void)state;
	drop_dac();
	locked_dir(sfd, "top0000", 0000);
	locked_dir(sfd, "top0500", 0500);
	locked_dir(sfd, "top0100", 0100);
	assert_int_equal(rm_tree_at(sfd, "top0000"), 0);
	assert_gone(sfd, "top0000");
	assert_int_equal(rm_tree(spath("top0500")), 0);
	assert_gone(sfd, "top0500");
	assert_int_equal(rm_tree(spath("top0100")), 0);
	assert_gone(sfd, "top0100");
}

#define DEPTH 5000

/* DEPTH nested directories "d", each with a file; some levels read-only or locked. The full
 * path (~2*DEPTH bytes) is far beyond PATH_MAX, so it is built one openat at a time. */
static void build_deep(const char *name, bool locks)
{
	mkdir_at(sfd, name);
	int cur = open_dir(sfd, name);
	for (int i = 0; i < DEPTH; i++) {
		mkfile_at(cur, "f", "x");
		if (mkdirat(cur, "d", 0700) < 0)
			fail_msg("mkdir at depth %d: %s", i, strerror(errno));
		int next = open_dir(cur, "d");
		if (locks && i % 97 == 50)
			assert_int_equal(fchmod(cur, 0500), 0);
		else if (locks && i % 211 == 100)
			assert_int_equal(fchmod(cur, 0000), 0);
		close(cur);
		cur = next;
	}
	mkfile_at(cur, "leaf", "bottom");
	close(cur);
}

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void test_rm_tree_deep(void **state)
{
	(void)state;
	drop_dac();
	build_deep("deep", true);
	assert_true(2 * DEPTH > PATH_MAX);
	int before = count_fds();
	/* CPU time, not wall time: the guard is against a quadratic walk, which burns CPU;
	 * waiting (a loaded machine, a sandbox that watches each unlink) is not its business */
	double t0 = cpu_now();
	assert_int_equal(rm_tree_at(sfd, "deep"), 0);
	double secs = cpu_now() - t0;
	assert_int_equal(count_fds(), before);
	assert_gone(sfd, "deep");
	if (secs > 20)
		fail_msg("removing a %d-deep tree took %.1fs of CPU", DEPTH, secs);

	/* and through the path-based entry point, without locks */
	build_deep("deep2", false);
	assert_int_equal(rm_tree(spath("deep2")), 0);
	assert_gone(sfd, "deep2");
}

static const char *const odd_names[] = {
	"\n", "a\nb", "trailing-newline\n", " ", "  leading spaces", "trailing space ", "-", "--", "-rf",
	"--help", "-n", "...", ".hidden", "..hidden", "\xff\xfe", "\x80", "caf\xe9", "\xc3\x28", "a\tb",
	"\x01\x02\x1b[31m", "*", "?", "[a-z]", "\\", "$(touch pwned)", "`id`", "'", "\"", "a;b", "~", "#",
};

static void test_rm_tree_odd_names(void **state)
{
	(void)state;
	mkdir_at(sfd, "odd");
	int t = open_dir(sfd, "odd");
	char longname[NAME_MAX + 1];
	memset(longname, 'L', NAME_MAX);
	longname[NAME_MAX] = '\0';
	mkfile_at(t, longname, "long");
	for (size_t i = 0; i < sizeof odd_names / sizeof odd_names[0]; i++) {
		char fname[64], dname[64];
		snprintf(fname, sizeof fname, "%s", odd_names[i]);
		snprintf(dname, sizeof dname, "dir%s", odd_names[i]);
		mkfile_at(t, fname, "x");
		mkdir_at(t, dname);
		int d = open_dir(t, dname);
		mkfile_at(d, odd_names[i], "y");
		mkdir_at(d, "--sub");
		mkfile_at(d, "--sub/\n", "z");
		close(d);
	}
	/* a directory whose own name is odd, holding the rest */
	mkdir_at(t, "-rf \n\xff");
	int d = open_dir(t, "-rf \n\xff");
	mkdir_at(d, "\n");
	mkfile_at(d, "\n/ ", "w");
	close(d);
	close(t);
	assert_int_equal(rm_tree_at(sfd, "odd"), 0);
	assert_gone(sfd, "odd");

	/* the top itself with an odd name */
	mkdir_at(sfd, "-\n \xff");
	t = open_dir(sfd, "-\n \xff");
	mkfile_at(t, "\n", "x");
	close(t);
	assert_int_equal(rm_tree_at(sfd, "-\n \xff"), 0);
	assert_gone(sfd, "-\n \xff");
}

static void make_socket_at(int dfd, const char *name)
{
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(cwd >= 0);
	assert_int_equal(fchdir(dfd), 0); /* bind a short relative name: sun_path is small */
	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof a.sun_path, "%s", name);
	int r = bind(s, (struct sockaddr *)&a, sizeof a);
	int e = errno;
	close(s);
	assert_int_equal(fchdir(cwd), 0);
	close(cwd);
	if (r < 0)
		fail_msg("bind %s: %s", name, strerror(e));
}

static void test_rm_tree_special_files(void **state)
{
	(void)state;
	make_victims();
	mkdir_at(sfd, "special");
	int t = open_dir(sfd, "special");
	assert_int_equal(mkfifoat(t, "fifo", 0600), 0);
	make_socket_at(t, "sock");
	mkdir_at(t, "sub");
	int s = open_dir(t, "sub");
	assert_int_equal(mkfifoat(s, "fifo2", 0000), 0);
	make_socket_at(s, "sock2");
	/* "." and ".." links, kept one level down so that even a remover that wrongly followed
	 * them would stay inside this test's scratch */
	assert_int_equal(symlinkat(".", s, "dot"), 0);
	assert_int_equal(symlinkat("..", s, "dotdot"), 0);
	assert_int_equal(fchmod(s, 0500), 0);
	close(s);
	/* a hard link to an outside file: the name goes, the file stays */
	assert_int_equal(linkat(sfd, "victim-file", t, "hardlink", 0), 0);
	/* symlink oddities */
	assert_int_equal(symlinkat("self", t, "self"), 0);
	assert_int_equal(symlinkat("nowhere/at/all", t, "dangling"), 0);
	/* a device node when we are allowed to make one */
	if (mknodat(t, "null", S_IFCHR | 0666, makedev(1, 3)) < 0)
		print_message("note: mknod not permitted (%s); no device node in the tree\n", strerror(errno));
	close(t);
	assert_int_equal(rm_tree_at(sfd, "special"), 0);
	assert_gone(sfd, "special");
	check_victims();
	struct stat st;
	assert_int_equal(fstatat(sfd, "victim-file", &st, 0), 0);
	assert_int_equal(st.st_nlink, 1);
}

static void test_rm_tree_symlinks_outside(void **state)
{
	(void)state;
	drop_dac();
	make_victims();
	mkdir_at(sfd, "links");
	int t = open_dir(sfd, "links");
	assert_int_equal(symlinkat(spath("victim"), t, "abs-dir"), 0);
	assert_int_equal(symlinkat("../victim", t, "rel-dir"), 0);
	assert_int_equal(symlinkat(spath("victim-file"), t, "abs-file"), 0);
	assert_int_equal(symlinkat("../victim/precious", t, "rel-file"), 0);
	assert_int_equal(symlinkat(spath("victim/sub"), t, "abs-sub"), 0);
	/* links with names that sort first and last, so they are met before/after real dirs */
	assert_int_equal(symlinkat(spath("victim"), t, "!first"), 0);
	assert_int_equal(symlinkat(spath("victim"), t, "~last"), 0);
	/* the same links deep inside, and inside locked directories */
	mkdir_at(t, "a");
	mkdir_at(t, "a/b");
	assert_int_equal(symlinkat(spath("victim"), t, "a/b/abs-dir"), 0);
	assert_int_equal(symlinkat("../../../victim", t, "a/b/rel-dir"), 0);
	mkfile_at(t, "a/b/file", "x");
	locked_dir(t, "locked", 0700);
	int l = open_dir(t, "locked");
	assert_int_equal(symlinkat(spath("victim"), l, "abs-dir"), 0);
	assert_int_equal(symlinkat(spath("victim"), l, "inner/abs-dir"), 0);
	assert_int_equal(fchmodat(l, "inner", 0000, 0), 0);
	assert_int_equal(fchmod(l, 0000), 0);
	close(l);
	assert_int_equal(fchmodat(t, "a/b", 0500, 0), 0);
	close(t);

	assert_int_equal(rm_tree_at(sfd, "links"), 0);
	assert_gone(sfd, "links");
	check_victims();
}

/* Many entries, many non-empty subdirectories: removed, and in reasonable time. */
/* A wide tree: 2000 files and 500 directories of 12 names each (8500 removals). The guard is
 * against a walk that grows faster than the tree, measured against the same number of
 * removals from one flat directory just before, in the same place: a sandbox that watches
 * each removal (warren's own write watch, when these tests run in a cell) makes both dearer
 * alike, so an absolute bound would measure the sandbox, not the walk. */
static void test_rm_tree_wide(void **state)
{
	(void)state;
	char name[64];
	mkdir_at(sfd, "flat");
	int f = open_dir(sfd, "flat");
	for (int i = 0; i < 8500; i++) {
		snprintf(name, sizeof name, "file-%04d", i);
		mkfile_at(f, name, "x");
	}
	close(f);
	double f0 = cpu_now();
	assert_int_equal(rm_tree_at(sfd, "flat"), 0);
	double flat = cpu_now() - f0;
	assert_gone(sfd, "flat");

	mkdir_at(sfd, "wide");
	int t = open_dir(sfd, "wide");
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof name, "file-%04d", i);
		mkfile_at(t, name, "x");
	}
	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof name, "dir-%04d", i);
		mkdir_at(t, name);
		int d = open_dir(t, name);
		for (int k = 0; k < 10; k++) {
			snprintf(name, sizeof name, "f%d", k);
			mkfile_at(d, name, "y");
		}
		mkdir_at(d, "sub");
		mkfile_at(d, "sub/z", "z");
		close(d);
	}
	close(t);
	double w0 = cpu_now();
	assert_int_equal(rm_tree_at(sfd, "wide"), 0);
	double wide = cpu_now() - w0;
	assert_gone(sfd, "wide");
	if (wide > 8 * flat + 2)
		fail_msg("removing a wide tree took %.1fs of CPU; as many names from a flat directory %.1fs", wide, flat);
}

/* A tree we cannot remove (its parent is read-only): an error comes back, no hang, no crash. */
static void test_rm_tree_reports_failure(void **state)
{
	(void)state;
	drop_dac();
	if (!dac_enforced())
		skip();
	mkdir_at(sfd, "parent");
	int p = open_dir(sfd, "parent");
	mkdir_at(p, "child");
	mkfile_at(p, "child/f", "x");
	assert_int_equal(fchmod(p, 0500), 0);
	int r = rm_tree_at(p, "child");
	assert_int_equal(r, -EACCES);
	assert_true(exists_at(p, "child"));
	assert_int_equal(fchmod(p, 0755), 0);
	close(p);
	assert_int_equal(rm_tree(spath("parent")), 0);
	assert_gone(sfd, "parent");
}

/* ---------- write_file_atomic ---------- */

static mode_t mode_at(int dfd, const char *name)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		fail_msg("stat %s: %s", name, strerror(errno));
	return st.st_mode;
}

static void test_atomic_create(void **state)
{
	(void)state;
	umask(022);
	assert_int_equal(write_file_atomic(spath("new"), "hello\n", 6, 0600), 0);
	assert_content_at(sfd, "new", "hello\n");
	assert_true(S_ISREG(mode_at(sfd, "new")));
	assert_int_equal(mode_at(sfd, "new") & 07777, 0600);
	assert_false(exists_at(sfd, "new.tmp"));

	assert_int_equal(write_file_atomic(spath("new640"), "x", 1, 0640), 0);
	assert_int_equal(mode_at(sfd, "new640") & 07777, 0640);
	assert_int_equal(write_file_atomic(spath("new644"), "x", 1, 0644), 0);
	assert_int_equal(mode_at(sfd, "new644") & 07777, 0644);

	assert_int_equal(write_file_atomic(spath("empty"), "", 0, 0644), 0);
	size_t len = 99;
	char *s = read_file(spath("empty"), &len);
	assert_non_null(s);
	assert_int_equal(len, 0);
	free(s);
}

/* is_atomic_tmp_name: the names write_file_atomic_at uses for its temporary file, which gc
 * removes from a dead run's directory, and nothing else. */
static void test_atomic_tmp_name(void **state)
{
	(void)state;
	char name[64];
	snprintf(name, sizeof name, "spec.json.tmp.%d", (int)getpid());
	assert_true(is_atomic_tmp_name(name));
	assert_true(is_atomic_tmp_name("pid.tmp.1"));
	assert_true(is_atomic_tmp_name("a.tmp.b.tmp.42"));
	assert_false(is_atomic_tmp_name("spec.json"));
	assert_false(is_atomic_tmp_name("spec.json.tmp."));
	assert_false(is_atomic_tmp_name("spec.json.tmp.12a"));
	assert_false(is_atomic_tmp_name("spec.json.tmp.1.x"));
	assert_false(is_atomic_tmp_name(".tmp.1"));
	assert_false(is_atomic_tmp_name("tmp"));
	assert_false(is_atomic_tmp_name("var-tmp"));
	assert_false(is_atomic_tmp_name(""));
}

static void test_atomic_binary_and_large(void **state)
{
	(void)state;
	size_t n = 3 * 1024 * 1024 + 17;
	char *data = malloc(n);
	assert_non_null(data);
	for (size_t i = 0; i < n; i++)
		data[i] = (char)(i * 131 + (i >> 9));
	data[0] = '\0';
	assert_int_equal(write_file_atomic(spath("big"), data, n, 0644), 0);
	size_t len = 0;
	char *back = read_file(spath("big"), &len);
	assert_non_null(back);
	assert_int_equal(len, n);
	assert_memory_equal(back, data, n);
	free(back);
	free(data);
	assert_false(exists_at(sfd, "big.tmp"));
}

/* Readers see the old file or the new one, never a half: an open reader keeps the old. */
static void test_atomic_replace(void **state)
{
	(void)state;
	assert_int_equal(write_file_atomic(spath("cfg"), "old contents", 12, 0644), 0);
	struct stat st_old, st_new;
	assert_int_equal(fstatat(sfd, "cfg", &st_old, 0), 0);
	int reader = openat(sfd, "cfg", O_RDONLY | O_CLOEXEC);
	assert_true(reader >= 0);
	assert_int_equal(write_file_atomic(spath("cfg"), "new", 3, 0644), 0);
	assert_int_equal(fstatat(sfd, "cfg", &st_new, 0), 0);
	assert_true(st_old.st_ino != st_new.st_ino); /* replaced by rename, not rewritten in place */
	char buf[64] = { 0 };
	assert_int_equal(read(reader, buf, sizeof buf - 1), 12);
	assert_string_equal(buf, "old contents");
	close(reader);
	assert_content_at(sfd, "cfg", "new");
	assert_false(exists_at(sfd, "cfg.tmp"));
	/* the mode argument applies to the new file */
	assert_int_equal(write_file_atomic(spath("cfg"), "newer", 5, 0600), 0);
	assert_int_equal(mode_at(sfd, "cfg") & 07777, 0600);
	assert_content_at(sfd, "cfg", "newer");
}

static void test_atomic_errors(void **state)
{
	(void)state;
	/* missing directory */
	assert_int_equal(write_file_atomic(spath("no-such-dir/f"), "x", 1, 0644), -ENOENT);
	assert_false(exists_at(sfd, "no-such-dir"));
	/* the target is a directory: refused, directory and its content intact, no tmp left */
	mkdir_at(sfd, "adir");
	mkfile_at(sfd, "adir/inside", "in");
	int r = write_file_atomic(spath("adir"), "x", 1, 0644);
	assert_true(r < 0);
	assert_true(S_ISDIR(mode_at(sfd, "adir")));
	assert_content_at(sfd, "adir/inside", "in");
	assert_false(exists_at(sfd, "adir.tmp"));
	/* a read-only directory: refused, old content intact */
	drop_dac();
	if (dac_enforced()) {
		mkdir_at(sfd, "rodir");
		mkfile_at(sfd, "rodir/f", "old");
		assert_int_equal(fchmodat(sfd, "rodir", 0500, 0), 0);
		assert_int_equal(write_file_atomic(spath("rodir/f"), "new", 3, 0644), -EACCES);
		assert_content_at(sfd, "rodir/f", "old");
		assert_false(exists_at(sfd, "rodir/f.tmp"));
	}
}

/* Writing over a symlink replaces the link; what it pointed at is untouched. */
static void test_atomic_over_symlink(void **state)
{
	(void)state;
	make_victims();
	assert_int_equal(symlinkat(spath("victim-file"), sfd, "link"), 0);
	assert_int_equal(write_file_atomic(spath("link"), "replaced", 8, 0644), 0);
	assert_true(S_ISREG(mode_at(sfd, "link")));
	assert_content_at(sfd, "link", "replaced");
	check_victims();
}

/* A stale "<path>.tmp" left by a crash, or planted as a symlink, must not be written through. */
static void test_atomic_stale_tmp_symlink(void **state)
{
	(void)state;
	make_victims();
	assert_int_equal(symlinkat(spath("victim-file"), sfd, "state.tmp"), 0);
	assert_int_equal(write_file_atomic(spath("state"), "new state", 9, 0644), 0);
	check_victims();
	assert_true(S_ISREG(mode_at(sfd, "state")));
	assert_content_at(sfd, "state", "new state");
}

/* A stale "<path>.tmp" with other permissions must not leak them into the new file. */
static void test_atomic_stale_tmp_mode(void **state)
{
	(void)state;
	mkfile_at(sfd, "secret.tmp", "stale");
	assert_int_equal(fchmodat(sfd, "secret.tmp", 0666, 0), 0);
	assert_int_equal(write_file_atomic(spath("secret"), "s3cret", 6, 0600), 0);
	assert_content_at(sfd, "secret", "s3cret");
	assert_int_equal(mode_at(sfd, "secret") & 07777, 0600);
}

/* ---------- mkdir_p ---------- */

static void assert_dir_mode(const char *rel, mode_t mode)
{
	struct stat st;
	if (fstatat(sfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		fail_msg("stat %s: %s", rel, strerror(errno));
	assert_true(S_ISDIR(st.st_mode));
	if ((st.st_mode & 07777) != mode)
		fail_msg("%s has mode %o, want %o", rel, st.st_mode & 07777, mode);
}

static void test_mkdir_p_basic(void **state)
{
	(void)state;
	umask(0);
	assert_int_equal(mkdir_p(spath("m/a/b/c"), 0750), 0);
	assert_dir_mode("m", 0750);
	assert_dir_mode("m/a", 0750);
	assert_dir_mode("m/a/b/c", 0750);
	/* idempotent, and existing components keep their mode */
	assert_int_equal(mkdir_p(spath("m/a/b/c"), 0700), 0);
	assert_dir_mode("m/a/b/c", 0750);
	assert_int_equal(mkdir_p(spath("m/a/x"), 0700), 0);
	assert_dir_mode("m/a", 0750);
	assert_dir_mode("m/a/x", 0700);
	/* trailing and doubled slashes */
	assert_int_equal(mkdir_p(spath("t//u///v/"), 0755), 0);
	assert_dir_mode("t/u/v", 0755);
	assert_int_equal(mkdir_p(spath("t/u/v/"), 0755), 0);
	/* existing roots */
	assert_int_equal(mkdir_p("/", 0755), 0);
	assert_int_equal(mkdir_p(scratch, 0755), 0);
	/* through a symlink to a directory */
	assert_int_equal(symlinkat("m/a", sfd, "alink"), 0);
	assert_int_equal(mkdir_p(spath("alink/y/z"), 0755), 0);
	assert_dir_mode("m/a/y/z", 0755);
	assert_int_equal(mkdir_p(spath("alink"), 0755), 0);
}

static void test_mkdir_p_relative(void **state)
{
	(void)state;
	int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(cwd >= 0);
	assert_int_equal(fchdir(sfd), 0);
	int r1 = mkdir_p("rel/one/two", 0755);
	int r2 = mkdir_p("single", 0755);
	assert_int_equal(fchdir(cwd), 0);
	close(cwd);
	assert_int_equal(r1, 0);
	assert_int_equal(r2, 0);
	assert_dir_mode("rel/one/two", 0755 & ~022);
	assert_dir_mode("single", 0755 & ~022);
}

static void test_mkdir_p_file_in_the_way(void **state)
{
	(void)state;
	mkfile_at(sfd, "plainfile", "x");
	/* a file as an intermediate component */
	assert_int_equal(mkdir_p(spath("plainfile/sub/dir"), 0755), -ENOTDIR);
	assert_true(S_ISREG(mode_at(sfd, "plainfile")));
	/* a file as the last component: "mkdir -p file" fails, the caller must not believe a
	 * directory is there */
	int r = mkdir_p(spath("plainfile"), 0755);
	if (r == 0)
		fail_msg("mkdir_p on an existing regular file returned 0");
	assert_true(r == -EEXIST || r == -ENOTDIR);
	/* the same for a dangling symlink */
	assert_int_equal(symlinkat("nowhere", sfd, "dangle"), 0);
	r = mkdir_p(spath("dangle"), 0755);
	if (r == 0)
		fail_msg("mkdir_p on a dangling symlink returned 0");
}

static void test_mkdir_p_readonly_parent(void **state)
{
	(void)state;
	drop_dac();
	if (!dac_enforced())
		skip();
	mkdir_at(sfd, "rop");
	assert_int_equal(fchmodat(sfd, "rop", 0500, 0), 0);
	assert_int_equal(mkdir_p(spath("rop/a/b"), 0755), -EACCES);
	assert_false(exists_at(sfd, "rop/a"));
}

/* "" has no component to make: an error, and no read past the string (run in a child so an
 * ASan report fails this test only). */
static void test_mkdir_p_empty(void **state)
{
	(void)state;
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int r = mkdir_p("", 0755);
		_exit(r == -ENOENT ? 0 : 3);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("mkdir_p(\"\") in a child: %s %d (want exit 0: returned -ENOENT)",
			 WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* ---------- read_file / write_file (small smoke test) ---------- */

static void test_write_read_file(void **state)
{
	(void)state;
	assert_int_equal(write_file(spath("plain.txt"), "abc\0def", 7), 0);
	size_t len = 0;
	char *s = read_file(spath("plain.txt"), &len);
	assert_non_null(s);
	assert_int_equal(len, 7);
	assert_memory_equal(s, "abc\0def", 8);
	free(s);
	errno = 0;
	assert_null(read_file(spath("missing.txt"), &len));
	assert_int_equal(errno, ENOENT);
}

/* path_beneath: by the text, at a '/' boundary; "/" holds all, NULL none. */
static void test_path_beneath(void **state)
{
	(void)state;
	static const struct { const char *path, *dir; bool want; } cases[] = {
		{ "/usr", "/usr", true },        { "/usr/lib", "/usr", true },   { "/usr/lib/x", "/usr", true },
		{ "/usrlocal", "/usr", false },  { "/us", "/usr", false },       { "/", "/usr", false },
		{ "/anything", "/", true },      { "/", "/", true },             { "/work/repo/.git/hooks", "/work/repo/.git/hooks", true },
		{ "/work/repo/.git/hooksx", "/work/repo/.git/hooks", false },    { "/tmp/x", NULL, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (path_beneath(cases[i].path, cases[i].dir) != cases[i].want)
			fail_msg("path_beneath(%s, %s) != %d", cases[i].path, cases[i].dir ? cases[i].dir : "NULL", cases[i].want);
}

#define T(f) cmocka_unit_test_teardown(f, teardown)

/* fd_send/fd_recv: a descriptor and its message arrive together, usable and close-on-exec;
 * a message without one gives -1; nothing waiting gives -EAGAIN; a closed peer gives 0. */
static void test_fd_pass(void **state)
{
	(void)state;
	int sv[2], p[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe(p), 0);
	int32_t out = 42, in = 0;
	int fd = 7;
	assert_int_equal(fd_recv(sv[0], MSG_DONTWAIT, &in, sizeof in, &fd), -EAGAIN);
	assert_int_equal(fd, -1);
	assert_int_equal(fd_send(sv[1], p[1], &out, sizeof out), 0);
	assert_int_equal(fd_recv(sv[0], 0, &in, sizeof in, &fd), (ssize_t)sizeof in);
	assert_int_equal(in, 42);
	assert_true(fd >= 0 && fd != p[1]);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(fd, "x", 1), 1);   /* the pipe's write end, passed */
	char c = 0;
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(c, 'x');
	close(fd);
	assert_int_equal(fd_send(sv[1], -1, &out, sizeof out), 0);
	assert_int_equal(fd_recv(sv[0], 0, &in, sizeof in, &fd), (ssize_t)sizeof in);
	assert_int_equal(fd, -1);
	close(sv[1]);
	assert_int_equal(fd_recv(sv[0], 0, &in, sizeof in, &fd), 0);
	close(sv[0]);
	close(p[0]);
	close(p[1]);
}

/* fd_queued/fd_writer_open: what a pipe's read end holds, and whether anyone (here: the
 * write end passed over a socket, as a job could pass its stdout) still holds its write end. */
static void test_read_end(void **state)
{
	(void)state;
	int sv[2], p[2], held = -1;
	int32_t m = 0;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fd_queued(p[0]), 0);
	assert_true(fd_writer_open(p[0]));
	assert_int_equal(write(p[1], "abc", 3), 3);
	assert_int_equal(fd_queued(p[0]), 3);
	assert_int_equal(fd_send(sv[1], p[1], &m, sizeof m), 0);
	close(p[1]);
	assert_true(fd_writer_open(p[0]));     /* in flight in the socket */
	assert_int_equal(fd_recv(sv[0], 0, &m, sizeof m, &held), (ssize_t)sizeof m);
	assert_true(fd_writer_open(p[0]));     /* held by the receiver */
	close(held);
	assert_false(fd_writer_open(p[0]));    /* the end: POLLHUP, data or not */
	assert_int_equal(fd_queued(p[0]), 3);
	close(p[0]);
	close(sv[0]);
	close(sv[1]);
	assert_int_equal(fd_queued(-1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_beneath),
		T(test_rm_tree_missing),
		T(test_rm_tree_non_directories),
		T(test_rm_tree_plain),
		T(test_rm_tree_readonly_dirs),
		T(test_rm_tree_top_locked),
		T(test_rm_tree_deep),
		T(test_rm_tree_odd_names),
		T(test_rm_tree_special_files),
		T(test_rm_tree_symlinks_outside),
		T(test_rm_tree_wide),
		T(test_rm_tree_reports_failure),
		T(test_atomic_create),
		T(test_atomic_tmp_name),
		T(test_atomic_binary_and_large),
		T(test_atomic_replace),
		T(test_atomic_errors),
		T(test_atomic_over_symlink),
		T(test_atomic_stale_tmp_symlink),
		T(test_atomic_stale_tmp_mode),
		T(test_fd_pass),
		T(test_read_end),
		T(test_mkdir_p_basic),
		T(test_mkdir_p_relative),
		T(test_mkdir_p_file_in_the_way),
		T(test_mkdir_p_readonly_parent),
		T(test_mkdir_p_empty),
		T(test_write_read_file),
	};
	return cmocka_run_group_tests_name("fs", tests, group_setup, group_teardown);
}
