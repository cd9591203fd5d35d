//! Codex's rollout file: the file changes its hooks never report.
//!
//! Codex runs no `PostToolUse` hook for a patch applied through `apply_patch` (its `PreToolUse`
//! fires, nothing after), yet its rollout file records each one as a `FileChange` item. This
//! turns one rollout line into the `PostToolUse` payload Codex would have sent, which capture
//! then passes through the same sanitize → adapter → finish steps as any hook input.
//!
//! Must not: read files or the store (capture hands it lines and the stored call ids), or fail:
//! a line it cannot read is not a file change.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::adapter::Unreported;
use crate::event::Event;

/// The `PostToolUse` payload Codex would have sent for one rollout line, when the line is a
/// completed file change that is not already stored; with the line's time.
pub(in crate::adapter) fn unreported(
    line: &[u8],
    stop: &Event,
    known: &HashSet<String>,
) -> Option<Unreported> {
    // Most lines are model traffic; only parse the ones that can be a file change.
    if !line.windows(12).any(|w| w == b"\"FileChange\"") {
        return None;
    }
    let value: Value = serde_json::from_slice(line).ok()?;
    let item = value.pointer("/payload/item")?;
    if value["type"] != "event_msg"
        || value.pointer("/payload/type")? != "item_completed"
        || item["type"] != "FileChange"
    {
        return None;
    }
    let call_id = item["id"].as_str().filter(|id| !id.is_empty())?;
    if known.contains(call_id) {
        return None;
    }
    let cwd = stop.cwd.as_deref().unwrap_or("");
    let patch = as_patch(item.get("changes")?.as_object()?, cwd);
    let status = item["status"].as_str().unwrap_or("completed");
    let mut output = item["stdout"].as_str().unwrap_or("").to_owned();
    if status != "completed" {
        let stderr = item["stderr"].as_str().unwrap_or("");
        output = format!("apply_patch {status}: {stderr}{output}");
    }
    let at_ms = value["timestamp"]
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .map_or(stop.at_ms, |t| t.as_millisecond());
    let payload = json!({
        "session_id": stop.session,
        "transcript_path": stop.transcript_path,
        "cwd": stop.cwd,
        "hook_event_name": "PostToolUse",
        "tool_name": "apply_patch",
        "tool_input": { "input": patch },
        "tool_response": output,
        "tool_use_id": call_id,
    });
    Some(Unreported { event_name: "PostToolUse", payload, at_ms, call_id: call_id.to_owned() })
}

/// A `FileChange`'s changes written back as the patch `apply_patch` takes, paths relative to
/// the working directory where they are inside it.
pub(super) fn as_patch(changes: &serde_json::Map<String, Value>, cwd: &str) -> String {
    let relative = |path: &str| -> String {
        let dir = Path::new(cwd);
        match Path::new(path).strip_prefix(dir) {
            Ok(rel) if !cwd.is_empty() => rel.display().to_string(),
            _ => path.to_owned(),
        }
    };
    let mut patch = String::from("*** Begin Patch\n");
    for (path, change) in changes {
        let path = relative(path);
        let text = |key: &str| change.get(key).and_then(Value::as_str).unwrap_or("");
        match change["type"].as_str().unwrap_or("update") {
            "add" => {
                patch.push_str(&format!("*** Add File: {path}\n"));
                for line in text("content").lines() {
                    patch.push_str(&format!("+{line}\n"));
                }
            }
            "delete" => patch.push_str(&format!("*** Delete File: {path}\n")),
            _ => {
                patch.push_str(&format!("*** Update File: {path}\n"));
                if let Some(to) = change.get("move_path").and_then(Value::as_str) {
                    patch.push_str(&format!("*** Move to: {}\n", relative(to)));
                }
                let diff = change.get("unified_diff").or_else(|| change.get("diff"));
                for line in diff.and_then(Value::as_str).unwrap_or("").lines() {
                    if !line.starts_with("--- ") && !line.starts_with("+++ ") {
                        patch.push_str(line);
                        patch.push('\n');
                    }
                }
            }
        }
    }
    patch.push_str("*** End Patch");
    patch
}
