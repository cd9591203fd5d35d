//! Test helpers for agent-memory: a private home per test, the real binary run under it, the
//! agent payloads recorded from the real CLIs (`fixtures/agents/`, written by
//! `scripts/record-fixtures`), the harness that runs those CLIs offline (`harness/`), the
//! workspace's lockfile, a scripted HTTP server standing in for a remote model
//! ([`fake_http`]), a real PostgreSQL ([`pg`]) and slow clients for a server's connection
//! limits ([`trickle`]).
//!
//! Tests never touch the real HOME: every child process gets a temp `HOME` and
//! `AGENT_MEMORY_HOME`, and no inherited `AGENT_MEMORY_*` variable.

pub mod fake_http;
pub mod pg;
pub mod synthetic;
pub mod trickle;

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
        // An agent-memory installed on this machine would be what `install` wires instead of
        // the binary under test (it prefers an installed copy to a build's output).
        if let Some(path) = std::env::var_os("PATH") {
            let dirs =
                std::env::split_paths(&path).filter(|dir| !dir.join("agent-memory").is_file());
            if let Ok(path) = std::env::join_paths(dirs) {
                cmd.env("PATH", path);
            }
        }
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

/// The memory-quality corpus (`fixtures/sessions/<name>/`, recorded by `scripts/record-sessions`):
/// each scenario's real agent session as the hook calls it made, what a useful memory of it
/// holds, and what would be false to say about it; the replay of a session through the real
/// binary, and the scoring rules the quality benchmark applies to what the store then says.
///
/// The rules, exactly (bench/README.md states them too):
/// * a **fact** is a set of keywords; it is found in a text when every keyword is, as a
///   case-insensitive substring (so CJK keywords match inside unsegmented text); a keyword may
///   list alternatives with `|` (`"fraction|1000%"`), any one of which is enough;
/// * a text is cut into **statements**: its lines, and each line at sentence ends (`. `, `! `,
///   `? `, `。`, `！`, `？`);
/// * a **false pass** is a statement naming a failed run (its command verbatim, not followed by
///   more of a longer command such as ` && …`) or a check that never passed in the session (a
///   `never_passed` keyword), with a pass word (`pass`, `succeed`, `success`, `通过`, `成功`) and
///   no failure word (`fail`, `error`, `still`, `not pass`, `失败`, `未通过`, `没有通过`, `仍`);
/// * a **false fix**, in a scenario whose failure stayed unresolved, is a statement with a fix
///   word (`fixed`, `fixes`, `resolved`, `solved`, `bugfix`, `修复了`, `已修复`, `解决了`,
///   `已解决`) and no negation (`not`, `n't`, `unfixed`, `unresolved`, `still`, `yet`, `未`,
///   `没有`, `仍`, `还没`);
/// * a **repeated request** is a next step (a summary's `next_steps`, or a briefing line that
///   starts with `Next` or `下一步`) that holds a request of the session verbatim, or at least
///   60% of its words (ASCII words of two or more characters, each CJK character a word) when
///   it has three or more;
/// * a **merged item** is an observation or memory candidate that names the subjects (file
///   paths, each held by one scenario only, found where no letter, digit or `_` precedes them)
///   of two or more scenarios.
///
/// Chains (`fixtures/sessions/chains.json`, [`sessions::Chain`]) score what the next agent is
/// handed, its session-start and first-prompt hooks' output:
/// * a chain's **fact** is handed when one *stated line* carries every keyword: a line cut at
///   an echo label (`Asked:`, `Asked for:`, `Request:`, `请求：`, `问题：`, `需求：`), without
///   any request of the chain's sessions copied whole, or any sentence of one (16 characters or
///   more, its closing stop aside), or a clipped copy (20 characters or more of the start of
///   either, then `…` or `...`);
/// * a **replaced choice presented as current** is a line holding every keyword of one of the
///   chain's `superseded` sets, with no mark of the replacement (`supersed`, `replaced`,
///   `no longer`, `was … until`, `不再`, `已替换`, `替换为`, `改为`, `改成`, `换成`, `不用`) and no
///   `current` set (a line naming what replaced it states the change);
/// * **"not run again"** is a statement (not a question) with `not run again`, `not re-run`,
///   `not rerun`, `never re-run`, `未再运行`, `没有再次运行` or the like, in a chain whose
///   sessions ran a check again, in the handed context or in the store (every observation,
///   summary and memory);
/// * a **request typed as a decision** is an observation or a memory of kind `decision` that
///   holds one of the chain's `requests` verbatim (its closing stop aside) or 60% of its words;
/// * **another project's convention** is a line of the handed context holding a `foreign` set;
///   a **person's preference kept only under a project** is a `person` set that candidates or
///   active memories hold, every one of them with a project;
/// * a **command-line title** is an observation title holding a command line the session ran
///   (its first line), where no letter, digit or `_` touches it.
pub mod sessions {
    use std::io::Write as _;
    use std::path::{Path, PathBuf};

    use crate::TestHome;

    /// Placeholders the recorder put in every payload.
    pub const PROJECT_PLACEHOLDER: &str = "/home/dev/work/proj";
    pub const HOME_PLACEHOLDER: &str = "/home/dev";

    /// One recorded session and what is known to be true and false about it.
    #[derive(Debug, Clone)]
    pub struct Scenario {
        pub name: String,
        /// The recording harness's agent name (`claude`, `codex`, …).
        pub agent: String,
        pub categories: Vec<String>,
        /// `en`, `zh` or `mixed`.
        pub language: String,
        pub facts: Vec<Fact>,
        /// A question a later prompt asks about the session (prompt-time recall).
        pub follow_up: String,
        /// Words a person would search for.
        pub query: String,
        /// The files and names the session is about.
        pub subjects: Vec<String>,
        pub claims: Claims,
        pub hooks: Vec<HookCall>,
        /// Whether the agent ran outside any project: in `~/notes`, a plain folder that is no
        /// git repository (`"no_project": true`).
        pub no_project: bool,
        /// The command lines the session ran in its shell, as the scenario's steps give them
        /// (Codex reads a file with `cat FILE`).
        pub commands: Vec<String>,
    }

    /// A short set of keywords a useful memory holds.
    #[derive(Debug, Clone)]
    pub struct Fact {
        pub id: String,
        pub keywords: Vec<String>,
    }

