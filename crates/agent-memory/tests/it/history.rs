//! Day zero: the sessions agents wrote before agent-memory, listed and imported through the
//! real binary from their own files under a temporary HOME: idempotent, resumable, redacted,
//! dated at the source, and never doubling what the hooks captured.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use agent_memory_testkit::TestHome;
use agent_memory_testkit::sessions::{HookCall, Places, replay_calls};

use serde_json::{Value, json};

use crate::{assert_quiet_success, count, db, home, payload};

const SESSION: &str = "0b7e2a10-5c1f-4f60-9d55-6f3c1e2a9b41";
const CWD: &str = "/home/dev/work/shop";

/// The agents' own variables, pointed inside the test's HOME so nothing of the machine's
/// history is read.
fn cmd(home: &TestHome, args: &[&str]) -> std::process::Output {
    let user = home.user_home();
    let mut cmd = home.cmd();
    cmd.args(args)
        .env("XDG_CONFIG_HOME", user.join(".config"))
        .env("XDG_DATA_HOME", user.join(".local/share"));
    for var in ["CODEX_HOME", "HERMES_HOME", "COPILOT_HOME", "CLAUDE_CONFIG_DIR"] {
        cmd.env_remove(var);
    }
    cmd.output().expect("run agent-memory")
}

fn json_of(home: &TestHome, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = cmd(home, &all);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{args:?} printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stdout))
    })
}

/// Where Claude Code keeps the session of `cwd`.
fn transcript(home: &TestHome, cwd: &str, session: &str) -> PathBuf {
    let dir = home.user_home().join(".claude/projects").join(cwd.replace('/', "-"));
    std::fs::create_dir_all(&dir).expect("transcript folder");
    dir.join(format!("{session}.jsonl"))
}

/// 2026-03-02T10:00:00Z, when the sessions here begin unless a test says otherwise.
const T0: i64 = 1_772_445_600_000;

/// A transcript line `second`s after `T0`.
fn line(kind: &str, uuid: &str, second: i64, extra: Value) -> String {
    let at_ms = T0 + second * 1000;
    let mut line = json!({
        "type": kind, "uuid": uuid, "sessionId": SESSION, "cwd": CWD,
        "timestamp": agent_memory_core::time::format_rfc3339(at_ms), "isSidechain": false,
    });
    if let (Some(line), Value::Object(extra)) = (line.as_object_mut(), extra) {
        line.extend(extra);
    }
    line.to_string()
}

fn prompt(uuid: &str, second: i64, text: &str) -> String {
    line("user", uuid, second, json!({"message": {"role": "user", "content": text}}))
}

fn shell(call: &str, second: i64, command: &str, stdout: &str) -> [String; 2] {
    [
        line(
            "assistant",
            &format!("a-{call}"),
            second,
            json!({"message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": command}}
            ]}}),
        ),
        line(
            "user",
            &format!("r-{call}"),
            second + 1,
            json!({"message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": stdout}
            ]}, "toolUseResult": {"stdout": stdout, "stderr": "", "interrupted": false}}),
        ),
    ]
}

