use draughts_core::{perft, Position};
use std::time::Instant;
fn main() {
    let d: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(9);
    let p = Position::start();
    let t = Instant::now();
    let n = perft::perft(&p, d);
    let s = t.elapsed().as_secs_f64();
    println!("perft({d}) = {n} in {s:.3}s: {:.1} M leaves/s", n as f64 / s / 1e6);
}
