#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cli.t - exit codes and refusals of `warren run`, as root and as an unprivileged user:
# the job's own code passes through, 128+N for a signal, 125 with one line "warren: ..."
# for warren's own failures, 126/127 as the shell does, and nothing left on the host.
. "$(dirname "$0")/../lib.sh"

plan $((77 + 26 + 11))

bounded "$WARREN" --version
is "$RC" 0 "warren --version exits 0"
like "$OUT" '[0-9]' "warren --version prints a version"
bounded "$WARREN" --help
is "$RC" 0 "warren --help exits 0"
bounded "$WARREN" help run
[ "$RC" = 0 ] && [[ $OUT == *--rootfs* ]] && [[ $OUT == *--work* ]]
ok $? "warren help run exits 0 and describes --rootfs and --work"
bounded "$WARREN" no-such-subcommand
is "$RC" 125 "an unknown subcommand exits 125"

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"

	wrun -- sh -c 'exit 7'
	is "$RC" 7 "$M the job's exit code (7) passes through"
	works=$?
	wrun -- true
	is "$RC/$OUT/$ERR" "0//" "$M a job that succeeds: exit 0, and warren prints nothing"
	# the record's timings: when the run reached each of its steps, in the order they come
	RJ=$(last_rundir)/result.json
	t=$(jget "$RJ" '" ".join(str(d["timings"][k]) for k in ("cell_ready_us", "job_started_us", "job_ended_us", "cell_gone_us", "recorded_us"))')
	# shellcheck disable=SC2086 # the five numbers as five words
	"$PY" -c 'import sys; v = [int(x) for x in sys.argv[1:]]; sys.exit(not (len(v) == 5 and 0 < v[0] < v[1] < v[2] <= v[3] <= v[4] < 60000000))' $t 2>/dev/null
	ok $? "$M result.json's timings: cell ready < job let go < job ended <= cell gone <= recorded (us: $t)"
	wr show "$(basename "$(dirname "$RJ")")"
	like "$OUT" "timings +cell ready [0-9.]+ ms, job [0-9.]+ to [0-9.]+ ms, cell gone [0-9.]+ ms, record [0-9.]+ ms" \
		"$M warren show: a timings row"
	wrun -- sh -c 'kill -TERM $$'
	is "$RC" 143 "$M a job killed by SIGTERM: exit 128+15"
	# the job starts with every signal's default action, whatever warren's caller ignored
	# (nohup, a shell's background job: here every signal, glibc's own 32 and 33 too, set
	# through the system call) or warren set for itself
	IGNORE_ALL='
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
act = struct.pack("QQQQ", 1, 0, 0, 0)  # SIG_IGN, no flags, no restorer, empty mask
for sig in range(1, 65):
    if sig not in (9, 19):
        libc.syscall(13, sig, act, None, 8)  # rt_sigaction
