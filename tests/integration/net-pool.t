#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# net-pool.t - the runs' network beside another's (issue 34: podman's default network is
# 10.88.0.0/16, warren's first range 10.88.0.0/24): warren takes the first free /24 of its pool
# by itself and says which (result.json, warren show, selfcheck); the bridge warren0's address
# decides while it exists; an idle bridge whose range the host took since is moved, one with
# live runs is refused in one line; WARREN_NET_SUBNET and warren.conf's net.pool and net. The
# "podman" network is a veth pair of the test's own world (no dummy module needed) (net_world_up in lib.sh):
# nothing of the host's is touched.
[ -n "${WARREN_NET_WORLD:-}" ] || exec env WARREN_NET_WORLD=1 unshare --net --mount --propagation private bash "$0" "$@"
. "$(dirname "$0")/../lib.sh"

net_world_up
plan 42

use_mode root
export WARREN_CONFIG=none   # the host's /etc/warren/warren.conf is not this test's

podman_up() { ip link add wtest0 type veth peer name wtest1 && ip addr add 10.88.0.1/16 dev wtest0 && ip link set wtest0 up; }
podman_down() { ip link del wtest0; }
bridge_addr() { ip -4 -o addr show dev warren0 2>/dev/null | awk '{print $4}' | tr '\n' ' '; }
bridge_gone() { ! ip link show warren0 >/dev/null 2>&1; }
# what a cell sees of its network: its resolver and its address
PLAN='grep ^nameserver /etc/resolv.conf; ip -4 -o addr show eth0 | awk "{print \$4}"'
plan_of() { printf 'nameserver %s.1\n%s.2/24' "$1" "$1"; }
subnet_of_last() { jget "$(last_rundir)/result.json" 'd["network"]["subnet"]'; }

# ---------------------------------------------------------------- podman there first
podman_up
wrun --net nat -- sh -c "$PLAN"
is "$RC" 0 "podman's 10.88.0.0/16 on the host: a --net nat run starts" || diag "$ERR"
is "$OUT" "$(plan_of 10.89.0)" "... on 10.89.0.0/24, the first free range (resolv.conf and the cell's address agree)"
is "$(subnet_of_last)" "10.89.0.0/24" "result.json's network names the subnet"
wr show
like "$OUT" "network +nat, address 10\.89\.0\.2 in 10\.89\.0\.0/24" "warren show prints it"
is "$(bridge_addr)" "10.89.0.1/24 " "warren0 holds 10.89.0.1/24"
is "$(ip -o route get 10.88.0.7 | grep -o 'dev [^ ]*')" "dev wtest0" "podman's network keeps its route"
wrun --net allow=web1.test -- curl -s -m 3 http://web1.test:8080/
is "$RC/$OUT" "0/this is web1" "--net allow= runs too"
wrun --publish 127.0.0.1:18080:8000 -- true
is "$RC" 0 "--publish runs too" || diag "$ERR"
wr selfcheck
line_like "$OUT" "^note  runs' network: 10\.89\.0\.0/24 \(the bridge warren0\)$" "selfcheck: the bridge's range, and why"

# ---------------------------------------------------------------- the bridge decides
podman_down
wrun --net nat -- sh -c "$PLAN"
is "$RC/$OUT" "0/$(plan_of 10.89.0)" "podman gone, the bridge stays: runs keep its range"
wr gc
bridge_gone; ok $? "gc removes the idle bridge"
wrun --net nat -- sh -c "$PLAN"
is "$RC/$OUT" "0/$(plan_of 10.88.0)" "no bridge and a free pool: 10.88.0.0/24 first, as before"

# ---------------------------------------------------------------- podman came later: moved when idle
podman_up
wrun --net nat -- sh -c "$PLAN"
is "$RC/$OUT" "0/$(plan_of 10.89.0)" "podman took 10.88.0.0/16 since: the next run starts on 10.89.0.0/24"
is "$ERR" "warren: moved the runs' network (the bridge warren0) from 10.88.0.0/24 to 10.89.0.0/24: the host's own network took the old range (10.88.0.1/16 on wtest0)" \
	"... with one line saying so"
is "$(bridge_addr)" "10.89.0.1/24 " "... warren0 moved"
is "$(ip -o route get 10.88.0.7 | grep -o 'dev [^ ]*')" "dev wtest0" "... podman's network has its route back"

# ---------------------------------------------------------------- podman came later: refused while live
podman_down
wr gc
wrun --net nat -- true
start_bg "$WARREN" run --state "$STATE" --work "$WORK" --net nat -- sleep 60
LIVE=$BG_PID
wait_for 15 test -e /run/warren/net/leases/10.88.0.2
podman_up
wrun --net nat -- true
is "$RC" 125 "the bridge's range taken while a run is live on it: refused"
is "$ERR" "warren: the runs' network 10.88.0.0/24 on warren0 now meets the host's own network (10.88.0.1/16 on wtest0), and 1 run with a network is live on it; start this run once it has ended (warren then moves warren0 to 10.89.0.0/24)" \
	"... in one line naming both, the live run and what happens next"
is "$(bridge_addr)" "10.88.0.1/24 " "... the live run's bridge is left as it is"
wrun -- true
is "$RC" 0 "... a run without a network still runs"
wr selfcheck
line_like "$OUT" "^note  runs' network: 10\.89\.0\.0/24, moved from 10\.88\.0\.0/24 on warren0 by the next root run with a network while none is live \(the default\)$" \
	"selfcheck says where the bridge will go"
kill -TERM "$LIVE"; wait_bg "$LIVE" 20
wrun --net nat -- sh -c "$PLAN"
is "$RC/$OUT" "0/$(plan_of 10.89.0)" "once it ended: the next run moves the bridge and starts"

