#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# mcp.t - issue 32, item 6: `warren mcp`, an MCP server over stdio, driven by the MCP TypeScript
# SDK's own client (@modelcontextprotocol/sdk from npm, installed once into build/mcp-sdk;
# tests/mcp/client.mjs). Per mode (root, the unprivileged user), on the caller's own state and
# through a warren serve (--via): the tools listed; a session started on a worktree; an exec sees
# TMPDIR=/tmp and a uid that is not 0, and what it writes in /tmp is not in the host's; argv with
# env, cwd and stdin, and the command's status; a time limit that names its cause; two execs at
# once (the quick one answers first); a long output kept at its start and end; a long exec's
# progress; a call the client cancels (no answer; its command stopped: gone from the host within the
# grace, its record naming the cause); a worktree outside the server's directory refused; a wrong argument, an unknown one
# and a missing one (isError, one line) and an unknown tool (-32602); a start that fails (one
# line); end_session; an exec on the ended run (isError); nothing left running, mounted or in the host's /tmp, and nothing on the server's stderr.
# Through a plain pipe: the protocol's own mistakes (malformed JSON -32700 and the server goes
# on, an unknown method -32601, an invalid request -32600, bad params -32602, batches) and the
# version it answers. And `warren run --session`, which the server starts, on the command line.
. "$(dirname "$0")/../lib.sh"
. "$REPO/tests/serve-lib.sh"

# Tests: per mode 41 on the caller's state and 24 through a server; 18 through a pipe; 6 of
# warren run --session.
plan $(((41 + 24) * 2 + 18 + 6))

command -v node >/dev/null && command -v npm >/dev/null || bail_out "node and npm are needed: apt-get install nodejs npm (scripts/install-deps)"
[ "$(node -p 'parseInt(process.versions.node)')" -ge 18 ] || bail_out "node 18 or newer is needed for @modelcontextprotocol/sdk"
SDK=$REPO/build/mcp-sdk
mkdir -p "$TEST_SCRATCH/tmp"
npm_cached "$REPO/tests/mcp" "$SDK" ||
	bail_out "npm ci of tests/mcp into build/mcp-sdk failed (the npm registry is needed once for @modelcontextprotocol/sdk)"
cp "$REPO/tests/mcp/client.mjs" "$SDK/client.mjs"

OUTF=$TEST_SCRATCH/client.json
# client SERVER-WORDS...: tests/mcp/client.mjs against the server these words start (as the
# current mode's user), on $WORK; what it saw in $OUTF, its status in RC.
client() {
	local words
	words=$("$PY" -c 'import json,sys; print(json.dumps(sys.argv[1:]))' "${RUNNER[@]}" "$@")
	PROBE=mcp-probe-$$-$RANDOM CANCEL=$(uniq_arg)
	RC=0
	(cd "$SDK" && TMPDIR=$TEST_SCRATCH/tmp MCP_SERVER=$words MCP_WORK=$WORK MCP_PROBE=$PROBE MCP_CANCEL=$CANCEL \
		timeout -k 5 240 node client.mjs >"$OUTF" 2>"$TEST_SCRATCH/client.err") || RC=$?
	[ "$RC" = 0 ] || diag "client: exit $RC" "$(cat "$TEST_SCRATCH/client.err")"
}
# j EXPR: EXPR (python, over the client's JSON as d); strings and numbers raw, the rest as JSON.
j() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(json.dumps(v) if isinstance(v,(dict,list,bool)) or v is None else v)' "$OUTF" "$1" 2>/dev/null; }
# cancel_checks LABEL: the cancelled exec's command stopped (its process gone within the grace,
# 5s), and its cause in the record (RD).
cancel_checks() {
	is "$(j '[d["cancel_ran"], d["cancel_gone"], d["cancel_gone_ms"] < 5000]')" '[true, true, true]' \
		"$1 a call the client cancels has its command stopped: its process is gone from the host within the grace" ||
		diag "$(j '[d["cancel_ran"], d["cancel_gone"], d["cancel_gone_ms"]]')"
	like "$(jget "$RD/result.json" "[\"%s %s %s\" % (s['status'], s['exit_code'], s['cause']) for s in d['steps'] if s.get('kind') == 'exec' and '$CANCEL' in ' '.join(s['command'])][0]")" \
		'^interrupted 143 its caller went away at [0-9.]+s \(its connection closed\); sent SIGTERM to its process tree$' \
		"$1 ... and the session's record names the cause"
}
# one_line TEXT: TEXT is one line, not empty.
one_line() { [ -n "$1" ] && [ "$(printf '%s\n' "$1" | wc -l)" = 1 ]; }

