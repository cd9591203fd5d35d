//! Reading a WordPiece `tokenizer.json` (BERT's, and potion-base-8M's) in a fraction of the
//! time `tokenizers` takes: its own reader buffers the whole file through untyped values to
//! find out which model it holds, and took 15–20 ms of a CLI search for 30,000 words. Here the
//! vocabulary is read straight into the model's map, and only the small parts (normalizer,
//! pre-tokenizer, post-processor) go through `tokenizers`' own readers, so the tokenizer is
//! the one `Tokenizer::from_file` builds.
//!
//! A file of any other model gives `None`, and the caller reads it the usual way. Written as a
//! macro because the static model and candle link two versions of `tokenizers`.

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
    #[serde(deserialize_with = "vocab")]
    vocab: ahash::AHashMap<String, u32>,
}

/// Reads the vocabulary into a map sized for a BERT vocabulary from the start: grown from
/// empty, it was rehashed a dozen times on the way to 30,000 words.
fn vocab<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<ahash::AHashMap<String, u32>, D::Error> {
    struct Words;
    impl<'de> serde::de::Visitor<'de> for Words {
        type Value = ahash::AHashMap<String, u32>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a map of words to ids")
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(
            self,
            mut map: A,
        ) -> Result<Self::Value, A::Error> {
            let mut words = ahash::AHashMap::with_capacity(map.size_hint().unwrap_or(32_768));
            while let Some((word, id)) = map.next_entry::<String, u32>()? {
                words.insert(word, id);
            }
            Ok(words)
        }
    }
    deserializer.deserialize_map(Words)
}

/// The median byte length of `words` (1 for none), which model2vec cuts long texts by.
pub(crate) fn median_length<'a>(words: impl Iterator<Item = &'a String>) -> usize {
    let mut lengths: Vec<usize> = words.map(String::len).collect();
    lengths.sort_unstable();
    lengths.get(lengths.len() / 2).copied().unwrap_or(1)
}

macro_rules! wordpiece_reader {
    // `$add` hands the added tokens to the tokenizer: the two versions take them differently.
    ($name:ident, $tk:ident, $add:expr) => {
        /// The tokenizer in `json` when it is a WordPiece one, built as `Tokenizer::from_file`
        /// builds it, with the median byte length of its vocabulary's words; `None` otherwise.
        pub(crate) fn $name(json: &str) -> Option<($tk::Tokenizer, usize)> {
            #[derive(serde::Deserialize)]
            struct File {
                normalizer: Option<$tk::normalizers::NormalizerWrapper>,
                pre_tokenizer: Option<$tk::pre_tokenizers::PreTokenizerWrapper>,
                post_processor: Option<$tk::processors::PostProcessorWrapper>,
                #[serde(default)]
                added_tokens: Vec<Added>,
                model: Model,
            }
            let file: File = serde_json::from_str(json).ok()?;
            if file.model.kind != "WordPiece" {
                return None;
            }
            let median = median_length(file.model.vocab.keys());
            let model = $tk::models::wordpiece::WordPiece::builder()
                .vocab(file.model.vocab)
                .unk_token(file.model.unk_token)
                .continuing_subword_prefix(file.model.continuing_subword_prefix)
                .max_input_chars_per_word(file.model.max_input_chars_per_word)
                .build()
                .ok()?;
            let mut tokenizer = $tk::Tokenizer::new(model);
            // Newer versions return a Result for re-normalizing the added tokens; there are
            // none yet, so there is nothing to fail.
            let _ = tokenizer.with_normalizer(file.normalizer);
            tokenizer.with_pre_tokenizer(file.pre_tokenizer);
            tokenizer.with_post_processor(file.post_processor);
            let added: Vec<$tk::AddedToken> = file
                .added_tokens
                .into_iter()
                .map(|t| {
                    $tk::AddedToken::from(t.content, t.special)
                        .single_word(t.single_word)
                        .lstrip(t.lstrip)
                        .rstrip(t.rstrip)
                        .normalized(t.normalized)
                })
                .collect();
            let add: fn(&mut $tk::Tokenizer, Vec<$tk::AddedToken>) -> bool = $add;
            add(&mut tokenizer, added).then_some((tokenizer, median))
        }
    };
}

#[cfg(feature = "bert")]
wordpiece_reader!(for_bert, tokenizers, |tokenizer, added| tokenizer.add_tokens(added).is_ok());
#[cfg(feature = "static")]
wordpiece_reader!(for_static, model2vec_tokenizers, |tokenizer, added| {
    tokenizer.add_tokens(&added);
    true
});

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
        let (fast, _) = super::for_bert(&json).expect("a WordPiece file");
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
        let (fast, median) = super::for_static(&json).expect("a WordPiece file");
        let slow: model2vec_tokenizers::Tokenizer = json.parse().expect("parses");
        assert_eq!(median, super::median_length(slow.get_vocab(false).keys()));
        for text in TEXTS {
            let (a, b) = (
                fast.encode(text, false).expect("encodes"),
                slow.encode(text, false).expect("encodes"),
            );
            assert_eq!(a.get_ids(), b.get_ids(), "{text:?}");
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
        assert!(super::for_bert(&json).is_none());
        #[cfg(feature = "static")]
        assert!(super::for_static(&json).is_none());
        #[cfg(feature = "bert")]
        assert!(super::for_bert("not json").is_none());
    }
}
