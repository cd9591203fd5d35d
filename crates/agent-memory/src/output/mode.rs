//! `agent-memory mode list` and `mode show`: the distiller's modes and one mode as loaded.

use std::io::{self, Write};

use agent_memory_core::distil::mode::{Mode, ModeInfo, ModeSource};
use serde::Serialize;

use super::{clip, json};

#[derive(Serialize)]
struct ModeListJson<'a> {
    name: &'a str,
    description: &'a str,
    /// `built-in`, or the user file's path.
    source: String,
    built_in: bool,
    overrides_builtin: bool,
    in_use: bool,
    problem: Option<&'a str>,
}

/// `agent-memory mode list`: every mode, `*` on `in_use`, a broken user file with its problem.
pub fn mode_list(modes: &[ModeInfo], in_use: &str, as_json: bool) -> io::Result<()> {
    write_mode_list(&mut io::stdout().lock(), modes, in_use, as_json)
}

pub fn write_mode_list(
    out: &mut impl Write,
    modes: &[ModeInfo],
    in_use: &str,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        let rows: Vec<ModeListJson> = modes
            .iter()
            .map(|m| ModeListJson {
                name: &m.name,
                description: &m.description,
                source: m.source.to_string(),
                built_in: m.source == ModeSource::BuiltIn,
                overrides_builtin: m.overrides_builtin,
                in_use: m.name == in_use,
                problem: m.problem.as_deref(),
            })
            .collect();
        return json(out, &rows);
    }
    let width = modes.iter().map(|m| m.name.chars().count()).max().unwrap_or(0);
    for m in modes {
        let marker = if m.name == in_use { '*' } else { ' ' };
        let source = match (&m.source, m.overrides_builtin) {
            (ModeSource::BuiltIn, _) => "built-in".to_owned(),
            (ModeSource::User(path), false) => path.display().to_string(),
            (ModeSource::User(path), true) => format!("{}, replaces the built-in", path.display()),
        };
        let description = if m.description.is_empty() { "-" } else { &m.description };
        writeln!(out, "{marker} {:<width$}  {}  ({source})", m.name, clip(description, 90))?;
        if let Some(problem) = &m.problem {
            writeln!(out, "  {:<width$}  problem: {problem}", "")?;
        }
    }
    if !modes.iter().any(|m| m.name == in_use) {
        writeln!(
            out,
            "\nthe configured mode `{in_use}` does not exist; choose one with `agent-memory mode use <name>`"
        )?;
    }
    Ok(())
}

/// `agent-memory mode show`: one mode as loaded, in one language.
pub fn mode_show(mode: &Mode, as_json: bool) -> io::Result<()> {
    write_mode_show(&mut io::stdout().lock(), mode, as_json)
}

pub fn write_mode_show(out: &mut impl Write, mode: &Mode, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, mode);
    }
    writeln!(out, "mode      {} ({})", mode.name, mode.language)?;
    writeln!(out, "role      {}", mode.role.trim())?;
    let width = mode.types.iter().chain(&mode.concepts).map(|t| t.key.chars().count()).max();
    let width = width.unwrap_or(0);
    for (heading, terms) in [("types", &mode.types), ("concepts", &mode.concepts)] {
        writeln!(out, "{heading}")?;
        for t in terms {
            let skipped = if heading == "types" && !mode.emits_type(&t.key) {
                "  (never emitted: in skip_types)"
            } else {
                ""
            };
            writeln!(
                out,
                "  {} {:<width$}  {}: {}{skipped}",
                t.emoji, t.key, t.label, t.description
            )?;
        }
    }
    for (heading, items) in [("record", &mode.record), ("skip", &mode.skip)] {
        if items.is_empty() {
            continue;
        }
        writeln!(out, "{heading}")?;
        for item in items {
            writeln!(out, "  - {}", item.trim())?;
        }
    }
    Ok(())
}
