//! Secret redaction on the capture path: the rule table, the [`Redactor`] that applies it, the
//! `<private>…</private>` filter, and the list of files whose content is never stored.
//!
//! Everything an agent sends passes through here before it reaches the store, so this module owns
//! the answer to "is this a secret". It runs inside a hook that must finish in under 5 ms, so it
//! compiles nothing up front: an aho-corasick scan for each rule's keywords decides which rules'
//! regexes are compiled (once, on first need) and run. Compiling the whole table at start was
//! measured at 10 s (DESIGN.md §7). Patterns use ASCII classes so the lazy DFA never has to give up
//! on Unicode word boundaries.
//!
//! It must not log, print or otherwise emit what it finds (a secret in a log file has been stored),
//! must do no I/O, and must not panic on any input.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::{Captures, Regex, RegexBuilder};
use serde_json::Value;

/// One kind of secret: how to find it cheaply, how to match it, and two examples that test it.
#[derive(Debug)]
pub struct Rule {
    /// Short kebab-case name, shown in the replacement `[REDACTED:<name>]`.
    pub name: &'static str,
    /// Lowercase ASCII literals, matched case-insensitively; the regex runs only when one occurs.
    /// Every text the pattern can match must contain one of them.
    pub keywords: &'static [&'static str],
    /// The regex, compiled with Unicode off (`\b`, `\s`, `(?i)` are ASCII); `(?u:…)` where a
    /// negated class must match whole characters.
    pub pattern: &'static str,
    /// The named capture group holding the secret, or `None` for the whole match. A group that
    /// starts and ends with the same quote keeps its quotes.
    pub secret_group: Option<&'static str>,
    /// What a match must also satisfy, for what a regex without look-around cannot say.
    pub guard: Guard,
    /// A realistic text this rule must redact (made-up secret of the right shape).
    pub must_match: &'static str,
    /// A near miss that must come through unchanged.
    pub must_not_match: &'static str,
}

/// Checks applied to a match before it is redacted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard {
    /// Every match is a secret.
    None,
    /// The secret contains an ASCII digit: random keys do, kebab-case names (`sk-learn-…`) do not.
    HasDigit,
    /// The secret is not a placeholder: `${VAR}`, `<your-token>`, `xxx`, `changeme`, `null`…
    NotPlaceholder,
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
/// aho-corasick keyword prefilter finds one of the rule's keywords in the text.
#[derive(Debug)]
pub struct Redactor {
    /// `None` only if the automaton could not be built; every rule is then a candidate, which is
    /// slower but never less safe.
    prefilter: Option<AhoCorasick>,
    /// For each prefilter pattern id, the index of its rule.
    keyword_rule: Vec<usize>,
    /// One lazily compiled regex per rule. An inner `None` means the pattern did not compile; the
    /// table test rules that out, and skipping beats panicking in a hook.
    regexes: Box<[OnceLock<Option<Regex>>]>,
}

impl Default for Redactor {
    fn default() -> Self {
        Self::new()
    }
}

impl Redactor {
    /// Builds the keyword automaton (a fraction of a millisecond); compiles no regex.
    pub fn new() -> Redactor {
        let mut keywords = Vec::new();
        let mut keyword_rule = Vec::new();
        for (index, rule) in RULES.iter().enumerate() {
            for keyword in rule.keywords {
                keywords.push(*keyword);
                keyword_rule.push(index);
            }
        }
        // A contiguous NFA builds in a fraction of the time of a DFA, and on the hook path the
        // build, not the scan, is what a short payload pays for.
        let prefilter = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(&keywords)
            .ok();
        Redactor {
            prefilter,
            keyword_rule,
            regexes: RULES.iter().map(|_| OnceLock::new()).collect(),
        }
    }

