//! The seam between the search and its static evaluation, and its two implementations: the
//! hand-made evaluation ([`HandMade`], the baseline) and the learned sparse network
//! ([`Learned`], from `draughts-nnue`).
//!
//! The search tells the evaluation about every move it makes ([`Evaluation::make`]), so an
//! incremental evaluation can keep its state per ply; it asks for a score only at quiet horizon
//! nodes ([`Evaluation::evaluate`]). [`Learned`] keeps one network accumulator per ply and
//! updates it lazily: a move only records what to do, and the accumulators between the deepest
//! up-to-date ancestor and the evaluated node are brought up to date when a score is asked for,
//! so nodes that are cut off by the transposition table or a draw rule cost no update.
//!
//! Scores are centi-men from the side to move's point of view. The network's win/draw/loss
//! output is turned into that scale by [`score_from_wdl`]: `100 * ln(E / (1 - E))` for the
//! expected score `E = win + draw / 2`, so a score of 100 means the side to move is expected to
//! score 73% (as the hand-made evaluation's one man up roughly does); [`wdl_from_score`] is the
//! inverse, used to turn search scores into training targets.

use std::sync::Arc;

use draughts_core::{Bitboard, Color, Direction, Move, Position};
use draughts_nnue::{Accumulator, Network, Precision, Scratch};

use crate::eval::Evaluator;
use crate::search::{MATE, MATE_BOUND, MAX_PLY};

/// A static evaluation as the search uses it.
pub trait Evaluation {
    /// The search starts at `pos` (ply 0).
    fn set_root(&mut self, pos: &Position);
    /// The search plays `mv` in `before`, the position at `ply`, to reach ply `ply + 1`.
    fn make(&mut self, ply: usize, before: &Position, mv: &Move);
    /// The score of `pos`, the position at `ply` (a quiet one: no capture pending), and the
    /// number of one-step moves of the side to move (0 means no legal move at all).
    fn evaluate(&mut self, ply: usize, pos: &Position) -> (i32, u32);
    /// The evaluation's preference over `moves` (the legal moves of `pos`, the position at
    /// `ply`), as probabilities written to `out` in the same order; false when it has none (the
    /// hand-made evaluation).
    fn policy(&mut self, _ply: usize, _pos: &Position, _moves: &[Move], _out: &mut Vec<f32>) -> bool {
        false
    }
    /// [`Evaluation::evaluate`] of `pos` whose Zobrist hash is `hash`: an evaluation that keeps
    /// the scores it computed may answer from them (the same answer, sooner).
    #[inline(always)]
    fn evaluate_hashed(&mut self, ply: usize, pos: &Position, _hash: u64) -> (i32, u32) {
        self.evaluate(ply, pos)
    }
    /// The search will soon ask [`Evaluation::evaluate_hashed`] about the position of `hash`.
    #[inline(always)]
    fn prefetch(&self, _hash: u64) {}
}

impl<E: Evaluation + ?Sized> Evaluation for &mut E {
    #[inline(always)]
    fn set_root(&mut self, pos: &Position) {
        (**self).set_root(pos)
    }
    #[inline(always)]
    fn make(&mut self, ply: usize, before: &Position, mv: &Move) {
        (**self).make(ply, before, mv)
    }
    #[inline(always)]
    fn evaluate(&mut self, ply: usize, pos: &Position) -> (i32, u32) {
        (**self).evaluate(ply, pos)
    }
    #[inline(always)]
    fn policy(&mut self, ply: usize, pos: &Position, moves: &[Move], out: &mut Vec<f32>) -> bool {
        (**self).policy(ply, pos, moves, out)
    }
    #[inline(always)]
    fn evaluate_hashed(&mut self, ply: usize, pos: &Position, hash: u64) -> (i32, u32) {
        (**self).evaluate_hashed(ply, pos, hash)
    }
    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        (**self).prefetch(hash)
    }
}

/// The hand-made evaluation ([`Evaluator`]): stateless.
#[derive(Clone, Copy, Debug)]
pub struct HandMade<'a>(pub &'a Evaluator);

