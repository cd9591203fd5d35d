//! Any text through the sanitizer (fence, `<private>` spans, redaction): no panic, no fence tag
//! left, and wrapped text can never close the fence.
#![no_main]

use agent_memory_core::capture::{self, fence};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let clean = capture::sanitize_text(&text);
    let lower = clean.to_lowercase();
    assert!(
        !lower.contains("<agent-memory-context>") && !lower.contains("</agent-memory-context>")
    );
    let _ = capture::sanitize_text(&clean);
    let wrapped = fence::wrap(&text);
    let inner = &wrapped[fence::SENTINEL_OPEN.len()..wrapped.len() - fence::SENTINEL_CLOSE.len()];
    assert!(!inner.to_lowercase().contains("</agent-memory-context>"));
    let (redacted, _) = capture::redact::redactor().redact(&text);
    let _ = capture::redact::redactor().redact(&redacted);
});
