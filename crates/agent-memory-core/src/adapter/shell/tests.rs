//! Reading shell calls: the files a command line writes, what it puts there, and failures that
//! only the output shows; and the facts of every change and shell call in the testkit's corpus
//! of recorded sessions.

use std::fmt::Write as _;
use std::path::PathBuf;

use expect_test::{Expect, expect};
use serde_json::Value;

use super::{output_failed, writes};
use crate::adapter::{Normalized, normalize};
use crate::event::{CaptureContext, Event, ToolKind};

/// Each command with what it writes: its files, and the texts it puts in them.
fn check_writes(commands: &[&str], expect: Expect) {
    let mut out = String::new();
    for command in commands {
        let found = writes(command);
        let _ = writeln!(out, "{command:?}\n    files={:?} texts={:?}", found.files, found.texts);
    }
    expect.assert_eq(&out);
}

#[test]
fn in_place_editors() {
    check_writes(
        &[
            "sed -i 's/a/b/' f.py",
            "sed -i.bak -e 's/x/y/' -e '3s/p/q/g' a.txt b.txt",
            "sed --in-place=.orig 's|a|b|g' conf.ini",
            "sed -i '' 's/old/new/' mac.txt",
            // `-ie` is `-i` with the suffix `e`: the script is the first operand.
            "sed -ie 's/a/b/' f",
            "sed -E -i --expression='s/(x)+/\\1y/' -- g.txt",
            r"sed -i 's/total \* percent$/total * percent \/ 100/' pricing.py",
            r"sed -i 's|weight_kg / height_cm \*\* 2|weight_kg / (height_cm / 100) ** 2|' health.py",
            r"sed -i 's/map(|(w, h)| area(w, h))/map(|\&(w, h)| area(w, h))/' area.rs",
            "sed -i '/^import/a import os' app.py",
            "sed -i -e '1i\\\n#!/bin/sh' run.sh",
            "FOO=1 sudo sed -i 's/a/b/;s/c/d/' /etc/hosts",
            "perl -pi -e 's/foo/bar/g' a.pl b.pl",
            "perl -i -pe 's{old}{new}' x.txt",
            r#"perl -pi -e 's/title\.lower\(\)\)$/title.lower()).strip("-")/' slugs.py"#,
            r"perl -pi.bak -e 's/\{ valu \}/{ value }/' clamp.rs",
            "perl -0777 -i -pe 's#a/b#c/d#' paths.txt",
        ],
        expect![[r##"
            "sed -i 's/a/b/' f.py"
                files=["f.py"] texts=["b"]
            "sed -i.bak -e 's/x/y/' -e '3s/p/q/g' a.txt b.txt"
                files=["a.txt", "b.txt"] texts=["y", "q"]
            "sed --in-place=.orig 's|a|b|g' conf.ini"
                files=["conf.ini"] texts=["b"]
            "sed -i '' 's/old/new/' mac.txt"
                files=["mac.txt"] texts=["new"]
            "sed -ie 's/a/b/' f"
                files=["f"] texts=["b"]
            "sed -E -i --expression='s/(x)+/\\1y/' -- g.txt"
                files=["g.txt"] texts=["\\1y"]
            "sed -i 's/total \\* percent$/total * percent \\/ 100/' pricing.py"
                files=["pricing.py"] texts=["total * percent / 100"]
            "sed -i 's|weight_kg / height_cm \\*\\* 2|weight_kg / (height_cm / 100) ** 2|' health.py"
                files=["health.py"] texts=["weight_kg / (height_cm / 100) ** 2"]
            "sed -i 's/map(|(w, h)| area(w, h))/map(|\\&(w, h)| area(w, h))/' area.rs"
                files=["area.rs"] texts=["map(|&(w, h)| area(w, h))"]
            "sed -i '/^import/a import os' app.py"
                files=["app.py"] texts=["import os"]
            "sed -i -e '1i\\\n#!/bin/sh' run.sh"
                files=["run.sh"] texts=["#!/bin/sh"]
            "FOO=1 sudo sed -i 's/a/b/;s/c/d/' /etc/hosts"
                files=["/etc/hosts"] texts=["b", "d"]
            "perl -pi -e 's/foo/bar/g' a.pl b.pl"
                files=["a.pl", "b.pl"] texts=["bar"]
            "perl -i -pe 's{old}{new}' x.txt"
                files=["x.txt"] texts=["new"]
            "perl -pi -e 's/title\\.lower\\(\\)\\)$/title.lower()).strip(\"-\")/' slugs.py"
                files=["slugs.py"] texts=["title.lower()).strip(\"-\")"]
            "perl -pi.bak -e 's/\\{ valu \\}/{ value }/' clamp.rs"
                files=["clamp.rs"] texts=["{ value }"]
            "perl -0777 -i -pe 's#a/b#c/d#' paths.txt"
                files=["paths.txt"] texts=["c/d"]
        "##]],
    );
}

#[test]
fn redirections_and_tee() {
    check_writes(
        &[
            "echo \"a && b > c\" > out.txt && cargo test",
            "printf 'PORT=8080\\n' >> .env",
            "cargo test > log.txt 2>&1; echo done",
            "cmd 2> err.log",
            "ls &>> all.log",
            "python3 gen.py >| gen.rs",
            "> empty.txt",
            "echo x>y.txt",
            "echo hi | tee -a log.txt notes.txt > /dev/null",
            "tee --append out.md < input.md",
            "echo 'a;b' > \"my file.txt\"",
            "git diff > fix.patch",
            "bash -lc \"sed -i 's/a/b/' f.txt\"",
        ],
        expect![[r#"
            "echo \"a && b > c\" > out.txt && cargo test"
                files=["out.txt"] texts=["a && b > c"]
            "printf 'PORT=8080\\n' >> .env"
                files=[".env"] texts=["PORT=8080\n"]
            "cargo test > log.txt 2>&1; echo done"
                files=["log.txt"] texts=[]
            "cmd 2> err.log"
                files=["err.log"] texts=[]
            "ls &>> all.log"
                files=["all.log"] texts=[]
            "python3 gen.py >| gen.rs"
                files=["gen.rs"] texts=[]
            "> empty.txt"
                files=["empty.txt"] texts=[]
            "echo x>y.txt"
                files=["y.txt"] texts=["x"]
            "echo hi | tee -a log.txt notes.txt > /dev/null"
                files=["log.txt", "notes.txt"] texts=["hi"]
            "tee --append out.md < input.md"
                files=["out.md"] texts=[]
            "echo 'a;b' > \"my file.txt\""
                files=["my file.txt"] texts=["a;b"]
            "git diff > fix.patch"
                files=["fix.patch"] texts=[]
            "bash -lc \"sed -i 's/a/b/' f.txt\""
                files=["f.txt"] texts=["b"]
        "#]],
    );
}

#[test]
fn heredocs_are_data_not_commands() {
    check_writes(
        &[
            "cat > cart.js <<'EOF'\nfunction a(x) {\n  return x > 1 && x < 9;\n}\nsed -i 's/a/b/' nope.txt\necho no > nope2.txt\nEOF",
            "cat <<EOF > f.txt\nline one\nEOF\necho done > g.txt",
            "cat << \"END\" >> notes.md\n- a > b\nEND",
            "tee weeks.py > /dev/null <<'EOF'\nimport datetime\nEOF",
            "cat <<-EOF > t.txt\n\tindented\n\tEOF\n",
            "cat > a.txt <<A && cat > b.txt <<B\nfirst\nA\nsecond\nB\nsed -i 's/x/y/' c.txt",
            // Never closed: the body runs to the end.
            "cat > open.txt <<EOF\nno end",
            "python3 - <<'EOF'\nopen('x.txt', 'w').write('> y')\nEOF",
            "git apply <<< 'not a patch'",
        ],
        expect![[r#"
            "cat > cart.js <<'EOF'\nfunction a(x) {\n  return x > 1 && x < 9;\n}\nsed -i 's/a/b/' nope.txt\necho no > nope2.txt\nEOF"
                files=["cart.js"] texts=["function a(x) {\n  return x > 1 && x < 9;\n}\nsed -i 's/a/b/' nope.txt\necho no > nope2.txt\n"]
            "cat <<EOF > f.txt\nline one\nEOF\necho done > g.txt"
                files=["f.txt", "g.txt"] texts=["line one\n", "done"]
            "cat << \"END\" >> notes.md\n- a > b\nEND"
                files=["notes.md"] texts=["- a > b\n"]
            "tee weeks.py > /dev/null <<'EOF'\nimport datetime\nEOF"
                files=["weeks.py"] texts=["import datetime\n"]
            "cat <<-EOF > t.txt\n\tindented\n\tEOF\n"
                files=["t.txt"] texts=["indented\n"]
            "cat > a.txt <<A && cat > b.txt <<B\nfirst\nA\nsecond\nB\nsed -i 's/x/y/' c.txt"
                files=["a.txt", "b.txt", "c.txt"] texts=["first\n", "second\n", "y"]
            "cat > open.txt <<EOF\nno end"
                files=["open.txt"] texts=["no end\n"]
            "python3 - <<'EOF'\nopen('x.txt', 'w').write('> y')\nEOF"
                files=[] texts=[]
            "git apply <<< 'not a patch'"
                files=[] texts=[]
        "#]],
    );
}

#[test]
fn patches_fed_on_the_command_line() {
    check_writes(
        &[
            "git apply <<'EOF'\ndiff --git a/d.js b/d.js\n--- a/d.js\n+++ b/d.js\n@@ -1,2 +1,2 @@\n keep\n-old\n+new > old\n+++x;\nEOF",
            "patch -p1 <<'EOF'\n--- a/src/x.py\t2024-01-01\n+++ b/src/x.py\t2024-01-01\n@@\n+y = 1\nEOF",
            "patch -p0 <<'EOF'\n--- old.txt\n+++ new.txt\n@@\n+z\nEOF",
            "patch app.py <<'EOF'\n@@\n-a\n+b\nEOF",
            "git -C repo apply -R <<'EOF'\n--- a/r.txt\n+++ b/r.txt\n@@\n-was\n+is\nEOF",
            "cat <<'EOF' | git apply\n--- a/p.txt\n+++ b/p.txt\n@@\n+piped\nEOF",
            "git apply --check <<'EOF'\n--- a/c.txt\n+++ b/c.txt\n@@\n+x\nEOF",
            "git apply fix.patch",
            "patch -p1 < fix.diff",
            "patch --dry-run -p1 <<'EOF'\n--- a/d.txt\n+++ b/d.txt\nEOF",
            "git apply <<'EOF'\n--- a/gone.txt\n+++ /dev/null\n@@\n-x\nEOF",
            "patch <<'EOF'\n--- a/lib/u.py\n+++ b/lib/u.py\n@@\n+u\nEOF",
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: n.rs\n+fn main() {}\n*** Update File: o.rs\n@@\n-a\n+b\n*** End Patch\nEOF",
        ],
        expect![[r#"
            "git apply <<'EOF'\ndiff --git a/d.js b/d.js\n--- a/d.js\n+++ b/d.js\n@@ -1,2 +1,2 @@\n keep\n-old\n+new > old\n+++x;\nEOF"
                files=["d.js"] texts=["new > old\n++x;"]
            "patch -p1 <<'EOF'\n--- a/src/x.py\t2024-01-01\n+++ b/src/x.py\t2024-01-01\n@@\n+y = 1\nEOF"
                files=["src/x.py"] texts=["y = 1"]
            "patch -p0 <<'EOF'\n--- old.txt\n+++ new.txt\n@@\n+z\nEOF"
                files=["new.txt"] texts=["z"]
            "patch app.py <<'EOF'\n@@\n-a\n+b\nEOF"
                files=["app.py"] texts=["b"]
            "git -C repo apply -R <<'EOF'\n--- a/r.txt\n+++ b/r.txt\n@@\n-was\n+is\nEOF"
                files=["r.txt"] texts=["was"]
            "cat <<'EOF' | git apply\n--- a/p.txt\n+++ b/p.txt\n@@\n+piped\nEOF"
                files=["p.txt"] texts=["piped"]
            "git apply --check <<'EOF'\n--- a/c.txt\n+++ b/c.txt\n@@\n+x\nEOF"
                files=[] texts=[]
            "git apply fix.patch"
                files=[] texts=[]
            "patch -p1 < fix.diff"
                files=[] texts=[]
            "patch --dry-run -p1 <<'EOF'\n--- a/d.txt\n+++ b/d.txt\nEOF"
                files=[] texts=[]
            "git apply <<'EOF'\n--- a/gone.txt\n+++ /dev/null\n@@\n-x\nEOF"
                files=["gone.txt"] texts=[]
            "patch <<'EOF'\n--- a/lib/u.py\n+++ b/lib/u.py\n@@\n+u\nEOF"
                files=["lib/u.py"] texts=["u"]
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: n.rs\n+fn main() {}\n*** Update File: o.rs\n@@\n-a\n+b\n*** End Patch\nEOF"
                files=["n.rs", "o.rs"] texts=["fn main() {}\nb"]
        "#]],
    );
}

/// What reads, runs or names no file the line knows writes nothing.
#[test]
fn what_writes_nothing() {
    let nothing = [
        "cargo test 2>&1 | tail -3",
        "make >/dev/null 2>&1; ls &> /dev/null; cmd 2>/dev/null >&2",
        "sed 's/a/b/' f",
        "sed -n '/x/p' f",
        "perl -ne 'print if /x/' f",
        "sed -i 's/a > b/c/'",
        "sed -i \"s/$OLD/new/\" \"$FILE\"",
        "sed -i 's/a/b/' *.py",
        "for f in a b; do sed -i 's/x/y/' $f; done",
        "echo x > \"$(mktemp)\"",
        "find . -name '*.rs' -exec sed -i 's/a/b/' {} +",
        "git ls-files | xargs sed -i 's/a/b/'",
        "cp a.txt b.txt && mv c.txt d.txt",
        "echo '> quoted.txt' # > comment.txt",
        "diff <(sort a) <(sort b)",
        "python3 -c 'open(\"x\", \"w\").write(\"y\")'",
        "",
        "'unterminated > x",
    ];
    for command in nothing {
        assert_eq!(writes(command), super::Writes::default(), "{command}");
    }
}

#[test]
fn failures_the_output_shows() {
    let failing = [
        "Traceback (most recent call last):\n  File \"t.py\", line 1",
        "Ran 1 test in 0.001s\n\nFAILED (failures=1)\ndone",
        "FAIL: test_ten_percent (test_pricing.PricingTest)",
        "FAIL src/a.test.js",
        "FAIL 1h30m: got NaN, want 90",
        "--- FAIL: TestParse (0.00s)",
        "FAILED tests/test_x.py::test_a - assert 1 == 2",
        "test tests::it_works ... FAILED",
        "test_x (t.T) ... ERROR",
        "error[E0308]: mismatched types",
        "error: could not compile `app` (bin \"app\") due to 1 previous error",
        "8080 -> 8080\nthread 'main' (2719) panicked at parse_port.rs:2:25:",
        "thread 'main' panicked at 'boom', src/main.rs:2:5",
        "   7: core::ops::function::FnOnce::call_once\nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.",
        "panic: runtime error: index out of range [3] with length 3",
        "npm ERR! Test failed.  See above for more details.",
        "npm error code 1",
        "KeyError: 'plum'",
        "AssertionError [ERR_ASSERTION]: uppercase signature",
        "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
        "ReferenceError: require is not defined in ES module scope",
        "Error: Cannot find module './x'",
        "Exception in thread \"main\" java.lang.NullPointerException",
        "not ok 2 - adds numbers",
        "# fail 1",
        "ℹ fail 2",
        "=== 1 failed, 2 passed in 0.12s ===",
        "  2 failing",
        "Tests:       1 failed, 3 passed, 4 total",
        "test result: FAILED. 1 passed; 1 failed; 0 ignored",
        "1 passed, 2 failed",
        "      Tests  1 failed | 3 passed (4)",
        "✖ 3 problems (2 errors, 1 warning)",
        " 1 fail",
        "Segmentation fault (core dumped)",
        "/usr/bin/bash: line 3: rustc: command not found",
        "zsh: command not found: rustc",
        "sh: 1: rustc: not found",
        "python3: can't open file '/w/x.py': [Errno 2] No such file or directory",
        "src/a.c:3:5: error: expected ';' before '}' token",
        "src/a.ts(3,5): error TS2345: Argument of type",
        "make: *** [Makefile:3: test] Error 1",
        "}\n\nNode.js v20.20.2",
        "F\n<shellId: 0 completed with exit code 1>",
        "ok\r\nKeyError: 'id'\r\n",
    ];
    for output in failing {
        assert!(output_failed(output), "should fail: {output:?}");
    }
    let passing = [
        "3 passed, 0 failed\n duration.js | 5 +++--",
        ".\n----------------------------------------------------------------------\nRan 1 test in 0.000s\n\nOK",
        "Tests:       0 failed, 4 passed, 4 total",
        "test result: ok. 3 passed; 0 failed; 0 ignored",
        "No Error found in 3 files",
        "The last run had an Error: none, all good",
        "    ValueError: if the input is bad",
        "5:    raise KeyError(sku)",
        "2 failed attempts are retried",
        "Errors: 0",
        "error_count = 0",
        "# fail 0",
        "not ok 3 # TODO later",
        "warning: unused variable: `x`",
        "<shellId: 2 completed with exit code 0>",
        "FAILURES_ALLOWED=0",
        "cart ok\n",
        "npm notice New minor version of npm available!",
        "grep -n 'panicked at' src/lib.rs",
        "",
    ];
    for output in passing {
        assert!(!output_failed(output), "should pass: {output:?}");
    }
}

/// One recorded session of the testkit's corpus: its hook calls and what it claims.
struct Recorded {
    name: String,
    scenario: Value,
    events: Vec<Event>,
}

fn sessions_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../agent-memory-testkit/fixtures/sessions")
}

/// Every recorded session with its hook calls read through [`normalize`].
fn recorded() -> Vec<Recorded> {
    let dir = sessions_dir();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().join("hooks.jsonl").is_file())
        .filter_map(|entry| entry.file_name().into_string().ok())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let read = |file: &str| {
                let path = dir.join(&name).join(file);
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            };
            let scenario: Value = serde_json::from_str(&read("scenario.json"))
                .unwrap_or_else(|e| panic!("{name}/scenario.json: {e}"));
            let events = read("hooks.jsonl")
                .lines()
                .filter(|line| !line.trim().is_empty())
                .filter_map(|line| {
                    let call: Value = serde_json::from_str(line)
                        .unwrap_or_else(|e| panic!("{name}/hooks.jsonl: {e}"));
                    let agent = call["agent"].as_str().unwrap_or_default();
                    let event = call["event"].as_str().unwrap_or_default();
                    let ctx =
                        CaptureContext { uid: "u", agent, event_name: event, received_at_ms: 0 };
                    match normalize(&ctx, &call["payload"]) {
                        Ok(Normalized::Event(event)) => Some(*event),
                        _ => None,
                    }
                })
                .collect();
            Recorded { name, scenario, events }
        })
        .collect()
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

fn shell_steps(scenario: &Value) -> Vec<&str> {
    let turns = scenario["turns"].as_array().into_iter().flatten();
    let steps = turns.flat_map(|turn| turn["steps"].as_array().into_iter().flatten());
    steps.filter_map(|step| step["shell"].as_str()).collect()
}

/// The file a scenario's shell edit writes, read off its text: a patch's `+++ b/` line, the
/// word after `tee` or `>`, else (sed, perl) the last word of its first line.
fn edited_file(command: &str) -> Option<&str> {
    if let Some(file) = command.lines().find_map(|line| line.strip_prefix("+++ b/")) {
        return Some(file);
    }
    let first = command.lines().next()?;
    let words: Vec<&str> = first.split_whitespace().collect();
    let after = |mark: &str| words.iter().position(|w| *w == mark).and_then(|at| words.get(at + 1));
    let edits =
        ["sed ", "perl ", "tee ", "cat >", "git apply"].iter().any(|p| first.starts_with(p));
    edits.then(|| after("tee").or_else(|| after(">")).or(words.last()).copied()).flatten()
}

/// Every recorded run a scenario claims failed reads as failed the first time it ran, whatever
/// its exit code said; and every shell edit of a scenario (sed, perl, tee, a heredoc, git apply)
/// reads as writing its file.
#[test]
fn recorded_sessions_failed_runs_and_shell_edits() {
    let sessions = recorded();
    assert!(sessions.len() >= 40, "the corpus is read: {}", sessions.len());
    let mut edits = 0;
    for session in &sessions {
        let shell: Vec<&Event> = session
            .events
            .iter()
            .filter(|event| event.tool_kind == Some(ToolKind::Shell))
            .collect();
        let ran = |command: &str| -> Vec<&Event> {
            shell.iter().copied().filter(|e| e.facts.command.as_deref() == Some(command)).collect()
        };
        for command in strings(&session.scenario["claims"]["failed_runs"]) {
            let runs = ran(command);
            let first = runs.first().unwrap_or_else(|| panic!("{}: {command} ran", session.name));
            assert!(first.facts.failed, "{}: {command} failed: {:?}", session.name, first.payload);
        }
        for step in shell_steps(&session.scenario) {
            let Some(file) = edited_file(step) else { continue };
            edits += 1;
            for run in ran(step) {
                assert!(
                    run.facts.written.iter().any(|written| written == file),
                    "{}: {step:?} writes {file}: {:?}",
                    session.name,
                    run.facts
                );
                assert!(run.facts.added.is_some(), "{}: {step:?} adds text", session.name);
            }
        }
    }
    assert!(edits >= 12, "the corpus has shell edits: {edits}");
}

/// What the corpus's changes put in, with each agent's own edit and write tools; and what its
/// shell calls say beyond their own exit code and arguments: the runs whose output alone shows
/// the failure, and the files and text their edits put in.
#[test]
fn recorded_sessions_change_facts() {
    let mut out = String::new();
    for session in recorded() {
        for event in &session.events {
            if matches!(event.tool_kind, Some(ToolKind::Edit | ToolKind::Write)) {
                let added = crate::text::clip(event.facts.added.as_deref().unwrap_or("-"), 70);
                let _ = writeln!(
                    out,
                    "{}: {} written={:?} created={:?}\n    added={added:?}",
                    session.name,
                    event.tool.as_deref().unwrap_or_default(),
                    event.facts.written,
                    event.facts.created,
                );
            }
            let (Some(ToolKind::Shell), Some(command)) = (event.tool_kind, &event.facts.command)
            else {
                continue;
            };
            let flagged = event.payload["is_error"] == Value::Bool(true)
                || event.facts.exit_code.is_some_and(|code| code != 0);
            let line = crate::text::clip(command.lines().next().unwrap_or_default(), 60);
            if event.facts.failed && !flagged {
                let _ = writeln!(out, "{}: {line}\n    failed by its output", session.name);
            }
            if !event.facts.written.is_empty() {
                let added = event.facts.added.as_deref().unwrap_or_default();
                let added = crate::text::clip(added, 70);
                let _ = writeln!(
                    out,
                    "{}: {line}\n    written={:?} added={added:?}",
                    session.name, event.facts.written
                );
            }
        }
    }
    expect![[r#"
        claude-fix-invoice-rounding: Edit written=["/home/dev/work/proj/invoice.py"] created=[]
            added="return sum(round(price * 100) * qty for price, qty in lines)"
        claude-fix-login-space-zh: Edit written=["/home/dev/work/proj/login.py"] created=[]
            added="body.split(\" \", 1)"
        claude-logger-reverse: Edit written=["/home/dev/work/proj/applog.py"] created=[]
            added="sys.stdout.write(json.dumps({\"level\": level, \"message\": message}) + \"…"
        claude-logger-reverse: Edit written=["/home/dev/work/proj/applog.py"] created=[]
            added="sys.stdout.write(f\"{level.upper()} {message}\\n\")"
        claude-queue-redis-decide: Write written=["/home/dev/work/proj/queue.py"] created=["/home/dev/work/proj/queue.py"]
            added="import json ⏎ import redis ⏎ QUEUE = \"jobs\" ⏎ _client = redis.Redis()…"
        claude-ring-unresolved: rustc --edition 2021 ring.rs -o ring && ./ring 2>&1 | tail…
            failed by its output
        claude-ring-unresolved: Edit written=["/home/dev/work/proj/ring.rs"] created=[]
            added="self.head = (self.head + 1) % 4;"
        claude-ring-unresolved: rustc --edition 2021 ring.rs -o ring && ./ring 2>&1 | tail…
            failed by its output
        claude-slugify-perl: python3 -m unittest test_slugs 2>&1; echo done
            failed by its output
        claude-slugify-perl: perl -pi -e 's/title\.lower\(\)\)$/title.lower()).strip("-"…
            written=["slugs.py"] added="title.lower()).strip(\"-\")"
        claude-store-decision: Write written=["/home/dev/work/proj/sessions/store_sqlite.py"] created=["/home/dev/work/proj/sessions/store_sqlite.py"]
            added="import sqlite3 ⏎ def save(path, sessions): ⏎ db = sqlite3.connect(pat…"
        claude-ttl-cache-zh: Edit written=["/home/dev/work/proj/ttl_cache.py"] created=[]
            added="if (time.time() - at) * 1000 > self.ttl_ms:"
        claude-units-rustc: rustc --edition 2021 units.rs -o units 2>&1 | tail -20
            failed by its output
        claude-units-rustc: Edit written=["/home/dev/work/proj/units.rs"] created=[]
            added="u64::from(metres) * 1000"
        claude-webhook-edit: Edit written=["/home/dev/work/proj/src/webhook.js"] created=[]
            added="const given = header.replace(/^sha256=/, \"\").toLowerCase(); ⏎ return…"
        codex-callback-sign-sed-zh: python3 test_callback.py; echo done
            failed by its output
        codex-callback-sign-sed-zh: sed -i 's/for k in params)/for k in sorted(params))/' callb…
            written=["callback.py"] added="for k in sorted(params))"
        codex-cart-npm-heredoc: npm test 2>&1 || true
            failed by its output
        codex-cart-npm-heredoc: cat > cart.js <<'EOF'
            written=["cart.js"] added="function cartTotal(prices) { ⏎ const cents = prices.reduce((sum, p) =…"
        codex-duration-git-apply: node run_tests.js
            failed by its output
        codex-duration-git-apply: git apply <<'EOF'
            written=["duration.js"] added="const m = /^(?:(\\d+)h)?(?:(\\d+)m)?$/.exec(text); ⏎ if (!m || text ===…"
        codex-ini-gotcha-mixed: python3 settings.py
            failed by its output
        codex-ini-gotcha-mixed: sed -i 's/^timeout = 30s$/timeout = 30/' app.ini
            written=["app.ini"] added="timeout = 30"
        codex-inventory-unresolved: python3 inventory.py 2>&1 | tail -5
            failed by its output
        codex-notify-retry-sed-zh: python3 test_notify.py; echo done
            failed by its output
        codex-notify-retry-sed-zh: sed -i 's/attempt < max_retries/attempt <= max_retries/' no…
            written=["notify.py"] added="attempt <= max_retries"
        codex-pricing-sed-masked: python3 -m unittest test_pricing 2>&1; echo done
            failed by its output
        codex-pricing-sed-masked: sed -i 's/total \* percent$/total * percent \/ 100/' pricin…
            written=["pricing.py"] added="total * percent / 100"
        codex-retry-apply-patch: python3 -m unittest test_retry
            failed by its output
        copilot-cache-headers-decision-zh: edit written=["/home/dev/work/proj/cache_headers.py"] created=[]
            added="if path.startswith(\"/static/\"): ⏎ return {\"Cache-Control\": \"public, m…"
        copilot-celsius-heredoc-masked: python3 -m unittest test_temperature 2>&1; echo ok
            failed by its output
        copilot-celsius-heredoc-masked: cat > temperature.py <<'EOF'
            written=["temperature.py"] added="def to_celsius(fahrenheit): ⏎ return (fahrenheit - 32) * 5 / 9"
        copilot-email-npm-unresolved: npm test 2>&1 | tail -15
            failed by its output
        copilot-email-npm-unresolved: edit written=["/home/dev/work/proj/emails.js"] created=[]
            added="/^[a-z.]+@[a-z.]+\\.[a-z]+$/"
        copilot-email-npm-unresolved: npm test 2>&1 | tail -15
            failed by its output
        copilot-esm-gotcha-discovery: node assets.js
            failed by its output
        copilot-fix-users-route: node test_routes.js
            failed by its output
        copilot-fix-users-route: edit written=["/home/dev/work/proj/routes.js"] created=[]
            added="u.id === Number(params.id)"
        copilot-matrix-edit: python3 -m unittest test_matrix
            failed by its output
        copilot-matrix-edit: edit written=["/home/dev/work/proj/matrix.py"] created=[]
            added="for i in range(len(rows[0]))]"
        copilot-queue-redis-decide-zh: create written=["/home/dev/work/proj/tasks.py"] created=["/home/dev/work/proj/tasks.py"]
            added="import json ⏎ import redis ⏎ _r = redis.Redis() ⏎ def enqueue(task):…"
        copilot-stack-git-apply: python3 -m unittest test_stack
            failed by its output
        copilot-stack-git-apply: git apply <<'EOF'
            written=["stack.py"] added="return self.items[-1]"
        copilot-theme-reverse: edit written=["/home/dev/work/proj/theme.py"] created=[]
            added="DEFAULT_THEME = \"dark\""
        copilot-theme-reverse: edit written=["/home/dev/work/proj/theme.py"] created=[]
            added="DEFAULT_THEME = \"light\""
        gemini-area-rustc-sed: rustc --edition 2021 area.rs -o area 2>&1 | head -20
            failed by its output
        gemini-area-rustc-sed: sed -i 's/map(|(w, h)| area(w, h))/map(|\&(w, h)| area(w, h…
            written=["area.rs"] added="map(|&(w, h)| area(w, h))"
        gemini-csv-report-edit: replace written=["/home/dev/work/proj/csv_report.py"] created=[]
            added="rows = list(csv.reader(f))[1:]"
        gemini-fix-date-parse-zh: replace written=["/home/dev/work/proj/dates.py"] created=[]
            added="\"%Y-%m-%d\""
        gemini-flags-reverse: replace written=["/home/dev/work/proj/feature_flags.py"] created=[]
            added="\"new_checkout\": True,"
        gemini-flags-reverse: replace written=["/home/dev/work/proj/feature_flags.py"] created=[]
            added="\"new_checkout\": False,"
        gemini-remember-staging-port: replace written=["/home/dev/work/proj/config.py"] created=[]
            added="DB_PORT = 5433"
        gemini-rerun-still-failing: replace written=["/home/dev/work/proj/text.py"] created=[]
            added="return title.lower().replace("
        gemini-utc-decision-zh: replace written=["/home/dev/work/proj/timestamps.py"] created=[]
            added="return datetime.datetime.now(datetime.timezone.utc).isoformat()"
        gemini-weeks-tee-masked: python3 -m unittest test_weeks 2>&1 | tail -4
            failed by its output
        gemini-weeks-tee-masked: tee weeks.py > /dev/null <<'EOF'
            written=["weeks.py"] added="import datetime ⏎ def week_start(day): ⏎ \"\"\"The Monday of the week ho…"
        gemini-weeks-tee-masked: python3 -m unittest test_weeks 2>&1 | tail -4
            failed by its output
        hermes-batch-size-reverse: patch written=["/home/dev/work/proj/batching.py"] created=[]
            added="BATCH_SIZE = 1000"
        hermes-batch-size-reverse: patch written=["/home/dev/work/proj/batching.py"] created=[]
            added="BATCH_SIZE = 1000"
        hermes-batch-size-reverse: patch written=["/home/dev/work/proj/batching.py"] created=[]
            added="BATCH_SIZE = 1000"
        hermes-batch-size-reverse: patch written=["/home/dev/work/proj/batching.py"] created=[]
            added="BATCH_SIZE = 100"
        hermes-batch-size-reverse: patch written=["/home/dev/work/proj/batching.py"] created=[]
            added="BATCH_SIZE = 100"
        hermes-batch-size-reverse: patch written=["/home/dev/work/proj/batching.py"] created=[]
            added="BATCH_SIZE = 100"
        hermes-bmi-sed-masked: python3 -m unittest test_health 2>&1 || true
            failed by its output
        hermes-bmi-sed-masked: sed -i 's|weight_kg / height_cm \*\* 2|weight_kg / (height_…
            written=["health.py"] added="weight_kg / (height_cm / 100) ** 2"
        hermes-clamp-rustc-perl: rustc --edition 2021 clamp.rs -o clamp 2>&1 | head -12
            failed by its output
        hermes-clamp-rustc-perl: perl -pi -e 's/\{ valu \}/{ value }/' clamp.rs
            written=["clamp.rs"] added="{ value }"
        hermes-fix-csv-encoding-zh: patch written=["/home/dev/work/proj/export.py"] created=[]
            added="encoding=\"utf-8-sig\""
        hermes-mean-unresolved: python3 stats.py 2>&1; echo finished
            failed by its output
        hermes-queue-nats-reverse-zh: write_file written=["/home/dev/work/proj/tasks.py"] created=["/home/dev/work/proj/tasks.py"]
            added="import json ⏎ import nats ⏎ async def enqueue(task): ⏎ nc = await nat…"
        hermes-uuid-decision: write_file written=["/home/dev/work/proj/ids.py"] created=["/home/dev/work/proj/ids.py"]
            added="import uuid ⏎ def new_id(): ⏎ return str(uuid.uuid4())"
        hermes-uuid-decision: write_file written=["/home/dev/work/proj/ids.py"] created=["/home/dev/work/proj/ids.py"]
            added="import uuid ⏎ def new_id(): ⏎ return str(uuid.uuid4())"
        hermes-uuid-decision: write_file written=["/home/dev/work/proj/ids.py"] created=["/home/dev/work/proj/ids.py"]
            added="import uuid ⏎ def new_id(): ⏎ return str(uuid.uuid4())"
        hermes-uuid-decision: write_file written=["/home/dev/work/proj/ids.py"] created=["/home/dev/work/proj/ids.py"]
            added="import uuid ⏎ def new_id(): ⏎ return str(uuid.uuid4())"
        hermes-wordcount-patch: patch written=["/home/dev/work/proj/wordcount.py"] created=[]
            added="return len(text.split())"
        hermes-wordcount-patch: patch written=["/home/dev/work/proj/wordcount.py"] created=[]
            added="return len(text.split())"
        hermes-wordcount-patch: patch written=["/home/dev/work/proj/wordcount.py"] created=[]
            added="return len(text.split())"
        opencode-convention-errors-zh: edit written=["/home/dev/work/proj/errors.py"] created=[]
            added="\"用户不存在\""
        opencode-convention-errors-zh: edit written=["/home/dev/work/proj/errors.py"] created=[]
            added="\"订单已过期\""
        opencode-fix-retry-backoff: edit written=["/home/dev/work/proj/backoff.py"] created=[]
            added="base * 2 ** (attempt - 1)"
        opencode-invoice-sed-masked: python3 -m unittest test_invoice 2>&1 || true
            failed by its output
        opencode-invoice-sed-masked: sed -i 's/return int(amount \* rate \* 100) \/ 100/return r…
            written=["invoice.py"] added="return round(amount * rate, 2)"
        opencode-jobqueue-write: write written=["/home/dev/work/proj/jobqueue.js"] created=["/home/dev/work/proj/jobqueue.js"]
            added="class JobQueue { ⏎ constructor() { this.jobs = []; } ⏎ push(job) { th…"
        opencode-parse-port-panic: rustc --edition 2021 parse_port.rs -o parse_port && ./parse…
            failed by its output
        opencode-parse-port-panic: edit written=["/home/dev/work/proj/parse_port.rs"] created=[]
            added="text.trim().parse().unwrap_or(8080)"
        opencode-port-env-edit: edit written=["/home/dev/work/proj/server_config.py"] created=[]
            added="return int(os.environ.get(\"APP_PORT\", DEFAULT_PORT))"
        opencode-rerun-still-failing-zh: edit written=["/home/dev/work/proj/money.py"] created=[]
            added="yuan, fen = divmod(cents, 100) ⏎ return \"{:,}.{:02d}\".format(yuan, fe…"
        opencode-upload-limit-reverse-zh: edit written=["/home/dev/work/proj/limits.py"] created=[]
            added="UPLOAD_LIMIT_MB = 50"
        opencode-upload-limit-reverse-zh: edit written=["/home/dev/work/proj/limits.py"] created=[]
            added="UPLOAD_LIMIT_MB = 10"
        opencode-zoneinfo-decision: write written=["/home/dev/work/proj/schedule.py"] created=["/home/dev/work/proj/schedule.py"]
            added="import datetime ⏎ from zoneinfo import ZoneInfo ⏎ def local_run_time(…"
    "#]].assert_eq(&out);
}
