#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# docker-archive.py ROOTFS OUT NAME - a `docker save` archive of one layer (the tree ROOTFS) named
# NAME, for `ctr images import` in oci.t: no registry, no network.
import hashlib, io, json, os, sys, tarfile

rootfs, out, name = sys.argv[1:4]
layer = io.BytesIO()
with tarfile.open(fileobj=layer, mode="w", format=tarfile.PAX_FORMAT) as tf:
    for entry in sorted(os.listdir(rootfs)):
        tf.add(os.path.join(rootfs, entry), arcname=entry)
layer = layer.getvalue()
diff = "sha256:" + hashlib.sha256(layer).hexdigest()
config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"Env": ["PATH=/bin:/sbin:/usr/bin"]},
                     "rootfs": {"type": "layers", "diff_ids": [diff]}}).encode()
cfgname = hashlib.sha256(config).hexdigest() + ".json"
manifest = json.dumps([{"Config": cfgname, "RepoTags": [name], "Layers": ["layer.tar"]}]).encode()
with tarfile.open(out, "w") as tf:
    for n, data in (("layer.tar", layer), (cfgname, config), ("manifest.json", manifest)):
        ti = tarfile.TarInfo(n)
        ti.size, ti.mode, ti.mtime = len(data), 0o644, 1700000000
        tf.addfile(ti, io.BytesIO(data))
