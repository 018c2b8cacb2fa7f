#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cpu.t - issue 36 (4): CPU bandwidth and placement on every face. --cpus N gives a busy loop
# N CPUs' worth of time (CPU time over wall time, with a tolerance) and the record says how
# long the run was throttled; --cpuset LIST pins its processes (/proc/self/status); a list
# the host does not have and a number out of range are refused with one line; a job file's
# limits.cpus and limits.cpuset do the same, and so do the API body's; nothing of the run's cgroups is left. As root
# (rootless runs have no cgroup on this host: refused with one line).
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

plan 24

use_mode root

ratio_between() { # DESC LO HI: result.json's (cpu_user_s + cpu_sys_s) / wall_s in [LO, HI]
	local r
	r=$(jget "$RJ" '(d["cpu_user_s"] + d["cpu_sys_s"]) / d["wall_s"]')
	"$PY" -c 'import sys; sys.exit(not float(sys.argv[2]) <= float(sys.argv[1]) <= float(sys.argv[3]))' "$r" "$2" "$3" 2>/dev/null
	ok $? "$1 (got $r)"
}

# ---- --cpus 0.5: four busy loops (they would take both CPUs, and their share of a loaded
# host is above half a CPU) get about half a CPU between them, and the record says the run
# was throttled
LOOPS='(while :; do :; done) & (while :; do :; done) & (while :; do :; done) & while :; do :; done'
wrun --cpus 0.5 --time 3s -- sh -c "$LOOPS"
RD=$(last_rundir); RJ=$RD/result.json
is "$RC" 124 "--cpus 0.5 --time 3s on four busy loops: stopped by the wall clock (exit 124)" || diag "$ERR"
ratio_between "--cpus 0.5: CPU time over wall time about 0.5 (at most 0.62)" 0.3 0.62
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["cpu_throttled_periods"] > 0 and d["cpu_throttled_s"] > 0))' "$RJ" 2>/dev/null
ok $? "--cpus 0.5: result.json's cpu_throttled_periods and cpu_throttled_s > 0 ($(jget "$RJ" '[d["cpu_throttled_periods"], d["cpu_throttled_s"]]'))"
is "$(jget "$RJ" '[d["limits"]["cpus"], d["limits"]["cpu_quota_us"], d["limits"]["cpu_period_us"]]')" "[0.5, 50000, 100000]" \
	"--cpus 0.5: the record's limits say 0.5 CPUs, quota 50000 of period 100000"
nothing_left "$RD" "--cpus: nothing left (no cgroup of the run in cpu nor elsewhere)"

# without --cpus: no quota, no throttling in the record (how much CPU a loop gets then depends
# on the host's load: not measured)
wrun --time 1s -- sh -c 'while :; do :; done'
RJ=$(last_rundir)/result.json
is "$(jget "$RJ" '[d["cpu_throttled_periods"], d["limits"]["cpus"]]')" "[null, null]" "without --cpus the record has no throttling nor CPU limit"

# ---- --cpuset
wrun --cpuset 0 -- grep Cpus_allowed_list /proc/self/status
is "$RC:$OUT" "$(printf '0:Cpus_allowed_list:\t0')" "--cpuset 0: the job's Cpus_allowed_list is 0"
is "$(jget "$(last_rundir)/result.json" 'd["limits"]["cpuset"]')" "0" "--cpuset 0: recorded"
nothing_left "$(last_rundir)" "--cpuset: nothing left"
n=$(($(nproc --all) + 8))
wrun --cpuset "0,$n" -- true
is "$RC" 125 "--cpuset 0,$n (a CPU the host does not have): exit 125"
like "$ERR" "^warren: --cpuset: '0,$n' names CPU $n, which this host does not have online \(it has [0-9,-]+\); give a subset of" "... with one line naming the CPU"
is "$(printf '%s\n' "$ERR" | wc -l)" 1 "... and only that line"
wrun --cpuset 1-0 -- true
like "$RC:$ERR" "^125:warren: --cpuset: '1-0' is not a CPU list" "--cpuset 1-0: not a list, one line"

