#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# rootless-limits.t - issue 34 (3): a rootless run's limits. Where a cgroup v2 subtree is
# delegated to its caller as systemd delegates the user's user@UID.service (Delegate=yes: the
# directory and its cgroup.procs, cgroup.subtree_control and cgroup.threads are the user's),
# a run's group is made below it with --memory, --pids and --cpus enforced and named as a root
# run's are, a job file's limits: too, and nothing of it is left after (gc and gc --orphans
# reclaim what a killed supervisor left). Where none is (this project's hybrid host, a v2
# host where the caller's own group is root's), a limit is refused with one line saying why
# and what to do, and a run without one runs. The delegated part needs a pure cgroup v2 host:
# make check-v2's guest, where this script builds the tree as systemd would (no systemd runs
# there: user.slice/user-UID.slice/user@UID.service, its manager in init.scope, the caller in
# app.slice/test.scope); elsewhere it is skipped, saying so.
. "$(dirname "$0")/../lib.sh"

CG=/sys/fs/cgroup
V2=0
[ "$(stat -f -c %T "$CG" 2>/dev/null)" = cgroup2fs ] && V2=1
N_DELEGATED=34
plan $((9 + N_DELEGATED))

HOG='b = []
for i in range(1024):
    b.append(b"x" * (1 << 20))
print("allocated 1 GiB")'
LOOPS='(while :; do :; done) & (while :; do :; done) & (while :; do :; done) & while :; do :; done'
after_stop() {
	RUNDIR=$(last_rundir); RUNDIR=${RUNDIR:-$STATE/runs/none}
	RJ=$RUNDIR/result.json
	LINE=$(stopped_line)
	ID=$(basename "$RUNDIR")
}
HEAD='needs a cgroup, and this rootless run has none here: '

# ---------------------------------------------------------------- nothing delegated
# warren-test started from the test's own group (root's): no cgroup is the caller's
use_mode user
M="[none]"
if [ "$V2" = 1 ]; then
	WHY="the caller's cgroup /[^ ]* is not delegated to it \(uid $TEST_USER_UID does not own it.*; run warren in systemd's user session with delegation \(systemd-run --user --scope -p Delegate=yes warren \.\.\.\), or as root, or drop the limit$"
else
	WHY="this host's cgroups are v1 or hybrid \($CG is no cgroup2 mount\), where no cgroup is delegated to a user; run warren as root, or drop the limit"
fi
wrun --memory 64M -- true
is "$RC" 125 "$M --memory 64M: refused (exit 125)"
one_warren_line "$M ... with one line"
like "$ERR" "^warren: --memory \(limits: memory\) $HEAD$WHY" "$M ... naming the limit, why there is no cgroup ($([ "$V2" = 1 ] && echo "v2, not delegated" || echo "hybrid")) and what to do"
wrun --pids 10 -- true
like "$RC:$ERR" "^125:warren: --pids \(limits: pids\) $HEAD" "$M --pids 10: refused, naming the limit"
wrun --cpus 0.5 -- true
like "$RC:$ERR" "^125:warren: --cpus \(limits: cpus\) $HEAD" "$M --cpus 0.5: refused, naming the limit"
JF=$WORK/limited.yaml
printf 'name: limited\nlimits: { memory: 64M }\nsteps:\n  - name: a\n    run: echo ran\n' >"$JF"
chmod 644 "$JF"
bounded "${RUNNER[@]}" "$WARREN" job run "$JF" --state "$STATE"
like "$RC:$ERR" "^125:warren: --memory \(limits: memory\) $HEAD$WHY" "$M a job file with limits: { memory: 64M }: refused with the same line"
[[ $OUT != *ran* ]]
ok $? "$M ... and its step did not run"
wrun -- true
is "$RC" 0 "$M a run without a limit runs" || diag "$ERR"
is "$(jget "$(last_rundir)/result.json" '[d["limits"].get(k) for k in ("memory","pids")]')" "[null, null]" \
	"$M ... and records no memory or pids limit (the defaults need a cgroup)"

# ---------------------------------------------------------------- delegated as systemd does
if [ "$V2" != 1 ]; then
	skip "$N_DELEGATED" "this host's cgroups are not pure v2 ($(stat -f -c %T "$CG" 2>/dev/null)): nothing can be delegated to a user; make check-v2 runs these in a v2 guest"
	exit 0
fi

