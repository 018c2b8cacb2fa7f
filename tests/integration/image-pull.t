#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# image-pull.t - `warren image pull` from real registries (Debian's docker-registry, started
# here on 127.0.0.1 with its storage in the scratch: one over plain HTTP, one over TLS with a
# self-signed certificate and htpasswd basic auth), images pushed to them with skopeo from an
# OCI layout built of the busybox tree with a config of our own (tests/oci-layout.py). What the
# image's config does to a run (Env under --env, WorkingDir, Entrypoint and Cmd, --entrypoint,
# User), in a job file too; image inspect, --replace (a live run keeps its old tree), tag, a
# docker archive's config kept on import; refusals: plain HTTP without --insecure, no
# credentials, an unknown CA, a tampered blob. As root and rootless.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

plan 108

for t in skopeo docker-registry htpasswd openssl; do
	command -v "$t" >/dev/null || bail_out "$t is not installed (scripts/install-deps installs skopeo, docker-registry, apache2-utils)"
done
BB=$(image_busybox) || bail_out "cannot build the busybox image"
SC=$TEST_SCRATCH/pull
mkdir -p "$SC/tmpdir" && chmod 755 "$SC"
export TMPDIR=$SC/tmpdir   # what skopeo or warren put in a temp dir lands here, checked empty at the end

# ---- the images: the busybox tree with /srv/app, one config each
tree() { # tree DIR MARKER
	cp -a "$BB" "$1" && mkdir -p "$1/srv/app" && echo "$2" >"$1/srv/app/marker" && chmod -R a+rX "$1/srv"
}
tree "$SC/tree1" one && tree "$SC/tree2" two || bail_out "cannot copy the busybox tree"
CFG1='{"Env":["PATH=/usr/bin:/bin","GREETING=hello from the image","BOTH=image","TMPDIR=/image-tmp"],"WorkingDir":"/srv/app","Entrypoint":["/bin/echo","entry"],"Cmd":["from-cmd"]}'
CFG2='{"Env":["GREETING=second"],"User":"nobody","Cmd":["sh","-c","cat marker; id -u"],"WorkingDir":"/srv/app"}'
# a hostile layer: a symlink out of the tree, then a file through it
mkdir -p "$SC/outside" && "$PY" - "$SC/hostile.tar" "$SC/outside" <<'EOF' || bail_out "cannot make the hostile layer"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as tf:
    ti = tarfile.TarInfo("evil"); ti.type, ti.linkname = tarfile.SYMTYPE, sys.argv[2]; tf.addfile(ti)
    ti = tarfile.TarInfo("evil/pwned"); ti.size = 5; tf.addfile(ti, io.BytesIO(b"pwned"))
EOF
"$PY" "$REPO/tests/oci-layout.py" "$SC/hostile.tar" "$SC/lay-hostile" '{"Cmd":["sh"]}' 1 >/dev/null &&
	"$PY" "$REPO/tests/oci-layout.py" "$SC/tree1" "$SC/lay1" "$CFG1" 1 >/dev/null &&
	"$PY" "$REPO/tests/oci-layout.py" "$SC/tree2" "$SC/lay2" "$CFG2" 2 >/dev/null || bail_out "cannot build the OCI layouts"

# a manifest list (an OCI index): lay2's image for another platform first, lay1's for this host's
case $(uname -m) in x86_64) ARCH=amd64 OTHER=arm64 ;; aarch64) ARCH=arm64 OTHER=amd64 ;; *) ARCH=$(uname -m) OTHER=amd64 ;; esac
"$PY" - "$SC/lay1" "$SC/lay2" "$SC/lay-multi" "$ARCH" "$OTHER" <<'EOF' || bail_out "cannot build the index"
import hashlib, json, os, shutil, sys
a, b, out, arch, other = sys.argv[1:6]
os.makedirs(os.path.join(out, "blobs", "sha256"))
for src in (a, b):
    for f in os.listdir(os.path.join(src, "blobs", "sha256")):
        shutil.copy(os.path.join(src, "blobs", "sha256", f), os.path.join(out, "blobs", "sha256", f))
