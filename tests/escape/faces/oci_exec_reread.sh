#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci_exec_reread.sh MODE - escape class oci_exec_reread (issue 31, 10a): the owner of an OCI
# bundle rewrites its config.json after `warren-runc create`, widening it (no seccomp profile,
# more capabilities), then asks for an exec. What create decided must hold for every exec of
# that container: the exec still cannot make a directory (the profile denies mkdir) and has
# no capability beyond CAP_KILL.
#
# MODE: root (warren-runc run by root) | user (run by the test user warren-test, rootless) |
# image | vm (not this face's). Environment: WARREN (the binary), SCRATCH or TEST_SCRATCH (a
# directory to work in; everything made there is removed). Self-contained: a root file system
# of busybox-static's /bin/busybox, python3 for the JSON. The last line on stdout is
#   oci_exec_reread: held | ESCAPED: WHAT | untested: WHY
set -u
CLASS=oci_exec_reread
MODE=${1:-}
verdict() { echo "$CLASS: $*"; exit 0; }

case $MODE in
root | user) ;;
image) verdict "untested: the OCI face runs a bundle's root file system, not a stored image (see modes root and user)" ;;
vm) verdict "untested: the OCI face makes container cells only" ;;
*) verdict "untested: unknown mode '$MODE' (root, user, image or vm)" ;;
esac
[ -x "${WARREN:-}" ] || verdict "untested: no warren binary in \$WARREN"
SCRATCH=${SCRATCH:-${TEST_SCRATCH:-}}
[ -d "$SCRATCH" ] || verdict "untested: no scratch directory in \$SCRATCH"
[ "$(id -u)" = 0 ] || verdict "untested: run as root (mode user runs warren as warren-test)"
PY=$(command -v python3) || verdict "untested: no python3"
BUSYBOX=/bin/busybox
file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || verdict "untested: no static $BUSYBOX (install busybox-static)"

RUN=()
if [ "$MODE" = user ]; then
	uid=$(id -u warren-test 2>/dev/null) || verdict "untested: no user warren-test (tests/lib.sh makes it)"
	gid=$(id -g warren-test)
	RUN=(setpriv --reuid="$uid" --regid="$gid" --init-groups env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent)
fi

D=$(mktemp -d -p "$SCRATCH" oci-exec-reread.XXXXXX) || verdict "untested: cannot make a directory in $SCRATCH"
chmod 755 "$D"
RUNC=$D/warren-runc
ID=reread-$$
cleanup() {
	"${RUN[@]}" "$RUNC" --root "$D/root" delete --force "$ID" >/dev/null 2>&1
	rm -rf --one-file-system "$D"
}
trap cleanup EXIT
ln -s "$WARREN" "$RUNC"
mkdir -p "$D/b/rootfs/bin" "$D/b/rootfs/tmp" "$D/b/rootfs/proc" "$D/b/rootfs/dev" "$D/b/rootfs/sys" "$D/root" "$D/state"
chmod 1777 "$D/b/rootfs/tmp"
cp "$BUSYBOX" "$D/b/rootfs/bin/busybox"
for a in sh mkdir sleep grep cat; do ln -s busybox "$D/b/rootfs/bin/$a"; done
[ "$MODE" = user ] && chown -R "$uid:$gid" "$D/b" "$D/root" "$D/state"
chmod 700 "$D/root"
# the bundle's warren.state must name a state directory of the caller's that exists: a run
# makes it one
err=$("${RUN[@]}" "$WARREN" run --state "$D/state" --work none -- true 2>&1 >/dev/null) ||
	verdict "untested: cannot make the state directory $D/state with a run: $err"
(cd "$D/b" && "${RUN[@]}" "$RUNC" spec) || verdict "untested: warren-runc spec failed"

# the container's config: sleep; mkdir denied by its own seccomp profile; only CAP_KILL
"$PY" - "$D/b/config.json" "$D/state" <<'PYEOF' || verdict "untested: cannot write the bundle's config.json"
import json, sys
f, state = sys.argv[1:3]
c = json.load(open(f))
c["process"]["args"] = ["sleep", "1000"]
c["process"]["terminal"] = False
c["process"]["capabilities"] = {k: ["CAP_KILL"] for k in ("bounding", "effective", "permitted")}
c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW",
                         "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
c["annotations"] = {"warren.state": state}
json.dump(c, open(f, "w"))
PYEOF
"$PY" -c 'import json,sys; json.dump({"args": ["sh", "-c", "mkdir /tmp/w$$ 2>/dev/null && echo mkdir-made || echo mkdir-refused; grep CapEff /proc/self/status"],
	"cwd": "/", "env": ["PATH=/bin"], "user": {"uid": 0, "gid": 0}}, open(sys.argv[1], "w"))' "$D/p.json"
chmod 644 "$D/p.json"

# runc ARGS...: warren-runc as the mode's user, bounded, its output in $D/out (a file: create's
# supervisor outlives the command and would hold a pipe open)
runc() { "${RUN[@]}" timeout -k 5 60 "$RUNC" --root "$D/root" "$@" </dev/null >"$D/out" 2>&1; }
runc create --bundle "$D/b" "$ID" || verdict "untested: create failed: $(tr '\n' ' ' <"$D/out")"
runc start "$ID" || verdict "untested: start failed: $(tr '\n' ' ' <"$D/out")"
runc exec --process "$D/p.json" "$ID"
before=$(cat "$D/out")
case $before in
*mkdir-refused*CapEff*) ;;
*mkdir-made*) verdict "ESCAPED: an exec made a directory that the container's seccomp profile denies (before any change to the bundle)" ;;
*) verdict "untested: the first exec did not run: $(tr '\n' ' ' <<<"$before")" ;;
esac
caps_before=$(sed -n 's/^CapEff:[[:space:]]*//p' <<<"$before")

# the bundle's owner widens its config.json after create: no seccomp profile, every capability
"$PY" - "$D/b/config.json" <<'PYEOF' || verdict "untested: cannot rewrite the bundle's config.json"
import json, sys
c = json.load(open(sys.argv[1]))
del c["linux"]["seccomp"]
every = ["CAP_%s" % n for n in ("CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "SETUID", "SETGID", "SYS_ADMIN", "SYS_PTRACE", "NET_ADMIN")]
c["process"]["capabilities"] = {k: every for k in ("bounding", "effective", "permitted")}
json.dump(c, open(sys.argv[1], "w"))
PYEOF
runc exec --process "$D/p.json" "$ID"
after=$(cat "$D/out")
caps_after=$(sed -n 's/^CapEff:[[:space:]]*//p' <<<"$after")
case $after in
*mkdir-made*) verdict "ESCAPED: after the bundle's config.json was rewritten, an exec made a directory the profile create read denies" ;;
*mkdir-refused*CapEff*) ;;
*) verdict "untested: the exec after the rewrite did not run: $(tr '\n' ' ' <<<"$after")" ;;
esac
[ "$caps_after" = "$caps_before" ] ||
	verdict "ESCAPED: after the bundle's config.json was rewritten, an exec had the capabilities $caps_after (the container's: $caps_before)"
verdict held
