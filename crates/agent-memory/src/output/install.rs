//! `agent-memory install` / `uninstall`: a line per file with what happened to it, a diff per
//! file for `--dry-run`, a note per agent that was skipped, and on standard error the agents
//! whose config could not be changed.

use std::io::{self, Write};
use std::path::Path;

use agent_memory_core::install::FilePlan;

use super::json;
use crate::report::{InstallReport, InstallStatus, InstallTally};

/// `install --json`, `uninstall --json`: the whole run as one document.
pub fn install_report(report: &InstallReport) -> io::Result<()> {
    json(&mut io::stdout().lock(), report)
}

/// One line per file: the agent, what happened, the path.
pub fn install_file(agent: &str, path: &Path, status: &InstallStatus) -> io::Result<()> {
    write_install_file(&mut io::stdout().lock(), agent, path, status)
}

pub fn write_install_file(
    out: &mut impl Write,
    agent: &str,
    path: &Path,
    status: &InstallStatus,
) -> io::Result<()> {
    let what = match status {
        InstallStatus::UpToDate => "up to date",
        InstallStatus::WouldCreate => "would create",
        InstallStatus::WouldChange => "would change",
        InstallStatus::Created => "created",
        InstallStatus::Updated { .. } => "updated",
        InstallStatus::Removed => "removed",
    };
    write!(out, "{agent:<12} {what:<12} {}", path.display())?;
    if let InstallStatus::Updated { backup: Some(backup) } = status {
        write!(out, " (original kept as {})", backup.display())?;
    }
    writeln!(out)
}

/// The line that ends a run (or, under `--dry-run`, opens it): what it did to how many files
/// of which agents, and what to do next.
pub fn install_summary(tally: &InstallTally, install: bool, dry_run: bool) -> io::Result<()> {
    write_install_summary(&mut io::stdout().lock(), tally, install, dry_run)
}

pub fn write_install_summary(
    out: &mut impl Write,
    tally: &InstallTally,
    install: bool,
    dry_run: bool,
) -> io::Result<()> {
    if tally.agents.is_empty() {
        return Ok(());
    }
    let agents =
        format!("{} ({})", super::count(tally.agents.len(), "agent"), tally.agents.join(", "));
    let files = |n: usize| super::count(n, "file");
    if dry_run {
        return writeln!(
            out,
            "dry run for {agents}: would create {}, change {}{}, leave {} untouched; nothing \
             is written. Each file's change follows.",
            files(tally.created),
            files(tally.changed),
            if tally.removed > 0 {
                format!(", remove {}", files(tally.removed))
            } else {
                String::new()
            },
            files(tally.up_to_date)
        );
    }
    if tally.created + tally.changed + tally.removed == 0 {
        let next = if install { "; `agent-memory doctor` checks that it works" } else { "" };
        return writeln!(out, "nothing to change for {agents}: already as asked{next}.");
    }
    if install {
        writeln!(
            out,
            "wired {agents}: {} created, {} updated, {} already up to date.\nNext: restart the \
             agents that are running (a running session keeps the hooks it started with), then \
             `agent-memory doctor` checks the wiring and `agent-memory status` shows what is \
             captured.",
            files(tally.created),
            files(tally.changed),
            files(tally.up_to_date)
        )
    } else {
        writeln!(
            out,
            "removed agent-memory from {agents}: {} changed, {} removed. Restart the agents that \
             are running so they drop the hooks; the store at ~/.agent-memory stays.",
            files(tally.changed),
            files(tally.removed)
        )
    }
}

/// `install --dry-run`: a unified diff of one file's change, nothing when it has none.
pub fn install_diff(plan: &FilePlan) -> io::Result<()> {
    write_install_diff(&mut io::stdout().lock(), plan)
}

pub fn write_install_diff(out: &mut impl Write, plan: &FilePlan) -> io::Result<()> {
    if !plan.changed() {
        return Ok(());
    }
    let before = plan.before.as_deref().unwrap_or("");
    let after = if plan.remove { "" } else { plan.after.as_str() };
    let path = plan.path.display().to_string();
    let old_name = if plan.before.is_some() { path.clone() } else { "/dev/null".to_owned() };
    let new_name = if plan.remove { "/dev/null".to_owned() } else { path };
    let diff = similar::TextDiff::from_lines(before, after);
    write!(out, "{}", diff.unified_diff().context_radius(3).header(&old_name, &new_name))
}