impl Evaluation for HandMade<'_> {
    #[inline(always)]
    fn set_root(&mut self, _pos: &Position) {}

    #[inline(always)]
    fn make(&mut self, _ply: usize, _before: &Position, _mv: &Move) {}

    #[inline(always)]
    fn evaluate(&mut self, _ply: usize, pos: &Position) -> (i32, u32) {
        self.0.evaluate_with_mobility(pos)
    }
}

/// The learned evaluation: a sparse network with one accumulator per ply, and a cache of the
/// scores it computed by position hash (in an integer precision). The cache pays only because
/// the search prefetches a horizon child's entry ([`Evaluation::prefetch`]) before it makes the
/// move: without that, a miss cost about what a hit saved.
#[derive(Debug)]
pub struct Learned {
    net: Arc<Network>,
    accs: Vec<Accumulator>,
    /// The move that leads to each ply, and the position it was played in.
    made: Vec<(Position, Move)>,
    /// Whether the accumulator of each ply is up to date.
    fresh: Vec<bool>,
    scratch: Scratch,
    /// Scores already computed, by position hash: [`EVAL_CACHE_ENTRIES`] words, each the hash's
    /// top 32 bits, the score (16 bits) and the one-step move count + 1 (16 bits; 0: empty).
    /// Only in an integer precision, where a position's score does not depend on the path that
    /// reached it, so an answer from the cache is the one the network would give.
    cache: Vec<u64>,
    /// Scores answered from the cache.
    cache_hits: u64,
}

/// Entries of [`Learned`]'s score cache (8 bytes each: 512 KiB, half a core's level-2 cache on
/// the machine we measured, which the table's buckets share: 2 MiB found more positions and was
/// about 5% slower there; see ARCHITECTURE.md).
pub const EVAL_CACHE_ENTRIES: usize = 1 << 16;

impl Learned {
    /// The evaluation of `net`, with room for every ply of a search.
    pub fn new(net: Arc<Network>) -> Learned {
        let plies = MAX_PLY + 2;
        let accs = (0..plies).map(|_| net.new_accumulator()).collect();
        // Any move: entries are written before they are read.
        let none = Position::start().legal_moves()[0];
        Learned {
            net,
            accs,
            made: vec![(Position::start(), none); plies],
            fresh: vec![false; plies],
            scratch: Scratch::default(),
            cache: Vec::new(),
            cache_hits: 0,
        }
    }

    /// The network.
    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }

    /// Evaluates in `precision` from the next [`Evaluation::set_root`] on (in float when the
    /// network cannot be quantised).
    pub fn set_precision(&mut self, precision: Precision) {
        let precision = self.net.supported(precision);
        if self.accs[0].precision() != precision {
            for acc in &mut self.accs {
                *acc = self.net.new_accumulator_with(precision);
            }
            self.fresh.fill(false);
            self.cache = Vec::new();
        }
        if precision == Precision::Float {
            self.cache = Vec::new();
        } else if self.cache.is_empty() {
            self.cache = vec![0; EVAL_CACHE_ENTRIES];
        }
    }

    /// How many scores [`Evaluation::evaluate_hashed`] answered from the cache so far.
    pub fn cache_hits(&self) -> u64 {
        self.cache_hits
    }

    /// The precision in use.
    pub fn precision(&self) -> Precision {
        self.accs[0].precision()
    }

    /// The score of `pos` from scratch (no search state needed).
    pub fn evaluate_position(&mut self, pos: &Position) -> i32 {
        self.set_root(pos);
        self.score(0, pos)
    }

    /// The network's score of `pos` at `ply`, bringing the accumulators up to date.
    fn score(&mut self, ply: usize, pos: &Position) -> i32 {
        let ply = ply.min(self.accs.len() - 1);
        let mut k = ply;
        while k > 0 && !self.fresh[k] {
            k -= 1;
        }
        if !self.fresh[k] {
            // Cannot happen after `set_root`; recompute rather than trust stale state.
            self.net.refresh(pos, &mut self.accs[ply]);
            self.fresh[ply] = true;
            k = ply;
        }
        for j in k + 1..=ply {
            let (before, mv) = self.made[j];
            let (done, rest) = self.accs.split_at_mut(j);
            self.net.update(&done[j - 1], &before, &mv, &mut rest[0]);
            self.fresh[j] = true;
        }
        let out = self.net.evaluate(&self.accs[ply], pos.side_to_move(), &mut self.scratch);
        score_from_logits(out.wdl_logits)
    }
}

