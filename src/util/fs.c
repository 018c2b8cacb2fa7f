/* SPDX-License-Identifier: Apache-2.0 */
/* fs.c - file and directory helpers used by the run directory, the record and the cell setup. */
#include "util/fs.h"

#include <dirent.h>
#include <stdint.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "util/sys.h"

char *read_fd(int fd, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = xmalloc(cap);
	for (;;) {
		if (n + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *read_file_at(int dirfd, const char *path, size_t *len)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	return read_fd(fd, len);
}

char *read_file(const char *path, size_t *len) { return read_file_at(AT_FDCWD, path, len); }

char *read_file_in_root(const char *root, const char *rel, size_t *len)
{
	_cleanup_close_ int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return rfd < 0 ? NULL : read_file_in_root_fd(rfd, rel, len);
}

char *read_file_in_root_fd(int rfd, const char *rel, size_t *len)
{
	while (*rel == '/')
		rel++;
	/* links stay inside root */
	_cleanup_close_ int fd = sys_openat2(rfd, rel, O_RDONLY, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	if (fd < 0)
		return NULL;
	return read_fd(fd, len);
}

int write_all(int fd, const void *data, size_t len)
{
	const char *b = data;
	while (len) {
		ssize_t w = write(fd, b, len);
		if (w < 0) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			if (errno == EINTR || (errno == EAGAIN && poll(&p, 1, -1) >= 0))
				continue;
			return -errno;
		}
		b += w;
		len -= (size_t)w;
	}
	return 0;
}

int write_file(const char *path, const char *data, size_t len)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	return write_all(fd, data, len);
}

int write_file_atomic_at(int dfd, const char *name, const char *data, size_t len, mode_t mode)
{
	/* a name of our own, never followed through a link, never an old file's mode. No fsync:
	 * readers see the old or the new file whole (rename), which is what the record needs;
	 * an fsync cost a millisecond or two per run */
	_cleanup_free_ char *tmp = xasprintf("%s.tmp.%d", name, (int)getpid());
	_cleanup_close_ int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0 && errno == EEXIST && unlinkat(dfd, tmp, 0) == 0)
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	int r = fchmod(fd, mode) < 0 ? -errno : 0;
	if (r == 0)
		r = write_all(fd, data, len);
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dfd, tmp, 0);
	return r;
}

bool is_atomic_tmp_name(const char *name)
{
	const char *t = strstr(name, ".tmp.");
	if (!t || t == name)
		return false;
	/* the last ".tmp." is the one write_file_atomic_at added */
	for (const char *n; (n = strstr(t + 1, ".tmp.")); t = n)
		;
	const char *d = t + 5;
	if (!*d)
		return false;
	for (; *d; d++)
		if (*d < '0' || *d > '9')
			return false;
	return true;
}

int write_file_atomic(const char *path, const char *data, size_t len, mode_t mode)
{
	return write_file_atomic_at(AT_FDCWD, path, data, len, mode);
}

int mkdir_p(const char *path, mode_t mode)
{
	if (!*path)
		return -ENOENT;
	_cleanup_free_ char *p = xstrdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, mode) < 0) {
		if (errno != EEXIST)
			return -errno;
		if (!is_dir(p))
			return -ENOTDIR;
	}
	return 0;
}

/* One level of the removal: a directory being emptied, its name in its parent, and which
 * directory it is (climbing back with ".." must land on it again). */
struct frame {
	char *name;
	dev_t dev;
	ino_t ino;
};