    /// Returns the text with every secret replaced by `[REDACTED:<rule-name>]`, and how many were
    /// replaced.
    pub fn redact<'a>(&self, text: &'a str) -> (Cow<'a, str>, usize) {
        let candidates = self.candidates(text);
        let mut out = Cow::Borrowed(text);
        let mut count = 0;
        // Rules run in table order over the progressively redacted text: a secret taken by a
        // specific rule is a `[REDACTED:…]` marker by the time the generic ones look, and `apply`
        // skips matches that reach into a marker, so overlaps cannot garble the output.
        for (index, rule) in RULES.iter().enumerate() {
            if candidates & (1 << index) == 0 {
                continue;
            }
            let Some(regex) = self.regex(index) else {
                continue;
            };
            if let Some((redacted, n)) = apply(rule, regex, &out) {
                out = Cow::Owned(redacted);
                count += n;
            }
        }
        (out, count)
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
    pub fn redact_json(&self, value: &mut Value) -> usize {
        self.walk_json(value, false)
    }

    /// [`Redactor::redact_json`] that also drops `<private>` spans from every string leaf.
    pub fn scrub_json(&self, value: &mut Value) -> usize {
        self.walk_json(value, true)
    }

    /// How many rules have compiled their regex so far (for tests and `doctor`).
    pub fn compiled_rule_count(&self) -> usize {
        self.regexes.iter().filter(|slot| slot.get().is_some()).count()
    }

    fn walk_json(&self, value: &mut Value, drop: bool) -> usize {
        match value {
            Value::String(text) => {
                let (cleaned, count) = if drop { self.scrub(text) } else { self.redact(text) };
                if let Cow::Owned(cleaned) = cleaned {
                    *text = cleaned;
                }
                count
            }
            Value::Array(items) => items.iter_mut().map(|item| self.walk_json(item, drop)).sum(),
            Value::Object(map) => map
                .iter_mut()
                .map(|(key, item)| match item {
                    Value::String(text) if is_secret_key_name(key) && !is_placeholder(text) => {
                        *text = format!("[REDACTED:{GENERIC_RULE}]");
                        1
                    }
                    _ => self.walk_json(item, drop),
                })
                .sum(),
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
    }

    /// A bit per rule whose keywords occur in `text`.
    fn candidates(&self, text: &str) -> u64 {
        let all = (1u64 << RULES.len()) - 1;
        let Some(prefilter) = &self.prefilter else {
            return all;
        };
        let Ok(matches) = prefilter.try_find_overlapping_iter(text) else {
            return all;
        };
        let mut found = 0;
        for keyword in matches {
            if let Some(rule) = self.keyword_rule.get(keyword.pattern().as_usize()) {
                found |= 1 << rule;
            }
            if found == all {
                break;
            }
        }
        found
    }

    fn regex(&self, index: usize) -> Option<&Regex> {
        let rule = RULES.get(index)?;
        self.regexes
            .get(index)?
            .get_or_init(|| RegexBuilder::new(rule.pattern).unicode(false).build().ok())
            .as_ref()
    }
}

/// A process-wide shared instance, built on first use.
pub fn redactor() -> &'static Redactor {
    static SHARED: LazyLock<Redactor> = LazyLock::new(Redactor::new);
    &SHARED
}

/// Replaces every accepted match of one rule; `None` when nothing was replaced.
fn apply(rule: &Rule, regex: &Regex, text: &str) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut copied = 0;
    let mut count = 0;
    // Markers left by earlier rules, in order. A match reaching into one would cut it in half
    // (`https://[REDACTED:github-pat]@…` read as user `[REDACTED`, password `github-pat]`), so
    // such matches are skipped: the secret there is already gone.
    let mut markers = text.match_indices("[REDACTED:").filter_map(|(start, _)| {
        let close = text.as_bytes()[start..].iter().take(64).position(|&b| b == b']')?;
        Some((start, start + close + 1))
    });
    let mut marker = markers.next();
    for caps in regex.captures_iter(text) {
        let Some((start, end, quoted)) = secret_span(rule, &caps) else {
            continue;
        };
        while marker.is_some_and(|(_, marker_end)| marker_end <= start) {
            marker = markers.next();
        }
        if marker.is_some_and(|(marker_start, _)| marker_start < end) {
            continue;
        }
        if !rule.guard.allows(text, &caps, start..end, quoted) {
            continue;
        }
        if count == 0 {
            out.reserve(text.len());
        }
        // Regex offsets on a `str` always fall on character boundaries, and so do the quote
        // adjustments (quotes are ASCII), so these slices cannot panic.
        out.push_str(&text[copied..start]);
        out.push_str("[REDACTED:");
        out.push_str(rule.name);
        out.push(']');
        copied = end;
        count += 1;
    }
    if count == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some((out, count))
}

