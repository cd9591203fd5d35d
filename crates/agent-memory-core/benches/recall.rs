//! Recall benchmarks over a real SQLite file in a temp dir, through the store's public API: BM25
//! search at 100k and 1M observations, hybrid search at 100k vectors (with the time to load the
//! matrix and the bare scan), and the session-start context the hook builds at 100k
//! observations.
//!
//! The store is filled the way the distil worker fills it: one event per synthetic session
//! through `write_recovered`, then `claim_session`, `save_observations` and `save_summary`, so
//! every full-text and file trigger runs as in production. Growing it to the large size goes
//! through `Store::bulk_insert_observations_for_bench` instead: the same triggers in one
//! statement per session of a thousand, where `save_observations` makes FTS5 flush an index
//! segment per row (about 1.7 times the CPU time). The text is synthetic (English, one
//! observation in six Chinese; five projects, four agents), drawn from a Zipf-like vocabulary so
//! that the query terms match roughly 0.1–5% of rows.
//!
//! Last, `BENCH_EVENTS` raw events are imported beside the observations (tool uses drawn from
//! the same vocabulary, so common words match most of them), and search over every kind is
//! timed with common, mid-frequency and rare words.
//!
//! `cargo bench -p agent-memory-core --bench recall` (release profile). Knobs:
//! `BENCH_OBSERVATIONS` (default 100000), `BENCH_OBSERVATIONS_LARGE` (default 1000000; `0`
//! skips the large store), `BENCH_SUMMARIES` (summaries in all, each beyond one per session
//! above in a session of its own; default 0: none more), `BENCH_EVENTS` (default 1000000; `0`
//! skips them), `BENCH_QUERIES` (default 200), `BENCH_HOME` (build the store in this directory
//! and keep it, to ask it again through the CLI or the server).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use agent_memory_core::config::Config;
use agent_memory_core::distil::{ObservationDraft, SummaryDraft};
use agent_memory_core::event::{Event, EventKind, Sensitivity};
use agent_memory_core::inject;
use agent_memory_core::paths::Home;
use agent_memory_core::project::ProjectIdentity;
use agent_memory_core::store::Store;
use agent_memory_core::store::distilled::Provenance;
use agent_memory_core::store::recall::Asking;
use agent_memory_core::store::search::{Ranking, SearchQuery, VectorQuery};
use agent_memory_core::store::vectors::EmbedCursor;

/// Observations in one synthetic session, and in one session of the bulk-built part (fewer,
/// larger statements make the million-row store quicker to build).
const PER_SESSION: usize = 100;
const PER_BULK_SESSION: usize = 1_000;
/// Sessions written (events, then observations and summaries) per round.
const SESSIONS_PER_ROUND: usize = 50;
const DIM: usize = 384;
const CLUSTERS: usize = 256;
const MODEL: &str = "bench-clustered-384";
const PROJECTS: &[(&str, u32)] =
    &[("billing", 40), ("web-app", 25), ("infra", 15), ("mobile", 12), ("docs-site", 8)];
const AGENTS: &[&str] = &["claude-code", "codex", "gemini", "copilot"];

