# SPDX-License-Identifier: Apache-2.0
# contract.sh - the cell contract (DESIGN.md, "The contract of a cell") as one list of checks,
# sourced by tests/integration/contract.t and run once per driver (`contract_checks container`,
# `contract_checks vm`): what a job sees of /tmp, $TMPDIR, its user, the host and another
# run; limits with their causes; exit codes and signals; network none; the file-system
# options (an image, binds, --externals, --workdir, --hostname, --work-ro); a job (a service
# with its readiness, steps with their logs, a step's time limit, if: always(); the same job
# file but for its driver: line, and the same record); and nothing left after. Every check is on what the job saw or what the host has afterwards, so it fails when
# a driver breaks the contract.
#
# Boots are few (a VM's is seconds under TCG): per mode, one run holds the contract's facts
# and stays up while a second run looks for it (isolation) and dies by a signal; one run has
# the file-system options; one job; as root, one run per limit. CONTRACT_TESTS is how many tests one
# driver's list makes (the plan is a sum of these).

CONTRACT_TESTS_MODE=54   # per mode (root, user)
CONTRACT_TESTS_LIMITS=16 # as root only
CONTRACT_TESTS=$((2 * CONTRACT_TESTS_MODE + CONTRACT_TESTS_LIMITS))

# The facts a job prints of its cell, one a line, in this order (the first run of a mode).
_contract_facts='stat -c "tmp %a %u" /tmp /var/tmp /dev/shm
tr "\0" "\n" </proc/$$/environ | tail -n 1
echo "user $(id -u) $(id -g) $(id -un)"
echo "tmp-entries $(ls -A /tmp | wc -l)"
test -e "$MARKER" && echo host-tmp-visible || echo host-tmp-hidden
echo from-job >"$WORKTREE/from-job" && echo worktree-written
touch /usr/contract-x 2>&1 | grep -qE "Read-only file system|Permission denied" && echo root-refused
grep -c "^CapEff:.*0000000000000000" /proc/self/status
echo "hostname $(hostname)"
echo "links $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " ")"
echo "urandom $(stat -c %a /dev/urandom) $(echo x 2>/dev/null >/dev/urandom && echo written || echo refused)"
echo "interrupts $(wc -c </proc/interrupts)"
echo "hooks $(touch "$WORKTREE/.git/hooks/post-checkout" 2>/dev/null && echo written || echo refused)"
echo secret >/tmp/secret && echo "tmp-written"
echo ready'

# contract_checks DRIVER: the whole list against --driver DRIVER.
contract_checks() {
	local driver=$1 mode
	for mode in root user; do
		use_mode "$mode"
		_contract_cell "$driver" "[$driver $mode]"
		_contract_fs "$driver" "[$driver $mode]"
		_contract_job "$driver" "[$driver $mode]"
	done
	use_mode root
	_contract_limits "$driver" "[$driver root]"
}

# The owner of the worktree and of a --bind's source, the same for both drivers: as root a
# normal user's (1000:1000; a container idmaps it to the run user, a VM's qemu serves an
# idmapped copy), rootless the caller's. What the job makes there is that owner's.
_contract_owner() {
	if [ "$MODE" = root ]; then echo 1000:1000; else echo "$TEST_USER_UID:$TEST_USER_GID"; fi
}

