#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# mounts.t - the cell's extra mounts and names (issue 14): --ro-bind (a cache readable, a write
# to it refused with EROFS and recorded as a refused write), --bind (writes reach the host's
# directory), --externals at /opt/warren/externals, --work none, --work-ro (refused writes name
# $TMPDIR, not the worktree), --workdir, --hostname, the job file's keys; what is refused with
# one line (a symlink to a system tree, a system tree read-write, /proc read-only, a relative
# or hidden destination, a symlink on the way owned by someone else); with --rootfs the
# destination made in the overlay and an image's symlinks unable to lead a mount onto the
# host or /proc. As root and as an unprivileged user; nothing left on the host.
. "$(dirname "$0")/../lib.sh"

plan $((143 + 2 * 2))

BB=$(image_busybox) || bail_out "cannot build the busybox image"

# jrun FILE ARGS...: warren job run FILE --state $STATE ARGS..., bounded (RC OUT ERR).
jrun() {
	local f=$1; shift
	bounded "${RUNNER[@]}" "$WARREN" job run "$f" --state "$STATE" "$@"
}

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	D=$TEST_SCRATCH/m-$mode
	mkdir_for_mode "$D"
	mkdir_for_mode "$D/cache"
	mkdir_for_mode "$D/out"
	echo cached >"$D/cache/f"
	[ "$mode" = user ] && chown "$TEST_USER_UID:$TEST_USER_GID" "$D/cache/f"
	chmod 644 "$D/cache/f"

	# ---- --ro-bind: readable, a write refused and recorded
	wrun --ro-bind "$D/cache:/opt/cache" -- sh -c 'cat /opt/cache/f; echo x > /opt/cache/g; echo "write=$?"'
	line_like "$OUT" '^cached$' "$M --ro-bind: the cache is readable at its destination"
	line_like "$ERR" 'cannot create /opt/cache/g: Read-only file system' "$M --ro-bind: a write to it fails with EROFS"
	line_like "$OUT" '^write=[1-9]' "$M --ro-bind: the job sees the write fail"
	rd=$(last_rundir)
	is "$(jget "$rd/result.json" '[w["path"] for w in d["refused_writes"]]')" '["/opt/cache/g"]' \
		"$M --ro-bind: the refused write is recorded in result.json"
	test ! -e "$D/cache/g"; ok $? "$M --ro-bind: nothing was written to the host's directory"
	is "$(jget "$rd/spec.json" '[(m["source"], m["destination"], m["read_only"], m["kind"]) for m in d["mounts"]]')" \
		"[[\"$D/cache\", \"/opt/cache\", true, \"bind\"]]" "$M spec.json lists the mount: source, destination, read_only, kind"
	nothing_left "$rd" "$M --ro-bind: nothing left of the run (no mount, no mount point on the host)"
	test ! -e /opt/cache; ok $? "$M the destination /opt/cache was made in the cell, not on the host"

	# ---- a cache bound in the home: the directories made on its way are the run user's
	wrun --ro-bind "$D/cache:/home/$JOB_USER/.cache/pip" -- sh -c 'cat ~/.cache/pip/f && touch ~/.cache/other && echo own'
	is "$OUT" cached$'\n'own "$M --ro-bind into the home: readable, and ~/.cache stays writable by the run user"

	# ---- a file: bound on a file made in the cell; read-write refused when it has other names
	wrun --ro-bind "$D/cache/f:/etc/warren-cached" -- cat /etc/warren-cached
	is "$RC:$OUT" 0:cached "$M --ro-bind of a file: made at /etc/warren-cached in the cell, readable"
	ln -f "$D/cache/f" "$D/f-link"
	wrun --bind "$D/f-link:/x/f" -- true
	{ [ "$RC" = 125 ] && [[ $ERR == *"1 other hard links"* ]]; }
	ok $? "$M --bind of a file with another hard link is refused" || diag "$ERR"
	rm -f "$D/f-link"

	# ---- root of the cell cannot lift the read-only bind (no capability over the cell's mounts)
	wrun --user 0 --ro-bind "$D/cache:/opt/cache" -- sh -c 'mount -o remount,rw,bind /opt/cache 2>/dev/null; umount -l /opt/cache 2>/dev/null; mount -t tmpfs none /opt/cache 2>/dev/null; echo x > /opt/cache/esc 2>/dev/null; cat /opt/cache/f'
	is "$OUT" cached "$M --user 0: remount, umount and mount over the read-only bind all fail"
	test ! -e "$D/cache/esc"; ok $? "$M --user 0: nothing was written to the host's directory"

	# ---- --bind: writes reach the host
	wrun --bind "$D/out:/data/out" -- sh -c 'echo written > /data/out/w && mkdir /data/out/sub && echo done'
	is "$OUT" done "$M --bind: the job writes to the bound directory"
	is "$(cat "$D/out/w" 2>&1)" written "$M --bind: the write reached the host's directory"
	test ! -e /data; ok $? "$M --bind: /data was made in the cell only"

	# ---- a bound directory with a file system mounted inside it: the cell sees what is mounted
	# there, never what that mount hides on the host (as root the idmapped bind left the mount
	# out: the job read, and could write, the directory under it)
	mkdir_for_mode "$D/withsub"
	mkdir_for_mode "$D/withsub/sub"
	echo hidden >"$D/withsub/sub/under"
	mount -t tmpfs -o mode=0777 warren-test-sub "$D/withsub/sub"
	echo mounted >"$D/withsub/sub/f"
	chmod 666 "$D/withsub/sub/f"
	wrun --bind "$D/withsub:/data/ws" -- sh -c 'ls /data/ws/sub; cat /data/ws/sub/f'
	WS_RC=$RC WS_OUT=$OUT
	wrun --ro-bind "$D/withsub:/data/ws" -- sh -c 'echo x > /data/ws/sub/f'
	WS_RO=$RC
	ws_now=$(cat "$D/withsub/sub/f")
	umount "$D/withsub/sub"
	is "$WS_RC:$WS_OUT" "0:f"$'\n'mounted "$M --bind of a directory with a mount inside it: the cell sees the mount, not what it hides"
	[ "$WS_RO" != 0 ] && [ "$ws_now" = mounted ]
	ok $? "$M --ro-bind of it: the mount inside is read-only too"
	is "$(cat "$D/withsub/sub/under")" hidden "$M ... and the file under the mount was not touched"
	# a kernel's file system below a bind's source (a chroot's /proc): refused, naming it
	mkdir_for_mode "$D/withproc"
	mkdir_for_mode "$D/withproc/chroot"
	mkdir_for_mode "$D/withproc/chroot/proc"
	mount -t proc proc "$D/withproc/chroot/proc"
	wrun --ro-bind "$D/withproc:/data/wp" -- true
	WP_RC=$RC WP_ERR=$ERR
	umount "$D/withproc/chroot/proc"
	{ [ "$WP_RC" = 125 ] && [[ $WP_ERR == *"is on or holds a proc file system (mounted at $D/withproc/chroot/proc)"* ]] &&
		[ "$(printf '%s\n' "$WP_ERR" | wc -l)" = 1 ]; }
	ok $? "$M a bind whose source has /proc mounted below it: refused in one line naming it (the host's processes stay unseen)" || diag "$WP_ERR"
	# ... a source on a kernel's file system (that /proc itself, a directory of a sysfs):
	# refused; and where the cell sees the host's tree, such a mount shows an empty directory
	mkdir_for_mode "$D/withproc/chroot/sys"
	mount -t proc proc "$D/withproc/chroot/proc"
	mount -t sysfs sysfs "$D/withproc/chroot/sys"
	wrun --ro-bind "$D/withproc/chroot/proc:/hp" -- true
	KP_RC=$RC KP_ERR=$ERR
	wrun --ro-bind "$D/withproc/chroot/sys/class/net:/n" -- true
	KS_RC=$RC KS_ERR=$ERR
	wrun -- sh -c "ls -A $D/withproc/chroot/proc $D/withproc/chroot/sys | grep -cv -e : -e '^\$'"
	KV_OUT=$OUT
	umount "$D/withproc/chroot/proc" "$D/withproc/chroot/sys"
	{ [ "$KP_RC:$KS_RC" = 125:125 ] && [[ $KP_ERR == *"is on a kernel's file system"* ]] && [[ $KS_ERR == *"is on a kernel's file system"* ]]; }
	ok $? "$M a bind of a /proc or of a directory of a sysfs mounted elsewhere: refused, naming it" || diag "$KP_ERR" "$KS_ERR"
	is "$KV_OUT" 0 "$M a /proc and a sysfs mounted elsewhere on the host show as empty directories in the cell"
	# ... and a kernel's file bound on a file (a process's command line): an empty file
	bash -c 'exec -a "kfs-marker-$1" sleep 300' _ "$TEST_SCRATCH" &
	kmarker=$!
	touch "$D/withproc/cmdline"
	mount --bind "/proc/$kmarker/cmdline" "$D/withproc/cmdline"
	wrun -- sh -c "wc -c <$D/withproc/cmdline; grep -ac kfs-marker $D/withproc/cmdline"
	KF_RC=$RC KF_OUT=$OUT
	umount "$D/withproc/cmdline"
	kill "$kmarker"
	wait "$kmarker" 2>/dev/null
	is "$KF_RC" 1 "$M a cell reading a proc file bound on a file elsewhere on the host finds no marker (grep exits 1)"
	is "$KF_OUT" $'0\n0' "$M ... the file is empty in the cell (not the host's process's command line)"

	# ---- the caller's umask (077 on a hardened host) is the job's, not that of what warren
	# makes in the cell: passwd and group stay readable, the directories made on a bind's way
	# open, the scratch's modes exact (before, the job could not read /etc/passwd)
	old_umask=$(umask)
	umask 077
	UM_CHECK='id -un; umask; cat /opt/um/deep/f; stat -c %a /etc/passwd /etc/group /opt/um /tmp /var/tmp "$HOME"'
	wrun --ro-bind "$D/cache:/opt/um/deep" -- sh -c "$UM_CHECK"
	UM_RC=$RC UM_OUT=$OUT UM_ERR=$ERR
	wrun --rootfs "$BB" --ro-bind "$D/cache:/opt/um/deep" -- sh -c "$UM_CHECK"
	umask "$old_umask"
	UM_WANT="$JOB_USER"$'\n'0077$'\n'cached$'\n'644$'\n'644$'\n'755$'\n'1777$'\n'1777$'\n'700
	is "$UM_RC:$UM_OUT" "0:$UM_WANT" "$M umask 077: the job reads passwd and group and reaches a bind's made directory; its umask is 077" || diag "$UM_ERR"
	is "$RC:$OUT" "0:$UM_WANT" "$M umask 077 with --rootfs: the same" || diag "$ERR"

	# ---- a bind's destination inside another bind: warren makes no mount point in the host's
	# directory (as root the idmapped bind refused it with EOVERFLOW; rootless it was made)
	mkdir_for_mode "$D/outer"
	wrun --bind "$D/outer:/opt/outer" --ro-bind "$D/cache:/opt/outer/sub/inner" -- true
	{ [ "$RC" = 125 ] && [[ $ERR == *"cannot make the mount point /opt/outer/sub: /opt/outer is the host's directory"* ]]; }
	ok $? "$M a bind inside a bind whose mount point is missing: refused, naming it" || diag "$ERR"
	one_warren_line "$M ... in one line"
	test -z "$(ls -A "$D/outer")"; ok $? "$M ... and nothing was made in the host's directory"

	# ---- --externals
	wrun --externals "$D/cache" -- sh -c 'echo "$WARREN_EXTERNALS"; cat "$WARREN_EXTERNALS/f"; touch "$WARREN_EXTERNALS/x" 2>/dev/null || echo ro'
	is "$OUT" "/opt/warren/externals"$'\n'cached$'\n'ro "$M --externals: at /opt/warren/externals, \$WARREN_EXTERNALS, read-only"

	# ---- refusals: one line, exit 125, nothing started
	ln -sfn /etc "$D/etc-link"
	wrun --bind "$D/etc-link:/x" -- true
	{ [ "$RC" = 125 ] && [[ $ERR == *"that is /etc"*"system directory"* ]]; }
	ok $? "$M a --bind SRC that is a symlink to /etc is refused, naming both" || diag "$ERR"
	one_warren_line "$M ... in one line"
	wrun --bind /usr/share:/x -- true
	{ [ "$RC" = 125 ] && [[ $ERR == *"--bind /usr/share: a system directory"*"--ro-bind"* ]]; }
	ok $? "$M --bind of a system tree read-write is refused, pointing to --ro-bind" || diag "$ERR"
	wrun --ro-bind /proc:/x -- true
	{ [ "$RC" = 125 ] && [[ $ERR == *"--ro-bind /proc:"* ]]; }
	ok $? "$M --ro-bind /proc is refused (the host's processes)" || diag "$ERR"
	wrun --ro-bind "$D/cache:opt/cache" -- true
	{ [ "$RC" = 125 ] && [[ $ERR == *"absolute path in the cell"* ]]; }
	ok $? "$M a relative destination is refused" || diag "$ERR"
	one_warren_line "$M ... in one line"
	for dst in /proc/x /tmp/x /dev/x "$WORK/sub" /; do
		wrun --ro-bind "$D/cache:$dst" -- true
		[ "$RC" = 125 ]; ok $? "$M a destination $dst is refused" || diag "$ERR"
	done
	wrun --ro-bind "$D/cache:/opt/../proc" -- true
	{ [ "$RC" = 125 ] && [[ $ERR == *"'..'"* ]]; }
	ok $? "$M a destination with .. is refused" || diag "$ERR"
	# onto the cell's own /var/tmp (issue 34): the refusal names a destination to use instead
	wrun --bind "$D/cache:/var/tmp" -- true
	is "$RC:$ERR" "125:warren: --bind $D/cache:/var/tmp: the cell's own /proc, /dev, /sys and scratch (/tmp, /var/tmp) stay as they are; bind it elsewhere, e.g. --bind $D/cache:/home/$JOB_USER/cache" \
		"$M --bind onto /var/tmp: refused in one line that suggests --bind SRC:HOME/cache"
	wrun --bind "$D/cache:/home/$JOB_USER/cache" -- sh -c 'cat ~/cache/f'
	is "$RC/$OUT" "0/cached" "$M ... and the destination it suggests takes the bind" || diag "$ERR"

	# ---- --work none, --work-ro
	wrun_none() { wr run --work none "$@"; }
	wrun_none -- sh -c 'pwd; echo "$HOME"; touch '"$WORK"'/none-x 2>/dev/null || echo no-write'
	is "$OUT" "/home/$JOB_USER"$'\n'"/home/$JOB_USER"$'\n'no-write \
		"$M --work none: the job starts in its home, and the directory it came from is not writable"
	is "$(jget "$(last_rundir)/spec.json" 'd["worktree"]')" null "$M --work none: spec.json has worktree null"
	wrun --work-ro -- sh -c 'cat /dev/null > ro-x; echo "w=$?"; pwd'
	line_like "$ERR" 'Read-only file system' "$M --work-ro: a write to the worktree fails with EROFS"
	line_like "$OUT" "^$WORK\$" "$M --work-ro: the job still starts in the worktree"
	line_like "$ERR" "refused 1 write .*ro-x — write scratch files under \\\$TMPDIR" \
		"$M --work-ro: the refused write is said, naming \$TMPDIR as where to write"
	no_line_like "$ERR" 'or in the worktree' "$M --work-ro: ... and not the worktree"
	test ! -e "$WORK/ro-x"; ok $? "$M --work-ro: nothing was written"

	# ---- --workdir, --hostname
	wrun --workdir /usr --hostname build-42 -- sh -c 'pwd; hostname; uname -n'
	is "$OUT" /usr$'\n'build-42$'\n'build-42 "$M --workdir and --hostname: pwd, hostname, uname -n"
	is "$(jget "$(last_rundir)/spec.json" '[d["workdir"], d["hostname"]]')" '["/usr", "build-42"]' "$M spec.json: workdir, hostname"
	wrun --workdir /no/such/dir -- pwd
	{ [ "$RC" = 125 ] && [[ $ERR == *"--workdir /no/such/dir"*"must exist"* ]]; }
	ok $? "$M --workdir that does not exist in the cell: one line, exit 125" || diag "$ERR"
	wrun --hostname -bad- -- true
	{ [ "$RC" = 125 ] && [[ $ERR == *"not a host name"* ]]; }
	ok $? "$M --hostname that is not an RFC 1123 label is refused" || diag "$ERR"

	# ---- job file keys
	J=$D/job
	mkdir_for_mode "$J"
	mkdir_for_mode "$J/cache"
	mkdir_for_mode "$J/out"
	echo jc >"$J/cache/f"
	chmod 644 "$J/cache/f"
	cat >"$J/job.yml" <<'EOF'
