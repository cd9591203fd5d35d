//! The architecture's promises that a test can check: the paths ARCHITECTURE.md names exist,
//! and core's dependency tree holds no async runtime, no HTTP and no sockets.

use std::path::Path;

#[test]
fn architecture_md_names_only_real_paths() {
    let root = agent_memory_testkit::workspace_root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut checked = 0;
    for (i, part) in text.split('`').enumerate() {
        // Odd parts are inside backticks; paths contain a slash or a dot-file extension.
        let looks_like_path = i % 2 == 1
            && !part.contains(' ')
            && (part.starts_with("crates/")
                || part.starts_with("scripts/")
                || part.starts_with("bench/")
                || part.starts_with(".ci/"));
        if looks_like_path {
            let path = part.trim_end_matches('/');
            assert!(
                root.join(path).exists() || Path::new(path).exists(),
                "ARCHITECTURE.md names {path}, which does not exist"
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "ARCHITECTURE.md should map the code ({checked} paths found)");
}

#[test]
fn core_depends_on_no_runtime_or_network_crate() {
    let deps = agent_memory_testkit::locked_dependencies("agent-memory-core");
    assert!(deps.contains("rusqlite"), "the lockfile is read: {deps:?}");
    let banned =
        ["tokio", "async-std", "smol", "hyper", "reqwest", "ureq", "axum", "mio", "rmcp", "tonic"];
    for name in banned {
        assert!(!deps.contains(name), "agent-memory-core must not depend on {name}");
    }
}
