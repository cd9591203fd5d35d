//! Team memory against a real PostgreSQL server (with pgvector): two homes as two members of one
//! team share reviewed project memory through `agent-memory team sync`, a member of another
//! team sees none of it (row-level security, enforced by the server), a forget propagates, a
//! sync cut off by the server dying resumes without losing or duplicating anything, syncs
//! started at once on one machine take turns, `serve`'s worker syncs on its own, and a server
//! of the first schema migrates forward and indexes vectors. A project opted in shares its
//! observations and summaries (never private ones, never another project's), and with a model
//! `search --team` finds a teammate's memory by meaning.
//!
//! The server comes from `AGENT_MEMORY_TEST_PG_BIN` (`scripts/team-test-db`); each test starts
//! its own on 127.0.0.1 and a free port and stops it by its pid.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use agent_memory_testkit::TestHome;
use agent_memory_testkit::pg::{OWNER_PASSWORD, PG_BIN_ENV, PgServer};

use crate::{home, payload};

const DB: &str = "team";

/// The server's binaries, or `None` (with a notice) outside CI.
fn pg_bin(test: &str) -> Option<PathBuf> {
    crate::needed(test, PG_BIN_ENV, "scripts/team-test-db", |p| p.join("initdb").is_file())
}

/// A server with the team database, its schema made by `team init` run as the owner, and the
/// roles alice and bob in team `core` and carol in team `other`.
fn team_server(bin: &Path) -> PgServer {
    let pg = PgServer::start(bin);
    pg.owner("postgres", &format!("CREATE DATABASE {DB}"));
    for (role, password) in [("alice", "alice-pw"), ("bob", "bob-pw"), ("carol", "carol-pw")] {
        pg.owner(DB, &format!("CREATE ROLE {role} LOGIN PASSWORD '{password}'"));
    }
    let owner = home();
    let init = || {
        let out = owner
            .cmd()
            .args(["team", "init"])
            .env("AGENT_MEMORY_TEAM__URL", pg.url("postgres", DB))
            .env("PGPASSWORD", OWNER_PASSWORD)
            .output()
            .expect("run team init");
        assert!(out.status.success(), "team init:\n{}", agent_memory_testkit::describe(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(init().contains("version 0 → 4"));
    // A second init is a no-op: forward-only, nothing applied twice.
    assert!(init().contains("already at version 4"));
    pg.owner(
        DB,
        "SELECT agent_memory.add_member('alice', 'core'), agent_memory.add_member('bob', 'core'),
                agent_memory.add_member('carol', 'other')",
    );
    pg
}

/// A member's home: the team url in its configuration, the name teammates see, and the
/// password in the environment (`pgpass`: in `~/.pgpass` instead).
struct Member {
    home: TestHome,
    password: Option<String>,
}

impl Member {
    fn new(pg: &PgServer, role: &str, name: &str, password: &str, pgpass: bool) -> Member {
        Member::on(pg, role, name, password, pgpass, &format!("{role}-laptop"))
    }

    /// [`Member::new`] on the machine named `machine`.
    fn on(
        pg: &PgServer,
        role: &str,
        name: &str,
        password: &str,
        pgpass: bool,
        machine: &str,
    ) -> Member {
        let home = home();
        std::fs::create_dir_all(home.home()).expect("home");
        // The name teammates see is the one the database's owner gives the role (a server of
        // the first schema has no display names yet).
        pg.owner(
            DB,
            &format!(
                "DO $$ BEGIN
                     UPDATE agent_memory.members SET display_name = '{name}' WHERE role = '{role}';
                 EXCEPTION WHEN undefined_column OR undefined_table THEN NULL;
                 END $$"
            ),
        );
        // One member asks for TLS when the server offers it; this server does not, so the
        // client falls back to plain TCP as libpq does.
        let url = pg
            .url(role, DB)
            .replace("sslmode=disable", if pgpass { "sslmode=prefer" } else { "sslmode=disable" });
        agent_memory_core::fsutil::write_atomic(
            &home.home().join("config.toml"),
            format!("[team]\nurl = \"{url}\"\nmember = \"{name}\"\nmachine = \"{machine}\"\n")
                .as_bytes(),
        )
        .expect("config");
        if pgpass {
            agent_memory_core::fsutil::write_atomic(
                &home.user_home().join(".pgpass"),
                format!("127.0.0.1:{}:{DB}:{role}:{password}\n", pg.port()).as_bytes(),
            )
            .expect("pgpass");
        }
        Member { home, password: (!pgpass).then(|| password.to_owned()) }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.home.cmd();
        cmd.args(args).env_remove("PGPASSWORD").env_remove("PGPASSFILE");
        if let Some(password) = &self.password {
            cmd.env("PGPASSWORD", password);
        }
        cmd
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().expect("run agent-memory");
        assert!(out.status.success(), "{args:?}:\n{}", agent_memory_testkit::describe(&out));
        String::from_utf8(out.stdout).expect("UTF-8")
    }

    fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.push("--json");
        serde_json::from_str(&self.ok(&all)).expect("JSON")
    }

    /// The SessionStart hook of Claude Code in `cwd`: the briefing the agent receives.
    fn session_start(&self, cwd: &Path, session: &str) -> String {
        let body = payload(
            session,
            "SessionStart",
            &cwd.to_string_lossy(),
            serde_json::json!({"source": "startup"}),
        );
        let out = agent_memory_testkit::run_with_stdin(
            &mut self.cmd(&["hook", "--agent", "claude-code", "--event", "SessionStart"]),
            &body,
        );
        assert!(out.status.success(), "hook:\n{}", agent_memory_testkit::describe(&out));
        String::from_utf8(out.stdout).expect("UTF-8")
    }
}

/// A clone of the shop repository: the same project on every machine, by its origin.
fn clone_at(dir: &Path, origin: &str) -> PathBuf {
    crate::project_identity::repo(dir, Some(origin));
    dir.to_owned()
}

const DECISION: &str = "Payment webhooks retry with exponential backoff, capped at five tries";

/// A Codex session in `cwd`, from Codex's own payloads, whose prompt states a decision (as the
/// long-term memory tests replay it), then the work pass that distils it into a candidate.
fn codex_decides(member: &Member, cwd: &Path, session: &str, prompt: &str) {
    use serde_json::json;
    let patch = "*** Begin Patch\n*** Update File: src/time.rs\n@@\n-use chrono::Utc;\n+use jiff::Timestamp;\n*** End Patch\n";
    let events = [
        ("SessionStart", json!({})),
        ("UserPromptSubmit", json!({ "prompt": prompt })),
        (
            "PostToolUse",
            json!({ "tool_name": "apply_patch", "tool_input": { "command": patch },
            "tool_response": "Success. Updated the following files:\nM src/time.rs\n" }),
        ),
        ("Stop", json!({ "last_assistant_message": "Done." })),
    ];
    for (event, mut fields) in events {
        fields["session_id"] = json!(session);
        fields["cwd"] = json!(cwd.to_string_lossy());
        let body = crate::recall_inject::with(crate::recall_inject::sample("codex", event), fields);
        let out = agent_memory_testkit::run_with_stdin(
            &mut member.cmd(&["hook", "--agent", "codex", "--event", event]),
            &body,
        );
        assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    }
    // The stop hook may have started a work pass in the background: this one waits its turn.
    let start = Instant::now();
    loop {
        let out = member.cmd(&["work"]).output().expect("run work");
        if out.status.success() {
            break;
        }
        let busy = String::from_utf8_lossy(&out.stderr).contains("another work pass is running");
        assert!(
            busy && start.elapsed() < Duration::from_secs(60),
            "work:\n{}",
            agent_memory_testkit::describe(&out)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_teammates_reviewed_decision_reaches_the_next_briefing_with_their_name() {
    let test = "a_teammates_reviewed_decision_reaches_the_next_briefing_with_their_name";
    let Some(bin) = pg_bin(test) else { return };
    let pg = team_server(&bin);
    let alice = Member::new(&pg, "alice", "Alice Liddell", "alice-pw", false);
    let bob = Member::new(&pg, "bob", "Bob", "bob-pw", true);
    let carol = Member::new(&pg, "carol", "Carol", "carol-pw", false);
    let shop_a = clone_at(&alice.home.user_home().join("src/shop"), "git@github.com:acme/shop.git");
    let shop_b = clone_at(&bob.home.user_home().join("work/shop"), "https://github.com/acme/shop");
    let shop_c = clone_at(&carol.home.user_home().join("shop"), "https://github.com/acme/shop.git");
    let scratch = alice.home.user_home().join("scratch");
    std::fs::create_dir_all(&scratch).expect("mkdir");

    // Alice's Codex session in the shop decides something, and she approves what the work pass
    // made of it; what she remembers as project memory is shared too; her global preference
    // and a project without an origin are not.
    alice.session_start(&shop_a, "a1");
    codex_decides(&alice, &shop_a, "codex-a1", crate::memory::JIFF);
    let candidates = alice.json(&["review"]);
    let learned = candidates
        .as_array()
        .and_then(|list| {
            list.iter().find(|m| m["text"].as_str().is_some_and(|t| t.contains("jiff")))
        })
        .unwrap_or_else(|| panic!("no candidate about jiff: {candidates:#}"));
    let candidate_text = learned["text"].as_str().expect("text").to_owned();
    alice.ok(&["review", "--approve", &format!("m{}", learned["id"])]);
    let remembered = alice.json(&[
        "remember",
        DECISION,
        "--kind",
        "decision",
        "--project",
        &shop_a.to_string_lossy(),
    ]);
    let id = remembered["memory"]["id"].as_i64().or_else(|| remembered["id"].as_i64()).expect("id");
    alice.ok(&["remember", "Answer in short sentences", "--global"]);
    alice.ok(&[
        "remember",
        "The scratch folder holds throwaway notes",
        "--project",
        &scratch.to_string_lossy(),
    ]);

    let dry = alice.ok(&["team", "sync", "--dry-run"]);
    assert!(dry.contains("2 memories") && dry.contains("exponential backoff"), "{dry}");
    assert!(dry.contains("use jiff for every timestamp"), "{dry}");
    assert!(!dry.contains("short sentences") && !dry.contains("throwaway"), "{dry}");
    assert_eq!(
        pg.owner(DB, "SELECT count(*) FROM agent_memory.memories"),
        "0",
        "a dry run sends nothing"
    );

    let synced = alice.ok(&["team", "sync"]);
    assert!(synced.contains("2 memories pushed"), "{synced}");
    assert_eq!(
        pg.owner(DB, "SELECT member || '|' || member_role || '|' || team || '|' || machine || '|' || project_key FROM agent_memory.memories WHERE agent = 'remembered'"),
        "Alice Liddell|alice|core|alice-laptop|git:github.com/acme/shop"
    );
    // Again: nothing new leaves, nothing is duplicated.
    assert!(alice.ok(&["team", "sync"]).contains("0 memories pushed"));

    // Bob's next Claude Code session in his clone is briefed with it, and says who learned it.
    let pulled = bob.ok(&["team", "sync"]);
    assert!(pulled.contains("pulled 2 new"), "{pulled}");
    let briefing = bob.session_start(&shop_b, "b1");
    assert!(briefing.contains(DECISION), "{briefing}");
    assert!(briefing.contains("Alice Liddell"), "{briefing}");
    let first_words: String = candidate_text.chars().take(40).collect();
    assert!(briefing.contains(&first_words), "the decision Codex learned: {briefing}");
    let brief =
        bob.cmd(&["brief", "--project", &shop_b.to_string_lossy()]).output().expect("brief");
    assert!(String::from_utf8_lossy(&brief.stdout).contains("(Alice Liddell)"));
    let found = bob.ok(&["search", "webhook", "backoff"]);
    assert!(found.contains("exponential backoff") && found.contains("Alice Liddell"), "{found}");
    let remote = bob.ok(&["search", "--team", "webhooks", "retry"]);
    assert!(remote.contains("exponential backoff") && remote.contains("Alice Liddell"), "{remote}");
    // Bob shares nothing back that is Alice's.
    assert!(bob.ok(&["team", "sync"]).contains("0 memories pushed"));

    // Carol, in another team, sees none of it: not by sync, not by search, not by SQL.
    let other = carol.ok(&["team", "sync"]);
    assert!(other.contains("pulled 0 new"), "{other}");
    assert!(!carol.session_start(&shop_c, "c1").contains("backoff"));
    assert!(carol.ok(&["search", "--team", "backoff"]).contains("no team memory matches"));
    let out = pg.psql("carol", "carol-pw", DB, "SELECT count(*) FROM agent_memory.memories");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    // Bob reads Alice's row but cannot change it; the server says so, not the client.
    let out = pg.psql(
        "bob",
        "bob-pw",
        DB,
        "UPDATE agent_memory.memories SET text = 'defaced' RETURNING gid",
    );
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).trim().is_empty());
    let out = pg.psql(
        "carol",
        "carol-pw",
        DB,
        "UPDATE agent_memory.memories SET status = 'forgotten' RETURNING gid",
    );
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).trim().is_empty());
    assert_eq!(
        pg.owner(DB, "SELECT text FROM agent_memory.memories WHERE agent = 'remembered'"),
        DECISION
    );

    let status = alice.ok(&["team", "status"]);
    assert!(status.contains("waiting to be pushed: 0"), "{status}");
    assert!(status.contains("team: core") && status.contains("Alice Liddell (alice)"), "{status}");
    assert!(status.contains("last sync:") && status.contains("(ok)"), "{status}");

    // Alice forgets it: the tombstone reaches Bob at his next sync.
    alice.ok(&["forget", &format!("m{id}")]);
    assert!(alice.ok(&["team", "sync"]).contains("1 memory pushed"));
    assert!(bob.ok(&["team", "sync"]).contains("1 changed"));
    assert!(!bob.session_start(&shop_b, "b2").contains("backoff"));
    assert!(!bob.ok(&["search", "webhook", "backoff"]).contains("exponential backoff"));
    assert!(bob.ok(&["search", "--team", "backoff"]).contains("no team memory matches"));
    assert_eq!(
        pg.owner(
            DB,
            "SELECT count(*) || ' ' || string_agg(status, ',' ORDER BY status) FROM agent_memory.memories"
        ),
        "2 active,forgotten"
    );
}

/// The name teammates see is the one the owner gave the role, whatever a client calls itself;
/// a teammate's shared global memory reaches a member's projects only once asked for, labelled
/// with the teammate's name, and leaves again when no longer asked for.
#[test]
fn names_come_from_the_server_and_a_teammates_global_memory_is_opt_in() {
    let test = "names_come_from_the_server_and_a_teammates_global_memory_is_opt_in";
    let Some(bin) = pg_bin(test) else { return };
    let pg = team_server(&bin);
    let alice = Member::new(&pg, "alice", "Alice Liddell", "alice-pw", false);
    // Bob's client claims to be Alice; the server shows him as the owner named him.
    let bob = Member::new(&pg, "bob", "Bob", "bob-pw", false);
    agent_memory_core::fsutil::write_atomic(
        &bob.home.home().join("config.toml"),
        format!(
            "[team]\nurl = \"{}\"\nmember = \"Alice Liddell\"\nmachine = \"bob-laptop\"\n",
            pg.url("bob", DB)
        )
        .as_bytes(),
    )
    .expect("config");
    let shop_a = clone_at(&alice.home.user_home().join("shop"), "https://github.com/acme/shop");
    let shop_b = clone_at(&bob.home.user_home().join("shop"), "https://github.com/acme/shop");
    let elsewhere = bob.home.user_home().join("notes");
    std::fs::create_dir_all(&elsewhere).expect("dir");
    bob.ok(&["remember", "Refunds need a second approval", "--project", &shop_b.to_string_lossy()]);
    bob.ok(&["team", "sync"]);
    assert_eq!(
        pg.owner(DB, "SELECT member FROM agent_memory.memories WHERE text LIKE 'Refunds%'"),
        "Bob"
    );

    // Alice shares her global memory; Bob does not take it until he asks.
    let config = alice.home.home().join("config.toml");
    let mut text = std::fs::read_to_string(&config).expect("config");
    text.push_str("share_global = true\n");
    agent_memory_core::fsutil::write_atomic(&config, text.as_bytes()).expect("config");
    alice.ok(&["remember", "Answer in short sentences", "--global"]);
    alice.ok(&[
        "remember",
        "Invoices are numbered per year",
        "--project",
        &shop_a.to_string_lossy(),
    ]);
    assert!(alice.ok(&["team", "sync"]).contains("2 memories pushed"));
    bob.ok(&["team", "sync"]);
    let briefing = bob.session_start(&elsewhere, "b1");
    assert!(!briefing.contains("short sentences"), "{briefing}");
    assert!(bob.session_start(&shop_b, "b2").contains("Invoices are numbered"));
    let remote = bob.ok(&["search", "--team", "short", "sentences"]);
    assert!(!remote.contains("short sentences"), "{remote}");

    let config = bob.home.home().join("config.toml");
    let plain = std::fs::read_to_string(&config).expect("config");
    let asked = format!("{plain}teammates_global = [\"Alice Liddell\"]\n");
    agent_memory_core::fsutil::write_atomic(&config, asked.as_bytes()).expect("config");
    bob.ok(&["team", "sync"]);
    let briefing = bob.session_start(&elsewhere, "b3");
    assert!(briefing.contains("Answer in short sentences"), "{briefing}");
    assert!(briefing.contains("Alice Liddell"), "labelled: {briefing}");
    assert!(bob.ok(&["search", "--team", "short", "sentences"]).contains("short sentences"));

    agent_memory_core::fsutil::write_atomic(&config, plain.as_bytes()).expect("config");
    bob.ok(&["team", "sync"]);
    assert!(!bob.session_start(&elsewhere, "b4").contains("short sentences"));
    assert!(bob.session_start(&shop_b, "b5").contains("Invoices are numbered"));
}

#[test]
fn without_the_server_hooks_and_local_recall_carry_on_and_sync_says_what_to_do() {
    let test = "without_the_server_hooks_and_local_recall_carry_on_and_sync_says_what_to_do";
    let Some(bin) = pg_bin(test) else { return };
    let pg = team_server(&bin);
    let alice = Member::new(&pg, "alice", "Alice", "alice-pw", false);
    let shop = clone_at(&alice.home.user_home().join("shop"), "https://github.com/acme/shop");
    alice.ok(&["remember", DECISION, "--kind", "decision", "--project", &shop.to_string_lossy()]);
    pg.kill();
    assert!(alice.session_start(&shop, "a1").contains(DECISION));
    let out = alice.cmd(&["team", "sync"]).output().expect("sync");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot reach the team database") && err.contains("PGPASSWORD"), "{err}");
    let status = alice.ok(&["team", "status"]);
    assert!(status.contains("waiting to be pushed: 1") && status.contains("failed"), "{status}");
    // The work pass does not ask again so soon: the wait doubles after each failure.
    let work = alice.ok(&["work"]);
    assert!(!work.contains("team sync"), "{work}");
    pg.restart();
    assert!(alice.ok(&["team", "sync"]).contains("1 memory pushed"));
    // A teammate's work pass syncs on its interval, the first time at once.
    let bob = Member::new(&pg, "bob", "Bob", "bob-pw", false);
    let work = bob.ok(&["work"]);
    assert!(work.contains("team sync: 0 pushed, 1 pulled"), "{work}");
    assert!(!bob.ok(&["work"]).contains("team sync"), "not again before the interval");

    // A wrong password and a role of no team are named, with what to do.
    let mallory = Member::new(&pg, "alice", "Alice", "wrong", false);
    let out = mallory.cmd(&["team", "sync"]).output().expect("sync");
    assert!(String::from_utf8_lossy(&out.stderr).contains("password authentication failed"));
    pg.owner(DB, "CREATE ROLE dave LOGIN PASSWORD 'dave-pw'");
    let dave = Member::new(&pg, "dave", "Dave", "dave-pw", false);
    let out = dave.cmd(&["team", "sync"]).output().expect("sync");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("agent_memory.add_member('dave'"),
        "{}",
        agent_memory_testkit::describe(&out)
    );
    // `search --team` asks nothing first; its failing call says the same.
    let out = dave.cmd(&["search", "--team", "webhooks"]).output().expect("search");
    assert!(
        !out.status.success()
            && String::from_utf8_lossy(&out.stderr).contains("agent_memory.add_member('dave'"),
        "{}",
        agent_memory_testkit::describe(&out)
    );
}

