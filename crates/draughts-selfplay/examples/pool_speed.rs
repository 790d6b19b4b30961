//! How close self-play comes to the speed of the network.
//!
//! A fake evaluator costs a fixed time per position (a busy wait, like a network at
//! 1e6 / COST_US positions per second on one core). The example measures its raw rate on full
//! batches, then the rate of positions evaluated inside self-play with the same batch size:
//!
//! - one worker with its own evaluator: tree work and forward passes alternate on one thread;
//! - one worker with a free evaluator: the pool's own cost per position (tree work, move
//!   generation, batching), and the share of a network's time it implies;
//! - two workers sharing one evaluator behind a mutex (one inference thread serving both, as
//!   with the libtorch backend): one worker's tree work overlaps the other's forward pass.
//!
//! ```text
//! cargo run --release -p draughts-selfplay --example pool_speed -- [COST_US] [BATCH] [SECONDS] [SIMS]
//! ```
//! Defaults: 100 us per position, batch 64, 5 s per measurement, 32 simulations (Gumbel).

use std::ops::ControlFlow;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use draughts_core::{Game, Rules};
use draughts_mcts::{EvalError, EvalRequest, Evaluation, Evaluator, Material, MctsConfig};
use draughts_selfplay::{run_workers, SelfplayConfig};

/// Spins `cost` per position, then answers like [`Material`].
#[derive(Debug)]
struct FakeNet {
    cost: Duration,
}

impl Evaluator for FakeNet {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        let until = Instant::now() + self.cost * batch.len() as u32;
        let out = Material::default().evaluate(batch);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        out
    }
}

/// One network shared by several workers: a batch at a time, like one inference thread.
#[derive(Debug)]
struct Shared<'a>(&'a Mutex<FakeNet>);

impl Evaluator for Shared<'_> {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        let net = self.0.lock().map_err(|_| EvalError::new("poisoned"))?;
        net.evaluate(batch)
    }
}

/// Positions per second of `net` alone on batches of `batch` real middle-game positions.
fn raw_rate(net: &FakeNet, batch: usize, seconds: f64) -> f64 {
    let mut game = Game::new(Rules::FMJD);
    let mut requests = Vec::new();
    while requests.len() < batch {
        if game.outcome().is_some() {
            game = Game::new(Rules::FMJD);
        }
        let moves = game.legal_moves();
        requests.push(EvalRequest {
            position: *game.position(),
            counters: game.counters(),
            repetitions: game.repetition_count(),
            moves: moves.clone(),
        });
        game.play_unchecked(moves[requests.len() * 7 % moves.len()]);
    }
    let start = Instant::now();
    let mut n = 0;
    while start.elapsed().as_secs_f64() < seconds {
        n += net.evaluate(&requests).expect("fake evaluator").len();
    }
    n as f64 / start.elapsed().as_secs_f64()
}

/// Positions per second inside self-play, measured over `seconds` after one second of warm-up.
fn selfplay_rate<E: Evaluator, F: Fn(usize) -> E + Sync>(
    config: &SelfplayConfig,
    mcts: &MctsConfig,
    factory: F,
    seconds: f64,
) -> (f64, f64, u64) {
    let mut mark: Option<(Duration, u64)> = None;
    let mut result = (0.0, 0.0, 0);
    run_workers(
        config,
        mcts,
        factory,
        u64::MAX,
        |_| Ok::<(), std::io::Error>(()),
        |p| {
            let (t0, n0) = *mark.get_or_insert((p.elapsed, p.positions));
            if p.elapsed < Duration::from_secs(1) {
                mark = Some((p.elapsed, p.positions));
                return ControlFlow::Continue(());
            }
            let span = (p.elapsed - t0).as_secs_f64();
            result = ((p.positions - n0) as f64 / span.max(1e-9), p.mean_batch(), p.games);
            if span >= seconds {
                ControlFlow::Break(draughts_selfplay::Stop::Now)
            } else {
                ControlFlow::Continue(())
            }
        },
    )
    .expect("self-play");
    result
}

fn main() {
    let args: Vec<f64> = std::env::args().skip(1).map(|a| a.parse().expect("numeric argument")).collect();
    let arg = |i: usize, d: f64| args.get(i).copied().unwrap_or(d);
    let cost = Duration::from_nanos((arg(0, 100.0) * 1000.0) as u64);
    let batch = arg(1, 64.0) as usize;
    let seconds = arg(2, 5.0);
    let sims = arg(3, 32.0) as u32;

    let mcts = MctsConfig { simulations: sims, ..MctsConfig::default() };
    let config = SelfplayConfig {
        games_in_flight: batch,
        max_batch: batch,
        resign_consecutive: 0,
        random_opening_plies: 4,
        ..SelfplayConfig::default()
    };
    let net = FakeNet { cost };
    println!("fake network: {:?} per position, batch {batch}, {sims} simulations (gumbel)", cost);
    let raw = raw_rate(&net, batch, seconds.min(3.0));
    println!("evaluator alone:                      {raw:>9.0} positions/s");

    let (rate, mean, games) = selfplay_rate(&config, &mcts, |_| FakeNet { cost }, seconds);
    println!(
        "self-play, 1 worker:                  {rate:>9.0} positions/s  ({:.1}% of raw; mean batch {mean:.1}; {games} games)",
        100.0 * rate / raw
    );

    // The pool's own cost: self-play with a free evaluator (the Material answers only). The
    // fraction of a network's time this adds is what one worker loses.
    let (free, _, _) = selfplay_rate(&config, &mcts, |_| FakeNet { cost: Duration::ZERO }, seconds.min(3.0));
    let overhead = 1e6 / free;
    let per_position = cost.as_secs_f64() * 1e6;
    println!(
        "self-play, free evaluator:            {free:>9.0} positions/s  ({overhead:.2} us of tree work per position: \
         1 worker reaches {:.1}% of a {per_position:.0} us/position network)",
        100.0 * per_position / (per_position + overhead)
    );

    let shared = Mutex::new(FakeNet { cost });
    let two = SelfplayConfig { workers: 2, ..config.clone() };
    let (rate, mean, games) = selfplay_rate(&two, &mcts, |_| Shared(&shared), seconds);
    println!(
        "self-play, 2 workers, 1 shared net:   {rate:>9.0} positions/s  ({:.1}% of raw; mean batch {mean:.1}; {games} games)",
        100.0 * rate / raw
    );
}
