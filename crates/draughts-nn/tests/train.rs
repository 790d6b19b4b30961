//! Training: batches, loss, window, optimizer state and exact resume.

mod common;

use std::path::Path;

use draughts_core::{Color, Move, Position, Rules, Square};
use draughts_nn::bench::sample_states;
use draughts_nn::checkpoint::{self, CheckpointInfo};
use draughts_nn::train::loss::masked_log_probs;
use draughts_nn::train::{
    key_index, Batch, LrSchedule, OptimizerKind, TargetParams, TrainConfig, TrainError, Trainer,
    Window, OPTIMIZER_FILE, TRAINER_FILE,
};
use draughts_nn::{Net, NetConfig, POLICY_SIZE};
use draughts_selfplay::{
    quantise_policy, write_shard, GameEnd, GameSummary, MoveKey, PolicyEntry, RecordFlags, Shard,
    ShardHeader, TrainingRecord, Wdl,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tch::{Device, Kind, Tensor};

use common::tiny_config;

/// `n` records from random games with random policies over the legal moves. `ply` is set to
/// `tag` and `moves_left` to the record's index, so tests can tell where a record came from.
/// Every fifth record is a fast search (value target only).
fn make_records(n: usize, seed: u64, tag: u16) -> Vec<TrainingRecord> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    sample_states(n, seed)
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let moves = s.position.legal_moves_with(&Rules::FMJD);
            let policy: Vec<(Move, f32)> = moves.iter().map(|m| (*m, rng.gen::<f32>())).collect();
            let root: [f32; 3] = [rng.gen(), rng.gen(), rng.gen()];
            TrainingRecord {
                position: s.position,
                counters: s.counters,
                repetitions: s.repetitions as u8,
                ply: tag,
                moves_left: i as u16,
                policy: quantise_policy(&policy),
                result: [Wdl::Win, Wdl::Draw, Wdl::Loss][rng.gen_range(0..3)],
                root_wdl: root,
                flags: if i % 5 == 4 {
                    RecordFlags::default()
                } else {
                    RecordFlags::FULL_SEARCH
                },
            }
        })
        .collect()
}

fn write_records(path: &Path, records: Vec<TrainingRecord>) {
    let shard = Shard {
        header: ShardHeader {
            model_id: "test-s00000000".to_owned(),
            rules: "fmjd".to_owned(),
            created_unix: 0,
            seed: 1,
        },
        games: vec![GameSummary {
            index: 0,
            seed: 0,
            plies: records.len() as u16,
            opening_plies: 0,
            records: records.len() as u32,
            end: GameEnd::MaxPlies,
            playthrough: false,
            resign: None,
        }],
        records,
    };
    write_shard(path, &shard).unwrap();
}

fn params() -> TargetParams {
    TargetParams {
        root_value_mix: 0.0,
        moves_left_scale: 100.0,
        value_quiet_only: false,
    }
}

#[test]
fn dense_target_sums_to_one_and_mask_holds_every_legal_move() {
    let records = make_records(300, 11, 0);
    let mut batch = Batch::new();
    for r in &records {
        batch.push(r, &Rules::FMJD, &params());
    }
    assert_eq!(batch.size, records.len());
    let mut saw_black = false;
    for (row, r) in records.iter().enumerate() {
        let side = r.position.side_to_move();
        saw_black |= side == Color::Black;
        let policy = &batch.policy[row * POLICY_SIZE..(row + 1) * POLICY_SIZE];
        let mask = &batch.mask[row * POLICY_SIZE..(row + 1) * POLICY_SIZE];
        let legal: std::collections::BTreeSet<usize> = r
            .position
            .legal_moves_with(&Rules::FMJD)
            .iter()
            .map(|m| draughts_nn::policy::move_index(side, m))
            .collect();
        // The mask is exactly the legal moves' indices (the targets are legal moves here).
        let masked: std::collections::BTreeSet<usize> =
            (0..POLICY_SIZE).filter(|&i| mask[i]).collect();
        assert_eq!(masked, legal, "row {row}");
        let sum: f32 = policy.iter().sum();
        if r.flags.contains(RecordFlags::FULL_SEARCH) {
            assert!((sum - 1.0).abs() < 1e-4, "row {row}: target sums to {sum}");
            assert_eq!(batch.policy_weight[row], 1.0);
        } else {
            assert_eq!(sum, 0.0, "value-only row {row} has a policy target");
            assert_eq!(batch.policy_weight[row], 0.0);
        }
        for i in 0..POLICY_SIZE {
            assert!(
                policy[i] >= 0.0 && (policy[i] == 0.0 || mask[i]),
                "row {row} index {i}"
            );
        }
        let wdl = &batch.wdl[row * 3..row * 3 + 3];
        assert_eq!(wdl, r.result.one_hot());
        assert_eq!(batch.moves_left[row], r.moves_left as f32 / 100.0);
    }
    assert!(saw_black, "the sample should hold Black-to-move positions");
}

