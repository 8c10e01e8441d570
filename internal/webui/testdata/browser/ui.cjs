// Drives the daemon's web page in headless Chromium (Debian's
// /usr/bin/chromium) through playwright-core. Run by browser_test.go, which
// starts the daemon and passes everything in the environment:
//   LOGIN_URL     a one-time login link from `plexus ui --no-browser`
//   (plexus is on the daemon's PATH: its example-server is the stdio server)
//   HTTP_URL      a streamable HTTP MCP server that wants X-Api-Key: CANARY
//   CANARY        the remote server's key; CANARY_ENV the stdio server's
//   TOKEN         the daemon's loopback token
//   SETTINGS_FILE the daemon's extensions.json, to edit by hand
//   SHOTS         where to save the screenshots
//   SLOW, STEPS   a stdio server that writes two lines as it starts, each
//                 followed by a wait for the file STEPS/1, then STEPS/2
//   GATED, GATE   a stdio server that writes a line as it starts and waits
//                 for the file GATE to exist
//   PLEXUS_BIN, PLEXUS_HOME  the built plexus and the daemon's home
// It prints one line per step and exits non-zero on the first failure.
'use strict';
const { launch, drive } = require('./launch.cjs');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile } = require('node:child_process');

const env = process.env;
const T = 30000; // generous: two shared cores, other tests running

function step(name) { console.log('ok ' + name); }

async function main() {
  const browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1100, height: 1000 } });
  // The page's event streams, so that a test can hand it an update as a
  // late one would arrive (the page's code is unchanged).
  await context.addInitScript(() => {
    const Native = window.EventSource;
    window.plexusTestStreams = [];
    window.EventSource = class extends Native {
      constructor(...args) { super(...args); window.plexusTestStreams.push(this); }
    };
  });
  const page = await context.newPage();
  page.setDefaultTimeout(T);
  page.on('dialog', (d) => d.accept());
  // Every response body the browser receives (the event stream is checked
  // by the Go test, which follows it for the whole run).
  const { consoleErrors, bodies } = await drive(page, run, path.join(env.FAILSHOT || '/tmp', 'webui-failure.png'));

  assert.ok(bodies.length > 20, 'captured ' + bodies.length + ' responses');
  for (const b of bodies) {
    for (const secret of [env.CANARY, env.CANARY_ENV, env.CANARY_OAUTH, env.KEY_PEM.split('\n')[1], env.TOKEN]) {
      assert.ok(!b.body.includes(secret), 'a secret value appeared in the response of ' + b.url);
    }
  }
  step('no secret value in any of ' + bodies.length + ' response bodies');
  assert.deepEqual(consoleErrors.filter((e) => !/status of (401|404|409|400|502|503)/.test(e)), [], 'console errors');
  step('no script errors, no CSP violations');
  await browser.close();
}

const card = (page, name) => page.locator('#servers > li[data-name="' + name + '"]');
const button = (page, name, label) => card(page, name).getByRole('button', { name: label, exact: true });

async function waitState(page, name, state) {
  await page.waitForSelector('#servers > li[data-name="' + name + '"][data-state="' + state + '"]', { timeout: T });
}

// plexus runs the built binary on the daemon's home.
function plexus(...args) {
  return new Promise((resolve, reject) => execFile(env.PLEXUS_BIN, args, { env: { ...process.env, PLEXUS_HOME: env.PLEXUS_HOME } },
    (err, stdout, stderr) => (err ? reject(new Error(args.join(' ') + ': ' + err.message + ' ' + stderr)) : resolve(stdout))));
}

