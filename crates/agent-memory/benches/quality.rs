//! Memory quality: what the next agent learns from a session, scored against what is known to
//! be true and false about it.
//!
//! The corpus is the testkit's `fixtures/sessions/`: real sessions of Claude Code, Codex CLI,
//! Gemini CLI, OpenCode, Copilot CLI and Hermes Agent recorded by `scripts/record-sessions`,
//! each with its gold facts (keyword sets a useful memory holds), a follow-up question, a search
//! query and the claims that would be false. For every distiller measured:
//!
//! 1. **Each session alone**, in a fresh home: its hook calls replayed through the built binary
//!    (`agent-memory hook`, stdin the payload), one `agent-memory work` pass, then four channels
//!    read as a person or agent reads them: the distilled items (`show` of every observation and
//!    summary, and the memory candidates), the briefing a *different* agent's `SessionStart`
//!    hook prints in the same project at the default budget, the prompt-time recall its
//!    `UserPromptSubmit` hook prints for the follow-up question, and `search --json --limit 5`
//!    for the query. Each channel's facts found and false claims are counted.
//! 2. **All sessions in one project**, in one home (ids salted per session): one `work` pass over
//!    everything, then search's top 5 for every query again, among every other session, the
//!    prompt-time recall of every follow-up (and which recalled items belong to another
//!    session than the one asked about), and the observations and memory candidates that name
//!    two sessions' subjects (merged items).
//!
//! 3. **Chains** (`fixtures/sessions/chains.json`): what a person tells one agent and whether it
//!    reaches the next. Each chain's sessions are replayed in order into a fresh home, each in
//!    its own project or in no project (`~/notes`, a plain folder), with what the user does
//!    between them (`work`, and `review --approve` of every candidate where the chain says the
//!    memory was approved); then the next agent starts in its project and its session-start and
//!    first-prompt hooks' output, what it is handed, is scored against the chain's gold facts
//!    (a fact counts where one line states it, not where it only echoes a request) and its false
//!    claims: a replaced choice presented as current, "not run again" for a check that was, a
//!    request stored as a decision, a convention handed to another project or a person's
//!    preference kept only under a project, and observation titles that are a command line of
//!    the session (counted over the sessions of step 1 as well). The sessions of the chains are
//!    scored through them, not alone.
//!
//! The rules for a hit and for each false claim are `agent_memory_testkit::sessions`'s (stated
//! in bench/README.md). The offline distiller is always measured; with `BENCH_LLM_PROVIDER`
//! set, an LLM distiller is measured as well, configured through `[llm]`'s environment
//! (`BENCH_LLM_PROVIDER`, `BENCH_LLM_MODEL`, `BENCH_LLM_BASE_URL`, `BENCH_LLM_API_KEY_ENV`,
//! `BENCH_LLM_COMMAND`, `BENCH_LLM_DAILY_TOKEN_BUDGET`). `BENCH_SESSIONS=a,b` limits the
//! sessions scored alone (`none`: none), `BENCH_CHAINS=a,b` the chains (`none`: none),
//! `BENCH_VERBOSE=1` prints what each session or chain missed and every false statement;
//! `BENCH_SEARCH_DUMP=1` prints every search's hits, with score and relevance, to stderr.
//! `BENCH_MODELS=1` gives every home the two models a default install uses (potion-base-8m and
//! splade-tiny, installed once with `agent-memory model install` and copied), so the work pass
//! embeds and search runs as an installed product's does.
//!
//! `cargo bench -p agent-memory --bench quality` (release profile).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::LazyLock;

use agent_memory_testkit::sessions::{self, Chain, Places, Scenario, Step};
use agent_memory_testkit::{TestHome, describe, run_with_stdin};

const BIN: &str = env!("CARGO_BIN_EXE_agent-memory");

/// The channels a session's facts are looked for in, in table order.
const CHANNELS: [&str; 4] = ["distilled", "briefing", "recall", "search"];
/// Keys of `show --json` items that are bookkeeping, not memory.
const SHOW_SKIP: &[&str] = &["session", "agent", "project", "mode", "distiller", "kind"];
/// Keys of search hits that are not what a reader sees of the hit.
const HIT_SKIP: &[&str] = &["agent", "project", "session", "kind", "tool", "parts"];

/// The names a comma-separated list in the environment variable `var` gives, if it is set.
fn only(var: &str) -> Option<Vec<String>> {
    std::env::var(var).ok().map(|list| list.split(',').map(|n| n.trim().to_owned()).collect())
}

