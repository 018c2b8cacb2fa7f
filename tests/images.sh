#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# images.sh - root file system images for the integration tests, built once and cached.
#
# Source it (lib.sh does) or run it: `tests/images.sh busybox|debian|all`.
# Images live in $REPO/build/cache/images/<name> (never in the host's /tmp) and are kept
# between runs. Each is built into <name>.partial and renamed when complete, so an
# interrupted build is never used. Building needs root (the trees are owned by root).
#
#   image_busybox        -> prints the path of the busybox image (seconds to build)
#   image_debian         -> prints the path of a debootstrap --variant=minbase bookworm
#                           image (a minute or two the first time; needs the Debian mirror)
#   make_dirty_image DST -> copies the busybox image to DST and leaves a root-owned
#                           /tmp/opencode in it, as a careless image build would
#   image_manifest DIR   -> one line per entry: path, type, mode, uid, gid, size, sha256 or
#                           link target or device; two manifests are equal iff the trees are

IMAGES_REPO=${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
IMAGES_DIR=${IMAGES_DIR:-$IMAGES_REPO/build/cache/images}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DEBIAN_SUITE=${DEBIAN_SUITE:-bookworm}

_images_prepare() {
	mkdir -p "$IMAGES_DIR" || return 1
	# The unprivileged test user runs warren on these images: the path must be traversable.
	chmod 755 "$IMAGES_REPO/build" "$IMAGES_REPO/build/cache" "$IMAGES_DIR" 2>/dev/null
	return 0
}

# Unmount anything left mounted below DIR (debootstrap mounts proc and sys in its target;
# an interrupted build can leave them) and remove DIR without crossing into other mounts.
_images_unmount_below() {
	local dir=$1 m
	while read -r m; do
		umount -l "$m" 2>/dev/null
	done < <(awk -v d="$dir" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r)
}
_images_remove_tree() {
	local dir=$1
	[ -e "$dir" ] || return 0
	_images_unmount_below "$dir"
	rm -rf --one-file-system -- "$dir"
}

# The busybox image: bin/busybox (static) and a link per applet, /etc/passwd and /etc/group
# with root, /tmp and /var/tmp 01777 and empty, empty /proc /dev /sys /home /root.
_images_build_busybox() {
	local dst=$1 bb applet
	bb=$(command -v busybox) || { echo "images.sh: busybox not found (apt-get install busybox-static)" >&2; return 1; }
	# busybox-static is what we want: the image has no libc.
	if ldd "$bb" >/dev/null 2>&1; then
		echo "images.sh: $bb is dynamically linked; install busybox-static" >&2
		return 1
	fi
	_images_remove_tree "$dst"
	mkdir -p "$dst"/{bin,sbin,usr/bin,usr/sbin,etc,proc,dev,sys,home,root,run,var/tmp,tmp} || return 1
	cp "$bb" "$dst/bin/busybox" || return 1
	chmod 755 "$dst/bin/busybox"
	for applet in $("$dst/bin/busybox" --list); do
		[ "$applet" = busybox ] && continue
		ln -s busybox "$dst/bin/$applet"
	done
	ln -s ../../bin/env "$dst/usr/bin/env"
	ln -s ../../bin/sh "$dst/usr/bin/sh"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$dst/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$dst/etc/group"
	echo warren-test-busybox >"$dst/etc/hostname"
	chmod 1777 "$dst/tmp" "$dst/var/tmp"
	chmod 700 "$dst/root"
	chown -R 0:0 "$dst"
}

_images_build_debian() {
	local dst=$1
	command -v debootstrap >/dev/null || { echo "images.sh: debootstrap not found (apt-get install debootstrap)" >&2; return 1; }
	_images_remove_tree "$dst"
	echo "images.sh: debootstrap --variant=minbase $DEBIAN_SUITE (a minute or two, once)" >&2
	# debootstrap writes its log to $dst/debootstrap/debootstrap.log; keep our own copy too.
	if ! debootstrap --variant=minbase "$DEBIAN_SUITE" "$dst" "$DEBIAN_MIRROR" \
		>"$IMAGES_DIR/debian.build.log" 2>&1; then
		echo "images.sh: debootstrap failed; see $IMAGES_DIR/debian.build.log" >&2
		_images_remove_tree "$dst"
		return 1
	fi
	# An image fit for cells: nothing in /tmp or /var/tmp, both 01777; no apt cache.
	find "$dst/tmp" "$dst/var/tmp" -mindepth 1 -delete 2>/dev/null
	chmod 1777 "$dst/tmp" "$dst/var/tmp"
	rm -rf "$dst/var/cache/apt/archives/"*.deb
}

# image NAME: print the path of image NAME, building it first if it is not cached.
# Concurrent callers are serialised with flock; an existing complete image is reused.
_images_get() {
	local name=$1 final partial
	_images_prepare || return 1
	final=$IMAGES_DIR/$name
	partial=$final.partial
	# Only a finished build is renamed to NAME: if NAME exists, it is complete.
	if [ ! -d "$final" ]; then
		(
			flock 9 || exit 1
			[ -d "$final" ] && exit 0
			_images_build_"$name" "$partial" || exit 1
			mv -T "$partial" "$final"
		) 9>"$IMAGES_DIR/.$name.lock" || return 1
	fi
	chmod 755 "$final"
	# a mount left inside a cached image (an interrupted debootstrap's proc or sys) would put
	# the host's kernel files in every cell of it, and hang a walk of the tree on /proc/kmsg
	_images_unmount_below "$final"
	printf '%s\n' "$final"
}

image_busybox() { _images_get busybox; }
image_debian() { _images_get debian; }

# make_dirty_image DST: a copy of the busybox image whose /tmp holds a root-owned
# directory `opencode`, as left behind by an image build that ran an agent as root.
make_dirty_image() {
	local dst=$1 src
	src=$(image_busybox) || return 1
	_images_remove_tree "$dst"
	cp -a "$src" "$dst" || return 1
	mkdir -m 755 "$dst/tmp/opencode" && chown 0:0 "$dst/tmp/opencode" && touch "$dst/tmp/opencode/state"
}

# image_manifest DIR: a stable listing of the tree (modes, owners, sizes, contents, link
# targets, device numbers, mtimes of regular files). Print it sorted, one line per entry.
image_manifest() {
	/usr/bin/python3 - "$1" <<'EOF'
import hashlib, os, stat, sys
top = sys.argv[1]
out = []
for root, dirs, files in os.walk(top, followlinks=False):
    for name in sorted(dirs + files):
        p = os.path.join(root, name)
        rel = os.path.relpath(p, top)
        st = os.lstat(p)
        m = st.st_mode
        line = [repr(rel), oct(stat.S_IMODE(m)), str(st.st_uid), str(st.st_gid)]
        if stat.S_ISREG(m):
            h = hashlib.sha256()
            with open(p, 'rb') as f:
                for chunk in iter(lambda: f.read(1 << 20), b''):
                    h.update(chunk)
            line += ['f', str(st.st_size), h.hexdigest(), str(st.st_mtime_ns), str(st.st_nlink)]
        elif stat.S_ISLNK(m):
            line += ['l', repr(os.readlink(p))]
        elif stat.S_ISDIR(m):
            line += ['d']
        elif stat.S_ISCHR(m) or stat.S_ISBLK(m):
            line += ['c' if stat.S_ISCHR(m) else 'b', str(os.major(st.st_rdev)), str(os.minor(st.st_rdev))]
        elif stat.S_ISFIFO(m):
            line += ['p']
        elif stat.S_ISSOCK(m):
            line += ['s']
        # xattrs too (overlayfs uses trusted.overlay.* on its layers)
        try:
            xs = sorted(os.listxattr(p, follow_symlinks=False))
        except OSError:
            xs = []
        if xs:
            line += ['x:' + ','.join(xs)]
        out.append(' '.join(line))
st = os.lstat(top)
out.append('. ' + oct(stat.S_IMODE(st.st_mode)) + ' ' + str(st.st_uid) + ' ' + str(st.st_gid))
for l in sorted(out):
    print(l)
EOF
}

# Run as a program: build the named images.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	[ "$(id -u)" = 0 ] || { echo "images.sh: building images needs root" >&2; exit 1; }
	[ $# -gt 0 ] || set -- busybox
	for what in "$@"; do
		case $what in
		busybox) image_busybox || exit 1 ;;
		debian) image_debian || exit 1 ;;
		all) image_busybox && image_debian || exit 1 ;;
		*) echo "usage: tests/images.sh [busybox|debian|all]..." >&2; exit 2 ;;
		esac
	done
fi
