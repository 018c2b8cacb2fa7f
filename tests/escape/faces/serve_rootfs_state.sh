#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# serve_rootfs_state.sh MODE - escape class serve_rootfs_state (issue 31, class 3): a job sent
# to `warren serve` resolved its relative paths in the server's private <state>/serve, so
# `rootfs: .` made that directory, which holds every served job's file and its env (a deploy
# token), the cell's root. A job sent to the server may only name paths below its request's
# worktree, never a state directory (cell/gate.h): the server answers 400. Modes: root, user.
CLASS=serve_rootfs_state
. "$(dirname "$0")/lib.sh"
face_setup root user
command -v curl >/dev/null || verdict "untested: curl is not installed"
mkdir -p "$D/state" "$D/work" "$D/sock"
mine "$D/state" "$D/work" "$D/sock"
SOCK=$D/sock/s.sock
"${RUN[@]}" "$WARREN" serve --state "$D/state" --listen "unix:$SOCK" --slots 1 </dev/null >"$D/serve.log" 2>&1 &
FACE_PIDS+=($!)
SERVE_LOG=$D/serve.log
for _ in $(seq 100); do "${RUN[@]}" curl -sf --max-time 2 --unix-socket "$SOCK" http://warren/healthz -o /dev/null && break; sleep 0.1; done
api() { "${RUN[@]}" curl -s --max-time 30 --unix-socket "$SOCK" -w '\n%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary "$1" "http://warren$2"; }
# a run with a secret in its env, whose job file the server keeps
out=$(api '{"command": ["true"], "worktree": "'"$D/work"'", "env": {"DEPLOY_TOKEN": "tok-'$$'"}}' '/v1/runs?wait=1')
[ "${out##*$'\n'}" = 201 ] || [ "${out##*$'\n'}" = 200 ] || verdict "untested: the server did not take a plain run: ${out//$'\n'/ } ($(head -3 "$SERVE_LOG" | tr "\n" " "))"
# the job's root: ".", "../state/serve" and the absolute path of the server's own directory
for r in . ../state/serve "$D/state/serve"; do
	job='{"job": "rootfs: '"$r"'\nsteps: [ { run: \"true\" } ]\n", "worktree": "'"$D/work"'"}'
	out=$(api "$job" '/v1/runs?wait=1')
	code=${out##*$'\n'} body=${out%$'\n'*}
	echo "$CLASS: tried a job with rootfs: $r sent to the server: HTTP $code: $body"
	id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("id",""))' "$body" 2>/dev/null)
	root=
	[ -n "$id" ] && root=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("rootfs") or "")' "$D/state/runs/$id/spec.json" 2>/dev/null)
	[ -n "$root" ] && [[ $root == "$D/state"* ]] && escaped "the served job's root was $root, the server's own directory (every served job's file and env)"
	if [ "$r" != . ]; then
		[ "$code" = 400 ] && [[ $body == *"it is outside its worktree"* ]] || escaped "rootfs: $r was not refused by the gate (HTTP $code)"
	fi
done
held
