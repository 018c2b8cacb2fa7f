#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vm-jobs.t - what the vm driver carries beyond a single command that the shared contract list
# (tests/contract.sh, whose job case runs under both drivers) does not check: a terminal (the
# job's controlling tty is the guest's console, sized as the caller's and resized with it, its
# stdin the caller's; a redirected stderr apart), and binds of files (read-only and
# read-write; qemu's share holds the file alone, not its siblings), as root and rootless.
# A job's executor carried over the VM's wall is contract.t's (its job case); here a job stopped
# by its own wall clock: every process of the guest gets the signal (the step's and the
# service's traps run) and the record is the container's for the same job file.
#
# 5 boots: the terminal (root), the binds of files (root, rootless), the job stopped (root),
# the output at the end (root).
. "$(dirname "$0")/../lib.sh"

T_TIMEOUT=180

command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed (qemu-system-x86)"
ls /boot/vmlinuz-* >/dev/null 2>&1 || skip_all "no /boot/vmlinuz-* (linux-image-amd64)"
[ -x "$(dirname "$WARREN")/warren-guest-init" ] || bail_out "no warren-guest-init beside $WARREN: build it with make"
command -v script >/dev/null || bail_out "no script(1) (bsdutils)"

plan 26

host_tmp_marker

# ---- a terminal: script(1) gives warren one (33 rows, 91 columns, a line typed in); once the
# job runs, the caller's terminal is resized to 20x50 from outside (warren gets SIGWINCH); the
# job's stderr goes to the file the caller redirected it to; its exit code passes through
use_mode root
M="[tty]"
E=$TEST_SCRATCH/tty-err.txt
T=$TEST_SCRATCH/tty-out.txt
rm -f "$WORK/started"
job='tty; stty size; echo e >&2; test -t 2 || echo stderr-not-a-tty; touch '"$WORK"'/started
i=0; while [ "$(stty size)" = "33 91" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
stty size; read line; echo "got $line"; exit 4'
cmd=$(printf '%q ' "$WARREN" run --state "$STATE" --work "$WORK" --driver vm -- sh -c "$job")
resize='t=$(tty); (i=0; while [ ! -e '"$WORK"'/started ] && [ $i -lt 1500 ]; do sleep 0.1; i=$((i + 1)); done
	stty -F "$t" rows 20 cols 50) &'
timeout -k 5 "$T_TIMEOUT" script -qec "stty rows 33 cols 91; $resize $cmd 2>$E" /dev/null <<<"typed-line" >"$T" 2>&1
RC=$?
OUT=$(tr -d '\r' <"$T" | sed 's/\^@//g') # script(1) shows a NUL it gets as ^@
rd=$(last_rundir)
is "$RC" 4 "$M the job's exit code 4 passes through" || diag "$OUT"
line_like "$OUT" '^/dev/hvc1$' "$M the job's stdin and stdout are a terminal (the guest's console, /dev/hvc1)"
line_like "$OUT" '^33 91$' "$M the terminal has the caller's size (33 rows, 91 columns)"
line_like "$OUT" '^20 50$' "$M a resize of the caller's terminal reaches the job's"
line_like "$OUT" '^got typed-line$' "$M a line typed in the caller's terminal reaches the job's stdin"
line_like "$OUT" '^stderr-not-a-tty$' "$M a stderr the caller redirected is not the terminal"
is "$(cat "$E")" e "$M ... it lands in the caller's file"
nothing_left "$rd" "$M nothing of the run is left"
rm -f "$E" "$T" "$WORK/started"

# ---- binds of files: one read-only, one read-write, each beside a sibling the job must not
# reach; while the job runs, qemu's share of each (what a guest that took over its kernel could
# ask for) holds the file alone
for mode in root user; do
	use_mode "$mode"
	M="[file binds $mode]"
	d=$(mktemp -d -p "$TEST_SCRATCH")
	chmod 755 "$d"
	echo ro-content >"$d/ro.txt"
	echo rw-content >"$d/rw.txt"
	echo sibling >"$d/sibling"
	chmod 644 "$d/ro.txt" "$d/rw.txt"
	chmod 666 "$d/sibling"
	# root's file as root (qemu writes it through an idmapped copy, as a container's job), the
	# caller's rootless
	[ "$mode" = user ] && chown "$HOST_JOB_UID" "$d/rw.txt"
	rm -f "$WORK/go"
	wr_bg run --work "$WORK" --driver vm --env WORKTREE="$WORK" --ro-bind "$d/ro.txt:/etc/warren-ro.txt" --bind "$d/rw.txt:/opt/new/rw.txt" -- sh -c '
		cat /etc/warren-ro.txt; (echo x >>/etc/warren-ro.txt) 2>/dev/null || echo ro-refused
		cat /opt/new/rw.txt; echo written >>/opt/new/rw.txt && echo rw-written
		echo "beside $(ls -A /opt/new | tr "\n" " ")"; echo ready
		i=0; while ! test -e "$WORKTREE/go" && [ $i -lt 1500 ]; do sleep 0.1; i=$((i + 1)); done'
	pid=$BG_PID
	wait_for 150 grep -qs '^ready$' "$BG_OUT"
	rd=$(last_rundir)
	q=$(procs_matching "$rd" | while read -r p; do [[ $(readlink "/proc/$p/exe") == *qemu-system* ]] && echo "$p"; done | head -n 1)
	# (qemu's -fsdev path of each: /proc/self/fd/N, its descriptor of the share)
	shares=$(for b in bind0 bind1; do
		fd=$(tr '\0' '\n' <"/proc/$q/cmdline" | sed -n "s|^local,id=$b,path=/proc/self/fd/\([0-9]*\),.*|\1|p")
		ls -A "/proc/$q/fd/${fd:-none}/" 2>&1
	done | tr '\n' ' ')
	touch "$WORK/go"
	wait_bg "$pid" 150
	mapfile -t L <"$BG_OUT"
	is "$RC" 0 "$M the run exits 0" || diag "$(cat "$BG_ERR")"
	is "${L[*]}" "ro-content ro-refused rw-content rw-written beside rw.txt  ready" \
		"$M --ro-bind of a file: readable, refused a write; --bind of a file: written; nothing beside it"
	is "$(cat "$d/rw.txt")" "rw-content"$'\n'"written" "$M what the job wrote in the bound file is on the host"
	is "$shares" "file file " "$M qemu's shares hold the bound files alone (no sibling to reach)"
	nothing_left "$rd" "$M nothing of the run is left"
	rm -rf "$d" "$WORK/go"
