//! Shell calls in neutral terms: the files a command line writes and the text it puts there,
//! and whether a command's output shows a failure that its exit code hides.
//!
//! A command is read the way a POSIX shell splits it: quotes and escapes, commands chained by
//! `&&`, `||`, `;`, `|` and newlines, redirections, and heredocs, whose bodies are data and are
//! never read as commands. Nothing is run or expanded, so a word holding a variable or a command
//! substitution names no file. Writes are recognised by form: output redirections, `sed -i`,
//! `perl -i`, `tee`, and `git apply`, `patch` or `apply_patch` fed a patch on the command line.
//!
//! Must not: know an agent, touch the disk, or guess beyond what the command line says (files a
//! program opens on its own, `cp` and `mv` targets, files named only inside a patch on disk). What
//! it cannot read writes nothing; it never fails or panics.

use super::{PATCH_HEADERS, patch_additions};
use crate::text;

/// What a command line writes, as far as the line itself says.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Writes {
    /// The files written, as the command names them, each once.
    pub(super) files: Vec<String>,
    /// Texts put into them, in order: heredoc bodies, echoed text, substitutions' replacements,
    /// lines a patch adds.
    pub(super) texts: Vec<String>,
}

impl Writes {
    fn add_file(&mut self, file: &str) {
        if !self.files.iter().any(|known| known == file) {
            self.files.push(file.to_owned());
        }
    }
}

/// The files `command` writes and what it puts in them.
pub(super) fn writes(command: &str) -> Writes {
    let mut found = Writes::default();
    collect(command, &mut found, 0);
    found
}

/// How deep `bash -c '…'` scripts are followed.
const MAX_NESTING: u8 = 2;

fn collect(command: &str, found: &mut Writes, depth: u8) {
    let commands = parse(command);
    for (at, command) in commands.iter().enumerate() {
        let upstream = at.checked_sub(1).map(|before| &commands[before]);
        let stdin = match (&command.stdin, upstream) {
            (Some(text), _) => Some(text.clone()),
            (None, Some(upstream)) if command.piped => printed(upstream),
            _ => None,
        };
        simple_writes(command, stdin.as_deref(), found, depth);
    }
}

/// One word of a command line, quotes removed.
#[derive(Debug, Default, Clone)]
struct Word {
    text: String,
    /// Part of it was quoted or escaped (`''` is an empty word, not none).
    quoted: bool,
    /// It holds an expansion (`$x`, `$(…)`, a backquote): what it names is unknown.
    expands: bool,
}

impl Word {
    /// Whether the word names a file the command line knows: no expansion, not a device, not
    /// `-` (standard input or output).
    fn names_file(&self) -> bool {
        !self.expands
            && !self.text.trim().is_empty()
            && self.text != "-"
            && !self.text.starts_with("/dev/")
    }
}

/// One simple command: its words, where its output goes, what it reads.
#[derive(Debug, Default)]
struct Command {
    words: Vec<Word>,
    /// Targets of its output redirections (`>`, `>>`, `>|`, `&>`, `2>`).
    outputs: Vec<Word>,
    /// Its standard input when the line holds it: a heredoc's body or a here-string.
    stdin: Option<String>,
    /// Its standard input is the previous command's output (`a | b`).
    piped: bool,
}

impl Command {
    fn is_empty(&self) -> bool {
        self.words.is_empty() && self.outputs.is_empty() && self.stdin.is_none()
    }
}

/// What the next word of a command line is, after a redirection operator.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// A file the output goes to.
    Output,
    /// After `>&`: a descriptor (`2`, `-`), or a file the output goes to.
    DupOrOutput,
    /// A heredoc's delimiter; `<<-` strips leading tabs.
    HereDoc { strip_tabs: bool },
    /// A here-string's text (`<<<`).
    HereString,
    /// An input file or a descriptor: nothing written.
    Ignored,
}

/// A heredoc announced on a line whose body starts after that line.
#[derive(Debug)]
struct PendingHereDoc {
    delimiter: String,
    strip_tabs: bool,
    /// The command that reads it.
    command: usize,
}

#[derive(Debug)]
struct Lexer {
    chars: Vec<char>,
    at: usize,
    commands: Vec<Command>,
    pending: Vec<PendingHereDoc>,
    slot: Option<Slot>,
}

/// The simple commands of a command line, in order, without empty ones.
fn parse(command: &str) -> Vec<Command> {
    let mut lexer = Lexer {
        chars: command.chars().collect(),
        at: 0,
        commands: vec![Command::default()],
        pending: Vec::new(),
        slot: None,
    };
    lexer.run();
    lexer.commands.into_iter().filter(|command| !command.is_empty()).collect()
}

