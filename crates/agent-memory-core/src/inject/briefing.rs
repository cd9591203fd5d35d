//! The session-start briefing: what a new session of any agent is told about earlier ones.
//!
//! Here are a project's long-term memories, its last session summary, its recent observations
//! and its token figures, give me Markdown within a budget. In order: the header, memory sections
//! (L3 preferences; the project's facts, decisions, conventions and solved problems), the last
//! session's request and next steps, a timeline of recent observations from every agent grouped
//! by day and then by file, one line of token economics, and the closing rule that the current
//! conversation wins. When the budget is tight the timeline gives way first, then the economics
//! line, the last session and the memories; the header and closing line are the frame, and a
//! budget too small for the frame gets nothing.
//!
//! Must not: read the store (callers gather [`Briefing`]), or exceed the budget by one token as
//! [`crate::tokens::estimate`] counts the final wrapped text.

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::capture::fence::{SENTINEL_CLOSE, SENTINEL_OPEN};
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
    pub kind: MemoryKind,
    /// The statement, at most 300 characters.
    pub text: String,
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

/// How memories are ranked in a briefing (DESIGN.md §4 recall: 60/30/10 by default).
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
        .map(|(_, m)| BriefingMemory { kind: m.kind.into(), text: m.text.clone() })
        .collect()
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
    let memories = memory_sections(briefing.memories, zh, &mut memory_budget);
    left -= left * MEMORY_SHARE_PERCENT / 100 - memory_budget;
    let last = briefing.last.and_then(|summary| last_session(summary, options, &mut left));
    let economics = economics_line(&briefing.economics, zh);
    let economics = (briefing.economics.observations > 0 && cost(&economics) <= left).then(|| {
        left -= cost(&economics);
        economics
    });
    let mut timeline = Timeline::fit(briefing.timeline, options, left);

    let assemble = |timeline: &Timeline| -> String {
        let mut blocks: Vec<String> = vec![header.to_owned()];
        blocks.extend(memories.iter().cloned());
        blocks.extend(last.iter().cloned());
        if let Some(text) = timeline.render(options) {
            blocks.push(text);
        }
        blocks.extend(economics.iter().cloned());
        blocks.push(closing.to_owned());
        blocks.join("\n\n")
    };
    let mut text = assemble(&timeline);
    // The sums above bound the estimate; these loops only guard that promise, and the byte cap
    // for budgets set very high.
    while !timeline.items.is_empty()
        && (estimate(&super::wrap(&text)) > options.budget_tokens
            || super::wrap(&text).len() > CONTEXT_MAX_BYTES)
    {
        timeline.items.pop();
        text = assemble(&timeline);
    }
    let wrapped = super::wrap(&text);
    (estimate(&wrapped) <= options.budget_tokens && wrapped.len() <= CONTEXT_MAX_BYTES)
        .then_some(text)
}

/// The briefing wrapped in the sentinel, as a hook hands it to an agent.
pub fn session_start_context(briefing: &Briefing<'_>, options: &ContextOptions) -> Option<String> {
    markdown(briefing, options).map(|text| super::wrap(&text))
}

/// The memory sections that fit, one line per memory, in the order of [`MemoryKind::ALL`].
fn memory_sections(memories: &[BriefingMemory], zh: bool, left: &mut usize) -> Vec<String> {
    let mut sections = Vec::new();
    for kind in MemoryKind::ALL {
        let heading = kind.heading(zh);
        let mut lines: Vec<String> = Vec::new();
        let mut spent = estimate(heading) + 1;
        for memory in memories.iter().filter(|m| m.kind == kind) {
            let line = format!("- {}", clip(&one_line(&memory.text), 300));
            let line_cost = estimate(&line) + 1;
            if spent + line_cost > *left {
                break;
            }
            spent += line_cost;
            lines.push(line);
        }
        if !lines.is_empty() {
            *left -= spent;
            sections.push(format!("{heading}\n{}", lines.join("\n")));
        }
    }
    sections
}

/// The last session's block: who, when, what was asked and what is left to do; lines that do not
/// fit are left out, and the block with them when not even its first line fits.
fn last_session(summary: &Summary, options: &ContextOptions, left: &mut usize) -> Option<String> {
    let zh = options.zh();
    let title = format!(
        "## {} — {}, {}",
        if zh { "上一次会话" } else { "Last session" },
        summary.agent,
        options.stamp(summary.at_ms)
    );
    let mut lines: Vec<String> = Vec::new();
    if !summary.draft.request.trim().is_empty() {
        let asked = clip(&one_line(&summary.draft.request), 200);
        lines.push(if zh { format!("请求：{asked}") } else { format!("Asked: {asked}") });
    }
    let steps: Vec<&String> =
        summary.draft.next_steps.iter().filter(|s| !s.trim().is_empty()).take(5).collect();
    if !steps.is_empty() {
        lines.push((if zh { "下一步：" } else { "Next steps:" }).to_owned());
        lines.extend(steps.iter().map(|step| format!("- {}", clip(&one_line(step), 200))));
    }
    let mut spent = estimate(&title) + 1;
    let mut kept = Vec::new();
    for line in lines {
        let line_cost = estimate(&line) + 1;
        if spent + line_cost > *left {
            break;
        }
        spent += line_cost;
        kept.push(line);
    }
    // A heading for next steps with none of them under it says nothing.
    if kept.last().is_some_and(|l| l == "Next steps:" || l == "下一步：") {
        let dropped = kept.pop().unwrap_or_default();
        spent -= estimate(&dropped) + 1;
    }
    if kept.is_empty() {
        return None;
    }
    *left -= spent;
    Some(format!("{title}\n{}", kept.join("\n")))
}

