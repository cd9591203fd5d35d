//! Static model2vec embeddings: each token looks up one row of a table, the rows are averaged
//! and normalised. Thousands of texts a second on one core, at some cost in quality against a
//! sentence encoder.
//!
//! Stored texts go through `model2vec-rs`, which holds the whole table in memory. A search
//! embeds one short query, so it reads only the rows its tokens name, by position in the
//! file ([`QueryRows`]): loading potion-base-8M's 30 MB table cost a CLI search about 40 ms
//! for a query of ten tokens. Both pool the same rows of the same token ids.
//!
//! Must not: reach a model hub. `model2vec-rs` is built without its download feature, and is
//! only ever given the model directory.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use agent_memory_core::embed::{EmbedError, Embedder};
use model2vec_rs::model::StaticModel;
use model2vec_tokenizers::Tokenizer;
use model2vec_tokenizers::models::ModelWrapper;
use safetensors::Dtype;
use safetensors::tensor::Metadata;

use crate::tensor_file::TensorFile;
use crate::wordpiece::static_model::Loaded;

/// Tokens per text that count; model2vec's own default.
const MAX_TOKENS: usize = 512;

/// The names model2vec gives the table, in the order it looks for them.
const TABLE_NAMES: [&str; 3] = ["embeddings", "0", "embedding.weight"];

/// A model2vec model; what each kind of text needs is read when first needed.
pub(crate) struct StaticEmbedder {
    name: String,
    dir: PathBuf,
    dim: usize,
    /// `model.safetensors`, open, its header read.
    source: Arc<TensorFile>,
    /// The whole model, for stored texts.
    model: OnceLock<Result<StaticModel, String>>,
    /// The tokenizer and the table's place in the file, for queries; `None` when the file
    /// holds more than a plain table (token weights, a token mapping), which only the whole
    /// model applies.
    rows: OnceLock<Option<QueryRows>>,
}

impl StaticEmbedder {
    /// Reads the header of `model.safetensors` in `dir`; the weights wait for a text.
    pub(crate) fn load(dir: &Path, name: &str) -> Result<StaticEmbedder, EmbedError> {
        let bad = |reason: String| EmbedError::BadModel { dir: dir.to_owned(), reason };
        let source = TensorFile::open(&dir.join("model.safetensors"))
            .map_err(|err| bad(format!("model.safetensors: {err}")))?;
        let (_, info) = table(&source.metadata)
            .ok_or_else(|| bad("model.safetensors holds no embedding table".into()))?;
        let [_, dim] = info.shape[..] else {
            return Err(bad(format!("the embedding table has shape {:?}", info.shape)));
        };
        if dim == 0 {
            return Err(bad("the embedding table has no columns".into()));
        }
        Ok(StaticEmbedder {
            name: name.to_owned(),
            dir: dir.to_owned(),
            dim,
            source: Arc::new(source),
            model: OnceLock::new(),
            rows: OnceLock::new(),
        })
    }

    fn model(&self) -> Result<&StaticModel, EmbedError> {
        let loaded = self.model.get_or_init(|| {
            // `normalize: Some(true)` whatever config.json says: the trait promises unit
            // vectors.
            StaticModel::from_pretrained(&self.dir, None, Some(true), None)
                .map_err(|err| format!("{err:#}"))
        });
        loaded.as_ref().map_err(|reason| EmbedError::BadModel {
            dir: self.dir.clone(),
            reason: reason.clone(),
        })
    }

    fn rows(&self) -> Option<&QueryRows> {
        self.rows
            .get_or_init(|| match QueryRows::open(&self.dir, &self.source, self.dim) {
                Ok(rows) => rows,
                Err(reason) => {
                    tracing::debug!(dir = %self.dir.display(), %reason, "queries use the whole model");
                    None
                }
            })
            .as_ref()
    }
}

impl Embedder for StaticEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn dimensions(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let model = self.model()?;
        crate::embed_nonblank(texts, self.dim, |texts| {
            let owned: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
            Ok(model.encode_with_args(&owned, Some(MAX_TOKENS), owned.len()))
        })
    }

    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let Some(rows) = self.rows() else { return self.embed(texts) };
        crate::embed_nonblank(texts, self.dim, |texts| {
            texts.iter().map(|text| rows.embed(text)).collect::<Result<_, _>>().map_err(|err| {
                EmbedError::Failed(format!(
                    "reading {}/model.safetensors failed: {err}",
                    self.dir.display()
                ))
            })
        })
    }
}

/// What embedding a query needs: the tokenizer, and where each row of the table is.
struct QueryRows {
    tokenizer: QueryTokens,
    /// Texts are cut to `MAX_TOKENS` of these many characters before tokenizing, as
    /// model2vec does.
    median_token_length: usize,
    unk: Option<u32>,
    source: Arc<TensorFile>,
    /// Where the table's first row starts in the file.
    start: u64,
    rows: usize,
    dim: usize,
    dtype: Dtype,
}

