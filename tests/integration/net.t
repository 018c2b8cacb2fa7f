#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# net.t - --net none|nat|allow=LIST and --publish, in a throwaway world: the whole script
# (warren included) runs in a network namespace of its own with no route off the machine;
# the "internet" is a further namespace behind it (web1, web2: HTTP servers; a dnsmasq that
# answers for a few made-up names; see net_world_up in lib.sh). Nothing is sent beyond these
# namespaces. The private ranges (nat,lan) are net-lan.t's.
[ -n "${WARREN_NET_WORLD:-}" ] || exec env WARREN_NET_WORLD=1 unshare --net --mount --propagation private bash "$0" "$@"
. "$(dirname "$0")/../lib.sh"

net_world_up
plan $((97 + 20 + 2 * 11 + 2 + 2 * 11))

use_mode root
CURL="curl -s -m 3"

# what runs left in the world (empty: nothing); the bridge and the base tables stay between runs
world_idle() {
	nft list ruleset 2>/dev/null | grep -E 'run_|elements' | head -3
	ip -br link | grep -E '^wv'
	ls /run/warren/net/leases 2>/dev/null
}
world_clean() {
	nft list tables 2>/dev/null | grep warren
	ip -br link | grep -E '^(warren0|wv)'
	ls /run/warren/net/leases 2>/dev/null
}

# ---------------------------------------------------------------- none
wrun -- sh -c "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; $CURL http://203.0.113.10:8080/; echo rc=\$?"
is "$RC" 0 "none: the run ends well"
like "$OUT" $'^lo\nrc=7$' "none: only lo, and web1 is unreachable (curl: could not connect)"
is "$(world_clean)" "" "none: no bridge, table or lease is made"

# ---- a subnet that meets the host's own network is refused before the bridge is made: it took
# the host's addresses (the uplink's 198.51.100.0/24 here: its gateway with them) until gc
wr_env WARREN_NET_SUBNET=198.51.100.128/28 -- run --work "$WORK" --net nat -- true
{ [ "$RC" = 125 ] && [[ $ERR == *"meets the host's own network (198.51.100.1/24 on up0)"* ]]; }
ok $? "WARREN_NET_SUBNET meeting an interface's network: refused, naming it" || diag "$ERR"
is "$(ip -o route get 198.51.100.130 | grep -o 'dev [^ ]*')" "dev up0" "... and the host's route to it is as it was"
ip route add 10.99.7.0/24 via 198.51.100.2
wr_env WARREN_NET_SUBNET=10.99.0.0/16 -- run --work "$WORK" --net nat -- true
ip route del 10.99.7.0/24 via 198.51.100.2
{ [ "$RC" = 125 ] && [[ $ERR == *"(the route to 10.99.7.0/24 on up0)"* ]]; }
ok $? "WARREN_NET_SUBNET holding a route of the host's: refused, naming it" || diag "$ERR"

# ---------------------------------------------------------------- nat
wrun --net nat -- sh -c "$CURL http://203.0.113.10:8080/; $CURL http://web1.test:8080/; cat /etc/resolv.conf; \
	$CURL http://198.51.100.1:8081/; echo host=\$?; $CURL http://169.254.169.254/; echo meta=\$?"
ID=$(basename "$(last_rundir)")
is "$RC" 0 "nat: the run ends well"
line_like "$OUT" '^this is web1$' "nat: reaches a test host by address"
is "$(grep -c 'this is web1' <<<"$OUT")" 2 "nat: and by name through warren's resolver"
line_like "$OUT" '^nameserver 10\.88\.0\.1$' "nat: resolv.conf names the gateway"
line_like "$OUT" '^host=7$' "nat: the host's own address is refused"
line_like "$OUT" '^meta=7$' "nat: 169.254.169.254 is refused"
RD=$(last_rundir)
is "$(jget "$RD/result.json" 'sorted(x["dest"] for x in d["network"]["refused"])')" '["169.254.169.254:80", "198.51.100.1:8081"]' "nat: the refusals are recorded"
line_like "$ERR" "^warren: $ID refused 2 connections to " "nat: one line on stderr names the refusals"
is "$(net_left "$ID")" "" "nat: nothing of the run is left (veth, rules, sets, lease)"
is "$(world_idle)" "" "nat: no run's rule, set, map entry, veth or lease is left"
is "$(nft list tables | tr '\n' ' '; ip -br link | grep -c '^warren0')" "table inet warren table bridge warren 1" \
	"nat: the bridge and the base tables stay for the next run"
nothing_left "$RD" "nat: no scratch, mount, process or cgroup left"

# the cell's /sys is of its own network namespace: its eth0 there is the cell's (the host's
# eth0 has another address), the host's other interfaces are not there
wrun --net nat -- sh -c 'ls /sys/class/net | tr "\n" " "; echo; cat /sys/class/net/eth0/address; ip -o link show eth0'
is "$(head -1 <<<"$OUT")" "eth0 lo " "nat: /sys/class/net lists the cell's eth0 and lo only"
is "$(sed -n 2p <<<"$OUT")" "$(sed -n 3p <<<"$OUT" | grep -oE 'link/ether [0-9a-f:]+' | cut -d' ' -f2)" "nat: /sys/class/net/eth0/address is the cell's eth0's"

# the job holds no CAP_NET_ADMIN over its network, even as --user 0
wrun --net nat --user 0 -- sh -c 'ip addr add 10.88.0.200/24 dev eth0 2>&1; ip link set eth0 down 2>&1; echo done'
like "$OUT" "Operation not permitted" "nat --user 0: the cell cannot change its addresses"
is "$(grep -c 'Operation not permitted' <<<"$OUT")/$(tail -n 1 <<<"$OUT")" "2/done" \
	"nat --user 0: both changes are refused, and the script goes on to its end (done)"

