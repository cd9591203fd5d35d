//! The session-start briefing: what a new session of any agent is told about earlier ones.
//!
//! Here are a project's long-term memories, its last session summary, its recent observations
//! and its token figures, give me Markdown within a budget. In order: the header, memory sections
//! (L3 preferences; the project's facts, decisions, conventions and solved problems), the last
//! session (what was done and learned, next steps when there are any, then the request), a
//! timeline of recent observations from every agent grouped by day and then by file, each one
//! line with what was learned and its lesson, one line of token economics, and the closing rule
//! that the current conversation wins. When the budget is tight the timeline gives way first
//! (its newest observation last of all), then the economics line, the last session and the
//! memories; within a block, a line that does not fit is left out whole. The header and
//! closing line are the frame, and a budget too small for the frame gets nothing.
//!
//! The economics line says what the briefing stands for in a person's words and figures (`~1,500
//! tokens here stand for ~42,000 tokens of earlier work (120 observations).`), and only when the
//! work is at least twice the briefing's own size; it never states a percentage or a saving
//! that is not one.
//!
//! Must not: read the store (callers gather [`Briefing`]), or exceed the budget by one token as
//! [`crate::tokens::estimate`] counts the final wrapped text.

use jiff::Timestamp;
use jiff::tz::TimeZone;

use super::Handed;
use crate::capture::fence::{SENTINEL_CLOSE, SENTINEL_OPEN};
use crate::promote::similar;
use crate::recall::ItemId;
use crate::store::distilled::Summary;
use crate::store::recall::{BriefingItem, Economics};
use crate::text::{clip, one_line};
use crate::tokens::estimate;

/// The most a context may be in bytes: Claude Code cuts longer hook context to a preview.
pub const CONTEXT_MAX_BYTES: usize = 8 * 1024;

/// Recent observations the timeline considers, before the budget cuts it.
pub const TIMELINE_CANDIDATES: usize = 60;

/// How the briefing is written.
#[derive(Debug, Clone)]
pub struct ContextOptions {
    /// At most this many tokens, sentinel included ([`crate::tokens::estimate`]).
    pub budget_tokens: usize,
    /// `en` or `zh-CN`.
    pub language: String,
    /// Emoji per observation type, from the mode in use.
    pub icons: Vec<(String, String)>,
    /// Where days begin and what times read as.
    pub time_zone: TimeZone,
}

impl ContextOptions {
    /// Options in the system time zone.
    pub fn new(budget_tokens: usize, language: &str, icons: Vec<(String, String)>) -> Self {
        ContextOptions {
            budget_tokens,
            language: language.to_owned(),
            icons,
            time_zone: crate::time::local_zone(),
        }
    }

    fn zh(&self) -> bool {
        self.language.starts_with("zh")
    }

    /// `2026-12-02 14:33` in the options' time zone.
    pub(super) fn stamp(&self, ms: i64) -> String {
        match Timestamp::from_millisecond(ms) {
            Ok(ts) => {
                ts.to_zoned_datetime(self.time_zone.clone()).strftime("%Y-%m-%d %H:%M").to_string()
            }
            Err(_) => ms.to_string(),
        }
    }
}

/// The kinds of long-term memory a briefing has a section for, in the order they appear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryKind {
    /// The person's own, across projects (L3).
    Preference,
    /// Project context: structure, stack, environment.
    Fact,
    /// A decision with its reason.
    Decision,
    /// Naming, commits, layout.
    Convention,
    /// An error and its fix.
    Problem,
}

impl MemoryKind {
    const ALL: [MemoryKind; 5] = [
        MemoryKind::Preference,
        MemoryKind::Fact,
        MemoryKind::Decision,
        MemoryKind::Convention,
        MemoryKind::Problem,
    ];

    fn heading(self, zh: bool) -> &'static str {
        match (self, zh) {
            (MemoryKind::Preference, false) => "## Preferences",
            (MemoryKind::Fact, false) => "## Project facts",
            (MemoryKind::Decision, false) => "## Decisions",
            (MemoryKind::Convention, false) => "## Conventions",
            (MemoryKind::Problem, false) => "## Solved problems",
            (MemoryKind::Preference, true) => "## 偏好",
            (MemoryKind::Fact, true) => "## 项目事实",
            (MemoryKind::Decision, true) => "## 决策",
            (MemoryKind::Convention, true) => "## 约定",
            (MemoryKind::Problem, true) => "## 已解决的问题",
        }
    }
}

/// One reviewed long-term memory for the briefing (L2 project memory or L3 preference).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BriefingMemory {
    /// The memory's row id (`m7`).
    pub id: i64,
    pub kind: MemoryKind,
    /// The statement, at most 300 characters.
    pub text: String,
    /// Who learned it, for a teammate's memory pulled from the team: the member, and the agent
    /// when one is known (`alice, codex`); `None` for memory learned on this machine.
    pub by: Option<String>,
    /// What changed in a file it rests on (`src/pay.py changed since 2026-12-01`); `None`
    /// while its files are as it knew them ([`crate::anchor`]).
    pub stale: Option<String>,
}

impl From<crate::store::memories::Kind> for MemoryKind {
    fn from(kind: crate::store::memories::Kind) -> Self {
        use crate::store::memories::Kind;
        match kind {
            Kind::Preference => MemoryKind::Preference,
            Kind::Fact => MemoryKind::Fact,
            Kind::Decision => MemoryKind::Decision,
            Kind::Convention => MemoryKind::Convention,
            Kind::Problem => MemoryKind::Problem,
        }
    }
}

/// How memories are ranked in a briefing (`[inject] memory_weight_*` in `default.toml`: 60/30/10
/// by default).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryWeights {
    pub importance: f64,
    pub freshness: f64,
    pub hits: f64,
    /// Freshness halves every this many days since the memory changed or was last found.
    pub half_life_days: f64,
}

impl MemoryWeights {
    /// The weights `[inject]` configures.
    pub fn from_config(config: &crate::config::InjectConfig) -> MemoryWeights {
        MemoryWeights {
            importance: config.memory_weight_importance,
            freshness: config.memory_weight_freshness,
            hits: config.memory_weight_hits,
            half_life_days: config.memory_half_life_days,
        }
    }

    /// A memory's rank at `now_ms`: importance (1–10 as 0.1–1), freshness (a half-life since
    /// it changed or was last found) and hit frequency (`1 - 1/(1 + hits)`), weighted.
    pub fn score(&self, memory: &crate::store::memories::Memory, now_ms: i64) -> f64 {
        let touched = memory.updated_at.max(memory.last_hit.unwrap_or(0));
        let age_days = (now_ms - touched).max(0) as f64 / 86_400_000.0;
        let freshness = 0.5_f64.powf(age_days / self.half_life_days.max(0.01));
        let hits = 1.0 - 1.0 / (1.0 + memory.hits.max(0) as f64);
        self.importance * f64::from(memory.importance) / 10.0
            + self.freshness * freshness
            + self.hits * hits
    }
}

