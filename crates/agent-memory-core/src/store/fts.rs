//! Full-text search text: the CJK-bigram shadow text that both the index and every query go
//! through, and the converter from what a person types to a safe FTS5 query.
//!
//! FTS5's `unicode61` tokenizer makes a whole run of CJK characters one token, so `回调` would
//! never find `支付回调`. The shadow text splits every CJK run into overlapping bigrams
//! (`支付 付回 回调`; a lone character is kept as is) and leaves everything else to `unicode61`,
//! which lowercases ASCII words. Queries get the same treatment, a CJK term becoming a phrase
//! of its bigrams, so a two-character word matches wherever it occurs. This avoids a custom
//! tokenizer through FFI: the transform is a plain SQL function called by the triggers.
//!
//! Every kind's text (events, observations, summaries, memories) also carries the English
//! stems of its words beside the words themselves ([`stemmed_text`]): `tests failing` is
//! indexed with `test fail` too, and search asks that index for a query word's stem (every
//! form of the word is indexed with it), so `failed test` finds it. Most of what a person
//! captured stays a raw event, and search over it needs the same levers as over what was
//! distilled; stemming a hook's 8,000 characters at most costs the hook well under a
//! millisecond.

use std::borrow::Cow;

/// True for the scripts written without spaces between words.
pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}'     // Hiragana, Katakana
        | '\u{3400}'..='\u{4DBF}'   // CJK Extension A
        | '\u{4E00}'..='\u{9FFF}'   // CJK Unified Ideographs
        | '\u{F900}'..='\u{FAFF}'   // CJK Compatibility Ideographs
        | '\u{AC00}'..='\u{D7AF}'   // Hangul syllables
        | '\u{20000}'..='\u{2FA1F}' // Extensions B–F, compatibility supplement
    )
}

/// The shadow text for `text`: CJK runs become space-separated overlapping bigrams.
pub fn shadow_text(text: &str) -> Cow<'_, str> {
    if text.is_ascii() || !text.chars().any(is_cjk) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() * 2);
    let mut run: Vec<char> = Vec::new();
    for c in text.chars() {
        if is_cjk(c) {
            run.push(c);
        } else {
            flush_run(&mut out, &mut run);
            out.push(c);
        }
    }
    flush_run(&mut out, &mut run);
    Cow::Owned(out)
}

fn flush_run(out: &mut String, run: &mut Vec<char>) {
    if run.is_empty() {
        return;
    }
    out.push(' ');
    if run.len() == 1 {
        out.push(run[0]);
    } else {
        for pair in run.windows(2) {
            out.push(pair[0]);
            out.push(pair[1]);
            out.push(' ');
        }
    }
    out.push(' ');
    run.clear();
}

/// The English (Snowball) stem of `word`, when it is a lowercase ASCII word of three letters or
/// more whose stem differs from it: `failing` → `fail`, `tests` → `test`; `None` for `fail`,
/// code names with digits or capitals, and every other script.
pub fn stem(word: &str) -> Option<String> {
    use std::sync::OnceLock;
    static STEMMER: OnceLock<rust_stemmers::Stemmer> = OnceLock::new();
    if word.len() < 3 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    let stemmer =
        STEMMER.get_or_init(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English));
    let stem = stemmer.stem(word);
    (stem != word && !stem.is_empty()).then(|| stem.into_owned())
}

/// [`stem`], remembered by the thread: the words of a store repeat, and a bulk import stems
/// every word of every event. Forgets everything past [`REMEMBERED_STEMS`] words, so a stream
/// of one-off words cannot grow it without end.
fn stem_remembered(word: &str) -> Option<std::rc::Rc<str>> {
    use std::cell::RefCell;
    use std::rc::Rc;
    // foldhash rather than SipHash, which took a quarter of the index text's instructions in a
    // history import. Its seed is random per process, and the cache forgets everything at its
    // size, so text made to collide buys little.
    thread_local! {
        static STEMS: RefCell<foldhash::HashMap<Box<str>, Option<Rc<str>>>> =
            RefCell::new(foldhash::HashMap::default());
    }
    STEMS.with(|stems| {
        let mut stems = stems.borrow_mut();
        if let Some(known) = stems.get(word) {
            return known.clone();
        }
        if stems.len() >= REMEMBERED_STEMS {
            stems.clear();
        }
        let found: Option<Rc<str>> = stem(word).map(Rc::from);
        stems.insert(word.into(), found.clone());
        found
    })
}

