// The agent-memory viewer: one page with hash routes, reading the JSON API of the server that
// served it and its live feed. Plain script, no build step; every text from the store is set
// with textContent, never as markup.
'use strict';

const STRINGS = {
  en: {
    'nav.feed': 'Live', 'nav.search': 'Search', 'nav.health': 'Health', 'nav.review': 'Review', 'nav.handed': 'Handed',
    'handed.title': 'What agents were handed', 'handed.empty': 'Nothing has been handed to an agent yet: briefings, recalls and file context appear here as agents get them.',
    'handed.items': 'items', 'handed.cut': 'cut by the budget',
    'obs.anchors': 'Rests on', 'anchor.fresh': 'as it was', 'anchor.changed': 'changed since', 'anchor.gone': 'gone since',
    'feed.title': 'Live feed', 'feed.empty': 'Nothing yet. New events, observations and summaries appear here as agents work.',
    'feed.live': 'live', 'feed.offline': 'reconnecting…',
    'filter.project': 'All projects', 'filter.agent': 'Agent', 'filter.type': 'Type', 'filter.kinds': 'Show',
    'kind.event': 'event', 'kind.observation': 'observation', 'kind.summary': 'summary',
    'search.placeholder': 'Search memory (any language, file names, identifiers)…', 'search.go': 'Search',
    'search.explain': 'Explain scores', 'search.none': 'No matches. Try fewer or other words, or drop a filter.',
    'search.results': 'results', 'search.kind': 'All kinds',
    'obs.facts': 'Facts', 'obs.narrative': 'Narrative', 'obs.files_read': 'Files read', 'obs.files_modified': 'Files modified',
    'obs.concepts': 'Concepts', 'obs.sources': 'Source events', 'obs.session': 'Session', 'obs.agent': 'Agent',
    'session.title': 'Session', 'session.summary': 'Summary', 'session.timeline': 'Timeline across agents',
    'session.events': 'Events', 'session.nosummary': 'No summary yet.', 'session.request': 'Request',
    'session.investigated': 'Investigated', 'session.learned': 'Learned', 'session.completed': 'Completed', 'session.next': 'Next steps',
    'health.title': 'Health', 'health.size': 'Store size', 'health.events': 'Events', 'health.sessions': 'Sessions',
    'health.hook_errors': 'Hook error rate (24h)', 'health.hook_runs': 'Hook runs (24h)', 'health.spool': 'Spooled files',
    'health.spend': 'LLM tokens (7 days)', 'health.worker': 'Worker', 'health.chart': 'Events per day per agent',
    'health.worker_ok': 'last pass ok', 'health.worker_fail': 'failing', 'health.worker_off': 'off', 'health.nochart': 'No events in this period.',
    'review.title': 'Review', 'review.empty': 'No candidates wait for review.',
    'review.approve': 'Approve', 'review.global': 'Approve as global', 'review.reject': 'Reject',
    'review.edit': 'Save edit', 'review.replaces': 'Replaces', 'review.done': 'Done',
    'review.token': 'To approve or reject, open the viewer from the address `agent-memory serve` prints (it carries the local token).',
    'token.missing': 'This viewer needs the local token: open it from the address `agent-memory serve` prints (or run `agent-memory serve --status`).',
    'error': 'Error', 'tokens': 'tokens', 'back': 'back',
  },
  zh: {
    'nav.feed': '实时', 'nav.search': '搜索', 'nav.health': '状态', 'nav.review': '审阅', 'nav.handed': '注入记录',
    'handed.title': '交给助手的上下文', 'handed.empty': '还没有交给助手任何内容：助手拿到简报、召回和文件上下文时会出现在这里。',
    'handed.items': '条', 'handed.cut': '因预算裁掉',
    'obs.anchors': '依据的文件', 'anchor.fresh': '未改动', 'anchor.changed': '改动于', 'anchor.gone': '删除于',
    'feed.title': '实时动态', 'feed.empty': '暂无内容。智能体工作时，新的事件、观察和摘要会出现在这里。',
    'feed.live': '已连接', 'feed.offline': '正在重连…',
    'filter.project': '全部项目', 'filter.agent': '智能体', 'filter.type': '类型', 'filter.kinds': '显示',
    'kind.event': '事件', 'kind.observation': '观察', 'kind.summary': '摘要',
    'search.placeholder': '搜索记忆（任意语言、文件名、标识符）…', 'search.go': '搜索',
    'search.explain': '显示评分明细', 'search.none': '没有结果。请换个说法或去掉筛选条件。',
    'search.results': '条结果', 'search.kind': '全部种类',
    'obs.facts': '事实', 'obs.narrative': '经过', 'obs.files_read': '读取的文件', 'obs.files_modified': '修改的文件',
    'obs.concepts': '概念', 'obs.sources': '来源事件', 'obs.session': '会话', 'obs.agent': '智能体',
    'session.title': '会话', 'session.summary': '摘要', 'session.timeline': '跨智能体时间线',
    'session.events': '事件', 'session.nosummary': '尚无摘要。', 'session.request': '请求',
    'session.investigated': '调查', 'session.learned': '收获', 'session.completed': '完成', 'session.next': '下一步',
    'health.title': '运行状态', 'health.size': '存储大小', 'health.events': '事件', 'health.sessions': '会话',
    'health.hook_errors': '钩子错误率（24 小时）', 'health.hook_runs': '钩子运行（24 小时）', 'health.spool': '暂存文件',
    'health.spend': 'LLM 用量（7 天）', 'health.worker': '后台任务', 'health.chart': '每日各智能体事件数',
    'health.worker_ok': '上次运行正常', 'health.worker_fail': '失败中', 'health.worker_off': '未启用', 'health.nochart': '此期间没有事件。',
    'review.title': '审阅', 'review.empty': '没有待审阅的候选记忆。',
    'review.approve': '批准', 'review.global': '批准为全局记忆', 'review.reject': '拒绝',
    'review.edit': '保存修改', 'review.replaces': '将取代', 'review.done': '已处理',
    'review.token': '要批准或拒绝，请从 `agent-memory serve` 打印的地址打开查看器（其中带有本地令牌）。',
    'token.missing': '查看器需要本地令牌：请从 `agent-memory serve` 打印的地址打开（或运行 `agent-memory serve --status`）。',
    'error': '错误', 'tokens': '词元', 'back': '返回',
  },
};

