//! How alike two memories are: here are two statements, say whether they are the same one
//! (merge) or the same subject decided differently (supersede).
//!
//! Terms are the words of a statement without English function words, lowercased, with CJK
//! runs split into the same overlapping bigrams the full-text index uses, so Chinese statements
//! compare as well as English ones. Subject terms further drop the words every decision uses
//! ("decision", "use", "决定", "原因"), which say nothing about what was decided.
//!
//! Must not: read the store.

use std::collections::BTreeSet;

use crate::store::fts;

/// Words that open or frame a decision in any subject; a subject is what is left.
const FRAME_WORDS: &[&str] = &[
    "decision", "decided", "decide", "use", "using", "reason", "now", "instead", "always", "never",
    "prefer", "决定", "原因", "因为", "现在", "从现", "在起", "统一", "理由", "使用",
];

/// The comparable terms of `text`.
pub fn terms(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for term in fts::query_terms(text) {
        let lower = term.to_lowercase();
        if lower.chars().any(fts::is_cjk) {
            let chars: Vec<char> = lower.chars().collect();
            if chars.len() == 1 {
                out.insert(lower);
            } else {
                out.extend(chars.windows(2).map(|w| w.iter().collect::<String>()));
            }
        } else if lower.chars().count() > 1 && !crate::text::is_stop_word(&lower) {
            out.insert(lower);
        }
    }
    out
}

/// The terms of `text` that name its subject.
pub fn subject_terms(text: &str) -> BTreeSet<String> {
    terms(text).into_iter().filter(|t| !FRAME_WORDS.contains(&t.as_str())).collect()
}

/// Shared terms over all terms (Jaccard), 0 to 1; 0 when both are empty.
pub fn overlap(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

/// Shared terms over the smaller set's terms, 0 to 1: how much of the shorter statement's
/// subject the longer one is about.
pub fn containment(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let smaller = a.len().min(b.len());
    if smaller == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / smaller as f64
}

/// Whether `newer` names something `older` does not: a decision restated with a new choice
/// ("jiff, not chrono"), rather than the same decision said again or said shorter.
pub fn says_more(newer: &BTreeSet<String>, older: &BTreeSet<String>) -> bool {
    newer.difference(older).next().is_some()
}

/// Cosine similarity of two unit vectors of the same length; `None` when they cannot be
/// compared.
pub fn cosine(a: &[f32], b: &[f32]) -> Option<f32> {
    (a.len() == b.len() && !a.is_empty()).then(|| a.iter().zip(b).map(|(x, y)| x * y).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_compare_english_and_chinese() {
        let a = terms("`cargo test` failed with E0425; changing src/parser.rs fixed it.");
        let b = terms("cargo test failed with E0425, fixed by changing src/parser.rs");
        assert!(overlap(&a, &b) >= 0.6, "{a:?} {b:?}");
        let zh_a = terms("决定：从现在起统一用 jiff 处理时间。");
        let zh_b = terms("决定：从现在起统一用 jiff 处理所有时间");
        assert!(overlap(&zh_a, &zh_b) >= 0.6, "{zh_a:?} {zh_b:?}");
        let other = terms("the webhook signature check uses HMAC");
        assert!(overlap(&a, &other) < 0.1);
    }

    #[test]
    fn subjects_ignore_the_words_of_deciding() {
        let jiff = subject_terms("Decision: use jiff for every timestamp.");
        let chrono = subject_terms("Decision: use chrono for every timestamp.");
        assert_eq!(jiff.iter().map(String::as_str).collect::<Vec<_>>(), ["jiff", "timestamp"]);
        assert!(containment(&jiff, &chrono) >= 0.5 && says_more(&jiff, &chrono));
        assert!(!says_more(&subject_terms("Use jiff."), &jiff), "said shorter, nothing new");
        let cache = subject_terms("Decision: use redis for the queue.");
        assert_eq!(containment(&jiff, &cache), 0.0);
        assert_eq!(cosine(&[1.0, 0.0], &[0.6, 0.8]), Some(0.6));
        assert_eq!(cosine(&[1.0], &[0.6, 0.8]), None);
    }
}