#[test]
fn an_edit_on_two_machines_keeps_both_versions() {
    let test = "an_edit_on_two_machines_keeps_both_versions";
    let Some(bin) = pg_bin(test) else { return };
    let pg = team_server(&bin);
    let laptop = Member::new(&pg, "alice", "Alice", "alice-pw", false);
    let desktop = Member::on(&pg, "alice", "Alice", "alice-pw", false, "desktop");
    let shop = clone_at(&laptop.home.user_home().join("shop"), "https://github.com/acme/shop");
    let id = laptop.json(&[
        "remember",
        DECISION,
        "--kind",
        "decision",
        "--project",
        &shop.to_string_lossy(),
    ])["memory"]["id"]
        .as_i64()
        .expect("id");
    laptop.ok(&["team", "sync"]);
    assert!(desktop.ok(&["team", "sync"]).contains("pulled 1 new"));
    let there = crate::count(&desktop.home, "SELECT id FROM memories WHERE team_gid IS NOT NULL");

    // The desktop edits it (its own memory, from the other machine), then the laptop does.
    desktop.ok(&["review", "--edit", &format!("m{there}"), "--text", "Webhooks retry three times"]);
    assert!(desktop.ok(&["team", "sync"]).contains("1 memory pushed"));
    laptop.ok(&["review", "--edit", &format!("m{id}"), "--text", "Webhooks retry seven times"]);
    let synced = laptop.ok(&["team", "sync"]);
    assert!(synced.contains(&format!("conflict: m{id}")), "{synced}");
    assert!(desktop.ok(&["team", "sync"]).contains("pulled 1 new"));
    for machine in [&laptop, &desktop] {
        let found = machine.ok(&["search", "webhooks", "retry"]);
        assert!(found.contains("three times") && found.contains("seven times"), "{found}");
    }
    assert_eq!(
        pg.owner(DB, "SELECT count(*) || ' ' || count(conflict_of) FROM agent_memory.memories"),
        "2 1",
        "both versions, one marked"
    );
    // Settled: the next syncs move nothing.
    assert!(laptop.ok(&["team", "sync"]).contains("0 memories pushed; pulled 0 new, 0 changed"));
    assert!(desktop.ok(&["team", "sync"]).contains("0 memories pushed; pulled 0 new, 0 changed"));
}

