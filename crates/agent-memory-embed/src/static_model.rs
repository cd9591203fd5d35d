//! Static model2vec embeddings through `model2vec-rs`: each token looks up one row of a table,
//! the rows are averaged and normalised. Thousands of texts a second on one core, at some cost
//! in quality against a sentence encoder.
//!
//! Must not: reach a model hub. `model2vec-rs` is built without its download feature, and is
//! only ever given the model directory.

use std::path::Path;

use agent_memory_core::embed::{EmbedError, Embedder};
use model2vec_rs::model::StaticModel;

/// Tokens per text that count; model2vec's own default.
const MAX_TOKENS: usize = 512;

/// A loaded model2vec model.
pub(crate) struct StaticEmbedder {
    name: String,
    model: StaticModel,
}

impl StaticEmbedder {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`.
    pub(crate) fn load(dir: &Path, name: &str) -> Result<StaticEmbedder, EmbedError> {
        // `normalize: Some(true)` whatever config.json says: the trait promises unit vectors.
        let model = StaticModel::from_pretrained(dir, None, Some(true), None).map_err(|err| {
            EmbedError::BadModel { dir: dir.to_owned(), reason: format!("{err:#}") }
        })?;
        Ok(StaticEmbedder { name: name.to_owned(), model })
    }
}

impl Embedder for StaticEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn dimensions(&self) -> usize {
        self.model.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        crate::embed_nonblank(texts, self.dimensions(), |texts| {
            let owned: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
            Ok(self.model.encode_with_args(&owned, Some(MAX_TOKENS), owned.len()))
        })
    }
}
