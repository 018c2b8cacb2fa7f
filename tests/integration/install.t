#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# install.t - warren installed like a tool: `make install DESTDIR=` lays the binary, a man
# page per subcommand and the job file's, bash and zsh completion, the docs and the example
# job, and the installed binary runs; `make uninstall` takes all of it back. A Debian package
# built from a copy of the tree (dpkg-buildpackage -us -uc -b, the optimised build: about 40 s
# on a loaded 2-core machine) installs with dpkg -i, runs selfcheck and the demo job from its
# installed paths (as root and as an unprivileged user), completes subcommands and run ids,
# and dpkg -r removes every file it laid. Also `warren --version` against the host.
. "$(dirname "$0")/../lib.sh"

VERSION=$(sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' "$REPO/debian/changelog")
# the subcommands, from warren's own usage text
SUBS=$("$WARREN" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }' | sort -u)
# 30 checks, and one per subcommand: its man page names every option of its --help
plan $((30 + $(printf '%s\n' $SUBS | grep -cvx help)))
MAN1="warren $(for s in $SUBS; do printf 'warren-%s ' "$s"; done)"

# ---- warren --version: the version and this host's features, each checked against the host
bounded "$WARREN" --version
is "$(head -n 1 <<<"$OUT")" "warren $VERSION" "warren --version prints debian/changelog's version"
ll=$(bounded "$WARREN" selfcheck; grep -o 'Landlock ABI [0-9]*' <<<"$OUT" | grep -o '[0-9]*$')
want=${ll:+ABI $ll}
like "$OUT" "landlock: ${want:-no}" "--version's Landlock ABI is selfcheck's (${ll:-none})"
case $(stat -fc %T /sys/fs/cgroup) in
cgroup2fs) cg=v2 ;;
tmpfs) [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] && cg=hybrid || cg=v1 ;;
*) cg=none ;;
esac
bounded "$WARREN" --version
grep -qx "cgroup: $cg" <<<"$OUT"
ok $? "--version's cgroup mode is the host's ($cg)" || diag "$OUT"
pasta=$(command -v pasta || echo no)
like "$OUT" "pasta: $pasta" "--version finds pasta where the host has it ($pasta)"
for f in 'seccomp user notification: (yes|no)' 'user namespaces: (yes|no)' 'idmapped mounts: (yes|no)' 'build: libseccomp [0-9]'; do
	like "$OUT" "$f" "--version says ${f%%:*}"
done

# ---- make install / make uninstall into a scratch DESTDIR
DEST=$TEST_SCRATCH/dest
mkdir -p "$TEST_SCRATCH/tmp"   # the compilers' temporary files: not in the host's /tmp
export TMPDIR=$TEST_SCRATCH/tmp
out=$(cd "$REPO" && timeout 600 make -s install DESTDIR="$DEST" 2>&1)
ok $? "make install DESTDIR=... succeeds" || diag "$out"
P=$DEST/usr/local
missing=
for m in $MAN1; do [ -s "$P/share/man/man1/$m.1" ] || missing="$missing $m.1"; done
for f in bin/warren share/man/man5/warren-job.5 share/bash-completion/completions/warren \
	share/zsh/site-functions/_warren share/doc/warren/README.md share/doc/warren/hardening.md \
	share/doc/warren/network.md share/doc/warren/guide.md share/doc/warren/architecture.md \
	share/doc/warren/console.md share/doc/warren/examples/demo.yaml; do
	[ -s "$P/$f" ] || missing="$missing $f"
done
is "$missing" "" "make install lays the binary, the man pages of warren and of each subcommand ($(wc -w <<<"$SUBS")), warren-job(5), the completions and the docs"
bounded "$P/bin/warren" --version
is "$RC/$(head -n 1 <<<"$OUT")" "0/warren $VERSION" "the installed binary runs"
bounded man -l "$P/share/man/man1/warren-run.1"
[ "$RC" = 0 ] && [[ $OUT == *--memory* ]] && [[ $OUT == *--net* ]]
ok $? "man warren-run renders and describes the options"
for s in $SUBS; do
	[ "$s" = help ] && continue
	helpopts=$("$WARREN" "$s" --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u)
	[ "$s" = job ] && helpopts=$(printf '%s\n' $helpopts; "$WARREN" job --help 2>&1 | grep -o -- '--[a-z][a-z-]*' | sort -u)
	page=$(MANWIDTH=200 man -l "$P/share/man/man1/warren-$s.1" 2>/dev/null)
	absent=
	for o in $helpopts; do [[ $page == *"$o"* ]] || absent="$absent $o"; done
	is "$absent" "" "warren-$s(1) names every option of 'warren $s --help'"
