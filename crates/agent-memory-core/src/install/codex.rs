//! Codex CLI's wiring: hooks in `$CODEX_HOME/hooks.json`, and in `$CODEX_HOME/config.toml` the
//! trust entry each hook needs before Codex runs it (`[hooks.state."<hooks.json>:<event>:<group>:
//! <handler>"]` with `trusted_hash`) and the MCP server (`[mcp_servers.agent-memory]`). Codex
//! has no project-level configuration for either.
//!
//! The trust hash is Codex's own: sha256 over compact, key-sorted JSON of the hook's identity.
//! `config.toml` is edited with `toml_edit`, so the user's comments and layout survive.
//!
//! Must not: touch any hook, trust entry, server or key that is not ours.

use std::path::Path;

use sha2::{Digest, Sha256};
use toml_edit::{Array, DocumentMut, Item, Table, value};

use super::{
    ConfigError, FilePlan, HookSpec, Json, MCP_SERVER_NAME, Op, Place, ReadFile, Untrusted,
    file_plan, install_hook_groups, is_our_command, skill_plan, uninstall_hook_groups,
};

/// The agent's name in the registry, which its hook commands pass as `--agent`.
const AGENT: &str = "codex";

/// Codex clamps a `SessionEnd` hook's timeout to 1–3 s, and warns at every session when given
/// more: it gets what Codex accepts.
const SESSION_END_TIMEOUT_S: u64 = 3;

/// The events the Codex adapter stores or answers. Hooks are on by default in Codex (the
/// `hooks` feature; `codex_hooks` is its deprecated alias), so no feature flag is written.
pub const HOOKS: &[HookSpec] = &[
    HookSpec { event: "SessionStart", matcher: None, timeout_s: None },
    HookSpec { event: "UserPromptSubmit", matcher: None, timeout_s: None },
    HookSpec { event: "PostToolUse", matcher: None, timeout_s: None },
    HookSpec { event: "Stop", matcher: None, timeout_s: None },
    HookSpec { event: "SessionEnd", matcher: None, timeout_s: Some(SESSION_END_TIMEOUT_S) },
];

/// Events whose matcher Codex leaves out of the hash.
const NO_MATCHER: &[&str] = &["UserPromptSubmit", "Stop"];

/// One command hook's trust entry: its `hooks.state` key and its `trusted_hash`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustEntry {
    pub key: String,
    pub hash: String,
    pub command: String,
}

/// Adds (or removes) our hooks in `hooks.json`.
pub fn hooks_json(
    op: Op,
    text: Option<&str>,
    path: &Path,
    bin: &str,
) -> Result<String, ConfigError> {
    super::edit_json(path, text, |root| match op {
        Op::Install => install_hook_groups(root, path, AGENT, HOOKS, bin, 1),
        Op::Uninstall => uninstall_hook_groups(root, path, bin),
    })
}

