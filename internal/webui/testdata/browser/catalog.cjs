// Drives the web page as a guide in headless Chromium (playwright-core,
// Debian's /usr/bin/chromium): run by catalog_test.go, which starts the
// daemon (its person's home holds a Claude Code file with one server that
// cannot start) and a registry of real entries, and passes:
//   LOGIN_URL      a one-time login link
//   OAUTH_URL      an MCP server that wants an OAuth login
//   CANARY         the token the registry's GitHub remote (a test server) wants
//   CANARY_CLIENT  the secret pasted in the Claude Code file
//   SHOTS          where to save screenshots, if set
// It prints one line per step and exits non-zero on the first failure.
'use strict';
const { launch, drive } = require('./launch.cjs');
const assert = require('node:assert/strict');
const path = require('node:path');

const env = process.env;
const T = 60000; // npx and two shared cores

function step(name) { console.log('ok ' + name); }

async function main() {
  const browser = await launch();
  const context = await browser.newContext({ viewport: { width: 1100, height: 1000 } });
  const page = await context.newPage();
  page.setDefaultTimeout(T);
  const { consoleErrors, bodies } = await drive(page, run, path.join(env.FAILSHOT || '/tmp', 'catalog-failure.png'));
  for (const b of bodies) {
    for (const secret of [env.CANARY, env.CANARY_CLIENT]) {
      assert.ok(!b.body.includes(secret), 'a secret value appeared in the response of ' + b.url);
    }
  }
  const html = await page.content();
  assert.ok(!html.includes(env.CANARY) && !html.includes(env.CANARY_CLIENT), 'a secret value is in the page');
  step('no secret value in the page or any of ' + bodies.length + ' response bodies');
  assert.deepEqual(consoleErrors.filter((e) => !/status of (401|404|409|400|502|503)/.test(e)), [], 'console errors');
  step('no script errors, no CSP violations');
  await browser.close();
}

const card = (page, name) => page.locator('#servers > li[data-name="' + name + '"]');
const entry = (page, name) => page.locator('#catalog-results > li[data-name="' + name + '"]');

async function waitState(page, name, state) {
  await page.waitForSelector('#servers > li[data-name="' + name + '"][data-state="' + state + '"]', { timeout: T });
}

async function saved(page, text) {
  await page.waitForSelector('#editor', { state: 'hidden' });
  await page.waitForFunction((t) => !document.getElementById('saved').hidden && document.getElementById('saved').textContent.includes(t), text);
  return page.textContent('#saved');
}