/// How many words [`stem_remembered`] keeps per thread.
const REMEMBERED_STEMS: usize = 50_000;

/// The indexed text of an item: its [`shadow_text`], then on a line of its own the stems of
/// its words that differ from them, each once.
pub fn stemmed_text(text: &str) -> String {
    let shadow = shadow_text(text);
    let mut seen = foldhash::HashSet::default();
    let mut stems: Vec<std::rc::Rc<str>> = Vec::new();
    let mut lower = String::new();
    for word in shadow.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 3) {
        let word = if word.bytes().any(|b| b.is_ascii_uppercase()) {
            lower.clear();
            lower.extend(word.chars().map(|c| c.to_ascii_lowercase()));
            lower.as_str()
        } else {
            word
        };
        // Only a lowercase ASCII word has an English stem; anything else is not looked up.
        if !word.bytes().all(|b| b.is_ascii_lowercase()) {
            continue;
        }
        if let Some(stem) = stem_remembered(word).filter(|s| seen.insert(s.clone())) {
            stems.push(stem);
        }
    }
    if stems.is_empty() {
        return shadow.into_owned();
    }
    let mut out = String::with_capacity(shadow.len() + stems.len() * 8);
    out.push_str(&shadow);
    out.push('\n');
    for (n, stem) in stems.iter().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(stem);
    }
    out
}

/// The words a distilled item's local date is indexed by, so a query naming a month, a year,
/// a weekday or a day ("what broke on Monday", "the fix in March 2026") finds what was done
/// then: `8 May 2023 Monday`. Empty for a time outside the calendar.
pub fn date_words(at_ms: i64) -> String {
    use std::cell::RefCell;
    // The last local day worked out, as the span of times it covers: a bulk import, in time
    // order, works out each day once.
    thread_local! {
        static LAST: RefCell<Option<(i64, i64, String)>> = const { RefCell::new(None) };
    }
    if let Some(words) = LAST.with_borrow(|last| {
        last.as_ref()
            .filter(|(start, end, _)| (*start..*end).contains(&at_ms))
            .map(|(_, _, words)| words.clone())
    }) {
        return words;
    }
    let Ok(ts) = jiff::Timestamp::from_millisecond(at_ms) else { return String::new() };
    let local = ts.to_zoned_datetime(crate::time::local_zone());
    let words = local.strftime("%-d %B %Y %A").to_string();
    let start = local.start_of_day().map(|d| d.timestamp().as_millisecond());
    let end =
        local.tomorrow().and_then(|d| d.start_of_day()).map(|d| d.timestamp().as_millisecond());
    if let (Ok(start), Ok(end)) = (start, end) {
        LAST.with_borrow_mut(|last| *last = Some((start, end, words.clone())));
    }
    words
}

/// The terms of a query: runs of letters and digits (and `_`), with CJK runs split off as
/// terms of their own, so `bug修复` is `bug` and `修复`.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut current = String::new();
    let mut current_cjk = false;
    for c in query.chars() {
        let word_char = c.is_alphanumeric() || c == '_';
        if !word_char {
            push_term(&mut terms, &mut current);
            continue;
        }
        let cjk = is_cjk(c);
        if !current.is_empty() && cjk != current_cjk {
            push_term(&mut terms, &mut current);
        }
        current_cjk = cjk;
        current.push(c);
    }
    push_term(&mut terms, &mut current);
    terms
}

