#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# config.t - warren.conf (docs/guide.md, "Configuration"): each key honoured (state,
# limits.NAME, oci.root; net and net.pool are net-pool.t's, in a network world of its own;
# oci.host_network, oci.host_ipc and oci.host_pid oci-ns.t's), the
# environment over the file, the command line over both, <state>/defaults after the file; the
# caller's own file ($XDG_CONFIG_HOME/warren/warren.conf) read after /etc's, root reading only
# /etc's; every mistake one line naming FILE:LINE (an unknown key with the nearest one), and a
# file others may write, or not root's nor the caller's, refused. The host's /etc/warren is
# not touched: $WARREN_CONFIG names the one file read instead.
. "$(dirname "$0")/../lib.sh"

plan 30

use_mode root
CONF=$TEST_SCRATCH/warren.conf
MEM='d["limits"]["memory"]'
one_line() { [ -n "$ERR" ] && [ "$(wc -l <<<"$ERR")" = 1 ]; }

# ---------------------------------------------------------------- state
CST=$TEST_SCRATCH/conf-state
printf '# where runs go\nstate = %s\n' "$CST" >"$CONF"
bounded env WARREN_CONFIG="$CONF" "$WARREN" run --work "$WORK" -- true
is "$RC/$(rundir_count "$CST")" "0/1" "state = DIR: a run without --state is recorded there"
OTHER=$TEST_SCRATCH/env-state
bounded env WARREN_CONFIG="$CONF" WARREN_STATE="$OTHER" "$WARREN" run --work "$WORK" -- true
is "$RC/$(rundir_count "$OTHER")/$(rundir_count "$CST")" "0/1/1" "WARREN_STATE wins over the file"
bounded env WARREN_CONFIG="$CONF" WARREN_STATE="$OTHER" "$WARREN" run --state "$STATE" --work "$WORK" -- true
is "$RC/$(rundir_count "$STATE")/$(rundir_count "$OTHER")" "0/1/1" "--state wins over both"
bounded env WARREN_CONFIG="$CONF" "$WARREN" selfcheck
line_like "$OUT" "^note  configuration files: $CONF \(\\\$WARREN_CONFIG\)$" "selfcheck names the file read"
line_like "$OUT" "^note    state = $CST \($CONF:2\)$" "selfcheck lists each key with its file and line"
line_like "$OUT" "^note  state directory: $CST \($CONF:2\)$" "selfcheck: the state directory in force and where it came from"

# ---------------------------------------------------------------- limits
printf 'limits.memory = 300M\nlimits.pids = 77\n' >"$CONF"
wr_env WARREN_CONFIG="$CONF" -- run --work "$WORK" -- true
is "$(jget "$(last_rundir)/result.json" "[$MEM, d['limits']['pids']]")" "[$((300 << 20)), 77]" "limits.NAME: the run's default limits"
wr_env WARREN_CONFIG="$CONF" -- run --work "$WORK" --memory 400M -- true
is "$(jget "$(last_rundir)/result.json" "$MEM")" "$((400 << 20))" "--memory wins over the file"
printf 'memory = 200M\n' >"$STATE/defaults"
wr_env WARREN_CONFIG="$CONF" -- run --work "$WORK" -- true
is "$(jget "$(last_rundir)/result.json" "[$MEM, d['limits']['pids']]")" "[$((200 << 20)), 77]" "<state>/defaults still works, read after the file"
wr_env WARREN_CONFIG="$CONF" -- selfcheck
line_like "$OUT" "^note  default limits: .*memory 200 MiB, pids 77, .*\(from the host's size, $CONF:1 \(limits.memory\), $CONF:2 \(limits.pids\), $STATE/defaults;" \
	"selfcheck: the default limits and each place they came from"
rm "$STATE/defaults"

# ---------------------------------------------------------------- oci.root
printf 'oci.root = %s\n' "$TEST_SCRATCH/ocir" >"$CONF"
bounded env WARREN_CONFIG="$CONF" "$WARREN" oci state nosuch
like "$ERR" "container nosuch does not exist \(under $TEST_SCRATCH/ocir\)" "oci.root: the OCI face's state root"
bounded env WARREN_CONFIG="$CONF" "$WARREN" oci --root "$TEST_SCRATCH/ocir2" state nosuch
like "$ERR" "\(under $TEST_SCRATCH/ocir2\)" "runc's --root wins over oci.root"

# ---------------------------------------------------------------- mistakes: one line each
bad() { # TEXT WANT DESC
	printf '%s\n' "$1" >"$CONF"
	chmod 644 "$CONF"
	bounded env WARREN_CONFIG="$CONF" "$WARREN" ps
	{ [ "$RC" = 125 ] && one_line && [[ $ERR == "warren: "$2 ]]; }
	ok $? "$3" || diag "$ERR"
}
bad 'net.pol = 10.0.0.0/16' "$CONF:1: unknown key 'net.pol'; did you mean 'net.pool'?" "an unknown key: its line and the nearest key"
bad $'# x\ncolour = blue' "$CONF:2: unknown key 'colour'; the keys are state, oci.root, net, net.pool, limits.time, limits.cpu-time, limits.memory, limits.pids, limits.output, limits.scratch, oci.host_network, oci.host_ipc, oci.host_pid, oci.host_to_container" \
	"an unknown key far from all: the keys there are"
