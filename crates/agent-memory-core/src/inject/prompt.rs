//! Prompt-time recall: here is what a person just asked, give me the few earlier items that
//! match it strongly, or nothing.
//!
//! A prompt's *content terms* are its distinct words minus English stop words and the words of
//! any coding request ("fix", "test", "error", "file"…), lightly stemmed (`failing` → `fail`,
//! looked up with its inflections, so it also finds `failed` and `failure`); Chinese and
//! Japanese text gives overlapping two-character pieces, as the full-text index stores it,
//! minus pieces with a function character or that are common request words. An item's *strength* is absolute, not
//! relative to the other results: the share of the content terms its text contains, out of at
//! most [`SATURATION`] terms (so a long prompt needs five shared terms, not most of fifty), and
//! it must contain at least [`MIN_MATCHED`] of them. Only items at or above the configured score
//! are handed back; when none is, the agent hears nothing. A prompt with one content term
//! ("Why did the discount test fail?") recalls only when the term is rare in the store (at
//! most [`RARE`] observations hold it) and only items whose title holds it: a rare word names
//! a subject, a common one does not. A prompt with no content term, or a slash command, is
//! trivial and never looked up. The full-text index is asked only for the rarest terms that
//! every strong item must contain one of ([`selective_terms`]), newest first, so a lookup
//! stays cheap however large the store. Each recalled line gives the item's title and, when it
//! says more, its lesson, so that the answer itself tells the agent what was learned.
//!
//! Must not: read the store (callers hand over candidates), or rank by anything the person
//! cannot check from the words themselves.

use std::collections::HashSet;

use jiff::Timestamp;

use super::briefing::{clip_words, new_lesson};
use crate::store::fts::is_cjk;
use crate::store::recall::{ItemKind, RecallCandidate};
use crate::text::one_line;
use crate::tokens::estimate;

/// Content terms that must match, at least, when the prompt has that many.
pub const MIN_MATCHED: usize = 2;
/// Observations that hold a prompt's only content term, at most, for it to recall alone.
pub const RARE: usize = 3;
/// The number of content terms that counts as full coverage.
pub const SATURATION: usize = 8;
/// Content terms a prompt is searched for, at most (its first ones).
pub const MAX_TERMS: usize = 16;
/// Candidates of each kind the full-text index proposes before they are scored, newest first.
pub const CANDIDATES: usize = 30;
/// Documents counted per term to tell rare terms from common ones; more is "common".
pub const DF_CAP: usize = 500;

/// How recall answers.
#[derive(Debug, Clone)]
pub struct RecallOptions {
    pub min_score: f64,
    pub max_items: usize,
    /// Sentinel included.
    pub max_tokens: usize,
    /// `en` or `zh-CN`.
    pub language: String,
    pub time_zone: jiff::tz::TimeZone,
    /// Recall across projects names each item's project.
    pub name_projects: bool,
}

/// One content term: an English stem looked up with its inflections (when it is long enough
/// to be safe), or a word, number or CJK bigram matched whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub text: String,
    pub inflect: bool,
}

/// Words that carry no topic besides English stop words ([`crate::text::is_stop_word`]): the
/// small talk of a chat, and the verbs and nouns of every coding request. Matching on them
/// would find everything.
#[rustfmt::skip]
const REQUEST_WORDS: &[&str] = &[
    "ago", "also", "anything", "cannot", "cant", "didn", "doesn", "don", "done", "even", "ever",
    "get", "gets", "getting", "go", "goes", "going", "gone", "got", "isn", "just", "let", "lets",
    "like", "might", "much", "must", "ok", "okay", "please", "something", "still", "sure",
    "thank", "thanks", "thing", "things", "thx", "want", "way", "well", "won", "yes", "yet",
    // What any coding prompt says, whatever it is about.
    "add", "added", "agent", "bug", "bugs", "build", "change", "changed", "changes",
    "check", "code", "continue", "create", "debug", "error", "errors", "fail", "failed",
    "failing", "fails", "failure", "file", "files", "find", "fix", "fixed", "fixes", "fixing",
    "help", "implement", "issue", "issues", "last", "look", "make", "need", "new", "next",
    "pass", "passed", "passes", "passing", "problem", "problems", "remember", "run", "running",
    "see", "show", "tell", "test", "tests", "think", "time", "try", "update", "use", "used",
    "using", "work", "working", "works", "write",
    // What a question about the past asks, whatever it is about.
    "break", "breaks", "broke", "broken", "cause", "caused", "causes", "compile", "compiled",
    "compiles", "compiling", "happen", "happened", "happening", "happens", "made", "reason",
    "reasons", "wrong",
    // Fragments of paths that every project has.
    "src", "lib", "rs", "ts", "js", "py", "md", "json", "toml", "yaml", "yml", "txt",
];

