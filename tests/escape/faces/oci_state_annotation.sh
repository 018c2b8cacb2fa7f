#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci_state_annotation.sh MODE - escape class oci_state_annotation (issue 31, class 5): an OCI
# bundle's annotation warren.state chose where the runtime's caller (root) writes: it made
# runs/ and the history in a directory of the bundle's choosing. A bundle may select among its
# caller's existing state directories, never make one (cell/gate.h). Modes: root, user.
CLASS=oci_state_annotation
. "$(dirname "$0")/lib.sh"
face_setup root user
RUNC=$(dirname "$WARREN")/warren-runc
[ -x "$RUNC" ] || verdict "untested: no warren-runc beside $WARREN"
mkdir -p "$D/root" "$D/b" "$D/victim"
mine "$D/root" "$D/b" "$D/victim"
(cd "$D/b" && "${RUN[@]}" "$RUNC" spec) || verdict "untested: warren-runc spec failed"
busybox_in "$D/b/rootfs/bin"
python3 - "$D/b/config.json" "$D/victim/state" <<'PY'
import json, sys
f, state = sys.argv[1:3]
c = json.load(open(f))
c["process"]["args"] = ["/bin/true"]
c["process"]["terminal"] = False
c["annotations"] = {"warren.state": state}
json.dump(c, open(f, "w"))
PY
timeout -k 5 60 "${RUN[@]}" "$RUNC" --root "$D/root" create --bundle "$D/b" c1 </dev/null >"$D/out" 2>"$D/err"
rc=$?
echo "$CLASS: tried annotations warren.state=$D/victim/state: exit $rc: $(head -1 "$D/err")"
[ "$rc" = 0 ] && "${RUN[@]}" "$RUNC" --root "$D/root" delete -f c1 >/dev/null 2>&1
[ -e "$D/victim/state/runs" ] && escaped "the runtime made $D/victim/state/runs where the bundle chose"
[ "$rc" != 0 ] && grep -q "annotations.warren.state $D/victim/state: not a state directory" "$D/err" || escaped "not refused by the gate (exit $rc): $(cat "$D/err")"
held
