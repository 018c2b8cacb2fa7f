#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# limits.t - issue 3: each limit stops a job that exceeds it, with one line
# "warren: run_<id> stopped: <cause>" on stderr, the exit code, and result.json's
# status/cause; a job within its limits is untouched; SIGINT to warren stops the cell
# with its cause; kill -9 of warren leaves no process and `warren gc` leaves nothing.
# Limits by cgroups are tested as root; the wall clock and signals also as the user.
. "$(dirname "$0")/../lib.sh"

plan 107

use_mode root

# after_stop DESC_PREFIX: RUNDIR, RJ, LINE, ID set from the last run.
after_stop() {
	RUNDIR=$(last_rundir); RUNDIR=${RUNDIR:-$STATE/runs/none}
	RJ=$RUNDIR/result.json
	LINE=$(stopped_line)
	ID=$(basename "$RUNDIR")
}

# cause_recorded DESC: result.json has status "limit" and a cause whose message is the
# text of the stderr line after "stopped: ".
cause_recorded() {
	local st msg want
	st=$(jget "$RJ" 'd["status"]')
	msg=$(jget "$RJ" 'd["cause"]["message"]')
	want=${LINE#*stopped: }
	[ "$st" = "${2:-limit}" ] && [ -n "$LINE" ] && [ -n "$msg" ] && [[ $want == *"$msg"* ]]
	ok $? "$1" || diag "status: $st" "cause: $(jget "$RJ" 'd["cause"]')" "stderr line: $LINE"
}

# by_signal DESC: RC is 128+N, N a signal (the job was killed by a signal).
by_signal() {
	[ -n "$LINE" ] && [[ $RC =~ ^[0-9]+$ ]] && [ "$RC" -gt 128 ] && [ "$RC" -lt 160 ]
	ok $? "$1" || diag "exit: $RC" "stopped line: $LINE"
}

# ---------------------------------------------------------------- --time
wrun --time 1s -- sleep 30
after_stop
is "$RC" 124 "--time 1s on sleep 30: exit 124"
like "$LINE" "^warren: $ID stopped: wall-clock limit 1s reached at 1\\.[0-9]{2}s; sent SIGTERM" \
	"--time: one line 'warren: <id> stopped: wall-clock limit 1s reached at 1.NNs; sent SIGTERM...'"
[ -n "$LINE" ] && within_ms 10000
ok $? "--time: stopped within 10s (took ${ELAPSED_MS}ms)"
cause_recorded "--time: result.json status limit, cause.message = the stderr cause"
is "$(jget "$RJ" 'd["limits"]["time_ms"]')" 1000 "--time: result.json limits.time_ms 1000"
w=$(jget "$RJ" 'd["wall_s"]')
"$PY" -c 'import sys; sys.exit(not (1.0 <= float(sys.argv[1]) < 10))' "$w" 2>/dev/null
ok $? "--time: result.json wall_s between 1 and 10 (got $w)"
missing=$("$PY" - "$RJ" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("(no result.json: %s)" % e); sys.exit(0)
keys = "id command worktree rootfs user started_at ended_at status exit_code signal cause wall_s cpu_user_s cpu_sys_s peak_memory_bytes pids_peak output_bytes scratch_bytes limits".split()
m = [k for k in keys if k not in d]
m += ["cause." + k for k in ("limit", "value", "message") if not isinstance(d.get("cause"), dict) or k not in d["cause"]]
m += ["limits." + k for k in "time_ms cpu_time_ms memory pids output scratch grace_ms".split() if k not in (d.get("limits") or {})]
print(" ".join(m))
EOF
)
is "$missing" "" "result.json has every field of issue 3 (id ... limits)"
nothing_left "$RUNDIR" "--time: nothing left"

# --result FILE gets the same JSON.
wrun --time 1s --result "$TEST_SCRATCH/result-copy.json" -- sleep 30
after_stop
"$PY" -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
	"$TEST_SCRATCH/result-copy.json" "$RJ" 2>/dev/null
ok $? "--result FILE: FILE holds the same JSON as result.json"

# A job that ignores SIGTERM gets SIGKILL after the grace. env ignores it before it executes
# sleep (an exec keeps SIG_IGN), within milliseconds of the job's start: a job that must first
# start an interpreter (python: a second in make check-v2's TCG guest) races its own limit.
wrun --time 1s --grace 1s -- env --ignore-signal=TERM sleep 30
after_stop
is "$RC" 124 "--time 1s --grace 1s on a job ignoring SIGTERM: exit 124"
like "$LINE" "stopped: wall-clock limit 1s reached at 1\\.[0-9]{2}s; sent SIGTERM, then SIGKILL after 1s" \
	"... the cause names SIGTERM, then SIGKILL after 1s"
[ "$RC" = 124 ] && within_ms 10000
ok $? "... stopped within 10s (took ${ELAPSED_MS}ms)"

# The CPU time a job spent before its SIGKILL is in the record: init kills and reaps the cell
# itself (the kernel's sweep after pid 1 is gone accounted it to no one: 0.002 s here, for 2 s
# of a busy loop), and so is that of a process the job left running when it ended.
cpu_at_least() { # DESC MIN: result.json's cpu_user_s + cpu_sys_s >= MIN
	local c
	c=$(jget "$RJ" 'd["cpu_user_s"] + d["cpu_sys_s"]')
	"$PY" -c 'import sys; sys.exit(not float(sys.argv[1]) >= float(sys.argv[2]))' "$c" "$2" 2>/dev/null
	ok $? "$1 (got $c s)"
}
wrun --time 1s --grace 1s -- env --ignore-signal=TERM sh -c 'while :; do :; done'
after_stop
is "$RC" 124 "a busy loop ignoring SIGTERM, --time 1s --grace 1s: exit 124"
cpu_at_least "... its CPU time until the SIGKILL is in result.json (at least 0.5 s)" 0.5
wrun -- sh -c '(while :; do :; done) & sleep 1; exit 3'
after_stop
is "$RC" 3 "a job that leaves a busy process behind and exits 3: exit 3"
cpu_at_least "... the CPU time of the process it left is in result.json (at least 0.5 s)" 0.5
nothing_left "$RUNDIR" "... and the process it left is gone"

# ---------------------------------------------------------------- --cpu-time
wrun --cpu-time 1s -- sh -c 'while :; do :; done'
after_stop
is "$RC" 124 "--cpu-time 1s on a busy loop: exit 124"
like "$LINE" "^warren: $ID stopped: [Cc][Pp][Uu][- ]time limit 1s reached" "--cpu-time: one line 'stopped: CPU-time limit 1s reached...'"
cause_recorded "--cpu-time: result.json status limit and the cause"
c=$(jget "$RJ" 'd["cpu_user_s"] + d["cpu_sys_s"]')
"$PY" -c 'import sys; sys.exit(not (0.9 <= float(sys.argv[1]) < 5))' "$c" 2>/dev/null
ok $? "--cpu-time: result.json cpu_user_s + cpu_sys_s about 1s (got $c)"
nothing_left "$RUNDIR" "--cpu-time: nothing left"

# CPU time of every process of the cell counts, not only the first one's.
wrun --cpu-time 2s -- sh -c '(while :; do :; done) & (while :; do :; done) & sleep 30'
after_stop
is "$RC" 124 "--cpu-time 2s, two busy children of an idle parent: exit 124"
[ "$RC" = 124 ] && within_ms 10000
ok $? "... stopped within 10s (took ${ELAPSED_MS}ms)"
nothing_left "$RUNDIR" "... and no busy child is left"

# ---------------------------------------------------------------- --memory
HOG='b = []
for i in range(1024):
    b.append(b"x" * (1 << 20))
print("allocated 1 GiB")'
wrun --memory 64M -- python3 -c "$HOG"
after_stop
is "$RC" 137 "--memory 64M on a 1 GiB python hog: exit 137 (killed by SIGKILL)"
like "$LINE" "^warren: $ID stopped: memory limit 64 MiB reached" "--memory: one line 'stopped: memory limit 64 MiB reached...'"
[ -n "$LINE" ] && [[ $OUT != *allocated* ]]
ok $? "--memory: the hog did not get its 1 GiB"
cause_recorded "--memory: result.json status limit and the cause"
p=$(jget "$RJ" 'd["peak_memory_bytes"]')
"$PY" -c 'import sys; sys.exit(not (16 << 20 <= int(sys.argv[1]) <= 72 << 20))' "$p" 2>/dev/null
ok $? "--memory: result.json peak_memory_bytes between 16 MiB and 72 MiB (got $p)"
is "$(jget "$RJ" 'd["limits"]["memory"]')" $((64 << 20)) "--memory: result.json limits.memory = 64 MiB"
nothing_left "$RUNDIR" "--memory: nothing left (cgroup removed)"

# ---------------------------------------------------------------- --pids
# A bounded fork bomb: at most 60 children, each sleeping 20s; it stops by itself.
BOMB='import os, time
kids, fails = [], 0
for i in range(60):
    try:
        pid = os.fork()
    except OSError:
        fails += 1
        time.sleep(0.05)
        continue
    if pid == 0:
        time.sleep(20)
        os._exit(0)
    kids.append(pid)
print("forked", len(kids), "failed", fails, flush=True)
for k in kids:
    os.waitpid(k, 0)'
wrun --pids 20 -- python3 -c "$BOMB"
after_stop
like "$LINE" "^warren: $ID stopped: process limit 20 reached" "--pids 20 on a fork bomb: one line 'stopped: process limit 20 reached...'"
by_signal "--pids: exit 128+N (the job was stopped by a signal)"
[ -n "$LINE" ] && [ "$ELAPSED_MS" -lt 19000 ]
ok $? "--pids: stopped before the bomb's children end by themselves (took ${ELAPSED_MS}ms)"
cause_recorded "--pids: result.json status limit and the cause"
pp=$(jget "$RJ" 'd["pids_peak"]')
"$PY" -c 'import sys; sys.exit(not (2 <= int(sys.argv[1]) <= 20))' "$pp" 2>/dev/null
ok $? "--pids: result.json pids_peak between 2 and 20 (got $pp)"
nothing_left "$RUNDIR" "--pids: no child of the bomb is left"

# ---------------------------------------------------------------- --output
wrun --output 1K -- sh -c 'echo BEFORE-THE-FLOOD; exec yes'
after_stop
like "$LINE" "^warren: $ID stopped: output limit 1 KiB reached" "--output 1K on yes: one line 'stopped: output limit 1 KiB reached...'"
is "$(head -n1 <<<"$OUT")" BEFORE-THE-FLOOD "--output: what came before is kept"
n=${#OUT}
ok $((n >= 100 && n <= 1024 ? 0 : 1)) "--output: between 100 and 1024 bytes reached stdout (got $n)"
[[ $(tail -n +2 <<<"$OUT" | head -n -1 | sort -u) == y ]]
ok $? "--output: the kept output is the job's (lines of y)"
cause_recorded "--output: result.json status limit and the cause"
by_signal "--output: exit 128+N (the job was stopped by a signal)"
nothing_left "$RUNDIR" "--output: nothing left"
wrun --output 1K -- sh -c 'exec yes >&2'
after_stop
like "$LINE" "stopped: output limit 1 KiB reached" "--output counts stderr too"

# ---------------------------------------------------------------- --scratch
wrun --scratch 1M -- sh -c 'dd if=/dev/zero of="$TMPDIR/fill" bs=64k count=64; echo dd-exit=$?; sleep 10; echo not-stopped'
after_stop
like "$LINE" "^warren: $ID stopped: scratch limit 1 MiB reached" "--scratch 1M, dd of 4 MiB into \$TMPDIR: one line 'stopped: scratch limit 1 MiB reached...'"
cause_recorded "--scratch: result.json status limit and the cause"
by_signal "--scratch: exit 128+N (the job was stopped by a signal)"
[ -n "$LINE" ] && [[ $OUT != *not-stopped* ]]
ok $? "--scratch: the job was stopped (it did not finish its sleep 10)"
nothing_left "$RUNDIR" "--scratch: the full scratch is reclaimed"
wrun --scratch 1M -- sh -c 'dd if=/dev/zero of="$HOME/fill" bs=64k count=64; echo dd-exit=$?'
after_stop
like "$LINE" "stopped: scratch limit 1 MiB reached" "--scratch counts \$HOME too"

# ---------------------------------------------------------------- within the limits
wrun --time 30s --cpu-time 30s --memory 256M --pids 64 --output 1M --scratch 16M --grace 2s -- \
	sh -c 'echo hi; dd if=/dev/zero of="$TMPDIR/f" bs=64k count=16 2>/dev/null; python3 -c "x = bytearray(32 << 20)"; sleep 0.2; echo bye'
after_stop
is "$RC" 0 "a job within all its limits exits 0"
is "$OUT" hi$'\n'bye "... its output is untouched"
[ "$RC" = 0 ] && [ -z "$LINE" ]
ok $? "... no 'stopped:' line" || diag "$ERR"
is "$(jget "$RJ" 'd["status"]')/$(jget "$RJ" 'd["exit_code"]')/$(jget "$RJ" 'd["cause"]')" exited/0/null \
	"... result.json: status exited, exit_code 0, cause null"
is "$(jget "$RJ" '[d["limits"][k] for k in ("time_ms", "cpu_time_ms", "memory", "pids", "output", "scratch", "grace_ms")]')" \
	"[30000, 30000, 268435456, 64, 1048576, 16777216, 2000]" "... result.json: the limits as asked"
nothing_left "$RUNDIR" "... nothing left"

# ---------------------------------------------------------------- signals to warren
for sig in INT TERM; do
	s=$(uniq_arg)
	wr_bg run --work "$WORK" -- sleep "$s"
	wp=$BG_PID
	wait_for 15 job_alive "$s"
	kill -"$sig" "$wp" 2>/dev/null
	wait_bg "$wp" 20
	rc=$RC
	ERR=$(cat "$BG_ERR")
	after_stop
	like "$LINE" "^warren: $ID stopped: interrupted by SIG$sig" "SIG$sig to warren: one line 'stopped: interrupted by SIG$sig'"
	RC=$rc by_signal "SIG$sig: exit 128+N"
	cause_recorded "SIG$sig: result.json status interrupted and the cause" interrupted
	nothing_left "$RUNDIR" "SIG$sig: no process of the cell, nothing left"
done

# Asked twice: the second interrupt SIGKILLs the cell at once, and the cause says so (it said
# "then SIGKILL after <the grace>", which had not passed)
s=$(uniq_arg)
wr_bg run --work "$WORK" -- env --ignore-signal=INT sleep "$s"
wp=$BG_PID
wait_for 15 job_alive "$s"
kill -INT "$wp" 2>/dev/null
sleep 0.3
kill -INT "$wp" 2>/dev/null
wait_bg "$wp" 20
rc=$RC
ERR=$(cat "$BG_ERR")
after_stop
like "$rc:$LINE" "^130:warren: $ID stopped: interrupted by SIGINT; sent SIGINT, then SIGKILL when interrupted again\$" \
	"SIGINT twice to warren, the job ignoring it: killed at once, exit 130, the cause saying so"
nothing_left "$RUNDIR" "... nothing left"

# SIGTERM while a process outside the cell holds the job's output open (the job handed its
# stdout and stderr out over a socket in the worktree): the cell is stopped and warren ends at
# once with the interrupted record; it does not wait for an end of output that never comes.
start_fd_holder "$WORK/holder.sock"
hp=$HOLDER_PID
s=$(uniq_arg)
wr_bg run --work "$WORK" -- python3 -c 'import socket, subprocess, sys
c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); socket.send_fds(c, [b"x"], [1, 2]); c.recv(1)
subprocess.run(["sleep", sys.argv[2]])' "$WORK/holder.sock" "$s"
wp=$BG_PID
wait_for 15 grep -q held "$HOLDER_OUT" && wait_for 15 job_alive "$s"
kill -TERM "$wp" 2>/dev/null
wait_bg "$wp" 10
rc=$RC
ERR=$(cat "$BG_ERR")
after_stop
is "$rc" 143 "SIGTERM with the job's output held outside the cell: warren ends at once, exit 143"
like "$LINE" "^warren: $ID stopped: interrupted by SIGTERM" "... one line 'stopped: interrupted by SIGTERM'"
cause_recorded "... result.json status interrupted and the cause" interrupted
line_like "$ERR" "^warren: $ID: a process outside the cell held the job's output open \\(stdout, stderr\\)" \
	"... and one line saying that a process outside the cell held the output open"
nothing_left "$RUNDIR" "... nothing left"
kill -KILL "$hp" 2>/dev/null; wait "$hp" 2>/dev/null
rm -f "$WORK/holder.sock"

# ---------------------------------------------------------------- kill -9 of warren
s=$(uniq_arg)
wr_bg run --work "$WORK" --memory 128M --pids 50 --cpu-time 60s -- sh -c "sleep $s & sleep $s & wait"
wp=$BG_PID
wait_for 15 job_alive "$s"
alive=$?
rd=$(last_rundir); rd=${rd:-$STATE/runs/none}
kill -KILL "$wp" 2>/dev/null
wait "$wp" 2>/dev/null
[ "$alive" = 0 ] && wait_for 10 job_gone "$s"
ok $? "kill -9 of warren: no process of the cell is alive (alive before: $alive)" || diag "$(_pslist $(job_pids "$s"))"
wr gc
is "$RC" 0 "warren gc after kill -9 exits 0"
nothing_left "$rd" "warren gc leaves no scratch, mount, process or cgroup of the killed run" norecord

# ---------------------------------------------------------------- as the unprivileged user
use_mode user
wrun --time 1s -- sleep 30
after_stop
is "$RC" 124 "[user] --time 1s on sleep 30: exit 124"
like "$LINE" "^warren: $ID stopped: wall-clock limit 1s reached" "[user] --time: the cause line"
nothing_left "$RUNDIR" "[user] --time: nothing left"
# rootless there is no cgroup: the record's CPU time is init's account of the cell
wrun --time 1s --grace 1s -- env --ignore-signal=TERM sh -c 'while :; do :; done'
after_stop
is "$RC" 124 "[user] a busy loop ignoring SIGTERM, --time 1s --grace 1s: exit 124"
cpu_at_least "[user] ... its CPU time until the SIGKILL is in result.json" 0.5
# Where the host cannot give an unprivileged user a memory cgroup, warren refuses the
# limit (125, naming it); it never runs the job with the limit silently ignored.
wrun --memory 64M -- python3 -c "$HOG"
after_stop
if [ "$RC" = 125 ]; then
	line_like "$ERR" '^warren: .*memory' "[user] --memory: refused with a line naming the memory limit"
else
	like "$LINE" "stopped: memory limit 64 MiB reached" "[user] --memory: enforced (stopped by the memory limit)"
fi
s=$(uniq_arg)
wr_bg run --work "$WORK" -- sleep "$s"
wp=$BG_PID
wait_for 15 job_alive "$s"
kill -INT "$wp" 2>/dev/null
wait_bg "$wp" 20
ERR=$(cat "$BG_ERR")
after_stop
like "$LINE" "^warren: $ID stopped: interrupted by SIGINT" "[user] SIGINT to warren: the cause line"
nothing_left "$RUNDIR" "[user] SIGINT: nothing left"

# ---------------------------------------------------------------- defaults (issue 11)
use_mode root
M="[defaults]"
memkb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
mib=$((1024 * 1024))
want_mem=$((memkb * 1024 / 2 / mib * mib)) want_scratch=$((memkb * 1024 / 4 / mib * mib))
wrun -- sh -c 'df -k /dev/shm /tmp | awk "NR>1 {print \$2}"'
is "$RC" 0 "$M a run without limit flags runs"
is "$(jget "$(last_rundir)/result.json" '[d["limits"].get(k) for k in ("memory","pids","output","scratch")]')" \
	"[$want_mem, 4096, $((1024 * mib)), $want_scratch]" "$M ... and has the defaults: half the RAM, 4096 processes, 1 GiB of output, a quarter of the RAM of scratch"
is "$(sort -u <<<"$OUT" | wc -l)/$(head -n 1 <<<"$OUT")" "1/$((want_scratch / 1024))" "$M ... /tmp and /dev/shm are the one scratch of that size"
# /dev/shm counts within the scratch limit (dd ignores the stop's SIGTERM, which may come
# before it prints its ENOSPC on a slow machine: seen in the cgroup v2 guest under TCG)
wrun --scratch 4M -- sh -c 'trap "" TERM; dd if=/dev/zero of=/dev/shm/big bs=1M count=8 2>&1; exit 0'
[[ $OUT == *"No space left"* ]] && [ "$(jget "$(last_rundir)/result.json" 'd["cause"]["limit"]')" = scratch ]
ok $? "$M /dev/shm is within --scratch (8M into /dev/shm with --scratch 4M: ENOSPC, the scratch limit named)" || diag "$OUT" "$ERR"
wrun --memory none --pids none --scratch none --output none -- true
is "$(jget "$(last_rundir)/result.json" '[d["limits"].get(k) for k in ("memory","pids","output","scratch")]')" \
	"[null, null, null, null]" "$M none lifts each default"
wrun --memory 100 -- true
is "$RC" 125 "$M --memory 100 is refused (exit 125)"
one_warren_line "$M ... with one line"
like "$ERR" "--memory: 100 B is too small to start a cell; give at least 1 MiB" "$M ... saying it is too small to start a cell"
# the state directory's defaults file: a fork loop stops at its pids default
printf '# test defaults\npids = 32\noutput=1M   # a comment\n' >"$STATE/defaults"
wrun -- sh -c 'i=0; while [ $i -lt 100 ]; do sleep 5 & i=$((i+1)); done; wait'
is "$(jget "$(last_rundir)/result.json" '[d["limits"]["pids"], d["limits"]["output"]]')" "[32, 1048576]" "$M <state>/defaults sets the defaults"
# warren's cause line, not sh's "Cannot fork": the SIGTERM that follows the first refused fork
# may end sh before it says so (a slow machine, make check-v2's TCG guest)
like "$ERR" "stopped: process limit 32 reached \(fork failed [0-9]+ times?\)" "$M ... and a fork loop hits its pids default"
printf 'memroy = 1G\n' >"$STATE/defaults"
wrun -- true
[ "$RC" = 125 ] && [[ $ERR == *"$STATE/defaults:1: 'memroy = 1G' is not a line NAME = VALUE"* ]]
ok $? "$M a bad defaults line is refused with its file and line" || diag "exit $RC: $ERR"
rm -f "$STATE/defaults"
bounded "$WARREN" selfcheck --state "$STATE"
line_like "$OUT" "^note  default limits: time none, cpu-time none, memory .*, pids 4096, output 1 GiB, scratch " "$M selfcheck prints the defaults in force"
# rootless: no cgroup here, so memory and pids defaults are not enforced; the run works
use_mode user
wrun -- true
is "$RC" 0 "$M [user] a rootless run without flags runs (memory and pids defaults need a cgroup)" || diag "$ERR"
is "$(jget "$(last_rundir)/result.json" '[d["limits"].get(k) for k in ("memory","pids")]')" "[null, null]" "$M [user] ... and records no memory or pids limit"

# ---------------------------------------------------------------- a stop always fails the run (issue 11)
use_mode root
M="[fails]"
wrun --output 1 -- echo hi
[ "$RC" != 0 ] && [ "$(jget "$(last_rundir)/result.json" 'd["status"]')" = limit ]
ok $? "$M --output 1 -- echo hi: the run does not exit 0 (exit $RC)"
like "$(stopped_line)" "output limit 1 B reached \(the job wrote more than 1 byte\)" "$M ... and the line says '1 byte'"
wrun --output 1 -- sh -c 'trap "" TERM; echo hi; exit 0'
is "$RC" 123 "$M --output 1 and a job that ignores SIGTERM and exits 0: the run exits 123"
wrun --scratch 1M -- sh -c 'trap "" TERM; dd if=/dev/zero of=/tmp/x bs=1M count=5 2>/dev/null; echo still running; exit 0'
is "$RC" 123 "$M --scratch 1M, a job that ignores SIGTERM and exits 0: the run exits 123"
is "$(jget "$(last_rundir)/result.json" '[d["status"], d["exit_code"], d["cause"]["limit"]]')" '["limit", 123, "scratch"]' "$M ... and the record says limit, 123, scratch"
wrun --pids 10 -- sh -c 'for i in $(seq 20); do sleep 2 & done; wait'
rj=$(last_rundir)/result.json
[ "$RC" != 0 ] && [ "$(jget "$rj" 'd["cause"]["limit"]')" = pids ]
ok $? "$M --pids 10 and a shell that gives up by itself: the record names the process limit" || diag "exit $RC" "$(jget "$rj" 'd["cause"]')"
like "$(jget "$rj" 'd["cause"]["message"]')" "process limit 10 reached \(fork failed [0-9]+ times?\)" "$M ... with the failed forks counted"
is "$(jget "$rj" 'd["limits"]["pids"]')" 10 "$M ... and the limit recorded"
# within its limits a run passes
wrun --output 1M --scratch 8M --pids 50 -- sh -c 'echo fine; echo x > /tmp/y'
is "$RC" 0 "$M a run within its limits exits 0"