fn main() -> ExitCode {
    let all = sessions::load_all();
    let mut chains = sessions::load_chains();
    if let Some(only) = only("BENCH_CHAINS") {
        chains.retain(|c| only.contains(&c.name));
    }
    // The sessions the chains replay are scored through them, not alone, unless named.
    let chained = sessions::chained_sessions(&sessions::load_chains());
    let mut scenarios: Vec<Scenario> = all.clone();
    match only("BENCH_SESSIONS") {
        Some(only) => scenarios.retain(|s| only.contains(&s.name)),
        None => scenarios.retain(|s| !chained.contains(&s.name)),
    }
    if scenarios.is_empty() && chains.is_empty() {
        eprintln!(
            "quality: no recorded sessions in {}; run scripts/record-sessions",
            sessions::sessions_dir().display()
        );
        return ExitCode::from(2);
    }
    let by_name: BTreeMap<String, Scenario> =
        all.into_iter().map(|s| (s.name.clone(), s)).collect();
    let verbose = std::env::var("BENCH_VERBOSE").is_ok_and(|v| v == "1");
    if !scenarios.is_empty() {
        println!("# Memory quality: {} sessions\n", scenarios.len());
        print_corpus(&scenarios);
    }
    for (label, env) in distillers() {
        let alone: Vec<Scored> = scenarios.iter().map(|s| score_alone(s, &env)).collect();
        if !scenarios.is_empty() {
            let together = score_together(&scenarios, &env);
            if verbose {
                print_details(&scenarios, &alone);
            }
            print_tables(&label, &scenarios, &alone, &together);
        }
        if !chains.is_empty() {
            let scored: Vec<ChainScored> =
                chains.iter().map(|c| score_chain(c, &by_name, &env)).collect();
            if verbose {
                print_chain_details(&chains, &scored);
            }
            print_chain_tables(&label, &chains, &scored, &by_name, &alone);
        }
    }
    ExitCode::SUCCESS
}

/// The distillers to measure: the offline one, and an LLM one when configured.
fn distillers() -> Vec<(String, Vec<(String, String)>)> {
    let mut out = vec![("offline".to_owned(), Vec::new())];
    if let Ok(provider) = std::env::var("BENCH_LLM_PROVIDER") {
        let mut env = vec![("AGENT_MEMORY_LLM__PROVIDER".to_owned(), provider.clone())];
        for key in ["MODEL", "BASE_URL", "API_KEY_ENV", "COMMAND", "DAILY_TOKEN_BUDGET"] {
            if let Ok(value) = std::env::var(format!("BENCH_LLM_{key}")) {
                env.push((format!("AGENT_MEMORY_LLM__{key}"), value));
            }
        }
        let model = std::env::var("BENCH_LLM_MODEL").unwrap_or_default();
        out.push((format!("llm ({provider} {model})"), env));
    }
    out
}

/// What one session scored in one channel.
#[derive(Debug, Default, Clone)]
struct Channel {
    text: String,
    found: Vec<String>,
    false_passes: Vec<String>,
    false_fixes: Vec<String>,
}

/// What one session scored alone.
#[derive(Debug, Default)]
struct Scored {
    channels: BTreeMap<&'static str, Channel>,
    repeated: Vec<String>,
    observations: usize,
    summaries: usize,
    candidates: usize,
    /// The observations' titles, and those holding a command line of the session.
    titles: usize,
    command_titles: Vec<String>,
}

/// What all sessions in one project scored.
#[derive(Debug, Default)]
struct Together {
    /// Facts found in each session's search top 5.
    search_found: Vec<usize>,
    /// Facts found in each session's prompt-time recall for its follow-up.
    recall_found: Vec<usize>,
    /// Follow-ups that recall answered.
    recall_answered: usize,
    /// Items recalled, and those of another session than the one asked about: (session asked
    /// about, the recalled line, the session it came from).
    recall_items: usize,
    /// Tokens of every answer, summed.
    recall_tokens: usize,
    recall_wrong: Vec<(String, String, String)>,
    items: usize,
    merged: Vec<(String, Vec<String>)>,
}

fn home() -> TestHome {
    let home = TestHome::new(BIN);
    if let Some(models) = MODELS.as_deref() {
        copy_dir(models, &home.home().join("models"));
        let config = "[search]\nmodel = \"potion-base-8m\"\nsparse_model = \"splade-tiny\"\n";
        agent_memory_core::fsutil::write_atomic(
            &home.home().join("config.toml"),
            config.as_bytes(),
        )
        .expect("config");
    }
    home
}

/// The models of a default install, installed once into a home kept for the whole run, when
/// `BENCH_MODELS=1`.
static MODELS: LazyLock<Option<PathBuf>> = LazyLock::new(|| {
    std::env::var_os("BENCH_MODELS").filter(|v| v == "1")?;
    let template = Box::leak(Box::new(TestHome::new(BIN)));
    for model in ["potion-base-8m", "splade-tiny"] {
        let out = template.cmd().args(["model", "install", model]).output().expect("run");
        assert!(out.status.success(), "model install {model}: {}", describe(&out));
    }
    Some(template.home().join("models"))
});

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("models dir");
    for entry in std::fs::read_dir(from).expect("read models").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a model file");
        }
    }
}

fn places(home: &TestHome, salt: u32) -> Places {
    Places {
        home: home.user_home().to_path_buf(),
        project: home.user_home().join("work/proj"),
        salt,
    }
}