// startProgress: a server that takes seconds to start and says what it
// does meanwhile (SLOW, as a first `npx -y` does) shows its latest line on
// its card while it starts on demand, and while a restart from the page
// starts its new instance beside the old one.
async function startProgress(page) {
  const progress = card(page, 'slow').locator('[data-testid=progress]');
  // SLOW's start goes on past a line once the page has shown it.
  const fs = require('node:fs');
  const open = (...n) => n.forEach((i) => fs.writeFileSync(path.join(env.STEPS, String(i)), ''));
  const shut = (...n) => n.forEach((i) => fs.rmSync(path.join(env.STEPS, String(i))));
  open(1, 2);
  await plexus('add', 'slow', '--start', 'onDemand', '--idle-stop', '300', '--', env.SLOW);
  shut(1, 2);
  await waitState(page, 'slow', 'idle');
  const call = plexus('call', 'slow_echo', '{"text":"hi"}');
  await page.waitForSelector('#servers > li[data-name="slow"][data-state="waking"] [data-testid=progress]:text("fetching the package: 1 of 2")', { timeout: T });
  open(1);
  await page.waitForSelector('#servers > li[data-name="slow"][data-state="waking"] [data-testid=progress]:text("fetching the package: 2 of 2")', { timeout: T });
  open(2);
  assert.match(await call, /hi/);
  await waitState(page, 'slow', 'idle');
  assert.equal(await progress.count(), 0, 'an idle server shows the lines of its last start');
  step('a start on demand shows its latest stderr line on the card');
  shut(1, 2);
  await button(page, 'slow', 'Restart').click();
  await page.waitForSelector('#servers > li[data-name="slow"] [data-testid=progress]:text("Restarting: fetching the package: 1 of 2")', { timeout: T });
  open(1);
  await page.waitForSelector('#servers > li[data-name="slow"] [data-testid=progress]:text("Restarting: fetching the package: 2 of 2")', { timeout: T });
  open(2);
  await progress.waitFor({ state: 'detached', timeout: T });
  step('a restart from the page says so with the new instance\'s latest line');
  await plexus('rm', 'slow');
  await page.waitForFunction(() => !document.querySelector('#servers > li[data-name="slow"]'));
  // A server added from the command line has its card at once, starting,
  // with its start's latest line: not only once it is up.
  const adding = plexus('add', 'added', '--', env.GATED);
  await page.waitForSelector('#servers > li[data-name="added"][data-state="starting"] [data-testid=progress]:text("fetching the added package")', { timeout: T });
  require('node:fs').writeFileSync(env.GATE, '');
  await adding;
  await waitState(page, 'added', 'ready');
  step('a server added from the command line shows at once, starting');
  await plexus('rm', 'added');
  await page.waitForFunction(() => !document.querySelector('#servers > li[data-name="added"]'));
}

async function fillServer(page, { name, type, command, url, rows, call }) {
  await page.fill('#f-name', name);
  await page.check('input[name="type"][value="' + type + '"]');
  if (command !== undefined) await page.fill('#f-command', command);
  if (url !== undefined) await page.fill('#f-url', url);
  for (const r of rows || []) {
    await page.click('#add-row');
    const tr = page.locator('#f-rows tr').last();
    await tr.locator('.r-name').fill(r.name);
    await tr.locator('.r-var').fill(r.ref);
    await tr.locator('.r-value').fill(r.value);
  }
  if (call !== undefined) await page.fill('#f-call', call);
}

