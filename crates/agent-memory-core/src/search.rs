//! Search policy, apart from the store: what a query says, how one search runs and how what the
//! store found ranks. [`query`] reads what a query names; [`run`] runs a query with its models
//! beside the store's channels; [`rank`] holds the ranking as pure functions. `store/search.rs`
//! keeps the SQL that finds candidates and their context, and calls [`rank`].

pub mod query;
pub mod rank;
pub mod run;