/// A query's tokenizer: a WordPiece file through the quick reader of `crate::wordpiece`, any
/// other through `tokenizers`' own.
enum QueryTokens {
    WordPiece(Box<crate::wordpiece::static_model::Tokenizer>),
    Other(Box<Tokenizer>),
}

impl QueryRows {
    /// `Ok(None)` for a file with more than a plain f32 or f16 table.
    fn open(dir: &Path, source: &Arc<TensorFile>, dim: usize) -> Result<Option<QueryRows>, String> {
        let Some((name, info)) = table(&source.metadata) else { return Ok(None) };
        if source.metadata.tensors().len() != 1 || !matches!(info.dtype, Dtype::F32 | Dtype::F16) {
            return Ok(None);
        }
        let [rows, cols] = info.shape[..] else { return Ok(None) };
        let (start, size) = source.extent(name, info)?;
        let expected = rows.checked_mul(cols).and_then(|n| n.checked_mul(info.dtype.bitsize() / 8));
        if cols != dim || expected != Some(size) {
            return Err(format!("the table's {rows}×{cols} does not fit the file"));
        }
        let loaded = crate::wordpiece::static_model::load(dir)
            .map_err(|err| format!("tokenizer.json: {err}"))?;
        let (tokenizer, median_token_length, unk) = match loaded {
            Loaded::WordPiece(mut tokenizer) => {
                tokenizer.with_truncation(None).map_err(|err| format!("tokenizer.json: {err}"))?;
                tokenizer.with_padding(None);
                let vocab = &tokenizer.get_model().0;
                let (median, unk) = (vocab.median_length(), vocab.unk_id());
                (QueryTokens::WordPiece(tokenizer), median, unk)
            }
            Loaded::Other(json) => {
                let mut tokenizer =
                    json.parse::<Tokenizer>().map_err(|err| format!("tokenizer.json: {err}"))?;
                tokenizer.with_truncation(None).map_err(|err| format!("tokenizer.json: {err}"))?;
                tokenizer.with_padding(None);
                let median = crate::wordpiece::median_length(tokenizer.get_vocab(false).keys());
                let unk = match tokenizer.get_model() {
                    ModelWrapper::WordPiece(model) => tokenizer.token_to_id(&model.unk_token),
                    ModelWrapper::WordLevel(model) => tokenizer.token_to_id(&model.unk_token),
                    ModelWrapper::BPE(model) => {
                        model.unk_token.as_deref().and_then(|unk| tokenizer.token_to_id(unk))
                    }
                    // Unigram keeps its unknown token private; only the whole model knows it.
                    ModelWrapper::Unigram(_) => return Ok(None),
                };
                (QueryTokens::Other(Box::new(tokenizer)), median, unk)
            }
        };
        Ok(Some(QueryRows {
            tokenizer,
            median_token_length,
            unk,
            source: Arc::clone(source),
            start,
            rows,
            dim,
            dtype: info.dtype,
        }))
    }

    /// The unit vector of `text`: the mean of its tokens' rows, as model2vec pools them.
    fn embed(&self, text: &str) -> Result<Vec<f32>, String> {
        let cut = text
            .char_indices()
            .nth(MAX_TOKENS.saturating_mul(self.median_token_length))
            .map_or(text, |(at, _)| &text[..at]);
        let encoding = match &self.tokenizer {
            QueryTokens::WordPiece(t) => t.encode_fast(cut, false),
            QueryTokens::Other(t) => t.encode_fast(cut, false),
        }
        .map_err(|err| err.to_string())?;
        let ids = encoding.get_ids();
        let width = self.dim * self.dtype.bitsize() / 8;
        let mut row = vec![0u8; width];
        let mut sum = vec![0.0f32; self.dim];
        let mut count = 0usize;
        for &id in ids.iter().take(MAX_TOKENS) {
            if Some(id) == self.unk || id as usize >= self.rows {
                continue;
            }
            self.source
                .read_at(&mut row, self.start + id as u64 * width as u64)
                .map_err(|err| err.to_string())?;
            match self.dtype {
                Dtype::F16 => {
                    for (s, b) in sum.iter_mut().zip(row.chunks_exact(2)) {
                        *s += half::f16::from_le_bytes([b[0], b[1]]).to_f32();
                    }
                }
                _ => {
                    for (s, b) in sum.iter_mut().zip(row.chunks_exact(4)) {
                        *s += f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    }
                }
            }
            count += 1;
        }
        let denom = count.max(1) as f32;
        sum.iter_mut().for_each(|x| *x /= denom);
        let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
        sum.iter_mut().for_each(|x| *x /= norm);
        Ok(sum)
    }
}

/// The embedding table among the file's tensors, under the first name model2vec looks for.
fn table(metadata: &Metadata) -> Option<(&'static str, &safetensors::tensor::TensorInfo)> {
    TABLE_NAMES.iter().find_map(|&name| metadata.info(name).map(|info| (name, info)))
}
