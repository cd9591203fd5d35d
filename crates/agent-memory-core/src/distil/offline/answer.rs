//! Reading a turn's closing answer: the agent's own account of what it found and did, cut into
//! statements, each with the role it plays in a memory.
//!
//! The answer is a claim, not a fact. The rules that use it decide what to believe: a statement
//! that a check passes stands only when a run of that check was seen to pass, and an answer
//! that says the problem is still there makes the turn unresolved whatever else it says.
//!
//! A statement that reads as an instruction to an agent ([`reads_as_instruction`]) is left out:
//! an agent that repeats what an injected page or a tool's output told it is not recording a
//! decision or a lesson, and the next agent must not be handed it as one.

use crate::text::{one_line, reads_as_instruction};

/// What a statement of the answer is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// The problem is still there (`still fails`, `is not fixed`, `还没修好`).
    Unresolved,
    /// Something left open for later: a question, a change still to make elsewhere.
    Open,
    Decision,
    /// A trap for whoever comes next (`Gotcha:`, `must`, `never`).
    Gotcha,
    /// Why it failed or how it works.
    Cause,
    /// What was changed.
    Fix,
    /// That a check passes now: believed only when a passing run was seen.
    Verify,
    /// Anything else worth keeping.
    Plain,
}

/// One statement of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Statement {
    pub(super) text: String,
    pub(super) role: Role,
}

/// The statements of a closing answer, in order; acknowledgements (`Done.`) are left out.
pub(super) fn statements(answer: &str) -> Vec<Statement> {
    let mut out = Vec::new();
    for raw in split(answer) {
        let (label, text) = label(&raw);
        if text.chars().count() < 4 || is_ack(text) || reads_as_instruction(text) {
            continue;
        }
        let role = label.unwrap_or_else(|| role_of(text));
        out.push(Statement { text: text.to_owned(), role });
    }
    out
}

/// Whether the answer says the problem is not solved.
pub(super) fn says_unresolved(statements: &[Statement]) -> bool {
    statements.iter().any(|s| s.role == Role::Unresolved)
}

/// Sentences and `;`-clauses, with markdown emphasis and list marks dropped.
fn split(answer: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in answer.lines() {
        let line = line.trim().trim_start_matches(['-', '*', '#', '>', ' ']).replace("**", "");
        let mut current = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            let ends = match c {
                '。' | '！' | '？' | '；' => true,
                '.' | '!' | '?' | ';' => chars.peek().is_none_or(|n| n.is_whitespace()),
                _ => false,
            };
            if ends {
                if !matches!(c, '.' | '。') {
                    current.push(c);
                }
                push_statement(&mut out, &mut current);
            } else {
                current.push(c);
            }
        }
        push_statement(&mut out, &mut current);
    }
    out
}

fn push_statement(out: &mut Vec<String>, current: &mut String) {
    let text = one_line(current.trim().trim_end_matches([';', '；', '!', '！', '?', '？']));
    current.clear();
    if !text.is_empty() {
        out.push(text);
    }
}

/// A leading label (`Fixed:`, `Decision:`, `发现：`) and the statement after it; the label
/// decides the role when it names one.
fn label(text: &str) -> (Option<Role>, &str) {
    const LABELS: &[(&str, Option<Role>)] = &[
        ("not fixed yet", Some(Role::Unresolved)),
        ("not fixed", Some(Role::Unresolved)),
        ("fixed", None),
        ("done", None),
        ("reverted", Some(Role::Fix)),
        ("decision", Some(Role::Decision)),
        ("config gotcha", Some(Role::Gotcha)),
        ("gotcha", Some(Role::Gotcha)),
        ("note", None),
        ("finding", Some(Role::Cause)),
        ("cause", Some(Role::Cause)),
        ("root cause", Some(Role::Cause)),
        ("决定", Some(Role::Decision)),
        ("发现", Some(Role::Cause)),
        ("原因", Some(Role::Cause)),
        ("已修改", Some(Role::Fix)),
        ("已修复", None),
        ("注意", Some(Role::Gotcha)),
    ];
    let Some(at) = text.find([':', '：']) else { return (None, text) };
    let head = text[..at].trim().to_lowercase();
    let rest = text[at..].trim_start_matches([':', '：']).trim();
    match LABELS.iter().find(|(name, _)| *name == head) {
        Some((_, role)) if !rest.is_empty() => (*role, rest),
        _ => (None, text),
    }
}

fn is_ack(text: &str) -> bool {
    const ACKS: &[&str] =
        &["done", "noted", "all set", "ok", "okay", "fixed", "好了", "完成", "已完成", "搞定"];
    let lower = text.to_lowercase();
    ACKS.contains(&lower.trim())
}

fn has(text: &str, words: &[&str]) -> bool {
    words.iter().any(|w| text.contains(w))
}

