// Visits every page of the viewer of a running `agent-memory serve` (the sessions home, the
// live feed, search and each kind of item, a session, memory, review, health with each agent's
// wiring and the hook latency chart, what agents were handed session by session) in Debian's
// headless Chromium through playwright-core (found via NODE_PATH), in English and then in Chinese, and reads each as a person would. Environment: VIEWER_URL (the plain address), VIEWER_ADDRESS (the
// address serve printed, with the token), CHROMIUM, PROFILE_DIR (a fresh user-data-dir),
// SCREENSHOTS (a directory), QUERIES (a JSON list of searches that together find every kind of
// item), CANDIDATE (the id of the long review candidate). Ends with one JSON line of what it
// saw; the Rust test asserts on it.
'use strict';
const { finish, open } = require('./chromium.cjs');

const url = process.env.VIEWER_URL;
const address = process.env.VIEWER_ADDRESS;
const queries = JSON.parse(process.env.QUERIES);
const candidate = process.env.CANDIDATE;
const WAIT = { timeout: 90000 };

// What the text of a page must never show: what a script writes for a value it lacks.
const WORDS = /\b(null|undefined|NaN|Invalid Date)\b/;
// File names look like keys (`status.rs`); these endings are never a key's.
const FILE_ENDINGS = new Set(['rs', 'js', 'ts', 'py', 'md', 'toml', 'json', 'css', 'html', 'txt', 'yaml', 'yml', 'lock', 'sh', 'env']);

