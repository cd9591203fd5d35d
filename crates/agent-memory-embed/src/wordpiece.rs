//! WordPiece tokenizers (BERT's, and potion-base-8M's) that start in a fraction of the time
//! `tokenizers` takes. Its own reader buffers the whole `tokenizer.json` through untyped values,
//! then builds a map of 30,000 owned words and the reverse map: 10–15 ms per model, which was
//! most of a CLI search. Here the vocabulary is read straight into one buffer of words and an
//! open-addressed table of their positions ([`Vocab`]), and the greedy longest-match of
//! WordPiece runs over it. Everything else (added tokens, the normalizer, the pre-tokenizer,
//! the post-processor, truncation) is `tokenizers`' own `TokenizerImpl` with `tokenizers`' own
//! parts, read from the same file, so an encoding is the one `Tokenizer::from_file` gives.
//!
//! A file of any other model gives `None`, and the caller reads it the usual way. The model
//! is written as a macro because the static model and candle link two versions of
//! `tokenizers`.
//!
//! The first load also writes a prepared form beside the file ([`PREPARED`]): the vocabulary's
//! buffer and table as they are in memory, and the rest of the file as JSON without the
//! vocabulary. Later loads read it instead of parsing 700 KB of JSON and building the table
//! again, which a CLI search paid for both models (about 3 ms each in a new process). It is a
//! cache: used only while `tokenizer.json` has the size and modification time it was written
//! for and its checksum holds, else ignored and written again; a directory that cannot be
//! written to only means it is not kept.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// One entry of `added_tokens`.
#[derive(serde::Deserialize)]
struct Added {
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default = "yes")]
    normalized: bool,
    #[serde(default)]
    special: bool,
}

fn yes() -> bool {
    true
}

/// The model of a WordPiece tokenizer file.
#[derive(serde::Deserialize)]
struct Model {
    #[serde(rename = "type")]
    kind: String,
    unk_token: String,
    continuing_subword_prefix: String,
    max_input_chars_per_word: usize,
    vocab: Words,
}

/// The words of a vocabulary as the file lists them: one buffer, and each word's place in it
/// with its id.
#[derive(Default)]
struct Words {
    text: String,
    entries: Vec<Entry>,
}

#[derive(Clone, Copy)]
struct Entry {
    start: u32,
    end: u32,
    id: u32,
}

impl<'de> serde::Deserialize<'de> for Words {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Words, D::Error> {
        deserializer.deserialize_map(WordsVisitor)
    }
}

struct WordsVisitor;

impl<'de> Visitor<'de> for WordsVisitor {
    type Value = Words;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a map of words to ids")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Words, A::Error> {
        let hint = map.size_hint().unwrap_or(32_768);
        let mut words = Words { text: String::with_capacity(hint * 8), entries: Vec::new() };
        words.entries.reserve(hint);
        while let Some((start, end)) = map.next_key_seed(Append(&mut words.text))? {
            let id = map.next_value::<u32>()?;
            words.entries.push(Entry { start, end, id });
        }
        Ok(words)
    }
}

/// Reads one word onto the end of the buffer, giving its place: no allocation per word.
struct Append<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for Append<'_> {
    type Value = (u32, u32);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(u32, u32), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Append<'_> {
    type Value = (u32, u32);

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a word")
    }

    fn visit_str<E: serde::de::Error>(self, word: &str) -> Result<(u32, u32), E> {
        let start = self.0.len();
        self.0.push_str(word);
        match (u32::try_from(start), u32::try_from(self.0.len())) {
            (Ok(start), Ok(end)) => Ok((start, end)),
            _ => Err(E::custom("the vocabulary is larger than 4 GiB")),
        }
    }
}

/// A WordPiece vocabulary and its settings: what `tokenizers`' WordPiece model holds, without
/// a map of owned words each way.
pub(crate) struct Vocab {
    words: Words,
    /// Open addressing: each slot is 0 (empty) or 1 + an index into `words.entries`.
    slots: Vec<u32>,
    hasher: ahash::RandomState,
    /// Distinct words: the size `tokenizers` reports.
    distinct: usize,
    unk_token: String,
    prefix: String,
    max_input_chars_per_word: usize,
}

/// One piece of a word: its id, its text (with the continuation prefix when it continues a
/// word) and its byte offsets in the word.
pub(crate) struct Piece {
    id: u32,
    text: String,
    offsets: (usize, usize),
}

/// What a word fails with when the vocabulary lacks its unknown token.
#[derive(Debug, thiserror::Error)]
#[error("the vocabulary has no unknown token {0:?}")]
pub(crate) struct MissingUnk(String);

