#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# vm-net.t - --net none|nat|allow=LIST with the vm driver (docs/vm.md, "Network"): the guest's
# NIC is a tap on warren's bridge under the same firewall and resolver as a container cell's
# veth. The whole script runs in the throwaway world of net.t (net_world_up in lib.sh: network
# namespaces of its own, no route off the machine); nothing is sent beyond it. Boots are slow
# (TCG): each checks several things; 5 boots as root, then 2 rootless (passt behind pasta and
# the firewall of a rootless cell, as net.t's rootless part).
# A VM's port held to its MAC and address is checked with a stand-in for its tap (no boot).
[ -n "${WARREN_NET_WORLD:-}" ] || exec env WARREN_NET_WORLD=1 unshare --net --mount --propagation private bash "$0" "$@"
. "$(dirname "$0")/../lib.sh"

T_TIMEOUT=180

command -v qemu-system-x86_64 >/dev/null || skip_all "qemu-system-x86_64 is not installed (qemu-system-x86)"
ls /boot/vmlinuz-* >/dev/null 2>&1 || skip_all "no /boot/vmlinuz-* (linux-image-amd64)"
[ -x "$(dirname "$WARREN")/warren-guest-init" ] || bail_out "no warren-guest-init beside $WARREN: build it with make"

net_world_up
plan $((43 + 5 + 2))

CURL="curl -s -m 5"
world_idle() {
	nft list ruleset 2>/dev/null | grep -E 'run_|elements' | head -3
	ip -br link | grep -E '^wv'
	ls /run/warren/net/leases 2>/dev/null
}

use_mode root
chown 1000001000:1000001000 "$WORK"

# ---- none: no NIC at all
wrun --driver vm -- sh -c 'ls /sys/class/net | tr "\n" " "; '"$CURL"' http://203.0.113.10:8080/; echo rc=$?'
is "$RC" 0 "none: the run ends well"
is "$OUT" "lo rc=7" "none: the VM has loopback only, and web1 is unreachable"

# ---- nat: the same reach and refusals as a container cell's
wrun --driver vm --net nat -- sh -c 'ls /sys/class/net | tr "\n" " "; echo; cat /etc/resolv.conf;
	'"$CURL"' http://203.0.113.10:8080/; '"$CURL"' http://web1.test:8080/;
	'"$CURL"' http://198.51.100.1:8081/; echo host=$?; '"$CURL"' http://169.254.169.254/; echo meta=$?;
	'"$CURL"' http://10.20.30.40:8090/; echo lan=$?'
ID=$(basename "$(last_rundir)")
RD=$(last_rundir)
is "$RC" 0 "nat: the run ends well"
line_like "$OUT" '^eth0 lo $' "nat: the VM has eth0 (virtio-net on a tap) and lo"
line_like "$OUT" '^nameserver 10\.88\.0\.1$' "nat: resolv.conf names the gateway"
is "$(grep -c 'this is web1' <<<"$OUT")" 2 "nat: reaches a test host by address and by name (warren's resolver)"
line_like "$OUT" '^host=7$' "nat: the host's own address is refused"
line_like "$OUT" '^meta=7$' "nat: 169.254.169.254 is refused"
line_like "$OUT" '^lan=7$' "nat: a private range is refused"
is "$(jget "$RD/result.json" 'sorted(x["dest"] for x in d["network"]["refused"])')" \
	'["10.20.30.40:8090", "169.254.169.254:80", "198.51.100.1:8081"]' "nat: the refusals are recorded as a container's"
line_like "$ERR" "^warren: $ID refused 3 connections to " "nat: one line on stderr names the refusals"
is "$(net_left "$ID")" "" "nat: nothing of the run is left (tap, rules, sets, lease)"
is "$(world_idle)" "" "nat: no run's rule, set, map entry, tap or lease is left"
nothing_left "$RD" "nat: no scratch, mount, process or cgroup left"

# ---- allow=: names on the list answered, others refused, addresses as the list says
wrun --driver vm --net allow=web1.test -- sh -c 'getent hosts web1.test; getent hosts web2.test || echo w2dns=refused;
	'"$CURL"' http://web1.test:8080/; echo w1=$?; '"$CURL"' http://203.0.113.20:8080/; echo w2=$?'