U=$TEST_USER_UID G=$TEST_USER_GID
# systemd's own user.slice is not touched on a host where systemd runs: a slice of the test's
TOP=user.slice
[ -d /run/systemd/system ] && TOP=warren-test-$$.slice
SLICE=$CG/$TOP/user-$U.slice
D=$SLICE/user@$U.service
LEAF=$D/app.slice/test.scope
MADE=()
mkcg() { [ -d "$1" ] || { mkdir "$1" && MADE+=("$1"); }; }
# rm_cgtree DIR: every process below DIR killed, its groups removed (deepest first)
rm_cgtree() {
	[ -d "$1" ] || return 0
	echo 1 >"$1/cgroup.kill" 2>/dev/null
	for _ in $(seq 50); do
		find "$1" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
		[ -z "$(find "$1" -mindepth 1 -type d)" ] && return 0
		sleep 0.1
	done
}
rl_cleanup() {
	local i
	rm_cgtree "$D"
	rm_cgtree "$BUSY"
	for ((i = ${#MADE[@]} - 1; i >= 0; i--)); do rmdir "${MADE[i]}" 2>/dev/null; done
}
BUSY=$CG/$TOP/busy-$U.scope
trap '_st=$?; rl_cleanup; (exit $_st); _lib_cleanup' EXIT

M="[delegated]"
# as systemd: the controllers enabled down the slices; user@UID.service and its cgroup.procs,
# cgroup.subtree_control and cgroup.threads the user's (Delegate=yes); the user's manager
# makes its own groups: init.scope holding itself, app.slice/<unit>.scope for what it starts
echo "+memory +pids +cpu" >"$CG/cgroup.subtree_control"
mkcg "$CG/$TOP" && echo "+memory +pids +cpu" >"$CG/$TOP/cgroup.subtree_control" &&
	mkcg "$SLICE" && echo "+memory +pids +cpu" >"$SLICE/cgroup.subtree_control" && mkcg "$D" &&
	chown "$U:$G" "$D" "$D/cgroup.procs" "$D/cgroup.subtree_control" "$D/cgroup.threads" &&
	as_user mkdir "$D/init.scope" "$D/app.slice" "$LEAF"
ok $? "$M $D made as systemd delegates it (the user's own: the directory, cgroup.procs, cgroup.subtree_control, cgroup.threads)"
MANAGER=$(uniq_arg)
start_bg sh -c 'echo $$ >"$0" && exec "$@"' "$D/init.scope/cgroup.procs" "${AS_USER[@]}" sleep "$MANAGER"
# the caller: warren-test in app.slice/test.scope, put there as its manager puts what it starts
IN_LEAF=(sh -c 'echo $$ >"$0" && exec "$@"' "$LEAF/cgroup.procs" "${AS_USER[@]}")
RUNNER=("${IN_LEAF[@]}")
bounded "${RUNNER[@]}" cat /proc/self/cgroup
is "$OUT" "0::${LEAF#$CG}" "$M the caller's group is $LEAF"
wait_for 10 job_alive "$MANAGER"
ok $? "$M its stand-in manager lives in $D/init.scope"

bounded "${RUNNER[@]}" "$WARREN" selfcheck --state "$STATE"
line_like "$OUT" "^note  cgroups: v2 .*; rootless runs' groups go below the cgroup delegated to uid $U, $D \(controllers: memory pids cpu" \
	"$M selfcheck names the delegate and its controllers"

# the run's group: below the delegate, the user's; the cell sees it alone, read-only
wrun --memory 64M --pids 50 --cpus 0.5 -- sh -c 'cat /proc/self/cgroup /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max'
is "$RC:$OUT" "0:$(printf '0::/\n67108864\n50\n50000 100000')" "$M --memory 64M --pids 50 --cpus 0.5: the cell's /sys/fs/cgroup is its group, with the limits" || diag "$ERR"
s=$(uniq_arg)
wr_bg run --work "$WORK" --memory 64M -- sleep "$s"
wp=$BG_PID
wait_for 15 job_alive "$s"
grp=$(find "$D/warren" -mindepth 1 -maxdepth 1 -type d -name 'run_*' 2>/dev/null)
jp=$(job_pids "$s")
[ "$(printf '%s\n' "$grp" | grep -c .)" = 1 ] && [ "$(stat -c %u "$grp")" = "$U" ] &&
	[ "$(cat "$grp/memory.max")" = 67108864 ] && grep -qx "$jp" "$grp/cgroup.procs"
ok $? "$M a live run's group is $D/warren/<run>, the user's, limited, with the job in it" || diag "groups: $grp" "job: $jp" "$(cat "$grp/cgroup.procs" 2>&1)"
kill -INT "$wp"
wait_bg "$wp" 20
[ ! -d "$grp" ]
ok $? "$M ... and gone when the run ends"

# --memory: the kernel's OOM kill, named
wrun --memory 64M -- python3 -c "$HOG"
after_stop
is "$RC" 137 "$M --memory 64M on a 1 GiB python hog: exit 137"
like "$LINE" "^warren: $ID stopped: memory limit 64 MiB reached" "$M ... one line 'stopped: memory limit 64 MiB reached'"
is "$(jget "$RJ" '[d["status"], d["cause"]["limit"], d["limits"]["memory"]]')" "[\"limit\", \"memory\", $((64 << 20))]" "$M ... the record: status limit, cause memory, limits.memory 64 MiB"
p=$(jget "$RJ" 'd["peak_memory_bytes"]')
"$PY" -c 'import sys; sys.exit(not (16 << 20 <= int(sys.argv[1]) <= 72 << 20))' "$p" 2>/dev/null
ok $? "$M ... peak_memory_bytes between 16 and 72 MiB (got $p)"
nothing_left "$RUNDIR" "$M --memory: nothing left (its group removed)"

# --pids: a fork bomb hits it
wrun --pids 10 -- sh -c 'for i in $(seq 20); do sleep 2 & done; wait'
after_stop
[ "$RC" != 0 ] && [ "$(jget "$RJ" 'd["cause"]["limit"]')" = pids ]
ok $? "$M --pids 10 on 20 children: the record names the process limit (exit $RC)" || diag "$(jget "$RJ" 'd["cause"]')"
like "$(jget "$RJ" 'd["cause"]["message"]')" "process limit 10 reached \(fork failed [0-9]+ times?\)" "$M ... with the failed forks counted"
nothing_left "$RUNDIR" "$M --pids: nothing left"

# --cpus: throttled, and the record says how long
wrun --cpus 0.5 --time 3s -- sh -c "$LOOPS"
after_stop
is "$RC" 124 "$M --cpus 0.5 --time 3s on four busy loops: stopped by the wall clock" || diag "$ERR"
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["cpu_throttled_periods"] > 0 and d["cpu_throttled_s"] > 0 and d["limits"]["cpus"] == 0.5))' "$RJ" 2>/dev/null
ok $? "$M ... throttled: cpu_throttled_periods and cpu_throttled_s > 0, limits.cpus 0.5 ($(jget "$RJ" '[d["cpu_throttled_periods"], d["cpu_throttled_s"], d["limits"]["cpus"]]'))"
nothing_left "$RUNDIR" "$M --cpus: nothing left"

# the defaults hold as for root (half the RAM, 4096 processes)
memkb=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo)
wrun -- true
is "$(jget "$(last_rundir)/result.json" '[d["limits"]["memory"], d["limits"]["pids"]]')" "[$((memkb * 1024 / 2 / (1 << 20) * (1 << 20))), 4096]" \
	"$M a run without limit options gets the memory and pids defaults"

