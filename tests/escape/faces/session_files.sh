#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# session_files.sh MODE - escape class session_files (issue 32, item 3): a live session's files
# API (warren files, the socket's read/write/list) opens files as the run user inside the cell;
# a job that plants a way out tries to make it read a host file it cannot read itself (root's
# 0600 secret beside the worktree) or write a host file it cannot write: symbolic links in the
# worktree and in /tmp (absolute, and relative ones climbing out of the worktree's mount), a
# hard link, and races: a directory on the way and the file at the end swapped for links to the
# host's while the caller reads and writes them again and again. Escaped when the secret comes
# out or the host's file changes. Modes: root and user (a session needs the container driver:
# vm untested; image: the same executor whatever the root, see root). See lib.sh.
CLASS=session_files
. "$(dirname "$0")/lib.sh"
face_setup root user
SECRET=session-files-secret-$$-$RANDOM
mkdir -p "$D/state" "$D/wt/real" "$D/host"
echo "$SECRET" >"$D/host/secret"
echo "host target, as it was" >"$D/host/target"
chmod 600 "$D/host/secret"
chmod 644 "$D/host/target"
chmod 755 "$D/host"
echo harmless >"$D/wt/real/secret"
mine "$D/state" "$D/wt" "$D/wt/real" "$D/wt/real/secret"
target_sum=$(sha256sum <"$D/host/target")
printf 'session: { idle: 2m, max: 5m }\n' >"$D/sess.yaml"
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

# got OUT: the secret came out, or the host's target changed
leak() {
	[[ $OUT == *"$SECRET"* ]] && escaped "the files API read the host's 0600 secret: $1"
	[ "$(sha256sum <"$D/host/target")" = "$target_sum" ] || escaped "the files API wrote the host's file: $1"
}
get() { w files get --state "$D/state" "$ID" "$1"; leak "get $1"; }
put() {
	timeout -k 5 60 "${RUN[@]}" "$WARREN" files put --state "$D/state" "$ID" "$1" <<<"overwritten" >/dev/null 2>&1
	OUT=
	leak "put $1"
}

# the files API reads the job's own files (else the class says nothing), the job cannot read
# the secret itself
w files get --state "$D/state" "$ID" real/secret
[ "$OUT" = harmless ] || verdict "untested: warren files does not read the worktree's file (exit $RC: ${ERR%%$'\n'*})"
w exec --state "$D/state" "$ID" -- cat "$D/host/secret"
[[ $OUT == *"$SECRET"* ]] && verdict "untested: the run user reads the secret itself"
# links planted from inside the cell
w exec --state "$D/state" "$ID" -- sh -c "
	ln -s '$D/host/secret' abs; ln -s ../host/secret rel; ln -s real/../../host/secret through
	mkdir -p up/a; ln -s ../../../host up/a/h
	ln -s '$D/host/target' wabs; ln -s ../host/target wrel
	ln -s '$D/host/secret' /tmp/abs; ln '$D/host/secret' hard 2>/dev/null; ln '$D/host/secret' /tmp/hard 2>/dev/null
	true"
for p in abs rel through up/a/h/secret hard /tmp/abs /tmp/hard "$D/host/secret" "$D/wt/../host/secret"; do
	get "$p"
done
for p in wabs wrel up/a/h/target "$D/host/target"; do
	put "$p"
done
w files ls --state "$D/state" "$ID" up/a/h
leak "ls up/a/h"

# races: the job swaps a directory on the way and the file at the end between its own and
# links to the host's, while the caller reads and writes them
w exec --state "$D/state" "$ID" -- sh -c '
	mkdir -p mine; echo harmless > mine/secret; echo harmless > mine/target
	end=$(( $(date +%s) + 8 ))
	while [ "$(date +%s)" -lt "$end" ]; do
		ln -sfn '"'$D/host'"' d.new; mv -fT d.new d
		rm -rf d; mkdir -p d; echo harmless > d/secret; echo harmless > d/target
		ln -sfn ../host/secret f.new; mv -fT f.new f
		echo harmless > f.new; mv -fT f.new f
		ln -sfn '"'$D/host/target'"' t.new; mv -fT t.new t
		echo harmless > t.new; mv -fT t.new t
	done >/dev/null 2>&1 &
	true'
refused=0 read=0
for i in $(seq 1 40); do
	get d/secret
	[ "$RC" = 0 ] && read=$((read + 1)) || refused=$((refused + 1))
	get f
	[ "$RC" = 0 ] && read=$((read + 1)) || refused=$((refused + 1))
	put d/target
	put t
done
echo "# the races: $read reads of the job's own file, $refused refused"
w end --state "$D/state" "$ID"
held
