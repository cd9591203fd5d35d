//! What a person states to their agent: here is a prompt in the user's own words, give me the
//! preferences, conventions, decisions and requests to remember it holds, or nothing.
//!
//! A statement is read from the cues people use in English and Chinese: a request to remember
//! ("remember that…", "记住…"), a standing rule ("from now on", "always", "以后", "一律"), a
//! preference about the person ("I prefer", "我喜欢", how their docs or answers should read), or
//! a decision ("we decided", "we'll use", "决定", "改用"), with a change of mind read apart: what
//! it says is no longer used ("no longer X", "instead of X", "switch from X to Y", "不用 X 了",
//! "把 X 改成 Y"), so the memory it replaces can be found. A request to do something now ("fix
//! the route bug", "把超时改成 30 秒") is none of these, and neither is a question; words such
//! as "改成" or "switch to" make a decision only when the sentence also says who decided or why.
//!
//! One home for these rules: the offline distiller's decision observations and promotion's
//! memory of what the user said both read prompts through [`read`].
//!
//! Must not: touch the store, or read anything but the text it is given (never tool output or
//! file content: only a person's prompt is a statement); or lowercase beyond ASCII, since a
//! cue found in the lowercased text cuts the original at the same byte (full Unicode
//! lowercasing changes the length of letters such as `İ`).

use crate::text::{clip, one_line};

/// The longest statement kept, in characters (a memory holds at most 300).
const MAX_CHARS: usize = 280;

/// Prompts longer than this are pasted material (logs, files), not statements to remember.
const MAX_PROMPT_CHARS: usize = 4000;

/// What a statement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatedKind {
    /// About the person: how they write, the language and tone they want, their own tools.
    Preference,
    /// A standing rule for the work: naming, commits, tests, formatting, steps to always take.
    Convention,
    /// A choice of a component, approach or value, often with its reason.
    Decision,
    /// Something to remember that is none of the above.
    Fact,
}

/// One statement read from a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stated {
    pub kind: StatedKind,
    /// The statement in the person's words, without the request to remember around it.
    pub text: String,
    /// The person asked for it to be remembered: their own approval.
    pub explicit: bool,
    /// About the person rather than one codebase: every project's memory.
    pub personal: bool,
    /// What the statement says is no longer used (`Redis`, `chrono`): the subject of the memory
    /// it replaces.
    pub replaces: Vec<String>,
    /// Why, when the statement says (`because …`, `因为…`).
    pub reason: Option<String>,
    /// The statement without its reason: what was chosen or asked for.
    pub gist: String,
}

/// Cues that ask for something to be remembered, at the start of a sentence (after "please",
/// "also", "and").
const REMEMBER_EN: &[&str] = &[
    "remember that ",
    "remember: ",
    "remember, ",
    "remember this: ",
    "remember this, ",
    "remember ",
    "keep in mind that ",
    "keep in mind: ",
    "keep in mind ",
    "note for the future: ",
    "note for the future that ",
    "for future reference, ",
    "for future reference: ",
    "don't forget that ",
    "do not forget that ",
    "don't forget: ",
    "make a note that ",
    "make a note: ",
    "memorize that ",
    "memorize: ",
];

const REMEMBER_ZH: &[&str] = &[
    "请帮我记住",
    "帮我记住",
    "请记住",
    "你要记住",
    "要记住",
    "记住",
    "请记一下",
    "记一下",
    "别忘了",
    "不要忘了",
    "记得",
];

/// Cues of a rule that holds from now on, anywhere in the sentence.
const STANDING_EN: &[&str] = &[
    "from now on",
    "going forward",
    "from here on",
    "in the future",
    "in future,",
    "every time you",
    "whenever you",
    "by default,",
];

/// Cues of a rule at the start of a sentence (after "please", "we", "you should", "you must").
const STANDING_EN_START: &[&str] = &["always ", "never ", "don't ever ", "do not ever "];

