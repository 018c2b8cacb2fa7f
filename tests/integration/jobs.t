#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# jobs.t - issue 4: jobs (services and steps in one cell). A step that hits its time limit
# (its cause named on the view, in the record, with the clock; later steps skipped, the
# `if: always` step run, exit 124); a service that opens a port and a step that talks to
# it; a service that never becomes ready; a job stopped with `warren kill` from another
# process; a job file with many mistakes, each reported as FILE:LINE:COL, exit 125 and
# nothing started; `warren logs --follow` while a step runs; step env, working-directory,
# shell; TMPDIR=/tmp in steps and services whatever the job's env says; files and /tmp
# persisting across steps; the scratch reclaimed (kept with --keep); --json on stdout.
# Issue 11: the output limit over steps and services, capped logs, small .times files; if:
# success(), failure(), always() and continue-on-error; always() steps after warren kill.
# Issue 34: the summary line a job ends with; the step that failed it named in the record,
# warren show and the history; a continue-on-error failure marked apart (tolerated).
# Jobs run as root (the main case) and as the unprivileged user; the parser's checks once.
. "$(dirname "$0")/../lib.sh"

# Tests: per mode 78 (time limit 19, service 7, never ready 9, kill 13, follow 7, env and
# persistence 20, sh -e and --prefix 3); job file mistakes 32; the parser's bounds 4; the job's
# own timeout 4, a step cleaning up after it 3; a service dying during the steps 2; a step's
# output held outside the cell 4; kill RUN --state DIR 2; issue 11's output and conditions, per
# mode 16 (output limit 6, .times 2, if: 3, continue-on-error 2, a second cancel 3), and their
# job file mistakes 1. Issue 16: warren show of a step, per mode 1; step names, logs, show and
# job check 15. Issue 34: per mode 11 (the summary line 3, the failed step in the record, show
# and the history 5, tolerated failures marked apart 3).
plan $((79 * 2 + 32 + 4 + 4 + 3 + 2 + 4 + 2 + 7 + 6 + 16 * 2 + 1 + 1 * 2 + 15 + 11 * 2))

RFC3339='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}(Z|[+-][0-9]{2}:[0-9]{2})$'
CLOCK='[0-9]{2}:[0-9]{2}:[0-9]{2}'

# job_file NAME: the job file $WORK/NAME.yaml from stdin (readable by the job's invoker);
# its path in JF.
job_file() {
	JF=$WORK/$1.yaml
	cat >"$JF"
	chmod 644 "$JF"
}
# jrun FILE ARGS...: warren job run FILE --state $STATE ARGS..., bounded (RC OUT ERR).
jrun() {
	local f=$1; shift
	bounded "${RUNNER[@]}" "$WARREN" job run "$f" --state "$STATE" "$@"
}
# jrun_bg FILE ARGS...: the same in the background (BG_PID BG_OUT BG_ERR).
jrun_bg() {
	local f=$1; shift
	start_bg "${RUNNER[@]}" env --default-signal=INT "$WARREN" job run "$f" --state "$STATE" "$@"
}
# after_job: RD (the newest run directory), RJ (its result.json), ID, LINE (stopped line).
after_job() {
	RD=$(last_rundir); RD=${RD:-$STATE/runs/none}
	RJ=$RD/result.json
	ID=$(basename "$RD")
	LINE=$(stopped_line)
}
# file_has FILE TEXT: FILE exists and contains TEXT.
file_has() { [ -f "$1" ] && grep -qF -- "$2" "$1"; }
# step1_log_has ERE: the newest run directory has a step 1 log matching ERE.
step1_log_has() {
	local rd
	rd=$(last_rundir) || return 1
	grep -qE -- "$1" "$rd"/log/1-*.log 2>/dev/null
}

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	if [ "$mode" = root ]; then KILL_UID=0; else KILL_UID=$TEST_USER_UID; fi

	# ================================================================ a step hits its time limit
	s=$(uniq_arg)
	job_file timeout <<EOF
name: limited
limits: { grace: 1s }
steps:
  - name: first
    run: |
      echo persisted > /tmp/from-first
      echo in-worktree > from-first.txt
      echo first-done
  - name: slow
    run: echo slow-started; sleep $s; echo slow-not-reached
    timeout: 2s
  - name: later
    run: echo later-ran > later.txt
  - name: report
    if: always
    run: echo "report sees \$(cat /tmp/from-first) \$(cat from-first.txt)"
