// The agent-memory viewer: one page with hash routes, reading the JSON API of the server that
// served it and its live feed. Plain script, no build step; every text from the store is set
// with textContent, never as markup.
'use strict';

// Every text the page shows in English and Chinese. A value is a string, or a function of the
// numbers and names it places (so each language words its own plurals and order).
const STRINGS = {
  en: {
    'nav.sessions': 'Sessions', 'nav.memory': 'Memory',
    'home.title': 'Sessions', 'home.empty': 'No session matches. Sessions appear here as agents work; widen the time or drop a filter.',
    'home.asked': 'Asked', 'home.done': 'Done', 'home.learned': 'Learned', 'home.untitled': 'No prompt recorded',
    'home.no_project': 'no project', 'home.no_lines': 'No observations yet.', 'home.open': 'Open the session',
    'home.more_lines': ({ n }) => (n === 1 ? '1 more observation' : `${n} more observations`),
    'home.older': 'Show older sessions', 'home.shown': ({ n }) => (n === 1 ? '1 session' : `${n} sessions`),
    'home.observations': ({ n }) => (n === 1 ? '1 observation' : `${n} observations`),
    'filter.agents': 'All agents', 'filter.types': 'All types', 'filter.kinds_all': 'All kinds',
    'when.all': 'Any time', 'when.today': 'Today', 'when.7d': 'Last 7 days', 'when.30d': 'Last 30 days',
    'mem.title': 'Memory', 'mem.intro': 'What every session of a project (project memory) or every project (global memory) is handed. Edit, forget or bring back what is kept.',
    'mem.empty': 'No memory matches these filters.', 'mem.tiers': 'Project and global', 'mem.status_all': 'Any status',
    'mem.edit': 'Edit', 'mem.save': 'Save', 'mem.cancel': 'Cancel', 'mem.forget': 'Forget', 'mem.restore': 'Undo forget',
    'mem.text': 'Text', 'mem.kind': 'Kind', 'mem.importance': 'Importance', 'mem.more': 'Show more',
    'mem.chain': 'What replaced what', 'mem.replaced_at': ({ at }) => `replaced ${at}`, 'mem.current': 'in use now',
    'mem.from': 'Where it came from', 'mem.by': 'by', 'mem.in_session': 'in the session',
    'mem.more_sources': ({ n }) => `and ${n} more`, 'mem.no_sources': 'No source items: it was stated, not distilled.',
    'mem.done': ({ id, action }) => `${id}: ${action}`,
    'action.forget': 'forgotten', 'action.restore': 'brought back',
    'review.select': 'Select', 'review.all': 'All', 'review.none': 'None',
    'review.by_project': 'All of a project…', 'review.by_kind': 'All of a kind…',
    'review.selected': ({ n }) => (n === 1 ? '1 selected' : `${n} selected`),
    'review.bulk_approve': 'Approve selected', 'review.bulk_global': 'Approve selected as global', 'review.bulk_reject': 'Reject selected',
    'review.confirm_approve': ({ n }) => (n === 1 ? 'Approve 1 candidate into project memory?' : `Approve ${n} candidates into project memory?`),
    'review.confirm_approve_global': ({ n }) => (n === 1 ? 'Approve 1 candidate into global memory?' : `Approve ${n} candidates into global memory?`),
    'review.confirm_reject': ({ n }) => (n === 1 ? 'Reject 1 candidate?' : `Reject ${n} candidates?`),
    'review.yes': 'Yes, do it', 'review.no': 'Cancel',
    'review.bulk_done': ({ n, action }) => `${n} ${action}`, 'review.bulk_failed': ({ n }) => (n === 1 ? '1 could not be decided' : `${n} could not be decided`),
    'nav.feed': 'Live', 'nav.search': 'Search', 'nav.health': 'Health', 'nav.review': 'Review', 'nav.handed': 'Handed',
    'handed.title': 'What agents were handed', 'handed.empty': 'Nothing has been handed to an agent yet: briefings, recalls and file context appear here as agents get them.',
    'handed.items': ({ n }) => (n === 1 ? '1 item' : `${n} items`), 'handed.cut': ({ n }) => `${n} cut by the budget`,
    'handed.session': 'Session', 'handed.no_session': 'no session id',
    'handed.times': ({ n }) => (n === 1 ? 'handed once' : `handed ${n} times`), 'handed.nothing_cut': 'nothing cut',
    'channel.briefing': 'briefing', 'channel.recall': 'recall', 'channel.file': 'file context', 'channel.mcp-briefing': 'briefing over MCP',
    'obs.anchors': 'Rests on', 'anchor.fresh': 'as it was', 'anchor.changed': 'changed since', 'anchor.gone': 'gone since',
    'feed.title': 'Live feed', 'feed.empty': 'Nothing yet. New events, observations and summaries appear here as agents work.',
    'feed.live': 'live', 'feed.offline': 'reconnecting…',
    'filter.project': 'All projects', 'filter.agent': 'Agent', 'filter.type': 'Type', 'filter.kinds': 'Show',
    'kind.event': 'event', 'kind.observation': 'observation', 'kind.summary': 'summary', 'kind.memory': 'memory',
    'evkind.session_start': 'session start', 'evkind.prompt': 'prompt', 'evkind.tool_use': 'tool use', 'evkind.stop': 'turn end',
    'evkind.session_end': 'session end', 'evkind.note': 'note',
    'obstype.bugfix': 'bugfix', 'obstype.feature': 'feature', 'obstype.refactor': 'refactor', 'obstype.change': 'change',
    'obstype.discovery': 'discovery', 'obstype.decision': 'decision', 'obstype.security_alert': 'security alert', 'obstype.security_note': 'security note',
    'search.placeholder': 'Search memory (any language, file names, identifiers)…', 'search.go': 'Search',
    'search.explain': 'Explain scores', 'search.none': 'No matches. Try fewer or other words, or drop a filter.',
    'search.results': ({ n }) => (n === 1 ? '1 result' : `${n} results`), 'search.kind': 'All kinds',
    'obs.facts': 'Facts', 'obs.narrative': 'Narrative', 'obs.files_read': 'Files read', 'obs.files_modified': 'Files modified',
    'obs.concepts': 'Concepts', 'obs.sources': 'Source events', 'obs.session': 'Session', 'obs.agent': 'Agent',
    'event.files': 'Files', 'event.session': 'Its session',
    'session.title': 'Session', 'session.summary': 'Summary', 'session.timeline': 'Timeline across agents',
    'session.events': 'Events', 'session.nosummary': 'No summary yet.', 'session.request': 'Request',
    'session.investigated': 'Investigated', 'session.learned': 'Learned', 'session.completed': 'Completed', 'session.next': 'Next steps',
    'session.event_count': ({ n }) => (n === 1 ? '1 event' : `${n} events`), 'session.notimeline': 'No observations in this project while it ran.',
    'summary.title': 'Summary', 'summary.session': 'Its session',
    'memory.title': 'Memory', 'memory.sources': 'Learned from', 'memory.replaces': 'Replaces', 'memory.replaced_by': 'Replaced by',
    'memory.branch': 'Branch', 'memory.learned': 'learned', 'memory.changed': 'changed',
    'memory.importance': ({ n }) => `importance ${n}/10`, 'memory.missing': ({ id }) => `No memory is stored under ${id}.`,
    'memkind.fact': 'fact', 'memkind.decision': 'decision', 'memkind.convention': 'convention', 'memkind.problem': 'problem', 'memkind.preference': 'preference',
    'tier.L1': 'candidate', 'tier.L2': 'project memory', 'tier.L3': 'global memory',
    'status.candidate': 'waiting for review', 'status.active': 'in use', 'status.rejected': 'rejected', 'status.superseded': 'replaced', 'status.forgotten': 'forgotten',
    'origin.distilled': 'learned from the work', 'origin.remembered': 'remembered on request', 'origin.imported': 'imported',
    'origin.vault': 'written in the vault', 'origin.stated': ({ agent }) => `you told ${agent}`, 'origin.agent': ({ agent }) => `noted by ${agent}`,
    'origin.history': ({ agent }) => `from ${agent}'s earlier sessions`, 'origin.pack': ({ name }) => `from the pack ${name}`,
    'scope.global': 'every project',
    'health.title': 'Health', 'health.size': 'Store size', 'health.events': 'Events', 'health.sessions': 'Sessions',
    'health.observations': 'Observations', 'health.summaries': 'Summaries', 'health.memories': 'Memories in use',
    'health.candidates': 'Candidates to review', 'health.to_distil': 'Sessions to distil',
    'health.hook_errors': 'Hook error rate (24h)', 'health.hook_runs': 'Hook runs (24h)', 'health.spool': 'Hook spool',
    'health.spend': 'LLM tokens (7 days)', 'health.worker': 'Worker', 'health.chart': 'Events per day per agent',
    'health.spool_empty': 'nothing waits: every event is stored',
    'health.spool_wait': ({ records, files }) => `${records} ${records === 1 ? 'event waits' : 'events wait'} in ${files} ${files === 1 ? 'file' : 'files'}`,
    'health.spool_bad': ({ n }) => `${n} unreadable ${n === 1 ? 'file' : 'files'} set aside`,
    'health.worker_ok': ({ at, passes }) => `last work pass ${at}, ok; ${passes} ${passes === 1 ? 'pass' : 'passes'} since start`,
    'health.worker_fail': ({ at, failures, error }) => `last work pass ${at} failed (${failures} in a row): ${error}`,
    'health.worker_first': 'no work pass yet; the first one starts soon', 'health.worker_running': 'a work pass is running now',
    'health.worker_off': 'off: this server runs no work passes', 'health.nochart': 'No events in this period.',
    'health.agents': 'Agents for this user', 'health.no_agents': 'No agent was found for this user: install one, then run `agent-memory install`.',
    'wiring.current': 'wired, up to date', 'wiring.stale': 'wired, but an older wiring: run `agent-memory install`',
    'wiring.missing': 'not wired', 'wiring.unreadable': 'its config cannot be read: run `agent-memory doctor`',
    'health.last_hook': ({ at }) => `last hook ran ${at}`, 'health.no_hook': 'no hook has run yet',
    'health.latency': 'Hook latency per hour, last 24 hours', 'health.p50': 'median (p50)', 'health.p95': 'slowest 5% (p95)',
    'health.nolatency': 'No hook ran in the last 24 hours.',
    'health.latency_tip': ({ hour, p50, p95, runs }) => `${hour}: median ${p50} ms, p95 ${p95} ms, ${runs} ${runs === 1 ? 'run' : 'runs'}`,
    'review.title': 'Review', 'review.empty': 'No candidates wait for review.',
    'review.approve': 'Approve', 'review.global': 'Approve as global', 'review.reject': 'Reject',
    'review.edit': 'Save edit', 'review.replaces': 'Replaces', 'review.from': 'From',
    'review.done': ({ id, action }) => `${id}: ${action}`,
    'action.approve': 'approved', 'action.approve_global': 'approved into global memory', 'action.edit': 'edited', 'action.reject': 'rejected',
    'token.title': 'This viewer needs the local token',
    'token.missing': 'It reads your own store, so it opens only from the address `agent-memory serve` printed, the one ending in /?token=…. Run `agent-memory serve --status` to print that address again, then open it.',
    'error': 'Error', 'tokens': ({ n }) => `~${n} tokens`, 'back': 'back',
  },
  zh: {
    'nav.sessions': '会话', 'nav.memory': '记忆',
    'home.title': '会话', 'home.empty': '没有符合条件的会话。智能体工作时会话会出现在这里；请放宽时间或去掉筛选条件。',
    'home.asked': '请求', 'home.done': '完成', 'home.learned': '收获', 'home.untitled': '没有记录提示',
    'home.no_project': '无项目', 'home.no_lines': '尚无观察。', 'home.open': '打开会话',
    'home.more_lines': ({ n }) => `还有 ${n} 条观察`,
    'home.older': '显示更早的会话', 'home.shown': ({ n }) => `${n} 个会话`,
    'home.observations': ({ n }) => `${n} 条观察`,
    'filter.agents': '全部智能体', 'filter.types': '全部类型', 'filter.kinds_all': '全部种类',
    'when.all': '全部时间', 'when.today': '今天', 'when.7d': '最近 7 天', 'when.30d': '最近 30 天',
    'mem.title': '记忆', 'mem.intro': '项目的每个会话（项目记忆）或所有项目（全局记忆）都会拿到的内容。可以修改、遗忘或找回。',
    'mem.empty': '没有符合筛选条件的记忆。', 'mem.tiers': '项目和全局', 'mem.status_all': '任意状态',
    'mem.edit': '修改', 'mem.save': '保存', 'mem.cancel': '取消', 'mem.forget': '遗忘', 'mem.restore': '撤销遗忘',
    'mem.text': '内容', 'mem.kind': '种类', 'mem.importance': '重要度', 'mem.more': '显示更多',
    'mem.chain': '取代关系', 'mem.replaced_at': ({ at }) => `于 ${at} 被取代`, 'mem.current': '当前使用',
    'mem.from': '来源', 'mem.by': '来自', 'mem.in_session': '所在会话',
    'mem.more_sources': ({ n }) => `另有 ${n} 条`, 'mem.no_sources': '没有来源条目：它是直接说出的，不是提炼的。',
    'mem.done': ({ id, action }) => `${id}：${action}`,
    'action.forget': '已遗忘', 'action.restore': '已找回',
    'review.select': '选择', 'review.all': '全部', 'review.none': '不选',
    'review.by_project': '按项目全选…', 'review.by_kind': '按种类全选…',
    'review.selected': ({ n }) => `已选 ${n} 条`,
    'review.bulk_approve': '批准所选', 'review.bulk_global': '将所选批准为全局记忆', 'review.bulk_reject': '拒绝所选',
    'review.confirm_approve': ({ n }) => `将 ${n} 条候选批准为项目记忆？`,
    'review.confirm_approve_global': ({ n }) => `将 ${n} 条候选批准为全局记忆？`,
    'review.confirm_reject': ({ n }) => `拒绝 ${n} 条候选？`,
    'review.yes': '确定', 'review.no': '取消',
    'review.bulk_done': ({ n, action }) => `${n} 条${action}`, 'review.bulk_failed': ({ n }) => `${n} 条未能处理`,
    'nav.feed': '实时', 'nav.search': '搜索', 'nav.health': '状态', 'nav.review': '审阅', 'nav.handed': '注入记录',
    'handed.title': '交给助手的上下文', 'handed.empty': '还没有交给助手任何内容：助手拿到简报、召回和文件上下文时会出现在这里。',
    'handed.items': ({ n }) => `${n} 条`, 'handed.cut': ({ n }) => `${n} 条因预算裁掉`,
    'handed.session': '会话', 'handed.no_session': '无会话编号',
    'handed.times': ({ n }) => `注入 ${n} 次`, 'handed.nothing_cut': '未裁掉任何内容',
    'channel.briefing': '简报', 'channel.recall': '召回', 'channel.file': '文件上下文', 'channel.mcp-briefing': 'MCP 简报',
    'obs.anchors': '依据的文件', 'anchor.fresh': '未改动', 'anchor.changed': '改动于', 'anchor.gone': '删除于',
    'feed.title': '实时动态', 'feed.empty': '暂无内容。智能体工作时，新的事件、观察和摘要会出现在这里。',
    'feed.live': '已连接', 'feed.offline': '正在重连…',
    'filter.project': '全部项目', 'filter.agent': '智能体', 'filter.type': '类型', 'filter.kinds': '显示',
    'kind.event': '事件', 'kind.observation': '观察', 'kind.summary': '摘要', 'kind.memory': '记忆',
    'evkind.session_start': '会话开始', 'evkind.prompt': '提示', 'evkind.tool_use': '工具调用', 'evkind.stop': '回合结束',
    'evkind.session_end': '会话结束', 'evkind.note': '笔记',
    'obstype.bugfix': '修复', 'obstype.feature': '新功能', 'obstype.refactor': '重构', 'obstype.change': '修改',
    'obstype.discovery': '发现', 'obstype.decision': '决定', 'obstype.security_alert': '安全警报', 'obstype.security_note': '安全提示',
    'search.placeholder': '搜索记忆（任意语言、文件名、标识符）…', 'search.go': '搜索',
    'search.explain': '显示评分明细', 'search.none': '没有结果。请换个说法或去掉筛选条件。',
    'search.results': ({ n }) => `${n} 条结果`, 'search.kind': '全部种类',
    'obs.facts': '事实', 'obs.narrative': '经过', 'obs.files_read': '读取的文件', 'obs.files_modified': '修改的文件',
    'obs.concepts': '概念', 'obs.sources': '来源事件', 'obs.session': '会话', 'obs.agent': '智能体',
    'event.files': '文件', 'event.session': '所属会话',
    'session.title': '会话', 'session.summary': '摘要', 'session.timeline': '跨智能体时间线',
    'session.events': '事件', 'session.nosummary': '尚无摘要。', 'session.request': '请求',
    'session.investigated': '调查', 'session.learned': '收获', 'session.completed': '完成', 'session.next': '下一步',
    'session.event_count': ({ n }) => `${n} 个事件`, 'session.notimeline': '会话期间这个项目没有观察。',
    'summary.title': '摘要', 'summary.session': '所属会话',
    'memory.title': '记忆', 'memory.sources': '来源', 'memory.replaces': '取代', 'memory.replaced_by': '已被取代为',
    'memory.branch': '分支', 'memory.learned': '记下于', 'memory.changed': '修改于',
    'memory.importance': ({ n }) => `重要度 ${n}/10`, 'memory.missing': ({ id }) => `没有编号为 ${id} 的记忆。`,
    'memkind.fact': '事实', 'memkind.decision': '决定', 'memkind.convention': '约定', 'memkind.problem': '问题', 'memkind.preference': '偏好',
    'tier.L1': '候选', 'tier.L2': '项目记忆', 'tier.L3': '全局记忆',
    'status.candidate': '待审阅', 'status.active': '使用中', 'status.rejected': '已拒绝', 'status.superseded': '已被取代', 'status.forgotten': '已遗忘',
    'origin.distilled': '从工作中提炼', 'origin.remembered': '应要求记住', 'origin.imported': '导入',
    'origin.vault': '在笔记库中写下', 'origin.stated': ({ agent }) => `你告诉 ${agent} 的`, 'origin.agent': ({ agent }) => `由 ${agent} 记下`,
    'origin.history': ({ agent }) => `来自 ${agent} 以前的会话`, 'origin.pack': ({ name }) => `来自记忆包 ${name}`,
    'scope.global': '所有项目',
    'health.title': '运行状态', 'health.size': '存储大小', 'health.events': '事件', 'health.sessions': '会话',
    'health.observations': '观察', 'health.summaries': '摘要', 'health.memories': '使用中的记忆',
    'health.candidates': '待审阅的候选记忆', 'health.to_distil': '待提炼的会话',
    'health.hook_errors': '钩子错误率（24 小时）', 'health.hook_runs': '钩子运行（24 小时）', 'health.spool': '钩子暂存',
    'health.spend': 'LLM 用量（7 天）', 'health.worker': '后台任务', 'health.chart': '每日各智能体事件数',
    'health.spool_empty': '没有等待的内容：所有事件都已存储',
    'health.spool_wait': ({ records, files }) => `${records} 个事件在 ${files} 个文件中等待`,
    'health.spool_bad': ({ n }) => `${n} 个无法读取的文件已被搁置`,
    'health.worker_ok': ({ at, passes }) => `上次处理 ${at}，正常；启动以来共 ${passes} 次`,
    'health.worker_fail': ({ at, failures, error }) => `上次处理 ${at} 失败（连续 ${failures} 次）：${error}`,
    'health.worker_first': '还没有处理过；第一次很快开始', 'health.worker_running': '正在处理',
    'health.worker_off': '未启用：这个服务不做后台处理', 'health.nochart': '此期间没有事件。',
    'health.agents': '本用户的智能体', 'health.no_agents': '没有找到本用户的智能体：装好一个后运行 `agent-memory install`。',
    'wiring.current': '已接入，最新', 'wiring.stale': '已接入，但接入方式较旧：请运行 `agent-memory install`',
    'wiring.missing': '未接入', 'wiring.unreadable': '无法读取它的配置：请运行 `agent-memory doctor`',
    'health.last_hook': ({ at }) => `上次钩子运行于 ${at}`, 'health.no_hook': '还没有钩子运行过',
    'health.latency': '每小时钩子耗时（最近 24 小时）', 'health.p50': '中位数（p50）', 'health.p95': '最慢 5%（p95）',
    'health.nolatency': '最近 24 小时没有钩子运行。',
    'health.latency_tip': ({ hour, p50, p95, runs }) => `${hour}：中位数 ${p50} 毫秒，p95 ${p95} 毫秒，共 ${runs} 次`,
    'review.title': '审阅', 'review.empty': '没有待审阅的候选记忆。',
    'review.approve': '批准', 'review.global': '批准为全局记忆', 'review.reject': '拒绝',
    'review.edit': '保存修改', 'review.replaces': '将取代', 'review.from': '来源',
    'review.done': ({ id, action }) => `${id}：${action}`,
    'action.approve': '已批准', 'action.approve_global': '已批准为全局记忆', 'action.edit': '已修改', 'action.reject': '已拒绝',
    'token.title': '查看器需要本地令牌',
    'token.missing': '它读取你自己的存储，所以只能从 `agent-memory serve` 打印的地址（以 /?token=… 结尾）打开。运行 `agent-memory serve --status` 可再次打印这个地址，然后打开它。',
    'error': '错误', 'tokens': ({ n }) => `约 ${n} 词元`, 'back': '返回',
  },
};

