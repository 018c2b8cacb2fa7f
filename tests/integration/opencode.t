#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# opencode.t - issue 32, item 7: the seed scenario. An orchestrator (this script, bash and curl)
# starts a `warren serve` of its own on a unix socket and, through its API, a session whose
# service is the real `opencode serve` (opencode-ai's Linux binary from npm, installed once into
# build/opencode; read-only in the cell as the rest of the host's /) on a small git worktree,
# with --net none and its port 4096 published at a free loopback port, ?wait=ready on a TCP
# readiness check. Then from the host: opencode's HTTP API answers at the published port (its
# health, the worktree and home it works in, a session of its own made and listed, no model
# needed); an exec in the same cell sees opencode's scratch $TMPDIR/opencode, the run user's, and
# writes there as an agent does, while the service runs as the run user with TMPDIR=/tmp and a
# home of the cell's own, and cannot change its binary; the host finds that scratch through the
# files API (the cell's /tmp is a file system of the cell's own), its /tmp has nothing of it,
# and the cell starts no connection. The session ends
# through the API; nothing is left: no process, mount, cgroup, firewall rule, link, lease or
# pasta, the published port is closed, the scratch is gone, the record names the port. As root
# (a veth and nftables rules, in a network world of the script's own: nothing is sent beyond
# it) and rootless (pasta). The first start of opencode's Bun binary in a fresh home takes some
# seconds (it makes its database): the timings are in the TAP comments.
. "$(dirname "$0")/../lib.sh"
OC_DIR=$REPO/build/opencode
OC=$OC_DIR/node_modules/opencode-linux-x64/bin/opencode
OC_VERSION=1.18.33
if [ -z "${WARREN_NET_WORLD:-}" ]; then
	# on the host's network (the registry), then the test in a world of its own
	command -v npm >/dev/null || bail_out "npm is needed: apt-get install npm (scripts/install-deps)"
	npm_cached "$REPO/tests/opencode" "$OC_DIR" ||
		bail_out "npm ci of tests/opencode into build/opencode failed (the npm registry is needed once for opencode-linux-x64)"
	env WARREN_NET_WORLD=1 unshare --net --mount --propagation private bash "$0" "$@"
	exit
fi
. "$REPO/tests/serve-lib.sh"

command -v git >/dev/null || bail_out "git is needed (scripts/install-deps)"
[ -x "$OC" ] || bail_out "no opencode binary at $OC"
chmod 755 "$OC_DIR"
# (its --version writes a home and $TMPDIR/opencode: the scratch's, not the host's)
mkdir -p "$TEST_SCRATCH/oc-home" "$TEST_SCRATCH/oc-tmp"
v=$(HOME=$TEST_SCRATCH/oc-home TMPDIR=$TEST_SCRATCH/oc-tmp timeout 60 "$OC" --version 2>&1)
[ "$v" = "$OC_VERSION" ] || bail_out "$OC --version says '$v', not $OC_VERSION (an x64 CPU with AVX2 is needed)"

net_world_up
# Tests: per mode 29.
plan $((29 * 2))

