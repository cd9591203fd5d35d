//! The review queue (DESIGN.md §4 promote): where candidates for long-term memory are
//! approved or rejected. Long-term memory is not part of this build yet, so this module is a
//! placeholder kept apart from the rest of the server: `GET /api/review` answers
//! `not_available`, and the viewer's review page says so. When promote lands, its routes (the
//! queue, approve, reject, remember, forget) replace these, behind the same token gate as
//! every mutating route. Must not: grow into anything else.

use axum::Router;
use axum::routing::get;

use super::{ApiError, Code, Shared};

pub(super) fn routes() -> Router<Shared> {
    Router::new().route("/api/review", get(not_yet).post(not_yet))
}

async fn not_yet() -> ApiError {
    ApiError::new(
        Code::NotAvailable,
        "reviewing long-term memory is not available in this version yet",
    )
}