# a job file's limits: the same file as root's
printf '%s\n' 'name: limited' 'limits: { memory: 64M, pids: 50, cpus: 0.5 }' 'steps:' \
	'  - name: show' '    run: cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max' \
	'  - name: hog' "    run: python3 -c 'b = [b\"x\" * (1 << 20) for i in range(1024)]'" >"$JF"
bounded "${RUNNER[@]}" "$WARREN" job run "$JF" --state "$STATE"
after_stop
[ "$RC" != 0 ] && [[ $OUT == *67108864*50*"50000 100000"* ]]
ok $? "$M a job file with limits: { memory: 64M, pids: 50, cpus: 0.5 } runs with them (exit $RC)" || diag "$OUT" "$ERR"
like "$ERR" "memory limit 64 MiB reached" "$M ... and its hog step is stopped by the memory limit, named"
is "$(jget "$RJ" '[d["limits"]["memory"], d["limits"]["pids"], d["limits"]["cpus"]]')" "[$((64 << 20)), 50, 0.5]" "$M ... the record has the job's limits"
nothing_left "$RUNDIR" "$M the job: nothing left"

# the job cannot lift its limits nor leave its group: the files are the caller's (the job's
# uid), but the cell's mount is read-only, cannot be remounted, and no user namespace of the
# job's can mount another
ESC='echo max >/sys/fs/cgroup/memory.max 2>/dev/null && echo RAISED
echo $$ >/sys/fs/cgroup/cgroup.procs 2>/dev/null && echo MOVED
mkdir /sys/fs/cgroup/x 2>/dev/null && echo MADE
mount -o remount,rw /sys/fs/cgroup 2>/dev/null && echo REMOUNTED
unshare -Urmc sh -c "mount -t cgroup2 none /mnt && echo max >/mnt/memory.max" 2>/dev/null && echo USERNS
exec python3 -c "$0"'
wrun --memory 64M -- sh -c "$ESC" "$HOG"
after_stop
[[ $OUT != *RAISED* && $OUT != *MOVED* && $OUT != *MADE* && $OUT != *REMOUNTED* && $OUT != *USERNS* ]] &&
	[[ $LINE == *"memory limit 64 MiB reached"* ]]
