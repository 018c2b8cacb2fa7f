#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# mkimage.py - an OCI image layout, as one tar, of one uncompressed layer, for
# `ctr -n k8s.io images import` in tests/integration/cri.t (no registry, no network):
#
#   mkimage.py OUT.tar NAME ENTRYPOINT_JSON SOURCE...
#
# NAME is the image's full reference (docker.io/warren/pause:cri), set as containerd's
# io.containerd.image.name and the OCI ref.name annotations of the manifest. Each SOURCE is a
# directory (its tree is the layer's root) or FILE=/PATH/IN/IMAGE (one file, mode kept, its
# parent directories made). ENTRYPOINT_JSON is the config's Entrypoint ([] for none).
import hashlib, io, json, os, platform, sys, tarfile

out, name, entrypoint, sources = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4:]
ARCH = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())


def layer_tar():
    b = io.BytesIO()
    dirs_made = set()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for src in sources:
            if os.path.isdir(src):
                for root, dirs, files in os.walk(src):
                    dirs.sort()
                    for n in sorted(dirs) + sorted(files):
                        p = os.path.join(root, n)
                        tf.add(p, arcname=os.path.relpath(p, src), recursive=False)
                continue
            host, _, dest = src.partition("=")
            parts = dest.strip("/").split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in dirs_made:
                    ti = tarfile.TarInfo(d)
                    ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, 1700000000
                    tf.addfile(ti)
                    dirs_made.add(d)
            tf.add(host, arcname="/".join(parts), recursive=False)
    return b.getvalue()


blobs = {}


def blob(data, media):
    d = hashlib.sha256(data).hexdigest()
    blobs[d] = data
    return {"mediaType": media, "digest": "sha256:" + d, "size": len(data)}


layer = layer_tar()
config = {"architecture": ARCH, "os": "linux",
          "config": {"Env": ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"], "Entrypoint": entrypoint or None},
          "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]}}
cfg = blob(json.dumps(config).encode(), "application/vnd.oci.image.config.v1+json")
manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": cfg,
            "layers": [blob(layer, "application/vnd.oci.image.layer.v1.tar")]}
man = blob(json.dumps(manifest).encode(), "application/vnd.oci.image.manifest.v1+json")
man["annotations"] = {"io.containerd.image.name": name, "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1]}
files = [("oci-layout", json.dumps({"imageLayoutVersion": "1.0.0"}).encode()),
         ("index.json", json.dumps({"schemaVersion": 2, "manifests": [man]}).encode())]
files += [("blobs/sha256/" + d, data) for d, data in sorted(blobs.items())]
with tarfile.open(out, "w") as tf:
    for d in ("blobs", "blobs/sha256"):
        ti = tarfile.TarInfo(d)
        ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, 1700000000
        tf.addfile(ti)
    for n, data in files:
        ti = tarfile.TarInfo(n)
        ti.size, ti.mode, ti.mtime = len(data), 0o644, 1700000000
        tf.addfile(ti, io.BytesIO(data))
