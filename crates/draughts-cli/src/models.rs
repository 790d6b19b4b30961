//! Finding, loading and creating network checkpoints.

use std::path::{Path, PathBuf};

use anyhow::Context;
use draughts_nn::checkpoint::{self, read_meta};
use draughts_nn::tch::Device;
use draughts_nn::{CheckpointInfo, CheckpointMeta, Net};

use crate::bad_input;
use crate::settings::Config;

/// The checkpoint sidecars (`*.json` with a matching `*.safetensors`) in `dir`, oldest step
/// first. Files that are not checkpoints are ignored; a sidecar that does not parse is reported
/// through `warn` and skipped.
pub fn checkpoints_in(dir: &Path, warn: &mut dyn FnMut(String)) -> Vec<(u64, PathBuf, CheckpointMeta)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "json") && p.with_extension("safetensors").is_file() {
            match read_meta(&p) {
                Ok(meta) => found.push((meta.step, p, meta)),
                Err(err) => warn(format!("skipping {}: {err}", p.display())),
            }
        }
    }
    found.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    found
}

/// The newest checkpoint (highest step) in `dir`.
pub fn newest(dir: &Path) -> Option<(PathBuf, CheckpointMeta)> {
    checkpoints_in(dir, &mut |w| eprintln!("warning: {w}")).pop().map(|(_, p, m)| (p, m))
}

/// Resolves a model given on the command line: a checkpoint sidecar or weights file, or a
/// directory (its newest checkpoint, looking in `checkpoints/` inside a run directory too).
pub fn resolve_model(path: &Path) -> anyhow::Result<PathBuf> {
    if path.is_file() {
        return Ok(path.to_path_buf());
    }
    if path.is_dir() {
        for dir in [path.to_path_buf(), path.join("checkpoints")] {
            if let Some((p, _)) = newest(&dir) {
                return Ok(p);
            }
        }
        return Err(bad_input(format!("{}: no checkpoint (NAME.json + NAME.safetensors) in this directory", path.display())));
    }
    Err(bad_input(format!("{}: no such model file or directory", path.display())))
}

/// Loads a model for play.
pub fn load_model(path: &Path, device: Device) -> anyhow::Result<(Net, CheckpointMeta)> {
    let p = resolve_model(path)?;
    checkpoint::load(&p, device).map_err(bad_input).with_context(|| format!("loading model {}", p.display()))
}

/// The run's newest checkpoint, or a fresh network (seeded by the config) saved as step 0 so
/// that every worker and every restart starts from the same weights.
pub fn load_or_init(checkpoints: &Path, cfg: &Config, device: Device) -> anyhow::Result<(Net, CheckpointMeta)> {
    if let Some((p, _)) = newest(checkpoints) {
        let (net, meta) = checkpoint::load(&p, device).map_err(bad_input)?;
        if meta.architecture != cfg.net {
            return Err(bad_input(format!(
                "{}: its architecture {:?} differs from the config's [net] {:?}",
                p.display(),
                meta.architecture,
                cfg.net
            )));
        }
        return Ok((net, meta));
    }
    let net = Net::new(&cfg.net, device, cfg.seed)?;
    let info = CheckpointInfo { name: cfg.name.clone(), step: 0, rules: cfg.rules.clone(), seed: cfg.seed, parent: None };
    let meta = checkpoint::save(&net, checkpoints, &info)?;
    Ok((net, meta))
}
