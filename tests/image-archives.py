#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# image-archives.py OUTDIR OUTSIDE - the archives tests/integration/image.t imports: hostile
# tarballs (each tries one way out of the image's tree, or to smuggle in a device node, a
# setuid bit, a newline or a huge size) and an OCI image layout of two layers with whiteouts
# and an opaque directory. OUTSIDE is a directory outside any image that a hostile archive
# tries to write into (through a symlink, a hard link, "..", an absolute name, a whiteout).
import hashlib, io, json, os, sys, tarfile

out, outside = sys.argv[1], sys.argv[2]

def member(tf, name, kind=tarfile.REGTYPE, data=b"", mode=0o644, link="", dev=(0, 0)):
    ti = tarfile.TarInfo(name)
    ti.type, ti.mode, ti.linkname, ti.mtime = kind, mode, link, 1700000000
    ti.devmajor, ti.devminor = dev
    ti.size = len(data) if kind == tarfile.REGTYPE else 0
    tf.addfile(ti, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

def tar(name, entries, fmt=tarfile.PAX_FORMAT):
    with tarfile.open(os.path.join(out, name), "w", format=fmt) as tf:
        for e in entries:
            member(tf, *e[:1], **e[1])

D, S, H = tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE
hostile = {
    "absolute.tar": [("bin", dict(kind=D, mode=0o755)), (outside + "/abs", dict(data=b"pwned"))],
    "dotdot.tar": [("bin", dict(kind=D, mode=0o755)), ("bin/../../../../../../.." + outside + "/dotdot", dict(data=b"pwned"))],
    "symlink-out.tar": [("evil", dict(kind=S, link=outside)), ("evil/through-link", dict(data=b"pwned"))],
    "symlink-root.tar": [("up", dict(kind=S, link="/")), ("up" + outside + "/through-root", dict(data=b"pwned"))],
    "symlink-rel.tar": [("a", dict(kind=D, mode=0o755)), ("a/up", dict(kind=S, link="../../../../../../../..")),
                        ("a/up" + outside + "/through-rel", dict(data=b"pwned"))],
    "hardlink-out.tar": [("f", dict(data=b"x")), ("hl", dict(kind=H, link="../../../../../../.." + outside + "/victim"))],
    "hardlink-abs.tar": [("f", dict(data=b"x")), ("hl", dict(kind=H, link=outside + "/victim"))],
    "hardlink-via-symlink.tar": [("evil", dict(kind=S, link=outside)), ("hl", dict(kind=H, link="evil/victim"))],
    "newline.tar": [("bin", dict(kind=D, mode=0o755)), ("bin/bad\nname", dict(data=b"x"))],
    "whiteout-dotdot.tar": [("bin", dict(kind=D, mode=0o755)), ("bin/.wh...", dict(data=b""))],
    "whiteout-via-symlink.tar": [("evil", dict(kind=S, link=outside)), ("evil/.wh.victim", dict(data=b""))],
    "devices.tar": [("dev", dict(kind=D, mode=0o755)), ("dev/sda", dict(kind=tarfile.BLKTYPE, mode=0o666, dev=(8, 0))),
                    ("dev/mem", dict(kind=tarfile.CHRTYPE, mode=0o666, dev=(1, 1))), ("ok", dict(data=b"fine"))],
    "setuid.tar": [("bin", dict(kind=D, mode=0o755)), ("bin/su", dict(data=b"#!/bin/sh\n", mode=0o6755)),
                   ("tmp", dict(kind=D, mode=0o1777)), ("sgid-dir", dict(kind=D, mode=0o2775))],
}
for name, entries in hostile.items():
    tar(name, entries)

# a declared size of 100 GiB and no data: the limit refuses it before reading
with open(os.path.join(out, "huge-size.tar"), "wb") as f:
    ti = tarfile.TarInfo("huge")
    ti.size = 100 << 30
    f.write(ti.tobuf(format=tarfile.PAX_FORMAT))
    f.write(b"\0" * 1024)

# an OCI image layout of two layers: the second hides etc/gone (.wh.), empties opt/ (opaque)
# but keeps its own opt/new, and replaces a file with a directory
def layer(entries):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for e in entries:
            member(tf, *e[:1], **e[1])
    return b.getvalue()

def blob(root, data):
    d = hashlib.sha256(data).hexdigest()
    with open(os.path.join(root, "blobs", "sha256", d), "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + d, "size": len(data)}

def oci(root, layers):
    os.makedirs(os.path.join(root, "blobs", "sha256"))
    with open(os.path.join(root, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    cfg = blob(root, json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}).encode())
    cfg["mediaType"] = "application/vnd.oci.image.config.v1+json"
    ls = []
    for l in layers:
        d = blob(root, l)
        d["mediaType"] = "application/vnd.oci.image.layer.v1.tar"
        ls.append(d)
    man = blob(root, json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                                 "config": cfg, "layers": ls}).encode())
    man["mediaType"] = "application/vnd.oci.image.manifest.v1+json"
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [man]}, f)
    return man["digest"]

l1 = layer([("etc", dict(kind=D, mode=0o755)), ("etc/gone", dict(data=b"lower")), ("etc/kept", dict(data=b"kept")),
            ("opt", dict(kind=D, mode=0o755)), ("opt/old1", dict(data=b"1")), ("opt/olddir", dict(kind=D, mode=0o755)),
            ("opt/olddir/deep", dict(data=b"2")), ("x", dict(data=b"file"))])
l2 = layer([("etc/.wh.gone", dict()), ("opt/new", dict(data=b"new")), ("opt/.wh..wh..opq", dict()),
            ("x", dict(kind=D, mode=0o700)), ("x/inside", dict(data=b"dir now"))])
print(oci(os.path.join(out, "layered-oci"), [l1, l2]))
# the same with the second layer altered after the manifest was written
oci(os.path.join(out, "tampered-oci"), [l1, l2])
for f in os.listdir(os.path.join(out, "tampered-oci", "blobs", "sha256")):
    p = os.path.join(out, "tampered-oci", "blobs", "sha256", f)
    if hashlib.sha256(open(p, "rb").read()).hexdigest() == hashlib.sha256(l2).hexdigest():
        with open(p, "r+b") as fh:
            fh.seek(-1, 2)
            fh.write(b"X")