let lang = localStorage.getItem('agent-memory.lang') || '';
const t = (key) => (STRINGS[lang] || STRINGS.en)[key] || STRINGS.en[key] || key;

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// The local token, from the address `agent-memory serve` prints (`/?token=…`): kept for this
// tab only and taken out of the address bar, sent only to this server, with every request.
const token = (() => {
  const given = new URLSearchParams(location.search).get('token');
  if (given) {
    sessionStorage.setItem('agent-memory.token', given);
    history.replaceState(null, '', location.pathname + location.hash);
  }
  return sessionStorage.getItem('agent-memory.token');
})();

async function api(path, payload) {
  const init = { headers: { Accept: 'application/json' } };
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (payload !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(payload);
  }
  const res = await fetch(path, init);
  const body = await res.json().catch(() => ({ message: res.statusText, code: 'internal' }));
  if (res.status === 401) throw new Error(t('token.missing'));
  if (!res.ok) throw new Error(`${body.message} (${body.code})`);
  return body;
}

const when = (ms) => new Date(ms).toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-GB', { dateStyle: 'short', timeStyle: 'medium' });
const main = () => document.getElementById('main');
const params = () => new URLSearchParams((location.hash.split('?')[1]) || '');

function setLang(next) {
  lang = next;
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  document.querySelectorAll('[data-i18n]').forEach((el) => { el.textContent = t(el.dataset.i18n); });
  document.getElementById('lang').textContent = lang === 'zh' ? 'English' : '中文';
}

function errorBox(err) { return h('p', { class: 'error' }, `${t('error')}: ${err.message}`); }

// ---- live feed -------------------------------------------------------------------------

let feedSource = null;
function closeFeed() { if (feedSource) { feedSource.close(); feedSource = null; } }