# ---------------------------------------------------------------- allow=
wrun --net allow=web1.test -- sh -c "$CURL http://web1.test:8080/; echo w1=\$?; \
	$CURL http://web2.test:8080/; echo w2name=\$?; $CURL http://203.0.113.20:8080/; echo w2addr=\$?; \
	$CURL http://198.51.100.1:8081/; echo host=\$?; $CURL http://169.254.169.254/; echo meta=\$?; \
	$CURL http://203.0.113.20:8080/; echo w2again=\$?"
ID=$(basename "$(last_rundir)")
RD=$(last_rundir)
is "$RC" 0 "allow: the run ends well"
line_like "$OUT" '^this is web1$' "allow=web1.test: reaches web1 by name"
line_like "$OUT" '^w2name=6$' "allow: web2.test does not resolve (REFUSED)"
line_like "$OUT" '^w2addr=7$' "allow: web2 by address is refused"
line_like "$OUT" '^host=7$' "allow: the host is refused"
line_like "$OUT" '^meta=7$' "allow: 169.254.169.254 is refused"
no_line_like "$OUT" 'this is web2|this is the host' "allow: nothing but web1 answered"
is "$(jget "$RD/result.json" 'sorted([x["dest"], x["count"]] for x in d["network"]["refused"])')" \
	'[["169.254.169.254:80", 1], ["198.51.100.1:8081", 1], ["203.0.113.20:8080", 2]]' "allow: refusals counted per destination"
is "$(jget "$RD/result.json" '[[x["name"] for x in d["network"]["dns"]["refused"]], d["network"]["dns"]["names"]]')" \
	'[["web2.test"], 2]' "allow: the refused name and the distinct names are recorded"
line_like "$ERR" "^warren: $ID refused 4 connections to 203\.0\.113\.20:8080 \(2\), .*\(not in --net allow\)$" "allow: one line names the refusals"
is "$(net_left "$ID")" "" "allow: nothing of the run is left"

wrun --net allow=203.0.113.20:8080 -- sh -c "$CURL http://203.0.113.20:8080/; $CURL http://203.0.113.10:8080/; echo w1=\$?; $CURL http://web2.test:8080/; echo name=\$?"
line_like "$OUT" '^this is web2$' "allow=ADDR:PORT: reaches that address and port"
line_like "$OUT" '^w1=7$' "allow=ADDR:PORT: not another address"
line_like "$OUT" '^name=6$' "allow=ADDR:PORT: names are not resolved"

# a name whose address changes mid-run still works
start_bg "$WARREN" run --state "$STATE" --work "$WORK" --net allow=move.test -- sh -c \
	"$CURL http://move.test:8080/; touch moved.1; i=0; while [ ! -e moved.2 ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i+1)); done; sleep 1.2; $CURL http://move.test:8080/"
rm -f "$WORK/moved.1" "$WORK/moved.2"
MV_PID=$BG_PID
wait_for 15 test -e "$WORK/moved.1"
sed -i 's/^203.0.113.10 move.test$/203.0.113.20 move.test/' "$W/hosts"
kill -HUP "$(cat "$W/dnsmasq.pid")"
touch "$WORK/moved.2"
wait_bg "$MV_PID" 30
is "$(cat "$BG_OUT")" $'this is web1\nthis is web2' "allow=move.test: follows the name to its new address"
rm -f "$WORK/moved.1" "$WORK/moved.2"

# the cap on distinct names
wrun --net 'allow=*.web1.test' --dns-max-names 3 -- sh -c "for n in a b c d e; do $CURL -o /dev/null http://\$n.web1.test:8080/; echo \$n=\$?; done"
RD=$(last_rundir)
is "$(tr '\n' ' ' <<<"$OUT")" "a=0 b=0 c=0 d=6 e=6 " "--dns-max-names 3: the fourth distinct name is refused"
is "$(jget "$RD/result.json" '[d["network"]["dns"]["names"], d["network"]["dns"]["names_capped"]]')" '[3, true]' "--dns-max-names: recorded"
line_like "$ERR" 'past --dns-max-names 3' "--dns-max-names: named on stderr"

# ---------------------------------------------------------------- the resolver forwards only what it builds
# dnstool.py asks crafted questions (in the cell) and plays a fake upstream (in the internet)
DNSTOOL=$W/dnstool.py
cat >"$DNSTOOL" <<'EOF'
# dnstool.py ask SERVER [--port N] [--sport N] [--id N] [--opcode N] [--option DATA] [--more] NAME...: one
#   message of a question (type A) per NAME ('\.' is a dot inside a label), EDNS with an option
#   of DATA if given; prints the answer's header and records: "rcode=R qd=N an=N ns=N ar=N
#   answers=A:1.2.3.4,CNAME" (--more: then " tc=T q=NAME", the question as the answer spells it)
#   or "timeout". --sport: asks from that port.
# dnstool.py serve ADDR LOG: a fake upstream on ADDR:53 that logs each query it gets (header,
#   questions, the size of its EDNS options, its bytes, the port it came from) and answers from
#   a table, with extra records that do not answer the question.
import argparse, re, socket, struct, sys

def wire(name):
    labels = [l.replace('\\.', '.') for l in re.split(r'(?<!\\)\.', name) if l]
    return b''.join(bytes([len(l)]) + l.encode() for l in labels) + b'\0'

