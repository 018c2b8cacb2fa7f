/* SPDX-License-Identifier: Apache-2.0 */
/* write_etc TAG: create /etc/warren-escape-TAG, open /etc/passwd and /etc/hostname for
 * writing (nothing is written), make a directory in /etc. */
#include "attempt.h"

int main(int argc, char **argv)
{
	a_start("write_etc");
	if (argc < 2)
		untested("usage: write_etc TAG");
	char p[256];
	snprintf(p, sizeof p, "/etc/warren-escape-%s", argv[1]);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
	tried(fd >= 0, "creating %s: %s", p, res(fd));
	if (fd >= 0) {
		close(fd);
		unlink(p);
	}
	const char *files[] = { "/etc/passwd", "/etc/hostname", "/etc/hosts", "/etc/shadow" };
	for (size_t i = 0; i < 4; i++) {
		fd = open(files[i], O_WRONLY | O_APPEND);
		tried(fd >= 0, "opening %s for writing: %s", files[i], res(fd));
		if (fd >= 0)
			close(fd);
	}
	snprintf(p, sizeof p, "/etc/warren-escape-%s.d", argv[1]);
	int r = mkdir(p, 0755);
	tried(r == 0, "mkdir %s: %s", p, res(r));
	if (r == 0)
		rmdir(p);
	r = rename("/etc/hostname", "/etc/hostname.warren-escape");
	tried(r == 0, "renaming /etc/hostname: %s", res(r));
	if (r == 0)
		rename("/etc/hostname.warren-escape", "/etc/hostname");
	finish();
}
