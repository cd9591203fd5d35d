//! `agent-memory brief`: a project's session-start briefing, printed as Markdown or kept in
//! `<project root>/.agent-memory/brief.md` for agents and setups that cannot take injected
//! context (their instructions file includes it). `--write` records the ask: `agent-memory work`
//! refreshes the files asked for that still exist, and no other.

use agent_memory_core::{inject, project};
use anyhow::Context as _;

use super::Context;
use crate::cli::BriefArgs;
use crate::output;
use crate::report::BriefAnswer;

pub fn run(ctx: &Context, args: BriefArgs) -> anyhow::Result<()> {
    let named = args.project.is_some();
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
    let mut store = ctx.store()?;
    let roots = store.registered_roots()?;
    let project = project::resolve(&dir, &roots);
    if args.write {
        if !named {
            super::within_a_project(
                &project,
                &roots,
                "run it inside a repository, or pass --project with a project's folder",
            )?;
        }
        let markdown =
            inject::brief_file_markdown(&store, &ctx.home, &ctx.config, &project, args.global)?;
        let changed = inject::brief_file::write(
            &project.root,
            markdown.as_deref(),
            &ctx.config.distil.language,
        )?;
        store.keep_brief_file(&project, args.global)?;
        let file = inject::brief_file::path(&project.root);
        if args.json {
            let answer = BriefAnswer {
                project: project.name,
                markdown,
                file: Some(file),
                changed: Some(changed),
            };
            output::json_value(&answer)?;
        } else {
            output::brief_written(&file, changed)?;
        }
        return Ok(());
    }
    let markdown = inject::briefing_markdown(&store, &ctx.home, &ctx.config, &project, None)?;
    if args.json {
        let answer = BriefAnswer { project: project.name, markdown, file: None, changed: None };
        output::json_value(&answer)?;
    } else {
        output::brief(markdown.as_deref(), &project.name)?;
    }
    Ok(())
}
