//! `draughts hub`: the Hub protocol engine on standard input and output.

use std::process::ExitCode;

use draughts_engine::Level;
use draughts_protocol::{run_hub_with, HubConfig};

use crate::alphabeta::AlphaBeta;
use crate::nnplayers::NetSearcher;
use crate::bad_input;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Playing strength: easy, medium or hard.
    #[arg(long, default_value = "hard")]
    level: String,
    /// An exported model directory to play with (the "hard" network opponent).
    #[arg(long)]
    model: Option<std::path::PathBuf>,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 64)]
    hash: usize,
    /// Simulations per move for the network when the GUI gives no limit.
    #[arg(long, default_value_t = 200)]
    sims: u32,
    /// Seed for the randomness of the easy level.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let level: Level = a.level.parse().map_err(bad_input)?;
    let config = HubConfig { version: env!("CARGO_PKG_VERSION").to_owned(), ..HubConfig::default() };
    let stdin = std::io::stdin();
    match (&a.model, level) {
        // The network plays the hard level; easy and medium stay with the alpha-beta engine,
        // whose strength is easy to limit.
        (Some(model), Level::Hard) => {
            draughts_nn::tch::set_num_threads(1);
            let mut searcher = NetSearcher::new(model, a.sims)?;
            run_hub_with(&mut searcher, stdin.lock(), std::io::stdout(), &config)?;
        }
        _ => {
            let mut searcher = AlphaBeta::new(level, a.hash.max(1), a.seed)?;
            run_hub_with(&mut searcher, stdin.lock(), std::io::stdout(), &config)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
