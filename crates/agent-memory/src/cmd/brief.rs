//! `agent-memory brief`: a project's session-start briefing, printed as Markdown or kept in
//! `<project root>/.agent-memory/brief.md` for agents and setups that cannot take injected
//! context (their instructions file includes it). `agent-memory work` refreshes the files that
//! exist.

use agent_memory_core::{inject, project};
use anyhow::Context as _;

use super::Context;
use crate::cli::BriefArgs;
use crate::output;

pub fn run(ctx: &Context, args: BriefArgs) -> anyhow::Result<()> {
    let dir = match args.project {
        Some(dir) => dir,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    if !dir.is_dir() {
        anyhow::bail!(
            "{} is not a directory; pass --project with a directory inside the project",
            dir.display()
        );
    }
    let store = ctx.store()?;
    let project = project::resolve(&dir, &store.registered_roots()?);
    let markdown = inject::briefing_markdown(&store, &ctx.home, &ctx.config, &project.key, None)?;
    if args.write {
        let changed = inject::brief_file::write(
            &project.root,
            markdown.as_deref(),
            &ctx.config.distil.language,
        )?;
        output::brief_written(&inject::brief_file::path(&project.root), changed)?;
    } else {
        output::brief(markdown.as_deref(), &project.name)?;
    }
    Ok(())
}
