//! Any text as the context handed to each agent, sanitized and wrapped as the hook does: every
//! agent's answer at every event it is answered at is one line of JSON (or nothing), it carries
//! the context whole, and no string in it holds a fence tag in any spelling an agent may render
//! (entities, look-alikes, invisible characters) but the fence's own two around the context.
#![no_main]

use agent_memory_core::adapter::AGENTS;
use agent_memory_core::capture::{self, fence};
use agent_memory_core::inject;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fn strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let context = fence::wrap(&capture::sanitize_text(&text));
    for spec in AGENTS {
        for event in spec.captured().map(|(event, _)| event).chain(spec.answered()) {
            let Some(line) = inject::answer(spec.name, event, &context) else { continue };
            assert!(!line.contains('\n'), "{} {event}: more than one line", spec.name);
            let value: Value = serde_json::from_str(&line).expect("the answer is JSON");
            let mut found = Vec::new();
            strings(&value, &mut found);
            assert_eq!(found.iter().filter(|s| **s == context).count(), 1, "{line}");
            for s in found {
                let inner = match s.strip_prefix(fence::SENTINEL_OPEN) {
                    Some(rest) => rest.strip_suffix(fence::SENTINEL_CLOSE).unwrap_or(rest),
                    None => s,
                };
                assert!(!fence::holds_tag(inner), "{} {event}: a tag in {s:?}", spec.name);
            }
        }
    }
});
