//! The integration tests of agent-memory-embed: models installed into a temp models directory,
//! loaded and made to embed, as the CLI and the worker will use them.

// Without either model kind there is nothing to test but that the crate builds.
#![cfg_attr(not(any(feature = "bert", feature = "static")), allow(dead_code))]

#[cfg(feature = "bert")]
mod e5;
// The install tests use the tiny static model.
#[cfg(feature = "static")]
mod install;
#[cfg(feature = "bert")]
mod minilm;
#[cfg(feature = "static")]
mod potion;
// The refusals are tried on the tiny static model.
#[cfg(all(feature = "bert", feature = "static"))]
mod splade;
#[cfg(feature = "static")]
mod static_model;

use std::path::Path;

#[cfg(feature = "bert")]
use agent_memory_embed::{Embedder, Manifest};

/// What one install of a real model's wheel produced: the model loaded, and what was put in
/// its directory.
#[cfg(feature = "bert")]
struct Installed {
    wheel: String,
    manifest: Manifest,
    files: Vec<String>,
    model: Box<dyn Embedder>,
}

/// Installs `wheel` as `name` into a temp models directory and loads the model. The directory
/// is deleted once the model is loaded: the loaded model holds everything it needs in memory.
#[cfg(feature = "bert")]
fn install_wheel(name: &str, wheel: &Path) -> Installed {
    let models = tempfile::tempdir().expect("tempdir");
    let manifest = agent_memory_embed::install(models.path(), name, Some(wheel)).expect("installs");
    assert_eq!(entries(models.path()), [name], "no leftovers");
    let dir = models.path().join(name);
    let model = agent_memory_embed::load(&dir).expect("loads");
    Installed { wheel: wheel.display().to_string(), manifest, files: entries(&dir), model }
}

/// Cosine similarity of two unit vectors.
fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The length of a vector.
fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// The names of the entries of `dir`, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