# ---- --cpus out of range, not a number
wrun --cpus 0 -- true
like "$RC:$ERR" "^125:warren: --cpus: '0' is out of range: give from 0.01 to [0-9]+" "--cpus 0: out of range, one line"
wrun --cpus "$(($(nproc) + 1))" -- true
like "$RC:$ERR" "^125:warren: --cpus: '[0-9]+' is out of range" "--cpus more than the host's CPUs: one line"
wrun --cpus half -- true
like "$RC:$ERR" "^125:warren: --cpus: 'half' is not a number of CPUs" "--cpus half: one line"

# ---- a job file's limits.cpus and limits.cpuset
J=$TEST_SCRATCH/cpu.yaml
cat >"$J" <<YAML
limits: { cpus: 0.5, cpuset: "0" }
steps:
  - name: pinned
    run: grep Cpus_allowed_list /proc/self/status
  - name: busy
    run: timeout 2 sh -c '(while :; do :; done) & (while :; do :; done) & (while :; do :; done) & while :; do :; done' || true
YAML
bounded "$WARREN" job run "$J" --state "$STATE" --work "$WORK"
is "$RC" 0 "a job with limits { cpus: 0.5, cpuset: \"0\" } runs" || diag "$ERR"
like "$OUT" "Cpus_allowed_list:"$'\t'"0" "... its step's Cpus_allowed_list is 0"
RJ=$(last_rundir)/result.json
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["limits"]["cpus"] == 0.5 and d["cpu_throttled_periods"] > 0))' "$RJ" 2>/dev/null
ok $? "... its busy step was throttled to half a CPU (the record: $(jget "$RJ" '[d["limits"]["cpus"], d["cpu_throttled_periods"]]'))"
printf 'limits: { cpus: lots }\nsteps: [ { name: a, run: "true" } ]\n' >"$J"
bounded "$WARREN" job run "$J" --state "$STATE" --work "$WORK"
like "$RC:$ERR" "^125:.*cpu.yaml:1:[0-9]+: limits.cpus: 'lots' is not a number of CPUs" "a job's limits.cpus: lots: one line naming the file, line and field"

# ---- the API body's limits.cpus and limits.cpuset (warren serve)
T=$TEST_SCRATCH/serve
mkdir -p "$T/sock"
chmod 755 "$T" "$T/sock"
SOCK=$T/sock/api.sock
API_AS=root
start_server 15 --listen "unix:$SOCK" --slots 1
ok $? "warren serve answers" || diag "$(cat "$SRV_ERR")"
run_wait "{\"command\":[\"sh\",\"-c\",\"grep Cpus_allowed_list /proc/self/status; timeout 2 sh -c '$LOOPS'; true\"],\"worktree\":\"$WORK\",\"limits\":{\"cpus\":\"0.5\",\"cpuset\":\"0\"}}"
RJ=$STATE/runs/$ID/result.json
is "$CODE:$(jget "$RJ" '[d["limits"]["cpus"], d["limits"]["cpuset"], d["cpu_throttled_periods"] > 0]')" '201:[0.5, "0", true]' \
	"an API run with limits {cpus: 0.5, cpuset: 0}: recorded, throttled" || diag "$BODY"
like "$(logs "$ID")" "Cpus_allowed_list:"$'\t'"0" "... its process pinned to CPU 0"
api POST /v1/runs "{\"command\":[\"true\"],\"worktree\":\"$WORK\",\"limits\":{\"cpuset\":\"0-99\"}}"
like "$CODE:$(jbody 'd["error"]')" "^400:.*limits.cpuset: '0-99' names CPU [0-9]+, which this host does not have online" "an API run with a cpuset beyond the host's: 400 with one line"
stop_server 30
