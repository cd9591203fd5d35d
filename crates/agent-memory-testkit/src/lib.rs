//! Test helpers for agent-memory: a private home per test, the real binary run under it, the
//! agent payloads recorded from the real CLIs (`fixtures/agents/`, written by
//! `scripts/record-fixtures`), the harness that runs those CLIs offline (`harness/`), the
//! workspace's lockfile, a scripted HTTP server standing in for a remote model
//! ([`fake_http`]) and a real PostgreSQL ([`pg`]).
//!
//! Tests never touch the real HOME: every child process gets a temp `HOME` and
//! `AGENT_MEMORY_HOME`, and no inherited `AGENT_MEMORY_*` variable.

pub mod fake_http;
pub mod pg;
pub mod synthetic;

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
        Scenario {
            name: name.to_owned(),
            agent: s["agent"].as_str().unwrap_or_default().to_owned(),
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
        std::fs::create_dir_all(&places.project).expect("create the project directory");
        let mut done = Replayed::default();
        let mut transcript = None;
        for call in &scenario.hooks {
            let payload = localize(&call.payload, places);
            transcript = transcript_path(&payload).or(transcript);
            if let Some(path) = transcript.as_deref().filter(|_| !call.transcript.is_empty()) {
                // An agent whose hooks carry no time of their own has its hooks stamped on
                // arrival, now; its transcript lines are stamped now too, so the two clocks
                // agree as they did when the session was recorded.
                let restamp = !payload.contains("\"timestamp\"");
                append_transcript(Path::new(path), &call.transcript, places, restamp);
            }
            let out = home.hook(&call.agent, &call.event, payload.as_bytes());
            assert!(
                out.status.success(),
                "{}: the {} hook failed:\n{}",
                scenario.name,
                call.event,
                crate::describe(&out)
            );
            done.hooks += 1;
            done.answered += usize::from(!out.stdout.is_empty());
        }
        done
    }

    /// The transcript a payload names: `transcript_path`, or Copilot CLI's `transcriptPath`.
    fn transcript_path(payload: &str) -> Option<String> {
        let value: serde_json::Value = serde_json::from_str(payload).unwrap_or_default();
        ["transcript_path", "transcriptPath"]
            .iter()
            .find_map(|key| value[*key].as_str())
            .map(str::to_owned)
    }

    fn append_transcript(path: &Path, lines: &[String], places: &Places, restamp: bool) {
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
            let mut line = localize(line, places);
            if restamp
                && let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&line)
                && value.get("timestamp").is_some_and(serde_json::Value::is_string)
            {
                value["timestamp"] = serde_json::Value::String(utc_now());
                line = value.to_string();
            }
            writeln!(file, "{line}").expect("append to the transcript");
        }
    }

    /// The time now as RFC 3339 in UTC with milliseconds, as agents stamp transcript lines.
    fn utc_now() -> String {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
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
}
