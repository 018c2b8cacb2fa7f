#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
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

plan 60

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	T=$TEST_SCRATCH/$mode-t
	mkdir_for_mode "$T"
	SOCK=$T/api.sock
	if [ "$mode" = user ]; then
		wrun -- true
		if [ "$RC" != 0 ]; then
			skip 26 "$M this host does not let $TEST_USER make cells: $ERR"
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
	direct_noshebang_check "$M" null "$T"

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
# its output limit, and a command too large to hand to the cell (its env: the API takes 1 MiB,
# the cell's control messages 256 KiB)
req2() { "$PY" -c 'import json,sys; r={"command": json.loads(sys.argv[1]), "worktree": sys.argv[2]}; r.update(json.loads(sys.argv[3])); print(json.dumps(r))' "$1" "$W2" "$2"; }
run_wait "$(req2 '["sh","-c","head -c 3000000 /dev/zero; sleep 5"]' '{"limits": {"output": "1M"}}')"
wait_for 10 result_has_steps "$ID"
is "$(jbody '[d["start"], d["state"]]'):$(jget "$STATE/runs/$ID/result.json" 'd["cause"]["limit"]')" '["cold", "limit"]:output' \
	"[root] a cold command over its output limit: stopped, the cause names the output limit" || diag "$BODY"
# (the body through a file: one argument of 300 KB is more than exec(2) takes)
"$PY" -c 'import json,sys; print(json.dumps({"command": ["true"], "worktree": sys.argv[1], "env": {"BIG": "x" * 300000}}))' "$W2" >"$TEST_SCRATCH/big.json"
BODY=$(api_curl 60 -X POST -H 'Content-Type: application/json' --data-binary "@$TEST_SCRATCH/big.json" 'http://warren/v1/runs?wait=1')
ID=$(jbody 'd["id"]')
wait_for 10 result_has_steps "$ID"
is "$(jbody '[d["state"], d["exit_code"]]'):$(jget "$STATE/runs/$ID/result.json" 'd["steps"][0]["cause"]')" \
	'["exited", 125]:warren could not start it: Argument list too long' \
	"[root] a command too large for the cell: 125, and its step says why (it starts on the job path)" || diag "$BODY"
stop_server 60

# ---- --command-json (warren serve's option of job run) decides only how the job's one step
# starts, never what runs: a job file whose step is not that command runs its own step
printf 'steps:\n  - name: main\n    run: echo from-the-job-file ppid=$PPID\n' >"$WORK/other.yml"
bounded "$WARREN" job run "$WORK/other.yml" --state "$STATE" --work "$WORK" --command-json '["sh","-c","echo injected"]'
is "$RC:$(grep -c injected <<<"$OUT")" "0:0" "[root] --command-json with a job file of another step: the job file's step runs" || diag "$OUT$ERR"
like "$OUT" "from-the-job-file" "[root] ... its own output"
"$PY" - "$WORK/same.json" <<'EOF'
import json, sys
json.dump({"steps": [{"name": "main", "run": "exec 'sh' '-c' 'echo same ppid=$PPID'"}]}, open(sys.argv[1], "w"))
EOF
bounded "$WARREN" job run "$WORK/same.json" --state "$STATE" --work "$WORK" --command-json '["sh","-c","echo same ppid=$PPID"]'
like "$OUT" "same ppid=1\b" "[root] ... with the job file the server makes of that command, the command is the cell's job (ppid 1)" || diag "$OUT$ERR"
bounded "$WARREN" job run "$WORK/same.json" --state "$STATE" --work "$WORK" --command-json '{"not": "an array"}'
is "$RC" 125 "[root] --command-json that is not an array of strings: refused (125)"