/// Characters that mark a CJK bigram as grammar rather than topic: particles and pronouns.
#[rustfmt::skip]
const CJK_FUNCTION_CHARS: &[char] = &[
    '的', '了', '吗', '呢', '吧', '啊', '呀', '么', '着', '嘛', '我', '你', '他', '她', '它', '们',
    '这', '那', '哪', '谁', '怎', '又', '也', '就', '都', '很', '把', '被', '帮', '为', '是', '什',
];

/// Common Chinese words of requests and small talk.
#[rustfmt::skip]
const CJK_STOP_BIGRAMS: &[&str] = &[
    "一下", "一个", "一些", "上次", "不是", "之前", "以前", "但是", "使用", "修复", "修改", "先看",
    "再次", "出错", "刚才", "可以", "告诉", "问题", "因为", "处理", "如何", "如果", "好的", "已经",
    "帮忙", "所以", "报错", "文件", "时候", "是否", "更新", "有没", "没有", "然后", "现在", "看看",
    "测试", "为什", "什么", "继续", "谢谢", "请你", "请问", "失败", "通过", "代码", "运行", "还是",
    "进行", "错误", "需要", "解决", "添加", "实现", "检查", "记得", "重新", "时间", "不过", "应该",
    "出现", "会出", "会被", "不会", "会不", "就会", "也会", "总是", "怎样",
];

/// A stem of an English word: common inflections off, so that its forms can be looked up.
fn stem(word: &str) -> String {
    let strip = |suffix: &str, keep: usize| {
        word.strip_suffix(suffix).filter(|rest| rest.chars().count() >= keep)
    };
    // `validation`, `connections`: the verb, whose endings include `ion`.
    if let Some(rest) = strip("ions", 4).or_else(|| strip("ion", 4))
        && rest.ends_with(['t', 's'])
    {
        return rest.to_owned();
    }
    if let Some(rest) = strip("ies", 3) {
        return format!("{rest}y");
    }
    if let Some(rest) = strip("sses", 2) {
        return format!("{rest}ss");
    }
    for (suffix, keep) in [("ing", 4), ("ed", 3), ("ures", 4), ("ure", 4), ("es", 4)] {
        if let Some(rest) = strip(suffix, keep) {
            return rest.to_owned();
        }
    }
    if !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
        && let Some(rest) = strip("s", 3)
    {
        return rest.to_owned();
    }
    word.to_owned()
}

/// Endings a stem is also looked up with (`fail`: `fails`, `failed`, `failing`, `failure`).
/// Exact forms rather than a prefix query: the index has no prefix index, and a prefix query
/// reads every matching word's whole list before it yields a row, however common the word.
const ENDINGS: &[&str] = &["", "e", "s", "es", "ed", "er", "ers", "ing", "ion", "ions", "ure", "y"];
/// The endings of a stem that ends in `e` (`parse`: `parses`, `parsed`, `parser`)…
const E_ENDINGS: &[&str] = &["", "s", "d", "r", "rs"];
/// …and those that replace its `e` (`parsing`, `value`: `valuing`).
const E_DROPPED_ENDINGS: &[&str] = &["ing", "ion", "ions", "ure"];

