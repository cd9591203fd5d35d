//! How alike two memories are: here are two statements, say whether they are the same one
//! (merge) or the same subject decided differently (supersede).
//!
//! Terms are the words of a statement without English function words, lowercased, with CJK
//! runs split into the same overlapping bigrams the full-text index uses, so Chinese statements
//! compare as well as English ones. Subject terms further drop the words every decision uses
//! ("decision", "use", "决定", "原因"), which say nothing about what was decided.
//!
//! Words alone cannot tell `src/deploy.ts was read 3 times` from `src/api.ts was read 3 times`:
//! the two share every word but the one that matters. So the names a statement mentions
//! (paths, code names, numbers: [`Names`]) decide first whether two statements are about the
//! same subject at all ([`Subject::same_as`]); only then do their words say how alike they are.
//!
//! Must not: read the store.

use std::borrow::Cow;
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
        } else if (lower.chars().count() > 1 || lower.chars().all(|c| c.is_ascii_digit()))
            && !crate::text::is_stop_word(&lower)
        {
            // A single digit is a term too: a pool of 5 and a pool of 8 are two choices.
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
    overlap_of(a.intersection(b).count(), a.len(), b.len())
}

/// [`overlap`] of two sets of `a` and `b` terms that share `shared`: what a caller that
/// counted the shared terms another way (promotion's postings) measures with.
pub fn overlap_of(shared: usize, a: usize, b: usize) -> f64 {
    match a + b - shared {
        0 => 0.0,
        union => shared as f64 / union as f64,
    }
}

/// Shared terms over the smaller set's terms, 0 to 1: how much of the shorter statement's
/// subject the longer one is about.
pub fn containment(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    containment_of(a.intersection(b).count(), a.len(), b.len())
}

/// [`containment`] from the count of shared terms, as [`overlap_of`].
pub fn containment_of(shared: usize, a: usize, b: usize) -> f64 {
    match a.min(b) {
        0 => 0.0,
        smaller => shared as f64 / smaller as f64,
    }
}

/// Whether `newer` names something `older` does not: a decision restated with a new choice
/// ("jiff, not chrono"), rather than the same decision said again or said shorter.
pub fn says_more(newer: &BTreeSet<String>, older: &BTreeSet<String>) -> bool {
    newer.difference(older).next().is_some()
}

/// The names a statement mentions, lowercased: what it is about and which values it states.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Names {
    /// Path-like words, with a `/` or a file extension (`src/deploy.ts`, `README.md`), without a
    /// leading `./` or a trailing `:line`.
    pub paths: BTreeSet<String>,
    /// Code names: backticked spans, `snake_case`, `camelCase`, `a::b` paths, error codes
    /// (`E0425`).
    pub idents: BTreeSet<String>,
    /// Numbers (`3`, `1.5`, `100`), a short unit written after them (`30s`, `10ms`) left out.
    pub numbers: BTreeSet<String>,
}

impl Names {
    /// The names in `text`.
    pub fn of(text: &str) -> Names {
        let mut names = Names::default();
        let pieces: Vec<&str> = text.split('`').collect();
        for (i, piece) in pieces.iter().enumerate() {
            // Odd pieces are inside backticks, unless the last backtick is never closed.
            if i % 2 == 1 && i + 1 < pieces.len() {
                names.add_code(piece);
            } else {
                for word in words(piece) {
                    names.add(word, false);
                }
            }
        }
        names
    }

    /// A backticked span: a single word is a name whatever it looks like (`depth`); a longer
    /// span is its paths and code names, or, with none, one name as a whole (`cargo test`).
    fn add_code(&mut self, span: &str) {
        let found: Vec<&str> = words(span).collect();
        if let [word] = found.as_slice() {
            self.add(word, true);
            return;
        }
        let before = self.paths.len() + self.idents.len();
        for word in found.iter().filter(|w| number(w).is_none()) {
            self.add(word, false);
        }
        let whole = span.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        if self.paths.len() + self.idents.len() == before && !whole.is_empty() {
            self.idents.insert(whole);
        }
    }

    fn add(&mut self, word: &str, code: bool) {
        let lower = word.to_lowercase();
        if let Some(number) = number(word) {
            self.numbers.insert(number);
        } else if is_path(word) {
            self.paths.insert(without_line(lower.trim_start_matches("./")).to_owned());
        } else if code || is_code_name(word) {
            self.idents.insert(lower);
        }
    }
}

/// A statement with the names it mentions, ready to be compared with others.
#[derive(Debug, Clone)]
pub struct Subject<'a> {
    text: &'a str,
    names: Cow<'a, Names>,
}