#[test]
fn policy_entries_land_on_their_index_and_shared_indices_add_up() {
    // White to move at the start: 32-28 and 33-28 (both legal). Black to move: 19-23.
    let sq = |n| Square::new(n).unwrap();
    let quiet = |f, t| MoveKey {
        from: sq(f),
        to: sq(t),
        captured: draughts_core::Bitboard::EMPTY,
    };
    let mut record = make_records(1, 3, 0).remove(0);
    record.position = Position::start();
    record.flags = RecordFlags::FULL_SEARCH;
    record.root_wdl = [0.5, 0.5, 0.0];
    record.result = Wdl::Loss;
    // Two entries with the same (from, to) (as two captures taking different pieces would be)
    // must add up on one index.
    record.policy = vec![
        PolicyEntry {
            mv: quiet(32, 28),
            weight: 30_000,
        },
        PolicyEntry {
            mv: quiet(32, 28),
            weight: 5_535,
        },
        PolicyEntry {
            mv: quiet(33, 28),
            weight: 30_000,
        },
    ];
    let mut batch = Batch::new();
    let mix = TargetParams {
        root_value_mix: 0.25,
        moves_left_scale: 50.0,
        value_quiet_only: false,
    };
    batch.push(&record, &Rules::FMJD, &mix);
    let i = key_index(Color::White, sq(32), sq(28));
    assert_eq!(i, 31 * 50 + 27);
    assert!((batch.policy[i] - 35_535.0 / 65_535.0).abs() < 1e-6);
    assert!(
        (batch.policy[key_index(Color::White, sq(33), sq(28))] - 30_000.0 / 65_535.0).abs() < 1e-6
    );
    // WDL: 0.75 * loss + 0.25 * root.
    assert_eq!(&batch.wdl[..], &[0.125, 0.125, 0.75]);

    // Black to move: the board is turned, 19-23 is seen as 32-28.
    let mut black = record.clone();
    black.position = Position::start().with_side_to_move(Color::Black);
    black.policy = vec![PolicyEntry {
        mv: quiet(19, 23),
        weight: 65_535,
    }];
    batch.clear();
    batch.push(&black, &Rules::FMJD, &mix);
    assert_eq!(batch.policy[31 * 50 + 27], 1.0);
    assert_eq!(batch.mask.iter().filter(|&&m| m).count(), 9);
    assert_eq!(batch.value_weight, vec![1.0]);

    // Under `value_quiet_only` a position with a capture pending trains the policy only.
    let quiet_only = TargetParams { value_quiet_only: true, ..mix };
    let mut capture = record.clone();
    capture.position = Position::from_fen("W:W28,40:B23,10").unwrap();
    capture.policy = vec![PolicyEntry { mv: MoveKey { from: sq(28), to: sq(19), captured: [sq(23)].into_iter().collect() }, weight: 65_535 }];
    batch.clear();
    batch.push(&capture, &Rules::FMJD, &quiet_only);
    batch.push(&black, &Rules::FMJD, &quiet_only);
    assert_eq!(batch.value_weight, vec![0.0, 1.0]);
    assert_eq!(batch.policy_weight, vec![1.0, 1.0]);
    let t = batch.to_tensors(Device::Cpu).unwrap();
    assert_eq!(t.value_rows, 1);
}

#[test]
fn masked_policy_gives_illegal_moves_zero_probability() {
    let records = make_records(32, 5, 0);
    let mut batch = Batch::new();
    for r in &records {
        batch.push(r, &Rules::FMJD, &params());
    }
    let t = batch.to_tensors(Device::Cpu).unwrap();
    tch::manual_seed(3);
    let logits = Tensor::randn([32, POLICY_SIZE as i64], (Kind::Float, Device::Cpu)) * 5.0;
    let probs = draughts_nn::net::masked_log_softmax(&logits, &t.mask)
        .unwrap()
        .exp();
    let off = probs.masked_select(&t.mask.logical_not());
    assert_eq!(f64::try_from(off.abs().max()).unwrap(), 0.0);
    let sums: Vec<f32> = Vec::try_from(probs.sum_dim_intlist(-1, false, Kind::Float)).unwrap();
    assert!(sums.iter().all(|s| (s - 1.0).abs() < 1e-5), "{sums:?}");
    // The loss's log-probabilities are finite everywhere (0 off the mask) and agree on it.
    let lp = masked_log_probs(&logits, &t.mask).unwrap();
    assert!(bool::try_from(lp.isfinite().all()).unwrap());
    let off = lp.masked_select(&t.mask.logical_not());
    assert_eq!(f64::try_from(off.abs().max()).unwrap(), 0.0);
}