/// Byte range of the secret in a match, and whether surrounding quotes were trimmed off it.
fn secret_span(rule: &Rule, caps: &Captures<'_>) -> Option<(usize, usize, bool)> {
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
    fn allows(self, text: &str, caps: &Captures<'_>, secret: Range<usize>, quoted: bool) -> bool {
        let value = &text[secret.clone()];
        match self {
            Guard::None => true,
            Guard::HasDigit => value.bytes().any(|b| b.is_ascii_digit()),
            Guard::NotPlaceholder => !is_placeholder(value),
            Guard::Assignment => is_assigned_secret(text, caps, secret, quoted),
        }
    }
}

/// The [`Guard::Assignment`] checks. Config and code look alike (`password: hunter2` in YAML,
/// `password: SecretStr` in Python, `Token: "#cccccc",` in a theme), so a value must also sit
/// where config puts values. Tuned on real code (the cargo registry, Python's standard library)
/// and real agent payloads (../shared/agents/samples).
fn is_assigned_secret(text: &str, caps: &Captures<'_>, secret: Range<usize>, quoted: bool) -> bool {
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
    // Only the bytes next to the match are looked at, never the whole line: a minified JSON line
    // can be megabytes long and hold thousands of matches.
    let mut before_key = text[..key.start()].bytes().rev();
    let starts_line =
        matches!(before_key.find(|b| !matches!(b, b' ' | b'\t' | b'-')), None | Some(b'\n'));
    // `key: value` is YAML or a header only where a line or a string starts ("X-Api-Key: …" in a
    // curl argument); mid-line it is prose ("invalid token: expired"), and after a dotted key
    // it is a Python or JS mapping (`Token.Comment: "italic"`).
    if sep.as_str() == ":" && !opening_quote && (!starts_line || is_dotted_path(key.as_str())) {
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
        || matches!(next_visible, None | Some(b'\n' | b'#' | b'"' | b'\'' | b'`'));
    let code_like = value.starts_with([':', '*', '='])
        || value.contains("::")
        || after.starts_with([',', ';', ')', ']', '}'])
        || is_dotted_path(value)
        || ((word_like || numeric) && !tight);
    ends_line && !code_like
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
    SECRET_KEY_PARTS.split(' ').any(|part| squashed.contains(part))
        && !has_word(key, NOT_SECRET_KEY_WORDS)
}

/// Key-name fragments that make a `key = value` a secret, matched on the key squashed (so
/// `API_KEY`, `apiKey` and `api-key` all contain `apikey`).
const SECRET_KEY_PARTS: &str =
    "token secret password passwd pwd apikey accesskey privatekey auth credential passphrase";

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
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'<') {
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
    let name = name.to_ascii_lowercase();
    if name.is_empty() {
        return false;
    }
    if let Some(variant) = name.strip_prefix(".env.") {
        return !variant.split('.').any(|part| matches!(part, "example" | "sample" | "template"));
    }
    let mut dirs = dir.rsplit(['/', '\\']);
    match name.as_str() {
        ".env" | ".envrc" | ".netrc" | "_netrc" | ".pgpass" | ".npmrc" | ".pypirc"
        | ".git-credentials" | "secrets.yaml" | "secrets.yml" | "secrets.json" => true,
        "credentials"
        | "credentials.json"
        | "credentials.db"
        | "application_default_credentials.json" => dirs.any(|dir| {
            [".aws", ".docker", "gcloud"].iter().any(|known| dir.eq_ignore_ascii_case(known))
        }),
        "config.json" => dirs.next().is_some_and(|dir| dir.eq_ignore_ascii_case(".docker")),
        _ => {
            let ssh_key = ["id_rsa", "id_ed25519", "id_ecdsa", "id_dsa"]
                .iter()
                .any(|prefix| name.starts_with(prefix));
            let extension = name.rsplit_once('.').map_or("", |(_, extension)| extension);
            (ssh_key && extension != "pub")
                || matches!(extension, "pem" | "key" | "p12" | "pfx" | "kdbx")
        }
    }
}

