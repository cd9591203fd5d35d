//! agent-memory-core: the synchronous stages of agent-memory.
//!
//! Data flows one way, top to bottom, as ARCHITECTURE.md's bird's-eye view draws it. [`hook`] is
//! the hook's use case: [`adapter`] turns each agent's hook payload into a neutral [`event::Event`]
//! and is the one registry of agents; [`capture`] sanitizes (redaction, `<private>` spans, injected
//! context), filters and writes it, falling back to a spool; [`store`] owns the SQLite file, its
//! migrations and full-text search; [`project`] says which project a directory belongs to;
//! [`distil`] turns a session's events into observations and a summary, offline or with a
//! model; [`promote`] turns observations and summaries into long-term memory candidates;
//! [`embed`] is the seam to embedding models; [`work`] runs the pass that does all of that
//! after the hook; [`recall`] is the one read API (search, timeline, get) of every front end;
//! [`search`] holds search's ranking policy, which `store` calls; [`inject`] owns what goes back
//! to agents unasked; [`install`] wires agents' configs to the
//! hook and the MCP server; [`vault`] keeps reviewed memories as notes in an Obsidian vault, in
//! both directions.
//!
//! Architecture invariant: this crate starts no async runtime, opens no sockets and prints
//! nothing. The hook path runs entirely inside it, and a test checks its dependency tree.

pub mod adapter;
pub mod anchor;
pub mod branch;
pub mod capture;
pub mod config;
pub mod distil;
pub mod embed;
pub mod event;
pub mod fsutil;
pub mod health;
pub mod history;
pub mod hook;
pub mod inject;
pub mod install;
pub mod memory;
pub mod paths;
pub mod project;
pub mod promote;
pub mod react;
pub mod recall;
pub mod report;
pub mod search;
pub mod stated;
pub mod store;
pub mod text;
pub mod time;
pub mod tokens;
pub mod vault;
pub mod work;
