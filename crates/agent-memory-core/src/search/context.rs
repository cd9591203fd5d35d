//! What context adds to a candidate's own evidence, as arithmetic over what the store read:
//! its neighbours in its session ([`spread`]) and its session taken together
//! ([`session_shares`]). `store/search.rs` reads which items are next to which and which
//! session each belongs to; this decides what each one adds. Tested without a store.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

use super::rank::{Ranking, neighbour_share};

/// An item next to another in its session: how far (1 or 2), whether after it, and its id.
pub(crate) type Neighbour = (usize, bool, i64);

/// What the neighbours of the `spreading` items (id and own evidence) get from them: each
/// neighbour its share of each item's evidence by distance and side ([`neighbour_share`]; the
/// item right after one in `asking` gets the answer's share), summed over the items it is next
/// to. `next_to` holds each item's neighbours.
pub(crate) fn spread(
    ranking: &Ranking,
    spreading: &[(i64, f64)],
    next_to: &HashMap<i64, Vec<Neighbour>>,
    asking: &HashSet<i64>,
) -> HashMap<i64, f64> {
    let mut gets: HashMap<i64, f64> = HashMap::new();
    for &(id, own) in spreading {
        let asks = asking.contains(&id);
        for &(distance, after, neighbour) in next_to.get(&id).into_iter().flatten() {
            *gets.entry(neighbour).or_default() +=
                neighbour_share(ranking, distance, after, asks) * own;
        }
    }
    gets
}

/// What each session adds to its items: the own evidence of its items (`items`: session and
/// own evidence) summed, over the best session's, times [`Ranking::session_weight`]. Empty when
/// no session holds any evidence.
pub(crate) fn session_shares<S: Hash + Eq>(
    ranking: &Ranking,
    items: impl Iterator<Item = (S, f64)>,
) -> HashMap<S, f64> {
    let mut sessions: HashMap<S, f64> = HashMap::new();
    for (session, own) in items {
        *sessions.entry(session).or_default() += own;
    }
    let best = sessions.values().copied().fold(0.0_f64, f64::max);
    if best <= 0.0 {
        return HashMap::new();
    }
    for share in sessions.values_mut() {
        *share = ranking.session_weight * *share / best;
    }
    sessions
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranking() -> Ranking {
        Ranking {
            neighbour_weight: 0.5,
            answer_weight: 1.0,
            session_weight: 0.1,
            ..Ranking::default()
        }
    }

    #[test]
    fn an_answer_gets_all_of_its_questions_evidence_and_other_neighbours_a_share() {
        let next_to = HashMap::from([
            (1, vec![(1, true, 2), (2, true, 3), (1, false, 0)]),
            (5, vec![(1, true, 6)]),
        ]);
        let gets = spread(&ranking(), &[(1, 0.8), (5, 0.4)], &next_to, &HashSet::from([1]));
        assert_eq!(gets[&2], 0.8, "the answer right after the question");
        assert!((gets[&3] - 0.2).abs() < 1e-9, "two after it: half the neighbour weight");
        assert!((gets[&0] - 0.4).abs() < 1e-9, "the one before it");
        assert!((gets[&6] - 0.2).abs() < 1e-9, "after an item that asks nothing");
    }

    #[test]
    fn a_neighbour_of_two_items_gets_from_both() {
        let next_to = HashMap::from([(1, vec![(1, true, 2)]), (3, vec![(1, false, 2)])]);
        let gets = spread(&ranking(), &[(1, 0.6), (3, 0.2)], &next_to, &HashSet::new());
        assert!((gets[&2] - 0.4).abs() < 1e-9);
    }

    #[test]
    fn the_session_holding_the_most_evidence_adds_the_whole_weight() {
        let items = [("a", 0.5), ("a", 0.5), ("b", 0.25)].into_iter();
        let shares = session_shares(&ranking(), items);
        assert!((shares["a"] - 0.1).abs() < 1e-9);
        assert!((shares["b"] - 0.025).abs() < 1e-9);
        assert!(session_shares(&ranking(), [("a", 0.0)].into_iter()).is_empty());
    }
}
