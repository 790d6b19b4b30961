//! The quantised network (`Precision::Int8`): exact incremental updates, the same integers with
//! every kernel, closeness to the float network, and networks that cannot be quantised.

use std::path::{Path, PathBuf};

use draughts_core::Position;
use draughts_model::NetConfig;
use draughts_nnue::testing::{random_tensors, write_checkpoint};
use draughts_nnue::{Network, Precision, Scratch, Simd};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random_net(dir: &Path, arch: &NetConfig, seed: u64, scale: f32) -> Network {
    Network::load(&write_checkpoint(dir, "q", 1, arch, &random_tensors(arch, seed, scale))).unwrap()
}

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/sparse-2h")
}

/// Positions from seeded random games, with the move played from each.
fn games(n: usize, seed: u64) -> Vec<Vec<(Position, draughts_core::Move)>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let mut pos = Position::start();
            let mut line = Vec::new();
            for _ in 0..rng.gen_range(20..200) {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mv = moves[rng.gen_range(0..moves.len())];
                line.push((pos, mv));
                pos = pos.play(&mv);
            }
            line
        })
        .collect()
}

/// Odd widths too: an accumulator that is not a multiple of 16, hidden layers that are not
/// multiples of 8; pairwise products; phase buckets (8 of them: random games pass through
/// several); block patterns, over the whole accumulator and over its first outputs.
fn archs() -> Vec<NetConfig> {
    vec![
        NetConfig { accumulator: 32, hidden: vec![16, 8], moves_left_head: true, ..NetConfig::sparse() },
        NetConfig { accumulator: 24, hidden: vec![12, 5], moves_left_head: false, ..NetConfig::sparse() },
        NetConfig { accumulator: 64, hidden: vec![32], moves_left_head: false, ..NetConfig::sparse() },
        NetConfig { accumulator: 40, hidden: vec![16, 8], moves_left_head: true, pairwise: true, ..NetConfig::sparse() },
        NetConfig { accumulator: 24, hidden: vec![12], moves_left_head: false, pairwise: true, ..NetConfig::sparse() },
        NetConfig { accumulator: 32, hidden: vec![16, 8], moves_left_head: true, buckets: 8, ..NetConfig::sparse() },
        NetConfig { accumulator: 24, hidden: vec![12], pairwise: true, buckets: 3, ..NetConfig::sparse() },
        NetConfig { accumulator: 32, hidden: vec![16, 8], moves_left_head: true, buckets: 2, patterns: true, ..NetConfig::sparse() },
        NetConfig { accumulator: 24, hidden: vec![12], pairwise: true, patterns: true, ..NetConfig::sparse() },
        // Narrow patterns: 16 of 40 outputs (the second point of view's half unaligned), and
        // 16 of a pairwise 64's first half.
        NetConfig { accumulator: 40, hidden: vec![16, 8], moves_left_head: true, patterns: true, pattern_width: 16, ..NetConfig::sparse() },
        NetConfig { accumulator: 64, hidden: vec![16], pairwise: true, patterns: true, pattern_width: 16, ..NetConfig::sparse() },
    ]
}

