//! `draughts selfplay`: generate training games into a run directory.

use std::ops::ControlFlow;
use std::process::ExitCode;

use std::sync::Arc;
use std::time::{Duration, Instant};

use draughts_engine::EngineConfig;
use draughts_mcts::NnueEvaluator;
use draughts_model::NetKind;
use draughts_nn::{checkpoint, InferenceServer};
use draughts_nnue::Network;
use draughts_selfplay::{run_alphabeta_workers, run_workers, FinishedGame, Games, Generator, Progress, ShardWriter, Stop};
use indicatif::{ProgressBar, ProgressStyle};

use crate::remote::RunSync;
use crate::rundir::RunDir;
use crate::settings::Config;
use crate::{bad_input, models};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub run_args: crate::settings::RunArgs,
    /// Number of games to play; 0: no limit (until `--minutes`, or until the process is
    /// stopped).
    #[arg(long, default_value_t = 100)]
    pub games: u64,
    /// Stop after this many minutes (between games; games in flight then are dropped).
    #[arg(long)]
    pub minutes: Option<f64>,
    /// A number for this worker among those sharing the run (Slurm's array index, Kubernetes'
    /// completion index); logged, and mixed into the seed with the host, process id and time.
    #[arg(long, default_value_t = 0)]
    pub worker_id: u64,
    /// How often to look for a newer checkpoint in the run, in seconds. When one is there, the
    /// worker starts no new game, finishes those in flight and goes on with the new model.
    #[arg(long, default_value_t = 10.0)]
    pub model_poll_seconds: f64,
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

/// How a self-play worker shares its run (`Worker::default()`: the loop's stages, which own it).
#[derive(Clone, Copy, Debug, Default)]
pub struct Worker<'a> {
    /// How often to look for a newer checkpoint (and switch to it between games).
    pub watch: Option<Duration>,
    /// The run's object store, for a run in one: shards are pushed, checkpoints pulled.
    pub sync: Option<&'a RunSync>,
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
    /// Games ended by the endgame tables (`[selfplay] egtb_adjudicate`).
    pub egtb_adjudicated: u64,
    /// Which generator played (and with what evaluation).
    pub generator: String,
    /// The stage ended early because a newer checkpoint arrived (see [`play`]'s `watch`).
    pub newer_model: Option<String>,
    /// Games of the stage found already played (a restart of a stopped stage), not played again
    /// and not counted in `games`.
    pub resumed: u64,
}