/// Runs `agent-memory ARGS --json` with `env` added; its parsed output.
fn json(home: &TestHome, args: &[&str], env: &[(String, String)]) -> serde_json::Value {
    let mut cmd = home.cmd();
    cmd.args(args).arg("--json").envs(env.iter().map(|(k, v)| (k, v)));
    let out = run_with_stdin(&mut cmd, b"");
    assert!(out.status.success(), "agent-memory {args:?} failed:\n{}", describe(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("agent-memory {args:?} printed no JSON ({e}):\n{}", describe(&out))
    })
}

/// One `work` pass; the numbers of observations and summaries it wrote.
fn work(home: &TestHome, env: &[(String, String)]) -> (usize, usize) {
    let done = json(home, &["work"], env);
    let n = |key: &str| done[key].as_u64().unwrap_or(0) as usize;
    (n("observations"), n("summaries"))
}

/// Every observation and summary the store holds, as `show --json` prints them (ids are
/// handed out from 1 in a fresh home).
fn distilled(home: &TestHome, observations: usize, summaries: usize) -> Vec<serde_json::Value> {
    let ids: Vec<String> = (1..=observations)
        .map(|i| format!("o{i}"))
        .chain((1..=summaries).map(|i| format!("s{i}")))
        .collect();
    let mut out = Vec::new();
    for chunk in ids.chunks(50) {
        let mut args = vec!["show"];
        args.extend(chunk.iter().map(String::as_str));
        out.extend(json(home, &args, &[]).as_array().cloned().unwrap_or_default());
    }
    out
}

fn candidates(home: &TestHome) -> Vec<serde_json::Value> {
    json(home, &["memories", "--tier", "L1"], &[]).as_array().cloned().unwrap_or_default()
}

/// A recorded hook payload of `agent_dir` (the agent fixtures) for the next session: placed
/// in this home's project, under a session id of its own, with `prompt` when given.
fn next_session_payload(
    home: &TestHome,
    agent_dir: &str,
    file: &str,
    prompt: Option<&str>,
) -> Vec<u8> {
    let path = agent_memory_testkit::fixtures_dir().join("agents").join(agent_dir).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut value: serde_json::Value =
        serde_json::from_str(&sessions::localize(&text, &places(home, 9_999)))
            .expect("a fixture is JSON");
    if let Some(prompt) = prompt {
        value["prompt"] = serde_json::Value::String(prompt.to_owned());
    }
    value.to_string().into_bytes()
}

/// What a hook printed, as text: every string of its JSON answer, or the output as it is.
fn answer_text(stdout: &[u8]) -> String {
    match serde_json::from_slice::<serde_json::Value>(stdout) {
        Ok(value) => sessions::json_text(&value, &[]),
        Err(_) => String::from_utf8_lossy(stdout).into_owned(),
    }
}

/// The briefing and prompt-time recall a different agent gets next, in the same project.
fn next_session(home: &TestHome, scenario: &Scenario) -> (String, String) {
    let (agent, dir) = if scenario.agent == "claude" {
        ("codex", "codex")
    } else {
        ("claude-code", "claude-code")
    };
    let start = next_session_payload(home, dir, "SessionStart.json", None);
    let briefing = home.hook(agent, "SessionStart", &start);
    let prompt =
        next_session_payload(home, dir, "UserPromptSubmit.json", Some(&scenario.follow_up));
    let recall = home.hook(agent, "UserPromptSubmit", &prompt);
    (answer_text(&briefing.stdout), answer_text(&recall.stdout))
}

fn search(home: &TestHome, query: &str) -> String {
    let mut args = vec!["search", "--limit", "5"];
    args.extend(query.split_whitespace());
    let hits = json(home, &args, &[]);
    if std::env::var_os("BENCH_SEARCH_DUMP").is_some() {
        eprintln!("Q {query}");
        for hit in hits["hits"].as_array().into_iter().flatten() {
            eprintln!(
                "  {} {} {:.3} rel {:.3} | {}",
                hit["kind"],
                hit["type"],
                hit["score"].as_f64().unwrap_or(0.0),
                hit["parts"]["relevance"].as_f64().unwrap_or(0.0),
                hit["title"]
            );
        }
    }
    hits["hits"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|hit| sessions::json_text(hit, HIT_SKIP))
        .collect::<Vec<_>>()
        .join("\n")
}

fn channel(text: String, scenario: &Scenario) -> Channel {
    Channel {
        found: sessions::facts_found(&text, &scenario.facts).iter().map(|f| f.id.clone()).collect(),
        false_passes: sessions::false_passes(&text, &scenario.claims),
        false_fixes: sessions::false_fixes(&text, &scenario.claims),
        text,
    }
}

