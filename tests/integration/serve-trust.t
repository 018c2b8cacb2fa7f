#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# serve-trust.t - issue 31 (trust, round three), the server's side, on a root state directory of
# mode 0755 (as the socket <state>/serve.sock needs for other users to reach it): the history's
# files (history.db, -wal, -shm, .pending) are root's alone, also one an older warren left 0644;
# the served jobs' files (a job's env: may hold a secret) are the server's alone, also in a
# serve/ left 0755; and a flood of 1 100 half-sent requests from the test user neither turns
# root away nor holds the server: the user's connections beyond its cap are answered 503, the
# rest time out in seconds, while a request whose head is in may stay quiet for longer; and a
# storm of connections that fills the public socket's queue leaves root's own socket answering.
# Round four: on TCP (--token-file) a flood of requests' heads sent a line every 2 s from 200
# loopback addresses neither locks a token holder out nor stays open; bodies sent without the
# token are answered 401 before they are read (the server does not grow); a body over 1 MiB, or
# beyond 64 MiB held at once, is refused at once; on the unix socket another user's submission
# is refused before its body, a head that trickles is closed after 5 s whatever it sends, and
# the uids of the test user's /etc/subuid range count as its own: 14 of them hold 64
# connections, not 800, and every other user is still answered.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

plan 36

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

# ---- round four: a server on the unix socket and on TCP with a token
TOKEN_FILE=$TEST_SCRATCH/token
head -c 32 /dev/urandom | base64 >"$TOKEN_FILE"
chmod 600 "$TOKEN_FILE"
TOKEN=$(cat "$TOKEN_FILE")
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start_server 30 --listen "unix:$SOCK" --listen "tcp:127.0.0.1:$PORT" --token-file "$TOKEN_FILE"
ok $? "a server on the unix socket and on TCP with a token" || diag "$(cat "$SRV_ERR")"
tok_get() { curl -s -o /dev/null -w '%{http_code}' --max-time 4 -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/v1/runs"; }
rss_mb() { awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$SRV/status"; }

# the test user's TCP connections, from 200 addresses of loopback: "slow" sends a request's head
# a line every 2 s; "body" sends heads of 1 MB bodies without the token, then (to those not
# answered at once) 900 kB of each and a byte every 2 s. At the end: how many the server still
# held, how many it answered
cat >"$TEST_SCRATCH/tcp_flood.py" <<'PY'
import resource, select, socket, sys, time
mode, port, n, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 64), hard))
head = (b"GET /v1/runs HTTP/1.1\r\nHost: warren\r\n" if mode == "slow" else
        b"POST /v1/runs HTTP/1.1\r\nHost: warren\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
socks, answered = [], {}
for i in range(n):
    s = socket.socket()
    try:
        s.bind(("127.0.0.%d" % (2 + i % 200), 0))
        s.settimeout(3)
        s.connect(("127.0.0.1", port))
        s.sendall(head)
        socks.append(s)
    except OSError:
        s.close()
print("opened", len(socks), flush=True)
def look(s):
    s.setblocking(False)
    try:
        d = s.recv(4096)
        if d.startswith(b"HTTP/1.1 "):
            answered[s] = d
        return "closed" if not d or s in answered else "held"
    except BlockingIOError:
        return "held"
    except OSError:
        return "closed"
if mode == "body":
    time.sleep(2)
    body = b"x" * 900000
    for s in socks:
        if look(s) == "held":
            s.setblocking(True); s.settimeout(2)
            try: s.sendall(body)
            except OSError: pass
    print("sent", flush=True)
end, k = time.time() + secs, 0
while time.time() < end:
    for s in socks:
        if s not in answered:
            try: s.send(b"X-%d: y\r\n" % k if mode == "slow" else b"x")
            except OSError: pass
    k += 1
    time.sleep(2)
held = sum(1 for s in socks if look(s) == "held")
print("held", held, "answered", len(answered), flush=True)
PY
chmod 644 "$TEST_SCRATCH/tcp_flood.py"
start_bg timeout -k 2 60 "${AS_USER[@]}" /usr/bin/python3 "$TEST_SCRATCH/tcp_flood.py" slow "$PORT" 1000 12
FLOOD=$BG_PID
wait_for 30 grep -qs '^opened' "$BG_OUT"
codes=
for _ in 1 2 3; do
	sleep 2
	codes+="$(tok_get) "
done
is "$codes" "200 200 200 " "TCP: a token holder is answered while the test user sends 1000 requests' heads a line every 2 s (from 200 loopback addresses)"
wait_bg "$FLOOD" 40
like "$(tail -1 "$BG_OUT")" "^held 0 " "... none of those connections is still open 12 s on (beyond 64 without the token its oldest closed; each head had 5 s)"
diag "$(cat "$BG_OUT")"

base=$(rss_mb)
start_bg timeout -k 2 60 "${AS_USER[@]}" /usr/bin/python3 "$TEST_SCRATCH/tcp_flood.py" body "$PORT" 300 4
FLOOD=$BG_PID
wait_for 40 grep -qs '^sent' "$BG_OUT"
sleep 1
grown=$(($(rss_mb) - base))
wait_bg "$FLOOD" 40
like "$(tail -1 "$BG_OUT")" "^held 0 answered 300$" "TCP: 300 requests with 1 MB bodies and no token are answered before their bodies (401), none held"
ok "$((grown < 100 ? 0 : 1))" "... the server did not take their bodies in (it grew ${grown} MB, less than 100)"

# bodies of those who may send them: one over 1 MiB, or beyond 64 MiB held at once, is refused
# at once (its head says its length), not read first
cat >"$TEST_SCRATCH/bodies.py" <<'PY'
import select, socket, sys, time
port, token = int(sys.argv[1]), sys.argv[2]
def post(length):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/runs HTTP/1.1\r\nHost: warren\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (token.encode(), length))
    return s
