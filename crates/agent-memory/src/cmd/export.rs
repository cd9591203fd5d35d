//! `agent-memory export`: the store as JSONL, to a file (written atomically) or stdout; with
//! `--memories`, its long-term memories instead of its sessions and events; with `--all`, both.

use std::io::Write;

use agent_memory_core::store::memories::{Filter, Status};
use agent_memory_core::store::transfer::ExportFilter;
use agent_memory_core::{fsutil, recall, time};
use anyhow::Context as _;

use super::{Context, parse_time};
use crate::cli::ExportArgs;
use crate::output;

pub fn run(ctx: &Context, args: ExportArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let since = parse_time(args.since.as_deref())?;
    let agent = args.agent.as_deref().map(|raw| recall::known_agent(&store, raw)).transpose()?;
    let export = |out: &mut dyn Write| {
        let memories = Filter {
            statuses: vec![Status::Candidate, Status::Active],
            updated_since_ms: since,
            ..Filter::default()
        };
        if args.all {
            // A backup keeps what was rejected, replaced and forgotten too: restored, nothing
            // of it is proposed or briefed again.
            let every = Filter { statuses: Status::ALL.to_vec(), ..memories };
            store.export_all(out, &every, time::now_ms())
        } else if args.memories {
            store.export_memories(out, &memories, time::now_ms())
        } else {
            let filter = ExportFilter { agent: agent.clone(), since_ms: since };
            store.export(out, &filter, time::now_ms())
        }
    };
    match &args.output {
        Some(path) => {
            let mut buffer = Vec::new();
            let report = export(&mut buffer)?;
            fsutil::write_atomic(path, &buffer)
                .with_context(|| format!("cannot write {}", path.display()))?;
            output::transfer("exported", &report, false)?;
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            export(&mut out)?;
            out.flush()?;
        }
    }
    Ok(())
}