function itemCard(kind, row) {
  const title = kind === 'summary' ? (row.request || '—') : kind === 'event' ? row.summary : row.title;
  const link = kind === 'observation' ? `#/o/${row.id}` : kind === 'event' ? `#/e/${row.id}` : `#/s/${row.session_id}`;
  const type = kind === 'observation' ? row.type : kind === 'event' ? row.kind : 'summary';
  return h('li', { class: `card feed-item ${kind}`, 'data-kind': kind, 'data-id': row.id },
    h('div', { class: 'meta' },
      h('span', { class: `tag ${kind}` }, t(`kind.${kind}`)),
      h('span', {}, type), h('span', {}, row.agent), h('span', {}, row.project || '-'),
      h('span', {}, when(row.at_ms)), h('span', {}, `${kind[0]}${row.id}`)),
    h('div', { class: 'title' }, h('a', { href: link }, title)));
}

async function renderFeed() {
  const p = params();
  const projects = await api('/api/projects').catch(() => ({ projects: [] }));
  const form = h('form', { class: 'filters', id: 'feed-filters', onsubmit: (e) => { e.preventDefault(); apply(); } },
    h('select', { name: 'project', onchange: () => apply() },
      h('option', { value: '' }, t('filter.project')),
      projects.projects.map((pr) => h('option', { value: pr.key, selected: p.get('project') === pr.key }, pr.name))),
    h('input', { type: 'text', name: 'agent', placeholder: t('filter.agent'), value: p.get('agent') || '', onchange: () => apply() }),
    h('input', { type: 'text', name: 'type', placeholder: t('filter.type'), value: p.get('type') || '', onchange: () => apply() }),
    h('select', { name: 'kind', onchange: () => apply() },
      h('option', { value: '' }, `${t('kind.event')} + ${t('kind.observation')} + ${t('kind.summary')}`),
      ['observation,summary', 'observation', 'summary', 'event'].map((k) =>
        h('option', { value: k, selected: p.get('kind') === k }, k.split(',').map((x) => t(`kind.${x}`)).join(' + ')))),
    h('span', { id: 'feed-status', class: 'status off' }, t('feed.offline')));
  function apply() {
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) q.set(k, v);
    location.hash = `#/?${q}`;
  }
  const list = h('ul', { class: 'list', id: 'feed' });
  const empty = h('p', { class: 'empty', id: 'feed-empty' }, t('feed.empty'));
  main().replaceChildren(h('h1', {}, t('feed.title')), form, empty, list);

  const query = new URLSearchParams();
  for (const k of ['project', 'agent', 'type']) if (p.get(k)) query.set(k, p.get(k));
  const kinds = (p.get('kind') || 'event,observation,summary').split(',');
  const add = (kind, row, top) => {
    empty.remove();
    const card = itemCard(kind, row);
    if (top) list.prepend(card); else list.append(card);
    while (list.children.length > 200) list.lastChild.remove();
  };
  // The newest rows first, then the live feed from the marks onwards.
  const recent = [];
  if (kinds.includes('observation')) (await api(`/api/observations?${query}&limit=30`)).observations.forEach((r) => recent.push(['observation', r]));
  if (kinds.includes('summary')) (await api(`/api/summaries?${query}&limit=30`)).summaries.forEach((r) => recent.push(['summary', r]));
  if (kinds.includes('event')) (await api(`/api/events?${query}&limit=30`)).events.forEach((r) => recent.push(['event', r]));
  recent.sort((a, b) => b[1].at_ms - a[1].at_ms).slice(0, 60).forEach(([k, r]) => add(k, r, false));

  closeFeed();
  query.set('kind', kinds.join(','));
  // EventSource sends no headers: the feed takes the token in its query.
  if (token) query.set('token', token);
  feedSource = new EventSource(`/api/live?${query}`);
  const status = document.getElementById('feed-status');
  feedSource.addEventListener('hello', () => { status.className = 'status on'; status.textContent = t('feed.live'); });
  feedSource.onerror = () => { status.className = 'status off'; status.textContent = t('feed.offline'); };
  for (const kind of ['event', 'observation', 'summary']) {
    feedSource.addEventListener(kind, (e) => {
      const row = JSON.parse(e.data);
      if (!list.querySelector(`[data-kind="${kind}"][data-id="${row.id}"]`)) add(kind, row, true);
    });
  }
}

// ---- search ----------------------------------------------------------------------------

