// A person's browser for the OAuth end-to-end tests: Debian's headless
// Chromium through playwright-core, one long-lived browser that logs in
// once per line it reads on stdin, each time in a fresh context (a new
// person: no cookies of the last login).
//
// A line is {"url": AUTH_URL, "user": ACCOUNT, "paste": BOOL}. The browser
// opens the URL, signs in at oidc-provider's login page as ACCOUNT (any
// password), accepts its consent page, and follows the redirect:
//
//   paste false  to the daemon's loopback listener, as a browser on the
//                daemon's machine does; the answer's text is reported.
//   paste true   nowhere: the browser is on another machine, where the
//                loopback address is not the daemon's. The address it was
//                sent to is reported, for the test to paste back.
//
// It writes one JSON line per login: {"ok", "url", "text", "pages"} or
// {"ok": false, "error"}. pages lists what the person saw ("login",
// "consent").
'use strict';
const readline = require('node:readline');
const { chromium } = require('playwright-core');

const callback = /^http:\/\/127\.0\.0\.1:\d+\/callback(\?|$)/;

async function login(browser, job) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(60000);
    let pasted = '';
    if (job.paste) {
      // The redirect to the loopback address goes no further. Playwright's
      // routes see only the first request of a redirect chain, and this
      // one ends a chain: Chromium's own request interception (CDP Fetch)
      // sees every request.
      const cdp = await context.newCDPSession(page);
      cdp.on('Fetch.requestPaused', (ev) => {
        pasted = ev.request.url;
        cdp.send('Fetch.fulfillRequest', {
          requestId: ev.requestId, responseCode: 200,
          responseHeaders: [{ name: 'Content-Type', value: 'text/html' }],
          body: Buffer.from('<p>This address is not reachable from here: copy it.</p>').toString('base64'),
        }).catch(() => {});
      });
      await cdp.send('Fetch.enable', { patterns: [{ urlPattern: 'http://127.0.0.1:*/callback*', requestStage: 'Request' }] });
    }
    const pages = [];
    await page.goto(job.url);
    for (let step = 0; step < 6; step++) {
      if (callback.test(page.url()) || pasted) break;
      if (await page.$('input[name=login]')) {
        pages.push('login');
        await page.fill('input[name=login]', job.user);
        await page.fill('input[name=password]', 'any password');
      } else if (await page.$('input[name=prompt][value=consent]')) {
        pages.push('consent');
      } else {
        break;
      }
      await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('button[type=submit]')]);
    }
    if (!callback.test(page.url()) && !pasted) {
      return { ok: false, error: `the browser ended at ${page.url().split('?')[0]}: ${(await page.textContent('body')).slice(0, 300)}`, pages };
    }
    const text = (await page.textContent('body')).trim();
    return { ok: true, url: job.paste ? pasted : page.url(), text, pages };
  } finally {
    await context.close();
  }
}

(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  process.stdout.write(JSON.stringify({ ok: true, ready: true }) + '\n');
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    let out;
    try {
      out = await login(browser, JSON.parse(line));
    } catch (err) {
      out = { ok: false, error: String((err && err.message) || err) };
    }
    process.stdout.write(JSON.stringify(out) + '\n');
  }
  await browser.close();
})().catch((err) => {
  process.stderr.write(String((err && err.stack) || err) + '\n');
  process.exit(1);
});
