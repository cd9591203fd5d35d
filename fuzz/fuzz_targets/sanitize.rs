//! Any text through the sanitizer (fence, `<private>` spans, redaction): no panic, no fence tag
//! left in any spelling the fence reads (entities, look-alikes, invisible characters), and
//! wrapped text holds no tag but the two real ones.
#![no_main]

use agent_memory_core::capture::{self, fence};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let clean = capture::sanitize_text(&text);
    assert!(!fence::holds_tag(&clean), "a tag survived the sanitizer: {clean:?}");
    let _ = capture::sanitize_text(&clean);
    assert!(!fence::holds_tag(&fence::neutralize(&text)));
    let wrapped = fence::wrap(&text);
    assert!(wrapped.starts_with(fence::SENTINEL_OPEN) && wrapped.ends_with(fence::SENTINEL_CLOSE));
    let inner = &wrapped[fence::SENTINEL_OPEN.len()..wrapped.len() - fence::SENTINEL_CLOSE.len()];
    assert!(!fence::holds_tag(inner), "a tag inside the fence: {wrapped:?}");
    // What capture strips of an echo is the whole block.
    assert!(!fence::holds_tag(&fence::strip_injected(&wrapped)));
    let (redacted, _) = capture::redact::redactor().redact(&text);
    let _ = capture::redact::redactor().redact(&redacted);
});
