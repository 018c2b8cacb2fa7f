#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci.t - the OCI runtime face (warren oci, warren-runc): the lifecycle straight as a shim or
# conmon drives it (tests/oci-caller.py: a subreaper that creates, reads the pid file, starts
# and waits for that pid): state created -> running -> stopped with the spec's fields, the
# supervisor's exit mirroring the job's (code, signal), kill by name and number, the console
# socket getting the terminal's master, run, the errors (bad bundle, unknown id, duplicate id, a
# refused field) as one line and exit 1 with the message in --log's JSON; features, state and
# --version as go-runc reads them; as root and rootless; then podman --runtime and containerd's
# runc shim (ctr run --runc-binary) running containers in cells. Nothing left on the host.
. "$(dirname "$0")/../lib.sh"

plan 229

. "$REPO/tests/oci.sh"
oci_setup
CALLER=$REPO/tests/oci-caller.py

# caller ID BUNDLE ARGS...: oci-caller.py as the mode's user (OUT: its lines)
caller() {
	local id=$1 b=$2; shift 2
	bounded "${RUNNER[@]}" "$PY" "$CALLER" "$RUNC" "$ROOT" "$b" "$id" "$@"
}
val() { sed -n "s/^$1=//p" <<<"$OUT" | head -1; }

# ---- what the runtime says of itself
bounded "$RUNC" --version
is "$RC" 0 "--version exits 0"
like "$(sed -n 1p <<<"$OUT")" '^runc version [0-9]' "--version: the first line is 'runc version X' (go-runc)"
like "$(sed -n 2p <<<"$OUT")" '^commit: ' "--version: a commit: line"
like "$(sed -n 3p <<<"$OUT")" '^spec: 1\.[0-9]+\.[0-9]+$' "--version: a spec: 1.x.y line"
bounded "$WARREN" oci features
is "$RC" 0 "features exits 0"
is "$("$PY" -c 'import json,sys; j=json.loads(sys.stdin.read()); l=j["linux"]
print(j["ociVersionMin"][:2], j["ociVersionMax"][:2], type(j["hooks"]).__name__, "bind" in j["mountOptions"],
      sorted(l["namespaces"]) == ["cgroup","ipc","mount","network","pid","user","uts"], l["seccomp"]["enabled"],
      l["apparmor"]["enabled"], type(j["annotations"]).__name__)' <<<"$OUT")" \
	"1. 1. list True True True False dict" "features: the JSON of runtime-spec features.md (versions, hooks, mountOptions, linux.namespaces, seccomp, apparmor, annotations)"

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	D=$T/$mode
	mkdir_for_mode "$D"
	ROOT=$D/root
	mkdir_for_mode "$ROOT" 700

	# ---- the lifecycle straight: exit code, pid file, state at each step
	bundle "$D/b-exit" '["sh", "-c", "echo out-$(id -u); echo err >&2; exit 3"]'
	caller c-exit "$D/b-exit"
	pid=$(val pidfile)
	like "$pid" '^[0-9]+$' "$M create writes the pid file"
	is "$(val created)" "created/$pid" "$M state after create: created, with the pid of the pid file"
	is "$(val state_keys)" "annotations,bundle,created,id,ociVersion,owner,pid,status,warren_run" "$M state has the spec's fields (ociVersion, id, status, pid, bundle, annotations)"
	like "$(val running)" "^(running/$pid|stopped/0)$" "$M state after start: running (or already stopped)"
	is "$(val end)" "exit 3" "$M the pid the caller waits for exits with the job's code"
	is "$(val stopped)" "stopped/0" "$M state after the end: stopped, pid 0"
	is "$(val delete)" 0 "$M delete exits 0"
	is "$(val out)" "out-0|err|" "$M the job's stdout and stderr reach the caller's streams"
	[ -e "$ROOT/c-exit" ]; is $? 1 "$M delete removes the container's state directory"
	run=$(ls -t "$STATE/runs" | head -1)
	is "$(jget "$STATE/runs/$run/result.json" 'd["exit_code"], d["name"]')" '[3, "c-exit"]' "$M the run is recorded as any warren run (result.json, named after the container)"
	nothing_left "$STATE/runs/$run" "$M nothing of the container is left (scratch, mounts, processes, cgroups)"

	# ---- kill by name and by number: the supervisor dies by the job's signal
	bundle "$D/b-sleep" '["sleep", "1000"]'
	caller c-term "$D/b-sleep" --kill SIGTERM
	is "$(val end)" "signal 15" "$M kill ID SIGTERM: the waited-for pid dies by SIGTERM"
	caller c-kill "$D/b-sleep" --kill 9
	is "$(val end)" "signal 9" "$M kill ID 9: the waited-for pid dies by SIGKILL"
	is "$(val stopped)" "stopped/0" "$M state after a kill: stopped"
	caller c-nostart "$D/b-sleep" --no-start
	like "$(val end)" "^signal 9$" "$M delete of a created container (never started) ends it"
	[ -z "$(job_pids 1000)" ]; ok $? "$M no sleep of the killed containers is left"

	# ---- a caller that connects to the control socket and says nothing holds nothing up
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-sleep" c-hold
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" start c-hold
	"${RUNNER[@]}" "$PY" -c 'import os,socket,sys,time
