#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# selfcheck.t - `warren selfcheck [--rootfs DIR]`: one line per check ("ok   ..." or
# "FAIL ...: how to fix"), exit 1 when any fails. It fails on an image whose /tmp holds a
# root-owned `opencode` directory (left by an image build), whose /tmp is not 01777, or
# whose /var/tmp is not empty, and passes on a clean image. It changes no image. It reports
# the defences the host supports: seccomp (the default profile loaded in a child), the
# Landlock ABI (as the kernel reports it) and the cgroup controllers.
. "$(dirname "$0")/../lib.sh"

plan $((30 + 4))

BB=$(image_busybox) || bail_out "cannot build the busybox image"
BB_BEFORE=$(image_manifest "$BB")
DEB=$(image_debian) || DEB=

DIRTY=$TEST_SCRATCH/img-opencode
make_dirty_image "$DIRTY" || bail_out "cannot make the dirty image"
DIRTY_BEFORE=$(image_manifest "$DIRTY")
BADMODE=$TEST_SCRATCH/img-badmode
cp -a "$BB" "$BADMODE" && chmod 755 "$BADMODE/tmp" || bail_out "cannot copy the image"
LEFTOVER=$TEST_SCRATCH/img-leftover
cp -a "$BB" "$LEFTOVER" && echo left >"$LEFTOVER/var/tmp/build-leftover" || bail_out "cannot copy the image"
chmod 755 "$TEST_SCRATCH"

# well_formed DESC: every line of OUT is a check, "ok   <what>", "FAIL <what>: <fix>" or
# "note <what>" (any run of spaces after the word), or the closing "selfcheck: ..." line;
# and there is at least one "ok" line.
well_formed() {
	local l bad=
	grep -q '^ok ' <<<"$OUT" || bad="(no 'ok' line)"$'\n'
	while IFS= read -r l; do
		[[ $l =~ ^(ok\ +[^\ ]|note\ +[^\ ]|FAIL\ +[^:]+:\ .|selfcheck:\ .) ]] || bad+="$l"$'\n'
	done <<<"$OUT"
	[ -z "$bad" ]; ok $? "$1" && return 0
	diag "lines not 'ok   <what>' or 'FAIL <what>: <fix>':" "$bad"
	return 1
}

# clean_result DESC: as root, selfcheck passes (exit 0, no FAIL); as the unprivileged user
# the host checks may fail (cgroups not delegated), but nothing about the image may.
clean_result() {
	if [ "$MODE" = root ]; then
		[ "$RC" = 0 ] && ! grep -q '^FAIL' <<<"$OUT"
		ok $? "$1" || diag "exit $RC" "$OUT" "$ERR"
	else
		grep -q '^ok ' <<<"$OUT" &&
			! grep -E '^FAIL .*(/tmp|/var/tmp|opencode|image|rootfs|passwd|user)' <<<"$OUT" >/dev/null
		ok $? "$1 (no FAIL about the image)" || diag "exit $RC" "$OUT" "$ERR"
	fi
}

# failed_run DESC: exit 1, after having run its checks (some "ok   " line).
failed_run() {
	[ "$RC" = 1 ] && grep -q '^ok ' <<<"$OUT"
	ok $? "$1" || diag "exit $RC" "$OUT" "$ERR"
}

# The Landlock ABI of this kernel (0: none), asked the way warren asks.
HOST_LANDLOCK=$("$PY" -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(max(libc.syscall(444, None, 0, 1), 0))  # landlock_create_ruleset(NULL, 0, VERSION)
')

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"

	wr selfcheck --rootfs "$BB"
	well_formed "$M selfcheck prints one 'ok ...', 'note ...' or 'FAIL ...: <fix>' line per check"
	formed=$?
	clean_result "$M selfcheck passes on the clean busybox image"

	wr selfcheck --rootfs "$DIRTY"
	failed_run "$M selfcheck exits 1 on an image whose /tmp holds a root-owned opencode directory"
	line_like "$OUT" '^FAIL .*opencode' "$M ... with a FAIL line naming /tmp/opencode"

	wr selfcheck --rootfs "$BADMODE"
	failed_run "$M selfcheck exits 1 on an image whose /tmp is 0755"
	line_like "$OUT" '^FAIL .*/tmp' "$M ... with a FAIL line naming /tmp"

	wr selfcheck --rootfs "$LEFTOVER"
	failed_run "$M selfcheck exits 1 on an image with a file left in /var/tmp"
	line_like "$OUT" '^FAIL .*/var/tmp' "$M ... with a FAIL line naming /var/tmp"

	mkdir -p "$TEST_SCRATCH/emptydir"
	wr selfcheck --rootfs "$TEST_SCRATCH/emptydir"
	no_line_like "$OUT" '^ok +image (/tmp|/var/tmp|/etc/passwd)' "$M selfcheck --rootfs of an empty directory: no 'ok' for files it does not have"
	line_like "$OUT" '^note +image has no /tmp ' "$M ... and a note that it has no /tmp"

	if [ -n "$DEB" ]; then
		wr selfcheck --rootfs "$DEB"
		clean_result "$M selfcheck passes on the clean Debian image"
	else
		skip 1 "no Debian image (see build/cache/images/debian.build.log)"
	fi

	wr selfcheck
	line_like "$OUT" '^ok +seccomp \(the default profile, [0-9]+ instructions, refuses keyctl with EPERM\)$' \
		"$M selfcheck reports seccomp: the default profile loads and refuses keyctl"
	if [ "${HOST_LANDLOCK:-0}" -gt 0 ]; then
		line_like "$OUT" "^ok +Landlock ABI $HOST_LANDLOCK " "$M selfcheck reports the kernel's Landlock ABI ($HOST_LANDLOCK)"
	else
		line_like "$OUT" '^note +Landlock: not available' "$M selfcheck notes that this kernel has no Landlock"
	fi
	line_like "$OUT" '^(ok|note|FAIL) +cgroups: ' "$M selfcheck reports the cgroup controllers"
	if [ "$mode" = root ]; then
		is "$RC" 0 "$M selfcheck of the host alone passes" || diag "$OUT"
	else
		well_formed "$M selfcheck of the host alone prints well-formed lines"
	fi

	[ "$formed" = 0 ] && [ "$(image_manifest "$BB")" = "$BB_BEFORE" ] && [ "$(image_manifest "$DIRTY")" = "$DIRTY_BEFORE" ]
	ok $? "$M selfcheck changes no image" || diag "(selfcheck ran: $formed)"
	x=$(state_clean) && [ "$formed" = 0 ]
	ok $? "$M selfcheck leaves nothing behind" || diag "$x" "(selfcheck ran: $formed)"
done
