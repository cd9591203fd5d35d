//! The Hermes memory provider (`install/hermes/__init__.py` in core), executed by a real Python
//! with the real binary behind it: buffering, the deduplicated history, the tools it leaves out,
//! what `prefetch` answers, and that nothing raises when the binary is missing. The real Hermes
//! runs it in `agents_hermes.rs`.

use std::path::Path;
use std::process::Command;

use agent_memory_testkit::describe;

use crate::home;

#[test]
fn the_provider_buffers_deduplicates_and_never_raises() {
    let home = home();
    let provider = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../agent-memory-core/src/install/hermes/__init__.py");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/hermes/provider_test.py");
    let mut cmd = Command::new("python3");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("AGENT_MEMORY_") {
            cmd.env_remove(key);
        }
    }
    let out = cmd
        .arg(&script)
        .arg(&provider)
        .arg(env!("CARGO_BIN_EXE_agent-memory"))
        .arg(home.home())
        .env("AGENT_MEMORY_HOME", home.home())
        .env("AGENT_MEMORY_DISTIL__AUTO_WORK", "false")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .current_dir(home.user_home())
        .output()
        .expect("run python3");
    assert!(out.status.success(), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(said.lines().filter(|l| l.starts_with("ok ")).count(), 7, "{said}");
}
