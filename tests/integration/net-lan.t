#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# net-lan.t - what --net nat reaches: the internet through the uplink, but neither the host's
# own addresses nor the private and link-local ranges unless asked (nat,lan; nat,allow=ADDR;
# an address of allow=LIST; lan,allow= for names that resolve to private addresses), as root
# and rootless (pasta). In the world of net_world_up (lib.sh): the "LAN" servers live in the
# test's own internet namespace, never at a real private address.
[ -n "${WARREN_NET_WORLD:-}" ] || exec env WARREN_NET_WORLD=1 unshare --net --mount --propagation private bash "$0" "$@"
. "$(dirname "$0")/../lib.sh"

net_world_up
plan 52

CURL="curl -s -m 3"
# probe: one line NAME=curl's exit status per destination (0: reached, 7: refused)
probe() {
	local d sep=
	for d in "$@"; do
		printf '%s%s -o /dev/null http://%s/; echo %s=$?' "$sep" "$CURL" "${d#*=}" "${d%%=*}"
		sep='; '
	done
}
LAN="a10=10.20.30.40:8090 a172=172.16.5.5:8090 a192=192.168.50.5:8090 a100=100.64.7.7:8090"
OTHER="pub=203.0.113.10:8080 host=192.168.200.1:8081 gw=10.88.0.1:8081 meta=169.254.169.254:80"
ALL="$LAN $OTHER"
# reached OUT: the names of the destinations reached, sorted, one line
reached() { grep -E '^[a-z0-9]+=0$' <<<"$1" | cut -d= -f1 | sort | tr '\n' ' '; }

# the host's loopback: a listener on the world's 127.0.0.1 (UDP and TCP) logs what reaches it;
# the cell sends to 127.0.0.1 from sockets bound to eth0 (SO_BINDTODEVICE needs no privilege)
LO_PORT=18123
cat >"$W/lo-listen.py" <<'EOF2'
import select, socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(('127.0.0.1', int(sys.argv[1])))
t = socket.socket()
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(('127.0.0.1', int(sys.argv[1])))
t.listen()
with open(sys.argv[2], 'a') as log:
    while True:
        for s in select.select([u, t], [], [])[0]:
            if s is u:
                print('udp', u.recvfrom(100)[0].decode(errors='replace'), file=log, flush=True)
            else:
                s.accept()[0].close()
                print('tcp', file=log, flush=True)
EOF2
cat >"$W/lo-probe.py" <<'EOF2'
import socket, sys
for kind in socket.SOCK_DGRAM, socket.SOCK_STREAM:
    s = socket.socket(socket.AF_INET, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b'eth0')
    s.settimeout(2)
    try:
        if kind == socket.SOCK_DGRAM:
            s.sendto(b'from-the-cell', ('127.0.0.1', int(sys.argv[1])))
        else:
            s.connect(('127.0.0.1', int(sys.argv[1])))
        print('sent' if kind == socket.SOCK_DGRAM else 'connected')
    except OSError as e:
        print('error', e)
EOF2
start_bg python3 "$W/lo-listen.py" "$LO_PORT" "$W/lo.log"
wait_for 10 sh -c "ss -Hltn src 127.0.0.1 | grep -q :$LO_PORT" || bail_out "the loopback listener did not start"

use_mode root

# ---------------------------------------------------------------- nat: not the LAN
wrun --net nat -- sh -c "$(probe $ALL)"
RD=$(last_rundir); ID=$(basename "$RD")
is "$RC" 0 "nat: the run ends well"
is "$(reached "$OUT")" "pub " "nat: only the public address is reached (not 10/8, 172.16/12, 192.168/16, 100.64/10, the host, the gateway, 169.254/16)"
is "$(grep -c '=7$' <<<"$OUT")" 7 "nat: each refused connection is reset at once (curl: could not connect)"
is "$(jget "$RD/result.json" 'sorted(x["dest"] for x in d["network"]["refused"])')" \
	'["10.20.30.40:8090", "10.88.0.1:8081", "100.64.7.7:8090", "169.254.169.254:80", "172.16.5.5:8090", "192.168.200.1:8081", "192.168.50.5:8090"]' \
	"nat: every refusal is in result.json"
is "$(jget "$RD/result.json" 'd["network"]["lan"]')" false "nat: the record says lan is off"
line_like "$ERR" "^warren: $ID refused 7 connections to .*private and link-local ranges.*--net nat,lan" "nat: the end line names the private ranges and the way to reach them"
is "$(net_left "$ID")" "" "nat: nothing of the run is left"

