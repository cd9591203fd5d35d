//! `agent-memory brief`: the briefing as Markdown, or why there is none, and where
//! `brief --write` put it.

use std::io::{self, Write};
use std::path::Path;

/// `agent-memory brief`: the briefing as Markdown, or (on stderr) why there is none.
pub fn brief(markdown: Option<&str>, project: &str) -> io::Result<()> {
    match markdown {
        Some(text) => writeln!(io::stdout().lock(), "{text}"),
        None => write_no_brief(&mut io::stderr().lock(), project),
    }
}

pub fn write_no_brief(err: &mut impl Write, project: &str) -> io::Result<()> {
    writeln!(
        err,
        "nothing distilled yet in project {project}; run `agent-memory work` after a session"
    )
}

/// `agent-memory brief --write`: where the file is, and whether it changed.
pub fn brief_written(path: &Path, changed: bool) -> io::Result<()> {
    write_brief_written(&mut io::stdout().lock(), path, changed)
}

pub fn write_brief_written(out: &mut impl Write, path: &Path, changed: bool) -> io::Result<()> {
    let state = if changed { "wrote" } else { "up to date:" };
    writeln!(out, "{state} {}", path.display())
}
