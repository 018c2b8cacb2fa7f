#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# oci-ns.t - issue 36 (1, 2): a pod's namespaces through warren-runc, as containerd's CRI names
# them. A network namespace made with `ip netns add` (a veth pair inside it, an address on one
# end: nothing of the host's) stands for the pod's, made by the CNI; a "sandbox" container joins
# it by its bind-mounted file (/run/netns/NAME) and is left running (create, start: the pid
# file names warren's supervisor); an "app" container joins the sandbox's network, IPC, UTS and
# PID namespaces by /proc/<that pid>/ns/TYPE, the CRI's paths: the same namespaces (inodes), the
# pod's address and hostname (the sandbox's config's, the app's own ignored), the sandbox's
# processes, and no power over any of them (no link or address changed, the hostname kept; the
# joined network namespace owned by the host's user namespace, not the job's). Each container
# keeps its own mount namespace, seccomp and record; an app ending, or killed, takes its own
# processes and leaves the sandbox's. Refused in one line naming the field and the path: a
# namespace of another type, a regular file, the host's pid 1's, the caller's own and a bind
# mount of it (the host's); a bundle without a network, ipc or pid entry (the pod's
# hostNetwork, hostIPC, hostPID) unless warren.conf's oci.host_network / oci.host_ipc /
# oci.host_pid = allow, when the container has the host's. Rootless: a path and a left-out
# namespace refused. Nothing left: processes, mounts, cgroups, the namespace.
. "$(dirname "$0")/../lib.sh"

plan 55

. "$REPO/tests/oci.sh"
oci_setup

NS=warren-oci-ns-$$
# the jobs' sleeps, by arguments of this run's own (job_pids: another test's "sleep 1000" is not ours)
Z=$(( ($$ % 90000 + 10000) * 10 ))
S0=$Z S1=$((Z + 1)) S2=$((Z + 2)) S3=$((Z + 3)) S4=$((Z + 4))
# the namespace goes with the script, however it ends (lib.sh's cleanup follows)
trap 'st=$?; ip netns del "$NS" 2>/dev/null; (exit $st); _lib_cleanup' EXIT
ip netns add "$NS" || bail_out "cannot make a network namespace (ip netns add)"
ip -n "$NS" link add pod0 type veth peer name pod1 &&
	ip -n "$NS" link set pod0 up && ip -n "$NS" link set lo up &&
	ip -n "$NS" addr add 10.88.77.2/24 dev pod0 || bail_out "cannot set up the network namespace $NS"
NETNS_INO=$(stat -L -c %i "/run/netns/$NS")
HOST_NET_INO=$(stat -L -c %i /proc/self/ns/net)
one_line() { [ -n "$ERR" ] && [ "$(wc -l <<<"$ERR")" = 1 ]; }
# with_ns TYPE PATH: the python statement giving namespace TYPE the path PATH ("" drops the entry)
with_ns() {
	printf 'c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "%s"]%s\n' "$1" \
		"$([ -n "$2" ] && printf ' + [{"type": "%s", "path": "%s"}]' "$1" "$2")"
}
# refused ID BUNDLE ERE DESC: create is refused (exit 1), one line matching ERE, nothing made
refused() {
	bounded "${RUNNER[@]}" "${ENVS[@]}" "$RUNC" --root "$ROOT" create --bundle "$2" "$1"
	{ [ "$RC" = 1 ] && one_line && [[ $ERR =~ $3 ]] && [ ! -e "$ROOT/$1" ]; }
	ok $? "$4" || diag "exit $RC: $ERR"
}
# owner_of_net PID: the inode of the user namespace owning PID's network namespace
owner_of_net() {
	"$PY" -c 'import fcntl, os, sys
fd = os.open("/proc/%s/ns/net" % sys.argv[1], os.O_RDONLY)
u = fcntl.ioctl(fd, 0xb701)   # NS_GET_USERNS
print(os.fstat(u).st_ino)' "$1"
}

use_mode root
ROOT=$T/root
mkdir -p "$ROOT"
ENVS=(env)

