//! Many hook processes at once, from three agents: every event stored exactly once, no errors;
//! and processes killed with SIGKILL while writing lose nothing acknowledged and repeat nothing.

use std::process::Stdio;

use crate::{count, home, payload};

const WORDS: &[&str] = &[
    "apple", "birch", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
    "kestrel", "lagoon", "marble", "nectar", "obsidian", "pepper", "quartz", "raven", "saffron",
    "tundra", "umber", "velvet", "walnut", "xenon", "yarrow", "zephyr", "acorn", "basalt", "cedar",
    "dune", "egret", "falcon", "glacier", "heron", "iris", "jade", "kelp", "lotus", "maple",
    "nimbus", "orchid", "pebble", "quill", "reef", "sierra", "thistle", "ursa", "vortex", "willow",
    "yucca", "zinnia", "amber", "bramble", "canyon", "dahlia", "elm", "fern", "grove", "hazel",
    "ivy",
];

/// The tests of this module take turns: each starts dozens of processes at once, and two such
/// crowds on two cores would push hooks past the deadlines these tests give them.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[test]
fn sixty_concurrent_hooks_from_three_agents_store_each_event_once() {
    let _turn = turn();
    let home = home();
    let agents = [
        ("claude-code", "UserPromptSubmit"),
        ("codex", "UserPromptSubmit"),
        ("gemini", "BeforeAgent"),
    ];
    let mut children = Vec::new();
    for (a, (agent, event)) in agents.iter().enumerate() {
        for i in 0..20 {
            let word = WORDS[a * 20 + i];
            let body = payload(
                &format!("{agent}-session-{}", i % 4),
                event,
                "/tmp",
                serde_json::json!({ "prompt": format!("{word} request number {i} from {agent}") }),
            );
            // A loaded machine (the agent tests run beside this one) may starve a hook past
            // the default 1 s deadline, and it would then spool, as it should; with room to
            // wait, every hook must get the write lock in turn.
            let mut child = home
                .cmd()
                .env("AGENT_MEMORY_CAPTURE__DEADLINE_MS", "10000")
                .env("AGENT_MEMORY_CAPTURE__BUSY_TIMEOUT_MS", "9000")
                .args(["hook", "--agent", agent, "--event", event])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn hook");
            // Payloads are small: the pipe buffer takes them without blocking.
            std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), &body)
                .expect("write payload");
            children.push(child);
        }
    }
    for child in children {
        let out = child.wait_with_output().expect("wait");
        crate::assert_quiet_success(&out);
    }
    // Anything a hook had to spool is recovered now; nothing may be stored twice.
    home.ok(&["recover"]);
    assert_eq!(count(&home, "SELECT count(*) FROM events"), 60);
    assert_eq!(count(&home, "SELECT count(DISTINCT uid) FROM events"), 60);
    for (agent, _) in agents {
        let n = count(&home, &format!("SELECT count(*) FROM events WHERE agent = '{agent}'"));
        assert_eq!(n, 20, "{agent}");
    }
    let runs: Vec<String> = crate::db(&home)
        .prepare("SELECT outcome || ' ' || coalesce(detail, '') FROM hook_runs WHERE outcome != 'stored'")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(count(&home, "SELECT count(*) FROM hook_runs"), 60, "{runs:?}");
    assert_eq!(
        count(&home, "SELECT count(*) FROM hook_runs WHERE outcome != 'stored'"),
        0,
        "no hook run may fail, spool or be dropped under concurrency; log:\n{}",
        home.log()
    );
}

/// `kill -9` in the middle of writing: every hook that finished (the agent saw it exit 0) has
/// its event stored, nothing is stored twice, and a work pass killed part way leaves nothing a
/// second pass repeats.
#[test]
fn kill_nine_loses_no_acknowledged_event_and_duplicates_none() {
    let _turn = turn();
    let home = home();
    let mut children = Vec::new();
    for i in 0..45 {
        let word = WORDS[i % WORDS.len()];
        let session = format!("killed-session-{}", i % 5);
        let mut body = payload(
            &session,
            "UserPromptSubmit",
            "/tmp",
            serde_json::json!({ "prompt": format!("{word} kill test prompt {i}") }),
        );
        if i % 9 == 8 {
            // Now and then a turn ends, so the work pass below has sessions to distil.
            body = payload(
                &session,
                "Stop",
                "/tmp",
                serde_json::json!({ "last_assistant_message": format!("done with {word}") }),
            );
        }
        let event = if i % 9 == 8 { "Stop" } else { "UserPromptSubmit" };
        let mut child = home
            .cmd()
            .env("AGENT_MEMORY_CAPTURE__DEADLINE_MS", "10000")
            .env("AGENT_MEMORY_CAPTURE__BUSY_TIMEOUT_MS", "9000")
            .args(["hook", "--agent", "claude-code", "--event", event])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn hook");
        std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), &body).expect("write");
        children.push((i, child));
    }
    // Every third hook is killed wherever it is: reading, writing, or already gone.
    let mut acknowledged = Vec::new();
    for (i, mut child) in children {
        if i % 3 == 0 {
            std::thread::sleep(std::time::Duration::from_millis((i % 7) as u64));
            let _ = child.kill();
            let _ = child.wait();
        } else {
            let out = child.wait_with_output().expect("wait");
            crate::assert_quiet_success(&out);
            acknowledged.push(i);
        }
    }
    home.ok(&["recover"]);
    for i in &acknowledged {
        let word = WORDS[i % WORDS.len()];
        let text = if i % 9 == 8 {
            format!("done with {word}")
        } else {
            format!("{word} kill test prompt {i}")
        };
        let n = count(&home, &format!("SELECT count(*) FROM events WHERE body = '{text}'"));
        assert_eq!(n, 1, "acknowledged hook {i} stored once");
    }
    let total = count(&home, "SELECT count(*) FROM events");
    assert_eq!(total, count(&home, "SELECT count(DISTINCT uid) FROM events"), "no uid twice");
    assert!(total <= 45);

    // Work passes killed at several points, then whole ones: no observation or summary twice.
    for delay in [5, 20, 40, 80, 160] {
        let mut pass = home
            .cmd()
            .args(["work"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn work");
        std::thread::sleep(std::time::Duration::from_millis(delay));
        let _ = pass.kill();
        let _ = pass.wait();
    }
    home.ok(&["work"]);
    home.ok(&["work"]);
    let dupes = count(
        &home,
        "SELECT count(*) FROM (SELECT source_key FROM observations GROUP BY source_key HAVING count(*) > 1)",
    );
    assert_eq!(dupes, 0);
    let summaries = count(&home, "SELECT count(*) FROM summaries");
    assert_eq!(summaries, count(&home, "SELECT count(DISTINCT session_id) FROM summaries"));
}
