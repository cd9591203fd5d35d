//! `agent-memory log`: injections newest first, one line each (local time, agent, channel,
//! project, how many items, tokens, what the budget cut), then the ids of the items handed.

use std::io::{self, Write};

use agent_memory_core::store::injections::Injection;
use agent_memory_core::time::format_local;

use super::{cell, count, json};

pub fn injections(injections: &[Injection], as_json: bool) -> io::Result<()> {
    write_injections(&mut io::stdout().lock(), injections, as_json)
}

pub fn write_injections(
    out: &mut impl Write,
    injections: &[Injection],
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, &injections);
    }
    if injections.is_empty() {
        return writeln!(
            out,
            "nothing has been handed to an agent yet (or nothing matches); hooks record each \
             briefing, recall and file context here"
        );
    }
    for injection in injections {
        let items = count(injection.items.len(), "item");
        writeln!(
            out,
            "{}  {} {} {}  {items}, ~{} tokens, {} cut",
            format_local(injection.at_ms),
            cell(&injection.agent, 11),
            cell(&injection.channel, 12),
            cell(injection.project.as_deref().unwrap_or("-"), 16),
            injection.tokens,
            injection.cut,
        )?;
        if !injection.items.is_empty() {
            writeln!(out, "    {}", injection.items.join(" "))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::output::tests::{AT, rendered};

    #[test]
    fn one_line_per_injection_then_its_items() {
        let injection =
            |agent: &str, channel: &str, project: Option<&str>, items: &[&str]| Injection {
                id: 1,
                at_ms: AT,
                agent: agent.into(),
                session: Some("c-1".into()),
                project: project.map(str::to_owned),
                channel: channel.into(),
                items: items.iter().map(|i| (*i).to_owned()).collect(),
                tokens: 412,
                cut: 3,
            };
        let list = [
            injection("codex", "recall", Some("shop"), &["o12"]),
            injection("claude-code", "briefing", Some("shop"), &["m3", "s2", "o12", "o9"]),
            injection("cursor", "mcp-briefing", None, &[]),
        ];
        expect![[r#"
            <time>  codex       recall       shop              1 item, ~412 tokens, 3 cut
                o12
            <time>  claude-code briefing     shop              4 items, ~412 tokens, 3 cut
                m3 s2 o12 o9
            <time>  cursor      mcp-briefing -                 0 items, ~412 tokens, 3 cut
        "#]]
        .assert_eq(&rendered(|out| write_injections(out, &list, false)));
        let json = rendered(|out| write_injections(out, &list[..1], true));
        let value: serde_json::Value = serde_json::from_str(&json).expect("json");
        expect![[r#"[{"agent":"codex","at_ms":<at>,"channel":"recall","cut":3,"items":["o12"],"project":"shop","session":"c-1","tokens":412}]"#]]
            .assert_eq(&value.to_string().replace(&AT.to_string(), "<at>"));
    }
}
