#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cell.t - the contract of a cell, seen from inside, as root and as an unprivileged user:
# /tmp 01777 and sticky, TMPDIR=/tmp whatever the caller says, temp files landing in the
# run's scratch, an unprivileged job without capabilities, hostname = run id, id/whoami,
# the host's /tmp invisible, the worktree writable, result.json and show.
. "$(dirname "$0")/../lib.sh"

# Tests per mode: root 62, user 61 (the owner of /tmp is checked in root mode only).
plan 123

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"

	# ---- /tmp: the run's own, mode 01777, sticky, empty, writable
	wrun -- stat -c '%a %A %u' /tmp
	is "$RC" 0 "$M stat /tmp in a cell exits 0"
	read -r tmode tsym towner <<<"$OUT"
	is "${tmode:-}" 1777 "$M /tmp is mode 1777 (stat -c %a)"
	like "${tsym:-}" '^drwxrwxrwt$' "$M /tmp is a sticky, world-writable directory (drwxrwxrwt)"
	if [ "$mode" = root ]; then
		is "${towner:-}" 0 "$M /tmp is owned by root of the cell"
	fi
	wrun -- sh -c 'ls -A /tmp; touch /tmp/mine /var/tmp/mine && echo wrote'
	is "$OUT" wrote "$M /tmp starts empty and the job can write /tmp and /var/tmp"

	# ---- TMPDIR=/tmp, last: neither the caller nor --env/--env-file/--pass-env wins
	wrun -- sh -c 'echo "$TMPDIR"'
	is "$OUT" /tmp "$M TMPDIR is /tmp"
	wr_env TMPDIR=/elsewhere -- run --work "$WORK" -- sh -c 'echo "$TMPDIR"'
	is "$OUT" /tmp "$M a caller's TMPDIR=/elsewhere does not win"
	wrun --env TMPDIR=/x -- sh -c 'echo "$TMPDIR"'
	is "$OUT" /tmp "$M --env TMPDIR=/x does not win"
	wr_env TMPDIR=/elsewhere -- run --work "$WORK" --pass-env TMPDIR -- sh -c 'echo "$TMPDIR"'
	is "$OUT" /tmp "$M --pass-env TMPDIR does not win"
	envfile=$TEST_SCRATCH/$mode.env
	printf 'TMPDIR=/y\nFROM_FILE=yes\n' >"$envfile"
	chmod 644 "$envfile"
	wrun --env-file "$envfile" -- sh -c 'echo "$TMPDIR $FROM_FILE"'
	is "$OUT" "/tmp yes" "$M --env-file sets variables but its TMPDIR does not win"
	wrun --env TMPDIR=/x -- sh -c 'env | grep -c "^TMPDIR="'
	is "$OUT" 1 "$M TMPDIR appears once in the environment"
	wr_env WARREN_TEST_LEAK=leaked -- run --work "$WORK" --env GIVEN=given -- \
		sh -c 'echo "${WARREN_TEST_LEAK-unset} $GIVEN"'
	is "$OUT" "unset given" "$M the caller's environment does not leak in; --env K=V does"
	wr_env WARREN_TEST_PASS=passed -- run --work "$WORK" --pass-env WARREN_TEST_PASS -- \
		sh -c 'echo "${WARREN_TEST_PASS-unset}"'
	is "$OUT" passed "$M --pass-env K passes the caller's K"

	# ---- temp files land in this run's scratch, writable by the run user (--keep to look)
	wrun --keep -- sh -c 'mktemp; python3 -c "import tempfile; print(tempfile.mkdtemp())"; mkdir -p "$TMPDIR/agent" && touch "$TMPDIR/agent/x" && echo agent-ok'
	is "$RC" 0 "$M mktemp, tempfile.mkdtemp and \$TMPDIR/agent/x work"
	mapfile -t lines <<<"$OUT"
	f1=${lines[0]:-} d1=${lines[1]:-}
	like "$f1" '^/tmp/tmp\.[A-Za-z0-9]+$' "$M mktemp makes a file in /tmp"
	like "$d1" '^/tmp/tmp[A-Za-z0-9_]+$' "$M python's tempfile.mkdtemp makes a directory in /tmp"
	is "${lines[2]:-}" agent-ok "$M an agent-style \$TMPDIR/agent/ directory works"
	rd=$(kept_rundir)
	like "$rd" "^$STATE/runs/$RUN_ID_RE\$" "$M --keep prints where the scratch is kept (<state>/runs/<id>)"
	rd=${rd:-$STATE/runs/none}
	[ -n "$f1" ] && [ -f "$rd/tmp/${f1#/tmp/}" ]
	ok $? "$M the mktemp file is in <rundir>/tmp on the host" || diag "$(ls -la "$rd/tmp" 2>&1)"
	[ -n "$d1" ] && [ -d "$rd/tmp/${d1#/tmp/}" ]
	ok $? "$M the tempfile.mkdtemp directory is in <rundir>/tmp on the host"
	[ -f "$rd/tmp/agent/x" ]
	ok $? "$M \$TMPDIR/agent/x is in <rundir>/tmp/agent/x on the host"
	is "$(stat -c %u "$rd/tmp/agent/x" 2>&1)" "$HOST_JOB_UID" "$M the agent's file is owned by the run user (host uid $HOST_JOB_UID)"
	is "$(stat -c %a "$rd/tmp" 2>&1)" 1777 "$M <rundir>/tmp is mode 1777 on the host"
	wr gc "$(basename "$rd")"
	is "$RC" 0 "$M warren gc <id> of the kept run exits 0"
	nothing_left "$rd" "$M after gc the kept run's scratch is gone, its record stays"

	# ---- the job is not root and has no capabilities; no_new_privs
	wrun -- sh -c 'id -u; grep -E "^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs):" /proc/self/status'
	is "$RC" 0 "$M id and /proc/self/status readable"
	uid=$(sed -n 1p <<<"$OUT")
	is "$uid" "$JOB_UID" "$M the job's uid is $JOB_UID"
	[[ $uid =~ ^[0-9]+$ ]] && [ "$uid" != 0 ]
	ok $? "$M the job is not root (id -u = '$uid')"
	for cap in CapEff CapPrm CapAmb CapInh; do
		v=$(awk -v k="$cap:" '$1 == k { print $2 }' <<<"$OUT")
		is "$v" 0000000000000000 "$M $cap is zero"
	done
	v=$(awk '$1 == "NoNewPrivs:" { print $2 }' <<<"$OUT")
	is "$v" 1 "$M no_new_privs is set"

	# ---- seen from the host, the job's process belongs to an unprivileged host uid
	s=$(uniq_arg)
	wr_bg run --work "$WORK" -- sleep "$s"
	bg=$BG_PID
	wait_for 15 job_alive "$s"
	jp=$(job_pids "$s" | head -1)
	is "$(stat -c %u "/proc/${jp:-none}" 2>&1)" "$HOST_JOB_UID" "$M on the host the job runs as uid $HOST_JOB_UID"
	kill -TERM "$bg" 2>/dev/null
	wait_bg "$bg" 20
	[ -n "$jp" ] && wait_for 10 job_gone "$s"
	ok $? "$M SIGTERM to warren ends the job" || diag "job pid: '$jp'"

	# ---- hostname = run id; id, whoami, HOME, USER
	wrun -- sh -c 'cat /proc/sys/kernel/hostname; uname -n'
	rd=$(last_rundir)
	id=$(basename "${rd:-none}")
	is "$(sed -n 1p <<<"$OUT")" "$id" "$M the hostname is the run id"
	is "$(sed -n 2p <<<"$OUT")" "$id" "$M uname -n is the run id"
	wrun -- sh -c 'id -un; whoami; id -gn; echo "$HOME"; echo "$USER"; test -d "$HOME" && test -w "$HOME" && stat -c %u "$HOME"'
	is "$RC" 0 "$M id -un, whoami, id -gn work and HOME is a writable directory"
	mapfile -t lines <<<"$OUT"
	is "${lines[0]:-}" "$JOB_USER" "$M id -un is $JOB_USER"
	is "${lines[1]:-}" "$JOB_USER" "$M whoami is $JOB_USER"
	like "${lines[2]:-}" '^[A-Za-z_][A-Za-z0-9_.-]*$' "$M id -gn names the group"
	is "${lines[3]:-}" "/home/$JOB_USER" "$M HOME is /home/$JOB_USER"
	is "${lines[4]:-}" "$JOB_USER" "$M USER is $JOB_USER"
	is "${lines[5]:-}" "$JOB_UID" "$M HOME is owned by the run user"

	# ---- the host's /tmp is not visible
	host_tmp_marker; marker=$MARKER
	wrun -- sh -c "test -e '$marker' && echo visible || echo absent; ls -A /tmp"
	is "$OUT" absent "$M the host's /tmp is not visible (a marker file there is absent, /tmp is empty)"

	# ---- network: its own namespace with only the loopback, up
	wrun -- sh -c 'awk "NR > 2 { print \$1 }" /proc/net/dev; ip -o link show lo | grep -q "[<,]UP[,>]" && echo up'
	is "$OUT" "lo:"$'\n'up "$M the cell's network has only the loopback, and it is up"

	# ---- the worktree: the cwd, writable, and what the job made there stays
	rm -rf "$WORK/made-by-job" "$WORK/sub"
	wrun -- sh -c 'pwd; echo hello > made-by-job && mkdir -p sub/dir && touch sub/dir/f && echo done'
	is "$OUT" "$WORK"$'\n'done "$M the worktree is the cwd and is writable by the job"
	is "$(cat "$WORK/made-by-job" 2>&1)" hello "$M a file the job wrote in the worktree exists afterwards"
	[ -f "$WORK/sub/dir/f" ]
	ok $? "$M a tree the job made in the worktree exists afterwards"
	# Without --work the worktree is the current directory.
	bounded "${RUNNER[@]}" sh -c 'cd "$0" && exec "$@"' "$WORK" "$WARREN" run --state "$STATE" -- pwd
	is "$OUT" "$WORK" "$M without --work the worktree is the current directory"

	# ---- the record: result.json, spec.json, show
	wrun -- sh -c 'exit 3'
	is "$RC" 3 "$M the job's exit code (3) passes through"
	rd=$(last_rundir)
	rd=${rd:-$STATE/runs/none}
	id=$(basename "$rd")
	rj=$rd/result.json
	is "$(jget "$rj" 'd["id"]')" "$id" "$M result.json: id is the run directory's name"
	is "$(jget "$rj" 'd["command"]')" '["sh", "-c", "exit 3"]' "$M result.json: command is the argv"
	is "$(jget "$rj" 'd["status"]')/$(jget "$rj" 'd["exit_code"]')" exited/3 "$M result.json: status exited, exit_code 3"
	is "$(jget "$rj" 'd["worktree"]')/$(jget "$rj" 'd["rootfs"]')" "$WORK/null" "$M result.json: worktree, rootfs null"
	is "$(jget "$rj" 'd["user"]["uid"]')" "$JOB_UID" "$M result.json: user.uid"
	rfc='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}(Z|[+-][0-9]{2}:[0-9]{2})$'
	like "$(jget "$rj" 'd["started_at"]')" "$rfc" "$M result.json: started_at is RFC 3339 with ms"
	like "$(jget "$rj" 'd["ended_at"]')" "$rfc" "$M result.json: ended_at is RFC 3339 with ms"
	[ -f "$rd/spec.json" ] && "$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$rd/spec.json"
	ok $? "$M spec.json is there and is JSON"
	wr show --json "$id"
	"$PY" -c 'import json,sys; sys.exit(json.loads(sys.argv[1]) != json.load(open(sys.argv[2])))' "$OUT" "$rj" 2>/dev/null
	ok $? "$M warren show --json <id> prints result.json" || diag "show said: $(_clip "$OUT") $ERR"
	wr show "${id:0:20}"
	[ "$RC" = 0 ] && [[ $OUT == *"$id"* ]]
	ok $? "$M warren show <unique prefix> shows the run" || diag "rc $RC: $OUT $ERR"
	nothing_left "$rd" "$M after a plain run nothing of its scratch, mounts or processes is left"
done