impl<'a> Subject<'a> {
    pub fn of(text: &'a str) -> Subject<'a> {
        Subject { text, names: Cow::Owned(Names::of(text)) }
    }

    /// The subject of `text` with its names already worked out (`Names::of(text)`).
    pub fn with_names(text: &'a str, names: &'a Names) -> Subject<'a> {
        Subject { text, names: Cow::Borrowed(names) }
    }

    /// Whether the two can be one statement, or one decision taken again. Never when they name
    /// different files (neither's paths all among the other's), nor when they name different
    /// code or numbers, unless `deciding` (both are decisions or conventions): a different name
    /// or value can then be the new choice on the same subject, and is when the rest of their
    /// subject, names and numbers aside, is one's within the other's (`use jiff for
    /// timestamps` after `use chrono for timestamps`).
    pub fn same_as(&self, other: &Subject<'_>, deciding: bool) -> bool {
        let (a, b) = (&*self.names, &*other.names);
        if apart(&a.paths, &b.paths, same_path) {
            return false;
        }
        let renamed = apart(&a.idents, &b.idents, |x, y| x == y)
            || apart(&a.numbers, &b.numbers, |x, y| x == y);
        if !renamed {
            return true;
        }
        deciding && containment(&self.rest(), &other.rest()) >= RESTATED
    }

    /// The subject terms that are not a name or a number.
    fn rest(&self) -> BTreeSet<String> {
        let named: BTreeSet<String> =
            self.names.idents.iter().chain(&self.names.numbers).flat_map(|n| terms(n)).collect();
        subject_terms(self.text).into_iter().filter(|t| !named.contains(t)).collect()
    }
}

/// Whether statements `a` and `b` are about the same subject ([`Subject::same_as`]).
pub fn same_subject(a: &str, b: &str, deciding: bool) -> bool {
    Subject::of(a).same_as(&Subject::of(b), deciding)
}

/// The share of the shorter decision's subject, names aside, that the longer must hold for a
/// new name or value in it to be a new choice rather than another subject.
const RESTATED: f64 = 0.8;

/// Whether two sets of names, both non-empty, are apart: neither's names all among the
/// other's. A statement naming fewer of the same things (a lesson restated without its file)
/// is not apart from the fuller one.
fn apart(a: &BTreeSet<String>, b: &BTreeSet<String>, same: impl Fn(&str, &str) -> bool) -> bool {
    let covered =
        |x: &BTreeSet<String>, y: &BTreeSet<String>| x.iter().all(|n| y.iter().any(|m| same(n, m)));
    !a.is_empty() && !b.is_empty() && !covered(a, b) && !covered(b, a)
}

/// The same file, one path perhaps written from further up (`/w/app/src/a.rs`, `src/a.rs`).
fn same_path(a: &str, b: &str) -> bool {
    let under = |long: &str, short: &str| {
        long.strip_suffix(short).is_some_and(|head| head.ends_with(['/', '\\']))
    };
    a == b || under(a, b) || under(b, a)
}

/// The words of `text` as names are written: letters, digits and the marks paths and code
/// names use, without the marks that close a sentence or open a flag.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || "_-./\\:@~+#".contains(c)))
        .map(|w| w.trim_end_matches(['.', ':', '-']).trim_start_matches(['-', ':']))
        .filter(|w| w.chars().any(|c| c.is_ascii_alphanumeric()))
}

/// The number a word states (`3`, `1.5`, `2.0.1`; `30s` is `30`); `None` for a word that does
/// not open with one, or goes on as more than a unit (`2nd-pass`, `64bit_mode`).
fn number(word: &str) -> Option<String> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let numeric = digits.starts_with(|c: char| c.is_ascii_digit())
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && !digits.contains("..");
    // A unit is a few letters (`s`, `ms`, `kb`), not a word.
    (numeric && word.len() - digits.len() <= 3).then(|| digits.to_owned())
}

/// A path: a word with a `/` or `\`, or a name with a file extension (`README.md`, `Node.js`),
/// but not an abbreviation (`e.g`, `a.k.a`) or a version (`3.x`).
fn is_path(word: &str) -> bool {
    if word.contains(['/', '\\']) && !word.contains("::") {
        return true;
    }
    let Some((stem, ext)) = without_line(word).rsplit_once('.') else { return false };
    let last = stem.rsplit(['.', ':']).next().unwrap_or(stem);
    ext.len() <= 10
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic())
        && last.chars().count() >= 2
        && (ext.len() >= 2 || last.chars().any(|c| c.is_ascii_alphabetic()))
}

/// A path without the `:line` or `:line:column` written after it.
fn without_line(path: &str) -> &str {
    let mut path = path;
    while let Some((head, tail)) = path.rsplit_once(':') {
        if tail.is_empty() || !tail.chars().all(|c| c.is_ascii_digit()) {
            break;
        }
        path = head;
    }
    path
}

