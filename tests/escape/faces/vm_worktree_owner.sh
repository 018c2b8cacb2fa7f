#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vm_worktree_owner.sh MODE - escape class vm_worktree_owner (issue 34, point 5): the vm
# driver's qemu serves a worktree of another user's (root runs warren on warren-test's
# worktree) through an idmapped copy, so it acts as that owner there; a guest that broke into
# qemu must reach no more of the owner's than the worktree. The job is guest root (a job that
# took the guest kernel has no less) and reads the owner's 0600 file outside the worktree; then
# a process in qemu's user and mount namespaces with qemu's ids (nsenter: what qemu itself
# could do, bar its open descriptors) reads the owner's 0600 file in the worktree's share (the
# control: it is qemu's equal), and tries the owner's 0600 file outside it, and writes in the
# owner's directory outside it and in another.
#
# MODE: vm (the class is the vm driver's; any other mode says untested). Environment: WARREN,
# SCRATCH (tests/escape/faces/lib.sh); WARREN_VM_ACCEL is passed on. Run as root. The last
# line on stdout is
#   vm_worktree_owner: held | ESCAPED: WHAT | untested: WHY
CLASS=vm_worktree_owner
. "$(dirname "$0")/lib.sh"
face_setup vm
command -v qemu-system-x86_64 >/dev/null || verdict "untested: qemu-system-x86_64 is not installed (qemu-system-x86)"
[ -x "$(dirname "$WARREN")/warren-guest-init" ] || verdict "untested: no warren-guest-init beside $WARREN"
command -v nsenter >/dev/null || verdict "untested: no nsenter (util-linux)"
ou=$(id -u warren-test 2>/dev/null) || verdict "untested: no user warren-test (tests/lib.sh makes it)"
og=$(id -g warren-test)

mkdir -p "$D/work/sub" "$D/priv" "$D/state"
echo x >"$D/work/sub/x"
echo owner-secret >"$D/priv/secret"
chmod 600 "$D/work/sub/x" "$D/priv/secret"
chmod 755 "$D/work"
chmod 700 "$D/work/sub" "$D/priv"
chown -R "$ou:$og" "$D/work" "$D/priv"

# shellcheck disable=SC2016 # (the job's shell expands it)
timeout -k 5 240 "$WARREN" run --state "$D/state" --work "$D/work" --driver vm --user 0 -- sh -c '
	cat "$1/priv/secret" 2>/dev/null || echo guest-refused; echo ready
	i=0; while ! test -e "$1/work/go" && [ $i -lt 1500 ]; do sleep 0.1; i=$((i + 1)); done' _ "$D" \
	</dev/null >"$D/out" 2>"$D/err" &
bg=$!
FACE_PIDS+=("$bg")
for _ in $(seq 1500); do
	grep -qs '^ready$' "$D/out" || ! kill -0 "$bg" 2>/dev/null && break
	sleep 0.1
done
grep -qs '^ready$' "$D/out" || verdict "untested: the VM's job did not start: $(tail -n 1 "$D/err")"
rd=
for r in "$D/state/runs"/run_*; do rd=$r; done
qpid=
for p in $(pgrep -f -- "-name $rd"); do
	[[ $(readlink "/proc/$p/exe") == *qemu-system* ]] && qpid=$p && break
done
[ -n "$qpid" ] || verdict "untested: no qemu of the run $rd found"
inside=$(awk '{ print $1; exit }' "/proc/$qpid/uid_map")
# shellcheck disable=SC2016 # (the probe's shell expands it)
probe=$(nsenter -t "$qpid" -U -m -S "$inside" -G "$inside" -- /bin/sh -c '
	echo "share $(cat /tmp/.warren-shares/work/sub/x 2>&1)"
	echo "secret $(cat "$1/priv/secret" 2>&1)"
	echo x >"$1/priv/x"; echo x >"$1/x"' _ "$D" 2>&1)
touch "$D/work/go"
wait "$bg"
rc=$?
[ "$rc" = 0 ] || verdict "untested: the VM run failed ($rc): $(tail -n 1 "$D/err")"
if grep -q owner-secret "$D/out" || [ "$(head -n 1 "$D/out")" != guest-refused ]; then
	escaped "guest root read warren-test's 0600 file outside the worktree through qemu's share"
fi
grep -qx 'share x' <<<"$probe" || verdict "untested: the probe in qemu's namespaces could not read the worktree's share as qemu does: $(tr '\n' ' ' <<<"$probe")"
grep -q owner-secret <<<"$probe" && escaped "qemu's ids read warren-test's 0600 file outside the worktree"
[ -e "$D/priv/x" ] && escaped "qemu's ids wrote in warren-test's directory outside the worktree"
[ -e "$D/x" ] && escaped "qemu's ids wrote in a directory outside the worktree"
held
