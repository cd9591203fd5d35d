//! Any text as an Obsidian note: the front-matter parser never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (front, body) = agent_memory_core::vault::parse(&text);
    assert!(body.len() <= text.len() + 1);
    drop(front);
});
