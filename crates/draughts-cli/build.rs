//! Lets the `draughts-train` binary (and the tests) find libtorch at run time without LD_LIBRARY_PATH: draughts-nn
//! re-exports the libtorch library directory (`DEP_DRAUGHTS_NN_LIBTORCH_LIB`, visible to its
//! direct dependents because of its `links` key) and this adds it as an rpath. A
//! `cargo:rustc-link-arg` from a dependency's build script does not reach this crate's link.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=DEP_DRAUGHTS_NN_LIBTORCH_LIB");
    if let Ok(lib) = std::env::var("DEP_DRAUGHTS_NN_LIBTORCH_LIB") {
        // Only the training binary links libtorch; `draughts` must not even look for it.
        println!("cargo:rustc-link-arg-bin=draughts-train=-Wl,-rpath,{lib}");
        // The integration tests make checkpoints with draughts-nn.
        println!("cargo:rustc-link-arg-tests=-Wl,-rpath,{lib}");
    }
}
