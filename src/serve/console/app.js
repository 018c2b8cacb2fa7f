// SPDX-License-Identifier: Apache-2.0
/* app.js - the warren console: the runs list and a run's page, from the API v1 of this server
 * (docs/api.md). Everything a run wrote (names, labels, causes, logs) is untrusted: it reaches
 * the page only as text nodes (textContent), never as markup; a log's ANSI colours become
 * spans with classes. */
'use strict';

const RUN_ID = /^run_[0-9A-HJKMNP-TV-Z]{26}$/;
const LOG_MAX_LINES = 20000;  /* a log pane shows its newest lines: the browser stays quick */
const LOG_MAX_NODES = 60000;
const ENDED_STRONG = new Set(['limit', 'signaled', 'interrupted', 'error']);
let view = null;         /* the current view: { stop() } */
let skew = 0;            /* the server's clock minus ours, ms */

/* ---- small helpers ---- */

function el(tag, cls, ...kids) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const k of kids) {
    if (k === null || k === undefined) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

function serverNow() { return Date.now() + skew; }

function fmtSecs(s) {
  if (s === null || s === undefined || isNaN(s)) return '-';
  if (s < 60) return s.toFixed(1) + 's';
  const m = Math.floor(s / 60), sec = Math.floor(s % 60);
  if (m < 60) return m + 'm' + String(sec).padStart(2, '0') + 's';
  return Math.floor(m / 60) + 'h' + String(m % 60).padStart(2, '0') + 'm';
}

function fmtMs(ms) {
  if (!ms) return '';
  if (ms % 3600000 === 0) return ms / 3600000 + 'h';
  if (ms % 60000 === 0) return ms / 60000 + 'm';
  if (ms % 1000 === 0) return ms / 1000 + 's';
  return ms + 'ms';
}

function fmtSize(n) {
  if (n === null || n === undefined) return '-';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : String(n)) + ' ' + u[i];
}

/* A time as 2026-12-03 11:05:37 in the browser's zone (today: the time alone). */
function when(iso) {
  const t = new Date(iso), p = (n) => String(n).padStart(2, '0');
  const day = t.getFullYear() + '-' + p(t.getMonth() + 1) + '-' + p(t.getDate());
  const time = p(t.getHours()) + ':' + p(t.getMinutes()) + ':' + p(t.getSeconds());
  return t.toDateString() === new Date().toDateString() ? time : day + ' ' + time;
}

function since(iso) { return iso ? (serverNow() - Date.parse(iso)) / 1000 : null; }

async function api(path, opts) {
  const r = await fetch(path, Object.assign({ credentials: 'same-origin', headers: { Accept: 'application/json' } }, opts || {}));
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  if (!r.ok) {
    const err = new Error(body && body.error ? body.error : r.status + ' ' + r.statusText);
    err.status = r.status;
    throw err;
  }
  return body;
}

function showError(e) {
  const main = document.getElementById('main');
  main.replaceChildren(el('div', 'error-box',
    e.status === 401 ? 'Not signed in: open /?token=TOKEN (the server\'s --token-file) once in this browser. ' : '',
    e.message));
}

function stateBadge(run) {
  const st = run.state || (run.status) || '?';
  let cls = 'state ' + st;
  if (st === 'exited') cls += run.exit_code === 0 ? ' ok' : ' fail';
  const text = st === 'exited' ? 'exited ' + run.exit_code : st === 'queued' && run.queue_position ? 'queued #' + run.queue_position : st;
  return el('span', cls, text);
}

/* What failed the run: a job's failed step and its cause, else the run's cause or error. */
function causeText(run) {
  const f = run.failed_step;
  if (f && f.name) return 'step ' + f.number + ' ' + f.name + ': ' + (f.cause || 'failed');
  if (run.cause && run.cause.message) return run.cause.message;
  if (run.error) return run.error;
  return '';
}

/* A job's steps that failed under continue-on-error (it went on), apart from what failed it. */
function toleratedText(run) {
  const n = run.tolerated_failures;
  return n ? n + (n === 1 ? ' step' : ' steps') + ' failed but tolerated (continue-on-error)' : '';
}

