//! The sparse network kind in libtorch against its native inference in `draughts-nnue`: the
//! same variables, the same features, and the same outputs on 10,000 positions from real games.
//!
//! Tolerance (stated here, checked below): on every position, every win/draw/loss probability,
//! every policy probability over the legal moves and the moves-left output of the native
//! evaluation are within 1e-3 of the libtorch forward in f32. The native first layer is fixed
//! point (weights rounded to 2^-16), the rest f32; the largest difference measured is printed.

mod common;

use std::path::Path;

use draughts_core::{Game, Rules};
use draughts_nn::checkpoint::{self, CheckpointInfo};
use draughts_nn::encoding::{encode_batch, EncodeInput, INPUT_SIZE};
use draughts_nn::net::sparse_feature_indices;
use draughts_nn::policy::{masked_softmax, move_indices};
use draughts_nn::Net;
use draughts_nnue::features::for_each_active;
use draughts_nnue::{tensor_shapes, Network, Scratch};
use tch::{Device, Kind, Tensor};

/// Tolerance of the native evaluation against the libtorch forward (see the module docs).
const TOLERANCE: f32 = 1e-3;

/// Every position of the games in `tests/data/games.pdn` (engine games: alpha-beta at depth 5
/// against alpha-beta at 3000 nodes, from the shipped openings), in game order.
fn real_positions() -> Vec<Game> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/games.pdn");
    let file = std::fs::File::open(&path).unwrap();
    let mut reader = draughts_pdn::Reader::new(std::io::BufReader::new(file));
    let mut out = Vec::new();
    while let Some(game) = reader.next_game() {
        let game = game.unwrap().replay(&Rules::FMJD).unwrap();
        let mut g = Game::with_counters(*game.start_position(), game.start_counters(), Rules::FMJD);
        for mv in game.moves() {
            if g.outcome().is_none() {
                out.push(g.clone());
            }
            g.play(mv).unwrap();
        }
    }
    out
}

#[test]
fn variables_are_the_native_tensors() {
    let arch = common::tiny_sparse_config(true);
    let net = Net::new(&arch, Device::Cpu, 3).unwrap();
    let mut vars: Vec<(String, Vec<usize>)> = net
        .var_store()
        .variables()
        .into_iter()
        .map(|(n, t)| (n, t.size().iter().map(|&d| d as usize).collect()))
        .collect();
    vars.sort();
    let mut want = tensor_shapes(&arch);
    want.sort();
    assert_eq!(vars, want);
}

#[test]
fn gathered_planes_are_the_native_features() {
    let us = sparse_feature_indices();
    let games = real_positions();
    for g in games.iter().step_by(37) {
        let pos = g.position();
        let mut buf = Vec::new();
        encode_batch(std::iter::once(EncodeInput { position: pos, counters: g.counters(), repetitions: 1 }), &mut buf);
        let side = pos.side_to_move();
        let on: Vec<usize> = (0..us.len()).filter(|&f| buf[us[f] as usize] == 1.0).collect();
        assert!(us.iter().all(|&i| buf[i as usize] == 0.0 || buf[i as usize] == 1.0));
        let mut native = Vec::new();
        for_each_active(pos, side, |f| native.push(f));
        native.sort_unstable();
        assert_eq!(on, native, "{pos:?}");
    }
    assert!(us.iter().all(|&i| (i as usize) < 4 * 100));
}