# ---- a bundle joining the network namespace by its file
bundle "$T/b-net" '["sh", "-c", "ip -o -4 addr show; stat -L -c net=%i /proc/self/ns/net"]' "$(with_ns network "/run/netns/$NS")"
bounded "$RUNC" --root "$ROOT" run --bundle "$T/b-net" c-net
is "$RC" 0 "a bundle joining /run/netns/$NS runs" || diag "$ERR"
line_like "$OUT" 'pod0 +inet 10\.88\.77\.2/24' "... its job sees the namespace's address on pod0"
line_like "$OUT" "^net=$NETNS_INO\$" "... and is in that namespace (the same inode)"

# ---- the sandbox: the pod's network by its file, its own ipc, uts and pid; left running
bundle "$T/b-sb" '["sleep", "'$S0'"]' "$(with_ns network "/run/netns/$NS")
c['hostname'] = 'pod-$$'"
bounded "$RUNC" --root "$ROOT" create --pid-file "$T/sb.pid" --bundle "$T/b-sb" sb
bounded "$RUNC" --root "$ROOT" start sb
is "$RC" 0 "the sandbox is created and started (as containerd would)" || diag "$ERR"
SUP=$(cat "$T/sb.pid")
for _ in $(seq 100); do SBJOB=$(job_pids $S0); [ -n "$SBJOB" ] && break; sleep 0.05; done
isnt "${SBJOB:-}" "" "... its job runs"
ino() { stat -L -c %i "/proc/$SBJOB/ns/$1"; }
is "$(ino net)" "$NETNS_INO" "... in the pod's network namespace"
is "$(nsenter -t "$SBJOB" -u hostname)" "pod-$$" "... its hostname the config's"
owner=$(owner_of_net "$SBJOB")
jobuser=$(stat -L -c %i "/proc/$SBJOB/ns/user")
is "$owner:$([ "$owner" != "$jobuser" ] && echo not-the-job\'s)" "$(stat -L -c %i /proc/self/ns/user):not-the-job's" \
	"the joined network namespace belongs to the host's user namespace; the job's own user namespace is another"

# ---- the app: the sandbox's network, ipc, uts and pid by /proc/<pid file's pid>/ns/TYPE
APP_SH='hostname; for n in net ipc uts pid mnt; do stat -L -c "$n=%i" /proc/self/ns/$n; done
ps -o args | grep -c "^sleep '$S0'" | sed s/^/sandbox-sleeps=/; ip -o -4 addr show
ip link set pod0 down; echo down=$?; ip link add x0 type veth peer name x1; echo add=$?
ip addr add 10.9.9.9/32 dev lo; echo addr=$?; hostname other; echo hn=$?
grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\t" " "'
app_ns="
P = {'network': 'net', 'ipc': 'ipc', 'uts': 'uts', 'pid': 'pid'}
c['linux']['namespaces'] = [n if n['type'] not in P else {'type': n['type'], 'path': '/proc/$SUP/ns/' + P[n['type']]} for n in c['linux']['namespaces']]
c['hostname'] = 'app-$$'"
bundle "$T/b-app" "$("$PY" -c 'import json,sys; print(json.dumps(["sh", "-c", sys.argv[1]]))' "$APP_SH")" "$app_ns"
bounded "$RUNC" --root "$ROOT" run --bundle "$T/b-app" app
is "$RC" 0 "an app joining the sandbox's namespaces by /proc/$SUP/ns/TYPE (the pid file's pid) runs" || diag "$ERR"
is "$(sed -n 1p <<<"$OUT")" "pod-$$" "... its hostname is the pod's (the sandbox's; its own config's is not set in a joined UTS namespace)"
for n in net ipc uts pid; do
	line_like "$OUT" "^$n=$(ino "$n")\$" "... in the sandbox's $n namespace"
