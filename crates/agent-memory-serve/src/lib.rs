//! agent-memory-serve: the parts of agent-memory that need an async runtime or the network —
//! the MCP server (stdio, and streamable HTTP under `serve`), the local HTTP API and live
//! viewer, the background worker, the LLM transports the distiller in core talks through, and
//! the actions of reactions (child processes and HTTP posts).
//!
//! It is a separate crate so that the crate graph, not care, keeps sockets and HTTP clients off
//! the hook path: `agent-memory-core` never depends on this crate or on anything it pulls in.
//! Every server binds to loopback unless configured otherwise.

pub mod child;
pub mod http;
pub mod instance;
pub mod llm;
pub mod mcp;
pub mod reactions;
pub mod worker;
