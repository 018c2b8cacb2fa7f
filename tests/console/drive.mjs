// SPDX-License-Identifier: Apache-2.0
// drive.mjs - the browser half of tests/integration/console.t: headless Debian chromium
// (never a downloaded browser) driven by playwright-core against a running `warren serve`.
// Prints one line per check: "RESULT <key> <1|0> <detail>"; console.t turns them into TAP.
// Env: BASE (http://127.0.0.1:PORT), TOKEN, JOB (the id of the job with a limited step),
// LONG (a long run to kill), SOFT (a job with a tolerated failure and a failed step), SHOTS (directory for screenshots), GO (a file to create when the
// job's page is open: its first step waits for it).
import { writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const { BASE, TOKEN, JOB, LONG, SOFT, SHOTS, GO } = process.env;
const result = (key, ok, detail = '') =>
  console.log(`RESULT ${key} ${ok ? 1 : 0} ${String(detail).replace(/\s+/g, ' ').slice(0, 400)}`);

// check KEY FN: FN's truthy answer passes; an exception fails with its message.
async function check(key, fn) {
  try {
    const r = await fn();
    result(key, r === true || (r && r.ok), r && r.detail ? r.detail : '');
  } catch (e) {
    result(key, false, e.message.split('\n')[0]);
  }
}

const secs = (t) => {
  // "12.3s", "1m05s": the clock's text up to " / "
  const m = /^(?:(\d+)m)?(\d+(?:\.\d+)?)s/.exec(t.trim());
  return m ? (m[1] ? Number(m[1]) * 60 : 0) + Number(m[2]) : NaN;
};

const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-background-networking', '--disable-dev-shm-usage', '--no-first-run'],
});
try {
  // ---- no token, a wrong token: no page
  const anon = await browser.newContext();
  const ap = await anon.newPage();
  await check('no_token', async () => {
    const r = await ap.goto(BASE + '/');
    const body = await ap.content();
    return { ok: r.status() === 401 && !body.includes('app.js'), detail: `status ${r.status()}` };
  });
  await check('wrong_token', async () => {
    const r = await ap.goto(BASE + '/?token=not-the-token-at-all');
    const cookies = await anon.cookies();
    const again = await ap.goto(BASE + '/');
    return { ok: r.status() === 401 && cookies.length === 0 && again.status() === 401,
      detail: `status ${r.status()}, then ${again.status()}, cookies ${cookies.length}` };
  });
  await anon.close();

  // ---- the token once: a cookie, then the runs list
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await ctx.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await check('login', async () => {
    const r = await page.goto(BASE + '/?token=' + encodeURIComponent(TOKEN));
    const c = (await ctx.cookies()).find((x) => x.name === 'warren_token');
    return { ok: r.status() === 200 && page.url() === BASE + '/' && c && c.httpOnly && c.sameSite === 'Strict',
      detail: `status ${r.status()} url ${page.url()} cookie ${JSON.stringify(c && { httpOnly: c.httpOnly, sameSite: c.sameSite })}` };
  });
  await check('list_shows_run', async () => {
    const row = page.locator(`#runs tr[data-id="${JOB}"]`);
    await row.waitFor({ timeout: 15000 });
    const name = await row.locator('td.name').textContent();
    const lab = await row.locator('.label').allTextContents();
    const tags = await row.locator('td.name i').count();
    return { ok: name === 'console <i>demo</i>' && tags === 0 && lab.includes('suite=console'),
      detail: `name ${JSON.stringify(name)} (elements in it: ${tags}) labels ${lab}` };
  });
  await page.screenshot({ path: `${SHOTS}/1-runs-list.png`, fullPage: true });

  // ---- the run page: the clock of the limited step advances, then its cause appears
  await page.goto(`${BASE}/#/runs/${JOB}`);
  await page.locator('#steps tr.step[data-step="colours"][data-status="running"]').waitFor({ timeout: 20000 });
  writeFileSync(GO, '');
  const slowClock = page.locator('#steps tr.step[data-step="slow"] .clock');
  await check('clock_advances', async () => {
    await page.locator('#steps tr.step[data-step="slow"][data-status="running"]').waitFor({ timeout: 20000 });
    const a = secs(await slowClock.textContent());
    const w1 = await page.locator('#steps tr.step[data-step="slow"] .bar .fill').evaluate((e) => e.getBoundingClientRect().width);
    await page.waitForTimeout(1200);
    const b = secs(await slowClock.textContent());
    const w2 = await page.locator('#steps tr.step[data-step="slow"] .bar .fill').evaluate((e) => e.getBoundingClientRect().width);
    const lim = (await slowClock.textContent()).includes('/ 6s');
    return { ok: b > a + 0.5 && w2 > w1 && lim, detail: `clock ${a} -> ${b}, bar ${w1} -> ${w2}px, limit shown ${lim}` };
  });
  await check('service_row', async () => {
    const row = page.locator('#steps tr.service[data-step="helper"]');
    const st = await row.getAttribute('data-status');
    const c1 = await row.locator('.clock').textContent();
    await page.waitForTimeout(600);
    const c2 = await row.locator('.clock').textContent();
    const status = await row.locator('td.status').textContent();
    return { ok: st === 'ready' && secs(c2) > secs(c1) && status.includes('ready within 20s'), detail: `${status}: clock ${c1} -> ${c2}` };
  });
  await page.screenshot({ path: `${SHOTS}/2-run-live.png`, fullPage: true });
  await check('cause_appears', async () => {
    const cause = page.locator('#steps tr.step-cause[data-step="slow"]');
    await cause.waitFor({ timeout: 20000 });
    const ct = await cause.textContent();
    await page.locator('#run-cause:not([hidden])').waitFor({ timeout: 10000 });
    const banner = await page.locator('#run-cause').textContent();
    return { ok: /time limit 6s reached/.test(ct) && /step-time/.test(banner) && /slow/.test(banner),
      detail: `step: ${ct} | banner: ${banner}` };
  });
  await check('figures_refused', async () => {
    await page.locator('#refused li').first().waitFor({ timeout: 10000 });
    const li = await page.locator('#refused li').first().textContent();
    const exit = await page.locator('#figures dd[data-figure="exit"]').textContent();
    const mem = await page.locator('#figures dd[data-figure="peak memory"]').textContent();
    await page.waitForFunction(() => /write to|\/tmp/.test(document.querySelector('#refused li .where').textContent), null, { timeout: 10000 });
    const where = await page.locator('#refused li .where').first().textContent();
    return { ok: li.includes('/usr/warren-console-refused') && /\/tmp/.test(where) && exit === '124' && /B$/.test(mem),
      detail: `refused: ${li} | exit ${exit} | peak memory ${mem}` };
  });

  // ---- the colours step's log: SGR as spans, the rest as text
  await page.locator('#log-tabs a[data-log="1"]').click();
  const logHas = (t) => page.waitForFunction((t) => document.getElementById('log').textContent.includes(t), t, { timeout: 10000 });
  await check('ansi_colours', async () => {
    await logHas('tick 3');
    const red = await page.locator('#log span.fg1').allTextContents();
    const green = await page.locator('#log span.b.fg2').allTextContents();
    const tags = await page.locator('#log b, #log img').count();
    const text = await page.locator('#log').textContent();
    const ticks = text.split('\n').filter((l) => l.startsWith('tick ')).length;
    const orange = await page.locator('#log span', { hasText: 'orange' }).evaluate((e) => getComputedStyle(e).color);
    const other = text.includes('orange end') && !/window title|\[\?25|\(B/.test(text);
    return { ok: red.length === 1 && red[0] === 'red' && green.includes('bold green') && tags === 0 && text.includes('<b>not bold</b>') &&
      !text.includes('\x1b') && ticks === 3 && orange === 'rgb(255, 135, 0)' && other,
      detail: `red ${JSON.stringify(red)} bold green ${JSON.stringify(green)} markup elements ${tags} tick lines ${ticks} ` +
        `256-colour ${orange}, other escapes dropped ${other}` };
  });
  await page.screenshot({ path: `${SHOTS}/3-run-limit-colours.png`, fullPage: true });
  await check('reload_keeps_logs', async () => {
    await page.reload();
    await logHas('tick 3');
    const red = await page.locator('#log span.fg1').allTextContents();
    const selected = await page.locator('#log-tabs a.selected').getAttribute('data-log');
    const lines = (await page.locator('#log').textContent()).split('\n').filter((l) => l.startsWith('tick ')).length;
    return { ok: red.includes('red') && selected === '1' && lines === 3, detail: `red ${JSON.stringify(red)} tab ${selected} tick lines ${lines}` };
  });
  await check('list_cause_prominent', async () => {
    await page.goto(BASE + '/#/');
    const cause = page.locator(`#runs tr[data-id="${JOB}"] td.cause.strong`);
    await cause.waitFor({ timeout: 10000 });
    const t = await cause.textContent();
    const st = await page.locator(`#runs tr[data-id="${JOB}"] .state`).textContent();
    return { ok: /time limit/.test(t) && st === 'limit', detail: `${st}: ${t}` };
  });
  await page.screenshot({ path: `${SHOTS}/4-runs-list-ended.png`, fullPage: true });
  await check('list_filter', async () => {
    await page.locator('#filter-state').selectOption('limit');
    await page.waitForFunction((id) => {
      const rows = [...document.querySelectorAll('#runs tbody tr')].map((r) => r.dataset.id);
      return rows.length === 1 && rows[0] === id;
    }, JOB, { timeout: 10000 });
    await page.locator('#filter-state').selectOption('');
    await page.locator('#filter-label').fill('suite=nothing');
    await page.locator('#filter-label').press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('#runs tbody tr').length === 0, null, { timeout: 10000 });
    await page.locator('#filter-label').fill('');
    await page.locator('#filter-label').press('Enter');
    await page.waitForFunction(() => document.querySelectorAll('#runs tbody tr').length === 3, null, { timeout: 10000 });
    return true;
  });

  // ---- a job that a step failed, after a tolerated failure (continue-on-error)
  await check('failed_step_list', async () => {
    const cause = page.locator(`#runs tr[data-id="${SOFT}"] td.cause.strong`);
    await cause.waitFor({ timeout: 20000 });
    const t = await cause.textContent();
    const tol = await page.locator(`#runs tr[data-id="${SOFT}"] td.cause .tolerated`).textContent();
    return { ok: t.startsWith('step 3 test: exit 1') && /1 step failed but tolerated/.test(tol), detail: `cause ${t}; tolerated ${tol}` };
  });
  await page.goto(`${BASE}/#/runs/${SOFT}`);
  await check('failed_step_run', async () => {
    await page.locator('#run-cause:not([hidden])').waitFor({ timeout: 15000 });
    const banner = await page.locator('#run-cause').textContent();
    const flaky = page.locator('#steps tr.step.tolerated[data-step="flaky"]');
    await flaky.waitFor({ timeout: 10000 });
    const mark = await flaky.locator('td.mark').textContent();
    const status = await flaky.locator('td.status').textContent();
    const testTolerated = await page.locator('#steps tr.step.tolerated[data-step="test"]').count();
    const testStatus = await page.locator('#steps tr.step[data-step="test"] td.status').textContent();
    return { ok: /step 3 test: exit 1/.test(banner) && mark === '⚠' && /tolerated/.test(status) && testTolerated === 0 && testStatus === 'failed',
      detail: `banner ${banner}; flaky ${mark} ${status}; test ${testStatus} (tolerated rows ${testTolerated})` };
  });
  await page.screenshot({ path: `${SHOTS}/4b-run-failed-step.png`, fullPage: true });

  // ---- the kill button stops a long run; the cause says so
  await page.goto(`${BASE}/#/runs/${LONG}`);
  await check('kill', async () => {
    await page.locator('#steps tr.step[data-status="running"]').waitFor({ timeout: 20000 });
    await page.locator('#kill:not([hidden])').click();
    await page.locator('#run-cause:not([hidden])').waitFor({ timeout: 30000 });
    const banner = await page.locator('#run-cause').textContent();
    await page.locator('#kill').waitFor({ state: 'hidden', timeout: 15000 });
    const hidden = await page.locator('#kill').isHidden();
    return { ok: /kill/.test(banner) && hidden, detail: `banner: ${banner}; button hidden ${hidden}` };
  });
  await page.screenshot({ path: `${SHOTS}/5-run-killed.png`, fullPage: true });
  result('no_page_errors', errors.length === 0, errors.join(' | '));
  await ctx.close();
} finally {
  await browser.close();
}
