#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# session-files.t - issue 32, item 3: a live session's files, read, written and listed as the
# run user from inside the cell. Per mode (root, the unprivileged user), with warren files over
# the run's own socket: a round trip of every byte value (put, get, the cell sees it, owned by
# the run user), a larger one, --mode and --parents, ls, /tmp and the home; refused with one
# line: a path outside the cell's files (naming where files may be), a '..', a symbolic link in
# the worktree to /etc/shadow or climbing to the host's /etc (and no write through a link: the
# host's file unchanged), a link the job plants in /tmp, a file the run user cannot read, a FIFO
# (answered at once, not held), a file over 64 MiB, one not there, another user (the session
# itself refuses a peer that is neither owner nor root), a run that is not a session, an ended
# one; nothing left. Over the API of a warren serve of the mode's user: GET (bytes intact), PUT,
# ?list=1, 403 naming the places, 404, 400 for a FIFO, 413 over 64 MiB (a file, a body), 411
# without a length, --via, 409 for a run that is not a session and for an ended one.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

# Tests: per mode 34 over the socket and 15 over the API.
plan $(((34 + 15) * 2))

# job_file NAME: $WORK/NAME.yaml from stdin; its path in JF.
job_file() {
	JF=$WORK/$1.yaml
	cat >"$JF"
	chmod 644 "$JF"
}
new_rundir() { local l; l=$(last_rundir); [ -n "$l" ] && [ "$l" != "$1" ]; }
# session_bg FILE DIR: warren job run FILE on the worktree DIR in the background; waits for the
# session's socket (RD, ID). 1 when it never came.
session_bg() {
	local before
	RD=$STATE/runs/none ID=none
	before=$(last_rundir)
	start_bg "${RUNNER[@]}" env --default-signal=INT "$WARREN" job run "$1" --state "$STATE" --work "$2"
	JOB_PID=$BG_PID
	wait_for 30 new_rundir "$before" || return 1
	RD=$(last_rundir); ID=$(basename "$RD")
	wait_for 30 test -S "$RD/session.sock"
}
# fput IN ARGS...: warren files put --state $STATE ARGS... with IN as its standard input (RC ERR).
fput() {
	local in=$1; shift
	RC=0
	timeout -k 5 "$T_TIMEOUT" "${RUNNER[@]}" "$WARREN" files put --state "$STATE" "$@" <"$in" >/dev/null 2>"$TEST_SCRATCH/.f.err" || RC=$?
	ERR=$(cat "$TEST_SCRATCH/.f.err")
}
# fget OUT ARGS...: warren files get --state $STATE ARGS... into the file OUT (RC ERR).
fget() {
	local out=$1; shift
	RC=0
	timeout -k 5 "$T_TIMEOUT" "${RUNNER[@]}" "$WARREN" files get --state "$STATE" "$@" </dev/null >"$out" 2>"$TEST_SCRATCH/.f.err" || RC=$?
	ERR=$(cat "$TEST_SCRATCH/.f.err")
}
# peer_read_as_nobody RUNDIR: a read request on RUNDIR's session socket as nobody (through a
# descriptor of the directory opened before); prints the answer's line.
peer_read_as_nobody() {
	"$PY" - "$1" <<'PYEOF'
import os, socket, sys
d = os.open(sys.argv[1], os.O_PATH)
os.setgroups([]); os.setgid(65534); os.setuid(65534)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect("/proc/self/fd/%d/session.sock" % d)
try:
    s.sendall(b'{"op":"read","path":"bin"}\n')
except OSError:
    pass
print(s.makefile().readline().strip())
PYEOF
}

# every byte value, NULs and a last line without its newline
"$PY" -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 64 + b"\0\0\nend")' >"$TEST_SCRATCH/bin"
head -c $((3 << 20)) /dev/urandom >"$TEST_SCRATCH/big"
head -c $(((64 << 20) + 1)) /dev/zero >"$TEST_SCRATCH/over"
: >"$TEST_SCRATCH/empty"
chmod 644 "$TEST_SCRATCH"/{bin,big,over,empty}
shadow_sum=$(sha256sum /etc/shadow)

