#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci_cgroups_path.sh MODE - escape class oci_cgroups_path (issue 36, 3): an OCI bundle's
# linux.cgroupsPath is untrusted: with '..' it would place the cell outside the hierarchy's
# tree the path names; naming an existing group it would join another's (its limits written
# there, its processes killed when the run ends); below warren/ it would nest in another run.
# Each is refused with one line and nothing is made, written or killed. Rootless: any
# cgroupsPath is refused (no delegation). Modes: root, user.
CLASS=oci_cgroups_path
. "$(dirname "$0")/lib.sh"
face_setup root user
RUNC=$(dirname "$WARREN")/warren-runc
[ -x "$RUNC" ] || verdict "untested: no warren-runc beside $WARREN"
MEM=/sys/fs/cgroup/memory
[ -d $MEM ] || MEM=/sys/fs/cgroup
mkdir -p "$D/root" "$D/b" "$D/state"
mine "$D/root" "$D/b" "$D/state"
"${RUN[@]}" "$WARREN" run --state "$D/state" --work none -- true >/dev/null 2>&1 || verdict "untested: warren run failed"
(cd "$D/b" && "${RUN[@]}" "$RUNC" spec) || verdict "untested: warren-runc spec failed"
busybox_in "$D/b/rootfs/bin"
tag=esc$$
# a victim: a group of the host's with a process in it and a limit of its own
victim=$MEM/victim-$tag
if [ "$MODE" = root ]; then
	mkdir "$victim" || verdict "untested: cannot make $victim"
	echo 1073741824 >"$victim/memory.limit_in_bytes" 2>/dev/null || echo max >"$victim/memory.max" 2>/dev/null
	sleep 60 &
	vpid=$!
	FACE_PIDS+=("$vpid")
	echo "$vpid" >"$victim/cgroup.procs"
	# (whatever the verdict: the victim ends, its group goes)
	trap 'kill "$vpid" 2>/dev/null; wait "$vpid" 2>/dev/null; rmdir "$victim" 2>/dev/null; face_cleanup' EXIT
	before=$(cat "$victim/memory.limit_in_bytes" "$victim/memory.max" 2>/dev/null)
fi
try() { # CGROUPSPATH [--systemd-cgroup]
	python3 - "$D/b/config.json" "$1" "$D/state" <<'PY'
import json, sys
f, path, state = sys.argv[1:4]
c = json.load(open(f))
c["process"]["args"] = ["/bin/sh", "-c", "sleep 1"]
c["process"]["terminal"] = False
c["annotations"] = {"warren.state": state}
c["linux"]["cgroupsPath"] = path
c["linux"].setdefault("resources", {})["memory"] = {"limit": 4194304}
json.dump(c, open(f, "w"))
PY
	timeout -k 5 60 "${RUN[@]}" "$RUNC" ${2:-} --root "$D/root" run --bundle "$D/b" c1 </dev/null >"$D/out" 2>"$D/err"
	rc=$?
	echo "$CLASS: tried cgroupsPath '$1' ${2:-}: exit $rc: $(head -1 "$D/err")"
	"${RUN[@]}" "$RUNC" --root "$D/root" delete -f c1 >/dev/null 2>&1
	[ "$rc" != 0 ] && grep -q "linux.cgroupsPath" "$D/err" || escaped "cgroupsPath '$1' was not refused (exit $rc)"
}
try "/x/../../../$tag"
try "/victim-$tag/../../$tag"
try "a.slice:p:x/../../../$tag" --systemd-cgroup
try "/warren/$tag"
if [ "$MODE" = root ]; then
	try "/victim-$tag"
	kill -0 "$vpid" 2>/dev/null || escaped "the process of the group the bundle named was killed"
	[ "$(cat "$victim/memory.limit_in_bytes" "$victim/memory.max" 2>/dev/null)" = "$before" ] ||
		escaped "the bundle's memory limit was written into the host's group $victim"
	grep -qx "$vpid" "$victim/cgroup.procs" || escaped "the host's process left its group"
else
	try "/user.slice/$tag"
fi
left=$(find /sys/fs/cgroup -maxdepth 4 -name "*$tag*" ! -name "victim-$tag" 2>/dev/null)
[ -z "$left" ] || escaped "groups were made where the bundle said: $left"
held