/// Adds our trust entries and MCP server to `config.toml` (install), or removes them
/// (uninstall). `hooks_text` is `hooks.json` as Codex will read it after install, or as it is
/// before uninstall: the entries are keyed by where our hooks sit in it.
pub fn config_toml(
    op: Op,
    text: Option<&str>,
    path: &Path,
    hooks_path: &Path,
    hooks_text: Option<&str>,
    bin: &str,
) -> Result<String, ConfigError> {
    let original = text.unwrap_or("");
    let mut doc: DocumentMut =
        original.parse().map_err(|e: toml_edit::TomlError| ConfigError::Toml {
            path: path.to_owned(),
            message: e.to_string().trim().replace('\n', " "),
        })?;
    let ours: Vec<TrustEntry> = match hooks_text {
        Some(t) => trust_entries(hooks_path, t)?
            .into_iter()
            .filter(|e| is_our_command(&e.command, bin))
            .collect(),
        None => Vec::new(),
    };
    let table_err = |key: &str| super::shape(path, key, "a table");
    match op {
        Op::Install => {
            if !ours.is_empty() {
                let hooks = implicit_table(doc.as_table_mut(), "hooks")
                    .ok_or_else(|| table_err("hooks"))?;
                let state =
                    implicit_table(hooks, "state").ok_or_else(|| table_err("hooks.state"))?;
                for entry in &ours {
                    let shown = format!("hooks.state.\"{}\"", entry.key);
                    let slot = state.entry(&entry.key).or_insert_with(|| Item::Table(Table::new()));
                    let table = slot.as_table_mut().ok_or_else(|| table_err(&shown))?;
                    set_if_different(table, "enabled", value(true));
                    set_if_different(table, "trusted_hash", value(entry.hash.as_str()));
                }
            }
            let servers = implicit_table(doc.as_table_mut(), "mcp_servers")
                .ok_or_else(|| table_err("mcp_servers"))?;
            let slot = servers.entry(MCP_SERVER_NAME).or_insert_with(|| Item::Table(Table::new()));
            let server =
                slot.as_table_mut().ok_or_else(|| table_err("mcp_servers.agent-memory"))?;
            set_if_different(server, "command", value(bin));
            let mut args = Array::new();
            args.push("mcp");
            set_if_different(server, "args", value(args));
        }
        Op::Uninstall => {
            if let Some(hooks) = doc.get_mut("hooks").and_then(Item::as_table_mut) {
                if let Some(state) = hooks.get_mut("state").and_then(Item::as_table_mut) {
                    for entry in &ours {
                        state.remove(&entry.key);
                    }
                    if state.is_empty() {
                        hooks.remove("state");
                    }
                }
                if hooks.is_empty() {
                    doc.remove("hooks");
                }
            }
            if let Some(servers) = doc.get_mut("mcp_servers").and_then(Item::as_table_mut) {
                servers.remove(MCP_SERVER_NAME);
                if servers.is_empty() {
                    doc.remove("mcp_servers");
                }
            }
        }
    }
    let out = doc.to_string();
    // toml_edit gives the text back unchanged when nothing was edited; say so exactly.
    Ok(if out == original { original.to_owned() } else { out })
}

/// The table under `key`, created as an implicit table (no header of its own) when missing;
/// `None` when `key` holds something else.
fn implicit_table<'a>(parent: &'a mut Table, key: &str) -> Option<&'a mut Table> {
    parent
        .entry(key)
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()
}

/// Sets `key` unless it already holds the same value, so a second install keeps the user's
/// formatting of our entries too.
fn set_if_different(table: &mut Table, key: &str, new: Item) {
    let same = match (table.get(key).and_then(Item::as_value), new.as_value()) {
        (Some(old), Some(new)) => old.to_string().trim() == new.to_string().trim(),
        _ => false,
    };
    if !same {
        table.insert(key, new);
    }
}

