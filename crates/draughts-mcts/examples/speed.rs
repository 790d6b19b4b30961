//! Search overhead: simulations per second with the `Uniform` evaluator, which costs next to
//! nothing, so the figures are the cost of the tree search itself (selection, move generation,
//! draw rules, backup, request building).
//!
//! `cargo run --release -p draughts-mcts --example speed`
//!
//! For scale: the small CPU network does about 10k positions per second on this machine, i.e.
//! 100 us per evaluated leaf; the search should cost a small fraction of that.

use std::time::Instant;

use draughts_core::{Game, Rules};
use draughts_mcts::{Algorithm, Budget, MctsConfig, Search, Step, Uniform};
use draughts_mcts::{Evaluator, Material};
use rand::{Rng, SeedableRng};

fn games(n: usize, seed: u64) -> Vec<Game> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut g = Game::new(Rules::FMJD);
            for _ in 0..rng.gen_range(0..40) {
                let moves = g.legal_moves();
                if g.outcome().is_some() {
                    break;
                }
                g.play_unchecked(moves[rng.gen_range(0..moves.len())]);
            }
            g
        })
        .filter(|g| g.outcome().is_none())
        .collect()
}

/// Plays `moves` moves in each game with `search()` (one search at a time, tree reuse on).
fn alone(config: MctsConfig, sims: u32, moves: usize, evaluator: &impl Evaluator) -> (u64, f64) {
    let start = Instant::now();
    let mut total = 0u64;
    for (i, g) in games(16, 7).into_iter().enumerate() {
        let mut s = Search::new(g, MctsConfig { seed: i as u64, ..config }).unwrap();
        for _ in 0..moves {
            if s.game().outcome().is_some() {
                break;
            }
            let out = s.search(evaluator, Budget::full(sims)).unwrap();
            total += out.simulations as u64;
            s.advance(out.best).unwrap();
        }
    }
    (total, start.elapsed().as_secs_f64())
}

/// 64 games in flight driven with `step`/`provide`, one evaluator call per round.
fn pooled(config: MctsConfig, sims: u32, moves: usize, evaluator: &impl Evaluator) -> (u64, f64, f64) {
    let start = Instant::now();
    let mut searches: Vec<Search> = games(64, 9)
        .into_iter()
        .enumerate()
        .map(|(i, g)| Search::new(g, MctsConfig { seed: i as u64, ..config }).unwrap())
        .collect();
    let (mut total, mut calls, mut positions) = (0u64, 0u64, 0u64);
    for _ in 0..moves {
        let live: Vec<usize> = (0..searches.len()).filter(|&i| searches[i].game().outcome().is_none()).collect();
        for &i in &live {
            searches[i].start(Budget::full(sims)).unwrap();
        }
        loop {
            let (mut requests, mut owners) = (Vec::new(), Vec::new());
            for &i in &live {
                while let Step::Eval { ticket, request } = searches[i].step() {
                    requests.push(request);
                    owners.push((i, ticket));
                }
            }
            if requests.is_empty() {
                break;
            }
            calls += 1;
            positions += requests.len() as u64;
            let evals = evaluator.evaluate(&requests).unwrap();
            for ((i, t), e) in owners.into_iter().zip(evals) {
                searches[i].provide(t, e).unwrap();
            }
        }
        for &i in &live {
            let out = searches[i].outcome().unwrap();
            total += out.simulations as u64;
            searches[i].advance(out.best).unwrap();
        }
    }
    (total, start.elapsed().as_secs_f64(), positions as f64 / calls as f64)
}

fn main() {
    println!("{:<8} {:>5} {:>9} {:>12} {:>10} {:>10}", "algo", "sims", "driver", "evaluator", "sims/s", "us/sim");
    for algorithm in [Algorithm::Puct, Algorithm::Gumbel] {
        let config = MctsConfig { algorithm, ..MctsConfig::default() };
        for sims in [32, 256] {
            let moves = if sims > 100 { 4 } else { 16 };
            let (n, t) = alone(config, sims, moves, &Uniform);
            println!("{:<8} {:>5} {:>9} {:>12} {:>10.0} {:>10.2}", format!("{algorithm:?}"), sims, "alone", "uniform", n as f64 / t, 1e6 * t / n as f64);
            let (n, t) = alone(config, sims, moves, &Material::default());
            println!("{:<8} {:>5} {:>9} {:>12} {:>10.0} {:>10.2}", format!("{algorithm:?}"), sims, "alone", "material", n as f64 / t, 1e6 * t / n as f64);
            let (n, t, batch) = pooled(config, sims, moves, &Uniform);
            println!(
                "{:<8} {:>5} {:>9} {:>12} {:>10.0} {:>10.2}   (mean batch {batch:.1})",
                format!("{algorithm:?}"),
                sims,
                "pool-64",
                "uniform",
                n as f64 / t,
                1e6 * t / n as f64
            );
        }
    }
}
