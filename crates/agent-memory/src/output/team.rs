//! `agent-memory team` and `search --team`: what a sync moved, what would leave the machine,
//! how team memory stands, and the team's memories the server found, each with who learned it.

use std::io::{self, Write};

use agent_memory_core::text::{clip, one_line};
use agent_memory_core::time::format_local;
use agent_memory_team::schema::Migrated;
use agent_memory_team::search::TeamHit;
use agent_memory_team::sync::{DryRun, SyncReport, TeamStatus};

use super::{count, json};

pub fn team_init(migrated: &Migrated, as_json: bool) -> io::Result<()> {
    write_team_init(&mut io::stdout().lock(), migrated, as_json)
}

pub fn write_team_init(out: &mut impl Write, migrated: &Migrated, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, migrated);
    }
    if migrated.from == migrated.to {
        writeln!(out, "team schema: already at version {}", migrated.to)
    } else {
        writeln!(out, "team schema: version {} → {}", migrated.from, migrated.to)?;
        writeln!(
            out,
            "add members as the database's owner: SELECT agent_memory.add_member('ROLE', 'TEAM', 'Display Name');"
        )
    }
}

pub fn team_sync(report: &SyncReport, as_json: bool) -> io::Result<()> {
    write_team_sync(&mut io::stdout().lock(), report, as_json)
}

pub fn write_team_sync(out: &mut impl Write, report: &SyncReport, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, report);
    }
    writeln!(
        out,
        "team sync: {} pushed; pulled {} new, {} changed ({} already here)",
        count(report.pushed, "memory"),
        report.pulled.added,
        report.pulled.updated,
        report.pulled.unchanged
    )?;
    let items = &report.items_pulled;
    if report.items_pushed + items.added + items.updated > 0 {
        writeln!(
            out,
            "observations and summaries: {} pushed; pulled {} new, {} changed",
            report.items_pushed, items.added, items.updated
        )?;
    }
    for conflict in &report.conflicts {
        writeln!(
            out,
            "conflict: m{} was changed on another of your machines too; both versions are kept (this one marked as the conflict copy)",
            conflict.id
        )?;
    }
    Ok(())
}

pub fn team_dry_run(rows: &DryRun, as_json: bool) -> io::Result<()> {
    write_team_dry_run(&mut io::stdout().lock(), rows, as_json)
}

pub fn write_team_dry_run(out: &mut impl Write, rows: &DryRun, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, &rows);
    }
    writeln!(
        out,
        "would leave this machine: {} (nothing sent)",
        count(rows.memories.len(), "memory")
    )?;
    for row in &rows.memories {
        writeln!(
            out,
            "m{} {} {} {} [{}] {}",
            row.id,
            row.tier.as_str(),
            row.status.as_str(),
            row.project_key.as_deref().unwrap_or("global"),
            row.kind.as_str(),
            clip(&one_line(&row.text), 120)
        )?;
    }
    if rows.items.is_empty() {
        return Ok(());
    }
    writeln!(out, "and {} observations and summaries:", rows.items.len())?;
    for item in &rows.items {
        let id = format!("{}{}", item.kind.letter(), item.id);
        if item.forgotten {
            writeln!(out, "{} forgotten (a tombstone: the team's copies go)", item.kind.as_str())?;
            continue;
        }
        writeln!(
            out,
            "{id} {} [{}] {}",
            item.project_key,
            item.item_type,
            clip(&one_line(&item.text()), 120)
        )?;
    }
    Ok(())
}

pub fn team_status(status: &TeamStatus, as_json: bool) -> io::Result<()> {
    write_team_status(&mut io::stdout().lock(), status, as_json)
}

