//! `agent-memory vault sync` on a temp vault: memories become notes; an edited note changes its
//! memory (sanitized); a note written in the vault becomes a memory; a ticked inbox box approves
//! a candidate; a deleted note forgets its memory; a forgotten memory's note goes; both sides
//! changed keeps both, flagged. Nothing is lost in any case.

use std::path::{Path, PathBuf};

use agent_memory_testkit::TestHome;
use serde_json::Value;

use crate::home;
use crate::memory::{JIFF, codex_decides};
use crate::recall_inject::work;

fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    // A person editing the vault, not a file agent-memory writes.
    #[allow(clippy::disallowed_methods)]
    std::fs::write(path, text).expect("write note");
}

/// One sync of a vault the user has (its folder exists).
fn sync(home: &TestHome, vault: &Path) -> Value {
    std::fs::create_dir_all(vault).expect("the user's vault");
    home.json(&["vault", "sync", "--vault", vault.to_str().expect("utf-8")])
}

#[test]
fn a_mistyped_vault_folder_is_refused_unless_asked_to_create_it() {
    let home = home();
    let typo = home.user_home().join("Obsidain");
    let path = typo.to_str().expect("utf-8");
    let out = home.run(&["vault", "sync", "--vault", path], b"");
    assert!(!out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("does not exist") && said.contains("--create"), "{said}");
    assert!(!typo.exists(), "nothing is created for a typo");
    let out = home.run(&["vault", "sync", "--vault", path, "--create"], b"");
    assert!(out.status.success(), "{}", agent_memory_testkit::describe(&out));
    assert!(typo.is_dir());
}

fn notes(vault: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(vault, &mut out);
    out.sort();
    out
}

fn note_of(vault: &Path, id: &str) -> PathBuf {
    notes(vault)
        .into_iter()
        .find(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with(&format!("{id} ")) && !name.contains(".conflict-")
        })
        .unwrap_or_else(|| panic!("no note for {id}: {:?}", notes(vault)))
}

fn memory(home: &TestHome, id: &str) -> Value {
    let all = home.json(&["memories", "--all"]);
    all.as_array()
        .expect("list")
        .iter()
        .find(|m| format!("m{}", m["id"]) == id)
        .cloned()
        .unwrap_or_else(|| panic!("no {id}: {all:#}"))
}