impl Lexer {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            match c {
                '\\' if self.peek(1) == Some('\n') => self.at += 2,
                '\n' => {
                    self.at += 1;
                    self.end(false);
                    self.read_heredocs();
                }
                c if c.is_whitespace() => self.at += 1,
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                ';' | '(' | ')' => {
                    self.at += 1;
                    self.end(false);
                }
                '&' if self.peek(1) == Some('>') => {
                    self.at += 1;
                    self.redirection();
                }
                '&' => {
                    self.at += if self.peek(1) == Some('&') { 2 } else { 1 };
                    self.end(false);
                }
                '|' => {
                    let piped = self.peek(1) != Some('|');
                    self.at += if matches!(self.peek(1), Some('|' | '&')) { 2 } else { 1 };
                    self.end(piped);
                }
                '<' | '>' if self.peek(1) == Some('(') => {
                    self.at += 1;
                    let mut word = Word { expands: true, ..Word::default() };
                    self.balanced(&mut word.text);
                    self.push(word);
                }
                '<' | '>' => self.redirection(),
                c if c.is_ascii_digit() && self.descriptor() => self.redirection(),
                _ => {
                    let word = self.word();
                    self.push(word);
                }
            }
        }
        self.end(false);
    }

    /// Ends the current command; the next one reads the pipe when `piped`.
    fn end(&mut self, piped: bool) {
        self.slot = None;
        self.commands.push(Command { piped, ..Command::default() });
    }

    fn current(&mut self) -> &mut Command {
        if self.commands.is_empty() {
            self.commands.push(Command::default());
        }
        let last = self.commands.len() - 1;
        &mut self.commands[last]
    }

    /// At the digits of `2>` or `0<`: skips them when a redirection follows.
    fn descriptor(&mut self) -> bool {
        let digits = self.chars[self.at..].iter().take_while(|c| c.is_ascii_digit()).count();
        let redirects = matches!(self.peek(digits), Some('<' | '>'));
        if redirects {
            self.at += digits;
        }
        redirects
    }

    /// At `<` or `>`: reads the operator and says what the next word is.
    fn redirection(&mut self) {
        let first = self.peek(0);
        self.at += 1;
        let slot = if first == Some('>') {
            match self.peek(0) {
                Some('>' | '|') => {
                    self.at += 1;
                    Slot::Output
                }
                Some('&') => {
                    self.at += 1;
                    Slot::DupOrOutput
                }
                _ => Slot::Output,
            }
        } else {
            match (self.peek(0), self.peek(1)) {
                (Some('<'), Some('<')) => {
                    self.at += 2;
                    Slot::HereString
                }
                (Some('<'), Some('-')) => {
                    self.at += 2;
                    Slot::HereDoc { strip_tabs: true }
                }
                (Some('<'), _) => {
                    self.at += 1;
                    Slot::HereDoc { strip_tabs: false }
                }
                (Some('&' | '>'), _) => {
                    self.at += 1;
                    Slot::Ignored
                }
                _ => Slot::Ignored,
            }
        };
        self.slot = Some(slot);
    }

    /// Puts a word where the operator before it says.
    fn push(&mut self, word: Word) {
        match self.slot.take() {
            None => self.current().words.push(word),
            Some(Slot::Output) => self.current().outputs.push(word),
            Some(Slot::DupOrOutput) => {
                let descriptor = word.text == "-" || word.text.chars().all(|c| c.is_ascii_digit());
                if !descriptor {
                    self.current().outputs.push(word);
                }
            }
            Some(Slot::HereDoc { strip_tabs }) => {
                let command = self.commands.len().saturating_sub(1);
                self.pending.push(PendingHereDoc { delimiter: word.text, strip_tabs, command });
            }
            Some(Slot::HereString) => {
                if !word.expands {
                    self.current().stdin = Some(word.text);
                }
            }
            Some(Slot::Ignored) => {}
        }
    }

    /// After a newline: the bodies of the heredocs announced on the line, in order.
    fn read_heredocs(&mut self) {
        for heredoc in std::mem::take(&mut self.pending) {
            let mut body = String::new();
            while self.at < self.chars.len() {
                let end = self.chars[self.at..]
                    .iter()
                    .position(|c| *c == '\n')
                    .map_or(self.chars.len(), |offset| self.at + offset);
                let line: String = self.chars[self.at..end].iter().collect();
                self.at = (end + 1).min(self.chars.len());
                let line = if heredoc.strip_tabs { line.trim_start_matches('\t') } else { &line };
                if line.trim_end() == heredoc.delimiter {
                    break;
                }
                body.push_str(line);
                body.push('\n');
            }
            if let Some(command) = self.commands.get_mut(heredoc.command) {
                command.stdin = Some(body);
            }
        }
    }

    /// One word: up to unquoted whitespace or an operator, quotes removed, expansions kept as
    /// written.
    fn word(&mut self) -> Word {
        let mut word = Word::default();
        while let Some(c) = self.peek(0) {
            match c {
                c if c.is_whitespace() || ";&|()<>".contains(c) => break,
                '\'' => {
                    word.quoted = true;
                    self.at += 1;
                    while let Some(c) = self.peek(0) {
                        self.at += 1;
                        if c == '\'' {
                            break;
                        }
                        word.text.push(c);
                    }
                }
                '"' => {
                    word.quoted = true;
                    self.at += 1;
                    self.double_quoted(&mut word);
                }
                '\\' => {
                    word.quoted = true;
                    self.at += 1;
                    match self.peek(0) {
                        Some('\n') => self.at += 1,
                        Some(c) => {
                            word.text.push(c);
                            self.at += 1;
                        }
                        None => {}
                    }
                }
                '$' | '`' => self.expansion(&mut word),
                c => {
                    // An unquoted glob names files only the disk knows.
                    word.expands |= matches!(c, '*' | '?');
                    word.text.push(c);
                    self.at += 1;
                }
            }
        }
        word
    }

    /// The inside of `"…"`, after the opening quote, through the closing one.
    fn double_quoted(&mut self, word: &mut Word) {
        while let Some(c) = self.peek(0) {
            match c {
                '"' => {
                    self.at += 1;
                    return;
                }
                '\\' => match self.peek(1) {
                    Some(escaped @ ('"' | '\\' | '$' | '`')) => {
                        word.text.push(escaped);
                        self.at += 2;
                    }
                    Some('\n') => self.at += 2,
                    _ => {
                        word.text.push('\\');
                        self.at += 1;
                    }
                },
                '$' | '`' => self.expansion(word),
                c => {
                    word.text.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// At `$` or a backquote: the expansion as written (`$x`, `${x}`, `$(…)`, `` `…` ``).
    fn expansion(&mut self, word: &mut Word) {
        word.expands = true;
        match (self.peek(0), self.peek(1)) {
            (Some('$'), Some('(')) => {
                word.text.push('$');
                self.at += 1;
                self.balanced(&mut word.text);
            }
            (Some('$'), Some('{')) | (Some('`'), _) => {
                let close = if self.peek(0) == Some('`') { '`' } else { '}' };
                let open_len = if close == '`' { 1 } else { 2 };
                word.text.extend(&self.chars[self.at..self.at + open_len]);
                self.at += open_len;
                while let Some(c) = self.peek(0) {
                    word.text.push(c);
                    self.at += 1;
                    if c == close {
                        break;
                    }
                }
            }
            _ => {
                word.text.push('$');
                self.at += 1;
            }
        }
    }

    /// At `(`: copies through the matching `)`, skipping quoted text.
    fn balanced(&mut self, text: &mut String) {
        let mut depth = 0usize;
        let mut quote: Option<char> = None;
        while let Some(c) = self.peek(0) {
            text.push(c);
            self.at += 1;
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '(') => depth += 1,
                (None, ')') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return;
                    }
                }
                _ => {}
            }
        }
    }
}