/// The tokens of a text as the index sees it: lowercase words (split at anything but letters
/// and digits) and overlapping CJK bigrams (a lone CJK character is its own token). Stops as
/// soon as `each` returns false.
fn tokens(text: &str, mut each: impl FnMut(Token<'_>) -> bool) {
    /// Hands over the pending word or CJK run (never both: a new kind of character flushes the
    /// other first); false once `each` wants no more.
    fn flush(
        word: &mut String,
        run: &mut Vec<char>,
        each: &mut dyn FnMut(Token<'_>) -> bool,
    ) -> bool {
        let mut go = true;
        if !word.is_empty() {
            go = each(Token::Word(word));
            word.clear();
        }
        match run.len() {
            0 => {}
            1 => go = go && each(Token::Single),
            _ => {
                for pair in run.windows(2) {
                    if !go {
                        break;
                    }
                    go = each(Token::Bigram(pair[0], pair[1]));
                }
            }
        }
        run.clear();
        go
    }
    let mut word = String::new();
    let mut run: Vec<char> = Vec::new();
    for c in text.chars() {
        // ASCII first: most text is, and it needs no Unicode tables.
        let (cjk, word_char) = if c.is_ascii() {
            (false, c.is_ascii_alphanumeric())
        } else {
            let cjk = is_cjk(c);
            (cjk, !cjk && c.is_alphanumeric())
        };
        if cjk {
            if !word.is_empty() && !flush(&mut word, &mut run, &mut each) {
                return;
            }
            run.push(c);
        } else if word_char {
            if !run.is_empty() && !flush(&mut word, &mut run, &mut each) {
                return;
            }
            if c.is_ascii() {
                word.push(c.to_ascii_lowercase());
            } else {
                word.extend(c.to_lowercase());
            }
        } else if (!word.is_empty() || !run.is_empty()) && !flush(&mut word, &mut run, &mut each) {
            return;
        }
    }
    flush(&mut word, &mut run, &mut each);
}

#[derive(Debug)]
enum Token<'a> {
    Word(&'a str),
    Bigram(char, char),
    Single,
}

/// The content term a token gives, if any; `named` holds the words that are parts of a
/// snake_case name in the prompt (`new` of `new_checkout`), which are topic, whatever they are.
fn term_of(token: Token<'_>, named: &HashSet<String>) -> Option<Term> {
    match token {
        Token::Word(word) => {
            let too_short = word.chars().count() < 2
                || (word.chars().all(|c| c.is_ascii_digit()) && word.len() < 3);
            let stop = |w: &str| {
                crate::text::is_stop_word(w)
                    || (REQUEST_WORDS.contains(&w) && !named.contains(word))
            };
            if too_short || stop(word) {
                return None;
            }
            let stem = stem(word);
            if stop(&stem) {
                return None;
            }
            // Short stems match whole words only: `run` must not find `rune`; nor do numbers.
            let inflect = stem.chars().count() >= 4 && !stem.chars().all(|c| c.is_ascii_digit());
            Some(Term { text: stem, inflect })
        }
        Token::Bigram(a, b) => {
            let bigram: String = [a, b].iter().collect();
            let grammar = CJK_FUNCTION_CHARS.contains(&a) || CJK_FUNCTION_CHARS.contains(&b);
            (!grammar && !CJK_STOP_BIGRAMS.contains(&bigram.as_str()))
                .then_some(Term { text: bigram, inflect: false })
        }
        // One character alone says too little to match on.
        Token::Single => None,
    }
}

/// The prompt's content terms, in order of first appearance, at most [`MAX_TERMS`].
pub fn content_terms(prompt: &str) -> Vec<Term> {
    let named: HashSet<String> = prompt
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|chunk| chunk.trim_matches('_').contains('_'))
        .flat_map(|chunk| chunk.split('_').map(str::to_lowercase))
        .collect();
    let mut terms: Vec<Term> = Vec::new();
    tokens(prompt, |token| {
        if let Some(term) = term_of(token, &named)
            && !terms.contains(&term)
        {
            terms.push(term);
        }
        terms.len() < MAX_TERMS
    });
    terms
}

impl Term {
    /// Every form the term is looked up as.
    fn forms(&self) -> Vec<String> {
        if !self.inflect {
            return vec![self.text.clone()];
        }
        match self.text.strip_suffix('e') {
            Some(bare) => E_ENDINGS
                .iter()
                .map(|e| format!("{}{e}", self.text))
                .chain(E_DROPPED_ENDINGS.iter().map(|e| format!("{bare}{e}")))
                .collect(),
            None => ENDINGS.iter().map(|e| format!("{}{e}", self.text)).collect(),
        }
    }

    /// Whether a token of an item's text is one of the term's forms.
    fn matches(&self, word: &str) -> bool {
        // Most tokens differ at once: reject them before looking at endings.
        if word.as_bytes().first() != self.text.as_bytes().first() {
            return false;
        }
        if !self.inflect {
            return word == self.text;
        }
        let ending = |stem: &str, endings: &[&str]| {
            word.strip_prefix(stem).is_some_and(|rest| endings.contains(&rest))
        };
        match self.text.strip_suffix('e') {
            Some(bare) => ending(&self.text, E_ENDINGS) || ending(bare, E_DROPPED_ENDINGS),
            None => ending(&self.text, ENDINGS),
        }
    }
}

/// A prompt not worth a lookup: a slash command, or no content term.
pub fn is_trivial(prompt: &str, terms: &[Term]) -> bool {
    let first = prompt.split_whitespace().next().unwrap_or("");
    let slash_command = first.len() > 1 && first.starts_with('/') && !first[1..].contains('/');
    slash_command || terms.is_empty()
}

/// Whether the terms can recall anything, given how many observations hold each (`df`, as
/// [`selective_terms`] takes it): two or more always can, a single one only when it is rare.
pub fn can_recall(terms: &[Term], df: &[usize]) -> bool {
    match terms {
        [] => false,
        [_] => df.first().is_some_and(|&n| n <= RARE),
        _ => true,
    }
}

/// The FTS5 expression that finds every item containing any form of any term.
pub fn match_query(terms: &[Term]) -> Option<String> {
    let parts: Vec<String> = terms
        .iter()
        .map(|term| {
            let forms: Vec<String> = term
                .forms()
                .iter()
                .map(|form| format!("\"{}\"", form.replace('"', "\"\"")))
                .collect();
            if forms.len() == 1 { forms.join("") } else { format!("({})", forms.join(" OR ")) }
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" OR "))
}

/// The terms worth searching for: a strong item contains at least `m` of the `n` terms, so it
/// contains one of any `n - m + 1` of them, and the rarest ones (fewest documents in `df`)
/// find every strong item while matching the fewest others. Ranking by BM25 instead would
/// score every item that shares any word with the prompt, which a large store cannot afford
/// on the hook path.
pub fn selective_terms(terms: &[Term], df: &[usize], min_score: f64) -> Vec<Term> {
    let n = terms.len();
    let out_of = n.clamp(1, SATURATION);
    // A hair under the product, so that rounding can only ever search one term too many.
    let needed = (min_score.max(0.0) * out_of as f64 - 1e-9).ceil() as usize;
    let needed = needed.max(MIN_MATCHED).min(n);
    let keep = n + 1 - needed.max(1);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| df.get(i).copied().unwrap_or(usize::MAX));
    let mut chosen: Vec<usize> = order.into_iter().take(keep).collect();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| terms[i].clone()).collect()
}

