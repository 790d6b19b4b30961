//! Search speed with the hand-made evaluation and with a random sparse network of the given
//! sizes, side by side: `cargo run --release -p draughts-engine --example learned_speed -- [ACC H1 H2 ..]`.
//! (`draughts bench --model DIR` does the same with a trained network.)
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
    let net = Arc::new(Network::load(&write_checkpoint(dir.path(), "r", 0, &arch, &random_tensors(&arch, 1, 1.0))).expect("net"));
    for round in 0..3 {
        let h = if std::env::var_os("SKIP_HAND").is_some() { bench(1) } else { bench(9) };
        let l = bench_with(EngineConfig::learned(net.clone()), 9);
        println!(
            "round {round}: hand-made {} nodes {} nps | {} ({}) {} nodes {} nps | ratio {:.2}",
            h.nodes, h.nps, arch.short_name(), net.kernels(), l.nodes, l.nps, l.nps as f64 / h.nps as f64
        );
    }
}
