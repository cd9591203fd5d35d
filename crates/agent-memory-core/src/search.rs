//! Search policy, apart from the store: what a query says, how one search runs and how what the
//! store found ranks. [`query`] reads what a query names; [`run`] runs a query with its models
//! beside the store's channels; [`plan`] says what a query asks and how much each channel reads;
//! [`context`] what a candidate's neighbours and session add to it;
//! [`rank`] holds the ranking as pure functions. `store/search.rs`
//! keeps the SQL that finds candidates and their context, and calls [`rank`].

pub mod context;
pub mod plan;
pub mod query;
pub mod rank;
pub mod run;