d=os.open(sys.argv[1], os.O_RDONLY); s=socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect("/proc/self/fd/%d/ctl" % d); time.sleep(20)' "$ROOT/c-hold" &
	holder=$!
	sleep 1
	t0=$(date +%s)
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" kill c-hold KILL
	t1=$(date +%s)
	is "$RC:$((t1 - t0 < 10))" "0:1" "$M kill while another connection to the control socket says nothing: answered at once ($((t1 - t0)) s)"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" delete --force c-hold
	kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

	# ---- exec: a new process in the running cell, as the process JSON says, with the job's defences
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-sleep" c-exec
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" start c-exec
	xu=$JOB_UID
	[ "$mode" = user ] && xu=0   # rootless, the cell maps its job's user alone (the bundle's uid 0)
	"$PY" -c 'import json,sys; json.dump({"args": ["sh", "-c", "echo exec-$(id -u) X=$X cwd=$(pwd) umask=$(umask); ps -o comm | grep -c sleep; grep -E \"^(NoNewPrivs|Seccomp):\" /proc/self/status | tr -s \"\t\" \" \"; exit 6"],
		"env": ["X=42", "PATH=/bin"], "cwd": "/tmp", "user": {"uid": int(sys.argv[2]), "gid": int(sys.argv[2]), "umask": 7}}, open(sys.argv[1], "w"))' "$D/p.json" "$xu"
	[ "$mode" = user ] && chown "$TEST_USER_UID" "$D/p.json"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" ps --format json c-exec
	sleeps=$(for p in $("$PY" -c 'import json,sys; print(" ".join(map(str, json.loads(sys.stdin.read()))))' <<<"$OUT"); do
		tr '\0' ' ' </proc/$p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 1000 $')
	is "$RC:$sleeps" "0:1" "$M ps --format json: the host pids of the cell's processes, the job's among them"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" exec --process "$D/p.json" c-exec
	is "$RC" 6 "$M exec: the exit code of the process"
	line_like "$OUT" "^exec-$xu X=42 cwd=/tmp umask=0007$" "$M exec: the process's user, environment, working directory and umask"
	line_like "$OUT" '^1$' "$M exec: it sees the job's processes (the cell's pid namespace)"
	line_like "$OUT" '^NoNewPrivs: 1$' "$M exec: no_new_privs"
	line_like "$OUT" '^Seccomp: 2$' "$M exec: a seccomp filter"
	if [ "$mode" = user ]; then
		"$PY" -c 'import json,sys; json.dump({"args": ["id"], "cwd": "/", "user": {"uid": 1, "gid": 1}}, open(sys.argv[1], "w"))' "$D/p1.json"
		bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" exec --process "$D/p1.json" c-exec
		like "$RC:$ERR" "^1:warren: process.user \(uid 1, gid 1\): a rootless cell has only its job's user" "$M exec as a user the cell does not map: one line, exit 1"
	else
		bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" exec --process "$D/p.json" --detach --pid-file "$D/exec.pid" c-exec
		is "$RC:$(cat "$D/exec.pid" 2>/dev/null | grep -c '^[0-9][0-9]*$')" "0:1" "$M exec --detach: returns at once and writes the pid file"
	fi
	# exec's capabilities narrow the container's own (process.capabilities of its bundle), never
	# widen them: a process JSON naming none (or more) gets no more than the container
	bundle "$D/b-cap" '["sleep", "1000"]' 'c["process"]["capabilities"] = {"bounding": ["CAP_KILL", "CAP_SETUID"], "effective": ["CAP_KILL", "CAP_SETUID"]}
c["process"]["rlimits"] = [{"type": "RLIMIT_MSGQUEUE", "soft": 4096, "hard": 8192}, {"type": "RLIMIT_SIGPENDING", "soft": 100, "hard": 200}]'
	"$PY" -c 'import json,sys; json.dump({"args": ["grep", "-E", "CapEff|msgqueue size|pending signals", "/proc/self/status", "/proc/self/limits"], "cwd": "/", "user": {"uid": 0, "gid": 0},
		"capabilities": {"bounding": ["CAP_KILL", "CAP_CHOWN"], "effective": ["CAP_KILL", "CAP_CHOWN"]},
		"rlimits": [{"type": "RLIMIT_MSGQUEUE", "soft": 2048, "hard": 65536}]}, open(sys.argv[1], "w"))' "$D/p0.json"
	[ "$mode" = user ] && chown "$TEST_USER_UID" "$D/p0.json"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-cap" c-cap
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" start c-cap
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" exec --process "$D/p0.json" c-cap
	line_like "$OUT" ':CapEff:[[:space:]]+0000000000000020$' "$M exec: root keeps only what both the container's and the process's capabilities name (KILL)"
	line_like "$OUT" ':Max msgqueue size +2048 +8192 ' "$M exec: the process's rlimits apply, a hard limit never above the container's (RLIMIT_MSGQUEUE 2048, hard kept at 8192)"
	line_like "$OUT" ':Max pending signals +100 +200 ' "$M exec: the container's rlimits the process does not name stay (RLIMIT_SIGPENDING 100/200)"
	# the bundle changed since create: exec takes the container's config as create read it
	"$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); c["process"]["rlimits"][1].update(soft=50, hard=60)
