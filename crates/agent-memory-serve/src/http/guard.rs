//! The listener `serve` accepts connections through: at most [`MAX_CONNECTIONS`] at once, and
//! none held open by a client that says nothing.
//!
//! A local server is still reachable by every local process, and each open socket holds a task
//! and a file descriptor. A connection that sends no byte within [`FIRST_BYTE`] is closed, and
//! one on which nothing moves either way for [`IDLE`] is closed too (the live feed and MCP's
//! streams send a keep-alive every 15 s, so a listening viewer is never idle). Past the cap,
//! new connections wait in the kernel's queue until one closes.
//!
//! Must not: read or change what flows through a connection.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// Connections served at once; more wait to be accepted.
pub const MAX_CONNECTIONS: usize = 128;
/// How long a new connection may stay silent.
pub const FIRST_BYTE: Duration = Duration::from_secs(5);
/// How long a connection may see nothing move either way.
pub const IDLE: Duration = Duration::from_secs(45);

/// A TCP listener with a cap on open connections and timeouts on silent ones.
#[derive(Debug)]
pub struct Guarded {
    inner: TcpListener,
    slots: Arc<Semaphore>,
    first_byte: Duration,
    idle: Duration,
}

impl Guarded {
    pub fn new(inner: TcpListener) -> Guarded {
        Guarded::with_limits(inner, MAX_CONNECTIONS, FIRST_BYTE, IDLE)
    }

    pub fn with_limits(
        inner: TcpListener,
        max: usize,
        first_byte: Duration,
        idle: Duration,
    ) -> Guarded {
        Guarded { inner, slots: Arc::new(Semaphore::new(max.max(1))), first_byte, idle }
    }
}

impl axum::serve::Listener for Guarded {
    type Io = GuardedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (GuardedStream, SocketAddr) {
        // The semaphore is never closed, so acquiring cannot fail; a slot is taken before the
        // connection is, so the cap holds.
        let permit = loop {
            if let Ok(permit) = Arc::clone(&self.slots).acquire_owned().await {
                break permit;
            }
        };
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => {
                    let _ = stream.set_nodelay(true);
                    let deadline = Box::pin(tokio::time::sleep(self.first_byte));
                    let io = GuardedStream {
                        inner: stream,
                        _slot: permit,
                        deadline,
                        idle: self.idle,
                        heard: false,
                    };
                    return (io, addr);
                }
                Err(err) => {
                    // Out of descriptors or a connection reset before it was taken: wait a
                    // moment rather than spin.
                    tracing::debug!(%err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// One accepted connection, holding its slot until it closes.
#[derive(Debug)]
pub struct GuardedStream {
    inner: TcpStream,
    _slot: OwnedSemaphorePermit,
    /// When the connection is closed unless something moves before.
    deadline: Pin<Box<Sleep>>,
    idle: Duration,
    /// Whether the client has sent a byte yet.
    heard: bool,
}

impl GuardedStream {
    fn moved(&mut self) {
        self.deadline.as_mut().reset(Instant::now() + self.idle);
    }

    /// `Pending`, or the error that ends a connection whose time is up.
    fn expired(&mut self, cx: &mut Context<'_>) -> Option<io::Error> {
        self.deadline.as_mut().poll(cx).is_ready().then(|| {
            let what = if self.heard { "idle" } else { "silent" };
            io::Error::new(io::ErrorKind::TimedOut, format!("connection {what} too long; closed"))
        })
    }
}

impl AsyncRead for GuardedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    self.heard = true;
                    self.moved();
                }
                Poll::Ready(result)
            }
            Poll::Pending => match self.expired(cx) {
                Some(err) => Poll::Ready(Err(err)),
                None => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for GuardedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write(cx, data);
        if let Poll::Ready(Ok(n)) = &result
            && *n > 0
        {
            self.moved();
        }
        result
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
