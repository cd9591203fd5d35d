//! Modes: what the distiller watches for, as data.
//!
//! Owns loading modes: the built-in TOML files under `crates/agent-memory-core/modes/`
//! (embedded), user files in a directory the caller names (`~/.agent-memory/modes`), which
//! override a built-in of the same name, `inherits` chains, validation, and resolving every
//! text to one output language (`en` or `zh-CN`, English as the fallback).
//!
//! Must not: touch the store or the network, or write files. It only reads the user directory
//! it is given; the caller decides where that is.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One entry of a mode's closed set of observation types or concepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Term {
    /// The stable key stored with observations (`bugfix`, `gotcha`).
    pub key: String,
    /// The label a person reads, in the mode's language.
    pub label: String,
    pub description: String,
    pub emoji: String,
}

/// A loaded, validated mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mode {
    pub name: String,
    /// `en` or `zh-CN`: the language observations and summaries are written in.
    pub language: String,
    /// The distiller's role, for the LLM distiller's prompt.
    pub role: String,
    pub types: Vec<Term>,
    pub concepts: Vec<Term>,
    /// What is worth recording, in words (for the LLM prompt).
    pub record: Vec<String>,
    /// What to skip, in words (for the LLM prompt).
    pub skip: Vec<String>,
    /// Observation types this mode never emits (the quiet mode drops routine changes).
    pub skip_types: Vec<String>,
}

impl Mode {
    pub fn has_type(&self, key: &str) -> bool {
        self.types.iter().any(|t| t.key == key)
    }

    pub fn has_concept(&self, key: &str) -> bool {
        self.concepts.iter().any(|c| c.key == key)
    }

    /// The type with this key, for its label and emoji.
    pub fn type_term(&self, key: &str) -> Option<&Term> {
        self.types.iter().find(|t| t.key == key)
    }

    /// The concept with this key, for its label and emoji.
    pub fn concept_term(&self, key: &str) -> Option<&Term> {
        self.concepts.iter().find(|c| c.key == key)
    }

    /// Whether observations of this type are emitted: it is one of the mode's types and not
    /// in `skip_types`.
    pub fn emits_type(&self, key: &str) -> bool {
        self.has_type(key) && !self.skip_types.iter().any(|k| k == key)
    }
}

/// The mode used when the configuration names none.
pub const DEFAULT_MODE: &str = "code";

/// The output languages a mode can be loaded in, as canonical tags.
pub const LANGUAGES: &[&str] = &["en", "zh-CN"];

/// The built-in modes, in the order they are listed: an explicit table so that adding a mode
/// is one reviewed line and nothing is picked up by accident.
const BUILT_IN: &[(&str, &str)] = &[
    ("code", include_str!("../../modes/code.toml")),
    ("code-quiet", include_str!("../../modes/code-quiet.toml")),
    ("meeting-notes", include_str!("../../modes/meeting-notes.toml")),
];

/// The TOML text of a built-in mode: the template a user copies to write their own.
pub fn builtin_source(name: &str) -> Option<&'static str> {
    BUILT_IN.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
}

/// Where a mode's file comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum ModeSource {
    BuiltIn,
    User(PathBuf),
}

impl fmt::Display for ModeSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModeSource::BuiltIn => f.write_str("built-in"),
            ModeSource::User(path) => write!(f, "{}", path.display()),
        }
    }
}

/// One line of the mode list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModeInfo {
    pub name: String,
    /// The mode's one-line description, in English (empty if the mode gives none).
    pub description: String,
    /// The file that wins for this name: the user's file if there is one.
    pub source: ModeSource,
    /// Whether a user file replaces a built-in mode of the same name.
    pub overrides_builtin: bool,
    /// Why the mode does not load, if it does not: the list still shows a broken user file
    /// so that the user can find and fix it.
    pub problem: Option<String>,
}

