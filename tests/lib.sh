# SPDX-License-Identifier: Apache-2.0
# lib.sh - sourced by every tests/integration/*.t: TAP output, a scratch directory per
# script, the unprivileged test user, bounded runs of build/warren, and checks that a run
# left nothing behind. Run the scripts as root from the top of the repository
# (tests/run-all does); they print TAP on stdout.
#
# TAP:        plan N | skip_all WHY | bail_out WHY | ok STATUS DESC | check DESC CMD...
#             is GOT WANT DESC | isnt GOT UNWANTED DESC | like GOT ERE DESC | unlike GOT ERE DESC
#             skip N WHY | diag TEXT...
# Modes:      use_mode root|user  -> RUNNER (prefix running warren as that user), STATE,
#             WORK, JOB_UID, JOB_USER, HOST_JOB_UID, MODE
# Running:    wr SUB ARGS...          warren SUB --state $STATE ARGS..., bounded; sets RC OUT ERR
#             wrun ARGS...            wr run --work $WORK ARGS...
#             wr_env K=V... -- SUB ARGS...   the same with variables in warren's environment
#             start_fd_holder SOCK    a process outside the cells keeping descriptors sent to SOCK
# Run dirs:   last_rundir, kept_rundir (from ERR), jget FILE PYEXPR
# npm:        npm_cached SRC DEST (a test's npm packages, installed once under build/)
# Leftovers:  scratch_gone RUNDIR, mounts_under PATH, procs_matching STR,
#             cgroups_named STR, nothing_left RUNDIR DESC (one test)
# Networks:   net_world_up, net_world_rootless, net_left ID (tests of --net, in a world of
#             network namespaces of their own)
#
# Nothing here writes to the host's /tmp except host_tmp_marker (removed on exit).
# WARREN_TEST_KEEP=1 keeps each script's scratch (build/test-scratch/<name>.XXXXXX).

set -u
export LC_ALL=C
# script(1) runs its -c command with $SHELL, and the tests build those commands with bash's
# printf %q ($'...' for a newline): a caller whose SHELL is unset or sh (CI) would hand them
# to dash
export SHELL=/bin/bash

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WARREN=${WARREN:-$REPO/build/warren}
PY=/usr/bin/python3
TEST_NAME=$(basename "$0" .t)
T_TIMEOUT=${T_TIMEOUT:-60}	# seconds any one warren command may take
TEST_USER=warren-test

# shellcheck source=images.sh
. "$REPO/tests/images.sh"

# ---------------------------------------------------------------- TAP

_tap_n=0
_tap_failed=0
_tap_planned=

