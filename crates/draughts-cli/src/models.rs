//! Finding, loading and creating network checkpoints (the file format and the resolution of a
//! model path live in `draughts-model`; this adds the messages and exit codes of the binary).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use draughts_model::{CheckpointMeta, NetKind};
use draughts_nn::checkpoint;
use draughts_nn::tch::Device;
use draughts_nn::{CheckpointInfo, Net};
use draughts_nnue::Network;

use crate::bad_input;
use crate::settings::Config;

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

/// Loads a model for play through libtorch (either kind).
pub fn load_model(path: &Path, device: Device) -> anyhow::Result<(Net, CheckpointMeta)> {
    let p = resolve_model(path)?;
    checkpoint::load(&p, device).map_err(bad_input).with_context(|| format!("loading model {}", p.display()))
}

/// Loads a sparse model for native play (shared by every player of the process).
pub fn load_native(path: &Path) -> anyhow::Result<Arc<Network>> {
    draughts_arena::adapters::load_network(path).map_err(bad_input).with_context(|| format!("loading model {}", path.display()))
}

/// The run's newest checkpoint, or a fresh network (seeded by the config) saved as step 0 so
/// that every worker and every restart starts from the same weights.
pub fn load_or_init(checkpoints: &Path, cfg: &Config, device: Device) -> anyhow::Result<(Net, CheckpointMeta)> {
    if let Some((p, _)) = newest(checkpoints) {
        let (net, meta) = checkpoint::load(&p, device).map_err(bad_input)?;
        if meta.architecture != cfg.net {
            return Err(bad_input(format!(
                "{}: its architecture {} differs from the config's [net] {}",
                p.display(),
                meta.architecture.short_name(),
                cfg.net.short_name()
            )));
        }
        return Ok((net, meta));
    }
    let net = Net::new(&cfg.net, device, cfg.seed)?;
    let info = CheckpointInfo { name: cfg.name.clone(), step: 0, rules: cfg.rules.clone(), seed: cfg.seed, parent: None };
    let meta = checkpoint::save(&net, checkpoints, &info)?;
    Ok((net, meta))
}