async function run(page) {
  const base = new URL(env.LOGIN_URL).origin;

  // Not logged in: the page says how to get in.
  await page.goto(base + '/');
  await page.waitForSelector('#signin:not([hidden])');
  step('without a session the page asks for `plexus ui`');

  // Log in through the one-time link: the code leaves the address bar and
  // the cookie is out of reach of scripts.
  await page.goto(env.LOGIN_URL);
  await page.waitForSelector('#app:not([hidden])');
  assert.equal(page.url(), base + '/');
  assert.equal(await page.evaluate(() => document.cookie), '', 'the session cookie is HttpOnly');
  await page.waitForFunction(() => document.getElementById('live').textContent.startsWith('Live'));
  step('logged in through the one-time link; live');

  // Every control has a label.
  const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, button')]
    .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
    .map((e) => e.id || e.outerHTML));
  assert.deepEqual(unlabelled, []);
  // Keyboard: Tab reaches the add button.
  let focused = '';
  for (let i = 0; i < 10 && focused !== 'add'; i++) {
    await page.keyboard.press('Tab');
    focused = await page.evaluate(() => document.activeElement && document.activeElement.id);
  }
  assert.equal(focused, 'add', 'Tab reaches "Add server"');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#editor:not([hidden])');
  step('every control labelled; keyboard opens the form');
  await formAtTopAndSuggestedName(page);

  // Add the stdio example server, with a managed variable.
  await fillServer(page, { name: 'example', type: 'stdio', command: 'plexus example-server',
    rows: [{ name: 'EXAMPLE_KEY', ref: 'EXAMPLE_KEY', value: env.CANARY_ENV }] });
  await page.screenshot({ path: path.join(env.SHOTS, 'add-form.png'), fullPage: true });
  await page.click('#save');
  await page.waitForSelector('#editor', { state: 'hidden' });
  await waitState(page, 'example', 'ready');
  step('added a stdio server');

  // A live update sent before an answer was read can arrive after it: one
  // numbered no higher than the events the shown status is as new as does
  // not replace it.
  const afterLate = await page.evaluate(() => {
    const late = { seq: 1, type: 'server', status: { name: 'example', state: 'starting', eventSeq: 1 } };
    window.plexusTestStreams.at(-1).dispatchEvent(new MessageEvent('server', { data: JSON.stringify(late) }));
    return document.querySelector('#servers > li[data-name="example"]').dataset.state;
  });
  assert.equal(afterLate, 'ready', 'an older live update replaced a newer state');
  step('an older live update arriving late does not replace a newer state');
  await startProgress(page);

  // A sandboxed one: the box and a network line; editing shows them again.
  await page.click('#add');
  await fillServer(page, { name: 'boxed', type: 'stdio', command: 'plexus example-server' });
  await page.check('#f-sandbox');
  await page.fill('#f-sb-net', '127.0.0.1:9');
  await page.click('#save');
  await page.waitForSelector('#editor', { state: 'hidden' });
  await waitState(page, 'boxed', 'ready');
  await button(page, 'boxed', 'Edit').click();
  await page.waitForFunction(() => document.getElementById('f-sb-net').value === '127.0.0.1:9');
  assert.equal(await page.isChecked('#f-sandbox'), true);
  await page.click('#cancel');
  step('added a sandboxed stdio server; its edit form shows the sandbox');

  // Add the remote server, its key as a header.
  await page.click('#add');
  await fillServer(page, { name: 'remote', type: 'http', url: env.HTTP_URL,
    rows: [{ name: 'X-Api-Key', ref: 'REMOTE_KEY', value: env.CANARY }] });
  await page.click('#save');
  await page.waitForSelector('#editor', { state: 'hidden' });
  await waitState(page, 'remote', 'ready');
  const remoteText = await card(page, 'remote').innerText();
  assert.match(remoteText, /Headers\s+1: X-Api-Key/);
  assert.match(remoteText, /Streamable HTTP/);
  await page.waitForFunction(() => document.getElementById('secrets').textContent.includes('REMOTE_KEY'));
  step('added an HTTP server; header names shown, values not');

  // A failing add keeps the form and shows the daemon's error beside the field.
  await page.click('#add');
  const bad = '/nonexistent/plexus-no-such-server --port 1';
  await fillServer(page, { name: 'broken', type: 'stdio', command: bad });
  await page.click('#save');
  await page.waitForFunction(() => document.getElementById('e-command').textContent !== '');
  assert.equal(await page.isVisible('#editor'), true);
  assert.equal(await page.inputValue('#f-name'), 'broken');
  assert.equal(await page.inputValue('#f-command'), bad);
  assert.equal(await card(page, 'broken').count(), 0);
  await shownOnce(page, await page.textContent('#e-command'));
  await page.screenshot({ path: path.join(env.SHOTS, 'error-state.png'), fullPage: true });
  step('a failing add keeps the form and shows its error once: ' + (await page.textContent('#e-command')).slice(0, 120));

  // Saved without starting it, a server that cannot start: its restart
  // fails, and the failure is said once on its card, not again as its
  // last error.
  // The save's answer (the server as it was saved, starting) is held back
  // until the page has shown the failure the live updates announced, as a
  // slow answer would be: the older answer must not undo the failure.
  const lastErr = '#servers > li[data-name="down"] [data-testid=lasterr]';
  await page.route('**/api/v1/servers', async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    const answer = await route.fetch();
    await page.waitForSelector(lastErr);
    await route.fulfill({ response: answer });
  });
  await page.fill('#f-name', 'down');
  await page.check('#f-noverify');
  await page.click('#save');
  await page.waitForSelector('#editor', { state: 'hidden' });
  await page.unroute('**/api/v1/servers');
  await page.waitForSelector(lastErr, { timeout: 5000 });
  await button(page, 'down', 'Restart').click();
  await page.waitForFunction(() => {
    const e = document.querySelector('#servers > li[data-name="down"] .card-error');
    return e && e.textContent.startsWith('restart: ');
  });
  const cardText = await card(page, 'down').innerText();
  const why = 'stat /nonexistent/plexus-no-such-server';
  assert.equal(cardText.split(why).length - 1, 1, 'the failure is said ' + (cardText.split(why).length - 1) + ' times:\n' + cardText);
  step('a failed restart is said once on the card: ' + (await card(page, 'down').locator('.card-error').textContent()).slice(0, 100));
  await button(page, 'down', 'Delete').click();
  await page.waitForFunction(() => !document.querySelector('#servers > li[data-name="down"]'));
  await page.click('#add');

  // A wrong key for the remote server is refused as well: strict saves.
  await page.click('#cancel');
  await page.click('#add');
  await fillServer(page, { name: 'wrongkey', type: 'http', url: env.HTTP_URL,
    rows: [{ name: 'X-Api-Key', ref: 'WRONG_KEY', value: 'not-the-key' }] });
  await page.click('#save');
  await page.waitForFunction(() => document.getElementById('e-url').textContent !== '');
  await shownOnce(page, await page.textContent('#e-url'));
  await page.click('#cancel');
  step('a remote server that refuses the key is not saved, its error shown once: ' + (await page.textContent('#e-url')).slice(0, 100));

  await page.screenshot({ path: path.join(env.SHOTS, 'servers.png'), fullPage: true });

  // Edit with a blank secret: the stored key is kept (the server wants it).
  await button(page, 'remote', 'Edit').click();
  await page.waitForFunction(() => document.getElementById('f-name').value === 'remote');
  assert.equal(await page.locator('#f-rows .r-value').first().inputValue(), '', 'secret values are never filled in');
  await page.fill('#f-call', '15000');
  await page.click('#save');
  await page.waitForSelector('#editor', { state: 'hidden' });
  await waitState(page, 'remote', 'ready');
  step('edit with a blank secret keeps the stored one');

  // "-" removes it: the server then cannot connect, so the edit is refused
  // and the stored key restored.
  await button(page, 'remote', 'Edit').click();
  await page.waitForFunction(() => document.getElementById('f-name').value === 'remote');
  await page.locator('#f-rows .r-value').first().fill('-');
  await page.click('#save');
  await page.waitForFunction(() => document.getElementById('form-error').textContent !== '');
  const said = await page.evaluate(() => ['e-url', 'e-rows', 'form-error'].map((id) => document.getElementById(id).textContent).filter((t) => t.length > 30));
  assert.ok(said.length > 0, 'the refusal says why');
  for (const t of said) await shownOnce(page, t);
  step('edit with "-" on a needed secret is refused: ' + said.join(' | ').slice(0, 140));
  await page.click('#cancel');
  await button(page, 'remote', 'Restart').click();
  await waitState(page, 'remote', 'ready');
  assert.match(await page.textContent('#secrets'), /REMOTE_KEY/);
  // "-" on the stdio server's variable: the daemon's own environment has
  // one of that name, so the server still starts and the stored one goes.
  await button(page, 'example', 'Edit').click();
  await page.waitForFunction(() => document.getElementById('f-name').value === 'example');
  await page.locator('#f-rows .r-value').first().fill('-');
  await page.click('#save');
  await page.waitForSelector('#editor', { state: 'hidden' });
  await page.waitForFunction(() => !document.getElementById('secrets').textContent.includes('EXAMPLE_KEY'));
  await waitState(page, 'example', 'ready');
  step('edit with "-" removes the stored secret');

  // A server without OAuth offers no login: the daemon would refuse it.
  for (const name of ['remote', 'example']) {
    assert.equal(await card(page, name).getByRole('button', { name: /log in/i }).count(), 0, name + ' offers a login that cannot succeed');
  }
  step('no "Log in" on servers that do not use OAuth');

  // Disable and enable.
  await button(page, 'example', 'Disable').click();
  await waitState(page, 'example', 'disabled');
  assert.match(await card(page, 'example').locator('[data-testid=state]').textContent(), /State: disabled/);
  await button(page, 'example', 'Enable').click();
  await waitState(page, 'example', 'ready');
  step('disable and enable');

  // A crash and the recovery arrive live, without reloading the page.
  await page.evaluate(() => {
    window.__seen = [];
    window.__noReload = true;
    new MutationObserver(() => {
      const li = document.querySelector('#servers > li[data-name="example"]');
      if (li) window.__seen.push(li.dataset.state);
    }).observe(document.getElementById('servers'), { childList: true, subtree: true, attributes: true });
  });
  const pid = parseInt(await card(page, 'example').locator('[data-testid=pid]').textContent(), 10);
  assert.ok(pid > 1);
  process.kill(pid, 'SIGKILL');
  await page.waitForFunction(() => window.__seen.includes('backoff'));
  step('the crash shows live: ' + (await card(page, 'example').locator('[data-testid=state]').textContent()));
  await page.waitForFunction((old) => {
    const li = document.querySelector('#servers > li[data-name="example"]');
    const p = li && li.querySelector('[data-testid=pid]');
    return li && li.dataset.state === 'ready' && p && parseInt(p.textContent, 10) !== old;
  }, pid, { timeout: 60000 });
  assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was not reloaded');
  assert.match(await card(page, 'example').innerText(), /Restarts\s+1/);
  step('the recovery shows live');

  // A hand edit that breaks extensions.json shows at once, with the line
  // and column the CLI gives, without Reload; putting the file back as it
  // was clears it.
  const fs = require('node:fs');
  const good = fs.readFileSync(env.SETTINGS_FILE, 'utf8');
  fs.writeFileSync(env.SETTINGS_FILE, good.replace('{', '{\n  "oops" 1,'));
  await page.waitForFunction(() => /line 2, column \d+/.test(document.getElementById('hand-edit').textContent), null, { timeout: T });
  assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was not reloaded');
  step('a broken hand edit shows at once: ' + (await page.textContent('#hand-edit')).slice(0, 160));
  fs.writeFileSync(env.SETTINGS_FILE, good);
  await page.waitForFunction(() => document.getElementById('hand-edit').hidden, null, { timeout: T });
  step('the file put back: the note goes');

  await oauthGrants(page);
  await gatesSummaryAndFilter(page);

  // Global request timeout.
  await page.fill('#g-call', '45000');
  await page.click('#settings-form button[type=submit]');
  await page.waitForFunction(() => document.getElementById('settings-msg').textContent === 'Saved.');
  await page.reload();
  await page.waitForFunction(() => document.getElementById('g-call').value === '45000');
  step('the global request timeout is saved');

  // The policy, edited by hand in the settings file, shows on the page as
  // text (a glob is never markup).
  const cfg = JSON.parse(fs.readFileSync(env.SETTINGS_FILE, 'utf8'));
  cfg.mcp.policy = {
    rules: [
      { tool: '<img src=x onerror=window.__xss=1>_*', client: 'claude-*', action: 'deny' },
      { destructive: true, action: 'askOncePerSession' },
      { tool: 'example_echo', action: 'askEveryCall' }
    ],
    limits: [{ tool: 'example_*', calls: 30, windowMs: 60000 }]
  };
  fs.writeFileSync(env.SETTINGS_FILE, JSON.stringify(cfg, null, 2));
  await page.waitForFunction(() => /not applied yet/.test(document.getElementById('hand-edit').textContent), null, { timeout: T });
  await page.click('#reload');
  await page.waitForFunction(() => document.getElementById('hand-edit').hidden, null, { timeout: T });
  await page.reload();
  await page.waitForFunction(() => document.getElementById('policy-rules').children.length === 3, null, { timeout: T });
  const rules = await page.textContent('#policy-rules');
  assert.match(rules, /deny: tool <img src=x onerror=window.__xss=1>_\*, client claude-\*, profile any/);
  assert.match(rules, /ask once per session: tool any, client any, profile any, destructive tools only/);
  assert.match(await page.textContent('#policy-limits'), /30 calls per 60000 ms for each client: tool example_\*, client any/);
  assert.equal(await page.evaluate(() => window.__xss), undefined, 'a glob ran as markup');
  step('the policy shows: ' + rules.slice(0, 120));
  await approveFromPage(page);

  // Delete, with its credentials.
  await button(page, 'remote', 'Delete').click();
  await page.waitForFunction(() => !document.querySelector('#servers > li[data-name="remote"]'));
  await page.waitForFunction(() => !document.getElementById('secrets').textContent.includes('REMOTE_KEY'));
  step('delete removes the server and its secret');
}

