//! Trust benchmark, through the front door: whether what agents are handed still holds for
//! the code in front of them, and whether work on an unmerged branch stays out of others'
//! context; and what the checks cost the session-start hook.
//!
//! `cargo bench -p agent-memory --bench trust` (release profile). Knobs: `BENCH_RUNS` (default
//! 200 hook runs each way).
//!
//! The store is filled the way a person's is: Codex's own hook payloads (the recorded samples)
//! for 40 sessions, each fixing one file of a real git repository (a failing test, a patch to
//! `src/<name>.rs` written to disk, the test passing, the closing answer), each change committed.
//! Sessions 0–29 work on `main`; 30–39 each on a branch `feature/bN` of their own, checked out
//! in the same repository. `agent-memory work` distils them. Then files 0–9 are rewritten and
//! files 10–14 deleted, and the bench reads what an agent on `main` is handed: the session-start
//! briefing (Claude Code's hook), prompt-time recall for a prompt about each file (Claude
//! Code's hook) and `agent-memory search --json` for each file's error. Then branches 30–34 are
//! merged into `main`, `work` runs again, and the same is read once more.
//!
//! What counts, written before the first run and not changed since:
//! - **unmarked change**: an observation of a rewritten or deleted file (0–14) shown in a
//!   briefing line, a recall line or a search hit without "changed since" or "gone since";
//! - **gone injected**: an observation of a deleted file (10–14) in a briefing or a recall;
//! - **false mark**: an observation of an untouched file (15–39) shown with either mark;
//! - **leak**: an observation of a session on a branch not merged into `main` in a briefing or
//!   recall on `main`;
//! - **merged seen**: of the five merged branches' sessions, how many a recall about their file
//!   hands back after the merge (5 expected).
//!
//! The cost: the session-start hook on `main`, against the same store copied with its anchors
//! and branch marks removed and the injection log's inserts ignored, run alternately; p50 of
//! each and the difference.

#![allow(clippy::print_stdout)]

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_agent-memory");
const FILES: usize = 40;
const ON_MAIN: usize = 30;

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let temp = tempfile::tempdir().expect("temp dir");
    // `BENCH_HOME=DIR` runs in DIR (created, then kept) to look at what it made.
    let kept = std::env::var_os("BENCH_HOME").map(PathBuf::from);
    if let Some(kept) = &kept {
        std::fs::create_dir_all(kept).expect("BENCH_HOME");
    }
    let dir = kept.as_deref().unwrap_or(temp.path());
    let home = dir.join("home");
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("src")).expect("repo");
    git(&repo, &["init", "-q", "-b", "main"]);
    for i in 0..FILES {
        write(
            &repo.join(format!("src/{}.rs", name(i))),
            &format!("fn run() {{ let d = {} + 1; }}\n", name(i)),
        );
    }
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "modules"]);

    let started = Instant::now();
    for i in 0..FILES {
        let branch = (i >= ON_MAIN).then(|| format!("feature/b{i}"));
        if let Some(branch) = &branch {
            git(&repo, &["checkout", "-q", "-b", branch]);
        }
        fix(&home, dir, &repo, i);
        git(&repo, &["commit", "-q", "-am", &format!("fix {}", name(i))]);
        if branch.is_some() {
            git(&repo, &["checkout", "-q", "main"]);
        }
    }
    println!("40 sessions captured in {:.1} s", started.elapsed().as_secs_f64());
    ok(&home, dir, &["work"]);

    // Which observation came from which file's session.
    let of = observations(&home);
    println!("observations: {} of {} sessions", of.len(), FILES);

    for i in 0..10 {
        write(
            &repo.join(format!("src/{}.rs", name(i))),
            &format!("// rewritten\npub fn run{i}() {{}}\n"),
        );
    }
    for i in 10..15 {
        std::fs::remove_file(repo.join(format!("src/{}.rs", name(i)))).expect("delete");
    }

    let merged: Vec<usize> = Vec::new();
    let before = read_all(&home, dir, &repo, &of, &merged, "before merging");
    for i in ON_MAIN..ON_MAIN + 5 {
        git(&repo, &["merge", "-q", "--no-edit", &format!("feature/b{i}")]);
    }
    ok(&home, dir, &["work"]);
    let merged: Vec<usize> = (ON_MAIN..ON_MAIN + 5).collect();
    let after = read_all(&home, dir, &repo, &of, &merged, "after merging 5 branches");
    println!(
        "totals: unmarked changes {}, gone injected {}, false marks {}, leaks {}",
        before.unmarked + after.unmarked,
        before.gone_injected + after.gone_injected,
        before.false_marks + after.false_marks,
        before.leaks + after.leaks
    );

    // The cost on the session-start hook: the same store without anchors or branch marks.
    let bare = dir.join("bare");
    copy_dir(&home, &bare);
    let conn = rusqlite::Connection::open(bare.join("memory.db")).expect("bare store");
    conn.execute_batch(
        "DELETE FROM anchors; DELETE FROM branch_merges; DELETE FROM branch_tips;
         UPDATE sessions SET branch = NULL, branch_seen = NULL, work_branch = NULL, work_commit = NULL;
         CREATE TRIGGER bench_no_log BEFORE INSERT ON injections BEGIN SELECT RAISE(IGNORE); END;",
    )
    .expect("strip");
    drop(conn);
    // Both stores start from an empty write-ahead log, so the log's size is not what differs.
    for store in [&home, &bare] {
        let conn = rusqlite::Connection::open(store.join("memory.db")).expect("store");
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").expect("checkpoint");
    }
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for n in 0..runs {
        let t = Instant::now();
        let _ = briefing(&home, dir, &repo, &format!("timed-{n}"));
        with.push(t.elapsed());
        let t = Instant::now();
        let _ = briefing(&bare, dir, &repo, &format!("timed-{n}"));
        without.push(t.elapsed());
    }
    with.sort();
    without.sort();
    let p50 = |v: &[Duration]| v[v.len() / 2].as_secs_f64() * 1000.0;
    println!(
        "SessionStart hook p50: {:.2} ms with anchors, branches and the log, {:.2} ms without ({:+.2} ms); n={runs}",
        p50(&with),
        p50(&without),
        p50(&with) - p50(&without)
    );
}

