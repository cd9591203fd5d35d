//! Inject: what agent-memory hands back to agents.
//!
//! Three answers, each within its own token budget: the session-start briefing
//! ([`briefing`]), prompt-time recall of the few earlier items that match a prompt strongly
//! ([`prompt`]), and, when a file is read, what earlier sessions did with it ([`file`]). This
//! module owns what each slot is answered with, the rendering of each answer shape, the
//! [`Responder`] the hook calls while its store connection is open, and the brief file
//! ([`brief_file`]) for agents that cannot take injected context at all. Which agent takes which
//! slot at which hook event, and in which shape, is the agent registry's (`adapter::AGENTS`).
//! Everything injected is wrapped in the sentinel of `capture::fence`, which capture strips
//! from whatever agents echo back.
//!
//! Must not: print (the binary does), or fail a hook: every store error becomes no answer.

pub mod brief_file;
pub mod briefing;
pub mod file;
pub mod prompt;
pub mod sign;

pub use crate::adapter::Slot;
use crate::adapter::{self, AnswerShape, PendingTool};
use crate::capture::fence::wrap;
use crate::config::Config;
use crate::event::{Event, EventKind, ToolKind};
use crate::paths::Home;
use crate::project::ProjectIdentity;
use crate::store::injections::{Channel, NewInjection};
use crate::store::recall::{Asking, ItemKind};
use crate::store::{Store, StoreError};

pub use briefing::{
    Briefing, BriefingMemory, CONTEXT_MAX_BYTES, ContextOptions, MemoryKind, TIMELINE_CANDIDATES,
    session_start_context,
};

/// The slot of an agent's event (compared case-insensitively), with the event's exact spelling,
/// as the agent's registry row lists it.
pub fn slot(agent: &str, event: &str) -> Option<(&'static str, Slot)> {
    adapter::find_agent(agent)?.slot(event)
}

/// The hook's answer carrying `context`, in the agent's own protocol; `None` for an event that
/// takes no context.
pub fn answer(agent: &str, event: &str, context: &str) -> Option<String> {
    answer_with(agent, event, context, None)
}

/// [`answer`] with a line for the person (`systemMessage`), for an agent that shows it outside
/// the model's context; any other agent's answer is left as it is.
pub fn answer_with(
    agent: &str,
    event: &str,
    context: &str,
    message: Option<&str>,
) -> Option<String> {
    let spec = adapter::find_agent(agent)?;
    let (event, _) = spec.slot(event)?;
    let mut value = match spec.answer {
        AnswerShape::HookSpecificOutput => serde_json::json!({
            "hookSpecificOutput": { "hookEventName": event, "additionalContext": context }
        }),
        AnswerShape::AdditionalContext => serde_json::json!({ "additionalContext": context }),
        AnswerShape::Context => serde_json::json!({ "context": context }),
    };
    if let (true, Some(message), Some(fields)) =
        (spec.shows_message, message, value.as_object_mut())
    {
        fields.insert("systemMessage".into(), message.into());
    }
    Some(value.to_string())
}

/// What one answer put in front of an agent: each item by its typed id (`o12`, `s3`, `m7`)
/// with the tokens of its line or block, and how many candidates the budget left out. The
/// composers report it ([`briefing::compose`], [`prompt::Recalled`], [`file::file_context`]);
/// the [`Responder`] records it (`store/injections.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Handed {
    pub items: Vec<(String, usize)>,
    pub cut: usize,
}

/// One part of an answer: its context (wrapped), the channel it came by and what it handed.
#[derive(Debug)]
struct Given {
    channel: Channel,
    context: String,
    handed: Handed,
}

impl Given {
    fn new(channel: Channel, (context, handed): (String, Handed)) -> Given {
        Given { channel, context, handed }
    }
}

/// Records what an answer handed, one injection per part; nothing when nothing was handed. A
/// failure is logged and forgotten: the record must never cost the agent its answer.
fn record(
    store: &Store,
    agent: &str,
    session: Option<&str>,
    project_key: Option<&str>,
    given: &[Given],
) {
    let at_ms = crate::time::now_ms();
    let rows: Vec<NewInjection<'_>> = given
        .iter()
        .map(|part| NewInjection {
            at_ms,
            agent,
            session,
            project_key,
            channel: part.channel,
            tokens: crate::tokens::estimate(&part.context),
            items: &part.handed.items,
            cut: part.handed.cut,
        })
        .collect();
    if let Err(err) = store.record_injections(&rows) {
        tracing::debug!(%err, "the injection was not recorded");
    }
}