/// Active memories as the briefing shows them, best first by `weights` (ties: newer first).
/// Only active L2 and L3 memories are ever handed in; anything else is left out here too.
pub fn rank_memories(
    memories: &[crate::store::memories::Memory],
    weights: &MemoryWeights,
    now_ms: i64,
) -> Vec<BriefingMemory> {
    use crate::store::memories::{Status, Tier};
    let mut ranked: Vec<(f64, &crate::store::memories::Memory)> = memories
        .iter()
        .filter(|m| m.status == Status::Active && m.tier != Tier::L1)
        .map(|m| (weights.score(m, now_ms), m))
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.updated_at.cmp(&a.1.updated_at)));
    ranked
        .into_iter()
        .map(|(_, m)| BriefingMemory {
            id: m.id,
            kind: m.kind.into(),
            text: m.text.clone(),
            by: learned_by(m),
            stale: None,
        })
        .collect()
}

/// Who learned a teammate's memory, as the briefing and search name them: the member, then the
/// agent when the memory names one (`alice, codex`).
pub fn learned_by(memory: &crate::store::memories::Memory) -> Option<String> {
    let member = memory.member.as_deref()?;
    let agent = memory.origin.strip_prefix("stated:").unwrap_or(&memory.origin);
    Some(match agent {
        "" | "remembered" | "distilled" | "imported" => member.to_owned(),
        agent => format!("{member}, {agent}"),
    })
}

/// The share of the budget (after the frame) memory sections may take, so the timeline index
/// keeps room however much is remembered.
const MEMORY_SHARE_PERCENT: usize = 60;

/// What a briefing is made of.
#[derive(Debug, Clone, Copy)]
pub struct Briefing<'a> {
    /// Reviewed long-term memories (L3 and the project's L2), best first ([`rank_memories`]).
    pub memories: &'a [BriefingMemory],
    /// The newest summary of another session.
    pub last: Option<&'a Summary>,
    /// Recent observations, newest first.
    pub timeline: &'a [BriefingItem],
    pub economics: Economics,
}

impl Briefing<'_> {
    fn is_empty(&self) -> bool {
        self.memories.is_empty() && self.last.is_none() && self.timeline.is_empty()
    }
}

/// The briefing as Markdown, sized so that wrapped in the sentinel it keeps the budget (and the
/// byte cap); `None` when there is nothing to say or the budget cannot hold the frame.
pub fn markdown(briefing: &Briefing<'_>, options: &ContextOptions) -> Option<String> {
    compose(briefing, options).map(|(text, _)| text)
}

/// [`markdown`], with what it handed: the memories in the order shown, the last session's
/// summary, then the timeline's observations newest first, each with the tokens of its line
/// or block; and how many candidates of the three were left out (by the budget, or as a
/// timeline line that says what a newer one said).
pub fn compose(briefing: &Briefing<'_>, options: &ContextOptions) -> Option<(String, Handed)> {
    if briefing.is_empty() {
        return None;
    }
    let zh = options.zh();
    let t = |en: &'static str, zh_text: &'static str| if zh { zh_text } else { en };
    let header = t(
        "# Memory from earlier sessions in this project (agent-memory)",
        "# 本项目以往会话的记忆（agent-memory）",
    );
    let closing = t(
        "This is background from earlier sessions; if it conflicts with the current conversation, the conversation wins. `agent-memory show <id>` prints any item in full.",
        "以上是以往会话的背景信息；若与当前对话冲突，以当前对话为准。`agent-memory show <id>` 可查看任一条目的全文。",
    );
    // Each block is followed by a blank line; counting every piece with its separator bounds
    // the estimate of the joined text from above (a rounded-up sum is never below the whole).
    let cost = |block: &str| estimate(block) + 1;
    let frame = estimate(&format!("{SENTINEL_OPEN}\n"))
        + estimate(&format!("\n{SENTINEL_CLOSE}"))
        + cost(header)
        + cost(closing);
    let mut left = options.budget_tokens.checked_sub(frame)?;

    let mut memory_budget = left * MEMORY_SHARE_PERCENT / 100;
    let mut handed = Handed::default();
    let memories = memory_sections(briefing.memories, zh, &mut memory_budget, &mut handed.items);
    left -= left * MEMORY_SHARE_PERCENT / 100 - memory_budget;
    // The newest observation keeps its place whatever the last session would take: it is
    // most often that session's own lesson, and the one the timeline gives way last.
    let newest = Timeline::newest_cost(briefing.timeline, options).filter(|c| *c <= left);
    left -= newest.unwrap_or(0);
    let last = briefing.last.and_then(|summary| last_session(summary, options, &mut left));
    // Room for the economics line at its longest (the whole budget as the briefing's size),
    // kept only when the work behind the briefing could be worth saying against the smallest
    // briefing this can still be.
    let smallest = options.budget_tokens - left;
    let reserved = economics_line(&briefing.economics, smallest, zh)
        .map(|_| cost(&economics_text(&briefing.economics, options.budget_tokens, zh)))
        .filter(|reserve| *reserve <= left);
    left += newest.unwrap_or(0);
    let mut timeline = Timeline::fit(briefing.timeline, options, left - reserved.unwrap_or(0));

    let assemble = |timeline: &Timeline, economics: Option<&str>| -> String {
        let mut blocks: Vec<String> = vec![header.to_owned()];
        blocks.extend(memories.iter().cloned());
        blocks.extend(last.iter().cloned());
        if let Some(text) = timeline.render(options) {
            blocks.push(text);
        }
        blocks.extend(economics.map(str::to_owned));
        blocks.push(closing.to_owned());
        blocks.join("\n\n")
    };
    // The economics line names the size of the briefing it is part of, so its figure is
    // settled in a few rounds (each round's line may be a digit longer than the last). `None`
    // when the work behind the briefing is not worth saying against it, or no figure settles.
    let with_economics = |timeline: &Timeline| -> Option<String> {
        let mut size = estimate(&super::wrap(&assemble(timeline, None)));
        for _ in 0..4 {
            let whole = assemble(timeline, Some(&economics_line(&briefing.economics, size, zh)?));
            let settled = estimate(&super::wrap(&whole));
            if round_figure(settled) == round_figure(size) {
                return Some(whole);
            }
            size = settled;
        }
        None
    };
    let render = |timeline: &Timeline, economics: bool| -> String {
        economics
            .then(|| with_economics(timeline))
            .flatten()
            .unwrap_or_else(|| assemble(timeline, None))
    };
    let mut economics = reserved.is_some();
    let mut text = match economics.then(|| with_economics(&timeline)).flatten() {
        Some(text) => text,
        None => {
            if economics {
                // The line is not said after all: its room goes to the timeline.
                economics = false;
                timeline = Timeline::fit(briefing.timeline, options, left);
            }
            assemble(&timeline, None)
        }
    };
    // The sums above bound the estimate; these loops only guard that promise, and the byte cap
    // for budgets set very high.
    while !timeline.items.is_empty()
        && (estimate(&super::wrap(&text)) > options.budget_tokens
            || super::wrap(&text).len() > CONTEXT_MAX_BYTES)
    {
        timeline.items.pop();
        text = render(&timeline, economics);
    }
    let wrapped = super::wrap(&text);
    if estimate(&wrapped) > options.budget_tokens || wrapped.len() > CONTEXT_MAX_BYTES {
        return None;
    }
    let shown_memories = handed.items.len();
    if let (Some(summary), Some(block)) = (briefing.last, &last) {
        handed.items.push((ItemId::Summary(summary.id).to_string(), estimate(block) + 1));
    }
    for placed in &timeline.items {
        let id = ItemId::Observation(placed.item.item.id).to_string();
        handed.items.push((id, estimate(&line(placed, options)) + 1));
    }
    handed.cut = briefing.memories.len() - shown_memories
        + usize::from(briefing.last.is_some() && last.is_none())
        + (briefing.timeline.len() - timeline.items.len());
    Some((text, handed))
}