done
# scdoc's markup does not show through as text (warren-job(5) printed "step_N_")
leaks=
for pg in "$P"/share/man/man1/*.1 "$P"/share/man/man5/*.5; do
	l=$(MANWIDTH=200 man -l "$pg" 2>/dev/null | grep -E '_[A-Za-z0-9]+_([^A-Za-z0-9]|$)|(^|[^A-Za-z0-9*])\*[A-Za-z][^*]*\*([^A-Za-z0-9*]|$)' | head -n 2)
	[ -n "$l" ] && leaks="$leaks $(basename "$pg"): $l"
done
is "$leaks" "" "no installed man page shows scdoc's markup (_X_, *X*) as text"
# the installed bash completion offers the state directory's images where an image is expected
use_mode root
wr image import comp-bb "$(image_busybox)"
compf() {
	bash -c '. /usr/share/bash-completion/bash_completion; . "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_warren warren "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"; printf "%s\n" "${COMPREPLY[@]}"' compf \
		"$P/share/bash-completion/completions/warren" "$@"
}
is "$RC/$(WARREN_STATE=$STATE compf warren run --image comp)" "0/comp-bb" "bash completes an image name after run --image"
is "$(compf warren image --state "$STATE" rm co)/$(WARREN_STATE=$STATE compf warren serve --warm-image c)" "comp-bb/comp-bb" \
	"... after image rm (the state of --state) and serve --warm-image"
out=$(cd "$REPO" && make -s uninstall DESTDIR="$DEST" 2>&1)
left=$(find "$DEST" -type f)
is "$left" "" "make uninstall removes every file make install laid" || diag "$out"

# ---- the Debian package
if dpkg-query -W -f='${Status}' warren 2>/dev/null | grep -q installed; then
	skip 14 "a package named warren is installed on this host already: not replaced by a test"
	exit 0
fi
pkg_remove() {
	dpkg-query -W warren >/dev/null 2>&1 || return 0
	local i
	for i in $(seq 1 60); do
		dpkg --purge warren >/dev/null 2>&1 && return 0
		sleep 2   # dpkg may be locked by apt elsewhere: wait for it
	done
	return 1
}
trap 'pkg_remove; _lib_cleanup' EXIT
SRC=$TEST_SCRATCH/deb/warren-$VERSION
mkdir -p "$SRC"
tar -C "$REPO" -c --exclude=./build --exclude=./.git . | tar -x -C "$SRC"
t0=$(date +%s)
out=$(cd "$SRC" && DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=2" timeout 900 dpkg-buildpackage -us -uc -b 2>&1)
ok $? "dpkg-buildpackage -us -uc -b builds the package from a copy of the tree ($(($(date +%s) - t0)) s)" || diag "$(tail -n 30 <<<"$out")"
DEB=$(ls "$TEST_SCRATCH"/deb/warren_"$VERSION"_*.deb 2>/dev/null | head -n 1)
like "$(dpkg-deb -f "$DEB" Recommends 2>&1)" '(^|, )libldns3(,|$)' \
	"the package recommends libldns3 (the resolver of --net nat and allow=, loaded when a run asks)"
for i in $(seq 1 60); do
	out=$(dpkg -i "$DEB" 2>&1); rc=$?
	[ "$rc" = 0 ] || ! grep -q 'lock' <<<"$out" && break
	sleep 2   # dpkg may be locked by apt elsewhere: wait for it
done
ok "$rc" "dpkg -i installs it" || diag "$out"
FILES=$(dpkg -L warren 2>/dev/null)
bounded /usr/bin/warren selfcheck --state "$TEST_SCRATCH/pkgstate"
is "$RC" 0 "the installed warren's selfcheck passes" || diag "$OUT" "$ERR"
WARREN=/usr/bin/warren
use_mode root
bounded "$WARREN" job run /usr/share/doc/warren/examples/demo.yaml --work "$WORK" --state "$STATE"
[ "$RC" = 0 ] && [[ $OUT$ERR == *"hello from"* ]]
ok $? "[root] the installed demo job runs from /usr/share/doc/warren/examples" || diag "$OUT" "$ERR"
# rootless: the demo's memory and pids limits need a cgroup a user may not have; one command
use_mode user
wrun -- sh -c 'echo "$TMPDIR $(id -u)"'
is "$RC/$OUT" "0//tmp $JOB_UID" "[user] the installed warren runs a command in a cell" || diag "$ERR"
is "$(man -w warren-job 2>/dev/null; man -w 5 warren-job 2>/dev/null)" \
	"/usr/share/man/man1/warren-job.1.gz
/usr/share/man/man5/warren-job.5.gz" "man finds warren-job(1) and warren-job(5)"
# bash completion as bash-completion loads it (on demand, by the command's name)
comp() {
	bash -c '. /usr/share/bash-completion/bash_completion; __load_completion warren || exit 3
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_warren warren "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"; printf "%s\n" "${COMPREPLY[@]}"' comp "$@"
}
is "$(comp warren ki)" kill "bash completes a subcommand (warren ki -> kill)"
is "$(comp warren run --requ)" --require-landlock "bash completes a subcommand's option"
use_mode root
id=$(ls "$STATE/runs" | head -n 1)
is "$(WARREN_STATE=$STATE comp warren show "${id:0:8}" | grep -c "^$id\$")" 1 "bash completes a run id of the state directory"
out=$(zsh -fc 'fpath=(/usr/share/zsh/vendor-completions $fpath); autoload -Uz compinit && compinit -u -d '"$TEST_SCRATCH"'/zcomp && print -r -- ${_comps[warren]}' 2>&1)
is "$out" _warren "zsh finds the completion of warren in vendor-completions"
pkg_remove
ok $? "dpkg --purge removes the package"
left=
while IFS= read -r f; do
	[ -f "$f" ] || [ -L "$f" ] && left="$left $f"
done <<<"$FILES"
is "$left" "" "no file of the package is left ($(wc -l <<<"$FILES") paths checked)"
man -w warren-run >/dev/null 2>&1
isnt "$?" 0 "the man page is gone"
