#!/bin/bash
# warm-direct.t - issue 13: a plain command given a warm cell of `warren serve --warm` is the
# cell's job itself (its process, made with the cell, is started at the take: no executor, no
# shell between). What it sees is what the same command sees on the job path (a job of one
# step that execs it through the shell, as the server makes of a command for a cold start):
# its argv (quoting kept), env with
# TMPDIR=/tmp last, user, working directory, capabilities, no_new_privs, seccomp, a read-only
# host; a command that is missing or not executable ends with the same state and exit code
# (127, 126) in the answer and the record; a --scratch limit is the size of its scratch; warren
# kill stops it with its cause; its record and history row are complete after the answer; an
# answer that comes before the record says a limit the kernel enforced (a process limit). Root,
# and rootless where the host lets an unprivileged user make cells.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

plan 50

result_has_steps() { [ -n "$(jget "$STATE/runs/$1/result.json" 'd["steps"][0]["status"]' 2>/dev/null)" ]; }
# [state, exit code, the step's status and exit code, the cause's limit] from result.json
outcome() {
	jget "$STATE/runs/$1/result.json" \
		'[d["status"], d["exit_code"], d["steps"][0]["status"], d["steps"][0]["exit_code"], (d.get("cause") or {}).get("limit")]'
}
# a request of command (a JSON array) on the warm cells' worktree; with "job": the same as a
# job of one step that execs it through the job's shell (what the server makes of a command
# for a cold start), which a warm cell runs on the job path (its executor, its shell)
req() {
	"$PY" - "$1" "$WORK" "${2:-}" <<'EOF'
import json, shlex, sys
argv, work, job = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
if job:
    steps = [{"name": "main", "run": "exec " + " ".join(shlex.quote(a) for a in argv)}]
    print(json.dumps({"job": json.dumps({"steps": steps}), "worktree": work}))
else:
    print(json.dumps({"command": argv, "worktree": work}))
EOF
}