c["process"]["capabilities"] = {"bounding": ["CAP_KILL", "CAP_CHOWN"], "effective": ["CAP_KILL", "CAP_CHOWN"]}; json.dump(c, open(sys.argv[1], "w"))' "$D/b-cap/config.json"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" exec --process "$D/p0.json" c-cap
	line_like "$OUT" ':Max pending signals +100 +200 ' "$M exec after the bundle's config.json changed: the container's rlimits as create read them (RLIMIT_SIGPENDING 100/200, not 50/60)"
	line_like "$OUT" ':CapEff:[[:space:]]+0000000000000020$' "$M ... and its capabilities (KILL, not CHOWN that the changed bundle names)"
	"$PY" -c 'import json,sys; json.dump({"args": ["true"], "cwd": "/", "terminal": True}, open(sys.argv[1], "w"))' "$D/pt.json"
	[ "$mode" = user ] && chown "$TEST_USER_UID" "$D/pt.json"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" exec --process "$D/pt.json" c-cap
	is "$RC:$ERR" "1:warren: process.terminal is true: give --console-socket (where the terminal's master is sent)" "$M exec of a process with a terminal and no --console-socket: one line, exit 1"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" delete --force c-cap
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" delete --force c-exec
	# exec and ps at once after start (a kubelet's probe): the job may be a moment from being
	# made; they wait for it rather than say the process ended (2 times in 30, before)
	bundle "$D/b-race" '["sleep", "1000"]'
	"$PY" -c 'import json,sys; json.dump({"args": ["true"], "cwd": "/", "user": {"uid": 0, "gid": 0}}, open(sys.argv[1], "w"))' "$D/pr.json"
	[ "$mode" = user ] && chown "$TEST_USER_UID" "$D/pr.json"
	fails=0
	for i in $(seq 20); do
		"${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-race" c-race$i >/dev/null 2>&1
		"${RUNNER[@]}" "$RUNC" --root "$ROOT" start c-race$i
		if [ $((i % 2)) = 0 ]; then
			"${RUNNER[@]}" "$RUNC" --root "$ROOT" exec --process "$D/pr.json" c-race$i 2>>"$D/race.err" || fails=$((fails + 1))
		else
			"${RUNNER[@]}" "$RUNC" --root "$ROOT" ps --format json c-race$i >/dev/null 2>>"$D/race.err" || fails=$((fails + 1))
		fi
		"${RUNNER[@]}" "$RUNC" --root "$ROOT" delete --force c-race$i
	done
	is "$fails" 0 "$M exec or ps right after start, 20 times: the job is found each time" || diag "$(sort -u "$D/race.err" | head -3)"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" exec --process "$D/p.json" c-exec
	like "$RC:$ERR" "^1:warren: container c-exec does not exist" "$M exec in a deleted container: one line, exit 1"

	# ---- a supervisor killed with SIGKILL: its cell goes with it; delete reclaims what is left
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-sleep" --pid-file "$D/k9.pid" c-k9
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" start c-k9
	run=$(ls -t "$STATE/runs" | head -1)
	kill -9 "$(cat "$D/k9.pid")"
	for _ in $(seq 50); do [ -z "$(job_pids 1000)" ] && break; sleep 0.1; done
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" state c-k9
	like "$OUT" '"status": "stopped"' "$M a supervisor killed -9: state says stopped"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" delete c-k9
	is "$RC" 0 "$M delete after a supervisor killed -9"
	nothing_left "$STATE/runs/$run" "$M ... and nothing of its cell is left (gc's record)"

	# ---- the console socket: the terminal's master comes over SCM_RIGHTS, the job's tty on it
	bundle "$D/b-tty" '["sh", "-c", "tty; echo tty-ok"]' 'c["process"]["terminal"] = True'
	caller c-tty "$D/b-tty" --console
	like "$(val console)" 'fds=1$' "$M --console-socket gets one descriptor (the terminal's master)"
	like "$(val tty)" '^/dev/pts/[0-9]+\|tty-ok' "$M the job's stdin/stdout are the terminal whose master was sent"
	is "$(val end)" "exit 0" "$M a job with a terminal exits 0"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-tty" c-tty2
	is "$RC:$ERR" "1:warren: process.terminal is true: give --console-socket (where the terminal's master is sent)" "$M create of a bundle with a terminal and no --console-socket: one line, exit 1"
	[ -e "$ROOT/c-tty2" ]; is $? 1 "$M ... and no state of it is left"

	# ---- linux.seccomp stacked on warren's filter; process.capabilities narrowing root's set
	bundle "$D/b-sec" '["sh", "-c", "mkdir /tmp/x && echo mkdir-ok; mkdir /tmp/y 2>&1; grep CapEff /proc/self/status"]' \
		'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat", "no_such_call"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
