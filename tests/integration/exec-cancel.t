#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec-cancel.t - an exec whose caller goes away (job/session.h's "stop_on_close"). Per mode
# (root, the unprivileged user): warren exec (no -t) killed by SIGINT (Ctrl-C) stops its
# command's process tree at once (SIGTERM), one killed by SIGKILL whose command ignores SIGTERM
# has it killed after the run's grace (2s here); a caller of the run's socket that does not
# ask it leaves its command running (the default stays); a stop_on_close that is not a boolean
# is refused in one line; the record names each stop's cause (interrupted, exit 143). Over the
# API of a warren serve: an exec with "stop_on_close" whose client goes away is stopped (a
# stream and a plain answer), one without it runs on, warren exec --via killed by SIGINT stops
# its command; a wrong type is 400. Nothing is left.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

# Tests: per mode 15 on the run's socket and 9 over the API.
plan $(((15 + 9) * 2))

job_file() {
	JF=$WORK/$1.yaml
	cat >"$JF"
	chmod 644 "$JF"
}
new_rundir() { local l; l=$(last_rundir); [ -n "$l" ] && [ "$l" != "$1" ]; }
# session_bg FILE: warren job run FILE in the background; waits for its session's socket (RD, ID).
session_bg() {
	local before
	RD=$STATE/runs/none ID=none
	before=$(last_rundir)
	start_bg "${RUNNER[@]}" env --default-signal=INT "$WARREN" job run "$1" --state "$STATE" --work "$WORK"
	JOB_PID=$BG_PID JOB_OUT=$BG_OUT JOB_ERR=$BG_ERR
	wait_for 30 new_rundir "$before" || return 1
	RD=$(last_rundir); ID=$(basename "$RD")
	wait_for 30 test -S "$RD/session.sock"
}
# sock_req RUNDIR JSON: JSON sent as one line to RUNDIR's session socket (as the mode's user);
# prints the first line of the answer, then closes the connection.
sock_req() {
	"${RUNNER[@]}" "$PY" - "$1" "$2" <<'PYEOF'
import os, socket, sys
d = os.open(sys.argv[1], os.O_PATH)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect("/proc/self/fd/%d/session.sock" % d)
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())
s.close()
PYEOF
}
# exec_steps RESULT: the record's execs, "status:exit_code:cause" a line each.
exec_steps() {
	jget "$1" '"\n".join("%s:%s:%s" % (s["status"], s["exit_code"], s["cause"]) for s in d["steps"] if s.get("kind") == "exec")'
}
# gone_within SECS ARG: the job's "sleep ARG" ends within SECS seconds (a decimal; 0 when it did).
gone_within() {
	local i n=$(("${1%.*}" * 10 + ${1#*.}))
	[[ $1 == *.* ]] || n=$(($1 * 10))
	for ((i = 0; i < n; i++)); do
		job_gone "$2" && return 0
		sleep 0.1
	done
	job_gone "$2"
}

for mode in root user; do
	use_mode "$mode"
	m="[$mode]"
	job_file cancel <<'EOF'
session: { idle: 2m, max: 5m }
limits: { grace: 2s }
EOF
	session_bg "$JF"; ok $? "$m a session is up"

	is "$(sock_req "$RD" '{"op":"exec","command":["true"],"stop_on_close":"yes"}')" \
		'{"error":"stop_on_close must be true or false","status":400}' "$m a stop_on_close that is not a boolean is refused in one line"

	# Ctrl-C of warren exec: its command gets SIGTERM at once (well within the grace)
	a=$(uniq_arg)
	start_bg "${RUNNER[@]}" env --default-signal=INT "$WARREN" exec --state "$STATE" "$ID" -- sh -c "sleep $a; echo never"
	xpid=$BG_PID
	wait_for 10 job_alive "$a"; ran=$?
	ok $ran "$m warren exec's command runs"
	kill -INT "$xpid"
	wait_bg "$xpid" 10
	is "$RC" 130 "$m warren exec ends by the SIGINT (Ctrl-C) ..."
	[ $ran = 0 ] && gone_within 1.5 "$a"; ok $? "$m ... and its command is gone within 1.5s (SIGTERM; the grace is 2s)"

	# warren exec killed (SIGKILL) while its command ignores SIGTERM: SIGKILL after the grace
	b=$(uniq_arg)
	start_bg "${RUNNER[@]}" "$WARREN" exec --state "$STATE" "$ID" -- sh -c "trap '' TERM; sleep $b"
	xpid=$BG_PID
	wait_for 10 job_alive "$b"
	kill -KILL "$xpid"
	wait_bg "$xpid" 10
	sleep 1
	job_alive "$b"; ran=$?
	ok $ran "$m a command that ignores SIGTERM outlives its killed caller for the grace ..."
	[ $ran = 0 ] && gone_within 5 "$b"; ok $? "$m ... and is killed after it (SIGKILL to its tree)"

	# the run's socket without stop_on_close: the caller's going leaves the command running
	c=$(uniq_arg)
	like "$(sock_req "$RD" "{\"op\":\"exec\",\"command\":[\"sleep\",\"$c\"],\"stream\":true}")" '^\{"exec":[0-9]+\}$' \
		"$m an exec asked without stop_on_close starts ..."
	sleep 1.5
	job_alive "$c"; ok $? "$m ... and runs on after its caller closed the connection (the default)"

	wr end "$ID"
	wait_bg "$JOB_PID" 30
	is "$RC" 0 "$m the session ends normally"
	steps=$(exec_steps "$RD/result.json")
	like "$(sed -n 1p <<<"$steps")" '^interrupted:143:its caller went away at [0-9.]+s \(its connection closed\); sent SIGTERM to its process tree$' \
		"$m the record names the cause of the Ctrl-C's stop (interrupted, 143)" || diag "$steps"
	like "$(sed -n 2p <<<"$steps")" '^interrupted:143:its caller went away at [0-9.]+s \(its connection closed\); sent SIGTERM to its process tree, then SIGKILL after 2s$' \
		"$m ... and of the kill's, with its SIGKILL after the grace"
	like "$(sed -n 3p <<<"$steps")" '^interrupted:None:' "$m the exec that ran on was cut by the session's end"
	grep -q "✖ exec 1: its caller went away at" "$JOB_OUT" "$JOB_ERR"; ok $? "$m the session's terminal says it"
	nothing_left "$RD" "$m nothing is left of the session"

	# ---- over the API of a warren serve (as the mode's user)
	SOCK=$(dirname "$STATE")/cancel-api.sock
	start_server 15 --listen "unix:$SOCK" --slots 2; ok $? "$m warren serve answers"
	api POST '/v1/runs?wait=ready' "{\"session\": {\"idle\": \"1m\"}, \"worktree\": $(jstr "$WORK")}"
	ID=$(jbody 'd["id"]'); RD=$STATE/runs/$ID
	api POST "/v1/runs/$ID/exec" '{"command": ["true"], "stop_on_close": 1}'
	is "$CODE $(jbody 'd["error"]')" "400 stop_on_close must be true or false" "$m API: a stop_on_close that is not a boolean is 400"
	# exec_client ARG [QUERY] [FIELDS]: curl POSTs sleep ARG (and FIELDS) to .../exec?QUERY, in the
	# background (CURL_PID), once it runs
	exec_client() {
		start_bg "${RUNNER[@]}" curl -s -N --unix-socket "$SOCK" -X POST \
			--data-binary "{\"command\": [\"sleep\", \"$1\"]${3:+, $3}}" "http://warren/v1/runs/$ID/exec${2:+?$2}"
		CURL_PID=$BG_PID
		wait_for 10 job_alive "$1"
	}
	a=$(uniq_arg)
	exec_client "$a" stream=1 '"stop_on_close": true'; ran=$?
	ok $ran "$m API: a streamed exec with stop_on_close runs ..."
	kill -KILL "$CURL_PID"; wait "$CURL_PID" 2>/dev/null
	[ $ran = 0 ] && gone_within 1.5 "$a"; ok $? "$m ... and is stopped at once when its client goes away"
	b=$(uniq_arg)
	exec_client "$b" '' '"stop_on_close": true'; ran=$?
	kill -KILL "$CURL_PID"; wait "$CURL_PID" 2>/dev/null
	[ $ran = 0 ] && gone_within 1.5 "$b"; ok $? "$m API: so is one that waits for its one answer (it ran, it is gone)"
	c=$(uniq_arg)
	exec_client "$c" stream=1
	kill -KILL "$CURL_PID"; wait "$CURL_PID" 2>/dev/null
	sleep 1.5
	job_alive "$c"; ok $? "$m API: one without stop_on_close runs on after its client went away (the default)"
	d=$(uniq_arg)
	start_bg "${RUNNER[@]}" env --default-signal=INT "$WARREN" exec --via "unix:$SOCK" "$ID" -- sleep "$d"
	xpid=$BG_PID
	wait_for 10 job_alive "$d"; ran=$?
	kill -INT "$xpid"; wait "$xpid" 2>/dev/null
	[ $ran = 0 ] && gone_within 1.5 "$d"; ok $? "$m warren exec --via killed by SIGINT: its command is stopped at once"
	api POST "/v1/runs/$ID/end"
	wait_for 30 run_ended "$ID"
	is "$(exec_steps "$RD/result.json" | cut -d: -f1,2 | tr '\n' ' ')" \
		"interrupted:143 interrupted:143 interrupted:None interrupted:143 " "$m API: the record has each stop (the one that ran on cut by the end)"
	stop_server 30
	nothing_left "$RD" "$m nothing is left of the API's session"
done
