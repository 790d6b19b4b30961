//! The checkpoint sidecar: what a weights file is.
//!
//! A checkpoint called `ID` in directory `DIR` is two files:
//! - `DIR/ID.safetensors`: every variable of the network, `f32`, keyed by the names of its kind
//!   (`draughts-nn` for the ResNet, `draughts-nnue` for the sparse net);
//! - `DIR/ID.json`: a [`CheckpointMeta`]: architecture, encoding version, rules, training step,
//!   seed, parent model, creation time, tch and libtorch versions, and the size and checksum of
//!   the weights file.
//!
//! Writers put both under hidden temporary names and rename them into place, the sidecar last:
//! **a checkpoint is complete if and only if its sidecar exists**, and a weights file that was
//! overwritten half-way is caught by the checksum ([`read_weights`]).
//!
//! The model id is `NAME-sSTEP` with the step zero-padded to 8 digits (`quickstart-s00012000`),
//! so a directory listing sorts by step.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::arch::{ArchError, NetConfig};

/// Version of the sidecar format.
pub const CHECKPOINT_FORMAT: u32 = 1;
/// Version of the network input encoding (the planes of `draughts-nn`'s encoding, from which
/// the sparse net's piece-square features are also taken). Checkpoints record the version they
/// were trained with and refuse to load under another one.
pub const ENCODING_VERSION: u32 = 1;
/// File extension of the weights.
pub const WEIGHTS_EXTENSION: &str = "safetensors";
/// File extension of the sidecar.
pub const SIDECAR_EXTENSION: &str = "json";

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
    /// The architecture the weights fit (its `kind` says which network).
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
    /// FNV-1a 64 of this sidecar's own pretty JSON without this field (see [`to_json`]), so a
    /// damaged sidecar is never read as a good one. Sidecars written before it have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sidecar_fnv1a64: Option<String>,
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

