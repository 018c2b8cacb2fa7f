#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci-pod.t - issue 36 (6c): a pod's own parts through warren-runc, as containerd's CRI writes
# them in a bundle's mounts: an emptyDir bound at /tmp and at /var/tmp (the pod's scratch
# instead of the cell's, TMPDIR still /tmp), the CRI's /etc/hosts and /etc/resolv.conf (file
# binds), the termination log at /dev/termination-log (a new file in the cell's /dev, written
# through to the host's file), a configMap read-only (writes refused); each checked from inside
# the job. A volume bound rslave (HostToContainer) shows what the host mounts below it after
# the start, an rprivate one does not (root mode: where the node's operator allows it, else
# refused in one line). The kubelet's safe sysctls set in the cell's own
# namespaces (the host's unchanged), an unsafe one refused. Supplementary groups (fsGroup): the
# job has them and reads a volume's file through its group (root mode; rootless refused in one
# line). maskedPaths and readonlyPaths outside /proc and /sys. Refused in one line naming the
# field: a bind shared with the host (rshared: Bidirectional). Root and rootless, in a mount
# namespace of the test's own (its shared tmpfs and the late mount die with it).
if [ -z "${WARREN_MNT_WORLD:-}" ]; then
	exec env WARREN_MNT_WORLD=1 unshare --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"

plan 46

. "$REPO/tests/oci.sh"
oci_setup

one_line() { [ -n "$ERR" ] && [ "$(wc -l <<<"$ERR")" = 1 ]; }
# bind DST SRC OPTIONS_JSON: the python statement adding the bind as the CRI writes it
bind() { printf 'c["mounts"].append({"destination": "%s", "type": "bind", "source": "%s", "options": %s})\n' "$@"; }

for mode in root user; do
	use_mode $mode
	ROOT=$T/root-$mode
	mkdir_for_mode "$ROOT"
	V=$T/vol-$mode
	mkdir_for_mode "$V"
	mkdir_for_mode "$V/empty" 777
	mkdir_for_mode "$V/vartmp" 777
	mkdir_for_mode "$V/cm"
	echo "10.1.2.3 pod-$mode" >"$V/hosts"
	echo "nameserver 10.96.0.10" >"$V/resolv"
	echo "cm-$mode" >"$V/cm/key"
	: >"$V/term"
	chmod 666 "$V/hosts" "$V/resolv" "$V/term"
	[ "$mode" = user ] && chown -R "$TEST_USER_UID:$TEST_USER_GID" "$V"

	# ---- the pod's volumes at /tmp, /var/tmp, /etc/hosts, /etc/resolv.conf, the log, a configMap
	bundle "$T/b-$mode" '["sh", "-c", "echo scratch > /tmp/made; echo $TMPDIR; grep -E \" /(tmp|var/tmp|etc/hosts|etc/resolv.conf|dev/termination-log|etc/config) \" /proc/self/mounts | cut -d\" \" -f2,4 | cut -d, -f1; cat /etc/hosts /etc/resolv.conf /etc/config/key; ls /var/tmp; echo died >/dev/termination-log; touch /etc/config/new 2>&1 | grep -c Read-only"]' \
		"$(bind /tmp "$V/empty" '["rbind", "rprivate", "rw"]'
		   bind /var/tmp "$V/vartmp" '["rbind", "rprivate", "rw"]'
		   bind /etc/hosts "$V/hosts" '["rbind", "rprivate", "rw"]'
		   bind /etc/resolv.conf "$V/resolv" '["rbind", "rprivate", "rw"]'
		   bind /dev/termination-log "$V/term" '["rbind", "rprivate", "rw"]'
		   bind /etc/config "$V/cm" '["rbind", "rprivate", "ro"]')"
	# rootless: a root of the caller's own (the image's /etc belongs to an id the rootless
	# cell does not map, where no mount point for /etc/hosts can be made)
	if [ "$mode" = user ]; then
		cp -a "$BB/." "$T/rootfs-user" && chown -R "$TEST_USER_UID:$TEST_USER_GID" "$T/rootfs-user" &&
			ln -sfn "$T/rootfs-user" "$T/b-$mode/rootfs" || bail_out "cannot copy the image for the rootless bundle"
	fi
	: >"$V/vartmp/seen-$mode"
	[ "$mode" = user ] && chown "$TEST_USER_UID:$TEST_USER_GID" "$V/vartmp/seen-$mode"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$T/b-$mode" pod-$mode
	is "$RC" 0 "$mode: a bundle with the pod's volumes runs" || diag "$ERR"
	is "$(cat "$V/empty/made" 2>/dev/null)" scratch "$mode: ... what the job wrote in /tmp is in the pod's emptyDir"
	line_like "$OUT" '^/tmp$' "$mode: ... TMPDIR is still /tmp"
	line_like "$OUT" '^/tmp rw$' "$mode: ... /tmp is the bind, read-write"
	line_like "$OUT" '^/etc/config ro$' "$mode: ... the configMap read-only"
	line_like "$OUT" "^seen-$mode\$" "$mode: ... /var/tmp is the pod's volume"
	line_like "$OUT" "^10\\.1\\.2\\.3 pod-$mode\$" "$mode: ... /etc/hosts is the CRI's file"
	line_like "$OUT" '^nameserver 10\.96\.0\.10$' "$mode: ... /etc/resolv.conf the CRI's"
	line_like "$OUT" "^cm-$mode\$" "$mode: ... the configMap's key reads"
	line_like "$OUT" '^1$' "$mode: ... a write in the read-only configMap is refused (EROFS)"
	is "$(cat "$V/term")" died "$mode: ... the termination log is written through /dev/termination-log"

	# ---- refused, one line naming the field
	bundle "$T/b-sh-$mode" '["true"]' "$(bind /etc/config "$V/cm" '["rbind", "rshared", "ro"]')"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$T/b-sh-$mode" sh-$mode
	{ [ "$RC" != 0 ] && one_line && [[ $ERR =~ mounts\[[0-9]+\].*rshared.*Bidirectional ]]; }
	ok $? "$mode: an rshared bind is refused in one line naming the field and the pod's Bidirectional" || diag "exit $RC: $ERR"

	# ---- rslave: what the host mounts below the volume later shows in the cell; rprivate not.
	# Root mode: refused unless the node's operator allows it (a later mount comes in as the
	# host made it: devices, setuid, the host's /proc, writable), one line naming the setting
	HV=$T/hostvol-$mode
	mkdir -p "$HV" && mount -t tmpfs -o mode=0777 hv "$HV" && mount --make-shared "$HV" && mkdir -m 777 "$HV/late" &&
		echo host-masked >"$HV/masked" && chmod 644 "$HV/masked" || bail_out "cannot make a shared tmpfs for the rslave volume"
	bundle "$T/b-sl-$mode" '["sh", "-c", "touch /vol/ready; i=0; while [ ! -e /vol/late/marker ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; cat /vol/late/marker; ls /volp/late | wc -l; cat /vol/masked | wc -c"]' \
		"$(bind /vol "$HV" '["rbind", "rslave", "rw"]'
		   bind /volp "$HV" '["rbind", "rprivate", "rw"]')