def man(src, arch):
    m = json.load(open(os.path.join(src, "index.json")))["manifests"][0]
    m.pop("annotations", None)
    m["platform"] = {"os": "linux", "architecture": arch}
    return m
idx = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                  "manifests": [man(b, other), man(a, arch)]}).encode()
d = hashlib.sha256(idx).hexdigest()
open(os.path.join(out, "blobs", "sha256", d), "wb").write(idx)
json.dump({"imageLayoutVersion": "1.0.0"}, open(os.path.join(out, "oci-layout"), "w"))
json.dump({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.index.v1+json", "digest": "sha256:" + d,
           "size": len(idx), "annotations": {"org.opencontainers.image.ref.name": "multi"}}]}, open(os.path.join(out, "index.json"), "w"))
EOF

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# registry NAME PORT [EXTRA YAML]: docker-registry on 127.0.0.1:PORT, its storage under the scratch
registry() {
	mkdir -p "$SC/$1"
	cat >"$SC/$1.yml" <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $SC/$1
http:
  addr: 127.0.0.1:$2
  secret: warren-test
${3:-}
EOF
	start_bg docker-registry serve "$SC/$1.yml"
	wait_for 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$2" 2>/dev/null
}
P1=$(free_port)
registry plain "$P1" || bail_out "docker-registry did not start: $(cat "$BG_ERR")"
REG1_PID=$BG_PID
R1=127.0.0.1:$P1
# TLS (a self-signed certificate for 127.0.0.1) and basic auth (htpasswd, bcrypt)
mkdir -p "$SC/certs" && openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
	-keyout "$SC/certs/key.pem" -out "$SC/certs/ca.crt" >/dev/null 2>&1 && htpasswd -Bbc "$SC/htpasswd" alice s3cret >/dev/null 2>&1 ||
	bail_out "cannot make the certificate or the htpasswd file"
chmod -R a+rX "$SC/certs"
P2=$(free_port)
registry secure "$P2" "  tls:
    certificate: $SC/certs/ca.crt
    key: $SC/certs/key.pem
auth:
  htpasswd:
    realm: warren-test
    path: $SC/htpasswd" || bail_out "the TLS registry did not start: $(cat "$BG_ERR")"
REG2_PID=$BG_PID
R2=127.0.0.1:$P2
push() { skopeo copy --quiet --dest-tls-verify=false "$@" >"$SC/push.log" 2>&1 || bail_out "skopeo could not push $*: $(tail -2 "$SC/push.log")"; }
push "oci:$SC/lay1:1" "docker://$R1/test/bb:1"
push "oci:$SC/lay2:2" "docker://$R1/test/bb:2"
push "oci:$SC/lay1:1" "docker://$R1/test/tamper:1"
push "oci:$SC/lay-hostile:1" "docker://$R1/test/hostile:1"
push --all "oci:$SC/lay-multi:multi" "docker://$R1/test/multi:1"
push --dest-creds alice:s3cret "oci:$SC/lay1:1" "docker://$R2/team/app:1"
REG_DIGEST=$(skopeo inspect --tls-verify=false "docker://$R1/test/bb:1" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["Digest"])')
# the docker archive of the same image, for import
skopeo copy --quiet "oci:$SC/lay1:1" "docker-archive:$SC/bb-docker.tar:test/bb:1" >"$SC/push.log" 2>&1 || bail_out "cannot make a docker archive"
chmod -R a+rX "$SC"

