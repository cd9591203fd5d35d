//! Any bytes as any agent's hook payload, at every event it sends: capture (sanitize, adapter,
//! filter) never panics, and nothing it keeps carries the injected-context fence.
#![no_main]

use agent_memory_core::adapter::AGENTS;
use agent_memory_core::capture::{self, Stage};
use agent_memory_core::config::Config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let config = Config::default();
    let Some((&pick, bytes)) = data.split_first() else { return };
    let spec = &AGENTS[usize::from(pick) % AGENTS.len()];
    let events: Vec<&str> = spec.captured().map(|(name, _)| name).chain(spec.answered()).collect();
    let event = events.get(usize::from(pick) / AGENTS.len() % events.len().max(1)).copied();
    for truncated in [None, Some(bytes.len() as u64 + 1)] {
        let stage =
            capture::prepare(spec.name, event.unwrap_or(""), "u", 0, bytes, truncated, &config);
        if let Stage::Ready { event, .. } = stage {
            let text = format!("{} {} {}", event.summary, event.body, event.payload);
            assert!(!text.to_lowercase().contains("</agent-memory-context>"), "{text}");
        }
    }
});