EOF
	rm -f "$WORK/later.txt" "$WORK/from-first.txt"
	jrun "$JF"
	after_job
	is "$RC" 124 "$M a job whose middle step hits its 2s limit exits 124"
	like "$(tail -n 1 <<<"$ERR")" "^warren: job limited: 4 steps, 2 ok, 1 failed \\(slow: time limit 2s reached at 2\\.[0-9]{2}s\\), 1 skipped, [0-9.]+s\$" \
		"$M the job ends with one summary line on stderr, after the stopped line: its steps counted, the failed one named with its cause"
	t=$(jget "$RJ" '[d["timings"][k] for k in ("cell_ready_us", "job_started_us", "job_ended_us", "cell_gone_us", "recorded_us")]')
	"$PY" -c 'import json, sys; v = json.loads(sys.argv[1]); sys.exit(not (all(type(x) is int for x in v) and 0 < v[0] < v[1] < v[2] <= v[3] <= v[4]))' "$t" 2>/dev/null
	ok $? "$M a job's result.json has its timings, in order (the executor let go and reaped: $t)"
	first=$(sed -n 1p <<<"$OUT")
	like "$first" "$RUN_ID_RE" "$M the first line of the view names the run id"
	like "$first" " $ID " "$M ... the id of the run directory"
	line_like "$OUT" "^$CLOCK ▶ slow \\(limit 2s\\)\$" "$M the view (not a terminal): '12:00:01 ▶ slow (limit 2s)'"
	line_like "$OUT" "^$CLOCK ✖ slow: time limit 2s reached at 2\\.[0-9]{2}s; sent SIGTERM" \
		"$M the view names the cause: '✖ slow: time limit 2s reached at 2.NNs; sent SIGTERM'"
	like "$LINE" "^warren: $ID stopped: step slow: time limit 2s reached at 2\\.[0-9]{2}s" \
		"$M stderr: 'warren: <id> stopped: step slow: time limit 2s reached at ...'"
	is "$(jget "$RJ" '[d["status"], d["exit_code"], d["cause"]["limit"], d["cause"]["value"]]')" \
		'["limit", 124, "step-time", "2s"]' "$M result.json: status limit, exit_code 124, cause step-time 2s"
	like "$(jget "$RJ" 'd["cause"]["message"]')" '^step slow: time limit 2s reached at 2\.[0-9]{2}s' \
		"$M result.json: cause.message names the step and the limit"
	is "$(jget "$RJ" '[(s["name"], s["status"]) for s in d["steps"]]')" \
		'[["first", "ok"], ["slow", "limit"], ["later", "skipped"], ["report", "ok"]]' \
		"$M result.json steps: first ok, slow limit, later skipped, report ok"
	is "$(jget "$RJ" '[d["steps"][1][k] for k in ("exit_code", "timeout_ms", "log")]')" '[124, 2000, "log/2-slow.log"]' \
		"$M steps[1]: exit_code 124, timeout_ms 2000, log log/2-slow.log"
	like "$(jget "$RJ" 'd["steps"][1]["cause"]')" '^time limit 2s reached at 2\.[0-9]{2}s; sent SIGTERM' \
		"$M steps[1].cause: 'time limit 2s reached at 2.NNs; sent SIGTERM'"
	# not a timing claim: a step stopped by its 2s limit ran at least that long, and within the run
	dur=$(jget "$RJ" '[d["steps"][1]["duration_s"], d["wall_s"]]')
	"$PY" -c 'import json, sys; d, w = json.loads(sys.argv[1]); sys.exit(not (2.0 <= d <= w))' "$dur"
	ok $? "$M the clock in the record: steps[1].duration_s is at least its limit and within the run's wall_s (got $dur)"
	like "$(jget "$RJ" 'd["steps"][1]["started_at"]')" "$RFC3339" "$M steps[1].started_at is RFC 3339"
	is "$(jget "$RJ" '[d["steps"][2][k] for k in ("exit_code", "started_at", "duration_s", "log")]')" \
		'[null, null, null, null]' "$M the skipped step has no exit_code, started_at, duration_s, log"
	[ ! -e "$WORK/later.txt" ] && [ ! -e "$RD/log/3-later.log" ]
	ok $? "$M the skipped step did not run (no file, no log)"
	line_like "$OUT" '^report sees persisted in-worktree$' \
		"$M the always step ran after the limit, and sees /tmp and the worktree of the first step"
	wr show "$ID"
	line_like "$OUT" '^step 2 +slow: limit \(exit 124\), [0-9.]+s, 13 B of output; time limit 2s reached at' \
		"$M warren show lists the step: status, duration, output and cause"
	line_like "$OUT" '^failed step +2 slow: time limit 2s reached at 2\.[0-9]{2}s; sent SIGTERM$' \
		"$M warren show names the step that failed the job and its cause"
	wr history --limit 1
	line_like "$OUT" "^$ID +limit +124 .* step 2 slow: time limit 2s reached at 2\\.[0-9]{2}s; sent SIGTERM\$" \
		"$M warren history names the failed step and its cause, not the command"
	within_ms 10000 && file_has "$RD/log/2-slow.log" slow-started && ! file_has "$RD/log/2-slow.log" slow-not-reached &&
		grep -qE "^[0-9T:.-]+(Z|[+-][0-9:]+) [0-9]+ [0-9]+\$" "$RD/log/2-slow.times"
	ok $? "$M stopped within 10s (${ELAPSED_MS}ms); log/2-slow.log has its output, .times its timestamps"
	job_gone "$s"
	ok $? "$M the step's sleep is gone" || diag "$(_pslist $(job_pids "$s"))"
	nothing_left "$RD" "$M after the job its scratch is reclaimed, nothing left"

	# ================================================================ a service on a port
	job_file service <<'EOF'
name: served
env: { TMPDIR: /not-tmp }
services:
  web:
    run: exec python3 -m http.server 18080 --bind 127.0.0.1 --directory "$TMPDIR"
    ready: { tcp: 18080, timeout: 20s }
steps:
  - name: put
    run: echo "page from $TMPDIR" > "$TMPDIR/page.txt"
  - name: get
    timeout: 20s
    run: python3 -c 'import urllib.request; print("got:", urllib.request.urlopen("http://127.0.0.1:18080/page.txt").read().decode().strip())'
EOF
	jrun "$JF"
	after_job
	is "$RC" 0 "$M a job with a service on port 18080 and a step that talks to it exits 0"
	line_like "$OUT" '^got: page from /tmp$' "$M the step fetched the service's page (served from the service's TMPDIR=/tmp)"
	line_like "$OUT" "^$CLOCK ✔ service web ready after [0-9.]+s\$" "$M the view: '✔ service web ready after N.NNs'"
	is "$(jget "$RJ" '[(s["name"], s["status"]) for s in d["services"]]')" '[["web", "stopped"]]' \
		"$M result.json services: web stopped (after the last step)"
	is "$(jget "$RJ" '[d["status"], d["exit_code"], [s["status"] for s in d["steps"]]]')" '["exited", 0, ["ok", "ok"]]' \
		"$M result.json: exited 0, both steps ok"
	file_has "$RD/log/service-web.log" 'GET /page.txt'
	ok $? "$M the service's output is in log/service-web.log"
	nothing_left "$RD" "$M no server left after the job"

	# ================================================================ a service never ready
	s=$(uniq_arg)
	rm -f "$WORK/never.txt"
	job_file never <<EOF
name: never-ready
services:
  dead:
    run: exec sleep $s
    ready: { tcp: 18081, timeout: 2s }
steps:
  - name: never
    run: echo ran > never.txt
EOF
	jrun "$JF"
	after_job
	[[ $RC =~ ^[0-9]+$ ]] && [ "$RC" != 0 ]
	ok $? "$M a service never ready: exit non-zero (got $RC)"
	line_like "$OUT" "^$CLOCK ✖ service dead: not ready after 2s" "$M the view: '✖ service dead: not ready after 2s ...'"
	like "$LINE" "^warren: $ID stopped: .*dead.*not ready after 2s" \
		"$M stderr: 'warren: <id> stopped: ...' names the service and the cause"
	is "$(jget "$RJ" 'd["cause"]["limit"]')" service "$M result.json: cause.limit service"
	like "$(jget "$RJ" 'd["cause"]["message"]')" 'dead.*not ready after 2s|not ready after 2s.*dead' \
		"$M result.json: cause.message names the service and 'not ready after 2s'"
	is "$(jget "$RJ" '[(s["name"], s["status"]) for s in d["services"]]')" '[["dead", "failed"]]' \
		"$M result.json services: dead failed"
	[ ! -e "$WORK/never.txt" ] && [ ! -e "$RD/log/1-never.log" ] &&
		[ "$(jget "$RJ" '[s["status"] for s in d["steps"]]')" = '["skipped"]' ]
	ok $? "$M no step ran (no file, no log, status skipped)" || diag "$(jget "$RJ" 'd["steps"]')"
	within_ms 10000 && job_gone "$s"
	ok $? "$M within 10s (${ELAPSED_MS}ms), and the service's process is gone"
	nothing_left "$RD" "$M nothing of the job left"

	# ================================================================ warren kill
	s1=$(uniq_arg); s2=$(uniq_arg)
	job_file kill <<EOF
