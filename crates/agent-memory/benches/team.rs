//! Team memory on a local PostgreSQL: how fast `agent-memory team sync` pushes and pulls many
//! memories, and how fast `agent-memory search --team` answers with a million rows on the
//! server.
//!
//! `cargo bench -p agent-memory --bench team` (release profile) with `AGENT_MEMORY_TEST_PG_BIN`
//! naming PostgreSQL's bin folder (`scripts/team-test-db` installs it). Knobs: `BENCH_MEMORIES`
//! (memories one member pushes and another pulls, default 100000), `BENCH_SERVER_ROWS` (rows on
//! the server for search, default 1000000), `BENCH_RUNS` (searches, default 200). Starts its own
//! server on 127.0.0.1 (the testkit's), then:
//!
//! 1. fills member A's store with `BENCH_MEMORIES` reviewed project memories and times one
//!    `team sync` (the push), then member B's first `team sync` (the pull), in memories/s;
//! 2. fills the server up to `BENCH_SERVER_ROWS` rows of the same team in one statement;
//! 3. runs `BENCH_RUNS` two-word searches in-process over one connection (the server's own
//!    time for the query `search --team` sends), as many in-process over a new connection each
//!    (the connection alone, then with the query in its fresh backend; and the sequence the
//!    client sent before `agent_memory.find`, for comparison), and as many whole
//!    `agent-memory search --team` processes (start, connect, query, print; and with
//!    `--project`, which opens the local store to name the project), with
//!    `agent-memory --version` as the process's floor measured in the same run. Prints
//!    p50/p95/p99; asserts nothing.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use agent_memory_testkit::pg::{OWNER_PASSWORD, PG_BIN_ENV, PgServer};

use agent_memory_testkit::synthetic::{Rng, vocabulary};

const BIN: &str = env!("CARGO_BIN_EXE_agent-memory");
const DB: &str = "team";
const PROJECT: &str = "git:github.com/acme/shop";

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A member's home: a temp `HOME` with an agent-memory home whose `[team]` names the server.
struct Member {
    dir: tempfile::TempDir,
    password: &'static str,
}

