//! agent-memory-serve: the parts of agent-memory that need an async runtime — the local HTTP
//! API and live viewer, MCP over streamable HTTP, the background worker, vault and team sync.
//!
//! It is a separate crate so that the crate graph, not care, keeps tokio and sockets off the
//! hook path: `agent-memory-core` never depends on this crate or on anything it pulls in.
//! Nothing lives here yet; every server binds to loopback unless configured otherwise.