/* Is fd the directory (dev, ino)? */
static bool same_dir(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

static int open_dir_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES) {
		/* a directory without r or x for us: make it usable, then retry */
		if (fchmodat(dirfd, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
			fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	return fd;
}

/* Remove the non-directory entries of fd and its empty subdirectories up to the first that is
 * not empty; return that one's name (heap), or NULL when the directory holds nothing more.
 * A subdirectory past the first non-empty one is left for a later pass, untouched: each pass
 * reads the whole directory again, and a removal tried on every remaining subdirectory each
 * time would make a wide tree cost calls in the square of its width (each one a round trip
 * to the supervisor when the write watch is on). */
static char *empty_files(int fd, int *first_err)
{
	int dup_fd = dup(fd);
	if (dup_fd < 0) {
		*first_err = *first_err ? *first_err : -errno;
		return NULL;
	}
	DIR *d = fdopendir(dup_fd);
	if (!d) {
		close(dup_fd);
		*first_err = *first_err ? *first_err : -errno;
		return NULL;
	}
	rewinddir(d);
	char *sub = NULL;
	struct dirent *e;
	fchmod(fd, 0700); /* so that unlink works in a read-only directory we own */
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		bool is_dir = e->d_type == DT_DIR;
		if (!is_dir) {
			if (unlinkat(fd, e->d_name, 0) == 0 || errno == ENOENT)
				continue;
			struct stat st;
			is_dir = (errno == EISDIR || errno == EPERM) &&
				 fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
			if (!is_dir) {
				if (!*first_err)
					*first_err = -errno;
				continue;
			}
		}
		if (sub)
			continue;
		if (unlinkat(fd, e->d_name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			continue;
		/* d_type said directory, but it is not one now (replaced meanwhile) */
		if (errno == ENOTDIR && (unlinkat(fd, e->d_name, 0) == 0 || errno == ENOENT))
			continue;
		sub = xstrdup(e->d_name);
	}
	closedir(d);
	return sub;
}

int rm_tree_at(int dirfd, const char *name)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
	if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0)
		return 0;

	int first_err = 0;
	size_t depth = 0, cap = 16;
	struct frame *stack = xmalloc(cap * sizeof *stack);
	stack[0].name = xstrdup(name);
	int parent = dirfd == AT_FDCWD ? open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
				       : fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (parent < 0) {
		free(stack[0].name);
		free(stack);
		return -errno;
	}
	int cur = open_dir_at(parent, name);
	struct stat top;
	if (cur < 0 || fstat(cur, &top) < 0) {
		first_err = -errno;
		closep(&cur);
		goto out;
	}
	stack[0].dev = top.st_dev;
	stack[0].ino = top.st_ino;
	/* Descend into the first subdirectory that is not empty; climb back up with ".."
	 * when a directory is empty, removing it from its parent. One fd for the walk, so depth
	 * is unbounded; but whoever can rename directories in the tree (another process holding
	 * a descriptor of it) could move one we are in higher up while we work, and ".." would
	 * then leave the tree: each level is remembered by (dev, ino), and a climb that does not
	 * land where it came from, or a descent onto another file system, stops the removal. */
	for (;;) {
		char *sub = empty_files(cur, &first_err);
		if (sub) {
			int next = open_dir_at(cur, sub);
			struct stat st;
			if (next < 0 || fstat(next, &st) < 0 || st.st_dev != top.st_dev) {
				if (!first_err)
					first_err = next < 0 ? -errno : -EXDEV;
				closep(&next);
				free(sub);
				break;
			}
			if (depth + 1 == cap)
				stack = xrealloc(stack, (cap *= 2) * sizeof *stack);
			stack[++depth] = (struct frame){ .name = sub, .dev = st.st_dev, .ino = st.st_ino };
			close(cur);
			cur = next;
			continue;
		}
		if (first_err)
			break;
		if (depth == 0)
			break;
		int up = openat(cur, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (up < 0 || !same_dir(up, stack[depth - 1].dev, stack[depth - 1].ino)) {
			first_err = up < 0 ? -errno : -ESTALE;
			closep(&up);
			break;
		}
		close(cur);
		cur = up;
		if (unlinkat(cur, stack[depth].name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
			first_err = -errno;
			break;
		}
		free(stack[depth].name);
		depth--;
	}
	close(cur);
	if (!first_err && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		first_err = -errno;
out:
	for (size_t i = 0; i <= depth; i++)
		free(stack[i].name);
	free(stack);
	close(parent);
	return first_err;
}

bool lock_held_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	bool held = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_SH | LOCK_NB) < 0 &&
		    errno == EWOULDBLOCK;
	closep(&fd);
	return held;
}

int rm_tree(const char *path) { return rm_tree_at(AT_FDCWD, path); }

static unsigned long long bytes_at(int fd, dev_t dev, int depth)
{
	unsigned long long total = 0;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
			continue;
		total += (unsigned long long)st.st_blocks * 512;
		if (S_ISDIR(st.st_mode) && depth < 256) {
			int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				total += bytes_at(sub, dev, depth + 1);
		}
	}
	closedir(d);
	return total;
}

unsigned long long tree_bytes_fd(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return 0;
	}
	return bytes_at(fd, st.st_dev, 0);
}