ID=$(basename "$(last_rundir)")
RD=$(last_rundir)
line_like "$OUT" '^203\.0\.113\.10 +web1\.test$' "allow=: the resolver answers a name on the list"
line_like "$OUT" '^w2dns=refused$' "allow=: and refuses a name not on it"
line_like "$OUT" '^this is web1$' "allow=: the allowed name is reached"
line_like "$OUT" '^w2=7$' "allow=: an address not on the list is refused"
is "$(jget "$RD/result.json" '[x["name"] for x in d["network"]["dns"]["refused"]]')" '["web2.test"]' "allow=: the refused name is recorded"
is "$(net_left "$ID")" "" "allow=: nothing of the run is left"

# ---- a VM's port passes only its own MAC and address (table bridge warren, sets vms and
# vmsrc): a guest kernel the job took over cannot send as another. A stand-in for a VM's tap
# (a veth on warren0 whose other end is in a namespace of this test, where the address can be
# changed as a taken-over guest would) is put in the sets as warren puts a tap; ARP for the
# gateway is answered for the listed address, and not for another one from the same port.
SP=wt-spoof-$$
ip netns add "$SP"
ip link add wvspooftest0 type veth peer name eth0 netns "$SP"
ip link set wvspooftest0 master warren0 up
ip -n "$SP" link set eth0 up
mac=$(ip -n "$SP" -br link show eth0 | awk '{ print $3 }')
nft add element bridge warren vms '{ "wvspooftest0" }'
nft add element bridge warren vmsrc "{ \"wvspooftest0\" . $mac . 10.88.0.250 }"
gw_mac() { ip -n "$SP" neigh flush dev eth0; ip netns exec "$SP" timeout 3 bash -c "echo >/dev/tcp/10.88.0.1/9" >/dev/null 2>&1;
	ip -n "$SP" neigh show 10.88.0.1 dev eth0 | grep -c lladdr; }
ip -n "$SP" addr add 10.88.0.250/24 dev eth0
is "$(gw_mac)" 1 "spoof: the port's own address gets the gateway's ARP answer"
ip -n "$SP" addr flush dev eth0
ip -n "$SP" addr add 10.88.0.251/24 dev eth0
is "$(gw_mac)" 0 "spoof: another address from the same port gets nothing (its frames are dropped)"
ip -n "$SP" link set eth0 address 02:77:0a:58:00:fa
ip -n "$SP" addr flush dev eth0
ip -n "$SP" addr add 10.88.0.250/24 dev eth0
is "$(gw_mac)" 0 "spoof: the listed address from another MAC gets nothing"
nft delete element bridge warren vmsrc "{ \"wvspooftest0\" . $mac . 10.88.0.250 }"
nft delete element bridge warren vms '{ "wvspooftest0" }'
ip link del wvspooftest0
ip netns del "$SP"

# ---- kill -9 of warren: qemu dies with it, the tap with qemu, gc removes the rules and lease
# (the job serves a page on a published port meanwhile)
wr_bg run --work "$WORK" --driver vm --net nat --publish 18089:8000 -- sh -c 'cd /tmp && echo served-in-the-vm >index.html &&
	{ python3 -m http.server --bind 0.0.0.0 8000 >/dev/null 2>&1 & } && sleep 3 && echo started; sleep 100'
wait_for 150 grep -q started "$BG_OUT"
ok $? "kill: the job started in the VM"
wait_for 30 _net_up http://127.0.0.1:18089/index.html
is "$(curl -s -m 5 http://127.0.0.1:18089/index.html)" served-in-the-vm "publish: a host program fetches a page served in the VM (--publish 18089:8000)"
RD=$(last_rundir)
ID=$(basename "$RD")
ip -br link | grep -q "^wv${ID: -12}"
ok $? "kill: the run's tap is on the host while it runs"
kill -KILL "$BG_PID"
wait_for 10 no_procs_matching "$RD"
ok $? "kill: after kill -9 of warren no qemu is left"
wr gc
is "$(net_left "$ID")" "" "kill: warren gc removed the run's rules, sets and lease (the tap went with qemu)"
nothing_left "$RD" "kill: gc reclaimed the killed run" norecord

