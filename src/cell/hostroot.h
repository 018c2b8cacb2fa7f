/* SPDX-License-Identifier: Apache-2.0 */
/* hostroot.h - the cell's read-only view of the host's / (without --rootfs), made so that no
 * pathname unix socket of the host can be connected to from the cell (see
 * container/hostroot.c). */
#ifndef WARREN_CELL_HOSTROOT_H
#define WARREN_CELL_HOSTROOT_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

/* Mount the view of the host's / on the directory target (in init's mount namespace, before
 * pivot_root): every file system that may hold sockets through an overlay of its own, kernel
 * file systems bound as they are, all read-only, nosuid, nodev. Nothing is mounted at or
 * below the paths in skip (NULL-terminated: what the cell replaces, /proc, /tmp, the state
 * directory...). rootless: the host's mounts are locked in init's namespace (a directory
 * with mounts below cannot be an overlay's layer), so such directories are rebuilt on a
 * small tmpfs instead. */
struct hostroot_point {
	const char *path;    /* absolute, normalised, in the cell */
	bool file;           /* an empty file, else a directory */
};
/* points: mount points the cell needs (a --bind's destination) that the host may not have;
 * each is made, with the directories on its way, in a layer of the view's own (never on the
 * host), where its parent is seen through an overlay or rebuilt. */
int hostroot_mount(const char *target, bool rootless, const char *const *skip, const struct hostroot_point *points,
		   size_t npoints, struct error *err);

/* The VM's shares (vm/vmjail.c): every kernel file system mounted at or below the directory dir
 * of this mount namespace (where the copies of the trees qemu shares lie: 9p crosses mounts)
 * covered with an empty read-only directory, or an empty file where one is mounted on a file:
 * the same file systems the container's view leaves out (KERNEL_TYPES), /proc, /sys and /dev
 * too. The empty ones lie on a small tmpfs mounted on the directory spot (outside dir). One
 * the kernel will not mount on and that cannot be read (a bind of a /proc file of a process
 * that has ended) is gone: left as it is. */
int hostroot_cover_kernel_fs(const char *dir, const char *spot, struct error *err);

/* A source the cell gets whole with what is mounted below it (the worktree, a bind's source:
 * open as fd, at path): refused (-EINVAL, the line in err naming what) when it is on a
 * kernel's file system or has one mounted below it, which would show the host's processes,
 * devices or settings in the cell. fresh: read the mount table now, else use the one read
 * last in this process (a cell's init: the host view's). */
int hostroot_check_source(const char *what, const char *path, int fd, bool fresh, struct error *err);

#endif
