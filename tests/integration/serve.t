#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# serve.t - issue 12: the history (SQLite) and `warren serve` with its API v1. A real server on
# a unix socket in the test's own state directory and on TCP 127.0.0.1 with a bearer token:
# submit with curl, poll, logs as SSE resumed from an offset and from Last-Event-ID (nothing
# lost, nothing repeated), kill (cause recorded), delete, auth refused for a wrong token and
# for another user's runs over the unix socket, bad JSON -> 400 with one message, a token file
# others can read refused; restart after kill -9 of the server under load (no process of any
# run left, rows interrupted with "warren serve stopped", queued ones started, the history
# intact); retention; many plain `warren run`s writing the history at once.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

plan $((66 + 8))

use_mode root
T=$TEST_SCRATCH/serve
mkdir -p "$T/sock"
chmod 755 "$T" "$T/sock"
SOCK=$T/sock/api.sock
TOKEN_FILE=$T/token
head -c 32 /dev/urandom | base64 >"$TOKEN_FILE"
chmod 600 "$TOKEN_FILE"
TOKEN=$(cat "$TOKEN_FILE")
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# requests of root's (root also sees the rootless server's runs), at most 20s each
API_AS=root
API_TIMEOUT=20
# start_tcp_server ARGS...: warren serve on $SOCK and on TCP with the token, answering within 15s.
start_tcp_server() {
	start_server 15 --listen "unix:$SOCK" --listen "tcp:127.0.0.1:$PORT" --token-file "$TOKEN_FILE" "$@"
}

# ---- a token file others may read: refused
chmod 644 "$TOKEN_FILE"
bounded "$WARREN" serve --state "$STATE" --listen "tcp:127.0.0.1:$PORT" --token-file "$TOKEN_FILE"
is "$RC" 125 "a token file others can read: warren serve refuses to start (125)"
like "$ERR" "token-file .*mode 0644.*chmod 600" "... and says which file, its mode and the remedy"
chmod 600 "$TOKEN_FILE"

# ---- the server; a command submitted with curl
start_tcp_server --slots 2
ok $? "warren serve answers /healthz on its unix socket" || diag "$(cat "$SRV_ERR")"
submit "{\"command\":[\"sh\",\"-c\",\"for i in \$(seq 1 40); do echo line \$i; sleep 0.02; done\"],\"worktree\":\"$WORK\",\"labels\":{\"suite\":\"serve\"},\"name\":\"lines\"}"
is "$CODE" 201 "POST /v1/runs with a command: 201" || diag "$BODY"
like "$(jbody 'd["queue_position"]')" '^[0-9]+$' "... it says the run's queue position"
L=$ID
wait_for 30 run_ended "$L"
api GET "/v1/runs/$L"
is "$(jbody 'd["run"]["state"]')" exited "the run ends: state exited"
is "$(jbody 'd["run"]["exit_code"]')" 0 "... exit code 0 in the row"
is "$(jbody 'd["steps"][0]["name"]')" main "... GET /v1/runs/{id} has its step"
is "$(jbody 'd["run"]["labels"]["suite"]')" serve "... and its labels"
api GET "/v1/runs?label=suite=serve"
is "$(jbody '[r["id"] for r in d["runs"]]')" "[\"$L\"]" "GET /v1/runs?label= finds it by label"
bounded "$WARREN" history --state "$STATE" --label suite=serve
line_like "$OUT" "^$L +exited +0 .* lines " "warren history shows it (state, exit, name)"

# ---- logs: whole, SSE, resumed from an offset and from Last-Event-ID
expected=$(seq 1 40 | sed 's/^/line /')
got=$(logs "$L" 20)
is "$got" "$expected" "GET logs: the step's whole output"
sse=$(api_curl 20 -N "http://warren/v1/runs/$L/logs?follow=1")
is "$(sed -n 's/^data: //p' <<<"$sse" | grep '^line')" "$expected" "logs?follow=1 (SSE): one event per line, then the end"
off=$(grep '^id: ' <<<"$sse" | sed -n '15s/^id: //p')
rest=$(api_curl 20 -N "http://warren/v1/runs/$L/logs?follow=1&offset=$off" | sed -n 's/^data: //p' | grep '^line')
is "$rest" "$(seq 16 40 | sed 's/^/line /')" "SSE from offset= of the 15th event: lines 16-40, none lost, none repeated"
rest=$(api_curl 20 -N -H "Last-Event-ID: $off" "http://warren/v1/runs/$L/logs?follow=1" | sed -n 's/^data: //p' | grep '^line')
is "$rest" "$(seq 16 40 | sed 's/^/line /')" "SSE with Last-Event-ID resumes the same way"