/// How strongly a text matches the terms: (terms it contains, score from 0 to 1).
pub fn strength(terms: &[Term], text: &str) -> (usize, f64) {
    // One pass over the text, each token checked against the few terms, stopping once all are
    // found: no set of the item's words is built, since a candidate's text can run to kilobytes.
    let mut found = vec![false; terms.len()];
    let mut left = terms.len();
    let mut bigram = String::with_capacity(8);
    tokens(text, |token| {
        let word: &str = match token {
            Token::Word(word) => word,
            Token::Bigram(a, b) => {
                bigram.clear();
                bigram.push(a);
                bigram.push(b);
                &bigram
            }
            // Terms are never a lone character.
            Token::Single => return true,
        };
        for (term, found) in terms.iter().zip(found.iter_mut()) {
            if !*found && term.matches(word) {
                *found = true;
                left -= 1;
            }
        }
        left > 0
    });
    let matched = terms.len() - left;
    let out_of = terms.len().clamp(1, SATURATION);
    (matched, (matched as f64 / out_of as f64).min(1.0))
}

/// What recall hands an agent: the context, and the items in it (for their hit counts).
#[derive(Debug, Clone, PartialEq)]
pub struct Recalled {
    /// Wrapped in the sentinel.
    pub context: String,
    pub items: Vec<(ItemKind, i64)>,
    /// The same items by typed id with the tokens of their lines, and how many candidates the
    /// limits left out (a session's line that would repeat what it said is not counted).
    pub handed: super::Handed,
}