def answer(s):
    s.settimeout(3)
    try:
        return s.recv(4096).split(b" ")[1].decode()
    except (OSError, IndexError):
        return "none"
out = ["big", answer(post(5000000))]
# the server reads heads in the order it sees them, not the order sent: which of the 65 is
# refused may vary, so every answer that comes within 3 s is counted
socks = [post(1 << 20) for _ in range(65)]
codes, end = [], time.time() + 3
pending = list(socks)
while pending and time.time() < end:
    ready, _, _ = select.select(pending, [], [], max(0.0, end - time.time()))
    for s in ready:
        pending.remove(s)
        try:
            codes.append(s.recv(4096).split(b" ")[1].decode())
        except (OSError, IndexError):
            codes.append("closed")
out += ["of65", ",".join(sorted(codes)) or "none"]
print(" ".join(out))
PY
bounded /usr/bin/python3 "$TEST_SCRATCH/bodies.py" "$PORT" "$TOKEN"
is "$OUT" "big 413 of65 503" "TCP with the token: a body over 1 MiB is refused at once (413); of 65 of 1 MiB sent at once, 64 are held and one is refused (503)"
api POST /v1/runs "{\"command\":[\"true\"],\"worktree\":\"$WORK\"}"
is "$CODE" 201 "... once those connections closed, a submission is taken again"