#[test]
fn quantised_updates_equal_refreshes_and_every_kernel_gives_the_same_output() {
    let dir = tempfile::tempdir().unwrap();
    for (i, arch) in archs().iter().enumerate() {
        let fast = random_net(dir.path(), arch, 30 + i as u64, 1.5);
        fast.quantisation().unwrap();
        let slow = fast.clone().with_simd(Simd::Scalar);
        let (mut s1, mut s2) = (Scratch::default(), Scratch::default());
        let (mut p1, mut p2) = (Vec::new(), Vec::new());
        let mut steps = 0;
        let mut buckets = std::collections::BTreeSet::new();
        for line in games(12, 40 + i as u64) {
            let mut acc = fast.new_accumulator_with(Precision::Int8);
            assert_eq!(acc.precision(), Precision::Int8);
            fast.refresh(&line[0].0, &mut acc);
            let (mut next, mut fresh, mut fresh_slow) =
                (acc.clone(), fast.new_accumulator_with(Precision::Int8), slow.new_accumulator_with(Precision::Int8));
            for (pos, mv) in &line {
                let after = pos.play(mv);
                fast.update(&acc, pos, mv, &mut next);
                fast.refresh(&after, &mut fresh);
                slow.refresh(&after, &mut fresh_slow);
                assert_eq!(next, fresh, "{pos:?} {mv:?}");
                assert_eq!(fresh, fresh_slow);
                assert_eq!(next.pieces(), after.occupied().count() as usize);
                buckets.insert(arch.bucket_of(next.pieces()));
                let side = after.side_to_move();
                let (a, b) = (fast.evaluate(&next, side, &mut s1), slow.evaluate(&fresh_slow, side, &mut s2));
                assert_eq!(a, b, "{arch:?} {after:?}");
                // The policy's integer sums too (the softmax after them is the same code).
                let moves = after.legal_moves();
                fast.policy(side, &moves, &mut s1, &mut p1);
                slow.policy(side, &moves, &mut s2, &mut p2);
                assert_eq!(p1, p2, "{arch:?} {after:?}");
                assert_eq!(a.moves_left.is_some(), arch.moves_left_head);
                std::mem::swap(&mut acc, &mut next);
                steps += 1;
            }
        }
        assert!(steps > 500, "{steps}");
        assert!(buckets.len() >= arch.buckets.min(3), "{arch:?}: buckets {buckets:?}");
    }
}

/// Every architecture's quantised network against its float self, on seeded random weights:
/// the win/draw/loss logits stay within a small fraction of their spread (a wrong pairing of
/// pairwise products, or a layer read in the wrong order, would be far off).
#[test]
fn quantised_random_networks_stay_close_to_their_float_selves() {
    let dir = tempfile::tempdir().unwrap();
    for (i, arch) in archs().iter().enumerate() {
        let net = random_net(dir.path(), arch, 70 + i as u64, 1.5);
        let (mut s1, mut s2) = (Scratch::default(), Scratch::default());
        let (mut p1, mut p2) = (Vec::new(), Vec::new());
        let (mut worst, mut spread, mut policy_worst) = (0.0f32, (f32::MAX, f32::MIN), 0.0f32);
        for line in games(6, 80 + i as u64) {
            for (pos, _) in line {
                let moves = pos.legal_moves();
                let f = net.evaluate_position(&pos, &moves, &mut s1, &mut p1);
                let q = net.evaluate_position_with(Precision::Int8, &pos, &moves, &mut s2, &mut p2);
                for (a, b) in f.wdl_logits.iter().zip(&q.wdl_logits) {
                    worst = worst.max((a - b).abs());
                    spread = (spread.0.min(*a), spread.1.max(*a));
                }
                for (a, b) in p1.iter().zip(&p2) {
                    policy_worst = policy_worst.max((a - b).abs());
                }
            }
        }
        let range = spread.1 - spread.0;
        println!(
            "{}: largest logit difference {worst:.4} over a range of {range:.3}; largest policy difference {policy_worst:.4}",
            arch.short_name()
        );
        assert!(range > 0.05 && worst < 0.03 * range, "{arch:?}: {worst} of {range}");
        assert!(policy_worst < 0.01, "{arch:?}: policy {policy_worst}");
    }
}

#[test]
fn mirrored_positions_evaluate_equal_when_quantised() {
    let dir = tempfile::tempdir().unwrap();
    let net = random_net(dir.path(), &archs()[1], 5, 1.5);
    let mut scratch = Scratch::default();
    let (mut p1, mut p2) = (Vec::new(), Vec::new());
    for line in games(6, 6) {
        for (pos, _) in line {
            let flipped = pos.flipped();
            let a = net.evaluate_position_with(Precision::Int8, &pos, &pos.legal_moves(), &mut scratch, &mut p1);
            let b = net.evaluate_position_with(Precision::Int8, &flipped, &flipped.legal_moves(), &mut scratch, &mut p2);
            assert_eq!(a, b, "{pos:?}");
        }
    }
}