# the host's loopback, from a socket bound to eth0: refused (and counted) in the host's input
wrun --net nat,lan -- python3 "$W/lo-probe.py" "$LO_PORT"
is "$(cat "$W/lo.log" 2>/dev/null)" "" "nat,lan: the host's 127.0.0.1 is not reached over eth0 (UDP nor TCP)"
no_line_like "$OUT" '^connected$' "nat,lan: a TCP connect to 127.0.0.1 over eth0 fails"
is "$(jget "$(last_rundir)/result.json" '[x["dest"] for x in d["network"]["refused"]]')" "[\"127.0.0.1:$LO_PORT\"]" \
	"nat,lan: the refusals are counted"

# ---------------------------------------------------------------- nat,lan
wrun --net nat,lan -- sh -c "$(probe $ALL); $CURL http://10.20.30.40:8090/"
RD=$(last_rundir); ID=$(basename "$RD")
is "$RC" 0 "nat,lan: the run ends well"
is "$(reached "$OUT")" "a10 a100 a172 a192 pub " "nat,lan: the private ranges and the public address are reached"
line_like "$OUT" '^this is the lan$' "nat,lan: the LAN server answers"
is "$(jget "$RD/result.json" 'sorted(x["dest"] for x in d["network"]["refused"])')" \
	'["10.88.0.1:8081", "169.254.169.254:80", "192.168.200.1:8081"]' "nat,lan: the host (a private address of its own too), the gateway and link-local stay refused"
is "$(jget "$RD/result.json" '[d["network"]["mode"], d["network"]["lan"]]')" '["nat", true]' "nat,lan: recorded"
is "$(net_left "$ID")" "" "nat,lan: nothing of the run is left"

# ---------------------------------------------------------------- nat,allow=ADDR
wrun --net nat,allow=10.20.30.40:8090,169.254.169.254 -- sh -c "$(probe $ALL b10=10.20.30.40:8091)"
is "$(reached "$OUT")" "a10 meta pub " "nat,allow=10.20.30.40:8090,169.254.169.254: those two and the internet, nothing else private"
is "$(jget "$(last_rundir)/result.json" 'sorted(x["dest"] for x in d["network"]["refused"])')" \
	'["10.20.30.40:8091", "10.88.0.1:8081", "100.64.7.7:8090", "172.16.5.5:8090", "192.168.200.1:8081", "192.168.50.5:8090"]' \
	"nat,allow=ADDR:PORT: another port of that address, and the rest, stay refused (recorded)"
wrun --net nat,allow=192.168.200.1 -- sh -c "$(probe host=192.168.200.1:8081)"
is "$OUT" "host=7" "nat,allow=<the host's own address>: the host stays refused"

# ---------------------------------------------------------------- allow=LIST
wrun --net allow=10.20.30.40 -- sh -c "$(probe $ALL)"
is "$(reached "$OUT")" "a10 " "allow=10.20.30.40: that address only"
wrun --net allow=0.0.0.0/0 -- sh -c "$(probe $ALL)"
is "$(reached "$OUT")" "pub " "allow=0.0.0.0/0: everywhere public, but a wide CIDR does not name the private ranges"
wrun --net allow=192.168.0.0/16 -- sh -c "$(probe $ALL)"
is "$(reached "$OUT")" "a192 " "allow=192.168.0.0/16: that range (but the host's own address in it)"
wrun --net allow=lan.test,web1.test -- sh -c "$(probe lan=lan.test:8090 web1=web1.test:8080)"
RD=$(last_rundir)
is "$(reached "$OUT")" "web1 " "allow=lan.test: a name that resolves to a private address is refused (DNS rebinding into the LAN)"
is "$(jget "$RD/result.json" '[x["dest"] for x in d["network"]["refused"]]')" '["10.20.30.40:8090"]' "allow=lan.test: the refusal is recorded"
wrun --net lan,allow=lan.test -- sh -c "$(probe lan=lan.test:8090 a192=192.168.50.5:8090)"
is "$(reached "$OUT")" "lan " "lan,allow=lan.test: the name's private address is reached, nothing else"
is "$(jget "$(last_rundir)/result.json" '[d["network"]["mode"], d["network"]["lan"]]')" '["allow", true]' "lan,allow=: recorded"

# ---------------------------------------------------------------- the words
for bad in nat,bogus lan none,nat nat,allow=web1.test 'nat,allow=10.0.0.0/33'; do
	wrun --net "$bad" -- true
	ok "$([ "$RC" = 125 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && [[ $ERR == "warren: --net"* ]]; echo $?)" \
		"--net $bad: exit 125 and one line naming --net" || diag "exit $RC: $ERR"
