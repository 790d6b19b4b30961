//! `draughts search`.

use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use draughts_core::{Game, Position, Rules};
use draughts_engine::{mate_distance, Engine, EngineConfig, Limits, SearchOptions};

use crate::bad_input;

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("limit").required(true).args(["depth", "nodes", "movetime"])))]
pub struct Args {
    /// The position as FEN.
    #[arg(long)]
    fen: String,
    /// Search to this depth.
    #[arg(long)]
    depth: Option<u32>,
    /// Search this many nodes (deterministic).
    #[arg(long)]
    nodes: Option<u64>,
    /// Search this many milliseconds.
    #[arg(long)]
    movetime: Option<u64>,
    /// Transposition table size in MiB.
    #[arg(long, default_value_t = 64)]
    hash: usize,
    /// Rules preset: fmjd, no-capture-25, promote-in-capture.
    #[arg(long, default_value = "fmjd")]
    rules: String,
    /// A sparse network (model or run directory, or checkpoint) as the evaluation instead of the
    /// hand-made one.
    #[arg(long)]
    model: Option<std::path::PathBuf>,
    /// Search options as NAME=VALUE (repeatable, or comma-separated): full_time, qs_threat,
    /// qs_promotions, qs_exchanges, single_reply, probcut, lmr_early, lmr_history, lmr_cut, lmr_log,
    /// iir, iir_cut, cont_history, corr_history, lmp, improving, time_policy, drawish, singular,
    /// singular_all, singular_negative, rfp, futility, lazy_eval, quantised, policy_order (on/off),
    /// probcut_margin, rfp_margin, futility_margin, lazy_margin, singular_margin and aspiration
    /// (centi-men), lmp_moves, lmr_moves, lmr_nonpv_moves, singular_all_depth, policy_depth and
    /// threads.
    #[arg(long = "opt", value_name = "NAME=VALUE")]
    opts: Vec<String>,
    /// Endgame databases (`draughts egtb build`) probed in the search.
    #[arg(long)]
    egtb: Option<std::path::PathBuf>,
    /// Search threads sharing the transposition table (Lazy SMP), 1 to 256; with more than one a
    /// node-limited search is no longer reproducible.
    #[arg(long)]
    threads: Option<u16>,
}

/// Writes a score as centi-men or as a forced result in plies.
/// A database win or loss reached `n` plies from the root is `dbwin{n}` or `dbloss{n}`.
pub fn score_text(score: i32) -> String {
    let db = draughts_engine::TB_WIN - draughts_engine::MAX_PLY as i32;
    match mate_distance(score) {
        Some(n) if n >= 0 => format!("win{n}"),
        Some(n) => format!("loss{}", -n),
        None if score >= db => format!("dbwin{}", draughts_engine::TB_WIN - score),
        None if score <= -db => format!("dbloss{}", draughts_engine::TB_WIN + score),
        None => score.to_string(),
    }
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let rules: Rules = a.rules.parse().map_err(bad_input)?;
    let pos = Position::from_fen(&a.fen).map_err(bad_input)?;
    if a.hash == 0 {
        return Err(bad_input("--hash must be at least 1 MiB"));
    }
    let game = Game::from_position(pos, rules);
    let limits = Limits { depth: a.depth, nodes: a.nodes, movetime: a.movetime.map(Duration::from_millis), ..Limits::default() };
    let network = crate::models::load_for_alphabeta(a.model.as_deref(), "a ResNet plays through MCTS: `draughts hub --model`, `mcts:model=`")?;
    if let Some(n) = &network {
        println!("# evaluation: network {} ({}, {} kernels)", n.model_id(), n.architecture().short_name(), n.kernels());
    }
    let mut options = SearchOptions::defaults(network.is_some());
    for o in &a.opts {
        options.parse_list(o).map_err(|e| bad_input(format!("--opt {o}: {e}")))?;
    }
    if let Some(t) = a.threads {
        options.set("threads", &t.to_string()).map_err(|e| bad_input(format!("--threads: {e}")))?;
    }
    let egtb = crate::egtb::load(a.egtb.as_deref())?;
    if let Some(e) = &egtb {
        println!("# endgame databases: up to {} pieces", e.pieces());
    }
    let mut engine = Engine::new(EngineConfig { tt_mib: a.hash, network, options, egtb, ..EngineConfig::default() })?;
    let stop = AtomicBool::new(false);
    println!("# depth score nodes nps pv");
    let result = engine.search(&game, &limits, &stop, &mut |i| {
        let mut p = pos;
        let mut pv = Vec::new();
        for m in &i.pv {
            pv.push(p.to_pdn(m, &rules));
            p = p.play(m);
        }
        println!("{} {} {} {} {}", i.depth, score_text(i.score), i.nodes, i.nps, pv.join(" "));
    });
    if result.tbhits > 0 {
        println!("# endgame database hits: {}", result.tbhits);
    }
    match result.best {
        Some(m) => println!("bestmove {}", pos.to_pdn(&m, &rules)),
        None => println!("bestmove (none): {}", game.outcome().map_or("no legal move".to_owned(), |o| o.to_string())),
    }
    Ok(ExitCode::SUCCESS)
}
