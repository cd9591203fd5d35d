//! The sign at session start: one line for the person, in the `systemMessage` of the agents that
//! show it outside the model's context (Claude Code, Gemini CLI), saying what was loaded and
//! where the viewer is; never in the context itself, never for an agent that would drop the
//! whole answer over an unknown key (Codex), and off with one setting.

use serde_json::{Value, json};

use crate::recall_inject::{
    CODEX_PROMPT, CWD, claude_start, codex_fixes_the_parser, context_of, sample, with, work,
};
use crate::{home, serve};
use agent_memory_testkit::TestHome;

fn start(home: &TestHome, agent: &str, session: &str) -> Value {
    let body = with(sample(agent, "SessionStart"), json!({ "session_id": session, "cwd": CWD }));
    let out = home.hook(agent, "SessionStart", &body);
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

#[test]
fn the_session_start_shows_the_person_one_line_of_what_was_loaded() {
    let home = home();
    codex_fixes_the_parser(&home, "codex-fix", CWD, CODEX_PROMPT);
    work(&home, &[]);

    let claude = claude_start(&home, "claude-1", &[]).expect("a briefing");
    let sign = claude["systemMessage"].as_str().unwrap_or_default().to_owned();
    assert!(sign.starts_with("agent-memory: "), "{claude}");
    assert!(sign.contains(" from codex (~") && sign.ends_with(" tokens)"), "{sign}");
    assert!(sign.contains("observation"), "{sign}");
    assert_eq!(sign.lines().count(), 1, "{sign}");
    let context = context_of(&claude);
    assert!(!context.contains("agent-memory: "), "the sign stays out of the context: {context}");

    let gemini = start(&home, "gemini", "gemini-1");
    assert!(gemini["systemMessage"].as_str().is_some_and(|s| s.starts_with("agent-memory: ")));
    // Codex drops an answer with a key it does not know: its answer stays as it was.
    let codex = start(&home, "codex", "codex-2");
    assert!(codex.get("systemMessage").is_none(), "{codex}");
    assert!(!context_of(&codex).is_empty(), "{codex}");

    // While the server runs, the line says where the viewer is, without its token.
    let _turn = serve::turn();
    let server = serve::Server::start(&home, &[]);
    let claude = claude_start(&home, "claude-2", &[]).expect("a briefing");
    let sign = claude["systemMessage"].as_str().unwrap_or_default().to_owned();
    assert!(sign.contains(" · viewer http://127.0.0.1:"), "{sign}");
    assert!(!sign.contains("?token="), "{sign}");
    server.stop(&home);

    // Off with one setting.
    let quiet = claude_start(&home, "claude-3", &[("AGENT_MEMORY_INJECT__SIGN", "false")])
        .expect("a briefing");
    assert!(quiet.get("systemMessage").is_none(), "{quiet}");
}