impl Member {
    fn new(pg: &PgServer, role: &str, password: &'static str) -> Member {
        let dir = tempfile::Builder::new().prefix("am-bench-").tempdir().unwrap();
        let home = dir.path().join(".agent-memory");
        agent_memory_core::fsutil::ensure_private_dir(&home).unwrap();
        let config = format!(
            "[team]\nurl = \"{}\"\nmember = \"{role}\"\nmachine = \"{role}-bench\"\nbatch_size = 1000\n",
            pg.url(role, DB)
        );
        agent_memory_core::fsutil::write_atomic(&home.join("config.toml"), config.as_bytes())
            .unwrap();
        Member { dir, password }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join(".agent-memory")
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.args(args)
            .env("HOME", self.dir.path())
            .env("AGENT_MEMORY_HOME", self.home())
            .env("PGPASSWORD", self.password)
            .current_dir(self.dir.path());
        cmd
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// `n` reviewed project memories in the member's store, written in one transaction through
/// the store's own schema and triggers.
fn fill(member: &Member, n: usize, words: &[String]) {
    member.run(&["status"]);
    let conn = rusqlite::Connection::open(member.home().join("memory.db")).unwrap();
    // The store's full-text triggers call its functions; the bench reads nothing locally.
    for name in ["am_fts_text", "am_fts_stemmed"] {
        conn.create_scalar_function(
            name,
            1,
            rusqlite::functions::FunctionFlags::SQLITE_UTF8,
            |ctx| ctx.get::<String>(0),
        )
        .unwrap();
    }
    let tx = conn.unchecked_transaction().unwrap();
    tx.execute(
        "INSERT INTO projects (key, name, root, origin, created_at) VALUES (?1, 'shop', '/w/shop', NULL, 0)",
        [PROJECT],
    )
    .unwrap();
    let mut rng = Rng(7);
    {
        let mut insert = tx
            .prepare(
                "INSERT INTO memories (tier, kind, text, project_id, importance, created_at,
                                       updated_at, status, origin)
                 VALUES ('L2', 'decision', ?1, 1, 5, ?2, ?2, 'active', 'codex')",
            )
            .unwrap();
        for i in 0..n {
            let text: Vec<&str> = (0..14).map(|_| rng.word(words)).collect();
            insert
                .execute(rusqlite::params![text.join(" "), 1_760_000_000_000i64 + i as i64])
                .unwrap();
        }
    }
    tx.commit().unwrap();
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1000.0
}

fn report(name: &str, mut times: Vec<Duration>) -> f64 {
    times.sort();
    let p50 = percentile(&times, 0.5);
    println!(
        "{name}: p50 {p50:.2} ms, p95 {:.2} ms, p99 {:.2} ms ({} runs)",
        percentile(&times, 0.95),
        percentile(&times, 0.99),
        times.len()
    );
    p50
}

fn main() {
    let Some(bin) = std::env::var_os(PG_BIN_ENV).map(PathBuf::from) else {
        eprintln!(
            "{PG_BIN_ENV} is not set; run `export {PG_BIN_ENV}=\"$(scripts/team-test-db | tail -n 1)\"`"
        );
        return;
    };
    let memories = env_or("BENCH_MEMORIES", 100_000);
    let server_rows = env_or("BENCH_SERVER_ROWS", 1_000_000);
    let runs = env_or("BENCH_RUNS", 200);
    let words = vocabulary();

    let pg = PgServer::start(Path::new(&bin));
    pg.owner("postgres", &format!("CREATE DATABASE {DB}"));
    pg.owner(
        DB,
        "CREATE ROLE alice LOGIN PASSWORD 'alice-pw'; CREATE ROLE bob LOGIN PASSWORD 'bob-pw'",
    );
    let owner = Member::new(&pg, "postgres", OWNER_PASSWORD);
    owner.run(&["team", "init"]);
    pg.owner(
        DB,
        "SELECT agent_memory.add_member('alice', 'core'), agent_memory.add_member('bob', 'core')",
    );
    let alice = Member::new(&pg, "alice", "alice-pw");
    let bob = Member::new(&pg, "bob", "bob-pw");

    println!("team sync: {memories} memories, batches of 1000, server on 127.0.0.1");
    fill(&alice, memories, &words);
    let start = Instant::now();
    let pushed = alice.run(&["team", "sync"]);
    let push = start.elapsed();
    let start = Instant::now();
    let pulled = bob.run(&["team", "sync"]);
    let pull = start.elapsed();
    println!(
        "  push: {:.1} s, {:.0} memories/s ({})",
        push.as_secs_f64(),
        memories as f64 / push.as_secs_f64(),
        pushed.trim()
    );
    println!(
        "  pull: {:.1} s, {:.0} memories/s ({})",
        pull.as_secs_f64(),
        memories as f64 / pull.as_secs_f64(),
        pulled.trim()
    );

    // The rest of the server's rows, as one more member's, written in one statement with the
    // server's triggers off (the owner's bulk load; the rows are the same shape).
    let more = server_rows.saturating_sub(memories);
    let start = Instant::now();
    let list: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    pg.owner(
        DB,
        &format!(
            "SET session_replication_role = replica;
             WITH v AS MATERIALIZED (SELECT ARRAY[{words}] AS w)
             INSERT INTO agent_memory.memories
                 (gid, team, member_role, member, machine, agent, project_key, project_name, tier,
                  kind, text, importance, status, created_at, updated_at, revision, search_text)
             SELECT gen_random_uuid(), 'core', 'bob', 'bob', 'bob-bench', 'claude-code', '{PROJECT}',
                    'shop', 'L2', 'fact', t.text, 5, 'active', 0, 0,
                    nextval('agent_memory.revision'), to_tsvector('simple', t.text)
             FROM (SELECT (SELECT string_agg(v.w[1 + least(floor(random() * {n}), floor(random() * {n}))::int], ' ')
                           FROM generate_series(1, 14) g CROSS JOIN v WHERE g > i * 0) AS text
                   FROM generate_series(1, {more}) i) t;
             ANALYZE agent_memory.memories;",
            n = words.len(),
            words = list.join(","),
        ),
    );
    println!(
        "server: {} rows ({more} loaded in {:.1} s)",
        pg.owner(DB, "SELECT count(*) FROM agent_memory.memories"),
        start.elapsed().as_secs_f64()
    );

    let mut rng = Rng(11);
    let queries: Vec<String> =
        (0..runs).map(|_| format!("{} {}", rng.word(&words), rng.word(&words))).collect();
    // The member's own connection, its password in the URL (this process sets no environment).
    let url = pg.url("alice", DB).replace("alice@", "alice:alice-pw@");
    let mut client = agent_memory_team::connect::connect(&url).unwrap();
    let mut server_side = Vec::with_capacity(runs);
    let mut found = 0;
    for query in &queries {
        let start = Instant::now();
        let asked =
            agent_memory_team::search::TeamQuery { text: query, limit: 20, ..Default::default() };
        found += agent_memory_team::search::search_on(&mut client, &asked).unwrap().len();
        server_side.push(start.elapsed());
    }
    // Where a whole process's time goes beyond the process: a new connection (TCP, a new
    // server backend, SCRAM), then the same query in that fresh backend (cold caches).
    let mut connect_only = Vec::with_capacity(runs);
    let mut fresh = Vec::with_capacity(runs);
    for query in &queries {
        let start = Instant::now();
        let mut client = agent_memory_team::connect::connect(&url).unwrap();
        connect_only.push(start.elapsed());
        let asked =
            agent_memory_team::search::TeamQuery { text: query, limit: 20, ..Default::default() };
        agent_memory_team::search::search_on(&mut client, &asked).unwrap();
        fresh.push(start.elapsed());
    }
    // The sequence the client sent before `agent_memory.find`, in the same run for comparison:
    // a new connection, the schema version asked, then `agent_memory.search` prepared and run
    // for rows with both words, and again for rows with either when those were too few.
    let mut before = Vec::with_capacity(runs);
    for query in &queries {
        let start = Instant::now();
        let mut client = agent_memory_team::connect::connect(&url).unwrap();
        agent_memory_team::schema::check(&mut client).unwrap();
        let mut found = 0;
        let all = agent_memory_team::search::ts_query_all(query);
        for tsquery in [all, agent_memory_team::search::ts_query(query)].into_iter().flatten() {
            if found >= 20 {
                break;
            }
            found += client
                .query(
                    "SELECT gid, member, agent, project_name, tier, kind, text, updated_at, rank
                     FROM agent_memory.search($1, $2, $3)",
                    &[&tsquery, &None::<String>, &20i32],
                )
                .unwrap()
                .len();
        }
        before.push(start.elapsed());
    }
    let mut floor = Vec::with_capacity(runs);
    let mut whole = Vec::with_capacity(runs);
    let mut with_project = Vec::with_capacity(runs);
    for query in &queries {
        let start = Instant::now();
        alice.run(&["--version"]);
        floor.push(start.elapsed());
        let args: Vec<&str> = ["search", "--team"].into_iter().chain(query.split(' ')).collect();
        let start = Instant::now();
        alice.run(&args);
        whole.push(start.elapsed());
        // `--project` opens the local store (A's, with its memories) to name the project.
        let args: Vec<&str> =
            ["search", "--team", "--project", "shop"].into_iter().chain(query.split(' ')).collect();
        let start = Instant::now();
        alice.run(&args);
        with_project.push(start.elapsed());
    }
    println!(
        "search --team over {server_rows} rows, two words, at most 20 results ({:.1} found on average):",
        found as f64 / runs as f64
    );
    report("  the query on the server, one connection", server_side);
    report("  a new connection (TCP, backend, SCRAM), in-process", connect_only);
    report("  a new connection and the query, in-process", fresh);
    report("  the same, as the client asked before (schema check, two prepared calls)", before);
    let base = report("  agent-memory --version (process floor)", floor);
    let p50 = report("  agent-memory search --team (whole process)", whole);
    report("  agent-memory search --team --project shop (opens the local store)", with_project);
    println!("  whole search / process floor, p50: {:.1}x", p50 / base);
}