done
like "$(wrun --net nat,bogus -- true; echo "$ERR")" "'bogus'" "--net nat,bogus: the line names the word"
like "$(wrun --net nat,allow=web1.test -- true; echo "$ERR")" "'web1.test' is a name" "--net nat,allow=NAME: the line says why"
is "$(ls /run/warren/net/leases 2>/dev/null)" "" "after the root runs: no lease is left"

# ---------------------------------------------------------------- rootless: the same rule in the cell
# a root run serving on its cell's address, for the rootless runs to try (another root run
# holds 10.88.0.2 first: a rootless cell's own address)
echo "cell A" >"$WORK/index.html"
start_bg "$WARREN" run --state "$STATE" --work "$WORK" --net nat -- sleep 120
H_PID=$BG_PID
wait_for 15 test -e /run/warren/net/leases/10.88.0.2
start_bg "$WARREN" run --state "$STATE" --work "$WORK" --net nat -- python3 -m http.server --bind 0.0.0.0 8000
A_PID=$BG_PID
A_ADDR=10.88.0.3
wait_for 15 _net_up "http://$A_ADDR:8000/"
use_mode user
if ! command -v pasta >/dev/null; then
	skip 18 "pasta is not installed (Debian package passt)"
else
	net_world_rootless
	wrun --net nat -- sh -c "$(probe $ALL)"
	RD=$(last_rundir)
	is "$RC" 0 "rootless nat: the run ends well"
	is "$(reached "$OUT")" "pub " "rootless nat: only the public address is reached"
	is "$(grep -c '=7$' <<<"$OUT")" 7 "rootless nat: each refused connection is reset at once"
	is "$(jget "$RD/result.json" '[d["network"]["via"], d["network"]["lan"]]')" '["pasta", false]' "rootless nat: recorded"
	wrun --net nat,lan -- sh -c "$(probe $ALL)"
	is "$RC" 0 "rootless nat,lan: the run ends well"
	is "$(reached "$OUT")" "a10 a100 a172 a192 pub " "rootless nat,lan: the private ranges are reached, not the host, the gateway nor link-local"
	is "$(jget "$(last_rundir)/result.json" 'd["network"]["lan"]')" true "rootless nat,lan: recorded"
	wrun --net nat,allow=192.168.50.5:8090 -- sh -c "$(probe $ALL)"
	is "$(reached "$OUT")" "a192 pub " "rootless nat,allow=192.168.50.5:8090: that one and the internet"
	wrun --net nat,allow=192.168.0.0/16 -- sh -c "$(probe $ALL)"
	is "$(reached "$OUT")" "a192 pub " "rootless nat,allow=192.168.0.0/16: not the host's own address in it"
	wrun --net allow=10.20.30.40 -- true
	is "$RC" 125 "rootless allow=LIST: still refused"
	like "$ERR" "nat,allow=ADDR" "rootless allow=: the line names nat,allow= instead"
	wrun --net nat,lan -- sh -c 'nft add rule inet warren output accept 2>&1; ip route add 10.0.0.0/8 dev lo 2>&1; echo done'
	like "$OUT" "Operation not permitted" "rootless nat,lan: the job cannot change the cell's firewall or routes"
	# the host's loopback, over eth0: pasta would deliver it to the host's 127.0.0.1
	wrun --net nat,lan -- python3 "$W/lo-probe.py" "$LO_PORT"
	is "$(cat "$W/lo.log" 2>/dev/null)" "" "rootless nat,lan: the host's 127.0.0.1 is not reached over eth0 (UDP nor TCP)"
	is "$(tr '\n' ' ' <<<"$OUT")" "error [Errno 1] Operation not permitted error [Errno 111] Connection refused " \
		"rootless nat,lan: the cell's firewall refuses both"
	# a root run's cell: pasta connects from the host, which routes warren's subnet to the cells
	is "$(curl -s -m 3 "http://$A_ADDR:8000/index.html")" "cell A" "the root run's cell serves the host"
	wrun --net nat,lan -- sh -c "$(probe cell=$A_ADDR:8000)"
	is "$OUT" "cell=7" "rootless nat,lan: a root run's cell is refused"
	wrun --net "nat,allow=$A_ADDR" -- sh -c "$(probe cell=$A_ADDR:8000)"
	is "$OUT" "cell=7" "rootless nat,allow=<a root run's cell>: refused"
	is "$(pgrep -u "$TEST_USER_UID" -f "$PASTA_CMD")" "" "rootless: pasta ended with the runs"
fi
kill -TERM "$A_PID" "$H_PID"; wait_bg "$A_PID" 20; wait_bg "$H_PID" 20
