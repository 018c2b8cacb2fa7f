#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# warm-direct.t - issue 13: a plain command given a warm cell of `warren serve --warm` is the
# cell's job itself (its process, made with the cell, is started at the take: no executor, no
# shell between; a cold start of a command is started so too: cold-direct.t). What it sees is
# what the same command sees on the job path (a job of one step that execs it through the shell):
# its argv (quoting kept), env with
# TMPDIR=/tmp last, user, working directory, capabilities, no_new_privs, seccomp, a read-only
# host; a command that is missing or not executable ends with the same state and exit code
# (127, 126) in the answer and the record; a --scratch limit is the size of its scratch; warren
# kill stops it with its cause; its record and history row are complete after the answer; an
# answer that comes before the record says a limit the kernel enforced (a process limit). Root,
# and rootless where the host lets an unprivileged user make cells.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

plan 54

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	T=$TEST_SCRATCH/$mode-t
	mkdir_for_mode "$T"
	SOCK=$T/api.sock
	if [ "$mode" = user ]; then
		wrun -- true
		if [ "$RC" != 0 ]; then
			skip 26 "$M this host does not let $TEST_USER make cells: $ERR"
			continue
		fi
	fi
	wr_bg serve --listen "unix:$SOCK" --slots 4 --warm 2 --warm-work "$WORK"
	SRV=$BG_PID
	wait_for 30 ready_is 2
	ok $? "$M warren serve --warm 2: two warm cells" || diag "$(cat "$BG_ERR")"

	# ---- what the command sees: the same as on the job path
	direct_view_checks "$M" '"warm"'

	# ---- a missing or not executable command: the same end as on the job path
	direct_bad_commands "$M" '"warm"' "$T"
	direct_noshebang_check "$M" '"warm"' "$T"

	# ---- a --scratch limit sizes the run's scratch
	run_wait "$(direct_req '["sh","-c","df -k /tmp | tail -n 1; head -c 3000000 /dev/zero >/tmp/big; sleep 5"]' | sed 's/}$/, "limits": {"scratch": "1M"}}/')"
	is "$(jbody '[d["start"], d["state"]]')" '["warm", "limit"]' "$M a warm run with --scratch 1M: stopped by its limit" || diag "$BODY"
	like "$(logs "$ID")" "^tmpfs +1024 " "$M ... its scratch is 1M"
	# without one, the scratch is the default's size, as a cold run's (a warm cell's scratch is
	# made of its shape's size: a run of that size is started without init)
	wait_for 30 ready_is 2
	run_wait "$(direct_req '["sh","-c","df -k /tmp | tail -n 1"]')"
	wsize=$(logs "$ID" | awk '{print $2}')
	bounded "${RUNNER[@]}" "$WARREN" run --state "$STATE" --work "$WORK" -- sh -c 'df -k /tmp | tail -n 1'
	is "$(jbody 'd["start"]'):$wsize" "warm:$(awk '{print $2}' <<<"$OUT")" "$M a warm run's scratch without --scratch: the size a cold run's has"

	# ---- warren kill of a warm command
	submit "$(direct_req '["sleep","30"]')"
	K=$ID
	is "$(jbody 'd["start"]')" warm "$M a warm sleep 30"
	sleep 0.5
	api POST "/v1/runs/$K/kill"
	wait_for 20 result_has_steps "$K"
	is "$(outcome "$K")" '["interrupted", 143, "interrupted", 143, "kill"]' "$M warren kill: interrupted, 143, cause kill"

	# ---- the record after the answer: complete and seen by show and the history
	run_wait "$(direct_req '["sh","-c","echo rec; exit 5"]')"
	R=$ID
	is "$(jbody '[d["start"], d["exit_code"]]')" '["warm", 5]' "$M the answer has the exit code"
	wait_for 10 result_has_steps "$R"
	is "$(outcome "$R")" '["exited", 5, "failed", 5, null]' "$M ... result.json is complete"
	wr show "$R"
	line_like "$OUT" "^status +exited \\(exit 5\\)$" "$M ... warren show sees it"
	is "$(row "$R" state):$(row "$R" exit_code)" "exited:5" "$M ... and the history"

	stop_server 60
	is "$RC:$(state_clean)" "0:" "$M the server stops cleanly and leaves nothing"
done

# ---- a limit the kernel enforced names the end, also when the answer comes before the
# record: the warm cells' process limit (the state directory's defaults: pids = 16) refuses
# forks to a command that goes on and exits 0; the answer says limit, not exited 0
use_mode root
printf 'pids = 16\n' >"$STATE/defaults"
wr_bg serve --listen "unix:$SOCK" --slots 4 --warm 1 --warm-work "$WORK"
SRV=$BG_PID
wait_for 30 ready_is 1
run_wait "$(direct_req '["sh","-c","for i in $(seq 1 40); do sleep 5 2>/dev/null & done; exit 0"]')"
is "$(jbody '[d["start"], d["state"]]')" '["warm", "limit"]' "[root] a warm run whose forks the process limit refused: the answer says limit" || diag "$BODY"
wait_for 10 result_has_steps "$ID"
is "$(jget "$STATE/runs/$ID/result.json" 'd["cause"]["limit"]')" pids "[root] ... and its record names the process limit"
stop_server 60
rm -f "$STATE/defaults"
