#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# session.t - issue 32, items 1 and 2: sessions (a job with session:, whose commands come
# later) and warren exec. Per mode (root, the unprivileged user): a session whose service and
# setup step come first; an exec sees TMPDIR=/tmp and the run user; env, cwd and stdin; the
# command's status; an exec's time limit names itself and takes its process tree while a
# background process an earlier exec left stays; as root also what left the exec's session (the
# exec's own cgroup), rootless not (the record says which); a NUL in stdin passed on, in an
# argument refused; another user's exec refused; warren end (the
# record lists the execs, kind exec, nothing left); an exec on the ended run (one line, 125);
# a session ended by its idle time and one by its maximum life, each with its cause; one
# killed while an exec runs. Over the
# API of a warren serve of the mode's user: POST /v1/runs {session} ?wait=ready, exec (one
# answer, and ?stream=1), warren exec --via, a body over the limit (413), too many execs at
# once (429), end, an exec on the ended run (409). Root: many execs of large arguments keep the
# supervisor's memory and progress.json bounded, the record and warren show list them all.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

# Tests: per mode 41, and 17 over the API.
plan $(((41 + 17) * 2 + 16))

# job_file NAME: $WORK/NAME.yaml from stdin; its path in JF.
job_file() {
	JF=$WORK/$1.yaml
	cat >"$JF"
	chmod 644 "$JF"
}
# session_bg FILE: warren job run FILE in the background; waits for the session's socket
# (RD, ID: its run directory and id). 1 when it never came.
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
new_rundir() { local l; l=$(last_rundir); [ -n "$l" ] && [ "$l" != "$1" ]; }
# wx ARGS...: warren exec --state $STATE ARGS..., bounded (RC OUT ERR).
wx() { wr exec "$@"; }
# wx_in FILE ARGS...: the same with FILE as its standard input.
wx_in() {
	local in=$1; shift
	RC=0
	OUT=$(timeout -k 5 "$T_TIMEOUT" "${RUNNER[@]}" "$WARREN" exec --state "$STATE" "$@" <"$in" 2>"$TEST_SCRATCH/.wx.err") || RC=$?
	ERR=$(cat "$TEST_SCRATCH/.wx.err")
	rm -f "$TEST_SCRATCH/.wx.err"
}
# peer_as_nobody RUNDIR: connect to RUNDIR's session socket as nobody (through a descriptor of
# the directory opened before: the socket's own mode is the only way in) and ask for an exec;
# prints the answer.
peer_as_nobody() {
	"$PY" - "$1" <<'PYEOF'
import json, os, socket, sys
d = os.open(sys.argv[1], os.O_PATH)
os.setgroups([]); os.setgid(65534); os.setuid(65534)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect("/proc/self/fd/%d/session.sock" % d)
try:
    s.sendall(b'{"op":"exec","command":["true"]}\n')
except OSError:
    pass  # (refused at once: the answer waits all the same)
print(s.makefile().readline().strip())
PYEOF
}

for mode in root user; do
	use_mode "$mode"
	m="[$mode]"
	mkdir_for_mode "$WORK/sub"
	job_file sess <<'EOF'
name: sess
session: { idle: 1m, max: 5m }
services:
  db:
    run: echo up > $TMPDIR/db; exec sleep 1000
    ready: { run: test -s $TMPDIR/db }
steps:
  - name: setup
    run: echo prepared > /tmp/setup
