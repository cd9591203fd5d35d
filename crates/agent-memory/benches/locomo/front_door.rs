//! LoCoMo through the product's front door: the headline row.
//!
//! A user's store holds a conversation the way the hooks store it, so each conversation goes in
//! as one project of prompt events (one agent session per LoCoMo session, each turn a prompt
//! `Speaker: text` at its session's time plus a minute per turn), written as an export file and
//! read with `agent-memory import`. `agent-memory work` then runs as an install runs it, and
//! every question of categories 1–4 is asked with `agent-memory search --json --limit 10
//! --project <conversation>`: the built binary, a fresh home, the default configuration and
//! ranking, and (unless `BENCH_NO_MODELS=1`) the two models `scripts/install` leaves in use,
//! installed with `agent-memory model install`.
//!
//! What counts, written down before any figure was read:
//! - **turn hit at k**: an evidence turn's own event is among the first k results;
//! - **turn or distilled hit at k**: that, or an observation distilled from an evidence turn
//!   (its sources include the turn's event);
//! - **session hit at 10**: any of the first 10 results belongs to a session holding an
//!   evidence turn (one of its events, or an observation or summary of that session): the unit
//!   published session-level figures use.
//!
//! The headline row reports what a user's search returns. `BENCH_FRONT_DOOR_SEARCH` names other
//! `[search]` settings to ask the same store with, one row each (`;` between settings, `,`
//! between the keys of one: `neighbour_weight=0.3,session_text_weight=0.7`): lab rows, for
//! choosing a default on the tuning half (the first five conversations, 26–43) and reporting it
//! on the other (44–50). Each row shows both halves.
//!
//! `BENCH_FRONT_DOOR_HOME=DIR` keeps the store in `DIR` and, when it is already there, asks the
//! questions of it without importing again (for ranking changes only: a change to what import
//! or work store needs a fresh directory). `BENCH_FRONT_DOOR_MISSES=FILE` writes every question
//! whose evidence turn is not in the top 10, with the evidence and the ten results.
//! `BENCH_FRONT_DOOR_ARGS` adds arguments to every search (`--kind event`): a lab row.

use std::collections::{HashMap, HashSet};
use std::process::Command;
use std::time::{Duration, Instant};

use super::{CATEGORIES, Conversation, Question, TurnId};

/// The binary under test, built with this bench.
const BIN: &str = env!("CARGO_BIN_EXE_agent-memory");

/// What the front door found, per category and overall.
#[derive(Debug, Default)]
pub struct FrontDoor {
    pub models: Vec<String>,
    pub questions: usize,
    /// (turn at 5, turn at 10, turn or distilled at 10, session at 10), per category.
    pub hits: HashMap<u8, [usize; 4]>,
    pub asked: HashMap<u8, usize>,
    /// The same four counts for the tuning half (the first five conversations) and the other.
    pub halves: [[usize; 4]; 2],
    pub asked_halves: [usize; 2],
    pub import_time: Duration,
    pub work_time: Duration,
    pub search_times: Vec<Duration>,
    pub events: usize,
    pub distilled: usize,
}

/// A result of `search --json`: its kind and id.
type Found = (String, i64);

/// Runs the binary under test with its arguments and returns what it printed.
type Run<'a> = dyn Fn(&[&str]) -> Result<Vec<u8>, String> + 'a;

