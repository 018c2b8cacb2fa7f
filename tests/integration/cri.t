#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cri.t - issue 36 (8): pods through containerd's CRI, the way a kubelet runs them, with runc as
# the control and warren-runc as a RuntimeClass's handler. containerd (Debian's) runs as a node
# of its own: pid 1 of network, mount and PID namespaces of its own (tests/cri/node.sh), with its
# own config.toml, root and state in the scratch, its gRPC socket in a short directory of
# /dev/shm, the CNI's bridge and host-local plugins (containernetworking-plugins) giving pods
# 10.250.0.0/24 on a bridge crit0 that exists only in that namespace. Images are built here: a
# static pause (tests/cri/pause.c) and the busybox tree, as OCI layouts (tests/cri/mkimage.py)
# imported with `ctr -n k8s.io images import`. tests/cri/crictl.py, a small CRI client of our own
# (tests/cri/api.proto, compiled here with grpc_tools), runs the same pod through each handler
# and checks it (see its header): shared localhost, the pod's IP and hostname, the pod's cgroup,
# CPU and memory limits set and enforced, OOMKilled, ExecSync (a container that dropped ALL
# capabilities and an exec in it holding none; an exec's user named as the image names its
# uid), the CRI log, stats, stop and remove, nothing left. A check warren does not pass yet fails here, by name: none is skipped.
# The host keeps nothing: no process, mount, network namespace, cgroup or file. Root only.
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP cri.t runs containerd, a CNI and cgroups of its own: root only"; exit 0; }
. "$(dirname "$0")/../lib.sh"

for c in containerd ctr runc unshare nsenter ip cc; do
	command -v "$c" >/dev/null || skip_all "$c is not installed (make deps)"
done
for p in bridge host-local loopback; do
	[ -x "/usr/lib/cni/$p" ] || skip_all "/usr/lib/cni/$p is missing (containernetworking-plugins; make deps)"
done
"$PY" -c 'import grpc, grpc_tools.protoc' 2>/dev/null || skip_all "python3-grpcio or python3-grpc-tools is not installed (make deps)"

HANDLERS="runc warren"
N=$("$PY" "$REPO/tests/cri/crictl.py" --count) || bail_out "tests/cri/crictl.py --count failed"
plan $((2 + 2 * N + 2 + 1))

BB=$(image_busybox) || bail_out "cannot build the busybox image"
use_mode root
T=$TEST_SCRATCH/node
mkdir -p "$T/cni" "$T/logs" "$T/gen"
RUNC=$TEST_SCRATCH/warren-runc
ln -s "$WARREN" "$RUNC"
# the state directory warren-runc's runs go to (the shims pass containerd's environment on)
"$WARREN" run --state "$STATE" --work none -- true >/dev/null || bail_out "warren cannot make its state at $STATE"

# ---- what the host has before, and what this script must take away after

# the gRPC socket: a unix socket's path is short (108 bytes), the scratch's may not be
SOCKDIR=$(mktemp -d /dev/shm/wcri.XXXXXX) || bail_out "cannot make a directory in /dev/shm"
_cleanup_files+=("$SOCKDIR")
# containerd's CNI keeps its cache in /var/lib/cni (not configurable in 1.6): the node mounts a
# tmpfs there, on a mount point made here if the host has none
MADE_CNI_DIR=
CNI_DIR_BEFORE=0
[ -d /var/lib/cni ] && CNI_DIR_BEFORE=1
[ -d /var/lib/cni ] || { mkdir /var/lib/cni && MADE_CNI_DIR=1; }
POD_UIDS=()
for h in $HANDLERS; do POD_UIDS+=("$(cat /proc/sys/kernel/random/uuid)"); done
pod_cgroup() { echo "/kubepods/burstable/pod$1"; }
# cgroup_roots: every mounted hierarchy (v1 controllers, v1 named, v2)
cgroup_roots() { awk '$9 == "cgroup" || $9 == "cgroup2" { print $5 }' /proc/self/mountinfo; }
# host_view: what of a node could show on the host (its bridge, the CNI's veths, containerd's
# pod network namespaces, the CNI's cache and leases): none of it may appear, all of it being
# the node's own
host_view() {
	ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | grep -E '^(crit0|veth)' | sort
	find /run/netns -maxdepth 1 -name 'cni-*' 2>/dev/null | sort
	find /var/lib/cni -mindepth 1 -maxdepth 3 2>/dev/null | sort
}
HOST_BEFORE=$(host_view)