name: killable
services:
  bg:
    run: exec sleep $s1
steps:
  - name: one
    run: echo one-started; sleep $s2
  - name: two
    run: echo two-ran > two.txt
  - name: fin
    if: always()
    run: echo fin-ran
EOF
	rm -f "$WORK/two.txt"
	jrun_bg "$JF"
	jp=$BG_PID
	wait_for 15 step1_log_has one-started && wait_for 5 job_alive "$s2"
	ok $? "$M the job to kill is running its first step"
	after_job
	wr kill "$ID"
	is "$RC" 0 "$M warren kill <id> from another process exits 0"
	wait_bg "$jp" 20
	jrc=$RC
	ERR=$(cat "$BG_ERR"); OUT=$(cat "$BG_OUT")
	LINE=$(stopped_line)
	[[ $jrc =~ ^[0-9]+$ ]] && [ "$jrc" -gt 128 ] && [ "$jrc" -lt 160 ]
	ok $? "$M the killed job exits 128+N (got $jrc)"
	like "$LINE" "^warren: $ID stopped: killed by warren kill \\(uid $KILL_UID\\)" \
		"$M stderr: 'warren: <id> stopped: killed by warren kill (uid $KILL_UID)'"
	is "$(jget "$RJ" '[d["status"], d["cause"]["limit"]]')" '["interrupted", "kill"]' \
		"$M result.json: status interrupted, cause.limit kill"
	like "$(jget "$RJ" 'd["cause"]["message"]')" "^killed by warren kill \\(uid $KILL_UID\\)" \
		"$M result.json: cause.message 'killed by warren kill (uid $KILL_UID)'"
	is "$(jget "$RJ" '[(s["status"], s["cause"]) for s in d["steps"]]')" \
		"[[\"interrupted\", \"killed by warren kill (uid $KILL_UID)\"], [\"skipped\", null], [\"ok\", null]]" \
		"$M result.json steps: one interrupted with the cause, two skipped, the always() step fin ran (ok)"
	line_like "$OUT" '^fin-ran$' "$M the always() step ran after warren kill (its output on the view)"
	ec=$(jget "$RJ" 'd["steps"][0]["exit_code"]')
	[ "$ec" != 0 ]
	ok $? "$M the interrupted step's exit_code is not 0 (got $ec)"
	is "$(jget "$RJ" '[(s["name"], s["status"]) for s in d["services"]]')" '[["bg", "stopped"]]' \
		"$M result.json services: bg stopped"
	[ ! -e "$WORK/two.txt" ] && job_gone "$s1" && job_gone "$s2"
	ok $? "$M the later step did not run; the step's and the service's processes are gone"
	nothing_left "$RD" "$M nothing of the killed job left"
	wr kill "$ID"
	[ "$RC" = 125 ] && [[ $ERR == *"not running"* ]]
	ok $? "$M warren kill of a finished run: exit 125 (warren's own refusal), 'not running'" || diag "rc $RC: $ERR"

	# ================================================================ warren logs --follow
	job_file follow <<'EOF'
name: follow
steps:
  - name: talk
    run: echo first-line; sleep 3; echo second-line
  - name: after
    run: echo after-line
EOF
	jrun_bg "$JF"
	jp=$BG_PID
	wait_for 15 step1_log_has first-line
	after_job
	start_bg "${RUNNER[@]}" "$WARREN" logs --state "$STATE" "$ID" --follow
	lp=$BG_PID; lout=$BG_OUT
	wait_for 10 file_has "$lout" first-line
	got_first=$?
	kill -0 "$jp" 2>/dev/null
	live=$?
	[ "$got_first" = 0 ] && [ "$live" = 0 ] && ! file_has "$lout" second-line
	ok $? "$M logs --follow shows the running step's first line while it runs (before its second)" ||
		diag "got first: $got_first, job live: $live" "logs said: $(cat "$lout")"
	wait_bg "$jp" 20
	is "$RC" 0 "$M the followed job exits 0"
	wait_bg "$lp" 5
	is "$RC" 0 "$M logs --follow ends (exit 0) within 5s of the job's end"
	both="==> step 1: talk <=="$'\n'first-line$'\n'second-line$'\n\n'"==> step 2: after <=="$'\n'after-line
	is "$(cat "$lout")" "$both" "$M logs --follow printed every step's output, in order, each under a header"
	wr logs "$ID" talk
	is "$OUT" first-line$'\n'second-line "$M warren logs <id> talk: that step's output"
	wr logs "$ID" 2
	is "$OUT" after-line "$M warren logs <id> 2: the second step's output"
	wr logs
	is "$OUT" "$both" "$M warren logs (no run): the latest run's output, a header per step"

	# ================================================================ env, working-directory, shell, persistence
	mkdir_for_mode "$WORK/sub"
	job_file env <<'EOF'
name: env
env: { TMPDIR: /elsewhere, JOBVAR: job, SHARED: from-job }
steps:
  - name: vars
    env: { STEPVAR: step, SHARED: from-step, TMPDIR: /step-tmp }
    run: |
      echo "vars: $JOBVAR $STEPVAR $SHARED $TMPDIR $(env | grep -c '^TMPDIR=')"
      echo "mktemp: $(mktemp)"
      echo "pwd: $(pwd)"
      echo kept > "$TMPDIR/kept-file"
      echo home > "$HOME/home-file"
      sleep SLEEPARG > /dev/null 2>&1 &
      echo $! > /tmp/bg.pid
  - name: next
    run: |
      echo "next: ${STEPVAR-unset} $SHARED $TMPDIR"
      echo "persist: $(cat /tmp/kept-file) $(cat "$HOME/home-file") $(kill -0 "$(cat /tmp/bg.pid)" && echo bg-alive)"
  - name: wd
    working-directory: sub
    run: |
      echo "wd: $(pwd)"
  - name: bash
    shell: bash -e
    run: |
      [[ -n $BASH_VERSION ]] && echo "bash: yes"
  - name: py
    shell: python3
    run: |
      import os
      print("py:", os.environ["TMPDIR"])
