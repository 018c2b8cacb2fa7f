/* SPDX-License-Identifier: Apache-2.0 */
/* read_host_tmp SECRET HOSTPATH: read a marker file the test left in the host's /tmp. */
#include "attempt.h"

int main(int argc, char **argv)
{
	a_start("read_host_tmp");
	if (argc < 3)
		untested("usage: read_host_tmp SECRET HOSTPATH");
	const char *secret = argv[1], *p = argv[2], *base = strrchr(p, '/') + 1;
	bool ok = read_contains(p, secret);
	tried(ok, "reading %s: %s", p, rc_text(ok));
	char alt[4096];
	const char *via[] = { "/proc/1/root", "/proc/self/root", "/proc/1/cwd/../../../../../../../..", "/var" };
	for (size_t i = 0; i < sizeof via / sizeof via[0]; i++) {
		snprintf(alt, sizeof alt, "%s%s", via[i], p);
		ok = read_contains(alt, secret);
		tried(ok, "reading %s: %s", alt, rc_text(ok));
	}
	/* a listing of the cell's /tmp and /var/tmp must not show it */
	const char *dirs[] = { "/tmp", "/var/tmp" };
	for (int i = 0; i < 2; i++) {
		DIR *d = opendir(dirs[i]);
		bool seen = false;
		struct dirent *e;
		while (d && (e = readdir(d)))
			if (!strcmp(e->d_name, base))
				seen = true;
		if (d)
			closedir(d);
		tried(seen, "finding %s in a listing of %s: %s", base, dirs[i], seen ? "listed" : "not there");
	}
	finish();
}