/// The briefing wrapped in the sentinel, as a hook hands it to an agent.
pub fn session_start_context(briefing: &Briefing<'_>, options: &ContextOptions) -> Option<String> {
    markdown(briefing, options).map(|text| super::wrap(&text))
}

/// The memory sections that fit, one line per memory, in the order of [`MemoryKind::ALL`].
/// Each memory shown goes into `shown` with the tokens of its line.
fn memory_sections(
    memories: &[BriefingMemory],
    zh: bool,
    left: &mut usize,
    shown: &mut Vec<(String, usize)>,
) -> Vec<String> {
    let mut sections = Vec::new();
    for kind in MemoryKind::ALL {
        let heading = kind.heading(zh);
        let mut lines: Vec<String> = Vec::new();
        let mut spent = estimate(heading) + 1;
        for memory in memories.iter().filter(|m| m.kind == kind) {
            let text = clip(&one_line(&memory.text), 300);
            let line = match &memory.by {
                Some(by) => format!("- {text} ({})", one_line(by)),
                None => format!("- {text}"),
            };
            let line = match &memory.stale {
                Some(stale) => format!("{line} ({})", one_line(stale)),
                None => line,
            };
            let line_cost = estimate(&line) + 1;
            if spent + line_cost > *left {
                break;
            }
            spent += line_cost;
            lines.push(line);
            shown.push((ItemId::Memory(memory.id).to_string(), line_cost));
        }
        if !lines.is_empty() {
            *left -= spent;
            sections.push(format!("{heading}\n{}", lines.join("\n")));
        }
    }
    sections
}

/// The most lines each list of the last session shows (done, learned, next steps).
const LAST_SESSION_LINES: usize = 3;

/// The last session's block: who and when, then what was done, what was learned, what is left
/// to do (when anything is) and, last, what was asked, one line each and clipped. Room is
/// given in the order of worth: what was learned, what was done, next steps, the request; the
/// first line that does not fit is left out whole with all worth less, and the block when
/// none fits. A line that only repeats one shown before it is left out too.
fn last_session(summary: &Summary, options: &ContextOptions, left: &mut usize) -> Option<String> {
    let zh = options.zh();
    let title = format!(
        "## {} — {}, {}",
        if zh { "上一次会话" } else { "Last session" },
        summary.agent,
        options.stamp(summary.at_ms)
    );
    let draft = &summary.draft;
    let mut said: Vec<String> = Vec::new();
    let mut list = |items: &[String]| -> Vec<String> {
        let mut lines = Vec::new();
        for item in items.iter().map(|i| one_line(i)).filter(|i| !i.is_empty()) {
            if lines.len() == LAST_SESSION_LINES {
                break;
            }
            if !said.iter().any(|s| repeats(&item, s)) {
                lines.push(format!("- {}", clip_words(&item, 160)));
                said.push(item);
            }
        }
        lines
    };
    // (heading, its lines), in the order they show.
    let mut parts: [(&str, Vec<String>); 4] = [
        (if zh { "已完成：" } else { "Done:" }, list(&draft.completed)),
        (if zh { "学到的：" } else { "Learned:" }, list(&draft.learned)),
        (if zh { "下一步：" } else { "Next steps:" }, list(&draft.next_steps)),
        ("", Vec::new()),
    ];
    let request = one_line(&draft.request);
    if !request.is_empty() && !said.iter().any(|s| repeats(&request, s)) {
        let asked = clip_words(&request, 160);
        parts[3].1.push(if zh { format!("请求：{asked}") } else { format!("Asked: {asked}") });
    }
    let mut spent = estimate(&title) + 1;
    let mut kept: [Vec<String>; 4] = Default::default();
    // The first line that does not fit ends the block: what is worth less never takes the
    // place of what is worth more.
    'fit: for part in [1, 0, 2, 3] {
        let (heading, lines) = &parts[part];
        for line in lines {
            let mut line_cost = estimate(line) + 1;
            if kept[part].is_empty() && !heading.is_empty() {
                line_cost += estimate(heading) + 1;
            }
            if spent + line_cost > *left {
                break 'fit;
            }
            spent += line_cost;
            kept[part].push(line.clone());
        }
    }
    if kept.iter().all(Vec::is_empty) {
        return None;
    }
    *left -= spent;
    let mut out = vec![title];
    for ((heading, _), lines) in parts.iter().zip(kept) {
        if !lines.is_empty() && !heading.is_empty() {
            out.push((*heading).to_owned());
        }
        out.extend(lines);
    }
    Some(out.join("\n"))
}

/// Whether `line` says nothing `before` does not: every term of it is one of `before`'s.
fn repeats(line: &str, before: &str) -> bool {
    let terms = similar::terms(line);
    !terms.is_empty() && terms.is_subset(&similar::terms(before))
}

/// A briefing's economics line is said only when the work behind it is at least this many
/// times the briefing's own size: less is no saving worth a line, given how rough a token
/// estimate is.
const WORTH_SAYING: usize = 2;

/// What the briefing stands for, for a person: `~1,500 tokens here stand for ~42,000 tokens
/// of earlier work (120 observations).` for a briefing of `size` tokens; `None` when there is
/// no work behind it, or too little to be worth saying against its size.
fn economics_line(economics: &Economics, size: usize, zh: bool) -> Option<String> {
    let work = usize::try_from(economics.work_tokens).unwrap_or(0);
    (economics.observations > 0 && work > 0 && work >= size.saturating_mul(WORTH_SAYING))
        .then(|| economics_text(economics, size, zh))
}

/// The economics line's words, whatever its figures.
fn economics_text(economics: &Economics, size: usize, zh: bool) -> String {
    let here = thousands(round_figure(size));
    let work = thousands(round_figure(usize::try_from(economics.work_tokens).unwrap_or(0)));
    let n = thousands(usize::try_from(economics.observations).unwrap_or(0));
    if zh {
        format!("这里约 {here} tokens，代表以往约 {work} tokens 的工作（{n} 条观察）。")
    } else {
        let noun = if economics.observations == 1 { "observation" } else { "observations" };
        format!("~{here} tokens here stand for ~{work} tokens of earlier work ({n} {noun}).")
    }
}

/// A figure as a person reads an estimate: two significant digits from 100 on (`4,237` is
/// `4,200`), exact below.
fn round_figure(n: usize) -> usize {
    if n < 100 {
        return n;
    }
    let step = 10usize.pow(n.ilog10() - 1);
    (n + step / 2) / step * step
}