fn score_alone(scenario: &Scenario, env: &[(String, String)]) -> Scored {
    let home = home();
    sessions::replay(&home, scenario, &places(&home, 0));
    let (observations, summaries) = work(&home, env);
    let items = distilled(&home, observations, summaries);
    let candidates = candidates(&home);
    let mut distilled_text: Vec<String> =
        items.iter().map(|i| sessions::json_text(&i["item"], SHOW_SKIP)).collect();
    distilled_text.extend(candidates.iter().map(|c| sessions::json_text(c, SHOW_SKIP)));
    let mut next_steps: Vec<String> = items
        .iter()
        .flat_map(|i| i["item"]["next_steps"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect();
    let (briefing, recall) = next_session(&home, scenario);
    next_steps.extend(sessions::briefing_next_steps(&briefing));
    let search = search(&home, &scenario.query);
    let mut channels = BTreeMap::new();
    for (name, text) in
        CHANNELS.into_iter().zip([distilled_text.join("\n"), briefing, recall, search])
    {
        channels.insert(name, channel(text, scenario));
    }
    let titles = observation_titles(&items);
    Scored {
        channels,
        repeated: sessions::repeated_requests(&next_steps, &scenario.claims),
        observations,
        summaries,
        candidates: candidates.len(),
        command_titles: sessions::command_titles(&titles, &scenario.commands),
        titles: titles.len(),
    }
}

/// The titles of the observations among `show --json` items.
fn observation_titles(items: &[serde_json::Value]) -> Vec<String> {
    items
        .iter()
        .filter(|i| i["kind"] == "observation")
        .filter_map(|i| i["item"]["title"].as_str().map(str::to_owned))
        .collect()
}

fn score_together(scenarios: &[Scenario], env: &[(String, String)]) -> Together {
    let home = home();
    for (i, scenario) in scenarios.iter().enumerate() {
        sessions::replay(&home, scenario, &places(&home, i as u32 + 1));
    }
    let (observations, _) = work(&home, env);
    // What a coding store's events are: how many get vectors (what was said) and how many not.
    if let Ok(db) = rusqlite::Connection::open(home.db_path()) {
        let kinds: Vec<(String, i64)> = db
            .prepare("SELECT kind, count(*) FROM events GROUP BY kind ORDER BY 2 DESC")
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .unwrap_or_default();
        let line: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!("events of the {} sessions by kind: {}", scenarios.len(), line.join(", "));
    }
    let mut items: Vec<String> = distilled(&home, observations, 0)
        .iter()
        .map(|i| sessions::json_text(&i["item"], SHOW_SKIP))
        .collect();
    items.extend(candidates(&home).iter().map(|c| sessions::json_text(c, SHOW_SKIP)));
    let own = sessions::own_subjects(scenarios);
    let merged = items
        .iter()
        .filter_map(|text| {
            let named = sessions::scenarios_named(text, &own);
            (named.len() >= 2).then(|| (text.lines().next().unwrap_or_default().to_owned(), named))
        })
        .collect();
    let search_found = scenarios
        .iter()
        .map(|s| sessions::facts_found(&search(&home, &s.query), &s.facts).len())
        .collect();
    let mut together = Together { search_found, items: items.len(), merged, ..Together::default() };
    // Whose session an item is: the scenario whose replayed payloads name its session id.
    let payloads: Vec<String> = scenarios
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let places = places(&home, i as u32 + 1);
            s.hooks.iter().map(|call| sessions::localize(&call.payload, &places)).collect()
        })
        .collect();
    for scenario in scenarios {
        let (_, recall) = next_session(&home, scenario);
        together.recall_found.push(sessions::facts_found(&recall, &scenario.facts).len());
        together.recall_answered += usize::from(!recall.is_empty());
        together.recall_tokens += agent_memory_core::tokens::estimate(&recall);
        for (line, id) in recalled_ids(&recall) {
            together.recall_items += 1;
            let shown = json(&home, &["show", &id], &[]);
            let session = shown[0]["item"]["session"].as_str().unwrap_or_default().to_owned();
            let owner = scenarios
                .iter()
                .zip(&payloads)
                .find(|(_, text)| !session.is_empty() && text.contains(&session))
                .map_or("(a memory or unknown)", |(s, _)| s.name.as_str());
            if owner != scenario.name {
                together.recall_wrong.push((scenario.name.clone(), line, owner.to_owned()));
            }
        }
    }
    together
}

/// The lines of a prompt-time recall and the item each names (`- o12 codex 2026-12-01 …`).
fn recalled_ids(recall: &str) -> Vec<(String, String)> {
    recall
        .lines()
        .filter_map(|line| {
            let id = line.strip_prefix("- ")?.split_whitespace().next()?;
            let numbered = id.len() > 1 && id[1..].bytes().all(|b| b.is_ascii_digit());
            (numbered && id.starts_with(['o', 's', 'm'])).then(|| (line.to_owned(), id.to_owned()))
        })
        .collect()
}

