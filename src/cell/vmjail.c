/* vmjail.c - qemu of the vm driver confined before it executes, and its console kept to a
 * bounded size. qemu serves the guest's 9p shares: a job that takes over the guest kernel asks
 * it for any file, so qemu holds no more than the run user: it becomes the run user's host
 * uid (root mode: CELL_ROOT_ID_BASE + uid, no host user), enters a user namespace of its own
 * (the run user inside is that host uid, so the guest sees the files it makes as the run
 * user's) and a mount namespace where the host's / is read-only and the state directory, /tmp,
 * /var/tmp, /dev/shm, /run, /home and /root are empty; it keeps no capability, no_new_privs is
 * set, and qemu adds its own seccomp sandbox (vm.c). What it needs beyond that view (the
 * kernel, the initramfs, the orders, the worktree, the console, the tap) it gets as open
 * descriptors. The console and qemu's own messages go through pipes to keepers that write
 * their logs bounded. See docs/vm.md, "The wall around qemu".
 *
 * The root share is not qemu's own view: 9p crosses every mount below the directory it
 * shares, and qemu needs the host's /proc and /dev itself. It is a private copy of the view
 * (or of the image) in which every kernel file system (the host's /proc, /sys, /dev, and a
 * chroot's /proc or a sysfs mounted anywhere else) is covered with an empty directory
 * (hostroot.c decides which, as for a container's view): the host enforces it, so a job that
 * takes over the guest kernel does not reach them either. */
#include "cell/vm.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cell/contract.h"
#include "cell/hostroot.h"
#include "cell/vmexec.h"
#include "policy/policy.h"
#include "util/fs.h"
#include "util/sys.h"

/* Host paths qemu's view shows empty: warren's state (other runs' scratch and records) and
 * the places where other users' files live. The guest has its own of each (tmpfs). */
static const char *const hidden[] = { "/tmp", "/var/tmp", "/dev/shm", "/run", "/home", "/root", NULL };

static int write_self(const char *file, const char *text)
{
	_cleanup_free_ char *path = xasprintf("/proc/self/%s", file);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -errno;
	return 0;
}

/* Root mode: leave root for the run user's host ids (the group of /dev/kvm kept for KVM). */
static int become_run_user(const struct cell_spec *s, bool kvm, struct error *err)
{
	uid_t u = spec_host_uid(s);
	gid_t g = spec_host_gid(s), groups[1];
	struct stat st;
	int ng = 0;
	if (kvm && stat("/dev/kvm", &st) == 0 && st.st_gid)
		groups[ng++] = st.st_gid;
	if (setgroups((size_t)ng, groups) < 0 || setresgid(g, g, g) < 0 || setresuid(u, u, u) < 0)
		return error_set(err, errno, "cannot run qemu as uid %u gid %u", (unsigned)u, (unsigned)g);
	return 0;
}

/* The user namespace: the run user inside is the host ids qemu runs as, nothing else mapped. */
static int own_userns(const struct cell_spec *s, struct error *err)
{
	/* the host ids, read before the namespace hides them */
	_cleanup_free_ char *um = xasprintf("%u %u 1\n", (unsigned)s->uid, (unsigned)geteuid());
	_cleanup_free_ char *gm = xasprintf("%u %u 1\n", (unsigned)s->gid, (unsigned)getegid());
	prctl(PR_SET_DUMPABLE, 1); /* the map files of /proc/self are ours only while dumpable */
	/* and an empty network namespace: its NIC, if any, comes as a descriptor (a tap, or a
	 * socket to passt), and a guest that broke into qemu finds no network of the host */
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) < 0)
		return error_set(err, errno, "cannot give qemu a user, mount and network namespace of its own");
	int r = write_self("uid_map", um);
	if (r == 0)
		r = write_self("setgroups", "deny");
	if (r == 0)
		r = write_self("gid_map", gm);
	prctl(PR_SET_DUMPABLE, 0);
	return r < 0 ? error_set(err, -r, "cannot map qemu's user namespace") : 0;
}

/* Under an empty tmpfs at p; a worktree below p keeps its path (empty directories), the
 * guest mounts its share there. */
