// SPDX-License-Identifier: Apache-2.0
// client.mjs - tests/integration/mcp.t's client of `warren mcp`: the MCP TypeScript SDK's own
// Client over its StdioClientTransport (the SDK spawns the server and speaks the protocol; no
// message here is made by hand). It lists the tools, starts a session on a worktree, runs
// commands in it (a shell line, argv with env, cwd and stdin, a time limit, two at once, a long
// output, one long enough for progress, one it cancels, whose process it then looks for on the
// host), checks the mistakes a model makes (a wrong argument,
// an unknown one, an unknown tool), ends the session, then runs a command on the ended run; and
// prints what it saw as one JSON object for mcp.t to judge. A worktree outside the server's
// directory is refused.
//
// Environment: MCP_SERVER (a JSON array: the command that starts `warren mcp`, with its
// arguments), MCP_WORK (the server's directory and the session's worktree), MCP_PROBE (a file name the cell writes in its
// /tmp, for mcp.t to look for in the host's), MCP_CANCEL (a sleep's duration no other process
// on the host has: the command it cancels).
import { readdirSync, readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [command, ...args] = JSON.parse(process.env.MCP_SERVER);
const work = process.env.MCP_WORK;
const out = {};
const transport = new StdioClientTransport({ command, args, cwd: work, stderr: 'pipe' });
let stderr = '';
transport.stderr.on('data', d => { stderr += d; });
const client = new Client({ name: 'warren-mcp-test', version: '1.0.0' });
await client.connect(transport);
out.server = client.getServerVersion();
out.instructions = client.getInstructions() ?? null;

// one tool call: the result as the model would get it, or what the SDK threw
async function call(name, args, opts) {
	const t0 = Date.now();
	try {
		const r = await client.callTool({ name, arguments: args }, undefined, opts);
		return {
			isError: !!r.isError, text: r.content?.[0]?.text ?? null, content: r.content?.length ?? 0,
			structured: r.structuredContent ?? null, ms: Date.now() - t0,
		};
	} catch (e) {
		return { thrown: true, code: e.code ?? null, message: String(e.message), ms: Date.now() - t0 };
	}
}

const listed = await client.listTools();
out.tools = listed.tools.map(t => t.name);
out.exec_schema = listed.tools.find(t => t.name === 'exec')?.inputSchema ?? null;
out.start = await call('start_session', { worktree: work, idle: '2m' });
const id = out.start.structured?.run_id ?? 'none';
out.list = await call('list_sessions', {});
out.exec = await call('exec', { run_id: id, command: 'echo $TMPDIR; id -u; touch /tmp/' + process.env.MCP_PROBE });
out.argv = await call('exec', {
	run_id: id, command: ['sh', '-c', 'echo "$FOO" >&2; pwd; cat; exit 3'], env: { FOO: 'bar' }, cwd: 'sub',
	stdin: 'from stdin\n',
});
out.timeout = await call('exec', { run_id: id, command: 'sleep 50', timeout: '1s' });
// two at once: the short one answers while the long one runs
const order = [];
const slow = call('exec', { run_id: id, command: 'sleep 3; echo slow' }).then(r => { order.push('slow'); return r; });
const quick = call('exec', { run_id: id, command: 'echo quick' }).then(r => { order.push('quick'); return r; });
await Promise.all([slow, quick]);
out.order = order;
out.long = await call('exec', { run_id: id, command: 'head -c 300000 /dev/zero | tr "\\0" a; echo; echo the-end' });
let progress = 0;
out.progress_exec = await call('exec', { run_id: id, command: 'sleep 6' },
	{ onprogress: () => { progress++; }, resetTimeoutOnProgress: true });
out.progress = progress;
// a call the client cancels (its AbortSignal): the SDK sends notifications/cancelled; the server
// sends no answer (an answer would reach onerror as one to an unknown request), the session
// stops the command (its process, "sleep MCP_CANCEL", is gone from the host), and goes on
const errors = [];
client.onerror = e => { errors.push(String(e.message ?? e)); };
const marker = process.env.MCP_CANCEL;
const sleeping = () => readdirSync('/proc').filter(p => /^[0-9]+$/.test(p)).some(p => {
	try {
		return readFileSync(`/proc/${p}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
	} catch {
		return false;
	}
});
async function until(pred, ms) {
	for (const t0 = Date.now(); Date.now() - t0 < ms; await new Promise(r => setTimeout(r, 50)))
		if (pred()) return true;
	return pred();
}
const abort = new AbortController();
const cancelled = call('exec', { run_id: id, command: 'sleep ' + marker }, { signal: abort.signal });
out.cancel_ran = await until(sleeping, 10000);
abort.abort('enough');
out.cancelled = await cancelled;
const t0 = Date.now();
out.cancel_gone = await until(() => !sleeping(), 10000);
out.cancel_gone_ms = Date.now() - t0;
out.after_cancel = await call('exec', { run_id: id, command: 'echo still here' });
out.errors = errors;
out.bad_args = await call('exec', { run_id: id, command: 42 });
out.unknown_arg = await call('exec', { run_id: id, command: 'true', colour: 'red' });
out.missing = await call('exec', { command: 'true' });
out.unknown_tool = await call('no_such_tool', {});
out.bad_start = await call('start_session', { image: 'no-such-image' });
out.outside = await call('start_session', { worktree: '..' });
// a session's files: written, read back, listed; a binary file, a path outside the cell's files
out.write = await call('write_file', { run_id: id, path: 'sub/notes/hello.txt', content: 'héllo\nworld\n', parents: true });
out.read = await call('read_file', { run_id: id, path: 'sub/notes/hello.txt' });
out.read_exec = await call('exec', { run_id: id, command: 'cat sub/notes/hello.txt; stat -c %U:%a sub/notes/hello.txt' });
out.write_tmp = await call('write_file', { run_id: id, path: '/tmp/run.sh', content: '#!/bin/sh\necho ran\n', mode: '0755' });
out.run_tmp = await call('exec', { run_id: id, command: '/tmp/run.sh' });
out.ls = await call('list_files', { run_id: id, path: 'sub/notes' });
out.binary_make = await call('exec', { run_id: id, command: 'printf "a\\000b" > /tmp/bin' });
out.binary = await call('read_file', { run_id: id, path: '/tmp/bin' });
out.outside_file = await call('read_file', { run_id: id, path: '/etc/passwd' });
out.bad_parents = await call('write_file', { run_id: id, path: 'x', content: '', parents: 'yes' });
out.end = await call('end_session', { run_id: id });
out.read_after_end = await call('read_file', { run_id: id, path: 'sub/notes/hello.txt' });
out.after_end = await call('exec', { run_id: id, command: 'true' });
out.list_after = await call('list_sessions', {});
await client.close();
out.stderr = stderr;
console.log(JSON.stringify(out));