fn remember(home: &TestHome, args: &[&str]) -> String {
    let mut all = vec!["remember"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = home.ok(&all);
    let value: Value = serde_json::from_str(&out).expect("JSON");
    format!("m{}", value["id"])
}

#[test]
fn notes_and_memories_stay_in_step_both_ways_and_nothing_is_lost() {
    let home = home();
    let vault = home.user_home().join("Vault/agent-memory");
    std::fs::create_dir_all(vault.parent().expect("vault")).expect("mkdir vault");
    let project = home.user_home().join("proj");
    std::fs::create_dir_all(&project).expect("mkdir");
    let project_flag = project.to_str().expect("utf-8");
    let wal = remember(
        &home,
        &["The store runs SQLite in WAL mode", "--kind", "decision", "--project", project_flag],
    );
    let pref = remember(&home, &["Prefer small commits", "--kind", "preference", "--global"]);

    // Create: each memory becomes a note, by project and kind.
    let report = sync(&home, &vault);
    assert_eq!(report["written"], 2, "{report:#}");
    let wal_note = note_of(&vault, &wal);
    assert!(wal_note.starts_with(vault.join("proj/Decisions")), "{wal_note:?}");
    assert!(note_of(&vault, &pref).starts_with(vault.join("Global/Preferences")));
    let text = std::fs::read_to_string(&wal_note).expect("note");
    assert!(text.starts_with(&format!("---\nid: {wal}\nkind: decision\ntier: L2\n")), "{text}");
    assert!(text.ends_with("---\nThe store runs SQLite in WAL mode\n"), "{text}");
    assert_eq!(sync(&home, &vault)["written"], 0, "a second sync changes nothing");

    // Edit in the file: text and importance flow back, a secret never reaches the store.
    let secret = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let edited = text
        .replace("importance: 7", "importance: 9")
        .replace("in WAL mode", &format!("in WAL mode; token {secret} stays out"));
    put(&wal_note, &edited);
    let report = sync(&home, &vault);
    assert_eq!(report["updated_from_vault"], 1, "{report:#}");
    let m = memory(&home, &wal);
    assert_eq!(m["importance"], 9);
    let stored = m["text"].as_str().expect("text");
    assert!(
        stored.starts_with("The store runs SQLite in WAL mode; token ") && !stored.contains(secret),
        "{stored}"
    );

    // A note written in Obsidian becomes a memory of the project its folder names.
    let fresh = vault.join("proj/Conventions/Error messages.md");
    put(&fresh, "Every error message says what to do next.\n");
    let report = sync(&home, &vault);
    assert_eq!(report["created_from_vault"], 1, "{report:#}");
    let written = std::fs::read_to_string(&fresh).expect("note");
    let id = written.lines().nth(1).and_then(|l| l.strip_prefix("id: ")).expect("an id").to_owned();
    let m = memory(&home, &id);
    assert_eq!(m["kind"], "convention");
    assert_eq!(m["tier"], "L2");
    assert_eq!(m["text"], "Every error message says what to do next.");

    // Both sides change: the store's version in the note, the vault's kept beside it.
    home.ok(&["review", "--edit", &wal, "--text", "The store runs SQLite in WAL mode, always"]);
    let note = std::fs::read_to_string(&wal_note).expect("note");
    put(&wal_note, &note.replace("stays out", "stays out of git"));
    let report = sync(&home, &vault);
    assert_eq!(report["conflicts"].as_array().map(Vec::len), Some(1), "{report:#}");
    let now = std::fs::read_to_string(&wal_note).expect("note");
    assert!(now.contains("conflict: ") && now.contains("WAL mode, always"), "{now}");
    let copy = notes(&vault)
        .into_iter()
        .find(|p| p.to_string_lossy().contains(".conflict-"))
        .expect("copy");
    assert!(std::fs::read_to_string(copy).expect("copy").contains("stays out of git"));
    assert_eq!(memory(&home, &wal)["text"], "The store runs SQLite in WAL mode, always");

    // Delete a note: its memory is forgotten (and can be brought back).
    std::fs::remove_file(note_of(&vault, &pref)).expect("delete note");
    let report = sync(&home, &vault);
    assert_eq!(report["forgotten"], 1, "{report:#}");
    assert_eq!(memory(&home, &pref)["status"], "forgotten");

    // Forgotten in the store: its untouched note goes.
    home.ok(&["forget", &id]);
    let report = sync(&home, &vault);
    assert_eq!(report["removed"], 1, "{report:#}");
    assert!(!fresh.exists());
}

#[test]
fn a_ticked_inbox_box_approves_its_candidate() {
    let home = home();
    let vault = home.user_home().join("Vault");
    std::fs::create_dir_all(&vault).expect("mkdir vault");
    codex_decides(&home, "s-jiff", JIFF, "src/time.rs");
    work(&home, &[]);
    let candidates = home.json(&["review"]);
    let candidate = &candidates.as_array().expect("list")[0];
    let id = candidate["id"].as_i64().expect("id");

    sync(&home, &vault);
    let inbox: Vec<PathBuf> = notes(&vault.join("Inbox"));
    assert_eq!(inbox.len(), 1, "one note for today: {inbox:?}");
    let text = std::fs::read_to_string(&inbox[0]).expect("inbox");
    let line = format!(" ^c{id}");
    assert!(text.lines().any(|l| l.starts_with("- [ ] ") && l.ends_with(&line)), "{text}");

    put(&inbox[0], &text.replace("- [ ] ", "- [x] "));
    let report = sync(&home, &vault);
    assert_eq!(report["approved"], 1, "{report:#}");
    let m = memory(&home, &format!("m{id}"));
    assert_eq!(m["status"], "active");
    assert_eq!(m["tier"], "L2");
    // Approved, it has a note of its own and leaves the inbox.
    note_of(&vault, &format!("m{id}"));
    let text = std::fs::read_to_string(&inbox[0]).expect("inbox");
    assert!(!text.contains(&line) && text.contains("Nothing waits from this day."), "{text}");
}

/// A symbolic link in the vault is never followed: a linked folder or note brings nothing in,
/// and a note whose folder is a link is never written through it.
#[test]
fn links_in_the_vault_are_left_alone() {
    use std::os::unix::fs::symlink;
    let home = home();
    let vault = home.user_home().join("Vault");
    std::fs::create_dir_all(&vault).expect("mkdir vault");
    let outside = home.user_home().join("outside");
    let secret = "---\nkind: fact\n---\nThe outside file must stay outside\n";
    put(&outside.join("secret.md"), secret);
    put(&outside.join("deep/other.md"), secret);
    symlink(&outside, vault.join("Linked")).expect("link a folder");
    std::fs::create_dir_all(vault.join("Global/facts")).expect("mkdir");
    symlink(outside.join("secret.md"), vault.join("Global/facts/linked.md")).expect("link a note");

    let report = sync(&home, &vault);
    let problems = report["problems"].to_string();
    assert!(problems.contains("Linked") && problems.contains("linked.md"), "{report:#}");
    assert!(problems.contains("symbolic link"), "{report:#}");
    assert_eq!(report["created_from_vault"], 0, "{report:#}");
    let all = home.ok(&["memories", "--all"]);
    assert!(!all.contains("outside file"), "{all}");

    // A global memory whose folder is a link to elsewhere: the sync refuses to write there.
    let elsewhere = home.user_home().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    std::fs::remove_file(vault.join("Global/facts/linked.md")).expect("unlink");
    std::fs::remove_dir(vault.join("Global/facts")).expect("rmdir");
    std::fs::remove_dir(vault.join("Global")).expect("rmdir");
    symlink(&elsewhere, vault.join("Global")).expect("link Global");
    remember(&home, &["Always answer in British English", "--global", "--kind", "preference"]);
    let out = home.run(&["vault", "sync", "--vault", vault.to_str().expect("utf-8")], b"");
    assert!(!out.status.success(), "{}", agent_memory_testkit::describe(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("symbolic link"), "{said}");
    assert_eq!(std::fs::read_dir(&elsewhere).expect("read").count(), 0, "nothing written there");
    assert_eq!(std::fs::read_to_string(outside.join("secret.md")).expect("read"), secret);
}

/// A note synced into another folder claims a memory's id: it changes nothing, nor does a
/// negative id or an oversized project name; a note the person moved within its own folder
/// still speaks for its memory.
#[test]
fn a_note_claiming_another_notes_id_changes_nothing() {
    let home = home();
    let vault = home.user_home().join("Vault/agent-memory");
    let project = home.user_home().join("proj");
    std::fs::create_dir_all(&project).expect("mkdir");
    let wal = remember(
        &home,
        &[
            "The store runs SQLite in WAL mode",
            "--kind",
            "decision",
            "--project",
            project.to_str().expect("utf-8"),
        ],
    );
    let pref = remember(&home, &["Prefer small commits", "--kind", "preference", "--global"]);
    sync(&home, &vault);
    let pref_note = note_of(&vault, &pref);
    let original = std::fs::read_to_string(&pref_note).expect("note");

    // Planted under another folder, claiming the global preference: nothing changes.
    let planted = vault.join("Shared/Facts/planted.md");
    put(&planted, &original.replace("Prefer small commits", "Always push straight to main"));
    put(&vault.join("Shared/Facts/negative.md"), "---\nid: m-1\n---\nRewritten\n");
    let huge = "x".repeat(1 << 20);
    put(&vault.join("proj/Facts/huge.md"), &format!("---\nproject: {huge}\n---\nA fact\n"));
    let report = sync(&home, &vault);
    assert_eq!(memory(&home, &pref)["text"], "Prefer small commits", "{report:#}");
    assert_eq!(std::fs::read_to_string(&pref_note).expect("note"), original);
    let problems = report["problems"].to_string();
    assert!(problems.contains("planted.md") && problems.contains("is not its note"), "{problems}");
    assert!(problems.contains("negative.md") && problems.contains("not a memory id"), "{problems}");
    assert!(problems.contains("huge.md") && problems.len() < 10_000, "{problems}");
    assert_eq!(report["created_from_vault"], 0, "{report:#}");

    // Moved by the person within its own folder, then edited: still its memory.
    let wal_note = note_of(&vault, &wal);
    let moved = vault.join("proj/Notes on storage.md");
    let text = std::fs::read_to_string(&wal_note).expect("note");
    std::fs::remove_file(&wal_note).expect("move away");
    put(&moved, &text.replace("in WAL mode", "in WAL mode with a 4 MiB log"));
    let report = sync(&home, &vault);
    assert_eq!(report["updated_from_vault"], 1, "{report:#}");
    assert_eq!(memory(&home, &wal)["text"], "The store runs SQLite in WAL mode with a 4 MiB log");
    assert_eq!(memory(&home, &wal)["status"], "active");
}