# ---------------------------------------------------------------- WARREN_NET_SUBNET: one fixed range
wr_env WARREN_NET_SUBNET=10.77.0.0/24 -- run --work "$WORK" --net nat -- sh -c "$PLAN"
is "$RC/$OUT" "0/$(plan_of 10.77.0)" "WARREN_NET_SUBNET moves the idle bridge to its range"
like "$ERR" "moved the runs' network \(the bridge warren0\) from 10\.89\.0\.0/24 to 10\.77\.0\.0/24, WARREN_NET_SUBNET's" "... saying so"
is "$(subnet_of_last)" "10.77.0.0/24" "... and the record names it"
wr_env WARREN_NET_SUBNET=10.88.0.0/24 -- run --work "$WORK" --net nat -- true
{ [ "$RC" = 125 ] && [[ $ERR == *"meets the host's own network (10.88.0.1/16 on wtest0)"* ]] && [ "$(wc -l <<<"$ERR")" = 1 ]; }
ok $? "WARREN_NET_SUBNET in podman's range: refused in one line" || diag "$ERR"
wr gc

# ---------------------------------------------------------------- warren.conf: net.pool and net
CONF=$TEST_SCRATCH/warren.conf
printf '# the pool\nnet.pool = 10.88.0.0/16, 172.30.0.0/16   # podman has the first\n' >"$CONF"
wr_env WARREN_CONFIG="$CONF" -- selfcheck
line_like "$OUT" "^note  runs' network: 172\.30\.0\.0/24 \(the first free range of net\.pool 10\.88\.0\.0/16, 172\.30\.0\.0/16, from $CONF:2\)$" \
	"selfcheck: the range net.pool gives, and the file and line"
wr_env WARREN_CONFIG="$CONF" -- run --work "$WORK" --net nat -- sh -c "$PLAN"
is "$RC/$OUT" "0/$(plan_of 172.30.0)" "net.pool: the first free range of the file's pool"
is "$(subnet_of_last)" "172.30.0.0/24" "... recorded"
wr gc
wr_env WARREN_CONFIG="$CONF" WARREN_NET_SUBNET=10.66.0.0/24 -- run --work "$WORK" --net nat -- sh -c "$PLAN"
is "$RC/$OUT" "0/$(plan_of 10.66.0)" "WARREN_NET_SUBNET wins over net.pool"
wr gc
printf 'net.pool = 10.88.0.0/16\n' >"$CONF"
wr_env WARREN_CONFIG="$CONF" -- run --work "$WORK" --net nat -- true
is "$RC" 125 "a pool the host has taken all of: refused"
is "$ERR" "warren: no range of warren's network pool (net.pool 10.88.0.0/16, from $CONF:1) is free of the host's own networks (10.88.0.1/16 on wtest0, ...); add a free range to net.pool in warren.conf, or set WARREN_NET_SUBNET" \
	"... in one line naming the pool, the file and what took it"
bridge_gone; ok $? "... and no bridge is made"

printf 'net = nat\n' >"$CONF"
wr_env WARREN_CONFIG="$CONF" -- run --work "$WORK" -- sh -c "$PLAN"
is "$RC/$OUT" "0/$(plan_of 10.89.0)" "net = nat: a run that names no network gets nat"
is "$(jget "$(last_rundir)/result.json" 'd["network"]["mode"]')" "nat" "... recorded as nat"
wr_env WARREN_CONFIG="$CONF" -- run --work "$WORK" --net none -- sh -c 'ls /sys/class/net | tr "\n" " "'
is "$RC/$OUT" "0/lo " "--net none on the command line wins over the file"
printf 'name: n\nsteps:\n  - run: ls /sys/class/net | tr "\\n" " "\n' >"$TEST_SCRATCH/nonet.yaml"
printf 'name: n\nnetwork: none\nsteps:\n  - run: ls /sys/class/net | tr "\\n" " "\n' >"$TEST_SCRATCH/none.yaml"
bounded env WARREN_CONFIG="$CONF" "$WARREN" job run "$TEST_SCRATCH/nonet.yaml" --state "$STATE" --work "$WORK"
like "$OUT" "eth0 lo" "net = nat: a job without network: gets nat" || diag "$ERR"
bounded env WARREN_CONFIG="$CONF" "$WARREN" job run "$TEST_SCRATCH/none.yaml" --state "$STATE" --work "$WORK"
{ [[ $OUT == *"lo "* ]] && [[ $OUT != *eth0* ]]; }
ok $? "a job's network: none wins over the file" || diag "$OUT" "$ERR"
printf 'net = nat,bogus\n' >"$CONF"
wr_env WARREN_CONFIG="$CONF" -- run --work "$WORK" -- true
{ [ "$RC" = 125 ] && [[ $ERR == "warren: $CONF:1: net: "*bogus* ]] && [ "$(wc -l <<<"$ERR")" = 1 ]; }
ok $? "net = a bad mode: refused in one line naming the file, line and word" || diag "$ERR"
wr gc

# ---------------------------------------------------------------- rootless: the same plan
if ! command -v pasta >/dev/null; then
	skip 2 "pasta is not installed (Debian package passt)"
else
	net_world_rootless
	use_mode user
	wrun --net nat -- sh -c "$PLAN"
	is "$RC/$OUT" "0/nameserver 10.89.0.1
10.89.0.2/24" "rootless beside podman's network: pasta's plan takes 10.89.0.0/24 too" || diag "$ERR"
	is "$(subnet_of_last)" "10.89.0.0/24" "... recorded"
	use_mode root
fi

podman_down
wr gc
is "$(ip -br link | grep -E '^(warren0|wv)'; ls /run/warren/net/leases 2>/dev/null)" "" "nothing is left: no bridge, veth or lease"
