#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# serve-log.t - issue 34: the server says what it does. A real `warren serve` on a unix socket
# and on TCP 127.0.0.1 with a token: on its stderr a line per run started (id, owner, command or
# job name) and ended (state, exit, cause, duration) and per refused request (method, path,
# status, the answer's one line, the peer's uid or address: a 404 of another user's run, a 403
# submission of another user, a 413 body, a 401 token, a PUT of a file without its path); a
# path with a newline stays one line; with --log-format json every line is one JSON object
# (time, level, event, msg, fields) that json.loads reads. And what the console uses of the API: POST /v1/runs/{id}/rerun (the kept
# request submitted again; 409 for a run the server kept none of), a log's .times (?times=1)
# and the raw log to save (?download=1).
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

plan 38

use_mode root
T=$TEST_SCRATCH/serve-log
mkdir -p "$T/sock"
chmod 755 "$T" "$T/sock"
SOCK=$T/sock/api.sock
TOKEN_FILE=$T/token
head -c 32 /dev/urandom | base64 >"$TOKEN_FILE"
chmod 600 "$TOKEN_FILE"
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
API_AS=root
API_TIMEOUT=30

bounded "$WARREN" serve --state "$STATE" --log-format xml
is "$RC:$ERR" "125:warren: --log-format: 'xml'; use text or json (see 'warren serve --help')" "--log-format xml: refused with one line"

# ---- text: the lines as they come
start_server 15 --listen "unix:$SOCK" --listen "tcp:127.0.0.1:$PORT" --token-file "$TOKEN_FILE" --slots 2
ok $? "warren serve answers on its unix socket" || diag "$(cat "$SRV_ERR")"
run_wait "{\"command\":[\"sh\",\"-c\",\"echo one; sleep 1.2; echo two; exit 3\"],\"worktree\":\"$WORK\",\"name\":\"three\"}"
C=$ID
is "$(jbody 'd["exit_code"]')" 3 "a command run ends with exit 3"
printf 'name: logged-job\nsteps:\n  - name: s\n    run: exit 0\n' >"$T/job.yaml"
run_wait "{\"job\":$(jstr "$(cat "$T/job.yaml")"),\"worktree\":\"$WORK\"}"
J=$ID
submit "{\"command\":[\"sleep\",\"60\"],\"worktree\":\"$WORK\"}"
K=$ID
wait_for 20 run_state_is "$K" running
api POST "/v1/runs/$K/kill"
wait_for 30 run_ended "$K"
log=$(cat "$SRV_ERR")
line_like "$log" "^warren serve: $C started for uid 0: command \[\"sh\",\"-c\",\"echo one; sleep 1.2; echo two; exit 3\"\]$" \
	"run started: its id, owner and command"
line_like "$log" "^warren serve: $J started for uid 0: job logged-job$" "... a job's: its job's name"
line_like "$log" "^warren serve: $C ended: exited 3 after (1\.[2-9]|[2-9]\.)[0-9]*s$" "run ended: its state, exit code and duration"
line_like "$log" "^warren serve: $K ended: interrupted, exit 143, after [0-9.]+s: killed by warren kill \(uid 0\)" \
	"... a killed run's: its state, exit, duration and cause"

# refusals: another user's 404 and 403, a body too large (413), a wrong token on TCP (401)
code=$(as_user curl -s -o /dev/null -w '%{http_code}' --max-time 10 --unix-socket "$SOCK" "http://warren/v1/runs/$C")
is "$code" 404 "another user's GET of root's run: 404"
code=$(as_user curl -s -o /dev/null -w '%{http_code}' --max-time 10 --unix-socket "$SOCK" -X POST \
	-d "{\"command\":[\"true\"],\"worktree\":\"$WORK\"}" "http://warren/v1/runs")
is "$code" 403 "another user's submission to root's server: 403"
head -c $((1024 * 1024 + 10)) /dev/zero | tr '\0' 'x' >"$T/big"
code=$(api_curl 20 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$T/big" http://warren/v1/runs)
is "$code" 413 "a body over 1 MiB: 413"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H "Authorization: Bearer wrong-token-of-enough-length" "http://127.0.0.1:$PORT/v1/runs")
is "$code" 401 "TCP with a wrong token: 401"
code=$(api_curl 10 -o /dev/null -w '%{http_code}' "http://warren/v1/no%0Awarren%20serve:%20forged")
is "$code" 404 "a path with a newline in it: 404"
code=$(api_curl 10 -o /dev/null -w '%{http_code}' -X PUT --data-binary x "http://warren/v1/runs/$C/files")
is "$code" 400 "a PUT of a session's file without its path: 400"
sleep 0.3
log=$(cat "$SRV_ERR")
line_like "$log" "^warren serve: refused GET /v1/runs/$C for uid $TEST_USER_UID: 404 no run $C \(of yours\) on this server$" \
	"a 404: method, path, the peer's uid, status and the answer's line"