const STANDING_ZH: &[&str] = &[
    "从现在起",
    "从现在开始",
    "从今以后",
    "从今往后",
    "以后",
    "今后",
    "往后",
    "一律",
    "统一用",
    "统一使用",
    "每次都",
    "永远不要",
    "始终",
    "总是",
    "不要再",
    "别再",
];

/// A person speaking of what they like.
const PREFER_EN: &[&str] = &[
    "i prefer",
    "i'd prefer",
    "i would prefer",
    "i'd rather",
    "i would rather",
    "i like ",
    "i don't like",
    "i do not like",
    "i hate ",
    "i want my ",
    "my preference",
];

const PREFER_ZH: &[&str] =
    &["我喜欢", "我更喜欢", "我偏好", "我习惯", "我不喜欢", "我讨厌", "我希望", "我倾向"];

/// What a statement about the person is about: how they write and want to be answered.
const PERSONAL_TOPICS_EN: &[&str] = &[
    "my docs",
    "my documentation",
    "my writing",
    "my readme",
    "my blog",
    "my emails",
    "reply in",
    "answer in",
    "respond in",
    "write to me",
    "talk to me",
    "tone",
    "british spelling",
    "american spelling",
    "address me",
    "call me",
];

const PERSONAL_TOPICS_ZH: &[&str] = &[
    "我写",
    "我的文档",
    "我的博客",
    "我的邮件",
    "写文档",
    "文档风格",
    "写作",
    "文风",
    "语气",
    "口语",
    "书面",
    "用中文回",
    "用英文回",
    "中文回答",
    "英文回答",
    "回答用",
    "回复用",
    "回答我",
    "回复我",
    "跟我说",
    "称呼我",
];

/// Decisions that say who decided: never a mere request.
const DECIDED_EN: &[&str] = &[
    "we decided",
    "we've decided",
    "we have decided",
    "i decided",
    "i've decided",
    "decision:",
    "we'll use",
    "we will use",
    "we're using",
    "we are using",
    "we'll go with",
    "we're going with",
    "we are going with",
    "let's go with",
    "let's use",
    "let's stick with",
    "we'll stick with",
    "we use ",
    "we no longer",
    "we don't use",
    "we do not use",
    "we stopped using",
    "we're switching",
    "we are switching",
    "we switched",
    "we're moving",
    "we are moving",
    "we moved",
    "we're dropping",
];

const DECIDED_ZH: &[&str] = &[
    "决定",
    "我们用",
    "我们使用",
    "我们改用",
    "我们换成",
    "我们不用",
    "我们不再",
    "改用",
    "弃用",
    "不再用",
    "不再使用",
    "就用",
    "选用",
    "采用",
];

/// Words that make a decision of a change that could be a request, when a reason or a person
/// deciding comes with them.
const CHANGE_EN: &[&str] =
    &["switch to", "instead of", "replace ", "migrate ", "move to", "rather than"];
const CHANGE_ZH: &[&str] = &["改成", "换成", "替换成", "迁移到", "换掉", "而不是"];

const BECAUSE: &[&str] = &[" because ", " since ", "因为", "由于", "原因是"];

/// Sentence openings of a request to act now.
const REQUEST_EN: &[&str] = &[
    "fix ",
    "add ",
    "write ",
    "implement ",
    "create ",
    "update ",
    "change ",
    "make ",
    "run ",
    "refactor ",
    "remove ",
    "delete ",
    "rename ",
    "explain ",
    "show ",
    "tell ",
    "help ",
    "check ",
    "look ",
    "find ",
    "build ",
    "test ",
    "debug ",
    "investigate ",
    "review ",
    "can you",
    "could you",
    "would you",
    "please fix",
    "please add",
    "please write",
    "please run",
    "please check",
    "please look",
    "please update",
    "please make",
    "please create",
    "set ",
    "bump ",
    "raise ",
    "lower ",
    "revert ",
    "undo ",
    "install ",
    "upgrade ",
    "generate ",
    "draft ",
];

const REQUEST_ZH: &[&str] = &[
    "帮我",
    "请帮",
    "请你",
    "修复",
    "修一下",
    "修改一下",
    "加一个",
    "添加",
    "写一个",
    "写一段",
    "写个",
    "实现",
    "看看",
    "看一下",
    "检查",
    "解释",
    "运行",
    "跑一下",
    "把",
    "给我",
    "生成",
];

