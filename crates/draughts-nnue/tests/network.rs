//! The native sparse network: loading (and refusing bad files), incremental updates against
//! refreshes, kernels against the scalar reference, symmetry and the policy.

use std::path::{Path, PathBuf};

use draughts_core::{Color, Position};
use draughts_model::{MetaError, NetConfig, NetKind};
use draughts_nnue::testing::{random_tensors, write_checkpoint, NamedTensor};
use draughts_nnue::{LoadError, Network, Scratch, Simd};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn arch() -> NetConfig {
    NetConfig { accumulator: 32, hidden: vec![16, 8], moves_left_head: true, ..NetConfig::sparse() }
}

fn saved(dir: &Path, tensors: &[NamedTensor]) -> PathBuf {
    write_checkpoint(dir, "unit", 7, &arch(), tensors)
}

fn net(seed: u64) -> (tempfile::TempDir, Network) {
    let dir = tempfile::tempdir().unwrap();
    let sidecar = saved(dir.path(), &random_tensors(&arch(), seed, 1.5));
    let net = Network::load(&sidecar).unwrap();
    (dir, net)
}

/// Positions from seeded random games (openings to endings, kings included).
fn positions(games: usize, seed: u64) -> Vec<Position> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut pos = Position::start();
        for _ in 0..rng.gen_range(10..200) {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            out.push(pos);
            pos = pos.play(&moves[rng.gen_range(0..moves.len())]);
        }
    }
    out
}

#[test]
fn loads_from_files_and_directories() {
    let (dir, net) = net(1);
    assert_eq!(net.model_id(), "unit-s00000007");
    assert_eq!(net.architecture().kind, NetKind::Sparse);
    // 200*32 + 32, 64*16 + 16, 16*8 + 8, 8*3 + 3, 8 + 1, 2500*64 + 2500.
    assert_eq!(net.parameter_count(), 6432 + 1040 + 136 + 27 + 9 + 162_500);
    let from_dir = Network::load(dir.path()).unwrap();
    assert_eq!(from_dir, net);
    let weights = dir.path().join("unit-s00000007.safetensors");
    assert_eq!(Network::load(&weights).unwrap(), net);
}

#[test]
fn bad_files_are_refused_with_their_reason() {
    let dir = tempfile::tempdir().unwrap();
    let good = random_tensors(&arch(), 2, 1.0);
    let check = |tensors: Vec<NamedTensor>, want: &str| {
        let d = tempfile::tempdir().unwrap();
        let err = Network::load(&saved(d.path(), &tensors)).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(want), "{msg} (wanted {want})");
        err
    };
    let mut missing = good.clone();
    missing.retain(|t| t.0 != "l1.bias");
    assert!(matches!(check(missing, "`l1.bias` is missing"), LoadError::Meta(MetaError::MissingTensor { .. })));
    let mut extra = good.clone();
    extra.push(("block0.conv.weight".into(), vec![1], vec![0.0]));
    assert!(matches!(check(extra, "unexpected tensor `block0.conv.weight`"), LoadError::Meta(MetaError::UnexpectedTensor { .. })));
    let mut shape = good.clone();
    shape[2] = (shape[2].0.clone(), vec![16, 65], vec![0.0; 16 * 65]);
    assert!(matches!(check(shape, "shape [16, 65]"), LoadError::Meta(MetaError::ShapeMismatch { .. })));
    let mut nan = good.clone();
    nan[0].2[5] = f32::NAN;
    assert!(matches!(check(nan, "not finite"), LoadError::Meta(MetaError::NonFinite { .. })));
    let mut huge = good.clone();
    huge[0].2.iter_mut().for_each(|w| *w = 1000.0);
    assert!(matches!(check(huge, "fixed-point"), LoadError::TooLarge { .. }));

    // A damaged weights file is caught by the sidecar's checksum.
    let sidecar = saved(dir.path(), &good);
    let weights = sidecar.with_extension("safetensors");
    let mut bytes = std::fs::read(&weights).unwrap();
    let n = bytes.len();
    bytes[n - 3] ^= 0x40;
    std::fs::write(&weights, &bytes).unwrap();
    let err = Network::load(&sidecar).unwrap_err().to_string();
    assert!(err.contains("checksum"), "{err}");
    // A ResNet checkpoint is not a sparse net.
    let resnet = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/cpu-2h");
    let err = Network::load(&resnet).unwrap_err();
    assert!(matches!(err, LoadError::NotSparse { .. }), "{err}");
    assert!(err.to_string().contains("needs libtorch"), "{err}");
    let err = Network::load(&dir.path().join("nope")).unwrap_err().to_string();
    assert!(err.contains("no such model"), "{err}");
}

