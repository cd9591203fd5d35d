//! Team memory on PostgreSQL: reviewed memory shared through a team's database, whose
//! row-level security decides who reads what (docs/team.md).
//!
//! Here is the store and the `[team]` configuration: create or migrate the server's schema
//! ([`schema::init`]), push this member's shareable memory (and the observations and summaries
//! of opted-in projects, [`items`]) and pull the team's ([`sync::sync`]), say how things stand
//! ([`sync::status`]), and search the server directly ([`search::search`]). Each member's hooks keep writing the local SQLite store; what the team
//! sends arrives there with who learned it, so briefings and search read it like any memory.
//!
//! Must not: be linked into the hook path. This crate opens sockets and the client runs a small
//! runtime of its own; only `team` commands, the work pass and serve's worker call it.

pub mod connect;
pub mod items;
pub mod schema;
pub mod search;
pub mod sync;

use agent_memory_core::store::StoreError;

/// What went wrong talking to the team database, each with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    #[error("no team database is configured; set `[team] url` in config.toml (see docs/team.md)")]
    NotConfigured,
    #[error(
        "the team url is not a PostgreSQL connection string ({message}); write it as postgres://member@host:5432/database"
    )]
    Url { message: String },
    #[error("cannot set up TLS for the team database: {message}")]
    Tls { message: String },
    #[error(
        "cannot reach the team database {target}: {}; check that the server is up, the `[team] url`, and the password in PGPASSWORD or ~/.pgpass",
        describe(source)
    )]
    Connect { target: String, source: postgres::Error },
    #[error("the team database refused a request: {message}")]
    Sql { message: String },
    #[error(
        "the connection to the team database was lost ({message}); run `agent-memory team sync` again when it is back: it resumes where it stopped"
    )]
    Lost { message: String },
    #[error(
        "the team database has no agent-memory schema yet; have its owner run `agent-memory team init`"
    )]
    NoSchema,
    #[error(
        "the team database's schema is version {found}, this agent-memory knows {supported}; {remedy}"
    )]
    SchemaVersion { found: i32, supported: i32, remedy: &'static str },
    #[error(
        "role {role} is no member of a team on this database; its owner adds it with SELECT agent_memory.add_member('{role}', 'TEAM', 'Display Name')"
    )]
    NotMember { role: String },
    #[error("cannot open the team sync lock {path}: {source}; check that the folder is writable")]
    Lock { path: std::path::PathBuf, source: std::io::Error },
    #[error("another team sync is running (it holds {path}); try again when it has finished")]
    Busy { path: std::path::PathBuf },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<postgres::Error> for TeamError {
    fn from(err: postgres::Error) -> Self {
        if err.is_closed()
            || err.as_db_error().is_none()
                && std::error::Error::source(&err).is_some_and(|e| e.is::<std::io::Error>())
        {
            return TeamError::Lost { message: describe(&err) };
        }
        TeamError::Sql { message: describe(&err) }
    }
}

impl From<agent_memory_core::store::memories::MemoryError> for TeamError {
    fn from(err: agent_memory_core::store::memories::MemoryError) -> Self {
        match err {
            agent_memory_core::store::memories::MemoryError::Store(e) => TeamError::Store(e),
            other => TeamError::Sql { message: other.to_string() },
        }
    }
}

/// A client error as one line: the server's own message and hint when it sent one, else the
/// error with its cause (the client's `Display` alone says only "db error" or "error
/// connecting to server").
fn describe(err: &postgres::Error) -> String {
    if let Some(db) = err.as_db_error() {
        return match db.hint() {
            Some(hint) => format!("{} ({hint})", db.message()),
            None => db.message().to_owned(),
        };
    }
    match std::error::Error::source(err) {
        Some(cause) => format!("{err}: {cause}"),
        None => err.to_string(),
    }
}
