#!/bin/bash
# cold-direct.t - issue 13: a plain command submitted to `warren serve` that starts cold (no
# warm cell) is the cell's job itself, as a warm cell's is (warm-direct.t): the job's process
# execs it, with no executor and no shell between (two execs less than a job's step). What it
# sees is what the same command sees on the job path (a job of one step that execs it through
# the job's shell): argv (quoting kept), env with TMPDIR=/tmp last, user, working directory,
# umask, capabilities, no_new_privs, seccomp, a read-only host; a missing or not executable
# command ends with the same state and exit code (127, 126) in the answer and the record; its
# time limit and warren kill stop it with their causes; its output is its log; its record and
# history row are complete. Root, and rootless where the host lets an unprivileged user make
# cells. A server with warm cells starts a command of another shape so too ("start": "cold").
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

plan 50

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	T=$TEST_SCRATCH/$mode-t
	mkdir_for_mode "$T"
	SOCK=$T/api.sock
	if [ "$mode" = user ]; then
		wrun -- true
		if [ "$RC" != 0 ]; then
			skip 24 "$M this host does not let $TEST_USER make cells: $ERR"
			continue
		fi
	fi
	wr_bg serve --listen "unix:$SOCK" --slots 4
	SRV=$BG_PID
	wait_for 30 api_curl 5 http://warren/metrics -o /dev/null
	ok $? "$M warren serve (no warm cells) answers" || diag "$(cat "$BG_ERR")"

	# ---- what the command sees: the same as on the job path
	direct_view_checks "$M" null

	# ---- a missing or not executable command: the same end as on the job path
	direct_bad_commands "$M" null "$T"

	# ---- its time limit and warren kill
	run_wait "$(direct_req '["sleep","30"]' | sed 's/}$/, "limits": {"time": "1s"}}/')"
	T1=$ID
	is "$(jbody '[d["start"], d["state"]]')" '[null, "limit"]' "$M a cold command with a time limit of 1s: stopped by it" || diag "$BODY"
	wait_for 10 result_has_steps "$T1"
	is "$(jget "$STATE/runs/$T1/result.json" 'd["cause"]["limit"]')" time "$M ... its record names the time limit"
	submit "$(direct_req '["sleep","30"]')"
	K=$ID
	wait_for 20 run_state_is "$K" running
	sleep 0.5
	api POST "/v1/runs/$K/kill"
	wait_for 20 result_has_steps "$K"
	is "$(outcome "$K")" '["interrupted", 143, "interrupted", 143, "kill"]' "$M warren kill: interrupted, 143, cause kill"

	# ---- the record: complete and seen by show and the history; the output is the log
	run_wait "$(direct_req '["sh","-c","echo rec; echo err >&2; exit 5"]')"
	R=$ID
	is "$(jbody '[d["start"], d["exit_code"]]')" '[null, 5]' "$M the answer has the exit code"
	wait_for 10 result_has_steps "$R"
	is "$(outcome "$R")" '["exited", 5, "failed", 5, null]' "$M ... result.json is complete"
	like "$(logs "$R")" "rec" "$M ... its stdout is its log"
	like "$(logs "$R")" "err" "$M ... and its stderr"
	wr show "$R"
	line_like "$OUT" "^status +exited \\(exit 5\\)$" "$M ... warren show sees it"
	is "$(row "$R" state):$(row "$R" exit_code)" "exited:5" "$M ... and the history"

	stop_server 60
	is "$RC:$(state_clean)" "0:" "$M the server stops cleanly and leaves nothing"
done

# ---- a server with warm cells: a command of another shape (another worktree) starts cold, and
# directly too
use_mode root
W2=$TEST_SCRATCH/other-work
mkdir -p "$W2"
wr_bg serve --listen "unix:$SOCK" --slots 4 --warm 1 --warm-work "$WORK"
SRV=$BG_PID
wait_for 30 ready_is 1
run_wait "$("$PY" -c 'import json,sys; print(json.dumps({"command": ["sh", "-c", "echo ppid=$PPID"], "worktree": sys.argv[1]}))' "$W2")"
is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["cold", "exited", 0]' "[root] --warm 1: a command on another worktree starts cold" || diag "$BODY"
like "$(logs "$ID")" "ppid=1\$" "[root] ... its command is the cell's job (no executor, no shell)"
stop_server 60
