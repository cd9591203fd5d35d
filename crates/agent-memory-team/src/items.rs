//! Observations and session summaries with the team database: push those of the projects a
//! member opts in (and the tombstones of forgotten ones), pull the team's.
//!
//! The same rules as memories: batches of idempotent upserts keyed by global ids given and
//! committed locally first, under the push lock, marked pushed only after the server committed
//! them; the pull in revision order, each batch kept with its cursor in one local transaction.
//! Everything is sanitized going out and again coming in. A tombstone blanks the row on the
//! server (its text, fields and vector go), so a forgotten item is gone from the team too.
//!
//! Must not: push a teammate's item, a private one, or one of a project not opted in (the
//! store's outbox decides which; this module only sends).

use agent_memory_core::capture::sanitize_text;
use agent_memory_core::store::Store;
use agent_memory_core::store::team::items::{
    self, AppliedItems, IncomingItem, ItemKind, ItemShare, OutgoingItem,
};
use agent_memory_core::text::{clip, one_line};

use crate::TeamError;
use crate::sync::{Identity, Vectors, search_text};

/// The longest title and body (in characters) an item may have when it arrives; past that it
/// is not an item this build wrote, and is skipped.
const MAX_TITLE: usize = 2_000;
const MAX_BODY: usize = 200_000;

/// `row` as it leaves: its title and every string of its body sanitized again.
pub fn sanitized(mut row: OutgoingItem) -> OutgoingItem {
    row.title = sanitize_text(&row.title).into_owned();
    sanitize_json(&mut row.body);
    row
}

fn sanitize_json(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) => *s = sanitize_text(s).into_owned(),
        serde_json::Value::Array(values) => values.iter_mut().for_each(sanitize_json),
        serde_json::Value::Object(map) => map.values_mut().for_each(sanitize_json),
        _ => {}
    }
}

/// The team's id of a session: derived from the machine, the agent and the agent's own id, so
/// every item of one session lands in one session on every teammate's machine, and the
/// agent's id itself never leaves.
fn session_gid(machine: &str, agent: &str, session: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("session\n{machine}\n{agent}\n{session}"));
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid().to_string()
}

fn upsert(vector_type: Option<&str>) -> String {
    let embedding = match vector_type {
        Some(vector_type) => format!("b.embedding::{vector_type}"),
        None => "NULL".to_owned(),
    };
    format!(
        "
    INSERT INTO agent_memory.items AS i
        (gid, team, member_role, member, machine, agent, kind, session, project_key,
         project_name, type, title, body, status, at, revision, search_text, model, embedding)
    SELECT b.gid::uuid, '', '', $2, $3, b.agent, b.kind, b.session::uuid, b.project_key,
           b.project_name, b.type, b.title, b.body::jsonb, 'active', b.at, 0,
           to_tsvector('simple', b.index_text),
           CASE WHEN b.embedding IS NOT NULL THEN $4::text END, {embedding}
    FROM unnest($1::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                $10::text[], $11::text[], $12::text[], $13::bigint[], $14::text[], $15::text[])
         AS b (gid, agent, kind, session, project_key, project_name, type, title, body, at,
               index_text, embedding)
    ON CONFLICT (gid) DO UPDATE SET
        member = excluded.member, machine = excluded.machine, agent = excluded.agent,
        project_key = excluded.project_key, project_name = excluded.project_name,
        type = excluded.type, title = excluded.title, body = excluded.body,
        status = excluded.status, at = excluded.at, search_text = excluded.search_text,
        model = excluded.model, embedding = excluded.embedding
    RETURNING gid::text, revision"
    )
}

/// A tombstone: the row stays (so every machine's pull sees it go) with nothing of what it
/// said.
const FORGET: &str = "
    UPDATE agent_memory.items
    SET status = 'forgotten', title = '', body = '{}', search_text = ''::tsvector, model = NULL,
        embedding = NULL
    WHERE gid = ANY($1::text[]::uuid[])
    RETURNING gid::text, revision";