async function renderSearch() {
  const p = params();
  const form = h('form', { class: 'filters', id: 'search-form', onsubmit: (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) q.set(k, v);
    location.hash = `#/search?${q}`;
  } },
    h('input', { type: 'search', id: 'q', name: 'q', value: p.get('q') || '', placeholder: t('search.placeholder'), autofocus: true }),
    h('select', { name: 'kind' }, h('option', { value: '' }, t('search.kind')),
      ['observation', 'summary', 'event'].map((k) => h('option', { value: k, selected: p.get('kind') === k }, t(`kind.${k}`)))),
    h('input', { type: 'text', name: 'agent', placeholder: t('filter.agent'), value: p.get('agent') || '' }),
    h('input', { type: 'text', name: 'project', placeholder: t('filter.project'), value: p.get('project') || '' }),
    h('input', { type: 'text', name: 'type', placeholder: t('filter.type'), value: p.get('type') || '' }),
    h('label', {}, h('input', { type: 'checkbox', id: 'explain', name: 'explain', value: '1', checked: p.get('explain') === '1' }), ' ', t('search.explain')),
    h('button', { type: 'submit', id: 'search-go' }, t('search.go')));
  const results = h('div', { id: 'results' });
  main().replaceChildren(h('h1', {}, t('nav.search')), form, results);
  if (!p.get('q')) return;
  try {
    const data = await api(`/api/search?${p}`);
    if (!data.hits.length) { results.replaceChildren(h('p', { class: 'empty' }, t('search.none'))); return; }
    results.replaceChildren(h('p', { class: 'meta' }, `${data.hits.length} ${t('search.results')}`),
      h('ul', { class: 'list' }, data.hits.map((hit) => {
        const link = hit.kind === 'observation' ? `#/o/${hit.id}` : hit.kind === 'summary' ? `#/sum/${hit.id}` : `#/e/${hit.id}`;
        return h('li', { class: `card hit ${hit.kind}`, 'data-ref': hit.ref },
          h('div', { class: 'meta' }, h('span', { class: `tag ${hit.kind}` }, t(`kind.${hit.kind}`)),
            h('span', {}, hit.type), h('span', {}, hit.agent), h('span', {}, hit.project || '-'),
            h('span', {}, when(hit.at_ms)), h('span', {}, `~${hit.tokens} ${t('tokens')}`), h('span', {}, hit.ref)),
          h('div', { class: 'title' }, h('a', { href: link }, hit.title)),
          hit.parts ? h('div', { class: 'parts explain' },
            `score ${hit.score.toFixed(3)} = relevance ${hit.parts.relevance.toFixed(3)} (bm25 ${hit.parts.bm25_norm.toFixed(2)}` +
            `${hit.parts.similarity != null ? `, cosine ${hit.parts.similarity.toFixed(2)}` : ''}` +
            `${hit.parts.neighbours > 0 ? `, neighbours +${hit.parts.neighbours.toFixed(2)}` : ''}` +
            `${hit.parts.session > 0 ? `, session +${hit.parts.session.toFixed(2)}` : ''}` +
            `${hit.parts.named > 0 ? `, named +${hit.parts.named.toFixed(2)}` : ''}) · importance ${hit.parts.importance.toFixed(2)}` +
            ` · freshness ${hit.parts.freshness.toFixed(2)} (${hit.parts.age_days.toFixed(1)} d) · hits ${hit.parts.hit_count}`) : null);
      })));
  } catch (err) { results.replaceChildren(errorBox(err)); }
}

// ---- items ------------------------------------------------------------------------------

function section(title, items) {
  if (!items || !items.length) return null;
  return [h('h2', {}, title), h('ul', {}, items.map((x) => h('li', {}, x)))];
}