# the unix socket: another user's submission is refused before its body; a head that trickles
# is closed after 5 s, whatever it sends
cat >"$TEST_SCRATCH/unix_head.py" <<'PY'
import socket, sys, time
path, mode = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.connect(path)
if mode == "body":
    s.sendall(b"POST /v1/runs HTTP/1.1\r\nHost: warren\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
    s.settimeout(3)
    try:
        print(s.recv(4096).split(b"\r\n")[0].decode())
    except OSError:
        print("no answer")
    sys.exit(0)
s.sendall(b"GET /v1/runs HTTP/1.1\r\n")
t0 = time.time()
s.setblocking(False)
while time.time() - t0 < 10:
    try:
        d = s.recv(4096)
        print("closed after %d s: %s" % (time.time() - t0, d.split(b"\r\n")[0].decode() or "nothing"))
        sys.exit(0)
    except BlockingIOError:
        pass
    except OSError:
        print("closed after %d s: reset" % (time.time() - t0)); sys.exit(0)
    try: s.send(b"X-Line: more\r\n")
    except OSError: pass
    time.sleep(1)
print("open after 10 s")
PY
chmod 644 "$TEST_SCRATCH/unix_head.py"
bounded "${AS_USER[@]}" /usr/bin/python3 "$TEST_SCRATCH/unix_head.py" "$SOCK" body
is "$OUT" "HTTP/1.1 403 Forbidden" "unix socket: the test user's submission with a body of 1 MB is refused (403) before its body"
bounded "${AS_USER[@]}" /usr/bin/python3 "$TEST_SCRATCH/unix_head.py" "$SOCK" trickle
like "$OUT" "^closed after [5-7] s: HTTP/1.1 408 Request Timeout$" "... a head sent a line a second is closed after 5 s, told 408"

# the test user's subordinate uids (/etc/subuid, newuidmap): 14 uids of its user namespace, 64
# connections each, half-sent heads
cat >"$TEST_SCRATCH/subuid_flood.py" <<'PY'
import os, select, socket, sys, time
path, nuids, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
kids = []
for u in range(1, nuids + 1):
    r, w = os.pipe()
    if os.fork() == 0:
        os.close(r)
        os.setgid(u); os.setuid(u)
        socks = []
        for i in range(per):
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(path); s.sendall(b"GET /v1/runs HTTP/1.1\r\nHost: warren\r\n"); socks.append(s)
            except OSError:
                pass
        os.write(w, b"o")
        # those answered within 2.5 s (503) and those held (a head has 5 s)
        held, told, line, end = set(socks), 0, "", time.time() + 2.5
        while held and time.time() < end:
            for s in select.select(list(held), [], [], max(0, end - time.time()))[0]:
                held.discard(s)
                try:
                    d = s.recv(4096)
                except OSError:
                    d = b""
                if d.startswith(b"HTTP/1.1 503"):
                    told += 1; line = d.split(b"\r\n\r\n", 1)[-1].decode().strip()
        os.write(w, ("%d %d %s\n" % (len(held), told, line)).encode())
        os._exit(0)
    os.close(w)
    kids.append(r)
for r in kids:
    os.read(r, 1)
print("opened", flush=True)
held = told = 0
line = ""
for r in kids:
    h, t, l = os.read(r, 4096).decode().split(" ", 2)
    held += int(h); told += int(t); line = l.strip() or line
print("held", held, "told", told, flush=True)
print(line, flush=True)
for _ in kids:
    os.wait()
PY
chmod 644 "$TEST_SCRATCH/subuid_flood.py"
sub=$(awk -F: -v u="$TEST_USER" -v id="$TEST_USER_UID" '($1 == u || $1 == id) && $3 >= 100 { print $2 ":" $3; exit }' /etc/subuid 2>/dev/null)
if [ -z "$sub" ] || [ ! -u "$(command -v newuidmap)" ] || ! unshare --help | grep -q -- --map-users; then
	skip 3 "the host gives $TEST_USER no subordinate uids (/etc/subuid, a setuid newuidmap, unshare --map-users)"
else
	start_bg timeout -k 2 30 "${AS_USER[@]}" unshare -U --map-root-user --map-users="${sub%:*},1,$((${sub#*:} - 1))" \
		--map-groups="${sub%:*},1,$((${sub#*:} - 1))" /usr/bin/python3 "$TEST_SCRATCH/subuid_flood.py" "$SOCK" 14 64
	FLOOD=$BG_PID
	wait_for 20 grep -qs '^opened' "$BG_OUT"
	sleep 0.5
	other=$(setpriv --reuid=65534 --regid=65534 --clear-groups curl -s -o /dev/null -w '%{http_code}' --max-time 3 --unix-socket "$SOCK" http://warren/v1/runs)
	wait_bg "$FLOOD" 30
	is "$(sed -n 2p "$BG_OUT")" "held 64 told 832" "unix socket: 14 subordinate uids of the test user hold 64 connections between them (the rest told 503)"
	like "$(sed -n 3p "$BG_OUT")" "\"uid 1[0-9]+ is uid $TEST_USER_UID's \(/etc/subuid\), whose uids hold 64 connections to warren serve, its most" "... each told its uid is the test user's"
	is "$other" 200 "... meanwhile another user (uid 65534) is answered"
fi

stop_server 60
is "$RC" 0 "... the server stops cleanly"