EOF
	s=$(uniq_arg)
	sed -i "s/SLEEPARG/$s/" "$JF"
	jrun "$JF" --json --keep
	is "$RC" 0 "$M the env/working-directory/shell job exits 0"
	rd=$(kept_rundir)
	after_job
	"$PY" -c 'import json,sys; sys.exit(json.loads(sys.argv[1]) != json.load(open(sys.argv[2])))' "$OUT" "$RJ" 2>/dev/null
	ok $? "$M --json: stdout is exactly result.json" || diag "stdout: $(_clip "$OUT")"
	line_like "$ERR" "^$CLOCK $RUN_ID_RE job env " "$M --json: the view goes to stderr"
	line_like "$ERR" '^vars: job step from-step /tmp 1$' \
		"$M job and step env both apply, the step's wins; TMPDIR is /tmp (once) though job and step set it"
	line_like "$ERR" '^mktemp: /tmp/tmp\.' "$M mktemp in a step makes its file in /tmp"
	line_like "$ERR" "^pwd: $WORK\$" "$M a step's working directory is the worktree"
	line_like "$ERR" '^next: unset from-job /tmp$' "$M a step's env does not leak into the next step"
	line_like "$ERR" '^persist: kept home bg-alive$' \
		"$M /tmp, \$HOME and a background process persist across steps"
	line_like "$ERR" "^wd: $WORK/sub\$" "$M working-directory: sub runs in <worktree>/sub"
	line_like "$ERR" '^bash: yes$' "$M shell: bash -e runs the step with bash"
	line_like "$ERR" '^py: /tmp$' "$M shell: python3 runs the step with python3"
	is "$(jget "$RJ" '[s["status"] for s in d["steps"]]')" '["ok", "ok", "ok", "ok", "ok"]' "$M every step ok"
	like "$rd" "^$STATE/runs/$RUN_ID_RE\$" "$M --keep names the kept run directory"
	rd=${rd:-$STATE/runs/none}
	[ -f "$rd/tmp/kept-file" ]
	ok $? "$M --keep: the job's /tmp is still in the run directory" || diag "$(ls -la "$rd" "$rd/tmp" 2>&1)"
	is "$(stat -c %u "$rd/tmp/kept-file" 2>&1)" "$HOST_JOB_UID" "$M ... owned by the run user"
	job_gone "$s"
	ok $? "$M the background process of a step does not outlive the job" || diag "$(_pslist $(job_pids "$s"))"
	wr gc "$(basename "$rd")"
	nothing_left "$rd" "$M after gc the kept job's scratch is gone"
	# Without --keep the same job leaves nothing.
	jrun "$JF" --quiet
	after_job
	[ "$RC" = 0 ] && [ -z "$(grep -E '^(vars|next|wd|bash|py):' <<<"$OUT")" ]
	ok $? "$M --quiet: the job passes and the steps' output is not shown" || diag "rc $RC" "$OUT"
	file_has "$RD/log/1-vars.log" "vars: job step from-step /tmp 1"
	ok $? "$M --quiet: the output is still in the log"
	nothing_left "$RD" "$M without --keep the scratch is reclaimed after the job"

	# ================================================================ sh -e, --prefix
	job_file shell <<'EOF'
name: shell
steps:
  - name: fails
    run: |
      echo before
      false
      echo after-false
EOF
	jrun "$JF" --prefix
	after_job
	is "$RC" 1 "$M a step runs under sh -e: a failing command fails the step, exit 1"
	line_like "$OUT" '^fails \| before$' "$M --prefix: 'fails | before'"
	[ "$(jget "$RJ" '[d["steps"][0]["status"], d["steps"][0]["exit_code"]]')" = '["failed", 1]' ] &&
		file_has "$RD/log/1-fails.log" before && ! file_has "$RD/log/1-fails.log" after-false
	ok $? "$M result.json: failed, exit_code 1; the line after 'false' did not run" || diag "$(jget "$RJ" 'd["steps"]')"
done

# ==================================================================== job file mistakes
use_mode root
job_file mistakes <<'EOF'
name: mistakes
timout: 30m
limits: { memory: 2 gigs, pids: lots }
env: [ "A=1" ]
network: host
services:
  web:
    run: python3 -m http.server 8080
    ready: { tcp: 99999, timeout: 5s }
  db:
    command: postgres
steps:
  - name: build
    run: make
    timeout: 10 minutes
  - name: test
    runn: make check
  - name: build
    run: echo dup
    if: sometimes
  - name: vars
    run: echo x
    env: { 1BAD: x, GOOD: [1] }
    working-directroy: tests
  - name: minutes
    run: echo
    timeout-minutes: ten
  - echo not a mapping
  - name: both
    run: echo
    timeout: 1m
    timeout-minutes: 2
