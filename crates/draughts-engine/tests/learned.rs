//! The learned evaluation inside the search: the lazy incremental accumulators give the same
//! scores as evaluating every position from scratch, searches are reproducible, and the
//! hand-made baseline is untouched.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use draughts_core::{Game, Position, Rules};
use draughts_engine::{bench_with, Engine, EngineConfig, Evaluation, Learned, Limits, BENCH_POSITIONS};
use draughts_model::NetConfig;
use draughts_nnue::testing::{random_tensors, write_checkpoint};
use draughts_nnue::{Network, Precision};

fn network(dir: &std::path::Path) -> Arc<Network> {
    let arch = NetConfig { accumulator: 32, hidden: vec![8, 8], ..NetConfig::sparse() };
    Arc::new(Network::load(&write_checkpoint(dir, "t", 1, &arch, &random_tensors(&arch, 11, 2.0))).unwrap())
}

/// A seeded generator of numbers below `n` (0 for `n` = 0), for walking random lines.
fn random_below(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize % n.max(1)
    }
}

#[test]
fn lazy_updates_give_the_scores_of_fresh_evaluations() {
    for precision in [Precision::Float, Precision::Int8] {
        lazy_updates_in(precision);
    }
}

fn lazy_updates_in(precision: Precision) {
    let dir = tempfile::tempdir().unwrap();
    let net = network(dir.path());
    let mut lazy = Learned::new(net.clone());
    let mut fresh = Learned::new(net);
    lazy.set_precision(precision);
    fresh.set_precision(precision);
    assert_eq!(lazy.precision(), precision);
    // Walk random lines with skipped evaluations, as a search does.
    let mut rand = random_below(5);
    let mut checked = 0;
    for _ in 0..200 {
        let mut pos = Position::start();
        lazy.set_root(&pos);
        let mut line = vec![pos];
        for ply in 0..60 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let mv = moves[rand(moves.len())];
            lazy.make(ply, &pos, &mv);
            pos = pos.play(&mv);
            line.push(pos);
            if rand(3) == 0 {
                let got = lazy.evaluate(ply + 1, &pos);
                assert_eq!(got.0, fresh.evaluate_position(&pos), "{pos:?}");
                checked += 1;
            }
            // Sometimes back up a few plies and take another branch.
            if rand(8) == 0 && line.len() > 3 {
                let back = 1 + rand(2);
                line.truncate(line.len() - back);
                pos = *line.last().unwrap();
                let ply_now = line.len() - 1;
                let got = lazy.evaluate(ply_now, &pos);
                assert_eq!(got.0, fresh.evaluate_position(&pos));
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mv = moves[rand(moves.len())];
                lazy.make(ply_now, &pos, &mv);
                pos = pos.play(&mv);
                line.push(pos);
                let got = lazy.evaluate(line.len() - 1, &pos);
                assert_eq!(got.0, fresh.evaluate_position(&pos));
                checked += 1;
                break;
            }
        }
    }
    assert!(checked > 500, "{checked}");
}