/// A sentence cut from a prompt, trimmed, with its end mark.
fn sentences(prompt: &str) -> Vec<&str> {
    prompt
        .split_inclusive(['.', '!', '?', '。', '！', '？', '\n', ';', '；'])
        .map(str::trim)
        .filter(|s| {
            !s.trim_end_matches(['.', '!', '?', '。', '！', '？', ';', '；']).trim().is_empty()
        })
        .collect()
}

fn bare(sentence: &str) -> &str {
    sentence.trim().trim_end_matches(['.', '!', '?', '。', '！', '？', ';', '；']).trim()
}

/// The lowercase sentence without openings that carry no meaning ("please", "and", "also").
fn opening_stripped(lower: &str) -> &str {
    let mut rest = lower.trim_start_matches(['-', '*', '>', ' ']);
    loop {
        let before = rest;
        for opening in
            ["please ", "pls ", "and ", "also ", "oh, ", "ok, ", "okay, ", "so ", "btw, ", "note: "]
        {
            rest = rest.strip_prefix(opening).unwrap_or(rest);
        }
        for opening in ["请", "另外，", "另外", "还有，", "还有", "对了，", "对了", "顺便说一下，"]
        {
            rest = rest.strip_prefix(opening).unwrap_or(rest);
        }
        if rest == before {
            return rest.trim_start();
        }
    }
}

fn is_question(sentence: &str) -> bool {
    let s = sentence.trim();
    if s.ends_with(['?', '？']) {
        return true;
    }
    let lower = s.to_ascii_lowercase();
    const ASK_EN: &[&str] = &[
        "what ", "why ", "how ", "when ", "where ", "who ", "which ", "is ", "are ", "can ",
        "could ", "do ", "does ", "did ", "should ", "would ", "will ", "have ", "has ",
    ];
    let ends_zh = bare(s).ends_with(['吗', '呢', '么']);
    // "Do not use X" and "Don't…" tell, they do not ask.
    let tells = lower.starts_with("do not ") || lower.starts_with("don't ");
    (!tells && ASK_EN.iter().any(|a| lower.starts_with(a)))
        || ends_zh
        || ["为什么", "怎么", "什么", "如何", "哪个", "哪些", "是否"].iter().any(|w| s.contains(w))
}

fn starts_with_any<'m>(text: &str, markers: &[&'m str]) -> Option<&'m str> {
    markers.iter().copied().find(|m| text.starts_with(m))
}

fn contains_any(text: &str, markers: &[&str]) -> bool {
    markers.iter().any(|m| text.contains(m))
}

/// The sentence after its request to remember, when it opens with one.
fn after_remember(sentence: &str) -> Option<&str> {
    let lower = sentence.to_ascii_lowercase();
    let stripped = opening_stripped(&lower);
    let skipped = lower.len() - stripped.len();
    if let Some(cue) = starts_with_any(stripped, REMEMBER_EN) {
        // "Remember to run X" is a standing rule too; "remember when…" a question of memory.
        if cue == "remember "
            && (stripped.starts_with("remember when") || stripped.starts_with("remember the time"))
        {
            return None;
        }
        let at = skipped + cue.len();
        // "Remember to run X" keeps the rule: "run X".
        let rest = sentence.get(at..).map(str::trim)?;
        return Some(rest.strip_prefix("to ").unwrap_or(rest));
    }
    if let Some(cue) = starts_with_any(stripped, REMEMBER_ZH) {
        let at = skipped + cue.len();
        let rest = sentence.get(at..)?.trim_start_matches([':', '：', ',', '，', ' ']);
        // 记得吗 / 记得…吗 is a question; 记得 alone needs what follows.
        return Some(rest.trim());
    }
    None
}