/// The store built once, and a row per `[search]` setting asked of it: the default first, then
/// each of `BENCH_FRONT_DOOR_SEARCH`.
pub fn run(
    conversations: &[Conversation],
    with_models: bool,
) -> Result<Vec<(String, FrontDoor)>, String> {
    let temp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let kept = std::env::var_os("BENCH_FRONT_DOOR_HOME").filter(|v| !v.is_empty());
    let root = kept.as_ref().map_or(temp.path().to_path_buf(), std::path::PathBuf::from);
    let home = root.join("home");
    let built = home.join("memory.db").exists();
    let agent_memory = |args: &[&str]| -> Result<Vec<u8>, String> {
        let out = Command::new(BIN)
            .args(args)
            .env("AGENT_MEMORY_HOME", &home)
            .env("HOME", &root)
            .env_remove("AGENT_MEMORY_CONFIG")
            .output()
            .map_err(|e| format!("cannot run {BIN}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "agent-memory {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(out.stdout)
    };
    let mut report = FrontDoor::default();
    if with_models {
        for model in ["potion-base-8m", "splade-tiny"] {
            if !built {
                agent_memory(&["model", "install", model])?;
            }
            report.models.push(model.to_owned());
        }
    }

    if !built {
        let export = root.join("locomo.jsonl");
        agent_memory_core::fsutil::write_atomic(&export, export_lines(conversations).as_bytes())
            .map_err(|e| e.to_string())?;
        let started = Instant::now();
        agent_memory(&["import", "--trust", &export.to_string_lossy()])?;
        report.import_time = started.elapsed();
        let started = Instant::now();
        agent_memory(&["work"])?;
        report.work_time = started.elapsed();
    }

    let db = rusqlite::Connection::open(home.join("memory.db")).map_err(|e| e.to_string())?;
    let places = Places::read(&db)?;
    report.events = places.turn_of_event.len();
    report.distilled = places.session_of.len() - report.events;

    let config_path = home.join("config.toml");
    let config = std::fs::read_to_string(&config_path).unwrap_or_default();
    let mut settings = vec![String::new()];
    if let Ok(more) = std::env::var("BENCH_FRONT_DOOR_SEARCH") {
        settings.extend(more.split(';').map(str::trim).filter(|s| !s.is_empty()).map(String::from));
    }
    let mut rows = Vec::new();
    for setting in settings {
        let lines: String =
            setting.split(',').map(|kv| format!("{}\n", kv.trim())).collect::<String>();
        let edited = match config.find("[search]\n") {
            Some(at) => format!("{}{lines}{}", &config[..at + 9], &config[at + 9..]),
            None => format!("{config}\n[search]\n{lines}"),
        };
        agent_memory_core::fsutil::write_atomic(&config_path, edited.as_bytes())
            .map_err(|e| e.to_string())?;
        let mut row = FrontDoor {
            models: report.models.clone(),
            import_time: report.import_time,
            work_time: report.work_time,
            events: report.events,
            distilled: report.distilled,
            ..FrontDoor::default()
        };
        ask(conversations, &places, &agent_memory, &mut row)?;
        rows.push((setting, row));
    }
    agent_memory_core::fsutil::write_atomic(&config_path, config.as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(rows)
}

/// Asks every question of `conversations` through `agent-memory search` and counts the hits.
fn ask(
    conversations: &[Conversation],
    places: &Places,
    agent_memory: &Run<'_>,
    report: &mut FrontDoor,
) -> Result<(), String> {
    let misses_path = std::env::var_os("BENCH_FRONT_DOOR_MISSES").filter(|v| !v.is_empty());
    let mut misses = String::new();
    let extra = std::env::var("BENCH_FRONT_DOOR_ARGS").unwrap_or_default();
    for (n, conv) in conversations.iter().enumerate() {
        let half = usize::from(n >= 5);
        let project = format!("locomo-{}", conv.name);
        for question in &conv.questions {
            let started = Instant::now();
            let mut args = vec!["search", "--json", "--limit", "10", "--project", &project];
            args.extend(extra.split_whitespace());
            args.push(&question.text);
            let out = agent_memory(&args)?;
            report.search_times.push(started.elapsed());
            let found = hits(&out)?;
            let evidence: HashSet<(String, TurnId)> =
                question.evidence.iter().map(|t| (conv.name.clone(), *t)).collect();
            let sessions: HashSet<(String, u32)> =
                question.evidence.iter().map(|(s, _)| (conv.name.clone(), *s)).collect();
            let turn_at = |k: usize| {
                found.iter().take(k).any(|f| {
                    places.turn_of_event.get(f).is_some_and(|turn| evidence.contains(turn))
                })
            };
            let distilled_at = |k: usize| {
                found.iter().take(k).any(|f| {
                    places
                        .sources
                        .get(f)
                        .is_some_and(|turns| turns.iter().any(|t| evidence.contains(t)))
                })
            };
            let session_at_10 = found
                .iter()
                .take(10)
                .any(|f| places.session_of.get(f).is_some_and(|s| sessions.contains(s)));
            let found = [turn_at(5), turn_at(10), turn_at(10) || distilled_at(10), session_at_10];
            if misses_path.is_some() && !found[1] {
                misses.push_str(&miss(conv, question, &out));
            }
            let row = report.hits.entry(question.category).or_default();
            for counts in [row, &mut report.halves[half]] {
                counts.iter_mut().zip(found).for_each(|(c, hit)| *c += usize::from(hit));
            }
            *report.asked.entry(question.category).or_default() += 1;
            report.asked_halves[half] += 1;
            report.questions += 1;
        }
    }
    if let Some(path) = misses_path {
        agent_memory_core::fsutil::write_atomic(std::path::Path::new(&path), misses.as_bytes())
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A missed question as the misses file shows it: the question, its evidence turns, and the ten
/// results with their kind, score and title.
fn miss(conv: &Conversation, question: &Question, listed: &[u8]) -> String {
    let mut text = format!("## {} [{}] {}\n", conv.name, question.category, question.text);
    for turn in conv.sessions.iter().flat_map(|s| &s.turns) {
        if question.evidence.contains(&turn.id) {
            text.push_str(&format!("  evidence {:?}: {}\n", turn.id, turn.item_text()));
        }
    }
    let value: serde_json::Value = serde_json::from_slice(listed).unwrap_or_default();
    for hit in value["hits"].as_array().into_iter().flatten() {
        let title: String = hit["title"].as_str().unwrap_or("").chars().take(140).collect();
        text.push_str(&format!(
            "  {:>11} {:>6} {:.3} {title}\n",
            hit["kind"].as_str().unwrap_or(""),
            hit["id"].as_i64().unwrap_or(0),
            hit["score"].as_f64().unwrap_or(0.0),
        ));
    }
    text.push('\n');
    text
}

/// Where each stored item came from: an event's turn, an observation's source turns, and the
/// LoCoMo session of every event, observation and summary.
struct Places {
    turn_of_event: HashMap<Found, (String, TurnId)>,
    sources: HashMap<Found, Vec<(String, TurnId)>>,
    session_of: HashMap<Found, (String, u32)>,
}

impl Places {
    fn read(db: &rusqlite::Connection) -> Result<Places, String> {
        let sql = |e: rusqlite::Error| e.to_string();
        let mut turn_of_event = HashMap::new();
        let mut session_of = HashMap::new();
        let mut stmt = db.prepare("SELECT id, uid FROM events").map_err(sql)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(sql)?;
        for row in rows {
            let (id, uid) = row.map_err(sql)?;
            let Some((conv, turn)) = turn_of_uid(&uid) else { continue };
            turn_of_event.insert(("event".to_owned(), id), (conv.to_owned(), turn));
            session_of.insert(("event".to_owned(), id), (conv.to_owned(), turn.0));
        }
        let mut sources: HashMap<Found, Vec<(String, TurnId)>> = HashMap::new();
        let mut stmt =
            db.prepare("SELECT observation_id, event_id FROM observation_sources").map_err(sql)?;
        let rows =
            stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))).map_err(sql)?;
        for row in rows {
            let (observation, event) = row.map_err(sql)?;
            if let Some(turn) = turn_of_event.get(&("event".to_owned(), event)) {
                sources
                    .entry(("observation".to_owned(), observation))
                    .or_default()
                    .push(turn.clone());
                session_of
                    .insert(("observation".to_owned(), observation), (turn.0.clone(), turn.1.0));
            }
        }
        // A summary is its session's: the session of any of that session's events.
        let mut stmt = db
            .prepare(
                "SELECT x.id, min(e.uid) FROM summaries x JOIN events e ON e.session_id = x.session_id
                 GROUP BY x.id",
            )
            .map_err(sql)?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Option<String>>(1)?)))
            .map_err(sql)?;
        for row in rows {
            let (summary, uid) = row.map_err(sql)?;
            if let Some((conv, turn)) = uid.as_deref().and_then(turn_of_uid) {
                session_of.insert(("summary".to_owned(), summary), (conv, turn.0));
            }
        }
        Ok(Places { turn_of_event, sources, session_of })
    }
}

