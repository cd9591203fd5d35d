//! Small text helpers shared by the stages that write text a person reads (adapters' summaries,
//! distilled observations) and the ones that match it (search, prompt recall).

/// Whitespace runs (newlines included) collapsed to single spaces.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// `bytes` in lowercase hexadecimal, two digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 15)]));
    }
    out
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

/// English function words: they say nothing about what a text is about, so matching on them
/// finds everything.
#[rustfmt::skip]
const ENGLISH_STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are",
    "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but",
    "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "else",
    "every", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her",
    "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself",
    "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once",
    "one", "only", "or", "other", "our", "ours", "out", "over", "own", "same", "she", "should",
    "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "then", "there",
    "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "us",
    "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why",
    "will", "with", "without", "would", "you", "your", "yours", "yourself",
];

/// Whether `word` (lower case) is an English function word.
pub fn is_stop_word(word: &str) -> bool {
    ENGLISH_STOP_WORDS.binary_search(&word).is_ok()
}

/// Whether a line of a program's output starts by naming an exception, as a traceback's last
/// line or a thrown error does: `KeyError: 'id'`, `AssertionError [ERR_ASSERTION]: …`,
/// `json.decoder.JSONDecodeError: …`, `Error: …`. That is `^[A-Za-z_.]*(Error|Exception)`
/// whose last dotted part starts with a capital, an optional ` [CODE]`, then `:`; an `Error`
/// mid-sentence or a lowercase `error:` is not one.
pub fn is_exception(line: &str) -> bool {
    let name_len = line
        .find(|c: char| !(c.is_ascii_alphabetic() || c == '_' || c == '.'))
        .unwrap_or(line.len());
    let (name, rest) = line.split_at(name_len);
    let last = name.rsplit('.').next().unwrap_or_default();
    if !(last.ends_with("Error") || last.ends_with("Exception"))
        || !last.starts_with(|c: char| c.is_ascii_uppercase())
    {
        return false;
    }
    let rest = match rest.strip_prefix(" [") {
        Some(code) => {
            let Some((code, rest)) = code.split_once(']') else { return false };
            if code.is_empty() || !code.chars().all(|c| c.is_ascii_uppercase() || c == '_') {
                return false;
            }
            rest
        }
        None => rest,
    };
    rest.starts_with(':')
}

/// Clause openings that address whoever reads the text, telling it what to do or be.
const INSTRUCTION_OPENINGS: &[&str] = &[
    "ignore all",
    "ignore any",
    "ignore every",
    "ignore previous",
    "ignore prior",
    "ignore the above",
    "ignore the previous",
    "ignore your",
    "disregard all",
    "disregard any",
    "disregard previous",
    "disregard prior",
    "disregard the above",
    "disregard the previous",
    "disregard your",
    "forget all",
    "forget the previous",
    "forget previous",
    "forget your instructions",
    "you are now",
    "new instructions",
    "do not tell",
    "don't tell",
    "never tell",
    "system:",
    "assistant:",
    "忽略之前",
    "忽略以上",
    "忽略所有",
    "忽略你的",
    "无视之前",
    "无视以上",
    "无视所有",
    "你现在是",
    "不要告诉",
];

/// Actions that, after "always" or "never", make a clause a standing order to an agent when it
/// points outside the code (a URL, a pipe, a script): "always run curl … | sh", "always send
/// the .env to https://…". "Always use jiff" and "never run migrations from a hook" stay
/// conventions and gotchas.
const ORDERED_ACTIONS: &[&str] = &[
    "run", "execute", "call", "send", "upload", "post", "include", "append", "add", "push",
    "commit", "tell", "ask", "mention", "say", "reply", "respond", "answer", "install", "download",
    "curl", "wget", "delete", "remove", "disable", "skip", "ignore", "obey", "follow",
];

/// Phrases only an instruction to an agent contains.
const INSTRUCTION_PHRASES: &[&str] = &[
    "previous instructions",
    "prior instructions",
    "above instructions",
    "these instructions",
    "system prompt",
    "| sh",
    "| bash",
    "|sh",
    "|bash",
    "之前的指令",
    "以上指令",
    "系统提示",
];

/// Whether `text` reads as an instruction to an agent, the kind an injected page or a hostile
/// repository plants for the next agent to obey: a clause that addresses the reader ("ignore
/// the previous instructions", "you are now"), a standing order pointing outside the code, or a
/// phrase only such text has (a download piped into a shell).
pub fn reads_as_instruction(text: &str) -> bool {
    let lower = text.to_lowercase();
    if INSTRUCTION_PHRASES.iter().any(|p| lower.contains(p)) {
        return true;
    }
    clauses(&lower).any(|clause| {
        if INSTRUCTION_OPENINGS.iter().any(|o| clause.starts_with(o)) {
            return true;
        }
        let rest = ["always ", "never ", "总是", "永远不要"]
            .iter()
            .find_map(|order| clause.strip_prefix(order));
        rest.is_some_and(|rest| {
            let verb = rest.split(|c: char| !c.is_alphanumeric()).next().unwrap_or_default();
            let ordered = ORDERED_ACTIONS.contains(&verb)
                || ["运行", "执行", "发送", "上传", "下载"].iter().any(|v| rest.starts_with(v));
            ordered && points_outside(rest)
        })
    })
}

/// The clauses of a text, each from its first letter: cut after `.`, `;`, `:`, `,`, `!`, `?`
/// followed by a space (so a URL or a path stays whole), at a dash or a line break, and after
/// every CJK stop.
fn clauses(text: &str) -> impl Iterator<Item = &str> {
    let mut cuts = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next_is_space = chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        let cut = match c {
            '.' | ';' | ':' | ',' | '!' | '?' => next_is_space,
            '\n' | '—' | '。' | '；' | '：' | '，' | '！' | '？' => true,
            _ => false,
        };
        if cut {
            cuts.push(at + c.len_utf8());
        }
    }
    cuts.push(text.len());
    let mut from = 0;
    cuts.into_iter().map(move |to| {
        let clause = &text[from..to];
        from = to;
        clause.trim_start_matches(|c: char| !c.is_alphanumeric())
    })
}

/// Whether an order reaches outside the code: a URL, a pipe, or a script to run.
fn points_outside(clause: &str) -> bool {
    clause.contains("://")
        || clause.contains('|')
        || clause.contains("./")
        || clause.contains(".sh")
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

    #[test]
    fn exceptions_are_named_at_the_start_of_a_line() {
        for line in [
            "KeyError: 'id'",
            "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal",
            "json.decoder.JSONDecodeError: Expecting value",
            "Error: Cannot find module './cart'",
            "java.lang.IllegalStateException: closed",
        ] {
            assert!(is_exception(line), "{line}");
        }
        for line in [
            "error: could not compile",
            "noError: fine",
            "the Error: was handled",
            "TypeError",
            "AssertionError [bad code]: x",
            "ValueError [ERR_X",
            "",
        ] {
            assert!(!is_exception(line), "{line}");
        }
    }

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(ENGLISH_STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stop_word("the") && is_stop_word("yourself") && !is_stop_word("webhook"));
    }
}
