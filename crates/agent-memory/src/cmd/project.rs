//! `agent-memory project`: list projects; register a root.

use agent_memory_core::project;

use super::Context;
use crate::cli::ProjectCommand;
use crate::output;

pub fn run(ctx: &Context, command: ProjectCommand) -> anyhow::Result<()> {
    let mut store = ctx.store()?;
    match command {
        ProjectCommand::List(args) => {
            let status = store.status(&[])?;
            output::projects(&status.projects, args.json)?;
        }
        ProjectCommand::Add { path } => {
            let path = match path {
                Some(p) => p,
                None => std::env::current_dir()?,
            };
            let root = std::fs::canonicalize(&path)
                .map_err(|e| anyhow::anyhow!("cannot register {}: {e}", path.display()))?;
            // Registering makes the root itself the project, whatever repository it sits in.
            let identity = project::ProjectIdentity {
                key: format!("path:{}", root.display()),
                name: root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                root,
                origin: None,
                branch: None,
            };
            store.register_root(&identity)?;
            output::line(&format!(
                "registered {} as project {}",
                identity.root.display(),
                identity.key
            ))?;
        }
    }
    Ok(())
}
