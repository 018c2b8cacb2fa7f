#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# escape.t - the escape suite of issue 6 (tests/escape/): each attempt, a small static C
# program, runs as the job of a cell of its own and tries one way out; it prints its name and
# `held` or `ESCAPED`. The whole suite runs as root and rootless, on the host's / and on the
# busybox and Debian images (--rootfs), one TAP test per attempt per configuration. A test
# passes when the attempt's last line is "NAME: held", no line says ESCAPED, and what the
# host can check afterwards agrees (the sleep it started lives, /etc, the image, warren's
# binary and the worktree's .git are unchanged, no nftables table appeared...).
#
# NAME@0 is the attempt run with --user 0. symlink_race_worktree and symlink_race_git are
# races run from here: a racer swaps a path component with a symlink while warren starts.
# state_swap and gc_planted aim at the state directory (issue 10): a job that renames the
# state directory it lies in and plants runs/<its id> as a link to a victim, and a user who
# plants runs/<id of root's live run> -> victim in a state directory of theirs for root's gc.
. "$(dirname "$0")/../lib.sh"

command -v cc >/dev/null || skip_all "cc is needed to build the attempts"

ESC=$REPO/tests/escape
# What a job can leave in the worktree for the host's git (issue 10), one class per attempt
# (tests/escape/git_plant.c); git_plant_check runs git on the host afterwards.
GIT_CLASSES="git_commondir git_config_worktree git_gitfile_top git_nested_repo git_nested_gitfile
git_dotgit_symlink git_bare_repo git_modules git_worktrees git_attributes git_hookspath git_include
git_alternates git_rebase_todo git_remotes git_nested_hooks"
ATTEMPTS="read_host_tmp read_host_root write_etc write_image other_run_scratch other_state_scratch
ptrace_outside kill_outside mount mount@0 userns userns@0 seccomp_forbidden tiocsti tioclinux
proc_kcore sysrq_trigger worktree_symlink symlink_race_worktree symlink_race_git reexec_exe
reexec_exe@0 inherited_fd cgroup_move cgroup_peek rlimits rlimits@0 git_hooks git_hooks@0 nftables nftables@0
state_swap gc_planted output_held output_held_tty host_socket host_socket@0 $GIT_CLASSES"
ATTEMPTS=${ESCAPE_ATTEMPTS:-$ATTEMPTS}	# a subset while developing
N_ATTEMPTS=$(wc -w <<<"$ATTEMPTS")
RACE_ROUNDS=${RACE_ROUNDS:-15}
HELD_S=10	# output_held: how long warren may take in all (the job itself ends at once)
plan $((N_ATTEMPTS * 6))

# ---------------------------------------------------------------- build