/// True when a shell command line reads one of those files (`cat .env`, `less ~/.ssh/id_rsa`,
/// `source .env`, `grep X .env.local`, `cp secrets.yaml /tmp`…): any word of the command that
/// [`is_sensitive_path`] says yes to. Words are split at whitespace, quotes, `=`, `<`, `>`, `|`,
/// `&`, `;`, `(`, `)`, `{`, `}`, `,` and `:` (so `--env-file=.env`, `$(cat .env)`, `-v
/// ./secrets.yaml:/run/x` and `scp host:.netrc .` count); a trailing `*` glob is also tried
/// without it (`cat .env*`). Erring towards yes only costs the output of one command.
pub fn command_touches_sensitive_path(command: &str) -> bool {
    command
        .split(|c: char| c.is_whitespace() || "\"'`=<>|&;(){},:".contains(c))
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
];

/// Everything after the `-----BEGIN …-----` line of an armoured block: a line break (real or
/// JSON-escaped `\n`), then base64, header lines (`Proc-Type: 4,ENCRYPTED`) and blank lines, up
/// to a `-----`. An unclosed block (truncated output) runs to the end of its base64.
macro_rules! armoured_body {
    () => {
        r"[ \t]*(?:\r?\n|(?:\\r)?\\n)(?:[A-Za-z0-9+/=:,.\s\\]+|-[A-Za-z0-9])*"
    };
}

