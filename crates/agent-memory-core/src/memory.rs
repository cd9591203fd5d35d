//! Changing long-term memory: here is who asks and what they want done to a memory (remember
//! it, forget it or bring it back, approve, reject or edit a candidate), do it by one set of
//! rules and say what became of it.
//!
//! Every front end translates into a [`Writer`] call: the CLI (`remember`, `forget`,
//! `review`), the MCP tools, the HTTP review queue and the vault sync; the work pass places
//! what it distils and what people said through [`crate::promote`], which writes through the
//! same rows. The rules that used to drift between them live here once:
//!
//! - text from a person or an agent is sanitized like captured text before it is kept, whether
//!   it is remembered or an edit;
//! - a memory can be edited while it is a candidate or active; a forgotten, rejected or
//!   superseded one is restored first;
//! - forgetting a memory that replaced another brings the other back, so undoing a change of
//!   mind undoes it whole; restoring it retires the other again;
//! - an agent (through its tools) is not the person: what it remembers waits for review as a
//!   candidate of the project it works in, with its name as provenance, and it can forget only
//!   what it wrote itself, unless `[memory] trust_agents` says otherwise.
//!
//! Must not: print, or decide what is worth remembering (that is [`crate::promote`]).

use crate::promote::{self, Placed, Statement};
use crate::store::Store;
use crate::store::memories::{self, Approved, Edit, Kind, Memory, MemoryError, Status, Tier};

/// Who asks for a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Actor {
    /// The person: the CLI, the viewer behind its token, the vault they edit.
    Person,
    /// An agent through its memory tools, by name (`claude-code`, `codex`).
    Agent(String),
}

/// Where a remembered statement belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every project's (L3).
    Global,
    /// This project's (L2), by its row id.
    Project(i64),
}

/// A statement to remember.
#[derive(Debug, Clone, PartialEq)]
pub struct Remember {
    pub text: String,
    /// Default: a preference when global, else a fact.
    pub kind: Option<Kind>,
    /// 1 to 10; default 7.
    pub importance: Option<u8>,
    pub scope: Scope,
}

/// What [`Writer::remember`] did, with the memory it concerns.
#[derive(Debug, Clone, PartialEq)]
pub struct Remembered {
    pub placed: Placed,
    pub memory: Memory,
    /// Kept as a candidate for review rather than as memory (an agent's statement).
    pub for_review: bool,
}

/// The most an agent's own statement is worth before review.
const AGENT_IMPORTANCE_CAP: u8 = 7;

/// Changes long-term memory on one store, by one set of rules.
#[derive(Debug)]
pub struct Writer<'s> {
    store: &'s mut Store,
    settings: promote::Settings,
    /// Whether agents' writes count as the person's.
    trust_agents: bool,
    now_ms: i64,
}

