//! The command line as a user meets it: the help lists commands in the order a new user needs
//! them, and every command's help is there.

use crate::home;

#[test]
fn help_lists_what_a_new_user_needs_first_and_internal_commands_last() {
    let home = home();
    let help = home.ok(&["--help"]);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(commands[..6], ["install", "status", "search", "show", "timeline", "brief"]);
    let tail = &commands[commands.len() - 3..];
    assert_eq!(tail, ["mcp", "hook", "help"], "{commands:?}");
    for args in [&["hook", "--help"][..], &["help", "hook"]] {
        let text = home.ok(args);
        assert!(text.contains("Usage: agent-memory hook"), "{args:?}: {text}");
        assert!(!text.contains("[default: ]") && !text.contains("parse_fast"), "{text}");
    }
}
