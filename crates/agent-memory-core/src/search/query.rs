//! What a query says beyond its words: the agents, projects, teammates and files it names.
//! Pure text work, tested without a store; `store/search.rs` lifts the items a query names
//! ([`super::rank::Ranking::named_weight`]).

use crate::store::search::SearchHit;

/// The words of a query that may name an agent or a project: split on what cannot be part of
/// such a name and where Latin text meets CJK text (`codex修改了什么` names `codex`),
/// lowercased, a possessive `'s` dropped ("Caroline's" names `caroline`), each with the agent
/// it names (an alias gives the agent's own name: `claude` is `claude-code`).
pub(crate) struct NamedIn {
    words: Vec<(String, String)>,
}

impl NamedIn {
    pub(crate) fn new(text: &str) -> NamedIn {
        let words = text
            .split(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '\'' | '’')))
            .flat_map(ascii_runs)
            .map(|w| {
                let w = w.trim_matches(|c: char| matches!(c, '.' | '\'' | '’' | '-' | '_'));
                let w = w.strip_suffix("'s").or_else(|| w.strip_suffix("’s")).unwrap_or(w);
                w.to_lowercase()
            })
            .filter(|w| !w.is_empty() && !crate::text::is_stop_word(w))
            .map(|w| (crate::adapter::canonical_agent(&w), w))
            .collect();
        NamedIn { words }
    }

    /// The words of the query that look like file names: a name, a dot and a short extension
    /// (`config.rs`, `README.md`), not a number (`1.2`).
    pub(crate) fn files(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(|(_, word)| word.as_str()).filter(|word| {
            word.rsplit_once('.').is_some_and(|(stem, ext)| {
                !stem.is_empty()
                    && (1..=5).contains(&ext.len())
                    && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    && !word.chars().all(|c| c.is_ascii_digit() || c == '.')
            })
        })
    }

    /// Whether a word of the query is the hit's agent or its project. A teammate's item carries
    /// its member and agent (`Alice Liddell, codex`): the agent or a word of the member's name
    /// (`alice`) names it.
    pub(crate) fn names(&self, hit: &SearchHit) -> bool {
        let project = hit.project.as_deref().map(str::to_lowercase);
        let by = |name: &str| {
            hit.agent.eq_ignore_ascii_case(name)
                || hit.agent.split([',', ' ']).any(|part| part.eq_ignore_ascii_case(name))
        };
        self.words
            .iter()
            .any(|(agent, word)| by(agent) || by(word) || project.as_deref() == Some(word.as_str()))
    }
}

/// `word` cut where ASCII text meets other text: `codex修改` is `codex` and `修改`.
fn ascii_runs(word: &str) -> Vec<&str> {
    let mut runs = Vec::new();
    let mut start = 0;
    let mut ascii = None;
    for (at, c) in word.char_indices() {
        if ascii.is_some_and(|a| a != c.is_ascii()) {
            runs.push(&word[start..at]);
            start = at;
        }
        ascii = Some(c.is_ascii());
    }
    runs.push(&word[start..]);
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(agent: &str, project: Option<&str>) -> SearchHit {
        SearchHit {
            agent: agent.into(),
            project: project.map(str::to_owned),
            item_type: "change".into(),
            ..SearchHit::bare("observation", 1)
        }
    }

    #[test]
    fn a_query_names_an_agent_a_teammate_or_a_project() {
        let asked = NamedIn::new("what did Claude and alice's codex change in Billing");
        assert!(asked.names(&hit("claude-code", None)));
        assert!(asked.names(&hit("Alice Liddell, gemini", None)));
        assert!(asked.names(&hit("Bob Ross, codex", None)));
        assert!(asked.names(&hit("opencode", Some("billing"))));
        assert!(!asked.names(&hit("Bob Ross, gemini", Some("shop"))));
        let files = NamedIn::new("why did src/config.rs change in 1.2, see README.md.");
        assert_eq!(files.files().collect::<Vec<_>>(), ["config.rs", "readme.md"]);
    }
}