fn main() {
    let small: usize = env_or("BENCH_OBSERVATIONS", 100_000);
    let large: usize = env_or("BENCH_OBSERVATIONS_LARGE", 1_000_000);
    let queries_n: usize = env_or("BENCH_QUERIES", 200);
    let dir = tempfile::tempdir().expect("temp dir");
    let root =
        std::env::var_os("BENCH_HOME").map_or_else(|| dir.path().to_path_buf(), PathBuf::from);
    std::fs::create_dir_all(&root).expect("create BENCH_HOME");
    let home = Home::at(root);
    let path = home.db_path();
    let mut store = Store::open(&path, Duration::from_secs(5)).expect("open store");
    let vocab = Vocabulary::new();
    let mut filler = Filler { rng: Rng(0x5eed), sessions: 0, rows: 0, df: vec![0; vocab.len()] };
    let mut rows: Vec<Row> = Vec::new();

    let started = Instant::now();
    filler.fill(&mut store, &vocab, small, false);
    built("save_observations", &filler, small, started.elapsed(), &path);
    let queries = make_queries(&mut Rng(0x9e7), &vocab, queries_n);
    report_term_spread(&queries, &vocab, &filler);

    rows.extend(at_size(&store, &home, &path, &queries, filler.rows, "< 30 ms at 100k"));

    // Vectors for every observation so far, clustered, saved through the store.
    let mut rng = Rng(0xc1u64);
    let centers: Vec<Vec<f32>> = (0..CLUSTERS).map(|_| rng.unit(DIM, None, 0.0)).collect();
    let started = Instant::now();
    let saved = save_vectors(&mut store, &centers, &mut rng);
    store.checkpoint().expect("checkpoint");
    println!("vectors: {saved} x {DIM} saved in {:.1} s", started.elapsed().as_secs_f64());
    let mut loads = Vec::new();
    let mut index = None;
    for _ in 0..3 {
        let t = Instant::now();
        index = Some(store.vector_index(MODEL, DIM).expect("vector index"));
        loads.push(t.elapsed());
    }
    loads.sort();
    let index = index.expect("loaded");
    rows.push(Row::time(format!("load vector index, {}", count(index.len())), &loads, ""));
    // What a new process (a CLI search) reads instead: the vector file beside the store.
    store.refresh_vector_file(MODEL, DIM).expect("vector file");
    let mut file_loads = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let from_file = store.load_vector_index(MODEL, DIM).expect("vector index");
        file_loads.push(t.elapsed());
        assert_eq!(from_file.len(), index.len());
    }
    file_loads.sort();
    rows.push(Row::time(
        format!("load vector index from its file, {}", count(index.len())),
        &file_loads,
        "",
    ));
    let query_vectors: Vec<Vec<f32>> =
        (0..queries.len()).map(|i| rng.unit(DIM, Some(&centers[i * 7 % CLUSTERS]), 0.6)).collect();
    let scan = measure(query_vectors.len(), |i| {
        std::hint::black_box(index.top(&query_vectors[i], 30));
    });
    rows.push(Row::time(format!("VectorIndex::top scan, {}", count(index.len())), &scan, ""));
    for (query, vector) in queries.iter().zip(&query_vectors).take(20) {
        let vector = VectorQuery { index: &index, vector };
        store.search_hybrid(query, Some(vector)).expect("hybrid");
    }
    let mut semantic_only = 0usize;
    let hybrid = measure(queries.len(), |i| {
        let vector = VectorQuery { index: &index, vector: &query_vectors[i] };
        let found = store.search_hybrid(&queries[i], Some(vector)).expect("hybrid");
        semantic_only += found.hits.iter().filter(|h| h.parts.bm25.is_none()).count();
    });
    rows.push(Row::time(
        format!("hybrid search, {} vectors", count(index.len())),
        &hybrid,
        "p50 < 50 ms at 100k",
    ));
    println!(
        "hybrid: {:.1} of 10 hits per query came from vectors alone",
        semantic_only as f64 / queries.len() as f64
    );
    drop(index);

    if large > filler.rows {
        let (before, started) = (filler.rows, Instant::now());
        filler.fill(&mut store, &vocab, large, true);
        built("bulk insert", &filler, filler.rows - before, started.elapsed(), &path);
        rows.extend(at_size(&store, &home, &path, &queries, filler.rows, ""));
    }

    // Summaries of their own sessions, up to `BENCH_SUMMARIES` in all (each session above has
    // one): a store of many short sessions holds far more summaries than the sessions above.
    let summaries: usize = env_or("BENCH_SUMMARIES", 0);
    if summaries > filler.sessions {
        let (before, started) = (filler.sessions, Instant::now());
        filler.fill_summaries(&mut store, &vocab, summaries);
        println!(
            "summaries: {} more in {:.1} s, {} in all",
            count(filler.sessions - before),
            started.elapsed().as_secs_f64(),
            count(filler.sessions)
        );
    }

    // Raw events beside what was distilled, as a store that keeps every event holds them:
    // search must cost what it returns, however many rows a common word matches.
    let events: usize = env_or("BENCH_EVENTS", 1_000_000);
    if events > 0 {
        let started = Instant::now();
        import_events(&mut store, &vocab, events, dir.path());
        println!(
            "events: {} imported in {:.1} s; store {:.0} MB",
            count(events),
            started.elapsed().as_secs_f64(),
            db_size(&path) as f64 / 1e6
        );
        let mut rng = Rng(0xe7e7);
        let bands = [
            ("common words", 0, 40, "p50 < 10 ms"),
            ("mid-frequency words", 100, 6_000, "p50 < 10 ms"),
            ("rare words", 6_000, 19_000, "p50 < 10 ms"),
        ];
        for (name, low, high, target) in bands {
            let queries = band_queries(&mut rng, &vocab, queries_n, low, high);
            let label = format!("search, every kind, {name}, + {} events", count(events));
            rows.push(Row::time(label, &bm25(&store, &queries), target));
        }
    }

    println!();
    println!("| figure | n | p50 | p95 | p99 | target |");
    println!("|---|---|---|---|---|---|");
    for row in &rows {
        println!("{}", row.line());
    }
}

