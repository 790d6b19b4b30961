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

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

use crate::encoding::ENCODING_VERSION;
use crate::net::{Net, NetConfig, NetError};

/// Version of the sidecar format written by this code.
pub const CHECKPOINT_FORMAT: u32 = 1;
/// The tch version this crate is built with (pinned with `=` in the workspace manifest).
pub const TCH_VERSION: &str = "0.24.0";
/// The libtorch version this crate is linked against (read by build.rs; `unknown` if it could
/// not tell).
pub const LIBTORCH_VERSION: &str = env!("DRAUGHTS_LIBTORCH_VERSION");
/// File extension of the weights.
pub const WEIGHTS_EXTENSION: &str = "safetensors";
/// File extension of the sidecar.
pub const SIDECAR_EXTENSION: &str = "json";

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

/// The sidecar of a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointMeta {
    /// Sidecar format version ([`CHECKPOINT_FORMAT`]).
    pub format: u32,
    /// `NAME-sSTEP`, see [`model_id`]; also the file stem of both files.
    pub model_id: String,
    /// Run or model name.
    pub name: String,
    /// Training steps taken.
    pub step: u64,
    /// The architecture the weights fit.
    pub architecture: NetConfig,
    /// Input encoding version the net was trained with ([`ENCODING_VERSION`]).
    pub encoding_version: u32,
    /// Rules preset name.
    pub rules: String,
    /// Seed of the run.
    pub seed: u64,
    /// Model id of the parent checkpoint.
    pub parent: Option<String>,
    /// Creation time, seconds since the Unix epoch.
    pub created_unix_s: u64,
    /// Creation time, RFC 3339 in UTC (for people; `created_unix_s` is authoritative).
    pub created: String,
    /// tch version that wrote the weights.
    pub tch_version: String,
    /// libtorch version that wrote the weights.
    pub libtorch_version: String,
    /// The weights file.
    pub weights: WeightsInfo,
}

/// Where the weights are and how to recognise them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightsInfo {
    /// File name, in the sidecar's directory.
    pub file: String,
    /// Size in bytes.
    pub bytes: u64,
    /// FNV-1a 64-bit hash of the file, 16 lower-case hex digits.
    pub fnv1a64: String,
}

/// Why a checkpoint could not be saved or loaded.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The file is not there.
    #[error("checkpoint file {} does not exist", .path.display())]
    Missing {
        /// The file looked for.
        path: PathBuf,
    },
    /// Reading or writing failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
    /// The sidecar is not valid JSON or a field is missing, unknown or of the wrong type.
    #[error("{}: bad sidecar at `{field}`: {message}", .path.display())]
    BadSidecar {
        /// The sidecar.
        path: PathBuf,
        /// Path of the offending field (`architecture.blocks`; `.` for the whole document).
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// A sidecar format this code does not read.
    #[error("{}: checkpoint format {found}, this program reads format {expected}", .path.display())]
    Format {
        /// The sidecar.
        path: PathBuf,
        /// Format in the file.
        found: u32,
        /// Format this code reads.
        expected: u32,
    },
    /// Weights trained on another input encoding.
    #[error("{}: input encoding version {found}, this program encodes with version {expected}", .path.display())]
    EncodingVersion {
        /// The sidecar.
        path: PathBuf,
        /// Version in the sidecar.
        found: u32,
        /// [`ENCODING_VERSION`].
        expected: u32,
    },
    /// The sidecar's architecture is not a valid [`NetConfig`].
    #[error("{}: architecture: {source}", .path.display())]
    Architecture {
        /// The sidecar.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: NetError,
    },
    /// The weights file has another size than the sidecar says (truncated or replaced).
    #[error("{}: {found} bytes, the sidecar says {expected} (truncated or replaced file)", .path.display())]
    WeightsSize {
        /// The weights file.
        path: PathBuf,
        /// Size on disk.
        found: u64,
        /// Size in the sidecar.
        expected: u64,
    },
    /// The weights file's checksum differs from the sidecar's (damaged or replaced file).
    #[error("{}: checksum {found}, the sidecar says {expected} (damaged or replaced file)", .path.display())]
    WeightsChecksum {
        /// The weights file.
        path: PathBuf,
        /// Checksum of the file.
        found: String,
        /// Checksum in the sidecar.
        expected: String,
    },
    /// The weights file is not valid safetensors.
    #[error("{}: not a valid safetensors file: {message}", .path.display())]
    BadWeights {
        /// The weights file.
        path: PathBuf,
        /// The parser's complaint.
        message: String,
    },
    /// A variable of the architecture is not in the weights file.
    #[error("{}: tensor `{name}` is missing (weights do not fit the architecture)", .path.display())]
    MissingTensor {
        /// The weights file.
        path: PathBuf,
        /// Variable name.
        name: String,
    },
    /// The weights file has a tensor the architecture does not.
    #[error("{}: unexpected tensor `{name}` (weights do not fit the architecture)", .path.display())]
    UnexpectedTensor {
        /// The weights file.
        path: PathBuf,
        /// Tensor name.
        name: String,
    },
    /// A tensor's shape differs from the architecture's.
    #[error("{}: tensor `{name}` has shape {found:?}, the architecture needs {expected:?}", .path.display())]
    ShapeMismatch {
        /// The weights file.
        path: PathBuf,
        /// Tensor name.
        name: String,
        /// Shape in the file.
        found: Vec<i64>,
        /// Shape of the variable.
        expected: Vec<i64>,
    },
    /// A tensor stored with another element type than `f32`.
    #[error("{}: tensor `{name}` has element type {found}, expected F32", .path.display())]
    WrongDtype {
        /// The weights file.
        path: PathBuf,
        /// Tensor name.
        name: String,
        /// Its dtype.
        found: String,
    },
    /// A checkpoint name that cannot be a file name.
    #[error("invalid checkpoint name `{name}`: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
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

/// The model id of checkpoint `name` at `step`: `NAME-sSTEP`, step zero-padded to 8 digits.
pub fn model_id(name: &str, step: u64) -> String {
    format!("{name}-s{step:08}")
}

/// Path of the sidecar of checkpoint `id` in `dir`.
pub fn sidecar_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.{SIDECAR_EXTENSION}"))
}