/// Answers hook events: everything it needs besides the store connection the hook holds.
#[derive(Debug, Clone, Copy)]
pub struct Responder<'a> {
    pub home: &'a Home,
    pub config: &'a Config,
}

impl Responder<'_> {
    /// The answer to a stored event, as the line to print; `None` when the event takes no
    /// context, nothing strong enough is known, or the store cannot be read (the agent then
    /// carries on as it would without agent-memory).
    pub fn stored(
        &self,
        store: &mut Store,
        event: &Event,
        project: &ProjectIdentity,
    ) -> Option<String> {
        let (_, slot) = slot(&event.agent, &event.source_event)?;
        let across_projects = slot == Slot::Prompt
            && crate::project::is_outside_projects(&project.key, &project.root, || {
                store.registered_roots().is_ok_and(|roots| roots.contains(&project.root))
            });
        let asking = Asking {
            project_key: &project.key,
            agent: &event.agent,
            session: &event.session,
            across_projects,
            branch: project.branch.as_deref(),
        };
        let given: Vec<Given> = match slot {
            Slot::SessionStart if event.kind == EventKind::SessionStart => {
                self.briefing(store, &asking, project).into_iter().collect()
            }
            Slot::Prompt if event.kind == EventKind::Prompt => {
                let opening = self
                    .opens_with_first_prompt(store, &asking)
                    .then(|| self.briefing(store, &asking, project));
                let recalled = self.prompt_recall(store, &asking, project, &event.body);
                opening.flatten().into_iter().chain(recalled).collect()
            }
            Slot::FileRead
                if event.kind == EventKind::ToolUse && event.tool_kind == Some(ToolKind::Read) =>
            {
                self.file_context(
                    store,
                    &asking,
                    event.files.first()?,
                    event.cwd.as_deref(),
                    project,
                )
                .into_iter()
                .collect()
            }
            _ => Vec::new(),
        };
        if given.is_empty() {
            return None;
        }
        let context: Vec<&str> = given.iter().map(|part| part.context.as_str()).collect();
        let context = context.join("\n\n");
        // The person sees what the briefing loaded, once, beside it.
        let sign = given
            .iter()
            .find(|part| part.channel == Channel::Briefing)
            .filter(|_| self.config.inject.sign && slot == Slot::SessionStart)
            .and_then(|part| {
                let tokens = crate::tokens::estimate(&part.context);
                sign::line(store, self.home, &part.handed, tokens)
            });
        let line = answer_with(&event.agent, &event.source_event, &context, sign.as_deref())?;
        record(store, &event.agent, Some(&event.session), Some(&project.key), &given);
        Some(line)
    }

    /// Whether a tool call about to run gets an answer: a file read, at an event where the agent
    /// takes context. The hook asks first, to spend nothing on every other tool call.
    pub fn answers_pending(&self, tool: &PendingTool) -> bool {
        self.config.inject.file_context
            && tool.tool_kind == ToolKind::Read
            && !tool.files.is_empty()
            && slot(&tool.agent, &tool.source_event).is_some_and(|(_, s)| s == Slot::FileRead)
    }

    /// The answer to a tool call about to run: what is known about the file it reads.
    pub fn pending(
        &self,
        store: &Store,
        tool: &PendingTool,
        project: &ProjectIdentity,
    ) -> Option<String> {
        if !self.answers_pending(tool) {
            return None;
        }
        let asking = Asking {
            project_key: &project.key,
            agent: &tool.agent,
            session: &tool.session,
            across_projects: false,
            branch: project.branch.as_deref(),
        };
        let given =
            self.file_context(store, &asking, tool.files.first()?, tool.cwd.as_deref(), project)?;
        let line = answer(&tool.agent, &tool.source_event, &given.context)?;
        record(store, &tool.agent, Some(&tool.session), Some(&project.key), &[given]);
        Some(line)
    }

    /// The session-start briefing for the asking session, wrapped.
    fn briefing(
        &self,
        store: &Store,
        asking: &Asking<'_>,
        project: &ProjectIdentity,
    ) -> Option<Given> {
        if !self.config.inject.session_start {
            return None;
        }
        compose_briefing(store, self.home, self.config, project, Some(asking), true)
            .unwrap_or_else(|err| {
                tracing::warn!(%err, "cannot read the session-start briefing");
                None
            })
            .map(|(text, handed)| Given::new(Channel::Briefing, (wrap(&text), handed)))
    }

    /// Whether this agent, which has no session-start slot, is at its session's first prompt.
    fn opens_with_first_prompt(&self, store: &Store, asking: &Asking<'_>) -> bool {
        let has_start =
            adapter::find_agent(asking.agent).is_some_and(|spec| spec.takes(Slot::SessionStart));
        !has_start
            && self.config.inject.session_start
            && store.session_prompts(asking.agent, asking.session).is_ok_and(|n| n <= 1)
    }

    fn prompt_recall(
        &self,
        store: &mut Store,
        asking: &Asking<'_>,
        project: &ProjectIdentity,
        prompt: &str,
    ) -> Option<Given> {
        let settings = &self.config.inject;
        if !settings.prompt_recall || settings.prompt_recall_max_items == 0 {
            return None;
        }
        let options = prompt::RecallOptions {
            min_score: settings.prompt_recall_min_score,
            max_items: settings.prompt_recall_max_items,
            max_tokens: settings.prompt_recall_max_tokens,
            language: self.config.distil.language.clone(),
            time_zone: crate::time::local_zone(),
            name_projects: asking.across_projects,
        };
        // Asked from outside any project about a project by its name: what it did lately.
        if asking.across_projects
            && let Some(recalled) = self.recent_in_named_project(store, prompt, &options)
        {
            return Some(recalled);
        }
        let terms = prompt::content_terms(prompt);
        if prompt::is_trivial(prompt, &terms) {
            return None;
        }
        let df: Vec<usize> = terms
            .iter()
            .map(|term| {
                let query = prompt::match_query(std::slice::from_ref(term)).unwrap_or_default();
                store.term_documents(&query, prompt::DF_CAP)
            })
            .collect::<Result<_, _>>()
            .map_err(|err| tracing::warn!(%err, "prompt recall failed"))
            .ok()?;
        if !prompt::can_recall(&terms, &df) {
            return None;
        }
        let selective = prompt::selective_terms(&terms, &df, settings.prompt_recall_min_score);
        let query = prompt::match_query(&selective)?;
        let candidates = store
            .recall_candidates(asking, &query, prompt::CANDIDATES)
            .map_err(|err| tracing::warn!(%err, "prompt recall failed"))
            .ok()?;
        let candidates = anchored_candidates(store, project, candidates, &options);
        let recalled = prompt::recall(&terms, candidates, &options)?;
        if let Err(err) = store.record_hits(
            recalled.items.iter().map(|(kind, id)| (kind.as_str(), *id)),
            crate::time::now_ms(),
        ) {
            tracing::debug!(%err, "hits not recorded");
        }
        Some(Given::new(Channel::Recall, (recalled.context, recalled.handed)))
    }

    /// The recent work of the project a prompt names (by a word that is its name), as recall.
    fn recent_in_named_project(
        &self,
        store: &mut Store,
        prompt: &str,
        options: &prompt::RecallOptions,
    ) -> Option<Given> {
        let words: Vec<String> = prompt
            // Names are ASCII words, even inside Chinese ("昨天在api项目里").
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
            .map(|w| w.trim_matches('.'))
            .filter(|w| w.len() >= 2)
            .map(str::to_lowercase)
            .collect();
        let read = || -> Result<Option<prompt::Recalled>, crate::store::StoreError> {
            let Some(key) = store.project_named(&words)? else { return Ok(None) };
            let candidates = store.recent_candidates(&key, prompt::CANDIDATES)?;
            Ok(prompt::recent(candidates, options))
        };
        let recalled =
            read().map_err(|err| tracing::warn!(%err, "prompt recall failed")).ok()??;
        if let Err(err) = store.record_hits(
            recalled.items.iter().map(|(kind, id)| (kind.as_str(), *id)),
            crate::time::now_ms(),
        ) {
            tracing::debug!(%err, "hits not recorded");
        }
        Some(Given::new(Channel::Recall, (recalled.context, recalled.handed)))
    }

    fn file_context(
        &self,
        store: &Store,
        asking: &Asking<'_>,
        file: &str,
        cwd: Option<&str>,
        project: &ProjectIdentity,
    ) -> Option<Given> {
        if !self.config.inject.file_context {
            return None;
        }
        let root = project.root.to_str().filter(|r| !r.is_empty());
        let forms = file::path_forms(file, cwd, root);
        let shown = forms.first()?;
        let paths: Vec<&str> = forms.iter().map(String::as_str).collect();
        let mut notes = store
            .file_notes(asking, &paths, file::MAX_NOTES)
            .map_err(|err| tracing::warn!(%err, "file context failed"))
            .ok()?;
        let zh = self.config.distil.language.starts_with("zh");
        let items: Vec<_> = notes.iter().map(|n| (ItemKind::Observation, n.id)).collect();
        let checked = check_anchors(store, project, &items);
        for note in &mut notes {
            note.stale = checked
                .get(&(ItemKind::Observation, note.id))
                .and_then(|a| a.mark(zh, crate::time::local_day));
        }
        file::file_context(shown, &notes, &self.config.distil.language, &crate::time::local_zone())
            .map(|answer| Given::new(Channel::File, answer))
    }
}

