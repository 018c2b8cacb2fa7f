#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci-seccomp.t - seccomp profiles in JSON, read as runc reads them: conditions of one rule on
# the same argument are alternatives (each becomes a rule of its own), on different arguments
# all must hold. The default profiles of the OCI tooling (the shape `oci-runtime-tool generate`
# writes, with personality's three values in one rule: tests/seccomp/), podman
# (/usr/share/containers/seccomp.json, docker's format) and containerd (ctr run --seccomp) load
# and behave: through `warren run --seccomp FILE` (the cell's one filter, instead of warren's),
# a bundle's linux.seccomp through warren-runc (a second filter after warren's), podman
# --runtime and containerd's runc shim. A static probe in the cell makes the real calls: a call
# the profile forbids is refused with its errno, personality(0) is allowed, personality(0x1234)
# refused. A bad JSON profile is one line. As root and rootless; nothing left on the host.
. "$(dirname "$0")/../lib.sh"

command -v gcc >/dev/null || skip_all "gcc is needed to build the probe"
plan 34

BB=$(image_busybox) || bail_out "cannot build the busybox image"
T=$(mktemp -d -p "$TEST_SCRATCH")
chmod 755 "$T"
RUNC=$T/warren-runc
ln -s "$WARREN" "$RUNC"
GEN=$REPO/tests/seccomp/oci-runtime-tool-default.json
PODMAN_PROFILE=/usr/share/containers/seccomp.json

# ---- the probe: each argument a call, printed as NAME=ok or NAME=ERRNO (the errno's name)
cat >"$T/probe.c" <<'EOF'
#define _GNU_SOURCE
#include <errno.h>
#include <linux/netlink.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static long call(const char *a)
{
	if (!strncmp(a, "personality=", 12)) {
		long r = syscall(SYS_personality, strtoul(a + 12, NULL, 0));
		if (r >= 0)
			syscall(SYS_personality, 0UL);
		return r;
	}
	if (!strcmp(a, "vmsplice")) {
		int p[2];
		char b[1] = "x";
		struct iovec v = { b, 1 };
		return pipe(p) < 0 ? -1 : syscall(SYS_vmsplice, p[1], &v, 1, 0);
	}
	if (!strcmp(a, "pidfd_open")) return syscall(SYS_pidfd_open, getpid(), 0);
	if (!strcmp(a, "unshare0")) return syscall(SYS_unshare, 0);
	if (!strcmp(a, "audit_socket")) return socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
	if (!strcmp(a, "route_socket")) return socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (!strcmp(a, "getpid")) return getpid();
	errno = 0;
	return -2;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		long r = call(argv[i]);
		printf("%s=%s\n", argv[i], r == -2 ? "unknown" : r < 0 ? strerrorname_np(errno) : "ok");
	}
	return 0;
}
EOF
TMPDIR=$T gcc -O1 -static -o "$T/probe" "$T/probe.c" 2>"$T/probe.log" ||
	bail_out "cannot build the probe: $(cat "$T/probe.log")"
# a busybox root with the probe as /bin/probe (bundles, podman --rootfs, containerd's image)
R=$T/rootfs
cp -a "$BB" "$R"
install -m 755 "$T/probe" "$R/bin/probe"

# results: OUT's lines joined by spaces
results() { tr '\n' ' ' <<<"$OUT" | sed 's/ $//'; }

# ---- containerd's runc shim with warren-runc: ctr run --seccomp (containerd's default profile)
use_mode root
CTD_PROFILE=
if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then
	skip 4 "containerd or ctr is not installed"
else
	CD=$T/ctd
	mkdir -p "$CD"
	had_run_containerd=0
	[ -e /run/containerd ] && had_run_containerd=1
	NS=warren-ocisec-t$$
	cat >"$CD/config.toml" <<TOML
version = 2
root = "$CD/root"
state = "$CD/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CD/c.sock"
[ttrpc]
  address = "$CD/c.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
