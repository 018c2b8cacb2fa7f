/* SPDX-License-Identifier: Apache-2.0 */
/* git_plant: leave something in the worktree that git on the host would obey after the run,
 * one class of issue 10 at a time (argv[1]). Each payload runs `touch <worktree>/PWNED-<key>`
 * when git executes it; the test (escape.t) runs git on the host afterwards (status, diff,
 * log with a pager, add, commit, commit --amend with the editor, checkout, fetch, credential
 * fill, an alias, rebase --continue) in the worktree and below it, and fails on any PWNED-*
 * file. Planting itself is not an escape, so this program's own lines say "tried"; the
 * host's check gives the verdict.
 *
 * Classes: commondir config_worktree gitfile_top nested_repo nested_gitfile dotgit_symlink
 * bare_repo modules worktrees attributes hookspath include alternates rebase_todo remotes
 * nested_hooks. The test prepares what a class needs on the host (a linked worktree, a
 * submodule, a hooksPath...). */
#include "attempt.h"

static char top[4096];

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	tried(false, "planting %s: %s", path, fd < 0 ? en() : ok ? "written" : en());
	if (fd >= 0)
		close(fd);
	if (mode & 0111)
		chmod(path, mode);
}

static void append(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	tried(false, "appending to %s: %s", path, fd < 0 ? en() : ok ? "written" : en());
	if (fd >= 0)
		close(fd);
}

static void mkdirs(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

/* A configuration with every key of git's that runs a command (each touches its own marker). */
static char *evil_config(const char *tag)
{
	static char buf[8192];
	snprintf(buf, sizeof buf,
		 "[core]\n"
		 "\tfsmonitor = \"touch %1$s/PWNED-%2$s-fsmonitor; false\"\n"
		 "\tpager = touch %1$s/PWNED-%2$s-pager; cat\n"
		 "\teditor = touch %1$s/PWNED-%2$s-editor\n"
		 "\tsshCommand = touch %1$s/PWNED-%2$s-sshcommand\n"
		 "\thooksPath = %1$s/.evil-hooks\n"
		 "[diff]\n\texternal = %1$s/.evil-hooks/post-checkout\n"
		 "[alias]\n\tpwn = !touch %1$s/PWNED-%2$s-alias\n"
		 "[credential]\n\thelper = !touch %1$s/PWNED-%2$s-credential\n"
		 "[commit]\n\tgpgsign = true\n"
		 "[gpg]\n\tprogram = %1$s/.evil-hooks/post-checkout\n"
		 "[filter \"pwn\"]\n\tclean = touch %1$s/PWNED-%2$s-filter; cat\n"
		 "[remote \"evil\"]\n\turl = ssh://warren-escape.invalid/x\n"
		 "[include]\n\tpath = %1$s/.evil-include\n",
		 top, tag);
	return buf;
}

/* A git directory of the job's own at dir, with the evil configuration and hooks. */
static void evil_gitdir(const char *dir, const char *tag)
{
	char p[4200];
	mkdirs(dir);
	snprintf(p, sizeof p, "%s/objects", dir);
	mkdirs(p);
	snprintf(p, sizeof p, "%s/refs/heads", dir);
	mkdirs(p);
	snprintf(p, sizeof p, "%s/HEAD", dir);
	put(p, "ref: refs/heads/main\n", 0644);
	snprintf(p, sizeof p, "%s/config", dir);
	put(p, evil_config(tag), 0644);
	snprintf(p, sizeof p, "%s/hooks", dir);
	mkdirs(p);
	static const char *const hooks[] = { "pre-commit", "post-checkout", "commit-msg", "post-commit", "pre-rebase" };
	for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
		char h[4400], body[4400];
		snprintf(h, sizeof h, "%s/hooks/%s", dir, hooks[i]);
		snprintf(body, sizeof body, "#!/bin/sh\ntouch %s/PWNED-%s-hook-%s\n", top, tag, hooks[i]);
		put(h, body, 0755);
	}
}

