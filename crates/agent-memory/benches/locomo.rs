//! LoCoMo retrieval recall: how often search puts the turn that answers a question in its top
//! 5 and top 10, and how many tokens those results cost to read.
//!
//! Each of the ten conversations goes into a fresh store in a temp dir: every turn is stored as
//! a captured event and, through the distil worker's path (`claim_session`, `save_observations`),
//! as one observation titled `speaker: text` at its session's time plus its place in the
//! session, so both the full-text and the vector channel see it. Every question of categories
//! 1–4 is then asked with `search` over observations of that conversation's project, and a
//! question is a hit at k when any of its evidence turns is among the top k.
//!
//! Ranking is neutral on purpose: relevance weight 1, importance, freshness and hits weight 0
//! (the other fields as configured by default: 30 candidates a channel, similarity floor 0.72).
//! Freshness would favour the last sessions of old dialogue, and every turn has the same type.
//! Questions go in as written: the query becomes an OR of up to 16 quoted terms.
//!
//! The data set is evaluation data only: it is never shipped or committed, and is read where
//! it lies, from the directory given as the first argument or in `AGENT_MEMORY_LOCOMO_DIR`. That
//! directory holds the public `locomo10.json` (from the snap-research/locomo repository's
//! `data/` folder; all ten conversations in one array) or one `NN.json` per conversation (one
//! element of that array, its `conversation` fields and `qa` side by side). Without it the bench
//! says where the data comes from and fails. With `BENCH_MODEL_DIR=<installed model dir>` every
//! turn and question is also embedded and `search_hybrid` is measured beside BM25; [`recall`]
//! takes the loader of that model as a parameter (`BENCH_SIMILARITY_FLOOR` overrides the floor).
//! With `BENCH_SPARSE_DIR=<installed sparse model dir>` every turn and question is also encoded
//! with that learned sparse model, and BM25 and every hybrid row are measured at each share of
//! `BENCH_SPARSE_SHARES` (0 and the default share unless set).
//!
//! Before those lab rows, the headline: the same conversations through the product's front door
//! ([`front_door`]: `import`, `work` and `search` of the built binary, default configuration).
//! `BENCH_FRONT_DOOR_ONLY=1` stops after it, `BENCH_LAB_ONLY=1` skips it, `BENCH_NO_MODELS=1`
//! runs it without the models.
//!
//! `cargo bench -p agent-memory --bench locomo -- DIR` (release profile).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use agent_memory_core::distil::ObservationDraft;
use agent_memory_core::embed::{Embedder, SparseEncoder};
use agent_memory_core::event::{Event, EventKind, Sensitivity};
use agent_memory_core::project::ProjectIdentity;
use agent_memory_core::store::Store;
use agent_memory_core::store::distilled::Provenance;
use agent_memory_core::store::search::{Ranking, SearchQuery, SparseQuery, VectorQuery};
use agent_memory_core::tokens;

#[path = "locomo/front_door.rs"]
mod front_door;

/// Loads the embedding model installed in a directory.
type Loader = fn(&Path) -> Result<Box<dyn Embedder>, String>;

/// A learned sparse model, when `BENCH_SPARSE_DIR` names one, and the shares to score it at.
struct Sparse {
    encoder: Box<dyn SparseEncoder>,
    shares: Vec<f64>,
}

/// The categories measured: 5 (adversarial, unanswerable) is left out as usual.
const CATEGORIES: [(u8, &str); 4] =
    [(1, "multi-hop"), (2, "temporal"), (3, "open-domain"), (4, "single-hop")];

/// What to do when no data directory was given.
const WHERE_THE_DATA_IS: &str = "\
locomo: no LoCoMo data; give its directory as the first argument or in AGENT_MEMORY_LOCOMO_DIR:
  cargo bench -p agent-memory --bench locomo -- /path/to/locomo
LoCoMo (Maharana et al., ACL 2024) is public evaluation data: put `data/locomo10.json` from the
snap-research/locomo repository on GitHub in that directory. It is only read there; never copy
it into this repository, its fixtures or its binaries.";

