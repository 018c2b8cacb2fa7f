#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# node.sh DIR - the test's Kubernetes node for tests/integration/cri.t: run as pid 1 of network,
# mount and PID namespaces of its own (unshare -n -m -p --fork --mount-proc), it gives the node
# a /run and a /var/lib/cni of its own (tmpfs: containerd's pod network namespaces, its shims'
# sockets and fifos, runc's state, the CNI's cache and leases), brings up lo and runs containerd
# with DIR/config.toml (its log DIR/containerd.log). When containerd ends, or on SIGTERM, it ends;
# the kernel then kills whatever is left in its PID namespace, and the namespaces go with it.
set -eu
dir=$1
mount --make-rprivate /
mount -t tmpfs -o mode=0755,size=64m cri-node-run /run
mount -t tmpfs -o mode=0755,size=16m cri-node-cni /var/lib/cni
ip link set lo up
containerd --config "$dir/config.toml" >"$dir/containerd.log" 2>&1 &
ctd=$!
trap 'kill -TERM $ctd 2>/dev/null' TERM INT
# pid 1 reaps what is left to it (shims re-parented here when their starter exits)
while kill -0 "$ctd" 2>/dev/null; do
	wait -n 2>/dev/null || sleep 0.2
done