    /// What would be false to say about a session.
    #[derive(Debug, Clone, Default)]
    pub struct Claims {
        /// Commands whose run failed (the exit code may say otherwise).
        pub failed_runs: Vec<String>,
        /// Keywords of checks that never passed in the session.
        pub never_passed: Vec<String>,
        /// Whether the failure was left unresolved.
        pub unresolved: bool,
        /// The user's prompts.
        pub requests: Vec<String>,
    }

    /// One recorded hook call.
    #[derive(Debug, Clone)]
    pub struct HookCall {
        /// As `agent-memory hook --agent` takes it.
        pub agent: String,
        pub event: String,
        /// The sanitized payload, as JSON text.
        pub payload: String,
        /// Lines the agent's transcript gained before this call that agent-memory reads (Codex's
        /// rollout file changes, Copilot CLI's session log messages).
        pub transcript: Vec<String>,
    }

    /// Where a replay puts what the placeholders stand for, and the salt that keeps the ids of
    /// one scenario apart from another's in a shared store (0 keeps them as recorded).
    #[derive(Debug, Clone)]
    pub struct Places {
        pub home: PathBuf,
        pub project: PathBuf,
        pub salt: u32,
    }

    /// The folder of HOME a session recorded outside any project ran in (`"no_project": true`):
    /// a plain folder, as the recorder left it.
    pub const NO_PROJECT_DIR: &str = "notes";

    pub fn sessions_dir() -> PathBuf {
        crate::fixtures_dir().join("sessions")
    }

    fn strings(value: &serde_json::Value) -> Vec<String> {
        value
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    }

