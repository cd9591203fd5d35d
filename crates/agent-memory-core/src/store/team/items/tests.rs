use super::*;

/// A store with two sessions of Codex, one in the shop (a git project) and one in a project
/// known by its path, each with an observation and a summary; the shop's second observation
/// came from a private event. A store on disk, whose connection has the settings of every real
/// one (foreign keys unchecked: a forgotten observation's sources stay).
fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("memory.db"), std::time::Duration::from_secs(1))
        .expect("store");
    store
        .conn()
        .execute_batch(
            "INSERT INTO projects (id, key, name, root, created_at) VALUES
                 (1, 'git:github.com/acme/shop', 'shop', '/w/shop', 0),
                 (2, 'path:/w/scratch', 'scratch', '/w/scratch', 0);
             INSERT INTO sessions (id, agent, source_id, project_id, started_at, last_event_at)
                 VALUES (1, 'codex', 'c1', 1, 0, 0), (2, 'codex', 'c2', 2, 0, 0);
             INSERT INTO events (id, uid, session_id, project_id, agent, kind, source_event, at,
                                 summary, body, content_hash, sensitivity)
                 VALUES (1, 'u1', 1, 1, 'codex', 'prompt', 'x', 1, 's', 'b', 'h', 'normal'),
                        (2, 'u2', 1, 1, 'codex', 'prompt', 'x', 2, 's', 'b', 'h2', 'private');
             INSERT INTO observations (id, session_id, project_id, agent, mode, kind, title,
                                       subtitle, at, tokens, work_tokens, distiller, source_key)
                 VALUES (1, 1, 1, 'codex', 'code', 'decision', 'Chose jiff', 'for timestamps',
                         10, 5, 50, 'offline', 'k1'),
                        (2, 1, 1, 'codex', 'code', 'discovery', 'The secret key', '', 11, 5, 50,
                         'offline', 'k2'),
                        (3, 2, 2, 'codex', 'code', 'decision', 'Scratch notes', '', 12, 5, 50,
                         'offline', 'k3');
             INSERT INTO observation_sources (observation_id, event_id) VALUES (1, 1), (2, 2);
             INSERT INTO summaries (id, session_id, project_id, agent, mode, request, learned,
                                    at, through_event_id, tokens, work_tokens, distiller)
                 VALUES (1, 2, 2, 'codex', 'code', 'Tidy scratch', '[\"a\"]', 13, 0, 5, 50,
                         'offline');",
        )
        .expect("fixture");
    (dir, store)
}

fn titles(rows: &[OutgoingItem]) -> Vec<&str> {
    rows.iter().map(|r| r.title.as_str()).collect()
}

#[test]
fn only_opted_in_git_projects_share_and_nothing_private_leaves() {
    let (_dir, store) = store();
    let none = ItemShare::default();
    assert!(outbox(&store, &none, 10).expect("outbox").is_empty());
    let shop = ItemShare { projects: vec!["shop".into()], ..ItemShare::default() };
    let rows = outbox(&store, &shop, 10).expect("outbox");
    assert_eq!(titles(&rows), ["Chose jiff"], "the private one stays");
    assert_eq!(rows[0].body["lead"], "for timestamps");
    assert!(rows[0].text().contains("for timestamps"));
    // A project known by its path means nothing elsewhere, even opted in.
    let scratch = ItemShare { projects: vec!["scratch".into()], ..ItemShare::default() };
    assert!(outbox(&store, &scratch, 10).expect("outbox").is_empty());
    let excluded = ItemShare {
        projects: vec!["shop".into()],
        exclude_projects: vec!["git:github.com/acme/shop".into()],
    };
    assert!(outbox(&store, &excluded, 10).expect("outbox").is_empty());
    // A summary of a session with a private event stays too.
    store
        .conn()
        .execute_batch(
            "INSERT INTO summaries (session_id, project_id, agent, mode, request, at,
                                    through_event_id, tokens, work_tokens, distiller)
                 VALUES (1, 1, 'codex', 'code', 'Shop work', 14, 2, 5, 50, 'offline')",
        )
        .expect("summary");
    assert_eq!(queue_depth(&store, &shop).expect("depth"), 1);
}

