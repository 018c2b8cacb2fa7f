#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci_caps_dropped.sh MODE - escape class oci_caps_dropped (issue 36, 6): an OCI bundle that
# drops every capability keeps none, in its job and in an exec, whatever the exec's process
# asks for. containerd's CRI writes a container that dropped ALL as "capabilities": {} (its
# empty lists omitted); a runtime that takes a set left out for "all of them" hands the job
# root's set. Tried: {} and every set given empty, the job's CapPrm, CapEff and CapBnd read from
# /proc/self/status, then an exec into the {} container whose process names CAP_SYS_ADMIN,
# CAP_KILL and CAP_CHOWN in every set. Any bit set is an escape. Modes: root, user.
CLASS=oci_caps_dropped
. "$(dirname "$0")/lib.sh"
face_setup root user
RUNC=$(dirname "$WARREN")/warren-runc
[ -x "$RUNC" ] || verdict "untested: no warren-runc beside $WARREN"
mkdir -p "$D/root" "$D/b" "$D/state"
mine "$D/root" "$D/b" "$D/state"
"${RUN[@]}" "$WARREN" run --state "$D/state" --work none -- true >/dev/null 2>&1 || verdict "untested: warren run failed"
(cd "$D/b" && "${RUN[@]}" "$RUNC" spec) || verdict "untested: warren-runc spec failed"
busybox_in "$D/b/rootfs/bin"
ln -sf busybox "$D/b/rootfs/bin/sleep"
# the sets of this process, one line: "CapPrm:X CapEff:Y CapBnd:Z"
SETS='while read -r k v; do case $k in CapPrm:|CapEff:|CapBnd:) printf "%s%s " "$k" "$v";; esac; done </proc/self/status; echo'
bundle() { # CAPABILITIES_JSON ARGS_JSON
	python3 - "$D/b/config.json" "$1" "$2" "$D/state" <<'PY'
import json, sys
f, caps, args, state = sys.argv[1:5]
c = json.load(open(f))
c["process"]["args"] = json.loads(args)
c["process"]["terminal"] = False
c["process"]["capabilities"] = json.loads(caps)
c["annotations"] = {"warren.state": state}
json.dump(c, open(f, "w"))
PY
}
# zero LINE WHAT: every set of LINE is 0, else the escape
zero() {
	echo "$CLASS: $2: $1"
	[[ $1 == *CapBnd:* ]] || escaped "$2: no capability sets read ($1)"
	for kv in $1; do
		[ "$((16#${kv#*:}))" = 0 ] || escaped "$2 holds capabilities: $1"
	done
}
args=$(python3 -c 'import json,sys; print(json.dumps(["/bin/sh", "-c", sys.argv[1]]))' "$SETS")
for caps in '{}' '{"bounding": [], "effective": [], "permitted": [], "inheritable": [], "ambient": []}'; do
	bundle "$caps" "$args"
	out=$(timeout -k 5 60 "${RUN[@]}" "$RUNC" --root "$D/root" run --bundle "$D/b" c1 </dev/null 2>"$D/err")
	[ -n "$out" ] || verdict "untested: the job did not run ($(head -1 "$D/err"))"
	zero "$out" "the job of a bundle with capabilities $caps"
done
# an exec into the container of {} whose process asks for more
bundle '{}' '["/bin/sleep", "60"]'
timeout -k 5 60 "${RUN[@]}" "$RUNC" --root "$D/root" create --bundle "$D/b" c2 </dev/null >/dev/null 2>"$D/err" &&
	timeout -k 5 60 "${RUN[@]}" "$RUNC" --root "$D/root" start c2 </dev/null >/dev/null 2>>"$D/err" ||
	verdict "untested: the container did not start ($(head -1 "$D/err"))"
python3 - "$D/p.json" "$SETS" <<'PY'
import json, sys
want = ["CAP_SYS_ADMIN", "CAP_KILL", "CAP_CHOWN"]
json.dump({"args": ["/bin/sh", "-c", sys.argv[2]], "cwd": "/", "user": {"uid": 0, "gid": 0},
           "capabilities": {s: want for s in ("bounding", "effective", "permitted", "inheritable", "ambient")}},
          open(sys.argv[1], "w"))
PY
mine "$D/p.json"
out=$(timeout -k 5 60 "${RUN[@]}" "$RUNC" --root "$D/root" exec --process "$D/p.json" c2 </dev/null 2>"$D/err")
"${RUN[@]}" "$RUNC" --root "$D/root" delete -f c2 >/dev/null 2>&1
[ -n "$out" ] || verdict "untested: the exec did not run ($(head -1 "$D/err"))"
zero "$out" "an exec asking for SYS_ADMIN, KILL and CHOWN in a container of capabilities {}"
held
