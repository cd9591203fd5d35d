//! The packages a person installs without a compiler, built by `scripts/package` for this
//! platform: the wheel installed into a fresh virtual environment (as `pipx` and `uv tool` do)
//! and the npm tarballs into a fresh folder (as `npm install` and `npx` do), each run as a
//! person would: `--version`, `install --dry-run`, a hook, `status`. Run from a package
//! runner's cache, `install` wires a copy in `~/.local/bin` that outlives the cache.

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_memory_testkit::{TestHome, describe};
use serde_json::json;

use crate::agents::skip;
use crate::{assert_quiet_success, payload};

const PACKAGES_ENV: &str = "AGENT_MEMORY_TEST_PACKAGES";

/// The folder `scripts/package` built into, or `None` (with a notice) outside CI.
fn packages(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os(PACKAGES_ENV).map(PathBuf::from);
    if let Some(dir) = dir.filter(|d| package_file(d, ".whl").is_some()) {
        return Some(dir);
    }
    skip(
        test,
        &format!(
            "no packages were built; run `export {PACKAGES_ENV}=\"$(scripts/package --profile dev | tail -n 1)\"`"
        ),
    )
}

/// The one file in `dir` whose name ends with `suffix` and starts with `prefix`.
fn package_file(dir: &Path, suffix: &str) -> Option<PathBuf> {
    package_named(dir, "", suffix)
}

fn package_named(dir: &Path, prefix: &str, suffix: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir).ok()?.filter_map(Result::ok).map(|e| e.path()).find(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(prefix) && n.ends_with(suffix))
    })
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("the command starts");
    assert!(out.status.success(), "{cmd:?}: {}", describe(&out));
}

/// What a person does first with an installed binary, through `bin`.
fn a_person_uses(bin: &Path) -> TestHome {
    let home = TestHome::new(bin);
    let version = home.ok(&["--version"]);
    assert!(version.contains(env!("CARGO_PKG_VERSION")), "{version}");
    std::fs::create_dir_all(home.user_home().join(".claude")).expect("claude's folder");
    let planned = home.json(&["install", "claude-code", "--dry-run", "--no-import-history"]);
    let files = planned["files"].as_array().cloned().unwrap_or_default();
    assert!(files.iter().any(|f| f["status"] == "would_create"), "{planned}");
    assert!(!home.user_home().join(".claude/settings.json").exists(), "a dry run writes nothing");
    let said = payload(
        "pkg-1",
        "UserPromptSubmit",
        &home.user_home().to_string_lossy(),
        json!({ "prompt": "wire the payment webhook" }),
    );
    assert_quiet_success(&home.hook("claude-code", "UserPromptSubmit", &said));
    let status = home.json(&["status"]);
    assert_eq!(status["events"], 1, "{status}");
    home
}

#[test]
fn the_wheel_installs_into_a_fresh_environment_and_runs() {
    let Some(dir) = packages("the_wheel_installs_into_a_fresh_environment_and_runs") else {
        return;
    };
    let wheel = package_file(&dir, ".whl").expect("a wheel");
    let place = tempfile::tempdir().expect("tempdir");
    let venv = place.path().join("venv");
    run(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    run(Command::new(venv.join("bin/python"))
        .args([
            "-m",
            "pip",
            "install",
            "--no-index",
            "--no-deps",
            "--disable-pip-version-check",
            "-q",
        ])
        .arg(&wheel));
    let bin = venv.join("bin/agent-memory");
    assert!(bin.is_file(), "the wheel puts agent-memory in the environment's bin");
    a_person_uses(&bin);
}

#[test]
fn the_npm_packages_install_offline_and_a_runner_cache_wires_a_lasting_copy() {
    let test = "the_npm_packages_install_offline_and_a_runner_cache_wires_a_lasting_copy";
    let Some(dir) = packages(test) else { return };
    let platform = package_named(&dir, "agent-memory-cli-", ".tgz").expect("the platform package");
    let launcher = package_named(&dir, "agent-memory-0", ".tgz").expect("the launcher package");
    // Where npx unpacks a package it runs: `~/.npm/_npx/<hash>`.
    let place = tempfile::tempdir().expect("tempdir");
    let cache = place.path().join(".npm/_npx/4f1a2b");
    std::fs::create_dir_all(&cache).expect("cache");
    run(Command::new("npm")
        .args(["install", "--offline", "--no-audit", "--no-fund", "--prefix"])
        .arg(&cache)
        .arg(&platform)
        .arg(&launcher));
    let bin = cache.join("node_modules/.bin/agent-memory");
    assert!(bin.exists(), "npm links the launcher as agent-memory");
    let home = a_person_uses(&bin);

    // Installed from the runner's cache, the hooks run a copy in ~/.local/bin.
    let out = home.run(&["install", "claude-code", "--no-import-history"], b"");
    assert!(out.status.success(), "{}", describe(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("outlives the package runner's cache"), "{said}");
    let copy = home.user_home().join(".local/bin/agent-memory");
    assert!(copy.is_file(), "{said}");
    let settings =
        std::fs::read_to_string(home.user_home().join(".claude/settings.json")).expect("settings");
    assert!(settings.contains(&*copy.to_string_lossy()), "{settings}");
    assert!(!settings.contains("_npx"), "{settings}");
    let copied = Command::new(&copy).arg("--version").output().expect("the copy runs");
    assert!(copied.status.success(), "{}", describe(&copied));
}