os.execvp(sys.argv[1], sys.argv[1:])'
	bounded "${RUNNER[@]}" "$PY" -c "$IGNORE_ALL" "$WARREN" run --state "$STATE" --work "$WORK" -- grep '^SigIgn:' /proc/self/status
	is "$RC:$OUT" "0:SigIgn:	0000000000000000" "$M a caller that ignores every signal: the job ignores none" || diag "$ERR"

	# warren's own refusals: 125 and exactly one line "warren: ..."
	# "--" is optional, as with bubblewrap: the first word that is not an option is the command
	wrun sh -c 'exit 5'
	is "$RC" 5 "$M a command without -- runs too"
	is "$ERR" "" "$M ... and warren prints nothing"
	wrun --no-such-option -- true
	is "$RC" 125 "$M an unknown option exits 125"
	one_warren_line "$M ... with one line 'warren: ...'"
	like "$ERR" 'no-such-option' "$M ... naming the option"
	wr run --work "$TEST_SCRATCH/no-such-worktree" -- true
	is "$RC" 125 "$M a worktree that does not exist exits 125"
	one_warren_line "$M ... with one line 'warren: ...'"
	like "$ERR" "no-such-worktree" "$M ... naming the worktree"
	wrun --rootfs "$TEST_SCRATCH/no-such-image" -- true
	is "$RC" 125 "$M a missing --rootfs exits 125"
	one_warren_line "$M ... with one line 'warren: ...'"
	like "$ERR" "no-such-image" "$M ... naming the image"
	wrun --time 5parsecs -- true
	is "$RC" 125 "$M a bad duration (--time 5parsecs) exits 125"
	one_warren_line "$M ... with one line 'warren: ...'"
	touch "$TEST_SCRATCH/a-file"
	bounded "${RUNNER[@]}" "$WARREN" run --state "$TEST_SCRATCH/a-file/state" --work "$WORK" -- true
	is "$RC" 125 "$M a state directory that cannot be made exits 125"
	one_warren_line "$M ... with one line 'warren: ...'"

	# in the cell: 127 not found, 126 not executable, as the shell does
	wrun -- no-such-command-xyz
	is "$RC" 127 "$M a command not found in the cell exits 127"
	line_like "$ERR" '^warren: .*no-such-command-xyz' "$M ... with a line 'warren: ...' naming it"
	printf '#!/bin/sh\necho should not run\n' >"$WORK/not-executable"
	chmod 644 "$WORK/not-executable"
	wrun -- "$WORK/not-executable"
	is "$RC" 126 "$M a command that is not executable exits 126"
	line_like "$ERR" '^warren: .*not-executable' "$M ... with a line 'warren: ...' naming it"
	rm -f "$WORK/not-executable"
	# an executable script without #!: run by the cell's /bin/sh, as execvp(3) runs it
	printf 'echo ran by sh "$@"\nexit 4\n' >"$WORK/no-shebang"
	chmod 755 "$WORK/no-shebang"
	[ "$mode" = user ] && chown "$TEST_USER_UID" "$WORK/no-shebang"
	wrun -- "$WORK/no-shebang" "a b"
	is "$RC:$OUT" "4:ran by sh a b" "$M an executable script without #! runs through /bin/sh (its output, its exit code)"
	rm -f "$WORK/no-shebang"
	wrun -- /
	is "$RC" 126 "$M a directory as the command exits 126"

	# the caller's home as the worktree (issue 10): refused from the current directory, a note
	# with --work
	if [ "$mode" = user ]; then home=$U_HOME; else home=$TEST_SCRATCH/root-home; mkdir -p "$home"; fi
	bounded "${RUNNER[@]}" env HOME="$home" sh -c 'cd "$1" && shift && exec "$@"' _ "$home" "$WARREN" run --state "$STATE" -- true
	is "$RC" 125 "$M the home directory as the implicit worktree exits 125"
	line_like "$ERR" "^warren: the worktree would be $home \(the current directory\), your home directory: .*pass --work $home" "$M ... with one line that says how to name it"
	bounded "${RUNNER[@]}" env HOME="$home" "$WARREN" run --state "$STATE" --work "$home" -- true
	is "$RC" 0 "$M --work HOME runs"
	line_like "$ERR" "^warren: note: the worktree $home is your home directory" "$M ... with a note"

	# the state directory inside the worktree (issue 10): refused
	bounded "${RUNNER[@]}" "$WARREN" run --state "$WORK/state-inside" --work "$WORK" -- true
	is "$RC" 125 "$M a state directory inside the worktree exits 125"
	line_like "$ERR" "^warren: --work $WORK: warren's state directory $WORK/state-inside is inside the worktree.*pass --state DIR outside it" "$M ... with one line naming both"
	rm -rf "$WORK/state-inside"

	x=$(state_clean) && [ "$works" = 0 ]
	ok $? "$M after the refusals nothing is left (scratch, mounts, processes)" || diag "$x" "warren works: $works"
done

