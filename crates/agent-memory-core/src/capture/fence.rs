//! The fence around injected context: the sentinel that wraps every block agent-memory hands an
//! agent, and the stripping that takes such blocks out of whatever comes back.
//!
//! Agents echo injected context back (Gemini copies it into later prompts, Claude and Codex
//! write it into transcripts, Hermes replays it), so capture's sanitizer strips every fenced span
//! before anything is stored: recalled memory is never re-captured as new. Inject wraps what it
//! answers with [`wrap`]; both sides use this one module so the two can never disagree.
//!
//! Must not: depend on any other module (adapter, capture and inject all use it), allocate when
//! there is nothing to strip, or panic on any input.

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
pub fn drop_spans(text: &str, open: &str, close: &str) -> String {
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

    #[test]
    fn unclosed_sentinel_drops_the_rest() {
        assert_eq!(strip_injected("keep <agent-memory-context> recalled text"), "keep");
    }
}
