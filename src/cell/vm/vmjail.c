/* SPDX-License-Identifier: Apache-2.0 */
/* vmjail.c - qemu of the vm driver confined before it executes, and its console kept to a
 * bounded size. qemu serves the guest's 9p shares: a job that takes over the guest kernel asks
 * it for any file, so qemu holds no more than the run user: it becomes the run user's host
 * uid (root mode: CELL_ROOT_ID_BASE + uid, no host user), enters a user namespace of its own
 * (the run user inside is that host uid, so the guest sees the files it makes as the run
 * user's) and a mount namespace where the host's / is read-only and the state directory,
 * /tmp, /var/tmp, /dev/shm, /run, /home and /root are empty; it keeps no capability,
 * no_new_privs is set, and qemu adds its own seccomp sandbox (vm.c). In root mode the worktree
 * and the binds are idmapped copies, as a container's: their owner is qemu's uid there and
 * only there. What it needs beyond that view (the kernel, the initramfs, the orders, the
 * console, the tap) it gets as open descriptors. The console and qemu's own messages go
 * through pipes to keepers that write their logs bounded. See docs/vm.md, "The wall around
 * qemu".
 *
 * The root share is not qemu's own view: 9p crosses every mount below the directory it
 * shares, and qemu needs the host's /proc and /dev itself. It is a private copy of the view
 * (or of the image); the worktree and the binds' sources are private copies too (the host's
 * descriptors would follow the supervisor's mount table as it changes: a proc mounted in the
 * worktree while the VM ran reached the job). In all of them every kernel file system (the
 * host's /proc, /sys, /dev, and a chroot's /proc or a sysfs mounted anywhere else) is covered
 * with an empty directory (container/hostroot.c decides which, as for a container's view): the host
 * enforces it, so a job that takes over the guest kernel does not reach them either. */
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

/* Where qemu's view holds what it shares (under the hidden /tmp): the root share (a copy of
 * the host's / or of the image), the worktree's and each bind's private copy (a bind of a file:
 * a directory of its own holding the file alone, VM_BIND_FILE_NAME: a guest that takes over its
 * kernel reaches the file, not its siblings); and the tmpfs of the empty directories and files
 * that cover the kernel's file systems in all of them */
#define SHARES "/tmp/.warren-shares"
#define ROOT_SHARE SHARES "/root"
#define WORK_SHARE SHARES "/work"
#define BIND_SHARE SHARES "/bind"
#define COVERS "/tmp/.warren-covers"

/* The worktree or a bind's source, open as fd (the number qemu's option names), shared from
 * place (a directory of qemu's view) once copied there; idmap: the userns fd of the idmap that
 * shows its owner as qemu's ids (root mode, cell_owner_idmap), or -1. */
struct share {
	const char *what, *path; /* "the worktree", and its path on the host */
	int fd, idmap;
	bool ro, file;
	char *place;
};

/* idmaps: the worktree's (0) and each bind's (1 + i) idmap, or NULL: none. */
static size_t shares_of(const struct cell_spec *s, int work_fd, int bind_fd0, const int *idmaps, struct share *sh)
{
	size_t n = 0;
	if (s->worktree && work_fd >= 0)
		sh[n++] = (struct share){ "the worktree", s->worktree, work_fd, idmaps ? idmaps[0] : -1, s->worktree_ro, false,
					  xstrdup(WORK_SHARE) };
	for (size_t i = 0; i < s->n_mounts; i++) {
		int fd = bind_fd0 + (int)i;
		sh[n++] = (struct share){ "the bind source", s->mounts[i].source, fd, idmaps ? idmaps[1 + i] : -1,
					  s->mounts[i].readonly, vm_fd_is_file(fd), xasprintf(BIND_SHARE "%zu", i) };
	}
	return n;
}

/* The places freed; the idmaps closed (qemu never holds one). */
static void shares_free(struct share *sh, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(sh[i].place);
		closep(&sh[i].idmap);
	}
}

/* What fd (a source open in this mount namespace) holds, with what is mounted below it, as a
 * detached copy of its own put at sh->fd: idmapped when it has an idmap (its owner's files are
 * qemu's, its files qemu makes are the owner's, as a container's worktree: on this copy only;
 * every mount of it unless the owner is root; a file system that cannot be idmapped is copied
 * as it is), private (a mount the host makes there later does not propagate into it), nosuid,
 * nodev, read-only for a read-only share. qemu shares the copy: the host's descriptor would
 * follow the mounts of the supervisor's namespace as they change. */
