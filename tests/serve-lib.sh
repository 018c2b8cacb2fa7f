# SPDX-License-Identifier: Apache-2.0
# serve-lib.sh - sourced after lib.sh by the tests of `warren serve` and its HTTP API (serve.t,
# warm.t, warm-direct.t): a server started in the background, requests to it over its unix
# socket with curl, the JSON answers read with python.
#
# Set before use:
#   SOCK          the server's unix socket (every request goes there)
#   API_TIMEOUT   seconds one api request may take (default 60)
#   API_AS        who sends the requests: "mode" (default: the current mode's user, as RUNNER)
#                 or "root" (also for one call: `API_AS=root logs ID`)
#
# Requests:   api_curl SECS ARGS... | api METHOD PATH [BODY] -> CODE BODY | jbody EXPR | jstr STRING
# Runs:       submit JSON -> ID | run_wait JSON -> ID | row ID FIELD | run_ended ID
#             run_state_is ID STATE | logs ID [SECS]
# Metrics:    metric NAME | ready_is N
# The server: start_server SECS ARGS... -> SRV SRV_ERR | stop_server SECS -> RC

command -v curl >/dev/null || bail_out "curl is needed (scripts/install-deps)"

API_TIMEOUT=60
API_AS=mode

# api_curl SECS ARGS...: curl -s ARGS over the unix socket $SOCK, stopped after SECS seconds,
# as API_AS; its output on stdout.
api_curl() {
	local secs=$1 as=("${RUNNER[@]}")
	shift
	[ "$API_AS" = root ] && as=()
	"${as[@]}" curl -s --max-time "$secs" --unix-socket "$SOCK" "$@"
}

