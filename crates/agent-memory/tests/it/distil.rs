//! Distilling through the real binary: a session's hooks become observations and a summary,
//! passes are idempotent, silent sessions are summarized, and the stop hook starts a pass
//! without waiting for it.

use serde_json::json;

use crate::{assert_quiet_success, count, home, payload};
use agent_memory_testkit::TestHome;
use agent_memory_testkit::fake_http::{FakeServer, Reply};

/// A Claude Code session that fixes a failing test, ending with `Stop` when `stop` is set.
pub(crate) fn bug_fix_session(home: &TestHome, session: &str, stop: bool) {
    let cwd = "/w/app";
    let steps: Vec<(&str, serde_json::Value)> = vec![
        ("SessionStart", json!({"source": "startup"})),
        ("UserPromptSubmit", json!({"prompt": "the parser test fails, please fix it"})),
        // Claude Code reports a command that exits non-zero as PostToolUseFailure.
        (
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_use_id": "t1",
            "tool_input": {"command": "cargo test -p parser"},
            "error": "Exit code 101\nerror[E0425]: cannot find value `depth` in this scope\n --> src/parser.rs:42:9\nerror: could not compile `parser`"}),
        ),
        (
            "PostToolUse",
            json!({"tool_name": "Read", "tool_use_id": "t2",
            "tool_input": {"file_path": "/w/app/src/parser.rs"},
            "tool_response": {"type": "text", "file": {"filePath": "/w/app/src/parser.rs", "content": "fn parse(input: &str) { let d = depth + 1; }"}}}),
        ),
        (
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_use_id": "t3",
            "tool_input": {"file_path": "/w/app/src/parser.rs", "old_string": "depth + 1", "new_string": "self.depth + 1"},
            "tool_response": {"filePath": "/w/app/src/parser.rs"}}),
        ),
        (
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": "t4",
            "tool_input": {"command": "cargo test -p parser"},
            "tool_response": {"stdout": "test result: ok. 12 passed; 0 failed", "stderr": "", "interrupted": false}}),
        ),
    ];
    for (event, extra) in steps {
        let out = home.hook("claude-code", event, &payload(session, event, cwd, extra));
        // A session start and a prompt answer with earlier sessions' context once there is
        // some (an earlier run of this session fixed the parser too).
        if event == "SessionStart" || event == "UserPromptSubmit" {
            assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
        } else {
            assert_quiet_success(&out);
        }
    }
    if stop {
        let extra =
            json!({"stop_hook_active": false, "last_assistant_message": "Fixed the parser."});
        assert_quiet_success(&home.hook(
            "claude-code",
            "Stop",
            &payload(session, "Stop", cwd, extra),
        ));
    }
}

#[test]
fn a_bug_fix_session_becomes_an_observation_and_a_summary() {
    let home = home();
    bug_fix_session(&home, "fix-1", true);
    let report = home.json(&["work"]);
    assert_eq!(report["summaries"], 1, "{report}");
    let (title, facts): (String, String) = crate::db(&home)
        .query_row("SELECT title, facts FROM observations WHERE kind = 'bugfix'", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .expect("a bugfix observation");
    // The agent's closing words name what was done; what was seen backs them.
    assert_eq!(title, "Fixed the parser", "{title}");
    assert!(
        facts.contains("cargo test -p parser")
            && facts.contains("src/parser.rs")
            && facts.contains("error[E0425]"),
        "{facts}"
    );

    // Idempotent: a second pass adds nothing.
    let again = home.json(&["work"]);
    assert_eq!(
        (again["observations"].as_i64(), again["summaries"].as_i64()),
        (Some(0), Some(0)),
        "{again}"
    );

    // Searchable and showable like everything else.
    let hits = home.json(&["search", "parser"]);
    let kinds: Vec<&str> =
        hits["hits"].as_array().expect("hits").iter().filter_map(|h| h["kind"].as_str()).collect();
    assert!(kinds.contains(&"observation") && kinds.contains(&"summary"), "{kinds:?}");
    let id = count(&home, "SELECT id FROM observations WHERE kind = 'bugfix'");
    let shown = home.ok(&["show", &format!("o{id}")]);
    assert!(shown.contains("[bugfix]") && shown.contains("from events"), "{shown}");
    let summary = home.ok(&["show", "s1"]);
    assert!(summary.contains("the parser test fails, please fix it"), "{summary}");
    let event = home.json(&["show", "e2"]);
    assert_eq!(event[0]["kind"], "event", "{event}");
    let bad = home.run(&["show", "x9"], b"");
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("not an id"));
}