async function renderObservation(id) {
  const o = await api(`/api/observations/${id}`);
  main().replaceChildren(h('article', { id: 'observation', class: 'card' },
    h('div', { class: 'meta' }, h('span', { class: 'tag observation' }, o.type), h('span', {}, `o${o.id}`),
      h('span', {}, `${t('obs.agent')}: ${o.agent}`), h('span', {}, o.project || '-'), h('span', {}, when(o.at_ms)),
      h('span', {}, `~${o.tokens} ${t('tokens')}`)),
    h('h1', {}, o.title), o.subtitle ? h('p', {}, o.subtitle) : null,
    section(t('obs.facts'), o.facts),
    o.narrative ? [h('h2', {}, t('obs.narrative')), h('p', { class: 'narrative' }, o.narrative)] : null,
    section(t('obs.concepts'), o.concepts),
    section(t('obs.files_modified'), o.files_modified), section(t('obs.files_read'), o.files_read),
    (o.anchors || []).length ? [h('h2', {}, t('obs.anchors')), h('ul', { class: 'list', id: 'anchors' }, o.anchors.map((a) =>
      h('li', { class: `anchor ${a.state}` }, h('code', {}, a.path), ' ',
        a.state === 'fresh' ? t('anchor.fresh') : `${t(`anchor.${a.state}`)} ${when(a.since)}`)))] : null,
    h('h2', {}, t('obs.session')),
    h('p', {}, o.session_id ? h('a', { href: `#/s/${o.session_id}`, id: 'session-link' }, `${o.agent} · ${o.session}`) : o.session),
    o.source_events.length ? [h('h2', {}, t('obs.sources')), h('ul', { class: 'list' }, o.source_events.map((e) =>
      h('li', { class: 'card' }, h('div', { class: 'meta' }, h('span', { class: 'tag event' }, e.kind), h('span', {}, `e${e.id}`),
        h('span', {}, e.tool || ''), h('span', {}, when(e.at_ms))), h('div', {}, e.summary), e.body ? h('pre', {}, e.body) : null)))] : null));
}

async function renderEvent(id) {
  const e = await api(`/api/events/${id}`);
  main().replaceChildren(h('article', { class: 'card' },
    h('div', { class: 'meta' }, h('span', { class: 'tag event' }, e.kind), h('span', {}, `e${e.id}`), h('span', {}, e.agent),
      h('span', {}, e.tool || ''), h('span', {}, when(e.at_ms))),
    h('h1', {}, e.summary), e.body ? h('pre', {}, e.body) : null, section(t('obs.files_read'), e.files),
    e.session_id ? h('p', {}, h('a', { href: `#/s/${e.session_id}` }, `${t('obs.session')} ${e.session}`)) : null));
}

async function renderSummaryItem(id) {
  const m = await api(`/api/summaries/${id}`);
  location.replace(m.session_id ? `#/s/${m.session_id}` : '#/');
}

function summaryBlock(m) {
  if (!m) return h('p', { class: 'empty' }, t('session.nosummary'));
  return h('div', { class: 'card', id: 'summary' },
    h('div', { class: 'meta' }, h('span', { class: 'tag summary' }, `s${m.id}`), h('span', {}, when(m.at_ms))),
    h('p', {}, h('b', {}, `${t('session.request')}: `), m.request),
    section(t('session.investigated'), m.investigated), section(t('session.learned'), m.learned),
    section(t('session.completed'), m.completed), section(t('session.next'), m.next_steps));
}

async function renderSession(id) {
  const d = await api(`/api/sessions/${id}`);
  const s = d.session;
  main().replaceChildren(h('section', { id: 'session' },
    h('h1', {}, `${t('session.title')}: ${s.title || s.source_id}`),
    h('div', { class: 'meta' }, h('span', {}, s.agent), h('span', {}, s.project || '-'), h('span', {}, when(s.started_at_ms)),
      h('span', {}, `→ ${when(s.last_event_at_ms)}`), h('span', {}, `${s.events} ${t('kind.event')}`)),
    h('h2', {}, t('session.summary')), summaryBlock(d.summary),
    h('h2', {}, t('session.timeline')),
    d.timeline.length ? h('ul', { class: 'list' }, d.timeline.map((o) => itemCard('observation', o))) : h('p', { class: 'empty' }, '—'),
    h('h2', {}, t('session.events')),
    h('ul', { class: 'list' }, d.events.map((e) => itemCard('event', e)))));
}

// ---- health -----------------------------------------------------------------------------

const COLORS = ['#2f6fde', '#e07b39', '#2e9e4f', '#9b51e0', '#d64545', '#1fa2a8', '#b08900', '#667085'];

