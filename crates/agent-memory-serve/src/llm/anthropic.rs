//! The Anthropic Messages API (`POST /v1/messages`): one attempt, text and token counts out.
//!
//! Must not: retry, budget, or log the key — the distiller in core does the rest, and the key
//! lives only in the `x-api-key` header.

use std::time::Duration;

use serde_json::{Value, json};

use super::http::{self, join, unexpected};
use super::{Completion, Transport, TransportError};

const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const DEFAULT_MODEL: &str = "claude-haiku-4-5";
const API_VERSION: &str = "2023-06-01";
/// Room for a batch's observations as JSON; the prompt asks for few and short ones.
const MAX_TOKENS: u32 = 2048;

/// Completions from Anthropic's Messages API.
pub struct AnthropicTransport {
    agent: ureq::Agent,
    url: String,
    model: String,
    key: String,
}

impl std::fmt::Debug for AnthropicTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is left out on purpose: a Debug print must never leak it.
        f.debug_struct("AnthropicTransport")
            .field("url", &self.url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl AnthropicTransport {
    /// Empty `base_url` and `model` mean the public endpoint and the default model.
    pub fn new(base_url: &str, model: &str, key: String, timeout: Duration) -> AnthropicTransport {
        let model = if model.trim().is_empty() { DEFAULT_MODEL } else { model.trim() };
        AnthropicTransport {
            agent: http::agent(timeout),
            url: join(base_url, DEFAULT_BASE_URL, "/v1/messages"),
            model: model.to_owned(),
            key,
        }
    }
}

impl Transport for AnthropicTransport {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn complete(&self, system: &str, user: &str) -> Result<Completion, TransportError> {
        let body = json!({
            "model": self.model,
            "max_tokens": MAX_TOKENS,
            "system": system,
            "messages": [{ "role": "user", "content": user }],
        });
        let headers = [("x-api-key", self.key.as_str()), ("anthropic-version", API_VERSION)];
        let answer = http::post_json(&self.agent, &self.url, &headers, &body, Some(&self.key))?;
        parse(&answer)
    }
}

fn parse(answer: &Value) -> Result<Completion, TransportError> {
    let blocks = answer
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| unexpected("anthropic", "content"))?;
    // Only text blocks carry the answer; others (thinking, tool use) are not for us.
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str).is_none_or(|t| t == "text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    if texts.is_empty() {
        return Err(unexpected("anthropic", "text content"));
    }
    let usage = |field: &str| answer.pointer(&format!("/usage/{field}")).and_then(Value::as_u64);
    Ok(Completion {
        text: texts.concat(),
        input_tokens: usage("input_tokens").unwrap_or(0),
        output_tokens: usage("output_tokens").unwrap_or(0),
    })
}