fn built(how: &str, filler: &Filler, added: usize, took: Duration, path: &std::path::Path) {
    println!(
        "store: {} observations in {} sessions, {:.0} MB; {added} added by {how} at {:.0} observations/s",
        filler.rows,
        filler.sessions,
        db_size(path) as f64 / 1e6,
        added as f64 / took.as_secs_f64()
    );
}

/// One line of the results table.
struct Row {
    name: String,
    n: usize,
    p50: Duration,
    p95: Duration,
    p99: Duration,
    target: &'static str,
}

impl Row {
    fn time(name: String, sorted: &[Duration], target: &'static str) -> Row {
        Row {
            name,
            n: sorted.len(),
            p50: pct(sorted, 0.5),
            p95: pct(sorted, 0.95),
            p99: pct(sorted, 0.99),
            target,
        }
    }

    fn line(&self) -> String {
        let ms = |d: Duration| format!("{:.2} ms", d.as_secs_f64() * 1000.0);
        format!(
            "| {} | {} | {} | {} | {} | {} |",
            self.name,
            self.n,
            ms(self.p50),
            ms(self.p95),
            ms(self.p99),
            self.target
        )
    }
}

/// A few queries to warm the caches, then every query once, timed.
fn bm25(store: &Store, queries: &[SearchQuery]) -> Vec<Duration> {
    for q in queries.iter().take(20) {
        store.search(q).expect("search");
    }
    measure(queries.len(), |i| {
        std::hint::black_box(store.search(&queries[i]).expect("search"));
    })
}

/// Search, the index alone and session start at the store's current size.
fn at_size(
    store: &Store,
    home: &Home,
    path: &std::path::Path,
    queries: &[SearchQuery],
    n: usize,
    start_target: &'static str,
) -> [Row; 4] {
    // The same queries with the context levers off (neighbours, session, naming): what they
    // cost, measured in the same run.
    let plain: Vec<SearchQuery> = queries
        .iter()
        .map(|q| {
            let mut q = q.clone();
            q.ranking.neighbour_weight = 0.0;
            q.ranking.session_weight = 0.0;
            q.ranking.session_text_weight = 0.0;
            q.ranking.named_weight = 0.0;
            q
        })
        .collect();
    [
        Row::time(format!("BM25 search, {}", count(n)), &bm25(store, queries), "p50 < 10 ms at 1M"),
        Row::time("- without the context levers".into(), &bm25(store, &plain), ""),
        Row::time("- FTS5 alone, top 30 rowids".into(), &fts_alone(path, queries), ""),
        Row::time(
            format!("session-start context, {}", count(n)),
            &session_start(store, home),
            start_target,
        ),
    ]
}

/// What the hook does at SessionStart: [`inject::briefing_markdown`] (the timeline, the last
/// summary, the project's totals, the mode's icons, rendered within the default budget).
fn session_start(store: &Store, home: &Home) -> Vec<Duration> {
    let runs = 300;
    let config = Config::default();
    let mut bytes = 0;
    let times = measure(runs, |i| {
        let (project, _) = PROJECTS[i % PROJECTS.len()];
        let key = format!("path:/bench/{project}");
        let asking = Asking {
            project_key: &key,
            agent: AGENTS[i % AGENTS.len()],
            session: "new",
            across_projects: false,
            branch: None,
        };
        let identity = agent_memory_core::project::ProjectIdentity {
            key: key.clone(),
            root: std::path::PathBuf::from(format!("/bench/{project}")),
            name: project.to_owned(),
            origin: None,
            branch: None,
        };
        let text = inject::briefing_markdown(store, home, &config, &identity, Some(&asking))
            .expect("briefing")
            .expect("a briefing");
        bytes += text.len();
    });
    println!("session-start context: {} bytes on average", bytes / runs);
    times
}

/// Gives every item without a vector one near a random cluster centre; returns how many.
fn save_vectors(store: &mut Store, centers: &[Vec<f32>], rng: &mut Rng) -> usize {
    let mut saved = 0;
    let mut cursor = EmbedCursor::default();
    loop {
        let items = store.unembedded(MODEL, &mut cursor, 5_000).expect("unembedded");
        if items.is_empty() {
            return saved;
        }
        let rows: Vec<(&str, i64, Vec<f32>)> = items
            .iter()
            .map(|item| {
                let center = &centers[rng.below(centers.len())];
                // Spread within a cluster: similarity to the centre from about 0.75 to 0.93.
                let spread = 0.4 + 0.5 * rng.unit_f32();
                (item.kind, item.id, rng.unit(DIM, Some(center), spread))
            })
            .collect();
        store.save_vectors(MODEL, &rows).expect("save vectors");
        saved += rows.len();
    }
}