/// Words that run the command after them: the program is further on.
const WRAPPERS: &[&str] = &[
    "sudo", "env", "command", "builtin", "exec", "nohup", "time", "nice", "timeout", "!", "{",
    "then", "do", "else", "elif", "if", "while", "until",
];

/// The words from the program on: leading assignments and wrappers skipped.
fn program_words(words: &[Word]) -> &[Word] {
    let mut at = 0;
    while let Some(word) = words.get(at) {
        let text = word.text.as_str();
        if is_assignment(text) {
            at += 1;
            continue;
        }
        if !WRAPPERS.contains(&text) {
            break;
        }
        at += 1;
        while words.get(at).is_some_and(|w| w.text.starts_with('-') || is_assignment(&w.text)) {
            at += 1;
        }
        // `timeout 10 cmd`: the duration comes first.
        if text == "timeout" {
            at += 1;
        }
    }
    &words[at.min(words.len())..]
}

/// `NAME=value`: an assignment before a command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// A program's name without its directory.
fn program_name(word: &Word) -> &str {
    word.text.rsplit('/').next().unwrap_or_default()
}

/// What one simple command writes, given what it reads on standard input when known.
fn simple_writes(command: &Command, stdin: Option<&str>, found: &mut Writes, depth: u8) {
    let words = program_words(&command.words);
    let program = words.first().map_or("", program_name);
    let args = words.get(1..).unwrap_or_default();
    let mut redirected = false;
    for target in command.outputs.iter().filter(|target| target.names_file()) {
        found.add_file(&target.text);
        redirected = true;
    }
    match program {
        "sed" | "gsed" => sed(args, found),
        "perl" => perl(args, found),
        "tee" => tee(args, stdin, found),
        "git" => git_apply(args, stdin, found),
        "patch" | "gpatch" => patch(args, stdin, found),
        "apply_patch" | "applypatch" => codex_patch(args, stdin, found),
        "bash" | "sh" | "zsh" | "dash" | "ksh" if depth < MAX_NESTING => {
            if let Some(script) = script_arg(args) {
                collect(script, found, depth + 1);
            }
        }
        _ => {}
    }
    if redirected && let Some(text) = printed_text(program, args, stdin) {
        found.texts.push(text);
    }
}

