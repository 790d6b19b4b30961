//! Training throughput: the raw libtorch step against the whole `train_steps` path.
//!
//! ```text
//! cargo run --release -p draughts-nn --example train_speed [-- --net 4x32] [--batch 256]
//!     [--threads 2] [--secs 8] [--rounds 2] [--positions 8192] [--optimizer sgd|adam]
//! ```
//!
//! On one net and one batch size, in one process, `--rounds` times in turn:
//! - raw: forward + backward + optimizer step on one pre-built batch (`Trainer::train_batch`),
//!   and forward + backward alone (what the optimizer step costs);
//! - build: sampling from the window and building a batch (host buffers + tensors), alone;
//! - steps, prefetch 0: `Trainer::train_steps`, each batch built between steps;
//! - steps, prefetch 1: `Trainer::train_steps`, the next batch built on a second thread.
//!
//! Each figure is samples per second; the best round counts (other processes on a shared
//! machine only ever slow a run down), and the ratio is also given as the median over rounds of
//! the ratio within a round. `train_steps` also reports the share of its time spent waiting for
//! batches, which is the overhead of the data path by itself, free of that noise. The window holds `--positions` positions from random games
//! with random policy targets, under the FMJD rules.

use std::time::Instant;

use draughts_core::{Move, Rules};
use draughts_nn::bench::sample_states;
use draughts_nn::train::{loss, Batch, OptimizerKind, TargetParams, TrainConfig, Trainer, Window};
use draughts_nn::{Net, NetConfig};
use draughts_selfplay::{quantise_policy, RecordFlags, TrainingRecord, Wdl};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tch::Device;

struct Args {
    net: NetConfig,
    batch: usize,
    threads: i32,
    secs: f64,
    rounds: usize,
    positions: usize,
    optimizer: OptimizerKind,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        net: NetConfig::default(),
        batch: 256,
        threads: 2,
        secs: 8.0,
        rounds: 2,
        positions: 8192,
        optimizer: OptimizerKind::Sgd,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let bad = || format!("bad value `{v}` for {flag}");
        match flag.as_str() {
            "--net" => {
                let (b, c) = v.split_once('x').ok_or_else(bad)?;
                a.net.blocks = b.parse().map_err(|_| bad())?;
                a.net.channels = c.parse().map_err(|_| bad())?;
            }
            "--batch" => a.batch = v.parse().map_err(|_| bad())?,
            "--threads" => a.threads = v.parse().map_err(|_| bad())?,
            "--secs" => a.secs = v.parse().map_err(|_| bad())?,
            "--rounds" => a.rounds = v.parse::<usize>().map_err(|_| bad())?.max(1),
            "--positions" => a.positions = v.parse().map_err(|_| bad())?,
            "--optimizer" => {
                a.optimizer = match v.as_str() {
                    "sgd" => OptimizerKind::Sgd,
                    "adam" => OptimizerKind::Adam,
                    _ => return Err(bad()),
                }
            }
            _ => return Err(format!("unknown flag `{flag}`")),
        }
    }
    Ok(a)
}