# api METHOD PATH [BODY]: one request (BODY, if any, sent as JSON), at most $API_TIMEOUT
# seconds; the HTTP status in CODE (000: no answer), the answer's body in BODY.
api() {
	local m=$1 p=$2 d=${3:-} out
	local args=(-w '\n%{http_code}' -X "$m" "http://warren$p")
	[ -n "$d" ] && args+=(-H 'Content-Type: application/json' --data-binary "$d")
	out=$(api_curl "$API_TIMEOUT" "${args[@]}")
	CODE=${out##*$'\n'}
	BODY=${out%$'\n'*}
	while [[ $BODY == *$'\n' ]]; do BODY=${BODY%$'\n'}; done
}

# jbody EXPR: EXPR (python, over the JSON of BODY as d); strings and numbers raw, dicts and
# lists as JSON; empty if BODY is no JSON or EXPR fails.
jbody() { "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); v=eval(sys.argv[2]); print(json.dumps(v) if isinstance(v,(dict,list)) else v)' "$BODY" "$1" 2>/dev/null; }

# jstr STRING: STRING as a JSON string (quoted, escaped).
jstr() { "$PY" -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }

# submit JSON: POST /v1/runs (the answer comes when the run is queued); its id in ID.
submit() { api POST /v1/runs "$1"; ID=$(jbody 'd["id"]'); }

# run_wait JSON: POST /v1/runs?wait=1 (the answer comes when the run ended); its id in ID.
run_wait() { api POST '/v1/runs?wait=1' "$1"; ID=$(jbody 'd["id"]'); }

# row ID FIELD: FIELD of the run's history row (GET /v1/runs/ID).
row() { api GET "/v1/runs/$1"; jbody "d[\"run\"][\"$2\"]"; }

# run_ended ID: the run has a row and it is neither queued nor running.
run_ended() { local s; s=$(row "$1" state); [ -n "$s" ] && [ "$s" != queued ] && [ "$s" != running ]; }

# run_state_is ID STATE: the run's row says STATE.
run_state_is() { [ "$(row "$1" state)" = "$2" ]; }

# logs ID [SECS]: the run's log (GET /v1/runs/ID/logs), at most SECS seconds (default 10).
logs() { api_curl "${2:-10}" "http://warren/v1/runs/$1/logs"; }

# metric NAME: the value of NAME (with its labels, as written) in GET /metrics.
metric() { api_curl 10 http://warren/metrics | awk -v k="$1" '$1 == k { print $2 }'; }

# ready_is N: the server has N warm cells ready.
ready_is() { [ "$(metric 'warren_warm_cells{state="ready"}')" = "$1" ]; }

# start_server SECS ARGS...: `warren serve ARGS...` in the background as the current mode's
# user (its pid in SRV, its stderr's file in SRV_ERR); then waits at most SECS seconds for it
# to answer /healthz on $SOCK (status 0: it does).
start_server() {
	local secs=$1; shift
	wr_bg serve "$@"
	SRV=$BG_PID
	SRV_ERR=$BG_ERR
	wait_for "$secs" api_curl 2 -f http://warren/healthz -o /dev/null
}

# stop_server SECS: SIGTERM to the server, then waits at most SECS seconds for it to end;
# its exit status in RC ("timeout" if it had to be killed).
stop_server() {
	kill -TERM "$SRV"
	wait_bg "$SRV" "$1"
}

# ---- a plain command started as the cell's job itself (warm-direct.t, cold-direct.t) -------

# direct_req ARGV_JSON [job]: a request of the command ARGV_JSON on $WORK; with "job": the same
# as a job of one step that execs it through the job's shell (the job path: its executor, its
# shell)
direct_req() {
	"$PY" - "$1" "$WORK" "${2:-}" <<'EOF'
import json, shlex, sys
argv, work, job = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
if job:
    steps = [{"name": "main", "run": "exec " + " ".join(shlex.quote(a) for a in argv)}]
    print(json.dumps({"job": json.dumps({"steps": steps}), "worktree": work}))
else:
    print(json.dumps({"command": argv, "worktree": work}))
EOF
}

# result_has_steps ID: the run's result.json has its steps.
result_has_steps() { [ -n "$(jget "$STATE/runs/$1/result.json" 'd["steps"][0]["status"]' 2>/dev/null)" ]; }

# outcome ID: [state, exit code, the step's status and exit code, the cause's limit] from
# result.json
outcome() {
	jget "$STATE/runs/$1/result.json" \
		'[d["status"], d["exit_code"], d["steps"][0]["status"], d["steps"][0]["exit_code"], (d.get("cause") or {}).get("limit")]'
}

# direct_view_checks M START: 9 tests. A command that prints what it sees, submitted as a
# command and as a job of one step: both answer START (JSON: "warm", "cold", null), exited 0;
# the command's parent is the cell's init, the step's is not; argv, env, ids, cwd, umask,
# capabilities, no_new_privs, seccomp and /tmp are the same on both paths.
direct_view_checks() {
	local m=$1 start=$2 w c wlog clog
	local see='printf "<%s>" "$0" "$@"; echo; env | LC_ALL=C sort; id; pwd; umask; grep -E "^(Cap|NoNewPrivs|Seccomp)" /proc/self/status; stat -c %a /tmp; touch /etc/warren-direct 2>&1 || echo refused; echo x >$TMPDIR/w && echo tmp-ok; echo ppid=$PPID'
	local cmd="[\"sh\",\"-c\",$(jstr "$see"),\"zero\",\"a b\",\"c'd\",\"\$HOME\"]"
	run_wait "$(direct_req "$cmd")"
	w=$ID
	is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" "[$start, \"exited\", 0]" "$m a plain command: start $start, exited 0" || diag "$BODY"
	run_wait "$(direct_req "$cmd" job)"
	c=$ID
	is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" "[$start, \"exited\", 0]" "$m ... the same as a job of one step: the job path" || diag "$BODY"
	wlog=$(logs "$w")
	clog=$(logs "$c")
	like "$wlog" "ppid=1\$" "$m the command is the cell's job: its parent is the cell's init (no executor, no shell)"
	unlike "$clog" "ppid=1\$" "$m ... the job's step is the executor's child"
	is "${wlog%ppid=*}" "${clog%ppid=*}" "$m argv, env, user, cwd, umask, capabilities, no_new_privs, seccomp, /tmp: the same on both paths" ||
		diag "$(diff <(printf '%s\n' "$clog") <(printf '%s\n' "$wlog"))"
	like "$wlog" "<zero><a b><c'd><\\\$HOME>" "$m ... the argv as given (no shell splits or expands it)"
	like "$wlog" "TMPDIR=/tmp" "$m ... TMPDIR=/tmp"
	like "$wlog" "NoNewPrivs:	1" "$m ... no_new_privs"
	like "$wlog" "refused.*tmp-ok|Read-only file system.*tmp-ok" "$m ... the host is read-only, \$TMPDIR writable"
}

# direct_bad_commands M START DIR: 4 tests. A missing command (by path and on PATH) and a file
# that is not executable (made in DIR, the current mode's) end as on the job path: start
# START, the same state, exit code (127, 126), step and cause; the log says why.
direct_bad_commands() {
	local m=$1 start=$2 dir=$3 cmd w c ws
	printf 'echo never\n' >"$dir/noexec"
	chmod 0644 "$dir/noexec"
	[ "$MODE" = user ] && chown "$TEST_USER_UID" "$dir/noexec"
	for cmd in '["/nonexistent/cmd"]' '["nonexistent-cmd-xyz"]' "[\"$dir/noexec\"]"; do
		run_wait "$(direct_req "$cmd")"
		w=$ID
		ws=$(jbody '[d["start"], d["state"], d["exit_code"]]')
		run_wait "$(direct_req "$cmd" job)"
		c=$ID
		wait_for 10 result_has_steps "$w"
		wait_for 10 result_has_steps "$c"
		is "$ws:$(outcome "$w")" "[$start, \"exited\", $(jbody 'd["exit_code"]')]:$(outcome "$c")" \
			"$m $cmd: ends as on the job path (state, exit code, step, cause)"
	done
	like "$(logs "$w")" "warren: cannot execute .*noexec" "$m ... a command that cannot be executed says why in its log"
}

# direct_noshebang_check M START DIR: 2 tests. An executable script without "#!" (made in DIR,
# the current mode's) given as the command runs through /bin/sh, as execvp and a job's shell
# run it: the same output and exit as on the job path.
direct_noshebang_check() {
	local m=$1 start=$2 dir=$3 w c
	printf 'echo noshebang-ran "$@"\nexit 3\n' >"$dir/noshebang"
	chmod 0755 "$dir/noshebang"
	[ "$MODE" = user ] && chown "$TEST_USER_UID" "$dir/noshebang"
	run_wait "$(direct_req "[\"$dir/noshebang\",\"x y\"]")"
	w="$(jbody '[d["start"], d["state"], d["exit_code"]]'):$(logs "$ID" | grep -v '^20..-' | tr '\n' ' ')"
	run_wait "$(direct_req "[\"$dir/noshebang\",\"x y\"]" job)"
	c="$(jbody '[d["start"], d["state"], d["exit_code"]]'):$(logs "$ID" | grep -v '^20..-' | tr '\n' ' ')"
	is "$w" "[$start, \"exited\", 3]:noshebang-ran x y " "$m a script without #! runs through /bin/sh (exit 3, its output)"
	is "$c" "$w" "$m ... as on the job path"
}
