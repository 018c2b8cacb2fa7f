#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# reclaim.t - after a run nothing of its scratch is left, even when the job made it hard:
# read-only trees, a tree deeper than PATH_MAX (300 levels of 20 characters), FIFOs, sockets, odd names, a directory
# with mode 000, hard and symbolic links, in /tmp, /var/tmp and $HOME. Checked once with
# --keep (the mess is really there on the host, then `warren gc` reclaims it) and once
# without. As root and as an unprivileged user.
. "$(dirname "$0")/../lib.sh"

# root 14 (with the files owned by other cell uids), user 12
plan 29

MESS='set -e
cd /tmp
mkdir -p ro/a/b/c && echo x > ro/a/b/c/f && ln ro/a/b/c/f hard && ln -s ro link-in && ln -s /etc/passwd link-out
chmod -R a-w ro
python3 -c "
import os
os.mkdir(\"deep\"); os.chdir(\"deep\")
for i in range(300):
    os.mkdir(\"d\" * 20); os.chdir(\"d\" * 20)
open(\"f\", \"w\").write(\"deep\")
os.chmod(\".\", 0o555); os.chmod(\"..\", 0o555)
"
mkfifo /tmp/fifo
python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.bind(\"/tmp/sock\")"
touch "$(printf "new\nline")" " lead" ./-dash "$(printf "\377\376")" "*" "sp ace"
mkdir many && (cd many && seq 1 2000 | xargs touch) && chmod 000 many
mkdir closed && touch closed/f && chmod 000 closed
echo v > /var/tmp/v && mkdir /var/tmp/ro && touch /var/tmp/ro/f && chmod a-w /var/tmp/ro
echo h > "$HOME/h" && mkdir -p "$HOME/.cache/agent/ro" && touch "$HOME/.cache/agent/ro/f" && chmod -R a-w "$HOME/.cache"
echo made'

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"

	# With --keep: see that the mess is on the host, then let gc reclaim it.
	wrun --keep -- sh -c "$MESS"
	is "$RC/$OUT" 0/made "$M the job makes read-only trees, a deep tree, FIFOs, sockets and odd names"
	rd=$(kept_rundir)
	rd=${rd:-$STATE/runs/none}
	[ -d "$rd/tmp/ro/a/b/c" ] && [ -p "$rd/tmp/fifo" ] && [ -S "$rd/tmp/sock" ] &&
		[ -d "$rd/tmp/deep/dddddddddddddddddddd" ] && [ -e "$rd/tmp/many" ] && [ -f "$rd/tmp/-dash" ] &&
		[ -e "$rd/tmp/closed" ] && [ -f "$rd/var-tmp/v" ] && [ -f "$rd/home/h" ]
	ok $? "$M with --keep the tree, FIFO, socket, deep and odd files are in <rundir>/{tmp,var-tmp,home}" ||
		diag "$(ls -la "$rd" "$rd/tmp" 2>&1)"
	wr gc "$(basename "$rd")"
	is "$RC" 0 "$M warren gc <id> exits 0"
	nothing_left "$rd" "$M gc leaves nothing of that scratch"

	# Without --keep: reclaimed at the end of the run.
	wrun -- sh -c "$MESS"
	is "$RC/$OUT" 0/made "$M the same mess again, without --keep"
	rd=$(last_rundir)
	nothing_left "${rd:-$STATE/runs/none}" "$M the run's scratch is gone when it ends"

	# The same on the host's disk (--scratch none: no tmpfs), removed by warren at the end.
	wrun --scratch none -- sh -c "$MESS"
	is "$RC/$OUT" 0/made "$M the same mess with --scratch none (on the host's disk)"
	rd=$(last_rundir)
	nothing_left "${rd:-$STATE/runs/none}" "$M ... is removed when the run ends"

	# The job is killed half-way through: still reclaimed.
	wrun -- sh -c "mkdir -p /tmp/x/y && chmod a-w /tmp/x && mkfifo /tmp/f && kill -KILL \$\$"
	is "$RC" 137 "$M a job killed by SIGKILL: exit 137"
	rd=$(last_rundir)
	nothing_left "${rd:-$STATE/runs/none}" "$M ... and its scratch is gone"

	# A run that writes until its scratch is full (no --scratch limit: up to 64 MiB) is
	# reclaimed all the same; the cell's tmpfs or disk may refuse the write, that's fine.
	wrun -- sh -c 'dd if=/dev/zero of=/tmp/big bs=1M count=64 2>/dev/null; echo written'
	is "$OUT" written "$M a job that writes 64 MiB into /tmp"
	rd=$(last_rundir)
	nothing_left "${rd:-$STATE/runs/none}" "$M ... is reclaimed"

	if [ "$mode" = root ]; then
		# Root of the cell leaves files owned by several cell users, read-only.
		wrun --user 0 -- sh -c 'mkdir -p /tmp/o/p && touch /tmp/o/p/f && chown -R 12345:12345 /tmp/o && chmod -R 500 /tmp/o && echo owned; chown 4242 /tmp 2>/dev/null; chmod 000 /tmp 2>/dev/null; true'
		is "$OUT" owned "$M --user 0 leaves files owned by cell uid 12345"
		rd=$(last_rundir)
		nothing_left "${rd:-$STATE/runs/none}" "$M ... and they are reclaimed"
	fi
done

# The removal of a run's scratch cannot be led out of it (issue 10): a process outside the
# cell holding a descriptor of the run's tmp (here root, as a job's accomplice could be)
# moves the directory the removal is emptying four levels up while it works; ".." from there
# would reach the state directory's parent. The removal stops instead, and gc finishes it.
# (--scratch none: the scratch is on the host's disk; a scratch tmpfs never is.)
use_mode root
M="[race]"
J=$TEST_SCRATCH/jail
mkdir -p "$J/wt" "$J/vdir" && echo victim >"$J/victim" && echo v >"$J/vdir/f" && chmod 755 "$J" "$J/wt"
cat >"$J/racer.py" <<'PY'
import ctypes, os, sys, time
runs, n = sys.argv[1], int(sys.argv[2])
t0 = time.time()
while time.time() - t0 < 30:
    ids = [d for d in os.listdir(runs) if d.startswith("run_")] if os.path.isdir(runs) else []
    if ids and os.path.isdir(f"{runs}/{ids[0]}/tmp"):
        break
    time.sleep(0.02)
tmp = os.open(f"{runs}/{ids[0]}/tmp", os.O_RDONLY | os.O_DIRECTORY)
base = f"/proc/self/fd/{tmp}"
os.makedirs(base + "/A/B/C/D/E/F")
for i in range(n):
    open(f"{base}/A/B/C/D/E/F/f{i}", "w").close()
libc = ctypes.CDLL(None, use_errno=True)
ifd = libc.inotify_init()
libc.inotify_add_watch(ifd, (base + "/A/B/C/D/E/F").encode(), 0x200)  # IN_DELETE
a = os.open(base + "/A", os.O_RDONLY | os.O_DIRECTORY)
open(base + "/ready", "w").close()
os.read(ifd, 4096)  # the reclaim is deleting in F
os.rename("B/C/D/E/F", "F", src_dir_fd=a, dst_dir_fd=a)
print("moved", flush=True)
PY
start_bg "$PY" "$J/racer.py" "$J/st/runs" 20000
racer=$BG_PID racer_out=$BG_OUT
bounded "$WARREN" run --state "$J/st" --work "$J/wt" --scratch none -- sh -c 'i=0; while [ ! -e /tmp/ready ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done'
wait "$racer" 2>/dev/null
[ -f "$J/victim" ] && [ -f "$J/vdir/f" ] && [ -d "$J/wt" ]
ok $? "$M a directory moved up during the reclaim does not lead it out of the run" ||
	diag "racer: $(cat "$racer_out")" "warren: $ERR" "$(ls -la "$J")"
like "$(cat "$racer_out")" moved "$M ... (the racer did move it during the reclaim)"
bounded "$WARREN" gc --state "$J/st"
rd=$(ls -d "$J"/st/runs/run_* 2>/dev/null | head -n 1)
[ "$RC" = 0 ] && [ -n "$rd" ] && scratch_gone "$rd" >/dev/null
ok $? "$M warren gc reclaims what the stopped removal left" || diag "exit $RC: $ERR" "$(scratch_gone "$rd")"
