//! Checkpoints: the weights as safetensors plus a JSON sidecar that says what they are.
//!
//! A checkpoint called `ID` in directory `DIR` is two files:
//! - `DIR/ID.safetensors`: every variable of the [`Net`] (trainable weights and batch-norm running
//!   statistics), `f32`, keyed by the names in [`crate::net`];
//! - `DIR/ID.json`: a [`CheckpointMeta`]: architecture, encoding version, rules, training step,
//!   seed, parent model, creation time, tch and libtorch versions, and the size and checksum of
//!   the weights file.
//!
//! Both are written to hidden temporary names (`.ID.*.tmp`) and renamed into place, the sidecar
//! last: **a checkpoint is complete if and only if its sidecar exists**, and a checkpoint that was
//! overwritten half-way is caught by the checksum. Loading checks the format, the encoding
//! version, the checksum, and every tensor's name and shape against the architecture, and
//! reports each failure as a [`CheckpointError`] naming the file (and field or tensor); no input
//! makes it panic.
//!
//! The model id is `NAME-sSTEP` with the step zero-padded to 8 digits (`quickstart-s00012000`),
//! so a directory listing sorts by step.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use draughts_model::MetaError;
use tch::{Device, Tensor};

use crate::net::{Net, NetError};

pub use draughts_model::{
    fnv1a64, model_id, parse_json_named, rfc3339_utc, sidecar_path, weights_path, CheckpointMeta, WeightsInfo,
    CHECKPOINT_FORMAT, ENCODING_VERSION, SIDECAR_EXTENSION, WEIGHTS_EXTENSION,
};

/// The tch version this crate is built with (pinned with `=` in the workspace manifest).
pub const TCH_VERSION: &str = "0.24.0";
/// The libtorch version this crate is linked against (read by build.rs; `unknown` if it could
/// not tell).
pub const LIBTORCH_VERSION: &str = env!("DRAUGHTS_LIBTORCH_VERSION");

/// What the caller knows about a checkpoint it saves; the rest of [`CheckpointMeta`] is filled
/// in by [`save`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// Run or model name: 1 to 64 characters from `A-Z a-z 0-9 . _ -`, not starting with `.`.
    pub name: String,
    /// Training steps taken so far.
    pub step: u64,
    /// Name of the rules preset the net is trained for (`fmjd`, ...).
    pub rules: String,
    /// The seed of the run that produced the weights.
    pub seed: u64,
    /// Model id of the checkpoint training started from, if any.
    pub parent: Option<String>,
}

/// Why a checkpoint could not be saved or loaded.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The sidecar or the weights file is missing, unreadable, damaged, or of another format,
    /// encoding or name (the checks of `draughts-model`, shared with programs without libtorch).
    #[error(transparent)]
    Meta(#[from] MetaError),
    /// Writing a file failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// Building the net or moving it to a device failed.
    #[error("{}: {source}", .path.display())]
    Net {
        /// The checkpoint.
        path: PathBuf,
        /// The error.
        #[source]
        source: NetError,
    },
    /// libtorch failed.
    #[error("{}: libtorch: {source}", .path.display())]
    Torch {
        /// The file being handled.
        path: PathBuf,
        /// The error.
        #[source]
        source: tch::TchError,
    },
}

/// Checks that `name` can be used in a model id and a file name.
pub fn validate_name(name: &str) -> Result<(), CheckpointError> {
    Ok(draughts_model::validate_name(name)?)
}

