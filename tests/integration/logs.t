#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# logs.t - issue 34: a plain `warren run` keeps its output. What the job writes still reaches
# the caller's stdout and stderr as it comes, and also log/output.log of the run directory,
# which `warren logs RUN` (and `warren logs -`, the latest run) prints: stdout and stderr, a
# terminal's raw stream, bounded by the output limit with the line that marks the cut; the
# record and `warren show` name it. A run that writes nothing makes no log (no work). As root
# and as the unprivileged user.
. "$(dirname "$0")/../lib.sh"

# per mode 11: stdout and stderr 4, the latest run 2, the output limit's cut 3, no output 1,
# a terminal 1
plan $((11 * 2))

MARK='[warren: output limit 64 KiB reached; the rest of the output was not kept]'

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"

	# ---------------------------------------------------------------- stdout and stderr kept
	wrun -- sh -c 'echo to-stdout; echo to-stderr >&2; echo more-stdout'
	RD=$(last_rundir); ID=$(basename "$RD")
	live="$RC|$OUT|$ERR"
	wr logs "$ID"
	{ [ "$live" = "0|to-stdout"$'\n'"more-stdout|to-stderr" ] && [ "$RC" = 0 ] && grep -qx to-stdout <<<"$OUT" &&
		grep -qx to-stderr <<<"$OUT" && grep -qx more-stdout <<<"$OUT" && [ "$(wc -l <<<"$OUT")" = 3 ] && [[ $OUT != *'==>'* ]]; }
	ok $? "$M the caller still gets stdout on its stdout and stderr on its stderr; warren logs RUN prints both, without a step's header" ||
		diag "live: $live" "logs rc $RC" "out: $OUT" "err: $ERR"
	is "$(jget "$RD/result.json" '[d["log"], d["log_cut"], d["output_bytes"]]')" '["log/output.log", false, 32]' \
		"$M result.json names the log (log/output.log, not cut) beside output_bytes"
	[ "$(stat -c %u "$RD/log/output.log")" = "$( [ "$mode" = root ] && echo 0 || echo "$TEST_USER_UID")" ]
	ok $? "$M the log is the invoker's file in the run directory (the cell never sees it)"
	wr show "$ID"
	line_like "$OUT" "^output +32 B, kept in log/output.log \\('warren logs $ID'\\)\$" "$M warren show says where the output is kept"

	# ---------------------------------------------------------------- the latest run: -
	wrun -- sh -c 'echo latest-run; echo latest-err >&2'
	wr logs -
	[ "$RC" = 0 ] && [[ $OUT == *latest-run* ]] && [[ $OUT == *latest-err* ]]
	ok $? "$M warren logs - prints the latest run's output" || diag "rc $RC" "$OUT" "$ERR"
	wr logs
	[ "$RC" = 0 ] && [[ $OUT == *latest-run* ]] && [[ $OUT != *to-stdout* ]]
	ok $? "$M warren logs without RUN: the latest run too" || diag "rc $RC" "$OUT" "$ERR"

	# ---------------------------------------------------------------- bounded: the output limit's cut
	wrun --output 64K -- sh -c 'head -c 300000 /dev/zero | tr "\0" y; echo never-kept >&2'
	RD=$(last_rundir); ID=$(basename "$RD")
	L=$RD/log/output.log
	[ "$RC" != 0 ] && [ "$(jget "$RD/result.json" 'd["cause"]["limit"]')" = output ] &&
		[ "$(head -c 65536 "$L" | tr -d y | wc -c)" = 0 ] && [ "$(tail -c +65537 "$L")" = $'\n'"$MARK" ]
	ok $? "$M a run past its output limit (64K of 300K) is stopped; its log holds the first 64 KiB, then one line that marks the cut" ||
		diag "rc $RC" "$ERR" "$(tail -c 200 "$L" | od -c | tail -5)"
	wr logs "$ID"
	is "$(tail -n 1 <<<"$OUT")" "$MARK" "$M warren logs ends with the cut's line"
	is "$(jget "$RD/result.json" '[d["log"], d["log_cut"]]')" '["log/output.log", true]' "$M result.json: log_cut true"

	# ---------------------------------------------------------------- no output: no work
	wrun -- true
	RD=$(last_rundir); ID=$(basename "$RD")
	[ "$RC" = 0 ] && [ ! -e "$RD/log" ] && [ "$(jget "$RD/result.json" '"log" in d')" = false ]
	made=$?
	wr logs "$ID"
	[ "$made" = 0 ] && [ "$RC" = 125 ] && [ "$ERR" = "warren: $ID has no logs (it wrote no output)" ]
	ok $? "$M a run that writes nothing makes no log directory (its record names none); warren logs says it wrote no output, exit 125" ||
		diag "rc $RC: $ERR" "$(ls -la "$RD")"

	# ---------------------------------------------------------------- a terminal: its raw stream
	cmd=$(printf '%q ' "$WARREN" run --state "$STATE" --work "$WORK" -- sh -c 'echo on-the-tty; tty')
	bounded "${RUNNER[@]}" script -qec "$cmd" /dev/null
	RD=$(last_rundir)
	[[ $OUT == *on-the-tty* ]] && grep -q $'^on-the-tty\r$' "$RD/log/output.log" && grep -qE $'^/dev/pts/[0-9]+\r$' "$RD/log/output.log"
	ok $? "$M a run on a terminal keeps the terminal's raw stream (CR LF line ends)" ||
		diag "out: $OUT" "$(od -c "$RD/log/output.log" 2>&1 | head -5)"
done
