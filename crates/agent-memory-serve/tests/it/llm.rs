//! The LLM transports against scripted fakes: an HTTP server on `127.0.0.1:0` that records each
//! request and answers a canned response, and fake `claude`/`codex` scripts. Checks each wire
//! format, each error mapping, that the API key never reaches an error message, and batches
//! through core's `LlmDistiller` end to end: what the model is told of each run, change and
//! closing answer, and what its answers become.

use std::cell::Cell;
use std::path::Path;
use std::time::Duration;

use agent_memory_core::adapter::{Normalized, normalize};
use agent_memory_core::config::LlmConfig;
use agent_memory_core::distil::StoredEvent;
use agent_memory_core::distil::llm::{Budget, LlmDistiller};
use agent_memory_core::distil::mode;
use agent_memory_core::event::CaptureContext;
use agent_memory_serve::llm::{LlmSetupError, Transport, TransportError, transport};
use agent_memory_testkit::fake_http::{FakeServer, Reply};
use serde_json::{Value, json};

const KEY: &str = "sk-test-SECRET-0123456789";
/// A variable no environment sets, so the key comes from `key_file`.
const NO_VAR: &str = "AGENT_MEMORY_TEST_NO_SUCH_KEY_VAR";

// ---------------------------------------------------------------------------------------------
// The fake HTTP server.

type Canned = Reply;

fn canned(status: u16, body: &str) -> Canned {
    Reply::json(status, body)
}

/// Serves `responses` in order, one request each, and returns the base URL and the server.
fn serve(responses: Vec<Canned>) -> (String, FakeServer) {
    let server = FakeServer::replying(responses);
    (server.base_url().to_owned(), server)
}

/// Writes a fixture into a test's temp directory: no user owns it, so the atomic write the
/// lint asks for would only add noise.
#[allow(clippy::disallowed_methods)]
fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("fixture");
}

/// A configuration whose key comes from a file holding it with stray whitespace.
fn config(dir: &Path, provider: &str, base_url: &str) -> LlmConfig {
    let key_file = dir.join("key");
    write(&key_file, &format!("  {KEY}\n"));
    LlmConfig {
        provider: provider.to_owned(),
        base_url: base_url.to_owned(),
        api_key_env: NO_VAR.to_owned(),
        key_file: key_file.display().to_string(),
        timeout_seconds: 5,
        ..LlmConfig::default()
    }
}

fn build(config: &LlmConfig) -> Box<dyn Transport> {
    match transport(config) {
        Ok(Some(transport)) => transport,
        Ok(None) => panic!("no transport for {}", config.provider),
        Err(e) => panic!("{e}"),
    }
}

fn assert_keyless(error: &TransportError) {
    assert!(!format!("{error} {error:?}").contains(KEY), "the key leaked: {error:?}");
}

fn rate_limited() -> Canned {
    Canned { headers: vec![("retry-after", "2".to_owned())], ..canned(429, "{}") }
}

fn slow() -> Canned {
    Canned { delay: Duration::from_secs(3), ..canned(200, "{}") }
}

/// The error mappings every HTTP transport shares, driven through `transport`.
fn check_errors(transport: &dyn Transport) {
    let got = transport.complete("sys", "user").expect_err("429");
    assert_eq!(got, TransportError::RateLimited { retry_after_ms: Some(2000) });

    let got = transport.complete("sys", "user").expect_err("500");
    assert_eq!(got, TransportError::Server { status: 500, message: "overloaded".to_owned() });
    assert!(got.is_transient());

    // A server that echoes the key back in its complaint must not get it into the message.
    let got = transport.complete("sys", "user").expect_err("401");
    assert!(
        matches!(&got, TransportError::Server { status: 401, message } if message.contains("invalid key")),
        "{got:?}"
    );
    assert!(!got.is_transient());
    assert_keyless(&got);

    let got = transport.complete("sys", "user").expect_err("invalid JSON");
    assert!(matches!(&got, TransportError::Other(m) if m.contains("not JSON")), "{got:?}");
    assert_keyless(&got);

    let got = transport.complete("sys", "user").expect_err("wrong shape");
    assert!(matches!(got, TransportError::Other(_)), "{got:?}");
}