fn is_standing(sentence: &str) -> bool {
    let lower = sentence.to_ascii_lowercase();
    let stripped = opening_stripped(&lower);
    let subject_stripped = ["we ", "you should ", "you must ", "you need to ", "you ", "i "]
        .iter()
        .find_map(|s| stripped.strip_prefix(s))
        .unwrap_or(stripped);
    contains_any(&lower, STANDING_EN)
        || starts_with_any(stripped, STANDING_EN_START).is_some()
        || starts_with_any(subject_stripped, STANDING_EN_START).is_some()
        || contains_any(sentence, STANDING_ZH)
}

fn is_preference(sentence: &str) -> bool {
    let lower = sentence.to_ascii_lowercase();
    contains_any(&lower, PREFER_EN) || contains_any(sentence, PREFER_ZH)
}

fn is_personal_topic(sentence: &str) -> bool {
    let lower = sentence.to_ascii_lowercase();
    contains_any(&lower, PERSONAL_TOPICS_EN) || contains_any(sentence, PERSONAL_TOPICS_ZH)
}

fn is_decided(sentence: &str) -> bool {
    let lower = sentence.to_ascii_lowercase();
    contains_any(&lower, DECIDED_EN)
        || contains_any(sentence, DECIDED_ZH)
        || no_longer_used(sentence).is_some()
}

fn has_reason(sentence: &str) -> bool {
    let lower = format!(" {}", sentence.to_ascii_lowercase());
    contains_any(&lower, BECAUSE)
}

fn is_change(sentence: &str) -> bool {
    let lower = sentence.to_ascii_lowercase();
    contains_any(&lower, CHANGE_EN) || contains_any(sentence, CHANGE_ZH)
}

fn is_request(sentence: &str) -> bool {
    let lower = sentence.to_ascii_lowercase();
    let stripped = opening_stripped(&lower);
    starts_with_any(stripped, REQUEST_EN).is_some()
        || starts_with_any(stripped, REQUEST_ZH).is_some()
}

/// Words that end the name of what is no longer used: `Redis for the queue` → `Redis`.
const OBJECT_ENDS_EN: &[&str] = &[
    " for ",
    " as ",
    " to ",
    " in ",
    " on ",
    " with ",
    " because ",
    " since ",
    " and ",
    " any more",
    " anymore",
    ",",
    ";",
    ":",
    ".",
    "(",
];

fn object_en(rest: &str) -> Option<String> {
    let rest = rest.trim_start();
    let end = OBJECT_ENDS_EN
        .iter()
        .filter_map(|m| rest.to_ascii_lowercase().find(m))
        .min()
        .unwrap_or(rest.len());
    let words: Vec<&str> = rest[..end]
        .split_whitespace()
        .filter(|w| {
            !["the", "a", "an", "our", "this", "that", "it", "using", "use"]
                .contains(&w.to_ascii_lowercase().as_str())
        })
        .take(3)
        .collect();
    let object = words.join(" ").trim_matches(['`', '"', '\'', '“', '”']).to_owned();
    (!object.is_empty() && object.chars().count() <= 40).then_some(object)
}

/// The CJK-or-name run right after a cue: `不用 Redis 做队列了` → `Redis`.
fn object_zh(rest: &str) -> Option<String> {
    let rest = rest.trim_start_matches([' ', '`', '“', '"']);
    let mut out = String::new();
    let latin = rest.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    for c in rest.chars() {
        let keep = if latin {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '+')
        } else {
            !c.is_ascii_punctuation()
                && !c.is_whitespace()
                && !"，。、；：！？了的做来去当作为”’".contains(c)
        };
        if !keep || out.chars().count() >= 12 {
            break;
        }
        out.push(c);
    }
    let out = out.trim_end_matches('.').to_owned();
    (!out.is_empty()).then_some(out)
}

