//! The registry's boundary, checked over the sources: after the adapter nothing reads an agent's
//! tool arguments (a tool use's `payload.input`), and outside `adapter/` and the agents' install
//! modules no code names an agent. Both would put knowledge of one agent where adding the next
//! agent would not find it.

use std::path::{Path, PathBuf};

use super::AGENTS;

/// Every `.rs` file under `dir`, with its path relative to `src/`.
fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs")
            && let Ok(text) = std::fs::read_to_string(&path)
        {
            out.push((path, text));
        }
    }
}

/// The code of a file that ships: up to its test module (tests sit at the end of each file),
/// without comment lines.
fn shipped_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let end = text.find("\n#[cfg(test)]").unwrap_or(text.len());
    text[..end]
        .lines()
        .enumerate()
        .map(|(n, line)| (n + 1, line))
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
}

fn core_sources() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files
        .into_iter()
        .map(|(path, text)| {
            let rel = path.strip_prefix(&src).unwrap_or(&path).to_string_lossy().into_owned();
            (rel, text)
        })
        .collect()
}

fn is_adapter(rel: &str) -> bool {
    rel == "adapter.rs" || rel.starts_with("adapter/")
}

#[test]
fn only_adapters_read_a_tool_calls_arguments() {
    const READS: &[&str] = &[r#"["input"]"#, r#".get("input")"#, r#"pointer("/input"#, ".input."];
    let mut found = Vec::new();
    for (rel, text) in core_sources().iter().filter(|(rel, _)| !is_adapter(rel)) {
        for (n, line) in shipped_lines(text) {
            if READS.iter().any(|read| line.contains(read)) && line.contains("payload") {
                found.push(format!("{rel}:{n}: {}", line.trim()));
            }
            // A payload's input read in two steps (`let input = &payload…; input.get(…)`).
            if line.contains(r#""input""#) {
                found.push(format!("{rel}:{n}: {}", line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "read the event's facts instead:\n{}", found.join("\n"));
}

#[test]
fn no_module_outside_the_registry_names_an_agent() {
    let names: Vec<String> = AGENTS
        .iter()
        .flat_map(|spec| std::iter::once(spec.name).chain(spec.aliases.iter().copied()))
        .chain(AGENTS.iter().map(|spec| spec.program))
        .map(|name| format!("\"{name}\""))
        .collect();
    // The agents' install modules and the files they ship may name their own agent.
    let install_modules: Vec<String> =
        ["claude_code", "codex", "gemini", "opencode", "copilot", "hermes"]
            .iter()
            .map(|module| format!("install/{module}"))
            .collect();
    let mut found = Vec::new();
    for (rel, text) in core_sources() {
        if is_adapter(&rel) || install_modules.iter().any(|m| rel.starts_with(m.as_str())) {
            continue;
        }
        for (n, line) in shipped_lines(&text) {
            if let Some(name) = names.iter().find(|name| line.contains(name.as_str())) {
                found.push(format!("{rel}:{n}: {name}: {}", line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "ask the agent registry instead:\n{}", found.join("\n"));
}

/// What the store derives for an event written before the facts existed is what the adapter
/// filled in: the same function reads the same arguments.
#[test]
fn derived_facts_match_the_adapters() {
    use serde_json::json;

    use crate::event::CaptureContext;

    let calls = [
        (
            "claude-code",
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": "", "stderr": "boom", "interrupted": true}}),
        ),
        (
            "codex",
            json!({"tool_name": "exec_command", "tool_input": {"cmd": ["git", "status"]}, "tool_response": "clean"}),
        ),
        (
            "claude-code",
            json!({"tool_name": "Grep", "tool_input": {"pattern": "busy_timeout"}, "tool_response": {"filenames": ["a.rs"]}}),
        ),
        (
            "claude-code",
            json!({"tool_name": "Write", "tool_input": {"file_path": "/w/new.rs", "content": "x"}, "tool_response": "ok"}),
        ),
        (
            "codex",
            json!({"tool_name": "apply_patch", "tool_input": {"command": "*** Add File: b.rs\n+x\n*** Update File: a.rs\n"}, "tool_response": "ok"}),
        ),
        (
            "gemini",
            json!({"tool_name": "run_shell_command", "tool_input": {"command": "false"}, "tool_response": {"llmContent": "Exit Code: 1"}}),
        ),
        (
            "claude-code",
            json!({"tool_name": "Read", "tool_input": {"file_path": "/w/a.rs"}, "tool_response": "text"}),
        ),
    ];
    for (agent, mut payload) in calls {
        payload["session_id"] = json!("s");
        let ctx = CaptureContext { uid: "u", agent, event_name: "", received_at_ms: 0 };
        let event_name = if agent == "gemini" { "AfterTool" } else { "PostToolUse" };
        let ctx = CaptureContext { event_name, ..ctx };
        let Ok(super::Normalized::Event(event)) = super::normalize(&ctx, &payload) else {
            panic!("{agent}: {payload}")
        };
        // A successful read has nothing to say beyond its files.
        let read = event.tool_kind == Some(crate::event::ToolKind::Read);
        assert_eq!(event.facts.is_empty(), read, "{agent}: {payload}");
        let derived = super::tool_facts(event.kind, event.tool_kind, &event.files, &event.payload);
        assert_eq!(derived, event.facts, "{agent}: {payload}");
    }
}