function chart(perDay, span) {
  // Every day of the span, so quiet days show as gaps rather than vanish.
  const days = [];
  for (let i = span - 1; i >= 0; i -= 1) days.push(new Date(Date.now() - i * 86400000).toISOString().slice(0, 10));
  perDay.forEach((d) => { if (!days.includes(d.day)) days.push(d.day); });
  days.sort();
  const agents = [...new Set(perDay.map((d) => d.agent))];
  if (!perDay.length) return h('p', { class: 'empty' }, t('health.nochart'));
  const totals = days.map((day) => perDay.filter((d) => d.day === day).reduce((a, d) => a + d.events, 0));
  const max = Math.max(...totals, 1);
  const W = 720, H = 200, pad = 28, bw = Math.min(48, Math.max(4, (W - pad * 2) / days.length - 4));
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H + 30}`); svg.setAttribute('width', '100%'); svg.setAttribute('id', 'chart');
  const el = (tag, attrs, text) => { const e = document.createElementNS(ns, tag); for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); if (text != null) e.textContent = text; svg.append(e); return e; };
  el('line', { x1: pad, y1: H, x2: W - pad, y2: H, stroke: '#ccc' });
  el('text', { x: 2, y: 12 }, String(max));
  days.forEach((day, i) => {
    let y = H;
    const x = pad + i * ((W - pad * 2) / days.length) + 2;
    agents.forEach((agent, ai) => {
      const row = perDay.find((d) => d.day === day && d.agent === agent);
      if (!row) return;
      const hgt = (row.events / max) * (H - 20);
      y -= hgt;
      const r = el('rect', { x, y, width: bw, height: hgt, fill: COLORS[ai % COLORS.length] });
      const tip = document.createElementNS(ns, 'title'); tip.textContent = `${day} ${agent}: ${row.events}`; r.append(tip);
    });
    if (i % Math.ceil(days.length / 10) === 0 || i === days.length - 1) el('text', { x, y: H + 14 }, day.slice(5));
  });
  const legend = h('div', { class: 'legend' }, agents.map((a, i) => { const s = h('span', {}, a); s.style.setProperty('--c', COLORS[i % COLORS.length]); return s; }));
  return h('div', {}, svg, legend);
}

function bytes(n) { return n > 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : `${(n / 1024).toFixed(1)} KB`; }

async function renderHealth() {
  const d = await api('/api/stats?days=30');
  const s = d.store;
  const day = s.hooks.find((w) => w.window === '24h') || { runs: 0, error_rate: 0 };
  const spend = s.llm_spend.reduce((a, x) => a + x.tokens, 0);
  const w = d.worker;
  const workerText = !w.enabled ? t('health.worker_off') : w.last_error ? `${t('health.worker_fail')}: ${w.last_error}` : `${t('health.worker_ok')} (${w.passes})`;
  const fig = (label, value, id) => h('div', { class: 'card', id }, h('div', { class: 'label' }, label), h('div', { class: 'figure' }, value));
  main().replaceChildren(h('h1', {}, t('health.title')), h('div', { class: 'grid', id: 'health' },
    fig(t('health.size'), bytes(s.bytes), 'fig-size'), fig(t('health.events'), s.events, 'fig-events'),
    fig(t('health.sessions'), s.sessions, 'fig-sessions'),
    fig(t('health.hook_errors'), `${(day.error_rate * 100).toFixed(1)} %`, 'fig-hook-errors'),
    fig(t('health.hook_runs'), day.runs, 'fig-hook-runs'),
    fig(t('health.spool'), `${d.spool.files} (${d.spool.records})`, 'fig-spool'),
    fig(t('health.spend'), spend, 'fig-spend'), fig(t('health.worker'), workerText, 'fig-worker')),
  h('h2', {}, t('health.chart')), chart(d.events_per_day, 30));
}

async function renderReview() {
  const d = await api('/api/review');
  const list = h('ul', { class: 'cards', id: 'review' });
  const decide = async (li, id, body) => {
    try {
      await api(`/api/review/m${id}`, body);
      li.replaceChildren(h('p', { class: 'empty' }, `m${id}: ${t('review.done')} (${body.action})`));
      li.classList.add('decided');
    } catch (err) { li.append(errorBox(err)); }
  };
  for (const m of d.candidates) {
    const text = h('textarea', { class: 'review-text', rows: 2, maxlength: 300 });
    text.value = m.text;
    const li = h('li', { class: 'card review-item', 'data-id': m.id });
    const button = (label, cls, body) => {
      const b = h('button', { class: cls, disabled: !token }, label);
      b.addEventListener('click', async () => {
        try { await decide(li, m.id, await body()); } catch (err) { li.append(errorBox(err)); }
      });
      return b;
    };
    li.append(
      h('div', { class: 'meta' }, h('span', { class: 'tag' }, m.kind), ` m${m.id} · ${m.project_name || m.project || 'global'} · ${m.importance}/10`),
      text,
      m.supersedes_memory ? h('p', { class: 'replaces' }, `${t('review.replaces')} m${m.supersedes_memory.id}: ${m.supersedes_memory.text}`) : null,
      h('div', { class: 'actions' },
        // An edited text is saved first, then approved as edited.
        button(t('review.approve'), 'approve', async () => {
          if (text.value !== m.text) await api(`/api/review/m${m.id}`, { action: 'edit', text: text.value });
          return { action: 'approve' };
        }),
        button(t('review.global'), 'approve-global', async () => {
          if (text.value !== m.text) await api(`/api/review/m${m.id}`, { action: 'edit', text: text.value });
          return { action: 'approve_global' };
        }),
        button(t('review.edit'), 'edit', () => ({ action: 'edit', text: text.value })),
        button(t('review.reject'), 'reject', () => ({ action: 'reject' }))));
    list.append(li);
  }
  main().replaceChildren(h('h1', {}, t('review.title')),
    token ? null : h('p', { class: 'note', id: 'review-token' }, t('review.token')),
    d.candidates.length ? list : h('p', { class: 'empty', id: 'review' }, t('review.empty')));
}

async function renderHanded() {
  const d = await api('/api/injections?limit=50');
  const link = (id) => {
    const n = id.slice(1);
    const href = id[0] === 'o' ? `#/o/${n}` : id[0] === 'e' ? `#/e/${n}` : id[0] === 's' ? `#/sum/${n}` : null;
    return href ? h('a', { href }, id) : h('span', {}, id);
  };
  const list = h('ul', { class: 'cards', id: 'handed' }, d.map((i) =>
    h('li', { class: 'card injection', 'data-channel': i.channel },
      h('div', { class: 'meta' }, h('span', { class: 'tag' }, i.channel), h('span', {}, i.agent),
        h('span', {}, i.project || '-'), h('span', {}, when(i.at_ms)),
        h('span', {}, `${i.items.length} ${t('handed.items')} · ~${i.tokens} ${t('tokens')}`),
        i.cut ? h('span', {}, `${i.cut} ${t('handed.cut')}`) : null),
      h('div', { class: 'items' }, i.items.flatMap((id, k) => (k ? [' ', link(id)] : [link(id)]))))));
  main().replaceChildren(h('h1', {}, t('handed.title')),
    d.length ? list : h('p', { class: 'empty', id: 'handed' }, t('handed.empty')));
}

