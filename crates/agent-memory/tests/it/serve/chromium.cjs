// What every browser script here starts and ends with: Debian's headless Chromium through
// playwright-core (found via NODE_PATH), on a fresh profile (PROFILE_DIR), with the page's console
// errors kept and a screenshot helper writing into SCREENSHOTS; a line read from the Rust test;
// and the one JSON line of what the script saw, with its exit status.
'use strict';
const { chromium } = require('playwright-core');
const path = require('path');
const readline = require('readline');

async function open(viewport = { width: 1100, height: 800 }) {
  const context = await chromium.launchPersistentContext(process.env.PROFILE_DIR, {
    executablePath: process.env.CHROMIUM,
    headless: true,
    viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] || await context.newPage();
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  const shot = (name) =>
    page.screenshot({ path: path.join(process.env.SCREENSHOTS, `${name}.png`), fullPage: true });
  return { context, page, consoleErrors, shot };
}

// The next line the Rust test writes on stdin: it runs hooks in other processes meanwhile.
function nextLine() {
  const rl = readline.createInterface({ input: process.stdin });
  return new Promise((resolve) => rl.once('line', (line) => { rl.close(); resolve(line); }));
}

// Prints what the script saw (`result`, with the page's console errors) as one JSON line,
// closes the browser and exits, failing when `result.error` says something went wrong.
async function finish({ context, consoleErrors }, result) {
  result.console_errors = consoleErrors;
  console.log(JSON.stringify(result));
  await context.close();
  process.exit(result.error ? 1 : 0);
}

module.exports = { finish, nextLine, open };
