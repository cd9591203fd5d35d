// What every browser script here starts with: Debian's headless Chromium through playwright-core
// (found via NODE_PATH), on a fresh profile (PROFILE_DIR), with the page's console errors kept
// and a screenshot helper writing into SCREENSHOTS.
'use strict';
const { chromium } = require('playwright-core');
const path = require('path');

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

module.exports = { open };
