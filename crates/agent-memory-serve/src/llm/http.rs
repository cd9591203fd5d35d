//! The HTTP half shared by the API transports: one `ureq` agent per transport, one JSON POST,
//! and the mapping of what came back onto [`TransportError`].
//!
//! Must not: retry or sleep (the distiller does), or let the API key into any message — a
//! server that echoes the key back has it scrubbed before the text goes anywhere.

use std::time::Duration;

use serde_json::Value;

use super::TransportError;

/// The most of an error body kept in a message: enough for the provider's explanation.
const ERROR_MESSAGE_MAX_CHARS: usize = 300;
/// The most of an error body read at all; the rest is not worth the wait.
const ERROR_BODY_MAX_BYTES: u64 = 64 * 1024;

/// An agent whose every request, connect to last byte, ends within `timeout`, and which hands
/// back 4xx and 5xx answers as responses so their bodies and headers can be read.
pub(crate) fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build()
        .new_agent()
}

/// POSTs `body` as JSON to `url` and returns the parsed JSON of a 2xx answer. `secret` is
/// scrubbed from every message this returns.
pub(crate) fn post_json(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(&str, &str)],
    body: &Value,
    secret: Option<&str>,
) -> Result<Value, TransportError> {
    let mut request = agent.post(url).header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.send(body.to_string()).map_err(|e| from_ureq(&e, secret))?;
    let status = response.status().as_u16();
    if status == 429 {
        let retry_after_ms = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|seconds| seconds.saturating_mul(1000));
        return Err(TransportError::RateLimited { retry_after_ms });
    }
    if !(200..300).contains(&status) {
        // The body usually says why (a bad model name, an expired key); failing to read it
        // still leaves the status, which is what the distiller decides on.
        let text = response
            .body_mut()
            .with_config()
            .limit(ERROR_BODY_MAX_BYTES)
            .read_to_string()
            .unwrap_or_default();
        return Err(TransportError::Server { status, message: error_message(&text, secret) });
    }
    let text = response.body_mut().read_to_string().map_err(|e| from_ureq(&e, secret))?;
    serde_json::from_str(&text)
        .map_err(|e| TransportError::Other(scrub(&format!("the answer is not JSON: {e}"), secret)))
}

/// The provider's own explanation from an error body (`{"error": {"message": …}}` for both
/// Anthropic and OpenAI), else the start of the body as text.
fn error_message(body: &str, secret: Option<&str>) -> String {
    let json: Option<Value> = serde_json::from_str(body).ok();
    let explained = json.as_ref().and_then(|v| {
        v.pointer("/error/message").or_else(|| v.get("error")).or_else(|| v.get("message"))
    });
    let text = match explained {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => body.trim().to_owned(),
    };
    let text: String = text.chars().take(ERROR_MESSAGE_MAX_CHARS).collect();
    let text = if text.is_empty() { "no explanation".to_owned() } else { text };
    scrub(&text, secret)
}

fn from_ureq(error: &ureq::Error, secret: Option<&str>) -> TransportError {
    match error {
        ureq::Error::Timeout(_) => TransportError::Timeout,
        ureq::Error::Io(io)
            if matches!(
                io.kind(),
                std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
            ) =>
        {
            TransportError::Timeout
        }
        other => TransportError::Other(scrub(&other.to_string(), secret)),
    }
}

/// `text` with every occurrence of the key replaced, so no message can carry it.
fn scrub(text: &str, secret: Option<&str>) -> String {
    match secret {
        Some(secret) if !secret.is_empty() => text.replace(secret, "[redacted]"),
        _ => text.to_owned(),
    }
}

/// `base` without trailing slashes, so `…/v1/` and `…/v1` build the same URL.
pub(crate) fn join(base: &str, default: &str, path: &str) -> String {
    let base = base.trim();
    let base = if base.is_empty() { default } else { base };
    format!("{}{path}", base.trim_end_matches('/'))
}

/// Text for a missing or mistyped field of a 2xx answer.
pub(crate) fn unexpected(provider: &str, what: &str) -> TransportError {
    TransportError::Other(format!("the {provider} answer has no {what}"))
}
