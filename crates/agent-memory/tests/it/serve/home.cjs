// Reads the viewer's home (sessions as cards) of a running `agent-memory serve` in Debian's
// headless Chromium through playwright-core (found via NODE_PATH), as a person would: the cards
// with their observations and folded events, each filter, and a card updated live. Environment:
// VIEWER_ADDRESS (the address serve printed, with the token), CHROMIUM, PROFILE_DIR (a fresh
// user-data-dir), SCREENSHOTS (a directory), SESSION (the row id of the session whose events
// are opened and which the test adds to), FILTERS (a JSON list of [filter, value]). Prints
// "waiting-for-hooks" once the live feed is connected and waits for a line on stdin: the Rust
// test runs hooks in other processes then. Ends with one JSON line of what it saw.
'use strict';
const { finish, nextLine, open } = require('./chromium.cjs');

const session = process.env.SESSION;
const filters = JSON.parse(process.env.FILTERS);
const WAIT = { timeout: 90000 };

(async () => {
  const { context, page, consoleErrors, shot } = await open({ width: 1100, height: 900 });
  let loads = 0;
  page.on('load', () => { loads += 1; });
  const result = { filtered: [] };

  // Every card as it reads: who, where, what was asked, done and learned, each observation
  // line's mark and title, the folded events' label and the event lines a person can see.
  const cards = () => page.locator('.session-card').evaluateAll((els) => els.map((el) => {
    const text = (sel) => el.querySelector(sel)?.innerText.trim() ?? null;
    const seen = (e) => e.getClientRects().length > 0;
    return {
      session: Number(el.dataset.session), agent: text('.tag.agent'), project: text('.project'), branch: text('.branch'),
      asked: text('.asked'), done: text('.done'), learned: text('.learned'),
      lines: [...el.querySelectorAll('.obs-line')].map((l) => ({
        mark: l.querySelector('.mark').innerText, name: l.querySelector('.mark').title, title: l.querySelector('a').innerText,
      })),
      no_lines: text('.no-lines'), events_label: text('details.events summary'),
      events_shown: [...el.querySelectorAll('.event-line')].filter(seen).map((l) => l.innerText),
    };
  }));
  const card = (id) => `.session-card[data-session="${id}"]`;
  const settled = () => page.waitForSelector('main:not([aria-busy])', WAIT);
  // A filter changed by hand: the page draws a new list of cards.
  const choose = async (name, value) => {
    await page.evaluate(() => document.getElementById('sessions')?.setAttribute('data-stale', ''));
    await page.selectOption(`#home-${name}`, value);
    await page.waitForSelector('#sessions:not([data-stale])', WAIT);
    await settled();
  };
  const home = async () => {
    await page.evaluate(() => {
      document.getElementById('sessions')?.setAttribute('data-stale', '');
      if (location.hash === '#/' || location.hash === '') route(); else location.hash = '#/';
    });
    await page.waitForSelector('#sessions:not([data-stale]) .session-card', WAIT);
    await page.waitForSelector('#home-status.on', WAIT);
    await settled();
  };

  try {
    await page.goto(process.env.VIEWER_ADDRESS);
    await page.waitForSelector('#sessions .session-card', WAIT);
    await page.waitForSelector('#home-status.on', WAIT);
    await settled();
    result.heading = await page.locator('main h1').innerText();
    result.cards = await cards();
    result.count_label = await page.locator('#home-count').innerText();
    await shot('home-cards');

    // One click opens a session's events, read then.
    await page.click(`${card(session)} details.events summary`);
    await page.waitForSelector(`${card(session)} .event-line`, WAIT);
    result.opened = (await cards()).find((c) => c.session === Number(session));
    await shot('home-events');

    // Each filter, chosen as a person does, from the whole list.
    for (const [n, [name, value]] of filters.entries()) {
      await home();
      await choose(name, value);
      result.filtered.push({ name, value, address: page.url().split('#')[1], cards: await cards(), empty: await page.locator('#home-empty').isVisible() });
      await shot(`home-filter-${n + 1}-${name}`);
    }

    // Live: the session's card takes a new event in place; a new session gets a card on top.
    await home();
    await page.click(`${card(session)} details.events summary`);
    await page.waitForSelector(`${card(session)} .event-line`, WAIT);
    result.before_live = (await cards()).find((c) => c.session === Number(session));
    const loadsBefore = loads;
    console.log('waiting-for-hooks');
    await nextLine();
    await page.waitForFunction(({ sel, words }) => [...document.querySelectorAll(`${sel} .event-line`)].some((l) => l.innerText.includes(words)),
      { sel: card(session), words: process.env.LIVE_PROMPT }, WAIT);
    await page.waitForFunction((words) => document.querySelector('.session-card .asked')?.innerText.includes(words), process.env.NEW_PROMPT, WAIT);
    result.after_live = (await cards()).find((c) => c.session === Number(session));
    result.top_after_live = (await cards())[0];
    result.reloaded = loads !== loadsBefore;
    await shot('home-live');
  } catch (err) {
    result.error = String(err);
    await shot('home-failure').catch(() => {});
  }
  await finish({ context, consoleErrors }, result);
})();
