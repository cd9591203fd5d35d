//! Secret redaction on the capture path: the rule table, the [`Redactor`] that applies it, the
//! `<private>…</private>` filter, and the list of files whose content is never stored.
//!
//! Everything an agent sends passes through here before it reaches the store, so this module owns
//! the answer to "is this a secret". It runs inside a hook that must finish in under 5 ms, so it
//! compiles nothing up front: a scan for each rule's keywords decides which rules' regexes are
//! compiled (once, on first need) and run. Compiling the whole table at start was
//! measured at 10 s. Patterns use ASCII classes so the lazy DFA never has to give up
//! on Unicode word boundaries, and bound their context by lines or not at all: a bounded
//! repetition of a Unicode class (`(?u:[^\n]){0,200}`) takes milliseconds to compile.
//!
//! It must not log, print or otherwise emit what it finds (a secret in a log file has been stored),
//! must do no I/O, and must not panic on any input.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use regex_automata::meta::{self, Regex};
use regex_automata::util::syntax;
use serde_json::Value;

/// One kind of secret: how to find it cheaply, how to match it, and two examples that test it.
#[derive(Debug)]
pub struct Rule {
    /// Short kebab-case name, shown in the replacement `[REDACTED:<name>]`.
    pub name: &'static str,
    /// Lowercase ASCII literals, matched case-insensitively; the regex runs only when one occurs.
    /// Every text the pattern can match must contain one of them.
    pub keywords: &'static [&'static str],
    /// For a secret with no literal to wake on (bare hex, base64): a scan of the text that is
    /// true wherever the pattern can match. The regex runs when it or a keyword says so.
    pub shape: Option<Shape>,
    /// The regex, compiled with Unicode off (`\b`, `\s`, `(?i)` are ASCII); `(?u:…)` where a
    /// negated class must match whole characters.
    pub pattern: &'static str,
    /// The named capture group holding the secret, or `None` for the whole match. A group that
    /// starts and ends with the same quote keeps its quotes.
    pub secret_group: Option<&'static str>,
    /// Where in a match the secrets are: the group above, or several parts a function finds.
    pub spans: Spans,
    /// What a match must also satisfy, for what a regex without look-around cannot say.
    pub guard: Guard,
    /// A realistic text this rule must redact (made-up secret of the right shape).
    pub must_match: &'static str,
    /// A near miss that must come through unchanged.
    pub must_not_match: &'static str,
}

/// Where the secrets of one match are. Most rules redact one group; the context-only kinds
/// redact several parts of what their regex found (the cells of a column, the arguments of a
/// call), each checked by the guard on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spans {
    /// The secret group, or the whole match.
    Group,
    /// The `rows` group is a table whose first line, a header, names a secret in some column:
    /// the cells of that column in the rows below.
    TableColumn,
    /// The `args` group is the argument list of a call that builds credentials: its string
    /// literals.
    StringArguments,
    /// The match is a command that prints a token: the tokens on the lines it printed, up to the
    /// next prompt.
    CommandOutput,
}

/// Checks applied to a match before it is redacted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// Every match is a secret.
    None,
    /// The secret contains an ASCII digit: random keys do, kebab-case names (`sk-learn-…`) do not.
    HasDigit,
    /// The secret looks generated, not like a word, number, type or path: at least 6 characters,
    /// starting with a letter or digit, with letters and (digits or symbols), and not a
    /// placeholder. For secrets named in prose ("your API key is …", `Password: …`).
    Opaque,
    /// The first dot-separated part is the base64 of a numeric id, as in a Discord bot token
    /// (`MTIzNDU2…` is "123456…"); three dotted base64 parts alone are too common.
    NumericIdPrefix,
    /// One of the groups `before` and `after` took part: the context word that makes a bare
    /// value (a UUID) a key may stand on either side of it.
    Context,
    /// The secret is not a placeholder: `${VAR}`, `<your-token>`, `xxx`, `changeme`, `null`…
    NotPlaceholder,
    /// A value only context makes a secret: at least 16 characters, no blank, Shannon entropy of
    /// at least 3.5 bits a character, and not a word, identifier, path, URL or placeholder (see
    /// [`is_random`]). As gitleaks does for its keyword-anchored generic rules.
    Random,
    /// `key = value` forms, whose `key` group must name a secret (not a count, URL, type…:
    /// `max_tokens` and `token_url` are not). The value must not be a placeholder nor the key's
    /// own name (`token=token`), and it must sit where config puts values rather than where code
    /// does: `key: value` only where a line or string starts (never mid-prose, "invalid token:
    /// expired"), an unquoted value at the end of its line or in shell's tight `KEY=v cmd`, and
    /// outside JSON and `KEY=value` syntax no bare word, number or colour (`auth = authorizer`,
    /// `Token: "#cccccc",`) and no expression (`self.token`, `'%s' % x`, `match self {`).
    Assignment,
}

/// The rule table, in the order the rules are applied (specific before generic).
pub fn rules() -> &'static [Rule] {
    RULES
}

/// Redacts secrets in text. Cheap to construct; regexes compile lazily per rule, only when the
/// keyword scan finds one of the rule's keywords in the text.
#[derive(Debug)]
pub struct Redactor {
    keywords: Keywords,
    /// One lazily compiled regex per rule, without a prefilter, for texts up to [`LEAN_TEXT`].
    /// An inner `None` means the pattern did not compile; the table test rules that out, and
    /// skipping beats panicking in a hook.
    lean: Box<[OnceLock<Option<Regex>>]>,
    /// The same with the prefilter the engine picks, for longer texts.
    full: Box<[OnceLock<Option<Regex>>]>,
}

/// The longest text the rules scan without a prefilter. A hook compiles each rule it wakes once
/// and scans one payload, so compiling is most of what it pays: the prefilter of a
/// case-insensitive keyword (`(?i:authorization)`) takes longer to build than the rule's
/// automata and saves about 2 µs a kilobyte scanned. Past this length the saving wins.
const LEAN_TEXT: usize = 16 * 1024;

impl Default for Redactor {
    fn default() -> Self {
        Self::new()
    }
}

impl Redactor {
    /// Indexes the keywords (a few microseconds); compiles no regex.
    pub fn new() -> Redactor {
        Redactor {
            keywords: Keywords::new(RULES),
            lean: RULES.iter().map(|_| OnceLock::new()).collect(),
            full: RULES.iter().map(|_| OnceLock::new()).collect(),
        }
    }

    /// Returns the text with every secret replaced by `[REDACTED:<rule-name>]`, and how many were
    /// replaced.
    pub fn redact<'a>(&self, text: &'a str) -> (Cow<'a, str>, usize) {
        let (out, count, _) = self.redact_noting_commands(text);
        (out, count)
    }

    /// [`Redactor::redact`], and whether the text runs a command that prints a token (whose
    /// output, in a payload, may sit in another string than the command).
    fn redact_noting_commands<'a>(&self, text: &'a str) -> (Cow<'a, str>, usize, bool) {
        let mut candidates = self.candidates(text);
        let mut out = Cow::Borrowed(text);
        let mut count = 0;
        let mut command = false;
        // Rules run in table order over the progressively redacted text: a secret taken by a
        // specific rule is a `[REDACTED:…]` marker by the time the generic ones look, and `apply`
        // skips matches that reach into a marker, so overlaps cannot garble the output. Only
        // the woken rules are visited, lowest bit first.
        while candidates != 0 {
            let index = candidates.trailing_zeros() as usize;
            candidates &= candidates - 1;
            let Some(rule) = RULES.get(index) else { break };
            let Some(regex) = self.regex(index, out.len()) else {
                continue;
            };
            command |= rule.spans == Spans::CommandOutput && regex.is_match(out.as_ref());
            if let Some((redacted, n)) = apply(rule, regex, &out) {
                out = Cow::Owned(redacted);
                count += n;
            }
        }
        (out, count, command)
    }

    /// Drops `<private>` spans, then redacts; the count is of secrets only.
    pub fn scrub<'a>(&self, text: &'a str) -> (Cow<'a, str>, usize) {
        match drop_private(text) {
            Cow::Borrowed(text) => self.redact(text),
            Cow::Owned(kept) => {
                let (redacted, count) = self.redact(&kept);
                let redacted = match redacted {
                    Cow::Owned(redacted) => redacted,
                    Cow::Borrowed(_) => kept,
                };
                (Cow::Owned(redacted), count)
            }
        }
    }

    /// Redacts every string leaf (and object keys are left alone) of a JSON value in place; returns
    /// the count. A string under a key that names a secret (`"password": "…"`) is replaced whole,
    /// since the leaf alone carries no `key=` context for the generic rule to see.
    ///
    /// A payload that runs a command printing a token (`gh auth token`) carries its output in
    /// another leaf than the command (`tool_response.stdout`), so when one leaf runs such a
    /// command, the tokens on the first lines of every leaf go too, but for leaves whose key
    /// names an identifier (`session_id`, `tool_use_id`, `transcript_path`).
    pub fn redact_json(&self, value: &mut Value) -> usize {
        self.redact_json_with(value, false)
    }

    /// [`Redactor::redact_json`] that also drops `<private>` spans from every string leaf.
    pub fn scrub_json(&self, value: &mut Value) -> usize {
        self.redact_json_with(value, true)
    }

    fn redact_json_with(&self, value: &mut Value, drop: bool) -> usize {
        let mut command = false;
        let count = self.walk_json(value, drop, &mut command);
        if !command {
            return count;
        }
        let Some(rule) = RULES.iter().find(|rule| rule.spans == Spans::CommandOutput) else {
            return count;
        };
        count
            + each_leaf(value, "", &mut |key, text| {
                if has_word(key, IDENTIFIER_KEY_WORDS) {
                    return 0;
                }
                let mut spans = Vec::new();
                command_output(text, 0, &mut spans);
                let mut replacer = Replacer::new(text);
                for (start, end, _) in spans {
                    if is_random(&text[start..end]) {
                        replacer.replace(start, end, rule.name);
                    }
                }
                match replacer.finish() {
                    Some((redacted, n)) => {
                        *text = redacted;
                        n
                    }
                    None => 0,
                }
            })
    }

    /// How many rules have compiled their regex so far (for tests and `doctor`).
    pub fn compiled_rule_count(&self) -> usize {
        self.lean
            .iter()
            .zip(&self.full)
            .filter(|(a, b)| a.get().is_some() || b.get().is_some())
            .count()
    }

    /// Redacts every leaf; `command` becomes true when a leaf runs a command that prints a token.
    fn walk_json(&self, value: &mut Value, drop: bool, command: &mut bool) -> usize {
        match value {
            Value::String(text) => {
                let (cleaned, count) = {
                    let kept = if drop { drop_private(text) } else { Cow::Borrowed(text.as_str()) };
                    let (cleaned, count, runs) = self.redact_noting_commands(&kept);
                    *command |= runs;
                    let cleaned = match cleaned {
                        Cow::Owned(cleaned) => Some(cleaned),
                        Cow::Borrowed(_) => None,
                    };
                    (
                        cleaned.or(match kept {
                            Cow::Owned(kept) => Some(kept),
                            Cow::Borrowed(_) => None,
                        }),
                        count,
                    )
                };
                if let Some(cleaned) = cleaned {
                    *text = cleaned;
                }
                count
            }
            Value::Array(items) => {
                items.iter_mut().map(|item| self.walk_json(item, drop, command)).sum()
            }
            Value::Object(map) => map
                .iter_mut()
                .map(|(key, item)| match item {
                    Value::String(text) if is_secret_json_key(key) && !is_placeholder(text) => {
                        *text = format!("[REDACTED:{GENERIC_RULE}]");
                        1
                    }
                    _ => self.walk_json(item, drop, command),
                })
                .sum(),
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
    }

    /// A bit per rule whose keywords occur in `text`, or whose shape does.
    fn candidates(&self, text: &str) -> u128 {
        let bytes = text.as_bytes();
        self.keywords.shapes.iter().fold(self.keywords.rules_in(bytes), |found, &(bit, shape)| {
            if found & bit == 0 && shape(bytes) { found | bit } else { found }
        })
    }

    /// The regex of rule `index` for a text of `len` bytes.
    fn regex(&self, index: usize, len: usize) -> Option<&Regex> {
        let rule = RULES.get(index)?;
        let lean = len <= LEAN_TEXT;
        let slots = if lean { &self.lean } else { &self.full };
        slots
            .get(index)?
            .get_or_init(|| {
                // As the `regex` crate configures the engine for `RegexBuilder::new(pattern).unicode(false)`.
                let config = meta::Config::new()
                    .match_kind(regex_automata::MatchKind::LeftmostFirst)
                    .utf8_empty(true)
                    .nfa_size_limit(Some(10 << 20))
                    .hybrid_cache_capacity(2 << 20)
                    .auto_prefilter(!lean);
                meta::Builder::new()
                    .configure(config)
                    .syntax(syntax::Config::new().unicode(false).utf8(true))
                    .build(rule.pattern)
                    .ok()
            })
            .as_ref()
    }
}

/// A test of a text's bytes that wakes a rule without a keyword.
pub type Shape = fn(&[u8]) -> bool;

/// Every rule's keywords, indexed by their first two bytes (ASCII lowercased), for finding which
/// rules a text wakes.
///
/// A hook process scans one payload and exits, so what it pays is the build plus one short
/// scan. An aho-corasick automaton over the 200-odd keywords took about 2 M instructions to build,
/// a third of a whole `PostToolUse` hook; this index builds in a few thousand and scans at a few
/// instructions a byte, comparing keywords only where a two-byte start of one occurs.
#[derive(Debug)]
struct Keywords {
    /// A bit per two-byte start of some keyword.
    starts: Box<[u64; 1 << 10]>,
    /// For each word of `starts`, how many bits the words before it hold: with the bits below
    /// it in its own word, the rank of a start among all starts.
    before: Box<[u16; 1 << 10]>,
    /// Per start, in rank order, where its keywords begin in `entries`; one more at the end.
    firsts: Vec<u16>,
    /// Each keyword with its rule, sorted by start.
    entries: Vec<(&'static [u8], u8)>,
    /// A bit per rule with a keyword shorter than two bytes, which the index cannot hold: such
    /// a rule runs on every text (slower, never less safe).
    always: u128,
    /// The bit of each rule woken by a shape of the text, with the test of that shape.
    shapes: Vec<(u128, Shape)>,
}

impl Keywords {
    fn new(rules: &'static [Rule]) -> Keywords {
        let mut starts = Box::new([0u64; 1 << 10]);
        let mut sorted = Vec::new();
        let mut always = 0u128;
        let mut shapes = Vec::new();
        for (index, rule) in rules.iter().enumerate() {
            if let Some(shape) = rule.shape {
                shapes.push((1u128 << index, shape));
            }
            for keyword in rule.keywords.iter().map(|k| k.as_bytes()) {
                let Some(start) = Self::start(keyword) else {
                    always |= 1u128 << index;
                    continue;
                };
                starts[usize::from(start >> 6)] |= 1 << (start & 63);
                sorted.push((start, keyword, index as u8));
            }
        }
        sorted.sort_unstable_by_key(|(start, _, _)| *start);
        let mut before = Box::new([0u16; 1 << 10]);
        let mut total = 0u16;
        for (count, word) in before.iter_mut().zip(starts.iter()) {
            *count = total;
            total += word.count_ones() as u16;
        }
        let mut firsts = Vec::with_capacity(usize::from(total) + 1);
        for (at, (start, _, _)) in sorted.iter().enumerate() {
            if at == 0 || sorted[at - 1].0 != *start {
                firsts.push(at as u16);
            }
        }
        firsts.push(sorted.len() as u16);
        let entries = sorted.into_iter().map(|(_, keyword, rule)| (keyword, rule)).collect();
        Keywords { starts, before, firsts, entries, always, shapes }
    }

    fn start(bytes: &[u8]) -> Option<u16> {
        match bytes {
            [a, b, ..] => {
                Some(u16::from_be_bytes([a.to_ascii_lowercase(), b.to_ascii_lowercase()]))
            }
            _ => None,
        }
    }

    /// A bit per rule with a keyword in `text` (ASCII case ignored, as the keywords are
    /// lowercase), plus the rules that always run.
    fn rules_in(&self, text: &[u8]) -> u128 {
        let mut found = self.always;
        let Some((first, rest)) = text.split_first() else { return found };
        // Each byte is lowercased once, and carried over as the first of the next pair.
        let mut previous = first.to_ascii_lowercase();
        for (at, byte) in rest.iter().enumerate() {
            let byte = byte.to_ascii_lowercase();
            let start = u16::from_be_bytes([previous, byte]);
            previous = byte;
            // `at` is where the pair starts: `rest` begins one byte into `text`.
            let (word, bit) = (usize::from(start >> 6), 1u64 << (start & 63));
            let bits = self.starts[word];
            if bits & bit == 0 {
                continue;
            }
            let rank = usize::from(self.before[word]) + (bits & (bit - 1)).count_ones() as usize;
            let (first, end) = (usize::from(self.firsts[rank]), usize::from(self.firsts[rank + 1]));
            for (keyword, rule) in &self.entries[first..end] {
                let rule = 1u128 << rule;
                if found & rule == 0
                    && text
                        .get(at..at + keyword.len())
                        .is_some_and(|t| t.eq_ignore_ascii_case(keyword))
                {
                    found |= rule;
                }
            }
        }
        found
    }
}

/// A process-wide shared instance, built on first use.
pub fn redactor() -> &'static Redactor {
    static SHARED: LazyLock<Redactor> = LazyLock::new(Redactor::new);
    &SHARED
}

/// Replaces every accepted match of one rule; `None` when nothing was replaced.
fn apply(rule: &Rule, regex: &Regex, text: &str) -> Option<(String, usize)> {
    let mut replacer = Replacer::new(text);
    let mut spans = Vec::new();
    for caps in regex.captures_iter(text) {
        let caps = Caps { text, caps };
        spans.clear();
        secret_spans(rule, &caps, &mut spans);
        for &(start, end, quoted) in &spans {
            if replacer.may_replace(start, end)
                && rule.guard.allows(text, &caps, start..end, quoted)
            {
                replacer.replace(start, end, rule.name);
            }
        }
    }
    replacer.finish()
}

/// Builds the redacted copy of a text, one secret at a time, in order.
struct Replacer<'t> {
    text: &'t str,
    out: String,
    copied: usize,
    count: usize,
    /// Markers left by earlier rules, in order. A match reaching into one would cut it in half
    /// (`https://[REDACTED:github-pat]@…` read as user `[REDACTED`, password `github-pat]`), so
    /// such secrets are skipped: the secret there is already gone. Looked up by position, as the
    /// secrets of one rule need not come in order (a command's output lies past its match, where
    /// the next match may start).
    markers: Vec<(usize, usize)>,
}