/// `4200` as `4,200`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `text` in at most `max` characters, cut at a word's end when one is near (else mid-word,
/// as in Chinese, which has no spaces), with `…` for what was cut.
pub(super) fn clip_words(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    // Whole clauses first, the middle given up: the first clause says what happened, the last
    // ones how it ended (the fix, the step to take), so those are the clauses kept.
    let clauses = clauses(text);
    if let Some((first, rest)) = clauses.split_first() {
        let head = first.trim_end_matches(|c: char| c.is_whitespace() || ",;:，；：—".contains(c));
        let mut room = max.saturating_sub(head.chars().count() + 3);
        let mut tail: Vec<&str> = Vec::new();
        for clause in rest.iter().rev() {
            let n = clause.trim().chars().count() + 1;
            if n > room {
                break;
            }
            room -= n;
            tail.push(clause.trim());
        }
        if !tail.is_empty() && head.chars().count() * 4 >= max {
            tail.reverse();
            return format!("{head} … {}", tail.join(" "));
        }
    }
    let kept: String = text.chars().take(max.saturating_sub(1)).collect();
    let cut = match kept.rfind(char::is_whitespace) {
        // A word's end in the last third of what is kept.
        Some(at) if kept[..at].chars().count() * 3 >= max * 2 => &kept[..at],
        _ => kept.as_str(),
    };
    format!("{}…", cut.trim_end_matches(|c: char| c.is_whitespace() || ",;:—-→".contains(c)))
}

/// A text cut after each clause's end (`,` `;` `:` `.` followed by a space, their full-width
/// forms, `—`), each piece keeping its mark.
fn clauses(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        let ends = matches!(c, '，' | '；' | '：' | '。' | '—')
            || matches!(c, ',' | ';' | ':' | '.') && text[end..].starts_with(char::is_whitespace);
        if ends {
            out.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out.retain(|clause| !clause.trim().is_empty());
    out
}

/// The timeline items that fit, newest first, with their day and file.
#[derive(Debug)]
struct Timeline<'a> {
    items: Vec<Placed<'a>>,
    /// Tokens the items take with their title and headings, as [`Timeline::fit`] counts them.
    spent: usize,
}

/// One timeline item with the group it shows under.
#[derive(Debug)]
struct Placed<'a> {
    item: &'a BriefingItem,
    day: String,
    time: String,
}

impl<'a> Timeline<'a> {
    fn title(zh: bool) -> &'static str {
        if zh {
            "## 时间线，按天和文件分组，最新在前（编号、时间、助手、类型、标题 — 教训、阅读所需 tokens）"
        } else {
            "## Timeline by day and file, newest first (id, time, agent, type, title — lesson, ~tokens to read)"
        }
    }

    /// What the newest item costs with the title and headings it brings; `None` without items.
    fn newest_cost(items: &'a [BriefingItem], options: &ContextOptions) -> Option<usize> {
        let newest = Timeline::fit(items.get(..1)?, options, usize::MAX);
        (!newest.items.is_empty()).then_some(newest.spent)
    }

    /// Takes the newest items while their lines, and the day and file headings they bring, fit
    /// in `left` tokens. An item that says what a newer one of its file already said (the same
    /// title and subtitle) is left out: its line would add an id and nothing else.
    fn fit(items: &'a [BriefingItem], options: &ContextOptions, left: usize) -> Timeline<'a> {
        let zh = options.zh();
        let mut kept: Vec<Placed<'a>> = Vec::new();
        let mut spent = estimate(Timeline::title(zh)) + 1;
        let says = |item: &BriefingItem| {
            (item.file.clone(), one_line(&item.item.title).to_lowercase(), one_line(&item.subtitle))
        };
        for item in items {
            if kept.iter().any(|k| says(k.item) == says(item)) {
                continue;
            }
            let stamp = options.stamp(item.item.at_ms);
            let (day, time) = stamp.split_once(' ').unwrap_or((stamp.as_str(), ""));
            let placed = Placed { item, day: day.to_owned(), time: time.to_owned() };
            let mut cost = estimate(&line(&placed, options)) + 1;
            if !kept.iter().any(|k| k.day == placed.day) {
                cost += estimate(&day_heading(&placed.day)) + 1;
            }
            if !kept.iter().any(|k| k.day == placed.day && k.item.file == item.file) {
                cost += estimate(&file_heading(item.file.as_deref(), zh)) + 1;
            }
            if spent + cost > left {
                break;
            }
            spent += cost;
            kept.push(placed);
        }
        Timeline { items: kept, spent }
    }

    /// Days newest first; in each day, files in the order of their newest item; in each file,
    /// items newest first. Items without a file are a group of their own.
    fn render(&self, options: &ContextOptions) -> Option<String> {
        if self.items.is_empty() {
            return None;
        }
        let zh = options.zh();
        let mut out = vec![Timeline::title(zh).to_owned()];
        let mut days: Vec<&str> = Vec::new();
        for placed in &self.items {
            if !days.contains(&placed.day.as_str()) {
                days.push(&placed.day);
            }
        }
        for day in days {
            out.push(day_heading(day));
            let in_day: Vec<&Placed<'_>> = self.items.iter().filter(|p| p.day == day).collect();
            let mut files: Vec<Option<&str>> = Vec::new();
            for placed in &in_day {
                if !files.contains(&placed.item.file.as_deref()) {
                    files.push(placed.item.file.as_deref());
                }
            }
            for file in files {
                out.push(file_heading(file, zh));
                for placed in in_day.iter().filter(|p| p.item.file.as_deref() == file) {
                    out.push(line(placed, options));
                }
            }
        }
        Some(out.join("\n"))
    }
}

fn day_heading(day: &str) -> String {
    format!("### {day}")
}

fn file_heading(file: Option<&str>, zh: bool) -> String {
    match file {
        Some(file) => format!("#### {}", clip(&one_line(file), 120)),
        None => (if zh { "#### （无文件）" } else { "#### (no file)" }).to_owned(),
    }
}

/// An observation's line: its id, time, agent and type, what was learned (the title) and the
/// lesson (the subtitle) when it says more than the title, and what reading it in full costs.
fn line(placed: &Placed<'_>, options: &ContextOptions) -> String {
    let item = &placed.item.item;
    let icon =
        options.icons.iter().find(|(k, _)| *k == item.kind).map_or("•", |(_, e)| e.as_str());
    let title = clip_words(&one_line(&item.title), 100);
    let said = match lesson(placed.item) {
        Some(lesson) => format!("{title} — {}", clip_words(&lesson, 140)),
        None => title,
    };
    // What a later decision replaced is history: said so, so it is never read as current.
    let said = match (placed.item.replaced, options.zh()) {
        (false, _) => said,
        (true, false) => format!("{said} (replaced since by a later decision)"),
        (true, true) => format!("{said}（已被后来的决定取代）"),
    };
    // A file it rests on changed since: it may no longer hold.
    let said = match &placed.item.stale {
        Some(stale) => format!("{said} ({})", one_line(stale)),
        None => said,
    };
    format!("- o{} {} {} {icon} {said} (~{})", item.id, placed.time, item.agent, item.tokens)
}

fn lesson(item: &BriefingItem) -> Option<String> {
    new_lesson(&item.item.title, &item.subtitle, item.file.as_deref())
}