# ================================================================ issue 16: the command line
use_mode root
M="[options]"
wrun --tim 10s -- true
[ "$RC" = 125 ] && [ "$ERR" = "warren: run: unknown option '--tim'; options are written whole: did you mean --time? (see 'warren run --help')" ]
ok $? "$M an abbreviation (--tim) is refused with one line that gives the whole name" || diag "rc $RC: $ERR"
wrun --m 1G -- true
[ "$RC" = 125 ] && [[ $ERR == *"unknown option '--m'"* ]]
ok $? "$M --m (a prefix of --memory) is refused" || diag "rc $RC: $ERR"
wrun --colour x -- true
[ "$RC" = 125 ] && [[ $ERR == "warren: run: unknown option '--colour'"* ]] && [[ $ERR != *"did you mean"* ]]
ok $? "$M --colour: unknown, and no far-off suggestion (--workdir or --user are not close)" || diag "rc $RC: $ERR"
wrun --memroy 1G -- true
[ "$RC" = 125 ] && [[ $ERR == *"did you mean --memory?"* ]]
ok $? "$M a typo (--memroy) gets the close name" || diag "rc $RC: $ERR"
bounded "$WARREN" run -it --state "$STATE" --work "$WORK" -- sh -c 'echo in-cell'
is "$RC/$OUT" "0/in-cell" "$M run -it (docker's habit) is accepted"
wrun -ix -- true
[ "$RC" = 125 ] && [[ $ERR == "warren: run: unknown option '-x' in -ix"* ]]
ok $? "$M -ix: refused, naming -x" || diag "rc $RC: $ERR"
wrun --keep=yes -- true
[ "$RC" = 125 ] && [[ $ERR == *"option --keep takes no value"* ]]
ok $? "$M --keep=yes: refused, --keep takes no value" || diag "rc $RC: $ERR"
wrun -- true
id=$(basename "$(last_rundir)")
wr show "$id" --json
is "$RC/$("$PY" -c 'import json, sys; print(json.load(sys.stdin)["id"])' <<<"$OUT" 2>&1)" "0/$id" "$M show RUN --json: an option after the run id is taken"
wr gc "$id" --older-than 1d
is "$RC" 0 "$M gc RUN --older-than 1d: so is gc's" || diag "$ERR"
wr gc "$id" --keep-runs 2
is "$RC:$ERR" "125:warren: --keep-runs and --keep-for work on the whole history: give them without RUN (see 'warren gc --help')" \
	"$M gc RUN --keep-runs: refused in one line (retention is the whole history's)"
wr logs --folow
[ "$RC" = 125 ] && [[ $ERR == *"did you mean --follow?"* ]]
ok $? "$M logs --folow: did you mean --follow?" || diag "rc $RC: $ERR"