/// What a sentence says is no longer used, if it says so.
fn no_longer_used(sentence: &str) -> Option<String> {
    let lower = sentence.to_ascii_lowercase();
    // English: the object follows the cue, or (for "X is out", "no more X") is named by it.
    for cue in [
        "no longer use ",
        "no longer using ",
        "stop using ",
        "stopped using ",
        "don't use ",
        "do not use ",
        "not using ",
        "instead of ",
        "rather than ",
        "switch from ",
        "switching from ",
        "switched from ",
        "migrate from ",
        "migrating from ",
        "move from ",
        "moving from ",
        "moved from ",
        "replace ",
        "replacing ",
        "drop ",
        "dropping ",
        "get rid of ",
    ] {
        if let Some(at) = lower.find(cue) {
            // "don't use" is a reversal only with "any more" or a new choice beside it.
            if matches!(cue, "don't use " | "do not use " | "not using ")
                && !(lower.contains("anymore") || lower.contains("any more") || is_change(sentence))
            {
                continue;
            }
            if let Some(object) = object_en(&sentence[at + cue.len()..]) {
                return Some(object);
            }
        }
    }
    // Chinese: 不用 X 了, 不再用 X, 弃用 X, 从 X 迁移到, 把 X 改成/换成 Y, X 改成 Y.
    for cue in ["不再使用", "不再用", "不用", "弃用", "不要用", "别用", "换掉"] {
        if let Some(at) = sentence.find(cue) {
            let rest = &sentence[at + cue.len()..];
            // 不用 needs its 了 (不用担心 is not a reversal), unless a new choice follows.
            if cue == "不用" && !(rest.contains('了') || is_change(sentence)) {
                continue;
            }
            if let Some(object) = object_zh(rest) {
                return Some(object);
            }
        }
    }
    for (open, close) in [
        ("从", "迁移到"),
        ("从", "换成"),
        ("从", "改成"),
        ("把", "改成"),
        ("把", "换成"),
        ("把", "替换成"),
    ] {
        if let (Some(a), Some(b)) = (sentence.find(open), sentence.find(close))
            && a + open.len() < b
        {
            let object = sentence[a + open.len()..b].trim();
            if let Some(object) = object_zh(object) {
                return Some(object);
            }
        }
    }
    None
}

/// The statement without its reason, and the reason, when it gives one.
fn reason_of(text: &str) -> (String, Option<String>) {
    let lower = text.to_ascii_lowercase();
    let trim = |s: &str| {
        s.trim().trim_matches([',', '，', '、', ':', '：', ' ', '.', '。']).trim().to_owned()
    };
    let Some((at, len)) = BECAUSE
        .iter()
        .filter_map(|m| lower.find(m.trim_start()).map(|at| (at, m.trim_start().len())))
        .filter(|(at, _)| {
            // A marker inside a word ("sincere") is none.
            *at == 0 || !lower[..*at].ends_with(|c: char| c.is_ascii_alphanumeric())
        })
        .min()
    else {
        return (trim(text), None);
    };
    let reason = text.get(at + len..).map(trim).filter(|r| !r.is_empty());
    let gist = trim(&text[..at]);
    if gist.is_empty() { (trim(text), reason) } else { (gist, reason) }
}

