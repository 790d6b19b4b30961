//! `draughts-train`: every command of `draughts`, and the ones that need libtorch (self-play
//! with a ResNet, training, the loop, export, benchmarks). `draughts` hands those to this binary
//! with the same arguments, so users keep typing `draughts loop ...`. The play commands are the
//! library's (`draughts_cli`); here they can also play ResNet models, through libtorch.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use draughts_cli::handoff::about;
use draughts_cli::{Cli, PlayCommand};

pub use draughts_cli::{alphabeta, arena, bad_input, config, error, rundir, BadInput};

mod bench;
mod cycle;
mod export;
mod models;
mod nnplayers;
mod remote;
mod selfplay;
mod settings;
mod train;

#[derive(Debug, Subcommand)]
enum Command {
    #[command(flatten)]
    Play(PlayCommand),
    #[command(about = about::SELFPLAY)]
    Selfplay(selfplay::Args),
    #[command(about = about::TRAIN)]
    Train(train::Args),
    #[command(about = about::LOOP)]
    Loop(cycle::Args),
    #[command(about = about::EXPORT)]
    Export(export::Args),
    #[command(about = about::BENCH)]
    Bench(bench::Args),
}

/// libgomp (libtorch's OpenMP) reads `OMP_WAIT_POLICY` when it is loaded, before `main`. Its
/// default spins idle threads, which starves everything else on a machine with few cores (measured:
/// training fell from 1.1k to 0.1-0.4k samples/s while another process ran). So the binary
/// re-executes itself once with `PASSIVE` unless the user chose a policy (`draughts` sets it when
/// it hands a command over).
#[cfg(unix)]
fn ensure_passive_omp() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("OMP_WAIT_POLICY").is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let err = std::process::Command::new(exe).args(std::env::args_os().skip(1)).env("OMP_WAIT_POLICY", "PASSIVE").exec();
    // Only reached if exec failed: carry on with the default policy.
    eprintln!("warning: could not set OMP_WAIT_POLICY=PASSIVE ({err}); continuing");
}

#[cfg(not(unix))]
fn ensure_passive_omp() {}

fn main() -> ExitCode {
    ensure_passive_omp();
    draughts_cli::nnplayers::install_resnet_backend(Box::new(nnplayers::Torch));
    let cli = Cli::<Command>::parse();
    let result = match cli.command {
        Command::Play(c) => c.run(),
        Command::Selfplay(a) => selfplay::run(a),
        Command::Train(a) => train::run(a),
        Command::Loop(a) => cycle::run(a),
        Command::Export(a) => export::run(a),
        Command::Bench(a) => bench::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => error::report(&e),
    }
}
