#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ps-gc.t - `warren ps` lists live runs (ID PID AGE COMMAND WORKTREE); `warren gc` never
# touches a live run, and after warren itself was killed with SIGKILL the cell is gone
# and gc reclaims the run's scratch, mounts and cgroups; `gc --older-than` prunes records.
# As root and as an unprivileged user.
. "$(dirname "$0")/../lib.sh"

plan $((56 + 2 + 3))

ps_has() { wr ps; [[ $OUT == *"$1"* ]]; }

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"

	# --scratch none: the scratch on the host's disk, where gc could touch it (a scratch tmpfs
	# lives in the cell's own mount namespace)
	s=$(uniq_arg)
	wr_bg run --work "$WORK" --scratch none -- sleep "$s"
	wpid=$BG_PID
	wait_for 15 job_alive "$s"
	alive=$?
	wait_for 10 ps_has "sleep"
	rd=$(last_rundir); rd=${rd:-$STATE/runs/none}
	id=$(basename "$rd")
	line_like "$OUT" "^$id +[0-9]+ +.*sleep $s.* $WORK\$" "$M warren ps shows the live run: id, pid, age, command, worktree"
	line_like "$OUT" '^ID +PID +AGE +COMMAND +PORTS +WORKTREE' "$M warren ps has a header ID PID AGE COMMAND PORTS WORKTREE"
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
	wr show "$id"
	[ "$RC" = 0 ] && grep -qE '^status +error \(exit status unknown\)$' <<<"$OUT" && grep -q 'died before the run ended' <<<"$OUT" &&
		grep -qE '^started +[0-9]{4}-' <<<"$OUT"
	ok $? "$M warren show of the killed run says what happened, makes up no exit status, and when it started" || diag "$OUT"
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
	# 0s is a duration too (issue 34): every ended run's record, at once
	wrun -- true
	wr gc --older-than 0s
	is "$RC/$(rundir_count)" 0/0 "$M warren gc --older-than 0s exits 0 and prunes the record of the run just ended" || diag "$ERR"
done

# ---- the state directory, opened once and trusted (issue 10) ----
use_mode root
M="[state]"
V=$TEST_SCRATCH/victim
mkdir -p "$V"/{etc,home,root,tmp} && echo victim >"$V/etc/victim-file" && chmod 755 "$V"
vsum() { (cd "$V" && find . -printf '%p %m %U %s\n' | sort); }
vbefore=$(vsum)
wrun -- true
# in root's own state: a link named like a run, and a run directory another user owns
FAKE=run_01M8XE7C73GHC24W5MXEEZCFVY FAKE2=run_01M8XE7C73GHC24W5MXEEZCFVZ
ln -s "$V" "$STATE/runs/$FAKE"
mkdir "$STATE/runs/$FAKE2" && echo '{}' >"$STATE/runs/$FAKE2/spec.json" && chown -R "$TEST_USER_UID" "$STATE/runs/$FAKE2"
wr gc --older-than 1s
is "$RC" 0 "$M gc over a state with a planted link and another user's run directory exits 0"
like "$ERR" "skipped .*/runs/$FAKE: a symlink of uid 0" "$M ... and says it skipped the link" || diag "$ERR"
like "$ERR" "skipped .*/runs/$FAKE2: a directory of uid $TEST_USER_UID" "$M ... and the directory another user owns"
[ "$(vsum)" = "$vbefore" ] && [ -L "$STATE/runs/$FAKE" ] && [ -f "$STATE/runs/$FAKE2/spec.json" ]
ok $? "$M ... and touched neither (nor what the link points to)" || diag "$(ls -la "$V" "$STATE/runs")"
wr show "$FAKE"
[ "$RC" = 125 ] && [[ $ERR == *"no run matches"* ]]
ok $? "$M warren show does not follow the planted link" || diag "exit $RC: $ERR"
rm -rf "$STATE/runs/$FAKE" "$STATE/runs/$FAKE2"

# a supervisor killed after making its run directory but before spec.json was written (as
# bench/soak's kill -9 at random moments found): gc reclaims the scratch, removes the half-
# written spec, and writes a record all the same, so that no run directory is left without one
EARLY=run_01M8XE7C73GHC24W5MXEEZCFW0
mkdir -m 700 "$STATE/runs/$EARLY" && touch "$STATE/runs/$EARLY/lock" && mkdir -m 1777 "$STATE/runs/$EARLY/tmp" &&
	printf '{"id": "%s", "comm' "$EARLY" >"$STATE/runs/$EARLY/spec.json.tmp.4242"
wr gc
is "$RC" 0 "$M gc of a run killed before its spec was written exits 0" || diag "$ERR"
[ ! -e "$STATE/runs/$EARLY/tmp" ] && [ ! -e "$STATE/runs/$EARLY/spec.json.tmp.4242" ]
ok $? "$M ... reclaims its scratch and the half-written spec.json.tmp.<pid>" || diag "$(ls -la "$STATE/runs/$EARLY")"
is "$(jget "$STATE/runs/$EARLY/result.json" 'd["status"] + " " + d["id"]')" "error $EARLY" "$M ... and writes its record (status error)"
wr show "$EARLY"
[ "$RC" = 0 ] && [[ $OUT == *"before its spec was written"* ]] && [[ $OUT != *"exit 0"* ]]
ok $? "$M warren show tells how it ended, with no exit status made up" || diag "exit $RC: $OUT $ERR"
rm -rf "$STATE/runs/$EARLY"

