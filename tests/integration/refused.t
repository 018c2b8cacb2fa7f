#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# refused.t - refused writes recorded and explained (issue 6): a probe in the cell makes
# writes of every watched kind, some the cell refuses (read-only host tree, Landlock-denied
# tmpfs, /proc/sys, /sys, /dev, protected worktree paths; absolute, relative, through a
# directory fd, through a symlink, openat2) and some it allows or the kernel fails for
# another reason (EEXIST, ENOENT); result.json's refused_writes must be exactly the paths
# and counts the kernel refused (EROFS/EACCES/EPERM), and the end line must name them and
# where to write instead. Also: the 100-path cap, exact counts over thousands of calls,
# --quiet, --no-refused-writes, a job's steps, a --rootfs image, and that the watch turns
# no call into a failure (writes that succeed without it succeed with it). And connects to
# the host's unix sockets (issue 10): refused, recorded in refused_connects and said at the
# end, while sockets the job binds itself in /tmp and the worktree work.
. "$(dirname "$0")/../lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed for the probe"

# Tests: 29 per mode, 5 on an image per mode, 4 for a job.
plan $((2 * 29 + 2 * 5 + 4))

# probe.py OPS...: each op is one call; prints "PATH ERRNO-NAME" per path it names ("ok"
# when the call succeeded); a rename prints both of its paths.
PROBE=$TEST_SCRATCH/probe.py
cat >"$PROBE" <<'EOF'
import ctypes, errno, os, sys

def esc(p):
    """as warren prints a path: control bytes, DEL, backslash and bytes that are not UTF-8
    as \\xNN"""
    b, out, i = os.fsencode(p), [], 0
    while i < len(b):
        c = b[i]
        n = 1 if c < 0x80 else 2 if 0xc2 <= c < 0xe0 else 3 if 0xe0 <= c < 0xf0 else 4 if 0xf0 <= c <= 0xf4 else 0
        try:
            ok = n > 0 and len(b[i:i + n]) == n and bool(b[i:i + n].decode("utf-8"))
        except UnicodeDecodeError:
            ok = False
        if ok and n == 1 and (c < 0x20 or c == 0x7f or c == 0x5c):
            ok = False
        if ok:
            out.append(b[i:i + n].decode("utf-8"))
            i += n
        else:
            out.append("\\x%02x" % c)
            i += 1
    return "".join(out)

def res(paths, fn):
    try:
        fn()
        r = "ok"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    for p in paths:
        print(esc(p), r)

libc = ctypes.CDLL(None, use_errno=True)
class OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

def openat2(path, flags):
    how = OpenHow(flags, 0o644, 0)
    fd = libc.syscall(437, -100, path.encode(), ctypes.byref(how), ctypes.c_size_t(24))
    if fd < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    os.close(fd)

W = os.O_WRONLY | os.O_CREAT
def create(p):
    os.close(os.open(p, W, 0o644))