fn records(n: usize, seed: u64) -> Vec<TrainingRecord> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    sample_states(n, seed)
        .into_iter()
        .map(|s| {
            let moves = s.position.legal_moves_with(&Rules::FMJD);
            let policy: Vec<(Move, f32)> = moves.iter().map(|m| (*m, rng.gen::<f32>())).collect();
            TrainingRecord {
                position: s.position,
                counters: s.counters,
                repetitions: s.repetitions as u8,
                ply: 0,
                moves_left: rng.gen_range(0..200),
                policy: quantise_policy(&policy),
                result: [Wdl::Win, Wdl::Draw, Wdl::Loss][rng.gen_range(0..3)],
                root_wdl: [0.3, 0.4, 0.3],
                flags: RecordFlags::FULL_SEARCH,
            }
        })
        .collect()
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("train_speed: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&args) {
        eprintln!("train_speed: {e}");
        std::process::exit(1);
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    tch::set_num_threads(args.threads);
    let config = TrainConfig {
        batch_size: args.batch,
        optimizer: args.optimizer,
        lr: if args.optimizer == OptimizerKind::Adam {
            1e-3
        } else {
            0.02
        },
        window_min: args.positions as u64,
        window_max: args.positions as u64,
        prefetch: 0,
        ..TrainConfig::default()
    };
    let t = Instant::now();
    let window = Window::from_records(
        "/nonexistent",
        &config,
        "synthetic",
        Rules::FMJD,
        records(args.positions, 1),
    );
    println!(
        "window: {} positions (built in {:.1} s); net {} ({} parameters), batch {}, {:?}, {} torch threads",
        window.len(),
        t.elapsed().as_secs_f64(),
        args.net.short_name(),
        Net::new(&args.net, Device::Cpu, 0)?.parameter_count(),
        args.batch,
        args.optimizer,
        args.threads
    );
    let net = Net::new(&args.net, Device::Cpu, 0)?;
    let mut trainer = Trainer::new(net, config.clone())?;
    let fixed = trainer.sample_batch(&window)?.to_tensors(Device::Cpu)?;
    for _ in 0..3 {
        trainer.train_batch(&fixed)?; // warm-up
    }

    let (mut raw, mut build, mut p0, mut p1) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut fwd_bwd = 0.0f64;
    let mut ratios = Vec::new();
    let mut wait = (0.0, 0.0);
    for round in 0..args.rounds {
        // Raw step on a pre-built batch.
        let start = Instant::now();
        let mut n = 0u64;
        while start.elapsed().as_secs_f64() < args.secs {
            trainer.train_batch(&fixed)?;
            n += 1;
        }
        let r = (n * args.batch as u64) as f64 / start.elapsed().as_secs_f64();
        raw = raw.max(r);
        let steps = n.max(2);

        // Forward + loss + backward only, no optimizer step (what the optimizer costs).
        let start = Instant::now();
        let mut m = 0u64;
        while start.elapsed().as_secs_f64() < args.secs.min(3.0) {
            let out = trainer.net().forward_t(&fixed.inputs, true)?;
            let terms = loss::compute(&out, &fixed, &config)?;
            terms.total.f_backward()?;
            m += 1;
        }
        // Drop the gradients this left behind (the next step zeroes them anyway).
        trainer.zero_grad();
        let f = (m * args.batch as u64) as f64 / start.elapsed().as_secs_f64();
        fwd_bwd = fwd_bwd.max(f);

        // Batch building alone (one thread).
        let mut rng = ChaCha8Rng::seed_from_u64(round as u64);
        let params = TargetParams::of(&config);
        let mut batch = Batch::new();
        let start = Instant::now();
        let mut built = 0u64;
        while start.elapsed().as_secs_f64() < args.secs.min(2.0) {
            window.fill_batch(&mut rng, args.batch, &params, &mut batch);
            let _ = batch.to_tensors(Device::Cpu)?;
            built += 1;
        }
        let b = (built * args.batch as u64) as f64 / start.elapsed().as_secs_f64();
        build = build.max(b);

        // The whole path, without and with prefetch.
        trainer.set_config(TrainConfig {
            prefetch: 0,
            ..config.clone()
        })?;
        let s0 = trainer.train_steps(&window, steps, |_| {})?;
        trainer.set_config(TrainConfig {
            prefetch: 1,
            ..config.clone()
        })?;
        let s1 = trainer.train_steps(&window, steps, |_| {})?;
        ratios.push((s0.samples_per_s / r, s1.samples_per_s / r));
        if s0.samples_per_s > p0 {
            p0 = s0.samples_per_s;
            wait.0 = s0.wait_seconds / s0.seconds;
        }
        if s1.samples_per_s > p1 {
            p1 = s1.samples_per_s;
            wait.1 = s1.wait_seconds / s1.seconds;
        }
        println!(
            "round {}: raw {:.0}/s (forward+backward {:.0}/s), build {:.0}/s, train_steps prefetch 0 {:.0}/s, prefetch 1 {:.0}/s (loss {:.3})",
            round + 1,
            r,
            f,
            b,
            s0.samples_per_s,
            s1.samples_per_s,
            s1.loss
        );
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let r0 = median(ratios.iter().map(|r| r.0).collect());
    let r1 = median(ratios.iter().map(|r| r.1).collect());
    println!("raw forward+backward+step on a pre-built batch: {raw:.0} samples/s");
    println!("forward+backward without the optimizer step: {fwd_bwd:.0} samples/s");
    println!(
        "batch building alone (sampling, encoding, targets, mask, tensors): {build:.0} samples/s"
    );
    println!(
        "train_steps, prefetch 0: {p0:.0} samples/s = {:.1}% of raw (waiting for batches {:.1}% of the time)",
        100.0 * p0 / raw,
        100.0 * wait.0
    );
    println!(
        "train_steps, prefetch 1: {p1:.0} samples/s = {:.1}% of raw (waiting for batches {:.1}% of the time)",
        100.0 * p1 / raw,
        100.0 * wait.1
    );
    println!(
        "median over rounds of train_steps / raw measured in the same round: prefetch 0 {:.1}%, prefetch 1 {:.1}%",
        100.0 * r0,
        100.0 * r1
    );
    Ok(())
}