name: mounts
ro-binds: [ "cache:/opt/jcache" ]
binds: [ "out:/data/jout" ]
externals: cache
workdir: /opt/jcache
hostname: jobhost
work-ro: true
steps:
  - run: pwd; hostname; cat f; echo w > /data/jout/w; cat $WARREN_EXTERNALS/f; touch x 2>/dev/null || echo ro-cwd
EOF
	[ "$mode" = user ] && chown -R "$TEST_USER_UID:$TEST_USER_GID" "$J"
	jrun "$J/job.yml" --quiet
	is "$RC" 0 "$M job file: ro-binds, binds, externals, workdir, hostname, work-ro run"
	line_like "$(cat "$(last_rundir)"/log/*.log 2>/dev/null)" '^/opt/jcache$' "$M job file: workdir is the steps' directory" ||
		diag "$(cat "$(last_rundir)"/log/*.log)"
	is "$(cat "$(last_rundir)"/log/*.log 2>/dev/null | tr '\n' ' ')" "/opt/jcache jobhost jc jc ro-cwd " \
		"$M job file: hostname, the ro bind, externals, a read-only cwd"
	is "$(cat "$J/out/w" 2>&1)" w "$M job file: the bind's write reached the host"
	printf 'work: none\nsteps:\n  - run: pwd\n' >"$J/none.yml"
	[ "$mode" = user ] && chown "$TEST_USER_UID:$TEST_USER_GID" "$J/none.yml"
	jrun "$J/none.yml" --quiet
	is "$RC:$(cat "$(last_rundir)"/log/*.log 2>/dev/null)" "0:/home/$JOB_USER" "$M job file: work: none runs in the home"
	cat >"$J/bad.yml" <<EOF
