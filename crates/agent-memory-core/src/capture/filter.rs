//! The three noise filters of capture, in the order they run:
//! 1. too short to matter (a prompt of a character or two, a tool use with next to no text);
//! 2. low-value signals (the agent's own meta-tools, empty listings, bare exit codes of no-op
//!    commands, usage banners the agent asked for);
//! 3. near-duplicates of a recent event of the same session (decided inside the store's write
//!    transaction, with [`is_near_duplicate`]).
//!
//! Lifecycle events (session start, stop, session end) are never filtered: they carry the
//! session's shape. Must not: touch the store or the disk.

use sha2::{Digest, Sha256};

use crate::config::FilterConfig;
use crate::event::{Event, EventKind, ToolKind};
use crate::store::RecentEvent;

/// Which filter dropped an event; the names are what `status` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    TooShort,
    LowValue,
    NearDuplicate,
}

impl Layer {
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::TooShort => "too_short",
            Layer::LowValue => "low_value",
            Layer::NearDuplicate => "near_duplicate",
        }
    }
}

/// Layers 1 and 2: `Some(layer)` when the event is noise.
pub fn screen(event: &Event, config: &FilterConfig) -> Option<Layer> {
    if event.kind.is_lifecycle() {
        return None;
    }
    match event.kind {
        EventKind::Prompt => {
            let prompt = text_field(event, "prompt").unwrap_or(&event.body);
            (prompt.trim().chars().count() < config.min_prompt_chars).then_some(Layer::TooShort)
        }
        EventKind::ToolUse => {
            if config.low_value && is_meta_tool(event, config) {
                return Some(Layer::LowValue);
            }
            let input = input_text(event);
            let output = text_field(event, "output").unwrap_or("").trim();
            if input.trim().chars().count() + output.chars().count() < config.min_tool_chars {
                return Some(Layer::TooShort);
            }
            (config.low_value && is_low_value_tool_use(event, input, output))
                .then_some(Layer::LowValue)
        }
        _ => None,
    }
}

fn text_field<'a>(event: &'a Event, key: &str) -> Option<&'a str> {
    event.payload.get(key).and_then(|v| v.as_str())
}

/// What the tool was given, as one line: the command a shell ran, else the adapter's line about
/// the call (its summary: tool, files or arguments).
fn input_text(event: &Event) -> &str {
    event.facts.command.as_deref().unwrap_or(&event.summary)
}

fn is_meta_tool(event: &Event, config: &FilterConfig) -> bool {
    let Some(tool) = event.tool.as_deref() else { return false };
    if event.tool_kind == Some(ToolKind::Meta) {
        return true;
    }
    config.meta_tools.iter().any(|pattern| match pattern.strip_suffix('*') {
        Some(prefix) => {
            tool.len() >= prefix.len() && tool[..prefix.len()].eq_ignore_ascii_case(prefix)
        }
        None => tool.eq_ignore_ascii_case(pattern),
    })
}

fn is_low_value_tool_use(event: &Event, input: &str, output: &str) -> bool {
    let is_error = event.facts.failed;
    let first_word = input.split_whitespace().next().unwrap_or("");
    let program = first_word.rsplit('/').next().unwrap_or(first_word);
    let listing = matches!(event.tool_kind, Some(ToolKind::Search))
        || matches!(program, "ls" | "dir" | "find" | "fd" | "tree" | "exa" | "eza");
    if listing && !is_error && is_empty_listing(output) {
        return true;
    }
    let no_op =
        matches!(program, "cd" | "pwd" | "true" | ":" | "clear" | "export" | "source" | ".");
    if no_op && is_bare_exit_code(output) {
        return true;
    }
    let asked_for_help =
        input.split_whitespace().skip(1).any(|w| matches!(w, "--help" | "-h" | "help"));
    asked_for_help && output.trim_start().to_ascii_lowercase().starts_with("usage")
}

fn is_empty_listing(output: &str) -> bool {
    let o = output.trim().to_ascii_lowercase();
    o.is_empty()
        || o == "total 0"
        || o.starts_with("no files found")
        || o.starts_with("no matches found")
        || o == "(no matches)"
        || o == "[]"
        || o == "directory is empty"
}