/// The observations' full-text index alone, on a second read-only connection: the top 30
/// rowids by BM25 with no join, filter or merge, to show what the index itself costs. Prints
/// how many rows the queries match.
fn fts_alone(path: &std::path::Path, queries: &[SearchQuery]) -> Vec<Duration> {
    use rusqlite::{Connection, OpenFlags};
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("read-only connection");
    let matches: Vec<String> = queries
        .iter()
        .filter_map(|q| agent_memory_core::store::fts::to_match_query(&q.text, q.max_terms))
        .collect();
    let mut count = conn
        .prepare("SELECT count(*) FROM observations_fts WHERE observations_fts MATCH ?1")
        .expect("count");
    let mut counts: Vec<i64> =
        matches.iter().map(|m| count.query_row([m], |r| r.get(0)).expect("count")).collect();
    counts.sort_unstable();
    println!(
        "matches per query (observations): p10 {}, p50 {}, p90 {}",
        counts[counts.len() / 10],
        counts[counts.len() / 2],
        counts[counts.len() * 9 / 10]
    );
    let mut top = conn
        .prepare(
            "SELECT rowid FROM observations_fts WHERE observations_fts MATCH ?1
             ORDER BY rank LIMIT 30",
        )
        .expect("top");
    measure(matches.len(), |i| {
        let ids: Vec<i64> = top
            .query_map([&matches[i]], |r| r.get(0))
            .expect("query")
            .collect::<rusqlite::Result<_>>()
            .expect("rows");
        std::hint::black_box(ids);
    })
}

/// Writes synthetic sessions into the store the way the distil worker does.
struct Filler {
    rng: Rng,
    sessions: usize,
    rows: usize,
    /// Observations each vocabulary word occurs in.
    df: Vec<u32>,
}

impl Filler {
    /// Adds sessions until the store holds `target` observations: through `save_observations`
    /// as the distil worker does, or with `bulk`, through the benchmark's one-statement insert
    /// (same triggers, one full-text segment per session instead of one per row).
    fn fill(&mut self, store: &mut Store, vocab: &Vocabulary, target: usize, bulk: bool) {
        let day = 86_400_000i64;
        let epoch = 1_730_000_000_000i64;
        while self.rows < target {
            let first = self.sessions;
            let per_session = if bulk { PER_BULK_SESSION } else { PER_SESSION };
            let n = SESSIONS_PER_ROUND.min((target - self.rows).div_ceil(per_session));
            let events: Vec<(Event, String, ProjectIdentity)> =
                (first..first + n).map(|s| session_event(s, epoch + s as i64 * day / 8)).collect();
            store.write_recovered(&events, &[]).expect("write events");
            let pending = store.pending_sessions(n * 2).expect("pending");
            for session in pending {
                let source = store.session_events(session.session_id, 0).expect("events");
                let event = &source[0];
                let owner = "bench";
                assert!(
                    store.claim_session(session.session_id, owner, 0, i64::MAX / 4).expect("claim")
                );
                let rows = per_session.min(target - self.rows);
                let mut drafts = Vec::with_capacity(rows);
                for k in 0..rows {
                    let mut draft = self.observation(vocab, k);
                    draft.at_ms = event.event.at_ms + k as i64 * 60_000;
                    // The real source event, and a made-up one that keeps each draft's source key
                    // apart (a real session has an event per observation or more).
                    draft.source_event_ids = vec![event.id, 1_000_000_000 + self.rows as i64];
                    let tokens = agent_memory_core::tokens::estimate(&draft.narrative) as i64 + 20;
                    drafts.push((draft, tokens, tokens * 12));
                    self.rows += 1;
                }
                let provenance = Provenance { mode: "code", distiller: "offline" };
                if bulk {
                    let added = store
                        .bulk_insert_observations_for_bench(&session, provenance, &drafts)
                        .expect("bulk insert");
                    assert_eq!(added, rows);
                    // Moves the session's progress on, as the worker's save would have.
                    store
                        .save_observations(&session, owner, provenance, &[], event.id)
                        .expect("progress");
                } else {
                    let added = store
                        .save_observations(&session, owner, provenance, &drafts, event.id)
                        .expect("save observations");
                    assert_eq!(added, Some(rows));
                }
                let at = drafts.last().map_or(event.event.at_ms, |(d, _, _)| d.at_ms);
                let summary = self.summary(vocab);
                let figures = (at, event.id, 60, 2_000);
                assert!(
                    store
                        .save_summary(&session, owner, provenance, &summary, figures)
                        .expect("summary")
                );
                self.sessions += 1;
            }
            store.checkpoint().expect("checkpoint");
        }
    }