impl Vocab {
    /// The vocabulary of `words`, with the settings of `model` (whose own words are taken).
    fn new(words: Words, model: &Model) -> Vocab {
        let count = words.entries.len();
        let mut vocab = Vocab {
            // At most half full, so a probe ends after a slot or two.
            slots: vec![0; (count * 2).next_power_of_two().max(16)],
            ..Vocab::with_table(model, words, Vec::new(), 0)
        };
        for index in 0..count {
            let word = vocab.word(index);
            match vocab.find(word) {
                // A word listed twice keeps its last id, as a map read from the file does.
                Ok(slot) => vocab.slots[slot] = index as u32 + 1,
                Err(slot) => {
                    vocab.slots[slot] = index as u32 + 1;
                    vocab.distinct += 1;
                }
            }
        }
        vocab
    }

    fn word(&self, index: usize) -> &str {
        let entry = self.words.entries[index];
        &self.words.text[entry.start as usize..entry.end as usize]
    }

    /// `Ok(slot)` of `word`, or `Err(slot)` of the empty slot it would take.
    fn find(&self, word: &str) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut slot = self.hasher.hash_one(word) as usize & mask;
        loop {
            match self.slots[slot] {
                0 => return Err(slot),
                index if self.word(index as usize - 1) == word => return Ok(slot),
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    pub(crate) fn id(&self, word: &str) -> Option<u32> {
        let slot = self.find(word).ok()?;
        Some(self.words.entries[self.slots[slot] as usize - 1].id)
    }

    fn token(&self, id: u32) -> Option<String> {
        let index = self.words.entries.iter().rposition(|entry| entry.id == id)?;
        // Only the last entry of a word listed twice is the word's.
        (self.id(self.word(index)) == Some(id)).then(|| self.word(index).to_owned())
    }

    fn map(&self) -> std::collections::HashMap<String, u32> {
        (0..self.words.entries.len())
            .filter_map(|index| Some((self.word(index).to_owned(), self.id(self.word(index))?)))
            .collect()
    }

    fn len(&self) -> usize {
        self.distinct
    }

    /// The median byte length of the words (1 for none), which model2vec cuts long texts by.
    pub(crate) fn median_length(&self) -> usize {
        middle(self.words.entries.iter().map(|e| (e.end - e.start) as usize).collect())
    }

    /// The id of the unknown token, when the vocabulary has it.
    pub(crate) fn unk_id(&self) -> Option<u32> {
        self.id(&self.unk_token)
    }

    /// The pieces of one pre-tokenized word, as `tokenizers`' WordPiece cuts it: the longest
    /// known prefix, then the longest known continuation, and so on; the unknown token for a
    /// word that cannot be cut so or is longer than the limit.
    pub(crate) fn pieces(&self, word: &str) -> Result<Vec<Piece>, MissingUnk> {
        let unknown = || {
            let id = self.unk_id().ok_or_else(|| MissingUnk(self.unk_token.clone()))?;
            Ok(vec![Piece { id, text: self.unk_token.clone(), offsets: (0, word.len()) }])
        };
        if word.chars().count() > self.max_input_chars_per_word {
            return unknown();
        }
        let mut pieces = Vec::new();
        let mut candidate = String::with_capacity(self.prefix.len() + word.len());
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                candidate.clear();
                if start > 0 {
                    candidate.push_str(&self.prefix);
                }
                candidate.push_str(&word[start..end]);
                if let Some(id) = self.id(&candidate) {
                    found = Some(id);
                    break;
                }
                end -= candidate.chars().next_back().map_or(1, char::len_utf8);
            }
            let Some(id) = found else { return unknown() };
            pieces.push(Piece { id, text: candidate.clone(), offsets: (start, end) });
            start = end;
        }
        Ok(pieces)
    }
}

/// The prepared form's name, beside `tokenizer.json`.
pub(crate) const PREPARED: &str = "tokenizer.vocab";

/// The first bytes of a prepared form; the last digits are its format's version.
const MAGIC: &[u8; 8] = b"AMWPV001";

/// Magic, then the source's size, seconds and nanoseconds, then the counts (distinct words,
/// rest, entries, slots, text) and the checksum.
const HEADER: usize = 8 + 8 + 8 + 4 + 4 * 5 + 8;

/// What a prepared form was written for: `tokenizer.json`'s size and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    len: u64,
    secs: i64,
    nanos: u32,
}

impl Stamp {
    /// The stamp of the file at `path`; `None` where the system keeps no modification time.
    pub(crate) fn of(path: &std::path::Path) -> std::io::Result<Option<Stamp>> {
        let meta = std::fs::metadata(path)?;
        let Ok(modified) = meta.modified() else { return Ok(None) };
        let (secs, nanos) = match modified.duration_since(std::time::UNIX_EPOCH) {
            Ok(after) => (after.as_secs() as i64, after.subsec_nanos()),
            Err(before) => {
                (-(before.duration().as_secs() as i64), before.duration().subsec_nanos())
            }
        };
        Ok(Some(Stamp { len: meta.len(), secs, nanos }))
    }
}