    /// The scenario `name`, with its recorded hook calls (none when it was never recorded).
    pub fn load(name: &str) -> Scenario {
        let dir = sessions_dir().join(name);
        let text = std::fs::read_to_string(dir.join("scenario.json"))
            .unwrap_or_else(|e| panic!("cannot read the scenario {name}: {e}"));
        let s: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}/scenario.json: {e}"));
        let gold = &s["gold"];
        let facts = gold["facts"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|f| Fact {
                id: f["id"].as_str().unwrap_or_default().to_owned(),
                keywords: strings(&f["keywords"]),
            })
            .collect();
        let claims = &s["claims"];
        let hooks = std::fs::read_to_string(dir.join("hooks.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                let v: serde_json::Value = serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{name}/hooks.jsonl: {e}"));
                HookCall {
                    agent: v["agent"].as_str().unwrap_or_default().to_owned(),
                    event: v["event"].as_str().unwrap_or_default().to_owned(),
                    payload: v["payload"].to_string(),
                    transcript: v["transcript"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|l| l.to_string())
                        .collect(),
                }
            })
            .collect();
        let agent = s["agent"].as_str().unwrap_or_default().to_owned();
        let steps = s["turns"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|turn| turn["steps"].as_array().cloned().unwrap_or_default().into_iter());
        let commands = steps
            .filter_map(|step| match (step["shell"].as_str(), step["read"].as_str()) {
                (Some(command), _) => Some(command.to_owned()),
                (None, Some(file)) if agent == "codex" => Some(format!("cat {file}")),
                _ => None,
            })
            .collect();
        Scenario {
            name: name.to_owned(),
            agent,
            categories: strings(&s["categories"]),
            language: s["language"].as_str().unwrap_or("en").to_owned(),
            facts,
            follow_up: gold["follow_up"].as_str().unwrap_or_default().to_owned(),
            query: gold["query"].as_str().unwrap_or_default().to_owned(),
            subjects: strings(&gold["subjects"]),
            claims: Claims {
                failed_runs: strings(&claims["failed_runs"]),
                never_passed: strings(&claims["never_passed"]),
                unresolved: claims["unresolved"].as_bool().unwrap_or(false),
                requests: strings(&claims["requests"]),
            },
            hooks,
            no_project: s["no_project"].as_bool().unwrap_or(false),
            commands,
        }
    }

    /// Every recorded scenario, by name.
    pub fn load_all() -> Vec<Scenario> {
        let mut names: Vec<String> = std::fs::read_dir(sessions_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("hooks.jsonl").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names.iter().map(|n| load(n)).collect()
    }

    /// `text` with the placeholders replaced by `places` and the ids salted.
    pub fn localize(text: &str, places: &Places) -> String {
        let project = places.project.to_string_lossy();
        let home = places.home.to_string_lossy();
        let text = text.replace(PROJECT_PLACEHOLDER, &project).replace(HOME_PLACEHOLDER, &home);
        salt_ids(&text, places.salt)
    }

    /// Gives the placeholder ids of one scenario numbers of their own: UUIDs
    /// (`…-0000-4000-8000-000000000000`), prefixed ids (`call_000…1`) and Hermes session ids.
    fn salt_ids(text: &str, salt: u32) -> String {
        if salt == 0 {
            return text.to_owned();
        }
        let mut out = text
            .replace("-0000-4000-8000-000000000000", &format!("-0000-4000-8000-{salt:012}"))
            .replace("20260101_000000_", &format!("20260101_{salt:06}_"));
        for prefix in
            ["toolu_", "call_", "msg_", "prt_", "ses_", "evt_", "resp_", "chatcmpl_", "fc_"]
        {
            let mut next = String::with_capacity(out.len());
            let mut rest = out.as_str();
            while let Some(at) = rest.find(prefix) {
                let (head, tail) = rest.split_at(at + prefix.len());
                next.push_str(head);
                let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
                let boundary = !head[..at].ends_with(|c: char| c.is_ascii_alphanumeric());
                if digits >= 8 && boundary {
                    next.push_str(&format!("{:04}", salt % 10_000));
                    rest = &tail[4..];
                } else {
                    rest = tail;
                }
            }
            next.push_str(rest);
            out = next;
        }
        out
    }

    /// What a replay did.
    #[derive(Debug, Default, Clone)]
    pub struct Replayed {
        pub hooks: usize,
        /// Hook runs that printed something (an answer to the agent).
        pub answered: usize,
    }

    /// Replays `scenario`'s hook calls in order through the real binary of `home`, each as
    /// `agent-memory hook --agent A --event E` with the localized payload on stdin; before a call,
    /// the transcript lines recorded with it are appended to the transcript it names (or, when it
    /// names none, the one the scenario's payloads named last). Panics when a hook exits non-zero
    /// (a hook always exits 0).
    pub fn replay(home: &TestHome, scenario: &Scenario, places: &Places) -> Replayed {
        replay_calls(home, &scenario.name, &scenario.hooks, places, None).0
    }

    /// Replays like [`replay`], on a clock that starts at `start_ms`: the times the recorder
    /// numbered (the n-th distinct time of a recording is 2026-01-01T00:00:00Z plus n seconds,
    /// as epoch milliseconds or RFC 3339 text) become `start_ms` plus n milliseconds, so sessions
    /// replayed one after another into one store follow each other whichever agent recorded them
    /// (hooks of agents whose payloads carry no time are stamped on arrival anyway). Returns once
    /// the last time handed out has passed.
    pub fn replay_from(
        home: &TestHome,
        scenario: &Scenario,
        places: &Places,
        start_ms: i64,
    ) -> Replayed {
        replay_calls(home, &scenario.name, &scenario.hooks, places, Some(start_ms)).0
    }

    /// Runs `calls` in order as [`replay`] does (`start_ms` as for [`replay_from`]); what each
    /// hook printed, in order. `name` names the calls in a panic message.
    pub fn replay_calls(
        home: &TestHome,
        name: &str,
        calls: &[HookCall],
        places: &Places,
        start_ms: Option<i64>,
    ) -> (Replayed, Vec<Vec<u8>>) {
        std::fs::create_dir_all(&places.project).expect("create the project directory");
        // As it was recorded: a session's project was a git repository (the recorder commits
        // its files before the agent starts), the no-project folder a plain one.
        if places.project != places.home.join(NO_PROJECT_DIR) {
            std::fs::create_dir_all(places.project.join(".git")).expect("mark the repository");
        }
        let mut done = Replayed::default();
        let mut printed = Vec::new();
        let mut transcript = None;
        let mut latest = 0;
        let clock = |text: String, latest: &mut i64| match start_ms {
            Some(start) => shift_times(&text, start, latest),
            None => text,
        };
        for call in calls {
            let payload = clock(localize(&call.payload, places), &mut latest);
            transcript = transcript_path(&payload).or(transcript);
            if let Some(path) = transcript.as_deref().filter(|_| !call.transcript.is_empty()) {
                // An agent whose hooks carry no time of their own has its hooks stamped on
                // arrival, now; its transcript lines are stamped now too, so the two clocks
                // agree as they did when the session was recorded.
                let restamp = !payload.contains("\"timestamp\"");
                let lines: Vec<String> = call
                    .transcript
                    .iter()
                    .map(|line| clock(localize(line, places), &mut latest))
                    .collect();
                append_transcript(Path::new(path), &lines, restamp);
            }
            let out = home.hook(&call.agent, &call.event, payload.as_bytes());
            assert!(
                out.status.success(),
                "{name}: the {} hook failed:\n{}",
                call.event,
                crate::describe(&out)
            );
            done.hooks += 1;
            done.answered += usize::from(!out.stdout.is_empty());
            printed.push(out.stdout);
        }
        // The next session must not start before this one's last time.
        let wait = latest - now_ms();
        if wait > 0 {
            std::thread::sleep(std::time::Duration::from_millis(wait as u64 + 1));
        }
        (done, printed)
    }

    /// The transcript a payload names: `transcript_path`, or Copilot CLI's `transcriptPath`.
    fn transcript_path(payload: &str) -> Option<String> {
        let value: serde_json::Value = serde_json::from_str(payload).unwrap_or_default();
        ["transcript_path", "transcriptPath"]
            .iter()
            .find_map(|key| value[*key].as_str())
            .map(str::to_owned)
    }

    /// Appends localized `lines` to a transcript; with `restamp`, each line's `timestamp` is now.
    fn append_transcript(path: &Path, lines: &[String], restamp: bool) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create the transcript's directory");
        }
        // Appended as the agent appends to its transcript, in a test's own temp home.
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .expect("open the transcript");
        for line in lines {
            let mut line = line.clone();
            if restamp
                && let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&line)
                && value.get("timestamp").is_some_and(serde_json::Value::is_string)
            {
                value["timestamp"] = serde_json::Value::String(iso_utc(now_ms()));
                line = value.to_string();
            }
            writeln!(file, "{line}").expect("append to the transcript");
        }
    }

    /// Milliseconds since the Unix epoch, now.
    pub fn now_ms() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    }

    /// The recorder's first time, 2026-01-01T00:00:00Z, in epoch milliseconds.
    const RECORDED_MS: i64 = 1_767_225_600_000;

    /// A recorded time (within a day of [`RECORDED_MS`]) on a clock starting at `start_ms`, one
    /// millisecond for each recorded second.
    fn shifted(ms: i64, start_ms: i64) -> Option<i64> {
        (RECORDED_MS..RECORDED_MS + 86_400_000)
            .contains(&ms)
            .then(|| start_ms + (ms - RECORDED_MS) / 1000)
    }

    /// Epoch milliseconds of a recorded RFC 3339 time: `2026-01-01THH:MM:SS`, an optional
    /// fraction, then `Z` or `+00:00`.
    fn recorded_iso_ms(text: &str) -> Option<i64> {
        let rest = text.strip_prefix("2026-01-01T")?;
        let (hms, tail) = (rest.get(..8)?, rest.get(8..)?);
        let mut parts = hms.split(':').map(|p| {
            (p.len() == 2 && p.bytes().all(|b| b.is_ascii_digit())).then(|| p.parse::<i64>().ok())
        });
        let (Some(Some(Some(h))), Some(Some(Some(m))), Some(Some(Some(sec))), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let (fraction, zone) = match tail.strip_prefix('.') {
            Some(t) => t.split_at(t.bytes().take_while(u8::is_ascii_digit).count()),
            None => ("", tail),
        };
        if !matches!(zone, "Z" | "+00:00") {
            return None;
        }
        let millis: i64 = format!("{fraction:0<3}")[..3].parse().ok()?;
        Some(RECORDED_MS + (h * 3600 + m * 60 + sec) * 1000 + millis)
    }

    /// `text` (JSON) with every recorded time moved to the clock that starts at `start_ms`;
    /// `latest` rises to the latest time handed out. Text that is not JSON is left as it is.
    pub fn shift_times(text: &str, start_ms: i64, latest: &mut i64) -> String {
        fn walk(value: &mut serde_json::Value, start_ms: i64, latest: &mut i64) {
            match value {
                serde_json::Value::Number(n) => {
                    if let Some(ms) = n.as_i64().and_then(|ms| shifted(ms, start_ms)) {
                        *latest = (*latest).max(ms);
                        *value = serde_json::Value::from(ms);
                    }
                }
                serde_json::Value::String(s) => {
                    if let Some(ms) = recorded_iso_ms(s).and_then(|ms| shifted(ms, start_ms)) {
                        *latest = (*latest).max(ms);
                        *s = iso_utc(ms);
                    }
                }
                serde_json::Value::Array(items) => {
                    items.iter_mut().for_each(|v| walk(v, start_ms, latest));
                }
                serde_json::Value::Object(map) => {
                    map.values_mut().for_each(|v| walk(v, start_ms, latest));
                }
                _ => {}
            }
        }
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(mut value) => {
                walk(&mut value, start_ms, latest);
                value.to_string()
            }
            Err(_) => text.to_owned(),
        }
    }

    /// Epoch milliseconds as RFC 3339 in UTC with milliseconds, as agents stamp transcript lines.
    pub fn iso_utc(ms: i64) -> String {
        let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        let (h, m, sec, milli) =
            (rest / 3_600_000, rest / 60_000 % 60, rest / 1000 % 60, rest % 1000);
        format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{sec:02}.{milli:03}Z")
    }

    /// Every string in a JSON value, one a line, leaving out the values of `skip` keys.
    pub fn json_text(value: &serde_json::Value, skip: &[&str]) -> String {
        fn walk(value: &serde_json::Value, skip: &[&str], out: &mut Vec<String>) {
            match value {
                serde_json::Value::String(s) => out.push(s.clone()),
                serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, skip, out)),
                serde_json::Value::Object(map) => {
                    for (key, v) in map {
                        if !skip.contains(&key.as_str()) {
                            walk(v, skip, out);
                        }
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(value, skip, &mut out);
        out.join("\n")
    }

    fn has(text: &str, keyword: &str) -> bool {
        keyword.split('|').any(|alt| !alt.is_empty() && text.contains(&alt.to_lowercase()))
    }

    /// Whether `text` holds every keyword of `fact`.
    pub fn fact_found(text: &str, fact: &Fact) -> bool {
        let text = text.to_lowercase();
        !fact.keywords.is_empty() && fact.keywords.iter().all(|k| has(&text, k))
    }

    /// Whether the session's requests alone already hold `fact` (a briefing that repeats the
    /// request finds it without having learned anything from the work).
    pub fn in_request(fact: &Fact, claims: &Claims) -> bool {
        fact_found(&claims.requests.join("\n"), fact)
    }

    /// The facts of `facts` that `text` holds.
    pub fn facts_found<'a>(text: &str, facts: &'a [Fact]) -> Vec<&'a Fact> {
        facts.iter().filter(|f| fact_found(text, f)).collect()
    }

    /// `text` cut into statements: lines, and lines at sentence ends.
    pub fn statements(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for line in text.lines() {
            let mut current = String::new();
            let mut chars = line.chars().peekable();
            while let Some(c) = chars.next() {
                current.push(c);
                let ends = matches!(c, '。' | '！' | '？')
                    || (matches!(c, '.' | '!' | '?') && chars.peek().is_some_and(|n| *n == ' '));
                if ends {
                    out.push(std::mem::take(&mut current).trim().to_owned());
                }
            }
            out.push(current.trim().to_owned());
        }
        out.retain(|s| !s.is_empty());
        out
    }

    const PASS: &[&str] = &["pass", "succeed", "success", "通过", "成功"];
    const FAIL: &[&str] =
        &["fail", "error", "still", "not pass", "失败", "未通过", "没有通过", "仍"];
    const FIXED: &[&str] =
        &["fixed", "fixes", "resolved", "solved", "bugfix", "修复了", "已修复", "解决了", "已解决"];
    const NOT_FIXED: &[&str] =
        &["not", "n't", "unfixed", "unresolved", "still", "yet", "未", "没有", "仍", "还没"];

    fn any(text: &str, words: &[&str]) -> bool {
        words.iter().any(|w| text.contains(w))
    }

    /// Whether `statement` names `command` as a whole, not as the start of a longer command.
    fn names_command(statement: &str, command: &str) -> bool {
        let command = command.split_whitespace().collect::<Vec<_>>().join(" ");
        let statement = statement.split_whitespace().collect::<Vec<_>>().join(" ");
        if command.is_empty() {
            return false;
        }
        statement.match_indices(&command).any(|(at, _)| {
            let after = &statement[at + command.len()..];
            let rest = after.trim_start();
            after.is_empty()
                || after.starts_with(['`', '\'', '"', ')', ']', ':', ','])
                || (after.starts_with(' ')
                    && !rest.starts_with(['&', '|', ';', '>', '<'])
                    && !rest.starts_with("2>"))
        })
    }

    /// A question claims nothing: `Is the crash fixed?`.
    fn is_question(statement: &str) -> bool {
        statement.ends_with(['?', '？'])
    }

    /// The statements of `text` that say a failed run, or a check that never passed, passed.
    pub fn false_passes(text: &str, claims: &Claims) -> Vec<String> {
        statements(text)
            .into_iter()
            .filter(|s| !is_question(s))
            .filter(|s| {
                let lower = s.to_lowercase();
                let about = claims.failed_runs.iter().any(|c| names_command(s, c))
                    || claims.never_passed.iter().any(|k| lower.contains(&k.to_lowercase()));
                about && any(&lower, PASS) && !any(&lower, FAIL)
            })
            .collect()
    }

    /// The statements of `text` that say an unresolved failure was fixed.
    pub fn false_fixes(text: &str, claims: &Claims) -> Vec<String> {
        if !claims.unresolved {
            return Vec::new();
        }
        statements(text)
            .into_iter()
            .filter(|s| !is_question(s))
            .filter(|s| {
                let lower = s.to_lowercase();
                any(&lower, FIXED) && !any(&lower, NOT_FIXED)
            })
            .collect()
    }

    /// Words for comparing requests: ASCII words of two or more characters, and each CJK
    /// character on its own.
    pub fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut word = String::new();
        for c in text.to_lowercase().chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
                continue;
            }
            if word.len() >= 2 {
                out.push(std::mem::take(&mut word));
            }
            word.clear();
            if !c.is_ascii() && c.is_alphanumeric() {
                out.push(c.to_string());
            }
        }
        if word.len() >= 2 {
            out.push(word);
        }
        out
    }

    /// The next steps that repeat one of the session's requests.
    pub fn repeated_requests(next_steps: &[String], claims: &Claims) -> Vec<String> {
        next_steps
            .iter()
            .filter(|step| {
                let step_words: std::collections::HashSet<String> =
                    words(step).into_iter().collect();
                claims.requests.iter().any(|request| {
                    let asked = words(request);
                    let held = asked.iter().filter(|w| step_words.contains(*w)).count();
                    step.contains(request.as_str())
                        || (asked.len() >= 3 && held * 10 >= asked.len() * 6)
                })
            })
            .cloned()
            .collect()
    }

    /// The next steps a briefing lists: its lines that start with `Next` or `下一步` (after list
    /// marks and emphasis).
    pub fn briefing_next_steps(briefing: &str) -> Vec<String> {
        briefing
            .lines()
            .map(|l| l.trim_start_matches(['-', '*', ' ', '#', '>']))
            .filter(|l| l.to_lowercase().starts_with("next") || l.starts_with("下一步"))
            .map(str::to_owned)
            .collect()
    }

    /// The subjects that are file paths held by exactly one of `scenarios`, with their scenario.
    pub fn own_subjects(scenarios: &[Scenario]) -> Vec<(String, String)> {
        let paths = |s: &Scenario| -> Vec<String> {
            s.subjects.iter().filter(|p| p.contains(['.', '/'])).cloned().collect()
        };
        let mut out = Vec::new();
        for s in scenarios {
            for path in paths(s) {
                let holders = scenarios.iter().filter(|o| paths(o).contains(&path)).count();
                if holders == 1 {
                    out.push((path, s.name.clone()));
                }
            }
        }
        out
    }

    /// The scenarios whose own subjects `text` names; an item naming two or more is merged.
    pub fn scenarios_named(text: &str, own: &[(String, String)]) -> Vec<String> {
        let mut named: Vec<String> = own
            .iter()
            .filter(|(path, _)| {
                text.match_indices(path.as_str())
                    .any(|(at, _)| !text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
            })
            .map(|(_, name)| name.clone())
            .collect();
        named.sort();
        named.dedup();
        named
    }

    // Chains: what a person tells one agent, and what the next agent is handed.

    /// A chain of recorded sessions (`fixtures/sessions/chains.json`): the sessions in order,
    /// each in a project or in no project, what the user did between them, then the next agent,
    /// its project and its first prompt. What that agent is handed (its session-start and
    /// first-prompt hooks' output) is scored against the chain's gold facts and false claims.
    #[derive(Debug, Clone)]
    pub struct Chain {
        pub name: String,
        /// What the chain is a case of (`preference`, `reversal`, …); the bench groups by it.
        pub kind: String,
        /// `en`, `zh` or `mixed`.
        pub language: String,
        pub steps: Vec<Step>,
        pub next: Next,
        /// What the next agent should be handed, each a set of keywords one line must carry.
        pub facts: Vec<Fact>,
        pub claims: ChainClaims,
    }

    /// One step of a chain.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Step {
        /// A recorded session, replayed in the project of that name (`None`: in `~/notes`, a
        /// plain folder that is no git repository, as it was recorded).
        Session { name: String, project: Option<String> },
        /// The user runs `agent-memory work`.
        Work,
        /// The user approves every candidate: `agent-memory review --approve ID` for each one
        /// `review --json` lists.
        Approve,
    }

    /// The agent that starts after a chain, and how.
    #[derive(Debug, Clone)]
    pub struct Next {
        /// As `agent-memory hook --agent` takes it (`claude-code`, `codex`, …).
        pub agent: String,
        /// Its project (`None`: `~/notes`, no project).
        pub project: Option<String>,
        /// Its first prompt.
        pub prompt: String,
    }

    /// What would be false in what a chain's next agent is handed, or in the store.
    #[derive(Debug, Clone, Default)]
    pub struct ChainClaims {
        /// Keyword sets of choices a later session replaced: a line of the handed context that
        /// holds one is a false claim unless it marks the replacement ([`REPLACED`]) or names
        /// the choice that replaced it (a `current` set).
        pub superseded: Vec<Vec<String>>,
        /// Keyword sets of what replaced them.
        pub current: Vec<Vec<String>>,
        /// Checks the chain's sessions ran again after a change: a statement that one was not
        /// run again is false.
        pub rerun: Vec<String>,
        /// Requests of the chain's sessions that are no decision: an observation or memory of
        /// kind `decision` holding one is false.
        pub requests: Vec<String>,
        /// Keyword sets of another project's conventions: a line of the handed context holding
        /// one hands a convention to the wrong project.
        pub foreign: Vec<Vec<String>>,
        /// Keyword sets of the person's own preferences, stated outside any project: kept only
        /// as memory of a project, they are scoped wrong.
        pub person: Vec<Vec<String>>,
    }

    fn keyword_sets(value: &serde_json::Value) -> Vec<Vec<String>> {
        value.as_array().into_iter().flatten().map(strings).collect()
    }

    /// The chains of `fixtures/sessions/chains.json`, in file order (none when there is no file).
    /// Panics on a step it does not know, or a session that is not in the corpus.
    pub fn load_chains() -> Vec<Chain> {
        let path = sessions_dir().join("chains.json");
        let Ok(text) = std::fs::read_to_string(&path) else { return Vec::new() };
        let file: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let project = |v: &serde_json::Value| v["project"].as_str().map(str::to_owned);
        file["chains"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let name = c["name"].as_str().unwrap_or_default().to_owned();
                let steps = c["steps"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|step| match (step["session"].as_str(), step["user"].as_str()) {
                        (Some(session), None) => {
                            assert!(
                                sessions_dir().join(session).join("hooks.jsonl").is_file(),
                                "chain {name}: no recorded session {session}"
                            );
                            Step::Session { name: session.to_owned(), project: project(step) }
                        }
                        (None, Some("work")) => Step::Work,
                        (None, Some("approve")) => Step::Approve,
                        _ => panic!(
                            "chain {name}: a step is a session or a user's work or approve: {step}"
                        ),
                    })
                    .collect();
                let next = &c["next"];
                let claims = &c["claims"];
                Chain {
                    kind: c["kind"].as_str().unwrap_or_default().to_owned(),
                    language: c["language"].as_str().unwrap_or("en").to_owned(),
                    steps,
                    next: Next {
                        agent: next["agent"].as_str().unwrap_or_default().to_owned(),
                        project: project(next),
                        prompt: next["prompt"].as_str().unwrap_or_default().to_owned(),
                    },
                    facts: c["gold"]["facts"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|f| Fact {
                            id: f["id"].as_str().unwrap_or_default().to_owned(),
                            keywords: strings(&f["keywords"]),
                        })
                        .collect(),
                    claims: ChainClaims {
                        superseded: keyword_sets(&claims["superseded"]),
                        current: keyword_sets(&claims["current"]),
                        rerun: strings(&claims["rerun"]),
                        requests: strings(&claims["requests"]),
                        foreign: keyword_sets(&claims["foreign"]),
                        person: keyword_sets(&claims["person"]),
                    },
                    name,
                }
            })
            .collect()
    }

    /// The sessions `chains` replay, by name, each once.
    pub fn chained_sessions(chains: &[Chain]) -> Vec<String> {
        let mut names: Vec<String> = chains
            .iter()
            .flat_map(|c| &c.steps)
            .filter_map(|step| match step {
                Step::Session { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// The events that start an agent's session and carry its first prompt, as `agent-memory
    /// hook --event` names them, and the corpus session whose recorded calls stand for them.
    pub fn next_session_events(agent: &str) -> Option<(&'static str, &'static str, &'static str)> {
        Some(match agent {
            "claude-code" => ("SessionStart", "UserPromptSubmit", "claude-store-decision"),
            "codex" => ("SessionStart", "UserPromptSubmit", "codex-ratelimit-decision"),
            "gemini" => ("SessionStart", "BeforeAgent", "gemini-flags-reverse"),
            "opencode" => ("session.created", "chat.message", "opencode-jobqueue-write"),
            "copilot" => ("sessionStart", "userPromptSubmitted", "copilot-matrix-edit"),
            "hermes" => ("on_session_start", "pre_llm_call", "hermes-uuid-decision"),
            _ => return None,
        })
    }

    /// The first two hook calls of `agent`'s next session: the recorded session start and first
    /// prompt of its stand-in session ([`next_session_events`]), with `prompt` wherever the
    /// recorded prompt was. Panics for an agent it does not know.
    pub fn next_session_calls(agent: &str, prompt: &str) -> Vec<HookCall> {
        let (start, asked, stand_in) =
            next_session_events(agent).unwrap_or_else(|| panic!("no next session for {agent}"));
        let recorded = load(stand_in);
        let old = recorded.claims.requests.first().cloned().unwrap_or_default();
        fn swap(value: &mut serde_json::Value, old: &str, new: &str) {
            match value {
                serde_json::Value::String(s) if !old.is_empty() && s.contains(old) => {
                    *s = s.replace(old, new);
                }
                serde_json::Value::Array(items) => items.iter_mut().for_each(|v| swap(v, old, new)),
                serde_json::Value::Object(map) => map.values_mut().for_each(|v| swap(v, old, new)),
                _ => {}
            }
        }
        [start, asked]
            .iter()
            .map(|event| {
                let call = recorded
                    .hooks
                    .iter()
                    .find(|c| c.event == *event)
                    .unwrap_or_else(|| panic!("{stand_in} has no {event} hook"));
                let mut payload: serde_json::Value =
                    serde_json::from_str(&call.payload).expect("a recorded payload is JSON");
                swap(&mut payload, &old, prompt);
                HookCall {
                    agent: call.agent.clone(),
                    event: call.event.clone(),
                    payload: payload.to_string(),
                    transcript: Vec::new(),
                }
            })
            .collect()
    }

    /// Labels before which a line only echoes a request: the rest of the line states nothing.
    pub const ECHO_LABELS: &[&str] = &[
        "Asked for:",
        "Asked:",
        "Request:",
        "请求：",
        "问题：",
        "需求：",
        "请求:",
        "问题:",
        "需求:",
    ];

    /// `text` with its runs of whitespace made one space, trimmed.
    fn squeeze(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The pieces of a request that, copied as they are, only quote it: the request whole, and
    /// each of its sentences ([`statements`]) of 16 characters or more without its closing stop.
    fn quoted_pieces(request: &str) -> Vec<String> {
        let request = squeeze(request);
        let mut pieces = vec![request.clone()];
        for sentence in statements(&request) {
            let bare = sentence.trim_end_matches(['.', '!', '?', '。', '！', '？']).trim();
            if bare.chars().count() >= 16 && !pieces.iter().any(|p| p == bare) {
                pieces.push(bare.to_owned());
            }
        }
        pieces.retain(|p| !p.is_empty());
        pieces
    }

    /// The lines of a handed context that state something, with what only echoes a request
    /// left out: a line is cut at an [`ECHO_LABELS`] label, and a request, or a sentence of it,
    /// copied whole (or clipped: at least 20 characters of its start, then `…` or `...`) is
    /// taken out.
    pub fn stated_lines(text: &str, requests: &[String]) -> Vec<String> {
        let pieces: Vec<String> = requests.iter().flat_map(|r| quoted_pieces(r)).collect();
        text.lines()
            .map(|line| {
                let mut line = squeeze(line);
                if let Some(at) = ECHO_LABELS.iter().filter_map(|l| line.find(l)).min() {
                    line.truncate(at);
                }
                for piece in &pieces {
                    line = line.replace(piece.as_str(), " ");
                    line = cut_clipped(&line, piece);
                }
                squeeze(&line)
            })
            .filter(|line| !line.is_empty())
            .collect()
    }

    /// `line` without any run of 20 or more characters that is the start of `request` and
    /// ends where the line then says `…` or `...`, the ellipsis with it.
    fn cut_clipped(line: &str, request: &str) -> String {
        let request: Vec<char> = request.chars().collect();
        let chars: Vec<char> = line.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        while i < chars.len() {
            // How long the ellipsis at `at` is, if there is one.
            let ellipsis = |at: usize| match chars.get(at) {
                Some('…') => Some(1),
                Some('.') if chars[at..].starts_with(&['.', '.', '.']) => Some(3),
                _ => None,
            };
            let held = (0..request.len().min(chars.len() - i))
                .take_while(|k| chars[i + k] == request[*k])
                .count();
            // Back off to a clipped word's end: the echo may stop mid-word before its ellipsis.
            let end = (20..=held).rev().find_map(|k| ellipsis(i + k).map(|dots| k + dots));
            match end {
                Some(k) => i += k,
                None => {
                    out.push(chars[i]);
                    i += 1;
                }
            }
        }
        out
    }

    /// The facts of `facts` that one of `lines` carries whole.
    pub fn facts_stated<'a>(lines: &[String], facts: &'a [Fact]) -> Vec<&'a Fact> {
        facts.iter().filter(|f| lines.iter().any(|line| fact_found(line, f))).collect()
    }

    /// Words that mark a choice as replaced.
    pub const REPLACED: &[&str] = &[
        "supersed",
        "replaced",
        "no longer",
        "不再",
        "已替换",
        "替换为",
        "改为",
        "改成",
        "换成",
        "不用",
    ];

    fn holds_all(lower: &str, keywords: &[String]) -> bool {
        !keywords.is_empty() && keywords.iter().all(|k| has(lower, k))
    }

    /// Whether a (lower-cased) line marks something as replaced: a [`REPLACED`] word, or `was`
    /// followed later by `until`.
    fn marks_replaced(lower: &str) -> bool {
        any(lower, REPLACED) || lower.find("was ").is_some_and(|at| lower[at..].contains("until"))
    }

    /// The lines of `text` that state a replaced choice as if it held: they hold a `superseded`
    /// set, no mark of the replacement, and no `current` set.
    pub fn superseded_as_current(text: &str, claims: &ChainClaims) -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|line| {
                let lower = line.to_lowercase();
                claims.superseded.iter().any(|old| holds_all(&lower, old))
                    && !marks_replaced(&lower)
                    && !claims.current.iter().any(|new| holds_all(&lower, new))
            })
            .map(str::to_owned)
            .collect()
    }

    /// Phrases that say a check was not run again.
    pub const NOT_RERUN: &[&str] = &[
        "not run again",
        "not re-run",
        "not rerun",
        "never re-run",
        "never rerun",
        "never run again",
        "wasn't run again",
        "not been run again",
        "未再运行",
        "未再次运行",
        "未重新运行",
        "没有再次运行",
        "没有再运行",
        "没有重新运行",
        "没再运行",
        "没有再跑",
        "没再跑",
    ];

    /// The statements of `text` that say a check was not run again (false when the chain's
    /// sessions ran one again, [`ChainClaims::rerun`]).
    pub fn not_rerun_claims(text: &str, claims: &ChainClaims) -> Vec<String> {
        if claims.rerun.is_empty() {
            return Vec::new();
        }
        statements(text)
            .into_iter()
            .filter(|s| !is_question(s) && any(&s.to_lowercase(), NOT_RERUN))
            .collect()
    }

    /// Whether `text` holds `request`: verbatim (whitespace aside, without its closing stop),
    /// or at least 60% of its words when it has three or more ([`words`]).
    pub fn holds_request(text: &str, request: &str) -> bool {
        let text_lower = squeeze(&text.to_lowercase());
        let request_lower = squeeze(&request.to_lowercase());
        let bare = request_lower.trim_end_matches(['.', '。', '!', '！']);
        if !bare.is_empty() && text_lower.contains(bare) {
            return true;
        }
        let held: std::collections::HashSet<String> = words(text).into_iter().collect();
        let asked = words(request);
        asked.len() >= 3
            && asked.iter().filter(|w| held.contains(*w)).count() * 10 >= asked.len() * 6
    }

    /// The items (kind or type, text) of kind `decision` that hold one of the chain's requests
    /// that are no decision.
    pub fn requests_as_decisions(items: &[(String, String)], claims: &ChainClaims) -> Vec<String> {
        items
            .iter()
            .filter(|(kind, text)| {
                kind == "decision" && claims.requests.iter().any(|r| holds_request(text, r))
            })
            .map(|(_, text)| text.lines().next().unwrap_or_default().to_owned())
            .collect()
    }

    /// The lines of `text` that hold another project's convention ([`ChainClaims::foreign`]).
    pub fn foreign_conventions(text: &str, claims: &ChainClaims) -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|line| {
                let lower = line.to_lowercase();
                claims.foreign.iter().any(|set| holds_all(&lower, set))
            })
            .map(str::to_owned)
            .collect()
    }

    /// The person's preferences ([`ChainClaims::person`]) that memory keeps only under a
    /// project: `memories` (`memories --all --json`) has candidates or active memories holding
    /// the preference, and every one of them has a project. One text for each.
    pub fn person_only_in_project(
        memories: &[serde_json::Value],
        claims: &ChainClaims,
    ) -> Vec<String> {
        claims
            .person
            .iter()
            .filter_map(|set| {
                let holding: Vec<&serde_json::Value> = memories
                    .iter()
                    .filter(|m| matches!(m["status"].as_str(), Some("candidate" | "active")))
                    .filter(|m| {
                        holds_all(&m["text"].as_str().unwrap_or_default().to_lowercase(), set)
                    })
                    .collect();
                let scoped = !holding.is_empty() && holding.iter().all(|m| !m["project"].is_null());
                scoped.then(|| holding[0]["text"].as_str().unwrap_or_default().to_owned())
            })
            .collect()
    }

    /// The titles that hold one of a session's command lines verbatim (its first line, runs of
    /// whitespace aside), where no letter, digit or `_` touches it on either side.
    pub fn command_titles(titles: &[String], commands: &[String]) -> Vec<String> {
        let commands: Vec<String> = commands
            .iter()
            .map(|c| squeeze(c.lines().next().unwrap_or_default()))
            .filter(|c| !c.is_empty())
            .collect();
        let word = |c: char| c.is_alphanumeric() || c == '_';
        titles
            .iter()
            .filter(|title| {
                let title = squeeze(title);
                commands.iter().any(|command| {
                    title.match_indices(command.as_str()).any(|(at, _)| {
                        !title[..at].ends_with(word)
                            && !title[at + command.len()..].starts_with(word)
                    })
                })
            })
            .cloned()
            .collect()
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn owned(items: &[&str]) -> Vec<String> {
            items.iter().map(|s| (*s).to_owned()).collect()
        }

        #[test]
        fn a_request_echo_states_nothing() {
            let requests =
                owned(&["Remember that I prefer British spelling and short paragraphs in docs."]);
            let text = "## Last session\n\
                        - Asked: Remember that I prefer British spelling and short paragraphs in docs.\n\
                        - o1 Remember that I prefer British spelling and short…\n\
                        - m2 [preference] British spelling, short paragraphs";
            let lines = stated_lines(text, &requests);
            assert_eq!(
                lines,
                [
                    "## Last session",
                    "-",
                    "- o1",
                    "- m2 [preference] British spelling, short paragraphs"
                ]
            );
            let facts = [Fact { id: "f".into(), keywords: owned(&["British spelling"]) }];
            assert_eq!(facts_stated(&lines, &facts).len(), 1);
            assert!(facts_stated(&lines[..3], &facts).is_empty());
            // The person's words restated, not quoted whole, count; a sentence of the request
            // copied as it is does not.
            let restated = stated_lines(
                "写文档喜欢口语化，短句",
                &owned(&["记住：我写文档喜欢口语化，短句，不要术语。"]),
            );
            assert_eq!(restated, ["写文档喜欢口语化，短句"]);
            let request = owned(&[
                "以后接口的错误信息都用中文返回，错误码保持英文大写。先把 errors.py 里现有的两条改了。",
            ]);
            assert_eq!(
                stated_lines(
                    "- Decision: \"以后接口的错误信息都用中文返回，错误码保持英文大写.\n- 错误信息用中文",
                    &request
                ),
                ["- Decision: \" .", "- 错误信息用中文"]
            );
        }

        #[test]
        fn a_replaced_choice_needs_its_mark() {
            let claims = ChainClaims {
                superseded: vec![owned(&["redis", "queue|队列"])],
                current: vec![owned(&["jetstream|nats"])],
                ..ChainClaims::default()
            };
            let text = "- m1 [decision] Use Redis for the job queue: it already runs for the cache.\n\
                        - Redis for the job queue was superseded: NATS JetStream keeps jobs on failover.\n\
                        - Switched the job queue from Redis to JetStream.\n\
                        - Redis was the job queue until it lost jobs.\n\
                        - 我们不用 Redis 做队列了\n\
                        - Redis stays the cache.";
            assert_eq!(
                superseded_as_current(text, &claims),
                ["- m1 [decision] Use Redis for the job queue: it already runs for the cache."]
            );
        }

        #[test]
        fn claims_of_checks_requests_projects_and_titles() {
            let claims = ChainClaims {
                rerun: owned(&["test_text"]),
                requests: owned(&[
                    "Fix the API route bug: /users/:id returns 404 for existing users.",
                ]),
                foreign: vec![owned(&["commit", "imperative"])],
                person: vec![owned(&["british spelling"])],
                ..ChainClaims::default()
            };
            assert_eq!(
                not_rerun_claims(
                    "The test was not run again. 测试未再运行。Was it re-run?",
                    &claims
                ),
                ["The test was not run again.", "测试未再运行。"]
            );
            let items = [
                (
                    "decision".to_owned(),
                    "Decision: fix the API route bug: /users/:id returns 404 for existing users"
                        .to_owned(),
                ),
                ("bugfix".to_owned(), "Fix the API route bug: /users/:id returns 404".to_owned()),
                ("decision".to_owned(), "Use Number(params.id) for ids".to_owned()),
            ];
            assert_eq!(requests_as_decisions(&items, &claims).len(), 1);
            assert_eq!(
                foreign_conventions(
                    "- Commit messages: imperative mood\n- commit the port",
                    &claims
                ),
                ["- Commit messages: imperative mood"]
            );
            let memories = [
                serde_json::json!({"status": "candidate", "project": "notes", "text": "Prefers British spelling"}),
                serde_json::json!({"status": "rejected", "project": null, "text": "British spelling"}),
            ];
            assert_eq!(person_only_in_project(&memories, &claims), ["Prefers British spelling"]);
            let global = [
                serde_json::json!({"status": "active", "project": null, "text": "British spelling"}),
            ];
            assert!(person_only_in_project(&global, &claims).is_empty());
            let titles =
                owned(&["`python3 test_callback.py; echo done` failed", "Tools listed", "Ran ls"]);
            assert_eq!(
                command_titles(&titles, &owned(&["python3 test_callback.py; echo done", "ls"])),
                ["`python3 test_callback.py; echo done` failed", "Ran ls"]
            );
        }

        /// Every chain is complete: recorded sessions, each run where it was recorded (a
        /// project, or none), a work pass, a next agent there is a stand-in for, and gold facts
        /// that an echo of the chain's requests and the next prompt does not state.
        #[test]
        fn every_chain_is_complete() {
            let chains = load_chains();
            assert!(!chains.is_empty(), "fixtures/sessions/chains.json");
            for chain in &chains {
                let mut requests = vec![chain.next.prompt.clone()];
                for step in &chain.steps {
                    if let Step::Session { name, project } = step {
                        let scenario = load(name);
                        assert_eq!(
                            project.is_none(),
                            scenario.no_project,
                            "{}: {name}",
                            chain.name
                        );
                        requests.extend(scenario.claims.requests);
                    }
                }
                assert!(chain.steps.contains(&Step::Work), "{}: no work pass", chain.name);
                assert!(next_session_events(&chain.next.agent).is_some(), "{}", chain.name);
                assert!(!chain.facts.is_empty(), "{}: no facts", chain.name);
                let echoed = stated_lines(&requests.join("\n"), &requests);
                assert!(
                    facts_stated(&echoed, &chain.facts).is_empty(),
                    "{}: the requests alone state a fact",
                    chain.name
                );
            }
        }

        #[test]
        fn recorded_times_move_to_the_replay_clock() {
            let mut latest = 0;
            let text = r#"{"timestamp":"2026-01-01T00:00:03.000Z","ms":1767225602000,"path":"session-2026-01-01T00-00-1.jsonl","n":5}"#;
            let moved: serde_json::Value =
                serde_json::from_str(&shift_times(text, 1_800_000_000_000, &mut latest))
                    .expect("JSON");
            assert_eq!(moved["timestamp"], "2027-01-15T08:00:00.003Z");
            assert_eq!(moved["ms"], 1_800_000_000_002_i64);
            assert_eq!(moved["path"], "session-2026-01-01T00-00-1.jsonl");
            assert_eq!(moved["n"], 5);
            assert_eq!(latest, 1_800_000_000_003);
            assert_eq!(iso_utc(RECORDED_MS), "2026-01-01T00:00:00.000Z");
        }
    }
}
