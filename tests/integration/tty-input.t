#!/bin/bash
# tty-input.t - the caller's input to a job's terminal never holds up the supervisor: a job
# that does not read its terminal while more is typed (pasted) than the terminal takes is
# still stopped by its wall clock, as root and rootless; a job that reads it gets all of it.
# (The VM's terminal, a socket to the guest's console, goes through the same relay.)
. "$(dirname "$0")/../lib.sh"

command -v script >/dev/null || bail_out "no script(1) (bsdutils)"

plan 6

# 300 kB of lines: more than a pty's buffers take (about 64 kB)
PASTE=$TEST_SCRATCH/paste.txt
python3 -c "import sys; sys.stdout.write(('x' * 99 + '\n') * 3000)" >"$PASTE"
chmod 644 "$PASTE"

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	# script(1) types the file into warren's terminal; the job never reads its own
	cmd=$(printf '%q ' "$WARREN" run --state "$STATE" --work "$WORK" --time 2s -- sleep 60)
	t0=$(date +%s%N)
	timeout --preserve-status -k 5 45 "${RUNNER[@]}" script -qec "$cmd" /dev/null <"$PASTE" >/dev/null 2>&1
	RC=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	is "$RC" 124 "$M a job that does not read its terminal while 300 kB are typed: its wall clock stops it (124)"
	ok "$([ "$ms" -lt 20000 ]; echo $?)" "$M ... at its limit, not when the caller gives up (took ${ms} ms)"
	cmd=$(printf '%q ' "$WARREN" run --state "$STATE" --work "$WORK" --time 30s -- sh -c 'sleep 2; wc -l')
	OUT=$(timeout -k 5 45 "${RUNNER[@]}" script -qec "$cmd" /dev/null <"$PASTE" 2>&1 | tr -d '\r' | tail -n 1)
	is "$OUT" 3000 "$M a job that reads its terminal late gets every line typed meanwhile"
done
