//! Copilot CLI's session log: the closing answer its `agentStop` hook never hands over.
//!
//! Copilot writes every moment of a session to `~/.copilot/session-state/<session>/events.jsonl`,
//! one JSON line `{type, data, id, parentId, timestamp}` each (`timestamp` an RFC 3339 instant).
//! A turn opens with a `user.message`; every model call adds an `assistant.message`, whose
//! `data.content` is empty when the call only asked for tools (`data.toolRequests`). The turn's
//! closing answer is the last `assistant.message` with text written before the stop and after
//! the turn's `user.message`; a resumed session appends its next turn to the same file. Copilot
//! writes the file lazily (in a headless run, when it exits), so at the stop the file may not
//! hold the turn's end yet: that is told apart from a turn without an answer.
//!
//! Must not: read files or the store (the work pass hands it the end of the log), or fail: a
//! line it cannot read is skipped.

pub(super) mod history;

use serde::Deserialize;
use serde::de::IgnoredAny;

use super::{ClosingAnswer, TurnSpan, parse_iso_ms};

/// How long after the stop's own time an answer may still be logged: the hook takes its time
/// when it starts, and the log is written by another part of the agent.
const SLACK_MS: i64 = 2_000;

/// One log line, as far as the closing answer needs it.
#[derive(Debug, Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    data: Data,
    timestamp: String,
}

#[derive(Debug, Default, Deserialize)]
struct Data {
    #[serde(default)]
    content: Option<String>,
    #[serde(default, rename = "toolRequests")]
    tool_requests: Option<Vec<IgnoredAny>>,
}

/// Any log line's time.
#[derive(Debug, Deserialize)]
struct Stamp {
    timestamp: String,
}

/// The closing answer of `turn`, read from whole lines of the end of the log: the last
/// `assistant.message` with text at or before the stop (up to [`SLACK_MS`] after it), not
/// before the turn began nor before its last `user.message`; a `user.message` after the stop
/// begins a later turn, where reading ends. The answer is certain once the turn's last model
/// call asked for no tools, or once the log goes on past the stop; until then the turn's end is
/// [`ClosingAnswer::Unwritten`].
pub(in crate::adapter) fn closing_answer(tail: &[u8], turn: TurnSpan) -> ClosingAnswer {
    let TurnSpan { began_ms, stop_ms } = turn;
    // The text of the turn's latest answer, and whether its latest model call asked for nothing.
    let mut text = None;
    let mut ended = false;
    for raw in tail.split(|b| *b == b'\n') {
        // Most lines are tool traffic and usage records; only messages are parsed.
        if !contains(raw, b"\"user.message\"") && !contains(raw, b"\"assistant.message\"") {
            continue;
        }
        let Ok(line) = serde_json::from_slice::<Line>(raw) else { continue };
        let Some(at_ms) = parse_iso_ms(&line.timestamp) else { continue };
        if began_ms.is_some_and(|began| at_ms < began) {
            // An earlier turn's.
            continue;
        }
        match line.kind.as_str() {
            "user.message" if at_ms > stop_ms => break,
            "user.message" => (text, ended) = (None, false),
            "assistant.message" if at_ms > stop_ms + SLACK_MS => break,
            "assistant.message" => {
                if let Some(content) = line.data.content.filter(|c| !c.trim().is_empty()) {
                    text = Some(content.trim().to_owned());
                }
                ended = line.data.tool_requests.is_none_or(|requests| requests.is_empty());
            }
            _ => {}
        }
    }
    if !ended && !reaches(tail, stop_ms) {
        return ClosingAnswer::Unwritten;
    }
    text.map_or(ClosingAnswer::Absent, ClosingAnswer::Found)
}