/// The conversation and turn of an event's uid, `locomo-<conversation>-<turn id>` as
/// [`export_lines`] writes it.
fn turn_of_uid(uid: &str) -> Option<(String, TurnId)> {
    let (conv, raw) = uid.strip_prefix("locomo-")?.split_once('-')?;
    Some((conv.to_owned(), super::turn_id(raw)?))
}

/// The results of one `search --json`, in order.
fn hits(out: &[u8]) -> Result<Vec<Found>, String> {
    let value: serde_json::Value =
        serde_json::from_slice(out).map_err(|e| format!("search printed no JSON: {e}"))?;
    Ok(value["hits"]
        .as_array()
        .map(|hits| {
            hits.iter()
                .filter_map(|h| Some((h["kind"].as_str()?.to_owned(), h["id"].as_i64()?)))
                .collect()
        })
        .unwrap_or_default())
}

/// The conversations as an export file: a project each, every turn a prompt event of its
/// session, as a hook stores a prompt.
fn export_lines(conversations: &[Conversation]) -> String {
    use serde_json::json;
    let mut lines = vec![json!({"type": "header", "data": {
        "format": "agent-memory-export", "version": 1, "exported_at": 0}})];
    for conv in conversations {
        let project = conv.project();
        let key = project.key.clone();
        let root = project.root.to_string_lossy().into_owned();
        lines.push(json!({"type": "project", "data": {
            "key": key, "name": project.name, "root": root, "origin": null}}));
        for session in &conv.sessions {
            for (n, turn) in session.turns.iter().enumerate() {
                let prompt = turn.item_text();
                let uid = format!("locomo-{}-{}", conv.name, turn.raw_id);
                lines.push(json!({"type": "event", "data": {
                    "project": key, "content_hash": uid, "event": {
                        "uid": uid, "agent": "claude-code", "kind": "prompt",
                        "source_event": "UserPromptSubmit",
                        "session": format!("locomo-{}-session-{}", conv.name, session.number),
                        "cwd": root, "at_ms": session.at_ms + n as i64 * 60_000,
                        "tool": null, "tool_kind": null,
                        "summary": format!("Prompt: {prompt}"), "body": prompt,
                        "payload": {"prompt": prompt}, "files": [],
                        "sensitivity": "normal", "transcript_path": null}}}));
            }
        }
    }
    lines.iter().map(|l| format!("{l}\n")).collect()
}