static int hide(const char *p, const char *worktree, struct error *err)
{
	if (mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k") < 0)
		return errno == ENOENT ? 0 : error_set(err, errno, "cannot hide %s from qemu", p);
	size_t l = strlen(p);
	if (worktree && !strncmp(worktree, p, l) && worktree[l] == '/') {
		int r = mkdir_p(worktree, 0755);
		if (r < 0)
			return error_set(err, -r, "cannot keep the worktree's path %s in qemu's view", worktree);
	}
	return 0;
}

/* Where qemu's view holds the binds of files: a directory each (under the hidden /tmp). */
#define FILE_BINDS "/tmp/.warren-file-binds"
/* ... the root share (the copy of the host's / or of the image), and the tmpfs of the empty
 * directory and file that cover the kernel's file systems in it */
#define ROOT_SHARE "/tmp/.warren-root"
#define ROOT_COVERS "/tmp/.warren-covers"

/* A bind of a file: a 9p share is a directory, so the share is a directory of qemu's view that
 * holds this file alone (at VM_BIND_FILE_NAME): a guest that takes over its kernel reaches the
 * file, not its siblings. The source is opened again here (this mount namespace's copy of it,
 * no symlink on the way) and must be the file that was checked (fd): it is bound there. */
static int file_bind_place(const struct cell_mount *m, int fd, size_t i, struct error *err)
{
	struct stat a, b;
	_cleanup_close_ int again = sys_openat2(AT_FDCWD, m->source, O_PATH | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
	if (again < 0 || fstat(again, &a) < 0 || fstat(fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		return error_set(err, again < 0 ? errno : ESTALE, "the bind's file %s changed before qemu could share it", m->source);
	_cleanup_free_ char *dir = xasprintf(FILE_BINDS "/%zu", i), *point = xasprintf("%s/" VM_BIND_FILE_NAME, dir);
	_cleanup_free_ char *src = xasprintf("/proc/self/fd/%d", again);
	_cleanup_close_ int pf = -1;
	int r = mkdir_p(dir, 0755);
	if (r < 0 || (pf = open(point, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0 || mount(src, point, NULL, MS_BIND, NULL) < 0)
		return error_set(err, r < 0 ? -r : errno, "cannot share the file %s with qemu", m->source);
	return 0;
}

/* Once the view is read-only: a read-write bind of a file writable again, and the share's
 * directory in place of the file's descriptor (fd, the number qemu's option names). */
static int file_bind_share(const struct cell_mount *m, int fd, size_t i, struct error *err)
{
	_cleanup_free_ char *dir = xasprintf(FILE_BINDS "/%zu", i), *point = xasprintf("%s/" VM_BIND_FILE_NAME, dir);
	struct mount_attr rw = { .attr_clr = MOUNT_ATTR_RDONLY };
	if (!m->readonly && sys_mount_setattr(AT_FDCWD, point, 0, &rw) < 0)
		return error_set(err, errno, "cannot let qemu write the bind's file %s", m->source);
	_cleanup_close_ int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d < 0 || dup2(d, fd) < 0)
		return error_set(err, errno, "cannot share the file %s with qemu", m->source);
	return 0;
}

/* The image (--rootfs, open as root_fd: checked on the host) in this mount namespace, opened
 * again by its path before the state directory that may hold it is hidden; it must be the
 * directory that was checked. */
static int image_again(const struct cell_spec *s, int root_fd, struct error *err)
{
	struct stat a, b;
	int fd = sys_openat2(AT_FDCWD, s->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC, RESOLVE_NO_SYMLINKS);
	if (fd < 0 || fstat(fd, &a) < 0 || fstat(root_fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		error_set(err, fd < 0 ? errno : ESTALE, "the root %s changed before qemu could share it", s->rootfs);
		closep(&fd);
		return -EPERM;
	}
	return fd;
}

/* The root share at root_fd (the number qemu's option names): a private copy of the view (its
 * hidden places hidden), or of the image (open as image), at ROOT_SHARE, the kernel's file
 * systems in it covered. Private: a proc the host mounts later does not show in it. */
static int root_share(const struct cell_spec *s, int image, int root_fd, struct error *err)
{
	_cleanup_free_ char *src = image >= 0 ? xasprintf("/proc/self/fd/%d", image) : xstrdup("/");
	const char *what = s->rootfs ? s->rootfs : "the host's /";
	int r = mkdir_p(ROOT_SHARE, 0755);
	if (r == 0)
		r = mkdir_p(ROOT_COVERS, 0755);
	if (r < 0)
		return error_set(err, -r, "cannot make the places of qemu's root share");
	if (mount(src, ROOT_SHARE, NULL, MS_BIND | MS_REC, NULL) < 0 || mount(NULL, ROOT_SHARE, NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return error_set(err, errno, "cannot copy %s for qemu's root share", what);
	if (hostroot_cover_kernel_fs(ROOT_SHARE, ROOT_COVERS, err) < 0) {
		error_prefix(err, "cannot cover the kernel's file systems in qemu's share of %s", what);
		return -EPERM;
	}
	_cleanup_close_ int fd = open(ROOT_SHARE, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || dup2(fd, root_fd) < 0)
		return error_set(err, errno, "cannot share %s with qemu", what);
	return 0;
}

/* The view: hidden paths under empty tmpfs, the binds of files placed, the root share made
 * (root_fd; -1: none, the KVM probe), then everything read-only. */
static int read_only_view(const struct cell_spec *s, int root_fd, int bind_fd0, struct error *err)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return error_set(err, errno, "cannot make qemu's mounts its own");
	_cleanup_close_ int image = root_fd >= 0 && s->rootfs ? image_again(s, root_fd, err) : -1;
	if (root_fd >= 0 && s->rootfs && image < 0)
		return -EPERM;
	for (size_t i = 0; hidden[i]; i++)
		if (hide(hidden[i], s->worktree, err) < 0)
			return -EPERM;
	if (s->statedir && hide(s->statedir, s->worktree, err) < 0)
		return -EPERM;
	for (size_t i = 0; i < s->n_mounts; i++)
		if (vm_fd_is_file(bind_fd0 + (int)i) && file_bind_place(&s->mounts[i], bind_fd0 + (int)i, i, err) < 0)
			return -EPERM;
	if (root_fd >= 0 && root_share(s, image, root_fd, err) < 0)
		return -EPERM;
	/* not nodev: qemu opens /dev/kvm (it cannot make device nodes: no capability) */
	struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID };
	if (sys_mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &a) < 0)
		return error_set(err, errno, "cannot make the host's / read-only for qemu");
	for (size_t i = 0; i < s->n_mounts; i++)
		if (vm_fd_is_file(bind_fd0 + (int)i) && file_bind_share(&s->mounts[i], bind_fd0 + (int)i, i, err) < 0)
			return -EPERM;
	return chdir("/") < 0 ? error_set(err, errno, "cannot enter qemu's view") : 0;
}

bool vm_fd_is_file(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode);
}

int vm_jail(const struct cell_spec *s, bool kvm, int root_fd, int bind_fd0, struct error *err)
{
	if (!s->rootless && become_run_user(s, kvm, err) < 0)
		return -EPERM;
	if (own_userns(s, err) < 0 || read_only_view(s, root_fd, bind_fd0, err) < 0 || policy_drop_all_caps(err) < 0)
		return -EPERM;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_set(err, errno, "cannot set no_new_privs for qemu");
	return 0;
}

/* ---- the console, bounded ---- */

struct ring {
	char *buf;
	size_t size, pos;
	unsigned long long total; /* bytes that went past the head */
};

static void ring_put(struct ring *r, const char *p, size_t n)
{
	r->total += n;
	if (n > r->size) {
		p += n - r->size;
		n = r->size;
	}
	size_t first = n < r->size - r->pos ? n : r->size - r->pos;
	memcpy(r->buf + r->pos, p, first);
	memcpy(r->buf, p + first, n - first);
	r->pos = (r->pos + n) % r->size;
}

/* The end: the cut named, then the last part in order. */
static void ring_flush(const struct ring *r, int out)
{
	if (r->total > r->size) {
		char note[128];
		int l = snprintf(note, sizeof note, "\n[warren: %llu bytes of the console cut here]\n", r->total - r->size);
		write_all(out, note, (size_t)l);
		write_all(out, r->buf + r->pos, r->size - r->pos);
		write_all(out, r->buf, r->pos);
	} else {
		write_all(out, r->buf, (size_t)r->total);
	}
}

void vm_console_keep(int in, int out, size_t head, size_t tail)
{
	struct ring r = { .buf = xcalloc(1, tail), .size = tail };
	size_t written = 0;
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		size_t take = written < head ? ((size_t)n < head - written ? (size_t)n : head - written) : 0;
		if (take)
			write_all(out, buf, take);
		written += take;
		if ((size_t)n > take)
			ring_put(&r, buf + take, (size_t)n - take);
	}
	ring_flush(&r, out);
	free(r.buf);
}

pid_t vm_log_start(const struct cell_spec *s, const char *file, size_t head, size_t tail, int *write_end, struct error *err)
{
	_cleanup_free_ char *name = xasprintf(RUN_VM_DIR "/%s", file);
	_cleanup_close_ int log = openat(s->rundir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	int p[2];
	if (log < 0 || pipe2(p, O_CLOEXEC) < 0)
		return error_set(err, errno, "cannot make the VM's log %s/%s", s->rundir, name);
	pid_t pid = fork();
	if (pid == 0) {
		/* only its two descriptors; it ends when qemu's end of the pipe closes */
		if (dup2(p[0], 0) < 0 || dup2(log, 1) < 0)
			_exit(1);
		close_range(2, ~0U, 0);
		struct error e = { 0 };
		if (!s->rootless && become_run_user(s, false, &e) < 0)
			_exit(1);
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		vm_console_keep(0, 1, head, tail);
		_exit(0);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return error_set(err, errno, "cannot start the keeper of the VM's %s", file);
	}
	*write_end = p[1];
	return pid;
}

pid_t vm_exec_relay_start(const struct cell_spec *s, int runner, int *port, struct error *err)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return error_set(err, errno, "cannot make the VM's executor port");
	pid_t parent = getpid(), pid = fork();
	if (pid == 0) {
		/* the runner's socket and its end of the port only; it ends with the port (qemu) */
		int null = open("/dev/null", O_RDWR);
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 || dup2(runner, 3) < 0 ||
		    dup2(sp[0], 4) < 0)
			_exit(1);
		close_range(5, ~0U, 0);
		struct error e = { 0 };
		if (!s->rootless && become_run_user(s, false, &e) < 0)
			_exit(1);
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		vmexec_host_relay(3, 4);
		_exit(0);
	}
	close(sp[0]);
	if (pid < 0) {
		close(sp[1]);
		return error_set(err, errno, "cannot start the relay of the VM's executor");
	}
	*port = sp[1];
	return pid;
}
