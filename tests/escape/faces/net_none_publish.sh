#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# net_none_publish.sh MODE - issue 31, class 9: `--net none --publish H:C` gave the cell the
# internet (an explicit --net none was taken for the default, which --publish turns into nat).
# What was asked must hold: the published port answers, and nothing the cell starts goes out.
# A run with --net none and --publish (both orders of the options) serves a page on its
# published port and meanwhile tries the world's upstream host by TCP and UDP; the upstream
# logs what reaches it. First a --net nat run must reach the upstream (else the world is
# broken and nothing is proved).
#
# The world is the script's own: it re-runs itself in a network and mount namespace of its own
# (a tmpfs over /run/warren, warren's host-wide lease directory), with an "upstream" namespace
# behind a veth (198.51.100.2; 203.0.113.10 serves TCP :8080 and logs UDP :5353). Nothing is sent
# beyond these namespaces. MODE: root | user (warren run by warren-test, rootless: pasta) |
# image | vm. Environment: WARREN, SCRATCH (or TEST_SCRATCH), TEST_USER (default warren-test).
# Last line: net_none_publish: held | ESCAPED: WHAT | untested: WHY
set -u
CLASS=net_none_publish
MODE=${1:-}
say() { echo "$CLASS: $*"; exit 0; }
note() { echo "# $*"; }
case $MODE in
root | user) ;;
image) say "untested: an image changes the cell's root, not its network (see root and user)" ;;
vm) say "untested: not run here: a VM's network is the root mode's bridge and firewall (rootless VMs refuse --publish)" ;;
*) say "untested: unknown mode '$MODE' (give root, user, image or vm)" ;;
esac
[ "$(id -u)" = 0 ] || say "untested: run as root (it builds network namespaces; mode user runs warren as the test user)"
[ -x "${WARREN:-}" ] || say "untested: no warren binary in WARREN"
for c in curl ip unshare nsenter setpriv; do
	command -v "$c" >/dev/null || say "untested: $c is needed"
done
PY=/usr/bin/python3 # the system's: a wrapper on PATH (pyenv's) would outlive a kill of its pid
[ -x "$PY" ] || say "untested: $PY is needed"
[ "$MODE" = user ] && ! command -v pasta >/dev/null && say "untested: rootless networks need pasta (Debian package passt)"
base=${SCRATCH:-${TEST_SCRATCH:-}}
[ -d "$base" ] || say "untested: no scratch directory in SCRATCH"

if [ -z "${NNP_WORLD:-}" ]; then
	unshare --net --mount --propagation private true 2>/dev/null || say "untested: cannot make network and mount namespaces"
	exec env NNP_WORLD=1 unshare --net --mount --propagation private bash "$0" "$@"
fi

# ---- in the world's namespaces
user=${TEST_USER:-warren-test}
D=$(mktemp -d -p "$base" net_none_publish.XXXXXX) || say "untested: mktemp failed"
chmod 755 "$D"
UP='' pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	[ -n "$UP" ] && kill -KILL "$UP" 2>/dev/null && wait "$UP" 2>/dev/null
	rm -rf --one-file-system -- "$D"
}
trap cleanup EXIT
mount -t tmpfs -o mode=0755 nnp /run/warren 2>/dev/null || { mkdir -p /run/warren && mount -t tmpfs -o mode=0755 nnp /run/warren; } ||
	say "untested: cannot mount a tmpfs on /run/warren in the world"
ip link set lo up
unshare --net sleep 600 </dev/null >/dev/null 2>&1 &
UP=$!
for _ in $(seq 1 50); do [ "$(readlink /proc/$UP/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break; sleep 0.1; done
upns() { nsenter -t "$UP" -n "$@"; }
ip link add up0 type veth peer name up1 netns "$UP" || say "untested: cannot make the upstream's veth"
ip addr add 198.51.100.1/24 dev up0 && ip link set up0 up
upns ip link set lo up
upns ip addr add 198.51.100.2/24 dev up1 && upns ip link set up1 up
upns ip addr add 203.0.113.10/32 dev lo
ip route add 203.0.113.0/24 via 198.51.100.2
if [ "$MODE" = user ]; then
	ip route add default via 198.51.100.2 # pasta wants a routable interface; this one ends upstream
	mknod -m 666 "$D/tun" c 10 200 && mount --bind "$D/tun" /dev/net/tun || say "untested: cannot give the world a /dev/net/tun"
fi
mkdir -p "$D/up"
echo "this is upstream" >"$D/up/index.html"
nsenter -t "$UP" -n "$PY" -m http.server --bind 203.0.113.10 --directory "$D/up" 8080 </dev/null >/dev/null 2>"$D/tcp.log" &
pids+=($!)
nsenter -t "$UP" -n "$PY" -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("203.0.113.10", 5353))
while True:
    d, a = s.recvfrom(2048); open(sys.argv[1], "a").write("%s:%d\n" % a)' "$D/udp.log" </dev/null >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 50); do curl -s -m 1 -o /dev/null http://203.0.113.10:8080/ && break; sleep 0.1; done
