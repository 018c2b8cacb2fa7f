#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# serve_job_read.sh MODE - issue 31, class 3b: the files a root `warren serve` writes for its
# jobs (<state>/serve/<id>.job.json, whose env: may carry a secret such as a deploy token, and
# warm.job.json, the warm cells' job) are the server's user's alone. The state directory is
# 0755 (others reach the server's socket in it) and its serve/ was left 0755 (an admin, an older
# setup); a job with a secret in its env: runs, and the test user tries to read every job file
# while it runs and after.
# Environment: WARREN, SCRATCH (or TEST_SCRATCH), TEST_USER (default warren-test). Last line:
# serve_job_read: held | ESCAPED: WHAT | untested: WHY
set -u
CLASS=serve_job_read
MODE=${1:-}
say() { echo "$CLASS: $*"; exit 0; }
note() { echo "# $*"; }
case $MODE in
root) ;;
user) say "untested: a rootless server writes its jobs' files the same way (see root)" ;;
image | vm) say "untested: the server's job files are the same whatever makes the cells (see root)" ;;
*) say "untested: unknown mode '$MODE' (give root, user, image or vm)" ;;
esac
[ "$(id -u)" = 0 ] || say "untested: run as root (a root server, read by another user)"
[ -x "${WARREN:-}" ] || say "untested: no warren binary in WARREN"
command -v curl >/dev/null || say "untested: curl is needed"
base=${SCRATCH:-${TEST_SCRATCH:-}}
[ -d "$base" ] || say "untested: no scratch directory in SCRATCH"
user=${TEST_USER:-warren-test}
uid=$(id -u "$user" 2>/dev/null) || say "untested: no user $user"
gid=$(id -g "$user")
D=$(mktemp -d -p "$base" serve_job_read.XXXXXX) || say "untested: mktemp failed"
chmod 755 "$D"
srv=
cleanup() {
	if [ -n "$srv" ]; then
		kill -TERM "$srv" 2>/dev/null
		for _ in $(seq 1 300); do kill -0 "$srv" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
	fi
	rm -rf --one-file-system -- "$D"
}
trap cleanup EXIT
ST=$D/state
mkdir -p "$ST/serve" "$D/work" "$D/warm"
chmod 755 "$ST" "$ST/serve" "$D/work" "$D/warm"
SOCK=$D/api.sock
api() { curl -s --max-time 20 --unix-socket "$SOCK" "$@"; }
json() { /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1" 2>/dev/null; }

"$WARREN" serve --state "$ST" --listen "unix:$SOCK" --warm 1 --warm-work "$D/warm" >"$D/serve.log" 2>&1 &
srv=$!
for _ in $(seq 1 300); do api -f -o /dev/null http://warren/healthz && break; sleep 0.1; done
api -f -o /dev/null http://warren/healthz || say "untested: warren serve did not answer /healthz ($(tail -1 "$D/serve.log"))"

# leaks: the job files in serve/ that the test user reads, or whose mode lets others read
leaks() {
	local f got=
	for f in "$ST"/serve/*.job.json; do
		[ -e "$f" ] || continue
		if setpriv --reuid="$uid" --regid="$gid" --clear-groups head -c 1 "$f" >/dev/null 2>&1; then
			got+=" ${f##*/} (read by uid $uid)"
		elif [ $((0$(stat -c %a "$f") & 044)) != 0 ]; then
			got+=" ${f##*/} (mode $(stat -c %a "$f"))"
		fi
	done
	echo "${got# }"
}

job=$'env:\n  DEPLOY_TOKEN: deploy-secret-31\nsteps:\n  - name: main\n    run: sleep 4; echo done\n'
body=$(/usr/bin/python3 -c 'import json,sys; print(json.dumps({"job": sys.argv[1], "worktree": sys.argv[2]}))' "$job" "$D/work")
id=$(api -X POST -H 'Content-Type: application/json' --data-binary "$body" http://warren/v1/runs | json 'd["id"]')
[ -n "$id" ] || say "untested: the job was not taken ($(api -X POST -H 'Content-Type: application/json' --data-binary "$body" http://warren/v1/runs))"
for _ in $(seq 1 100); do [ -e "$ST/serve/$id.job.json" ] && break; sleep 0.1; done
[ -e "$ST/serve/$id.job.json" ] || say "untested: the server wrote no $ST/serve/$id.job.json"
grep -q deploy-secret-31 "$ST/serve/$id.job.json" || say "untested: the job file does not hold the job's env"
note "while it runs: $(cd "$ST/serve" && stat -c '%n %a' -- *.job.json | tr '\n' ' ')"
leak=$(leaks)
[ -z "$leak" ] || say "ESCAPED: a served job's file, with its env (a deploy token), while it runs: $leak"
for _ in $(seq 1 200); do
	state=$(api "http://warren/v1/runs/$id" | json 'd["run"]["state"]')
	[ -n "$state" ] && [ "$state" != queued ] && [ "$state" != running ] && break
	sleep 0.1
done
note "the run ended: ${state:-?}"
leak=$(leaks)
[ -z "$leak" ] || say "ESCAPED: the served jobs' files after the run: $leak"
say held
