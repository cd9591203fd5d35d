//! Redaction cost on the hook path: building the [`Redactor`] (the keyword index every hook
//! process builds once), the first `redact` of a fresh redactor (which compiles the regexes its
//! keywords wake), and `redact` once warm, on a typical 4 KB tool output, on 4 KB without any
//! keyword, and on 4 KB holding a dozen secrets.
//!
//! `cargo bench -p agent-memory-core --bench redact` (release profile). `BENCH_RUNS` (default
//! 2000) sets the runs per figure; each figure is p50 / p95 over them. Every run of a cold
//! figure builds a new redactor, as a new hook process does.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use agent_memory_core::capture::redact::{Redactor, rules};
use regex_automata::meta;
use regex_automata::util::syntax;

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let tool_output = tool_output();
    let plain = plain_output();
    let secrets = with_secrets();
    println!(
        "rules: {}; keywords: {}; texts: tool output {} B, no keyword {} B, secrets {} B",
        rules().len(),
        rules().iter().map(|rule| rule.keywords.len()).sum::<usize>(),
        tool_output.len(),
        plain.len(),
        secrets.len()
    );
    {
        let redactor = Redactor::new();
        let (_, found) = redactor.redact(&plain);
        let (_, in_tool) = redactor.redact(&tool_output);
        let (_, in_secrets) = redactor.redact(&secrets);
        println!(
            "redacted: no keyword {found}, tool output {in_tool}, secrets {in_secrets}; \
             rules compiled by the three: {}",
            redactor.compiled_rule_count()
        );
    }

    compile_costs(&[("tool output", &tool_output), ("secrets", &secrets)]);

    report("Redactor::new", runs, || {
        black_box(Redactor::new());
    });
    for (name, text) in
        [("no keyword", &plain), ("tool output", &tool_output), ("secrets", &secrets)]
    {
        report(&format!("new + first redact, {name}"), runs.min(300), || {
            let redactor = Redactor::new();
            black_box(redactor.redact(black_box(text)));
        });
        let redactor = Redactor::new();
        redactor.redact(text);
        report(&format!("warm redact, {name}"), runs, || {
            black_box(redactor.redact(black_box(text)));
        });
    }
}