/// What an item's strength counts for in the order when a file it rests on changed since.
const STALE_WEIGHT: f64 = 0.8;

/// The strong candidates, best first, each session's best before any session's second, within
/// the item and token limits; `None` when none is strong.
pub fn recall(
    terms: &[Term],
    candidates: Vec<RecallCandidate>,
    options: &RecallOptions,
) -> Option<Recalled> {
    let needed = terms.len().min(MIN_MATCHED);
    let mut strong: Vec<(f64, usize, RecallCandidate)> = candidates
        .into_iter()
        // An item with nothing learned or done to show (a summary of a bare request) tells
        // the agent nothing.
        .filter(|candidate| !candidate.title.trim().is_empty())
        .filter_map(|candidate| {
            let (matched, score) = strength(terms, &candidate.text);
            // One term alone must be what the item is about.
            let about = terms.len() > 1 || strength(terms, &candidate.subject).0 == 1;
            // One whose file changed since may be out of date: it yields to one that holds.
            let weight = if candidate.stale.is_some() { STALE_WEIGHT } else { 1.0 };
            (about && matched >= needed.max(1) && score >= options.min_score).then_some((
                score * weight,
                matched,
                candidate,
            ))
        })
        .collect();
    // Best first; on a tie an observation (more specific than a summary), then the newer.
    strong.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then((a.2.kind == ItemKind::Summary).cmp(&(b.2.kind == ItemKind::Summary)))
            .then(b.2.at_ms.cmp(&a.2.at_ms))
    });
    render(strong.into_iter().map(|(_, _, candidate)| candidate), options)
}

/// What a project named in the prompt of an agent outside any project did lately ("what did
/// we fix yesterday in billing?"): its newest items that did or decided something, a fix or
/// a decision before a look around, newest first; `None` when it has none.
pub fn recent(mut candidates: Vec<RecallCandidate>, options: &RecallOptions) -> Option<Recalled> {
    let rank = |c: &RecallCandidate| match c.item_type.as_str() {
        "bugfix" | "decision" | "problem" | "security_alert" => 0,
        "feature" | "change" | "refactor" | "summary" => 1,
        _ => 2,
    };
    candidates.retain(|c| !c.title.trim().is_empty());
    candidates.sort_by(|a, b| rank(a).cmp(&rank(b)).then(b.at_ms.cmp(&a.at_ms)));
    render(candidates.into_iter(), options)
}

