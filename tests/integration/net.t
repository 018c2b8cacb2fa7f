#!/bin/bash
# net.t - --net none|nat|allow=LIST and --publish, in a throwaway world: the whole script
# (warren included) runs in a network namespace of its own with no route off the machine;
# the "internet" is a further namespace behind it (web1, web2: HTTP servers; a dnsmasq that
# answers for a few made-up names; see net_world_up in lib.sh). Nothing is sent beyond these
# namespaces. The private ranges (nat,lan) are net-lan.t's.
[ -n "${WARREN_NET_WORLD:-}" ] || exec env WARREN_NET_WORLD=1 unshare --net --mount --propagation private bash "$0" "$@"
. "$(dirname "$0")/../lib.sh"

net_world_up
plan 60

use_mode root
CURL="curl -s -m 3"

# what runs left in the world (empty: nothing); the bridge and the base tables stay between runs
world_idle() {
	nft list ruleset 2>/dev/null | grep -E 'run_|elements' | head -3
	ip -br link | grep -E '^wv'
	ls /run/warren/net/leases 2>/dev/null
}
world_clean() {
	nft list tables 2>/dev/null | grep warren
	ip -br link | grep -E '^(warren0|wv)'
	ls /run/warren/net/leases 2>/dev/null
}

# ---------------------------------------------------------------- none
wrun -- sh -c "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; $CURL http://203.0.113.10:8080/; echo rc=\$?"
is "$RC" 0 "none: the run ends well"
like "$OUT" $'^lo\nrc=7$' "none: only lo, and web1 is unreachable (curl: could not connect)"
is "$(world_clean)" "" "none: no bridge, table or lease is made"

# ---------------------------------------------------------------- nat
wrun --net nat -- sh -c "$CURL http://203.0.113.10:8080/; $CURL http://web1.test:8080/; cat /etc/resolv.conf; \
	$CURL http://198.51.100.1:8081/; echo host=\$?; $CURL http://169.254.169.254/; echo meta=\$?"
ID=$(basename "$(last_rundir)")
is "$RC" 0 "nat: the run ends well"
line_like "$OUT" '^this is web1$' "nat: reaches a test host by address"
is "$(grep -c 'this is web1' <<<"$OUT")" 2 "nat: and by name through warren's resolver"
line_like "$OUT" '^nameserver 10\.88\.0\.1$' "nat: resolv.conf names the gateway"
line_like "$OUT" '^host=7$' "nat: the host's own address is refused"
line_like "$OUT" '^meta=7$' "nat: 169.254.169.254 is refused"
RD=$(last_rundir)
is "$(jget "$RD/result.json" 'sorted(x["dest"] for x in d["network"]["refused"])')" '["169.254.169.254:80", "198.51.100.1:8081"]' "nat: the refusals are recorded"
line_like "$ERR" "^warren: $ID refused 2 connections to " "nat: one line on stderr names the refusals"
is "$(net_left "$ID")" "" "nat: nothing of the run is left (veth, rules, sets, lease)"
is "$(world_idle)" "" "nat: no run's rule, set, map entry, veth or lease is left"
is "$(nft list tables | tr '\n' ' '; ip -br link | grep -c '^warren0')" "table inet warren table bridge warren 1" \
	"nat: the bridge and the base tables stay for the next run"
nothing_left "$RD" "nat: no scratch, mount, process or cgroup left"

# the job holds no CAP_NET_ADMIN over its network, even as --user 0
wrun --net nat --user 0 -- sh -c 'ip addr add 10.88.0.200/24 dev eth0 2>&1; ip link set eth0 down 2>&1; echo done'
like "$OUT" "Operation not permitted" "nat --user 0: the cell cannot change its addresses"
unlike "$OUT" "^done$" "nat --user 0: (the output ends with done after two failures)" || true

# ---------------------------------------------------------------- allow=
wrun --net allow=web1.test -- sh -c "$CURL http://web1.test:8080/; echo w1=\$?; \
	$CURL http://web2.test:8080/; echo w2name=\$?; $CURL http://203.0.113.20:8080/; echo w2addr=\$?; \
	$CURL http://198.51.100.1:8081/; echo host=\$?; $CURL http://169.254.169.254/; echo meta=\$?; \
	$CURL http://203.0.113.20:8080/; echo w2again=\$?"
