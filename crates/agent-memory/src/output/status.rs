//! `agent-memory status` and `project list`: the store, what was distilled and remembered, its
//! agents and projects, the hooks' health over recent windows, LLM spend, what waits in the
//! spool, the last work pass and the local server.

use std::io::{self, Write};

use agent_memory_core::capture::spool::SpoolDepth;
use agent_memory_core::store::status::{ProjectCount, StoreStatus};
use agent_memory_core::time::format_local;
use serde::Serialize;

use super::{cell, column_width, count, json, plural};
use crate::report::Activity;

#[derive(Serialize)]
struct StatusJson<'a> {
    #[serde(flatten)]
    store: &'a StoreStatus,
    spool: &'a SpoolDepth,
    #[serde(flatten)]
    activity: &'a Activity,
}

pub fn status(
    status: &StoreStatus,
    spool: &SpoolDepth,
    activity: &Activity,
    as_json: bool,
) -> io::Result<()> {
    write_status(&mut io::stdout().lock(), status, spool, activity, as_json)
}

/// What search runs on: full text alone, or each model with how much of the store it has
/// encoded; and the older events still to be indexed again, when there are any.
fn search_line(out: &mut impl Write, activity: &Activity) -> io::Result<()> {
    let mut line = if activity.search_models.is_empty() {
        "full text only (`agent-memory model list` shows the models to install)".to_owned()
    } else {
        activity
            .search_models
            .iter()
            .map(|m| format!("{} {} of {} items", m.model, m.encoded, m.encoded + m.waiting))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if activity.search_models.iter().any(|m| m.waiting > 0) || activity.events_to_index > 0 {
        if activity.events_to_index > 0 {
            line.push_str(&format!(
                "; {} to index again",
                count(activity.events_to_index, "older event")
            ));
        }
        line.push_str(" (`agent-memory work` catches up)");
    }
    writeln!(out, "search     {line}")
}

pub fn write_status(
    out: &mut impl Write,
    status: &StoreStatus,
    spool: &SpoolDepth,
    activity: &Activity,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, &StatusJson { store: status, spool, activity });
    }
    writeln!(
        out,
        "store      {}  ({}, schema {})",
        status.path,
        human_bytes(status.bytes),
        status.schema_version
    )?;
    writeln!(
        out,
        "events     {} in {} ({} open)",
        status.events,
        count(status.sessions, "session"),
        status.open_sessions
    )?;
    let last_pass = match activity.last_work_pass_ms {
        Some(at) => format!("last work pass {}", format_local(at)),
        None => "no work pass yet (`agent-memory work`)".to_owned(),
    };
    let left = match status.to_distil {
        0 => String::new(),
        n => format!("; {} to distil", count(n, "session")),
    };
    writeln!(
        out,
        "distilled  {}, {}{left}; {last_pass}",
        count(status.observations, "observation"),
        count(status.summaries, "summary")
    )?;
    let review = match status.candidates {
        0 => String::new(),
        n => format!(", {} to review (`agent-memory review`)", count(n, "candidate")),
    };
    writeln!(out, "memory     {}{review}", count(status.memories, "memory"))?;
    // Agents and projects share one name column, as wide as the longest name needs.
    let names = status.agents.iter().map(|a| a.agent.as_str());
    let name_width =
        column_width(names.chain(status.projects.iter().map(|p| p.name.as_str())), 12, 28);
    for (i, a) in status.agents.iter().enumerate() {
        let last = a.last_event_at.map_or_else(|| "-".to_owned(), format_local);
        let label = if i == 0 { "agents" } else { "" };
        writeln!(
            out,
            "{label:<10} {} {:>7} events {:>5} {:<8}  last {last}",
            cell(&a.agent, name_width),
            a.events,
            a.sessions,
            plural(a.sessions, "session")
        )?;
    }
    let (inside, outside): (Vec<_>, Vec<_>) = status.projects.iter().partition(|p| !p.outside);
    for (i, p) in inside.iter().enumerate() {
        let label = if i == 0 { "projects" } else { "" };
        writeln!(
            out,
            "{label:<10} {} {:>7} events {:>5} {:<8}  {}",
            cell(&p.name, name_width),
            p.events,
            p.sessions,
            plural(p.sessions, "session"),
            p.key
        )?;
    }
    // Folders that are no project (a scratch folder, a home directory, `/`) are one line, not
    // projects of their own: nothing captured there reaches a project's briefing.
    if !outside.is_empty() {
        let label = if inside.is_empty() { "projects" } else { "" };
        let events: i64 = outside.iter().map(|p| p.events).sum();
        let sessions: i64 = outside.iter().map(|p| p.sessions).sum();
        let mut roots: Vec<&str> = outside.iter().take(3).map(|p| p.root.as_str()).collect();
        if outside.len() > 3 {
            roots.push("…");
        }
        writeln!(
            out,
            "{label:<10} {} {:>7} events {:>5} {:<8}  outside any repository: {}",
            cell("no project", name_width),
            events,
            sessions,
            plural(sessions, "session"),
            roots.join(", ")
        )?;
    }
    for w in &status.hooks {
        let outcomes: Vec<String> = w.outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(
            out,
            "hooks {:<4} {} runs, {:.1}% errors, p50 {:.1} ms, p99 {:.1} ms  ({})",
            w.window,
            w.runs,
            w.error_rate * 100.0,
            w.p50_ms,
            w.p99_ms,
            outcomes.join(", ")
        )?;
    }
    for w in &status.hooks {
        let layers: Vec<String> = ["too_short", "low_value", "near_duplicate"]
            .iter()
            .map(|layer| format!("{layer} {}", w.filtered.get(*layer).copied().unwrap_or(0)))
            .collect();
        writeln!(out, "filtered {:<4} {}", w.window, layers.join(", "))?;
    }
    for (i, spend) in status.llm_spend.iter().enumerate() {
        let label = if i == 0 { "llm" } else { "" };
        writeln!(
            out,
            "{label:<10} {}  {:<18} {:>9} tokens in {} calls",
            spend.day, spend.provider, spend.tokens, spend.calls
        )?;
    }
    writeln!(
        out,
        "spool      {} waiting in {}{}{}",
        count(spool.records, "event"),
        count(spool.files, "file"),
        if spool.claimed > 0 {
            format!(" ({} held by a running hook or drain)", spool.claimed)
        } else {
            String::new()
        },
        if spool.quarantined > 0 {
            format!(", {} set aside (.bad)", count(spool.quarantined, "file"))
        } else {
            String::new()
        }
    )?;
    if spool.records > 0 {
        writeln!(out, "           run `agent-memory recover` to store them now")?;
    }
    search_line(out, activity)?;
    if let Some(reactions) = &activity.reactions {
        let day = &reactions.last_day;
        let mut line = format!(
            "reactions  {} configured; last 24 h: {} ran, {} failed",
            reactions.configured, day.fired, day.failed
        );
        if let Some(last) = &day.last_failure {
            line.push_str(&format!(" (last: {last})"));
        }
        writeln!(out, "{line}")?;
        for why in &reactions.unusable {
            writeln!(out, "           not run: {why}")?;
        }
    }
    match &activity.serve {
        Some(serve) => writeln!(
            out,
            "serve      running at {} (pid {}); `agent-memory serve --status` gives the viewer's address",
            serve.url, serve.pid
        )?,
        None => writeln!(out, "serve      not running; `agent-memory serve` starts the viewer")?,
    }
    if status.events == 0 && status.hooks.iter().all(|w| w.runs == 0) {
        writeln!(
            out,
            "\nnothing captured yet: run `agent-memory install` to wire your agents (if you have \
             not), restart them and work as usual; `agent-memory doctor` checks the wiring"
        )?;
    }
    Ok(())
}