done
no_line_like "$OUT" "^mnt=$(ino mnt)\$" "... in a mount namespace of its own"
line_like "$OUT" '^sandbox-sleeps=1$' "... it sees the sandbox's process (one pid namespace: shareProcessNamespace)"
line_like "$OUT" 'pod0 +inet 10\.88\.77\.2/24' "... and the pod's address"
is "$(grep -E '^(down|add|addr|hn)=' <<<"$OUT" | grep -vc '=0$')" 4 "... but changes none of the pod's links, addresses or hostname (no capability over them)"
is "$(ip -n "$NS" -o link show pod0 | grep -c ',UP')$(ip -n "$NS" -o link | grep -c x0)$(ip -n "$NS" -o addr | grep -c 10.9.9.9)" "100" \
	"... the pod's namespace unchanged (pod0 up, no x0, no 10.9.9.9)"
is "$(nsenter -t "$SBJOB" -u hostname)" "pod-$$" "... the pod's hostname unchanged"
line_like "$OUT" '^NoNewPrivs: 1$' "... no_new_privs, as in any cell"
line_like "$OUT" '^Seccomp: 2$' "... a seccomp filter, as in any cell"
run=$(ls -t "$STATE/runs" | head -1)
is "$(jget "$STATE/runs/$run/result.json" 'd["exit_code"], d["name"]')" '[0, "app"]' "... recorded as a run of its own"
nothing_left "$STATE/runs/$run" "... nothing of the app's cell is left"
job_alive $S0; ok $? "... and the sandbox's job still runs"

# ---- in the pod's pid namespace, an app's end takes its own processes, never the pod's
bundle "$T/b-orphan" '["sh", "-c", "sleep '$S3' & echo started; exit 0"]' "$app_ns"
bounded "$RUNC" --root "$ROOT" run --bundle "$T/b-orphan" orphan
is "$RC:$OUT" "0:started" "an app leaving a process behind ends"
job_gone $S3; ok $? "... its process went with it (init, not the pid namespace's pid 1, killed its descendants)"
job_alive $S0; ok $? "... the sandbox's job still runs"
bundle "$T/b-long" '["sh", "-c", "sleep '$S1' & sleep '$S2'"]' "$app_ns"
bounded "$RUNC" --root "$ROOT" create --bundle "$T/b-long" long
bounded "$RUNC" --root "$ROOT" start long
for _ in $(seq 100); do job_alive $S2 && break; sleep 0.05; done
# ps lists a container's own processes, not the pod's it shares the pid namespace with
pids_of() { bounded "$RUNC" --root "$ROOT" ps --format json "$1"; "$PY" -c 'import json,sys; print(" ".join(map(str, sorted(json.loads(sys.stdin.read())))))' <<<"$OUT"; }
lp=" $(pids_of long) " sp=" $(pids_of sb) "
is "$([[ $lp == *" $(job_pids $S2) "* ]] && echo a)$([[ $lp == *" $SBJOB "* ]] && echo b)$([[ $sp == *" $SBJOB "* ]] && echo c)$([[ $sp == *" $(job_pids $S2) "* ]] && echo d)" "ac" \
	"ps of an app in the pod's pid namespace lists its own processes, not the sandbox's (and the sandbox's ps not the app's)"
"$PY" -c 'import json,sys; json.dump({"args": ["sh", "-c", "ps -o args | grep -c \"^sleep %s\"; exit 7" % sys.argv[2]], "cwd": "/", "user": {"uid": 0, "gid": 0}}, open(sys.argv[1], "w"))' "$T/p.json" "$S0"
bounded "$RUNC" --root "$ROOT" exec --process "$T/p.json" long
is "$RC:$OUT" "7:1" "exec in an app of the pod's pid namespace: its exit code, and it sees the sandbox's process"
bounded "$RUNC" --root "$ROOT" kill long TERM
for _ in $(seq 100); do job_gone $S1 && job_gone $S2 && break; sleep 0.1; done
{ job_gone $S1 && job_gone $S2; }; ok $? "kill TERM of an app in the pod's pid namespace ends its processes"
job_alive $S0; ok $? "... and none of the sandbox's"
bounded "$RUNC" --root "$ROOT" delete --force long