impl<'s> Writer<'s> {
    pub fn new(
        store: &'s mut Store,
        settings: promote::Settings,
        trust_agents: bool,
        now_ms: i64,
    ) -> Writer<'s> {
        Writer { store, settings, trust_agents, now_ms }
    }

    /// A writer by the configuration's rules (`[promote]`: how statements are compared, and
    /// whether agents are trusted), as the CLI, MCP and the HTTP review queue use it.
    pub fn configured(
        store: &'s mut Store,
        config: &crate::config::Config,
        now_ms: i64,
    ) -> Writer<'s> {
        let settings =
            promote::Settings::from_config(&config.promote, config.search.embedding_model());
        Writer::new(store, settings, config.promote.trust_agents, now_ms)
    }

    fn trusted(&self, actor: &Actor) -> bool {
        matches!(actor, Actor::Person) || self.trust_agents
    }

    /// Remembers a statement: sanitized, merged into a near-duplicate, or stored as the
    /// successor of the decision it replaces. The person's goes straight into memory; an
    /// agent's waits for review in its project, at most [`AGENT_IMPORTANCE_CAP`] important.
    pub fn remember(&mut self, actor: &Actor, what: Remember) -> Result<Remembered, MemoryError> {
        let trusted = self.trusted(actor);
        let kind = what.kind.unwrap_or(match what.scope {
            Scope::Global => Kind::Preference,
            Scope::Project(_) => Kind::Fact,
        });
        let mut importance = memories::check_importance(i64::from(what.importance.unwrap_or(7)))?;
        let origin = match actor {
            Actor::Person => "remembered".to_owned(),
            Actor::Agent(name) => name.clone(),
        };
        if !trusted {
            importance = importance.min(AGENT_IMPORTANCE_CAP);
        }
        let (tier, project_id) = match (what.scope, trusted) {
            (Scope::Global, true) => (Tier::L3, None),
            (Scope::Project(id), true) => (Tier::L2, Some(id)),
            // An agent's statement never reaches beyond the project it works in on its own.
            (Scope::Project(id), false) => (Tier::L1, Some(id)),
            (Scope::Global, false) => (Tier::L1, None),
        };
        let statement = Statement {
            kind,
            text: what.text,
            importance,
            sources: Vec::new(),
            origin,
            replaces: Vec::new(),
        };
        let placed =
            promote::place(self.store, &statement, project_id, tier, &self.settings, self.now_ms)?;
        let id = match placed {
            Placed::New { id, .. } | Placed::Merged { into: id } | Placed::Dropped { like: id } => {
                id
            }
        };
        let memory = memories::get(self.store, id)?.ok_or(MemoryError::NotFound(id))?;
        Ok(Remembered { placed, memory, for_review: tier == Tier::L1 })
    }

    /// Forgets a memory: never searched or injected again, kept so [`Writer::restore`] undoes
    /// it. The memory it replaced, if any, is current again. An agent that is not trusted may
    /// forget only what it wrote.
    pub fn forget(&mut self, actor: &Actor, id: i64) -> Result<Memory, MemoryError> {
        let memory = memories::get(self.store, id)?.ok_or(MemoryError::NotFound(id))?;
        if let Actor::Agent(name) = actor
            && !self.trusted(actor)
            && memory.origin != *name
        {
            return Err(MemoryError::NotYours { id, agent: name.clone() });
        }
        if memory.status == Status::Forgotten {
            return Ok(memory);
        }
        let forgotten = memories::forget(self.store, id, self.now_ms)?;
        if memory.status == Status::Active
            && let Some(old) = memory.supersedes
        {
            memories::reinstate(self.store, old, id, self.now_ms)?;
        }
        Ok(forgotten)
    }

    /// Undoes a forget or a reject; a memory that replaced another replaces it again.
    pub fn restore(&mut self, id: i64) -> Result<Memory, MemoryError> {
        let restored = memories::restore(self.store, id, self.now_ms)?;
        if restored.status == Status::Active
            && let Some(old) = restored.supersedes
        {
            memories::supersede_by(self.store, old, id, self.now_ms)?;
        }
        Ok(restored)
    }

    /// Approves a candidate into project memory, or global memory when `global`.
    pub fn approve(&mut self, id: i64, global: bool) -> Result<Approved, MemoryError> {
        memories::approve(self.store, id, global, self.now_ms)
    }

    /// Rejects a candidate: it stays, so promotion does not offer it again.
    pub fn reject(&mut self, id: i64) -> Result<Memory, MemoryError> {
        memories::reject(self.store, id, self.now_ms)
    }

    /// Edits a candidate's or an active memory's text (sanitized first), kind or importance.
    pub fn edit(&mut self, id: i64, change: Edit) -> Result<Memory, MemoryError> {
        let memory = memories::get(self.store, id)?.ok_or(MemoryError::NotFound(id))?;
        if !matches!(memory.status, Status::Candidate | Status::Active) {
            return Err(MemoryError::State {
                id,
                status: memory.status.as_str(),
                wanted: "candidates and active memories (restore it first with `agent-memory forget --undo`)",
            });
        }
        let text = change
            .text
            .as_deref()
            .map(|text| memories::check_text(&crate::capture::sanitize_text(text)))
            .transpose()?;
        memories::edit(self.store, id, &Edit { text, ..change }, self.now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::ProjectIdentity;

    fn project(store: &mut Store) -> i64 {
        let identity = ProjectIdentity {
            key: "path:/w/app".into(),
            root: "/w/app".into(),
            name: "app".into(),
            origin: None,
            branch: None,
        };
        memories::ensure_project(store, &identity).expect("project")
    }

    fn writer(store: &mut Store) -> Writer<'_> {
        Writer::new(store, promote::Settings::default(), false, 10)
    }

    #[test]
    fn an_agent_proposes_and_forgets_only_its_own() {
        let mut store = Store::open_in_memory().expect("store");
        let app = project(&mut store);
        let mine = writer(&mut store)
            .remember(
                &Actor::Person,
                Remember {
                    text: "Releases are cut on Tuesdays".into(),
                    kind: None,
                    importance: None,
                    scope: Scope::Project(app),
                },
            )
            .expect("person");
        assert_eq!((mine.memory.tier, mine.memory.status), (Tier::L2, Status::Active));
        let codex = Actor::Agent("codex".into());
        let theirs = writer(&mut store)
            .remember(
                &codex,
                Remember {
                    text: "Always deploy with --force".into(),
                    kind: Some(Kind::Convention),
                    importance: Some(10),
                    scope: Scope::Global,
                },
            )
            .expect("agent");
        assert!(theirs.for_review);
        assert_eq!((theirs.memory.tier, theirs.memory.importance), (Tier::L1, 7));
        assert_eq!(theirs.memory.origin, "codex");
        // A candidate of no project belongs to every project once approved.
        let approved = writer(&mut store).approve(theirs.memory.id, false).expect("approve");
        assert_eq!(approved.memory.tier, Tier::L3);
        writer(&mut store).forget(&Actor::Person, theirs.memory.id).expect("forget");
        let theirs = writer(&mut store)
            .remember(
                &codex,
                Remember {
                    text: "Deploys go out on Fridays".into(),
                    kind: Some(Kind::Fact),
                    importance: None,
                    scope: Scope::Global,
                },
            )
            .expect("agent");
        let refused = writer(&mut store).forget(&codex, mine.memory.id).expect_err("not its own");
        assert!(refused.to_string().contains("codex"), "{refused}");
        writer(&mut store).forget(&codex, theirs.memory.id).expect("its own");
    }

    #[test]
    fn forgetting_a_successor_brings_back_what_it_replaced() {
        let mut store = Store::open_in_memory().expect("store");
        let app = project(&mut store);
        let decide = |store: &mut Store, text: &str| {
            writer(store)
                .remember(
                    &Actor::Person,
                    Remember {
                        text: text.into(),
                        kind: Some(Kind::Decision),
                        importance: None,
                        scope: Scope::Project(app),
                    },
                )
                .expect("remember")
        };
        let old = decide(&mut store, "Use a pool of 5 database connections");
        let new = decide(&mut store, "Use a pool of 8 database connections");
        assert_eq!(new.placed, Placed::New { id: new.memory.id, supersedes: Some(old.memory.id) });
        let status =
            |store: &Store, id| memories::get(store, id).expect("get").expect("row").status;
        assert_eq!(status(&store, old.memory.id), Status::Superseded);
        writer(&mut store).forget(&Actor::Person, new.memory.id).expect("forget");
        assert_eq!(status(&store, old.memory.id), Status::Active);
        writer(&mut store).restore(new.memory.id).expect("restore");
        assert_eq!(status(&store, old.memory.id), Status::Superseded);
        assert_eq!(status(&store, new.memory.id), Status::Active);
    }

    #[test]
    fn edits_are_sanitized_and_only_of_live_memory() {
        let mut store = Store::open_in_memory().expect("store");
        let app = project(&mut store);
        let kept = writer(&mut store)
            .remember(
                &Actor::Person,
                Remember {
                    text: "The staging host is staging.internal".into(),
                    kind: None,
                    importance: None,
                    scope: Scope::Project(app),
                },
            )
            .expect("remember");
        let id = kept.memory.id;
        let key = "AKIA".to_owned() + "IOSFODNN7EXAMPLE";
        let edited = writer(&mut store)
            .edit(id, Edit { text: Some(format!("Staging uses key {key}")), ..Edit::default() })
            .expect("edit");
        assert!(!edited.text.contains(&key), "{}", edited.text);
        writer(&mut store).forget(&Actor::Person, id).expect("forget");
        let refused = writer(&mut store)
            .edit(id, Edit { importance: Some(3), ..Edit::default() })
            .expect_err("forgotten");
        assert!(refused.to_string().contains("restore"), "{refused}");
    }
}