#[test]
fn loss_goes_down_on_a_fixed_dataset() {
    loss_goes_down(&tiny_config(true));
}

#[test]
fn sparse_loss_goes_down_on_a_fixed_dataset() {
    loss_goes_down(&common::tiny_sparse_config(true));
}

fn loss_goes_down(arch: &NetConfig) {
    tch::set_num_threads(1);
    // One-hot policy targets (the first legal move) and fixed results: a net can fit them, so
    // the loss can fall towards 0 (random soft targets would stop at their entropy).
    let mut records = make_records(64, 21, 0);
    for r in &mut records {
        let first = r.policy[0].mv;
        r.policy = vec![PolicyEntry {
            mv: first,
            weight: u16::MAX,
        }];
    }
    let config = TrainConfig {
        batch_size: 64,
        optimizer: OptimizerKind::Adam,
        lr: 3e-3,
        window_min: 64,
        window_max: 64,
        ..TrainConfig::default()
    };
    let net = Net::new(arch, Device::Cpu, 1).unwrap();
    let mut trainer = Trainer::new(net, config).unwrap();
    let mut batch = Batch::new();
    for r in &records {
        batch.push(r, &Rules::FMJD, &TargetParams::of(trainer.config()));
    }
    let t = batch.to_tensors(Device::Cpu).unwrap();
    let mut losses = Vec::new();
    for _ in 0..50 {
        let s = trainer.train_batch(&t).unwrap();
        assert!(s.policy > 0.0 && s.wdl > 0.0 && s.moves_left >= 0.0 && s.reg > 0.0);
        assert_eq!(
            s.policy_samples,
            records
                .iter()
                .filter(|r| r.flags.contains(RecordFlags::FULL_SEARCH))
                .count()
        );
        losses.push(s);
    }
    let (first, last) = (losses[0], losses[49]);
    assert!(
        last.loss < 0.6 * first.loss,
        "loss went from {} to {}",
        first.loss,
        last.loss
    );
    assert!(last.policy < first.policy && last.wdl < first.wdl);
    assert_eq!(trainer.step(), 50);
}

#[test]
fn window_keeps_the_newest_n_and_skips_damaged_shards() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path();
    for (k, n) in [(1u16, 10), (2, 20), (3, 30), (4, 40)] {
        write_records(
            &games.join(format!("shard-{k}.bin")),
            make_records(n, k as u64, k),
        );
    }
    std::fs::write(games.join("shard-2x.bin"), b"DRSHARD\0garbage").unwrap();
    std::fs::write(games.join("notes.txt"), b"not a shard").unwrap();
    let config = TrainConfig {
        window_min: 50,
        window_max: 50,
        window_growth: 0.0,
        reuse: 2.0,
        ..TrainConfig::default()
    };
    let mut w = Window::new(games, &config);
    assert!(w.is_empty());
    let r = w.refresh().unwrap();
    assert_eq!(r.new_shards, 4);
    assert_eq!(r.new_positions, 100);
    assert_eq!(r.skipped.len(), 1);
    let msg = r.skipped[0].to_string();
    assert!(msg.contains("shard-2x.bin"), "{msg}");
    assert_eq!(w.len(), 50);
    assert_eq!(w.seen(), 100);
    // Newest first: all 40 of shard 4, the last 10 of shard 3.
    let held: Vec<(u16, u16)> = (0..w.len())
        .map(|i| {
            let (r, _) = w.get(i).unwrap();
            (r.ply, r.moves_left)
        })
        .collect();
    let want: Vec<(u16, u16)> = (20..30)
        .map(|i| (3, i))
        .chain((0..40).map(|i| (4, i)))
        .collect();
    assert_eq!(held, want);
    assert_eq!(
        w.shard_names().collect::<Vec<_>>(),
        ["shard-3.bin", "shard-4.bin"]
    );
    // Uniform sampling stays inside the window.
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    for _ in 0..500 {
        let (r, _) = w.sample(&mut rng).unwrap();
        assert!(r.ply == 4 || (r.ply == 3 && r.moves_left >= 20));
    }
    // Sample budget: 100 positions x 2 = 200 samples = 12 batches of 16, 8 left over.
    assert_eq!(w.take_steps(16), 12);
    assert_eq!(w.sample_budget(), 8.0);

    // A new shard arrives (its name sorts first: arrival order counts, not the name).
    write_records(&games.join("shard-0.bin"), make_records(25, 9, 5));
    let r = w.refresh().unwrap();
    assert_eq!((r.new_shards, r.new_positions, r.skipped.len()), (1, 25, 0));
    assert_eq!(w.len(), 50);
    assert_eq!(
        w.shard_names().collect::<Vec<_>>(),
        ["shard-4.bin", "shard-0.bin"]
    );
    let oldest = w.get(0).unwrap().0;
    assert_eq!((oldest.ply, oldest.moves_left), (4, 15));
    // Nothing new: nothing changes, the damaged shard is not retried.
    let r = w.refresh().unwrap();
    assert_eq!((r.new_shards, r.skipped.len()), (0, 0));
    assert_eq!(w.state().consumed.len(), 6);

    // Resume rebuilds the same window from the saved state.
    let (again, skipped) = Window::resume(games, &config, w.state().clone());
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(again.len(), w.len());
    for i in 0..w.len() {
        assert_eq!(again.get(i).unwrap().0, w.get(i).unwrap().0);
    }
    assert_eq!(again.sample_budget(), w.sample_budget());
}