let lang = localStorage.getItem('agent-memory.lang') || '';

// The text of `key` in the current language (English when it has none), with `vars` placed.
function t(key, vars) {
  const value = (STRINGS[lang] || STRINGS.en)[key] ?? STRINGS.en[key] ?? key;
  return typeof value === 'function' ? value(vars || {}) : value;
}

// A label before its value, with the colon of the page's language.
const said = (key) => `${t(key)}${lang === 'zh' ? '：' : ': '}`;

// The text of `prefix.value` when the table has it, else the value as stored (a type or kind
// a newer store knows and this page does not).
function label(prefix, value) {
  if (value === undefined || value === null || value === '') return null;
  return `${prefix}.${value}` in STRINGS.en ? t(`${prefix}.${value}`) : String(value);
}

// Where a memory came from, in words: its origin as stored is a word (`distilled`), an agent's
// name, or a prefix and a name (`stated:codex`, `pack:rust`); a teammate's memory puts the
// member first (`alice, codex`).
function origin(raw) {
  const text = String(raw || '');
  const comma = text.indexOf(', ');
  if (comma > 0) return `${text.slice(0, comma)}, ${origin(text.slice(comma + 2))}`;
  const [head, ...rest] = text.split(':');
  const name = rest.join(':');
  if (name && head === 'stated') return t('origin.stated', { agent: name });
  if (name && head === 'history') return t('origin.history', { agent: name });
  if (name && head === 'pack') return t('origin.pack', { name });
  if (`origin.${text}` in STRINGS.en) return t(`origin.${text}`);
  return text ? t('origin.agent', { agent: text }) : t('origin.remembered');
}

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  fill(el, 'append', children);
  return el;
}