/// A double- or single-quoted string (escapes allowed), or an unquoted run of token characters,
/// then an end: space, line end, `,;&`, a closing bracket or quote.
macro_rules! assigned_value {
    () => {
        concat!(
            r#"(?P<secret>(?u:"(?:[^"\\\r\n]|\\.)*"|'(?:[^'\\\r\n]|\\.)*')"#,
            r#"|[A-Za-z0-9_\-.+/=~!@#$%^*?:]+)(?:[ \t\r\n,;&"'`)\]}\\]|$)"#
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
        secret_group: None,
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
        "TWILIO_API_KEY=SK6702824c1c099724caf4941d4072014b",
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
    // A bare UUID: only next to the word `heroku`.
    rule("heroku-api-key", &["heroku"],
        near!("heroku", "[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"),
        "HEROKU_API_KEY=145fda99-88c7-9fc3-5526-f7eaed46725a",
        "heroku logs --tail --app my-app-2024").redacting_group(),
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
    rule("discord-bot-token", &["discord"],
        near!("discord", r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}"),
        "DISCORD_TOKEN=MTIzNDU2Nzg5MDEyMzQ1Njc4.7kvmlP.7HVDctQUy1xvCkgafrfwA94hJ9WnywX0t0ZBfd",
        "discord.py 2.3.2 needs Python 3.8").redacting_group(),
    // `scheme://user:password@host`: only the password goes. Brackets are not allowed in userinfo
    // (RFC 3986), which also keeps earlier markers out of the match.
    rule("password-in-url", &["://"],
        concat!(r#"\b[A-Za-z][A-Za-z0-9+.\-]*://(?u:[^\s:/?#@\[\]"'<>]*):"#,
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
    // `--token abc`, `--db-password abc`; the `--token=abc` form is the generic rule's. The secret
    // word must start a dash-separated word of the flag, so the keywords can include the dash
    // and the rule stays asleep for the many texts that merely say "token".
    rule("secret-cli-flag", &["-token", "-secret", "-passw", "-pwd", "-api", "-access", "-private",
        "-auth", "-credential", "-passphrase"],
        concat!(r"(?:^|[ \t])--?(?P<key>(?:[A-Za-z0-9]+-)*(?i:token|secret|passw(?:or)?d|pwd",
            r"|api-?key|access-?key|private-?key|auth|credential|passphrase)[A-Za-z0-9\-]*)[ \t]+",
            r#"(?P<secret>(?u:"(?:[^"\\\r\n]|\\.)*"|'(?:[^'\\\r\n]|\\.)*')"#,
            r"|[A-Za-z0-9_.+/=~!@#$%^*?:][A-Za-z0-9_\-.+/=~!@#$%^*?:]*)(?:[ \t\r\n;&|)]|$)"),
        "mysql --password hunter2-ish -h db",
        "docker login --password-stdin -u me < pw.txt && gh run --token-file ./t")
        .redacting_group().guarded(Guard::Assignment),
    // `KEY=value`, `KEY: value`, `"key": "value"`, `export KEY=value`, `key => 'value'`.
    rule(GENERIC_RULE, SECRET_WORDS,
        concat!(r#"(?P<q>["']?)(?P<key>[A-Za-z0-9_.\-]*(?i:token|secret|passw(?:or)?d|pwd"#,
            r"|api[_.\-]?key|access[_.\-]?key|private[_.\-]?key|auth|credential|passphrase)",
            r#"[A-Za-z0-9_.\-]*)(?P<qe>["']?)[ \t]*(?P<sep>:=|=>|=|:)[ \t]*"#, assigned_value!()),
        "export DB_PASSWORD=\"correct horse battery\"",
        "max_tokens=4096 token_url: https://x/token password: ${DB_PASSWORD}")
        .redacting_group().guarded(Guard::Assignment),
];

// The prefilter reports candidate rules as bits of a u64.
const _: () = assert!(RULES.len() < 64, "the candidate set is a u64 bitmask");

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    /// The secrets a rule alone would redact in `text` (its regex and guard, no prefilter).
    fn own_secrets<'t>(redactor: &Redactor, index: usize, text: &'t str) -> Vec<&'t str> {
        let rule = &RULES[index];
        let regex = redactor.regex(index).expect("every pattern compiles");
        let accepted = |caps: Captures<'_>| {
            let (start, end, quoted) = secret_span(rule, &caps)?;
            rule.guard.allows(text, &caps, start..end, quoted).then_some(&text[start..end])
        };
        regex.captures_iter(text).filter_map(accepted).collect()
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
        assert!(redactor.prefilter.is_some());
        assert!(RULES.len() >= 28);
        for (index, rule) in RULES.iter().enumerate() {
            let name = rule.name;
            assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'), "{name}");
            assert_eq!(RULES.iter().filter(|other| other.name == name).count(), 1, "{name}");
            let regex = redactor.regex(index).expect("every pattern compiles");
            if let Some(group) = rule.secret_group {
                assert!(regex.capture_names().any(|g| g == Some(group)), "{name}: no {group}");
            }
            assert!(!rule.keywords.is_empty(), "{name}");
            for keyword in rule.keywords {
                assert_eq!(keyword.to_ascii_lowercase(), *keyword, "{name}");
            }

            // The rule itself finds the example's secret, and the prefilter lets it run: one of
            // its keywords lies inside the match.
            let secrets = own_secrets(&redactor, index, rule.must_match);
            assert!(!secrets.is_empty(), "{name}: its regex misses its must_match");
            let whole = regex.find(rule.must_match).expect("matched above").as_str();
            let lower = whole.to_ascii_lowercase();
            assert!(rule.keywords.iter().any(|k| lower.contains(k)), "{name}: no keyword");

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
            TWILIO_API_KEY=[REDACTED:twilio-key]
            SENDGRID=[REDACTED:sendgrid-api-key]
            auth=('api', '[REDACTED:mailgun-api-key]')
            doctl auth init -t [REDACTED:digitalocean-token]
            HEROKU_API_KEY=[REDACTED:heroku-api-key]
            DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=[REDACTED:azure-storage-account-key];EndpointSuffix=core.windows.net
            https://acme.blob.core.windows.net/c/b.txt?sv=2022-11-02&sp=r&sig=[REDACTED:azure-sas-signature]
            DATABRICKS_HOST=x DATABRICKS_TOKEN=[REDACTED:databricks-token]
            X-Shopify-Access-Token: [REDACTED:shopify-token]
            https://api.telegram.org/bot[REDACTED:telegram-bot-token]/getMe
            [REDACTED:discord-webhook]
            DISCORD_TOKEN=[REDACTED:discord-bot-token]
            DATABASE_URL=postgres://app:[REDACTED:password-in-url]@db.internal:5432/app
            curl -H 'Authorization: Bearer [REDACTED:authorization-bearer]' https://api.example.com
            Authorization: Basic [REDACTED:authorization-basic]
            curl -u admin:[REDACTED:curl-user-password] https://ci.internal/api/json
            mysql --password [REDACTED:secret-cli-flag] -h db
            export DB_PASSWORD="[REDACTED:secret-assignment]"
        "#]]
        .assert_eq(&shown);
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
            ~/.config/gcloud/application_default_credentials.json '.env'";
        let no = r".env.example .env.sample .env.template .env.local.example env.rs id_rsa.pub
            id_ed25519-cert.pub credentials src/credentials.json ~/.aws/config config.json keys.rs
            monkey secrets.md ~/.ssh/ / README.md package.json ~/.ssh/known_hosts";
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