one_line_refusal() {
	[ "$RC" = 125 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && [[ $ERR == "warren: "?* ]]
	ok $? "$1" || diag "exit $RC" "stderr: $ERR"
}
no_half_made() {
	local left
	left=$(find "$STATE/images" -mindepth 1 -maxdepth 1 -name '.*' 2>/dev/null)
	[ -z "$left" ]; ok $? "$1" || diag "left: $left"
}

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"

	# ---- pulls: plain HTTP needs --insecure
	wr image pull "$R1/test/bb:1"
	one_line_refusal "$M a pull from a plain-HTTP registry without --insecure is refused with one line"
	like "$ERR" "give --insecure" "$M ... which says to give --insecure"
	wr image pull --insecure "$R1/test/bb:1"
	is "$RC" 0 "$M image pull --insecure REF"
	like "$OUT" "^pulled bb: $REG_DIGEST, .* 1 layer \\(oci-layout\\)" "$M the name is the repository's last part; the digest is the registry's"
	no_half_made "$M no scratch of the pull is left in the store"
	is "$ERR" "" "$M not on a terminal: no progress, nothing on stderr"
	bounded "${RUNNER[@]}" script -qec "$(printf '%q ' "$WARREN" image pull --state "$STATE" --insecure "$R1/test/bb:1" bb-tty)" /dev/null
	[[ $RC == 0 && $OUT == *"Getting image source signatures"*"pulled bb-tty: "* ]]
	ok $? "$M on a terminal: skopeo's progress while the layers come in, then the result" || diag "exit $RC" "$OUT" "$ERR"

	# ---- a manifest list: this host's platform
	if [ "$mode" = root ]; then
		wr image pull --insecure "$R1/test/multi:1"
		wrun --image multi --entrypoint '' -- cat /srv/app/marker
		is "$RC $OUT" "0 one" "$M a manifest list is resolved to this host's platform (linux/$ARCH, listed second)"
	fi

	# ---- the config as a run's defaults
	wrun --image bb
	is "$RC $OUT" "0 entry from-cmd" "$M run --image with no command runs Entrypoint + Cmd"
	wrun --image bb -- a b
	is "$RC $OUT" "0 entry a b" "$M with a command: Entrypoint + the command (docker's meaning)"
	wrun --image bb --env BOTH=caller --entrypoint '' -- sh -c 'echo "$GREETING|$BOTH|$PATH|$TMPDIR"; pwd; cat marker; tr "\0" "\n" </proc/$$/environ | tail -1'
	is "$RC $OUT" "0 hello from the image|caller|/usr/bin:/bin|/tmp"$'\n'/srv/app$'\n'one$'\n'TMPDIR=/tmp \
		"$M --entrypoint '': the image's Env under --env, TMPDIR still /tmp and last, WorkingDir the working directory"
	wrun --image bb --entrypoint /bin/sh -- -c 'echo via-sh'
	is "$RC $OUT" "0 via-sh" "$M --entrypoint WORD replaces the Entrypoint"
	wrun --image bb --entrypoint /bin/pwd
	is "$RC $OUT" "0 /srv/app" "$M --entrypoint with no command drops the image's Cmd"
	wrun --image bb --workdir / --entrypoint /bin/pwd
	is "$RC $OUT" "0 /" "$M --workdir wins over WorkingDir"
	wrun --image bb --entrypoint '' -- sh -c "touch $WORK/from-job"
	[ -e "$WORK/from-job" ]; ok $? "$M the worktree is still mounted with an image's WorkingDir" || diag "$OUT $ERR"
	rm -f "$WORK/from-job"

	# ---- a job file: Env and WorkingDir apply, Entrypoint and Cmd do not
	printf 'image: bb\nsteps:\n  - run: echo "$GREETING"; pwd\n' >"$SC/job-$mode.yaml"
	chmod 644 "$SC/job-$mode.yaml"
	bounded "${RUNNER[@]}" "$WARREN" job run "$SC/job-$mode.yaml" --state "$STATE" --work "$WORK"
	[[ $RC == 0 && $OUT == *"hello from the image"*"/srv/app"* && $OUT != *entry* ]]
	ok $? "$M a job file's image: gives its steps the image's Env and WorkingDir, not its Entrypoint" || diag "exit $RC" "$OUT" "$ERR"

	# ---- inspect
	wr image inspect bb
	line_like "$OUT" "^source +docker://$R1/test/bb:1$" "$M image inspect names the source"
	line_like "$OUT" "^ +WorkingDir +/srv/app$" "$M ... and the config"
	wr image inspect --json bb
	is "$(printf '%s' "$OUT" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["digest"], d["config"]["Entrypoint"], d["config"]["Cmd"])')" \
		"$REG_DIGEST ['/bin/echo', 'entry'] ['from-cmd']" "$M image inspect --json: digest, Entrypoint, Cmd"
	wr image inspect nosuch
	one_line_refusal "$M image inspect of a missing image: one line"

	# ---- the same name again: refused unless --replace; a live run keeps its tree
	wr image pull --insecure "$R1/test/bb:2" bb
	one_line_refusal "$M a pull onto an existing name is refused"
	like "$ERR" "--replace" "$M ... naming --replace"
	wr_bg run --work "$WORK" --image bb --entrypoint '' -- sh -c 'sleep 3; cat /srv/app/marker'
	LIVE=$BG_PID
	sleep 1
	wr image pull --insecure --replace "$R1/test/bb:2" bb
	is "$RC" 0 "$M image pull --replace replaces it while a run uses it"
	like "$ERR" "still uses the image it replaced" "$M ... with a note that the old tree stays for the live run"
	wait_bg "$LIVE"
	is "$RC $(cat "$BG_OUT")" "0 one" "$M the live run went on with its own (old) tree"
	if [ "$mode" = root ]; then want_id=65534; else want_id=$TEST_USER_UID; fi
	wrun --image bb
	is "$RC $OUT" "0 two"$'\n'"$want_id" "$M the new image runs; its User nobody is the run user as root (rootless: yourself)"
	[ "$mode" = root ] && unlike "$ERR" note "$M root: no note for a user it may be" || like "$ERR" "note: image bb: its user 'nobody' \\(uid 65534\\) is not one this run can be" "$M rootless: one note for a user it may not be"
	wrun --image bb --user 0
	is "$RC $OUT" "0 two"$'\n'0 "$M --user wins over the image's User"
	wr gc
	no_half_made "$M after the live run, gc removes the replaced tree"

	# ---- tag
	wr image tag bb bb-copy
	is "$RC" 0 "$M image tag SRC DST"
	is "$(stat -c %i "$STATE/images/bb/rootfs/bin/busybox")" "$(stat -c %i "$STATE/images/bb-copy/rootfs/bin/busybox")" \
		"$M the tag shares the files (hard links)"
	wr image tag bb bb-copy
	one_line_refusal "$M a tag onto an existing name is refused"
	wr image rm bb
	wrun --image bb-copy
	is "$RC $OUT" "0 two"$'\n'"$want_id" "$M the tag runs after its source is removed, with the source's config"
	wr image inspect bb-copy
	line_like "$OUT" "^tagged_from +bb$" "$M image inspect of a tag names its source"

	# ---- import onto an existing name; a docker archive keeps its config
	wr image import bb-copy "$SC/bb-docker.tar"
	one_line_refusal "$M an import onto an existing name is refused"
	wr image import --replace bb-copy "$SC/bb-docker.tar"
	is "$RC" 0 "$M image import --replace"
	wrun --image bb-copy
	is "$RC $OUT" "0 entry from-cmd" "$M a docker archive's Entrypoint and Cmd are kept on import"

	# ---- TLS and basic auth
	wr image pull --insecure "$R2/team/app:1"
	one_line_refusal "$M a pull without credentials from a registry that wants them is refused"
	like "$ERR" "--creds" "$M ... naming --creds"
	wr image pull --creds alice:s3cret "$R2/team/app:1"
	one_line_refusal "$M a registry whose certificate is not trusted is refused"
	like "$ERR" "--cert-dir" "$M ... naming --cert-dir"
	wr image pull --creds alice:s3cret --cert-dir "$SC/certs" "$R2/team/app:1" app1
	is "$RC" 0 "$M pull with --creds and --cert-dir (TLS, basic auth)"
	printf '{"auths":{"%s":{"auth":"%s"}}}' "$R2" "$(printf alice:s3cret | base64)" >"$SC/auth-$mode.json"
	[ "$mode" = user ] && chown "$TEST_USER_UID" "$SC/auth-$mode.json"
	wr_env REGISTRY_AUTH_FILE="$SC/auth-$mode.json" -- image pull --cert-dir "$SC/certs" "$R2/team/app:1" app2
	is "$RC" 0 "$M pull with REGISTRY_AUTH_FILE"
	wrun --image app2
	is "$RC $OUT" "0 entry from-cmd" "$M the pulled image runs"
	no_half_made "$M nothing half-made after the refused pulls"
done

# ---- the server: a job's image: gives its steps the image's Env and WorkingDir, cold and warm
use_mode root
SOCK=$SC/api.sock
job_req() {
	"$PY" -c 'import json,sys; print(json.dumps({"job": json.dumps({"steps": [{"name": "main", "run": "echo \"$GREETING\"; pwd"}], "image": "bb-copy"}), "worktree": sys.argv[1]}))' "$WORK"
}
start_server 20 --listen "unix:$SOCK" --slots 2
ok $? "warren serve answers" || diag "$(cat "$SRV_ERR")"
run_wait "$(job_req)"
is "$(jbody 'd["state"]')|$(API_AS=root logs "$ID")" "exited|hello from the image"$'\n'/srv/app "the server's cold run of a job with image: has the image's Env and WorkingDir"
cmd_req='{"command": ["sh", "-c", "echo \"$GREETING\"; pwd"], "image": "bb-copy", "worktree": "'"$WORK"'"}'
run_wait "$cmd_req"
is "$(jbody 'd["state"]')|$(API_AS=root logs "$ID")" "exited|hello from the image"$'\n'/srv/app "the server's command with image: has the image's Env and WorkingDir (Entrypoint and Cmd not used)"
stop_server 60
start_server 20 --listen "unix:$SOCK" --slots 2 --warm 1 --warm-work "$WORK" --warm-image bb-copy
wait_for 30 ready_is 1
ok $? "a warm cell of the image is made" || diag "$(cat "$SRV_ERR")"
run_wait "$(job_req)"
is "$(jbody 'd["start"]')|$(API_AS=root logs "$ID")" "warm|hello from the image"$'\n'/srv/app "a warm cell's run has them too"
stop_server 60
is "$RC" 0 "the server stops cleanly"

# ---- a tampered blob in the registry: refused, nothing kept
hex=$(skopeo inspect --raw --tls-verify=false "docker://$R1/test/tamper:1" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["layers"][0]["digest"][7:])')
layer=$SC/plain/docker/registry/v2/blobs/sha256/${hex:0:2}/$hex/data
[ -f "$layer" ] && printf X | dd of="$layer" bs=1 seek=1000 conv=notrunc status=none
ok $? "the registry's layer blob is altered on disk" || true
wr image pull --insecure "$R1/test/tamper:1" tampered
one_line_refusal "a blob whose digest differs is refused with one line"
like "$ERR" "[Dd]igest" "... naming the digest"
wr image inspect tampered
is "$RC" 125 "no image is kept of it"
no_half_made "nothing half-made of it"

# ---- a hostile layer from a registry: the pulled layout goes through the importer's refusals
wr image pull --insecure "$R1/test/hostile:1"
one_line_refusal "a pulled image whose layer writes through a symlink is refused with one line"
like "$ERR" "archive entry 'evil/pwned'" "... naming the entry"
is "$(ls -A "$SC/outside")" "" "nothing was written outside the image"
no_half_made "nothing half-made of it"

# ---- the name, and a missing or bad reference
wr image pull --insecure "$R1/test/bb:1" 'bad name'
one_line_refusal "a bad NAME is refused with one line"
wr image pull --insecure "-x"
one_line_refusal "an option-like REF is refused"

kill "$REG1_PID" "$REG2_PID" 2>/dev/null
wait "$REG1_PID" "$REG2_PID" 2>/dev/null
is "$(find "$SC/tmpdir" -mindepth 1 | head -3)" "" "nothing was left in TMPDIR"
is "$(procs_matching "$SC" | wc -l)" 0 "no registry is left running"
