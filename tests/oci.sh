# SPDX-License-Identifier: Apache-2.0
# oci.sh - sourced by the OCI runtime face's tests (tests/integration/oci*.t) after lib.sh:
# the runtime as warren-runc, and bundles made the way its callers make them.
#
#   oci_setup                  -> BB (the busybox image), T (a directory of the test's own in
#                                 its scratch, 0755), RUNC (a warren-runc link to $WARREN in T)
#   bundle DIR ARGS_JSON [PY]  -> a bundle at DIR (the mode's caller's) from `warren-runc spec`,
#                                 its root the busybox image, process.args ARGS_JSON, terminal
#                                 off, annotations warren.state=$STATE and test=<script>; then
#                                 the python statement PY on the config c. The state directory
#                                 the annotation names is made first (a bundle may only choose
#                                 among its caller's: cell/gate.h)

oci_setup() {
	BB=$(image_busybox) || bail_out "cannot build the busybox image"
	T=$(mktemp -d -p "$TEST_SCRATCH")
	chmod 755 "$T"
	RUNC=$T/warren-runc
	ln -s "$WARREN" "$RUNC"
}

bundle() {
	local d=$1 args=$2 extra=${3:-pass}
	mkdir_for_mode "$d"
	[ -e "$STATE/runs" ] || "${RUNNER[@]}" "$WARREN" run --state "$STATE" --work none -- true >/dev/null || return 1
	ln -s "$BB" "$d/rootfs"
	(cd "$d" && "${RUNNER[@]}" "$RUNC" spec) || return 1
	"$PY" - "$d/config.json" "$args" "$STATE" "$TEST_NAME.t" <<PYEOF
import json, sys
f, args, state, test = sys.argv[1:5]
c = json.load(open(f))
c["process"]["args"] = json.loads(args)
c["process"]["terminal"] = False
c["annotations"] = {"warren.state": state, "test": test}
$extra
json.dump(c, open(f, "w"))
PYEOF
}