/// Candidates, best first, as the recall block: each session's best item first, within the
/// item and token limits; `None` when nothing fits.
fn render(
    ordered: impl Iterator<Item = RecallCandidate>,
    options: &RecallOptions,
) -> Option<Recalled> {
    let zh = options.language.starts_with("zh");
    let header = if zh {
        "以往会话中与此请求相关的内容（agent-memory；`agent-memory show <id>` 查看全文）："
    } else {
        "Earlier sessions on this (agent-memory; `agent-memory show <id>` prints one in full):"
    };
    let mut spent = estimate(&super::wrap(header));
    // Each session's best item first, so that as many sessions are heard as there are slots;
    // then a session's other strong items, when they say something its first did not.
    let mut sessions: Vec<i64> = Vec::new();
    let (mut firsts, mut others) = (Vec::new(), Vec::new());
    for candidate in ordered {
        if sessions.contains(&candidate.session_id) {
            others.push(candidate);
        } else {
            sessions.push(candidate.session_id);
            firsts.push(candidate);
        }
    }
    // What has been said of each session so far.
    let mut said: Vec<(i64, String)> = Vec::new();
    let mut lines = Vec::new();
    let mut items = Vec::new();
    let mut handed = super::Handed::default();
    for candidate in firsts.into_iter().chain(others) {
        if items.len() >= options.max_items {
            handed.cut += 1;
            continue;
        }
        let text = format!("{}\n{}", candidate.title, candidate.lesson);
        if let Some((_, known)) = said.iter().find(|(id, _)| *id == candidate.session_id)
            && new_lesson(known, &text, None).is_none()
        {
            continue;
        }
        let project = match options.name_projects && !candidate.project.is_empty() {
            true => format!(" [{}]", one_line(&candidate.project)),
            false => String::new(),
        };
        let head = format!(
            "- {} {} {}{project}",
            candidate.kind.show_id(candidate.id),
            candidate.agent,
            day(candidate.at_ms, &options.time_zone),
        );
        let title = clip_words(&one_line(&candidate.title), 160);
        let title = match &candidate.stale {
            Some(stale) => format!("{title} ({})", one_line(stale)),
            None => title,
        };
        let lesson = new_lesson(&candidate.title, &candidate.lesson, None);
        // The lesson is what the agent needs; the title alone when the two do not fit.
        // A line costs its tokens and its newline.
        let fits = |line: &String| spent + estimate(line) < options.max_tokens;
        let Some(line) = lesson
            .map(|lesson| format!("{head} {title} — {}", clip_words(&lesson, 140)))
            .into_iter()
            .chain([format!("{head} {title}")])
            .find(fits)
        else {
            handed.cut += 1;
            continue;
        };
        spent += estimate(&line) + 1;
        match said.iter_mut().find(|(id, _)| *id == candidate.session_id) {
            Some((_, known)) => known.push_str(&format!("\n{text}")),
            None => said.push((candidate.session_id, text)),
        }
        items.push((candidate.kind, candidate.id));
        handed.items.push((candidate.kind.show_id(candidate.id), estimate(&line) + 1));
        lines.push(line);
    }
    if lines.is_empty() {
        return None;
    }
    let context = super::wrap(&format!("{header}\n{}", lines.join("\n")));
    (estimate(&context) <= options.max_tokens).then_some(Recalled { context, items, handed })
}

