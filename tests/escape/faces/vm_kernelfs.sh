#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vm_kernelfs.sh MODE - escape class vm_kernelfs (issue 31, class 6): a kernel's file system
# the host mounted outside /proc (a chroot's or debootstrap tree's proc, a sysfs mounted
# elsewhere, a proc file bound on a file) must not show the host's processes to a job. The
# host mounts a proc and a sysfs under the scratch, starts a marker process and binds its
# /proc/PID/cmdline on a file there; the job (unprivileged) lists them and reads the marker's
# command line in both (with O_DIRECT too: a VM's 9p cache would read a proc file as empty).
# Then a proc the host mounts below the worktree and below a --ro-bind's source while the job
# runs (the vm driver's qemu shared these by the host's descriptors, which follow the host's
# mounts as they change): unseen. Then a worktree with a proc mounted below it: refused, or
# at least empty.
#
# MODE: vm (--driver vm: qemu's 9p root share crosses mounts) | root | user (the container
# driver's view of the host's /, warren run by root or by warren-test rootless) | image (a
# container on a root file system with a proc mounted inside it). Environment: WARREN (the
# binary), SCRATCH or TEST_SCRATCH (a directory to work in; everything made there is
# removed, everything mounted unmounted); WARREN_VM_ACCEL is passed on (without it the first
# VM of the state directory probes KVM). Run as root. The last line on stdout is
#   vm_kernelfs: held | ESCAPED: WHAT | untested: WHY
set -u
CLASS=vm_kernelfs
MODE=${1:-}
verdict() { echo "$CLASS: $*"; exit 0; }

case $MODE in
root | user | image | vm) ;;
*) verdict "untested: unknown mode '$MODE' (root, user, image or vm)" ;;
esac
[ -x "${WARREN:-}" ] || verdict "untested: no warren binary in \$WARREN"
SCRATCH=${SCRATCH:-${TEST_SCRATCH:-}}
[ -d "$SCRATCH" ] || verdict "untested: no scratch directory in \$SCRATCH"
[ "$(id -u)" = 0 ] || verdict "untested: run as root (it mounts a proc and a sysfs; mode user runs warren as warren-test)"
if [ "$MODE" = vm ]; then
	command -v qemu-system-x86_64 >/dev/null || verdict "untested: qemu-system-x86_64 is not installed (qemu-system-x86)"
	[ -x "$(dirname "$WARREN")/warren-guest-init" ] || verdict "untested: no warren-guest-init beside $WARREN"
fi
BUSYBOX=/bin/busybox
if [ "$MODE" = image ]; then
	file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || verdict "untested: no static $BUSYBOX (install busybox-static)"
fi

RUN=()
if [ "$MODE" = user ]; then
	uid=$(id -u warren-test 2>/dev/null) || verdict "untested: no user warren-test (tests/lib.sh makes it)"
	gid=$(id -g warren-test)
	RUN=(setpriv --reuid="$uid" --regid="$gid" --init-groups env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent)
fi

D=$(mktemp -d -p "$SCRATCH" vm-kernelfs.XXXXXX) || verdict "untested: cannot make a directory in $SCRATCH"
chmod 755 "$D"
MARKER_PID=
# shellcheck disable=SC2317 # (the trap calls it)
cleanup() {
	[ -n "$MARKER_PID" ] && kill "$MARKER_PID" 2>/dev/null
	awk -v d="$D" 'index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf --one-file-system "$D"
}
trap cleanup EXIT

mkdir -p "$D/host/proc" "$D/host/sys" "$D/wt/chroot/proc" "$D/state" "$D/work/late" "$D/late"
chmod -R 755 "$D/host" "$D/wt" "$D/work" "$D/late"
if [ "$MODE" = user ]; then
	chown "$uid:$gid" "$D/state" "$D/work"
elif [ "$MODE" = vm ]; then
	chown 1000001000:1000001000 "$D/work" # qemu serves the worktree as the run user's host uid
fi
mount -t proc proc "$D/host/proc" || verdict "untested: cannot mount a proc on $D/host/proc"
# a network namespace's own sysfs: not the host /sys's superblock again (a 9p client takes one
# inode at two paths for one directory)
unshare -n mount -t sysfs sysfs "$D/host/sys" || verdict "untested: cannot mount a sysfs on $D/host/sys"
mount -t proc proc "$D/wt/chroot/proc" || verdict "untested: cannot mount a proc on $D/wt/chroot/proc"
bash -c 'exec -a kfs-marker-vm-kernelfs sleep 300' &
MARKER_PID=$!
touch "$D/host/cmdline"
mount --bind "/proc/$MARKER_PID/cmdline" "$D/host/cmdline" || verdict "untested: cannot bind a proc file on $D/host/cmdline"