fn push_term(terms: &mut Vec<String>, current: &mut String) {
    if !current.is_empty() && !terms.contains(current) {
        terms.push(std::mem::take(current));
    }
    current.clear();
}

/// The terms a search looks for: [`query_terms`] without English function words, unless
/// nothing else is left ("the who" still finds the band). OR-joined, a function word would pull
/// in nearly every row, and BM25 ranks relative to the best match found.
pub fn search_terms(query: &str) -> Vec<String> {
    let terms = query_terms(query);
    let content: Vec<String> =
        terms.iter().filter(|t| !crate::text::is_stop_word(&t.to_lowercase())).cloned().collect();
    if content.is_empty() { terms } else { content }
}

/// Turns a person's query into an FTS5 expression: every term quoted (so no term can be read as
/// FTS syntax), CJK terms as phrases of their bigrams, OR-joined, at most `max_terms` of the
/// [`search_terms`]. `None` when the query holds no searchable term.
pub fn to_match_query(query: &str, max_terms: usize) -> Option<String> {
    let parts = quoted_terms(query, max_terms);
    if parts.is_empty() { None } else { Some(parts.join(" OR ")) }
}

/// The same terms AND-joined: rows holding every term. `None` unless the query has two terms
/// or more (with one, it is the same as [`to_match_query`]).
pub fn to_match_all_query(query: &str, max_terms: usize) -> Option<String> {
    let parts = quoted_terms(query, max_terms);
    (parts.len() > 1).then(|| parts.join(" AND "))
}

/// The [`search_terms`] (at most `max_terms`), each quoted as one FTS5 phrase: CJK terms as
/// phrases of their bigrams, quotes doubled.
pub fn quoted_terms(query: &str, max_terms: usize) -> Vec<String> {
    search_terms(query).into_iter().take(max_terms.max(1)).map(|term| quote(&term)).collect()
}

/// One term quoted as an FTS5 phrase.
pub fn quote(term: &str) -> String {
    let shadow = shadow_text(term);
    format!("\"{}\"", shadow.split_whitespace().collect::<Vec<_>>().join(" ").replace('"', "\"\""))
}

/// The tokens FTS5 indexes for `text` (shadow text, split as the `unicode61` tokenizer splits,
/// lowercased), for checking in memory which terms a row holds. Diacritics are kept, which
/// only ever makes a check miss, never invent a match.
pub fn index_tokens(text: &str) -> Vec<String> {
    words(&shadow_text(text)).map(str::to_lowercase).collect()
}

/// `text` lowercased, quickly when it is ASCII, as most text is.
pub fn lowercase(text: Cow<'_, str>) -> String {
    if text.is_ascii() {
        let mut text = text.into_owned();
        text.make_ascii_lowercase();
        text
    } else {
        text.to_lowercase()
    }
}

/// The lowercased words of one text after another, as [`words`] splits the [`lowercase`]d
/// [`shadow_text`], into one buffer kept from text to text. Search reads the words of up to
/// thousands of rows for a query of common words; lowercasing and copying each row whole
/// before splitting it was most of that work.
#[derive(Debug, Default)]
pub struct RowWords {
    text: String,
    words: Vec<(usize, usize)>,
}

impl RowWords {
    /// Reads the words of `text`, in place of the last text's.
    pub fn read(&mut self, text: &str) {
        self.text.clear();
        self.words.clear();
        if text.is_ascii() {
            // Its own shadow text; each word is copied lowercased.
            for word in words(text) {
                self.push(word);
            }
        } else if text.contains('\u{3a3}') {
            // Σ lowercases by what surrounds it (final ς), which only the whole text shows.
            let lowered = lowercase(shadow_text(text));
            for word in words(&lowered) {
                self.push(word);
            }
        } else {
            // Every other lowercase form depends on its character alone, so each word is
            // lowercased on its own: the words, in order, of the shadow text without writing it.
            let mut word = None;
            // The CJK run so far: its last character, and whether it has more than one.
            let mut run: Option<(char, bool)> = None;
            for (at, c) in text.char_indices() {
                if is_cjk(c) {
                    if let Some(start) = word.take() {
                        self.push_lowercased(&text[start..at]);
                    }
                    run = Some(match run {
                        Some((last, _)) => {
                            self.push_pair(last, c);
                            (c, true)
                        }
                        None => (c, false),
                    });
                    continue;
                }
                if let Some((last, false)) = run.take() {
                    self.push_pair(last, ' ');
                }
                if c.is_alphanumeric() {
                    word.get_or_insert(at);
                } else if let Some(start) = word.take() {
                    self.push_lowercased(&text[start..at]);
                }
            }
            if let Some(start) = word {
                self.push_lowercased(&text[start..]);
            }
            if let Some((last, false)) = run {
                self.push_pair(last, ' ');
            }
        }
    }

