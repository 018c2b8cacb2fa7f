#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# warm.t - issue 13: `warren serve --warm N`, cells made before they are asked for. A real
# server on a unix socket in the test's own state directory: a warm cell is used once (run A
# leaves files in /tmp, /var/tmp, /dev/shm and $HOME and a setsid'd process; run B, on the
# next warm cell, sees none of them, and A's process is gone when A ends); the record and the
# history say start warm or cold (and why cold); the pool refills; limits name their cause and
# exit codes pass through in a warm run; a warm cell whose image changed (re-imported) or was
# removed is discarded and the run starts cold, saying so; kill -9 of the server leaves no
# process or mount, and `warren gc` (or the next server) reclaims the rest; SIGTERM leaves
# nothing. Root, and rootless where the host lets an unprivileged user make cells.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

plan 122

BB=$(image_busybox) || bail_out "cannot build the busybox image"

# start_warm_server ARGS...: warren serve on $SOCK with 4 slots and ARGS, answering within 20s.
start_warm_server() { start_server 20 --listen "unix:$SOCK" --slots 4 "$@"; }
# one_warm_cell DESC ARGS...: a server of one warm cell (ARGS: its --warm-work and more), and
# the test DESC that it made it.
one_warm_cell() {
	local desc=$1
	shift
	start_warm_server --warm 1 "$@"
	wait_for 30 ready_is 1
	ok $? "$desc" || diag "$(cat "$SRV_ERR")"
}
# warm_dirs: run directories of warm cells no run took
warm_dirs() { find "$STATE/runs" -mindepth 2 -maxdepth 2 -name warm 2>/dev/null; }