#[test]
fn window_takes_another_runs_games_read_only_and_resumes_them() {
    let dir = tempfile::tempdir().unwrap();
    let (games, other) = (dir.path().join("games"), dir.path().join("other"));
    std::fs::create_dir_all(&games).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    // The other run's shard has the same file name as one of this run's: it must not hide it.
    write_records(&other.join("shard-1.bin"), make_records(30, 1, 1));
    write_records(&other.join("shard-2.bin"), make_records(20, 2, 2));
    write_records(&games.join("shard-1.bin"), make_records(10, 3, 3));
    let config = TrainConfig {
        window_min: 100,
        window_max: 100,
        reuse: 2.0,
        ..TrainConfig::default()
    };
    let mut w = Window::new(&games, &config);
    let r = w.add_games_from(&other, 0.5).unwrap();
    assert_eq!((r.new_shards, r.new_positions, r.skipped.len()), (2, 50, 0));
    assert_eq!(w.seen(), 50);
    assert_eq!(w.sample_budget(), 25.0);
    let r = w.refresh().unwrap();
    assert_eq!((r.new_shards, r.new_positions), (1, 10));
    assert_eq!((w.len(), w.seen(), w.sample_budget()), (60, 60, 45.0));
    // Oldest first: the other run's games, then this run's.
    let plies: Vec<u16> = (0..w.len()).map(|i| w.get(i).unwrap().0.ply).collect();
    let want: Vec<u16> = [1u16; 30].into_iter().chain([2; 20]).chain([3; 10]).collect();
    assert_eq!(plies, want);
    // Nothing is added twice, and nothing was written into the other directory.
    assert_eq!(w.add_games_from(&other, 0.5).unwrap().new_shards, 0);
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 2);
    // A resume reads the other run's shards back from where they are.
    let (mut again, skipped) = Window::resume(&games, &config, w.state().clone());
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(again.len(), 60);
    for i in 0..w.len() {
        assert_eq!(again.get(i).unwrap().0, w.get(i).unwrap().0);
    }
    assert_eq!(again.add_games_from(&other, 0.5).unwrap().new_shards, 0);
    // A directory that is not there is an error naming it.
    let e = again.add_games_from(&dir.path().join("nope"), 0.0).unwrap_err().to_string();
    assert!(e.contains("nope"), "{e}");
}

#[test]
fn window_size_rule() {
    let c = TrainConfig {
        window_min: 10,
        window_max: 100,
        window_growth: 0.5,
        ..TrainConfig::default()
    };
    assert_eq!(c.window_size(0), 10);
    assert_eq!(c.window_size(10), 10);
    assert_eq!(c.window_size(100), 55);
    assert_eq!(c.window_size(1_000), 100);
}

#[test]
fn lr_schedules() {
    let base = TrainConfig {
        lr: 0.1,
        ..TrainConfig::default()
    };
    assert_eq!(base.lr_at(12_345), 0.1);
    let step = TrainConfig {
        lr_schedule: LrSchedule::Step,
        lr_milestones: vec![10, 20],
        lr_gamma: 0.5,
        ..base.clone()
    };
    assert_eq!(
        (step.lr_at(9), step.lr_at(10), step.lr_at(25)),
        (0.1, 0.05, 0.025)
    );
    let cos = TrainConfig {
        lr_schedule: LrSchedule::Cosine,
        lr_cosine_steps: 100,
        lr_floor: 0.01,
        warmup_steps: 10,
        ..base.clone()
    };
    assert!((cos.lr_at(0) - 0.01).abs() < 1e-12); // warm-up: 1/10 of the rate
    assert!((cos.lr_at(10) - 0.1).abs() < 1e-12);
    assert!((cos.lr_at(60) - 0.055).abs() < 1e-12); // half-way down
    assert!((cos.lr_at(10_000) - 0.01).abs() < 1e-12);
}

