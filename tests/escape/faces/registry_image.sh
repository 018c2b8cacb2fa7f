#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# registry_image.sh MODE - escape class "registry_image": an image pulled from a registry whose
# layers try to write outside the image's tree (a symlink out then a file through it, a ".."
# name, an absolute name, a hard link to a file outside). `warren image pull` must refuse each
# and nothing may land outside. A registry of our own (Debian's docker-registry) on 127.0.0.1,
# storage under SCRATCH; the layers pushed as they are with skopeo. MODE root or user (warren
# started by root, or by the unprivileged user warren-test when it exists); image and vm: the
# class is about the store, not the cell. Needs WARREN and SCRATCH in the environment. Last
# line: "registry_image: held|ESCAPED: ...|untested: ...".
set -u
C=registry_image
MODE=${1:-root}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
case $MODE in
root | user) ;;
*) echo "$C: untested: mode $MODE does not apply (an image's import is the same whatever runs it)"; exit 0 ;;
esac
for t in skopeo docker-registry python3; do
	command -v "$t" >/dev/null || { echo "$C: untested: $t is not installed (scripts/install-deps)"; exit 0; }
done
[ -n "${WARREN:-}" ] && [ -n "${SCRATCH:-}" ] || { echo "$C: untested: WARREN and SCRATCH must be set"; exit 0; }
AS=()
if [ "$MODE" = user ]; then
	id warren-test >/dev/null 2>&1 || { echo "$C: untested: no user warren-test"; exit 0; }
	AS=(setpriv --reuid=warren-test --regid=warren-test --init-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent)
fi
D=$(mktemp -d -p "$SCRATCH" registry-face.XXXXXX) || exit 1
chmod 755 "$D"
mkdir -p "$D/outside" "$D/reg" "$D/state"
[ "$MODE" = user ] && chown warren-test "$D/state"
echo victim >"$D/outside/victim"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
printf 'version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: 127.0.0.1:%s\n  secret: face\n' \
	"$D/reg" "$PORT" >"$D/reg.yml"
docker-registry serve "$D/reg.yml" >"$D/reg.log" 2>&1 &
REG=$!
trap 'kill $REG 2>/dev/null; wait $REG 2>/dev/null; rm -rf --one-file-system "$D"' EXIT
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done

python3 - "$D" "$D/outside" <<'EOF' || { echo "$C: untested: cannot make the hostile layers"; exit 0; }
import io, os, sys, tarfile
d, out = sys.argv[1], sys.argv[2]
def tar(name, entries):
    with tarfile.open(os.path.join(d, name + ".tar"), "w", format=tarfile.PAX_FORMAT) as tf:
        for n, kind, link, data in entries:
            ti = tarfile.TarInfo(n); ti.type, ti.linkname = kind, link
            ti.size = len(data) if kind == tarfile.REGTYPE else 0
            tf.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
R, S, H = tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE
tar("symlink", [("evil", S, out, b""), ("evil/pwned-symlink", R, "", b"pwned")])
tar("dotdot", [("a/../../../../../../../.." + out + "/pwned-dotdot", R, "", b"pwned")])
tar("absolute", [(out + "/pwned-absolute", R, "", b"pwned")])
tar("hardlink", [("hl", H, out + "/victim", b"")])
tar("benign", [("etc", tarfile.DIRTYPE, "", b""), ("etc/ok", R, "", b"fine")])
EOF
got=""
for h in benign symlink dotdot absolute hardlink; do
	python3 "$REPO/tests/oci-layout.py" "$D/$h.tar" "$D/lay-$h" '{"Cmd":["sh"]}' 1 >/dev/null &&
		skopeo copy --quiet --dest-tls-verify=false "oci:$D/lay-$h:1" "docker://127.0.0.1:$PORT/face/$h:1" >/dev/null 2>&1 ||
		{ echo "$C: untested: cannot push the $h layer"; exit 0; }
	"${AS[@]}" "$WARREN" image pull --state "$D/state" --insecure "127.0.0.1:$PORT/face/$h:1" "h-$h" >"$D/out" 2>"$D/err"
	rc=$?
	if [ "$h" = benign ] && [ "$rc" != 0 ]; then   # a pull that cannot work holds nothing
		echo "$C: untested: warren image pull of a benign image failed: $(tail -1 "$D/err")"
		exit 0
	fi
	[ "$h" != benign ] && [ "$rc" = 0 ] && got="$got the $h layer was imported;"
done
left=$(cd "$D/outside" && ls -A | grep -vx victim)
[ -n "$left" ] && got="$got written outside: $left;"
[ "$(cat "$D/outside/victim")" = victim ] || got="$got the victim file outside was changed;"
if [ -n "$got" ]; then
	echo "$C: ESCAPED:$got"
else
	echo "$C: held"
fi
