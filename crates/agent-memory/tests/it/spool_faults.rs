//! The hook under faults that used to lose events: standard input that arrives slowly, a disk
//! with no room anywhere, hooks killed part way, claims left by dead drainers, clocks that are
//! wrong, and another user owning the folder above the fallback spool.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::spool::{Immutable, TinyDisk, is_root};
use crate::{assert_quiet_success, count, home, payload};
use agent_memory_testkit::TestHome;

fn prompt_payload(text: &str) -> Vec<u8> {
    payload("fault-session", "UserPromptSubmit", "/tmp", serde_json::json!({ "prompt": text }))
}

fn prompt(home: &TestHome, text: &str) -> std::process::Output {
    home.hook("claude-code", "UserPromptSubmit", &prompt_payload(text))
}

fn events_with(home: &TestHome, text: &str) -> i64 {
    count(home, &format!("SELECT count(*) FROM events WHERE body LIKE '%{text}%'"))
}

/// Every file in the home's spool and the fallback spools, claimed ones included.
fn spool_files(home: &TestHome) -> Vec<PathBuf> {
    let mut dirs = home.fallback_spool_dirs();
    dirs.push(home.spool_dir());
    dirs.iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|d| d.flatten().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().contains(".jsonl"))
        .collect()
}

/// A prompt hook whose standard input stays open: the test writes it and ends it.
fn spawn_hook(cmd: &mut Command) -> Child {
    cmd.args(["hook", "--agent", "claude-code", "--event", "UserPromptSubmit"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hook")
}

fn outcomes(home: &TestHome) -> serde_json::Value {
    home.json(&["status"])["hooks"][0]["outcomes"].clone()
}

/// An agent writing its hook's input slowly (many producers at once) is waited for: the
/// deadline counts from when the input is complete, so the events are stored, not cut short.
#[test]
fn standard_input_slower_than_the_deadline_is_waited_for() {
    let home = home();
    assert_quiet_success(&prompt(&home, "initialise the store first"));
    let mut hooks = Vec::new();
    let topics = [
        "the quartz parser rejects nested lists",
        "rename the billing webhook handler",
        "why does the cobalt cache miss on restart",
        "add a retry to the amber uploader",
        "the flaky login test on the staging box",
        "document the nightly export schedule",
        "split the giant settings module",
        "bump the tokenizer to its newest release",
    ];
    for topic in topics {
        let body = prompt_payload(&format!("slow prompt: {topic}"));
        let mut cmd = home.cmd();
        cmd.env("AGENT_MEMORY_CAPTURE__DEADLINE_MS", "300");
        let mut child = spawn_hook(&mut cmd);
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(&body[..body.len() / 2]).expect("write the first half");
        stdin.flush().expect("flush");
        hooks.push((child, stdin, body));
    }
    // Longer than the deadline, well within the agent's own timeout.
    std::thread::sleep(Duration::from_millis(900));
    for (mut child, mut stdin, body) in hooks {
        stdin.write_all(&body[body.len() / 2..]).expect("write the rest");
        drop(stdin);
        child.stdin = None;
        let out = child.wait_with_output().expect("wait");
        assert_quiet_success(&out);
    }
    assert_eq!(events_with(&home, "slow prompt: "), 8, "log:\n{}", home.log());
    let outcomes = outcomes(&home);
    assert_eq!(outcomes["stored"], 9, "{outcomes}");
    assert!(outcomes.get("partial").is_none() && outcomes.get("lost").is_none(), "{outcomes}");
    assert!(spool_files(&home).is_empty(), "nothing left in the spool: {:?}", spool_files(&home));
}

/// A hook killed while its input is still arriving, or while it waits for a locked store, left
/// its input in the spool first; the next drain stores it, without waiting for any claim to
/// age. A hook that finishes normally leaves no file behind.
#[test]
fn a_killed_hook_leaves_its_event_in_the_spool() {
    let home = home();
    assert_quiet_success(&prompt(&home, "initialise the store first"));
    assert!(spool_files(&home).is_empty(), "a normal run writes no spool file");

    // Killed while reading.
    let body = prompt_payload("killed while the agent was still writing about the amber lexer");
    let mut child = spawn_hook(&mut home.cmd());
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(&body[..body.len() - 10]).expect("write");
    stdin.flush().expect("flush");
    std::thread::sleep(Duration::from_millis(600));
    child.kill().expect("kill");
    child.wait().expect("reap");
    drop(stdin);

    // Killed while waiting for the store's write lock.
    let mut locker = rusqlite::Connection::open(home.db_path()).expect("open the store");
    let tx = locker
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .expect("take the write lock");
    let body = prompt_payload("killed while the store was locked by the cobalt migration");
    let mut cmd = home.cmd();
    cmd.env("AGENT_MEMORY_CAPTURE__DEADLINE_MS", "5000")
        .env("AGENT_MEMORY_CAPTURE__BUSY_TIMEOUT_MS", "4000")
        .env("AGENT_MEMORY_CAPTURE__AGENT_TIMEOUT_MS", "20000");
    let mut child = spawn_hook(&mut cmd);
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(&body).expect("write");
    drop(stdin);
    std::thread::sleep(Duration::from_millis(800));
    child.kill().expect("kill");
    child.wait().expect("reap");
    tx.rollback().expect("release the lock");

    assert_eq!(spool_files(&home).len(), 2, "{:?}", spool_files(&home));
    let status = home.json(&["status"]);
    assert_eq!(status["spool"]["records"], 2, "{status:#}");
    let report = home.json(&["recover"]);
    assert_eq!(report["stored"], 2, "{report}");
    assert_eq!(events_with(&home, "killed while the agent was still writing"), 1);
    assert_eq!(events_with(&home, "cobalt migration"), 1);
    assert!(spool_files(&home).is_empty());
}

/// A claim whose drainer died is counted by `status` and taken by `recover` at once; so is a
/// claim stamped by a clock far ahead. A record dated in the future is stored as of now.
#[test]
fn dead_or_misdated_claims_are_seen_and_taken_at_once() {
    let home = home();
    assert_quiet_success(&prompt(&home, "initialise the store first"));
    let mut spooled = Vec::new();
    for text in ["claimed by a drainer that died", "claimed by a clock a year ahead"] {
        let (out, files) = crate::hook_while_locked(
            &home,
            "claude-code",
            "UserPromptSubmit",
            &prompt_payload(text),
        );
        assert_quiet_success(&out);
        assert_eq!(files.len(), spooled.len() + 1);
        let newest = std::fs::read_dir(home.spool_dir())
            .expect("spool")
            .flatten()
            .map(|e| e.path())
            .find(|p| !spooled.contains(p))
            .expect("the new file");
        spooled.push(newest);
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_millis() as i64;
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|m| m.trim().parse().ok())
        .unwrap_or(4_194_304);
    let claimed = |path: &Path, stamp: String| {
        let name = path.file_name().expect("name").to_string_lossy().into_owned();
        std::fs::rename(path, path.with_file_name(format!("{name}.claimed-{stamp}")))
            .expect("claim");
    };
    claimed(&spooled[0], format!("{now}-{}", pid_max + 1));
    claimed(&spooled[1], format!("{}", now + 365 * 86_400_000));

    // A third record, written by a clock a day ahead.
    let day = 86_400_000;
    let (out, _) = crate::hook_while_locked(
        &home,
        "claude-code",
        "UserPromptSubmit",
        &prompt_payload("spooled by a clock a day ahead"),
    );
    assert_quiet_success(&out);
    let future = std::fs::read_dir(home.spool_dir())
        .expect("spool")
        .flatten()
        .map(|e| e.path())
        .find(|p| !p.to_string_lossy().contains(".claimed-"))
        .expect("the third file");
    let text = std::fs::read_to_string(&future).expect("read");
    let mut record: serde_json::Value = serde_json::from_str(text.trim()).expect("record");
    record["received_at_ms"] = (now + day).into();
    let at = record["prepared"]["event"]["at_ms"].as_i64().expect("at");
    record["prepared"]["event"]["at_ms"] = (at + day).into();
    #[allow(clippy::disallowed_methods)]
    std::fs::write(&future, format!("{record}\n")).expect("rewrite");

    let status = home.json(&["status"]);
    assert_eq!(status["spool"]["records"], 3, "claimed files are waiting too: {status:#}");
    let report = home.json(&["recover"]);
    assert_eq!(report["stored"], 3, "no claim waited out its window: {report}");
    assert!(spool_files(&home).is_empty());
    let after = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_millis() as i64;
    let latest = count(&home, "SELECT max(at) FROM events");
    assert!(latest <= after, "dated now at the latest, not a day ahead: {latest} > {after}");
    assert_eq!(events_with(&home, "a clock a day ahead"), 1);
}

/// With the home and the temporary directory on one full disk, nothing can take an event: each
/// loss is counted where `status` shows it, and once the disk has room again the count moves
/// into the store's record.
#[test]
fn events_no_place_can_take_are_counted_in_status() {
    // Mounting a small tmpfs needs root, which CI has; elsewhere this cannot be staged.
    if !is_root() {
        return;
    }
    let home = home();
    let disk = TinyDisk::mount(&home.home());
    let tmp = home.home().join("tmp");
    let hook = |text: &str| {
        let mut cmd = home.cmd();
        cmd.env("TMPDIR", &tmp).args([
            "hook",
            "--agent",
            "claude-code",
            "--event",
            "UserPromptSubmit",
        ]);
        agent_memory_testkit::run_with_stdin(&mut cmd, &prompt_payload(text))
    };
    assert_quiet_success(&hook("initialise the store first"));
    std::fs::create_dir_all(&tmp).expect("tmp");

    let filler = disk.fill();

    let text = "prompt while every disk is full ".repeat(40);
    for _ in 0..5 {
        assert_quiet_success(&hook(&text));
    }
    assert!(spool_files(&home).is_empty(), "no spool could take them");
    let status = home.json(&["status"]);
    let window = &status["hooks"][0];
    assert_eq!(window["outcomes"]["lost"], 5, "{status:#}");
    assert!(window["error_rate"].as_f64().expect("rate") > 0.5, "{status:#}");
    let text_status = home.ok(&["status"]);
    assert!(text_status.contains("lost 5"), "{text_status}");

    // Room again: the next hook moves the count into the store, counted once.
    std::fs::remove_file(&filler).expect("free space");
    assert_quiet_success(&hook("a prompt once there is room"));
    let outcomes = outcomes(&home);
    assert_eq!(outcomes["lost"], 5, "{outcomes}");
    assert_eq!(count(&home, "SELECT count(*) FROM hook_runs WHERE outcome = 'lost'"), 5);
}

/// Another user who owns the folder where the fallback spool goes (open to all), or who put a
/// link or a file in its place, gets nothing written there or into the folder a link points
/// to; the event is counted as lost rather than handed to them. With a folder of this user's
/// own again, the fallback is used.
#[test]
fn a_fallback_spool_under_another_user_s_folder_is_not_used() {
    // Folders of another user and `chattr` need root, which CI has.
    if !is_root() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let home = home();
    assert_quiet_success(&prompt(&home, "initialise the store first"));
    std::fs::remove_dir_all(home.spool_dir()).ok();
    // A connection that closes last folds the write-ahead log back and deletes it, so the store
    // would need to create files in the home to take a write.
    let fold_log = || {
        let conn = rusqlite::Connection::open(home.db_path()).expect("open");
        conn.query_row("SELECT count(*) FROM events", [], |r| r.get::<_, i64>(0)).expect("read");
        drop(conn);
        assert!(!home.home().join("memory.db-wal").exists());
    };
    let tmp = home.user_home().join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let parent = tmp.join("agent-memory-0");
    let repo = home.user_home().join("victim-repo");
    std::fs::create_dir_all(repo.join(".git")).expect("repo");
    let chown = |path: &Path| {
        let ok = Command::new("chown").args(["-h", "65534"]).arg(path).status().expect("chown");
        assert!(ok.success());
    };

    let plant = |case: &str| {
        std::fs::remove_dir_all(&parent).or_else(|_| std::fs::remove_file(&parent)).ok();
        match case {
            "open folder" => {
                std::fs::create_dir(&parent).expect("mkdir");
                std::fs::set_permissions(&parent, std::fs::Permissions::from_mode(0o777))
                    .expect("chmod");
            }
            "link" => std::os::unix::fs::symlink(&repo, &parent).expect("link"),
            _ => {
                #[allow(clippy::disallowed_methods)]
                std::fs::write(&parent, b"in the way").expect("file");
            }
        }
        chown(&parent);
    };
    let cases = ["open folder", "link", "file"];
    for (n, case) in cases.iter().enumerate() {
        plant(case);
        fold_log();
        {
            let _guard = Immutable::new(&home.home());
            assert_quiet_success(&prompt(&home, &format!("prompt {n} with a planted {case}")));
        }
        let inside: Vec<_> = std::fs::read_dir(&repo).expect("repo").flatten().collect();
        assert_eq!(inside.len(), 1, "{case}: only .git in the repository");
        if parent.is_dir() && !parent.is_symlink() {
            let planted: Vec<_> = std::fs::read_dir(&parent).expect("dir").flatten().collect();
            assert!(planted.is_empty(), "{case}: nothing in another user's folder");
        }
        let status = home.json(&["status"]);
        assert_eq!(status["hooks"][0]["outcomes"]["lost"], n + 1, "{case}: {status:#}");
    }

    // The folder is this user's own again: the fallback takes the event.
    std::fs::remove_file(&parent).ok();
    fold_log();
    {
        let _guard = Immutable::new(&home.home());
        assert_quiet_success(&prompt(&home, "prompt with the fallback its own again"));
    }
    assert_eq!(home.json(&["recover"])["stored"], 1);
    assert_eq!(events_with(&home, "its own again"), 1);
}
