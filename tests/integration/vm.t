#!/bin/bash
# vm.t - the vm driver (warren run --driver vm, docs/vm.md) beyond the cell contract (which
# tests/integration/contract.t checks for both drivers from one list): what the guest cannot
# carry yet refused in one line, the policy inside the guest, the record's "vm", a VM that
# fails named as such, and nothing left after (no qemu, no scratch, no cgroup, nothing in the
# host's /tmp), even when warren is killed with SIGKILL.
#
# Slow but real: each boot is a whole kernel under TCG (1.5 s on an idle machine, far more
# under load), so one boot checks several things; 5 boots in all (4 as root, 1 rootless).
. "$(dirname "$0")/../lib.sh"

T_TIMEOUT=180

command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed (qemu-system-x86)"
ls /boot/vmlinuz-* >/dev/null 2>&1 || skip_all "no /boot/vmlinuz-* (linux-image-amd64)"
[ -x "$(dirname "$WARREN")/warren-guest-init" ] || bail_out "no warren-guest-init beside $WARREN: build it with make"

plan 43

host_tmp_marker

# ---- what is not done yet, and bad input: one line, exit 125, no boot
use_mode root
wrun --driver vmm -- true
is "$RC" 125 "--driver vmm exits 125"
one_warren_line "--driver vmm is refused in one line"
like "$ERR" "'vmm' is not a driver; give container or vm" "the line says which drivers there are"
wrun --driver vm --memory 16M -- true
is "$RC" 125 "--driver vm --memory 16M exits 125"
like "$ERR" "too small for a VM.*--memory 128M or more" "a memory limit too small for a VM says what to give"
closed=$(mktemp -d -p "$TEST_SCRATCH")
chmod 0700 "$closed"
wr run --work "$closed" --driver vm -- true
is "$RC" 125 "a worktree qemu's uid cannot read: 125, before the guest boots"
like "$ERR" "qemu runs as uid 1000001000, which cannot read the worktree $closed \(Permission denied\); chown it to 1000001000" \
	"and warren says which uid needs what"
rmdir "$closed"
d=$(mktemp -d -p "$TEST_SCRATCH")
binds=()
for i in $(seq 17); do mkdir "$d/b$i"; binds+=(--ro-bind "$d/b$i:/opt/b$i"); done
wrun --driver vm "${binds[@]}" -- true
like "$RC $ERR" "^125 warren: the vm driver: 17 binds \(--bind, --ro-bind, --externals\), at most 16" "17 binds are refused: each is a device of the VM"
rm -rf "$d"
jobf=$WORK/vm-job.yml
printf 'name: t\ndriver: vmx\nsteps:\n  - run: "true"\n' >"$jobf"
bounded "$WARREN" job check "$jobf"
like "$ERR" "driver: 'vmx' is not a driver; give container or vm" "a job file's driver: vmx is refused with its place"
rm -f "$jobf"

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	# the worktree as the run user sees it: in root mode qemu serves it as the run user's
	# host ids (1000001000: CELL_ROOT_ID_BASE + 1000), which the guest sees as uid 1000 (the
	# container driver's idmapped worktree is not done for the VM yet, docs/vm.md)
	JOB_GID=$TEST_USER_GID
	[ "$mode" = root ] && JOB_GID=1000 && chown 1000001000:1000001000 "$WORK"

	# ---- one boot: what the VM adds to the contract (tests/contract.sh has the contract
	# itself, for both drivers): the record, the policy inside the guest, --no-sys and
	# --require-landlock (the guest's kernel has Landlock)
	wrun --driver vm --no-sys --require-landlock -- sh -c 'grep -c "^CapEff:.*0000000000000000" /proc/self/status
		unshare -U true 2>/dev/null || echo userns-refused; echo "sys $(ls -A /sys | wc -l)"
		cat /etc/shadow >/dev/null 2>&1 || echo shadow-refused; exit 3'
	is "$RC" 3 "$M the job's exit code 3 passes through"
	mapfile -t L <<<"$OUT"
	is "${L[0]:-}" 1 "$M the job has no effective capabilities"
	is "${L[1]:-}" userns-refused "$M the seccomp profile is loaded in the guest (unshare -U is refused)"
	is "${L[2]:-}" "sys 0" "$M --no-sys: /sys is empty (not the guest's, nor the host's through the root share)"
	is "${L[3]:-}" shadow-refused "$M the host's /etc/shadow is not readable by the job"
	rd=$(last_rundir)
	like "$(jget "$rd/result.json" 'd["vm"]["accel"]')" '^(kvm|tcg)$' "$M result.json says which accelerator (vm.accel)"
	like "$(jget "$rd/result.json" 'str(d["vm"]["memory"])')" '^[0-9]+$' "$M result.json has the guest's RAM (vm.memory)"
	nothing_left "$rd" "$M nothing of the run is left (no qemu, scratch, cgroup)"
	[ "$mode" = user ] && continue

	# ---- guest root reads through 9p only what qemu's uid may: a root-only host file is
	# refused (assume the job took over the guest kernel: --user 0 has CAP_DAC_OVERRIDE in
	# the guest, so only the host's refusal counts); the guest's console is not the job's to
	# write (Landlock in the guest: a job cannot flood it, and the refusal is recorded; the keeper that bounds what a
	# guest kernel writes there is test_vm's test_console_keep); exit 0
	secret=$(mktemp -d -p "$TEST_SCRATCH")
	chmod 0755 "$secret"
	echo host-secret >"$secret/key" && chmod 0600 "$secret/key"
	wrun --driver vm --user 0 -- sh -c 'id -u; cat '"$secret/key"' 2>/dev/null || echo refused;
		(echo x >/dev/hvc0) 2>/dev/null || echo console-refused; exit 0'
	is "$RC" 0 "$M a job that exits 0 gives 0"
	# the console write Landlock refused is on the record, as a container's refused write would be
	is "$(grep -c . <<<"$ERR")/$(grep -c 'refused 1 write outside the run: /dev/hvc0 ' <<<"$ERR")" 1/1 \
		"$M and warren says only that the write to the console was refused (the guest's audit)"
	is "$OUT" "0