/// The anchors of `items` checked against the asking checkout; nothing when the store cannot
/// say (an item is then shown as it is).
fn check_anchors(
    store: &Store,
    project: &ProjectIdentity,
    items: &[(ItemKind, i64)],
) -> std::collections::HashMap<(ItemKind, i64), crate::anchor::Anchors> {
    let project_id = crate::store::memories::project_id(store, &project.key).ok().flatten();
    let checkout = Some(project.root.as_path())
        .filter(|r| !r.as_os_str().is_empty())
        .map(|root| crate::anchor::Checkout { project_id, root });
    // Without a folder (an agent with no directory) nothing is checked rather than all gone.
    let Some(checkout) = checkout else { return Default::default() };
    crate::anchor::check(store, Some(checkout), items, crate::time::now_ms())
}

/// Recall candidates with their anchors checked: one whose file is gone is left out, one
/// whose file changed is marked.
fn anchored_candidates(
    store: &Store,
    project: &ProjectIdentity,
    mut candidates: Vec<crate::store::recall::RecallCandidate>,
    options: &prompt::RecallOptions,
) -> Vec<crate::store::recall::RecallCandidate> {
    let items: Vec<(ItemKind, i64)> =
        candidates.iter().filter(|c| c.kind != ItemKind::Summary).map(|c| (c.kind, c.id)).collect();
    let checked = check_anchors(store, project, &items);
    if checked.is_empty() {
        return candidates;
    }
    let zh = options.language.starts_with("zh");
    candidates.retain_mut(|c| match checked.get(&(c.kind, c.id)) {
        Some(anchors) if anchors.gone() => false,
        Some(anchors) => {
            c.stale = anchors.mark(zh, crate::time::local_day);
            true
        }
        None => true,
    });
    candidates
}

