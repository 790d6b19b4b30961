//! `draughts dxp`: play over the DamExchange protocol.

use std::process::ExitCode;

use draughts_core::Rules;
use draughts_engine::Level;
use draughts_protocol::dxp::{EndCause, Verdict};
use draughts_protocol::{dxp_connect, dxp_listen, ConnectOptions, GameRecord, ListenOptions, PlayerOptions};

use crate::alphabeta::AlphaBeta;
use crate::bad_input;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("role").required(true).args(["listen", "connect"])))]
pub struct Args {
    /// Wait for an initiator: `PORT` (loopback only) or `HOST:PORT`.
    #[arg(long)]
    listen: Option<String>,
    /// Connect to a follower at `HOST:PORT` and ask for games.
    #[arg(long)]
    connect: Option<String>,
    /// Games to play (initiator).
    #[arg(long, default_value_t = 1)]
    games: u32,
    /// Thinking time per side in minutes (initiator).
    #[arg(long, default_value_t = 5)]
    time: u16,
    /// Moves for that time, 0 for the whole game (initiator).
    #[arg(long, default_value_t = 0)]
    moves: u16,
    /// Playing strength: easy, medium or hard.
    #[arg(long, default_value = "hard")]
    level: String,
    /// Name sent to the peer.
    #[arg(long, default_value = "draughts")]
    name: String,
    /// Connections to serve before exiting (follower).
    #[arg(long, default_value_t = 1)]
    connections: usize,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 64)]
    hash: usize,
    /// Seed for the randomness of the easy level.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

fn describe(r: &GameRecord) -> String {
    let verdict = match r.verdict {
        Some(Verdict::Win) => "won",
        Some(Verdict::Draw) => "drew",
        Some(Verdict::Loss) => "lost",
        None => "no result",
    };
    let cause = match &r.end {
        EndCause::Rules(o) => o.to_string(),
        other => format!("{other:?}"),
    };
    format!("{} vs {}: {verdict} after {} plies ({cause})", r.our_color.name(), r.opponent, r.moves.len())
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let level: Level = a.level.parse().map_err(bad_input)?;
    let mut searcher = AlphaBeta::new(level, a.hash.max(1), a.seed)?;
    let player = PlayerOptions { name: a.name.clone(), rules: Rules::FMJD, ..PlayerOptions::default() };
    let records = if let Some(addr) = &a.listen {
        let opts = ListenOptions { player, connections: a.connections.max(1) };
        dxp_listen(addr, &mut searcher, &opts).map_err(bad_input)?
    } else {
        let addr = a.connect.as_deref().unwrap_or_default();
        let opts = ConnectOptions { player, games: a.games, time_minutes: a.time, moves: a.moves, ..ConnectOptions::default() };
        dxp_connect(addr, &mut searcher, &opts).map_err(bad_input)?
    };
    for (i, r) in records.iter().enumerate() {
        println!("game {}: {}", i + 1, describe(r));
    }
    Ok(ExitCode::SUCCESS)
}
