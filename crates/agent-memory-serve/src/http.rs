//! The local HTTP server of `agent-memory serve` (ARCHITECTURE.md, code map): the JSON API under
//! `/api`, the live viewer at `/`, MCP over streamable HTTP at `/mcp`, and the worker.
//!
//! Owns the router, the security gate every request passes (Host and Origin checked against
//! the server's own address, which stops cross-site requests and DNS rebinding; a bearer token
//! on every mutating route and on `/mcp`), the error body `{message, code}` with its stable
//! codes ([`Code`]), a small pool of store connections, and graceful shutdown: new connections
//! stop, live feeds and MCP sessions end, requests in flight and the worker's pass finish.
//! How connections are taken and how long each may stay is [`guard`]'s; the gate tells it
//! which connection presented the token.
//!
//! Every store call runs on a blocking thread; the runtime only moves bytes. Must not: hand a
//! browser a private event or anything distilled from one (the store's browse queries leave
//! them out; single items are checked here), or listen beyond loopback unless configured.

mod api;
pub mod guard;
mod live;
mod review;
mod viewer;

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use agent_memory_core::recall::RecallError;
use agent_memory_core::store::Store;
use agent_memory_core::store::browse::Marks;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Serialize;
use tokio::sync::{Notify, watch};

use crate::mcp::{MemoryServer, Settings};
use crate::worker::{self, StatusCell};

/// How long a request waits for a store another process is writing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Store connections kept open between requests, and the most requests using the store at
/// once: more would each open a connection of their own, with cold caches, only to share the
/// same cores.
const POOL_SIZE: usize = 8;

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("cannot serve on {addr}: {source}")]
    Listen { addr: String, source: std::io::Error },
}

/// Everything the server needs, built by the binary.
pub struct ServeOptions {
    /// Home, configuration, ranking and embedder, shared with the MCP tools.
    pub settings: Settings,
    /// Bound already, so that port 0 works and the caller knows the address first.
    pub listener: std::net::TcpListener,
    /// The bearer token every route but the health probe and the viewer's files requires.
    pub token: String,
    /// One `work` pass; `None` runs no worker.
    pub pass: Option<worker::Pass>,
    pub work_interval: Duration,
    /// What each connection may hold and for how long.
    pub limits: guard::Limits,
}

impl std::fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeOptions")
            .field("listener", &self.listener)
            .field("work_interval", &self.work_interval)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What every handler shares.
pub(crate) struct AppState {
    pub settings: Arc<Settings>,
    token: String,
    /// `Host` values this server answers to.
    hosts: Vec<String>,
    /// `Origin` values allowed to call it: its own.
    origins: Vec<String>,
    pool: Mutex<Vec<Store>>,
    /// One permit per pooled connection: a request waits here for one to be free.
    pool_permits: Arc<tokio::sync::Semaphore>,
    pub marks: watch::Receiver<Marks>,
    pub stop: watch::Receiver<bool>,
    stop_tx: watch::Sender<bool>,
    pub worker: StatusCell,
    pub nudge: Arc<Notify>,
    pub started: Instant,
    /// Search hits not yet counted in the store.
    pub hits: Arc<HitLog>,
}

/// Search hits waiting to be counted: many concurrent searches would otherwise each take the
/// store's write lock for a moment; one writer counts them all every [`HIT_FLUSH`].
#[derive(Debug, Default)]
pub(crate) struct HitLog(Mutex<Vec<(&'static str, i64)>>);

/// How often counted hits are written.
const HIT_FLUSH: Duration = Duration::from_secs(1);

impl HitLog {
    pub fn add(&self, hits: impl IntoIterator<Item = (&'static str, i64)>) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend(hits);
    }

    fn take(&self) -> Vec<(&'static str, i64)> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Writes the logged hits every [`HIT_FLUSH`], and once more when the server stops.
async fn flush_hits(state: Shared) {
    let mut stop = state.stop.clone();
    loop {
        let stopping = tokio::select! {
            () = tokio::time::sleep(HIT_FLUSH) => false,
            _ = stop.wait_for(|s| *s) => true,
        };
        let hits = state.hits.take();
        if !hits.is_empty() {
            let settings = Arc::clone(&state.settings);
            let result = state
                .with_store(move |store| {
                    settings.recall.reader(store).record_hits(hits.iter().copied());
                    Ok(())
                })
                .await;
            if let Err(err) = result {
                tracing::debug!(message = %err.message, "hit counts not updated");
            }
        }
        if stopping {
            return;
        }
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState").field("hosts", &self.hosts).finish_non_exhaustive()
    }
}

pub(crate) type Shared = Arc<AppState>;

impl AppState {
    /// Runs `work` with a store connection on a blocking thread; the connection goes back to
    /// the pool afterwards.
    pub async fn with_store<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&Store) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let state = Arc::clone(self);
        let permit = self.pool_permit().await?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let store = state.take_store()?;
            let result = work(&store);
            state.give_back(store);
            result
        })
        .await
        .map_err(|err| ApiError::new(Code::Internal, format!("the request failed: {err}")))?
    }

    /// [`AppState::with_store`] for work that writes: memory decisions.
    pub async fn with_store_mut<T: Send + 'static>(
        self: &Arc<Self>,
        work: impl FnOnce(&mut Store) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let state = Arc::clone(self);
        let permit = self.pool_permit().await?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let mut store = state.take_store()?;
            let result = work(&mut store);
            state.give_back(store);
            result
        })
        .await
        .map_err(|err| ApiError::new(Code::Internal, format!("the request failed: {err}")))?
    }

    /// Held by the blocking work itself, so a request given up on still counts until its
    /// work ends.
    async fn pool_permit(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        Arc::clone(&self.pool_permits).acquire_owned().await.map_err(|err| {
            ApiError::new(Code::Internal, format!("the store pool is closed: {err}"))
        })
    }

    fn take_store(&self) -> Result<Store, ApiError> {
        if let Some(store) = self.pool.lock().unwrap_or_else(PoisonError::into_inner).pop() {
            return Ok(store);
        }
        let path = self.settings.home.db_path();
        Store::open(&path, BUSY_TIMEOUT).map_err(|err| {
            ApiError::new(
                Code::StoreUnavailable,
                format!(
                    "cannot use the store at {}: {err}; run `agent-memory status` to check it",
                    path.display()
                ),
            )
        })
    }

    fn give_back(&self, store: Store) {
        let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        if pool.len() < POOL_SIZE {
            pool.push(store);
        }
    }

    /// Asks the server to stop gracefully.
    pub fn request_stop(&self) {
        let _ = self.stop_tx.send(true);
    }
}

