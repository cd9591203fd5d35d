//! `agent-memory search`: one line per hit with its score and, with `--explain`, how each part
//! of the rank was computed. The typed id is core's ([`ItemId`]), the one `show` takes.

use std::io::{self, Write};

use agent_memory_core::recall::ItemId;
use agent_memory_core::store::search::{Ranking, SearchResults};
use agent_memory_core::time::format_local;

use super::{cell, clip, json, width};

pub fn search(
    results: &SearchResults,
    ranking: &Ranking,
    explain: bool,
    as_json: bool,
) -> io::Result<()> {
    write_search(&mut io::stdout().lock(), results, ranking, explain, as_json)
}

pub fn write_search(
    out: &mut impl Write,
    results: &SearchResults,
    ranking: &Ranking,
    explain: bool,
    as_json: bool,
) -> io::Result<()> {
    if as_json {
        return json(out, results);
    }
    if results.hits.is_empty() {
        return writeln!(out, "no matches");
    }
    // The agent column is as wide as its longest name (a teammate's memory shows the member
    // beside the agent), within bounds, so names are read whole and the columns stay straight.
    let agent_columns =
        results.hits.iter().map(|h| width(&h.agent)).max().unwrap_or_default().clamp(11, 28);
    for hit in &results.hits {
        let id =
            ItemId::of_kind(hit.kind, hit.id).map_or_else(|| hit.id.to_string(), |i| i.to_string());
        writeln!(
            out,
            "{:<7} {}  {} {} {} {}  ({:.3})",
            id,
            format_local(hit.at_ms),
            cell(&hit.agent, agent_columns),
            cell(hit.project.as_deref().unwrap_or("-"), 14),
            cell(&hit.item_type, 11),
            clip(&hit.title, 100),
            hit.score,
        )?;
        if let Some(lesson) = hit.lesson.as_deref().filter(|l| !l.trim().is_empty()) {
            writeln!(out, "        ↳ {}", clip(lesson, 140))?;
        }
        // The events it was made from that search found too, beneath it: one answer, one place.
        for event in &hit.folded {
            let id = ItemId::of_kind(event.kind, event.id)
                .map_or_else(|| event.id.to_string(), |i| i.to_string());
            writeln!(out, "        · {id} {}", clip(&event.title, 120))?;
        }
        if explain && !results.fallback {
            let p = &hit.parts;
            let bm25 = p.bm25.map_or("-".to_owned(), |b| format!("{b:.2}"));
            let sim = p.similarity.map_or("-".to_owned(), |s| format!("{s:.3}"));
            // What the items next to it, its session and the query naming its agent or
            // project added, when they did.
            let context: String =
                [("neighbours", p.neighbours), ("session", p.session), ("named", p.named)]
                    .iter()
                    .filter(|(_, v)| *v > 0.0)
                    .map(|(name, v)| format!(", {name} +{v:.3}"))
                    .chain(p.sparse.map(|m| format!(", sparse match {m:.2}")))
                    .collect();
            writeln!(
                out,
                "        = {:.2}×relevance {:.3} (bm25 {bm25} → {:.3}, similarity {sim}{context})\n          \
                 + {:.2}×importance {:.2} ({} {})\n          \
                 + {:.2}×freshness {:.3} ({:.1} days old, half-life {} days)\n          \
                 + {:.2}×hits {:.3} ({} before)",
                ranking.weight_relevance,
                p.relevance,
                p.bm25_norm,
                ranking.weight_importance,
                p.importance,
                hit.kind,
                hit.item_type,
                ranking.weight_freshness,
                p.freshness,
                p.age_days,
                ranking.half_life_days,
                ranking.weight_hits,
                p.hits,
                p.hit_count,
            )?;
        }
    }
    if results.fallback {
        writeln!(out, "(ranked by time: the full-text index could not take this query)")?;
    } else if explain {
        let channels = if results.semantic { "full text and vectors" } else { "full text only" };
        writeln!(out, "(channels: {channels})")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use agent_memory_core::store::search::{Parts, SearchHit};
    use expect_test::expect;

    use super::*;
    use crate::output::tests::{AT, rendered};

    fn hit(kind: &'static str, id: i64, title: &str, parts: Parts) -> SearchHit {
        SearchHit {
            kind,
            id,
            at_ms: AT,
            agent: "claude-code".to_owned(),
            project: Some("a-project-with-a-long-name".to_owned()),
            session: "s-1".to_owned(),
            item_type: "bugfix".to_owned(),
            tool: None,
            tier: None,
            title: title.to_owned(),
            lesson: (kind == "observation").then(|| "cause → fix".to_owned()),
            tokens: 42,
            score: 0.8125,
            parts,
            folded: Vec::new(),
            anchors: Vec::new(),
            stale: None,
        }
    }

    #[test]
    fn hits_one_per_line_and_explained() {
        let parts = Parts {
            bm25: Some(3.5),
            bm25_norm: 1.0,
            similarity: None,
            neighbours: 0.0,
            named: 0.0,
            sparse: None,
            session: 0.1,
            relevance: 1.0,
            importance: 0.8,
            freshness: 0.5,
            hit_count: 2,
            hits: 0.667,
            age_days: 30.0,
        };
        let mut fixed = hit("observation", 12, "Fixed the\nflaky login test", parts.clone());
        fixed.folded =
            vec![hit("event", 40, "Bash failed (exit 1): cargo test login", parts.clone())];
        let results = SearchResults {
            hits: vec![fixed, hit("memory", 7, "Use jiff for time", parts)],
            fallback: false,
            semantic: false,
        };
        let ranking = Ranking::default();
        let plain = rendered(|out| write_search(out, &results, &ranking, false, false));
        expect![[r#"
            o12     <time>  claude-code a-project-wit… bugfix      Fixed the flaky login test  (0.812)
                    ↳ cause → fix
                    · e40 Bash failed (exit 1): cargo test login
            m7      <time>  claude-code a-project-wit… bugfix      Use jiff for time  (0.812)
        "#]]
        .assert_eq(&plain);
        let explained = rendered(|out| write_search(out, &results, &ranking, true, false));
        expect![[r#"
            o12     <time>  claude-code a-project-wit… bugfix      Fixed the flaky login test  (0.812)
                    ↳ cause → fix
                    · e40 Bash failed (exit 1): cargo test login
                    = 0.70×relevance 1.000 (bm25 3.50 → 1.000, similarity -, session +0.100)
                      + 0.15×importance 0.80 (observation bugfix)
                      + 0.10×freshness 0.500 (30.0 days old, half-life 30 days)
                      + 0.05×hits 0.667 (2 before)
            m7      <time>  claude-code a-project-wit… bugfix      Use jiff for time  (0.812)
                    = 0.70×relevance 1.000 (bm25 3.50 → 1.000, similarity -, session +0.100)
                      + 0.15×importance 0.80 (memory bugfix)
                      + 0.10×freshness 0.500 (30.0 days old, half-life 30 days)
                      + 0.05×hits 0.667 (2 before)
            (channels: full text only)
        "#]]
        .assert_eq(&explained);
    }

    #[test]
    fn no_hits_and_the_fallback_say_so() {
        let ranking = Ranking::default();
        let none = SearchResults::default();
        expect![[r#"
            no matches
        "#]]
        .assert_eq(&rendered(|out| write_search(out, &none, &ranking, false, false)));
        let fallback = SearchResults {
            hits: vec![hit("event", 45, "ran cargo test", Parts::default())],
            fallback: true,
            semantic: false,
        };
        expect![[r#"
            e45     <time>  claude-code a-project-wit… bugfix      ran cargo test  (0.812)
            (ranked by time: the full-text index could not take this query)
        "#]]
        .assert_eq(&rendered(|out| write_search(out, &fallback, &ranking, true, false)));
    }
}