EOF
	session_bg "$JF"; ok $? "$m a session job's socket appears once it is ready"
	wx "$ID" -- cat /tmp/setup /tmp/db
	is "$OUT" $'prepared\nup' "$m the session's service and setup step ran before it was ready"

	wx "$ID" -- sh -c 'echo $TMPDIR; id -u'
	is "$RC" 0 "$m an exec ends 0"
	is "$OUT" "/tmp"$'\n'"$JOB_UID" "$m an exec sees TMPDIR=/tmp and runs as the run user"

	printf 'from stdin\n' >"$TEST_SCRATCH/in"
	chmod 644 "$TEST_SCRATCH/in"
	wx_in "$TEST_SCRATCH/in" "$ID" -e FOO=bar -w sub -i -- sh -c 'echo "$FOO"; pwd; cat'
	is "$OUT" "bar"$'\n'"$WORK/sub"$'\n'"from stdin" "$m -e, -w and -i reach the command"
	wx "$ID" -- sh -c 'echo out; echo err >&2; exit 7'
	is "$RC" 7 "$m warren exec exits with the command's status"
	is "$OUT|$ERR" "out|err" "$m its stdout and stderr come apart"

	keep=$(uniq_arg) cut=$(uniq_arg)
	wx "$ID" -- sh -c "sleep $keep >/dev/null 2>&1 & echo started"
	is "$RC|$OUT" "0|started" "$m an exec that leaves a process in the background ends at once"
	wx "$ID" --timeout 1s -- sh -c "sleep $cut & sleep 50"
	is "$RC" 124 "$m an exec stopped by its time limit exits 124"
	like "$ERR" "exec time limit 1s reached at" "$m its cause names the exec's time limit"
	wait_for 10 no_procs_matching "sleep $cut"; ok $? "$m the time limit took the exec's whole process tree"
	has_procs_matching "sleep $keep"; ok $? "$m a background process of an earlier exec survives"

	# what leaves the exec's session (setsid; a double fork that ignores SIGTERM): as root each
	# exec has a cgroup of its own below the run's, which its time limit takes whole (SIGTERM,
	# SIGKILL after the grace); rootless there is none, and only its session is taken: those
	# stay until the session ends (docs/guide.md)
	esc=9$(uniq_arg) esc2=9$(uniq_arg)  # (9xx s: they do not end by themselves meanwhile)
	start_bg "${RUNNER[@]}" "$WARREN" exec --state "$STATE" "$ID" --timeout 2s -- \
		sh -c "setsid sleep $esc & (setsid sh -c 'trap \"\" TERM; exec sleep $esc2' &); sleep 50"
	xpid=$BG_PID xerr=$BG_ERR
	wait_for 10 job_alive "$esc2"
	cg=$(cat "/proc/$(job_pids "$esc" | head -1)/cgroup" 2>/dev/null)
	if [ "$mode" = root ]; then
		like "$cg" "$ID\.[0-9a-f]{8}/exec-7"$'(\n|$)' "$m an exec's processes are in its own cgroup, also one that left its session"
		# (v1: the exec's group is the freezer's; the run's own groups, its limits, hold it still)
		if grep -q ':memory:' <<<"$cg"; then
			like "$(grep ':memory:' <<<"$cg")" "$ID\.[0-9a-f]{8}$" "$m ... and still in the run's memory group (its limit holds)"
		else
			ok 0 "$m ... (v2: one hierarchy, the exec's group below the run's)"
		fi
	else
		unlike "$cg" "/exec-[0-9]+"$'(\n|$)' "$m rootless: no cgroup of the exec's own"
		ok 0 "$m (rootless: no run group either)"
	fi
	wait_bg "$xpid" 30
	is "$RC" 124 "$m an exec whose processes left its session still ends at its time limit (124)"
	if [ "$mode" = root ]; then
		wait_for 5 job_gone "$esc"; ok $? "$m its time limit took a process that left its session (setsid)"
		wait_for 15 job_gone "$esc2"; ok $? "$m ... and one of a double fork that ignores SIGTERM, after the grace"
	else
		job_alive "$esc"; ok $? "$m rootless: a process that left the exec's session outlives its time limit (its session is all it takes)"
		job_alive "$esc2"; ok $? "$m ... as does one of a double fork; both end with the session"
	fi
	printf 'a\0b' >"$TEST_SCRATCH/nul"
	chmod 644 "$TEST_SCRATCH/nul"
	wx_in "$TEST_SCRATCH/nul" "$ID" -i -- od -An -c
	is "$RC $(echo $OUT)" '0 a \0 b' "$m -i passes a NUL byte of its input to the command"

	RC=0; ERR=$(timeout 20 setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME=/nonexistent "$WARREN" exec --state "$STATE" "$ID" -- true 2>&1 >/dev/null) || RC=$?
	is "$RC" 125 "$m another user's exec is refused (125)"
	one_warren_line "$m ... with one line"
	# (a mistake made on purpose: the socket's and the run directory's modes would let anyone in)
	rd_mode=$(stat -c %a "$RD")
	chmod 0666 "$RD/session.sock"; chmod 0711 "$RD"
	like "$(peer_as_nobody "$RD" 2>&1)" '"status": ?403' "$m the session itself refuses a peer that is neither its owner nor root"
	chmod "$rd_mode" "$RD"

	wr end "$ID"
	is "$RC" 0 "$m warren end ends the session"
	wait_bg "$JOB_PID"
	is "$RC" 0 "$m the session's job exits 0 after a normal end"
	RJ=$RD/result.json
	is "$(jget "$RJ" 'd["status"]')" exited "$m its record says exited"
	is "$(jget "$RJ" '" ".join(s.get("kind","step") for s in d["steps"])')" "step exec exec exec exec exec exec exec exec" \
		"$m the record lists the setup step and each exec (kind exec)"
	is "$(jget "$RJ" '[s for s in d["steps"] if s.get("kind")=="exec"][5]["status"]')" limit \
		"$m the exec its time limit stopped is recorded as limit"
	is "$(jget "$RJ" '[s for s in d["steps"] if s.get("kind")=="exec"][1]["command"][0]')" sh \
		"$m an exec's command is in the record"
	grep -q "^from stdin" "$RD"/log/*-exec-3.log; ok $? "$m an exec's output is in its log"
	want_tree=cgroup; [ "$mode" = root ] || want_tree=session
	is "$(jget "$RJ" '[s for s in d["steps"] if s.get("kind")=="exec"][6]["tree"]')" "$want_tree" \
		"$m the record says how an exec's tree was taken ($want_tree)"
	no_procs_matching "sleep $esc"; ok $? "$m what left an exec's session ended with the session at the latest"
	no_procs_matching "sleep $keep"; ok $? "$m the background process ended with the session"
	nothing_left "$RD" "$m nothing is left after the session's end"

	wx "$ID" -- true
	is "$RC" 125 "$m an exec on an ended run exits 125"
	one_warren_line "$m ... with one line"

	job_file idle <<'EOF'
session: { idle: 2s }
EOF
	session_bg "$JF"; ok $? "$m an idle session starts"
	wait_bg "$JOB_PID" 30
	is "$(jget "$RD/result.json" 'd["cause"]["limit"] + ": " + d["cause"]["message"]')" "session-idle: session idle for 2s; sent SIGTERM" \
		"$m a session without execs ends at its idle time, with its cause"
	job_file max <<'EOF'
session: { idle: 1m, max: 3s }
EOF
	session_bg "$JF"
	wx "$ID" -- sleep 1
	wait_bg "$JOB_PID" 30
	is "$(jget "$RD/result.json" 'd["cause"]["limit"] + ": " + d["cause"]["message"]')" \
		"session-max: session reached its maximum life 3s; sent SIGTERM" "$m a session ends at its maximum life, with its cause"
	nothing_left "$RD" "$m nothing is left after a session's max"
	job_file killme <<'EOF'
session: {}
EOF
	session_bg "$JF"
	cut=$(uniq_arg)
	start_bg "${RUNNER[@]}" "$WARREN" exec --state "$STATE" "$ID" -- sleep "$cut"
	xpid=$BG_PID xerr=$BG_ERR
	wait_for 10 has_procs_matching "sleep $cut"
	wr kill "$ID"
	wait_bg "$xpid" 30
	is "$RC" 125 "$m an exec that warren kill of its session cut exits 125 ..."
	grep -q "exec 1: killed by warren kill" "$xerr"; ok $? "$m ... and names the kill" || diag "$(cat "$xerr")"
	wait_bg "$JOB_PID" 30
	nothing_left "$RD" "$m nothing is left of a killed session"

	# ---- over the API of a warren serve (as the mode's user)
	SOCK=$(dirname "$STATE")/api.sock
	start_server 15 --listen "unix:$SOCK" --slots 2; ok $? "$m warren serve answers"
	api POST '/v1/runs?wait=ready' "{\"session\": {\"idle\": \"1m\"}, \"worktree\": $(jstr "$WORK")}"
	ID=$(jbody 'd["id"]'); RD=$STATE/runs/$ID
	is "$CODE $(jbody 'd["state"]')" "201 ready" "$m POST /v1/runs {session} ?wait=ready answers once it is ready"
	api POST "/v1/runs/$ID/exec" '{"command": ["sh", "-c", "echo $TMPDIR $A; cat; echo e >&2; exit 3"], "env": {"A": "b"}, "stdin": "in\n"}'
	is "$CODE $(jbody '[d["exit_code"], d["stdout"], d["stderr"], d["stdout_truncated"]]')" '200 [3, "/tmp b\nin\n", "e\n", false]' \
		"$m POST .../exec answers when the command ended: its status and output"
	out=$(api_curl 30 -X POST --data-binary '{"command": ["sh", "-c", "echo one; sleep 0.3; echo two"]}' "http://warren/v1/runs/$ID/exec?stream=1")
	is "$(printf '%s\n' "$out" | grep -v -e '^{"exec"' -e '^{"end"' -e '^{"keepalive"')" $'{"stdout":4}\none\n{"stdout":4}\ntwo' \
		"$m ?stream=1 streams the output ..."
	like "$out" '"end":\{"exec":[0-9]+,"exit_code":0' "$m ... and then the end"
	api POST "/v1/runs/$ID/exec" '{"command": ["echo", "a\u0000b"]}'
	is "$CODE $(jbody 'd["error"]')" "400 command: an argument holds a NUL character (\\u0000), which no program's argument can" \
		"$m a NUL in a command's argument is refused in one line (400)"
	bounded "${RUNNER[@]}" "$WARREN" exec --via "unix:$SOCK" "$ID" -e K=v -- sh -c 'echo $K; exit 5'
	is "$RC $OUT" "5 v" "$m warren exec --via exits with the command's status"
	# keep-alive: one connection to the run's socket, several execs ("keep": true), one after
	# the other; then two sent at once (the second waits for the first's answer), the last
	# without keep: the connection closes after its answer
	"${RUNNER[@]}" "$PY" - "$RD" >"$TEST_SCRATCH/keep.out" 2>&1 <<'PYEOF'
import json, os, socket, sys
d = os.open(sys.argv[1], os.O_PATH)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.settimeout(20)
c.connect("/proc/self/fd/%d/session.sock" % d)
f = c.makefile("rb")
got = []
for i in range(3):
    c.sendall((json.dumps({"op": "exec", "command": ["sh", "-c", "echo %d; exit %d" % (i, i)], "keep": True}) + "\n").encode())
    a = json.loads(f.readline())
    got.append("%s:%s" % (a["exit_code"], a["stdout"].strip()))
print(" ".join(got))
c.sendall(b'{"op":"exec","command":["sh","-c","sleep 0.2; echo a"],"keep":true}\n{"op":"exec","command":["echo","b"]}\n')
a, b = json.loads(f.readline()), json.loads(f.readline())
print(a["stdout"].strip() + b["stdout"].strip(), "closed" if f.readline() == b"" else "open")
PYEOF
	is "$(head -1 "$TEST_SCRATCH/keep.out")" "0:0 1:1 2:2" "$m keep-alive: three execs on one connection, each answered in turn" ||
		diag "$(cat "$TEST_SCRATCH/keep.out")"
	is "$(sed -n 2p "$TEST_SCRATCH/keep.out")" "ab closed" "$m ... two sent at once answered in order; the one without keep closes it"
	# the executor ignores signals (its own, the server's SIGPIPE): none is ignored in an exec
	api POST "/v1/runs/$ID/exec" '{"command": ["grep", "^SigIgn:", "/proc/self/status"]}'
	is "$(jbody 'd["stdout"]')" "SigIgn:	0000000000000000" "$m an exec ignores no signal" || diag "$BODY"
	"$PY" -c 'import json; print(json.dumps({"command": ["true"], "stdin": "x" * (1 << 20)}))' >"$TEST_SCRATCH/big.json"
	chmod 644 "$TEST_SCRATCH/big.json"
	is "$(api_curl 30 -o /dev/null -w '%{http_code}' -X POST --data-binary @"$TEST_SCRATCH/big.json" "http://warren/v1/runs/$ID/exec")" 413 \
		"$m a body over the limit is 413"
	# 16 execs held at once through the run's own socket, then one more through the API
	"${RUNNER[@]}" "$PY" - "$RD" >"$TEST_SCRATCH/held.out" 2>&1 <<'PYEOF' &
import os, socket, sys
d = os.open(sys.argv[1], os.O_PATH)  # (its path may be too long for a socket's)
cs = []
for i in range(16):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect("/proc/self/fd/%d/session.sock" % d)
    c.sendall(b'{"op":"exec","command":["sleep","3"]}\n')
    cs.append(c)
print("held", flush=True)
print(sum(1 for c in cs if b'"exit_code":0' in c.makefile("rb").readline()), flush=True)
PYEOF
	held=$!
	wait_for 10 grep -q held "$TEST_SCRATCH/held.out"; sleep 0.5
	api POST "/v1/runs/$ID/exec" '{"command": ["true"]}'
	is "$CODE" 429 "$m an exec over the session's execs at once is 429 ..."
	like "$(jbody 'd["error"]')" "^16 execs already run in this session at once" "$m ... with one line"
	wait "$held"
	is "$(tail -1 "$TEST_SCRATCH/held.out")" 16 "$m the 16 execs held ended 0"
	api POST "/v1/runs/$ID/end"
	is "$CODE" 202 "$m POST .../end is 202"
	wait_for 30 run_ended "$ID"
	api POST "/v1/runs/$ID/exec" '{"command": ["true"]}'
	is "$CODE" 409 "$m an exec on the ended run is 409"
	stop_server 30
	nothing_left "$RD" "$m nothing is left of the API's session"
done

# ---- many execs of large arguments (an agent's scripts and heredocs): the supervisor keeps of
# each only what its record shows (the first 4 KiB of its arguments, their whole length
# counted), progress.json lists the last 50 and how many it left out; the supervisor's memory
# stays bounded (it held every argv, and rewrote them all into progress.json at each change).
# Root mode.
use_mode root
job_file many <<'EOF'
session: { idle: 5m, max: 10m }
EOF
before=$(last_rundir)
# (an ASan build's quarantine would hold what is freed for a while: the measure is of what the
# supervisor keeps)
start_bg env --default-signal=INT ASAN_OPTIONS=quarantine_size_mb=0 "$WARREN" job run "$JF" --state "$STATE" --work "$WORK"
JOB_PID=$BG_PID
wait_for 30 new_rundir "$before"; RD=$(last_rundir); ID=$(basename "$RD")
wait_for 30 test -S "$RD/session.sock"
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$JOB_PID/status"; }
# big_execs N: N execs of 3 x 65000 bytes of arguments through the run's socket; how many ended 0
big_execs() {
	timeout 300 "$PY" - "$RD" "$1" <<'PYEOF'
import json, os, socket, sys
d = os.open(sys.argv[1], os.O_PATH)
req = (json.dumps({"op": "exec", "command": ["true"] + ["x" * 65000] * 3}) + "\n").encode()
ok = 0
for i in range(int(sys.argv[2])):
    c = socket.socket(socket.AF_UNIX)
    c.connect("/proc/self/fd/%d/session.sock" % d)
    c.sendall(req)
    ok += b'"exit_code":0' in c.makefile("rb").readline()
    c.close()
print(ok)
PYEOF
}
is "$(big_execs 20)" 20 "[root] 20 execs of 195 KB of arguments each end 0 ..."
r0=$(rss_kb)
is "$(big_execs 80)" 80 "[root] ... and 80 more"
r1=$(rss_kb)
[ -n "$r0" ] && [ -n "$r1" ] && [ $((r1 - r0)) -lt 10240 ]
ok $? "[root] the supervisor's memory stays bounded over them (VmRSS $r0 kB, then $r1 kB)"
sleep 0.5  # (progress.json is written at the runner's next tick)
pj_size=$(stat -c %s "$RD/progress.json")
[ "$pj_size" -lt 524288 ]; ok $? "[root] progress.json stays small ($pj_size bytes) ..."
is "$(jget "$RD/progress.json" '[len([s for s in d["steps"] if s.get("kind") == "exec"]), d.get("execs_left_out")]')" "[50, 50]" \
	"[root] ... listing the last 50 execs and how many it left out"
wr end "$ID"
wait_bg "$JOB_PID" 60
is "$(jget "$RD/result.json" '[len(d["steps"]), sum(len(a) for a in d["steps"][-1]["command"]), d["steps"][-1]["command_cut"], d["steps"][-1]["command_bytes"]]')" \
	"[100, 4096, true, 195008]" "[root] the record lists every exec, its command cut to its first 4 KiB (cut, its length counted)"
wr show "$ID"
is "$(grep -cE 'exec [0-9]+: ok' <<<"$OUT")" 100 "[root] warren show lists every exec"
nothing_left "$RD" "[root] nothing is left of the session of many execs"

# ---- a session's supervisor killed (kill -9) while an exec's group holds a process left in the
# background: warren gc reclaims the exec's group with the run's (the freezer's too). Root mode.
use_mode root
job_file crash <<'EOF'
session: { idle: 1m }
EOF
session_bg "$JF"
bg=9$(uniq_arg)
wx "$ID" -- sh -c "sleep $bg >/dev/null 2>&1 &"
[ -n "$(find /sys/fs/cgroup -maxdepth 7 -type d -path "*/$ID*/exec-1" 2>/dev/null)" ]
ok $? "[root] an exec's group stays while a process it left runs"
wx "$ID" -- sh -c "sleep 1 >/dev/null 2>&1 &"
exec_group_gone() { [ -z "$(find /sys/fs/cgroup -maxdepth 7 -type d -path "*/$ID*/exec-2" 2>/dev/null)" ]; }
wait_for 6 exec_group_gone; ok $? "[root] ... and goes once the last one ended"
kill -KILL "$JOB_PID"; wait "$JOB_PID" 2>/dev/null
wait_for 10 job_gone "$bg"
wr gc
nothing_left "$RD" "[root] warren gc after kill -9 of a session's supervisor leaves nothing, its execs' groups included" norecord

