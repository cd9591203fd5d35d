//! The sign at session start: one line the person sees (never the model) in agents that show
//! a hook's `systemMessage`, saying what was loaded and where the viewer is:
//! `agent-memory: 3 memories, 5 observations from codex, gemini (~820 tokens) · viewer
//! http://127.0.0.1:37777`. Off with `[inject] sign = false`.
//!
//! Must not: cost the hook more than a lookup of the handed items' agents and a look at the
//! server's lock; put the viewer's token on screen.

use rusqlite::params;

use super::Handed;
use crate::fsutil;
use crate::paths::Home;
use crate::store::Store;

/// The line for a briefing that handed `handed` in `tokens`; `None` when it handed nothing.
pub fn line(store: &Store, home: &Home, handed: &Handed, tokens: usize) -> Option<String> {
    let count = |prefix: char| handed.items.iter().filter(|(id, _)| id.starts_with(prefix)).count();
    let (memories, observations, summaries) = (count('m'), count('o'), count('s'));
    if memories + observations + summaries == 0 {
        return None;
    }
    let mut parts = Vec::new();
    for (n, one, many) in [
        (memories, "memory", "memories"),
        (observations, "observation", "observations"),
        (summaries, "session summary", "session summaries"),
    ] {
        match n {
            0 => {}
            1 => parts.push(format!("1 {one}")),
            n => parts.push(format!("{n} {many}")),
        }
    }
    let mut line = format!("agent-memory: {}", parts.join(", "));
    let agents = agents_of(store, handed);
    if !agents.is_empty() {
        line.push_str(&format!(" from {}", agents.join(", ")));
    }
    line.push_str(&format!(" (~{tokens} tokens)"));
    if let Some(url) = viewer(home) {
        line.push_str(&format!(" · viewer {url}"));
    }
    Some(line)
}

/// The agents whose observations and summaries were handed, most items first.
fn agents_of(store: &Store, handed: &Handed) -> Vec<String> {
    let ids = |prefix: char| -> String {
        let list: Vec<i64> = handed
            .items
            .iter()
            .filter_map(|(id, _)| id.strip_prefix(prefix)?.parse().ok())
            .collect();
        serde_json::to_string(&list).unwrap_or_else(|_| "[]".into())
    };
    let found = store.conn().prepare_cached(
        "SELECT agent FROM (
             SELECT o.agent FROM json_each(?1) j JOIN observations o ON o.id = j.value
             UNION ALL
             SELECT x.agent FROM json_each(?2) j JOIN summaries x ON x.id = j.value)
         GROUP BY agent ORDER BY count(*) DESC, agent",
    );
    let Ok(mut stmt) = found else { return Vec::new() };
    let rows = stmt.query_map(params![ids('o'), ids('s')], |r| r.get::<_, String>(0));
    rows.map(|rows| rows.filter_map(Result::ok).collect()).unwrap_or_default()
}

/// The running server's address without its token (the page there leads on), when one runs:
/// its lock is held and `serve.json` names where it listens.
fn viewer(home: &Home) -> Option<String> {
    // The same look as serve's `Instance::is_running`, on the same files.
    if !fsutil::lock_held(&home.root().join("serve.lock")) {
        return None;
    }
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home.root().join("serve.json")).ok()?)
            .ok()?;
    let url = state.get("url")?.as_str()?;
    Some(url.split('?').next().unwrap_or(url).trim_end_matches('/').to_owned())
}
