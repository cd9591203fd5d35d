//! `agent-memory show`: items in full, in core's compact text form
//! ([`agent_memory_core::recall::text`]), the same text the MCP tools answer with, so a person
//! and a model read the same thing, and when each was last handed to an agent. Nothing here
//! formats an item itself.

use std::io::{self, Write};

use agent_memory_core::recall::{self, Shown};

use super::json;

/// Items in full, in the compact text form the MCP tools answer with too.
pub fn show(items: &[Shown], as_json: bool) -> io::Result<()> {
    write_show(&mut io::stdout().lock(), items, as_json)
}

pub fn write_show(out: &mut impl Write, items: &[Shown], as_json: bool) -> io::Result<()> {
    if as_json {
        return json(out, &items);
    }
    writeln!(out, "{}", recall::text::shown(items).trim_end())
}

#[cfg(test)]
mod tests {
    use agent_memory_core::recall::Item;
    use agent_memory_core::store::injections::LastHanded;
    use agent_memory_core::time::format_local;
    use expect_test::expect;

    use super::*;
    use crate::output::tests::{AT, memory, rendered};

    #[test]
    fn items_in_the_shared_text_form() {
        let items = [Item::Memory(memory(7, "Use jiff for every time in the store")), {
            let mut older = memory(3, "Use chrono for time");
            older.superseded_by = Some(7);
            Item::Memory(older)
        }];
        let last = LastHanded {
            at_ms: AT,
            agent: "claude-code".into(),
            session: Some("c-1".into()),
            channel: "briefing".into(),
            times: 3,
        };
        let shown = [
            Shown { item: items[0].clone(), last_handed: Some(last) },
            Shown { item: items[1].clone(), last_handed: None },
        ];
        let text = rendered(|out| write_show(out, &shown, false));
        let core = recall::text::shown(&shown).replace(&format_local(AT), "<time>");
        assert_eq!(text.trim_end(), core.trim_end(), "core's form, unchanged");
        expect![[r#"
            ## m7 [decision] L2 memory, agent-memory
            <time> | importance 7 | active | 2 hits | created <time> by distilled
            Use jiff for every time in the store
            from: o12 s3
            Last handed to claude-code (briefing) <time>, 3 times

            ## m3 [decision] L2 memory, agent-memory
            <time> | importance 7 | active | 2 hits | created <time> by distilled
            Use chrono for time
            superseded by m7
            from: o12 s3
        "#]]
        .assert_eq(&text);
    }
}
