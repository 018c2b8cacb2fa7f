#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# gc-orphans.t - `warren gc --orphans`: the run cgroups a state directory that is gone left
# (no `warren gc --state` can name them any more). Each run's cgroups record its state
# directory; gc --orphans removes the empty ones whose state directory is gone, and leaves
# alone a cgroup with a process in it (even of a state directory that is gone), the cgroups
# of a state directory that is still there (live run or not), a cgroup that is not a run's by
# name, and one that records no state directory, and one made less than 10 s ago (its run
# may be starting: its cell joins it just after it is made). Root only (rootless runs have no cgroup).
. "$(dirname "$0")/../lib.sh"

plan 22

use_mode root
T=$TEST_SCRATCH/orphans
mkdir -p "$T"

# the run's cgroup directories (every hierarchy): <hierarchy>/warren/<id>.<tag>
cg_of() { cgroups_named "$1" | grep -E "/warren/$1\.[0-9a-f]{8}\$"; }
# every cgroup of the run holds no process
cg_empty() { local d; for d in $(cg_of "$1"); do [ -z "$(cat "$d/cgroup.procs" 2>/dev/null)" ] || return 1; done; }
cg_count() { cg_of "$1" | grep -c .; }
# cg_made RUN SECONDS: the run's cgroups made SECONDS ago, as their time says (gc --orphans
# reads the cgroup dir's modification time, which root may set like any file's)
cg_made() { local d; for d in $(cg_of "$1"); do touch -m -d "@$(($(date +%s) - $2))" "$d" || return 1; done; }
owner_of() { "$PY" -c 'import os,sys; print(os.getxattr(sys.argv[1], "trusted.warren.state").decode())' "$1" 2>&1; }

# run_live STATE: a run of STATE (sleep); its id in RID, its sleep in SLEEP, warren's pid in WPID
run_live() {
	SLEEP=$(uniq_arg)
	start_bg "$WARREN" run --state "$1" --work "$WORK" -- sleep "$SLEEP"
	WPID=$BG_PID
	wait_for 15 job_alive "$SLEEP"
	RID=$(basename "$(last_rundir "$1")")
}
# run_killed STATE: a run of STATE whose supervisor was killed -9: its cell dies with it, its
# cgroups stay behind, empty
run_killed() {
	run_live "$1"
	kill -KILL "$WPID"
	wait "$WPID" 2>/dev/null
	wait_for 10 job_gone "$SLEEP" && wait_for 10 cg_empty "$RID"
}

# ---- the runs: of a state directory that will be gone, of one that stays, live ones
SA=$T/gone SD=$T/stays SB=$T/moved SC=$T/live
run_killed "$SA"; RA=$RID
ok $? "a run whose supervisor was killed -9: its cgroups stay behind, empty"
n_a=$(cg_count "$RA")
[ "$n_a" -ge 1 ]
ok $? "... $n_a of them (one per hierarchy)" || diag "$(cgroups_named "$RA")"
owners=$(for d in $(cg_of "$RA"); do owner_of "$d"; done | sort -u)
is "$owners" "$SA" "each of a run's cgroups records its state directory (trusted.warren.state)"
run_killed "$SD"; RD=$RID
run_live "$SB"; RB=$RID SB_SLEEP=$SLEEP SB_PID=$WPID
run_live "$SC"; RC_ID=$RID SC_SLEEP=$SLEEP SC_PID=$WPID
# not a run's by name, and a run's name recording no state directory: both empty
parent=$(dirname "$(cg_of "$RA" | head -n 1)")
NOTRUN=$parent/not-a-run-$$ UNMARKED=$parent/run_01M8XE7C73GHC24W5MXEEZCFW1.0badc0de
mkdir "$NOTRUN" "$UNMARKED" && "$PY" -c 'import os,sys; os.setxattr(sys.argv[1], "trusted.warren.state", sys.argv[2].encode())' "$NOTRUN" "$T/nowhere"
ok $? "planted under $parent: an empty cgroup not named as a run's (recording a state directory that is not there) and an unmarked one named as a run's"

