#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vm.t - the vm driver (warren run --driver vm, docs/vm.md) beyond the cell contract (which
# tests/integration/contract.t checks for both drivers from one list): what the guest cannot
# carry yet refused in one line, the policy inside the guest, the record's "vm", a VM that
# fails named as such, and nothing left after (no qemu, no scratch, no cgroup, nothing in the
# host's /tmp), even when warren is killed with SIGKILL.
#
# Slow but real: each boot is a whole kernel under TCG (1.5 s on an idle machine, far more
# under load), so one boot checks several things; 10 boots in all (7 as root, 3 rootless).
. "$(dirname "$0")/../lib.sh"

T_TIMEOUT=180

command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed (qemu-system-x86)"
ls /boot/vmlinuz-* >/dev/null 2>&1 || skip_all "no /boot/vmlinuz-* (linux-image-amd64)"
[ -x "$(dirname "$WARREN")/warren-guest-init" ] || bail_out "no warren-guest-init beside $WARREN: build it with make"

plan 63

host_tmp_marker

# ---- the KVM probe (the first boot of a state directory where /dev/kvm opens: a test boot of
# the kernel under KVM; before any other run here) runs its qemu walled in as a run's (vmjail.c):
# seen while it boots
use_mode root
wr_bg run --work none --driver vm -- true
probe=""
for i in $(seq $((T_TIMEOUT * 20))); do # the first boot cuts out the vmlinux first: seconds
	probe=$(pgrep -P "$BG_PID" -f "$(printf 'warren[.]poweroff')" | head -n 1)
	[ -n "$probe" ] || ! kill -0 "$BG_PID" 2>/dev/null && break
	sleep 0.05
done
pstat=$([ -n "$probe" ] && awk '/^Uid:/ { print $2, $5 } /^CapEff:|^CapBnd:|^NoNewPrivs:/ { print $2 }' "/proc/$probe/status" 2>/dev/null | tr '\n' ' ')
pns=$([ -n "$probe" ] && readlink "/proc/$probe/ns/user")
wait_bg "$BG_PID"
if ! { exec 3<>/dev/kvm; } 2>/dev/null || [ -n "${WARREN_VM_ACCEL:-}" ]; then
	skip 2 "no KVM probe here (/dev/kvm does not open, or WARREN_VM_ACCEL is set)"
elif [ -z "$pstat" ]; then
	skip 2 "the KVM probe ended before it could be seen (KVM works here)"
else
	is "$pstat" "1000001000 1000001000 0000000000000000 0000000000000000 1 " "the KVM probe's qemu runs as uid 1000001000, no capabilities, no_new_privs"
	isnt "$pns" "$(readlink /proc/self/ns/user)" "and in a user namespace of its own"
fi
exec 3>&-

# ---- what is not done yet, and bad input: one line, exit 125, no boot
use_mode root
wrun --driver vmm -- true
is "$RC" 125 "--driver vmm exits 125"
one_warren_line "--driver vmm is refused in one line"
like "$ERR" "'vmm' is not a driver; give container or vm" "the line says which drivers there are"
wrun --driver vm --memory 16M -- true
is "$RC" 125 "--driver vm --memory 16M exits 125"
like "$ERR" "too small for a VM.*--memory 128M or more" "a memory limit too small for a VM says what to give"
d=$(mktemp -d -p "$TEST_SCRATCH")
binds=()
for i in $(seq 17); do mkdir "$d/b$i"; binds+=(--ro-bind "$d/b$i:/opt/b$i"); done
wrun --driver vm "${binds[@]}" -- true
like "$RC $ERR" "^125 warren: the vm driver: 17 binds \(--bind, --ro-bind, --externals\), at most 16" "17 binds are refused: each is a device of the VM"
rm -rf "$d"
# a worktree or bind source with a kernel's file system mounted below it (a chroot's /proc):
# qemu shares them by the host's descriptors and 9p crosses mounts, so they are refused as a
# container's are, before the guest boots
d=$(mktemp -d -p "$TEST_SCRATCH")
mkdir -p "$d/chroot/proc"
chmod -R 755 "$d"
mount -t proc proc "$d/chroot/proc"
wr run --work "$d" --driver vm -- true
like "$RC $ERR" "^125 warren: the worktree $d is on or holds a proc file system \\(mounted at $d/chroot/proc\\)" \
	"a worktree with a proc mounted below it is refused in one line naming it (the host's processes stay unseen)"