# what a command sees, its parent's pid apart (printed last)
SEE='printf "<%s>" "$0" "$@"; echo; env | LC_ALL=C sort; id; pwd; umask; grep -E "^(Cap|NoNewPrivs|Seccomp)" /proc/self/status; stat -c %a /tmp; touch /etc/warren-direct 2>&1 || echo refused; echo x >$TMPDIR/w && echo tmp-ok; echo ppid=$PPID'
SEE_CMD="[\"sh\",\"-c\",$(jstr "$SEE"),\"zero\",\"a b\",\"c'd\",\"\$HOME\"]"

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	T=$TEST_SCRATCH/$mode-t
	mkdir_for_mode "$T"
	SOCK=$T/api.sock
	if [ "$mode" = user ]; then
		wrun -- true
		if [ "$RC" != 0 ]; then
			skip 24 "$M this host does not let $TEST_USER make cells: $ERR"
			continue
		fi
	fi
	wr_bg serve --listen "unix:$SOCK" --slots 4 --warm 2 --warm-work "$WORK"
	SRV=$BG_PID
	wait_for 30 ready_is 2
	ok $? "$M warren serve --warm 2: two warm cells" || diag "$(cat "$BG_ERR")"

	# ---- what the command sees: the same as on the job path
	run_wait "$(req "$SEE_CMD")"
	W=$ID
	is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["warm", "exited", 0]' "$M a plain command takes a warm cell" || diag "$BODY"
	run_wait "$(req "$SEE_CMD" job)"
	C=$ID
	is "$(jbody '[d["start"], d["state"], d["exit_code"]]')" '["warm", "exited", 0]' "$M ... the same as a job of one step: the job path" || diag "$BODY"
	wlog=$(logs "$W")
	clog=$(logs "$C")
	like "$wlog" "ppid=1\$" "$M the warm run's command is the cell's job: its parent is the cell's init (no executor, no shell)"
	unlike "$clog" "ppid=1\$" "$M ... the job's is the executor's child"
	is "${wlog%ppid=*}" "${clog%ppid=*}" "$M argv, env, user, cwd, umask, capabilities, no_new_privs, seccomp, /tmp: the same on both paths" ||
		diag "$(diff <(printf '%s\n' "$clog") <(printf '%s\n' "$wlog"))"
	like "$wlog" "<zero><a b><c'd><\\\$HOME>" "$M ... the argv as given (no shell splits or expands it)"
	like "$wlog" "TMPDIR=/tmp" "$M ... TMPDIR=/tmp"
	like "$wlog" "NoNewPrivs:	1" "$M ... no_new_privs"
	like "$wlog" "refused.*tmp-ok|Read-only file system.*tmp-ok" "$M ... the host is read-only, \$TMPDIR writable"

	# ---- a missing or not executable command: the same end as on the job path
	printf 'echo never\n' >"$T/noexec"
	chmod 0644 "$T/noexec"
	[ "$mode" = user ] && chown "$TEST_USER_UID" "$T/noexec"
	for cmd in '["/nonexistent/cmd"]' '["nonexistent-cmd-xyz"]' "[\"$T/noexec\"]"; do
		run_wait "$(req "$cmd")"
		w=$ID
		ws=$(jbody '[d["start"], d["state"], d["exit_code"]]')
		run_wait "$(req "$cmd" job)"
		c=$ID
		wait_for 10 result_has_steps "$w"
		wait_for 10 result_has_steps "$c"
		is "$ws:$(outcome "$w")" "[\"warm\", \"exited\", $(jbody 'd["exit_code"]')]:$(outcome "$c")" \
			"$M $cmd: ends as on the job path (state, exit code, step, cause)"
	done
	like "$(logs "$w")" "warren: cannot execute .*noexec" "$M ... a command that cannot be executed says why in its log"

	# ---- a --scratch limit sizes the run's scratch
	run_wait "$(req '["sh","-c","df -k /tmp | tail -n 1; head -c 3000000 /dev/zero >/tmp/big; sleep 5"]' | sed 's/}$/, "limits": {"scratch": "1M"}}/')"
	is "$(jbody '[d["start"], d["state"]]')" '["warm", "limit"]' "$M a warm run with --scratch 1M: stopped by its limit" || diag "$BODY"
	like "$(logs "$ID")" "^tmpfs +1024 " "$M ... its scratch is 1M"
	# without one, the scratch is the default's size, as a cold run's (a warm cell's scratch is
	# made of its shape's size: a run of that size is started without init)
	wait_for 30 ready_is 2
	run_wait "$(req '["sh","-c","df -k /tmp | tail -n 1"]')"
	wsize=$(logs "$ID" | awk '{print $2}')
	bounded "${RUNNER[@]}" "$WARREN" run --state "$STATE" --work "$WORK" -- sh -c 'df -k /tmp | tail -n 1'
	is "$(jbody 'd["start"]'):$wsize" "warm:$(awk '{print $2}' <<<"$OUT")" "$M a warm run's scratch without --scratch: the size a cold run's has"

	# ---- warren kill of a warm command
	submit "$(req '["sleep","30"]')"
	K=$ID
	is "$(jbody 'd["start"]')" warm "$M a warm sleep 30"
	sleep 0.5
	api POST "/v1/runs/$K/kill"
	wait_for 20 result_has_steps "$K"
	is "$(outcome "$K")" '["interrupted", 143, "interrupted", 143, "kill"]' "$M warren kill: interrupted, 143, cause kill"

	# ---- the record after the answer: complete and seen by show and the history
	run_wait "$(req '["sh","-c","echo rec; exit 5"]')"
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
run_wait "$(req '["sh","-c","for i in $(seq 1 40); do sleep 5 2>/dev/null & done; exit 0"]')"
is "$(jbody '[d["start"], d["state"]]')" '["warm", "limit"]' "[root] a warm run whose forks the process limit refused: the answer says limit" || diag "$BODY"
wait_for 10 result_has_steps "$ID"
is "$(jget "$STATE/runs/$ID/result.json" 'd["cause"]["limit"]')" pids "[root] ... and its record names the process limit"
stop_server 60
rm -f "$STATE/defaults"