EOF
F=$JF
# LINE:COL<TAB>the text after "FILE:LINE:COL: " (an ERE)
expected=(
	"2:1	timout: unknown key; did you mean 'timeout'\\?"
	"3:19	limits\\.memory: \"2 gigs\" is not a size"
	"3:33	limits\\.pids: \"lots\" is not a"
	"4:6	env: must be a mapping"
	"5:10	network: 'host' is not a network mode"
	"9:19	services\\.web\\.ready\\.tcp: \"99999\" is not a TCP port"
	"11:5	services\\.db\\.command: unknown key"
	"11:5	services\\.db: has no 'run'"
	"15:14	steps\\[0\\]\\.timeout: \"10 minutes\" is not a duration \\(e\\.g\\. 30s, 10m, 1h30m\\)"
	"17:5	steps\\[1\\]\\.runn: unknown key; did you mean 'run'\\?"
	"16:5	steps\\[1\\]: has no 'run'"
	"20:9	steps\\[2\\]\\.if: \"sometimes\" is not a condition"
	"18:(5|11)	steps\\[2\\]\\.name: \"build\" is already the name of steps\\[0\\]"
	"23:12	steps\\[3\\]\\.env: '1BAD' is not a variable name"
	"23:27	steps\\[3\\]\\.env: the value of GOOD must be a string"
	"24:5	steps\\[3\\]\\.working-directroy: unknown key; did you mean 'working-directory'\\?"
	"27:22	steps\\[4\\]\\.timeout-minutes: \"ten\" is not a number of minutes"
	"28:5	steps\\[5\\]: must be a mapping"
	"32:22	steps\\[6\\]\\.timeout-minutes: give either timeout or timeout-minutes"
)
n_before=$(rundir_count)
jrun "$F"
is "$RC" 125 "a job file with ${#expected[@]} mistakes: job run exits 125"
is "$OUT" "" "... nothing on stdout (no run id: nothing started)"
is "$(rundir_count)" "$n_before" "... no run directory was created"
nl=$(printf '%s\n' "$ERR" | grep -c .)
is "$nl" "${#expected[@]}" "... one line per mistake (${#expected[@]})"
bad_lines=$(printf '%s\n' "$ERR" | grep -vE "^warren: $F:[0-9]+:[0-9]+: [^ ]")
is "$bad_lines" "" "... every line is 'warren: FILE:LINE:COL: ...'"
for e in "${expected[@]}"; do
	pos=${e%%$'\t'*} text=${e#*$'\t'}
	line_like "$ERR" "^warren: $F:$pos: $text" "... $pos: $(sed 's/\\//g' <<<"${text%% is *}" | cut -c1-60)"
done
mist_err=$ERR
bounded "$WARREN" job check "$F"
[ "$RC" = 125 ] && [ "$ERR" = "$mist_err" ] && [ -z "$OUT" ]
ok $? "job check FILE: the same lines, exit 125" || diag "rc $RC" "$ERR"

# Bad YAML in a second file: one line with where the parser stopped.
job_file broken <<'EOF'
name: broken
steps:
  - name: a
    run: echo a
   bad: indent
  - name: b
    run: echo b
EOF
n_before=$(rundir_count)
jrun "$JF"
[ "$RC" = 125 ] && [ "$(rundir_count)" = "$n_before" ]
ok $? "bad YAML: exit 125, nothing started"
one_warren_line "bad YAML: one line on stderr"
like "$ERR" "^warren: $JF:5:4: .*YAML" "bad YAML: 'warren: FILE:5:4: not valid YAML...' (the misindented key)"

# A duplicate step name where name is not the step's first key: the line of the name.
job_file dupname <<'EOF'
steps:
  - run: echo a
    name: one
  - run: echo b
    name: one
EOF
bounded "$WARREN" job check "$JF"
like "$ERR" "^warren: $JF:5:(5|11): steps\\[1\\]\\.name: \"one\" is already the name" \
	"a duplicate step name is reported on the line of the name (5), not of the step's first key"

# A key given twice in one mapping (YAML forbids it): an error, not the first silently kept.
job_file dupkey <<'EOF'
steps:
  - name: a
    run: echo first
    run: echo second
EOF
bounded "$WARREN" job check "$JF"
[ "$RC" = 125 ] && [[ $ERR == "warren: $JF:4:5: "* ]]
ok $? "a key given twice (run:) is reported at 4:5, exit 125" || diag "rc $RC" "stdout: $OUT" "stderr: $ERR"

# The parser's bounds (issue 11): a job file nested 200 000 levels deep took minutes in libyaml;
# it is refused at the 65th level, with the limit and what to do, as are a file over 1 MiB,
# a list of more than 1000 entries and an alias (each use would be checked again).
JF=$WORK/deep.yaml
"$PY" -c 'n = 200000; print("steps: " + "[" * n + "]" * n)' >"$JF"
bounded "$WARREN" job check "$JF"
[ "$RC" = 125 ] && [ "$ERR" = "warren: $JF:1:71: mappings and lists nested more than 64 deep; a job file needs a few levels, flatten this one" ]
ok $? "a job file nested 200 000 deep: refused at the 65th level, with the limit" || diag "rc $RC" "$ERR"
JF=$WORK/big.yaml
"$PY" -c 'print("steps: [{run: true}]\n" + "#" * (1 << 20))' >"$JF"
bounded "$WARREN" job check "$JF"
[ "$RC" = 125 ] && [ "$ERR" = "warren: $JF: the job file is larger than 1 MiB, the most a job file may be; split it into smaller jobs" ]
ok $? "a job file over 1 MiB: refused, with the limit" || diag "rc $RC" "$ERR"
JF=$WORK/long.yaml
"$PY" -c 'print("steps:\n" + "- run: true\n" * 1001)' >"$JF"
bounded "$WARREN" job check "$JF"
[ "$RC" = 125 ] && [ "$ERR" = "warren: $JF:1002:3: more than 1000 entries in one mapping or list; a job file needs far fewer, split it into smaller jobs" ]
ok $? "1001 steps: refused at the 1001st, with the limit" || diag "rc $RC" "$ERR"
job_file alias <<'EOF'
x: &step { run: echo a }
steps: [ *step, *step ]
EOF
bounded "$WARREN" job check "$JF"
[ "$RC" = 125 ] && [ "$ERR" = "warren: $JF:2:10: an alias (*name) repeats a part of the file; write the part out instead" ]
ok $? "an alias (*step): refused, at the alias" || diag "rc $RC" "$ERR"

# The user mode reports the same, and starts nothing either.
use_mode user
n_before=$(rundir_count)
jrun "$F"
[ "$RC" = 125 ] && [ "$ERR" = "$mist_err" ] && [ "$(rundir_count)" = "$n_before" ]
ok $? "[user] the job file with mistakes: the same lines, exit 125, nothing started" || diag "rc $RC" "$ERR"

# A correct job file: job check says so.
use_mode root
bounded "$WARREN" job check "$WORK/service.yaml"
[ "$RC" = 0 ] && [[ $OUT == *"ok (1 service, 2 steps)"* ]]
ok $? "job check of a correct file: exit 0, 'ok (1 service, 2 steps)'" || diag "rc $RC: $OUT $ERR"

# A job file is untrusted (issue 10): work: stays below the job file's directory, a step's
# working-directory inside the worktree, unless --work on the command line says otherwise.
mkdir -p "$WORK/jobdir/sub"
JF=$WORK/jobdir/escape.yaml
cat >"$JF" <<'EOF'
work: ..
steps:
  - name: a
    run: pwd
    working-directory: /etc
EOF
n_before=$(rundir_count)
jrun "$JF"
[ "$RC" = 125 ] && [ "$(rundir_count)" = "$n_before" ]
ok $? "work: outside the job file's directory: exit 125, nothing started" || diag "rc $RC" "$ERR"
line_like "$ERR" "^warren: $JF:1:7: work: $WORK: it is outside the job file's directory: .*pass --work $WORK on the command line" \
	"... one line naming the directory and --work"
line_like "$ERR" "^warren: $JF:5:24: steps\\[0\\]\\.working-directory: /etc leaves the worktree $WORK: " \
	"a working-directory that leaves the worktree: one line"
bounded "$WARREN" job check "$JF"
[ "$RC" = 125 ] && [[ $ERR == *"work: $WORK: it is outside"* ]] && [[ $ERR == *"working-directory"* ]]
ok $? "job check reports both" || diag "rc $RC" "$ERR"
jrun "$JF" --work "$WORK/jobdir/sub"
[ "$RC" = 0 ] && [[ $OUT == */etc* ]]
ok $? "--work on the command line lifts both (the step ran in /etc)" || diag "rc $RC" "$OUT" "$ERR"
cat >"$JF" <<'EOF'
work: sub
steps:
  - name: a
    run: pwd
    working-directory: ./.
EOF
jrun "$JF"
[ "$RC" = 0 ] && [[ $OUT == *"$WORK/jobdir/sub"* ]]
ok $? "work: below the job file and a working-directory inside the worktree run" || diag "rc $RC" "$OUT" "$ERR"
ln -sfn /etc "$WORK/jobdir/link"
printf 'work: link\nsteps:\n  - run: pwd\n' >"$JF"
bounded "$WARREN" job check "$JF"
[ "$RC" = 125 ] && [[ $ERR == *"/etc: it is outside the job file's directory"* ]]
ok $? "work: through a symlink out of the job file's directory is refused" || diag "rc $RC" "$ERR"
rm -rf "$WORK/jobdir"

# ==================================================================== the job's own timeout
use_mode root
s=$(uniq_arg)
job_file jobtime <<EOF
name: jobtime
timeout: 2s
limits: { grace: 1s }
steps:
  - name: long
    run: echo long-started; sleep $s
    timeout: 1m
  - name: fin
    run: echo fin
EOF
jrun "$JF"
after_job
is "$RC" 124 "the job's own timeout (2s) during a step: exit 124"
like "$LINE" "^warren: $ID stopped: .*limit 2s reached at 2\\.[0-9]{2}s" "... stderr names the 2s limit"
is "$(jget "$RJ" '[(s["name"], s["status"]) for s in d["steps"]]')" '[["long", "limit"], ["fin", "skipped"]]' \
	"... result.json steps: long limit, fin skipped"
ec=$(jget "$RJ" 'd["steps"][0]["exit_code"]')
[ "$ec" != 0 ] && job_gone "$s"
ok $? "... the stopped step's exit_code is not 0 (got $ec); its sleep is gone"

# The job's timeout tells the running step and the services at once; a step that takes a
# second to clean up has the grace for it, even after the services ended: the executor is
# not ended under it (it was, so its end and its last output were lost: exit_code null)
job_file jobtrap <<'EOF'
name: jobtrap
timeout: 2s
services:
  bg:
    run: trap 'exit 0' TERM; while :; do sleep 0.1; done
steps:
  - name: long
    run: trap 'sleep 1; echo cleaned-up; exit 7' TERM; sleep 60 & wait
EOF
jrun "$JF"
after_job
is "$RC" 124 "a step cleaning up after the job's timeout: exit 124"
is "$(jget "$RJ" '[(s["name"], s["status"], s["exit_code"]) for s in d["steps"] + d["services"]]')" \
	'[["long", "limit", 7], ["bg", "stopped", 0]]' "... its cleanup had the grace: its own exit (7) is recorded"
is "$(cat "$RD/log/1-long.log")" cleaned-up "... and its last output is in its log"

# ==================================================================== a service dies during the steps
job_file dies <<'EOF'
name: dies
services:
  flaky:
    run: sleep 0.5; exit 3
steps:
  - name: wait
    run: sleep 2
EOF
jrun "$JF"
after_job
line_like "$OUT" "^$CLOCK ✖ service flaky exited with status 3 during step wait\$" \
	"a service that dies during a step is reported with its exit status and the step"
is "$(jget "$RJ" '[(s["name"], s["status"], s["exit_code"]) for s in d["services"]]')" '[["flaky", "exited", 3]]' \
	"... result.json services: flaky exited, exit_code 3"

# ==================================================================== a step's output held outside the cell
# The step hands its stdout and stderr to a process outside the cell and exits: the job goes
# on, ends by itself (it does not wait for that output's end) and the record says so.
use_mode root
start_fd_holder "$WORK/holder.sock"
hp=$HOLDER_PID
job_file held <<EOF
name: held
steps:
  - name: handout
    run: |
      python3 -c 'import socket, sys
      c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); socket.send_fds(c, [b"x"], [1, 2]); c.recv(1)' $WORK/holder.sock
      echo handed-out
  - name: next
    run: echo next-ran
