// Drives the viewer of a running `agent-memory serve` in Debian's headless Chromium through
// playwright-core (found via NODE_PATH). Environment: VIEWER_URL, CHROMIUM, PROFILE_DIR (a fresh
// user-data-dir), SCREENSHOTS (a directory). Prints "waiting-for-hook" once the live feed is
// connected and waits for a line on stdin: the Rust test runs a hook in another process then.
// Ends with one JSON line of what it saw; the Rust test asserts on it.
'use strict';
const { finish, nextLine, open } = require('./chromium.cjs');

const url = process.env.VIEWER_URL;
const WAIT = { timeout: 90000 };

(async () => {
  const { context, page, consoleErrors, shot } = await open({ width: 1100, height: 800 });
  let loads = 0;
  page.on('load', () => { loads += 1; });
  const result = {};
  try {
    // The address serve prints: the viewer keeps the token for the tab and every read sends it.
    await page.goto(`${url}/?token=${process.env.VIEWER_TOKEN}#/live`);
    await page.waitForSelector('#feed-status.on', WAIT);
    const loadsBefore = loads;
    console.log('waiting-for-hook');
    await nextLine();
    await page.waitForSelector('.feed-item[data-kind="event"] >> text=rename the tokenizer', WAIT);
    result.live_item_seen = loads === loadsBefore;
    await shot('feed');

    await page.click('nav a[href="#/search"]');
    await page.fill('#q', 'parser depth');
    await page.check('#explain');
    await page.click('#search-go');
    await page.waitForSelector('.hit', WAIT);
    result.hits = await page.locator('.hit').count();
    result.explain_shown = (await page.locator('.hit .explain').count()) > 0;
    await shot('search');

    await page.locator('.hit.observation .title a').first().click();
    await page.waitForSelector('#observation h1', WAIT);
    const obsText = await page.locator('#observation').innerText();
    result.observation_has_facts = obsText.includes('Facts') || obsText.includes('Narrative');
    await shot('observation');

    await page.click('#session-link');
    await page.waitForSelector('#session', WAIT);
    await shot('session');

    await page.click('nav a[href="#/health"]');
    await page.waitForSelector('svg#chart', WAIT);
    result.chart_bars = await page.locator('svg#chart rect').count();
    await shot('health');

    await page.click('#lang');
    await page.waitForSelector('svg#chart', WAIT);
    result.nav_zh = await page.locator('nav a[href="#/search"]').innerText();
    await shot('zh');
    await page.click('#lang');
    result.nav_en = await page.locator('nav a[href="#/search"]').innerText();

    // What agents were handed: the briefing a session start got, its items linked.
    await page.click('nav a[href="#/handed"]');
    await page.waitForSelector('.injection', WAIT);
    result.handed = await page.locator('.injection').count();
    result.handed_briefings = await page.locator('.injection[data-channel="briefing"]').count();
    result.handed_links = await page.locator('.injection .items a').count();
    await shot('handed');

    // Review, from the address serve prints with the token: approve the first candidate.
    await page.goto(`${url}/?token=${process.env.VIEWER_TOKEN}#/review`);
    await page.waitForSelector('.review-item', WAIT);
    result.token_left_in_address = page.url().includes('token=');
    const first = page.locator('.review-item').first();
    result.review_approved = Number(await first.getAttribute('data-id'));
    await first.locator('button.approve').click();
    await page.waitForSelector('.review-item.decided', WAIT);
    await shot('review');
  } catch (err) {
    result.error = String(err);
    await shot('failure').catch(() => {});
  }
  await finish({ context, consoleErrors }, result);
})();