# ---- a job that stops its own executor (kill -STOP $PPID: it runs as the job) holds neither
# the supervisor nor the run: large starts it cannot take are refused, not waited for (they
# blocked the supervisor in sendmsg, and with it max and warren kill), and an ended session
# whose cell does not end is stopped (it waited for the executor for ever). Root mode.
use_mode root
# stop_executor: an exec of the session RD that stops the executor, from a caller that goes
# away a second later without asking its stop (warren exec's would wake the executor to stop it)
stop_executor() {
	"$PY" - "$RD" <<'PYEOF'
import os, socket, sys, time
d = os.open(sys.argv[1], os.O_PATH)
c = socket.socket(socket.AF_UNIX)
c.connect("/proc/self/fd/%d/session.sock" % d)
c.sendall(b'{"op":"exec","command":["sh","-c","kill -STOP $PPID"]}\n')
time.sleep(1)
c.close()
PYEOF
}
job_file stopper <<'EOF'
session: { idle: 1m, max: 6s }
EOF
session_bg "$JF"
stop_executor
"$PY" - "$RD" >"$TEST_SCRATCH/big.out" 2>&1 <<'PYEOF' &
import json, os, socket, sys
d = os.open(sys.argv[1], os.O_PATH)
for i in range(4):   # an agent's command with a big script: 3 x 60 KB of arguments
    c = socket.socket(socket.AF_UNIX)
    c.connect("/proc/self/fd/%d/session.sock" % d)
    c.sendall((json.dumps({"op": "exec", "command": ["sh", "-c", ": " + "x" * 60000, "a" * 60000, "b" * 60000]}) + "\n").encode())
    c.settimeout(5)
    try:
        print(c.makefile("rb").readline().decode().strip()[:160], flush=True)
    except OSError:
        print("no answer", flush=True)
PYEOF
big=$!
wait_bg "$JOB_PID" 40
ok $? "[root] a session whose executor a process of the cell stopped still ends at its max (6s)"
like "$(jget "$RD/result.json" 'd["cause"]["limit"]')" "^session-max$" "[root] ... with the max's cause"
wait "$big"
# (the executor is woken before each start; one it still cannot take at once is refused, 503)
big_out=$(cat "$TEST_SCRATCH/big.out")
[ "$(grep -cE '"exec":[0-9]|not taking commands|session is ending' <<<"$big_out")" = 4 ]
ok $? "[root] each start after the executor was stopped is answered: woken and run, or refused; none waited for" || diag "$big_out"
job_file stopper2 <<'EOF'
session: { idle: 1m, max: 10m }
EOF
session_bg "$JF"
stop_executor
bounded timeout 5 "$WARREN" end --state "$STATE" "$ID"
wait_bg "$JOB_PID" 40
ok $? "[root] an ended session whose executor was left stopped ends within twice the grace and 5 s"
like "$(jget "$RD/result.json" 'd["cause"]["limit"] + ": " + d["cause"]["message"]')" "^session-end: the session was ended and its cell had not ended" "[root] ... named as such"