/// Plays `games` games with the run's newest model and writes them as shards (used by
/// `selfplay` and `loop`). `salt` makes the seed differ between stages (and, for `selfplay`,
/// between restarts). The games this model already played under the same seed, in the run's
/// shards, are not played again: a `loop` killed in its self-play stage restarts it with the
/// same seed and plays only the games it had not written. The games stop early (those finished
/// are kept) at `deadline`.
///
/// The generator follows the config: MCTS (a ResNet through the libtorch inference thread, a
/// sparse net natively on every worker) or alpha-beta at a fixed node budget (a sparse net as
/// the evaluation; the hand-made evaluation while the run has only its untrained step-0 net,
/// so the first generation learns from the engine's own games).
///
/// With `worker.watch`, the run's checkpoints are looked at every so often; when one newer than
/// the model playing is there, no new game starts, the games in flight are finished and the
/// stats name the newer model (a worker then calls `play` again).
pub fn play(
    run: &RunDir,
    cfg: &Config,
    games: u64,
    salt: &[u64],
    show_progress: bool,
    deadline: Option<Instant>,
    worker: Worker<'_>,
) -> anyhow::Result<SelfplayStats> {
    let Worker { watch, sync } = worker;
    let device = cfg.inference.device.resolve()?;
    let (net, meta) = models::load_or_init(&run.checkpoints(), cfg, device)?;
    let mut sp = cfg.selfplay.clone();
    sp.seed = mix(cfg.seed, salt);
    let mut mcts = cfg.mcts;
    mcts.seed = sp.seed;
    let played = draughts_selfplay::played_indices(run.games(), &meta.model_id, sp.seed)?;
    let games = Games::resuming(games, played);
    let resumed = games.count - games.left();
    if resumed > 0 && show_progress {
        println!("self-play: {resumed} of the stage's {} games were already played (seed {}); playing the rest", games.count, sp.seed);
    }
    let mut writer = ShardWriter::new(run.games(), &meta.model_id, &sp)?;
    let pb = if show_progress { ProgressBar::new(games.left()) } else { ProgressBar::hidden() };
    pb.set_style(
        ProgressStyle::with_template("selfplay {elapsed_precise} [{bar:30}] {pos}/{len} games  {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let alphabeta = sp.generator == Generator::Alphabeta;
    let mut generator = "mcts, libtorch inference thread".to_owned();
    let mut last_look = Instant::now();
    let mut newer_model: Option<String> = None;
    let checkpoints = run.checkpoints();
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
            return ControlFlow::Break(Stop::Now);
        }
        if let Some(every) = watch {
            if newer_model.is_none() && last_look.elapsed() >= every {
                last_look = Instant::now();
                if let Some(Err(e)) = sync.map(RunSync::pull_newest_checkpoint) {
                    pb.println(format!("warning: looking for a newer model: {e:#}"));
                }
                if let Some((_, m)) = models::newest(&checkpoints) {
                    if m.step > meta.step && m.architecture == meta.architecture {
                        pb.println(format!("newer model {}: finishing the games in flight", m.model_id));
                        newer_model = Some(m.model_id);
                    }
                }
            }
            if newer_model.is_some() {
                return ControlFlow::Break(Stop::AfterGamesInFlight);
            }
        }
        ControlFlow::Continue(())
    };
    // A shard written goes to the store at once (for a run in one).
    let sink = |g: FinishedGame| -> anyhow::Result<()> {
        if let Some(shard) = writer.add(&g)? {
            sync.map(|s| s.push_shard(&shard)).transpose()?;
        }
        Ok(())
    };
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
            let rules: draughts_core::Rules = sp.rules.parse().map_err(bad_input)?;
            let resolve = mcts.capture_resolution as usize;
            if resolve > 0 {
                generator += &format!(", captures resolved at leaves (up to {resolve} positions)");
            }
            run_workers(&sp, &mcts, |_| NnueEvaluator::new(native.clone()).with_capture_resolution(rules, resolve), games, sink, report)
        }
        (NetKind::Sparse, Generator::Alphabeta) => {
            drop(net);
            // Step 0 without a parent is the untrained net; with one it is the config's `init`.
            let engine = if meta.step == 0 && meta.parent.is_none() {
                generator = "alphabeta, hand-made evaluation (no trained network yet)".to_owned();
                EngineConfig::default()
            } else {
                let native = Arc::new(Network::load(&sidecar).map_err(bad_input)?);
                generator = format!("alphabeta, network {} ({} kernels)", native.model_id(), native.kernels());
                EngineConfig::learned(native)
            };
            let egtb = if sp.egtb.is_empty() {
                None
            } else {
                let dir = std::path::Path::new(&sp.egtb);
                let egtb = draughts_cli::egtb::load(Some(dir)).map_err(|e| bad_input(format!("[selfplay] egtb: {e:#}")))?;
                generator += &format!(", endgame tables of up to {} pieces", egtb.as_ref().map_or(0, |e| e.pieces()));
                egtb
            };
            let opponent = if sp.alphabeta_opponent.is_empty() {
                None
            } else {
                let path = std::path::Path::new(&sp.alphabeta_opponent);
                let net = draughts_cli::models::load_for_alphabeta(Some(path), "it can only be an opponent in MCTS matches")
                    .map_err(|e| bad_input(format!("[selfplay] alphabeta_opponent: {e:#}")))?
                    .expect("a path was given");
                generator += &format!(", against {} (network {})", sp.alphabeta_opponent, net.model_id());
                Some(EngineConfig { egtb: egtb.clone(), ..EngineConfig::learned(net) })
            };
            run_alphabeta_workers(&sp, &EngineConfig { egtb, ..engine }, opponent.as_ref(), games, sink, report)
        }
        (NetKind::Resnet, Generator::Alphabeta) => {
            return Err(bad_input("[selfplay] generator = \"alphabeta\" needs [net] kind = \"sparse\" (a ResNet is too slow for alpha-beta)"));
        }
    };
    let flushed = writer.flush();
    pb.finish_and_clear();
    let p = result?;
    if let (Some(shard), Some(s)) = (flushed?, sync) {
        s.push_shard(&shard)?;
    }
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
        egtb_adjudicated: p.egtb,
        generator,
        newer_model,
        resumed,
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
        "egtb_adjudicated": s.egtb_adjudicated,
        "generator": s.generator,
    });
    if s.resumed > 0 {
        v["resumed_games"] = serde_json::json!(s.resumed);
    }
    if let Some(c) = cycle {
        v["cycle"] = serde_json::json!(c);
    }
    v
}