function runDuration(run) {
  if (run.duration_s !== null && run.duration_s !== undefined) return run.duration_s;
  if (run.started_at && !run.ended_at) return since(run.started_at);
  return null;
}

function labels(obj) {
  const span = el('span', 'labels');
  for (const k of Object.keys(obj || {}).sort()) span.append(el('span', 'label', k + '=' + obj[k]));
  return span;
}

/* ---- ANSI SGR to spans ---- */

/* One regex splits a log line into text and escape sequences: CSI (SGR kept, the rest
 * dropped), OSC, nF escapes (ESC ( B), two-byte escapes and other control characters
 * (dropped). */
const SGR_PARAMS = /^[0-9;:]*$/;  /* a private CSI ... m (ESC [ > 4 ; 2 m) is not SGR */
const ESC = /\x1b\[([0-?]*)[ -\/]*([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -\/]+[0-~]?|\x1b[@-Z\\-_]?|[\x00-\x08\x0b-\x1f\x7f]/g;

function sgr(st, params) {
  const p = params === '' ? [0] : params.split(/[;:]/).map((x) => (x === '' ? 0 : parseInt(x, 10)));
  for (let i = 0; i < p.length; i++) {
    const n = p[i];
    if (n === 0) { st.b = st.d = st.i = st.u = st.inv = false; st.fg = st.bg = null; }
    else if (n === 1) st.b = true;
    else if (n === 2) st.d = true;
    else if (n === 3) st.i = true;
    else if (n === 4) st.u = true;
    else if (n === 7) st.inv = true;
    else if (n === 22) st.b = st.d = false;
    else if (n === 23) st.i = false;
    else if (n === 24) st.u = false;
    else if (n === 27) st.inv = false;
    else if (n >= 30 && n <= 37) st.fg = n - 30;
    else if (n >= 90 && n <= 97) st.fg = n - 90 + 8;
    else if (n === 39) st.fg = null;
    else if (n >= 40 && n <= 47) st.bg = n - 40;
    else if (n >= 100 && n <= 107) st.bg = n - 100 + 8;
    else if (n === 49) st.bg = null;
    else if ((n === 38 || n === 48) && p[i + 1] === 5 && i + 2 < p.length) {
      st[n === 38 ? 'fg' : 'bg'] = p[i + 2] & 255; i += 2;
    } else if ((n === 38 || n === 48) && p[i + 1] === 2 && i + 4 < p.length) {
      st[n === 38 ? 'fg' : 'bg'] = 'rgb(' + (p[i + 2] & 255) + ',' + (p[i + 3] & 255) + ',' + (p[i + 4] & 255) + ')'; i += 4;
    }
  }
}

function color256(n) {
  if (n < 232) {
    n -= 16;
    const v = (x) => (x ? 55 + x * 40 : 0);
    return 'rgb(' + v(Math.floor(n / 36)) + ',' + v(Math.floor(n / 6) % 6) + ',' + v(n % 6) + ')';
  }
  const g = 8 + (n - 232) * 10;
  return 'rgb(' + g + ',' + g + ',' + g + ')';
}

function styled(st, text) {
  let fg = st.fg, bg = st.bg;
  if (st.inv) { fg = st.bg === null ? 0 : st.bg; bg = st.fg === null ? 7 : st.fg; }
  if (!st.b && !st.d && !st.i && !st.u && fg === null && bg === null) return document.createTextNode(text);
  const s = document.createElement('span');
  const cls = [];
  if (st.b) cls.push('b');
  if (st.d) cls.push('d');
  if (st.i) cls.push('i');
  if (st.u) cls.push('u');
  for (const [v, pre, prop] of [[fg, 'fg', 'color'], [bg, 'bg', 'backgroundColor']]) {
    if (typeof v === 'number' && v < 16) cls.push(pre + v);
    else if (typeof v === 'number') s.style[prop] = color256(v);
    else if (typeof v === 'string') s.style[prop] = v;
  }
  s.className = cls.join(' ');
  s.textContent = text;
  return s;
}

/* The SGR state after a line that is not shown. */
function sgrScan(st, line) {
  if (line.indexOf('\x1b') < 0) return;
  let m;
  ESC.lastIndex = 0;
  while ((m = ESC.exec(line)) !== null) {
    if (m[2] === 'm' && SGR_PARAMS.test(m[1])) sgr(st, m[1]);
    if (m[0].length === 0) ESC.lastIndex++;
  }
}

/* Append one line of a log to frag, SGR state st carried from line to line. */
function renderLine(frag, st, line) {
  let last = 0, m;
  ESC.lastIndex = 0;
  while ((m = ESC.exec(line)) !== null) {
    if (m.index > last) frag.append(styled(st, line.slice(last, m.index)));
    if (m[2] === 'm' && SGR_PARAMS.test(m[1])) sgr(st, m[1]);
    last = ESC.lastIndex;
    if (m[0].length === 0) ESC.lastIndex++;
  }
  if (last < line.length) frag.append(styled(st, line.slice(last)));
  frag.append(document.createTextNode('\n'));
}

/* ---- the runs list ---- */

function listView() {
  const main = document.getElementById('main');
  const tbody = el('tbody');
  const table = el('table', 'runs');
  table.id = 'runs';
  const head = el('tr');
  for (const h of ['status', 'name', 'run', 'cause', 'duration', 'labels', 'started']) head.append(el('th', null, h));
  table.append(el('thead', null, head), tbody);
  const note = el('p', 'muted', '');
  /* filters, as the API has them: state and one label */
  const stateSel = el('select');
  stateSel.id = 'filter-state';
  for (const st of ['', 'live', 'queued', 'running', 'exited', 'signaled', 'limit', 'interrupted', 'error']) {
    const o = el('option', null, st || 'any state');
    o.value = st;
    stateSel.append(o);
  }
  const labelIn = el('input');
  labelIn.id = 'filter-label';
  labelIn.placeholder = 'label k=v';
  stateSel.addEventListener('change', () => poll());
  labelIn.addEventListener('change', () => poll());
  main.replaceChildren(el('div', 'toolbar', el('h1', null, 'Runs'), stateSel, labelIn), table, note);
  document.title = 'runs · warren';
  let runs = [];

  function render() {
    const rows = runs.map((r) => {
      const tr = el('tr', 'run-row');
      tr.dataset.id = r.id;
      tr.dataset.state = r.state;
      const cause = causeText(r);
      const tol = toleratedText(r);
      const strong = ENDED_STRONG.has(r.state) || !!r.failed_step;
      const link = el('a', null, r.id);
      link.href = '#/runs/' + r.id;
      const dur = el('td', 'clock duration', fmtSecs(runDuration(r)));
      tr.append(el('td', null, stateBadge(r)), el('td', 'name', r.name || ''), el('td', 'id', link),
        el('td', 'cause' + (strong && cause ? ' strong' : ''), cause, tol ? el('span', 'tolerated', (cause ? '; ' : '') + tol) : null),
        dur, el('td', null, labels(r.labels)),
        el('td', 'muted when', r.started_at ? when(r.started_at) : r.submitted_at ? 'submitted ' + when(r.submitted_at) : ''));
      tr.addEventListener('click', (ev) => { if (ev.target.tagName !== 'A') location.hash = '#/runs/' + r.id; });
      return tr;
    });
    tbody.replaceChildren(...rows);
    note.textContent = runs.length ? (more ? 'the newest ' + runs.length + ' shown' : '')
      : stateSel.value || labelIn.value ? 'No run matches.' : 'No runs yet. Submit one: warren submit -- make test';
  }
  let more = false;

  function tick() {
    for (const tr of tbody.children) {
      const r = runs.find((x) => x.id === tr.dataset.id);
      if (r && r.state === 'running') tr.querySelector('.duration').textContent = fmtSecs(runDuration(r));
    }
  }

  let stopped = false;
  async function poll() {
    if (stopped) return;
    clearTimeout(pollTimer);
    try {
      const q = new URLSearchParams({ limit: '200' });
      if (stateSel.value) q.set('state', stateSel.value);
      if (labelIn.value.trim()) q.set('label', labelIn.value.trim());
      const j = await api('/v1/runs?' + q);
      runs = j.runs || [];
      more = !!j.next_cursor;
      render();
    } catch (e) {
      if (e.status === 401) { showError(e); stopped = true; return; }
      note.textContent = e.status === 400 ? e.message : 'cannot reach the server: ' + e.message;
    }
    if (!stopped) pollTimer = setTimeout(poll, 2000);
  }
  let pollTimer = null;
  const tickTimer = setInterval(tick, 250);
  poll();
  return { stop() { stopped = true; clearTimeout(pollTimer); clearInterval(tickTimer); } };
}

/* ---- a run's page ---- */

const MARK = { waiting: '○', running: '▶', ok: '✔', failed: '✖', limit: '✖', skipped: '⊘', interrupted: '■',
  starting: '▶', ready: '✔', exited: '■', stopped: '■' };

function bar(frac, cls) {
  const fill = el('div', 'fill' + (cls ? ' ' + cls : ''));
  fill.style.width = Math.max(0, Math.min(1, frac)) * 100 + '%';
  return el('span', 'bar', fill);
}

/* The clock of a step or service: its elapsed time and, with a limit, the bar towards it. */
function taskClock(t, running, limitMs) {
  const secs = running ? since(t.started_at) : t.duration_s;
  const clock = el('span', 'clock', fmtSecs(secs) + (limitMs ? ' / ' + fmtMs(limitMs) : ''));
  let b = null;
  if (limitMs) {
    const frac = secs === null ? 0 : (secs * 1000) / limitMs;
    const cls = t.status === 'limit' ? 'over' : !running && t.status === 'ok' ? 'done' : frac > 0.8 ? 'warn' : '';
    b = bar(t.status === 'limit' ? 1 : frac, cls);
  }
  return [clock, b];
}

function runView(id, wantStep) {
  const main = document.getElementById('main');
  const title = el('h1', null, id);
  const badge = el('span');
  const killBtn = el('button', null, 'Kill');
  killBtn.id = 'kill';
  killBtn.hidden = true;
  const killNote = el('span', 'muted');
  const cmd = el('div', 'mono muted');
  const runClock = el('span', 'clock');
  runClock.id = 'run-clock';
  const runBar = el('span');
  const banner = el('div');
  banner.id = 'run-cause';
  banner.hidden = true;
  const stepsBody = el('tbody');
  const steps = el('table', 'steps', el('thead', null, el('tr', null, el('th', 'mark', ''), el('th', null, 'step'),
    el('th', null, 'status'), el('th', null, 'clock / limit'), el('th', null, ''), el('th', null, 'exit'))), stepsBody);
  steps.id = 'steps';
  const figures = el('dl', 'figures');
  figures.id = 'figures';
  const refused = el('div');
  refused.id = 'refused';
  const tabs = el('div', 'tabs');
  tabs.id = 'log-tabs';
  const logState = el('span', 'logstate muted');
  const pre = el('pre', 'log');
  pre.id = 'log';
  const labelsBox = el('div');
  main.replaceChildren(el('p', null, el('a', null, '← runs')), title,
    el('div', 'toolbar', badge, runClock, runBar, killBtn, killNote), labelsBox, cmd, banner,
    el('h2', null, 'Steps and services'), steps, el('h2', null, 'Figures'), figures, refused,
    el('h2', null, 'Logs ', logState), tabs, pre);
  main.querySelector('p a').href = '#/';

  let d = null;              /* the last GET /v1/runs/{id} */
  let stopped = false, pollTimer = null, es = null, logName = null, refusedShown = false, stopFlush = null;

  killBtn.addEventListener('click', async () => {
    killBtn.disabled = true;
    try {
      await api('/v1/runs/' + id + '/kill', { method: 'POST', headers: { Accept: 'application/json', 'X-Warren-Console': '1' } });
      killNote.textContent = 'stopping…';
      poll();
    } catch (e) {
      killNote.textContent = e.message;
      killBtn.disabled = false;
    }
  });

  /* ---- logs: one step's, read whole from offset 0 (GET, fast), then followed from where that
   * ended (SSE, resumed by the EventSource with Last-Event-ID); a reload does the same ---- */
  let logGen = 0;
  async function openLog(name) {
    if (name === logName) return;
    if (es) { es.close(); es = null; }
    if (stopFlush) stopFlush();
    const gen = ++logGen;
    logName = name;
    pre.replaceChildren();
    delete logState.dataset.pruned;
    markLog(name);
    const st = { b: false, d: false, i: false, u: false, inv: false, fg: null, bg: null };
    logState.textContent = 'loading…';
    const base = '/v1/runs/' + id + '/logs?step=' + encodeURIComponent(name);
    let offset = 0;
    try {
      offset = await readWhole(base, st, () => gen !== logGen);
    } catch (e) {
      offset = 0;
      pre.replaceChildren();
    }
    if (gen !== logGen) return;
    follow(base, offset, st);
  }

  /* Read the log from offset 0 in plain answers (each at most 16 MiB: X-Offset says where the
   * next starts), whole lines only; show its newest LOG_MAX_LINES lines, the colours of the
   * others counted. The offset where following it starts. */
  async function readWhole(base, st, stale) {
    let offset = 0, tail = [];
    for (let i = 0; i < 128; i++) {
      const r = await fetch(base + '&offset=' + offset, { credentials: 'same-origin' });
      const buf = r.ok ? new Uint8Array(await r.arrayBuffer()) : new Uint8Array(0);
      const end = buf.lastIndexOf(10) + 1;  /* the rest comes with the events */
      if (stale()) return offset;
      if (end === 0) break;
      const lines = new TextDecoder().decode(buf.subarray(0, end)).split('\n');
      lines.pop();
      tail = tail.length ? tail.concat(lines) : lines;
      if (tail.length > LOG_MAX_LINES) {
        for (let k = 0; k < tail.length - LOG_MAX_LINES; k++) sgrScan(st, tail[k]);
        tail = tail.slice(-LOG_MAX_LINES);
        logState.dataset.pruned = '1';
      }
      offset += end;
    }
    if (stale()) return offset;
    const frag = document.createDocumentFragment();
    for (const l of tail) renderLine(frag, st, l);
    pre.append(frag);
    pre.scrollTop = pre.scrollHeight;
    return offset;
  }

  function markLog(name) {
    for (const a of tabs.children) a.classList.toggle('selected', a.dataset.log === name);
    for (const tr of stepsBody.querySelectorAll('tr.step')) tr.classList.toggle('selected', tr.dataset.log === name);
    history.replaceState(null, '', '#/runs/' + id + '/' + encodeURIComponent(name));
  }

  /* a log pane keeps its newest LOG_MAX_NODES nodes */
  function prune() {
    if (pre.childNodes.length <= LOG_MAX_NODES) return;
    const drop = document.createRange();
    drop.setStartBefore(pre.firstChild);
    drop.setEndBefore(pre.childNodes[pre.childNodes.length - Math.floor(LOG_MAX_NODES * 0.9)]);
    drop.deleteContents();
    logState.dataset.pruned = '1';
  }

  /* follow the log from offset: lines go on the page at most every 50 ms, one layout per batch */
  function follow(base, offset, st) {
    logState.textContent = 'following…';
    let frag = document.createDocumentFragment(), flushing = null;
    const flush = () => {
      flushing = null;
      const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
      pre.append(frag);
      frag = document.createDocumentFragment();
      prune();
      if (atEnd) pre.scrollTop = pre.scrollHeight;
    };
    stopFlush = () => { clearTimeout(flushing); flushing = null; };
    es = new EventSource(base + '&follow=1&offset=' + offset);
    es.onmessage = (ev) => {
      renderLine(frag, st, ev.data);
      if (!flushing) flushing = setTimeout(flush, 50);
    };
    es.addEventListener('end', (ev) => {
      ev.target.close();
      stopFlush();
      flush();
      logState.textContent = 'complete' + (logState.dataset.pruned ? ' (the newest lines shown; GET /v1/runs/' + id + '/logs has them all)' : '');
    });
    const src = es;
    src.onerror = () => { if (src.readyState !== EventSource.CLOSED) logState.textContent = 'reconnecting…'; };
  }

  function logTabs() {
    const names = [];
    (d.steps || []).forEach((s, i) => { if (s.status !== 'waiting' && s.status !== 'skipped') names.push([logNo(s, i), s.name]); });
    for (const l of d.logs || []) if (l.startsWith('service-')) names.push([l, l.replace(/^service-/, 'service ').replace(/\.ready$/, ' (ready check)')]);
    if (!names.length && (d.logs || []).length) names.push([d.logs[0], d.logs[0]]);
    const key = names.map((n) => n[0]).join('\n');
    if (tabs.dataset.key !== key) {
      tabs.dataset.key = key;
      tabs.replaceChildren(...names.map(([log, label]) => {
        const a = el('a', log === logName ? 'selected' : '', label);
        a.dataset.log = log;
        a.addEventListener('click', () => { chosen = true; openLog(log); });
        return a;
      }));
    }
    /* follow the running step unless one was chosen */
    const running = (d.steps || []).findIndex((s) => s.status === 'running');
    if (!chosen && running >= 0) openLog(logNo(d.steps[running], running));
    else if (!logName && names.length) openLog(names[0][0]);
    else if (!logName && !d.live) logState.textContent = 'no log (the run wrote no output)';
  }
  let chosen = !!wantStep;
  if (wantStep) openLog(wantStep);

  /* ---- the page from d ---- */
  function renderHead() {
    const r = d.run;
    title.textContent = r.name ? r.name + '  ·  ' + r.id : r.id;
    document.title = (r.state || '') + ' · ' + (r.name || r.id) + ' · warren';
    badge.replaceChildren(stateBadge(Object.assign({}, r, { queue_position: d.queue_position })));
    killBtn.hidden = !d.live;
    labelsBox.replaceChildren(labels(r.labels));
    const job = d.result && d.result.job ? d.result.job.name : '';
    cmd.textContent = (r.kind === 'job' ? 'job ' + job : '$ ' + (r.command || []).join(' ')) + (r.worktree ? '   in ' + r.worktree : '');
    if (!d.live) killNote.textContent = '';
    const cause = causeText(r);
    banner.hidden = !cause;
    banner.className = 'banner ' + (r.state || '');
    banner.textContent = cause ? (r.cause && r.cause.limit ? '⊘ ' + r.cause.limit + ': ' : '✖ ') + cause : '';
  }

  /* the number of a step's log (log/N-name.log): its place in the steps, unless its log says
   * (a live session's list starts at its last execs) */
  function logNo(t, i) {
    const m = /^log\/(\d+)-/.exec(t.log || '');
    return m ? m[1] : String(i + 1);
  }

  function stepRows(t, kind, i) {
    const running = d.live && (t.status === 'running' || t.status === 'starting' || t.status === 'ready');
    /* a service's limit is the time to get ready: its bar while it starts, a note after */
    const limit = kind === 'step' ? t.timeout_ms : t.status === 'starting' ? t.ready_timeout_ms : 0;
    const tr = el('tr', 'step ' + kind);
    tr.dataset.step = t.name;
    tr.dataset.status = t.status;
    tr.dataset.log = kind === 'step' ? logNo(t, i) : 'service-' + t.name;
    if (tr.dataset.log === logName) tr.classList.add('selected');
    const name = el('a', null, (kind === 'service' ? 'service ' : '') + t.name);
    name.addEventListener('click', () => { chosen = true; openLog(tr.dataset.log); });
    const [clock, b] = t.started_at || t.duration_s ? taskClock(t, running, limit) : [el('span', 'clock', limit ? '- / ' + fmtMs(limit) : '-'), null];
    if (running) { clock.dataset.started = t.started_at; clock.dataset.limit = limit || ''; }
    const exit = t.exit_code === null || t.exit_code === undefined ? (t.signal ? 'SIG' + t.signal : '') : String(t.exit_code);
    /* failed under continue-on-error: marked apart from a failure that failed the job */
    if (t.tolerated) tr.classList.add('tolerated');
    const note = kind === 'service' && !limit && t.ready_timeout_ms ? el('span', 'muted', ' (ready within ' + fmtMs(t.ready_timeout_ms) + ')') : null;
    /* progress.json of a run whose supervisor died: the last state it knew */
    const orphan = !d.live && !d.result?.steps && ['running', 'starting', 'ready'].includes(t.status);
    tr.append(el('td', 'mark', t.tolerated ? '⚠' : MARK[t.status] || ''), el('td', 'name', name),
      el('td', 'status', t.status + (t.tolerated ? ', tolerated (continue-on-error)' : '') + (orphan ? ' when its supervisor died' : ''), note),
      el('td', null, clock), el('td', null, b), el('td', null, exit));
    const rows = [tr];
    if (t.cause) {
      const c = el('tr', 'step-cause' + (t.tolerated ? ' tolerated' : ''));
      c.dataset.step = t.name;
      const td = el('td', null, t.cause);
      td.colSpan = 5;
      c.append(el('td'), td);
      rows.push(c);
    }
    return rows;
  }

  function renderSteps() {
    const rows = [];
    if (d.execs_left_out) {
      /* a live session lists its last execs; the record has them all once it ends */
      const td = el('td', 'muted', '… ' + d.execs_left_out + ' earlier exec' + (d.execs_left_out === 1 ? '' : 's') + ' (in the record once the session ends)');
      td.colSpan = 5;
      rows.push(el('tr', null, el('td'), td));
    }
    (d.services || []).forEach((s, i) => rows.push(...stepRows(s, 'service', i)));
    (d.steps || []).forEach((s, i) => rows.push(...stepRows(s, 'step', i)));
    if (!rows.length) {
      const why = d.queue_position ? 'queued' : d.live ? 'starting…' : d.run.kind === 'job' ? 'no steps recorded' : 'a plain warren run: one command, no steps';
      const td = el('td', 'muted', why);
      td.colSpan = 6;
      rows.push(el('tr', null, td));
    }
    stepsBody.replaceChildren(...rows);
  }

  function renderFigures() {
    const res = d.result || {};
    const r = d.run;
    const lim = (d.spec && d.spec.limits) || res.limits || {};
    const limits = Object.keys(lim).filter((k) => k !== 'grace_ms' && lim[k] !== null)
      .map((k) => k.replace(/_ms$/, '').replace(/_/g, '-') + ' ' + (/_ms$/.test(k) ? fmtMs(lim[k]) : k === 'pids' ? lim[k] : fmtSize(lim[k])));
    const exit = r.exit_code === null || r.exit_code === undefined ? '-' : String(r.exit_code) + (r.signal ? ' (SIG' + r.signal + ')' : '');
    const items = [
      ['exit', exit], ['duration', fmtSecs(runDuration(r))],
      ['cpu user', fmtSecs(res.cpu_user_s)], ['cpu system', fmtSecs(res.cpu_sys_s)],
      ['peak memory', fmtSize(res.peak_memory_bytes)], ['pids peak', res.pids_peak === undefined || res.pids_peak === null ? '-' : res.pids_peak],
      ['output', fmtSize(res.output_bytes)], ['scratch', fmtSize(res.scratch_bytes)],
      ['limits', limits.join(', ') || 'none'],
    ];
    figures.replaceChildren(...items.flatMap(([k, v]) => {
      const dd = el('dd', null, v);
      dd.dataset.figure = k;
      return [el('dt', null, k), dd];
    }));
  }

  /* the refused writes of the record, each with where to write instead (the policy answer) */
  async function renderRefused() {
    const res = d.result;
    if (!res || refusedShown) return;
    refusedShown = true;
    const list = res.refused_writes;
    if (!Array.isArray(list) || !list.length) {
      refused.replaceChildren(el('h2', null, 'Refused writes'), el('p', 'muted', Array.isArray(list) ? 'none: it wrote only where it may' : (res.refused_writes_off || 'not watched')));
      return;
    }
    const ul = el('ul', 'refused');
    refused.replaceChildren(el('h2', null, 'Refused writes (' + (res.refused_writes_total || list.length) + ')'), ul);
    for (const w of list.slice(0, 20)) {
      const where = el('span', 'where', '');
      ul.append(el('li', null, el('code', null, w.path), ' ×' + w.count + ' — ', where));
      try {
        const p = await api('/v1/runs/' + id + '/policy?access=write&path=' + encodeURIComponent(w.path));
        where.textContent = p.answer;
      } catch (e) {
        where.textContent = 'write under $TMPDIR (/tmp in the cell) or the worktree';
      }
    }
  }

  function tick() {
    if (!d) return;
    runClock.textContent = fmtSecs(runDuration(d.run));
    const limit = d.spec && d.spec.limits && d.spec.limits.time_ms;
    if (limit && d.live && d.run.started_at) runBar.replaceChildren(bar((since(d.run.started_at) * 1000) / limit, ''), ' / ' + fmtMs(limit));
    else if (limit) runBar.replaceChildren(' limit ' + fmtMs(limit));
    for (const c of stepsBody.querySelectorAll('.clock[data-started]')) {
      const secs = since(c.dataset.started);
      const limit = Number(c.dataset.limit) || 0;
      c.textContent = fmtSecs(secs) + (limit ? ' / ' + fmtMs(limit) : '');
      const fill = c.closest('tr').querySelector('.bar .fill');
      if (fill && limit) {
        const frac = (secs * 1000) / limit;
        fill.style.width = Math.min(1, frac) * 100 + '%';
        fill.className = 'fill' + (frac > 0.8 ? ' warn' : '');
      }
    }
  }

  async function poll() {
    if (stopped) return;
    clearTimeout(pollTimer);
    try {
      const t0 = Date.now();
      d = await api('/v1/runs/' + id);
      if (d.now_ms) skew = d.now_ms - (t0 + Date.now()) / 2;
      renderHead();
      renderSteps();
      renderFigures();
      logTabs();
      tick();
      if (!d.live) renderRefused();
    } catch (e) {
      if (e.status === 401 || e.status === 404) { showError(e); stopped = true; return; }
      killNote.textContent = 'cannot reach the server: ' + e.message;
    }
    if (!stopped && (!d || d.live || !d.result)) pollTimer = setTimeout(poll, d && !d.live ? 2000 : 1000);
  }
  const tickTimer = setInterval(tick, 200);
  poll();
  return { stop() { stopped = true; clearTimeout(pollTimer); clearInterval(tickTimer); if (es) es.close(); if (stopFlush) stopFlush(); } };
}

/* ---- routing: #/ the list, #/runs/ID[/LOG] a run ---- */

function route() {
  if (view) view.stop();
  const m = /^#\/runs\/([^/]+)(?:\/(.+))?$/.exec(location.hash);
  let log = null;
  try { log = m && m[2] ? decodeURIComponent(m[2]) : null; } catch (e) { log = null; }
  if (m && RUN_ID.test(m[1])) view = runView(m[1], log);
  else view = listView();
}

async function health() {
  try {
    const h = await api('/healthz');
    document.getElementById('health').textContent = h.busy + '/' + h.slots + ' slots busy, ' + h.queued + ' queued';
  } catch (e) { document.getElementById('health').textContent = 'server unreachable'; }
}

window.addEventListener('hashchange', route);
route();
health();
setInterval(health, 5000);
