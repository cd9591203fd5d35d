//! Reactions through the real binary: a `[[reactions]]` entry runs once per item it matches,
//! from the work pass and never from a hook; the item reaches the action only as data (JSON on
//! a command's stdin, a line in a file, a POST body), however hostile its text; a failing or
//! hanging action is stopped, recorded and shown in `status`, and not run again.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::{assert_quiet_success, home, payload};
use agent_memory_testkit::TestHome;

#[allow(clippy::disallowed_methods)]
fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, text).expect("write");
}

/// The command a reaction runs: it keeps its arguments, its standard input and the reaction's
/// name beside `out`.
const RECORD: &str = r#"import json, os, sys
out = sys.argv[1]
with open(out + ".stdin", "a") as f:
    f.write(sys.stdin.read())
with open(out + ".argv", "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
with open(out + ".name", "a") as f:
    f.write(os.environ.get("AGENT_MEMORY_REACTION", "") + "\n")
"#;

/// A command a person might paste as a test run, with a shell's substitutions in it.
const HOSTILE: &str = "cargo test -p parser -- \"$(touch PWNED)\" `touch PWNED2`";

/// A Claude Code session that fixes the parser with a hostile command line.
fn hostile_fix(home: &TestHome, session: &str) {
    let cwd = "/w/app";
    let steps = [
        ("SessionStart", json!({"source": "startup"})),
        ("UserPromptSubmit", json!({"prompt": "the parser test fails, please fix it"})),
        (
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_use_id": "t1", "tool_input": {"command": HOSTILE},
                   "error": "Exit code 101\nerror[E0425]: cannot find value `depth` in this scope\n --> src/parser.rs:42:9"}),
        ),
        (
            "PostToolUse",
            json!({"tool_name": "Edit", "tool_use_id": "t2",
                   "tool_input": {"file_path": "/w/app/src/parser.rs", "old_string": "depth + 1", "new_string": "self.depth + 1"},
                   "tool_response": {"filePath": "/w/app/src/parser.rs"}}),
        ),
        (
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": "t3", "tool_input": {"command": HOSTILE},
                   "tool_response": {"stdout": "test result: ok. 12 passed; 0 failed", "stderr": "", "interrupted": false}}),
        ),
        ("Stop", json!({"stop_hook_active": false, "last_assistant_message": "Fixed the parser."})),
    ];
    for (event, extra) in steps {
        let out = home.hook("claude-code", event, &payload(session, event, cwd, extra));
        if event == "SessionStart" || event == "UserPromptSubmit" {
            assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
        } else {
            assert_quiet_success(&out);
        }
    }
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_owned).collect()
}