/// The stable error codes of the API: `code` in every error body, declared once here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    /// A parameter is missing, unknown or malformed.
    BadRequest,
    /// No such route or item.
    NotFound,
    /// The route needs `Authorization: Bearer <token>` (the token is in `serve.token`).
    Unauthorized,
    /// The `Host` header is not this server's address (DNS rebinding).
    ForbiddenHost,
    /// The `Origin` header is another site's (cross-site request).
    ForbiddenOrigin,
    /// The item is private: it is never served to a browser.
    Private,
    /// The store cannot be opened or read.
    StoreUnavailable,
    /// The item is not in a state the request can change (approving what is not a candidate).
    Conflict,
    /// A feature this build does not offer yet.
    NotAvailable,
    /// Anything else.
    Internal,
}

impl Code {
    pub fn status(self) -> StatusCode {
        match self {
            Code::BadRequest => StatusCode::BAD_REQUEST,
            Code::NotFound => StatusCode::NOT_FOUND,
            Code::Unauthorized => StatusCode::UNAUTHORIZED,
            Code::ForbiddenHost | Code::ForbiddenOrigin | Code::Private => StatusCode::FORBIDDEN,
            Code::StoreUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            Code::Conflict => StatusCode::CONFLICT,
            Code::NotAvailable => StatusCode::NOT_IMPLEMENTED,
            Code::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// An API error: `{message, code}` with the code's status.
#[derive(Debug, Serialize)]
pub struct ApiError {
    pub message: String,
    pub code: Code,
}

impl ApiError {
    pub fn new(code: Code, message: impl Into<String>) -> ApiError {
        ApiError { message: message.into(), code }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.code.status(), axum::Json(self)).into_response()
    }
}

impl From<RecallError> for ApiError {
    fn from(err: RecallError) -> ApiError {
        let code = match &err {
            RecallError::Invalid(_) => Code::BadRequest,
            RecallError::Missing(_) => Code::NotFound,
            RecallError::Store(_) | RecallError::Memory(_) => Code::StoreUnavailable,
        };
        ApiError::new(code, err.to_string())
    }
}

impl From<agent_memory_core::store::StoreError> for ApiError {
    fn from(err: agent_memory_core::store::StoreError) -> ApiError {
        ApiError::from(RecallError::Store(err))
    }
}

/// The `Host` values a server on `addr` answers to: its loopback names on its port, and the
/// configured address itself when it is not loopback.
fn allowed_hosts(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    hosts.push(format!("[::1]:{port}"));
    let ip = addr.ip();
    if !ip.is_loopback() && !ip.is_unspecified() {
        hosts.push(match ip {
            IpAddr::V4(v4) => format!("{v4}:{port}"),
            IpAddr::V6(v6) => format!("[{v6}]:{port}"),
        });
    }
    hosts
}

/// Serves until `shutdown` resolves or `POST /api/shutdown` is called, then stops gracefully.
pub async fn serve(
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), HttpError> {
    let ServeOptions { settings, listener, token, pass, work_interval, limits } = options;
    let addr = listener
        .local_addr()
        .map_err(|source| HttpError::Listen { addr: "the listener".into(), source })?;
    let listen_err = |source| HttpError::Listen { addr: addr.to_string(), source };
    listener.set_nonblocking(true).map_err(listen_err)?;
    let listener = tokio::net::TcpListener::from_std(listener).map_err(listen_err)?;

    let settings = Arc::new(settings);
    let hosts = allowed_hosts(addr);
    let origins = hosts.iter().map(|h| format!("http://{h}")).collect();
    let (stop_tx, stop) = watch::channel(false);
    let marks = live::watch_marks(settings.home.db_path(), stop.clone());
    let worker_status = StatusCell::default();
    let nudge = Arc::new(Notify::new());
    let state = Arc::new(AppState {
        settings: Arc::clone(&settings),
        token,
        hosts: hosts.clone(),
        origins,
        pool: Mutex::new(Vec::new()),
        pool_permits: Arc::new(tokio::sync::Semaphore::new(POOL_SIZE)),
        marks,
        stop: stop.clone(),
        stop_tx,
        worker: worker_status.clone(),
        nudge: Arc::clone(&nudge),
        started: Instant::now(),
        hits: Arc::default(),
    });
    let hit_writer = tokio::spawn(flush_hits(Arc::clone(&state)));

    let worker_task = pass.map(|pass| {
        tokio::spawn(worker::run(pass, work_interval, worker_status, stop.clone(), nudge))
    });

    let mcp_config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.iter().cloned().chain(["127.0.0.1".into(), "localhost".into()]))
        .with_sse_keep_alive(Some(Duration::from_secs(15)));
    let mcp_cancel = mcp_config.cancellation_token.clone();
    let mcp_settings = Arc::clone(&settings);
    let mcp = StreamableHttpService::new(
        move || Ok(MemoryServer::shared(Arc::clone(&mcp_settings))),
        Arc::new(LocalSessionManager::default()),
        mcp_config,
    );

    let app = Router::new()
        .merge(api::routes())
        .merge(viewer::routes())
        .merge(review::routes())
        .nest_service("/mcp", mcp)
        .fallback(|| async { ApiError::new(Code::NotFound, "no such route; see docs/http-api.md") })
        .layer(middleware::from_fn_with_state(Arc::clone(&state), gate))
        .with_state(Arc::clone(&state));

    let mut stop_signal = stop.clone();
    let stopper = Arc::clone(&state);
    tokio::spawn(async move {
        tokio::select! {
            () = shutdown => stopper.request_stop(),
            _ = stop_signal.wait_for(|s| *s) => {}
        }
    });
    let mut mcp_stop = stop.clone();
    tokio::spawn(async move {
        let _ = mcp_stop.wait_for(|s| *s).await;
        mcp_cancel.cancel();
    });
    guard::serve(listener, app, limits, stop).await;
    let _ = hit_writer.await;
    if let Some(task) = worker_task {
        // The pass in flight finishes; the worker sees the stop before starting another.
        let _ = task.await;
    }
    Ok(())
}

/// The gate every request passes: Host, then Origin, then the token where one is required.
async fn gate(State(state): State<Shared>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if !state.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return ApiError::new(
            Code::ForbiddenHost,
            format!("this server answers only to {}; `Host: {host}` is refused", state.hosts[0]),
        )
        .into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if !state.origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
            return ApiError::new(
                Code::ForbiddenOrigin,
                format!(
                    "requests from {origin} are refused; only this server's own pages may call it"
                ),
            )
            .into_response();
        }
    }
    let path = request.uri().path();
    // Reads need the token as much as changes do: the store is 0600, and a server that any
    // local user may read would undo that. Only the health probe and the viewer's own files
    // are open; the viewer takes the token from the address `serve` prints.
    let needs_token = !matches!(*request.method(), Method::GET | Method::HEAD)
        || path.starts_with("/mcp")
        || (path.starts_with("/api") && path != "/api/health");
    // EventSource cannot send a header, so the live feed may carry the token in its query.
    let in_query = path == "/api/live" && query_token(request.uri().query(), &state.token);
    let with_token = in_query || authorized(headers, &state.token);
    if with_token && let Some(connection) = request.extensions().get::<guard::Connection>() {
        // The connection no longer counts against the places unauthenticated ones share.
        connection.trust();
    }
    if needs_token && !with_token {
        return ApiError::new(
            Code::Unauthorized,
            "this route needs `Authorization: Bearer <token>`; the token is in serve.token in \
             the agent-memory home",
        )
        .into_response();
    }
    next.run(request).await
}

/// Whether the request carries the token.
fn authorized(headers: &HeaderMap, token: &str) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|given| same_secret(given.trim(), token))
}

/// Whether a query string carries `token=<the token>`.
fn query_token(query: Option<&str>, token: &str) -> bool {
    query
        .unwrap_or_default()
        .split('&')
        .filter_map(|pair| pair.strip_prefix("token="))
        .any(|given| same_secret(given, token))
}

/// Compares in constant time, so the time an answer takes tells nothing of the token.
fn same_secret(given: &str, token: &str) -> bool {
    let (a, b) = (given.as_bytes(), token.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Resolves on Ctrl-C or SIGTERM, the signals a terminal or a service manager stops with.
pub async fn stop_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