# ---- options refused with one line
use_mode root
wr serve --warm 2
is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "125:1" "serve --warm without --warm-work: refused (125, one line)"
like "$ERR" "^warren: --warm 2: give the warm cells' worktree as --warm-work DIR" "... saying what to give"
wr serve --warm 1 --warm-work "$TEST_SCRATCH/none"
like "$RC:$ERR" "^125:warren: --warm-work .*/none: name an existing directory" "serve --warm-work of no directory: refused, naming it"

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	T=$TEST_SCRATCH/$mode-t
	mkdir_for_mode "$T"
	mkdir_for_mode "$T/other"
	SOCK=$T/api.sock
	if [ "$mode" = user ]; then
		wrun -- true
		if [ "$RC" != 0 ]; then
			skip 45 "$M this host does not let $TEST_USER make cells: $ERR"
			continue
		fi
	fi

	start_warm_server --warm 2 --warm-work "$WORK"
	ok $? "$M warren serve --warm 2 answers" || diag "$(cat "$SRV_ERR")"
	wait_for 30 ready_is 2
	ok $? "$M two warm cells are made before any run is asked for" || diag "$(cat "$SRV_ERR")"

	# ---- run A leaves files and a process; run B, on the next warm cell, sees none of them
	A_SCRIPT='echo a >/tmp/left-by-a; echo a >/var/tmp/left-by-a; echo a >/dev/shm/left-by-a; echo a >$HOME/left-by-a; setsid sleep 4713 </dev/null >/dev/null 2>&1 & echo a-ran; exit 3'
	run_wait "{\"command\":[\"sh\",\"-c\",$(jstr "$A_SCRIPT")],\"worktree\":\"$WORK\",\"labels\":{\"t\":\"warm\"}}"
	is "$CODE" 201 "$M POST /v1/runs?wait=1: 201 when the run ended" || diag "$BODY"
	A=$ID
	is "$(jbody 'd["start"]')" warm "$M run A took a warm cell (start: warm in the answer)"
	is "$(jbody '[d["state"], d["exit_code"]]')" '["exited", 3]' "$M ... its exit code passes through (3)"
	wait_for 10 job_gone 4713
	ok $? "$M A's setsid'd process is gone once A ended" || diag "$(ps -ef | grep 4713)"
	is "$(row "$A" start)" warm "$M A's history row says start warm"
	is "$(jget "$STATE/runs/$A/result.json" 'd["start"]')" warm "$M A's result.json says start warm"
	# a warm cell's root and job were made before its run came: its timings start at the take
	t=$(jget "$STATE/runs/$A/result.json" '[d["timings"][k] for k in ("cell_ready_us", "job_started_us", "job_ended_us", "cell_gone_us", "recorded_us")]')
	"$PY" -c 'import json, sys; v = json.loads(sys.argv[1]); sys.exit(not (v[:2] == [None, None] and all(type(x) is int for x in v[2:]) and 0 < v[2] <= v[3] <= v[4] < 60000000))' "$t" 2>/dev/null
	ok $? "$M A's timings: no cell-ready nor job-start time (made before), then job ended <= cell gone <= recorded ($t)"
	wr show "$A"
	line_like "$OUT" "^start +warm$" "$M warren show A says start warm"
	is "$(API_AS=root logs "$A")" a-ran "$M A's output is in its log"

	B_SCRIPT='ls -A /tmp /var/tmp /dev/shm $HOME; ps -eo args; echo b-ran'
	run_wait "{\"command\":[\"sh\",\"-c\",$(jstr "$B_SCRIPT")],\"worktree\":\"$WORK\"}"
	B=$ID
	is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["warm", "exited", 0]' "$M run B took the next warm cell"
	isnt "$B" "$A" "$M ... another cell, another run id"
	blog=$(API_AS=root logs "$B")
	like "$blog" "b-ran" "$M B ran" || diag "$blog"
	unlike "$blog" "left-by-a|4713" "$M B sees nothing A left: no file in /tmp, /var/tmp, /dev/shm or \$HOME, no process" || diag "$blog"
	wait_for 30 ready_is 2
	ok $? "$M the pool refills: two warm cells again after the takes"

	# ---- a job too large to go with the message that gives it its warm cell: its job file is
	# written and the cell reads it (a job's text goes with the message, no file written)
	big=$("$PY" -c 'import json,sys; print(json.dumps({"job": "# " + "x" * 70000 + "\nsteps:\n  - name: main\n    run: echo big-ran\n", "worktree": sys.argv[1]}))' "$WORK")
	run_wait "$big"
	is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["warm", "exited", 0]' "$M a job of 70 KB takes a warm cell and runs" || diag "$BODY"
	is "$(API_AS=root logs "$ID")" big-ran "$M ... its step's output is in its log"

	# ---- warren run --via: a plain run sent to the server
	wait_for 30 ready_is 2
	bounded "${RUNNER[@]}" env -C "$WORK" "$WARREN" run --via "unix:$SOCK" -- sh -c 'echo via-out; exit 7'
	is "$RC" 7 "$M warren run --via: the exit code passes through (7)"
	is "$OUT" via-out "$M ... its output is printed"
	unlike "$ERR" "started cold" "$M ... it took a warm cell (nothing said)"
	bounded "${RUNNER[@]}" "$WARREN" run --via "unix:$SOCK" --work "$T/other" -- true
	like "$ERR" "started cold: no warm cell of this shape" "$M warren run --via of another shape: it says it started cold, and why"
	# a --via among the command's own arguments is the command's: the run is a local one, never
	# sent (to the state directory's default socket, where no server listens)
	bounded "${RUNNER[@]}" env -C "$WORK" "$WARREN" run --state "$STATE" echo --via "unix:$SOCK"
	is "$RC:$OUT" "0:--via unix:$SOCK" "$M warren run CMD --via X: the --via is the command's argument, the run is local"

	# ---- limits and causes in a warm run
	run_wait "{\"command\":[\"sleep\",\"30\"],\"worktree\":\"$WORK\",\"limits\":{\"time\":\"1s\"}}"
	is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["warm", "limit", 124]' "$M a warm run with a time limit: stopped by it, exit 124"
	is "$(row "$ID" cause | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["limit"])')" time "$M ... its cause names the limit (time)"
	is "$(jget "$STATE/runs/$ID/result.json" 'd["claimed"]')" '["time"]' "$M ... its record says it took its time limit at the claim"

	# ---- the run's own settings taken at the claim (issue 32): env, labels, memory and pids
	# limits; the cell stays warm, and its record says what the claim set
	wait_for 30 ready_is 2
	run_wait "{\"command\":[\"sh\",\"-c\",$(jstr 'echo "v=$WARM_ENV"')],\"worktree\":\"$WORK\",\"env\":{\"WARM_ENV\":\"x42\"},\"labels\":{\"k\":\"v\"}}"
	is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["warm", "exited", 0]' "$M a run with env and labels of its own takes a warm cell" || diag "$BODY"
	is "$(API_AS=root logs "$ID")" v=x42 "$M ... its job sees its variable"
	is "$(jget "$STATE/runs/$ID/result.json" '[d["start"], d["claimed"], d["labels"]]')" '["warm", ["env", "labels"], {"k": "v"}]' \
		"$M ... its record: start warm, claimed env and labels"
	HOG='b = [b"x" * (1 << 20) for i in range(1024)]; print("allocated 1 GiB")'
	wait_for 30 ready_is 2
	run_wait "{\"command\":[\"python3\",\"-c\",$(jstr "$HOG")],\"worktree\":\"$WORK\",\"limits\":{\"memory\":\"64M\"}}"
	if [ "$mode" = root ]; then
		is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["warm", "limit", 137]' "$M a warm run with a memory limit of its own (64M) on a 1 GiB hog: killed by it (137)" || diag "$BODY"
		c=$(row "$ID" cause)
		is "$(printf '%s' "$c" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["limit"])')" memory "$M ... its cause names the limit (memory)"
		like "$c" "memory limit 64 MiB reached" "$M ... and its value"
		is "$(jget "$STATE/runs/$ID/result.json" '[d["start"], d["claimed"], d["limits"]["memory"]]')" "[\"warm\", [\"memory\"], $((64 << 20))]" \
			"$M ... its record: start warm, claimed memory, limits.memory 64 MiB"
		p=$(jget "$STATE/runs/$ID/result.json" 'd["peak_memory_bytes"]')
		[ -n "$p" ] && [ "$p" -le $((72 << 20)) ]
		ok $? "$M ... the hog did not get past the limit (peak $p bytes)"
		FORKS="sh -c 'i=0; while [ \$i -lt 40 ]; do sleep 5 & i=\$((i+1)); done' 2>/dev/null; exit 0"
		wait_for 30 ready_is 2
		run_wait "{\"command\":[\"sh\",\"-c\",$(jstr "$FORKS")],\"worktree\":\"$WORK\",\"limits\":{\"pids\":\"16\"}}"
		is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["warm", "limit", 123]' "$M a warm run with a pids limit of its own (16) whose forks hit it: limit (123)" || diag "$BODY"
		is "$(row "$ID" cause | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["limit"])')" pids "$M ... its cause names the limit (pids)"
		is "$(jget "$STATE/runs/$ID/result.json" '[d["start"], d["claimed"], d["limits"]["pids"]]')" '["warm", ["pids"], 16]' \
			"$M ... its record: start warm, claimed pids, limits.pids 16"
		# the memory limit lifted (none), where the cell was made with the default one
		wait_for 30 ready_is 2
		run_wait "{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"limits\":{\"memory\":\"none\",\"cpu-time\":\"1s\"}}"
		is "$(jget "$STATE/runs/$ID/result.json" '[d["start"], d["status"], d["claimed"], d["limits"].get("memory")]')" '["warm", "exited", ["cpu-time", "memory"], null]' \
			"$M a warm run without a memory limit (none): warm, claimed memory, no limit in its record" || diag "$BODY"
		wait_for 30 ready_is 2
		run_wait "{\"command\":[\"sh\",\"-c\",\"while :; do :; done\"],\"worktree\":\"$WORK\",\"limits\":{\"cpu-time\":\"1s\",\"time\":\"20s\"}}"
		is "$(jbody '[d["start"], d["state"]]'):$(row "$ID" cause | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["limit"])')" '["warm", "limit"]:cpu-time' \
			"$M a warm run with a CPU-time limit of its own (1s) on a busy loop: stopped by it" || diag "$BODY"
	else
		# rootless cells have no cgroup: the run starts cold, which refuses the limit as any
		# rootless run does
		is "$(jbody '[d["start"], d["state"]]')" '["cold", "error"]' "$M a run with a memory limit of its own does not take a rootless warm cell: cold, refused (error)" || diag "$BODY"
		like "$(row "$ID" start_why)" "rootless warm cell has none" "$M ... its row says why"
		like "$(row "$ID" error)" "memory" "$M ... and its error names the limit"
		skip 7 "$M pids, memory none and CPU-time limits need a cgroup: root's cells only"
	fi

	# ---- a run of another shape starts cold and says why
	run_wait "{\"command\":[\"true\"],\"worktree\":\"$T/other\"}"
	is "$(jbody '[d["start"], d["state"]]')" '["cold", "exited"]' "$M a run with another worktree starts cold"
	like "$(row "$ID" start_why)" "no warm cell of this shape: its worktree" "$M ... its row says why"
	like "$(jget "$STATE/runs/$ID/result.json" 'd["start_why"]')" "no warm cell of this shape" "$M ... and so does its result.json"
	wr show "$ID"
	line_like "$OUT" "^start +cold \\(no warm cell of this shape" "$M ... and warren show"

	stop_server 60
	is "$RC" 0 "$M SIGTERM: the server stops cleanly" || diag "$(cat "$SRV_ERR")"
	x=$(state_clean; warm_dirs)
	is "$x" "" "$M ... and leaves no warm cell, process, mount, cgroup or scratch"