/// Whether the log goes on to the stop's time or later: its last line with a time says.
fn reaches(tail: &[u8], stop_ms: i64) -> bool {
    tail.split(|b| *b == b'\n')
        .rev()
        .filter_map(|raw| serde_json::from_slice::<Stamp>(raw).ok())
        .find_map(|stamp| parse_iso_ms(&stamp.timestamp))
        .is_some_and(|at_ms| at_ms >= stop_ms)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use ClosingAnswer::{Absent, Found, Unwritten};

    /// The recorded turn below: stopped at 2026-12-04T17:40:32.752Z, begun at a time not known.
    const STOP: TurnSpan = TurnSpan { began_ms: None, stop_ms: 1_796_406_032_752 };

    fn at(text: &str) -> i64 {
        parse_iso_ms(text).expect("an instant")
    }

    fn line(kind: &str, at: &str, data: serde_json::Value) -> String {
        json!({"type": kind, "data": data, "id": "7bde33a4-fcf4-4c69-81c5-04acd41172a5",
               "timestamp": at, "parentId": "78e1cf5a-5997-400d-8869-e426c73ca047"})
        .to_string()
    }

    fn user(at: &str, content: &str) -> String {
        let shown = format!("<current_datetime>{at}</current_datetime>\n\n{content}");
        line(
            "user.message",
            at,
            json!({"content": content, "transformedContent": shown,
                   "messageId": "6c8402b2-b964-47a8-ae1a-0be6425093b8",
                   "supportedNativeDocumentMimeTypes": [], "delivery": "idle",
                   "interactionId": "1e3f0a86-7ae6-4423-86b0-d232ad4e57d3", "turnId": "0"}),
        )
    }

    fn assistant(at: &str, content: &str, tools: bool) -> String {
        let requests = if tools {
            json!([{"toolCallId": "toolu_63c523e2b4ed48dda7ba", "name": "bash", "type": "function",
                    "arguments": {"command": "python3 -m unittest test_matrix"}}])
        } else {
            json!([])
        };
        line(
            "assistant.message",
            at,
            json!({"messageId": "4dbf3eee-9db7-41bf-b782-eccdf335ea8b", "content": content,
                   "model": "claude-sonnet-4.5", "toolRequests": requests, "turnId": "4"}),
        )
    }

    fn other(kind: &str, at: &str) -> String {
        line(kind, at, json!({"turnId": "4"}))
    }

    fn log(lines: &[String]) -> Vec<u8> {
        let mut text = lines.join("\n");
        text.push('\n');
        text.into_bytes()
    }

    fn found(text: &str) -> ClosingAnswer {
        Found(text.to_owned())
    }

    const ANSWER: &str = "transpose iterated over range(len(rows)); range(len(rows[0])) fixes it.";

    /// One recorded turn: model calls asking for tools (one says what it does), the answer, the
    /// stop's own hook line.
    fn turn() -> Vec<String> {
        vec![
            other("session.start", "2026-12-04T17:40:31.389Z"),
            user("2026-12-04T17:40:31.677Z", "transpose drops a column. Fix matrix.py."),
            other("assistant.turn_start", "2026-12-04T17:40:31.685Z"),
            assistant("2026-12-04T17:40:31.771Z", "", true),
            other("tool.execution_complete", "2026-12-04T17:40:32.134Z"),
            assistant("2026-12-04T17:40:32.207Z", "Let me read matrix.py.", true),
            other("tool.execution_complete", "2026-12-04T17:40:32.297Z"),
            assistant("2026-12-04T17:40:32.336Z", "", true),
            other("tool.execution_complete", "2026-12-04T17:40:32.479Z"),
            assistant("2026-12-04T17:40:32.743Z", &format!("  {ANSWER}\n"), false),
            other("assistant.turn_end", "2026-12-04T17:40:32.744Z"),
            other("hook.start", "2026-12-04T17:40:32.752Z"),
        ]
    }

    #[test]
    fn the_last_message_with_text_before_the_stop_is_the_answer() {
        assert_eq!(closing_answer(&log(&turn()), STOP), found(ANSWER));
        // Without the stop's own line: the last model call asked for nothing, so it is final.
        assert_eq!(closing_answer(&log(&turn()[..10]), STOP), found(ANSWER));
    }

    #[test]
    fn a_log_not_yet_written_to_the_turns_end_is_told_apart() {
        // Written up to a model call that asked for tools, with text on the way.
        let lines = turn();
        assert_eq!(closing_answer(&log(&lines[..7]), STOP), Unwritten);
        assert_eq!(closing_answer(&log(&lines[..2]), STOP), Unwritten);
        assert_eq!(closing_answer(b"", STOP), Unwritten);
        // The same log written on past the stop: the text it has is all the turn said.
        let mut on = lines[..7].to_vec();
        on.push(other("session.shutdown", "2026-12-04T17:40:32.889Z"));
        assert_eq!(closing_answer(&log(&on), STOP), found("Let me read matrix.py."));
    }

    #[test]
    fn a_turn_that_ends_without_text_has_no_answer_of_its_own() {
        // The message with text belongs to the turn before the last user message.
        let lines = [
            user("2026-12-04T17:40:20.000Z", "first"),
            assistant("2026-12-04T17:40:21.000Z", "The first answer.", false),
            user("2026-12-04T17:40:31.677Z", "second"),
            assistant("2026-12-04T17:40:31.771Z", "", true),
            assistant("2026-12-04T17:40:32.336Z", "  ", false),
        ];
        assert_eq!(closing_answer(&log(&lines), STOP), Absent);
        assert_eq!(closing_answer(&log(&lines[..2]), STOP), found("The first answer."));
        // Cut off at a tool request, then written on past the stop.
        let mut cut = lines[..4].to_vec();
        assert_eq!(closing_answer(&log(&cut), STOP), Unwritten);
        cut.push(other("hook.start", "2026-12-04T17:40:32.752Z"));
        assert_eq!(closing_answer(&log(&cut), STOP), Absent);
    }

    #[test]
    fn a_later_turn_appended_after_the_stop_is_not_read() {
        let mut lines = turn();
        lines.extend([
            other("session.resume", "2026-12-04T17:40:33.885Z"),
            // Inside the slack, yet a new turn: its messages are not this stop's.
            user("2026-12-04T17:40:33.900Z", "Put it back."),
            assistant("2026-12-04T17:40:34.100Z", "Put back.", false),
        ]);
        assert_eq!(closing_answer(&log(&lines), STOP), found(ANSWER));
        // The second turn's own stop finds the second answer.
        let second = TurnSpan { began_ms: None, stop_ms: at("2026-12-04T17:40:34.200Z") };
        assert_eq!(closing_answer(&log(&lines), second), found("Put back."));
    }

    #[test]
    fn an_earlier_turns_answer_is_not_taken_for_a_turn_not_yet_written() {
        // The log holds the first turn whole and nothing of the second, resumed later.
        let lines = turn();
        let second = TurnSpan {
            began_ms: Some(at("2026-12-04T17:40:33.885Z")),
            stop_ms: at("2026-12-04T17:40:36.000Z"),
        };
        assert_eq!(closing_answer(&log(&lines), second), Unwritten);
        let mut on = lines.clone();
        on.push(other("session.shutdown", "2026-12-04T17:40:37.000Z"));
        assert_eq!(closing_answer(&log(&on), second), Absent);
        // Only what came after the turn began counts.
        let begun = TurnSpan { began_ms: Some(at("2026-12-04T17:40:32.300Z")), ..STOP };
        assert_eq!(closing_answer(&log(&lines), begun), found(ANSWER));
        assert_eq!(closing_answer(&log(&lines[..7]), begun), Unwritten);
    }

    #[test]
    fn an_answer_logged_just_after_the_stop_counts_but_not_one_long_after() {
        let mut lines = turn();
        lines.push(assistant("2026-12-04T17:40:33.500Z", "Logged late.", false));
        assert_eq!(closing_answer(&log(&lines), STOP), found("Logged late."));
        lines.push(assistant("2026-12-04T17:40:40.000Z", "Another turn's.", false));
        assert_eq!(closing_answer(&log(&lines), STOP), found("Logged late."));
    }

    #[test]
    fn a_cut_first_line_and_malformed_lines_are_skipped() {
        let whole = turn();
        let answer = &whole[9];
        let cut = &answer[answer.len() / 2..];
        let lines = [
            format!("\"assistant.message\", {cut}"),
            json!({"type": "assistant.message", "data": {"content": 42},
                   "timestamp": "2026-12-04T17:40:32.000Z"})
            .to_string(),
            json!({"type": "assistant.message", "data": {"content": "no time"}}).to_string(),
            json!({"type": "assistant.message", "data": {"content": "bad"}, "timestamp": "later"})
                .to_string(),
            "not json \"user.message\"".to_owned(),
            String::new(),
            "\u{0}\u{1}binary".to_owned(),
        ];
        assert_eq!(closing_answer(&log(&lines), STOP), Unwritten);
        // The same rubbish before a whole turn changes nothing.
        let mut mixed = lines.to_vec();
        mixed.extend(whole.iter().cloned());
        // And a half-written last line (the agent writing now) is skipped too.
        let late = assistant("2026-12-04T17:40:32.750Z", "half written", false);
        mixed.push(late[..late.len() / 2].to_owned());
        assert_eq!(closing_answer(&log(&mixed), STOP), found(ANSWER));
    }

    /// Every recorded Copilot session of the quality corpus, replayed as its log grew: at each
    /// stop the reading is the turn's answer or not written yet, never another answer; once the
    /// session is over, every stop finds its turn's answer. A turn begins with the first hook
    /// after the last one that ended a turn.
    #[test]
    fn every_recorded_stop_finds_its_turns_answer() {
        let sessions = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../agent-memory-testkit/fixtures/sessions");
        let mut checked = 0;
        for dir in std::fs::read_dir(&sessions).expect("the sessions corpus").flatten() {
            let Ok(scenario) = std::fs::read_to_string(dir.path().join("scenario.json")) else {
                continue;
            };
            let scenario: serde_json::Value = serde_json::from_str(&scenario).expect("a scenario");
            if scenario["agent"] != "copilot" {
                continue;
            }
            let name = dir.file_name();
            let hooks = std::fs::read_to_string(dir.path().join("hooks.jsonl")).expect("hooks");
            let finals = scenario["turns"].as_array().into_iter().flatten();
            let finals: Vec<ClosingAnswer> =
                finals.filter_map(|turn| turn["final"].as_str()).map(found).collect();
            let mut grown = Vec::new();
            let mut stops = Vec::new();
            let mut began = None;
            for call in hooks.lines().map(serde_json::from_str::<serde_json::Value>) {
                let call = call.expect("a hook line");
                for item in call["transcript"].as_array().into_iter().flatten() {
                    grown.extend_from_slice(item.to_string().as_bytes());
                    grown.push(b'\n');
                }
                let time = call["payload"]["timestamp"].as_i64().expect("a hook time");
                let began_ms = *began.get_or_insert(time);
                if call["event"] == "agentStop" {
                    let span = TurnSpan { began_ms: Some(began_ms), stop_ms: time };
                    let then = closing_answer(&grown, span);
                    let turn = stops.len();
                    assert!(
                        then == Unwritten || Some(&then) == finals.get(turn),
                        "{name:?} turn {turn}: {then:?}"
                    );
                    stops.push(span);
                }
                if call["event"] == "agentStop" || call["event"] == "sessionEnd" {
                    began = None;
                }
            }
            let answers: Vec<ClosingAnswer> =
                stops.iter().map(|span| closing_answer(&grown, *span)).collect();
            assert_eq!(answers, finals, "{name:?}");
            checked += 1;
        }
        assert!(checked >= 7, "the corpus holds the Copilot sessions");
    }
}
