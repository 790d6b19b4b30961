//! Generates a set of endgame start positions for matches (`draughts match --openings FILE`),
//! such as the one that measures endgame tables.
//!
//! From each shipped opening, the hand-made engine plays itself at a fixed node budget with a
//! seeded choice among the moves within a margin of the best (so games differ), until the board
//! first holds at most MAX pieces. That position is kept when it is quiet (no capture for the side
//! to move), both sides still have a man, it has more pieces than the tables hold (the tables
//! matter only after trades), and a deeper search scores it within LO..=HI centi-men of even for
//! the side ahead (by default 0..=60: a balanced ending, not a won one; an uneven set, where one
//! side presses and the other defends, takes for example 60..=300). One position per opening at
//! most, in opening order.
//!
//! Usage: `cargo run --release -p draughts-arena --example gen_endings -- MAX MIN SEED FIRST COUNT [LO HI] > FILE`
//! (openings FIRST..FIRST+COUNT of the shipped set; the measurement of the 5-piece tables: 8
//! pieces at most, 6 at least, seed 1, the first 300 openings in two halves, and the uneven set
//! 8 6 1 0 907 60 300).

use std::sync::atomic::AtomicBool;

use draughts_arena::openings;
use draughts_core::{Color, Game, Rules};
use draughts_engine::{Engine, EngineConfig, Limits, Noise};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let max: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(8);
    let min: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(6);
    let seed: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let first: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(0);
    let count: usize = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(usize::MAX);
    const NODES: u64 = 20_000;
    const NOISE: i32 = 20;
    let lo: i32 = args.get(6).and_then(|s| s.parse().ok()).unwrap_or(0);
    let hi: i32 = args.get(7).and_then(|s| s.parse().ok()).unwrap_or(60);
    let mut engine = Engine::new(EngineConfig { tt_mib: 16, ..EngineConfig::default() }).expect("engine");
    let stop = AtomicBool::new(false);
    let mut kept = 0;
    let all = openings::builtin();
    for (n, opening) in all.iter().enumerate().skip(first).take(count) {
        let mut game = Game::from_position(opening.start, Rules::FMJD);
        for &mv in &opening.moves {
            game.play_unchecked(mv);
        }
        engine.new_game();
        while game.outcome().is_none() && game.position().piece_count() > max && game.ply() < 400 {
            let noise = Some(Noise { margin: NOISE, seed: seed ^ (n as u64) << 20 ^ game.ply() as u64 });
            let r = engine.search(&game, &Limits { nodes: Some(NODES), noise, ..Limits::default() }, &stop, &mut |_| {});
            match r.best {
                Some(mv) => game.play_unchecked(mv),
                None => break,
            }
        }
        let pos = *game.position();
        let men = |c| pos.men(c).any();
        if game.outcome().is_some() || pos.piece_count() > max || pos.piece_count() < min || pos.has_capture() || !men(Color::White) || !men(Color::Black) {
            continue;
        }
        let r = engine.search(&game, &Limits::nodes(200_000), &stop, &mut |_| {});
        if r.score.abs() < lo || r.score.abs() > hi {
            continue;
        }
        println!("{}", pos.to_fen());
        kept += 1;
    }
    eprintln!("{kept} endings of {min} to {max} pieces, {lo} to {hi} centi-men, from openings {first}.. of {} (seed {seed})", all.len());
}