fn main() -> ExitCode {
    // `cargo bench` adds flags of its own (`--bench`); the data directory is the one that is not.
    let arg = std::env::args_os().skip(1).find(|a| !a.to_string_lossy().starts_with('-'));
    let from_env = std::env::var_os("AGENT_MEMORY_LOCOMO_DIR").filter(|v| !v.is_empty());
    let Some(data) = arg.or(from_env).map(PathBuf::from) else {
        eprintln!("{WHERE_THE_DATA_IS}");
        return ExitCode::from(2);
    };
    let model_dir = std::env::var_os("BENCH_MODEL_DIR").map(PathBuf::from);
    let loader: Loader = |dir| agent_memory_embed::load(dir).map_err(|e| e.to_string());
    // `BENCH_SPARSE_DIR`: an installed sparse model (splade-tiny), scored at each share of
    // `BENCH_SPARSE_SHARES` (comma-separated; 0 and the default share when unset).
    let sparse = match std::env::var_os("BENCH_SPARSE_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => match agent_memory_embed::load_sparse(Path::new(&dir)) {
            Ok(encoder) => {
                let shares =
                    env_list("BENCH_SPARSE_SHARES", &[0.0, Ranking::default().sparse_share]);
                Some(Sparse { encoder, shares })
            }
            Err(err) => {
                eprintln!("locomo: {err}");
                return ExitCode::FAILURE;
            }
        },
        None => None,
    };
    if std::env::var_os("BENCH_LAB_ONLY").is_none() {
        let with_models = std::env::var_os("BENCH_NO_MODELS").is_none();
        let label = if with_models {
            "default install (potion-base-8m, splade-tiny), default ranking"
        } else {
            "no model, default ranking"
        };
        match read_conversations(&data).and_then(|c| front_door::run(&c, with_models)) {
            Ok(rows) => {
                for (setting, report) in rows {
                    match setting.as_str() {
                        "" => report.print(label),
                        _ => report.print(&format!("lab row, [search] {setting}")),
                    }
                }
            }
            Err(err) => {
                eprintln!("locomo: {err}");
                return ExitCode::FAILURE;
            }
        }
        if std::env::var_os("BENCH_FRONT_DOOR_ONLY").is_some() {
            return ExitCode::SUCCESS;
        }
        println!("\n## The lab rows: every turn stored as an observation, neutral ranking\n");
    }
    match recall(&data, model_dir.as_deref().map(|dir| (dir, loader)), sparse.as_ref()) {
        Ok(report) => {
            report.print();
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("locomo: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Ingests every conversation in `data` into a store of its own, asks its questions and scores
/// the answers: BM25 always, hybrid as well when `embedder` names a model directory and the
/// loader for it.
/// The comma-separated values of the environment variable `var` that parse, or `default` when
/// there are none.
fn env_list<T: std::str::FromStr + Clone>(var: &str, default: &[T]) -> Vec<T> {
    let given: Vec<T> = std::env::var(var)
        .unwrap_or_default()
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    if given.is_empty() { default.to_vec() } else { given }
}

fn recall(
    data: &Path,
    embedder: Option<(&Path, Loader)>,
    sparse: Option<&Sparse>,
) -> Result<Report, String> {
    let conversations = read_conversations(data)?;
    // The floors hybrid search is scored at: `BENCH_SIMILARITY_FLOOR` (one, or several
    // comma-separated, each a row of the report), else the model's own, else the default.
    let model_floor = embedder
        .as_ref()
        .and_then(|(dir, _)| agent_memory_core::embed::Manifest::read(dir).ok())
        .and_then(|m| m.similarity_floor);
    let floors: Vec<f32> = env_list(
        "BENCH_SIMILARITY_FLOOR",
        &[model_floor.unwrap_or(Ranking::default().similarity_floor)],
    );
    // How the channels are fused: `BENCH_VECTOR_SHARES` (comma-separated; `or` for the
    // default `1 - (1 - bm25)(1 - similarity)`), else the default ranking's.
    let mut shares: Vec<Option<f64>> = std::env::var("BENCH_VECTOR_SHARES")
        .unwrap_or_default()
        .split(',')
        .filter(|v| !v.trim().is_empty())
        .map(|v| v.trim().parse().ok())
        .collect();
    if shares.is_empty() {
        shares.push(Ranking::default().vector_share);
    }
    // How many candidates each channel brings: `BENCH_HYBRID_CANDIDATES` (comma-separated, one
    // hybrid row each), else the default ranking's.
    let pools: Vec<usize> = env_list("BENCH_HYBRID_CANDIDATES", &[Ranking::default().candidates]);
    let embedder = match embedder {
        Some((dir, load)) => Some(load(dir)?),
        None => None,
    };
    let sparse_shares: Vec<Option<f64>> = match sparse {
        Some(sparse) => sparse.shares.iter().copied().map(Some).collect(),
        None => vec![None],
    };
    let ranking = Ranking {
        weight_relevance: 1.0,
        weight_importance: 0.0,
        weight_freshness: 0.0,
        weight_hits: 0.0,
        ..Ranking::default()
    };
    let levers = levers(&ranking);
    let mut ranking = ranking;
    let set = |var: &str, field: &mut f64| {
        if let Some(w) = std::env::var(var).ok().and_then(|v| v.parse().ok()) {
            *field = w;
        }
    };
    set("BENCH_HYBRID_SESSION_TEXT", &mut ranking.session_text_weight);
    set("BENCH_HYBRID_SESSION", &mut ranking.session_weight);
    set("BENCH_HYBRID_NEIGHBOUR", &mut ranking.neighbour_weight);
    set("BENCH_HYBRID_NAMED", &mut ranking.named_weight);
    let mut report = Report {
        conversations: conversations.len(),
        model: embedder.as_ref().map(|e| e.model().to_owned()),
        sparse_model: sparse.map(|s| s.encoder.model().to_owned()),
        hybrid: floors
            .iter()
            .flat_map(|floor| shares.iter().map(move |share| (*floor, *share)))
            .flat_map(|(floor, share)| pools.iter().map(move |n| (floor, share, *n)))
            .flat_map(|(floor, share, n)| {
                // A sparse query that takes part widens the pool to `sparse_candidates`, as
                // search does; the row is labelled with the pool searched.
                let widened = n.max(ranking.sparse_candidates);
                sparse_shares.iter().map(move |s| {
                    let n = if s.is_some_and(|s| s > 0.0) { widened } else { n };
                    ((floor, share, n, *s), Score::default())
                })
            })
            .collect(),
        bm25_sparse: sparse
            .map(|s| s.shares.iter().map(|share| (*share, Score::default())).collect())
            .unwrap_or_default(),
        levers: levers.iter().map(|(name, _)| (name.clone(), Score::default())).collect(),
        ..Report::default()
    };
    // `BENCH_RANKS=1`: where the first evidence turn ranks among the top 100, per category;
    // `BENCH_MISSES=FILE` also writes every question whose evidence is not in the top 10, with
    // its evidence and the top 3, to FILE (outside the repository: it quotes the data).
    let misses_path = std::env::var_os("BENCH_MISSES").filter(|v| !v.is_empty());
    let diagnose = misses_path.is_some() || std::env::var_os("BENCH_RANKS").is_some();
    let mut misses = match &misses_path {
        Some(path) => Some(
            std::fs::File::create(path)
                .map(std::io::BufWriter::new)
                .map_err(|e| format!("cannot write {}: {e}", Path::new(path).display()))?,
        ),
        None => None,
    };
    for (n, conv) in conversations.iter().enumerate() {
        // The first half of the conversations tunes the levers, the second reports on them.
        let half = usize::from(n >= conversations.len() / 2);
        let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temp dir: {e}"))?;
        let mut store = Store::open(&dir.path().join("memory.db"), Duration::from_secs(5))
            .map_err(|e| e.to_string())?;
        let started = Instant::now();
        let turn_of = ingest(&mut store, conv)?;
        report.ingest += started.elapsed();
        report.turns += conv.turns();
        report.without_evidence += conv.without_evidence;
        report.conversation_tokens += conv
            .sessions
            .iter()
            .flat_map(|s| &s.turns)
            .map(|t| tokens::estimate(&t.item_text()))
            .sum::<usize>();

        let mut index = None;
        let mut question_vectors = Vec::new();
        if let Some(embedder) = &embedder {
            let started = Instant::now();
            let model = embedder.model().to_owned();
            agent_memory_core::store::vectors::embed_pending(
                &mut store,
                embedder.as_ref(),
                64,
                usize::MAX,
                &mut |_, _| {},
            )
            .map_err(|e| e.to_string())?;
            index =
                Some(store.vector_index(&model, embedder.dimensions()).map_err(|e| e.to_string())?);
            let texts: Vec<&str> = conv.questions.iter().map(|q| q.text.as_str()).collect();
            for batch in texts.chunks(64) {
                question_vectors.extend(embedder.embed_queries(batch).map_err(|e| e.to_string())?);
            }
            report.embed += started.elapsed();
        }
        let mut question_sparse = Vec::new();
        if let Some(sparse) = sparse {
            let started = Instant::now();
            agent_memory_core::store::vectors::encode_pending(
                &mut store,
                sparse.encoder.as_ref(),
                32,
                usize::MAX,
                &mut |_, _| {},
            )
            .map_err(|e| e.to_string())?;
            report.sparse_encode += started.elapsed();
            for question in &conv.questions {
                let started = Instant::now();
                let weights =
                    sparse.encoder.read_query(&question.text).map_err(|e| e.to_string())?;
                report.sparse_query_times.push(started.elapsed());
                let model = sparse.encoder.model().to_owned();
                question_sparse.push(SparseQuery { model, weights: weights.into() });
            }
        }

        for (i, question) in conv.questions.iter().enumerate() {
            let query = SearchQuery {
                text: question.text.clone(),
                project: Some(conv.project().key),
                kinds: vec!["observation".into()],
                limit: 10,
                max_terms: 16,
                ranking: ranking.clone(),
                ..SearchQuery::default()
            };
            let started = Instant::now();
            let hits = store.search(&query).map_err(|e| e.to_string())?.hits;
            report.bm25_times.push(started.elapsed());
            report.bm25.add(question, &turn_of, &hits, half);
            for (share, score) in &mut report.bm25_sparse {
                let mut query = query.clone();
                query.sparse = Some(question_sparse[i].clone());
                query.ranking.sparse_share = *share;
                let hits = store.search(&query).map_err(|e| e.to_string())?.hits;
                score.add(question, &turn_of, &hits, half);
            }
            for ((_, ranking), (_, score)) in levers.iter().zip(&mut report.levers) {
                let query = SearchQuery { ranking: ranking.clone(), ..query.clone() };
                let hits = store.search(&query).map_err(|e| e.to_string())?.hits;
                score.add(question, &turn_of, &hits, half);
            }
            if diagnose {
                // Where the first evidence turn lands among the top 100 of the search as
                // installed (hybrid at the first floor and share when a model is given).
                let mut wide = SearchQuery { limit: 100, ..query.clone() };
                wide.sparse = question_sparse.get(i).cloned();
                let hits = match &index {
                    Some(index) => {
                        let vector = VectorQuery { index, vector: &question_vectors[i] };
                        wide.ranking.similarity_floor = floors[0];
                        wide.ranking.vector_share = shares[0];
                        store.search_hybrid(&wide, Some(vector))
                    }
                    None => store.search(&wide),
                }
                .map_err(|e| e.to_string())?
                .hits;
                let rank = hits.iter().position(|h| {
                    turn_of.get(&h.id).is_some_and(|t| question.evidence.contains(t))
                });
                report.ranks.add(question.category, rank);
                if let Some(out) = &mut misses
                    && rank.is_none_or(|r| r >= 10)
                {
                    miss_line(out, conv, question, rank, &hits, &turn_of)?;
                }
            }
            if let Some(index) = &index {
                let vector = VectorQuery { index, vector: &question_vectors[i] };
                for ((floor, share, pool, sparse_share), score) in &mut report.hybrid {
                    let mut query = query.clone();
                    query.ranking.similarity_floor = *floor;
                    query.ranking.vector_share = *share;
                    query.ranking.candidates = *pool;
                    if let Some(sparse_share) = sparse_share {
                        query.sparse = Some(question_sparse[i].clone());
                        query.ranking.sparse_share = *sparse_share;
                    }
                    let started = Instant::now();
                    let hits =
                        store.search_hybrid(&query, Some(vector)).map_err(|e| e.to_string())?.hits;
                    report.hybrid_times.push(started.elapsed());
                    score.add(question, &turn_of, &hits, half);
                }
            }
        }
    }
    Ok(report)
}

/// The ranking with each lever of full-text search added in turn, from none: one row each in
/// the report, so that what every lever adds is measured in one run.
fn levers(ranking: &Ranking) -> Vec<(String, Ranking)> {
    let mut rows = Vec::new();
    let mut current = Ranking {
        stemming: false,
        neighbour_weight: 0.0,
        session_weight: 0.0,
        session_text_weight: 0.0,
        named_weight: 0.0,
        ..ranking.clone()
    };
    rows.push(("exact words".to_owned(), current.clone()));
    current.stemming = true;
    rows.push(("+ English stems".to_owned(), current.clone()));
    for w in env_list::<f64>("BENCH_NEIGHBOUR_WEIGHTS", &[ranking.neighbour_weight]) {
        rows.push((
            format!("+ neighbours {w}"),
            Ranking { neighbour_weight: w, ..current.clone() },
        ));
    }
    current.neighbour_weight = ranking.neighbour_weight;
    for w in env_list::<f64>("BENCH_SESSION_WEIGHTS", &[ranking.session_weight]) {
        rows.push((format!("+ session {w}"), Ranking { session_weight: w, ..current.clone() }));
    }
    current.session_weight = ranking.session_weight;
    for w in env_list::<f64>("BENCH_NAMED_WEIGHTS", &[ranking.named_weight]) {
        rows.push((format!("+ speaker named {w}"), Ranking { named_weight: w, ..current.clone() }));
    }
    current.named_weight = ranking.named_weight;
    for w in env_list::<f64>("BENCH_SESSION_TEXT_WEIGHTS", &[]) {
        rows.push((
            format!("+ session text {w}"),
            Ranking { session_text_weight: w, ..current.clone() },
        ));
    }
    for n in env_list::<f64>("BENCH_CANDIDATES", &[]) {
        let candidates = n as usize;
        rows.push((format!("{candidates} candidates"), Ranking { candidates, ..current.clone() }));
    }
    rows
}

/// Stores every turn of `conv` as an event and an observation; returns each observation's turn.
fn ingest(store: &mut Store, conv: &Conversation) -> Result<HashMap<i64, TurnId>, String> {
    let project = conv.project();
    let mut text_of: HashMap<String, (TurnId, String)> = HashMap::new();
    let mut events = Vec::new();
    for session in &conv.sessions {
        for (n, turn) in session.turns.iter().enumerate() {
            let uid = format!("locomo-{}-{}", conv.name, turn.raw_id);
            text_of.insert(uid.clone(), (turn.id, turn.item_text()));
            let event = Event {
                uid,
                agent: "locomo".into(),
                kind: EventKind::Note,
                source_event: "turn".into(),
                session: format!("{}-session-{}", conv.name, session.number),
                cwd: None,
                at_ms: session.at_ms + n as i64 * 1_000,
                tool: None,
                tool_kind: None,
                summary: turn.raw_id.clone(),
                body: String::new(),
                payload: serde_json::Value::Null,
                files: Vec::new(),
                sensitivity: Sensitivity::Normal,
                transcript_path: None,
                facts: Default::default(),
            };
            let hash = format!("{}/{}", conv.name, turn.raw_id);
            events.push((event, hash, project.clone()));
        }
    }
    store.write_recovered(&events, &[]).map_err(|e| e.to_string())?;

    let mut event_turn: HashMap<i64, TurnId> = HashMap::new();
    let provenance = Provenance { mode: "chat", distiller: "locomo-bench" };
    for session in store.pending_sessions(10_000).map_err(|e| e.to_string())? {
        let stored = store.session_events(session.session_id, 0).map_err(|e| e.to_string())?;
        let mut drafts = Vec::new();
        for event in &stored {
            let (turn, text) = &text_of[&event.event.uid];
            event_turn.insert(event.id, *turn);
            let draft = ObservationDraft {
                title: text.clone(),
                kind: "discovery".into(),
                source_event_ids: vec![event.id],
                at_ms: event.event.at_ms,
                ..ObservationDraft::default()
            };
            let size = tokens::estimate(text) as i64;
            drafts.push((draft, size, size));
        }
        let through = stored.last().map_or(0, |e| e.id);
        let claimed = store
            .claim_session(session.session_id, "locomo", 0, i64::MAX / 4)
            .map_err(|e| e.to_string())?;
        let saved = store
            .save_observations(&session, "locomo", provenance, &drafts, through)
            .map_err(|e| e.to_string())?;
        if !claimed || saved != Some(drafts.len()) {
            return Err(format!("session {} was not stored whole", session.session_id));
        }
    }

    // Observation ids in a fresh store run from 1; each names its one source event.
    let mut turn_of = HashMap::new();
    for id in 1..=conv.turns() as i64 {
        let observation = store
            .observation(id)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("observation {id} is missing"))?;
        let event = observation.draft.source_event_ids[0];
        let turn = event_turn[&event];
        turn_of.insert(id, turn);
        if let Some(speaker) = conv.speaker_of(turn) {
            store
                .set_observation_agent_for_bench(
                    id,
                    &agent_memory_core::adapter::canonical_agent(speaker),
                )
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(turn_of)
}

/// One hybrid row: similarity floor, vector share (`None`: either channel in full), candidates.
/// A hybrid row: similarity floor, vector share, candidates, and the sparse share (`None`
/// without a sparse model).
type HybridRow = (f32, Option<f64>, usize, Option<f64>);

/// A turn's place: session number and turn number (`D3:14` is `(3, 14)`).
type TurnId = (u32, u32);

/// Reads `D3:14`, and the few malformed ids in the data (`D:3:14`, `D3:014`); `None` for none.
fn turn_id(raw: &str) -> Option<TurnId> {
    let numbers: Vec<u32> = raw
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    match numbers[..] {
        [session, turn] => Some((session, turn)),
        _ => None,
    }
}

#[derive(Debug)]
struct Conversation {
    name: String,
    sessions: Vec<Session>,
    questions: Vec<Question>,
    /// Questions of categories 1–4 left out because no evidence id could be read.
    without_evidence: usize,
}

#[derive(Debug)]
struct Session {
    number: u32,
    at_ms: i64,
    turns: Vec<Turn>,
}

#[derive(Debug)]
struct Turn {
    id: TurnId,
    raw_id: String,
    speaker: String,
    text: String,
}

impl Turn {
    fn item_text(&self) -> String {
        format!("{}: {}", self.speaker, self.text)
    }
}

#[derive(Debug)]
struct Question {
    text: String,
    category: u8,
    evidence: Vec<TurnId>,
}

impl Conversation {
    fn project(&self) -> ProjectIdentity {
        let root = format!("/locomo/{}", self.name);
        ProjectIdentity {
            key: format!("path:{root}"),
            root: PathBuf::from(root),
            name: format!("locomo-{}", self.name),
            origin: None,
            branch: None,
        }
    }

    fn turns(&self) -> usize {
        self.sessions.iter().map(|s| s.turns.len()).sum()
    }

    /// Who said a turn.
    fn speaker_of(&self, id: TurnId) -> Option<&str> {
        self.sessions.iter().flat_map(|s| &s.turns).find(|t| t.id == id).map(|t| t.speaker.as_str())
    }
}

fn read_conversations(dir: &Path) -> Result<Vec<Conversation>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        format!(
            "cannot read the LoCoMo data in {}: {e}; give the directory holding locomo10.json",
            dir.display()
        )
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("no LoCoMo locomo10.json (or NN.json files) in {}", dir.display()));
    }
    let mut conversations = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        match json.as_array() {
            // locomo10.json: `{sample_id: "conv-26", conversation: {...}, qa: [...]}` each.
            Some(items) => {
                for (i, item) in items.iter().enumerate() {
                    let id =
                        item["sample_id"].as_str().map_or_else(|| i.to_string(), str::to_owned);
                    let name = id.strip_prefix("conv-").unwrap_or(&id).to_owned();
                    let origin = format!("{} ({id})", path.display());
                    conversations.push(read_conversation(
                        &name,
                        &item["conversation"],
                        &item["qa"],
                        &origin,
                    )?);
                }
            }
            None => {
                let name =
                    path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned());
                let origin = path.display().to_string();
                conversations.push(read_conversation(&name, &json, &json["qa"], &origin)?);
            }
        }
    }
    Ok(conversations)
}

