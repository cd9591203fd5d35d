//! `--json` is safe for scripts: errors are JSON on stdout with a non-zero exit, a closed pipe
//! is success in every mode, and each noun keeps the one shape `docs/json.md` documents.

use std::process::Stdio;

#[test]
fn errors_under_json_are_json_on_stdout() {
    let home = crate::search::seeded();
    let cases: [(&[&str], &str, i32); 4] = [
        (&["search", "x", "--agent", "nosuch", "--json"], "bad_request", 1),
        (&["show", "x9", "--json"], "bad_request", 1),
        (&["show", "o999", "--json"], "not_found", 1),
        (&["search", "x", "--json", "--no-such-flag"], "bad_request", 2),
    ];
    for (args, code, exit) in cases {
        let out = home.run(args, b"");
        assert_eq!(
            out.status.code(),
            Some(exit),
            "{args:?}: {}",
            agent_memory_testkit::describe(&out)
        );
        let body: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{args:?} printed no JSON ({e}): {}", agent_memory_testkit::describe(&out))
        });
        assert_eq!(body["error"]["code"], code, "{args:?}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(!message.is_empty() && !message.contains("Usage:"), "{args:?}: {body}");
        assert_eq!(body.as_object().map(|o| o.len()), Some(1), "only the error: {body}");
    }
    // Without --json the same mistake stays a sentence on stderr, with nothing on stdout.
    let out = home.run(&["show", "x9"], b"");
    assert!(out.stdout.is_empty() && String::from_utf8_lossy(&out.stderr).contains("not an id"));
}

#[test]
fn a_closed_pipe_is_success_in_every_mode() {
    let home = crate::search::seeded();
    let commands: [&[&str]; 8] = [
        &["search", "支付"],
        &["search", "支付", "--json"],
        &["show", "e1", "e2", "e3"],
        &["show", "e1", "e2", "e3", "--json"],
        &["status"],
        &["status", "--json"],
        &["export"],
        &["config", "default"],
    ];
    for args in commands {
        let mut child = home
            .cmd()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        // Nobody reads: every write the child makes finds the pipe closed.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait");
        assert!(out.status.success(), "{args:?}: {}", agent_memory_testkit::describe(&out));
        assert!(out.stderr.is_empty(), "{args:?}: {}", agent_memory_testkit::describe(&out));
    }
}

#[test]
fn an_item_is_its_kind_and_its_fields_apart() {
    let home = crate::search::seeded();
    let shown = home.json(&["show", "e1"]);
    let item = &shown[0];
    let keys: Vec<&String> = item.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["item", "kind", "last_handed"], "{item}");
    assert!(item["last_handed"].is_null(), "an event is never handed: {item}");
    assert_eq!(item["kind"], "event");
    assert_eq!(item["item"]["event"]["kind"], "prompt", "the event's own kind stays inside");
}