done

# ---- a job stopped by its own timeout: the same job file (but for its driver: line) under
# both drivers; the stop reaches the running step and the service; the same record
use_mode root
M="[job timeout]"
declare -A SUM RCS
for driver in container vm; do
	jf=$(mktemp -p "$TEST_SCRATCH" stop-XXXXXX.yaml)
	cat >"$jf" <<-EOF
	name: stop
	driver: $driver
	timeout: 3s
	services:
	  bg:
	    run: trap 'echo svc-term; exit 0' TERM; while :; do sleep 0.1; done
	steps:
	  - name: long
	    run: trap 'echo step-term; exit 7' TERM; sleep 60 & wait
	  - name: after
	    if: always()
	    run: echo after
	EOF
	chmod 644 "$jf"
	bounded "$WARREN" job run "$jf" --state "$STATE" --work "$WORK"
	rd=$(last_rundir)
	RCS[$driver]=$RC
	SUM[$driver]=$(jget "$rd/result.json" 'd["status"] + " " + str(d["exit_code"]) + " " + d["cause"]["limit"] + " " + d["cause"]["value"] + " | " + " ".join(s["name"] + ":" + s["status"] + ":" + str(s["exit_code"]) for s in d["steps"]) + " | " + " ".join(s["name"] + ":" + s["status"] + ":" + str(s["exit_code"]) for s in d["services"])')
	rm -f "$jf"
done
is "${RCS[container]} ${RCS[vm]}" "124 124" "$M the job's timeout stops it under both drivers: 124"
is "${SUM[vm]}" "limit 124 time 3s | long:limit:7 after:skipped:None | bg:stopped:0" "$M the VM's record: the cause, the step's and the service's ends"
is "${SUM[vm]}" "${SUM[container]}" "$M the same record as the container's"
# (the service may be told twice, by the run's stop and by the executor's end of its services:
# its trap may run twice; once is what is asked)
is "$(cat "$rd"/log/1-long.log; grep -h svc-term "$rd/log/service-bg.log" | sort -u)" "step-term"$'\n'"svc-term" \
	"$M the stop reached the running step and the service in the guest (their traps ran)"
nothing_left "$rd" "$M nothing of the VM's job is left"

# ---- a step's output at its very end, and what the guest sent before qemu's end: a step's
# 2 MiB written right before it ends are all in its log; then, with the runner stopped (its
# pipe full, the relay blocked on it, the guest blocked behind), qemu is killed: what the
# relay holds of the guest's output (more than a pipe's worth: the port's buffers) reaches the
# log, the runner reading its pipe while it waits for the relay's end (not the relay killed 2 s
# later with it unread, the log short of it).
use_mode root
M="[job output at the end]"
jf=$(mktemp -p "$TEST_SCRATCH" out-XXXXXX.yaml)
cat >"$jf" <<-'EOF2'
name: out
driver: vm
steps:
  - name: end
    run: head -c 2097152 /dev/zero | tr '\0' x
  - name: cut
    run: echo ready; while ! test -e go; do sleep 0.1; done; head -c 2097152 /dev/zero | tr '\0' x; sleep 100
EOF2
chmod 644 "$jf"
rm -f "$WORK/go"
start_bg "${RUNNER[@]}" env --default-signal=INT "$WARREN" job run "$jf" --state "$STATE" --work "$WORK"
pid=$BG_PID
wait_for 150 grep -qs '^ready$' "$STATE"/runs/run_*/log/2-cut.log
rd=$(last_rundir)
q=$(procs_matching "$rd" | while read -r p; do [[ $(readlink "/proc/$p/exe") == *qemu-system* ]] && echo "$p"; done | head -n 1)
runner=$(awk '{print $4}' "/proc/$q/stat")
kill -STOP "$runner"
touch "$WORK/go"
sleep 4 # the step writes; the runner's pipe, the relay and the port fill
before=$(stat -c %s "$rd/log/2-cut.log")
kill -KILL "$q"
wait_for 10 test "$(awk '{print $3}' "/proc/$q/stat" 2>/dev/null)" = Z
sleep 1 # all of qemu's threads gone: its pidfd (the cell's end) is ready with the pipe
kill -CONT "$runner"
wait_bg "$pid" 60
is "$(stat -c %s "$rd/log/1-end.log")" 2097152 "$M a step's 2 MiB written at its very end are all in its log"
after=$(stat -c %s "$rd/log/2-cut.log")
ok "$((after - before > 3 * 65536 ? 0 : 1))" "$M what the relay held when qemu ended reaches the log (more than 3 pipes' worth: $((after - before)) bytes)"
rm -f "$jf" "$WORK/go"
nothing_left "$rd" "$M nothing of the VM's job is left"
