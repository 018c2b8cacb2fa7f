#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# mcp_worktree.sh MODE - escape class mcp_worktree (issue 32, item 6): `warren mcp`'s tool calls
# are the model's words, not its user's: start_session's worktree must stay in the directory
# the server was started in (the project). The model asks for worktrees out of it: the
# filesystem's root, the project's parent (relative and absolute), and a link in the project
# leading out (one a command of a session could plant). A session on any of them would give
# the model's commands the user's files to write. Modes: root, user (the same face whatever
# makes the cell). See lib.sh.
CLASS=mcp_worktree
. "$(dirname "$0")/lib.sh"
face_setup root user
command -v python3 >/dev/null || verdict "untested: python3 is needed to read the answers"
mkdir -p "$D/home/project" "$D/state"
echo "mcp-worktree-secret-$$" >"$D/home/secret"
ln -s "$D/home" "$D/home/project/out"
mine "$D/home" "$D/home/project" "$D/state" "$D/home/secret"
chown -h "$CALLER_UID:$CALLER_GID" "$D/home/project/out"
asks=("/" ".." "$D/home" "out" "$D/home/project/out" "out/project/..")
{
	echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"escape","version":"0"}}}'
	for i in "${!asks[@]}"; do
		python3 -c 'import json,sys; print(json.dumps({"jsonrpc": "2.0", "id": int(sys.argv[1]) + 1, "method": "tools/call",
			"params": {"name": "start_session", "arguments": {"worktree": sys.argv[2], "idle": "30s"}}}))' "$i" "${asks[$i]}"
	done
} >"$D/in"
(cd "$D/home/project" && timeout -k 5 60 "${RUN[@]}" "$WARREN" mcp --state "$D/state" <"$D/in" >"$D/out" 2>"$D/err")
[ -s "$D/out" ] || verdict "untested: warren mcp answered nothing: $(head -c 300 "$D/err")"
got=$(python3 - "$D/out" "${#asks[@]}" <<'PYEOF'
import json, sys
answers = {m.get("id"): m for m in map(json.loads, open(sys.argv[1]))}
for i in range(1, int(sys.argv[2]) + 1):
    r = answers.get(i, {}).get("result", {})
    run = (r.get("structuredContent") or {}).get("run_id")
    text = (r.get("content") or [{}])[0].get("text", "no answer").splitlines()[0]
    print("%s\t%s" % (run or "-", text if not run else "a session"))
PYEOF
)
i=0
escape=
while IFS=$'\t' read -r run text; do
	echo "$CLASS: tried worktree '${asks[$i]}': $text"
	if [ "$run" != - ]; then
		escape="${escape:+$escape; }start_session took the worktree '${asks[$i]}' ($run)"
		w end --state "$D/state" "$run"
	elif [[ $text != "worktree "*": not in $D/home/project, the directory warren mcp works in"* ]]; then
		escape="${escape:+$escape; }worktree '${asks[$i]}' was refused for another reason than where it is: $text"
	fi
	i=$((i + 1))
done <<<"$got"
[ "$i" = "${#asks[@]}" ] || verdict "untested: $i answers for ${#asks[@]} asks"
[ -z "$escape" ] || escaped "$escape"
held