# The first run (in the background: the contract's facts, then it waits) and the second
# (isolation from the first, then a signal).
_contract_cell() {
	local driver=$1 M=$2 uniq rdA rdB gid=$JOB_UID tmp_owner=0
	uniq=$(uniq_arg)
	# the scratch belongs to the cell's root; a rootless container has no root of its own
	# (only the caller's id is mapped): there it is the run user's
	[ "$MODE" = user ] && [ "$driver" = container ] && tmp_owner=$JOB_UID
	rm -f "$WORK/from-job" "$WORK/b-done"
	[ "$MODE" = root ] && gid=1000
	chown "$(_contract_owner)" "$WORK"
	# a git directory the run user owns: its hooks are writable but for the protection
	mkdir -p "$WORK/.git/hooks" && touch "$WORK/.git/config" && chown -R --reference="$WORK" "$WORK/.git"
	[ "$MODE" = user ] && gid=$TEST_USER_GID
	wr_bg run --work "$WORK" --driver "$driver" --env TMPDIR=/caller-tmpdir --env MARKER="$MARKER" --env WORKTREE="$WORK" -- \
		sh -c "$_contract_facts"'
		sleep '"$uniq"' & i=0
		while ! test -e "$WORKTREE/b-done" && [ $i -lt 1200 ]; do sleep 0.2; i=$((i + 1)); done
		exit 3'
	local BG_A=$BG_PID A_OUT=$BG_OUT A_ERR=$BG_ERR
	wait_for 150 grep -qs '^ready$' "$A_OUT"
	ok $? "$M the first run started" || diag "$(cat "$A_ERR")"
	rdA=$(last_rundir)

	# the second run, while the first one lives: its /tmp, processes and exit by a signal
	wrun --driver "$driver" -- sh -c 'echo "tmp-entries $(ls -A /tmp | wc -l)"
		echo "other-run $(for f in /proc/[0-9]*/cmdline; do tr "\0" " " <$f; echo; done 2>/dev/null | grep -cx "sleep '"$uniq"' ")"
		kill -SEGV $$'
	rdB=$(last_rundir)
	is "$OUT" "tmp-entries 0"$'\n'"other-run 0" "$M a second run sees neither the first's /tmp nor its processes"
	is "$RC" 139 "$M a job killed by SIGSEGV gives 139"
	is "$(jget "$rdB/result.json" 'd["status"] + " " + str(d["signal"]) + " " + str(d["exit_code"])')" "signaled SIGSEGV 139" \
		"$M result.json: signaled, SIGSEGV, 139"
	is "$(jget "$rdB/spec.json" 'd["driver"]')" "$driver" "$M spec.json names the driver"
	nothing_left "$rdB" "$M nothing of the second run is left"

	touch "$WORK/b-done"
	wait_bg "$BG_A" 150
	mapfile -t F <"$A_OUT"
	is "$RC" 3 "$M the first run's exit code 3 passes through"
	is "${F[0]:-}" "tmp 1777 $tmp_owner" "$M /tmp is mode 1777, owned by the cell's root ($tmp_owner)"
	is "${F[1]:-}" "tmp 1777 $tmp_owner" "$M /var/tmp is mode 1777, owned by the cell's root ($tmp_owner)"
	is "${F[2]:-}" "tmp 1777 $tmp_owner" "$M /dev/shm is mode 1777, owned by the cell's root ($tmp_owner)"
	is "${F[3]:-}" "TMPDIR=/tmp" "$M TMPDIR=/tmp is the last variable, over the caller's --env TMPDIR"
	is "${F[4]:-}" "user $JOB_UID $gid $JOB_USER" "$M the job runs as the run user $JOB_USER ($JOB_UID:$gid)"
	is "${F[5]:-}" "tmp-entries 0" "$M /tmp starts empty"
	is "${F[6]:-}" "host-tmp-hidden" "$M the host's /tmp is not visible"
	is "${F[7]:-}" "worktree-written" "$M the worktree is writable"
	is "$(cat "$WORK/from-job" 2>/dev/null) $(stat -c %u:%g "$WORK/from-job" 2>&1)" "from-job $(_contract_owner)" \
		"$M what the job wrote in the worktree is on the host, the worktree owner's ($(_contract_owner))"
	is "${F[8]:-}" "root-refused" "$M a write outside the scratch and the worktree is refused by the kernel"
	is "${F[9]:-}" 1 "$M the job has no effective capabilities"
	is "${F[10]:-}" "hostname $(basename "$rdA")" "$M the hostname is the run id"
	is "${F[11]:-}" "links lo " "$M network none: loopback only"
	# a device the mode lets anyone write, that the job's Landlock rules leave out
	if [ "$driver" = container ] && ! "$WARREN" selfcheck 2>&1 | grep -q '^ok *Landlock'; then
		skip 1 "this host's kernel has no Landlock (warren selfcheck)"
	else
		is "${F[12]:-}" "urandom 666 refused" "$M Landlock: the job cannot write /dev/urandom (mode 666, not in its rules)"
	fi
	is "${F[13]:-}" "interrupts 0" "$M the kernel's files are masked (/proc/interrupts, readable by all, reads empty)"
	is "${F[14]:-}" "hooks refused" "$M the worktree's .git/hooks is read-only (the job's, by mode, but protected)"
	is "${F[15]:-}" "tmp-written" "$M the job writes in /tmp"
	is "$(jget "$rdA/result.json" 'str(d["exit_code"]) + " " + d["status"]')" "3 exited" "$M result.json: exited, 3"
	# the write watch's record (a VM's from its kernel's audit): the root and the protected hook
	# (both sides sorted: the worktree's place may sort before or after /usr)
	is "$(jget "$rdA/result.json" '" ".join(sorted(x["path"] for x in d["refused_writes"] if x["path"] != "/dev/urandom"))')" \
		"$(printf '%s\n' /usr/contract-x "$WORK/.git/hooks/post-checkout" | LC_ALL=C sort | paste -sd' ')" \
		"$M result.json refused_writes names the writes the cell refused"
	nothing_left "$rdA" "$M nothing of the first run is left"
	rm -rf "$WORK/from-job" "$WORK/b-done" "$WORK/.git"
}

