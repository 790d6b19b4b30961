//! Forward-pass speed of the network, in positions per second.
//!
//! ```text
//! cargo run --release -p draughts-nn --example forward_speed [-- --device cpu|cuda|auto] [--secs S]
//!     [--threads 1,2] [--batches 1,8,32,128] [--nets 4x32,6x64] [--policy-channels 4]
//! ```
//!
//! For each libtorch thread count, net and batch size: raw batched forward passes
//! ([`draughts_nn::bench_forward`]), then the whole evaluator path at batch 32 (encoding, forward,
//! masked softmax over the legal moves) for comparison.

use std::time::Instant;

use draughts_nn::bench::{sample_states, BENCH_SEED};
use draughts_nn::{bench_forward, DeviceChoice, Net, NetConfig, NetEvaluator, NetRequest};

struct Args {
    device: DeviceChoice,
    secs: f64,
    threads: Vec<i32>,
    batches: Vec<usize>,
    nets: Vec<(usize, usize)>,
    policy_channels: usize,
}

fn parse_list<T: std::str::FromStr>(s: &str) -> Result<Vec<T>, String> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse::<T>()
                .map_err(|_| format!("bad list item `{x}`"))
        })
        .collect()
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        device: DeviceChoice::Cpu,
        secs: 1.0,
        threads: vec![1, 2],
        batches: vec![1, 8, 32, 128],
        nets: vec![(4, 32), (6, 64)],
        policy_channels: NetConfig::default().policy_channels,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--device" => {
                args.device = match value.as_str() {
                    "cpu" => DeviceChoice::Cpu,
                    "cuda" => DeviceChoice::Cuda,
                    "auto" => DeviceChoice::Auto,
                    other => return Err(format!("unknown device `{other}`")),
                }
            }
            "--secs" => args.secs = value.parse().map_err(|_| format!("bad --secs `{value}`"))?,
            "--policy-channels" => {
                args.policy_channels = value
                    .parse()
                    .map_err(|_| format!("bad --policy-channels `{value}`"))?
            }
            "--threads" => args.threads = parse_list(&value)?,
            "--batches" => args.batches = parse_list(&value)?,
            "--nets" => {
                args.nets = value
                    .split(',')
                    .map(|n| {
                        let (b, c) = n
                            .split_once('x')
                            .ok_or_else(|| format!("bad net `{n}`, want BxC"))?;
                        Ok((
                            b.parse().map_err(|_| format!("bad net `{n}`"))?,
                            c.parse().map_err(|_| format!("bad net `{n}`"))?,
                        ))
                    })
                    .collect::<Result<_, String>>()?
            }
            other => return Err(format!("unknown flag `{other}`")),
        }
    }
    Ok(args)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("forward_speed: {e}");
            std::process::exit(2);
        }
    };
    let device = match args.device.resolve() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("forward_speed: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "device {device:?}, libtorch {}, {:.1} s per figure",
        draughts_nn::checkpoint::LIBTORCH_VERSION,
        args.secs
    );
    println!(
        "{:>7} {:>6} {:>6} {:>12} {:>12}",
        "threads", "net", "batch", "positions/s", "params"
    );
    for &threads in &args.threads {
        tch::set_num_threads(threads);
        for &(blocks, channels) in &args.nets {
            let config = NetConfig {
                blocks,
                channels,
                policy_channels: args.policy_channels,
                ..NetConfig::default()
            };
            let net = Net::new(&config, device, 1).expect("net");
            for &batch in &args.batches {
                // Calibrate on a few passes, then time about `secs` seconds.
                let rate = bench_forward(&net, batch, 3).expect("forward");
                let iters = ((args.secs * rate / batch as f64) as usize).max(5);
                let rate = bench_forward(&net, batch, iters).expect("forward");
                println!(
                    "{threads:>7} {:>6} {batch:>6} {rate:>12.0} {:>12}",
                    config.short_name(),
                    net.parameter_count()
                );
            }
            // The whole evaluator path at batch 32: encode, forward, masked softmax.
            let states = sample_states(32, BENCH_SEED);
            let moves: Vec<_> = states.iter().map(|s| s.position.legal_moves()).collect();
            let reqs: Vec<NetRequest<'_>> = states
                .iter()
                .zip(&moves)
                .map(|(s, m)| NetRequest {
                    position: s.position,
                    counters: s.counters,
                    repetitions: s.repetitions,
                    moves: m,
                })
                .collect();
            let evaluator = NetEvaluator::new(net, 32);
            evaluator.evaluate(&reqs).expect("evaluate");
            let start = Instant::now();
            let mut n = 0usize;
            while start.elapsed().as_secs_f64() < args.secs {
                n += evaluator.evaluate(&reqs).expect("evaluate").len();
            }
            let rate = n as f64 / start.elapsed().as_secs_f64();
            println!(
                "{threads:>7} {:>6} {:>6} {rate:>12.0}   (evaluator path)",
                config.short_name(),
                32
            );
        }
    }
}
