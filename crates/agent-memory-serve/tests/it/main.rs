//! The one integration-test binary of agent-memory-serve (link time dominates on 2 cores): one
//! module per area.

mod connections;
mod llm;
