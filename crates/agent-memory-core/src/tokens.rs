//! The one token estimator (ARCHITECTURE.md, `tokens.rs`): every budget — the briefing injected at
//! session start, recall results, LLM prompts — counts tokens with [`estimate`], so that limits
//! mean the same thing everywhere.
//!
//! The formula is deliberately crude: a quarter token per ASCII byte (rounded up) plus one
//! token per non-ASCII character. Against real tokenizers it comes out roughly 10–25% high for
//! English and code, and about right for Chinese and Japanese, where a character is often a
//! token of its own. Being high is the safe side for a budget: a briefing never overflows the
//! space it was given. And it needs no tokenizer tables, which the hook path could not afford
//! to load on every agent event.
//!
//! Must not: load a tokenizer, allocate, or depend on which model reads the text.

/// Estimated tokens in `text`: `ceil(ASCII bytes / 4)` plus the number of non-ASCII
/// characters.
pub fn estimate(text: &str) -> usize {
    let (ascii, other) = text.chars().fold((0usize, 0usize), |(ascii, other), c| {
        if c.is_ascii() { (ascii + 1, other) } else { (ascii, other + 1) }
    });
    ascii.div_ceil(4) + other
}

/// Estimated tokens in several texts sent together: the sum of their estimates. Each text is
/// rounded up on its own, which errs on the safe side as [`estimate`] does.
pub fn estimate_all<'a>(texts: impl IntoIterator<Item = &'a str>) -> usize {
    texts.into_iter().map(estimate).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates() {
        // (what, text, estimate)
        let cases: &[(&str, &str, usize)] = &[
            ("empty", "", 0),
            ("one ASCII byte rounds up", "a", 1),
            ("four ASCII bytes", "abcd", 1),
            ("five ASCII bytes", "abcde", 2),
            ("English sentence, 44 bytes", "The quick brown fox jumps over the lazy dog.", 11),
            ("code", "fn main() { println!(\"hi\"); }", 8),
            ("Chinese: one per character", "数据库迁移失败", 7),
            ("Chinese punctuation is non-ASCII too", "修复了，好。", 6),
            ("mixed: 12 ASCII bytes and 4 characters", "fix the bug 修复缺陷", 3 + 4),
            ("emoji count as one each", "🔴 bugfix", 1 + 2),
            ("white space counts as ASCII", "    \n\t", 2),
        ];
        for (what, text, expected) in cases {
            assert_eq!(estimate(text), *expected, "{what}: {text:?}");
        }
    }

    #[test]
    fn estimate_all_sums_each_text_rounded_up() {
        assert_eq!(estimate_all([]), 0);
        assert_eq!(estimate_all(["a", "b", "c"]), 3, "each text rounds up on its own");
        assert_eq!(estimate_all(["abcdefgh", "数据"]), 2 + 2);
        let texts = ["hello".to_owned(), "世界".to_owned()];
        assert_eq!(estimate_all(texts.iter().map(String::as_str)), 2 + 2);
    }
}
