//! `draughts bench`: benchmarks that print their figures.

use std::process::ExitCode;
use std::time::Instant;

use draughts_core::{perft, Position};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: Option<What>,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Self-play against the raw network: batched forward passes per second, then network
    /// evaluations per second inside self-play, same net and batch size, in one run.
    Selfplay {
        /// The config file (its [net], [inference], [mcts] and [selfplay] sections are used).
        #[arg(long)]
        config: std::path::PathBuf,
        /// Games to play (default: twice the games in flight).
        #[arg(long)]
        games: Option<u64>,
        /// Stop self-play after this many seconds (the games finished by then are counted).
        #[arg(long)]
        seconds: Option<f64>,
        /// Override a config value (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
    },
    /// Alpha-beta search of a fixed set of positions to a fixed depth: total nodes (the
    /// regression check for search changes) and nodes per second.
    Search {
        /// Depth of every search.
        #[arg(long, default_value_t = DEFAULT_BENCH_DEPTH)]
        depth: u32,
    },
    /// The native sparse network: positions/s from scratch and per incremental update (AVX2 and
    /// scalar kernels), alpha-beta nodes/s with it against the hand-made evaluation on the
    /// bench positions (alternating rounds, one core), and MCTS evaluations/s natively against
    /// a ResNet through libtorch.
    Nnue {
        /// The sparse model (model or run directory, or checkpoint).
        #[arg(long)]
        model: std::path::PathBuf,
        /// A ResNet model to compare MCTS evaluations with (default: the shipped models/cpu-2h
        /// when it is there).
        #[arg(long)]
        resnet: Option<std::path::PathBuf>,
        /// Depth of the alpha-beta bench.
        #[arg(long, default_value_t = 9)]
        depth: u32,
        /// Rounds of the alpha-beta comparison (each searches the bench with both evaluations).
        #[arg(long, default_value_t = 3)]
        rounds: u32,
    },
    /// Threads (Lazy SMP): each bench position searched for a fixed time with 1, 2, ... threads
    /// (rounds alternate the thread counts): nodes per second with its ratio to one thread, and
    /// the depth completed.
    Threads {
        /// The most threads (default: one per core); every count from 1 up is measured.
        #[arg(long)]
        threads: Option<u16>,
        /// Milliseconds per position.
        #[arg(long, default_value_t = 500)]
        movetime: u64,
        /// A sparse model as the evaluation (default: the hand-made one).
        #[arg(long)]
        model: Option<std::path::PathBuf>,
        /// Rounds (each searches every position once with every thread count).
        #[arg(long, default_value_t = 2)]
        rounds: u32,
        /// Transposition table size in MiB.
        #[arg(long, default_value_t = 64)]
        hash: usize,
    },
    /// Perft leaves per second from the start position, single-threaded and parallel.
    Perft {
        /// Shallowest depth.
        #[arg(long, default_value_t = 9)]
        min_depth: u32,
        /// Deepest depth (11 takes a minute or so on one core).
        #[arg(long, default_value_t = 11)]
        max_depth: u32,
        /// Threads for the parallel run (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
    },
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.what {
        Some(What::Perft { min_depth, max_depth, threads }) => bench_perft(min_depth, max_depth, threads),
        Some(What::Search { depth }) => bench_search(depth),
        Some(What::Threads { threads, movetime, model, rounds, hash }) => bench_threads(threads, movetime, model.as_deref(), rounds, hash),
        Some(What::Selfplay { config, games, seconds, overrides }) => bench_selfplay(&config, games, seconds, &overrides),
        Some(What::Nnue { model, resnet, depth, rounds }) => bench_nnue(&model, resnet.as_deref(), depth, rounds),
        None => bench_search(DEFAULT_BENCH_DEPTH),
    }
}

/// Depth of `draughts bench` when none is given.
const DEFAULT_BENCH_DEPTH: u32 = 10;

