// launch starts Debian's headless Chromium through playwright-core with the
// flags every browser script of these tests uses.
'use strict';
const { chromium } = require('playwright-core');

module.exports.launch = () => chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});

// drive runs run(page), recording what the page logs as an error and
// every response body it receives (not the event stream's: the Go tests
// follow that themselves); a failure saves a screenshot as failshot and
// prints the page's text. It returns the errors and the bodies.
module.exports.drive = async (page, run, failshot) => {
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  const bodies = [];
  const pending = [];
  page.on('response', (resp) => {
    if ((resp.headers()['content-type'] || '').startsWith('text/event-stream')) return;
    pending.push(resp.body().then((b) => bodies.push({ url: resp.url(), body: b.toString('utf8') }), () => {}));
  });
  try {
    await run(page);
  } catch (e) {
    await page.screenshot({ path: failshot, fullPage: true }).catch(() => {});
    console.log('page text at failure:\n' + (await page.locator('body').innerText().catch(() => '?')));
    throw e;
  }
  await Promise.all(pending);
  return { consoleErrors, bodies };
};
