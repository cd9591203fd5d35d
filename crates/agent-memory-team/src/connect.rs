//! Reaching the team database: the `[team] url` read libpq style, the password from
//! `PGPASSWORD` or `~/.pgpass` (never from the configuration file), `sslmode` honoured with TLS
//! through rustls, and a short connect timeout so an unreachable server fails a sync quickly.
//!
//! Must not: be called from the hook path (it opens sockets and runs the client's own runtime).

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use postgres::config::{Host, SslMode};

use crate::TeamError;

/// How long a connection attempt may take before the sync gives up for this round.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The server-side limit on one statement, unless the url sets its own `options`.
const STATEMENT_TIMEOUT: &str = "-c statement_timeout=120000";

/// Opens a connection to the database `url` names.
pub fn connect(url: &str) -> Result<postgres::Client, TeamError> {
    let config = client_config(url, std::env::var("PGPASSWORD").ok(), pgpass_path().as_deref())?;
    let target = describe(&config);
    let result = match config.get_ssl_mode() {
        SslMode::Disable => config.connect(postgres::NoTls),
        _ => config.connect(tls()?),
    };
    result.map_err(|source| TeamError::Connect { target, source })
}

/// The client configuration for `url`, with the user, password and timeout filled in.
fn client_config(
    url: &str,
    env_password: Option<String>,
    pgpass: Option<&Path>,
) -> Result<postgres::Config, TeamError> {
    let mut config = postgres::Config::from_str(url.trim())
        .map_err(|e| TeamError::Url { message: e.to_string() })?;
    if config.get_hosts().is_empty() {
        return Err(TeamError::Url { message: "it names no host".into() });
    }
    if config.get_user().is_none() {
        config.user(&login_name());
    }
    if config.get_password().is_none() {
        let password = env_password.filter(|p| !p.is_empty()).or_else(|| {
            let text = std::fs::read_to_string(pgpass?).ok()?;
            pgpass_lookup(&text, &config)
        });
        if let Some(password) = password {
            config.password(password);
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    // A server that accepts but stalls (or another member's long push holding the push lock)
    // must not hold a work pass for ever: each statement gets two minutes.
    if config.get_options().is_none() {
        config.options(STATEMENT_TIMEOUT);
    }
    config.application_name("agent-memory");
    Ok(config)
}

/// `~/.pgpass`, or the file `PGPASSFILE` names.
fn pgpass_path() -> Option<PathBuf> {
    if let Some(file) = std::env::var_os("PGPASSFILE") {
        return Some(PathBuf::from(file));
    }
    Some(PathBuf::from(std::env::var_os("HOME")?).join(".pgpass"))
}

/// The password of the first `.pgpass` line (`host:port:database:user:password`, `*` matches
/// anything, `\:` and `\\` escape) that fits the connection.
fn pgpass_lookup(text: &str, config: &postgres::Config) -> Option<String> {
    let host = match config.get_hosts().first()? {
        Host::Tcp(name) => name.clone(),
        #[cfg(unix)]
        Host::Unix(_) => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432).to_string();
    let user = config.get_user().unwrap_or_default().to_owned();
    let database = config.get_dbname().map_or_else(|| user.clone(), str::to_owned);
    let wanted = [host.as_str(), port.as_str(), database.as_str(), user.as_str()];
    text.lines().filter(|l| !l.trim_start().starts_with('#')).find_map(|line| {
        let fields = split_pgpass(line);
        if fields.len() != 5 {
            return None;
        }
        let fits =
            fields[..4].iter().zip(wanted).all(|(field, want)| field == "*" || field == want);
        fits.then(|| fields[4].clone())
    })
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => field.extend(chars.next()),
            ':' if fields.len() < 4 => fields.push(std::mem::take(&mut field)),
            c => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// TLS through rustls (ring) with the Mozilla root certificates.
fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect, TeamError> {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TeamError::Tls { message: e.to_string() })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// `user@host:port/db`, for messages (never the password).
fn describe(config: &postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(name)) => name.clone(),
        #[cfg(unix)]
        Some(Host::Unix(path)) => path.display().to_string(),
        None => String::new(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "{}@{host}:{port}/{}",
        config.get_user().unwrap_or_default(),
        config.get_dbname().unwrap_or_default()
    )
}

/// The login name: `USER`, else `LOGNAME`, else `agent-memory`.
pub fn login_name() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()))
        .unwrap_or_else(|| "agent-memory".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_user_password_and_sslmode() {
        let config =
            client_config("postgres://alice@db.example:6543/team?sslmode=require", None, None)
                .expect("url");
        assert_eq!(config.get_user(), Some("alice"));
        assert_eq!(config.get_ssl_mode(), SslMode::Require);
        assert_eq!(describe(&config), "alice@db.example:6543/team");
        assert_eq!(config.get_options(), Some(STATEMENT_TIMEOUT));
        let config =
            client_config("postgres://alice@db/team", Some("s3cret".into()), None).expect("url");
        assert_eq!(config.get_password(), Some(&b"s3cret"[..]));
        let config = client_config("host=db user=bob dbname=t sslmode=disable", None, None)
            .expect("key=value");
        assert_eq!(config.get_ssl_mode(), SslMode::Disable);
        assert!(client_config("postgres://", None, None).is_err());
        assert!(client_config("nonsense ===", None, None).is_err());
    }

    #[test]
    fn pgpass_lines_match_by_field_with_wildcards_and_escapes() {
        let config = client_config("postgres://alice@db:5432/team", None, None).expect("url");
        let text = "# comment\nother:5432:team:alice:no\ndb:*:team:alice:pa\\:ss\n*:*:*:*:last\n";
        assert_eq!(pgpass_lookup(text, &config).as_deref(), Some("pa:ss"));
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("pgpass");
        agent_memory_core::fsutil::write_atomic(&file, b"*:*:*:alice:fromfile\n").expect("write");
        let config = client_config("postgres://alice@db/team", None, Some(&file)).expect("pgpass");
        assert_eq!(config.get_password(), Some(&b"fromfile"[..]));
    }
}
