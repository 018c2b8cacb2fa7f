#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# image.t - `warren image import|ls|rm`, `run --image` and `image:` in a job file. Real archives
# made here: tarballs (tar, gz, zst, xz) of the busybox tree, the tree itself, a `podman save`
# archive of a two-layer image podman built from it, `podman save --format oci-archive` and
# `--format oci-dir` (podman with its own storage in the scratch, nothing pulled), an OCI layout
# with whiteouts and an opaque directory, and hostile tarballs made with python's tarfile
# (tests/image-archives.py): each is refused or neutralised, writes nothing outside, leaves
# nothing half-made. What the cell sees of an image (/tmp 01777, TMPDIR last, the layers'
# files), that the image is never written, image rm refused while a run uses it, gc of an
# interrupted import, and that nothing goes to the host's /tmp. As root and rootless.
. "$(dirname "$0")/../lib.sh"

plan 167

BB=$(image_busybox) || bail_out "cannot build the busybox image"
command -v podman >/dev/null || bail_out "podman is not installed (scripts/install-deps installs it)"
SC=$TEST_SCRATCH/img
OUTSIDE=$SC/outside
mkdir -p "$SC/tmpdir" "$OUTSIDE" && chmod 755 "$SC" && echo victim >"$OUTSIDE/victim"
export TMPDIR=$SC/tmpdir	# what warren or podman would put in a temp dir lands here, checked empty at the end

# ---- the archives
tar --format=posix -C "$BB" -cf "$SC/bb.tar" . && gzip -k "$SC/bb.tar" && zstd -q -k "$SC/bb.tar" && xz -k -T1 "$SC/bb.tar" ||
	bail_out "cannot make the tarballs"
LAYERED_DIGEST=$("$PY" "$REPO/tests/image-archives.py" "$SC" "$OUTSIDE") || bail_out "cannot make the test archives"
chmod -R a+rX "$SC"
# podman's runroot must be short (under 50 characters): a directory of its own in /run, removed on exit
PODMAN_RUN=$(mktemp -d -p /run warren-image-t.XXXXXX) || bail_out "cannot make a runroot for podman in /run"
_cleanup_files+=("$PODMAN_RUN")
PODMAN=(podman --root "$SC/podman/root" --runroot "$PODMAN_RUN" --tmpdir "$SC/podman/tmp" --storage-driver vfs
	--cgroup-manager cgroupfs --events-backend none)
mkdir -p "$SC/ctx" && echo from-layer-2 >"$SC/ctx/f" && printf 'FROM localhost/bb:1\nCOPY f /opt/x/f\n' >"$SC/ctx/Containerfile"
{ "${PODMAN[@]}" import "$SC/bb.tar" localhost/bb:1 &&
	"${PODMAN[@]}" build --pull=never -t localhost/bb:2 "$SC/ctx" &&
	"${PODMAN[@]}" save -o "$SC/podman-save.tar" localhost/bb:2 &&
	"${PODMAN[@]}" save --format oci-archive -o "$SC/podman-oci.tar" localhost/bb:2 &&
	"${PODMAN[@]}" save --format oci-dir -o "$SC/podman-oci-dir" localhost/bb:2 && gzip -k "$SC/podman-save.tar"; } >"$SC/podman.log" 2>&1 ||
	bail_out "podman could not build and save the test image: $(tail -3 "$SC/podman.log")"