// Adds `children` to `el` the way `h` does: nested arrays flattened, and nothing for a null,
// undefined or false child (the DOM's own `append` would write "null").
function fill(el, how, children) {
  const nodes = children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c))));
  el[how](...nodes);
  return el;
}

// Replaces what the page's main area shows.
function show(...children) { return fill(main(), 'replaceChildren', children); }

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

// The server refused a read for want of the token: the page explains where to find it.
class NeedsToken extends Error {}

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
  if (res.status === 401) throw new NeedsToken(t('token.missing'));
  if (!res.ok) throw new Error(`${body.message} (${body.code})`);
  return body;
}

// A time as this page's language writes it; a dash for none.
function when(ms, style) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '—';
  return new Date(ms).toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-GB', style || { dateStyle: 'short', timeStyle: 'medium' });
}
const main = () => document.getElementById('main');
const params = () => new URLSearchParams((location.hash.split('?')[1]) || '');

function setLang(next) {
  lang = next;
  document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en';
  document.querySelectorAll('[data-i18n]').forEach((el) => { el.textContent = t(el.dataset.i18n); });
  document.getElementById('lang').textContent = lang === 'zh' ? 'English' : '中文';
}

function errorBox(err) { return h('p', { class: 'error' }, `${said('error')}${err.message}`); }

// What every page shows when the address carried no token, or a wrong one.
function tokenPage() {
  return h('section', { id: 'token-needed', class: 'card note' }, h('h1', {}, t('token.title')), h('p', {}, t('token.missing')));
}

// The page of a typed id (`o12`, `s3`, `m7`, `e45`), or null for an id of no known kind.
function itemHref(id) {
  const m = String(id).match(/^([osme])(\d+)$/);
  if (!m) return null;
  return { o: '#/o/', s: '#/sum/', m: '#/m/', e: '#/e/' }[m[1]] + m[2];
}

function idLink(id) {
  const href = itemHref(id);
  return href ? h('a', { href }, id) : h('span', {}, id);
}

// A memory's project, or the words for global memory.
const scope = (project) => project || t('scope.global');

// ---- sessions: the home page ------------------------------------------------------------

// The API's largest page of cards, and how many the home shows before asking for more.
const HOME_PAGE = 100;
const HOME_FIRST = 200;
// The most observation lines a card carries (the API's own bound); the session's page has all.
const CARD_LINES = 12;

// The configured mode's observation types ({key, emoji, label: {en, zh}}), from the first page
// of cards: the type filter's choices and the marks of lines the live feed adds.
let modeTypes = [];

// An observation type in words: this page's own when it has them, else the mode's label in
// this language, else the key as stored.
function typeName(key) {
  if (`obstype.${key}` in STRINGS.en) return t(`obstype.${key}`);
  const known = modeTypes.find((x) => x.key === key);
  return known ? (known.label[lang] || known.label.en || key) : String(key);
}

// A type's mark: the emoji its mode gives it, or a plain dot for a type no mode names.
function typeMark(key, emoji) {
  const known = modeTypes.find((x) => x.key === key);
  return emoji || (known && known.emoji) || '•';
}

// The `since` of a time filter: local midnight for today, an age for the others, none for all.
function sinceOf(range) {
  if (range === 'today') {
    const midnight = new Date();
    midnight.setHours(0, 0, 0, 0);
    return midnight.toISOString();
  }
  return range === '7d' || range === '30d' ? range : null;
}

function observationLine(o) {
  const name = typeName(o.type);
  return h('li', { class: 'obs-line', 'data-id': o.id },
    h('span', { class: 'mark', title: name, 'aria-label': name }, typeMark(o.type, o.emoji)), ' ',
    h('a', { href: `#/o/${o.id}` }, o.title || '—'));
}

function eventLine(e) {
  return h('li', { class: 'event-line', 'data-id': e.id },
    h('span', { class: 'tag event' }, label('evkind', e.kind)), ' ',
    h('span', { class: 'meta-inline' }, when(e.at_ms, { timeStyle: 'medium' })), ' ',
    h('a', { href: `#/e/${e.id}` }, e.summary || '—'));
}