(async () => {
  const { context, page, consoleErrors, shot } = await open({ width: 1100, height: 800 });
  const result = { pages: [], hit_links: [], handed_links: [], observations: [] };

  // What a person sees on the page now that is wrong: a script's missing value, a translation
  // key shown as it is, a badge with nothing in it, a bullet outside its card.
  const problems = () => page.evaluate(({ words, endings }) => {
    const found = [];
    const keys = new Set(Object.keys(STRINGS.en));
    const spaces = new Set([...keys].map((k) => k.split('.')[0]));
    const texts = [document.body.innerText];
    document.querySelectorAll('input[placeholder], textarea[placeholder]').forEach((el) => texts.push(el.placeholder));
    document.querySelectorAll('option').forEach((el) => texts.push(el.textContent));
    document.querySelectorAll('textarea').forEach((el) => texts.push(el.value));
    document.querySelectorAll('[title]').forEach((el) => texts.push(el.getAttribute('title')));
    for (const text of texts) {
      const bad = text.match(new RegExp(words));
      if (bad) found.push(`shows "${bad[0]}" in: ${text.slice(Math.max(0, bad.index - 60), bad.index + 60)}`);
      for (const m of text.matchAll(/(^|[^\w./-])([a-z]+)\.([A-Za-z0-9_-]+)(?![\w/-])/g)) {
        const [whole, space, rest] = [`${m[2]}.${m[3]}`, m[2], m[3]];
        if (keys.has(whole) || (spaces.has(space) && !endings.includes(rest))) found.push(`shows the key ${whole}`);
      }
    }
    document.querySelectorAll('.tag').forEach((el) => {
      if (el.getClientRects().length && !el.textContent.trim()) found.push(`an empty badge in: ${el.parentElement.textContent.slice(0, 80)}`);
    });
    document.querySelectorAll('li').forEach((li) => {
      const style = getComputedStyle(li);
      if (style.display !== 'list-item' || style.listStyleType === 'none' || !li.getClientRects().length) return;
      const box = (li.closest('.card') || document.getElementById('main')).getBoundingClientRect();
      // The bullet sits about one em left of its item.
      if (li.getBoundingClientRect().left - parseFloat(style.fontSize) < box.left) found.push(`a bullet outside its card: ${li.textContent.slice(0, 60)}`);
    });
    return found;
  }, { words: WORDS.source, endings: [...FILE_ENDINGS] });

  let lang = 'en';
  // The page marks its main area busy while it renders.
  const settled = () => page.waitForSelector('main:not([aria-busy])', WAIT);
  const look = async (name) => {
    await settled();
    result.pages.push({ lang, name, problems: await problems() });
    await shot(`${lang}-${name}`);
  };
  const visit = async (hash, selector) => {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await page.waitForSelector(selector, WAIT);
    await settled();
  };

  try {
    // The plain address, without the token: a page that says where the token is, not an error.
    await page.goto(`${url}/`);
    await page.waitForSelector('#token-needed', WAIT);
    result.plain_address = await page.locator('main').innerText();
    result.pages.push({ lang, name: 'plain-address', problems: await problems() });
    await shot('plain-address');

    // The address serve printed: the viewer keeps the token for the tab.
    await page.goto(address);
    await page.waitForSelector('#home-status.on', WAIT);
    result.token_left_in_address = page.url().includes('token=');
    for (const next of ['en', 'zh']) {
      if (await page.evaluate(() => document.documentElement.lang) !== (next === 'zh' ? 'zh-CN' : 'en')) await page.click('#lang');
      lang = next;
      // The home: sessions as cards, one with its events opened.
      await visit('#/', '#sessions .session-card');
      await page.click('#sessions .session-card details.events summary');
      await page.waitForSelector('#sessions .event-line', WAIT);
      await look('home');
      await visit('#/live', '#feed .feed-item');
      await look('feed');

      // Search: every hit's link opens that very item, whatever its kind.
      for (const [n, query] of queries.entries()) {
        await visit(`#/search?q=${encodeURIComponent(query)}&limit=50`, '.hit');
        result[`search_kinds_${lang}`] = await page.locator('#search-kind option').evaluateAll((os) => os.map((o) => [o.value, o.textContent]));
        await look(`search-${n + 1}`);
        const hits = await page.locator('.hit').evaluateAll((cards) => cards.map((c) => ({
          ref: c.dataset.ref, href: c.querySelector('.title a').getAttribute('href'), title: c.querySelector('.title a').textContent,
        })));
        for (const hit of hits) {
          await page.evaluate((h) => { location.hash = h; }, hit.href);
          const opened = await page.waitForSelector(`[data-ref="${hit.ref}"]`, { timeout: 20000 }).then(() => true, () => false);
          const text = await page.locator('main').innerText();
          const title = hit.title.replace(/…$/, '').trim();
          result.hit_links.push({ lang, ref: hit.ref, href: hit.href, opened, shows_id: text.includes(hit.ref), shows_title: text.includes(title) });
          const kind = hit.ref[0];
          if (opened && kind === 'o') {
            result.observations.push({
              lang, ref: hit.ref, type: await page.evaluate(() => document.querySelector('#observation-type')?.innerText ?? ''),
              title: await page.locator('#observation h1').innerText(),
            });
          }
          if (opened && !result.pages.some((p) => p.lang === lang && p.name === `item-${kind}`)) await look(`item-${kind}`);
        }
      }
      // Search for memory only: the kind filter has it, and it finds only memories.
      await visit(`#/search?q=${encodeURIComponent(queries[0])}&kind=memory`, '.hit');
      result[`memory_only_${lang}`] = await page.locator('.hit').evaluateAll((cards) => cards.map((c) => c.dataset.ref));
      result[`memory_by_${lang}`] = await page.locator('.hit .by').evaluateAll((els) => els.map((e) => e.textContent));

      // A session, from an observation's page.
      const observation = result.hit_links.find((l) => l.lang === lang && l.ref[0] === 'o');
      await visit(observation.href, '#session-link');
      await page.click('#session-link');
      await page.waitForSelector('#session', WAIT);
      await look('session');

      // Review: the long candidate is read whole in its box.
      await visit('#/review', `.review-item[data-id="${candidate}"] textarea`);
      result[`review_${lang}`] = await page.locator(`.review-item[data-id="${candidate}"] textarea`).evaluate((box) => ({
        text: box.value, scroll_height: box.scrollHeight, client_height: box.clientHeight, width: box.clientWidth,
        line_height: parseFloat(getComputedStyle(box).lineHeight),
      }));
      await look('review');

      // Memory: project and global memory, what replaced what and where each came from,
      // every memory there is.
      await visit('#/memory?status=all', '#memories .memory-card');
      await look('memory');

      // Health: figures in words, and the counts the store reports.
      await visit('#/health', 'svg#chart');
      await page.waitForSelector('#agents', WAIT);
      await page.waitForSelector('svg#latency-chart rect', WAIT);
      result[`health_${lang}`] = await page.evaluate(async () => {
        const shown = (id) => document.querySelector(`#${id} .figure, #${id} .words`).textContent;
        const stats = await api('/api/stats?days=30');
        return {
          spool: shown('fig-spool'), worker: shown('fig-worker'),
          agents: document.querySelector('#agents').innerText,
          latency_bars: document.querySelectorAll('svg#latency-chart rect').length,
          counts: ['observations', 'summaries', 'memories', 'candidates'].map((k) => [k, shown(`fig-${k}`), String(stats.store[k])]),
        };
      });
      await look('health');

      // What agents were handed: each item's link opens that item.
      await visit('#/handed', '.handed-session .injection');
      result[`handed_sessions_${lang}`] = await page.locator('.handed-session .session-head').evaluateAll((els) => els.map((e) => e.innerText));
      await look('handed');
      const links = await page.locator('.injection .items a').evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
      for (const [ref, href] of links.slice(0, 6)) {
        await page.evaluate((h) => { location.hash = h; }, href);
        const opened = await page.waitForSelector(`[data-ref="${ref}"]`, { timeout: 20000 }).then(() => true, () => false);
        result.handed_links.push({ lang, ref, opened });
      }
    }
    result.missing_zh = await page.evaluate(() => Object.keys(STRINGS.en).filter((k) => !(k in STRINGS.zh)));
  } catch (err) {
    result.error = String(err);
    await shot('failure').catch(() => {});
  }
  await finish({ context, consoleErrors }, result);
})();
