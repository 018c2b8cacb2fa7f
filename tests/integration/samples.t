#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# samples.t - issue 34: the run's memory and CPU over its life, sampled by its supervisor from
# the run's cgroup into result.json ("samples": a point a second, at most 120, the period
# doubling; the bound itself is tests/unit/test_sample.c's): a run that grows its memory and
# burns CPU for about 4 s has points a second apart whose memory and CPU grow; a run shorter
# than a second has none; a job's record has them too; a rootless run without a cgroup of its
# own has null, one with a cgroup a series.
. "$(dirname "$0")/../lib.sh"

plan 9

use_mode root
# grow memory by 16 MiB and burn CPU until 4 s have passed
GROW='import time
t, a = time.time(), []
while time.time() - t < 4:
    a.append(bytearray(16 << 20))
    e = time.time() + 0.2
    while time.time() < e:
        pass
print("grew", len(a))'
wrun -- python3 -c "$GROW"
RJ=$(last_rundir)/result.json
is "$RC" 0 "a run that grows its memory and burns CPU for 4 s exits 0" || diag "$ERR"
is "$(jget "$RJ" '[d["samples"]["period_s"], len(d["samples"]["points"]) >= 3, len(d["samples"]["points"]) <= 5]')" \
	"[1.0, true, true]" "result.json samples: period 1 s, 3 to 5 points" || diag "$(jget "$RJ" 'd["samples"]')"
is "$(jget "$RJ" 'all(abs(b["t_s"] - a["t_s"] - 1) < 0.3 for a, b in zip(d["samples"]["points"], d["samples"]["points"][1:])) and 0.7 < d["samples"]["points"][0]["t_s"] < 1.5')" \
	true "... a second apart, the first a second after the start" || diag "$(jget "$RJ" 'd["samples"]')"
is "$(jget "$RJ" 'd["samples"]["points"][-1]["memory_bytes"] - d["samples"]["points"][0]["memory_bytes"] > (24 << 20) and d["samples"]["points"][-1]["memory_bytes"] <= d["peak_memory_bytes"]')" \
	true "... its memory grows (the cgroup's charge, at most the peak)" || diag "$(jget "$RJ" '[d["samples"], d["peak_memory_bytes"]]')"
is "$(jget "$RJ" 'all(b["cpu_s"] >= a["cpu_s"] for a, b in zip(d["samples"]["points"], d["samples"]["points"][1:])) and d["samples"]["points"][-1]["cpu_s"] > d["samples"]["points"][0]["cpu_s"] > 0 and 0.4 * (d["cpu_user_s"] + d["cpu_sys_s"]) < d["samples"]["points"][-1]["cpu_s"] <= d["cpu_user_s"] + d["cpu_sys_s"] + 0.05')" \
	true "... its CPU time grows, most of the run's by its last point (a busy run; the machine may be busy too)" || diag "$(jget "$RJ" '[d["samples"], d["cpu_user_s"], d["cpu_sys_s"]]')"
wrun -- true
is "$(jget "$(last_rundir)/result.json" 'd["samples"]')" '{"period_s": 1.0, "points": []}' "a run shorter than a second: no point"

cat >"$WORK/job.yaml" <<'EOF2'
name: sampled
steps:
  - name: busy
    run: timeout 2.5 sh -c 'while :; do :; done' || true
EOF2
bounded "$WARREN" job run "$WORK/job.yaml" --state "$STATE" --work "$WORK"
RJ=$(last_rundir)/result.json
is "$(jget "$RJ" '[len(d["samples"]["points"]) >= 2, d["samples"]["points"][-1]["cpu_s"] > d["samples"]["points"][0]["cpu_s"] > 0]')" "[true, true]" \
	"a job's record has its samples too (a busy step: CPU time grows)" || diag "$RC $ERR" "$(jget "$RJ" 'd["samples"]')"

use_mode user
wrun -- sleep 1.5
RJ=$(last_rundir)/result.json
is "$RC" 0 "[user] a rootless run of 1.5 s exits 0" || diag "$ERR"
# (the default memory limit is recorded when the run has a cgroup to hold it: limits.t)
if [ "$(jget "$RJ" 'd["limits"]["memory"]')" = null ]; then
	is "$(jget "$RJ" 'd["samples"]')" null "[user] ... without a cgroup of its own (no memory limit): samples null"
else
	is "$(jget "$RJ" 'len(d["samples"]["points"])')" 1 "[user] ... with a cgroup of its own: a point"
fi