/// `snake_case`, `camelCase` (a lower-case letter, then a capital), `a::b`, or an error code (up
/// to four capitals, then at least three digits: `E0425`, `TS2345`).
fn is_code_name(word: &str) -> bool {
    let snake = word.contains('_') && word.chars().any(|c| c.is_ascii_alphabetic());
    let camel =
        word.as_bytes().windows(2).any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let capitals = word.chars().take_while(char::is_ascii_uppercase).count();
    let error_code = (1..=4).contains(&capitals)
        && word.len() - capitals >= 3
        && word[capitals..].chars().all(|c| c.is_ascii_digit());
    snake || camel || error_code || word.contains("::")
}

/// Cosine similarity of two unit vectors of the same length; `None` when they cannot be
/// compared.
pub fn cosine(a: &[f32], b: &[f32]) -> Option<f32> {
    (a.len() == b.len() && !a.is_empty()).then(|| crate::embed::dot(a, b))
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

    #[test]
    fn names_are_paths_code_and_numbers() {
        let show = |text: &str| {
            let n = Names::of(text);
            let join = |set: &BTreeSet<String>| set.iter().cloned().collect::<Vec<_>>().join(" ");
            format!(
                "paths [{}] idents [{}] numbers [{}]",
                join(&n.paths),
                join(&n.idents),
                join(&n.numbers)
            )
        };
        let cases = [
            "src/deploy.ts was read 3 times.",
            "`cargo test` failed with E0425 at ./src/parser.rs:42; declaring `depth` fixed it.",
            "apply_discount treated percent as a fraction, so 10 meant 1000% (pricing.py).",
            "Timeouts of 30s in fetchUser; std::time::Duration, e.g. in README.md, a.k.a. v1.2.",
            "修复了src/parser.rs中的问题，用时 3 秒",
            "Use `cargo test -p parser` and `jiff`",
        ];
        let shown: Vec<String> = cases.iter().map(|c| show(c)).collect();
        expect_test::expect![[r#"
            paths [src/deploy.ts] idents [] numbers [3]
            paths [src/parser.rs] idents [cargo test depth e0425] numbers []
            paths [pricing.py] idents [apply_discount] numbers [10 1000]
            paths [readme.md] idents [fetchuser std::time::duration] numbers [30]
            paths [src/parser.rs] idents [] numbers [3]
            paths [] idents [cargo test -p parser jiff] numbers []"#]]
        .assert_eq(&shown.join("\n"));
    }

    #[test]
    fn different_files_code_or_numbers_are_different_subjects() {
        // (a, b, both decisions, the same subject)
        let cases = [
            ("src/deploy.ts was read 3 times", "src/api.ts was read 3 times", false, false),
            ("src/deploy.ts was read 3 times", "src/deploy.ts was read 3 times.", false, true),
            (
                "changing src/parser.rs fixed it",
                "changing /w/app/src/parser.rs fixed it",
                false,
                true,
            ),
            (
                "`cargo test` failed with E0425; changing src/parser.rs fixed it.",
                "cargo test failed with E0425, fixed by changing src/parser.rs",
                false,
                true,
            ),
            (
                "`parse_list` returns early on empty input",
                "`parse_expr` returns early on empty input",
                false,
                false,
            ),
            (
                "parse_list returns early on empty input",
                "parseList returns early on empty input",
                false,
                false,
            ),
            ("The API timeout is 30 seconds.", "The API timeout is 60 seconds.", false, false),
            (
                "The API timeout is 30 seconds.",
                "The API timeout is 30 seconds, retried 3 times.",
                false,
                true,
            ),
            ("cargo test failed with E0425", "cargo test failed with E0308", false, false),
            // A decision taken again with a new name or value is the same subject...
            (
                "Decision: use `jiff` for every timestamp.",
                "Decision: use `chrono` for every timestamp.",
                true,
                true,
            ),
            (
                "Decision: keep the connection pool at 5.",
                "Decision: keep the connection pool at 8.",
                true,
                true,
            ),
            // ...but not when the rest of it is about something else, or names another file.
            (
                "Decision: `parse_list` returns a Result.",
                "Decision: `parse_expr` returns an Option.",
                true,
                false,
            ),
            ("Decision: use jiff in src/time.rs.", "Decision: use jiff in src/db.rs.", true, false),
        ];
        for (a, b, deciding, same) in cases {
            assert_eq!(same_subject(a, b, deciding), same, "{a} / {b}");
            assert_eq!(same_subject(b, a, deciding), same, "{b} / {a}");
        }
    }
}
