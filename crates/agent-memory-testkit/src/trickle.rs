//! Slow clients for a server's connection limits: sockets that each start a request head and
//! add one byte to it now and then, never finishing it.

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Sockets to `127.0.0.1:port` that each sent `GET / HTTP/1.1\r\nHo` and send one more byte
/// every `every` until dropped. A socket the server closed is left alone.
#[derive(Debug)]
pub struct Tricklers {
    sockets: Arc<Vec<TcpStream>>,
    running: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Tricklers {
    /// Up to `count` of them: the ones the system let connect.
    pub fn open(port: u16, count: usize, every: Duration) -> Tricklers {
        let sockets: Vec<TcpStream> = (0..count)
            .filter_map(|_| TcpStream::connect(("127.0.0.1", port)).ok())
            .filter_map(|mut s| s.write_all(b"GET / HTTP/1.1\r\nHo").is_ok().then_some(s))
            .collect();
        let sockets = Arc::new(sockets);
        let running = Arc::new(AtomicBool::new(true));
        let thread = std::thread::spawn({
            let (sockets, running) = (Arc::clone(&sockets), Arc::clone(&running));
            move || {
                while running.load(Ordering::Relaxed) {
                    std::thread::sleep(every);
                    for mut socket in sockets.iter() {
                        let _ = socket.write_all(b"o");
                    }
                }
            }
        });
        Tricklers { sockets, running, thread: Some(thread) }
    }

    /// The sockets, oldest first.
    pub fn sockets(&self) -> &[TcpStream] {
        &self.sockets
    }
}

impl Drop for Tricklers {
    fn drop(&mut self) {
        self.running.store(false, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