/// The quantised shipped network against its float self: scores in centi-men (as the engine
/// turns win/draw/loss logits into them) and the policy.
#[test]
fn the_quantised_shipped_network_stays_close_to_the_float_one() {
    let net = Network::load(&shipped()).unwrap();
    net.quantisation().unwrap();
    let (mut s1, mut s2) = (Scratch::default(), Scratch::default());
    let (mut p1, mut p2) = (Vec::new(), Vec::new());
    let score = |z: [f32; 3]| {
        let w = draughts_nnue::Output { wdl_logits: z, moves_left: None }.wdl();
        let e = (w[0] + 0.5 * w[1]).clamp(0.0005, 0.9995) as f64;
        100.0 * (e / (1.0 - e)).ln()
    };
    let (mut diffs, mut policy_worst) = (Vec::new(), 0.0f32);
    for line in games(40, 7) {
        for (pos, _) in line {
            let moves = pos.legal_moves();
            let f = net.evaluate_position(&pos, &moves, &mut s1, &mut p1);
            let q = net.evaluate_position_with(Precision::Int8, &pos, &moves, &mut s2, &mut p2);
            let (sf, sq) = (score(f.wdl_logits), score(q.wdl_logits));
            if sf.abs() < 500.0 {
                diffs.push((sf - sq).abs());
            }
            for (a, b) in p1.iter().zip(&p2) {
                policy_worst = policy_worst.max((a - b).abs());
            }
        }
    }
    diffs.sort_by(f64::total_cmp);
    let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
    let (median, p99, worst) = (diffs[diffs.len() / 2], diffs[diffs.len() * 99 / 100], diffs[diffs.len() - 1]);
    println!(
        "{} positions: |float - int8| score mean {mean:.2}, median {median:.2}, 99th percentile {p99:.2}, largest {worst:.2} centi-men; policy largest difference {policy_worst:.4}",
        diffs.len()
    );
    assert!(diffs.len() > 2000);
    assert!(mean < 4.0 && p99 < 15.0, "mean {mean}, p99 {p99}");
    assert!(policy_worst < 0.05, "{policy_worst}");
}

#[test]
fn a_network_too_large_for_16_bits_runs_in_float() {
    let dir = tempfile::tempdir().unwrap();
    let arch = NetConfig { accumulator: 16, hidden: vec![8], moves_left_head: false, ..NetConfig::sparse() };
    let mut tensors = random_tensors(&arch, 3, 1.0);
    // First-layer output 5: weight 6 on every square's men (50 x 6 = 300 > 258).
    let ft = tensors.iter_mut().find(|t| t.0 == "ft.weight").unwrap();
    for f in 0..200 {
        ft.2[5 * 200 + f] = 6.0;
    }
    let net = Network::load(&write_checkpoint(dir.path(), "big", 1, &arch, &tensors)).unwrap();
    let why = net.quantisation().unwrap_err();
    assert!(why.contains("first-layer output 5") && why.contains("16-bit"), "{why}");
    let acc = net.new_accumulator_with(Precision::Int8);
    assert_eq!(acc.precision(), Precision::Float);
    assert_eq!(net.supported(Precision::Int8), Precision::Float);
    let mut scratch = Scratch::default();
    let pos = Position::start();
    let (mut p1, mut p2) = (Vec::new(), Vec::new());
    let a = net.evaluate_position_with(Precision::Int8, &pos, &pos.legal_moves(), &mut scratch, &mut p1);
    let b = net.evaluate_position(&pos, &pos.legal_moves(), &mut scratch, &mut p2);
    assert_eq!(a, b);
}