// ---- routing -----------------------------------------------------------------------------

async function route() {
  const path = location.hash.replace(/^#/, '').split('?')[0] || '/';
  document.querySelectorAll('nav a').forEach((a) => a.classList.toggle('active', a.getAttribute('href') === `#${path}` || (path === '/' && a.getAttribute('href') === '#/')));
  if (!path.startsWith('/') || path !== '/') closeFeed();
  const m = path.match(/^\/(o|s|e|sum)\/(\d+)$/);
  try {
    if (m && m[1] === 'o') await renderObservation(m[2]);
    else if (m && m[1] === 's') await renderSession(m[2]);
    else if (m && m[1] === 'e') await renderEvent(m[2]);
    else if (m && m[1] === 'sum') await renderSummaryItem(m[2]);
    else if (path === '/search') await renderSearch();
    else if (path === '/health') await renderHealth();
    else if (path === '/review') await renderReview();
    else if (path === '/handed') await renderHanded();
    else await renderFeed();
  } catch (err) { main().replaceChildren(errorBox(err)); }
}

document.getElementById('lang').addEventListener('click', () => {
  setLang(lang === 'zh' ? 'en' : 'zh');
  localStorage.setItem('agent-memory.lang', lang);
  route();
});
window.addEventListener('hashchange', route);

(async () => {
  if (!lang) {
    const health = await api('/api/health').catch(() => ({}));
    lang = (health.language || 'en').toLowerCase().startsWith('zh') ? 'zh' : 'en';
  }
  setLang(lang);
  route();
})();
