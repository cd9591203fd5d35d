//! The server's schema: forward-only numbered SQL files in `schema/`, applied in order by
//! `agent-memory team init` as the database's owner, in one transaction under an advisory
//! lock, with the version kept in `agent_memory.schema_version`.
//!
//! Must not: change a shipped file (add the next one), or migrate from a member's sync: members
//! only check that the schema is the one they speak.

use crate::TeamError;

/// The schema files, in order; the version is the number applied.
const MIGRATIONS: &[&str] = &[
    include_str!("schema/0001_team.sql"),
    include_str!("schema/0002_vector_index.sql"),
    include_str!("schema/0003_items.sql"),
    include_str!("schema/0004_member_names.sql"),
];

/// The schema version this build speaks.
pub const VERSION: i32 = MIGRATIONS.len() as i32;

/// What [`init`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Migrated {
    /// The version found (0 for none).
    pub from: i32,
    pub to: i32,
}

/// Creates the schema, or brings it up to [`VERSION`].
pub fn init(client: &mut postgres::Client) -> Result<Migrated, TeamError> {
    let mut tx = client.transaction()?;
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(hashtext('agent_memory.schema'));
         CREATE SCHEMA IF NOT EXISTS agent_memory;
         CREATE TABLE IF NOT EXISTS agent_memory.schema_version (version integer NOT NULL);",
    )?;
    let from: i32 = tx
        .query_one("SELECT coalesce(max(version), 0) FROM agent_memory.schema_version", &[])?
        .get(0);
    if from > VERSION {
        return Err(TeamError::SchemaVersion {
            found: from,
            supported: VERSION,
            remedy: "upgrade agent-memory",
        });
    }
    for (index, sql) in MIGRATIONS.iter().enumerate().skip(from.max(0) as usize) {
        tx.batch_execute(sql)?;
        tx.execute(
            "INSERT INTO agent_memory.schema_version (version) VALUES ($1)",
            &[&(index as i32 + 1)],
        )?;
    }
    tx.commit()?;
    Ok(Migrated { from, to: VERSION })
}

/// Checks that the server's schema is the one this build speaks.
pub fn check(client: &mut postgres::Client) -> Result<(), TeamError> {
    let found: i32 = match client
        .query_one("SELECT coalesce(max(version), 0) FROM agent_memory.schema_version", &[])
    {
        Ok(row) => row.get(0),
        Err(e)
            if e.code().is_some_and(|c| {
                *c == postgres::error::SqlState::UNDEFINED_TABLE
                    || *c == postgres::error::SqlState::INVALID_SCHEMA_NAME
            }) =>
        {
            return Err(TeamError::NoSchema);
        }
        Err(e) if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) => {
            let role: String = client.query_one("SELECT current_user::text", &[])?.get(0);
            return Err(TeamError::NotMember { role });
        }
        Err(e) => return Err(e.into()),
    };
    match found {
        0 => Err(TeamError::NoSchema),
        v if v < VERSION => Err(TeamError::SchemaVersion {
            found: v,
            supported: VERSION,
            remedy: "have the database's owner run `agent-memory team init` to migrate it",
        }),
        v if v > VERSION => Err(TeamError::SchemaVersion {
            found: v,
            supported: VERSION,
            remedy: "upgrade agent-memory",
        }),
        _ => Ok(()),
    }
}