/// A subtitle when it says something its title and file do not: at least two new terms, and
/// at least a third of its terms new. A subtitle that rewords the title is no lesson.
pub(super) fn new_lesson(title: &str, subtitle: &str, file: Option<&str>) -> Option<String> {
    let subtitle = one_line(subtitle);
    let terms = similar::terms(&subtitle);
    let mut known = similar::terms(title);
    known.extend(similar::terms(file.unwrap_or_default()));
    let new = terms.difference(&known).count();
    (new >= 2 && new * 3 >= terms.len()).then_some(subtitle)
}

#[cfg(test)]
pub(crate) mod tests {
    use expect_test::expect;

    use super::*;
    use crate::capture::fence::{strip_injected, wrap};
    use crate::distil::SummaryDraft;
    use crate::store::distilled::TimelineItem;

    /// 2026-12-02 14:33:59 UTC.
    const T0: i64 = 1_796_222_039_561;
    const HOUR: i64 = 3_600_000;

    fn item(id: i64, hours_ago: i64, agent: &str, title: &str, file: Option<&str>) -> BriefingItem {
        BriefingItem {
            item: TimelineItem {
                id,
                at_ms: T0 - hours_ago * HOUR,
                agent: agent.into(),
                kind: if file.is_some() { "bugfix".into() } else { "decision".into() },
                title: title.into(),
                tokens: 40,
                work_tokens: 900,
            },
            file: file.map(str::to_owned),
            subtitle: String::new(),
            replaced: false,
            stale: None,
        }
    }

    pub(crate) fn fixture() -> (Summary, Vec<BriefingItem>, Economics) {
        let summary = Summary {
            id: 7,
            session: "s".into(),
            agent: "codex".into(),
            project: Some("app".into()),
            mode: "code".into(),
            draft: SummaryDraft {
                request: "the parser test fails, please fix it".into(),
                investigated: vec![],
                learned: vec![
                    "`depth` was read in parse_list before it was declared, hence E0425".into(),
                ],
                completed: vec![
                    "declared `depth` before the loop in src/parser.rs".into(),
                    "cargo test -p parser passes (12 tests)".into(),
                ],
                next_steps: vec!["add a regression test for nested lists".into()],
                files_read: vec![],
                files_modified: vec![],
            },
            at_ms: T0,
            through_event_id: 9,
            tokens: 30,
            work_tokens: 3000,
            distiller: "offline".into(),
        };
        let lesson = |mut item: BriefingItem, subtitle: &str| {
            item.subtitle = subtitle.into();
            item
        };
        let timeline = vec![
            lesson(
                item(
                    5,
                    0,
                    "codex",
                    "parse_list read `depth` before declaring it",
                    Some("src/parser.rs"),
                ),
                "depth was undeclared, so `cargo test` failed with E0425 → declared before the loop in src/parser.rs",
            ),
            lesson(
                item(4, 1, "gemini", "Decision: use jiff for every timestamp", None),
                "chrono's time zone API is easy to misuse",
            ),
            // A subtitle that only rewords the title adds nothing to its line.
            lesson(
                item(3, 2, "claude-code", "Studied src/parser.rs", Some("src/parser.rs")),
                "studied parser.rs",
            ),
            item(2, 3, "claude-code", "Changed src/lexer.rs", Some("src/lexer.rs")),
            lesson(
                item(1, 26, "codex", "Added src/export.rs with tests", Some("src/export.rs")),
                "export writes JSONL, one event per line; the tests cover an empty store and a \
                 store of ten thousand events, which is where the streaming writer earns its keep",
            ),
        ];
        let economics = Economics { observations: 12, read_tokens: 480, work_tokens: 9600 };
        (summary, timeline, economics)
    }

    pub(crate) fn options(budget: usize, language: &str) -> ContextOptions {
        ContextOptions {
            budget_tokens: budget,
            language: language.into(),
            icons: vec![("bugfix".into(), "🔴".into()), ("decision".into(), "⚖️".into())],
            time_zone: TimeZone::UTC,
        }
    }