/// Compares the native evaluation of `sidecar` with the libtorch forward of the same checkpoint
/// on `games`; returns the largest difference.
fn compare(sidecar: &Path, games: &[Game]) -> f32 {
    let (net, meta) = checkpoint::load(sidecar, Device::Cpu).unwrap();
    let native = Network::load(sidecar).unwrap();
    assert_eq!(native.model_id(), meta.model_id);
    let mut scratch = Scratch::default();
    let (mut policy, mut indices, mut reference) = (Vec::new(), Vec::new(), Vec::new());
    let mut worst = 0.0f32;
    for chunk in games.chunks(512) {
        let mut buf = Vec::new();
        encode_batch(
            chunk.iter().map(|g| EncodeInput { position: g.position(), counters: g.counters(), repetitions: g.repetition_count() }),
            &mut buf,
        );
        let xs = Tensor::from_slice(&buf).reshape([chunk.len() as i64, INPUT_SIZE as i64]);
        let out = tch::no_grad(|| net.forward(&xs)).unwrap();
        let wdl: Vec<f32> = Vec::try_from(out.wdl.softmax(-1, Kind::Float).flatten(0, -1)).unwrap();
        let logits: Vec<f32> = Vec::try_from(out.policy.flatten(0, -1)).unwrap();
        let ml: Option<Vec<f32>> = out.moves_left.map(|t| Vec::try_from(t.flatten(0, -1)).unwrap());
        for (i, g) in chunk.iter().enumerate() {
            let pos = g.position();
            let moves = g.legal_moves();
            let o = native.evaluate_position(pos, &moves, &mut scratch, &mut policy);
            for (a, b) in o.wdl().iter().zip(&wdl[3 * i..3 * i + 3]) {
                worst = worst.max((a - b).abs());
            }
            move_indices(pos.side_to_move(), &moves, &mut indices);
            masked_softmax(&logits[2500 * i..2500 * (i + 1)], &indices, &mut reference);
            for (a, b) in policy.iter().zip(&reference) {
                worst = worst.max((a - b).abs());
            }
            if let Some(ml) = &ml {
                worst = worst.max((o.moves_left.unwrap() - ml[i]).abs());
            }
        }
    }
    worst
}

#[test]
fn native_inference_matches_libtorch_on_real_games() {
    tch::set_num_threads(1);
    let games = real_positions();
    assert!(games.len() >= 10_000, "{} positions", games.len());
    let games = &games[..10_000];
    let dir = tempfile::tempdir().unwrap();
    let pairwise = draughts_nn::NetConfig { pairwise: true, ..common::tiny_sparse_config(true) };
    let buckets = draughts_nn::NetConfig { buckets: 4, ..common::tiny_sparse_config(true) };
    // The games reach every bucket (4 buckets: 1-10, 11-20, 21-30, 31-40 pieces).
    let reached: std::collections::BTreeSet<usize> =
        games.iter().map(|g| buckets.bucket_of(g.position().occupied().count() as usize)).collect();
    assert_eq!(reached.len(), 4, "{reached:?}");
    let patterns = draughts_nn::NetConfig { patterns: true, buckets: 2, ..common::tiny_sparse_config(true) };
    // Patterns that feed 16 of 48 outputs, and 16 of a pairwise 64's.
    let narrow = draughts_nn::NetConfig { accumulator: 48, pattern_width: 16, ..patterns.clone() };
    let narrow_pairwise = draughts_nn::NetConfig { accumulator: 64, pairwise: true, buckets: 1, ..narrow.clone() };
    let archs = [
        (common::tiny_sparse_config(true), 4),
        (draughts_nn::NetConfig::sparse(), 5),
        (pairwise, 6),
        (buckets, 7),
        (patterns, 8),
        (narrow, 9),
        (narrow_pairwise, 10),
    ];
    for (arch, seed) in archs {
        // Weights moved away from their initialisation, so every variable matters.
        let net = common::perturbed_net(&arch, seed);
        let info = CheckpointInfo { name: "sparse".into(), step: seed, rules: "fmjd".into(), seed, parent: None };
        let meta = checkpoint::save(&net, dir.path(), &info).unwrap();
        let worst = compare(&checkpoint::sidecar_path(dir.path(), &meta.model_id), games);
        println!("{}: largest difference over {} positions: {worst:e}", arch.short_name(), games.len());
        assert!(worst <= TOLERANCE, "{worst}");
    }
    // Every shipped sparse model too.
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    for entry in std::fs::read_dir(models).unwrap().flatten() {
        for (_, sidecar, meta) in draughts_model::checkpoints_in(&entry.path(), &mut |w| panic!("{w}")) {
            if meta.architecture.kind == draughts_nn::NetKind::Sparse {
                let worst = compare(&sidecar, &games[..2000]);
                println!("{}: largest difference {worst:e}", meta.model_id);
                assert!(worst <= TOLERANCE, "{}: {worst}", meta.model_id);
            }
        }
    }
}