PODMAN_ID=$("${PODMAN[@]}" images --no-trunc --format '{{.ID}}' localhost/bb:2)
PODMAN_ID=${PODMAN_ID#sha256:}
OCI_DIGEST=$(jget "$SC/podman-oci-dir/index.json" 'd["manifests"][0]["digest"]')
chmod -R a+rX "$SC"
BB_MANIFEST=$(image_manifest "$BB")

# one_line_refusal DESC: exit 125 and one "warren: ..." line
one_line_refusal() {
	[ "$RC" = 125 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && [[ $ERR == "warren: "?* ]]
	ok $? "$1" || diag "exit $RC" "stderr: $ERR"
}
# no_half_made DESC: nothing but finished images in the store (no .import.*, .rm.*)
no_half_made() {
	local left
	left=$(find "$STATE/images" -mindepth 1 -maxdepth 1 -name '.*' 2>/dev/null)
	[ -z "$left" ]; ok $? "$1" || diag "left: $left"
}
imgroot() { printf '%s/images/%s/rootfs' "$STATE" "$1"; }

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"

	# ---- a tarball, compressed three ways, and a directory: the same tree
	wr image import bb "$SC/bb.tar"
	is "$RC" 0 "$M image import of a tarball"
	like "$OUT" "^imported bb: sha256:$(sha256sum "$SC/bb.tar" | cut -d' ' -f1), " "$M the digest of a tarball is the file's sha256"
	if [ "$mode" = root ]; then
		is "$(image_manifest "$(imgroot bb)")" "$BB_MANIFEST" "$M the image is the tree tar was made from: paths, modes, owners, sizes, contents, mtimes"
	else
		got=$(find "$(imgroot bb)" ! -user "$TEST_USER_UID" | head -3)
		is "$got" "" "$M rootless: every file of the image is the importing user's (the archive's owners cannot be given)"
	fi
	for ext in gz zst xz; do
		wr image import "bb-$ext" "$SC/bb.tar.$ext"
		[ "$RC" = 0 ] && diff -r --no-dereference "$(imgroot bb)" "$(imgroot "bb-$ext")" >/dev/null
		ok $? "$M tar.$ext imports to the same tree" || diag "exit $RC: $ERR"
	done
	# (rootless: the user's own copy, as the busybox tree has a root-only /root)
	if [ "$mode" = root ]; then src=$BB; else src=$(imgroot bb); fi
	wr image import bb-dir "$src"
	[ "$RC" = 0 ] && diff -r --no-dereference "$(imgroot bb)" "$(imgroot bb-dir)" >/dev/null
	ok $? "$M a directory imports to the same tree" || diag "exit $RC: $ERR"
	is "$(stat -c %a "$STATE/images/bb")" 555 "$M the image's directory is read-only after the import"

	# ---- podman's archives
	wr image import saved "$SC/podman-save.tar"
	is "$RC" 0 "$M image import of a podman save archive"
	like "$OUT" "^imported saved: sha256:$PODMAN_ID, .* 2 layers \\(docker-archive\\)" "$M its digest is the image id podman shows; two layers"
	wr image import saved-gz "$SC/podman-save.tar.gz"
	like "$RC $OUT" "^0 imported saved-gz: sha256:$PODMAN_ID, .* 2 layers \\(docker-archive\\)" "$M a gzipped podman save archive is one too"
	wr image import oci-archive "$SC/podman-oci.tar"
	like "$RC $OUT" "^0 imported oci-archive: $OCI_DIGEST, .*\\(oci-archive\\)" "$M podman save --format oci-archive imports; the digest is the manifest's"
	wr image import oci-dir "$SC/podman-oci-dir"
	like "$RC $OUT" "^0 imported oci-dir: $OCI_DIGEST, .*\\(oci-layout\\)" "$M an OCI layout directory (podman save --format oci-dir) imports"

	# ---- what a cell sees of an image
	before=$(image_manifest "$(imgroot saved)")
	wrun --image saved --env TMPDIR=/elsewhere -- sh -c 'cat /opt/x/f; stat -c %a /tmp; echo "$TMPDIR"; tr "\0" "\n" </proc/$$/environ | tail -1; whoami; ls -A /tmp'
	is "$RC" 0 "$M run --image: the job runs"
	is "$OUT" "from-layer-2"$'\n'1777$'\n'/tmp$'\n'TMPDIR=/tmp$'\n'"$JOB_USER" \
		"$M run --image: the second layer's file, /tmp 01777 and empty, TMPDIR=/tmp and last, the run user"
	rd=$(last_rundir)
	is "$(jget "$rd/spec.json" 'd["image"]["name"] + " " + d["image"]["digest"]')" "saved sha256:$PODMAN_ID" "$M spec.json names the image and its digest"
	is "$(jget "$rd/result.json" 'd["image"]["digest"]')" "sha256:$PODMAN_ID" "$M result.json has the image's digest"
	wrun --image saved --user 0 -- sh -c 'rm -rf /bin/sh /opt /etc; echo x > /newfile; chmod 700 /bin; echo tried'
	is "$OUT" tried "$M root of the cell writes all over the image's root"
	is "$(image_manifest "$(imgroot saved)")" "$before" "$M the image is byte-for-byte unchanged afterwards (an overlay's lower layer)"
	nothing_left "$(last_rundir)" "$M nothing of the run is left"
	wrun --image oci-archive -- sh -c 'cat /opt/x/f'
	is "$RC $OUT" "0 from-layer-2" "$M run --image of the OCI archive's image"

	# ---- a job file with image:
	printf 'image: saved\nsteps:\n  - run: cat /opt/x/f; stat -c %%a /tmp\n' >"$SC/job-$mode.yaml"
	chmod 644 "$SC/job-$mode.yaml"
	bounded "${RUNNER[@]}" "$WARREN" job run "$SC/job-$mode.yaml" --state "$STATE" --work "$WORK"
	[[ $RC == 0 && $OUT == *from-layer-2*1777* ]]; ok $? "$M a job file's image: runs its steps in the image" || diag "exit $RC" "$OUT" "$ERR"

	# ---- selfcheck --image
	wr selfcheck --image bb
	line_like "$OUT" '^ok +image has /bin/sh' "$M selfcheck --image applies the image checks"
	wr selfcheck --image nosuch
	line_like "$OUT" '^FAIL +image nosuch is stored: no image nosuch' "$M selfcheck --image of a missing image fails, naming it"

	# ---- whiteouts and opaque directories
	wr image import layered "$SC/layered-oci"
	is "$RC" 0 "$M an OCI layout of two layers with whiteouts imports"
	is "$(cd "$(imgroot layered)" && find . | sort | tr '\n' ' ')" ". ./etc ./etc/kept ./opt ./opt/new ./x ./x/inside " \
		"$M .wh.gone removed etc/gone, the opaque opt/ lost the lower layer's entries and kept its own, a file became a directory"
	like "$OUT" "^imported layered: $LAYERED_DIGEST" "$M the layered image's digest is its manifest's"
	wr image import tampered "$SC/tampered-oci"
	one_line_refusal "$M a layer whose bytes differ from the manifest's digest is refused"
	like "$ERR" "has the digest sha256:[0-9a-f]{64}, not sha256:" "$M ... naming both digests"

	# ---- hostile archives: refused, nothing written outside, nothing half-made
	for h in absolute dotdot symlink-out symlink-root symlink-rel hardlink-out hardlink-abs hardlink-via-symlink \
		newline whiteout-dotdot whiteout-via-symlink; do
		wr image import "h-$h" "$SC/$h.tar"
		[ "$RC" = 125 ] && [ "$(printf '%s\n' "$ERR" | wc -l)" = 1 ] && [[ $ERR == "warren: image import h-$h: archive entry '"* ]]
		ok $? "$M hostile archive $h.tar: refused with one line naming the entry" || diag "exit $RC" "stderr: $ERR"
	done
	left=$(find "$OUTSIDE" -mindepth 1 ! -name victim)
	[ -z "$left" ] && [ "$(cat "$OUTSIDE/victim")" = victim ] && [ "$(find "$OUTSIDE/victim" -links 1)" ]
	ok $? "$M nothing was written outside the image's tree (no file, no hard link, the victim intact)" || diag "$left"
	[ ! -e "$STATE/images/h-absolute" ] && ! ls "$STATE/images" | grep -q '^h-'
	ok $? "$M no refused image is in the store"
	no_half_made "$M no half-made import is left by the refusals"
	wr image import h-newline2 "$SC/newline.tar"
	like "$ERR" "'bin/bad\\\\nname'" "$M a newline in an entry's name is shown escaped (\\n), on one line"

	wr image import devices "$SC/devices.tar"
	[ "$RC" = 0 ] && [ ! -e "$(imgroot devices)/dev/sda" ] && [ ! -e "$(imgroot devices)/dev/mem" ] && [ -f "$(imgroot devices)/ok" ]
	ok $? "$M device nodes are left out, the rest imported" || diag "exit $RC: $ERR"
	like "$ERR" "left out 2 device nodes" "$M ... with a note saying how many"
	wr image import setuid "$SC/setuid.tar"
	is "$RC $(stat -c %a "$(imgroot setuid)/bin/su" "$(imgroot setuid)/sgid-dir" "$(imgroot setuid)/tmp" | tr '\n' ' ')" "0 755 775 1777 " \
		"$M setuid and setgid bits are stripped, the sticky bit kept"

	# ---- limits: a declared huge size, a gzip bomb, too many entries
	wr image import huge "$SC/huge-size.tar"
	one_line_refusal "$M an entry declaring 100 GiB is refused by the default size limit"
	# (the default 32 GiB, or the room in the store when its file system has less free)
	like "$ERR" "exceed 34359738368 bytes .*--max-size|exceed [0-9]+ bytes .*the room in the image store $STATE/images" "$M ... naming the limit and how to raise it"
	"$PY" -c '
import sys, tarfile
with tarfile.open(sys.argv[1], "w:gz") as tf:
    ti = tarfile.TarInfo("zeros"); ti.size = 64 << 20
    tf.addfile(ti, open("/dev/zero", "rb"))' "$SC/bomb.tar.gz"
	chmod 644 "$SC/bomb.tar.gz"
	wr image import bomb --max-size 16M "$SC/bomb.tar.gz"
	[ "$RC" = 125 ] && [[ $ERR == *"exceed 16777216 bytes"* ]] && [ ! -e "$STATE/images/bomb" ]
	ok $? "$M a gzip bomb ($(stat -c %s "$SC/bomb.tar.gz") bytes -> 64 MiB) stops at --max-size 16M" || diag "exit $RC: $ERR"
	no_half_made "$M ... and leaves nothing half-made"
	wr image import many --max-entries 10 "$SC/bb.tar"
	[ "$RC" = 125 ] && [[ $ERR == *"more than 10 entries"* ]]; ok $? "$M --max-entries stops an archive with more entries" || diag "$ERR"

	# ---- the store's file system: the byte limit is at most its free space less a reserve (5%
	# of a 16 MiB tmpfs: 819.2 KiB); what would pass it is refused with the store, its free
	# space and what to do, and nothing is left
	SMALL=$SC/small-$mode
	mkdir -p "$SMALL" && mount -t tmpfs -o size=16M,mode=755 tmpfs "$SMALL" || bail_out "cannot mount a tmpfs on $SMALL"
	mkdir_for_mode "$SMALL/state" 700
	ROOM="the room in the image store $SMALL/state/images \(16 MiB free on its file system, less 819.2 KiB kept in reserve\); free space there, or import into a state directory on a larger file system \(--state DIR\)$"
	# small_empty DESC: the small store holds no image and no half-made one, and nothing takes its space
	small_empty() {
		local left used
		left=$(find "$SMALL/state/images" -mindepth 1 2>&1)
		used=$(df --output=used -k "$SMALL" | tail -1 | tr -d ' ')
		[ -z "$left" ] && [ "$used" = 0 ]; ok $? "$1" || diag "left: $left" "used: $used KiB"
	}
	bounded "${RUNNER[@]}" "$WARREN" image --state "$SMALL/state" import big "$SC/bomb.tar.gz"
	one_line_refusal "$M an image larger than the free space of the store's file system (64 MiB on 16 MiB) is refused"
	like "$ERR" "^warren: image import big: archive entry 'zeros': the image would exceed 15938356 bytes \(15.2 MiB\), $ROOM" \
		"$M ... before it is written, naming the store, its free space, the reserve and what to do"
	small_empty "$M ... and nothing of it is left in the store"
	"$PY" -c '
import sys, tarfile
with tarfile.open(sys.argv[1], "w:gz") as tf:
    for i in range(6):
        ti = tarfile.TarInfo("part%d" % i); ti.size = 3 << 20
        tf.addfile(ti, open("/dev/zero", "rb"))' "$SC/parts.tar.gz"
	chmod 644 "$SC/parts.tar.gz"
	bounded "${RUNNER[@]}" "$WARREN" image --state "$SMALL/state" import --max-size 1T parts "$SC/parts.tar.gz"
	[ "$RC" = 125 ] && [ "$(wc -l <<<"$ERR")" = 2 ] &&
		[[ $(sed -n 1p <<<"$ERR") == "warren: note: image import parts: --max-size 1 TiB is above the room in the image store $SMALL/state/images (16 MiB free on its file system, less 819.2 KiB kept in reserve): the import stops at 15.2 MiB" ]]
	ok $? "$M --max-size above the free space: a note that the import stops at the room" || diag "exit $RC" "$ERR"
	like "$(sed -n 2p <<<"$ERR")" "^warren: image import parts: archive entry 'part5': the image would exceed 15938356 bytes \(15.2 MiB\), $ROOM" \
		"$M ... and an archive of files that together pass it (6 x 3 MiB) stops there, mid-way"
	small_empty "$M ... and what it wrote is removed"
	bounded "${RUNNER[@]}" "$WARREN" image --state "$SMALL/state" import --max-size 1T small "$SC/bb.tar"
	[ "$RC" = 0 ] && [ -x "$SMALL/state/images/small/rootfs/bin/busybox" ] && [[ $ERR == *"note: image import small: --max-size 1 TiB is above the room"* ]]
	ok $? "$M an image that fits the room is imported (with the note)" || diag "exit $RC" "$ERR"
	bounded "${RUNNER[@]}" "$WARREN" image --state "$SMALL/state" rm small
	# inodes run out before bytes (a tmpfs of 40 inodes; the busybox tree has 290 entries): the
	# same kind of line, naming the store
	mount -o remount,nr_inodes=40 "$SMALL" || bail_out "cannot remount $SMALL with nr_inodes=40"
	bounded "${RUNNER[@]}" "$WARREN" image --state "$SMALL/state" import inodes "$SC/bb.tar"
	one_line_refusal "$M an import that runs out of inodes is refused"
	like "$ERR" "^warren: image import inodes: the image store $SMALL/state/images ran out of room \(archive entry '.*': .*: No space left on device; it had 16 MiB free on its file system, less 819.2 KiB kept in reserve\); free space there, or import into a state directory on a larger file system \(--state DIR\)$" \
		"$M ... naming the store, what failed and what to do"
	small_empty "$M ... and nothing of it is left in the store"
	# no room at all: refused up front (a file fills the tmpfs but for 512 KiB, under the reserve)
	mount -o remount,nr_inodes=1000 "$SMALL" && head -c $((15872 << 10)) /dev/zero >"$SMALL/fill" || bail_out "cannot fill $SMALL"
	bounded "${RUNNER[@]}" "$WARREN" image --state "$SMALL/state" import full "$SC/bb.tar"
	one_line_refusal "$M an import into a store with no more free space than the reserve is refused"
	like "$ERR" "^warren: image import full: the image store $SMALL/state/images has no room for an image \(512 KiB free on its file system, less 819.2 KiB kept in reserve\); free space there" \
		"$M ... up front, naming the store, its free space and what to do"
	[ -z "$(find "$SMALL/state/images" -mindepth 1)" ]; ok $? "$M ... and it made nothing in the store"
	umount "$SMALL" && rmdir "$SMALL"

	# ---- names and mistakes
	for bad in ../x 'a b' .hidden 'a:b'; do
		wr image import "$bad" "$SC/bb.tar"
		one_line_refusal "$M the image name '$bad' is refused"
	done
	wr image import bb "$SC/bb.tar"
	one_line_refusal "$M importing over an existing image is refused"
	wrun --image nosuch -- true
	one_line_refusal "$M run --image of a missing image: one line"
	wrun --image bb --rootfs "$BB" -- true
	one_line_refusal "$M --image with --rootfs: one line"

	# ---- ls and rm
	wr image ls
	line_like "$OUT" "^saved +[0-9.]+ [KM]iB +sha256:${PODMAN_ID:0:12} +[0-9]{4}-" "$M image ls: name, size, digest, created"
	wr image ls --json
	is "$(jget <(printf '%s' "$OUT") '" ".join(sorted(i["name"] for i in d))')" \
		"bb bb-dir bb-gz bb-xz bb-zst devices layered oci-archive oci-dir saved saved-gz setuid" "$M image ls --json lists every image"
	s=$(uniq_arg)
	wr_bg run --work "$WORK" --image bb -- sleep "$s"
	bg=$BG_PID
	wait_for 15 job_alive "$s"
	live_kb=$(du -sk --one-file-system "$(last_rundir)" | cut -f1)
	image_kb=$(du -sk "$(imgroot bb)" | cut -f1)
	[ "$live_kb" -lt $((image_kb / 2)) ]
	ok $? "$M a live run's directory holds no copy of the image (${live_kb} KiB beside an image of ${image_kb} KiB)"
	wr image rm bb
	one_line_refusal "$M image rm of an image a live run uses is refused"
	like "$ERR" "the live run $RUN_ID_RE uses it" "$M ... naming the run"
	kill -TERM "$bg" 2>/dev/null
	wait_bg "$bg" 20
	wr image rm bb
	[ "$RC" = 0 ] && [ ! -e "$STATE/images/bb" ]; ok $? "$M once the run ended, image rm removes it" || diag "$ERR"

	# ---- an interrupted import: invisible, removed by gc; a live one is left alone
	mkdir -p "$STATE/images/.import.ghost.999999/rootfs/bin" && touch "$STATE/images/.import.ghost.999999/rootfs/bin/x"
	chmod 555 "$STATE/images/.import.ghost.999999/rootfs/bin"
	mkdir -p "$STATE/images/.import.live.999998"
	[ "$mode" = user ] && chown -R "$TEST_USER_UID:$TEST_USER_GID" "$STATE/images"
	start_bg flock "$STATE/images/.import.live.999998" sleep 60
	wait_for 5 has_procs_matching ".import.live.999998"
	wr image ls --json
	[[ $OUT != *ghost* ]]; ok $? "$M a half-made import is not listed"
	wr gc
	[ ! -e "$STATE/images/.import.ghost.999999" ] && [ -d "$STATE/images/.import.live.999998" ] && [[ $OUT == *"removed 1 half-made"* ]]
	ok $? "$M warren gc removes a dead import's directory, not one an importer holds" || diag "$OUT" "$ERR"
	kill "$BG_PID"; wait "$BG_PID" 2>/dev/null
	rm -rf "$STATE/images/.import.live.999998"
done

# ---- libarchive is loaded when an image is read: a host without it runs, and an import says
# what to install (the library hidden under /dev/null in a mount namespace of the test's own)
use_mode root
LIBARCHIVE=$(ldconfig -p | awk '$1 == "libarchive.so.13" { print $NF; exit }')
# without_libarchive CMD...: its output and "rc=N", the library under /dev/null for it alone
without_libarchive() { unshare -m sh -c 'mount --bind /dev/null "$1" && shift && "$@" 2>&1; echo "rc=$?"' sh "$LIBARCHIVE" "$@"; }
if [ -n "$LIBARCHIVE" ] && command -v unshare >/dev/null; then
	out=$(without_libarchive "$WARREN" image import --state "$STATE" nolib "$SC/bb.tar")
	like "$out" "^warren: image import nolib: reading an image needs libarchive.so.13: .*; install the Debian package libarchive13
rc=125$" "without libarchive an import fails with one line naming the package to install (125)"
	out=$(without_libarchive "$WARREN" run --state "$STATE" --work "$SC" -- echo ran)
	like "$out" "^ran
rc=0$" "... and a run does not need it"
	wr image ls
	unlike "$OUT" "nolib" "... and leaves no image"
else
	skip 3 "no libarchive.so.13 in ldconfig's cache, or no unshare"
fi

# ---- warren killed in the middle of an import: nothing visible, gc removes what it left
"$PY" -c '
import sys, tarfile
with tarfile.open(sys.argv[1], "w:gz", compresslevel=1) as tf:
    for i in range(8):
        ti = tarfile.TarInfo("zeros%d" % i); ti.size = 64 << 20
        tf.addfile(ti, open("/dev/zero", "rb"))' "$SC/big.tar.gz"
start_bg "$WARREN" image import --state "$STATE" killed "$SC/big.tar.gz"
# looked for without a pause: on a fast machine the import of 256 MiB took 0.08 s, less than
# wait_for's 0.1 s between looks, and the import was over before it was seen
seen=1
end=$((SECONDS + 20))
while [ $SECONDS -lt $end ]; do
	compgen -G "$STATE/images/.import.killed.*" >/dev/null && { seen=0; break; }
done
kill -KILL "$BG_PID"
wait "$BG_PID" 2>/dev/null
wr image ls --json
[ "$seen" = 0 ] && [[ $OUT != *killed* ]] && [ ! -e "$STATE/images/killed" ]
ok $? "warren killed during an import: no image 'killed' is listed or stored" || diag "seen: $seen" "$OUT" "import: $(cat "$BG_ERR")"
wr gc
[[ $OUT == *"removed 1 half-made"* ]] && ! compgen -G "$STATE/images/.import.killed.*" >/dev/null
ok $? "warren gc removes what the killed import left" || diag "$OUT" "$ERR"

# ---- the host's /tmp: an import never goes there (strace of a layered import as root)
if command -v strace >/dev/null; then
	# (LeakSanitizer cannot work under ptrace: off for this one run of a sanitizer build)
	ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=%file -o "$SC/strace.out" "$WARREN" image import --state "$STATE" traced "$SC/podman-save.tar" >/dev/null 2>&1
	st=$?
	hits=$(grep -E '"/tmp(/|")|"/var/tmp(/|")' "$SC/strace.out" | head -3)
	[ "$st" = 0 ] && [ -z "$hits" ]; ok $? "an import opens nothing in /tmp or /var/tmp (strace)" || diag "exit $st" "$hits"
else
	skip 1 "strace is not installed"
fi
left=$(find "$SC/tmpdir" -mindepth 1 | head -3)
is "$left" "" "nothing was written to \$TMPDIR by warren or podman"