impl Evaluation for Learned {
    fn set_root(&mut self, pos: &Position) {
        self.net.refresh(pos, &mut self.accs[0]);
        self.fresh[0] = true;
    }

    #[inline]
    fn make(&mut self, ply: usize, before: &Position, mv: &Move) {
        if ply + 1 < self.made.len() {
            self.made[ply + 1] = (*before, *mv);
            self.fresh[ply + 1] = false;
        }
    }

    #[inline]
    fn evaluate(&mut self, ply: usize, pos: &Position) -> (i32, u32) {
        (self.score(ply, pos), one_step_moves(pos))
    }

    #[inline]
    fn evaluate_hashed(&mut self, ply: usize, pos: &Position, hash: u64) -> (i32, u32) {
        if self.cache.is_empty() {
            return self.evaluate(ply, pos);
        }
        let slot = hash as usize & (EVAL_CACHE_ENTRIES - 1);
        let e = self.cache[slot];
        if e >> 32 == hash >> 32 && e as u16 != 0 {
            self.cache_hits += 1;
            return ((e >> 16) as u16 as i16 as i32, (e as u16 - 1) as u32);
        }
        let (v, mobility) = self.evaluate(ply, pos);
        self.cache[slot] = (hash >> 32) << 32 | (v as i16 as u16 as u64) << 16 | (mobility as u16 + 1) as u64;
        (v, mobility)
    }

    #[inline(always)]
    fn prefetch(&self, hash: u64) {
        if let Some(e) = self.cache.get(hash as usize & (EVAL_CACHE_ENTRIES - 1)) {
            crate::tt::prefetch_line(e);
        }
    }

    /// The network's policy: the accumulator of `ply` is brought up to date and evaluated (the
    /// policy reads the clipped accumulator the evaluation leaves), then each move's row.
    fn policy(&mut self, ply: usize, pos: &Position, moves: &[Move], out: &mut Vec<f32>) -> bool {
        self.score(ply, pos);
        self.net.policy(pos.side_to_move(), moves, &mut self.scratch, out);
        true
    }
}

/// Largest magnitude of a learned score (an expected score of 1/2000 or 1999/2000).
pub const LEARNED_SCORE_LIMIT: i32 = 760;

/// The centi-men score of a win/draw/loss estimate: `100 * ln(E / (1 - E))` with
/// `E = win + draw / 2`, clamped to ±[`LEARNED_SCORE_LIMIT`].
pub fn score_from_wdl(wdl: [f32; 3]) -> i32 {
    let e = (wdl[0] + 0.5 * wdl[1]).clamp(0.0005, 0.9995) as f64;
    ((100.0 * (e / (1.0 - e)).ln()).round() as i32).clamp(-LEARNED_SCORE_LIMIT, LEARNED_SCORE_LIMIT)
}

/// `ln(e^x + 1/2)` on [-16, 16] in steps of 1/32 (beyond, the ends are the limits that matter:
/// a score is clamped long before).
fn log_exp_half(x: f32) -> f32 {
    const STEPS: f32 = 32.0;
    const HALF_RANGE: f32 = 16.0;
    static TABLE: std::sync::OnceLock<Vec<f32>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        (0..=(2.0 * HALF_RANGE * STEPS) as usize)
            .map(|i| ((i as f64 / STEPS as f64 - HALF_RANGE as f64).exp() + 0.5).ln() as f32)
            .collect()
    });
    let t = ((x.clamp(-HALF_RANGE, HALF_RANGE) + HALF_RANGE) * STEPS).min(2.0 * HALF_RANGE * STEPS - 1e-3);
    let i = t as usize;
    let f = t - i as f32;
    table[i] + f * (table[i + 1] - table[i])
}

