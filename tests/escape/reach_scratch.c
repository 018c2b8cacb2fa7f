/* SPDX-License-Identifier: Apache-2.0 */
/* reach_scratch NAME SECRET MARKER DIR...: another run, started by the test, keeps a file
 * MARKER holding SECRET in its /tmp, /var/tmp and $HOME. Look for it: DIR/runs/<any>/{tmp,
 * var-tmp,home}/MARKER on the host paths (DIR: state directories), the other run's processes
 * through /proc/<pid>/root and cwd, and /tmp of this cell. NAME: other_run_scratch (same
 * state directory) or other_state_scratch (a state directory of another invocation). */
#include "attempt.h"
#include <glob.h>

int main(int argc, char **argv)
{
	a_start(argc > 1 ? argv[1] : "reach_scratch");
	if (argc < 5)
		untested("usage: reach_scratch NAME SECRET MARKER DIR...");
	const char *secret = argv[2], *marker = argv[3];
	char pat[4096];
	for (int i = 4; i < argc; i++) {
		const char *parts[] = { "tmp", "var-tmp", "home", "upper/tmp", "root/tmp" };
		for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
			snprintf(pat, sizeof pat, "%s/runs/*/%s/%s", argv[i], parts[k], marker);
			bool ok = read_contains(pat, secret); /* the literal path first (errno for the line) */
			const char *why = rc_text(ok);
			glob_t g;
			if (glob(pat, 0, NULL, &g) == 0) {
				for (size_t j = 0; j < g.gl_pathc; j++) {
					ok = read_contains(g.gl_pathv[j], secret);
					tried(ok, "reading %s: %s", g.gl_pathv[j], rc_text(ok));
				}
				globfree(&g);
			} else {
				struct stat st;
				snprintf(pat, sizeof pat, "%s/runs", argv[i]);
				tried(false, "globbing %s/runs/*/%s/%s: no match (%s/runs: %s)", argv[i], parts[k], marker, pat,
				      stat(pat, &st) == 0 ? "exists" : en());
				(void)why;
			}
		}
	}
	/* every process this cell can see: its root and cwd */
	int seen = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		const char *vias[] = { "root/tmp", "root/var/tmp", "cwd", "root/home" };
		for (int k = 0; k < 4; k++) {
			snprintf(pat, sizeof pat, "/proc/%s/%s/%s", e->d_name, vias[k], marker);
			if (read_contains(pat, secret)) {
				tried(true, "reading %s", pat);
				seen++;
			}
		}
	}
	if (d)
		closedir(d);
	tried(false, "/proc/<pid>/{root/tmp,root/var/tmp,cwd,root/home}/%s of every visible process: %s", marker,
	      seen ? "found" : "not found");
	snprintf(pat, sizeof pat, "/tmp/%s", marker);
	bool ok = read_contains(pat, secret);
	tried(ok, "reading %s: %s", pat, rc_text(ok));
	finish();
}