    /// Sessions with a summary and no observation (short sessions a work pass only
    /// summarized), until the store holds `target` summaries.
    fn fill_summaries(&mut self, store: &mut Store, vocab: &Vocabulary, target: usize) {
        let day = 86_400_000i64;
        let epoch = 1_730_000_000_000i64;
        while self.sessions < target {
            let first = self.sessions;
            let n = 500.min(target - self.sessions);
            let events: Vec<(Event, String, ProjectIdentity)> =
                (first..first + n).map(|s| session_event(s, epoch + s as i64 * day / 8)).collect();
            store.write_recovered(&events, &[]).expect("write events");
            for session in store.pending_sessions(n * 2).expect("pending") {
                let event = &store.session_events(session.session_id, 0).expect("events")[0];
                let owner = "bench";
                assert!(
                    store.claim_session(session.session_id, owner, 0, i64::MAX / 4).expect("claim")
                );
                let provenance = Provenance { mode: "code", distiller: "offline" };
                // Nothing to observe: the session's progress moves on, as the worker's would.
                store
                    .save_observations(&session, owner, provenance, &[], event.id)
                    .expect("progress");
                let summary = self.summary(vocab);
                let figures = (event.event.at_ms, event.id, 60, 2_000);
                assert!(
                    store
                        .save_summary(&session, owner, provenance, &summary, figures)
                        .expect("summary")
                );
                self.sessions += 1;
            }
            store.checkpoint().expect("checkpoint");
        }
    }

    /// Words of the English vocabulary, counted for the document frequencies.
    fn words(&mut self, vocab: &Vocabulary, n: usize, seen: &mut Vec<usize>) -> String {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let id = vocab.sample(&mut self.rng);
            seen.push(id);
            out.push(vocab.words[id].as_str());
        }
        out.join(" ")
    }

    fn zh_words(&mut self, vocab: &Vocabulary, n: usize, seen: &mut Vec<usize>) -> String {
        let mut out = String::new();
        for i in 0..n {
            let id = vocab.sample_zh(&mut self.rng);
            seen.push(id);
            out.push_str(&vocab.words[id]);
            if i % 5 == 4 {
                out.push('，');
            }
        }
        out
    }

    fn path(&mut self, vocab: &Vocabulary, seen: &mut Vec<usize>) -> String {
        let dir = self.words(vocab, 1, seen);
        let file = self.words(vocab, 1, seen);
        let ext = ["rs", "ts", "py", "go", "sql", "md"][self.rng.below(6)];
        format!("src/{dir}/{file}.{ext}")
    }

    /// One observation, the `k`th of its session.
    fn observation(&mut self, vocab: &Vocabulary, k: usize) -> ObservationDraft {
        let mut seen = Vec::with_capacity(128);
        let kind =
            ["bugfix", "feature", "refactor", "change", "discovery", "decision"][self.rng.below(6)];
        let files_read: Vec<String> =
            (0..1 + self.rng.below(3)).map(|_| self.path(vocab, &mut seen)).collect();
        let files_modified: Vec<String> =
            (0..self.rng.below(3)).map(|_| self.path(vocab, &mut seen)).collect();
        let file = files_modified.first().unwrap_or(&files_read[0]).clone();
        let chinese = (self.sessions + k).is_multiple_of(6);
        let (title, subtitle, facts, narrative) = if chinese {
            let a = self.zh_words(vocab, 2, &mut seen);
            let b = self.words(vocab, 1, &mut seen);
            let title = format!("{}{a}：{b} 在 {file}", ["修复", "新增", "重构", "发现"][k % 4]);
            let subtitle = self.zh_words(vocab, 6, &mut seen);
            let facts =
                (0..3).map(|_| format!("{}。", self.zh_words(vocab, 5, &mut seen))).collect();
            let mut narrative = self.zh_words(vocab, 12, &mut seen);
            narrative.push(' ');
            narrative.push_str(&self.words(vocab, 6, &mut seen));
            (title, subtitle, facts, narrative)
        } else {
            let verb = ["Fixed", "Added", "Refactored", "Found", "Decided on", "Changed"]
                [self.rng.below(6)];
            let title = format!("{verb} {} in {file}", self.words(vocab, 3, &mut seen));
            let subtitle = self.words(vocab, 10, &mut seen);
            let facts = (0..3)
                .map(|_| {
                    let w = self.words(vocab, 8, &mut seen);
                    format!("The {w} in {}.", self.path(vocab, &mut seen))
                })
                .collect();
            let narrative = format!(
                "{}; then {}, because {}.",
                self.words(vocab, 14, &mut seen),
                self.words(vocab, 10, &mut seen),
                self.words(vocab, 10, &mut seen)
            );
            (title, subtitle, facts, narrative)
        };
        seen.sort_unstable();
        seen.dedup();
        for id in seen {
            self.df[id] += 1;
        }
        let concepts = ["how-it-works", "gotcha", "pattern", "trade-off", "problem-solution"];
        ObservationDraft {
            title,
            subtitle,
            facts,
            narrative,
            kind: kind.into(),
            concepts: vec![concepts[k % 5].into(), concepts[(k + 2) % 5].into()],
            files_read,
            files_modified,
            source_event_ids: Vec::new(),
            at_ms: 0,
        }
    }

    fn summary(&mut self, vocab: &Vocabulary) -> SummaryDraft {
        let mut seen = Vec::new();
        SummaryDraft {
            request: format!("fix the {}", self.words(vocab, 6, &mut seen)),
            investigated: vec![self.path(vocab, &mut seen)],
            learned: vec![self.words(vocab, 12, &mut seen)],
            completed: vec![format!("edited {}", self.path(vocab, &mut seen))],
            next_steps: vec![format!("add a test for {}", self.words(vocab, 4, &mut seen))],
            files_read: vec![],
            files_modified: vec![],
        }
    }
}

