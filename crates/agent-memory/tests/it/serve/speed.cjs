// Opens the viewer's home of a running `agent-memory serve` that holds hundreds of sessions, in
// Debian's headless Chromium through playwright-core (found via NODE_PATH), and measures in the
// page how long after the navigation began the CARDS-th session card was in the document: on
// the first visit (`first_ms`, the browser's own start-up included) and on three reloads
// (`reloads_ms`; `ms` is the quickest, the page's own cost with the least of the machine's other
// load in it), with the time the cards' request took on each (`api_ms`).
// Environment: VIEWER_ADDRESS, CHROMIUM, PROFILE_DIR, SCREENSHOTS, CARDS. Ends with one JSON
// line of what it saw.
'use strict';
const { finish, open } = require('./chromium.cjs');
const path = require('path');

const wanted = Number(process.env.CARDS);
const WAIT = { timeout: 90000 };

(async () => {
  const { context, page, consoleErrors } = await open({ width: 1100, height: 900 });
  const result = {};
  // Before the page's own script runs: note the moment the wanted card joins the document,
  // in milliseconds since the navigation started.
  await page.addInitScript((n) => {
    new MutationObserver((_, observer) => {
      if (document.querySelectorAll('.session-card').length >= n) {
        window.cardsAt = performance.now();
        observer.disconnect();
      }
    }).observe(document, { childList: true, subtree: true });
  }, wanted);
  try {
    // When the wanted card came, and how long the request for the cards took.
    const visit = async () => {
      await page.waitForFunction(() => typeof window.cardsAt === 'number', null, WAIT);
      return page.evaluate(() => [window.cardsAt, performance.getEntriesByType('resource')
        .filter((r) => r.name.includes('/api/session-cards'))
        .map((r) => r.responseEnd - r.startTime)[0]]);
    };
    // A warm-up visit loads the browser's own pieces; the ones measured are the reloads.
    await page.goto(process.env.VIEWER_ADDRESS);
    const [first, firstApi] = await visit();
    result.first_ms = first;
    result.reloads_ms = [];
    result.api_ms = [firstApi];
    for (let n = 0; n < 3; n += 1) {
      await page.reload();
      const [ms, api] = await visit();
      result.reloads_ms.push(ms);
      result.api_ms.push(api);
    }
    result.ms = Math.min(...result.reloads_ms);
    await page.waitForSelector('main:not([aria-busy])', WAIT);
    result.cards = await page.locator('.session-card').count();
    result.last = await page.locator('.session-card').nth(wanted - 1).evaluate((el) => ({
      asked: el.querySelector('.asked').innerText, lines: [...el.querySelectorAll('.obs-line')].map((l) => l.innerText),
      events: el.querySelector('details.events summary').innerText,
    }));
    result.first = await page.locator('.session-card').first().evaluate((el) => el.querySelector('.asked').innerText);
    result.older_button = await page.locator('#home-older').isVisible();
    await page.screenshot({ path: path.join(process.env.SCREENSHOTS, 'home-200.png') });
  } catch (err) {
    result.error = String(err);
  }
  await finish({ context, consoleErrors }, result);
})();
