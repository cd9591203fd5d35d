//! Long-term memory on the command line: `memories` as a table, a memory after `remember`,
//! `forget`, approve or reject, and the mounted `pack`s. One memory is one line
//! ([`memory_line`]), which `tidy` shares.

use std::io::{self, Write};

use agent_memory_core::promote::Placed;
use agent_memory_core::store::memories::{Memory, Tier};
use serde::Serialize;

use super::{cell, json};

/// One memory as a line: id, tier, kind, importance, status, project, text.
pub fn memory_line(m: &Memory) -> String {
    let project = match m.tier {
        Tier::L3 => "global".to_owned(),
        _ => m.project_name.clone().unwrap_or_else(|| "-".into()),
    };
    let id = format!("m{}", m.id);
    let importance = m.importance.to_string();
    memory_row([
        &id,
        m.tier.as_str(),
        m.kind.as_str(),
        &importance,
        m.status.as_str(),
        &project,
        &m.text,
    ])
}

/// The columns of [`memory_line`], header and rows alike, so the two cannot drift apart.
fn memory_row([id, tier, kind, importance, status, project, text]: [&str; 7]) -> String {
    format!(
        "{} {} {} {:>3}  {} {} {text}",
        cell(id, 6),
        cell(tier, 4),
        cell(kind, 10),
        importance,
        cell(status, 10),
        cell(project, 14),
    )
}

/// `agent-memory memories`: a header, then a line per memory.
pub fn memories(list: &[Memory], as_json: bool) -> io::Result<()> {
    write_memories(&mut io::stdout().lock(), list, as_json)
}

pub fn write_memories(out: &mut impl Write, list: &[Memory], as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, &list);
    }
    if list.is_empty() {
        return writeln!(
            out,
            "no memories yet: `agent-memory work` offers candidates, `agent-memory remember` adds one"
        );
    }
    let header = memory_row(["id", "tier", "kind", "imp", "status", "project", "text"]);
    writeln!(out, "{header}")?;
    for m in list {
        writeln!(out, "{}", memory_line(m))?;
    }
    Ok(())
}

/// A memory after a change: `forgot m12 …`.
pub fn memory_changed(verb: &str, m: &Memory, as_json: bool) -> io::Result<()> {
    write_memory_changed(&mut io::stdout().lock(), verb, m, as_json)
}

pub fn write_memory_changed(
    out: &mut impl Write,
    verb: &str,
    m: &Memory,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, m);
    }
    writeln!(out, "{verb} m{}: {}", m.id, m.text)
}

/// Memories after the same change (`forget m3 m7`): a line each, or a JSON list.
pub fn memories_changed(verb: &str, list: &[Memory], as_json: bool) -> io::Result<()> {
    let mut out = io::stdout().lock();
    if as_json {
        return json(&mut out, &list);
    }
    for m in list {
        write_memory_changed(&mut out, verb, m, false)?;
    }
    Ok(())
}

/// Observations and summaries forgotten (`forget o12 s3`): a line each, or a JSON list of
/// their ids.
pub fn items_forgotten(ids: &[String], as_json: bool) -> io::Result<()> {
    let mut out = io::stdout().lock();
    if as_json {
        return json(&mut out, &ids);
    }
    for id in ids {
        writeln!(out, "forgot {id}")?;
    }
    Ok(())
}

#[derive(Serialize)]
struct RememberedJson<'a> {
    memory: &'a Memory,
    #[serde(flatten)]
    placed: &'a Placed,
}

/// `agent-memory remember`: where the memory went, or that it was already known.
pub fn remembered(m: &Memory, placed: &Placed, as_json: bool) -> io::Result<()> {
    write_remembered(&mut io::stdout().lock(), m, placed, as_json)
}

pub fn write_remembered(
    out: &mut impl Write,
    m: &Memory,
    placed: &Placed,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, &RememberedJson { memory: m, placed });
    }
    match placed {
        Placed::Merged { .. } => writeln!(out, "already remembered as m{}: {}", m.id, m.text),
        _ => {
            writeln!(
                out,
                "remembered m{} in {} as a {}: {}",
                m.id,
                scope(m),
                m.kind.as_str(),
                m.text
            )?;
            if let Placed::New { supersedes: Some(old), .. } = placed {
                writeln!(out, "  it supersedes m{old}")?;
            }
            Ok(())
        }
    }
}