impl FrontDoor {
    pub fn print(&self, label: &str) {
        let pct = |n: usize, of: usize| if of == 0 { 0.0 } else { 100.0 * n as f64 / of as f64 };
        println!("\n## LoCoMo through the front door: {label}\n");
        println!(
            "{} questions; import {:.1} s, work {:.1} s ({} events, {} distilled items); search p50 {}\n",
            self.questions,
            self.import_time.as_secs_f64(),
            self.work_time.as_secs_f64(),
            self.events,
            self.distilled,
            super::p50(&self.search_times),
        );
        println!(
            "| category | questions | turn R@5 | turn R@10 | turn or distilled R@10 | session R@10 |"
        );
        println!("|---|---|---|---|---|---|");
        let mut all = [0usize; 4];
        for (category, name) in CATEGORIES {
            let asked = self.asked.get(&category).copied().unwrap_or(0);
            let row = self.hits.get(&category).copied().unwrap_or_default();
            for (total, n) in all.iter_mut().zip(row) {
                *total += n;
            }
            let [r5, r10, distilled, session] = row.map(|n| pct(n, asked));
            println!(
                "| {name} | {asked} | {r5:.1}% | {r10:.1}% | {distilled:.1}% | {session:.1}% |"
            );
        }
        let q = self.questions;
        let [r5, r10, distilled, session] = all.map(|n| pct(n, q));
        println!(
            "| **all** | {q} | **{r5:.1}%** | **{r10:.1}%** | {distilled:.1}% | **{session:.1}%** |"
        );
        for (half, name) in [(0, "tuning half (26–43)"), (1, "reporting half (44–50)")] {
            let asked = self.asked_halves[half];
            let [r5, r10, distilled, session] = self.halves[half].map(|n| pct(n, asked));
            println!(
                "| {name} | {asked} | {r5:.1}% | {r10:.1}% | {distilled:.1}% | {session:.1}% |"
            );
        }
    }
}