fn bench_search(depth: u32) -> anyhow::Result<ExitCode> {
    let r = draughts_engine::bench(depth);
    for p in &r.per_position {
        let best = p.best.map_or("-".to_owned(), |m| m.to_hub());
        println!("{:<60} {:>12} nodes  {:>8} best {}  score {}", p.fen, p.nodes, format!("{:.3}s", p.time.as_secs_f64()), best, p.score);
    }
    println!("bench depth {}: {} nodes in {:.3} s, {} nodes/s", r.depth, r.nodes, r.time.as_secs_f64(), r.nps);
    Ok(ExitCode::SUCCESS)
}

fn bench_threads(threads: Option<u16>, movetime: u64, model: Option<&std::path::Path>, rounds: u32, hash: usize) -> anyhow::Result<ExitCode> {
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    use draughts_core::{Game, Rules};
    use draughts_engine::{Engine, EngineConfig, Limits, SearchOptions, BENCH_POSITIONS};

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u16;
    let max = threads.unwrap_or(cores);
    if !(1..=SearchOptions::MAX_THREADS).contains(&max) || movetime == 0 || rounds == 0 || hash == 0 {
        return Err(crate::bad_input("bench threads: --threads is 1 to 256, --movetime, --rounds and --hash at least 1"));
    }
    let network = match model {
        Some(m) => Some(crate::models::load_native(m)?),
        None => None,
    };
    let eval = network.as_ref().map_or("hand-made evaluation".to_owned(), |n| format!("network {}", n.model_id()));
    println!(
        "threads 1 to {max} ({cores} cores here), {eval}, {} positions x {movetime} ms, {rounds} rounds, {hash} MiB table",
        BENCH_POSITIONS.len()
    );
    // Per thread count: nodes, seconds, and the depth completed in each search.
    let mut totals: Vec<(u64, f64, Vec<u32>)> = vec![(0, 0.0, Vec::new()); max as usize];
    let limits = Limits::movetime(Duration::from_millis(movetime));
    let stop = AtomicBool::new(false);
    for round in 0..rounds {
        // Alternate the order of the thread counts, so that a drift in machine load is shared.
        let order: Vec<u16> = if round % 2 == 0 { (1..=max).collect() } else { (1..=max).rev().collect() };
        for t in order {
            let options = SearchOptions { threads: t, ..SearchOptions::defaults(network.is_some()) };
            let mut engine = Engine::new(EngineConfig { tt_mib: hash, network: network.clone(), options, ..EngineConfig::default() })?;
            for fen in BENCH_POSITIONS {
                let game = Game::from_position(Position::from_fen(fen).expect("bench positions are valid FEN"), Rules::FMJD);
                engine.new_game();
                let r = engine.search(&game, &limits, &stop, &mut |_| {});
                let slot = &mut totals[t as usize - 1];
                slot.0 += r.nodes;
                slot.1 += r.time.as_secs_f64();
                slot.2.push(r.depth);
            }
        }
    }
    println!("{:>7} {:>14} {:>8} {:>13} {:>11}", "threads", "nodes/s", "ratio", "median depth", "mean depth");
    let nps1 = totals[0].0 as f64 / totals[0].1.max(1e-9);
    let mean = |d: &[u32]| d.iter().map(|&x| x as f64).sum::<f64>() / d.len().max(1) as f64;
    for (i, (nodes, secs, depths)) in totals.iter_mut().enumerate() {
        let nps = *nodes as f64 / secs.max(1e-9);
        depths.sort_unstable();
        let median = depths[depths.len() / 2];
        println!("{:>7} {:>14.0} {:>8.2} {:>13} {:>11.2}", i + 1, nps, nps / nps1, median, mean(depths));
    }
    Ok(ExitCode::SUCCESS)
}