/// The rules each text wakes (one of their keywords occurs in it) and what compiling each of
/// their regexes costs, the share of a first `redact` that a long-lived process would not pay:
/// as the redactor compiles them for texts up to 16 KB (no prefilter), and with the prefilter the
/// engine would pick.
fn compile_costs(texts: &[(&str, &str)]) {
    let time = |pattern: &str, prefilter: bool| {
        let mut times: Vec<f64> = (0..7)
            .map(|_| {
                let started = Instant::now();
                let built = meta::Builder::new()
                    .configure(meta::Config::new().auto_prefilter(prefilter))
                    .syntax(syntax::Config::new().unicode(false))
                    .build(pattern);
                black_box(built.is_ok());
                started.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times[3]
    };
    for (name, text) in texts {
        let lower = text.to_lowercase();
        let mut woken: Vec<(f64, f64, &str)> = rules()
            .iter()
            .filter(|rule| rule.keywords.iter().any(|keyword| lower.contains(keyword)))
            .map(|rule| (time(rule.pattern, false), time(rule.pattern, true), rule.name))
            .collect();
        woken.sort_by(|a, b| b.0.total_cmp(&a.0));
        let total: f64 = woken.iter().map(|(micros, _, _)| micros).sum();
        let with_prefilters: f64 = woken.iter().map(|(_, micros, _)| micros).sum();
        let shown: Vec<String> =
            woken.iter().map(|(micros, _, rule)| format!("{rule} {micros:.0}")).collect();
        println!(
            "{name} wakes {} rules, compiling {total:.0} µs ({with_prefilters:.0} µs with \
             prefilters): {}",
            woken.len(),
            shown.join(", ")
        );
    }
}

/// Times `run` `runs` times after a short warm-up and prints p50 / p95.
fn report(name: &str, runs: usize, mut run: impl FnMut()) {
    for _ in 0..runs.min(20) {
        run();
    }
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .collect();
    times.sort();
    let at = |p: f64| times[((times.len() - 1) as f64 * p) as usize].as_secs_f64() * 1e6;
    println!("{name:<36} p50 {:>9.1} µs   p95 {:>9.1} µs", at(0.50), at(0.95));
}

/// About 4 KB of what a Read of a source file returns: numbered lines, code that names tokens,
/// URLs and keys without holding any.
fn tool_output() -> String {
    let source = r#"//! HTTP client for the billing service.
use std::time::Duration;

use crate::config::Settings;

/// Builds a client that authenticates with the token from the settings.
pub struct Client {
    base_url: String,
    token: Option<String>,
    timeout: Duration,
}

impl Client {
    pub fn new(settings: &Settings) -> Self {
        let token = settings.api_token.clone();
        let base_url = format!("https://{}/v2", settings.host);
        Client { base_url, token, timeout: Duration::from_secs(30) }
    }

    pub fn invoices(&self, customer_id: &str) -> Result<Vec<Invoice>, Error> {
        let url = format!("{}/customers/{customer_id}/invoices", self.base_url);
        let mut request = ureq::get(&url).timeout(self.timeout);
        if let Some(token) = &self.token {
            request = request.set("Authorization", &format!("Bearer {token}"));
        }
        let response = request.call().map_err(Error::Http)?;
        let page: Page<Invoice> = response.into_json().map_err(Error::Decode)?;
        Ok(page.items)
    }

    /// Refreshes the access token when the server says it expired.
    fn refresh(&mut self, auth: &AuthConfig) -> Result<(), Error> {
        let body = serde_json::json!({ "client_id": auth.client_id, "grant_type": "refresh_token" });
        let response = ureq::post(&auth.token_url).send_json(body).map_err(Error::Http)?;
        let grant: Grant = response.into_json().map_err(Error::Decode)?;
        self.token = Some(grant.access_token);
        Ok(())
    }
}

#[derive(Debug, serde::Deserialize)]
struct Page<T> {
    items: Vec<T>,
    next: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_the_base_url() {
        let settings = Settings { host: "billing.internal".into(), api_token: None };
        let client = Client::new(&settings);
        assert_eq!(client.base_url, "https://billing.internal/v2");
        assert!(client.token.is_none());
    }
}
"#;
    let mut out = String::new();
    for (n, line) in source.lines().cycle().take(120).enumerate() {
        out.push_str(&format!("{:>6}→{line}\n", n + 1));
        if out.len() >= 4096 {
            break;
        }
    }
    out
}

/// About 4 KB of test-runner output with none of the table's keywords.
fn plain_output() -> String {
    let mut out = String::from("   Compiling billing v0.3.1 (/home/me/src/billing)\n");
    out.push_str("    Finished test profile [unoptimized + debuginfo] target(s) in 4.21s\n");
    out.push_str("     Running unittests src/lib.rs (target/debug/deps/billing-3f2a9c1e)\n\n");
    out.push_str("running 64 tests\n");
    let mut n = 0;
    while out.len() < 4096 {
        n += 1;
        out.push_str(&format!("test invoices::tests::rounds_line_{n}_totals_to_cents ... ok\n"));
    }
    out.push_str("\ntest result: ok. 64 passed; 0 failed; 0 ignored; finished in 0.03s\n");
    out
}

/// About 4 KB of a command's output with a dozen secrets of different kinds, built at run time.
fn with_secrets() -> String {
    let tail = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    let mut out = String::new();
    let lines = [
        format!("export GITHUB_TOKEN=ghp_{}", &tail[..36]),
        format!("AWS_ACCESS_KEY_ID=AKIA{}", "QWERTYUIOPASDFGH"),
        format!("ANTHROPIC_API_KEY=sk-ant-api03-{tail}{tail}"),
        format!("SLACK=xoxb-123456789012-1234567890123-{}", &tail[..24]),
        format!("DATABASE_URL=postgres://app:{}@db:5432/app", &tail[..16]),
        format!("VAULT_TOKEN=hvs.{}", &tail[..24]),
        format!("mysql -u root -p{} billing", &tail[..12]),
        format!("curl -H 'Authorization: Bearer {}' https://api", &tail[..32]),
        format!("DB_PASSWORD=Summer.{}", &tail[..8]),
        format!("{{\"password\": \"{}\"}}", &tail[..14]),
    ];
    let filler = "2026-12-03T10:00:00Z INFO request served in 12 ms path=/v2/invoices status=200\n";
    let mut at = 0;
    while out.len() < 4096 {
        out.push_str(filler);
        out.push_str(&lines[at % lines.len()]);
        out.push('\n');
        at += 1;
    }
    out
}
