//! Inject: what agent-memory hands back to agents.
//!
//! Owns the session-start context (the last session's open ends, a timeline of recent
//! observations from every agent, one line of token economics, and the rule that the current
//! conversation wins), kept within a token budget; and the sentinel that wraps everything
//! agent-memory injects, with the function that strips it again. Agents echo injected context back (Gemini copies it into later
//! prompts, Claude and Codex write it into transcripts, Hermes replays it), so capture removes
//! every sentinel span before storing anything: recalled memory is never re-captured as new.

use std::borrow::Cow;

/// Opens every block of context agent-memory injects.
pub const SENTINEL_OPEN: &str = "<agent-memory-context>";
/// Closes it.
pub const SENTINEL_CLOSE: &str = "</agent-memory-context>";

/// Wraps `text` in the sentinel.
pub fn wrap(text: &str) -> String {
    format!("{SENTINEL_OPEN}\n{text}\n{SENTINEL_CLOSE}")
}

/// Removes every sentinel span from `text`, with the agent wrappers it leaves empty.
///
/// An opening sentinel without a close drops the rest of the text: an agent that cut our block
/// short still must not have it re-captured.
pub fn strip_injected(text: &str) -> Cow<'_, str> {
    if !text.contains(SENTINEL_OPEN) && !text.contains(SENTINEL_CLOSE) {
        return Cow::Borrowed(text);
    }
    let out = drop_spans(text, SENTINEL_OPEN, SENTINEL_CLOSE);
    // A stray close tag (the open was cut off by the agent) goes too.
    let out = out.replace(SENTINEL_CLOSE, "");
    Cow::Owned(remove_empty_wrappers(&out).trim().to_owned())
}