# The file-system options: an image as the root, binds, externals, --workdir, --hostname,
# --work-ro (one run).
_contract_fs() {
	local driver=$1 M=$2 base rd bb tmp_owner=0
	[ "$MODE" = user ] && [ "$driver" = container ] && tmp_owner=$JOB_UID
	bb=$(image_busybox) || { skip 16 "cannot build the busybox image"; return; }
	base=$(mktemp -d -p "$TEST_SCRATCH")
	mkdir -p "$base/ro" "$base/rw" "$base/ext"
	echo ro-content >"$base/ro/f"
	echo tool >"$base/ext/tool"
	chmod -R a+rX "$base"
	chown "$(_contract_owner)" "$base/rw"
	wrun --driver "$driver" --rootfs "$bb" --ro-bind "$base/ro:/opt/ro" --bind "$base/rw:/data/rw" --externals "$base/ext" \
		--workdir /opt --hostname contract-host --work-ro -- sh -c 'test -x /bin/busybox && ! test -e /usr/bin/python3 && echo image-root
		pwd; hostname; whoami; stat -c "tmp %a %u" /tmp
		cat /opt/ro/f; echo x 2>/dev/null >/opt/ro/g || echo ro-bind-refused
		echo rw >/data/rw/w && echo rw-bind-written
		cat "$WARREN_EXTERNALS/tool"; touch /opt/warren/externals/x 2>/dev/null || echo externals-refused
		touch '"$WORK"'/x 2>/dev/null || echo worktree-refused
		echo "$TMPDIR"'
	rd=$(last_rundir)
	mapfile -t L <<<"$OUT"
	is "$RC" 0 "$M the file-system options: the run exits 0"
	is "${L[0]:-}" image-root "$M --rootfs: the image is the root"
	is "${L[1]:-}" /opt "$M --workdir /opt is the working directory"
	is "${L[2]:-}" contract-host "$M --hostname names the cell"
	is "${L[3]:-}" "$JOB_USER" "$M the run user has its name in the image's passwd"
	is "${L[4]:-}" "tmp 1777 $tmp_owner" "$M the image's /tmp is the run's (1777, the cell's root)"
	is "${L[5]:-}" ro-content "$M --ro-bind: the source's file is readable"
	is "${L[6]:-}" ro-bind-refused "$M --ro-bind: a write is refused"
	is "${L[7]:-}" rw-bind-written "$M --bind: the job writes in it"
	is "$(cat "$base/rw/w" 2>/dev/null) $(stat -c %u:%g "$base/rw/w" 2>&1)" "rw $(_contract_owner)" \
		"$M --bind: what the job wrote is on the host, the source owner's ($(_contract_owner))"
	is "${L[8]:-}" tool "$M --externals: at \$WARREN_EXTERNALS, readable"
	is "${L[9]:-}" externals-refused "$M --externals: read-only"
	is "${L[10]:-}" worktree-refused "$M --work-ro: the worktree is read-only"
	is "${L[11]:-}" /tmp "$M TMPDIR=/tmp with an image too"
	is "$(ls -A "$bb/opt" "$bb/data" 2>/dev/null)" "" "$M the binds' mount points were not made in the image"
	nothing_left "$rd" "$M nothing of the file-system run is left"
	rm -rf "$base"
}