// One session as a card (`card.data` is its row from /api/session-cards): who worked where and
// when, what was asked, done and learned, its observations a line each, and its events folded
// away until a click opens them (read then, once).
function sessionCard(card) {
  const c = card.data;
  const asked = (c.summary && c.summary.request) || c.first_prompt;
  // A few of each, one after another: each item's own full stop gives way to the separator.
  const few = (items) => (items || []).slice(0, 3).map((x) => String(x).replace(/[.。]\s*$/, ''));
  const done = c.summary ? few(c.summary.completed) : [];
  const learned = c.summary ? few(c.summary.learned) : [];
  const more = c.observations - c.lines.length;
  const events = h('details', { class: 'events', open: card.open },
    h('summary', {}, t('session.event_count', { n: c.events })),
    card.events ? h('ul', { class: 'list event-lines' }, card.events.map(eventLine)) : null);
  events.addEventListener('toggle', () => {
    card.open = events.open;
    if (card.open) loadEvents(card);
  });
  return h('li', { class: 'card session-card', 'data-session': c.id },
    h('div', { class: 'meta' }, h('span', { class: 'tag agent' }, c.agent),
      h('span', { class: 'project' }, c.project || t('home.no_project')),
      c.branch ? h('span', { class: 'branch', title: t('memory.branch') }, `⎇ ${c.branch}`) : null,
      h('span', { class: 'when' }, when(c.started_at_ms)),
      c.last_event_at_ms > c.started_at_ms ? h('span', { class: 'until' }, `→ ${when(c.last_event_at_ms)}`) : null),
    h('div', { class: 'title asked' }, h('a', { href: `#/s/${c.id}` }, asked || t('home.untitled'))),
    done.length ? h('p', { class: 'done' }, h('b', {}, said('home.done')), done.join('; ')) : null,
    learned.length ? h('p', { class: 'learned' }, h('b', {}, said('home.learned')), learned.join('; ')) : null,
    c.lines.length ? h('ul', { class: 'obs-lines' }, c.lines.map(observationLine)) : h('p', { class: 'no-lines' }, t('home.no_lines')),
    more > 0 ? h('p', { class: 'more-lines' }, h('a', { href: `#/s/${c.id}` }, t('home.more_lines', { n: more }))) : null,
    events);
}

// Draws a card again where it stands; `news` marks it a moment for the eye.
function redraw(card, news) {
  const fresh = sessionCard(card);
  card.el.replaceWith(fresh);
  card.el = fresh;
  if (news) {
    fresh.classList.add('updated');
    setTimeout(() => fresh.classList.remove('updated'), 1500);
  }
}

async function loadEvents(card) {
  if (card.events || card.loading) return;
  card.loading = true;
  try {
    const d = await api(`/api/sessions/${card.data.id}`);
    card.events = d.events;
    redraw(card);
  } catch (err) {
    card.el.append(errorBox(err));
  } finally {
    card.loading = false;
  }
}

async function renderHome() {
  const run = routes;
  const p = params();
  const filters = { project: p.get('project') || '', agent: p.get('agent') || '', type: p.get('type') || '', when: p.get('when') || 'all' };
  const query = new URLSearchParams();
  for (const k of ['project', 'agent', 'type']) if (filters[k]) query.set(k, filters[k]);
  const since = sinceOf(filters.when);
  if (since) query.set('since', since);
  const page = (before) => api(`/api/session-cards?${query}&limit=${HOME_PAGE}${before ? `&before=${before}` : ''}`);
  const [projects, first] = await Promise.all([api('/api/projects'), page(null)]);
  modeTypes = first.types || [];

  const apply = () => {
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v && !(k === 'when' && v === 'all')) q.set(k, v);
    location.hash = `#/?${q}`;
  };
  const choice = (name, options) => h('select', { name, id: `home-${name}`, onchange: apply },
    options.map(([value, text]) => h('option', { value, selected: filters[name] === value }, text)));
  const types = modeTypes.map((x) => [x.key, `${x.emoji} ${typeName(x.key)}`]);
  if (filters.type && !types.some(([k]) => k === filters.type)) types.push([filters.type, typeName(filters.type)]);
  const count = h('span', { id: 'home-count', class: 'meta' });
  const status = h('span', { id: 'home-status', class: 'status off' }, t('feed.offline'));
  const form = h('form', { class: 'filters', id: 'home-filters', onsubmit: (e) => e.preventDefault() },
    choice('project', [['', t('filter.project')], ...projects.projects.map((pr) => [pr.key, pr.name])]),
    choice('agent', [['', t('filter.agents')], ...(first.agents || []).map((a) => [a, a])]),
    choice('type', [['', t('filter.types')], ...types]),
    choice('when', ['all', 'today', '7d', '30d'].map((w) => [w, t(`when.${w}`)])),
    count, status);
  const list = h('ul', { class: 'cards', id: 'sessions' });
  const empty = h('p', { class: 'empty', id: 'home-empty' }, t('home.empty'));
  const older = h('button', { type: 'button', id: 'home-older', hidden: true }, t('home.older'));
  const cards = new Map();
  let next = null;
  const put = (data, top, into) => {
    const card = { data, open: false, events: null, loading: false };
    card.el = sessionCard(card);
    cards.set(data.id, card);
    if (top) list.prepend(card.el); else into.append(card.el);
  };
  const tally = () => {
    empty.hidden = cards.size > 0;
    count.textContent = t('home.shown', { n: cards.size });
  };
  const add = (got) => {
    const batch = document.createDocumentFragment();
    got.sessions.forEach((c) => { if (!cards.has(c.id)) put(c, false, batch); });
    list.append(batch);
    next = got.next;
    older.hidden = !next;
    tally();
  };
  older.addEventListener('click', async () => {
    older.disabled = true;
    try { add(await page(next)); } catch (err) { older.after(errorBox(err)); }
    older.disabled = false;
  });
  show(h('h1', {}, t('home.title')), form, empty, list, older);
  add(first);
  // The next page at once: the home opens on the newest two hundred sessions.
  while (next && cards.size < HOME_FIRST && run === routes) add(await page(next));
  if (run !== routes) return;

  // The live feed updates the cards in place; a session not shown yet gets its card (on top
  // when it is the newest, which a new session is).
  closeFeed();
  const live = new URLSearchParams();
  for (const k of ['project', 'agent']) if (filters[k]) live.set(k, filters[k]);
  live.set('kind', 'event,observation,summary');
  if (token) live.set('token', token);
  feedSource = new EventSource(`/api/live?${live}`);
  feedSource.addEventListener('hello', () => { status.className = 'status on'; status.textContent = t('feed.live'); });
  feedSource.onerror = () => { status.className = 'status off'; status.textContent = t('feed.offline'); };
  // Sessions asked for and not shown (filtered out, or older than the cards on the page): their
  // events ask again only after an observation, which may bring them into a type's filter.
  const asking = new Set();
  const absent = new Set();
  const fetchCard = async (id) => {
    if (asking.has(id) || absent.has(id)) return;
    asking.add(id);
    try {
      const one = new URLSearchParams(query);
      one.set('session', id);
      const data = (await api(`/api/session-cards?${one}`)).sessions[0];
      const card = cards.get(id);
      if (card && data) {
        card.data = data;
        redraw(card, true);
      } else if (data) {
        const top = list.firstElementChild ? cards.get(Number(list.firstElementChild.dataset.session)) : null;
        if (!top || data.started_at_ms >= top.data.started_at_ms) {
          put(data, true);
          tally();
          cards.get(id).el.classList.add('updated');
        } else {
          absent.add(id);
        }
      } else if (!card) {
        absent.add(id);
      }
    } catch (err) {
      if (!(err instanceof NeedsToken)) status.textContent = `${said('error')}${err.message}`;
    } finally {
      asking.delete(id);
    }
  };
  feedSource.addEventListener('event', (e) => {
    const row = JSON.parse(e.data);
    const card = cards.get(row.session_id);
    if (!card) { fetchCard(row.session_id); return; }
    if (card.events && card.events.some((x) => x.id === row.id)) return;
    const c = card.data;
    c.events += 1;
    c.last_event_at_ms = Math.max(c.last_event_at_ms, row.at_ms);
    if (row.kind === 'prompt' && !c.first_prompt) c.first_prompt = row.body || row.summary;
    if (card.events) card.events.push(row);
    redraw(card, true);
  });
  feedSource.addEventListener('observation', (e) => {
    const row = JSON.parse(e.data);
    const card = cards.get(row.session_id);
    if (!card) { absent.delete(row.session_id); fetchCard(row.session_id); return; }
    const c = card.data;
    if ((filters.type && row.type !== filters.type) || c.lines.some((l) => l.id === row.id)) return;
    c.observations += 1;
    if (c.lines.length < CARD_LINES) c.lines.push({ id: row.id, type: row.type, title: row.title, at_ms: row.at_ms });
    redraw(card, true);
  });
  // A summary is read whole with its card: what was done and learned.
  feedSource.addEventListener('summary', (e) => fetchCard(JSON.parse(e.data).session_id));
}

// ---- live feed -------------------------------------------------------------------------

let feedSource = null;
function closeFeed() { if (feedSource) { feedSource.close(); feedSource = null; } }

function itemCard(kind, row) {
  const title = kind === 'summary' ? (row.request || '—') : kind === 'event' ? row.summary : row.title;
  const link = kind === 'observation' ? `#/o/${row.id}` : kind === 'event' ? `#/e/${row.id}` : `#/sum/${row.id}`;
  // A summary's tag says what it is; the others have a type of their own.
  const type = kind === 'observation' ? label('obstype', row.type) : kind === 'event' ? label('evkind', row.kind) : null;
  return h('li', { class: `card feed-item ${kind}`, 'data-kind': kind, 'data-id': row.id },
    h('div', { class: 'meta' },
      h('span', { class: `tag ${kind}` }, t(`kind.${kind}`)),
      type ? h('span', {}, type) : null, h('span', {}, row.agent), h('span', {}, row.project || '-'),
      h('span', {}, when(row.at_ms)), h('span', {}, `${kind[0]}${row.id}`)),
    h('div', { class: 'title' }, h('a', { href: link }, title || '—')));
}