fn answer(uuid: &str, second: i64, text: &str) -> [String; 2] {
    [
        line(
            "assistant",
            uuid,
            second,
            json!({"message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}),
        ),
        line(
            "system",
            &format!("stop-{uuid}"),
            second + 1,
            json!({"subtype": "stop_hook_summary"}),
        ),
    ]
}

fn append(path: &Path, lines: &[String]) {
    let mut file =
        std::fs::OpenOptions::new().create(true).append(true).open(path).expect("open transcript");
    for line in lines {
        writeln!(file, "{line}").expect("write transcript");
    }
}

/// Every text the store holds, for looking for what must not be there.
fn everything(home: &TestHome) -> String {
    let conn = db(home);
    let mut stmt = conn
        .prepare("SELECT kind || ' ' || summary || ' ' || body || ' ' || payload FROM events ORDER BY at, id")
        .expect("prepare");
    let rows = stmt.query_map([], |r| r.get::<_, String>(0)).expect("query");
    rows.map(|r| r.expect("row")).collect::<Vec<_>>().join("\n")
}

fn kinds(home: &TestHome) -> Vec<String> {
    let conn = db(home);
    let mut stmt = conn.prepare("SELECT kind FROM events ORDER BY at, id").expect("prepare");
    let rows = stmt.query_map([], |r| r.get::<_, String>(0)).expect("query");
    rows.map(|r| r.expect("row")).collect()
}

#[test]
fn a_transcript_becomes_the_events_its_hooks_would_have_stored() {
    let home = home();
    let token = format!("ghp_{}", "Zq8Lm2Nx4Rt6Vy0Bc3Df5Gh7Jk9Pw1Sa4Ue6");
    let file = transcript(&home, CWD, SESSION);
    let mut lines = vec![prompt("u1", 1, "Why does checkout round the tax wrong?")];
    lines.extend(shell("toolu_1", 2, "python3 tax.py", &format!("rate 0.0825 token {token}")));
    lines.extend(answer("a2", 5, "Rounding happened per item; it now rounds the total once."));
    lines.push(json!({"type": "hologram-v9", "sessionId": SESSION}).to_string());
    append(&file, &lines);
    // Cut mid-line, as a killed agent leaves it.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .and_then(|mut f| f.write_all(br#"{"type":"user","message":{"content":"half"#))
        .expect("cut line");

    let listed = json_of(&home, &["history"]);
    let claude = listed
        .as_array()
        .and_then(|a| a.iter().find(|s| s["agent"] == "claude-code"))
        .cloned()
        .expect("claude-code listed");
    assert_eq!((claude["sessions"].as_u64(), claude["in_store"].as_u64()), (Some(1), Some(0)));
    assert_eq!(claude["projects"], 1, "{claude}");

    let first = json_of(&home, &["history", "import", "--no-work"]);
    let report = first.as_array().and_then(|a| a.iter().find(|r| r["agent"] == "claude-code"));
    let report = report.cloned().expect("a claude-code report");
    assert_eq!(report["sessions"], 1, "{report}");
    assert_eq!(report["events"], 4, "session start, prompt, tool use, stop: {report}");
    assert_eq!((report["unknown"].as_u64(), report["malformed"].as_u64()), (Some(1), Some(1)));
    assert_eq!(kinds(&home), ["session_start", "prompt", "tool_use", "stop"]);

    let stored = everything(&home);
    assert!(!stored.contains(&token), "a secret printed in a transcript is never stored");
    assert!(stored.contains("python3 tax.py") && stored.contains("rounds the total once"));
    // Dated at the source and filed under the session's own project.
    let at: i64 = count(&home, "SELECT min(at) FROM events");
    assert_eq!(at, 1_772_445_601_000, "2026-03-02T10:00:01Z");
    let project: String = db(&home)
        .query_row("SELECT p.name FROM projects p JOIN events e ON e.project_id = p.id", [], |r| {
            r.get(0)
        })
        .expect("project");
    assert_eq!(project, "shop");

    // A second import reads nothing; the listing now counts the session as stored.
    let second = json_of(&home, &["history", "import", "--no-work"]);
    let again = second.as_array().and_then(|a| a.iter().find(|r| r["agent"] == "claude-code"));
    let again = again.cloned().expect("a report");
    assert_eq!((again["events"].as_u64(), again["unchanged"].as_u64()), (Some(0), Some(1)));
    assert_eq!(count(&home, "SELECT count(*) FROM events"), 4);
    let listed = json_of(&home, &["history"]);
    assert!(listed.to_string().contains("\"in_store\":1"), "{listed}");

    // The session goes on: only what it gained is stored.
    let mut more = vec![prompt("u3", 20, "Add a test for it")];
    more.extend(answer("a4", 22, "Added test_total_rounding."));
    append(&file, &["".to_owned()]);
    append(&file, &more);
    let third = json_of(&home, &["history", "import", "--no-work"]);
    assert!(third.to_string().contains("\"events\":2"), "prompt and stop: {third}");
    assert_eq!(count(&home, "SELECT count(*) FROM events"), 6);

    // The imported history is found like captured history.
    let hits = home.json(&["search", "tax rounding"]);
    assert!(hits["hits"].as_array().is_some_and(|h| !h.is_empty()), "{hits}");
}

#[test]
fn what_the_hooks_captured_is_not_doubled() {
    let home = home();
    let file = transcript(&home, CWD, SESSION);
    // A turn an hour ago, before agent-memory was wired.
    let now = agent_memory_core::time::now_ms();
    let ago = |seconds: i64| (now - seconds * 1000 - T0) / 1000;
    let mut lines = vec![prompt("u1", ago(3600), "Which queue do we use for emails?")];
    lines.extend(answer("a1", ago(3590), "Redis streams, see queue.py."));
    append(&file, &lines);
    // Then it was, and the hooks captured the next turn as the agent wrote it down.
    let live = |event: &str, extra: Value| {
        let mut body: Value =
            serde_json::from_slice(&payload(SESSION, event, CWD, extra)).expect("a payload");
        body["transcript_path"] = json!(file.display().to_string());
        assert_quiet_success(&home.hook("claude-code", event, body.to_string().as_bytes()));
    };
    live("UserPromptSubmit", json!({"prompt": "Move the email queue to NATS"}));
    let mut turn = vec![prompt("u2", ago(0), "Move the email queue to NATS")];
    turn.extend(answer("a2", ago(-1), "Moved to NATS."));
    append(&file, &turn);
    live("Stop", json!({"last_assistant_message": "Moved to NATS."}));
    assert_eq!(count(&home, "SELECT count(*) FROM events"), 2);

    let report = json_of(&home, &["history", "import", "--no-work"]);
    assert!(report.to_string().contains("\"already\":2"), "{report}");
    let prompts: Vec<String> = {
        let conn = db(&home);
        let mut stmt =
            conn.prepare("SELECT body FROM events WHERE kind = 'prompt' ORDER BY at").expect("sql");
        let rows = stmt.query_map([], |r| r.get(0)).expect("query");
        rows.map(|r| r.expect("row")).collect()
    };
    assert_eq!(
        prompts,
        ["Which queue do we use for emails?", "Move the email queue to NATS"],
        "the first turn from the transcript, the second once, from the hooks"
    );
    assert_eq!(count(&home, "SELECT count(*) FROM sessions"), 1);
}

#[test]
fn since_and_project_narrow_what_is_imported() {
    let home = home();
    let old = transcript(&home, CWD, SESSION);
    append(&old, &[prompt("u1", 1, "an old question about the shop")]);
    let other = "/home/dev/work/blog";
    let path = transcript(&home, other, "5d1e0c7a-1111-4b3c-8d2e-0a9f8e7d6c5b");
    let mut blog =
        line("user", "b1", 1, json!({"message": {"content": "a question about the blog"}}));
    blog = blog.replace(SESSION, "5d1e0c7a-1111-4b3c-8d2e-0a9f8e7d6c5b").replace(CWD, other);
    append(&path, &[blog]);

    let report = json_of(&home, &["history", "import", "--no-work", "--project", other]);
    assert!(report.to_string().contains("\"events\":2"), "the blog's start and prompt: {report}");
    let stored = everything(&home);
    assert!(stored.contains("the blog") && !stored.contains("the shop"), "{stored}");

    // Nothing of either is from the last day.
    let report = json_of(&home, &["history", "import", "--no-work", "--since", "1d"]);
    assert!(report.to_string().contains("\"events\":0"), "{report}");
    assert!(!everything(&home).contains("the shop"));
}

#[test]
fn an_unknown_agent_is_refused_with_the_names_to_use() {
    let home = home();
    let out = cmd(&home, &["history", "import", "vim"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown agent `vim`") && err.contains("claude-code"), "{err}");
}

/// Copies a recorded HOME into a test's HOME.
fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read fixture folder").flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).expect("create folder");
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy fixture");
        }
    }
}

/// What a store holds of what was said and done, comparable across stores: each prompt's and
/// stop's text in order, each tool call's tool and call id, sorted, the observations distilled
/// from them, and the sessions (a hook stamps a call
/// when it runs, a transcript when the agent logged it, and some calls only the transcript
/// reports, so where a call falls among its neighbours differs).
fn said_and_done(home: &TestHome) -> Vec<String> {
    let conn = db(home);
    let mut stmt = conn
        .prepare(
            "SELECT kind, coalesce(tool, ''), coalesce(json_extract(payload, '$.call_id'), ''),
                    body FROM events WHERE kind IN ('prompt', 'tool_use', 'stop') ORDER BY at, id",
        )
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| {
            let (kind, tool, call, body): (String, String, String, String) =
                (r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?);
            Ok(match kind.as_str() {
                "tool_use" => format!("~ tool {tool} {call}"),
                _ => format!("{kind}: {}", body.trim()),
            })
        })
        .expect("query");
    let (mut tools, mut said): (Vec<String>, Vec<String>) =
        rows.map(|r| r.expect("row")).partition(|r| r.starts_with('~'));
    tools.sort();
    said.extend(tools);
    // Distilled alike: the same observations.
    let mut stmt =
        conn.prepare("SELECT kind || ': ' || title FROM observations ORDER BY 1").expect("sql");
    let observations = stmt.query_map([], |r| r.get::<_, String>(0)).expect("query");
    said.extend(observations.map(|r| format!("observation {}", r.expect("row"))));
    // The same sessions, by the agent's own ids: the ids the hooks see.
    let mut stmt =
        conn.prepare("SELECT agent || ' ' || source_id FROM sessions ORDER BY 1").expect("sql");
    let sessions = stmt.query_map([], |r| r.get::<_, String>(0)).expect("query");
    said.extend(sessions.map(|r| format!("session {}", r.expect("row"))));
    said
}