/// Memories a briefing ranks, the most important first; more than a budget could show.
const BRIEFING_MEMORY_CANDIDATES: usize = 200;

/// The session-start briefing of a project as Markdown (not wrapped), as configured, for the
/// checkout `project` describes (its branch's work, its files' anchors); `asking` names a
/// session whose own summary is not "the last session".
pub fn briefing_markdown(
    store: &Store,
    home: &Home,
    config: &Config,
    project: &ProjectIdentity,
    asking: Option<&Asking<'_>>,
) -> Result<Option<String>, StoreError> {
    Ok(compose_briefing(store, home, config, project, asking, true)?.map(|(text, _)| text))
}

/// The session-start briefing of a project as Markdown (not wrapped), as an MCP client asked
/// for it with the `briefing` tool, recorded as handed to `client` (channel `mcp-briefing`).
pub fn briefing_on_request(
    store: &Store,
    home: &Home,
    config: &Config,
    project: &ProjectIdentity,
    client: &str,
) -> Result<Option<String>, StoreError> {
    let Some((text, handed)) = compose_briefing(store, home, config, project, None, true)? else {
        return Ok(None);
    };
    let given = Given::new(Channel::McpBriefing, (text, handed));
    record(store, client, None, Some(&project.key), std::slice::from_ref(&given));
    Ok(Some(given.context))
}