c["process"]["capabilities"] = {"bounding": ["CAP_KILL", "CAP_SETUID"], "effective": ["CAP_KILL", "CAP_SETUID", "CAP_CHOWN"]}'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-sec" c-sec
	is "$RC" 0 "$M a bundle with linux.seccomp and process.capabilities runs"
	line_like "$OUT" "can't create directory '/tmp/y': Operation not permitted" "$M linux.seccomp: the call the bundle denies fails with its errno"
	no_line_like "$OUT" '^mkdir-ok$' "$M linux.seccomp: mkdir never succeeded"
	line_like "$OUT" '^CapEff:[[:space:]]+00000000000000a0$' "$M process.capabilities: root keeps only what bounding and effective both name (KILL, SETUID)"
	# a container that dropped ALL capabilities, as containerd's CRI writes it (its empty lists
	# left out: "capabilities": {}): it and an exec in it hold none, not even in their bounding sets
	bundle "$D/b-nocap" '["grep", "-E", "^Cap(Eff|Bnd)", "/proc/self/status"]' 'c["process"]["capabilities"] = {}'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-nocap" c-nocap
	is "$RC:$(grep -c ':[[:space:]]*0000000000000000$' <<<"$OUT")" "0:2" "$M process.capabilities {} (every set left out: empty, as runc reads it): the job holds none ($(echo $OUT))"
	bundle "$D/b-nocap2" '["sleep", "1000"]' 'c["process"]["capabilities"] = {}'
	"$PY" -c 'import json,sys; json.dump({"args": ["grep", "-E", "^Cap(Eff|Bnd)", "/proc/self/status"], "cwd": "/", "user": {"uid": 0, "gid": 0}, "capabilities": {}}, open(sys.argv[1], "w"))' "$D/pnc.json"
	[ "$mode" = user ] && chown "$TEST_USER_UID" "$D/pnc.json"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-nocap2" c-nocap2
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" start c-nocap2
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" exec --process "$D/pnc.json" c-nocap2
	is "$RC:$(grep -c ':[[:space:]]*0000000000000000$' <<<"$OUT")" "0:2" "$M ... and an exec in it holds none either ($(echo $OUT))"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" delete --force c-nocap2
	# the user as the image names its uid (uid 65534: the busybox image's nobody, group nogroup),
	# in the container and in an exec, not warren's run user's name
	if [ "$mode" = root ]; then
		bundle "$D/b-nobody" '["sh", "-c", "echo $(id -nu) $(id -ng); exec sleep 1000"]' 'c["process"]["user"] = {"uid": 65534, "gid": 65534}'
		"$PY" -c 'import json,sys; json.dump({"args": ["sh", "-c", "echo $(id -nu) $(id -ng)"], "cwd": "/", "user": {"uid": 65534, "gid": 65534}}, open(sys.argv[1], "w"))' "$D/pnb.json"
		bounded "$RUNC" --root "$ROOT" create --bundle "$D/b-nobody" c-nobody
		bounded "$RUNC" --root "$ROOT" start c-nobody
		bounded "$RUNC" --root "$ROOT" exec --process "$D/pnb.json" c-nobody
		is "$RC:$OUT" "0:nobody nogroup" "$M process.user uid 65534: an exec's user and group are the image's names for the ids (nobody, nogroup)"
		bounded "$RUNC" --root "$ROOT" delete --force c-nobody
		bundle "$D/b-nobody2" '["sh", "-c", "echo $(id -nu) $(id -ng) $(grep -c . /etc/passwd)"]' 'c["process"]["user"] = {"uid": 65534, "gid": 65534}'
		bounded "$RUNC" --root "$ROOT" run --bundle "$D/b-nobody2" c-nobody2
		is "$RC:$OUT" "0:nobody nogroup $(grep -c . "$BB/etc/passwd")" "$M ... and the container's own process's; its /etc/passwd is the image's"
	else
		skip 2 "rootless: a cell has only its caller's uid (or 0)"
	fi
	# exec after the bundle's owner removed the profile from its config.json: the profile create
	# read still holds (runc keeps its config in its state directory; warren keeps a copy, 0600)
	bundle "$D/b-secx" '["sleep", "1000"]' \
		'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
	"$PY" -c 'import json,sys; json.dump({"args": ["sh", "-c", "mkdir /tmp/m 2>&1 && echo mkdir-made"], "cwd": "/", "user": {"uid": 0, "gid": 0}}, open(sys.argv[1], "w"))' "$D/pm.json"
	[ "$mode" = user ] && chown "$TEST_USER_UID" "$D/pm.json"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-secx" c-secx
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" start c-secx
	owner=root; [ "$mode" = user ] && owner=$TEST_USER
	is "$(stat -c '%a %U' "$ROOT/c-secx/config.json")" "600 $owner" "$M create keeps the container's config.json in its state directory, mode 0600"
	"$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); del c["linux"]["seccomp"]; json.dump(c, open(sys.argv[1], "w"))' "$D/b-secx/config.json"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" exec --process "$D/pm.json" c-secx
	line_like "$OUT" "can't create directory '/tmp/m': Operation not permitted" "$M exec after the bundle's config.json lost its seccomp profile: the call the profile denies still fails"
	no_line_like "$OUT" '^mkdir-made$' "$M ... mkdir never succeeded"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" delete --force c-secx

	# ---- process.user.umask: the job's, 022 when none is given (as runc), not the runtime's
	# caller's; exec's process has its own
	bundle "$D/b-um" '["sh", "-c", "umask"]' 'c["process"]["user"]["umask"] = 23'
	bundle "$D/b-um0" '["sh", "-c", "umask"]' 'c["process"]["user"].pop("umask", None)'
	bundle "$D/b-umbad" '["sh", "-c", "umask"]' 'c["process"]["user"]["umask"] = "022"'
	old_umask=$(umask)
	umask 077
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-um" c-um
	um1="$RC:$OUT"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-um0" c-um0
	um2="$RC:$OUT"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-umbad" c-umbad
	umask "$old_umask"
	is "$um1" "0:0027" "$M process.user.umask 23 (027): the job's umask"
	is "$um2" "0:0022" "$M no process.user.umask: 022, not the caller's 077"
	like "$RC:$ERR" '^1:warren: process.user.umask: give an integer' "$M process.user.umask not an integer: refused in one line"

	# ---- process.rlimits and oomScoreAdj take away, never give: as root they could raise a hard
	# limit (RLIMIT_RTPRIO: SCHED_FIFO for any job) or make the cell unkillable by the OOM killer
	read -r hr oom < <("${RUNNER[@]}" sh -c 'echo "$(ulimit -Hr) $(cat /proc/self/oom_score_adj)"')
	bundle "$D/b-rl" '["sh", "-c", "grep -E \"realtime priority|msgqueue size\" /proc/self/limits; echo oom=$(cat /proc/self/oom_score_adj)"]' \
		'c["process"]["rlimits"] = [{"type": "RLIMIT_RTPRIO", "soft": 99, "hard": 99}, {"type": "RLIMIT_MSGQUEUE", "soft": 4096, "hard": 8192}]