fn day(ms: i64, time_zone: &jiff::tz::TimeZone) -> String {
    Timestamp::from_millisecond(ms)
        .map(|ts| ts.to_zoned_datetime(time_zone.clone()).strftime("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn texts(terms: &[Term]) -> Vec<String> {
        terms
            .iter()
            .map(|t| if t.inflect { format!("{}*", t.text) } else { t.text.clone() })
            .collect()
    }

    #[test]
    fn content_terms_leave_out_small_talk_and_request_words() {
        let cases: &[(&str, &[&str])] = &[
            ("ok", &[]),
            ("thanks!", &[]),
            ("yes, please continue", &[]),
            ("继续", &[]),
            ("好的，谢谢", &[]),
            ("fix the failing tests", &[]),
            (
                "The parser test fails again: cannot find value `depth` in src/parser.rs",
                &["parser*", "value*", "depth*"],
            ),
            ("Parsing nested lists crashes", &["pars*", "nest*", "list*", "crash*"]),
            ("支付回调的签名校验又失败了", &["支付", "付回", "回调", "签名", "名校", "校验"]),
            ("缓存为什么不过期？", &["缓存", "过期"]),
            ("POST 会被重试吗？", &["post*", "重试"]),
            (
                "静态资源的缓存策略是什么，为什么？",
                &["静态", "态资", "资源", "缓存", "存策", "策略"],
            ),
            ("Is new_checkout enabled, and why?", &["new", "checkout*", "enabl*"]),
            ("Is the email validation fixed?", &["email*", "validat*"]),
            ("run cargo build in 2 steps, then 2026", &["cargo*", "step*", "2026"]),
        ];
        for (prompt, expected) in cases {
            assert_eq!(texts(&content_terms(prompt)), *expected, "{prompt}");
        }
    }

    #[test]
    fn trivial_prompts() {
        for prompt in ["ok", "thanks", "yes", "继续", "/clear", "/compact keep the tests", "fix it"]
        {
            assert!(is_trivial(prompt, &content_terms(prompt)), "{prompt}");
        }
        for prompt in [
            "parser depth lookup",
            "/w/app/src/parser.rs crashes on nested lists",
            "Why did the discount test fail?",
        ] {
            assert!(!is_trivial(prompt, &content_terms(prompt)), "{prompt}");
        }
        let one = content_terms("What was wrong with the discount?");
        assert_eq!(texts(&one), ["discount*"], "a question's own words are no subject");
        assert!(can_recall(&one, &[RARE]) && !can_recall(&one, &[RARE + 1]), "rare alone");
        assert!(can_recall(&content_terms("parser depth"), &[400, 400]));
    }

    #[test]
    fn stems_match_their_inflections() {
        let terms = content_terms("parsing nested lists");
        assert_eq!(strength(&terms, "The parser rejected a nested list"), (3, 1.0));
        assert_eq!(strength(&terms, "nothing here").0, 0);
        assert_eq!(strength(&terms, "parsimony nesting listless").0, 1, "not any prefix");
        let value = content_terms("values valuing")[0].clone();
        for word in ["value", "values", "valued", "valuing"] {
            assert!(value.matches(word), "{word}");
        }
        let many = content_terms("alpha bravo charlie delta echo foxtrot golf hotel india juliet");
        let (matched, score) = strength(&many, "alpha bravo charlie delta echo");
        assert_eq!((matched, score), (5, 5.0 / 8.0), "coverage saturates at eight terms");
        let query = match_query(&content_terms("parse run 回调 2026")).expect("query");
        assert!(query.starts_with(r#"("parse" OR "parses" OR "parsed" OR "parser""#), "{query}");
        assert!(query.contains(r#""parsing""#) && !query.contains("parsee"), "{query}");
        assert!(query.ends_with(r#") OR "回调" OR "2026""#), "{query}");
        assert!(!query.contains(r#""run""#), "`run` is a request word: {query}");
    }

    #[test]
    fn the_rarest_terms_that_every_strong_item_must_touch() {
        let terms = content_terms("alpha bravo charlie delta echo");
        let names = |chosen: Vec<Term>| chosen.into_iter().map(|t| t.text).collect::<Vec<_>>();
        // Five terms at 0.6: three must match, so any three of the five cover every strong item.
        let chosen = selective_terms(&terms, &[400, 3, 500, 0, 12], 0.6);
        assert_eq!(names(chosen), ["bravo", "delta", "echo"]);
        // Two terms: both must match, so the rarer one alone finds them.
        let two = content_terms("alpha bravo");
        assert_eq!(names(selective_terms(&two, &[9, 2], 0.6)), ["bravo"]);
        // A low threshold still needs two matches.
        assert_eq!(selective_terms(&terms, &[1, 1, 1, 1, 1], 0.0).len(), 4);
        // The promise, checked on every subset of the terms an item could contain.
        let chosen = selective_terms(&terms, &[5, 1, 4, 2, 3], 0.6);
        for mask in 0u32..32 {
            let text: Vec<&str> =
                (0..5).filter(|i| mask & (1 << i) != 0).map(|i| terms[i].text.as_str()).collect();
            let (matched, score) = strength(&terms, &text.join(" "));
            if matched >= MIN_MATCHED && score >= 0.6 {
                assert!(chosen.iter().any(|t| text.contains(&t.text.as_str())), "{text:?}");
            }
        }
    }

    fn candidate(
        id: i64,
        session: i64,
        kind: ItemKind,
        title: &str,
        text: &str,
    ) -> RecallCandidate {
        RecallCandidate {
            kind,
            id,
            at_ms: 1_796_222_039_561 - id * 86_400_000,
            agent: "codex".into(),
            session_id: session,
            item_type: "bugfix".into(),
            title: title.into(),
            lesson: String::new(),
            text: text.into(),
            project: "shop".into(),
            subject: title.into(),
            stale: None,
        }
    }

    fn options(language: &str) -> RecallOptions {
        RecallOptions {
            min_score: 0.6,
            max_items: 3,
            max_tokens: 300,
            language: language.into(),
            time_zone: jiff::tz::TimeZone::UTC,
            name_projects: false,
        }
    }

    #[test]
    fn only_strong_items_one_per_session() {
        let terms = content_terms("the parser cannot find value depth for nested lists");
        let fix = "Fixed `cargo test` failure in src/parser.rs: cannot find value `depth`";
        let candidates = vec![
            candidate(1, 10, ItemKind::Observation, fix, &format!("{fix} nested lists")),
            candidate(
                2,
                10,
                ItemKind::Summary,
                "the parser test fails",
                "parser depth nested lists value",
            ),
            candidate(
                3,
                11,
                ItemKind::Observation,
                "Studied src/parser.rs",
                "src/parser.rs parser",
            ),
            candidate(
                4,
                12,
                ItemKind::Observation,
                "Depth of nested parser values",
                "depth nested parser value",
            ),
        ];
        let recalled = recall(&terms, candidates, &options("en")).expect("strong ones");
        expect![[r#"
            <agent-memory-context>
            Earlier sessions on this (agent-memory; `agent-memory show <id>` prints one in full):
            - o1 codex 2026-12-01 Fixed `cargo test` failure in src/parser.rs: cannot find value `depth`
            - o4 codex 2026-11-28 Depth of nested parser values
            </agent-memory-context>"#]]
        .assert_eq(&recalled.context);
        assert_eq!(recalled.items, [(ItemKind::Observation, 1), (ItemKind::Observation, 4)]);

        let weak = vec![candidate(3, 11, ItemKind::Observation, "Studied src/parser.rs", "parser")];
        assert_eq!(recall(&terms, weak, &options("en")), None, "one shared word is not strong");
        let zh = recall(
            &content_terms("支付回调的签名校验又失败了"),
            vec![candidate(
                5,
                13,
                ItemKind::Observation,
                "修复支付回调签名校验失败",
                "修复支付回调签名校验失败（src/pay.rs）",
            )],
            &options("zh-CN"),
        )
        .expect("Chinese");
        expect![[r#"
            <agent-memory-context>
            以往会话中与此请求相关的内容（agent-memory；`agent-memory show <id>` 查看全文）：
            - o5 codex 2026-11-27 修复支付回调签名校验失败
            </agent-memory-context>"#]]
        .assert_eq(&zh.context);
    }

    #[test]
    fn one_rare_term_recalls_only_items_about_it_with_their_lesson() {
        let terms = content_terms("Why did the discount test fail?");
        let about = RecallCandidate {
            lesson: "The discount was applied twice: apply it once, in cart.total".into(),
            ..candidate(
                1,
                10,
                ItemKind::Observation,
                "Fixed the discount test in cart.js",
                "discount cart total",
            )
        };
        let mentions =
            candidate(2, 11, ItemKind::Observation, "Read cart.js", "cart.js discount total");
        let recalled = recall(&terms, vec![about, mentions], &options("en")).expect("about it");
        expect![[r#"
            <agent-memory-context>
            Earlier sessions on this (agent-memory; `agent-memory show <id>` prints one in full):
            - o1 codex 2026-12-01 Fixed the discount test in cart.js — The discount was applied twice: apply it once, in cart.total
            </agent-memory-context>"#]]
        .assert_eq(&recalled.context);
        assert_eq!(recalled.items, [(ItemKind::Observation, 1)], "a mention is not the subject");
    }

    #[test]
    fn the_token_limit_holds() {
        let terms = content_terms("parser depth nested lists");
        let long = "parser depth nested lists ".repeat(40);
        let candidates: Vec<_> =
            (1..=5).map(|i| candidate(i, i, ItemKind::Observation, &long, &long)).collect();
        for max_tokens in [20, 60, 120, 300] {
            let options = RecallOptions { max_tokens, ..options("en") };
            if let Some(recalled) = recall(&terms, candidates.clone(), &options) {
                assert!(estimate(&recalled.context) <= max_tokens, "{max_tokens}");
                assert!(recalled.items.len() <= 3);
                // What it handed is what it holds, and every other strong candidate was cut.
                let handed: Vec<String> =
                    recalled.items.iter().map(|(kind, id)| kind.show_id(*id)).collect();
                let ids: Vec<String> =
                    recalled.handed.items.iter().map(|(id, _)| id.clone()).collect();
                assert_eq!(ids, handed, "{max_tokens}");
                let spent: usize = recalled.handed.items.iter().map(|(_, tokens)| tokens).sum();
                assert!(spent <= max_tokens, "{max_tokens}");
                assert_eq!(recalled.handed.cut, candidates.len() - ids.len(), "{max_tokens}");
            }
        }
    }
}