ro-binds: [ "$D/cache:/x" ]
hostname: "no_underscores"
steps:
  - run: true
EOF
	[ "$mode" = user ] && chown "$TEST_USER_UID:$TEST_USER_GID" "$J/bad.yml"
	jrun "$J/bad.yml"
	{ [ "$RC" = 125 ] && [[ $ERR == *"ro-binds[0]: $D/cache: it is outside the job file's directory"*"--ro-bind $D/cache"* ]]; }
	ok $? "$M job file: a bind outside its directory is refused, naming --ro-bind" || diag "$ERR"
	line_like "$ERR" "hostname: 'no_underscores' is not a host name" "$M job file: a bad hostname is refused"
	jrun "$J/bad.yml" --ro-bind "$D/cache:/x" --hostname ok
	[ "$RC" = 125 ]; ok $? "$M job file: the command line does not lift the job file's own refusal" || diag "$ERR"

	# ---- --rootfs: the destination made in the overlay
	wrun --rootfs "$BB" --ro-bind "$D/cache:/opt/deep/cache" --bind "$D/out:/srv/out" -- \
		sh -c 'cat /opt/deep/cache/f && echo img > /srv/out/img && hostname'
	is "$OUT" cached$'\n'"$(basename "$(last_rundir)")" "$M --rootfs: binds made in the overlay; hostname defaults to the run id"
	is "$(cat "$D/out/img" 2>&1)" img "$M --rootfs: the bind's write reached the host"
	test ! -e "$BB/opt/deep" && test ! -e "$BB/srv/out"; ok $? "$M --rootfs: the image did not get the mount points"
	nothing_left "$(last_rundir)" "$M --rootfs: nothing left"

	# ---- an image whose symlinks point at /proc and at the host
	IMG=$D/img
	cp -a "$BB" "$IMG"
	mkdir_for_mode "$D/hostdir"
	ln -s /proc "$IMG/toproc"
	ln -s "$D/hostdir" "$IMG/tohost"
	[ "$mode" = user ] && chown -hR "$TEST_USER_UID:$TEST_USER_GID" "$IMG"
	wrun --rootfs "$IMG" --ro-bind "$D/cache:/toproc/sys" -- true
	{ [ "$RC" = 125 ] && [[ $ERR == *"lands on /proc/sys"* ]]; }
	ok $? "$M an image's symlink cannot lead a bind onto /proc" || diag "$ERR"
	one_warren_line "$M ... in one line"
	wrun --rootfs "$IMG" --ro-bind "$D/cache:/tohost/made" -- sh -c 'cat /tohost/made/f'
	{ [ "$RC" = 125 ] && [[ $ERR == *"cannot use the mount point"*"/tohost"*"symlink to nowhere inside the image"* ]]; }
	ok $? "$M an image's absolute symlink to a host path resolves inside the image (to nowhere there: refused)" || diag "$ERR"
	test -z "$(ls -A "$D/hostdir")"; ok $? "$M ... and nothing was made on the host"