n_b=$(cg_count "$RB")
# a session's exec group left below a killed run's group (exec-N): removed with it
for d in $(cg_of "$RA"); do mkdir "$d/exec-1"; done
rm -rf "$SA"
mv "$SB" "$SB.away"
# not too new to be swept (made a minute ago)
cg_made "$RA" 60 && cg_made "$RB" 60
bounded "$WARREN" gc --orphans
is "$RC" 0 "warren gc --orphans exits 0" || diag "$ERR"
is "$(cg_count "$RA")" 0 "it removes the empty run cgroups ($n_a) of a state directory that is gone, with the empty exec groups below them"
like "$OUT" "^gc: removed [0-9]+ run cgroups? of state directories that are gone, left [0-9]+ with a process in it alone" "... and says how many"
is "$(cg_count "$RB"):$(job_alive "$SB_SLEEP" && echo alive)" "$n_b:alive" "a run cgroup with a process in it is left alone, all $n_b of them, and its run lives, though its state directory is gone (moved away)"
like "$ERR" "the run cgroup [^ ]*/warren/$RB\.[0-9a-f]{8}: its state directory $SB is gone, but a process is in it; left alone" "... and gc names it on stderr"
[ "$(cg_count "$RD")" -ge 1 ] && cg_empty "$RD"
ok $? "an empty run cgroup of a state directory that is still there stays (its own warren gc reclaims it)"
[ "$(cg_count "$RC_ID")" -ge 1 ] && job_alive "$SC_SLEEP"
ok $? "another state directory's live run keeps its cgroups and lives"
[ -d "$NOTRUN" ] && [ -d "$UNMARKED" ]
ok $? "a cgroup not named as a run's, and one recording no state directory, are not touched"
like "$OUT" "run cgroups? names? no state directory" "... gc counts the unmarked ones"

# ---- an orphan made a moment ago (its run may be starting): left, until it is older
SE=$T/fresh
run_killed "$SE"; RE=$RID
n_e=$(cg_count "$RE")
rm -rf "$SE"
cg_made "$RE" 2
bounded "$WARREN" gc --orphans
is "$RC:$(cg_count "$RE")" "0:$n_e" "an empty run cgroup of a state directory that is gone, made 2 s ago, is left: all $n_e of them" || diag "$ERR"
like "$OUT" ", too new: left [1-9][0-9]* " "... and gc counts them as too new"
cg_made "$RE" 11
bounded "$WARREN" gc --orphans
is "$RC:$(cg_count "$RE")" "0:0" "made 11 s ago, the same cgroups are removed" || diag "$ERR"
like "$OUT" "^gc: removed [1-9][0-9]* run cgroups? " "... and counted as removed"

# ---- the state directory that stays: its own gc reclaims the cgroups
bounded "$WARREN" gc --state "$SD"
is "$RC:$(cg_count "$RD")" "0:0" "warren gc --state of that directory reclaims its dead run's cgroups"

# ---- what --orphans refuses
bounded "$WARREN" gc --orphans --state "$SD"
is "$RC" 125 "gc --orphans with --state (or RUN, --older-than, --keep-*): exit 125"
one_warren_line "... one line"
bounded "${AS_USER[@]}" "$WARREN" gc --orphans
like "$RC:$ERR" "^125:warren: gc --orphans: no cgroup v2 subtree is delegated to uid [0-9]+ here.*run it as root" "a user's gc --orphans where nothing is delegated to it: exit 125, it is root's to do"

# ---- the end: the live runs end as usual, nothing of them is left
mv "$SB.away" "$SB"
kill -TERM "$SB_PID" "$SC_PID"
wait_bg "$SB_PID" 20
wait_bg "$SC_PID" 20
rmdir "$NOTRUN" "$UNMARKED"
[ "$(cg_count "$RB")$(cg_count "$RC_ID")" = 00 ] && job_gone "$SB_SLEEP" && job_gone "$SC_SLEEP"
ok $? "the live runs end: no process or cgroup of them is left"