/// One conversation: `json` holds its `session_N` turns and times, `qa` its questions.
fn read_conversation(
    name: &str,
    json: &serde_json::Value,
    qa: &serde_json::Value,
    origin: &str,
) -> Result<Conversation, String> {
    let name = name.to_owned();
    let str_of = |v: &serde_json::Value, key: &str| v[key].as_str().unwrap_or_default().to_owned();
    let mut sessions = Vec::new();
    for number in 1.. {
        let Some(turns) = json[format!("session_{number}")].as_array() else {
            // Later session numbers have a date but no turns.
            if json.get(format!("session_{}_date_time", number + 1)).is_some() {
                continue;
            }
            break;
        };
        let when = str_of(json, &format!("session_{number}_date_time"));
        let at_ms = parse_time(&when)
            .ok_or_else(|| format!("{origin}: session {number} has no readable time"))?;
        let turns = turns
            .iter()
            .filter_map(|t| {
                let raw_id = str_of(t, "dia_id");
                Some(Turn {
                    id: turn_id(&raw_id)?,
                    raw_id,
                    speaker: str_of(t, "speaker"),
                    text: str_of(t, "text"),
                })
            })
            .collect();
        sessions.push(Session { number, at_ms, turns });
    }
    let mut questions = Vec::new();
    let mut without_evidence = 0;
    for qa in qa.as_array().into_iter().flatten() {
        let category = qa["category"].as_u64().unwrap_or(0) as u8;
        if !(1..=4).contains(&category) {
            continue;
        }
        // An evidence entry sometimes holds several ids: `D8:6; D9:17`, `D9:1 D4:4`.
        let evidence: Vec<TurnId> = qa["evidence"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e.as_str())
            .flat_map(|e| e.split([';', ',', ' ']).filter_map(turn_id).collect::<Vec<_>>())
            .collect();
        if evidence.is_empty() {
            without_evidence += 1;
            continue;
        }
        questions.push(Question { text: str_of(qa, "question"), category, evidence });
    }
    Ok(Conversation { name, sessions, questions, without_evidence })
}