for mode in root user; do
	use_mode "$mode"
	m="[$mode]"
	FW=$WORK/fw
	mkdir_for_mode "$FW"
	mkdir_for_mode "$FW/sub"
	job_file files <<'EOF'
session: { idle: 2m, max: 10m }
EOF
	session_bg "$JF" "$FW"; ok $? "$m a session is ready"

	# ---- round trips
	fput "$TEST_SCRATCH/bin" "$ID" bin
	is "$RC|$ERR" "0|" "$m files put writes standard input's bytes to a file of the worktree"
	fget "$TEST_SCRATCH/bin.back" "$ID" bin
	cmp -s "$TEST_SCRATCH/bin" "$TEST_SCRATCH/bin.back"; ok $? "$m files get gives back every byte value intact"
	wr exec "$ID" -- sh -c 'sha256sum < bin | cut -c1-64; stat -c %u bin'
	is "$OUT" "$(sha256sum <"$TEST_SCRATCH/bin" | cut -c1-64)"$'\n'"$JOB_UID" "$m the cell sees those bytes, in a file of the run user's"
	fput "$TEST_SCRATCH/big" "$ID" "$FW/sub/big"
	fget "$TEST_SCRATCH/big.back" "$ID" sub/big
	cmp -s "$TEST_SCRATCH/big" "$TEST_SCRATCH/big.back"; ok $? "$m 3 MiB go in and out (an absolute path, a relative one)"
	fput "$TEST_SCRATCH/empty" "$ID" bin
	wr exec "$ID" -- stat -c %s bin
	is "$OUT" 0 "$m a put truncates the file that was there"
	fput "$TEST_SCRATCH/bin" "$ID" --parents --mode 0750 deep/er/x.sh
	wr exec "$ID" -- stat -c %a deep/er/x.sh
	is "$RC|$OUT" "0|750" "$m --parents makes the directories above it, --mode sets its mode"
	fput "$TEST_SCRATCH/bin" "$ID" no/such/dir/x
	is "$RC" 125 "$m without --parents a missing directory is refused ..."
	like "$ERR" "its directory does not exist in the cell" "$m ... saying so"
	wr files ls "$ID" --json
	is "$(jget <(printf '%s' "$OUT") '" ".join(e["name"] + ":" + e["type"] for e in d["entries"])')" \
		"bin:file deep:dir sub:dir" "$m files ls lists the worktree (name, type) by name" || diag "$OUT"
	wr files ls "$ID" sub
	like "$OUT" "^file +0[0-7]{3} +3145728 [0-9T:.-]+Z +big$" "$m ... with mode, size and time"
	wr exec "$ID" -- sh -c 'echo $HOME'
	home=$OUT
	fput "$TEST_SCRATCH/bin" "$ID" /tmp/t
	fput "$TEST_SCRATCH/bin" "$ID" "$home/h"
	wr exec "$ID" -- sh -c 'cmp "$TMPDIR/t" deep/er/x.sh && cmp "$HOME/h" deep/er/x.sh && echo same'
	is "$OUT" same "$m the cell's /tmp and the run's home take files too"

	# ---- refused, each with one line
	fget "$TEST_SCRATCH/o" "$ID" /etc/passwd
	is "$RC|$(wc -c <"$TEST_SCRATCH/o")" "125|0" "$m a path outside the cell's files is refused ..."
	like "$ERR" "^warren: run $ID: /etc/passwd is not among the cell's files: files may be under $FW \(the worktree\), /tmp \(\\\$TMPDIR\) and $home \(the home\)$" \
		"$m ... with one line naming where files may be"
	fget "$TEST_SCRATCH/o" "$ID" /tmp/../etc/passwd
	like "$RC|$ERR" "^125\|warren: run $ID: /tmp/../etc/passwd has a '..' part" "$m a path with '..' is refused"
	ln -s /etc/shadow "$FW/shadow"
	ln -s ../../../../../../../../../../etc/passwd "$FW/sub/up"
	ln -s sub/big "$FW/inside"
	fget "$TEST_SCRATCH/o" "$ID" shadow
	is "$RC|$(wc -c <"$TEST_SCRATCH/o")" "125|0" "$m a link in the worktree to /etc/shadow is refused ..."
	like "$ERR" "shadow: a symbolic link on its way leads out of the cell's files" "$m ... naming why"
	fget "$TEST_SCRATCH/o" "$ID" sub/up
	like "$RC|$ERR" "^125\|.*sub/up: a symbolic link on its way leads out" "$m a relative link climbing to the host's /etc is refused"
	fget "$TEST_SCRATCH/o" "$ID" inside
	cmp -s "$TEST_SCRATCH/big" "$TEST_SCRATCH/o"; ok $? "$m a link that stays in the worktree is followed"
	fput "$TEST_SCRATCH/bin" "$ID" shadow
	like "$RC|$ERR" "^125\|.*shadow is a symbolic link: no file is written through a link" "$m no write goes through a link ..."
	is "$(sha256sum /etc/shadow)" "$shadow_sum" "$m ... and the host's /etc/shadow is as it was"
	wr exec "$ID" -- ln -s /etc/hostname /tmp/planted
	fget "$TEST_SCRATCH/o" "$ID" /tmp/planted
	like "$RC|$ERR" "^125\|.*leads out of the cell's files" "$m a link the job planted in /tmp to the cell's /etc is refused"
	echo secret >"$FW/private"
	chown 65534:65534 "$FW/private"
	chmod 600 "$FW/private"
	fget "$TEST_SCRATCH/o" "$ID" private
	like "$RC|$ERR" "^125\|.*private: permission denied to the run user in the cell$" "$m a file the run user cannot read is refused"
	mkfifo "$FW/fifo"
	[ "$mode" = user ] && chown "$TEST_USER_UID" "$FW/fifo"
	T_TIMEOUT=10 fget "$TEST_SCRATCH/o" "$ID" fifo
	like "$RC|$ERR" "^125\|.*fifo is not a regular file" "$m a FIFO is refused at once, not read"
	T_TIMEOUT=10 fput "$TEST_SCRATCH/bin" "$ID" fifo
	like "$RC|$ERR" "^125\|.*fifo is not a regular file" "$m ... nor written"
	truncate -s 65M "$FW/huge"
	fget "$TEST_SCRATCH/o" "$ID" huge
	like "$RC|$ERR" "^125\|.*huge is over 64 MiB, the most a read takes" "$m a file over 64 MiB is not read"
	fput "$TEST_SCRATCH/over" "$ID" over
	like "$RC|$ERR" "^125\|warren: standard input is over 64 MiB" "$m nor is one written"
	fget "$TEST_SCRATCH/o" "$ID" nope
	like "$RC|$ERR" "^125\|.*nope: no such file in the cell$" "$m a file that is not there: one line"
	RC=0; ERR=$(timeout 20 setpriv --reuid=65534 --regid=65534 --clear-groups env -i HOME=/nonexistent "$WARREN" files get --state "$STATE" "$ID" bin 2>&1 >/dev/null) || RC=$?
	is "$RC" 125 "$m another user's get is refused ..."
	one_warren_line "$m ... with one line"
	rd_mode=$(stat -c %a "$RD")
	chmod 0666 "$RD/session.sock"; chmod 0711 "$RD"
	like "$(peer_read_as_nobody "$RD" 2>&1)" '"status": ?403' "$m the session refuses a read by a peer that is neither its owner nor root"
	chmod "$rd_mode" "$RD"
	chmod 0600 "$RD/session.sock"

	wr end "$ID"
	wait_bg "$JOB_PID"
	nothing_left "$RD" "$m nothing is left after the session's end"
	fget "$TEST_SCRATCH/o" "$ID" bin
	like "$RC|$ERR" "^125\|warren: run $ID has ended; its files need a live session" "$m files of an ended run: one line"
	wr_bg run --work "$FW" -- sleep 30
	plain=$BG_PID
	wait_for 20 new_rundir "$RD"
	fget "$TEST_SCRATCH/o" "$(basename "$(last_rundir)")" bin
	like "$RC|$ERR" "^125\|.*is not a session \(session: in its job\)" "$m files of a run that is no session: one line"
	wr kill "$(basename "$(last_rundir)")"
	wait_bg "$plain"

	# ---- over the API of a warren serve (as the mode's user)
	SOCK=$(dirname "$STATE")/api.sock
	start_server 15 --listen "unix:$SOCK" --slots 2; ok $? "$m warren serve answers"
	api POST '/v1/runs?wait=ready' "{\"session\": {\"idle\": \"1m\"}, \"worktree\": $(jstr "$FW")}"
	ID=$(jbody 'd["id"]'); RD=$STATE/runs/$ID
	code=$(api_curl 30 -o /dev/null -w '%{http_code}' -X PUT --data-binary @"$TEST_SCRATCH/bin" "http://warren/v1/runs/$ID/files?path=api/bin&parents=1&mode=0640")
	is "$code" 200 "$m PUT .../files?path=P writes the body"
	api_curl 30 -o "$TEST_SCRATCH/api.back" "http://warren/v1/runs/$ID/files?path=$FW/api/bin"
	cmp -s "$TEST_SCRATCH/bin" "$TEST_SCRATCH/api.back"; ok $? "$m GET .../files?path=P gives it back intact"
	api GET "/v1/runs/$ID/files?path=api&list=1"
	is "$CODE $(jbody '[(e["name"], e["mode"]) for e in d["entries"]]')" '200 [["bin", "0640"]]' "$m ?list=1 lists a directory"
	api GET "/v1/runs/$ID/files?path=/etc/passwd"
	is "$CODE" 403 "$m a path outside the cell's files is 403 ..."
	like "$(jbody 'd["error"]')" "files may be under $FW \(the worktree\), /tmp" "$m ... naming where files may be"
	api GET "/v1/runs/$ID/files?path=nope"
	is "$CODE" 404 "$m a file not there is 404"
	api GET "/v1/runs/$ID/files?path=fifo"
	is "$CODE" 400 "$m a FIFO is 400, at once"
	api GET "/v1/runs/$ID/files?path=huge"
	is "$CODE" 413 "$m a file over 64 MiB is 413"
	code=$(api_curl 60 -o /dev/null -w '%{http_code}' -X PUT --data-binary @"$TEST_SCRATCH/over" "http://warren/v1/runs/$ID/files?path=over")
	is "$code" 413 "$m a body over 64 MiB is 413"
	code=$(api_curl 30 -o /dev/null -w '%{http_code}' -X PUT -H 'Transfer-Encoding: chunked' --data-binary @"$TEST_SCRATCH/bin" "http://warren/v1/runs/$ID/files?path=chunked")
	is "$code" 411 "$m a body of unsaid length is 411"
	RC=0
	timeout 30 "${RUNNER[@]}" "$WARREN" files get --via "unix:$SOCK" "$ID" api/bin >"$TEST_SCRATCH/via.back" || RC=$?
	cmp -s "$TEST_SCRATCH/bin" "$TEST_SCRATCH/via.back"
	is "$RC|$?" "0|0" "$m warren files get --via reads through the server"
	submit "{\"command\": [\"sleep\", \"30\"], \"worktree\": $(jstr "$FW")}"
	plain=$ID
	wait_for 20 run_state_is "$plain" running
	api GET "/v1/runs/$plain/files?path=bin"
	is "$CODE $(jbody 'd["error"]')" "409 $plain takes no requests: it is not a session, or its session is not ready yet" "$m a run that is no session is 409, saying so"
	api POST "/v1/runs/$plain/kill"
	ID=$(basename "$RD")
	api POST "/v1/runs/$ID/end"
	wait_for 30 run_ended "$ID"
	api GET "/v1/runs/$ID/files?path=api/bin"
	is "$CODE" 409 "$m files of an ended run are 409"
	stop_server 30
	nothing_left "$RD" "$m nothing is left of the API's session"
done