    /// Appends the words of a non-CJK word lowercased: one, but for a lowercase form holding a
    /// mark that is no letter (İ becomes i and a combining dot), where the lowercased text
    /// splits again.
    fn push_lowercased(&mut self, word: &str) {
        if word.is_ascii() {
            return self.push(word);
        }
        for part in word.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
            if !part.is_empty() {
                self.push(part);
            }
        }
    }

    /// Appends the words of a CJK bigram (or of a lone character, `b` a space): the pair when
    /// both are letters, else the one that is. These scripts have no case.
    fn push_pair(&mut self, a: char, b: char) {
        let start = self.text.len();
        for c in [a, b] {
            if c.is_alphanumeric() {
                self.text.push(c);
            } else if self.text.len() > start {
                // `a` was a letter and `b` is not.
                break;
            }
        }
        if self.text.len() > start {
            self.words.push((start, self.text.len()));
        }
    }

    /// Appends `word`, lowercasing ASCII letters (any other letter is lowercased already).
    fn push(&mut self, word: &str) {
        let start = self.text.len();
        self.text.push_str(word);
        self.text[start..].make_ascii_lowercase();
        self.words.push((start, self.text.len()));
    }

    /// The words of the last text read, in order.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(|&(start, end)| &self.text[start..end])
    }
}

