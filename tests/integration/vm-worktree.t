#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vm-worktree.t - the worktree's contract in both drivers (issue 34, point 5): the same job
# (a new file, an existing one appended to, a 0600 file of the owner's written, a directory,
# a script made executable and run, a chmod) gives the same result on the host with
# --driver container and --driver vm: the same contents, owners and modes, the new files the
# worktree owner's, and the job sees the same owners inside. As root with a worktree of a
# normal user's, as root with root's own 0700 worktree, and rootless. The VM's qemu serves
# the worktree through an idmapped copy (vm/vmjail.c): it acts as the owner there, and only
# there: a process in qemu's namespaces with qemu's ids (nsenter) reads and writes the owner's
# files through the share, but not the owner's 0600 file outside the worktree, and writes
# nowhere else; a guest root cannot read that file either. A worktree whose file system
# cannot be idmapped (ramfs) and that qemu's ids cannot read is refused in one line.
#
# Slow but real: each VM is a whole kernel booted under TCG; 5 boots.
. "$(dirname "$0")/../lib.sh"

T_TIMEOUT=180

command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed (qemu-system-x86)"
ls /boot/vmlinuz-* >/dev/null 2>&1 || skip_all "no /boot/vmlinuz-* (linux-image-amd64)"
[ -x "$(dirname "$WARREN")/warren-guest-init" ] || bail_out "no warren-guest-init beside $WARREN: build it with make"
command -v nsenter >/dev/null || skip_all "nsenter is not installed (util-linux)"

plan 27

# tree DIR UID GID MODE: the worktree before the job, the owner's
tree() {
	mkdir -p "$1/sub"
	echo old >"$1/old.txt"
	echo keep >"$1/keep.txt"
	echo x >"$1/sub/x"
	chmod 644 "$1/old.txt"
	chmod 640 "$1/keep.txt"
	chmod 750 "$1/sub"
	chmod 600 "$1/sub/x"
	chown -R "$2:$3" "$1"
	chmod "$4" "$1"
}

# snap DIR: what the host sees of it: each path's owner, group, mode, type and size, then
# the contents
snap() {
	(cd "$1" && find . -printf '%p %U %G %m %y %s\n' | sort && cat old.txt keep.txt sub/x new.txt d/f s.sh)
}

# the job: the same in both drivers, in the worktree given as $1; it says what it sees
# shellcheck disable=SC2016 # (the job's shell expands it)
JOB='cd "$1" && echo new >new.txt && echo more >>old.txt && echo y >>sub/x && mkdir d && echo in >d/f &&
	printf "#!/bin/sh\necho ran\n" >s.sh && chmod +x s.sh && ./s.sh && chmod 600 new.txt &&
	stat -c "%n %u %g %a" . old.txt keep.txt sub/x new.txt d d/f s.sh'

umask 022
# same_job NAME OWNER_UID OWNER_GID MODE: the job in a container and in a VM, each on a fresh
# copy of the tree; 4 tests + 1 (nothing left of the VM)
same_job() {
	local name=$1 ou=$2 og=$3 mode=$4 base ct vm ct_out ct_snap
	base=$TEST_SCRATCH/$name
	mkdir -p "$base" && chmod 755 "$base"
	ct=$base/ct vm=$base/vm
	tree "$ct" "$ou" "$og" "$mode"
	tree "$vm" "$ou" "$og" "$mode"
	wr run --work "$ct" --driver container -- sh -c "$JOB" _ "$ct"
	is "$RC $(head -n 1 <<<"$OUT")" "0 ran" "$M the job writes the worktree in a container" || diag "$ERR"
	ct_out=$OUT ct_snap=$(snap "$ct")
	wr run --work "$vm" --driver vm -- sh -c "$JOB" _ "$vm"
	is "$RC $OUT" "0 $ct_out" "$M and in a VM, where it sees the same owners and modes" || diag "$ERR"
	nothing_left "$(last_rundir)" "$M nothing of the VM is left"
	is "$(snap "$vm")" "$ct_snap" "$M the host sees the same worktree after either (contents, owners, modes)"
	is "$(stat -c '%u %g %a' "$vm/new.txt" "$vm/d" "$vm/s.sh" | tr '\n' ' ')" "$ou $og 600 $ou $og 755 $ou $og 755 " \
		"$M the VM's new file, directory and script are the worktree owner's ($ou:$og)"
	rm -rf "$base"
}

