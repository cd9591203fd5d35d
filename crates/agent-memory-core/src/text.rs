//! Small text helpers shared by the stages that write text a person reads (adapters' summaries,
//! distilled observations).

/// Whitespace runs (newlines included) collapsed to single spaces.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to `max` characters on a char boundary, ending in `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max.saturating_sub(1)).collect();
    format!("{}…", kept.trim_end())
}

/// The items in first-seen order, each once.
pub fn dedup(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_and_flattening() {
        assert_eq!(one_line(" a\n b\t c "), "a b c");
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("exactly ten", 11), "exactly ten");
        assert_eq!(clip("a longer sentence", 9), "a longer…");
        assert_eq!(clip("支付回调签名校验", 5), "支付回调…");
        assert_eq!(dedup(["b", "a", "b"].map(String::from)), ["b", "a"]);
    }
}