# root's gc on a state directory a user owns: refused, whatever it holds
US=$TEST_SCRATCH/ustate
mkdir -p "$US/runs" && ln -s "$V" "$US/runs/$FAKE" && chown -h -R "$TEST_USER_UID" "$US" && chmod 700 "$US" "$US/runs"
bounded "$WARREN" gc --state "$US"
is "$RC" 125 "$M root's gc on a user's state directory exits 125"
one_warren_line "$M ... with one line"
like "$ERR" "belongs to uid $TEST_USER_UID, not to you" "$M ... naming the owner"
[ "$(vsum)" = "$vbefore" ]
ok $? "$M ... and the victim a planted link points to is untouched" || diag "$(ls -laR "$V")"

# a state directory under a directory anyone may change: refused before anything is made;
# under a sticky one (like /tmp) it is fine
OPEN=$TEST_SCRATCH/open
mkdir -p "$OPEN" && chmod 0777 "$OPEN"
bounded "$WARREN" run --state "$OPEN/state" --work "$WORK" -- true
[ "$RC" = 125 ] && [[ $ERR == *"under $OPEN, which others may change (mode 0777)"* ]] && [ ! -e "$OPEN/state" ]
ok $? "$M a state directory under a world-writable directory is refused, nothing made" || diag "exit $RC: $ERR"
chmod 1777 "$OPEN"
bounded "$WARREN" run --state "$OPEN/state" --work "$WORK" -- true
is "$RC" 0 "$M ... under a sticky one it is fine" || diag "$ERR"
# nor under one a group or an ACL lets another user write
GRP=$TEST_SCRATCH/grp ACL=$TEST_SCRATCH/acl
mkdir -p "$GRP" "$ACL" && chgrp "$TEST_USER_GID" "$GRP" && chmod 0775 "$GRP" && chmod 0755 "$ACL" &&
	setfacl -m "u:$TEST_USER_UID:rwx" "$ACL"
bounded "$WARREN" run --state "$GRP/state" --work "$WORK" -- true
[ "$RC" = 125 ] && [[ $ERR == *"under $GRP, which others may change (mode 0775)"* ]]
ok $? "$M a state directory under a directory another group may write is refused" || diag "exit $RC: $ERR"
bounded "$WARREN" run --state "$ACL/state" --work "$WORK" -- true
[ "$RC" = 125 ] && [[ $ERR == *"under $ACL, which others may change (mode 0775 and an ACL)"* ]]
ok $? "$M ... and under one an ACL lets another user write" || diag "exit $RC: $ERR"
id=$(basename "$(last_rundir)")
mv "$STATE/runs/$id/result.json" "$STATE/runs/$id/result.keep" && mkfifo "$STATE/runs/$id/result.json"
bounded "$WARREN" show "$id" --json
[ "$RC" != timeout ]
ok $? "$M a FIFO planted as result.json does not hang warren show" || diag "exit $RC: $ERR"
rm -f "$STATE/runs/$id/result.json" && mv "$STATE/runs/$id/result.keep" "$STATE/runs/$id/result.json"

# the cgroup carries the state's identity: a dead run planted elsewhere under the id of a
# live run does not make gc there kill it
s=$(uniq_arg)
wr_bg run --work "$WORK" --memory 256m -- sleep "$s"
wpid=$BG_PID
wait_for 15 job_alive "$s"
id=$(basename "$(last_rundir)")
cg=$(cgroups_named "$id" | head -n 1)
like "$(basename "$cg")" "^$id\.[0-9a-f]{8}\$" "$M the run's cgroup is named <id>.<state tag>"
OTHER=$TEST_SCRATCH/other-state
mkdir -p "$OTHER/runs/$id" && chmod 700 "$OTHER" && cp "$STATE/runs/$id/spec.json" "$OTHER/runs/$id/"
bounded "$WARREN" gc --state "$OTHER"
job_alive "$s"
ok $? "$M gc of a dead run with the same id in another state directory leaves the live run alone" || diag "$ERR"
kill -TERM "$wpid" 2>/dev/null; wait_bg "$wpid" 20

# the registry of the caller's state directories (cell/gate.h): a state directory made is
# listed, and gc drops the ones that are gone (warren-test's own: HOME is its scratch home)
use_mode user
REG=$U_HOME/.local/state/warren.known
mkdir_for_mode "$TEST_SCRATCH/reg"
wr_env -- run --state "$TEST_SCRATCH/reg/s1" --work none -- true
wr_env -- run --state "$TEST_SCRATCH/reg/s2" --work none -- true
grep -qx "$TEST_SCRATCH/reg/s1" "$REG" && grep -qx "$TEST_SCRATCH/reg/s2" "$REG"
ok $? "[user] each state directory made is in the caller's registry" || diag "$(cat "$REG" 2>&1)"
rm -rf "$TEST_SCRATCH/reg/s2"
wr gc
grep -qx "$TEST_SCRATCH/reg/s1" "$REG" && ! grep -qx "$TEST_SCRATCH/reg/s2" "$REG"
ok $? "[user] gc drops a state directory that is gone from the registry, keeps the others" || diag "$OUT $ERR" "$(cat "$REG" 2>&1)"
is "$(stat -c %a "$REG")" 600 "[user] the registry is the caller's alone (0600)"