async function renderFeed() {
  const p = params();
  const projects = await api('/api/projects').catch((err) => { if (err instanceof NeedsToken) throw err; return { projects: [] }; });
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
    location.hash = `#/live?${q}`;
  }
  const list = h('ul', { class: 'list', id: 'feed' });
  const empty = h('p', { class: 'empty', id: 'feed-empty' }, t('feed.empty'));
  show(h('h1', {}, t('feed.title')), form, empty, list);

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

// The score's parts, for "explain scores"; numbers the hit lacks are left out.
function explainParts(hit) {
  const p = hit.parts;
  const n = (x, digits) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '—');
  const extra = [['cosine', p.similarity, ''], ['neighbours', p.neighbours, '+'], ['session', p.session, '+'], ['named', p.named, '+']]
    .filter(([, v, sign]) => typeof v === 'number' && (sign ? v > 0 : true))
    .map(([name, v, sign]) => `, ${name} ${sign}${n(v, 2)}`).join('');
  return `score ${n(hit.score, 3)} = relevance ${n(p.relevance, 3)} (bm25 ${n(p.bm25_norm, 2)}${extra})` +
    ` · importance ${n(p.importance, 2)} · freshness ${n(p.freshness, 2)} (${n(p.age_days, 1)} d) · hits ${p.hit_count ?? 0}`;
}

function hitCard(hit) {
  const memory = hit.kind === 'memory';
  // Each kind's type has words of its own (a summary's is its kind); a memory's "agent" is
  // where it came from.
  const type = { memory: 'memkind', observation: 'obstype', event: 'evkind' }[hit.kind];
  return h('li', { class: `card hit ${hit.kind}`, 'data-ref': hit.ref },
    h('div', { class: 'meta' }, h('span', { class: `tag ${hit.kind}` }, t(`kind.${hit.kind}`)),
      type ? h('span', {}, label(type, hit.type)) : null,
      memory && hit.tier ? h('span', {}, label('tier', hit.tier)) : null,
      h('span', { class: 'by' }, memory ? origin(hit.agent) : hit.agent),
      h('span', {}, memory ? scope(hit.project) : hit.project || '-'),
      h('span', {}, when(hit.at_ms)), h('span', {}, t('tokens', { n: hit.tokens })), h('span', {}, hit.ref)),
    h('div', { class: 'title' }, h('a', { href: itemHref(hit.ref) }, hit.title || '—')),
    hit.lesson ? h('div', { class: 'lesson' }, hit.lesson) : null,
    hit.parts ? h('div', { class: 'parts explain' }, explainParts(hit)) : null);
}

async function renderSearch() {
  const p = params();
  const form = h('form', { class: 'filters', id: 'search-form', onsubmit: (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) q.set(k, v);
    location.hash = `#/search?${q}`;
  } },
    h('input', { type: 'search', id: 'q', name: 'q', value: p.get('q') || '', placeholder: t('search.placeholder'), autofocus: true }),
    h('select', { name: 'kind', id: 'search-kind' }, h('option', { value: '' }, t('search.kind')),
      ['memory', 'observation', 'summary', 'event'].map((k) => h('option', { value: k, selected: p.get('kind') === k }, t(`kind.${k}`)))),
    h('input', { type: 'text', name: 'agent', placeholder: t('filter.agent'), value: p.get('agent') || '' }),
    h('input', { type: 'text', name: 'project', placeholder: t('filter.project'), value: p.get('project') || '' }),
    h('input', { type: 'text', name: 'type', placeholder: t('filter.type'), value: p.get('type') || '' }),
    h('label', {}, h('input', { type: 'checkbox', id: 'explain', name: 'explain', value: '1', checked: p.get('explain') === '1' }), ' ', t('search.explain')),
    h('button', { type: 'submit', id: 'search-go' }, t('search.go')));
  const results = h('div', { id: 'results' });
  show(h('h1', {}, t('nav.search')), form, results);
  if (!p.get('q')) return;
  try {
    const data = await api(`/api/search?${p}`);
    if (!data.hits.length) { fill(results, 'replaceChildren', [h('p', { class: 'empty' }, t('search.none'))]); return; }
    fill(results, 'replaceChildren', [h('p', { class: 'meta' }, t('search.results', { n: data.hits.length })),
      h('ul', { class: 'list' }, data.hits.map(hitCard))]);
  } catch (err) {
    if (err instanceof NeedsToken) throw err;
    fill(results, 'replaceChildren', [errorBox(err)]);
  }
}

// ---- items ------------------------------------------------------------------------------

function section(title, items) {
  if (!items || !items.length) return null;
  return [h('h2', {}, title), h('ul', { class: 'bullets' }, items.map((x) => h('li', {}, x)))];
}

function anchorList(anchors) {
  if (!anchors || !anchors.length) return null;
  return [h('h2', {}, t('obs.anchors')), h('ul', { class: 'list', id: 'anchors' }, anchors.map((a) =>
    h('li', { class: `anchor ${a.state}` }, h('code', {}, a.path), ' ',
      a.state === 'fresh' ? t('anchor.fresh') : `${t(`anchor.${a.state}`)} ${when(a.since)}`)))];
}

// The files a memory rests on, each marked as it is in the working tree now: as it was,
// changed since, gone since; nothing for a memory that rests on no file.
function anchorMarks(anchors) {
  if (!anchors || !anchors.length) return null;
  return h('div', { class: 'anchor-marks' }, h('b', {}, said('obs.anchors')), anchors.map((a) =>
    h('span', { class: `anchor-mark ${a.state}`, 'data-state': a.state, 'data-path': a.path }, h('code', {}, a.path), ' ',
      a.state === 'fresh' ? t('anchor.fresh') : `${t(`anchor.${a.state}`)} ${when(a.since, { dateStyle: 'short' })}`)));
}

// An observation's title is stored cut at a word ("…") when it is long; its facts, or else its
// narrative, hold the same sentence whole, which its own page shows.
function wholeTitle(o) {
  const title = o.title || '';
  if (!title.endsWith('…')) return title;
  const head = title.slice(0, -1).trim();
  const whole = (text) => {
    const at = text.indexOf(head);
    if (at < 0) return null;
    const rest = text.slice(at);
    const end = rest.slice(head.length).search(/[.。!?！？](\s|$)/);
    return (end < 0 ? rest : rest.slice(0, head.length + end)).trim();
  };
  for (const text of [...(o.facts || []), o.narrative || '']) {
    const found = whole(text);
    if (found && found.length > head.length) return found;
  }
  return title;
}

async function renderObservation(id) {
  const o = await api(`/api/observations/${id}`);
  // The full item names its type `kind`; list rows call it `type`.
  const type = label('obstype', o.kind || o.type);
  show(h('article', { id: 'observation', class: 'card', 'data-ref': `o${o.id}` },
    h('div', { class: 'meta' }, type ? h('span', { class: 'tag observation', id: 'observation-type' }, type) : null, h('span', {}, `o${o.id}`),
      h('span', {}, `${said('obs.agent')}${o.agent}`), h('span', {}, o.project || '-'), h('span', {}, when(o.at_ms)),
      h('span', {}, t('tokens', { n: o.tokens }))),
    h('h1', { class: 'item-title' }, wholeTitle(o)), o.subtitle ? h('p', {}, o.subtitle) : null,
    section(t('obs.facts'), o.facts),
    o.narrative ? [h('h2', {}, t('obs.narrative')), h('p', { class: 'narrative' }, o.narrative)] : null,
    section(t('obs.concepts'), o.concepts),
    section(t('obs.files_modified'), o.files_modified), section(t('obs.files_read'), o.files_read),
    anchorList(o.anchors),
    h('h2', {}, t('obs.session')),
    h('p', {}, o.session_id ? h('a', { href: `#/s/${o.session_id}`, id: 'session-link' }, `${o.agent} · ${o.session}`) : o.session),
    (o.source_events || []).length ? [h('h2', {}, t('obs.sources')), h('ul', { class: 'list' }, o.source_events.map((e) =>
      h('li', { class: 'card' }, h('div', { class: 'meta' }, h('span', { class: 'tag event' }, label('evkind', e.kind)), h('a', { href: `#/e/${e.id}` }, `e${e.id}`),
        e.tool ? h('span', {}, e.tool) : null, h('span', {}, when(e.at_ms))), h('div', {}, e.summary), e.body ? h('pre', {}, e.body) : null)))] : null));
}

async function renderEvent(id) {
  const e = await api(`/api/events/${id}`);
  show(h('article', { id: 'event', class: 'card', 'data-ref': `e${e.id}` },
    h('div', { class: 'meta' }, h('span', { class: 'tag event' }, label('evkind', e.kind)), h('span', {}, `e${e.id}`), h('span', {}, e.agent),
      e.tool ? h('span', {}, e.tool) : null, h('span', {}, when(e.at_ms))),
    h('h1', { class: 'item-title' }, e.summary || '—'), e.body ? h('pre', {}, e.body) : null, section(t('event.files'), e.files),
    e.session_id ? h('p', {}, h('a', { href: `#/s/${e.session_id}` }, `${said('event.session')}${e.agent} · ${e.session}`)) : null));
}