/// The statements of a prompt, in order. A prompt the person typed, never tool output.
pub fn read(prompt: &str) -> Vec<Stated> {
    if prompt.chars().count() > MAX_PROMPT_CHARS || prompt.contains("```") {
        return Vec::new();
    }
    let all = sentences(prompt);
    let mut out: Vec<Stated> = Vec::new();
    let mut at = 0;
    while at < all.len() {
        let sentence = all[at];
        at += 1;
        let remembered = after_remember(bare(sentence));
        if remembered.is_none() && is_question(sentence) {
            continue;
        }
        let body = remembered.unwrap_or(bare(sentence));
        let standing = is_standing(body);
        let preference = is_preference(body);
        let decided = is_decided(body);
        let change = is_change(body) && (has_reason(body) || standing);
        if remembered.is_none() && !(standing || preference || decided || change) {
            continue;
        }
        // A request to act now is a statement only with a standing or explicit cue.
        if remembered.is_none() && !standing && !preference && is_request(body) && !has_reason(body)
        {
            continue;
        }
        // The sentences that follow belong to it while they go on saying it: "Remember: docs in
        // short sentences. No jargon." — not a request, not a question, not a new statement.
        let mut text = body.to_owned();
        while at < all.len() {
            let next = bare(all[at]);
            // A change of mind goes on into what replaces it: "We no longer use X; switch to Y".
            let replacement = (decided || change)
                && no_longer_used(&text).is_some()
                && (is_change(next)
                    || is_decided(next)
                    || next.to_ascii_lowercase().starts_with("use "));
            let follows = !is_question(all[at])
                && (replacement || !is_request(next))
                && after_remember(next).is_none()
                && (replacement
                    || remembered.is_some() && (body.is_empty() || body.ends_with([':', '：']))
                    || next.to_ascii_lowercase().starts_with("because")
                    || next.to_ascii_lowercase().starts_with("since ")
                    || next.starts_with("因为")
                    || next.starts_with("原因")
                    || (remembered.is_some() && next.chars().count() <= 40));
            if !follows || text.chars().count() + next.chars().count() > MAX_CHARS {
                break;
            }
            if !text.is_empty() {
                // Joined as the person wrote it: with the mark that ended the sentence before.
                let joint = match all[at - 1].chars().last() {
                    Some(';') => "; ",
                    Some(c @ ('；' | '。' | '！')) => {
                        if c == '；' {
                            "；"
                        } else {
                            "。"
                        }
                    }
                    Some('\n') | None => {
                        if text.ends_with(|c: char| !c.is_ascii()) {
                            "，"
                        } else {
                            ". "
                        }
                    }
                    Some(_) => {
                        if text.ends_with(|c: char| !c.is_ascii()) {
                            "，"
                        } else {
                            ". "
                        }
                    }
                };
                text.push_str(joint);
            }
            text.push_str(next);
            at += 1;
        }
        let text = one_line(text.trim().trim_end_matches([':', '：']).trim());
        if text.chars().count() < 4 {
            continue;
        }
        let personal = preference || is_personal_topic(&text);
        let kind = if personal {
            StatedKind::Preference
        } else if decided || change {
            StatedKind::Decision
        } else if standing {
            StatedKind::Convention
        } else {
            StatedKind::Fact
        };
        let replaces = no_longer_used(&text).into_iter().collect();
        let (gist, reason) = reason_of(&text);
        out.push(Stated {
            kind,
            reason,
            gist,
            explicit: remembered.is_some(),
            personal,
            replaces,
            text: clip(&text, MAX_CHARS),
        });
    }
    out
}

