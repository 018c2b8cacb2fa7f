#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# serve_bind_state.sh MODE - escape class serve_bind_state (issue 32, item 4): a command sent to
# `warren serve` names binds of its own (POST /v1/runs "binds", "ro-binds", as warren run
# --bind). They are the caller's words, as its worktree, but the one gate judges them as it
# judges the command line's: no bind of the server's state directory (every served job's file
# and env: a deploy token), of its runs' records and scratch, of /proc, nor a system directory
# read-write, nor any of them through a link of the caller's. Each is tried; held when each is refused (400) and no run shows the path.
# Modes: root, user.
CLASS=serve_bind_state
. "$(dirname "$0")/lib.sh"
face_setup root user
command -v curl >/dev/null || verdict "untested: curl is not installed"
mkdir -p "$D/state" "$D/work" "$D/k"   # k: the socket's, a short path (at most 107 bytes)
mine "$D/state" "$D/work" "$D/k"
SOCK=$D/k/s
"${RUN[@]}" "$WARREN" serve --state "$D/state" --listen "unix:$SOCK" --slots 1 </dev/null >"$D/serve.log" 2>&1 &
FACE_PIDS+=($!)
for _ in $(seq 100); do "${RUN[@]}" curl -sf --max-time 2 --unix-socket "$SOCK" http://warren/healthz -o /dev/null && break; sleep 0.1; done
api() { "${RUN[@]}" curl -s --max-time 30 --unix-socket "$SOCK" -w '\n%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary "$1" "http://warren$2"; }
# a run with a secret in its env, whose job file the server keeps
out=$(api '{"command": ["true"], "worktree": "'"$D/work"'", "env": {"DEPLOY_TOKEN": "tok-'$$'"}}' '/v1/runs?wait=1')
[ "${out##*$'\n'}" = 201 ] || [ "${out##*$'\n'}" = 200 ] || verdict "untested: the server did not take a plain run: ${out//$'\n'/ } ($(head -3 "$D/serve.log" | tr "\n" " "))"
ln -s "$D/state/serve" "$D/work/served"   # a link of the caller's to the served jobs
mine -h "$D/work/served"
for f in "ro-binds:$D/work/served" "ro-binds:$D/state/serve" "ro-binds:$D/state" "binds:$D/state/runs" "ro-binds:/proc/1" "binds:/etc"; do
	field=${f%%:*} src=${f#*:}
	out=$(api '{"command": ["sh", "-c", "cat /x/*.job.json /x/serve/*.job.json 2>/dev/null; ls /x"], "worktree": "'"$D/work"'", "'"$field"'": ["'"$src"':/x"]}' '/v1/runs?wait=1')
	code=${out##*$'\n'} body=${out%$'\n'*}
	echo "$CLASS: tried $field $src:/x in a command sent to the server: HTTP $code: $(tr -s '\n ' ' ' <<<"$body")"
	id=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get("id",""))' "$body" 2>/dev/null)
	[ -n "$id" ] && grep -rqs "tok-$$" "$D/state/runs/$id/log" && escaped "$field $src: the run read the served jobs' env (tok-$$)"
	[ -n "$id" ] && escaped "$field $src:/x was not refused: run $id (HTTP $code)"
	[ "$code" = 400 ] || escaped "$field $src:/x: HTTP $code, not the gate's 400"
	[[ $body == *"unknown field '$field'"* ]] && verdict "untested: this server takes no field $field"
done
held
