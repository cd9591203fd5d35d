//! `agent-memory model` and `reindex`: installed embedding models, what installing or removing
//! one changed, and the progress and result of embedding a backlog.

use std::io::{self, Write};

use agent_memory_core::embed::{Manifest, ModelKind};
use agent_memory_core::store::vectors::EmbedPass;

use serde::Serialize;

use super::{count, json};

/// Installed models; `*` marks the ones search uses (an embedding model and a sparse one).
pub fn model_list(models: &[Manifest], used: &[&str], as_json: bool) -> io::Result<()> {
    write_model_list(&mut io::stdout().lock(), models, used, as_json)
}

pub fn write_model_list(
    out: &mut impl Write,
    models: &[Manifest],
    used: &[&str],
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, &models);
    }
    if models.is_empty() {
        return writeln!(
            out,
            "no embedding model installed: search uses full text only. \
             `agent-memory model install potion-base-8m` adds search by meaning."
        );
    }
    for m in models {
        let mark = if used.contains(&m.name.as_str()) { "*" } else { " " };
        let (kind, size) = match m.kind {
            ModelKind::Bert => ("sentence encoder", "dims"),
            ModelKind::Static => ("static", "dims"),
            ModelKind::Sparse => ("sparse", "words"),
        };
        writeln!(
            out,
            "{mark} {:<24} {kind:<16} {:>5} {size:<5} {}",
            m.name, m.dimensions, m.source
        )?;
    }
    Ok(())
}

#[derive(Serialize)]
struct InstalledJson<'a> {
    model: &'a Manifest,
    in_use: bool,
    /// Items still without a vector of this model (`agent-memory reindex` embeds them).
    pending: i64,
}

pub fn model_installed(m: &Manifest, used: bool, pending: i64, as_json: bool) -> io::Result<()> {
    if as_json {
        return json(&mut io::stdout().lock(), &InstalledJson { model: m, in_use: used, pending });
    }
    write_model_installed(&mut io::stdout().lock(), m, used, pending)
}

pub fn write_model_installed(
    out: &mut impl Write,
    m: &Manifest,
    used: bool,
    pending: i64,
) -> io::Result<()> {
    if m.kind == ModelKind::Sparse {
        writeln!(out, "installed {} (sparse, {} words) from {}", m.name, m.dimensions, m.source)?;
        if used {
            writeln!(
                out,
                "search orders its results with it now ([search] sparse_model = \"{}\")",
                m.name
            )?;
        }
    } else {
        writeln!(out, "installed {} ({} dimensions) from {}", m.name, m.dimensions, m.source)?;
        if used {
            writeln!(out, "search uses it now ([search] model = \"{}\")", m.name)?;
        }
    }
    if pending > 0 {
        writeln!(out, "{pending} stored items have no vector yet: run `agent-memory reindex`")?;
    }
    Ok(())
}

/// Which use of a removed model ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WasUsed {
    No,
    /// As `[search] model`.
    Embedding,
    /// As `[search] sparse_model`.
    Sparse,
}

pub fn model_removed(name: &str, was_used: WasUsed) -> io::Result<()> {
    write_model_removed(&mut io::stdout().lock(), name, was_used)
}

pub fn write_model_removed(out: &mut impl Write, name: &str, was_used: WasUsed) -> io::Result<()> {
    writeln!(out, "removed {name}")?;
    match was_used {
        WasUsed::No => Ok(()),
        WasUsed::Embedding => {
            writeln!(out, "search uses full text only until another model is installed")
        }
        WasUsed::Sparse => writeln!(out, "search no longer orders its results with it"),
    }
}

/// A progress bar on standard error for long work; hidden for `--json` and when standard
/// error is not a terminal.
pub fn progress(total: u64, what: &'static str, quiet: bool) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} ({rate}, {eta} left)")
    {
        // indicatif's own `{per_sec}` prints `8,479.0628/s`; a whole number reads better.
        bar.set_style(style.with_key(
            "rate",
            |state: &indicatif::ProgressState, out: &mut dyn std::fmt::Write| {
                let _ = write!(out, "{}", rate(state.per_sec()));
            },
        ));
    }
    bar.set_message(what);
    bar
}

/// Items a second as a person reads them: `8479/s`, `12/s`, `0.4/s`.
fn rate(per_sec: f64) -> String {
    if per_sec >= 10.0 { format!("{per_sec:.0}/s") } else { format!("{per_sec:.1}/s") }
}

/// What `agent-memory reindex` did: each configured model's name and pass.
#[derive(Debug, Default)]
pub struct Reindexed {
    pub dense: Option<(String, EmbedPass)>,
    pub sparse: Option<(String, EmbedPass)>,
}

/// One model's pass in `reindex --json`.
#[derive(Serialize)]
struct PassJson<'a> {
    model: &'a str,
    #[serde(flatten)]
    pass: &'a EmbedPass,
}

/// `reindex --json`: the embedding model's pass at the top level, as it has always been
/// printed, and the sparse model's beside it.
#[derive(Serialize)]
struct ReindexJson<'a> {
    #[serde(flatten)]
    dense: Option<PassJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sparse: Option<PassJson<'a>>,
}

/// `agent-memory reindex`: what was embedded and encoded, and whether a backlog is left.
pub fn reindex(report: &Reindexed, as_json: bool) -> io::Result<()> {
    write_reindex(&mut io::stdout().lock(), report, as_json)
}

pub fn write_reindex(out: &mut impl Write, report: &Reindexed, as_json: bool) -> io::Result<()> {
    fn as_json_pass((model, pass): &(String, EmbedPass)) -> PassJson<'_> {
        PassJson { model, pass }
    }
    if as_json {
        let shape = ReindexJson {
            dense: report.dense.as_ref().map(as_json_pass),
            sparse: report.sparse.as_ref().map(as_json_pass),
        };
        return json(out, &shape);
    }
    let passes = [("embedded", &report.dense), ("encoded", &report.sparse)];
    for (verb, (model, pass)) in passes.iter().filter_map(|(verb, p)| Some((verb, p.as_ref()?))) {
        writeln!(out, "{verb} {} with {model}", count(pass.embedded, "item"))?;
        if pass.left > 0 {
            let left = match pass.left {
                1 => "1 item still has".to_owned(),
                n => format!("{n} items still have"),
            };
            writeln!(out, "{left} no vector of {model}; run `agent-memory reindex` again")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_is_a_plain_number() {
        assert_eq!(rate(8_479.062_8), "8479/s");
        assert_eq!(rate(12.4), "12/s");
        assert_eq!(rate(0.42), "0.4/s");
    }
}
