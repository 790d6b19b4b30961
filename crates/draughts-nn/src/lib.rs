//! Neural network for the draughts trainer, on libtorch through `tch`.
//!
//! For now only a smoke check that libtorch builds, links and runs.
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

pub use tch;

use anyhow::{ensure, Result};
use tch::{Device, Kind, Tensor};

/// The libtorch lib directory this crate was linked against.
pub const LIBTORCH_LIB: &str = env!("DRAUGHTS_LIBTORCH_LIB");

/// Runs a tiny libtorch computation on the CPU and checks its result: the sum of the entries of
/// `A * A^T` for `A = [[1, 2], [3, 4]]`, which is 52.
pub fn libtorch_smoke() -> Result<f64> {
    let a = Tensor::from_slice(&[1.0f32, 2.0, 3.0, 4.0])
        .reshape([2, 2])
        .to_device(Device::Cpu);
    let product = a.matmul(&a.tr());
    let sum = f64::try_from(product.sum(Kind::Double))?;
    ensure!(sum == 52.0, "libtorch computed {sum}, expected 52");
    Ok(sum)
}

/// Whether libtorch sees a usable CUDA device. False on CPU-only installs; never panics.
pub fn cuda_available() -> bool {
    tch::Cuda::is_available()
}
