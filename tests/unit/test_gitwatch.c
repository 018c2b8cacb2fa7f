/* SPDX-License-Identifier: Apache-2.0 */
/* test_gitwatch.c - what fanotify tells the git check (policy/gitwatch.h): on a tree made here,
 * the directories changed while watched, and no others; a directory made whole; a file written
 * through a hard link that is then removed, at the name it has left; a file written through a
 * shared mapping and still open; then the check over those directories (gitguard.h) moves
 * aside what the whole walk would. Needs CAP_SYS_ADMIN (fanotify's filesystem marks): skipped
 * otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy/gitguard.h"
#include "policy/gitwatch.h"
#include "util/fs.h"

static char *at(const char *dir, const char *name)
{
	static char p[4096];
	if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p)
		fail_msg("path too long: %s/%s", dir, name);
	return p;
}

static void put(const char *dir, const char *name, const char *text)
{
	int fd = open(at(dir, name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void mk(const char *dir, const char *name)
{
	assert_int_equal(mkdir_p(at(dir, name), 0755), 0);
}

static void repo(const char *dir, const char *name)
{
	char p[4096];
	const char *sub[] = { "objects", "refs", "hooks" };
	for (size_t i = 0; i < 3; i++) {
		if (snprintf(p, sizeof p, "%s/.git/%s", name, sub[i]) >= (int)sizeof p)
			fail();
		mk(dir, p);
	}
	if (snprintf(p, sizeof p, "%s/.git/HEAD", name) >= (int)sizeof p)
		fail();
	put(dir, p, "ref: refs/heads/main\n");
	if (snprintf(p, sizeof p, "%s/.git/config", name) >= (int)sizeof p)
		fail();
	put(dir, p, "[core]\n\tbare = false\n");
}

static bool listed(const struct git_changed *v, size_t n, const char *rel, bool full)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].rel, rel) && v[i].full == full)
			return true;
	return false;
}

static bool moved(const struct git_audit *a, const char *path)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i].path, path) && a->v[i].action == GIT_MOVED)
			return true;
	return false;
}

static void watch_names_what_changed(void **state)
{
	(void)state;
	char tmpl[] = "build/test-scratch/gitwatch.XXXXXX";
	assert_int_equal(mkdir_p("build/test-scratch", 0755), 0);
	char *w = mkdtemp(tmpl);
	assert_non_null(w);
	/* before the run: quiet directories, repositories deep down */
	mk(w, "a/b/c/quiet");
	mk(w, "x/y");
	repo(w, "a/b/linked");
	repo(w, "a/b/mapped");
	repo(w, "x/y/plain");
	struct timespec since;
	clock_gettime(CLOCK_REALTIME_COARSE, &since);
	since.tv_sec += 1;  /* what was made above is "before" */
	struct timespec t;
	while (clock_gettime(CLOCK_REALTIME_COARSE, &t), t.tv_sec < since.tv_sec || (t.tv_sec == since.tv_sec && t.tv_nsec < since.tv_nsec + 20000000))
		usleep(10000);

	int wfd = open(w, O_PATH | O_DIRECTORY);
	assert_true(wfd >= 0);
	const char *why = NULL;
	struct git_watch *g = git_watch_start(wfd, &why);
	if (!g) {
		close(wfd);
		rm_tree(w);
		if (geteuid() == 0)  /* root marks a local file system: a refusal here is a failure */
			fail_msg("no fanotify watch as root on %s: %s", w, why ? why : "?");
		skip();  /* not root: no filesystem mark */
	}
	/* the run: a gitfile in a new tree; a config written through a hard link, the link
	 * removed; a config written through a shared mapping, the file still open */
	mk(w, "new/deep/er");
	put(w, "new/deep/er/.git", "gitdir: /elsewhere\n");
	char target[4096];
	snprintf(target, sizeof target, "%s", at(w, "a/b/linked/.git/config"));
	assert_int_equal(link(target, at(w, "x/link")), 0);
	int fd = open(at(w, "x/link"), O_WRONLY | O_APPEND);
	assert_int_equal(write(fd, "[core]\n\tfsmonitor = x\n", 22), 22);
	close(fd);
	assert_int_equal(unlink(at(w, "x/link")), 0);
	int mfd = open(at(w, "a/b/mapped/.git/config"), O_RDWR);
	assert_true(mfd >= 0);
	char *p = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	assert_true(p != MAP_FAILED);
	memcpy(p, "[x]\n\tx=1", 8);
	munmap(p, 8);
	git_watch_drain(g);

	struct git_changed *v = NULL;
	size_t n = 0;
	assert_int_equal(git_watch_changed(g, wfd, &v, &n, &why), 0);
	assert_true(listed(v, n, "new/deep", true));        /* made whole */
	assert_true(listed(v, n, "new/deep/er", false));
	assert_true(listed(v, n, "x", false));               /* the link's directory */
	assert_true(listed(v, n, "a/b/linked/.git", false)); /* where the file's last name is */
	assert_true(listed(v, n, "a/b/mapped/.git", false)); /* the open of the mapped file */
	for (size_t i = 0; i < n; i++) {
		assert_null(strstr(v[i].rel, "quiet"));
		assert_null(strstr(v[i].rel, "plain"));
	}
	struct git_audit a;
	git_audit_changed(wfd, &since, ".warren-test", v, n, &a);
	assert_string_equal(a.method, "fanotify");
	assert_true(moved(&a, "new/deep/er/.git"));
	assert_true(moved(&a, "a/b/linked/.git/config"));
	assert_true(moved(&a, "a/b/mapped/.git/config"));
	assert_int_equal(a.total, 3);
	assert_true(a.dirs < 20);
	git_audit_free(&a);
	git_changed_free(v, n);
	git_watch_free(g);
	close(mfd);
	close(wfd);
	assert_int_equal(rm_tree(w), 0);
}

/* A file system whose changes may not all pass through this kernel (here procfs, as a network
 * or FUSE one would be) gets no watch: the full walk, and why. */
static void unfit_file_system_is_walked(void **state)
{
	(void)state;
	int fd = open("/proc/self", O_PATH | O_DIRECTORY);
	assert_true(fd >= 0);
	const char *why = NULL;
	struct git_watch *g = git_watch_start(fd, &why);
	assert_null(g);
	assert_non_null(why);
	assert_non_null(strstr(why, "network, FUSE or unknown file system"));
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unfit_file_system_is_walked),
		cmocka_unit_test(watch_names_what_changed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