#[test]
fn training_keeps_sparse_weights_inside_the_quantised_range() {
    use draughts_nn::net::{FT_WEIGHT_LIMIT, HIDDEN_WEIGHT_LIMIT, PATTERN_WEIGHT_LIMIT};
    let arch = draughts_nn::NetConfig { patterns: true, ..common::tiny_sparse_config(false) };
    let mut net = Net::new(&arch, Device::Cpu, 5).unwrap();
    // Weights far outside the range, as a diverging step could leave them.
    tch::no_grad(|| {
        for (name, mut t) in net.var_store().variables() {
            if name.starts_with("ft.") || name.starts_with("pt.") || (name.starts_with('l') && name.ends_with("weight")) {
                let _ = t.fill_(-9.0);
            }
        }
    });
    net.clamp_to_quantisable().unwrap();
    for (name, t) in net.var_store().variables() {
        let largest = f64::try_from(t.abs().max()).unwrap();
        let limit = if name.starts_with("ft.") {
            FT_WEIGHT_LIMIT
        } else if name.starts_with("pt.") {
            PATTERN_WEIGHT_LIMIT
        } else if name.starts_with('l') && name.ends_with("weight") {
            HIDDEN_WEIGHT_LIMIT
        } else {
            continue;
        };
        assert!((largest - limit).abs() < 1e-6, "{name}: {largest} (limit {limit})");
    }
    // A checkpoint of the clamped net quantises (its accumulator cannot overflow 16 bits).
    let dir = tempfile::tempdir().unwrap();
    let info = CheckpointInfo { name: "clamped".into(), step: 1, rules: "fmjd".into(), seed: 5, parent: None };
    let meta = checkpoint::save(&net, dir.path(), &info).unwrap();
    let native = Network::load(&checkpoint::sidecar_path(dir.path(), &meta.model_id)).unwrap();
    native.quantisation().unwrap();
}

#[test]
fn a_widened_net_computes_the_same_function_and_its_copies_learn_apart() {
    let games = real_positions();
    let games = &games[..600];
    let mut buf = Vec::new();
    encode_batch(
        games.iter().map(|g| EncodeInput { position: g.position(), counters: g.counters(), repetitions: g.repetition_count() }),
        &mut buf,
    );
    let xs = Tensor::from_slice(&buf).reshape([games.len() as i64, INPUT_SIZE as i64]);
    let narrow_arch = common::tiny_sparse_config(true);
    let narrow = common::perturbed_net(&narrow_arch, 8);
    let before = tch::no_grad(|| narrow.forward(&xs)).unwrap();
    for wide in [24, 32, 48] {
        let arch = draughts_nn::NetConfig { accumulator: wide, ..narrow_arch.clone() };
        let net = narrow.widened(&arch, 1).unwrap();
        assert_eq!(net.config().accumulator, wide);
        let after = tch::no_grad(|| net.forward(&xs)).unwrap();
        let diff = |a: &Tensor, b: &Tensor| f64::try_from((a - b).abs().max()).unwrap();
        assert!(diff(&before.wdl, &after.wdl) < 1e-4, "{wide}: wdl {}", diff(&before.wdl, &after.wdl));
        assert!(diff(&before.policy, &after.policy) < 1e-4, "{wide}: policy {}", diff(&before.policy, &after.policy));
        let (b, a) = (before.moves_left.as_ref().unwrap(), after.moves_left.as_ref().unwrap());
        assert!(diff(b, a) < 1e-4, "{wide}: moves left");
        // A copy starts with its original's first-layer row, but a different share of its
        // weights in the layers that read it, so their gradients (and rows) part in training.
        let vars = net.var_store().variables();
        let (ft, l0) = (&vars["ft.weight"], &vars["l0.weight"]);
        assert!(f64::try_from((ft.get(0) - ft.get(16)).abs().max()).unwrap() == 0.0);
        assert!(f64::try_from((l0.select(1, 0) - l0.select(1, 16)).abs().max()).unwrap() > 1e-6);
    }
    // Anything but a wider accumulator is refused.
    let other = draughts_nn::NetConfig { hidden: vec![8], ..narrow_arch.clone() };
    assert!(narrow.widened(&other, 1).unwrap_err().contains("hidden"));
    let smaller = draughts_nn::NetConfig { accumulator: 8, ..narrow_arch.clone() };
    assert!(narrow.widened(&smaller, 1).unwrap_err().contains("shrink"));
    assert!(narrow.widened(&common::tiny_config(true), 1).is_err());
    let pairwise = draughts_nn::NetConfig { accumulator: 32, pairwise: true, ..narrow_arch.clone() };
    assert!(narrow.widened(&pairwise, 1).unwrap_err().contains("pairwise"));
}

