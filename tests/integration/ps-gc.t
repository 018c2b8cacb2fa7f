#!/bin/bash
# ps-gc.t - `warren ps` lists live runs (ID PID AGE COMMAND WORKTREE); `warren gc` never
# touches a live run, and after warren itself was killed with SIGKILL the cell is gone
# and gc reclaims the run's scratch, mounts and cgroups; `gc --older-than` prunes records.
# As root and as an unprivileged user.
. "$(dirname "$0")/../lib.sh"

plan 34

ps_has() { wr ps; [[ $OUT == *"$1"* ]]; }

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"

	s=$(uniq_arg)
	wr_bg run --work "$WORK" -- sleep "$s"
	wpid=$BG_PID
	wait_for 15 job_alive "$s"
	alive=$?
	wait_for 10 ps_has "sleep"
	rd=$(last_rundir); rd=${rd:-$STATE/runs/none}
	id=$(basename "$rd")
	line_like "$OUT" "^$id +[0-9]+ +.*sleep $s.* $WORK\$" "$M warren ps shows the live run: id, pid, age, command, worktree"
	line_like "$OUT" '^ID +PID +AGE +COMMAND +WORKTREE' "$M warren ps has a header ID PID AGE COMMAND WORKTREE"
	wr ps --json
	"$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(sys.argv[2] not in json.dumps(d))' "$OUT" "$id" 2>/dev/null
	ok $? "$M warren ps --json is JSON naming the run" || diag "$OUT" "$ERR"

	# gc while the run is alive: nothing of it is touched.
	wr gc
	is "$RC" 0 "$M warren gc with a live run exits 0"
	[ -d "$rd/tmp" ] && job_alive "$s"
	ok $? "$M ... and leaves the live run alone (its tmp and its job are still there)"
	wr gc "$id"
	[ -d "$rd/tmp" ] && job_alive "$s"
	ok $? "$M warren gc <id of a live run> leaves it alone too" || diag "exit $RC: $ERR"

	# kill -9 of the supervisor: the cell dies with it; gc reclaims the rest.
	kill -KILL "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	[ "$alive" = 0 ] && wait_for 10 job_gone "$s"
	ok $? "$M after kill -9 of warren no process of the cell is alive (alive before: $alive)" ||
		diag "$(_pslist $(job_pids "$s"))"
	wr ps
	[ "$RC" = 0 ] && [[ $OUT != *"$id"* ]]
	ok $? "$M warren ps no longer lists the run whose supervisor is dead" || diag "$OUT"
	wr gc
	is "$RC" 0 "$M warren gc exits 0"
	nothing_left "$rd" "$M warren gc reclaims the dead run's scratch, mounts and cgroups" norecord
	x=$(state_clean) && [ "$alive" = 0 ]
	ok $? "$M nothing of any run is left" || diag "$x" "(the run was alive: $alive)"

	# the git check a killed supervisor did not do: gc does it (issue 10)
	gw=$TEST_SCRATCH/gitwork-$mode
	mkdir_for_mode "$gw"
	if [ "$mode" = user ]; then as_user git init -q "$gw"; else git init -q "$gw"; fi
	s=$(uniq_arg)
	wr_bg run --work "$gw" -- sh -c "echo ../evil > .git/commondir; exec sleep $s"
	wpid=$BG_PID
	wait_for 15 job_alive "$s" && wait_for 5 test -e "$gw/.git/commondir"
	kill -KILL "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	wait_for 10 job_gone "$s"
	gid=$(basename "$(last_rundir)")
	wr gc
	[ ! -e "$gw/.git/commondir" ] && [ -e "$gw/.git/commondir.warren-$gid" ]
	ok $? "$M warren gc moves aside a commondir the run of a killed supervisor planted" || diag "exit $RC: $ERR" "$(ls -la "$gw/.git")"
	like "$ERR" "left \.git/commondir .*moved it to \.git/commondir\.warren-$gid" "$M ... and says so"
	is "$(jget "$STATE/runs/$gid/result.json" 'd["git_check"]["moved_aside"][0]["path"]')" ".git/commondir" "$M ... and the record it writes has git_check"
	wr gc
	is "$RC" 0 "$M a second gc exits 0"

	# --older-than prunes records.
	wrun -- true
	before=$(rundir_count)
	sleep 1.5
	wr gc --older-than 1s
	is "$RC" 0 "$M warren gc --older-than 1s exits 0"
	is "$before/$(rundir_count)" 3/0 "$M ... and prunes every finished run's record (3 before, 0 after)" || diag "$(ls -la "$STATE/runs" 2>&1)"
done
