/* SPDX-License-Identifier: Apache-2.0 */
/* write_image TAG IMAGE|- [overlay]: write into the root file system (the host's /, or the
 * image under --rootfs): files in /usr/bin, /bin, /lib, /, and the image through its host
 * path IMAGE. With "overlay" (--rootfs) a write into the cell's own root is no escape: it
 * lands in the run's upper layer (the test checks the image itself is unchanged). */
#include "attempt.h"

int main(int argc, char **argv)
{
	a_start("write_image");
	if (argc < 3)
		untested("usage: write_image TAG IMAGE|- [overlay]");
	bool overlay = argc > 3 && !strcmp(argv[3], "overlay");
	const char *dirs[] = { "/", "/usr/bin", "/bin", "/lib", "/sbin", "/usr/lib" };
	char p[4096];
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(p, sizeof p, "%s/warren-escape-%s", dirs[i], argv[1]);
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0755);
		tried(fd >= 0 && !overlay, "creating %s: %s%s", p, res(fd), fd >= 0 && overlay ? " (the run's overlay)" : "");
		if (fd >= 0) {
			close(fd);
			unlink(p);
		}
	}
	int fd = open("/bin/sh", O_WRONLY | O_APPEND);
	tried(fd >= 0 && !overlay, "opening /bin/sh for writing: %s", res(fd));
	if (fd >= 0)
		close(fd);
	if (strcmp(argv[2], "-")) {
		snprintf(p, sizeof p, "%s/warren-escape-%s", argv[2], argv[1]);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
		tried(fd >= 0, "creating %s (the image's host path): %s", p, res(fd));
		if (fd >= 0) {
			close(fd);
			unlink(p);
		}
		snprintf(p, sizeof p, "%s/bin/busybox", argv[2]);
		fd = open(p, O_WRONLY | O_APPEND);
		tried(fd >= 0, "opening %s for writing: %s", p, res(fd));
		if (fd >= 0)
			close(fd);
	}
	finish();
}
