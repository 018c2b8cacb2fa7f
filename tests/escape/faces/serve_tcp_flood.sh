#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# serve_tcp_flood.sh MODE - issue 31, round four: `warren serve --listen tcp:127.0.0.1:PORT
# --token-file FILE` keeps answering a token holder under a flood from another local user who
# has no token (every local user reaches a TCP port on loopback). The flooder opens 1 000
# connections from 200 addresses of loopback and sends each a request's head a line every 2 s
# (libmicrohttpd's timeout is of silence: it never fires); a token holder must be answered three
# times out of three, and 12 s on the server must hold none of the flood's. Then 300 requests
# with 1 MB bodies and no token: the server must answer them before their bodies (401) and not
# grow by their bodies (it held ~1 GB for 1 000 of them).
# Modes: root (a root server; the test user floods), user (the test user's server; uid 65534
# floods). Environment: WARREN, SCRATCH (or TEST_SCRATCH), TEST_USER (default warren-test).
# Last line: serve_tcp_flood: held | ESCAPED: WHAT | untested: WHY
set -u
CLASS=serve_tcp_flood
MODE=${1:-}
say() { echo "$CLASS: $*"; exit 0; }
note() { echo "# $*"; }
case $MODE in
root | user) ;;
image | vm) say "untested: the server's connections are the same whatever makes the cells (see root and user)" ;;
*) say "untested: unknown mode '$MODE' (give root, user, image or vm)" ;;
esac
[ "$(id -u)" = 0 ] || say "untested: run as root (it starts the server and the flood as two users)"
[ -x "${WARREN:-}" ] || say "untested: no warren binary in WARREN"
command -v curl >/dev/null || say "untested: curl is needed"
[ -x /usr/bin/python3 ] || say "untested: /usr/bin/python3 is needed"
base=${SCRATCH:-${TEST_SCRATCH:-}}
[ -d "$base" ] || say "untested: no scratch directory in SCRATCH"
user=${TEST_USER:-warren-test}
uid=$(id -u "$user" 2>/dev/null) || say "untested: no user $user"
gid=$(id -g "$user")
if [ "$MODE" = root ]; then
	as_srv=() as_flood=(setpriv --reuid="$uid" --regid="$gid" --clear-groups) who="uid $uid"
else
	as_srv=(setpriv --reuid="$uid" --regid="$gid" --clear-groups) as_flood=(setpriv --reuid=65534 --regid=65534 --clear-groups) who="uid 65534"
fi
D=$(mktemp -d -p "$base" serve_tcp_flood.XXXXXX) || say "untested: mktemp failed"
chmod 755 "$D"
srv='' flood=''
cleanup() {
	[ -n "$flood" ] && kill -TERM "$flood" 2>/dev/null && wait "$flood" 2>/dev/null
	if [ -n "$srv" ]; then
		kill -TERM "$srv" 2>/dev/null
		for _ in $(seq 1 100); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
	fi
	rm -rf --one-file-system -- "$D"
}
trap cleanup EXIT
mkdir -p "$D/state"
head -c 32 /dev/urandom | base64 >"$D/token"
chmod 600 "$D/token"
[ "$MODE" = user ] && chown -R "$uid:$gid" "$D/state" "$D/token"
TOKEN=$(cat "$D/token")
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
tok_get() { curl -s -o /dev/null -w '%{http_code}' --max-time "$1" -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/v1/runs"; }
rss_mb() { awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$srv/status"; }

"${as_srv[@]}" "$WARREN" serve --state "$D/state" --listen "tcp:127.0.0.1:$PORT" --token-file "$D/token" >"$D/serve.log" 2>&1 &
srv=$!
for _ in $(seq 1 150); do [ "$(tok_get 1)" = 200 ] && break; sleep 0.1; done
[ "$(tok_get 2)" = 200 ] || say "untested: warren serve did not answer a token holder ($(tail -1 "$D/serve.log"))"

cat >"$D/tcp_flood.py" <<'PY'
import resource, socket, sys, time
mode, port, n, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 64), hard))
head = (b"GET /v1/runs HTTP/1.1\r\nHost: warren\r\n" if mode == "slow" else
        b"POST /v1/runs HTTP/1.1\r\nHost: warren\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
socks, answered = [], set()
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
            answered.add(s)
        return "closed" if not d or s in answered else "held"
    except BlockingIOError:
        return "held"
    except OSError:
        return "closed"
if mode == "body":
    time.sleep(2)
    for s in socks:
        if look(s) == "held":
            s.setblocking(True); s.settimeout(2)
            try: s.sendall(b"x" * 900000)
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
print("held", sum(1 for s in socks if look(s) == "held"), "answered", len(answered), flush=True)
PY
chmod 644 "$D/tcp_flood.py"

# heads a line every 2 s
timeout -k 2 60 "${as_flood[@]}" /usr/bin/python3 "$D/tcp_flood.py" slow "$PORT" 1000 12 >"$D/flood.out" 2>&1 &
flood=$!
for _ in $(seq 1 300); do grep -qs '^opened' "$D/flood.out" && break; kill -0 "$flood" 2>/dev/null || break; sleep 0.1; done
grep -q '^opened' "$D/flood.out" || say "untested: the flood did not start ($(tail -1 "$D/flood.out"))"
note "$who: $(head -1 "$D/flood.out") connections from 200 loopback addresses, each a request's head sent a line every 2 s"
codes=
for _ in 1 2 3; do
	sleep 2
	codes+="$(tok_get 4) "
done
note "a token holder's GET /v1/runs under the flood: $codes"
[ "$codes" = "200 200 200 " ] || say "ESCAPED: a token holder was turned away ($codes) while $who held 1000 requests' heads"
wait "$flood"
flood=
held=$(sed -n 's/^held \([0-9]*\) .*/\1/p' "$D/flood.out")
note "the flood's connections still open 12 s on: ${held:-?}"
[ "${held:-x}" = 0 ] || say "ESCAPED: the server still held ${held:-?} of $who's requests' heads after 12 s"

# bodies without the token
before=$(rss_mb)
timeout -k 2 60 "${as_flood[@]}" /usr/bin/python3 "$D/tcp_flood.py" body "$PORT" 300 4 >"$D/flood.out" 2>&1 &
flood=$!
for _ in $(seq 1 400); do grep -qs '^sent' "$D/flood.out" && break; kill -0 "$flood" 2>/dev/null || break; sleep 0.1; done
sleep 1
grown=$(($(rss_mb) - before))
wait "$flood"
flood=
note "300 requests with 1 MB bodies and no token: $(tail -1 "$D/flood.out"); the server grew ${grown} MB"
[ "$grown" -lt 100 ] || say "ESCAPED: the server took in the bodies of $who's requests without the token (it grew ${grown} MB)"
grep -q '^held 0 ' "$D/flood.out" || say "ESCAPED: the server held $who's requests with bodies and no token ($(tail -1 "$D/flood.out"))"
[ "$(tok_get 3)" = 200 ] || say "ESCAPED: a token holder was not answered after the floods"
say held
