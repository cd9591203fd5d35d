//! Embeddings: the [`Embedder`] trait the vector channel of search is built on, and the model
//! directory format every embedder is installed in.
//!
//! Implementations live outside this crate (`agent-memory-embed`: a sentence-embedding model
//! run with candle, static model2vec embeddings); this crate only stores and compares vectors
//! (see [`crate::store::vectors`]). Embedding never runs on the hook path: the distil worker
//! and `reindex` embed what is stored, and a search embeds its query.
//!
//! Must not: download anything, or load a model for a caller that did not ask for one.

use std::path::{Path, PathBuf};

use crate::store::Store;
use crate::store::vectors::VectorIndex;

/// The file that describes an installed model, inside its directory.
pub const MANIFEST: &str = "agent-memory-model.toml";

/// Something that turns texts into vectors of one fixed dimension.
pub trait Embedder: Send + Sync {
    /// The model's name as installed (`all-minilm-l6-v2`, …). Stored with every vector, so that
    /// vectors of two models are never compared.
    fn model(&self) -> &str;

    /// The length of every vector this embedder returns.
    fn dimensions(&self) -> usize;

    /// One L2-normalised vector per text to be stored (an observation, a summary), in order.
    /// An empty text gets a zero vector.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;

    /// One vector per search query, as [`Embedder::embed`] promises. Models trained with a
    /// role marker (multilingual-e5 reads "query: " before a question and "passage: " before
    /// what it is asked about) embed a query differently from a stored text; the others embed
    /// both alike, which is the default.
    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed(texts)
    }
}

/// The vector of a search's `text` and the store's vectors of `embedder`'s model to compare it
/// with; `None`, with a warning, when nothing is embedded with that model yet or embedding
/// fails, so that search keeps to full text rather than fail.
pub fn query_vector(
    store: &Store,
    embedder: &dyn Embedder,
    text: &str,
) -> Option<(VectorIndex, Vec<f32>)> {
    let index = match store.vector_index(embedder.model(), embedder.dimensions()) {
        Ok(index) if !index.is_empty() => index,
        Ok(_) => {
            tracing::warn!(
                "nothing is embedded with {} yet; run `agent-memory reindex`",
                embedder.model()
            );
            return None;
        }
        Err(err) => {
            tracing::warn!(%err, "cannot read the stored vectors");
            return None;
        }
    };
    match embedder.embed_queries(&[text]) {
        Ok(mut vectors) => vectors.pop().map(|v| (index, v)),
        Err(err) => {
            tracing::warn!("searching by full text only: {err}");
            None
        }
    }
}

/// Why a model could not be loaded or could not embed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(
        "no embedding model named {name:?} is installed in {dir}; run `agent-memory model install {name}`"
    )]
    NotInstalled { name: String, dir: PathBuf },
    #[error(
        "the model in {dir} cannot be used: {reason}; reinstall it with `agent-memory model install`"
    )]
    BadModel { dir: PathBuf, reason: String },
    #[error(
        "this build of agent-memory cannot run {kind} models; build it with the `{feature}` feature"
    )]
    Unsupported { kind: String, feature: &'static str },
    #[error("embedding failed: {0}")]
    Failed(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// The kinds of model an installed directory can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ModelKind {
    /// A BERT-family sentence encoder (safetensors weights, `config.json`, `tokenizer.json`),
    /// mean-pooled, e.g. all-MiniLM-L6-v2.
    Bert,
    /// A model2vec static embedding model (`model.safetensors`, `tokenizer.json`,
    /// `config.json`).
    Static,
}

/// `agent-memory-model.toml`: what an installed model directory holds.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    pub name: String,
    pub kind: ModelKind,
    pub dimensions: usize,
    /// Where it was installed from (a path or a package name), for `model list`.
    #[serde(default)]
    pub source: String,
    /// The least cosine similarity that means "about the same thing" for this model, when it
    /// is known; models spread their similarities differently. `[search] similarity_floor`
    /// overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity_floor: Option<f32>,
    /// Put before every search query ("query: " for multilingual-e5), when the model was
    /// trained with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_prefix: Option<String>,
    /// Put before every stored text ("passage: " for multilingual-e5), when the model was
    /// trained with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passage_prefix: Option<String>,
}

impl Manifest {
    /// Reads the manifest of the model installed in `dir`.
    pub fn read(dir: &Path) -> Result<Manifest, EmbedError> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).map_err(|source| EmbedError::Io {
            context: format!("cannot read {}", path.display()),
            source,
        })?;
        toml::from_str(&text)
            .map_err(|err| EmbedError::BadModel { dir: dir.to_owned(), reason: err.to_string() })
    }
}

/// The text an item is embedded from: its title and what it says, clipped so that long items
/// cost no more than short ones to embed.
pub fn item_text(parts: &[&str]) -> String {
    let joined = parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()).collect::<Vec<_>>();
    crate::text::clip(&joined.join("\n"), 1_000)
}

/// Cosine similarity of two L2-normalised vectors: their dot product.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight independent sums let the compiler keep a vector register busy (a single running
    // sum is one long dependency chain); the search scan runs this once per stored vector.
    const LANES: usize = 8;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f32; LANES];
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail: f32 = a_chunks.remainder().iter().zip(b_chunks.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// Scales `v` to unit length in place; a zero vector stays zero.
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_the_plain_sum_at_every_length() {
        for n in [0usize, 1, 7, 8, 9, 384, 385] {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let plain: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - plain).abs() < 1e-4, "length {n}");
        }
        assert_eq!(dot(&[1.0, 2.0, 3.0], &[1.0]), 1.0, "the shorter length wins");
    }

    #[test]
    fn normalize_makes_unit_length_and_keeps_zero() {
        let mut v = vec![3.0, 4.0];
        normalize(&mut v);
        assert!((dot(&v, &v) - 1.0).abs() < 1e-6);
        let mut zero = vec![0.0; 3];
        normalize(&mut zero);
        assert_eq!(zero, vec![0.0; 3]);
    }
}
