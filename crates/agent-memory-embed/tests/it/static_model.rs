//! The static model: the tiny model2vec model the testing module writes, installed and loaded
//! like any other.

use agent_memory_embed::testing::{TINY_DIMENSIONS, write_tiny_static_model, zip_dir};
use agent_memory_embed::{Embedder, ModelKind, install, load};

use crate::{cosine, norm};

/// Installs the tiny model from a directory into a fresh models directory and loads it.
fn tiny() -> (tempfile::TempDir, Box<dyn Embedder>) {
    let scratch = tempfile::tempdir().expect("tempdir");
    let source = scratch.path().join("source");
    write_tiny_static_model(&source).expect("tiny model");
    let models = scratch.path().join("models");
    let manifest = install(&models, "tiny", Some(&source)).expect("installs");
    assert_eq!(manifest.kind, ModelKind::Static);
    assert_eq!(manifest.dimensions, TINY_DIMENSIONS);
    let embedder = load(&models.join("tiny")).expect("loads");
    (scratch, embedder)
}

#[test]
fn similar_words_are_closer_than_unrelated_ones() {
    let (_scratch, model) = tiny();
    assert_eq!(model.model(), "tiny");
    assert_eq!(model.dimensions(), TINY_DIMENSIONS);
    let v = model
        .embed(&[
            "the payment callback fails signature verification",
            "webhook signature check is broken for payments",
            "how to bake sourdough bread",
        ])
        .expect("embeds");
    for vector in &v {
        assert!((norm(vector) - 1.0).abs() < 1e-4, "unit length: {vector:?}");
    }
    let related = cosine(&v[0], &v[1]);
    let unrelated = cosine(&v[0], &v[2]);
    assert!(related > 0.9, "paraphrases score {related}");
    assert!(unrelated < 0.3, "unrelated texts score {unrelated}");
}

#[test]
fn blank_and_unknown_texts_get_zero_vectors() {
    let (_scratch, model) = tiny();
    let v = model.embed(&["", "   ", "zyzzyva quux", "git rebase"]).expect("embeds");
    assert_eq!(v[0], vec![0.0; TINY_DIMENSIONS]);
    assert_eq!(v[1], vec![0.0; TINY_DIMENSIONS]);
    assert_eq!(v[2], vec![0.0; TINY_DIMENSIONS], "no known word, nothing to average");
    assert!((norm(&v[3]) - 1.0).abs() < 1e-4);
}

#[test]
fn a_batch_gives_what_single_texts_give() {
    let (_scratch, model) = tiny();
    let texts = ["sqlite query index", "merge the branch", "", "flour and oven"];
    let batch = model.embed(&texts).expect("batch");
    for (text, vector) in texts.iter().zip(&batch) {
        let single = model.embed(&[text]).expect("single");
        assert_eq!(&single[0], vector, "{text:?}");
    }
    assert!(model.embed(&[]).expect("no texts").is_empty());
}

#[test]
fn installs_from_a_zip_whose_files_sit_in_a_subdirectory() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let source = scratch.path().join("source");
    write_tiny_static_model(&source).expect("tiny model");
    let archive = scratch.path().join("tiny-model.zip");
    zip_dir(&source, "tiny_model/data/", &archive).expect("zip");
    let models = scratch.path().join("models");
    let manifest = install(&models, "tiny-zip", Some(&archive)).expect("installs");
    assert_eq!(manifest.kind, ModelKind::Static);
    assert_eq!(manifest.source, archive.display().to_string());
    let model = load(&models.join("tiny-zip")).expect("loads");
    let v = model.embed(&["database schema migration"]).expect("embeds");
    assert!((norm(&v[0]) - 1.0).abs() < 1e-4);
}

/// Asserts that `model` embeds each text as a query (the rows its tokens name, read from the
/// file) to the vector it embeds it to as a stored text (the whole table in memory).
pub(crate) fn assert_queries_match_stored_texts(model: &dyn Embedder, texts: &[&str]) {
    let stored = model.embed(texts).expect("embeds");
    let queries = model.embed_queries(texts).expect("embeds queries");
    for ((text, s), q) in texts.iter().zip(&stored).zip(&queries) {
        let gap = s.iter().zip(q).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
        assert!(gap < 1e-5, "{text:?}: a query differs by {gap} from the stored text");
    }
}

#[test]
fn a_query_reads_only_its_rows_and_gets_the_stored_texts_vector() {
    let (_scratch, model) = tiny();
    let long = "payment signature webhook ".repeat(400);
    assert_queries_match_stored_texts(
        model.as_ref(),
        &["the payment callback fails signature verification", "PAYMENT", "zzz qqq", "", &long],
    );
}

#[test]
fn a_half_precision_table_is_read_row_by_row_as_well() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let source = scratch.path().join("source");
    write_tiny_static_model(&source).expect("tiny model");
    // The same table as f16.
    let bytes = std::fs::read(source.join("model.safetensors")).expect("read");
    let tensors = safetensors::SafeTensors::deserialize(&bytes).expect("parse");
    let table = tensors.tensor("embeddings").expect("table");
    let halves: Vec<u8> = table
        .data()
        .chunks_exact(4)
        .flat_map(|b| {
            half::f16::from_f32(f32::from_le_bytes([b[0], b[1], b[2], b[3]])).to_le_bytes()
        })
        .collect();
    let view = safetensors::tensor::TensorView::new(
        safetensors::Dtype::F16,
        table.shape().to_vec(),
        &halves,
    )
    .expect("view");
    let out = safetensors::serialize([("embeddings", view)], None).expect("serialize");
    agent_memory_core::fsutil::write_atomic(&source.join("model.safetensors"), &out)
        .expect("write");
    let models = scratch.path().join("models");
    install(&models, "tiny16", Some(&source)).expect("installs");
    let model = load(&models.join("tiny16")).expect("loads");
    assert_queries_match_stored_texts(
        model.as_ref(),
        &["webhook signature check is broken for payments", "how to bake sourdough bread"],
    );
}
