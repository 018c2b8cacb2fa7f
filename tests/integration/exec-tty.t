#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec-tty.t - issue 32 item 2's warren exec -t, per mode (root, the unprivileged user), driven
# from a real terminal (python3's pty module): the command's terminal is one of the cell's
# (tty answers /dev/pts/N), it has the caller's size at the start and after a resize
# (SIGWINCH), input reaches it, its status passes, the caller's terminal is restored; an
# exec's time limit stops a -t exec and names itself; warren exec -t ended by SIGTERM or SIGHUP
# restores its terminal (stty -g as before) and ends by the signal, and its command is hung up
# (as it is when warren exec -t is killed with SIGKILL); the record lists the execs; -t without
# a terminal on stdin and -t through --via are refused in one line; nothing is left.
. "$(dirname "$0")/../lib.sh"

# Tests: per mode 18.
plan $((18 * 2))

# pty_drive ROWS COLS CMD... < SCRIPT: CMD on a new terminal of ROWS x COLS; the script's
# lines "expect ERE" (wait at most 20s for the output so far to match), "send TEXT" (typed,
# \r for Enter), "resize R C". Prints what the terminal showed, then "EXIT n" and whether the
# terminal was left canonical with echo ("RESTORED yes|no").
pty_drive() {
	local rows=$1 cols=$2; shift 2
	timeout -k 5 "$T_TIMEOUT" "$PY" -c '
import os, pty, re, select, struct, sys, fcntl, termios, time
rows, cols, cmd = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
script = [l.rstrip("\n").split(" ", 1) for l in sys.stdin if l.strip()]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
out = b""
def pump(t):
    global out
    r, _, _ = select.select([fd], [], [], t)
    if r:
        try:
            b = os.read(fd, 65536)
        except OSError:
            return False
        out += b
        return bool(b)
    return True
for op, arg in script:
    if op == "expect":
        end = time.time() + 20
        while not re.search(arg.encode(), out) and time.time() < end and pump(0.1):
            pass
    elif op == "send":
        os.write(fd, arg.encode().decode("unicode_escape").encode())
    elif op == "resize":
        r, c = map(int, arg.split())
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", r, c, 0, 0))
        os.kill(pid, 28)  # SIGWINCH, as the terminal would send its foreground
end = time.time() + 30
while time.time() < end:
    done, st = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    pump(0.1)
else:
    os.kill(pid, 9); done, st = os.waitpid(pid, 0)
try:
    a = termios.tcgetattr(fd)
    restored = "yes" if (a[3] & termios.ICANON) and (a[3] & termios.ECHO) else "no"
except termios.error:
    restored = "unknown"
while pump(0.05):
    pass
sys.stdout.write(out.decode("utf-8", "replace"))
print("\nEXIT %d" % os.waitstatus_to_exitcode(st))
print("RESTORED " + restored)
' "$rows" "$cols" "$@"
}

