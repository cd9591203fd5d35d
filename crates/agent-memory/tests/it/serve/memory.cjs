// Manages memory through the viewer of a running `agent-memory serve` in Debian's headless
// Chromium through playwright-core (found via NODE_PATH), as a person would: the memory page
// read and filtered, one memory edited, forgotten and brought back, a supersession chain and a
// memory's sources followed; then the review page's selections decided in bulk. Environment:
// VIEWER_ADDRESS, CHROMIUM, PROFILE_DIR, SCREENSHOTS, EDIT (the id of the memory to change and
// its new text, kind and importance, as JSON), PROJECT (the project key whose candidates are
// approved together). Prints "forgotten" after forgetting and waits for a line on stdin, so
// the Rust test reads the store through the CLI then. Ends with one JSON line of what it saw.
'use strict';
const { finish, nextLine, open } = require('./chromium.cjs');

const edit = JSON.parse(process.env.EDIT);
const project = process.env.PROJECT;
const WAIT = { timeout: 90000 };

(async () => {
  const { context, page, consoleErrors, shot } = await open({ width: 1100, height: 900 });
  const result = { bulk: [] };
  const settled = () => page.waitForSelector('main:not([aria-busy])', WAIT);
  // The page's parts now are marked; a page drawn anew has none of them.
  const mark = () => page.evaluate(() => document.querySelectorAll('main > *').forEach((el) => el.setAttribute('data-stale', '')));
  const redrawn = () => page.waitForFunction(() => !document.querySelector('main > [data-stale]') && !document.querySelector('main[aria-busy]'), null, WAIT);
  const visit = async (hash, selector) => {
    await mark();
    await page.evaluate((h) => { if (location.hash === h) route(); else location.hash = h; }, hash);
    await redrawn();
    await page.waitForSelector(selector, WAIT);
  };
  // Every memory card as it reads.
  const memories = () => page.locator('.memory-card').evaluateAll((els) => els.map((el) => ({
    id: Number(el.dataset.id), text: el.querySelector('.memory-text')?.innerText ?? null,
    meta: el.querySelector('.meta').innerText, status: el.querySelector('.status-word').innerText,
    importance: el.querySelector('.importance').innerText,
    chain: [...el.querySelectorAll('.chain-link')].map((l) => l.innerText),
    from: el.querySelector('.provenance p').innerText,
    sources: [...el.querySelectorAll('.source-items li')].map((l) => ({
      ref: l.dataset.ref, text: l.innerText, href: l.querySelector('a').getAttribute('href'),
      session: l.querySelector('a.source-session')?.getAttribute('href') ?? null,
    })),
    buttons: [...el.querySelectorAll('.actions button')].map((b) => b.innerText),
  })));
  const one = async (id) => (await memories()).find((m) => m.id === id);
  const card = `.memory-card[data-id="${edit.id}"]`;

  try {
    await page.goto(process.env.VIEWER_ADDRESS);
    await settled();
    await visit('#/memory', '#memories .memory-card');
    result.listed = await memories();
    await shot('memory-page');

    // Filters: by kind, then global memory only.
    await mark();
    await page.selectOption('#memory-kind', 'decision');
    await redrawn();
    result.decisions = await memories();
    await visit('#/memory?tier=L3', '#memory-filters');
    result.global = await memories();

    // Edit the text, kind and importance of one memory.
    await visit('#/memory', card);
    await page.click(`${card} button.edit`);
    await page.fill(`${card} textarea`, edit.text);
    await page.selectOption(`${card} select.mem-kind-input`, edit.kind);
    await page.fill(`${card} input.mem-importance-input`, String(edit.importance));
    await page.click(`${card} button.save`);
    await page.waitForSelector(`${card} .note-line`, WAIT);
    result.edited = await one(edit.id);
    await shot('memory-edited');

    // Forget it; the store says so (the Rust test asks the CLI); bring it back.
    await page.click(`${card} button.forget`);
    await page.waitForSelector(`${card}[data-status="forgotten"]`, WAIT);
    result.forgotten = await one(edit.id);
    await shot('memory-forgotten');
    console.log('forgotten');
    await nextLine();
    await page.click(`${card} button.restore`);
    await page.waitForSelector(`${card}[data-status="active"]`, WAIT);
    result.restored = await one(edit.id);

    // What replaced what, with the retired ones shown too.
    await visit('#/memory?status=all', '.memory-card .chain-link');
    result.all = await memories();
    await shot('memory-chain');

    // A memory's source opens the item it came from.
    const source = result.all.flatMap((m) => m.sources).find((s) => s.ref.startsWith('o'));
    if (source) {
      await page.click(`.source-items li[data-ref="${source.ref}"] a`);
      const opened = await page.waitForSelector(`[data-ref="${source.ref}"]#observation`, { timeout: 20000 }).then(() => true, () => false);
      result.source_opened = { ref: source.ref, opened, title: opened ? await page.locator('#observation h1').innerText() : null };
    }

    // Review in bulk: a selection is counted, confirmed with its count, and decided at once.
    const review = async (label, pick, action) => {
      await visit('#/review', '#bulk-bar');
      await pick();
      const step = { label, action, count: await page.locator('#pick-count').innerText() };
      step.picked = await page.locator('.review-item').evaluateAll((els) => els.filter((li) => li.querySelector('input.pick').checked).map((li) => Number(li.dataset.id)));
      await page.click(`button.bulk[data-action="${action}"]`);
      step.question = await page.locator('#bulk-confirm .question').innerText();
      await page.click('#bulk-yes');
      await page.waitForSelector('#bulk-result:not([hidden])', WAIT);
      step.said = await page.locator('#bulk-result').innerText();
      step.decided = await page.locator('.review-item.decided').evaluateAll((els) => els.map((li) => [Number(li.dataset.id), li.innerText]));
      result.bulk.push(step);
      await shot(`review-bulk-${result.bulk.length}`);
    };
    await visit('#/review', '#bulk-bar');
    result.review_before = await page.locator('.review-item').evaluateAll((els) => els.map((li) => Number(li.dataset.id)));
    await review('project', () => page.selectOption('#pick-project', project), 'approve');
    await review('kind', () => page.selectOption('#pick-kind', 'preference'), 'approve_global');
    await review('all', () => page.click('#pick-all'), 'reject');
    await visit('#/review', '#review');
    result.review_after = await page.locator('main').innerText();
  } catch (err) {
    result.error = String(err);
    await shot('memory-failure').catch(() => {});
  }
  await finish({ context, consoleErrors }, result);
})();
