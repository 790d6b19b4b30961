//! Evaluates a model on random-game positions in a loop (for profiling).
use draughts_core::Position;
use draughts_nnue::{Network, Scratch};

fn main() {
    let path = std::env::args().nth(1).expect("a model path");
    let net = Network::load(path.as_ref()).expect("model");
    let mut scratch = Scratch::default();
    let mut accs = Vec::new();
    let mut state = 3u64;
    for _ in 0..100 {
        let mut pos = Position::start();
        for _ in 0..80 {
            let moves = pos.legal_moves();
            if moves.is_empty() { break; }
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            pos = pos.play(&moves[(state >> 33) as usize % moves.len()]);
            let mut acc = net.new_accumulator();
            net.refresh(&pos, &mut acc);
            accs.push((acc, pos.side_to_move()));
        }
    }
    let t = std::time::Instant::now();
    let mut sink = 0.0;
    let single = std::env::args().nth(2).is_some();
    for _ in 0..100 {
        for (i, (a, s)) in accs.iter().enumerate() {
            let a = if single { &accs[i % 16].0 } else { a };
            sink += net.evaluate(a, *s, &mut scratch).wdl_logits[0];
        }
    }
    println!("{:.0} ns per evaluate [{sink}]", t.elapsed().as_secs_f64() * 1e9 / (100 * accs.len()) as f64);
}