#[derive(Default)]
struct Tally {
    unmarked: usize,
    gone_injected: usize,
    false_marks: usize,
    leaks: usize,
    merged_seen: usize,
}

/// Reads the briefing, a recall per file and a search per file on `main`, and counts.
fn read_all(
    home: &Path,
    dir: &Path,
    repo: &Path,
    of: &HashMap<i64, usize>,
    merged: &[usize],
    label: &str,
) -> Tally {
    let mut tally = Tally::default();
    let judge = |line: &str, id: i64, injected: bool, tally: &mut Tally| {
        let Some(&file) = of.get(&id) else { return };
        let marked = line.contains("changed since") || line.contains("gone since");
        if file < 15 && !marked {
            tally.unmarked += 1;
        }
        if (15..FILES).contains(&file) && marked {
            tally.false_marks += 1;
        }
        if injected && (10..15).contains(&file) {
            tally.gone_injected += 1;
        }
        if injected && file >= ON_MAIN && !merged.contains(&file) {
            tally.leaks += 1;
        }
    };
    let context = briefing(home, dir, repo, &format!("brief-{label}"));
    let mut shown = 0;
    for (id, line) in lines(&context) {
        shown += 1;
        judge(line, id, true, &mut tally);
    }
    let mut recalled = 0;
    for i in 0..FILES {
        let context = recall(home, dir, repo, &format!("recall-{label}-{i}"), i);
        for (id, line) in lines(&context) {
            recalled += 1;
            judge(line, id, true, &mut tally);
            if merged.contains(&i) && of.get(&id) == Some(&i) {
                tally.merged_seen += 1;
            }
        }
    }
    let mut hits = 0;
    for i in 0..15 {
        let found = json_out(home, dir, &["search", &name(i), "--kind", "observation", "--json"]);
        for hit in found["hits"].as_array().into_iter().flatten() {
            let Some(id) = hit["id"].as_i64() else { continue };
            if of.get(&id) == Some(&i) {
                hits += 1;
                let line = hit["stale"].as_str().unwrap_or_default();
                judge(line, id, false, &mut tally);
            }
        }
    }
    println!(
        "{label}: briefing {shown} lines, recall {recalled} lines, search {hits} hits of changed files; \
         unmarked changes {}, gone injected {}, false marks {}, leaks {}, merged seen {} of {}",
        tally.unmarked,
        tally.gone_injected,
        tally.false_marks,
        tally.leaks,
        tally.merged_seen,
        merged.len()
    );
    tally
}

/// `- o12 …` lines of a context, with their ids.
fn lines(context: &str) -> Vec<(i64, &str)> {
    context
        .lines()
        .filter_map(|line| {
            let id = line.strip_prefix("- o")?.split(' ').next()?.parse().ok()?;
            Some((id, line))
        })
        .collect()
}

