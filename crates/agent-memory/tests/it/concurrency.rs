//! Many hook processes at once, from three agents: every event stored exactly once, no errors.

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

#[test]
fn sixty_concurrent_hooks_from_three_agents_store_each_event_once() {
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
    assert_eq!(count(&home, "SELECT count(*) FROM hook_runs"), 60);
    assert_eq!(
        count(&home, "SELECT count(*) FROM hook_runs WHERE outcome != 'stored'"),
        0,
        "no hook run may fail, spool or be dropped under concurrency; log:\n{}",
        home.log()
    );
}