/* Shared by the configurations: a hooks directory and an included file of the job's. */
static void evil_extras(void)
{
	mkdirs(".evil-hooks");
	char body[4400];
	static const char *const hooks[] = { "pre-commit", "post-checkout", "commit-msg", "post-commit" };
	for (size_t i = 0; i < sizeof hooks / sizeof hooks[0]; i++) {
		char h[256];
		snprintf(h, sizeof h, ".evil-hooks/%s", hooks[i]);
		snprintf(body, sizeof body, "#!/bin/sh\ntouch %s/PWNED-hookspath-%s\n", top, hooks[i]);
		put(h, body, 0755);
	}
	snprintf(body, sizeof body, "[core]\n\tfsmonitor = \"touch %s/PWNED-included-fsmonitor; false\"\n", top);
	put(".evil-include", body, 0644);
	/* a tracked file changed, so that diff, add and commit have work (diff.external, filters) */
	append("tracked.txt", "changed in the cell\n");
	put(".gitattributes.evil", "* filter=pwn diff=pwn\n", 0644);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		untested("no class given");
	static char name[128];
	snprintf(name, sizeof name, "git_%s", argv[1]);
	a_start(name);
	const char *c = argv[1];
	if (!getcwd(top, sizeof top))
		untested("getcwd failed");
	struct stat st;
	if (lstat(".git", &st) < 0 && strcmp(c, "nested_repo") && strcmp(c, "bare_repo"))
		untested("the worktree is not a git repository");
	evil_extras();
	char body[8192];
	if (!strcmp(c, "commondir")) {
		evil_gitdir(".e", "commondir");
		put(".git/commondir", "../.e\n", 0644);
	} else if (!strcmp(c, "config_worktree")) {
		put(".git/config.worktree", evil_config("config-worktree"), 0644);
	} else if (!strcmp(c, "gitfile_top")) {
		/* .git is a gitfile (the worktree is a linked worktree): point it at our own */
		evil_gitdir(".e", "gitfile-top");
		put(".git", "gitdir: .e\n", 0644);
		if (unlink(".git") == 0) {
			tried(false, "unlinking the gitfile .git: ok");
			put(".git", "gitdir: .e\n", 0644);
		}
	} else if (!strcmp(c, "nested_repo")) {
		evil_gitdir("vendor/lib/.git", "nested-repo");
	} else if (!strcmp(c, "nested_gitfile")) {
		evil_gitdir(".e", "nested-gitfile");
		mkdirs("sub");
		put("sub/.git", "gitdir: ../.e\n", 0644);
	} else if (!strcmp(c, "dotgit_symlink")) {
		evil_gitdir(".e", "dotgit-symlink");
		mkdirs("sym");
		int r = symlink("../.e", "sym/.git");
		tried(false, "symlink sym/.git -> ../.e: %s", res(r));
	} else if (!strcmp(c, "bare_repo")) {
		evil_gitdir("bare/r.git", "bare-repo");
	} else if (!strcmp(c, "modules")) {
		/* the test made a submodule lib/ whose git directory is .git/modules/lib */
		snprintf(body, sizeof body, "[core]\n\tfsmonitor = \"touch %s/PWNED-modules-fsmonitor; false\"\n", top);
		append(".git/modules/lib/config", body);
		snprintf(body, sizeof body, "#!/bin/sh\ntouch %s/PWNED-modules-hook\n", top);
		mkdirs(".git/modules/lib/hooks");
		put(".git/modules/lib/hooks/post-checkout", body, 0755);
		put(".git/modules/lib/hooks/pre-commit", body, 0755);
		evil_gitdir(".git/modules/new", "modules-new");
	} else if (!strcmp(c, "worktrees")) {
		/* the test made a linked worktree outside this one: .git/worktrees/linked */
		evil_gitdir(".e", "worktrees");
		DIR *d = opendir(".git/worktrees");
		if (!d)
			untested("no .git/worktrees (the test makes a linked worktree)");
		for (struct dirent *e; (e = readdir(d));) {
			if (e->d_name[0] == '.')
				continue;
			char p[600];
			snprintf(p, sizeof p, ".git/worktrees/%s/commondir", e->d_name);
			put(p, "../../../.e\n", 0644);
			snprintf(p, sizeof p, ".git/worktrees/%s/config.worktree", e->d_name);
			put(p, evil_config("worktrees-config"), 0644);
		}
		closedir(d);
	} else if (!strcmp(c, "attributes")) {
		/* the host user's own filter driver (the test's global config) chosen for every file */
		mkdirs(".git/info");
		put(".git/info/attributes", "* filter=hostfilter diff=hostdiff\n", 0644);
	} else if (!strcmp(c, "hookspath")) {
		/* the repository's own core.hooksPath is .githooks (tracked) */
		snprintf(body, sizeof body, "#!/bin/sh\ntouch %s/PWNED-hookspath-tracked\n", top);
		put(".githooks/pre-commit", body, 0755);
		put(".githooks/post-checkout", body, 0755);
		int r = rename(".githooks", ".githooks-old");
		tried(false, "renaming .githooks away: %s", res(r));
		if (r == 0) {
			mkdirs(".githooks");
			put(".githooks/pre-commit", body, 0755);
		}
	} else if (!strcmp(c, "include")) {
		/* the repository's config includes ../shared.gitconfig (tracked) */
		snprintf(body, sizeof body, "[core]\n\tfsmonitor = \"touch %s/PWNED-include-fsmonitor; false\"\n", top);
		append("shared.gitconfig", body);
		put("shared.gitconfig", body, 0644);
	} else if (!strcmp(c, "alternates")) {
		mkdirs(".git/objects/info");
		put(".git/objects/info/alternates", "/\n", 0644);
	} else if (!strcmp(c, "rebase_todo")) {
		/* an interactive rebase in progress whose todo list runs a command */
		mkdirs(".git/rebase-merge");
		snprintf(body, sizeof body, "exec touch %s/PWNED-rebase-exec\n", top);
		put(".git/rebase-merge/git-rebase-todo", body, 0644);
		put(".git/rebase-merge/interactive", "", 0644);
		put(".git/rebase-merge/head-name", "refs/heads/main\n", 0644);
		put(".git/rebase-merge/onto", "0000000000000000000000000000000000000000\n", 0644);
		put(".git/rebase-merge/orig-head", "0000000000000000000000000000000000000000\n", 0644);
		put(".git/rebase-merge/end", "1\n", 0644);
		put(".git/rebase-merge/msgnum", "0\n", 0644);
	} else if (!strcmp(c, "remotes")) {
		mkdirs(".git/remotes");
		put(".git/remotes/evil", "URL: ssh://warren-escape.invalid/x\nPull: refs/heads/*:refs/remotes/evil/*\n", 0644);
	} else if (!strcmp(c, "nested_hooks")) {
		/* a repository below the worktree that the test made: hooks and config added */
		snprintf(body, sizeof body, "#!/bin/sh\ntouch %s/PWNED-nested-hooks\n", top);
		put("inner/.git/hooks/pre-commit", body, 0755);
		put("inner/.git/hooks/post-checkout", body, 0755);
		snprintf(body, sizeof body, "[alias]\n\tpwn = !touch %s/PWNED-nested-alias\n", top);
		append("inner/.git/config", body);
	} else {
		untested("unknown class");
	}
	finish();
}