fn checksum(bytes: &[u8]) -> u64 {
    ahash::RandomState::with_seeds(0xc4ec, 0x5a11, 0x7ab1e, 0xf11e).hash_one(bytes)
}

/// A tokenizer file as a tokenizer is built from it: the model read, and the other parts kept
/// as the file's own text, for each version of `tokenizers` to read with its own types. One
/// pass over the file gives both the tokenizer and its prepared form's rest.
#[derive(serde::Deserialize)]
struct Parts<'a> {
    #[serde(borrow, default)]
    normalizer: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pre_tokenizer: Option<&'a RawValue>,
    #[serde(borrow, default)]
    post_processor: Option<&'a RawValue>,
    #[serde(borrow, default)]
    added_tokens: Option<&'a RawValue>,
    model: Model,
}

impl Parts<'_> {
    /// The file without its vocabulary (an empty one in its place): the prepared form's rest.
    fn rest(&self) -> Option<String> {
        #[derive(serde::Serialize)]
        struct Settings<'a> {
            #[serde(rename = "type")]
            kind: &'a str,
            unk_token: &'a str,
            continuing_subword_prefix: &'a str,
            max_input_chars_per_word: usize,
            vocab: serde_json::Map<String, serde_json::Value>,
        }
        #[derive(serde::Serialize)]
        struct Rest<'a> {
            normalizer: Option<&'a RawValue>,
            pre_tokenizer: Option<&'a RawValue>,
            post_processor: Option<&'a RawValue>,
            added_tokens: Option<&'a RawValue>,
            model: Settings<'a>,
        }
        let model = &self.model;
        serde_json::to_string(&Rest {
            normalizer: self.normalizer,
            pre_tokenizer: self.pre_tokenizer,
            post_processor: self.post_processor,
            added_tokens: self.added_tokens,
            model: Settings {
                kind: &model.kind,
                unk_token: &model.unk_token,
                continuing_subword_prefix: &model.continuing_subword_prefix,
                max_input_chars_per_word: model.max_input_chars_per_word,
                vocab: serde_json::Map::new(),
            },
        })
        .ok()
    }
}

impl Vocab {
    /// The prepared form of this vocabulary, with `rest` and for `stamp`.
    fn prepared(&self, rest: &str, stamp: Stamp) -> Option<Vec<u8>> {
        let count = |n: usize| u32::try_from(n).ok();
        let mut body = Vec::with_capacity(
            rest.len()
                + self.words.entries.len() * 12
                + self.slots.len() * 4
                + self.words.text.len(),
        );
        body.extend_from_slice(rest.as_bytes());
        for e in &self.words.entries {
            for n in [e.start, e.end, e.id] {
                body.extend_from_slice(&n.to_le_bytes());
            }
        }
        for slot in &self.slots {
            body.extend_from_slice(&slot.to_le_bytes());
        }
        body.extend_from_slice(self.words.text.as_bytes());
        let mut out = Vec::with_capacity(HEADER + body.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&stamp.len.to_le_bytes());
        out.extend_from_slice(&stamp.secs.to_le_bytes());
        out.extend_from_slice(&stamp.nanos.to_le_bytes());
        for n in [
            self.distinct,
            rest.len(),
            self.words.entries.len(),
            self.slots.len(),
            self.words.text.len(),
        ] {
            out.extend_from_slice(&count(n)?.to_le_bytes());
        }
        out.extend_from_slice(&checksum(&body).to_le_bytes());
        out.extend_from_slice(&body);
        Some(out)
    }