// callEcho calls example_echo through /mcp as an MCP 2026-07-28 client
// named client with capabilities caps and the call's params; it returns
// the answer's text.
function callEcho(client, caps, params) {
  return fetch(new URL('/mcp', env.LOGIN_URL), {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${env.TOKEN}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'Mcp-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'example_echo'
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'example_echo', ...params,
      _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: client, version: '1' },
        'io.modelcontextprotocol/clientCapabilities': caps } } })
  }).then((r) => r.text());
}

// approveFromPage makes a call the policy asks about from an MCP client
// that cannot be asked (MCP 2026-07-28, no elicitation): it waits, the
// page lists it with its arguments, Approve lets it through; a second one
// is denied and refused.
async function approveFromPage(page) {
  const call = (text) => callEcho('mute-client', {}, { arguments: { text } });
  for (const [text, choice, want] of [['approved-in-the-browser', 'Approve', /"text":"approved-in-the-browser"/], ['denied-in-the-browser', 'Deny', /did not approve/]]) {
    const answer = call(text);
    await page.waitForFunction((t) => document.getElementById('approval-list').textContent.includes(t), text, { timeout: T });
    const item = page.locator('#approval-list li', { hasText: text });
    assert.match(await item.textContent(), /example_echo from mute-client \(mcp\.policy\.rules\[2\]\)/);
    await item.getByRole('button', { name: choice }).click();
    const got = await answer;
    assert.match(got, want, 'the call after ' + choice + ': ' + got.slice(0, 300));
    await page.waitForFunction((t) => !document.getElementById('approval-list').textContent.includes(t), text, { timeout: T });
  }
  step('a call waiting for approval is approved, and another denied, from the page');

  // A client that elicits only in URL mode gets the page's address in its
  // input_required (MCP 2026-07-28): it names the call, carries no
  // credential, and the page there marks that call; the user denies it,
  // and the client's retry (it accepted to open the page) gets the refusal.
  const urlCall = (params) =>
    callEcho('url-client', { elicitation: { url: {} } }, { arguments: { text: 'sent-by-url' }, ...params })
      .then((t) => JSON.parse(t.includes('data: ') ? t.split('data: ').pop() : t).result);
  const first = await urlCall({});
  assert.equal(first.resultType, 'input_required', JSON.stringify(first).slice(0, 300));
  const [key, q] = Object.entries(first.inputRequests)[0];
  assert.equal(q.method, 'elicitation/create');
  assert.equal(q.params.mode, 'url');
  const sent = new URL(q.params.url);
  assert.equal(sent.origin, new URL(env.LOGIN_URL).origin);
  assert.match(sent.search, /^\?call=call-[a-z0-9]+$/, 'the URL names the call and nothing else: ' + q.params.url);
  assert.ok(!q.params.url.includes(env.TOKEN), 'the URL carries the token');
  const retry = urlCall({ inputResponses: { [key]: { action: 'accept' } }, requestState: first.requestState });
  await page.goto(q.params.url);
  const marked = page.locator('#approval-list li[aria-current]');
  await marked.waitFor({ timeout: T });
  assert.match(await marked.textContent(), /You were sent here for this call: example_echo from url-client/);
  await marked.getByRole('button', { name: 'Deny' }).click();
  const got = await retry;
  assert.ok(got.isError && /did not approve/.test(JSON.stringify(got)), 'the retry after Deny: ' + JSON.stringify(got).slice(0, 300));
  step('a URL-mode client is sent to the page, which marks its call; denied there');
}