/// What an agent wrote into its own memory (`about_person`: into what it keeps about the user),
/// as one statement: never explicit, since the person did not say it in these words.
pub fn read_entry(entry: &str, about_person: bool) -> Vec<Stated> {
    let text = one_line(entry.trim());
    if text.chars().count() < 4 || text.chars().count() > MAX_PROMPT_CHARS {
        return Vec::new();
    }
    let personal = about_person || is_preference(&text) || is_personal_topic(&text);
    let kind = if personal {
        StatedKind::Preference
    } else if is_decided(&text) || is_change(&text) {
        StatedKind::Decision
    } else if is_standing(&text) {
        StatedKind::Convention
    } else {
        StatedKind::Fact
    };
    let (gist, reason) = reason_of(&text);
    vec![Stated {
        kind,
        reason,
        gist,
        explicit: false,
        personal,
        replaces: no_longer_used(&text).into_iter().collect(),
        text: clip(&text, MAX_CHARS),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(prompt: &str) -> Stated {
        let mut found = read(prompt);
        assert_eq!(found.len(), 1, "{prompt:?} gave {found:#?}");
        found.remove(0)
    }

    #[test]
    fn a_request_to_remember_a_preference_in_chinese() {
        let s = one("记住：我写文档喜欢口语化，短句，不要术语，不要套话。");
        assert_eq!(s.kind, StatedKind::Preference);
        assert!(s.explicit && s.personal);
        assert_eq!(s.text, "我写文档喜欢口语化，短句，不要术语，不要套话");
    }

    #[test]
    fn a_request_to_remember_in_english_takes_what_follows_a_colon() {
        let s = one("Remember this: my docs use British spelling. Short paragraphs, no filler.");
        assert_eq!(s.kind, StatedKind::Preference);
        assert!(s.explicit && s.personal);
        assert_eq!(s.text, "my docs use British spelling. Short paragraphs, no filler");
    }

    #[test]
    fn a_standing_rule_is_a_convention() {
        let s = one("From now on, commit messages must be in English and in the imperative mood.");
        assert_eq!(s.kind, StatedKind::Convention);
        assert!(!s.explicit && !s.personal);
        let s = one("以后提交信息一律用英文写。");
        assert_eq!(s.kind, StatedKind::Convention);
        let s = one("Remember: always run the generator before the build.");
        assert_eq!((s.kind, s.explicit), (StatedKind::Convention, true));
    }

    #[test]
    fn a_rule_then_a_request_keeps_only_the_rule() {
        let found =
            read("Always run cargo fmt before committing. Now fix the failing test in parser.rs.");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text, "Always run cargo fmt before committing");
    }

    #[test]
    fn a_reversal_names_what_it_replaces() {
        let s = one(
            "We no longer use Redis for the job queue; switch to NATS JetStream because Redis lost jobs on failover.",
        );
        assert_eq!(s.kind, StatedKind::Decision);
        assert_eq!(s.replaces, ["Redis"]);
        let s = one("我们不用 Redis 做队列了，改成 NATS，因为 Redis 故障切换时会丢任务。");
        assert_eq!(s.kind, StatedKind::Decision);
        assert_eq!(s.replaces, ["Redis"]);
        assert_eq!(s.reason.as_deref(), Some("Redis 故障切换时会丢任务"));
        let s = one("把 chrono 换成 jiff，因为时区 API 更难用错。");
        assert_eq!(s.replaces, ["chrono"]);
        let s = one("Let's use pytest instead of unittest since fixtures are simpler.");
        assert_eq!(s.replaces, ["unittest"]);
    }

    #[test]
    fn requests_and_questions_are_not_statements() {
        for prompt in [
            "Fix the API route bug: /users/:id returns 404 for existing users.",
            "The upload route doesn't work anymore, fix it.",
            "把超时改成 30 秒。",
            "帮我修复 callback.py 里的签名错误。",
            "Why did the signatures fail?",
            "你记得上次的修复吗？",
            "Switch the test runner to pytest.",
            "不用担心，先看看日志。",
            "What does the build need to run first?",
        ] {
            assert_eq!(read(prompt), Vec::new(), "{prompt}");
        }
    }

    #[test]
    fn a_decision_with_a_reason() {
        let s = one("We decided to use SQLite for the cache because it needs no server.");
        assert_eq!(s.kind, StatedKind::Decision);
        assert!(!s.explicit);
        assert_eq!(s.reason.as_deref(), Some("it needs no server"));
        let s = one("决定用 jiff 处理时间，因为 chrono 的时区 API 容易用错。");
        assert_eq!(s.kind, StatedKind::Decision);
    }

    #[test]
    fn a_rule_that_opens_with_do_not_or_asks_to_remember_to() {
        let s = one("Do not use unwrap in library code anymore; use thiserror instead.");
        assert_eq!(s.kind, StatedKind::Decision);
        assert_eq!(s.replaces, ["unwrap"]);
        let s = one("Remember to run make gen before every build.");
        assert!(s.explicit);
        assert_eq!(s.text, "run make gen before every build");
    }

    #[test]
    fn letters_that_lowercase_to_another_length_never_break_a_cut() {
        for prompt in [
            "İİİİ we no longer use İRedis for the queue because İt lost jobs.",
            "Remember that İstanbul ẞ uses Redis since ſtart; switch from İ to NATS.",
            "İ stop using 中文工具 anymore, switch to English tools because they are faster.",
        ] {
            let _ = read(prompt);
        }
    }

    #[test]
    fn pasted_material_is_not_read() {
        let long = format!("remember this: {}", "x".repeat(5000));
        assert_eq!(read(&long), Vec::new());
        assert_eq!(read("Remember:\n```\nlet x = 1;\n```"), Vec::new());
    }
}
