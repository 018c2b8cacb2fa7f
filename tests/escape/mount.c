/* SPDX-License-Identifier: Apache-2.0 */
/* mount: mount a tmpfs, bind the root elsewhere, remount the root read-write, the new mount
 * API, a new mount namespace, a cgroup2 file system. */
#include "attempt.h"
#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>

int main(void)
{
	a_start("mount");
	char d[] = "/tmp/warren-escape-mnt";
	mkdir(d, 0755);
	int r = mount("tmpfs", d, "tmpfs", 0, NULL);
	tried(r == 0, "mount tmpfs on %s: %s", d, res(r));
	r = mount("/", d, NULL, MS_BIND | MS_REC, NULL);
	tried(r == 0, "bind / on %s: %s", d, res(r));
	r = mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL);
	tried(r == 0, "remount / read-write: %s", res(r));
	r = mount("cgroup2", d, "cgroup2", 0, NULL);
	tried(r == 0, "mount cgroup2: %s", res(r));
	r = mount("proc", d, "proc", 0, NULL);
	tried(r == 0, "mount proc: %s", res(r));
	r = umount2("/proc/sys", MNT_DETACH);
	tried(r == 0, "umount /proc/sys (read-only mount): %s", res(r));
	r = umount2("/tmp", MNT_DETACH);
	tried(r == 0, "umount /tmp: %s", res(r));
	long fd = syscall(SYS_fsopen, "tmpfs", 0);
	tried(fd >= 0, "fsopen tmpfs: %s", res(fd));
	fd = syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | AT_RECURSIVE);
	tried(fd >= 0, "open_tree(/, CLONE): %s", res(fd));
	struct mount_attr a = { .attr_clr = MOUNT_ATTR_RDONLY };
	r = syscall(SYS_mount_setattr, AT_FDCWD, "/", 0, &a, sizeof a);
	tried(r == 0, "mount_setattr / clear RDONLY: %s", res(r));
	r = unshare(CLONE_NEWNS);
	tried(false, "unshare(CLONE_NEWNS): %s", res(r));
	if (r == 0) {
		r = mount("tmpfs", d, "tmpfs", 0, NULL);
		tried(r == 0, "mount tmpfs in a new mount namespace: %s", res(r));
	}
	rmdir(d);
	finish();
}