// oauthGrants adds two machine-to-machine servers through the form's OAuth
// fields: client credentials with a client secret sent in the body, and
// with a private key (PEM) signing private_key_jwt. Both start (the daemon
// got their tokens), offer a login that succeeds, and their edit form
// shows the grant but never a secret.
async function oauthGrants(page) {
  for (const [name, method] of [['m2m', 'client_secret_post'], ['m2mkey', 'private_key_jwt']]) {
    await page.click('#add');
    await fillServer(page, { name, type: 'http', url: env.OAUTH_URL });
    assert.equal(await page.isVisible('#f-client-secret'), true, 'the browser login may take a client secret');
    assert.equal(await page.isVisible('#f-token-file'), false);
    await page.selectOption('#f-grant', 'client_credentials');
    await page.selectOption('#f-auth-method', method);
    if (method === 'private_key_jwt') {
      assert.equal(await page.isVisible('#f-client-secret'), false, 'private_key_jwt hides the client secret');
      await page.fill('#f-client-id', 'plexus-web-key');
      await page.fill('#f-private-key', env.KEY_PEM);
    } else {
      await page.fill('#f-client-id', 'plexus-web');
      await page.fill('#f-client-secret', env.CANARY_OAUTH);
    }
    await page.click('#save');
    await page.waitForSelector('#editor', { state: 'hidden' });
    await waitState(page, name, 'ready');
    assert.match(await card(page, name).innerText(), /Authorization\s+logged in/);

    await button(page, name, 'Log in').click();
    await card(page, name).getByText('Got a new token with the client_credentials grant.').waitFor();

    await button(page, name, 'Edit').click();
    await page.waitForFunction((n) => document.getElementById('f-name').value === n, name);
    assert.equal(await page.inputValue('#f-grant'), 'client_credentials');
    assert.equal(await page.inputValue('#f-auth-method'), method);
    for (const id of ['#f-client-secret', '#f-private-key']) assert.equal(await page.inputValue(id), '', 'a secret is never filled in');
    const secretField = method === 'private_key_jwt' ? '#f-private-key' : '#f-client-secret';
    assert.match(await page.getAttribute(secretField, 'placeholder'), /stored: blank keeps it/);
    assert.ok(!(await page.locator('#app').innerText()).includes(env.CANARY_OAUTH));
    await page.fill('#f-scopes', 'read');
    await page.click('#save');
    await page.waitForSelector('#editor', { state: 'hidden' });
    await waitState(page, name, 'ready');
  }
  const names = await page.textContent('#secrets');
  assert.ok(names.includes('M2M_CLIENT_SECRET') && names.includes('M2MKEY_PRIVATE_KEY'), 'the secrets by name: ' + names);

  // A grant that lacks what it needs is refused beside the OAuth fields.
  await page.click('#add');
  await fillServer(page, { name: 'nogrant', type: 'http', url: env.OAUTH_URL });
  await page.selectOption('#f-grant', 'jwt_bearer');
  await page.click('#save');
  await page.waitForFunction(() => document.getElementById('e-oauth').textContent.includes('tokenFile'));
  await shownOnce(page, await page.textContent('#e-oauth'));
  await page.click('#cancel');
  step('OAuth grants from the form: client_secret_post and private_key_jwt start, log in, edit without a secret shown; a jwt_bearer without its file is refused');

  for (const name of ['m2m', 'm2mkey']) {
    await button(page, name, 'Delete').click();
    await page.waitForFunction((n) => !document.querySelector('#servers > li[data-name="' + n + '"]'), name);
  }
}