# files_checks LABEL: the file tools' answers in the client's JSON.
files_checks() {
	is "$(j '[d["write"]["isError"], d["write"]["structured"]["written"]]')" '[false, 13]' "$1 write_file writes a file, making its directories"
	is "$(j '[d["read"]["structured"][k] for k in ("content", "size", "truncated")]')" '["h\u00e9llo\nworld\n", 13, false]' \
		"$1 read_file reads it back, UTF-8 intact"
	is "$(j 'd["read_exec"]["structured"]["stdout"]')" "héllo"$'\n'"world"$'\n'"$JOB_USER:644" "$1 the job sees what write_file wrote, the run user's, 0644"
	is "$(j 'd["run_tmp"]["structured"]["stdout"]')" "ran" "$1 write_file with a mode: a script in the cell's /tmp that runs"
	is "$(j '[(e["name"], e["type"], e["size"]) for e in d["ls"]["structured"]["entries"]]')" '[["hello.txt", "file", 13]]' "$1 list_files lists a directory"
	like "$(j 'd["binary"]["isError"] and d["binary"]["text"]')" "^/tmp/bin is not text \(3 bytes" "$1 read_file refuses a binary file, naming a way"
	like "$(j 'd["outside_file"]["isError"] and d["outside_file"]["text"]')" "/etc/passwd.*(worktree|/tmp)" "$1 a path outside the cell's files is refused, naming where files may be"
	is "$(j '[d["bad_parents"]["isError"], d["bad_parents"]["text"]]')" '[true, "parents must be true or false"]' "$1 a wrong argument type is named"
	like "$(j 'd["read_after_end"]["isError"] and d["read_after_end"]["text"]')" "$ID.*ended" "$1 read_file on an ended session is a tool error"
}