/// Why a mode cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ModeError {
    #[error(
        "unknown mode `{name}`; available modes: {available}; to add one, create `{name}.toml` \
         in the user modes directory"
    )]
    UnknownMode { name: String, available: String },
    #[error("{mode} inherits unknown mode `{parent}`; available modes: {available}")]
    UnknownParent { mode: String, parent: String, available: String },
    #[error("invalid mode name `{name}`; a mode name is lowercase letters, digits, `-` and `_`")]
    InvalidName { name: String },
    #[error(
        "unsupported language `{language}`; supported: en, zh-CN (zh, zh-cn and zh-Hans mean zh-CN)"
    )]
    UnsupportedLanguage { language: String },
    #[error("cannot read mode file {path}: {source}; check that it exists and is readable")]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("invalid mode file {origin}: {detail}")]
    Parse { origin: String, detail: String },
    #[error("mode inheritance cycle: {chain}; remove one of the `inherits` lines")]
    Cycle { chain: String },
    #[error("{mode} has no `{field}`; add it or inherit it from another mode")]
    Missing { mode: String, field: &'static str },
    #[error("{mode} has empty `{field}`; a mode needs at least one")]
    Empty { mode: String, field: &'static str },
    #[error("{mode} lists the key `{key}` twice in `{field}`; keys must be unique")]
    DuplicateKey { mode: String, field: &'static str, key: String },
    #[error(
        "{mode} has an invalid key `{key}` in `{field}`; keys are lowercase letters, digits, \
         `-` and `_`"
    )]
    InvalidKey { mode: String, field: &'static str, key: String },
    #[error(
        "{mode} skips the type `{key}`, which is not one of its `types`; remove it from \
         `skip_types`"
    )]
    UnknownSkipType { mode: String, key: String },
}

/// The canonical tag of a supported output language, accepting common spellings of Chinese.
pub fn canonical_language(language: &str) -> Result<&'static str, ModeError> {
    let lower = language.trim().to_ascii_lowercase();
    match lower.as_str() {
        "en" => Ok("en"),
        "zh" | "zh-cn" | "zh-hans" => Ok("zh-CN"),
        _ => Err(ModeError::UnsupportedLanguage { language: language.to_owned() }),
    }
}

/// Loads a mode by name in one output language.
///
/// `user_dir` is the directory of user modes (`~/.agent-memory/modes`); a missing directory
/// just means there are none. A user file named like a built-in mode replaces it.
pub fn load(name: &str, language: &str, user_dir: Option<&Path>) -> Result<Mode, ModeError> {
    let language = canonical_language(language)?;
    let resolved = resolve(name, user_dir)?;
    validate(&resolved)?;
    Ok(resolved.into_mode(name, language))
}

/// Every mode there is, built-in and user, sorted by name.
pub fn list(user_dir: Option<&Path>) -> Vec<ModeInfo> {
    let mut names: Vec<String> = BUILT_IN.iter().map(|(n, _)| (*n).to_owned()).collect();
    names.extend(user_mode_names(user_dir));
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let user_path = user_dir.map(|d| d.join(format!("{name}.toml")));
            let user_path = user_path.filter(|p| p.is_file());
            let overrides_builtin = user_path.is_some() && builtin_source(&name).is_some();
            let source = user_path.map_or(ModeSource::BuiltIn, ModeSource::User);
            let (description, problem) = match resolve(&name, user_dir) {
                Ok(resolved) => match validate(&resolved) {
                    Ok(()) => (resolved.description(), None),
                    Err(e) => (resolved.description(), Some(e.to_string())),
                },
                Err(e) => (String::new(), Some(e.to_string())),
            };
            ModeInfo { name, description, source, overrides_builtin, problem }
        })
        .collect()
}

/// The names of the `*.toml` files in the user directory that are valid mode names.
fn user_mode_names(user_dir: Option<&Path>) -> Vec<String> {
    let Some(dir) = user_dir else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
                let stem = path.file_stem()?.to_str()?.to_owned();
                if is_key(&stem) {
                    return Some(stem);
                }
                tracing::debug!(path = %path.display(), "mode file name is not a valid mode name");
            }
            None
        })
        .collect()
}

