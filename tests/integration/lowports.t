#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lowports.t - ports below 1024 in a cell's own network namespace, as in runc's and
# containerd's containers (net.ipv4.ip_unprivileged_port_start 0 there, net/ports.c): the
# unprivileged run user binds :80 (python3's socket, busybox nc in an OCI bundle), with --net
# none (the default) and --net nat, as root and rootless, and through warren-runc (a bundle's
# linux.sysctl may set it, 1024 taking the low ports away); the host's own sysctl is never changed (read from the
# test's world namespace and from the real host's). In a world of namespaces of its own (lib.sh).
# (descriptor 7: the host's network namespace, kept open into the world to read its sysctl)
if [ -z "${WARREN_NET_WORLD:-}" ]; then
	exec 7</proc/self/ns/net
	exec env WARREN_NET_WORLD=1 unshare --net --mount --propagation private bash "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"

SYSCTL=/proc/sys/net/ipv4/ip_unprivileged_port_start
[ -e "$SYSCTL" ] || skip_all "the kernel has no $SYSCTL"
net_world_up
plan 9

host_sysctl() { nsenter --net=/proc/self/fd/7 cat "$SYSCTL"; }
host_before=$(host_sysctl)
world_before=$(cat "$SYSCTL")
BB=$(image_busybox) || bail_out "cannot build the busybox image"
T=$(mktemp -d -p "$TEST_SCRATCH")
chmod 755 "$T"
RUNC=$T/warren-runc
ln -s "$WARREN" "$RUNC"
BIND80='import os, socket
s = socket.socket()
s.bind(("0.0.0.0", 80))
s.listen()
print("bound:80 uid=%d start=%s" % (os.getuid(), open("/proc/sys/net/ipv4/ip_unprivileged_port_start").read().strip()))'

# bundle DIR SYSCTL_VALUE: a busybox bundle whose job, the mode's run user, listens on :80 for a
# second (nc exits at once when the bind is refused); linux.sysctl's port start when given
bundle() {
	local d=$1
	mkdir_for_mode "$d"
	[ -e "$STATE/runs" ] || "${RUNNER[@]}" "$WARREN" run --state "$STATE" --work none -- true >/dev/null || return 1
	ln -s "$BB" "$d/rootfs"
	(cd "$d" && "${RUNNER[@]}" "$RUNC" spec) || return 1
	"$PY" - "$d/config.json" "$STATE" "${2:-}" "$JOB_UID" <<'PYEOF'
import json, sys
f, state, port_start, uid = sys.argv[1:5]
c = json.load(open(f))
c["process"]["args"] = ["sh", "-c", "timeout 1 nc -l -p 80 2>&1; echo nc=$?; id -u"]
c["process"]["user"] = {"uid": int(uid), "gid": int(uid)}
c["process"]["terminal"] = False
c["annotations"] = {"warren.state": state}
if port_start:
    c["linux"]["sysctl"] = {"net.ipv4.ip_unprivileged_port_start": port_start}
json.dump(c, open(f, "w"))
PYEOF
}

net_world_rootless
for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	D=$T/$mode
	mkdir_for_mode "$D"
	ROOT=$D/root
	mkdir_for_mode "$ROOT" 700
	wrun -- python3 -c "$BIND80"
	is "$RC:$OUT" "0:bound:80 uid=$JOB_UID start=0" "$M --net none: the run user binds :80 in the cell's own namespace"
	wrun --net nat -- python3 -c "$BIND80"
	is "$RC:$OUT" "0:bound:80 uid=$JOB_UID start=0" "$M --net nat: the run user binds :80"
	# nc listening is stopped by timeout (143); a refused bind ends it at once (1)
	bundle "$D/b80" 0
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b80" c80
	like "$RC:$(tr '\n' ' ' <<<"$OUT")" "^0:(Terminated )?nc=143 $JOB_UID \$" "$M an OCI bundle (uid $JOB_UID, linux.sysctl ip_unprivileged_port_start 0): nc listens on :80"
done
use_mode root
bundle "$T/root/b1024" 1024
bounded "$RUNC" --root "$T/root/root" run --bundle "$T/root/b1024" c1024
# nc refused the bind at once (1): the bundle's 1024 was set in the cell's own namespace
like "$RC:$(tr "\n" " " <<<"$OUT")" "^0:nc: bind: Permission denied nc=1 $JOB_UID \$" \
	"a bundle's linux.sysctl ip_unprivileged_port_start 1024 is the cell's: the run user cannot bind :80" || diag "$ERR"
is "$(cat "$SYSCTL")" "$world_before" "the sysctl of the namespace warren runs in is unchanged ($world_before)"
is "$(host_sysctl)" "$host_before" "the real host's sysctl is unchanged ($host_before)"