ok $? "$M the job's writes to its memory.max, cgroup.procs, a new group, a remount and a cgroup2 of its own fail; its limit holds" || diag "$OUT" "$ERR"

# gc: a killed supervisor's group, and one of a state directory that is gone
s=$(uniq_arg)
wr_bg run --work "$WORK" --memory 64M -- sleep "$s"
wp=$BG_PID
wait_for 15 job_alive "$s"
rid=$(basename "$(last_rundir)")
kill -KILL "$wp"
wait "$wp" 2>/dev/null
wait_for 10 job_gone "$s"
[ -n "$(cgroups_named "$rid")" ]
ok $? "$M warren killed -9: its run's group stays behind"
wr gc
is "$RC:$(cgroups_named "$rid")" "0:" "$M warren gc (as the user) removes it" || diag "$ERR"
S2=$U_DIR/state2
s=$(uniq_arg)
start_bg "${RUNNER[@]}" "$WARREN" run --state "$S2" --work "$WORK" --memory 64M -- sleep "$s"
wp=$BG_PID
wait_for 15 job_alive "$s"
rid=$(basename "$(last_rundir "$S2")")
kill -KILL "$wp"
wait "$wp" 2>/dev/null
wait_for 10 job_gone "$s"
grp=$(cgroups_named "$rid")
is "$("$PY" -c 'import os,sys; print(os.getxattr(sys.argv[1], "user.warren.state").decode())' "$grp" 2>&1)" "$S2" \
	"$M a rootless run's group records its state directory (user.warren.state)"
rm -rf "$S2"
touch -m -d "@$(($(date +%s) - 60))" "$grp"
bounded "${RUNNER[@]}" "$WARREN" gc --orphans
is "$RC:$(cgroups_named "$rid")" "0:" "$M warren gc --orphans (as the user) removes the group of its state directory that is gone" || diag "$OUT" "$ERR"
like "$OUT" "^gc: removed 1 run cgroup of state directories that are gone" "$M ... and says so"

# a delegate that holds processes (a scope with Delegate=yes whose caller is in it): no
# controller can be enabled below it; a limit is refused, saying so, a run without one runs
mkcg "$BUSY" && chown "$U:$G" "$BUSY" "$BUSY/cgroup.procs" "$BUSY/cgroup.subtree_control" "$BUSY/cgroup.threads"
RUNNER=(sh -c 'echo $$ >"$0" && exec "$@"' "$BUSY/cgroup.procs" "${AS_USER[@]}")
wrun --memory 64M -- true
like "$RC:$ERR" "^125:warren: --memory \(limits: memory\) ${HEAD}the cgroup delegated to the caller, $BUSY, holds processes itself.*start warren in a group below it" \
	"$M caller in its delegate itself: --memory refused, saying the delegate holds processes"
wrun -- cat /proc/self/cgroup
is "$RC:$OUT" "0:0::/" "$M ... a run without a limit runs (in a group of its own, without controllers)" || diag "$ERR"
RUNNER=("${IN_LEAF[@]}")

# nothing of the runs is left in the delegated tree
left=$(find "$D/warren" "$BUSY/warren" -mindepth 1 -type d 2>/dev/null)
is "$left" "" "$M no run's group is left below $D/warren nor $BUSY/warren"
is "$(cat "$D/cgroup.procs")" "" "$M the delegate holds no process (warren put none there)"
is "$(state_clean && echo clean)" clean "$M the state directory: nothing mounted, running or left"