#[test]
fn patterns_added_to_a_net_start_at_zero_and_each_block_reads_its_squares() {
    let games = real_positions();
    let games: Vec<&Game> = games.iter().step_by(10).take(1000).collect();
    let mut buf = Vec::new();
    encode_batch(
        games.iter().map(|g| EncodeInput { position: g.position(), counters: g.counters(), repetitions: g.repetition_count() }),
        &mut buf,
    );
    let xs = Tensor::from_slice(&buf).reshape([games.len() as i64, INPUT_SIZE as i64]);
    let plain_arch = common::tiny_sparse_config(true);
    let plain = common::perturbed_net(&plain_arch, 10);
    let before = tch::no_grad(|| plain.forward(&xs)).unwrap();
    let diff = |a: &Tensor, b: &Tensor| f64::try_from((a - b).abs().max()).unwrap();
    let arch = draughts_nn::NetConfig { patterns: true, accumulator: 24, ..plain_arch.clone() };
    let net = plain.widened(&arch, 1).unwrap();
    let after = tch::no_grad(|| net.forward(&xs)).unwrap();
    assert!(diff(&before.wdl, &after.wdl) < 1e-4, "wdl {}", diff(&before.wdl, &after.wdl));
    assert!(diff(&before.policy, &after.policy) < 1e-4, "policy");
    // One row of the table: exactly the positions where a point of view sees that
    // configuration of block 5 (rows 2-5, columns 2-5) change their policy logits.
    let (row_config, mut seen) = (0usize, 0);
    let row = draughts_nnue::features::pattern_feature(5, row_config) - draughts_nnue::features::FEATURES;
    tch::no_grad(|| {
        let table = net.var_store().variables()["pt.weight"].shallow_clone();
        let _ = table.get(row as i64).f_add_(&Tensor::from(0.5f32)).unwrap();
    });
    let moved = tch::no_grad(|| net.forward(&xs)).unwrap();
    for (i, g) in games.iter().enumerate() {
        let pos = g.position();
        let side = pos.side_to_move();
        let ours = draughts_nnue::features::block_config(5, side, pos.pieces(side), pos.pieces(!side));
        let theirs = draughts_nnue::features::block_config(5, !side, pos.pieces(!side), pos.pieces(side));
        let changed = diff(&moved.policy.get(i as i64), &after.policy.get(i as i64)) > 1e-6;
        assert_eq!(changed, ours == row_config || theirs == row_config, "{pos:?}: block 5 shows {ours} and {theirs}");
        seen += (ours == row_config) as usize;
    }
    assert!(seen > 20 && seen < games.len() - 20, "{seen} of {}", games.len());
    // Patterns are never removed.
    assert!(net.widened(&plain_arch, 1).is_err());
    assert!(net.widened(&draughts_nn::NetConfig { accumulator: 32, ..arch.clone() }, 1).is_ok());
    // Narrow patterns (the first 16 outputs of 32) start at zero too; such a net keeps its
    // widths, and patterns over a whole accumulator are not narrowed.
    let wide_plain = plain.widened(&draughts_nn::NetConfig { accumulator: 32, ..plain_arch.clone() }, 1).unwrap();
    let narrow_arch = draughts_nn::NetConfig { patterns: true, accumulator: 32, pattern_width: 16, ..plain_arch.clone() };
    let narrow = wide_plain.widened(&narrow_arch, 1).unwrap();
    assert_eq!(narrow.var_store().variables()["pt.weight"].size(), [104_976, 16]);
    let after = tch::no_grad(|| narrow.forward(&xs)).unwrap();
    assert!(diff(&before.wdl, &after.wdl) < 1e-4 && diff(&before.policy, &after.policy) < 1e-4);
    assert!(narrow.widened(&narrow_arch, 1).is_ok());
    // Such a net grows by copies of the outputs the patterns do not feed: the same function,
    // the patterns' table unchanged.
    let grown = narrow.widened(&draughts_nn::NetConfig { accumulator: 48, ..narrow_arch.clone() }, 1).unwrap();
    let vars = grown.var_store().variables();
    assert_eq!(vars["pt.weight"].size(), [104_976, 16]);
    assert_eq!(diff(&vars["pt.weight"], &narrow.var_store().variables()["pt.weight"]), 0.0);
    assert_eq!(diff(&vars["ft.weight"].get(32), &vars["ft.weight"].get(16)), 0.0);
    let wider = tch::no_grad(|| grown.forward(&xs)).unwrap();
    assert!(diff(&before.wdl, &wider.wdl) < 1e-4 && diff(&before.policy, &wider.policy) < 1e-4);
    for to in [
        draughts_nn::NetConfig { pattern_width: 32, ..narrow_arch.clone() },
        draughts_nn::NetConfig { accumulator: 48, pattern_width: 32, ..narrow_arch.clone() },
    ] {
        let e = narrow.widened(&to, 1).unwrap_err();
        assert!(e.contains("block patterns cannot change"), "{e}");
    }
    let e = net.widened(&draughts_nn::NetConfig { pattern_width: 16, ..arch.clone() }, 1).unwrap_err();
    assert!(e.contains("block patterns cannot change"), "{e}");
}

