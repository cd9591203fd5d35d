//! The live feed (`GET /api/live`, server-sent events): events, observations and summaries as
//! they land, from any process (a hook, a `work` pass, the worker), without a reload.
//!
//! One poller reads the newest row ids every [`POLL`] (three reads of a b-tree's last page on
//! one kept connection) and publishes them on a watch channel; each client waits on that
//! channel and, when a mark moves, asks the store for the rows past the ones it has sent,
//! through its own filters (project, agent, type). Must not: hold a connection per client, or
//! keep the server from stopping (every feed ends when the stop signal comes).

use std::path::PathBuf;
use std::time::Duration;

use agent_memory_core::store::Store;
use agent_memory_core::store::browse::{Listing, Marks};
use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, StreamExt as _};
use serde_json::json;
use tokio::sync::watch;

use super::api::{Pairs, Params};
use super::{ApiError, Shared};

/// How often the poller looks for new rows.
const POLL: Duration = Duration::from_millis(500);

/// The most rows of one kind one update sends.
const BATCH: usize = 100;

/// Starts the poller; its channel holds the newest marks until `stop` turns true.
pub(super) fn watch_marks(db: PathBuf, mut stop: watch::Receiver<bool>) -> watch::Receiver<Marks> {
    let (tx, rx) = watch::channel(Marks::default());
    tokio::spawn(async move {
        let mut store: Option<Store> = None;
        loop {
            let (kept, marks) = tokio::task::spawn_blocking({
                let db = db.clone();
                let kept = store.take();
                move || {
                    let store = match kept {
                        Some(store) => store,
                        None => match Store::open(&db, Duration::from_millis(200)) {
                            Ok(store) => store,
                            Err(err) => {
                                tracing::debug!(%err, "live feed cannot open the store yet");
                                return (None, None);
                            }
                        },
                    };
                    match store.marks() {
                        Ok(marks) => (Some(store), Some(marks)),
                        // A busy or broken connection is dropped and opened afresh next time.
                        Err(err) => {
                            tracing::debug!(%err, "live feed poll failed");
                            (None, None)
                        }
                    }
                }
            })
            .await
            .unwrap_or((None, None));
            store = kept;
            if let Some(marks) = marks {
                tx.send_if_modified(|old| {
                    let changed = *old != marks;
                    *old = marks;
                    changed
                });
            }
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                _ = stop.wait_for(|s| *s) => return,
            }
        }
    });
    rx
}

/// What one client has been sent, and what it wants.
struct Client {
    state: Shared,
    marks: watch::Receiver<Marks>,
    stop: watch::Receiver<bool>,
    sent: Marks,
    filter: Listing,
    kinds: Vec<String>,
    hello: bool,
}

/// `GET /api/live?project=&agent=&type=&kind=`: a `hello` event with the current marks, then
/// `event`, `observation` and `summary` events as rows land (each the row's JSON, as the
/// listing routes return it).
pub(super) async fn feed(State(state): State<Shared>, query: Pairs) -> Response {
    let params = match Params::new(query, &["project", "agent", "type", "kind", "token"]) {
        Ok(params) => params,
        Err(err) => return err.into_response(),
    };
    let filter = match params.listing() {
        Ok(filter) => Listing { limit: BATCH, ..filter },
        Err(err) => return err.into_response(),
    };
    let mut kinds: Vec<String> = params.get("kind").map_or_else(
        || vec!["event".into(), "observation".into(), "summary".into()],
        |k| k.split(',').map(|s| s.trim().to_owned()).collect(),
    );
    kinds.retain(|k| matches!(k.as_str(), "event" | "observation" | "summary"));
    let mut marks = state.marks.clone();
    let sent = *marks.borrow_and_update();
    let client =
        Client { stop: state.stop.clone(), state, marks, sent, filter, kinds, hello: true };
    let updates = stream::unfold(client, next_batch).flat_map(stream::iter);
    Sse::new(updates).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response()
}

/// Waits for new rows (or the stop), then reads them; `None` ends the feed.
async fn next_batch(
    mut client: Client,
) -> Option<(Vec<Result<Event, std::convert::Infallible>>, Client)> {
    if client.hello {
        client.hello = false;
        let hello =
            Event::default().event("hello").data(json!({ "marks": client.sent }).to_string());
        return Some((vec![Ok(hello)], client));
    }
    loop {
        if *client.stop.borrow() {
            return None;
        }
        tokio::select! {
            changed = client.marks.changed() => { changed.ok()?; }
            _ = client.stop.wait_for(|s| *s) => return None,
        }
        let now = *client.marks.borrow_and_update();
        let (sent, filter, kinds) = (client.sent, client.filter.clone(), client.kinds.clone());
        let rows =
            client.state.with_store(move |store| Ok(read_new(store, sent, &filter, &kinds)?)).await;
        match rows {
            Ok(events) => {
                client.sent = now;
                if !events.is_empty() {
                    return Some((events.into_iter().map(Ok).collect(), client));
                }
            }
            Err(ApiError { message, .. }) => tracing::debug!(%message, "live feed read failed"),
        }
    }
}

/// The rows past `sent` that pass the filter, oldest first, as SSE events.
fn read_new(
    store: &Store,
    sent: Marks,
    filter: &Listing,
    kinds: &[String],
) -> Result<Vec<Event>, agent_memory_core::store::StoreError> {
    let mut out = Vec::new();
    let want = |k: &str| kinds.iter().any(|x| x == k);
    let event = |name: &str, data: String| Event::default().event(name).data(data);
    if want("event") {
        let mut rows =
            store.list_events(&Listing { after_id: Some(sent.events), ..filter.clone() })?;
        rows.reverse();
        out.extend(rows.iter().map(|r| event("event", json!(r).to_string())));
    }
    if want("observation") {
        let mut rows = store
            .list_observations(&Listing { after_id: Some(sent.observations), ..filter.clone() })?;
        rows.reverse();
        out.extend(rows.iter().map(|r| event("observation", json!(r).to_string())));
    }
    if want("summary") {
        let mut rows =
            store.list_summaries(&Listing { after_id: Some(sent.summaries), ..filter.clone() })?;
        rows.reverse();
        out.extend(rows.iter().map(|r| event("summary", json!(r).to_string())));
    }
    Ok(out)
}
