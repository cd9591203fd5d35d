//! Secrets handed to a hook are redacted before anything is stored: no byte of them may be
//! found anywhere in the database file, its write-ahead log, or the spool.

use crate::{assert_quiet_success, home, payload};

/// Real-looking secrets of the common kinds, built at run time so this file holds none.
fn secrets() -> Vec<(&'static str, String)> {
    let tail = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    vec![
        ("github", format!("ghp_{}", &tail[..36])),
        ("aws key id", format!("AKIA{}", "QWERTYUIOPASDFGH")),
        ("anthropic", format!("sk-ant-api03-{tail}{tail}-AA")),
        ("openai", format!("sk-proj-{tail}{tail}")),
        ("slack", format!("xoxb-123456789012-1234567890123-{}", &tail[..24])),
        ("stripe", format!("sk_live_{}", &tail[..24])),
        ("google", format!("AIza{}", &tail[..35])),
        ("gitlab", format!("glpat-{}", &tail[..20])),
        ("jwt", format!("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.{}", &tail[..30])),
        ("url password", "hunter2-horse-battery".to_owned()),
        ("env password", "Sup3rS3cretValue!".to_owned()),
    ]
}

#[test]
fn no_secret_byte_reaches_the_store() {
    let home = home();
    let secrets = secrets();
    let mut text = String::from("here is some config:\n");
    for (name, secret) in &secrets {
        match *name {
            "url password" => text.push_str(&format!(
                "DATABASE_URL=postgres://admin:{secret}@db.internal:5432/app\n"
            )),
            "env password" => text.push_str(&format!("DB_PASSWORD={secret}\n")),
            _ => text.push_str(&format!("{name}: {secret}\n")),
        }
    }
    let pem = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ{}\n-----END OPENSSH PRIVATE KEY-----",
        "PRIVATEKEYBODYxyz"
    );
    let prompt =
        payload("s-secrets", "UserPromptSubmit", "/tmp", serde_json::json!({ "prompt": text }));
    assert_quiet_success(&home.hook("claude-code", "UserPromptSubmit", &prompt));
    let tool = payload(
        "s-secrets",
        "PostToolUse",
        "/tmp",
        serde_json::json!({
            "tool_name": "Bash",
            "tool_input": {"command": format!("curl -H 'Authorization: Bearer {}' https://api.example.com", secrets[0].1)},
            "tool_response": {"stdout": format!("{text}\n{pem}"), "stderr": ""},
            "tool_use_id": "toolu_s",
        }),
    );
    assert_quiet_success(&home.hook("claude-code", "PostToolUse", &tool));
    // A third event through the spool path: the spool must hold no secret either.
    let (out, spooled) = crate::hook_while_locked(&home, "codex", "UserPromptSubmit", &prompt);
    assert_quiet_success(&out);
    assert!(!spooled.is_empty(), "the event was spooled");
    let spooled = spooled.concat();
    home.ok(&["recover"]);

    let mut haystack = spooled;
    for suffix in ["", "-wal", "-shm"] {
        let path = format!("{}{suffix}", home.db_path().display());
        haystack.extend(std::fs::read(&path).unwrap_or_default());
    }
    for (name, secret) in &secrets {
        assert!(
            !contains(&haystack, secret.as_bytes()),
            "{name} secret found in the store's bytes"
        );
    }
    assert!(!contains(&haystack, b"PRIVATEKEYBODYxyz"), "private key body found");
    let stored: String = crate::db(&home)
        .query_row("SELECT group_concat(body, '\n') FROM events", [], |r| r.get(0))
        .expect("bodies");
    assert!(stored.contains("[REDACTED:"), "{stored}");
    assert!(
        stored.contains("DB_PASSWORD="),
        "the key stays readable, only the value goes: {stored}"
    );
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