EOF
T_TIMEOUT=10 jrun "$JF"
after_job
[ "$RC" = 0 ] && [[ $OUT == *next-ran* ]]
ok $? "a step's output held outside the cell: the job goes on and ends by itself, exit 0" || diag "rc $RC" "$OUT" "$ERR"
is "$(jget "$RJ" '[d["status"], d["exit_code"]] + [s["status"] for s in d["steps"]]')" '["exited", 0, "ok", "ok"]' \
	"... result.json: exited 0, both steps ok"
is "$(jget "$RJ" '[h["stream"] for h in d["output_held_outside"]]')" '["step handout"]' \
	"... result.json output_held_outside names the step"
line_like "$ERR" "^warren: $ID: a process outside the cell held the job's output open \\(step handout\\); [0-9]+ bytes read, the rest dropped\$" \
	"... and one line says so"
kill -KILL "$hp" 2>/dev/null; wait "$hp" 2>/dev/null
rm -f "$WORK/holder.sock"

# ==================================================================== warren kill RUN --state DIR
# The order of the usage line: "warren kill RUN [--state DIR]".
s=$(uniq_arg)
job_file kill2 <<EOF
steps:
  - name: wait
    run: sleep $s
EOF
jrun_bg "$JF"
jp=$BG_PID
wait_for 15 job_alive "$s"
after_job
bounded "$WARREN" kill "$ID" --state "$STATE"
is "$RC" 0 "warren kill RUN --state DIR (the usage's order) exits 0" || diag "$ERR"
[ "$RC" = 0 ] || bounded "$WARREN" kill --state "$STATE" "$ID"
wait_bg "$jp" 20
LINE=$(ERR=$(cat "$BG_ERR"); stopped_line)
like "$LINE" "stopped: killed by warren kill \\(uid 0\\)" "... and the job stops with that cause"

# A step cannot cheat its clock by stopping or killing the executor (issue 11): a stopped
# executor is woken from outside at the step's deadline, one kept stopped gets the whole
# cell stopped after the grace, and a killed one fails the job with that cause.
for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	job_file stopper <<'YAML'
name: stopper
steps:
  - name: stop-executor
    timeout: 2s
    run: kill -STOP $PPID; sleep 10; echo ran-on
YAML
	jrun "$JF"
	after_job
	is "$RC" 124 "$M a step that stops its executor still ends at its time limit (exit 124)"
	[ "$(jget "$RJ" '[s["status"] for s in d["steps"]] + [d["cause"]["limit"]]')" = '["limit", "step-time"]' ] && [[ $OUT$ERR != *ran-on* ]]
	ok $? "$M ... the record says the step's time limit, and the step did not run on" || diag "$(jget "$RJ" 'd["cause"]')" "$OUT"
	job_file killer <<'YAML'
name: killer
steps:
  - name: kill-executor
    run: kill -KILL $PPID; sleep 3
  - name: after
    run: echo after
YAML
	jrun "$JF"
	after_job
	[ "$RC" != 0 ] && [ "$(jget "$RJ" 'd["cause"]["limit"]')" = executor ]
	ok $? "$M a step that kills its executor fails the job (exit $RC), the cause named" || diag "$(jget "$RJ" 'd["cause"]')"
done

# Issue 11: step output counts against the job's output limit (steps and services alike), a
# step log is capped by it, and a .times file stays small; if: success(), failure(),
# always() and continue-on-error as on GitHub Actions; a cancel (warren kill) still runs the
# always() steps, and a second one stops them.
for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	# ---------------------------------------------------------------- output limit
	job_file outlimit <<'YAML'
name: outlimit
limits: { output: 1K }
steps:
  - name: big
    run: head -c 5000000 /dev/zero | tr '\0' x
  - name: after
    run: echo after-ran