#[test]
fn cached_scores_are_the_networks() {
    // Random lines from the start position pass through the same positions again and again:
    // in an integer precision the second time is answered from the cache, with the network's
    // score and the same move count; in float there is no cache.
    let dir = tempfile::tempdir().unwrap();
    let net = network(dir.path());
    for precision in [Precision::Float, Precision::Int8] {
        let mut lazy = Learned::new(net.clone());
        let mut fresh = Learned::new(net.clone());
        lazy.set_precision(precision);
        fresh.set_precision(precision);
        let mut rand = random_below(9);
        let mut checked = 0;
        for _ in 0..300 {
            let mut pos = Position::start();
            lazy.set_root(&pos);
            for ply in 0..40 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                // Only a few first moves, so that lines meet.
                let mv = moves[rand(moves.len().min(3))];
                lazy.make(ply, &pos, &mv);
                pos = pos.play(&mv);
                if !pos.has_capture() {
                    fresh.set_root(&pos);
                    let want = fresh.evaluate(0, &pos);
                    assert_eq!(lazy.evaluate_hashed(ply + 1, &pos, pos.hash()), want, "{precision:?} {pos:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 3000, "{checked}");
        match precision {
            Precision::Float => assert_eq!(lazy.cache_hits(), 0),
            _ => assert!(lazy.cache_hits() > checked / 10, "{} of {checked}", lazy.cache_hits()),
        }
    }
}

/// The bench with `config`, searched twice: the same nodes, moves and scores.
fn reproducible_bench(config: EngineConfig, depth: u32) -> draughts_engine::BenchResult {
    let a = bench_with(config.clone(), depth);
    let b = bench_with(config, depth);
    assert_eq!(a.nodes, b.nodes);
    for (x, y) in a.per_position.iter().zip(&b.per_position) {
        assert_eq!((x.best, x.score), (y.best, y.score), "{}", x.fen);
    }
    a
}

#[test]
fn learned_searches_are_deterministic_and_differ_from_the_hand_made_ones() {
    let dir = tempfile::tempdir().unwrap();
    let net = network(dir.path());
    // The quantised network (the default) and the float one.
    let mut float = EngineConfig::learned(net.clone());
    float.options.quantised = false;
    for config in [EngineConfig::learned(net.clone()), float] {
        reproducible_bench(config, 5);
    }
    let a = bench_with(EngineConfig::learned(net), 5);
    let hand = draughts_engine::bench(5);
    assert_ne!(a.nodes, hand.nodes, "a random network searches another tree");
    // Every bench position still gets a legal move.
    for (p, fen) in a.per_position.iter().zip(BENCH_POSITIONS) {
        let pos = Position::from_fen(fen).unwrap();
        assert!(pos.legal_moves().contains(&p.best.unwrap()));
    }
}

#[test]
fn the_policy_the_search_reads_is_the_networks() {
    // After lazy updates along a line, the policy at a ply is the network's from scratch.
    let dir = tempfile::tempdir().unwrap();
    let net = network(dir.path());
    for precision in [Precision::Float, Precision::Int8] {
        let mut lazy = Learned::new(net.clone());
        lazy.set_precision(precision);
        let mut scratch = draughts_nnue::Scratch::default();
        let (mut got, mut want) = (Vec::new(), Vec::new());
        let mut pos = Position::start();
        lazy.set_root(&pos);
        for ply in 0..30 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            if ply % 3 == 2 && moves.len() > 1 {
                assert!(lazy.policy(ply, &pos, &moves, &mut got));
                net.evaluate_position_with(precision, &pos, &moves, &mut scratch, &mut want);
                assert_eq!(got.len(), moves.len());
                for (g, w) in got.iter().zip(&want) {
                    assert!((g - w).abs() < 1e-5, "{precision:?} ply {ply}: {got:?} against {want:?}");
                }
                assert!((got.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            }
            let mv = moves[(ply * 7) % moves.len()];
            lazy.make(ply, &pos, &mv);
            pos = pos.play(&mv);
        }
    }
}

#[test]
fn policy_order_keeps_searches_reproducible_and_changes_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let net = network(dir.path());
    let mut config = EngineConfig::learned(net.clone());
    config.options.policy_order = true;
    config.options.policy_depth = 2;
    let a = reproducible_bench(config, 6);
    let plain = bench_with(EngineConfig::learned(net), 6);
    assert_ne!(a.nodes, plain.nodes, "the policy orders the moves otherwise than the history");
    // The hand-made evaluation has no policy: the option changes nothing there.
    let mut hand = EngineConfig::default();
    hand.options.policy_order = true;
    hand.options.policy_depth = 2;
    assert_eq!(bench_with(hand, 6).nodes, draughts_engine::bench(6).nodes);
}

#[test]
fn learned_engine_scores_game_ends_exactly() {
    // Forced wins are scored by the search, not the evaluation: White takes Black's last man
    // (28x17), and in the second position Black's only man takes and White retakes the last piece.
    let dir = tempfile::tempdir().unwrap();
    let mut engine = Engine::new(EngineConfig::learned(network(dir.path()))).unwrap();
    for (fen, plies) in [("W:W28:B22", 1), ("W:W32,37:B22", 3)] {
        let game = Game::from_position(Position::from_fen(fen).unwrap(), Rules::FMJD);
        let r = engine.search(&game, &Limits::depth(6), &AtomicBool::new(false), &mut |_| {});
        assert_eq!(draughts_engine::mate_distance(r.score), Some(plies), "{fen}: {}", r.score);
    }
}