wrun --driver vm --ro-bind "$d:/data" -- true
like "$RC $ERR" "^125 warren: the bind source $d is on or holds a proc file system \\(mounted at $d/chroot/proc\\)" "and so is such a bind's source"
umount "$d/chroot/proc"
rm -rf "$d"
jobf=$WORK/vm-job.yml
printf 'name: t\ndriver: vmx\nsteps:\n  - run: "true"\n' >"$jobf"
bounded "$WARREN" job check "$jobf"
like "$ERR" "driver: 'vmx' is not a driver; give container or vm" "a job file's driver: vmx is refused with its place"
rm -f "$jobf"

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	# ---- one boot: what the VM adds to the contract (tests/contract.sh has the contract
	# itself, for both drivers): the record, the policy inside the guest, --no-sys and
	# --require-landlock (the guest's kernel has Landlock); the caller's umask is the job's;
	# a proc and a sysfs mounted outside /proc on the host (a chroot's) are empty directories
	# in the root share (9p crosses mounts: they showed the host's processes, and the command
	# line of a process of the test's, kfs-marker, read past the guest's cache). The sysfs is
	# a network namespace's own: the host's /sys superblock again would be one inode with the
	# root share's /sys to the guest's 9p client, shown as --no-sys's empty /sys
	kfs=$TEST_SCRATCH/kfs-$mode
	mkdir -p "$kfs/proc" "$kfs/sys"
	chmod -R 755 "$kfs"
	mount -t proc proc "$kfs/proc"
	unshare -n mount -t sysfs sysfs "$kfs/sys"
	bash -c 'exec -a "kfs-marker-$1" sleep 300' _ "$TEST_SCRATCH" &
	marker=$!
	kline='echo "kfs $(ls -A '"$kfs"'/proc | wc -l) $(ls -A '"$kfs"'/sys | wc -l) $(dd if='"$kfs/proc/$marker"'/cmdline iflag=direct bs=4096 count=1 2>/dev/null | grep -ac kfs-marker)"'
	old_umask=$(umask)
	umask 027
	wrun --driver vm --no-sys --require-landlock -- sh -c 'grep -c "^CapEff:.*0000000000000000" /proc/self/status
		unshare -U true 2>/dev/null || echo userns-refused; echo "sys $(ls -A /sys | wc -l)"
		cat /etc/shadow >/dev/null 2>&1 || echo shadow-refused; umask; '"$kline"'
		echo "ports from $(cat /proc/sys/net/ipv4/ip_unprivileged_port_start)"; exit 3'
	umask "$old_umask"
	kill "$marker"
	wait "$marker" 2>/dev/null
	umount "$kfs/proc" "$kfs/sys"
	is "$RC" 3 "$M the job's exit code 3 passes through"
	mapfile -t L <<<"$OUT"
	is "${L[0]:-}" 1 "$M the job has no effective capabilities"
	is "${L[1]:-}" userns-refused "$M the seccomp profile is loaded in the guest (unshare -U is refused)"
	is "${L[2]:-}" "sys 0" "$M --no-sys: /sys is empty (not the guest's, nor the host's through the root share)"
	is "${L[3]:-}" shadow-refused "$M the host's /etc/shadow is not readable by the job"
	is "${L[4]:-}" 0027 "$M the job's umask is the caller's (027), as in a container"
	is "${L[5]:-}" "kfs 0 0 0" "$M a proc and a sysfs mounted outside /proc on the host are empty in the VM (no host process, no marker's command line)"
	is "${L[6]:-}" "ports from 0" "$M the guest's ports below 1024 are the job's, as in a container's namespace"
	rd=$(last_rundir)
	like "$(jget "$rd/result.json" 'd["vm"]["accel"]')" '^(kvm|tcg)$' "$M result.json says which accelerator (vm.accel)"
	like "$(jget "$rd/result.json" 'str(d["vm"]["memory"])')" '^[0-9]+$' "$M result.json has the guest's RAM (vm.memory)"
	# the guest's clock is not the host's: only the supervisor's times, in order
	t=$(jget "$rd/result.json" '[d["timings"][k] for k in ("cell_ready_us", "job_started_us", "job_ended_us", "cell_gone_us", "recorded_us")]')
	"$PY" -c 'import json, sys; v = json.loads(sys.argv[1]); sys.exit(not (v[:2] == [None, None] and all(type(x) is int for x in v[2:]) and 0 < v[2] <= v[3] <= v[4]))' "$t" 2>/dev/null
	ok $? "$M result.json's timings: no guest steps; job ended <= cell gone <= recorded ($t)"
	nothing_left "$rd" "$M nothing of the run is left (no qemu, scratch, cgroup)"

	# ---- mounts the host makes while the VM runs, below the worktree, a --ro-bind's source
	# and on a bound file: unseen by the job. qemu shared the worktree and the binds by the
	# host's descriptors, which follow the supervisor's mount table as it changes (a proc
	# mounted there showed the host's processes); and a bound file's copy in qemu's view
	# received what the host later mounted on the source, when it lies on a shared mount (as
	# systemd makes /: here a shared bind of the scratch). Now each is a private copy
	lm=$TEST_SCRATCH/late-$mode
	mkdir -p "$lm/ro/p" "$lm/sh" "$WORK/late-p"
	echo orig >"$lm/sh/file"
	chmod -R 755 "$lm" "$WORK/late-p"
	chmod 644 "$lm/sh/file"
	mount --bind "$lm/sh" "$lm/sh"
	mount --make-shared "$lm/sh"
	bash -c 'exec -a "late-marker-$1" sleep 300' _ "$TEST_SCRATCH" &
	marker=$!
	rm -f "$WORK/go"
	wr_bg run --work "$WORK" --driver vm --ro-bind "$lm/ro:/opt/ro" --ro-bind "$lm/sh/file:/opt/f" -- sh -c '
		echo ready; i=0; while ! test -e '"$WORK"'/go && [ $i -lt 1500 ]; do sleep 0.1; i=$((i + 1)); done
		echo "late $(ls -A '"$WORK"'/late-p | wc -l) $(ls -A /opt/ro/p | wc -l) $(dd if=/opt/f iflag=direct bs=4096 count=1 2>/dev/null | grep -ac late-marker) $(cat /opt/f)"'
	pid=$BG_PID
	wait_for 150 grep -qs '^ready$' "$BG_OUT"
	mount -t proc proc "$WORK/late-p"
	mount -t proc proc "$lm/ro/p"
	mount --bind "/proc/$marker/cmdline" "$lm/sh/file"
	touch "$WORK/go"
	wait_bg "$pid" 150
	umount "$WORK/late-p" "$lm/ro/p" "$lm/sh/file" "$lm/sh"
	kill "$marker"
	wait "$marker" 2>/dev/null
	is "$RC $(tail -n 1 "$BG_OUT")" "0 late 0 0 0 orig" \
		"$M a proc the host mounts below the worktree or a --ro-bind's source while the VM runs, or a proc file on a bound file, is unseen" ||
		diag "$(cat "$BG_ERR")"
	rm -rf "$lm" "$WORK/late-p" "$WORK/go"

	# ---- a bind of a /proc file made by a process that has ended (mount(8)'s own
	# /proc/self/mountinfo), where the root share sees it: the kernel will not mount a cover
	# on it (its dentry is dropped) and every VM run failed ("cannot cover ... No such file or
	# directory"); nothing can be read through it, so the run starts, and the job reads nothing
	stale=$TEST_SCRATCH/stale-$mode
	touch "$stale"
	mount --bind /proc/self/mountinfo "$stale"
	wr run --work none --driver vm -- sh -c "cat $stale 2>/dev/null | wc -c"
	umount "$stale"
	rm -f "$stale"
	is "$RC $OUT" "0 0" "$M a bind of an ended process's /proc file on the host does not stop a VM run, and shows nothing" ||
		diag "$ERR"
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

	# ---- an image with a proc mounted inside it (a debootstrap tree's, at /mnt/p: not where
	# the guest mounts its own): empty in the VM, as in a container (an overlay's layer does
	# not cross mounts); 9p does, and showed the host's processes to the job
	img=$TEST_SCRATCH/kfs-image
	cp -a "$(image_busybox)" "$img"
	mkdir -p "$img/mnt/p"
	mount -t proc proc "$img/mnt/p"
	wr run --work none --rootfs "$img" --driver vm -- sh -c 'ls -A /mnt/p | wc -l'
	umount "$img/mnt/p"
	is "$RC $OUT" "0 0" "$M a proc mounted inside an image (a debootstrap tree's) is empty in the VM"
	rm -rf --one-file-system "$img"

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
	# what qemu serves as the root share (its -fsdev path, in its own view), as a guest kernel
	# taken over would ask it for: the host's /proc, /sys and /dev are empty there
	share=$(tr '\0' '\n' <"/proc/$qpid/cmdline" | sed -n 's/^local,id=root,path=\([^,]*\),.*/\1/p')
	case $share in
	/proc/self/*) share=/proc/$qpid/${share#/proc/self/} ;;
	*) share=/proc/$qpid/root$share ;;
	esac
	is "$(ls -A "$share/proc" | wc -l) $(ls -A "$share/sys" | wc -l) $(ls -A "$share/dev" | wc -l)" "0 0 0" \
		"$M qemu's root share has the host's /proc, /sys and /dev empty (a guest kernel taken over reaches none)"
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

	# ---- a guest that floods its console (a job cannot: Landlock keeps it from hvc0, so the
	# flood is the guest kernel's, or a pid 1 that took it over: here a pid 1 of the test's that
	# loads the initramfs's modules and writes 4 MiB to hvc0): the host keeps 512 KiB + 512 KiB
	if ! command -v cc >/dev/null; then
		skip 4 "cc is needed to build the flooding guest init"
		continue
	fi
	flood=$TEST_SCRATCH/flood-init
	cat >"$flood.c" <<'EOF'
/* a hostile guest's pid 1 (vm.t): the initramfs's modules loaded, 4 MiB on hvc0, power off */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>
int main(void)
{
	char name[256], path[300], line[1024];
	mkdir("/dev", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, "mode=0755");
	FILE *order = fopen("/modules/order", "r");
	while (order && fgets(name, sizeof name, order)) {
		name[strcspn(name, "\n")] = '\0';
		snprintf(path, sizeof path, "/modules/%s", name);
		int fd = open(path, O_RDONLY);
		if (fd >= 0)
			syscall(SYS_finit_module, fd, "", 0);
		close(fd);
	}
	int con = -1;
	for (int i = 0; i < 1000 && (con = open("/dev/hvc0", O_WRONLY)) < 0; i++)
		usleep(10000);
	memset(line, 'x', sizeof line - 1);
	line[sizeof line - 1] = '\n';
	for (int i = 0; con >= 0 && i < 4096; i++)
		if (write(con, line, sizeof line) < 0)
			break;
	tcdrain(con); /* what the tty holds goes out before the power does */
	reboot(RB_POWER_OFF);
	return 0;
}
EOF
	TMPDIR=$TEST_SCRATCH cc -O1 -static -o "$flood" "$flood.c" 2>"$TEST_SCRATCH/cc.log" || bail_out "cannot build the flooding guest init: $(cat "$TEST_SCRATCH/cc.log")"
	wr_env WARREN_GUEST_INIT="$flood" -- run --work "$WORK" --driver vm -- true
	is "$RC" 125 "$M a guest that floods its console and reports nothing: 125"
	rd=$(last_rundir)
	size=$(stat -c %s "$rd/vm/console.log" 2>/dev/null || echo missing)
	[[ $size =~ ^[0-9]+$ ]] && [ "$size" -le $((1024 * 1024 + 128)) ] && [ "$size" -ge $((1024 * 1024)) ]
	ok $? "$M console.log keeps 1 MiB of the 4 MiB flood (got $size bytes)"
	cut=$(grep -ao '\[warren: [0-9]* bytes of the console cut here\]' "$rd/vm/console.log" | grep -o '[0-9][0-9]*')
	# (what the guest's tty and qemu still held when the power went is lost: not all 4 MiB arrive)
	[ -n "$cut" ] && [ "$cut" -ge $((1024 * 1024)) ]
	ok $? "$M and names the cut: more than it kept (got ${cut:-no line} bytes)"
	qsize=$(stat -c %s "$rd/vm/qemu.log" 2>/dev/null || echo missing)
	[[ $qsize =~ ^[0-9]+$ ]] && [ "$qsize" -le $((128 * 1024 + 128)) ]
	ok $? "$M qemu.log stays within its bound (got $qsize bytes)"
	rm -f "$flood" "$flood.c" "$TEST_SCRATCH/cc.log"
done

# ---- nothing in the host's /tmp from any of it
left=$(find /tmp -maxdepth 2 -newer "$MARKER" \( -name '*qemu*' -o -name '*vmlinux*' -o -name '*.cpio' -o -name 'run_*' \) 2>/dev/null)
is "$left" "" "nothing of the VMs was written to the host's /tmp"