/// `1:56 pm on 8 May, 2023` as Unix milliseconds, read as UTC.
fn parse_time(text: &str) -> Option<i64> {
    let (clock, date) = text.split_once(" on ")?;
    let (hm, half) = clock.trim().split_once(' ')?;
    let (h, m) = hm.split_once(':')?;
    let (h, m): (i8, i8) = (h.parse().ok()?, m.parse().ok()?);
    let h = (h % 12) + if half.eq_ignore_ascii_case("pm") { 12 } else { 0 };
    let mut parts = date.split([' ', ',']).filter(|s| !s.is_empty());
    let day: i8 = parts.next()?.parse().ok()?;
    let month = parts.next()?;
    let year: i16 = parts.next()?.parse().ok()?;
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))? as i8 + 1;
    let at = jiff::civil::DateTime::new(year, month, day, h, m, 0, 0).ok()?;
    Some(jiff::tz::TimeZone::UTC.to_timestamp(at).ok()?.as_millisecond())
}

/// One question whose evidence is not in the top 10: where it ranks (`-`: not in the top 100),
/// the evidence turns and the top 3 found.
fn miss_line(
    out: &mut impl std::io::Write,
    conv: &Conversation,
    question: &Question,
    rank: Option<usize>,
    hits: &[agent_memory_core::store::search::SearchHit],
    turn_of: &HashMap<i64, TurnId>,
) -> Result<(), String> {
    let turn = |id: &TurnId| {
        conv.sessions
            .iter()
            .flat_map(|s| &s.turns)
            .find(|t| t.id == *id)
            .map_or_else(String::new, |t| format!("D{}:{} {}", t.id.0, t.id.1, t.item_text()))
    };
    let rank = rank.map_or_else(|| "-".to_owned(), |r| (r + 1).to_string());
    let mut text =
        format!("[{}] cat {} rank {rank}: {}\n", conv.name, question.category, question.text);
    for e in &question.evidence {
        text.push_str(&format!("  evidence {}\n", turn(e)));
    }
    for h in hits.iter().take(3) {
        let t = turn_of.get(&h.id).map(turn).unwrap_or_default();
        text.push_str(&format!("  found    {t}\n"));
    }
    out.write_all(text.as_bytes()).map_err(|e| format!("cannot write the misses: {e}"))
}