c["process"]["oomScoreAdj"] = -1000'
	rm -f "$D/rl.log"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" --log "$D/rl.log" run --bundle "$D/b-rl" c-rl
	if [ "$hr" -lt 99 ] 2>/dev/null && [ "$oom" -gt -1000 ]; then
		line_like "$OUT" "^Max realtime priority +$hr +$hr " "$M process.rlimits: a hard limit above the caller's (RLIMIT_RTPRIO 99) is kept at the caller's ($hr)"
		line_like "$OUT" "^Max msgqueue size +4096 +8192 " "$M process.rlimits: a lower limit is the job's (RLIMIT_MSGQUEUE 4096/8192)"
		line_like "$OUT" "^oom=$oom\$" "$M process.oomScoreAdj -1000: the job keeps the caller's score ($oom)"
		grep -q "process.rlimits: RLIMIT_RTPRIO hard 99 is above the caller's $hr: kept at the caller's" "$D/rl.log"
		ok $? "$M --log warns of the rlimit kept at the caller's"
		grep -q "process.oomScoreAdj -1000 is below the caller's $oom: kept at the caller's" "$D/rl.log"
		ok $? "$M --log warns of the oomScoreAdj kept at the caller's"
	else
		skip 5 "the caller's RLIMIT_RTPRIO ($hr) or oom_score_adj ($oom) leaves nothing to raise"
	fi
	rm -f "$D/rl.log"
	# a score above the caller's is the cell's; its supervisor keeps the caller's, lower: in the
	# container's memory group (the pid its caller knows is there) the OOM killer is to pick
	# the job, not the supervisor
	if [ "$oom" -lt 1000 ] 2>/dev/null; then
		up=$((oom + 100 > 1000 ? 1000 : oom + 100))
		bundle "$D/b-oom" '["sh", "-c", "exec sleep 1000"]' "c['process']['oomScoreAdj'] = $up"
		bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run -d --bundle "$D/b-oom" c-oom
		sup=$(jget "$ROOT/c-oom/state.json" 'd["pid"]')
		job=
		for _ in $(seq 50); do job=$(pgrep -P "$(pgrep -P "$sup" | head -1)" | head -1); [ -n "$job" ] && break; sleep 0.1; done
		is "$(cat "/proc/$job/oom_score_adj" 2>&1):$(cat "/proc/$sup/oom_score_adj" 2>&1)" "$up:$oom" \
			"$M process.oomScoreAdj $up (above the caller's $oom): the job's; the supervisor keeps the caller's"
		bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" delete --force c-oom
	else
		skip 1 "the caller's oom_score_adj ($oom) leaves nothing to raise"
	fi

	# a bundle's profile that allows everything gives back nothing warren's denies (stricter wins):
	# a user namespace (warren's filter refuses it without --allow-nested) stays refused
	bundle "$D/b-allow" '["sh", "-c", "unshare -U true && echo userns-made || echo userns-refused"]' \
		'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["unshare", "clone", "clone3"], "action": "SCMP_ACT_ALLOW"}]}'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-allow" c-allow
	line_like "$OUT" '^userns-refused$' "$M linux.seccomp allowing all: what warren's filter denies (a user namespace) stays denied"

	# ---- linux.maskedPaths beside warren's own masks; a path it cannot mask refused
	bundle "$D/b-mask" '["sh", "-c", "echo cpuinfo=$(wc -c < /proc/cpuinfo); echo kernel=$(ls /sys/kernel | wc -l)"]' \
		'c["linux"]["maskedPaths"] = ["/proc/cpuinfo", "/sys/kernel"]; c["linux"]["readonlyPaths"] = ["/proc/sys", "/sys/fs"]'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-mask" c-mask
	is "$RC:$(grep -c '=0$' <<<"$OUT")" "0:2" "$M linux.maskedPaths: /proc/cpuinfo reads empty and /sys/kernel is an empty directory"
	bundle "$D/b-mask2" '["sh", "-c", "wc -c </etc/passwd"]' 'c["linux"]["maskedPaths"] = ["/etc/passwd"]'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-mask2" c-mask2
	is "$RC:$OUT" "0:0" "$M a masked path outside /proc and /sys (/etc/passwd) reads empty" || diag "$ERR"
	bundle "$D/b-mask3" '["true"]' 'c["linux"]["maskedPaths"] = ["/etc/../proc/1"]'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-mask3" c-mask3
	like "$RC:$ERR" "^1:warren: linux.maskedPaths\[0\] '/etc/../proc/1': give an absolute path in the cell, not / and without '..'\$" "$M a masked path with '..': refused in one line"

	# ---- linux.resources: the pids limit is warren's, named in the record when it stops the run
	if [ "$mode" = root ]; then
		bundle "$D/b-pids" '["sh", "-c", "for i in $(seq 20); do sleep 2 & done; wait"]' 'c["linux"]["resources"] = {"pids": {"limit": 10}, "memory": {"limit": 268435456}}'
		bounded "$RUNC" --root "$ROOT" run --bundle "$D/b-pids" c-pids
		run=$(ls -t "$STATE/runs" | head -1)
		is "$(jget "$STATE/runs/$run/result.json" '[d["cause"]["limit"], d["limits"]["pids"], d["limits"]["memory"]]')" '["pids", 10, 268435456]' \
			"$M linux.resources pids and memory are the run's limits; the record names the process limit that stopped it"
	else
		skip 1 "rootless: no cgroup on this host for a pids limit"
	fi

	# ---- root.readonly: the root refuses writes, the cell's /tmp does not
	bundle "$D/b-ro" '["sh", "-c", "touch /etc/x 2>&1; touch /tmp/x && echo tmp-ok"]' 'c["root"]["readonly"] = True'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-ro" c-ro
	line_like "$OUT" "touch: /etc/x: Read-only file system" "$M root.readonly: a write to the root fails with EROFS"
	line_like "$OUT" '^tmp-ok$' "$M root.readonly: the cell's /tmp stays writable"

	# ---- pause and resume: the cell's processes frozen (v1: a freezer group of its own)
	if [ "$mode" = root ] && [ -d /sys/fs/cgroup/freezer ]; then
		bundle "$D/b-pz" '["sh", "-c", "i=0; while :; do i=$((i+1)); echo $i > /tmp/n; sleep 0.02; done"]'
		"$PY" -c 'import json,sys; json.dump({"args": ["cat", "/tmp/n"], "cwd": "/", "user": {"uid": 0, "gid": 0}}, open(sys.argv[1], "w"))' "$D/pn.json"
		bounded "$RUNC" --root "$ROOT" create --bundle "$D/b-pz" c-pz
		bounded "$RUNC" --root "$ROOT" start c-pz
		bounded "$RUNC" --root "$ROOT" pause c-pz
		fz=$(jget "$ROOT/c-pz/state.json" 'd["freezer"]')
		is "$RC:$(cat "$fz/freezer.state" 2>&1)" "0:FROZEN" "$M pause: the cell's freezer group is FROZEN"
		bounded "$RUNC" --root "$ROOT" state c-pz
		like "$OUT" '"status": "paused"' "$M state of a paused container: paused"
		bounded "$RUNC" --root "$ROOT" resume c-pz
		bounded "$RUNC" --root "$ROOT" exec --process "$D/pn.json" c-pz
		n1=$OUT
		sleep 0.5
		bounded "$RUNC" --root "$ROOT" exec --process "$D/pn.json" c-pz
		[ "${OUT:-0}" -gt "${n1:-0}" ] 2>/dev/null; ok $? "$M resume: the job runs again (its counter went from $n1 to $OUT)"
		bounded "$RUNC" --root "$ROOT" pause c-pz
		bounded "$RUNC" --root "$ROOT" delete --force c-pz
		is "$RC:$(ls -d "$fz" 2>/dev/null)" "0:" "$M delete --force of a paused container: it ends, its freezer group is gone"
	else
		skip 4 "no cgroup v1 freezer for this mode (rootless, or a v2 host)"
	fi

	# ---- run: create + start + wait, exit code, state removed
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-exit" c-run
	is "$RC" 3 "$M run exits with the job's code"
	like "$OUT" '^out-0$' "$M run: the job's output"
	[ -e "$ROOT/c-run" ]; is $? 1 "$M run removes the container's state when it ends"

	# ---- the errors: one line, runc's exit status 1, the message in --log's last JSON line
	LOG=$D/log.json
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" --log "$LOG" --log-format json create --bundle "$D/nope" c-bad
	is "$RC" 1 "$M a missing bundle: exit 1"
	one_warren_line "$M a missing bundle: one line"
	like "$ERR" "bundle $D/nope: not a directory" "$M a missing bundle: the line names it"
	is "$("$PY" -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["msg"])' "$LOG")" \
		"bundle $D/nope: not a directory: No such file or directory" "$M --log-format json: the last line's msg is the error (what go-runc reads)"
	[ -e "$ROOT/c-bad" ]; is $? 1 "$M a failed create leaves no state"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" state no-such
	is "$RC:$ERR" "1:warren: container no-such does not exist (under $ROOT)" "$M state of an unknown id: one line, exit 1"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" kill no-such KILL
	is "$RC" 1 "$M kill of an unknown id: exit 1"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" delete no-such
	is "$RC" 1 "$M delete of an unknown id: exit 1"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" delete --force no-such
	is "$RC" 0 "$M delete --force of an unknown id: exit 0 (gone is done, as runc says)"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-sleep" c-dup
	is "$RC" 0 "$M create c-dup"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-sleep" c-dup
	is "$RC:$ERR" "1:warren: container with id exists: c-dup" "$M a duplicate id: one line, exit 1"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" kill c-dup SIGNOPE
	like "$RC:$ERR" "^1:warren: kill: 'SIGNOPE' is not a signal" "$M kill with an unknown signal name: one line, exit 1"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" delete c-dup
	is "$RC" 0 "$M delete of the created duplicate"
	bundle "$D/b-hook" '["true"]' 'c["hooks"] = {"prestart": [{"path": "/bin/true"}]}'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-hook" c-hook
	like "$RC:$ERR" "^1:warren: hooks.prestart: warren runs no hooks" "$M a refused field (hooks): one line naming it, exit 1"
	# root.path at a tree of the host's own: its root's files would be the cell root's (idmapped)
	bundle "$D/b-etc" '["cat", "/shadow"]' 'c["root"]["path"] = "/etc"; c["process"]["user"] = {"uid": 0, "gid": 0}'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-etc" c-etc
	like "$RC:$ERR" "^1:warren: root.path /etc: a directory of the host's own" "$M root.path /etc: refused in one line (its shadow would be the cell root's to read)"
	no_line_like "$OUT" '^root:' "$M root.path /etc: nothing of /etc/shadow is shown"
	bundle "$D/b-ns" '["true"]' 'c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "network"] + [{"type": "network", "path": "/proc/1/ns/net"}]'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" create --bundle "$D/b-ns" c-ns
	like "$RC:$ERR" "^1:warren: linux.namespaces\[[0-9]+\] \(network\) path /proc/1/ns/net: [^"$'\n'"]+$" "$M a namespace path of the host's pid 1 to join: refused in one line naming the field (oci-ns.t has the rest)"

	# ---- a --root another user owns or may write: refused (they could plant a state.json under
	# an id naming any pid for delete to kill, any state directory for its gc, a ctl socket)
	OR=$D/open-root
	mkdir_for_mode "$OR" 777
	bounded "${RUNNER[@]}" "$RUNC" --root "$OR" create --bundle "$D/b-sleep" c-open
	like "$RC:$ERR" "^1:warren: --root $OR: the state directory is writable by others" "$M --root writable by others: create refused in one line"
	[ -e "$OR/c-open" ]; is $? 1 "$M --root writable by others: nothing made in it"
	if [ "$mode" = root ]; then
		# a victim process of root's, and a state.json naming it in a directory of another user's
		sleep 1001 &
		victim=$!
		mkdir -p "$OR/c-evil"
		chown -R 65534:65534 "$OR"
		chmod 700 "$OR"
		"$PY" -c 'import json,sys; p=int(sys.argv[2]); st=open("/proc/%d/stat" % p).read(); st=st[st.rindex(")")+2:].split()
