//! `draughts perft`.

use std::process::ExitCode;
use std::time::Instant;

use draughts_core::{perft, Position};

use crate::bad_input;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Start position as FEN (default: the start position).
    #[arg(long)]
    fen: Option<String>,
    /// Number of plies.
    #[arg(long)]
    depth: u32,
    /// Print the count below each root move.
    #[arg(long)]
    divide: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Worker threads (default: one per core; 1 runs single-threaded).
    #[arg(long)]
    threads: Option<usize>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let pos = match &a.fen {
        Some(f) => Position::from_fen(f).map_err(bad_input)?,
        None => Position::start(),
    };
    if a.depth > 30 {
        return Err(bad_input(format!("--depth {} is beyond any feasible perft (at most 30)", a.depth)));
    }
    let threads = a.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads == 0 {
        return Err(bad_input("--threads must be at least 1"));
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let start = Instant::now();
    let (nodes, divide) = pool.install(|| {
        if a.divide {
            let d = if threads == 1 { perft::divide(&pos, a.depth) } else { perft::divide_parallel(&pos, a.depth) };
            (d.iter().map(|(_, n)| n).sum(), Some(d))
        } else if threads == 1 {
            (perft::perft(&pos, a.depth), None)
        } else {
            (perft::perft_parallel(&pos, a.depth), None)
        }
    });
    let secs = start.elapsed().as_secs_f64();
    let rate = nodes as f64 / secs.max(1e-9);
    if a.json {
        let mut obj = serde_json::json!({
            "fen": pos.to_fen(),
            "depth": a.depth,
            "nodes": nodes,
            "threads": threads,
            "seconds": secs,
            "leaves_per_second": rate,
        });
        if let Some(d) = &divide {
            let map: serde_json::Map<String, serde_json::Value> =
                d.iter().map(|(m, n)| (m.to_hub(), serde_json::json!(n))).collect();
            obj["divide"] = serde_json::Value::Object(map);
        }
        println!("{obj}");
    } else {
        if let Some(d) = &divide {
            for (m, n) in d {
                println!("{}\t{n}", m.to_hub());
            }
        }
        println!("perft {} = {nodes}  ({secs:.3} s, {:.1} M leaves/s, {threads} thread(s))", a.depth, rate / 1e6);
    }
    Ok(ExitCode::SUCCESS)
}