/// A size as a person reads it: `1.5 MiB`.
fn human_bytes(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

/// `agent-memory project list`: each project's name, events, key and root.
pub fn projects(projects: &[ProjectCount], as_json: bool) -> io::Result<()> {
    write_projects(&mut io::stdout().lock(), projects, as_json)
}

pub fn write_projects(
    out: &mut impl Write,
    projects: &[ProjectCount],
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, &projects);
    }
    let width = column_width(projects.iter().map(|p| p.name.as_str()), 8, 30);
    for p in projects {
        let outside = if p.outside { "  (no project: outside any repository)" } else { "" };
        writeln!(
            out,
            "{} {:>7} events  {}  {}{outside}",
            cell(&p.name, width),
            p.events,
            p.key,
            p.root
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use agent_memory_core::store::status::{AgentCount, HookWindow, LlmSpend};
    use expect_test::expect;

    use super::*;
    use crate::output::tests::{AT, rendered};
    use crate::report::{ModelCoverage, Reactions, ServeRunning};

    fn store_status() -> StoreStatus {
        StoreStatus {
            path: "/home/u/.agent-memory/memory.db".to_owned(),
            bytes: 3 * 1024 * 1024 / 2,
            schema_version: 9,
            events: 120,
            sessions: 4,
            open_sessions: 1,
            observations: 31,
            summaries: 4,
            to_distil: 1,
            memories: 1,
            candidates: 2,
            agents: vec![
                AgentCount {
                    agent: "claude-code".to_owned(),
                    sessions: 3,
                    events: 100,
                    last_event_at: Some(AT),
                },
                AgentCount {
                    agent: "codex".to_owned(),
                    sessions: 1,
                    events: 20,
                    last_event_at: None,
                },
            ],
            projects: vec![ProjectCount {
                name: "agent-memory".to_owned(),
                key: "github.com/u/agent-memory".to_owned(),
                root: "/src/agent-memory".to_owned(),
                sessions: 4,
                events: 120,
                outside: false,
            }],
            hooks: vec![HookWindow {
                window: "24h".to_owned(),
                runs: 130,
                outcomes: BTreeMap::from([("stored".to_owned(), 120), ("skipped".to_owned(), 10)]),
                filtered: BTreeMap::from([("low_value".to_owned(), 6)]),
                error_rate: 0.0,
                p50_ms: 4.25,
                p99_ms: 31.0,
            }],
            llm_spend: vec![LlmSpend {
                day: "2026-01-02".to_owned(),
                provider: "anthropic".to_owned(),
                tokens: 12_345,
                calls: 7,
            }],
        }
    }

    #[test]
    fn a_busy_store() {
        let spool = SpoolDepth { files: 2, records: 3, claimed: 0, quarantined: 1 };
        let activity = Activity {
            last_work_pass_ms: Some(AT),
            search_models: vec![
                ModelCoverage { model: "potion-base-8m".to_owned(), encoded: 40, waiting: 0 },
                ModelCoverage { model: "splade-tiny".to_owned(), encoded: 28, waiting: 12 },
            ],
            events_to_index: 1,
            serve: Some(ServeRunning { url: "http://127.0.0.1:37777".to_owned(), pid: 42 }),
            reactions: Some(Reactions {
                configured: 3,
                unusable: vec![
                    "reaction \"chat\" needs exactly one of `run`, `append` and `post`".to_owned(),
                ],
                last_day: agent_memory_core::react::Outcomes {
                    fired: 4,
                    failed: 1,
                    last_failure: Some(
                        "security on o12: notify-send exited with status 1: no display".to_owned(),
                    ),
                },
            }),
        };
        expect![[r#"
            store      /home/u/.agent-memory/memory.db  (1.5 MiB, schema 9)
            events     120 in 4 sessions (1 open)
            distilled  31 observations, 4 summaries; 1 session to distil; last work pass <time>
            memory     1 memory, 2 candidates to review (`agent-memory review`)
            agents     claude-code      100 events     3 sessions  last <time>
                       codex             20 events     1 session   last -
            projects   agent-memory     120 events     4 sessions  github.com/u/agent-memory
            hooks 24h  130 runs, 0.0% errors, p50 4.2 ms, p99 31.0 ms  (skipped 10, stored 120)
            filtered 24h  too_short 0, low_value 6, near_duplicate 0
            llm        2026-01-02  anthropic              12345 tokens in 7 calls
            spool      3 events waiting in 2 files, 1 file set aside (.bad)
                       run `agent-memory recover` to store them now
            search     potion-base-8m 40 of 40 items, splade-tiny 28 of 40 items; 1 older event to index again (`agent-memory work` catches up)
            reactions  3 configured; last 24 h: 4 ran, 1 failed (last: security on o12: notify-send exited with status 1: no display)
                       not run: reaction "chat" needs exactly one of `run`, `append` and `post`
            serve      running at http://127.0.0.1:37777 (pid 42); `agent-memory serve --status` gives the viewer's address
        "#]]
        .assert_eq(&rendered(|out| write_status(out, &store_status(), &spool, &activity, false)));
    }

    /// The display column where `marker` starts on `line`.
    fn column_of(line: &str, marker: &str) -> usize {
        crate::output::width(&line[..line.find(marker).expect(marker)])
    }

    #[test]
    fn wide_and_long_names_keep_the_columns_straight() {
        let mut status = store_status();
        status.agents[1].agent = "a-very-long-agent-name".to_owned();
        status.projects.push(ProjectCount {
            name: "支付服务".to_owned(),
            key: "path:/src/支付服务".to_owned(),
            root: "/src/支付服务".to_owned(),
            sessions: 1,
            events: 7,
            outside: false,
        });
        // Folders that are no project come last, as one line.
        for (root, events) in [("/", 5), ("/tmp/scratch", 4)] {
            status.projects.insert(
                0,
                ProjectCount {
                    name: root.rsplit('/').next().unwrap_or(root).to_owned(),
                    key: format!("path:{root}"),
                    root: root.to_owned(),
                    sessions: 1,
                    events,
                    outside: true,
                },
            );
        }
        let activity = Activity::default();
        let text =
            rendered(|out| write_status(out, &status, &SpoolDepth::default(), &activity, false));
        let rows: Vec<&str> =
            text.lines().filter(|l| l.contains(" events ") && !l.contains("waiting")).collect();
        assert_eq!(rows.len(), 5, "{text}");
        let at = column_of(rows[0], " events ");
        for row in &rows {
            assert_eq!(column_of(row, " events "), at, "{text}");
        }
        expect![[r#"
            agents     claude-code                100 events     3 sessions  last <time>
                       a-very-long-agent-name      20 events     1 session   last -
            projects   agent-memory               120 events     4 sessions  github.com/u/agent-memory
                       支付服务                     7 events     1 session   path:/src/支付服务
                       no project                   9 events     2 sessions  outside any repository: /tmp/scratch, /
        "#]]
        .assert_eq(&(rows.join("\n") + "\n"));
        let projects = rendered(|out| write_projects(out, &status.projects, false));
        let lines: Vec<&str> = projects.lines().collect();
        assert_eq!(column_of(lines[0], " events"), column_of(lines[1], " events"), "{projects}");
        assert!(lines[0].ends_with("/tmp/scratch  (no project: outside any repository)"));
    }

    #[test]
    fn an_empty_store_says_how_to_start() {
        let empty = StoreStatus {
            bytes: 4096,
            events: 0,
            sessions: 0,
            open_sessions: 0,
            observations: 0,
            summaries: 0,
            to_distil: 0,
            memories: 0,
            candidates: 0,
            agents: Vec::new(),
            projects: Vec::new(),
            hooks: Vec::new(),
            llm_spend: Vec::new(),
            ..store_status()
        };
        let activity = Activity::default();
        expect![[r#"
            store      /home/u/.agent-memory/memory.db  (4.0 KiB, schema 9)
            events     0 in 0 sessions (0 open)
            distilled  0 observations, 0 summaries; no work pass yet (`agent-memory work`)
            memory     0 memories
            spool      0 events waiting in 0 files
            search     full text only (`agent-memory model list` shows the models to install)
            serve      not running; `agent-memory serve` starts the viewer

            nothing captured yet: run `agent-memory install` to wire your agents (if you have not), restart them and work as usual; `agent-memory doctor` checks the wiring
        "#]]
        .assert_eq(&rendered(|out| write_status(out, &empty, &SpoolDepth::default(), &activity, false)));
    }
}
