//! The `draughts` command. It parses arguments, wires the crates together and turns library
//! errors into messages and exit codes: 0 success, 1 failure, 2 bad input (FEN, move text, PDN,
//! config, shard, checkpoint, protocol line), always with a message that names what is wrong and
//! where.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench;
mod error;
mod moves;
mod pdn;
mod perft;

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
    /// Benchmarks that print their figures.
    Bench(bench::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(a) => perft::run(a),
        Command::Moves(a) => moves::run(a),
        Command::Pdn(a) => pdn::run(a),
        Command::Bench(a) => bench::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => error::report(&e),
    }
}
