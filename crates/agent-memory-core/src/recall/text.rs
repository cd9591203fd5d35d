//! The compact text form of what a read returns, shared by `agent-memory show` and the MCP
//! tools so that a person and a model read the same thing: an item in full, a search's
//! one-line-per-hit index and a timeline.
//!
//! Plain text, one fact per line, every line naming its id, because a model pays for each token
//! it reads. Must not: decide what is read (that is [`super::Reader`]).

use std::fmt::Write as _;

use super::{Item, ItemId, Shown};
use crate::distil::StoredEvent;
use crate::store::distilled::{Observation, Summary, TimelineItem};
use crate::store::injections::LastHanded;
use crate::store::memories::Memory;
use crate::store::search::SearchHit;
use crate::time::format_local;

/// Items in full, one block each, separated by a blank line.
pub fn items<'a>(items: impl IntoIterator<Item = &'a Item>) -> String {
    let mut out = String::new();
    for item in items {
        if !out.is_empty() {
            out.push('\n');
        }
        one(&mut out, item);
    }
    out
}

/// Items as `show` prints them: each in full, ending with when it was last handed to an agent
/// (`Last handed to claude-code (briefing) 2026-12-06 14:02, 3 times`), when it ever was.
pub fn shown(shown: &[Shown]) -> String {
    let mut out = String::new();
    for one_shown in shown {
        if !out.is_empty() {
            out.push('\n');
        }
        one(&mut out, &one_shown.item);
        if let Some(last) = &one_shown.last_handed {
            last_handed(&mut out, last);
        }
    }
    out
}

fn one(out: &mut String, item: &Item) {
    match item {
        Item::Observation(o) => observation(out, o),
        Item::Summary(s) => summary(out, s),
        Item::Memory(m) => memory(out, m),
        Item::Event(e) => event(out, e),
    }
}

fn last_handed(out: &mut String, last: &LastHanded) {
    let times = match last.times {
        1 => "once".to_owned(),
        n => format!("{n} times"),
    };
    let _ = writeln!(
        out,
        "Last handed to {} ({}) {}, {times}",
        last.agent,
        last.channel,
        format_local(last.at_ms)
    );
}

/// A search's answer: one line per hit, best first, with what reading it in full costs.
pub fn search_index(query: &str, hits: &[SearchHit]) -> String {
    if hits.is_empty() {
        return format!("no matches for `{query}`; try fewer or other words, or drop a filter");
    }
    let total: i64 = hits.iter().map(|h| h.tokens).sum();
    let mut out = format!(
        "{} results for `{query}`, best first (id | time | agent | project | type | title | \
         tokens to read in full; {total} in all):\n",
        hits.len()
    );
    for hit in hits {
        let id =
            ItemId::of_kind(hit.kind, hit.id).map_or_else(|| hit.id.to_string(), |i| i.to_string());
        let _ = writeln!(
            out,
            "{id} | {} | {} | {} | {} | {} | ~{}",
            format_local(hit.at_ms),
            hit.agent,
            hit.project.as_deref().unwrap_or("-"),
            hit.item_type,
            one_line(&hit.title, 120),
            hit.tokens,
        );
        if let Some(stale) = &hit.stale {
            out.pop();
            let _ = writeln!(out, " | {}", one_line(stale, 120));
        }
        // The events it was made from that were found too, beneath it.
        for event in &hit.folded {
            let id = ItemId::of_kind(event.kind, event.id)
                .map_or_else(|| event.id.to_string(), |i| i.to_string());
            let _ = writeln!(
                out,
                "  ↳ {id} | {} | {} | ~{}",
                event.item_type,
                one_line(&event.title, 100),
                event.tokens
            );
        }
    }
    out.pop();
    out
}

/// A timeline: the anchor's project's observations, oldest first; `→` marks the anchor when
/// it is an observation.
pub fn timeline(anchor: ItemId, items: &[TimelineItem]) -> String {
    if items.is_empty() {
        return format!(
            "no observations around {anchor} yet (events are distilled into observations by \
             `agent-memory work`)"
        );
    }
    let marked = match anchor {
        ItemId::Observation(id) => Some(id),
        _ => None,
    };
    let mut out = format!(
        "observations around {anchor}, oldest first (id | time | agent | type | title | tokens \
         to read in full):\n"
    );
    for item in items {
        let mark = if Some(item.id) == marked { "→ " } else { "" };
        let _ = writeln!(
            out,
            "{mark}o{} | {} | {} | {} | {} | ~{}",
            item.id,
            format_local(item.at_ms),
            item.agent,
            item.kind,
            one_line(&item.title, 120),
            item.tokens,
        );
    }
    out.pop();
    out
}

/// `text` on one line, cut at `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}

fn list(out: &mut String, label: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "{label}:");
    for item in items {
        let _ = writeln!(out, "- {item}");
    }
}

