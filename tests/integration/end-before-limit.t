#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# end-before-limit.t - a job that ended before its limit ended as it did: a wall clock that
# runs out while its cell is torn down (here a process of 8 GiB it left behind, whose memory
# takes the kernel some 150-200 ms to free) is not the run's end. The job exits 100 ms before
# its limit: closer, a loaded machine's late wake-up of its `sleep` ends it past the limit
# for real (seen at 2.95 s of 3 s, the machine loaded); the teardown still runs past it. A warm run's early answer
# (sup_end_known) says the job's exit code on that ground. As root and rootless.
. "$(dirname "$0")/../lib.sh"

command -v python3 >/dev/null || bail_out "no python3"

plan 4

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	bounded "${RUNNER[@]}" "$WARREN" run --state "$STATE" --work "$WORK" --time 3s -- \
		sh -c 'python3 -c "b = b\"\x01\" * (8 << 30); import time; time.sleep(100)" & sleep 2.9; exit 0'
	rd=$(last_rundir)
	is "$RC" 0 "$M a job that exits 0 at 2.9 s of its 3 s, its cell torn down past them: exit 0" || diag "$ERR"
	is "$(jget "$rd/result.json" 'd["status"] + " " + str(d["exit_code"]) + " " + str(d.get("cause"))')" "exited 0 None" \
		"$M ... and its record says it exited 0, no limit's cause"
done
