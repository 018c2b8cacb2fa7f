/* SPDX-License-Identifier: Apache-2.0 */
/* mounts.h - the decisions about a cell's extra mounts (--bind, --ro-bind, --externals) and
 * its other names (--workdir, --hostname), as pure functions of their text: which host trees
 * may be bound, where in the cell a mount may go, what a hostname may be. The CLI and the job
 * file ask them before a cell is made; the container driver asks mount_dst_refused again of
 * the path a destination resolved to inside the cell. */
#ifndef WARREN_CELL_MOUNTS_H
#define WARREN_CELL_MOUNTS_H

#include <stdbool.h>

#include "cell/spec.h"

/* A host directory a job may not have read-write, as a worktree or a --bind source: /, the
 * system's trees and anything below /etc, /usr, /proc... (lexical; path absolute and
 * normalised). */
bool path_is_system_tree(const char *path);
/* A host tree no image's root may be (--rootfs, an OCI bundle's root.path): the root's files of
 * an image are the cell root's (idmapped), so /etc/shadow or /root's keys would be readable in
 * the cell. Its own trees (/etc, /root, /boot, /proc, /sys, /dev and below) and the
 * directories of everyone's (/tmp, /var, /var/lib, /home, /srv, /opt, /mnt, /media, /run). */
bool rootfs_refused(const char *path);
/* A host tree no bind may show, even read-only: the kernel's (/proc, /sys, /dev: the host's
 * processes and devices), where the host's services keep their sockets (/run, /var/run) and /,
 * /tmp and /var/tmp themselves (the host's sockets and other users' files). A reason, or NULL. */
const char *mount_source_refused(const char *path);
/* "SRC[:DST]" split (DST defaults to SRC); the first ':' separates them. */
void mount_arg_split(const char *arg, char **src, char **dst);
/* dst normalised (absolute, no ".", "..", empty components or trailing '/'), or NULL with a
 * reason in *why. */
char *mount_dst_normalise(const char *dst, const char **why);
/* Why a mount may not go to dst (normalised) in cell s, or NULL: over /, at or below /proc,
 * /dev, /sys, /tmp, /var/tmp, the worktree or the state directory, or over a directory that
 * holds one of them or the home (the cell's own parts would be hidden). */
const char *mount_dst_refused(const char *dst, const struct cell_spec *s);
/* The same for a pod's volume (an OCI bundle's bind: pod), which may also go at or below /tmp
 * and /var/tmp (the pod's scratch then, not the cell's) and on a new file directly in /dev
 * (/dev/termination-log), none of the cell's own entries there. */
const char *mount_dst_refused_for(const char *dst, const struct cell_spec *s, bool pod);
/* An RFC 1123 label: 1-63 letters, digits and '-', not starting or ending with '-'. */
bool hostname_valid(const char *name);

#endif
