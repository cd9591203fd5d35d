//! `agent-memory mcp`: serve memory to an MCP client over stdio. The one command that starts
//! an async runtime, a current-thread one that lives as long as the connection; the hook path
//! never reaches this module. Stdout belongs to the JSON-RPC transport: nothing here prints,
//! and `cmd::run` sends this command's logs to the log file.

use agent_memory_serve::mcp::serve_stdio;
use anyhow::Context as _;

use super::Context;

pub fn run(ctx: &Context) -> anyhow::Result<()> {
    let settings = ctx.serve_settings()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    runtime.block_on(serve_stdio(settings))?;
    Ok(())
}
