#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# history_read.sh MODE - issue 31, class 8: the history of runs (history.db, its -wal and -shm,
# the lines pending for it) is its owner's alone, also in a state directory of mode 0755 (as a
# server's socket in it needs: others reach it). Runs are made (root: by root, read by the test
# user; user: by the test user, read by nobody), then every file of the history is tried as the
# other user; and a history an older warren left 0644 is narrowed when it is next opened.
# Environment: WARREN, SCRATCH (or TEST_SCRATCH), TEST_USER (default warren-test). Last line:
# history_read: held | ESCAPED: WHAT | untested: WHY
set -u
CLASS=history_read
MODE=${1:-}
say() { echo "$CLASS: $*"; exit 0; }
note() { echo "# $*"; }
case $MODE in
root | user) ;;
image | vm) say "untested: the history's files are the same whatever makes the cell (see root and user)" ;;
*) say "untested: unknown mode '$MODE' (give root, user, image or vm)" ;;
esac
[ "$(id -u)" = 0 ] || say "untested: run as root (it makes files as one user and reads them as another)"
[ -x "${WARREN:-}" ] || say "untested: no warren binary in WARREN"
base=${SCRATCH:-${TEST_SCRATCH:-}}
[ -d "$base" ] || say "untested: no scratch directory in SCRATCH"
user=${TEST_USER:-warren-test}
uid=$(id -u "$user" 2>/dev/null) || say "untested: no user $user"
gid=$(id -g "$user")
D=$(mktemp -d -p "$base" history_read.XXXXXX) || say "untested: mktemp failed"
trap 'rm -rf --one-file-system -- "$D"' EXIT
chmod 755 "$D"

# the maker of the runs and the other user who tries to read them
if [ "$MODE" = root ]; then
	MAKER=()
	OTHER=(setpriv --reuid="$uid" --regid="$gid" --clear-groups)
	who="uid $uid"
else
	MAKER=(setpriv --reuid="$uid" --regid="$gid" --init-groups env -i PATH=/usr/bin:/bin HOME="$D/home" USER="$user")
	OTHER=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	who="nobody (uid 65534)"
	mkdir -p "$D/home"
	chmod 700 "$D/home"
fi
mkdir -p "$D/work"
chmod 755 "$D/work"
[ "$MODE" = user ] && chown -R "$uid:$gid" "$D/work" "$D/home"

# state ST: a state directory of mode 0755, the maker's
state() {
	mkdir -p "$D/$1"
	chmod 755 "$D/$1"
	[ "$MODE" = user ] && chown "$uid:$gid" "$D/$1"
	echo "$D/$1"
}
w() { timeout -k 5 60 "${MAKER[@]}" "$WARREN" "$@"; }
# make_runs S: two runs (a command line and a label that must stay the owner's), the
# history folded (warren history), then one run more whose lines wait in history.db.pending
make_runs() {
	w run --state "$1" --work "$D/work" --label secret=label-x -- sh -c 'echo run-secret-cmdline' >/dev/null 2>&1 || return 1
	w run --state "$1" --work "$D/work" -- true >/dev/null 2>&1 || return 1
	w history --state "$1" >/dev/null 2>&1 || return 1
	w run --state "$1" --work "$D/work" -- sh -c 'echo pending-secret' >/dev/null 2>&1
}
# readable S: the files of S's history the other user can read (their names), or the modes
# that let others read them
readable() {
	local f got=
	for f in "$1"/history.db "$1"/history.db-wal "$1"/history.db-shm "$1"/history.db.pending "$1"/history.db.pending.*; do
		[ -e "$f" ] || continue
		if "${OTHER[@]}" head -c 1 "$f" >/dev/null 2>&1; then
			got+=" ${f##*/} (read by $who)"
		elif [ $((0$(stat -c %a "$f") & 044)) != 0 ]; then
			got+=" ${f##*/} (mode $(stat -c %a "$f"))"
		fi
	done
	echo "${got# }"
}

S1=$(state state1)
make_runs "$S1" || say "untested: warren run failed in $MODE mode ($(w run --state "$S1" --work "$D/work" -- true 2>&1 | tail -1))"
[ -e "$S1/history.db" ] || say "untested: the runs made no $S1/history.db"
note "made: $(cd "$S1" && stat -c '%n %a' history.db* | tr '\n' ' ')"
leak=$(readable "$S1")
[ -z "$leak" ] || say "ESCAPED: the history of runs in a state directory of mode 0755:$( [ -n "$leak" ] && echo " $leak")"
if "${OTHER[@]}" "$WARREN" history --state "$S1" 2>/dev/null | grep -q .; then
	say "ESCAPED: $who lists the runs with warren history --state $S1"
fi

# an older warren's history, 0644: narrowed when it is next opened (warren history), its
# pending lines when the next run appends to them
S2=$(state state2)
make_runs "$S2" || say "untested: warren run failed in $S2"
chmod 644 "$S2"/history.db*
w history --state "$S2" >/dev/null 2>&1
w run --state "$S2" --work "$D/work" -- true >/dev/null 2>&1
note "an older history after its next use: $(cd "$S2" && stat -c '%n %a' history.db* | tr '\n' ' ')"
leak=$(readable "$S2")
[ -z "$leak" ] || say "ESCAPED: an older history of mode 0644 stays readable after warren used it: $leak"
say held
