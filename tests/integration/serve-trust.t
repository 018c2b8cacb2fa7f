#!/bin/bash
# serve-trust.t - issue 31 (trust, round three), the server's side, on a root state directory of
# mode 0755 (as the socket <state>/serve.sock needs for other users to reach it): the history's
# files (history.db, -wal, -shm, .pending) are root's alone, also one an older warren left 0644;
# the served jobs' files (a job's env: may hold a secret) are the server's alone, also in a
# serve/ left 0755; and a flood of 1 100 half-sent requests from the test user neither turns
# root away nor holds the server: the user's connections beyond its cap are answered 503, the
# rest time out in seconds, while a request whose head is in may stay quiet for longer; and a
# storm of connections that fills the public socket's queue leaves root's own socket answering.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

plan 23

use_mode root
API_AS=root
API_TIMEOUT=20
mkdir -p "$STATE"
chmod 755 "$STATE"
history_files() { (cd "$STATE" && stat -c '%n %a' history.db history.db-wal history.db-shm history.db.pending* | tr '\n' ' '); }
# user_reads FILE...: the files the test user can read
user_reads() { local f; for f; do as_user head -c 1 "$f" >/dev/null 2>&1 && printf '%s ' "${f##*/}"; done; }

# ---- the history
wrun --label team=secret-label -- sh -c 'echo secret-cmdline' >/dev/null
wr history >/dev/null
wrun -- true
is "$(history_files)" "history.db 600 history.db-wal 600 history.db-shm 600 history.db.pending 600 history.db.pending.lock 600 " \
	"the history's files are 0600 in a state directory of mode 0755 (the db, its -wal and -shm, the pending lines)"
is "$(user_reads "$STATE"/history.db*)" "" "... the test user reads none of them"
bounded "${AS_USER[@]}" "$WARREN" history --state "$STATE"
is "$RC" 125 "... warren history by the test user on root's state fails (125)"
like "$ERR" "^warren: the history .*/history.db is uid 0's alone; ask its server \(GET /v1/runs\)" "... saying whose it is and where to ask"
chmod 644 "$STATE"/history.db*
wr history
is "$RC:$(history_files)" "0:history.db 600 history.db-wal 600 history.db-shm 600 history.db.pending.lock 600 " \
	"an older history left 0644: narrowed to 0600 when next opened (warren history still reads it)"
line_like "$OUT" "secret-cmdline" "... its rows are all there"
wrun -- true
chmod 644 "$STATE/history.db.pending"
wrun -- true
is "$(stat -c %a "$STATE/history.db.pending")" 600 "... an older pending file: narrowed by the next run's line"

# ---- the server: its jobs' files
SOCK=$TEST_SCRATCH/api.sock
mkdir -p "$STATE/serve" "$TEST_SCRATCH/warm"
chmod 755 "$STATE/serve" "$TEST_SCRATCH/warm"
start_server 30 --listen "unix:$SOCK" --warm 1 --warm-work "$TEST_SCRATCH/warm"
ok $? "warren serve answers on a state directory of mode 0755" || diag "$(cat "$SRV_ERR")"
is "$(stat -c %a "$STATE/serve")" 700 "its serve/ (left 0755) is made 0700"
is "$(stat -c %a "$STATE/serve/warm.job.json")" 600 "warm.job.json is 0600"
job=$'env:\n  DEPLOY_TOKEN: deploy-secret-31\nsteps:\n  - name: main\n    run: sleep 3; echo done\n'
submit "{\"job\":$(jstr "$job"),\"worktree\":\"$WORK\"}"
J=$ID
wait_for 10 test -e "$STATE/serve/$J.job.json"
is "$(stat -c %a "$STATE/serve/$J.job.json"):$(grep -c deploy-secret-31 "$STATE/serve/$J.job.json")" 600:1 \
	"a served job's file, its env with a secret: 0600"
is "$(user_reads "$STATE/serve/$J.job.json" "$STATE/serve/warm.job.json")" "" "... the test user reads neither it nor warm.job.json"
wait_for 30 run_ended "$J"
is "$(row "$J" state)" exited "... the job ran (the server's child reads its file)"