/// The one event that opens synthetic session `s`.
fn session_event(s: usize, at_ms: i64) -> (Event, String, ProjectIdentity) {
    let total: u32 = PROJECTS.iter().map(|p| p.1).sum();
    // Projects of uneven size, spread evenly over time.
    let mut slot = (s as u32 * 37) % total;
    let project = PROJECTS
        .iter()
        .find(|(_, w)| {
            if slot < *w {
                true
            } else {
                slot -= w;
                false
            }
        })
        .map_or(PROJECTS[0].0, |p| p.0);
    let root = format!("/bench/{project}");
    let identity = ProjectIdentity {
        key: format!("path:{root}"),
        root: PathBuf::from(&root),
        name: project.into(),
        origin: None,
        branch: None,
    };
    let event = Event {
        uid: format!("bench-{s}"),
        agent: AGENTS[s % AGENTS.len()].into(),
        kind: EventKind::Prompt,
        source_event: "UserPromptSubmit".into(),
        session: format!("bench-session-{s}"),
        cwd: Some(root),
        at_ms,
        tool: None,
        tool_kind: None,
        summary: "Prompt: continue".into(),
        body: "continue".into(),
        payload: serde_json::json!({"prompt": "continue"}),
        files: vec![],
        sensitivity: Sensitivity::Normal,
        transcript_path: None,
        facts: Default::default(),
    };
    (event, format!("{s:032x}"), identity)
}

/// English words ranked by frequency (common words first, then project identifiers), then
/// two-character Chinese words, each part sampled with probability ∝ 1 / rank.
struct Vocabulary {
    words: Vec<String>,
    english_cdf: Vec<f64>,
    zh_start: usize,
    zh_cdf: Vec<f64>,
}

const ENGLISH: &str = "the to of and a in is for that with on it as be not this by from when \
    test error file config function value request user cache query build data type return call \
    path server client table index session event token response handler module update check \
    load parse write read store field message string timeout retry default version schema \
    state result option list key name log output input format buffer stream thread lock queue \
    worker job task hook agent memory search rank score vector model batch limit offset page \
    route api endpoint header body json yaml toml env variable secret password auth login \
    logout permission role account payment invoice order cart price currency webhook callback \
    signature verify hash encode decode compress image upload download storage bucket disk \
    network socket port host proxy tls certificate dns migration rollback commit transaction \
    deadlock replica shard partition backup restore deploy release pipeline docker container \
    image kubernetes pod node cluster service metric alert trace span latency throughput \
    memory leak allocation garbage pointer reference borrow lifetime trait struct enum macro \
    closure iterator future async await runtime panic unwrap result crate package dependency \
    feature flag experiment rollout canary regression benchmark profile flame graph sampling \
    fixture snapshot mock stub assertion coverage lint format clippy warning deprecated \
    refactor rename extract inline split merge conflict branch rebase tag changelog readme \
    docs comment typo spelling locale translation unicode emoji timezone date duration \
    interval cron schedule debounce throttle backoff jitter circuit breaker fallback \
    degrade health probe readiness liveness shutdown signal graceful drain reload watch \
    notify subscribe publish topic channel broadcast websocket poll sse stream chunk frame \
    codec protobuf grpc schema registry avro parquet csv export import sync replicate \
    conflict merge vector clock tombstone compaction vacuum analyze explain plan join \
    subquery window aggregate group having distinct union cursor pagination sort filter \
    facet highlight snippet tokenizer stemmer bigram trigram fuzzy prefix wildcard phrase \
    boolean weight boost decay freshness importance relevance recall precision ranking";

