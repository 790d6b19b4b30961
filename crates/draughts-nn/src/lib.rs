//! Neural network for the draughts trainer, on libtorch through `tch`. The only crate of the
//! workspace that links libtorch.
//!
//! - [`encoding`]: position + draw-rule counters + repetitions -> input planes, from the side to
//!   move's view ([`ENCODING_VERSION`]).
//! - [`policy`]: moves <-> the 2500 policy indices; masked softmax over the legal moves.
//! - [`net`]: the residual network ([`Net`], [`NetConfig`]).
//! - [`checkpoint`]: safetensors weights + JSON sidecar, saved atomically, loaded with checks.
//! - [`inference`]: [`NetEvaluator`] (synchronous) and [`InferenceServer`] / [`InferenceHandle`]
//!   (one thread owns the net and serves batches to many callers).
//! - `mcts`: [`NetEvaluator`] and [`InferenceHandle`] implement the search's
//!   [`draughts_mcts::Evaluator`].
//! - [`train`]: replay window over the run's shards, batches, loss, optimizers with saved state,
//!   [`Trainer`] (exact resume).
//! - [`mod@bench`]: raw forward speed ([`bench_forward`]) and seeded sample positions.
//!
//! # Linking
//! libtorch is found through `LIBTORCH` (set by `.cargo/config.toml` to `<repo>/.libtorch`, which
//! `scripts/setup` creates). This crate's build.rs gives its own tests an rpath to the libtorch lib
//! dir. A crate that depends on `draughts-nn` and builds a binary must add the rpath to its own
//! link with a build.rs like this (cargo passes `DEP_DRAUGHTS_NN_LIBTORCH_LIB` to build scripts of
//! direct dependents of this crate):
//!
//! ```text
//! fn main() {
//!     if let Ok(lib) = std::env::var("DEP_DRAUGHTS_NN_LIBTORCH_LIB") {
//!         println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
//!     }
//! }
//! ```

pub mod bench;
pub mod checkpoint;
pub mod encoding;
pub mod inference;
mod mcts;
pub mod net;
pub mod policy;
pub mod torchscript;
pub mod train;

pub use tch;

pub use bench::{bench_forward, bench_forward_mixed};
pub use checkpoint::{CheckpointError, CheckpointInfo, CheckpointMeta};
pub use encoding::{EncodeInput, ENCODING_VERSION, INPUT_SIZE, PLANES};
pub use inference::{
    DeviceChoice, InferenceConfig, InferenceError, InferenceHandle, InferenceServer, NetEvaluation,
    NetEvaluator, NetInput, NetRequest,
};
pub use net::{Net, NetConfig, NetError, NetKind, NetOutput};
pub use policy::POLICY_SIZE;
pub use train::{TrainConfig, TrainError, Trainer, Window};

use tch::{Device, Kind, Tensor};

/// The libtorch lib directory this crate was linked against.
pub const LIBTORCH_LIB: &str = env!("DRAUGHTS_LIBTORCH_LIB");

/// Runs a tiny libtorch computation on the CPU and checks its result: the sum of the entries of
/// `A * A^T` for `A = [[1, 2], [3, 4]]`, which is 52.
pub fn libtorch_smoke() -> Result<f64, tch::TchError> {
    let a = Tensor::f_from_slice(&[1.0f32, 2.0, 3.0, 4.0])?
        .f_reshape([2, 2])?
        .f_to_device(Device::Cpu)?;
    let product = a.f_matmul(&a.f_tr()?)?;
    let sum = f64::try_from(product.f_sum(Kind::Double)?)?;
    if sum != 52.0 {
        return Err(tch::TchError::Torch(format!(
            "libtorch computed {sum}, expected 52"
        )));
    }
    Ok(sum)
}

/// Whether libtorch sees a usable CUDA device. False on CPU-only installs; never panics.
pub fn cuda_available() -> bool {
    tch::Cuda::is_available()
}
