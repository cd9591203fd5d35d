// Reads the health, handed and memory pages of a running `agent-memory serve` in Debian's
// headless Chromium through playwright-core (found via NODE_PATH): each agent's wiring in words
// and the hook latency chart, what each session was handed, and the files a memory rests on
// with their marks. Environment: VIEWER_ADDRESS, CHROMIUM, PROFILE_DIR, SCREENSHOTS. Ends with
// one JSON line of what it saw.
'use strict';
const { finish, open } = require('./chromium.cjs');

const WAIT = { timeout: 90000 };

(async () => {
  const { context, page, consoleErrors, shot } = await open({ width: 1100, height: 900 });
  const result = {};
  const settled = () => page.waitForSelector('main:not([aria-busy])', WAIT);
  const visit = async (hash, selector) => {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await page.waitForSelector(selector, WAIT);
    await settled();
  };
  try {
    await page.goto(process.env.VIEWER_ADDRESS);
    await settled();

    await visit('#/health', '#agents .agent-wiring');
    await page.waitForSelector('svg#latency-chart rect', WAIT);
    result.agents = await page.locator('#agents .agent-wiring').evaluateAll((els) => els.map((el) => ({
      agent: el.dataset.agent, wiring: el.dataset.wiring, words: el.querySelector('.wiring-words').textContent,
      last_hook: el.querySelector('.last-hook').textContent,
    })));
    result.latency_p50 = await page.locator('svg#latency-chart rect.lat-p50').count();
    result.latency_p95 = await page.locator('svg#latency-chart rect.lat-p95').count();
    result.events_chart = await page.locator('svg#chart').count();
    await shot('details-health');

    await visit('#/handed', '.handed-session');
    result.sessions = await page.locator('.handed-session').evaluateAll((els) => els.map((el) => ({
      agent: el.dataset.agent, session: el.dataset.session, head: el.querySelector('.session-head').innerText,
      channels: [...el.querySelectorAll('.injection')].map((i) => i.dataset.channel),
      links: el.querySelectorAll('.injection .items a').length,
    })));
    await shot('details-handed');

    await visit('#/memory', '#memories .memory-card');
    result.marks = await page.locator('.memory-card').evaluateAll((els) => els.map((el) => ({
      id: Number(el.dataset.id),
      anchors: [...el.querySelectorAll('.anchor-mark')].map((a) => ({ path: a.dataset.path, state: a.dataset.state, text: a.textContent })),
    })));
    await shot('details-memory');
  } catch (err) {
    result.error = String(err);
    await shot('details-failure').catch(() => {});
  }
  await finish({ context, consoleErrors }, result);
})();
