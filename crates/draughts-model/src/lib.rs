//! Model files without libtorch.
//!
//! A checkpoint called `ID` is two files in one directory: `ID.safetensors` (the weights) and
//! `ID.json`, the sidecar that says what they are ([`CheckpointMeta`]): the network's kind and
//! sizes ([`NetConfig`]), the input encoding version, the rules, the training step and
//! provenance, and the size and checksum of the weights. This crate owns that format so that
//! programs that only play (the native sparse-network inference in `draughts-nnue`, the engine,
//! the arena) read the same files as the libtorch trainer in `draughts-nn`, which writes them.
//!
//! - [`arch`]: [`NetConfig`], the architecture of either network kind ([`NetKind`]), as config
//!   files and sidecars write it.
//! - [`sidecar`]: [`CheckpointMeta`], [`read_meta`], [`read_weights`] (size and checksum checked),
//!   names and paths of checkpoint files, [`fnv1a64`].
//! - [`resolve`]: a model given on the command line (a checkpoint file, a model directory or a run
//!   directory) to the checkpoint it means.
//!
//! This crate does no computation on weights and links nothing native.

pub mod arch;
pub mod card;
pub mod resolve;
pub mod sidecar;
pub mod weights;

pub use arch::{ArchError, NetConfig, NetKind, MAX_PIECES};
pub use card::{directory_files, read_sums, sha256_hex, sums_section, verify_card, with_sums_section, CardError, CARD_FILE, SUMS_HEADING};
pub use resolve::{checkpoints_in, newest, resolve_model, ResolveError};
pub use sidecar::{
    fnv1a64, model_id, parse_json_named, read_file, read_meta, read_weights, rfc3339_utc, sidecar_of, sidecar_path,
    validate_name, weights_path, CheckpointMeta,
    MetaError, WeightsInfo, CHECKPOINT_FORMAT, ENCODING_VERSION, SIDECAR_EXTENSION, WEIGHTS_EXTENSION,
};
pub use weights::read_tensors;
