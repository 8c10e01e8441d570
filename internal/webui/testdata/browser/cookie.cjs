// The cookie-collecting attack of the security notes, in headless Chromium
// (Debian's /usr/bin/chromium, through playwright-core). Run by
// TestCookieFromOtherLoopbackPortIsRefused, which passes in the environment:
//   LOGIN_URL     a one-time login link from `plexus ui --no-browser`
//   LURE_URL      a page on another port of 127.0.0.1 that navigates to
//                 itself (a same-site navigation, which SameSite=Strict
//                 allows) and so collects the cookies the browser sends it
// The user logs in, then visits the lure; the Go test replays what the
// lure collected. It prints one line per step and exits non-zero on failure.
'use strict';
const { launch } = require('./launch.cjs');
const assert = require('node:assert/strict');

const env = process.env;
const T = 30000;

async function main() {
  const browser = await launch();
  const page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(T);

  await page.goto(env.LOGIN_URL);
  await page.waitForSelector('#app:not([hidden])');
  assert.equal(page.url(), new URL(env.LOGIN_URL).origin + '/', 'the page token left the address bar');
  console.log('ok logged in');

  await page.goto(env.LURE_URL);
  await page.waitForFunction(() => document.title === 'collected');
  console.log('ok the lure on another port collected what the browser sent it');

  // The page itself still works after the visit.
  await page.goto(new URL(env.LOGIN_URL).origin + '/');
  await page.waitForSelector('#app:not([hidden])');
  console.log('ok the page itself still works');
  await browser.close();
}

main().catch((e) => {
  console.error('FAIL', e && e.stack || e);
  process.exit(1);
});