impl<'t> Replacer<'t> {
    fn new(text: &'t str) -> Replacer<'t> {
        let markers = text
            .match_indices("[REDACTED:")
            .filter_map(|(start, _)| {
                let close = text.as_bytes()[start..].iter().take(64).position(|&b| b == b']')?;
                Some((start, start + close + 1))
            })
            .collect();
        Replacer { text, out: String::new(), copied: 0, count: 0, markers }
    }

    /// True when `start..end` lies past what was replaced and clear of every marker.
    fn may_replace(&self, start: usize, end: usize) -> bool {
        let next = self.markers.partition_point(|&(_, marker_end)| marker_end <= start);
        start >= self.copied
            && self.markers.get(next).is_none_or(|&(marker_start, _)| marker_start >= end)
    }

    /// Replaces `start..end` (character boundaries, past what was replaced) by a marker.
    fn replace(&mut self, start: usize, end: usize, name: &str) {
        if !self.may_replace(start, end) {
            return;
        }
        if self.count == 0 {
            self.out.reserve(self.text.len());
        }
        // Regex offsets on a `str` always fall on character boundaries, and so do the quote
        // adjustments and the splits of the span finders (at ASCII bytes), so these slices
        // cannot panic.
        self.out.push_str(&self.text[self.copied..start]);
        self.out.push_str("[REDACTED:");
        self.out.push_str(name);
        self.out.push(']');
        self.copied = end;
        self.count += 1;
    }

    /// The redacted text and how many secrets went; `None` when nothing was replaced.
    fn finish(mut self) -> Option<(String, usize)> {
        if self.count == 0 {
            return None;
        }
        self.out.push_str(&self.text[self.copied..]);
        Some((self.out, self.count))
    }
}

/// Applies `each` to every string leaf of a JSON value, with the key it is under (an array's
/// items are under the array's key); the sum of what it returns.
fn each_leaf(
    value: &mut Value,
    key: &str,
    each: &mut impl FnMut(&str, &mut String) -> usize,
) -> usize {
    match value {
        Value::String(text) => each(key, text),
        Value::Array(items) => items.iter_mut().map(|item| each_leaf(item, key, each)).sum(),
        Value::Object(map) => map.iter_mut().map(|(key, item)| each_leaf(item, key, each)).sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// Words in a JSON key that say its value identifies something (`session_id`, `toolUseId`,
/// `transcript_path`): random, and no secret.
const IDENTIFIER_KEY_WORDS: &str =
    "id ids uuid path cwd dir url uri name type kind event model version hash sha digest";

/// One match of a rule's regex, with its groups.
struct Caps<'t> {
    text: &'t str,
    caps: regex_automata::util::captures::Captures,
}

/// A group that took part in a match.
#[derive(Clone, Copy)]
struct Group<'t> {
    text: &'t str,
    start: usize,
    end: usize,
}

impl<'t> Caps<'t> {
    fn name(&self, name: &str) -> Option<Group<'t>> {
        self.group(self.caps.get_group_by_name(name)?)
    }

    fn get(&self, index: usize) -> Option<Group<'t>> {
        self.group(self.caps.get_group(index)?)
    }

    fn group(&self, span: regex_automata::Span) -> Option<Group<'t>> {
        // Spans fall on character boundaries (the patterns match UTF-8 only), so `get` never
        // misses; it keeps a broken invariant from being a panic.
        self.text.get(span.range()).map(|_| Group {
            text: self.text,
            start: span.start,
            end: span.end,
        })
    }
}

impl<'t> Group<'t> {
    fn as_str(&self) -> &'t str {
        &self.text[self.start..self.end]
    }

    fn start(&self) -> usize {
        self.start
    }

    fn end(&self) -> usize {
        self.end
    }

    fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// The secrets of one match, as [`secret_span`] gives them, in order.
fn secret_spans(rule: &Rule, caps: &Caps<'_>, spans: &mut Vec<(usize, usize, bool)>) {
    match rule.spans {
        Spans::Group => spans.extend(secret_span(rule, caps)),
        Spans::TableColumn => {
            if let Some(rows) = caps.name("rows") {
                table_column(caps.text, rows.start()..rows.end(), spans);
            }
        }
        Spans::StringArguments => {
            if let Some(args) = caps.name("args") {
                string_arguments(caps.text, args.start()..args.end(), spans);
            }
        }
        Spans::CommandOutput => {
            if let Some(command) = caps.get(0) {
                command_output(caps.text, command.end(), spans);
            }
        }
    }
}

/// Byte range of the secret in a match, and whether surrounding quotes were trimmed off it.
fn secret_span(rule: &Rule, caps: &Caps<'_>) -> Option<(usize, usize, bool)> {
    let found = match rule.secret_group {
        Some(name) => caps.name(name)?,
        None => caps.get(0)?,
    };
    let bytes = found.as_str().as_bytes();
    match (bytes.first(), bytes.last()) {
        (Some(&open @ (b'"' | b'\'')), Some(&close)) if bytes.len() >= 2 && open == close => {
            Some((found.start() + 1, found.end() - 1, true))
        }
        _ => Some((found.start(), found.end(), false)),
    }
}

impl Guard {
    fn allows(self, text: &str, caps: &Caps<'_>, secret: Range<usize>, quoted: bool) -> bool {
        let value = &text[secret.clone()];
        match self {
            Guard::None => true,
            Guard::HasDigit => value.bytes().any(|b| b.is_ascii_digit()),
            Guard::Opaque => is_opaque(value),
            Guard::NumericIdPrefix => base64_of_digits(value.split('.').next().unwrap_or("")),
            Guard::Context => caps.name("before").is_some() || caps.name("after").is_some(),
            Guard::NotPlaceholder => !is_placeholder(value),
            Guard::Random => is_random(value),
            Guard::Assignment => is_assigned_secret(text, caps, secret, quoted),
        }
    }
}

/// The [`Guard::Assignment`] checks. Config and code look alike (`password: hunter2` in YAML,
/// `password: SecretStr` in Python, `Token: "#cccccc",` in a theme), so a value must also sit
/// where config puts values. Tuned on real code (the cargo registry, Python's standard library)
/// and real agent payloads (the recorded fixtures in the testkit crate).
fn is_assigned_secret(text: &str, caps: &Caps<'_>, secret: Range<usize>, quoted: bool) -> bool {
    let Some(key) = caps.name("key") else {
        return false;
    };
    let value = &text[secret.clone()];
    if !is_secret_key_name(key.as_str())
        || is_placeholder(value)
        || squash(value) == squash(key.as_str())
    {
        return false;
    }
    // A word of letters (or a kebab name) is prose or an identifier (`--password options`,
    // `auth = authorizer`, `private_key: "_RSAPrivateKey"`, `hdr = "Proxy-Authorization"`)
    // unless the syntax says it is data (`KEY=word`, JSON).
    let word_like = value.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'-');
    // So is a number, version, date or OID (`= -9841`, `'1.3.6.1.5.5.7.3.1'`) in code.
    let numeric = value.bytes().all(|b| b.is_ascii_digit() || b"+-.:".contains(&b));
    // A command-line flag (`--token abc`) has no separator.
    let Some(sep) = caps.name("sep") else {
        return !word_like;
    };
    let opening_quote = caps.name("q").is_some_and(|quote| !quote.is_empty());
    let json_key = opening_quote && caps.name("qe").is_some_and(|quote| !quote.is_empty());
    // `KEY=value` with nothing around the `=` is shell or env syntax; spaced, it may be code.
    let tight = sep.as_str() == "="
        && !text[..sep.start()].ends_with([' ', '\t'])
        && !text[sep.end()..].starts_with([' ', '\t']);
    // A full-width colon (`AccessKeySecret：…`) is never code syntax: it is Chinese prose or a
    // console's copy button, wherever it stands.
    let wide = sep.as_str() == "：";
    // Only the bytes next to the match are looked at, never the whole line: a minified JSON line
    // can be megabytes long and hold thousands of matches.
    let before_key = text[..key.start()].trim_end_matches([' ', '\t', '-']);
    let starts_line = is_line_start(before_key);
    // `{ user: 'a', pass: 'x' }`: a quoted value under a key that follows `{` or `,` is a
    // JavaScript object's data.
    let in_object = quoted && before_key.ends_with(['{', ',']);
    // `key: value` is YAML or a header only where a line or a string starts ("X-Api-Key: …" in a
    // curl argument); mid-line it is prose ("invalid token: expired"), and after a dotted key
    // it is a Python or JS mapping (`Token.Comment: "italic"`).
    if sep.as_str() == ":"
        && !opening_quote
        && (!(starts_line || in_object) || is_dotted_path(key.as_str()))
    {
        return false;
    }
    // What follows the value, past its closing quote (ASCII, so the slice stays on a boundary).
    let after = &text[secret.end + usize::from(quoted)..];
    let next_visible = after.bytes().find(|b| !matches!(b, b' ' | b'\t' | b'\r'));
    if quoted {
        // An operator after the closing quote makes the string part of an expression
        // (`'%s@%s' % args`, `'user:' + name`); a quoted word or colour outside JSON and env
        // syntax is code (`"bold"`, `"#cccccc"`).
        let ends = tight
            || matches!(
                next_visible,
                None | Some(b'\n' | b'#' | b'/' | b',' | b';' | b')' | b']' | b'}' | b'"' | b'\'')
            );
        return ends && (json_key || tight || !(word_like || numeric || is_colour(value)));
    }
    let ends_line = tight
        || after.starts_with('&')
        || (wide && after.starts_with(['，', '。', '；', '）', '、']))
        || matches!(next_visible, None | Some(b'\n' | b'#' | b'"' | b'\'' | b'`'));
    // A dotted value is a path in code (`self.token`, `settings.api_key`) but data after an
    // environment variable's tight `=` (`DB_PASSWORD=Summer.Breeze2024`), and never a path when
    // a part of it looks generated (`hvs.CAESIJ…`).
    let dotted_code = is_code_path(value) && !(tight && is_env_name(key.as_str()));
    let code_like = value.starts_with([':', '*', '='])
        || value.contains("::")
        || after.starts_with([',', ';', ')', ']', '}'])
        || dotted_code
        || ((word_like || numeric) && !tight);
    ends_line && !code_like
}

/// True when `before` (the text before a key, trailing blanks and dashes removed) ends where a
/// line starts: nothing, a line break, or the `   12→` line number of a file listing.
fn is_line_start(before: &str) -> bool {
    let before = match before.strip_suffix('→') {
        Some(numbered) => {
            let number = numbered.trim_end_matches(|c: char| c.is_ascii_digit());
            if number.len() == numbered.len() {
                return false;
            }
            number.trim_end_matches([' ', '\t'])
        }
        None => before,
    };
    before.is_empty() || before.ends_with('\n')
}