BIN=$TEST_SCRATCH/bin
mkdir -p "$BIN"
for src in "$ESC"/*.c; do
	name=$(basename "$src" .c)
	TMPDIR=$TEST_SCRATCH cc -O1 -static -Wall -o "$BIN/$name" "$src" 2>"$TEST_SCRATCH/cc.log" ||
		bail_out "cannot build $name: $(cat "$TEST_SCRATCH/cc.log")"
done
chmod 755 "$BIN" "$BIN"/*

# A private copy of warren: the binary the attempts must not overwrite, safe from rebuilds
# of build/warren while the suite runs.
cp "$WARREN" "$TEST_SCRATCH/warren" && chmod 755 "$TEST_SCRATCH/warren" || bail_out "cannot copy $WARREN"
WARREN=$TEST_SCRATCH/warren

BB=$(image_busybox) || bail_out "cannot build the busybox image"
DEB=$(image_debian) || DEB=
STAMP=$TEST_SCRATCH/stamp
touch "$STAMP"
sleep 0.01
WARREN_SUM=$(sha256sum <"$WARREN")

# Secrets the attempts look for: a marker in the host's /tmp and one in the host's /root.
SECRET=warren-escape-secret-$$-$RANDOM$RANDOM
host_tmp_marker || bail_out "cannot create a marker in the host's /tmp"
TMP_MARKER=$MARKER
echo "$SECRET" >"$TMP_MARKER"
chmod 644 "$TMP_MARKER"
ROOT_MARKER=$(mktemp -p /root warren-escape-marker.XXXXXXXX) || bail_out "cannot create a marker in /root"
_cleanup_files+=("$ROOT_MARKER")
echo "$SECRET" >"$ROOT_MARKER"
chmod 644 "$ROOT_MARKER"
# Host services on world-writable unix sockets (issue 10), in a directory of the host's / the
# cell sees (not /tmp, /run or /home, which the cell has of its own): a stream and a datagram
# socket; the listener logs to HS_LOG whatever reaches it.
HS_DIR=/srv/warren-test-$$
HS_LOG=$TEST_SCRATCH/host-socket.log
mkdir -p "$HS_DIR" && chmod 755 "$HS_DIR" && _cleanup_files+=("$HS_DIR") || bail_out "cannot create $HS_DIR"
: >"$HS_LOG"
cat >"$TEST_SCRATCH/host-socket.py" <<'EOF'
import os, select, socket, sys
d, log = sys.argv[1], sys.argv[2]
st = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
st.bind(d + "/stream.sock"); st.listen(8)
dg = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
dg.bind(d + "/dgram.sock")
for p in ("stream.sock", "dgram.sock"):
    os.chmod(d + "/" + p, 0o777)
open(d + "/ready", "w").close()
while True:
    r, _, _ = select.select([st, dg], [], [])
    for s in r:
        # what came is logged and let go at once: a job's stdout held here would keep its run
        # waiting for the end of its output
        fds = []
        if s is st:
            c, _ = s.accept()
            c.settimeout(2)
            try:
                fds = socket.recv_fds(c, 16, 4)[1]
            except OSError:
                pass
            c.close()
            what = "stream connection, %d fds" % len(fds)
        else:
            fds = socket.recv_fds(dg, 16, 4)[1]
            what = "datagram, %d fds" % len(fds)
        for fd in fds:
            os.close(fd)
        with open(log, "a") as f:
            f.write(what + "\n")
EOF
start_bg "$PY" "$TEST_SCRATCH/host-socket.py" "$HS_DIR" "$HS_LOG"
wait_for 10 test -e "$HS_DIR/ready" || bail_out "the host's socket listener did not start"
HS_STREAM=$HS_DIR/stream.sock HS_DGRAM=$HS_DIR/dgram.sock

# A state directory of another invocation (as /var/lib/warren is to a rootless user).
OTHER_STATE=$TEST_SCRATCH/other/state
mkdir -p "$TEST_SCRATCH/other" && chmod 755 "$TEST_SCRATCH/other"

# ---------------------------------------------------------------- helpers

# new_wt NAME: a fresh worktree for one attempt of the current configuration, owned by the
# mode's invoker, holding the attempt's binary; sets WT.
new_wt() {
	WT=$TEST_SCRATCH/wt/$CONF/$1
	mkdir -p "$TEST_SCRATCH/wt/$CONF"
	chmod 755 "$TEST_SCRATCH/wt" "$TEST_SCRATCH/wt/$CONF"
	mkdir_for_mode "$WT"
	local bin
	bin=$(attempt_bin "$1")
	cp "$BIN/$bin" "$WT/$bin" && chmod 755 "$WT/$bin"
	[ "$MODE" = user ] && chown "$TEST_USER_UID:$TEST_USER_GID" "$WT/$bin"
	return 0
}

# attempt_bin NAME: the program an attempt runs.
attempt_bin() {
	local bin=${1%@0}
	case $bin in
	other_run_scratch | other_state_scratch) bin=reach_scratch ;;
	output_held_tty) bin=output_held ;;
	git_hooks) ;;
	git_*) bin=git_plant ;;
	esac
	echo "$bin"
}

# attempt NAME [WARREN-OPTIONS...] -- ARGS...: run the attempt in its worktree (new_wt first).
attempt() {
	local name=$1 opts=() bin; shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	bin=$(attempt_bin "$name")
	[[ $name == *@0 ]] && opts+=(--user 0)
	wr run --work "$WT" "${ROOTFS[@]}" "${opts[@]}" -- "./$bin" "$@"
}

# verdict NAME [HOSTCHECK-STATUS HOSTCHECK-MESSAGE]: one test: OUT's last line is
# "NAME: held", no line says ESCAPED, and the host's own check (0 = fine) agrees.
verdict() {
	local name=${1%@0} desc="$M $1" last st=0 msgs=()
	last=$(tr -d '\r\0' <<<"$OUT" | sed '/^$/d' | tail -n 1)
	[ "$last" = "$name: held" ] || { st=1; msgs+=("last line: '$last' (expected '$name: held')"); }
	if grep -q ESCAPED <<<"$OUT"; then st=1; msgs+=("ESCAPED:" "$(grep ESCAPED <<<"$OUT")"); fi
	if [ "${2:-0}" != 0 ]; then st=1; msgs+=("host check: ${3:-}"); fi
	if ok "$st" "$desc: held"; then return 0; fi
	diag "${msgs[@]}" "exit: $RC" "stdout:" "$(_clip "$OUT")" "stderr: $(_clip "$ERR")" "command: $_last_cmd"
	return 1
}

# A background run keeping SECRET in its /tmp, /var/tmp and $HOME under the file name
# BG_MARK; as the current mode's user (same state) or as root in OTHER_STATE. With --scratch
# none its scratch is on the host's disk under the state directory (by default it is a tmpfs
# in the run's own mount namespace, out of every other cell's sight anyway).
BG_MARK=warren-escape-scratch-marker
start_scratch_run() {	# same|other
	local wt=$TEST_SCRATCH/wt/$CONF/bg-$1 job
	mkdir -p "$TEST_SCRATCH/wt/$CONF"
	# (it lives until stop_bg: a run of the suite takes a few minutes on a host, over 20 in the
	# cgroup v2 guest under TCG, where a 120 s sleep ended it halfway and gc_planted took that
	# for its work)
	job="for d in /tmp /var/tmp \$HOME; do echo '$SECRET' > \$d/$BG_MARK; done; sleep 3600"
	if [ "$1" = same ]; then
		mkdir_for_mode "$wt"
		wr_bg run --work "$wt" --scratch none -- sh -c "$job"
		SAME_BG=$BG_PID
		wait_for 15 compgen -G "$STATE/runs/*/tmp/$BG_MARK" >/dev/null
	else
		mkdir -p "$wt" && chmod 755 "$wt"
		start_bg "$WARREN" run --state "$OTHER_STATE" --work "$wt" --scratch none -- sh -c "$job"
		OTHER_BG=$BG_PID
		wait_for 15 compgen -G "$OTHER_STATE/runs/*/tmp/$BG_MARK" >/dev/null
	fi
}
stop_bg() { kill -TERM "$1" 2>/dev/null; wait_bg "$1" 20; }

