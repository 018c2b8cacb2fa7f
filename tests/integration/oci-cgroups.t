#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci-cgroups.t - issue 36 (3, 4, 5): an OCI bundle's CPU limits (linux.resources.cpu quota,
# period, shares, cpus) through warren-runc and containerd's runc shim; its linux.cgroupsPath in
# the cgroupfs and the systemd form: the container's processes live there (/proc/PID/cgroup),
# its limits are set there, the record keeps its figures, and the group (with the parents the
# run made) is gone after while the parents it found stay; '..', a relative path, the root,
# warren's own groups and an existing group refused with one line; `warren oci update` raising a
# live container's memory limit and `warren oci ps` listing its own processes; the supervisor,
# the pid the caller knows, in the container's groups and the shim's metrics the container's
# (issue 36, item 3); an exec whose caller gives up on it (kill -9 of its pid) takes its whole
# process tree (issue 36, item 6). As root (a rootless caller's cgroupsPath is refused: no
# delegation on this host).
. "$(dirname "$0")/../lib.sh"

plan 58

. "$REPO/tests/oci.sh"
oci_setup
# job_of SUPERVISOR_PID: the host pid of the job (the child of the cell's init, its child),
# waited for (run -d returns when the job was let go, before init's fork shows)
job_of() {
	local i j
	for _ in $(seq 100); do
		i=$(pgrep -P "$1" | head -1)
		j=${i:+$(pgrep -P "$i" | head -1)}
		[ -n "$j" ] && { echo "$j"; return 0; }
		sleep 0.05
	done
	return 1
}
last_run() { printf '%s\n' "$STATE/runs/$(ls -t "$STATE/runs" | head -1)"; }
# a v1 hierarchy's directory of ctrl, or the v2 root
cgdir() { if [ -d /sys/fs/cgroup/$1 ]; then echo "/sys/fs/cgroup/$1"; else echo /sys/fs/cgroup; fi; }

use_mode root
ROOT=$T/root
mkdir -p "$ROOT"

# ---- linux.resources.cpu through warren-runc
bundle "$T/b-cpu" '["sh", "-c", "grep Cpus_allowed_list /proc/self/status; timeout 2 sh -c \"while :; do :; done\"; true"]' \
	'c["linux"]["resources"] = {"cpu": {"quota": 50000, "period": 100000, "shares": 512, "cpus": "0"}}'
bounded "$RUNC" --root "$ROOT" run --bundle "$T/b-cpu" c-cpu
is "$RC" 0 "a bundle with linux.resources.cpu (quota, period, shares, cpus) runs" || diag "$ERR"
line_like "$OUT" "^Cpus_allowed_list:"$'\t'"0$" "... its process is pinned to CPU 0 (cpus \"0\")"
RJ=$(last_run)/result.json
is "$(jget "$RJ" '[d["limits"]["cpus"], d["limits"]["cpu_shares"], d["limits"]["cpuset"]]')" '[0.5, 512, "0"]' "... the record has its quota as 0.5 CPUs, its shares and CPUs"
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); c=d["cpu_user_s"]+d["cpu_sys_s"]; sys.exit(not (d["cpu_throttled_periods"] > 0 and 0.6 <= c <= 1.4))' "$RJ" 2>/dev/null
ok $? "... its 2 s busy loop got about half a CPU and was throttled ($(jget "$RJ" '[d["cpu_user_s"], d["cpu_throttled_periods"]]'))"
bundle "$T/b-cpubad" '["true"]' 'c["linux"]["resources"] = {"cpu": {"cpus": "0-63"}}'
bounded "$RUNC" --root "$ROOT" run --bundle "$T/b-cpubad" c-cpubad
like "$ERR" "linux.resources.cpu.cpus: '0-63' names CPU [0-9]+, which this host does not have online" "a bundle's cpus beyond the host's CPUs: refused with one line"