/// Where the first evidence turn ranks, per category: 1-5, 6-10, 11-20, 21-30, 31-50, 51-100,
/// not in the top 100.
#[derive(Debug, Default)]
struct Ranks {
    counts: HashMap<u8, [usize; 7]>,
}

impl Ranks {
    const BANDS: [&'static str; 7] = ["1-5", "6-10", "11-20", "21-30", "31-50", "51-100", "none"];

    fn add(&mut self, category: u8, rank: Option<usize>) {
        let band = match rank {
            Some(r) if r < 5 => 0,
            Some(r) if r < 10 => 1,
            Some(r) if r < 20 => 2,
            Some(r) if r < 30 => 3,
            Some(r) if r < 50 => 4,
            Some(_) => 5,
            None => 6,
        };
        self.counts.entry(category).or_default()[band] += 1;
    }

    fn print(&self) {
        if self.counts.is_empty() {
            return;
        }
        println!();
        println!("first evidence rank among the top 100 (questions per band)");
        println!("| category | {} |", Self::BANDS.join(" | "));
        println!("|---|{}", "---|".repeat(Self::BANDS.len()));
        let mut total = [0usize; 7];
        for (category, name) in CATEGORIES {
            let c = self.counts.get(&category).copied().unwrap_or_default();
            total.iter_mut().zip(c).for_each(|(t, c)| *t += c);
            let cells: Vec<String> = c.iter().map(usize::to_string).collect();
            println!("| {category} {name} | {} |", cells.join(" | "));
        }
        let cells: Vec<String> = total.iter().map(usize::to_string).collect();
        println!("| all | {} |", cells.join(" | "));
    }
}

/// Hits and tokens per category, for one way of searching.
#[derive(Debug, Default)]
struct Score {
    /// Per category: questions, hits in the top 5, hits in the top 10.
    counts: HashMap<u8, [usize; 3]>,
    tokens_top5: usize,
    tokens_top10: usize,
    questions: usize,
    /// Per half of the conversations (tuning, reporting): questions, top-5 and top-10 hits.
    halves: [[usize; 3]; 2],
}

impl Score {
    fn add(
        &mut self,
        question: &Question,
        turn_of: &HashMap<i64, TurnId>,
        hits: &[agent_memory_core::store::search::SearchHit],
        half: usize,
    ) {
        let found = |k: usize| {
            hits.iter()
                .take(k)
                .any(|h| turn_of.get(&h.id).is_some_and(|t| question.evidence.contains(t)))
        };
        let counts = self.counts.entry(question.category).or_default();
        counts[0] += 1;
        counts[1] += usize::from(found(5));
        counts[2] += usize::from(found(10));
        let halves = &mut self.halves[half];
        halves[0] += 1;
        halves[1] += usize::from(found(5));
        halves[2] += usize::from(found(10));
        let cost =
            |k: usize| hits.iter().take(k).map(|h| tokens::estimate(&h.title)).sum::<usize>();
        self.tokens_top5 += cost(5);
        self.tokens_top10 += cost(10);
        self.questions += 1;
    }

