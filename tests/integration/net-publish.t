#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# net-publish.t - published ports, binds and images of runs sent to `warren serve` (POST
# /v1/runs fields publish, binds, ro-binds, image; warren submit --publish, --bind,
# --ro-bind, --image) and a job file's publish: (warren job run, and through the server), as
# root (nat) and rootless (net none, through pasta). A server in the cell answers on its port
# and a host program fetches its page at 127.0.0.1:HOSTPORT; the run's detail and `warren
# show` name the port; a host port in use or published by a live run, a bind the gate
# refuses, a mode the user may not have are refused with one 400 line naming the field and
# the value, and nothing of such a request is left. Like net.t, the whole script runs in a
# network namespace of its own (net_world_up in lib.sh): its bridge, firewall and leases are
# the world's.
[ -n "${WARREN_NET_WORLD:-}" ] || exec env WARREN_NET_WORLD=1 unshare --net --mount --propagation private bash "$0" "$@"
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

net_world_up
plan $((32 + 12))

CURL="curl -s -m 3"
# the cell's web server: the page $1 in /tmp on port 8000; the run ends when the worktree has
# the file stop-$1 (at most 60 s)
serve_cmd() {
	printf '["sh","-c","(cd /tmp && echo %s >index.html && exec python3 -m http.server 8000 >/dev/null 2>&1) & for i in $(seq 600); do [ -e stop-%s ] && exit 0; sleep 0.1; done; exit 1"]' "$1" "$1"
}
# a job file (in the worktree) serving the page $1 on 8000 published at host port $2, until
# stop-$1; $3: more keys (network: none)
serve_job() {
	cat >"$WORK/$1.yaml" <<EOF
${3:-}
publish: ["$2:8000"]
steps:
  - name: serve
    run: |
      (cd /tmp && echo $1 >index.html && exec python3 -m http.server 8000 >/dev/null 2>&1) &
      for i in \$(seq 600); do [ -e stop-$1 ] && exit 0; sleep 0.1; done; exit 1
EOF
	[ "$MODE" = user ] && chown "$TEST_USER_UID" "$WORK/$1.yaml"
}
stop_run() { touch "$WORK/stop-$1"; }
page_is() { [ "$($CURL "http://127.0.0.1:$1/index.html")" = "$2" ]; }
# what runs left in the world (empty: nothing); the bridge and the base tables stay between runs
world_idle() {
	nft list ruleset 2>/dev/null | grep -E 'run_|elements' | head -3
	ip -br link | grep -E '^wv'
	ls /run/warren/net/leases 2>/dev/null
}
# the server's files and the history's rows, to see that a refused request left nothing
served() { ls "$STATE/serve" | grep -c '\.json$'; "${RUNNER[@]}" "$WARREN" history --state "$STATE" --json 2>/dev/null | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))'; }
# refused LABEL FIELD_RE JSON: one 400 line matching FIELD_RE, and nothing written
refused() {
	local before
	before=$(served)
	api POST /v1/runs "$3"
	{ [ "$CODE" = 400 ] && [ "$(jbody 'd["error"]' | wc -l)" = 1 ] && [[ $(jbody 'd["error"]') =~ $2 ]] && [ "$(served)" = "$before" ]; }
	ok $? "$1: 400, one line naming it, nothing left" || diag "$CODE $BODY; served $before -> $(served)"
}
detail_ports() { api GET "/v1/runs/$1"; jbody '[(p["host_addr"], p["host_port"], p["cell_port"]) for p in d["published"]]'; }

# ------------------------------------------------------------------------------ root
use_mode root
T=$TEST_SCRATCH/srv
mkdir -p "$T"
chmod 755 "$T"
SOCK=$T/api.sock
API_AS=root
start_server 15 --listen "unix:$SOCK" --slots 4
ok $? "[root] warren serve answers" || diag "$(cat "$SRV_ERR")"

# a command with publish: its page reached from the host; the detail and show name the port
submit "{\"command\":$(serve_cmd pa),\"worktree\":\"$WORK\",\"publish\":[\"18201:8000\"]}"
is "$CODE" 201 "[root] POST /v1/runs with publish: 201" || diag "$BODY"
PA=$ID
wait_for 20 page_is 18201 pa
ok $? "[root] a host program fetches the page served in the cell at 127.0.0.1:18201" || diag "$(logs "$PA")"
is "$(detail_ports "$PA")" '[["127.0.0.1", 18201, 8000]]' "[root] GET /v1/runs/{id}: published names the port"
wr show "$PA"
line_like "$OUT" '^ports +127\.0\.0\.1:18201->8000/tcp$' "[root] warren show: a ports row"

# refusals while it runs
refused "[root] a host port a live run publishes" "^publish: host port 18201 is published by $PA, which is running; choose another HOSTPORT\$" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"publish\":[\"18201:80\"]}"
start_bg python3 -m http.server --bind 127.0.0.1 --directory "$W/hostweb" 18202
HOSTWEB=$BG_PID
wait_for 10 _net_up http://127.0.0.1:18202/
refused "[root] a host port a program of the host listens on" \
	"^publish: 127\.0\.0\.1:18202:80: host port 18202 is in use on 127\.0\.0\.1 .*choose another HOSTPORT\$" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"publish\":[\"18202:80\"]}"
refused "[root] a publish that is not one" "^publish\[1\]: 'x:80' is not \[ADDR:\]HOSTPORT:CELLPORT" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"publish\":[\"18203:80\",\"x:80\"]}"
refused "[root] a read-write bind of /etc" "^binds\[0\] /etc: a system directory a job may not have read-write" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"binds\":[\"/etc:/x\"]}"
refused "[root] a bind of the state directory's runs" "^ro-binds\[0\] $STATE/runs: it lies in a warren state directory" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"ro-binds\":[\"$STATE/runs:/x\"]}"
ln -s "$STATE/serve" "$WORK/served"
refused "[root] a bind through a link to the server's files" "^ro-binds\[0\] $WORK/served \(that is $STATE/serve\): it lies in a warren state directory" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"ro-binds\":[\"$WORK/served:/x\"]}"
rm "$WORK/served"
refused "[root] a bind of no path" "^binds\[0\] /nonexistent/x: No such file or directory; give an existing path of the host\$" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"binds\":[\"/nonexistent/x:/x\"]}"
refused "[root] a bind of /proc" "^ro-binds\[0\] /proc/1: " \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"ro-binds\":[\"/proc/1:/x\"]}"
refused "[root] a relative bind source" "^binds\[0\] 'cache:/x': give SRC\[:DST\] with SRC an absolute path" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"binds\":[\"cache:/x\"]}"
refused "[root] a bind over the cell's /tmp" "^binds\[0\] '$WORK:/tmp': the destination /tmp: " \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"binds\":[\"$WORK:/tmp\"]}"
refused "[root] a rootfs in the state directory" "^rootfs $STATE/serve: it lies in a warren state directory" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"rootfs\":\"$STATE/serve\"}"
refused "[root] a rootfs that is no directory" "^rootfs /nonexistent: not a directory" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"rootfs\":\"/nonexistent\"}"
refused "[root] an image the store does not have" "^image: no image nope in " \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"image\":\"nope\"}"
refused "[root] publish beside a job" "^publish: .* of a job go in its job file" \
	"{\"job\":\"steps: [{run: 'true'}]\",\"worktree\":\"$WORK\",\"publish\":[\"18204:80\"]}"
serve_job jb 18201
refused "[root] a job file's publish: of a port a live run publishes" "^job:publish: host port 18201 is published by $PA" \
	"{\"job\":$(jstr "$(cat "$WORK/jb.yaml")"),\"worktree\":\"$WORK\"}"
stop_run pa
wait_for 30 run_ended "$PA"
is "$(row "$PA" state):$(row "$PA" exit_code)" "exited:0" "[root] the published run ends well"

# warren submit --publish --ro-bind: mapped to the request; the bind is there, the port too
D=$TEST_SCRATCH/data
mkdir -p "$D" && echo from-the-bind >"$D/f" && chmod -R go+rX "$D"
wr submit --via "unix:$SOCK" --work "$WORK" --publish 18205:8000 --ro-bind "$D:/data" -- \
	sh -c '(cd /tmp && cp /data/f index.html && exec python3 -m http.server 8000 >/dev/null 2>&1) & for i in $(seq 600); do [ -e stop-sb ] && exit 0; sleep 0.1; done; exit 1'
SB=$(awk '{print $1}' <<<"$OUT")
is "$RC" 0 "[root] warren submit --publish --ro-bind: queued" || diag "$ERR"
wait_for 20 page_is 18205 from-the-bind
ok $? "[root] ... its page (a file of the bind) reached at 127.0.0.1:18205" || diag "$(logs "$SB")"
stop_run sb
wait_for 30 run_ended "$SB"
wr submit --via "unix:$SOCK" --work "$WORK" --bind /etc -- true
is "$RC:$ERR" "125:warren: the server refused (HTTP 400): binds[0] /etc: a system directory a job may not have read-write; use --ro-bind, or bind a directory of your own" \
	"[root] warren submit --bind /etc: refused in one line"
wr submit --via "unix:$SOCK" --work "$WORK" --image nope -- true
like "$RC:$ERR" "^125:warren: the server refused \(HTTP 400\): image: no image nope in " "[root] warren submit --image of no image: refused in one line"

# a job file's publish: through warren job run, then through the server
serve_job jr 18206
start_bg env --default-signal=INT "$WARREN" job run "$WORK/jr.yaml" --state "$STATE" --quiet
JR=$BG_PID
wait_for 20 page_is 18206 jr
ok $? "[root] warren job run of a job file with publish: its page reached at 127.0.0.1:18206" || diag "$(cat "$BG_ERR")"
JR_RD=$(last_rundir)
stop_run jr
wait_bg "$JR" 30
is "$RC" 0 "[root] ... the job ends well"
is "$(jget "$JR_RD/result.json" '[(p["host_port"], p["cell_port"]) for p in d["published"]] + [d["network"]["mode"]]')" \
	'[[18206, 8000], "nat"]' "[root] ... result.json: its published port, network nat"
serve_job js 18207
wr submit --via "unix:$SOCK" --job "$WORK/js.yaml" --work "$WORK"
JS=$(awk '{print $1}' <<<"$OUT")
wait_for 20 page_is 18207 js
ok $? "[root] warren submit --job with publish: its page reached at 127.0.0.1:18207" || diag "$ERR $(logs "$JS")"
is "$(detail_ports "$JS")" '[["127.0.0.1", 18207, 8000]]' "[root] ... GET /v1/runs/{id} names its port"
stop_run js
wait_for 30 run_ended "$JS"
is "$(row "$JS" state):$(row "$JS" exit_code)" "exited:0" "[root] ... the job ends well"
kill "$HOSTWEB"
stop_server 20
is "$(world_idle)" "" "[root] nothing of the runs is left (rules, sets, veths, leases)"

# ------------------------------------------------------------------------------ rootless
use_mode user
net_world_rootless
T=$TEST_SCRATCH/usrv
mkdir_for_mode "$T"
SOCK=$T/api.sock
API_AS=mode
start_server 15 --listen "unix:$SOCK" --slots 4
ok $? "[user] warren serve answers" || diag "$(cat "$SRV_ERR")"
refused "[user] publish with the default network (nat): a rootless run publishes under net none only" \
	"^publish: --publish with --net nat needs root: .*only with --net none" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"publish\":[\"18211:8000\"]}"
submit "{\"command\":$(serve_cmd ua),\"worktree\":\"$WORK\",\"net\":\"none\",\"publish\":[\"18211:8000\"]}"
is "$CODE" 201 "[user] POST /v1/runs with net none and publish: 201" || diag "$BODY"
UA=$ID
wait_for 20 page_is 18211 ua
ok $? "[user] its page reached at 127.0.0.1:18211 (pasta)" || diag "$(logs "$UA")"
is "$(detail_ports "$UA")" '[["127.0.0.1", 18211, 8000]]' "[user] GET /v1/runs/{id} names its port"
refused "[user] a host port in use (this run's, through pasta)" "^publish: 127\.0\.0\.1:18211:80: host port 18211 is in use" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"net\":\"none\",\"publish\":[\"18211:80\"]}"
stop_run ua
wait_for 30 run_ended "$UA"
refused "[user] a bind of the state directory" "^ro-binds\[0\] $STATE: it lies in a warren state directory" \
	"{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"ro-binds\":[\"$STATE:/x\"]}"
serve_job ujs 18213 "network: none"
wr submit --via "unix:$SOCK" --job "$WORK/ujs.yaml" --work "$WORK"
UJS=$(awk '{print $1}' <<<"$OUT")
wait_for 20 page_is 18213 ujs
ok $? "[user] warren submit --job with network: none and publish: its page reached at 127.0.0.1:18213" || diag "$ERR $(logs "$UJS")"
is "$(detail_ports "$UJS")" '[["127.0.0.1", 18213, 8000]]' "[user] ... GET /v1/runs/{id} names its port"
stop_run ujs
wait_for 30 run_ended "$UJS"
serve_job ujr 18212 "network: none"
start_bg "${RUNNER[@]}" env --default-signal=INT "$WARREN" job run "$WORK/ujr.yaml" --state "$STATE" --quiet
UJR=$BG_PID
wait_for 20 page_is 18212 ujr
ok $? "[user] warren job run of a job file with network: none and publish: its page reached at 127.0.0.1:18212" || diag "$(cat "$BG_ERR")"
stop_run ujr
wait_bg "$UJR" 30
is "$RC" 0 "[user] ... the job ends well"
stop_server 20
is "$(pgrep -u "$TEST_USER_UID" -f "pasta|passt" | wc -l)" 0 "[user] no pasta is left"
