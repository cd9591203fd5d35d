//! The live web viewer's files: one HTML page, its stylesheet and its script, plain files
//! embedded in the binary (no build step, nothing fetched from elsewhere). The page is one
//! application with hash routes (the home: sessions as cards, updated by the live feed; the
//! live list of rows; search; one page per item: observation, summary, memory, event, session;
//! memory to manage; review, one by one or in bulk; health; what agents were handed) that
//! reads the JSON API and the live feed; its English and Chinese strings live in the script and
//! it starts in the configured `[distil] language`. Opened without the token (the plain
//! address), it says where the address with the token is. Must not: embed the token or any
//! data.

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use super::Shared;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// The page forbids anything but its own files and API, so injected markup could not load or
/// send anything elsewhere.
const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; \
     connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

pub(super) fn routes() -> Router<Shared> {
    Router::new()
        .route("/", get(index))
        .route("/assets/app.js", get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }))
        .route("/assets/app.css", get(|| async { asset("text/css; charset=utf-8", STYLE) }))
}

async fn index() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        INDEX,
    )
}

fn asset(content_type: &'static str, body: &'static str) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body)
}