/// Keys and mode names: lowercase ASCII letters, digits, `-` and `_`, never empty. This also
/// keeps a mode name from reaching outside the user directory (`../x`).
fn is_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// A text given per language; English is required because it is every text's fallback.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Localized<T> {
    en: T,
    #[serde(rename = "zh-CN")]
    zh_cn: Option<T>,
}

impl<T: Clone> Localized<T> {
    fn pick(&self, language: &str) -> T {
        match (language, &self.zh_cn) {
            ("zh-CN", Some(zh)) => zh.clone(),
            _ => self.en.clone(),
        }
    }
}

/// One `[[types]]` or `[[concepts]]` entry as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct TermFile {
    key: String,
    emoji: String,
    label: Localized<String>,
    description: Localized<String>,
}

/// A mode file as written: every field optional so that an inheriting file gives only what
/// it replaces.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModeFile {
    inherits: Option<String>,
    description: Option<Localized<String>>,
    role: Option<Localized<String>>,
    record: Option<Localized<Vec<String>>>,
    skip: Option<Localized<Vec<String>>>,
    skip_types: Option<Vec<String>>,
    types: Option<Vec<TermFile>>,
    concepts: Option<Vec<TermFile>>,
}

impl ModeFile {
    /// Fills what this file does not give from its parent.
    fn over(self, parent: ModeFile) -> ModeFile {
        ModeFile {
            inherits: None,
            description: self.description.or(parent.description),
            role: self.role.or(parent.role),
            record: self.record.or(parent.record),
            skip: self.skip.or(parent.skip),
            skip_types: self.skip_types.or(parent.skip_types),
            types: self.types.or(parent.types),
            concepts: self.concepts.or(parent.concepts),
        }
    }
}

/// A mode with its inheritance applied, still in every language.
#[derive(Debug)]
struct Resolved {
    /// How errors name the mode: its name and file.
    label: String,
    file: ModeFile,
}

impl Resolved {
    fn description(&self) -> String {
        self.file.description.as_ref().map(|d| d.en.clone()).unwrap_or_default()
    }

    /// Picks one language. Only called after `validate`, which guarantees role, types and
    /// concepts are present.
    fn into_mode(self, name: &str, language: &str) -> Mode {
        let terms = |terms: Option<Vec<TermFile>>| -> Vec<Term> {
            terms
                .unwrap_or_default()
                .into_iter()
                .map(|t| Term {
                    key: t.key,
                    label: t.label.pick(language),
                    description: t.description.pick(language),
                    emoji: t.emoji,
                })
                .collect()
        };
        let file = self.file;
        Mode {
            name: name.to_owned(),
            language: language.to_owned(),
            role: file.role.map(|r| r.pick(language)).unwrap_or_default(),
            types: terms(file.types),
            concepts: terms(file.concepts),
            record: file.record.map(|r| r.pick(language)).unwrap_or_default(),
            skip: file.skip.map(|s| s.pick(language)).unwrap_or_default(),
            skip_types: file.skip_types.unwrap_or_default(),
        }
    }
}

/// How a mode is named in messages: `built-in mode `code`` or `mode `x` (/path/x.toml)`.
fn describe(name: &str, source: &ModeSource) -> String {
    match source {
        ModeSource::BuiltIn => format!("built-in mode `{name}`"),
        ModeSource::User(path) => format!("mode `{name}` ({})", path.display()),
    }
}

