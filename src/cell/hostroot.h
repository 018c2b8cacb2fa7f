/* hostroot.h - the cell's read-only view of the host's / (without --rootfs), made so that no
 * pathname unix socket of the host can be connected to from the cell (see hostroot.c). */
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

/* Whether a kernel file system (proc, sysfs, cgroup...) is mounted below the directory dir (an
 * absolute, normalised path of this mount namespace): its mount point and type (heap) then. */
bool hostroot_kernel_fs_below(const char *dir, char **mountpoint, char **type);

#endif
