/* SPDX-License-Identifier: Apache-2.0 */
/* cellmount.h - one extra mount of a cell (--bind, --ro-bind, --externals; an OCI bundle's
 * mounts later) as plain data: a leaf header, read by the cell spec and by the policy layer
 * (Landlock rules and the refused-write answers). It includes nothing of the project. */
#ifndef WARREN_CELL_CELLMOUNT_H
#define WARREN_CELL_CELLMOUNT_H

#include <stdbool.h>

/* What the container driver mounts in the cell besides its own parts, in order, after the root,
 * /proc, /dev, /tmp, home and the worktree. */
enum cell_mount_kind {
	CELL_MOUNT_BIND,      /* the host's source (a directory or a file), checked and opened by
	                         the caller (fd), bound on destination */
};

struct cell_mount {
	char *source;         /* absolute, symlink-free path on the host */
	char *destination;    /* absolute path in the cell (normalised; see cell/mounts.h) */
	bool readonly;
	enum cell_mount_kind kind;
	int fd;               /* O_PATH of source, opened once (like worktree_fd), or -1 */
	bool pod;             /* a pod's volume (an OCI bundle's bind): may go over /tmp, /var/tmp
	                         and on a new file in /dev (cell/mounts.h mount_dst_refused_for) */
	bool slave;           /* a slave of the host's mount (rslave: a pod's HostToContainer):
	                         what the host mounts below source later shows in the cell too */
};

#endif
