//! How `serve` takes and keeps connections: the accept loop, what each connection may hold and
//! for how long, and graceful shutdown of them all.
//!
//! A local server is still reachable by every local process, and each open socket holds a task
//! and a file descriptor, so no connection may keep the server from answering the health probe
//! or the token's holder:
//!
//! - Every connection is accepted at once; none waits in the kernel's queue behind others.
//! - A request head must arrive complete within [`Limits::head`] of the moment the server
//!   starts reading it: from accept for the first, from the end of the previous answer for the
//!   next on a kept-alive connection. Trickling bytes does not extend it.
//! - A connection that has not presented the token (an *untrusted* one) holds one of
//!   [`Limits::untrusted`] places, at most [`Limits::per_peer`] of them per peer address. A new
//!   connection that finds no place free takes the oldest one's, which is closed at once:
//!   whoever holds places longest loses them first, so a fresh request is answered while a
//!   flood of idle or trickling sockets makes way for it.
//! - A connection whose request carried the token (the gate says so) leaves the untrusted
//!   places for one of [`Limits::trusted`], where no unauthenticated connection can reach it.
//! - On any connection, nothing moving either way for [`Limits::idle`] closes it (the live
//!   feed and MCP's streams send a keep-alive every 15 s, so a listening client is never idle).
//!
//! Must not: read or change what flows through a connection.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::http::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::{TowerToHyperService, TowerToHyperServiceFuture};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::{Instant, Sleep};

/// Untrusted connections open at once.
pub const UNTRUSTED: usize = 64;
/// Untrusted connections open at once from one peer address.
pub const PER_PEER: usize = 32;
/// Connections that have presented the token, open at once.
pub const TRUSTED: usize = 192;
/// How long a request head may take to arrive, and a kept-alive connection may wait for one.
pub const HEAD: Duration = Duration::from_secs(10);
/// How long a connection may see nothing move either way.
pub const IDLE: Duration = Duration::from_secs(45);

/// The bounds every connection is held to; [`Limits::default`] is what `serve` uses.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Untrusted connections open at once; a new one closes the oldest past it.
    pub untrusted: usize,
    /// Untrusted connections open at once from one peer address.
    pub per_peer: usize,
    /// Connections that have presented the token, open at once; past it, one that presents
    /// the token stays untrusted.
    pub trusted: usize,
    /// The deadline of a whole request head, and of the wait for the next one.
    pub head: Duration,
    /// How long nothing may move either way on a connection.
    pub idle: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            untrusted: UNTRUSTED,
            per_peer: PER_PEER,
            trusted: TRUSTED,
            head: HEAD,
            idle: IDLE,
        }
    }
}

/// Accepts and serves connections to `app` until `stop` turns true (or its sender is gone),
/// then stops accepting, lets each connection finish the request it is serving, and returns
/// once all have closed.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) {
    let places = Arc::new(Places::new(limits));
    let mut http = hyper::server::conn::http1::Builder::new();
    // The deadline runs from the first poll for a head until the head is parsed, whatever
    // arrives in between (hyper's `Conn::poll_read_head`), and starts again for the next.
    http.timer(TokioTimer::new()).header_read_timeout(limits.head);
    // Each connection's task holds a receiver; the sender sees them all gone at the end.
    let (open_tx, open_rx) = watch::channel(());
    let connection_stop = stop.clone();
    let mut stopping = pin!(async move {
        let _ = stop.wait_for(|s| *s).await;
    });
    loop {
        let accepted = tokio::select! {
            () = &mut stopping => break,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                let connection = places.admit(peer.ip());
                let stop = connection_stop.clone();
                let task = serve_one(stream, peer, connection, limits.idle, &app, &http, stop);
                let open = open_rx.clone();
                tokio::spawn(async move {
                    task.await;
                    drop(open);
                });
            }
            Err(err) => {
                // Out of descriptors, or a connection reset before it was taken: wait a moment
                // rather than spin.
                tracing::debug!(%err, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    drop(listener);
    drop(open_rx);
    open_tx.closed().await;
}

/// Serves one connection until it closes, is evicted, or the server stops.
fn serve_one(
    stream: TcpStream,
    peer: SocketAddr,
    connection: Connection,
    idle: Duration,
    app: &Router,
    http: &hyper::server::conn::http1::Builder,
    mut stop: watch::Receiver<bool>,
) -> impl Future<Output = ()> + Send + 'static {
    let _ = stream.set_nodelay(true);
    let io = TokioIo::new(Timed::new(stream, idle));
    let evict = Arc::clone(&connection.0.evict);
    let service = Tracked { app: TowerToHyperService::new(app.clone()), connection };
    let conn = http.serve_connection(io, service);
    async move {
        let mut evicted = pin!(evict.notified());
        let mut conn = pin!(conn);
        let mut stopping = pin!(async move {
            let _ = stop.wait_for(|s| *s).await;
        });
        let mut winding_down = false;
        loop {
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(err) = result {
                        tracing::trace!(%peer, %err, "connection ended");
                    }
                    break;
                }
                () = &mut evicted => {
                    tracing::trace!(%peer, "untrusted connection closed to make room");
                    break;
                }
                () = &mut stopping, if !winding_down => {
                    // Finish the request in flight; close instead of waiting for another.
                    conn.as_mut().graceful_shutdown();
                    winding_down = true;
                }
            }
        }
    }
}