// A summary on a page of its own (a session may have had several), linked to its session.
async function renderSummaryItem(id) {
  const m = await api(`/api/summaries/${id}`);
  show(h('h1', {}, `${t('summary.title')} s${m.id}`),
    h('div', { class: 'meta' }, h('span', {}, m.agent), h('span', {}, m.project || '-'), h('span', {}, when(m.at_ms))),
    summaryBlock(m),
    m.session_id ? h('p', {}, h('a', { href: `#/s/${m.session_id}`, id: 'summary-session' }, `${said('summary.session')}${m.agent} · ${m.session}`)) : null);
}

function summaryBlock(m) {
  if (!m) return h('p', { class: 'empty' }, t('session.nosummary'));
  return h('div', { class: 'card', id: 'summary', 'data-ref': `s${m.id}` },
    h('div', { class: 'meta' }, h('span', { class: 'tag summary' }, `s${m.id}`), h('span', {}, when(m.at_ms))),
    h('p', { class: 'item-title' }, h('b', {}, said('session.request')), m.request || '—'),
    section(t('session.investigated'), m.investigated), section(t('session.learned'), m.learned),
    section(t('session.completed'), m.completed), section(t('session.next'), m.next_steps));
}

// What replaced what: the chain a memory is in, oldest first, each with its text and what
// became of it (replaced when, in use now, forgotten); `current` is the memory shown.
function chainList(chain, current) {
  if (!chain || chain.length < 2) return null;
  return h('ol', { class: 'chain' }, chain.map((c) => {
    const fate = c.status === 'superseded' ? t('mem.replaced_at', { at: when(c.updated_at) })
      : c.status === 'active' ? t('mem.current') : label('status', c.status);
    return h('li', { class: c.id === current ? 'chain-link this' : 'chain-link', 'data-id': c.id },
      idLink(`m${c.id}`), ' ', h('span', { class: 'chain-text' }, c.text), ' ', h('span', { class: 'meta-inline fate' }, `(${fate})`));
  }));
}

// Where a memory came from: its origin in words, then its source items, each with the agent
// and the session it came from, linked.
function provenance(m) {
  const items = m.source_items || [];
  const extra = (m.sources_total || 0) - items.length;
  return h('div', { class: 'provenance' },
    h('p', {}, h('b', {}, said('mem.from')), origin(m.member ? `${m.member}, ${m.origin}` : m.origin)),
    items.length ? h('ul', { class: 'source-items' }, items.map((s) => h('li', { 'data-ref': s.ref },
      idLink(s.ref), ' ', h('span', { class: 'source-title' }, s.title || '—'), ' · ',
      h('span', {}, `${t('mem.by')} ${s.agent}`), ' · ',
      s.session_id ? h('a', { href: `#/s/${s.session_id}`, class: 'source-session' }, `${t('mem.in_session')} ${s.session}`) : h('span', {}, s.session),
      ' · ', h('span', {}, when(s.at_ms))))) : null,
    extra > 0 ? h('p', { class: 'meta' }, t('mem.more_sources', { n: extra })) : null,
    !items.length && !m.sources_total ? h('p', { class: 'meta' }, t('mem.no_sources')) : null);
}

// A memory on a page of its own: its text in full, where it came from, what it replaced or
// was replaced by.
async function renderMemory(id) {
  let m;
  try {
    m = await api(`/api/memories/m${id}`);
  } catch (err) {
    if (err instanceof NeedsToken) throw err;
    throw new Error(t('memory.missing', { id: `m${id}` }));
  }
  show(h('article', { id: 'memory', class: 'card', 'data-ref': `m${m.id}` },
    h('div', { class: 'meta' }, h('span', { class: 'tag memory' }, t('kind.memory')), h('span', {}, `m${m.id}`),
      h('span', {}, label('memkind', m.kind)), h('span', {}, label('tier', m.tier)), h('span', { class: 'status-word' }, label('status', m.status)),
      h('span', { class: 'by' }, origin(m.member ? `${m.member}, ${m.origin}` : m.origin)),
      h('span', {}, scope(m.project_name || m.project)), h('span', {}, t('memory.importance', { n: m.importance }))),
    h('h1', { class: 'item-title memory-text' }, m.text),
    h('p', { class: 'meta' }, h('span', {}, `${t('memory.learned')} ${when(m.created_at)}`),
      m.updated_at !== m.created_at ? h('span', {}, `${t('memory.changed')} ${when(m.updated_at)}`) : null),
    (m.chain || []).length > 1 ? [h('h2', {}, t('mem.chain')), chainList(m.chain, m.id)] : null,
    provenance(m),
    m.branch ? [h('h2', {}, t('memory.branch')), h('p', {}, h('code', {}, m.branch))] : null));
}

// One memory on the memory page, with what a person does to it: edit its text, kind and
// importance, forget it, bring it back.
function memoryCard(first) {
  const li = h('li', { class: 'card memory-card' });
  const draw = (m, editing, note) => {
    li.dataset.id = m.id;
    li.dataset.status = m.status;
    const act = async (body) => {
      try {
        const d = await api(`/api/memories/m${m.id}`, body);
        draw(d.memory, false, t('mem.done', { id: `m${m.id}`, action: t(`action.${body.action}`) }));
      } catch (err) { li.append(errorBox(err)); }
    };
    const live = m.status === 'active' || m.status === 'candidate';
    const back = m.status === 'forgotten' || m.status === 'rejected';
    let body;
    if (editing) {
      const text = h('textarea', { class: 'review-text mem-text-input', rows: 2, maxlength: 300, 'aria-label': t('mem.text'), oninput: () => fitText(text) });
      text.value = m.text;
      const kind = h('select', { class: 'mem-kind-input', 'aria-label': t('mem.kind') },
        ['fact', 'decision', 'convention', 'problem', 'preference'].map((k) => h('option', { value: k, selected: m.kind === k }, label('memkind', k))));
      const importance = h('input', { type: 'number', class: 'mem-importance-input', min: 1, max: 10, value: m.importance, 'aria-label': t('mem.importance') });
      body = [text, h('div', { class: 'actions' },
        h('label', {}, said('mem.kind'), kind), h('label', {}, said('mem.importance'), importance),
        h('button', { type: 'button', class: 'save', onclick: () => act({ action: 'edit', text: text.value, kind: kind.value, importance: Number(importance.value) }) }, t('mem.save')),
        h('button', { type: 'button', class: 'cancel', onclick: () => draw(m, false) }, t('mem.cancel')))];
      setTimeout(() => fitText(text));
    } else {
      body = [h('p', { class: 'memory-text' }, m.text),
        h('div', { class: 'actions' },
          live ? h('button', { type: 'button', class: 'edit', onclick: () => draw(m, true) }, t('mem.edit')) : null,
          m.status !== 'forgotten' ? h('button', { type: 'button', class: 'forget', onclick: () => act({ action: 'forget' }) }, t('mem.forget')) : null,
          back ? h('button', { type: 'button', class: 'restore', onclick: () => act({ action: 'restore' }) }, t('mem.restore')) : null)];
    }
    fill(li, 'replaceChildren', [
      h('div', { class: 'meta' }, h('span', { class: 'tag memory' }, label('memkind', m.kind)), h('a', { href: `#/m/${m.id}` }, `m${m.id}`),
        h('span', {}, label('tier', m.tier)), h('span', {}, scope(m.project_name || m.project)),
        h('span', { class: 'importance' }, t('memory.importance', { n: m.importance })),
        h('span', { class: 'status-word' }, label('status', m.status)),
        h('span', {}, `${t('memory.learned')} ${when(m.created_at)}`)),
      body,
      anchorMarks(m.anchors),
      (m.chain || []).length > 1 ? h('div', { class: 'chain-box' }, h('b', {}, said('mem.chain')), chainList(m.chain, m.id)) : null,
      provenance(m),
      note ? h('p', { class: 'note-line' }, note) : null]);
  };
  draw(first, false);
  return li;
}

async function renderMemoryPage() {
  const p = params();
  const filters = { project: p.get('project') || '', kind: p.get('kind') || '', tier: p.get('tier') || '', status: p.get('status') || '' };
  const query = new URLSearchParams();
  for (const k of ['project', 'kind', 'tier', 'status']) if (filters[k]) query.set(k, filters[k]);
  const page = (offset) => api(`/api/memories?${query}&limit=100&offset=${offset}`);
  const [projects, first] = await Promise.all([api('/api/projects'), page(0)]);
  const apply = () => {
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) q.set(k, v);
    location.hash = `#/memory?${q}`;
  };
  const choice = (name, options) => h('select', { name, id: `memory-${name}`, onchange: apply },
    options.map(([value, text]) => h('option', { value, selected: filters[name] === value }, text)));
  const form = h('form', { class: 'filters', id: 'memory-filters', onsubmit: (e) => e.preventDefault() },
    choice('project', [['', t('filter.project')], ...projects.projects.map((pr) => [pr.key, pr.name])]),
    choice('kind', [['', t('filter.kinds_all')], ...['fact', 'decision', 'convention', 'problem', 'preference'].map((k) => [k, label('memkind', k)])]),
    choice('tier', [['', t('mem.tiers')], ['L2', t('tier.L2')], ['L3', t('tier.L3')]]),
    choice('status', [['', t('status.active')], ['forgotten', t('status.forgotten')], ['superseded', t('status.superseded')], ['all', t('mem.status_all')]]));
  const list = h('ul', { class: 'cards', id: 'memories' });
  const more = h('button', { type: 'button', id: 'memory-more', hidden: true }, t('mem.more'));
  let offset = null;
  const add = (got) => {
    got.memories.forEach((m) => list.append(memoryCard(m)));
    offset = got.next_offset;
    more.hidden = offset === null || offset === undefined;
  };
  more.addEventListener('click', async () => { try { add(await page(offset)); } catch (err) { more.after(errorBox(err)); } });
  add(first);
  show(h('h1', {}, t('mem.title')), h('p', { class: 'meta intro' }, t('mem.intro')), form,
    first.memories.length ? list : h('p', { class: 'empty', id: 'memories' }, t('mem.empty')), more);
}

