//! The daily health check as a user-level timer: `install --schedule` adds it and `uninstall`
//! removes exactly what was added. On Linux a systemd user timer (or, without a systemd user
//! session, a line in the user's crontab; without `crontab` either, the unit files are written
//! and the person is told how to enable them), on macOS a launchd agent. Each runs
//! `agent-memory doctor --health` with the binary's absolute path.
//!
//! Must not: touch another line of the crontab, or any unit or agent it did not write.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use agent_memory_core::fsutil;
use agent_memory_serve::child::{self, ChildError};

/// The name the timer, its service and the launchd agent go by.
const NAME: &str = "agent-memory-health";
/// The launchd label.
const LABEL: &str = "dev.agent-memory.health";
/// Marks the crontab line as ours.
const CRON_MARK: &str = "# agent-memory health check";
/// How long `systemctl`, `launchctl` or `crontab` may take.
const DEADLINE: Duration = Duration::from_secs(10);

/// Where the timer's files go, from the user's folders.
#[derive(Debug, Clone)]
pub struct Places {
    pub home: PathBuf,
    pub config_home: PathBuf,
}

impl Places {
    fn units(&self) -> PathBuf {
        self.config_home.join("systemd").join("user")
    }

    fn service(&self) -> PathBuf {
        self.units().join(format!("{NAME}.service"))
    }

    fn timer(&self) -> PathBuf {
        self.units().join(format!("{NAME}.timer"))
    }

    fn plist(&self) -> PathBuf {
        self.home.join("Library").join("LaunchAgents").join(format!("{LABEL}.plist"))
    }
}

/// Adds the daily check; returns what it did, one sentence each. Under `dry_run`, what it
/// would do.
pub fn install(bin: &str, places: &Places, dry_run: bool) -> anyhow::Result<Vec<String>> {
    if cfg!(target_os = "macos") {
        return launchd_install(bin, places, dry_run);
    }
    if systemd_running() {
        let mut said = write_units(bin, places, dry_run)?;
        if !dry_run {
            for args in [&["daemon-reload"][..], &["enable", "--now", &format!("{NAME}.timer")]] {
                if let Err(err) = tool("systemctl", &[&["--user"][..], args].concat(), None) {
                    said.push(format!("systemctl --user {} failed: {err}", args.join(" ")));
                }
            }
        }
        said.push(format!("the health check runs daily ({NAME}.timer, a systemd user timer)"));
        return Ok(said);
    }
    if let Some(table) = crontab() {
        let line = cron_line(bin);
        if table.lines().any(|l| l == line) {
            return Ok(vec!["the daily health check is already in your crontab".into()]);
        }
        if !dry_run {
            let kept: Vec<&str> = table.lines().filter(|l| !l.ends_with(CRON_MARK)).collect();
            let mut new = kept.join("\n");
            if !new.is_empty() {
                new.push('\n');
            }
            new.push_str(&line);
            new.push('\n');
            tool("crontab", &["-"], Some(new.as_bytes()))?;
        }
        let verb = if dry_run { "would add" } else { "added" };
        return Ok(vec![format!("{verb} the daily health check to your crontab: {line}")]);
    }
    let mut said = write_units(bin, places, dry_run)?;
    said.push(format!(
        "no systemd user session and no crontab here: enable the timer once one runs, with \
         `systemctl --user enable --now {NAME}.timer`"
    ));
    Ok(said)
}

/// Removes what [`install`] added, wherever it is; says what it removed.
pub fn remove(places: &Places, dry_run: bool) -> anyhow::Result<Vec<String>> {
    let verb = if dry_run { "would remove" } else { "removed" };
    let mut said = Vec::new();
    let units = [places.timer(), places.service()];
    if units.iter().any(|u| u.exists()) {
        if !dry_run && systemd_running() {
            let _ =
                tool("systemctl", &["--user", "disable", "--now", &format!("{NAME}.timer")], None);
        }
        for unit in units.iter().filter(|u| u.exists()) {
            if !dry_run {
                std::fs::remove_file(unit)?;
            }
            said.push(format!("{verb} {}", unit.display()));
        }
        if !dry_run && systemd_running() {
            let _ = tool("systemctl", &["--user", "daemon-reload"], None);
        }
    }
    let plist = places.plist();
    if plist.exists() {
        if !dry_run {
            let _ = tool("launchctl", &["unload", "-w", &plist.to_string_lossy()], None);
            std::fs::remove_file(&plist)?;
        }
        said.push(format!("{verb} {}", plist.display()));
    }
    if let Some(table) = crontab().filter(|t| t.lines().any(|l| l.ends_with(CRON_MARK))) {
        if !dry_run {
            let kept: Vec<&str> = table.lines().filter(|l| !l.ends_with(CRON_MARK)).collect();
            let mut new = kept.join("\n");
            if !new.is_empty() {
                new.push('\n');
            }
            tool("crontab", &["-"], Some(new.as_bytes()))?;
        }
        said.push(format!("{verb} the daily health check from your crontab"));
    }
    Ok(said)
}