for op in sys.argv[1:]:
    kind, _, arg = op.partition(":")
    a = arg.split(",")
    if kind == "create":   res([a[0]], lambda: create(a[0]))
    elif kind == "mkdir":  res([a[0]], lambda: os.mkdir(a[0]))
    elif kind == "rmdir":  res([a[0]], lambda: os.rmdir(a[0]))
    elif kind == "unlink": res([a[0]], lambda: os.unlink(a[0]))
    elif kind == "rename": res([a[0], a[1]], lambda: os.rename(a[0], a[1]))
    elif kind == "chmod":  res([a[0]], lambda: os.chmod(a[0], 0o600))
    elif kind == "trunc":  res([a[0]], lambda: os.truncate(a[0], 0))
    elif kind == "utime":  res([a[0]], lambda: os.utime(a[0]))
    elif kind == "symlink": res([a[0]], lambda: os.symlink("target", a[0]))
    elif kind == "link":   res([a[1]], lambda: os.link(a[0], a[1]))
    elif kind == "rdcreat": res([a[0]], lambda: os.close(os.open(a[0], os.O_RDONLY | os.O_CREAT)))
    elif kind == "excl":   res([a[0]], lambda: os.close(os.open(a[0], W | os.O_EXCL)))
    elif kind == "openat2": res([a[0]], lambda: openat2(a[0], W))
    elif kind == "dirfd":  # a[0]: directory, a[1]: name created relative to it
        d = os.open(a[0], os.O_RDONLY | os.O_DIRECTORY)
        res([a[0].rstrip("/") + "/" + a[1]], lambda: os.close(os.open(a[1], W, 0o644, dir_fd=d)))
        os.close(d)
    elif kind == "ln":     res([a[1]], lambda: os.symlink(a[0], a[1]))   # ln:TARGET,NAME
    elif kind == "chown":  res([a[0]], lambda: os.chown(a[0], -1, -1))
    elif kind == "lchown": res([a[0]], lambda: os.lchown(a[0], -1, -1))
    elif kind == "nl":     # a name with a newline in it: /etc/bad<LF>name
        n = "/etc/bad\nname"
        res([n], lambda: create(n))
    elif kind == "bad8":   # a name that is not UTF-8, and one that is
        for n in (os.fsdecode(b"/etc/bad\xffname"), "/etc/caf\u00e9"):
            res([n], lambda: create(n))
    elif kind == "renameto": res([a[1]], lambda: os.rename(a[0], a[1]))   # names only the target
    elif kind == "nofollow": res([a[0]], lambda: os.close(os.open(a[0], os.O_WRONLY | os.O_NOFOLLOW)))
    elif kind == "tmpfile": res([a[0]], lambda: os.close(os.open(a[0], os.O_TMPFILE | os.O_WRONLY, 0o600)))
    elif kind == "trunco": res([a[0]], lambda: os.close(os.open(a[0], os.O_WRONLY | os.O_TRUNC)))
    elif kind == "pty":    res(["/dev/ptmx"], lambda: [os.close(f) for f in os.openpty()])
    elif kind == "cd":     os.chdir(a[0])
    elif kind == "write":  res([a[0]], lambda: open(a[0], "a").write("x"))
    else: sys.exit("unknown op " + op)
EOF
chmod 644 "$PROBE"

