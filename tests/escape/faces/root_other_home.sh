#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# root_other_home.sh MODE - escape class root_other_home (issue 31, class 2): root runs a job
# whose root file system is another user's home (the image's idmap shows her uid 1000 as the
# cell's run user): from a job file beside it (rootfs: ..), and from root's own command line
# (--rootfs). The job reads her 0600 file in her 0700 directory. Refused by the gate for a
# root caller: no root that is, lies in or holds another user's home. Modes: root, vm (the same
# gate before the guest); rootless, the kernel keeps the caller to her own rights. See lib.sh.
CLASS=root_other_home
. "$(dirname "$0")/lib.sh"
face_setup root vm
SECRET=other-home-secret-$$-$RANDOM
U=wtalice$$
# uid 1000 when it is free: the run user's id in the cell, so the idmap shows her files as the job's
uid=1000
getent passwd 1000 >/dev/null && uid=$(awk -F: 'BEGIN { u = 61000 } $3 >= u && $3 < 62000 { used[$3] = 1 } END { while (used[u]) u++; print u }' /etc/passwd)
useradd --no-create-home --home-dir "$D/alice" --uid "$uid" --user-group --shell /usr/sbin/nologin "$U" 2>/dev/null ||
	verdict "untested: cannot create the user $U"
FACE_USERS+=("$U")
mkdir -p "$D/alice/private" "$D/alice/jobs" "$D/state" "$D/work"
busybox_in "$D/alice/bin"
echo "$SECRET" >"$D/alice/private/key"
chmod 600 "$D/alice/private/key" && chmod 700 "$D/alice/private" "$D/alice"
chown -R "$U:$U" "$D/alice"
chown -R root:root "$D/alice/bin"
DRV=() DRVKEY=
[ "$MODE" = vm ] && DRV=(--driver vm) DRVKEY="driver: vm"
printf 'rootfs: ..\n%s\nsteps:\n  - run: cat /private/key\n' "$DRVKEY" >"$D/alice/jobs/ci.yaml"
chown "$U:$U" "$D/alice/jobs" "$D/alice/jobs/ci.yaml"
w job run "$D/alice/jobs/ci.yaml" --state "$D/state" --work "$D/work"
echo "$CLASS: tried root running her job file with rootfs: ..: exit $RC: ${ERR%%$'\n'*}"
[[ $OUT == *"$SECRET"* ]] && escaped "the job read $U's 0600 file through her job file's rootfs"
[ "$RC" = 125 ] || escaped "her job file's rootfs: .. was not refused (exit $RC)"
w run "${DRV[@]}" --state "$D/state" --work "$D/work" --rootfs "$D/alice" -- /bin/cat /private/key
echo "$CLASS: tried root's --rootfs of her home: exit $RC: ${ERR%%$'\n'*}"
[[ $OUT == *"$SECRET"* ]] && escaped "the job read $U's 0600 file with --rootfs of her home"
[ "$RC" = 125 ] && [[ $ERR == *"the home of $U"* ]] || escaped "--rootfs of $U's home was not refused by the gate (exit $RC): $ERR"
held
