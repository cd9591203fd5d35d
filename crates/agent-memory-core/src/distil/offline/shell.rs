//! Reading shell commands as checks: which part of a command line is the check it runs, and
//! which line of a failed run's output names the problem.
//!
//! Agents rarely run a check the same way twice: `cargo test 2>&1 | tail -20`, then
//! `cargo test && ./app`; `npm test || true`; `python3 -m unittest t 2>&1; echo done`. A check's
//! key is what stays the same: the first segment of the command's first line that is not
//! plumbing (filters, echoes, file writes, look-arounds), without its redirections.

use crate::text::{clip, is_exception, one_line};

/// Longest error line, in characters.
pub(super) const ERROR_MAX_CHARS: usize = 160;

/// Programs that only look at things, filter a pipe or write files: never the check itself.
const PLUMBING: &[&str] = &[
    "ls", "ll", "pwd", "cat", "head", "tail", "less", "more", "echo", "printf", "cd", "tree",
    "find", "which", "wc", "file", "stat", "grep", "rg", "clear", "true", "false", ":", "sort",
    "uniq", "tee", "sed", "perl", "awk", "cut", "tr", "xargs", "mkdir", "touch", "rm", "cp", "mv",
    "chmod", "patch", "sleep", "export", "set", "source", ".", "exit", "diff",
];
/// Git subcommands that only look or apply a patch.
const GIT_PLUMBING: &[&str] = &["status", "log", "diff", "show", "branch", "apply", "add"];

/// The check a command line runs, as a key that its reruns share; `None` for plumbing only.
pub(super) fn check_key(command: &str) -> Option<String> {
    let first_line = command.lines().next().unwrap_or_default();
    segments(first_line).into_iter().find_map(|segment| {
        let words: Vec<&str> = segment
            .split_whitespace()
            .filter(|w| !is_redirection(w))
            .collect::<Vec<_>>()
            .into_iter()
            .scan(false, |skip_next, word| {
                // `> file`, `2> file`: the target goes with its operator.
                let skip = std::mem::replace(skip_next, matches!(word, ">" | ">>" | "2>" | "<"));
                Some((!skip).then_some(word))
            })
            .flatten()
            .filter(|w| !matches!(*w, ">" | ">>" | "2>" | "<") && !w.starts_with("<<"))
            .collect();
        let program = words.first()?.rsplit('/').next().unwrap_or_default();
        let plumbing = PLUMBING.contains(&program)
            || (program == "git" && words.get(1).is_some_and(|sub| GIT_PLUMBING.contains(sub)));
        (!plumbing).then(|| words.join(" "))
    })
}

/// The checks a command line runs one after another with `&&` beside its first: when it
/// passes, each of them passed (`node scripts/gen.js && node build.js` passing is a pass of
/// `node build.js` too).
pub(super) fn chained_keys(command: &str) -> Vec<String> {
    let first_line = command.lines().next().unwrap_or_default();
    let mut keys: Vec<String> = first_line.split("&&").filter_map(check_key).collect();
    keys.dedup();
    keys
}

/// Whether a command only looks at things: its outcome says nothing about the work.
pub(super) fn is_look_around(command: &str) -> bool {
    check_key(command).is_none()
}

/// Redirections that carry no file of their own: `2>&1`, `>/dev/null`, `&>/dev/null`.
fn is_redirection(word: &str) -> bool {
    let word = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
    word.starts_with(">&") || word.starts_with(">/") || word.starts_with(">>/")
}

/// A command line cut at `&&`, `||`, `;` and `|` outside quotes.
fn segments(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), c) => current.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                current.push(c);
            }
            (None, ';') => out.push(std::mem::take(&mut current)),
            (None, '|') => {
                chars.next_if_eq(&'|');
                out.push(std::mem::take(&mut current));
            }
            (None, '&') if chars.peek() == Some(&'&') => {
                chars.next();
                out.push(std::mem::take(&mut current));
            }
            (None, c) => current.push(c),
        }
    }
    out.push(current);
    out.into_iter().map(|s| one_line(&s)).filter(|s| !s.is_empty()).collect()
}

