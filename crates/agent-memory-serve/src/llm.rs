//! LLM transports: builds, from `[llm]` configuration, the [`Transport`] that core's
//! `LlmDistiller` asks for completions.
//!
//! Owns choosing the provider, finding its API key (the named or usual environment variable,
//! then `key_file`) and the defaults each provider needs. Each transport makes exactly one
//! attempt over one provider's wire format and maps failures onto [`TransportError`].
//!
//! Must not: retry, wait, count tokens against the budget, or fall back — the distiller in core
//! does all of that — and must never log an API key or put one in an error message.

use std::path::PathBuf;
use std::time::Duration;

use agent_memory_core::config::LlmConfig;
pub use agent_memory_core::distil::llm::{Completion, Transport, TransportError};

mod anthropic;
mod cli;
pub(crate) mod http;
mod openai;

pub use anthropic::AnthropicTransport;
pub use cli::CliTransport;
pub use openai::OpenAiTransport;

/// Why no transport could be built from the configuration. Never holds an API key.
#[derive(Debug, thiserror::Error)]
pub enum LlmSetupError {
    #[error(
        "unknown [llm] provider `{provider}`; set it to none, anthropic, openai, claude-cli or codex-cli"
    )]
    UnknownProvider { provider: String },
    #[error(
        "no API key for the {provider} provider; set the environment variable {var} or [llm] key_file"
    )]
    MissingKey { provider: String, var: String },
    #[error("cannot read the API key file {}: {source}; check [llm] key_file", path.display())]
    KeyFile { path: PathBuf, source: std::io::Error },
}

/// The transport `config` asks for; `None` when the provider is `none` (offline distilling).
pub fn transport(config: &LlmConfig) -> Result<Option<Box<dyn Transport>>, LlmSetupError> {
    // A zero timeout would make every attempt fail at once; one second is the least useful wait.
    let timeout = Duration::from_secs(config.timeout_seconds.max(1));
    let provider = config.provider.trim();
    let transport: Box<dyn Transport> = match provider {
        "" | "none" => return Ok(None),
        "anthropic" => {
            let key = api_key(config, "ANTHROPIC_API_KEY")?
                .ok_or_else(|| missing_key(config, "anthropic", "ANTHROPIC_API_KEY"))?;
            Box::new(AnthropicTransport::new(&config.base_url, &config.model, key, timeout))
        }
        "openai" => {
            let key = api_key(config, "OPENAI_API_KEY")?;
            // A local OpenAI-compatible server (Ollama, llama.cpp, vLLM) usually takes no key;
            // only the public endpoint certainly needs one.
            if key.is_none() && config.base_url.trim().is_empty() {
                return Err(missing_key(config, "openai", "OPENAI_API_KEY"));
            }
            Box::new(OpenAiTransport::new(&config.base_url, &config.model, key, timeout))
        }
        "claude-cli" => Box::new(CliTransport::claude(&config.command, timeout)),
        "codex-cli" => Box::new(CliTransport::codex(&config.command, timeout)),
        other => return Err(LlmSetupError::UnknownProvider { provider: other.to_owned() }),
    };
    Ok(Some(transport))
}

fn key_var<'a>(config: &'a LlmConfig, usual: &'a str) -> &'a str {
    match config.api_key_env.trim() {
        "" => usual,
        var => var,
    }
}

fn missing_key(config: &LlmConfig, provider: &str, usual: &str) -> LlmSetupError {
    LlmSetupError::MissingKey {
        provider: provider.to_owned(),
        var: key_var(config, usual).to_owned(),
    }
}

/// The API key from the environment variable, else from `key_file`; `None` when neither has one.
fn api_key(config: &LlmConfig, usual: &str) -> Result<Option<String>, LlmSetupError> {
    if let Ok(value) = std::env::var(key_var(config, usual)) {
        let value = value.trim();
        if !value.is_empty() {
            return Ok(Some(value.to_owned()));
        }
    }
    let file = config.key_file.trim();
    if file.is_empty() {
        return Ok(None);
    }
    let path = expand_home(file);
    // The io error names the failure, never the file's content, so it is safe to report.
    let text =
        std::fs::read_to_string(&path).map_err(|source| LlmSetupError::KeyFile { path, source })?;
    let key = text.trim();
    Ok((!key.is_empty()).then(|| key.to_owned()))
}

/// `~/…` as a shell would read it: configuration files are written by hand.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}