    /// One row: R@5 and R@10 over every question, then in the tuning and the reporting half.
    fn lever_line(&self, lever: &str) -> String {
        let pct = |hit: usize, of: usize| format!("{:.1}%", hit as f64 * 100.0 / of.max(1) as f64);
        let [t, r] = self.halves;
        let all = [t[0] + r[0], t[1] + r[1], t[2] + r[2]];
        format!(
            "| {lever} | {} / {} | {} / {} | {} / {} | {:.0} |",
            pct(all[1], all[0]),
            pct(all[2], all[0]),
            pct(t[1], t[0]),
            pct(t[2], t[0]),
            pct(r[1], r[0]),
            pct(r[2], r[0]),
            self.tokens_top10 as f64 / self.questions.max(1) as f64
        )
    }

    fn lines(&self, mode: &str) -> Vec<String> {
        let pct = |hit: usize, of: usize| format!("{:.1}%", hit as f64 * 100.0 / of.max(1) as f64);
        let mut total = [0usize; 3];
        let mut lines = Vec::new();
        for (category, name) in CATEGORIES {
            let c = self.counts.get(&category).copied().unwrap_or_default();
            total.iter_mut().zip(c).for_each(|(t, c)| *t += c);
            lines.push(format!(
                "| {mode} | {category} {name} | {} | {} | {} | | |",
                c[0],
                pct(c[1], c[0]),
                pct(c[2], c[0])
            ));
        }
        let avg = |t: usize| t as f64 / self.questions.max(1) as f64;
        lines.push(format!(
            "| {mode} | all | {} | {} | {} | {:.0} | {:.0} |",
            total[0],
            pct(total[1], total[0]),
            pct(total[2], total[0]),
            avg(self.tokens_top5),
            avg(self.tokens_top10)
        ));
        lines
    }
}

#[derive(Debug, Default)]
struct Report {
    conversations: usize,
    turns: usize,
    /// Questions of categories 1–4 left out for want of a readable evidence id.
    without_evidence: usize,
    conversation_tokens: usize,
    model: Option<String>,
    sparse_model: Option<String>,
    ingest: Duration,
    embed: Duration,
    /// Encoding every turn with the sparse model.
    sparse_encode: Duration,
    /// Reading one question with the sparse model (its words are weighed in the search).
    sparse_query_times: Vec<Duration>,
    /// BM25 with the sparse model, one score per share.
    bm25_sparse: Vec<(f64, Score)>,
    bm25: Score,
    bm25_times: Vec<Duration>,
    /// One score per similarity floor and vector share.
    hybrid: Vec<(HybridRow, Score)>,
    /// One score per row of [`levers`].
    levers: Vec<(String, Score)>,
    hybrid_times: Vec<Duration>,
    ranks: Ranks,
}

impl Report {
    fn print(&self) {
        println!(
            "locomo: {} conversations, {} turns (~{} tokens a conversation), ingested at {:.0} turns/s",
            self.conversations,
            self.turns,
            self.conversation_tokens / self.conversations.max(1),
            self.turns as f64 / self.ingest.as_secs_f64()
        );
        println!(
            "questions of categories 1-4: {} ({} without a readable evidence id left out)",
            self.bm25.questions, self.without_evidence
        );
        println!("| search | category | questions | R@5 | R@10 | tokens top 5 | tokens top 10 |");
        println!("|---|---|---|---|---|---|---|");
        for line in self.bm25.lines("BM25") {
            println!("{line}");
        }
        let sparse_name = |share: Option<f64>| match (&self.sparse_model, share) {
            (Some(model), Some(share)) => format!(", {model} {share}"),
            _ => String::new(),
        };
        for (share, score) in &self.bm25_sparse {
            for line in score.lines(&format!("BM25{}", sparse_name(Some(*share)))) {
                println!("{line}");
            }
        }
        if let Some(model) = &self.model {
            for ((floor, share, pool, sparse), score) in &self.hybrid {
                let fusion = share.map_or_else(|| "or".to_owned(), |s| format!("share {s}"));
                let sparse = sparse_name(*sparse);
                let mode =
                    format!("hybrid ({model}, floor {floor}, {fusion}, {pool} candidates{sparse})");
                for line in score.lines(&mode) {
                    println!("{line}");
                }
            }
        }
        println!();
        println!("full-text levers, added in turn: R@5 / R@10, all, tuning half, reporting half");
        println!("| lever | all | tuning half | reporting half | tokens top 10 |");
        println!("|---|---|---|---|---|");
        for (lever, score) in &self.levers {
            println!("{}", score.lever_line(lever));
        }
        for (share, score) in &self.bm25_sparse {
            println!("{}", score.lever_line(&format!("BM25{}", sparse_name(Some(*share)))));
        }
        if let Some(model) = &self.model {
            for ((floor, share, pool, sparse), score) in &self.hybrid {
                let fusion = share.map_or_else(|| "or".to_owned(), |s| format!("share {s}"));
                let sparse = sparse_name(*sparse);
                let lever = format!("{model}, floor {floor}, {fusion}, {pool} candidates{sparse}");
                println!("{}", score.lever_line(&lever));
            }
        }
        self.ranks.print();
        println!();
        println!("search time, BM25: p50 {}", p50(&self.bm25_times));
        if self.model.is_some() {
            println!(
                "search time, hybrid: p50 {}; embedding turns and questions: {:.1} s",
                p50(&self.hybrid_times),
                self.embed.as_secs_f64()
            );
        }
        if let Some(model) = &self.sparse_model {
            println!(
                "{model}: encoding turns {:.1} s ({:.0} turns/s), reading one question p50 {}",
                self.sparse_encode.as_secs_f64(),
                self.turns as f64 / self.sparse_encode.as_secs_f64().max(1e-9),
                p50(&self.sparse_query_times)
            );
        }
    }
}

fn p50(times: &[Duration]) -> String {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted
        .get(sorted.len() / 2)
        .map_or_else(|| "-".into(), |d| format!("{:.2} ms", d.as_secs_f64() * 1000.0))
}