# ---- linux.cgroupsPath, the cgroupfs form
P=/warren-t$$/burstable/pod1
mkdir -p "$(cgdir memory)/warren-t$$"   # a parent the run finds (kubelet's pod tree): it stays
bundle "$T/b-cgfs" '["sh", "-c", "cat /proc/self/cgroup; cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null; sleep 30"]' \
	"c['linux']['cgroupsPath'] = '$P/c1'; c['linux']['resources'] = {'memory': {'limit': 268435456}, 'pids': {'limit': 64}}"
bounded "$RUNC" --root "$ROOT" run -d --bundle "$T/b-cgfs" c-cgfs
is "$RC" 0 "a bundle with linux.cgroupsPath $P/c1 starts (run -d)" || diag "$ERR"
sup=$("$RUNC" --root "$ROOT" state c-cgfs | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
pid=$(job_of "$sup")
cg=$(cat "/proc/$pid/cgroup" 2>/dev/null)
line_like "$cg" "^[0-9]+:memory:$P/c1\$" "... its process is in $P/c1 in the memory hierarchy (/proc/PID/cgroup)"
line_like "$cg" "^[0-9]+:pids:$P/c1\$" "... and in the pids hierarchy"
is "$(cat "$(cgdir memory)$P/c1/memory.limit_in_bytes" 2>/dev/null)" 268435456 "... its memory limit is set in that group"
is "$(cat "$(cgdir pids)$P/c1/pids.max" 2>/dev/null)" 64 "... and its process limit"
# the pid its caller knows (the supervisor) is in the container's groups as runc's container
# process is: containerd's shim takes its stats and OOM events from that pid's /proc/PID/cgroup;
# not in the freezer (pause freezes the cell alone)
scg=$(cat "/proc/$sup/cgroup" 2>/dev/null)
n=0; for c in memory pids cpuacct cpu; do grep -Eq "^[0-9]+:([a-z_]+,)*$c(,[a-z_]+)*:$P/c1\$" <<<"$scg" && n=$((n + 1)); done
is "$n:$(grep -c ":freezer:$P/c1\$" <<<"$scg")" "4:0" "... the supervisor (the pid its caller knows) is in $P/c1 in the memory, pids, cpuacct and cpu hierarchies, not the freezer's" ||
	diag "$scg"
# ---- oci ps: the container's own processes
bounded "$RUNC" --root "$ROOT" ps --format json c-cgfs
"$PY" -c 'import json,sys; p=json.loads(sys.argv[1]); sys.exit(not (int(sys.argv[2]) in p and int(sys.argv[3]) not in p and len(p) <= 3))' "$OUT" "$pid" "$sup" 2>/dev/null
ok $? "oci ps --format json: the container's own pids, its process among them, not its supervisor ($OUT)"
bounded "$RUNC" --root "$ROOT" ps c-cgfs
line_like "$OUT" "^UID +PID +PPID .*CMD" "oci ps: a table with ps's header"
line_like "$OUT" "sleep 30" "... and the container's process"
unlike "$OUT" "containerd|systemd|sshd" "... and none of the host's"
# ---- oci update: a live container's memory limit raised
printf '{"memory": {"limit": 536870912}, "pids": {"limit": 128}}\n' >"$T/res.json"
bounded "$RUNC" --root "$ROOT" update --resources "$T/res.json" c-cgfs
is "$RC" 0 "oci update --resources FILE exits 0" || diag "$ERR"
is "$(cat "$(cgdir memory)$P/c1/memory.limit_in_bytes" 2>/dev/null)" 536870912 "... the live container's memory limit is raised to 512 MiB"
is "$(cat "$(cgdir pids)$P/c1/pids.max" 2>/dev/null)" 128 "... and its process limit to 128"
printf '{"cpu": {"quota": 25000, "period": 100000}}\n' >"$T/res2.json"
bounded "$RUNC" --root "$ROOT" update --resources "$T/res2.json" c-cgfs
is "$RC:$(cat "$(cgdir cpu)$P/c1/cpu.cfs_quota_us" 2>/dev/null)" "0:25000" "oci update: a CPU quota set on the live container"
printf '{"memory": {"limit": "lots"}}\n' >"$T/res3.json"
bounded "$RUNC" --root "$ROOT" update --resources "$T/res3.json" c-cgfs
like "$RC:$ERR" "^1:.*memory.limit" "oci update with a limit that is not a number: exit 1, one line naming it"
bounded "$RUNC" --root "$ROOT" kill c-cgfs KILL
for _ in $(seq 100); do [ -d "$(cgdir memory)$P/c1" ] || break; sleep 0.1; done
bounded "$RUNC" --root "$ROOT" delete c-cgfs
[ ! -e "$(cgdir memory)$P/c1" ] && [ ! -e "$(cgdir pids)$P/c1" ] && [ ! -e "$(cgdir memory)$P" ]
ok $? "after the container: its group and the parents the run made are gone"
[ -d "$(cgdir memory)/warren-t$$" ]
ok $? "... and the parent it found (made before) stays"
rmdir "$(cgdir memory)/warren-t$$" 2>/dev/null
[ -z "$(find /sys/fs/cgroup -maxdepth 2 -name "warren-t$$" 2>/dev/null)" ]
ok $? "... nothing of $P is left in any hierarchy"

# ---- v2: the run's group is the supervisor's too, and pause freezes that group: the supervisor
# steps out while the cell is frozen (else it froze with it and resume never came). On a hybrid
# host, the unified hierarchy (no controllers) bound at /sys/fs/cgroup in a mount namespace of
# the test's own, where warren sees a v2 host.
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
	G=/warren-v2t$$/c1
	bundle "$T/b-v2" '["sh", "-c", "i=0; while :; do i=$((i+1)); echo $i >/tmp/n; sleep 0.02; done"]' "c['linux']['cgroupsPath'] = '$G'"
	"$PY" -c 'import json,sys; json.dump({"args": ["cat", "/tmp/n"], "cwd": "/", "user": {"uid": 0, "gid": 0}}, open(sys.argv[1], "w"))' "$T/v2n.json"
	cat >"$T/v2.sh" <<'V2'
set -u
RUNC=$1 ROOT=$2 B=$3 G=$4 N=$5
mount --make-rprivate /
[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || mount --bind /sys/fs/cgroup/unified /sys/fs/cgroup || exit 1
R=("$RUNC" --root "$ROOT")
n() { timeout 10 "${R[@]}" exec --process "$N" c-v2; }
timeout 20 "${R[@]}" create --bundle "$B" c-v2 && timeout 10 "${R[@]}" start c-v2 || exit 1
sup=$(timeout 10 "${R[@]}" state c-v2 | sed -n 's/^ *"pid": \([0-9]*\).*/\1/p')
echo "in=$(grep '^0::' "/proc/$sup/cgroup")"
sleep 0.3
timeout 10 "${R[@]}" pause c-v2
echo "pause=$?:$(cat "/sys/fs/cgroup$G/cgroup.freeze"):$(grep -c "^0::$G\$" "/proc/$sup/cgroup")"
a=$(cat "/proc/$(pgrep -P "$(pgrep -P "$sup" | head -1)" | head -1)/root/tmp/n"); sleep 0.3
b=$(cat "/proc/$(pgrep -P "$(pgrep -P "$sup" | head -1)" | head -1)/root/tmp/n")
timeout 10 "${R[@]}" resume c-v2
echo "resume=$?:$(cat "/sys/fs/cgroup$G/cgroup.freeze"):$(grep '^0::' "/proc/$sup/cgroup")"
sleep 0.3
c=$(n)
echo "counter=$([ "$a" = "$b" ] && echo frozen):$([ "$c" -gt "$b" ] 2>/dev/null && echo runs)"
timeout 10 "${R[@]}" kill c-v2 KILL
for _ in $(seq 100); do kill -0 "$sup" 2>/dev/null || break; sleep 0.1; done
timeout 20 "${R[@]}" delete c-v2
echo "gone=$?:$(ls -d "/sys/fs/cgroup$G" "/sys/fs/cgroup${G%/*}" 2>/dev/null)"
V2
	bounded unshare -m bash "$T/v2.sh" "$RUNC" "$ROOT" "$T/b-v2" "$G" "$T/v2n.json"
	is "$(sed -n 's/^in=//p' <<<"$OUT")" "0::$G" "v2: the supervisor is in the container's group $G (/proc/PID/cgroup)" || diag "$OUT$ERR"
	is "$(sed -n 's/^pause=//p' <<<"$OUT")" "0:1:0" "v2 pause: the group's cgroup.freeze is 1, the supervisor out of it"
	is "$(sed -n 's/^resume=//p' <<<"$OUT")" "0:0:0::$G" "v2 resume: answered by the supervisor (not frozen), the group thawed, the supervisor back in it"
	is "$(sed -n 's/^counter=//p' <<<"$OUT")" "frozen:runs" "v2: the job stood still while paused and runs again after resume"
	is "$(sed -n 's/^gone=//p' <<<"$OUT")" "0:" "v2: after delete the group and the parent the run made are gone"
	# (what a failure above left: thawed, killed, removed)
	V2=/sys/fs/cgroup; [ -d /sys/fs/cgroup/unified ] && V2=/sys/fs/cgroup/unified
	for d in "$V2$G" "$V2${G%/*}"; do
		[ -d "$d" ] && { echo 0 >"$d/cgroup.freeze"; echo 1 >"$d/cgroup.kill"; sleep 0.2; rmdir "$d"; } 2>/dev/null
	done
else
	skip 5 "no cgroup v2 hierarchy on this host (neither /sys/fs/cgroup nor /sys/fs/cgroup/unified)"
fi

# ---- a supervisor killed -9: delete (warren gc of the run) removes the group it left
bundle "$T/b-k9" '["sleep", "60"]' "c['linux']['cgroupsPath'] = '/warren-k9t$$/c1'"
bounded "$RUNC" --root "$ROOT" run -d --bundle "$T/b-k9" c-k9
sup=$("$RUNC" --root "$ROOT" state c-k9 | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
job_of "$sup" >/dev/null
is "$(jget "$(last_run)/spec.json" 'd["cgroup_path"]')" "/warren-k9t$$/c1" "spec.json names the bundle's cgroupsPath"
kill -9 "$sup"
for _ in $(seq 100); do kill -0 "$sup" 2>/dev/null || break; sleep 0.1; done
[ -d "$(cgdir memory)/warren-k9t$$/c1" ]; ok $? "a supervisor killed -9 leaves its group at the cgroupsPath"
bounded "$RUNC" --root "$ROOT" delete c-k9
[ ! -e "$(cgdir memory)/warren-k9t$$/c1" ] && [ ! -e "$(cgdir pids)/warren-k9t$$/c1" ] && [ -z "$(job_pids 1000)" ]
ok $? "... delete (gc of the run) kills what it held and removes the group in every hierarchy"
for h in /sys/fs/cgroup/*/warren-k9t$$; do rmdir "$h" 2>/dev/null; done

# ---- the systemd form
S=kubepods-burstable-pod123w$$.slice:cri-containerd:abc$$
SP=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod123w$$.slice/cri-containerd-abc$$.scope
had_kp=0; [ -d "$(cgdir memory)/kubepods.slice" ] && had_kp=1
# cgroup_of ID: /proc/PID/cgroup of container ID's job (run -d), then the container is killed
cgroup_of() {
	local s p
	s=$("$RUNC" --root "$ROOT" state "$1" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
	p=$(job_of "$s")
	cat "/proc/$p/cgroup" 2>/dev/null
	"$RUNC" --root "$ROOT" kill "$1" KILL
	for _ in $(seq 100); do kill -0 "$s" 2>/dev/null || break; sleep 0.1; done
	"$RUNC" --root "$ROOT" delete "$1"
}
bundle "$T/b-sd" '["sleep", "30"]' "c['linux']['cgroupsPath'] = '$S'"
bounded "$RUNC" --root "$ROOT" --systemd-cgroup run -d --bundle "$T/b-sd" c-sd
is "$RC" 0 "a bundle with cgroupsPath $S (--systemd-cgroup) runs" || diag "$ERR"
line_like "$(cgroup_of c-sd)" "^[0-9]+:memory:$SP\$" "... its process is in $SP, as runc maps the systemd form"
[ ! -e "$(cgdir memory)$SP" ] && { [ "$had_kp" = 1 ] || [ ! -e "$(cgdir memory)/kubepods.slice" ]; }
ok $? "... and after it, the scope and the slices the run made are gone"
bundle "$T/b-sd2" '["sleep", "30"]' "c['linux']['cgroupsPath'] = 'kubepods-besteffort-pod9w$$.slice:cri-containerd:x$$'"
bounded "$RUNC" --root "$ROOT" run -d --bundle "$T/b-sd2" c-sd2
line_like "$(cgroup_of c-sd2)" "^[0-9]+:memory:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod9w$$.slice/cri-containerd-x$$.scope\$" \
	"slice:prefix:name without --systemd-cgroup is the systemd form too (containerd's CRI with SystemdCgroup)"
[ "$had_kp" = 1 ] || rmdir "$(cgdir memory)/kubepods.slice" 2>/dev/null

# ---- refused: '..', relative, the root, warren's own, an existing group
refused() { # DESC CGROUPSPATH REGEX
	bundle "$T/b-bad$_tap_n" '["true"]' "c['linux']['cgroupsPath'] = '$2'"
	bounded "$RUNC" --root "$ROOT" run --bundle "$T/b-bad$_tap_n" "c-bad$_tap_n"
	like "$RC:$ERR" "^1:.*linux.cgroupsPath '.*' $3" "$1"
	[ "$(grep -c . <<<"$ERR")" -le 2 ] || diag "$ERR"
}
refused "cgroupsPath /kubepods/../../escape: refused ('..')" "/kubepods/../../escape" "has a component that is empty, '.', '..'"
refused "cgroupsPath relative (kubepods/x): refused" "kubepods/x" "is not absolute"
refused "cgroupsPath /: refused (the root)" "/" "names the hierarchy's root"
refused "cgroupsPath /warren/x: refused (warren's own groups)" "/warren/x" "is inside warren's own groups"
refused "cgroupsPath a:b (neither form): refused" "a:b" "is not slice:prefix:name"
refused "cgroupsPath ..slice:p:n: refused (no slice)" "a--b.slice:p:n" "names no systemd slice"
mkdir "$(cgdir memory)/warren-tx$$"
bundle "$T/b-exists" '["true"]' "c['linux']['cgroupsPath'] = '/warren-tx$$'"
bounded "$RUNC" --root "$ROOT" run --bundle "$T/b-exists" c-exists
like "$RC:$ERR" "^1:.*the cgroup /sys/fs/cgroup/[a-z]+/warren-tx$$ already exists" "cgroupsPath naming an existing group (another's): refused, never joined"
[ -d "$(cgdir memory)/warren-tx$$" ]; ok $? "... and that group is left alone"
rmdir "$(cgdir memory)/warren-tx$$"
# rootless: a bundle names no group of its own
use_mode user
mkdir_for_mode "$T/u"
ROOT=$T/u/root; mkdir_for_mode "$ROOT" 700
bundle "$T/u/b" '["true"]' "c['linux']['cgroupsPath'] = '/user.slice/x$$'"
bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$T/u/b" c-u
like "$RC:$ERR" "^1:.*linux.cgroupsPath '/user.slice/x$$': a rootless caller's bundle cannot name where its group goes" "[user] a rootless caller's cgroupsPath: refused"
use_mode root
ROOT=$T/root

# ---- exec under a deadline (issue 36, item 6): a caller that gives up on an exec kills the pid
# it was given (--pid-file: the keeper's); the process and all it started go with it, also what
# left its session and ignores SIGTERM (the exec's own group, emptied by its guard); what an
# exec leaves in the background on a normal end stays, as runc's, until the container ends
bundle "$T/b-ex" '["sleep", "1000"]'
bounded "$RUNC" --root "$ROOT" create --bundle "$T/b-ex" c-ex
bounded "$RUNC" --root "$ROOT" start c-ex
keep=9$(uniq_arg) one=9$(uniq_arg) two=9$(uniq_arg)
proc() { "$PY" -c 'import json,sys; json.dump({"args": ["sh", "-c", sys.argv[2]], "env": ["PATH=/bin"], "cwd": "/", "user": {"uid": 0, "gid": 0}}, open(sys.argv[1], "w"))' "$@"; }
proc "$T/p-bg.json" "sleep $keep >/dev/null 2>&1 &"
proc "$T/p-tree.json" "setsid sleep $one & (setsid sh -c 'trap \"\" TERM; exec sleep $two' &); exec sleep 600"
bounded "$RUNC" --root "$ROOT" exec --process "$T/p-bg.json" c-ex
is "$RC" 0 "exec of a process that leaves one in the background ends 0"
bounded "$RUNC" --root "$ROOT" exec --process "$T/p-tree.json" --detach --pid-file "$T/ex.pid" c-ex
wait_for 10 job_alive "$two"
like "$(cat "/proc/$(job_pids "$one" | head -1)/cgroup" 2>/dev/null)" "/exec-$(cat "$T/ex.pid")"$'(\n|$)' \
	"an exec's processes are in a group of its own (exec-KEEPER), also one that left its session"
kill -KILL "$(cat "$T/ex.pid")"
exec_tree_gone() { job_gone "$one" && job_gone "$two"; }
wait_for 5 exec_tree_gone; ok $? "kill -9 of the exec's pid (a caller's deadline): the process and all it started are gone, setsid and SIGTERM ignored alike"
job_alive "$keep"; ok $? "... what an earlier exec left in the background on its normal end stays"
bounded "$RUNC" --root "$ROOT" delete --force c-ex
wait_for 10 job_gone "$keep"; ok $? "... until the container ends"
nothing_left "$(last_run)" "nothing of the container and its execs is left (their groups included)"

# ---- containerd's runc shim: ctr run --cpus, --cgroup
if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then
	skip 8 "containerd or ctr is not installed"
else
	CD=$T/ctd
	mkdir -p "$CD"
	had_run_containerd=0
	[ -e /run/containerd ] && had_run_containerd=1
	NS=warren-cg-t$$
	cat >"$CD/config.toml" <<TOML
version = 2
root = "$CD/root"
state = "$CD/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CD/c.sock"
[ttrpc]
  address = "$CD/c.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
TOML
	WARREN_STATE=$STATE containerd --config "$CD/config.toml" >"$CD/containerd.log" 2>&1 &
	CTD_PID=$!
	X=(ctr -a "$CD/c.sock" -n "$NS")
	for _ in $(seq 100); do "${X[@]}" version >/dev/null 2>&1 && break; sleep 0.1; done
	"$PY" "$REPO/tests/docker-archive.py" "$BB" "$CD/bb.tar" docker.io/library/warren-bb:test
	bounded "${X[@]}" images import "$CD/bb.tar"
	R=(--runtime io.containerd.runc.v2 --runc-binary "$RUNC")
	bounded "${X[@]}" run -d "${R[@]}" --cpus 0.5 --cgroup "/warren-ctr$$/c1" docker.io/library/warren-bb:test t-cpu \
		sh -c 'timeout 2 sh -c "while :; do :; done"; sleep 30'
	is "$RC" 0 "ctr run --cpus 0.5 --cgroup /warren-ctr$$/c1 through warren-runc" || diag "$ERR"
	sleep 0.5
	line_like "$(cat /sys/fs/cgroup/cpu/warren-ctr$$/c1/cgroup.procs 2>/dev/null | head -1 | xargs -I{} cat /proc/{}/cgroup)" \
		"^[0-9]+:cpu:/warren-ctr$$/c1\$" "... the container is in /warren-ctr$$/c1 (cpu hierarchy)"
	# the shim's metrics (what the CRI's ContainerStats reads): the container's own group's,
	# its CPU time between what the group had just before and just after
	u0=$(cat /sys/fs/cgroup/cpuacct/warren-ctr$$/c1/cpuacct.usage 2>/dev/null)
	bounded "${X[@]}" task metrics t-cpu
	u1=$(cat /sys/fs/cgroup/cpuacct/warren-ctr$$/c1/cpuacct.usage 2>/dev/null)
	m=$(awk '$1 == "cpuacct.usage" { print $2 }' <<<"$OUT")
	[ -n "$m" ] && [ -n "$u0" ] && [ "$u0" -gt 0 ] && [ "$u0" -le "$m" ] && [ "$m" -le "$u1" ]
	ok $? "ctr task metrics: the container's CPU time, its own group's ($u0 <= $m <= $u1)" || diag "$OUT"
	sleep 1.5
	bounded "${X[@]}" task kill -s SIGKILL t-cpu
	for _ in $(seq 100); do "${X[@]}" task ls 2>/dev/null | grep -q 't-cpu.*STOPPED' && break; sleep 0.1; done
	bounded "${X[@]}" task delete t-cpu
	bounded "${X[@]}" containers rm t-cpu
	RJ=$(last_run)/result.json
	is "$(jget "$RJ" '[d["limits"]["cpus"], d["cpu_throttled_periods"] > 0]')" "[0.5, true]" "... the record: 0.5 CPUs, throttled"
	[ -z "$(find /sys/fs/cgroup -maxdepth 2 -name "warren-ctr$$" 2>/dev/null)" ]
	ok $? "... its group and the parent the run made are gone"
	# an exec the shim is told to kill (what the CRI does when an ExecSync's timeout passes):
	# its process tree goes, also what left its session
	bounded "${X[@]}" run -d "${R[@]}" docker.io/library/warren-bb:test t-ex sleep 1000
	one=9$(uniq_arg)
	start_bg "${X[@]}" task exec --exec-id e1 t-ex sh -c "setsid sleep $one & exec sleep 600"
	ctr_exec=$BG_PID
	wait_for 15 job_alive "$one"; ok $? "ctr task exec: the exec's processes run (one left its session)"
	bounded "${X[@]}" task kill --exec-id e1 -s SIGKILL t-ex
	wait_for 5 job_gone "$one"; ok $? "ctr task kill --exec-id -s SIGKILL: the exec's whole process tree is gone, what left its session too"
	wait_bg "$ctr_exec" 10
	bounded "${X[@]}" task kill -s SIGKILL t-ex
	for _ in $(seq 100); do "${X[@]}" task ls 2>/dev/null | grep -q 't-ex.*STOPPED' && break; sleep 0.1; done
	bounded "${X[@]}" task delete t-ex
	bounded "${X[@]}" containers rm t-ex
	nothing_left "$(last_run)" "... nothing of that container is left"
	"${X[@]}" images rm docker.io/library/warren-bb:test >/dev/null 2>&1
	kill "$CTD_PID"
	wait "$CTD_PID" 2>/dev/null
	rm -rf "/run/containerd/runc/$NS" "/run/containerd/fifo" "$CD"
	[ "$had_run_containerd" = 1 ] || rm -rf /run/containerd
fi