#[test]
fn buckets_added_to_a_net_compute_the_same_function_and_each_bucket_serves_its_phase() {
    let games = real_positions();
    let games: Vec<&Game> = games.iter().step_by(10).take(1000).collect();
    let mut buf = Vec::new();
    encode_batch(
        games.iter().map(|g| EncodeInput { position: g.position(), counters: g.counters(), repetitions: g.repetition_count() }),
        &mut buf,
    );
    let xs = Tensor::from_slice(&buf).reshape([games.len() as i64, INPUT_SIZE as i64]);
    let plain_arch = common::tiny_sparse_config(true);
    let plain = common::perturbed_net(&plain_arch, 9);
    let before = tch::no_grad(|| plain.forward(&xs)).unwrap();
    let diff = |a: &Tensor, b: &Tensor| f64::try_from((a - b).abs().max()).unwrap();
    for (accumulator, buckets) in [(16, 4), (32, 3)] {
        let arch = draughts_nn::NetConfig { accumulator, buckets, ..plain_arch.clone() };
        let net = plain.widened(&arch, 1).unwrap();
        let after = tch::no_grad(|| net.forward(&xs)).unwrap();
        assert!(diff(&before.wdl, &after.wdl) < 1e-4, "{arch:?}: wdl {}", diff(&before.wdl, &after.wdl));
        assert!(diff(&before.policy, &after.policy) < 1e-4, "{arch:?}: policy");
        assert!(diff(before.moves_left.as_ref().unwrap(), after.moves_left.as_ref().unwrap()) < 1e-4);
        // Raise bucket 2's win logit: exactly the positions of that bucket change, by 1.
        tch::no_grad(|| {
            let bias = net.var_store().variables()["wdl.bias"].shallow_clone();
            let _ = bias.get(6).f_add_(&Tensor::from(1.0f32)).unwrap();
        });
        let moved = tch::no_grad(|| net.forward(&xs)).unwrap();
        let change = Vec::<f32>::try_from((moved.wdl.select(1, 0) - after.wdl.select(1, 0)).flatten(0, -1)).unwrap();
        let mut in_bucket = 0;
        for (g, c) in games.iter().zip(&change) {
            let bucket = arch.bucket_of(g.position().occupied().count() as usize);
            let want = if bucket == 2 { 1.0 } else { 0.0 };
            assert!((c - want).abs() < 1e-5, "{} pieces (bucket {bucket}): changed by {c}", g.position().occupied().count());
            in_bucket += (bucket == 2) as usize;
        }
        assert!(in_bucket > 50 && in_bucket < games.len() - 50, "{in_bucket} of {}", games.len());
    }
    // Buckets are added to a net without them, never changed.
    let four = plain.widened(&draughts_nn::NetConfig { buckets: 4, ..plain_arch.clone() }, 1).unwrap();
    let e = four.widened(&draughts_nn::NetConfig { buckets: 2, ..plain_arch.clone() }, 1).unwrap_err();
    assert!(e.contains("phase buckets"), "{e}");
    assert!(four.widened(&draughts_nn::NetConfig { buckets: 4, accumulator: 32, ..plain_arch.clone() }, 1).is_ok());
}