TOML
	WARREN_STATE=$STATE containerd --config "$CD/config.toml" >"$CD/containerd.log" 2>&1 &
	CTD_PID=$!
	X=(ctr -a "$CD/c.sock" -n "$NS")
	for _ in $(seq 100); do "${X[@]}" version >/dev/null 2>&1 && break; sleep 0.1; done
	"$PY" "$REPO/tests/docker-archive.py" "$R" "$CD/img.tar" docker.io/library/warren-ocisec:test
	bounded "${X[@]}" images import "$CD/img.tar"
	CR=(--runtime io.containerd.runc.v2 --runc-binary "$RUNC" --seccomp)
	bounded "${X[@]}" run --rm "${CR[@]}" docker.io/library/warren-ocisec:test t-sec \
		/bin/probe personality=0 personality=0x1234 unshare0 getpid
	is "$RC:$(results)" "0:personality=0=ok personality=0x1234=EPERM unshare0=EPERM getpid=ok" \
		"ctr run --seccomp: containerd's default profile loads; personality(0) allowed, personality(0x1234) and unshare(0) refused"
	run=$(ls -t "$STATE/runs" | head -1)
	is "$(jget "$STATE/runs/$run/result.json" 'd["name"]')" t-sec "ctr run --seccomp: the container ran in a cell of warren's"
	# containerd's profile as it wrote it into the bundle, for warren run --seccomp below
	bounded "${X[@]}" run -d "${CR[@]}" docker.io/library/warren-ocisec:test t-cap sleep 1000
	cfg=$CD/state/io.containerd.runtime.v2.task/$NS/t-cap/config.json
	"$PY" -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["linux"]["seccomp"], open(sys.argv[2], "w"))' \
		"$cfg" "$T/containerd-default.json" 2>/dev/null && CTD_PROFILE=$T/containerd-default.json
	chmod 644 "$T/containerd-default.json" 2>/dev/null
	ok "$([ -n "$CTD_PROFILE" ]; echo $?)" "containerd's default profile read from the bundle it made"
	bounded "${X[@]}" task kill -s SIGKILL t-cap
	for _ in $(seq 100); do "${X[@]}" task ls 2>/dev/null | grep -q 't-cap.*STOPPED' && break; sleep 0.1; done
	bounded "${X[@]}" task delete t-cap
	bounded "${X[@]}" containers rm t-cap
	"${X[@]}" images rm docker.io/library/warren-ocisec:test >/dev/null 2>&1
	kill "$CTD_PID"
	wait "$CTD_PID" 2>/dev/null
	[ -z "$(job_pids 1000)" ]; ok $? "containerd: no process of its containers left"
	rm -rf "/run/containerd/runc/$NS" "$CD"
	[ "$had_run_containerd" = 1 ] || rm -rf /run/containerd
fi

# ---- podman --runtime warren-runc: podman's default profile (its seccomp.json, converted)
if ! command -v podman >/dev/null; then
	skip 2 "podman is not installed"
else
	PD=$T/podman
	mkdir -p "$PD"
	PRUN=$(mktemp -d /run/warren-ocisec-t.XXXXXX)
	P=(podman --root "$PD/root" --runroot "$PRUN" --cgroup-manager cgroupfs --events-backend file
	   --runtime "$RUNC" --storage-driver vfs)
	had_run_oci=0
	[ -e /run/warren-oci ] && had_run_oci=1
	bounded "${P[@]}" run --rm --network none --annotation "warren.state=$STATE" --rootfs "$R" \
		/bin/probe personality=0 personality=0x1234 vmsplice getpid
	like "$RC:$(results)" '^0:personality=0=ok personality=0x1234=E[A-Z]+ vmsplice=EPERM getpid=ok$' \
		"podman run: its default profile loads; personality(0) allowed, personality(0x1234) and vmsplice refused"
	bounded "${P[@]}" system reset -f
	umount -R "$PD/root/overlay" 2>/dev/null
	is "$(mounts_under "$PD")$(mounts_under "$PRUN")" "" "podman: no mounts left under its storage"
	rm -rf "$PD" "$PRUN"
	[ "$had_run_oci" = 1 ] || rmdir /run/warren-oci 2>/dev/null
fi

# bundle DIR PROFILE_JSON ARGS...: a bundle of the probe's root running ARGS, with linux.seccomp
bundle() {
	local d=$1 prof=$2; shift 2
	mkdir_for_mode "$d"
	[ -e "$STATE/runs" ] || "${RUNNER[@]}" "$WARREN" run --state "$STATE" --work none -- true >/dev/null || return 1
	ln -s "$R" "$d/rootfs"
	(cd "$d" && "${RUNNER[@]}" "$RUNC" spec) || return 1
	"$PY" - "$d/config.json" "$prof" "$STATE" "$@" <<'PYEOF'
import json, sys
f, prof, state = sys.argv[1:4]
c = json.load(open(f))
c["process"]["args"] = sys.argv[4:]
c["process"]["terminal"] = False
c["annotations"] = {"warren.state": state}
c["linux"]["seccomp"] = json.loads(prof)
json.dump(c, open(f, "w"))
PYEOF
}