async function run(page) {
  await page.goto(env.LOGIN_URL);
  await page.waitForSelector('#app:not([hidden])');
  await page.waitForFunction(() => document.getElementById('live').textContent.startsWith('Live'));

  // The empty state guides: the registry, an import, a server by hand.
  await page.waitForSelector('#empty:not([hidden])');
  for (const id of ['#empty-catalog', '#empty-import', '#empty-add']) await page.waitForSelector(id);
  step('the empty state offers the registry, an import and a server by hand');

  // The catalog: every server of the registry, what Plexus can run and
  // what not (a bundle), with the registry it came from.
  await page.click('#empty-catalog');
  await page.waitForSelector('#catalog-results > li[data-name="io.github.modelcontextprotocol/server-memory"]');
  assert.match(await page.textContent('#catalog-source'), /^From http:\/\/127\.0\.0\.1:/);
  const bundle = await entry(page, 'com.mcpbundles/agent-interviews').textContent();
  assert.match(bundle, /mcpb .*not here: this is an MCP bundle/);
  step('the catalog lists the registry\'s servers; a bundle is said not to run here');
  await page.fill('#catalog-q', 'neo4j');
  await page.click('#catalog-search');
  await page.waitForFunction(() => document.querySelectorAll('#catalog-results > li').length === 1 &&
    document.querySelector('#catalog-results > li').dataset.name === 'io.github.neo4j-contrib/mcp-neo4j-cypher');
  step('a search finds a server by name');
  await shot(page, 'catalog.png');

  // An npm server from the registry: its optional input shown, the add
  // form filled, saved once it started, and the save confirmed.
  await page.fill('#catalog-q', 'memory');
  await page.click('#catalog-search');
  await entry(page, 'io.github.modelcontextprotocol/server-memory').getByRole('button').click();
  await page.waitForSelector('#reg-fields input[data-key="env:MEMORY_FILE_PATH"]');
  await page.click('#reg-fill');
  await page.waitForSelector('#editor:not([hidden])');
  assert.equal(await page.inputValue('#f-name'), 'memory');
  assert.equal(await page.inputValue('#f-command'), 'npx -y @modelcontextprotocol/server-memory@2026.8.31');
  assert.match(await page.textContent('#form-from'), /From the MCP registry: io\.github\.modelcontextprotocol\/server-memory 2026\.8\.31/);
  await page.click('#save');
  const said = await saved(page, 'Saved memory: ready');
  await waitState(page, 'memory', 'ready');
  step('an npm server added from the registry through the add form: ' + said);

  // A remote whose secret header the server checks: the form asks for it
  // as a secret; the value is sent once, never shown.
  await page.fill('#catalog-q', 'github-mcp');
  await page.click('#catalog-search');
  await entry(page, 'io.github.github/github-mcp-server').getByRole('button').click();
  await page.waitForFunction(() => document.getElementById('reg-fields').textContent.includes('Authorization (required)'));
  await page.click('#reg-fill');
  await page.waitForSelector('#editor:not([hidden])');
  const row = page.locator('#f-rows tr').first();
  assert.equal(await row.locator('.r-name').inputValue(), 'Authorization');
  assert.equal(await row.locator('.r-var').inputValue(), 'Bearer ${GITHUB_TOKEN}');
  assert.equal(await row.locator('.r-value').getAttribute('type'), 'password');
  await row.locator('.r-value').fill(env.CANARY);
  await page.click('#save');
  await saved(page, 'Saved github: ready, 1 tool');
  step('a remote added from the registry with its secret header');

  // Import from the detected Claude Code file: what it would do first,
  // then the import; the server that cannot start is listed first.
  const claude = page.locator('#client-list > li[data-client="claude"]');
  await claude.waitFor();
  assert.match(await claude.textContent(), /1 server: broken/);
  await claude.getByRole('button', { name: 'Import its servers…' }).click();
  await page.waitForFunction(() => document.getElementById('client-report').textContent.includes('broken'));
  assert.equal(await page.textContent('#client-go'), 'Import');
  await page.click('#client-go');
  await page.waitForFunction(() => document.getElementById('client-msg').textContent.startsWith('Imported: broken'));
  await waitState(page, 'broken', 'failed');
  await page.waitForFunction(() => document.querySelector('#servers > li').dataset.name === 'broken');
  step('imported from Claude Code\'s file; the failing server is listed first');

  // Connect Claude Code: the change shown (the pasted secret hidden),
  // then written as shown.
  await claude.getByRole('button', { name: 'Connect to Plexus…' }).click();
  await page.waitForFunction(() => !document.getElementById('client-diff').hidden);
  const diff = await page.textContent('#client-diff');
  assert.match(diff, /\+.*"plexus"/);
  assert.ok(!diff.includes(env.CANARY_CLIENT), 'the diff shows the pasted secret');
  await page.click('#client-go');
  await page.waitForFunction(() => document.getElementById('client-msg').textContent.startsWith('Connected:'));
  await page.waitForSelector('#client-list > li[data-client="claude"] [data-testid=connected]');
  step('connected Claude Code: ' + (await page.textContent('#client-msg')).slice(0, 120));

  // Marks: a sandboxed server, one that needs a login, one switched off
  // (listed last).
  await page.click('#add');
  await page.fill('#f-name', 'boxed');
  await page.check('input[name="type"][value="stdio"]');
  await page.fill('#f-command', 'plexus example-server');
  await page.check('#f-sandbox');
  await page.click('#save');
  await saved(page, 'Saved boxed');
  assert.match(await card(page, 'boxed').locator('[data-testid=mark-sandboxed]').textContent(), /^sandboxed: network none/);
  await page.click('#add');
  await page.fill('#f-name', 'linear');
  await page.check('input[name="type"][value="http"]');
  await page.fill('#f-url', env.OAUTH_URL);
  await page.click('#save');
  await saved(page, 'Saved linear: needs login');
  assert.equal(await card(page, 'linear').locator('[data-testid=state]').textContent(), 'State: needs login');
  await card(page, 'memory').getByRole('button', { name: 'Disable', exact: true }).click();
  await page.waitForSelector('#servers > li.off[data-name="memory"]');
  assert.equal(await card(page, 'memory').locator('[data-testid=state]').textContent(), 'State: disabled');
  await page.waitForFunction(() => {
    const names = [...document.querySelectorAll('#servers > li')].map((li) => li.dataset.name);
    return names.indexOf('broken') < names.indexOf('github') && names.indexOf('linear') < names.indexOf('github') && names[names.length - 1] === 'memory';
  });
  const order = await page.evaluate(() => [...document.querySelectorAll('#servers > li')].map((li) => li.dataset.name).join(', '));
  step('sandboxed, needs-login and switched-off servers marked; the order: ' + order);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'guide.png');
}

async function shot(page, name) {
  if (env.SHOTS) await page.screenshot({ path: path.join(env.SHOTS, name), fullPage: true });
}

main().catch((e) => { console.error(e); process.exit(1); });