json.dump({"id": "c-evil", "bundle": "/", "run": "x", "warren_state": sys.argv[3], "created": "", "status": "running",
           "pid": p, "start_time": int(st[19]), "init_pid": 0, "annotations": {}}, open(sys.argv[1], "w"))' "$OR/c-evil/state.json" "$victim" "$STATE"
		bounded "$RUNC" --root "$OR" delete --force c-evil
		like "$RC:$ERR" "^1:warren: --root $OR: the state directory is another user's" "$M --root of another user's: delete refused in one line"
		kill -0 "$victim" 2>/dev/null; ok $? "$M --root of another user's: the pid its state.json names was not killed"
		kill "$victim"; wait "$victim" 2>/dev/null
	else
		bounded "${RUNNER[@]}" "$RUNC" --root "$OR" delete --force c-open
		like "$RC:$ERR" "^1:warren: --root $OR: the state directory is writable by others" "$M --root writable by others: delete refused in one line"
		skip 1 "rootless: a directory of another user's with a planted state needs root to make"
	fi
	rm -rf "$OR"
	is "$(ls "$ROOT" | grep -v -e '\.out$' -e '\.pid$' -e '\.console$' -e '^log.json$')" "" "$M nothing of any container is left under --root"
	x=$(state_clean); ok $? "$M nothing of any run is left under the state directory" || diag "$x"