done

# ---- an image re-imported or removed: its warm cells are discarded, the run starts cold
use_mode root
T=$TEST_SCRATCH/root-t
SOCK=$T/api.sock
wr image import wbb "$BB"
is "$RC" 0 "[root] image import wbb" || diag "$ERR"
IMGJOB=$(printf '{"steps":[{"name":"main","run":"cat /etc/stamp 2>/dev/null || echo no-stamp"}],"image":"wbb"}')
job_req() { "$PY" -c 'import json,sys; print(json.dumps({"job": sys.argv[1], "worktree": sys.argv[2]}))' "$IMGJOB" "$WORK"; }
one_warm_cell "[root] a warm cell of the image wbb is made" --warm-work "$WORK" --warm-image wbb
run_wait "$(job_req)"
is "$(jbody '[d["start"], d["state"]]')" '["warm", "exited"]' "[root] a job of image wbb takes it"
wait_for 30 ready_is 1
wr image rm wbb
is "$RC" 0 "[root] image rm wbb is not refused while a warm cell of it waits" || diag "$ERR"
mkdir -p "$T/bb2" && cp -a "$BB/." "$T/bb2/" && echo second >"$T/bb2/etc/stamp"
wr image import wbb "$T/bb2"
is "$RC" 0 "[root] image import wbb again (another image)" || diag "$ERR"
run_wait "$(job_req)"
is "$(jbody '[d["start"], d["state"]]')" '["cold", "exited"]' "[root] the warm cell of the old image is not used: the run starts cold"
like "$(row "$ID" start_why)" "image changed" "[root] ... its row says the image changed"
is "$(API_AS=root logs "$ID")" second "[root] ... and it ran on the new image"
wait_for 30 ready_is 1
run_wait "$(job_req)"
is "$(jbody '[d["start"], d["state"]]')" '["warm", "exited"]' "[root] the pool is made again of the new image: the next run is warm"
wait_for 30 ready_is 1
wr image rm wbb
run_wait "$(job_req)"
is "$(jbody 'd["start"]')" cold "[root] the image removed: the run does not take the warm cell"
like "$(row "$ID" error)" "wbb" "[root] ... and fails naming the image"

