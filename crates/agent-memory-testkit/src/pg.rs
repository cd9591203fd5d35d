//! A real PostgreSQL server for the team-memory tests: `initdb` into a temporary folder owned
//! by the `postgres` user (when the tests run as root, the server must not), listening on
//! 127.0.0.1 and a free port, stopped by its pid when dropped. The binaries come from the
//! folder `AGENT_MEMORY_TEST_PG_BIN` names (`scripts/team-test-db` installs them, with
//! pgvector).
//!
//! The superuser is `postgres` with the password [`OWNER_PASSWORD`]; connections over TCP need
//! a password (scram-sha-256), so the tests exercise the members' passwords for real.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The environment variable naming PostgreSQL's bin folder.
pub const PG_BIN_ENV: &str = "AGENT_MEMORY_TEST_PG_BIN";

/// The superuser's password.
pub const OWNER_PASSWORD: &str = "owner-secret";

/// A running server; dropping it stops it.
#[derive(Debug)]
pub struct PgServer {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

impl PgServer {
    /// Creates a cluster and starts it.
    pub fn start(bin: &Path) -> PgServer {
        let dir = tempfile::Builder::new().prefix("am-pg-").tempdir().expect("temp dir");
        let port = free_port();
        let server = PgServer { bin: bin.to_owned(), dir, port };
        std::fs::File::create(server.dir.path().join("pwfile"))
            .and_then(|mut f| std::io::Write::write_all(&mut f, OWNER_PASSWORD.as_bytes()))
            .expect("pwfile");
        server.give_to_postgres(server.dir.path());
        server.give_to_postgres(&server.dir.path().join("pwfile"));
        let data = server.data_dir();
        let out = server.as_postgres(
            Command::new(server.bin.join("initdb"))
                .arg("-D")
                .arg(&data)
                .args(["-U", "postgres", "--auth-local=trust", "--auth-host=scram-sha-256"])
                .arg(format!("--pwfile={}", server.dir.path().join("pwfile").display()))
                .args(["-E", "UTF8", "--locale=C", "--no-sync"]),
        );
        assert!(out.status.success(), "initdb failed:\n{}", crate::describe(&out));
        server.pg_ctl_start();
        server
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A connection URL for `user` on `database`.
    pub fn url(&self, user: &str, database: &str) -> String {
        format!("postgres://{user}@127.0.0.1:{}/{database}?sslmode=disable", self.port)
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Starts it again after [`PgServer::kill`], on the same port and data.
    pub fn restart(&self) {
        self.pg_ctl_start();
    }

    fn pg_ctl_start(&self) {
        let log = self.dir.path().join("server.log");
        let out = self.as_postgres(
            Command::new(self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(self.data_dir())
                .arg("-l")
                .arg(&log)
                .arg("-o")
                .arg(format!(
                    "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off",
                    self.port,
                    self.dir.path().display()
                ))
                .args(["-w", "-t", "60", "start"]),
        );
        assert!(
            out.status.success(),
            "pg_ctl start failed:\n{}\n{}",
            crate::describe(&out),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// The postmaster's pid, while it runs.
    pub fn pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data_dir().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// Stops it at once, as a crash would (SIGQUIT: no checkpoint, every connection cut), and
    /// waits until it is gone.
    pub fn kill(&self) {
        signal(self.pid(), "-QUIT", Duration::from_secs(30));
        let _ = std::fs::remove_file(self.data_dir().join("postmaster.pid"));
    }

    /// Runs `sql` with psql as `user` (password `password`) on `database`; `ON_ERROR_STOP`, so a
    /// failing statement fails the run. Returns the output, unaligned and without headers.
    pub fn psql(&self, user: &str, password: &str, database: &str, sql: &str) -> Output {
        Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", user, "-d", database])
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .env("PGPASSWORD", password)
            .env("PGCONNECT_TIMEOUT", "5")
            .stdin(Stdio::null())
            .output()
            .expect("run psql")
    }

    /// [`PgServer::psql`] as the superuser, which must succeed; its trimmed output.
    pub fn owner(&self, database: &str, sql: &str) -> String {
        let out = self.psql("postgres", OWNER_PASSWORD, database, sql);
        assert!(out.status.success(), "psql {sql}:\n{}", crate::describe(&out));
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Runs `cmd` as the `postgres` user when the tests run as root (the server refuses root).
    fn as_postgres(&self, cmd: &mut Command) -> Output {
        let cmd = if is_root() {
            let mut wrapped = Command::new("runuser");
            wrapped.args(["-u", "postgres", "--"]).arg(cmd.get_program()).args(cmd.get_args());
            wrapped
        } else {
            std::mem::replace(cmd, Command::new("true"))
        };
        let mut cmd = cmd;
        cmd.current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("run a PostgreSQL program")
    }

    fn give_to_postgres(&self, path: &Path) {
        if !is_root() {
            return;
        }
        let status =
            Command::new("chown").arg("postgres:postgres").arg(path).status().expect("run chown");
        assert!(status.success(), "chown postgres {}", path.display());
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // SIGINT: a fast shutdown, every session ended; the folder goes with the TempDir.
        signal(self.pid(), "-INT", Duration::from_secs(10));
    }
}

/// Sends `signal` to the server `pid` and waits, at most `wait`, until it is gone.
fn signal(pid: Option<u32>, signal: &str, wait: Duration) {
    let Some(pid) = pid else { return };
    let _ = Command::new("kill").args([signal, &pid.to_string()]).status();
    let start = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() && start.elapsed() < wait {
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}