/// Why a sidecar or the weights it describes cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum MetaError {
    /// The file is not there.
    #[error("checkpoint file {} does not exist", .path.display())]
    Missing {
        /// The file looked for.
        path: PathBuf,
    },
    /// Reading failed.
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
    /// The sidecar's architecture is out of range.
    #[error("{}: architecture: {source}", .path.display())]
    Architecture {
        /// The sidecar.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: ArchError,
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
    /// The sidecar's own checksum differs (a damaged sidecar).
    #[error("{}: checksum {found}, the file says {expected} (a damaged sidecar)", .path.display())]
    SidecarChecksum {
        /// The sidecar.
        path: PathBuf,
        /// Checksum of its contents.
        found: String,
        /// Checksum it carries.
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
    /// A tensor of the architecture is not in the weights file.
    #[error("{}: tensor `{name}` is missing (weights do not fit the architecture)", .path.display())]
    MissingTensor {
        /// The weights file.
        path: PathBuf,
        /// The tensor.
        name: String,
    },
    /// The weights file has a tensor the architecture does not.
    #[error("{}: unexpected tensor `{name}` (weights do not fit the architecture)", .path.display())]
    UnexpectedTensor {
        /// The weights file.
        path: PathBuf,
        /// The tensor.
        name: String,
    },
    /// A tensor's shape differs from the architecture's.
    #[error("{}: tensor `{name}` has shape {found:?}, the architecture needs {expected:?}", .path.display())]
    ShapeMismatch {
        /// The weights file.
        path: PathBuf,
        /// The tensor.
        name: String,
        /// Its shape in the file.
        found: Vec<usize>,
        /// The shape the architecture needs.
        expected: Vec<usize>,
    },
    /// A tensor that is not `f32`.
    #[error("{}: tensor `{name}` has element type {found}, expected F32", .path.display())]
    WrongDtype {
        /// The weights file.
        path: PathBuf,
        /// The tensor.
        name: String,
        /// Its type.
        found: String,
    },
    /// A weight that is NaN or infinite.
    #[error("{}: tensor `{name}` holds a value that is not finite", .path.display())]
    NonFinite {
        /// The weights file.
        path: PathBuf,
        /// The tensor.
        name: String,
    },
    /// A checkpoint name that cannot be a file name.
    #[error("invalid checkpoint name `{name}`: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
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

/// The sidecar belonging to `path`, which is a sidecar (`ID.json`) or a weights file
/// (`ID.safetensors`, whose sidecar is `ID.json` next to it).
pub fn sidecar_of(path: &Path) -> PathBuf {
    if path.extension().is_some_and(|e| e == WEIGHTS_EXTENSION) {
        path.with_extension(SIDECAR_EXTENSION)
    } else {
        path.to_path_buf()
    }
}

/// Checks that `name` can be used in a model id and a file name.
pub fn validate_name(name: &str) -> Result<(), MetaError> {
    let reason = if name.is_empty() {
        Some("empty")
    } else if name.len() > 64 {
        Some("longer than 64 characters")
    } else if name.starts_with('.') {
        Some("starts with `.`")
    } else if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) {
        Some("only A-Z a-z 0-9 . _ - are allowed")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(MetaError::InvalidName { name: name.to_owned(), reason }),
        None => Ok(()),
    }
}

/// Parses a whole JSON document into `T`. On failure returns the path of the offending field
/// (`architecture.blocks`; `.` for the document as a whole) and the message; a missing field
/// is named itself, not its parent. Shared by the checkpoint sidecar and the trainer state.
pub fn parse_json_named<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, (String, String)> {
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

/// Reads a file, telling a missing file apart from other failures.
pub fn read_file(path: &Path) -> Result<Vec<u8>, MetaError> {
    fs::read(path).map_err(|source| {
        if source.kind() == io::ErrorKind::NotFound {
            MetaError::Missing { path: path.to_path_buf() }
        } else {
            MetaError::Io { path: path.to_path_buf(), source }
        }
    })
}

/// The sidecar as pretty JSON with a final newline, as writers store it, sealed with its own
/// checksum (`sidecar_fnv1a64`).
pub fn to_json(meta: &CheckpointMeta) -> Vec<u8> {
    let sealed = CheckpointMeta { sidecar_fnv1a64: Some(sidecar_checksum(meta)), ..meta.clone() };
    // Plain data with string keys always serialises.
    let mut json = serde_json::to_vec_pretty(&sealed).expect("a sidecar serialises");
    json.push(b'\n');
    json
}

/// The checksum a sidecar carries: FNV-1a 64 of its pretty JSON without `sidecar_fnv1a64`.
pub fn sidecar_checksum(meta: &CheckpointMeta) -> String {
    let bare = CheckpointMeta { sidecar_fnv1a64: None, ..meta.clone() };
    format!("{:016x}", fnv1a64(&serde_json::to_vec_pretty(&bare).expect("a sidecar serialises")))
}

/// Reads and checks a sidecar: JSON shape, format, encoding version and architecture ranges
/// (not the weights).
pub fn read_meta(sidecar: &Path) -> Result<CheckpointMeta, MetaError> {
    let bytes = read_file(sidecar)?;
    let bad = |field: String, message: String| MetaError::BadSidecar { path: sidecar.to_path_buf(), field, message };
    let meta: CheckpointMeta = parse_json_named(&bytes).map_err(|(field, message)| bad(field, message))?;
    if let Some(expected) = &meta.sidecar_fnv1a64 {
        let found = sidecar_checksum(&meta);
        if &found != expected {
            return Err(MetaError::SidecarChecksum { path: sidecar.to_path_buf(), found, expected: expected.clone() });
        }
    }
    if meta.format != CHECKPOINT_FORMAT {
        return Err(MetaError::Format { path: sidecar.to_path_buf(), found: meta.format, expected: CHECKPOINT_FORMAT });
    }
    if meta.encoding_version != ENCODING_VERSION {
        return Err(MetaError::EncodingVersion {
            path: sidecar.to_path_buf(),
            found: meta.encoding_version,
            expected: ENCODING_VERSION,
        });
    }
    let file = &meta.weights.file;
    if file.is_empty() || file.contains(['/', '\\']) || file.starts_with('.') {
        return Err(bad("weights.file".to_owned(), format!("`{file}` is not a plain file name")));
    }
    meta.architecture.validate().map_err(|source| MetaError::Architecture { path: sidecar.to_path_buf(), source })?;
    Ok(meta)
}

/// Reads the weights file a sidecar at `sidecar` describes, checking its size and checksum.
/// Returns its path and bytes.
pub fn read_weights(sidecar: &Path, meta: &CheckpointMeta) -> Result<(PathBuf, Vec<u8>), MetaError> {
    let weights = sidecar.parent().unwrap_or(Path::new(".")).join(&meta.weights.file);
    let bytes = read_file(&weights)?;
    if bytes.len() as u64 != meta.weights.bytes {
        return Err(MetaError::WeightsSize { path: weights, found: bytes.len() as u64, expected: meta.weights.bytes });
    }
    let sum = format!("{:016x}", fnv1a64(&bytes));
    if sum != meta.weights.fnv1a64 {
        return Err(MetaError::WeightsChecksum { path: weights, found: sum, expected: meta.weights.fnv1a64.clone() });
    }
    Ok((weights, bytes))
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
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", secs / 3600, secs % 3600 / 60, secs % 60)
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
        assert_eq!(sidecar_of(Path::new("d/x.safetensors")), Path::new("d/x.json"));
        assert_eq!(sidecar_of(Path::new("d/x.json")), Path::new("d/x.json"));
    }

    #[test]
    fn shipped_model_sidecars_read() {
        // Every shipped model's sidecar parses and its weights match their checksum.
        let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
        let mut n = 0;
        for dir in fs::read_dir(&models).unwrap().flatten().filter(|e| e.path().is_dir()) {
            for (_, sidecar, meta) in crate::checkpoints_in(&dir.path(), &mut |w| panic!("{w}")) {
                read_weights(&sidecar, &meta).unwrap();
                n += 1;
            }
        }
        assert!(n >= 1, "no shipped model under {}", models.display());
    }
}
