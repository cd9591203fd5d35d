//! OpenAI-compatible chat completions (`POST {base}/chat/completions`): OpenAI itself and the
//! local servers that speak the same format (Ollama, llama.cpp, vLLM). One attempt.
//!
//! Must not: retry, budget, or log the key — the distiller in core does the rest, and the key
//! lives only in the `authorization` header.

use std::time::Duration;

use serde_json::{Value, json};

use super::http::{self, join, unexpected};
use super::{Completion, Transport, TransportError};

const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// Completions from an OpenAI-compatible chat-completions endpoint.
pub struct OpenAiTransport {
    agent: ureq::Agent,
    url: String,
    model: String,
    /// `None` for a local server that takes no key: then no `authorization` header is sent.
    key: Option<String>,
}

impl std::fmt::Debug for OpenAiTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is left out on purpose: a Debug print must never leak it.
        f.debug_struct("OpenAiTransport")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("has_key", &self.key.is_some())
            .finish_non_exhaustive()
    }
}

impl OpenAiTransport {
    /// Empty `base_url` and `model` mean OpenAI's public endpoint and the default model.
    pub fn new(
        base_url: &str,
        model: &str,
        key: Option<String>,
        timeout: Duration,
    ) -> OpenAiTransport {
        let model = if model.trim().is_empty() { DEFAULT_MODEL } else { model.trim() };
        OpenAiTransport {
            agent: http::agent(timeout),
            url: join(base_url, DEFAULT_BASE_URL, "/chat/completions"),
            model: model.to_owned(),
            key,
        }
    }
}

impl Transport for OpenAiTransport {
    fn name(&self) -> &str {
        "openai-compatible"
    }

    fn complete(&self, system: &str, user: &str) -> Result<Completion, TransportError> {
        let body = json!({
            "model": self.model,
            "messages": [
                { "role": "system", "content": system },
                { "role": "user", "content": user },
            ],
            // Distilling is extraction, not writing: the same events should give the same notes.
            "temperature": 0,
        });
        let bearer = self.key.as_ref().map(|key| format!("Bearer {key}"));
        let headers: Vec<(&str, &str)> =
            bearer.iter().map(|b| ("authorization", b.as_str())).collect();
        let answer = http::post_json(&self.agent, &self.url, &headers, &body, self.key.as_deref())?;
        parse(&answer)
    }
}

fn parse(answer: &Value) -> Result<Completion, TransportError> {
    let text = answer
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or_else(|| unexpected("openai-compatible", "choices[0].message.content"))?;
    let usage = |field: &str| answer.pointer(&format!("/usage/{field}")).and_then(Value::as_u64);
    Ok(Completion {
        text: text.to_owned(),
        input_tokens: usage("prompt_tokens").unwrap_or(0),
        output_tokens: usage("completion_tokens").unwrap_or(0),
    })
}