/// The words of a [`shadow_text`] as the index splits them, as written: lowercase the text
/// first to compare them with [`index_tokens`].
pub fn words(shadow: &str) -> impl Iterator<Item = &str> {
    let ascii = shadow.is_ascii();
    shadow
        .split(move |c: char| if ascii { !c.is_ascii_alphanumeric() } else { !c.is_alphanumeric() })
        .filter(|t| !t.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remembered_day_and_stems_are_what_working_them_out_gives() {
        let direct = |at: i64| {
            jiff::Timestamp::from_millisecond(at)
                .expect("time")
                .to_zoned_datetime(crate::time::local_zone())
                .strftime("%-d %B %Y %A")
                .to_string()
        };
        // Three days in seven-minute steps, then back in time: every midnight is crossed.
        let start = 1_773_144_000_000_i64;
        let times: Vec<i64> = (0..620).map(|n| start + n * 7 * 60_000).collect();
        for &at in times.iter().chain(times.iter().rev()) {
            assert_eq!(date_words(at), direct(at), "at {at}");
        }
        let text = "Tests FAILING after failing tests were fixed";
        for _ in 0..2 {
            assert_eq!(stemmed_text(text), format!("{text}\ntest fail fix"));
        }
    }

    #[test]
    fn row_words_are_the_words_of_the_lowercased_shadow_text() {
        let whole = |text: &str| {
            let lowered = lowercase(shadow_text(text));
            words(&lowered).map(str::to_owned).collect::<Vec<_>>()
        };
        let mut row = RowWords::default();
        let mut check = |text: &str| {
            row.read(text);
            assert_eq!(row.words().collect::<Vec<_>>(), whole(text), "{text:?}");
        };
        for text in [
            "",
            "Plain ASCII, with CamelCase_words and 42 numbers!",
            "修复API bug的回调 and ÀÉÎ café",
            "ΟΔΟΣ. ΑΣ'Β σοφοΣ",
            "İstanbul İİ x\u{130}y",
            "\u{212a}elvin and \u{212b}ngstrom",
            "カタカナ・ひらがな ー 한국어 \u{30fb}\u{30fb}",
            "Ⓐⓑ Ⅻ ǅ ß ẞ ﬁ",
            "emoji 🦀 and\u{0}control\u{7f}chars\ttabs",
            "x\u{301}\u{345}y ΑΙ\u{345}",
            "\u{20000}\u{2fa1d}a",
        ] {
            check(text);
        }
        // Generated texts over an alphabet of the awkward cases, so every pairing is met.
        let alphabet: Vec<char> =
            "aZ9 _.'-ÀßΣσςİıK\u{212a}Ⅻ\u{301}\u{345}修复回调カ・ー한😀\u{30fb}\u{ff21}ǅ\t"
                .chars()
                .collect();
        let mut seed = 0x853c_49e6_748f_ea9b_u64;
        for _ in 0..4_000 {
            let text: String = (0..seed % 24)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            check(&text);
        }
    }

    #[test]
    fn shadow_text_splits_cjk_runs_into_bigrams() {
        assert_eq!(shadow_text("plain ascii"), "plain ascii");
        assert_eq!(
            shadow_text("支付回调").split_whitespace().collect::<Vec<_>>(),
            ["支付", "付回", "回调"]
        );
        assert_eq!(
            shadow_text("修复API bug的回调").split_whitespace().collect::<Vec<_>>(),
            ["修复", "API", "bug", "的回", "回调"]
        );
        assert_eq!(shadow_text("a 好 b").split_whitespace().collect::<Vec<_>>(), ["a", "好", "b"]);
    }

    #[test]
    fn stems_go_beside_the_words_and_queries_ask_for_either() {
        assert_eq!(stem("failing").as_deref(), Some("fail"));
        assert_eq!(stem("tests").as_deref(), Some("test"));
        assert_eq!(stem("fail"), None, "already a stem");
        assert_eq!(stem("Failing"), None, "callers lowercase first; code names stay exact");
        assert_eq!(stem("utf8s"), None);
        assert_eq!(stem("支付"), None);
        assert_eq!(
            stemmed_text("Tests failing: tests 支付回调"),
            "Tests failing: tests  支付 付回 回调  \ntest fail"
        );
        assert_eq!(stemmed_text("fail fast"), "fail fast", "nothing to add");
    }

    #[test]
    fn query_conversion_quotes_and_caps() {
        assert_eq!(
            to_match_query("API bug 修复", 12).as_deref(),
            Some(r#""API" OR "bug" OR "修复""#)
        );
        assert_eq!(to_match_query("支付回调", 12).as_deref(), Some(r#""支付 付回 回调""#));
        assert_eq!(to_match_query("bug修复", 12).as_deref(), Some(r#""bug" OR "修复""#));
        // FTS syntax in the input is just text.
        assert_eq!(
            to_match_query("NEAR(a b) OR -c*", 12).as_deref(),
            Some(r#""NEAR" OR "b" OR "c""#)
        );
        // Function words go, unless they are all there is.
        assert_eq!(
            to_match_query("why does the webhook fail", 12).as_deref(),
            Some(r#""webhook" OR "fail""#)
        );
        assert_eq!(to_match_query("The Who", 12).as_deref(), Some(r#""The" OR "Who""#));
        assert_eq!(
            to_match_all_query("API bug 修复", 12).as_deref(),
            Some(r#""API" AND "bug" AND "修复""#)
        );
        assert_eq!(to_match_all_query("支付回调", 12), None, "one term: nothing to narrow");
        assert_eq!(to_match_query("   ?!  ", 12), None);
        let many = (0..20).map(|i| format!("t{i}")).collect::<Vec<_>>().join(" ");
        assert_eq!(to_match_query(&many, 12).map(|q| q.matches(" OR ").count()), Some(11));
    }
}