plan() { _tap_planned=$1; echo "1..$1"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
bail_out() { echo "Bail out! $*"; exit 1; }

# diag TEXT...: each line of TEXT as a TAP comment (on stdout, so run-all shows it with
# the failure it belongs to).
diag() {
	local arg line
	for arg in "$@"; do
		while IFS= read -r line; do printf '# %s\n' "$line"; done <<<"$arg"
	done
}

_tap_desc() { local d=$*; printf '%s' "${d//#/\\#}"; }

# ok STATUS DESC: passes when STATUS is 0.
ok() {
	local st=$1; shift
	_tap_n=$((_tap_n + 1))
	if [ "$st" = 0 ]; then
		echo "ok $_tap_n - $(_tap_desc "$*")"
		return 0
	fi
	echo "not ok $_tap_n - $(_tap_desc "$*")"
	_tap_failed=$((_tap_failed + 1))
	return 1
}

# check DESC CMD...: runs CMD; passes when it exits 0 (its output is shown on failure).
check() {
	local desc=$1 out st; shift
	out=$("$@" 2>&1); st=$?
	ok "$st" "$desc" || diag "command: $*" "exit: $st" "$(_clip "$out")"
	return "$st"
}

_clip() { local s=$1; [ ${#s} -gt 3000 ] && s="${s:0:3000}... (${#1} chars)"; printf '%s' "$s"; }

is() {
	[ "$1" = "$2" ]; ok $? "$3" && return 0
	diag "     got: '$(_clip "$1")'" "expected: '$2'"
	_diag_run
	return 1
}
isnt() {
	[ "$1" != "$2" ]; ok $? "$3" && return 0
	diag "     got: '$(_clip "$1")'" "expected anything else"
	_diag_run
	return 1
}
like() {
	[[ $1 =~ $2 ]]; ok $? "$3" && return 0
	diag "     got: '$(_clip "$1")'" "expected to match: /$2/"
	_diag_run
	return 1
}
unlike() {
	! [[ $1 =~ $2 ]]; ok $? "$3" && return 0
	diag "     got: '$(_clip "$1")'" "expected not to match: /$2/"
	_diag_run
	return 1
}

# line_like TEXT ERE DESC: some line of TEXT matches ERE.
line_like() {
	local l
	while IFS= read -r l; do
		[[ $l =~ $2 ]] && { ok 0 "$3"; return 0; }
	done <<<"$1"
	ok 1 "$3"
	diag "     got: '$(_clip "$1")'" "expected a line matching: /$2/"
	_diag_run
	return 1
}
# no_line_like TEXT ERE DESC: no line of TEXT matches ERE.
no_line_like() {
	local l
	while IFS= read -r l; do
		if [[ $l =~ $2 ]]; then
			ok 1 "$3"; diag "line: '$l'" "expected no line matching: /$2/"; _diag_run
			return 1
		fi
	done <<<"$1"
	ok 0 "$3"
}
# one_warren_line DESC: ERR is exactly one line, and it starts with "warren: ".
one_warren_line() {
	[ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && [[ $ERR == "warren: "?* ]]; ok $? "$1" && return 0
	diag "stderr: '$(_clip "$ERR")'" "expected exactly one line starting with 'warren: '"
	return 1
}

# skip N WHY: N tests that did not run (counted as skipped, never as passed).
skip() {
	local n=$1 i; shift
	for ((i = 0; i < n; i++)); do
		_tap_n=$((_tap_n + 1))
		echo "ok $_tap_n # SKIP $*"
	done
}

# After a failed assertion: what the last warren command was and said.
_diag_run() {
	[ -n "${_last_cmd:-}" ] || return 0
	diag "last command: $_last_cmd" "exit: ${RC:-}" "stderr: $(_clip "${ERR:-}")"
}

# ---------------------------------------------------------------- scratch and cleanup

[ "$(id -u)" = 0 ] || bail_out "the integration tests run as root (they also run warren as $TEST_USER)"
[ -x "$WARREN" ] || bail_out "no warren binary at $WARREN (run make first)"

mkdir -p "$REPO/build/test-scratch" || bail_out "cannot create $REPO/build/test-scratch"
# Cells and the test user must traverse these: the worktree is bound at the same path.
chmod 755 "$REPO/build" "$REPO/build/test-scratch"
TEST_SCRATCH=$(mktemp -d -p "$REPO/build/test-scratch" "$TEST_NAME.XXXXXX") || bail_out "mktemp failed"
chmod 755 "$TEST_SCRATCH"
export TEST_SCRATCH

_cleanup_files=()
_bg_pids=()

# Kill what this script started that is still alive (processes whose command line names
# our scratch), unmount what is mounted under the scratch (deepest first) and remove it
# without crossing into any other mount.
_lib_cleanup() {
	local st=$? p m f
	for p in "${_bg_pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in $(procs_matching "$TEST_SCRATCH"); do kill -KILL "$p" 2>/dev/null; done
	while read -r m; do umount -l "$m" 2>/dev/null; done < <(mounts_under "$TEST_SCRATCH" | sort -r)
	for f in "${_cleanup_files[@]}"; do rm -rf --one-file-system -- "$f"; done
	if [ -n "${WARREN_TEST_KEEP:-}" ]; then
		echo "# kept $TEST_SCRATCH" >&2
	else
		rm -rf --one-file-system -- "$TEST_SCRATCH"
	fi
	if [ -n "$_tap_planned" ] && [ "$_tap_n" != "$_tap_planned" ]; then
		echo "# planned $_tap_planned tests but ran $_tap_n"
		[ "$st" = 0 ] && st=1
	elif [ -n "$_tap_planned" ]; then
		st=0	# every planned test ran: failures are in the TAP, not in the exit status
	fi
	exit "$st"
}
trap _lib_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# npm_cached SRC DEST: the npm packages of SRC/package.json, at SRC/package-lock.json's
# versions, installed into DEST (under build/: kept between runs, so the npm registry is needed
# once, and again when the lock changes); npm's temporary files in the scratch. Status 0 when
# they are there.
npm_cached() {
	local src=$1 dest=$2
	mkdir -p "$dest" "$TEST_SCRATCH/npm-tmp" || return 1
	cmp -s "$src/package-lock.json" "$dest/package-lock.json" && [ -d "$dest/node_modules" ] && return 0
	rm -rf "$dest/node_modules" "$dest/package-lock.json"
	cp "$src/package.json" "$src/package-lock.json" "$dest/" || return 1
	(cd "$dest" && TMPDIR=$TEST_SCRATCH/npm-tmp npm ci --no-audit --no-fund --ignore-scripts >/dev/null 2>&1) && return 0
	rm -f "$dest/package-lock.json"
	return 1
}

# host_tmp_marker: create a uniquely named file in the host's /tmp, removed on exit; its
# path is in MARKER. (Not in $(...): the cleanup list must be this shell's.)
host_tmp_marker() {
	MARKER=$(mktemp -p /tmp "warren-test-host-marker.XXXXXXXX") || return 1
	_cleanup_files+=("$MARKER")
}

# ---------------------------------------------------------------- the unprivileged user

# ensure_test_user: create the host user warren-test once (no password, no login shell).
ensure_test_user() {
	getent passwd "$TEST_USER" >/dev/null && return 0
	(
		flock 9
		getent passwd "$TEST_USER" >/dev/null ||
			useradd --user-group --no-create-home --home-dir /nonexistent \
				--shell /usr/sbin/nologin --comment "warren integration tests" "$TEST_USER"
	) 9>"$REPO/build/test-scratch/.useradd.lock"
}

ensure_test_user || bail_out "cannot create the user $TEST_USER"
TEST_USER_UID=$(id -u "$TEST_USER")
TEST_USER_GID=$(id -g "$TEST_USER")
# The test user's own corner of the scratch: a home, a worktree; its state dir is made
# by warren.
U_DIR=$TEST_SCRATCH/user
U_HOME=$U_DIR/home
U_STATE=$U_DIR/state
U_WORK=$U_DIR/work
mkdir -p "$U_HOME" "$U_WORK"
chown "$TEST_USER_UID:$TEST_USER_GID" "$U_DIR" "$U_HOME" "$U_WORK"
chmod 755 "$U_DIR" "$U_WORK"
chmod 700 "$U_HOME"

# AS_USER: a command prefix that runs what follows as warren-test, with a small clean
# environment (setpriv execs, so `"${AS_USER[@]}" cmd &` leaves $! = cmd's pid).
AS_USER=(setpriv --reuid="$TEST_USER_UID" --regid="$TEST_USER_GID" --init-groups
	env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$U_HOME" USER="$TEST_USER"
	LOGNAME="$TEST_USER" LANG=C.UTF-8)

# as_user CMD...: run CMD as warren-test.
as_user() { "${AS_USER[@]}" "$@"; }

# ---------------------------------------------------------------- modes

# use_mode root|user: who starts warren from now on.
#   root: warren started by root; the job is cell uid 1000 "warren", host uid 1000001000.
#   user: warren started by warren-test (rootless); the job is warren-test's uid.
use_mode() {
	MODE=$1
	case $MODE in
	root)
		RUNNER=()
		STATE=$TEST_SCRATCH/root/state
		WORK=$TEST_SCRATCH/root/work
		mkdir -p "$WORK"
		chmod 755 "$TEST_SCRATCH/root" "$WORK"
		JOB_UID=1000
		JOB_USER=warren
		HOST_JOB_UID=1000001000
		;;
	user)
		RUNNER=("${AS_USER[@]}")
		STATE=$U_STATE
		WORK=$U_WORK
		JOB_UID=$TEST_USER_UID
		JOB_USER=$TEST_USER
		HOST_JOB_UID=$TEST_USER_UID
		;;
	*) bail_out "use_mode: unknown mode $MODE" ;;
	esac
}

# mkdir_for_mode DIR [MODE]: a directory the current mode's invoker owns.
mkdir_for_mode() {
	mkdir -p "$1" || return 1
	[ "$MODE" = user ] && chown "$TEST_USER_UID:$TEST_USER_GID" "$1"
	chmod "${2:-755}" "$1"
}

# ---------------------------------------------------------------- running warren

_run_n=0
RC= OUT= ERR= TIMED_OUT=0 ELAPSED_MS=0 _last_cmd=

# bounded CMD...: run CMD with no stdin, capture stdout/stderr, stop it after $T_TIMEOUT
# seconds. Sets RC (the exit status, or "timeout"), OUT, ERR, TIMED_OUT.
bounded() {
	local o e t0 t1
	_run_n=$((_run_n + 1))
	o=$TEST_SCRATCH/.out.$_run_n
	e=$TEST_SCRATCH/.err.$_run_n
	_last_cmd="$*"
	t0=$(date +%s%N)
	timeout -k 5 "$T_TIMEOUT" "$@" </dev/null >"$o" 2>"$e"
	RC=$?
	t1=$(date +%s%N)
	ELAPSED_MS=$(((t1 - t0) / 1000000))
	TIMED_OUT=0
	if { [ "$RC" = 124 ] || [ "$RC" = 137 ]; } && [ "$ELAPSED_MS" -ge $((T_TIMEOUT * 1000)) ]; then
		TIMED_OUT=1
		RC=timeout
		diag "timed out after ${T_TIMEOUT}s: $*"
	fi
	OUT=$(cat "$o")
	ERR=$(cat "$e")
	rm -f "$o" "$e"
	return 0
}

# wr SUB ARGS...: warren SUB --state $STATE ARGS..., as the current mode's user.
wr() {
	local sub=$1; shift
	bounded "${RUNNER[@]}" "$WARREN" "$sub" --state "$STATE" "$@"
}
# wrun ARGS...: warren run --state $STATE --work $WORK ARGS...
wrun() { wr run --work "$WORK" "$@"; }
# wr_env K=V... -- SUB ARGS...: like wr, with K=V in warren's (the caller's) environment.
wr_env() {
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	local sub=$1; shift
	bounded "${RUNNER[@]}" env "${envs[@]}" "$WARREN" "$sub" --state "$STATE" "$@"
}

# start_bg CMD...: start CMD in the background, stdout/stderr to files; BG_PID, BG_OUT, BG_ERR.
# Its SIGINT is default (as for a command in a terminal's foreground), not ignored as bash
# makes it for background jobs.
start_bg() {
	_run_n=$((_run_n + 1))
	BG_OUT=$TEST_SCRATCH/.bgout.$_run_n
	BG_ERR=$TEST_SCRATCH/.bgerr.$_run_n
	"$@" </dev/null >"$BG_OUT" 2>"$BG_ERR" &
	BG_PID=$!
	_bg_pids+=("$BG_PID")
}
# wr_bg SUB ARGS...: warren in the background as the current mode's user.
wr_bg() {
	local sub=$1; shift
	start_bg "${RUNNER[@]}" env --default-signal=INT "$WARREN" "$sub" --state "$STATE" "$@"
}

# wait_bg PID [SECS]: wait for a background command, at most SECS (default $T_TIMEOUT);
# sets RC ("timeout" if it had to be killed).
wait_bg() {
	local pid=$1 secs=${2:-$T_TIMEOUT} i
	for ((i = 0; i < secs * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		RC=timeout
		diag "background pid $pid still running after ${secs}s; killed"
		return 1
	fi
	wait "$pid"
	RC=$?
}

# wait_for SECS CMD...: poll CMD every 0.1s until it succeeds (0) or SECS pass (1).
wait_for() {
	local secs=$1 i; shift
	for ((i = 0; i < secs * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}

# PASTA_CMD: a pgrep -f pattern of a pasta process warren started (its process name is
# passt.avx2 or passt on Debian: pgrep -x pasta never matches it).
PASTA_CMD='^[^ ]*/pasta '

# uniq_arg: a sleep duration (under 30s) that no other process on the host has in its
# command line, to find the job's processes from the host: `sleep "$(uniq_arg)"`.
uniq_arg() { printf '2%d.%d%05d\n' $((RANDOM % 9)) $$ $RANDOM; }

# start_fd_holder SOCK: a process outside any cell that listens on the unix socket SOCK (mode
# 0777: any job may connect), keeps every descriptor sent to it (SCM_RIGHTS) open until it is
# killed, answers each message with one byte and prints "held N". Sets HOLDER_PID, HOLDER_OUT.
start_fd_holder() {
	cat >"$TEST_SCRATCH/fd-holder.py" <<'EOF'
import os, socket, sys
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sys.argv[1])
os.chmod(sys.argv[1], 0o777)
srv.listen(8)
held = []
while True:
    c, _ = srv.accept()
    _, fds, _, _ = socket.recv_fds(c, 16, 8)
    held += fds + [c]
    c.send(b"k")
    print("held", len(fds), flush=True)
EOF
	start_bg "$PY" "$TEST_SCRATCH/fd-holder.py" "$1"
	HOLDER_PID=$BG_PID HOLDER_OUT=$BG_OUT
	wait_for 10 test -S "$1"
}

# slowness: how many times slower than an ordinary host this machine makes a cell (1 or
# more), measured once per script when first asked: the best of three `warren run --work none
# -- true` as root against CELL_START_REF_MS (an ordinary host, sanitizer build, loaded: 150-250 ms).
# A bound on how long a stop may take is scaled by it (within_ms), so that a TCG guest (make
# check-v2: 5-10 times slower) is not failed for its speed; on an ordinary host it is 1 and
# the bounds are what they say.
CELL_START_REF_MS=1000
SLOWNESS=
slowness() {
	[ -n "$SLOWNESS" ] && return 0
	local best=999999 i t0 t1 st
	st=$(mktemp -d -p "$TEST_SCRATCH")
	for i in 1 2 3; do
		t0=$(date +%s%N)
		timeout -k 5 "$T_TIMEOUT" "$WARREN" run --state "$st" --work none -- true </dev/null >/dev/null 2>&1
		t1=$(date +%s%N)
		[ $(((t1 - t0) / 1000000)) -lt "$best" ] && best=$(((t1 - t0) / 1000000))
	done
	rm -rf "$st"
	SLOWNESS=$(((best + CELL_START_REF_MS - 1) / CELL_START_REF_MS))
	[ "$SLOWNESS" -ge 1 ] || SLOWNESS=1
	[ "$SLOWNESS" = 1 ] || diag "this machine makes a cell in ${best}ms: the bounds on stopping times are ${SLOWNESS}x"
}
# within_ms MS: the last run (ELAPSED_MS) took less than MS on an ordinary host, scaled by
# this machine's slowness.
within_ms() {
	local e=$ELAPSED_MS
	slowness
	[ "$e" -lt $(($1 * SLOWNESS)) ]
}

# ---------------------------------------------------------------- run directories

# last_rundir [STATE]: the newest run directory (run ids sort by start time).
last_rundir() {
	local s=${1:-$STATE} d last=
	for d in "$s"/runs/run_*; do [ -d "$d" ] && last=$d; done
	[ -n "$last" ] && printf '%s\n' "$last"
}
# rundir_count [STATE]: how many run directories there are.
rundir_count() {
	local s=${1:-$STATE} d n=0
	for d in "$s"/runs/run_*; do [ -d "$d" ] && n=$((n + 1)); done
	echo "$n"
}
# kept_rundir: the run directory that --keep named in ERR: a line "warren: kept ..." with
# an absolute path ending in run_<id> (cli.md: "warren: kept run_<id> at <rundir>").
kept_rundir() {
	local line
	while IFS= read -r line; do
		if [[ $line =~ ^warren:\ kept\ .*[\ \'\"](/[^\ \'\"]*/run_[0-9A-Za-z]+)/?([\ \'\"\)\;,.]|$) ]]; then
			printf '%s\n' "${BASH_REMATCH[1]}"
			return 0
		fi
	done <<<"$ERR"
	return 1
}
# jget FILE EXPR: EXPR (Python, over the JSON as d) of a JSON file; strings raw, the rest
# as JSON (null, true, 12, [...]).
jget() {
	"$PY" - "$1" "$2" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    v = eval(sys.argv[2], {"d": d})
except Exception as e:
    print("<jget error: %s: %s>" % (type(e).__name__, e)); sys.exit(0)
print(v if isinstance(v, str) else json.dumps(v))
EOF
}

# stopped_line: the line "warren: run_<id> stopped: <cause>" of ERR (empty if none).
stopped_line() {
	local l
	while IFS= read -r l; do
		[[ $l =~ ^warren:\ run_[0-9A-Za-z]+\ stopped:\  ]] && { printf '%s\n' "$l"; return 0; }
	done <<<"$ERR"
	return 1
}
RUN_ID_RE='run_[0-9A-HJKMNP-TV-Z]{26}'

# ---------------------------------------------------------------- leftovers

SCRATCH_PARTS="tmp var-tmp home upper work root etc"

# scratch_gone RUNDIR: none of the run's scratch parts is left (prints what is).
scratch_gone() {
	local p left=0
	for p in $SCRATCH_PARTS; do
		if [ -e "$1/$p" ] || [ -L "$1/$p" ]; then echo "left: $1/$p"; left=1; fi
	done
	return $left
}
# mounts_under PATH: mount points (host mount namespace) at or below PATH or naming it.
mounts_under() {
	awk -v d="$1" 'index($2, d) || index($1, d) { print $2 }' /proc/self/mounts
}
# procs_matching STR: pids (other than this shell) whose command line contains STR.
# Pure bash: a grep or pgrep would see STR in its own command line.
procs_matching() {
	local p f args a
	for f in /proc/[0-9]*/cmdline; do
		p=${f#/proc/}; p=${p%/cmdline}
		[ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] && continue
		mapfile -d '' -t a 2>/dev/null <"$f" || continue
		args="${a[*]}"
		[[ $args == *"$1"* ]] && echo "$p"
	done
	return 0
}
no_procs_matching() { [ -z "$(procs_matching "$1")" ]; }
has_procs_matching() { [ -n "$(procs_matching "$1")" ]; }

# job_pids ARG: pids whose whole command line is exactly "sleep ARG" (a job's sleep, not
# the warren command that has "sleep ARG" among its own arguments).
job_pids() {
	local f p a
	for f in /proc/[0-9]*/cmdline; do
		p=${f#/proc/}; p=${p%/cmdline}
		mapfile -d '' -t a 2>/dev/null <"$f" || continue
		[ "${#a[@]}" = 2 ] && [ "${a[1]}" = "$1" ] && [[ ${a[0]} == sleep || ${a[0]} == */sleep ]] && echo "$p"
	done
	return 0
}
job_alive() { [ -n "$(job_pids "$1")" ]; }
job_gone() { [ -z "$(job_pids "$1")" ]; }
# cgroups_named STR: cgroup directories (any hierarchy) whose name contains STR.
cgroups_named() {
	find /sys/fs/cgroup -mindepth 1 -maxdepth 6 -type d -name "*$1*" 2>/dev/null
}

# nothing_left RUNDIR DESC [norecord]: one test: the run's scratch is gone, its record
# (result.json) is there (unless norecord: after warren itself was killed), and no mount,
# process or cgroup of it is left on the host.
nothing_left() {
	local rd=$1 desc=$2 id msgs=() x
	id=$(basename "$rd")
	if [ -z "$rd" ] || [ ! -d "$rd" ]; then
		ok 1 "$desc"; diag "no run directory '$rd'"; return 1
	fi
	x=$(scratch_gone "$rd") || msgs+=("$x")
	[ "${3:-}" = norecord ] || [ -f "$rd/result.json" ] || msgs+=("no record: $rd/result.json missing")
	x=$(mounts_under "$rd"); [ -z "$x" ] || msgs+=("mounts left: $x")
	x=$(mounts_under "$id"); [ -z "$x" ] || msgs+=("mounts naming $id left: $x")
	x=$(procs_matching "$rd"); [ -z "$x" ] || msgs+=("processes left: $(_pslist $x)")
	x=$(cgroups_named "$id"); [ -z "$x" ] || msgs+=("cgroups left: $x")
	if [ ${#msgs[@]} = 0 ]; then
		ok 0 "$desc"
	else
		ok 1 "$desc"
		diag "${msgs[@]}"
		return 1
	fi
}
_pslist() { ps -o pid=,args= -p "$(echo "$@" | tr ' ' ,)" 2>/dev/null; }

# state_clean: nothing of any run under $STATE is mounted, running or left as scratch.
state_clean() {
	local msgs=() x d
	for d in "$STATE"/runs/run_*; do
		[ -d "$d" ] || continue
		x=$(scratch_gone "$d") || msgs+=("$x")
		x=$(cgroups_named "$(basename "$d")"); [ -z "$x" ] || msgs+=("cgroups left: $x")
	done
	x=$(mounts_under "$STATE"); [ -z "$x" ] || msgs+=("mounts left: $x")
	x=$(procs_matching "$STATE"); [ -z "$x" ] || msgs+=("processes left: $(_pslist $x)")
	[ ${#msgs[@]} = 0 ] && return 0
	printf '%s\n' "${msgs[@]}"
	return 1
}

# ---------------------------------------------------------------- a world of network namespaces

# For tests of --net. The script first re-runs itself in a network and mount namespace of its
# own (before sourcing this file:
#   [ -n "${WARREN_NET_WORLD:-}" ] || exec env WARREN_NET_WORLD=1 unshare --net --mount --propagation private bash "$0" "$@"
# ), then, before its plan, calls net_world_up, which builds the rest of the world and sets W
# (its files) and INET (the "internet" namespace). Nothing is sent beyond these namespaces.
#   the world (warren's host): 198.51.100.1 on up0 and 192.168.200.1 on lo, a web
#       server on every address of its own at :8081 ("this is the host"), a private
#       /run/warren and /etc/resolv.conf (nameserver 203.0.113.53); routes to the test ranges
#       and to the private ones through the internet, no default route
#   the internet (198.51.100.2): web1 203.0.113.10:8080, web2 203.0.113.20:8080, a stand-in
#       for the cloud's metadata service at 169.254.169.254:80, a "LAN" web server at :8090
#       on 10.20.30.40, 172.16.5.5, 192.168.50.5 and 100.64.7.7 ("this is the lan"), dnsmasq at
#       203.0.113.53 answering from $W/hosts (web1.test, web2.test, lan.test, ...)
NET_LAN_ADDRS="10.20.30.40 172.16.5.5 192.168.50.5 100.64.7.7"
net_world_up() {
	local c a
	[ -n "${WARREN_NET_WORLD:-}" ] || bail_out "net_world_up: not in the world's namespaces (see lib.sh)"
	for c in nft dnsmasq curl python3 ip; do
		command -v "$c" >/dev/null || skip_all "$c is not installed (make deps)"
	done
	W=$TEST_SCRATCH/world
	mkdir -p "$W/web1" "$W/web2" "$W/hostweb" "$W/lan"
	# warren's host-wide lease directory, and the host's resolv.conf, are the world's own
	mkdir -p /run/warren && mount -t tmpfs -o mode=0755 warren-test /run/warren || bail_out "cannot mount a tmpfs on /run/warren"
	printf 'nameserver 203.0.113.53\n' >"$W/resolv.conf"
	mount --bind "$W/resolv.conf" /etc/resolv.conf || bail_out "cannot bind the world's resolv.conf"
	ip link set lo up
	INET=wt-inet-$$
	ip netns add "$INET" || bail_out "cannot create the internet namespace"
	trap '_net_world_down; _lib_cleanup' EXIT
	ip link add up0 type veth peer name up1 netns "$INET"
	ip addr add 198.51.100.1/24 dev up0 && ip link set up0 up
	ip addr add 192.168.200.1/32 dev lo # a private address of the host's own
	ip -n "$INET" link set lo up
	ip -n "$INET" addr add 198.51.100.2/24 dev up1 && ip -n "$INET" link set up1 up
	# a stand-in for the cloud's metadata service, reachable from the world (as on a cloud host)
	for a in 203.0.113.10 203.0.113.20 203.0.113.53 169.254.169.254 $NET_LAN_ADDRS; do
		ip -n "$INET" addr add "$a/32" dev lo
	done
	for a in 203.0.113.0/24 169.254.0.0/16 10.0.0.0/8 172.16.0.0/12 192.168.0.0/16 100.64.0.0/10; do
		ip route add "$a" via 198.51.100.2
	done
	echo "this is web1" >"$W/web1/index.html"
	echo "this is web2" >"$W/web2/index.html"
	echo "this is the host" >"$W/hostweb/index.html"
	echo "this is the lan" >"$W/lan/index.html"
	printf '%s\n' '203.0.113.10 web1.test' '203.0.113.20 web2.test' '203.0.113.10 move.test' \
		'203.0.113.10 a.web1.test b.web1.test c.web1.test d.web1.test e.web1.test' '10.20.30.40 lan.test' >"$W/hosts"
	start_bg ip netns exec "$INET" python3 -m http.server --bind 203.0.113.10 --directory "$W/web1" 8080
	start_bg ip netns exec "$INET" python3 -m http.server --bind 203.0.113.20 --directory "$W/web2" 8080
	start_bg ip netns exec "$INET" python3 -m http.server --bind 169.254.169.254 --directory "$W/hostweb" 80
	start_bg ip netns exec "$INET" python3 -m http.server --bind 0.0.0.0 --directory "$W/lan" 8090
	start_bg python3 -m http.server --bind 0.0.0.0 --directory "$W/hostweb" 8081
	start_bg ip netns exec "$INET" dnsmasq --keep-in-foreground --no-resolv --no-hosts --conf-file=/dev/null --user=root \
		--listen-address=203.0.113.53 --bind-interfaces --addn-hosts="$W/hosts" --local-ttl=1 --pid-file="$W/dnsmasq.pid"
	for a in 203.0.113.10:8080 203.0.113.20:8080 198.51.100.1:8081 192.168.200.1:8081 169.254.169.254 10.20.30.40:8090; do
		wait_for 10 _net_up "http://$a/" || bail_out "the world's web server at $a did not start"
	done
	wait_for 10 sh -c "ip netns exec $INET ss -lun | grep -q 203.0.113.53:53" || bail_out "the world's dnsmasq did not start"
}
_net_up() { curl -s -m 1 -o /dev/null "$1"; }
_net_world_down() {
	ip netns pids "$INET" 2>/dev/null | xargs -r kill -KILL
	ip netns del "$INET" 2>/dev/null
}

# net_world_rootless: what pasta needs of the world: a routable interface (a default route,
# to the internet namespace, which routes nowhere) and /dev/net/tun open to the test user (a
# node of the world's own, mode 0666 as udev makes it, bound over /dev/net/tun in the world only).
net_world_rootless() {
	ip route add default via 198.51.100.2
	mknod -m 666 "$W/tun" c 10 200 && mount --bind "$W/tun" /dev/net/tun || bail_out "cannot give the world a /dev/net/tun"
}

# net_left ID: what of run ID is left in the kernel and in the lease directory (empty: nothing)
net_left() {
	local id=$1 short=${1: -12}
	nft list ruleset 2>/dev/null | grep -F -- "$id" | head -3
	ip -br link 2>/dev/null | grep -F "wv$short"
	grep -rl -- "$id" /run/warren/net/leases 2>/dev/null
}
