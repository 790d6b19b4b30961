//! A match between two built-in players from the command line, printing the progress line
//! after every pair, then the JSON result and the speed.
//!
//! `cargo run --release -p draughts-arena --example match_speed -- SPEC_A SPEC_B GAMES CONCURRENCY [PDN]`
//! e.g. `... -- alphabeta:depth=4 alphabeta:depth=2 100 2`.

use std::ops::ControlFlow;
use std::time::Instant;

use draughts_arena::{maker, run_match, Builtin, MatchConfig, PlayerSpec};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: match_speed SPEC_A SPEC_B GAMES CONCURRENCY [PDN]");
        std::process::exit(2);
    }
    let parse = |s: &str| {
        PlayerSpec::parse(s).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        })
    };
    let number = |s: &str| {
        s.parse::<usize>().unwrap_or_else(|e| {
            eprintln!("`{s}`: {e}");
            std::process::exit(2)
        })
    };
    let (a, b) = (parse(&args[0]), parse(&args[1]));
    let config = MatchConfig {
        games: number(&args[2]),
        concurrency: number(&args[3]),
        pdn: args.get(4).map(Into::into),
        ..MatchConfig::default()
    };
    let factory = Builtin::new();
    let (make_a, make_b) = (maker(&factory, &a), maker(&factory, &b));
    let started = Instant::now();
    let result = run_match(&config, &make_a, &make_b, |p| {
        if p.pair.is_some() {
            eprintln!("{:>5}/{}  {}", p.games_done, p.games_total, p.summary.progress_line());
        }
        ControlFlow::Continue(())
    });
    match result {
        Ok(r) => {
            let secs = started.elapsed().as_secs_f64();
            println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
            eprintln!("{} games in {secs:.1} s ({:.2} games/s, {:.0} plies per game)", r.games, r.games as f64 / secs, r.mean_plies);
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