# a live run followed, the connection cut, then resumed: all lines once
submit "{\"command\":[\"sh\",\"-c\",\"for i in \$(seq 1 30); do echo live \$i; sleep 0.1; done\"],\"worktree\":\"$WORK\"}"
LV=$ID
first=$(api_curl 1.5 -N "http://warren/v1/runs/$LV/logs?follow=1")
last_id=$(grep '^id: ' <<<"$first" | tail -1 | sed 's/^id: //')
second=$(api_curl 20 -N -H "Last-Event-ID: ${last_id:-0}" "http://warren/v1/runs/$LV/logs?follow=1")
both=$( (sed -n 's/^data: //p' <<<"$first"; sed -n 's/^data: //p' <<<"$second") | grep '^live')
is "$both" "$(seq 1 30 | sed 's/^/live /')" "a live follow cut after 1.5s and resumed with Last-Event-ID: every line once (cut at ${last_id:-?})"

# ---- kill, delete
submit "{\"command\":[\"sleep\",\"60\"],\"worktree\":\"$WORK\"}"
K=$ID
wait_for 20 run_state_is "$K" running
wait_for 10 job_alive 60
api POST "/v1/runs/$K/kill"
is "$CODE" 202 "POST /v1/runs/{id}/kill: 202"
wait_for 30 run_ended "$K"
api GET "/v1/runs/$K"
is "$(jbody 'd["run"]["state"]')" interrupted "the killed run: state interrupted"
like "$(jbody 'd["run"]["cause"]["message"]')" "killed by warren kill" "... its cause recorded"
api DELETE "/v1/runs/$K"
is "$CODE" 200 "DELETE /v1/runs/{id}: 200"
api GET "/v1/runs/$K"
is "$CODE" 404 "... then GET gives 404"
ok "$([ ! -e "$STATE/runs/$K" ] && echo 0 || echo 1)" "... and the record is gone"