/// Finds a mode's text: the user's file first unless `allow_user` is false, then the built-in.
fn locate(
    name: &str,
    user_dir: Option<&Path>,
    allow_user: bool,
) -> Result<Option<(ModeSource, String)>, ModeError> {
    if allow_user && let Some(dir) = user_dir {
        let path = dir.join(format!("{name}.toml"));
        match std::fs::read_to_string(&path) {
            Ok(text) => return Ok(Some((ModeSource::User(path), text))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(source) => return Err(ModeError::Read { path, source }),
        }
    }
    Ok(builtin_source(name).map(|text| (ModeSource::BuiltIn, text.to_owned())))
}

fn available(user_dir: Option<&Path>) -> String {
    let mut names: Vec<String> = BUILT_IN.iter().map(|(n, _)| (*n).to_owned()).collect();
    names.extend(user_mode_names(user_dir));
    names.sort();
    names.dedup();
    names.join(", ")
}

/// Follows `inherits` from `name` to a mode that inherits nothing, then lays the files over
/// each other from the root down.
fn resolve(name: &str, user_dir: Option<&Path>) -> Result<Resolved, ModeError> {
    if !is_key(name) {
        return Err(ModeError::InvalidName { name: name.to_owned() });
    }
    let mut chain: Vec<(String, ModeSource)> = Vec::new();
    let mut files: Vec<ModeFile> = Vec::new();
    let mut next = Some((name.to_owned(), true));
    while let Some((current, allow_user)) = next.take() {
        let Some((source, text)) = locate(&current, user_dir, allow_user)? else {
            return Err(match chain.last() {
                None => ModeError::UnknownMode { name: current, available: available(user_dir) },
                Some((child, child_source)) => ModeError::UnknownParent {
                    mode: describe(child, child_source),
                    parent: current,
                    available: available(user_dir),
                },
            });
        };
        let seen = chain.iter().any(|(n, s)| *n == current && *s == source);
        chain.push((current.clone(), source.clone()));
        if seen {
            let names: Vec<&str> = chain.iter().map(|(n, _)| n.as_str()).collect();
            return Err(ModeError::Cycle { chain: names.join(" -> ") });
        }
        let file: ModeFile = toml::from_str(&text).map_err(|e| ModeError::Parse {
            origin: describe(&current, &source),
            detail: e.to_string().trim_end().to_owned(),
        })?;
        if let Some(parent) = &file.inherits {
            if !is_key(parent) {
                return Err(ModeError::InvalidName { name: parent.clone() });
            }
            // A user file that inherits its own name builds on the built-in it replaces,
            // which is how a user tweaks `code` without copying all of it.
            let own_name = *parent == current && matches!(source, ModeSource::User(_));
            next = Some((parent.clone(), !own_name));
        }
        files.push(file);
    }
    let file =
        files.into_iter().rev().fold(ModeFile::default(), |parent, child| child.over(parent));
    let (top, top_source) = &chain[0];
    Ok(Resolved { label: describe(top, top_source), file })
}

/// Checks what every loaded mode must satisfy; names the mode and its file on failure.
fn validate(resolved: &Resolved) -> Result<(), ModeError> {
    let mode = || resolved.label.clone();
    let file = &resolved.file;
    if file.role.is_none() {
        return Err(ModeError::Missing { mode: mode(), field: "role" });
    }
    for (field, terms) in [("types", &file.types), ("concepts", &file.concepts)] {
        let Some(terms) = terms else {
            return Err(ModeError::Missing { mode: mode(), field });
        };
        if terms.is_empty() {
            return Err(ModeError::Empty { mode: mode(), field });
        }
        for (i, term) in terms.iter().enumerate() {
            if !is_key(&term.key) {
                return Err(ModeError::InvalidKey { mode: mode(), field, key: term.key.clone() });
            }
            if terms[..i].iter().any(|t| t.key == term.key) {
                return Err(ModeError::DuplicateKey { mode: mode(), field, key: term.key.clone() });
            }
        }
    }
    let types = file.types.as_deref().unwrap_or_default();
    for key in file.skip_types.as_deref().unwrap_or_default() {
        if !types.iter().any(|t| t.key == *key) {
            return Err(ModeError::UnknownSkipType { mode: mode(), key: key.clone() });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::Write;

    use expect_test::{Expect, expect};

    use super::*;

    fn write_mode(dir: &Path, name: &str, text: &str) {
        let mut file = File::create(dir.join(format!("{name}.toml"))).expect("create mode file");
        file.write_all(text.as_bytes()).expect("write mode file");
    }

    /// The error message of loading `text` as user mode `name`, with the temp path hidden.
    fn load_err(name: &str, text: &str) -> String {
        let dir = tempfile::tempdir().expect("tempdir");
        write_mode(dir.path(), name, text);
        let err = load(name, "en", Some(dir.path())).expect_err("the mode must not load");
        err.to_string().replace(&dir.path().display().to_string(), "<dir>")
    }

    fn terms(terms: &[Term]) -> String {
        terms
            .iter()
            .map(|t| format!("{} {} {}: {}\n", t.emoji, t.key, t.label, t.description))
            .collect()
    }

    fn check_terms(mode: &str, language: &str, expect: Expect) {
        let mode = load(mode, language, None).expect("built-in mode loads");
        expect.assert_eq(&format!(
            "types:\n{}concepts:\n{}",
            terms(&mode.types),
            terms(&mode.concepts)
        ));
    }

    #[test]
    fn every_built_in_mode_loads_in_every_language() {
        for (name, _) in BUILT_IN {
            for language in LANGUAGES {
                let mode = load(name, language, None).expect("built-in mode loads");
                assert_eq!(mode.name, *name);
                assert_eq!(mode.language, *language);
                assert!(!mode.role.is_empty(), "{name} {language} has a role");
                assert!(!mode.record.is_empty(), "{name} {language} has record");
                assert!(!mode.skip.is_empty(), "{name} {language} has skip");
                let source = builtin_source(name).expect("built-in source");
                assert!(source.starts_with("# agent-memory mode: "), "{name} opens with comments");
            }
        }
        assert!(builtin_source(DEFAULT_MODE).is_some());
    }

    #[test]
    fn built_in_modes_give_every_text_in_chinese() {
        // A missing translation would silently fall back to English; built-ins must not.
        for (name, text) in BUILT_IN {
            let file: ModeFile = toml::from_str(text).expect("built-in parses");
            let texts = [&file.description, &file.role];
            assert!(texts.iter().all(|t| t.as_ref().is_none_or(|t| t.zh_cn.is_some())), "{name}");
            for list in [&file.record, &file.skip].into_iter().flatten() {
                let zh = list.zh_cn.as_ref().expect("record and skip in zh-CN");
                assert_eq!(zh.len(), list.en.len(), "{name}");
            }
            for term in file.types.iter().chain(&file.concepts).flatten() {
                assert!(term.label.zh_cn.is_some() && term.description.zh_cn.is_some(), "{name}");
            }
        }
    }

    #[test]
    fn code_mode_in_english() {
        check_terms(
            "code",
            "en",
            expect![[r#"
                types:
                🔴 bugfix Bug fix: Something was broken and is now fixed
                🟣 feature Feature: New behaviour or capability was added
                🔄 refactor Refactor: Code was restructured without changing behaviour
                ✅ change Change: A routine change: configuration, dependencies, docs, small edits
                🔵 discovery Discovery: Something was learned about the code or the system
                ⚖️ decision Decision: A choice was made, with its reason
                🚨 security_alert Security alert: A vulnerability or exposed secret that needs action
                🔐 security_note Security note: A security-relevant fact worth knowing, no action needed
                🔒 sensitive Sensitive: Work that touched private data; kept on this machine
                concepts:
                🔧 how-it-works How it works: The mechanism behind a part of the system
                💡 why-it-exists Why it exists: The purpose or history behind code or a rule
                📝 what-changed What changed: What is different now, and where
                🩹 problem-solution Problem and solution: An error or obstacle and what resolved it
                ⚠️ gotcha Gotcha: A surprise or trap that is easy to fall into again
                🧩 pattern Pattern: A convention or reusable way of doing things here
                🔀 trade-off Trade-off: What was given up for what, and why
            "#]],
        );
    }

    #[test]
    fn code_mode_matches_the_design_sets() {
        let mode = load("code", "en", None).expect("code loads");
        let keys = |t: &[Term]| t.iter().map(|t| t.key.clone()).collect::<Vec<_>>().join(" ");
        assert_eq!(
            keys(&mode.types),
            "bugfix feature refactor change discovery decision security_alert security_note sensitive"
        );
        assert_eq!(
            keys(&mode.concepts),
            "how-it-works why-it-exists what-changed problem-solution gotcha pattern trade-off"
        );
        assert!(mode.skip_types.is_empty());
    }

    #[test]
    fn code_mode_in_chinese() {
        let mode = load("code", "zh", None).expect("code loads in zh");
        assert_eq!(mode.language, "zh-CN");
        let labels: Vec<&str> = mode.types.iter().map(|t| t.label.as_str()).collect();
        expect![[r#"缺陷修复 新功能 重构 改动 发现 决策 安全警报 安全备注 敏感"#]]
            .assert_eq(&labels.join(" "));
        // Every label, role and list entry is Chinese: each holds a CJK character.
        let cjk = |s: &str| s.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
        let all = mode.types.iter().chain(&mode.concepts);
        assert!(all.clone().all(|t| cjk(&t.label) && cjk(&t.description)));
        assert!(cjk(&mode.role));
        assert!(mode.record.iter().chain(&mode.skip).all(|s| cjk(s)));
    }

    #[test]
    fn language_aliases_and_unsupported_languages() {
        for alias in ["zh", "zh-cn", "zh-Hans", "zh-CN", "ZH-HANS"] {
            assert_eq!(canonical_language(alias).expect("alias"), "zh-CN", "{alias}");
        }
        assert_eq!(canonical_language("en").expect("en"), "en");
        let err = load("code", "fr", None).expect_err("fr is not supported");
        assert!(matches!(err, ModeError::UnsupportedLanguage { .. }));
        expect![[
            r#"unsupported language `fr`; supported: en, zh-CN (zh, zh-cn and zh-Hans mean zh-CN)"#
        ]]
        .assert_eq(&err.to_string());
    }

    #[test]
    fn code_quiet_inherits_code_concepts_and_skips_routine_types() {
        let code = load("code", "en", None).expect("code loads");
        let quiet = load("code-quiet", "en", None).expect("code-quiet loads");
        assert_eq!(quiet.concepts, code.concepts);
        assert_eq!(quiet.types, code.types);
        assert_eq!(quiet.skip_types, ["change", "refactor"]);
        assert_ne!(quiet.role, code.role);
        assert!(!quiet.emits_type("change") && !quiet.emits_type("refactor"));
        assert!(quiet.emits_type("bugfix") && code.emits_type("change"));
    }

    #[test]
    fn meeting_notes_has_its_own_sets() {
        check_terms(
            "meeting-notes",
            "zh-CN",
            expect![[r#"
                types:
                ⚖️ decision 决定: 会议达成一致的事项
                📌 action_item 待办事项: 有人承担的任务，附负责人和日期（如有）
                ❓ open_question 未决问题: 已提出但尚未回答的问题
                🚧 risk 风险: 可能拖延或打乱工作的事情
                💡 insight 洞见: 对问题或相关人员的新认识
                concepts:
                🗺️ context 背景: 理解这一点所需的背景
                🧠 rationale 理由: 为何做出决定或提出此事
                👤 ownership 负责人: 由谁负责，何时完成
                🔗 dependency 依赖: 它依赖什么，或什么依赖它
                🔁 follow-up 后续跟进: 接下来或下次会议必须做的事
                🔀 trade-off 权衡: 为得到什么而放弃了什么，以及原因
            "#]],
        );
    }

    #[test]
    fn user_mode_overrides_a_built_in() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_mode(
            dir.path(),
            "code",
            r#"
            role = { en = "Only bugs." }
            types = [{ key = "bugfix", emoji = "🐛", label = { en = "Bug" }, description = { en = "A bug" } }]
            concepts = [{ key = "gotcha", emoji = "!", label = { en = "Gotcha", "zh-CN" = "陷阱" }, description = { en = "A trap" } }]
            "#,
        );
        let mode = load("code", "zh-CN", Some(dir.path())).expect("user code loads");
        assert_eq!(mode.types.len(), 1);
        // No Chinese given: English per string; given: Chinese.
        assert_eq!(mode.types[0].label, "Bug");
        assert_eq!(mode.concepts[0].label, "陷阱");
        assert_eq!(mode.role, "Only bugs.");
        assert!(mode.record.is_empty() && mode.skip.is_empty());
    }

    #[test]
    fn user_mode_inheriting_code_replaces_only_types() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_mode(
            dir.path(),
            "mine",
            r#"
            inherits = "code"
            [[types]]
            key = "bugfix"
            emoji = "🐛"
            label = { en = "Bug", "zh-CN" = "虫" }
            description = { en = "A bug" }
            "#,
        );
        let code = load("code", "en", None).expect("code loads");
        let mine = load("mine", "en", Some(dir.path())).expect("mine loads");
        assert_eq!(mine.name, "mine");
        assert_eq!(mine.types.iter().map(|t| t.key.as_str()).collect::<Vec<_>>(), ["bugfix"]);
        assert_eq!(mine.concepts, code.concepts);
        assert_eq!((mine.role, mine.record, mine.skip), (code.role, code.record, code.skip));
    }

    #[test]
    fn user_mode_inheriting_its_own_name_builds_on_the_built_in() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_mode(dir.path(), "code", "inherits = \"code\"\nskip_types = [\"change\"]\n");
        let mode = load("code", "en", Some(dir.path())).expect("user code loads");
        assert_eq!(mode.skip_types, ["change"]);
        assert_eq!(mode.types.len(), 9);
        // A chain through the user's `code` also ends at the built-in.
        write_mode(dir.path(), "mine", "inherits = \"code\"\n");
        let mine = load("mine", "en", Some(dir.path())).expect("mine loads");
        assert_eq!(mine.skip_types, ["change"]);
    }

    #[test]
    fn inheritance_cycles_are_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_mode(dir.path(), "a", "inherits = \"b\"\n");
        write_mode(dir.path(), "b", "inherits = \"c\"\n");
        write_mode(dir.path(), "c", "inherits = \"a\"\n");
        let err = load("a", "en", Some(dir.path())).expect_err("a cycle");
        assert!(matches!(err, ModeError::Cycle { .. }));
        expect![[
            r#"mode inheritance cycle: a -> b -> c -> a; remove one of the `inherits` lines"#
        ]]
        .assert_eq(&err.to_string());
    }

    #[test]
    fn unknown_modes_list_the_available_ones() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_mode(dir.path(), "mine", "inherits = \"nope\"\n");
        let err = load("missing", "en", Some(dir.path())).expect_err("unknown");
        assert!(matches!(err, ModeError::UnknownMode { .. }));
        expect![[r#"unknown mode `missing`; available modes: code, code-quiet, meeting-notes, mine; to add one, create `missing.toml` in the user modes directory"#]]
            .assert_eq(&err.to_string());
        let err = load("mine", "en", Some(dir.path())).expect_err("unknown parent");
        assert!(matches!(err, ModeError::UnknownParent { .. }));
        assert!(err.to_string().contains("inherits unknown mode `nope`"), "{err}");
        let err = load("../code", "en", Some(dir.path())).expect_err("a path is not a name");
        assert!(matches!(err, ModeError::InvalidName { .. }));
        expect![[
            r#"invalid mode name `../code`; a mode name is lowercase letters, digits, `-` and `_`"#
        ]]
        .assert_eq(&err.to_string());
    }

    const TERM: &str =
        r#"{ key = "k", emoji = "*", label = { en = "K" }, description = { en = "K" } }"#;

    #[test]
    fn invalid_toml_names_the_file() {
        let msg = load_err("bad", "role = ");
        assert!(msg.starts_with("invalid mode file mode `bad` (<dir>/bad.toml): "), "{msg}");
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let msg = load_err("typo", "inherits = \"code\"\nskip_type = [\"change\"]\n");
        assert!(msg.starts_with("invalid mode file mode `typo` (<dir>/typo.toml): "), "{msg}");
        assert!(msg.contains("unknown field `skip_type`"), "{msg}");
        let msg = load_err("lang", "inherits = \"code\"\nrole = { en = \"x\", zh = \"y\" }\n");
        assert!(msg.contains("unknown field `zh`"), "{msg}");
    }

    #[test]
    fn empty_types_or_concepts_are_rejected() {
        let msg = load_err("e", "inherits = \"code\"\ntypes = []\n");
        expect![[r#"mode `e` (<dir>/e.toml) has empty `types`; a mode needs at least one"#]]
            .assert_eq(&msg);
        let msg = load_err("e", "inherits = \"code\"\nconcepts = []\n");
        assert!(msg.contains("has empty `concepts`"), "{msg}");
    }

    #[test]
    fn missing_fields_are_rejected() {
        let msg = load_err("m", &format!("types = [{TERM}]\nconcepts = [{TERM}]\n"));
        expect![[
            r#"mode `m` (<dir>/m.toml) has no `role`; add it or inherit it from another mode"#
        ]]
        .assert_eq(&msg);
        let msg = load_err("m", &format!("role = {{ en = \"r\" }}\ntypes = [{TERM}]\n"));
        assert!(msg.contains("has no `concepts`"), "{msg}");
    }

    #[test]
    fn duplicate_keys_are_rejected() {
        let msg = load_err("d", &format!("inherits = \"code\"\nconcepts = [{TERM}, {TERM}]\n"));
        expect![[
            r#"mode `d` (<dir>/d.toml) lists the key `k` twice in `concepts`; keys must be unique"#
        ]]
        .assert_eq(&msg);
    }

    #[test]
    fn invalid_keys_are_rejected() {
        let term = TERM.replace("\"k\"", "\"Bug Fix\"");
        let msg = load_err("i", &format!("inherits = \"code\"\ntypes = [{term}]\n"));
        expect![[r#"mode `i` (<dir>/i.toml) has an invalid key `Bug Fix` in `types`; keys are lowercase letters, digits, `-` and `_`"#]]
            .assert_eq(&msg);
    }

    #[test]
    fn skip_types_must_be_types() {
        let msg = load_err("s", &format!("inherits = \"code-quiet\"\ntypes = [{TERM}]\n"));
        expect![[r#"mode `s` (<dir>/s.toml) skips the type `change`, which is not one of its `types`; remove it from `skip_types`"#]]
            .assert_eq(&msg);
    }

    #[test]
    fn list_shows_built_ins_and_user_modes() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_mode(dir.path(), "code", "inherits = \"code\"\nskip_types = [\"change\"]\n");
        write_mode(dir.path(), "mine", "inherits = \"meeting-notes\"\n");
        write_mode(dir.path(), "broken", "inherits = \"code\"\ntypes = []\n");
        write_mode(dir.path(), "Not A Name", "");
        let shown: String = list(Some(dir.path()))
            .iter()
            .map(|m| {
                let over = if m.overrides_builtin { " (overrides built-in)" } else { "" };
                let problem = m.problem.as_deref().map(|p| format!(" [{p}]")).unwrap_or_default();
                format!("{} | {}{over} | {}{problem}\n", m.name, m.source, m.description)
            })
            .collect();
        let shown = shown.replace(&dir.path().display().to_string(), "<dir>");
        expect![[r#"
            broken | <dir>/broken.toml | Coding sessions: bugs, features, decisions and what was learned about the code [mode `broken` (<dir>/broken.toml) has empty `types`; a mode needs at least one]
            code | <dir>/code.toml (overrides built-in) | Coding sessions: bugs, features, decisions and what was learned about the code
            code-quiet | built-in | Coding sessions, quietly: only what is painful to rediscover
            meeting-notes | built-in | Meeting notes: decisions, action items, open questions and risks
            mine | <dir>/mine.toml | Meeting notes: decisions, action items, open questions and risks
        "#]]
        .assert_eq(&shown);
        let built_in: Vec<String> = list(None).into_iter().map(|m| m.name).collect();
        assert_eq!(built_in, ["code", "code-quiet", "meeting-notes"]);
    }
}
