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
