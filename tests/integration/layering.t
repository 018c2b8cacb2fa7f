#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# layering.t - scripts/check-layers (make layering): passes on this tree, and fails, naming
# the file, the line and the header, on copies of it with an arrow back up planted: a layer
# including a header above it, and a leaf header including one of the project.
. "$(dirname "$0")/../lib.sh"
plan 10

CHECK=$REPO/scripts/check-layers
check "the tree's includes point down only" "$CHECK"

copy() { rm -rf "$TEST_SCRATCH/src"; cp -r "$REPO/src" "$TEST_SCRATCH/src"; }
run_check() { OUT=$("$CHECK" "$TEST_SCRATCH/src" 2>&1); RC=$?; }

copy
printf '#include "cell/spec.h"\n' >>"$TEST_SCRATCH/src/policy/caps.c"
line=$(wc -l <"$TEST_SCRATCH/src/policy/caps.c")
run_check
isnt "$RC" 0 "policy/ including cell/spec.h fails the check"
like "$OUT" "src/policy/caps.c:$line: includes cell/spec.h: policy/ may include only layers below it" \
	"the message names the file, the line and the header"

copy
sed -i 's|#include "util/error.h"|#include "supervise/supervise.h"|' "$TEST_SCRATCH/src/cgroup/cgroup.h"
run_check
like "$OUT" "src/cgroup/cgroup.h:[0-9]+: includes supervise/supervise.h" "an arrow up from a header is found"

copy
printf '#include "util/error.h"\n' >>"$TEST_SCRATCH/src/cell/contract.h"
run_check
isnt "$RC" 0 "a leaf header including a project header fails the check"
like "$OUT" "src/cell/contract.h:[0-9]+: includes util/error.h: a leaf header includes no header" "and says why"

copy
mkdir "$TEST_SCRATCH/src/newlayer" && printf '/* x */\n' >"$TEST_SCRATCH/src/newlayer/x.c"
run_check
like "$OUT" "newlayer/x.c is in no layer" "a directory outside the order is named, not passed over"

copy
printf '#include "cell/contract.h"\n' >>"$TEST_SCRATCH/src/util/fs.c"
run_check
is "$RC" 0 "the contract may be included from the lowest layer"

# the headers of plain types are no leaves any more: the lower layer has its own struct
copy
printf '#include "cell/cellmount.h"\n' >>"$TEST_SCRATCH/src/policy/access.c"
run_check
isnt "$RC" 0 "policy/ including cell/cellmount.h fails the check"
like "$OUT" "src/policy/access.c:[0-9]+: includes cell/cellmount.h: policy/ may include only layers below it" \
	"and names it"
