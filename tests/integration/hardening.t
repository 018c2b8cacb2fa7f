#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# hardening.t - the defences of issue 6, each exercised by a real program inside a cell, as
# root and as an unprivileged user, on the host's / and on a --rootfs image:
#   seccomp (a probe calling the refused system calls: keyring, bpf, perf, userfaultfd,
#   io_uring, modules, kexec, reboot, swap, clocks, personality, TIOCSTI/TIOCLINUX, user
#   namespaces, clone3, the mount family, x32 and i386 calls; util-linux unshare and mount,
#   python's TIOCSTI), --seccomp FILE, --seccomp-print, --allow-nested; capabilities of the
#   run user and of --user 0; rlimits and --core; masked kernel files, read-only /proc/sys
#   and /sys, --no-sys; /sys/fs/cgroup showing the run's own cgroup only, read-only; Landlock
#   (writes the file-system permissions would allow, refused);
#   .git/hooks, .git/config and --protect read-only in the worktree; `warren policy` agreeing
#   with the kernel; no inherited fds; no cell when the host's / cannot be shown through
#   overlays (host sockets, issue 10).
. "$(dirname "$0")/../lib.sh"

command -v gcc >/dev/null || skip_all "gcc is needed to build the probe"

# Tests: 103 per mode, 6 checks of options, 10 per mode on an image.
plan 232

# The host's cgroup layout picks the files the cell's view of its cgroup shows.
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
	CG_LAYOUT=v2 CG_MEM=memory.max CG_PIDS=pids.max
else
	CG_LAYOUT=v1 CG_MEM=memory/memory.limit_in_bytes CG_PIDS=pids/pids.max
fi

# ---------------------------------------------------------------- the probe

# probe NAME...: each refused call is made in a child process of its own; prints NAME=ok or
# NAME=<errno name>. Only harmless arguments: where a call gets through it does nothing
# (invalid flags, a nonexistent module, an unloadable reboot magic, a query).
PROBE_SRC=$TEST_SCRATCH/probe.c
cat >"$PROBE_SRC" <<'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static long call(const char *name)
{
	char c = 'x';
	if (!strcmp(name, "keyctl")) return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
	if (!strcmp(name, "add_key")) return syscall(SYS_add_key, "user", "warren-probe", "x", 1, KEY_SPEC_PROCESS_KEYRING);
	if (!strcmp(name, "request_key")) return syscall(SYS_request_key, "user", "warren-probe-none", NULL, 0);
	if (!strcmp(name, "bpf")) {
		union bpf_attr a = { .map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 4, .max_entries = 1 };
		return syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof a);
	}
	if (!strcmp(name, "perf_event_open")) {
		struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .size = sizeof a, .config = PERF_COUNT_SW_CPU_CLOCK,
					     .exclude_kernel = 1, .exclude_hv = 1 };
		return syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	}
	if (!strcmp(name, "userfaultfd")) return syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */);
	if (!strcmp(name, "io_uring_setup")) {
		struct io_uring_params p = { 0 };
		return syscall(SYS_io_uring_setup, 1, &p);
	}
	if (!strcmp(name, "kexec_load")) return syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL);
	if (!strcmp(name, "init_module")) return syscall(SYS_init_module, NULL, 0, "");
	if (!strcmp(name, "finit_module")) return syscall(SYS_finit_module, -1, "", 0);
	if (!strcmp(name, "delete_module")) return syscall(SYS_delete_module, "warren_probe_none", O_NONBLOCK);
	if (!strcmp(name, "reboot")) return syscall(SYS_reboot, 0, 0, 0, NULL);  /* no valid magic */
	if (!strcmp(name, "swapon")) return syscall(SYS_swapon, "/nonexistent-warren-probe", 0);
	if (!strcmp(name, "settimeofday")) return syscall(SYS_settimeofday, NULL, NULL);
	if (!strcmp(name, "clock_settime")) {
		struct timespec ts = { 0, -1 };
		return syscall(SYS_clock_settime, CLOCK_REALTIME, &ts);
	}
	if (!strcmp(name, "adjtimex")) {
		struct timex t = { 0 };  /* modes 0: a query */
		return syscall(SYS_adjtimex, &t);
	}
	if (!strcmp(name, "clock_adjtime")) {
		struct timex t = { 0 };
		return syscall(SYS_clock_adjtime, CLOCK_REALTIME, &t);
	}
	if (!strcmp(name, "personality_addr_no_randomize")) return syscall(SYS_personality, ADDR_NO_RANDOMIZE);
	if (!strcmp(name, "personality_read_implies_exec")) return syscall(SYS_personality, READ_IMPLIES_EXEC);
	if (!strcmp(name, "personality_linux32")) return syscall(SYS_personality, PER_LINUX32);
	if (!strcmp(name, "personality_query")) return syscall(SYS_personality, 0xffffffffUL);
	if (!strcmp(name, "tiocsti")) return syscall(SYS_ioctl, 0, TIOCSTI, &c);
	if (!strcmp(name, "tiocsti_high")) return syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, &c);
	if (!strcmp(name, "tioclinux")) { char sub = 12; return syscall(SYS_ioctl, 0, TIOCLINUX, &sub); }
	if (!strcmp(name, "unshare_user")) return syscall(SYS_unshare, CLONE_NEWUSER);
	if (!strcmp(name, "unshare_files")) return syscall(SYS_unshare, CLONE_FILES);
	if (!strcmp(name, "clone_user")) return syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (!strcmp(name, "clone3")) {
		struct clone_args a = { .exit_signal = SIGCHLD };
		return syscall(SYS_clone3, &a, sizeof a);
	}
	if (!strcmp(name, "mount")) return syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL);
	if (!strcmp(name, "umount2")) return syscall(SYS_umount2, "/tmp", MNT_DETACH);
	if (!strcmp(name, "pivot_root")) return syscall(SYS_pivot_root, "/tmp", "/tmp");
	if (!strcmp(name, "fsopen")) return syscall(SYS_fsopen, "tmpfs", 0);
	if (!strcmp(name, "open_tree")) return syscall(SYS_open_tree, AT_FDCWD, "/tmp", 1 /* OPEN_TREE_CLONE */);
	if (!strcmp(name, "move_mount")) return syscall(SYS_move_mount, -1, "", AT_FDCWD, "/tmp", 0);
	if (!strcmp(name, "x32_getpid")) return syscall(0x40000000 | SYS_getpid);
	if (!strcmp(name, "getpid")) return syscall(SYS_getpid);
	errno = EINVAL;
	return -2;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "i386_getpid")) {
			/* int 0x80 from a 64-bit process is the i386 system call entry */
			pid_t c = fork();
			if (c == 0) {
				long r;
				__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L) : "memory", "r8", "r9", "r10", "r11");
				printf("i386_getpid=%s\n", r < 0 ? strerrorname_np((int)-r) : "ok");
				fflush(stdout);
				_exit(0);
			}
			int st;
			waitpid(c, &st, 0);
			if (WIFSIGNALED(st))
				printf("i386_getpid=unsupported-signal-%d\n", WTERMSIG(st));
			continue;
		}
		fflush(stdout);
		pid_t c = fork();
		if (c == 0) {
			errno = 0;
			long r = call(argv[i]);
			if (r == 0 && (!strncmp(argv[i], "clone", 5)))
				_exit(0);  /* the child of a clone that got through */
			if (r == -2)
				printf("%s=unknown-probe\n", argv[i]);
			else
				printf("%s=%s\n", argv[i], r < 0 ? strerrorname_np(errno) : "ok");
			fflush(stdout);
			_exit(0);
		}
		waitpid(c, NULL, 0);
	}
	return 0;
}
EOF
PROBE=$TEST_SCRATCH/probe
TMPDIR=$TEST_SCRATCH gcc -O1 -static -o "$PROBE" "$PROBE_SRC" 2>"$TEST_SCRATCH/probe.log" ||
	bail_out "cannot build the probe: $(cat "$TEST_SCRATCH/probe.log")"