/// What a command prints, when the command line holds it: `echo`'s words, `printf`'s format,
/// what `cat` passes on from its standard input.
fn printed(command: &Command) -> Option<String> {
    let words = program_words(&command.words);
    let program = words.first().map_or("", program_name);
    printed_text(program, words.get(1..).unwrap_or_default(), command.stdin.as_deref())
}

fn printed_text(program: &str, args: &[Word], stdin: Option<&str>) -> Option<String> {
    match program {
        "echo" => {
            let words = args.iter().skip_while(|w| {
                w.text.len() > 1
                    && w.text.starts_with('-')
                    && w.text[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'))
            });
            let text = words.map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
            (!text.trim().is_empty()).then_some(text)
        }
        "printf" => {
            let format = args.iter().find(|w| !w.text.starts_with('-'))?;
            Some(format.text.replace("\\n", "\n").replace("\\t", "\t"))
        }
        "cat" if args.iter().all(|w| w.text.starts_with('-')) => stdin.map(str::to_owned),
        _ => None,
    }
}

/// The script of `bash -c '…'` (`-lc`, `-ec`, …).
fn script_arg(args: &[Word]) -> Option<&str> {
    let at = args.iter().position(|w| {
        w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('c')
    })?;
    args[at + 1..].iter().find(|w| !w.text.starts_with('-')).map(|w| w.text.as_str())
}

/// The words of a command split into options and operands: `--` ends the options, and a
/// lone `-` is an operand.
fn is_option(word: &Word) -> bool {
    word.text.len() > 1 && word.text.starts_with('-')
}

/// `sed -i[SUFFIX] [-e SCRIPT]… [SCRIPT] FILE…` (also `--in-place[=SUFFIX]`,
/// `--expression=SCRIPT`, BSD's `-i ''`): the files, and what its substitutions and
/// `a`/`i`/`c` commands put in.
fn sed(args: &[Word], found: &mut Writes) {
    let mut in_place = false;
    let mut scripts: Vec<String> = Vec::new();
    let mut script_given = false;
    let mut operands: Vec<&Word> = Vec::new();
    let mut options_done = false;
    let mut at = 0;
    while let Some(word) = args.get(at) {
        at += 1;
        let text = word.text.as_str();
        if options_done || !is_option(word) {
            operands.push(word);
            continue;
        }
        if text == "--" {
            options_done = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            match name {
                "in-place" => in_place = true,
                "expression" | "file" => {
                    script_given = true;
                    let script = match value {
                        Some(value) => Some(value.to_owned()),
                        None => args.get(at).map(|w| {
                            at += 1;
                            w.text.clone()
                        }),
                    };
                    if name == "expression" {
                        scripts.extend(script);
                    }
                }
                "line-length" if value.is_none() => at += 1,
                _ => {}
            }
            continue;
        }
        let cluster: Vec<char> = text.chars().skip(1).collect();
        for (k, flag) in cluster.iter().enumerate() {
            let rest: String = cluster[k + 1..].iter().collect();
            match flag {
                // The rest of the cluster is the backup suffix; BSD sed takes `''` after it.
                'i' => {
                    in_place = true;
                    if rest.is_empty()
                        && args.get(at).is_some_and(|w| w.quoted && w.text.is_empty())
                    {
                        at += 1;
                    }
                }
                'e' | 'f' => {
                    script_given = true;
                    let script = if rest.is_empty() {
                        args.get(at).map(|w| {
                            at += 1;
                            w.text.clone()
                        })
                    } else {
                        Some(rest)
                    };
                    if *flag == 'e' {
                        scripts.extend(script);
                    }
                }
                'l' if rest.is_empty() => at += 1,
                'l' => {}
                _ => continue,
            }
            break;
        }
    }
    if !script_given && !operands.is_empty() {
        scripts.push(operands.remove(0).text.clone());
    }
    write_operands(in_place, &operands, scripts.iter().flat_map(|s| sed_additions(s)), found);
}

/// `perl -i[EXT] -p -e CODE FILE…` in any clustering (`-pi -e`, `-i -pe`, `-pi.bak -e`): the
/// files, and what its substitutions put in.
fn perl(args: &[Word], found: &mut Writes) {
    let mut in_place = false;
    let mut code: Vec<String> = Vec::new();
    let mut operands: Vec<&Word> = Vec::new();
    let mut options_done = false;
    let mut at = 0;
    while let Some(word) = args.get(at) {
        at += 1;
        if options_done || !is_option(word) {
            operands.push(word);
            continue;
        }
        if word.text == "--" {
            options_done = true;
            continue;
        }
        let cluster: Vec<char> = word.text.chars().skip(1).collect();
        let mut k = 0;
        while let Some(flag) = cluster.get(k) {
            k += 1;
            match flag {
                // The rest of the cluster is the backup extension.
                'i' => {
                    in_place = true;
                    break;
                }
                'e' | 'E' => {
                    let rest: String = cluster[k..].iter().collect();
                    if rest.is_empty() {
                        if let Some(next) = args.get(at) {
                            code.push(next.text.clone());
                            at += 1;
                        }
                    } else {
                        code.push(rest);
                    }
                    break;
                }
                // Optional digits follow.
                'l' | '0' => {
                    while cluster.get(k).is_some_and(char::is_ascii_digit) {
                        k += 1;
                    }
                }
                // The rest of the cluster is their value.
                'F' | 'M' | 'm' | 'I' | 'C' | 'd' | 'D' | 'x' | 'V' => break,
                _ => {}
            }
        }
    }
    // Without `-e`, the first operand is the script's file.
    if code.is_empty() && !operands.is_empty() {
        operands.remove(0);
    }
    write_operands(in_place, &operands, code.iter().flat_map(|c| perl_additions(c)), found);
}

/// Records an in-place editor's files, and its texts when it wrote any.
fn write_operands(
    in_place: bool,
    operands: &[&Word],
    texts: impl Iterator<Item = String>,
    found: &mut Writes,
) {
    let files: Vec<&&Word> = operands.iter().filter(|w| w.names_file()).collect();
    if !in_place || files.is_empty() {
        return;
    }
    files.iter().for_each(|file| found.add_file(&file.text));
    found.texts.extend(texts);
}

/// `tee [-a] FILE…`: the files, and what it reads when the command line holds it.
fn tee(args: &[Word], stdin: Option<&str>, found: &mut Writes) {
    let files: Vec<&Word> = args.iter().filter(|w| !is_option(w) && w.names_file()).collect();
    if files.is_empty() {
        return;
    }
    files.iter().for_each(|file| found.add_file(&file.text));
    found.texts.extend(stdin.map(str::to_owned));
}

/// `git [-C DIR] apply [OPTIONS]` of a patch on its standard input: the files its `+++` lines
/// name, and the lines it adds. Checks and statistics (`--check`, `--stat`) write nothing, nor
/// does `--cached`, which changes only the index.
fn git_apply(args: &[Word], stdin: Option<&str>, found: &mut Writes) {
    let mut at = 0;
    while args.get(at).is_some_and(is_option) {
        if matches!(args[at].text.as_str(), "-C" | "-c") {
            at += 1;
        }
        at += 1;
    }
    if args.get(at).is_none_or(|w| w.text != "apply") {
        return;
    }
    let options = &args[at + 1..];
    let has = |names: &[&str]| options.iter().any(|w| names.contains(&w.text.as_str()));
    let only_reports = has(&["--check", "--stat", "--numstat", "--summary"]) && !has(&["--apply"]);
    let only_index = has(&["--cached"]) && !has(&["--index"]);
    // A patch file on disk: its files are not on the command line.
    let from_file = options.iter().any(|w| !is_option(w) && w.text != "-");
    let Some(patch) = stdin.filter(|_| !only_reports && !only_index && !from_file) else {
        return;
    };
    let strip = strip_count(options).unwrap_or(1);
    diff_writes(patch, Some(strip), has(&["-R", "--reverse"]), found);
}

/// `patch [-pN] [FILE]` of a patch on its standard input: the file it names, or else the files
/// the patch's `+++` lines name, and the lines it adds. `--dry-run` writes nothing.
fn patch(args: &[Word], stdin: Option<&str>, found: &mut Writes) {
    let has = |names: &[&str]| args.iter().any(|w| names.contains(&w.text.as_str()));
    if has(&["--dry-run"]) {
        return;
    }
    let mut operands: Vec<&Word> = Vec::new();
    let mut at = 0;
    let mut patch_file = false;
    while let Some(word) = args.get(at) {
        at += 1;
        match word.text.as_str() {
            "-p" | "--strip" | "-d" | "--directory" | "-D" | "-F" | "-V" | "-z" | "-B" => at += 1,
            "-i" | "--input" => {
                patch_file = true;
                at += 1;
            }
            text if text.starts_with("--input=") => patch_file = true,
            "-o" | "--output" => {
                if let Some(output) = args.get(at).filter(|w| w.names_file()) {
                    found.add_file(&output.text);
                }
                return;
            }
            _ if is_option(word) => {}
            _ => operands.push(word),
        }
    }
    if let Some(file) = operands.first().filter(|w| w.names_file()) {
        found.add_file(&file.text);
    }
    let Some(text) = stdin.filter(|_| !patch_file && operands.len() < 2) else { return };
    if operands.is_empty() {
        diff_writes(text, strip_count(args), has(&["-R", "--reverse"]), found);
    } else {
        found.texts.extend(patch_additions(text, has(&["-R", "--reverse"])));
    }
}

/// `-pN`, `-p N`, `--strip=N`.
fn strip_count(options: &[Word]) -> Option<usize> {
    options.iter().enumerate().find_map(|(at, word)| {
        let text = word.text.as_str();
        let value = match text {
            "-p" | "--strip" => options.get(at + 1)?.text.as_str(),
            _ => text.strip_prefix("--strip=").or_else(|| text.strip_prefix("-p"))?,
        };
        value.parse().ok()
    })
}

/// The files a unified diff changes and the lines it adds. A file is named by its `+++` line,
/// or by its `---` line when it is deleted (`+++ /dev/null`); `strip` leading directories come
/// off as `-pN` says, or else only git's `a/` or `b/`.
fn diff_writes(diff: &str, strip: Option<usize>, reverse: bool, found: &mut Writes) {
    let path_of = |header: &str| -> Option<String> {
        let path = header.split('\t').next().unwrap_or_default().trim();
        if path == "/dev/null" {
            return None;
        }
        let path = match strip {
            Some(strip) => path.split('/').skip(strip).collect::<Vec<_>>().join("/"),
            None => path
                .strip_prefix("b/")
                .or_else(|| path.strip_prefix("a/"))
                .unwrap_or(path)
                .to_owned(),
        };
        (!path.is_empty()).then_some(path)
    };
    let mut previous = "";
    let mut any = false;
    for line in diff.lines() {
        if let (Some(old), Some(new)) = (previous.strip_prefix("--- "), line.strip_prefix("+++ "))
            && let Some(path) = path_of(new).or_else(|| path_of(old))
        {
            found.add_file(&path);
            any = true;
        }
        previous = line;
    }
    if any {
        found.texts.extend(patch_additions(diff, reverse));
    }
}

/// Codex's `apply_patch` with the patch on its standard input or as its argument: the files its
/// headers name and the lines it adds.
fn codex_patch(args: &[Word], stdin: Option<&str>, found: &mut Writes) {
    // A patch in `"$(cat <<'EOF' … EOF)"` is read as written.
    let Some(patch) = stdin.or_else(|| args.first().map(|w| w.text.as_str())) else { return };
    let mut any = false;
    for line in patch.lines() {
        for header in PATCH_HEADERS {
            if let Some(file) = line.strip_prefix(header).map(str::trim)
                && !file.is_empty()
            {
                found.add_file(file);
                any = true;
            }
        }
    }
    if any {
        found.texts.extend(patch_additions(patch, false));
    }
}

/// What a sed script puts in: each substitution's replacement (`s/old/new/`, any delimiter,
/// with `\/` and `\&` unescaped) and the text of `a`, `i` and `c` commands.
fn sed_additions(script: &str) -> Vec<String> {
    let chars: Vec<char> = script.chars().collect();
    let mut texts = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        at = skip_address(&chars, at);
        let Some(&command) = chars.get(at) else { break };
        at += 1;
        match command {
            's' => {
                let Some(&delimiter) = chars.get(at) else { break };
                let (_, after_pattern) = delimited(&chars, at + 1, delimiter);
                let (replacement, after) = delimited(&chars, after_pattern, delimiter);
                texts.push(unescape(&replacement, delimiter));
                at = skip_to_end_of_command(&chars, after);
            }
            'y' => {
                let Some(&delimiter) = chars.get(at) else { break };
                let (_, after_source) = delimited(&chars, at + 1, delimiter);
                let (_, after) = delimited(&chars, after_source, delimiter);
                at = skip_to_end_of_command(&chars, after);
            }
            'a' | 'i' | 'c' => {
                // `a text`, or `a\` then the text on the next line; a trailing `\` continues it.
                if chars.get(at) == Some(&'\\') {
                    at += 1;
                }
                while chars.get(at).is_some_and(|c| c.is_whitespace()) {
                    at += 1;
                }
                let mut text = String::new();
                while let Some(&c) = chars.get(at) {
                    at += 1;
                    match c {
                        '\\' if chars.get(at) == Some(&'\n') => {
                            text.push('\n');
                            at += 1;
                        }
                        '\n' => break,
                        c => text.push(c),
                    }
                }
                if !text.trim().is_empty() {
                    texts.push(text);
                }
            }
            '#' | ':' | 'b' | 't' | 'T' | 'r' | 'R' | 'w' | 'W' | 'e' | 'q' | 'Q' | 'l' | 'L'
            | 'v' => {
                while chars.get(at).is_some_and(|c| *c != '\n' && *c != ';') {
                    at += 1;
                }
            }
            _ => {}
        }
    }
    texts
}

