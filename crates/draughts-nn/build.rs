//! Make binaries find libtorch at run time without LD_LIBRARY_PATH.
//!
//! torch-sys (`links = "tch"`) exports the libtorch lib dir it linked against as
//! `DEP_TCH_LIBTORCH_LIB`, but only to crates that depend on it directly, and it passes an rpath
//! only to its own C++ wrapper. We add `-Wl,-rpath,<dir>` to the link of this crate's own
//! binaries, tests, examples and benches.
//!
//! `cargo:rustc-link-arg` does NOT propagate to dependents. A downstream crate with a binary (the
//! `draughts` CLI) must emit the rpath itself: its build.rs reads `DEP_DRAUGHTS_NN_LIBTORCH_LIB`
//! (re-exported below; visible to direct dependents of this crate because of `links`) and prints
//! the same `cargo:rustc-link-arg=-Wl,-rpath,<dir>`. See `libtorch_rpath_build_script` in lib.rs.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let lib = std::env::var("DEP_TCH_LIBTORCH_LIB").expect(
        "DEP_TCH_LIBTORCH_LIB not set: torch-sys must be a direct dependency of draughts-nn",
    );
    println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");
    // -> DEP_DRAUGHTS_NN_LIBTORCH_LIB for the build scripts of direct dependents.
    println!("cargo:libtorch_lib={lib}");
    // -> env!("DRAUGHTS_LIBTORCH_LIB") in this crate (tests check for a CUDA build with it).
    println!("cargo:rustc-env=DRAUGHTS_LIBTORCH_LIB={lib}");
    // -> env!("DRAUGHTS_LIBTORCH_VERSION"), recorded in checkpoint sidecars.
    println!(
        "cargo:rustc-env=DRAUGHTS_LIBTORCH_VERSION={}",
        libtorch_version(&lib)
    );
}

/// The libtorch version: `<libtorch>/build-version` for an unpacked libtorch (what `scripts/setup`
/// writes), `<site-packages>/torch/version.py` for a PyTorch install. torch-sys has already
/// checked it against the version it expects; "unknown" if neither file is there.
fn libtorch_version(lib: &str) -> String {
    let lib = std::path::Path::new(lib);
    let Some(root) = lib.parent() else {
        return "unknown".to_owned();
    };
    let build_version = root.join("build-version");
    if let Ok(text) = std::fs::read_to_string(&build_version) {
        println!("cargo:rerun-if-changed={}", build_version.display());
        return text.trim().to_owned();
    }
    let version_py = root.join("version.py");
    if let Ok(text) = std::fs::read_to_string(&version_py) {
        println!("cargo:rerun-if-changed={}", version_py.display());
        for line in text.lines() {
            if let Some(rest) = line.trim().strip_prefix("__version__") {
                let v = rest
                    .trim_start_matches([' ', '='])
                    .trim()
                    .trim_matches(['\'', '"']);
                return v.to_owned();
            }
        }
    }
    "unknown".to_owned()
}