# kubelet's part: the pod's cgroup made before the pod (cpuset's cpus and mems copied down, as
# the kernel leaves them empty on v1), removed after its containers' groups are gone
make_pod_cgroup() {
	local g=$1 r d
	for r in $(cgroup_roots); do
		d=$r
		for part in kubepods burstable "$(basename "$g")"; do
			d=$d/$part
			mkdir -p "$d" || return 1
			if [ -f "$d/cpuset.cpus" ] && [ -z "$(cat "$d/cpuset.cpus")" ]; then
				cat "$(dirname "$d")/cpuset.cpus" >"$d/cpuset.cpus"
				cat "$(dirname "$d")/cpuset.mems" >"$d/cpuset.mems"
			fi
		done
		if [ -f "$r/cgroup.subtree_control" ] && [ "$r" = /sys/fs/cgroup ]; then
			for d in "$r/kubepods" "$r/kubepods/burstable" "$r$g"; do
				echo "+cpu +memory +pids" >"$(dirname "$d")/cgroup.subtree_control" 2>/dev/null
			done
		fi
	done
}
# remove_pod_cgroups: the pods' groups and, if nothing else is in them, /kubepods/burstable and
# /kubepods (a group left below a pod is killed and removed too: the check has said so already)
remove_pod_cgroups() {
	local r u d p pid
	for r in $(cgroup_roots); do
		for u in "${POD_UIDS[@]}"; do
			d=$r$(pod_cgroup "$u")
			[ -d "$d" ] || continue
			while read -r p; do
				for pid in $(cat "$p/cgroup.procs" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
				rmdir "$p" 2>/dev/null
			done < <(find "$d" -mindepth 1 -type d | sort -r)
			rmdir "$d" 2>/dev/null
		done
		rmdir "$r/kubepods/burstable" "$r/kubepods" 2>/dev/null
	done
	return 0
}
NODE_UNSHARE=
stop_node() {
	[ -n "$NODE_UNSHARE" ] || return 0
	local node
	node=$(pgrep -P "$NODE_UNSHARE" | head -1)
	[ -n "$node" ] && kill -TERM "$node" 2>/dev/null
	wait_bg "$NODE_UNSHARE" 20 >/dev/null
	NODE_UNSHARE=
}
_cri_cleanup() {
	stop_node
	remove_pod_cgroups
	[ -n "$MADE_CNI_DIR" ] && rmdir /var/lib/cni 2>/dev/null
	return 0
}
trap '_cri_cleanup; _lib_cleanup' EXIT

# ---- the node: its configuration, containerd, the images

cat >"$T/cni/10-crit.conflist" <<'EOF'
{"cniVersion": "1.0.0", "name": "crit", "plugins": [
  {"type": "bridge", "bridge": "crit0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.250.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
EOF
# restrict_oom_score_adj: a pod's sandbox asks for oom_score_adj -998, which takes
# CAP_SYS_RESOURCE; containerd then keeps it at its own (hosts whose root lacks that capability)
cat >"$T/config.toml" <<EOF
version = 2
root = "$T/root"
state = "$T/state"
[grpc]
  address = "$SOCKDIR/c.sock"
[ttrpc]
  address = "$SOCKDIR/c.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "docker.io/warren/pause:cri"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.warren]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.warren.options]
        BinaryName = "$RUNC"
        Root = "/run/warren-oci"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$T/cni"
EOF
CTR=(ctr -a "$SOCKDIR/c.sock" -n k8s.io)
start_bg env WARREN_STATE="$STATE" unshare --net --mount --pid --fork --mount-proc "$REPO/tests/cri/node.sh" "$T"
NODE_UNSHARE=$BG_PID
wait_for 20 "${CTR[@]}" version >/dev/null 2>&1
NODE=$(pgrep -P "$NODE_UNSHARE" | head -1)
CTD=${NODE:+$(pgrep -P "$NODE" -x containerd | head -1)}
st=1
if [ -n "$CTD" ] && "${CTR[@]}" version >/dev/null 2>&1; then
	st=0
	for ns in net mnt pid; do
		[ "$(readlink "/proc/$CTD/ns/$ns")" != "$(readlink "/proc/self/ns/$ns")" ] || st=1
	done
fi
ok "$st" "containerd runs as a node in network, mount and PID namespaces of its own and answers" ||
	bail_out "containerd did not start: $(tail -5 "$T/containerd.log" 2>/dev/null; cat "$BG_ERR")"

TMPDIR=$T cc -static -O2 -o "$T/pause" "$REPO/tests/cri/pause.c" &&
	"$PY" "$REPO/tests/cri/mkimage.py" "$T/pause.tar" docker.io/warren/pause:cri '["/pause"]' "$T/pause=/pause" &&
	"$PY" "$REPO/tests/cri/mkimage.py" "$T/busybox.tar" docker.io/warren/busybox:cri '[]' "$BB" ||
	bail_out "cannot build the images (cc -static, tests/cri/mkimage.py)"
bounded "${CTR[@]}" images import "$T/pause.tar"
r1=$RC
bounded "${CTR[@]}" images import "$T/busybox.tar"
bounded "${CTR[@]}" images ls -q
like "$r1:$RC:$OUT" '^0:0:.*docker.io/warren/busybox:cri.*' "ctr -n k8s.io images import: the pause and busybox images" || diag "$ERR"

"$PY" -m grpc_tools.protoc -I "$REPO/tests/cri" --python_out="$T/gen" --grpc_python_out="$T/gen" \
	"$REPO/tests/cri/api.proto" || bail_out "python3 -m grpc_tools.protoc failed on tests/cri/api.proto"

# ---- the pod, through each handler

# pod_checks HANDLER UID: crictl.py's N lines become N tests (a run that stopped early, N all
# the same: each check it did not report fails)
pod_checks() {
	local h=$1 uid=$2 line n=0 t0 out=$TEST_SCRATCH/crictl-$1.out err=$TEST_SCRATCH/crictl-$1.err
	make_pod_cgroup "$(pod_cgroup "$uid")" || diag "cannot make the pod's cgroup $(pod_cgroup "$uid")"
	t0=$(date +%s)
	CRI_GEN=$T/gen timeout -k 5 300 "$PY" "$REPO/tests/cri/crictl.py" --socket "$SOCKDIR/c.sock" --handler "$h" \
		--image docker.io/warren/busybox:cri --log-dir "$T/logs/$h" --cgroup-parent "$(pod_cgroup "$uid")" \
		--pod-uid "$uid" --pod-cidr 10.250.0.0/24 --ctd-root "$T/root" --ctd-state "$T/state" \
		--node-pid "$NODE" >"$out" 2>"$err"
	local rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) n=$((n + 1)); ok 0 "${line#ok - }" ;;
		"not ok - "*) n=$((n + 1)); ok 1 "${line#not ok - }" ;;
		"# "*) printf '%s\n' "$line" ;;
		esac
	done <"$out"
	for ((; n < N; n++)); do
		ok 1 "$h: crictl.py check $((n + 1)) of $N did not report (exit $rc)"
		diag "$(tail -20 "$err")"
	done
	diag "$h: the pod's checks took $(($(date +%s) - t0)) s"
}

i=0
for h in $HANDLERS; do
	pod_checks "$h" "${POD_UIDS[$i]}"
	i=$((i + 1))
done

# warren-runc really ran them: a record in its state for the sandbox and each container, and
# nothing of the cells left (their scratch, mounts, processes, groups)
n=$(rundir_count)
[ "$n" -ge 5 ]; ok $? "warren: the pod's sandbox and containers ran as warren cells ($((n - 1)) records in its state)"
x=$(state_clean); ok $? "warren: nothing of its cells is left" || diag "$x"

# ---- the end: containerd stops; the host is as it was

stop_node
remove_pod_cgroups
[ -n "$MADE_CNI_DIR" ] && rmdir /var/lib/cni && MADE_CNI_DIR=
left=()
x=$(procs_matching "$T"); [ -z "$x" ] || left+=("processes: $(_pslist $x)")
x=$(mounts_under "$T"); [ -z "$x" ] || left+=("mounts: $x")
x=$(for r in $(cgroup_roots); do for u in "${POD_UIDS[@]}"; do [ -e "$r$(pod_cgroup "$u")" ] && echo "$r$(pod_cgroup "$u")"; done; done)
[ -z "$x" ] || left+=("cgroups: $x")
x=$(host_view); [ "$x" = "$HOST_BEFORE" ] || left+=("links, netns, files: $(diff <(echo "$HOST_BEFORE") <(echo "$x"))")
[ "$CNI_DIR_BEFORE" = 0 ] && [ -e /var/lib/cni ] && left+=("/var/lib/cni: $(ls -A /var/lib/cni)")
[ ${#left[@]} = 0 ]; ok $? "containerd stopped; the host has nothing left of the node (processes, mounts, network namespaces, links, cgroups, files)" ||
	diag "${left[@]}"