/// The first line of a failed command's output that names the problem: a compiler error, a
/// panic, an exception, a failed test. Generic wrap-up lines (`error: test failed, to rerun…`,
/// `error: could not compile…`) and bare exit codes are passed over.
pub(super) fn error_line(output: &str) -> String {
    const GENERIC: &[&str] = &[
        "error: test failed",
        "error: could not compile",
        "error: aborting",
        "exit code",
        "npm err! code",
        "npm err! a complete log",
        "npm error code",
        "npm error a complete log",
        "failed (failures",
        "failed (errors",
    ];
    let lines: Vec<&str> = output.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    // Lines that state the error beat lines that only point at it (`test x ... FAILED`).
    let states = |line: &&str| {
        let lower = line.to_lowercase();
        !GENERIC.iter().any(|g| lower.starts_with(g))
            && (lower.starts_with("error")
                || lower.starts_with("failed ")
                || lower.contains("panicked at")
                || lower.contains("assertion")
                || is_exception(line)
                || line.contains("Error:")
                || line.contains("Exception:")
                || lower.starts_with("npm err!")
                || lower.starts_with("npm error ")
                || lower.starts_with("not ok"))
    };
    let points = |line: &&str| {
        let lower = line.to_lowercase();
        lower.ends_with("... failed") || lower.starts_with("fail:") || lower.starts_with("--- fail")
    };
    // An exception's own line (`KeyError: 'id'`) beats the code that raised it.
    let found = lines
        .iter()
        .position(|l| is_exception(l))
        .or_else(|| lines.iter().position(states))
        .or_else(|| lines.iter().position(points));
    let Some(at) = found else {
        let fallback = lines.iter().find(|l| !l.to_lowercase().starts_with("exit code"));
        return fallback.map(|l| clip(&one_line(l), ERROR_MAX_CHARS)).unwrap_or_default();
    };
    let line = lines[at];
    // Rust puts a panic's message on the line after `panicked at`.
    let text = match lines.get(at + 1) {
        Some(next) if line.contains("panicked at") && !next.starts_with("note:") => {
            format!("{}: {next}", line.trim_end_matches(':'))
        }
        _ => line.to_owned(),
    };
    clip(&one_line(&text), ERROR_MAX_CHARS)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn a_check_keeps_its_key_across_reruns() {
        let keys: Vec<Option<String>> = [
            "cargo test 2>&1 | tail -20",
            "cargo test && ./app",
            "npm test 2>&1 || true",
            "python3 -m unittest test_pricing 2>&1; echo done",
            "rustc --edition 2021 units.rs -o units 2>&1 | tail -20",
            "cd api && pytest -q > /dev/null",
            "node run_tests.js && git diff --stat",
            "sed -i 's/a; b/c/' x.py",
            "cat > cart.js <<'EOF'\nnpm test\nEOF",
            "git apply <<'EOF'\n--- a/x\nEOF",
            "grep -n STOCK inventory.py",
            "git status",
            "python3 -c 'import a; print(a.b)'",
            "FOO=1 make check 2> err.txt",
        ]
        .iter()
        .map(|c| check_key(c))
        .collect();
        expect![[r#"
            [
                Some(
                    "cargo test",
                ),
                Some(
                    "cargo test",
                ),
                Some(
                    "npm test",
                ),
                Some(
                    "python3 -m unittest test_pricing",
                ),
                Some(
                    "rustc --edition 2021 units.rs -o units",
                ),
                Some(
                    "pytest -q",
                ),
                Some(
                    "node run_tests.js",
                ),
                None,
                None,
                None,
                None,
                None,
                Some(
                    "python3 -c 'import a; print(a.b)'",
                ),
                Some(
                    "FOO=1 make check",
                ),
            ]
        "#]]
        .assert_debug_eq(&keys);
    }
}