# Limits with their causes: --time, --pids (and pids_peak), --scratch, --memory (root: the rootless runs of this host
# have no cgroup for the last two).
_contract_limits() {
	local driver=$1 M=$2 rd
	wrun --driver "$driver" --time 2s -- sh -c 'trap "echo got-TERM; exit 0" TERM; sleep 100 & wait'
	rd=$(last_rundir)
	is "$RC" 124 "$M --time 2s stops the job: 124"
	like "$ERR" "stopped: wall-clock limit 2s reached at 2\.[0-9]+s; sent SIGTERM$" "$M --time: the cause line names the limit and the signal"
	is "$OUT" got-TERM "$M --time: the job got the SIGTERM"
	is "$(jget "$rd/result.json" 'd["cause"]["limit"]')" time "$M --time: result.json cause.limit time"

	wrun --driver "$driver" --pids 20 -- sh -c 'for i in $(seq 40); do sleep 30 & done 2>/dev/null; wait'
	rd=$(last_rundir)
	# the shell may give up at its first refused fork before the supervisor stops it
	like "$ERR" "stopped: process limit 20 reached \(fork failed [0-9]+ times?\); (sent SIGTERM|the job exited with 2)$" \
		"$M --pids 20: the cause line names the process limit"
	like "$RC" '^(2|143)$' "$M --pids 20: the run fails (the shell's fork error, 2, or the SIGTERM, 143)"
	is "$(jget "$rd/result.json" 'd["cause"]["limit"] + " " + d["cause"]["value"]')" "pids 20" "$M --pids: result.json cause pids 20"

	# five processes of the job's own live while the scratch fills (and the limit watch looks)
	wrun --driver "$driver" --scratch 8M --pids 64 -- sh -c 'for i in 1 2 3 4 5; do sleep 4 & done; sleep 1
		dd if=/dev/zero of="$TMPDIR/fill" bs=64k count=256 2>/dev/null; echo dd-exit=$?; sleep 10; echo not-stopped'
	rd=$(last_rundir)
	# the shell and its five sleeps (and dd, if seen): a container's init counts too, a VM's
	# qemu threads do not
	like "$(jget "$rd/result.json" 'd["pids_peak"]')" '^[678]$' "$M result.json pids_peak counts the job's processes"
	like "$ERR" 'stopped: scratch limit 8 MiB reached \(writes to /tmp, /dev/shm, \$HOME and the root fail with ENOSPC\); sent SIGTERM$' \
		"$M --scratch 8M, dd of 16 MiB into \$TMPDIR: the cause line names the scratch limit"
	unlike "$OUT" not-stopped "$M --scratch: the job was stopped"
	is "$(jget "$rd/result.json" 'd["cause"]["limit"] + " " + str(d["scratch_bytes"] >= 7 << 20)')" "scratch True" \
		"$M --scratch: result.json cause.limit scratch, scratch_bytes the full scratch"

	# 128M: the least a VM boots with
	wrun --driver "$driver" --memory 128M -- python3 -c 'b = []
for i in range(1024):
    b.append(b"x" * (1 << 20))
print("allocated 1 GiB")'
	rd=$(last_rundir)
	is "$RC" 137 "$M --memory 128M on a 1 GiB hog: killed (137)"
	like "$ERR" "stopped: memory limit 128 MiB reached; the kernel killed" "$M --memory: the cause line names the limit"
	unlike "$OUT" "allocated" "$M --memory: the hog did not get its 1 GiB"
	is "$(jget "$rd/result.json" 'd["cause"]["limit"]')" memory "$M --memory: result.json cause.limit memory"
	nothing_left "$rd" "$M nothing of the limited runs is left"
}

