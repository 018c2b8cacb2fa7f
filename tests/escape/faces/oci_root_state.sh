#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci_root_state.sh MODE - escape class oci_root_state (issue 31, class 4): an OCI bundle's
# root.path named warren's state directory (or /var/log, /var/lib/kubelet, another user's
# home: any tree of the host's), where the container's uid 0 reads every run's records. A
# bundle's root stays below the bundle's directory or is an image elsewhere, never in a state
# directory (cell/gate.h). Modes: root, user (warren-runc rootless).
CLASS=oci_root_state
. "$(dirname "$0")/lib.sh"
face_setup root user
RUNC=$(dirname "$WARREN")/warren-runc
[ -x "$RUNC" ] || verdict "untested: no warren-runc beside $WARREN"
mkdir -p "$D/state" "$D/root" "$D/b" "$D/logs/app"
mine "$D/state" "$D/root" "$D/b" "$D/logs" "$D/logs/app"
"${RUN[@]}" "$WARREN" run --state "$D/state" --work none -- true >/dev/null 2>&1 || verdict "untested: cannot make the state directory"
(cd "$D/b" && "${RUN[@]}" "$RUNC" spec) || verdict "untested: warren-runc spec failed"
n=0
for root in "$D/state" "$D/state/runs" "$D/logs"; do
	n=$((n + 1))
	python3 - "$D/b/config.json" "$root" "$D/state" <<'PY'
import json, sys
f, root, state = sys.argv[1:4]
c = json.load(open(f))
c["root"]["path"] = root
c["process"]["args"] = ["/bin/true"]
c["process"]["terminal"] = False
c["annotations"] = {"warren.state": state}
json.dump(c, open(f, "w"))
PY
	timeout -k 5 60 "${RUN[@]}" "$RUNC" --root "$D/root" create --bundle "$D/b" "c$n" </dev/null >"$D/out" 2>"$D/err"
	rc=$?
	echo "$CLASS: tried root.path $root: exit $rc: $(head -1 "$D/err")"
	if [ "$rc" = 0 ]; then
		"${RUN[@]}" "$RUNC" --root "$D/root" delete -f "c$n" >/dev/null 2>&1
		escaped "a container was created with root.path $root"
	fi
	grep -q "root.path $root: " "$D/err" || escaped "root.path $root refused, but not by the gate: $(cat "$D/err")"
done
held
