#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# realwork.t - real work inside a cell with every defence on (seccomp, Landlock required,
# capabilities, masks, protected .git paths), as root and rootless, on the host's /:
# building warren from its own source (make BUILD=/tmp/b) and running its unit tests;
# git init/add/commit in the worktree; python3 -m venv in $TMPDIR and pip installing a local
# sdist with --no-index (pip's cache under $HOME/.cache); npm pack and npm install --offline
# of a local package (npm's cache under $HOME/.npm). Nothing touches the network.
. "$(dirname "$0")/../lib.sh"

command -v make >/dev/null && command -v cc >/dev/null || skip_all "make and cc are needed"

# Tests per mode: 10.
plan 20

T_TIMEOUT=240
HAVE_NPM=0
command -v npm >/dev/null && HAVE_NPM=1
LL=()
[ "$("$PY" -c 'import ctypes; print(max(ctypes.CDLL(None).syscall(444, None, 0, 1), 0))')" -gt 0 ] && LL=(--require-landlock)

# A small Python package (an sdist, built here without network) and a small npm package.
PKG=$TEST_SCRATCH/pkgsrc
mkdir -p "$PKG/pysrc/warren_probe_pkg" "$PKG/npmsrc"
cat >"$PKG/pysrc/setup.py" <<'EOF'
from setuptools import setup
setup(name="warren-probe-pkg", version="1.0", packages=["warren_probe_pkg"])
EOF
echo 'VALUE = "probe-ok"' >"$PKG/pysrc/warren_probe_pkg/__init__.py"
tar -C "$PKG/pysrc" -czf "$PKG/warren-probe-pkg-1.0.tar.gz" --transform 's,^\.,warren-probe-pkg-1.0,' .
cat >"$PKG/npmsrc/package.json" <<'EOF'
{ "name": "warren-probe-npm", "version": "1.0.0", "main": "index.js", "license": "MIT" }
EOF
echo 'module.exports = "npm-probe-ok";' >"$PKG/npmsrc/index.js"
chmod -R a+rX "$PKG"
chmod 755 "$TEST_SCRATCH"

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	W=$WORK/real
	rm -rf "$W"
	mkdir_for_mode "$W"
	DEF=(--work "$W" "${LL[@]}")

	# ---- warren's own source: build and unit tests inside the cell
	git -C "$REPO" archive HEAD | tar -x -C "$W" && [ "$MODE" = user ] && chown -R "$TEST_USER_UID:$TEST_USER_GID" "$W"
	wr run "${DEF[@]}" -- sh -c 'units=$(ls tests/unit/test_*.c | sed "s,tests/unit/,/tmp/b/unit/,; s,\.c$,,")
		make -j2 BUILD=/tmp/b /tmp/b/warren $units >/tmp/make.log 2>&1 || { tail -30 /tmp/make.log; exit 1; }
		/tmp/b/warren --version >/dev/null && echo build-ok
		for t in $units; do "$t" >/tmp/u.log 2>&1 || { echo "FAILED $t"; grep -v "^\[ *\(RUN\|OK\) " /tmp/u.log | tail -20; exit 1; }; done; echo units-ok'
	is "$(head -n 1 <<<"$OUT")" build-ok "$M make BUILD=/tmp/b builds warren in the cell" || diag "$OUT" "$ERR"
	is "$(tail -n 1 <<<"$OUT")" units-ok "$M warren's unit tests build and pass in the cell" || diag "$OUT" "$ERR"
	[ ! -e "$W/build/warren" ] && [ ! -e /tmp/b ]
	ok $? "$M the build went to the cell's /tmp, not to the worktree or the host's /tmp"

	# ---- git in the worktree (hooks and config stay protected; commits work)
	wr run "${DEF[@]}" -- sh -c 'git init -q . && git add -A && git -c user.email=t@e -c user.name=t commit -q -m "in a cell" && git log --oneline | wc -l'
	is "$RC/$OUT" 0/1 "$M git init, add and commit in the worktree"
	is "$(git -c safe.directory="*" -C "$W" log --format=%s 2>&1)" "in a cell" "$M the commit is there on the host"

	# ---- python: a venv in $TMPDIR, pip --no-index of a local sdist, cache under $HOME
	wr run "${DEF[@]}" -- sh -c "python3 -m venv \$TMPDIR/v && \$TMPDIR/v/bin/pip install -q --no-index --no-build-isolation --disable-pip-version-check $PKG/warren-probe-pkg-1.0.tar.gz >/tmp/pip.log 2>&1 || { tail -20 /tmp/pip.log; exit 1; }
		\$TMPDIR/v/bin/python -c 'import warren_probe_pkg as p; print(p.VALUE)'; d=\$(\$TMPDIR/v/bin/pip cache dir) && mkdir -p \$d/http && touch \$d/http/probe && case \$d in \$HOME/*) echo cache-in-home;; esac"
	is "$(head -n 1 <<<"$OUT")" probe-ok "$M python3 -m venv in \$TMPDIR and pip install --no-index of a local sdist" || diag "$OUT" "$ERR"
	is "$(tail -n 1 <<<"$OUT")" cache-in-home "$M pip's cache directory is under \$HOME/.cache and writable"

	# ---- npm: pack and install offline, cache under $HOME/.npm
	if [ "$HAVE_NPM" = 1 ]; then
		wr run "${DEF[@]}" -- sh -c "cp -r $PKG/npmsrc \$TMPDIR/p && cd \$TMPDIR/p && npm pack --silent >/tmp/npm.log 2>&1 && mkdir \$TMPDIR/app && cd \$TMPDIR/app && echo '{}' > package.json &&
			npm install --offline --no-audit --no-fund \$TMPDIR/p/warren-probe-npm-1.0.0.tgz >>/tmp/npm.log 2>&1 || { tail -20 /tmp/npm.log; exit 1; }
			node -e 'console.log(require(\"warren-probe-npm\"))'; test -d \$HOME/.npm/_cacache && echo cache-in-home"
		is "$(head -n 1 <<<"$OUT")" npm-probe-ok "$M npm pack and npm install --offline of a local package" || diag "$OUT" "$ERR"
		is "$(tail -n 1 <<<"$OUT")" cache-in-home "$M npm wrote its cache under \$HOME/.npm"
	else
		skip 2 "npm is not installed"
	fi
	x=$(state_clean); ok $? "$M nothing of the runs is left on the host" || diag "$x"
done