def read_name(m, i, lower=True):
    """(labels joined by '.', a dot inside a label as '\\.'), offset after the name"""
    labels, end = [], None
    while m[i]:
        if m[i] >= 0xc0:
            end = end or i + 2
            i = struct.unpack('>H', m[i:i + 2])[0] & 0x3fff
            continue
        labels.append(m[i + 1:i + 1 + m[i]].decode('latin-1').replace('.', '\\.'))
        i += 1 + m[i]
    name = '.'.join(labels)
    return name.lower() if lower else name, end or i + 1

def rr(name, typ, rdata, cls=1, ttl=60):
    return wire(name) + struct.pack('>HHIH', typ, cls, ttl, len(rdata)) + rdata

def a(name, addr, ttl=60):
    return rr(name, 1, socket.inet_aton(addr), ttl=ttl)

def ask(args):
    qs = b''.join(wire(n) + struct.pack('>HH', 1, 1) for n in args.names)
    opt = b''
    if args.option is not None:
        data = args.option.encode()
        opt = b'\0' + struct.pack('>HHIH', 41, 1232, 0, 4 + len(data)) + struct.pack('>HH', 65001, len(data)) + data
    m = struct.pack('>HHHHHH', args.id, args.opcode << 11 | 0x100, len(args.names), 0, 0, 1 if opt else 0) + qs + opt
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if args.sport:
        s.bind(('', args.sport))
    s.settimeout(4)  # a loaded machine's resolver and upstream (both in python here) may need more than 1.5 s
    s.sendto(m, (args.server, args.port))
    try:
        r = s.recv(4096)
    except socket.timeout:
        print('timeout'); return
    rid, flags, qd, an, ns, ar = struct.unpack('>HHHHHH', r[:12])
    i, qname = 12, '-'
    for _ in range(qd):
        qname, i = read_name(r, i, lower=False)
        i += 4
    answers = []
    for _ in range(an):
        i = read_name(r, i)[1]
        typ, _cls, _ttl, rdlen = struct.unpack('>HHIH', r[i:i + 10])
        rd = r[i + 10:i + 10 + rdlen]
        answers.append('A:' + socket.inet_ntoa(rd) if typ == 1 else {5: 'CNAME'}.get(typ, str(typ)))
        i += 10 + rdlen
    more = ' tc=%d q=%s' % (flags >> 9 & 1, qname) if args.more else ''
    print('rcode=%d id=%s qd=%d an=%d ns=%d ar=%d answers=%s%s' % (flags & 15, 'same' if rid == args.id else 'other',
          qd, an, ns, ar, ','.join(answers), more))

TABLE = {  # name: (answer, authority, additional); the bytes of records
    'bonus.test': ([a('bonus.test', '203.0.113.10'), a('web2.test', '203.0.113.20')], [],
                   [a('web2.test', '203.0.113.20'), a('bonus.test', '203.0.113.20')]),
    'chain.test': ([rr('chain.test', 5, wire('web1.test')), a('web1.test', '203.0.113.10'), a('side.test', '203.0.113.20')], [], []),
    'y.web1.test': ([a('y.web1.test', '203.0.113.10')], [], []),
    'x.web1.test': ([a('x.web1.test', '203.0.113.20')], [], []),
    'wrongid.test': ([a('wrongid.test', '203.0.113.20')], [], []),
    'wrongq.test': ([a('web2.test', '203.0.113.20')], [], []),
    'ttlmax.test': ([a('ttlmax.test', '203.0.113.10', 0xffffffff)], [], []),
    'ttlbig.test': ([a('ttlbig.test', '203.0.113.20', 0x7fffffff)], [], []),
    'ttlshort.test': ([a('ttlshort.test', '203.0.113.10', 0)], [], []),
    'inside.test': ([a('inside.test', x) for x in ('10.20.30.40', '198.51.100.1', '10.88.0.5', '127.0.0.1',
                                                   '0.0.0.1', '224.0.0.1', '169.254.169.254', '203.0.113.20')], [], []),
    'outside.test': ([a('outside.test', '203.0.113.30')], [], []),
    'tc.test': ([a('tc.test', '203.0.113.20')], [], []),  # answered truncated
}

def answer(m, log, port):
    mid, flags, qd, an, ns, ar = struct.unpack('>HHHHHH', m[:12])
    i, names = 12, []
    for _ in range(qd):
        n, i = read_name(m, i)
        names.append('%s/%d' % (n, struct.unpack('>H', m[i:i + 2])[0]))
        i += 4
    opt = '-'
    for _ in range(an + ns + ar):
        _n, i = read_name(m, i)
        typ, _cls, _ttl, rdlen = struct.unpack('>HHIH', m[i:i + 10])
        opt = str(rdlen) if typ == 41 else opt
        i += 10 + rdlen
    print('id=%d opcode=%d qd=%d an=%d ns=%d ar=%d opt=%s q=%s hex=%s from=%d' % (mid, flags >> 11 & 15, qd, an, ns, ar,
          opt, ' '.join(names), m.hex(), port), file=log, flush=True)
    qend = read_name(m, 12)[1] + 4
    name = names[0].split('/')[0] if names else ''
    question = m[12:qend]
    if name == 'wrongid.test':
        mid = (mid + 1) & 0xffff
    if name == 'wrongq.test':
        question = wire('web2.test') + struct.pack('>HH', 1, 1)
    secs = TABLE.get(name.replace('\\.', '.'), ([], [], []))
    rcode = 0 if name.replace('\\.', '.') in TABLE else 3
    tc = 0x200 if name == 'tc.test' else 0
    return struct.pack('>HHHHHH', mid, 0x8180 | tc | rcode, 1, *map(len, secs)) + question + b''.join(b''.join(s) for s in secs)

def serve(args):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((args.addr, 53))
    with open(args.log, 'a') as log:
        while True:
            m, peer = s.recvfrom(4096)
            s.sendto(answer(m, log, peer[1]), peer)

