// Drives the web page in headless Chromium: a key in a URL's query never
// reaches the page, and plain values stay plain. Run by urlkey_test.go:
//   LOGIN_URL  a one-time login link
//   HTTP_URL   a streamable HTTP MCP server that wants ?api_key=CANARY
//   CANARY     that key
// The daemon already has the stdio server "plain" with DEBUG={"value": "1"}.
//   SLOW_CMD   a server that writes a stderr line and takes 4 s to start
'use strict';
const { chromium } = require('playwright-core');
const assert = require('node:assert/strict');

const env = process.env;
const T = 30000;

function step(name) { console.log('ok ' + name); }

async function main() {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  const page = await (await browser.newContext({ viewport: { width: 1100, height: 1000 } })).newPage();
  page.setDefaultTimeout(T);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const bodies = [];
  const pending = [];
  page.on('response', (resp) => {
    if ((resp.headers()['content-type'] || '').startsWith('text/event-stream')) return;
    pending.push(resp.body().then((b) => bodies.push({ url: resp.url(), body: b.toString('utf8') }), () => {}));
  });
  try {
    await run(page);
  } catch (e) {
    console.log('page text at failure:\n' + (await page.locator('body').innerText().catch(() => '?')));
    throw e;
  }
  await Promise.all(pending);
  for (const b of bodies) assert.ok(!b.body.includes(env.CANARY), 'the key appeared in the response of ' + b.url);
  step('the key is in none of ' + bodies.length + ' response bodies');
  assert.deepEqual(errors, [], 'script errors');
  await browser.close();
}

// pageHolds reports whether the key is anywhere in the page: its text or
// any field's value.
async function pageHolds(page, secret) {
  return page.evaluate((s) => document.body.innerText.includes(s) ||
    [...document.querySelectorAll('input, textarea')].some((e) => e.value.includes(s)), secret);
}

async function run(page) {
  await page.goto(env.LOGIN_URL);
  await page.waitForSelector('#app:not([hidden])');
  await page.waitForSelector('#servers > li[data-name="plain"][data-state="ready"]');

  // Add a server by a URL with its key in the query.
  await page.click('#add');
  await page.fill('#f-name', 'keyed');
  await page.check('input[name="type"][value="http"]');
  await page.fill('#f-url', env.HTTP_URL + '?api_key=' + env.CANARY + '&team=blue');
  await page.click('#save');
  await page.waitForSelector('#editor', { state: 'hidden' });
  await page.waitForSelector('#servers > li[data-name="keyed"][data-state="ready"]');
  assert.ok(!(await pageHolds(page, env.CANARY)), 'the page shows the key after the save');
  step('added a server whose URL carries its key; it is ready');

  // Its edit form shows the variable, never the key.
  await page.locator('#servers > li[data-name="keyed"]').getByRole('button', { name: 'Edit', exact: true }).click();
  await page.waitForFunction(() => document.getElementById('f-url').value.includes('${KEYED_API_KEY}'));
  assert.equal(await page.inputValue('#f-url'), env.HTTP_URL + '?api_key=${KEYED_API_KEY}&team=blue');
  assert.ok(!(await pageHolds(page, env.CANARY)), 'the edit form shows the key');
  await page.click('#cancel');
  step('the edit form shows ${KEYED_API_KEY} in the URL');

  // A plain value is shown as text and saved as a plain value.
  await page.locator('#servers > li[data-name="plain"]').getByRole('button', { name: 'Edit', exact: true }).click();
  await page.waitForSelector('#f-rows tr[data-plain="1"]');
  const row = page.locator('#f-rows tr[data-plain="1"]');
  assert.equal(await row.locator('.r-name').inputValue(), 'DEBUG');
  assert.equal(await row.locator('.r-value').inputValue(), '1');
  assert.equal(await row.locator('.r-value').getAttribute('type'), 'text');
  await row.locator('.r-value').fill('2');
  await page.click('#save');
  await page.waitForSelector('#editor', { state: 'hidden' });
  step('a plain value is shown and edited as text');

  // A slow start shows the time waited and the server's latest stderr
  // line, and running out of time points at the startup timeout.
  await page.click('#add');
  await page.fill('#f-name', 'slow');
  await page.check('input[name="type"][value="stdio"]');
  await page.fill('#f-command', env.SLOW_CMD);
  await page.fill('#f-startup', '3000');
  await page.click('#save');
  await page.waitForFunction(() => /Connecting to slow… [0-9]+ s · npm warn exec/.test(document.getElementById('form-progress').textContent));
  await page.waitForFunction(() => document.getElementById('e-startup').textContent.includes('raise the startup timeout'));
  await page.click('#cancel');
  step('a slow start shows its time and stderr line; a timeout points at the startup timeout');
}

main().catch((e) => { console.error(e); process.exit(1); });
