#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# isolation.t - two runs started together share nothing: neither sees the other's /tmp
# files (not even through the state directory on the host's file system) nor its
# processes. As root and as an unprivileged user.
. "$(dirname "$0")/../lib.sh"

plan 26

# The job: leave a secret in /tmp, start a uniquely named sleep, say it is ready (in the
# shared worktree), wait for the test's "go", then report what it can see.
JOB='
name=$1 state=$2 s=$3
echo "secret-of-$name" > /tmp/file-$name
sleep "$s" &
touch "ready-$name"
i=0
while [ ! -e go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
echo "TMP:"; ls -A /tmp
echo "PROC:"; for f in /proc/[0-9]*/cmdline; do tr "\0" " " < "$f" 2>/dev/null; echo; done
echo "PS:"; ps -e -o args
echo "VIA-STATE:"; cat "$state"/runs/*/tmp/file-* 2>/dev/null; ls -d "$state"/runs/*/tmp 2>/dev/null
echo "END"
kill $! 2>/dev/null
'

# section NAME TEXT: the lines of TEXT between "NAME:" and the next section.
section() {
	awk -v s="$1:" '$0 == s { on = 1; next } /^[A-Z-]+:$/ || $0 == "END" { on = 0 } on' <<<"$2"
}

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	sync=$TEST_SCRATCH/$mode-shared
	mkdir_for_mode "$sync" 1777
	sa=$(uniq_arg) sb=$(uniq_arg)

	wr_bg run --work "$sync" -- sh -c "$JOB" job a "$STATE" "$sa"
	pa=$BG_PID oa=$BG_OUT ea=$BG_ERR
	wr_bg run --work "$sync" -- sh -c "$JOB" job b "$STATE" "$sb"
	pb=$BG_PID ob=$BG_OUT eb=$BG_ERR

	wait_for 30 test -e "$sync/ready-a" -a -e "$sync/ready-b"
	job_alive "$sa" && job_alive "$sb"
	ok $? "$M both runs are alive at the same time (both sleeps seen from the host)" ||
		diag "a: $(cat "$ea")" "b: $(cat "$eb")"
	touch "$sync/go"
	wait_bg "$pa"; ra=$RC
	wait_bg "$pb"; rb=$RC
	is "$ra/$rb" 0/0 "$M both runs exit 0" || diag "a: $(cat "$ea")" "b: $(cat "$eb")"
	A=$(cat "$oa") B=$(cat "$ob")
	ran=1
	[[ $A == *$'\nEND'* ]] && [[ $B == *$'\nEND'* ]] && ran=0
	# absent TEXT ERE DESC: no line matches, and both jobs ran to the end (else it proves nothing).
	absent() {
		[ "$ran" = 0 ] || { ok 1 "$3"; diag "the jobs did not run to the end"; return 1; }
		no_line_like "$@"
	}

	line_like "$(section TMP "$A")" '^file-a$' "$M run a sees its own file in /tmp"
	absent "$(section TMP "$A")" '^file-b$' "$M run a does not see run b's file in /tmp"
	absent "$(section TMP "$B")" '^file-a$' "$M run b does not see run a's file in /tmp"
	line_like "$(section PROC "$A")" "sleep $sa" "$M run a sees its own processes in /proc"
	absent "$(section PROC "$A")" "sleep $sb" "$M run a does not see run b's processes in /proc"
	absent "$(section PROC "$B")" "sleep $sa" "$M run b does not see run a's processes in /proc"
	absent "$(section PS "$A")" "sleep $sb" "$M ps in run a does not show run b's processes"
	# Each may see its own secret; neither the other's.
	absent "$(section VIA-STATE "$A" | sed 's/secret-of-a//')"$'\n'"$(section VIA-STATE "$B" | sed 's/secret-of-b//')" \
		'secret-of-' "$M neither run can read the other's /tmp through the state directory"
	like "$(tail -n1 <<<"$A")$(tail -n1 <<<"$B")" '^ENDEND$' "$M both jobs ran to the end"

	x=$(state_clean) && [ "$ra/$rb" = 0/0 ]
	ok $? "$M after both runs nothing is left" || diag "$x" "exits: $ra/$rb"
	[ "$(rundir_count)" = 2 ]
	ok $? "$M each run had a run directory of its own" || diag "$(ls "$STATE/runs" 2>&1)"
done
