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
mod install;
mod item;
mod memory;
mod mode;
mod model;
mod review;
mod search;
mod status;
mod tidy;
mod timeline;
mod transfer;
mod vault;
mod work;

pub use brief::{brief, brief_written};
pub use doctor::doctor;
pub use install::{install_diff, install_error, install_file, install_note};
pub use item::show;
pub use memory::{approved, memories, memory_changed, packs, remembered};
pub use mode::{mode_list, mode_show};
pub use model::{model_installed, model_list, model_removed, progress, reindex};
pub use review::{
    review_ask, review_candidate, review_done, review_list, review_problem, review_prompt,
};
pub use search::search;
pub use status::{projects, status};
pub use tidy::tidy;
pub use timeline::timeline;
pub use transfer::transfer;
pub use vault::vault_sync;
pub use work::{recover, work};

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

/// `text` on one line (line breaks and tabs become spaces), cut after `max` characters with a
/// `…`, so a table column stays one line.
fn clip(text: &str, max: usize) -> String {
    let flat = text.replace(['\n', '\r', '\t'], " ");
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
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
        }
    }

    #[test]
    fn clip_keeps_a_column_on_one_line() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("a\nb\tc", 10), "a b c");
        assert_eq!(clip("abcdef", 3), "abc…");
        assert_eq!(clip("日本語のテキスト", 3), "日本語…");
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
