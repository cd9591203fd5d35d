//! The server's connection limits over real TCP on 127.0.0.1: the server runs in this process
//! with short deadlines and small caps, so each case takes a second or two. Trickled request
//! heads are closed at their deadline and make way for fresh connections; a refused request
//! left open is closed; a connection that presented the token keeps its place past the cap.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::thread::JoinHandle;
use std::time::Duration;

use agent_memory_core::config::Config;
use agent_memory_core::paths::Home;
use agent_memory_core::recall;
use agent_memory_core::store::search::Ranking;
use agent_memory_serve::http::guard::Limits;
use agent_memory_serve::http::{ServeOptions, serve};
use agent_memory_serve::mcp::Settings;
use agent_memory_testkit::trickle::Tricklers;

const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

/// How long a test waits for an answer or a close before it fails; never reached when the
/// server keeps its limits.
const PATIENCE: Duration = Duration::from_secs(8);

/// A server on its own runtime thread, stopped when dropped.
struct Server {
    port: u16,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start(limits: Limits) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("home");
        std::fs::create_dir_all(&root).expect("home");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let settings = Settings {
            home: Home::at(root),
            config: Config::default(),
            recall: recall::Settings {
                search: Default::default(),
                ranking: Ranking::default(),
                embedder: None,
                sparse: None,
                mode_types: Vec::new(),
            },
            cwd: dir.path().to_owned(),
        };
        let options = ServeOptions {
            settings,
            listener,
            token: TOKEN.into(),
            pass: None,
            work_interval: Duration::from_secs(3600),
            limits,
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            let served = runtime.block_on(serve(options, async move {
                let _ = stopped.await;
            }));
            served.expect("served");
        });
        Server { port, stop: Some(stop), thread: Some(thread), _dir: dir }
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        stream.set_read_timeout(Some(PATIENCE)).expect("timeout");
        stream
    }

    /// A request head for `path`, with the token when `token`.
    fn head(&self, path: &str, token: bool) -> String {
        let auth = if token { format!("Authorization: Bearer {TOKEN}\r\n") } else { String::new() };
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{auth}\r\n", self.port)
    }

    /// One request on a fresh connection that asks to be closed after; the status.
    fn status(&self, path: &str, token: bool) -> u16 {
        let mut stream = self.connect();
        let head = self.head(path, token).replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n");
        stream.write_all(head.as_bytes()).expect("send");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("an answer, not a timeout");
        status_of(&raw)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn status_of(raw: &[u8]) -> u16 {
    let text = String::from_utf8_lossy(raw);
    text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{text:?}"))
}

/// Reads one answer with a `Content-Length` off a kept-alive connection; its status.
fn answer(stream: &mut TcpStream) -> u16 {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => raw.push(byte[0]),
            other => panic!(
                "the answer ended early: {other:?} after {:?}",
                String::from_utf8_lossy(&raw)
            ),
        }
    }
    let head = String::from_utf8_lossy(&raw).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|n| n.trim().parse::<usize>().ok())
        .expect("a content length");
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).expect("the body");
    status_of(&raw)
}

/// Whether the server has closed `stream`: a read ends or is reset. Waits at most
/// [`PATIENCE`]; anything the server sends first is read past.
fn closed_by_server(mut stream: &TcpStream) -> bool {
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// Whether `stream` is still open right now: nothing to read, and no end.
fn still_open(stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).expect("nonblocking");
    let mut byte = [0u8; 1];
    let open = matches!((&*stream).read(&mut byte), Err(e) if e.kind() == ErrorKind::WouldBlock);
    stream.set_nonblocking(false).expect("blocking");
    open
}

#[test]
fn trickling_heads_make_way_for_the_health_probe_and_the_token() {
    // A deadline longer than the test, so what answers the probe is the places, not the clock.
    let server = Server::start(Limits { head: Duration::from_secs(60), ..Limits::default() });
    let tricklers = Tricklers::open(server.port, 200, Duration::from_millis(500));
    assert_eq!(tricklers.sockets().len(), 200);

    assert_eq!(server.status("/api/health", false), 200, "the probe is answered");
    assert_eq!(server.status("/api/stats", true), 200, "the token's holder is answered");
    assert_eq!(server.status("/api/stats", false), 401, "and a request without it refused");

    let oldest = &tricklers.sockets()[0];
    oldest.set_read_timeout(Some(PATIENCE)).expect("timeout");
    assert!(closed_by_server(oldest), "the oldest trickler made way");
    let newest = tricklers.sockets().last().expect("sockets");
    assert!(still_open(newest), "the newest trickler is still open while the probe answered");
}

#[test]
fn a_trickled_head_is_closed_at_its_deadline() {
    let server = Server::start(Limits { head: Duration::from_secs(1), ..Limits::default() });
    let mut stream = server.connect();
    stream.set_read_timeout(Some(Duration::from_millis(100))).expect("timeout");
    stream.write_all(b"GET /api/health HTTP/1.1\r\nX-Slow: ").expect("the start of a head");
    // One byte every 100 ms never completes the head; each would restart a per-read timer.
    let mut closed = false;
    for _ in 0..(PATIENCE.as_millis() / 100) {
        if stream.write_all(b"a").is_err() || closed_by_server(&stream) {
            closed = true;
            break;
        }
    }
    assert!(closed, "the server closed the trickled head");
    assert_eq!(server.status("/api/health", false), 200, "and serves on");
}

#[test]
fn a_refused_request_left_open_is_closed_after_the_wait_for_the_next() {
    let server = Server::start(Limits { head: Duration::from_secs(1), ..Limits::default() });
    let mut refused = server.connect();
    refused.write_all(server.head("/api/stats", false).as_bytes()).expect("send");
    assert_eq!(answer(&mut refused), 401);
    // A body announced and never sent: the server does not wait for it either.
    let mut unsent = server.connect();
    let post = format!(
        "POST /api/work HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 100\r\n\r\n",
        server.port
    );
    unsent.write_all(post.as_bytes()).expect("send");
    assert_eq!(answer(&mut unsent), 401);

    assert!(closed_by_server(&refused), "the refused connection is closed");
    assert!(closed_by_server(&unsent), "the one with an unsent body too");
}

#[test]
fn a_connection_that_presented_the_token_keeps_its_place_past_the_cap() {
    let limits =
        Limits { untrusted: 4, per_peer: 4, head: Duration::from_secs(60), ..Limits::default() };
    let server = Server::start(limits);
    let mut trusted = server.connect();
    trusted.write_all(server.head("/api/health", true).as_bytes()).expect("send");
    assert_eq!(answer(&mut trusted), 200);
    let mut untrusted = server.connect();
    untrusted.write_all(server.head("/api/health", false).as_bytes()).expect("send");
    assert_eq!(answer(&mut untrusted), 200);

    let silent: Vec<TcpStream> = (0..20).map(|_| server.connect()).collect();
    assert_eq!(server.status("/api/health", false), 200);

    assert!(closed_by_server(&untrusted), "the older unauthenticated connection made way");
    trusted.write_all(server.head("/api/stats", true).as_bytes()).expect("send");
    assert_eq!(answer(&mut trusted), 200, "the token's connection still answers");
    let newest = silent.last().expect("sockets");
    assert!(still_open(newest), "the newest silent socket keeps its place");
}