/// The router, handed each request with its [`Connection`] so the gate can trust it.
struct Tracked {
    app: TowerToHyperService<Router>,
    connection: Connection,
}

impl hyper::service::Service<Request<Incoming>> for Tracked {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = TowerToHyperServiceFuture<Router, Request<Incoming>>;

    fn call(&self, mut request: Request<Incoming>) -> Self::Future {
        request.extensions_mut().insert(self.connection.clone());
        self.app.call(request)
    }
}

/// The places connections hold: the untrusted ones in the order they were accepted, and the
/// trusted ones' permits.
#[derive(Debug)]
struct Places {
    limits: Limits,
    untrusted: Mutex<VecDeque<Untrusted>>,
    trusted: Arc<Semaphore>,
    next: AtomicU64,
}

/// One untrusted connection's place.
#[derive(Debug)]
struct Untrusted {
    id: u64,
    peer: IpAddr,
    evict: Arc<Notify>,
}

impl Places {
    fn new(limits: Limits) -> Places {
        Places {
            limits,
            untrusted: Mutex::new(VecDeque::new()),
            trusted: Arc::new(Semaphore::new(limits.trusted.max(1))),
            next: AtomicU64::new(0),
        }
    }

    /// Gives a new connection from `peer` an untrusted place, closing the oldest connection
    /// from the same peer, or else the oldest of all, when there is none free.
    fn admit(self: &Arc<Places>, peer: IpAddr) -> Connection {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let evict = Arc::new(Notify::new());
        let mut places = self.untrusted.lock().unwrap_or_else(PoisonError::into_inner);
        let from_peer = places.iter().filter(|p| p.peer == peer).count();
        let oldest = if from_peer >= self.limits.per_peer.max(1) {
            places.iter().position(|p| p.peer == peer)
        } else if places.len() >= self.limits.untrusted.max(1) {
            Some(0)
        } else {
            None
        };
        if let Some(gone) = oldest.and_then(|i| places.remove(i)) {
            // A permit is stored if its task is not waiting yet, so the eviction is not lost.
            gone.evict.notify_one();
        }
        places.push_back(Untrusted { id, peer, evict: Arc::clone(&evict) });
        drop(places);
        Connection(Arc::new(Admitted {
            id,
            places: Arc::clone(self),
            evict,
            trusted: Mutex::new(None),
        }))
    }

    /// Takes connection `id` off the untrusted places; whether it was still there.
    fn release(&self, id: u64) -> bool {
        let mut places = self.untrusted.lock().unwrap_or_else(PoisonError::into_inner);
        match places.iter().position(|p| p.id == id) {
            Some(i) => places.remove(i).is_some(),
            None => false,
        }
    }
}

/// A connection as its requests see it: the gate calls [`Connection::trust`] when one carries
/// the token.
#[derive(Debug, Clone)]
pub(crate) struct Connection(Arc<Admitted>);

#[derive(Debug)]
struct Admitted {
    id: u64,
    places: Arc<Places>,
    /// Notified when a newer connection took this one's place.
    evict: Arc<Notify>,
    /// The trusted place, once the token was presented.
    trusted: Mutex<Option<OwnedSemaphorePermit>>,
}

impl Connection {
    /// Moves the connection from the untrusted places to a trusted one, if one is free and it
    /// was not evicted already.
    pub(crate) fn trust(&self) {
        let admitted = &self.0;
        let mut trusted = admitted.trusted.lock().unwrap_or_else(PoisonError::into_inner);
        if trusted.is_some() {
            return;
        }
        let Ok(permit) = Arc::clone(&admitted.places.trusted).try_acquire_owned() else {
            return;
        };
        if admitted.places.release(admitted.id) {
            *trusted = Some(permit);
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        self.places.release(self.id);
    }
}

/// A TCP stream closed when nothing moves either way for its idle time.
#[derive(Debug)]
struct Timed {
    inner: TcpStream,
    /// When the connection is closed unless something moves before.
    deadline: Pin<Box<Sleep>>,
    idle: Duration,
}

impl Timed {
    fn new(inner: TcpStream, idle: Duration) -> Timed {
        Timed { inner, deadline: Box::pin(tokio::time::sleep(idle)), idle }
    }

    fn moved(&mut self) {
        let next = Instant::now() + self.idle;
        self.deadline.as_mut().reset(next);
    }

    /// `None`, or the error that ends a connection whose time is up.
    fn expired(&mut self, cx: &mut Context<'_>) -> Option<io::Error> {
        self.deadline
            .as_mut()
            .poll(cx)
            .is_ready()
            .then(|| io::Error::new(io::ErrorKind::TimedOut, "connection idle too long; closed"))
    }
}

impl AsyncRead for Timed {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
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

impl AsyncWrite for Timed {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.inner).poll_write(cx, data) {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    self.moved();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(err)) => Poll::Ready(Err(err)),
            Poll::Pending => match self.expired(cx) {
                Some(err) => Poll::Ready(Err(err)),
                None => Poll::Pending,
            },
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