/// `DB_PASSWORD`, `VAULT_TOKEN`: an environment variable's name (capitals, digits, `_`).
fn is_env_name(key: &str) -> bool {
    key.bytes().any(|b| b.is_ascii_uppercase())
        && key.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// A part of a dotted value that no one would name a field: capitals, small letters and digits
/// mixed (`Breeze2024`), or 16 characters or more with a digit (`CAESIJ3kPq9…`).
fn looks_generated(part: &str) -> bool {
    let has = |test: fn(&u8) -> bool| part.bytes().any(|b| test(&b));
    let digit = has(u8::is_ascii_digit);
    (digit && has(u8::is_ascii_uppercase) && has(u8::is_ascii_lowercase))
        || (digit && part.len() >= 16)
}

/// A dotted path none of whose parts [`looks_generated`]: `settings.api_key`, not
/// `hvs.CAESIJ3kPq9…`.
fn is_code_path(value: &str) -> bool {
    is_dotted_path(value) && !value.split('.').any(looks_generated)
}

/// The [`Guard::Opaque`] check.
fn is_opaque(value: &str) -> bool {
    let bytes = value.as_bytes();
    let letters = bytes.iter().any(u8::is_ascii_alphabetic);
    let digits = bytes.iter().any(u8::is_ascii_digit);
    let symbols = bytes.iter().any(|b| b"!@#$%^&*?~+=".contains(b));
    let numeric = bytes.iter().all(|b| b.is_ascii_digit() || b"+-.:".contains(b));
    // `src/auth/token.rs`, `v2/tokens.json`: a path, not a secret.
    let path = value.contains('/')
        && value.rsplit_once('.').is_some_and(|(_, ext)| {
            (1..=5).contains(&ext.len()) && ext.bytes().all(|b| b.is_ascii_lowercase())
        });
    bytes.len() >= 6
        && bytes.first().is_some_and(u8::is_ascii_alphanumeric)
        && letters
        && (digits || symbols)
        && !numeric
        && !path
        && !is_code_path(value)
        && !is_placeholder(value)
}

/// True when `part` is unpadded base64 (standard or URL alphabet) of at least 17 ASCII digits.
fn base64_of_digits(part: &str) -> bool {
    let sextet = |b: u8| match b {
        b'A'..=b'Z' => Some(b - b'A'),
        b'a'..=b'z' => Some(b - b'a' + 26),
        b'0'..=b'9' => Some(b - b'0' + 52),
        b'+' | b'-' => Some(62),
        b'/' | b'_' => Some(63),
        _ => None,
    };
    let mut bits = 0u32;
    let mut held = 0;
    let mut decoded = 0;
    for byte in part.bytes() {
        let Some(value) = sextet(byte) else {
            return false;
        };
        bits = (bits << 6 | u32::from(value)) & 0xFFFF;
        held += 6;
        if held >= 8 {
            held -= 8;
            if !((bits >> held) as u8).is_ascii_digit() {
                return false;
            }
            decoded += 1;
        }
    }
    decoded >= 17
}

/// [`is_secret_key_name`] for a key of a JSON object, remembered per thread: the same few dozen
/// keys recur in every payload an agent sends, and a history import reads millions of them.
fn is_secret_json_key(key: &str) -> bool {
    /// Longer keys are rare and not worth keeping; the table is emptied when it fills, so
    /// hostile input with ever new keys costs a check each, never unbounded memory.
    const KEY_MAX: usize = 64;
    const KEYS_KEPT: usize = 4096;
    thread_local! {
        static SEEN: RefCell<HashMap<Box<str>, bool>> = RefCell::default();
    }
    if key.len() > KEY_MAX {
        return is_secret_key_name(key);
    }
    SEEN.with_borrow_mut(|seen| {
        if let Some(&secret) = seen.get(key) {
            return secret;
        }
        let secret = is_secret_key_name(key);
        if seen.len() >= KEYS_KEPT {
            seen.clear();
        }
        seen.insert(key.into(), secret);
        secret
    })
}

/// True when a key name (`GITHUB_TOKEN`, `"apiKey"`, `--password`) says its value is a secret:
/// its squashed form contains one of [`SECRET_KEY_PARTS`] and none of its words is one of
/// [`NOT_SECRET_KEY_WORDS`].
fn is_secret_key_name(key: &str) -> bool {
    let squashed = squash(key);
    // `PWD` and `OLDPWD` are the working directory, printed by every `env`.
    if squashed == "pwd" || squashed == "oldpwd" {
        return false;
    }
    (SECRET_KEY_PARTS.split(' ').any(|part| squashed.contains(part)) || has_word(key, "pass"))
        && !has_word(key, NOT_SECRET_KEY_WORDS)
}

/// Key-name fragments that make a `key = value` a secret, matched on the key squashed (so
/// `API_KEY`, `apiKey` and `api-key` all contain `apikey`). `pass` counts only as a word of its
/// own (`SMTP_PASS`, `pass:`), never inside one (`bypass`, `passthrough`). A registry login
/// (`.dockerconfigjson`) is a secret too.
const SECRET_KEY_PARTS: &str = "token secret password passwd pwd apikey accesskey privatekey \
    auth credential passphrase dockerconfigjson dockercfg";

/// Words in a key name that say the value is about a secret, not the secret itself
/// (`max_tokens`, `token_url`, `secret_name`, `author`). Token counts are everywhere in what
/// agents send.
const NOT_SECRET_KEY_WORDS: &str = "author authors authored coauthor authority authorities \
    realm tokens tokenizer count limit max min size length len budget usage latency ms time \
    progress url uri endpoint host \
    type kind name file path dir env var method provider mode enabled required expire expires \
    expiry expiration ttl timeout policy hint label placeholder field format prefix scope scopes \
    store helper manager backend stdin strategy version";

/// Values that stand for a secret rather than being one, so redacting them would only hide useful
/// text: shorter than 3 characters, `$VAR`/`${VAR}`/`$(cmd)`, `<your-token>`, `{{ x }}`, `%VAR%`,
/// runs of `x`/`*`/`.`, `your…`/`…_here`, an earlier `[REDACTED:…]`, and these words (type names
/// from `token: string;`, schemes from `Authorization: Bearer`, permissions from
/// `id-token: write`, switches from `MODULE_PWD_STATE: yes`).
const PLACEHOLDER_WORDS: &str = "changeme change_me changeit password passwd secret token null \
    none nil true false undefined redacted example placeholder dummy string str number bool \
    boolean int integer any unknown object bytes required optional bearer basic bot digest self \
    read write yes no on off enabled disabled";

/// True for a value that stands for a secret (see [`PLACEHOLDER_WORDS`]).
fn is_placeholder(value: &str) -> bool {
    let value = value.trim();
    let lower = value.to_ascii_lowercase();
    value.chars().nth(2).is_none()
        || value.contains("[REDACTED:")
        || value.starts_with('$')
        || value.starts_with("{{")
        || (value.starts_with('<') && value.ends_with('>'))
        || (value.starts_with('%') && value.ends_with('%'))
        || value
            .chars()
            .all(|c| matches!(c, 'x' | 'X' | '*' | '.' | '-' | '_' | '#' | ':' | '•' | '…'))
        || PLACEHOLDER_WORDS.split_ascii_whitespace().any(|word| word == lower)
        || lower.starts_with("your")
        || lower.ends_with("_here")
        || lower.ends_with("-here")
}

/// Lowercase ASCII letters and digits only.
fn squash(text: &str) -> String {
    text.bytes()
        .filter(u8::is_ascii_alphanumeric)
        .map(|b| char::from(b.to_ascii_lowercase()))
        .collect()
}

/// True when one of the space-separated `words` is a word of `key`, split at punctuation and at
/// camelCase humps and before digits (`maxTokens` has `max` and `Tokens`, `author2` has
/// `author`).
fn has_word(key: &str, words: &str) -> bool {
    key.split(|c: char| !c.is_ascii_alphanumeric()).any(|segment| {
        let bytes = segment.as_bytes();
        let mut start = 0;
        for end in 1..=bytes.len() {
            let hump = end < bytes.len()
                && ((bytes[end].is_ascii_uppercase() && bytes[end - 1].is_ascii_lowercase())
                    || (bytes[end].is_ascii_digit() && bytes[end - 1].is_ascii_alphabetic()));
            if end == bytes.len() || hump {
                let word = &segment[start..end];
                if words.split_ascii_whitespace().any(|known| word.eq_ignore_ascii_case(known)) {
                    return true;
                }
                start = end;
            }
        }
        false
    })
}

/// `self.token`, `process.env.API_KEY`: code, not a value.
fn is_dotted_path(value: &str) -> bool {
    value.contains('.')
        && value.split('.').all(|part| {
            part.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

/// `#fff`, `#a3aab2`: a colour, as in a syntax theme's `Token: "#cccccc"`.
fn is_colour(value: &str) -> bool {
    value.strip_prefix('#').is_some_and(|hex| {
        matches!(hex.len(), 3 | 4 | 6 | 8) && hex.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// The [`Guard::Random`] check, for values that only their surroundings make secrets (a table's
/// `api_key` column, a credentials constructor's arguments, what `gh auth token` printed):
/// gitleaks' test for its generic rules, at least 16 characters at 3.5 bits of Shannon entropy
/// or more, plus what that lets through in code and output: words and identifiers
/// (`OPENAI_API_KEY`, `authorizations:create`), paths, URLs, e-mail addresses, placeholders.
fn is_random(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() < 16 || !bytes.iter().all(u8::is_ascii_graphic) {
        return false;
    }
    // An identifier or a path is made of words: every part short, or letters with at most three
    // digits after them (`my-service-v2`, `oauth2-client`, `src/auth/token.rs`, `sha256`,
    // `2024-05-01T10:00:00Z`).
    let wordy = value.split(['-', '_', '.', ':', '/', '\\']).all(|part| {
        let letters = part.trim_end_matches(|c: char| c.is_ascii_digit());
        part.len() <= 4
            || (part.len() - letters.len() <= 3 && letters.bytes().all(|b| b.is_ascii_alphabetic()))
    });
    !wordy
        && !value.contains("://")
        && !value.contains('@')
        && !value.starts_with(['/', '.', '~', '$', '%', '{', '<'])
        && !is_code_path(value)
        && !is_placeholder(value)
        && entropy_bits(bytes) >= 3.5
}

/// Shannon entropy of the bytes, in bits a byte.
fn entropy_bits(bytes: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[usize::from(b)] += 1;
    }
    let len = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&count| count > 0)
        .map(|&count| {
            let share = f64::from(count) / len;
            -share * share.log2()
        })
        .sum()
}

/// The cells of one line of a table, split at `|` and `│`, each with its offset in the line.
fn table_cells(line: &str) -> Vec<(usize, &str)> {
    let mut cells = Vec::new();
    let mut start = 0;
    for (at, c) in line.char_indices() {
        if c == '|' || c == '│' {
            cells.push((start, &line[start..at]));
            start = at + c.len_utf8();
        }
    }
    cells.push((start, &line[start..]));
    cells
}

/// A table's border or header rule: `|---|:--|`, `------+------`, `+====+`, `├──┼──┤`.
fn is_table_border(line: &str) -> bool {
    line.chars().any(|c| matches!(c, '-' | '=' | '─' | '═'))
        && line.chars().all(|c| {
            matches!(c, ' ' | '\t' | '\r' | '-' | '=' | '+' | ':' | '|') || ('─'..='╿').contains(&c)
        })
}

/// A column header that says its cells are secrets: `api_key`, `Password`, `Secret Access Key`,
/// but not `token_count` or `auth_url`, and not a line of shell (`echo $TOKEN `).
fn is_secret_column(header: &str) -> bool {
    let header = header.trim();
    header.len() <= 40
        && header.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-. ".contains(&b))
        && is_secret_key_name(header)
}

/// [`Spans::TableColumn`]: the cells, in the rows of `rows`, of the columns its first line names
/// as secrets. Rows are matched to the header by their number of cells; a line with another
/// number ends the table, and borders are passed over.
fn table_column(text: &str, rows: Range<usize>, spans: &mut Vec<(usize, usize, bool)>) {
    let mut start = rows.start;
    let mut lines = text[rows].split_inclusive('\n').map(|line| {
        let at = start;
        start += line.len();
        (at, line.trim_end_matches(['\n', '\r']))
    });
    let Some((_, header)) = lines.next() else {
        return;
    };
    let columns: Vec<bool> =
        table_cells(header).into_iter().map(|(_, cell)| is_secret_column(cell)).collect();
    if !columns.contains(&true) {
        return;
    }
    for (at, line) in lines {
        if is_table_border(line) {
            continue;
        }
        let cells = table_cells(line);
        if cells.len() != columns.len() {
            break;
        }
        for ((offset, cell), _) in cells.into_iter().zip(&columns).filter(|(_, secret)| **secret) {
            // Blanks are ASCII, so the trimmed cell starts and ends on character boundaries.
            let value = cell.trim_matches([' ', '\t']);
            let from = at + offset + (cell.len() - cell.trim_start_matches([' ', '\t']).len());
            if !value.is_empty() {
                spans.push((from, from + value.len(), false));
            }
        }
    }
}

/// [`Spans::StringArguments`]: the string literals (`"…"`, `'…'`, `` `…` ``, escapes allowed)
/// in `args`, without their quotes.
fn string_arguments(text: &str, args: Range<usize>, spans: &mut Vec<(usize, usize, bool)>) {
    let bytes = text.as_bytes();
    let mut at = args.start;
    while at < args.end {
        let quote = bytes[at];
        if !matches!(quote, b'"' | b'\'' | b'`') {
            at += 1;
            continue;
        }
        let mut end = at + 1;
        while end < args.end && bytes[end] != quote {
            end += if bytes[end] == b'\\' { 2 } else { 1 };
        }
        if end >= args.end {
            return;
        }
        // Both quotes are ASCII bytes, so the literal's bounds are character boundaries.
        spans.push((at + 1, end, true));
        at = end + 1;
    }
}

/// How many lines after a command [`command_output`] looks at.
const OUTPUT_LINES: usize = 20;

/// [`Spans::CommandOutput`]: the words on the lines after `from` (where a command's line ends),
/// up to [`OUTPUT_LINES`] of them or the next prompt (`$ `, `% `, `❯ `). Words are split at
/// blanks, quotes, brackets, `,;|│` and box drawing, so a token in a JSON answer or a table
/// cell stands alone; the guard tells a token from the other words.
fn command_output(text: &str, from: usize, spans: &mut Vec<(usize, usize, bool)>) {
    let mut start = from;
    for line in text[from..].split_inclusive('\n').take(OUTPUT_LINES + 1) {
        let at = start;
        start += line.len();
        if at > from
            && ["$ ", "% ", "❯ "].iter().any(|prompt| line.trim_start().starts_with(prompt))
        {
            return;
        }
        let mut word = None;
        for (offset, c) in line.char_indices().chain([(line.len(), ' ')]) {
            let separator =
                c.is_whitespace() || "\"'`,;|()[]{}<>".contains(c) || ('─'..='╿').contains(&c);
            match (separator, word) {
                (false, None) => word = Some(offset),
                (true, Some(begin)) => {
                    spans.push((at + begin, at + offset, false));
                    word = None;
                }
                _ => {}
            }
        }
    }
}

/// True where a Mailgun key of the newer form may be: 32 hex digits, `-`, 8, `-`, 8.
fn has_mailgun_key_shape(text: &[u8]) -> bool {
    has_separated_runs(text, b'-', u8::is_ascii_hexdigit, &[32, 8, 8])
}

/// True where a Discord bot token may be: 24 base64url characters or more, `.`, 6, `.`, 27.
fn has_discord_token_shape(text: &[u8]) -> bool {
    let base64url = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-';
    has_separated_runs(text, b'.', base64url, &[24, 6, 27])
}

/// True when `text` holds runs of `class` bytes of the given `lengths` (at least), one
/// `separator` between each two, looked for only where a separator occurs.
fn has_separated_runs(
    text: &[u8],
    separator: u8,
    class: fn(&u8) -> bool,
    lengths: &[usize],
) -> bool {
    let Some((&first, rest)) = lengths.split_first() else {
        return false;
    };
    let run = |range: Range<usize>| text.get(range).is_some_and(|part| part.iter().all(class));
    memchr::memchr_iter(separator, text).any(|at| {
        let mut next = at;
        at >= first
            && run(at - first..at)
            && rest.iter().enumerate().all(|(index, &len)| {
                let ends = index + 1 == rest.len() || text.get(next + 1 + len) == Some(&separator);
                let found = ends && run(next + 1..next + 1 + len);
                next += 1 + len;
                found
            })
    })
}

/// True where a table may name a secret in its header: a line holding a `|` (or `│`) and a word
/// of [`TABLE_HEADER_WORDS`], with a line after it.
fn has_secret_table_header(text: &[u8]) -> bool {
    let mut from = 0;
    // Only the lines with a pipe are looked at: `|`, or the lead byte of `│` (U+2502).
    while let Some(found) = memchr::memchr2(b'|', 0xE2, &text[from..]) {
        let at = from + found;
        let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |newline| newline + 1);
        let Some(end) = memchr::memchr(b'\n', &text[at..]).map(|newline| at + newline) else {
            return false;
        };
        let line = &text[start..end];
        if line.contains(&b'|') || line.windows(3).any(|w| w == "│".as_bytes()) {
            let named = TABLE_HEADER_WORDS.iter().any(|word| {
                line.windows(word.len()).any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
            });
            if named && end + 1 < text.len() {
                return true;
            }
        }
        from = end + 1;
    }
    false
}

/// Words of which a column header naming secrets holds one (as the table rule's regex asks).
const TABLE_HEADER_WORDS: &[&str] =
    &["token", "secret", "passw", "pwd", "key", "auth", "credential", "passphrase"];

/// Drops `<private>…</private>` spans (case-insensitive tags, multi-line, several spans; an
/// unclosed `<private>` drops everything after it). Returns `Cow::Borrowed` when there is nothing
/// to drop. Nested spans count depth, so `<private>a<private>b</private>c</private>` drops all of
/// it; a stray `</private>` outside any span is ordinary text and kept.
pub fn drop_private(text: &str) -> Cow<'_, str> {
    const OPEN: &[u8] = b"<private>";
    const CLOSE: &[u8] = b"</private>";
    let bytes = text.as_bytes();
    let starts = |at: usize, tag: &[u8]| {
        bytes.get(at..at + tag.len()).is_some_and(|found| found.eq_ignore_ascii_case(tag))
    };
    let mut kept: Option<String> = None;
    let mut depth = 0usize;
    let mut keep_from = 0;
    let mut at = 0;
    // Every index used for slicing is the position of an ASCII `<` or just past an ASCII tag, so
    // always a character boundary.
    while let Some(offset) = memchr::memchr(b'<', &bytes[at..]) {
        let tag = at + offset;
        if starts(tag, OPEN) {
            if depth == 0 {
                kept.get_or_insert_with(String::new).push_str(&text[keep_from..tag]);
            }
            depth += 1;
            at = tag + OPEN.len();
        } else if depth > 0 && starts(tag, CLOSE) {
            depth -= 1;
            at = tag + CLOSE.len();
            if depth == 0 {
                keep_from = at;
            }
        } else {
            at = tag + 1;
        }
    }
    match kept {
        None => Cow::Borrowed(text),
        Some(mut kept) => {
            if depth == 0 {
                kept.push_str(&text[keep_from..]);
            }
            Cow::Owned(kept)
        }
    }
}

/// True for paths whose content must never be stored, only the fact of access: `.env`, `.env.*`
/// (but not `.env.example`/`.env.sample`/`.env.template`), `.envrc`, `*.pem`, `*.key`, `*.p12`,
/// `*.pfx`, `*.kdbx`, `id_rsa*`/`id_ed25519*`/`id_ecdsa*`/`id_dsa*` (not `*.pub`), `.netrc`,
/// `_netrc`, `.pgpass`, `.npmrc`, `.pypirc`, `.git-credentials`, `secrets.yaml|yml|json`, and
/// `credentials`, `credentials.json`, `credentials.db`, `application_default_credentials.json`
/// under `.aws`, `.docker` or `gcloud` (plus `.docker/config.json`, which holds registry
/// logins). Takes a path as written (relative or absolute, `/` or `\` separators); names are
/// compared ASCII-case-insensitively, as on Windows and macOS.
pub fn is_sensitive_path(path: &str) -> bool {
    let path = path.trim().trim_matches(['"', '\'']);
    // Separators are ASCII, so slicing around one stays on character boundaries.
    let (dir, name) = match path.rfind(['/', '\\']) {
        Some(at) => (&path[..at], &path[at + 1..]),
        None => ("", path),
    };
    if name.is_empty() {
        return false;
    }
    // Compared without case and without a lowercased copy: every command word comes here.
    let is = |known: &str| name.eq_ignore_ascii_case(known);
    let starts = |prefix: &str| {
        name.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix))
    };
    if starts(".env.") {
        return !name[5..].split('.').any(|part| {
            ["example", "sample", "template"].iter().any(|plain| part.eq_ignore_ascii_case(plain))
        });
    }
    let mut dirs = dir.rsplit(['/', '\\']);
    if [
        ".env",
        ".envrc",
        ".netrc",
        "_netrc",
        ".pgpass",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        "secrets.yaml",
        "secrets.yml",
        "secrets.json",
    ]
    .into_iter()
    .any(is)
    {
        return true;
    }
    if ["credentials", "credentials.json", "credentials.db", "application_default_credentials.json"]
        .into_iter()
        .any(is)
    {
        return dirs.any(|dir| {
            [".aws", ".docker", "gcloud"].iter().any(|known| dir.eq_ignore_ascii_case(known))
        });
    }
    if is("config.json") {
        return dirs.next().is_some_and(|dir| dir.eq_ignore_ascii_case(".docker"));
    }
    let ssh_key = ["id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"].into_iter().any(starts);
    let extension = name.rsplit_once('.').map_or("", |(_, extension)| extension);
    (ssh_key && !extension.eq_ignore_ascii_case("pub"))
        || ["pem", "key", "p12", "pfx", "kdbx"]
            .iter()
            .any(|known| extension.eq_ignore_ascii_case(known))
}

/// True when a shell command line reads one of those files (`cat .env`, `less ~/.ssh/id_rsa`,
/// `source .env`, `grep X .env.local`, `cp secrets.yaml /tmp`…): any word of the command that
/// [`is_sensitive_path`] says yes to. Words are split at whitespace, quotes, `=`, `<`, `>`, `|`,
/// `&`, `;`, `(`, `)`, `{`, `}`, `[`, `]`, `,` and `:` (so `--env-file=.env`, `$(cat .env)`, `-v
/// ./secrets.yaml:/run/x`, `scp host:.netrc .` and a JSON payload's `"file_path":".env"`
/// count); a trailing `*` glob is also tried without it (`cat .env*`). Erring towards yes only
/// costs the output of one command, or the content of a payload spooled unfinished.
pub fn command_touches_sensitive_path(command: &str) -> bool {
    command
        .split(|c: char| c.is_whitespace() || "\"'`=<>|&;(){}[],:".contains(c))
        .filter(|word| !word.is_empty())
        .any(|word| is_sensitive_path(word) || is_sensitive_path(word.trim_end_matches('*')))
}

/// The rule that redacts `key = value` pairs, also used for JSON leaves under secret keys.
const GENERIC_RULE: &str = "secret-assignment";

/// Keywords of the generic rule: every key it accepts contains one of these.
#[rustfmt::skip]
const SECRET_WORDS: &[&str] = &[
    "token", "secret", "passw", "pwd", "auth", "credential", "passphrase",
    "api_key", "api-key", "api.key", "apikey", "access_key", "access-key", "access.key",
    "accesskey", "private_key", "private-key", "private.key", "privatekey",
    "dockerconfigjson", "dockercfg",
    // `pass` as a key of its own, never the `pass` of "passed" (every test run prints that).
    "_pass", "-pass", ".pass", "pass:", "pass=", "pass =", "pass\":", "pass':",
];

/// A word that names a secret in a table's header (see [`TABLE_HEADER_WORDS`]).
macro_rules! table_header_word {
    () => {
        r"(?i:token|secret|passw|pwd|key|auth|credential|passphrase)"
    };
}

/// Everything after the `-----BEGIN …-----` line of an armoured block: a line break (real,
/// JSON-escaped `\n`, or escaped twice, `\\n`, for JSON inside a JSON string), then base64,
/// header lines (`Proc-Type: 4,ENCRYPTED`), blank lines and the `  12→` line numbers of a file
/// listing, up to a `-----`. An unclosed block (truncated output) runs to the end of its base64.
macro_rules! armoured_body {
    () => {
        r"[ \t]*(?:\r?\n|(?:\\+r)?\\+n)(?:[A-Za-z0-9+/=:,.\s\\]+|-[A-Za-z0-9]|→)*"
    };
}

/// A `data:` or `stringData:` key and its block, as the `secret` group: a JSON object, or the
/// indented YAML lines below it (in a file listing, the lines whose text after `  12→` is
/// indented). Lines that start a new top-level key end it.
macro_rules! k8s_data {
    () => {
        concat!(
            r#"\b(?:stringData|data)["']?[ \t]*:[ \t]*(?:\r?\n)?(?P<secret>\{(?u:[^{}]*[^{}\s][^{}]*)\}"#,
            r"|(?m:^)(?:[ \t]*[0-9]+→[ \t]+|[ \t]+)(?u:[^0-9 \t\r\n])(?u:[^\r\n])*",
            r"(?:\r?\n(?:[ \t]*[0-9]+→[ \t]+|[ \t]+)(?u:[^0-9 \t\r\n])(?u:[^\r\n])*)*)"
        )
    };
}

/// What an unquoted value may go on with after a `&`. In a query string `&name=` starts the next
/// parameter, so the value stops before it; any other `&` is part of the value (`abc&def123`).
macro_rules! ampersand_continued {
    () => {
        r"(?:&(?:[A-Za-z0-9_.\-]*[+/~!@#$%^*?:][A-Za-z0-9_\-.+/=~!@#$%^*?:]*|[A-Za-z0-9_.\-]+))*"
    };
}

/// A double- or single-quoted string (escapes allowed), or an unquoted run of token characters
/// (with `&` as `ampersand_continued!` says), then an end: space, line end, `,;&`, a closing
/// bracket or quote.
macro_rules! assigned_value {
    () => {
        concat!(
            r#"(?P<secret>(?u:"(?:[^"\\\r\n]|\\.)*"|'(?:[^'\\\r\n]|\\.)*')"#,
            r"|[A-Za-z0-9_\-.+/=~!@#$%^*?:]+",
            ampersand_continued!(),
            r#")(?:[ \t\r\n,;&"'`)\]}\\]|，|。|；|）|、|$)"#
        )
    };
}

/// A context word, then up to 40 characters of `_API_KEY = "` before a provider's bare key.
macro_rules! near {
    ($context:literal, $secret:literal) => {
        concat!("(?i:", $context, r#")[A-Za-z0-9_ \t."':=\-]{0,40}?\b(?P<secret>"#, $secret, r")\b")
    };
}

const fn rule(
    name: &'static str,
    keywords: &'static [&'static str],
    pattern: &'static str,
    must_match: &'static str,
    must_not_match: &'static str,
) -> Rule {
    Rule {
        name,
        keywords,
        pattern,
        shape: None,
        secret_group: None,
        spans: Spans::Group,
        guard: Guard::None,
        must_match,
        must_not_match,
    }
}

impl Rule {
    /// Redact only the `secret` group.
    const fn redacting_group(self) -> Rule {
        Rule { secret_group: Some("secret"), ..self }
    }

    const fn guarded(self, guard: Guard) -> Rule {
        Rule { guard, ..self }
    }

    /// Wake on a shape of the text rather than a keyword.
    const fn woken_by(self, shape: Shape) -> Rule {
        Rule { shape: Some(shape), ..self }
    }

    /// Redact the parts of each match that `spans` finds.
    const fn redacting(self, spans: Spans) -> Rule {
        Rule { spans, ..self }
    }
}

// Order matters where rules overlap: armoured blocks first (they contain anything), provider
// prefixes before the shapes they share (`sk-ant-` before `sk-`, a JWT before the `Bearer` that
// carries it), and the generic `key = value` rules last, so they see the markers of the others.
// The examples are made up, with the real shape.
#[rustfmt::skip]
const RULES: &[Rule] = &[
    rule("private-key", &["private key-----"],
        concat!("-----BEGIN (?:RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY-----", armoured_body!(),
            "(?:-----END (?:RSA |EC |DSA |ENCRYPTED )?PRIVATE KEY-----)?"),
        "key.pem:\n-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\
         DEK-Info: AES-128-CBC,0A1B2C3D\n\nMIIEowIBAAKCAQEAx9f3kTq+/mZ0b8s=\n\
         -----END RSA PRIVATE KEY-----\ndone",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----"),
    rule("openssh-private-key", &["openssh private key"],
        concat!("-----BEGIN OPENSSH PRIVATE KEY-----", armoured_body!(),
            "(?:-----END OPENSSH PRIVATE KEY-----)?"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n\
         -----END OPENSSH PRIVATE KEY-----",
        "ssh-keygen writes a -----BEGIN OPENSSH PRIVATE KEY----- header"),
    rule("pgp-private-key", &["pgp private key block"],
        concat!("-----BEGIN PGP PRIVATE KEY BLOCK-----", armoured_body!(),
            "(?:-----END PGP PRIVATE KEY BLOCK-----)?"),
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nlQOYBF0jvHEBCADJ9yq0\n=a1B2\n\
         -----END PGP PRIVATE KEY BLOCK-----",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQENBF0jvHEB\n-----END PGP PUBLIC KEY BLOCK-----"),
    // The CSV the AWS console hands out: a header line, then rows of name, password and keys.
    rule("aws-credentials-csv", &["user name,password", "access key id,secret access key"],
        concat!(r"(?i:user name,password|access key id,secret access key)(?u:[^\r\n])*\r?\n",
            r"(?P<secret>(?u:[^\r\n,])*,(?u:[^\r\n])*(?:\r?\n(?u:[^\r\n,])*,(?u:[^\r\n])*)*)"),
        "$ cat ~/Downloads/credentials.csv\nUser name,Password,Access key ID,Secret access key,C\
         onsole login link\nci-bot,Kp9#vR2!qLw8,AKIAZ7QW3ERTY5UIOP2A,8sXq0Jk3mV+RtY7/uB1nLp4Zc9W\
         dEf6GhIjKlMnO,https://123456789012.signin.aws.amazon.com/console\n",
        "the export has the columns Access key ID,Secret access key and nothing else")
        .redacting_group(),
    // A Secret manifest's `data:`/`stringData:` block (YAML lines or a JSON object), whatever
    // its keys are called; `kind: Secret` may come before it (as written) or after it (as
    // `kubectl get -o yaml` prints it, keys sorted).
    rule("kubernetes-secret", &["secret"],
        concat!(r#"(?i:kind)["']?[ \t]*:[ \t]*["']?Secret\b["']?(?:(?u:[^\n]*)\n){0,20}?(?u:[^\n]*?)"#,
            k8s_data!()),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\ndata:\n  username: Y\
         WRtaW4=\n  password: UzNjcjN0LVBhc3M=\nstringData: {}\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  LOG_LEVEL: debug\n")
        .redacting_group(),
    rule("kubernetes-secret-data", &["secret"],
        concat!(k8s_data!(), r#"(?:(?u:[^\n]*)\n){0,20}?(?u:[^\n]*?)(?i:kind)["']?[ \t]*:[ \t]*["']?"#,
            r"Secret\b"),
        "$ kubectl get secret regcred -o json\n{\n    \"apiVersion\": \"v1\",\n    \"data\": {\n        \
         \".dockerconfigjson\": \"eyJhdXRocyI6eyJnaGNyLmlvIjp7ImF1dGgiOiJiMjkwT21kb2NGOXVNV0U9In\
         19fQ==\"\n    },\n    \"kind\": \"Secret\",\n",
        "data:\n  LOG_LEVEL: debug\nkind: ConfigMap\n").redacting_group(),
    // `.netrc` entries, on one line or several (`machine h login u password p`).
    rule("netrc-password", &["machine", "default"],
        concat!(r"\b(?:machine[ \t]+(?u:[^\s])+|default)",
            r"(?:\s+(?:login|account|port)[ \t]+(?u:[^\s])+)*\s+password[ \t]+(?P<secret>(?u:[^\s])+)"),
        "machine api.heroku.com\n  login me@example.com\n  password 5e1f7c2a-9b3d-4c8e-a6f0-1d2b\
         3c4d5e6f",
        "the default machine has no password set")
        .redacting_group().guarded(Guard::NotPlaceholder),
    // Providers' own prefixes (the families of gitleaks' default rules).
    rule("onepassword-secret-key", &["a3-"],
        r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})(?:-[A-Z0-9]{5}){3}\b",
        "Secret Key: A3-UJZDE8-GXD6NCF10EP-F91DH-ODZDO-C9IS0",
        "the A3-XXXXXX format of the account key"),
    rule("onepassword-service-account-token", &["ops_eyj"],
        r"\bops_eyJ[A-Za-z0-9+/]{100,}={0,3}",
        "export OP_SERVICE_ACCOUNT_TOKEN=ops_eyJjIhKtJ0RlgLKOmxgJTeKdNnFRIBXuDL7DxtpYlSXpfKtHF4v\
         UCsMehGAkWvj7FAc9QeWJKY40uvSwMFLZDe1f8rESQedUStPKR0CsTy4Qwb8DwkNhFdnXsiV",
        "service account tokens start with ops_eyJ"),
    rule("age-secret-key", &["age-secret-key-1"],
        r"\bAGE-SECRET-KEY-1[02-9AC-HJ-NP-Z]{58}\b",
        "# public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\nAGE-SECRE\
         T-KEY-10EEL92UE3GM36KCWF9TFWWQLTSJQF6H5GRAEEEEX7ERVYDU284RXQFXHPY",
        "age-keygen prints AGE-SECRET-KEY-1 and 58 more characters"),
    rule("alibaba-access-key-id", &["ltai"],
        r"\bLTAI[A-Za-z0-9]{12,20}\b",
        "阿里云 AccessKey ID：LTAI5t3nNyjOq9wMxEhh2FDE，请妥善保管",
        "LTAIFLAG and LTAI_PREFIX_CHECK").guarded(Guard::HasDigit),
    rule("tencent-secret-id", &["akid"],
        r"\bAKID[A-Za-z0-9]{32}\b",
        "tccli configure set secretId AKIDckSxKM2awH7C9HehwTp0136uXT3yKW5d",
        "AKIDENTIFIERS_ARE_NOT_KEYS_AT_ALL_1234").guarded(Guard::HasDigit),
    rule("atlassian-api-token", &["atatt3"],
        r"\bATATT3[A-Za-z0-9_\-=]{150,}",
        "JIRA_API_TOKEN=ATATT3xFfGF09NksnRH9ucAUsdMlHUvTCQCyEZDz-TddJ8HyS5SUkCnD8zRA9a9SkpXz9w3Q\
         lY7Zkuvqdt7s8Stqcbnr3yBdGBLEPH1qhT61qtc4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE2jBMptUsG\
         r7CmY_uCu3ZR1zTOlUcR64cXQLioDnkHI",
        "tokens made since 2023 start with ATATT3"),
    rule("artifactory-token", &["akcp", "cmvmd"],
        r"\b(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})\b",
        "curl -H 'X-JFrog-Art-Api: AKCpc5XlrWi0B26R08qzjI6GKFSufrdZSlB5er8bOfZqfM2oeq3hDavJA76rN\
         icHTp8hkqdlm' https://acme.jfrog.io\nREF=cmVmdGtuOjAxOj7tOtHWnsCGRlrwZbqcabUGJmGEp7CgQ0\
         PBQFI14zGtSnovm14T",
        "base64 of refs/heads/main is cmVmcy9oZWFkcy9tYWlu"),
    // Client secrets: three characters, a digit, `Q~`, then 31 to 34 more.
    rule("azure-ad-client-secret", &["q~"],
        concat!(r#"(?:^|[\\'"`\s>=:(,)])(?P<secret>[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.\-]{31,34})"#,
            r#"(?:[\\'"`\s<),]|$)"#),
        "AZURE_CLIENT_SECRET=\"UOi8Q~ZSgqbjG3uhkW.KFLf6xuI5aHUQPFeNBTxa\"",
        "a regex like [0-9]Q~ or ab1Q~short in prose").redacting_group(),
    rule("doppler-token", &["dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim."],
        r"\bdp\.(?:pt|st|sa|ct|scim)\.(?:[A-Za-z0-9_\-]{1,32}\.)?[A-Za-z0-9]{40,44}\b",
        "DOPPLER_TOKEN=dp.st.prd.vyfErGPmpGXafq0fjzLczbttOofL9H2WjQ5TY4MyWuU doppler run -- npm \
         start",
        "see dp.st.prd for the service token of prd"),
    rule("dynatrace-token", &["dt0c01."],
        r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b",
        "Api-Token dt0c01.5JSJC616I76BOFBCIXGY29DB.8P5QA3E68F7E4QEQPNO35YE4SCMEJVQTIA4D5RGN5S7S3\
         33H9MTF4BS3E62RYNNE",
        "tokens look like dt0c01.ABC.DEF"),
    rule("flyio-token", &["fo1_", "fm1a_", "fm1r_", "fm2_"],
        r"\b(?:fo1_[A-Za-z0-9_\-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3})",
        "FLY_API_TOKEN=fo1_lsHUqJoUD-_Ydua_5ZMs1SWOpQaPRYpzbLGViYXjU2J",
        "fly tokens create deploy prints fm2_ tokens"),
    rule("grafana-token", &["glc_", "glsa_", "eyjrijoi"],
        r"\b(?:glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|eyJrIjoi[A-Za-z0-9]{70,400}={0,3})",
        "GRAFANA_TOKEN=glsa_VVPqzPptEJQzhkPkenG5ZFJoC6vWCBiJ_6725a2a7\ncloud: glc_2drgd1QsO7jprB\
         GumXxY9B4bZWOz648JJnUfd7UACNWiP3sFd67JikEAvstq",
        "service account tokens start with glsa_"),
    rule("vault-token", &["hvs.", "hvb.", "hvr."],
        r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}",
        "VAULT_TOKEN=hvs.CAESIJVHzc0X0AWIRh-JUqBlIFXZ53Ncqe28_ajY75FnCttn6kfaqDeMqG3omjMyXHCabM6\
         JOF8EFd0Nhcy-1kGD2VD-eR1U",
        "vault token lookup shows hvs.* tokens, not hvb.abc"),
    rule("terraform-cloud-token", &["atlasv1"],
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}",
        "credentials \"app.terraform.io\" { token = \"RzmaZsV2GenFmt.atlasv1.yD7CHLn-xC_1hsYgBds\
         1ghxY5OokvQyx7eNWVQ4vnakJkS1pAWTN3lg8zV5yPU8d0F\" }",
        "the token has an .atlasv1. part"),
    rule("linear-api-key", &["lin_api_", "lin_oauth_"],
        r"\b(?:lin_api_[A-Za-z0-9]{40}|lin_oauth_[a-f0-9]{64})\b",
        "LINEAR_API_KEY=lin_api_ZOXzcycDeZ6dqmVe5Mvxrv99NcqVTSu7rtaUWM6Z",
        "personal keys start with lin_api_"),
    rule("mailchimp-api-key", &["-us"],
        r"\b[0-9a-f]{32}-us[0-9]{1,2}\b",
        "mailchimp.setConfig({ apiKey: '2073fec8df4f50947aaeb26c57d21fa5-us14', server: 'us14' }\
         )",
        "Accept-Language: en-us and the digest 2073fec8df4f50947aaeb26c57d21fa5-usage"),
    rule("new-relic-key", &["nrak-", "nrjs-", "nrii-"],
        r"\b(?:NRAK-[A-Z0-9]{27}|NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9\-]{32})\b",
        "NEW_RELIC_API_KEY=NRAK-1GEQFNG052LOI03P8HSSRRXQQM2",
        "user keys start with NRAK- and browser keys with NRJS-"),
    rule("notion-token", &["ntn_", "secret_"],
        r"\b(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})\b",
        "const notion = new Client({ auth: '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' \
         })\nold: secret_G3lCMqXXQ8agOMTNwncxvjcnqcMUP6n0a0uARxlNten",
        "let secret_key_base = secret_key_base_for_environment_and_release_2024;")
        .guarded(Guard::HasDigit),
    rule("openshift-token", &["sha256~"],
        r"\bsha256~[A-Za-z0-9_\-]{43}\b",
        "oc login --token=sha256~e-9i0mYtluYI0KN1gNT11cUzYZAa3u2olZU6uqbgsYl --server=https://ap\
         i.ocp:6443",
        "image@sha256:8f2d9c1e4b7a3f6e0d5c2b9a8e7f1d4c3b6a9e2f5d8c1b4a7e0f3d6c9b2a5e8f1"),
    rule("perplexity-api-key", &["pplx-"],
        r"\bpplx-[A-Za-z0-9]{48}\b",
        "PERPLEXITY_API_KEY=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",
        "keys start with pplx- and are 53 characters"),
    rule("planetscale-token", &["pscale_tkn_", "pscale_pw_", "pscale_oauth_"],
        r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.\-]{32,64}",
        "PLANETSCALE_SERVICE_TOKEN=pscale_tkn_oNzN2m1ElKncz8HkywhjpU05mc4J1WRcQ1uhyMDJ2OX",
        "passwords start with pscale_pw_"),
    rule("postman-api-key", &["pmak-"],
        r"\bPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}\b",
        "postman login --with-api-key PMAK-9d97dcbee500fe7ee5fc324b-db2e1142a21c402364f9572b85a8\
         e48f68",
        "keys start with PMAK-"),
    rule("pulumi-access-token", &["pul-"],
        r"\bpul-[a-f0-9]{40}\b",
        "PULUMI_ACCESS_TOKEN=pul-7ab165c58ac5831be38cb8cb4ba2e751989a0174",
        "pul-request-handler and pul-3f2a9c1e"),
    rule("rubygems-api-key", &["rubygems_"],
        r"\brubygems_[a-f0-9]{48}\b",
        "GEM_HOST_API_KEY: rubygems_9ddb14f71010b93b7d946bf54074e3248c801bef750110c5",
        "gem push uses rubygems_api_key from credentials"),
    rule("sentry-token", &["sntrys_", "sntryu_"],
        r"\b(?:sntrys_eyJ[A-Za-z0-9+/=_]{50,}|sntryu_[a-f0-9]{64}\b)",
        "SENTRY_AUTH_TOKEN=sntryu_7513064d6d59291f0cde2e5738713a818d8962058765a6ca7cff00d796c254\
         10",
        "org tokens start with sntrys_ and user tokens with sntryu_"),
    rule("slack-app-token", &["xapp-"],
        r"\b(?i:xapp)-[0-9]-[A-Z0-9]{6,}-[0-9]{6,}-[A-Za-z0-9]{20,}",
        "SLACK_APP_TOKEN=xapp-1-A0HGKWJBBCI-0101953816133-631129f34369aad80b891baf90d0d3bf16295d\
         06910bf3f5fb85967f532f3ab3",
        "socket mode needs an xapp-1- token"),
    rule("slack-config-token", &["xoxe.xoxb-", "xoxe.xoxp-", "xoxe-"],
        r"\bxoxe(?:\.xox[bp])?-[0-9]-[A-Za-z0-9]{100,}",
        "token: xoxe.xoxp-1-ZZF1BXNTQ186KYO3I8CWU7J29UK32QOIV3P6MRTJJPU7WKPUMQGKGMYJJTT1RMGGRNY3\
         CAZ1O6S3BJQZAP10OOLH31UQG0PZKQ143B07LUAY5GCQ8NKM7WG38N46BX7V03NLZ6HWDQRYZDAE00WQGOTZ7OZ\
         3NKIE",
        "configuration tokens start with xoxe.xoxp-1-"),
    // Square's production tokens start with `EAAA`, so this comes before Facebook's `EAA…`.
    rule("square-token", &["eaaa", "sq0atp-", "sq0csp-"],
        r"\b(?:(?:EAAA|sq0atp-)[A-Za-z0-9_\-]{22,60}|sq0csp-[A-Za-z0-9_\-]{43})\b",
        "SQUARE_ACCESS_TOKEN=EAAAEZZOmEPJUo09jwQO10Y0ADsWJPiX1EwY2orTyRqBRlEaZUZrwpPtuEFBNOfQ\nc\
         lient_secret=sq0csp-UtMXhkPrSbbAjLGmsDx5StAZvlMz-Bk4opH1Dr8-h97",
        "EAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").guarded(Guard::HasDigit),
    rule("facebook-access-token", &["eaa"],
        r"\bEAA[A-Z][A-Za-z0-9]{80,}\b",
        "curl 'https://graph.facebook.com/me?access_token=EAAGvmuTtiLOfYczUJ4zIKdztgacm06EMXQdYG\
         6INyNjORSSM4RfncQODOWlgQl3cAXg67Pax30iYtJTq3tlAcubBKPL76dFKHc0hXZAKS6zCeaRyML8QjEXAJgfP\
         En5jOaBaaRQh92fn3hiEbrUKpCUVl'",
        "EAAGLE_EYE_CONTROLLER_V2").guarded(Guard::HasDigit),
    rule("facebook-app-secret", &["facebook"],
        near!("facebook", "[0-9a-f]{32}"),
        "FACEBOOK_APP_SECRET=93fe04072755398003680e7e3b35183e",
        "facebook-sdk 3.1.0 from facebook/facebook-python-business-sdk").redacting_group(),
    rule("twitter-bearer-token", &["aaaaaaaaaaaaaaaaaaaaaa"],
        r"\bA{22}[A-Za-z0-9%]{80,110}\b",
        "TWITTER_BEARER_TOKEN=AAAAAAAAAAAAAAAAAAAAAA5jSF%3DpFkIM3Vak1uDSKFQs1DxBA9RelOxOPbbNcRV7\
         vZgGEFW5jcnTAOivg3QxvEXHJX6nsBvBqJd0ssw0FzvGr3GwnPFYh",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\
         AAAAAAAAAAAAAAAAAAAAAAAAAAA==").guarded(Guard::HasDigit),
    rule("dropbox-short-lived-token", &["sl."], r"\bsl\.[A-Za-z0-9_=\-]{130,}",
        "dbx = dropbox.Dropbox('sl.BgUskL-6GgebhbkXNNv_hOV48vsoUu19X5IQLJhQbtN2FWXWD5KaPHI2u\
         fKssJ-Sk_WzDNhY7AGbX6lTiDYHP9zyBylxLUTZtFf-VnV7ktOdSJcmeA_BHJ2m5qGeRzxWkdgeV6_iY')",
        "see sl.dropbox.com for the short-lived tokens"),
    // Long-lived tokens (ten `A`s inside) only next to the word.
    rule("dropbox-token", &["dropbox"],
        near!("dropbox", "[A-Za-z0-9]{11}A{10}[A-Za-z0-9_=\\-]{43}"),
        "DROPBOX_TOKEN=FLGWrhhhz4iAAAAAAAAAADDs7YvcX1eYgURZEQ3PZgPsTF2bUnxiP3zcCr1Y6ffe",
        "dropbox 12.0.2 from dropbox/dropbox-sdk-python").redacting_group(),
    rule("huggingface-org-token", &["api_org_"],
        r"\bapi_org_[A-Za-z]{34}\b",
        "HF_ORG_TOKEN=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",
        "api_org_name = settings.api_org_name"),
    rule("heroku-api-token", &["hrku-"],
        r"\bHRKU-AA[A-Za-z0-9_\-]{58}\b",
        "heroku authorizations:create printed HRKU-AA9hmsOazM4n8PVGXpV9Wv4Esb7yeuCjVr5mXcj5RPD9o\
         UsQChx5s4tI10Ft",
        "new keys start with HRKU-AA"),
    // API key SIDs are recognisable alone; account SIDs (`AC…`) only next to the word.
    rule("twilio-api-key-sid", &["sk"],
        r"\bSK[0-9a-fA-F]{32}\b",
        "{\"sid\": \"SK089a58f3aef3416f9386bd8773c9d519\", \"friendly_name\": \"ci\", \"secret\"\
         : null}",
        "SKIP_CHECKS=1 and SKU0123 and task_7513064d6d59").guarded(Guard::HasDigit),
    // Keys of the newer form: 32 hex digits, then two groups of 8. Bare hex, but no identifier
    // in common use has that shape, so the shape alone wakes the rule.
    rule("mailgun-key", &[],
        r"\b(?P<secret>(?:key-)?[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})\b",
        "requests.post(\"https://api.mailgun.net/v3/mg.example.com/messages\", auth=(\"api\", \"\
         40ea4e095bd1d6854575622f85646960-2d1ba9f2-0df4875b\"))\n\
         0123456789abcdef0123456789abcdef-0a1b2c3d-4e5f6a7b",
        "build 40ea4e095bd1d6854575622f85646960-2d1ba9f2 of 5d1ba9f2ab40ea4e095bd1d6854575622f8564\
         6960-2d1ba9f2-0df4875b")
        .redacting_group().woken_by(has_mailgun_key_shape),
    rule("aws-access-key-id", &["akia", "asia", "abia", "acca", "a3t"],
        r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "an AKIA id is 20 characters: AKIAIOSFODNN7EXAMP"),
    rule("aws-secret-access-key", &["secret_access_key", "secretaccesskey"],
        concat!(r#"(?i:secret(?:_access_|access)key)["']?[ \t]*(?::|=|=>)[ \t]*["']?"#,
            r"(?P<secret>[A-Za-z0-9/+]{40,})"),
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "export AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}").redacting_group(),
    rule("github-pat", &["ghp_"], r"\bghp_[A-Za-z0-9]{36}\b",
        "git clone https://ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d@github.com/o/r",
        "classic tokens look like ghp_ followed by 36 characters, e.g. ghp_abc"),
    rule("github-fine-grained-pat", &["github_pat_"], r"\bgithub_pat_[A-Za-z0-9_]{50,}",
        "GH_TOKEN=github_pat_KLzdocJ2isAjIhKtJ0RlgL_KOmxgJTeKdNnFRIBXuDL7DxtpYlSXpfKtHF4vUCsMehG\
         AkWvj7FAc9QeWJK",
        "the prefix is github_pat_ and the rest is random"),
    rule("github-token", &["gho_", "ghu_", "ghs_", "ghr_"], r"\bgh[ousr]_[A-Za-z0-9]{36,255}\b",
        "oauth: gho_Y40uvSwMFLZDe1f8rESQedUStPKR0CsTy4Qw",
        "ghs_ tokens expire after an hour: ghs_12345"),
    rule("gitlab-token", &["glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-"],
        r"\bgl(?:pat|dt|rt|ptt|ft|soat|cbt)-[A-Za-z0-9_\-]{20,}",
        "PRIVATE-TOKEN: glpat-b8DwkNhFdnXsiVpzz63F",
        "create a token with the glpat- prefix"),
    rule("slack-token", &["xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-"],
        r"\bxox[abprs]-(?:[0-9]+-)+[A-Za-z0-9][A-Za-z0-9\-]{7,}",
        "SLACK_BOT=xoxb-127684268465-6321223307924-sajAIxNKu8iS2G8NPRVdD53X",
        "set it to xoxb-your-bot-token"),
    rule("slack-webhook", &["hooks.slack.com"],
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{10,}",
        "curl -X POST https://hooks.slack.com/services/T9ZZZZG4Z/BDMEN2KHV/\
         MdgaKjIg8xNbe3nNyjOq9wMx",
        "incoming webhooks live under https://hooks.slack.com/services/"),
    rule("stripe-key", &["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
        r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
        "stripe.api_key = 'sk_live_Ehh2FDEEtfjgVvVqE1SkHbn8'",
        "publishable: pk_live_Ehh2FDEEtfjgVvVqE1SkHbn8 and sk_live_short"),
    rule("stripe-webhook-secret", &["whsec_"], r"\bwhsec_[A-Za-z0-9]{24,}",
        "endpoint_secret = whsec_8HxjSI6bWHtP3fS2qHx6kwXoIIXGvOoN",
        "signing secrets start with whsec_"),
    rule("anthropic-api-key", &["sk-ant-"], r"\bsk-ant-[A-Za-z0-9_\-]{32,}",
        "ANTHROPIC_API_KEY=sk-ant-api03-ZYW2mZp0zVZomHFwUbbYrEqmSM9wCZ7Uw9xfogoEmvnEN5N1aE6PwZPf\
         1Qh6yYTWmE4lBYOvfZ8UzDzVAA",
        "keys begin with sk-ant-api03-"),
    // Legacy `sk-…`, `sk-proj-…` and service-account keys; a digit tells a key from a kebab name.
    rule("openai-api-key", &["sk-"], r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        "client = OpenAI(api_key=\"sk-proj-8fUkkibjL5DZPjN0MEQ7wjJJibaZUPgHV7iB3m03nbqnsGpW\")",
        "pip install sk-learn-compatible-estimators").guarded(Guard::HasDigit),
    rule("google-api-key", &["aiza"], r"\bAIza[0-9A-Za-z_\-]{35}",
        "https://maps.googleapis.com/maps/api/js?key=AIzaPH1qhT61qtc4xatws8phP9nhFyJfm5di4Pz",
        "browser keys start with AIza and are 39 characters long"),
    rule("google-oauth-client-secret", &["gocspx-"], r"\bGOCSPX-[A-Za-z0-9_\-]{28}",
        "\"client_secret\":\"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\"",
        "secrets created since 2021 start with GOCSPX-"),
    rule("jwt", &["eyj"], r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{2,}\.[A-Za-z0-9_\-]{10,}",
        "id_token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvIn0.\
         4OjE2jBMptUsGr7CmY_uCu3ZR1zTOlUcR64cXQLioDn",
        "the header alone, eyJhbGciOiJIUzI1NiJ9, is not a token"),
    rule("npm-token", &["npm_"], r"\bnpm_[A-Za-z0-9]{36}\b",
        "//registry.npmjs.org/:_authToken=npm_fqrc5XlrWi0B26R08qzjI6GKFSufrdZSlB5e",
        "npm_config_registry=https://registry.npmjs.org/"),
    rule("pypi-token", &["pypi-age"], r"\bpypi-AgE[A-Za-z0-9_\-]{50,}",
        "password = pypi-AgEIcHlwaS5vcmcIclHkCiHp6bR1IqfEouHgxzNNAL5wIScGebcy8F5n3-YNBDRzrZ\
         SgqbjG3uh",
        "upload tokens start with pypi-AgE"),
    rule("huggingface-token", &["hf_"], r"\bhf_[A-Za-z0-9]{34,}\b",
        "huggingface-cli login --token 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",
        "from huggingface_hub import hf_hub_download"),
    // API key SIDs (SK…) and account SIDs (AC…) are bare hex: only next to the word `twilio`.
    rule("twilio-key", &["twilio"], near!("twilio", "(?:SK|AC)[0-9a-fA-F]{32}"),
        "TWILIO_ACCOUNT_SID=AC6702824c1c099724caf4941d4072014b",
        "twilio SIDs are AC followed by 32 hex digits").redacting_group(),
    rule("sendgrid-api-key", &["sg."], r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        "SENDGRID=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",
        "const text = msg.content.trim()"),
    rule("mailgun-api-key", &["key-"], r"\bkey-[0-9a-z]{32}\b",
        "auth=('api', 'key-940f1f836f99eee3692f09e2e8c66224')",
        "a key-value store keeps key-940f1f836f99 short ids"),
    rule("digitalocean-token", &["dop_v1_", "doo_v1_", "dor_v1_"], r"\bdo[opr]_v1_[0-9a-f]{64}\b",
        "doctl auth init -t dop_v1_8b483b7ffc050fec94dbca3a0aac36098b2cc2bd818319478da6bd0c6\
         21de49f",
        "personal access tokens start with dop_v1_"),
    // A bare UUID: only next to the word `heroku`, before it or after it.
    rule("heroku-api-key", &["heroku"],
        concat!(r#"(?P<before>(?i:heroku)[A-Za-z0-9_ \t."':=\-]{0,40}?)?"#,
            r"\b(?P<secret>[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})\b",
            r#"(?P<after>[ \t"'),]{1,3}(?:(?:is|for|as)[ \t]+)?(?:(?:my|the|our)[ \t]+)?(?i:heroku))?"#),
        "HEROKU_API_KEY=145fda99-88c7-9fc3-5526-f7eaed46725a\n\
         use 0f8e5c1a-3b2d-4e6f-9a7c-8d1e2f3a4b5c as the heroku key",
        "heroku logs --tail --app my-app-2024; request 0f8e5c1a-3b2d-4e6f-9a7c-8d1e2f3a4b5c")
        .redacting_group().guarded(Guard::Context),
    rule("azure-storage-account-key", &["accountkey="],
        r"(?i:accountkey)=(?P<secret>[A-Za-z0-9+/]{20,}={0,2})",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=jhdRPV5Cz5Ez4wW/3mliab6GNWBF\
         VsAPf0eT91wgr4CHocrc2TcXReU/Ymalcm70T9nQ3/cFIAhstcPlzXn3lg==;\
         EndpointSuffix=core.windows.net",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=;").redacting_group(),
    rule("azure-sas-signature", &["sig="], r"[?&;](?i:sig)=(?P<secret>[A-Za-z0-9%+/=]{16,})",
        "https://acme.blob.core.windows.net/c/b.txt?sv=2022-11-02&sp=r&sig=ngAFTCloiADN5RpV%3D",
        "git log --show-signature --format=%GG sig=ok").redacting_group(),
    rule("databricks-token", &["dapi"], r"\bdapi[0-9a-f]{32}(?:-[0-9]+)?\b",
        "DATABRICKS_HOST=x DATABRICKS_TOKEN=dapif02cee737443e210471948d33296c870",
        "the dapi prefix marks a databricks token"),
    rule("shopify-token", &["shpat_", "shpss_", "shpca_", "shppa_"],
        r"\bshp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}\b",
        "X-Shopify-Access-Token: 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",
        "admin API tokens start with shpat_"),
    // No `\b` in front: the token follows `bot` directly in API URLs.
    rule("telegram-bot-token", &[":aa"], r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}",
        "https://api.telegram.org/bot123456789:AAiA-zNyD7CHLn-xC_1hsYgBds1ghxY5Ook/getMe",
        "started at 10:AA on port 12345678:AAx"),
    rule("discord-webhook", &["discord"],
        concat!(r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v[0-9]+/)?webhooks/",
            r"[0-9]{17,20}/[A-Za-z0-9_\-]{20,}"),
        "https://discord.com/api/webhooks/123456789012345678/8zV5yPU8d0FZfWe7ihGyiRUIQfHOJMaidDn\
         87XG3-q-xbMtEPO6UkzYuF0ie9Pu2njHk",
        "see https://discord.com/developers/docs/resources/webhook"),
    // Three dotted base64url parts whose first is the base64 of the bot's numeric id (17 digits
    // or more): that alone tells a token from a dotted name, wherever it stands.
    rule("discord-bot-token", &[],
        r"\b(?P<secret>[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40})\b",
        "DISCORD_TOKEN=MTIzNDU2Nzg5MDEyMzQ1Njc4.7kvmlP.7HVDctQUy1xvCkgafrfwA94hJ9WnywX0t0ZBfd\n\
         client.run('MTEyMjMzNDQ1NTY2Nzc4ODk5.IIemGp.b3EfKoNSvphIk7s4pqL0KJFlK6CXzU6M98NdFQ')\n\
         MTA4NzY1NDMyMTA5ODc2NTQzMg.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB",
        "discord.py 2.3.2 needs Python 3.8; app.run('NetworkManagerConfiguration.client.\
         handle_the_request_for_each_user')").redacting_group().guarded(Guard::NumericIdPrefix)
        .woken_by(has_discord_token_shape),
    // `scheme://user:password@host`: only the password goes. Brackets are not allowed in userinfo
    // (RFC 3986), which also keeps earlier markers out of the match.
    // JSON may escape the slashes (`postgres:\/\/app:pw@db`).
    rule("password-in-url", &["://", ":\\/\\/"],
        concat!(r#"\b[A-Za-z][A-Za-z0-9+.\-]*:(?://|\\/\\/)(?u:[^\s:/?#@\[\]"'<>\\]*):"#,
            r#"(?P<secret>(?u:[^\s/?#\[\]"'<>]+))@"#),
        "DATABASE_URL=postgres://app:s3cr3t-P4ss@db.internal:5432/app",
        "postgres://app:${DB_PASSWORD}@db.internal:5432/app and https://example.com:8080/a@b")
        .redacting_group().guarded(Guard::NotPlaceholder),
    rule("authorization-bearer", &["authorization"],
        concat!(r#"(?i:(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:bearer|token|bot))"#,
            r"[ \t]+(?P<secret>[A-Za-z0-9._~+/=\-]{8,})"),
        "curl -H 'Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://api.example.com",
        "curl -H \"Authorization: Bearer $API_TOKEN\" https://api.example.com")
        .redacting_group().guarded(Guard::NotPlaceholder),
    rule("authorization-basic", &["authorization"],
        concat!(r#"(?i:(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?basic)"#,
            r"[ \t]+(?P<secret>[A-Za-z0-9+/=]{4,})"),
        "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l",
        "Authorization: Basic <base64 of user:password>")
        .redacting_group().guarded(Guard::NotPlaceholder),
    // Only after `curl`: `-u` is a user name elsewhere (`docker run -u 1000:1000`).
    rule("curl-user-password", &["curl"],
        concat!(r#"(?i:curl)(?u:[^\n]*?)[ \t](?:-u|--user)(?:[ \t]+|=)["']?[A-Za-z0-9._@+\-]*:"#,
            r#"(?P<secret>(?u:[^\s"':]+))"#),
        "curl -u admin:Tr0ub4dor-3 https://ci.internal/api/json",
        "curl -u \"$USER:$PASS\" https://ci.internal/api/json")
        .redacting_group().guarded(Guard::NotPlaceholder),
    // Passwords given to a client on its command line: `mysql -pX` (attached: `-p X` asks and
    // then selects database X), `sshpass -p X`, `docker login -p X` / `--password X`.
    rule("cli-password", &["mysql", "mariadb", "sshpass", " login"],
        concat!(r"(?:\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mariadb(?:-dump)?)\b",
            r"(?u:[^\n|;&]*?)[ \t]-p|\bsshpass\b(?u:[^\n|;&]*?)[ \t]-p[ \t]*",
            r"|\b(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[ \t]+registry)[ \t]+login\b",
            r"(?u:[^\n|;&]*?)[ \t](?:-p|--password)(?:[ \t]+|=))",
            r#"(?P<secret>(?u:"(?:[^"\\\r\n]|\\.)*"|'(?:[^'\\\r\n]|\\.)*'|[^\s"'\-][^\s]*))"#),
        "mysqldump -u root -p'Zx8#kLm2!q' shop > shop.sql\nsshpass -p Hv7tq2Lm ssh deploy@web1\n\
         docker login -u ci -p dckr_pat_2bX9qLm4 registry.example.com",
        "mysql -u root -p shop && docker login --password-stdin -u ci && mysql -P 3306 -h db")
        .redacting_group().guarded(Guard::NotPlaceholder),
    // Values only their surroundings make secrets, each checked for randomness (`Guard::Random`):
    // the cells of a table column named like a key (Markdown, psql, ASCII borders)…
    rule("secret-table-column", &[],
        concat!(r"(?m:^)(?P<rows>(?u:[^\n])*(?:(?:\||│)(?u:[^\n])*", table_header_word!(),
            r"|", table_header_word!(), r"(?u:[^\n])*(?:\||│))(?u:[^\n])*",
            r"(?:\r?\n(?:(?u:[^\n])*(?:\||│)(?u:[^\n])*",
            r"|[ \t]*(?:[\-+=:]|─|┼|├|┤|┌|┐|└|┘|┬|┴)(?:[\-+=: \t]|─|┼|├|┤|┌|┐|└|┘|┬|┴)*\r?))+)"),
        "$ psql -c 'select name, api_key from clients'\n name |         api_key\n------+-----------\
         ---------------\n prod | q8Zr2mXv9LpT4wYb7NcK3hJd\n(1 row)\n",
        "| name | token_count | auth |\n|------|-------------|------|\n| prod | 1234 | oauth2-client-credentials |\n")
        .redacting(Spans::TableColumn).guarded(Guard::Random).woken_by(has_secret_table_header),
    // …the string arguments of a call that builds credentials or a client from them…
    rule("credential-arguments", &["credentials(", "credential(", "credentials.new(",
        "credentials.create(", "credentials.of(", "provider(",
        "auth(", "client(", "session(", "signer(", "token(", "apikey(", "api_key(", "secret("],
        concat!(r"\b[A-Za-z0-9_]*(?i:credentials?|provider|auth|client|session|signer|token",
            r"|api_?key|secret)(?:\.(?:new|create|of))?\((?P<args>(?u:[^(){};])*)"),
        "creds = Credentials(\"AKIAIOSFODNN7EXAMPLE\", \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\")",
        "Credentials(username, password); boto3.client('s3', region_name='eu-west-1'); \
         secretsManager.getSecretValue(params)")
        .redacting(Spans::StringArguments).guarded(Guard::Random),
    // …and what a command that prints a token printed.
    rule("cli-auth-token", &["gh auth token", "heroku auth:token", "npm token create",
        "vercel token", "doctl auth token", "print-access-token", "print-identity-token",
        "get-login-password", "kubectl create token", "vault print token", "firebase login:ci"],
        concat!(r"(?m:^)[ \t]*(?:(?:[$%>#]|❯)[ \t]*)?(?:sudo[ \t]+)?(?i:gh auth token",
            r"|heroku auth:token|npm token create|vercel tokens? (?:add|create)|doctl auth token",
            r"|gcloud auth (?:application-default )?print-(?:access|identity)-token",
            r"|aws ecr(?:-public)? get-login-password|kubectl create token|vault print token",
            r"|firebase login:ci)(?:[ \t](?u:[^\n|;&)`])*)?\r?(?m:$)"),
        "$ gcloud auth print-access-token\nya29.a0AfH6SMBq8Zr2mXv9LpT4wYb7NcK3hJdQ2\n$ ls\n",
        "$ gh auth token | pbcopy\nCopied. Logged in to github.com as octocat_2024-dev-account\n")
        .redacting(Spans::CommandOutput).guarded(Guard::Random),
    // A secret named in prose or echoed by a prompt: "your API key is X", `Enter password: X`,
    // `密码：X`. Only a value that looks generated (see [`Guard::Opaque`]).
    // A bare `token:` is left to the generic rule: it starts half the fields of typed code.
    rule("secret-in-prose", &["key is", "key was", "key:", "token is", "token was", "api token:",
        "access token:", "auth token:", "bot token:", "app token:", "client token:",
        "private token:", "secret is", "secret was", "secret:", "password is", "password was",
        "password:", "password for", "passphrase is", "passphrase:", "密码", "密钥", "口令", "令牌"],
        concat!(r"(?:(?i:\b(?:(?:api|access|secret|auth|app|bot|client|private)[ \t]+",
            r"(?:key|token|secret)|password(?: for[ \t]+[A-Za-z0-9_.@\-]+)?|passphrase)",
            r"(?: (?:is|was)[ \t]*:?|:)|\btoken (?:is|was)[ \t]*:?)",
            r"|(?:密码|密钥|口令|令牌)[ \t]*(?:是|为|：|:))",
            r"[ \t]*[\x22'`]?(?P<secret>[A-Za-z0-9](?:[A-Za-z0-9_\-.+/=~!@#$%^&*?]*",
            r"[A-Za-z0-9_\-+/=~!@#$%^&*?])?)(?:[\x22'`]|[ \t\r\n,;.)]|，|。|$)"),
        "Here is my setup. Your API key is 7f3k9Q2mXw8v and the admin password: Tr0ub4dor&3",
        "the token is valid for 3600 seconds; password: String; API key is required. token: i32,")
        .redacting_group().guarded(Guard::Opaque),
    // `--token abc`, `--db-password abc`; the `--token=abc` form is the generic rule's. The secret
    // word must start a dash-separated word of the flag, so the keywords can include the dash
    // and the rule stays asleep for the many texts that merely say "token".
    rule("secret-cli-flag", &["-token", "-secret", "-passw", "-pwd", "-api", "-access", "-private",
        "-auth", "-credential", "-passphrase"],
        concat!(r"(?:^|[ \t])--?(?P<key>(?:[A-Za-z0-9]+-)*(?i:token|secret|passw(?:or)?d|pwd",
            r"|api-?key|access-?key|private-?key|auth|credential|passphrase)[A-Za-z0-9\-]*)[ \t]+",
            r#"(?P<secret>(?u:"(?:[^"\\\r\n]|\\.)*"|'(?:[^'\\\r\n]|\\.)*')"#,
            r"|[A-Za-z0-9_.+/=~!@#$%^*?:][A-Za-z0-9_\-.+/=~!@#$%^*?:]*", ampersand_continued!(),
            r")(?:[ \t\r\n;&|)]|$)"),
        "mysql --password hunter2-ish -h db",
        "docker login --password-stdin -u me < pw.txt && gh run --token-file ./t")
        .redacting_group().guarded(Guard::Assignment),
    // `KEY=value`, `KEY: value`, `"key": "value"`, `export KEY=value`, `key => 'value'`.
    rule(GENERIC_RULE, SECRET_WORDS,
        concat!(r#"(?P<q>["']?)(?P<key>[A-Za-z0-9_.\-]*(?i:token|secret|pass(?:w(?:or)?d)?|pwd"#,
            r"|api[_.\-]?key|access[_.\-]?key|private[_.\-]?key|auth|credential|passphrase",
            r"|dockerc(?:onfigjson|fg))",
            r#"[A-Za-z0-9_.\-]*)(?P<qe>["']?)[ \t]*(?P<sep>:=|=>|=|:|：)[ \t]*"#, assigned_value!()),
        "export DB_PASSWORD=\"correct horse battery\"",
        "max_tokens=4096 token_url: https://x/token password: ${DB_PASSWORD}")
        .redacting_group().guarded(Guard::Assignment),
];

// The prefilter reports candidate rules as bits of a u128.
const _: () = assert!(RULES.len() < 128, "the candidate set is a u128 bitmask");

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    /// The secrets a rule alone would redact in `text` (its regex and guard, no prefilter).
    fn own_secrets<'t>(redactor: &Redactor, index: usize, text: &'t str) -> Vec<&'t str> {
        let rule = &RULES[index];
        let regex = redactor.regex(index, text.len()).expect("every pattern compiles");
        let mut secrets = Vec::new();
        for caps in regex.captures_iter(text) {
            let caps = Caps { text, caps };
            let mut spans = Vec::new();
            secret_spans(rule, &caps, &mut spans);
            secrets.extend(spans.into_iter().filter_map(|(start, end, quoted)| {
                rule.guard.allows(text, &caps, start..end, quoted).then_some(&text[start..end])
            }));
        }
        secrets
    }

    /// Each non-blank line of `cases` is `input ⇒ output`, or just `input` when it must come
    /// through unchanged.
    fn check_lines(cases: &str, transform: impl Fn(&str) -> String) {
        for case in cases.lines().map(str::trim).filter(|line| !line.is_empty()) {
            let (input, want) = case.split_once(" ⇒ ").unwrap_or((case, case));
            assert_eq!(transform(input), want, "{input}");
        }
    }

    fn redacted(text: &str) -> String {
        Redactor::new().redact(text).0.into_owned()
    }

    #[test]
    fn every_rule_passes_its_own_examples() {
        let redactor = Redactor::new();
        assert_eq!(redactor.keywords.always, 0, "a keyword shorter than two bytes");
        assert!(RULES.len() >= 28);
        for (index, rule) in RULES.iter().enumerate() {
            let name = rule.name;
            assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{name}");
            assert_eq!(RULES.iter().filter(|other| other.name == name).count(), 1, "{name}");
            let regex = redactor.regex(index, 0).expect("every pattern compiles");
            assert!(redactor.regex(index, LEAN_TEXT + 1).is_some(), "{name}: with its prefilter");
            if let Some(group) = rule.secret_group {
                assert!(
                    regex.group_info().all_names().any(|(_, _, g)| g == Some(group)),
                    "{name}: no {group}"
                );
            }
            assert!(!rule.keywords.is_empty() || rule.shape.is_some(), "{name}");
            for keyword in rule.keywords {
                assert_eq!(keyword.to_ascii_lowercase(), *keyword, "{name}");
            }

            // The rule itself finds the example's secret, and the prefilter lets it run: one of
            // its keywords lies inside the match, or the match has its shape.
            let secrets = own_secrets(&redactor, index, rule.must_match);
            assert!(!secrets.is_empty(), "{name}: its regex misses its must_match");
            for found in regex.find_iter(rule.must_match) {
                let whole = &rule.must_match[found.range()];
                let lower = whole.to_ascii_lowercase();
                assert!(
                    rule.keywords.iter().any(|k| lower.contains(k))
                        || rule.shape.is_some_and(|shape| shape(whole.as_bytes())),
                    "{name}: no keyword or shape in {whole}"
                );
            }

            // The whole redactor replaces it under this rule's name and leaves no trace; a second
            // pass changes nothing, so markers never look like secrets.
            let (out, count) = redactor.redact(rule.must_match);
            assert!(count >= 1, "{name}");
            assert!(out.contains(&format!("[REDACTED:{name}]")), "{name}: {out}");
            for secret in secrets {
                assert!(!out.contains(secret), "{name}: {secret} survived in {out}");
            }
            assert_eq!(redactor.redact(&out), (Cow::Borrowed(&*out), 0), "{name}");

            assert!(own_secrets(&redactor, index, rule.must_not_match).is_empty(), "{name}");
            let (out, count) = redactor.redact(rule.must_not_match);
            assert!(matches!(out, Cow::Borrowed(_)) && count == 0, "{name}: changed {out}");
        }
    }

    #[test]
    fn what_each_example_becomes() {
        let redactor = Redactor::new();
        let shown: String = RULES
            .iter()
            .map(|rule| format!("{}\n", redactor.redact(rule.must_match).0.replace('\n', "⏎")))
            .collect();
        expect![[r#"
            key.pem:⏎[REDACTED:private-key]⏎done
            [REDACTED:openssh-private-key]
            [REDACTED:pgp-private-key]
            $ cat ~/Downloads/credentials.csv⏎User name,Password,Access key ID,Secret access key,Console login link⏎[REDACTED:aws-credentials-csv]⏎
            apiVersion: v1⏎kind: Secret⏎metadata:⏎  name: db⏎type: Opaque⏎data:⏎[REDACTED:kubernetes-secret]⏎stringData: {}⏎
            $ kubectl get secret regcred -o json⏎{⏎    "apiVersion": "v1",⏎    "data": [REDACTED:kubernetes-secret-data],⏎    "kind": "Secret",⏎
            machine api.heroku.com⏎  login me@example.com⏎  password [REDACTED:netrc-password]
            Secret Key: [REDACTED:onepassword-secret-key]
            export OP_SERVICE_ACCOUNT_TOKEN=[REDACTED:onepassword-service-account-token]
            # public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p⏎[REDACTED:age-secret-key]
            阿里云 AccessKey ID：[REDACTED:alibaba-access-key-id]，请妥善保管
            tccli configure set secretId [REDACTED:tencent-secret-id]
            JIRA_API_TOKEN=[REDACTED:atlassian-api-token]
            curl -H 'X-JFrog-Art-Api: [REDACTED:artifactory-token]' https://acme.jfrog.io⏎REF=[REDACTED:artifactory-token]
            AZURE_CLIENT_SECRET="[REDACTED:azure-ad-client-secret]"
            DOPPLER_TOKEN=[REDACTED:doppler-token] doppler run -- npm start
            Api-Token [REDACTED:dynatrace-token]
            FLY_API_TOKEN=[REDACTED:flyio-token]
            GRAFANA_TOKEN=[REDACTED:grafana-token]⏎cloud: [REDACTED:grafana-token]
            VAULT_TOKEN=[REDACTED:vault-token]
            credentials "app.terraform.io" { token = "[REDACTED:terraform-cloud-token]" }
            LINEAR_API_KEY=[REDACTED:linear-api-key]
            mailchimp.setConfig({ apiKey: '[REDACTED:mailchimp-api-key]', server: 'us14' })
            NEW_RELIC_API_KEY=[REDACTED:new-relic-key]
            const notion = new Client({ auth: '[REDACTED:notion-token]' })⏎old: [REDACTED:notion-token]
            oc login --token=[REDACTED:openshift-token] --server=https://api.ocp:6443
            PERPLEXITY_API_KEY=[REDACTED:perplexity-api-key]
            PLANETSCALE_SERVICE_TOKEN=[REDACTED:planetscale-token]
            postman login --with-api-key [REDACTED:postman-api-key]
            PULUMI_ACCESS_TOKEN=[REDACTED:pulumi-access-token]
            GEM_HOST_API_KEY: [REDACTED:rubygems-api-key]
            SENTRY_AUTH_TOKEN=[REDACTED:sentry-token]
            SLACK_APP_TOKEN=[REDACTED:slack-app-token]
            token: [REDACTED:slack-config-token]
            SQUARE_ACCESS_TOKEN=[REDACTED:square-token]⏎client_secret=[REDACTED:square-token]
            curl 'https://graph.facebook.com/me?access_token=[REDACTED:facebook-access-token]'
            FACEBOOK_APP_SECRET=[REDACTED:facebook-app-secret]
            TWITTER_BEARER_TOKEN=[REDACTED:twitter-bearer-token]
            dbx = dropbox.Dropbox('[REDACTED:dropbox-short-lived-token]')
            DROPBOX_TOKEN=[REDACTED:dropbox-token]
            HF_ORG_TOKEN=[REDACTED:huggingface-org-token]
            heroku authorizations:create printed [REDACTED:heroku-api-token]
            {"sid": "[REDACTED:twilio-api-key-sid]", "friendly_name": "ci", "secret": null}
            requests.post("https://api.mailgun.net/v3/mg.example.com/messages", auth=("api", "[REDACTED:mailgun-key]"))⏎[REDACTED:mailgun-key]
            aws_access_key_id = [REDACTED:aws-access-key-id]
            aws_secret_access_key = [REDACTED:aws-secret-access-key]
            git clone https://[REDACTED:github-pat]@github.com/o/r
            GH_TOKEN=[REDACTED:github-fine-grained-pat]
            oauth: [REDACTED:github-token]
            PRIVATE-TOKEN: [REDACTED:gitlab-token]
            SLACK_BOT=[REDACTED:slack-token]
            curl -X POST [REDACTED:slack-webhook]
            stripe.api_key = '[REDACTED:stripe-key]'
            endpoint_secret = [REDACTED:stripe-webhook-secret]
            ANTHROPIC_API_KEY=[REDACTED:anthropic-api-key]
            client = OpenAI(api_key="[REDACTED:openai-api-key]")
            https://maps.googleapis.com/maps/api/js?key=[REDACTED:google-api-key]
            "client_secret":"[REDACTED:google-oauth-client-secret]"
            id_token [REDACTED:jwt]
            //registry.npmjs.org/:_authToken=[REDACTED:npm-token]
            password = [REDACTED:pypi-token]
            huggingface-cli login --token [REDACTED:huggingface-token]
            TWILIO_ACCOUNT_SID=[REDACTED:twilio-key]
            SENDGRID=[REDACTED:sendgrid-api-key]
            auth=('api', '[REDACTED:mailgun-api-key]')
            doctl auth init -t [REDACTED:digitalocean-token]
            HEROKU_API_KEY=[REDACTED:heroku-api-key]⏎use [REDACTED:heroku-api-key] as the heroku key
            DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED:azure-storage-account-key];EndpointSuffix=core.windows.net
            https://acme.blob.core.windows.net/c/b.txt?sv=2022-11-02&sp=r&sig=[REDACTED:azure-sas-signature]
            DATABRICKS_HOST=x DATABRICKS_TOKEN=[REDACTED:databricks-token]
            X-Shopify-Access-Token: [REDACTED:shopify-token]
            https://api.telegram.org/bot[REDACTED:telegram-bot-token]/getMe
            [REDACTED:discord-webhook]
            DISCORD_TOKEN=[REDACTED:discord-bot-token]⏎client.run('[REDACTED:discord-bot-token]')⏎[REDACTED:discord-bot-token]
            DATABASE_URL=postgres://app:[REDACTED:password-in-url]@db.internal:5432/app
            curl -H 'Authorization: Bearer [REDACTED:authorization-bearer]' https://api.example.com
            Authorization: Basic [REDACTED:authorization-basic]
            curl -u admin:[REDACTED:curl-user-password] https://ci.internal/api/json
            mysqldump -u root -p'[REDACTED:cli-password]' shop > shop.sql⏎sshpass -p [REDACTED:cli-password] ssh deploy@web1⏎docker login -u ci -p [REDACTED:cli-password] registry.example.com
            $ psql -c 'select name, api_key from clients'⏎ name |         api_key⏎------+--------------------------⏎ prod | [REDACTED:secret-table-column]⏎(1 row)⏎
            creds = Credentials("[REDACTED:aws-access-key-id]", "[REDACTED:credential-arguments]")
            $ gcloud auth print-access-token⏎[REDACTED:cli-auth-token]⏎$ ls⏎
            Here is my setup. Your API key is [REDACTED:secret-in-prose] and the admin password: [REDACTED:secret-in-prose]
            mysql --password [REDACTED:secret-cli-flag] -h db
            export DB_PASSWORD="[REDACTED:secret-assignment]"
        "#]]
        .assert_eq(&shown);
    }

    #[test]
    fn a_long_text_is_redacted_as_a_short_one_is() {
        let filler = "a plain line of build output, nothing to hide\n".repeat(LEAN_TEXT / 40);
        let redactor = Redactor::new();
        for rule in RULES {
            let short = redactor.redact(rule.must_match).0;
            let long = redactor.redact(&format!("{filler}{}", rule.must_match)).0.into_owned();
            assert_eq!(long, format!("{filler}{short}"), "{}", rule.name);
        }
        let full = redactor.full.iter().filter(|slot| slot.get().is_some()).count();
        assert_eq!(full, RULES.len(), "each long text ran the rules with their prefilters");
    }

    #[test]
    fn the_keyword_scan_wakes_exactly_the_rules_whose_keywords_occur() {
        let keywords = Keywords::new(RULES);
        let naive = |text: &str| {
            let lower = text.to_ascii_lowercase();
            RULES
                .iter()
                .enumerate()
                .filter(|(_, rule)| rule.keywords.iter().any(|k| lower.contains(k)))
                .fold(0u128, |found, (index, _)| found | 1u128 << index)
        };
        let mut texts: Vec<String> = RULES
            .iter()
            .flat_map(|rule| [rule.must_match, rule.must_not_match])
            .map(str::to_owned)
            .collect();
        // Keywords at either edge, in capitals, overlapping, cut short by the end, and in CJK.
        texts.extend(RULES.iter().flat_map(|rule| rule.keywords).flat_map(|k| {
            let short = String::from_utf8_lossy(&k.as_bytes()[..k.len() - 1]);
            [
                (*k).to_owned(),
                k.to_ascii_uppercase(),
                format!("x{k}"),
                format!("{k}y"),
                short.to_string(),
                format!("ab{short}"),
            ]
        }));
        texts.extend(
            ["", "s", "SK", "ssk-", "数据库密码是", "ghghp_", "\u{0}\u{ff}"].map(str::to_owned),
        );
        let redactor = Redactor::new();
        let mut woken = 0;
        for text in &texts {
            let found = keywords.rules_in(text.as_bytes());
            assert_eq!(found, naive(text), "{text:?}");
            woken |= redactor.candidates(text);
        }
        assert_eq!(woken, (1u128 << RULES.len()) - 1, "every rule woken by some text");
    }

    #[test]
    fn text_without_keywords_is_borrowed_and_compiles_nothing() {
        let redactor = Redactor::new();
        let text = "cargo test passed: 42 tests in 1.3s\n日本語のテキスト 🦀";
        let (out, count) = redactor.redact(text);
        assert!(matches!(out, Cow::Borrowed(_)) && count == 0);
        assert_eq!(redactor.compiled_rule_count(), 0);

        // A keyword compiles its own rule and no other.
        redactor.redact("a ghp_ prefix");
        assert_eq!(redactor.compiled_rule_count(), 1);
    }

    #[test]
    fn several_secrets_in_one_text() {
        let text = "\
export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE
export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
git push https://x-access-token:ghs_Y40uvSwMFLZDe1f8rESQedUStPKR0CsTy4Qw@github.com/o/r
curl -H \"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlX2hlcmU\" $URL
";
        let (out, count) = Redactor::new().redact(text);
        expect![[r#"
            export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key-id]
            export AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-access-key]
            git push https://x-access-token:[REDACTED:github-token]@github.com/o/r
            curl -H "Authorization: Bearer [REDACTED:jwt]" $URL
        "#]]
        .assert_eq(&out);
        assert_eq!(count, 4);
    }

    #[test]
    fn key_value_forms() {
        check_lines(
            r##"
            API_KEY=abc123def ⇒ API_KEY=[REDACTED:secret-assignment]
            API_KEY=abc123def ./deploy.sh ⇒ API_KEY=[REDACTED:secret-assignment] ./deploy.sh
              db_password: 'p@ss w0rd' ⇒ db_password: '[REDACTED:secret-assignment]'
            {"clientSecret": "s3\"q"} ⇒ {"clientSecret": "[REDACTED:secret-assignment]"}
            - auth_token: tok-1234 # ci ⇒ - auth_token: [REDACTED:secret-assignment] # ci
            curl -H "X-Api-Key: 1a2b3c4d" ⇒ curl -H "X-Api-Key: [REDACTED:secret-assignment]"
            ?access_token=abc123&x=1 ⇒ ?access_token=[REDACTED:secret-assignment]&x=1
            password = hunter2 ⇒ password = [REDACTED:secret-assignment]
            SECRET := hunter22 ⇒ SECRET := [REDACTED:secret-assignment]
            let token = "abc123"; ⇒ let token = "[REDACTED:secret-assignment]";
            $ psql --password s3cret -h db ⇒ $ psql --password [REDACTED:secret-cli-flag] -h db
            run --github-token t0k3n ⇒ run --github-token [REDACTED:secret-cli-flag]
            export A_TOKEN="abc 123" B=1 ⇒ export A_TOKEN="[REDACTED:secret-assignment]" B=1
            TOKEN=
            TOKEN=${GITHUB_TOKEN}
            api_key: <your-api-key>
            PASSWORD=changeme
            secret = 'xxxxxxxx'
            GOPASS := hunter22
            token: string;
            pub password: String,
            api_key: SecretStr
            colon_token: Some,
            pnToken: *mut ::core::ffi::c_int,
            Token::Unit,
            NL80211_ATTR_SAE_PASSWORD = 277,
            let token = match self {
            let auth = authorizer
            f(token=abc, x=1)
            id-token: write # Required for OIDC
            password = os.environ['DB_PASSWORD']
            token = get_token(user)
            auth = self.auth
            api_key=api_key,
            if token == expected:
            "max_tokens": 4096, "output_tokens": 12
            totalTokenCount: 1234
            author: Jane Doe
            error: invalid token: expired
            PWD=/work/main
            token_url = https://id.example/token
            password = "{}".format(p)
            Token: "#cccccc",
            Token.Comment: "italic #A3AAB2",
            private_key: "_RSAPrivateKey",
            authority = '%s@%s' % (user, host)
            hdr_auth = "Proxy-Authorization"
            SERVER_AUTH = '1.3.6.1.5.5.7.3.1'
            errAuthFailed = -9841
            "author1:author2:author3"
            {"secret": "㊙"}
            use --username and --password options instead
            "##,
            redacted,
        );
    }

    #[test]
    fn overlapping_rules_do_not_garble() {
        check_lines(
            r#"
            HEROKU_API_KEY=145fda99-88c7-9fc3-5526-f7eaed46725a ⇒ HEROKU_API_KEY=[REDACTED:heroku-api-key]
            {"Authorization": "Bearer 9f8e7d6c5b4a3928"} ⇒ {"Authorization": "Bearer [REDACTED:authorization-bearer]"}
            https://oauth2:glpat-b8DwkNhFdnXsiVpzz63F@gitlab.com/x ⇒ https://oauth2:[REDACTED:gitlab-token]@gitlab.com/x
            "private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIB\n-----END PRIVATE KEY-----\n" ⇒ "private_key": "[REDACTED:private-key]\n"
            "#,
            redacted,
        );
    }

    /// Secrets of each kind as they arrive: pasted into a prompt, printed by a command, inside a
    /// JSON payload. Each case is the text and the secrets in it; no fragment of one may survive,
    /// and a second pass must change nothing.
    #[test]
    fn secrets_as_they_arrive() {
        let pem_body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun";
        let pem_tail = "VTLYtN8wG8qkDXwFdmbcFBeKzq0v9bBNaV0mXYsNvhOh5Ak9Q3jWwCfPMuJx2T8";
        let cases: &[(&str, &[&str])] = &[
            ("VAULT_TOKEN=hvs.U8RmQ2xZbV7kT3pLwN9cYdFh", &["U8RmQ2xZbV7kT3pLwN9cYdFh"]),
            (
                "DB_PASSWORD=Summer.Breeze2024\nDB_HOST=db.internal",
                &["Summer.Breeze2024", "Breeze"],
            ),
            ("export API_TOKEN=abc.DefGhiJkl9 && ./deploy.sh", &["abc.DefGhiJkl9", "DefGhi"]),
            ("password = Autumn.Leaves77", &["Autumn.Leaves77"]),
            (
                "User name,Password,Access key ID,Secret access key,Console login link\n\
                 deployer,q7W!e9Rt#y2U,AKIAQ3EGRRPQZX5T7W2K,Jd8fK2mN9qR4tV7wX1yZ3aB5cE8gH0jL2nP4sU6x,\
                 https://123456789012.signin.aws.amazon.com/console\n",
                &[
                    "q7W!e9Rt#y2U",
                    "AKIAQ3EGRRPQZX5T7W2K",
                    "Jd8fK2mN9qR4tV7wX1yZ3aB5cE8gH0jL2nP4sU6x",
                ],
            ),
            (
                "Access key ID,Secret access key\r\nAKIAQ3EGRRPQZX5T7W2K,Jd8fK2mN9qR4tV7wX1yZ3aB5cE8gH0jL2nP4sU6x\r\n",
                &["Jd8fK2mN9qR4tV7wX1yZ3aB5cE8gH0jL2nP4sU6x"],
            ),
            (
                "SLACK_APP_TOKEN=xapp-1-A05QX7R2K9M-5829104736251-9f3c2b7a1e8d4c6b0a9f8e7d6c5b4a3928\
                 17f6e5d4c3b2a1f0e9d8c7b6a5f4e3d2",
                &["9f3c2b7a1e8d4c6b0a9f8e7d6c5b4a39", "5829104736251"],
            ),
            ("machine github.com login octocat password Wq8z!Lm3Pk9x", &["Wq8z!Lm3Pk9x"]),
            (
                "$ cat ~/.netrc\nmachine api.heroku.com\n  login dev@example.com\n  password \
                 7c9e6679-7425-40de-944b-e07fc1f90ae7\nmachine git.heroku.com\n",
                &["7c9e6679-7425-40de-944b-e07fc1f90ae7"],
            ),
            (
                "apiVersion: v1\nkind: Secret\nmetadata:\n  name: regcred\ntype: kubernetes.io/dockerconfigjson\n\
                 data:\n  .dockerconfigjson: eyJhdXRocyI6eyJnaGNyLmlvIjp7ImF1dGgiOiJaMmhmZEhKNU9tNXZkR2x1WnpFeU0zUT0ifX19\n",
                &["eyJhdXRocyI6eyJnaGNyLmlvIjp7ImF1dGgiOiJaMmhmZEhKNU9tNXZkR2x1WnpFeU0zUT0ifX19"],
            ),
            (
                "{\"auths\":{\"ghcr.io\":{\"auth\":\"b2N0b2NhdDpnaHBfUjR0eDd2YjJLcTlXbTNQeg==\"}}}",
                &["b2N0b2NhdDpnaHBfUjR0eDd2YjJLcTlXbTNQeg=="],
            ),
            (
                "apiVersion: v1\ndata:\n  DATABASE_URL: cG9zdGdyZXM6Ly9hcHA6aHVudGVyMkBkYg==\n  \
                 tls.key: LS0tLS1CRUdJTiBQUklWQVRF\nkind: Secret\nmetadata:\n  name: app\n",
                &["cG9zdGdyZXM6Ly9hcHA6aHVudGVyMkBkYg==", "LS0tLS1CRUdJTiBQUklWQVRF"],
            ),
            (
                "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"data\":{\"api-key\":\"c2stbGl2ZS1rZXk=\"}}",
                &["c2stbGl2ZS1rZXk="],
            ),
            (
                "kind: Secret\nstringData:\n  password: \"pl41n-t3xt!\"\n  token: abcd1234efgh\n",
                &["pl41n-t3xt!", "abcd1234efgh"],
            ),
            (
                "{\"sid\": \"SKb5aed9ec22e04a2abe1f3d8c7e6b5a49\", \"secret\": \"Yq2fQhXW0cJ7vN4sTgP1mL9rK3dE8aB6\"}",
                &["b5aed9ec22e04a2abe1f3d8c7e6b5a49", "Yq2fQhXW0cJ7vN4sTgP1mL9rK3dE8aB6"],
            ),
            (
                "curl -s --user 'api:0f2b5e8a1c4d7f3e9b6a2c5d8e1f4a7b-6c2d9e1f-8a3b4c5d' \\\n  \
                 https://api.mailgun.net/v3/mg.example.com/messages",
                &["0f2b5e8a1c4d7f3e9b6a2c5d8e1f4a7b"],
            ),
            (
                "mg = Mailgun(domain='mg.example.com', api_key='0f2b5e8a1c4d7f3e9b6a2c5d8e1f4a7b-6c2d9e1f-8a3b4c5d')",
                &["0f2b5e8a1c4d7f3e9b6a2c5d8e1f4a7b"],
            ),
            (
                "Here is the key for the deploy script, API key: 2f1c7b3a-9d8e-4f6a-b5c4-3e2d1f0a9b8c",
                &["2f1c7b3a-9d8e-4f6a-b5c4-3e2d1f0a9b8c"],
            ),
            (
                "import discord\nclient = discord.Client(intents=intents)\n\
                 client.run('MTE4NzY1NDMyMTA5ODc2NTQzMg.GhT9xQ.Zk3vR8mW2pL5nB7cX1yD4fJ6hS9tQ0uE3wA5iO')",
                &[
                    "MTE4NzY1NDMyMTA5ODc2NTQzMg.GhT9xQ.Zk3vR8mW2pL5nB7cX1yD4fJ6hS9tQ0uE3wA5iO",
                    "Zk3vR8mW2pL5nB7c",
                ],
            ),
            (
                "vault login hvb.AAAAAQJvY2Fsa2V5LXJvb3QtdG9rZW4tYmF0Y2gtMTIzNDU2",
                &["AAAAAQJvY2Fsa2V5"],
            ),
            ("X-Vault-Token: hvr.CAESIPq8rT2vK9mZ3xW7nL5bJ1", &["CAESIPq8rT2vK9mZ3xW7nL5bJ1"]),
            (
                "# created: 2024-05-01T10:00:00Z\n# public key: age1lvyvwawkr0mcnnnncaghunadrqkmuf9e6507x9y920xxpp866cnql7dp2z\n\
                 AGE-SECRET-KEY-1QFNWDYJ8ZWLHNSPRU3TDVVCEMMUC2PJMKGTA3PSM9PFZXA7YDJEQ9QL6HR\n",
                &["QFNWDYJ8ZWLHNSPRU3TDVVCEMMUC2PJMKGTA3PSM9"],
            ),
            (
                "阿里云 AccessKey ID：LTAI5tRk8WqZ2mN7xP4vB9cY\nAccessKeySecret：Hq7Lw2Zx9Kp4Mv6Nb3Rt8Yc1Fd5Gs0，请勿外传",
                &["LTAI5tRk8WqZ2mN7xP4vB9cY", "Hq7Lw2Zx9Kp4Mv6Nb3Rt8Yc1Fd5Gs0"],
            ),
            (
                "$ tccli cvm DescribeInstances --secretId AKIDz8krbsJ5yKBZQpn74WFkmLPx3gnPhESA --region ap-guangzhou",
                &["AKIDz8krbsJ5yKBZQpn74WFkmLPx3gnPhESA"],
            ),
            ("mysql -h db -u root -pR00t.Pass! shop", &["R00t.Pass!"]),
            ("mysql -h db -u root --password=R00t.Pass! shop", &["R00t.Pass!"]),
            ("mysqldump -u backup -p'B4ckup$Secret' --all-databases", &["B4ckup$Secret"]),
            ("sshpass -p 'Xy9#mQ2w' ssh -o StrictHostKeyChecking=no pi@10.0.0.5", &["Xy9#mQ2w"]),
            ("docker login -u deploy -p Dk8rPa55word registry.gitlab.com", &["Dk8rPa55word"]),
            ("docker login --username deploy --password Dk8rPa55word ghcr.io", &["Dk8rPa55word"]),
            (
                "const transporter = nodemailer.createTransport({ host: 'smtp.example.com', port: 587, \
                 auth: { user: 'alerts@example.com', pass: 'Sm7p-P4ss-2024' } });",
                &["Sm7p-P4ss-2024"],
            ),
            ("SMTP_PASS=Sm7p-P4ss-2024", &["Sm7p-P4ss-2024"]),
            ("Your API key: k3Y9mQ2xW7pL5nB8", &["k3Y9mQ2xW7pL5nB8"]),
            ("The API key is 8HqL2xWz9KpM4vNb, keep it safe.", &["8HqL2xWz9KpM4vNb"]),
            (
                "{\"url\": \"postgres:\\/\\/app:Pg-S3cret-77@db.internal:5432\\/app\"}",
                &["Pg-S3cret-77"],
            ),
            (
                "$ sudo -S apt update\nEnter password: Tr0ub4dor&3\nHit:1 http://archive.ubuntu.com",
                &["Tr0ub4dor&3", "Tr0ub4dor"],
            ),
            ("Password: hunter2!x\nLogin successful", &["hunter2!x"]),
            ("密码：Mima2024!abc", &["Mima2024!abc"]),
        ];
        let listing: String = format!(
            "-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n{pem_tail}\n-----END RSA PRIVATE KEY-----\nx"
        )
        .lines()
        .enumerate()
        .map(|(n, line)| format!("{:>6}→{line}\n", n + 1))
        .collect();
        let nested = format!(
            "{{\"output\": \"{{\\\"key\\\": \\\"-----BEGIN PRIVATE KEY-----\\\\n{pem_body}\\\\n\
             {pem_tail}\\\\n-----END PRIVATE KEY-----\\\\n\\\"}}\"}}"
        );
        let pems = [listing, nested];
        let redactor = Redactor::new();
        let cases = cases.iter().map(|(text, secrets)| (*text, *secrets));
        let pem_secrets: &[&str] = &[pem_body, pem_tail];
        let mut failures = Vec::new();
        for (text, secrets) in cases.chain(pems.iter().map(|text| (text.as_str(), pem_secrets))) {
            let (out, count) = redactor.redact(text);
            let survived: Vec<_> = secrets.iter().filter(|secret| out.contains(*secret)).collect();
            if count == 0 || !survived.is_empty() || redactor.redact(&out).1 != 0 {
                failures.push(format!("{survived:?} in {out}"));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
    }

    /// Code and output that look like secrets and are not: nothing of it may change.
    #[test]
    fn lookalikes_in_code_stay() {
        let texts = [
            "let id = Uuid::parse_str(\"7c9e6679-7425-40de-944b-e07fc1f90ae7\")?;",
            "request_id: 2f1c7b3a-9d8e-4f6a-b5c4-3e2d1f0a9b8c",
            "FROM rust@sha256:8f2d9c1e4b7a3f6e0d5c2b9a8e7f1d4c3b6a9e2f5d8c1b4a7e0f3d6c9b2a5e8f",
            "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nAuthor: Jane Doe <jane@example.com>",
            "data = base64.b64encode(b'hello world, this is not a secret at all').decode()",
            "SGVsbG8sIHRoaXMgaXMganVzdCBhIGJhc2U2NCBlbmNvZGVkIHNlbnRlbmNl",
            "The pattern ab1Q~ appears in the docs; Q~ is not special in Rust strings.",
            "token = settings.auth_token\npassword = config.database.password",
            "    client = Client(\n        token=settings.token\n    )",
            "API_KEY: process.env.API_KEY,",
            "password: Option<String>,\ntoken: CancellationToken,\napi_key: &'a str,",
            "if token is None:\n    raise ValueError('token is required')",
            "self.assertEqual(resp.status_code, 401)  # bad token: expired",
            "kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  FEATURE_FLAGS: a,b,c",
            "mysql -u root -p shop < dump.sql",
            "docker login --password-stdin -u ci ghcr.io < token.txt",
            "test auth::tests::rejects_bad_password ... ok\ntest result: ok. 12 passed",
            "machine learning models need data; the default is fine",
            "hash: 2073fec8df4f50947aaeb26c57d21fa5, region: us-east-1",
            "use sha2::Sha256; let digest = Sha256::digest(b\"pass\");",
            "Please enter your password: the prompt waits",
            "bypass: true\ncompass_heading: 270\npassthrough = 1",
        ];
        let redactor = Redactor::new();
        for text in texts {
            let (out, count) = redactor.redact(text);
            assert!(matches!(out, Cow::Borrowed(_)) && count == 0, "changed: {out}");
        }
    }

    /// An unquoted value runs on past a `&`, unless `&name=` starts the next parameter of a
    /// query string.
    #[test]
    fn an_ampersand_ends_a_value_only_before_a_parameter() {
        check_lines(
            r"
            password=abc&def123XYZ789 ⇒ password=[REDACTED:secret-assignment]
            api_key=Ab3&dE5fG7hJ9kL ⇒ api_key=[REDACTED:secret-assignment]
            export DB_PASS=Xy9&k2!m ./run ⇒ export DB_PASS=[REDACTED:secret-assignment] ./run
            https://x.io/cb?token=abc123XYZ&user=bob ⇒ https://x.io/cb?token=[REDACTED:secret-assignment]&user=bob
            ?token=abc&def123&user=bob&password=Xy9k2m ⇒ ?token=[REDACTED:secret-assignment]&user=bob&password=[REDACTED:secret-assignment]
            ?access_token=abc123&x=1 ⇒ ?access_token=[REDACTED:secret-assignment]&x=1
            TOKEN=abc123& ⇒ TOKEN=[REDACTED:secret-assignment]&
            deploy --api-key Ab3&dE5fG7hJ9kL -v ⇒ deploy --api-key [REDACTED:secret-cli-flag] -v
            ",
            redacted,
        );
    }

    /// Provider keys whose shape is the only clue: DigitalOcean's three prefixes, Mailgun's newer
    /// keys, Discord bot tokens, each bare as a command prints it.
    #[test]
    fn provider_shapes_need_no_keyword() {
        let hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let mailgun = "0123456789abcdef0123456789abcdef-0a1b2c3d-4e5f6a7b";
        let discord = "MTA4NzY1NDMyMTA5ODc2NTQzMg.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB";
        let cases = [
            (format!("dop_v1_{hex64}"), "digitalocean-token"),
            (format!("doo_v1_{hex64}"), "digitalocean-token"),
            (format!("dor_v1_{hex64}"), "digitalocean-token"),
            (mailgun.to_owned(), "mailgun-key"),
            (discord.to_owned(), "discord-bot-token"),
        ];
        for (secret, name) in cases {
            for text in
                [format!("{secret}\n"), format!("key {secret}, next"), format!("'{secret}'")]
            {
                let out = redacted(&text);
                assert!(out.contains(&format!("[REDACTED:{name}]")), "{out}");
                assert!(!out.contains(&secret[secret.len() - 12..]), "{out}");
            }
        }
        // The same shapes slightly off: longer hex, a dotted name, a first part that is not the
        // base64 of a number.
        for text in [
            "0123456789abcdef0123456789abcdef01-0a1b2c3d-4e5f6a7b",
            "0123456789abcdef0123456789abcdef-0a1b2c3d",
            "NetworkManagerConfiguration.client.handle_the_request_for_each_user",
            "TWFueSBoYW5kcyBtYWtlIGxpZ2h0.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB",
        ] {
            assert_eq!(redacted(text), text);
        }
    }

    /// Values only their surroundings give away: a table column named like a key, the arguments
    /// of a credentials constructor, what an auth command printed.
    #[test]
    fn values_only_context_makes_secrets() {
        let key = "q8Zr2mXv9LpT4wYb7NcK3hJd";
        let cases = [
            format!("| name | api_key |\n|------|---------|\n| prod | {key} |\n| dev | {key}2 |"),
            format!(
                "+------+--------+\n| NAME | TOKEN  |\n+------+--------+\n| ci   | {key} |\n+------+--------+"
            ),
            format!(
                " id | name |      password\n----+------+-----------\n  1 | prod | {key}\n(1 row)"
            ),
            format!("Credentials(\"AKIAIOSFODNN7EXAMPLE\", \"{key}\")"),
            format!("AwsBasicCredentials.create(\"AKIAIOSFODNN7EXAMPLE\", \"{key}\")"),
            format!("new StaticCredentialsProvider(\"svc-reader\", \"{key}\")"),
            format!(
                "s3 = boto3.client('s3', 'eu-west-1', None, True, None, None, 'AKIAIOSFODNN7EXAMPLE',\n    '{key}')"
            ),
            format!("client = Client(api_key, \"{key}\")"),
            format!("Aws::Credentials.new('AKIAIOSFODNN7EXAMPLE', '{key}')"),
            format!("$ gh auth token\n{key}\n"),
            format!(
                "$ heroku auth:token\n ›   Warning: token will expire 01/01/2026\n ›   Use heroku authorizations:create to generate a long-term token\n{key}"
            ),
            format!("❯ doctl auth token\n{key}"),
            format!(
                "$ gcloud auth application-default print-access-token\nya29.{key}\n$ echo done"
            ),
            format!(
                "$ npm token create\n┌────────┬──────────────────────────┐\n│ token  │ {key} │\n└────────┴──────────────────────────┘"
            ),
            format!("vercel tokens add ci\n> Success! Token {key} created"),
        ];
        for text in &cases {
            let out = redacted(text);
            assert!(!out.contains(&key[..16]), "{out}");
            assert_eq!(redacted(&out), out, "a second pass changes nothing");
        }
    }

    /// Code, identifiers and output that merely sit near the words of the rules above.
    #[test]
    fn lookalikes_near_context_stay() {
        let texts = [
            "password_field = form.get(\"password\")",
            "token_count = len(tokens)",
            "api_key_env = \"OPENAI_API_KEY\"",
            "const secret = await secretsManager.getSecretValue(params).promise();",
            "Credentials(username, password)",
            "creds = Credentials(\"OPENAI_API_KEY\", \"src/config/credentials.json\")",
            "client = Client(\"https://api.example.com/v1/billing\", timeout=30)",
            "session = Session(\"2024-05-01T10:00:00Z\", 'eu-west-1')",
            "| name | token_count | auth |\n|------|-------------|------|\n| prod | 1234 | oauth2-client-credentials |",
            "| key | value |\n|-----|-------|\n| colour | #a3aab2 |\n| id | 7c9e6679-7425-40de-944b-e07fc1f90ae7 |",
            "echo $TOKEN | base64\nfoo | 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
            "$ git log --oneline\n4b825dc642cb6eb9a060e54bf8d69288fbee4904 auth: refresh the token\n",
            "2024-05-01T10:00:00Z INFO auth request 7c9e6679-7425-40de-944b-e07fc1f90ae7 token refreshed",
            "$ gh auth token | pbcopy\n$ ls /home/me/.config/gh/hosts.yml",
            "$ gh auth token\n$ git push origin feature/auth-token-refresh-2024\n4b825dc642cb6eb9a060e54bf8d69288fbee4904",
            "color: #cccccc; /* token border */ background: #a3aab2;",
            "see src/auth/token_refresh_handler.rs and ~/.config/credentials/default_profile.toml",
        ];
        for text in texts {
            assert_eq!(redacted(text), text);
        }
    }

    #[test]
    fn random_values_are_told_from_words() {
        for yes in [
            "q8Zr2mXv9LpT4wYb7NcK3hJd",
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "ya29.a0AfH6SMBq8Zr2mXv9LpT4wYb7NcK3hJd",
            "7c9e6679-7425-40de-944b-e07fc1f90ae7",
        ] {
            assert!(is_random(yes), "{yes}");
        }
        for no in [
            "q8Zr2mXv9LpT4wY",
            "OPENAI_API_KEY_FOR_PRODUCTION",
            "oauth2-client-credentials",
            "authorizations:create",
            "https://api.example.com/v1/q8Zr2mXv9LpT4wYb",
            "/home/me/q8Zr2mXv9LpT4wYb7NcK3hJd",
            "2024-05-01T10:00:00.123456Z",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaa1111",
            "12345678901234567890",
            "octocat2024@example.com",
            "${PRODUCTION_API_KEY_2024}",
            "settings.api_key_for_production",
            "q8Zr2mXv9LpT 4wYb7NcK3hJd",
        ] {
            assert!(!is_random(no), "{no}");
        }
    }

    #[test]
    fn a_token_command_in_one_leaf_redacts_the_output_in_another() {
        let mut value = serde_json::json!({
            "session_id": "7c9e6679-7425-40de-944b-e07fc1f90ae7",
            "tool_input": {"command": "gh auth token", "description": "Print the token"},
            "tool_response": {"stdout": "q8Zr2mXv9LpT4wYb7NcK3hJd", "stderr": ""},
            "tool_use_id": "toolu_01Q8Zr2mXv9LpT4wYb7NcK3h",
        });
        let count = Redactor::new().scrub_json(&mut value);
        assert_eq!(value["tool_response"]["stdout"], "[REDACTED:cli-auth-token]");
        assert_eq!(value["session_id"], "7c9e6679-7425-40de-944b-e07fc1f90ae7");
        assert_eq!(value["tool_use_id"], "toolu_01Q8Zr2mXv9LpT4wYb7NcK3h");
        assert_eq!(count, 1);

        // Without such a command, the same output is left alone.
        let mut value = serde_json::json!({
            "tool_input": {"command": "uuidgen | tr -d -"},
            "tool_response": {"stdout": "q8Zr2mXv9LpT4wYb7NcK3hJd"},
        });
        assert_eq!(Redactor::new().redact_json(&mut value), 0);
    }

    #[test]
    fn certificates_and_public_keys_are_not_secrets() {
        let text = "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----\n\
                    ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKx me@host";
        assert!(matches!(Redactor::new().redact(text), (Cow::Borrowed(_), 0)));
    }

    #[test]
    fn an_unclosed_private_key_is_redacted_to_its_end() {
        let text = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg\nAwEHoUQDQgAE";
        assert_eq!(redacted(text), "[REDACTED:private-key]");
    }

    #[test]
    fn json_leaves_are_redacted_in_place() {
        let mut value = serde_json::json!({
            "tool_input": {
                "command": "curl -u admin:Tr0ub4dor-3 https://ci.internal",
                "env": {"GITHUB_TOKEN": "plain-looking-value", "HOME": "/home/me"},
                "args": ["--token", "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", 3, null],
            },
            "usage": {"input_tokens": 10, "progressToken": "p-1"},
            "apiKey": "${OPENAI_API_KEY}",
            "prompt": "keep <private>this out</private>",
        });
        let count = Redactor::new().redact_json(&mut value);
        expect![[r#"
            {
              "apiKey": "${OPENAI_API_KEY}",
              "prompt": "keep <private>this out</private>",
              "tool_input": {
                "args": [
                  "--token",
                  "[REDACTED:huggingface-token]",
                  3,
                  null
                ],
                "command": "curl -u admin:[REDACTED:curl-user-password] https://ci.internal",
                "env": {
                  "GITHUB_TOKEN": "[REDACTED:secret-assignment]",
                  "HOME": "/home/me"
                }
              },
              "usage": {
                "input_tokens": 10,
                "progressToken": "p-1"
              }
            }"#]]
        .assert_eq(&serde_json::to_string_pretty(&value).expect("serialises"));
        assert_eq!(count, 3);
        assert_eq!(Redactor::new().scrub_json(&mut value), 0);
        assert_eq!(value["prompt"], "keep ");
    }

    #[test]
    fn private_spans_are_dropped() {
        check_lines(
            "
            no tags here
            a <private>b</private> c ⇒ a  c
            a <PRIVATE>b</Private> d <private>e</private>f ⇒ a  d f
            keep:<private>everything after ⇒ keep:
            x <private>a<private>b</private>c</private> y ⇒ x  y
            stray </private> and <priv> stay
            é<private>ü</private>漢 ⇒ é漢
            ",
            |text| drop_private(text).into_owned(),
        );
        assert_eq!(drop_private("a <private>b\nc\n</private>d"), "a d");
        assert!(matches!(drop_private("a < b </private>"), Cow::Borrowed(_)));
        let (out, count) = Redactor::new().scrub("<private>ghp_x</private>TOKEN=abc123");
        assert_eq!((&*out, count), ("TOKEN=[REDACTED:secret-assignment]", 1));
    }

    #[test]
    fn sensitive_paths() {
        let yes = r".env ./.env /srv/app/.env.local C:\app\.env.production .envrc certs/server.pem
            tls.KEY store.p12 a.pfx vault.kdbx ~/.ssh/id_rsa /home/u/.ssh/id_ed25519 id_ecdsa_sk
            id_rsa.bak id_dsa .netrc _netrc .pgpass ~/.npmrc .pypirc .git-credentials
            deploy/secrets.yaml secrets.yml secrets.json ~/.aws/credentials
            C:\Users\me\.aws\credentials /root/.docker/config.json ~/.config/gcloud/credentials.db
            ~/.config/gcloud/application_default_credentials.json '.env' .ENV .Env.Local ID_RSA
            Secrets.YAML ~/.AWS/Credentials CERT.Pem";
        let no = r".env.example .env.sample .env.template .env.local.example env.rs id_rsa.pub
            id_ed25519-cert.pub credentials src/credentials.json ~/.aws/config config.json keys.rs
            monkey secrets.md ~/.ssh/ / README.md package.json ~/.ssh/known_hosts .ENV.EXAMPLE
            ID_RSA.PUB Credentials";
        for path in yes.split_whitespace() {
            assert!(is_sensitive_path(path), "{path}");
        }
        for path in no.split_whitespace().chain([""]) {
            assert!(!is_sensitive_path(path), "{path}");
        }
    }

    #[test]
    fn commands_that_read_sensitive_files() {
        let yes = "cat .env|less ~/.ssh/id_rsa|source .env|. ./.env.local|grep X .env.local|\
            cp secrets.yaml /tmp|docker run --env-file=.env app|echo $(cat .env)|cat < ~/.netrc|\
            cat .env*|scp host:.pgpass .|head -5 'my dir/.env'|openssl rsa -in server.key -check|\
            cat\t~/.aws/credentials";
        let no = "cat .env.example|ls -la ~/.ssh|cat ~/.ssh/id_rsa.pub|git status|\
            grep -r process.env src/|cargo test|echo environment|cat README.md";
        for command in yes.split('|') {
            assert!(command_touches_sensitive_path(command), "{command}");
        }
        for command in no.split('|') {
            assert!(!command_touches_sensitive_path(command), "{command}");
        }
    }

    #[test]
    fn four_mebibytes_without_secrets() {
        let redactor = Redactor::new();
        let line = "the quick brown fox jumps over the lazy dog 0123456789 — ünïcödé 文字\n";
        let plain = line.repeat(4 * 1024 * 1024 / line.len() + 1);
        let (out, count) = redactor.redact(&plain);
        assert!(matches!(out, Cow::Borrowed(_)) && count == 0);

        // Keywords everywhere but no secrets: the generic rules run and still change nothing.
        // One line of it as well: nothing may rescan the line per match.
        let line = "max_tokens=4096 token: string; auth = self.auth sk-learn ://x eyJ AKIA key-\n";
        let noisy = line.repeat(4 * 1024 * 1024 / line.len() + 1);
        for text in [noisy.clone(), noisy.replace('\n', " ")] {
            let (out, count) = redactor.redact(&text);
            assert!(matches!(out, Cow::Borrowed(_)) && count == 0);
        }
    }

    #[test]
    fn never_panics_at_any_char_boundary() {
        let redactor = Redactor::new();
        let mut text = String::new();
        for rule in RULES {
            let pieces = [rule.must_match, " é🦀漢 <private>ß</private> ", rule.must_not_match];
            text.extend(pieces.into_iter().chain(["\n"]));
        }
        for (at, _) in text.char_indices().step_by(7) {
            for piece in [&text[..at], &text[at..]] {
                redactor.scrub(piece);
                command_touches_sensitive_path(piece);
                is_sensitive_path(piece);
            }
        }
    }

    #[test]
    fn the_shared_instance_is_one() {
        assert!(std::ptr::eq(redactor(), redactor()));
    }
}
