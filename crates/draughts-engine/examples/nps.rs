//! Nodes per second on one core: the start position (iterative deepening to depth 18 or 5 s,
//! whichever comes first, 64 MiB table) and the bench set (fixed depth, deterministic node
//! count).
//!
//! `cargo run --release -p draughts-engine --example nps [-- START_DEPTH [BENCH_DEPTH [SECONDS]]]`
//!
//! Besides wall-clock speed it prints speed per second of CPU time of the searching thread
//! (read from `/proc/thread-self/schedstat` on Linux), which stays meaningful on a busy
//! machine where the thread does not get a whole core.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use draughts_core::{Game, Rules};
use draughts_engine::{bench, Engine, EngineConfig, Limits};

fn arg(i: usize, default: u64) -> u64 {
    std::env::args().nth(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Nanoseconds this thread has run on a CPU, where the system says.
fn cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

fn rates(nodes: u64, wall: Duration, cpu: Option<u64>) -> String {
    let wall_rate = nodes as f64 / wall.as_secs_f64().max(1e-9) / 1e6;
    match cpu {
        Some(ns) if ns > 0 => format!(
            "{wall_rate:.2} M nodes/s wall, {:.2} M nodes/s per CPU second ({:.3}s CPU)",
            nodes as f64 / (ns as f64 / 1e9) / 1e6,
            ns as f64 / 1e9
        ),
        _ => format!("{wall_rate:.2} M nodes/s wall"),
    }
}

fn main() {
    let start_depth = arg(1, 18) as u32;
    let bench_depth = arg(2, 12) as u32;
    let seconds = arg(3, 5);

    let mut engine = match Engine::new(EngineConfig { tt_mib: 64, ..EngineConfig::default() }) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let game = Game::new(Rules::FMJD);
    let limits = Limits { depth: Some(start_depth), movetime: Some(Duration::from_secs(seconds)), ..Limits::default() };
    println!("start position, depth {start_depth} or {seconds} s, 64 MiB table:");
    let cpu0 = cpu_ns();
    let r = engine.search(&game, &limits, &AtomicBool::new(false), &mut |i| {
        let pv: Vec<String> = i.pv.iter().map(|m| m.to_string()).collect();
        println!(
            "  depth {:2} seldepth {:2} score {:5} nodes {:10} nps {:8} time {:7.3}s pv {}",
            i.depth,
            i.seldepth,
            i.score,
            i.nodes,
            i.nps,
            i.time.as_secs_f64(),
            pv.join(" ")
        );
    });
    let cpu = cpu_ns().zip(cpu0).map(|(b, a)| b - a);
    println!(
        "  => best {} depth {} nodes {} in {:.3}s: {}",
        r.best.map_or("none".into(), |m| m.to_string()),
        r.depth,
        r.nodes,
        r.time.as_secs_f64(),
        rates(r.nodes, r.time, cpu)
    );

    println!("bench, depth {bench_depth}, one 16 MiB engine:");
    let cpu0 = cpu_ns();
    let b = bench(bench_depth);
    let cpu = cpu_ns().zip(cpu0).map(|(b, a)| b - a);
    for p in &b.per_position {
        println!(
            "  {:>10} nodes {:7.3}s {:>14} {:6}  {}",
            p.nodes,
            p.time.as_secs_f64(),
            p.best.map_or("none".into(), |m| m.to_string()),
            p.score,
            p.fen
        );
    }
    println!(
        "  => bench depth {} nodes {} in {:.3}s: {}",
        b.depth,
        b.nodes,
        b.time.as_secs_f64(),
        rates(b.nodes, b.time, cpu)
    );
}