/// The service and timer units, written unless the same are there.
fn write_units(bin: &str, places: &Places, dry_run: bool) -> anyhow::Result<Vec<String>> {
    let service = format!(
        "# Written by `agent-memory install --schedule`; `agent-memory uninstall` removes it.\n\
         [Unit]\nDescription=agent-memory daily health check\n\n\
         [Service]\nType=oneshot\nExecStart={} doctor --health\n",
        systemd_quote(bin)
    );
    let timer = "# Written by `agent-memory install --schedule`; `agent-memory uninstall` removes it.\n\
         [Unit]\nDescription=agent-memory daily health check\n\n\
         [Timer]\nOnCalendar=daily\nPersistent=true\nRandomizedDelaySec=30m\n\n\
         [Install]\nWantedBy=timers.target\n";
    let mut said = Vec::new();
    for (path, text) in [(places.service(), service.as_str()), (places.timer(), timer)] {
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text) {
            continue;
        }
        if !dry_run {
            std::fs::create_dir_all(places.units())?;
            fsutil::write_atomic(&path, text.as_bytes())?;
        }
        let verb = if dry_run { "would write" } else { "wrote" };
        said.push(format!("{verb} {}", path.display()));
    }
    Ok(said)
}

fn launchd_install(bin: &str, places: &Places, dry_run: bool) -> anyhow::Result<Vec<String>> {
    let escape = |s: &str| s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let plist = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <!-- Written by `agent-memory install --schedule`; `agent-memory uninstall` removes it. -->\n\
         <plist version=\"1.0\">\n<dict>\n\
         \t<key>Label</key><string>{LABEL}</string>\n\
         \t<key>ProgramArguments</key>\n\t<array><string>{}</string><string>doctor</string><string>--health</string></array>\n\
         \t<key>StartCalendarInterval</key>\n\t<dict><key>Hour</key><integer>9</integer><key>Minute</key><integer>17</integer></dict>\n\
         </dict>\n</plist>\n",
        escape(bin)
    );
    let path = places.plist();
    if std::fs::read_to_string(&path).ok().as_deref() == Some(plist.as_str()) {
        return Ok(vec!["the daily health check is already a launchd agent".into()]);
    }
    if dry_run {
        return Ok(vec![format!("would write {}", path.display())]);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    fsutil::write_atomic(&path, plist.as_bytes())?;
    let mut said = vec![format!("wrote {}", path.display())];
    if let Err(err) = tool("launchctl", &["load", "-w", &path.to_string_lossy()], None) {
        said.push(format!("launchctl load failed: {err}; it loads at your next login"));
    }
    Ok(said)
}

/// The crontab line: daily at 09:17, its output dropped (the vault note and the exit status
/// tell), marked as ours.
fn cron_line(bin: &str) -> String {
    format!(
        "17 9 * * * '{}' doctor --health >/dev/null 2>&1 {CRON_MARK}",
        bin.replace('\'', "'\\''")
    )
}

/// A path in an `ExecStart=` line: quoted when it holds a space.
fn systemd_quote(bin: &str) -> String {
    if bin.contains([' ', '"', '\\']) {
        format!("\"{}\"", bin.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        bin.to_owned()
    }
}

/// Whether a systemd user session answers.
fn systemd_running() -> bool {
    tool("systemctl", &["--user", "show-environment"], None).is_ok()
}

/// The user's crontab (empty when there is none yet), or `None` when `crontab` is not here.
fn crontab() -> Option<String> {
    match tool("crontab", &["-l"], None) {
        Ok(table) => Some(table),
        // `crontab -l` fails when the user has no crontab yet; the program is still there.
        Err(ToolError::Failed(_)) => Some(String::new()),
        Err(ToolError::Missing) => None,
    }
}

/// Why a system tool gave no answer: not on this machine, or it failed (and why).
#[derive(Debug)]
enum ToolError {
    Missing,
    Failed(String),
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::Missing => write!(f, "not found"),
            ToolError::Failed(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for ToolError {}

/// Runs a system tool to its end (or its deadline), `input` on its stdin; its stdout.
fn tool(program: &str, args: &[&str], input: Option<&[u8]>) -> Result<String, ToolError> {
    let mut command = Command::new(program);
    command.args(args);
    let finished = match child::run(command, input.unwrap_or_default().to_vec(), DEADLINE) {
        Ok(finished) => finished,
        Err(ChildError::NotFound { .. }) => return Err(ToolError::Missing),
        Err(err) => return Err(ToolError::Failed(err.to_string())),
    };
    if finished.status.success() {
        Ok(finished.stdout)
    } else {
        Err(ToolError::Failed(finished.failure(program)))
    }
}

/// The user's folders as `install` knows them.
pub fn places(home: &Path, config_home: &Path) -> Places {
    Places { home: home.to_owned(), config_home: config_home.to_owned() }
}
