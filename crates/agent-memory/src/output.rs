//! Everything the CLI prints goes through here (a lint denies printing elsewhere), so that
//! output stays consistent and a closed pipe is an `io::Error` the caller can treat as success.
//!
//! One child per noun renders it into any [`Write`] (`write_*`), so a test reads the exact
//! bytes from a buffer; the functions commands call, re-exported here, only lock standard
//! output or standard error and pass it in. This module keeps what the renderers share (JSON,
//! clipping, a plain line of text) and the two writers that are not a noun: the error `main`
//! reports and the hook's answer to its agent.
//!
//! Must not: decide anything or reach into a command. What to print comes in as data, core's
//! types or [`crate::report`]; an item's compact text form is core's
//! ([`agent_memory_core::recall::text`]), shared with the MCP tools, never redone here.

use std::io::{self, Write};

use serde::Serialize;

mod brief;
mod doctor;
mod health;
mod history;
mod injection;
mod install;
mod item;
mod memory;
mod mode;
mod model;
pub mod reactions;
pub mod report;
mod review;
mod search;
mod status;
mod team;
mod tidy;
mod timeline;
mod transfer;
mod vault;
mod work;

pub use brief::{brief, brief_written};
pub use doctor::doctor;
pub use health::health;
pub use history::{history, history_imported};
pub use injection::injections;
pub use install::{
    install_diff, install_error, install_file, install_note, install_report, install_summary,
};
pub use item::show;
pub use memory::{
    approved, items_forgotten, memories, memories_changed, memory_changed, packs, remembered,
};
pub use mode::{mode_list, mode_show};
pub use model::{
    Reindexed, WasUsed, model_installed, model_list, model_removed, progress, reindex,
};
pub use review::{
    review_ask, review_candidate, review_done, review_list, review_problem, review_prompt,
    review_would,
};
pub use search::search;
pub use status::{projects, status};
pub use team::{team_dry_run, team_init, team_search, team_status, team_sync};
pub use tidy::{needs_a_look, tidy};
pub use timeline::timeline;
pub use transfer::transfer;
pub use vault::vault_sync;
pub use work::{recover, work, work_stopped};

/// Prints an error and its causes to stderr.
pub fn error(err: &anyhow::Error) {
    // Nothing is left to tell if standard error itself is gone.
    let _ = writeln!(io::stderr().lock(), "agent-memory: {}", error_text(err));
}

/// An error and those of its causes that add something, one per line.
pub fn error_text(err: &anyhow::Error) -> String {
    let mut message = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(&format!("\n  caused by: {cause}"));
        }
    }
    message
}

/// A warning on stderr: something is wrong, and the command goes on regardless.
pub fn warning(message: &str) {
    // Nothing is left to tell if standard error itself is gone.
    let _ = writeln!(io::stderr().lock(), "agent-memory: warning: {message}");
}

/// An error under `--json`: `{"error": {"code", "message"}}` on stdout, where a script reads.
pub fn json_error(code: &str, message: &str) {
    let body = serde_json::json!({ "error": { "code": code, "message": message } });
    // A closed stdout leaves nobody to tell.
    let _ = json(&mut io::stdout().lock(), &body);
}

/// A hook's answer to its agent: one line of JSON on stdout, the only thing a hook prints.
pub fn hook_answer(json: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    writeln!(out, "{json}")?;
    out.flush()
}

/// `agent-memory completions SHELL`: the shell's completion script for every command and flag.
pub fn completions(shell: clap_complete::Shell) -> io::Result<()> {
    let mut command = <crate::cli::Cli as clap::CommandFactory>::command();
    // Into a buffer first: clap_complete panics on a write error, and a closed pipe is none.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, "agent-memory", &mut script);
    let mut out = io::stdout().lock();
    out.write_all(&script)?;
    out.flush()
}

/// Any data as the JSON a command's `--json` prints, for the commands whose answer is one
/// value ([`crate::report`]'s `BriefAnswer`, `ModeSet`, `PackDone`, the configuration).
pub fn json_value(value: &impl Serialize) -> io::Result<()> {
    json(&mut io::stdout().lock(), value)
}

/// Text exactly as given, for a file's contents (`config default`).
pub fn text(text: &str) -> io::Result<()> {
    io::stdout().lock().write_all(text.as_bytes())
}

/// One line of text, for a command whose whole answer is a sentence.
pub fn line(text: &str) -> io::Result<()> {
    writeln!(io::stdout().lock(), "{text}")
}

/// `value` as pretty JSON and a line end: what every `--json` prints.
fn json(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    // `From` gives back the pipe's own error (a broken pipe stays one), any other as data.
    serde_json::to_writer_pretty(&mut *out, value).map_err(io::Error::from)?;
    writeln!(out)
}