    /// The rest of the file and a vocabulary from `bytes`, a prepared form, when it was
    /// written for `stamp` and every count, place and the checksum hold; `None` otherwise.
    /// The settings (unknown token, prefix, limit) are the rest's, read by the caller.
    fn from_prepared(bytes: &[u8], stamp: Stamp) -> Option<(String, Words, Vec<u32>, usize)> {
        let header = bytes.get(..HEADER)?;
        let u32_at = |at: usize| -> Option<usize> {
            Some(u32::from_le_bytes(header.get(at..at + 4)?.try_into().ok()?) as usize)
        };
        let u64_at = |at: usize| -> Option<[u8; 8]> { header.get(at..at + 8)?.try_into().ok() };
        if &header[..8] != MAGIC {
            return None;
        }
        let found = Stamp {
            len: u64::from_le_bytes(u64_at(8)?),
            secs: i64::from_le_bytes(u64_at(16)?),
            nanos: u32_at(24)? as u32,
        };
        if found != stamp {
            return None;
        }
        let [distinct, rest_len, count, slots_len, text_len] =
            [28, 32, 36, 40, 44].map(|at| u32_at(at).unwrap_or(usize::MAX));
        let sum = u64::from_le_bytes(u64_at(48)?);
        let body = &bytes[HEADER..];
        let sizes = [rest_len, count.checked_mul(12)?, slots_len.checked_mul(4)?, text_len];
        let total = sizes.iter().try_fold(0usize, |sum, n| sum.checked_add(*n))?;
        if total != body.len() || checksum(body) != sum {
            return None;
        }
        // A table with no empty slot would never end a probe for a missing word.
        if !slots_len.is_power_of_two() || slots_len <= count || distinct > count {
            return None;
        }
        let (rest, body) = body.split_at(rest_len);
        let (entries, body) = body.split_at(count * 12);
        let (slots, text) = body.split_at(slots_len * 4);
        let rest = std::str::from_utf8(rest).ok()?.to_owned();
        let text = std::str::from_utf8(text).ok()?.to_owned();
        let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let entries: Vec<Entry> = entries
            .chunks_exact(12)
            .map(|e| Entry { start: word(&e[0..4]), end: word(&e[4..8]), id: word(&e[8..12]) })
            .collect();
        let fits = |e: &Entry| {
            e.start <= e.end
                && (e.end as usize) <= text.len()
                && text.is_char_boundary(e.start as usize)
                && text.is_char_boundary(e.end as usize)
        };
        if !entries.iter().all(fits) {
            return None;
        }
        let slots: Vec<u32> = slots.chunks_exact(4).map(word).collect();
        if slots.iter().any(|&slot| slot as usize > count) {
            return None;
        }
        Some((rest, Words { text, entries }, slots, distinct))
    }

    /// A vocabulary of `words` found through `slots`, with the settings of `model` (whose own
    /// words are not read).
    fn with_table(model: &Model, words: Words, slots: Vec<u32>, distinct: usize) -> Vocab {
        Vocab {
            words,
            slots,
            hasher: hasher(),
            distinct,
            unk_token: model.unk_token.clone(),
            prefix: model.continuing_subword_prefix.clone(),
            max_input_chars_per_word: model.max_input_chars_per_word,
        }
    }
}

/// The hasher of every vocabulary's table: fixed, so that a prepared table is found again.
fn hasher() -> ahash::RandomState {
    ahash::RandomState::with_seeds(0x5eed, 0xa11ce, 0xb0b, 0xc0de)
}

