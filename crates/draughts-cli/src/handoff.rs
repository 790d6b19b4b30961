//! Handing a command to the training binary. `draughts` does not link libtorch; the commands
//! that need it (training, and playing a ResNet) run in `draughts-train`, installed beside it,
//! which takes the same arguments. `draughts` replaces itself with it (`exec`), so standard
//! input and output, the exit status and signals are the sibling's: to the user it is one
//! command.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The training binary's file name.
pub const TRAIN_BIN: &str = "draughts-train";

/// Where the training binary is: `DRAUGHTS_TRAIN` if set, else beside this executable.
pub fn train_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("DRAUGHTS_TRAIN") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    Some(exe.with_file_name(TRAIN_BIN))
}

/// The first of `models` that is a ResNet (sparse ones play natively; unreadable ones are left
/// to the command, which reports them).
pub fn first_resnet(models: &[PathBuf]) -> Option<&Path> {
    models.iter().map(PathBuf::as_path).find(|m| matches!(crate::models::is_sparse(m), Ok(false)))
}

/// Runs this process's arguments in the training binary and does not return unless that
/// fails; `why` says what needs it, for the message when it is missing.
pub fn exec_train(why: &str) -> anyhow::Error {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let Some(bin) = train_binary() else {
        return anyhow::anyhow!("{why} needs {TRAIN_BIN}, and the path of this executable is unknown");
    };
    if !bin.is_file() {
        return anyhow::anyhow!(
            "{why} needs libtorch, which this binary does not load: the training binary {} is not installed (build it with `cargo build --release -p draughts-cli`, which builds both)",
            bin.display()
        );
    }
    let mut cmd = std::process::Command::new(&bin);
    cmd.args(&args);
    // libgomp reads this when libtorch is loaded (see draughts-train's main).
    if std::env::var_os("OMP_WAIT_POLICY").is_none() {
        cmd.env("OMP_WAIT_POLICY", "PASSIVE");
    }
    exec(cmd, &bin)
}

#[cfg(unix)]
fn exec(mut cmd: std::process::Command, bin: &Path) -> anyhow::Error {
    use std::os::unix::process::CommandExt;
    let err = cmd.exec();
    anyhow::anyhow!("could not run {}: {err}", bin.display())
}

#[cfg(not(unix))]
fn exec(mut cmd: std::process::Command, bin: &Path) -> anyhow::Error {
    match cmd.status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(err) => anyhow::anyhow!("could not run {}: {err}", bin.display()),
    }
}

/// What the training commands do, for the help of both binaries.
pub mod about {
    pub const SELFPLAY: &str = "Play self-play games with the run's newest network into its shards (one of any number of workers on a run, a directory or s3://BUCKET/PREFIX)";
    pub const TRAIN: &str = "Train the network on the run's replay window; writes a checkpoint (--follow: keep training as workers add games)";
    pub const LOOP: &str = "The main job: self-play, training and evaluation in cycles until a budget is spent. Safe to kill and restart with the same command";
    pub const EXPORT: &str = "Copy a checkpoint into a model directory with a model card (models/NAME/), ready for `draughts hub --model DIR`, and a TorchScript file";
    pub const BENCH: &str = "Benchmarks that print their figures (default: the search benchmark)";
}