/// How many terminal columns `text` takes: a Chinese character takes two, a combining mark none.
/// Every table pads and clips by this, never by counting characters.
fn width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `text` on one line (line breaks and tabs become spaces), at most `max` columns wide: a longer
/// one is cut and ends in `…`, so a table column stays one line.
fn clip(text: &str, max: usize) -> String {
    let flat = text.replace(['\n', '\r', '\t'], " ");
    if width(&flat) <= max {
        return flat;
    }
    let mut taken = 0;
    let mut clipped = String::new();
    for ch in flat.chars() {
        let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        // One column stays for the `…`.
        if taken + w + 1 > max {
            break;
        }
        taken += w;
        clipped.push(ch);
    }
    clipped.push('…');
    clipped
}

/// `text` as a table cell exactly `columns` wide: clipped, then padded with spaces.
fn cell(text: &str, columns: usize) -> String {
    let mut clipped = clip(text, columns);
    let pad = columns.saturating_sub(width(&clipped));
    clipped.extend(std::iter::repeat_n(' ', pad));
    clipped
}

/// `one` as many times as `n` says: `session` for 1, `sessions` otherwise (`memory`,
/// `memories`); the one place a printed noun takes its number.
pub(crate) fn plural(n: impl std::fmt::Display, one: &str) -> String {
    if n.to_string() == "1" {
        return one.to_owned();
    }
    match one.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{stem}ies"),
        _ => format!("{one}s"),
    }
}

/// `n` and its noun: `1 session`, `3 sessions`.
pub(crate) fn count(n: impl std::fmt::Display, one: &str) -> String {
    let word = plural(&n, one);
    format!("{n} {word}")
}

/// The width a column needs for `values`: the widest one, at least `min` (its header), at most
/// `max` (longer values are clipped).
fn column_width<'a>(values: impl IntoIterator<Item = &'a str>, min: usize, max: usize) -> usize {
    values.into_iter().map(width).fold(min, usize::max).min(max)
}

#[cfg(test)]
mod tests {
    use agent_memory_core::store::memories::{Kind, Memory, Status, Tier};
    use agent_memory_core::time::format_local;

    use super::*;

    /// The time every test item carries; rendered as `<time>`, since how it prints depends on
    /// the machine's time zone.
    pub const AT: i64 = 1_767_323_400_000;

    /// What a renderer wrote, as text, with [`AT`] shown as `<time>`.
    pub fn rendered(render: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        render(&mut out).expect("writing to a Vec cannot fail");
        String::from_utf8(out).expect("renderers write UTF-8").replace(&format_local(AT), "<time>")
    }

    /// An active project decision with sources, at [`AT`].
    pub fn memory(id: i64, text: &str) -> Memory {
        Memory {
            id,
            tier: Tier::L2,
            kind: Kind::Decision,
            text: text.to_owned(),
            project: Some("github.com/u/agent-memory".to_owned()),
            project_name: Some("agent-memory".to_owned()),
            importance: 7,
            hits: 2,
            last_hit: None,
            created_at: AT,
            updated_at: AT,
            status: Status::Active,
            superseded_by: None,
            supersedes: None,
            sources: vec!["o12".to_owned(), "s3".to_owned()],
            origin: "distilled".to_owned(),
            member: None,
            anchors: None,
            branch: None,
        }
    }

    #[test]
    fn clip_keeps_a_column_on_one_line_and_within_its_width() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("a\nb\tc", 10), "a b c");
        assert_eq!(clip("abcdef", 4), "abc…");
        // Chinese characters take two columns each.
        assert_eq!(clip("日本語のテキスト", 7), "日本語…");
        assert_eq!(clip("支付服务", 8), "支付服务");
    }

    #[test]
    fn nouns_take_their_number() {
        assert_eq!(count(1, "session"), "1 session");
        assert_eq!(count(0, "session"), "0 sessions");
        assert_eq!(count(2_u64, "memory"), "2 memories");
        assert_eq!(count(1_usize, "memory"), "1 memory");
        assert_eq!(count(3, "day"), "3 days");
        assert_eq!(count(2, "group"), "2 groups");
    }

    #[test]
    fn cells_pad_by_display_width() {
        assert_eq!(cell("shop", 6), "shop  ");
        assert_eq!(cell("支付服务", 10), "支付服务  ");
        assert_eq!(
            width(&cell("支付服务后端项目", 9)),
            9,
            "clipped, then padded: {:?}",
            cell("支付服务后端项目", 9)
        );
        assert_eq!(column_width(["ab", "支付服务"], 3, 20), 8);
        assert_eq!(column_width(["a-very-long-agent-name-indeed"], 3, 12), 12);
    }

    #[test]
    fn json_is_pretty_and_ends_the_line() {
        let text = rendered(|out| json(out, &serde_json::json!({ "a": [1, 2] })));
        expect_test::expect![[r#"
            {
              "a": [
                1,
                2
              ]
            }
        "#]]
        .assert_eq(&text);
    }
}