/// The briefing kept in a project's brief file: the session-start briefing, without the
/// person's global memory unless they asked for it there (a file inside a repository travels
/// with it).
pub fn brief_file_markdown(
    store: &Store,
    home: &Home,
    config: &Config,
    project: &ProjectIdentity,
    global: bool,
) -> Result<Option<String>, StoreError> {
    Ok(compose_briefing(store, home, config, project, None, global)?.map(|(text, _)| text))
}

fn compose_briefing(
    store: &Store,
    home: &Home,
    config: &Config,
    project: &ProjectIdentity,
    asking: Option<&Asking<'_>>,
    global: bool,
) -> Result<Option<(String, Handed)>, StoreError> {
    let project_key = project.key.as_str();
    let branch = project.branch.as_deref();
    let mut timeline = store.briefing_timeline(project_key, branch, TIMELINE_CANDIDATES)?;
    let (agent, session) = asking.map_or(("", ""), |a| (a.agent, a.session));
    let last = store.last_summary(project_key, agent, session, branch)?;
    let economics = store.project_economics(project_key)?;
    let language = &config.distil.language;
    let icons: Vec<(String, String)> =
        crate::distil::mode::load(&config.distil.mode, language, Some(&home.modes_dir()))
            .map(|mode| mode.types.into_iter().map(|t| (t.key, t.emoji)).collect())
            .unwrap_or_default();
    let options = ContextOptions::new(config.inject.budget_tokens, language, icons);
    let mut stored = store.briefing_memories(project_key, BRIEFING_MEMORY_CANDIDATES)?;
    if !global {
        stored.retain(|memory| memory.project.is_some());
    }
    let weights = briefing::MemoryWeights::from_config(&config.inject);
    let mut memories = briefing::rank_memories(&stored, &weights, crate::time::now_ms());
    // What rests on a file that is gone is left out; what rests on one that changed is
    // marked, and memory of it yields its place to memory that still holds.
    let items: Vec<(ItemKind, i64)> = timeline
        .iter()
        .map(|t| (ItemKind::Observation, t.item.id))
        .chain(memories.iter().map(|m| (ItemKind::Memory, m.id)))
        .collect();
    let checked = check_anchors(store, project, &items);
    let zh = language.starts_with("zh");
    let mark =
        |kind, id| checked.get(&(kind, id)).map(|a| (a.gone(), a.mark(zh, crate::time::local_day)));
    timeline.retain_mut(|t| match mark(ItemKind::Observation, t.item.id) {
        Some((true, _)) => false,
        Some((false, stale)) => {
            t.stale = stale;
            true
        }
        None => true,
    });
    memories.retain_mut(|m| match mark(ItemKind::Memory, m.id) {
        Some((true, _)) => false,
        Some((false, stale)) => {
            m.stale = stale;
            true
        }
        None => true,
    });
    memories.sort_by_key(|m| m.stale.is_some());
    let briefing =
        Briefing { memories: &memories, last: last.as_ref(), timeline: &timeline, economics };
    Ok(briefing::compose(&briefing, &options))
}

