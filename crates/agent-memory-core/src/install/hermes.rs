//! Hermes Agent's wiring: our memory provider (the Python package beside this file, with a
//! `config.json` naming the binary) in `$HERMES_HOME/plugins/agent-memory/`, and in
//! `$HERMES_HOME/config.yaml` the keys that select it (`memory.provider`) and register our MCP
//! server (`mcp_servers.agent-memory`). Hermes has no project-level configuration.
//!
//! `config.yaml` is edited line by line, so the user's comments, order and quoting survive
//! untouched: a line we add ends in [`ADDED`], a line we replace keeps the user's original after
//! [`REPLACED`], and uninstall undoes exactly those. YAML this cannot edit safely (flow style,
//! tabs, several documents, a `memory` that is not a mapping) is an error, never rewritten.
//!
//! Must not: touch any key, server or comment that is not ours.

use std::path::{Path, PathBuf};

use super::{ConfigError, FilePlan, MCP_SERVER_NAME, Op, Place, ReadFile, file_plan};

/// The provider's name: its plugin directory and the `memory.provider` value.
pub const PROVIDER: &str = "agent-memory";

/// The provider package, executed by Hermes.
pub const PROVIDER_PY: &str = include_str!("hermes/__init__.py");
/// The plugin's metadata (Hermes reads it for listings only).
pub const PLUGIN_YAML: &str = include_str!("hermes/plugin.yaml");

/// Ends every line install adds to `config.yaml`.
pub const ADDED: &str = "# added by agent-memory";
/// Follows a line install replaced, then the original line, verbatim.
pub const REPLACED: &str = "# agent-memory replaced: ";

/// The plugin directory under a Hermes home.
pub fn plugin_dir(hermes_home: &Path) -> PathBuf {
    hermes_home.join("plugins").join(PROVIDER)
}

/// The plugin's files and their text: the provider, its metadata, and where the binary is.
fn plugin_files(bin: &str) -> [(&'static str, String); 3] {
    let config = serde_json::json!({ "bin": bin });
    let config = serde_json::to_string_pretty(&config).unwrap_or_default() + "\n";
    [
        ("__init__.py", PROVIDER_PY.to_owned()),
        ("plugin.yaml", PLUGIN_YAML.to_owned()),
        ("config.json", config),
    ]
}

pub(crate) fn plan(
    op: Op,
    place: &Place<'_>,
    bin: &str,
    read: ReadFile<'_>,
) -> Result<Vec<FilePlan>, ConfigError> {
    let Place::User { root: hermes_home, .. } = place else {
        return Err(ConfigError::NoProjectLevel { agent: "hermes" });
    };
    // The config first: when it cannot be edited, nothing else is planned either.
    let config = file_plan(hermes_home.join("config.yaml"), op, read, &|op, text, path| {
        config_yaml(op, text, path, bin)
    })?;
    let mut plans = Vec::new();
    let dir = plugin_dir(hermes_home);
    for (name, text) in plugin_files(bin) {
        let path = dir.join(name);
        let before = read(&path)?;
        match op {
            Op::Install => plans.push(FilePlan { path, before, after: text, remove: false }),
            Op::Uninstall => {
                if before.is_some() {
                    plans.push(FilePlan { path, before, after: String::new(), remove: true });
                }
            }
        }
    }
    plans.extend(config);
    Ok(plans)
}

/// Selects our provider and adds our MCP server in `config.yaml` (install), or takes exactly
/// that back out (uninstall). A missing file is an empty one.
pub fn config_yaml(
    op: Op,
    text: Option<&str>,
    path: &Path,
    bin: &str,
) -> Result<String, ConfigError> {
    let original = text.unwrap_or("");
    let mut doc = Doc::parse(original, path)?;
    doc.uninstall();
    if op == Op::Install {
        doc.install(bin)?;
    }
    Ok(doc.to_text(original))
}

/// A YAML file as lines, with what the line-based edit needs to know about each.
struct Doc<'p> {
    lines: Vec<String>,
    path: &'p Path,
}

/// A top-level key's place: its line, and the first line after its block.
struct Block {
    at: usize,
    end: usize,
}