YAML
	jrun "$JF" --quiet
	after_job
	is "$RC" 123 "$M a job past its output limit (1K; a step wrote 5 MB) is stopped, exit 123"
	is "$(jget "$RJ" '[d["status"], d["cause"]["limit"], d["cause"]["value"], [s["status"] for s in d["steps"]]]')" \
		'["limit", "output", "1 KiB", ["limit", "skipped"]]' "$M result.json: status limit, cause output 1 KiB; the step stopped, the next skipped"
	like "$LINE" "stopped: output limit 1 KiB reached \\(the job wrote more than 1024 bytes\\)" \
		"$M stderr: 'stopped: output limit 1 KiB reached (the job wrote more than 1024 bytes)'"
	ob=$(jget "$RJ" 'd["output_bytes"]')
	[ "$ob" -ge 1024 ] && [ "$(head -c 1024 "$RD/log/1-big.log" | tr -d x | wc -c)" = 0 ] &&
		[ "$(tail -c +1025 "$RD/log/1-big.log")" = $'\n[warren: output limit 1 KiB reached; the rest of the output was not kept]' ]
	ok $? "$M output_bytes counts the step's output ($ob), and its log holds the first 1024 bytes, then the line that marks the cut" ||
		diag "$(tail -c 200 "$RD/log/1-big.log")"
	nothing_left "$RD" "$M nothing of the job stopped at its output limit left"

	s=$(uniq_arg)
	job_file svcout <<YAML
name: svcout
limits: { output: 10K }
services:
  noisy:
    run: head -c 100000 /dev/zero; exec sleep $s
steps:
  - name: wait
    run: sleep 30