# ---- refusals
api POST /v1/runs '{"command": ["true"], '
is "$CODE" 400 "bad JSON: 400"
is "$(jbody 'd["error"]' | wc -l)" 1 "... with one line of error"
like "$BODY" '"error": "the body is not JSON' "... saying the body is not JSON"
api POST /v1/runs "{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"colour\":\"red\"}"
is "$CODE" 400 "an unknown field: 400"
like "$(jbody 'd["error"]')" "unknown field 'colour'" "... naming it"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H "Authorization: Bearer wrong-token-of-enough-length" "http://127.0.0.1:$PORT/v1/runs")
is "$code" 401 "TCP with a wrong token: 401"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$PORT/v1/runs")
is "$code" 401 "TCP without a token: 401"
code=$(curl -s -o "$T/tcp" -w '%{http_code}' --max-time 10 -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/v1/runs/$L")
is "$code" 200 "TCP with the token: 200"
# another user over the unix socket sees none of root's runs and controls none
code=$(as_user curl -s -o /dev/null -w '%{http_code}' --max-time 10 --unix-socket "$SOCK" "http://warren/v1/runs/$L")
is "$code" 404 "another user: GET of root's run gives 404"
out=$(as_user curl -s -w '\n%{http_code}' --max-time 10 --unix-socket "$SOCK" "http://warren/v1/runs")
is "$(tail -1 <<<"$out"):$(sed '$d' <<<"$out" | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))' 2>&1)" "200:0" "another user: the list of runs is empty"
code=$(as_user curl -s -o /dev/null -w '%{http_code}' --max-time 10 --unix-socket "$SOCK" -X POST "http://warren/v1/runs/$L/kill")
is "$code" 404 "another user: kill of root's run gives 404"
code=$(as_user curl -s -o /dev/null -w '%{http_code}' --max-time 10 --unix-socket "$SOCK" -X DELETE "http://warren/v1/runs/$L")
is "$code" 404 "another user: delete of root's run gives 404"

# ---- policy and metrics
api GET "/v1/runs/$L/policy?path=/usr/bin/x&access=write"
is "$(jbody 'd["allowed"]')" False "GET policy: writing /usr/bin/x is refused"
like "$(jbody 'd["answer"]')" "/tmp" "... and the answer says where to write instead"
api GET /metrics
like "$BODY" 'warren_runs\{state="exited",cause=""\} [0-9]+' "GET /metrics: runs by state and cause"
like "$BODY" 'warren_start_latency_seconds_count [0-9]+' "... and the start latency histogram"

# ---- kill -9 of the server under load; restart
for i in 1 2 3 4; do
	submit "{\"command\":[\"sh\",\"-c\",\"sleep 77 & sleep 78\"],\"worktree\":\"$WORK\",\"labels\":{\"load\":\"k9\"}}"
	ids+=("$ID")
done
wait_for 20 run_state_is "${ids[1]}" running
wait_for 10 job_alive 78
kill -KILL "$SRV"
wait "$SRV" 2>/dev/null
left() { [ -z "$(job_pids 77)$(job_pids 78)" ] && no_procs_matching "${ids[0]}" && no_procs_matching "${ids[1]}"; }
wait_for 10 left
ok $? "kill -9 of the server: no process of any of its runs is left" || diag "$(ps -ef | grep -E 'sleep 7[78]|run_')"
start_tcp_server --slots 2
ok $? "the server starts again on the same state" || diag "$(cat "$SRV_ERR")"
api GET "/v1/runs/${ids[0]}"
is "$(jbody 'd["run"]["state"]')" interrupted "a run live at the kill: interrupted"
like "$(jbody 'd["run"]["cause"]["message"]')" "warren serve stopped" "... with the cause 'warren serve stopped'"
ok "$([ ! -e "$STATE/runs/${ids[0]}/tmp" ] && echo 0 || echo 1)" "... and reclaimed (its scratch is gone)"
wait_for 20 run_state_is "${ids[3]}" running
ok $? "a run queued at the kill is started by the new server"
bounded "$WARREN" history --state "$STATE" --label load=k9 --json
is "$("$PY" -c 'import json,sys; print(len(json.loads(sys.argv[1])))' "$OUT" 2>/dev/null)" 4 "the history is intact: warren history reads all 4 rows"
for i in 2 3; do api POST "/v1/runs/${ids[$i]}/kill"; done
for i in 2 3; do wait_for 30 run_ended "${ids[$i]}"; done
stop_server 30
is "$RC" 0 "SIGTERM: the server stops cleanly" || diag "$(cat "$SRV_ERR")"

# ---- kill -9 at random moments under load, 5 times: every run ends in the history
# (exited, or interrupted by the kill), none is lost, none left running, the database intact
rids=()
for round in 1 2 3 4 5; do
	start_tcp_server --slots 2
	for i in 1 2 3 4; do
		submit "{\"command\":[\"sh\",\"-c\",\"sleep 0.\$((RANDOM % 5))\"],\"worktree\":\"$WORK\",\"labels\":{\"chaos\":\"yes\"}}"
		rids+=("$ID")
	done
	sleep "0.$((RANDOM % 9))"
	kill -KILL "$SRV"
	wait "$SRV" 2>/dev/null
done
start_tcp_server --slots 2
all_ended() {
	bounded "$WARREN" history --state "$STATE" --label chaos=yes --json
	"$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(not (len(d) == 20 and all(r["state"] in ("exited", "interrupted") for r in d)))' "$OUT"
}
wait_for 60 all_ended
ok $? "5 kill -9's at random moments: all 20 runs end, exited or interrupted, none lost" || diag "$OUT"
stop_server 30
left=$(for id in "${rids[@]}"; do procs_matching "$id"; cgroups_named "$id"; [ -e "$STATE/runs/$id/tmp" ] && echo "$id: scratch"; done)
is "$left" "" "... no process, cgroup or scratch of any of them is left"

# ---- retention: --keep-runs 2 prunes older records, their rows say so
start_tcp_server --slots 2 --keep-runs 2
for i in 1 2 3; do
	submit "{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"labels\":{\"ret\":\"x\"}}"
	wait_for 20 run_ended "$ID"
done
pruned_rows() { bounded "$WARREN" history --state "$STATE" --json; "$PY" -c 'import json,sys; print(sum(1 for r in json.loads(sys.argv[1]) if r["pruned"]))' "$OUT"; }
enough() { local n; n=$(pruned_rows); [ "${n:-0}" -ge 7 ]; }
wait_for 15 enough
ok $? "retention: all but the 2 newest ended runs are pruned ($(pruned_rows) rows say so)" ||
	diag "server alive: $(kill -0 "$SRV" 2>/dev/null && echo yes || echo no)" "$(tail -40 "$SRV_ERR")"
api GET "/v1/runs/$L"
ok "$([ "$(jbody 'd["run"]["pruned"]')" = True ] && [ ! -e "$STATE/runs/$L" ] && echo 0 || echo 1)" "... an old run's row stays, 'pruned', its record gone"
stop_server 30

# ---- the command line against the server: submit --follow, logs --via, kill --via
start_tcp_server --slots 2
out=$(cd "$WORK" && timeout 60 "$WARREN" submit --via "unix:$SOCK" --label cli=yes --follow -- sh -c 'echo one; echo two; exit 3' 2>"$T/submit.err")
rc=$?
is "$out:$rc" "one
two:3" "warren submit --follow: the run's output, then its exit status (3)" || diag "$(cat "$T/submit.err")"
SID=$(cd "$WORK" && timeout 20 "$WARREN" submit --via "unix:$SOCK" -- sleep 60 | cut -d' ' -f1)
wait_for 20 run_state_is "$SID" running
bounded "$WARREN" kill "$SID" --via "unix:$SOCK"
is "$RC" 0 "warren kill RUN --via: the server stops it"
wait_for 30 run_ended "$SID"
api GET "/v1/runs/$SID"
like "$(jbody 'd["run"]["cause"]["message"]')" "killed by warren kill" "... its cause recorded"
FID=$(grep -o 'run_[0-9A-Z]*' "$T/submit.err" | head -1)
bounded "$WARREN" logs "${FID:-none}" --via "tcp:127.0.0.1:$PORT" --token-file "$TOKEN_FILE"
is "$OUT" "one
two" "warren logs RUN --via tcp with the token: the step's log"
bounded "$WARREN" submit --via "unix:$SOCK" --work "$WORK" --net bogus -- true
is "$RC:$(grep -c . <<<"$ERR")" "125:1" "warren submit of a run the server refuses: exit 125, one line"
like "$ERR" "the server refused \(HTTP 400\): .*bogus" "... which gives the server's status and reason"
bounded "$WARREN" run --via "unix:$T/sock/none.sock" --work "$WORK" -- true
is "$RC" 125 "warren run --via a socket nobody serves: exit 125"
like "$ERR" "cannot reach warren serve at unix:$T/sock/none.sock" "... and it names the socket"
stop_server 30

# ---- a rootless server: the user's runs, seen by root too
use_mode user
USOCK=$U_STATE/serve.sock
SOCK=$USOCK
API_AS=mode start_server 15 --slots 1
ok $? "a rootless warren serve starts on the user's state directory"
out=$(as_user curl -s --max-time 10 --unix-socket "$USOCK" -X POST http://warren/v1/runs -d "{\"command\":[\"sh\",\"-c\",\"id -u; echo \$TMPDIR\"],\"worktree\":\"$WORK\"}")
UID_RUN=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$out" 2>/dev/null)
wait_for 30 run_ended "$UID_RUN"
api GET "/v1/runs/$UID_RUN"
is "$(jbody 'd["run"]["state"]'):$(jbody 'd["run"]["owner"]')" "exited:$TEST_USER_UID" "the user's run exits, owned by the user (root sees it)"
got=$(logs "$UID_RUN")
is "$got" "$TEST_USER_UID
/tmp" "... in a rootless cell: the user's uid, TMPDIR=/tmp"
stop_server 30
is "$RC" 0 "the rootless server stops cleanly"
use_mode root

# ---- many plain runs writing the history at once
for i in $(seq 1 24); do
	"$WARREN" run --state "$STATE" --work "$WORK" --label par=many --quiet -- true >/dev/null 2>&1 &
done
wait
# a run does not open the database: its start and end wait as lines in history.db.pending
is "$(grep -c '"op":"begin"' "$STATE/history.db.pending" 2>/dev/null):$(grep -c '"op":"end"' "$STATE/history.db.pending" 2>/dev/null)" "24:24" "24 plain runs at once: each appended its start and its end to history.db.pending"
bounded "$WARREN" history --state "$STATE" --label par=many --status exited --json
is "$("$PY" -c 'import json,sys; print(len(json.loads(sys.argv[1])))' "$OUT" 2>/dev/null)" 24 "24 plain warren runs at once: all 24 rows in the history"
ok "$([ ! -e "$STATE/history.db.pending" ] && [ ! -e "$STATE/history.db.pending.folding" ] && echo 0 || echo 1)" "... warren history folded the lines in (no pending file left)"
bounded "$WARREN" gc --state "$STATE" --keep-runs 3
is "$RC:$(ls "$STATE/runs" | wc -l)" "0:3" "warren gc --keep-runs 3: the records of the 3 newest runs stay"
bounded "$WARREN" history --state "$STATE" --label par=many --json
is "$("$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print(len(d), sum(r["pruned"] for r in d))' "$OUT" 2>/dev/null)" "24 21" "... the rows stay, 21 of the 24 marked pruned"

# ---- a run whose own end folds over 1 MiB of pending lines into the database (SQLite maps its
# -shm then, after the cell's helpers were reaped: in the sanitizer build that mapping, where a
# helper's stack had been, once read as a stack-buffer-underflow and the run failed)
bounded "$WARREN" run --state "$STATE" --work "$WORK" --label big=fold --quiet -- true
seed=$(cat "$STATE/history.db.pending" 2>/dev/null)  # its start and its end
if [ -n "$seed" ]; then
	for i in $(seq 1 3000); do printf "%s\n" "$seed"; done >>"$STATE/history.db.pending"
fi
big=$(stat -c %s "$STATE/history.db.pending" 2>/dev/null || echo 0)
bounded "$WARREN" run --state "$STATE" --work "$WORK" --label big=fold2 --quiet -- true
is "$RC:$([ "$big" -gt 1048576 ] && echo big):$(grep -c Sanitizer <<<"$ERR")" "0:big:0" \
	"a run whose end folds over 1 MiB of pending history lines: exits 0, nothing from the sanitizers" || diag "$ERR"
ok "$([ "$(stat -c %s "$STATE/history.db.pending" 2>/dev/null || echo 0)" -lt 1048576 ] && echo 0 || echo 1)" "... the lines were folded in"

# ---- a plain run whose warren was killed: gc closes its row
start_bg "$WARREN" run --state "$STATE" --work "$WORK" --label k9=plain -- sleep 51
wait_for 15 job_alive 51
bounded "$WARREN" history --state "$STATE" --label k9=plain --status running --json
is "$("$PY" -c 'import json,sys; print(len(json.loads(sys.argv[1])))' "$OUT" 2>/dev/null)" 1 "a plain run that is running: warren history lists it as running (its start folded in)"
kill -KILL "$BG_PID"
wait_for 10 job_gone 51
bounded "$WARREN" gc --state "$STATE"
bounded "$WARREN" history --state "$STATE" --label k9=plain --json
is "$("$PY" -c 'import json,sys; r=json.loads(sys.argv[1])[0]; print(r["state"], "supervisor died" in r["error"])' "$OUT" 2>/dev/null)" "error True" "a plain run whose warren was killed: after gc its row says error, the supervisor died"

# ---- --db in a directory that does not exist: one warning, the run as it was
bounded "$WARREN" run --state "$STATE" --work "$WORK" --db "$T/no-such-dir/h.db" -- sh -c 'exit 4'
is "$RC" 4 "--db in a missing directory: the job's exit status all the same"
one_warren_line "... and one line 'warren: ...'"
like "$ERR" "cannot write to the history $T/no-such-dir/h.db: cannot open $T/no-such-dir/h.db.pending: No such file or directory \\(check the directory, or give another --db\\); the run's record is in " "... naming the file, why, what to do, and where the record is"