/// Observation id → the file its session fixed, from the sessions' ids.
fn observations(home: &Path) -> HashMap<i64, usize> {
    let conn = rusqlite::Connection::open_with_flags(
        home.join("memory.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("store");
    let mut stmt = conn
        .prepare(
            "SELECT o.id, s.source_id FROM observations o JOIN sessions s ON s.id = o.session_id",
        )
        .expect("query");
    stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .expect("rows")
        .filter_map(Result::ok)
        .filter_map(|(id, session)| Some((id, session.strip_prefix("fix-")?.parse().ok()?)))
        .collect()
}

fn command(home: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env("AGENT_MEMORY_HOME", home)
        .env("HOME", dir)
        .env("AGENT_MEMORY_DISTIL__AUTO_WORK", "false")
        .env_remove("GIT_DIR");
    cmd
}

fn ok(home: &Path, dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = command(home, dir).args(args).stderr(Stdio::inherit()).output().expect("run");
    assert!(out.status.success(), "agent-memory {args:?} failed");
    out.stdout
}

fn json_out(home: &Path, dir: &Path, args: &[&str]) -> Value {
    serde_json::from_slice(&ok(home, dir, args)).expect("json")
}

fn hook(home: &Path, dir: &Path, agent: &str, event: &str, payload: &Value) -> Value {
    let mut child = command(home, dir)
        .args(["hook", "--agent", agent, "--event", event])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("hook");
    child.stdin.take().expect("stdin").write_all(payload.to_string().as_bytes()).expect("write");
    let out = child.wait_with_output().expect("hook");
    assert!(out.status.success(), "hooks exit 0");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn briefing(home: &Path, dir: &Path, repo: &Path, session: &str) -> String {
    let payload = json!({ "session_id": session, "transcript_path": "/tmp/t.jsonl",
        "cwd": repo, "hook_event_name": "SessionStart", "source": "startup" });
    let answer = hook(home, dir, "claude-code", "SessionStart", &payload);
    answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned()
}

fn recall(home: &Path, dir: &Path, repo: &Path, session: &str, i: usize) -> String {
    let payload = json!({ "session_id": session, "transcript_path": "/tmp/t.jsonl",
        "cwd": repo, "hook_event_name": "UserPromptSubmit",
        "prompt": format!("cargo test fails again: cannot find value {n} in src/{n}.rs", n = name(i)) });
    let answer = hook(home, dir, "claude-code", "UserPromptSubmit", &payload);
    answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_owned()
}

/// A recorded Codex payload of `event` with `fields` set.
fn codex(event: &str, fields: Value) -> Value {
    let file = format!("{event}.json");
    let sample = agent_memory_testkit::samples("codex")
        .into_iter()
        .find(|s| s.file == file)
        .unwrap_or_else(|| panic!("no codex sample {file}"));
    let mut base: Value = serde_json::from_slice(&sample.bytes).expect("sample");
    if let (Some(base), Value::Object(fields)) = (base.as_object_mut(), fields) {
        base.extend(fields);
    }
    base
}

/// The name of file `i`'s module and of the value its test cannot find: a word of its own, so
/// that a prompt about one file is about that file alone.
fn name(i: usize) -> String {
    const SYLLABLES: &[&str] = &["ka", "lo", "mi", "nu", "pe", "ra", "si", "to", "vu", "ze"];
    format!("{}{}{}n", SYLLABLES[i % 10], SYLLABLES[(i / 10 + 3) % 10], SYLLABLES[(i * 7 + 1) % 10])
}

/// One Codex session fixing `src/<name>.rs`, the patch written to disk as Codex would.
fn fix(home: &Path, dir: &Path, repo: &Path, i: usize) {
    let n = name(i);
    let common = json!({ "session_id": format!("fix-{i}"), "cwd": repo });
    let send = |event: &str, fields: Value| {
        let mut fields = fields;
        fields.as_object_mut().expect("object").extend(common.as_object().expect("object").clone());
        hook(home, dir, "codex", event, &codex(event, fields));
    };
    let test = format!("cargo test -p {n}");
    send("SessionStart", json!({}));
    send(
        "UserPromptSubmit",
        json!({ "prompt": format!("{test} fails with error[E0425]: cannot find value `{n}` in this scope; please fix src/{n}.rs") }),
    );
    send(
        "PostToolUse",
        json!({ "tool_name": "Bash", "tool_input": { "command": test },
                "tool_response": format!("error[E0425]: cannot find value `{n}` in this scope\n --> src/{n}.rs:1:20\nerror: could not compile `{n}`\n") }),
    );
    write(
        &repo.join(format!("src/{n}.rs")),
        &format!("fn run(&self) {{ let d = self.{n} + 1; }}\n"),
    );
    let patch = format!(
        "*** Begin Patch\n*** Update File: src/{n}.rs\n@@\n-let d = {n} + 1;\n+let d = self.{n} + 1;\n*** End Patch\n"
    );
    send(
        "PostToolUse",
        json!({ "tool_name": "apply_patch", "tool_input": { "command": patch },
                "tool_response": format!("Success. Updated the following files:\nM src/{n}.rs\n") }),
    );
    send(
        "PostToolUse",
        json!({ "tool_name": "Bash", "tool_input": { "command": test },
                "tool_response": "test result: ok. 3 passed; 0 failed\n" }),
    );
    send(
        "Stop",
        json!({ "last_assistant_message": format!("Fixed: {n} is read from self in src/{n}.rs.") }),
    );
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=Bench", "-c", "user.email=bench@example.com"])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[allow(clippy::disallowed_methods)]
fn write(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
}

fn copy_dir(from: &Path, to: &PathBuf) {
    std::fs::create_dir_all(to).expect("copy dir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_file() {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
        } else if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        }
    }
}
