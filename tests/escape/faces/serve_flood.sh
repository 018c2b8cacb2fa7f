#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# serve_flood.sh MODE - issue 31, class 7: a root `warren serve` keeps answering root under a
# flood of half-sent requests from another local user (its unix socket is open to all: every
# user reaches it). The test user opens 1 100 connections and sends each a request's first line and
# a header but never its end (libmicrohttpd's cap was 1 000 connections, each kept 300 s); then
# root asks /healthz and must be answered within 3 s; and 8 s later the server has refused
# or timed out every one of the flood's connections. Then a storm of connections made as fast
# as two processes can fills the public socket's queue in the kernel: root's requests on its
# own socket (<state>/serve/own.sock) must all be answered. Last, the test user's subordinate
# uids (its /etc/subuid range, through the setuid newuidmap): 14 uids of its user namespace open
# 64 half-sent requests each; they must count as the test user's (64 held between them, not the
# 800 of all other users), and another user (uid 65534) must still be answered.
# Environment: WARREN, SCRATCH (or TEST_SCRATCH), TEST_USER (default warren-test). Last line:
# serve_flood: held | ESCAPED: WHAT | untested: WHY
set -u
CLASS=serve_flood
MODE=${1:-}
N=1100
say() { echo "$CLASS: $*"; exit 0; }
note() { echo "# $*"; }
case $MODE in
root) ;;
user) say "untested: a rootless server's socket is its user's alone (made under umask 0077): no other user reaches it" ;;
image | vm) say "untested: the server's connections are the same whatever makes the cells (see root)" ;;
*) say "untested: unknown mode '$MODE' (give root, user, image or vm)" ;;
esac
[ "$(id -u)" = 0 ] || say "untested: run as root (a root server, flooded by another user)"
[ -x "${WARREN:-}" ] || say "untested: no warren binary in WARREN"
command -v curl >/dev/null || say "untested: curl is needed"
[ -x /usr/bin/python3 ] || say "untested: /usr/bin/python3 is needed"
base=${SCRATCH:-${TEST_SCRATCH:-}}
[ -d "$base" ] || say "untested: no scratch directory in SCRATCH"
user=${TEST_USER:-warren-test}
uid=$(id -u "$user" 2>/dev/null) || say "untested: no user $user"
gid=$(id -g "$user")
# short: <D>/state/serve/own.sock must fit a socket address (108 bytes)
D=$(mktemp -d -p "$base" sf.XXXXXX) || say "untested: mktemp failed"
chmod 755 "$D"
srv='' flood=''
cleanup() {
	# shellcheck disable=SC2086 # one pid or more
	[ -n "$flood" ] && kill -TERM $flood 2>/dev/null && wait $flood 2>/dev/null
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
chmod 755 "$D/state"
SOCK=$D/api.sock
healthz() { curl -s -o /dev/null -w '%{http_code}' --max-time "$1" --unix-socket "$SOCK" http://warren/healthz; }

"$WARREN" serve --state "$D/state" --listen "unix:$SOCK" >"$D/serve.log" 2>&1 &
srv=$!
for _ in $(seq 1 150); do [ "$(healthz 1)" = 200 ] && break; sleep 0.1; done
[ "$(healthz 2)" = 200 ] || say "untested: warren serve did not answer /healthz ($(tail -1 "$D/serve.log"))"
[ $((0$(stat -c %a "$SOCK") & 02)) != 0 ] || say "untested: others may not connect to the server's socket (mode $(stat -c %a "$SOCK"))"

# the flood: N connections, each sent a request's head without its end, held 8 s; then how
# many the server still held (neither answered nor closed)
cat >"$D/flood.py" <<'PY'
import resource, socket, sys, time
path, n, hold = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 64), hard))
socks = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)  # waits while the listen queue is full (the caller bounds it)
        s.settimeout(5)
        s.sendall(b"GET /v1/runs HTTP/1.1\r\nHost: warren\r\n")
    except OSError:
        pass
    socks.append(s)
print("opened", len(socks), flush=True)
time.sleep(hold)
held = 0
for s in socks:
    s.setblocking(False)
    try:
        s.recv(4096)
    except BlockingIOError:
        held += 1
    except OSError:
        pass