/// Pushes the items (and tombstones) waiting in the outbox; how many went.
pub(crate) fn push(
    store: &Store,
    client: &mut postgres::Client,
    share: &ItemShare,
    me: &Identity,
    batch: usize,
    vectors: Option<&Vectors<'_>>,
) -> Result<usize, TeamError> {
    let mut pushed = 0;
    loop {
        let mut rows = items::outbox(store, share, batch)?;
        if rows.is_empty() {
            return Ok(pushed);
        }
        items::assign_gids(store, &mut rows, || uuid::Uuid::now_v7().to_string())?;
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock(hashtext('agent_memory.push'))", &[])?;
        let (live, gone): (Vec<&OutgoingItem>, Vec<&OutgoingItem>) =
            rows.iter().partition(|r| !r.forgotten);
        let mut written = send(&mut tx, store, &live, me, vectors)?;
        if !gone.is_empty() {
            let gids: Vec<Option<String>> = gone.iter().map(|r| r.gid.clone()).collect();
            for row in tx.query(FORGET, &[&gids])? {
                written.insert(row.get(0), row.get(1));
            }
        }
        tx.commit()?;
        let done: Vec<(&OutgoingItem, i64)> = rows
            .iter()
            .map(|r| (r, r.gid.as_ref().and_then(|g| written.get(g)).copied().unwrap_or(0)))
            .collect();
        items::mark_pushed(store, &done)?;
        pushed += rows.len();
    }
}

