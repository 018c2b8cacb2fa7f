#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# console.t - issue 12, the console: a real `warren serve` on TCP 127.0.0.1 with a token and a
# state of its own; a job with a colour step and a step its time limit stops, and a long run;
# headless Debian chromium (driven by playwright-core from tests/console/, never a downloaded
# browser) asserts on the page: no page without the token or with a wrong one, the runs list,
# the step's clock and bar advancing, the cause when the limit stops it, the refused write and
# where to write instead, ANSI colours as spans and markup in a log as text, the logs after a
# reload, the kill button (cause recorded); issue 34: the step that failed a job named in the
# list and on its page, a continue-on-error failure marked tolerated. With curl: the headers (CSP, nosniff) and the CSRF
# check of a cookie's POST. Screenshots are kept in build/test-logs/console/.
. "$(dirname "$0")/../lib.sh"

plan 34

command -v curl >/dev/null || bail_out "curl is needed (scripts/install-deps)"
[ -x /usr/bin/chromium ] || bail_out "/usr/bin/chromium is needed: apt-get install chromium (scripts/install-deps)"
command -v node >/dev/null && command -v npm >/dev/null || bail_out "node and npm are needed: apt-get install nodejs npm (scripts/install-deps)"
[ "$(node -p 'parseInt(process.versions.node)')" -ge 18 ] || bail_out "node 18 or newer is needed for playwright-core (Debian 12's nodejs is 18)"
CDIR=$REPO/tests/console
if [ ! -d "$CDIR/node_modules/playwright-core" ]; then
	# the driver only: playwright-core downloads no browser
	(cd "$CDIR" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund >/dev/null 2>&1) ||
		bail_out "npm ci in tests/console failed (the npm registry is needed once for playwright-core)"
fi

use_mode root
T=$TEST_SCRATCH/console
mkdir -p "$T/tmp" "$T/home"
SHOTS=$REPO/build/test-logs/console
rm -rf "$SHOTS" && mkdir -p "$SHOTS"
TOKEN_FILE=$T/token
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TOKEN_FILE"
chmod 600 "$TOKEN_FILE"
TOKEN=$(cat "$TOKEN_FILE")
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
BASE=http://127.0.0.1:$PORT

start_bg "$WARREN" serve --state "$STATE" --listen "tcp:127.0.0.1:$PORT" --token-file "$TOKEN_FILE" --slots 2
SRV=$BG_PID
SRV_ERR=$BG_ERR
wait_for 15 curl -sf --max-time 2 "$BASE/healthz" -o /dev/null
ok $? "warren serve answers on tcp 127.0.0.1:$PORT" || diag "$(cat "$SRV_ERR")"

# submit FILE NAME: the job file FILE as POST /v1/runs; its id in ID.
submit() {
	"$PY" -c 'import json,sys; print(json.dumps({"job": open(sys.argv[1]).read(), "worktree": sys.argv[2], "name": sys.argv[3], "labels": {"suite": "console"}}))' \
		"$1" "$WORK" "$2" >"$T/req.json"
	ID=$(curl -s --max-time 20 -H "Authorization: Bearer $TOKEN" --data-binary @"$T/req.json" "$BASE/v1/runs" |
		"$PY" -c 'import json,sys; print(json.load(sys.stdin).get("id",""))')
}
cat >"$T/job.yaml" <<'EOF'
name: console-demo
services:
  helper:
    run: echo "helper up"; exec sleep 300
    ready: { run: "sleep 0.5", timeout: 20s }
steps:
  - name: colours
    run: |
      for i in $(seq 600); do [ -e go ] && break; sleep 0.1; done
      printf '\033[31mred\033[0m \033[1;32mbold green\033[0m plain <b>not bold</b> <img src=x>\n'
      printf '\033[?25l\033]0;a window title\007\033[38;5;208morange\033[0m\033(B end\n'
      echo refused > /usr/warren-console-refused 2>/dev/null || true
      for i in 1 2 3; do echo "tick $i"; sleep 0.4; done
  - name: slow
    timeout: 6s
    run: echo "waiting for the limit"; sleep 60
EOF
submit "$T/job.yaml" 'console <i>demo</i>'
JOB=$ID
cat >"$T/long.yaml" <<'EOF'
name: long
steps:
  - name: long
    run: echo "a long step"; sleep 120