: >"$D/tcp.log"

RUN=()
mkdir -p "$D/work" "$D/state"
chmod 755 "$D/work" "$D/state"
if [ "$MODE" = user ]; then
	uid=$(id -u "$user" 2>/dev/null) || say "untested: no user $user"
	gid=$(id -g "$user")
	chown "$uid:$gid" "$D/work" "$D/state"
	RUN=(setpriv --reuid="$uid" --regid="$gid" --init-groups env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent USER="$user")
fi
W=$D/work
wr() { timeout -k 5 60 "${RUN[@]}" "$WARREN" run --state "$D/state" --work "$W" "$@"; }

# the world works: nat reaches the upstream (TCP and UDP)
out=$(wr --net nat -- sh -c 'curl -s -m 3 http://203.0.113.10:8080/; /usr/bin/python3 -c "import socket; socket.socket(2, 2).sendto(b\"x\", (\"203.0.113.10\", 5353))"' 2>&1)
sleep 0.5
[ "$out" = "this is upstream" ] && [ -s "$D/udp.log" ] ||
	say "untested: the world is broken: --net nat does not reach the upstream either ($(head -c 200 <<<"$out"))"
: >"$D/tcp.log"
: >"$D/udp.log"

# one run of --net none with --publish (options in the order given): it serves on the cell's
# 8000 and tries the upstream; the host fetches the published port meanwhile
CELL='/usr/bin/python3 -m http.server --bind 0.0.0.0 8000 >/dev/null 2>&1 &
for i in 1 2 3; do curl -s -m 2 -o /dev/null http://203.0.113.10:8080/; /usr/bin/python3 -c "import socket; socket.socket(2, 2).sendto(b\"x\", (\"203.0.113.10\", 5353))" 2>/dev/null; done
touch ready; i=0; while [ ! -e done ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done; kill $!'
escaped=() served=0 refused=0
try() {
	local port=$1 p rc rd mode
	shift
	rm -f "$W/ready" "$W/done"
	echo "published" >"$W/index.html"
	wr "$@" -- sh -c "$CELL" >"$D/run.out" 2>"$D/run.err" &
	p=$!
	for _ in $(seq 1 300); do [ -e "$W/ready" ] || ! kill -0 "$p" 2>/dev/null && break; sleep 0.1; done
	for _ in $(seq 1 50); do # the cell's server may still be starting
		[ "$(curl -s -m 3 "http://127.0.0.1:$port/index.html")" = published ] && served=$((served + 1)) && break
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	touch "$W/done"
	wait "$p"
	rc=$?
	rd=$(ls -d "$D/state/runs/"run_* 2>/dev/null | sort | tail -1)
	mode=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("network", {}).get("mode"))' "$rd/result.json" 2>/dev/null)
	[ "$rc" = 125 ] && refused=$((refused + 1)) && mode=- && note "$*: refused: $(head -1 "$D/run.err")"
	sleep 0.5
	[ -s "$D/tcp.log" ] && escaped+=("$* reached 203.0.113.10:8080 by TCP (the record says mode ${mode:-?})")
	[ -s "$D/udp.log" ] && escaped+=("$* sent UDP to 203.0.113.10:5353 (the record says mode ${mode:-?})")
	note "$*: exit $rc, record mode ${mode:-none}"
	: >"$D/tcp.log"
	: >"$D/udp.log"
}
try 18301 --net none --publish 18301:8000
try 18302 --publish 18302:8000 --net none
note "the published port answered in $served of 2 runs; $refused of 2 were refused"
[ ${#escaped[@]} -gt 0 ] && say "ESCAPED: $(IFS=';'; echo "${escaped[*]}")"
say "held"
