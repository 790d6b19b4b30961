//! `draughts hub`: the Hub protocol engine on standard input and output.

use std::process::ExitCode;

use draughts_protocol::{run_hub_with, HubConfig};

use crate::nnplayers::protocol_engine;
use crate::bad_input;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Playing strength: a level of the levels file (the shipped ones: beginner, easy, casual, medium, strong, expert, hard).
    #[arg(long, default_value = "hard")]
    level: String,
    /// An exported model directory to play with (the "hard" network opponent).
    #[arg(long)]
    model: Option<std::path::PathBuf>,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 64)]
    hash: usize,
    /// Endgame databases (`draughts egtb build`), probed at the levels with `egtb = true`.
    #[arg(long)]
    egtb: Option<std::path::PathBuf>,
    /// The levels, as `draughts serve --levels` takes them (default: the shipped
    /// configs/levels.toml); `--level` names one of them.
    #[arg(long)]
    levels: Option<std::path::PathBuf>,
    /// Vary the first moves as the level says (`noise_plies`: the shipped hard level, 12 plies
    /// within 10 centi-men), as `draughts serve` does for people; off by default, since engine
    /// matches want the full strength (the variety costs about 25 Elo at 100 ms a move).
    #[arg(long)]
    variety: bool,
    /// Search threads of the alpha-beta engine (Lazy SMP, 1 to 256; Hub: also `set-param
    /// name=threads`).
    #[arg(long)]
    threads: Option<u16>,
    /// Simulations per move for the network when the GUI gives no limit.
    #[arg(long, default_value_t = 200)]
    sims: u32,
    /// Seed of the levels' random choices (mixed with the game's number and the ply).
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

impl Args {
    /// The model this engine plays with, if any.
    pub fn models(&self) -> Vec<std::path::PathBuf> {
        self.model.iter().cloned().collect()
    }
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let levels = crate::serve::levels::load(a.levels.as_deref())?;
    let config = HubConfig { version: env!("CARGO_PKG_VERSION").to_owned(), ..HubConfig::default() };
    let stdin = std::io::stdin();
    let mut searcher = protocol_engine(levels, &a.level, a.model.as_deref(), a.sims, a.hash, a.seed, crate::egtb::load(a.egtb.as_deref())?, a.variety)?;
    if let Some(t) = a.threads {
        searcher.set_param("threads", &t.to_string()).map_err(|e| bad_input(format!("--threads: {e}")))?;
    }
    run_hub_with(searcher.as_mut(), stdin.lock(), std::io::stdout(), &config)?;
    Ok(ExitCode::SUCCESS)
}