fn error_responses() -> Vec<Canned> {
    vec![
        rate_limited(),
        canned(500, r#"{"error":{"message":"overloaded"}}"#),
        canned(401, &format!(r#"{{"error":{{"message":"invalid key {KEY}"}}}}"#)),
        canned(200, "this is not json"),
        canned(200, r#"{"unexpected":true}"#),
    ]
}

// ---------------------------------------------------------------------------------------------
// Setup.

#[test]
fn setup_picks_the_provider_and_finds_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(matches!(transport(&LlmConfig::default()), Ok(None)));

    let unknown = LlmConfig { provider: "gemini".into(), ..LlmConfig::default() };
    let Err(e) = transport(&unknown) else { panic!("gemini is not a provider") };
    assert!(matches!(e, LlmSetupError::UnknownProvider { .. }));
    assert!(e.to_string().contains("anthropic, openai, claude-cli or codex-cli"), "{e}");

    for provider in ["anthropic", "openai"] {
        let keyless = LlmConfig {
            provider: provider.into(),
            api_key_env: NO_VAR.into(),
            ..LlmConfig::default()
        };
        let Err(e) = transport(&keyless) else { panic!("{provider} needs a key") };
        assert!(matches!(e, LlmSetupError::MissingKey { .. }));
        assert!(e.to_string().contains(NO_VAR) && e.to_string().contains("key_file"), "{e}");
    }

    let unreadable = LlmConfig {
        provider: "anthropic".into(),
        api_key_env: NO_VAR.into(),
        key_file: dir.path().join("missing").display().to_string(),
        ..LlmConfig::default()
    };
    assert!(matches!(transport(&unreadable), Err(LlmSetupError::KeyFile { .. })));

    let cli = LlmConfig { provider: "codex-cli".into(), ..LlmConfig::default() };
    assert_eq!(build(&cli).name(), "codex-cli");
}

#[test]
fn the_key_comes_from_the_named_environment_variable_first() {
    // HOME is set in every test environment; any variable's value proves it was read.
    let expected = std::env::var("HOME").expect("HOME");
    let dir = tempfile::tempdir().expect("tempdir");
    let (base, log) = serve(vec![canned(200, r#"{"content":[{"type":"text","text":"ok"}]}"#)]);
    let config = LlmConfig { api_key_env: "HOME".into(), ..config(dir.path(), "anthropic", &base) };
    build(&config).complete("s", "u").expect("answer");
    assert_eq!(log.requests()[0].header("x-api-key"), Some(expected.trim()));
}

// ---------------------------------------------------------------------------------------------
// Anthropic.

#[test]
fn anthropic_sends_a_messages_request_and_reads_the_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let answer = json!({
        "content": [{ "type": "text", "text": "hello " }, { "type": "text", "text": "world" }],
        "usage": { "input_tokens": 12, "output_tokens": 34 },
    });
    let (base, log) = serve(vec![canned(200, &answer.to_string())]);
    let transport = build(&config(dir.path(), "anthropic", &format!("{base}/")));
    assert_eq!(transport.name(), "anthropic");

    let completion = transport.complete("the system prompt", "the events").expect("answer");
    assert_eq!(completion.text, "hello world");
    assert_eq!((completion.input_tokens, completion.output_tokens), (12, 34));

    let request = &log.requests()[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.json(),
        json!({
            "model": "claude-haiku-4-5",
            "max_tokens": 2048,
            "system": "the system prompt",
            "messages": [{ "role": "user", "content": "the events" }],
        })
    );
}

#[test]
fn anthropic_maps_each_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (base, _log) = serve(error_responses());
    let config =
        LlmConfig { model: "claude-sonnet-4-5".into(), ..config(dir.path(), "anthropic", &base) };
    check_errors(build(&config).as_ref());
}

#[test]
fn anthropic_times_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (base, _log) = serve(vec![slow()]);
    let config = LlmConfig { timeout_seconds: 1, ..config(dir.path(), "anthropic", &base) };
    assert_eq!(build(&config).complete("s", "u"), Err(TransportError::Timeout));
}

// ---------------------------------------------------------------------------------------------
// OpenAI-compatible.

#[test]
fn openai_sends_a_chat_completion_and_reads_the_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let answer = json!({
        "choices": [{ "message": { "role": "assistant", "content": "the answer" } }],
        "usage": { "prompt_tokens": 7, "completion_tokens": 3 },
    });
    let (base, log) = serve(vec![canned(200, &answer.to_string())]);
    let transport = build(&config(dir.path(), "openai", &format!("{base}/v1")));
    assert_eq!(transport.name(), "openai-compatible");

    let completion = transport.complete("the system prompt", "the events").expect("answer");
    assert_eq!(completion.text, "the answer");
    assert_eq!((completion.input_tokens, completion.output_tokens), (7, 3));

    let request = &log.requests()[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(request.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.json(),
        json!({
            "model": "gpt-4o-mini",
            "messages": [
                { "role": "system", "content": "the system prompt" },
                { "role": "user", "content": "the events" },
            ],
            "temperature": 0,
        })
    );
}

#[test]
fn openai_on_a_local_endpoint_needs_no_key() {
    let answer = json!({ "choices": [{ "message": { "content": "local" } }] });
    let (base, log) = serve(vec![canned(200, &answer.to_string())]);
    let config = LlmConfig {
        provider: "openai".into(),
        base_url: base,
        model: "llama3.2".into(),
        api_key_env: NO_VAR.into(),
        ..LlmConfig::default()
    };
    let completion = build(&config).complete("s", "u").expect("answer");
    assert_eq!((completion.text.as_str(), completion.input_tokens), ("local", 0));
    let request = &log.requests()[0];
    assert_eq!(request.path, "/chat/completions");
    assert_eq!(request.header("authorization"), None);
    assert_eq!(request.json()["model"], "llama3.2");
}

#[test]
fn openai_maps_each_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (base, _log) = serve(error_responses());
    check_errors(build(&config(dir.path(), "openai", &base)).as_ref());
}

#[test]
fn openai_times_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (base, _log) = serve(vec![slow()]);
    let config = LlmConfig { timeout_seconds: 1, ..config(dir.path(), "openai", &base) };
    assert_eq!(build(&config).complete("s", "u"), Err(TransportError::Timeout));
}

// ---------------------------------------------------------------------------------------------
// CLI providers.

/// A fake agent CLI: records its arguments and `$AGENT_MEMORY_DISABLE`, then answers with its
/// stdin — unless a `sleep` or `fail` file beside it says otherwise.
const FAKE_CLI: &str = r#"#!/bin/sh
dir=$(dirname "$0")
printf '%s' "$*" > "$dir/args"
printf '%s' "$AGENT_MEMORY_DISABLE" > "$dir/disable"
input=$(cat)
if [ -e "$dir/sleep" ]; then exec sleep 3; fi
if [ -e "$dir/fail" ]; then echo "" >&2; echo "error: not logged in" >&2; echo more >&2; exit 3; fi
printf '{"echo": "%s"}\n' "$input"
"#;

fn fake_cli(dir: &Path, name: &str) -> String {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join(name);
    write(&path, FAKE_CLI);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.display().to_string()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).expect("recorded file")
}