for mode in root user; do
	use_mode "$mode"
	M="[$mode]"
	D=$T/$mode
	mkdir_for_mode "$D"
	ROOT=$D/root
	mkdir_for_mode "$ROOT" 700
	install -m 755 "$T/probe" "$WORK/probe"

	# ---- warren run --seccomp FILE.json: the profile is the cell's filter, warren's is not loaded
	wrun --seccomp "$GEN" -- "$WORK/probe" personality=0 personality=8 personality=0xffffffff personality=0x1234 pidfd_open getpid
	is "$RC" 0 "$M --seccomp (oci-runtime-tool's default): the job ran"
	is "$(results)" "personality=0=ok personality=8=ok personality=0xffffffff=ok personality=0x1234=EPERM pidfd_open=EPERM getpid=ok" \
		"$M --seccomp (oci-runtime-tool's default): personality's three values in one rule are alternatives; 0x1234 and pidfd_open refused"
	if [ -r "$PODMAN_PROFILE" ]; then
		wrun --seccomp "$PODMAN_PROFILE" -- "$WORK/probe" personality=0 personality=0x1234 vmsplice audit_socket route_socket getpid
		is "$RC" 0 "$M --seccomp $PODMAN_PROFILE (docker's format): the job ran"
		is "$(results)" "personality=0=ok personality=0x1234=ENOSYS vmsplice=EPERM audit_socket=EINVAL route_socket=ok getpid=ok" \
			"$M --seccomp podman's profile: its errnos (default ENOSYS, vmsplice EPERM, the audit socket EINVAL without CAP_AUDIT_WRITE)"
	else
		skip 2 "no $PODMAN_PROFILE"
	fi
	if [ -n "$CTD_PROFILE" ]; then
		wrun --seccomp "$CTD_PROFILE" -- "$WORK/probe" personality=0 personality=0x1234 unshare0 getpid
		is "$RC:$(results)" "0:personality=0=ok personality=0x1234=EPERM unshare0=EPERM getpid=ok" \
			"$M --seccomp containerd's default profile: personality(0) allowed, personality(0x1234) and unshare(0) refused"
	else
		skip 1 "containerd's default profile was not captured"
	fi
	wr run --seccomp "$GEN" --seccomp-print
	is "$RC:$OUT" "0:$(cat "$GEN")" "$M --seccomp-print of a JSON profile prints it as it is"

	# ---- a bad JSON profile: one line, exit 125
	printf '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_BOGUS"}]}\n' >"$D/bad.json"
	printf '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [\n' >"$D/broken.json"
	chmod 644 "$D/bad.json" "$D/broken.json"
	wrun --seccomp "$D/bad.json" -- true
	like "$RC:$ERR" "^125:warren: --seccomp $D/bad.json: action 'SCMP_ACT_BOGUS' is not one of the spec's" "$M --seccomp with an unknown action: refused, exit 125"
	one_warren_line "$M ... in one line"
	wrun --seccomp "$D/broken.json" -- true
	like "$RC:$ERR" "^125:warren: --seccomp $D/broken.json: not valid JSON \(line [0-9]+" "$M --seccomp with broken JSON: refused in one line, exit 125"

	# ---- a bundle's linux.seccomp (stacked on warren's filter) through warren-runc
	bundle "$D/b-gen" "$(cat "$GEN")" /bin/probe personality=0 personality=8 personality=0x1234 pidfd_open getpid
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-gen" c-gen
	is "$RC:$ERR" "0:" "$M a bundle with oci-runtime-tool's default profile runs (personality's values in one rule)"
	is "$(results)" "personality=0=ok personality=8=ok personality=0x1234=EPERM pidfd_open=EPERM getpid=ok" \
		"$M ... personality(0) and (8) allowed, personality(0x1234) and pidfd_open refused"
	# conditions on different arguments: all must hold (the audit socket is refused, a route one not)
	bundle "$D/b-and" '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["socket"], "action": "SCMP_ACT_ERRNO", "errnoRet": 22,
		"args": [{"index": 0, "value": 16, "op": "SCMP_CMP_EQ"}, {"index": 2, "value": 9, "op": "SCMP_CMP_EQ"}]}]}' \
		/bin/probe audit_socket route_socket
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-and" c-and
	is "$RC:$(results)" "0:audit_socket=EINVAL route_socket=ok" "$M linux.seccomp: conditions on two arguments of one rule must both hold"
	# a pair of rules libseccomp 2.5 never returns from: refused in one line, not a hung create
	bundle "$D/b-hang" '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
		{"names": ["mkdirat"], "action": "SCMP_ACT_ERRNO", "args": [{"index": 2, "value": 5, "op": "SCMP_CMP_GT"}, {"index": 0, "value": 3, "op": "SCMP_CMP_NE"}]},
		{"names": ["mkdirat"], "action": "SCMP_ACT_ERRNO", "args": [{"index": 3, "value": 5, "op": "SCMP_CMP_GT"}, {"index": 0, "value": 3, "op": "SCMP_CMP_NE"}]}]}' true
	bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$D/b-hang" c-hang
	like "$RC:$ERR" "^1:warren: linux.seccomp: the comparisons of a rule for mkdirat begin as those of an earlier rule" \
		"$M linux.seccomp with a pair of rules libseccomp 2.5 hangs on: refused in one line"
	is "$(ls "$ROOT" | grep -v -e '\.out$' -e '\.pid$' -e '^log.json$')" "" "$M nothing of the containers is left under --root"
done
