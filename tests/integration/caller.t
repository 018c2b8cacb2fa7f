#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# caller.t - what the caller's own process state does to a run: a job gets the contract
# whatever its caller's scheduling, personality, file size limit, capabilities or umask, and
# warren says what it cannot do in one line and leaves nothing. (The caller's umask 077 and
# the cell's files: mounts.t; closed standard descriptors: hardening.t; a helper the job put
# on the caller's PATH: net.t.)
. "$(dirname "$0")/../lib.sh"

plan 23

use_mode root
M="[root]"

# ---- a real-time policy, a negative nice and a weakened personality are not the job's
bounded chrt -f 10 "$WARREN" run --state "$STATE" --work "$WORK" -- sh -c 'chrt -p $$ | head -1'
like "$RC:$OUT" "^0:.*SCHED_OTHER" "$M the caller's SCHED_FIFO: the job runs SCHED_OTHER" || diag "$ERR"
bounded nice -n -20 "$WARREN" run --state "$STATE" --work "$WORK" -- nice
is "$RC:$OUT" "0:0" "$M the caller's nice -20: the job's nice is 0" || diag "$ERR"
bounded nice -n 5 "$WARREN" run --state "$STATE" --work "$WORK" -- nice
is "$RC:$OUT" "0:5" "$M the caller's nice 5 stays the job's"
bounded setarch -R "$WARREN" run --state "$STATE" --work "$WORK" -- cat /proc/self/personality
is "$RC:$OUT" "0:00000000" "$M setarch -R (no ASLR): the job's address space is randomised"
if setarch linux32 true 2>/dev/null; then
	bounded setarch linux32 -R "$WARREN" run --state "$STATE" --work "$WORK" -- sh -c 'uname -m; cat /proc/self/personality'
	is "$RC:$OUT" "0:i686"$'\n'"00000008" "$M linux32 -R: the personality stays (i686), its ASLR comes back"
else
	skip 1 "this kernel has no 32-bit personality"
fi

# ---- without CAP_CHOWN (root with a narrowed bounding set): one line, no cgroup left
bounded setpriv --bounding-set -chown "$WARREN" run --state "$STATE" --work "$WORK" -- id
{ [ "$RC" = 125 ] && [[ $ERR == *"as root warren needs CAP_CHOWN"* ]]; }
ok $? "$M without CAP_CHOWN: refused, naming it" || diag "rc $RC: $ERR"
one_warren_line "$M ... in one line"
cg=$(sed -n 's/.*the cgroup \(\/sys\/fs\/cgroup\/[^ ]*\) to the run.*/\1/p' <<<"$ERR")
{ [ -n "$cg" ] && [ ! -e "$cg" ]; }
ok $? "$M ... and the cgroup it had made is gone ($cg)"

# ---- a file size limit (RLIMIT_FSIZE) below what warren writes: said, never a silent
# SIGXFSZ between the job's end and its record; the job keeps the limit
S2=$TEST_SCRATCH/fsize-state
# (a run adds ~350 bytes to the history's pending file: the sixth crosses 2000)
errs=
for i in 1 2 3 4 5 6; do
	bounded prlimit --fsize=2000 -- "$WARREN" run --state "$S2" --work "$WORK" -- sh -c 'head -c 5000 /dev/zero >/tmp/big; echo "dd=$?"'
	rcs[$i]=$RC
	outs[$i]=$OUT
	errs+=$ERR$'\n'
done
is "${rcs[*]}" "0 0 0 0 0 0" "$M RLIMIT_FSIZE 2000: six runs end with the job's code (not 153, SIGXFSZ)" || diag "$errs"
is "${outs[1]}" "dd=153" "$M ... the job's own write past the limit gets SIGXFSZ"
like "$errs" "cannot write to the history" "$M ... the history's file past the limit: said" || diag "$errs"
x=$(STATE=$S2 state_clean); ok $? "$M ... nothing of the runs is left" || diag "$x"

# ---- a caller who does not read the output (`| less` not scrolled, ^S): the limits, the
# signals and warren kill still hold (the supervisor waited in write(2) before: a 2 s limit
# fired when the reader came back); a reader who goes away ends the job as in a pipeline
bounded bash -c '"$1" run --state "$2" --work "$3" --time 2s --grace 1s -- sh -c "head -c 300000 /dev/zero; sleep 30" | (sleep 5; cat >/dev/null)' \
	sh "$WARREN" "$STATE" "$WORK"
rj=$(last_rundir)/result.json
like "$(jget "$rj" 'd["cause"]["message"]')" "wall-clock limit 2s reached at 2\.[0-9]+s" "$M a caller who reads nothing for 5 s: the 2 s limit fires at 2 s" || diag "$ERR"
"$PY" -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))["wall_s"] < 4)' "$rj"
ok $? "$M ... and the run's wall is the cell's life, not the reader's delay ($(jget "$rj" 'd["wall_s"]') s)"
bounded bash -c '"$1" run --state "$2" --work "$3" -- yes | head -1' sh "$WARREN" "$STATE" "$WORK"
is "$RC:$OUT:$(jget "$(last_rundir)/result.json" '[d["status"], d["exit_code"]]')" '0:y:["signaled", 141]' \
	"$M warren run -- yes | head -1: the job ends with SIGPIPE, as in a pipeline (it ran to the output limit before)"