# The racer: swaps A and B (renameat2 RENAME_EXCHANGE) as fast as it can until STOP exists
# (at most 120 s), as the invoker of the mode (a user who owns the worktree's directory).
RACER=$TEST_SCRATCH/racer.py
cat >"$RACER" <<'EOF'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
a, b, stop = (p.encode() for p in sys.argv[1:4])
AT_FDCWD, RENAME_EXCHANGE = -100, 2
n, t0 = 0, time.time()
while not os.path.exists(stop) and time.time() - t0 < 120:
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    n += 1
    if n % 2 == 0 and n % 512 == 0:
        time.sleep(0)
# leave them as they started (an even number of swaps)
if n % 2:
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
print(n)
EOF
chmod 644 "$RACER"

# tree_sum DIR: a listing of DIR (names, modes, owners, contents) to compare before/after.
tree_sum() { (cd "$1" && find . -printf '%p %m %U %G %s %l\n' | sort && find . -type f -exec sha256sum {} + | sort) 2>&1; }

# run_race KIND: the symlink races (see below); prints nothing, sets RACE_ST and RACE_MSG.
run_race() {
	local kind=$1 R=$TEST_SCRATCH/race/$CONF/$1 i before after n stop=$TEST_SCRATCH/race/$CONF/$1.stop msgs=()
	mkdir -p "$TEST_SCRATCH/race/$CONF" && chmod 755 "$TEST_SCRATCH/race" "$TEST_SCRATCH/race/$CONF"
	mkdir -p "$R" && chown "$TEST_USER_UID:$TEST_USER_GID" "$R" && chmod 755 "$R"
	# the victim: a root-owned directory outside the worktree
	mkdir -p "$R/victim/wt" "$R/victim-git"
	echo victim >"$R/victim/wt/victim-file"
	printf '[core]\n\tbare = false\n' >"$R/victim-git/config"
	echo 'ref: refs/heads/main' >"$R/victim-git/HEAD"
	chown -R 0:0 "$R/victim" "$R/victim-git"
	chmod 755 "$R/victim" "$R/victim/wt" "$R/victim-git"
	before=$(tree_sum "$R/victim"; tree_sum "$R/victim-git")
	local a b work
	if [ "$kind" = worktree ]; then
		# --work R/p/wt; the racer exchanges the directory R/p with R/q, a symlink to R/victim
		mkdir -p "$R/p/wt"
		ln -s victim "$R/q"
		chown -h -R "$TEST_USER_UID:$TEST_USER_GID" "$R/p" "$R/q"
		a=$R/p b=$R/q work=$R/p/wt
	else
		# --work R/gw, a git repository; the racer exchanges R/gw/.git with R/gw/.git-evil, a
		# symlink to R/victim-git (a git directory without hooks, outside the worktree)
		mkdir -p "$R/gw"
		git init -q "$R/gw" && rm -rf "$R/gw/.git/hooks"
		ln -s ../victim-git "$R/gw/.git-evil"
		chown -h -R "$TEST_USER_UID:$TEST_USER_GID" "$R/gw"
		a=$R/gw/.git b=$R/gw/.git-evil work=$R/gw
	fi
	start_bg "${AS_USER[@]}" "$PY" "$RACER" "$a" "$b" "$stop"
	local racer=$BG_PID racer_out=$BG_OUT started=0
	# RACE_ROUNDS runs; when warren refused every one (it saw the swap: correct, but then no
	# job ran inside the race), go on until one starts, up to four times as many
	for ((i = 0; i < RACE_ROUNDS || (started == 0 && i < 4 * RACE_ROUNDS); i++)); do
		wr run --work "$work" "${ROOTFS[@]}" -- sh -c "echo x > escaped-$i; echo x >> victim-file; mkdir -p .git/hooks && echo x > .git/hooks/pre-commit; true"
		[ "$RC" = 0 ] && started=$((started + 1))
	done
	touch "$stop"
	wait_bg "$racer" 20
	n=$(cat "$racer_out" 2>/dev/null)
	after=$(tree_sum "$R/victim"; tree_sum "$R/victim-git")
	[ "$before" = "$after" ] || msgs+=("the victim outside the worktree changed:" "$(diff <(echo "$before") <(echo "$after"))")
	local m
	m=$(mounts_under "$R"); [ -z "$m" ] || msgs+=("mounts left: $m")
	[ "$started" -gt 0 ] || msgs+=("no run of the $i started")
	[ "${n:-0}" -gt 0 ] || msgs+=("the racer did not race (swaps: '${n:-}')")
	RACE_ST=0
	[ ${#msgs[@]} = 0 ] || RACE_ST=1
	RACE_MSG=$(printf '%s\n' "${msgs[@]}" "$started of $i runs started; ${n:-0} swaps")
	OUT="symlink_race_$kind: $([ "$RACE_ST" = 0 ] && echo held || echo ESCAPED)"
}


# ---------------------------------------------------------------- git on the host (issue 10)

# hgit ARGS...: git as the worktree's owner, as the host user would run it after the run, with
# the test's global configuration (GCFG) and no system one; never prompts, bounded in time.
hgit() {
	local envs=(env -u GIT_DIR -u GIT_WORK_TREE -u PAGER -u GIT_PAGER -u EDITOR -u VISUAL -u GIT_EDITOR
		-u GIT_SSH -u GIT_SSH_COMMAND HOME="$GHOME" GIT_CONFIG_GLOBAL="$GCFG" GIT_CONFIG_NOSYSTEM=1
		GIT_TERMINAL_PROMPT=0 TERM=xterm)
	if [ "$MODE" = user ]; then timeout 20 "${AS_USER[@]}" "${envs[@]}" git "$@"; else timeout 20 "${envs[@]}" git "$@"; fi
}

# git_plant_prepare CLASS: the repository WT (made by new_wt) and what CLASS needs on the host.
git_plant_prepare() {
	local c=$1 bin
	GHOME=$WT.home GCFG=$WT.gitconfig
	mkdir_for_mode "$GHOME"
	printf '[user]\n\tname = host\n\temail = host@example.invalid\n[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n' >"$GCFG"
	if [ "$c" = attributes ]; then
		# the host user's own drivers, which attributes planted by the job would choose
		printf '[filter "hostfilter"]\n\tclean = touch %s/PWNED-attributes-filter; cat\n[diff "hostdiff"]\n\tcommand = touch %s/PWNED-attributes-diff; true\n' "$WT" "$WT" >>"$GCFG"
	fi
	chmod 644 "$GCFG"
	bin=$(attempt_bin "$NAME")
	if [ "$c" = gitfile_top ]; then
		# WT is a linked worktree of WT.main: its .git is a gitfile
		mkdir_for_mode "$WT.main"
		hgit init -q "$WT.main" && echo t >"$WT.main/tracked.txt" && chmod 666 "$WT.main/tracked.txt"
		hgit -C "$WT.main" add tracked.txt && hgit -C "$WT.main" commit -qm init
		mv "$WT/$bin" "$WT.bin" && rmdir "$WT" && mkdir_for_mode "$WT"
		hgit -C "$WT.main" worktree add -q "$WT" -b linked >/dev/null
		mv "$WT.bin" "$WT/$bin"
		return
	fi
	hgit init -q "$WT"
	echo t >"$WT/tracked.txt"
	[ "$MODE" = user ] && chown "$TEST_USER_UID:$TEST_USER_GID" "$WT/tracked.txt"
	case $c in
	hookspath)
		mkdir -p "$WT/.githooks" && printf '#!/bin/sh\nexit 0\n' >"$WT/.githooks/pre-commit" && chmod 755 "$WT/.githooks/pre-commit"
		[ "$MODE" = user ] && chown -R "$TEST_USER_UID:$TEST_USER_GID" "$WT/.githooks"
		hgit -C "$WT" config core.hooksPath .githooks ;;
	include)
		: >"$WT/shared.gitconfig"
		[ "$MODE" = user ] && chown "$TEST_USER_UID:$TEST_USER_GID" "$WT/shared.gitconfig"
		hgit -C "$WT" config include.path ../shared.gitconfig ;;
	nested_hooks)
		hgit init -q "$WT/inner" ;;
	esac
	hgit -C "$WT" add -A . ':!'"$bin" && hgit -C "$WT" commit -qm init
	case $c in
	modules)
		mkdir_for_mode "$WT.lib"
		hgit init -q "$WT.lib" && hgit -C "$WT.lib" commit -q --allow-empty -m lib
		hgit -C "$WT" submodule add -q "$WT.lib" lib >/dev/null 2>&1 && hgit -C "$WT" commit -qm sub ;;
	worktrees)
		mkdir_for_mode "$WT.linked"
		hgit -C "$WT" worktree add -q "$WT.linked" -b linked >/dev/null 2>&1 ;;
	esac
	return 0
}

