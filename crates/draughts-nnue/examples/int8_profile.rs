//! Float against int8 evaluations of the shipped network, alternating, best of 20 passes:
//! `cargo run --release -p draughts-nnue --example int8_profile` (also a loop to profile).
use draughts_core::Position;
use draughts_nnue::{Network, Precision, Scratch};

fn main() {
    let net = Network::load("models/sparse-2h".as_ref()).unwrap();
    let precision = if std::env::args().nth(1).as_deref() == Some("float") { Precision::Float } else { Precision::Int8 };
    let mut scratch = Scratch::default();
    let mut acc = net.new_accumulator_with(precision);
    let mut positions = Vec::new();
    let mut pos = Position::start();
    let mut state = 7u64;
    while positions.len() < 1000 {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            pos = Position::start();
            continue;
        }
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        positions.push(pos);
        pos = pos.play(&moves[(state >> 33) as usize % moves.len()]);
    }
    let mut accs = Vec::new();
    for p in &positions {
        net.refresh(p, &mut acc);
        accs.push((acc.clone(), p.side_to_move()));
    }
    let mut floats = Vec::new();
    for p in &positions {
        let mut a = net.new_accumulator();
        net.refresh(p, &mut a);
        floats.push((a, p.side_to_move()));
    }
    let (mut best_f, mut best_q) = (f64::MAX, f64::MAX);
    let mut sink = 0.0;
    for _ in 0..20 {
        let t = std::time::Instant::now();
        for _ in 0..100 {
            for (a, s) in &accs {
                sink += net.evaluate(a, *s, &mut scratch).wdl_logits[0];
            }
        }
        best_q = best_q.min(t.elapsed().as_secs_f64() * 1e9 / 1e5);
        let t = std::time::Instant::now();
        for _ in 0..100 {
            for (a, s) in &floats {
                sink += net.evaluate(a, *s, &mut scratch).wdl_logits[0];
            }
        }
        best_f = best_f.min(t.elapsed().as_secs_f64() * 1e9 / 1e5);
    }
    println!("{} best of 20: float {best_f:.0} ns/eval, {precision:?} {best_q:.0} ns/eval {sink}", net.kernels());
}