#[test]
fn config_parses_with_defaults_and_rejects_bad_input() {
    let c: TrainConfig =
        toml::from_str("batch_size = 64\noptimizer = \"adam\"\nlr_schedule = \"cosine\"").unwrap();
    assert_eq!(c.batch_size, 64);
    assert_eq!(c.optimizer, OptimizerKind::Adam);
    assert_eq!(c.weight_decay, TrainConfig::default().weight_decay);
    assert!(toml::from_str::<TrainConfig>("batchsize = 64").is_err());
    assert!(toml::from_str::<TrainConfig>("optimizer = \"rmsprop\"").is_err());
    let bad = TrainConfig {
        root_value_mix: 1.5,
        ..TrainConfig::default()
    };
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("root_value_mix"), "{e}");
    let bad = TrainConfig {
        window_max: 5,
        ..TrainConfig::default()
    };
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .contains("window_max"));
    let net = Net::new(&tiny_config(false), Device::Cpu, 0).unwrap();
    assert!(matches!(
        Trainer::new(
            net,
            TrainConfig {
                batch_size: 0,
                ..TrainConfig::default()
            }
        ),
        Err(TrainError::Config {
            field: "batch_size",
            ..
        })
    ));
}

fn max_abs_diff(a: &Net, b: &Net) -> f64 {
    let va = a.var_store().variables();
    let vb = b.var_store().variables();
    assert_eq!(va.len(), vb.len());
    va.iter()
        .map(|(name, t)| f64::try_from((t - &vb[name]).abs().max()).unwrap())
        .fold(0.0, f64::max)
}

/// Trains `2k` steps straight, and `k` steps + save + load into a new net and trainer + `k`
/// steps; the weights must be bit-identical.
fn exact_resume(optimizer: OptimizerKind, arch: &NetConfig) {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games");
    std::fs::create_dir_all(&games).unwrap();
    write_records(&games.join("shard-a.bin"), make_records(120, 1, 1));
    write_records(&games.join("shard-b.bin"), make_records(80, 2, 2));
    let config = TrainConfig {
        batch_size: 16,
        optimizer,
        lr: if optimizer == OptimizerKind::Adam {
            2e-3
        } else {
            0.02
        },
        nesterov: true,
        lr_schedule: LrSchedule::Cosine,
        lr_cosine_steps: 20,
        lr_floor: 0.001,
        warmup_steps: 3,
        root_value_mix: 0.3,
        window_min: 150,
        window_max: 150,
        prefetch: 0,
        seed: 99,
        ..TrainConfig::default()
    };
    let k = 5;

    let mut window = Window::new(&games, &config);
    window.refresh().unwrap();
    assert_eq!(window.len(), 150);
    // Tests run on parallel threads and `Net::new` seeds libtorch's global generator, so two
    // `Net::new(.., 7)` are not guaranteed the same weights: copy one initial net instead.
    let init = Net::new(arch, Device::Cpu, 7).unwrap();
    let copy_of_init = || {
        let mut net = Net::new(arch, Device::Cpu, 0).unwrap();
        net.var_store_mut().copy(init.var_store()).unwrap();
        net
    };
    let net = copy_of_init();
    let mut straight = Trainer::new(net, config.clone()).unwrap();
    straight.train_steps(&window, 2 * k, |_| {}).unwrap();

    let net = copy_of_init();
    let mut first = Trainer::new(net, config.clone()).unwrap();
    first.train_steps(&window, k, |_| {}).unwrap();
    let state = dir.path().join("trainer");
    first.save(&state, &window).unwrap();
    let ckpt_dir = dir.path().join("checkpoints");
    let info = CheckpointInfo {
        name: "resume".to_owned(),
        step: first.step(),
        rules: "fmjd".to_owned(),
        seed: 7,
        parent: None,
    };
    let meta = checkpoint::save(first.net(), &ckpt_dir, &info).unwrap();
    drop(first);
    drop(window);

    // A new "process": net from the checkpoint, trainer and window from the saved state.
    let _ = Net::new(arch, Device::Cpu, 12345).unwrap(); // disturb libtorch's generator
    let (net, _) = checkpoint::load(
        &checkpoint::sidecar_path(&ckpt_dir, &meta.model_id),
        Device::Cpu,
    )
    .unwrap();
    let (mut resumed, wstate) = Trainer::load(&state, net).unwrap();
    assert_eq!(resumed.step(), k);
    assert_eq!(resumed.config(), &config);
    // The resumed run builds its batches on a second thread: same batches, same result.
    resumed
        .set_config(TrainConfig {
            prefetch: 2,
            ..config.clone()
        })
        .unwrap();
    let (window, skipped) = Window::resume(&games, &config, wstate);
    assert!(skipped.is_empty());
    assert_eq!(window.len(), 150);
    resumed.train_steps(&window, k, |_| {}).unwrap();
    assert_eq!(resumed.step(), 2 * k);

    let diff = max_abs_diff(straight.net(), resumed.net());
    assert_eq!(diff, 0.0, "{optimizer:?}: weights differ by {diff}");
    // And training did move the weights.
    assert!(max_abs_diff(&init, resumed.net()) > 1e-4);
}