c['linux'].setdefault('maskedPaths', []).append('/vol/masked')"
	ALLOW=()
	if [ "$mode" = root ]; then
		bounded "$RUNC" --root "$ROOT" run --bundle "$T/b-sl-$mode" sl0-$mode
		{ [ "$RC" != 0 ] && one_line && [[ $ERR =~ mounts\[[0-9]+\].*rslave.*HostToContainer.*oci\.host_to_container\ =\ allow ]]; }
		ok $? "root: an rslave bind is refused in one line naming HostToContainer and oci.host_to_container" || diag "exit $RC: $ERR"
		printf 'oci.host_to_container = allow\n' >"$T/slave.conf" && chmod 644 "$T/slave.conf"
		ALLOW=(env WARREN_CONFIG="$T/slave.conf")
	fi
	rm -f "$HV/ready"
	"${RUNNER[@]}" "${ALLOW[@]}" "$RUNC" --root "$ROOT" run --bundle "$T/b-sl-$mode" sl-$mode >"$T/sl-$mode.out" 2>"$T/sl-$mode.err" &
	pid=$!
	for _ in $(seq 100); do [ -e "$HV/ready" ] && break; sleep 0.1; done
	mount -t tmpfs -o mode=0755 late "$HV/late" && echo "late-$mode" >"$HV/late/marker"
	wait $pid
	RC=$?
	is "$RC:$(tr '\n' ' ' <"$T/sl-$mode.out")" "0:late-$mode 0 0 " \
		"$mode: an rslave volume shows a mount the host made below it after the start; an rprivate bind of it does not; a mask in it holds" ||
		diag "$(cat "$T/sl-$mode.err")"
	is "$(mounts_under "$HV/masked"):$(cat "$HV/masked")" ":host-masked" "$mode: ... the mask made on the slave volume did not reach the host's mount"
	umount "$HV/late" "$HV"

	# ---- the kubelet's safe sysctls, in the cell's own namespaces
	before=$(cat /proc/sys/net/ipv4/ip_local_port_range /proc/sys/net/ipv4/tcp_keepalive_time /proc/sys/kernel/shm_rmid_forced)
	bundle "$T/b-sc-$mode" '["sh", "-c", "cat /proc/sys/net/ipv4/ip_local_port_range /proc/sys/net/ipv4/tcp_keepalive_time /proc/sys/kernel/shm_rmid_forced"]' \
		'c["linux"]["sysctl"] = {"net.ipv4.ip_local_port_range": "40000 40100", "net.ipv4.tcp_keepalive_time": "600", "kernel.shm_rmid_forced": "1"}'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$T/b-sc-$mode" sc-$mode
	is "$RC:$(tr '\t\n' '  ' <<<"$OUT")" "0:40000 40100 600 1 " "$mode: the pod's safe sysctls are set in the cell's network and IPC namespaces" || diag "$ERR"
	is "$(cat /proc/sys/net/ipv4/ip_local_port_range /proc/sys/net/ipv4/tcp_keepalive_time /proc/sys/kernel/shm_rmid_forced)" "$before" \
		"$mode: ... the host's are unchanged"
	bundle "$T/b-su-$mode" '["true"]' 'c["linux"]["sysctl"] = {"kernel.msgmax": "1"}'
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$T/b-su-$mode" su-$mode
	{ [ "$RC" != 0 ] && one_line && [[ $ERR =~ linux\.sysctl\ \'kernel\.msgmax\'.*safe ]]; }
	ok $? "$mode: an unsafe sysctl (kernel.msgmax) is refused in one line" || diag "exit $RC: $ERR"

	# ---- supplementary groups (fsGroup): a file of the volume readable through group 2000 alone
	# (the volume chowned to it, as the kubelet does)
	G=$T/fsg-$mode
	mkdir -p "$G" && echo fsgroup-ok >"$G/secret" && chown 4243:2000 "$G/secret" && chmod 0640 "$G/secret" && chgrp 2000 "$G" && chmod 2755 "$G"
	[ "$mode" = user ] && chown "$TEST_USER_UID:$TEST_USER_GID" "$G"
	bundle "$T/b-g-$mode" '["sh", "-c", "id -G; cat /data/secret"]' \
		"c['process']['user'] = {'uid': $JOB_UID, 'gid': $JOB_UID, 'additionalGids': [2000, 3000, 2000]}
$(bind /data "$G" '["rbind", "rprivate", "rw"]')"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$T/b-g-$mode" g-$mode
	if [ "$mode" = root ]; then
		is "$RC:$(tr '\n' ' ' <<<"$OUT")" "0:$JOB_UID 2000 3000 fsgroup-ok " \
			"root: process.user.additionalGids: the job has the groups and reads a volume's file through gid 2000" || diag "$ERR"
	else
		{ [ "$RC" != 0 ] && one_line && [[ $ERR =~ additionalGids.*rootless ]]; }
		ok $? "user: additionalGids other than the job's own gid: refused in one line (a rootless cell maps one group)" || diag "exit $RC: $ERR"
	fi
	# the host's groups stay the host's: on a read-only volume of root's (a secret), a file is
	# read through the job's group only where the volume is that group's (the kubelet's chown)
	# and it is none of the host's system groups: not /etc/shadow's shape (root:shadow in a
	# root:root directory), nor root's group, nor another of the job's groups
	if [ "$mode" = root ]; then
		H=$T/hostgrp
		{ mkdir -p "$H/etc" "$H/vol" && chmod 0755 "$H/etc" && echo shadow-secret >"$H/etc/shadow" && chown 0:42 "$H/etc/shadow" &&
			chmod 0640 "$H/etc/shadow" && echo root-secret >"$H/etc/root" && chmod 0640 "$H/etc/root" &&
			chgrp 2000 "$H/vol" && chmod 2755 "$H/vol" && echo fsgroup-ro >"$H/vol/key" && chown 0:2000 "$H/vol/key" &&
			chmod 0440 "$H/vol/key" && echo other-secret >"$H/vol/other" && chown 0:3000 "$H/vol/other" && chmod 0440 "$H/vol/other"; } ||
			bail_out "cannot make the host's group files"
		bundle "$T/b-hg" '["sh", "-c", "cat /vol/key; cat /hostetc/shadow /hostetc/root /vol/other 2>/dev/null; true"]' \
			"c['process']['user'] = {'uid': $JOB_UID, 'gid': $JOB_UID, 'additionalGids': [0, 42, 2000, 3000]}
$(bind /hostetc "$H/etc" '["rbind", "rprivate", "ro"]'
   bind /vol "$H/vol" '["rbind", "rprivate", "ro"]')"
		bounded "$RUNC" --root "$ROOT" run --bundle "$T/b-hg" hg
		line_like "$OUT" '^fsgroup-ro$' "root: ... a read-only volume of root's (a secret, 0440) is read through fsGroup" || diag "$ERR"
		is "$(grep -c secret <<<"$OUT")" 0 "root: ... not root's files of gid 42 (/etc/shadow's), 0, nor of another group of the job's (3000)" ||
			diag "$OUT"
	fi

	# ---- maskedPaths and readonlyPaths outside /proc and /sys
	mkdir_for_mode "$V/hid"
	echo hidden >"$V/hid/f"
	mkdir_for_mode "$V/rw" 777
	[ "$mode" = user ] && chown -R "$TEST_USER_UID:$TEST_USER_GID" "$V"
	bundle "$T/b-m-$mode" '["sh", "-c", "cat /etc/config/key | wc -c; ls /opt/hid | wc -l; touch /opt/rw/x 2>&1 | grep -c Read-only; ls /bin/sh >/dev/null && echo sh-there"]' \
		"$(bind /etc/config "$V/cm" '["rbind", "rprivate", "ro"]'
		   bind /opt/hid "$V/hid" '["rbind", "rprivate", "rw"]'
		   bind /opt/rw "$V/rw" '["rbind", "rprivate", "rw"]')
c['linux'].setdefault('maskedPaths', []).extend(['/etc/config/key', '/opt/hid', '/no/such/path'])
c['linux'].setdefault('readonlyPaths', []).extend(['/opt/rw'])"
	[ "$mode" = user ] && ln -sfn "$T/rootfs-user" "$T/b-m-$mode/rootfs"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$T/b-m-$mode" m-$mode
	is "$RC:$(tr '\n' ' ' <<<"$OUT")" "0:0 0 1 sh-there " \
		"$mode: maskedPaths hide a file and a directory outside /proc and /sys, readonlyPaths make one read-only" || diag "$ERR"
	is "$(cat "$V/hid/f")" hidden "$mode: ... the masked files are untouched on the host"
done

# ---- a sysctl the kernel refuses: warren-runc run fails in one line, and nothing of the
# container stays (the same id runs again at once)
use_mode root
bundle "$T/b-kv" '["true"]' 'c["linux"]["sysctl"] = {"net.ipv4.tcp_keepalive_time": "notanumber"}'
bounded "$RUNC" --root "$T/root-root" run --bundle "$T/b-kv" kv
{ [ "$RC" = 1 ] && one_line && [[ $ERR =~ tcp_keepalive_time.*notanumber.*refused ]] && [ ! -e "$T/root-root/kv" ]; }
ok $? "root: a sysctl value the kernel refuses: one line, exit 1, no state of the container left" || diag "exit $RC: $ERR; $(ls "$T/root-root")"

# ---- a pod's read-write volume owned by root is not the job's (root mode): a hostPath such as
# /root/.ssh written by the job as its owner would be the host root's files. The cell's root
# writes a root-owned 0755 volume not at all, a root-owned 0777 one (an emptyDir) as others do,
# its files its own host ids, never root's
use_mode root
R=$T/rootvol
mkdir -p "$R/ssh" "$R/empty" && chmod 0755 "$R/ssh" && chmod 0777 "$R/empty" && chown 0:0 "$R/ssh" "$R/empty"
bundle "$T/b-rv" '["sh", "-c", "touch /ssh/authorized_keys 2>&1 | grep -c denied; touch /empty/made && echo made"]' \
	"c['process']['user'] = {'uid': 0, 'gid': 0}
$(bind /ssh "$R/ssh" '["rbind", "rprivate", "rw"]'
  bind /empty "$R/empty" '["rbind", "rprivate", "rw"]')"
bounded "$RUNC" --root "$T/root-root" run --bundle "$T/b-rv" rv
is "$RC:$(tr '\n' ' ' <<<"$OUT")" "0:1 made " "root: the cell's root cannot write a root-owned 0755 volume; it writes a 0777 one" || diag "$ERR"
is "$(stat -c %u "$R/empty/made" 2>/dev/null):$(ls "$R/ssh" | wc -l)" "1000000000:0" \
	"root: ... what it made there is the cell root's host uid (1000000000), not root's; nothing in the other"
