//! The bench: a fixed set of positions searched to a fixed depth by a fresh engine.
//!
//! Its total node count changes only when the search or the evaluation changes, so every such
//! change states the new count (as in Stockfish). The positions cover the opening, the middle
//! game and endings with kings; a test checks that each one parses and has a legal move.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use draughts_core::{Game, Move, Position, Rules};

use crate::{Engine, EngineConfig, Limits};

/// The bench positions (FEN), White or Black to move. Taken from engine games with randomised
/// move choices, so they are positions that arise in play.
pub const BENCH_POSITIONS: [&str; 13] = [
    // Opening.
    "W:W31-50:B1-20",
    "W:W24,28,31,32,36,38,39,41-50:B1-4,6-13,15,17,18,20,21",
    "W:W24,34-36,38,40-50:B1-11,13,15,17,18,23,32",
    // Middle game.
    "W:W26,28,31,33,35,38,41,43,45-48,50:B1,2,6,7,9-11,13,14,16,18,19,24",
    "B:W24,28,33,35,36,38,41,43-48:B1-5,7,11,13,14,16-18,27",
    "W:W24,27-29,31,34,36-38,42,43,48:B1,6,8,10,12-16,18,25,26",
    "B:W26,28,33,35-37,39,40,44,45,48:B3,5,6,13-15,17,19-22,24,30",
    // Late middle game and endings, with and without kings.
    "W:W18,22,28,32,35,39,46:B6,11,16,17,19,20,24",
    "W:W15,K19,25,35-38,41,42,50:B4,12,17,22,26,27,43",
    "W:WK1,23,28,29,36,41:B8,13,K42,K49",
    "W:WK2,28,39,41:B16,17,19,24",
    "W:WK26,36,K39:BK7,13,K23",
    "W:WK17,21,K44:BK29",
];

/// The depth `draughts bench` searches by default.
pub const BENCH_DEPTH: u32 = 10;

/// One bench position's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchPosition {
    /// The position.
    pub fen: &'static str,
    /// Nodes searched.
    pub nodes: u64,
    /// The move found.
    pub best: Option<Move>,
    /// Its score.
    pub score: i32,
    /// Time taken.
    pub time: Duration,
}

/// The bench's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchResult {
    /// The depth searched.
    pub depth: u32,
    /// Total nodes (deterministic).
    pub nodes: u64,
    /// Nodes per second over the whole bench.
    pub nps: u64,
    /// Total time.
    pub time: Duration,
    /// Each position's result.
    pub per_position: Vec<BenchPosition>,
}

/// Searches every bench position to `depth` with one engine (16 MiB table, default weights,
/// FMJD rules) and returns the node counts.
pub fn bench(depth: u32) -> BenchResult {
    bench_with(EngineConfig::default(), depth)
}

/// [`bench`] with another engine config (a learned evaluation, another table size).
pub fn bench_with(config: EngineConfig, depth: u32) -> BenchResult {
    // 16 MiB always fits; an allocation failure here is not a bench result anyone can use.
    let mut engine = Engine::new(config).expect("a 16 MiB table can be allocated");
    let stop = AtomicBool::new(false);
    let limits = Limits::depth(depth);
    let start = Instant::now();
    let mut per_position = Vec::with_capacity(BENCH_POSITIONS.len());
    for fen in BENCH_POSITIONS {
        // The constants are checked by a test (`bench_positions_are_legal`).
        let pos = Position::from_fen(fen).expect("bench positions are valid FEN");
        let game = Game::from_position(pos, Rules::FMJD);
        // No `new_game()` in between: a search without a time limit never sees what earlier
        // searches stored (see `Engine::search`), and skipping it keeps 16 MiB memsets out of
        // the timing.
        let r = engine.search(&game, &limits, &stop, &mut |_| {});
        per_position.push(BenchPosition { fen, nodes: r.nodes, best: r.best, score: r.score, time: r.time });
    }
    let time = start.elapsed();
    let nodes = per_position.iter().map(|p| p.nodes).sum();
    let nps = (nodes as u128 * 1_000_000 / time.as_micros().max(1)) as u64;
    BenchResult { depth, nodes, nps, time, per_position }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_positions_are_legal() {
        for fen in BENCH_POSITIONS {
            let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{e}"));
            let game = Game::from_position(pos, Rules::FMJD);
            assert_eq!(game.outcome(), None, "{fen}");
            assert!(!game.legal_moves().is_empty(), "{fen}");
        }
    }

    #[test]
    fn bench_is_deterministic() {
        let a = bench(3);
        let b = bench(3);
        assert_eq!(a.nodes, b.nodes);
        assert_eq!(a.per_position.len(), BENCH_POSITIONS.len());
        for (x, y) in a.per_position.iter().zip(&b.per_position) {
            assert_eq!((x.nodes, x.best, x.score), (y.nodes, y.best, y.score), "{}", x.fen);
            assert!(x.best.is_some());
        }
    }
}