// formAtTopAndSuggestedName: the add form opens at the top of the page,
// above the server list, and suggests the name from the command or the
// URL by the daemon's rules until a name is typed.
async function formAtTopAndSuggestedName(page) {
  const order = await page.evaluate(() => document.getElementById('editor').compareDocumentPosition(document.getElementById('servers')));
  assert.ok(order & 4, 'the form comes before the server list');
  const top = await page.evaluate(() => document.getElementById('editor').getBoundingClientRect().top);
  assert.ok(top < 300, 'the form opens at the top of the view: ' + top);
  await page.fill('#f-command', 'npx -y @modelcontextprotocol/server-filesystem "/srv/my docs"');
  await page.waitForFunction(() => document.getElementById('f-name').value === 'filesystem');
  assert.equal(await page.textContent('#h-name'), '(suggested)');
  await page.check('input[name="type"][value="http"]');
  await page.fill('#f-url', 'https://mcp.example.com/mcp?api_key=' + env.CANARY);
  await page.waitForFunction(() => document.getElementById('f-name').value === 'example');
  await page.fill('#f-name', 'mine');
  await page.fill('#f-url', 'http://127.0.0.1:9/mcp');
  await page.waitForTimeout(500);
  assert.equal(await page.inputValue('#f-name'), 'mine', 'a typed name is kept');
  assert.equal(await page.textContent('#h-name'), '');
  await page.fill('#f-url', '');
  await page.fill('#f-name', '');
  await page.check('input[name="type"][value="stdio"]');
  step('the form opens at the top; the name is suggested (filesystem, example) until one is typed');
}

