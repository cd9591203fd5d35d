//! `agent-memory report`: a project's weeks, from what the work pass distilled.

use agent_memory_core::report;

use super::{Context, parse_time};
use crate::cli::ReportArgs;
use crate::output;

pub fn run(ctx: &Context, args: ReportArgs) -> anyhow::Result<()> {
    let store = ctx.store()?;
    let asked = args.project.as_deref().unwrap_or(".");
    let found = match ctx.project_filter(&store, Some(asked)) {
        Ok(value) => report::project(&store, &value.unwrap_or_default())?,
        Err(_) => None,
    };
    let Some((id, name)) = found else {
        anyhow::bail!(
            "nothing is stored for the project {asked} yet; `agent-memory status` lists the projects"
        );
    };
    let since = parse_time(Some(&args.since))?.unwrap_or_default();
    let weeks = report::weeks(&store, Some(id), since)?;
    output::report::report(&name, &args.since, &weeks, args.json)?;
    Ok(())
}
