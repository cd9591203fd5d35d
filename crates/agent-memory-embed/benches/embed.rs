//! Embedding throughput: all-MiniLM-L6-v2 at batch sizes 1, 16 and 32, and a static model.
//!
//! `cargo bench -p agent-memory-embed --bench embed`. MiniLM comes from the wheel the tests use
//! (`AGENT_MEMORY_TEST_MINILM_WHEEL`, or `scripts/fetch-test-models`' cache). The static model is
//! shaped like potion-base-8M (MiniLM's 30,522-token WordPiece vocabulary, 256 dimensions) with
//! random vectors: its speed, not its quality, is what is measured. Without the wheel, only the
//! tiny test model runs.

#![allow(clippy::print_stdout)]

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use agent_memory_embed::testing::{minilm_wheel, write_tiny_static_model};
use agent_memory_embed::{Embedder, install, load};

/// Texts shaped like observations: a title and a sentence or two, 15 to 60 words.
fn texts(count: usize) -> Vec<String> {
    const WORDS: &str = "the payment webhook fails signature check after refactor of sqlite \
        migration index cargo build linker error release profile fixed by pinning version test \
        flaky on ci because timeout hook agent memory store query returns empty results when \
        filter project path contains spaces decision use bm25 vectors";
    let words: Vec<&str> = WORDS.split_whitespace().collect();
    let mut state = 0x2545_f491_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|_| {
            let len = 15 + (next() % 46) as usize;
            (0..len)
                .map(|_| words[(next() % words.len() as u64) as usize])
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Embeds `texts` in calls of `batch` texts, at least once and for at least `min_time`;
/// returns texts per second.
fn throughput(model: &dyn Embedder, texts: &[String], batch: usize, min_time: Duration) -> f64 {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let start = Instant::now();
    let mut done = 0usize;
    loop {
        for chunk in refs.chunks(batch) {
            let vectors = model.embed(chunk).expect("embeds");
            assert_eq!(vectors.len(), chunk.len());
            done += chunk.len();
        }
        if start.elapsed() >= min_time {
            break;
        }
    }
    done as f64 / start.elapsed().as_secs_f64()
}

/// Writes a potion-base-8M-shaped model2vec model into `dir`: the WordPiece tokenizer of the
/// model in `bert_dir`, random 256-dimension vectors.
fn write_potion_like_model(bert_dir: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).expect("mkdir");
    let mut tokenizer = Vec::new();
    File::open(bert_dir.join("tokenizer.json"))
        .and_then(|mut f| f.read_to_end(&mut tokenizer))
        .expect("tokenizer");
    let vocab = 30_522;
    let dims = 256;
    let mut state = 0x9e37_79b9_u32;
    let table: Vec<u8> = (0..vocab * dims)
        .flat_map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((state >> 8) as f32 / (1u32 << 24) as f32 - 0.5).to_le_bytes()
        })
        .collect();
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![vocab, dims], &table)
            .expect("view");
    let weights = safetensors::serialize([("embeddings", view)], None).expect("serialize");
    let config =
        format!(r#"{{"model_type": "model2vec", "normalize": true, "hidden_dim": {dims}}}"#);
    for (name, bytes) in [
        ("tokenizer.json", tokenizer.as_slice()),
        ("model.safetensors", weights.as_slice()),
        ("config.json", config.as_bytes()),
    ] {
        File::create(dir.join(name)).and_then(|mut f| f.write_all(bytes)).expect("write");
    }
}

fn main() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let models = scratch.path().join("models");
    let sample = texts(256);
    let words: usize = sample.iter().map(|t| t.split(' ').count()).sum();
    println!("texts: {} of {:.0} words on average", sample.len(), words as f64 / 256.0);

    let Some(wheel) = minilm_wheel() else {
        println!("all-MiniLM-L6-v2: no wheel (run scripts/fetch-test-models); skipped");
        let source = scratch.path().join("tiny");
        write_tiny_static_model(&source).expect("tiny model");
        install(&models, "tiny", Some(&source)).expect("install tiny");
        let model = load(&models.join("tiny")).expect("load tiny");
        let rate = throughput(model.as_ref(), &sample, 256, Duration::from_secs(2));
        println!("static (tiny test model, 8 dimensions): {rate:>9.0} texts/s");
        return;
    };

    let start = Instant::now();
    install(&models, "all-minilm-l6-v2", Some(&wheel)).expect("install MiniLM");
    println!("all-MiniLM-L6-v2: install from the wheel {:>6.2} s", start.elapsed().as_secs_f64());
    let dir = models.join("all-minilm-l6-v2");
    let start = Instant::now();
    let minilm = load(&dir).expect("load MiniLM");
    println!("all-MiniLM-L6-v2: load {:>6.0} ms", start.elapsed().as_secs_f64() * 1000.0);
    minilm.embed(&["warm up"]).expect("warm up");
    for (batch, count) in [(1, 32), (16, 128), (32, 256)] {
        let rate = throughput(minilm.as_ref(), &sample[..count], batch, Duration::from_secs(5));
        println!("all-MiniLM-L6-v2: batch {batch:>2}: {rate:>7.1} texts/s");
    }

    let source = scratch.path().join("potion-like");
    write_potion_like_model(&dir, &source);
    install(&models, "potion-like", Some(&source)).expect("install static");
    let start = Instant::now();
    let model = load(&models.join("potion-like")).expect("load static");
    println!("static (30,522 x 256): load {:>6.0} ms", start.elapsed().as_secs_f64() * 1000.0);
    for batch in [1, 256] {
        let rate = throughput(model.as_ref(), &sample, batch, Duration::from_secs(3));
        println!("static (30,522 x 256): batch {batch:>3}: {rate:>9.0} texts/s");
    }
}