/// Saves `net` as checkpoint `model_id(info.name, info.step)` in `dir` (created if needed) and
/// returns its sidecar. Weights first, sidecar last, each through a temporary file and a rename;
/// an existing checkpoint with the same id is replaced.
pub fn save(
    net: &Net,
    dir: &Path,
    info: &CheckpointInfo,
) -> Result<CheckpointMeta, CheckpointError> {
    validate_name(&info.name)?;
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CheckpointError::Io { path, source }
    };
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let id = model_id(&info.name, info.step);
    let weights = weights_path(dir, &id);
    let sidecar = sidecar_path(dir, &id);
    // The process id in the temporary names: processes sharing a run (self-play workers that
    // all write the untrained step-0 net) never write into each other's file.
    let pid = std::process::id();
    let weights_tmp = dir.join(format!(".{id}.{WEIGHTS_EXTENSION}.{pid}.tmp"));
    let sidecar_tmp = dir.join(format!(".{id}.{SIDECAR_EXTENSION}.{pid}.tmp"));

    // Sorted by name, on the CPU and contiguous: the file is the same bytes for the same weights.
    let mut named: Vec<(String, Tensor)> = net
        .var_store()
        .variables()
        .into_iter()
        .map(|(name, t)| (name, t.to_device(Device::Cpu).contiguous()))
        .collect();
    named.sort_by(|a, b| a.0.cmp(&b.0));
    let torch_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CheckpointError::Torch { path, source }
    };
    Tensor::write_safetensors(&named, &weights_tmp).map_err(torch_err(&weights_tmp))?;
    let bytes = fs::read(&weights_tmp).map_err(io_err(&weights_tmp))?;
    File::open(&weights_tmp)
        .and_then(|f| f.sync_all())
        .map_err(io_err(&weights_tmp))?;
    fs::rename(&weights_tmp, &weights).map_err(io_err(&weights))?;

    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let meta = CheckpointMeta {
        format: CHECKPOINT_FORMAT,
        model_id: id.clone(),
        name: info.name.clone(),
        step: info.step,
        architecture: net.config().clone(),
        encoding_version: ENCODING_VERSION,
        rules: info.rules.clone(),
        seed: info.seed,
        parent: info.parent.clone(),
        created_unix_s: now,
        created: rfc3339_utc(now),
        tch_version: TCH_VERSION.to_owned(),
        libtorch_version: LIBTORCH_VERSION.to_owned(),
        weights: WeightsInfo {
            file: format!("{id}.{WEIGHTS_EXTENSION}"),
            bytes: bytes.len() as u64,
            fnv1a64: format!("{:016x}", fnv1a64(&bytes)),
        },
        sidecar_fnv1a64: None,
    };
    let json = draughts_model::sidecar::to_json(&meta);
    File::create(&sidecar_tmp)
        .and_then(|mut f| {
            f.write_all(&json)?;
            f.sync_all()
        })
        .map_err(io_err(&sidecar_tmp))?;
    fs::rename(&sidecar_tmp, &sidecar).map_err(io_err(&sidecar))?;
    // Make the renames durable; not every platform can open a directory, so this is best effort.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(meta)
}

/// Reads and checks a sidecar: JSON shape, format, encoding version and architecture (not the
/// weights).
pub fn read_meta(sidecar: &Path) -> Result<CheckpointMeta, CheckpointError> {
    Ok(draughts_model::read_meta(sidecar)?)
}

/// Loads a checkpoint onto `device`. `path` is its sidecar (`ID.json`) or its weights
/// (`ID.safetensors`, whose sidecar is then `ID.json` next to it).
pub fn load(path: &Path, device: Device) -> Result<(Net, CheckpointMeta), CheckpointError> {
    let sidecar = draughts_model::sidecar_of(path);
    let meta = read_meta(&sidecar)?;
    let (weights, bytes) = draughts_model::read_weights(&sidecar, &meta)?;
    let mut net =
        Net::unseeded(&meta.architecture, device).map_err(|source| CheckpointError::Net {
            path: sidecar.clone(),
            source,
        })?;
    load_weights_bytes(&mut net, &bytes, &weights)?;
    Ok((net, meta))
}

/// Loads a bare safetensors file into `net` (no sidecar, no checksum), checking every tensor's
/// name, shape and element type against the net's variables.
pub fn load_weights(net: &mut Net, weights: &Path) -> Result<(), CheckpointError> {
    let bytes = read_file(weights)?;
    load_weights_bytes(net, &bytes, weights)
}

fn load_weights_bytes(net: &mut Net, bytes: &[u8], path: &Path) -> Result<(), CheckpointError> {
    let mut vars: Vec<(String, Tensor)> = net.var_store().variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    let expected: Vec<(String, Vec<usize>)> =
        vars.iter().map(|(name, var)| (name.clone(), var.size().iter().map(|&d| d as usize).collect())).collect();
    // Everything is checked before anything is copied, so a bad file leaves the net untouched.
    let mut tensors = draughts_model::read_tensors(bytes, path, &expected)?;
    let mut sources = Vec::with_capacity(vars.len());
    for (name, var) in &vars {
        let values = tensors.remove(name).unwrap_or_default();
        let src = Tensor::f_from_slice(&values)
            .and_then(|t| t.f_reshape(var.size()))
            .map_err(|source| CheckpointError::Torch { path: path.to_path_buf(), source })?;
        sources.push(src);
    }
    tch::no_grad(|| {
        for ((_, var), src) in vars.iter_mut().zip(&sources) {
            var.f_copy_(src).map_err(|source| CheckpointError::Torch {
                path: path.to_path_buf(),
                source,
            })?;
        }
        Ok(())
    })
}

fn read_file(path: &Path) -> Result<Vec<u8>, CheckpointError> {
    Ok(draughts_model::read_file(path)?)
}
