#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# many.t - 200 runs in a row, and 8 at once, leave nothing behind: no scratch, mount,
# process or cgroup; every run has its record. As root and as an unprivileged user.
. "$(dirname "$0")/../lib.sh"

plan 8

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	fails=0
	for i in $(seq 200); do
		"${RUNNER[@]}" timeout 30 "$WARREN" run --state "$STATE" --work "$WORK" -- /bin/true || fails=$((fails + 1))
	done
	is "$fails" 0 "$M 200 runs in a row of /bin/true all exit 0"
	n=$(find "$STATE/runs" -maxdepth 2 -name result.json | wc -l)
	is "$n" 200 "$M ... each left its record (result.json)"
	x=$(state_clean); ok $? "$M ... and nothing else: no scratch, mount, process or cgroup" || diag "$x"

	# 8 at once
	pids=()
	for i in $(seq 8); do
		"${RUNNER[@]}" timeout 30 "$WARREN" run --state "$STATE" --work "$WORK" -- sh -c 'echo x > $TMPDIR/f; sleep 0.3; test "$(cat $TMPDIR/f)" = x' &
		pids+=($!)
	done
	fails=0
	for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
	x=$(state_clean); [ "$fails" = 0 ] && [ -z "$x" ]
	ok $? "$M 8 runs at once all pass and leave nothing behind" || diag "failed: $fails" "$x"
done
