#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# session_exec_tree.sh MODE - escape class session_exec_tree (issue 32, item 2): an exec's time
# limit "takes the command's whole process tree". A command under --timeout starts processes
# that leave its session (setsid; a double fork whose child ignores SIGTERM) and waits; escaped
# when one of them still runs once the limit and the run's grace are past. Root only: rootless
# an exec has no cgroup of its own and its limit takes its session only, a documented weaker
# case (docs/guide.md, the record's "tree": "session"), where such a process lives until the
# session ends; vm untested (a session needs the container driver); image: the same executor
# whatever the root (see root). See lib.sh.
CLASS=session_exec_tree
. "$(dirname "$0")/lib.sh"
[ "$MODE" = user ] && verdict "untested: rootless an exec has no cgroup of its own: its time limit takes its session only, and what left the session lives until the session ends (documented, docs/guide.md)"
face_setup root
mkdir -p "$D/state" "$D/wt"
mine "$D/state" "$D/wt"
printf 'session: { idle: 2m, max: 5m }\nlimits: { grace: 2s }\n' >"$D/sess.yaml"
chmod 644 "$D/sess.yaml"

"${RUN[@]}" "$WARREN" job run "$D/sess.yaml" --state "$D/state" --work "$D/wt" </dev/null >"$D/job.out" 2>&1 &
FACE_PIDS+=($!)
sock=
for _ in $(seq 1 300); do
	sock=$(ls -d "$D"/state/runs/run_*/session.sock 2>/dev/null | head -1)
	[ -S "$sock" ] && break
	sleep 0.1
done
[ -S "$sock" ] || verdict "untested: the session did not start ($(tail -1 "$D/job.out"))"
ID=$(basename "$(dirname "$sock")")

# pids whose command line is exactly "sleep ARG"
sleepers() {
	local f a
	for f in /proc/[0-9]*/cmdline; do
		mapfile -d '' -t a 2>/dev/null <"$f" || continue
		[ "${#a[@]}" = 2 ] && [ "${a[0]}" = sleep ] && [ "${a[1]}" = "$1" ] && echo "${f//[^0-9]/}"
	done
}
one=9$RANDOM.$$ two=9$RANDOM.$$1
w exec --state "$D/state" "$ID" --timeout 2s -- \
	sh -c "setsid sleep $one & (setsid sh -c 'trap \"\" TERM; exec sleep $two' &); sleep 60"
[ "$RC" = 124 ] || verdict "untested: the exec did not end at its time limit (exit $RC: ${ERR%%$'\n'*})"
for _ in $(seq 1 60); do
	[ -z "$(sleepers "$one")$(sleepers "$two")" ] && held
	sleep 0.1
done
left=
[ -n "$(sleepers "$one")" ] && left="a setsid process"
[ -n "$(sleepers "$two")" ] && left="${left:+$left and }a double-forked one that ignores SIGTERM"
escaped "$left outlived the exec's 2s limit and the run's 2s grace"