p = argparse.ArgumentParser()
sub = p.add_subparsers(dest='cmd', required=True)
pa = sub.add_parser('ask')
pa.add_argument('server')
pa.add_argument('--id', type=int, default=4660)
pa.add_argument('--opcode', type=int, default=0)
pa.add_argument('--option')
pa.add_argument('--port', type=int, default=53)
pa.add_argument('--sport', type=int, default=0)
pa.add_argument('--more', action='store_true')
pa.add_argument('names', nargs='+')
ps = sub.add_parser('serve')
ps.add_argument('addr')
ps.add_argument('log')
args = p.parse_args()
ask(args) if args.cmd == 'ask' else serve(args)
EOF
# the fake upstream beside dnsmasq logs what it gets and answers with records beside the answer
ip -n "$INET" addr add 203.0.113.54/32 dev lo
start_bg ip netns exec "$INET" "$PY" "$DNSTOOL" serve 203.0.113.54 "$W/upstream.log"
wait_for 10 sh -c "'$PY' '$DNSTOOL' ask 203.0.113.54 ready.test | grep -q rcode=3" || bail_out "the fake upstream did not start"
: >"$W/upstream.log"
printf 'nameserver 203.0.113.54\n' >"$W/resolv.conf"
cat >"$W/cell-dns.sh" <<'EOF'
ask() { python3 "$DNSTOOL" ask 10.88.0.1 "$@"; }
get() { curl -s -m 3 -o /dev/null "http://$1/"; echo $?; }
echo "dotted: $(ask 'x\.web1.test')"
echo "dotted-web2: $(get 203.0.113.20:8080)"
echo "wild: $(ask y.web1.test)"
echo "two: $(ask --id 8738 bonus.test secret-two.web1.test)"
echo "option: $(ask --id 13107 --option secret-option bonus.test)"
echo "notify: $(ask --opcode 4 bonus.test)"
echo "chain: $(ask chain.test)"
echo "wrongid: $(ask wrongid.test)"
echo "wrongq: $(ask wrongq.test)"
echo "web1: $(get 203.0.113.10:8080)"
echo "web2: $(get 203.0.113.20:8080)"
echo "tcp: $(get 10.88.0.1:53)"
EOF
wrun --net 'allow=*.web1.test,bonus.test,chain.test,wrongid.test,wrongq.test' --env DNSTOOL="$DNSTOOL" -- sh "$W/cell-dns.sh"
RD=$(last_rundir)
UP=$(cat "$W/upstream.log")
line_like "$OUT" '^dotted: rcode=5 id=same qd=1 an=0 ' "resolver: a label holding a dot (x.web1 + test) is refused by *.web1.test"
line_like "$OUT" '^dotted-web2: 7$' "resolver: and what the upstream would answer for it is not reachable"
line_like "$OUT" '^wild: rcode=0 id=same qd=1 an=1 ns=0 ar=0 answers=A:203\.0\.113\.10$' "resolver: *.web1.test still answers y.web1.test"
line_like "$OUT" '^two: rcode=1 id=same qd=0 ' "resolver: a message of two questions is answered FORMERR"
line_like "$OUT" '^notify: rcode=4 id=same qd=0 ' "resolver: an opcode other than QUERY is answered NOTIMP"
is "$(sed -E 's/^id=[0-9]+ opcode=0 qd=1 an=0 ns=0 ar=1 opt=0 q=([^ ]*) hex=.*/\1/' <<<"$UP" | tr '\n' ' ')" \
	"y.web1.test/1 bonus.test/1 chain.test/1 wrongid.test/1 wrongq.test/1 " \
	"resolver: the upstream got warren's queries only, each of one question and an EDNS record without options"
no_line_like "$UP" "^id=13107 |$(printf secret | od -An -tx1 | tr -d ' \n')" "resolver: nor the client's id, nor its data (a second question, an EDNS option)"
line_like "$OUT" '^option: rcode=0 id=same qd=1 an=1 ns=0 ar=1 answers=A:203\.0\.113\.10$' \
	"resolver: the client hears only the record that answers its question (no bonus record, no additional)"
line_like "$OUT" '^chain: rcode=0 id=same qd=1 an=2 ns=0 ar=0 answers=CNAME,A:203\.0\.113\.10$' "resolver: a CNAME chain is followed, records beside it dropped"
is "$(grep -E '^wrong(id|q):' <<<"$OUT" | tr '\n' ' ')" "wrongid: timeout wrongq: timeout " \
	"resolver: an answer with another id or another question is dropped"
line_like "$OUT" '^web1: 0$' "resolver: the answered address is reachable"
line_like "$OUT" '^web2: 7$' "resolver: the addresses of bonus records and dropped answers are not"
line_like "$OUT" '^tcp: 7$' "resolver: DNS over TCP to the gateway is refused"
is "$(jget "$RD/result.json" '[[x["name"] for x in d["network"]["dns"]["refused"]], sorted(x["dest"] for x in d["network"]["refused"])]')" \
	'[["x\\046web1.test"], ["10.88.0.1:53", "203.0.113.20:8080"]]' "resolver: the refused name is recorded escaped, the TCP connection counted"