YAML
	jrun "$JF" --quiet
	after_job
	mark='[warren: output limit 10 KiB reached; the rest of the output was not kept]'
	[ "$(jget "$RJ" 'd["cause"]["limit"]')" = output ] && [ "$(tail -n 1 "$RD/log/service-noisy.log")" = "$mark" ] &&
		[ "$(stat -c %s "$RD/log/service-noisy.log")" -le $((10240 + ${#mark} + 2)) ] && job_gone "$s"
	ok $? "$M a service's output counts too: the job is stopped at 10K, its log capped (its last line marks the cut)" ||
		diag "rc $RC" "$(jget "$RJ" 'd["cause"]')" "$(tail -c 100 "$RD/log/service-noisy.log")"

	# ---------------------------------------------------------------- .times of 1-byte writes
	job_file bytes <<'YAML'
name: bytes
steps:
  - name: bytes
    run: python3 -c "import sys; [sys.stdout.write('x') or sys.stdout.flush() for _ in range(200000)]"
YAML
	jrun "$JF" --quiet
	after_job
	sz=$(stat -c %s "$RD/log/1-bytes.times" 2>/dev/null)
	[ "$RC" = 0 ] && [ "$(stat -c %s "$RD/log/1-bytes.log")" = 200000 ] && [ "${sz:-999999}" -lt 40000 ]
	ok $? "$M 200,000 1-byte writes: the log holds them all, its .times stays small (${sz} bytes)" || diag "rc $RC"
	is "$(awk '{ if ($2 != n) bad = 1; n += $3 } END { print n, bad + 0 }' "$RD/log/1-bytes.times")" "200000 0" \
		"$M ... its lines cover the log: offsets follow each other and the sizes add up to 200000"

	# ---------------------------------------------------------------- if: and continue-on-error
	job_file conds <<'YAML'
name: conds
steps:
  - name: first
    run: echo first
  - name: soft
    continue-on-error: true
    run: exit 3
  - name: after-soft
    run: echo after-soft
  - name: no-failure-yet
    if: failure()
    run: echo wrong
  - name: hard
    run: exit 5
  - name: plain
    run: echo wrong
  - name: explicit-success
    if: success()
    run: echo wrong
  - name: on-failure
    if: failure
    run: echo on-failure
  - name: on-failure-expr
    if: ${{ failure() }}
    run: echo on-failure-expr
  - name: success-expr
    if: "${{success()}}"
    run: echo wrong
  - name: fin
    if: always
    run: echo fin
YAML
	jrun "$JF"
	after_job
	is "$RC" 5 "$M a job whose hard step exits 5 exits 5 (a continue-on-error step's 3 does not count)"
	is "$(jget "$RJ" '[s["status"] for s in d["steps"]]')" \
		'["ok", "failed", "ok", "skipped", "failed", "skipped", "skipped", "ok", "ok", "skipped", "ok"]' \
		"$M steps: soft failed and the job went on; failure() skipped before a failure, run after; success() skipped after one; always ran; \${{ failure() }} and \${{success()}} as the bare ones"
	[[ $OUT != *wrong* ]]
	ok $? "$M no skipped step ran"
	like "$(tail -n 1 <<<"$ERR")" "^warren: job conds: 11 steps, 5 ok, 1 failed \\(hard: exit 5\\), 1 failed but tolerated \\(soft: exit 3; continue-on-error\\), 4 skipped, [0-9.]+s\$" \
		"$M the summary line counts the steps and names the failure apart from the tolerated one"
	is "$(jget "$RJ" '[d["failed_step"], [s["name"] for s in d["steps"] if s["tolerated"]]]')" \
		'[{"number": 5, "name": "hard", "status": "failed", "exit_code": 5, "cause": "exit 5"}, ["soft"]]' \
		"$M result.json: failed_step names the step that failed the job (hard, exit 5); soft alone is tolerated"
	wr show "$ID"
	line_like "$OUT" '^failed step +5 hard: exit 5$' "$M warren show: 'failed step  5 hard: exit 5'"
	grep -qE '^step 2 +soft: failed \(exit 3\) but tolerated \(continue-on-error\), ' <<<"$OUT" &&
		grep -qE '^step 5 +hard: failed \(exit 5\), ' <<<"$OUT"
	ok $? "$M warren show marks the continue-on-error failure (soft) tolerated, not the one that failed the job (hard)" || diag "$OUT"
	wr history --limit 1
	line_like "$OUT" "^$ID +exited +5 .* step 5 hard: exit 5 \\(1 step failed but tolerated\\)\$" \
		"$M warren history: 'step 5 hard: exit 5 (1 step failed but tolerated)'"

	job_file softonly <<'YAML'
name: softonly
steps:
  - name: soft
    continue-on-error: true
    run: exit 3
  - name: next
    run: echo next-ran
YAML
	jrun "$JF"
	after_job
	is "$RC" 0 "$M a job whose only failure is continue-on-error exits 0"
	is "$(jget "$RJ" '[d["status"], d["exit_code"], [(s["status"], s["exit_code"]) for s in d["steps"]]]')" \
		'["exited", 0, [["failed", 3], ["ok", 0]]]' "$M result.json: exited 0; the soft step recorded failed with 3, the next ok"
	like "$(tail -n 1 <<<"$ERR")" "^warren: job softonly: 2 steps, 1 ok, 1 failed but tolerated \\(soft: exit 3; continue-on-error\\), [0-9.]+s\$" \
		"$M a job that passed with a tolerated failure: the summary says so"
	is "$(jget "$RJ" '[d["failed_step"], d["steps"][0]["tolerated"]]')" '[null, true]' \
		"$M ... result.json: no failed_step, the soft step tolerated"
	wr history --limit 1
	line_like "$OUT" "^$ID +exited +0 .* \\(1 step failed but tolerated\\)\$" "$M ... warren history marks it apart"

	# ---------------------------------------------------------------- a second cancel skips always()
	s1=$(uniq_arg); s2=$(uniq_arg)
	job_file cancel2 <<YAML
name: cancel2
steps:
  - name: one
    run: sleep $s1
  - name: cleanup
    if: always()
    timeout: 60s
    run: echo cleanup-started; exec sleep $s2
YAML
	jrun_bg "$JF"
	jp=$BG_PID
	wait_for 15 job_alive "$s1"
	after_job
	wr kill "$ID"
	wait_for 15 job_alive "$s2" && job_gone "$s1"
	ok $? "$M after warren kill the step is stopped and the always() step runs"
	wr kill "$ID"
	wait_bg "$jp" 20
	jrc=$RC
	ERR=$(cat "$BG_ERR")
	[ "$jrc" -gt 128 ] && [ "$jrc" -lt 160 ] && job_gone "$s2" &&
		[ "$(jget "$RJ" '[s["status"] for s in d["steps"]] + [d["status"]]')" = '["interrupted", "interrupted", "interrupted"]' ]
	ok $? "$M a second warren kill stops the always() step too: both steps interrupted, exit $jrc" ||
		diag "$(jget "$RJ" '[d["steps"], d["cause"]]')"
	nothing_left "$RD" "$M nothing of the twice-killed job left"
done

# Conditions and continue-on-error are checked like every other key: one line each, with
# line and column.
job_file badconds <<'YAML'
steps:
  - name: a
    run: echo a
    if: success() && github.ref
  - name: b
    run: echo b
    continue-on-error: maybe
YAML
bounded "$WARREN" job check "$JF"
[ "$RC" = 125 ] && [ "$(wc -l <<<"$ERR")" = 2 ] &&
	[[ $ERR == *"$JF:4:9: steps[0].if: \"success() && github.ref\" is not a condition this job file knows (always(), success() or failure())"* ]] &&
	[[ $ERR == *"$JF:7:24: steps[1].continue-on-error: \"maybe\" is not true or false"* ]]
ok $? "a bad if: and continue-on-error: are each reported at line:column, exit 125" || diag "rc $RC" "$ERR"

# ================================================================ issue 16: names, logs, show, check
use_mode root
M="[names]"
job_file names <<'YAML'
name: names
steps:
  - name: with space/slash
    run: echo spaced
  - name: two
    run: echo second; exit 3
YAML
jrun "$JF"
after_job
is "$RC" 3 "$M a job whose second step exits 3 exits 3"
is "$(jget "$RJ" '[s["name"] for s in d["steps"]]')" '["with space/slash", "two"]' "$M the record keeps the step's name whole"
lf=$(jget "$RJ" 'd["steps"][0]["log"]')
[[ $lf == log/1-* ]] && [[ $lf != */*/* ]] && [ -f "$RD/$lf" ] && [ "$(cat "$RD/$lf")" = spaced ]
ok $? "$M ... and its log is one file in log/ ($lf)" || diag "$(ls -la "$RD/log")"
wr logs "$ID" "with space/slash"
is "$RC/$OUT" "0/spaced" "$M warren logs RUN 'with space/slash': that step's output"
wr logs "$ID"
is "$OUT" "==> step 1: with space/slash <=="$'\n'spaced$'\n\n'"==> step 2: two <=="$'\n'second \
	"$M warren logs RUN: a header per step, with the step's name whole"
wr logs "$ID" nope
[ "$RC" = 125 ] && [[ $ERR == *"no step 'nope'"*"step 1: with space/slash, step 2: two"* ]]
ok $? "$M an unknown step: exit 125, and the line lists the steps" || diag "rc $RC: $ERR"
wr show "$ID"
line_like "$OUT" '^step 1 +with space/slash: ok \(exit 0\), [0-9.]+s, 7 B of output$' "$M warren show lists step 1: name, status, duration, output"
line_like "$OUT" '^step 2 +two: failed \(exit 3\), [0-9.]+s, 7 B of output$' "$M ... and step 2, failed (exit 3)"

bounded "$WARREN" job check "$JF" --json
is "$RC/$("$PY" -c 'import json, sys; d = json.load(sys.stdin); print(d["ok"], d["steps"], d["errors"])' <<<"$OUT")" "0/True 2 []" \
	"$M job check FILE --json: exit 0, ok, 2 steps, no errors"
job_file badkey <<'YAML'
steps:
  - run: "true"
    nme: x
YAML
bounded "$WARREN" job check --json "$JF"
is "$RC/$("$PY" -c 'import json, sys; d = json.load(sys.stdin); print(d["ok"], [(e["line"], e["column"], "nme" in e["message"]) for e in d["errors"]])' <<<"$OUT")" \
	"125/False [(3, 5, True)]" "$M job check --json of a wrong file: exit 125, each mistake with line, column and message"
bounded "$WARREN" job check --help
[ "$RC" = 0 ] && [[ $OUT == "usage: warren job"* ]]
ok $? "$M job check --help prints the help (exit 0)" || diag "rc $RC: $OUT $ERR"

printf 'steps:\n\t- run: "true"\n' >"$WORK/tabs.yaml"
bounded "$WARREN" job check "$WORK/tabs.yaml"
[ "$RC" = 125 ] && [ "$ERR" = "warren: $WORK/tabs.yaml:2:1: tabs are not allowed for indentation in YAML; indent with spaces" ]
ok $? "$M a tab-indented job file: one line, with its line number, that says tabs are not allowed" || diag "rc $RC: $ERR"
printf 'network: bogus\nsteps:\n  - run: "true"\n' >"$WORK/net.yaml"
bounded "$WARREN" job check "$WORK/net.yaml"
[ "$RC" = 125 ] && [[ $ERR == "warren: $WORK/net.yaml:1:10: network: 'bogus' is not a network mode"* ]] && [[ $ERR != *--net* ]]
ok $? "$M network: bogus names the key network:, not --net" || diag "rc $RC: $ERR"
bounded "$WARREN" job run /etc --state "$STATE"
[ "$RC" = 125 ] && [ "$ERR" = "warren: /etc: is a directory, not a job file; give the path of a job file (YAML)" ]
ok $? "$M job run on a directory says it is a directory" || diag "rc $RC: $ERR"
bounded "$WARREN" job run ./nowhere --state "$STATE"
[ "$RC" = 125 ] && [ "$ERR" = "warren: ./nowhere: cannot read the job file: No such file or directory" ]
ok $? "$M job run ./nowhere names ./nowhere as given" || diag "rc $RC: $ERR"
