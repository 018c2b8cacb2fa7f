#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci-pod.t - issue 36 (6c): a pod's own parts through warren-runc, as containerd's CRI writes
# them in a bundle's mounts: an emptyDir bound at /tmp and at /var/tmp (the pod's scratch
# instead of the cell's, TMPDIR still /tmp), the CRI's /etc/hosts and /etc/resolv.conf (file
# binds), the termination log at /dev/termination-log (a new file in the cell's /dev, written
# through to the host's file), a configMap read-only (writes refused); each checked from inside
# the job. Refused in one line naming the field: a bind shared with the host (rshared: the
# pod's mountPropagation Bidirectional) and a slave of it (rslave: HostToContainer, not made
# yet). Root and rootless.
. "$(dirname "$0")/../lib.sh"

plan 26

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
	bundle "$T/b-sl-$mode" '["true"]' "$(bind /etc/config "$V/cm" '["rbind", "rslave", "ro"]')"
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$T/b-sl-$mode" sl-$mode
	{ [ "$RC" != 0 ] && one_line && [[ $ERR =~ mounts\[[0-9]+\].*rslave.*HostToContainer ]]; }
	ok $? "$mode: an rslave bind is refused in one line (HostToContainer, not made yet)" || diag "exit $RC: $ERR"
done