// shownOnce asserts that an error's text is on the page once: beside its
// field, not again above the buttons or in a banner.
async function shownOnce(page, text) {
  assert.ok(text.length > 10, 'an error to look for: ' + text);
  const body = await page.locator('#app').innerText();
  const n = body.split(text).length - 1;
  assert.equal(n, 1, 'the error "' + text.slice(0, 80) + '" is shown ' + n + ' times');
}

// toolNamesInEventOrder: two reads of the tool names answer out of order,
// the first one as read before the example server's tools were in; the
// names read as of the later event stay shown.
async function toolNamesInEventOrder(page) {
  let first = true;
  let release;
  const secondAnswered = new Promise((r) => { release = r; });
  await page.route('**/api/v1/tools', async (route) => {
    const res = await route.fetch();
    const list = await res.json();
    if (!first) {
      await route.fulfill({ response: res, json: list });
      release();
      return;
    }
    first = false;
    list.tools = list.tools.filter((t) => t.server !== 'example');
    list.eventSeq = Math.max(0, list.eventSeq - 1);
    await secondAnswered;
    await route.fulfill({ response: res, json: list });
  });
  await page.evaluate(() => Promise.all([loadTools(), new Promise((r) => setTimeout(r, 50)).then(loadTools)]).then(render));
  await page.unroute('**/api/v1/tools');
  const names = await card(page, 'example').locator('[data-testid=tools] li').allTextContents();
  assert.ok(names.includes('echo'), 'after an older read of the tool names answered last: ' + names.join(', '));
  step('an older read of the tool names answering last leaves the newer names shown');
}