done

# ---- root only: a root-owned worktree's owner is the run user in its own file system, not in
# what is mounted inside it (a bind of a system directory there stays root's)
use_mode root
RW=$TEST_SCRATCH/rootwork
mkdir -p "$RW/etc" "$TEST_SCRATCH/rootsys"
echo sys >"$TEST_SCRATCH/rootsys/conf"
mount --bind "$TEST_SCRATCH/rootsys" "$RW/etc"
wrun --work "$RW" -- sh -c 'echo own > mine && echo mine-written; echo x >> etc/conf && echo conf-written; cat etc/conf'
RWO=$OUT
umount "$RW/etc"
is "$RWO" mine-written$'\n'sys "[root] a root-owned worktree: the job writes its files, reads a root-owned mount inside it but cannot write it"
is "$(cat "$TEST_SCRATCH/rootsys/conf")" sys "[root] ... the mounted directory on the host is unchanged"

# ---- a worktree with a file system mounted in .git (the objects on a tmpfs): the cell sees
# that mount, .git/hooks stays read-only, and what the mount hides on the host stays hidden
GW=$TEST_SCRATCH/gitmnt
mkdir -p "$GW/.git/objects"
printf '[core]\n' >"$GW/.git/config"
echo hidden >"$GW/.git/objects/under"
mount -t tmpfs -o mode=0777 warren-test-objs "$GW/.git/objects"
wrun --work "$GW" -- sh -c 'cat .git/objects/under 2>/dev/null || echo unseen; echo x > .git/objects/obj && echo obj-written; echo x > .git/hooks/pre-commit 2>/dev/null || echo hooks-ro'
GWO=$OUT
umount "$GW/.git/objects"
is "$GWO" unseen$'\n'obj-written$'\n'hooks-ro "[root] a worktree with a tmpfs on .git/objects: that tmpfs is seen and written, .git/hooks read-only"
is "$(ls "$GW/.git/objects")" under "[root] ... and the directory under that tmpfs on the host was not touched"

# ---- root only: a symlink on the source's way owned by another user
use_mode root
mkdir -p "$TEST_SCRATCH/others"
ln -s "$TEST_SCRATCH/m-root/cache" "$TEST_SCRATCH/others/link"
chown -h "$TEST_USER_UID" "$TEST_SCRATCH/others/link"
wrun --ro-bind "$TEST_SCRATCH/others/link:/x" -- true
{ [ "$RC" = 125 ] && [[ $ERR == *"goes through the symlink link, owned by uid $TEST_USER_UID"* ]]; }
ok $? "[root] a bind source through a symlink another user owns is refused" || diag "$ERR"