# ---- refused: one line naming the field and the path; nothing made
echo "not a namespace" >"$T/regular"
bundle "$T/b-type" '["true"]' "$(with_ns network "/proc/$SUP/ns/ipc")"
refused c-type "$T/b-type" "^warren: linux\.namespaces\[[0-9]+\] \(network\) path /proc/$SUP/ns/ipc: an ipc namespace, not a network namespace" \
	"a path of another type than named: refused"
bundle "$T/b-file" '["true"]' "$(with_ns ipc "$T/regular")"
refused c-file "$T/b-file" "^warren: linux\.namespaces\[[0-9]+\] \(ipc\) path $T/regular: not a namespace" "a regular file as a namespace: refused"
bundle "$T/b-pid1" '["true"]' "$(with_ns network /proc/1/ns/net)"
refused c-pid1 "$T/b-pid1" "^warren: linux\.namespaces\[[0-9]+\] \(network\) path /proc/1/ns/net: (the host's own network namespace|cannot open it)" \
	"the host's pid 1's network namespace: refused (the host's, or unreadable to the runtime)"
bundle "$T/b-self" '["true"]' "$(with_ns network "/proc/$$/ns/net")"
refused c-self "$T/b-self" "^warren: linux\.namespaces\[[0-9]+\] \(network\) path /proc/$$/ns/net: the host's own network namespace, which is the pod's hostNetwork: .*'oci\.host_network = allow'" \
	"the caller's own (the host's) network namespace: refused as the pod's hostNetwork, naming the setting"
touch "$T/hostnet"
mount --bind /proc/self/ns/net "$T/hostnet"
bundle "$T/b-bind" '["true"]' "$(with_ns network "$T/hostnet")"
refused c-bind "$T/b-bind" "^warren: linux\.namespaces\[[0-9]+\] \(network\) path $T/hostnet: the host's own network namespace" \
	"a bind mount of the host's network namespace (another name for it): refused as the host's"
umount "$T/hostnet"
bundle "$T/b-nonet" '["true"]' "$(with_ns network "")"
refused c-nonet "$T/b-nonet" "^warren: linux\.namespaces: no network namespace: the bundle asks for the host's \(the pod's hostNetwork\), refused to untrusted pods; .*'oci\.host_network = allow' in /etc/warren/warren\.conf$" \
	"no network entry (hostNetwork): refused by default, naming the pod's field and the setting"
bundle "$T/b-noipc" '["true"]' "$(with_ns ipc "")"
refused c-noipc "$T/b-noipc" "^warren: linux\.namespaces: no ipc namespace: .*hostIPC.*'oci\.host_ipc = allow'" "no ipc entry (hostIPC): refused by default"
bundle "$T/b-nopid" '["sh", "-c", "test -d /proc/'$$' && echo host-pids; sleep '$S4' & echo ok"]' "$(with_ns pid "")"
refused c-nopid "$T/b-nopid" "^warren: linux\.namespaces: no pid namespace: .*hostPID.*'oci\.host_pid = allow'" "no pid entry (hostPID): refused by default"
bundle "$T/b-user" '["true"]' 'c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "user"] + [{"type": "user", "path": "/proc/self/ns/user"}]'
refused c-user "$T/b-user" "^warren: linux\.namespaces\[[0-9]+\] \(user\) path /proc/self/ns/user: warren makes the cell's user, mount and cgroup namespaces itself" \
	"a user namespace to join: refused"