for mode in root user; do
	use_mode "$mode"
	m="[$mode]"
	mkdir_for_mode "$WORK/sub"

	# ---- on the caller's own state directory
	client "$WARREN" mcp --state "$STATE"
	is "$RC" 0 "$m the SDK's client connects to warren mcp, calls its tools and closes"
	is "$(j '" ".join(d["tools"])')" "start_session exec end_session read_file write_file list_files list_sessions" "$m tools/list names the tools"
	is "$(j 'd["server"]["name"]')" warren "$m initialize names the server"
	ID=$(j 'd["start"]["structured"]["run_id"]')
	RD=$STATE/runs/$ID
	like "$ID $(j 'd["start"]["structured"]["state"]')" '^run_[0-9A-Z]{26} ready$' "$m start_session starts a session and gives its run id once it is ready"
	is "$(j '[s["run_id"] for s in d["list"]["structured"]["sessions"]]')" "[\"$ID\"]" "$m list_sessions lists it"
	is "$(j 'd["exec"]["structured"]["stdout"]')" "/tmp"$'\n'"$JOB_UID" "$m an exec sees TMPDIR=/tmp and runs as the run user ..."
	like "$(j 'd["exec"]["structured"]["stdout"].split()[1]')" '^[1-9][0-9]*$' "$m ... whose uid is not 0"
	[ "$(j 'd["exec"]["structured"]["exit_code"]')" = 0 ] && [ ! -e "/tmp/$PROBE" ]
	ok $? "$m what the exec wrote in its /tmp (it ran) is not in the host's"
	is "$(j '[d["argv"]["structured"][k] for k in ("exit_code", "stdout", "stderr")]')" "[3, \"$WORK/sub\\nfrom stdin\\n\", \"bar\\n\"]" \
		"$m an exec of argv gets its env, cwd and stdin, and answers its status, stdout and stderr apart"
	is "$(j '[d["timeout"]["isError"], d["timeout"]["structured"]["exit_code"], d["timeout"]["structured"]["signal"]]')" '[false, 124, "TERM"]' \
		"$m an exec its timeout stopped answers 124 ..."
	like "$(j 'd["timeout"]["structured"]["cause"]')" "^exec time limit 1s reached at " "$m ... and names its cause"
	is "$(j 'd["order"]')" '["quick", "slow"]' "$m two execs at once: the quick one answers while the slow one runs"
	is "$(j '[d["long"]["structured"]["stdout_truncated"], d["long"]["structured"]["stdout"][:3], d["long"]["structured"]["stdout"][-8:]]')" \
		'[true, "aaa", "the-end\n"]' "$m a long output is kept at its start and its end ..."
	like "$(j 'str(len(d["long"]["structured"]["stdout"])) + " " + d["long"]["structured"]["stdout"][32760:32900]')" \
		'^6[0-9]{4} .*\[warren: [0-9]+ bytes cut here; ' "$m ... with a line saying what was cut"
	like "$(j 'd["progress"]')" '^[1-9]' "$m a long exec tells its progress to a client that asks for it"
	is "$(j '[d["cancelled"].get("thrown"), d["errors"], d["after_cancel"]["structured"]["stdout"]]')" '[true, [], "still here\n"]' \
		"$m a call the client cancels gets no answer, and the session goes on"
	cancel_checks "$m"
	is "$(j '[d["bad_args"]["isError"], d["bad_args"]["text"]]')" '[true, "command must be a command line (a string) or a list of words (strings)"]' \
		"$m a wrong argument is a tool error of one line"
	like "$(j 'd["unknown_arg"]["isError"] and d["unknown_arg"]["text"]')" "^unknown argument 'colour'; the arguments are run_id, command" \
		"$m an unknown argument is named"
	like "$(j 'd["missing"]["isError"] and d["missing"]["text"]')" "^run_id is missing: " "$m a missing argument is named"
	is "$(j '[d["unknown_tool"].get("thrown"), d["unknown_tool"].get("code")]')" '[true, -32602]' "$m an unknown tool is a JSON-RPC error -32602"
	msg=$(j 'd["bad_start"]["isError"] and d["bad_start"]["text"]')
	like "$msg" "^the session did not start: no image no-such-image in " "$m a start that fails says why ..."
	one_line "$msg"; ok $? "$m ... in one line"
	like "$(j 'd["outside"]["isError"] and d["outside"]["text"]')" \
		"^worktree $WORK/\.\. \(that is $(dirname "$WORK")\): not in $WORK, the directory warren mcp works in" \
		"$m a worktree outside the server's directory is refused, named"
	files_checks "$m"
	is "$(j '[d["end"]["structured"][k] for k in ("run_id", "state", "status", "exit_code")]')" "[\"$ID\", \"ended\", \"exited\", 0]" \
		"$m end_session ends the session (its record: exited 0)"
	like "$(j 'd["after_end"]["isError"] and d["after_end"]["text"]')" "^run $ID has ended; exec needs a live session" \
		"$m an exec on the ended run is a tool error naming it"
	is "$(j 'd["list_after"]["structured"]["sessions"]')" '[]' "$m list_sessions has none once it ended"
	is "$(jget "$RD/result.json" 'len([s for s in d["steps"] if s.get("kind") == "exec"])')" 12 "$m the record lists each exec"
	is "$(j 'repr(d["stderr"])')" "''" "$m the server wrote nothing on its stderr"
	nothing_left "$RD" "$m nothing is left of the session (scratch, mounts, processes, cgroups)"
	no_procs_matching "$STATE"; ok $? "$m no warren process of the state runs on"

	# ---- through a warren serve (as the mode's user)
	SOCK=$(dirname "$STATE")/mcp-api.sock
	start_server 15 --listen "unix:$SOCK" --slots 2; ok $? "$m warren serve answers"
	client "$WARREN" mcp --via "unix:$SOCK"
	ID=$(j 'd["start"]["structured"]["run_id"]')
	RD=$STATE/runs/$ID
	is "$RC $(j 'd["start"]["structured"]["state"]')" "0 ready" "$m --via: start_session starts a session through the server"
	is "$(j '[s["run_id"] for s in d["list"]["structured"]["sessions"]]')" "[\"$ID\"]" "$m --via: list_sessions lists it"
	is "$(j 'd["exec"]["structured"]["stdout"]')" "/tmp"$'\n'"$JOB_UID" "$m --via: an exec sees TMPDIR=/tmp and the run user"
	like "$(j 'd["timeout"]["structured"]["exit_code"]') $(j 'd["timeout"]["structured"]["cause"]')" "^124 exec time limit 1s reached at " \
		"$m --via: an exec's timeout names its cause"
	is "$(j 'd["order"]')" '["quick", "slow"]' "$m --via: two execs at once"
	like "$(j 'd["progress"]')" '^[1-9]' "$m --via: a long exec's progress"
	cancel_checks "$m --via:"
	like "$(j 'd["bad_start"]["isError"] and d["bad_start"]["text"]')" "^image: no image no-such-image in " "$m --via: the server's refusal of a start, in one line"
	like "$(j 'd["outside"]["isError"] and d["outside"]["text"]')" "^worktree $WORK/\.\. .*: not in $WORK" "$m --via: a worktree outside the server's directory is refused"
	files_checks "$m --via:"
	is "$(j '[d["end"]["structured"][k] for k in ("state", "status")]')" '["ended", "exited"]' "$m --via: end_session ends it"
	like "$(j 'd["after_end"]["isError"] and d["after_end"]["text"]')" "^$ID has ended; exec and files need a live session" "$m --via: an exec on the ended run is a tool error"
	is "$(j 'repr(d["stderr"])')" "''" "$m --via: nothing on the server's stderr"
	stop_server 30
	nothing_left "$RD" "$m --via: nothing is left of the session"
