#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# git-fanotify.t - the git check after a run looks only where the run changed the worktree
# (issue 33): in a worktree of 5 000 directories a job plants each class of what git on the
# host would obey deep down (a gitfile, a .git symlink, a nested repository's config, hooks,
# commondir, config.worktree, attributes, alternates, remotes, a rebase todo list, a
# submodule's config, a linked worktree's commondir, a new bare repository, a tree made in
# $TMPDIR and moved in whole); each is moved aside, and the record says "method": "fanotify"
# as root ("walk", with the reason, rootless: the file system is the host's). Then, as root,
# a run whose events overflow the kernel's queue (the supervisor stopped while the job makes
# 20 000 files) still has its plant caught, by the whole walk, and says why.
. "$(dirname "$0")/../lib.sh"

command -v git >/dev/null || skip_all "git is needed"

plan $((2 * 5 + 4))

# the classes: name of the directory below DEEP, what the host prepares (a repository), what
# the job does there, the path moved aside (relative to DEEP)
CLASSES="gitfile dotgit_symlink nested_config nested_hooks commondir config_worktree attributes
alternates remotes rebase_todo modules worktrees bare moved_in"

prepare() { # DEEP: the host's repositories the classes plant into
	local c
	for c in nested_config nested_hooks commondir config_worktree attributes alternates remotes \
		rebase_todo modules worktrees; do
		git init -q "$1/$c"
	done
	mkdir -p "$1/gitfile" "$1/dotgit_symlink" "$1/bare"
}

# the job: each class planted below DEEP (relative to the worktree)
JOB='set -e; D=$1
echo "gitdir: /elsewhere" > $D/gitfile/.git
ln -s /etc $D/dotgit_symlink/.git
printf "[core]\n\tfsmonitor = touch PWNED\n" >> $D/nested_config/.git/config
printf "#!/bin/sh\ntouch PWNED\n" > $D/nested_hooks/.git/hooks/post-checkout
echo ../../elsewhere > $D/commondir/.git/commondir
printf "[core]\n\tpager = touch PWNED\n" > $D/config_worktree/.git/config.worktree
mkdir -p $D/attributes/.git/info && echo "* diff=evil" > $D/attributes/.git/info/attributes
echo /elsewhere/objects > $D/alternates/.git/objects/info/alternates
mkdir -p $D/remotes/.git/remotes && echo "URL: /elsewhere" > $D/remotes/.git/remotes/origin
mkdir -p $D/rebase_todo/.git/rebase-merge && echo "exec touch PWNED" > $D/rebase_todo/.git/rebase-merge/git-rebase-todo
mkdir -p $D/modules/.git/modules/sub/refs $D/modules/.git/modules/sub/objects
echo "ref: refs/heads/main" > $D/modules/.git/modules/sub/HEAD
printf "[core]\n\tfsmonitor = touch PWNED\n" > $D/modules/.git/modules/sub/config
mkdir -p $D/worktrees/.git/worktrees/w && echo ../../elsewhere > $D/worktrees/.git/worktrees/w/commondir
echo "ref: refs/heads/main" > $D/worktrees/.git/worktrees/w/HEAD
mkdir -p $D/bare/b/objects $D/bare/b/refs && echo "ref: refs/heads/main" > $D/bare/b/HEAD
printf "[core]\n\tfsmonitor = touch PWNED\n" > $D/bare/b/config
mkdir -p $TMPDIR/tree/a/b && echo "gitdir: /elsewhere" > $TMPDIR/tree/a/b/.git
mv $TMPDIR/tree $D/moved_in
'

# the paths moved aside, relative to DEEP, sorted
WANT=$(printf '%s\n' gitfile/.git dotgit_symlink/.git nested_config/.git/config nested_hooks/.git/hooks \
	commondir/.git/commondir config_worktree/.git/config.worktree attributes/.git/info/attributes \
	alternates/.git/objects/info/alternates remotes/.git/remotes rebase_todo/.git/rebase-merge \
	modules/.git/modules/sub/config worktrees/.git/worktrees/w/commondir bare/b/config \
	moved_in/a/b/.git | sort)

# big_worktree DIR: 5 050 directories, a repository at the top
big_worktree() {
	mkdir_for_mode "$1"
	mkdir -p "$1"/d{00..49}/e{00..99}
	git init -q "$1"
}

moved_aside() { # RESULT DEEP_REL: the moved-aside paths below DEEP_REL, relative to it, sorted
	jget "$1" "'\n'.join(sorted(m['path'][len('$2/'):] for m in d['git_check']['moved_aside'] if m['path'].startswith('$2/')))"
}

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	W=$TEST_SCRATCH/$mode-big
	big_worktree "$W"
	DEEP_REL=d37/e81/deep/deeper/deepest
	mkdir -p "$W/$DEEP_REL"
	prepare "$W/$DEEP_REL"
	[ "$mode" = user ] && chown -R "$TEST_USER_UID:$TEST_USER_GID" "$W"
	wr run --work "$W" -- sh -c "$JOB" job "$DEEP_REL"
	is "$RC" 0 "$M the job planted every class deep down in a worktree of 5 000 directories" || diag "$ERR"
	R=$(last_rundir)/result.json
	is "$(moved_aside "$R" "$DEEP_REL")" "$WANT" "$M each class is moved aside"
	if [ "$mode" = root ]; then
		is "$(jget "$R" 'd["git_check"]["method"]')" fanotify "$M the check looked where fanotify said the run wrote"
		dirs=$(jget "$R" 'd["git_check"]["dirs"]')
		[ "$dirs" -lt 200 ] 2>/dev/null
		ok $? "$M ... and looked at $dirs directories, not the 5 000" || diag "$(jget "$R" 'd["git_check"]')"
	else
		is "$(jget "$R" 'd["git_check"]["method"]')" walk "$M rootless: the whole worktree is walked"
		like "$(jget "$R" 'd["git_check"]["fallback"]')" "rootless" "$M ... and the record says why (rootless)"
	fi
	left=$(find "$W" -name PWNED 2>/dev/null)
	is "$left" "" "$M nothing ran"
done

# ---- the kernel's queue overflows: the whole walk still catches the plant
use_mode root
W=$TEST_SCRATCH/overflow
big_worktree "$W"
mkdir -p "$W/d12/e34/deep" "$W/many"
"$WARREN" run --state "$STATE" --work "$W" -- sh -c '
	touch ready; while [ ! -e go ]; do sleep 0.05; done
	i=0; while [ $i -lt 20000 ]; do : > many/f$i; i=$((i + 1)); done
	echo "gitdir: /elsewhere" > d12/e34/deep/.git
	touch done' </dev/null >"$TEST_SCRATCH/overflow.out" 2>"$TEST_SCRATCH/overflow.err" &
wpid=$!
_bg_pids+=("$wpid")
wait_for 30 test -e "$W/ready"
kill -STOP "$wpid"   # the supervisor reads no event while the job makes 20 000
touch "$W/go"
wait_for 60 test -e "$W/done"
kill -CONT "$wpid"
wait_bg "$wpid" 60
is "$RC" 0 "[root] the run that overflows the queue ends" || diag "$(cat "$TEST_SCRATCH/overflow.err")"
R=$(last_rundir)/result.json
is "$(jget "$R" '[m["path"] for m in d["git_check"]["moved_aside"]]')" '["d12/e34/deep/.git"]' \
	"[root] its gitfile is moved aside all the same"
is "$(jget "$R" 'd["git_check"]["method"]')" walk "[root] ... by the whole walk"
like "$(jget "$R" 'd["git_check"]["fallback"]')" "overflow" "[root] ... and the record says why: the queue overflowed"