# wall OWNER_UID OWNER_GID MODE: a VM whose job (guest root: a job that took the guest kernel
# has no less) waits; a process in qemu's user and mount namespaces with qemu's ids stands for
# a guest that broke into qemu. 5 tests
wall() {
	local ou=$1 og=$2 mode=$3 base w priv qpid inside out
	base=$TEST_SCRATCH/wall-$ou
	w=$base/work priv=$base/priv
	mkdir -p "$base" && chmod 755 "$base"
	tree "$w" "$ou" "$og" "$mode"
	mkdir -p "$priv"
	echo owner-secret >"$priv/secret"
	chmod 600 "$priv/secret"
	chown -R "$ou:$og" "$priv"
	chmod 700 "$priv"
	wr_bg run --work "$w" --driver vm --user 0 -- sh -c 'cat '"$priv/secret"' 2>/dev/null || echo guest-refused; echo ready
		i=0; while ! test -e '"$w"'/go && [ $i -lt 1500 ]; do sleep 0.1; i=$((i + 1)); done'
	wait_for 150 grep -qs '^ready$' "$BG_OUT"
	qpid=$(procs_matching "$(last_rundir)" | while read -r p; do [[ $(readlink "/proc/$p/exe") == *qemu-system* ]] && echo "$p"; done | head -n 1)
	inside=$(awk '{ print $1; exit }' "/proc/$qpid/uid_map" 2>/dev/null)
	# shellcheck disable=SC2016 # (the probe's shell expands it)
	out=$(nsenter -t "$qpid" -U -m -S "$inside" -G "$inside" -- /bin/sh -c '
		cat /tmp/.warren-shares/work/sub/x 2>&1 | head -n 1; echo probe >/tmp/.warren-shares/work/probe 2>&1 && echo wrote
		cat "$1/secret" 2>&1; echo x >"$1/x" 2>&1 || :; echo x >"$2/x" 2>&1 || :' _ "$priv" "$base" 2>&1)
	touch "$w/go"
	wait_bg "$BG_PID"
	is "$RC $(head -n 1 "$BG_OUT")" "0 guest-refused" "$M owner $ou: guest root cannot read the owner's 0600 file outside the worktree" ||
		diag "$(cat "$BG_ERR")"
	mapfile -t L <<<"$out"
	is "${L[0]:-} ${L[1]:-}" "x wrote" "$M owner $ou: qemu's ids read the owner's 0600 file through the worktree's share and write there (the probe is qemu's equal)" ||
		diag "$out"
	is "$(stat -c '%u %g' "$w/probe" 2>&1)" "$ou $og" "$M owner $ou: what qemu writes there is the owner's on the host"
	like "${L[2]:-}" "secret: Permission denied$" "$M owner $ou: qemu's ids cannot read the owner's 0600 file outside the worktree" ||
		diag "$out"
	is "$(ls -A "$priv" | tr '\n' ' ')/$(ls -A "$base" | tr '\n' ' ')" "secret /priv work " \
		"$M owner $ou: nor write outside it (the owner's directory, another one)" || diag "$out"
	rm -rf "$base"
}

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	if [ "$mode" = root ]; then
		same_job user-owned "$TEST_USER_UID" "$TEST_USER_GID" 755
		same_job root-owned 0 0 700
		wall "$TEST_USER_UID" "$TEST_USER_GID" 755
		wall 0 0 700
		# a file system that takes no idmapped mount (ramfs), closed to qemu's ids: refused
		# before the guest boots, naming the uid
		rf=$TEST_SCRATCH/ramfs
		mkdir -p "$rf"
		mount -t ramfs ramfs "$rf"
		chmod 700 "$rf"
		wr run --work "$rf" --driver vm -- true
		umount "$rf"
		is "$RC" 125 "$M a worktree qemu's uid cannot read, on a file system without idmapped mounts: 125"
		like "$ERR" "qemu runs as uid 1000001000, which cannot read the worktree $rf \(Permission denied: its file system cannot be idmapped to that uid\); chown it to 1000001000" \
			"$M and warren says which uid needs what"
	else
		same_job own "$TEST_USER_UID" "$TEST_USER_GID" 755
	fi
done
