//! Search policy, apart from the store: what a search weighs and how it ranks what the store
//! found. [`rank`] holds the ranking as pure functions; `store/search.rs` keeps the SQL that
//! finds candidates and their context, and calls it.

pub mod rank;