fn bench_selfplay(path: &std::path::Path, games: Option<u64>, seconds: Option<f64>, overrides: &[String]) -> anyhow::Result<ExitCode> {
    use crate::settings::Config;
    let (mut cfg, _) = crate::config::load::<Config>(path, overrides)?;
    cfg.resolve()?;
    let device = cfg.inference.device.resolve()?;
    let batch = cfg.selfplay.max_batch.min(cfg.inference.max_batch);
    draughts_nn::tch::set_num_threads(cfg.inference.torch_threads as i32);
    let net = draughts_nn::Net::new(&cfg.net, device, cfg.seed)?;
    // Raw: batched forward passes of the same net at the self-play batch size, on this thread
    // with the inference thread's torch thread count.
    let mixed = cfg.inference.mixed_precision && device.is_cuda();
    let raw = draughts_nn::bench_forward_mixed(&net, batch, 200, mixed)?;
    println!(
        "net {}, batch {batch}, {} torch thread(s), device {device:?}, mixed precision {}",
        cfg.net.short_name(),
        cfg.inference.torch_threads,
        if mixed { "on" } else { "off" }
    );
    println!("raw forward:          {raw:>10.0} positions/s");
    let dir = std::env::temp_dir().join(format!("draughts-bench-selfplay-{}", std::process::id()));
    let run = crate::rundir::RunDir::create(&dir)?;
    let checkpoints = run.checkpoints();
    let info = draughts_nn::CheckpointInfo { name: cfg.name.clone(), step: 0, rules: cfg.rules.clone(), seed: cfg.seed, parent: None };
    draughts_nn::checkpoint::save(&net, &checkpoints, &info)?;
    drop(net);
    let games = games.unwrap_or(2 * cfg.selfplay.games_in_flight as u64 * cfg.selfplay.workers as u64);
    let deadline = seconds.map(|s| Instant::now() + std::time::Duration::from_secs_f64(s.max(0.0)));
    let stats = crate::selfplay::play(&run, &cfg, games, &[7], true, deadline, Default::default());
    // Measure the raw rate again after self-play, so that a change in machine load between the
    // two shows up instead of skewing the ratio silently.
    let (net, _) = crate::models::load_or_init(&checkpoints, &cfg, device)?;
    let raw_after = draughts_nn::bench_forward_mixed(&net, batch, 200, mixed)?;
    std::fs::remove_dir_all(&dir).ok();
    let stats = stats?;
    println!("raw forward, again:   {raw_after:>10.0} positions/s");
    let raw = (raw + raw_after) / 2.0;
    println!("self-play:            {:>10.0} evaluations/s (mean batch {:.1})", stats.evals_per_second, stats.mean_batch);
    println!("ratio:                {:>10.1} %", 100.0 * stats.evals_per_second / raw);
    println!(
        "games: {} in {:.1} s = {:.0} games/hour ({:.1} plies/game, {} recorded positions)",
        stats.games,
        stats.seconds,
        stats.games as f64 * 3600.0 / stats.seconds.max(1e-9),
        stats.plies as f64 / stats.games.max(1) as f64,
        stats.records
    );
    Ok(ExitCode::SUCCESS)
}