/// An agent that was skipped, and why.
pub fn install_note(agent: &str, note: &str) -> io::Result<()> {
    write_install_note(&mut io::stdout().lock(), agent, note)
}

pub fn write_install_note(out: &mut impl Write, agent: &str, note: &str) -> io::Result<()> {
    writeln!(out, "{agent:<12} {note}")
}

/// An agent whose config could not be changed (the run goes on with the next agent).
pub fn install_error(agent: &str, message: &str) {
    // Nothing is left to tell if standard error itself is gone.
    let _ = writeln!(io::stderr().lock(), "agent-memory: {agent}: {message}");
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use expect_test::expect;

    use super::*;
    use crate::output::tests::rendered;

    #[test]
    fn a_run_ends_with_what_it_did_and_what_to_do_next() {
        let mut tally = InstallTally::default();
        tally.add("claude-code", &InstallStatus::Created);
        tally.add("claude-code", &InstallStatus::Updated { backup: None });
        tally.add("codex", &InstallStatus::UpToDate);
        let text = rendered(|out| {
            write_install_summary(out, &tally, true, false)?;
            write_install_summary(out, &tally, true, true)?;
            write_install_summary(out, &tally, false, false)?;
            write_install_summary(out, &InstallTally::default(), true, false)
        });
        expect![[r#"
            wired 2 agents (claude-code, codex): 1 file created, 1 file updated, 1 file already up to date.
            Next: restart the agents that are running (a running session keeps the hooks it started with), then `agent-memory doctor` checks the wiring and `agent-memory status` shows what is captured.
            dry run for 2 agents (claude-code, codex): would create 1 file, change 1 file, leave 1 file untouched; nothing is written. Each file's change follows.
            removed agent-memory from 2 agents (claude-code, codex): 1 file changed, 0 files removed. Restart the agents that are running so they drop the hooks; the store at ~/.agent-memory stays.
        "#]]
        .assert_eq(&text);
    }

    #[test]
    fn a_line_per_file_and_a_note_per_agent() {
        let settings = Path::new("/home/u/.claude/settings.json");
        let text = rendered(|out| {
            write_install_file(out, "claude-code", settings, &InstallStatus::UpToDate)?;
            write_install_file(out, "claude-code", settings, &InstallStatus::WouldChange)?;
            write_install_file(out, "gemini", settings, &InstallStatus::Created)?;
            write_install_file(
                out,
                "codex",
                Path::new("/home/u/.codex/config.toml"),
                &InstallStatus::Updated {
                    backup: Some(PathBuf::from("/home/u/.codex/config.toml.agent-memory.bak")),
                },
            )?;
            write_install_file(out, "codex", settings, &InstallStatus::Updated { backup: None })?;
            write_install_file(out, "opencode", settings, &InstallStatus::Removed)?;
            write_install_note(out, "hermes", "not found on this machine; skipped")
        });
        expect![[r#"
            claude-code  up to date   /home/u/.claude/settings.json
            claude-code  would change /home/u/.claude/settings.json
            gemini       created      /home/u/.claude/settings.json
            codex        updated      /home/u/.codex/config.toml (original kept as /home/u/.codex/config.toml.agent-memory.bak)
            codex        updated      /home/u/.claude/settings.json
            opencode     removed      /home/u/.claude/settings.json
            hermes       not found on this machine; skipped
        "#]]
        .assert_eq(&text);
    }

    #[test]
    fn a_dry_run_diff() {
        let plan = FilePlan {
            path: PathBuf::from("/home/u/.codex/config.toml"),
            before: Some("# mine\nmodel = \"o3\"\n".to_owned()),
            after: "# mine\nmodel = \"o3\"\n\n[features]\nhooks = true\n".to_owned(),
            remove: false,
        };
        expect![[r#"
            --- /home/u/.codex/config.toml
            +++ /home/u/.codex/config.toml
            @@ -1,2 +1,5 @@
             # mine
             model = "o3"
            +
            +[features]
            +hooks = true
        "#]]
        .assert_eq(&rendered(|out| write_install_diff(out, &plan)));
        let unchanged = FilePlan { before: Some(plan.after.clone()), ..plan };
        assert_eq!(rendered(|out| write_install_diff(out, &unchanged)), "");
    }
}
