//! Secrets handed to a hook are redacted before anything is stored: no byte of them may be
//! found anywhere in the database file, its write-ahead log, or the spool.

use crate::{assert_quiet_success, home, payload};

/// The random part of the secrets below.
fn tail() -> &'static str {
    "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
}

/// Real-looking secrets of the common kinds, built at run time so this file holds none.
fn secrets() -> Vec<(&'static str, String)> {
    let tail = tail();
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

/// Secrets that only their surroundings give away, each with the line that carries it as a
/// person pastes it or a command prints it; built at run time as well.
fn secrets_in_context() -> Vec<(String, String)> {
    let tail = tail();
    let hex = "9f3c2b7a1e8d4c6b0a9f8e7d6c5b4a3928f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3";
    let uuid =
        format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32]);
    let line = |template: &str, secret: &str| (template.replace('#', secret), secret.to_owned());
    vec![
        line("VAULT_TOKEN=#", &format!("hvs.{tail}")),
        line("DB_PASSWORD=#", &format!("Summer.{}", &tail[..10])),
        line("export API_TOKEN=#", &format!("abc.{}", &tail[2..20])),
        line(
            "User name,Password,Access key ID,Secret access key\nci,#,AKIA0000000000000000,x\n",
            &format!("Pw{}", &tail[..10]),
        ),
        line("SLACK_APP_TOKEN=#", &format!("xapp-1-A0{}-1234567890-{}", "QWERTY12", &hex[..40])),
        line("machine github.com login octocat password #", &format!("Np{}", &tail[4..16])),
        line("machine api.heroku.com\n  login me@example.com\n  password #\n", &uuid),
        line(
            "kind: Secret\ndata:\n  .dockerconfigjson: #\n",
            &format!("eyJhdXRocyI6{}", &tail[..30]),
        ),
        line("{\"sid\": \"#\", \"status\": \"active\"}", &format!("SK{}", &hex[..32])),
        line("auth=(\"api\", \"#\")", &format!("{}-{}-{}", &hex[..32], &hex[32..40], &hex[40..48])),
        line("Here is the deploy key. API key: #", &uuid.replace('9', "7")),
        line("client.run('#')", &format!("MTEyMjMzNDQ1NTY2Nzc4ODk5.GhT9xQ.{}", &tail[..34])),
        line(
            "#",
            &format!(
                "AGE-SECRET-KEY-1{}",
                "QFNWDYJ8ZWLHNSPRU3TDVVCEMMUC2PJMKGTA3PSM9PFZXA7YDJEQ9QL6HR"
            ),
        ),
        line("阿里云 AccessKeySecret：#，请勿外传", &format!("Ak{}", &tail[6..30])),
        line(
            "tccli cvm DescribeInstances --secretId # --region ap-guangzhou",
            &format!("AKID{}", &tail[..32]),
        ),
        line("mysql -u root -p# shop", &format!("My{}", &tail[8..20])),
        line("sshpass -p # ssh pi@10.0.0.5", &format!("Ss{}", &tail[10..22])),
        line("docker login -u ci -p # ghcr.io", &format!("Dk{}", &tail[12..24])),
        line("auth: { user: 'a@example.com', pass: '#' }", &format!("Nm{}", &tail[14..26])),
        line("{\"url\": \"postgres:\\/\\/app:#@db\\/app\"}", &format!("Pg{}", &tail[16..28])),
        line("Enter password: #", &format!("En{}!", &tail[18..28])),
        line("NEW_RELIC=#", &format!("NRAK-{}", "Q3ZC7X9VB2NM4LK8JH6GF5DS1AP")),
        line("grafana: #", &format!("glsa_{}_{}", &tail[..32], &hex[..8])),
        line("password=abc&#", &tail[3..15]),
        line("#", &format!("dop_v1_{hex}")),
        line("#", &format!("{}-{}-{}", &hex[16..48], &hex[..8], &hex[8..16])),
        line("#", &format!("MTA4NzY1NDMyMTA5ODc2NTQzMg.GhIjKl.{}", &tail[..34])),
        line("| name | api_key |\n|------|---------|\n| prod | # |", &tail[3..27]),
        line("Credentials(\"AKIAIOSFODNN7EXAMPLE\", \"#\")", &tail[5..29]),
        line("$ doctl auth token\n#\n$ ls", &tail[7..31]),
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
    let contextual = secrets_in_context();
    for (line, _) in &contextual {
        text.push_str(line);
        text.push('\n');
    }
    let pem = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ{}\n-----END OPENSSH PRIVATE KEY-----",
        "PRIVATEKEYBODYxyz"
    );
    let prompt =
        payload("s-secrets", "UserPromptSubmit", "/tmp", serde_json::json!({ "prompt": text }));
    assert_quiet_success(&home.hook("claude-code", "UserPromptSubmit", &prompt));
    // A private key as a file listing shows it: every line numbered.
    let listing: String =
        pem.lines().enumerate().map(|(n, line)| format!("{:>6}→{line}\n", n + 1)).collect();
    let read = payload(
        "s-secrets",
        "PostToolUse",
        "/tmp",
        serde_json::json!({
            "tool_name": "Read",
            "tool_input": {"file_path": "/tmp/notes.txt"},
            "tool_response": {"type": "text", "file": {"filePath": "/tmp/notes.txt", "content": listing}},
            "tool_use_id": "toolu_r",
        }),
    );
    assert_quiet_success(&home.hook("claude-code", "PostToolUse", &read));
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
    // A command that prints a token, and the token in the output: two leaves of one payload.
    let printed = &tail()[9..33];
    let auth = payload(
        "s-secrets",
        "PostToolUse",
        "/tmp",
        serde_json::json!({
            "tool_name": "Bash",
            "tool_input": {"command": "gh auth token"},
            "tool_response": {"stdout": printed, "stderr": ""},
            "tool_use_id": "toolu_t",
        }),
    );
    assert_quiet_success(&home.hook("claude-code", "PostToolUse", &auth));
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
    for (line, secret) in &contextual {
        assert!(
            !contains(&haystack, secret.as_bytes()),
            "secret of `{line}` found in the store's bytes"
        );
    }
    assert!(!contains(&haystack, b"PRIVATEKEYBODYxyz"), "private key body found");
    assert!(!contains(&haystack, printed.as_bytes()), "the printed token found");
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
