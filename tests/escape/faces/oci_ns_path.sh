#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci_ns_path.sh MODE - escape class oci_ns_path (issue 36, 1 and 2): an OCI bundle names the
# namespaces its container joins (linux.namespaces[].path), and a pod's are allowed; the
# host's are not, by whatever name: the caller's own /proc/self/ns/net, a bind mount of it the
# bundle's author made beside the bundle (another file, the same namespace), the ipc and pid
# ones of the caller, and a bundle that leaves the network out (the host's network for a
# runtime that does not make one). Each must be refused with one line, the job never run in
# the host's namespace; warren.conf is not read (WARREN_CONFIG=none: no operator allowed the
# host's). Modes: root, user (rootless: refused as well).
CLASS=oci_ns_path
. "$(dirname "$0")/lib.sh"
face_setup root user
RUNC=$(dirname "$WARREN")/warren-runc
[ -x "$RUNC" ] || verdict "untested: no warren-runc beside $WARREN"
mkdir -p "$D/root" "$D/b" "$D/state"
mine "$D/root" "$D/b" "$D/state"
export WARREN_CONFIG=none
"${RUN[@]}" env WARREN_CONFIG=none "$WARREN" run --state "$D/state" --work none -- true >/dev/null 2>&1 || verdict "untested: warren run failed"
(cd "$D/b" && "${RUN[@]}" "$RUNC" spec) || verdict "untested: warren-runc spec failed"
busybox_in "$D/b/rootfs/bin"
HOST_NET=$(readlink /proc/self/ns/net)
# the host's network namespace under a name of the bundle's own
touch "$D/hostnet"
mount --bind /proc/self/ns/net "$D/hostnet" || verdict "untested: cannot bind-mount /proc/self/ns/net"
try() { # TYPE PATH ("" leaves the entry out)
	python3 - "$D/b/config.json" "$1" "$2" "$D/state" <<'PY'
import json, sys
f, typ, path, state = sys.argv[1:5]
c = json.load(open(f))
c["process"]["args"] = ["/bin/ls", "-l", "/proc/self/ns/net"]
c["process"]["terminal"] = False
c["annotations"] = {"warren.state": state}
ns = [n for n in c["linux"]["namespaces"] if n["type"] != typ]
c["linux"]["namespaces"] = ns + ([{"type": typ, "path": path}] if path else [])
json.dump(c, open(f, "w"))
PY
	timeout -k 5 60 "${RUN[@]}" env WARREN_CONFIG=none "$RUNC" --root "$D/root" run --bundle "$D/b" c1 </dev/null >"$D/out" 2>"$D/err"
	rc=$?
	echo "$CLASS: tried $1 namespace '${2:-(left out)}': exit $rc: $(head -1 "$D/err")"
	"${RUN[@]}" "$RUNC" --root "$D/root" delete -f c1 >/dev/null 2>&1
	grep -qF "$HOST_NET" "$D/out" && escaped "the job ran in the host's network namespace ($HOST_NET) with the $1 namespace '${2:-(left out)}'"
	[ "$rc" != 0 ] && grep -q "linux.namespaces" "$D/err" && [ "$(wc -l <"$D/err")" = 1 ] ||
		escaped "the $1 namespace '${2:-(left out)}' was not refused in one line (exit $rc)"
}
try network /proc/self/ns/net
try network "$D/hostnet"
try network "/proc/$$/ns/net"
try network ""
try ipc /proc/self/ns/ipc
try pid /proc/self/ns/pid
try uts /proc/self/ns/uts
held