/// An approved candidate, and the older decision it retired.
#[derive(Serialize)]
struct ApprovedJson<'a> {
    memory: &'a Memory,
    superseded: Option<&'a Memory>,
}

/// `review --approve`: the memory now active, and the one it superseded, if any.
pub fn approved(m: &Memory, superseded: Option<&Memory>, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&mut io::stdout().lock(), &ApprovedJson { memory: m, superseded });
    }
    write_approved(&mut io::stdout().lock(), m, superseded)
}

pub fn write_approved(
    out: &mut impl Write,
    m: &Memory,
    superseded: Option<&Memory>,
) -> io::Result<()> {
    writeln!(out, "approved m{} into {}: {}", m.id, scope(m), m.text)?;
    if let Some(old) = superseded {
        writeln!(out, "  superseded m{}: {}", old.id, old.text)?;
    }
    Ok(())
}

/// Which long-term memory a reviewed memory lives in.
fn scope(m: &Memory) -> &'static str {
    if m.project.is_none() { "global memory (L3)" } else { "project memory (L2)" }
}

/// `agent-memory pack list`: each mounted pack, how many of its memories are active and how
/// many wait for review.
pub fn packs(packs: &[(String, i64, i64)], as_json: bool) -> io::Result<()> {
    write_packs(&mut io::stdout().lock(), packs, as_json)
}

pub fn write_packs(
    out: &mut impl Write,
    packs: &[(String, i64, i64)],
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        let list: Vec<serde_json::Value> = packs
            .iter()
            .map(|(name, active, waiting)| {
                serde_json::json!({ "name": name, "active": active, "candidates": waiting })
            })
            .collect();
        return json(out, &list);
    }
    if packs.is_empty() {
        return writeln!(out, "no packs mounted; `agent-memory pack add FILE` mounts one");
    }
    for (name, active, waiting) in packs {
        write!(out, "{} {active} active memories", cell(name, 24))?;
        if *waiting > 0 {
            write!(out, ", {waiting} waiting for `agent-memory pack approve {name}`")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use agent_memory_core::store::memories::{Kind, Status};
    use expect_test::expect;

    use super::*;
    use crate::output::tests::{memory, rendered};

    #[test]
    fn a_table_of_memories() {
        let mut global = memory(12, "Answer in British English");
        global.tier = Tier::L3;
        global.kind = Kind::Preference;
        global.project = None;
        global.project_name = None;
        global.importance = 10;
        let mut candidate = memory(3, "The flaky login test waits for the socket");
        candidate.tier = Tier::L1;
        candidate.kind = Kind::Problem;
        candidate.status = Status::Candidate;
        candidate.project_name = Some("a-project-with-a-long-name".to_owned());
        let mut chinese = memory(9, "回调要先校验签名");
        chinese.project_name = Some("支付服务".to_owned());
        let list = [memory(7, "Use jiff for every time in the store"), global, candidate, chinese];
        expect![[r#"
            id     tier kind       imp  status     project        text
            m7     L2   decision     7  active     agent-memory   Use jiff for every time in the store
            m12    L3   preference  10  active     global         Answer in British English
            m3     L1   problem      7  candidate  a-project-wit… The flaky login test waits for the socket
            m9     L2   decision     7  active     支付服务       回调要先校验签名
        "#]]
        .assert_eq(&rendered(|out| write_memories(out, &list, false)));
        expect![[r#"
            no memories yet: `agent-memory work` offers candidates, `agent-memory remember` adds one
        "#]]
        .assert_eq(&rendered(|out| write_memories(out, &[], false)));
    }

    #[test]
    fn changes_to_a_memory() {
        let m = memory(7, "Use jiff for every time in the store");
        let older = memory(3, "Use chrono for time");
        let text = rendered(|out| {
            write_memory_changed(out, "forgot", &m, false)?;
            write_approved(out, &m, Some(&older))?;
            write_remembered(out, &m, &Placed::New { id: 7, supersedes: Some(3) }, false)?;
            write_remembered(out, &m, &Placed::Merged { into: 7 }, false)
        });
        expect![[r#"
            forgot m7: Use jiff for every time in the store
            approved m7 into project memory (L2): Use jiff for every time in the store
              superseded m3: Use chrono for time
            remembered m7 in project memory (L2) as a decision: Use jiff for every time in the store
              it supersedes m3
            already remembered as m7: Use jiff for every time in the store
        "#]]
        .assert_eq(&text);
    }
}