# free_port: a TCP port nothing listens on at 127.0.0.1 (in this script's network world).
free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# oc METHOD PATH [BODY]: a request to opencode at the published port, at most 10 s; CODE, BODY.
oc() {
	local out args=(-s -m 10 -w '\n%{http_code}' -X "$1" "http://127.0.0.1:$PORT$2")
	[ -n "${3:-}" ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
	out=$(curl "${args[@]}")
	CODE=${out##*$'\n'}
	BODY=${out%$'\n'*}
}
oc_answers() { curl -s -m 2 -o /dev/null "http://127.0.0.1:$PORT/global/health"; }
port_closed() { ! curl -s -m 2 -o /dev/null "http://127.0.0.1:$PORT/"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# ex SCRIPT: an exec of sh -c SCRIPT in the session over the API; CODE, BODY (its answer).
ex() { api POST "/v1/runs/$ID/exec" "{\"command\": [\"sh\", \"-c\", $(jstr "$1")]}"; }
# what of this test's probe or of opencode the host's /tmp got since the marker
host_tmp_news() { find /tmp -maxdepth 3 -newer "$MARKER" \( -name '*opencode*' -o -name "$PROBE" \) 2>/dev/null; }

host_tmp_marker || bail_out "cannot make a marker in /tmp"
for mode in root user; do
	use_mode "$mode"
	m="[$mode]"
	[ "$mode" = user ] && net_world_rootless
	T=$TEST_SCRATCH/srv-$mode
	mkdir_for_mode "$T"
	SOCK=$T/api.sock
	API_AS=mode
	start_server 15 --listen "unix:$SOCK" --slots 2
	ok $? "$m warren serve answers on its unix socket" || diag "$(cat "$SRV_ERR")"

	# the task's worktree: a small git repository of the mode's user
	R=$WORK/task
	mkdir_for_mode "$R"
	"${RUNNER[@]}" sh -c 'cd "$1" && git init -q && echo "print(1)" >main.py && git add . &&
		git -c user.name=seed -c user.email=seed@example.invalid commit -qm seed' sh "$R" ||
		diag "git init of $R failed"
	PORT=$(free_port)
	PROBE=oc-probe-$$-$RANDOM
	JOB="name: opencode-seed
network: none
publish: [\"127.0.0.1:$PORT:4096\"]
session: { idle: 5m, max: 15m }
env:
  OPENCODE_DISABLE_AUTOUPDATE: \"1\"
  OPENCODE_DISABLE_SHARE: \"1\"
  OPENCODE_DISABLE_MODELS_FETCH: \"1\"
  OPENCODE_DISABLE_LSP_DOWNLOAD: \"1\"
  OPENCODE_DISABLE_DEFAULT_PLUGINS: \"1\"
services:
  opencode:
    run: exec $OC serve --port 4096 --hostname 0.0.0.0
    ready: { tcp: 4096, timeout: 120s }
"
	t0=$(now_ms)
	API_TIMEOUT=180 api POST '/v1/runs?wait=ready' "{\"job\": $(jstr "$JOB"), \"worktree\": $(jstr "$R")}"
	t_ready=$(now_ms)
	ID=$(jbody 'd["id"]')
	RD=$STATE/runs/$ID
	is "$CODE $(jbody 'd["state"]')" "201 ready" "$m POST /v1/runs {job: session, opencode serve, publish} ?wait=ready: ready" ||
		diag "$BODY" "$(logs "$ID")"
	wait_for 30 oc_answers
	t_http=$(now_ms)
	diag "$m session submitted -> ready: $((t_ready - t0)) ms; -> first HTTP answer of opencode at 127.0.0.1:$PORT: $((t_http - t0)) ms"
	oc GET /global/health
	is "$CODE $BODY" "200 {\"healthy\":true,\"version\":\"$OC_VERSION\"}" "$m opencode answers the host at the published port: healthy, its version"

	# what opencode says of itself, and a session of its own (no model, no provider needed)
	ex 'echo "$HOME"; id -un'
	cell_home=$(jbody 'd["stdout"]' | sed -n 1p)
	is "$(jbody 'd["stdout"]' | sed -n 2p)" "$JOB_USER" "$m an exec through the API runs as the run user ($JOB_USER)"
	oc GET /path
	is "$(jbody '[d["directory"], d["worktree"], d["home"]]')" "[\"$R\", \"$R\", \"$cell_home\"]" \
		"$m GET /path: opencode works in the worktree, its home the cell's ($cell_home)"
	oc POST /session '{"title": "seed scenario"}'
	oc_ses=$(jbody 'd["id"]')
	like "$CODE $oc_ses $(jbody 'd["directory"]')" "^200 ses_[0-9A-Za-z]+ $R\$" "$m POST /session: opencode makes a session of its own in the worktree" ||
		diag "$BODY"
	oc GET /session
	is "$(jbody '[s["id"] for s in d]')" "[\"$oc_ses\"]" "$m GET /session lists it"

	# opencode's scratch: $TMPDIR/opencode, the run user's, in the cell's own /tmp
	ex "stat -c '%U %F' \"\$TMPDIR/opencode\"; echo \$TMPDIR; mkdir \"\$TMPDIR/opencode/$PROBE\" && echo agent >\"\$TMPDIR/opencode/$PROBE/notes\" && echo wrote"
	is "$CODE $(jbody '[d["exit_code"], d["stdout"]]')" "200 [0, \"$JOB_USER directory\\n/tmp\\nwrote\\n\"]" \
		"$m exec: \$TMPDIR is /tmp, opencode made \$TMPDIR/opencode (the run user's), the agent writes its own scratch under it" ||
		diag "$BODY"
	# the service itself: its user, TMPDIR and HOME as the cell gave them
	ex 'for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = opencode ] || continue; stat -c %U $p; tr "\0" "\n" <$p/environ | grep -E "^(TMPDIR|HOME)=" | sort; done'
	is "$(jbody 'd["stdout"]')" "$JOB_USER"$'\n'"HOME=$cell_home"$'\n'"TMPDIR=/tmp" "$m the service opencode runs as the run user with TMPDIR=/tmp and the cell's home" ||
		diag "$BODY"
	ex 'ls "$HOME/.local/share/opencode/opencode.db" && stat -c %U "$HOME/.local/share/opencode"'
	is "$(jbody '[d["exit_code"], d["stdout"]]')" "[0, \"$cell_home/.local/share/opencode/opencode.db\\n$JOB_USER\\n\"]" \
		"$m its database is in the cell's private home"
	ex "touch $OC 2>&1; echo \$?"
	like "$(jbody 'd["stdout"]')" "Read-only file system"$'\n'"1\$" "$m the opencode binary is read-only in the cell"
	# from the host (the cell's /tmp is a file system of the cell's own): the scratch through the
	# files API; the host's /tmp and home have none of it
	api GET "/v1/runs/$ID/files?path=/tmp/opencode&list=1"
	like "$CODE $(jbody '" ".join(e["name"] for e in d["entries"])')" "^200 (.* )?$PROBE( |\$)" \
		"$m the host finds the scratch through the files API (GET .../files?path=/tmp/opencode&list=1)" || diag "$BODY"
	api GET "/v1/runs/$ID/files?path=/tmp/opencode/$PROBE/notes"
	is "$CODE $BODY" "200 agent" "$m ... and reads what the agent wrote there"
	is "$(host_tmp_news)" "" "$m the host's /tmp has nothing of opencode or of the agent's scratch"
	if [ "$mode" = user ]; then
		[ ! -e "$U_HOME/.local/share/opencode" ] && [ ! -e "$U_HOME/.cache/opencode" ]
		ok $? "$m the user's own home has nothing of opencode"
	else
		[ "$cell_home" != /root ] && [ "$cell_home" != "$HOME" ]
		ok $? "$m the cell's home ($cell_home) is not root's"
	fi
	# (the world's web server, which the host reaches: from the cell, refused)
	api POST "/v1/runs/$ID/exec" '{"command": ["bash", "-c", "exec 3<>/dev/tcp/203.0.113.10/8080 && echo connected"], "timeout": "10s"}'
	like "$(jbody '[d["exit_code"], d["stdout"], d["stderr"]]')" '^\[1, "", ".*/dev/tcp/203\.0\.113\.10/8080: (Connection refused|Network is unreachable)' \
		"$m the cell starts no connection (net none: its published port only)"

	# the end, through the API; nothing is left
	api POST "/v1/runs/$ID/end"
	is "$CODE" 202 "$m POST /v1/runs/{id}/end: 202"
	wait_for 60 run_ended "$ID"
	is "$(row "$ID" state):$(row "$ID" exit_code)" "exited:0" "$m the session ended normally (exited, 0)"
	like "$(api_curl 10 "http://warren/v1/runs/$ID/logs?step=service-opencode")" "opencode server listening on http://0\.0\.0\.0:4096" \
		"$m the service's log in the record has opencode's own line"
	is "$(jget "$RD/result.json" '[d["network"]["mode"]] + [(p["host_port"], p["cell_port"]) for p in d["published"]]')" \
		"[\"none+publish\", [$PORT, 4096]]" "$m the record: network none+publish, its published port"
	check "$m the published port is closed" port_closed
	api GET "/v1/runs/$ID/files?path=/tmp/opencode&list=1"
	is "$CODE" 409 "$m the scratch is gone with the session: the files API answers 409"
	nothing_left "$RD" "$m nothing of the run is left: scratch (with \$TMPDIR/opencode), mounts, processes, cgroups"
	is "$(procs_matching "$OC")" "" "$m no opencode process is left"
	is "$(net_left "$ID")" "" "$m no firewall rule, link or lease of the run is left"
	if [ "$mode" = user ]; then
		is "$(pgrep -u "$TEST_USER_UID" -f "pasta|passt" | wc -l)" 0 "$m no pasta is left"
	else
		is "$(nft list ruleset 2>/dev/null | grep -c "$PORT")" 0 "$m no nftables rule names the port"
	fi
	is "$(host_tmp_news)" "" "$m the host's /tmp still has nothing of it"
	stop_server 30
	is "$RC" 0 "$m the server stops cleanly"
	is "$(state_clean)" "" "$m nothing of any run is left under the state"
done