/// Rewrites the brief files the person asked for (`agent-memory brief --write`) that still
/// exist; returns each with whether it changed, or why it could not be written. A brief file
/// nobody asked for here (one a cloned repository brought) is left alone.
pub fn refresh_briefs(
    store: &Store,
    home: &Home,
    config: &Config,
) -> Result<Vec<brief_file::Refreshed>, StoreError> {
    let mut done = Vec::new();
    for kept in store.kept_brief_files()? {
        let path = brief_file::path(&kept.root);
        if !path.is_file() {
            continue;
        }
        // The brief file's own checkout: its branch, its files.
        let found = crate::project::resolve(&kept.root, &[]);
        let project = ProjectIdentity { key: kept.project_key.clone(), ..found };
        let written = brief_file_markdown(store, home, config, &project, kept.global)
            .map_err(brief_file::BriefError::from)
            .and_then(|text| {
                brief_file::write(&kept.root, text.as_deref(), &config.distil.language)
            });
        done.push((path, written));
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every agent's answer at every hook event it registers: the shape of its protocol, or
    /// `-` for none; the context inside comes back byte for byte, in both languages.
    #[test]
    fn answers_follow_each_agents_protocol() {
        use std::fmt::Write as _;
        let (summary, timeline, economics) = briefing::tests::fixture();
        let briefing =
            Briefing { memories: &[], last: Some(&summary), timeline: &timeline, economics };
        let mut tables = Vec::new();
        for language in ["en", "zh-CN"] {
            let options = briefing::tests::options(1500, language);
            let context = session_start_context(&briefing, &options).expect("context");
            let mut out = String::new();
            for spec in crate::adapter::AGENTS {
                for event in spec.captured().map(|(event, _)| event).chain(spec.answered()) {
                    let shape = match answer(spec.name, event, &context) {
                        Some(line) => {
                            let quoted = serde_json::to_string(&context).expect("quote");
                            assert!(line.contains(&quoted), "{line}");
                            line.replace(&quoted, "X")
                        }
                        None => "-".to_owned(),
                    };
                    let _ = writeln!(out, "{} {event}: {shape}", spec.name);
                }
            }
            tables.push(out);
        }
        assert_eq!(tables[0], tables[1], "the same shapes in every language");
        expect_test::expect![[r#"
            claude-code SessionStart: {"hookSpecificOutput":{"additionalContext":X,"hookEventName":"SessionStart"}}
            claude-code UserPromptSubmit: {"hookSpecificOutput":{"additionalContext":X,"hookEventName":"UserPromptSubmit"}}
            claude-code PostToolUse: -
            claude-code PostToolUseFailure: -
            claude-code PreCompact: -
            claude-code Stop: -
            claude-code SessionEnd: -
            claude-code PreToolUse: {"hookSpecificOutput":{"additionalContext":X,"hookEventName":"PreToolUse"}}
            codex SessionStart: {"hookSpecificOutput":{"additionalContext":X,"hookEventName":"SessionStart"}}
            codex UserPromptSubmit: {"hookSpecificOutput":{"additionalContext":X,"hookEventName":"UserPromptSubmit"}}
            codex PostToolUse: -
            codex PreCompact: -
            codex Stop: -
            codex SessionEnd: -
            codex PreToolUse: -
            gemini SessionStart: {"hookSpecificOutput":{"additionalContext":X,"hookEventName":"SessionStart"}}
            gemini BeforeAgent: {"hookSpecificOutput":{"additionalContext":X,"hookEventName":"BeforeAgent"}}
            gemini AfterTool: {"hookSpecificOutput":{"additionalContext":X,"hookEventName":"AfterTool"}}
            gemini AfterAgent: -
            gemini SessionEnd: -
            gemini BeforeTool: -
            opencode session.created: {"context":X}
            opencode chat.message: {"context":X}
            opencode tool.execute.after: -
            opencode session.idle: -
            opencode tool.execute.before: -
            copilot sessionStart: {"additionalContext":X}
            copilot userPromptSubmitted: {"additionalContext":X}
            copilot postToolUse: {"additionalContext":X}
            copilot agentStop: -
            copilot sessionEnd: -
            copilot preToolUse: -
            hermes on_session_start: -
            hermes pre_llm_call: {"context":X}
            hermes post_tool_call: -
            hermes post_llm_call: -
            hermes on_session_end: -
            hermes on_session_finalize: -
            hermes on_memory_write: -
            hermes pre_tool_call: -
        "#]]
        .assert_eq(&tables[0]);
        assert_eq!(answer("someone-else", "SessionStart", "ctx"), None);
        assert_eq!(
            answer("claude-code", "sessionstart", "ctx").as_deref(),
            Some(
                r#"{"hookSpecificOutput":{"additionalContext":"ctx","hookEventName":"SessionStart"}}"#
            ),
            "the agent's own spelling, whatever the hook was given"
        );
    }
}