# refused_set [SED]: the paths the probe saw refused, mapped through SED, as "PATH COUNT"
# lines sorted; from OUT.
refused_set() {
	printf '%s\n' "$OUT" | awk '$2 == "EROFS" || $2 == "EACCES" || $2 == "EPERM" || $2 == "EBUSY" { print $1 }' | sed "${1:-}" |
		awk '{ n[$1]++ } END { for (p in n) print p, n[p] }' | sort
}
# recorded_set RESULT: refused_writes of result.json as "PATH COUNT" lines sorted.
recorded_set() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [print(w["path"], w["count"]) for w in d["refused_writes"] or []]' "$1" | sort
}

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	R=$TEST_SCRATCH/results-$mode   # where warren (as this mode's user) writes --result
	mkdir_for_mode "$R"
	HOMEDIR=$( [ "$mode" = root ] && echo /home/warren || echo "/home/$TEST_USER")
	mkdir -p "$WORK/.git/hooks" "$WORK/sub"
	: >"$WORK/.git/config"
	[ "$mode" = user ] && chown -R "$TEST_USER_UID:$TEST_USER_GID" "$WORK/.git" "$WORK/sub"
	ln -sfn /etc "$WORK/etc-link"

	# ---- the kernel and the record agree, call for call
	ops=(
		create:/usr/local/w1 create:/usr/local/w1 create:/usr/local/w1   # absolute, three times
		mkdir:/usr/w2 mkdir:/usr                                         # refused; EEXIST
		rdcreat:/etc/passwd excl:/etc/passwd                             # no write: ok; EEXIST
		unlink:/etc/nothere-w mkdir:/usr/nothere/deeper                  # EROFS (before the lookup!); ENOENT
		rename:/etc/passwd,/tmp/x                                        # EXDEV: another mount
		unlink:/etc/hostname rename:/etc/hostname,/etc/w3                # refused; both paths
		chmod:/etc/passwd trunc:/etc/passwd utime:/etc/passwd            # three calls, one path
		symlink:/usr/w4 link:/usr/bin/env,/usr/w5
		openat2:/usr/w8                                                  # the profile: ENOSYS, never seen
		dirfd:/etc,w7 create:etc-link/w9                                 # a dirfd; a symlink
		create:/proc/sys/kernel/w10 write:/proc/sys/kernel/hostname create:/sys/kernel/w11 # procfs: ENOENT
		create:/dev/w12 mkdir:/home/w13 create:/run/w14                  # /dev, Landlock on tmpfs
		create:.git/hooks/pre-commit write:.git/config                   # protected
		create:/tmp/ok1 mkdir:/tmp/okd rename:/tmp/ok1,/tmp/okd/ok2 unlink:/tmp/okd/ok2 rmdir:/tmp/okd
		create:/var/tmp/ok3 create:$HOMEDIR/ok4 create:sub/ok5 write:/dev/null create:/dev/shm/ok6
		pty                                                              # /dev/ptmx: a symlink on the read-only /dev
		cd:/usr create:w6 cd:/tmp create:ok7                             # relative to the cwd
		rename:$HOMEDIR/missing,/home/w15                                # ENOENT: no source
		create:/tmp/ok-src link:/tmp/missing,/usr/w16 link:/tmp/ok-src,/home/w17 # ENOENT; EXDEV
		ln:/etc/passwd,/tmp/lnk chown:/tmp/lnk lchown:/tmp/lnk           # followed: EROFS; not: ok
		ln:/usr/local/dangling,/tmp/dang create:/tmp/dang                # O_CREAT through a dangling link
		create:/usr trunc:/usr unlink:/usr/. rmdir:/usr/.                # EISDIR, EISDIR, EISDIR, EINVAL
		nl bad8                                                          # a newline; not UTF-8; UTF-8
		create:.git/config.lock renameto:.git/config.lock,.git/config    # git config: EBUSY (a mount)
		unlink:.git/config                                               # EBUSY
		nofollow:/tmp/lnk tmpfile:/usr tmpfile:/tmp trunc:/dev/null      # ELOOP; EROFS; ok; EINVAL
		trunco:/proc/self/oom_score_adj                                  # a shell's '>' into /proc/self
		create:/proc/self/root/etc/w18 cd:/usr create:/proc/self/cwd/w19 cd:/tmp
		create:/usr/new20/                                               # EISDIR
		cd:/tmp ln:/usr/bin/env,envlnk create:envlnk mkdir:okd3 rmdir:okd3 # a name in the cwd: followed; made and removed
		cd:/usr mkdir:w21 cd:/tmp                                        # a name in a read-only cwd
		cd:/ create:usr/w22 create:tmp/ok8 mkdir:tmp/okd4 rmdir:tmp/okd4 # deeper relative paths
		cd:/tmp ln:/usr,/tmp/usrlnk create:/tmp/usrlnk/w23 create:usrlnk/w23 # a symlink to a read-only dir
		cd:/tmp create:../usr/w24 create:../tmp/ok9                      # up and down again
	)
	wrun --result "$R/$mode.json" -- python3 "$PROBE" "${ops[@]}"
	is "$RC" 0 "$M the probe ran"
	kernel=$(refused_set)
	recorded=$(recorded_set "$R/$mode.json")
	# the probe names paths as it passed them: relative ones as such
	want="/dev/w12 /etc/hostname /etc/nothere-w /etc/passwd /etc/w3 /etc/w7 etc-link/w9 /home/w13 /proc/sys/kernel/hostname /run/w14 /sys/kernel/w11 /usr/local/w1 /usr/w2 /usr/w4 /usr/w5 w6 .git/hooks/pre-commit .git/config /tmp/lnk /tmp/dang /etc/bad\\x0aname /etc/bad\\xffname /etc/café /usr /proc/self/root/etc/w18 /proc/self/cwd/w19 envlnk w21 usr/w22 /tmp/usrlnk/w23 usrlnk/w23 ../usr/w24"
	is "$(printf '%s\n' "$kernel" | awk '{print $1}' | sort | tr '\n' ' ')" "$(printf '%s\n' $want | sort | tr '\n' ' ')" \
		"$M the kernel refused exactly the writes outside the run (the probe's view)" || diag "$OUT"
	# the record resolves them in the cell: the worktree's, the symlink's target, the cwd's
	# mapped: the worktree's, a symlink's target, the cwd's
	kernel_abs=$(refused_set "s|^\.git/|$WORK/.git/|;s|^etc-link/|/etc/|;s|^w6\$|/usr/w6|;s|^/tmp/lnk\$|/etc/passwd|;s|^/tmp/dang\$|/usr/local/dangling|;s|^/proc/self/root/etc/w18\$|/etc/w18|;s|^/proc/self/cwd/w19\$|/usr/w19|;s|^envlnk\$|/usr/bin/env|;s|^w21\$|/usr/w21|;s|^usr/w22\$|/usr/w22|;s|^/tmp/usrlnk/w23\$|/usr/w23|;s|^usrlnk/w23\$|/usr/w23|;s|^\.\./usr/w24\$|/usr/w24|")
	is "$recorded" "$kernel_abs" "$M result.json's refused_writes: the same paths with the same counts" ||
		diag "kernel:" "$kernel_abs" "recorded:" "$recorded"
	line_like "$recorded" '^/usr/local/w1 3$' "$M three refused writes of one path count 3"
	line_like "$recorded" '^/etc/passwd 4$' "$M chmod, truncate, utime and chown through a symlink of /etc/passwd count; the read-only O_CREAT open, O_EXCL and lchown of the symlink do not"
	calls=$(printf '%s\n' "$OUT" | awk '$2 == "EROFS" || $2 == "EACCES" || $2 == "EPERM" || $2 == "EBUSY"' | wc -l)
	is "$(jget "$R/$mode.json" 'd["refused_writes_total"]')" "$((calls - 1))" \
		"$M refused_writes_total counts calls (a rename naming two refused paths is one)"
	unlike "$recorded" '(/tmp|/var/tmp|/home/[a-z-]+/ok|/dev/(null|shm|ptmx|pts)|sub/ok)' "$M writes the run may make are not recorded"
	# the end line: first five outside paths in order, where to write, the protected ones
	rid=$(jget "$R/$mode.json" 'd["id"]')
	line_like "$ERR" "^warren: $rid refused $((calls - 1)) writes outside the run: /usr/local/w1, /usr/w2, /etc/nothere-w, /etc/hostname, /etc/w3, … \(all in $STATE/runs/$rid/result.json\) — write scratch files under \\\$TMPDIR \(/tmp in the cell; a tmpfs of the run's own\) or in the worktree $WORK; $WORK/.git/hooks/pre-commit, $WORK/.git/config are read-only \(the host runs them after the run\)$" \
		"$M the end line names the refused paths, where to write instead, and the protected ones"
	is "$(printf '%s\n' "$ERR" | grep -c '^warren:')" 1 "$M one warren line on stderr"
	nothing_left "$STATE/runs/$rid" "$M nothing left after a run with refused writes"
	wr show "$rid"
	like "$OUT" "refused writes +$((calls - 1))"$'\n'" +/usr/local/w1 \\(3\\)"$'\n'" +/usr/w2 \\(1\\)" "$M warren show lists the refused writes with their counts"

	# ---- a name removed right in the worktree's own mount that is a mount point (a protected
	# file, read-only): EBUSY, recorded; a directory made and removed beside it: nothing
	: >"$WORK/keep.txt"
	[ "$mode" = user ] && chown "$TEST_USER_UID:$TEST_USER_GID" "$WORK/keep.txt"
	wrun --protect keep.txt --result "$R/$mode.busy.json" -- python3 "$PROBE" unlink:keep.txt mkdir:kd rmdir:kd
	is "$OUT" "keep.txt EBUSY"$'\n'"kd ok"$'\n'"kd ok" "$M unlink of a protected file in the cwd: EBUSY" || diag "$ERR"
	is "$(recorded_set "$R/$mode.busy.json")" "$WORK/keep.txt 1" "$M it is recorded, the directory made and removed beside it is not"
	rm -f "$WORK/keep.txt"

	# ---- no refusal: no line, an empty list
	wrun --result "$R/$mode.ok.json" -- sh -c 'echo a > /tmp/a; mkdir -p /usr/lib "$HOME/.cache/x"; echo b > ./sub/b; cat /etc/passwd >/dev/null'
	is "$RC:$ERR" "0:" "$M a run that writes only where it may: exit 0, nothing on stderr"
	is "$(jget "$R/$mode.ok.json" '[d["refused_writes"], d["refused_writes_total"], d["watched_write_calls"] > 0, d.get("refused_writes_method")]')" \
		"[[], 0, true, \"watch\"]" "$M result.json: refused_writes [] and a total of 0; the watch looked at the writes, and says so"

	# ---- futimens (utimensat on an open file, no path: tar's one per file) is not handed to
	# the supervisor, as fchmod and fchown are not; a path's utimensat is
	wrun --result "$R/$mode.fut.json" -- python3 -c '
