//! `draughts selfplay`: generate training games into a run directory.

use std::ops::ControlFlow;
use std::process::ExitCode;

use std::sync::Arc;
use std::time::Instant;

use draughts_engine::EngineConfig;
use draughts_mcts::NnueEvaluator;
use draughts_model::NetKind;
use draughts_nn::{checkpoint, InferenceServer};
use draughts_nnue::Network;
use draughts_selfplay::{run_alphabeta_workers, run_workers, FinishedGame, Generator, Progress, ShardWriter};
use indicatif::{ProgressBar, ProgressStyle};

use crate::rundir::RunDir;
use crate::settings::Config;
use crate::{bad_input, models};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub run_args: crate::settings::RunArgs,
    /// Number of games to play.
    #[arg(long, default_value_t = 100)]
    pub games: u64,
    /// Distinguishes workers that share a run directory (their games get different seeds).
    #[arg(long, default_value_t = 0)]
    pub worker_id: u64,
}

/// Mixes numbers into a seed (SplitMix64 finaliser).
pub fn mix(mut x: u64, parts: &[u64]) -> u64 {
    for p in parts {
        x ^= p.wrapping_add(0x9E37_79B9_7F4A_7C15).wrapping_add(x << 6).wrapping_add(x >> 2);
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^= x >> 31;
    }
    x
}

/// What a self-play stage produced.
#[derive(Debug)]
pub struct SelfplayStats {
    pub games: u64,
    pub positions: u64,
    pub records: u64,
    pub seconds: f64,
    pub evals_per_second: f64,
    pub mean_batch: f64,
    pub model: String,
    pub seed: u64,
    pub white_wins: u64,
    pub black_wins: u64,
    pub draws: u64,
    pub plies: u64,
    /// Which generator played (and with what evaluation).
    pub generator: String,
}