/// [`score_from_wdl`] of the softmax of win/draw/loss logits, without the exponentials:
/// `E / (1 - E) = (e^(w-d) + 1/2) / (e^(l-d) + 1/2)`, each term from a table (the error is far
/// below the rounding to whole centi-men).
#[inline]
pub fn score_from_logits(z: [f32; 3]) -> i32 {
    let logit = log_exp_half(z[0] - z[1]) - log_exp_half(z[2] - z[1]);
    ((100.0 * logit).round() as i32).clamp(-LEARNED_SCORE_LIMIT, LEARNED_SCORE_LIMIT)
}

/// The win/draw/loss estimate of a search score (the inverse of [`score_from_wdl`] on the
/// expected score, with as much draw as that allows): forced wins and losses are certain.
pub fn wdl_from_score(score: i32) -> [f32; 3] {
    let e = if score >= MATE_BOUND {
        1.0
    } else if score <= -MATE_BOUND {
        0.0
    } else {
        1.0 / (1.0 + (-(score as f64) / 100.0).exp())
    };
    let v = (2.0 * e - 1.0).clamp(-1.0, 1.0) as f32;
    [v.max(0.0), 1.0 - v.abs(), (-v).max(0.0)]
}

const _: () = assert!(MATE > MATE_BOUND);

/// One-step moves of the side to move: men forward, kings in all four directions, onto empty
/// squares. When the side to move has no capture, zero means no legal move.
#[inline]
pub fn one_step_moves(pos: &Position) -> u32 {
    let us = pos.side_to_move();
    let empty = pos.empty_squares();
    let (men, kings) = (pos.men(us), pos.kings(us));
    let forward = match us {
        Color::White => [Direction::UpLeft, Direction::UpRight],
        Color::Black => [Direction::DownLeft, Direction::DownRight],
    };
    let step = |b: Bitboard, d: Direction| (b.shift(d) & empty).count();
    let mut n = step(men, forward[0]) + step(men, forward[1]);
    if kings.any() {
        for d in Direction::ALL {
            n += step(kings, d);
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_and_wdl_are_inverse() {
        for score in [-700, -250, -100, -1, 0, 3, 100, 333, 700] {
            let back = score_from_wdl(wdl_from_score(score));
            assert!((back - score).abs() <= 1, "{score} -> {back}");
        }
        assert_eq!(wdl_from_score(MATE - 5), [1.0, 0.0, 0.0]);
        assert_eq!(wdl_from_score(-MATE + 5), [0.0, 0.0, 1.0]);
        assert_eq!(score_from_wdl([1.0, 0.0, 0.0]), LEARNED_SCORE_LIMIT);
        assert_eq!(score_from_wdl([0.0, 1.0, 0.0]), 0);
        let w = wdl_from_score(100);
        assert!((w[0] + 0.5 * w[1] - 0.731).abs() < 0.001, "{w:?}");
    }

    #[test]
    fn scores_from_logits_match_scores_from_probabilities() {
        let mut state = 17u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 12.0
        };
        for _ in 0..20_000 {
            let z = [next(), next(), next()];
            let m = z[0].max(z[1]).max(z[2]);
            let e = z.map(|x| (x - m).exp());
            let s: f32 = e.iter().sum();
            let direct = score_from_wdl(e.map(|x| x / s));
            assert!((score_from_logits(z) - direct).abs() <= 1, "{z:?}: {} vs {direct}", score_from_logits(z));
        }
    }

    #[test]
    fn one_step_moves_match_the_hand_made_mobility() {
        let ev = Evaluator::new(&crate::Weights::default());
        for fen in ["W:W31-50:B1-20", "B:W28,32,33,37,K5:B12,13,19,23,K46", "W:WK50:BK1,3", "W:W6:B1", "B:W6:B1"] {
            let pos = Position::from_fen(fen).unwrap();
            assert_eq!(one_step_moves(&pos), ev.evaluate_with_mobility(&pos).1, "{fen}");
        }
    }
}