/// Every command hook in a `hooks.json` at `hooks_path`, with the trust entry Codex expects for
/// it, in file order.
pub fn trust_entries(hooks_path: &Path, text: &str) -> Result<Vec<TrustEntry>, ConfigError> {
    let root = if text.trim().is_empty() {
        Json::Object(Vec::new())
    } else {
        Json::parse(text).map_err(|e| ConfigError::Json {
            path: hooks_path.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?
    };
    let Some(Json::Object(events)) = root.get("hooks") else { return Ok(Vec::new()) };
    let mut entries = Vec::new();
    for (event, groups) in events {
        let Json::Array(groups) = groups else { continue };
        let label = event_label(event);
        for (gi, group) in groups.iter().enumerate() {
            let Some(Json::Array(handlers)) = group.get("hooks") else { continue };
            for (hi, handler) in handlers.iter().enumerate() {
                let command_hook = match handler.get("type") {
                    None => true,
                    Some(t) => *t == Json::str("command"),
                };
                let Some(Json::String(command)) = handler.get("command") else { continue };
                if !command_hook {
                    continue;
                }
                let mut identity = serde_json::Map::new();
                identity.insert("event_name".into(), label.clone().into());
                identity.insert(
                    "hooks".into(),
                    serde_json::Value::Array(vec![normalized(event, handler)]),
                );
                if let Some(m) = group.get("matcher").filter(|m| **m != Json::Null)
                    && !NO_MATCHER.contains(&event.as_str())
                {
                    identity.insert("matcher".into(), m.to_value());
                }
                // serde_json's map sorts its keys and `to_string` is compact: Codex's form.
                let canonical = serde_json::Value::Object(identity).to_string();
                let digest = Sha256::digest(canonical.as_bytes());
                let hex = crate::text::hex(&digest);
                entries.push(TrustEntry {
                    key: format!("{}:{label}:{gi}:{hi}", hooks_path.display()),
                    hash: format!("sha256:{hex}"),
                    command: command.clone(),
                });
            }
        }
    }
    Ok(entries)
}

/// Our hooks in `hooks.json` that Codex would skip without a word: no trust entry in
/// `config.toml`, `enabled = false`, or a `trusted_hash` that no longer matches the hook (the
/// hook changed, or `hooks.json` moved, which changes every key).
pub fn untrusted(
    hooks_path: &Path,
    hooks_text: &str,
    config_path: &Path,
    config_text: &str,
    bin: &str,
) -> Result<Vec<TrustEntry>, ConfigError> {
    let doc: DocumentMut =
        config_text.parse().map_err(|e: toml_edit::TomlError| ConfigError::Toml {
            path: config_path.to_owned(),
            message: e.to_string().trim().replace('\n', " "),
        })?;
    let state = doc.get("hooks").and_then(|h| h.get("state"));
    Ok(trust_entries(hooks_path, hooks_text)?
        .into_iter()
        .filter(|e| is_our_command(&e.command, bin) || e.command.contains(" hook --agent codex "))
        .filter(|e| {
            let entry = state.and_then(|s| s.get(&e.key));
            let enabled = entry.and_then(|t| t.get("enabled")).and_then(Item::as_bool);
            let hash = entry.and_then(|t| t.get("trusted_hash")).and_then(Item::as_str);
            enabled == Some(false) || hash != Some(e.hash.as_str())
        })
        .collect())
}

/// [`untrusted`] for the `hooks.json` and `config.toml` in Codex's home, as `doctor` asks:
/// `None` when there is no `hooks.json`, each hook named by its `hooks.state` key's last part.
pub(crate) fn untrusted_hooks(
    codex_home: &Path,
    bin: &str,
    read: ReadFile<'_>,
) -> Option<Result<Untrusted, ConfigError>> {
    let hooks_path = codex_home.join("hooks.json");
    let config_path = codex_home.join("config.toml");
    let hooks = read(&hooks_path).ok()??;
    let config = read(&config_path).ok()?.unwrap_or_default();
    Some(untrusted(&hooks_path, &hooks, &config_path, &config, bin).map(|list| {
        Untrusted {
            hooks: list
                .iter()
                .map(|e| e.key.rsplit_once(".json:").map_or(e.key.as_str(), |(_, k)| k).to_owned())
                .collect(),
            config: config_path,
        }
    }))
}

/// `SessionStart` → `session_start`.
fn event_label(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if i > 0 && c.is_uppercase() {
            out.push('_');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// A handler as Codex hashes it: type, command, timeout (600 by default, at least 1;
/// `SessionEnd` clamped to 1..=3, default 1), async, and statusMessage when present.
fn normalized(event: &str, handler: &Json) -> serde_json::Value {
    // As Codex reads it: `timeout` when the key is there (even as null), else `timeoutSec`.
    let timeout =
        handler.get("timeout").or_else(|| handler.get("timeoutSec")).filter(|t| **t != Json::Null);
    let timeout = match timeout {
        Some(Json::Number(n)) => match n.as_i64() {
            Some(t) if event == "SessionEnd" => t.clamp(1, 3).into(),
            Some(t) => t.max(1).into(),
            None => {
                let t = n.as_f64().unwrap_or(1.0);
                let t = if event == "SessionEnd" { t.clamp(1.0, 3.0) } else { t.max(1.0) };
                serde_json::Number::from_f64(t).map_or(serde_json::Value::Null, Into::into)
            }
        },
        _ if event == "SessionEnd" => 1.into(),
        _ => 600.into(),
    };
    let is_async = match handler.get("async") {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(Json::Number(n)) => n.as_f64() != Some(0.0),
        Some(Json::String(s)) => !s.is_empty(),
        Some(Json::Array(a)) => !a.is_empty(),
        Some(Json::Object(o)) => !o.is_empty(),
    };
    let mut out = serde_json::Map::new();
    out.insert("type".into(), "command".into());
    out.insert(
        "command".into(),
        handler.get("command").map_or(serde_json::Value::Null, Json::to_value),
    );
    out.insert("timeout".into(), timeout);
    out.insert("async".into(), is_async.into());
    if let Some(status) = handler.get("statusMessage").filter(|s| **s != Json::Null) {
        out.insert("statusMessage".into(), status.to_value());
    }
    serde_json::Value::Object(out)
}

pub(crate) fn plan(
    op: Op,
    place: &Place<'_>,
    bin: &str,
    read: ReadFile<'_>,
) -> Result<Vec<FilePlan>, ConfigError> {
    let Place::User { root: codex_home, home } = place else {
        return Err(ConfigError::NoProjectLevel { agent: AGENT });
    };
    let hooks_path = codex_home.join("hooks.json");
    let config_path = codex_home.join("config.toml");
    let hooks =
        file_plan(hooks_path.clone(), op, read, &|op, text, path| hooks_json(op, text, path, bin))?;
    // Install trusts our hooks where they now sit; uninstall forgets them where they sat.
    // There is no plan only on uninstall with no hooks.json: then no hook of ours is trusted.
    let current = hooks.as_ref().and_then(|plan| plan.before.as_deref());
    let installed = match &hooks {
        Some(plan) if op == Op::Install => plan.after.clone(),
        _ => {
            let bare = hooks_json(Op::Uninstall, current, &hooks_path, bin)?;
            hooks_json(Op::Install, Some(&bare), &hooks_path, bin)?
        }
    };
    let config = file_plan(config_path, op, read, &|op, text, path| match op {
        Op::Install => config_toml(op, text, path, &hooks_path, Some(&installed), bin),
        Op::Uninstall => config_toml(op, text, path, &hooks_path, current, bin),
    })?;
    // Codex reads a user's skills from ~/.agents/skills, the folder agents share.
    let skill = skill_plan(&home.join(".agents").join("skills"), op, read)?;
    Ok(hooks.into_iter().chain(config).chain(skill).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIN: &str = "/opt/am/agent-memory";
    const HOOKS_PATH: &str = "/home/u/.codex/hooks.json";

    const CONFIG: &str = r#"# my Codex settings
model = "gpt-5"   # the default model
approval_policy = "never"

[mcp_servers.mem]
command = "python3"
args = ["server.py"]

[hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"]
enabled = true
trusted_hash = "sha256:0000"
"#;

    const USER_HOOKS: &str = r#"{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "guard.sh"
          }
        ]
      }
    ]
  }
}
"#;

    fn install_both(hooks: Option<&str>, config: Option<&str>) -> (String, String) {
        let hooks_path = Path::new(HOOKS_PATH);
        let hooks = hooks_json(Op::Install, hooks, hooks_path, BIN).expect("hooks");
        let config = config_toml(
            Op::Install,
            config,
            Path::new("/home/u/.codex/config.toml"),
            hooks_path,
            Some(&hooks),
            BIN,
        )
        .expect("config");
        (hooks, config)
    }

    fn uninstall_both(hooks: &str, config: &str) -> (String, String) {
        let hooks_path = Path::new(HOOKS_PATH);
        let config = config_toml(
            Op::Uninstall,
            Some(config),
            Path::new("/home/u/.codex/config.toml"),
            hooks_path,
            Some(hooks),
            BIN,
        )
        .expect("config");
        (hooks_json(Op::Uninstall, Some(hooks), hooks_path, BIN).expect("hooks"), config)
    }

    #[test]
    fn installs_into_empty_files() {
        let (hooks, config) = install_both(None, None);
        let value: serde_json::Value = serde_json::from_str(&hooks).expect("valid JSON");
        assert_eq!(
            value["hooks"]["SessionEnd"][0]["hooks"][0]["command"],
            "/opt/am/agent-memory hook --agent codex --event SessionEnd"
        );
        // What Codex accepts at a session end (it clamps to 3 s and warns), 5 s elsewhere.
        assert_eq!(value["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], 3);
        assert_eq!(value["hooks"]["Stop"][0]["hooks"][0]["timeout"], 5);
        let doc: toml::Table = toml::from_str(&config).expect("valid TOML");
        let state = doc["hooks"]["state"].as_table().expect("state");
        assert_eq!(state.len(), HOOKS.len());
        let entry = &state["/home/u/.codex/hooks.json:session_start:0:0"];
        assert_eq!(entry["enabled"].as_bool(), Some(true));
        assert!(entry["trusted_hash"].as_str().expect("hash").starts_with("sha256:"));
        assert_eq!(doc["mcp_servers"]["agent-memory"]["command"].as_str(), Some(BIN));
        assert_eq!(install_both(Some(&hooks), Some(&config)), (hooks.clone(), config.clone()));
        assert_eq!(uninstall_both(&hooks, &config), ("{}\n".to_owned(), String::new()));
    }

    #[test]
    fn keeps_comments_and_other_entries_and_uninstalls_to_the_same_bytes() {
        let (hooks, config) = install_both(Some(USER_HOOKS), Some(CONFIG));
        assert!(
            config.starts_with("# my Codex settings\nmodel = \"gpt-5\"   # the default model\n"),
            "the user's comments stay:\n{config}"
        );
        assert!(config.contains(
            "[mcp_servers.agent-memory]\ncommand = \"/opt/am/agent-memory\"\nargs = [\"mcp\"]\n"
        ));
        assert!(config.contains("[hooks.state.\"/home/u/.codex/hooks.json:post_tool_use:0:0\"]"));
        assert_eq!(install_both(Some(&hooks), Some(&config)), (hooks.clone(), config.clone()));
        assert_eq!(uninstall_both(&hooks, &config), (USER_HOOKS.to_owned(), CONFIG.to_owned()));
    }

    #[test]
    fn broken_toml_is_an_error() {
        let err = config_toml(
            Op::Install,
            Some("model = \"x\"\n[mcp_servers\n"),
            Path::new("/home/u/.codex/config.toml"),
            Path::new(HOOKS_PATH),
            None,
            BIN,
        )
        .expect_err("broken");
        assert!(
            err.to_string().starts_with("/home/u/.codex/config.toml is not valid TOML ("),
            "{err}"
        );
        let err = config_toml(
            Op::Install,
            Some("mcp_servers = 3\n"),
            Path::new("/home/u/.codex/config.toml"),
            Path::new(HOOKS_PATH),
            None,
            BIN,
        )
        .expect_err("shape");
        assert!(err.to_string().contains("`mcp_servers` is not a table"), "{err}");
    }

    #[test]
    fn no_project_level() {
        let read: ReadFile<'_> = &|_| Ok(None);
        let err =
            plan(Op::Install, &Place::Project(Path::new("/p")), BIN, read).expect_err("project");
        assert!(err.to_string().contains("codex has no project-level configuration"), "{err}");
    }

    /// A hooks file with every case the hash treats specially: a matcher dropped for
    /// UserPromptSubmit, statusMessage, async, a zero timeout, timeoutSec, SessionEnd's clamp,
    /// a handler without a type, and non-ASCII text.
    const SAMPLE: &str = r#"{
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "/opt/am/agent-memory hook --agent codex --event SessionStart", "timeout": 5}]}],
    "UserPromptSubmit": [{"matcher": "ignored", "hooks": [{"type": "command", "command": "echo hé \"q\"", "statusMessage": "saving"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "a", "async": true, "timeout": 0}, {"type": "command", "command": "b", "timeoutSec": 30}]}],
    "SessionEnd": [{"hooks": [{"type": "command", "command": "x", "timeout": 5}, {"command": "y"}]}]
  }
}
"#;

    /// The output of the testkit's `harness/codex_trust.py` (Codex's algorithm) for SAMPLE,
    /// generated with that script; the test below also runs the script when python3 is there.
    const SAMPLE_HASHES: &[(&str, &str)] = &[
        ("session_start:0:0", "50456ff3cba69d13a2f8a2abd0e988c5636c785cf2b0c2703da9a7c100050b8d"),
        (
            "user_prompt_submit:0:0",
            "0f7533fa4f6a9b312840ae656c3c88972dc44b5aa35cf6a98d8388929a07de2f",
        ),
        ("pre_tool_use:0:0", "5d36e6e46ca55b9d596a2b2b67ace8f656e407bb5581040b3c862523d50ff9bf"),
        ("pre_tool_use:0:1", "c76f8b4d2f90bcf6547e272a491df9f1d5b4bba63edd87b7a4ee298c645e34f2"),
        ("session_end:0:0", "b1aa6329f3a5daf36ae487200db1136f90a884bb805ddb24a6326c98dd6f29f6"),
        ("session_end:0:1", "c2ebd3a779ded21546fd35e02080a82bcbe6009d64c71dc9d994099853801417"),
    ];

    fn as_block(entries: &[TrustEntry]) -> String {
        let mut lines = Vec::new();
        for e in entries {
            lines.push(format!("[hooks.state.\"{}\"]", e.key));
            lines.push("enabled = true".to_owned());
            lines.push(format!("trusted_hash = \"{}\"", e.hash));
            lines.push(String::new());
        }
        lines.join("\n")
    }

    #[test]
    fn trust_hash_matches_the_fixture() {
        let entries = trust_entries(Path::new("/x/hooks.json"), SAMPLE).expect("entries");
        let got: Vec<(String, String)> = entries
            .iter()
            .map(|e| {
                (
                    e.key.trim_start_matches("/x/hooks.json:").to_owned(),
                    e.hash.replace("sha256:", ""),
                )
            })
            .collect();
        let want: Vec<(String, String)> =
            SAMPLE_HASHES.iter().map(|(k, h)| ((*k).to_owned(), (*h).to_owned())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn trust_hash_matches_the_reference_script() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../agent-memory-testkit/harness/codex_trust.py");
        let python = std::process::Command::new("python3").arg("--version").output();
        if !script.exists() || python.is_err() {
            // Without the script or python3, the committed fixture above is the check.
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("hooks.json");
        let (hooks, _) = install_both(Some(SAMPLE), None);
        for text in [SAMPLE, hooks.as_str()] {
            // Written with a plain write: a test fixture, not a file a user owns.
            std::io::Write::write_all(
                &mut std::fs::File::create(&path).expect("create"),
                text.as_bytes(),
            )
            .expect("write");
            let out = std::process::Command::new("python3")
                .arg(&script)
                .arg(&path)
                .output()
                .expect("run");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let want = String::from_utf8(out.stdout).expect("utf-8");
            let got = as_block(&trust_entries(&path, text).expect("entries"));
            assert_eq!(got.trim(), want.trim());
        }
    }

    #[test]
    fn untrusted_names_missing_and_stale_entries() {
        let hooks_path = Path::new(HOOKS_PATH);
        let config_path = Path::new("/home/u/.codex/config.toml");
        let (hooks, config) = install_both(Some(USER_HOOKS), Some(CONFIG));
        let none = untrusted(hooks_path, &hooks, config_path, &config, BIN).expect("untrusted");
        assert!(none.is_empty(), "{none:?}");
        // The user's own untrusted guard is not ours to report.
        let missing = untrusted(hooks_path, &hooks, config_path, CONFIG, BIN).expect("untrusted");
        assert_eq!(missing.len(), HOOKS.len());
        let key = &missing[0].key;
        for (field, changed) in [("trusted_hash", value("sha256:0")), ("enabled", value(false))] {
            let mut doc: DocumentMut = config.parse().expect("toml");
            doc["hooks"]["state"][key][field] = changed;
            let text = doc.to_string();
            let one = untrusted(hooks_path, &hooks, config_path, &text, BIN).expect("untrusted");
            assert_eq!(one.len(), 1, "{field}: {one:?}");
            assert_eq!(one[0].key, *key);
        }
    }

    #[test]
    fn labels() {
        assert_eq!(event_label("SessionStart"), "session_start");
        assert_eq!(event_label("PreToolUse"), "pre_tool_use");
        assert_eq!(event_label("Stop"), "stop");
    }
}
