#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# git-fanotify.t - the git check after a run looks only where the run changed the worktree
# (issue 33): in a worktree of 5 000 directories a job plants each class of what git on the
# host would obey deep down (a gitfile, a .git symlink, a nested repository's config, hooks,
# commondir, config.worktree, attributes, alternates, remotes, a rebase todo list, a
# submodule's config, a linked worktree's commondir, a new bare repository, a tree made in
# $TMPDIR and moved in whole); each is moved aside, and the record says "method": "fanotify"
# as root ("walk", with the reason, rootless: the file system is the host's). Then, as root,
# a run whose events overflow the kernel's queue (the supervisor stopped while the host makes
# 20 000 files on the same file system) still has its plant caught, by the whole walk, and
# says why; and so are the writes whose events name another directory or none: through a
# hard link made and removed again, through a hard link the host made, through a shared
# mapping of a file kept open after the job (in flight in a unix socket: its close is never
# reported).
. "$(dirname "$0")/../lib.sh"

command -v git >/dev/null || skip_all "git is needed"

plan $((2 * 5 + 4 + 6))

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

# ---- the kernel's queue overflows: the whole walk still catches the plant. The events are
# the host's (they count too: the same file system): 20 000 files made next to the worktree
# while the supervisor is stopped (the job's own creates would wait for it: the write watch).
use_mode root
W=$TEST_SCRATCH/overflow
big_worktree "$W"
mkdir -p "$W/d12/e34/deep" "$TEST_SCRATCH/many"
"$WARREN" run --state "$STATE" --work "$W" -- sh -c '
	touch ready; while [ ! -e go ]; do sleep 0.05; done
	echo "gitdir: /elsewhere" > d12/e34/deep/.git' </dev/null >"$TEST_SCRATCH/overflow.out" 2>"$TEST_SCRATCH/overflow.err" &
wpid=$!
_bg_pids+=("$wpid")
wait_for 30 test -e "$W/ready"
kill -STOP "$wpid"   # reads no event while the host makes 20 000
(cd "$TEST_SCRATCH/many" && seq -f 'f%g' 20000 | xargs touch)
touch "$W/go"
kill -CONT "$wpid"
wait_bg "$wpid" 60
is "$RC" 0 "[root] the run whose events overflow the queue ends" || diag "$(cat "$TEST_SCRATCH/overflow.err")"
R=$(last_rundir)/result.json
is "$(jget "$R" '[m["path"] for m in d["git_check"]["moved_aside"]]')" '["d12/e34/deep/.git"]' \
	"[root] its gitfile is moved aside all the same"
is "$(jget "$R" 'd["git_check"]["method"]')" walk "[root] ... by the whole walk"
like "$(jget "$R" 'd["git_check"]["fallback"]')" "overflow" "[root] ... and the record says why: the queue overflowed"

# ---- writes whose events name another directory, or none
W=$TEST_SCRATCH/links
big_worktree "$W"
D=d20/e20/deep
mkdir -p "$W/$D/w"
git init -q "$W/$D/nested"
EVIL='[core]\n\tfsmonitor = touch PWNED\n'
moved() { jget "$(last_rundir)/result.json" '[m["path"] for m in d["git_check"]["moved_aside"]]'; }
method() { jget "$(last_rundir)/result.json" 'd["git_check"]["method"] + ": " + str(d["git_check"].get("fallback"))'; }
sleep 0.1  # the repositories' times before the run's start (file times are finer than its clock)
wr run --work "$W" -- sh -c "ln $D/nested/.git/config $D/w/t && printf '$EVIL' >> $D/w/t && rm $D/w/t"
is "$(moved)" "[\"$D/nested/.git/config\"]" "[root] a config written through a hard link made and removed again is moved aside" ||
	diag "$ERR"
is "$(method)" "fanotify: None" "[root] ... found by fanotify (where the file's last name is)"

git init -q "$W/$D/nested2"
ln "$W/$D/nested2/.git/config" "$W/$D/w/host-link"
sleep 0.1
wr run --work "$W" -- sh -c "printf '$EVIL' >> $D/w/host-link"
is "$(moved)" "[\"$D/nested2/.git/config\"]" "[root] a config written through a hard link the host made is moved aside" ||
	diag "$ERR"
like "$(method)" "^walk: .*hard link" "[root] ... by the whole walk, and the record says why"

cat >"$TEST_SCRATCH/mmpin.c" <<'EOF'
/* write argv[1] through a shared mapping, keep it open in flight in a unix socket, exit */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	const char *evil = "[core]\n\tfsmonitor = touch PWNED\n";
	int fd = argc > 1 ? open(argv[1], O_RDWR) : -1, sv[2], fds[2];
	off_t n = fd >= 0 ? lseek(fd, 0, SEEK_END) : 0;
	char *p = n > 0 ? mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (p == MAP_FAILED || (size_t)n < strlen(evil) || socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0)
		return 1;
	memset(p, ' ', n);
	memcpy(p, evil, strlen(evil));
	fds[0] = sv[0];
	fds[1] = fd;
	char c = 0, b[CMSG_SPACE(sizeof fds)] __attribute__((aligned(8)));
	struct iovec iov = { &c, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = b, .msg_controllen = sizeof b };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof fds);
	memcpy(CMSG_DATA(cm), fds, sizeof fds);
	return sendmsg(sv[1], &m, 0) < 0;
}
EOF
git init -q "$W/$D/nested3"
if cc -O2 -static -o "$W/mmpin" "$TEST_SCRATCH/mmpin.c" 2>/dev/null || cc -O2 -o "$W/mmpin" "$TEST_SCRATCH/mmpin.c"; then
	sleep 0.1
	wr run --work "$W" -- ./mmpin "$D/nested3/.git/config"
	is "$(moved)" "[\"$D/nested3/.git/config\"]" \
		"[root] a config written through a shared mapping, the file kept open after the job, is moved aside" ||
		diag "exit $RC: $ERR"
	is "$(method)" "fanotify: None" "[root] ... found by fanotify (the open of the file)"
else
	skip 2 "cc cannot build the mapping writer"
fi
