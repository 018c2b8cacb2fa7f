#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# jobfile_rootfs.sh MODE - escape class jobfile_rootfs (issue 31, class 1): a repository's job
# file names `rootfs: ..`, the caller's home, and brings a static busybox in through a
# confined ro-binds:; its step reads ~/.ssh/id_rsa. A job file may only name paths below its
# own directory (cell/gate.h): refused before anything runs. Modes: user (the class as
# found), root, vm (driver: vm: the same gate before any guest). See lib.sh.
CLASS=jobfile_rootfs
. "$(dirname "$0")/lib.sh"
face_setup root user vm
SECRET=jobfile-rootfs-secret-$$-$RANDOM
mkdir -p "$D/home/.ssh" "$D/home/repo/bb" "$D/state"
echo "$SECRET" >"$D/home/.ssh/id_rsa"
chmod 700 "$D/home/.ssh" && chmod 600 "$D/home/.ssh/id_rsa"
busybox_in "$D/home/repo/bb"
mine "$D/home" "$D/home/.ssh" "$D/home/.ssh/id_rsa" "$D/home/repo" "$D/state"
DRV=
[ "$MODE" = vm ] && DRV="driver: vm"
cat >"$D/home/repo/ci.yaml" <<YAML
rootfs: ..
ro-binds: [ "bb:/bin" ]
$DRV
steps:
  - run: cat /.ssh/id_rsa
YAML
chmod 644 "$D/home/repo/ci.yaml"
w job run "$D/home/repo/ci.yaml" --state "$D/state" --work "$D/home/repo"
echo "$CLASS: tried a job file with rootfs: .. reading ~/.ssh/id_rsa: exit $RC: ${ERR%%$'\n'*}"
[[ $OUT == *"$SECRET"* ]] && escaped "the job read the caller's ~/.ssh/id_rsa through rootfs: .."
[ "$RC" = 125 ] && [[ $ERR == *"rootfs: $D/home: it is outside the job file's directory"* ]] || escaped "not refused by the gate (exit $RC): $ERR"
held
