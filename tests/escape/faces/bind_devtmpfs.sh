#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bind_devtmpfs.sh MODE - escape class bind_devtmpfs (issue 31, the gate's review): a bind of the
# host's /dev mounted elsewhere (a chroot's /dev) is a devtmpfs, which fstatfs reports as tmpfs:
# a --ro-bind of it, or of a directory in it, showed the cell the host's device nodes. The
# mount table names it: refused. Modes: root, user. See lib.sh.
CLASS=bind_devtmpfs
. "$(dirname "$0")/lib.sh"
face_setup root user
mkdir -p "$D/chroot/dev" "$D/state"
chmod 755 "$D/chroot" "$D/chroot/dev"
mine "$D/state"
mount --bind /dev "$D/chroot/dev" || verdict "untested: cannot bind /dev on $D/chroot/dev"
for src in "$D/chroot/dev" "$D/chroot/dev/shm"; do
	[ -d "$src" ] || continue
	w run --state "$D/state" --work none --ro-bind "$src:/mnt/d" -- ls /mnt/d
	echo "$CLASS: tried --ro-bind $src: exit $RC: ${ERR%%$'\n'*}"
	[[ $OUT == *null* || $OUT == *tty* ]] && escaped "the cell listed the host's /dev through $src"
	[ "$RC" = 125 ] || escaped "--ro-bind $src was not refused (exit $RC)"
done
held
