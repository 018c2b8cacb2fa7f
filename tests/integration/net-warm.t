#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# net-warm.t - issue 32 item 5: warm cells with a network (`warren serve --warm N --warm-net
# MODE`) take a run's published ports and allow list at its claim: the run stays warm (its
# record says start warm and what it claimed), a host program reaches its published port, its
# allow list holds (a name it allows answers, one it does not is refused; a private address of
# nat,allow= is reached, another is not), the next cell has a list of its own, and a run of
# another network mode starts cold, saying why. As root (nat, allow) and rootless (nat through
# pasta: its ports and list are pasta's, so a run with its own starts cold; allow is refused).
# Like net.t, the whole script runs in a network namespace of its own (net_world_up in
# lib.sh): its bridge, firewall and leases are the world's.
[ -n "${WARREN_NET_WORLD:-}" ] || exec env WARREN_NET_WORLD=1 unshare --net --mount --propagation private bash "$0" "$@"
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

net_world_up
plan 36

CURL="curl -s -m 3"
# the cell's web server: the page $1 in /tmp on port 8000; the run ends when the worktree has
# the file stop-$1 (at most 60 s)
serve_cmd() {
	printf '["sh","-c","(cd /tmp && echo %s >index.html && exec python3 -m http.server 8000 >/dev/null 2>&1) & for i in $(seq 600); do [ -e stop-%s ] && exit 0; sleep 0.1; done; exit 1"]' "$1" "$1"
}
stop_run() { touch "$WORK/stop-$1"; }
page_is() { [ "$($CURL "http://127.0.0.1:$1/index.html")" = "$2" ]; }
# fetch URL...: a command that prints each URL's page, or "refused"
fetch() {
	local s="" u
	for u in "$@"; do s="$s curl -s -m 3 $u || echo refused;"; done
	printf '["sh","-c",%s]' "$(jstr "$s")"
}
# what runs left in the world (empty: nothing); the bridge and the base tables stay between runs
world_idle() {
	nft list ruleset 2>/dev/null | grep -E 'run_|elements' | head -3
	ip -br link | grep -E '^wv'
	ls /run/warren/net/leases 2>/dev/null
}
detail_ports() { api GET "/v1/runs/$1"; jbody '[(p["host_addr"], p["host_port"], p["cell_port"]) for p in d["published"]]'; }
record() { jget "$STATE/runs/$1/result.json" "$2"; }

# ------------------------------------------------------------------------------ root
use_mode root
T=$TEST_SCRATCH/srv
mkdir -p "$T"
chmod 755 "$T"
SOCK=$T/api.sock
API_AS=root
wr serve --warm 1 --warm-work "$WORK" --warm-net bogus
is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "125:1" "[root] serve --warm-net of no mode: refused (125, one line)"

start_server 20 --listen "unix:$SOCK" --slots 4 --warm 2 --warm-work "$WORK" --warm-net nat
wait_for 30 ready_is 2
ok $? "[root] serve --warm 2 --warm-net nat: two warm cells with a network" || diag "$(cat "$SRV_ERR")"

# ---- a published port, set at the claim
submit "{\"command\":$(serve_cmd wa),\"worktree\":\"$WORK\",\"publish\":[\"18301:8000\"]}"
WA=$ID
is "$(jbody 'd["start"]')" warm "[root] a command with publish takes a warm cell" || diag "$BODY"
wait_for 20 page_is 18301 wa
ok $? "[root] ... a host program fetches its page at 127.0.0.1:18301" || diag "$(logs "$WA")"
is "$(detail_ports "$WA")" '[["127.0.0.1", 18301, 8000]]' "[root] ... GET /v1/runs/{id} names its port"
stop_run wa
wait_for 30 run_ended "$WA"
is "$(record "$WA" '[d["start"], d["claimed"], [(p["host_port"], p["cell_port"]) for p in d["published"]], d["network"]["mode"], d["exit_code"]]')" \
	'["warm", ["publish"], [[18301, 8000]], "nat", 0]' "[root] ... its record: start warm, claimed publish, the port, nat, exit 0"
page_is 18301 wa
isnt "$?" 0 "[root] ... its port is gone with it"

# ---- nat reaches the world; nat,allow= a private address, set at the claim
wait_for 30 ready_is 2
run_wait "{\"command\":$(fetch http://web1.test:8080/),\"worktree\":\"$WORK\",\"net\":\"nat\"}"
is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["warm", "exited", 0]' "[root] a nat run takes a warm cell" || diag "$BODY"
is "$(logs "$ID")" "this is web1" "[root] ... and reaches web1.test by name"
wait_for 30 ready_is 2
run_wait "{\"command\":$(fetch http://10.20.30.40:8090/ http://172.16.5.5:8090/),\"worktree\":\"$WORK\",\"net\":\"nat,allow=10.20.30.40:8090\"}"
is "$(jbody '[d["start"], d["state"]]')" '["warm", "exited"]' "[root] a nat,allow=10.20.30.40:8090 run takes a warm cell" || diag "$BODY"
is "$(logs "$ID")" $'this is the lan\nrefused' "[root] ... reaches the private address it allows, not another"
is "$(record "$ID" 'd["claimed"]')" '["allow"]' "[root] ... its record: claimed allow"
wait_for 30 ready_is 2
run_wait "{\"command\":$(fetch http://10.20.30.40:8090/),\"worktree\":\"$WORK\",\"net\":\"nat\"}"
is "$(jbody 'd["start"]'):$(logs "$ID")" "warm:refused" "[root] the next warm run without it does not reach that address"

# ---- another network mode: cold, with its reason
run_wait "{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"net\":\"none\"}"
is "$(jbody '[d["start"], d["state"]]')" '["cold", "exited"]' "[root] a run with net none on a nat pool starts cold"
like "$(row "$ID" start_why)" "network mode is not the warm cells'" "[root] ... its row says why"
stop_server 30
is "$RC" 0 "[root] the nat pool's server stops cleanly" || diag "$(cat "$SRV_ERR")"
is "$(world_idle)" "" "[root] ... nothing of its runs and cells is left (rules, sets, veths, leases)"

# ---- an allow pool: each run's list its own
start_server 20 --listen "unix:$SOCK" --slots 4 --warm 1 --warm-work "$WORK" --warm-net allow
wait_for 30 ready_is 1
ok $? "[root] serve --warm-net allow: a warm cell" || diag "$(cat "$SRV_ERR")"
run_wait "{\"command\":$(fetch http://web1.test:8080/ http://web2.test:8080/),\"worktree\":\"$WORK\",\"net\":\"allow=web1.test:8080\"}"
is "$(jbody '[d["start"], d["state"]]')" '["warm", "exited"]' "[root] a run with allow=web1.test:8080 takes the warm cell" || diag "$BODY"
is "$(logs "$ID")" $'this is web1\nrefused' "[root] ... reaches web1.test, not web2.test"
is "$(record "$ID" '[d["claimed"], d["network"]["mode"]]')" '[["allow"], "allow"]' "[root] ... its record: claimed allow, network allow"
wait_for 30 ready_is 1
run_wait "{\"command\":$(fetch http://web1.test:8080/ http://web2.test:8080/ http://203.0.113.10:8080/),\"worktree\":\"$WORK\",\"net\":\"allow=web2.test:8080\"}"
is "$(jbody 'd["start"]'):$(logs "$ID" | tr '\n' ' ')" "warm:refused this is web2 refused " \
	"[root] the next warm cell has its own run's list: web2.test only (not web1.test, by name or address)"
wait_for 30 ready_is 1
run_wait "{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"net\":\"nat\"}"
like "$(jbody 'd["start"]'):$(row "$ID" start_why)" "^cold:.*network mode" "[root] a nat run on an allow pool starts cold, saying why"
stop_server 30
is "$(world_idle)" "" "[root] nothing of the allow pool is left"
is "$(state_clean)" "" "[root] ... nor of any cell (mounts, processes, cgroups, scratch)"

# ------------------------------------------------------------------------------ rootless
use_mode user
net_world_rootless
T=$TEST_SCRATCH/usrv
mkdir_for_mode "$T"
SOCK=$T/api.sock
API_AS=mode
wr serve --warm 1 --warm-work "$WORK" --warm-net allow
like "$RC:$ERR" "^125:warren: --warm-net allow: --net allow= needs root: .*run warren as root" "[user] serve --warm-net allow: refused, a rootless run has no allow list"
if ! command -v pasta >/dev/null; then
	skip 10 "pasta is not installed (the Debian package passt): rootless nat"
else
	start_server 20 --listen "unix:$SOCK" --slots 4 --warm 1 --warm-work "$WORK" --warm-net nat
	wait_for 30 ready_is 1
	ok $? "[user] serve --warm-net nat: a rootless warm cell with a network (pasta)" || diag "$(cat "$SRV_ERR")"
	run_wait "{\"command\":$(fetch http://web1.test:8080/),\"worktree\":\"$WORK\",\"net\":\"nat\",\"env\":{\"K\":\"v\"}}"
	is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["warm", "exited", 0]' "[user] a nat run takes it" || diag "$BODY"
	is "$(logs "$ID")" "this is web1" "[user] ... and reaches web1.test"
	is "$(record "$ID" 'd["claimed"]')" '["env"]' "[user] ... its record: claimed env"
	wait_for 30 ready_is 1
	run_wait "{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"net\":\"nat,allow=10.20.30.40:8090\"}"
	is "$(jbody '[d["start"], d["state"]]')" '["cold", "exited"]' "[user] a rootless run with an allow list of its own starts cold" || diag "$BODY"
	like "$(row "$ID" start_why)" "pasta" "[user] ... its row says why (pasta's, set when a cell is made)"
	wait_for 30 ready_is 1
	run_wait "{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"net\":\"none\"}"
	like "$(jbody 'd["start"]'):$(row "$ID" start_why)" "^cold:.*network mode" "[user] a run with net none on a nat pool starts cold, saying why"
	stop_server 30
	is "$RC" 0 "[user] the server stops cleanly" || diag "$(cat "$SRV_ERR")"
	is "$(world_idle)" "" "[user] nothing of its runs is left"
	is "$(state_clean)" "" "[user] ... nor of any cell"
fi