#[test]
fn incremental_updates_equal_refreshes_exactly() {
    // The piece-square features, and with block patterns (up to 16 more rows a move).
    let dir = tempfile::tempdir().unwrap();
    let patterns = NetConfig { patterns: true, ..arch() };
    let with_patterns = Network::load(&write_checkpoint(dir.path(), "pat", 1, &patterns, &random_tensors(&patterns, 3, 1.5))).unwrap();
    for (games, net) in [(40, net(3).1), (20, with_patterns)] {
        incremental_updates_equal_refreshes(&net, games);
    }
}

fn incremental_updates_equal_refreshes(net: &Network, games: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut scratch = Scratch::default();
    let (mut acc, mut next, mut fresh) = (net.new_accumulator(), net.new_accumulator(), net.new_accumulator());
    let mut steps = 0;
    for _ in 0..games {
        let mut pos = Position::start();
        net.refresh(&pos, &mut acc);
        for _ in 0..250 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let mv = moves[rng.gen_range(0..moves.len())];
            let after = pos.play(&mv);
            net.update(&acc, &pos, &mv, &mut next);
            net.refresh(&after, &mut fresh);
            assert_eq!(next, fresh, "{pos:?} {mv:?}");
            let (a, b) = (
                net.evaluate(&next, after.side_to_move(), &mut scratch),
                net.evaluate(&fresh, after.side_to_move(), &mut scratch),
            );
            assert_eq!(a, b);
            std::mem::swap(&mut acc, &mut next);
            pos = after;
            steps += 1;
        }
    }
    assert!(steps > 50 * games, "{steps}");
}

#[test]
fn simd_kernels_agree_with_the_scalar_reference() {
    let (_dir, fast) = net(5);
    let slow = fast.clone().with_simd(Simd::Scalar);
    println!("kernels in use: {}", fast.kernels());
    let (mut s1, mut s2) = (Scratch::default(), Scratch::default());
    let (mut p1, mut p2) = (Vec::new(), Vec::new());
    let mut worst = 0.0f32;
    for pos in positions(30, 6) {
        let moves = pos.legal_moves();
        let a = fast.evaluate_position(&pos, &moves, &mut s1, &mut p1);
        let b = slow.evaluate_position(&pos, &moves, &mut s2, &mut p2);
        for (x, y) in a.wdl_logits.iter().zip(&b.wdl_logits) {
            worst = worst.max((x - y).abs());
        }
        for (x, y) in p1.iter().zip(&p2) {
            worst = worst.max((x - y).abs());
        }
        assert!((a.moves_left.unwrap() - b.moves_left.unwrap()).abs() < 1e-4);
    }
    println!("largest difference: {worst:e}");
    assert!(worst < 1e-4, "{worst}");
}

#[test]
fn the_side_to_move_view_makes_mirrored_positions_equal() {
    let (_dir, net) = net(7);
    let mut scratch = Scratch::default();
    let (mut p1, mut p2) = (Vec::new(), Vec::new());
    for pos in positions(10, 8) {
        let flipped = pos.flipped();
        let (m1, m2) = (pos.legal_moves(), flipped.legal_moves());
        let a = net.evaluate_position(&pos, &m1, &mut scratch, &mut p1);
        let b = net.evaluate_position(&flipped, &m2, &mut scratch, &mut p2);
        assert_eq!(a, b, "{pos:?}");
        // The policy follows the moves: the mirror of each move gets the same probability.
        for (mv, p) in m1.iter().zip(&p1) {
            let k = m2.iter().position(|m| *m == mv.flipped()).unwrap();
            assert!((p - p2[k]).abs() < 1e-6, "{p} {}", p2[k]);
        }
    }
}

#[test]
fn policy_is_a_distribution_over_the_legal_moves() {
    let (_dir, net) = net(9);
    let mut scratch = Scratch::default();
    let mut policy = Vec::new();
    let mut distinct = 0;
    for pos in positions(20, 10) {
        let moves = pos.legal_moves();
        let out = net.evaluate_position(&pos, &moves, &mut scratch, &mut policy);
        assert_eq!(policy.len(), moves.len());
        let sum: f32 = policy.iter().sum();
        assert!((sum - 1.0).abs() < 1e-5, "{sum}");
        assert!(policy.iter().all(|p| *p >= 0.0));
        let wdl = out.wdl();
        assert!((wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!((out.value() - (wdl[0] - wdl[2])).abs() < 1e-6);
        if moves.len() > 1 && policy.iter().any(|p| (p - policy[0]).abs() > 1e-4) {
            distinct += 1;
        }
    }
    // Random weights give moves different probabilities: the policy reads the position.
    assert!(distinct > 100, "{distinct}");
    // The same position with the other side to move is another input.
    let pos = Position::from_fen("W:W28,33,K45:B3,19,24").unwrap();
    let mut acc = net.new_accumulator();
    net.refresh(&pos, &mut acc);
    let w = net.evaluate(&acc, Color::White, &mut scratch);
    let b = net.evaluate(&acc, Color::Black, &mut scratch);
    assert_ne!(w, b);
}