fn economics_line(economics: &Economics, zh: bool) -> String {
    let (n, read, work, saved) = (
        economics.observations,
        economics.read_tokens,
        economics.work_tokens,
        economics.saved_percent(),
    );
    if zh {
        format!(
            "共 {n} 条观察：阅读约 {read} tokens，其背后的工作约 {work} tokens（节省 {saved}%）。"
        )
    } else {
        let noun = if n == 1 { "observation" } else { "observations" };
        format!(
            "{n} {noun} in all: ~{read} tokens to read, ~{work} tokens of work behind them ({saved}% saved)."
        )
    }
}

/// The timeline items that fit, newest first, with their day and file.
#[derive(Debug)]
struct Timeline<'a> {
    items: Vec<Placed<'a>>,
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
            "## 时间线，按天和文件分组，最新在前（编号、时间、助手、类型、标题、阅读所需 tokens）"
        } else {
            "## Timeline by day and file, newest first (id, time, agent, type, title, ~tokens to read)"
        }
    }

    /// Takes the newest items while their lines, and the day and file headings they bring, fit
    /// in `left` tokens.
    fn fit(items: &'a [BriefingItem], options: &ContextOptions, left: usize) -> Timeline<'a> {
        let zh = options.zh();
        let mut kept: Vec<Placed<'a>> = Vec::new();
        let mut spent = estimate(Timeline::title(zh)) + 1;
        for item in items {
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
        Timeline { items: kept }
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

fn line(placed: &Placed<'_>, options: &ContextOptions) -> String {
    let item = &placed.item.item;
    let icon =
        options.icons.iter().find(|(k, _)| *k == item.kind).map_or("•", |(_, e)| e.as_str());
    format!(
        "- o{} {} {} {icon} {} (~{})",
        item.id,
        placed.time,
        item.agent,
        clip(&one_line(&item.title), 120),
        item.tokens
    )
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
                learned: vec![],
                completed: vec![],
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
        let timeline = vec![
            item(
                5,
                0,
                "codex",
                "Fixed `cargo test` failure in src/parser.rs",
                Some("src/parser.rs"),
            ),
            item(4, 1, "gemini", "Decision: use jiff for every timestamp", None),
            item(3, 2, "claude-code", "Studied src/parser.rs", Some("src/parser.rs")),
            item(2, 3, "claude-code", "Changed src/lexer.rs", Some("src/lexer.rs")),
            item(1, 26, "codex", "Added src/export.rs with tests", Some("src/export.rs")),
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
            Asked: the parser test fails, please fix it
            Next steps:
            - add a regression test for nested lists

            ## Timeline by day and file, newest first (id, time, agent, type, title, ~tokens to read)
            ### 2026-12-02
            #### src/parser.rs
            - o5 14:33 codex 🔴 Fixed `cargo test` failure in src/parser.rs (~40)
            - o3 12:33 claude-code 🔴 Studied src/parser.rs (~40)
            #### (no file)
            - o4 13:33 gemini ⚖️ Decision: use jiff for every timestamp (~40)
            #### src/lexer.rs
            - o2 11:33 claude-code 🔴 Changed src/lexer.rs (~40)
            ### 2026-12-01
            #### src/export.rs
            - o1 12:33 codex 🔴 Added src/export.rs with tests (~40)

            12 observations in all: ~480 tokens to read, ~9600 tokens of work behind them (95% saved).

            This is background from earlier sessions; if it conflicts with the current conversation, the conversation wins. `agent-memory show <id>` prints any item in full."#]]
        .assert_eq(&markdown(&briefing, &options(1500, "en")).expect("briefing"));
        expect![[r#"
            # 本项目以往会话的记忆（agent-memory）

            ## 上一次会话 — codex, 2026-12-02 14:33
            请求：the parser test fails, please fix it
            下一步：
            - add a regression test for nested lists

            ## 时间线，按天和文件分组，最新在前（编号、时间、助手、类型、标题、阅读所需 tokens）
            ### 2026-12-02
            #### src/parser.rs
            - o5 14:33 codex 🔴 Fixed `cargo test` failure in src/parser.rs (~40)
            - o3 12:33 claude-code 🔴 Studied src/parser.rs (~40)
            #### （无文件）
            - o4 13:33 gemini ⚖️ Decision: use jiff for every timestamp (~40)
            #### src/lexer.rs
            - o2 11:33 claude-code 🔴 Changed src/lexer.rs (~40)
            ### 2026-12-01
            #### src/export.rs
            - o1 12:33 codex 🔴 Added src/export.rs with tests (~40)

            共 12 条观察：阅读约 480 tokens，其背后的工作约 9600 tokens（节省 95%）。

            以上是以往会话的背景信息；若与当前对话冲突，以当前对话为准。`agent-memory show <id>` 可查看任一条目的全文。"#]]
        .assert_eq(&markdown(&briefing, &options(1500, "zh-CN")).expect("briefing"));
    }

    #[test]
    fn every_budget_is_kept_exactly_and_the_newest_items_stay() {
        let (summary, _, economics) = fixture();
        let many: Vec<BriefingItem> = (0..60)
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
        let briefing = Briefing { memories: &[], last: Some(&summary), timeline: &many, economics };
        let mut fitted = 0;
        for budget in (0..2000).step_by(7).chain([100_000]) {
            for language in ["en", "zh-CN"] {
                let Some(text) = session_start_context(&briefing, &options(budget, language))
                else {
                    continue;
                };
                fitted += 1;
                assert!(
                    estimate(&text) <= budget,
                    "budget {budget} {language}: {}",
                    estimate(&text)
                );
                assert!(text.len() <= CONTEXT_MAX_BYTES, "byte cap at {budget}: {}", text.len());
                assert!(text.starts_with(SENTINEL_OPEN) && text.ends_with(SENTINEL_CLOSE));
                assert!(text.contains("`agent-memory show <id>`"), "the closing line stays");
                assert_eq!(strip_injected(&text), "", "all of it is stripped when echoed back");
                // Whatever was cut, the newest observation is the first to stay.
                if text.contains("- o") {
                    assert!(text.contains("- o100 "), "{text}");
                }
            }
        }
        assert!(fitted > 400, "most budgets fit the frame ({fitted})");
        assert!(session_start_context(&briefing, &options(40, "en")).is_none());
        let big = session_start_context(&briefing, &options(100_000, "en")).expect("big");
        assert!(big.contains("- o41 "), "a high budget takes every item: {big}");
        let empty = Briefing { memories: &[], last: None, timeline: &[], economics };
        assert!(session_start_context(&empty, &options(1500, "en")).is_none());
    }

    #[test]
    fn memory_sections_come_first_in_their_order() {
        let memories = [
            BriefingMemory { kind: MemoryKind::Decision, text: "Use jiff, not chrono.".into() },
            BriefingMemory {
                kind: MemoryKind::Preference,
                text: "Answer in short sentences.".into(),
            },
        ];
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
            - Use jiff, not chrono.

            This is background from earlier sessions; if it conflicts with the current conversation, the conversation wins. `agent-memory show <id>` prints any item in full."#]]
        .assert_eq(&markdown(&briefing, &options(1500, "en")).expect("briefing"));
        assert_eq!(wrap("x").lines().count(), 3);
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
            Asked: the parser test fails, please fix it
            Next steps:
            - add a regression test for nested lists

            ## Timeline by day and file, newest first (id, time, agent, type, title, ~tokens to read)
            ### 2026-12-02
            #### src/parser.rs
            - o5 14:33 codex 🔴 Fixed `cargo test` failure in src/parser.rs (~40)
            - o3 12:33 claude-code 🔴 Studied src/parser.rs (~40)
            #### (no file)
            - o4 13:33 gemini ⚖️ Decision: use jiff for every timestamp (~40)
            #### src/lexer.rs
            - o2 11:33 claude-code 🔴 Changed src/lexer.rs (~40)
            ### 2026-12-01
            #### src/export.rs
            - o1 12:33 codex 🔴 Added src/export.rs with tests (~40)

            12 observations in all: ~480 tokens to read, ~9600 tokens of work behind them (95% saved).

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
            请求：the parser test fails, please fix it
            下一步：
            - add a regression test for nested lists

            ## 时间线，按天和文件分组，最新在前（编号、时间、助手、类型、标题、阅读所需 tokens）
            ### 2026-12-02
            #### src/parser.rs
            - o5 14:33 codex 🔴 Fixed `cargo test` failure in src/parser.rs (~40)
            - o3 12:33 claude-code 🔴 Studied src/parser.rs (~40)
            #### （无文件）
            - o4 13:33 gemini ⚖️ Decision: use jiff for every timestamp (~40)
            #### src/lexer.rs
            - o2 11:33 claude-code 🔴 Changed src/lexer.rs (~40)
            ### 2026-12-01
            #### src/export.rs
            - o1 12:33 codex 🔴 Added src/export.rs with tests (~40)

            共 12 条观察：阅读约 480 tokens，其背后的工作约 9600 tokens（节省 95%）。

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