#[test]
fn an_unfinished_turn_waits_until_the_session_goes_silent() {
    let home = home();
    bug_fix_session(&home, "crashed", false);
    let report = home.json(&["work"]);
    assert_eq!(
        (report["observations"].as_i64(), report["summaries"].as_i64()),
        (Some(0), Some(0)),
        "{report}"
    );
    let out = home
        .cmd()
        .args(["work", "--json"])
        .env("AGENT_MEMORY_DISTIL__SILENCE_MINUTES", "0")
        .output()
        .expect("work");
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["summaries"], 1, "{report}");
    assert!(report["observations"].as_i64().unwrap_or(0) >= 1, "{report}");
}

#[test]
fn concurrent_passes_store_each_observation_once() {
    let home = home();
    for i in 0..6 {
        bug_fix_session(&home, &format!("s{i}"), true);
    }
    let children: Vec<_> = (0..3)
        .map(|_| {
            home.cmd()
                .args(["work", "--json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn work")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait");
        // A pass either works or says another one is running (under --json, as the error
        // object on stdout); it never fails otherwise.
        let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() || said.contains("another work pass is running"), "{said}");
    }
    home.ok(&["work"]);
    assert_eq!(count(&home, "SELECT count(*) FROM summaries"), 6);
    assert_eq!(count(&home, "SELECT count(*) FROM observations WHERE kind = 'bugfix'"), 6);
    assert_eq!(count(&home, "SELECT count(*) - count(DISTINCT source_key) FROM observations"), 0);
}

#[test]
fn the_stop_hook_starts_a_pass_without_waiting_for_it() {
    let home = home();
    bug_fix_session(&home, "auto", false);
    let stop = payload("auto", "Stop", "/w/app", json!({"last_assistant_message": "done"}));
    let out = agent_memory_testkit::run_with_stdin(
        home.cmd()
            .args(["hook", "--agent", "claude-code", "--event", "Stop"])
            .env("AGENT_MEMORY_DISTIL__AUTO_WORK", "true"),
        &stop,
    );
    assert_quiet_success(&out);
    // The pass runs on its own; wait for its result (bounded), not for a time.
    let mut summaries = 0;
    for _ in 0..200 {
        summaries = count(&home, "SELECT count(*) FROM summaries");
        if summaries > 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(summaries, 1, "the background pass summarized the session");
}

#[test]
fn modes_are_listed_shown_and_chosen() {
    let home = home();
    let list = home.ok(&["mode", "list"]);
    for name in ["code", "code-quiet", "meeting-notes"] {
        assert!(list.contains(name), "{list}");
    }
    let shown = home.ok(&["mode", "show", "code", "--language", "zh-CN"]);
    assert!(shown.contains("缺陷修复") || shown.contains("修复"), "{shown}");
    home.ok(&["mode", "use", "code-quiet", "--language", "zh-CN"]);
    let config = std::fs::read_to_string(home.home().join("config.toml")).expect("config written");
    assert!(config.contains("code-quiet") && config.contains("zh-CN"), "{config}");
    let bad = home.run(&["mode", "use", "no-such-mode"], b"");
    assert!(!bad.status.success());
    bug_fix_session(&home, "zh", true);
    home.ok(&["work"]);
    // The agent's own words stay in their language; what the rules write is in the mode's.
    let subtitle: String = crate::db(&home)
        .query_row("SELECT subtitle FROM observations WHERE kind = 'bugfix'", [], |r| r.get(0))
        .expect("bugfix in Chinese");
    assert!(subtitle.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "{subtitle}");
}

/// A scripted stand-in for the Anthropic Messages API on 127.0.0.1: answers observation
/// requests with one text and summary requests with another, and records every request body.
struct FakeAnthropic {
    server: FakeServer,
}

impl FakeAnthropic {
    /// Answers with one bug-fix observation and a summary of the parser fix.
    fn start() -> FakeAnthropic {
        let observations = json!({"observations": [{"type": "bugfix", "title": "Fixed the depth lookup in src/parser.rs",
            "subtitle": "cargo test -p parser failed on an unknown value", "facts": ["`depth` must be read from self."],
            "narrative": "The parser read a local that did not exist.", "concepts": ["gotcha", "no-such-concept"],
            "files_read": [], "files_modified": ["src/parser.rs"], "source_event_ids": []}]});
        let summary = json!({"request": "fix the parser test", "investigated": [], "learned": ["depth lives on self"],
            "completed": ["cargo test -p parser passes"], "next_steps": [], "files_read": [], "files_modified": ["src/parser.rs"]});
        FakeAnthropic::answering(&observations.to_string(), &summary.to_string())
    }

    /// Answers every observation request with `observations` and every summary request with
    /// `summary`, as the model's text: any text, well-formed or not.
    fn answering(observations: &str, summary: &str) -> FakeAnthropic {
        let (observations, summary) = (observations.to_owned(), summary.to_owned());
        let server = FakeServer::start(move |request| {
            let text =
                if request.body.contains("Observation types") { &observations } else { &summary };
            let answer = json!({"content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": 1000, "output_tokens": 100}});
            Some(Reply::json(200, &answer.to_string()))
        });
        FakeAnthropic { server }
    }

    /// What each request asked: its system prompt and its user message, one after the other.
    fn prompts(&self) -> Vec<String> {
        self.server
            .requests()
            .iter()
            .map(|request| {
                let request = request.json();
                let system = request["system"].as_str().expect("a system prompt");
                let user = request["messages"][0]["content"].as_str().expect("a user message");
                format!("{system}\n{user}")
            })
            .collect()
    }

    /// One `work --json` pass of `home` with this server as its configured model.
    fn work(&self, home: &TestHome) -> serde_json::Value {
        let out = home
            .cmd()
            .args(["work", "--json"])
            .env("AGENT_MEMORY_LLM__PROVIDER", "anthropic")
            .env("AGENT_MEMORY_LLM__BASE_URL", self.server.base_url())
            .env("ANTHROPIC_API_KEY", "test-key-not-a-secret")
            .output()
            .expect("work");
        assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
        serde_json::from_slice(&out.stdout).expect("the work report")
    }
}

#[test]
fn a_configured_model_distils_within_its_budget() {
    let home = home();
    bug_fix_session(&home, "llm", true);
    let server = FakeAnthropic::start();
    let work = |budget: &str| {
        let out = home
            .cmd()
            .args(["work", "--json"])
            .env("AGENT_MEMORY_LLM__PROVIDER", "anthropic")
            .env("AGENT_MEMORY_LLM__BASE_URL", server.server.base_url())
            .env("AGENT_MEMORY_LLM__DAILY_TOKEN_BUDGET", budget)
            .env("ANTHROPIC_API_KEY", "test-key-not-a-secret")
            .output()
            .expect("work");
        assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    };
    work("200000");
    let (title, distiller, concepts): (String, String, String) = crate::db(&home)
        .query_row("SELECT title, distiller, concepts FROM observations", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .expect("the model's observation");
    assert_eq!(title, "Fixed the depth lookup in src/parser.rs");
    assert_eq!(distiller, "llm:anthropic");
    let work_tokens = count(&home, "SELECT work_tokens FROM observations");
    assert!(work_tokens > 1100, "the model's tokens count as work behind it: {work_tokens}");
    assert!(
        !concepts.contains("no-such-concept"),
        "concepts outside the mode are dropped: {concepts}"
    );
    let summary: String = crate::db(&home)
        .query_row("SELECT request FROM summaries", [], |r| r.get(0))
        .expect("summary");
    assert_eq!(summary, "fix the parser test");
    let requests = server.server.requests();
    assert_eq!(requests.len(), 2, "one observe call for the turn, one summary call");
    assert!(requests[0].body.contains("cargo test -p parser"), "the turn's events were sent");
    let status = home.json(&["status"]);
    assert_eq!(status["llm_spend"][0]["tokens"], 2200, "{status}");

    // Past the day's budget the offline distiller takes over, and nothing is sent.
    bug_fix_session(&home, "over-budget", true);
    work("10");
    assert_eq!(server.server.requests().len(), 2);
    assert!(count(&home, "SELECT count(*) FROM observations WHERE distiller = 'offline'") >= 1);
}

fn session_start(
    home: &TestHome,
    agent: &str,
    event: &str,
    session: &str,
    envs: &[(&str, &str)],
) -> serde_json::Value {
    let body = payload(session, event, "/w/app", json!({"source": "startup"}));
    let mut cmd = home.cmd();
    cmd.args(["hook", "--agent", agent, "--event", event]);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let out = agent_memory_testkit::run_with_stdin(&mut cmd, &body);
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert_eq!(text.lines().count(), 1, "one line of JSON: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn a_new_session_of_another_agent_starts_with_what_earlier_ones_left() {
    let home = home();
    bug_fix_session(&home, "earlier", true);
    home.ok(&["work"]);

    let answer = session_start(&home, "gemini", "SessionStart", "gemini-new", &[]);
    let context = answer["hookSpecificOutput"]["additionalContext"].as_str().expect("context");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(context.starts_with(agent_memory_core::capture::fence::SENTINEL_OPEN), "{context}");
    assert!(
        context.contains("the parser test fails, please fix it"),
        "the last session's request: {context}"
    );
    assert!(
        context.contains("cargo test -p parser") && context.contains("claude-code"),
        "the timeline: {context}"
    );
    assert!(context.contains("the conversation wins"), "{context}");
    crate::recall_inject::check_economics(&home, context);

    // Codex drops any answer with a key outside its schema: exactly this shape.
    let codex = session_start(&home, "codex", "SessionStart", "codex-new", &[]);
    let keys: Vec<&String> = codex.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["hookSpecificOutput"]);
    let inner: Vec<&String> =
        codex["hookSpecificOutput"].as_object().expect("object").keys().collect();
    assert_eq!(inner, ["additionalContext", "hookEventName"]);
    let copilot = session_start(&home, "copilot", "sessionStart", "copilot-new", &[]);
    assert!(
        copilot["additionalContext"].as_str().is_some_and(|c| c.contains("parser")),
        "{copilot}"
    );

    // The budget holds, and the language follows the configuration.
    for budget in [120usize, 400, 1500] {
        let budget_env = budget.to_string();
        let answer = session_start(
            &home,
            "claude-code",
            "SessionStart",
            &format!("b{budget}"),
            &[("AGENT_MEMORY_INJECT__BUDGET_TOKENS", &budget_env)],
        );
        let context = answer["hookSpecificOutput"]["additionalContext"].as_str().expect("context");
        assert!(
            agent_memory_core::tokens::estimate(context) <= budget,
            "budget {budget}: {context}"
        );
    }
    let zh = session_start(
        &home,
        "claude-code",
        "SessionStart",
        "zh-new",
        &[("AGENT_MEMORY_DISTIL__LANGUAGE", "zh-CN")],
    );
    let context = zh["hookSpecificOutput"]["additionalContext"].as_str().expect("context");
    assert!(context.contains("以当前对话为准"), "{context}");

    // Echoed back by the agent, the context is never captured as new text.
    let echo = format!("<hook_context>{context}</hook_context>\n\nnow add a regression test");
    let body = payload("gemini-new", "BeforeAgent", "/w/app", json!({"prompt": echo}));
    assert_quiet_success(&home.hook("gemini", "BeforeAgent", &body));
    let stored: String = crate::db(&home)
        .query_row("SELECT body FROM events WHERE agent = 'gemini' AND kind = 'prompt'", [], |r| {
            r.get(0)
        })
        .expect("prompt");
    assert_eq!(stored, "now add a regression test");
}

#[test]
fn the_timeline_orders_observations_across_agents_around_an_anchor() {
    let home = home();
    bug_fix_session(&home, "first", true);
    home.ok(&["work"]);
    let gemini = |event: &str, extra: serde_json::Value| {
        assert_quiet_success(&home.hook(
            "gemini",
            event,
            &payload("decide", event, "/w/app", extra),
        ));
    };
    gemini(
        "BeforeAgent",
        json!({"prompt": "from now on use jiff instead of chrono for every timestamp, because its time zone API is harder to misuse"}),
    );
    gemini("AfterAgent", json!({"prompt_response": "noted", "stop_hook_active": false}));
    home.ok(&["work"]);
    bug_fix_session(&home, "second", true);
    home.ok(&["work"]);

    let items = home.json(&["timeline", "jiff", "chrono"]);
    let rows: Vec<(String, String)> = items
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            (
                i["agent"].as_str().unwrap_or("").to_owned(),
                i["kind"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    let decision = rows
        .iter()
        .position(|(agent, kind)| agent == "gemini" && kind == "decision")
        .expect("the anchor");
    assert!(
        rows[..decision].iter().any(|(a, _)| a == "claude-code"),
        "earlier work first: {rows:?}"
    );
    assert!(
        rows[decision + 1..].iter().any(|(a, _)| a == "claude-code"),
        "later work after: {rows:?}"
    );
    let times: Vec<i64> =
        items.as_array().expect("items").iter().filter_map(|i| i["at_ms"].as_i64()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "oldest first: {times:?}");

    let narrow = home.json(&["timeline", "jiff", "--before", "1", "--after", "0"]);
    assert_eq!(narrow.as_array().map(Vec::len), Some(1), "just the anchor: {narrow}");
    let text = home.ok(&[
        "timeline",
        &format!("o{}", count(&home, "SELECT id FROM observations WHERE kind = 'decision'")),
    ]);
    assert!(text.contains("→") && text.contains("[decision]"), "{text}");
    let several = home.json(&["get", "o1", "s1"]);
    assert_eq!(several.as_array().map(Vec::len), Some(2), "get fetches several at once");
}

/// Replays the recorded session `name` into `home`'s project.
fn replay_recorded(home: &TestHome, name: &str) {
    use agent_memory_testkit::sessions::{self, Places};
    let places = Places {
        home: home.user_home().to_path_buf(),
        project: home.user_home().join("work/proj"),
        salt: 0,
    };
    sessions::replay(home, &sessions::load(name), &places);
}

/// Every observation and then every summary as `show --json` prints them, oldest first.
fn shown(home: &TestHome) -> Vec<serde_json::Value> {
    let observations = count(home, "SELECT count(*) FROM observations");
    let summaries = count(home, "SELECT count(*) FROM summaries");
    let mut ids: Vec<String> = (1..=observations).map(|n| format!("o{n}")).collect();
    ids.extend((1..=summaries).map(|n| format!("s{n}")));
    let mut args = vec!["show"];
    args.extend(ids.iter().map(String::as_str));
    let items = home.json(&args);
    items.as_array().expect("items").iter().map(|i| i["item"].clone()).collect()
}

/// A recorded Codex session (a test run failing behind `; echo done`, a fix through `sed -i`,
/// the run passing, a closing answer naming the cause) distilled by a configured model: its
/// prompts carry the closing answer as the agent's claim, each run's real outcome with the line
/// that names the failure, and the change the shell made; its scripted answers are stored.
#[test]
fn a_model_is_told_the_closing_answer_and_what_really_happened() {
    let home = home();
    replay_recorded(&home, "codex-pricing-sed-masked");
    let observation = json!({"observations": [{"type": "bugfix",
        "title": "apply_discount: percent is a whole number, divide it by 100",
        "subtitle": "10 meant 1000% because percent was used as a fraction",
        "facts": ["apply_discount multiplied by percent as if it were a fraction, so test_pricing got -1800 for 180; it now divides by 100 in pricing.py."],
        "narrative": "The masked unittest run failed with AssertionError: -1800 != 180; a sed edit fixed pricing.py and the rerun passed.",
        "concepts": ["problem-solution", "gotcha"], "files_read": [], "files_modified": ["pricing.py"],
        "source_event_ids": []}]});
    let summary = json!({"request": "Fix apply_discount so the discount test passes.",
        "investigated": ["test_pricing"], "learned": ["apply_discount treated percent as a fraction, so 10 meant 1000%"],
        "completed": ["pricing.py divides percent by 100; python3 -m unittest test_pricing passed"],
        "next_steps": [], "files_read": [], "files_modified": ["pricing.py"]});
    let server = FakeAnthropic::answering(&observation.to_string(), &summary.to_string());
    server.work(&home);

    let prompts = server.prompts();
    assert_eq!(prompts.len(), 2, "one observe call for the turn, one summary call");
    for text in &prompts {
        assert!(
            text.contains("closing answer (the agent's own words, a claim):\nFixed: apply_discount treated percent as a fraction"),
            "the closing answer, as a claim: {text}"
        );
        // The first run's exit code was 0 (`; echo done`); its output shows the failure.
        assert!(
            text.contains(
                "command: python3 -m unittest test_pricing 2>&1; echo done\noutcome: FAILED"
            ),
            "the masked failure, as it really was: {text}"
        );
        assert!(text.contains("error line: AssertionError: -1800 != 180"), "{text}");
        assert!(
            text.contains(
                "command: python3 -m unittest test_pricing 2>&1 | tail -3\noutcome: passed"
            ),
            "the passing run: {text}"
        );
        assert!(
            text.contains("changed: pricing.py\nput in: total * percent / 100"),
            "the change made through sed: {text}"
        );
        assert!(
            text.contains("Never report a FAILED run as passed")
                || text.contains("A command whose run is marked FAILED is never completed"),
            "the rule: {text}"
        );
    }
    let items = shown(&home);
    let distillers: Vec<&str> = items.iter().filter_map(|i| i["distiller"].as_str()).collect();
    assert_eq!(distillers, ["llm:anthropic", "llm:anthropic"], "the model's answers were stored");
    assert_eq!(items[0]["title"], "apply_discount: percent is a whole number, divide it by 100");
    assert_eq!(items[0]["files_modified"], json!(["pricing.py"]), "{}", items[0]);
    assert_eq!(
        items[1]["learned"],
        json!(["apply_discount treated percent as a fraction, so 10 meant 1000%"]),
        "{}",
        items[1]
    );
}

/// A recorded Claude Code session (a test failing with an AssertionError, the file read, an
/// edit, the test passing, a closing answer naming the cause): the prompts carry the failure's
/// error line, what the edit put into which file and the closing answer; the model's lesson is
/// stored and found by search.
#[test]
fn a_model_is_told_what_an_edit_put_in_and_why_the_run_failed() {
    let home = home();
    replay_recorded(&home, "claude-webhook-edit");
    let observation = json!({"observations": [{"type": "bugfix",
        "title": "verifySignature: strip the sha256= prefix and lower-case the header before comparing",
        "subtitle": "The header arrives as sha256=<HEX> in upper case",
        "facts": ["The signature header arrives as `sha256=<HEX>` in upper case while the digest is lower-case hex, so node test/webhook.test.js failed with AssertionError; src/webhook.js now strips the prefix and lower-cases the header."],
        "narrative": "The webhook test failed until the header was normalised.", "concepts": ["problem-solution", "gotcha"],
        "files_read": ["src/webhook.js"], "files_modified": ["src/webhook.js"], "source_event_ids": [3, "5", 6]}]});
    let summary = json!({"request": "Fix the failing webhook signature test in src/webhook.js.",
        "investigated": ["src/webhook.js"], "learned": ["The header carries a sha256= prefix and upper-case hex"],
        "completed": ["src/webhook.js normalises the header; node test/webhook.test.js passed"],
        "next_steps": [], "files_read": ["src/webhook.js"], "files_modified": ["src/webhook.js"]});
    let server = FakeAnthropic::answering(&observation.to_string(), &summary.to_string());
    server.work(&home);

    let prompts = server.prompts();
    assert_eq!(prompts.len(), 2, "one observe call for the turn, one summary call");
    for text in &prompts {
        assert!(
            text.contains("a claim):\nThe test failed with AssertionError because the signature header arrives as `sha256=<HEX>` in upper case"),
            "the closing answer: {text}"
        );
        assert!(
            text.contains(
                "command: node test/webhook.test.js\noutcome: FAILED (exit code 1)\n\
                 error line: AssertionError [ERR_ASSERTION]: uppercase signature with sha256= prefix"
            ),
            "the failed run and its error line: {text}"
        );
        assert!(
            text.contains(
                "changed: src/webhook.js\nput in: const given = header.replace(/^sha256=/"
            ),
            "the edit: {text}"
        );
        assert!(
            text.contains("command: node test/webhook.test.js\noutcome: passed"),
            "the run that verified it: {text}"
        );
        assert!(!text.contains("originalFile"), "an edit's receipt is not sent: {text}");
    }
    let items = shown(&home);
    let observation = &items[0];
    assert_eq!(observation["distiller"], "llm:anthropic", "{observation}");
    assert_eq!(
        observation["title"],
        "verifySignature: strip the sha256= prefix and lower-case the header before comparing"
    );
    let summary = &items[1];
    assert_eq!(summary["distiller"], "llm:anthropic", "{summary}");
    assert_eq!(summary["next_steps"], json!([]), "{summary}");

    let hits = home.json(&["search", "sha256 prefix", "--limit", "3"]);
    let titles: Vec<&str> = hits["hits"]
        .as_array()
        .expect("hits")
        .iter()
        .filter(|h| h["kind"] == "observation")
        .filter_map(|h| h["title"].as_str())
        .collect();
    assert!(titles.iter().any(|t| t.starts_with("verifySignature: strip")), "{hits}");
}

/// A model that answers with something other than the JSON asked for gets one corrective
/// retry; when that fails too, the offline rules distil the session, and nothing is lost.
#[test]
fn a_malformed_model_answer_falls_back_to_the_offline_rules() {
    let home = home();
    replay_recorded(&home, "claude-webhook-edit");
    let server = FakeAnthropic::answering(
        "Sure! The test failed because of the header.",
        r#"{"request": 3}"#,
    );
    let report = server.work(&home);
    assert_eq!(report["summaries"], 1, "{report}");

    let prompts = server.prompts();
    assert_eq!(prompts.len(), 4, "observe and summary, each asked twice");
    for (first, again) in [(&prompts[0], &prompts[1]), (&prompts[2], &prompts[3])] {
        assert!(again.starts_with(first.as_str()), "the correction is appended to the request");
        assert!(again[first.len()..].contains("Your previous answer could not be used"), "{again}");
    }
    let items = shown(&home);
    assert!(items.len() >= 2, "{items:?}");
    assert!(
        items.iter().all(|item| item["distiller"] == "offline"),
        "the offline rules distilled the session: {items:?}"
    );
    let observation = &items[0];
    let text = observation.to_string();
    assert!(
        text.contains("src/webhook.js") && text.contains("AssertionError"),
        "the offline observation names the file and the error: {text}"
    );
}
