//! A learned sparse encoder (SPLADE, such as splade-tiny): the BERT encoder of `crate::bert`,
//! then its masked-word head, whose score for every word of the vocabulary at every token is
//! turned into `log(1 + relu(score))` and max-pooled over the text's tokens. What is left is a
//! weight for each word the text holds or means, most of them zero.
//!
//! The head's output layer is the word table itself (tied weights), so the model file holds
//! only its transform and bias beside the encoder. Scoring the whole vocabulary is the costly
//! part (tokens × hidden × 30,522), so it runs one text at a time: a batch of texts in one
//! matmul holds tens of megabytes of scores and was measured slower, not faster, once its
//! scores outgrew the cache.
//!
//! Must not: read anything outside the model directory, or fail on long input (texts are
//! truncated to the model's maximum sequence length).

use std::path::Path;

use agent_memory_core::embed::{
    EmbedError, QueryWeights, SPARSE_TERMS, SparseEncoder, SparseVector,
};
use candle_core::{D, Module, Tensor};
use candle_nn::{LayerNorm, Linear};

use crate::bert::{Encoder, WordTable, layer_norm, linear};

/// A loaded SPLADE model.
pub(crate) struct SpladeEncoder {
    name: String,
    encoder: Encoder,
    /// The head's transform: dense, activation, layer norm.
    transform: Linear,
    transform_norm: LayerNorm,
    /// The word table (vocabulary × hidden): the head's output weights, by word.
    words: WordTable,
    /// The head's output bias, one per word.
    bias: Tensor,
}

impl SpladeEncoder {
    /// Loads a BERT with its masked-word head (`cls.predictions.*`) from `dir`.
    pub(crate) fn load(dir: &Path, name: &str) -> Result<SpladeEncoder, EmbedError> {
        let bad = |reason: String| EmbedError::BadModel { dir: dir.to_owned(), reason };
        let (encoder, root) = Encoder::load(dir)?;
        let config = &encoder.config;
        let head = root.pp("cls.predictions");
        if !head.contains_tensor("bias") {
            return Err(bad("model.safetensors has no masked-word head (cls.predictions)".into()));
        }
        let read = || -> candle_core::Result<_> {
            let transform =
                linear(&head.pp("transform.dense"), config.hidden_size, config.hidden_size)?;
            let transform_norm = layer_norm(&head.pp("transform.LayerNorm"), config)?;
            let bias = head.get(config.vocab_size, "bias")?;
            Ok((transform, transform_norm, bias))
        };
        let (transform, transform_norm, bias) =
            read().map_err(|err| bad(format!("model.safetensors: {err}")))?;
        let words = encoder
            .plain_words()
            .ok_or_else(|| bad("a sparse model needs a plain word table".into()))?;
        Ok(SpladeEncoder { name: name.to_owned(), encoder, transform, transform_norm, words, bias })
    }

    /// The vocabulary's size: every word id is below it.
    pub(crate) fn vocabulary(&self) -> usize {
        self.encoder.config.vocab_size
    }

    /// The sparse vector of each non-blank text, with at most `keep` words, ids ascending.
    fn encode_texts(&self, texts: &[&str], keep: usize) -> Result<Vec<SparseVector>, EmbedError> {
        self.encoder.each_batch(texts, |x, mask| {
            let rows = x.dim(0)?;
            let mut out = Vec::with_capacity(rows);
            for row in 0..rows {
                // Only the attended tokens: padding would add scores of its own.
                let attended = mask.get(row)?.sum_all()?.to_scalar::<f32>()?.round() as usize;
                let tokens = x.get(row)?.narrow(0, 0, attended.max(1))?;
                out.push(self.weights(&tokens, keep)?);
            }
            Ok(out)
        })
    }

    /// The head's transform of one text's hidden states (tokens × hidden): what is scored
    /// against each word.
    fn transformed(&self, tokens: &Tensor) -> candle_core::Result<Tensor> {
        let t = self.encoder.config.hidden_act.apply(&self.transform.forward(tokens)?)?;
        self.transform_norm.forward(&t)
    }