impl<'p> Doc<'p> {
    fn parse(text: &str, path: &'p Path) -> Result<Doc<'p>, ConfigError> {
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let doc = Doc { lines, path };
        for (i, line) in doc.lines.iter().enumerate() {
            let content = line.trim_start_matches(' ');
            if content.starts_with('\t') {
                return Err(doc.error(i, "indented with tabs"));
            }
            let top = content.len() == line.len();
            if top && (line.starts_with("---") && i > 0 || line.starts_with("...")) {
                return Err(doc.error(i, "more than one YAML document"));
            }
            if top && (line.starts_with('{') || line.starts_with('[')) {
                return Err(doc.error(i, "written in flow style"));
            }
        }
        for key in ["memory", "mcp_servers"] {
            let count = doc.lines.iter().filter(|l| top_key(l).is_some_and(|k| k == key)).count();
            if count > 1 {
                let at = doc.find(key).map_or(0, |b| b.at);
                return Err(doc.error(at, &format!("`{key}` appears more than once")));
            }
        }
        Ok(doc)
    }

    fn error(&self, line: usize, what: &str) -> ConfigError {
        ConfigError::Yaml { path: self.path.to_owned(), line: line + 1, message: what.to_owned() }
    }

    fn find(&self, key: &str) -> Option<Block> {
        let at = self.lines.iter().position(|l| top_key(l).is_some_and(|k| k == key))?;
        let end = (at + 1..self.lines.len())
            .find(|&i| {
                let l = &self.lines[i];
                !l.trim().is_empty() && !l.starts_with(' ') && !l.starts_with('#')
            })
            .unwrap_or(self.lines.len());
        // Blank lines and comments at the end belong to what follows.
        let end =
            (at + 1..end).rev().find(|&i| is_content(&self.lines[i])).map_or(at + 1, |i| i + 1);
        Some(Block { at, end })
    }

    /// The indent of a block's children, and whether it has any.
    fn child_indent(&self, block: &Block) -> (usize, bool) {
        (block.at + 1..block.end)
            .find(|&i| is_content(&self.lines[i]))
            .map_or((2, false), |i| (indent(&self.lines[i]), true))
    }

    /// Makes `key` a block mapping we can add children to: adds it (marked) when missing,
    /// replaces an empty inline value (`{}`, `null`, `~`) keeping the original, and refuses
    /// anything else written inline or a block that is a list.
    fn block_for(&mut self, key: &str) -> Result<Block, ConfigError> {
        let Some(block) = self.find(key) else {
            self.lines.push(format!("{key}:  {ADDED}"));
            let at = self.lines.len() - 1;
            return Ok(Block { at, end: at + 1 });
        };
        let value = inline_value(&self.lines[block.at]);
        match value.as_str() {
            "" => {}
            "{}" | "null" | "~" => {
                let original = self.lines[block.at].clone();
                self.lines[block.at] = format!("{key}:  {REPLACED}{original}");
            }
            _ => {
                return Err(self.error(
                    block.at,
                    &format!("`{key}` is written inline; write it as an indented block"),
                ));
            }
        }
        let (_, has_children) = self.child_indent(&block);
        if has_children {
            let first = (block.at + 1..block.end).find(|&i| is_content(&self.lines[i]));
            if let Some(i) = first
                && self.lines[i].trim_start().starts_with('-')
            {
                return Err(self.error(i, &format!("`{key}` is a list, not a mapping")));
            }
        }
        Ok(block)
    }

    fn install(&mut self, bin: &str) -> Result<(), ConfigError> {
        // memory.provider: agent-memory
        let block = self.block_for("memory")?;
        let (indent, _) = self.child_indent(&block);
        let pad = " ".repeat(indent);
        let ours = format!("{pad}provider: {PROVIDER}  {ADDED}");
        match self.child(&block, indent, "provider") {
            Some(i) if scalar(&inline_value(&self.lines[i])) == PROVIDER => {}
            Some(i) => {
                let original = std::mem::take(&mut self.lines[i]);
                self.lines[i] = format!("{pad}provider: {PROVIDER}  {REPLACED}{original}");
            }
            None => self.lines.insert(block.at + 1, ours),
        }

        // mcp_servers.agent-memory: {command: <bin>, args: [mcp]}
        let block = self.block_for("mcp_servers")?;
        let (indent, _) = self.child_indent(&block);
        let pad = " ".repeat(indent);
        let inner = " ".repeat(indent + 2);
        let entry = [
            format!("{pad}{MCP_SERVER_NAME}:"),
            format!("{inner}command: {}", quote(bin)),
            format!("{inner}args: [\"mcp\"]"),
        ];
        let end = self.find("mcp_servers").map_or(block.end, |b| b.end);
        for (n, line) in entry.into_iter().enumerate() {
            self.lines.insert(end + n, line);
        }
        Ok(())
    }

    /// The line of `key` among a block's children at `indent`.
    fn child(&self, block: &Block, indent: usize, key: &str) -> Option<usize> {
        (block.at + 1..block.end).find(|&i| {
            let l = &self.lines[i];
            indent_of_key(l) == Some(indent) && key_of(l).is_some_and(|k| k == key)
        })
    }

    /// Takes out everything install put in: our MCP server entry, our added lines (a header
    /// only once nothing else is under it), and the user's replaced lines put back.
    fn uninstall(&mut self) {
        if let Some(block) = self.find("mcp_servers") {
            let (depth, _) = self.child_indent(&block);
            if let Some(at) = self.child(&block, depth, MCP_SERVER_NAME) {
                let end = (at + 1..block.end)
                    .find(|&i| is_content(&self.lines[i]) && indent(&self.lines[i]) <= depth)
                    .unwrap_or(block.end);
                self.lines.drain(at..end);
            }
        }
        for line in &mut self.lines {
            if let Some(at) = line.find(REPLACED) {
                *line = line[at + REPLACED.len()..].to_owned();
            }
        }
        self.lines.retain(|l| !(l.ends_with(ADDED) && indent(l) > 0));
        let mut i = 0;
        while i < self.lines.len() {
            let line = &self.lines[i];
            if line.ends_with(ADDED)
                && let Some(key) = top_key(line).map(str::to_owned)
            {
                let empty = self.find(&key).is_some_and(|b| b.end == b.at + 1);
                if empty {
                    self.lines.remove(i);
                    continue;
                }
                self.lines[i] = format!("{key}:");
            }
            i += 1;
        }
    }

    /// The lines as text, ending in a newline when the original did (or was empty).
    fn to_text(&self, original: &str) -> String {
        if self.lines.is_empty() {
            return String::new();
        }
        let mut text = self.lines.join("\n");
        if original.is_empty() || original.ends_with('\n') {
            text.push('\n');
        }
        text
    }
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn indent_of_key(line: &str) -> Option<usize> {
    key_of(line).map(|_| indent(line))
}

/// A line that holds YAML content (not blank, not only a comment).
fn is_content(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// The key of a `key: value` line (quotes taken off), at any indent.
fn key_of(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with('#') || t.starts_with('-') {
        return None;
    }
    let colon = t.find(':')?;
    let rest = &t[colon + 1..];
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let key = t[..colon].trim_end();
    Some(key.trim_matches(|c| c == '"' || c == '\''))
}

/// The key of a top-level line.
fn top_key(line: &str) -> Option<&str> {
    if line.starts_with(' ') {
        return None;
    }
    key_of(line)
}

/// What follows a key's colon on its own line, without a trailing comment.
fn inline_value(line: &str) -> String {
    let t = line.trim_start();
    let Some(colon) = t.find(": ").or_else(|| t.ends_with(':').then(|| t.len() - 1)) else {
        return String::new();
    };
    let rest = &t[colon + 1..];
    let rest = match rest.find(" #") {
        Some(at) => &rest[..at],
        None => rest,
    };
    let rest = rest.trim();
    if rest.starts_with('#') { String::new() } else { rest.to_owned() }
}

/// A scalar without its quotes.
fn scalar(value: &str) -> &str {
    value.trim_matches(|c| c == '"' || c == '\'')
}

/// A YAML double-quoted scalar (JSON's string syntax is valid YAML).
fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIN: &str = "/opt/am/agent-memory";

    fn edit(op: Op, text: &str) -> String {
        config_yaml(op, Some(text), Path::new("/h/.hermes/config.yaml"), BIN).expect("edit")
    }

    #[track_caller]
    fn round_trip(original: &str) -> String {
        let installed = edit(Op::Install, original);
        assert_ne!(installed, original);
        assert_eq!(edit(Op::Install, &installed), installed, "a second install changes nothing");
        assert_eq!(edit(Op::Uninstall, &installed), original, "uninstall gives back every byte");
        installed
    }

    #[test]
    fn a_missing_file_gets_both_blocks() {
        let installed = round_trip("");
        assert_eq!(
            installed,
            format!(
                "memory:  {ADDED}\n  provider: agent-memory  {ADDED}\nmcp_servers:  {ADDED}\n  \
                 agent-memory:\n    command: \"{BIN}\"\n    args: [\"mcp\"]\n"
            )
        );
        assert_eq!(edit(Op::Uninstall, &installed), "");
    }

    #[test]
    fn a_memory_block_without_provider_gets_one_and_keeps_the_rest() {
        let original = "# my hermes\nmodel:\n  default: gpt-5   # fast\n\nmemory:\n    memory_enabled: true\n    user_char_limit: 1375\n\n# tools\nmcp_servers:\n    github:\n        command: gh-mcp\n";
        let installed = round_trip(original);
        assert!(installed.starts_with("# my hermes\nmodel:\n  default: gpt-5   # fast\n\nmemory:\n    provider: agent-memory  # added by agent-memory\n    memory_enabled: true\n"), "{installed}");
        assert!(installed.ends_with(&format!("    github:\n        command: gh-mcp\n    agent-memory:\n      command: \"{BIN}\"\n      args: [\"mcp\"]\n")), "{installed}");
    }

    #[test]
    fn a_provider_the_user_chose_comes_back_on_uninstall() {
        let original =
            "memory:\n  provider: 'honcho'   # mine\n  memory_enabled: true\nmcp_servers: {}\n";
        let installed = round_trip(original);
        assert!(
            installed.contains(&format!(
                "  provider: agent-memory  {REPLACED}  provider: 'honcho'   # mine\n"
            )),
            "{installed}"
        );
        assert!(
            installed
                .contains(&format!("mcp_servers:  {REPLACED}mcp_servers: {{}}\n  agent-memory:\n")),
            "{installed}"
        );
    }

    #[test]
    fn an_older_install_is_brought_up_to_date() {
        let original = "memory:\n  provider: agent-memory\nmcp_servers:\n  agent-memory:\n    command: /old/agent-memory\n    args: [mcp]\n  other:\n    command: x\n";
        let installed = edit(Op::Install, original);
        assert_eq!(
            installed,
            format!(
                "memory:\n  provider: agent-memory\nmcp_servers:\n  other:\n    command: x\n  agent-memory:\n    command: \"{BIN}\"\n    args: [\"mcp\"]\n"
            )
        );
        assert_eq!(edit(Op::Install, &installed), installed);
    }

    #[test]
    fn a_file_without_a_final_newline_keeps_it_off() {
        round_trip("model:\n  default: m");
    }

    #[test]
    fn yaml_it_cannot_edit_safely_is_an_error_naming_the_line() {
        for (text, line, what) in [
            ("memory: {provider: honcho}\n", 1, "`memory` is written inline"),
            ("{memory: {}}\n", 1, "flow style"),
            ("a: 1\n---\nb: 2\n", 2, "more than one YAML document"),
            ("memory:\n\tprovider: x\n", 2, "tabs"),
            ("memory:\n  - a\n", 2, "`memory` is a list"),
            ("memory:\n  a: 1\nmemory:\n  b: 2\n", 1, "`memory` appears more than once"),
        ] {
            let err =
                config_yaml(Op::Install, Some(text), Path::new("/h/c.yaml"), BIN).expect_err(text);
            let said = err.to_string();
            assert!(said.starts_with(&format!("/h/c.yaml line {line}: ")), "{said}");
            assert!(said.contains(what), "{said}");
        }
    }
}