# A job: a service ready by its TCP port, a step that talks to it, a step's output (both
# streams) in its log, TMPDIR=/tmp over the job's env, /tmp and the worktree kept across
# steps, a step stopped by its time limit (its cause), a step skipped after it, an
# if: always() step; the record (steps, services, cause) is the same for both drivers.
_contract_job() {
	local driver=$1 M=$2 rd jf
	jf=$(mktemp -p "$TEST_SCRATCH" job-XXXXXX.yaml)
	cat >"$jf" <<-EOF
	name: contract-job
	driver: $driver
	env:
	  TMPDIR: /job-tmpdir
	services:
	  web:
	    run: exec python3 -m http.server 8765 --bind 127.0.0.1
	    ready:
	      tcp: 8765
	steps:
	  - name: talk
	    run: python3 -c 'import urllib.request as u; print("web", u.urlopen("http://127.0.0.1:8765/").status)'
	  - name: env
	    run: echo "tmpdir \$TMPDIR"; echo to-stderr >&2; echo kept >/tmp/kept; echo from-step >"$WORK/from-step"
	  - name: slow
	    timeout: 1s
	    run: sleep 60
	  - name: skipped
	    run: echo never
	  - name: last
	    if: always()
	    run: cat /tmp/kept "$WORK/from-step"
	EOF
	chmod 644 "$jf"
	rm -f "$WORK/from-step"
	bounded "${RUNNER[@]}" "$WARREN" job run "$jf" --state "$STATE" --work "$WORK"
	rd=$(last_rundir)
	is "$RC" 124 "$M a job whose step hits its time limit exits 124" || diag "$ERR"
	is "$(jget "$rd/result.json" 'd["status"] + " " + str(d["exit_code"]) + " " + d["cause"]["limit"] + " " + d["cause"]["value"]')" \
		"limit 124 step-time 1s" "$M job: result.json names the step's time limit as the cause"
	is "$(jget "$rd/result.json" '" ".join(s["name"] + ":" + s["status"] + ":" + str(s["exit_code"]) for s in d["steps"])')" \
		"talk:ok:0 env:ok:0 slow:limit:124 skipped:skipped:None last:ok:0" "$M job: each step's status and exit code"
	like "$(jget "$rd/result.json" 'd["cause"]["message"]')" "^step slow: time limit 1s reached" "$M job: the cause names the step"
	is "$(jget "$rd/result.json" '" ".join(s["name"] + ":" + s["status"] + ":" + str(s["ready_timeout_ms"]) for s in d["services"])')" \
		"web:stopped:30000" "$M job: the service was ready, then stopped at the end"
	is "$(cat "$rd/log/1-talk.log" 2>/dev/null)" "web 200" "$M job: a step reached the service on the cell's loopback"
	is "$(cat "$rd/log/2-env.log" 2>/dev/null)" "tmpdir /tmp"$'\n'"to-stderr" "$M job: a step's two streams in its log, TMPDIR=/tmp over the job's env"
	is "$(cat "$rd/log/5-last.log" 2>/dev/null)" "kept"$'\n'"from-step" "$M job: /tmp and the worktree kept across steps, the always() step ran"
	like "$(cat "$rd/log/service-web.log" 2>/dev/null)" '"GET / HTTP/1.1" 200' "$M job: the service's log has its request"
	is "$(cat "$WORK/from-step" 2>/dev/null)" from-step "$M job: what a step wrote in the worktree is on the host"
	nothing_left "$rd" "$M nothing of the job is left"
	rm -f "$jf" "$WORK/from-step"
}