fn observation(out: &mut String, o: &Observation) {
    let d = &o.draft;
    let _ = writeln!(out, "## o{} [{}] {}", o.id, d.kind, d.title);
    let _ = writeln!(
        out,
        "{} | {} | {} | session {} | mode {}",
        format_local(d.at_ms),
        o.agent,
        o.project.as_deref().unwrap_or("-"),
        o.session,
        o.mode
    );
    if !d.subtitle.is_empty() {
        let _ = writeln!(out, "{}", d.subtitle);
    }
    list(out, "facts", &d.facts);
    if !d.narrative.is_empty() {
        let _ = writeln!(out, "narrative: {}", d.narrative);
    }
    list(out, "concepts", &d.concepts);
    list(out, "files read", &d.files_read);
    list(out, "files modified", &d.files_modified);
    anchors(out, o.anchors.as_deref());
    let sources: Vec<String> = d.source_event_ids.iter().map(|id| format!("e{id}")).collect();
    if !sources.is_empty() {
        let _ = writeln!(out, "from events: {}", sources.join(" "));
    }
    // Its size, and what it stands for when that is more than itself.
    let behind = if o.work_tokens > o.tokens {
        format!(", standing for ~{} tokens of the session's work", o.work_tokens)
    } else {
        String::new()
    };
    let _ = writeln!(out, "~{} tokens{behind}; distilled by {}", o.tokens, o.distiller);
}

fn summary(out: &mut String, m: &Summary) {
    let d = &m.draft;
    let _ = writeln!(out, "## s{} summary of session {}", m.id, m.session);
    let _ = writeln!(
        out,
        "{} | {} | {}",
        format_local(m.at_ms),
        m.agent,
        m.project.as_deref().unwrap_or("-")
    );
    let _ = writeln!(out, "request: {}", d.request);
    list(out, "investigated", &d.investigated);
    list(out, "learned", &d.learned);
    list(out, "completed", &d.completed);
    list(out, "next steps", &d.next_steps);
    list(out, "files read", &d.files_read);
    list(out, "files modified", &d.files_modified);
}

fn memory(out: &mut String, m: &Memory) {
    let scope = m.project_name.as_deref().unwrap_or("global");
    let _ =
        writeln!(out, "## m{} [{}] {} memory, {}", m.id, m.kind.as_str(), m.tier.as_str(), scope);
    let _ = writeln!(
        out,
        "{} | importance {} | {} | {} hits | created {} by {}",
        format_local(m.updated_at),
        m.importance,
        m.status.as_str(),
        m.hits,
        format_local(m.created_at),
        m.provenance()
    );
    let _ = writeln!(out, "{}", m.text);
    if let Some(newer) = m.superseded_by {
        let _ = writeln!(out, "superseded by m{newer}");
    }
    if !m.sources.is_empty() {
        let _ = writeln!(out, "from: {}", m.sources.join(" "));
    }
    anchors(out, m.anchors.as_deref());
}

/// The files an item rests on and whether each still holds: `rests on: src/pay.py (fresh),
/// src/db.py (changed since 2026-12-01)`.
fn anchors(out: &mut String, anchors: Option<&[crate::anchor::Checked]>) {
    let Some(anchors) = anchors.filter(|a| !a.is_empty()) else { return };
    let said: Vec<String> = anchors
        .iter()
        .map(|a| {
            let state = match (a.state, a.since) {
                (crate::anchor::State::Fresh, _) | (_, None) => "fresh".to_owned(),
                (crate::anchor::State::Changed, Some(at)) => {
                    format!("changed since {}", crate::time::local_day(at))
                }
                (crate::anchor::State::Gone, Some(at)) => {
                    format!("gone since {}", crate::time::local_day(at))
                }
            };
            format!("{} ({state})", one_line(&a.path, 120))
        })
        .collect();
    let _ = writeln!(out, "rests on: {}", said.join(", "));
}

fn event(out: &mut String, e: &StoredEvent) {
    let ev = &e.event;
    let _ = writeln!(out, "## e{} [{}] {}", e.id, ev.kind.as_str(), one_line(&ev.summary, 200));
    let _ = writeln!(
        out,
        "{} | {} | session {}{}",
        format_local(ev.at_ms),
        ev.agent,
        ev.session,
        ev.tool.as_deref().map(|t| format!(" | tool {t}")).unwrap_or_default()
    );
    if !ev.body.is_empty() {
        let _ = writeln!(out, "{}", ev.body.trim_end());
    }
    list(out, "files", &ev.files);
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn hit(kind: &'static str, id: i64, item_type: &str, title: &str) -> SearchHit {
        SearchHit {
            agent: "codex".into(),
            project: Some("shop".into()),
            session: "s1".into(),
            item_type: item_type.into(),
            title: title.into(),
            tokens: 12,
            score: 0.9,
            ..SearchHit::bare(kind, id)
        }
    }

    #[test]
    fn a_search_index_shows_the_events_folded_into_an_observation_beneath_it() {
        let mut fixed = hit("observation", 3, "bugfix", "Webhook signature compared in upper case");
        fixed.folded =
            vec![hit("event", 41, "tool_use", "Bash failed (exit 1): node test/webhook.js")];
        let index =
            search_index("webhook signature", &[fixed, hit("summary", 2, "summary", "Fix it")]);
        let index = index.replace(&format_local(0), "<time>");
        expect![[r#"
            2 results for `webhook signature`, best first (id | time | agent | project | type | title | tokens to read in full; 24 in all):
            o3 | <time> | codex | shop | bugfix | Webhook signature compared in upper case | ~12
              ↳ e41 | tool_use | Bash failed (exit 1): node test/webhook.js | ~12
            s2 | <time> | codex | shop | summary | Fix it | ~12"#]]
        .assert_eq(&index);
    }
}
