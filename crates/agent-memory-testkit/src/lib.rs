//! Test helpers for agent-memory: a private home per test, the real binary run under it, the
//! agent payloads recorded from the real CLIs (`fixtures/agents/`, written by
//! `scripts/record-fixtures`), the harness that runs those CLIs offline (`harness/`), and the
//! workspace's lockfile.
//!
//! Tests never touch the real HOME: every child process gets a temp `HOME` and
//! `AGENT_MEMORY_HOME`, and no inherited `AGENT_MEMORY_*` variable.

use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temp directory holding a fake `HOME` and an agent-memory home inside it.
#[derive(Debug)]
pub struct TestHome {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl TestHome {
    /// `bin` is the binary under test, `env!("CARGO_BIN_EXE_agent-memory")`.
    pub fn new(bin: impl Into<PathBuf>) -> TestHome {
        let dir = tempfile::Builder::new().prefix("am-test-").tempdir().expect("create temp home");
        TestHome { dir, bin: bin.into() }
    }

    /// The fake `HOME`.
    pub fn user_home(&self) -> &Path {
        self.dir.path()
    }

    /// `AGENT_MEMORY_HOME`.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join(".agent-memory")
    }

    pub fn db_path(&self) -> PathBuf {
        self.home().join("memory.db")
    }

    pub fn spool_dir(&self) -> PathBuf {
        self.home().join("spool")
    }

    /// The fallback spools under this home's temporary directory (`agent-memory-<uid>/spool-*`).
    pub fn fallback_spool_dirs(&self) -> Vec<PathBuf> {
        let tmp = self.dir.path().join("tmp");
        let users = std::fs::read_dir(&tmp).into_iter().flatten().flatten();
        let users = users.filter(|e| e.file_name().to_string_lossy().starts_with("agent-memory-"));
        users
            .flat_map(|user| std::fs::read_dir(user.path()).into_iter().flatten().flatten())
            .filter(|e| e.file_name().to_string_lossy().starts_with("spool-"))
            .map(|e| e.path())
            .collect()
    }

    /// The binary, with this home and nothing inherited that could change its behaviour.
    pub fn cmd(&self) -> Command {
        let mut cmd = Command::new(&self.bin);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("AGENT_MEMORY_") {
                cmd.env_remove(key);
            }
        }
        // Background distil passes would race a test's own reads; the tests that want one
        // turn it back on.
        cmd.env("HOME", self.user_home())
            .env("AGENT_MEMORY_HOME", self.home())
            .env("AGENT_MEMORY_DISTIL__AUTO_WORK", "false")
            .env("TMPDIR", self.dir.path().join("tmp"))
            // The fallback spool goes under TMPDIR, not the machine's runtime directory.
            .env_remove("XDG_RUNTIME_DIR")
            .current_dir(self.user_home());
        std::fs::create_dir_all(self.dir.path().join("tmp")).expect("create tmp dir");
        cmd
    }

    /// Runs the binary with `args` and `stdin`, waiting for it.
    pub fn run(&self, args: &[&str], stdin: &[u8]) -> Output {
        run_with_stdin(self.cmd().args(args), stdin)
    }

    /// Runs `agent-memory hook --agent A --event E` with `payload` on stdin.
    pub fn hook(&self, agent: &str, event: &str, payload: &[u8]) -> Output {
        self.run(&["hook", "--agent", agent, "--event", event], payload)
    }

    /// Runs a command that must succeed and returns its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args, b"");
        assert!(out.status.success(), "agent-memory {args:?} failed:\n{}", describe(&out));
        String::from_utf8(out.stdout).expect("stdout is UTF-8")
    }

    /// Runs a `--json` command that must succeed and parses its output.
    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.push("--json");
        let out = self.ok(&all);
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}):\n{out}"))
    }

    /// The home's log file, or "" when nothing was logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.home().join("logs/agent-memory.log")).unwrap_or_default()
    }
}

/// Spawns `cmd`, writes `stdin` from a thread (a large payload must not deadlock against a
/// child that exits early), and waits.
pub fn run_with_stdin(cmd: &mut Command, stdin: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agent-memory");
    let mut pipe = child.stdin.take().expect("stdin pipe");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The child may close its end early; that is its business, not a test failure.
        let _ = pipe.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait for agent-memory");
    let _ = writer.join();
    out
}

/// Status, stdout and stderr of a finished process, for assertion messages.
pub fn describe(out: &Output) -> String {
    format!(
        "status: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The repository root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("workspace root")
}

/// The committed fixtures: `agents/<agent>/` holds the payloads `scripts/record-fixtures`
/// recorded from each real agent, `agents/versions.txt` the versions they came from.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The harness that runs the real agent CLIs offline: `run_agent.py` (one session of an agent
/// against `fake_model.py` on 127.0.0.1), `fake_model.py` itself, `codex_trust.py`, and
/// `pins.txt`, the versions `scripts/agent-test-clients` installs.
pub fn harness_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("harness")
}

/// A recorded hook payload: the agent's directory name, the file name, and the event it is.
#[derive(Debug, Clone)]
pub struct Sample {
    pub agent_dir: String,
    pub file: String,
    /// The event name: the file name up to its first dot (`PostToolUse.mcp.json` → `PostToolUse`).
    pub event: String,
    pub bytes: Vec<u8>,
}

/// Every `*.json` file in `fixtures/agents/<agent_dir>/`, sorted by name.
pub fn samples(agent_dir: &str) -> Vec<Sample> {
    let dir = fixtures_dir().join("agents").join(agent_dir);
    let mut out: Vec<Sample> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| {
            let file = e.file_name().to_string_lossy().into_owned();
            let event = file.split('.').next().unwrap_or_default().to_owned();
            let bytes = std::fs::read(e.path()).expect("read the fixture");
            Sample { agent_dir: agent_dir.to_owned(), file, event, bytes }
        })
        .collect();
    out.sort_by(|a, b| a.file.cmp(&b.file));
    out
}

/// Every package that `package` depends on for normal builds, transitively, by name, read from
/// the workspace's `Cargo.lock`.
pub fn locked_dependencies(package: &str) -> BTreeSet<String> {
    let lock =
        std::fs::read_to_string(workspace_root().join("Cargo.lock")).expect("read Cargo.lock");
    let lock: toml::Table = lock.parse().expect("Cargo.lock is TOML");
    let mut graph: HashMap<String, Vec<String>> = HashMap::new();
    for pkg in lock.get("package").and_then(|p| p.as_array()).into_iter().flatten() {
        let name = pkg.get("name").and_then(|n| n.as_str()).unwrap_or_default().to_owned();
        let deps = pkg
            .get("dependencies")
            .and_then(|d| d.as_array())
            .into_iter()
            .flatten()
            .filter_map(|d| d.as_str())
            .map(|d| d.split(' ').next().unwrap_or(d).to_owned())
            .collect();
        graph.entry(name).or_default().extend::<Vec<String>>(deps);
    }
    let mut seen = BTreeSet::new();
    let mut todo = vec![package.to_owned()];
    while let Some(name) = todo.pop() {
        for dep in graph.get(&name).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                todo.push(dep.clone());
            }
        }
    }
    seen
}