async function renderSession(id) {
  const d = await api(`/api/sessions/${id}`);
  const s = d.session;
  show(h('section', { id: 'session' },
    h('h1', {}, `${said('session.title')}${s.title || s.source_id}`),
    h('div', { class: 'meta' }, h('span', {}, s.agent), h('span', {}, s.project || '-'),
      s.branch ? h('span', { class: 'branch', title: t('memory.branch') }, `⎇ ${s.branch}`) : null, h('span', {}, when(s.started_at_ms)),
      h('span', {}, `→ ${when(s.last_event_at_ms)}`), h('span', {}, t('session.event_count', { n: s.events }))),
    h('h2', {}, t('session.summary')), summaryBlock(d.summary),
    h('h2', {}, t('session.timeline')),
    d.timeline.length ? h('ul', { class: 'list' }, d.timeline.map((o) => itemCard('observation', o))) : h('p', { class: 'empty' }, t('session.notimeline')),
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

// The hook spool in words: how many events wait in how many files, or that nothing does.
function spoolText(spool) {
  const files = spool.files || 0;
  const waiting = files ? t('health.spool_wait', { records: spool.records || 0, files }) : t('health.spool_empty');
  return spool.quarantined ? `${waiting}; ${t('health.spool_bad', { n: spool.quarantined })}` : waiting;
}

// The worker in words: off, not yet run, or when its last pass ended and how.
function workerText(w) {
  if (!w.enabled) return t('health.worker_off');
  const at = when(w.last_finished_at_ms, { dateStyle: 'short', timeStyle: 'short' });
  if (!w.last_finished_at_ms) return w.running ? t('health.worker_running') : t('health.worker_first');
  const said = w.last_error
    ? t('health.worker_fail', { at, failures: w.consecutive_failures || 1, error: w.last_error })
    : t('health.worker_ok', { at, passes: w.passes || 0 });
  return w.running ? `${said}; ${t('health.worker_running')}` : said;
}

// Hook latency per hour over the last day: the median and the 95th percentile as two bars an
// hour, the hours with no run left empty.
function latencyChart(hours) {
  if (!hours.length) return h('p', { class: 'empty', id: 'latency-chart' }, t('health.nolatency'));
  const now = Math.floor(Date.now() / 3600000) * 3600000;
  const slots = [];
  for (let i = 23; i >= 0; i -= 1) slots.push(now - i * 3600000);
  const max = Math.max(...hours.map((x) => x.p95_ms), 0.001);
  const W = 720, H = 200, pad = 28, slot = (W - pad * 2) / slots.length, bw = Math.max(2, slot / 2 - 2);
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H + 30}`); svg.setAttribute('width', '100%'); svg.setAttribute('id', 'latency-chart');
  const el = (tag, attrs, text) => { const e = document.createElementNS(ns, tag); for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v); if (text != null) e.textContent = text; svg.append(e); return e; };
  const ms = (x) => (x >= 10 ? x.toFixed(0) : x.toFixed(1));
  el('line', { x1: pad, y1: H, x2: W - pad, y2: H, stroke: '#ccc' });
  el('text', { x: 2, y: 12 }, `${ms(max)} ms`);
  slots.forEach((at, i) => {
    const x = pad + i * slot + 1;
    const hour = new Date(at).toLocaleTimeString(lang === 'zh' ? 'zh-CN' : 'en-GB', { hour: '2-digit', minute: '2-digit' });
    const row = hours.find((r) => r.hour_ms === at);
    if (row) {
      const tip = t('health.latency_tip', { hour, p50: ms(row.p50_ms), p95: ms(row.p95_ms), runs: row.runs });
      [['p50', row.p50_ms, 0], ['p95', row.p95_ms, 1]].forEach(([name, v, k]) => {
        const hgt = Math.max(1, (v / max) * (H - 20));
        const r = el('rect', { x: x + k * (bw + 1), y: H - hgt, width: bw, height: hgt, fill: COLORS[k], class: `lat-${name}`, 'data-hour': at });
        const title = document.createElementNS(ns, 'title'); title.textContent = tip; r.append(title);
      });
    }
    if (i % 4 === 0 || i === slots.length - 1) el('text', { x, y: H + 14 }, hour);
  });
  const legend = h('div', { class: 'legend' }, [t('health.p50'), t('health.p95')].map((a, i) => { const s = h('span', {}, a); s.style.setProperty('--c', COLORS[i]); return s; }));
  return h('div', {}, svg, legend);
}

// Each agent this user has: its wiring in words and when its last hook ran.
function agentList(agents) {
  if (!agents.length) return h('p', { class: 'empty', id: 'agents' }, t('health.no_agents'));
  return h('ul', { class: 'list', id: 'agents' }, agents.map((a) => h('li', { class: `agent-wiring ${a.wiring}`, 'data-agent': a.agent, 'data-wiring': a.wiring },
    h('b', {}, a.agent), ' · ', h('span', { class: 'wiring-words' }, label('wiring', a.wiring)), ' · ',
    h('span', { class: 'last-hook' }, typeof a.last_hook_at_ms === 'number' ? t('health.last_hook', { at: when(a.last_hook_at_ms, { dateStyle: 'short', timeStyle: 'short' }) }) : t('health.no_hook')))));
}

async function renderHealth() {
  const [d, details] = await Promise.all([api('/api/stats?days=30'), api('/api/health/details')]);
  const s = d.store;
  const day = s.hooks.find((w) => w.window === '24h') || { runs: 0, error_rate: 0 };
  const spend = s.llm_spend.reduce((a, x) => a + x.tokens, 0);
  const rate = Number.isFinite(day.error_rate) ? day.error_rate : 0;
  const fig = (name, value, id, href) => h('div', { class: 'card', id }, h('div', { class: 'label' }, name),
    h('div', { class: 'figure' }, href ? h('a', { href }, value) : value));
  const words = (name, value, id) => h('div', { class: 'card wide', id }, h('div', { class: 'label' }, name), h('div', { class: 'words' }, value));
  show(h('h1', {}, t('health.title')), h('div', { class: 'grid', id: 'health' },
    fig(t('health.size'), bytes(s.bytes), 'fig-size'), fig(t('health.events'), s.events, 'fig-events'),
    fig(t('health.sessions'), s.sessions, 'fig-sessions'), fig(t('health.observations'), s.observations, 'fig-observations'),
    fig(t('health.summaries'), s.summaries, 'fig-summaries'), fig(t('health.memories'), s.memories, 'fig-memories'),
    fig(t('health.candidates'), s.candidates, 'fig-candidates', '#/review'), fig(t('health.to_distil'), s.to_distil, 'fig-to-distil'),
    fig(t('health.hook_errors'), `${(rate * 100).toFixed(1)} %`, 'fig-hook-errors'),
    fig(t('health.hook_runs'), day.runs, 'fig-hook-runs'), fig(t('health.spend'), spend, 'fig-spend'),
    words(t('health.spool'), spoolText(d.spool), 'fig-spool'), words(t('health.worker'), workerText(d.worker), 'fig-worker')),
  h('h2', {}, t('health.agents')), agentList(details.agents),
  h('div', { class: 'charts' },
    h('section', {}, h('h2', {}, t('health.chart')), chart(d.events_per_day, 30)),
    h('section', {}, h('h2', {}, t('health.latency')), latencyChart(details.hook_latency))));
}

// ---- review -----------------------------------------------------------------------------

// Grows a text box to its text, so a candidate is read whole without scrolling inside it.
function fitText(box) {
  box.style.height = 'auto';
  box.style.height = `${box.scrollHeight + 2}px`;
}

async function renderReview() {
  const d = await api('/api/review');
  const list = h('ul', { class: 'cards', id: 'review' });
  const decided = (li, id, action) => {
    fill(li, 'replaceChildren', [h('p', { class: 'empty' }, t('review.done', { id: `m${id}`, action: t(`action.${action}`) }))]);
    li.classList.add('decided');
    tally();
  };
  const decide = async (li, id, body) => {
    try {
      await api(`/api/review/m${id}`, body);
      decided(li, id, body.action);
    } catch (err) { li.append(errorBox(err)); }
  };
  const open = () => [...list.querySelectorAll('.review-item:not(.decided)')];
  const picked = () => open().filter((li) => li.querySelector('input.pick').checked);
  for (const m of d.candidates) {
    const text = h('textarea', { class: 'review-text', rows: 3, maxlength: 300, oninput: () => fitText(text) });
    text.value = m.text;
    const li = h('li', { class: 'card review-item', 'data-id': m.id, 'data-project': m.project || '', 'data-kind': m.kind });
    const button = (caption, cls, body) => {
      const b = h('button', { class: cls }, caption);
      b.addEventListener('click', async () => {
        try { await decide(li, m.id, await body()); } catch (err) { li.append(errorBox(err)); }
      });
      return b;
    };
    fill(li, 'append', [
      h('div', { class: 'meta' },
        h('label', { class: 'pick-box' }, h('input', { type: 'checkbox', class: 'pick', 'aria-label': `${t('review.select')} m${m.id}`, onchange: () => tally() })),
        h('span', { class: 'tag memory' }, label('memkind', m.kind)), h('a', { href: `#/m/${m.id}` }, `m${m.id}`),
        h('span', {}, scope(m.project_name || m.project)), h('span', {}, t('memory.importance', { n: m.importance })),
        h('span', { class: 'by' }, origin(m.origin)), m.branch ? h('span', {}, `${said('memory.branch')}${m.branch}`) : null),
      text,
      m.supersedes_memory ? h('p', { class: 'replaces' }, `${t('review.replaces')} `, idLink(`m${m.supersedes_memory.id}`), `: ${m.supersedes_memory.text}`) : null,
      (m.sources || []).length ? h('p', { class: 'meta sources' }, said('review.from'), m.sources.flatMap((s, k) => (k ? [' ', idLink(s)] : [idLink(s)]))) : null,
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
        button(t('review.reject'), 'reject', () => ({ action: 'reject' })))]);
    list.append(li);
  }

  // A selection, and one decision on all of it, said with its count before it is made.
  const pickAll = (test) => open().forEach((li) => { li.querySelector('input.pick').checked = test(li); });
  const projects = new Map();
  const kinds = new Set();
  d.candidates.forEach((m) => { projects.set(m.project || '', scope(m.project_name || m.project)); kinds.add(m.kind); });
  const byProject = h('select', { id: 'pick-project', 'aria-label': t('review.by_project'), onchange: () => {
    if (byProject.value !== '-') pickAll((li) => (li.dataset.project || '') === byProject.value);
    byProject.value = '-';
    tally();
  } }, h('option', { value: '-' }, t('review.by_project')), [...projects].map(([key, name]) => h('option', { value: key }, name)));
  const byKind = h('select', { id: 'pick-kind', 'aria-label': t('review.by_kind'), onchange: () => {
    if (byKind.value !== '-') pickAll((li) => li.dataset.kind === byKind.value);
    byKind.value = '-';
    tally();
  } }, h('option', { value: '-' }, t('review.by_kind')), [...kinds].map((k) => h('option', { value: k }, label('memkind', k))));
  const count = h('span', { id: 'pick-count', class: 'meta' });
  const confirmBox = h('div', { id: 'bulk-confirm', class: 'confirm', hidden: true });
  const result = h('p', { id: 'bulk-result', class: 'meta', hidden: true });
  const bulk = (caption, action) => h('button', { type: 'button', class: `bulk bulk-${action}`, 'data-action': action, onclick: () => ask(action) }, caption);
  const buttons = [bulk(t('review.bulk_approve'), 'approve'), bulk(t('review.bulk_global'), 'approve_global'), bulk(t('review.bulk_reject'), 'reject')];
  function tally() {
    const n = picked().length;
    count.textContent = t('review.selected', { n });
    buttons.forEach((b) => { b.disabled = n === 0; });
  }
  function ask(action) {
    const chosen = picked();
    if (!chosen.length) return;
    fill(confirmBox, 'replaceChildren', [h('span', { class: 'question' }, t(`review.confirm_${action}`, { n: chosen.length })), ' ',
      h('button', { type: 'button', id: 'bulk-yes', onclick: () => go(action, chosen) }, t('review.yes')), ' ',
      h('button', { type: 'button', id: 'bulk-no', onclick: () => { confirmBox.hidden = true; } }, t('review.no'))]);
    confirmBox.hidden = false;
  }
  async function go(action, chosen) {
    confirmBox.hidden = true;
    let done = 0;
    let failed = 0;
    try {
      // The server takes at most 500 at once.
      for (let i = 0; i < chosen.length; i += 500) {
        const part = chosen.slice(i, i + 500);
        const answer = await api('/api/review', { action, ids: part.map((li) => Number(li.dataset.id)) });
        const byId = new Map(part.map((li) => [Number(li.dataset.id), li]));
        answer.done.forEach((x) => { const li = byId.get(x.memory.id); if (li) decided(li, x.memory.id, action); done += 1; });
        answer.failed.forEach((x) => { const li = byId.get(x.id); if (li) li.append(h('p', { class: 'error' }, `${said('error')}${x.message}`)); failed += 1; });
      }
    } catch (err) { result.after(errorBox(err)); }
    result.textContent = [t('review.bulk_done', { n: done, action: t(`action.${action}`) }), failed ? t('review.bulk_failed', { n: failed }) : null].filter(Boolean).join('; ');
    result.hidden = false;
    tally();
  }
  const toolbar = h('div', { class: 'filters bulk-bar', id: 'bulk-bar' },
    h('span', {}, said('review.select')),
    h('button', { type: 'button', id: 'pick-all', onclick: () => { pickAll(() => true); tally(); } }, t('review.all')),
    h('button', { type: 'button', id: 'pick-none', onclick: () => { pickAll(() => false); tally(); } }, t('review.none')),
    byProject, byKind, count, buttons);
  show(h('h1', {}, t('review.title')),
    d.candidates.length ? [toolbar, confirmBox, result, list] : h('p', { class: 'empty', id: 'review' }, t('review.empty')));
  tally();
  // Only a box on the page has a height to measure.
  list.querySelectorAll('textarea').forEach(fitText);
}

