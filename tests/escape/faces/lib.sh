# SPDX-License-Identifier: Apache-2.0
# lib.sh - sourced by the escape faces of this directory that share it: the mode, the run
# prefix, a directory of the attempt's own (removed at the end, mounts undone), the verdict.
# Each face: `CLASS=name; . "$(dirname "$0")/lib.sh"` then face_setup MODES..., its attempt,
# and one verdict line last ("CLASS: held", "CLASS: ESCAPED: WHAT", "CLASS: untested: WHY").
# Environment: WARREN (the binary), SCRATCH (a directory to work in). Run as root; mode user
# runs warren as warren-test (tests/lib.sh makes that user).
set -u
MODE=${1:-}
verdict() { echo "$CLASS: $*"; exit 0; }
escaped() { verdict "ESCAPED: $*"; }
held() { verdict held; }

# face_setup MODE...: the modes this class applies to; any other says untested with why.
# Sets RUN (a prefix running a command as the mode's caller), D (the attempt's directory),
# CALLER_UID/CALLER_GID, BUSYBOX (a static busybox, for a root file system).
face_setup() {
	local m ok=0
	for m in "$@"; do [ "$m" = "$MODE" ] && ok=1; done
	[ $ok = 1 ] || verdict "untested: the class is not one of mode $MODE (it applies to: $*)"
	[ -x "${WARREN:-}" ] || verdict "untested: no warren binary in \$WARREN"
	[ -d "${SCRATCH:-}" ] || verdict "untested: no scratch directory in \$SCRATCH"
	[ "$(id -u)" = 0 ] || verdict "untested: run as root"
	BUSYBOX=/bin/busybox
	file -L "$BUSYBOX" 2>/dev/null | grep -q 'statically linked' || verdict "untested: no static $BUSYBOX (busybox-static)"
	RUN=()
	CALLER_UID=0 CALLER_GID=0
	if [ "$MODE" = user ]; then
		CALLER_UID=$(id -u warren-test 2>/dev/null) || verdict "untested: no user warren-test (tests/lib.sh makes it)"
		CALLER_GID=$(id -g warren-test)
		RUN=(setpriv --reuid="$CALLER_UID" --regid="$CALLER_GID" --init-groups env -i PATH=/usr/local/bin:/usr/bin:/bin
		     HOME=/nonexistent LANG=C.UTF-8)
	fi
	D=$(mktemp -d -p "$SCRATCH" "$CLASS.XXXXXX") || verdict "untested: cannot make a directory in $SCRATCH"
	chmod 755 "$D"
	trap face_cleanup EXIT
}

FACE_PIDS=() FACE_USERS=()
face_cleanup() {
	local p u
	for p in "${FACE_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	for u in "${FACE_USERS[@]}"; do userdel "$u" 2>/dev/null; done
	awk -v d="$D" 'index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r | while read -r m; do umount -l "$m"; done
	rm -rf --one-file-system "$D"
}

# mine DIR...: the directories belong to the mode's caller
mine() { chown "$CALLER_UID:$CALLER_GID" "$@"; }

# busybox_in DIR: DIR/busybox and its applets sh, cat, ls as links (a job's tools)
busybox_in() {
	mkdir -p "$1" && cp "$BUSYBOX" "$1/busybox" && for a in sh cat ls; do ln -sf busybox "$1/$a"; done
	chmod -R a+rX "$1"
}

# w ARGS...: warren as the mode's caller, at most 60 s; RC, OUT, ERR
w() {
	local o=$D/.out e=$D/.err
	timeout -k 5 60 "${RUN[@]}" "$WARREN" "$@" </dev/null >"$o" 2>"$e"
	RC=$?
	OUT=$(cat "$o") ERR=$(cat "$e")
	rm -f "$o" "$e"
}
