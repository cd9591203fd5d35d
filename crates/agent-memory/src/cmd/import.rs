//! `agent-memory import`: a JSONL export back into the store, sanitized like captured input.
//! Memory in a file this store did not export arrives for review unless `--trust` is given.

use std::io::BufReader;

use agent_memory_core::capture;
use agent_memory_core::store::transfer::ImportTrust;
use anyhow::Context as _;

use super::Context;
use crate::cli::ImportArgs;
use crate::output;

pub fn run(ctx: &Context, args: ImportArgs) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    let trust = if args.trust { ImportTrust::Everything } else { ImportTrust::OwnExports };
    let report = match args.file.filter(|f| f.as_os_str() != "-") {
        Some(path) => {
            let file = std::fs::File::open(&path)
                .with_context(|| format!("cannot open {} for import", path.display()))?;
            store.import(
                &mut BufReader::new(file),
                &capture::sanitize_event,
                &sanitize_text,
                trust,
            )?
        }
        None => store.import(
            &mut std::io::stdin().lock(),
            &capture::sanitize_event,
            &sanitize_text,
            trust,
        )?,
    };
    ctx.leave_log_small(&store);
    output::transfer("imported", &report, args.json)?;
    Ok(())
}

/// A memory's text as capture would keep it: secrets redacted, `<private>` spans dropped.
fn sanitize_text(text: &str) -> String {
    capture::sanitize_text(text).into_owned()
}