done

# ---- podman --runtime warren-runc
use_mode root
if ! command -v podman >/dev/null; then
	skip 16 "podman is not installed"
else
	PD=$T/podman
	mkdir -p "$PD"
	# podman refuses a runroot longer than 50 characters: one of its own under /run
	PRUN=$(mktemp -d /run/warren-oci-t.XXXXXX)
	P=(podman --root "$PD/root" --runroot "$PRUN" --cgroup-manager cgroupfs --events-backend file
	   --runtime "$RUNC" --storage-driver vfs)
	# podman passes no --root to a runtime it does not know (and its --rm clean-up drops
	# --runtime-flag): warren-runc's default root, removed after if the test made it
	had_run_oci=0
	[ -e /run/warren-oci ] && had_run_oci=1
	A=(--network none --annotation "warren.state=$STATE")
	bounded "${P[@]}" run --rm "${A[@]}" --rootfs "$BB" /bin/sh -c 'echo podman-$(id -u); cat /proc/1/cmdline | tr "\0" " "; exit 5'
	is "$RC" 5 "podman run --rootfs: exit code of the container"
	line_like "$OUT" '^podman-0$' "podman run --rootfs: its output"
	like "$OUT" 'warren' "podman run --rootfs: pid 1 of the container is warren's init (a cell)"
	run=$(ls -t "$STATE/runs" | head -1)
	is "$(jget "$STATE/runs/$run/result.json" 'd["exit_code"]')" 5 "podman: the run is recorded in warren's state"
	nothing_left "$STATE/runs/$run" "podman: nothing of the cell is left"
	(cd "$BB" && tar -cf "$PD/bb.tar" .)
	bounded "${P[@]}" import "$PD/bb.tar" localhost/warren-bb:test
	is "$RC" 0 "podman import of a rootfs tarball"
	bounded "${P[@]}" run --rm "${A[@]}" localhost/warren-bb:test /bin/sh -c 'echo image-ok; exit 0'
	is "$RC:$OUT" "0:image-ok" "podman run of an image podman imported"
	bounded "${P[@]}" run --rm "${A[@]}" -d localhost/warren-bb:test sleep 1000
	cid=$OUT
	is "$RC" 0 "podman run -d (a long-running container)"
	bounded "${P[@]}" exec "$cid" sh -c 'echo in-exec; exit 3'
	is "$RC:$OUT" "3:in-exec" "podman exec: a process in the running container, its output and exit code"
	bounded "${P[@]}" exec -t "$cid" sh -c 'tty; exit 4'
	like "$RC:$OUT" '^4:/dev/pts/[0-9]+' "podman exec -t: the process has a terminal of the cell (console socket)"
	bounded "${P[@]}" run --rm -t "${A[@]}" localhost/warren-bb:test sh -c 'tty; exit 2'
	like "$RC:$OUT" '^2:/dev/pts/[0-9]+' "podman run -t: the container's terminal came over the console socket"
	bounded "${P[@]}" stop -t 2 "$cid"
	is "$RC" 0 "podman stop (runtime kill SIGTERM)"
	bounded "${P[@]}" rm -f "$cid"
	bounded "${P[@]}" ps -a -q
	is "$OUT" "" "podman: no container left"
	bounded "${P[@]}" rmi -a -f
	bounded "${P[@]}" system reset -f
	umount -R "$PD/root/overlay" 2>/dev/null
	is "$(mounts_under "$PD")$(mounts_under "$PRUN")" "" "podman: no mounts left under its storage"
	[ -z "$(job_pids 1000)" ]; ok $? "podman: no process of its containers left"
	is "$(ls -A /run/warren-oci 2>/dev/null)" "" "podman: nothing of its containers is left under warren-runc's root"
	rm -rf "$PD" "$PRUN"
	[ "$had_run_oci" = 1 ] || rmdir /run/warren-oci 2>/dev/null