/// A number that tells this machine from others (a hash of its host name; 0 when unknown).
fn host_hash() -> u64 {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default();
    draughts_model::fnv1a64(name.trim().as_bytes())
}

/// `draughts selfplay`: one worker. Any number of them may share a run directory, with one
/// `draughts train` consuming it: shard names are unique, every file is written under a
/// temporary name and renamed, and a worker switches to each newer checkpoint between games
/// (one `selfplay` metrics line per model it played with).
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let (cfg, run) = a.run_args.open_run()?;
    let sync = run.sync.as_ref();
    if let Some(m) = a.minutes.filter(|m| !(m.is_finite() && *m > 0.0)) {
        return Err(bad_input(format!("--minutes {m}: must be a positive number")));
    }
    if !(a.model_poll_seconds.is_finite() && a.model_poll_seconds > 0.0) {
        return Err(bad_input(format!("--model-poll-seconds {}: must be a positive number", a.model_poll_seconds)));
    }
    let deadline = a.minutes.map(|m| Instant::now() + Duration::from_secs_f64(m * 60.0));
    let existing = draughts_selfplay::list_shards(run.dir.games()).map(|v| v.len() as u64).unwrap_or(0);
    // Workers may start at the same second with the same --worker-id on several machines: the
    // host, the process id and the clock's nanoseconds keep their games apart (the seed of each
    // stage is logged).
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let base = [1, a.worker_id, existing, host_hash(), std::process::id() as u64, nanos];
    let mut left = if a.games == 0 { u64::MAX } else { a.games };
    let watch = Some(Duration::from_secs_f64(a.model_poll_seconds));
    for stage in 0u64.. {
        let salt: Vec<u64> = base.iter().copied().chain([stage]).collect();
        if let Some(s) = sync {
            s.pull_newest_checkpoint()?;
        }
        let stats = play(&run.dir, &cfg, left, &salt, true, deadline, Worker { watch, sync })?;
        let mut fields = metrics_fields(&stats, None);
        fields["worker_id"] = serde_json::json!(a.worker_id);
        fields["pid"] = serde_json::json!(std::process::id());
        if stats.games > 0 {
            run.metric("selfplay", fields)?;
        }
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
        if stats.egtb_adjudicated > 0 {
            println!("{} of them ended by the endgame tables", stats.egtb_adjudicated);
        }
        left = left.saturating_sub(stats.games);
        let past = deadline.is_some_and(|d| Instant::now() >= d);
        match stats.newer_model {
            Some(m) if left > 0 && !past => println!("switching to {m}"),
            _ => break,
        }
    }
    Ok(ExitCode::SUCCESS)
}
