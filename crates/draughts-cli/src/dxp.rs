//! `draughts dxp`: play over the DamExchange protocol.

use std::process::ExitCode;

use draughts_core::Rules;
use draughts_protocol::dxp::{EndCause, Verdict};
use draughts_protocol::dxp::DxpListener;
use draughts_protocol::{dxp_connect, ConnectOptions, GameRecord, ListenOptions, PlayerOptions, SearchLimit};

use crate::nnplayers::EngineArgs;
use crate::bad_input;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("role").required(true).args(["listen", "connect"])))]
pub struct Args {
    /// Wait for an initiator: `PORT` (loopback only; 0 picks a free port) or `HOST:PORT`. Prints
    /// `listening on ADDR` once it listens.
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
    #[command(flatten)]
    engine: EngineArgs,
    /// Name sent to the peer.
    #[arg(long, default_value = "draughts")]
    name: String,
    /// Connections to serve before exiting (follower).
    #[arg(long, default_value_t = 1)]
    connections: usize,
    /// Search this many nodes per move, whatever the clock says (deterministic play).
    #[arg(long)]
    nodes: Option<u64>,
    /// Search to this depth per move, whatever the clock says.
    #[arg(long)]
    depth: Option<u32>,
    /// Initiator: play every opening of this file (one FEN per line, or PDN) twice, colours
    /// swapped, one connection per opening, instead of games from the start position.
    #[arg(long)]
    openings: Option<std::path::PathBuf>,
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

impl Args {
    /// The model this engine plays with, if any.
    pub fn models(&self) -> Vec<std::path::PathBuf> {
        self.engine.models()
    }
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    // With a ResNet model the network plays the hard level; --nodes then counts simulations.
    let mut searcher = a.engine.engine()?;
    let searcher = searcher.as_mut();
    println!("engine: {}", searcher.name());
    let fixed = (a.nodes.is_some() || a.depth.is_some())
        .then(|| SearchLimit { nodes: a.nodes, depth: a.depth, ..SearchLimit::default() });
    let player = PlayerOptions { name: a.name.clone(), rules: Rules::FMJD, limit: fixed, ..PlayerOptions::default() };
    let records = if let Some(addr) = &a.listen {
        let opts = ListenOptions { player, connections: a.connections.max(1) };
        let listener = DxpListener::bind(addr).map_err(bad_input)?;
        // Scripts and tests wait for this line (with `--listen 0`, it names the port chosen).
        println!("listening on {}", listener.local_addr().map_err(bad_input)?);
        std::io::Write::flush(&mut std::io::stdout())?;
        listener.serve(searcher, &opts).map_err(bad_input)?
    } else {
        let addr = a.connect.as_deref().unwrap_or_default();
        let base = ConnectOptions { player, games: a.games, time_minutes: a.time, moves: a.moves, ..ConnectOptions::default() };
        match &a.openings {
            None => dxp_connect(addr, searcher, &base).map_err(bad_input)?,
            Some(path) => {
                let openings = draughts_arena::openings::load(path, &Rules::FMJD).map_err(bad_input)?;
                let mut all = Vec::new();
                for o in &openings {
                    let start = o.moves.iter().fold(o.start, |p, m| p.play(m));
                    let opts = ConnectOptions { games: 2, start: Some(start), ..base.clone() };
                    all.extend(dxp_connect(addr, searcher, &opts).map_err(bad_input)?);
                }
                all
            }
        }
    };
    let mut score = 0.0;
    for (i, r) in records.iter().enumerate() {
        println!("game {}: {}", i + 1, describe(r));
        score += match r.verdict {
            Some(Verdict::Win) => 1.0,
            Some(Verdict::Draw) => 0.5,
            _ => 0.0,
        };
    }
    println!("score {score}/{} ({:.1}%)", records.len(), 100.0 * score / records.len().max(1) as f64);
    Ok(ExitCode::SUCCESS)
}