#[test]
fn exact_resume_sgd() {
    exact_resume(OptimizerKind::Sgd, &tiny_config(false));
}

#[test]
fn exact_resume_adam_with_moves_left_head() {
    exact_resume(OptimizerKind::Adam, &tiny_config(true));
}

#[test]
fn exact_resume_sparse() {
    exact_resume(OptimizerKind::Sgd, &common::tiny_sparse_config(false));
    exact_resume(OptimizerKind::Adam, &common::tiny_sparse_config(true));
}

#[test]
fn bad_state_files_give_typed_errors_naming_the_file() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let config = TrainConfig {
        batch_size: 8,
        window_min: 20,
        window_max: 20,
        ..TrainConfig::default()
    };
    let window = Window::from_records(
        dir.path(),
        &config,
        "mem",
        Rules::FMJD,
        make_records(20, 4, 0),
    );
    let arch = tiny_config(false);
    let net = Net::new(&arch, Device::Cpu, 5).unwrap();
    let mut trainer = Trainer::new(net, config).unwrap();
    trainer.train_steps(&window, 2, |_| {}).unwrap();
    let state = dir.path().join("state");
    trainer.save(&state, &window).unwrap();
    let weights = dir.path().join("w.safetensors");
    trainer.net().var_store().save(&weights).unwrap();
    let same_net = || {
        let mut n = Net::new(&arch, Device::Cpu, 0).unwrap();
        checkpoint::load_weights(&mut n, &weights).unwrap();
        n
    };
    assert!(Trainer::load(&state, same_net()).is_ok());

    let json_path = state.join(TRAINER_FILE);
    let opt_path = state.join(OPTIMIZER_FILE);
    let json = std::fs::read_to_string(&json_path).unwrap();
    let opt = std::fs::read(&opt_path).unwrap();
    let err = |net: Net| Trainer::load(&state, net).unwrap_err();

    // Another net's weights.
    let e = err(Net::new(&arch, Device::Cpu, 6).unwrap());
    assert!(matches!(e, TrainError::Weights { step: 2, .. }), "{e}");
    // Another architecture.
    let e = err(Net::new(&tiny_config(true), Device::Cpu, 6).unwrap());
    assert!(matches!(e, TrainError::Architecture { .. }), "{e}");

    // Not JSON; an unknown field; a bad value.
    for (text, field) in [
        ("{ not json".to_owned(), "."),
        (json.replacen("\"step\"", "\"steps\"", 1), "steps"),
        (
            json.replacen("\"optimizer\": \"sgd\"", "\"optimizer\": \"lbfgs\"", 1),
            "optimizer",
        ),
        (
            json.replacen("\"batch_size\": 8", "\"batch_size\": 0", 1),
            "config.batch_size",
        ),
    ] {
        std::fs::write(&json_path, &text).unwrap();
        let e = err(same_net());
        match &e {
            TrainError::BadState { path, field: f, .. } => {
                assert_eq!(path, &json_path);
                assert_eq!(f, field, "{e}");
            }
            other => panic!("expected BadState at {field}, got {other}"),
        }
        assert!(e.to_string().contains(TRAINER_FILE), "{e}");
    }
    std::fs::write(&json_path, &json).unwrap();

    // The optimizer file missing, damaged, or of another optimizer.
    std::fs::remove_file(&opt_path).unwrap();
    let e = err(same_net());
    assert!(
        matches!(&e, TrainError::Missing { path } if path == &opt_path),
        "{e}"
    );
    assert!(e.to_string().contains(OPTIMIZER_FILE), "{e}");
    let mut damaged = opt.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 0x40;
    std::fs::write(&opt_path, &damaged).unwrap();
    let e = err(same_net());
    assert!(
        matches!(&e, TrainError::OptimizerFile { path, .. } if path == &opt_path),
        "{e}"
    );
    std::fs::write(&opt_path, &opt[..opt.len() / 2]).unwrap();
    assert!(matches!(err(same_net()), TrainError::OptimizerFile { .. }));
    std::fs::write(&opt_path, &opt).unwrap();
    assert!(Trainer::load(&state, same_net()).is_ok());

    // trainer.json missing.
    std::fs::remove_file(&json_path).unwrap();
    let e = err(same_net());
    assert!(
        matches!(&e, TrainError::Missing { path } if path == &json_path),
        "{e}"
    );

    // Switching optimizer on a loaded state is refused.
    std::fs::write(&json_path, &json).unwrap();
    let (mut t, _) = Trainer::load(&state, same_net()).unwrap();
    let e = t
        .set_config(TrainConfig {
            optimizer: OptimizerKind::Adam,
            ..t.config().clone()
        })
        .unwrap_err();
    assert!(matches!(e, TrainError::OptimizerChange { .. }));
}