/// Removes every `open`…`close` span of `text`, tags included; an `open` without a `close`
/// drops the rest of the text.
pub(crate) fn drop_spans(text: &str, open: &str, close: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(open) {
        out.push_str(&rest[..start]);
        let after = &rest[start + open.len()..];
        match after.find(close) {
            Some(end) => rest = &after[end + close.len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The wrappers agents put around hook context; once our block is gone they are empty noise.
const WRAPPERS: &[(&str, &str)] = &[
    ("<hook_context>", "</hook_context>"),
    ("<system-reminder>", "</system-reminder>"),
    ("<system_reminder>", "</system_reminder>"),
    ("<memory-context>", "</memory-context>"),
];

fn remove_empty_wrappers(text: &str) -> String {
    let mut out = text.to_owned();
    for (open, close) in WRAPPERS {
        let mut search_from = 0;
        while let Some(rel) = out[search_from..].find(open) {
            let start = search_from + rel;
            let inner_start = start + open.len();
            let Some(close_rel) = out[inner_start..].find(close) else { break };
            let inner = &out[inner_start..inner_start + close_rel];
            if is_empty_wrapper_body(inner) {
                out.replace_range(start..inner_start + close_rel + close.len(), "");
                search_from = start;
            } else {
                search_from = inner_start;
            }
        }
    }
    out
}

/// A wrapper body is empty when only whitespace or an agent's label for hook output is left
/// (Claude writes `SessionStart hook additional context:` before the text; Hermes a system note).
fn is_empty_wrapper_body(inner: &str) -> bool {
    let t = inner.trim();
    t.is_empty()
        || (t.ends_with("hook additional context:") && !t.contains('\n'))
        || (t.starts_with("[System note:") && t.ends_with(']') && !t.contains('\n'))
}

/// How the session-start context is written.
#[derive(Debug, Clone)]
pub struct ContextOptions<'a> {
    /// At most this many tokens, sentinel included ([`crate::tokens::estimate`]).
    pub budget_tokens: usize,
    /// `en` or `zh-CN`.
    pub language: &'a str,
    /// Emoji per observation type, from the mode in use.
    pub icons: &'a [(String, String)],
}

/// The most a context may be in bytes: Claude Code cuts longer hook context to a preview.
pub const CONTEXT_MAX_BYTES: usize = 8 * 1024;

/// Recent observations the timeline considers, before the budget cuts it.
pub const TIMELINE_CANDIDATES: usize = 60;

/// The context a new session of any agent starts with, wrapped in the sentinel; `None` when
/// the project has nothing distilled yet.
pub fn session_start_context(
    last: Option<&crate::store::distilled::Summary>,
    timeline: &[crate::store::distilled::TimelineItem],
    options: &ContextOptions<'_>,
) -> Option<String> {
    if last.is_none() && timeline.is_empty() {
        return None;
    }
    let zh = options.language.starts_with("zh");
    let t = |en: &'static str, zh_text: &'static str| if zh { zh_text } else { en };
    let header = t(
        "# Memory from earlier sessions in this project (agent-memory)",
        "# 本项目以往会话的记忆（agent-memory）",
    );
    let closing = t(
        "This is background from earlier sessions; if it conflicts with the current conversation, the conversation wins. `agent-memory show <id>` prints any item in full.",
        "以上是以往会话的背景信息；若与当前对话冲突，以当前对话为准。`agent-memory show <id>` 可查看任一条目的全文。",
    );
    let read: i64 = timeline.iter().map(|i| i.tokens).sum();
    let work: i64 = timeline.iter().map(|i| i.work_tokens).sum();
    let saved = if work > 0 { 100 - (read * 100 / work).min(100) } else { 0 };
    let economics = if zh {
        format!(
            "{} 条观察：阅读约 {read} tokens，其背后的工作约 {work} tokens（节省 {saved}%）。",
            timeline.len()
        )
    } else {
        format!(
            "{} observations: ~{read} tokens to read, ~{work} tokens of work behind them ({saved}% saved).",
            timeline.len()
        )
    };

    let mut blocks: Vec<String> = vec![header.to_owned()];
    if let Some(summary) = last {
        let mut block = format!(
            "## {} — {}, {}\n",
            t("Last session", "上一次会话"),
            summary.agent,
            crate::time::format_local(summary.at_ms)
        );
        if !summary.draft.request.is_empty() {
            block.push_str(&format!(
                "{} {}\n",
                t("Asked:", "请求："),
                crate::text::clip(&summary.draft.request, 200)
            ));
        }
        if !summary.draft.next_steps.is_empty() {
            block.push_str(t("Next steps:\n", "下一步：\n"));
            for step in summary.draft.next_steps.iter().take(5) {
                block.push_str(&format!("- {}\n", crate::text::clip(step, 200)));
            }
        }
        blocks.push(block.trim_end().to_owned());
    }
    let fixed = [header, closing, economics.as_str()]
        .iter()
        .map(|s| crate::tokens::estimate(s))
        .sum::<usize>()
        + crate::tokens::estimate(SENTINEL_OPEN)
        + crate::tokens::estimate(SENTINEL_CLOSE)
        + blocks.iter().skip(1).map(|b| crate::tokens::estimate(b)).sum::<usize>();
    // A budget too small for the frame says nothing rather than break its promise.
    if fixed > options.budget_tokens {
        return None;
    }
    let mut left = options.budget_tokens - fixed;
    let mut lines: Vec<String> = Vec::new();
    let mut day = String::new();
    let timeline_title = t(
        "## Timeline, newest first (id, time, agent, type, title, tokens to read)",
        "## 时间线，最新在前（编号、时间、助手、类型、标题、阅读所需 tokens）",
    );
    left = left.saturating_sub(crate::tokens::estimate(timeline_title));
    for item in timeline {
        let stamp = crate::time::format_local(item.at_ms);
        let (date, time) = stamp.split_once(' ').unwrap_or((stamp.as_str(), ""));
        let icon =
            options.icons.iter().find(|(k, _)| *k == item.kind).map_or("•", |(_, e)| e.as_str());
        let mut text = String::new();
        if date != day {
            text.push_str(&format!("### {date}\n"));
        }
        text.push_str(&format!(
            "- o{} {time} {} {icon} {} (~{})",
            item.id,
            item.agent,
            crate::text::clip(&item.title, 120),
            item.tokens
        ));
        let cost = crate::tokens::estimate(&text);
        if cost > left {
            break;
        }
        left -= cost;
        day = date.to_owned();
        lines.push(text);
    }
    if !lines.is_empty() {
        blocks.push(format!("{timeline_title}\n{}", lines.join("\n")));
    }
    blocks.push(economics);
    blocks.push(closing.to_owned());
    let mut text = wrap(&blocks.join("\n\n"));
    // The byte cap is a backstop for budgets set very high; cut whole timeline lines.
    while text.len() > CONTEXT_MAX_BYTES && !lines.is_empty() {
        lines.pop();
        let keep = blocks.len() - 3;
        blocks[keep] = format!("{timeline_title}\n{}", lines.join("\n"));
        text = wrap(&blocks.join("\n\n"));
    }
    Some(text)
}

/// The hook's answer carrying `context`, in the agent's own protocol; `None` for agents whose
/// protocol takes no injected context from a shell hook.
pub fn answer(agent: &str, event_name: &str, context: &str) -> Option<String> {
    let value = match agent {
        // Claude Code, Gemini CLI and Codex take the same shape; Codex drops any output with a
        // key outside its schema, so nothing else may be added.
        "claude-code" | "gemini" | "codex" => serde_json::json!({
            "hookSpecificOutput": { "hookEventName": event_name, "additionalContext": context }
        }),
        "copilot" => serde_json::json!({ "additionalContext": context }),
        "hermes" => serde_json::json!({ "context": context }),
        _ => return None,
    };
    Some(value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_gemini_echo_of_session_start_context() {
        let prompt = format!(
            "<hook_context>{}</hook_context>\n\nRun the tests.",
            wrap("timeline: 3 observations")
        );
        assert_eq!(strip_injected(&prompt), "Run the tests.");
    }

    #[test]
    fn strips_claude_system_reminder() {
        let text = format!(
            "<system-reminder>\nSessionStart hook additional context: {}\n</system-reminder>\nhello",
            wrap("x")
        );
        assert_eq!(strip_injected(&text), "hello");
    }

    #[test]
    fn keeps_wrappers_with_other_content_and_plain_text() {
        assert_eq!(strip_injected("plain"), "plain");
        let text = format!("<hook_context>other hook {}</hook_context> tail", wrap("x"));
        assert_eq!(strip_injected(&text), "<hook_context>other hook </hook_context> tail");
    }

    fn timeline(n: usize) -> Vec<crate::store::distilled::TimelineItem> {
        (0..n)
            .map(|i| crate::store::distilled::TimelineItem {
                id: i as i64 + 1,
                at_ms: 1_796_222_039_561 - i as i64 * 3_600_000,
                agent: ["codex", "claude-code", "gemini"][i % 3].into(),
                kind: "bugfix".into(),
                title: format!("Fixed `cargo test -p crate{i}` failure in src/lib{i}.rs"),
                tokens: 40,
                work_tokens: 900,
            })
            .collect()
    }

    #[test]
    fn the_session_start_context_keeps_its_budget_and_its_closing_line() {
        let icons = vec![("bugfix".to_owned(), "🔴".to_owned())];
        let items = timeline(60);
        assert!(
            session_start_context(
                None,
                &[],
                &ContextOptions { budget_tokens: 1500, language: "en", icons: &icons }
            )
            .is_none()
        );
        for budget in [150, 400, 1500, 100_000] {
            let options = ContextOptions { budget_tokens: budget, language: "en", icons: &icons };
            let text = session_start_context(None, &items, &options).expect("context");
            assert!(crate::tokens::estimate(&text) <= budget, "budget {budget}");
            assert!(text.len() <= CONTEXT_MAX_BYTES, "byte cap at budget {budget}: {}", text.len());
            assert!(text.starts_with(SENTINEL_OPEN) && text.ends_with(SENTINEL_CLOSE));
            assert!(text.contains("the conversation wins"));
            assert_eq!(strip_injected(&text), "", "all of it is stripped when echoed back");
        }
        let options = ContextOptions { budget_tokens: 1500, language: "en", icons: &icons };
        let text = session_start_context(None, &items, &options).expect("context");
        assert!(
            text.contains("- o1 ") && text.contains("🔴 Fixed `cargo test -p crate0`"),
            "{text}"
        );
        let zh = ContextOptions { budget_tokens: 1500, language: "zh-CN", icons: &icons };
        assert!(
            session_start_context(None, &items, &zh).expect("context").contains("以当前对话为准")
        );
    }

    #[test]
    fn answers_follow_each_agents_protocol() {
        let claude = answer("claude-code", "SessionStart", "ctx").expect("claude");
        assert_eq!(
            claude,
            r#"{"hookSpecificOutput":{"additionalContext":"ctx","hookEventName":"SessionStart"}}"#
        );
        assert_eq!(
            answer("copilot", "sessionStart", "ctx").as_deref(),
            Some(r#"{"additionalContext":"ctx"}"#)
        );
        assert_eq!(
            answer("hermes", "on_session_start", "ctx").as_deref(),
            Some(r#"{"context":"ctx"}"#)
        );
        assert_eq!(answer("someone-else", "start", "ctx"), None);
    }

    #[test]
    fn unclosed_sentinel_drops_the_rest() {
        assert_eq!(strip_injected("keep <agent-memory-context> recalled text"), "keep");
    }
}