#[test]
fn pushed_items_leave_the_queue_and_a_forget_sends_a_tombstone_once() {
    let (_dir, store) = store();
    let shop =
        ItemShare { projects: vec!["git:github.com/acme/shop".into()], ..Default::default() };
    let mut rows = outbox(&store, &shop, 10).expect("outbox");
    assign_gids(&store, &mut rows, || "g1".into()).expect("gids");
    mark_pushed(&store, &[(&rows[0], 5)]).expect("pushed");
    assert_eq!(queue_depth(&store, &shop).expect("depth"), 0);
    assert!(forget(&store, ItemKind::Observation, 1, 99).expect("forget"));
    assert!(!exists(&store, ItemKind::Observation, 1).expect("exists"));
    let tombstones = outbox(&store, &ItemShare::default(), 10).expect("tombstones");
    assert_eq!(tombstones.len(), 1);
    assert!(tombstones[0].forgotten && tombstones[0].gid.as_deref() == Some("g1"));
    mark_pushed(&store, &[(&tombstones[0], 6)]).expect("pushed");
    assert_eq!(queue_depth(&store, &shop).expect("depth"), 0);
    // An item never shared is just gone.
    assert!(forget(&store, ItemKind::Summary, 1, 99).expect("forget"));
    assert_eq!(queue_depth(&store, &shop).expect("depth"), 0);
    assert!(!forget(&store, ItemKind::Summary, 1, 99).expect("forget"));
}

fn incoming(gid: &str, kind: ItemKind, title: &str, revision: i64) -> IncomingItem {
    IncomingItem {
        gid: gid.into(),
        kind,
        member: "Bob".into(),
        machine: "bob-laptop".into(),
        agent: "their-agent".into(),
        session: "0190-session".into(),
        project_key: "git:github.com/acme/shop".into(),
        project_name: Some("shop".into()),
        item_type: if kind == ItemKind::Summary { "summary" } else { "decision" }.into(),
        title: title.into(),
        body: serde_json::json!({"subtitle": "why", "facts": ["one"], "learned": ["it works"]}),
        at: 20,
        forgotten: false,
        revision,
    }
}

#[test]
fn pulled_items_keep_their_member_are_never_pushed_and_a_tombstone_removes_them() {
    let (_dir, store) = store();
    let rows = [
        incoming("g7", ItemKind::Observation, "Bob chose tokio", 3),
        incoming("g8", ItemKind::Summary, "Bob's session", 4),
    ];
    let applied = apply_pulled(&store, &rows, 4, 0).expect("pull");
    assert_eq!((applied.added, applied.updated), (2, 0));
    assert_eq!(pulled_count(&store).expect("count"), 2);
    let again = apply_pulled(&store, &rows, 4, 0).expect("again");
    assert_eq!(again.unchanged, 2, "idempotent");
    let member: String = store
        .conn()
        .query_row("SELECT team_member FROM observations WHERE team_gid = 'g7'", [], |r| r.get(0))
        .expect("row");
    assert_eq!(member, "Bob");
    // Never pushed back, whatever is shared; never screened for candidates.
    let all = ItemShare { projects: vec!["shop".into()], ..Default::default() };
    assert!(outbox(&store, &all, 10).expect("outbox").iter().all(|r| r.gid.is_none()));
    let screened: i64 = store
        .conn()
        .query_row("SELECT count(*) FROM memory_screened", [], |r| r.get(0))
        .expect("screened");
    assert_eq!(screened, 2);
    // Bob forgets the observation: it goes here too.
    let mut gone = incoming("g7", ItemKind::Observation, "", 5);
    gone.forgotten = true;
    assert_eq!(apply_pulled(&store, &[gone], 5, 0).expect("tombstone").updated, 1);
    assert_eq!(pulled_count(&store).expect("count"), 1);
    // A teammate's summary forgotten here stays forgotten when it is rewritten.
    let id: i64 = store
        .conn()
        .query_row("SELECT id FROM summaries WHERE team_gid = 'g8'", [], |r| r.get(0))
        .expect("row");
    assert!(forget(&store, ItemKind::Summary, id, 30).expect("forget"));
    let rewritten = incoming("g8", ItemKind::Summary, "Bob's session, later", 6);
    assert_eq!(apply_pulled(&store, &[rewritten], 6, 0).expect("pull").unchanged, 1);
    assert_eq!(pulled_count(&store).expect("count"), 0);
    assert!(outbox(&store, &ItemShare::default(), 10).expect("outbox").is_empty(), "not mine");
}
