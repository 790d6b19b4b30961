//! The commands of `draughts` that only play: rules, PDN, search, the Hub and DXP engines,
//! matches and tournaments, the web server and run reports. None of them links libtorch, so the
//! `draughts` binary starts in milliseconds and a site that only serves the computer opponent
//! installs one small file. The commands that train (`selfplay`, `train`, `loop`, `export`,
//! `bench`) live in the sibling binary `draughts-train`, which links libtorch and runs every
//! command; `draughts` hands those to it (see [`handoff`]). Errors become messages and exit
//! codes: 0 success, 1 failure, 2 bad input (FEN, move text, PDN, config, shard, checkpoint,
//! protocol line), always with a message that names what is wrong and where.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod alphabeta;
pub mod arena;
pub mod config;
pub mod dxp;
pub mod egtb;
pub mod error;
pub mod handoff;
pub mod hub;
pub mod ladder;
pub mod models;
pub mod moves;
pub mod nnplayers;
pub mod pdn;
pub mod perft;
pub mod report;
pub mod rundir;
pub mod search;
pub mod serve;

pub use error::{bad_input, BadInput};

// The command line of both binaries; `C` is each one's commands (the play commands flattened in).
/// International draughts (10x10, FMJD rules): rules, search, self-play training and evaluation.
#[derive(Debug, Parser)]
#[command(name = "draughts", bin_name = "draughts", version, propagate_version = true)]
pub struct Cli<C: Subcommand> {
    #[command(subcommand)]
    pub command: C,
}

/// The commands both binaries run without libtorch.
#[derive(Debug, Subcommand)]
pub enum PlayCommand {
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
    /// Write PNG plots and a Markdown summary of a training run (DIR/report/).
    Report(report::Args),
    /// Serve the play page, the JSON API for game sites and a training run's page over HTTP.
    Serve(serve::Args),
    /// Endgame databases: build, probe and verify win/draw/loss tables of up to N pieces.
    Egtb(egtb::Args),
    /// The levels people play (configs/levels.toml): show them with their ratings, or rate them.
    Levels(ladder::Args),
}

impl PlayCommand {
    /// The network models the command names (a ResNet among them needs libtorch).
    pub fn models(&self) -> Vec<PathBuf> {
        match self {
            PlayCommand::Hub(a) => a.models(),
            PlayCommand::Dxp(a) => a.models(),
            PlayCommand::Match(a) => a.models(),
            PlayCommand::Tournament(a) => a.models(),
            PlayCommand::Gate(a) => a.models(),
            PlayCommand::Serve(a) => a.models(),
            PlayCommand::Perft(_) | PlayCommand::Moves(_) | PlayCommand::Pdn(_) | PlayCommand::Search(_) | PlayCommand::Report(_) | PlayCommand::Egtb(_) => Vec::new(),
            PlayCommand::Levels(_) => Vec::new(),
        }
    }

    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            PlayCommand::Perft(a) => perft::run(a),
            PlayCommand::Moves(a) => moves::run(a),
            PlayCommand::Pdn(a) => pdn::run(a),
            PlayCommand::Search(a) => search::run(a),
            PlayCommand::Hub(a) => hub::run(a),
            PlayCommand::Dxp(a) => dxp::run(a),
            PlayCommand::Match(a) => arena::run_match_cmd(a),
            PlayCommand::Tournament(a) => arena::run_tournament_cmd(a),
            PlayCommand::Gate(a) => arena::run_gate_cmd(a),
            PlayCommand::Report(a) => report::run(a),
            PlayCommand::Serve(a) => serve::run(a),
            PlayCommand::Egtb(a) => egtb::run(a),
            PlayCommand::Levels(a) => ladder::run(a),
        }
    }
}