line_like "$log" "^warren serve: refused POST /v1/runs for uid $TEST_USER_UID: 403 this server runs jobs as its own user" "a 403: the same"
line_like "$log" "^warren serve: refused POST /v1/runs for uid 0: 413 the body is larger than 1048576 bytes$" "a 413: the same"
line_like "$log" "^warren serve: refused GET /v1/runs for 127\.0\.0\.1: 401 a valid 'Authorization: Bearer TOKEN' header is needed" \
	"a 401 on TCP: the peer's address"
line_like "$log" "^warren serve: refused GET /v1/no\?warren serve: forged for uid 0: 404 " "a newline in the path is '?': the line stays one"
no_line_like "$log" "^warren serve: forged" "... nothing forged a line of its own"
line_like "$log" "^warren serve: refused PUT /v1/runs/$C/files for uid 0: 400 path: required" \
	"a PUT of a file refused at its head (files.c): the same"

# ---- what the console uses: rerun, times, download
api GET "/v1/runs/$C"
is "$(jbody 'd["rerun"]')" True "GET /v1/runs/{id}: its request is kept (rerun true)"
api POST "/v1/runs/$C/rerun"
is "$CODE:$(jbody 'd["rerun_of"]')" "201:$C" "POST /v1/runs/{id}/rerun: 201, a new run (rerun_of)" || diag "$BODY"
R=$(jbody 'd["id"]')
wait_for 30 run_ended "$R"
is "$(row "$R" exit_code):$(row "$R" name):$(logs "$R" | tr '\n' ' ')" "3:three:one two " "... the same command again: its name, output and exit"
code=$(as_user curl -s -o /dev/null -w '%{http_code}' --max-time 10 --unix-socket "$SOCK" -X POST "http://warren/v1/runs/$C/rerun")
is "$code" 404 "another user's rerun of root's run: 404"
wrun -- true
CLI=$(basename "$(last_rundir)")
api POST "/v1/runs/$CLI/rerun"
is "$CODE" 409 "rerun of a run the server kept no request of (a warren run's): 409" || diag "$BODY"
like "$(jbody 'd["error"]')" "kept no request of that run" "... saying so"
got=$(api_curl 10 "http://warren/v1/runs/$C/logs?times=1")
is "$got" "$(cat "$STATE/runs/$C/log/1-main.times")" "GET logs?times=1: the log's .times"
like "$got" '^20[0-9-]+T[0-9:.]+Z 0 4
20[0-9-]+T[0-9:.]+Z 4 4$' "... a chunk per echo, 1.2 s apart (each its own time)"
api_curl 10 -D "$T/hdr" -o "$T/dl" "http://warren/v1/runs/$C/logs?download=1"
cmp -s "$T/dl" "$STATE/runs/$C/log/1-main.log"
ok $? "GET logs?download=1: the log's bytes"
like "$(cat "$T/hdr")" "Content-Disposition: attachment; filename=\"$C-1-main.log\"" "... as a file to save, named by the run and step"
stop_server 30
is "$RC" 0 "warren serve stops on SIGTERM"

# ---- json: one object per line, for collectors
start_server 15 --listen "unix:$SOCK" --log-format json --slots 1
ok $? "warren serve --log-format json answers" || diag "$(cat "$SRV_ERR")"
run_wait "{\"command\":[\"sh\",\"-c\",\"exit 0\"],\"worktree\":\"$WORK\"}"
JID=$ID
as_user curl -s -o /dev/null --max-time 10 --unix-socket "$SOCK" "http://warren/v1/runs/$JID"
stop_server 30
JLOG=$SRV_ERR
bad=$("$PY" -c '
import json, sys
bad = []
for n, l in enumerate(open(sys.argv[1]), 1):
    try:
        d = json.loads(l)
        assert isinstance(d, dict) and all(k in d for k in ("time", "level", "event", "msg")), "fields"
    except Exception as e:
        bad.append("%d: %s: %r" % (n, e, l))
print("\n".join(bad) or "none")' "$JLOG")
is "$bad" none "every line of --log-format json is a JSON object with time, level, event, msg"
ev() { "$PY" -c '
import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if d["event"] == sys.argv[2]:
        print(json.dumps([d.get(k) for k in sys.argv[3:]]))' "$JLOG" "$@"; }
is "$(ev run_started id owner command)" "[\"$JID\", 0, [\"sh\", \"-c\", \"exit 0\"]]" "run_started: id, owner, command"
like "$(ev run_ended id state exit_code cause duration_s)" "^\[\"$JID\", \"exited\", 0, null, [0-9.]+\]$" "run_ended: id, state, exit code, cause, duration"
is "$(ev request_refused method path status uid reason)" \
	"[\"GET\", \"/v1/runs/$JID\", 404, $TEST_USER_UID, \"no run $JID (of yours) on this server\"]" "request_refused: method, path, status, uid, reason"
is "$(ev server_started slots | head -1):$(ev server_stopped level)" '[1]:["info"]' "server_started (its slots) and server_stopped"
like "$(head -1 "$JLOG")" '^\{"time":"20[0-9-]+T[0-9:.]+Z","level":"info","event":"server_started","msg":"1 slot, ' \
	"... time first: RFC 3339 UTC with milliseconds"