# git_plant_check: run what a host user runs in the worktree, in every repository below it and
# in its linked worktrees; sets st/msg when anything the job planted ran (a PWNED-* file).
git_plant_check() {
	local d dirs=("$WT" "$WT/vendor/lib" "$WT/sub" "$WT/sym" "$WT/bare/r.git" "$WT/lib" "$WT/inner" "$WT.linked" "$WT.main")
	for d in "${dirs[@]}"; do
		[ -d "$d" ] || continue
		(
			cd "$d" || exit 0
			hgit status
			hgit diff
			hgit diff --cached
			if [ "$MODE" = user ]; then
				timeout 20 script -qec "$(printf '%q ' "${AS_USER[@]}" env HOME="$GHOME" GIT_CONFIG_GLOBAL="$GCFG" GIT_CONFIG_NOSYSTEM=1 TERM=xterm git -p log -1)" /dev/null
			else
				timeout 20 script -qec "$(printf '%q ' env HOME="$GHOME" GIT_CONFIG_GLOBAL="$GCFG" GIT_CONFIG_NOSYSTEM=1 TERM=xterm git -p log -1)" /dev/null
			fi
			hgit add -A .
			hgit commit -qm 'after the run'
			hgit commit -q --amend --allow-empty
			hgit checkout -q -b "after-$RANDOM"
			hgit checkout -q -
			hgit fetch -q evil
			printf 'protocol=https\nhost=warren-escape.invalid\n\n' | hgit credential fill
			hgit pwn
			hgit rebase --continue
		) </dev/null >/dev/null 2>&1
	done
	# what does not run in this battery (or this git) must still be out of git's way
	local c=${NAME#git_} f left=()
	case $c in
	config_worktree) f=(.git/config.worktree) ;;
	alternates) f=(.git/objects/info/alternates) ;;
	rebase_todo) f=(.git/rebase-merge) ;;
	remotes) f=(.git/remotes/evil) ;;
	worktrees) f=(.git/worktrees/*/config.worktree) ;;
	*) f=() ;;
	esac
	for x in "${f[@]}"; do [ -e "$WT/$x" ] && left+=("$x"); done
	[ ${#left[@]} = 0 ] || { st=1 msg="still where git reads it after the run: ${left[*]}"; }
	local pwned
	pwned=$(find "$WT" "$WT".* -maxdepth 4 -name 'PWNED-*' 2>/dev/null | sed "s|$WT|WT|" | sort | tr '\n' ' ')
	[ -z "$pwned" ] || { st=1 msg="git on the host ran what the job planted: $pwned"; }
}

# state_attempt state_swap|gc_planted: the two attacks on the state directory; sets OUT
# (ending "NAME: held" when warren refused or the attack changed nothing), st and msg.
state_attempt() {
	local name=$1 V=$TEST_SCRATCH/victim/$CONF-$1 before
	mkdir -p "$V"/{etc,home,root,tmp} && echo victim >"$V/etc/victim-file" && echo v >"$V/tmp/v"
	chmod 755 "$TEST_SCRATCH/victim" "$V"
	before=$(tree_sum "$V")
	if [ "$name" = state_swap ]; then
		# --state inside the worktree: the job moves it away and plants runs/<its id>
		new_wt "$name"
		bounded "${RUNNER[@]}" "$WARREN" run --state "$WT/state" --work "$WT" "${ROOTFS[@]}" -- sh -c \
			"id=\$(hostname); mv state state.moved && mkdir -p state/runs && ln -s '$V' state/runs/\$id; echo $name: held"
		if [ "$RC" = 125 ] && [[ $ERR == *"inside the worktree"* ]] && [ ! -e "$WT/state" ]; then
			OUT="$ERR"$'\n'"$name: held"
		fi
	else
		# a state directory of the test user's with runs/<id of root's live run> -> victim;
		# root runs gc on it
		local P=$TEST_SCRATCH/planted/$CONF rid
		rid=$(basename "$(ls -d "$OTHER_STATE"/runs/run_* 2>/dev/null | tail -n 1)")
		mkdir -p "$P/state/runs" && chmod 755 "$TEST_SCRATCH/planted" "$P"
		ln -s "$V" "$P/state/runs/$rid"
		chown -h -R "$TEST_USER_UID:$TEST_USER_GID" "$P/state" && chmod 700 "$P/state" "$P/state/runs"
		bounded "$WARREN" gc --state "$P/state"
		OUT="$ERR"$'\n'"$name: held"
		if [ -z "$rid" ] || [ -z "${OTHER_BG:-}" ] || ! kill -0 "$OTHER_BG" 2>/dev/null ||
			! compgen -G "$OTHER_STATE/runs/$rid/tmp/$BG_MARK" >/dev/null; then
			st=1 msg="root's live run ${rid:-(none)} in $OTHER_STATE is gone after root's gc of the planted state"
		fi
	fi
	local after; after=$(tree_sum "$V")
	[ "$after" = "$before" ] || { st=1 msg="$msg the victim changed: $(diff <(echo "$before") <(echo "$after") | head -10)"; }
}

# output_held_check STREAM LINES: after an output_held attempt, warren ended by itself soon after
# the job, with the job's own exit 0, and the record says so and names the stream held outside
# (STREAM), as does a line of warren's in LINES; sets st/msg otherwise.
output_held_check() {
	local rj stream=$1
	grep -q "^warren: run_.*: a process outside the cell held the job's output open ($stream" <<<"$2" ||
		{ st=1 msg="no line 'warren: RUN: a process outside the cell held the job's output open ($stream...' in: $2"; }
	if [ "$RC" = timeout ]; then
		st=1 msg="warren did not end within ${HELD_S}s of the job's exit (it waited for output a process outside the cell held open)"
		return
	fi
	rj=$(last_rundir)/result.json
	[ "$RC" = 0 ] || { st=1 msg="${msg:+$msg; }exit $RC, not the job's own 0"; }
	[ "$(jget "$rj" '"%s %s" % (d["status"], d["exit_code"])')" = "exited 0" ] ||
		{ st=1 msg="${msg:+$msg; }the record says $(jget "$rj" '[d["status"], d["exit_code"], d["cause"]]'), not exited 0"; }
	[ "$(jget "$rj" '"'"$stream"'" in [h["stream"] for h in d.get("output_held_outside") or []]')" = true ] ||
		{ st=1 msg="${msg:+$msg; }output_held_outside in the record: $(jget "$rj" 'd.get("output_held_outside")') (expected $stream)"; }
}

# ---------------------------------------------------------------- the suite

run_suite() {
	local name st msg x
	for name in $ATTEMPTS; do
		st=0 msg=
		case $name in
		read_host_tmp)
			new_wt "$name"; attempt "$name" -- "$SECRET" "$TMP_MARKER"
			verdict "$name" ;;
		read_host_root)
			new_wt "$name"; attempt "$name" -- "$SECRET" "$ROOT_MARKER"
			verdict "$name" ;;
		write_etc)
			new_wt "$name"; attempt "$name" -- "$CONF"
			x=$(ls -d /etc/warren-escape-* 2>/dev/null); [ -z "$x" ] || { st=1 msg="on the host: $x"; rm -rf /etc/warren-escape-*; }
			verdict "$name" "$st" "$msg" ;;
		write_image)
			new_wt "$name"
			if [ -n "$IMG" ]; then
				attempt "$name" -- "$CONF" "$IMG" overlay
				x=$(find "$IMG" -xdev -newer "$STAMP" -print 2>/dev/null | head -5)
			else
				attempt "$name" -- "$CONF" -
				x=$(ls -d /warren-escape-* /usr/bin/warren-escape-* /bin/warren-escape-* 2>/dev/null)
			fi
			[ -z "$x" ] || st=1 msg="changed on the host: $x"
			verdict "$name" "$st" "$msg" ;;
		other_run_scratch)
			new_wt "$name"
			if [ -n "${SAME_BG:-}" ] && compgen -G "$STATE/runs/*/tmp/$BG_MARK" >/dev/null; then
				attempt "$name" -- "$name" "$SECRET" "$BG_MARK" "$STATE"
				verdict "$name"
			else
				OUT="(the other run did not start)"; verdict "$name" 1 "no second run with a marker in $STATE"
			fi ;;
		other_state_scratch)
			new_wt "$name"
			if [ -n "${OTHER_BG:-}" ] && compgen -G "$OTHER_STATE/runs/*/tmp/$BG_MARK" >/dev/null; then
				attempt "$name" -- "$name" "$SECRET" "$BG_MARK" "$OTHER_STATE"
				verdict "$name"
			else
				OUT="(the other run did not start)"; verdict "$name" 1 "no run with a marker in $OTHER_STATE"
			fi ;;
		ptrace_outside | kill_outside)
			new_wt "$name"
			start_bg setpriv --reuid="$HOST_JOB_UID" --regid="$HOST_JOB_UID" --clear-groups sleep 100
			local sp=$BG_PID
			attempt "$name" -- "$sp"
			if ! kill -0 "$sp" 2>/dev/null; then
				st=1 msg="the host's sleep (pid $sp) is dead"
			elif ! grep -q '^TracerPid:[[:space:]]*0$' "/proc/$sp/status"; then
				st=1 msg="the host's sleep is traced: $(grep TracerPid "/proc/$sp/status")"
			fi
			kill -KILL "$sp" 2>/dev/null; wait "$sp" 2>/dev/null
			verdict "$name" "$st" "$msg" ;;
		tiocsti)
			# on a terminal: warren under script(1), so the job's fds 0-2 are a pty
			new_wt "$name"
			local cmd
			cmd=$(printf '%q ' "${RUNNER[@]}" "$WARREN" run --state "$STATE" --work "$WT" "${ROOTFS[@]}" -- ./tiocsti need-tty)
			bounded script -qec "$cmd" /dev/null
			verdict "$name" ;;
		worktree_symlink)
			new_wt "$name"
			local outside=$TEST_SCRATCH/outside-git/$CONF
			mkdir -p "$outside" && printf '[core]\n\tbare = false\n' >"$outside/config" && chmod 755 "$TEST_SCRATCH/outside-git" "$outside"
			local before; before=$(tree_sum "$outside")
			ln -s /root "$WT/link-root"; ln -s /etc/shadow "$WT/link-shadow"; ln -s /etc "$WT/link-etc"
			ln -s "$TMP_MARKER" "$WT/link-tmp-marker"; ln -s "$ROOT_MARKER" "$WT/link-root-marker"
			ln -s "$STATE" "$WT/link-state"; ln -s "$outside" "$WT/.git"
			[ "$MODE" = user ] && chown -h "$TEST_USER_UID:$TEST_USER_GID" "$WT"/link-* "$WT/.git"
			attempt "$name" -- "$SECRET"
			[ "$(tree_sum "$outside")" = "$before" ] || st=1 msg="the directory .git points to changed: $(ls -la "$outside")"
			x=$(ls -d /etc/warren-escape* 2>/dev/null); [ -z "$x" ] || { st=1 msg="$msg on the host: $x"; rm -rf /etc/warren-escape*; }
			verdict "$name" "$st" "$msg" ;;
		symlink_race_worktree | symlink_race_git)
			run_race "${name#symlink_race_}"
			verdict "$name" "$RACE_ST" "$RACE_MSG" ;;
		reexec_exe | reexec_exe@0)
			new_wt "$name"; attempt "$name" -- "$WARREN"
			[ "$(sha256sum <"$WARREN")" = "$WARREN_SUM" ] || st=1 msg="warren's binary changed"
			verdict "$name" "$st" "$msg" ;;
		inherited_fd)
			# fds 5..9 open on host files when warren starts
			new_wt "$name"
			local f6=$TEST_SCRATCH/fd6-$CONF; : >"$f6"
			bounded bash -c 'exec 5<"$1" 6>>"$2" 7</ 8</root 9<"$3"; shift 3; exec "$@"' _ \
				"$TMP_MARKER" "$f6" "$WARREN" "${RUNNER[@]}" "$WARREN" run --state "$STATE" --work "$WT" "${ROOTFS[@]}" -- ./inherited_fd
			[ -s "$f6" ] && st=1 msg="the host file on fd 6 was written"
			verdict "$name" "$st" "$msg" ;;
		git_hooks | git_hooks@0)
			new_wt "$name"
			if [ "$MODE" = user ]; then as_user git init -q "$WT"; else git init -q "$WT"; fi
			local gb; gb=$(tree_sum "$WT/.git")
			attempt "$name" --
			[ "$(tree_sum "$WT/.git" 2>&1)" = "$gb" ] && [ -d "$WT/.git" ] && [ ! -L "$WT/.git" ] ||
				st=1 msg="the worktree's .git changed: $(diff <(echo "$gb") <(tree_sum "$WT/.git") | head -20)"
			verdict "$name" "$st" "$msg" ;;
		git_*)
			new_wt "$name"
			NAME=$name git_plant_prepare "${name#git_}" || { st=1 msg="cannot prepare the repository"; }
			attempt "$name" -- "${name#git_}"
			[ "$st" = 0 ] && NAME=$name git_plant_check
			verdict "$name" "$st" "$msg" ;;
		state_swap | gc_planted)
			state_attempt "$name"
			verdict "$name" "$st" "$msg" ;;
		cgroup_peek)
			# ... and another host user cannot list the runs either
			new_wt "$name"; attempt "$name" --
			for x in /sys/fs/cgroup/warren /sys/fs/cgroup/*/warren; do
				[ -d "$x" ] || continue
				if setpriv --reuid=65534 --regid=65534 --clear-groups ls "$x" 2>/dev/null | grep -q '^run_'; then
					st=1 msg="$msg another host user lists the runs in $x"
				fi
			done
			verdict "$name" "$st" "$msg" ;;
		output_held | output_held_tty)
			# a holder outside the cell (the test's own process) keeps what the job sends it;
			# warren has HELD_S seconds to end after the job did
			new_wt "$name"
			start_fd_holder "$WT/holder.sock"
			local hp=$HOLDER_PID cmd
			if [ "$name" = output_held ]; then
				T_TIMEOUT=$HELD_S attempt "$name" -- "$WT/holder.sock"
				output_held_check stdout "$ERR"
			else
				cmd=$(printf '%q ' "${RUNNER[@]}" "$WARREN" run --state "$STATE" --work "$WT" "${ROOTFS[@]}" -- ./output_held "$WT/holder.sock")
				T_TIMEOUT=$HELD_S bounded script -qec "$cmd" /dev/null
				output_held_check terminal "$OUT"
				OUT=$(grep -v '^warren: ' <<<"$OUT")	# the job's terminal is warren's too
			fi
			kill -KILL "$hp" 2>/dev/null; wait "$hp" 2>/dev/null
			verdict "$name" "$st" "$msg" ;;
		host_socket | host_socket@0)
			# nothing reaches the listener; on the host's / the refusal is in result.json
			new_wt "$name"
			local before; before=$(wc -l <"$HS_LOG")
			attempt "$name" -- "$HS_STREAM" "$HS_DGRAM"
			[ "$(wc -l <"$HS_LOG")" = "$before" ] || st=1 msg="the host's listener was reached: $(tail -n +$((before + 1)) "$HS_LOG")"
			if [ -z "$IMG" ]; then
				x=$(jget "$(last_rundir)/result.json" "[c['path'] for c in d['refused_connects']]")
				[[ $x == *"\"$HS_STREAM\""* ]] || { st=1 msg="$msg result.json: refused_connects $x does not name $HS_STREAM"; }
			fi
			verdict "$name" "$st" "$msg" ;;
		nftables | nftables@0)
			new_wt "$name"; attempt "$name" --
			x=$(nft list tables 2>/dev/null | grep warren_escape)
			[ -z "$x" ] || { st=1 msg="on the host: $x"; nft delete table inet warren_escape 2>/dev/null; nft delete table inet warren_escape_cli 2>/dev/null; }
			verdict "$name" "$st" "$msg" ;;
		*)
			new_wt "$name"; attempt "$name" --
			verdict "$name" ;;
		esac
	done
}

for mode in root user; do
	use_mode "$mode"
	for img in host busybox debian; do
		CONF=$mode-$img
		case $img in
		host) IMG= M="[$mode]" ;;
		busybox) IMG=$BB M="[$mode --rootfs busybox]" ;;
		debian) IMG=$DEB M="[$mode --rootfs debian]" ;;
		esac
		if [ "$img" = debian ] && [ -z "$DEB" ]; then
			skip "$N_ATTEMPTS" "no Debian image (see build/cache/images/debian.build.log)"
			continue
		fi
		ROOTFS=()
		[ -n "$IMG" ] && ROOTFS=(--rootfs "$IMG")
		SAME_BG= OTHER_BG=
		start_scratch_run same
		start_scratch_run other
		run_suite
		stop_bg "$SAME_BG"
		stop_bg "$OTHER_BG"
	done
done