pub fn write_team_status(
    out: &mut impl Write,
    status: &TeamStatus,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, status);
    }
    if !status.configured {
        writeln!(out, "team: not configured; set `[team] url` in config.toml (docs/team.md)")?;
    }
    writeln!(out, "member: {} on {}", status.identity.member, status.identity.machine)?;
    writeln!(out, "shared: {}", status.shared.join("; "))?;
    writeln!(out, "waiting to be pushed: {}", status.queue_depth)?;
    if status.items_queue_depth > 0 {
        writeln!(out, "observations and summaries waiting: {}", status.items_queue_depth)?;
    }
    writeln!(out, "from the team here: {}", count(status.from_team, "active memory"))?;
    if status.items_from_team > 0 {
        writeln!(out, "from the team here: {} observations and summaries", status.items_from_team)?;
    }
    match (status.last_sync_at, status.last_outcome.as_deref()) {
        (Some(at), Some("ok")) => writeln!(out, "last sync: {} (ok)", format_local(at))?,
        (Some(at), Some(error)) => {
            writeln!(out, "last sync: {} failed: {error}", format_local(at))?
        }
        _ => writeln!(out, "last sync: never")?,
    }
    if let (Some(at), Some(outcome)) = (status.last_success_at, status.last_outcome.as_deref())
        && outcome != "ok"
    {
        writeln!(out, "last successful sync: {}", format_local(at))?;
    }
    match &status.server {
        None => {}
        Some(Err(error)) => writeln!(out, "server: {error}")?,
        Some(Ok(server)) => {
            writeln!(
                out,
                "team: {} ({} and {} observations and summaries on the server)",
                server.team,
                count(server.memories, "active memory"),
                server.items
            )?;
            let members: Vec<String> = server
                .members
                .iter()
                .map(|(role, name)| match name {
                    Some(name) if name != role => format!("{name} ({role})"),
                    _ => role.clone(),
                })
                .collect();
            writeln!(out, "members: {}", members.join(", "))?;
        }
    }
    Ok(())
}

pub fn team_search(hits: &[TeamHit], as_json: bool) -> io::Result<()> {
    write_team_search(&mut io::stdout().lock(), hits, as_json)
}

pub fn write_team_search(out: &mut impl Write, hits: &[TeamHit], as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, &hits);
    }
    if hits.is_empty() {
        return writeln!(out, "no team memory matches");
    }
    for hit in hits {
        let by = match hit.agent.as_str() {
            "" | "remembered" | "distilled" | "imported" => hit.member.clone(),
            agent => format!("{}, {agent}", hit.member),
        };
        writeln!(
            out,
            "{} {} [{}] {} — {} ({by})",
            format_local(hit.updated_at),
            hit.project.as_deref().unwrap_or("global"),
            hit.kind,
            clip(&one_line(&hit.text), 200),
            hit.tier,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use agent_memory_core::store::team::Applied;
    use agent_memory_team::sync::{Conflict, Identity, ServerStatus};
    use expect_test::expect;

    use super::*;
    use crate::output::tests::{AT, rendered};

    #[test]
    fn a_sync_with_a_conflict_and_the_status_with_the_server() {
        let report = SyncReport {
            pushed: 3,
            conflicts: vec![Conflict { id: 12, gid: "g2".into(), beside: "g1".into() }],
            pulled: Applied { added: 2, updated: 1, unchanged: 4 },
            cursor: 9,
            items_pushed: 1,
            items_pulled: Default::default(),
        };
        expect![[r#"
            team sync: 3 memories pushed; pulled 2 new, 1 changed (4 already here)
            observations and summaries: 1 pushed; pulled 0 new, 0 changed
            conflict: m12 was changed on another of your machines too; both versions are kept (this one marked as the conflict copy)
        "#]]
        .assert_eq(&rendered(|out| write_team_sync(out, &report, false)));
        let status = TeamStatus {
            configured: true,
            identity: Identity { member: "Alice".into(), machine: "laptop".into() },
            shared: vec!["reviewed project memory (L2) of projects with a git origin".into()],
            queue_depth: 0,
            items_queue_depth: 2,
            from_team: 5,
            items_from_team: 3,
            last_sync_at: Some(AT),
            last_outcome: Some("ok".into()),
            last_success_at: Some(AT),
            server: Some(Ok(ServerStatus {
                team: "core".into(),
                members: vec![("alice".into(), Some("Alice".into())), ("bob".into(), None)],
                memories: 7,
                items: 4,
            })),
        };
        expect![[r#"
            member: Alice on laptop
            shared: reviewed project memory (L2) of projects with a git origin
            waiting to be pushed: 0
            observations and summaries waiting: 2
            from the team here: 5 active memories
            from the team here: 3 observations and summaries
            last sync: <time> (ok)
            team: core (7 active memories and 4 observations and summaries on the server)
            members: Alice (alice), bob
        "#]]
        .assert_eq(&rendered(|out| write_team_status(out, &status, false)));
    }
}