chmod 755 "$PROBE"

# Refused calls: name and the errno the default profile gives.
REFUSED="keyctl=EPERM add_key=EPERM request_key=EPERM bpf=EPERM perf_event_open=EPERM
userfaultfd=EPERM io_uring_setup=EPERM kexec_load=EPERM init_module=EPERM finit_module=EPERM
delete_module=EPERM reboot=EPERM swapon=EPERM settimeofday=EPERM clock_settime=EPERM
adjtimex=EPERM clock_adjtime=EPERM personality_addr_no_randomize=EPERM
personality_read_implies_exec=EPERM tiocsti=EPERM tiocsti_high=EPERM tioclinux=EPERM
unshare_user=EPERM clone_user=EPERM clone3=ENOSYS mount=EPERM umount2=EPERM pivot_root=EPERM
fsopen=EPERM open_tree=EPERM move_mount=EPERM x32_getpid=EPERM"
# Allowed (the filter must not be a blanket refusal).
ALLOWED="personality_linux32 personality_query unshare_files getpid"

# probe_value NAME: NAME's result in OUT.
probe_value() {
	local l
	while IFS= read -r l; do
		[ "${l%%=*}" = "$1" ] && { printf '%s\n' "${l#*=}"; return 0; }
	done <<<"$OUT"
	echo "(no result)"
}