EOF
submit "$T/long.yaml" long
LONG=$ID
cat >"$T/soft.yaml" <<'EOF'
name: soft
steps:
  - name: fine
    run: echo fine
  - name: flaky
    continue-on-error: true
    run: exit 3
  - name: test
    run: exit 1
EOF
submit "$T/soft.yaml" soft
SOFT=$ID
like "$JOB $LONG $SOFT" '^run_[0-9A-Z]{26} run_[0-9A-Z]{26} run_[0-9A-Z]{26}$' "three jobs submitted with curl"
# live_step ID: "status started_at-set now_ms-set" of the first step, from GET /v1/runs/{id}
live_step() {
	curl -s --max-time 10 -H "Authorization: Bearer $TOKEN" "$BASE/v1/runs/$1" |
		"$PY" -c 'import json,sys; d=json.load(sys.stdin); s=(d["steps"] or [{}])[0]; print(s.get("status"), bool(s.get("started_at")), bool(d.get("now_ms")), d["result"] is None)'
}
wait_for 20 eval '[ "$(live_step "$LONG")" = "running True True True" ]'
is "$(live_step "$LONG")" "running True True True" "GET /v1/runs/{id} of a live job: its running step with started_at (progress.json), the server's now_ms"

# ---- the headers of the page, with the token as a bearer
hdr=$(curl -s -D - -o /dev/null --max-time 10 -H "Authorization: Bearer $TOKEN" "$BASE/")
like "$hdr" "Content-Security-Policy: default-src 'none'; script-src 'self';" "the page has a CSP: scripts from this server only, nothing inline"
like "$hdr" "X-Content-Type-Options: nosniff" "... and X-Content-Type-Options: nosniff"
page=$(curl -s --max-time 10 -H "Authorization: Bearer $TOKEN" "$BASE/")
unlike "$page" "<script>|<script [^>]*>[^<]|[[:space:]]on[a-z]+=" "... and no inline script or handler in it"

# ---- the browser
browser_tmp() { find /tmp -maxdepth 1 \( -iname '*playwright*' -o -iname '*chrom*' \) 2>/dev/null | sort; }
tmp_before=$(browser_tmp)
GO=$WORK/go   # the driver creates it when it has the run's page open: the job goes on
export BASE TOKEN JOB LONG SOFT SHOTS GO
out=$(cd "$CDIR" && TMPDIR=$T/tmp HOME=$T/home XDG_CONFIG_HOME=$T/home/.config XDG_CACHE_HOME=$T/home/.cache \
	timeout 240 node drive.mjs 2>"$T/drive.err")
drc=$?
cp "$T/drive.err" "$SHOTS/drive.err" 2>/dev/null
# res KEY DESC: the driver's check KEY as one test
res() {
	local line
	line=$(grep "^RESULT $1 " <<<"$out" | head -1)
	if [ -z "$line" ]; then
		ok 1 "$2" || diag "the browser driver did not get there (exit $drc): $(tail -5 "$T/drive.err")"
		return
	fi
	[ "$(cut -d' ' -f3 <<<"$line")" = 1 ]
	ok $? "$2" || diag "$(cut -d' ' -f4- <<<"$line")"
}
res no_token "no token: 401 and no page"
res wrong_token "a wrong /?token=: 401, no cookie, still no page"
res login "/?token= once: an HttpOnly SameSite=Strict cookie, then the page"
res list_shows_run "the runs list shows the job: its name as text (no markup), its label"
res clock_advances "the run page: the limited step's clock advances and its bar fills towards its limit"
res service_row "... the service has its row: ready, its clock, its ready limit"
res cause_appears "the cause appears when the step's time limit stops it (step row and run banner)"
res figures_refused "the record's figures and the refused write with where to write instead"
res ansi_colours "the colour step's log, followed live: SGR colours (16, 256) and bold as spans, other escapes dropped, markup as text, each line once"
res reload_keeps_logs "after a reload the log is there again (read from offset 0, then followed), each line once, the same step selected"
res list_cause_prominent "the runs list shows the cause prominently for the limited run"
res list_filter "the runs list filters by state (limit: that run alone) and by label (none matches: no row)"
res failed_step_list "the runs list names the step that failed a job and its cause, its tolerated failure apart"
res failed_step_run "the run page: the banner names the failed step; the continue-on-error failure is marked tolerated, not the one that failed the job"
res kill "the kill button stops the long run and its cause appears"
res no_page_errors "no script errors on the page (CSP kept everything working)"

