//! Any bytes as an agent's own transcript: every agent's transcript reader (line by line, as
//! a catch-up reads it), closing-answer reader (the tail, its first line cut anywhere) and
//! history reader of session files (line by line, then the end, as `history import` reads
//! them) hands back what it found or nothing, and never panics.
#![no_main]

use std::collections::HashSet;

use agent_memory_core::adapter::history::{FileContext, Layout};
use agent_memory_core::adapter::{AGENTS, TurnSpan};
use agent_memory_core::event::Event;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for spec in AGENTS {
        if let Some(read) = spec.transcript {
            let stop: Event = serde_json::from_value(serde_json::json!({
                "uid": "u", "agent": spec.name, "kind": "stop", "source_event": "Stop",
                "session": "s", "cwd": "/w/app", "at_ms": 1_000, "tool": null,
                "tool_kind": null, "summary": "stop", "body": "", "payload": {}, "files": [],
                "sensitivity": "normal", "transcript_path": "/tmp/transcript.jsonl"
            }))
            .expect("a stop event");
            let known = HashSet::new();
            for line in data.split(|b| *b == b'\n') {
                let _ = read(line, &stop, &known);
            }
        }
        if let Some(history) = spec.history
            && let Layout::Files { open, .. } = history.layout
        {
            let index = serde_json::json!({ "projects": { "/w/app": "app" } });
            let context = FileContext { path: "/tmp/app/chats/session.jsonl", index: Some(&index) };
            let mut reader = open(&context);
            let mut out = Vec::new();
            for line in data.split(|b| *b == b'\n') {
                let _ = reader.line(line, &mut out);
            }
            reader.finish(&mut out);
            let _ = reader.head();
        }
        if let Some(read) = spec.closing_answer {
            let _ = read(data, TurnSpan { began_ms: Some(0), stop_ms: 1_000 });
            let _ = read(data, TurnSpan { began_ms: None, stop_ms: i64::MAX });
            let _ = read(data, TurnSpan { began_ms: Some(i64::MIN), stop_ms: i64::MIN });
        }
    }
});
