/* SPDX-License-Identifier: Apache-2.0 */
/* fs.h - file helpers: read/write whole files, atomic replace, mkdir -p, and a tree removal
 * that survives read-only directories, deep trees, odd names, sockets and full disks. */
#ifndef WARREN_UTIL_FS_H
#define WARREN_UTIL_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include "util/error.h"

/* Read a whole file (NUL-terminated). NULL and errno set on failure. */
char *read_file(const char *path, size_t *len);
char *read_file_at(int dirfd, const char *path, size_t *len);
/* Read what is left of an open file (NUL-terminated); fd stays open. */
char *read_fd(int fd, size_t *len);
/* Read rel inside the directory root, symlinks resolved as if root were / (an untrusted
 * image's links never reach the host's files). */
char *read_file_in_root(const char *root, const char *rel, size_t *len);
/* The same inside the root directory open at rfd. */
char *read_file_in_root_fd(int rfd, const char *rel, size_t *len);
/* Send len bytes of data over the unix socket sock with the descriptor fd attached (none when
 * fd < 0). 0 or -errno. */
int fd_send(int sock, int fd, const void *data, size_t len);
/* fd_send's message, made in *mh over the caller's iov and c, with no call of the C library's
 * but memset and memcpy: for a process that must send it with syscall() (a CLONE_VM helper). */
union fd_cmsg {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};
void fd_msg(struct msghdr *mh, struct iovec *iov, union fd_cmsg *c, int fd, const void *data, size_t len);
/* Receive one message of at most len bytes from sock (flags: MSG_DONTWAIT...; EINTR is
 * retried) and the one descriptor it carries into *fd (-1 when none; close-on-exec; a
 * malformed control message is closed, not kept). The byte count (0: end), or -errno. */
ssize_t fd_recv(int sock, int flags, void *data, size_t len, int *fd);
/* The bytes waiting in the read end fd of a pipe or a terminal (FIONREAD; 0 when unknown). */
size_t fd_queued(int fd);
/* Whether some process still holds the other end of the read end fd of a pipe or of a
 * terminal's master open (no POLLHUP): its reader would wait for more. */
bool fd_writer_open(int fd);
/* Write all of data to fd (retrying short writes and EINTR; on a non-blocking fd, waiting
 * while it is full). 0 or -errno. */
int write_all(int fd, const void *data, size_t len);
/* Write data to path (created 0644 or truncated). 0 or -errno. */
int write_file(const char *path, const char *data, size_t len);
/* Write to a temporary name then rename over path: readers see old or new, never half. */
int write_file_atomic(const char *path, const char *data, size_t len, mode_t mode);
/* The same for name in the directory dfd, never through a link. */
int write_file_atomic_at(int dfd, const char *name, const char *data, size_t len, mode_t mode);
/* Whether name is a temporary name of write_file_atomic ("<name>.tmp.<pid>"): what a writer
 * killed between creating it and the rename leaves behind. */
bool is_atomic_tmp_name(const char *name);
/* mkdir -p with mode for the created components. 0 or -errno. */
int mkdir_p(const char *path, mode_t mode);
/* Remove everything below and including dirfd/name. Uses one descriptor at a time, so depth
 * is unbounded; makes directories writable as it goes; never crosses onto another file
 * system, and stops (-ESTALE) when a climb back with ".." does not land where it came from
 * (a directory of the tree moved while it works). 0 or -errno of the first failure. */
int rm_tree_at(int dirfd, const char *name);
int rm_tree(const char *path);
/* Does another process hold an flock on the regular file dfd/name (not through a link)? */
bool lock_held_at(int dfd, const char *name);
/* Total bytes allocated by files below the open directory fd (st_blocks*512), not crossing
 * mounts. Takes fd: it is closed when done. */
unsigned long long tree_bytes_fd(int fd);
bool path_exists(const char *path);
bool is_dir(const char *path);
/* Is path dir itself or below it, by their text (both absolute and normalised; "/" holds
 * every path, a NULL dir none)? "/usr/lib" is beneath "/usr", "/usrlocal" is not. */
bool path_beneath(const char *path, const char *dir);

/* Whether fd is on a kernel's file system (proc, sysfs, cgroup, debugfs, devpts, devtmpfs...):
 * one that shows the host's processes, devices or settings rather than files. */
bool fs_is_kernel(int fd);

/* Absolute, symlink-free form of path (realpath), or NULL. */
char *abs_path(const char *path);
/* The same for a path that may not exist yet: its deepest existing ancestor made absolute and
 * symlink-free, and the rest as given. */
char *abs_path_would_be(const char *path);

/* The host program name in the system's directories (HOST_TOOL_DIRS), its path (heap), or NULL.
 * Never on the caller's $PATH: a run's caller may have the worktree's bin/ on it (direnv's
 * PATH_add), where a job can plant a "pasta" or a "qemu-system-x86_64" that warren would run on
 * the host, outside the cell. */
#define HOST_TOOL_DIRS "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
char *host_tool_find(const char *name);

#endif
