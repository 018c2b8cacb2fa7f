#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# oci-layout.py - an OCI image layout of one layer made of a directory tree, with a config of
# our choosing: `oci-layout.py TREE OUT CONFIG_JSON [TAG]` (CONFIG_JSON: the config blob's
# "config" object, e.g. {"Env": [...], "Cmd": [...]}; TREE a tar file: that is the layer, as
# it is, hostile or not). For the tests of `warren image pull`
# (pushed to a local registry with skopeo) and of what warren keeps of an image's config.
import hashlib, io, json, os, sys, tarfile

tree, out, config = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
tag = sys.argv[4] if len(sys.argv) > 4 else "latest"
os.makedirs(os.path.join(out, "blobs", "sha256"))

def blob(data, media):
    d = hashlib.sha256(data).hexdigest()
    with open(os.path.join(out, "blobs", "sha256", d), "wb") as f:
        f.write(data)
    return {"mediaType": media, "digest": "sha256:" + d, "size": len(data)}

b = io.BytesIO()
if os.path.isfile(tree):
    b.write(open(tree, "rb").read())
else:
    with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for root, dirs, files in os.walk(tree):
            dirs.sort()
            for n in sorted(dirs) + sorted(files):
                p = os.path.join(root, n)
                tf.add(p, arcname=os.path.relpath(p, tree), recursive=False)
layer = b.getvalue()
diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
cfg = blob(json.dumps({"architecture": "amd64", "os": "linux", "config": config,
                       "rootfs": {"type": "layers", "diff_ids": [diff_id]}}).encode(),
           "application/vnd.oci.image.config.v1+json")
man = blob(json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": cfg,
                       "layers": [blob(layer, "application/vnd.oci.image.layer.v1.tar")]}).encode(),
           "application/vnd.oci.image.manifest.v1+json")
man["annotations"] = {"org.opencontainers.image.ref.name": tag}
with open(os.path.join(out, "oci-layout"), "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
with open(os.path.join(out, "index.json"), "w") as f:
    json.dump({"schemaVersion": 2, "manifests": [man]}, f)
print(man["digest"])