/// An output that says nothing but how a process ended: ``, `0`, `Exit code: 0`, `exit status 0`.
fn is_bare_exit_code(output: &str) -> bool {
    let o = output.trim().to_ascii_lowercase();
    let rest = ["process exited with code", "exited with code", "exit code", "exit status"]
        .iter()
        .find_map(|prefix| o.strip_prefix(prefix))
        .unwrap_or(&o);
    let rest = rest.trim_start_matches(':').trim();
    rest.is_empty() || rest.chars().all(|c| c.is_ascii_digit())
}

/// A fingerprint of what an event says, blind to case, white space and numbers (timestamps,
/// pids, durations), so that two runs of the same thing compare equal.
pub fn fingerprint(event: &Event) -> String {
    let is_error = event.facts.failed;
    let mut hasher = Sha256::new();
    hasher.update(event.kind.as_str());
    hasher.update([0]);
    hasher.update(event.tool.as_deref().unwrap_or(""));
    hasher.update([0, u8::from(is_error), 0]);
    fold_into(&event.body, &mut hasher);
    crate::text::hex(&hasher.finalize()[..16])
}

/// Hashes `text` folded: lowercase, each run of white space one space and each run of digits
/// one `0`, without white space at either end. Fed through a buffer on the stack, since every
/// event stored is fingerprinted.
fn fold_into(text: &str, hasher: &mut Sha256) {
    let mut buffer = [0u8; 1024];
    let mut filled = 0;
    // As if a space came before the text, so none begins it.
    let mut last = ' ';
    // A space is written only once something follows it, so none ends it.
    let mut space = false;
    for c in text.chars() {
        let c = if c.is_whitespace() {
            ' '
        } else if c.is_ascii_digit() {
            '0'
        } else if c.is_ascii() {
            c.to_ascii_lowercase()
        } else {
            c.to_lowercase().next().unwrap_or(c)
        };
        if (c == ' ' || c == '0') && c == last {
            continue;
        }
        last = c;
        if c == ' ' {
            space = true;
            continue;
        }
        if filled + 8 > buffer.len() {
            hasher.update(&buffer[..filled]);
            filled = 0;
        }
        if std::mem::take(&mut space) {
            buffer[filled] = b' ';
            filled += 1;
        }
        filled += c.encode_utf8(&mut buffer[filled..]).len();
    }
    hasher.update(&buffer[..filled]);
}

/// Layer 3: is `event` (with its `fingerprint`) a near-duplicate of the stored `recent` one?
/// Prompts also match on word overlap (a prompt re-sent with a small edit); tool uses only on
/// the fingerprint, so a failing and a passing run of one command always both stay.
pub fn is_near_duplicate(
    event: &Event,
    fingerprint: &str,
    recent: &RecentEvent,
    config: &FilterConfig,
) -> bool {
    if event.kind.is_lifecycle() || recent.kind != event.kind.as_str() {
        return false;
    }
    if recent.content_hash == fingerprint {
        return true;
    }
    event.kind == EventKind::Prompt
        && word_overlap(&event.body, &recent.body) >= config.dedupe_similarity
}