# ---- the record, from the API: the kill is recorded
st=$(curl -s --max-time 10 -H "Authorization: Bearer $TOKEN" "$BASE/v1/runs/$LONG" |
	"$PY" -c 'import json,sys; d=json.load(sys.stdin)["run"]; print(d["state"], (d["cause"] or {}).get("message",""))')
like "$st" "^interrupted .*killed by warren kill" "the killed run's record: interrupted, killed by warren kill"
ok "$([ -e "$STATE/runs/$LONG/result.json" ] && [ ! -e "$STATE/runs/$LONG/progress.json" ] && echo 0 || echo 1)" \
	"... result.json holds the steps at the end; progress.json is gone"

# ---- CSRF: the browser's cookie authorises a POST only from the console's own origin
CK="warren_token=$(printf '%s' "$TOKEN" | od -An -tx1 | tr -d ' \n')"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST -b "$CK" -H "Origin: http://evil.example" "$BASE/v1/runs/$JOB/kill")
is "$code" 403 "a POST with the cookie from another origin: 403"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST -b "$CK" "$BASE/v1/runs/$JOB/kill")
is "$code" 403 "a POST with the cookie and no Origin: 403"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST -b "$CK" -H "Origin: $BASE" "$BASE/v1/runs/$JOB/kill")
is "$code" 409 "... from the console's own origin it passes (409: the run has ended)"

kill -TERM "$SRV" 2>/dev/null
wait_bg "$SRV" 30
is "$RC" 0 "warren serve stops on SIGTERM"

# ---- rootless, on the user's unix socket: the page and the live steps behind SO_PEERCRED
use_mode user
USOCK=$U_STATE/serve.sock
start_bg "${AS_USER[@]}" "$WARREN" serve --state "$U_STATE" --slots 1
USRV=$BG_PID
wait_for 15 as_user curl -sf --max-time 2 --unix-socket "$USOCK" http://warren/healthz -o /dev/null
upage=$(as_user curl -s -w '\n%{http_code}' --max-time 10 --unix-socket "$USOCK" http://warren/)
like "$upage" 'src="/console/app.js".*200$' "a rootless server: its user gets the page on the unix socket (no token)"
out=$(as_user curl -s --max-time 10 --unix-socket "$USOCK" -X POST http://warren/v1/runs \
	-d "{\"command\":[\"sleep\",\"30\"],\"worktree\":\"$WORK\",\"limits\":{\"time\":\"40s\"}}")
UID_RUN=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["id"])' "$out" 2>/dev/null)
ustep() {
	as_user curl -s --max-time 10 --unix-socket "$USOCK" "http://warren/v1/runs/$UID_RUN" |
		"$PY" -c 'import json,sys; d=json.load(sys.stdin); s=(d["steps"] or [{}])[0]; print(s.get("name"), s.get("status"), bool(s.get("started_at")))'
}
wait_for 20 eval '[ "$(ustep)" = "main running True" ]'
is "$(ustep)" "main running True" "... a live rootless run's step, with its start, from progress.json"
code=$(as_user curl -s -o /dev/null -w '%{http_code}' --max-time 10 --unix-socket "$USOCK" -X POST \
	-H "Origin: http://evil.example" "http://warren/v1/runs/$UID_RUN/kill")
is "$code" 403 "... a kill with another site's Origin through the socket (a proxy): 403"
as_user curl -s -o /dev/null --max-time 10 --unix-socket "$USOCK" -X POST "http://warren/v1/runs/$UID_RUN/kill"
kill -TERM "$USRV"
wait_bg "$USRV" 30
is "$RC" 0 "the rootless server stops cleanly"
use_mode root

# ---- the end: nothing left running, nothing in /tmp
ok "$(no_procs_matching "$T" && echo 0 || echo 1)" "no chromium or server process left" ||
	diag "$(procs_matching "$T")"
left=$(find "$T/tmp" -mindepth 1 -maxdepth 1 2>/dev/null | head -3)
new=$(comm -13 <(echo "$tmp_before") <(browser_tmp))
is "$left$new" "" "chromium left nothing in its TMPDIR, and nothing of a browser in /tmp"