#[test]
fn empty_window_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = TrainConfig::default();
    let mut w = Window::new(dir.path(), &config);
    assert_eq!(w.refresh().unwrap().new_shards, 0);
    let net = Net::new(&tiny_config(false), Device::Cpu, 0).unwrap();
    let mut trainer = Trainer::new(net, config).unwrap();
    assert!(matches!(
        trainer.train_steps(&w, 1, |_| {}),
        Err(TrainError::EmptyWindow { .. })
    ));
    assert_eq!(trainer.train_steps(&w, 0, |_| {}).unwrap().steps, 0);
    // A directory that does not exist: the error names it.
    let mut missing = Window::new(dir.path().join("nope"), &TrainConfig::default());
    let e = missing.refresh().unwrap_err().to_string();
    assert!(e.contains("nope"), "{e}");
}

/// The optimizers against a reference written out in f64 from PyTorch's formulas
/// (`torch.optim.SGD` without dampening, `torch.optim.AdamW`), on `loss = sum(w^2) / 2` (so
/// the gradient is `w`) over one decayed weight matrix and one undecayed bias.
#[test]
fn optimizer_updates_match_the_reference() {
    tch::set_num_threads(1);
    let cases = [
        (OptimizerKind::Sgd, false),
        (OptimizerKind::Sgd, true),
        (OptimizerKind::Adam, false),
    ];
    for (kind, nesterov) in cases {
        let config = TrainConfig {
            optimizer: kind,
            nesterov,
            lr: 0.1,
            momentum: 0.8,
            weight_decay: 0.05,
            adam_beta1: 0.7,
            adam_beta2: 0.9,
            adam_eps: 1e-3,
            ..TrainConfig::default()
        };
        let net = Net::new(&tiny_config(false), Device::Cpu, 8).unwrap();
        let vars = net.var_store().variables();
        let names = ["value.fc2.weight", "value.fc2.bias"];
        let read = |name: &str| -> Vec<f64> {
            Vec::<f32>::try_from(vars[name].flatten(0, -1))
                .unwrap()
                .into_iter()
                .map(f64::from)
                .collect()
        };
        let mut w: Vec<Vec<f64>> = names.iter().map(|n| read(n)).collect();
        let mut s1: Vec<Vec<f64>> = w.iter().map(|x| vec![0.0; x.len()]).collect();
        let mut s2 = s1.clone();
        let untouched = read("policy.fc.weight");
        let mut opt = draughts_nn::train::Optimizer::new(&net, kind).unwrap();
        for t in 1..=3 {
            opt.zero_grad();
            let loss = names
                .iter()
                .map(|n| vars[*n].square().sum(Kind::Float))
                .fold(Tensor::from(0.0f32), |a, b| a + b)
                * 0.5;
            loss.backward();
            opt.step(config.lr, &config).unwrap();
            let (lr, wd, mu) = (config.lr, config.weight_decay, config.momentum);
            for (k, decay) in [(0, true), (1, false)] {
                let wd = if decay { wd } else { 0.0 };
                for i in 0..w[k].len() {
                    let g = w[k][i];
                    match kind {
                        OptimizerKind::Sgd => {
                            let g = g + wd * w[k][i];
                            s1[k][i] = mu * s1[k][i] + g;
                            let u = if nesterov {
                                g + mu * s1[k][i]
                            } else {
                                s1[k][i]
                            };
                            w[k][i] -= lr * u;
                        }
                        OptimizerKind::Adam => {
                            let (b1, b2) = (config.adam_beta1, config.adam_beta2);
                            w[k][i] *= 1.0 - lr * wd;
                            s1[k][i] = b1 * s1[k][i] + (1.0 - b1) * g;
                            s2[k][i] = b2 * s2[k][i] + (1.0 - b2) * g * g;
                            let mhat = s1[k][i] / (1.0 - b1.powi(t));
                            let vhat = s2[k][i] / (1.0 - b2.powi(t));
                            w[k][i] -= lr * mhat / (vhat.sqrt() + config.adam_eps);
                        }
                    }
                }
            }
        }
        for (k, name) in names.iter().enumerate() {
            let got = read(name);
            let diff = got
                .iter()
                .zip(&w[k])
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(
                diff < 1e-5,
                "{kind:?} nesterov {nesterov} {name}: off by {diff}"
            );
        }
        // The other variables had no gradient and did not move.
        assert_eq!(read("policy.fc.weight"), untouched);
        assert_eq!(opt.steps(), 3);
    }
}

