#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# jobfile_state_below.sh MODE - escape class jobfile_state_below (issue 31, the gate's review): a
# warren state directory made earlier inside a project (runs/, records, the history) is held by
# the job file's own bind of its directory (binds: [".:/mnt/p"]) while the run keeps its state
# elsewhere. The gate knows the caller's state directories from its registry: refused. Modes:
# root, user. See lib.sh.
CLASS=jobfile_state_below
. "$(dirname "$0")/lib.sh"
face_setup root user
mkdir -p "$D/proj" "$D/state" "$D/home"
mine "$D/proj" "$D/state" "$D/home"
[ "$MODE" = user ] && RUN+=(HOME="$D/home")
w run --state "$D/proj/st" --work none -- true
[ "$RC" = 0 ] || verdict "untested: cannot make the state directory in the project: $ERR"
busybox_in "$D/proj/bb"
cat >"$D/proj/ci.yaml" <<'YAML'
binds: [ ".:/mnt/p" ]
ro-binds: [ "bb:/opt/bb" ]
work: none
steps:
  - run: |
      /opt/bb/ls /mnt/p/st/runs
      /opt/bb/sh -c ': > /mnt/p/st/runs/planted'
YAML
mine "$D/proj/ci.yaml"
w job run "$D/proj/ci.yaml" --state "$D/state"
echo "$CLASS: tried a job file binding its directory, which holds a state directory: exit $RC: ${ERR%%$'\n'*}"
[ -e "$D/proj/st/runs/planted" ] && escaped "the job planted a file in the state directory's runs/"
[[ $OUT == *run_* ]] && escaped "the job listed the state directory's runs"
[ "$RC" = 125 ] && [[ $ERR == *"warren's state directory $D/proj/st is inside the bind's source"* ]] || escaped "not refused by the gate (exit $RC): $ERR"
held
