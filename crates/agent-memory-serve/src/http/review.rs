//! The review queue (ARCHITECTURE.md, code map: `http/review.rs`): the candidates for long-term
//! memory, and the decisions on them: approve into the project (L2) or into global memory (L3),
//! edit, reject. Every decision goes through core's `memory::Writer`, the same calls
//! `agent-memory review` makes and by the same rules (an edit of a forgotten, rejected or
//! superseded memory is a `conflict`; edited text is sanitized like anything captured), behind
//! the token gate every mutating route passes.
//!
//! Must not: decide anything on a GET.

use agent_memory_core::memory::Writer;
use agent_memory_core::store::memories::{self, Edit, Filter, Kind, MemoryError, Status};
use agent_memory_core::time;
use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ApiError, Code, Shared};

pub(super) fn routes() -> Router<Shared> {
    Router::new().route("/api/review", get(queue)).route("/api/review/{id}", post(decide))
}

/// The candidates, most important first, each with the active memory approving it would
/// retire (`supersedes_memory`), if any.
async fn queue(State(state): State<Shared>) -> Response {
    let result = state
        .with_store(|store| {
            let filter = Filter { statuses: vec![Status::Candidate], ..Filter::default() };
            let mut list = memories::list(store, &filter).map_err(memory_error)?;
            list.sort_by(|a, b| b.importance.cmp(&a.importance).then(a.id.cmp(&b.id)));
            let mut out = Vec::new();
            for m in list {
                let older = match m.supersedes {
                    Some(id) => memories::get(store, id).map_err(memory_error)?,
                    None => None,
                };
                let mut value = serde_json::to_value(&m).unwrap_or_default();
                value["supersedes_memory"] = serde_json::to_value(older).unwrap_or_default();
                out.push(value);
            }
            Ok(json!({ "candidates": out }))
        })
        .await;
    match result {
        Ok(value) => Json(value).into_response(),
        Err(err) => err.into_response(),
    }
}

/// What the viewer asks for one candidate.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Decision {
    /// `approve`, `approve_global`, `edit` or `reject`.
    action: String,
    /// The new text, for `edit`.
    text: Option<String>,
    /// The new kind, for `edit`.
    kind: Option<String>,
}

async fn decide(State(state): State<Shared>, Path(raw): Path<String>, body: Bytes) -> Response {
    let result = async {
        let id = raw.trim_start_matches(['m', '#']).parse::<i64>().map_err(|_| {
            ApiError::new(Code::BadRequest, format!("`{raw}` is not a memory id; pass one such as m12"))
        })?;
        let decision: Decision = serde_json::from_slice(&body).map_err(|err| {
            ApiError::new(
                Code::BadRequest,
                format!(
                    "the body is not a decision ({err}); send {{\"action\": \"approve\" | \"approve_global\" | \"edit\" | \"reject\", \"text\"?, \"kind\"?}}"
                ),
            )
        })?;
        let config = state.settings.config.clone();
        state.with_store_mut(move |store| apply(store, &config, id, &decision)).await
    }
    .await;
    match result {
        Ok(value) => Json(value).into_response(),
        Err(err) => err.into_response(),
    }
}

fn apply(
    store: &mut agent_memory_core::store::Store,
    config: &agent_memory_core::config::Config,
    id: i64,
    decision: &Decision,
) -> Result<Value, ApiError> {
    let mut writer = Writer::configured(store, config, time::now_ms());
    let memory = match decision.action.as_str() {
        "approve" | "approve_global" => {
            let approved =
                writer.approve(id, decision.action == "approve_global").map_err(memory_error)?;
            return Ok(json!({ "memory": approved.memory, "superseded": approved.superseded }));
        }
        "reject" => writer.reject(id).map_err(memory_error)?,
        "edit" => {
            let kind = match &decision.kind {
                Some(k) => Some(Kind::parse(k).ok_or_else(|| {
                    ApiError::new(
                        Code::BadRequest,
                        format!("`kind` is `{k}`; pass fact, decision, convention, problem or preference"),
                    )
                })?),
                None => None,
            };
            let change = Edit { text: decision.text.clone(), kind, importance: None };
            writer.edit(id, change).map_err(|err| match err {
                MemoryError::EmptyText | MemoryError::TooLong(_) => {
                    ApiError::new(Code::BadRequest, format!("`text`: {err}"))
                }
                other => memory_error(other),
            })?
        }
        other => {
            return Err(ApiError::new(
                Code::BadRequest,
                format!("`action` is `{other}`; pass approve, approve_global, edit or reject"),
            ));
        }
    };
    Ok(json!({ "memory": memory }))
}

fn memory_error(err: MemoryError) -> ApiError {
    match err {
        MemoryError::NotFound(_) => ApiError::new(Code::NotFound, err.to_string()),
        MemoryError::State { .. } | MemoryError::NotYours { .. } => {
            ApiError::new(Code::Conflict, err.to_string())
        }
        MemoryError::EmptyText | MemoryError::TooLong(_) | MemoryError::Importance(_) => {
            ApiError::new(Code::BadRequest, err.to_string())
        }
        MemoryError::Store(err) => err.into(),
    }
}