# check_probe M WHERE ARGS...: run the probe in a cell (ARGS: warren run options) and check
# every refused and allowed call; 35 tests.
check_probe() {
	local m=$1${2:+ $2} kv name want names=(); shift 2
	for kv in $REFUSED; do names+=("${kv%%=*}"); done
	wrun "$@" -- "$PROBE_IN_CELL" "${names[@]}" $ALLOWED i386_getpid
	is "$RC" 0 "$m the probe ran in the cell"
	for kv in $REFUSED; do
		name=${kv%%=*} want=${kv#*=}
		is "$(probe_value "$name")" "$want" "$m $name is refused with $want"
	done
	local allowed_ok=0 a
	for a in $ALLOWED; do [ "$(probe_value "$a")" = ok ] || allowed_ok=1; done
	ok $allowed_ok "$m personality(PER_LINUX32), the personality query, unshare(CLONE_FILES) and getpid are allowed" ||
		diag "$OUT"
	I386=$(probe_value i386_getpid)
}

# ---------------------------------------------------------------- per mode


for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	cp "$PROBE" "$WORK/probe" && chmod 755 "$WORK/probe"
	PROBE_IN_CELL=$WORK/probe

	# ---- seccomp: the default profile (35 tests)
	check_probe "$M" "" --user 0
	# 32-bit x86: int 0x80 is refused by the filter where the machine has the entry at all
	case $I386 in
	EPERM) ok 0 "$M a 32-bit (i386) system call is refused with EPERM" ;;
	unsupported*) skip 1 "this machine has no int 0x80 entry (the probe's int 0x80 got signal ${I386##*-}); the filter's refusal of i386 is checked by tests/unit/test_policy.c, of x32 by x32_getpid above" ;;
	*) ok 1 "$M a 32-bit (i386) system call is refused with EPERM"; diag "got: $I386" ;;
	esac

	wrun -- sh -c 'grep -E "^(Seccomp|NoNewPrivs):" /proc/self/status'
	line_like "$OUT" '^Seccomp:[[:space:]]+2$' "$M the job runs under a seccomp filter (Seccomp: 2)"
	line_like "$OUT" '^NoNewPrivs:[[:space:]]+1$' "$M no_new_privs is set"

	# real programs
	wrun -- unshare -U true
	isnt "$RC" 0 "$M unshare -U fails in the cell"
	like "$ERR" 'Operation not permitted' "$M unshare -U says Operation not permitted"
	wrun --user 0 -- unshare -Ur true
	like "$ERR" 'Operation not permitted' "$M unshare -Ur as --user 0 says Operation not permitted"
	wrun --user 0 -- sh -c 'mkdir -p /tmp/m && mount -t tmpfs none /tmp/m'
	isnt "$RC" 0 "$M mount -t tmpfs fails as --user 0"
	like "$ERR" '[Pp]ermission denied|not permitted' "$M mount -t tmpfs is refused (permission)"
	wrun -- /usr/bin/python3 -c 'import fcntl,termios; fcntl.ioctl(0, termios.TIOCSTI, b"x")'
	like "$ERR" 'PermissionError: \[Errno 1\] Operation not permitted' "$M python's ioctl(TIOCSTI) fails with EPERM"

	# --allow-nested: user namespaces inside, nothing else of the profile lifted
	wrun --allow-nested -- unshare -Ur id -u
	is "$RC:$OUT" 0:0 "$M --allow-nested: unshare -Ur id -u works and says 0"
	wrun --allow-nested -- "$PROBE_IN_CELL" clone3 keyctl mount
	is "$(probe_value clone3):$(probe_value keyctl):$(probe_value mount)" ok:EPERM:EPERM \
		"$M --allow-nested: clone3 allowed; keyctl and mount still refused"

	# --seccomp FILE: a profile of one's own
	prof=$TEST_SCRATCH/$mode.profile
	printf '# mine\ndefault allow\ndeny mkdir EACCES\ndeny mkdirat EACCES\n' >"$prof"
	chmod 644 "$prof"
	wrun --seccomp "$prof" -- "$PROBE_IN_CELL" keyctl
	is "$(probe_value keyctl)" ok "$M --seccomp FILE replaces the default profile (keyctl allowed)"
	wrun --seccomp "$prof" -- mkdir "$WORK/nope"
	like "$RC:$ERR" '^1:.*Permission denied' "$M --seccomp FILE: its 'deny mkdir EACCES' refuses mkdir with EACCES"
	wr run --seccomp-print
	is "$RC" 0 "$M --seccomp-print exits 0"
	printf '%s\n' "$OUT" >"$TEST_SCRATCH/$mode.default"
	chmod 644 "$TEST_SCRATCH/$mode.default"
	wrun --seccomp "$TEST_SCRATCH/$mode.default" -- "$PROBE_IN_CELL" keyctl clone3 personality_addr_no_randomize
	is "$(probe_value keyctl):$(probe_value clone3):$(probe_value personality_addr_no_randomize)" EPERM:ENOSYS:EPERM \
		"$M what --seccomp-print prints, given back with --seccomp, is the default profile"

	# ---- capabilities, rlimits
	wrun -- sh -c 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status'
	is "$(tr -s '\t\n' ' ' <<<"$OUT")" "CapInh: 0000000000000000 CapPrm: 0000000000000000 CapEff: 0000000000000000 CapBnd: 0000000000000000 CapAmb: 0000000000000000 " \
		"$M the run user holds no capability in any set (bounding included)"
	wrun --user 0 -- sh -c 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status'
	eff=$(awk '$1 == "CapEff:" { print $2 }' <<<"$OUT")
	is "$eff" 00000000200405fb "$M --user 0: effective set is chown,dac_override,fowner,fsetid,kill,setgid,setuid,setpcap,net_bind_service,sys_chroot,audit_write"
	bad=0
	for bit in 21 12 16 13 27 19 17; do	# SYS_ADMIN NET_ADMIN SYS_MODULE NET_RAW MKNOD SYS_PTRACE SYS_RAWIO
		for set in CapEff CapPrm CapBnd; do
			v=$(awk -v s="$set:" '$1 == s { print $2 }' <<<"$OUT")
			[ -n "$v" ] && (( (16#$v >> bit) & 1 )) && bad=1
		done
	done
	ok $bad "$M --user 0 holds no CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_SYS_MODULE, CAP_NET_RAW, CAP_MKNOD, CAP_SYS_PTRACE, CAP_SYS_RAWIO (effective, permitted, bounding)" || diag "$OUT"
	line_like "$OUT" '^CapInh:[[:space:]]+0+$' "$M --user 0: inheritable set empty"
	line_like "$OUT" '^CapAmb:[[:space:]]+0+$' "$M --user 0: ambient set empty"

	wrun -- sh -c 'ulimit -c; ulimit -Hc; ulimit -n; ulimit -Hn'
	mapfile -t lim <<<"$OUT"
	is "${lim[0]:-}:${lim[1]:-}" 0:0 "$M core dumps are off (RLIMIT_CORE 0, hard 0)"
	is "${lim[2]:-}" 1024 "$M RLIMIT_NOFILE soft limit is 1024"
	[[ ${lim[3]:-x} =~ ^[0-9]+$ ]] && [ "${lim[3]}" -ge 1024 ] && [ "${lim[3]}" -le 524288 ]
	ok $? "$M RLIMIT_NOFILE hard limit is between 1024 and 524288 (${lim[3]:-})"
	wrun -- sh -c 'ulimit -n 4096 && ulimit -n'
	is "$OUT" 4096 "$M the job may raise its soft RLIMIT_NOFILE up to the hard limit"
	# (the hard limit: a sanitizer build of warren lowers its own soft limit at start)
	bounded "${RUNNER[@]}" sh -c 'ulimit -c 12345 && exec "$@"' sh "$WARREN" run --state "$STATE" --work "$WORK" --core -- sh -c 'ulimit -Hc'
	is "$OUT" 12345 "$M --core keeps the caller's RLIMIT_CORE"

	# ---- masked kernel files, read-only /proc/sys, /sys
	wrun --user 0 -- sh -c 'for f in /proc/kcore /proc/keys /proc/timer_list /proc/sched_debug /proc/key-users; do
		if [ -e "$f" ] && [ -s "$f" ]; then echo "readable: $f"; fi
		if [ -e "$f" ] && head -c 1 "$f" 2>/dev/null | grep -q .; then echo "has content: $f"; fi
	done; echo done'
	is "$OUT" done "$M /proc/kcore, keys, timer_list, sched_debug, key-users are unreadable or empty (masked)"
	wrun -- stat -c '%F %t:%T' /proc/keys /proc/timer_list
	is "$(tr '\n' ' ' <<<"$OUT")" "character special file 1:3 character special file 1:3 " \
		"$M /proc/keys and /proc/timer_list are /dev/null (1:3) in the cell"
	wrun --user 0 -- sh -c 'echo b > /proc/sysrq-trigger'
	isnt "$RC" 0 "$M writing /proc/sysrq-trigger fails (even as --user 0)"
	wrun --user 0 -- sh -c 'echo 1 > /proc/sys/vm/drop_caches'
	like "$ERR" 'Read-only file system' "$M writing /proc/sys/vm/drop_caches fails: Read-only file system"
	wrun --user 0 -- sh -c 'echo 5000 > /proc/sys/kernel/ns_last_pid'
	like "$ERR" 'Read-only file system' "$M writing /proc/sys/kernel/ns_last_pid fails: Read-only file system"
	wrun -- sh -c 'grep -E " /proc/(sys|irq|bus|fs) " /proc/self/mountinfo | awk "{ print \$5, \$6 }" | sort'
	like "$(tr '\n' ' ' <<<"$OUT")" '^/proc/bus ro,[^ ]* /proc/fs ro,[^ ]* /proc/irq ro,[^ ]* /proc/sys ro,' \
		"$M /proc/sys, /proc/irq, /proc/bus and /proc/fs are mounted read-only"
	wrun -- sh -c 'ls -A /sys/firmware | wc -l; ls /proc/acpi 2>/dev/null | wc -l'
	is "$(tr '\n' ' ' <<<"$OUT")" "0 0 " "$M /sys/firmware and /proc/acpi are empty"
	wrun --user 0 -- sh -c 'touch /sys/x; touch /sys/kernel/x'
	like "$ERR" 'Read-only file system.*Read-only file system' "$M /sys is read-only"
	# /sys is a sysfs of the cell's own network namespace: the host's interfaces are not in it
	HOST_IFS=$(ls /sys/class/net | grep -vx lo | tr '\n' ' ')
	if [ -n "$HOST_IFS" ]; then
		ok 0 "$M the host has interfaces besides lo ($HOST_IFS: the premise of the next test)"
	else
		skip 1 "the host has no interface besides lo (check-v2's guest): the next test cannot tell the cell's sysfs from the host's here"
	fi
	wrun -- sh -c 'stat -fc %T /sys; { ls /sys/class/net; ls /sys/devices/virtual/net; } | sort -u | tr "\n" " "'
	is "$OUT" $'sysfs\nlo ' "$M /sys is a sysfs of the cell's network namespace: class/net and devices/virtual/net list lo alone"
	if [ "$mode" = user ]; then
		# where the kernel refuses a rootless cell a sysfs of its own (a mount of the host's
		# hides a part of /sys: a tmpfs on /sys/kernel, in a mount namespace of the test's), the
		# host's /sys is bound instead: read-only, its cgroup trees and firmware hidden
		bounded unshare -m --propagation private sh -c 'mount -t tmpfs none /sys/kernel && exec "$@"' sh "${RUNNER[@]}" \
			"$WARREN" run --state "$STATE" --work "$WORK" -- sh -c 'ls /sys/class/net | grep -vxc lo; ls -A /sys/fs/cgroup /sys/firmware | grep -c .; touch /sys/x'
		is "$(head -2 <<<"$OUT" | tr '\n' ' ')/$(grep -c 'Read-only file system' <<<"$ERR")" "$(ls /sys/class/net | grep -vxc lo) 2 /1" \
			"$M a host /sys the kernel will not give a rootless cell a sysfs of its own beside: the host's, read-only, cgroups and firmware hidden"
	else
		skip 1 "root: init may always mount a sysfs"
	fi
	wrun --no-sys -- sh -c 'ls -A /sys | wc -l; test -e /sys/fs/cgroup && echo cgroups-visible'
	is "$OUT" 0 "$M --no-sys: /sys is empty (nothing of the kernel's below it)"

	# ---- /sys/fs/cgroup: the run's own cgroup only, read-only (none rootless)
	if [ "$mode" = root ]; then
		wrun --memory 64m --pids 50 -- cat "/sys/fs/cgroup/$CG_MEM" "/sys/fs/cgroup/$CG_PIDS"
		is "$(tr '\n' ' ' <<<"$OUT")" "67108864 50 " "$M --memory 64m --pids 50: the cell reads its limits in /sys/fs/cgroup/$CG_MEM and $CG_PIDS ($CG_LAYOUT host)"
		wrun --memory 64m -- sh -c 'find /sys/fs/cgroup -name "run_*"; find /sys/fs/cgroup -mindepth 2 -type d; grep -v ":/\$" /proc/self/cgroup; echo end'
		is "$OUT" end "$M /sys/fs/cgroup holds the run's own cgroup only (no run_*, no group below it; /proc/self/cgroup all /)"
		wrun -- sh -c 'grep -E " - cgroup2? " /proc/self/mountinfo | awk "{ print \$4, substr(\$5, 1, 14), substr(\$6, 1, 3) }" | sort -u'
		is "$(tr '\n' ' ' <<<"$OUT")" "/ /sys/fs/cgroup ro, " "$M every cgroup mount in the cell's mountinfo is the run's own (root /), read-only, under /sys/fs/cgroup"
		wrun --user 0 --memory 64m -- sh -c "echo 1 > /sys/fs/cgroup/$CG_MEM; echo \$\$ > /sys/fs/cgroup/$(dirname "$CG_MEM")/cgroup.procs; mkdir /sys/fs/cgroup/x"
		like "$ERR" 'Read-only file system.*Read-only file system.*Read-only file system' "$M --user 0 cannot write the limit, cgroup.procs or a new group: Read-only file system"
		# on the host, while it runs: another host user cannot read the run's figures
		wr_bg run --work "$WORK" --memory 64m -- sh -c 'hostname > cg-ready; while [ -e cg-ready ]; do sleep 0.1; done'
		for _ in $(seq 100); do [ -s "$WORK/cg-ready" ] && break; sleep 0.1; done
		cgdir=$(ls -d /sys/fs/cgroup/$(dirname "$CG_MEM")/warren/"$(cat "$WORK/cg-ready" 2>/dev/null)".* 2>/dev/null | head -n 1)
		[ -f "$cgdir/$(basename "$CG_MEM")" ] && ! setpriv --reuid=65534 --regid=65534 --clear-groups cat "$cgdir/$(basename "$CG_MEM")" >/dev/null 2>&1
		ok $? "$M on the host another user cannot read the running run's $cgdir"
		rm -f "$WORK/cg-ready"
		wait_bg "$BG_PID"
	else
		wrun -- sh -c 'ls -A /sys/fs/cgroup | wc -l; mkdir /sys/fs/cgroup/x'
		is "$OUT" 0 "$M rootless: /sys/fs/cgroup is empty (the run has no cgroup of its own; nothing of the host's)"
		like "$ERR" 'Read-only file system|No such file or directory' "$M rootless: nothing can be created in /sys/fs/cgroup (a read-only sysfs's empty mount point)"
		skip 3 "rootless: the run has no cgroup of its own on this host to show"
	fi

	# ---- Landlock: writes the file system's permissions would allow, refused
	wrun --require-landlock -- sh -c 'touch /tmp/a /var/tmp/a "$HOME/a" ./landlock-ok /dev/shm/a && echo x > /dev/null && echo wrote'
	is "$OUT" wrote "$M --require-landlock: the worktree, /tmp, /var/tmp, \$HOME, /dev/shm and /dev/null are writable"
	rm -f "$WORK/landlock-ok"
	if [ "$mode" = user ]; then
		# rootless: /run and /home are tmpfs mounts of the cell, read-write and owned by the run
		# user, yet outside what the run may write: only Landlock stands in the way
		wrun -- sh -c 'stat -c "%u %a" /run; grep -E "^[^ ]+ /run tmpfs rw" /proc/mounts | wc -l; touch /run/x; mkdir /home/y'
		read -r run_owner run_mode <<<"$(sed -n 1p <<<"$OUT")"
		is "${run_owner:-}:$(sed -n 2p <<<"$OUT")" "$JOB_UID:1" "$M /run is the run user's and mounted read-write (the permissions would allow a write)"
		like "$ERR" "touch: cannot touch .*/run/x.*: Permission denied" "$M Landlock refuses a file in /run (EACCES)"
		like "$ERR" "mkdir: cannot create directory .*/home/y.*: Permission denied" "$M Landlock refuses a directory in /home (EACCES)"
	else
		skip 3 "root mode: every read-write mount outside the allowed set belongs to an id outside the cell, so permissions refuse first (the rootless run shows Landlock alone)"
	fi

	# ---- the worktree: .git/hooks and .git/config read-only, --protect
	GW=$TEST_SCRATCH/$mode-git
	rm -rf "$GW"
	git init -q "$GW"
	rm -rf "$GW/.git/hooks"
	printf 'export X=1\n' >"$GW/.envrc"
	mkdir -p "$GW/.vscode"
	printf '{}\n' >"$GW/.vscode/tasks.json"
	[ "$mode" = user ] && chown -R "$TEST_USER_UID:$TEST_USER_GID" "$GW"
	chmod 755 "$GW"
	wr run --work "$GW" --protect .envrc --protect ./.vscode/ -- sh -c '
		echo "#!/bin/sh" > .git/hooks/pre-commit && echo planted-hook
		echo "[core]" >> .git/config && echo planted-config
		mv .git .git-moved && echo moved-git
		mv .git/hooks .git/hooks-x && echo moved-hooks
		echo x >> .envrc && echo wrote-envrc
		echo x > .vscode/tasks.json && echo wrote-vscode
		echo y > notes.txt && echo wrote-notes
		git -c user.name=t -c user.email=t@example.org add notes.txt &&
		git -c user.name=t -c user.email=t@example.org commit -q -m "in the cell" && echo committed'
	is "$(tr '\n' ' ' <<<"$OUT")" "wrote-notes committed " \
		"$M only notes.txt and the commit got through: hooks, config, .git itself, .envrc, .vscode held"
	like "$ERR" "pre-commit: Read-only file system" "$M .git/hooks/pre-commit: Read-only file system"
	like "$ERR" "config: Read-only file system" "$M .git/config: Read-only file system"
	like "$ERR" "Device or resource busy" "$M .git cannot be renamed away (it is a mount point in the cell)"
	[ -d "$GW/.git/hooks" ] && [ -z "$(ls -A "$GW/.git/hooks")" ] && [ ! -e "$GW/.git-moved" ]
	ok $? "$M on the host: .git/hooks exists (created empty by warren), nothing planted, .git in place"
	is "$(git -c safe.directory='*' -C "$GW" log --format=%s -1 2>&1)" "in the cell" "$M on the host: the commit made in the cell is there"
	is "$(cat "$GW/.envrc")" "export X=1" "$M on the host: --protect .envrc kept it unchanged"
	wr run --work "$GW" --protect /etc/passwd -- true
	is "$RC" 125 "$M --protect /abs is refused (exit 125)"
	like "$ERR" "relative to the worktree" "$M --protect /abs says the path must be relative to the worktree"

	# ---- `warren policy`: the same answer as the kernel's
	paths="/tmp/p1 /var/tmp/p2 /home/$JOB_USER/p3 $GW/p4 /dev/shm/p5 /dev/null /dev/p6 /etc/p7 /usr/p8
		/proc/sys/kernel/domainname /sys/kernel/p9 $GW/.git/hooks/p10 $GW/.git/config $GW/.envrc
		/run/p11 /home/p12 /proc/self/comm $GW/sub/../p13"
	mkdir -p "$GW/sub" && [ "$mode" = user ] && chown "$TEST_USER_UID:$TEST_USER_GID" "$GW/sub"
	wr run --work "$GW" --protect .envrc -- sh -c 'for p; do if (: >> "$p") 2>/dev/null; then echo "ok $p"; else echo "no $p"; fi; done' sh $paths
	is "$RC" 0 "$M a job tried to write $(wc -w <<<"$paths") paths"
	rid=$(basename "$(last_rundir)")
	disagree=()
	while read -r got p; do
		[ -n "$p" ] || continue
		bounded "${RUNNER[@]}" "$WARREN" policy --state "$STATE" "$rid" "$p" --write
		case $got:$RC in ok:0 | no:1) ;; *) disagree+=("$p: kernel $got, warren policy exit $RC: $OUT") ;; esac
	done < <(printf '%s\n' "$OUT")
	ok ${#disagree[@]} "$M warren policy RUN PATH --write agrees with the kernel on every path (EROFS, EACCES, allowed)" ||
		diag "${disagree[@]}"
	wr policy "$rid" /opt/cache/x
	is "$RC" 1 "$M warren policy: a denied write exits 1"
	like "$OUT" "^denied: /opt/cache/x is outside $rid — it may write under \\\$TMPDIR=/tmp \\(a tmpfs of the run's own, reclaimed when the run ends\\), its home /home/$JOB_USER and the worktree $GW\$" \
		"$M warren policy: the refusal names where the run may write (TMPDIR in its own tmpfs, home, worktree)"
	wr run --work "$GW" --scratch none -- true
	rid2=$(basename "$(last_rundir)")
	wr policy "$rid2" /opt/cache/x
	like "$OUT" "it may write under \\\$TMPDIR=/tmp \\(host: $STATE/runs/$rid2/tmp, reclaimed when the run ends\\)" \
		"$M ... and with --scratch none, the host path of its scratch"
	wr policy "${rid#run_}" /tmp/x --write
	is "$RC:$OUT" 0:allowed "$M warren policy: /tmp/x is allowed (exit 0); RUN may be an id's prefix"
	# a regression fails here: spec.json must record the --protect paths warren policy answers from
	wr policy "$rid" .envrc
	[ "$(jget "$STATE/runs/$rid/spec.json" 'd.get("policy", {}).get("protect")')" = '[".envrc"]' ] &&
		[[ $RC:$OUT =~ ^1:denied:\ $GW/.envrc\ is\ read-only\ in\ $rid\ \(protected ]]
	ok $? "$M warren policy: a --protect path of the run (recorded in spec.json) is denied" || diag "rc $RC: $OUT"
	wr policy "$rid" /etc/hostname --read; r1=$RC
	wr policy "$rid" /dev/shm/x --exec
	is "$r1:$RC" 0:1 "$M warren policy --read /etc/hostname is allowed, --exec /dev/shm/x is not (noexec)"
	wr policy no-such-run /tmp/x
	is "$RC" 125 "$M warren policy of an unknown run exits 125"

	# ---- file descriptors: only 0, 1, 2 (and the listing's own)
	bounded "${RUNNER[@]}" bash -c 'exec 7</dev/null 8>/dev/null; exec "$@"' sh "$WARREN" run --state "$STATE" --work "$WORK" -- \
		sh -c 'ls /proc/self/fd | tr "\n" " "; echo; /usr/bin/python3 -c "import os; print(sorted(os.listdir(\"/proc/self/fd\")))"'
	mapfile -t fdl <<<"$OUT"
	is "${fdl[0]:-}" "0 1 2 3 " "$M ls /proc/self/fd in the cell: 0 1 2 and its own 3 (the caller's 7 and 8 did not leak)"
	is "${fdl[1]:-}" "['0', '1', '2', '3']" "$M python's listing of /proc/self/fd: 0 1 2 3"

	# ---- the caller's stdin, stdout or stderr closed: /dev/null in their place, not the
	# first file warren opens (the worktree's descriptor was the job's stdin, ".." from it the
	# host's tree where Landlock is missing; the job's output went into that file)
	bounded "${RUNNER[@]}" bash -c '"$@" <&-' sh "$WARREN" run --state "$STATE" --work "$WORK" -- \
		sh -c 'readlink /proc/self/fd/0; cat; echo "cat=$?"'
	is "$RC:$OUT" "0:/dev/null"$'\n'"cat=0" "$M stdin closed: the job's stdin is /dev/null, nothing of the host's" || diag "$ERR"
	bounded "${RUNNER[@]}" bash -c '"$@" >&- 2>&-' sh "$WARREN" run --state "$STATE" --work "$WORK" -- \
		sh -c 'echo out; echo err >&2'
	rd=$(last_rundir)
	is "$RC:$(jget "$rd/result.json" 'd["output_bytes"]'):$(jget "$rd/spec.json" 'd["id"]')" "0:8:$(basename "$rd")" \
		"$M stdout and stderr closed: the run ends 0, its 8 bytes of output counted, its record whole" || diag "$ERR"

	# the state is clean
	x=$(state_clean); ok $? "$M nothing of the runs is left on the host" || diag "$x"
done

# ---------------------------------------------------------------- options (root mode)

use_mode root
printf 'deny getpid\ndeny nosuchcall\n' >"$TEST_SCRATCH/bad.profile"
wrun --seccomp "$TEST_SCRATCH/bad.profile" -- true
is "$RC" 125 "a profile naming an unknown call is refused (exit 125)"
like "$ERR" "bad.profile, line 2: 'nosuchcall' is not a system call" "the refusal names the file, the line and the word"
one_warren_line "the refusal is one line starting with 'warren: '"
wr run --allow-nested --seccomp-print
like "$OUT" $'\n# lifted by --allow-nested: deny clone3 ENOSYS\n' "--allow-nested --seccomp-print shows clone3's rule lifted"

# a mount of the host that cannot be an overlay's layer (an overlay of an overlay: the kernel
# stacks two deep), in a mount namespace of this test's own: no cell, rather than a bind that
# would show the host's sockets there
O=$TEST_SCRATCH/ovl
mkdir -p "$O/a" "$O/b" "$O/c" "$O/m1" "$O/m2"
bounded unshare -m sh -c 'mount --make-rprivate / && mount -t overlay o -o "lowerdir=$1/a:$1/b" "$1/m1" &&
	mount -t overlay o -o "lowerdir=$1/m1:$1/c" "$1/m2" && shift && exec "$@"' _ "$O" "$WARREN" run --state "$STATE" --work "$WORK" -- true
is "$RC" 125 "an overlay of an overlay on the host: no cell (exit 125)"
line_like "$ERR" "^warren: cannot show the host's $O/m2 \\(overlay\\) to the cell through an overlay: Invalid argument; warren does not bind it instead, .*--rootfs IMAGE" \
	"the refusal names the mount, the reason and the way out"

# ---------------------------------------------------------------- on an image (--rootfs)

IMG=$(image_busybox) || bail_out "cannot build the busybox image"
for mode in root user; do
	use_mode "$mode"
	M="[$mode --rootfs busybox]"
	PROBE_IN_CELL=$WORK/probe
	wrun --rootfs "$IMG" -- "$PROBE_IN_CELL" keyctl unshare_user clone3 mount tiocsti personality_addr_no_randomize x32_getpid
	is "$(tr '\n' ' ' <<<"$OUT")" "keyctl=EPERM unshare_user=EPERM clone3=ENOSYS mount=EPERM tiocsti=EPERM personality_addr_no_randomize=EPERM x32_getpid=EPERM " \
		"$M the seccomp profile holds on an image"
	wrun --rootfs "$IMG" -- sh -c 'grep -E "^Cap(Eff|Bnd):" /proc/self/status | tr -s "\t\n" "  "'
	is "$OUT" "CapEff: 0000000000000000 CapBnd: 0000000000000000 " "$M the run user holds no capability"
	wrun --rootfs "$IMG" --user 0 -- sh -c 'grep -E "^CapEff:" /proc/self/status | tr -s "\t" " "'
	is "$OUT" "CapEff: 00000000200405fb" "$M --user 0 holds the documented set"
	wrun --rootfs "$IMG" -- sh -c 'stat -c "%t:%T" /proc/keys; echo 1 > /proc/sys/vm/drop_caches'
	is "$OUT" "1:3" "$M /proc/keys is masked"
	like "$ERR" "Read-only file system" "$M /proc/sys is read-only"
	if [ "$mode" = root ]; then
		wrun --rootfs "$IMG" --user 0 -- sh -c 'echo hi > /etc/motd && mkdir -p /opt/x && cat /etc/motd'
		is "$OUT" hi "$M --user 0 may write the overlay root (Landlock allows the whole root with --rootfs)"
	else
		skip 1 "rootless: the image's files belong to ids outside the cell, so even --user 0 may not write them"
	fi
	wrun --rootfs "$IMG" -- sh -c 'ls /proc/self/fd | tr "\n" " "'
	is "$OUT" "0 1 2 3 " "$M ls /proc/self/fd: 0 1 2 3"
	wrun --rootfs "$IMG" --no-sys -- sh -c 'ls -A /sys | wc -l'
	is "$OUT" 0 "$M --no-sys: /sys is empty"
	wrun --rootfs "$IMG" -- sh -c 'ulimit -c; ulimit -n'
	is "$(tr '\n' ' ' <<<"$OUT")" "0 1024 " "$M core dumps off, RLIMIT_NOFILE 1024"
	x=$(state_clean); ok $? "$M nothing of the runs is left on the host" || diag "$x"
done
