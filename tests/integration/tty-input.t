#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tty-input.t - the caller's input to a job's terminal never holds up the supervisor: a job
# that does not read its terminal while more is typed (pasted) than the terminal takes is
# still stopped by its wall clock, as root and rootless; a job that reads it gets all of it.
# The same for what was typed before warren started (before the job's terminal existed):
# warren passes it on when the job's terminal is made, through the same relay.
# (The VM's terminal, a socket to the guest's console, goes through the same relay.)
. "$(dirname "$0")/../lib.sh"

command -v script >/dev/null || bail_out "no script(1) (bsdutils)"

plan 12

# 300 kB of lines: more than a pty's buffers take (about 64 kB)
PASTE=$TEST_SCRATCH/paste.txt
python3 -c "import sys; sys.stdout.write(('x' * 99 + '\n') * 3000)" >"$PASTE"
chmod 644 "$PASTE"
# 400 kB of long lines (a read of a terminal in canonical mode gives one line): more of them
# are read ahead, before warren makes its terminal raw, than the job's terminal takes (12 kB)
AHEAD=$TEST_SCRATCH/ahead.txt
python3 -c "import sys; sys.stdout.write(('y' * 3999 + '\n') * 100)" >"$AHEAD"
chmod 644 "$AHEAD"

# typed_into FILE CMD: script(1) types FILE into the terminal of CMD (a shell's), which
# ends or is given up after 45 s: its status in RC, the time it took in ms
typed_into() {
	local t0
	t0=$(date +%s%N)
	timeout --preserve-status -k 5 45 "${RUNNER[@]}" script -qec "$2" /dev/null <"$1" >/dev/null 2>&1
	RC=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
}

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	# script(1) types the file into warren's terminal; the job never reads its own
	cmd=$(printf '%q ' "$WARREN" run --state "$STATE" --work "$WORK" --time 2s -- sleep 60)
	typed_into "$PASTE" "$cmd"
	is "$RC" 124 "$M a job that does not read its terminal while 300 kB are typed: its wall clock stops it (124)"
	ok "$([ "$ms" -lt 20000 ]; echo $?)" "$M ... at its limit, not when the caller gives up (took ${ms} ms)"
	cmd=$(printf '%q ' "$WARREN" run --state "$STATE" --work "$WORK" --time 30s -- sh -c 'sleep 2; wc -l')
	OUT=$(timeout -k 5 45 "${RUNNER[@]}" script -qec "$cmd" /dev/null <"$PASTE" 2>&1 | tr -d '\r' | tail -n 1)
	is "$OUT" 3000 "$M a job that reads its terminal late gets every line typed meanwhile"

	# typed ahead: script(1) types the file while its shell sleeps, before warren starts
	cmd="sleep 1; exec $(printf '%q ' "$WARREN" run --state "$STATE" --work "$WORK" --time 2s -- sleep 20)"
	typed_into "$AHEAD" "$cmd"
	is "$RC" 124 "$M a job that does not read its terminal, 400 kB typed before warren started: its wall clock stops it (124)"
	ok "$([ "$ms" -lt 15000 ]; echo $?)" "$M ... at its limit, not when the job or the caller ends (took ${ms} ms)"
	cmd="sleep 1; exec $(printf '%q ' "$WARREN" run --state "$STATE" --work "$WORK" --time 30s -- sh -c 'sleep 3; wc -c')"
	OUT=$(timeout -k 5 45 "${RUNNER[@]}" script -qec "$cmd" /dev/null <"$AHEAD" 2>&1 | tr -d '\r' | tail -n 1)
	is "$OUT" 400000 "$M a job that reads its terminal late gets every byte typed before warren started and after"
done
