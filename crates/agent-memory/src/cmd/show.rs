//! `agent-memory show`: print observations (`o12`, or just `12`), summaries (`s3`) and events
//! (`e45`) and memories (`m7`) in full.

use super::Context;
use crate::cli::ShowArgs;
use crate::output::{self, Shown};

pub fn run(ctx: &Context, args: ShowArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let mut shown = Vec::new();
    for raw in &args.ids {
        let (kind, number) = parse_id(raw)?;
        let found = match kind {
            'o' => store.observation(number)?.map(Shown::Observation),
            's' => store.summary(number)?.map(Shown::Summary),
            'm' => agent_memory_core::store::memories::get(&store, number)?.map(Shown::Memory),
            _ => store.event(number)?.map(Shown::Event),
        };
        match found {
            Some(item) => shown.push(item),
            None => {
                anyhow::bail!("nothing stored under {raw}; ids come from `agent-memory search`")
            }
        }
    }
    output::show(&shown, args.json)?;
    Ok(())
}

/// `o12`/`12` → observation 12, `s3` → summary 3, `e45` → event 45 (a leading `#` is fine).
pub fn parse_id(raw: &str) -> anyhow::Result<(char, i64)> {
    agent_memory_core::store::distilled::parse_item_id(raw).ok_or_else(|| {
        anyhow::anyhow!(
            "`{raw}` is not an id: use o12 (observation), s3 (summary), e45 (event) or m7 (memory)"
        )
    })
}