/// Skips whitespace, separators and a sed address (`3`, `$`, `/re/`, `\%re%`, `1,5`, `!`).
fn skip_address(chars: &[char], mut at: usize) -> usize {
    while let Some(&c) = chars.get(at) {
        match c {
            c if c.is_whitespace() || c.is_ascii_digit() => at += 1,
            ';' | ',' | '!' | '$' | '~' | '+' | '{' | '}' => at += 1,
            '/' => at = delimited(chars, at + 1, '/').1,
            '\\' => match chars.get(at + 1) {
                Some(&delimiter) => at = delimited(chars, at + 2, delimiter).1,
                None => at += 1,
            },
            _ => break,
        }
    }
    at
}

/// The text from `at` up to an unescaped `delimiter` (escapes kept), and where after it.
fn delimited(chars: &[char], mut at: usize, delimiter: char) -> (String, usize) {
    let mut text = String::new();
    while let Some(&c) = chars.get(at) {
        at += 1;
        if c == delimiter {
            return (text, at);
        }
        text.push(c);
        if c == '\\'
            && let Some(&escaped) = chars.get(at)
        {
            text.push(escaped);
            at += 1;
        }
    }
    (text, at)
}

/// Skips a command's flags up to its end (`;`, a newline or `}`).
fn skip_to_end_of_command(chars: &[char], mut at: usize) -> usize {
    while chars.get(at).is_some_and(|c| !matches!(c, ';' | '\n' | '}')) {
        at += 1;
    }
    at
}