printf '%s\n' 'name: stall' 'steps:' '  - name: spin' '    run: |' '      head -c 300000 /dev/zero' '      sleep 30' '    timeout: 2s' >"$WORK/stall.yaml"
bounded bash -c '"$1" job run "$4" --state "$2" --work "$3" | (sleep 5; cat >/dev/null)' sh "$WARREN" "$STATE" "$WORK" "$WORK/stall.yaml"
like "$(jget "$(last_rundir)/result.json" 'd["cause"]["message"]')" "step spin: time limit 2s reached at 2\.[0-9]+s" \
	"$M a job's step: its 2 s limit fires at 2 s while the caller reads nothing" || diag "$ERR"
rm -f "$WORK/stall.yaml"
# a step that ended while the caller read nothing: the job's other limits still hold (its end
# waited for the reader before)
printf '%s\n' 'name: stall2' 'timeout: 3s' 'services:' '  spin:' '    run: |' "      sh -c 'while :; do :; done'" \
	'steps:' '  - name: big' '    run: head -c 100000 /dev/zero' '  - name: wait' '    run: sleep 30' >"$WORK/stall2.yaml"
bounded bash -c '"$1" job run "$4" --state "$2" --work "$3" | (sleep 6; cat >/dev/null)' sh "$WARREN" "$STATE" "$WORK" "$WORK/stall2.yaml"
like "$(jget "$(last_rundir)/result.json" 'd["cause"]["message"]')" "wall-clock limit 3s reached at 3\.[0-9]+s" \
	"$M a job whose step ended while the caller read nothing: its 3 s limit fires at 3 s" || diag "$ERR"
rm -f "$WORK/stall2.yaml"
# a job that closes its output while the caller reads nothing: warren waits without spinning
# (a closed stream watched for nothing still woke the loop: 6 s of CPU in 6 s)
bounded "$PY" -c '
import resource, subprocess, sys
p = subprocess.Popen([sys.argv[1], "run", "--state", sys.argv[2], "--work", sys.argv[3], "--", "sh", "-c",
                      "head -c 180000 /dev/zero; exec >&- 2>&-; sleep 3"], stdout=subprocess.PIPE)
import time; time.sleep(4); p.stdout.read(); p.wait()
r = resource.getrusage(resource.RUSAGE_CHILDREN); print("%.2f" % (r.ru_utime + r.ru_stime))' "$WARREN" "$STATE" "$WORK"
"$PY" -c 'import sys; sys.exit(not float(sys.argv[1]) < 1.0)' "${OUT:-9}"
ok $? "$M ... and uses no CPU while it waits (${OUT:-?} s of CPU in 4 s)"
# stdout and stderr one pipe (2>&1) and a slow reader: no line of one inside a line of the other
bounded bash -c '"$1" run --state "$2" --work "$3" -- "$4" -c "
import os
for i in range(30000):
    os.write(1, b\"out %07d %s\\n\" % (i, b\"o\" * 50))
    os.write(2, b\"err %07d %s\\n\" % (i, b\"e\" * 50))" 2>&1 | "$4" -c "
import sys, time
bad = n = 0
for i, l in enumerate(sys.stdin.buffer):
    if i % 2000 == 0: time.sleep(0.01)
    n += 1
    bad += not (len(l) == 63 and (l[:4], l[-2:]) in ((b\"out \", b\"o\\n\"), (b\"err \", b\"e\\n\")))
print(n, bad)"' sh "$WARREN" "$STATE" "$WORK" "$PY"
is "$OUT" "60000 0" "$M 2>&1 and a slow reader: 60000 lines, none of them mixed" || diag "$ERR"

# ---- a worktree whose path is not UTF-8 (the record is JSON): refused naming it, not
# "cannot build spec.json: Cannot allocate memory"; an argument that is not UTF-8 is kept in
# the record, escaped (it was dropped)
NU=$TEST_SCRATCH/$'nu\xffd'
mkdir -p "$NU"
bounded bash -c 'cd "$1" && "$2" run --state "$3" -- true' sh "$NU" "$WARREN" "$STATE"
{ [ "$RC" = 125 ] && [[ $ERR == *'nu\xffd: its path is not UTF-8'* ]]; }
ok $? "$M a worktree path that is not UTF-8: refused in one line naming it" || diag "$ERR"
rmdir "$NU"
wrun -- echo $'a\xffb'
is "$RC:$(jget "$(last_rundir)/spec.json" 'd["command"][1]')" '0:a\xffb' "$M an argument that is not UTF-8: the run goes, its record keeps it escaped"

# ---- pid 1's command line, which the job can read, is not warren's (host paths, options)
wrun -- sh -c 'tr "\0" " " </proc/1/cmdline | sed "s/ *$//"'
is "$RC:$OUT" "0:warren-init" "$M /proc/1/cmdline in the cell: warren-init, not the caller's command line (it named $STATE)"

# ---- rootless, a umask that takes the owner's write (0222): the default state directory is
# made usable (0700), not left unwritable under ~/.local for every later run and tool
use_mode user
M="[user]"
H=$TEST_SCRATCH/home
mkdir_for_mode "$H"
bounded "${RUNNER[@]}" bash -c 'umask 0222; cd "$1" && env -u XDG_STATE_HOME -u WARREN_STATE HOME="$2" "$3" run -- true' sh "$WORK" "$H" "$WARREN"
is "$RC:$(stat -c %a "$H/.local" "$H/.local/state" "$H/.local/state/warren" 2>&1 | tr '\n' ' ')" "0:700 700 700 " \
	"$M umask 0222 and a new default state directory: the run ends well, its directories 0700" || diag "$ERR"
