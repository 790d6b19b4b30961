//! The `draughts` command. It parses arguments, wires the crates together and turns library
//! errors into messages and exit codes: 0 success, 1 failure, 2 bad input (FEN, move text, PDN,
//! config, shard, checkpoint, protocol line), always with a message that names what is wrong and
//! where.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod alphabeta;
mod arena;
mod bench;
mod cycle;
mod config;
mod dxp;
mod error;
mod export;
mod hub;
mod models;
mod nnplayers;
mod moves;
mod pdn;
mod perft;
mod report;
mod rundir;
mod selfplay;
mod settings;
mod train;
mod search;

pub use error::{bad_input, BadInput};

/// International draughts (10x10, FMJD rules): rules, search, self-play training and evaluation.
#[derive(Debug, Parser)]
#[command(name = "draughts", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Count move paths to a depth (the standard check of the move generator).
    Perft(perft::Args),
    /// List the legal moves of a position, or of one FEN per line on standard input.
    Moves(moves::Args),
    /// PDN tools.
    Pdn(pdn::Args),
    /// Search a position with the alpha-beta engine; prints each iteration and `bestmove`.
    Search(search::Args),
    /// Run as a Hub protocol engine on standard input and output.
    Hub(hub::Args),
    /// Play over the DamExchange protocol (DXP), as follower (--listen) or initiator (--connect).
    Dxp(dxp::Args),
    /// Play a match between two players and rate it (Elo with a 95% interval over game pairs).
    Match(arena::MatchArgs),
    /// Round robin between several players; maximum-likelihood ratings with intervals.
    Tournament(arena::TournamentArgs),
    /// SPRT gate: exit 0 when the candidate is accepted as stronger, 1 otherwise.
    Gate(arena::GateArgs),
    /// Play self-play games with the run's newest network into its shards.
    Selfplay(selfplay::Args),
    /// Train the network on the run's replay window; writes a checkpoint.
    Train(train::Args),
    /// The main job: self-play, training and evaluation in cycles until a budget is spent.
    /// Safe to kill and restart with the same command.
    Loop(cycle::Args),
    /// Copy a checkpoint into a model directory with a model card (models/NAME/), ready for
    /// `draughts hub --model DIR`.
    Export(export::Args),
    /// Write PNG plots and a Markdown summary of a training run (DIR/report/).
    Report(report::Args),
    /// Benchmarks that print their figures (default: the search benchmark).
    Bench(bench::Args),
}

/// libgomp (libtorch's OpenMP) reads `OMP_WAIT_POLICY` when it is loaded, before `main`. Its
/// default spins idle threads, which starves everything else on a machine with few cores (measured:
/// training fell from 1.1k to 0.1-0.4k samples/s while another process ran). So the binary
/// re-executes itself once with `PASSIVE` unless the user chose a policy.
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
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(a) => perft::run(a),
        Command::Moves(a) => moves::run(a),
        Command::Pdn(a) => pdn::run(a),
        Command::Search(a) => search::run(a),
        Command::Hub(a) => hub::run(a),
        Command::Dxp(a) => dxp::run(a),
        Command::Match(a) => arena::run_match_cmd(a),
        Command::Tournament(a) => arena::run_tournament_cmd(a),
        Command::Gate(a) => arena::run_gate_cmd(a),
        Command::Selfplay(a) => selfplay::run(a),
        Command::Train(a) => train::run(a),
        Command::Loop(a) => cycle::run(a),
        Command::Export(a) => export::run(a),
        Command::Report(a) => report::run(a),
        Command::Bench(a) => bench::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => error::report(&e),
    }
}
