//! File context: here is a file an agent is reading, and the observations that changed or read
//! it, give me a few lines saying so.
//!
//! Observations name files as their session did, relative to its directory when inside it, so a
//! path is looked up in every form it may have been stored in ([`path_forms`]).
//!
//! Must not: read the store or the file itself.

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::store::recall::FileNote;
use crate::text::{clip, one_line};

/// Observations one file context lists, at most.
pub const MAX_NOTES: usize = 5;

/// The forms a path may be stored in: as given, relative to the session's directory, relative to
/// the project root (and whole, when given relative). The first is the one to show.
pub fn path_forms(path: &str, cwd: Option<&str>, project_root: Option<&str>) -> Vec<String> {
    let path = path.trim();
    let path = path.strip_prefix("./").unwrap_or(path);
    if path.is_empty() {
        return Vec::new();
    }
    let absolute = match cwd.filter(|c| c.starts_with('/')) {
        Some(cwd) if !path.starts_with('/') => format!("{}/{path}", cwd.trim_end_matches('/')),
        _ => path.to_owned(),
    };
    let mut forms: Vec<String> = Vec::new();
    for base in [cwd, project_root].into_iter().flatten() {
        if let Some(relative) = inside(&absolute, base) {
            forms.push(relative.to_owned());
        }
    }
    forms.push(path.to_owned());
    forms.push(absolute);
    crate::text::dedup(forms)
}

/// `path` relative to `base`, when it lies inside it (on a path boundary).
fn inside<'a>(path: &'a str, base: &str) -> Option<&'a str> {
    let base = base.trim_end_matches('/');
    if base.is_empty() {
        return None;
    }
    path.strip_prefix(base)?.strip_prefix('/').filter(|rest| !rest.is_empty())
}

/// The context for `file` (shown as given), wrapped in the sentinel, with the observations it
/// names (each with the tokens of its line) and how many notes beyond [`MAX_NOTES`] it left
/// out; `None` without notes.
pub fn file_context(
    file: &str,
    notes: &[FileNote],
    language: &str,
    tz: &TimeZone,
) -> Option<(String, super::Handed)> {
    if notes.is_empty() {
        return None;
    }
    let zh = language.starts_with("zh");
    let file = clip(&one_line(file), 160);
    let mut lines = vec![if zh {
        format!("以往会话对 {file} 的记录（agent-memory；`agent-memory show <id>` 查看全文）：")
    } else {
        format!(
            "What earlier sessions did with {file} (agent-memory; `agent-memory show <id>` prints one in full):"
        )
    }];
    let mut handed =
        super::Handed { items: Vec::new(), cut: notes.len().saturating_sub(MAX_NOTES) };
    for note in notes.iter().take(MAX_NOTES) {
        let did = match (note.modified, zh) {
            (true, false) => "changed it",
            (false, false) => "read it",
            (true, true) => "修改过",
            (false, true) => "读过",
        };
        let day = Timestamp::from_millisecond(note.at_ms)
            .map(|ts| ts.to_zoned_datetime(tz.clone()).strftime("%Y-%m-%d").to_string())
            .unwrap_or_default();
        let stale =
            note.stale.as_deref().map(|s| format!(" ({})", one_line(s))).unwrap_or_default();
        let line = format!(
            "- o{} {day} {} {did}: {}{stale}",
            note.id,
            note.agent,
            clip(&one_line(&note.title), 160)
        );
        handed.items.push((format!("o{}", note.id), crate::tokens::estimate(&line) + 1));
        lines.push(line);
    }
    Some((super::wrap(&lines.join("\n")), handed))
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn forms_of_a_path() {
        let forms = |p, cwd, root| path_forms(p, cwd, root);
        assert_eq!(
            forms("/w/app/src/a.rs", Some("/w/app"), Some("/w/app")),
            ["src/a.rs", "/w/app/src/a.rs"]
        );
        assert_eq!(
            forms("./src/a.rs", Some("/w/app/sub"), Some("/w/app")),
            ["src/a.rs", "sub/src/a.rs", "/w/app/sub/src/a.rs"]
        );
        assert_eq!(forms("/elsewhere/a.rs", Some("/w/app"), None), ["/elsewhere/a.rs"]);
        assert_eq!(forms("/w/app-b/a.rs", Some("/w/app"), None), ["/w/app-b/a.rs"]);
        assert!(forms("  ", Some("/w"), None).is_empty());
    }

    #[test]
    fn lists_changes_and_reads() {
        let note = |id, modified, title: &str| FileNote {
            id,
            at_ms: 1_796_222_039_561,
            agent: "codex".into(),
            kind: "bugfix".into(),
            title: title.into(),
            modified,
            stale: None,
        };
        let notes =
            [note(4, true, "Fixed the depth lookup"), note(2, false, "Studied src/parser.rs")];
        expect![[r#"
            <agent-memory-context>
            What earlier sessions did with src/parser.rs (agent-memory; `agent-memory show <id>` prints one in full):
            - o4 2026-12-02 codex changed it: Fixed the depth lookup
            - o2 2026-12-02 codex read it: Studied src/parser.rs
            </agent-memory-context>"#]]
        .assert_eq(&file_context("src/parser.rs", &notes, "en", &TimeZone::UTC).expect("context").0);
        expect![[r#"
            <agent-memory-context>
            以往会话对 src/parser.rs 的记录（agent-memory；`agent-memory show <id>` 查看全文）：
            - o4 2026-12-02 codex 修改过: Fixed the depth lookup
            - o2 2026-12-02 codex 读过: Studied src/parser.rs
            </agent-memory-context>"#]]
        .assert_eq(
            &file_context("src/parser.rs", &notes, "zh-CN", &TimeZone::UTC).expect("context").0,
        );
        assert_eq!(file_context("a", &[], "en", &TimeZone::UTC), None);
        let (_, handed) = file_context("src/parser.rs", &notes, "en", &TimeZone::UTC).expect("ctx");
        let ids: Vec<&str> = handed.items.iter().map(|(id, _)| id.as_str()).collect();
        assert_eq!((ids, handed.cut), (vec!["o4", "o2"], 0));
        assert!(handed.items.iter().all(|(_, tokens)| *tokens > 0));
    }
}