/// The block-pattern table takes lazy Adam steps: a row with a gradient follows AdamW exactly
/// (moments, bias correction at the global step, weight decay), a row without one keeps its
/// value. Rows 3 and 70,000 have a gradient in steps 1 and 2, only row 3 in step 3.
#[test]
fn pattern_rows_without_a_gradient_keep_their_values_under_adam() {
    tch::set_num_threads(1);
    let config = TrainConfig {
        lr: 0.1,
        weight_decay: 0.05,
        adam_beta1: 0.7,
        adam_beta2: 0.9,
        adam_eps: 1e-3,
        ..TrainConfig::default()
    };
    let net = Net::new(&NetConfig { patterns: true, ..common::tiny_sparse_config(false) }, Device::Cpu, 8).unwrap();
    let table = net.var_store().variables()["pt.weight"].shallow_clone();
    let width = table.size()[1] as usize;
    tch::no_grad(|| {
        let _ = table.get(3).fill_(0.5);
        let _ = table.get(70_000).fill_(-0.3);
        let _ = table.get(5).fill_(0.25);
    });
    let row = |r: i64| Vec::<f32>::try_from(table.get(r)).unwrap();
    let mut opt = draughts_nn::train::Optimizer::new(&net, OptimizerKind::Adam).unwrap();
    let (b1, b2) = (config.adam_beta1, config.adam_beta2);
    // Reference: (w, m, v) of one entry of each row (every entry of a row is equal).
    let mut reference = [(0.5f64, 0.0f64, 0.0f64), (-0.3, 0.0, 0.0)];
    for t in 1..=3 {
        opt.zero_grad();
        let rows: &[i64] = if t < 3 { &[3, 70_000] } else { &[3] };
        let picked = table.index_select(0, &Tensor::from_slice(rows));
        (picked.square().sum(Kind::Float) * 0.5).backward();
        opt.step(config.lr, &config).unwrap();
        for (w, m, v) in reference.iter_mut().take(rows.len()) {
            let g = *w;
            *w *= 1.0 - config.lr * config.weight_decay;
            *m = b1 * *m + (1.0 - b1) * g;
            *v = b2 * *v + (1.0 - b2) * g * g;
            let (mhat, vhat) = (*m / (1.0 - b1.powi(t)), *v / (1.0 - b2.powi(t)));
            *w -= config.lr * mhat / (vhat.sqrt() + config.adam_eps);
        }
    }
    for (r, (w, _, _)) in [(3, reference[0]), (70_000, reference[1])] {
        let got = row(r);
        assert_eq!(got.len(), width);
        assert!(got.iter().all(|&x| (x as f64 - w).abs() < 1e-5), "row {r}: {:?} against {w}", &got[..2]);
    }
    // Rows never reached keep their values, decay included.
    assert!(row(5).iter().all(|&x| x == 0.25));
    assert!(row(0).iter().all(|&x| x == 0.0));
}

/// A NaN in the net makes the first step fail with a typed error, leaves the step count alone,
/// and stops the batch-builder thread (which would otherwise wait forever on a full channel).
#[test]
fn non_finite_loss_is_an_error_and_stops_the_builder() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let config = TrainConfig {
        batch_size: 8,
        window_min: 40,
        window_max: 40,
        prefetch: 1,
        ..TrainConfig::default()
    };
    let window = Window::from_records(
        dir.path(),
        &config,
        "mem",
        Rules::FMJD,
        make_records(40, 6, 0),
    );
    let net = Net::new(&tiny_config(false), Device::Cpu, 2).unwrap();
    tch::no_grad(|| {
        let mut w = net.var_store().variables()["value.fc2.bias"].shallow_clone();
        let _ = w.fill_(f64::NAN);
    });
    let mut trainer = Trainer::new(net, config).unwrap();
    let e = trainer.train_steps(&window, 20, |_| {}).unwrap_err();
    assert!(matches!(e, TrainError::NonFinite { step: 0, .. }), "{e}");
    assert_eq!(trainer.step(), 0);
}