bool path_exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool path_beneath(const char *path, const char *dir)
{
	if (!dir)
		return false;
	if (!strcmp(dir, "/"))
		return true;
	size_t n = strlen(dir);
	return !strncmp(path, dir, n) && (path[n] == '/' || !path[n]);
}

char *abs_path(const char *path)
{
	return realpath(path, NULL);
}

/* ---- one descriptor over a unix socket ---- */

void fd_msg(struct msghdr *mh, struct iovec *iov, union fd_cmsg *c, int fd, const void *data, size_t len)
{
	memset(c, 0, sizeof *c);
	memset(mh, 0, sizeof *mh);
	*iov = (struct iovec){ .iov_base = (void *)data, .iov_len = len };
	mh->msg_iov = iov;
	mh->msg_iovlen = 1;
	if (fd >= 0) {
		mh->msg_control = c->buf;
		mh->msg_controllen = sizeof c->buf;
		struct cmsghdr *cm = CMSG_FIRSTHDR(mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
}

int fd_send(int sock, int fd, const void *data, size_t len)
{
	union fd_cmsg c;
	struct iovec iov;
	struct msghdr mh;
	fd_msg(&mh, &iov, &c, fd, data, len);
	ssize_t n;
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

ssize_t fd_recv(int sock, int flags, void *data, size_t len, int *fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov = { .iov_base = data, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof c.buf };
	*fd = -1;
	ssize_t n;
	do
		n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
		int got;
		memcpy(&got, CMSG_DATA(cm), sizeof(int));
		if (cm->cmsg_len == CMSG_LEN(sizeof(int)) && !(mh.msg_flags & MSG_CTRUNC))
			*fd = got;
		else
			close(got);
	}
	return n;
}

static char *abs_path_would_be_rest(const char *parent, const char *rest)
{
	if (!*rest || !strcmp(rest, "."))
		return xstrdup(parent);
	return xasprintf("%s%s%s", parent, strcmp(parent, "/") ? "/" : "", rest);
}

char *abs_path_would_be(const char *path)
{
	char *real = abs_path(path);
	if (real || errno != ENOENT)
		return real ? real : xstrdup(path);
	/* the deepest ancestor that exists, made absolute, and the rest as given */
	_cleanup_free_ char *copy = xstrdup(path);
	char *slash = strrchr(copy, '/');
	if (!slash) {
		_cleanup_free_ char *cwd = abs_path(".");
		return cwd ? abs_path_would_be_rest(cwd, path) : xstrdup(path);
	}
	const char *rest = path + (slash - copy) + 1;
	*slash = '\0';
	_cleanup_free_ char *parent = abs_path_would_be(*copy ? copy : "/");
	return abs_path_would_be_rest(parent, rest);
}

/* ---- what a read end tells ---- */

size_t fd_queued(int fd)
{
	int n = 0;
	return ioctl(fd, FIONREAD, &n) == 0 && n > 0 ? (size_t)n : 0;
}

bool fd_writer_open(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	return poll(&p, 1, 0) >= 0 && !(p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

char *host_tool_find(const char *name)
{
	_cleanup_free_ char *dirs = xstrdup(HOST_TOOL_DIRS);
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", d, name);
		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	return NULL;
}

/* (the same file systems as cell/container/hostroot.c's KERNEL_TYPES, which names them as mountinfo does) */
bool fs_is_kernel(int fd)
{
	static const long types[] = { PROC_SUPER_MAGIC, SYSFS_MAGIC, CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, DEBUGFS_MAGIC,
				      TRACEFS_MAGIC, SECURITYFS_MAGIC, BPF_FS_MAGIC, DEVPTS_SUPER_MAGIC, 0x19800202 /* mqueue */,
				      PSTOREFS_MAGIC, NSFS_MAGIC, EFIVARFS_MAGIC, BINFMTFS_MAGIC, 0x62656570 /* configfs */,
				      0x65735543 /* fusectl */, 0x1373 /* devtmpfs */, HUGETLBFS_MAGIC, AUTOFS_SUPER_MAGIC,
				      SELINUX_MAGIC, 0x67596969 /* rpc_pipefs */, 0x6e667364 /* nfsd */ };
	struct statfs fs;
	if (fstatfs(fd, &fs) < 0)
		return false;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if ((long)fs.f_type == types[i])
			return true;
	return false;
}