static int copy_source(const struct share *sh, int fd, struct error *err)
{
	struct stat st;
	_cleanup_close_ int t = sh->idmap >= 0 && fstat(fd, &st) == 0 ? cell_idmapped_tree(fd, "", sh->idmap, st.st_uid != 0) : -1;
	if (t < 0)
		t = sys_open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (sh->ro ? MOUNT_ATTR_RDONLY : 0),
				.propagation = MS_PRIVATE };
	if (t < 0 || sys_mount_setattr(t, "", AT_EMPTY_PATH | AT_RECURSIVE, &a) < 0 || dup2(t, sh->fd) < 0)
		return error_set(err, errno, "cannot copy %s %s for qemu", sh->what, sh->path);
	return 0;
}

/* A path of the host opened again in this mount namespace (no symlink on the way): it must
 * be what was checked there (fd, open on the host). Its descriptor, or -errno. */
static int open_again(const char *what, const char *path, int fd, unsigned flags, struct error *err)
{
	struct stat a, b;
	int again = sys_openat2(AT_FDCWD, path, O_PATH | O_CLOEXEC | flags, RESOLVE_NO_SYMLINKS);
	if (again < 0 || fstat(again, &a) < 0 || fstat(fd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		error_set(err, again < 0 ? errno : ESTALE, "%s %s changed before qemu could share it", what, path);
		closep(&again);
		return -EPERM;
	}
	return again;
}

/* The copies of the sources: root mode before leaving root, from the host's descriptors;
 * rootless in qemu's mount namespace (a mount of the host's cannot be copied there), from the
 * sources opened again by their paths (before their places may be hidden). */
static int copy_sources(const struct share *sh, size_t n, bool again, struct error *err)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_close_ int fd = again ? open_again(sh[i].what, sh[i].path, sh[i].fd, 0, err) : -1;
		if ((again && fd < 0) || copy_source(&sh[i], again ? fd : sh[i].fd, err) < 0)
			return -EPERM;
	}
	return 0;
}

/* The share's place in qemu's view (before the view is read-only): a directory, holding an
 * empty file where a file is bound. */