# ---- the node's operator allows the host's namespaces (warren.conf)
printf 'oci.host_network = allow\noci.host_pid = allow\n' >"$T/allow.conf"
chmod 644 "$T/allow.conf"
bundle "$T/b-hostnet" '["stat", "-L", "-c", "net=%i", "/proc/self/ns/net"]' "$(with_ns network "")"
bounded env WARREN_CONFIG="$T/allow.conf" "$RUNC" --root "$ROOT" run --bundle "$T/b-hostnet" c-hostnet
is "$RC:$OUT" "0:net=$HOST_NET_INO" "oci.host_network = allow: a bundle without a network entry has the host's network namespace" || diag "$ERR"
bounded env WARREN_CONFIG="$T/allow.conf" "$RUNC" --root "$ROOT" run --bundle "$T/b-nopid" c-hostpid
is "$RC:$OUT" "$(printf '0:host-pids\nok')" "oci.host_pid = allow: a bundle without a pid entry sees the host's processes" || diag "$ERR"
job_gone $S4; ok $? "... and its process left behind went with it (the host's pid namespace spared)"
bounded env WARREN_CONFIG="$T/allow.conf" "$RUNC" --root "$ROOT" run --bundle "$T/b-self" c-self2
is "$RC" 0 "oci.host_network = allow: the host's network namespace named by path is allowed as well" || diag "$ERR"
bundle "$T/b-hostsc" '["true"]' "$(with_ns network "")
c['linux']['sysctl'] = {'net.ipv4.tcp_keepalive_time': '600'}"
bounded env WARREN_CONFIG="$T/allow.conf" "$RUNC" --root "$ROOT" run --bundle "$T/b-hostsc" c-hostsc
like "$RC:$ERR" "^1:warren: linux\.sysctl 'net\.ipv4\.tcp_keepalive_time': the cell shares the host's network namespace \(the pod's hostNetwork\).*node's" \
	"oci.host_network = allow: a network sysctl in the host's network namespace is refused in one line (it would be the node's)"
bounded env WARREN_CONFIG="$T/allow.conf" "$RUNC" --root "$ROOT" create --bundle "$T/b-noipc" c-noipc2
like "$RC:$ERR" "^1:warren: linux\.namespaces: no ipc namespace" "... each setting allows its own namespace alone (no ipc entry still refused)"

# ---- rootless: no namespace of another's, nor the host's
use_mode user
ROOT=$U_DIR/oci-root
mkdir_for_mode "$ROOT" 700
ENVS=(env)
bundle "$T/u-net" '["true"]' "$(with_ns network "/run/netns/$NS")"
refused u-net "$T/u-net" "^warren: linux\.namespaces\[[0-9]+\] \(network\) path /run/netns/$NS: a rootless warren-runc cannot join a namespace" \
	"rootless: the pod's network namespace by path refused in one line"
bundle "$T/u-nonet" '["true"]' "$(with_ns network "")"
refused u-nonet "$T/u-nonet" "^warren: linux\.namespaces: no network namespace" "rootless: no network entry refused"
ENVS=(env WARREN_CONFIG="$T/allow.conf")
refused u-nonet2 "$T/u-nonet" "^warren: linux\.namespaces: no network namespace \(the host's\): a rootless warren-runc makes every namespace of its cell itself" \
	"rootless: no network entry refused even where the operator allows it (a rootless cell cannot have the host's)"
bundle "$T/u-own" '["true"]'
bounded "${RUNNER[@]}" "$RUNC" --root "$ROOT" run --bundle "$T/u-own" u-own
is "$RC" 0 "rootless: a bundle naming every namespace without a path (the cell's own) runs" || diag "$ERR"
use_mode root
ROOT=$T/root
ENVS=(env)

# ---- the sandbox ends: nothing of the pod's containers is left
bounded "$RUNC" --root "$ROOT" kill sb KILL
for _ in $(seq 100); do job_gone $S0 && break; sleep 0.1; done
bounded "$RUNC" --root "$ROOT" delete --force sb
job_gone $S0; ok $? "the sandbox killed and deleted: its job is gone"
is "$(ls "$ROOT")" "" "nothing of any container is left under --root"
x=$(state_clean); ok $? "nothing of any run is left (scratch, mounts, processes, cgroups)" || diag "$x"
ip netns del "$NS"
is "$(ip netns list | grep -c "^$NS\b")$(mounts_under "$NS")$(mounts_under "$T")" "0" "the pod's network namespace deleted, no mount of it or of the test left"
