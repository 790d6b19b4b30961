//! Finding the checkpoint a path means: a checkpoint file, a model directory (`models/NAME`), or
//! a run directory (its `checkpoints/`), the newest checkpoint in a directory winning.

use std::path::{Path, PathBuf};

use crate::card::{verify_card, CardError};
use crate::sidecar::{read_meta, CheckpointMeta, SIDECAR_EXTENSION, WEIGHTS_EXTENSION};

/// A path that names no checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// Neither a file nor a directory.
    #[error("{}: no such model file or directory", .0.display())]
    NotFound(PathBuf),
    /// A directory without a checkpoint (in it or in its `checkpoints/`).
    #[error("{}: no checkpoint (NAME.json + NAME.safetensors) in this directory", .0.display())]
    Empty(PathBuf),
    /// A file of the model directory differs from its card's SHA-256 list.
    #[error(transparent)]
    Card(#[from] CardError),
}

/// The checkpoint sidecars (`*.json` with a matching `*.safetensors`) in `dir`, oldest step
/// first. Files that are not checkpoints are ignored; a sidecar that does not read is reported
/// through `warn` and skipped.
pub fn checkpoints_in(dir: &Path, warn: &mut dyn FnMut(String)) -> Vec<(u64, PathBuf, CheckpointMeta)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == SIDECAR_EXTENSION) && p.with_extension(WEIGHTS_EXTENSION).is_file() {
            match read_meta(&p) {
                Ok(meta) => found.push((meta.step, p, meta)),
                Err(err) => warn(format!("skipping {}: {err}", p.display())),
            }
        }
    }
    found.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    found
}

/// The newest checkpoint (highest step) in `dir`; skipped sidecars are reported through `warn`.
pub fn newest(dir: &Path, warn: &mut dyn FnMut(String)) -> Option<(PathBuf, CheckpointMeta)> {
    checkpoints_in(dir, warn).pop().map(|(_, p, m)| (p, m))
}

/// Resolves a model given on a command line: a checkpoint sidecar or weights file as it is, or
/// a directory: its newest checkpoint, looking in `checkpoints/` inside a run directory too.
///
/// In a model directory whose card lists its files with their SHA-256 (`draughts export`
/// writes it), every listed file is checked first.
pub fn resolve_model(path: &Path, warn: &mut dyn FnMut(String)) -> Result<PathBuf, ResolveError> {
    let found = find_model(path, warn)?;
    let dir = found.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    verify_card(dir)?;
    Ok(found)
}

fn find_model(path: &Path, warn: &mut dyn FnMut(String)) -> Result<PathBuf, ResolveError> {
    if path.is_file() {
        return Ok(path.to_path_buf());
    }
    if path.is_dir() {
        for dir in [path.to_path_buf(), path.join("checkpoints")] {
            if let Some((p, _)) = newest(&dir, warn) {
                return Ok(p);
            }
        }
        return Err(ResolveError::Empty(path.to_path_buf()));
    }
    Err(ResolveError::NotFound(path.to_path_buf()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_directories_and_run_directories() {
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/cpu-2h");
        let p = resolve_model(&shipped, &mut |w| panic!("{w}")).unwrap();
        assert!(p.ends_with("cpu-s00004390.json"), "{}", p.display());
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(resolve_model(dir.path(), &mut |_| {}), Err(ResolveError::Empty(dir.path().to_path_buf())));
        let missing = dir.path().join("nothing");
        assert_eq!(resolve_model(&missing, &mut |_| {}), Err(ResolveError::NotFound(missing.clone())));
        // A run directory: the newest checkpoint of checkpoints/; a bad sidecar is reported and skipped.
        let cps = dir.path().join("checkpoints");
        std::fs::create_dir(&cps).unwrap();
        for step in [3u64, 12] {
            // Edited by hand, so without the original's seal.
            let mut meta = crate::read_meta(&p).unwrap();
            meta.step = step;
            meta.sidecar_fnv1a64 = None;
            std::fs::write(cps.join(format!("m-{step}.json")), serde_json::to_vec_pretty(&meta).unwrap()).unwrap();
            std::fs::write(cps.join(format!("m-{step}.safetensors")), b"x").unwrap();
        }
        std::fs::write(cps.join("bad.json"), b"{").unwrap();
        std::fs::write(cps.join("bad.safetensors"), b"x").unwrap();
        let mut warnings = Vec::new();
        let got = resolve_model(dir.path(), &mut |w| warnings.push(w)).unwrap();
        assert!(got.ends_with("m-12.json"), "{}", got.display());
        assert!(warnings.iter().any(|w| w.contains("bad.json")), "{warnings:?}");
    }
}