import os
fd = os.open("/tmp/ft", os.O_WRONLY | os.O_CREAT)
for i in range(300):
    os.utime(fd)
os.utime("/tmp/ft")
print("ok")'
	is "$RC:$OUT:$(jget "$R/$mode.fut.json" 'd["watched_write_calls"] < 10')" "0:ok:true" \
		"$M 300 futimens calls: none handed to the watch" || diag "$(jget "$R/$mode.fut.json" 'd["watched_write_calls"]')"

	# ---- thousands of calls: every one counted, none lost, none failed by the watch
	wrun --result "$R/$mode.many.json" -- sh -c 'i=0; while [ $i -lt 3000 ]; do { true > /etc/same; } 2>/dev/null; true > /tmp/f$((i % 7)); i=$((i + 1)); done; echo done'
	is "$RC:$OUT" "0:done" "$M 3000 refused and 3000 allowed writes in a loop: none failed for the watch"
	is "$(jget "$R/$mode.many.json" '[d["refused_writes"], d["refused_writes_total"]]')" \
		"[[{\"path\": \"/etc/same\", \"count\": 3000}], 3000]" "$M each of the 3000 refused writes counted once"

	# ---- more than 100 distinct paths: the first 100 listed, all counted
	wrun --result "$R/$mode.cap.json" -- sh -c 'for i in $(seq 1 130); do true > /etc/n$i; done 2>/dev/null; true'
	is "$(jget "$R/$mode.cap.json" '[len(d["refused_writes"]), d["refused_writes_total"], d["refused_writes"][99]["path"]]')" \
		"[100, 130, \"/etc/n100\"]" "$M 130 refused paths: the first 100 listed, 130 counted"
	line_like "$ERR" "refused 130 writes outside the run: /etc/n1, /etc/n2, /etc/n3, /etc/n4, /etc/n5, … \(all in " \
		"$M the end line shows five and points at the record"

	# ---- --quiet: recorded, not said
	wrun --quiet --result "$R/$mode.q.json" -- sh -c '{ echo x > /etc/q; } 2>/dev/null; true'
	is "$RC:$ERR:$(jget "$R/$mode.q.json" 'd["refused_writes_total"]')" "0::1" "$M --quiet: no line, still in result.json"

	# ---- a path too long for the watch to look up (the caller's working directory, 3019
	# bytes, and its relative path, 1215, past PATH_MAX together; the kernel takes it): not
	# judged, counted as a call not read and said so, never cut short and judged as another
	wrun --result "$R/$mode.long.json" -- python3 -c '