/// Jaccard overlap of the two texts' word sets.
fn word_overlap(a: &str, b: &str) -> f64 {
    use std::collections::HashSet;
    let words = |t: &str| -> HashSet<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (a, b) = (words(a), words(b));
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    a.intersection(&b).count() as f64 / a.union(&b).count() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Sensitivity;
    use serde_json::json;

    fn tool_use(tool: &str, kind: ToolKind, command: &str, output: &str) -> Event {
        Event {
            uid: "u".into(),
            agent: "claude-code".into(),
            kind: EventKind::ToolUse,
            source_event: "PostToolUse".into(),
            session: "s".into(),
            cwd: None,
            at_ms: 0,
            tool: Some(tool.into()),
            tool_kind: Some(kind),
            summary: format!("{tool}: {command}"),
            body: format!("{command}\n{output}"),
            payload: json!({"input": {"command": command}, "output": output, "is_error": false}),
            files: vec![],
            sensitivity: Sensitivity::Normal,
            transcript_path: None,
            facts: crate::adapter::tool_facts(
                EventKind::ToolUse,
                Some(kind),
                &[],
                &json!({"input": {"command": command}}),
            ),
        }
    }

    fn prompt(text: &str) -> Event {
        Event {
            kind: EventKind::Prompt,
            tool: None,
            tool_kind: None,
            body: text.into(),
            payload: json!({"prompt": text}),
            facts: Default::default(),
            ..tool_use("x", ToolKind::Other, "", "")
        }
    }

    #[test]
    fn each_layer_drops_what_it_should() {
        let config = FilterConfig::default();
        let cases = [
            (prompt("ok"), Some(Layer::TooShort)),
            (prompt("fix the flaky payment test"), None),
            (tool_use("TodoWrite", ToolKind::Meta, "todos", "updated"), Some(Layer::LowValue)),
            (
                tool_use("mcp__agent-memory__search", ToolKind::Mcp, "q", "hits"),
                Some(Layer::LowValue),
            ),
            (tool_use("Bash", ToolKind::Shell, "ls build/", ""), Some(Layer::LowValue)),
            (
                tool_use("Glob", ToolKind::Search, "**/*.proto", "No files found"),
                Some(Layer::LowValue),
            ),
            (tool_use("Bash", ToolKind::Shell, "cd src", "Exit code: 0"), Some(Layer::LowValue)),
            (
                tool_use("Bash", ToolKind::Shell, "rg --help", "Usage: rg [OPTIONS] PATTERN"),
                Some(Layer::LowValue),
            ),
            (tool_use("Bash", ToolKind::Shell, "ls", ""), Some(Layer::TooShort)),
            (tool_use("Bash", ToolKind::Shell, "cargo test", "Exit code: 1"), None),
            (tool_use("Bash", ToolKind::Shell, "ls src", "main.rs"), None),
        ];
        for (event, expected) in cases {
            assert_eq!(screen(&event, &config), expected, "{}", event.summary);
        }
    }

    #[test]
    fn fingerprints_ignore_numbers_case_and_spacing_but_not_failure() {
        let a = tool_use("Bash", ToolKind::Shell, "date", "Tue 12:01:07  pid 4242");
        let b = tool_use("Bash", ToolKind::Shell, "date", "tue 12:09:59 pid 77");
        assert_eq!(fingerprint(&a), fingerprint(&b));
        let mut failed = b.clone();
        failed.facts.failed = true;
        assert_ne!(fingerprint(&a), fingerprint(&failed));
    }

    #[test]
    fn a_fingerprint_hashes_the_folded_text_as_written_out_whole() {
        // The fold as one string, as fingerprints were first worked out: stored hashes must
        // keep matching new ones.
        fn folded(text: &str) -> String {
            let mut out = String::new();
            let mut last = ' ';
            for c in text.chars() {
                let c = if c.is_whitespace() {
                    ' '
                } else if c.is_ascii_digit() {
                    '0'
                } else {
                    c.to_lowercase().next().unwrap_or(c)
                };
                if (c == ' ' || c == '0') && c == last {
                    continue;
                }
                out.push(c);
                last = c;
            }
            out.trim().to_owned()
        }
        let long = "Ünïcödé\tWORDS 12 ".repeat(300);
        for body in
            ["", "   ", " \n Leading and trailing \t\n", "a 0 0b  77x", "ÉTÉ 2024 İstanbul", &long]
        {
            let mut event = tool_use("Bash", ToolKind::Shell, "date", "");
            event.body = body.to_owned();
            let mut hasher = Sha256::new();
            hasher.update(event.kind.as_str());
            hasher.update([0]);
            hasher.update("Bash");
            hasher.update([0, 0, 0]);
            hasher.update(folded(&event.body));
            let whole =
                hasher.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect::<String>();
            assert_eq!(fingerprint(&event), whole, "{body:?}");
        }
    }

    #[test]
    fn near_duplicates() {
        let config = FilterConfig::default();
        let first = prompt("please run the whole test suite again and report failures");
        let recent = RecentEvent {
            id: 1,
            kind: "prompt".into(),
            at_ms: 0,
            content_hash: fingerprint(&first),
            body: first.body.clone(),
        };
        let again = prompt("please run the whole test suite again and report failures!");
        assert!(is_near_duplicate(&again, &fingerprint(&again), &recent, &config));
        let other = prompt("now deploy the staging build");
        assert!(!is_near_duplicate(&other, &fingerprint(&other), &recent, &config));
    }
}