const CHINESE: &str = "修复 问题 支付 回调 数据 迁移 日志 模块 缓存 测试 签名 校验 配置 部署 接口 \
    用户 登录 权限 性能 优化 错误 超时 重试 队列 索引 查询 事务 线程 内存 泄漏 并发 锁定 \
    服务 请求 响应 路由 网关 证书 加密 解密 压缩 上传 下载 存储 备份 恢复 发布 回滚 版本 \
    依赖 构建 编译 警告 格式 文档 注释 翻译 时区 日期 定时 任务 调度 限流 熔断 降级 健康 \
    检查 信号 关闭 重载 监听 通知 订阅 消息 主题 通道 广播 分页 排序 过滤 搜索 分词 权重 \
    召回 精度 排名 向量 模型 批量 上限 偏移 页面 字段 字符 编码 解析 写入 读取 状态 结果 \
    选项 列表 名称 输出 输入 缓冲 数据库 表格 会话 事件 令牌 处理 更新 加载 默认 架构 账户 \
    订单 价格 货币 发票 容器 集群 节点 指标 告警 追踪 延迟 吞吐 基准 快照 覆盖 重构 合并 \
    冲突 分支 标签";

impl Vocabulary {
    fn new() -> Vocabulary {
        let mut words: Vec<String> = Vec::new();
        for w in ENGLISH.split_whitespace() {
            if !words.iter().any(|x| x == w) {
                words.push(w.to_owned());
            }
        }
        // The long tail: identifiers and names particular to each project.
        const SYLLABLES: &[&str] = &[
            "ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "ze", "bo", "dri", "fen", "gal",
        ];
        let mut n = 0usize;
        while words.len() < 20_000 {
            let mut w = String::new();
            let mut m = n + SYLLABLES.len() * SYLLABLES.len();
            while m > 0 {
                w.push_str(SYLLABLES[m % SYLLABLES.len()]);
                m /= SYLLABLES.len();
            }
            n += 1;
            if !words.contains(&w) {
                words.push(w);
            }
        }
        let english_cdf = cdf(words.len(), 1.0);
        let zh_start = words.len();
        words.extend(CHINESE.split_whitespace().map(str::to_owned));
        let zh_cdf = cdf(words.len() - zh_start, 0.9);
        Vocabulary { words, english_cdf, zh_start, zh_cdf }
    }

    fn len(&self) -> usize {
        self.words.len()
    }

    fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit_f64();
        self.english_cdf.partition_point(|&c| c < u).min(self.english_cdf.len() - 1)
    }

    fn sample_zh(&self, rng: &mut Rng) -> usize {
        let u = rng.unit_f64();
        self.zh_start + self.zh_cdf.partition_point(|&c| c < u).min(self.zh_cdf.len() - 1)
    }
}

fn cdf(n: usize, exponent: f64) -> Vec<f64> {
    let weights: Vec<f64> = (1..=n).map(|r| 1.0 / (r as f64).powf(exponent)).collect();
    let total: f64 = weights.iter().sum();
    let mut acc = 0.0;
    weights
        .iter()
        .map(|w| {
            acc += w / total;
            acc
        })
        .collect()
}

/// Queries of one to four terms: English words from the middle of the Zipf curve, some
/// two-character Chinese words, some mixed, a quarter filtered by project.
fn make_queries(rng: &mut Rng, vocab: &Vocabulary, n: usize) -> Vec<SearchQuery> {
    (0..n)
        .map(|i| {
            let terms = 1 + rng.below(4);
            let mut words: Vec<&str> = Vec::new();
            for t in 0..terms {
                let chinese = i.is_multiple_of(5) || (i % 5 == 1 && t == 0);
                let id = if chinese {
                    vocab.zh_start + 3 + rng.below((vocab.len() - vocab.zh_start - 3).min(120))
                } else {
                    // Log-uniform over ranks 100..6000.
                    let r = (100f64.ln() + rng.unit_f64() * 60f64.ln()).exp();
                    r as usize
                };
                words.push(&vocab.words[id]);
            }
            SearchQuery {
                text: words.join(" "),
                project: (i % 4 == 3)
                    .then(|| format!("path:/bench/{}", PROJECTS[i % PROJECTS.len()].0)),
                limit: 10,
                max_terms: 12,
                ranking: Ranking::default(),
                ..SearchQuery::default()
            }
        })
        .collect()
}