/// One test for every CLI case: the scripts are all written before any is run, so no child is
/// forked while a script is still open for writing (which makes exec fail with ETXTBSY).
#[test]
fn cli_providers_run_the_agent_once_with_the_prompt_on_stdin() {
    let claude_dir = tempfile::tempdir().expect("tempdir");
    let codex_dir = tempfile::tempdir().expect("tempdir");
    let claude = fake_cli(claude_dir.path(), "claude");
    let codex = fake_cli(codex_dir.path(), "codex");
    let cli = |provider: &str, command: &str| LlmConfig {
        provider: provider.into(),
        command: command.into(),
        timeout_seconds: 1,
        ..LlmConfig::default()
    };

    let transport = build(&cli("claude-cli", &claude));
    assert_eq!(transport.name(), "claude-cli");
    let completion = transport.complete("SYSTEM", "USER").expect("answer");
    assert_eq!(completion.text, "{\"echo\": \"SYSTEM\n\nUSER\"}");
    assert_eq!((completion.input_tokens, completion.output_tokens), (0, 0));
    assert_eq!(read(&claude_dir.path().join("args")), "-p --output-format text");
    assert_eq!(read(&claude_dir.path().join("disable")), "1");

    let transport = build(&cli("codex-cli", &codex));
    let completion = transport.complete("SYSTEM", "USER").expect("answer");
    assert_eq!(completion.text, "{\"echo\": \"SYSTEM\n\nUSER\"}");
    assert_eq!(read(&codex_dir.path().join("args")), "exec --skip-git-repo-check -");
    assert_eq!(read(&codex_dir.path().join("disable")), "1");

    write(&codex_dir.path().join("fail"), "");
    let got = transport.complete("SYSTEM", "USER").expect_err("failure");
    assert_eq!(
        got,
        TransportError::Other(format!("{codex} exited with status 3: error: not logged in"))
    );

    write(&claude_dir.path().join("sleep"), "");
    let got = build(&cli("claude-cli", &claude)).complete("SYSTEM", "USER");
    assert_eq!(got, Err(TransportError::Timeout));

    let missing = claude_dir.path().join("no-such-claude").display().to_string();
    let got = build(&cli("claude-cli", &missing)).complete("SYSTEM", "USER").expect_err("missing");
    assert!(
        matches!(&got, TransportError::Other(m) if m.contains("was not found; install it or set [llm] command")),
        "{got:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// End to end through core's distiller.

struct Unlimited(Cell<u64>);

impl Budget for Unlimited {
    fn remaining(&self) -> u64 {
        u64::MAX
    }

    fn spend(&self, tokens: u64) {
        self.0.set(self.0.get() + tokens);
    }
}

fn claude_events(hooks: &[(&str, Value)]) -> Vec<StoredEvent> {
    let mut events = Vec::new();
    for (n, (name, payload)) in hooks.iter().enumerate() {
        let mut payload = payload.clone();
        payload["session_id"] = json!("s1");
        payload["cwd"] = json!("/w/app");
        let uid = format!("u{n}");
        let at = 1_796_000_000_000 + 1000 * i64::try_from(n).expect("small");
        let ctx = CaptureContext {
            uid: &uid,
            agent: "claude-code",
            event_name: name,
            received_at_ms: at,
        };
        match normalize(&ctx, &payload) {
            Ok(Normalized::Event(event)) => events.push(StoredEvent {
                id: i64::try_from(events.len() + 1).expect("small"),
                event: *event,
            }),
            other => panic!("{name}: {other:?}"),
        }
    }
    events
}

#[test]
fn the_distiller_gets_drafts_through_the_anthropic_transport() {
    let events = claude_events(&[
        ("UserPromptSubmit", json!({ "prompt": "fix the parser depth check" })),
        (
            "PostToolUse",
            json!({
                "tool_name": "Edit",
                "tool_input": { "file_path": "/w/app/src/parser.rs", "old_string": "x", "new_string": "depth" },
                "tool_response": { "filePath": "/w/app/src/parser.rs" },
            }),
        ),
    ]);
    let observations = json!({ "observations": [{
        "type": "bugfix",
        "title": "Parser depth check uses MAX_DEPTH in src/parser.rs",
        "subtitle": "The depth guard referenced an undefined variable",
        "facts": ["src/parser.rs compares depth with MAX_DEPTH"],
        "narrative": "The parser's depth check was fixed.",
        "concepts": ["problem-solution"],
        "files_read": [],
        "files_modified": ["src/parser.rs"],
        "source_event_ids": [1, 2],
    }]});
    let answer = json!({
        "content": [{ "type": "text", "text": observations.to_string() }],
        "usage": { "input_tokens": 900, "output_tokens": 100 },
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let (base, log) = serve(vec![canned(200, &answer.to_string())]);
    let transport = build(&config(dir.path(), "anthropic", &base));
    let budget = Unlimited(Cell::new(0));
    let distiller = LlmDistiller::new(transport.as_ref(), &budget).with_max_retries(0);
    let mode = mode::load("code", "en", None).expect("code mode");

    let (drafts, outcome) = distiller.observe_detailed(&events, &mode);
    assert_eq!(outcome.distiller, "llm:anthropic", "{outcome:?}");
    assert_eq!(outcome.fell_back_because, None);
    assert_eq!(budget.0.get(), 1000);
    assert_eq!(drafts.len(), 1);
    assert_eq!(drafts[0].title, "Parser depth check uses MAX_DEPTH in src/parser.rs");
    assert_eq!(drafts[0].kind, "bugfix");
    assert_eq!(drafts[0].source_event_ids, vec![1, 2]);
    let request = log.requests()[0].json();
    assert!(
        request["messages"][0]["content"]
            .as_str()
            .is_some_and(|u| u.contains("fix the parser depth check"))
    );
    assert!(request["system"].as_str().is_some_and(|s| s.contains("bugfix")));
}

/// A turn whose first test run failed behind `; echo done` (exit code 0, the failure only in
/// its output), fixed with `sed -i`, rerun and closed with the agent's answer, summarised
/// through an OpenAI-compatible endpoint: the model is told the real outcome of each run, the
/// change, and the closing answer as the agent's claim.
#[test]
fn the_model_is_told_each_runs_real_outcome_and_the_closing_answer() {
    let failing = "F\nFAIL: test_ten_percent (test_pricing.PricingTest.test_ten_percent)\n\
        Traceback (most recent call last):\n  File \"/w/app/test_pricing.py\", line 7\n\
        AssertionError: -1800 != 180\n\nFAILED (failures=1)\ndone";
    let bash = |command: &str, stdout: &str| {
        (
            "PostToolUse",
            json!({
                "tool_name": "Bash",
                "tool_input": { "command": command },
                "tool_response": { "stdout": stdout, "stderr": "", "interrupted": false },
            }),
        )
    };
    let events = claude_events(&[
        ("UserPromptSubmit", json!({ "prompt": "the discount test fails, fix apply_discount" })),
        bash("python3 -m unittest test_pricing 2>&1; echo done", failing),
        bash("sed -i 's/total \\* percent$/total * percent \\/ 100/' pricing.py", ""),
        bash("python3 -m unittest test_pricing", "Ran 1 test in 0.000s\n\nOK"),
        (
            "Stop",
            json!({ "stop_hook_active": false,
                "last_assistant_message": "Fixed: percent was used as a fraction; test_pricing passes." }),
        ),
    ]);
    let summary = json!({
        "request": "Fix apply_discount so the discount test passes.",
        "learned": ["apply_discount used percent as a fraction"],
        "completed": ["pricing.py divides by 100; python3 -m unittest test_pricing passed"],
        "next_steps": [],
        "files_modified": ["pricing.py"],
    });
    let answer = json!({ "choices": [{ "message": { "content": summary.to_string() } }] });
    let dir = tempfile::tempdir().expect("tempdir");
    let (base, log) = serve(vec![canned(200, &answer.to_string())]);
    let transport = build(&config(dir.path(), "openai", &base));
    let budget = Unlimited(Cell::new(0));
    let distiller = LlmDistiller::new(transport.as_ref(), &budget).with_max_retries(0);
    let mode = mode::load("code", "en", None).expect("code mode");

    let (draft, outcome) = distiller.summarize_detailed(&events, &mode);
    assert_eq!(outcome.distiller, "llm:openai-compatible", "{outcome:?}");
    assert_eq!(draft.learned, ["apply_discount used percent as a fraction"]);
    assert_eq!(draft.next_steps, Vec::<String>::new());

    let request = log.requests()[0].json();
    let system = request["messages"][0]["content"].as_str().expect("system prompt");
    assert!(system.contains("A command whose run is marked FAILED is never completed"), "{system}");
    assert!(system.contains("Never restate the request as a next step"), "{system}");
    let user = request["messages"][1]["content"].as_str().expect("user message");
    for expected in [
        "command: python3 -m unittest test_pricing 2>&1; echo done\noutcome: FAILED\n\
         error line: AssertionError: -1800 != 180",
        "changed: pricing.py\nput in: total * percent / 100",
        "command: python3 -m unittest test_pricing\noutcome: passed",
        "closing answer (the agent's own words, a claim):\n\
         Fixed: percent was used as a fraction; test_pricing passes.",
    ] {
        assert!(user.contains(expected), "{expected:?} in:\n{user}");
    }
}
