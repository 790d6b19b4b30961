//! Finding, loading and creating network checkpoints (the file format and the resolution of a
//! model path live in `draughts-model`; this adds the messages and exit codes of the binary).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use draughts_model::{CheckpointMeta, NetKind};
use draughts_nnue::Network;

use crate::bad_input;

fn warn(w: String) {
    eprintln!("warning: {w}");
}

/// The checkpoint sidecars in `dir`, oldest step first (unreadable ones are skipped with a
/// warning).
pub fn checkpoints_in(dir: &Path) -> Vec<(u64, PathBuf, CheckpointMeta)> {
    draughts_model::checkpoints_in(dir, &mut warn)
}

/// The newest checkpoint (highest step) in `dir`.
pub fn newest(dir: &Path) -> Option<(PathBuf, CheckpointMeta)> {
    draughts_model::newest(dir, &mut warn)
}

/// Resolves a model given on the command line: a checkpoint sidecar or weights file, or a
/// directory (its newest checkpoint, looking in `checkpoints/` inside a run directory too).
pub fn resolve_model(path: &Path) -> anyhow::Result<PathBuf> {
    draughts_model::resolve_model(path, &mut warn).map_err(bad_input)
}

/// The sidecar of the model `path` names.
pub fn model_meta(path: &Path) -> anyhow::Result<(PathBuf, CheckpointMeta)> {
    let p = draughts_model::sidecar_of(&resolve_model(path)?);
    let meta = draughts_model::read_meta(&p).map_err(bad_input)?;
    Ok((p, meta))
}

/// Whether the model `path` names is a sparse network (played natively, without libtorch).
pub fn is_sparse(path: &Path) -> anyhow::Result<bool> {
    Ok(model_meta(path)?.1.architecture.kind == NetKind::Sparse)
}

/// Loads `path` for alpha-beta, which needs a sparse network: a ResNet is bad input, with
/// `instead` saying where it can play.
pub fn load_for_alphabeta(path: Option<&Path>, instead: &str) -> anyhow::Result<Option<Arc<Network>>> {
    match path {
        Some(m) if !is_sparse(m)? => Err(bad_input(format!("{}: a ResNet model; alpha-beta needs a sparse network ({instead})", m.display()))),
        Some(m) => Ok(Some(load_native(m)?)),
        None => Ok(None),
    }
}

/// Loads a sparse model for native play (shared by every player of the process).
pub fn load_native(path: &Path) -> anyhow::Result<Arc<Network>> {
    draughts_arena::adapters::load_network(path).map_err(bad_input).with_context(|| format!("loading model {}", path.display()))
}