ID=$(basename "$(last_rundir)")
RD=$(last_rundir)
is "$RC" 0 "allow: the run ends well"
line_like "$OUT" '^this is web1$' "allow=web1.test: reaches web1 by name"
line_like "$OUT" '^w2name=6$' "allow: web2.test does not resolve (REFUSED)"
line_like "$OUT" '^w2addr=7$' "allow: web2 by address is refused"
line_like "$OUT" '^host=7$' "allow: the host is refused"
line_like "$OUT" '^meta=7$' "allow: 169.254.169.254 is refused"
no_line_like "$OUT" 'this is web2|this is the host' "allow: nothing but web1 answered"
is "$(jget "$RD/result.json" 'sorted([x["dest"], x["count"]] for x in d["network"]["refused"])')" \
	'[["169.254.169.254:80", 1], ["198.51.100.1:8081", 1], ["203.0.113.20:8080", 2]]' "allow: refusals counted per destination"
is "$(jget "$RD/result.json" '[[x["name"] for x in d["network"]["dns"]["refused"]], d["network"]["dns"]["names"]]')" \
	'[["web2.test"], 2]' "allow: the refused name and the distinct names are recorded"
line_like "$ERR" "^warren: $ID refused 4 connections to 203\.0\.113\.20:8080 \(2\), .*\(not in --net allow\)$" "allow: one line names the refusals"
is "$(net_left "$ID")" "" "allow: nothing of the run is left"

wrun --net allow=203.0.113.20:8080 -- sh -c "$CURL http://203.0.113.20:8080/; $CURL http://203.0.113.10:8080/; echo w1=\$?; $CURL http://web2.test:8080/; echo name=\$?"
line_like "$OUT" '^this is web2$' "allow=ADDR:PORT: reaches that address and port"
line_like "$OUT" '^w1=7$' "allow=ADDR:PORT: not another address"
line_like "$OUT" '^name=6$' "allow=ADDR:PORT: names are not resolved"

# a name whose address changes mid-run still works
start_bg "$WARREN" run --state "$STATE" --work "$WORK" --net allow=move.test -- sh -c \
	"$CURL http://move.test:8080/; touch moved.1; i=0; while [ ! -e moved.2 ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done; sleep 1.2; $CURL http://move.test:8080/"
rm -f "$WORK/moved.1" "$WORK/moved.2"
MV_PID=$BG_PID
wait_for 15 test -e "$WORK/moved.1"
sed -i 's/^203.0.113.10 move.test$/203.0.113.20 move.test/' "$W/hosts"
kill -HUP "$(cat "$W/dnsmasq.pid")"
touch "$WORK/moved.2"
wait_bg "$MV_PID" 30
is "$(cat "$BG_OUT")" $'this is web1\nthis is web2' "allow=move.test: follows the name to its new address"
rm -f "$WORK/moved.1" "$WORK/moved.2"

# the cap on distinct names
wrun --net 'allow=*.web1.test' --dns-max-names 3 -- sh -c "for n in a b c d e; do $CURL -o /dev/null http://\$n.web1.test:8080/; echo \$n=\$?; done"
RD=$(last_rundir)
is "$(tr '\n' ' ' <<<"$OUT")" "a=0 b=0 c=0 d=6 e=6 " "--dns-max-names 3: the fourth distinct name is refused"
is "$(jget "$RD/result.json" '[d["network"]["dns"]["names"], d["network"]["dns"]["names_capped"]]')" '[3, true]' "--dns-max-names: recorded"
line_like "$ERR" 'past --dns-max-names 3' "--dns-max-names: named on stderr"