# where the job looks: the host's mounts, or for an image its own /mnt/p
P=$D/host/proc S=$D/host/sys F=$D/host/cmdline
ARGS=(--work "$D/work")
case $MODE in
vm) ARGS+=(--driver vm) ;;
image)
	mkdir -p "$D/img/bin" "$D/img/opt" "$D/img/mnt/p" "$D/img/mnt/s" "$D/img/proc" "$D/img/dev" "$D/img/sys" "$D/img/tmp" "$D/img/etc"
	chmod -R 755 "$D/img"
	chmod 1777 "$D/img/tmp"
	cp "$BUSYBOX" "$D/img/bin/busybox"
	for a in sh ls wc dd cat grep echo sleep test; do ln -s busybox "$D/img/bin/$a"; done
	mount -t proc proc "$D/img/mnt/p" || verdict "untested: cannot mount a proc on $D/img/mnt/p"
	unshare -n mount -t sysfs sysfs "$D/img/mnt/s" || verdict "untested: cannot mount a sysfs on $D/img/mnt/s"
	touch "$D/img/mnt/f"
	mount --bind "/proc/$MARKER_PID/cmdline" "$D/img/mnt/f" || verdict "untested: cannot bind a proc file on $D/img/mnt/f"
	P=/mnt/p S=/mnt/s F=/mnt/f
	ARGS+=(--rootfs "$D/img")
	;;
esac

# shellcheck disable=SC2016 # (the job's shell expands it)
look='echo "kfs $(ls -A '"$P"' 2>/dev/null | wc -l) $(ls -A '"$S"' 2>/dev/null | wc -l) $({ cat '"$P/$MARKER_PID"'/cmdline; dd if='"$P/$MARKER_PID"'/cmdline iflag=direct bs=4096 count=1; } 2>/dev/null | grep -ac kfs-marker) $({ cat '"$F"'; dd if='"$F"' iflag=direct bs=4096 count=1; } 2>/dev/null | grep -ac kfs-marker)"'
out=$("${RUN[@]}" timeout -k 5 120 "$WARREN" run --state "$D/state" "${ARGS[@]}" -- sh -c "$look" </dev/null 2>"$D/err")
rc=$?
[ "$rc" = 0 ] || verdict "untested: the run failed ($rc): $(tail -n 1 "$D/err")"
read -r word np ns nm nf <<<"$out"
[ "$word" = kfs ] || verdict "untested: the job said '$out'"
[ "$np" = 0 ] || verdict "ESCAPED: the job listed $np entries of a proc the host mounted at $P (the host's processes)"
[ "$ns" = 0 ] || verdict "ESCAPED: the job listed $ns entries of a sysfs the host mounted at $S"
[ "$nm" = 0 ] || verdict "ESCAPED: the job read the command line of the host's marker process $MARKER_PID in $P"
[ "$nf" = 0 ] || verdict "ESCAPED: the job read the host's marker process's command line bound on the file $F"

# a proc the host mounts below the worktree and below a --ro-bind's source once the job runs:
# the job says it is ready, the host mounts, the job looks once the host says go
# shellcheck disable=SC2016 # (the job's shell expands it)
late='echo ready; i=0; while ! test -e '"$D/work/go"' && [ $i -lt 1500 ]; do sleep 0.1; i=$((i + 1)); done
	echo "late $(ls -A '"$D/work/late"' 2>/dev/null | wc -l) $(ls -A /opt/late-bind 2>/dev/null | wc -l)"'
"${RUN[@]}" timeout -k 5 120 "$WARREN" run --state "$D/state" "${ARGS[@]}" --ro-bind "$D/late:/opt/late-bind" -- sh -c "$late" \
	</dev/null >"$D/late.out" 2>"$D/err" &
bg=$!
for _ in $(seq 1200); do
	grep -qs '^ready$' "$D/late.out" || ! kill -0 "$bg" 2>/dev/null && break
	sleep 0.1
done
mount -t proc proc "$D/work/late" || verdict "untested: cannot mount a proc on $D/work/late"
mount -t proc proc "$D/late" || verdict "untested: cannot mount a proc on $D/late"
touch "$D/work/go"
wait "$bg"
rc=$?
umount "$D/work/late" "$D/late"
[ "$rc" = 0 ] || verdict "untested: the run for the late mounts failed ($rc): $(tail -n 1 "$D/err")"
read -r word nw nb <<<"$(tail -n 1 "$D/late.out")"
[ "$word" = late ] || verdict "untested: the job said '$(tail -n 1 "$D/late.out")'"
[ "$nw" = 0 ] || verdict "ESCAPED: the job listed $nw entries of a proc the host mounted below the worktree while it ran"
[ "$nb" = 0 ] || verdict "ESCAPED: the job listed $nb entries of a proc the host mounted below a --ro-bind's source while it ran"

# a worktree with a proc mounted below it: refused before the job runs, or shown empty
WARGS=("${ARGS[@]}")
WARGS[1]=$D/wt
[ "$MODE" = vm ] && chown 1000001000:1000001000 "$D/wt"
[ "$MODE" = user ] && chown "$uid:$gid" "$D/wt"
out=$("${RUN[@]}" timeout -k 5 120 "$WARREN" run --state "$D/state" "${WARGS[@]}" -- sh -c "ls -A $D/wt/chroot/proc | wc -l" </dev/null 2>"$D/err")
rc=$?
if [ "$rc" = 0 ] && [ "$out" != 0 ]; then
	verdict "ESCAPED: a worktree with a proc mounted below it showed $out entries of it (the host's processes)"
elif [ "$rc" != 0 ] && ! grep -qF "holds a proc file system (mounted at $D/wt/chroot/proc)" "$D/err"; then
	verdict "untested: the run with a proc below the worktree failed otherwise ($rc): $(tail -n 1 "$D/err")"
fi
verdict held