/// Nanoseconds per call of `f` over `items`, best of three passes (the machine is noisy; the
/// best pass is the least disturbed).
fn per_item<T>(items: &[T], mut f: impl FnMut(&T)) -> f64 {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            items.iter().for_each(&mut f);
            t.elapsed().as_secs_f64() * 1e9 / items.len().max(1) as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn bench_nnue(model: &std::path::Path, resnet: Option<&std::path::Path>, depth: u32, rounds: u32) -> anyhow::Result<ExitCode> {
    use std::sync::Arc;

    use draughts_engine::{bench as hand_bench, bench_with, EngineConfig};
    use draughts_mcts::{Budget, Evaluator, NnueEvaluator};
    use draughts_core::Color;
    use draughts_nnue::{Accumulator, Network, Precision, Scratch, Simd};

    let net = crate::models::load_native(model)?;
    println!("network {} ({}, {} parameters)", net.model_id(), net.architecture().short_name(), net.parameter_count());
    // Positions from seeded random games, each with the move played from it.
    let states = draughts_nn::bench::sample_states(20_000, draughts_nn::bench::BENCH_SEED);
    let mut pairs = Vec::new();
    for s in &states {
        let moves = s.position.legal_moves();
        if let Some(&mv) = moves.first() {
            pairs.push((s.position, mv, moves));
        }
    }
    // The same games as steps: each game's first position, then each move played in it (the
    // updates and update+eval columns follow the games).
    enum Step {
        Start(Position),
        Move(Position, draughts_core::Move),
    }
    /// Makes `b` the accumulator after `step` (`a` the one before a move): the next game's first
    /// position (copied from `starts`, counted by `game`) or the move played from `a`'s position,
    /// whose side to move it returns.
    fn follow(n: &Network, starts: &[Accumulator], game: &mut usize, step: &Step, a: &mut Accumulator, b: &mut Accumulator) -> Option<Color> {
        match step {
            Step::Start(_) => {
                b.copy_from(&starts[*game % starts.len()]);
                *game += 1;
                None
            }
            Step::Move(p, m) => {
                std::mem::swap(a, b);
                n.update(a, p, m, b);
                Some(!p.side_to_move())
            }
        }
    }
    let mut steps: Vec<Step> = states.first().map(|s| Step::Start(s.position)).into_iter().collect();
    for w in states.windows(2) {
        let (p, next) = (w[0].position, w[1].position);
        match p.legal_moves().into_iter().find(|m| p.play(m) == next) {
            Some(mv) => steps.push(Step::Move(p, mv)),
            None => steps.push(Step::Start(next)),
        }
    }
    println!(
        "native evaluation, one core, {} positions from random games (ns per position, best of 3 passes; updates follow the games):",
        pairs.len()
    );
    match net.quantisation() {
        Ok(()) => println!("quantised (int8): yes"),
        Err(why) => println!("quantised (int8): no, {why}; the int8 rows below run in float"),
    }
    println!("{:<16} {:>10} {:>10} {:>10} {:>12} {:>14}", "kernels", "refresh", "update", "evaluate", "update+eval", "scratch+policy");
    for (simd, precision) in [(Simd::Auto, Precision::Float), (Simd::Auto, Precision::Int8), (Simd::Scalar, Precision::Float), (Simd::Scalar, Precision::Int8)] {
        let n: Network = (*net).clone().with_simd(simd);
        let mut scratch = Scratch::default();
        let (mut a, mut b) = (n.new_accumulator_with(precision), n.new_accumulator_with(precision));
        let mut sink = 0.0f32;
        let refresh = per_item(&pairs, |(p, _, _)| n.refresh(p, &mut a));
        // Updates along the games, each from the accumulator the one before made (hot in cache,
        // as in a search, and carrying its position's block configurations); a game's first
        // position is copied from its refresh.
        let starts: Vec<_> = steps
            .iter()
            .filter_map(|step| match step {
                Step::Start(p) => {
                    let mut acc = n.new_accumulator_with(precision);
                    n.refresh(p, &mut acc);
                    Some(acc)
                }
                Step::Move(..) => None,
            })
            .collect();
        let mut game = 0;
        let update = per_item(&steps, |step| {
            follow(&n, &starts, &mut game, step, &mut a, &mut b);
        });
        let eval = per_item(&pairs, |(p, _, _)| sink += n.evaluate(&a, p.side_to_move(), &mut scratch).wdl_logits[0]);
        let both = per_item(&steps, |step| {
            if let Some(side) = follow(&n, &starts, &mut game, step, &mut a, &mut b) {
                sink += n.evaluate(&b, side, &mut scratch).wdl_logits[0];
            }
        });
        let mut policy = Vec::new();
        let full = per_item(&pairs, |(p, _, moves)| {
            sink += n.evaluate_position_with(precision, p, moves, &mut scratch, &mut policy).wdl_logits[1]
        });
        let name = format!("{} {}", n.kernels(), n.supported(precision).name());
        println!("{name:<16} {refresh:>10.0} {update:>10.0} {eval:>10.0} {both:>12.0} {full:>14.0}");
        println!(
            "{:<16} from scratch {:.0} positions/s; incremental update + evaluation {:.0} positions/s; with the policy {:.0} positions/s{}",
            "",
            1e9 / (refresh + eval),
            1e9 / both,
            1e9 / full,
            if sink.is_nan() { " (NaN seen)" } else { "" }
        );
    }

    println!("alpha-beta on the bench positions, depth {depth}, one core (rounds alternate the three evaluations):");
    let (mut float_ratios, mut int8_ratios) = (Vec::new(), Vec::new());
    let with = |quantised: bool| {
        let mut config = EngineConfig::learned(net.clone());
        config.options.quantised = quantised;
        config
    };
    for round in 1..=rounds.max(1) {
        let h = hand_bench(depth);
        let f = bench_with(with(false), depth);
        let q = bench_with(with(true), depth);
        let (rf, rq) = (f.nps as f64 / h.nps.max(1) as f64, q.nps as f64 / h.nps.max(1) as f64);
        float_ratios.push(rf);
        int8_ratios.push(rq);
        println!(
            "round {round}: hand-made {} nodes {} nodes/s | network float {} nodes {} nodes/s ({:.1}%) | int8 {} nodes {} nodes/s ({:.1}%)",
            h.nodes,
            h.nps,
            f.nodes,
            f.nps,
            100.0 * rf,
            q.nodes,
            q.nps,
            100.0 * rq
        );
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        100.0 * v[v.len() / 2]
    };
    println!(
        "median ratio to the hand-made nodes/s: network float {:.1}%, int8 {:.1}%",
        median(float_ratios),
        median(int8_ratios)
    );

    println!("MCTS evaluations/s (one search at a time, 800 simulations from each of 8 positions, one core):");
    let mcts_rate = |evaluator: &dyn Evaluator| -> anyhow::Result<f64> {
        let config = crate::nnplayers::play_config(800);
        let start = Instant::now();
        let mut sims = 0u64;
        for s in states.iter().step_by(states.len() / 8).take(8) {
            let game = draughts_core::Game::with_counters(s.position, s.counters, draughts_core::Rules::FMJD);
            if game.outcome().is_some() {
                continue;
            }
            let mut search = draughts_mcts::Search::new(game, config)?;
            sims += search.search(evaluator, Budget::full(800))?.simulations as u64 + 1;
        }
        Ok(sims as f64 / start.elapsed().as_secs_f64())
    };
    let native = mcts_rate(&NnueEvaluator::new(Arc::clone(&net)))?;
    println!("native sparse network:  {native:>10.0} evaluations/s");
    let quantised = NnueEvaluator::new(Arc::clone(&net)).with_precision(Precision::Int8);
    if quantised.precision() == Precision::Int8 {
        let int8 = mcts_rate(&quantised)?;
        println!("the same, int8:         {int8:>10.0} evaluations/s ({:.2}x)", int8 / native.max(1e-9));
    }
    let default_resnet = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/cpu-2h");
    let resnet = resnet.map(std::path::Path::to_path_buf).or_else(|| default_resnet.is_dir().then_some(default_resnet));
    if let Some(r) = resnet {
        draughts_nn::tch::set_num_threads(1);
        let (rnet, meta) = crate::models::load_model(&r, draughts_nn::tch::Device::Cpu)?;
        let evaluator = draughts_nn::NetEvaluator::new(rnet, 256);
        let slow = mcts_rate(&evaluator)?;
        println!("ResNet {} ({}) through libtorch: {slow:>10.0} evaluations/s ({:.0}x fewer)", meta.model_id, meta.architecture.short_name(), native / slow.max(1e-9));
    }
    Ok(ExitCode::SUCCESS)
}

fn bench_perft(min_depth: u32, max_depth: u32, threads: Option<usize>) -> anyhow::Result<ExitCode> {
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build()?;
    let pos = Position::start();
    println!("perft from the start position, bulk counting; {threads} thread(s) for the parallel run");
    println!("{:>5} {:>14} {:>10} {:>14} {:>10} {:>14} {:>8}", "depth", "leaves", "1T s", "1T leaves/s", "NT s", "NT leaves/s", "speedup");
    for depth in min_depth..=max_depth {
        let t = Instant::now();
        let n1 = perft::perft(&pos, depth);
        let s1 = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let n2 = pool.install(|| perft::perft_parallel(&pos, depth));
        let s2 = t.elapsed().as_secs_f64();
        anyhow::ensure!(n1 == n2, "single-threaded and parallel perft disagree at depth {depth}: {n1} vs {n2}");
        println!(
            "{depth:>5} {n1:>14} {s1:>10.3} {:>12.1} M {s2:>10.3} {:>12.1} M {:>7.2}x",
            n1 as f64 / s1 / 1e6,
            n2 as f64 / s2 / 1e6,
            s1 / s2
        );
    }
    Ok(ExitCode::SUCCESS)
}