refused
console-refused" "$M guest root cannot read a root-only host file through 9p (qemu is not root), nor write the console"
	rm -rf "$secret"

	# ---- a VM whose init cannot run (a dynamic /bin/true as init: the kernel panics)
	wr_env WARREN_GUEST_INIT=/bin/true -- run --work "$WORK" --driver vm -- true
	is "$RC" 125 "$M a VM that ends without a report gives 125"
	like "$ERR" "the VM of run_[0-9A-Z]+ ended without a report from its init: qemu-system-x86_64 exited" "$M warren says the VM failed"
	rd=$(last_rundir)
	like "$(jget "$rd/result.json" 'd["error"]')" "ended without a report" "$M result.json has the error"

	# ---- kill -9 of warren: qemu dies with it (parent-death signal), gc reclaims the rest
	wr_bg run --work "$WORK" --driver vm -- sh -c 'echo started; sleep 100'
	wait_for 150 grep -q started "$BG_OUT"
	ok $? "$M the job started in the VM"
	rd=$(last_rundir)
	has_procs_matching "$rd"
	ok $? "$M qemu runs while the job does"
	qpid=$(procs_matching "$rd" | head -n 1)
	want_uid=$TEST_USER_UID
	[ "$mode" = root ] && want_uid=1000001000
	is "$(awk '/^Uid:/ { print $2, $3, $4, $5 } /^CapEff:|^CapBnd:|^NoNewPrivs:/ { print $2 }' "/proc/$qpid/status" 2>/dev/null | tr '\n' ' ')" \
		"$want_uid $want_uid $want_uid $want_uid 0000000000000000 0000000000000000 1 " "$M qemu runs as uid $want_uid, no capabilities, no_new_privs"
	isnt "$(readlink "/proc/$qpid/ns/user")" "$(readlink /proc/self/ns/user)" "$M qemu is in a user namespace of its own"
	like "$(awk '$5 == "/" { print $6; exit }' "/proc/$qpid/mountinfo")" '^ro' "$M qemu sees the host's / read-only"
	is "$(awk -v s="$STATE" '$5 == s { print $9 }' "/proc/$qpid/mountinfo" | tail -n 1)" tmpfs "$M qemu sees the state directory hidden (an empty tmpfs)"
	kill -KILL "$BG_PID"
	wait_for 10 no_procs_matching "$rd"
	ok $? "$M after kill -9 of warren no qemu is left"
	# the cache holds a kernel that is gone (made up here) and the initramfs of the /bin/true
	# init above (another guest init): gc removes both, and keeps what this warren boots
	cache=$STATE/vm-cache
	touch "$cache/vmlinux-0.0.1-gone-1-2-3-4" "$cache/accel-vmlinux-0.0.1-gone-1-2-3-4"
	ls "$cache"/initramfs-* | grep -c . >"$WORK/.before"
	wr gc
	is "$RC" 0 "$M warren gc after the kill exits 0"
	is "$(ls "$cache" | grep -c 'gone')/$(cat "$WORK/.before")/$(ls "$cache"/initramfs-* | grep -c .)/$(ls "$cache"/vmlinux-* | grep -c .)" \
		"0/2/1/1" "$M gc removed the cache's entries of a gone kernel and of another guest init, kept the current ones"
	rm -f "$WORK/.before"
	like "$OUT" "gc: removed 3 old files of the vm driver's cache" "$M and says so"
	nothing_left "$rd" "$M gc reclaimed the killed run" norecord
done

# ---- nothing in the host's /tmp from any of it
left=$(find /tmp -maxdepth 2 -newer "$MARKER" \( -name '*qemu*' -o -name '*vmlinux*' -o -name '*.cpio' -o -name 'run_*' \) 2>/dev/null)
is "$left" "" "nothing of the VMs was written to the host's /tmp"