macro_rules! wordpiece_tokenizer {
    // `$add` hands the added tokens to the tokenizer: the two versions take them differently.
    ($module:ident, $tk:ident, $add:expr) => {
        /// The WordPiece tokenizer over a [`Vocab`](super::Vocab), for one version of
        /// `tokenizers`.
        pub(crate) mod $module {
            use std::collections::HashMap;
            use std::path::{Path, PathBuf};

            use super::Vocab;

            /// `tokenizers`' model trait over the vocabulary.
            pub(crate) struct Model(pub(crate) Vocab);

            /// A vocabulary read from a file is never trained; `tokenizers` asks every model
            /// for a trainer type.
            pub(crate) struct Untrainable;

            pub(crate) type Tokenizer = $tk::TokenizerImpl<
                Model,
                $tk::NormalizerWrapper,
                $tk::PreTokenizerWrapper,
                $tk::PostProcessorWrapper,
                $tk::DecoderWrapper,
            >;

            impl $tk::Model for Model {
                type Trainer = Untrainable;

                fn tokenize(&self, sequence: &str) -> $tk::Result<Vec<$tk::Token>> {
                    Ok(self
                        .0
                        .pieces(sequence)?
                        .into_iter()
                        .map(|piece| $tk::Token::new(piece.id, piece.text, piece.offsets))
                        .collect())
                }

                fn token_to_id(&self, token: &str) -> Option<u32> {
                    self.0.id(token)
                }

                fn id_to_token(&self, id: u32) -> Option<String> {
                    self.0.token(id)
                }

                fn get_vocab(&self) -> HashMap<String, u32> {
                    self.0.map()
                }

                fn get_vocab_size(&self) -> usize {
                    self.0.len()
                }

                fn save(&self, _: &Path, _: Option<&str>) -> $tk::Result<Vec<PathBuf>> {
                    Err("a vocabulary read for tokenizing is not saved".into())
                }

                fn get_trainer(&self) -> Untrainable {
                    Untrainable
                }
            }

            impl $tk::Trainer for Untrainable {
                type Model = Model;

                fn should_show_progress(&self) -> bool {
                    false
                }

                fn train(&self, _: &mut Model) -> $tk::Result<Vec<$tk::AddedToken>> {
                    Err("a vocabulary read for tokenizing is not trained".into())
                }

                fn feed<I, S, F>(&mut self, _: I, _: F) -> $tk::Result<()>
                where
                    I: Iterator<Item = S> + Send,
                    S: AsRef<str> + Send,
                    F: Fn(&str) -> $tk::Result<Vec<String>> + Sync,
                {
                    Err("a vocabulary read for tokenizing is not trained".into())
                }
            }

            /// The tokenizer in `json` when it is a WordPiece one, built as
            /// `Tokenizer::from_file` builds it; `None` otherwise.
            pub(crate) fn read(json: &str) -> Option<Tokenizer> {
                read_parts(json).map(|(tokenizer, _)| tokenizer)
            }

            /// The tokenizer in `json` when it is a WordPiece one, and its prepared form's rest.
            fn read_parts(json: &str) -> Option<(Tokenizer, Option<String>)> {
                let mut parts: super::Parts<'_> = serde_json::from_str(json).ok()?;
                if parts.model.kind != "WordPiece" {
                    return None;
                }
                let rest = parts.rest();
                let words = std::mem::take(&mut parts.model.vocab);
                let vocab = Vocab::new(words, &parts.model);
                Some((build(&parts, vocab)?, rest))
            }

            /// What [`load`] found in a model directory.
            pub(crate) enum Loaded {
                WordPiece(Box<Tokenizer>),
                /// Another model's tokenizer file, read, for `tokenizers` to read.
                Other(String),
            }

            /// The tokenizer of `dir/tokenizer.json`: from its prepared form when that is
            /// current, else read from the file (and the prepared form written for the next
            /// load, when the directory takes it).
            pub(crate) fn load(dir: &Path) -> std::io::Result<Loaded> {
                let path = dir.join("tokenizer.json");
                let stamp = super::Stamp::of(&path)?;
                let prepared = dir.join(super::PREPARED);
                if let Some(stamp) = stamp
                    && let Ok(bytes) = std::fs::read(&prepared)
                    && let Some((rest, words, slots, distinct)) =
                        Vocab::from_prepared(&bytes, stamp)
                    && let Ok(parts) = serde_json::from_str::<super::Parts<'_>>(&rest)
                    && parts.model.kind == "WordPiece"
                {
                    let vocab = Vocab::with_table(&parts.model, words, slots, distinct);
                    if let Some(tokenizer) = build(&parts, vocab) {
                        return Ok(Loaded::WordPiece(Box::new(tokenizer)));
                    }
                }
                let json = std::fs::read_to_string(&path)?;
                let Some((tokenizer, rest)) = read_parts(&json) else {
                    return Ok(Loaded::Other(json));
                };
                if let Some(stamp) = stamp {
                    let bytes = rest.and_then(|rest| tokenizer.get_model().0.prepared(&rest, stamp));
                    let written = match bytes {
                        Some(bytes) => agent_memory_core::fsutil::write_atomic(&prepared, &bytes),
                        None => Err(std::io::Error::other("the vocabulary cannot be prepared")),
                    };
                    if let Err(err) = written {
                        tracing::debug!(path = %prepared.display(), %err, "tokenizer kept unprepared");
                    }
                }
                Ok(Loaded::WordPiece(Box::new(tokenizer)))
            }

            /// The tokenizer of `parts` over `vocab`; `None` when a part does not read as this
            /// version of `tokenizers` reads it.
            fn build(parts: &super::Parts<'_>, vocab: Vocab) -> Option<Tokenizer> {
                fn part<T: serde::de::DeserializeOwned>(
                    raw: Option<&serde_json::value::RawValue>,
                ) -> Option<Option<T>> {
                    match raw {
                        Some(raw) => serde_json::from_str::<Option<T>>(raw.get()).ok(),
                        None => Some(None),
                    }
                }
                let mut tokenizer = Tokenizer::new(Model(vocab));
                // Newer versions return a Result for re-normalizing the added tokens; there
                // are none yet, so there is nothing to fail.
                let _ = tokenizer.with_normalizer(part::<$tk::NormalizerWrapper>(parts.normalizer)?);
                tokenizer.with_pre_tokenizer(part::<$tk::PreTokenizerWrapper>(parts.pre_tokenizer)?);
                tokenizer
                    .with_post_processor(part::<$tk::PostProcessorWrapper>(parts.post_processor)?);
                let added: Vec<$tk::AddedToken> = part::<Vec<super::Added>>(parts.added_tokens)?
                    .unwrap_or_default()
                    .into_iter()
                    .map(|t| {
                        $tk::AddedToken::from(t.content, t.special)
                            .single_word(t.single_word)
                            .lstrip(t.lstrip)
                            .rstrip(t.rstrip)
                            .normalized(t.normalized)
                    })
                    .collect();
                let add: fn(&mut Tokenizer, Vec<$tk::AddedToken>) -> bool = $add;
                add(&mut tokenizer, added).then_some(tokenizer)
            }
        }
    };
}

#[cfg(feature = "bert")]
wordpiece_tokenizer!(bert, tokenizers, |tokenizer, added| tokenizer.add_tokens(added).is_ok());
#[cfg(feature = "static")]
wordpiece_tokenizer!(static_model, model2vec_tokenizers, |tokenizer, added| {
    tokenizer.add_tokens(&added);
    true
});

