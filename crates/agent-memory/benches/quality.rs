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
//! The rules for a hit and for each false claim are `agent_memory_testkit::sessions`'s (stated
//! in bench/README.md). The offline distiller is always measured; with `BENCH_LLM_PROVIDER`
//! set, an LLM distiller is measured as well, configured through `[llm]`'s environment
//! (`BENCH_LLM_PROVIDER`, `BENCH_LLM_MODEL`, `BENCH_LLM_BASE_URL`, `BENCH_LLM_API_KEY_ENV`,
//! `BENCH_LLM_COMMAND`, `BENCH_LLM_DAILY_TOKEN_BUDGET`). `BENCH_SESSIONS=a,b` limits the
//! corpus, `BENCH_VERBOSE=1` prints what each session missed and every false statement.
//!
//! `cargo bench -p agent-memory --bench quality` (release profile).

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::process::ExitCode;

use agent_memory_testkit::sessions::{self, Places, Scenario};
use agent_memory_testkit::{TestHome, describe, run_with_stdin};

const BIN: &str = env!("CARGO_BIN_EXE_agent-memory");

/// The channels a session's facts are looked for in, in table order.
const CHANNELS: [&str; 4] = ["distilled", "briefing", "recall", "search"];
/// Keys of `show --json` items that are bookkeeping, not memory.
const SHOW_SKIP: &[&str] = &["session", "agent", "project", "mode", "distiller", "kind"];
/// Keys of search hits that are not what a reader sees of the hit.
const HIT_SKIP: &[&str] = &["agent", "project", "session", "kind", "tool", "parts"];

fn main() -> ExitCode {
    let mut scenarios = sessions::load_all();
    if let Ok(only) = std::env::var("BENCH_SESSIONS") {
        let only: Vec<&str> = only.split(',').map(str::trim).collect();
        scenarios.retain(|s| only.contains(&s.name.as_str()));
    }
    if scenarios.is_empty() {
        eprintln!(
            "quality: no recorded sessions in {}; run scripts/record-sessions",
            sessions::sessions_dir().display()
        );
        return ExitCode::from(2);
    }
    let verbose = std::env::var("BENCH_VERBOSE").is_ok_and(|v| v == "1");
    println!("# Memory quality: {} sessions\n", scenarios.len());
    print_corpus(&scenarios);
    for (label, env) in distillers() {
        let alone: Vec<Scored> = scenarios.iter().map(|s| score_alone(s, &env)).collect();
        let together = score_together(&scenarios, &env);
        if verbose {
            print_details(&scenarios, &alone);
        }
        print_tables(&label, &scenarios, &alone, &together);
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
    TestHome::new(BIN)
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
    Scored {
        channels,
        repeated: sessions::repeated_requests(&next_steps, &scenario.claims),
        observations,
        summaries,
        candidates: candidates.len(),
    }
}

fn score_together(scenarios: &[Scenario], env: &[(String, String)]) -> Together {
    let home = home();
    for (i, scenario) in scenarios.iter().enumerate() {
        sessions::replay(&home, scenario, &places(&home, i as u32 + 1));
    }
    let (observations, _) = work(&home, env);
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
