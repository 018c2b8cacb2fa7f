/* SPDX-License-Identifier: Apache-2.0 */
/* test_gitguard.c - the git check's decisions (policy/gitguard.h): which entries of a git
 * directory git obeys, what makes a directory a bare repository, hooks that run, a linked
 * worktree's standard commondir, the worktree paths a repository's config names, and the
 * walk itself on a small tree made here (what it moves aside, what it leaves). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy/gitguard.h"
#include "util/fs.h"

static void control_kinds(void **state)
{
	(void)state;
	static const struct { const char *path; enum git_control k; } cases[] = {
		{ "config", GIT_CONFIG }, { "config.worktree", GIT_CONFIG }, { "commondir", GIT_REDIRECT },
		{ "hooks", GIT_HOOKS }, { "info/attributes", GIT_ATTRIBUTES }, { "objects/info/alternates", GIT_ALTERNATES },
		{ "objects/info/http-alternates", GIT_ALTERNATES }, { "remotes", GIT_REMOTES }, { "branches", GIT_REMOTES },
		{ "rebase-merge", GIT_TODO }, { "rebase-apply", GIT_TODO }, { "sequencer", GIT_TODO },
		{ "HEAD", GIT_DATA }, { "index", GIT_DATA }, { "objects", GIT_DATA }, { "refs/heads/main", GIT_DATA },
		{ "info/exclude", GIT_DATA }, { "packed-refs", GIT_DATA }, { "logs/HEAD", GIT_DATA },
		{ "config.lock", GIT_DATA }, { "hooks/pre-commit", GIT_DATA }, { "CONFIG", GIT_DATA },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (git_control_of(cases[i].path) != cases[i].k)
			fail_msg("%s: kind %d, expected %d", cases[i].path, git_control_of(cases[i].path), cases[i].k);
		assert_non_null(git_control_what(cases[i].k));
	}
}

static void bare_repositories(void **state)
{
	(void)state;
	assert_true(git_dir_looks_like(true, true, true, false));
	assert_true(git_dir_looks_like(true, false, false, true));
	assert_false(git_dir_looks_like(true, true, false, false));
	assert_false(git_dir_looks_like(false, true, true, true));
	assert_false(git_dir_looks_like(true, false, true, false));
}

static void hooks_and_commondir(void **state)
{
	(void)state;
	assert_true(git_hook_name_runs("pre-commit"));
	assert_true(git_hook_name_runs("post-checkout"));
	assert_true(git_hook_name_runs("anything"));
	assert_false(git_hook_name_runs("pre-commit.sample"));
	assert_false(git_hook_name_runs("."));
	assert_false(git_hook_name_runs(".."));
	assert_true(git_hook_name_runs(".sample-not"));
	assert_true(git_commondir_is_standard("../..\n"));
	assert_true(git_commondir_is_standard("../.."));
	assert_false(git_commondir_is_standard("../../../.e\n"));
	assert_false(git_commondir_is_standard("/elsewhere\n"));
	assert_false(git_commondir_is_standard(""));
}

static void config_paths(void **state)
{
	(void)state;
	static const struct { const char *text; const char *want; } cases[] = {
		{ "[core]\n\thooksPath = .husky/_\n", ".husky/_" },
		{ "[core]\n\thookspath=.githooks # comment\n", ".githooks" },
		{ "[CORE]\n\tHooksPath = \"my hooks\"\n", "my hooks" },
		{ "[core]\n\thooksPath = /src/app/tools/hooks\n", "tools/hooks" },
		{ "[core]\n\thooksPath = /elsewhere/hooks\n", "" },
		{ "[core]\n\thooksPath = ../outside\n", "" },
		{ "[core]\n\thooksPath = ~/hooks\n", "" },
		{ "[include]\n\tpath = ../shared.gitconfig\n", "shared.gitconfig" },
		{ "[include]\n\tpath = extra.cfg\n", ".git/extra.cfg" },
		{ "[includeIf \"gitdir:/src/\"]\n\tpath = ../ci/git.cfg\n", "ci/git.cfg" },
		{ "[include]\n\tpath = ../../x\n", "" },
		{ "[remote \"origin\"]\n\tpath = ../nothing\n", "" },
		{ "[core] hooksPath = h\n", "h" },
		{ "[core]\n\thooksPath = a\\\n/b\n", "a/b" },
		{ "[core]\n\t# hooksPath = commented\n", "" },
		{ "[core.sub]\n\thooksPath = notcore\n", "" },
		{ "[core]\n\thooksPath = .\n", "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char **v = git_config_worktree_paths(cases[i].text, "/src/app");
		const char *got = v && v[0] ? v[0] : "";
		if (strcmp(got, cases[i].want) != 0)
			fail_msg("case %zu: got '%s', expected '%s'", i, got, cases[i].want);
		for (size_t k = 0; v && v[k]; k++)
			free(v[k]);
		free(v);
	}
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void mk(const char *dir, const char *name)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	assert_int_equal(mkdir_p(p, 0755), 0);
}

static bool exists(const char *dir, const char *name)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%s", dir, name);
	struct stat st;
	return lstat(p, &st) == 0;
}

static const struct git_finding *find(const struct git_audit *a, const char *path)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i].path, path))
			return &a->v[i];
	return NULL;
}

static void walk_moves_what_changed(void **state)
{
	(void)state;
	char tmpl[] = "build/test-scratch/gitguard.XXXXXX";
	assert_int_equal(mkdir_p("build/test-scratch", 0755), 0);
	char *w = mkdtemp(tmpl);
	assert_non_null(w);
	/* before the run: a repository with data, a config and sample hooks; an old nested one */
	mk(w, ".git/objects/info");
	mk(w, ".git/refs/heads");
	mk(w, ".git/hooks");
	put(w, ".git/HEAD", "ref: refs/heads/main\n");
	put(w, ".git/config", "[core]\n");
	put(w, ".git/hooks/pre-commit.sample", "#!/bin/sh\n");
	mk(w, "old/.git/objects");
	mk(w, "old/.git/refs");
	put(w, "old/.git/HEAD", "ref: refs/heads/main\n");
	put(w, "old/.git/config", "[core]\n");
	/* the run starts: file times are the kernel's coarse clock */
	struct timespec since;
	clock_gettime(CLOCK_REALTIME_COARSE, &since);
	since.tv_sec += 1;   /* what was made above is "before" */
	struct timespec t = since;
	while (clock_gettime(CLOCK_REALTIME_COARSE, &t), t.tv_sec < since.tv_sec || (t.tv_sec == since.tv_sec && t.tv_nsec < since.tv_nsec + 20000000))
		usleep(10000);
	/* the job: data, a new hook sample, a commondir, a nested repository, a gitfile, a bare one */
	put(w, ".git/index", "DIRC");
	put(w, ".git/hooks/post-update.sample", "#!/bin/sh\n");
	put(w, ".git/commondir", "../.e\n");
	mk(w, "vendor/lib/.git/objects");
	mk(w, "vendor/lib/.git/refs");
	put(w, "vendor/lib/.git/HEAD", "ref: refs/heads/main\n");
	put(w, "vendor/lib/.git/config", "[core]\n\tfsmonitor = x\n");
	mk(w, "sub");
	put(w, "sub/.git", "gitdir: ../.e\n");
	mk(w, "bare/r.git/objects");
	mk(w, "bare/r.git/refs");
	put(w, "bare/r.git/HEAD", "ref: refs/heads/main\n");
	put(w, "bare/r.git/config", "[core]\n\tpager = x\n");
	mk(w, "old/.git/hooks");
	put(w, "old/.git/hooks/pre-commit", "#!/bin/sh\n");

	int fd = open(w, O_PATH | O_DIRECTORY);
	assert_true(fd >= 0);
	struct git_audit a;
	git_audit_worktree(fd, &since, ".warren-test", &a);
	close(fd);
	const struct git_finding *f;
	assert_non_null(f = find(&a, ".git/commondir"));
	assert_int_equal(f->action, GIT_MOVED);
	assert_string_equal(f->moved_to, ".git/commondir.warren-test");
	assert_non_null(find(&a, "vendor/lib/.git/config"));
	assert_non_null(find(&a, "sub/.git"));
	assert_non_null(find(&a, "bare/r.git/config"));
	assert_non_null(find(&a, "old/.git/hooks"));
	assert_null(find(&a, ".git/config"));
	assert_null(find(&a, ".git/hooks"));
	assert_null(find(&a, ".git/index"));
	assert_null(find(&a, "old/.git/config"));
	assert_int_equal(a.total, 5);
	assert_false(exists(w, ".git/commondir"));
	assert_true(exists(w, ".git/commondir.warren-test"));
	assert_false(exists(w, "sub/.git"));
	assert_true(exists(w, "sub/.git.warren-test"));
	assert_true(exists(w, ".git/config"));
	assert_true(exists(w, "old/.git/hooks.warren-test"));
	git_audit_free(&a);
	/* a second look moves nothing more (changed repositories are still named), and a taken
	 * name gets another */
	fd = open(w, O_PATH | O_DIRECTORY);
	git_audit_worktree(fd, &since, ".warren-test", &a);
	for (size_t i = 0; i < a.n; i++)
		if (a.v[i].action != GIT_REPORTED)
			fail_msg("second look: %s %d", a.v[i].path, a.v[i].action);
	git_audit_free(&a);
	put(w, ".git/commondir", "../.f\n");
	git_audit_worktree(fd, &since, ".warren-test", &a);
	assert_non_null(f = find(&a, ".git/commondir"));
	assert_string_equal(f->moved_to, ".git/commondir.warren-test.2");
	git_audit_free(&a);
	close(fd);
	assert_int_equal(rm_tree(w), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(control_kinds),
		cmocka_unit_test(bare_repositories),
		cmocka_unit_test(hooks_and_commondir),
		cmocka_unit_test(config_paths),
		cmocka_unit_test(walk_moves_what_changed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
