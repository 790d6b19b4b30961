//! The libtorch side of loading models: a network of either kind as a libtorch module, and the
//! run's starting network. Everything that does not need libtorch (resolving a path, reading a
//! sidecar, the native network) is the library's `models`, re-exported here.

use std::path::Path;

use anyhow::Context;
use draughts_model::CheckpointMeta;
use draughts_nn::checkpoint;
use draughts_nn::tch::Device;
use draughts_nn::{CheckpointInfo, Net};

pub use draughts_cli::models::*;

use crate::bad_input;
use crate::settings::Config;

/// Loads a model for play through libtorch (either kind).
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
