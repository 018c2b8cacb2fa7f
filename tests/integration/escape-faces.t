#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# escape-faces.t - the escape classes of the faces (issue 31, tests/escape/faces/): each a
# script that attacks the boundary through a face (a job file, the server's API, an OCI bundle,
# the command line, the VM driver) in one mode - root, user (rootless), image, vm - and says
# last "CLASS: held", "CLASS: ESCAPED: WHAT" or "CLASS: untested: WHY". One TAP test per class
# per mode: held passes, ESCAPED fails, untested is a skip with its reason (a class that does
# not apply to a mode says so). FACES="a b" and FACE_MODES="root user" pick a subset.
. "$(dirname "$0")/../lib.sh"

FACES_DIR=$REPO/tests/escape/faces
FACES=${FACES:-$(cd "$FACES_DIR" && ls -- *.sh | grep -v '^lib\.sh$' | sed 's/\.sh$//')}
MODES=${FACE_MODES:-root user image vm}
plan $(($(wc -w <<<"$FACES") * $(wc -w <<<"$MODES")))

# a private copy of the binaries (and the VM's guest init beside them), safe from rebuilds
BIN=$TEST_SCRATCH/bin
mkdir -p "$BIN" && chmod 755 "$TEST_SCRATCH" "$BIN"
for f in warren warren-guest-init; do
	[ -e "$(dirname "$WARREN")/$f" ] && cp "$(dirname "$WARREN")/$f" "$BIN/$f"
done
cp "$WARREN" "$BIN/warren" && ln -sf warren "$BIN/warren-runc" && chmod 755 "$BIN"/* || bail_out "cannot copy $WARREN"

n=0
for face in $FACES; do
	for mode in $MODES; do
		# short: a face's server socket below it must fit a socket address (108 bytes), also
		# from a checkout of a long path
		n=$((n + 1))
		d=$TEST_SCRATCH/$n
		mkdir -p "$d" && chmod 755 "$d"
		out=$(SCRATCH=$d WARREN=$BIN/warren WARREN_VM_ACCEL=${WARREN_VM_ACCEL:-tcg} timeout -k 5 300 "$FACES_DIR/$face.sh" "$mode" 2>&1)
		last=$(tail -1 <<<"$out")
		case $last in
		"$face: held") ok 0 "$face [$mode]: held" ;;
		"$face: untested: "*) skip 1 "$face [$mode]: ${last#"$face: untested: "}" ;;
		*) ok 1 "$face [$mode]: ${last:-no verdict}"; diag "$out" ;;
		esac
		x=$(ls -A "$d" 2>/dev/null); [ -z "$x" ] || diag "$face [$mode] left: $x"
	done
done