# pty_signal SIG CMD...: CMD on a new terminal (its controlling terminal); once CMD made it raw,
# signal SIG to CMD. Prints "RAW yes|no" (it was made raw), "RESTORED yes|no" (stty -g after it
# ended as before it started) and "RC n" (its status as python gives it: -N killed by signal N).
pty_signal() {
	timeout -k 5 "$T_TIMEOUT" "$PY" -c '
import fcntl, os, select, subprocess, sys, termios, time
sig, cmd = int(sys.argv[1]), sys.argv[2:]
m, sl = os.openpty()
def stty():
    return subprocess.run(["stty", "-g"], stdin=sl, capture_output=True, text=True).stdout.strip()
before = stty()
p = subprocess.Popen(cmd, stdin=sl, stdout=sl, stderr=sl, start_new_session=True,
                     preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
end = time.time() + 20
while time.time() < end and termios.tcgetattr(sl)[3] & termios.ICANON:
    if select.select([m], [], [], 0.1)[0]:
        os.read(m, 65536)
raw = stty() != before
time.sleep(0.3)
p.send_signal(sig)
try:
    rc = p.wait(20)
except subprocess.TimeoutExpired:
    p.kill()
    rc = p.wait()
print("RAW", "yes" if raw else "no")
print("RESTORED", "yes" if stty() == before else "no")
print("RC", rc)
' "$@"
}

job_file() {
	JF=$WORK/$1.yaml
	cat >"$JF"
	chmod 644 "$JF"
}
new_rundir() { local l; l=$(last_rundir); [ -n "$l" ] && [ "$l" != "$1" ]; }
session_bg() {
	local before
	RD=$STATE/runs/none ID=none
	before=$(last_rundir)
	start_bg "${RUNNER[@]}" env --default-signal=INT "$WARREN" job run "$1" --state "$STATE" --work "$WORK"
	JOB_PID=$BG_PID
	wait_for 30 new_rundir "$before" || return 1
	RD=$(last_rundir); ID=$(basename "$RD")
	wait_for 30 test -S "$RD/session.sock"
}

for mode in root user; do
	use_mode "$mode"
	m="[$mode]"
	job_file tsess <<'EOF'
name: tsess
session: { idle: 2m, max: 5m }
EOF
	session_bg "$JF"
	ok $? "$m a session is up"
	X=("${RUNNER[@]}" "$WARREN" exec --state "$STATE" "$ID")

	T=$(pty_drive 33 101 "${X[@]}" -t -- sh -c 'tty; stty size; read x; echo "got $x"; exit 3' <<'EOF'
expect 33 101
send hello\r
expect got
EOF
)
	like "$T" $'/dev/pts/[0-9]+\r' "$m exec -t: the command's streams are a terminal of the cell's devpts"
	like "$T" $'\r\n33 101\r' "$m ... of the caller's terminal's size"
	like "$T" "got hello" "$m ... the caller's input reaches the command"
	like "$T" "EXIT 3" "$m ... and its exit status is warren exec's"
	like "$T" "RESTORED yes" "$m ... the caller's terminal is restored (canonical, echo) at the end"

	T=$(pty_drive 24 80 "${X[@]}" -t -- sh -c 'stty size; read x; stty size; ps -o tty= -p $$' <<'EOF'
expect 24 80
resize 40 120
send \r
expect 40 120
EOF
)
	like "$T" $'24 80\r\n.*40 120\r\n *pts/[0-9]+' "$m exec -t: a resize of the caller's terminal reaches the command's (SIGWINCH); it is its controlling terminal"

	T=$(pty_drive 24 80 "${X[@]}" -t --timeout 1s -- sleep 30 </dev/null)
	like "$T" "EXIT 124" "$m exec -t --timeout 1s: stopped, status 124"
	like "$T" "exec time limit 1s reached" "$m ... and the limit names itself"

	# warren exec -t ended by a signal: its terminal restored first; the command hung up
	a=$(uniq_arg)
	T=$(pty_signal 15 "${X[@]}" -t -- sleep "$a")
	is "$(echo $T)" "RAW yes RESTORED yes RC -15" "$m exec -t ended by SIGTERM: the terminal's settings (stty -g) are as before, and it ends by the signal"
	wait_for 5 job_gone "$a"; ok $? "$m ... and its command is hung up (SIGHUP: gone)"
	b=$(uniq_arg)
	T=$(pty_signal 1 "${X[@]}" -t -- sleep "$b")
	is "$(echo $T)" "RAW yes RESTORED yes RC -1" "$m exec -t ended by SIGHUP: its terminal restored too"
	c=$(uniq_arg)
	T=$(pty_signal 9 "${X[@]}" -t -- sleep "$c")
	wait_for 5 job_gone "$c"; ok $? "$m exec -t killed by SIGKILL: its command is hung up all the same (its terminal's master closed)" || diag "$T"

	wr exec "$ID" -t -- true
	is "$RC" 125 "$m exec -t without a terminal on stdin: 125"
	one_warren_line "$m ... one line saying so"

	wr exec --via "unix:$TEST_SCRATCH/none.sock" "$ID" -t -- true
	like "$ERR" "^warren: -t: a terminal does not pass through a server \(--via\)" "$m exec -t --via: refused in one line"

	wr end "$ID"
	wait_bg "$JOB_PID"
	is "$(jget "$RD/result.json" '" ".join("%s:%s" % (s["status"], s["exit_code"]) for s in d["steps"] if s.get("kind")=="exec")')" \
		"failed:3 ok:0 limit:124 failed:129 failed:129 failed:129" "$m the record lists the -t execs, their ends (129: hung up) and the limit"
	nothing_left "$RD" "$m nothing is left after the session's end"
done