# ================================================================ issue 34: the small ones
M="[help]"
SUBS=$("$WARREN" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' | sort -u)
bad_h= bad_help=
while IFS= read -r w; do
	# shellcheck disable=SC2086 # the words of a command line
	bounded "$WARREN" $w -h
	{ [ "$RC" = 0 ] && [[ $OUT == "usage: warren "* ]] && [ -z "$ERR" ]; } || bad_h="$bad_h [$w: $RC $ERR]"
	# shellcheck disable=SC2086
	bounded "$WARREN" $w --help
	{ [ "$RC" = 0 ] && [[ $OUT == "usage: warren "* ]] && [ -z "$ERR" ]; } || bad_help="$bad_help [$w: $RC $ERR]"
done < <(printf '%s\n' $SUBS "job run" "job check" "image ls" "image rm" "oci run" "oci state" "ps -a" \
	"logs --via unix:$TEST_SCRATCH/no.sock" "kill --via unix:$TEST_SCRATCH/no.sock")
is "$bad_h" "" "$M -h after each command ($(wc -w <<<"$SUBS"); job run, image ls, oci run, logs --via...): its help on stdout, exit 0, as warren -h"
is "$bad_help" "" "$M --help after each of them: the same"

M="[typo]"
bounded "$WARREN" rnu -- true
is "$RC:$ERR" "125:warren: no command 'rnu'; did you mean 'run'? (see 'warren --help')" \
	"$M a mistyped command (rnu): exit 125, one line naming the command meant"
bounded "$WARREN" hsitory
is "$RC:$ERR" "125:warren: no command 'hsitory'; did you mean 'history'? (see 'warren --help')" "$M ... hsitory: history"

M="[logs -]"
cat >"$WORK/two-steps.yaml" <<'YAML'
steps:
  - name: a
    run: echo out-a
  - name: b
    run: echo out-b
YAML
bounded "$WARREN" job run "$WORK/two-steps.yaml" --state "$STATE" --work "$WORK" --quiet
wr logs - b
is "$RC/$OUT" "0/out-b" "$M warren logs - STEP: that step of the latest run (as warren policy - does)" || diag "$ERR"
wr logs -
[ "$RC" = 0 ] && [[ $OUT == *"==> step 1: a <=="*out-a*"==> step 2: b <=="*out-b* ]]
ok $? "$M warren logs -: every step of the latest run" || diag "rc $RC: $OUT $ERR"

M="[show]"
wrun -- true
wr show
line_like "$OUT" '^network +none$' "$M warren show: a network row (none)"
line_like "$OUT" '^ports +-$' "$M warren show: a ports row (none published)"
# rootless, pasta forwards a port of the host (the test's own user's namespace) to the cell
use_mode user
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
wrun --net none --publish "127.0.0.1:$port:8000" -- true
is "$RC" 0 "$M [user] a rootless run with --net none --publish 127.0.0.1:$port:8000" || diag "$ERR"
wr show
line_like "$OUT" '^network +none\+publish' "$M [user] warren show: network none+publish" || diag "$OUT"
line_like "$OUT" "^ports +127\.0\.0\.1:$port->8000/tcp\$" "$M [user] warren show: the published port"
use_mode root

M="[env]"
wr_env FROM_CALLER=passed -- run --work "$WORK" --env FROM_CALLER --env UNSET_IN_CALLER_X -- sh -c 'echo "${FROM_CALLER-unset} ${UNSET_IN_CALLER_X-unset}"'
is "$RC/$OUT" "0/passed unset" "$M --env NAME passes the caller's NAME; a NAME the caller has not set passes nothing"
cat >"$TEST_SCRATCH/env" <<'ENV'
# a comment, then a blank line

export Y="quoted value"
Z='single $HOME # kept'
  A=bare value # a comment
C="esc \"q\" \$x"
ENV
wrun --env-file "$TEST_SCRATCH/env" -- sh -c 'printf "%s|" "$Y" "$Z" "$A" "$C"'
is "$RC/$OUT" '0/quoted value|single $HOME # kept|bare value|esc "q" $x|' "$M --env-file: export, double and single quotes, comments"
printf 'X="open\n' >"$TEST_SCRATCH/env2"
wrun --env-file "$TEST_SCRATCH/env2" -- true
[ "$RC" = 125 ] && [[ $ERR == *"env2, line 1 has a quote that does not close on its line"* ]]
ok $? "$M --env-file with a quote left open: 125, naming the line" || diag "rc $RC: $ERR"

M="[messages]"
mkdir "$TEST_SCRATCH/gone"
bounded sh -c 'cd "$1" && rmdir "$1" && exec "$2" run --state "$3" -- true' _ "$TEST_SCRATCH/gone" "$WARREN" "$STATE"
[ "$RC" = 125 ] && [[ $ERR == "warren: the current directory (the default worktree) was deleted;"* ]] && [[ $ERR != *"--work ."* ]]
ok $? "$M run from a deleted directory says so (not '--work .')" || diag "rc $RC: $ERR"
wr run --work "$TEST_SCRATCH/no-such-dir" -- true
[ "$RC" = 125 ] && [[ $ERR == "warren: --work $TEST_SCRATCH/no-such-dir: No such file or directory; create it"* ]] && [[ $ERR != *"pass --work"* ]]
ok $? "$M --work of a missing directory: no advice to pass --work" || diag "rc $RC: $ERR"
wrun --rootfs /etc/passwd -- true
[ "$RC" = 125 ] && [[ $ERR == "warren: --rootfs /etc/passwd: not a directory; give the directory of an unpacked image"* ]]
ok $? "$M --rootfs of a file: says what to give" || diag "rc $RC: $ERR"
wrun --memory 0 -- true
[ "$RC" = 125 ] && [[ $ERR == "warren: --memory: '0' is zero"*"above zero, or none for no limit" ]]
ok $? "$M --memory 0: says what is allowed" || diag "rc $RC: $ERR"
wrun --time 0 -- true
[ "$RC" = 125 ] && [[ $ERR == "warren: --time: '0' is zero"*"above zero, or none for no limit" ]]
ok $? "$M --time 0: says what is allowed" || diag "rc $RC: $ERR"
n=$(rundir_count)
wrun --result "$TEST_SCRATCH/no-dir/r.json" -- touch "$WORK/ran-anyway"
[ "$RC" = 125 ] && [ ! -e "$WORK/ran-anyway" ] && [ "$(rundir_count)" = "$n" ] && [[ $ERR == *"no-dir is not a directory"* ]]
ok $? "$M --result in a missing directory: refused before the run starts (nothing ran)" || diag "rc $RC: $ERR"
wrun -- true
id=$(basename "$(last_rundir)")
wr logs "$id"
[ "$RC" = 125 ] && [[ $ERR == *"has no logs"* ]]
ok $? "$M logs of a run without step logs: exit 125, as warren's own errors" || diag "rc $RC: $ERR"
wr kill "$id"
[ "$RC" = 125 ] && [[ $ERR == *"is not running"* ]]
ok $? "$M kill of a finished run: exit 125" || diag "rc $RC: $ERR"
mkdir -p "$TEST_SCRATCH/empty-image"
wrun --rootfs "$TEST_SCRATCH/empty-image" -- /bin/true
[ "$RC" = 127 ] && [[ $ERR == *"/bin/true is not a file there"* ]] && [[ $ERR != *"give its full path"* ]]
ok $? "$M a full path missing from the image: not told to give its full path" || diag "rc $RC: $ERR"

# On a terminal only the streams that are the terminal go through the job's (issue 11): a
# stderr the caller redirected gets what the job writes there.
use_mode root
M="[tty]"
E=$TEST_SCRATCH/tty-err.txt
cmd=$(printf '%q ' "$WARREN" run --state "$STATE" --work "$WORK" -- sh -c 'echo out; echo e >&2; tty; test -t 2 || echo stderr-not-a-tty')
bounded script -qec "$cmd 2>$E" /dev/null
is "$(cat "$E")" e "$M 2>FILE on a terminal: the job's stderr lands in FILE"
like "$OUT" "out" "$M ... its stdout is on the terminal"
like "$OUT" "/dev/pts/[0-9]+" "$M ... which is a terminal of its own (tty)"
like "$OUT" "stderr-not-a-tty" "$M ... and its stderr is not that terminal"

# The caller's input ends (script(1) types an EOF when its own stdin does, here at once, before
# warren makes the terminal raw, or 2 s later, after): a job reading its terminal gets the EOF,
# never a NUL byte in its place (the line discipline's mark of an EOF, read in raw mode); lines
# typed ahead reach it as typed.
cmd=$(printf '%q ' "$WARREN" run --state "$STATE" --work "$WORK" -- sh -c 'cat; echo cat-ended')
bounded script -qec "$cmd" /dev/null
is "$(tr -d '\r' <<<"$OUT" | od -An -c | tr -s ' ')" "$(printf 'cat-ended\n' | od -An -c | tr -s ' ')" "$M the caller's input ends before the job starts: the job reads EOF, and no NUL byte (nor its echo ^@)"
OUT=$(printf 'typed-ahead\n' | timeout 60 script -qec "$cmd" /dev/null | tr -d '\r')
n=$(grep -c '^typed-ahead$' <<<"$OUT")
is "$((n >= 2 && n <= 3)):$(tail -n 1 <<<"$OUT")" "1:cat-ended" "$M a line typed ahead reaches the job as typed (the job's terminal's echo and cat's copy; the caller's echo when typed before warren took the terminal), then the EOF" || diag "$OUT"
OUT=$(sleep 2 | timeout 60 script -qec "$cmd" /dev/null | tr -d '\r')
is "$OUT" "cat-ended" "$M an EOF typed once the job runs: the job reads EOF"