// gatesSummaryAndFilter: the page says that external calls are off and
// switches them on; the summary counts the servers; each server's tool
// names fold out; the filter finds a server by its name or a tool's.
async function gatesSummaryAndFilter(page) {
  await page.waitForSelector('#gates-off:not([hidden])');
  assert.match(await page.locator('#gates-off').innerText(), /External calls are off.*plexus settings set face\.allowExternalCall true/s);
  assert.equal(await page.isChecked('#g-external'), false);
  step('the page says that external calls are off, and how to switch them on');

  await waitState(page, 'example', 'ready');
  await waitState(page, 'remote', 'ready');
  // Every server ready (other steps add their own beside example and remote).
  await page.waitForFunction(() => {
    const n = document.querySelectorAll('#servers > li').length;
    return n >= 2 && document.getElementById('summary').textContent === n + ' servers · ' + n + ' ready';
  });
  step('the summary: ' + await page.locator('#summary').textContent());

  const tools = card(page, 'example').locator('[data-testid=tools]');
  await tools.locator('summary').click();
  const names = await tools.locator('li').allInnerTexts();
  for (const n of ['echo', 'sha256', 'now']) assert.ok(names.includes(n), 'tool names: ' + names.join(', '));
  step('the example server\'s tool names fold out: ' + names.length);
  await toolNamesInEventOrder(page);

  await page.fill('#filter', 'sha2');
  await page.waitForFunction(() => document.querySelector('#servers > li[data-name="remote"]').hidden &&
    !document.querySelector('#servers > li[data-name="example"]').hidden);
  await page.fill('#filter', 'REMO');
  await page.waitForFunction(() => !document.querySelector('#servers > li[data-name="remote"]').hidden &&
    document.querySelector('#servers > li[data-name="example"]').hidden);
  await page.fill('#filter', 'no such thing');
  await page.waitForFunction(() => [...document.querySelectorAll('#servers > li')].every((li) => li.hidden));
  await page.fill('#filter', '');
  await page.waitForFunction(() => [...document.querySelectorAll('#servers > li')].every((li) => !li.hidden));
  step('the filter finds servers by name and by tool name');

  await page.click('#gates-on');
  await page.waitForSelector('#gates-off[hidden]', { state: 'attached' });
  assert.equal(await page.isChecked('#g-external'), true);
  await page.reload();
  await page.waitForFunction(() => document.getElementById('g-external').checked);
  assert.equal(await page.locator('#gates-off').isHidden(), true);
  step('external calls switched on from the page, and still on after a reload');
}

main().catch((e) => {
  console.error('FAIL', e && e.stack || e);
  process.exit(1);
});