bad 'state = runs' "$CONF:1: state: 'runs' is not an absolute path; give the directory as /DIR" "state: a relative path refused"
bad 'net = natt' "$CONF:1: net: 'natt' is not a network mode *" "net: a bad mode refused"
bad 'net.pool = 10.88.0.0' "$CONF:1: net.pool: '10.88.0.0' is not an IPv4 network from /8 to /28 (e.g. 10.88.0.0/16)" "net.pool: a bad network refused"
bad 'limits.memory = 0' "$CONF:1: limits.memory: '0' is zero, no limit a run can keep; *" "limits.memory: zero refused"
bad 'oci.host_network = yes' "$CONF:1: oci.host_network: 'yes' is neither allow nor refuse; give one of them" "oci.host_network: a value not allow or refuse refused"
bad 'limits.time = soon' "$CONF:1: limits.time: 'soon' is not a duration (e.g. 30s, 10m, 1h30m, 250ms) or none" "limits.time: a bad duration refused"
bad 'memory 2G' "$CONF:1: 'memory 2G' is not a line key = value" "a line without = refused"
# a file that is wrong does not stop what a user reaches for to mend it
printf 'colour = blue\n' >"$CONF"
chmod 644 "$CONF"
CWANT="warren: $CONF:1: unknown key 'colour'; *"
bounded env WARREN_CONFIG="$CONF" "$WARREN" --help
{ [ "$RC" = 0 ] && one_line && [[ $ERR == $CWANT ]] && [[ $OUT == "usage: warren COMMAND"* ]]; }
ok $? "a bad file: 'warren --help' still answers, with the file's line as a warning" || diag "rc=$RC $ERR"
bounded env WARREN_CONFIG="$CONF" "$WARREN" run --help
{ [ "$RC" = 0 ] && [[ $OUT == *"usage: warren run"* ]]; }
ok $? "a bad file: 'warren run --help' still answers" || diag "rc=$RC $ERR"
bounded env WARREN_CONFIG="$CONF" "$WARREN" selfcheck
{ [ "$RC" = 1 ] && grep -qx "FAIL  configuration: $CONF:1: unknown key 'colour'; .*; the defaults below stand in for it" <<<"$OUT" &&
	[[ $OUT == *"selfcheck: FAILED" ]]; }
ok $? "a bad file: selfcheck runs, and fails naming it" || diag "rc=$RC $OUT"
bounded env WARREN_CONFIG="$CONF" "$WARREN" run --work "$WORK" -- sh -c 'echo -h'
[ "$RC" = 125 ]
ok $? "a bad file: a run whose command has -h still stops" || diag "rc=$RC $ERR"
printf 'limits.pids = 50\n' >"$CONF"
chmod 666 "$CONF"
bounded env WARREN_CONFIG="$CONF" "$WARREN" ps
{ [ "$RC" = 125 ] && one_line && [[ $ERR == "warren: the configuration file $CONF is refused: others may write it (owner uid 0, mode 0666); "* ]]; }
ok $? "a file others may write: refused in one line" || diag "$ERR"
chmod 644 "$CONF"
chown "$TEST_USER_UID" "$CONF"
bounded env WARREN_CONFIG="$CONF" "$WARREN" ps
{ [ "$RC" = 125 ] && one_line && [[ $ERR == *"it belongs to neither root nor you (owner uid $TEST_USER_UID, mode 0644)"* ]]; }
ok $? "root: a file of another user's refused" || diag "$ERR"

# ---------------------------------------------------------------- the caller's own file
UCONF=$U_HOME/cfg/warren/warren.conf
mkdir -p "$(dirname "$UCONF")"
printf 'limits.pids = 55\n' >"$UCONF"
chown -R "$TEST_USER_UID:$TEST_USER_GID" "$U_HOME/cfg"
use_mode user
wr_env XDG_CONFIG_HOME="$U_HOME/cfg" -- selfcheck
line_like "$OUT" "^note    limits.pids = 55 \($UCONF:1\)$" "a user's own file is read"
chmod 664 "$UCONF"
wr_env XDG_CONFIG_HOME="$U_HOME/cfg" -- ps
{ [ "$RC" = 125 ] && one_line && [[ $ERR == *"$UCONF is refused: its group may write it"* ]]; }
ok $? "a user's file its group may write: refused" || diag "$ERR"
chmod 644 "$UCONF"
use_mode root
printf 'bogus = 1\n' >"$UCONF"
bounded env XDG_CONFIG_HOME="$U_HOME/cfg" "$WARREN" selfcheck
{ [ "$RC" != 125 ] && ! grep -q "$UCONF" <<<"$OUT$ERR"; }
ok $? "root reads only /etc's file, never \$XDG_CONFIG_HOME's" || diag "$OUT$ERR"
