//! One search, run: the query's models beside the store's own channels. Every front end's
//! search comes through [`run`] (by way of [`crate::recall::Reader::search`], which checks the
//! request first and marks what it found).
//!
//! The models' work (loading on first use, encoding the query, and the scan of the stored
//! vectors) needs no store, so it runs on threads of its own while the calling thread runs the
//! full-text channels; a one-shot search pays the longest of them, not their sum. A model that
//! fails or panics, or has nothing stored to match, leaves the answer a search without it
//! gives: search keeps to what it can do rather than fail.
//!
//! Must not: load a model (the caller hands in what it loaded), or decide how hits rank (that
//! is [`super::rank`], applied by the store's search).

use std::sync::Arc;

use crate::embed::{Embedder, SparseEncoder};
use crate::store::search::{SearchQuery, SearchResults, SparseQuery, VectorQuery};
use crate::store::vectors::VectorIndex;
use crate::store::{Store, StoreError};

/// The models a search may use, as loaded by the caller.
#[derive(Clone, Copy, Default)]
pub struct Models<'a> {
    /// The embedding model whose vectors the vector channel compares.
    pub embedder: Option<&'a dyn Embedder>,
    /// The learned sparse model that orders what the channels found.
    pub sparse: Option<&'a dyn SparseEncoder>,
}

impl std::fmt::Debug for Models<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Models")
            .field("embedder", &self.embedder.map(|e| e.model()))
            .field("sparse", &self.sparse.map(|e| e.model()))
            .finish()
    }
}

/// Runs `query` over `store` with the `models` that have something stored to match. Returns the
/// query as it ran (with its sparse vector when the sparse model answered) and its results.
pub fn run(
    store: &Store,
    mut query: SearchQuery,
    models: Models<'_>,
) -> Result<(SearchQuery, SearchResults), StoreError> {
    let encoder = models.sparse.filter(|e| sparse_stored(store, *e));
    let dense = models
        .embedder
        .and_then(|embedder| stored_vectors(store, embedder).map(|index| (embedder, index)));
    let sparse_coming = encoder.is_some();
    let (results, sparse) = std::thread::scope(|scope| {
        let (text, asked) = (query.text.as_str(), &query);
        let sparse_job = encoder.map(|encoder| scope.spawn(move || sparse_query(encoder, text)));
        let nearest_job = dense.as_ref().map(|(embedder, index)| {
            scope.spawn(move || {
                let vector = query_vector(*embedder, text)?;
                Some(VectorQuery { index, vector: &vector }.nearest(asked, sparse_coming))
            })
        });
        let mut sparse = None;
        let results = store.search_meanwhile(
            asked,
            sparse_coming,
            || nearest_job.and_then(joined),
            || {
                sparse = sparse_job.and_then(joined);
                sparse.clone()
            },
        );
        (results, sparse)
    });
    query.sparse = sparse;
    Ok((query, results?))
}

/// What a model's thread gave; `None`, with a warning, when it panicked, so that search goes
/// on without that channel.
fn joined<T>(job: std::thread::ScopedJoinHandle<'_, Option<T>>) -> Option<T> {
    job.join().unwrap_or_else(|_| {
        tracing::warn!("a model failed while reading the query; searching without it");
        None
    })
}

/// The store's vectors of `embedder`'s model, to compare a search's query vector with; `None`,
/// with a warning, when nothing is embedded with that model yet or they cannot be read, so
/// that search keeps to full text rather than fail.
fn stored_vectors(store: &Store, embedder: &dyn Embedder) -> Option<Arc<VectorIndex>> {
    match store.shared_vector_index(embedder.model(), embedder.dimensions()) {
        Ok(index) if !index.is_empty() => Some(index),
        Ok(_) => {
            tracing::warn!(
                "nothing is embedded with {} yet; run `agent-memory reindex`",
                embedder.model()
            );
            None
        }
        Err(err) => {
            tracing::warn!(%err, "cannot read the stored vectors");
            None
        }
    }
}

/// The vector of a search's `text`; `None`, with a warning, when embedding fails. Needs no
/// store, so that it can run beside the store's own work.
fn query_vector(embedder: &dyn Embedder, text: &str) -> Option<Vec<f32>> {
    match embedder.embed_queries(&[text]) {
        Ok(mut vectors) => vectors.pop(),
        Err(err) => {
            tracing::warn!("searching by full text only: {err}");
            None
        }
    }
}

/// Whether anything is stored with `encoder`'s model, so that a search's sparse query has
/// something to match.
fn sparse_stored(store: &Store, encoder: &dyn SparseEncoder) -> bool {
    match store.has_vectors(encoder.model()) {
        Ok(stored) => {
            if !stored {
                tracing::debug!("nothing is encoded with {} yet", encoder.model());
            }
            stored
        }
        Err(err) => {
            tracing::warn!(%err, "cannot read the stored sparse vectors");
            false
        }
    }
}

/// The sparse vector of a search's `text`; `None`, with a warning, when encoding fails, so
/// that search goes on without it. Needs no store, as [`query_vector`].
fn sparse_query(encoder: &dyn SparseEncoder, text: &str) -> Option<SparseQuery> {
    match encoder.read_query(text) {
        Ok(weights) => {
            Some(SparseQuery { model: encoder.model().to_owned(), weights: weights.into() })
        }
        Err(err) => {
            tracing::warn!("searching without the sparse model: {err}");
            None
        }
    }
}