/// The median byte length of `words` (1 for none), as [`Vocab::median_length`] for a
/// tokenizer read the usual way.
pub(crate) fn median_length<'a>(words: impl Iterator<Item = &'a String>) -> usize {
    middle(words.map(String::len).collect())
}

/// The element a sort would put in the middle of `lengths` (the upper of two), or 1 for none.
fn middle(mut lengths: Vec<usize>) -> usize {
    let half = lengths.len() / 2;
    if lengths.is_empty() {
        return 1;
    }
    *lengths.select_nth_unstable(half).1
}

/// How the quick readers' encodings of `texts` differ from those of `tokenizers`' own readers
/// of `dir/tokenizer.json`, one line per difference (none when they agree); `None` when it is
/// not a WordPiece file. Each text is encoded with and without special tokens, whole and cut
/// at 16 tokens, by three quick tokenizers of each version: read from the JSON, loaded from
/// the directory (which writes the prepared form), and loaded again (which reads it).
pub(crate) fn differences(dir: &std::path::Path, texts: &[&str]) -> Option<Vec<String>> {
    let json = std::fs::read_to_string(dir.join("tokenizer.json")).ok()?;
    let json = json.as_str();
    let mut found = Vec::new();
    macro_rules! compare {
        ($module:ident, $tk:ident, $label:literal) => {{
            let loaded = || match $module::load(dir) {
                Ok($module::Loaded::WordPiece(tokenizer)) => Some(tokenizer),
                _ => None,
            };
            for (mut fast, how) in [
                (Box::new($module::read(json)?), "read"),
                (loaded()?, "loaded"),
                (loaded()?, "loaded again"),
            ] {
            let label = format!("{}, {how}", $label);
            let mut slow: $tk::Tokenizer = json.parse().ok()?;
            for cut in [None, Some(16)] {
                let cut = cut.map(|max_length| $tk::TruncationParams {
                    max_length,
                    ..Default::default()
                });
                if fast.with_truncation(cut.clone()).is_err()
                    || slow.with_truncation(cut.clone()).is_err()
                {
                    found.push(format!("{}: truncation refused", label));
                    continue;
                }
                fast.with_padding(None);
                slow.with_padding(None);
                for text in texts {
                    for special in [false, true] {
                        let (a, b) = (fast.encode(*text, special), slow.encode(*text, special));
                        let same = match (&a, &b) {
                            (Ok(a), Ok(b)) => {
                                a.get_ids() == b.get_ids()
                                    && a.get_tokens() == b.get_tokens()
                                    && a.get_offsets() == b.get_offsets()
                                    && a.get_type_ids() == b.get_type_ids()
                                    && a.get_attention_mask() == b.get_attention_mask()
                                    && a.get_special_tokens_mask() == b.get_special_tokens_mask()
                            }
                            (Err(_), Err(_)) => true,
                            _ => false,
                        };
                        if !same {
                            found.push(format!(
                                "{}, special tokens {special}, cut {:?}: {text:?}: {:?} against {:?}",
                                label,
                                cut.as_ref().map(|c| c.max_length),
                                a.map(|e| e.get_ids().to_vec()),
                                b.map(|e| e.get_ids().to_vec()),
                            ));
                        }
                    }
                }
            }
            let vocab = &fast.get_model().0;
            if vocab.len() != slow.get_vocab_size(false) {
                found.push(format!(
                    "{}: {} words against {}",
                    label,
                    vocab.len(),
                    slow.get_vocab_size(false)
                ));
            }
            if vocab.median_length() != median_length(slow.get_vocab(false).keys()) {
                found.push(format!("{}: another median word length", label));
            }
            }
        }};
    }
    #[cfg(feature = "bert")]
    compare!(bert, tokenizers, "tokenizers 0.23");
    #[cfg(feature = "static")]
    compare!(static_model, model2vec_tokenizers, "tokenizers 0.21");
    Some(found)
}