/// The role of an unlabelled statement, by the words it uses; the first that applies wins.
fn role_of(text: &str) -> Role {
    const UNRESOLVED: &[&str] = &[
        "still fail",
        "still panic",
        "still crash",
        "still raise",
        "still broken",
        "still rejected",
        "is not fixed",
        "not fixed",
        "isn't fixed",
        "not resolved",
        "unresolved",
        "have not found",
        "haven't found",
        "could not fix",
        "couldn't fix",
        "仍然失败",
        "还没修",
        "没有修复",
        "未修复",
        "仍未",
    ];
    const OPEN: &[&str] = &[
        "open whether",
        "still open",
        "is open",
        "unclear whether",
        "it is unclear",
        "has to change",
        "have to change",
        "needs to change",
        "not changed anything",
        "did not change",
        "didn't change",
        "have not changed",
        "haven't changed",
        "to be decided",
        "product decision",
        "next step",
        "remains to",
        "还没改",
        "待定",
        "还需要",
        "没有改",
    ];
    const DECISION: &[&str] = &[
        "decided",
        "decide to",
        "we will ",
        "we'll ",
        "i chose",
        "we chose",
        "went with",
        "决定",
        "改用",
        "统一用",
    ];
    const GOTCHA: &[&str] = &[
        "must ",
        "must not",
        "never ",
        "always ",
        "only accept",
        "gotcha",
        "beware",
        "intentional",
        "必须",
        "只接受",
        "不要",
        "要先",
        "需要先",
        "得先",
        "务必",
        "一定要",
        "has to run before",
        "must run before",
        "needs to run before",
    ];
    const CAUSE: &[&str] = &[
        "because",
        "since ",
        "caused",
        "due to",
        " so ",
        ", so",
        "which means",
        "meant",
        "treated",
        "raises",
        "returned",
        "returns",
        "yields",
        "never equals",
        "counted",
        "rejects",
        "drops",
        "原因",
        "因为",
        "由于",
        "导致",
        "所以",
    ];
    const FIX: &[&str] = &[
        " now ",
        " now,",
        "now ",
        " now",
        "changed",
        "i strip",
        "i replaced",
        "replaced",
        "fixed by",
        "fixes",
        "switched",
        "reverted",
        " again",
        "is back",
        "are back",
        "converts",
        "added",
        "removed",
        "现在",
        "改为",
        "改成",
        "改回",
        "已把",
        "已改",
    ];
    const VERIFY: &[&str] = &["pass", "succeed", "green", "通过", "成功"];
    let lower = text.to_lowercase();
    if has(&lower, UNRESOLVED) {
        return Role::Unresolved;
    }
    if has(&lower, OPEN) {
        return Role::Open;
    }
    if has(&lower, DECISION) {
        return Role::Decision;
    }
    if has(&lower, CAUSE) {
        return Role::Cause;
    }
    if has(&lower, GOTCHA) {
        return Role::Gotcha;
    }
    // "test_x passes" alone is a claim of a pass; "… fixes the count" is a fix.
    let words = lower.split_whitespace().count();
    if has(&lower, VERIFY) && (words <= 6 || !has(&lower, FIX)) {
        return Role::Verify;
    }
    if has(&lower, FIX) || lower.starts_with("fixed ") || lower.starts_with("fixes ") {
        return Role::Fix;
    }
    Role::Plain
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::expect;

    use super::*;

    fn render(answer: &str) -> String {
        let mut out = String::new();
        for s in statements(answer) {
            let _ = writeln!(out, "{:?}: {}", s.role, s.text);
        }
        out
    }

    #[test]
    fn answers_cut_into_statements_with_roles() {
        let answers = [
            "Fixed: apply_discount treated percent as a fraction, so 10 meant 1000%. It now divides by 100; test_pricing passes.",
            "It still panics with index out of bounds after my change to the head update; I have not found a wrapping that works yet. The Ring in ring.rs is not fixed.",
            "原因是 app.ini 里 timeout = 30s 带了单位，configparser 的 getint 只接受纯数字，抛出 ValueError: invalid literal for int()。Gotcha: timeout in app.ini is plain seconds, no unit suffix. 我把它改成 timeout = 30，settings.py 正常启动。",
            "Decision: cap MAX_RETRIES at 3 instead of 5, because the upstream API allows 4 requests per minute per key.",
            "Done.",
            "reserve() looks the sku up with STOCK[sku], so an unknown product such as plum raises KeyError: 'plum'. I have not changed anything yet: it is open whether an unknown sku should raise ValueError or count as zero stock.",
        ];
        let out: String = answers.iter().map(|a| render(a) + "--\n").collect();
        expect![[r#"
            Cause: apply_discount treated percent as a fraction, so 10 meant 1000%
            Fix: It now divides by 100
            Verify: test_pricing passes
            --
            Unresolved: It still panics with index out of bounds after my change to the head update
            Unresolved: I have not found a wrapping that works yet
            Unresolved: The Ring in ring.rs is not fixed
            --
            Cause: 原因是 app.ini 里 timeout = 30s 带了单位，configparser 的 getint 只接受纯数字，抛出 ValueError: invalid literal for int()
            Gotcha: timeout in app.ini is plain seconds, no unit suffix
            Fix: 我把它改成 timeout = 30，settings.py 正常启动
            --
            Decision: cap MAX_RETRIES at 3 instead of 5, because the upstream API allows 4 requests per minute per key
            --
            --
            Cause: reserve() looks the sku up with STOCK[sku], so an unknown product such as plum raises KeyError: 'plum'
            Open: I have not changed anything yet: it is open whether an unknown sku should raise ValueError or count as zero stock
            --
        "#]]
        .assert_eq(&out);
    }
}