/// Imports `n` raw events through `Store::import`, as `agent-memory import` does: tool uses
/// whose bodies are thirty words drawn from the same Zipf curve, 150 to a session, so the most
/// common words are in most events.
fn import_events(store: &mut Store, vocab: &Vocabulary, n: usize, dir: &std::path::Path) {
    use std::io::Write as _;
    let path = dir.join("events.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).expect("create export"));
    let mut line = |value: serde_json::Value| {
        serde_json::to_writer(&mut out, &value).expect("write");
        out.write_all(b"\n").expect("newline");
    };
    let epoch = 1_730_000_000_000i64;
    line(
        serde_json::json!({"type": "header", "data": {"format": "agent-memory-export", "version": 1, "exported_at": epoch}}),
    );
    for (project, _) in PROJECTS {
        line(
            serde_json::json!({"type": "project", "data": {"key": format!("path:/bench/{project}"), "name": project, "root": format!("/bench/{project}"), "origin": null}}),
        );
    }
    let mut rng = Rng(0xe7);
    for i in 0..n {
        let session = i / 150;
        let project = PROJECTS[session % PROJECTS.len()].0;
        let words: Vec<&str> = (0..30)
            .map(|k| {
                let id =
                    if k % 10 == 9 { vocab.sample_zh(&mut rng) } else { vocab.sample(&mut rng) };
                vocab.words[id].as_str()
            })
            .collect();
        let command = words[..4].join(" ");
        line(
            serde_json::json!({"type": "event", "data": {"project": format!("path:/bench/{project}"), "content_hash": format!("{i:032x}"), "event": {
            "uid": format!("bench-event-{i}"), "agent": AGENTS[session % AGENTS.len()], "kind": "tool_use",
            "source_event": "PostToolUse", "session": format!("bench-events-{session}"), "cwd": format!("/bench/{project}"),
            "at_ms": epoch + i as i64 * 1_000, "tool": "Bash", "tool_kind": "shell",
            "summary": format!("Bash: {command}"), "body": words.join(" "),
            "payload": {"input": {"command": command}, "output": words.join(" "), "is_error": false},
            "files": [], "sensitivity": "normal", "transcript_path": null}}}),
        );
    }
    out.flush().expect("flush");
    drop(out);
    let mut input = std::io::BufReader::new(std::fs::File::open(&path).expect("open export"));
    let trust = agent_memory_core::store::transfer::ImportTrust::Everything;
    let report = store.import(&mut input, &|_| {}, &|text| text.to_owned(), trust).expect("import");
    assert_eq!(report.events, n, "every event imported");
}

/// Queries of one to three words whose ranks lie in `low..high` of the Zipf curve.
fn band_queries(
    rng: &mut Rng,
    vocab: &Vocabulary,
    n: usize,
    low: usize,
    high: usize,
) -> Vec<SearchQuery> {
    (0..n)
        .map(|_| {
            let words: Vec<&str> = (0..1 + rng.below(3))
                .map(|_| vocab.words[low + rng.below(high - low)].as_str())
                .collect();
            SearchQuery {
                text: words.join(" "),
                limit: 10,
                max_terms: 12,
                ranking: Ranking::default(),
                ..SearchQuery::default()
            }
        })
        .collect()
}

/// How many rows the query terms occur in, to check the vocabulary's spread.
fn report_term_spread(queries: &[SearchQuery], vocab: &Vocabulary, filler: &Filler) {
    let mut shares: Vec<f64> = queries
        .iter()
        .flat_map(|q| q.text.split_whitespace())
        .filter_map(|w| vocab.words.iter().position(|x| x == w))
        .map(|id| f64::from(filler.df[id]) * 100.0 / filler.rows as f64)
        .collect();
    shares.sort_by(f64::total_cmp);
    let at = |p: f64| shares[((shares.len() - 1) as f64 * p).round() as usize];
    println!(
        "query terms: {} terms in {} queries; rows holding a term: p10 {:.2}%, p50 {:.2}%, p90 {:.2}%",
        shares.len(),
        queries.len(),
        at(0.1),
        at(0.5),
        at(0.9)
    );
}

/// splitmix64: enough randomness for synthetic data, with no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit_f64(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn unit_f32(&mut self) -> f32 {
        self.unit_f64() as f32
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A standard normal sample (Box–Muller).
    fn normal(&mut self) -> f32 {
        let u = self.unit_f64().max(1e-12);
        let v = self.unit_f64();
        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
    }

    /// A unit vector: `center` plus noise of length about `spread`, or uniform on the sphere
    /// without a centre.
    fn unit(&mut self, dim: usize, center: Option<&[f32]>, spread: f32) -> Vec<f32> {
        let scale = spread / (dim as f32).sqrt();
        let mut v: Vec<f32> = (0..dim)
            .map(|i| match center {
                Some(c) => c[i] + self.normal() * scale,
                None => self.normal(),
            })
            .collect();
        agent_memory_core::embed::normalize(&mut v);
        v
    }
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn count(n: usize) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1_000 && n.is_multiple_of(1_000) {
        format!("{}k", n / 1_000)
    } else {
        n.to_string()
    }
}

fn db_size(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn measure(runs: usize, mut f: impl FnMut(usize)) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..runs)
        .map(|i| {
            let t = Instant::now();
            f(i);
            t.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}
