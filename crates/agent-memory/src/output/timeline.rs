//! `agent-memory timeline`: the project's observations around an item, one line each, the
//! anchor marked with `→`.

use std::io::{self, Write};

use agent_memory_core::recall::{ItemId, Timeline};
use agent_memory_core::time::format_local;

use super::{cell, clip, json};

pub fn timeline(timeline: &Timeline, as_json: bool) -> io::Result<()> {
    write_timeline(&mut io::stdout().lock(), timeline, as_json)
}

pub fn write_timeline(out: &mut impl Write, timeline: &Timeline, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, &timeline.items);
    }
    if timeline.items.is_empty() {
        return writeln!(
            out,
            "no observations around {} yet; run `agent-memory work`",
            format_local(timeline.at_ms)
        );
    }
    let marked = match timeline.anchor {
        ItemId::Observation(id) => Some(id),
        _ => None,
    };
    for item in &timeline.items {
        let mark = if Some(item.id) == marked { "→" } else { " " };
        writeln!(
            out,
            "{mark} {:<7} {}  {} [{}] {}  (~{} tokens)",
            ItemId::Observation(item.id).to_string(),
            format_local(item.at_ms),
            cell(&item.agent, 11),
            item.kind,
            clip(&item.title, 100),
            item.tokens
        )?;
    }
    Ok(())
}
