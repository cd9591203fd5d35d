//! `agent-memory export`: the store as JSONL, to a file (written atomically) or stdout.

use std::io::Write;

use agent_memory_core::store::transfer::ExportFilter;
use agent_memory_core::{fsutil, time};
use anyhow::Context as _;

use super::{Context, parse_time};
use crate::cli::ExportArgs;
use crate::output;

pub fn run(ctx: &Context, args: ExportArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let filter = ExportFilter {
        agent: args.agent.map(|a| agent_memory_core::adapter::canonical_agent(&a)),
        since_ms: parse_time(args.since.as_deref())?,
    };
    match args.output {
        Some(path) => {
            let mut buffer = Vec::new();
            let report = store.export(&mut buffer, &filter, time::now_ms())?;
            fsutil::write_atomic(&path, &buffer)
                .with_context(|| format!("cannot write {}", path.display()))?;
            output::transfer("exported", &report, false)?;
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            store.export(&mut out, &filter, time::now_ms())?;
            out.flush()?;
        }
    }
    Ok(())
}