    /// The word weights of one text's hidden states (tokens × hidden).
    fn weights(&self, tokens: &Tensor, keep: usize) -> candle_core::Result<SparseVector> {
        let words = self.words.whole(&self.encoder.device)?;
        let best = pooled(&words, &self.bias, &self.transformed(tokens)?)?;
        let mut words: SparseVector = best
            .into_iter()
            .enumerate()
            .filter(|(_, w)| *w > 0.0 && w.is_finite())
            .map(|(id, w)| (id as u32, w))
            .collect();
        if words.len() > keep {
            words.select_nth_unstable_by(keep, |a, b| b.1.total_cmp(&a.1));
            words.truncate(keep);
        }
        words.sort_by_key(|(id, _)| *id);
        Ok(words)
    }

    fn encode_nonblank(
        &self,
        texts: &[&str],
        keep: usize,
    ) -> Result<Vec<SparseVector>, EmbedError> {
        let (positions, nonblank): (Vec<usize>, Vec<&str>) =
            texts.iter().enumerate().filter(|(_, text)| !text.trim().is_empty()).unzip();
        let mut out = vec![SparseVector::new(); texts.len()];
        if nonblank.is_empty() {
            return Ok(out);
        }
        for (position, vector) in positions.into_iter().zip(self.encode_texts(&nonblank, keep)?) {
            out[position] = vector;
        }
        Ok(out)
    }
}

impl SparseEncoder for SpladeEncoder {
    fn model(&self) -> &str {
        &self.name
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError> {
        self.encode_nonblank(texts, SPARSE_TERMS)
    }

    fn encode_queries(&self, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError> {
        self.encode_nonblank(texts, usize::MAX)
    }

    fn read_query(&self, text: &str) -> Result<Box<dyn QueryWeights>, EmbedError> {
        if text.trim().is_empty() {
            return Ok(Box::new(SparseVector::new()));
        }
        let mut read = self.encoder.each_batch(&[text], |x, _| {
            // One text: no padding to leave out.
            Ok(vec![Some(self.transformed(&x.get(0)?)?)])
        })?;
        let tokens = read.pop().flatten().ok_or_else(|| {
            EmbedError::Failed("the encoder returned nothing for the query".into())
        })?;
        Ok(Box::new(ReadQuery {
            tokens,
            words: self.words.clone(),
            bias: self.bias.clone(),
            vocabulary: self.vocabulary(),
            hidden: self.encoder.config.hidden_size,
        }))
    }
}

/// A query's transformed tokens, scored against the words asked for only: their rows of the
/// word table, read from the model file unless the whole table is in memory.
struct ReadQuery {
    /// Tokens × hidden.
    tokens: Tensor,
    words: WordTable,
    bias: Tensor,
    vocabulary: usize,
    hidden: usize,
}

impl ReadQuery {
    fn score(&self, words: &[u32]) -> candle_core::Result<Vec<f32>> {
        let device = self.tokens.device();
        let rows = self.words.rows(words, self.hidden, device)?;
        pooled(&rows, &self.bias.index_select(&Tensor::new(words, device)?, 0)?, &self.tokens)
    }
}

/// The weight of each of `words` (words × hidden, `bias` one per word) for a text's transformed
/// `tokens` (tokens × hidden): `log(1 + relu(score))`, max-pooled over the tokens.
fn pooled(words: &Tensor, bias: &Tensor, tokens: &Tensor) -> candle_core::Result<Vec<f32>> {
    // Scores laid out words × tokens, so the max over tokens runs along contiguous rows; and
    // taken before the bias, which is the same at every token, and before log(1 + relu), which
    // rises with the score. Together about a quarter faster than scoring tokens × words, with no
    // transposed copy of the word table.
    let best = (words.matmul(&tokens.t()?)?.max(D::Minus1)? + bias)?.relu()?;
    (best + 1.0)?.log()?.to_vec1::<f32>()
}

impl QueryWeights for ReadQuery {
    fn weights(&self, words: &[u32]) -> Result<Vec<f32>, EmbedError> {
        let vocabulary = self.vocabulary;
        if words.is_empty() {
            return Ok(Vec::new());
        }
        if let Some(&id) = words.iter().find(|&&id| id as usize >= vocabulary) {
            return Err(EmbedError::Failed(format!(
                "word {id} is past the vocabulary of {vocabulary}; run `agent-memory reindex --all`"
            )));
        }
        self.score(words)
            .map_err(|err| EmbedError::Failed(format!("scoring the query failed: {err}")))
    }
}