# nat asks every name, in queries of warren's own too
: >"$W/upstream.log"
wrun --net nat --env DNSTOOL="$DNSTOOL" -- sh -c 'python3 "$DNSTOOL" ask --id 13107 --option secret-option 10.88.0.1 bonus.test'
line_like "$OUT" '^rcode=0 id=same qd=1 an=1 ns=0 ar=1 answers=A:203\.0\.113\.10$' "resolver, nat: the client hears only the record that answers its question"
like "$(cat "$W/upstream.log")" '^id=[0-9]+ opcode=0 qd=1 an=0 ns=0 ar=1 opt=0 q=bonus\.test/1 hex=[0-9a-f]+ from=[0-9]+$' "resolver, nat: the upstream got warren's query, not the client's"
# letter case carries nothing upstream: warren asks in lower case (the cell hears its own
# spelling back); each query leaves from a port of its own; a truncated answer has no records
: >"$W/upstream.log"
wrun --net 'allow=y.web1.test,tc.test' --dns-max-names 2 --env DNSTOOL="$DNSTOOL" -- sh -c \
	'for n in y.web1.test Y.web1.test y.WEB1.test Y.Web1.TEST y.wEb1.tEsT tc.test; do python3 "$DNSTOOL" ask --more 10.88.0.1 $n; done
	curl -s -m 3 -o /dev/null http://203.0.113.20:8080/; echo tc-addr=$?'
RD=$(last_rundir)
is "$(grep -c '^rcode=0 id=same qd=1 an=1 ns=0 ar=0 answers=A:203\.0\.113\.10 tc=0 q=' <<<"$OUT")" 5 "resolver: every case of an allowed name is answered"
is "$(grep -oE 'q=[^ ]+$' <<<"$OUT" | head -5 | tr '\n' ' ')" "q=y.web1.test q=Y.web1.test q=y.WEB1.test q=Y.Web1.TEST q=y.wEb1.tEsT " \
	"resolver: each answer spells the question as the cell did"
is "$("$PY" -c 'import sys; print(len({bytes.fromhex(l.split("hex=")[1].split()[0])[2:] for l in sys.stdin if " q=y.web1.test/1 " in l}))' <"$W/upstream.log")" 1 \
	"resolver: the upstream got one and the same query (but the id) for the five spellings"
is "$(jget "$RD/result.json" '[d["network"]["dns"]["names"], d["network"]["dns"]["names_capped"]]')" '[2, false]' "resolver: one name counted for them"
is "$(grep -oE 'from=[0-9]+$' "$W/upstream.log" | sort -u | wc -l)" 6 "resolver: each query came from a port of its own"
line_like "$OUT" '^rcode=0 id=same qd=1 an=0 ns=0 ar=0 answers= tc=1 q=tc\.test$' "resolver: a truncated upstream answer reaches the cell truncated, without records"
line_like "$OUT" '^tc-addr=7$' "resolver: and its address is not allowed"

# the host's conntrack table outlives a run, and the next run gets the same address: the
# entries a run made are deleted with it (else the next run's question from a port the last
# one used would follow the old entry to the old run's resolver port, and be lost); an entry
# of another address (127.0.0.1:40999 -> :9, the test's own) stays
ct_of() { grep -E "^ipv4 .* udp .* src=$1 dst=$2 sport=$3 dport=$4 " /proc/net/nf_conntrack; }
ct_addr() { grep -cE "src=$1 |dst=$1 " /proc/net/nf_conntrack; }
"$PY" -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 40999)); s.sendto(b"x", ("127.0.0.1", 9))'
CT_ASK='python3 "$DNSTOOL" ask --sport 40053 10.88.0.1 y.web1.test'
wrun --net 'allow=y.web1.test' --env DNSTOOL="$DNSTOOL" -- sh -c "$CT_ASK"'; python3 "$DNSTOOL" ask --sport 40054 10.88.0.1 y.web1.test
	python3 -c "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind((\"\", 40055)); s.sendto(b\"x\", (\"203.0.113.10\", 8080))"'
A1=$(jget "$(last_rundir)/result.json" 'd["network"]["address"]')
is "$(grep -c '^rcode=0 id=same qd=1 an=1 ns=0 ar=0 answers=A:203\.0\.113\.10$' <<<"$OUT")" 2 "conntrack: the first run's questions are answered"
is "$(ct_addr "$A1")" 0 "conntrack: the run's end leaves no entry of its address (its questions, its flow to web1)"
is "$(ct_of 127.0.0.1 127.0.0.1 40999 9 | wc -l)" 1 "conntrack: an entry of another address stays"
wrun --net 'allow=y.web1.test' --env DNSTOOL="$DNSTOOL" -- sh -c "$CT_ASK"
is "$(jget "$(last_rundir)/result.json" 'd["network"]["address"]')" "$A1" "conntrack: the next run gets the same address (the test's premise)"
like "$OUT" '^rcode=0 id=same qd=1 an=1 ns=0 ar=0 answers=A:203\.0\.113\.10$' \
	"conntrack: its question from the port the last run asked from is answered (not sent to the last run's resolver)"

