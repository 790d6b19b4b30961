//! Search speed with the hand-made evaluation and with a random sparse network of the given
//! sizes, side by side: `cargo run --release -p draughts-engine --example learned_speed -- [ACC H1 H2 ..]`.
//! With `MODEL=PATH` (a model directory or checkpoint) it searches with that network, quantised,
//! instead (a loop to profile); `draughts bench nnue --model PATH` compares a trained network in full.
use std::sync::Arc;

use draughts_engine::{bench, bench_with, EngineConfig};
use draughts_model::NetConfig;
use draughts_nnue::testing::{random_tensors, write_checkpoint};
use draughts_nnue::Network;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("sizes")).collect();
    let arch = NetConfig {
        accumulator: args.first().copied().unwrap_or(128),
        hidden: if args.len() > 1 { args[1..].to_vec() } else { vec![32, 32] },
        ..NetConfig::sparse()
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let model = std::env::var_os("MODEL");
    let net = match &model {
        Some(path) => Arc::new(Network::load(path.as_ref()).expect("MODEL: a sparse model or checkpoint")),
        None => Arc::new(Network::load(&write_checkpoint(dir.path(), "r", 0, &arch, &random_tensors(&arch, 1, 1.0))).expect("net")),
    };
    let arch = net.architecture().clone();
    for round in 0..3 {
        let h = if std::env::var_os("SKIP_HAND").is_some() { bench(1) } else { bench(9) };
        let mut config = EngineConfig::learned(net.clone());
        config.options.quantised = model.is_some();
        let l = bench_with(config, 9);
        println!(
            "round {round}: hand-made {} nodes {} nps | {} ({}) {} nodes {} nps | ratio {:.2}",
            h.nodes, h.nps, arch.short_name(), net.kernels(), l.nodes, l.nps, l.nps as f64 / h.nps as f64
        );
    }
}
