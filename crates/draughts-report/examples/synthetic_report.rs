//! Writes a synthetic run directory and its report, to look at the plots and time the report.
//!
//! `cargo run -p draughts-report --release --example synthetic_report -- DIR [CYCLES] [SEED]`
//! creates `DIR/metrics.jsonl` (CYCLES cycles of self-play, training and evaluation, with noise
//! from SEED) and `DIR/report/`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// xorshift64*: enough noise for a picture, reproducible from the seed.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or("usage: synthetic_report DIR [CYCLES] [SEED]")?,
    );
    let cycles: i64 = args.next().map_or(Ok(40), |s| s.parse())?;
    let seed: u64 = args.next().map_or(Ok(1), |s| s.parse())?;
    let mut noise = Noise(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    std::fs::create_dir_all(&dir)?;

    let t0 = 1_760_000_000.0;
    let mut s = String::new();
    writeln!(
        s,
        r#"{{"time": {t0}, "stage": "start", "seed": {seed}, "version": "0.1.0", "device": "cpu"}}"#
    )?;
    let mut t = t0;
    let mut step = 0u64;
    for c in 0..cycles {
        let cf = c as f64;
        let secs = 240.0 + 30.0 * noise.next();
        t += secs;
        let games = (200.0 + 20.0 * noise.next()) as u64;
        writeln!(
            s,
            r#"{{"time": {t}, "stage": "selfplay", "cycle": {c}, "games": {games}, "positions": {}, "seconds": {secs}, "evals_per_second": {}, "mean_batch": 60.2, "model": "m{c}", "plies_mean": {}, "white_wins": {}, "draws": {}, "black_wins": {}}}"#,
            games * 90,
            9000.0 + 600.0 * noise.next() + 20.0 * cf,
            95.0 - cf * 0.3,
            games / 3,
            games / 3,
            games - 2 * (games / 3),
        )?;
        for _ in 0..5 {
            step += 200;
            t += 30.0;
            let x = step as f64 / 2000.0;
            let p = 3.5 / (1.0 + x) + 1.2 + 0.08 * noise.next();
            let v = 0.9 / (1.0 + 0.5 * x) + 0.35 + 0.03 * noise.next();
            let ml = 0.4 / (1.0 + x) + 0.1 + 0.01 * noise.next();
            writeln!(
                s,
                r#"{{"time": {t}, "stage": "train", "cycle": {c}, "step": {step}, "samples": 51200, "seconds": 30.0, "loss": {}, "policy_loss": {p}, "value_loss": {v}, "moves_left_loss": {ml}, "lr": 0.002}}"#,
                p + v + ml
            )?;
        }
        for (o, (name, base)) in [
            ("random", 300.0),
            ("alphabeta:depth=1", -200.0),
            ("previous", 0.0),
        ]
        .iter()
        .enumerate()
        {
            t += 40.0;
            let e = if o == 2 {
                30.0 * noise.next() + 20.0
            } else {
                base + 18.0 * cf + 40.0 * noise.next()
            };
            writeln!(
                s,
                r#"{{"time": {t}, "stage": "eval", "cycle": {c}, "opponent": "{name}", "games": 100, "wins": 50, "draws": 10, "losses": 40, "score": 0.55, "elo": {e}, "elo_low": {}, "elo_high": {}, "model": "m{c}"}}"#,
                e - 60.0,
                e + 60.0
            )?;
        }
    }
    s.push_str(r#"{"time": 1, "stage": "train", "st"#);
    std::fs::write(dir.join("metrics.jsonl"), s)?;

    let start = Instant::now();
    let report = draughts_report::write_report(&dir, &dir.join("report"))?;
    println!("report for {cycles} cycles in {:.2?}", start.elapsed());
    for p in &report.plots {
        println!("{}: {:?}", p.name, p.status);
    }
    for w in &report.warnings {
        println!("warning: {w}");
    }
    Ok(())
}
