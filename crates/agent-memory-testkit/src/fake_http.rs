//! A scripted HTTP server on 127.0.0.1, standing in for a remote model's API: it records every
//! request and answers what the test's script makes of it. The real clients (the LLM transports,
//! the `agent-memory` binary) talk to it over real sockets; only the far end is scripted.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Names lowercased, in the order sent.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    /// The first header of that (lowercase) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON; panics, naming the body, when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|err| panic!("the request body is not JSON ({err}): {}", self.body))
    }
}

/// What the server answers one request with.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    /// Headers besides `content-type: application/json`, `content-length` and `connection`.
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    /// How long to wait before answering (past a client's timeout, to test it).
    pub delay: Duration,
}

impl Reply {
    /// `status` with `body` as a JSON answer, at once.
    pub fn json(status: u16, body: &str) -> Reply {
        Reply { status, headers: Vec::new(), body: body.to_owned(), delay: Duration::ZERO }
    }
}

/// A running scripted server; it stops when its script answers `None` or the test ends.
#[derive(Debug)]
pub struct FakeServer {
    base_url: String,
    port: u16,
    log: Arc<Mutex<Vec<Request>>>,
}

impl FakeServer {
    /// Serves one connection at a time, each answered with what `script` makes of its
    /// request; a `None` from the script closes that connection unanswered and stops the
    /// server, so later requests are refused.
    pub fn start(mut script: impl FnMut(&Request) -> Option<Reply> + Send + 'static) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("the bound address").port();
        let log: Arc<Mutex<Vec<Request>>> = Arc::default();
        let record = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(stream);
                let Some(request) = read_request(&mut reader) else { continue };
                let reply = script(&request);
                record.lock().unwrap_or_else(PoisonError::into_inner).push(request);
                let Some(reply) = reply else { return };
                std::thread::sleep(reply.delay);
                let mut answer = format!(
                    "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                     connection: close\r\n",
                    reply.status,
                    reply.body.len()
                );
                for (name, value) in &reply.headers {
                    answer.push_str(&format!("{name}: {value}\r\n"));
                }
                answer.push_str("\r\n");
                answer.push_str(&reply.body);
                // The client may have given up already (a timeout test): nothing to do then.
                let _ = reader.get_mut().write_all(answer.as_bytes());
            }
        });
        FakeServer { base_url: format!("http://127.0.0.1:{port}"), port, log }
    }

    /// Answers `replies` in order, one per request, then stops.
    pub fn replying(replies: Vec<Reply>) -> FakeServer {
        let mut replies = replies.into_iter();
        FakeServer::start(move |_| replies.next())
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Every request read so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// Reads one HTTP/1.1 request with a `content-length` body; `None` when the client sent
/// something else or went away.
fn read_request(reader: &mut BufReader<std::net::TcpStream>) -> Option<Request> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let body = String::from_utf8_lossy(&body).into_owned();
    Some(Request { method, path, headers, body })
}