import errno, os
os.chdir("/tmp")
for i in range(15):
    os.mkdir("d" * 200); os.chdir("d" * 200)
r = []
for name in ("tmp/long-ok", "etc/long-refused"):
    try:
        open("../" * 400 + name, "w").close(); r.append("ok")
    except OSError as e:
        r.append(errno.errorcode[e.errno])
print(*r)'
	is "$RC:$OUT:$(jget "$R/$mode.long.json" '[d["refused_writes"], d.get("watched_write_calls_unread")]')" "0:ok EROFS:[[], 2]" \
		"$M two writes by a path too long to look up: counted as not read, not judged"
	line_like "$ERR" "^warren: note: 2 write calls of run_[0-9A-Z]{26} could not be read .*a path longer than PATH_MAX" \
		"$M the note says two calls were not read"

	# ---- a socket file of the host (outside the worktree) and the job's own sockets
	HS=$TEST_SCRATCH/host-sockets-$mode
	mkdir -p "$HS" && chmod 755 "$HS"
	"$PY" -c 'import os, socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen()' "$HS/host.sock"
	wrun --result "$R/$mode.sock.json" -- python3 -c '
import errno, socket, sys
def own(path):
    srv = socket.socket(socket.AF_UNIX); srv.bind(path); srv.listen()
    c = socket.socket(socket.AF_UNIX); c.connect(path); a, _ = srv.accept()
    c.sendall(b"x"); return "ok" if a.recv(1) == b"x" else "no data"
print("tmp", own("/tmp/own.sock"), "worktree", own("own.sock"))
try:
    socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print("host connected")