stop_server 60

# ---- a limit the kernel enforced in a warm run that ends at once: its answer names it. The
# cell's limit hits are read from files opened before its run came (cgroup_open_hits): read
# again from their start at its end, they count what the run did
printf 'pids = 16\n' >"$STATE/defaults"
one_warm_cell "[root] a warm cell with a pids limit of 16 (the state's defaults)" --warm-work "$WORK"
# (the forks in a shell of their own: dash ends at its first refused fork, with status 2)
FORKS="sh -c 'i=0; while [ \$i -lt 40 ]; do sleep 5 & i=\$((i+1)); done' 2>/dev/null; exit 0"
run_wait "{\"command\":[\"sh\",\"-c\",$(jstr "$FORKS")],\"worktree\":\"$WORK\"}"
is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["warm", "limit", 123]' "[root] a warm run whose forks hit its pids limit and that exits 0 at once: its answer says limit (exit 123)" || diag "$BODY"
is "$(row "$ID" cause | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["limit"])')" pids "[root] ... its cause names the limit (pids)"
stop_server 60
rm -f "$STATE/defaults"

# ---- kill -9 of the server: no process or mount of a warm cell; gc and the next server reclaim
one_warm_cell "[root] a server with a warm cell" --warm-work "$WORK"
# the warm cell's supervisor killed with the server, first (alone, the supervisor may still see
# the server's socket close before its PR_SET_PDEATHSIG and give its cell up cleanly), the
# server stopped before (else it may reap the supervisor first, and reclaim its cell itself)
kill -STOP "$SRV"
kill -KILL $(procs_matching "$STATE/serve/warm.job.json") "$SRV"
wait "$SRV" 2>/dev/null
left() { no_procs_matching "$STATE/serve/warm.job.json" && [ -z "$(mounts_under "$STATE")" ]; }
wait_for 10 left
ok $? "[root] kill -9 of the server: no process or mount of a warm cell is left" ||
	diag "$(procs_matching "$STATE/serve/warm.job.json")" "$(mounts_under "$STATE")"
