/* SPDX-License-Identifier: Apache-2.0 */
/* git_hooks: plant code the host runs after the run: .git/hooks/pre-commit in the worktree
 * (the cwd, a git repository the test made), directly, by renaming .git or .git/hooks away
 * and making new ones, through a symlink, and by pointing core.hooksPath elsewhere in
 * .git/config. The test checks the host's .git afterwards. */
#include "attempt.h"

static const char hook[] = "#!/bin/sh\necho warren-escape-hook\n";

static void write_hook(const char *p)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	bool ok = fd >= 0 && write(fd, hook, sizeof hook - 1) == (ssize_t)sizeof hook - 1;
	tried(ok, "writing %s: %s", p, fd < 0 ? en() : ok ? "written" : en());
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	a_start("git_hooks");
	struct stat st;
	if (stat(".git/HEAD", &st) < 0)
		untested("the worktree is not a git repository");
	write_hook(".git/hooks/pre-commit");
	int r = chmod(".git/hooks", 0777);
	tried(r == 0, "chmod .git/hooks: %s", res(r));
	r = rename(".git/hooks", ".git/hooks-old");
	tried(r == 0, "renaming .git/hooks away: %s", res(r));
	if (r == 0) {
		mkdir(".git/hooks", 0755);
		write_hook(".git/hooks/pre-commit");
	}
	r = rename(".git", ".git-old");
	tried(r == 0, "renaming .git away: %s", res(r));
	if (r == 0) {
		mkdir(".git", 0755);
		mkdir(".git/hooks", 0755);
		write_hook(".git/hooks/pre-commit");
	}
	/* a directory of our own with a hook, swapped in for .git/hooks */
	mkdir("myhooks", 0755);
	r = renameat2(AT_FDCWD, "myhooks", AT_FDCWD, ".git/hooks", RENAME_EXCHANGE);
	tried(r == 0, "exchanging .git/hooks with a directory of the job's: %s", res(r));
	symlink("../../myhooks-link-target", "myhooks/link");
	r = symlink("/tmp/hook", ".git/hooks/post-checkout");
	tried(r == 0, "symlink .git/hooks/post-checkout: %s", res(r));
	int fd = open(".git/config", O_WRONLY | O_APPEND);
	bool ok = fd >= 0 && write(fd, "[core]\n\thooksPath = myhooks\n", 27) == 27;
	tried(ok, "appending core.hooksPath to .git/config: %s", fd < 0 ? en() : ok ? "written" : en());
	r = unlink(".git/config");
	tried(r == 0, "unlinking .git/config: %s", res(r));
	/* hooks of a linked worktree or a submodule-like path the defaults do not list */
	r = rename(".git/config", ".git/config-old");
	tried(r == 0, "renaming .git/config: %s", res(r));
	finish();
}