/// Sends `rows` in one statement; the revision of each row written, by global id.
fn send(
    tx: &mut postgres::Transaction<'_>,
    store: &Store,
    rows: &[&OutgoingItem],
    me: &Identity,
    vectors: Option<&Vectors<'_>>,
) -> Result<std::collections::HashMap<String, i64>, TeamError> {
    if rows.is_empty() {
        return Ok(Default::default());
    }
    let clean: Vec<OutgoingItem> = rows.iter().map(|r| sanitized((*r).clone())).collect();
    // A stored vector was made from the text as stored: it may go only when sanitizing again
    // changed nothing; otherwise the vector is made from what is sent.
    let as_stored: Vec<bool> =
        rows.iter().zip(&clean).map(|(r, c)| r.title == c.title && r.body == c.body).collect();
    let rows = clean;
    let texts: Vec<String> = rows.iter().map(OutgoingItem::text).collect();
    let embeddings = match vectors {
        Some(vectors) => embeddings(store, vectors, &rows, &texts, &as_stored)?,
        None => vec![None; rows.len()],
    };
    let column = |f: &dyn Fn(&OutgoingItem) -> String| rows.iter().map(f).collect::<Vec<_>>();
    let gids = column(&|r| r.gid.clone().unwrap_or_default());
    let agents = column(&|r| r.agent.clone());
    let kinds = column(&|r| r.kind.as_str().to_owned());
    let sessions = column(&|r| session_gid(&me.machine, &r.agent, &r.session));
    let keys = column(&|r| r.project_key.clone());
    let names = column(&|r| r.project_name.clone());
    let types = column(&|r| r.item_type.clone());
    let titles = column(&|r| r.title.clone());
    let bodies = column(&|r| r.body.to_string());
    let ats: Vec<i64> = rows.iter().map(|r| r.at).collect();
    let index_texts: Vec<String> = texts.iter().map(|t| search_text(t)).collect();
    let model = vectors.map(|v| v.model().to_owned());
    let written = tx.query(
        &upsert(vectors.map(|v| v.vector_type.as_str())),
        &[
            &gids,
            &me.member,
            &me.machine,
            &model,
            &agents,
            &kinds,
            &sessions,
            &keys,
            &names,
            &types,
            &titles,
            &bodies,
            &ats,
            &index_texts,
            &embeddings,
        ],
    )?;
    Ok(written.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Each row's vector: the one the store keeps for the model (for a row `as_stored`), else one
/// made now from `texts`.
fn embeddings(
    store: &Store,
    vectors: &Vectors<'_>,
    rows: &[OutgoingItem],
    texts: &[String],
    as_stored: &[bool],
) -> Result<Vec<Option<String>>, TeamError> {
    let mut stored = items::stored_vectors(store, vectors.model(), rows)?;
    for (vector, keep) in stored.iter_mut().zip(as_stored) {
        if !keep {
            *vector = None;
        }
    }
    let missing: Vec<usize> = (0..rows.len()).filter(|&i| stored[i].is_none()).collect();
    let made = vectors.embed(&missing.iter().map(|&i| texts[i].as_str()).collect::<Vec<_>>());
    let mut made = made.into_iter();
    Ok((0..rows.len())
        .map(|i| match stored[i].take() {
            Some(vector) => Some(crate::sync::vector_text(&vector)),
            None => made.next().flatten(),
        })
        .collect())
}

const PULL: &str = "
    SELECT gid::text, kind, member, machine, agent, session::text, project_key, project_name,
           type, title, body::text, status, at, revision
    FROM agent_memory.items WHERE revision > $1 ORDER BY revision LIMIT $2";

/// Pulls the team's items changed since the last pull.
pub(crate) fn pull(
    store: &Store,
    client: &mut postgres::Client,
    batch: usize,
    now_ms: i64,
) -> Result<AppliedItems, TeamError> {
    let mut cursor: i64 = agent_memory_core::store::team::state(store, items::PULL_CURSOR)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut total = AppliedItems::default();
    loop {
        let rows = client.query(PULL, &[&cursor, &(batch as i64)])?;
        let Some(last) = rows.last() else { break };
        let last: i64 = last.get(13);
        let incoming: Vec<IncomingItem> = rows.iter().filter_map(incoming).collect();
        let applied = items::apply_pulled(store, &incoming, last, now_ms)?;
        total.added += applied.added;
        total.updated += applied.updated;
        total.unchanged += applied.unchanged + (rows.len() - incoming.len());
        cursor = last;
        if rows.len() < batch {
            break;
        }
    }
    Ok(total)
}

/// A server row as a local item, sanitized and checked; `None` for one this build cannot read
/// (a kind of a newer version, a body that is not an object, sizes past any it writes).
fn incoming(row: &postgres::Row) -> Option<IncomingItem> {
    let kind = ItemKind::parse(row.get(1))?;
    let forgotten = match row.get::<_, &str>(11) {
        "active" => false,
        "forgotten" => true,
        _ => return None,
    };
    let title = sanitize_text(row.get(9)).into_owned();
    let body_text: &str = row.get(10);
    if title.chars().count() > MAX_TITLE || body_text.len() > MAX_BODY {
        return None;
    }
    let mut body: serde_json::Value = serde_json::from_str(body_text).ok()?;
    if !body.is_object() {
        return None;
    }
    sanitize_json(&mut body);
    let name = |i: usize| -> String { clip(&one_line(&sanitize_text(row.get::<_, &str>(i))), 64) };
    Some(IncomingItem {
        gid: row.get(0),
        kind,
        member: name(2),
        machine: name(3),
        agent: name(4),
        session: row.get(5),
        project_key: row.get(6),
        project_name: row.get(7),
        item_type: clip(&one_line(&sanitize_text(row.get::<_, &str>(8))), 64),
        title,
        body,
        at: row.get(12),
        forgotten,
        revision: row.get(13),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sessions_team_id_is_stable_and_hides_the_agents_own() {
        let a = session_gid("laptop", "codex", "0199-abc");
        assert_eq!(a, session_gid("laptop", "codex", "0199-abc"));
        assert_ne!(a, session_gid("desktop", "codex", "0199-abc"));
        assert!(!a.contains("abc") && uuid::Uuid::parse_str(&a).is_ok());
    }

    #[test]
    fn what_leaves_is_sanitized_field_by_field() {
        let row = OutgoingItem {
            kind: ItemKind::Observation,
            id: 1,
            gid: None,
            agent: "codex".into(),
            session: "s".into(),
            project_key: "git:github.com/acme/shop".into(),
            project_name: "shop".into(),
            item_type: "decision".into(),
            title: "Set the key <private>hunter2</private>".into(),
            body: serde_json::json!({"facts": ["token <private>s3cr3t</private> kept"]}),
            at: 1,
            forgotten: false,
        };
        let out = sanitized(row);
        assert!(!out.title.contains("hunter2"), "{}", out.title);
        assert!(!out.body.to_string().contains("s3cr3t"), "{}", out.body);
    }
}