print("held", held, flush=True)
PY
chmod 644 "$D/flood.py"
timeout -k 2 60 setpriv --reuid="$uid" --regid="$gid" --clear-groups /usr/bin/python3 "$D/flood.py" "$SOCK" "$N" 8 >"$D/flood.out" 2>&1 &
flood=$!
for _ in $(seq 1 300); do grep -qs '^opened' "$D/flood.out" && break; kill -0 "$flood" 2>/dev/null || break; sleep 0.1; done
grep -q '^opened' "$D/flood.out" || say "untested: the flood did not start ($(tail -1 "$D/flood.out"))"
note "uid $uid: $(head -1 "$D/flood.out") connections, each a half-sent request"
t0=$(date +%s%N)
code=$(healthz 3)
ms=$((($(date +%s%N) - t0) / 1000000))
note "root's GET /healthz under the flood: HTTP $code in ${ms} ms"
[ "$code" = 200 ] || say "ESCAPED: root's request was turned away (HTTP ${code:-none}) while uid $uid held $N half-sent requests"
wait "$flood"
flood=
held=$(sed -n 's/^held //p' "$D/flood.out")
note "the flood's connections still held by the server after 8 s: ${held:-?}"
[ "${held:-x}" = 0 ] || say "ESCAPED: the server still held ${held:-?} of uid $uid's half-sent requests after 8 s"
[ "$(healthz 3)" = 200 ] || say "ESCAPED: root's request was not answered after the flood"

# a storm: two processes of the test user connect as fast as they can for 6 s (each connection
# sent half a request, closed a moment later), so that the kernel's queue of the public socket
# is full more often than not; root asks on its own socket (<state>/serve/own.sock), which no
# other user reaches (on the public one when there is none)
cat >"$D/storm.py" <<'PY'
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
chmod 644 "$D/storm.py"
storm=()
for _ in 1 2; do
	timeout -k 2 20 setpriv --reuid="$uid" --regid="$gid" --clear-groups /usr/bin/python3 "$D/storm.py" "$SOCK" 6 &
	storm+=($!)
done
flood="${storm[*]}"
OWN=$D/state/serve/own.sock
[ -S "$OWN" ] || OWN=$SOCK
sleep 1
bad=0
for _ in $(seq 1 8); do
	[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 --unix-socket "$OWN" http://warren/healthz)" = 200 ] || bad=$((bad + 1))
	sleep 0.4
done
wait "${storm[@]}"
flood=
note "root's GET /healthz on ${OWN##*/} under a storm of connections: $((8 - bad)) of 8 answered"
[ "$bad" = 0 ] || say "ESCAPED: under a storm of uid $uid's connections root's requests on ${OWN##*/} were turned away $bad of 8 times"

# the test user's subordinate uids
sub=$(awk -F: -v u="$user" -v id="$uid" '($1 == u || $1 == id) && $3 >= 100 { print $2 ":" $3; exit }' /etc/subuid 2>/dev/null)
if [ -z "$sub" ] || [ ! -u "$(command -v newuidmap)" ] || ! unshare --help | grep -q -- --map-users; then
	note "$user has no subordinate uids here (/etc/subuid, a setuid newuidmap, unshare --map-users): no uids of its own to flood with"
	say held
fi
cat >"$D/subuid.py" <<'PY'
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
chmod 644 "$D/subuid.py"
map="${sub%:*},1,$((${sub#*:} - 1))"
timeout -k 2 30 setpriv --reuid="$uid" --regid="$gid" --clear-groups unshare -U --map-root-user --map-users="$map" --map-groups="$map" \
	/usr/bin/python3 "$D/subuid.py" "$SOCK" 14 64 >"$D/subuid.out" 2>&1 &
flood=$!
for _ in $(seq 1 200); do grep -qs '^opened' "$D/subuid.out" && break; kill -0 "$flood" 2>/dev/null || break; sleep 0.1; done
grep -q '^opened' "$D/subuid.out" || say "untested: the flood of subordinate uids did not start ($(tail -1 "$D/subuid.out"))"
sleep 0.5
code=$(setpriv --reuid=65534 --regid=65534 --clear-groups curl -s -o /dev/null -w '%{http_code}' --max-time 3 --unix-socket "$SOCK" http://warren/v1/runs)
wait "$flood"
flood=
held=$(sed -n 's/^held \([0-9]*\) .*/\1/p' "$D/subuid.out")
note "14 subordinate uids of uid $uid (${sub%:*}...), 64 half-sent requests each: the server held $held; uid 65534's GET /v1/runs meanwhile: HTTP $code"
[ "${held:-999}" -le 64 ] || say "ESCAPED: uid $uid's subordinate uids held $held connections, beyond its 64"
[ "$code" = 200 ] || say "ESCAPED: another user (uid 65534) was turned away (HTTP ${code:-none}) while uid $uid's subordinate uids held $held connections"
say held