// What agents were handed, session by session (newest first): each session with its agent,
// id, project and time, then every briefing, recall and file context it got, with its items
// linked, its tokens and what the budget cut.
async function renderHanded() {
  const d = await api('/api/injections?limit=200');
  const groups = new Map();
  d.forEach((i) => {
    const key = `${i.agent}\n${i.session || ''}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(i);
  });
  const list = h('ul', { class: 'cards', id: 'handed' }, [...groups.values()].map((all) => {
    const first = all[all.length - 1];
    const last = all[0];
    const tokens = all.reduce((a, i) => a + i.tokens, 0);
    return h('li', { class: 'card handed-session', 'data-agent': first.agent, 'data-session': first.session || '' },
      h('div', { class: 'meta session-head' }, h('b', {}, `${said('handed.session')}${first.session || t('handed.no_session')}`),
        h('span', {}, first.agent), h('span', {}, first.project || '-'),
        h('span', {}, all.length > 1 ? `${when(first.at_ms)} → ${when(last.at_ms)}` : when(first.at_ms)),
        h('span', {}, `${t('handed.times', { n: all.length })} · ${t('tokens', { n: tokens })}`)),
      h('ul', { class: 'handed-list' }, [...all].reverse().map((i) =>
        h('li', { class: 'injection', 'data-channel': i.channel },
          h('div', { class: 'meta' }, h('span', { class: 'tag' }, label('channel', i.channel)), h('span', {}, when(i.at_ms)),
            h('span', {}, `${t('handed.items', { n: i.items.length })} · ${t('tokens', { n: i.tokens })}`),
            h('span', { class: 'cut' }, i.cut ? t('handed.cut', { n: i.cut }) : t('handed.nothing_cut'))),
          h('div', { class: 'items' }, i.items.flatMap((id, k) => (k ? [' ', idLink(id)] : [idLink(id)])))))));
  }));
  show(h('h1', {}, t('handed.title')),
    d.length ? list : h('p', { class: 'empty', id: 'handed' }, t('handed.empty')));
}

// ---- routing -----------------------------------------------------------------------------

let routes = 0;

async function route() {
  const run = ++routes;
  const path = location.hash.replace(/^#/, '').split('?')[0] || '/';
  document.querySelectorAll('nav a').forEach((a) => a.classList.toggle('active', a.getAttribute('href') === `#${path}` || (path === '/' && a.getAttribute('href') === '#/')));
  closeFeed();
  const m = path.match(/^\/(o|s|e|sum|m)\/(\d+)$/);
  // Busy until the page is drawn, for screen readers and anything else that waits on it.
  main().setAttribute('aria-busy', 'true');
  try {
    // Every read needs the token: without one, say where it is instead of failing each read.
    if (!token) show(tokenPage());
    else if (m && m[1] === 'o') await renderObservation(m[2]);
    else if (m && m[1] === 's') await renderSession(m[2]);
    else if (m && m[1] === 'e') await renderEvent(m[2]);
    else if (m && m[1] === 'sum') await renderSummaryItem(m[2]);
    else if (m && m[1] === 'm') await renderMemory(m[2]);
    else if (path === '/live') await renderFeed();
    else if (path === '/memory') await renderMemoryPage();
    else if (path === '/search') await renderSearch();
    else if (path === '/health') await renderHealth();
    else if (path === '/review') await renderReview();
    else if (path === '/handed') await renderHanded();
    else await renderHome();
  } catch (err) { show(err instanceof NeedsToken ? tokenPage() : errorBox(err)); }
  if (run === routes) main().removeAttribute('aria-busy');
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