# ---------------------------------------------------------------- other runs
echo "cell A" >"$WORK/index.html"
start_bg "$WARREN" run --state "$STATE" --work "$WORK" --net nat --publish 18089:8000 -- python3 -m http.server --bind 0.0.0.0 8000
A_PID=$BG_PID
wait_for 15 _net_up http://127.0.0.1:18089/
is "$(curl -s -m 3 http://127.0.0.1:18089/index.html)" "cell A" "--publish 18089:8000: a host program fetches a page served in the cell"
A_ADDR=$(grep -l run_ /run/warren/net/leases/* 2>/dev/null | head -1 | xargs -r basename)
like "$A_ADDR" '^10\.88\.0\.[0-9]+$' "the serving run has an address of warren's subnet"
# cells share no link layer: the bridge drops frames between its ports (curl times out)
wrun --net nat -- sh -c "curl -s -m 2 http://$A_ADDR:8000/index.html; echo rc=\$?"
like "$OUT" '^rc=(7|28)$' "nat: another run's cell is refused"
wrun --net allow=web1.test -- sh -c "curl -s -m 2 http://$A_ADDR:8000/index.html; echo rc=\$?"
like "$OUT" '^rc=(7|28)$' "allow: another run's cell is refused"
kill -TERM "$A_PID"; wait_bg "$A_PID" 20
is "$(world_idle)" "" "after the published run: nothing of a run left"

# ---------------------------------------------------------------- kill -9 and gc
start_bg "$WARREN" run --state "$STATE" --work "$WORK" --net allow=web1.test --publish 18090:80 -- sleep 30
K_PID=$BG_PID
wait_for 15 sh -c 'ip -br link | grep -q "^wv"'
RD=$(last_rundir); ID=$(basename "$RD")
isnt "$(net_left "$ID")" "" "a live run has its veth, rules and lease"
kill -KILL "$K_PID"; wait "$K_PID" 2>/dev/null
wait_for 10 sh -c '! ip -br link | grep -q "^wv"'
wr gc
is "$RC" 0 "gc after kill -9 of warren"
is "$(net_left "$ID")" "" "gc: no veth, rule, set or lease of the run is left"
is "$(world_clean)" "" "gc: the bridge and the table are gone with the last run"

# ---------------------------------------------------------------- refused words and rootless
wrun --net bogus -- true
is "$RC" 125 "--net bogus: exit 125"
one_warren_line "--net bogus: one line"
wrun --net allow=pypi.org:99999 -- true
like "$ERR" "not a port" "--net allow with a bad port: named"
# ---------------------------------------------------------------- rootless: nat through pasta
use_mode user
wrun --net allow=web1.test -- true
is "$RC" 125 "rootless --net allow=: refused"
like "$ERR" "allow= needs root: .*pasta" "rootless allow=: the refusal names why"
if ! command -v pasta >/dev/null; then
	skip 11 "pasta is not installed (Debian package passt)"
else
	net_world_rootless
	wrun --net nat -- sh -c "ip -br addr show eth0 | tr -s ' '; ip route | head -1; $CURL http://203.0.113.10:8080/; $CURL http://web1.test:8080/; \
		$CURL http://198.51.100.1:8081/; echo host=\$?; $CURL http://169.254.169.254/; echo meta=\$?; $CURL http://10.88.0.1:8081/; echo gw=\$?; \
		ip addr add 10.88.0.200/24 dev eth0 2>&1; nft list ruleset 2>&1 | head -1"
	RD=$(last_rundir)
	is "$RC" 0 "rootless nat: the run ends well"
	line_like "$OUT" '^eth0 UNKNOWN 10\.88\.0\.2/24' "rootless nat: eth0 has the run's address (pasta's tap)"
	line_like "$OUT" '^default via 10\.88\.0\.1 dev eth0' "rootless nat: the default route via the gateway"
	is "$(grep -c 'this is web1' <<<"$OUT")" 2 "rootless nat: reaches a test host by address and by name"
	line_like "$OUT" '^host=7$' "rootless nat: the host's own address is refused"
	line_like "$OUT" '^meta=7$' "rootless nat: 169.254.169.254 is refused"
	line_like "$OUT" '^gw=7$' "rootless nat: the gateway is refused but for DNS"
	like "$OUT" "Operation not permitted" "rootless nat: the cell cannot change its addresses or read its firewall"
	is "$(jget "$RD/result.json" '[d["network"]["mode"], d["network"]["via"]]')" '["nat", "pasta"]' "rootless nat: recorded as nat via pasta"
	is "$(pgrep -u "$TEST_USER_UID" -x pasta)" "" "rootless nat: pasta ended with the run"
	# kill -9 of warren: pasta has a parent-death signal
	wr_bg run --work "$WORK" --net nat -- sleep 30
	K_PID=$BG_PID
	wait_for 15 pgrep -u "$TEST_USER_UID" -x pasta
	kill -KILL "$K_PID"; wait "$K_PID" 2>/dev/null
	wait_for 10 sh -c '! pgrep -u "$TEST_USER_UID" -x pasta'
	is "$(pgrep -u "$TEST_USER_UID" -x pasta)" "" "rootless nat: kill -9 of warren ends pasta too"
fi