    #[test]
    fn grouped_by_day_then_file_in_english_and_chinese() {
        let (summary, timeline, economics) = fixture();
        let briefing =
            Briefing { memories: &[], last: Some(&summary), timeline: &timeline, economics };
        expect![[r#"
            # Memory from earlier sessions in this project (agent-memory)

            ## Last session — codex, 2026-12-02 14:33
            Done:
            - declared `depth` before the loop in src/parser.rs
            - cargo test -p parser passes (12 tests)
            Learned:
            - `depth` was read in parse_list before it was declared, hence E0425
            Next steps:
            - add a regression test for nested lists
            Asked: the parser test fails, please fix it

            ## Timeline by day and file, newest first (id, time, agent, type, title — lesson, ~tokens to read)
            ### 2026-12-02
            #### src/parser.rs
            - o5 14:33 codex 🔴 parse_list read `depth` before declaring it — depth was undeclared, so `cargo test` failed with E0425 → declared before the loop in src/parser.rs (~40)
            - o3 12:33 claude-code 🔴 Studied src/parser.rs (~40)
            #### (no file)
            - o4 13:33 gemini ⚖️ Decision: use jiff for every timestamp — chrono's time zone API is easy to misuse (~40)
            #### src/lexer.rs
            - o2 11:33 claude-code 🔴 Changed src/lexer.rs (~40)
            ### 2026-12-01
            #### src/export.rs
            - o1 12:33 codex 🔴 Added src/export.rs with tests — export writes JSONL, one event per line; the tests cover an empty store and a store of ten thousand events, which is where the streaming… (~40)

            ~370 tokens here stand for ~9,600 tokens of earlier work (12 observations).

            This is background from earlier sessions; if it conflicts with the current conversation, the conversation wins. `agent-memory show <id>` prints any item in full."#]]
        .assert_eq(&markdown(&briefing, &options(1500, "en")).expect("briefing"));
        expect![[r#"
            # 本项目以往会话的记忆（agent-memory）

            ## 上一次会话 — codex, 2026-12-02 14:33
            已完成：
            - declared `depth` before the loop in src/parser.rs
            - cargo test -p parser passes (12 tests)
            学到的：
            - `depth` was read in parse_list before it was declared, hence E0425
            下一步：
            - add a regression test for nested lists
            请求：the parser test fails, please fix it

            ## 时间线，按天和文件分组，最新在前（编号、时间、助手、类型、标题 — 教训、阅读所需 tokens）
            ### 2026-12-02
            #### src/parser.rs
            - o5 14:33 codex 🔴 parse_list read `depth` before declaring it — depth was undeclared, so `cargo test` failed with E0425 → declared before the loop in src/parser.rs (~40)
            - o3 12:33 claude-code 🔴 Studied src/parser.rs (~40)
            #### （无文件）
            - o4 13:33 gemini ⚖️ Decision: use jiff for every timestamp — chrono's time zone API is easy to misuse (~40)
            #### src/lexer.rs
            - o2 11:33 claude-code 🔴 Changed src/lexer.rs (~40)
            ### 2026-12-01
            #### src/export.rs
            - o1 12:33 codex 🔴 Added src/export.rs with tests — export writes JSONL, one event per line; the tests cover an empty store and a store of ten thousand events, which is where the streaming… (~40)

            这里约 420 tokens，代表以往约 9,600 tokens 的工作（12 条观察）。

            以上是以往会话的背景信息；若与当前对话冲突，以当前对话为准。`agent-memory show <id>` 可查看任一条目的全文。"#]]
        .assert_eq(&markdown(&briefing, &options(1500, "zh-CN")).expect("briefing"));
    }

    #[test]
    fn every_budget_is_kept_exactly_and_the_newest_items_stay() {
        let (summary, _, economics) = fixture();
        let plain: Vec<BriefingItem> = (0..60)
            .map(|i| {
                let file = format!("src/module_{}.rs", i % 7);
                item(
                    100 - i,
                    i,
                    ["codex", "claude-code", "gemini"][i as usize % 3],
                    &format!("Fixed a failure in {file} number {i}"),
                    (i % 4 != 0).then_some(file.as_str()),
                )
            })
            .collect();
        // Every other item with a lesson, some long enough to be clipped, some in Chinese.
        let lessons: Vec<BriefingItem> = plain
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, mut item)| {
                if i % 2 == 0 {
                    let note = ["长一点的中文说明，关于原因和修复。", "a longer note "][i % 4 / 2];
                    item.subtitle = format!(
                        "cause {i}: a value read before it was set → set first; {}",
                        note.repeat(6)
                    );
                }
                item
            })
            .collect();
        let (mut fitted, mut stated) = (0, 0);
        for timeline in [&plain, &lessons] {
            let briefing = Briefing { memories: &[], last: Some(&summary), timeline, economics };
            for budget in (0..2000).step_by(7).chain([100_000]) {
                for language in ["en", "zh-CN"] {
                    let Some(text) = session_start_context(&briefing, &options(budget, language))
                    else {
                        continue;
                    };
                    fitted += 1;
                    let size = estimate(&text);
                    assert!(size <= budget, "budget {budget} {language}: {size}");
                    assert!(
                        text.len() <= CONTEXT_MAX_BYTES,
                        "byte cap at {budget}: {}",
                        text.len()
                    );
                    assert!(text.starts_with(SENTINEL_OPEN) && text.ends_with(SENTINEL_CLOSE));
                    assert!(text.contains("`agent-memory show <id>`"), "the closing line stays");
                    assert_eq!(strip_injected(&text), "", "all of it is stripped when echoed back");
                    // Whatever was cut, the items that stay are the newest.
                    let mut ids: Vec<i64> = text
                        .lines()
                        .filter_map(|l| l.strip_prefix("- o")?.split(' ').next()?.parse().ok())
                        .collect();
                    ids.sort_unstable_by(|a, b| b.cmp(a));
                    assert!(ids.iter().zip(100..).all(|(id, n)| *id == 200 - n), "{ids:?}");
                    // The economics line names the briefing's own size, and only when the work
                    // behind it is at least twice that.
                    if let Some(figure) = economics_figure(&text) {
                        stated += 1;
                        assert_eq!(figure, round_figure(size), "{budget} {language}: {text}");
                        assert!(9600 >= 2 * size, "{budget} {language}");
                    }
                }
            }
        }
        assert!(fitted > 800, "most budgets fit the frame ({fitted})");
        assert!(stated > 400, "the economics line is said where it is worth it ({stated})");
        let briefing =
            |timeline| Briefing { memories: &[], last: Some(&summary), timeline, economics };
        assert!(session_start_context(&briefing(&plain), &options(40, "en")).is_none());
        let big = session_start_context(&briefing(&plain), &options(100_000, "en")).expect("big");
        assert!(big.contains("- o41 "), "a high budget takes every item: {big}");
        let empty = Briefing { memories: &[], last: None, timeline: &[], economics };
        assert!(session_start_context(&empty, &options(1500, "en")).is_none());
    }

    #[test]
    fn the_economics_line_is_said_only_when_the_work_is_worth_it() {
        let figures =
            |observations, work_tokens| Economics { observations, read_tokens: 0, work_tokens };
        let cases = [
            (figures(12, 9600), 370, false),
            (figures(120, 4237), 156, false),
            (figures(1, 1_234_567), 1499, false),
            (figures(12, 9600), 370, true),
            // Twice the briefing's size is the least worth a line.
            (figures(3, 800), 400, false),
            (figures(3, 799), 400, false),
            // Less work than reading costs, none, or nothing observed: nothing to say.
            (figures(2, 65), 156, false),
            (figures(12, 0), 156, false),
            (figures(12, -40), 156, false),
            (figures(0, 9600), 156, false),
        ];
        let said: Vec<String> = cases
            .iter()
            .map(|(economics, size, zh)| {
                economics_line(economics, *size, *zh).unwrap_or_else(|| "-".to_owned())
            })
            .collect();
        expect![[r#"
            ~370 tokens here stand for ~9,600 tokens of earlier work (12 observations).
            ~160 tokens here stand for ~4,200 tokens of earlier work (120 observations).
            ~1,500 tokens here stand for ~1,200,000 tokens of earlier work (1 observation).
            这里约 370 tokens，代表以往约 9,600 tokens 的工作（12 条观察）。
            ~400 tokens here stand for ~800 tokens of earlier work (3 observations).
            -
            -
            -
            -
            -"#]]
        .assert_eq(&said.join("\n"));
        let rounded: Vec<usize> =
            [0, 99, 100, 156, 4237, 9960, 1_234_567].into_iter().map(round_figure).collect();
        assert_eq!(rounded, [0, 99, 100, 160, 4200, 10_000, 1_200_000]);
        assert_eq!([0, 999, 1000, 1_234_567].map(thousands), ["0", "999", "1,000", "1,234,567"]);

        // A briefing bigger than the work behind it says nothing about saving.
        let (summary, timeline, _) = fixture();
        for economics in [figures(5, 65), figures(5, 0), figures(0, 0)] {
            let briefing =
                Briefing { memories: &[], last: Some(&summary), timeline: &timeline, economics };
            for language in ["en", "zh-CN"] {
                let text = markdown(&briefing, &options(1500, language)).expect("briefing");
                assert!(economics_figure(&text).is_none(), "{text}");
                assert!(!text.contains('%') && !text.contains("saved") && !text.contains("节省"));
                assert!(text.contains("- o1 "), "its room goes to the timeline: {text}");
            }
        }
    }

    #[test]
    fn the_last_session_gives_way_from_the_request_up() {
        let (summary, _, _) = fixture();
        let heads = ["Learned:", "Done:", "Next steps:", "Asked:"];
        let mut seen = Vec::new();
        for budget in 0..200 {
            let mut left = budget;
            let Some(block) = last_session(&summary, &options(1500, "en"), &mut left) else {
                continue;
            };
            assert!(estimate(&block) < budget - left + 1, "{budget}: {block}");
            let shown: Vec<bool> = heads.iter().map(|h| block.contains(h)).collect();
            // What was learned goes last, the request first.
            assert!(shown.windows(2).all(|w| w[0] || !w[1]), "{budget}: {block}");
            if !seen.contains(&shown) {
                seen.push(shown);
            }
        }
        assert_eq!(seen.len(), 4, "every stage: {seen:?}");

        let mut bare = summary.clone();
        bare.draft.next_steps.clear();
        bare.draft.learned = vec!["declared `depth` before the loop in src/parser.rs.".into()];
        let mut left = 1000;
        expect![[r#"
            ## Last session — codex, 2026-12-02 14:33
            Done:
            - declared `depth` before the loop in src/parser.rs
            - cargo test -p parser passes (12 tests)
            Asked: the parser test fails, please fix it"#]]
        .assert_eq(&last_session(&bare, &options(1500, "en"), &mut left).expect("block"));
    }

    #[test]
    fn a_lesson_shows_when_it_says_more_than_the_title() {
        let lesson_of = |title: &str, subtitle: &str, file: Option<&str>| {
            let mut item = item(1, 0, "codex", title, file);
            item.subtitle = subtitle.into();
            lesson(&item)
        };
        let title = "apply_discount treated percent as a fraction";
        let said = "percent was a fraction, so 10 meant 1000% → divides by 100 in pricing.py";
        assert_eq!(lesson_of(title, said, Some("pricing.py")).as_deref(), Some(said));
        assert_eq!(
            lesson_of(title, "apply_discount treated the percent as a fraction.", None),
            None
        );
        assert_eq!(
            lesson_of("Studied src/parser.rs", "read parser.rs", Some("src/parser.rs")),
            None
        );
        assert_eq!(lesson_of(title, "", None), None);
        let zh = lesson_of("解析器读取了未声明的变量", "depth 未声明 → 在循环前声明", None);
        assert!(zh.is_some());

        // The same lesson twice in a file shows once, under its newest id.
        let mut twice = vec![
            item(2, 0, "codex", title, Some("pricing.py")),
            item(1, 1, "codex", title, Some("pricing.py")),
        ];
        for item in &mut twice {
            item.subtitle = said.into();
        }
        let text = markdown(
            &Briefing {
                memories: &[],
                last: None,
                timeline: &twice,
                economics: Economics::default(),
            },
            &options(1500, "en"),
        )
        .expect("briefing");
        assert!(text.contains("- o2 ") && !text.contains("- o1 "), "{text}");
    }

    #[test]
    fn clipping_ends_at_a_word() {
        assert_eq!(clip_words("short", 10), "short");
        assert_eq!(
            clip_words("the tests cover an empty store and more", 20),
            "the tests cover an…"
        );
        assert_eq!(clip_words("a → b → c → d → e → f", 12), "a → b → c…");
        assert_eq!(clip_words("长一点的中文说明关于原因和修复", 6), "长一点的中…");
    }

    /// The briefing's size as its economics line states it.
    fn economics_figure(text: &str) -> Option<usize> {
        let line =
            text.lines().find(|l| l.contains(" tokens here ") || l.starts_with("这里约 "))?;
        let figure = line.trim_start_matches(['~', '这', '里', '约', ' ']).split(' ').next()?;
        figure.replace(',', "").parse().ok()
    }

    /// A decision (m7) and a preference (m3).
    fn two_memories() -> [BriefingMemory; 2] {
        let memory = |id, kind, text: &str| BriefingMemory {
            id,
            kind,
            text: text.into(),
            by: None,
            stale: None,
        };
        [
            memory(7, MemoryKind::Decision, "Use jiff, not chrono."),
            memory(3, MemoryKind::Preference, "Answer in short sentences."),
        ]
    }

    #[test]
    fn memory_sections_come_first_in_their_order() {
        let mut memories = two_memories();
        memories[0].stale = Some("src/time.rs changed since 2026-12-01".into());
        let briefing = Briefing {
            memories: &memories,
            last: None,
            timeline: &[],
            economics: Economics::default(),
        };
        expect![[r#"
            # Memory from earlier sessions in this project (agent-memory)

            ## Preferences
            - Answer in short sentences.

            ## Decisions
            - Use jiff, not chrono. (src/time.rs changed since 2026-12-01)

            This is background from earlier sessions; if it conflicts with the current conversation, the conversation wins. `agent-memory show <id>` prints any item in full."#]]
        .assert_eq(&markdown(&briefing, &options(1500, "en")).expect("briefing"));
        assert_eq!(wrap("x").lines().count(), 3);
    }

    /// What a briefing hands is what it shows: memories in the order shown, the last session,
    /// then the timeline; whatever the budget leaves out is counted as cut.
    #[test]
    fn a_briefing_reports_the_items_it_handed_and_what_the_budget_cut() {
        let (summary, timeline, economics) = fixture();
        let memories = two_memories();
        let briefing =
            Briefing { memories: &memories, last: Some(&summary), timeline: &timeline, economics };
        let candidates = memories.len() + 1 + timeline.len();
        for budget in [1500, 400, 250] {
            let Some((text, handed)) = compose(&briefing, &options(budget, "en")) else {
                continue;
            };
            let ids: Vec<&str> = handed.items.iter().map(|(id, _)| id.as_str()).collect();
            let observations: Vec<String> = text
                .lines()
                .filter_map(|line| line.strip_prefix("- o"))
                .map(|rest| format!("o{}", rest.split(' ').next().unwrap_or_default()))
                .collect();
            let memories_shown =
                ["m3", "m7"].into_iter().filter(|id| ids.contains(id)).collect::<Vec<_>>();
            assert_eq!(ids[..memories_shown.len()], memories_shown, "{budget}: {ids:?}");
            assert_eq!(ids.contains(&"s7"), text.contains("## Last session"), "{budget}");
            let mut handed_observations: Vec<String> =
                ids.iter().filter(|id| id.starts_with('o')).map(|id| (*id).to_owned()).collect();
            let mut shown = observations.clone();
            handed_observations.sort();
            shown.sort();
            assert_eq!(handed_observations, shown, "{budget}: {text}");
            assert!(handed.items.iter().all(|(_, tokens)| *tokens > 0));
            let spent: usize = handed.items.iter().map(|(_, tokens)| tokens).sum();
            assert!(spent <= budget, "{budget}: {spent}");
            assert_eq!(handed.cut, candidates - ids.len(), "{budget}: {ids:?}");
            assert_eq!(markdown(&briefing, &options(budget, "en")).as_deref(), Some(text.as_str()));
        }
        let (_, tight) = compose(&briefing, &options(250, "en")).expect("a small briefing");
        assert!(tight.cut > 0, "{tight:?}");
    }

    fn stored(
        id: i64,
        tier: crate::store::memories::Tier,
        kind: crate::store::memories::Kind,
        text: &str,
        (importance, days_old, hits): (u8, i64, i64),
    ) -> crate::store::memories::Memory {
        crate::store::memories::Memory {
            id,
            tier,
            kind,
            text: text.into(),
            project: None,
            project_name: None,
            importance,
            hits,
            last_hit: None,
            created_at: 0,
            updated_at: T0 - days_old * 24 * HOUR,
            status: crate::store::memories::Status::Active,
            superseded_by: None,
            supersedes: None,
            sources: vec![],
            origin: "remembered".into(),
            member: None,
            anchors: None,
            branch: None,
        }
    }

    #[test]
    fn memories_rank_by_importance_freshness_and_hits_60_30_10() {
        use crate::store::memories::{Kind, Status, Tier};
        let weights = MemoryWeights::from_config(&crate::config::InjectConfig::default());
        assert_eq!((weights.importance, weights.freshness, weights.hits), (0.6, 0.3, 0.1));
        let mut forgotten = stored(5, Tier::L2, Kind::Fact, "forgotten", (10, 0, 99));
        forgotten.status = Status::Forgotten;
        let memories = [
            stored(1, Tier::L2, Kind::Fact, "important but a year old", (9, 365, 0)),
            stored(2, Tier::L2, Kind::Fact, "fresh", (5, 0, 0)),
            stored(3, Tier::L2, Kind::Fact, "fresh and found often", (5, 0, 50)),
            stored(4, Tier::L2, Kind::Fact, "fairly important, a month old", (7, 30, 0)),
            forgotten,
            stored(6, Tier::L1, Kind::Fact, "a candidate", (10, 0, 99)),
        ];
        let order = |w: &MemoryWeights| -> Vec<String> {
            rank_memories(&memories, w, T0).into_iter().map(|m| m.text).collect()
        };
        // 0.6×0.5+0.3×1+0.1×0.98 = 0.698; 0.6×0.7+0.3×0.79 = 0.658; 0.6; 0.6×0.9+0.3×0.06 = 0.558.
        assert_eq!(
            order(&weights),
            [
                "fresh and found often",
                "fairly important, a month old",
                "fresh",
                "important but a year old"
            ]
        );
        let importance_only =
            MemoryWeights { importance: 1.0, freshness: 0.0, hits: 0.0, ..weights };
        assert_eq!(order(&importance_only)[0], "important but a year old");
    }

    #[test]
    fn memory_sections_in_both_languages_share_the_budget_with_the_timeline() {
        use crate::store::memories::{Kind, Tier};
        let (summary, timeline, economics) = fixture();
        let stored = [
            stored(
                1,
                Tier::L3,
                Kind::Preference,
                "Answer in short sentences; no emoji.",
                (8, 1, 0),
            ),
            stored(2, Tier::L2, Kind::Fact, "The store is one SQLite file in WAL mode.", (6, 2, 3)),
            stored(
                3,
                Tier::L2,
                Kind::Decision,
                "决定：统一用 jiff 处理时间。原因：chrono 的时区 API 太容易用错。",
                (7, 1, 0),
            ),
            stored(
                4,
                Tier::L2,
                Kind::Convention,
                "Commit messages say what changed and why, in one line.",
                (5, 3, 0),
            ),
            stored(
                5,
                Tier::L2,
                Kind::Problem,
                "`cargo test` failed with E0425 in src/parser.rs; declaring `depth` fixed it.",
                (7, 0, 1),
            ),
        ];
        let weights = MemoryWeights::from_config(&crate::config::InjectConfig::default());
        let memories = rank_memories(&stored, &weights, T0);
        let briefing =
            Briefing { memories: &memories, last: Some(&summary), timeline: &timeline, economics };
        expect![[r#"
            # Memory from earlier sessions in this project (agent-memory)

            ## Preferences
            - Answer in short sentences; no emoji.

            ## Project facts
            - The store is one SQLite file in WAL mode.

            ## Decisions
            - 决定：统一用 jiff 处理时间。原因：chrono 的时区 API 太容易用错。

            ## Conventions
            - Commit messages say what changed and why, in one line.

            ## Solved problems
            - `cargo test` failed with E0425 in src/parser.rs; declaring `depth` fixed it.

            ## Last session — codex, 2026-12-02 14:33
            Done:
            - declared `depth` before the loop in src/parser.rs
            - cargo test -p parser passes (12 tests)
            Learned:
            - `depth` was read in parse_list before it was declared, hence E0425
            Next steps:
            - add a regression test for nested lists
            Asked: the parser test fails, please fix it

            ## Timeline by day and file, newest first (id, time, agent, type, title — lesson, ~tokens to read)
            ### 2026-12-02
            #### src/parser.rs
            - o5 14:33 codex 🔴 parse_list read `depth` before declaring it — depth was undeclared, so `cargo test` failed with E0425 → declared before the loop in src/parser.rs (~40)
            - o3 12:33 claude-code 🔴 Studied src/parser.rs (~40)
            #### (no file)
            - o4 13:33 gemini ⚖️ Decision: use jiff for every timestamp — chrono's time zone API is easy to misuse (~40)
            #### src/lexer.rs
            - o2 11:33 claude-code 🔴 Changed src/lexer.rs (~40)
            ### 2026-12-01
            #### src/export.rs
            - o1 12:33 codex 🔴 Added src/export.rs with tests — export writes JSONL, one event per line; the tests cover an empty store and a store of ten thousand events, which is where the streaming… (~40)

            ~480 tokens here stand for ~9,600 tokens of earlier work (12 observations).

            This is background from earlier sessions; if it conflicts with the current conversation, the conversation wins. `agent-memory show <id>` prints any item in full."#]]
        .assert_eq(&markdown(&briefing, &options(1500, "en")).expect("briefing"));
        expect![[r#"
            # 本项目以往会话的记忆（agent-memory）

            ## 偏好
            - Answer in short sentences; no emoji.

            ## 项目事实
            - The store is one SQLite file in WAL mode.

            ## 决策
            - 决定：统一用 jiff 处理时间。原因：chrono 的时区 API 太容易用错。

            ## 约定
            - Commit messages say what changed and why, in one line.

            ## 已解决的问题
            - `cargo test` failed with E0425 in src/parser.rs; declaring `depth` fixed it.

            ## 上一次会话 — codex, 2026-12-02 14:33
            已完成：
            - declared `depth` before the loop in src/parser.rs
            - cargo test -p parser passes (12 tests)
            学到的：
            - `depth` was read in parse_list before it was declared, hence E0425
            下一步：
            - add a regression test for nested lists
            请求：the parser test fails, please fix it

            ## 时间线，按天和文件分组，最新在前（编号、时间、助手、类型、标题 — 教训、阅读所需 tokens）
            ### 2026-12-02
            #### src/parser.rs
            - o5 14:33 codex 🔴 parse_list read `depth` before declaring it — depth was undeclared, so `cargo test` failed with E0425 → declared before the loop in src/parser.rs (~40)
            - o3 12:33 claude-code 🔴 Studied src/parser.rs (~40)
            #### （无文件）
            - o4 13:33 gemini ⚖️ Decision: use jiff for every timestamp — chrono's time zone API is easy to misuse (~40)
            #### src/lexer.rs
            - o2 11:33 claude-code 🔴 Changed src/lexer.rs (~40)
            ### 2026-12-01
            #### src/export.rs
            - o1 12:33 codex 🔴 Added src/export.rs with tests — export writes JSONL, one event per line; the tests cover an empty store and a store of ten thousand events, which is where the streaming… (~40)

            这里约 520 tokens，代表以往约 9,600 tokens 的工作（12 条观察）。

            以上是以往会话的背景信息；若与当前对话冲突，以当前对话为准。`agent-memory show <id>` 可查看任一条目的全文。"#]]
        .assert_eq(&markdown(&briefing, &options(1500, "zh-CN")).expect("briefing"));
        for budget in (60..1500).step_by(11) {
            for language in ["en", "zh-CN"] {
                if let Some(text) = session_start_context(&briefing, &options(budget, language)) {
                    assert!(estimate(&text) <= budget, "{budget} {language}");
                    // Memory never takes the timeline's whole share.
                    if budget >= 400 {
                        assert!(text.contains("- o5 "), "{budget} {language}: {text}");
                    }
                }
            }
        }
    }
}