/// Path of the weights of checkpoint `id` in `dir`.
pub fn weights_path(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.{WEIGHTS_EXTENSION}"))
}

/// Checks that `name` can be used in a model id and a file name.
pub fn validate_name(name: &str) -> Result<(), CheckpointError> {
    let reason = if name.is_empty() {
        Some("empty")
    } else if name.len() > 64 {
        Some("longer than 64 characters")
    } else if name.starts_with('.') {
        Some("starts with `.`")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    {
        Some("only A-Z a-z 0-9 . _ - are allowed")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(CheckpointError::InvalidName {
            name: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
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
    let weights_tmp = dir.join(format!(".{id}.{WEIGHTS_EXTENSION}.tmp"));
    let sidecar_tmp = dir.join(format!(".{id}.{SIDECAR_EXTENSION}.tmp"));

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
    };
    // Serialising plain data with string keys cannot fail.
    let mut json = serde_json::to_vec_pretty(&meta).expect("sidecar serialises");
    json.push(b'\n');
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

/// Parses a whole JSON document into `T`. On failure returns the path of the offending field
/// (`architecture.blocks`; `.` for the document as a whole) and the message; a missing field
/// is named itself, not its parent. Shared by the checkpoint sidecar and the trainer state.
pub(crate) fn parse_json_named<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, (String, String)> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let mut field = e.path().to_string();
        if field == "?" {
            // A syntax error before any field: the whole document.
            field = ".".to_owned();
        }
        let message = e.into_inner().to_string();
        if let Some(name) = message.strip_prefix("missing field `").and_then(|m| m.split('`').next()) {
            field = if field == "." { name.to_owned() } else { format!("{field}.{name}") };
        }
        (field, message)
    })?;
    de.end().map_err(|e| (".".to_owned(), e.to_string()))?;
    Ok(value)
}

/// Reads and checks a sidecar: JSON shape, format and encoding version (not the weights).
pub fn read_meta(sidecar: &Path) -> Result<CheckpointMeta, CheckpointError> {
    let bytes = read_file(sidecar)?;
    let bad = |field: String, message: String| CheckpointError::BadSidecar {
        path: sidecar.to_path_buf(),
        field,
        message,
    };
    let meta: CheckpointMeta = parse_json_named(&bytes).map_err(|(field, message)| bad(field, message))?;
    if meta.format != CHECKPOINT_FORMAT {
        return Err(CheckpointError::Format {
            path: sidecar.to_path_buf(),
            found: meta.format,
            expected: CHECKPOINT_FORMAT,
        });
    }
    if meta.encoding_version != ENCODING_VERSION {
        return Err(CheckpointError::EncodingVersion {
            path: sidecar.to_path_buf(),
            found: meta.encoding_version,
            expected: ENCODING_VERSION,
        });
    }
    let file = &meta.weights.file;
    if file.is_empty() || file.contains(['/', '\\']) || file.starts_with('.') {
        return Err(bad(
            "weights.file".to_owned(),
            format!("`{file}` is not a plain file name"),
        ));
    }
    meta.architecture
        .validate()
        .map_err(|source| CheckpointError::Architecture {
            path: sidecar.to_path_buf(),
            source,
        })?;
    Ok(meta)
}

/// Loads a checkpoint onto `device`. `path` is its sidecar (`ID.json`) or its weights
/// (`ID.safetensors`, whose sidecar is then `ID.json` next to it).
pub fn load(path: &Path, device: Device) -> Result<(Net, CheckpointMeta), CheckpointError> {
    let sidecar = if path.extension().is_some_and(|e| e == WEIGHTS_EXTENSION) {
        path.with_extension(SIDECAR_EXTENSION)
    } else {
        path.to_path_buf()
    };
    let meta = read_meta(&sidecar)?;
    let weights = sidecar
        .parent()
        .unwrap_or(Path::new("."))
        .join(&meta.weights.file);
    let bytes = read_file(&weights)?;
    if bytes.len() as u64 != meta.weights.bytes {
        return Err(CheckpointError::WeightsSize {
            path: weights,
            found: bytes.len() as u64,
            expected: meta.weights.bytes,
        });
    }
    let sum = format!("{:016x}", fnv1a64(&bytes));
    if sum != meta.weights.fnv1a64 {
        return Err(CheckpointError::WeightsChecksum {
            path: weights,
            found: sum,
            expected: meta.weights.fnv1a64.clone(),
        });
    }
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
    let file =
        safetensors::SafeTensors::deserialize(bytes).map_err(|e| CheckpointError::BadWeights {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
    let mut in_file: HashMap<String, safetensors::tensor::TensorView<'_>> =
        file.tensors().into_iter().collect();
    let mut vars: Vec<(String, Tensor)> = net.var_store().variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    // Check everything before copying anything, so a bad file leaves the net untouched.
    let mut sources = Vec::with_capacity(vars.len());
    for (name, var) in &vars {
        let view = in_file
            .remove(name)
            .ok_or_else(|| CheckpointError::MissingTensor {
                path: path.to_path_buf(),
                name: name.clone(),
            })?;
        let found: Vec<i64> = view.shape().iter().map(|&d| d as i64).collect();
        if found != var.size() {
            return Err(CheckpointError::ShapeMismatch {
                path: path.to_path_buf(),
                name: name.clone(),
                found,
                expected: var.size(),
            });
        }
        if view.dtype() != safetensors::Dtype::F32 {
            return Err(CheckpointError::WrongDtype {
                path: path.to_path_buf(),
                name: name.clone(),
                found: format!("{:?}", view.dtype()),
            });
        }
        let src = Tensor::f_from_data_size(view.data(), &found, Kind::Float).map_err(|source| {
            CheckpointError::Torch {
                path: path.to_path_buf(),
                source,
            }
        })?;
        sources.push(src);
    }
    if let Some(name) = in_file.into_keys().min() {
        return Err(CheckpointError::UnexpectedTensor {
            path: path.to_path_buf(),
            name,
        });
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
    fs::read(path).map_err(|source| {
        if source.kind() == io::ErrorKind::NotFound {
            CheckpointError::Missing {
                path: path.to_path_buf(),
            }
        } else {
            CheckpointError::Io {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

/// FNV-1a, 64 bits: a cheap checksum that catches truncation and damage (not tampering).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Seconds since the Unix epoch as RFC 3339 UTC (`2024-05-01T12:00:00Z`).
pub fn rfc3339_utc(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339_utc(4_107_542_399), "2100-02-28T23:59:59Z");
    }

    #[test]
    fn fnv_known_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn names_and_ids() {
        assert_eq!(model_id("quick", 1200), "quick-s00001200");
        assert!(validate_name("run_1.b-4x32").is_ok());
        for bad in ["", ".hidden", "a/b", "a b", &"x".repeat(65)] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }
}
