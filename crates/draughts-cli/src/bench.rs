//! `draughts bench`: benchmarks that print their figures.

use std::process::ExitCode;
use std::time::Instant;

use draughts_core::{perft, Position};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: Option<What>,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Alpha-beta search of a fixed set of positions to a fixed depth: total nodes (the
    /// regression check for search changes) and nodes per second.
    Search {
        /// Depth of every search.
        #[arg(long, default_value_t = DEFAULT_BENCH_DEPTH)]
        depth: u32,
    },
    /// Perft leaves per second from the start position, single-threaded and parallel.
    Perft {
        /// Shallowest depth.
        #[arg(long, default_value_t = 9)]
        min_depth: u32,
        /// Deepest depth (11 takes a minute or so on one core).
        #[arg(long, default_value_t = 11)]
        max_depth: u32,
        /// Threads for the parallel run (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
    },
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.what {
        Some(What::Perft { min_depth, max_depth, threads }) => bench_perft(min_depth, max_depth, threads),
        Some(What::Search { depth }) => bench_search(depth),
        None => bench_search(DEFAULT_BENCH_DEPTH),
    }
}

/// Depth of `draughts bench` when none is given.
const DEFAULT_BENCH_DEPTH: u32 = 10;

fn bench_search(depth: u32) -> anyhow::Result<ExitCode> {
    let r = draughts_engine::bench(depth);
    for p in &r.per_position {
        let best = p.best.map_or("-".to_owned(), |m| m.to_hub());
        println!("{:<60} {:>12} nodes  {:>8} best {}  score {}", p.fen, p.nodes, format!("{:.3}s", p.time.as_secs_f64()), best, p.score);
    }
    println!("bench depth {}: {} nodes in {:.3} s, {} nodes/s", r.depth, r.nodes, r.time.as_secs_f64(), r.nps);
    Ok(ExitCode::SUCCESS)
}

fn bench_perft(min_depth: u32, max_depth: u32, threads: Option<usize>) -> anyhow::Result<ExitCode> {
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads.max(1)).build()?;
    let pos = Position::start();
    println!("perft from the start position, bulk counting; {threads} thread(s) for the parallel run");
    println!("{:>5} {:>14} {:>10} {:>14} {:>10} {:>14} {:>8}", "depth", "leaves", "1T s", "1T leaves/s", "NT s", "NT leaves/s", "speedup");
    for depth in min_depth..=max_depth {
        let t = Instant::now();
        let n1 = perft::perft(&pos, depth);
        let s1 = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let n2 = pool.install(|| perft::perft_parallel(&pos, depth));
        let s2 = t.elapsed().as_secs_f64();
        anyhow::ensure!(n1 == n2, "single-threaded and parallel perft disagree at depth {depth}: {n1} vs {n2}");
        println!(
            "{depth:>5} {n1:>14} {s1:>10.3} {:>12.1} M {s2:>10.3} {:>12.1} M {:>7.2}x",
            n1 as f64 / s1 / 1e6,
            n2 as f64 / s2 / 1e6,
            s1 / s2
        );
    }
    Ok(ExitCode::SUCCESS)
}