fn pct(part: usize, whole: usize) -> String {
    if whole == 0 {
        "–".to_owned()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

fn print_corpus(scenarios: &[Scenario]) {
    let mut agents: BTreeMap<&str, usize> = BTreeMap::new();
    let mut categories: BTreeMap<String, usize> = BTreeMap::new();
    for s in scenarios {
        *agents.entry(s.agent.as_str()).or_default() += 1;
        for c in &s.categories {
            let family = c.split(':').next().unwrap_or(c).to_owned();
            *categories.entry(family).or_default() += 1;
        }
    }
    let facts: usize = scenarios.iter().map(|s| s.facts.len()).sum();
    let list = |m: Vec<(String, usize)>| {
        m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
    };
    println!(
        "sessions by agent: {}",
        list(agents.iter().map(|(k, v)| (k.to_string(), *v)).collect())
    );
    println!("sessions by category: {}", list(categories.into_iter().collect()));
    println!("gold facts: {facts}\n");
}

fn print_details(scenarios: &[Scenario], alone: &[Scored]) {
    for (s, scored) in scenarios.iter().zip(alone) {
        println!(
            "## {} ({} observations, {} summaries)",
            s.name, scored.observations, scored.summaries
        );
        for (name, ch) in &scored.channels {
            let missing: Vec<&str> = s
                .facts
                .iter()
                .filter(|f| !ch.found.contains(&f.id))
                .map(|f| f.id.as_str())
                .collect();
            println!("  {name}: found {:?}, missing {missing:?}", ch.found);
            if *name == "recall" {
                println!("    asked: {}", s.follow_up);
                for line in ch.text.lines().filter(|l| l.starts_with("- ")) {
                    println!("    {line}");
                }
            }
            for line in ch.false_passes.iter().chain(&ch.false_fixes) {
                println!("    false: {line}");
            }
        }
        for line in &scored.repeated {
            println!("  repeated request: {line}");
        }
    }
    println!();
}

fn print_tables(label: &str, scenarios: &[Scenario], alone: &[Scored], together: &Together) {
    let facts: usize = scenarios.iter().map(|s| s.facts.len()).sum();
    let found = |ch: &str| -> usize { alone.iter().map(|a| a.channels[ch].found.len()).sum() };
    println!("## Distiller: {label}\n");
    // Facts the requests alone do not hold: what a memory can only have learned from the work.
    let learned: Vec<Vec<String>> = scenarios
        .iter()
        .map(|s| {
            let own = s.facts.iter().filter(|f| !sessions::in_request(f, &s.claims));
            own.map(|f| f.id.clone()).collect()
        })
        .collect();
    let learned_total: usize = learned.iter().map(Vec::len).sum();
    let learned_found = |ch: &str| -> usize {
        alone
            .iter()
            .zip(&learned)
            .map(|(a, ids)| a.channels[ch].found.iter().filter(|id| ids.contains(id)).count())
            .sum()
    };
    println!("| channel | facts found | recall | beyond the request ({learned_total} facts) |");
    println!("|---|---|---|---|");
    let names = [
        "distilled: observations, summary, candidates",
        "next session's briefing (another agent, default budget)",
        "prompt-time recall for the follow-up",
        "search top 5, the session alone",
    ];
    for (ch, name) in CHANNELS.iter().zip(names) {
        let beyond = learned_found(ch);
        println!(
            "| {name} | {} of {facts} | {} | {beyond} ({}) |",
            found(ch),
            pct(found(ch), facts),
            pct(beyond, learned_total)
        );
    }
    let corpus: usize = together.search_found.iter().sum();
    println!(
        "| search top 5, among all {} sessions | {corpus} of {facts} | {} |",
        scenarios.len(),
        pct(corpus, facts)
    );
    let observations: usize = alone.iter().map(|a| a.observations).sum();
    let empty = alone.iter().filter(|a| a.observations == 0).count();
    let summaries: usize = alone.iter().map(|a| a.summaries).sum();
    let candidates: usize = alone.iter().map(|a| a.candidates).sum();
    let briefed = alone.iter().filter(|a| !a.channels["briefing"].text.is_empty()).count();
    let recalled = alone.iter().filter(|a| !a.channels["recall"].text.is_empty()).count();
    println!(
        "\n{observations} observations ({empty} sessions with none), {summaries} summaries, {candidates} memory candidates; \
         {briefed} briefings and {recalled} prompt recalls answered of {} sessions.\n",
        scenarios.len()
    );

    println!("| false claims | distilled | briefing | recall | search |");
    println!("|---|---|---|---|---|");
    let count = |ch: &str, pick: fn(&Channel) -> usize| -> usize {
        alone.iter().map(|a| pick(&a.channels[ch])).sum()
    };
    let row = |name: &str, pick: fn(&Channel) -> usize| {
        let cells: Vec<String> = CHANNELS.iter().map(|ch| count(ch, pick).to_string()).collect();
        println!("| {name} | {} |", cells.join(" | "));
    };
    let failing = scenarios
        .iter()
        .filter(|s| !s.claims.failed_runs.is_empty() || !s.claims.never_passed.is_empty())
        .count();
    let unresolved = scenarios.iter().filter(|s| s.claims.unresolved).count();
    row(&format!("failing run reported as passed ({failing} sessions)"), |c| c.false_passes.len());
    row(&format!("unresolved failure reported as fixed ({unresolved} sessions)"), |c| {
        c.false_fixes.len()
    });
    let repeated: usize = alone.iter().map(|a| a.repeated.len()).sum();
    println!(
        "| next step repeating the request | {repeated} (summaries' next steps and briefing lines) | | | |"
    );
    println!(
        "| two sessions' subjects merged in one item | {} of {} items, all sessions in one project | | | |\n",
        together.merged.len(),
        together.items
    );
    for (first_line, named) in &together.merged {
        println!("merged: {first_line} <- {}", named.join(", "));
    }
    let recalled: usize = together.recall_found.iter().sum();
    println!(
        "\nPrompt-time recall among all {} sessions: {recalled} of {facts} facts ({}); {} of {} follow-ups answered (~{} tokens an answer); {} items recalled, {} of them from another session.",
        scenarios.len(),
        pct(recalled, facts),
        together.recall_answered,
        scenarios.len(),
        together.recall_tokens / together.recall_answered.max(1),
        together.recall_items,
        together.recall_wrong.len(),
    );
    for (asked, line, owner) in &together.recall_wrong {
        println!("other session: {asked} <- {owner}: {line}");
    }

    // Recall by category and by agent, each session's facts counted once per channel.
    for (title, key) in [("category", 0), ("agent", 1)] {
        let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, s) in scenarios.iter().enumerate() {
            let keys: Vec<String> = if key == 0 {
                s.categories.iter().map(|c| c.split(':').next().unwrap_or(c).to_owned()).collect()
            } else {
                vec![s.agent.clone()]
            };
            for k in keys {
                groups.entry(k).or_default().push(i);
            }
        }
        println!("\n| {title} | sessions | facts | distilled | briefing | recall | search |");
        println!("|---|---|---|---|---|---|---|");
        for (k, members) in groups {
            let total: usize = members.iter().map(|i| scenarios[*i].facts.len()).sum();
            let cells: Vec<String> = CHANNELS
                .iter()
                .map(|ch| {
                    pct(members.iter().map(|i| alone[*i].channels[*ch].found.len()).sum(), total)
                })
                .collect();
            println!("| {k} | {} | {total} | {} |", members.len(), cells.join(" | "));
        }
    }
    println!();
}

/// What a chain's next agent was handed, and what the chain's store holds, scored.
#[derive(Debug, Default)]
struct ChainScored {
    briefing: String,
    recall: String,
    /// The chain's facts that one stated line of the handed context carries.
    found: Vec<String>,
    superseded: Vec<String>,
    not_rerun_handed: Vec<String>,
    not_rerun_store: Vec<String>,
    decisions: Vec<String>,
    foreign: Vec<String>,
    person: Vec<String>,
    titles: usize,
    command_titles: Vec<String>,
    observations: usize,
    summaries: usize,
    memories: usize,
    /// Candidates approved, and approvals that failed.
    approved: usize,
    approve_failed: Vec<String>,
}

/// Where a chain's step runs: the project's folder, or `~/notes` for no project.
fn chain_places(home: &TestHome, project: Option<&str>, salt: u32) -> Places {
    let project = match project {
        Some(name) => home.user_home().join("work").join(name),
        None => home.user_home().join(agent_memory_testkit::sessions::NO_PROJECT_DIR),
    };
    Places { home: home.user_home().to_path_buf(), project, salt }
}

/// Every observation and summary of a store, as `show --json` prints them, whatever passes
/// wrote them: ids from 1 up to the counts `status` gives, skipping any no longer there.
fn show_all(home: &TestHome) -> Vec<serde_json::Value> {
    let status = json(home, &["status"], &[]);
    let count = |key: &str| status[key].as_u64().unwrap_or(0) as usize;
    let mut out = Vec::new();
    for (prefix, total) in [("o", count("observations")), ("s", count("summaries"))] {
        let ids: Vec<String> = (1..=total).map(|i| format!("{prefix}{i}")).collect();
        let mut args = vec!["show", "--json"];
        args.extend(ids.iter().map(String::as_str));
        let shown = home.run(&args, b"");
        if shown.status.success() {
            let list: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap_or_default();
            out.extend(list.as_array().cloned().unwrap_or_default());
            continue;
        }
        // Some id is gone (an item rewritten or deleted): one at a time, a few past the count.
        let mut found = 0;
        for i in 1..=(total * 2 + 10) {
            if found == total {
                break;
            }
            let one = home.run(&["show", "--json", &format!("{prefix}{i}")], b"");
            if one.status.success() {
                let list: serde_json::Value =
                    serde_json::from_slice(&one.stdout).unwrap_or_default();
                found += 1;
                out.extend(list.as_array().cloned().unwrap_or_default());
            }
        }
    }
    out
}

/// `review --approve` of every candidate `review --json` lists, as a person approving them all.
fn approve_all(home: &TestHome) -> (usize, Vec<String>) {
    let listed = json(home, &["review"], &[]);
    let mut approved = 0;
    let mut failed = Vec::new();
    for candidate in listed.as_array().into_iter().flatten() {
        let id = candidate["id"].as_i64().unwrap_or_default().to_string();
        let out = home.run(&["review", "--approve", &id], b"");
        if out.status.success() {
            approved += 1;
        } else {
            failed.push(format!("m{id}: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
    }
    (approved, failed)
}

fn score_chain(
    chain: &Chain,
    scenarios: &BTreeMap<String, Scenario>,
    env: &[(String, String)],
) -> ChainScored {
    let home = home();
    let mut scored = ChainScored::default();
    let mut requests = Vec::new();
    let mut commands = Vec::new();
    for (i, step) in chain.steps.iter().enumerate() {
        match step {
            Step::Session { name, project } => {
                let scenario = &scenarios[name];
                assert_eq!(
                    project.is_none(),
                    scenario.no_project,
                    "chain {}: {name} runs in a project exactly when it was recorded in one",
                    chain.name
                );
                requests.extend(scenario.claims.requests.iter().cloned());
                commands.extend(scenario.commands.iter().cloned());
                let places = chain_places(&home, project.as_deref(), i as u32 + 1);
                sessions::replay_from(&home, scenario, &places, sessions::now_ms());
            }
            Step::Work => {
                work(&home, env);
            }
            Step::Approve => {
                let (approved, failed) = approve_all(&home);
                scored.approved += approved;
                scored.approve_failed.extend(failed);
            }
        }
    }
    // The next agent: its session start, then its first prompt.
    let calls = sessions::next_session_calls(&chain.next.agent, &chain.next.prompt);
    let places = chain_places(&home, chain.next.project.as_deref(), 9_000);
    let (_, printed) =
        sessions::replay_calls(&home, &chain.name, &calls, &places, Some(sessions::now_ms()));
    scored.briefing = answer_text(&printed[0]);
    scored.recall = answer_text(&printed[1]);
    let handed = format!("{}\n{}", scored.briefing, scored.recall);
    let lines = sessions::stated_lines(&handed, &requests);
    scored.found =
        sessions::facts_stated(&lines, &chain.facts).iter().map(|f| f.id.clone()).collect();
    scored.superseded = sessions::superseded_as_current(&handed, &chain.claims);
    scored.not_rerun_handed = sessions::not_rerun_claims(&handed, &chain.claims);
    scored.foreign = sessions::foreign_conventions(&handed, &chain.claims);

    // What the store holds: every observation and summary, and every memory of every tier.
    let items = show_all(&home);
    let memories = json(&home, &["memories", "--all"], &[]).as_array().cloned().unwrap_or_default();
    scored.observations = items.iter().filter(|i| i["kind"] == "observation").count();
    scored.summaries = items.len() - scored.observations;
    scored.memories = memories.len();
    let mut typed: Vec<(String, String)> = items
        .iter()
        .map(|i| {
            let kind = i["item"]["kind"].as_str().unwrap_or(i["kind"].as_str().unwrap_or_default());
            // The title (a summary has none) first, as the line a false claim is reported by.
            let title = i["item"]["title"].as_str().unwrap_or_default();
            (kind.to_owned(), format!("{title}\n{}", sessions::json_text(&i["item"], SHOW_SKIP)))
        })
        .collect();
    typed.extend(memories.iter().map(|m| {
        (
            m["kind"].as_str().unwrap_or_default().to_owned(),
            m["text"].as_str().unwrap_or_default().to_owned(),
        )
    }));
    scored.decisions = sessions::requests_as_decisions(&typed, &chain.claims);
    let stored: Vec<&str> = typed.iter().map(|(_, text)| text.as_str()).collect();
    scored.not_rerun_store = sessions::not_rerun_claims(&stored.join("\n"), &chain.claims);
    scored.person = sessions::person_only_in_project(&memories, &chain.claims);
    let titles = observation_titles(&items);
    scored.titles = titles.len();
    scored.command_titles = sessions::command_titles(&titles, &commands);
    scored
}

/// What each kind of chain is, as the table names it, in table order.
const CHAIN_KINDS: &[(&str, &str)] = &[
    ("preference", "the person's preference, stated outside any project"),
    ("convention", "a project's convention (\"from now on\", \"以后\", \"always\")"),
    ("convention-elsewhere", "another project's fact, with a convention kept elsewhere"),
    ("remember", "\"remember\" / \"记住\" a project fact"),
    ("reversal", "a decision reversed by another agent, third agent scored"),
    ("assistant-asks", "yesterday's fix, asked of an assistant outside any project"),
    ("still-failing", "a test re-run after an edit, still failing"),
    ("request", "a request that is no decision, fixed"),
    ("trivial-last", "a fix, then a trivial last session"),
    ("codex-sed-masked", "Codex `sed -i` fix, masked exit, explained only at the end"),
    ("gotcha", "a build gotcha, then a prompt that needs it"),
];

fn print_chain_details(chains: &[Chain], scored: &[ChainScored]) {
    for (chain, s) in chains.iter().zip(scored) {
        let missing: Vec<&str> = chain
            .facts
            .iter()
            .filter(|f| !s.found.contains(&f.id))
            .map(|f| f.id.as_str())
            .collect();
        println!(
            "## chain {} ({} observations, {} summaries, {} memories, {} approved): found {:?}, missing {missing:?}",
            chain.name, s.observations, s.summaries, s.memories, s.approved, s.found
        );
        println!("  next: {} in {:?}: {}", chain.next.agent, chain.next.project, chain.next.prompt);
        for line in s.briefing.lines().chain(s.recall.lines()) {
            println!("    | {line}");
        }
        let false_claims = [
            ("superseded as current", &s.superseded),
            ("not run again (handed)", &s.not_rerun_handed),
            ("not run again (store)", &s.not_rerun_store),
            ("request as decision", &s.decisions),
            ("another project's convention", &s.foreign),
            ("preference only under a project", &s.person),
            ("command-line title", &s.command_titles),
            ("approval failed", &s.approve_failed),
        ];
        for (name, lines) in false_claims {
            for line in lines {
                println!("  false ({name}): {line}");
            }
        }
    }
    println!();
}

fn print_chain_tables(
    label: &str,
    chains: &[Chain],
    scored: &[ChainScored],
    scenarios: &BTreeMap<String, Scenario>,
    alone: &[Scored],
) {
    let sessions_in = sessions::chained_sessions(chains);
    let agents: std::collections::BTreeSet<&str> = sessions_in
        .iter()
        .filter_map(|n| scenarios.get(n)?.hooks.first())
        .map(|call| call.agent.as_str())
        .chain(chains.iter().map(|c| c.next.agent.as_str()))
        .collect();
    let zh = chains.iter().filter(|c| c.language == "zh").count();
    println!("## Statements reaching the next agent (distiller: {label})\n");
    println!(
        "{} chains ({zh} in Chinese) of {} recorded sessions, {} agents; what the next agent is handed: its session-start and first-prompt hooks' output.\n",
        chains.len(),
        sessions_in.len(),
        agents.len()
    );
    println!("| kind | chains | facts handed | of facts |");
    println!("|---|---|---|---|");
    let mut kinds: Vec<&str> = CHAIN_KINDS.iter().map(|(k, _)| *k).collect();
    for c in chains {
        if !kinds.contains(&c.kind.as_str()) {
            kinds.push(c.kind.as_str());
        }
    }
    let (mut all_found, mut all_facts) = (0, 0);
    for kind in kinds {
        let members: Vec<usize> = (0..chains.len()).filter(|i| chains[*i].kind == kind).collect();
        if members.is_empty() {
            continue;
        }
        let facts: usize = members.iter().map(|i| chains[*i].facts.len()).sum();
        let found: usize = members.iter().map(|i| scored[*i].found.len()).sum();
        (all_found, all_facts) = (all_found + found, all_facts + facts);
        let name = CHAIN_KINDS.iter().find(|(k, _)| *k == kind).map_or(kind, |(_, n)| *n);
        println!("| {name} | {} | {found} of {facts} | {} |", members.len(), pct(found, facts));
    }
    println!(
        "| all | {} | {all_found} of {all_facts} | {} |",
        chains.len(),
        pct(all_found, all_facts)
    );
    let briefed = scored.iter().filter(|s| !s.briefing.trim().is_empty()).count();
    let recalled = scored.iter().filter(|s| !s.recall.trim().is_empty()).count();
    println!(
        "\nThe next agent's session start answered in {briefed} of {} chains, its first prompt in {recalled}.\n",
        chains.len()
    );

    let can = |pick: fn(&Chain) -> bool| chains.iter().filter(|c| pick(c)).count();
    let sum = |pick: fn(&ChainScored) -> usize| -> usize { scored.iter().map(pick).sum() };
    println!("| false claims | chains that can show it | handed context | store |");
    println!("|---|---|---|---|");
    println!(
        "| a replaced choice presented as current | {} | {} | |",
        can(|c| !c.claims.superseded.is_empty()),
        sum(|s| s.superseded.len())
    );
    println!(
        "| \"not run again\" of a check that was | {} | {} | {} |",
        can(|c| !c.claims.rerun.is_empty()),
        sum(|s| s.not_rerun_handed.len()),
        sum(|s| s.not_rerun_store.len())
    );
    println!(
        "| a request typed as a decision | {} | | {} |",
        can(|c| !c.claims.requests.is_empty()),
        sum(|s| s.decisions.len())
    );
    println!(
        "| another project's convention handed | {} | {} | |",
        can(|c| !c.claims.foreign.is_empty()),
        sum(|s| s.foreign.len())
    );
    println!(
        "| the person's preference kept only under a project | {} | | {} |",
        can(|c| !c.claims.person.is_empty()),
        sum(|s| s.person.len())
    );
    let corpus_titles: usize = alone.iter().map(|a| a.titles).sum();
    let corpus_commands: usize = alone.iter().map(|a| a.command_titles.len()).sum();
    let corpus = if alone.is_empty() {
        String::new()
    } else {
        format!("; {corpus_commands} of {corpus_titles} (the {} sessions alone)", alone.len())
    };
    println!(
        "| observation title holding a command line | {} | | {} of {} titles (chains){corpus} |\n",
        chains.len(),
        sum(|s| s.command_titles.len()),
        sum(|s| s.titles),
    );
    for title in alone.iter().flat_map(|a| &a.command_titles) {
        println!("command-line title (a session alone): {title}");
    }
}