# ---- a flood of half-sent requests from the test user
cat >"$TEST_SCRATCH/flood.py" <<'PY'
import resource, socket, sys, time
path, n, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 64), hard))
socks = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        s.settimeout(5)
        s.sendall(b"GET /v1/runs HTTP/1.1\r\nHost: warren\r\n")
    except OSError:
        pass
    socks.append(s)
print("opened", len(socks), flush=True)
time.sleep(hold)
held = told = 0
for s in socks:
    s.setblocking(False)
    try:
        if s.recv(4096).startswith(b"HTTP/1.1 503"):
            told += 1
    except BlockingIOError:
        held += 1
    except OSError:
        pass
print("held", held, "told", told, flush=True)
PY
chmod 644 "$TEST_SCRATCH/flood.py"
start_bg timeout -k 2 60 "${AS_USER[@]}" /usr/bin/python3 "$TEST_SCRATCH/flood.py" "$SOCK" 1100 8
FLOOD=$BG_PID
wait_for 30 grep -qs '^opened' "$BG_OUT"
is "$(head -1 "$BG_OUT")" "opened 1100" "the test user opens 1100 connections, each a request's head without its end"
t0=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 --unix-socket "$SOCK" http://warren/healthz)
ms=$((($(date +%s%N) - t0) / 1000000))
is "$code" 200 "... root's request is answered under the flood (in ${ms} ms, at most 3 s)"
bounded "${AS_USER[@]}" "$WARREN" submit --via "unix:$SOCK" --work "$U_WORK" -- true
is "$RC:$ERR" "125:warren: the server refused (HTTP 503): uid $TEST_USER_UID holds 64 connections to warren serve, its most; close some (or finish their requests) and ask again" \
	"... the test user's next request: 503, one line saying its cap (warren submit)"
wait_bg "$FLOOD" 30
like "$(tail -1 "$BG_OUT")" "^held 0 told 10[0-9][0-9]$" "... 8 s on, the server holds none of the flood's (those over the cap told 503, the rest timed out)"
out=$(as_user curl -s -w '%{http_code}' -o /dev/null --max-time 5 --unix-socket "$SOCK" http://warren/v1/runs)
is "$out" 200 "... after it the test user is answered again"

# a storm: two processes of the test user connect as fast as they can (each connection sent
# half a request, closed a moment later), filling the public socket's queue in the kernel more
# often than not; root's own socket, which no other user reaches, answers every time
cat >"$TEST_SCRATCH/storm.py" <<'PY'
import socket, sys, time
path, secs = sys.argv[1], float(sys.argv[2])
end, held = time.time() + secs, []
while time.time() < end:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.connect(path)
        s.send(b"GET / HTTP/1.1\r\n")
        held.append(s)
    except OSError:
        s.close()
    if len(held) > 300:
        for x in held[:100]:
            x.close()
        del held[:100]
PY
chmod 644 "$TEST_SCRATCH/storm.py"
OWN=$STATE/serve/own.sock
is "$(stat -c '%F %a %U' "$OWN" 2>&1)" "socket 700 root" "root's own socket: $STATE/serve/own.sock (in the 0700 serve/)"
storm=()
for _ in 1 2; do
	start_bg timeout -k 2 30 "${AS_USER[@]}" /usr/bin/python3 "$TEST_SCRATCH/storm.py" "$SOCK" 6
	storm+=("$BG_PID")
done
sleep 1
codes=
for _ in $(seq 1 8); do
	codes+="$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 --unix-socket "$OWN" http://warren/healthz) "
	sleep 0.3
done
wr submit --work "$WORK" -- true
sub=$RC
for p in "${storm[@]}"; do wait_bg "$p" 30; done
is "$codes" "200 200 200 200 200 200 200 200 " "under a storm of the test user's connections root's own socket answers every time"
is "$sub" 0 "... warren submit (no --via) takes it"

# the head's seconds are not a request's: a stream of logs quiet for 7 s stays open
submit "{\"command\":[\"sh\",\"-c\",\"echo early; sleep 7; echo late\"],\"worktree\":\"$WORK\"}"
got=$(api_curl 30 -N "http://warren/v1/runs/$ID/logs?follow=1" | sed -n 's/^data: //p' | grep -E '^(early|late)$' | tr '\n' ' ')
is "$got" "early late " "a stream of logs quiet for 7 s is not cut (the 5 s are a request head's)"

stop_server 60
is "$RC" 0 "SIGTERM: the server stops cleanly"
