#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# rootfs.t - `warren run --rootfs DIR`: the image is the lower layer of an overlay, so a
# job may write all over its root while the image stays byte-for-byte unchanged (a
# manifest of paths, modes, owners, sizes, sha256, link targets, before and after), and
# the changes go away with the run. With a busybox image and a debootstrap'ed Debian
# (built once, cached in build/cache/images). As root and as an unprivileged user.
. "$(dirname "$0")/../lib.sh"

plan 30

BB=$(image_busybox) || bail_out "cannot build the busybox image"
BB_BEFORE=$(image_manifest "$BB")
DEB=$(image_debian) || DEB=
if [ -n "$DEB" ]; then DEB_BEFORE=$(image_manifest "$DEB"); fi

# unchanged IMAGE BEFORE DESC RAN: the image's manifest is still BEFORE, after a job that
# ran (RAN = 0; when the writing job did not run, unchanged proves nothing: fail).
unchanged() {
	local now
	[ "$4" = 0 ] || { ok 1 "$3"; diag "the job that writes over its root did not run"; return 1; }
	now=$(image_manifest "$1")
	[ "$now" = "$2" ]; ok $? "$3" && return 0
	diag "the image changed:" "$(diff <(printf '%s\n' "$2") <(printf '%s\n' "$now") | head -20)"
	return 1
}

# an image whose /sys is a symlink (the sysfs would land where it leads, unmasked): refused;
# one without /sys: the cell's is made
IMGS=$TEST_SCRATCH/imgs
mkdir -p "$IMGS" && chmod 755 "$IMGS"
cp -a "$BB" "$IMGS/symsys" && rm -rf "$IMGS/symsys/sys" && mkdir "$IMGS/symsys/sysx" && ln -s /sysx "$IMGS/symsys/sys"
cp -a "$BB" "$IMGS/nosys" && rm -rf "$IMGS/nosys/sys"

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"

	# ---- busybox
	host_tmp_marker; marker=$MARKER
	wrun --rootfs "$BB" -- sh -c "ls /bin/busybox; stat -c %a /tmp; echo \$TMPDIR; ls -A /tmp; whoami; pwd; test -e '$marker' && echo host-tmp-visible; true"
	is "$RC" 0 "$M busybox image: the job runs"
	is "$OUT" "/bin/busybox"$'\n'1777$'\n'/tmp$'\n'"$JOB_USER"$'\n'"$WORK" \
		"$M busybox image: /tmp 1777 and empty, TMPDIR=/tmp, whoami, the worktree as cwd"
	[ "$RC" = 0 ] && [[ $OUT != *host-tmp-visible* ]]
	ok $? "$M busybox image: the host's /tmp is not visible"
	wrun --rootfs "$IMGS/symsys" -- ls /sys/firmware
	is "$RC:$ERR" "125:warren: the image's /sys is not a directory (a symlink or a file): the cell's own sysfs is mounted there; make it an empty directory in the image" \
		"$M an image whose /sys is a symlink: refused in one line, exit 125 (its sysfs would be where the link leads, unmasked)"
	wrun --rootfs "$IMGS/nosys" -- sh -c 'stat -fc %T /sys; ls -A /sys/firmware | wc -l'
	is "$RC:$(tr '\n' ' ' <<<"$OUT")" "0:sysfs 0 " "$M an image without /sys: the cell's sysfs is mounted (on a directory made in the overlay), masked"
	# the image's /sys is the cell's own sysfs (programs read CPUs, limits and links there)
	lim=(); [ "$mode" = user ] || lim=(--memory 64m)  # (rootless: no cgroup on this host)
	wrun --rootfs "$BB" "${lim[@]}" -- sh -c 'stat -fc %T /sys; ls /sys/class/net; test -s /sys/devices/system/cpu/online && echo cpus
		grep -cE " /sys/fs/cgroup[^ ]* .* - cgroup2? " /proc/self/mountinfo; true'
	if [ "$mode" = root ]; then
		[ "$RC" = 0 ] && [ "$(head -3 <<<"$OUT" | tr '\n' ' ')" = "sysfs lo cpus " ] && [ "$(tail -1 <<<"$OUT")" -ge 1 ]
		ok $? "$M busybox image: /sys is a sysfs of the cell's own (class/net: lo; the CPUs), the run's cgroup mounted at /sys/fs/cgroup (v1 or v2)" || diag "$OUT"
	else
		[ "$RC" = 0 ] && [ "$(head -3 <<<"$OUT" | tr '\n' ' ')" = "sysfs lo cpus " ]
		ok $? "$M busybox image: /sys is a sysfs of the cell's own (class/net: lo; the CPUs)" || diag "$OUT"
	fi

	if [ "$mode" = root ]; then
		wrun --rootfs "$BB" --user 0 -- sh -c 'touch /etc/x /bin/y && rm -rf /usr /sbin && mkdir /newdir && echo changed > /etc/hostname && chmod 700 /bin && test -e /etc/x && echo wrote'
		is "$OUT" wrote "$M busybox image: root of the cell writes all over its root"
		ran=$?
	else
		wrun --rootfs "$BB" --user 0 -- sh -c 'touch /etc/x /bin/y; rm -rf /usr /sbin; mkdir /newdir; echo changed > /etc/hostname; chmod 700 /bin; echo tried'
		is "$OUT" tried "$M busybox image: the job tries to write all over its root"
		ran=$?
	fi
	unchanged "$BB" "$BB_BEFORE" "$M busybox image: byte-for-byte unchanged afterwards" "$ran"
	wrun --rootfs "$BB" -- sh -c 'test -e /etc/x || test -d /newdir || test ! -e /usr/bin/env || echo clean'
	is "$OUT" clean "$M busybox image: the next run does not see the last one's changes"
	rd=$(last_rundir)
	nothing_left "${rd:-$STATE/runs/none}" "$M busybox image: nothing of the overlay (upper, work, root) is left"

	# ---- debian (debootstrap --variant=minbase)
	if [ -z "$DEB" ]; then
		skip 5 "$M no Debian image (debootstrap failed; see build/cache/images/debian.build.log)"
		continue
	fi
	wrun --rootfs "$DEB" -- sh -c 'whoami; id -u; test -f /etc/debian_version && echo debian'
	is "$OUT" "$JOB_USER"$'\n'"$JOB_UID"$'\n'debian "$M debian image: whoami, id -u, the image's files"
	if [ "$mode" = root ]; then
		wrun --rootfs "$DEB" --user 0 -- sh -c 'touch /etc/x /usr/bin/y && rm -rf /usr/share/doc && test ! -e /usr/share/doc && echo wrote'
		is "$OUT" wrote "$M debian image: root of the cell runs touch /etc/x /usr/bin/y; rm -rf /usr/share/doc"
		ran=$?
	else
		wrun --rootfs "$DEB" --user 0 -- sh -c 'touch /etc/x /usr/bin/y; rm -rf /usr/share/doc; echo tried'
		is "$OUT" tried "$M debian image: the job tries touch /etc/x /usr/bin/y; rm -rf /usr/share/doc"
		ran=$?
	fi
	unchanged "$DEB" "$DEB_BEFORE" "$M debian image: byte-for-byte unchanged afterwards" "$ran"
	rd=$(last_rundir)
	nothing_left "${rd:-$STATE/runs/none}" "$M debian image: nothing of the run's scratch is left"
	wrun --rootfs "$DEB" -- sh -c 'test -d /usr/share/doc && test ! -e /etc/x && echo clean'
	is "$OUT" clean "$M debian image: the next run sees the image as it was"
done