/// A replacement as the file gets it: `\<delimiter>`, `\&`, `\\` and other escaped punctuation
/// unescaped, `\n` and `\t` as the characters; back-references (`\1`) kept.
fn unescape(text: &str, delimiter: char) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(c) if c == delimiter || !c.is_alphanumeric() => out.push(c),
            Some(c) => {
                out.push('\\');
                out.push(c);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// What Perl code's substitutions put in: the replacement of each `s/old/new/` (any delimiter,
/// bracketing ones as in `s{old}{new}`), unescaped.
fn perl_additions(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut texts = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let starts = chars[at] == 's'
            && (at == 0 || chars[at - 1].is_whitespace() || ";{(~!=,".contains(chars[at - 1]));
        let delimiter = chars
            .get(at + 1)
            .copied()
            .filter(|d| !d.is_alphanumeric() && !d.is_whitespace() && !"_=,;)".contains(*d));
        let (true, Some(open)) = (starts, delimiter) else {
            at += 1;
            continue;
        };
        let (replacement, after) = match closing(open) {
            Some(close) => {
                let after_pattern = bracketed(&chars, at + 2, open, close).1;
                let mut next = after_pattern;
                while chars.get(next).is_some_and(|c| c.is_whitespace()) {
                    next += 1;
                }
                match chars.get(next).copied() {
                    Some(open) => match closing(open) {
                        Some(close) => {
                            let (text, after) = bracketed(&chars, next + 1, open, close);
                            (unescape(&text, close), after)
                        }
                        None => {
                            let (text, after) = delimited(&chars, next + 1, open);
                            (unescape(&text, open), after)
                        }
                    },
                    None => break,
                }
            }
            None => {
                let (_, after_pattern) = delimited(&chars, at + 2, open);
                let (text, after) = delimited(&chars, after_pattern, open);
                (unescape(&text, open), after)
            }
        };
        texts.push(replacement);
        at = after.max(at + 1);
    }
    texts
}

