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

/// A learned sparse vector: a weight for each of a few words of the model's vocabulary, by
/// word id, ids ascending. The words are the text's own and the ones a reader would expect
/// beside them (a SPLADE model finds `group` and `organization` in "support group").
pub type SparseVector = Vec<(u32, f32)>;

/// The most words a stored text keeps in its sparse vector, its strongest ones. A text of a
/// few sentences has 60–120 words with a weight; the weakest add little to a match and much to
/// the store.
pub const SPARSE_TERMS: usize = 64;

/// A learned sparse encoder (SPLADE): turns a text into weights over its model's vocabulary,
/// including words the text does not hold but means. Search mixes its match with the other
/// channels' to order the candidates they found (see [`crate::store::search::Ranking`]).
pub trait SparseEncoder: Send + Sync {
    /// The model's name as installed (`splade-tiny`). Stored with every vector.
    fn model(&self) -> &str;

    /// One vector per text to be stored, its [`SPARSE_TERMS`] strongest words at most; an
    /// empty text gets an empty vector.
    fn encode(&self, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError>;

    /// One vector per search query, every word with a weight kept.
    fn encode_queries(&self, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError>;

    /// A search query read once, to be asked later for its weights of the words the
    /// candidates found hold. Scoring a few thousand words costs far less than scoring the
    /// whole vocabulary, which is what [`SparseEncoder::encode_queries`] does; a model that
    /// cannot score words apart encodes the query in full (the default).
    fn read_query(&self, text: &str) -> Result<Box<dyn QueryWeights>, EmbedError> {
        let vector = self.encode_queries(&[text])?.pop().unwrap_or_default();
        Ok(Box::new(vector))
    }
}

/// A query read by a sparse model ([`SparseEncoder::read_query`]).
pub trait QueryWeights: Send + Sync {
    /// The query's weight for each of `words` (word ids, ascending), in their order; 0 for a
    /// word it does not mean.
    fn weights(&self, words: &[u32]) -> Result<Vec<f32>, EmbedError>;
}

/// A query encoded in full.
impl QueryWeights for SparseVector {
    fn weights(&self, words: &[u32]) -> Result<Vec<f32>, EmbedError> {
        Ok(words
            .iter()
            .map(|id| self.binary_search_by_key(id, |(i, _)| *i).map_or(0.0, |at| self[at].1))
            .collect())
    }
}

/// The dot product of two sparse vectors (both ids ascending): how much they mean alike.
pub fn sparse_dot(a: &[(u32, f32)], b: &[(u32, f32)]) -> f32 {
    let (mut i, mut j, mut sum) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                sum += a[i].1 * b[j].1;
                i += 1;
                j += 1;
            }
        }
    }
    sum
}

/// A sparse vector as stored: per word, its id and its weight times 4096, each a
/// little-endian u16 (weights run 0–3; the rounding is far below what ranking can tell).
pub fn sparse_to_blob(v: &[(u32, f32)]) -> Vec<u8> {
    v.iter()
        .filter_map(|&(id, w)| Some((u16::try_from(id).ok()?, w)))
        .flat_map(|(id, w)| {
            let weight = (w.max(0.0) * SPARSE_SCALE).round().min(f32::from(u16::MAX)) as u16;
            id.to_le_bytes().into_iter().chain(weight.to_le_bytes())
        })
        .collect()
}

/// The sparse vector [`sparse_to_blob`] stored; a torn trailing pair is left out.
pub fn sparse_from_blob(blob: &[u8]) -> SparseVector {
    blob.chunks_exact(4)
        .map(|b| {
            let id = u16::from_le_bytes([b[0], b[1]]);
            let weight = u16::from_le_bytes([b[2], b[3]]);
            (u32::from(id), f32::from(weight) / SPARSE_SCALE)
        })
        .collect()
}

const SPARSE_SCALE: f32 = 4096.0;

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
    /// A learned sparse encoder: a BERT with its masked-word head (`BertForMaskedLM`), whose
    /// word scores over the vocabulary make a [`SparseVector`] (SPLADE). Its manifest's
    /// `dimensions` is the vocabulary's size.
    Sparse,
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
    fn sparse_vectors_round_trip_through_their_blob_and_multiply_where_ids_meet() {
        let v = vec![(3, 1.25), (700, 0.5), (30_521, 2.75)];
        let back = sparse_from_blob(&sparse_to_blob(&v));
        assert_eq!(back.len(), 3);
        for ((id, w), (id2, w2)) in v.iter().zip(&back) {
            assert_eq!(id, id2);
            assert!((w - w2).abs() < 1e-3, "{w} vs {w2}");
        }
        assert!((sparse_dot(&v, &[(2, 9.0), (700, 2.0), (30_521, 1.0)]) - 3.75).abs() < 1e-6);
        assert_eq!(sparse_dot(&v, &[]), 0.0);
        assert_eq!(sparse_from_blob(&[1, 0, 0]), Vec::new(), "a torn pair is left out");
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