# what enters the allow set, for how long; and nobody but the cell asks the resolver
cat >"$W/cell-ttl.sh" <<'EOF2'
for n in ttlmax.test ttlbig.test ttlshort.test inside.test; do echo "$n: $(python3 "$DNSTOOL" ask 10.88.0.1 $n)"; done
echo "big: $(curl -s -m 3 -o /dev/null http://203.0.113.20:8080/; echo $?)"
touch asked
i=0; while [ ! -e go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
EOF2
: >"$W/upstream.log"
rm -f "$WORK/asked" "$WORK/go"
start_bg "$WARREN" run --state "$STATE" --work "$WORK" --env DNSTOOL="$DNSTOOL" \
	--net 'allow=ttlmax.test,ttlbig.test,ttlshort.test,inside.test:8090,outside.test' -- sh "$W/cell-ttl.sh"
T_PID=$BG_PID
wait_for 20 test -e "$WORK/asked"
RD=$(last_rundir); ID=$(basename "$RD")
is "$(for s in n d; do nft list set inet warren "${s}_$ID" | grep -oE '[0-9.]+( \. [0-9]+)? timeout [0-9a-z]+'; done | tr '\n' ,)" \
	"203.0.113.10 timeout 1d,203.0.113.20 timeout 1d,203.0.113.20 . 8090 timeout 1m30s," \
	"allow set: TTL 2^32-1 and 2^31-1 held to a day, TTL 0 of another name does not cut it, no private, martian, host or cell address"
PORT=$(ss -Hlun src 10.88.0.1 | awk '{print $4}' | sed 's/.*://' | head -1)
like "$PORT" '^[0-9]+$' "the run's resolver listens on a port of the gateway"
ip -n "$INET" route add 10.88.0.0/24 via 198.51.100.1
is "$(ip netns exec "$INET" "$PY" "$DNSTOOL" ask --port "$PORT" 10.88.0.1 outside.test)" timeout \
	"resolver: no answer to the internet side (with a route to the cells' subnet)"
is "$("$PY" "$DNSTOOL" ask --port "$PORT" 10.88.0.1 outside.test)" timeout "resolver: nor to the host's own programs"
ip -n "$INET" route del 10.88.0.0/24
touch "$WORK/go"
wait_bg "$T_PID" 30
line_like "$(cat "$BG_OUT")" '^big: 0$' "allow set: the address of TTL 2^31-1 is reachable"
no_line_like "$(cat "$W/upstream.log")" 'q=outside\.test' "resolver: the outsiders' name never went upstream"
is "$(jget "$RD/result.json" '[d["network"]["dns"]["names"], d["network"]["dns"]["allow_failed"]]')" '[4, 0]' \
	"resolver: only the cell's names counted; no address failed to enter the set"
rm -f "$WORK/asked" "$WORK/go"
printf 'nameserver 203.0.113.53\n' >"$W/resolv.conf"

# ---------------------------------------------------------------- other runs
echo "cell A" >"$WORK/index.html"
start_bg "$WARREN" run --state "$STATE" --work "$WORK" --net nat --publish 18089:8000 --publish 198.51.100.1:18091:8000 -- \
	python3 -m http.server --bind 0.0.0.0 8000
A_PID=$BG_PID
wait_for 15 _net_up http://127.0.0.1:18089/
is "$(curl -s -m 3 http://127.0.0.1:18089/index.html)" "cell A" "--publish 18089:8000: a host program fetches a page served in the cell"
is "$(ip netns exec "$INET" curl -s -m 3 http://198.51.100.1:18091/index.html)" "cell A" \
	"--publish 198.51.100.1:18091:8000: the internet side fetches it too"
A_RD=$(last_rundir)
wr ps
line_like "$OUT" "^$(basename "$A_RD") .* 127\.0\.0\.1:18089->8000/tcp,198\.51\.100\.1:18091->8000/tcp " \
	"ps: the PORTS column names the published ports"
wr ps --json
is "$("$PY" -c 'import json, sys; print([(p["host_addr"], p["host_port"], p["cell_port"]) for r in json.load(sys.stdin) for p in r["published"]])' <<<"$OUT")" \
	"[('127.0.0.1', 18089, 8000), ('198.51.100.1', 18091, 8000)]" "ps --json: published ports"
is "$(jget "$A_RD/spec.json" '[(p["host_addr"], p["host_port"], p["cell_port"]) for p in d["published"]]')" \
	'[["127.0.0.1", 18089, 8000], ["198.51.100.1", 18091, 8000]]' "spec.json: published ports"
A_ADDR=$(grep -l run_ /run/warren/net/leases/* 2>/dev/null | head -1 | xargs -r basename)
like "$A_ADDR" '^10\.88\.0\.[0-9]+$' "the serving run has an address of warren's subnet"
# cells share no link layer: the bridge drops frames between its ports (curl times out)
wrun --net nat -- sh -c "curl -s -m 2 http://$A_ADDR:8000/index.html; echo rc=\$?"
like "$OUT" '^rc=(7|28)$' "nat: another run's cell is refused"
wrun --net allow=web1.test -- sh -c "curl -s -m 2 http://$A_ADDR:8000/index.html; echo rc=\$?"
like "$OUT" '^rc=(7|28)$' "allow: another run's cell is refused"
grep -qE "^ipv4 .* tcp .* dport=18089 .*src=$A_ADDR " /proc/net/nf_conntrack
ok $? "conntrack: the published port's connections are tracked with the cell as their reply source" ||
	diag "$(grep -E 'dport=180(89|91) ' /proc/net/nf_conntrack)"
kill -TERM "$A_PID"; wait_bg "$A_PID" 20
is "$(world_idle)" "" "after the published run: nothing of a run left"
is "$(ct_addr "$A_ADDR")" 0 "conntrack: nor an entry of its address (its published port's connections included)"
is "$(jget "$A_RD/result.json" '[(p["host_addr"], p["host_port"], p["cell_port"]) for p in d["published"]]')" \
	'[["127.0.0.1", 18089, 8000], ["198.51.100.1", 18091, 8000]]' "result.json: published ports"

# --publish refused before the run starts: a host port in use, an address the host does not
# have
"$PY" -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 18092)); s.listen(); time.sleep(60)' &
L_PID=$!
wait_for 10 sh -c 'ss -Hltn "sport = :18092" | grep -q 18092'
wrun --publish 18092:80 -- true
[ "$RC" = 125 ] && [ "$ERR" = "warren: --publish 127.0.0.1:18092:80: host port 18092 is in use on 127.0.0.1 (a program of the host listens on it); choose another HOSTPORT" ]
ok $? "--publish of a host port in use: one line, exit 125" || diag "rc $RC: $ERR"
kill "$L_PID"; wait "$L_PID" 2>/dev/null
wrun --publish 192.0.2.77:18093:80 -- true
[ "$RC" = 125 ] && [[ $ERR == "warren: --publish 192.0.2.77:18093:80: 192.0.2.77 is not an address of this host;"* ]]
ok $? "--publish on an address the host does not have: one line, exit 125" || diag "rc $RC: $ERR"

# ---------------------------------------------------------------- --net none with --publish
# An explicit --net none with --publish, in either order, gives the cell a link for its
# published ports only: a server in it is reachable from the host and from the internet side,
# and every connection the cell starts is refused: web1 (which nat reaches, above), names (no
# resolver), direct DNS to the world's upstream, the host. It was taken for the default and
# made nat (web1 reached, the record said nat); in the other order it was refused.
# none_publish LABEL HOSTPORT1 HOSTPORT2 OPTIONS...: one such run (127.0.0.1:HOSTPORT1 and
# 198.51.100.1:HOSTPORT2 to the cell's 8000) and its 11 tests.
none_publish() {
	local label=$1 p1=$2 p2=$3 pid rd id want_refused left
	shift 3
	echo "cell $label" >"$WORK/index.html"
	rm -f "$WORK/ready" "$WORK/done"
	wr_bg run --work "$WORK" --env DNSTOOL="$DNSTOOL" "$@" -- sh -c "python3 -m http.server --bind 0.0.0.0 8000 >/dev/null 2>&1 & \
		$CURL http://203.0.113.10:8080/; echo web1=\$?; $CURL http://web1.test:8080/; echo name=\$?; \
		python3 \"\$DNSTOOL\" ask 203.0.113.53 web1.test 2>&1 | sed \"s/^/dns: /\" | tail -1; $CURL http://198.51.100.1:8081/; echo host=\$?; \
		touch ready; i=0; while [ ! -e done ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i+1)); done; kill \$!"
	pid=$BG_PID
	wait_for 30 test -e "$WORK/ready" && wait_for 10 _net_up "http://127.0.0.1:$p1/"
	is "$($CURL "http://127.0.0.1:$p1/index.html")" "cell $label" "$label: a host program fetches a page served in the cell"
	is "$(ip netns exec "$INET" $CURL "http://198.51.100.1:$p2/index.html")" "cell $label" \
		"$label: the internet side fetches it too (198.51.100.1:$p2)"
	touch "$WORK/done"
	wait_bg "$pid" 30
	rd=$(last_rundir); id=$(basename "$rd")
	is "$RC" 0 "$label: the run ends well" || diag "$(cat "$BG_ERR")"
	line_like "$(cat "$BG_OUT")" '^web1=7$' "$label: the cell cannot reach web1 (nat can)"
	line_like "$(cat "$BG_OUT")" '^name=6$' "$label: names do not resolve (no resolver)"
	# (a root run's refusal is an ICMP error the unconnected socket does not see; rootless, the
	# cell's own firewall refuses the send)
	line_like "$(cat "$BG_OUT")" '^dns: (timeout|PermissionError: .*Operation not permitted)$' \
		"$label: DNS straight to the world's upstream gets no answer"
	line_like "$(cat "$BG_OUT")" '^host=7$' "$label: the host's own address is refused"
	is "$(jget "$rd/result.json" '[d["network"]["mode"], d["network"]["dns"]]')" '["none+publish", null]' \
		"$label: result.json says none+publish, no resolver"
	is "$(jget "$rd/spec.json" 'd["network_mode"]')" "none+publish" "$label: spec.json says none+publish"
	# a rootless run's refusals are not counted (docs/network.md)
	want_refused='["198.51.100.1:8081", "203.0.113.10:8080", "203.0.113.53:53"]'
	[ "$MODE" = user ] && want_refused='[]'
	is "$(jget "$rd/result.json" 'sorted(x["dest"] for x in d["network"]["refused"])')" "$want_refused" \
		"$label: the refusals are recorded"
	if [ "$MODE" = root ]; then left=$(net_left "$id"; world_idle); else left=$(pgrep -u "$TEST_USER_UID" -f "$PASTA_CMD"); fi
	is "$left" "" "$label: nothing of the run's network is left"
	rm -f "$WORK/index.html" "$WORK/ready" "$WORK/done"
}
none_publish "none+publish" 18097 18098 --net none --publish 18097:8000 --publish 198.51.100.1:18098:8000
none_publish "none+publish (--net none last)" 18099 18100 --publish 18099:8000 --publish 198.51.100.1:18100:8000 --net none

# ---------------------------------------------------------------- kill -9 and gc
rm -f "$WORK/asked"
start_bg "$WARREN" run --state "$STATE" --work "$WORK" --net allow=web1.test --publish 18090:80 --env DNSTOOL="$DNSTOOL" -- \
	sh -c 'python3 "$DNSTOOL" ask --sport 40060 10.88.0.1 web1.test; touch asked; sleep 30'
K_PID=$BG_PID
wait_for 15 test -e "$WORK/asked"
RD=$(last_rundir); ID=$(basename "$RD")
isnt "$(net_left "$ID")" "" "a live run has its veth, rules and lease"
K_ADDR=$(ls /run/warren/net/leases)
isnt "$(ct_addr "$K_ADDR")" 0 "a live run has conntrack entries of its address (its question)"
kill -KILL "$K_PID"; wait "$K_PID" 2>/dev/null
wait_for 10 sh -c '! ip -br link | grep -q "^wv"'
wr gc "$ID"
is "$RC" 0 "gc RUN after kill -9 of warren"
is "$(net_left "$ID")" "" "gc RUN: no veth, rule, set or lease of the run is left"
is "$(ct_addr "$K_ADDR")" 0 "gc RUN: nor a conntrack entry of its address"
[ -n "$(world_clean)" ]
ok $? "gc RUN: that run only: the bridge and the base tables stay (a plain gc's to remove)"
wr gc
is "$(world_clean)" "" "gc: the bridge and the table are gone with the last run"
# runs that ended normally keep the bridge and tables for the next one; gc removes them
wrun --net nat -- true
[ -n "$(world_clean)" ]
ok $? "a finished --net run leaves the bridge and table for the next run"
wr gc
is "$(world_clean)" "" "gc removes them when no run holds a lease"

# ---------------------------------------------------------------- refused words and rootless
wrun --net bogus -- true
is "$RC" 125 "--net bogus: exit 125"
one_warren_line "--net bogus: one line"
wrun --net allow=pypi.org:99999 -- true
like "$ERR" "not a port" "--net allow with a bad port: named"
# ---------------------------------------------------------------- rootless: nat through pasta
use_mode user
wrun --net allow=web1.test -- true
is "$RC" 125 "rootless --net allow=: refused"
like "$ERR" "allow= needs root: .*pasta" "rootless allow=: the refusal names why"
wrun --net nat --publish 18101:80 -- true
is "$RC" 125 "rootless nat with --publish: refused"
like "$ERR" "^warren: --publish with --net nat needs root: .*only with --net none" "rootless nat with --publish: the refusal names what to do"
if ! command -v pasta >/dev/null; then
	skip $((14 + 2 * 11)) "pasta is not installed (Debian package passt)"
else
	net_world_rootless
	wrun --net nat -- sh -c "ip -br addr show eth0 | tr -s ' '; ip route | head -1; $CURL http://203.0.113.10:8080/; $CURL http://web1.test:8080/; \
		$CURL http://198.51.100.1:8081/; echo host=\$?; $CURL http://169.254.169.254/; echo meta=\$?; $CURL http://10.88.0.1:8081/; echo gw=\$?; $CURL http://10.88.0.1:53/; echo gwdns=\$?; \
		ip addr add 10.88.0.200/24 dev eth0 2>&1; nft list ruleset 2>&1 | head -1"
	RD=$(last_rundir)
	is "$RC" 0 "rootless nat: the run ends well"
	line_like "$OUT" '^eth0 UNKNOWN 10\.88\.0\.2/24' "rootless nat: eth0 has the run's address (pasta's tap)"
	line_like "$OUT" '^default via 10\.88\.0\.1 dev eth0' "rootless nat: the default route via the gateway"
	is "$(grep -c 'this is web1' <<<"$OUT")" 2 "rootless nat: reaches a test host by address and by name"
	line_like "$OUT" '^host=7$' "rootless nat: the host's own address is refused"
	line_like "$OUT" '^meta=7$' "rootless nat: 169.254.169.254 is refused"
	line_like "$OUT" '^gw=7$' "rootless nat: the gateway is refused but for DNS"
	line_like "$OUT" '^gwdns=7$' "rootless nat: and for DNS over TCP"
	like "$OUT" "Operation not permitted" "rootless nat: the cell cannot change its addresses or read its firewall"
	is "$(jget "$RD/result.json" '[d["network"]["mode"], d["network"]["via"]]')" '["nat", "pasta"]' "rootless nat: recorded as nat via pasta"
	# pasta's process name is passt.avx2 (Debian), so it is found by its command line
	is "$(pgrep -u "$TEST_USER_UID" -f "$PASTA_CMD")" "" "rootless nat: pasta ended with the run"
	# a job's "pasta" in the worktree, on the caller's PATH (direnv's PATH_add bin): warren
	# runs the system's, never one of the caller's PATH (it ran the job's on the host before)
	wrun -- sh -c 'mkdir -p bin && printf "#!/bin/sh\ntouch \"\$(dirname \"\$0\")/../planted-ran\"\nexec /usr/bin/pasta \"\$@\"\n" >bin/pasta && chmod +x bin/pasta'
	wr_env PATH="$WORK/bin:$PATH" -- run --work "$WORK" --net nat -- true
	{ [ "$RC" = 0 ] && [ -x "$WORK/bin/pasta" ] && [ ! -e "$WORK/planted-ran" ]; }
	ok $? "rootless nat: a pasta the job put on the caller's PATH is not run (the system's is)" || diag "rc $RC: $ERR"
	rm -rf "$WORK/bin" "$WORK/planted-ran"
	# kill -9 of warren: pasta has a parent-death signal
	wr_bg run --work "$WORK" --net nat -- sleep 30
	K_PID=$BG_PID
	wait_for 15 pgrep -u "$TEST_USER_UID" -f "$PASTA_CMD" >/dev/null
	ok $? "rootless nat: pasta runs while the run does (seen as the user's)"
	kill -KILL "$K_PID"; wait "$K_PID" 2>/dev/null
	wait_for 10 sh -c "! pgrep -u $TEST_USER_UID -f '$PASTA_CMD' >/dev/null"
	is "$(pgrep -u "$TEST_USER_UID" -f "$PASTA_CMD")" "" "rootless nat: kill -9 of warren ends pasta too"
	# --net none with --publish, rootless: pasta forwards the published ports, the cell's own
	# firewall passes their replies and refuses all it starts
	none_publish "rootless none+publish" 18102 18103 --net none --publish 18102:8000 --publish 198.51.100.1:18103:8000
	none_publish "rootless none+publish (--net none last)" 18104 18105 --publish 18104:8000 --publish 198.51.100.1:18105:8000 --net none
fi