fn closing(open: char) -> Option<char> {
    match open {
        '{' => Some('}'),
        '(' => Some(')'),
        '[' => Some(']'),
        '<' => Some('>'),
        _ => None,
    }
}

/// The text inside a bracket pair whose opening is just before `at`, nested pairs included,
/// and where after the closing one.
fn bracketed(chars: &[char], mut at: usize, open: char, close: char) -> (String, usize) {
    let mut text = String::new();
    let mut depth = 1usize;
    while let Some(&c) = chars.get(at) {
        at += 1;
        if c == '\\' {
            text.push(c);
            if let Some(&escaped) = chars.get(at) {
                text.push(escaped);
                at += 1;
            }
            continue;
        }
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return (text, at);
            }
        }
        text.push(c);
    }
    (text, at)
}

/// Whether a command's output shows a failure, whatever its exit code said: a line where a
/// test runner, a compiler, an interpreter or the shell reports one. Only line-anchored forms
/// that passing runs do not print, so `0 failed` or an `Error` mid-sentence never counts.
pub(super) fn output_failed(output: &str) -> bool {
    // Most outputs hold none of the words, and a search for each (SIMD, nothing to build, as
    // a hook wants) says so sooner than reading them line by line.
    if !FAILURE_WORDS.iter().any(|word| output.contains(word)) {
        return false;
    }
    output.lines().any(|line| line_fails(line.trim_end()))
}

/// Words of which every line [`line_fails`] takes for a failure holds one, so an output
/// without any is no failure. A form of failure added there needs its word here: the test
/// `failures_the_output_shows` reads every form through [`output_failed`].
const FAILURE_WORDS: &[&str] = &[
    "fail",
    "FAIL",
    "error",
    "Error",
    "ERROR",
    "Exception",
    "Traceback",
    "panic",
    "RUST_BACKTRACE=",
    "npm ",
    "not ok",
    "Segmentation fault",
    "not found",
    "can't open file",
    "Node.js v",
    "<shellId: ",
];

