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

/// The run's newest checkpoint, or its starting network saved as step 0 so that every worker and
/// every restart starts from the same weights: the config's `init` model (its id the step-0
/// checkpoint's parent) or a fresh network seeded by the config.
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
    let (net, parent) = if cfg.init.trim().is_empty() {
        (Net::new(&cfg.net, device, cfg.seed)?, None)
    } else {
        let (net, meta) = load_model(Path::new(cfg.init.trim()), device).context("init")?;
        let refused = |why: String| {
            bad_input(format!(
                "init = \"{}\": a {} network for the {} rules; the config's [net] is {} for the {} rules{why}",
                cfg.init,
                meta.architecture.short_name(),
                meta.rules,
                cfg.net.short_name(),
                cfg.rules
            ))
        };
        if meta.rules != cfg.rules {
            return Err(refused(String::new()));
        }
        if meta.architecture == cfg.net {
            (net, Some(meta.model_id))
        } else {
            // A sparse net may start from a narrower one: the same function, more room to learn.
            let wide = net.widened(&cfg.net, cfg.seed).map_err(|why| refused(format!(" ({why})")))?;
            eprintln!(
                "init: {} widened from {} to {} (the same outputs; each new accumulator output and each phase bucket starts \
                 as a copy, block patterns at zero)",
                meta.model_id,
                meta.architecture.short_name(),
                cfg.net.short_name()
            );
            (wide, Some(meta.model_id))
        }
    };
    let info = CheckpointInfo { name: cfg.name.clone(), step: 0, rules: cfg.rules.clone(), seed: cfg.seed, parent };
    let meta = checkpoint::save(&net, checkpoints, &info)?;
    Ok((net, meta))
}