fi

# ---- containerd's runc shim (io.containerd.runc.v2) with BinaryName warren-runc, through ctr
if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then
	skip 13 "containerd or ctr is not installed"
else
	CD=$T/ctd
	mkdir -p "$CD"
	had_run_containerd=0
	[ -e /run/containerd ] && had_run_containerd=1
	NS=warren-oci-t$$
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
	# the shim and warren-runc inherit containerd's environment: the runs' records go to $STATE
	WARREN_STATE=$STATE containerd --config "$CD/config.toml" >"$CD/containerd.log" 2>&1 &
	CTD_PID=$!
	X=(ctr -a "$CD/c.sock" -n "$NS")
	for _ in $(seq 100); do "${X[@]}" version >/dev/null 2>&1 && break; sleep 0.1; done
	"$PY" "$REPO/tests/docker-archive.py" "$BB" "$CD/bb.tar" docker.io/library/warren-bb:test
	bounded "${X[@]}" images import "$CD/bb.tar"
	is "$RC" 0 "ctr images import of a docker-archive (no registry)"
	R=(--runtime io.containerd.runc.v2 --runc-binary "$RUNC")
	bounded "${X[@]}" run --rm "${R[@]}" docker.io/library/warren-bb:test t-exit sh -c 'echo ctr-$(id -u); cat /proc/1/cmdline | tr "\0" " "; exit 4'
	is "$RC" 4 "ctr run: the container's exit code"
	line_like "$OUT" '^ctr-0$' "ctr run: its output"
	like "$OUT" 'warren' "ctr run: pid 1 of the container is warren's init (a cell)"
	run=$(ls -t "$STATE/runs" | head -1)
	is "$(jget "$STATE/runs/$run/result.json" 'd["exit_code"], d["name"]')" '[4, "t-exit"]' "containerd: the run is recorded in warren's state, named after the container"
	nothing_left "$STATE/runs/$run" "containerd: nothing of the cell is left"
	bounded "${X[@]}" run -d "${R[@]}" docker.io/library/warren-bb:test t-sleep sleep 1000
	bounded "${X[@]}" task ls
	like "$OUT" 't-sleep +[0-9]+ +RUNNING' "ctr task ls: the container runs"
	bounded "${X[@]}" task exec --exec-id e1 t-sleep sh -c 'echo in-exec; exit 3'
	is "$RC:$OUT" "3:in-exec" "ctr task exec: a process in the running container, its output and exit code"
	# ctr -t wants a terminal of its own: script(1) gives it one; the process stays a second
	# (one that exits at once may lose its output with its pty before ctr copies it: seen under
	# load, ctr then failing "resize pty: cannot resize a stopped container")
	bounded script -qec "${X[*]} task exec -t --exec-id e2 t-sleep sh -c 'tty; sleep 1; exit 5'" /dev/null
	like "$RC:$OUT" '^5:/dev/pts/[0-9]+' "ctr task exec -t: the process's terminal came over the console socket"
	bounded "${X[@]}" task kill -s SIGTERM t-sleep
	for _ in $(seq 100); do "${X[@]}" task ls 2>/dev/null | grep -q 't-sleep.*STOPPED' && break; sleep 0.1; done
	bounded "${X[@]}" task ls
	like "$OUT" 't-sleep +[0-9]+ +STOPPED' "ctr task kill -s SIGTERM: the container stops"
	bounded "${X[@]}" task delete t-sleep
	like "$RC:$ERR" '^0:.*(143|exit)|^0:$' "ctr task delete: exit status 143 (SIGTERM) reported"
	bounded "${X[@]}" containers rm t-sleep
	[ -z "$(job_pids 1000)" ]; ok $? "containerd: no process of its containers left"
	"${X[@]}" images rm docker.io/library/warren-bb:test >/dev/null 2>&1
	kill "$CTD_PID"
	wait "$CTD_PID" 2>/dev/null
	is "$(mounts_under "$CD")" "" "containerd: no mounts left under its root and state"
	rm -rf "/run/containerd/runc/$NS" "/run/containerd/fifo" "$CD"
	[ "$had_run_containerd" = 1 ] || rm -rf /run/containerd
fi