fn line_fails(line: &str) -> bool {
    let trimmed = line.trim_start();
    line.starts_with("Traceback (most recent call last)")
        || runner_failure(line)
        || line.starts_with("error:")
        || line.starts_with("error[E")
        || (line.starts_with("thread '") && line.contains(" panicked at "))
        || (line.starts_with("note: ") && line.contains("RUST_BACKTRACE="))
        || line.starts_with("panic: ")
        || line.starts_with("npm ERR!")
        || line.starts_with("npm error")
        || line.starts_with("Exception in thread ")
        || text::is_exception(line)
        || tap_failure(line)
        || counts_failures(trimmed)
        || line.contains("Segmentation fault")
        || not_found(line)
        || compiler_error(line)
        || make_error(line)
        || node_crash(line)
        || nonzero_trailer(trimmed)
}

/// `FAILED …`, `FAIL: test`, `FAIL src/a.test.js`, `--- FAIL: TestX`, a runner's verbose
/// `test x ... FAILED`, and unittest's `FAILED (failures=1)`.
fn runner_failure(line: &str) -> bool {
    let after = |word: &str, next: &[char]| {
        line.strip_prefix(word).is_some_and(|rest| rest.is_empty() || rest.starts_with(next))
    };
    after("FAILED", &[' ', '\t', '(', ':'])
        || after("FAIL", &[' ', '\t', ':'])
        || line.starts_with("--- FAIL")
        || [" ... FAIL", " ... FAILED", " ... ERROR"].iter().any(|end| line.ends_with(end))
}

/// TAP's `not ok 3 - name` (but not a `# TODO` or `# SKIP` one), its `# fail 2`, and node's
/// test runner's `ℹ fail 2`.
fn tap_failure(line: &str) -> bool {
    if let Some(rest) = line.strip_prefix("not ok ") {
        let upper = rest.to_ascii_uppercase();
        return rest.starts_with(|c: char| c.is_ascii_digit())
            && !upper.contains("# TODO")
            && !upper.contains("# SKIP");
    }
    ["# fail ", "ℹ fail "]
        .iter()
        .any(|head| line.strip_prefix(head).is_some_and(|count| is_positive(count.trim())))
}

/// A count of failures above zero as runners sum up: `1 failed, 2 passed`, `2 failing`,
/// `Tests: 1 failed | 3 passed`, `1 passed; 1 failed;`, `(2 errors, 0 warnings)`,
/// `1 error in 0.2s`, bun's `1 fail`. The word must end the count (punctuation, the line's end
/// or `in`), so `2 failed attempts` is prose, not a count.
fn counts_failures(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    if let [count, "fail"] = words.as_slice() {
        return is_positive(count);
    }
    words.windows(2).enumerate().any(|(at, pair)| {
        let count = pair[0].trim_start_matches(['(', '[']);
        let word = pair[1].trim_end_matches([',', ';', ')', ']', '|', ':']);
        let ends = word.len() < pair[1].len()
            || words.get(at + 2).is_none_or(|next| {
                matches!(*next, "in" | "generated" | "during") || next.starts_with(['(', '|', '='])
            });
        is_positive(count)
            && matches!(word, "failed" | "failing" | "failure" | "failures" | "error" | "errors")
            && ends
    })
}

fn is_positive(count: &str) -> bool {
    !count.is_empty()
        && count.chars().all(|c| c.is_ascii_digit())
        && count.chars().any(|c| c != '0')
}

/// The shell could not find the program: `bash: x: command not found`,
/// `zsh: command not found: x`, `sh: 1: x: not found`.
fn not_found(line: &str) -> bool {
    line.ends_with(": command not found")
        || line.contains("sh: command not found: ")
        || ((line.starts_with("sh: ") || line.starts_with("/bin/sh: "))
            && line.ends_with(": not found"))
        || line.contains(": can't open file '")
}

/// A compiler's error at a position: `x.c:3:5: error: …`, `A.java:3: error: …`,
/// `a.ts(3,5): error TS2345: …`, `a.ts:3:5 - error TS2345: …`.
fn compiler_error(line: &str) -> bool {
    let at_position = |marker: &str| {
        line.find(marker).is_some_and(|at| line[..at].ends_with(|c: char| c.is_ascii_digit()))
    };
    at_position(": error: ")
        || at_position(": fatal error: ")
        || line.contains("): error TS")
        || line.contains(" - error TS")
}

/// `make: *** [Makefile:3: test] Error 1`, also from a sub-make (`make[1]: ***`).
fn make_error(line: &str) -> bool {
    let sub_make = line.starts_with("make[") && line.contains("]: *** ");
    (line.starts_with("make: *** ") || sub_make) && line.contains("Error ")
}

/// Node.js names its version on the last line when an uncaught exception ends it.
fn node_crash(line: &str) -> bool {
    line.strip_prefix("Node.js v").is_some_and(|version| {
        !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.')
    })
}

/// A shell tool's own closing line with a non-zero code: `<shellId: 0 completed with exit code
/// 1>`.
fn nonzero_trailer(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("<shellId: ") else { return false };
    let Some((_, code)) = rest.split_once(" completed with exit code ") else { return false };
    code.trim_end_matches('>').trim().parse::<i64>().is_ok_and(|code| code != 0)
}

#[cfg(test)]
mod tests;