done

# ---- the protocol through a plain pipe (root's state)
use_mode root
pipe_out=$TEST_SCRATCH/pipe.out
printf '%s\n' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
	'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}' \
	'{"jsonrpc":"2.0","id":4,"method":"ping"' \
	'{"jsonrpc":"2.0","id":5,"method":"ping"}' \
	'{"jsonrpc":"2.0","id":6,"method":"resources/list"}' \
	'{"id":7,"method":"ping"}' \
	'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"no_such_tool"}}' \
	'{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}' \
	'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"exec","arguments":"x"}}' \
	'[{"jsonrpc":"2.0","id":11,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":12,"method":"nope"}]' \
	'[]' \
	'5' \
	'' \
	'{"jsonrpc":"2.0","id":13,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}' \
	'{"jsonrpc":"2.0","id":14,"result":{}}' \
	>"$TEST_SCRATCH/pipe.in"
RC=0
timeout -k 5 30 "$WARREN" mcp --state "$STATE" <"$TEST_SCRATCH/pipe.in" >"$pipe_out" 2>"$TEST_SCRATCH/pipe.err" || RC=$?
is "$RC" 0 "warren mcp ends 0 when its client closes its input"
# p ID EXPR: EXPR over the answer to request ID (as a), or over the list of all answers (ID all)
p() {
	"$PY" - "$pipe_out" "$1" "$2" <<'PYEOF' 2>&1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
key = sys.argv[2]
if key == "all":
    a = lines
elif key == "null":
    a = [m for m in lines if isinstance(m, dict) and m.get("id") is None]
elif key == "batch":
    a = [m for m in lines if isinstance(m, list)]
else:
    a = [m for m in lines if isinstance(m, dict) and str(m.get("id")) == key][0]
v = eval(sys.argv[3])
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)
PYEOF
}
is "$(p all 'len(a)')" 14 "each line of stdout is one JSON message, one for each request (none for notifications and responses)"
is "$(p 1 'a["result"]["protocolVersion"]')" 2024-11-05 "initialize answers the version the client asked for when it speaks it"
is "$(p 2 '[len(a["result"]["tools"]), any("outputSchema" in t for t in a["result"]["tools"])]')" '[7, false]' \
	"... and under 2024-11-05 tools/list gives no outputSchema ..."