/// Texts a tokenizer can stumble on: every script and mark the readers treat specially, words
/// past the length limit, added tokens inside text, and a few hundred generated strings drawn
/// from the same characters.
pub(crate) fn awkward_texts() -> Vec<String> {
    let mut texts: Vec<String> = [
        "The payment callback fails signature verification!",
        "Café NAÏVE Résumé façade Ångström ÉCOLE",
        "支付回调签名校验失败 とうきょう 東京 서울 한국어",
        "fn main() { println!(\"{x:?}\"); } // src/lib.rs:42 -> Result<(), E>",
        "\u{0}\u{7f} control\tand\r\nlines \u{fffd} \u{200b}zero\u{200d}width \u{feff}",
        "🦀🦀 🥲 🫠 👩‍👩‍👧 emoji ✓ ∑ ≠ ∞",
        "",
        "   ",
        "paymentpaymentpaymentpaymentpaymentpaymentpaymentpaymentpaymentpaymentpaymentpayment\
         paymentpaymentpaymentpayment",
        "[CLS] [SEP] [MASK][PAD]x[UNK] [cls] [ MASK ]",
        "e\u{301}cole a\u{308} n\u{303} combining marks",
        "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ １２３ ｶﾀｶﾅ",
        "العربية עברית हिन्दी ไทย Ελληνικά Кириллица",
        "snake_case camelCase kebab-case SCREAMING_CASE dot.separated path/to/file.rs",
        "0x1F600 3.14159 1e-10 -42 +7 1,000,000 12:30:45 2026-12-05",
        "don't won't it's O'Reilly \"quoted\" «guillemets» „low“",
        // At the limit of 100 characters a word, and past it.
        "x".repeat(100).as_str(),
        "x".repeat(101).as_str(),
        format!("fail{}", "s".repeat(96)).as_str(),
        format!("fail{}", "s".repeat(97)).as_str(),
        "ab".repeat(60).as_str(),
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let pool: Vec<char> = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?'\"-_/\\()[]{}<>#@$%^&*+=~`|\t\n\r\u{0}\u{7f}\u{85}\u{a0}\u{ad}éÉñüßøåçÀÖ\u{301}\u{308}支付回调東京서울한とアカ🦀🥲👍\u{200b}\u{200d}\u{fe0f}\u{2028}\u{3000}ＡＢ１ـعبر"
        .chars()
        .collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..400 {
        let len = (next() % 40) as usize;
        texts.push((0..len).map(|_| pool[(next() % pool.len() as u64) as usize]).collect());
    }
    texts
}

#[cfg(test)]
mod tests {
    /// A BERT tokenizer file in the shape Hugging Face writes, with a small vocabulary.
    fn bert_json() -> String {
        let words = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "pay", "##ment", "call", "##back",
            "fail", "##s", "sign", "##ature", "cafe", "naive", "支", "付", "!", ",", ".", "(", ")",
            "{", "}", ":", "_", "fn", "main", "##s",
        ];
        let vocab: serde_json::Map<String, serde_json::Value> =
            words.iter().enumerate().map(|(id, w)| ((*w).to_owned(), id.into())).collect();
        let added: Vec<serde_json::Value> = words[..5]
            .iter()
            .enumerate()
            .map(|(id, w)| {
                serde_json::json!({"id": id, "content": w, "single_word": false, "lstrip": false,
                                   "rstrip": false, "normalized": false, "special": true})
            })
            .collect();
        serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null,
            "added_tokens": added,
            "normalizer": {"type": "BertNormalizer", "clean_text": true,
                           "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}},
                           {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                                   "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
            "model": {"type": "WordPiece", "unk_token": "[UNK]",
                      "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                      "vocab": vocab}
        })
        .to_string()
    }

    /// A model directory holding `json` as its `tokenizer.json`.
    fn model_dir(json: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        agent_memory_core::fsutil::write_atomic(
            &dir.path().join("tokenizer.json"),
            json.as_bytes(),
        )
        .expect("write");
        dir
    }

    #[cfg(feature = "bert")]
    fn ids(dir: &std::path::Path, text: &str) -> Vec<u32> {
        match super::bert::load(dir).expect("loads") {
            super::bert::Loaded::WordPiece(t) => {
                t.encode(text, false).expect("encodes").get_ids().to_vec()
            }
            super::bert::Loaded::Other(_) => panic!("not read as WordPiece"),
        }
    }

    #[cfg(feature = "bert")]
    #[test]
    fn a_prepared_form_is_used_only_while_the_file_and_its_checksum_are_unchanged() {
        let json = bert_json();
        let dir = model_dir(&json);
        let prepared = dir.path().join(super::PREPARED);
        let slow: tokenizers::Tokenizer = json.parse().expect("parses");
        let expected = |slow: &tokenizers::Tokenizer, text: &str| {
            slow.encode(text, false).expect("encodes").get_ids().to_vec()
        };
        assert_eq!(ids(dir.path(), "naive payment"), expected(&slow, "naive payment"));
        let written = std::fs::read(&prepared).expect("written on the first load");

        // A form whose ids were changed under a checksum that holds is read as it is: the
        // loader takes its vocabulary from there, not from the JSON.
        let naive = expected(&slow, "naive")[0];
        let rest = u32::from_le_bytes(written[32..36].try_into().expect("4 bytes")) as usize;
        let entries = super::HEADER + rest;
        let at = (entries..written.len())
            .step_by(12)
            .find(|&e| written[e + 8..e + 12] == naive.to_le_bytes())
            .expect("the entry")
            + 8;
        let mut edited = written.clone();
        edited[at..at + 4].copy_from_slice(&(naive + 100).to_le_bytes());
        let sum = super::checksum(&edited[super::HEADER..]).to_le_bytes();
        edited[super::HEADER - 8..super::HEADER].copy_from_slice(&sum);
        agent_memory_core::fsutil::write_atomic(&prepared, &edited).expect("write");
        assert_eq!(ids(dir.path(), "naive"), [naive + 100]);

        // A byte changed without its checksum, a torn form, one of another format: each is
        // read past, and the form written again from the JSON.
        let mut flipped = written.clone();
        flipped[at] ^= 1;
        for broken in [&flipped[..], &written[..written.len() / 2], b"AMWPV999 nothing", b""] {
            agent_memory_core::fsutil::write_atomic(&prepared, broken).expect("write");
            assert_eq!(ids(dir.path(), "naive payment"), expected(&slow, "naive payment"));
            assert_eq!(std::fs::read(&prepared).expect("rewritten"), written);
        }

        // Another tokenizer file (another size and time) makes the form stale.
        let changed = json.replace("\"naive\"", "\"naivety\"");
        assert_ne!(changed, json, "the fixture changed shape");
        let path = dir.path().join("tokenizer.json");
        agent_memory_core::fsutil::write_atomic(&path, changed.as_bytes()).expect("write");
        let slow: tokenizers::Tokenizer = changed.parse().expect("parses");
        assert_eq!(ids(dir.path(), "naivety naive"), expected(&slow, "naivety naive"));
        assert_ne!(std::fs::read(&prepared).expect("rewritten"), written);
    }

    const TEXTS: [&str; 7] = [
        "The payment callback fails signature!",
        "Café NAÏVE paymentsignature",
        "支付 failed [MASK] [SEP]the",
        "fn main() { x: y_z }",
        "\u{0}\u{7f} control\tand\r\nlines 🦀",
        "",
        "paymentpaymentpayment",
    ];

    #[cfg(feature = "bert")]
    #[test]
    fn the_bert_reader_tokenizes_as_the_crates_own_reader_does() {
        let json = bert_json();
        let fast = super::bert::read(&json).expect("a WordPiece file");
        let slow: tokenizers::Tokenizer = json.parse().expect("parses");
        for text in TEXTS {
            for special in [false, true] {
                let (a, b) = (
                    fast.encode(text, special).expect("encodes"),
                    slow.encode(text, special).expect("encodes"),
                );
                assert_eq!(a.get_ids(), b.get_ids(), "{text:?}");
                assert_eq!(a.get_attention_mask(), b.get_attention_mask(), "{text:?}");
            }
        }
    }

    #[cfg(feature = "static")]
    #[test]
    fn the_static_reader_tokenizes_as_the_crates_own_reader_does() {
        let json = bert_json();
        let fast = super::static_model::read(&json).expect("a WordPiece file");
        let slow: model2vec_tokenizers::Tokenizer = json.parse().expect("parses");
        assert_eq!(
            fast.get_model().0.median_length(),
            super::median_length(slow.get_vocab(false).keys())
        );
        for text in TEXTS {
            let (a, b) = (
                fast.encode(text, false).expect("encodes"),
                slow.encode(text, false).expect("encodes"),
            );
            assert_eq!(a.get_ids(), b.get_ids(), "{text:?}");
        }
    }

    #[test]
    fn both_readers_agree_with_the_crates_own_on_awkward_text() {
        let texts = super::awkward_texts();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let dir = model_dir(&bert_json());
        let found = super::differences(dir.path(), &texts).expect("a WordPiece file");
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn a_word_listed_twice_keeps_its_last_id_and_a_missing_unknown_token_fails_alike() {
        // "fail" twice; no "[UNK]", so a word that cannot be cut fails to tokenize.
        let json = bert_json()
            .replace("\"[UNK]\":1,", "")
            .replace("\"fail\":10,", "\"fail\":10,\"fail\":12,");
        assert!(json.contains("\"fail\":12"), "the fixture changed shape");
        let dir = model_dir(&json);
        let found =
            super::differences(dir.path(), &["fail", "fails zzz", "pay"]).expect("WordPiece");
        assert!(found.is_empty(), "{found:#?}");
        #[cfg(feature = "bert")]
        {
            let fast = super::bert::read(&json).expect("a WordPiece file");
            assert_eq!(fast.token_to_id("fail"), Some(12));
            assert!(fast.encode("zzz", false).is_err());
        }
    }

    #[test]
    fn another_model_is_left_to_the_crates_own_reader() {
        let json = bert_json().replace(
            "\"type\":\"WordPiece\",\"unk_token\"",
            "\"type\":\"WordLevel\",\"unk_token\"",
        );
        assert!(json.contains("WordLevel"));
        #[cfg(feature = "bert")]
        assert!(super::bert::read(&json).is_none());
        #[cfg(feature = "static")]
        assert!(super::static_model::read(&json).is_none());
        #[cfg(feature = "bert")]
        assert!(super::bert::read("not json").is_none());
        assert!(super::differences(model_dir(&json).path(), &["x"]).is_none());
    }
}