/// For each agent's recorded real session (`fixtures/history/<name>/`: the hook calls and the
/// agent's own history files after the session), `history import` of the files stores the same
/// prompts, tool calls and closing answers as replaying the hooks did.
#[test]
fn every_recorded_agents_history_reads_as_its_hooks() {
    let fixtures = agent_memory_testkit::fixtures_dir().join("history");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&fixtures)
        .expect("fixtures/history")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("hooks.jsonl").is_file())
        .collect();
    names.sort();
    assert!(names.len() >= 6, "a recording per agent: {names:?}");
    let mut failures = Vec::new();
    for dir in names {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // The hooks, replayed into one store as the quality corpus is (the transcript lines
        // agent-memory reads at a hook appended before it), on one clock.
        let hooked = home();
        let hooks = std::fs::read_to_string(dir.join("hooks.jsonl")).expect("hooks.jsonl");
        let calls: Vec<HookCall> = hooks
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|line| {
                let call: Value = serde_json::from_str(line).expect("a hook line");
                let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
                HookCall {
                    agent: text(&call["agent"]),
                    event: text(&call["event"]),
                    payload: call["payload"].to_string(),
                    transcript: call["transcript"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(Value::to_string)
                        .collect(),
                }
            })
            .collect();
        let user = hooked.user_home().to_path_buf();
        let places = Places { project: user.join("work/proj"), home: user, salt: 0 };
        replay_calls(&hooked, &name, &calls, &places, None);
        hooked.ok(&["work"]);
        // The files alone, imported into another.
        let imported = home();
        copy_tree(&dir.join("home"), imported.user_home());
        json_of(&imported, &["history", "import", "--no-work"]);
        // Each event's uid names its session by the id the agent's hooks send.
        let misnamed = count(
            &imported,
            "SELECT count(*) FROM events e JOIN sessions s ON s.id = e.session_id
             WHERE e.uid NOT LIKE s.agent || '-history-' || s.source_id || '-%'",
        );
        assert_eq!(misnamed, 0, "{name}: uids without their session");
        imported.ok(&["work"]);
        let (want, got) = (said_and_done(&hooked), said_and_done(&imported));
        if want != got {
            failures.push(format!("{name}:\n  hooks:   {want:#?}\n  history: {got:#?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What a person asked an agent to remember months ago is offered for review, marked as drawn
/// from history, never memory at once (later sessions may have overruled it); `review` takes
/// such candidates a whole origin at a time.
#[test]
fn what_history_says_waits_for_review_and_is_reviewed_in_bulk() {
    let home = home();
    let file = transcript(&home, CWD, SESSION);
    let mut lines = vec![prompt("u1", 1, "Remember: we always deploy the shop with make ship.")];
    lines.extend(answer("a1", 3, "Noted: deploys go through make ship."));
    append(&file, &lines);
    json_of(&home, &["history", "import", "--no-work"]);
    home.ok(&["work"]);

    let all = home.json(&["memories", "--all"]);
    let kept = all
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["text"].as_str().is_some_and(|t| t.contains("make ship")))
        .cloned()
        .unwrap_or_else(|| panic!("no memory of the deploy rule: {all:#}"));
    assert_eq!(kept["status"], "candidate", "{kept}");
    assert_eq!(kept["origin"], "history:claude-code", "{kept}");

    let listed = home.json(&["review", "--from", "history"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    let none = home.json(&["review", "--from", "distilled"]);
    assert!(none.as_array().is_some_and(|a| a.iter().all(|c| c.to_string().contains("distilled"))));

    let approved = home.json(&["review", "--approve", "all", "--from", "history"]);
    assert_eq!(approved.as_array().map(Vec::len), Some(1), "{approved}");
    assert_eq!(approved[0]["status"], "active", "{approved}");
    assert_eq!(home.json(&["review", "--from", "history"]).as_array().map(Vec::len), Some(0));
}

/// `sessions` short Claude Code transcripts of a prompt and an answer each: a session start, a
/// prompt and a stop a session once imported.
fn write_sessions(home: &TestHome, sessions: i64) {
    for s in 0..sessions {
        let id = format!("{s:08x}-0000-4000-8000-000000000000");
        let file = transcript(home, CWD, &id);
        let mut lines = vec![prompt(&format!("u{s}"), 1, &format!("question number {s}"))];
        lines.extend(answer(&format!("a{s}"), 3, &format!("answer number {s}")));
        let lines: Vec<String> = lines.iter().map(|l| l.replace(SESSION, &id)).collect();
        append(&file, &lines);
    }
}

/// An import killed half way loses and doubles nothing: the next one goes on where it stopped.
#[test]
fn an_interrupted_import_goes_on_where_it_stopped() {
    let home = home();
    let sessions = 300;
    write_sessions(&home, sessions);
    let user = home.user_home();
    let mut cmd = home.cmd();
    cmd.args(["history", "import", "--no-work"])
        .env("XDG_DATA_HOME", user.join(".local/share"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("start an import");
    // Killed whenever it happens to be: before, during or after its first batches.
    std::thread::sleep(std::time::Duration::from_millis(150));
    let _ = child.kill();
    let _ = child.wait();
    let report = json_of(&home, &["history", "import", "--no-work"]);
    assert!(report.to_string().contains("\"errors\":[]"), "{report}");
    // A session start, a prompt and a stop a session, each once.
    assert_eq!(count(&home, "SELECT count(*) FROM events"), 3 * sessions);
    assert_eq!(count(&home, "SELECT count(DISTINCT uid) FROM events"), 3 * sessions);
    assert_eq!(count(&home, "SELECT count(*) FROM history_read"), sessions);
}

/// A history of several batches is stored whole and once: each written batch goes back to the
/// reading side to be freed while it reads on, and none of it is lost or written twice.
#[test]
fn a_history_of_many_batches_is_stored_once() {
    let home = home();
    let sessions = 1_400;
    write_sessions(&home, sessions);
    let first = json_of(&home, &["history", "import", "--no-work"]);
    assert!(first.to_string().contains("\"errors\":[]"), "{first}");
    // A session start, a prompt and a stop a session: 4,200 events, more than two batches.
    assert_eq!(count(&home, "SELECT count(*) FROM events"), 3 * sessions);
    assert_eq!(count(&home, "SELECT count(DISTINCT uid) FROM events"), 3 * sessions);
    assert_eq!(
        count(&home, "SELECT count(*) FROM events_fts WHERE events_fts MATCH 'answer'"),
        sessions
    );
    assert_eq!(count(&home, "SELECT count(*) FROM history_read"), sessions);
    json_of(&home, &["history", "import", "--no-work"]);
    assert_eq!(count(&home, "SELECT count(*) FROM events"), 3 * sessions);
}

/// `install` says what history it found and, asked to, imports it; without a terminal it only
/// says how, and `--no-import-history` keeps it quiet.
#[test]
fn install_offers_the_history_it_finds() {
    let home = home();
    append(&transcript(&home, CWD, SESSION), &[prompt("u1", 1, "an early question")]);
    let notes = |report: &Value| report["notes"].to_string();

    let told = json_of(&home, &["install", "claude-code"]);
    assert!(notes(&told).contains("agent-memory history import"), "{told}");
    assert!(!home.db_path().exists(), "nothing imported unasked");

    let quiet = json_of(&home, &["install", "claude-code", "--no-import-history"]);
    assert!(!notes(&quiet).contains("history"), "{quiet}");

    let imported = json_of(&home, &["install", "claude-code", "--import-history"]);
    assert!(notes(&imported).contains("imported 2 events from 1 session of"), "{imported}");
    assert_eq!(count(&home, "SELECT count(*) FROM events"), 2, "the session start and prompt");
}
