//! Generates the shipped openings file `openings/fmjd-4ply.txt`.
//!
//! Every distinct position after two moves of each side (4 plies) from the start position is
//! searched by the alpha-beta baseline at a fixed depth (deterministic: no time limit), and the
//! positions whose score lies within a margin of zero are kept, in the order the move
//! generator first reaches them.
//!
//! Usage: `cargo run --release -p draughts-arena --example gen_openings -- DEPTH MARGIN > FILE`
//! (the shipped file: depth 10, margin 20 centi-men).

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use draughts_core::{Color, Game, Move, Position, Rules};
use draughts_engine::{Engine, EngineConfig, Limits};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let depth: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10);
    let margin: i32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);

    // Distinct 4-ply positions with the first move sequence that reaches each.
    let mut first: HashMap<Position, usize> = HashMap::new();
    let mut lines: Vec<(Position, Vec<Move>)> = Vec::new();
    let mut paths = 0u64;
    let mut stack = vec![(Game::new(Rules::FMJD), Vec::new())];
    // Depth-first in move-generator order, so the output order is fixed.
    fn walk(game: &mut Game, moves: &mut Vec<Move>, out: &mut Vec<(Position, Vec<Move>)>, first: &mut HashMap<Position, usize>, paths: &mut u64) {
        if moves.len() == 4 {
            *paths += 1;
            let p = *game.position();
            first.entry(p).or_insert_with(|| {
                out.push((p, moves.clone()));
                out.len() - 1
            });
            return;
        }
        for mv in game.legal_moves() {
            game.play_unchecked(mv);
            moves.push(mv);
            walk(game, moves, out, first, paths);
            moves.pop();
            game.undo();
        }
    }
    let (mut g, mut m) = stack.pop().expect("one root");
    walk(&mut g, &mut m, &mut lines, &mut first, &mut paths);

    let mut engine = Engine::new(EngineConfig { tt_mib: 64, ..EngineConfig::default() }).expect("engine");
    let stop = AtomicBool::new(false);
    let started = std::time::Instant::now();
    let mut kept = Vec::new();
    let mut histogram: std::collections::BTreeMap<i32, usize> = Default::default();
    for (pos, moves) in &lines {
        let mut game = Game::new(Rules::FMJD);
        for &mv in moves {
            game.play_unchecked(mv);
        }
        let r = engine.search(&game, &Limits::depth(depth), &stop, &mut |_| {});
        // Score from White's point of view (White is to move after 4 plies).
        let score = r.score;
        *histogram.entry((score / 10) * 10).or_default() += 1;
        // Quiet and level: no capture pending for White and equal material, so the players
        // start from a settled position.
        let quiet = !game.legal_moves().iter().any(|m| m.is_capture());
        let level = pos.pieces(Color::White).count() == pos.pieces(Color::Black).count();
        if score.abs() <= margin && quiet && level {
            kept.push((pos, moves, score));
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!("# Balanced openings for international draughts (FMJD rules), one FEN per line; text after");
    println!("# `;` is a label: the moves from the start position and the baseline's score.");
    println!("#");
    println!("# Made by `cargo run --release -p draughts-arena --example gen_openings -- {depth} {margin}`:");
    println!("# all {} distinct positions after two moves of each side ({paths} move paths of 4 plies", lines.len());
    println!("# from the start) were searched by the alpha-beta baseline (draughts-engine, default");
    println!("# weights) to fixed depth {depth} with no time limit, so the search is deterministic. Kept");
    println!("# are the {} positions with equal material, no capture pending for White, and a score", kept.len());
    println!("# within {margin} centi-men of zero (a man is 100), in move-generator order. Balance is");
    println!("# judged by the baseline's evaluation only; each opening is played twice with colours");
    println!("# swapped, which cancels what imbalance is left.");
    println!("#");
    eprintln!("{} positions searched in {secs:.1} s; score histogram (bucket of 10 centi-men: count):", lines.len());
    for (b, n) in &histogram {
        eprintln!("  {b:>5}: {n}");
    }
    for (pos, moves, score) in kept {
        let mut game = Game::new(Rules::FMJD);
        let mut text = Vec::new();
        for (i, &mv) in moves.iter().enumerate() {
            let t = game.position().to_pdn(&mv, &Rules::FMJD);
            if i % 2 == 0 {
                text.push(format!("{}. {t}", i / 2 + 1));
            } else {
                text.push(t);
            }
            game.play_unchecked(mv);
        }
        println!("{} ; {}  ({score:+})", pos.to_fen(), text.join(" "));
    }
}