# ---- --net none with --publish: a NIC for the published port only; the firewall passes its
# replies and refuses all the guest starts (it was nat: docs/network.md)
wr_bg run --work "$WORK" --driver vm --net none --publish 18088:8000 -- sh -c 'W=$PWD; cd /tmp && echo none-publish-vm >index.html &&
	{ python3 -m http.server --bind 0.0.0.0 8000 >/dev/null 2>&1 & } && sleep 3; '"$CURL"' http://203.0.113.10:8080/; echo web1=$?;
	echo started; i=0; while [ ! -e "$W/np-done" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done'
NP_PID=$BG_PID
wait_for 150 grep -q started "$BG_OUT"
wait_for 30 _net_up http://127.0.0.1:18088/index.html
is "$(curl -s -m 5 http://127.0.0.1:18088/index.html)" none-publish-vm "none+publish: a host program fetches a page served in the VM"
touch "$WORK/np-done"
wait_bg "$NP_PID" 60
rm -f "$WORK/np-done"
RD=$(last_rundir)
is "$RC" 0 "none+publish: the run ends well"
line_like "$(cat "$BG_OUT")" '^web1=(7|28)$' "none+publish: the guest cannot reach web1"
# (the guest's DNS to the gateway is refused too: no resolver; http.server asks for its name)
is "$(jget "$RD/result.json" '[d["network"]["mode"], "203.0.113.10:8080" in [x["dest"] for x in d["network"]["refused"]]]')" \
	'["none+publish", true]' "none+publish: recorded, with the refusal"
is "$(net_left "$(basename "$RD")")" "" "none+publish: nothing of the run is left"

# ---- rootless: passt in a network namespace of its own, behind the firewall and pasta of a
# rootless container cell: the same reach and refusals as that cell (not counted, as there)
use_mode user
net_world_rootless
wrun --driver vm --net allow=web1.test -- true
is "$RC" 125 "[user] allow=: refused as for a rootless container"
like "$ERR" "allow= needs root: .*pasta" "[user] allow=: the refusal names why"
wrun --driver vm --net none --publish 18087:80 -- true
is "$RC" 125 "[user] --net none --publish: refused (no port is forwarded to a rootless guest)"
like "$ERR" "^warren: --publish in a rootless VM: .*--driver container" "[user] --net none --publish: the refusal names what to do"
wrun --driver vm --net nat -- sh -c 'ls /sys/class/net | tr "\n" " "; echo; cat /etc/resolv.conf;
	'"$CURL"' http://203.0.113.10:8080/; '"$CURL"' http://web1.test:8080/;
	'"$CURL"' http://198.51.100.1:8081/; echo host=$?; '"$CURL"' http://169.254.169.254/; echo meta=$?;
	'"$CURL"' http://10.20.30.40:8090/; echo lan=$?; '"$CURL"' http://10.88.0.1:8081/; echo gw=$?;
	'"$CURL"' http://10.88.0.1:53/; echo gwdns=$?'
RD=$(last_rundir)
is "$RC" 0 "[user] nat: the run ends well"
line_like "$OUT" '^eth0 lo $' "[user] nat: the VM has eth0 (virtio-net on passt's socket) and lo"
line_like "$OUT" '^nameserver 10\.88\.0\.1$' "[user] nat: resolv.conf names the gateway"
is "$(grep -c 'this is web1' <<<"$OUT")" 2 "[user] nat: reaches a test host by address and by name (pasta's DNS)"
# refused in the namespace's firewall: passt (Debian 12's) does not pass the reset on, so the
# guest's connect times out (28) where a container's is refused at once (7)
is "$(grep -cE '^(host|meta|lan|gw|gwdns)=(7|28)$' <<<"$OUT")" 5 "[user] nat: the host, 169.254.169.254, a private range, the gateway (but DNS) and TCP DNS are not reached"
is "$(jget "$RD/result.json" '[d["network"]["mode"], d["network"]["via"]]')" '["nat", "pasta"]' "[user] nat: recorded as nat via pasta"
is "$(pgrep -u "$TEST_USER_UID" -f '^([^ ]*/(pasta|passt) |qemu-system)')" "" "[user] nat: pasta, passt and qemu ended with the run"
nothing_left "$RD" "[user] nat: no scratch, mount, process or cgroup left"
# kill -9 of warren: qemu, pasta and passt have a parent-death signal
wr_bg run --work "$WORK" --driver vm --net nat -- sh -c 'echo started; sleep 100'
wait_for 150 grep -q started "$BG_OUT"
ok $? "[user] kill: the job started in the VM"
[ -n "$(pgrep -u "$TEST_USER_UID" -f "^[^ ]*/passt ")" ] && [ -n "$(pgrep -u "$TEST_USER_UID" -f "^[^ ]*/pasta ")" ]
ok $? "[user] kill: passt and pasta run while the VM does"
kill -KILL "$BG_PID"
wait_for 10 sh -c "! pgrep -u $TEST_USER_UID -f '^([^ ]*/(pasta|passt) |qemu-system)'"
is "$(pgrep -u "$TEST_USER_UID" -f '^([^ ]*/(pasta|passt) |qemu-system)')" "" "[user] kill: kill -9 of warren ends qemu, pasta and passt"
wr gc
nothing_left "$(last_rundir)" "[user] kill: gc reclaimed the killed run" norecord
