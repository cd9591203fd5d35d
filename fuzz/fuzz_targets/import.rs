//! Any bytes as an export file: import reports bad lines as errors, never panics, and what it
//! stores is sanitized.
#![no_main]

use agent_memory_core::capture;
use agent_memory_core::store::Store;
use agent_memory_core::store::transfer::ImportTrust;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Either trust, by the length of the input: one store per run keeps runs fast.
    let trust =
        if data.len() % 2 == 0 { ImportTrust::OwnExports } else { ImportTrust::Everything };
    let mut store = Store::open_in_memory().expect("store");
    let mut input = data;
    let clean = |t: &str| capture::sanitize_text(t).into_owned();
    let _ = store.import(&mut input, &capture::sanitize_event, &clean, trust);
});
