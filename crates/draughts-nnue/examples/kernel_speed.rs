//! Quick speed check of the native network with random weights:
//! `cargo run --release -p draughts-nnue --example kernel_speed -- [ACC] [H1] [H2]`.
use std::time::Instant;

use draughts_core::Position;
use draughts_model::NetConfig;
use draughts_nnue::testing::{random_tensors, write_checkpoint};
use draughts_nnue::{Network, Scratch, Simd};

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let acc = args.first().copied().unwrap_or(128);
    let hidden = if args.len() > 1 { args[1..].to_vec() } else { vec![32, 32] };
    let arch = NetConfig { accumulator: acc, hidden, ..NetConfig::sparse() };
    let dir = tempfile::tempdir().unwrap();
    let sidecar = write_checkpoint(dir.path(), "speed", 0, &arch, &random_tensors(&arch, 1, 1.0));
    // Positions from a fixed pseudo-random game stream.
    let mut state = 7u64;
    let mut positions = Vec::new();
    while positions.len() < 20000 {
        let mut pos = Position::start();
        for _ in 0..120 {
            let moves = pos.legal_moves();
            if moves.is_empty() { break; }
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let mv = moves[(state >> 33) as usize % moves.len()];
            positions.push((pos, mv));
            pos = pos.play(&mv);
        }
    }
    for simd in [Simd::Auto, Simd::Scalar] {
        let net = Network::load(&sidecar).unwrap().with_simd(simd);
        let mut scratch = Scratch::default();
        let mut a = net.new_accumulator();
        let mut b = net.new_accumulator();
        let mut sink = 0.0f32;
        let t = Instant::now();
        for (pos, _) in &positions { net.refresh(pos, &mut a); sink += a.values()[0] as f32; }
        let refresh = t.elapsed().as_secs_f64() / positions.len() as f64;
        net.refresh(&positions[0].0, &mut a);
        let t = Instant::now();
        for (pos, mv) in &positions { net.update(&a, pos, mv, &mut b); sink += b.values()[1] as f32; }
        let update = t.elapsed().as_secs_f64() / positions.len() as f64;
        let t = Instant::now();
        for (pos, _) in &positions { sink += net.evaluate(&a, pos.side_to_move(), &mut scratch).wdl_logits[0]; }
        let eval = t.elapsed().as_secs_f64() / positions.len() as f64;
        let mut policy = Vec::new();
        let t = Instant::now();
        for (pos, _) in &positions { let m = pos.legal_moves(); sink += net.evaluate_position(pos, &m, &mut scratch, &mut policy).wdl_logits[0]; }
        let full = t.elapsed().as_secs_f64() / positions.len() as f64;
        println!("{} {}: refresh {:.0} ns, update {:.0} ns, evaluate {:.0} ns, from scratch with policy {:.0} ns ({:.0}/s)  [{sink}]",
            arch.short_name(), net.kernels(), refresh * 1e9, update * 1e9, eval * 1e9, full * 1e9, 1.0 / full);
    }
}
