/* SPDX-License-Identifier: Apache-2.0 */
/* worktree_symlink SECRET: the test planted symlinks in the worktree (the cwd) pointing at the
 * host: link-root -> /root, link-shadow -> /etc/shadow, link-tmp-marker -> a marker in the
 * host's /tmp, link-root-marker -> a marker in the host's /root, link-etc -> /etc,
 * link-state -> the state directory, and .git -> a directory outside the worktree (without
 * hooks). Follow each one, for reading and for writing. */
#include "attempt.h"

int main(int argc, char **argv)
{
	a_start("worktree_symlink");
	if (argc < 2)
		untested("usage: worktree_symlink SECRET");
	const char *secret = argv[1];
	struct stat st;
	if (lstat("link-root", &st) < 0 || !S_ISLNK(st.st_mode))
		untested("no planted link-root in the worktree");
	const char *reads[] = { "link-tmp-marker", "link-root-marker" };
	for (int i = 0; i < 2; i++) {
		bool ok = read_contains(reads[i], secret);
		tried(ok, "reading %s: %s", reads[i], rc_text(ok));
	}
	int fd = open("link-shadow", O_RDONLY);
	tried(fd >= 0, "opening link-shadow (/etc/shadow) for reading: %s", res(fd));
	DIR *d = opendir("link-root");
	tried(d != NULL, "listing link-root (/root): %s", d ? "ok" : en());
	d = opendir("link-state/runs");
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "run_", 4))
			n++;
	tried(n > 0, "listing link-state/runs: %s (%d runs seen)", d ? "ok" : en(), n);
	fd = open("link-etc/warren-escape", O_WRONLY | O_CREAT | O_EXCL, 0644);
	tried(fd >= 0, "creating link-etc/warren-escape (/etc): %s", res(fd));
	if (fd >= 0)
		unlink("link-etc/warren-escape");
	fd = open("link-etc/passwd", O_WRONLY | O_APPEND);
	tried(fd >= 0, "opening link-etc/passwd for writing: %s", res(fd));
	/* .git points outside: a hook written through it would land on the host */
	mkdir(".git/hooks", 0755);
	fd = open(".git/hooks/pre-commit", O_WRONLY | O_CREAT | O_TRUNC, 0755);
	tried(fd >= 0, "writing .git/hooks/pre-commit through .git -> outside: %s", res(fd));
	fd = open(".git/config", O_WRONLY | O_APPEND);
	tried(fd >= 0, "opening .git/config (outside) for writing: %s", res(fd));
	/* a symlink the job makes itself, then follows */
	symlink("/etc/passwd", "link-made-by-job");
	fd = open("link-made-by-job", O_WRONLY | O_APPEND);
	tried(fd >= 0, "opening a job-made link to /etc/passwd for writing: %s", res(fd));
	unlink("link-made-by-job");
	finish();
}