isnt "$(warm_dirs)" "" "[root] ... its warm cell's directory is left for gc (the test sees one)"
wr gc
x=$(warm_dirs; for d in "$STATE"/runs/*; do [ -e "$d/result.json" ] || echo "$d"; done)
is "$x" "" "[root] warren gc removes the warm cell's directory whole (it was never a run)"
is "$(state_clean)" "" "[root] ... and its cgroup: nothing of any cell is left"

start_warm_server --warm 1 --warm-work "$WORK"
wait_for 30 ready_is 1
kill -STOP "$SRV"
kill -KILL $(procs_matching "$STATE/serve/warm.job.json") "$SRV"
wait "$SRV" 2>/dev/null
wait_for 10 left
isnt "$(warm_dirs)" "" "[root] (again a warm cell's directory left)"
start_warm_server
ok $? "[root] a server started after a kill -9 ..." || diag "$(cat "$SRV_ERR")"
is "$(warm_dirs)" "" "[root] ... reclaims the warm cells the last one left"
stop_server 60

# ---- SIGTERM while a warm run lives: the run is stopped and recorded, and the server is gone
# at once (its draining loop still hears the taken cell's supervisor, which waits for its word
# before the record: it did not, and each live warm run held the stop 30 s)
start_warm_server --warm 1 --warm-work "$WORK"
wait_for 30 ready_is 1
submit "{\"command\":[\"sleep\",\"300\"],\"worktree\":\"$WORK\"}"
live=$ID
wait_for 20 run_state_is "$live" running
t0=$(date +%s%N)
stop_server 60
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" = 0 ] && [ "$ms" -lt 10000 ]
ok $? "[root] SIGTERM with a warm run live: the server stops in under 10 s ($ms ms, exit $rc)" ||
	diag "$(cat "$SRV_ERR")"
is "$(jget "$STATE/runs/$live/result.json" 'd["start"]')" warm "[root] ... the run it stopped has its record (start warm)"

# ---- kill -9 of a warm cell's supervisor alone: the server reclaims that cell itself
start_warm_server --warm 1 --warm-work "$WORK"
wait_for 30 ready_is 1
dead=$(basename "$(dirname "$(warm_dirs | head -n 1)")")
[ "$dead" != . ] || diag "no warm cell's directory to kill"
# the supervisor alone (its cell's init and job are clones of it: the gc must kill them)
kill -KILL $(pgrep -P "$SRV" -f "$STATE/serve/warm.job.json")
gone() { [ ! -e "$STATE/runs/$dead" ] && ! find /sys/fs/cgroup -maxdepth 4 -type d -name "$dead.*" 2>/dev/null | grep -q .; }
wait_for 20 gone
ok $? "[root] a warm cell whose supervisor was killed: the server reclaims its directory and cgroup" ||
	diag "$dead" "$(ls -la "$STATE/runs/$dead" 2>&1)" "$(cat "$SRV_ERR")"
wait_for 30 ready_is 1
ok $? "[root] ... and makes a new one" || diag "$(cat "$SRV_ERR")"
stop_server 60

# ---- a warm cell whose worktree lies below /var/tmp (the take's scratch covers it there, and
# its mount is put back on top): .git/hooks and .git/config are read-only as in any run (the
# mount put back was a copy taken before .git's guards were mounted on it: the job wrote both)
VT=$(mktemp -d -p /var/tmp warren-test-warmwt.XXXXXXXX)
_cleanup_files+=("$VT")
chmod 755 "$VT"
mkdir -p "$VT/.git/hooks"
printf '[core]\n' >"$VT/.git/config"
one_warm_cell "[root] a warm cell whose worktree is below /var/tmp" --warm-work "$VT"
GIT_TRY='echo x > .git/hooks/pre-commit && echo hook-written; echo x >> .git/config && echo config-written; echo tried'
run_wait "{\"command\":[\"sh\",\"-c\",$(jstr "$GIT_TRY")],\"worktree\":\"$VT\"}"
vlog=$(logs "$ID")
is "$(jbody 'd["start"]'):$(printf '%s\n' "$vlog" | grep -c -e -written -e tried)" warm:1 \
	"[root] ... its run cannot write .git/hooks or .git/config there (both read-only)" || diag "$BODY" "$vlog"
stop_server 60
is "$(state_clean)" "" "[root] nothing is left at the end"