except OSError as e:
    print("host", errno.errorcode[e.errno])' "$HS/host.sock"
	is "$RC:$OUT" "0:tmp ok worktree ok"$'\n'"host ECONNREFUSED" \
		"$M the job's own sockets in /tmp and the worktree work; the host's refuses"
	is "$(jget "$R/$mode.sock.json" '[d["refused_connects"], d["refused_connects_total"], d["refused_writes"]]')" \
		"[[{\"path\": \"$HS/host.sock\", \"count\": 1}], 1, []]" \
		"$M result.json: refused_connects names the host's socket, not the job's own"
	line_like "$ERR" "^warren: run_[0-9A-Z]{26} refused 1 connect to the host's unix sockets: $HS/host.sock — " \
		"$M the end line names the host's socket"

	# ---- --no-refused-writes: the kernel still refuses, nothing is watched
	wrun --no-refused-writes --result "$R/$mode.off.json" -- sh -c 'echo x > /etc/off'
	like "$ERR" 'cannot create /etc/off: Read-only file system' "$M --no-refused-writes: the write is still refused by the kernel"
	no_line_like "$ERR" '^warren:' "$M --no-refused-writes: no warren line"
	is "$(jget "$R/$mode.off.json" '[d["refused_writes"], d["refused_writes_off"]]')" \
		"[null, \"not recorded (--no-refused-writes)\"]" "$M --no-refused-writes: result.json says so"
done

# ---------------------------------------------------------------- on an image (--rootfs)
IMG=$(image_busybox) || bail_out "cannot build the busybox image"
for mode in root user; do
	use_mode "$mode"
	M="[$mode, --rootfs, --user 0]"
	R=$TEST_SCRATCH/results-$mode
	# as the image's root: its own files are the run's to change (an overlay), the cell's
	# passwd, /proc/sys are not. Rootless, the image's files belong to the host's root,
	# outside the cell's ids: writing them fails with EACCES, which is the files' own
	# permissions, not the cell's rules, so it is not recorded.
	wrun --rootfs "$IMG" --user 0 --result "$R/$mode.img.json" -- sh -c '
		{ echo x > /etc/image-file && mkdir /opt-new && rm /etc/image-file && echo written; } 2>/dev/null || echo image-files-not-ours
		{ echo x >> /etc/passwd; } 2>/dev/null || echo passwd-refused
		{ echo 1 > /proc/sys/kernel/hostname; } 2>/dev/null || echo sysctl-refused'
	is "$RC" 0 "$M the job ran"
	first=$([ "$mode" = root ] && echo written || echo image-files-not-ours)
	is "$OUT" "$(printf '%s\npasswd-refused\nsysctl-refused' "$first")" "$M the overlay root is the run's (root: writable); passwd and /proc/sys are not"
	is "$(recorded_set "$R/$mode.img.json" | tr '\n' ' ')" "/etc/passwd 1 /proc/sys/kernel/hostname 1 " \
		"$M recorded: passwd and /proc/sys; not the image's own files"
	line_like "$ERR" '^warren: run_[0-9A-Z]{26} refused 2 writes outside the run: /etc/passwd, /proc/sys/kernel/hostname — ' \
		"$M the end line"
	is "$(printf '%s\n' "$ERR" | grep -c '^warren:')" 1 "$M one warren line on stderr"
done

# ---------------------------------------------------------------- a job's steps
use_mode root
mkdir -p "$TEST_SCRATCH/jobdir"	# the job file's directory is its worktree; the state is outside it
cat >"$TEST_SCRATCH/jobdir/job.yaml" <<EOF
name: refusals
steps:
  - name: build
    run: "{ echo x > /usr/local/from-a-step; } 2>/dev/null || echo ok > /tmp/fine"
  - name: test
    run: mkdir /usr/from-step-two 2>/dev/null || true
EOF
pushd "$WORK" >/dev/null || bail_out "cannot enter $WORK"
bounded "$WARREN" job run "$TEST_SCRATCH/jobdir/job.yaml" --state "$STATE"
popd >/dev/null || true
is "$RC" 0 "[job] the job passed"
jrid=$(printf '%s\n' "$ERR" | grep -o 'run_[0-9A-Z]\{26\}' | head -1)
[ -n "$jrid" ] || jrid=$(ls -t "$STATE/runs" | head -1)
is "$(recorded_set "$STATE/runs/$jrid/result.json" | tr '\n' ' ')" "/usr/from-step-two 1 /usr/local/from-a-step 1 " \
	"[job] refused writes of every step are in the job's record"
line_like "$ERR" "^warren: $jrid refused 2 writes outside the run: /usr/local/from-a-step, /usr/from-step-two — " "[job] and in its end line"
is "$(jget "$STATE/runs/$jrid/spec.json" 'd["policy"]["refused_writes"]')" "true" "[job] spec.json: refused writes are watched"
