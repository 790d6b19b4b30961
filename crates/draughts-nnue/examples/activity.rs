//! Fraction of zero and saturated first-layer outputs of a model on random-game positions:
//! `cargo run --release -p draughts-nnue --example activity -- MODEL`.
use draughts_core::Position;
use draughts_nnue::{Network, Scratch};

fn main() {
    let path = std::env::args().nth(1).expect("a model path");
    let net = Network::load(path.as_ref()).expect("model");
    let mut scratch = Scratch::default();
    let mut acc = net.new_accumulator();
    let (mut zeros, mut ones, mut total) = (0, 0, 0);
    let mut state = 3u64;
    for _ in 0..300 {
        let mut pos = Position::start();
        for _ in 0..80 {
            let moves = pos.legal_moves();
            if moves.is_empty() { break; }
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            pos = pos.play(&moves[(state >> 33) as usize % moves.len()]);
            net.refresh(&pos, &mut acc);
            let (z, o, n) = net.activity(&acc, pos.side_to_move(), &mut scratch);
            zeros += z; ones += o; total += n;
        }
    }
    println!("zeros {:.1}%, ones {:.1}%", 100.0 * zeros as f64 / total as f64, 100.0 * ones as f64 / total as f64);
}
