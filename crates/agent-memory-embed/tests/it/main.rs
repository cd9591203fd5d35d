//! The integration tests of agent-memory-embed: models installed into a temp models directory,
//! loaded and made to embed, as the CLI and the worker will use them.

// Without either model kind there is nothing to test but that the crate builds.
#![cfg_attr(not(any(feature = "bert", feature = "static")), allow(dead_code))]

// The install tests use the tiny static model.
#[cfg(feature = "static")]
mod install;
#[cfg(feature = "bert")]
mod minilm;
#[cfg(feature = "static")]
mod static_model;

use std::path::Path;

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
