/* SPDX-License-Identifier: Apache-2.0 */
/* read_host_root SECRET HOSTPATH: read a marker file the test left in the host's /root,
 * and list /root for it. */
#include "attempt.h"

int main(int argc, char **argv)
{
	a_start("read_host_root");
	if (argc < 3)
		untested("usage: read_host_root SECRET HOSTPATH");
	const char *secret = argv[1], *p = argv[2], *base = strrchr(p, '/') + 1;
	bool ok = read_contains(p, secret);
	tried(ok, "reading %s: %s", p, rc_text(ok));
	char alt[4096];
	snprintf(alt, sizeof alt, "/proc/1/root%s", p);
	ok = read_contains(alt, secret);
	tried(ok, "reading %s: %s", alt, rc_text(ok));
	struct stat st;
	ok = stat(p, &st) == 0;
	tried(ok, "stat %s: %s", p, res(ok ? 0 : -1));
	DIR *d = opendir("/root");
	bool seen = false;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (!strcmp(e->d_name, base))
			seen = true;
	tried(seen, "listing /root: %s", d ? (seen ? "the marker is listed" : "no marker") : en());
	if (d)
		closedir(d);
	finish();
}
