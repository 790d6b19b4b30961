//! The policy output: one logit per (from, to) pair of squares, 50 x 50 = 2500, seen from the
//! side to move.
//!
//! A move of the side to move goes to index `(from - 1) * 50 + (to - 1)`, where `from` and `to`
//! are the squares as the side to move sees them (for Black, `n` becomes `51 - n`, the same turn
//! of the board as in [`crate::features`] and in the network encoding of `draughts-nn`). So the
//! network always plays "up" the board, and a move and its mirror image in
//! [`draughts_core::Position::flipped`] share an index. Both network kinds use this output.
//!
//! # Shared logits
//! Two legal captures can have the same from and to squares and take different pieces (a king
//! that can go round a block of pieces two ways). They share one logit. [`masked_softmax`] gives
//! the probability of that index to those moves in equal parts, so that the probabilities over
//! the legal moves still sum to 1 and a training target that adds up the mass of the moves
//! sharing an index ([`policy_target`]) is exactly what the softmax over distinct indices
//! predicts. Search can still tell the moves apart; only the prior cannot.
//!
//! Indices with `from == to` are used too: a capture may end on its own start square.

use draughts_core::{Color, Move, Square};

use crate::features::relative_square;

/// Number of policy logits.
pub const POLICY_SIZE: usize = 50 * 50;

/// The policy index of `mv`, played by `side` (the side to move). Always `< POLICY_SIZE`.
#[inline]
pub fn move_index(side: Color, mv: &Move) -> usize {
    let from = relative_square(side, mv.from()).index();
    let to = relative_square(side, mv.to()).index();
    from * 50 + to
}

/// The absolute (from, to) squares of index `index` for `side` to move, or `None` when `index` is
/// not below [`POLICY_SIZE`]. The inverse of [`move_index`] on (from, to).
pub fn index_squares(side: Color, index: usize) -> Option<(Square, Square)> {
    if index >= POLICY_SIZE {
        return None;
    }
    // Both are 1..=50 here, so `Square::new` succeeds.
    let from = Square::new((index / 50) as u8 + 1)?;
    let to = Square::new((index % 50) as u8 + 1)?;
    Some((relative_square(side, from), relative_square(side, to)))
}

/// Writes the policy index of each of `moves` (played by `side`) into `out`, clearing it first.
pub fn move_indices(side: Color, moves: &[Move], out: &mut Vec<u16>) {
    out.clear();
    // Indices are < 2500, so they fit in u16.
    out.extend(moves.iter().map(|mv| move_index(side, mv) as u16));
}

/// Softmax of `logits` (the [`POLICY_SIZE`] logits of one position) over the legal moves whose
/// indices are `indices`, written to `out` (one probability per move, in the order of `indices`).
///
/// The softmax runs over the distinct indices; moves sharing an index share its probability in
/// equal parts (see the module docs). The result sums to 1 whenever `indices` is not empty.
/// Indices outside the logits are given probability 0 (they cannot come from [`move_index`]).
pub fn masked_softmax(logits: &[f32], indices: &[u16], out: &mut Vec<f32>) {
    softmax_moves(|k| logits.get(indices[k] as usize).copied(), indices, out);
}

/// The softmax of [`masked_softmax`] with the logit of each move given by `logit(k)` for the
/// `k`-th move (`None` or a non-finite value: probability 0), for callers that compute only the
/// logits of the legal moves (each is asked for once). Moves with equal `indices` must have
/// equal logits.
pub fn softmax_moves(logit: impl Fn(usize) -> Option<f32>, indices: &[u16], out: &mut Vec<f32>) {
    // The logits first, in `out`; a logit that is missing or not finite (a broken net) gets
    // probability 0 (it is NaN here until then).
    out.clear();
    out.extend((0..indices.len()).map(|k| logit(k).filter(|l| l.is_finite()).unwrap_or(f32::NAN)));
    if indices.is_empty() {
        return;
    }
    // `f32::max` ignores NaN.
    let max = out.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if max == f32::NEG_INFINITY {
        out.fill(1.0 / indices.len() as f32);
        return;
    }
    // Each distinct index counts once in the normaliser. `seen` is a bitset over the indices.
    let mut seen = [0u64; POLICY_SIZE.div_ceil(64)];
    let mut shared = false;
    let mut total = 0.0f32;
    for (k, &i) in indices.iter().enumerate() {
        let l = out[k];
        if l.is_nan() {
            out[k] = 0.0;
            continue;
        }
        let e = (l - max).exp();
        out[k] = e;
        let (word, bit) = (i as usize / 64 % seen.len(), 1u64 << (i % 64));
        if seen[word] & bit == 0 {
            seen[word] |= bit;
            total += e;
        } else {
            shared = true;
        }
    }
    for p in out.iter_mut() {
        *p /= total;
    }
    if shared {
        // Rare (two captures with the same from and to): split each shared index evenly.
        for k in 0..indices.len() {
            let share = indices.iter().filter(|&&j| j == indices[k]).count();
            out[k] /= share as f32;
        }
    }
}

/// A dense training target over the [`POLICY_SIZE`] logits from per-move probabilities: the mass
/// of moves sharing an index is added up. `out` is overwritten.
pub fn policy_target(indices: &[u16], probabilities: &[f32], out: &mut [f32; POLICY_SIZE]) {
    out.fill(0.0);
    for (&i, &p) in indices.iter().zip(probabilities) {
        if let Some(slot) = out.get_mut(i as usize) {
            *slot += p;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_round_trip_all_pairs() {
        for side in [Color::White, Color::Black] {
            let mut seen = std::collections::HashSet::new();
            for index in 0..POLICY_SIZE {
                let (from, to) = index_squares(side, index).unwrap();
                let (f, t) = (relative_square(side, from), relative_square(side, to));
                assert_eq!(f.index() * 50 + t.index(), index);
                assert!(seen.insert((from, to)), "two indices for {from}-{to}");
            }
            assert_eq!(index_squares(side, POLICY_SIZE), None);
        }
    }

    #[test]
    fn shared_index_splits_probability() {
        let mut logits = vec![0.0f32; POLICY_SIZE];
        logits[7] = 2.0f32.ln();
        // Moves: index 3, index 7 twice. exp: 1 and 2, total 3: p(3) = 1/3, p(7) = 2/3 split.
        let mut out = Vec::new();
        masked_softmax(&logits, &[3, 7, 7], &mut out);
        let want = [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0];
        for (p, w) in out.iter().zip(want) {
            assert!((p - w).abs() < 1e-6, "{out:?}");
        }
        masked_softmax(&logits, &[7, 3], &mut out);
        assert!((out[0] - 2.0 / 3.0).abs() < 1e-6 && (out[1] - 1.0 / 3.0).abs() < 1e-6);
        masked_softmax(&logits, &[], &mut out);
        assert!(out.is_empty());
        // A non-finite logit gets 0; when none is finite the result is uniform.
        logits[3] = f32::NAN;
        masked_softmax(&logits, &[3, 7], &mut out);
        assert_eq!(out, vec![0.0, 1.0]);
        logits[7] = f32::INFINITY;
        masked_softmax(&logits, &[3, 7], &mut out);
        assert_eq!(out, vec![0.5, 0.5]);
    }
}