static int share_place(const struct share *sh, struct error *err)
{
	_cleanup_free_ char *file = xasprintf("%s/" VM_BIND_FILE_NAME, sh->place);
	_cleanup_close_ int f = -1;
	int r = mkdir_p(sh->place, 0755);
	if (r == 0 && sh->file && (f = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0)
		r = -errno;
	return r < 0 ? error_set(err, -r, "cannot make the place of %s %s in qemu's view", sh->what, sh->path) : 0;
}

/* The copy (open at sh->fd) put in its place, once the view is read-only: it keeps its own
 * attributes (the worktree and a --bind stay writable). */
static int share_attach(const struct share *sh, struct error *err)
{
	_cleanup_free_ char *to = sh->file ? xasprintf("%s/" VM_BIND_FILE_NAME, sh->place) : xstrdup(sh->place);
	if (sys_move_mount(sh->fd, "", AT_FDCWD, to, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return error_set(err, errno, "cannot share %s %s with qemu", sh->what, sh->path);
	return 0;
}

/* A place, its kernel's file systems covered, open again at fd (the number qemu's option names). */
static int share_fd(const char *place, int fd, const char *what, struct error *err)
{
	_cleanup_close_ int d = open(place, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d < 0 || dup2(d, fd) < 0)
		return error_set(err, errno, "cannot share %s with qemu", what);
	return 0;
}

/* The root share: a private copy of the view (its hidden places hidden), or of the image
 * (open as image), at ROOT_SHARE. Private: a proc the host mounts later does not show in it. */
static int root_share(const struct cell_spec *s, int image, struct error *err)
{
	_cleanup_free_ char *src = image >= 0 ? xasprintf("/proc/self/fd/%d", image) : xstrdup("/");
	if (mount(src, ROOT_SHARE, NULL, MS_BIND | MS_REC, NULL) < 0 || mount(NULL, ROOT_SHARE, NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return error_set(err, errno, "cannot copy %s for qemu's root share", s->rootfs ? s->rootfs : "the host's /");
	return 0;
}

/* The hidden paths under empty tmpfs, and the shares' places made in the hidden /tmp. */
static int hide_all(const struct cell_spec *s, const struct share *sh, size_t n, struct error *err)
{
	for (size_t i = 0; hidden[i]; i++)
		if (hide(hidden[i], s->worktree, err) < 0)
			return -EPERM;
	if (s->statedir && hide(s->statedir, s->worktree, err) < 0)
		return -EPERM;
	int r = mkdir_p(ROOT_SHARE, 0755);
	if (r == 0)
		r = mkdir_p(COVERS, 0755);
	if (r < 0)
		return error_set(err, -r, "cannot make the places of qemu's shares");
	for (size_t i = 0; i < n; i++)
		if (share_place(&sh[i], err) < 0)
			return -EPERM;
	return 0;
}

/* Every share in place with the kernel's file systems in it covered (container/hostroot.c, one list for
 * all: the root share, the worktree, the binds), each at its descriptor (root_fd -1: no root
 * share, the KVM probe). */
static int shares_ready(const struct cell_spec *s, const struct share *sh, size_t n, int root_fd, struct error *err)
{
	for (size_t i = 0; i < n; i++)
		if (share_attach(&sh[i], err) < 0)
			return -EPERM;
	if ((root_fd >= 0 || n) && hostroot_cover_kernel_fs(SHARES, COVERS, err) < 0) {
		error_prefix(err, "cannot cover the kernel's file systems in qemu's shares");
		return -EPERM;
	}
	if (root_fd >= 0 && share_fd(ROOT_SHARE, root_fd, s->rootfs ? s->rootfs : "the host's /", err) < 0)
		return -EPERM;
	for (size_t i = 0; i < n; i++)
		if (share_fd(sh[i].place, sh[i].fd, sh[i].path, err) < 0)
			return -EPERM;
	return 0;
}

/* The image (--rootfs, open as root_fd: checked on the host) in this mount namespace, opened
 * again by its path before the state directory that may hold it is hidden. */
static int image_again(const struct cell_spec *s, int root_fd, struct error *err)
{
	return open_again("the root", s->rootfs, root_fd, O_DIRECTORY, err);
}

/* The view: qemu's mounts its own, the sources copied (rootless: here), hidden paths under
 * empty tmpfs, the root share made (root_fd; -1: none, the KVM probe), everything read-only,
 * then the worktree's and binds' copies put in place with their own attributes, and the
 * kernel's file systems in every share covered. */
static int read_only_view(const struct cell_spec *s, int root_fd, const struct share *sh, size_t n, struct error *err)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return error_set(err, errno, "cannot make qemu's mounts its own");
	_cleanup_close_ int image = root_fd >= 0 && s->rootfs ? image_again(s, root_fd, err) : -1;
	if (root_fd >= 0 && s->rootfs && image < 0)
		return -EPERM;
	if ((s->rootless && copy_sources(sh, n, true, err) < 0) || hide_all(s, sh, n, err) < 0)
		return -EPERM;
	if (root_fd >= 0 && root_share(s, image, err) < 0)
		return -EPERM;
	/* not nodev: qemu opens /dev/kvm (it cannot make device nodes: no capability) */
	struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID };
	if (sys_mount_setattr(AT_FDCWD, "/", AT_RECURSIVE, &a) < 0)
		return error_set(err, errno, "cannot make the host's / read-only for qemu");
	if (shares_ready(s, sh, n, root_fd, err) < 0)
		return -EPERM;
	return chdir("/") < 0 ? error_set(err, errno, "cannot enter qemu's view") : 0;
}

bool vm_fd_is_file(int fd)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode);
}

int vm_jail(const struct cell_spec *s, bool kvm, int root_fd, int work_fd, int bind_fd0, const int *idmaps, struct error *err)
{
	struct share sh[1 + VM_MAX_BINDS];
	size_t n = shares_of(s, work_fd, bind_fd0, idmaps, sh);
	int r = -EPERM;
	if (!s->rootless && (copy_sources(sh, n, false, err) < 0 || become_run_user(s, kvm, err) < 0))
		goto out;
	if (own_userns(s, err) < 0 || read_only_view(s, root_fd, sh, n, err) < 0 || policy_drop_all_caps(err) < 0)
		goto out;
	r = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? error_set(err, errno, "cannot set no_new_privs for qemu") : 0;
out:
	shares_free(sh, n);
	return r;
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