#[test]
fn a_reaction_runs_once_per_item_from_the_work_pass_with_the_item_only_as_data() {
    let home = home();
    let dir = home.user_home().join("reacting");
    write(&dir.join("record.py"), RECORD);
    let got = dir.join("got");
    let config = format!(
        r#"[[reactions]]
name = "fixes"
types = ["bugfix"]
run = ["python3", "{script}", "{got}"]

[[reactions]]
name = "decisions"
on = ["memory"]
types = ["decision"]
append = "~/notes/DECISIONS.md"

[[reactions]]
name = "broken"
types = ["bugfix"]
run = ["false"]

[[reactions]]
name = "slow"
types = ["bugfix"]
run = ["sleep", "30"]
timeout_ms = 300

[[reactions]]
name = "unfinished"
types = ["bugfix"]
"#,
        script = dir.join("record.py").display(),
        got = got.display(),
    );
    write(&home.home().join("config.toml"), &config);
    // The first pass starts every reaction at what is stored then.
    home.ok(&["work"]);

    hostile_fix(&home, "fix-1");
    assert!(lines(&got.with_extension("stdin")).is_empty(), "a hook runs no reaction");
    home.ok(&["work"]);
    let received = lines(&got.with_extension("stdin"));
    assert_eq!(received.len(), 1, "{received:#?}");
    let item: Value = serde_json::from_str(&received[0]).expect("the item as JSON");
    assert_eq!(
        (item["reaction"].as_str(), item["kind"].as_str()),
        (Some("fixes"), Some("observation"))
    );
    assert_eq!(item["type"], "bugfix", "{item}");
    assert!(received[0].contains("$(touch PWNED)"), "the hostile text arrives as data: {item}");
    assert_eq!(lines(&got.with_extension("argv")), [format!("[{:?}]", got.display().to_string())]);
    assert_eq!(lines(&got.with_extension("name")), ["fixes"]);
    for dir in [home.user_home(), &dir, &home.home()] {
        for name in ["PWNED", "PWNED2"] {
            assert!(
                !dir.join(name).exists(),
                "captured text ran as a command in {}",
                dir.display()
            );
        }
    }

    // A failing and a hanging action are stopped and recorded; neither runs again, and no
    // action runs twice for one item.
    home.ok(&["work"]);
    assert_eq!(lines(&got.with_extension("stdin")).len(), 1);
    let status = home.json(&["status"]);
    let reactions = &status["reactions"];
    assert_eq!(
        (reactions["fired"].as_i64(), reactions["failed"].as_i64()),
        (Some(1), Some(2)),
        "{status}"
    );
    let text = home.ok(&["status"]);
    assert!(text.contains("reactions  5 configured; last 24 h: 1 ran, 2 failed"), "{text}");
    assert!(text.contains("not run: reaction \"unfinished\" needs exactly one of"), "{text}");
    let listed = home.ok(&["reactions", "list"]);
    assert!(
        listed.contains("slow: on each observation and memory with types bugfix, runs sleep 30"),
        "{listed}"
    );
    assert!(listed.contains("did not finish within 0.3 s"), "{listed}");
    assert!(listed.contains("false exited with status 1"), "{listed}");

    // A decision remembered later is appended to the notes file as one line.
    home.ok(&[
        "remember",
        "We release on Tuesdays,\nnever on Fridays",
        "--global",
        "--kind",
        "decision",
    ]);
    home.ok(&["work"]);
    home.ok(&["work"]);
    let notes = lines(&home.user_home().join("notes/DECISIONS.md"));
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert!(notes[0].starts_with("- 20") && notes[0].contains(" decision (m"), "{notes:#?}");
    assert!(notes[0].ends_with("We release on Tuesdays, never on Fridays"), "{notes:#?}");

    // `reactions test` shows what would match, running nothing.
    let tested = home.json(&["reactions", "test"]);
    let fixes =
        tested.as_array().and_then(|all| all.iter().find(|m| m["reaction"] == "fixes")).cloned();
    let fixes = fixes.expect("the fixes reaction");
    assert_eq!(fixes["items"].as_array().map(Vec::len), Some(1), "{tested}");
    assert_eq!(lines(&got.with_extension("stdin")).len(), 1);
}

/// A local server that answers every request with 200 and keeps each body.
fn listener() -> (String, Arc<Mutex<Vec<String>>>) {
    let server = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/hook", server.local_addr().expect("addr"));
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&bodies);
    std::thread::spawn(move || {
        for stream in server.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut length = 0;
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                    break;
                }
                if let Some(value) = header.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            if let Ok(mut bodies) = kept.lock() {
                bodies.push(String::from_utf8_lossy(&body).into_owned());
            }
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    (url, bodies)
}

#[test]
fn a_reaction_posts_each_new_memory_once() {
    let home = home();
    let (url, bodies) = listener();
    write(
        &home.home().join("config.toml"),
        &format!("[[reactions]]\nname = \"chat\"\non = [\"memory\"]\npost = \"{url}\"\n"),
    );
    home.ok(&["remember", "Answer in short sentences", "--global"]);
    // Remembered before the reaction was first seen: it is not news to it.
    home.ok(&["work"]);
    home.ok(&["remember", "Releases are tagged on main", "--global"]);
    home.ok(&["work"]);
    home.ok(&["work"]);
    let bodies = bodies.lock().expect("bodies").clone();
    assert_eq!(bodies.len(), 1, "{bodies:#?}");
    let item: Value = serde_json::from_str(&bodies[0]).expect("a JSON body");
    assert_eq!((item["reaction"].as_str(), item["kind"].as_str()), (Some("chat"), Some("memory")));
    assert_eq!(item["memory"]["text"], "Releases are tagged on main", "{item}");
}