/// Plays `games` games with the run's newest model and writes them as shards (used by
/// `selfplay` and `loop`). `salt` makes the seed differ between stages and restarts. The games
/// stop early (those finished are kept) at `deadline`.
///
/// The generator follows the config: MCTS (a ResNet through the libtorch inference thread, a
/// sparse net natively on every worker) or alpha-beta at a fixed node budget (a sparse net as
/// the evaluation; the hand-made evaluation while the run has only its untrained step-0 net,
/// so the first generation learns from the engine's own games).
pub fn play(
    run: &RunDir,
    cfg: &Config,
    games: u64,
    salt: &[u64],
    show_progress: bool,
    deadline: Option<Instant>,
) -> anyhow::Result<SelfplayStats> {
    let device = cfg.inference.device.resolve()?;
    let (net, meta) = models::load_or_init(&run.checkpoints(), cfg, device)?;
    let mut sp = cfg.selfplay.clone();
    sp.seed = mix(cfg.seed, salt);
    let mut mcts = cfg.mcts;
    mcts.seed = sp.seed;
    let mut writer = ShardWriter::new(run.games(), &meta.model_id, &sp)?;
    let pb = if show_progress { ProgressBar::new(games) } else { ProgressBar::hidden() };
    pb.set_style(
        ProgressStyle::with_template("selfplay {elapsed_precise} [{bar:30}] {pos}/{len} games  {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let alphabeta = sp.generator == Generator::Alphabeta;
    let mut generator = "mcts, libtorch inference thread".to_owned();
    let report = |p: &Progress| {
        pb.set_position(p.games);
        let secs = p.elapsed.as_secs_f64().max(1e-9);
        if alphabeta {
            pb.set_message(format!("{:.0} nodes/s, {:.0} moves/s", p.positions as f64 / secs, p.moves as f64 / secs));
        } else {
            pb.set_message(format!(
                "{:.0} positions/s, {:.0} evals/s, batch {:.1}",
                p.positions_per_second(),
                p.positions as f64 / secs,
                p.mean_batch()
            ));
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let sink = |g: FinishedGame| writer.add(&g).map(drop);
    let sidecar = checkpoint::sidecar_path(&run.checkpoints(), &meta.model_id);
    let result = match (cfg.net.kind, sp.generator) {
        (NetKind::Resnet, Generator::Mcts) => {
            let server = InferenceServer::spawn(net, &cfg.inference)?;
            let handle = server.handle();
            let r = run_workers(&sp, &mcts, |_| handle.clone(), games, sink, report);
            drop(handle);
            server.shutdown();
            r
        }
        (NetKind::Sparse, Generator::Mcts) => {
            drop(net);
            let native = Arc::new(Network::load(&sidecar).map_err(bad_input)?);
            generator = format!("mcts, native {} kernels", native.kernels());
            run_workers(&sp, &mcts, |_| NnueEvaluator::new(native.clone()), games, sink, report)
        }
        (NetKind::Sparse, Generator::Alphabeta) => {
            drop(net);
            let engine = if meta.step == 0 {
                generator = "alphabeta, hand-made evaluation (no trained network yet)".to_owned();
                EngineConfig::default()
            } else {
                let native = Arc::new(Network::load(&sidecar).map_err(bad_input)?);
                generator = format!("alphabeta, network {} ({} kernels)", native.model_id(), native.kernels());
                EngineConfig::learned(native)
            };
            run_alphabeta_workers(&sp, &engine, games, sink, report)
        }
        (NetKind::Resnet, Generator::Alphabeta) => {
            return Err(bad_input("[selfplay] generator = \"alphabeta\" needs [net] kind = \"sparse\" (a ResNet is too slow for alpha-beta)"));
        }
    };
    let flushed = writer.flush();
    pb.finish_and_clear();
    let p = result?;
    flushed?;
    let seconds = p.elapsed.as_secs_f64();
    Ok(SelfplayStats {
        games: p.games,
        positions: p.positions,
        records: p.records,
        seconds,
        evals_per_second: p.positions as f64 / seconds.max(1e-9),
        mean_batch: p.mean_batch(),
        model: meta.model_id,
        seed: sp.seed,
        white_wins: p.white_wins,
        black_wins: p.black_wins,
        draws: p.draws,
        plies: p.moves,
        generator,
    })
}

pub fn metrics_fields(s: &SelfplayStats, cycle: Option<u64>) -> serde_json::Value {
    let mut v = serde_json::json!({
        "games": s.games,
        "positions": s.records,
        "evaluations": s.positions,
        "seconds": s.seconds,
        "games_per_hour": s.games as f64 * 3600.0 / s.seconds.max(1e-9),
        "positions_per_second": s.records as f64 / s.seconds.max(1e-9),
        "evals_per_second": s.evals_per_second,
        "mean_batch": s.mean_batch,
        "model": s.model,
        "seed": s.seed,
        "plies_mean": s.plies as f64 / s.games.max(1) as f64,
        "white_wins": s.white_wins,
        "draws": s.draws,
        "black_wins": s.black_wins,
        "generator": s.generator,
    });
    if let Some(c) = cycle {
        v["cycle"] = serde_json::json!(c);
    }
    v
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let (cfg, run) = a.run_args.open()?;
    let existing = draughts_selfplay::list_shards(run.games()).map(|v| v.len() as u64).unwrap_or(0);
    let salt = [1, a.worker_id, existing, crate::rundir::unix_now() as u64];
    let stats = play(&run, &cfg, a.games, &salt, true, None)?;
    run.metric("selfplay", metrics_fields(&stats, None))?;
    println!(
        "{} games, {} positions recorded in {:.1} s: {:.0} games/hour, {:.0} evaluations/s (mean batch {:.1}), model {}, seed {}",
        stats.games,
        stats.records,
        stats.seconds,
        stats.games as f64 * 3600.0 / stats.seconds.max(1e-9),
        stats.evals_per_second,
        stats.mean_batch,
        stats.model,
        stats.seed
    );
    Ok(ExitCode::SUCCESS)
}