/// Rows of the server the owner sees.
fn server_rows(pg: &PgServer) -> (i64, i64) {
    let line =
        pg.owner(DB, "SELECT count(*) || ' ' || count(DISTINCT text) FROM agent_memory.memories");
    let mut parts = line.split(' ').map(|n| n.parse::<i64>().expect("number"));
    (parts.next().expect("count"), parts.next().expect("distinct"))
}

/// The memories in `member`'s store that `teammate` learned, and their distinct global ids.
fn pulled_from(member: &Member, teammate: &str) -> (i64, i64) {
    crate::db(&member.home)
        .query_row(
            "SELECT count(*), count(DISTINCT team_gid) FROM memories WHERE team_member = ?1",
            [teammate],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("count")
}

/// Alice and Bob of team `core`, each with a clone of the shop (Alice's password in her
/// `~/.pgpass` when `pgpass`).
fn alice_and_bob(pg: &PgServer, pgpass: bool) -> (Member, PathBuf, Member, PathBuf) {
    let alice = Member::new(pg, "alice", "Alice", "alice-pw", pgpass);
    let bob = Member::new(pg, "bob", "Bob", "bob-pw", false);
    let shop_a = clone_at(&alice.home.user_home().join("shop"), "https://github.com/acme/shop");
    let shop_b = clone_at(&bob.home.user_home().join("shop"), "https://github.com/acme/shop");
    (alice, shop_a, bob, shop_b)
}

/// Waits until `done` holds or `child` exits; true when `done` held first.
fn until(child: &mut std::process::Child, mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if done() {
            return true;
        }
        if child.try_wait().expect("wait").is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn a_sync_killed_with_the_server_resumes_without_losing_or_duplicating() {
    let test = "a_sync_killed_with_the_server_resumes_without_losing_or_duplicating";
    let Some(bin) = pg_bin(test) else { return };
    let pg = team_server(&bin);
    let alice = Member::new(&pg, "alice", "Alice", "alice-pw", false);
    let bob = Member::new(&pg, "bob", "Bob", "bob-pw", false);
    let shop = clone_at(&alice.home.user_home().join("shop"), "https://github.com/acme/shop");
    alice.ok(&["remember", DECISION, "--kind", "decision", "--project", &shop.to_string_lossy()]);
    const MORE: i64 = 2000;
    {
        let db = rusqlite::Connection::open(alice.home.db_path()).expect("open");
        // The store's full-text triggers call its functions; plain text is enough here.
        for name in ["am_fts_text", "am_fts_stemmed"] {
            db.create_scalar_function(
                name,
                1,
                rusqlite::functions::FunctionFlags::SQLITE_UTF8,
                |ctx| ctx.get::<String>(0),
            )
            .expect("function");
        }
        db.execute(
            "INSERT INTO memories (tier, kind, text, project_id, importance, created_at, updated_at,
                                   status, origin)
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
             SELECT 'L2', 'fact', 'Service ' || i || ' listens on port ' || (8000 + i), project_id,
                    5, 1, 1 + i, 'active', 'remembered'
             FROM n, (SELECT project_id FROM memories LIMIT 1)",
            [MORE],
        )
        .expect("insert");
    }
    let total = MORE + 1;

    // The push, cut off by the server dying part-way.
    let mut sync = alice.cmd(&["team", "sync"]);
    let mut child = sync
        .env("AGENT_MEMORY_TEAM__BATCH_SIZE", "10")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let cut = until(&mut child, || server_rows(&pg).0 > 0);
    pg.kill();
    let out = child.wait_with_output().expect("wait");
    if cut {
        assert!(!out.status.success(), "a sync whose server died must fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("resumes where it stopped"), "{err}");
        let left =
            alice.json(&["team", "status", "--offline"])["queue_depth"].as_i64().expect("depth");
        assert!(left > 0 && left < total, "{left} of {total} left");
    }
    pg.restart();
    alice.ok(&["team", "sync"]);
    assert_eq!(server_rows(&pg), (total, total), "every memory once");
    assert_eq!(alice.json(&["team", "status", "--offline"])["queue_depth"], 0);

    // The pull, cut off the same way.
    let mut pull = bob.cmd(&["team", "sync"]);
    let mut child = pull
        .env("AGENT_MEMORY_TEAM__BATCH_SIZE", "10")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let pulled_some = || {
        rusqlite::Connection::open_with_flags(
            bob.home.db_path(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .and_then(|db| db.query_row("SELECT count(*) FROM memories", [], |r| r.get::<_, i64>(0)))
        .is_ok_and(|n| n > 0)
    };
    let cut = until(&mut child, pulled_some);
    pg.kill();
    let out = child.wait_with_output().expect("wait");
    assert!(!cut || !out.status.success());
    pg.restart();
    bob.ok(&["team", "sync"]);
    assert_eq!(pulled_from(&bob, "Alice"), (total, total));
    assert!(bob.ok(&["team", "sync"]).contains("pulled 0 new"));
}

#[test]
fn syncs_started_at_once_on_one_machine_take_turns_and_send_each_memory_once() {
    let test = "syncs_started_at_once_on_one_machine_take_turns_and_send_each_memory_once";
    let Some(bin) = pg_bin(test) else { return };
    let pg = team_server(&bin);
    let (alice, shop_a, bob, shop_b) = alice_and_bob(&pg, false);
    const MINE: i64 = 12;
    const THEIRS: i64 = 6;
    for i in 0..MINE {
        let text = format!("Service {i} listens on port {}", 8000 + i);
        alice.ok(&["remember", &text, "--project", &shop_a.to_string_lossy()]);
    }
    for i in 0..THEIRS {
        let text = format!("Worker {i} drains queue q{i}");
        bob.ok(&["remember", &text, "--project", &shop_b.to_string_lossy()]);
    }
    bob.ok(&["team", "sync"]);

    // While another sync holds the lock, the work pass (whose first sync is due at once) skips
    // its own and says so, and the pass itself succeeds.
    let held = agent_memory_core::fsutil::try_lock_file(&alice.home.home().join("team-sync.lock"))
        .expect("open the lock")
        .expect("take the lock");
    let work = alice.ok(&["work"]);
    assert!(work.contains("team sync: another sync is running; skipped"), "{work}");
    assert_eq!(server_rows(&pg).0, THEIRS, "nothing of Alice's sent");
    drop(held);

    // Several manual syncs and a work pass (which syncs at once the first time) start together
    // on Alice's machine, each pushing and pulling in small batches so they overlap.
    let mut children: Vec<(String, std::process::Child)> = Vec::new();
    for n in 0..5 {
        let child = alice
            .cmd(&["team", "sync"])
            .env("AGENT_MEMORY_TEAM__BATCH_SIZE", "2")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn team sync");
        children.push((format!("team sync #{n}"), child));
    }
    let work = alice
        .cmd(&["work"])
        .env("AGENT_MEMORY_TEAM__BATCH_SIZE", "2")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn work");
    children.push(("work".into(), work));
    let mut pushed = 0;
    for (name, child) in children {
        let out = child.wait_with_output().expect("wait");
        let said = agent_memory_testkit::describe(&out);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let busy = String::from_utf8_lossy(&out.stderr).contains("another team sync is running");
        assert!(out.status.success() || busy, "{name}:\n{said}");
        assert!(!said.contains("UNIQUE"), "{name}:\n{said}");
        // `team sync: 3 memories pushed; …` and the work pass's `team sync: 3 pushed, …`.
        if let Some(rest) = stdout.split("team sync: ").nth(1) {
            pushed += rest.split(' ').next().and_then(|n| n.parse::<i64>().ok()).unwrap_or(0);
        }
    }
    assert_eq!(pushed, MINE, "each memory pushed by one sync only");

    // The server holds each memory once; Alice's store holds Bob's once, and nothing waits.
    assert_eq!(server_rows(&pg), (MINE + THEIRS, MINE + THEIRS), "every memory once");
    assert_eq!(pulled_from(&alice, "Bob"), (THEIRS, THEIRS));
    assert_eq!(crate::count(&alice.home, "SELECT count(*) FROM memories"), MINE + THEIRS);
    assert_eq!(alice.json(&["team", "status", "--offline"])["queue_depth"], 0);
    assert!(alice.ok(&["team", "sync"]).contains("0 memories pushed; pulled 0 new, 0 changed"));
}

#[test]
fn serves_worker_syncs_when_one_is_due_without_a_manual_sync() {
    let test = "serves_worker_syncs_when_one_is_due_without_a_manual_sync";
    let Some(bin) = pg_bin(test) else { return };
    let pg = team_server(&bin);
    // Alice's password is in her ~/.pgpass, which serve reads as `team sync` does.
    let (alice, shop_a, bob, shop_b) = alice_and_bob(&pg, true);
    const BOBS: &str = "The order queue drains through one worker per region";
    bob.ok(&["remember", BOBS, "--project", &shop_b.to_string_lossy()]);
    bob.ok(&["team", "sync"]);
    alice.ok(&["remember", DECISION, "--kind", "decision", "--project", &shop_a.to_string_lossy()]);

    let _turn = crate::serve::turn();
    let server = crate::serve::Server::start(
        &alice.home,
        &[("AGENT_MEMORY_SERVE__WORK_INTERVAL_SECONDS", "1")],
    );
    let wait_for = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !done() {
            assert!(Instant::now() < deadline, "serve's worker never {what}");
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let on_server = |text: &str| {
        pg.owner(DB, &format!("SELECT count(*) FROM agent_memory.memories WHERE text = '{text}'"))
            == "1"
    };
    let synced_ok = || {
        crate::count(
            &alice.home,
            "SELECT count(*) FROM team_sync WHERE key = 'last_sync_outcome' AND value = 'ok'",
        ) == 1
    };
    // Its first pass syncs at once: Alice's decision goes up, Bob's memory comes down.
    wait_for("pushed the decision", &|| on_server(DECISION));
    wait_for("finished its first sync", &synced_ok);
    let bobs =
        format!("SELECT count(*) FROM memories WHERE team_member = 'Bob' AND text = '{BOBS}'");
    assert_eq!(crate::count(&alice.home, &bobs), 1);
    let found = alice.ok(&["search", "order", "queue", "region"]);
    assert!(found.contains(BOBS) && found.contains("Bob"), "{found}");

    // A memory remembered while serve runs goes up at the next sync the interval allows. The
    // test does not wait the interval out: it moves the last sync back past it.
    const LATER: &str = "Refunds above 500 euros need a second approval";
    alice.ok(&["remember", LATER, "--kind", "decision", "--project", &shop_a.to_string_lossy()]);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!on_server(LATER), "not before the interval has passed");
    {
        let db = rusqlite::Connection::open(alice.home.db_path()).expect("open the store");
        db.busy_timeout(Duration::from_secs(10)).expect("busy timeout");
        let eleven_minutes_ago = agent_memory_core::time::now_ms() - 11 * 60_000;
        db.execute(
            "UPDATE team_sync SET value = ?1 WHERE key = 'last_sync_at'",
            [eleven_minutes_ago.to_string()],
        )
        .expect("move the last sync back");
    }
    wait_for("pushed the later memory", &|| on_server(LATER));
    let stats = server.json("/api/stats");
    assert_eq!(stats["worker"]["last_error"], serde_json::Value::Null, "{stats}");
    server.stop(&alice.home);
    let status = alice.ok(&["team", "status", "--offline"]);
    assert!(status.contains("waiting to be pushed: 0") && status.contains("(ok)"), "{status}");
    assert_eq!(server_rows(&pg), (3, 3), "every memory once");
}

/// A vector of `dims` equal numbers, as pgvector reads one.
fn vector(dims: usize, value: &str) -> String {
    format!("[{}]", vec![value; dims].join(","))
}

#[test]
fn a_server_of_the_first_schema_migrates_forward_and_indexes_vectors_by_dimension() {
    let test = "a_server_of_the_first_schema_migrates_forward_and_indexes_vectors_by_dimension";
    let Some(bin) = pg_bin(test) else { return };
    let pg = PgServer::start(&bin);
    pg.owner("postgres", &format!("CREATE DATABASE {DB}"));
    pg.owner(DB, "CREATE ROLE alice LOGIN PASSWORD 'alice-pw'");
    // A server an earlier agent-memory set up: schema version 1, with a member.
    pg.owner(
        DB,
        &format!(
            "CREATE SCHEMA agent_memory;
             CREATE TABLE agent_memory.schema_version (version integer NOT NULL);
             {}
             INSERT INTO agent_memory.schema_version (version) VALUES (1);
             SELECT agent_memory.add_member('alice', 'core');",
            include_str!("../../../agent-memory-team/src/schema/0001_team.sql")
        ),
    );
    let alice = Member::new(&pg, "alice", "Alice", "alice-pw", false);
    let shop = clone_at(&alice.home.user_home().join("shop"), "https://github.com/acme/shop");
    for text in [DECISION, "Refunds need a second approval", "Invoices are numbered per year"] {
        alice.ok(&["remember", text, "--project", &shop.to_string_lossy()]);
    }
    let out = alice.cmd(&["team", "sync"]).output().expect("sync");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("run `agent-memory team init`"), "{err}");
    // `search --team` asks no schema version first; its failing call says the same.
    let out = alice.cmd(&["search", "--team", "webhooks"]).output().expect("search");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("run `agent-memory team init`"), "{err}");

    let init = home()
        .cmd()
        .args(["team", "init"])
        .env("AGENT_MEMORY_TEAM__URL", pg.url("postgres", DB))
        .env("PGPASSWORD", OWNER_PASSWORD)
        .output()
        .expect("run team init");
    assert!(init.status.success(), "{}", agent_memory_testkit::describe(&init));
    assert!(String::from_utf8_lossy(&init.stdout).contains("version 1 → 4"));
    assert!(alice.ok(&["team", "sync"]).contains("3 memories pushed"));

    // Vectors of the two indexed dimensions and of another one: all are kept.
    let set = |text: &str, model: &str, embedding: &str| {
        let sql = format!(
            "UPDATE agent_memory.memories SET model = '{model}', embedding = '{embedding}'
             WHERE text = '{text}' RETURNING gid"
        );
        let out = pg.psql("alice", "alice-pw", DB, &sql);
        assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
        assert!(!String::from_utf8_lossy(&out.stdout).trim().is_empty(), "{text}: no row");
    };
    set(DECISION, "all-minilm-l6-v2", &vector(384, "0.05"));
    set("Refunds need a second approval", "potion-base-8m", &vector(256, "0.0625"));
    set("Invoices are numbered per year", "tiny", &vector(3, "0.5"));
    for (dims, value, text) in [(384, "0.05", DECISION), (256, "0.0625", "Refunds")] {
        let query = format!(
            "SELECT text FROM agent_memory.memories WHERE vector_dims(embedding) = {dims}
             ORDER BY embedding::vector({dims}) <=> '{}' LIMIT 5",
            vector(dims, value)
        );
        let plan = pg.owner(DB, &format!("SET enable_seqscan = off; EXPLAIN {query}"));
        assert!(plan.contains(&format!("memories_embedding_{dims}")), "{plan}");
        let found = pg.owner(DB, &query);
        assert!(found.starts_with(text) && !found.contains('\n'), "{found}");
    }
    assert!(alice.ok(&["team", "sync"]).contains("0 memories pushed"));
}

/// Adds `line` to the `[team]` section of `member`'s configuration.
fn configure(member: &Member, line: &str) {
    let path = member.home.home().join("config.toml");
    let text = std::fs::read_to_string(&path).expect("config");
    let text = text.replacen("[team]\n", &format!("[team]\n{line}\n"), 1);
    agent_memory_core::fsutil::write_atomic(&path, text.as_bytes()).expect("config");
}

/// Observations and summaries of the session whose agent's id is `session`.
fn items_of(member: &Member, session: &str) -> i64 {
    crate::count(
        &member.home,
        &format!(
            "SELECT (SELECT count(*) FROM observations o JOIN sessions s ON s.id = o.session_id
                     WHERE s.source_id = '{session}')
                  + (SELECT count(*) FROM summaries m JOIN sessions s ON s.id = m.session_id
                     WHERE s.source_id = '{session}')"
        ),
    )
}

/// Observations and summaries in `member`'s store that `teammate` distilled.
fn items_from(member: &Member, teammate: &str) -> i64 {
    crate::count(
        &member.home,
        &format!(
            "SELECT (SELECT count(*) FROM observations WHERE team_member = '{teammate}')
                  + (SELECT count(*) FROM summaries WHERE team_member = '{teammate}')"
        ),
    )
}

#[test]
fn an_opted_in_projects_observations_and_summary_reach_a_teammate_and_a_forget_follows() {
    let test =
        "an_opted_in_projects_observations_and_summary_reach_a_teammate_and_a_forget_follows";
    let Some(bin) = pg_bin(test) else { return };
    let pg = team_server(&bin);
    let alice = Member::new(&pg, "alice", "Alice Liddell", "alice-pw", false);
    let bob = Member::new(&pg, "bob", "Bob", "bob-pw", false);
    let shop_a = clone_at(&alice.home.user_home().join("shop"), "git@github.com:acme/shop.git");
    let shop_b = clone_at(&bob.home.user_home().join("shop"), "https://github.com/acme/shop");
    let blog = clone_at(&alice.home.user_home().join("blog"), "https://github.com/acme/blog");
    // Only `team sync` syncs here: the work pass would push as soon as it has distilled.
    configure(&alice, "share_observations = [\"shop\"]\nsync_interval_minutes = 0");
    configure(&bob, "share_observations = [\"git:github.com/acme/shop\"]");

    // Three Codex sessions: one in the shop, one in the shop that read a secret (every event
    // of it private), one in the blog, which is not opted in.
    codex_decides(&alice, &shop_a, "codex-a1", crate::memory::JIFF);
    codex_decides(&alice, &shop_a, "codex-a2", "Keep the staging password in the vault");
    codex_decides(&alice, &blog, "codex-b1", "The blog deploys from the main branch");
    {
        let db = rusqlite::Connection::open(alice.home.db_path()).expect("open");
        db.execute(
            "UPDATE events SET sensitivity = 'private'
             WHERE session_id = (SELECT id FROM sessions WHERE source_id = 'codex-a2')",
            [],
        )
        .expect("private");
    }
    let shared = items_of(&alice, "codex-a1");
    assert!(shared >= 2, "an observation and a summary at least: {shared}");
    assert!(items_of(&alice, "codex-a2") > 0 && items_of(&alice, "codex-b1") > 0);

    let dry = alice.json(&["team", "sync", "--dry-run"]);
    assert_eq!(dry["items"].as_array().map(Vec::len), Some(shared as usize), "{dry:#}");
    assert!(
        alice
            .ok(&["team", "status", "--offline"])
            .contains("observations and session summaries of projects shop")
    );
    assert_eq!(pg.owner(DB, "SELECT count(*) FROM agent_memory.items"), "0", "nothing sent");

    let synced = alice.ok(&["team", "sync"]);
    assert!(synced.contains(&format!("observations and summaries: {shared} pushed")), "{synced}");
    assert_eq!(
        pg.owner(
            DB,
            "SELECT count(*) || ' ' || count(*) FILTER (WHERE kind = 'summary') || ' '
                    || count(DISTINCT project_key) || ' ' || min(member)
             FROM agent_memory.items"
        ),
        format!("{shared} 1 1 Alice Liddell"),
        "the shop's session only, its summary among them"
    );
    // Again: nothing leaves twice.
    assert!(!alice.ok(&["team", "sync"]).contains("observations and summaries"));

    // Bob gets them with Alice's name: in his store, his search, his briefing, the server's
    // search; and he sends none of them back.
    let pulled = bob.ok(&["team", "sync"]);
    assert!(pulled.contains(&format!("pulled {shared} new")), "{pulled}");
    assert_eq!(items_from(&bob, "Alice Liddell"), shared);
    let title: String = crate::db(&bob.home)
        .query_row(
            "SELECT title FROM observations WHERE team_member IS NOT NULL ORDER BY id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .expect("a pulled observation");
    let found = bob.ok(&["search", &title]);
    assert!(found.contains("Alice Liddell, codex"), "{found}");
    let briefing = bob.session_start(&shop_b, "b1");
    assert!(briefing.contains("Alice Liddell, codex"), "{briefing}");
    let remote = bob.ok(&["search", "--team", &title]);
    assert!(remote.contains("Alice Liddell, codex") && remote.contains("observation"), "{remote}");
    assert!(!bob.ok(&["team", "sync"]).contains("observations and summaries"));
    assert_eq!(
        pg.owner(DB, "SELECT count(*) FROM agent_memory.items WHERE member_role = 'bob'"),
        "0"
    );

    // Alice forgets one: the tombstone blanks it on the server, and Bob's copy goes.
    let (id, gid): (i64, String) = crate::db(&alice.home)
        .query_row(
            "SELECT id, team_gid FROM observations WHERE team_gid IS NOT NULL ORDER BY id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("a shared observation");
    alice.ok(&["forget", &format!("o{id}")]);
    assert!(alice.ok(&["team", "sync"]).contains("observations and summaries: 1 pushed"));
    assert_eq!(
        pg.owner(
            DB,
            &format!("SELECT status || '|' || title FROM agent_memory.items WHERE gid = '{gid}'")
        ),
        "forgotten|"
    );
    assert!(bob.ok(&["team", "sync"]).contains("0 new, 1 changed"));
    assert_eq!(items_from(&bob, "Alice Liddell"), shared - 1);
    assert_eq!(
        crate::count(
            &bob.home,
            &format!("SELECT count(*) FROM observations WHERE team_gid = '{gid}'")
        ),
        0
    );
}

#[test]
fn an_items_sync_killed_with_the_server_resumes_without_duplicates() {
    let test = "an_items_sync_killed_with_the_server_resumes_without_duplicates";
    let Some(bin) = pg_bin(test) else { return };
    let pg = team_server(&bin);
    let (alice, shop, bob, _) = alice_and_bob(&pg, false);
    configure(&alice, "share_observations = [\"shop\"]");
    // A project and a session of the shop, then many observations written straight into the
    // store through its triggers.
    alice.ok(&["remember", DECISION, "--project", &shop.to_string_lossy()]);
    const MANY: i64 = 300;
    {
        let db = rusqlite::Connection::open(alice.home.db_path()).expect("open");
        for name in ["am_fts_text", "am_fts_stemmed"] {
            db.create_scalar_function(
                name,
                1,
                rusqlite::functions::FunctionFlags::SQLITE_UTF8,
                |ctx| ctx.get::<String>(0),
            )
            .expect("function");
        }
        db.create_scalar_function(
            "am_date_words",
            1,
            rusqlite::functions::FunctionFlags::SQLITE_UTF8,
            |_| Ok(String::new()),
        )
        .expect("function");
        db.execute_batch(&format!(
            "INSERT INTO sessions (agent, source_id, project_id, started_at, last_event_at)
                 SELECT 'codex', 'bulk', project_id, 1, 1 FROM memories LIMIT 1;
             INSERT INTO observations (session_id, project_id, agent, mode, kind, title, at,
                                       tokens, work_tokens, distiller, source_key)
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {MANY})
             SELECT s.id, s.project_id, 'codex', 'code', 'discovery',
                    'Service ' || i || ' answers on port ' || (9000 + i), 1 + i, 10, 100,
                    'offline', 'bulk-' || i
             FROM n, sessions s WHERE s.source_id = 'bulk'"
        ))
        .expect("observations");
    }
    let items_on_server = || {
        let line =
            pg.owner(DB, "SELECT count(*) || ' ' || count(DISTINCT title) FROM agent_memory.items");
        let mut parts = line.split(' ').map(|n| n.parse::<i64>().expect("number"));
        (parts.next().expect("count"), parts.next().expect("distinct"))
    };
    let mut child = alice
        .cmd(&["team", "sync"])
        .env("AGENT_MEMORY_TEAM__BATCH_SIZE", "10")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let cut = until(&mut child, || items_on_server().0 > 0);
    pg.kill();
    let out = child.wait_with_output().expect("wait");
    if cut {
        assert!(!out.status.success(), "a sync whose server died must fail");
        let left = alice.json(&["team", "status", "--offline"])["items_queue_depth"]
            .as_i64()
            .expect("depth");
        assert!(left > 0 && left < MANY, "{left} of {MANY} left");
    }
    pg.restart();
    alice.ok(&["team", "sync"]);
    assert_eq!(items_on_server(), (MANY, MANY), "every observation once");
    assert_eq!(alice.json(&["team", "status", "--offline"])["items_queue_depth"], 0);

    // Bob's pull, cut off the same way.
    let mut child = bob
        .cmd(&["team", "sync"])
        .env("AGENT_MEMORY_TEAM__BATCH_SIZE", "10")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let pulled_some = || {
        rusqlite::Connection::open_with_flags(
            bob.home.db_path(),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .and_then(|db| {
            db.query_row("SELECT count(*) FROM observations", [], |r| r.get::<_, i64>(0))
        })
        .is_ok_and(|n| n > 0)
    };
    let cut = until(&mut child, pulled_some);
    pg.kill();
    let out = child.wait_with_output().expect("wait");
    assert!(!cut || !out.status.success());
    pg.restart();
    bob.ok(&["team", "sync"]);
    assert_eq!(items_from(&bob, "Alice"), MANY);
    assert_eq!(
        crate::count(
            &bob.home,
            "SELECT count(DISTINCT team_gid) FROM observations WHERE team_member = 'Alice'"
        ),
        MANY
    );
    assert!(bob.ok(&["team", "sync"]).contains("pulled 0 new"));
}

#[test]
fn with_a_model_search_team_finds_a_teammates_memory_by_meaning() {
    let test = "with_a_model_search_team_finds_a_teammates_memory_by_meaning";
    let Some(bin) = pg_bin(test) else { return };
    let pg = team_server(&bin);
    let (alice, shop_a, bob, _) = alice_and_bob(&pg, false);
    let carol_words = Member::new(&pg, "bob", "Bob", "bob-pw", false);
    let model = alice.home.user_home().join("tiny-model");
    agent_memory_embed::testing::write_tiny_static_model(&model).expect("tiny model");
    for member in [&alice, &bob] {
        member.ok(&["model", "install", "tiny", "--from", &model.to_string_lossy()]);
    }
    const SAID: &str = "the payment webhook signature check is broken";
    alice.ok(&["remember", SAID, "--project", &shop_a.to_string_lossy()]);
    // Her shop's observations and summary go too, with the vectors her work pass made.
    configure(&alice, "share_observations = [\"shop\"]\nsync_interval_minutes = 0");
    codex_decides(&alice, &shop_a, "codex-v1", "Bake sourdough bread in the oven");
    alice.ok(&["team", "sync"]);
    assert_eq!(
        pg.owner(DB, "SELECT model || ' ' || (embedding IS NOT NULL) FROM agent_memory.memories"),
        "tiny true",
        "pushed with its vector and the model's name"
    );
    assert_eq!(
        pg.owner(
            DB,
            "SELECT count(*) > 0 AND bool_and(model = 'tiny' AND embedding IS NOT NULL)
             FROM agent_memory.items"
        ),
        "t",
        "every item with its vector"
    );
    // No word in common: only the vectors find it.
    let found = bob.json(&["search", "--team", "callback invoice"]);
    let hits = found.as_array().cloned().unwrap_or_default();
    assert_eq!(hits.first().map(|h| &h["text"]), Some(&serde_json::json!(SAID)), "{found:#}");
    assert_eq!(hits[0]["member"], "Alice");
    assert!(hits[0]["similarity"].as_f64().is_some_and(|s| s > 0.5), "{found:#}");
    assert!(hits.iter().all(|h| h["source"] == "memory"), "bread is not near: {found:#}");
    // Without a model (the same role, another home), the search is by words only, as before.
    assert!(carol_words.ok(&["search", "--team", "callback invoice"]).contains("no team memory"));
    let words = carol_words.ok(&["search", "--team", "webhook signature"]);
    assert!(words.contains(SAID), "{words}");
}
