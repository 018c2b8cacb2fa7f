/* SPDX-License-Identifier: Apache-2.0 */
/* root.c - the cell's root in the guest, as the container driver's: the root share (the
 * host's / read-only, or an image under an overlay in the VM's memory), its own /proc, /sys,
 * /dev and /run, the scratch (/tmp, /var/tmp, /dev/shm, the home: tmpfs within the scratch
 * limit), the run user's passwd and group, the worktree and the binds (9p shares); then the
 * init moves into it. */
#include <sys/mount.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cell/contract.h"

#include "guest.h"

static char *under(const char *root, const char *path)
{
	char *s;
	if (asprintf(&s, "%s%s", root, path) < 0)
		die(ENOMEM, "out of memory");
	return s;
}

/* A scratch tmpfs at path: mode, owner, and the scratch limit as its size. */
static void scratch_tmpfs(const char *path, mode_t mode, uid_t uid, gid_t gid, unsigned long long size)
{
	char data[96];
	if (size)
		snprintf(data, sizeof data, "mode=%o,uid=%u,gid=%u,size=%llu", mode, uid, gid, size);
	else
		snprintf(data, sizeof data, "mode=%o,uid=%u,gid=%u", mode, uid, gid);
	mount_or_die("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, data);
	scratch_watch(path);
}

/* The mount point path (absolute in the guest) made where missing, with the directories on its
 * way (in an image's overlay: in the VM's memory); an empty file when file. */
static void make_point(const char *path, bool file)
{
	char *p = strdup(path);
	if (!p)
		die(ENOMEM, "out of memory");
	for (char *slash = strchr(p + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST && errno != EROFS)
			die(errno, "cannot make the mount point %s", p);
		*slash = '/';
	}
	int fd = file ? open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : mkdir(p, 0755);
	if (fd < 0 && errno != EEXIST && errno != EROFS)
		die(errno, "cannot make the mount point %s", p);
	if (file && fd >= 0)
		close(fd);
	free(p);
}

/* Mount on path (in the cell) under the new root, its mount point made where missing. */
static void mount_in(const char *path, const char *src, const char *type, unsigned long flags, const char *data)
{
	char *p = under(VM_NEWROOT, path);
	make_point(p, false);
	mount_or_die(src, p, type, flags, data);
	free(p);
}

/* A bind's record: "<tag> <ro|rw>[-file] <destination>" split in place. */
static void bind_fields(char *b, char **tag, bool *ro, bool *file, char **dst)
{
	char *m = strchr(b, ' '), *d = m ? strchr(m + 1, ' ') : NULL;
	if (!d || d[1] != '/')
		die(EINVAL, "bad bind in the orders: %s", b);
	*m = *d = '\0';
	*tag = b;
	*file = strlen(m + 1) > 2 && !strcmp(m + 3, VM_BIND_FILE_SUFFIX);
	*ro = !strncmp(m + 1, "ro", 2) && (!m[3] || *file);
	*dst = d + 1;
}

/* A bind of a file: its share (a directory of qemu's view holding it alone, as
 * VM_BIND_FILE_NAME) mounted aside, the file bound at dst in the cell, the share let go. */
static void mount_file_bind(const char *tag, const char *dst, bool ro)
{
	char *share = under(VM_FILE_BINDS_MNT "/", tag), *src = under(share, "/" VM_BIND_FILE_NAME), *p = under(VM_NEWROOT, dst);
	mkdir(VM_FILE_BINDS_MNT, 0700);
	if (mkdir(share, 0700) < 0)
		die(errno, "cannot make %s", share);
	mount_or_die(tag, share, "9p", MS_NOSUID | MS_NODEV | (ro ? MS_RDONLY : 0), NINEP_OPTS ",cache=mmap");
	make_point(p, true);
	mount_or_die(src, p, NULL, MS_BIND, NULL);
	if (ro)
		mount_or_die(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
	umount2(share, MNT_DETACH);
	free(share);
	free(src);
	free(p);
}

/* Does some bind's mount point not exist in the root share mounted on VM_LOWER_MNT? */
static bool points_missing(const struct orders *o)
{
	for (size_t i = 0; i < o->nbinds; i++) {
		/* "<tag> <ro|rw> <destination>": the destination may hold spaces */
		const char *m = strchr(o->binds[i], ' '), *d = m ? strchr(m + 1, ' ') : NULL;
		if (!d)
			die(EINVAL, "bad bind in the orders: %s", o->binds[i]);
		char *p = under(VM_LOWER_MNT, d + 1);
		struct stat st;
		bool missing = lstat(p, &st) < 0;
		free(p);
		if (missing)
			return true;
	}
	return false;
}

/* The root: the root share (the host's / or an image) read-only, or for an image the lower
 * layer of an overlay whose upper layer is a tmpfs in the VM's memory (within the scratch
 * limit). The host's / goes through such an overlay too when a bind's mount point is missing
 * in it (the point is made in memory, never on the host); true then: the root is to be made
 * read-only once everything is mounted on it. */
static bool mount_root(const struct orders *o)
{
	mkdir(VM_LOWER_MNT, 0755);
	mount_or_die(VM_TAG_ROOT, VM_LOWER_MNT, "9p", MS_RDONLY | MS_NOSUID | MS_NODEV, NINEP_OPTS ",cache=loose");
	bool points = !o->image && points_missing(o);
	if (!o->image && !points) {
		if (mount(VM_LOWER_MNT, VM_NEWROOT, NULL, MS_MOVE, NULL) < 0)
			die(errno, "cannot move the root share to %s", VM_NEWROOT);
		return false;
	}
	load_modules(VM_MOD_OVERLAY_LIST);
	mkdir(VM_UPPER_MNT, 0755);
	scratch_tmpfs(VM_UPPER_MNT, 0755, 0, 0, o->scratch);
	if (mkdir(VM_UPPER_MNT "/upper", 0755) < 0 || mkdir(VM_UPPER_MNT "/work", 0755) < 0)
		die(errno, "cannot make the overlay's upper layer in %s", VM_UPPER_MNT);
	if (mount("overlay", VM_NEWROOT, "overlay", MS_NOSUID | MS_NODEV,
		  "lowerdir=" VM_LOWER_MNT ",upperdir=" VM_UPPER_MNT "/upper,workdir=" VM_UPPER_MNT "/work") < 0)
		die(errno, "cannot mount an overlay of %s on %s", o->image ? o->image : "the host's /", VM_NEWROOT);
	return points;
}

/* The run user's passwd and group (in the orders) copied to the cell's /run and bound
 * read-only over the root's, as the container driver does. */
static void mount_users_db(void)
{
	static const char *const dbs[] = { VM_PASSWD_FILE, VM_GROUP_FILE };
	mount_in("/run/.warren", "tmpfs", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=1m");
	for (size_t i = 0; i < 2; i++) {
		char src[64], dst[64], etc[64];
		size_t len;
		snprintf(src, sizeof src, VM_RUN_MNT "/%s", dbs[i]);
		snprintf(dst, sizeof dst, VM_NEWROOT "/run/.warren/%s", dbs[i]);
		snprintf(etc, sizeof etc, VM_NEWROOT "/etc/%s", dbs[i]);
		char *txt = read_small(src, &len);
		int fd = txt ? open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
		if (fd < 0 || write(fd, txt, len) != (ssize_t)len)
			die(errno, "cannot write %s", dst);
		close(fd);
		free(txt);
		make_point(etc, true);
		mount_or_die(dst, etc, NULL, MS_BIND, NULL);
		mount_or_die(NULL, etc, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
	}
}

/* /proc, /sys, /dev (with /dev/shm scratch and /dev/pts), /run: the guest's own. */
static void mount_kernel_fs(const struct orders *o)
{
	mount_in("/proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	/* --no-sys: an empty directory (the root share's own /sys would be the host's) */
	if (o->no_sys)
		mount_in("/sys", "tmpfs", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k");
	else
		mount_in("/sys", "sysfs", "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_in("/dev", "/dev", NULL, MS_BIND | MS_REC, NULL);
	/* /dev/shm is scratch like /tmp (POSIX shared memory, semaphores); /dev/pts for terminals */
	mkdir("/dev/shm", CELL_TMP_MODE);
	mkdir("/dev/pts", 0755);
	char *p = under(VM_NEWROOT, "/dev/shm");
	scratch_tmpfs(p, CELL_TMP_MODE, 0, 0, o->scratch);
	free(p);
	mount_in("/dev/pts", "devpts", "devpts", MS_NOSUID | MS_NOEXEC, "ptmxmode=0666,mode=0620");
	p = under(VM_NEWROOT, "/run");
	make_point(p, false);
	mount_or_die("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755"); /* not scratch */
	free(p);
}

/* The scratch: /tmp and /var/tmp (01777), /home with the run user's home. */
static void mount_scratch(const struct orders *o)
{
	const char *const parts[][2] = { { CELL_TMP_PATH, "t" }, { CELL_VARTMP_PATH, "t" }, { CELL_HOME_PARENT, "h" } };
	for (size_t i = 0; i < 3; i++) {
		char *p = under(VM_NEWROOT, parts[i][0]);
		make_point(p, false);
		scratch_tmpfs(p, parts[i][1][0] == 't' ? CELL_TMP_MODE : 0755, 0, 0, o->scratch);
		free(p);
	}
	if (!o->home)
		return;
	char *p = under(VM_NEWROOT, o->home);
	/* under the fresh /home, or where the root has one (/root): a tmpfs of its own */
	if (mkdir(p, CELL_HOME_MODE) == 0) {
		if (chown(p, o->uid, o->gid) < 0 || chmod(p, CELL_HOME_MODE) < 0)
			die(errno, "cannot make the home %s", o->home);
	} else if (errno == EEXIST) {
		scratch_tmpfs(p, CELL_HOME_MODE, o->uid, o->gid, o->scratch);
	} else {
		die(errno, "cannot make the home %s", o->home);
	}
	free(p);
}

/* The worktree, the state directory's mask, the binds (--bind, --ro-bind, --externals) in order. */
static void mount_shares(const struct orders *o)
{
	if (o->worktree)
		mount_in(o->worktree, VM_TAG_WORK, "9p", MS_NOSUID | MS_NODEV | (o->work_ro ? MS_RDONLY : 0), NINEP_OPTS ",cache=mmap");
	for (size_t i = 0; i < o->nmask; i++) {
		char *p = under(VM_NEWROOT, o->mask[i]);
		if (mount("tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k") < 0 && errno != ENOENT)
			die(errno, "cannot hide %s", o->mask[i]);
		free(p);
	}
	for (size_t i = 0; i < o->nbinds; i++) {
		char *tag, *dst;
		bool ro, file;
		bind_fields(o->binds[i], &tag, &ro, &file, &dst);
		if (file)
			mount_file_bind(tag, dst, ro);
		else
			mount_in(dst, tag, "9p", MS_NOSUID | MS_NODEV | (ro ? MS_RDONLY : 0), NINEP_OPTS ",cache=mmap");
	}
}

void build_root(const struct orders *o)
{
	bool make_ro = mount_root(o);
	mount_kernel_fs(o);
	mount_scratch(o);
	mount_users_db();
	mount_shares(o);
	/* a host root that went through an overlay for the binds' mount points: read-only again */
	if (make_ro && mount(NULL, VM_NEWROOT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		die(errno, "cannot make the cell's root read-only");
}

/* Enter the new root: the initramfs cannot be pivoted away, so move over it (switch_root). */
void enter_root(void)
{
	if (chdir(VM_NEWROOT) < 0 || mount(VM_NEWROOT, "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 || chdir("/") < 0)
		die(errno, "cannot enter the cell's root");
}