is "$(p 3 '["structuredContent" in a["result"], json.loads(a["result"]["content"][0]["text"])]')" '[false, {"sessions": []}]' \
	"... and a tool's result no structuredContent, its JSON as text"
is "$(p null '[(m["error"]["code"], m["error"]["message"][:12]) for m in a]')" \
	'[[-32700, "Parse error:"], [-32600, "Invalid Requ"], [-32600, "Invalid Requ"]]' \
	"malformed JSON is -32700 (id null); an empty batch and a message that is no object -32600"
is "$(p 5 'a["result"]')" '{}' "the server goes on after malformed JSON (ping answered)"
is "$(p 6 'a["error"]["code"]')" -32601 "an unknown method is -32601"
like "$(p 6 'a["error"]["message"]')" "^Method not found: resources/list" "... naming it"
is "$(p 7 'a["error"]["code"]')" -32600 "a request without jsonrpc 2.0 is -32600, with its id"
like "$(p 8 '[a["error"]["code"], a["error"]["message"]]')" '^\[-32602, "Unknown tool: no_such_tool' "an unknown tool is -32602"
is "$(p 9 'a["error"]["code"]')" -32602 "tools/call without a name is -32602"
is "$(p 10 'a["error"]["code"]')" -32602 "tools/call with arguments that are not an object is -32602"
is "$(p batch '[[m["id"], "result" in m, m.get("error", {}).get("code")] for m in a[0]]')" '[[11, true, null], [12, false, -32601]]' \
	"a batch is answered as one array (its notification unanswered)"
is "$(p 13 'a["result"]["protocolVersion"]')" 2025-11-25 "a version it does not speak is answered with its newest"
[ -s "$pipe_out" ] && [ ! -s "$TEST_SCRATCH/pipe.err" ]
ok $? "it answered on stdout, and wrote nothing on stderr" || diag "$(cat "$TEST_SCRATCH/pipe.err")"
bounded "$WARREN" mcp --bogus
is "$RC" 125 "an unknown option exits 125 ..."
one_warren_line "... with one line"

# ---- warren run --session on the command line (what warren mcp starts)
wrun --session -- true
is "$RC" 125 "run --session with a command exits 125 ..."
like "$ERR" "^warren: --session takes no command: its commands come later \('warren exec RUN -- CMD'\)" "... with one line saying why"
wrun --session-idle 1m -- true
like "$RC $ERR" "^125 warren: --session-idle is a session's: add --session" "--session-idle without --session is refused"
wr_bg run --work "$WORK" --session --session-idle 2s
pid=$BG_PID
wait_bg "$pid" 30
RD=$(last_rundir)
is "$RC $(jget "$RD/result.json" 'str(d["exit_code"]) + " " + d["status"] + " " + d["cause"]["limit"] + ": " + d["cause"]["message"]')" \
	"$RC $RC limit session-idle: session idle for 2s; sent SIGTERM" "run --session without an exec ends at its idle time, with its cause (its status the record's)"
is "$(jget "$RD/spec.json" '" ".join(d["command"])')" "warren-job --session" "its record names it a session"
nothing_left "$RD" "nothing is left of it"
