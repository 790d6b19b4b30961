//! The evaluator seam: what the search asks of a network, and two trivial implementations.

use std::error::Error as StdError;
use std::sync::Arc;

use draughts_core::{Color, Counters, Move, MoveList, Position};

/// One position the search wants evaluated, with everything a network's input needs.
///
/// The policy the evaluator returns must follow the order of [`EvalRequest::moves`].
#[derive(Clone, Debug, PartialEq)]
pub struct EvalRequest {
    /// The position (board and side to move).
    pub position: Position,
    /// The draw-rule counters of the game state (they reach the network's input).
    pub counters: Counters,
    /// How many times this position has occurred in the game so far, this occurrence included
    /// (1 the first time).
    pub repetitions: u32,
    /// The legal moves, never empty (terminal positions are never sent). The policy follows this
    /// order.
    pub moves: MoveList,
}

impl EvalRequest {
    /// A request for a position seen for the first time, with zero counters.
    pub fn new(position: Position, rules: &draughts_core::Rules) -> EvalRequest {
        EvalRequest {
            position,
            counters: Counters::default(),
            repetitions: 1,
            moves: position.legal_moves_with(rules),
        }
    }

    /// A key for an evaluation cache: the Zobrist hash of the position mixed with the counters and
    /// the repetition count (two requests with equal keys almost surely have equal inputs).
    pub fn cache_key(&self) -> u64 {
        let c = &self.counters;
        let extra = (c.no_progress as u64)
            | (c.no_capture as u64) << 16
            | (c.endgame as u64) << 32
            | (self.repetitions.min(0xFFFF) as u64) << 48;
        // SplitMix64 finaliser of the extra fields, so that small counter changes flip many bits.
        let mut z = extra.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        self.position.hash() ^ z ^ (z >> 31)
    }
}

/// An evaluator's answer for one [`EvalRequest`].
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Probabilities over the request's legal moves, in the same order; they sum to 1. (The
    /// search renormalises small deviations and rejects negative or non-finite entries.)
    pub policy: Vec<f32>,
    /// Win, draw and loss probabilities from the side to move's point of view; they sum to 1.
    pub wdl: [f32; 3],
    /// Expected plies until the game ends, if the evaluator predicts it. The search does not use
    /// it; it is carried for callers that record it.
    pub moves_left: Option<f32>,
}

impl Evaluation {
    /// The scalar value `win - loss`, in [-1, 1], from the side to move's point of view.
    pub fn value(&self) -> f32 {
        self.wdl[0] - self.wdl[2]
    }

    /// A uniform policy over `n` moves and a certain draw.
    pub fn uniform_draw(n: usize) -> Evaluation {
        Evaluation { policy: vec![1.0 / n.max(1) as f32; n], wdl: [0.0, 1.0, 0.0], moves_left: None }
    }

    /// The WDL triple whose expected score is `value` (in [-1, 1]) with as much draw as that
    /// allows: `[max(v, 0), 1 - |v|, max(-v, 0)]`.
    pub fn wdl_from_value(value: f32) -> [f32; 3] {
        let v = value.clamp(-1.0, 1.0);
        [v.max(0.0), 1.0 - v.abs(), (-v).max(0.0)]
    }
}

/// Why an evaluator could not answer.
#[derive(Debug, thiserror::Error)]
#[error("evaluator failed: {message}")]
pub struct EvalError {
    /// What went wrong.
    pub message: String,
    /// The underlying error, if any (a libtorch error, a closed channel to the inference thread).
    #[source]
    pub source: Option<Box<dyn StdError + Send + Sync>>,
}

impl EvalError {
    /// An error with a message only.
    pub fn new(message: impl Into<String>) -> EvalError {
        EvalError { message: message.into(), source: None }
    }

    /// An error caused by `source`.
    pub fn with_source(message: impl Into<String>, source: impl StdError + Send + Sync + 'static) -> EvalError {
        EvalError { message: message.into(), source: Some(Box::new(source)) }
    }
}

/// Evaluates batches of positions: the seam between search and network.
///
/// The search hands over many positions at once (one batch per network call) and gets one
/// [`Evaluation`] per request, in order.
///
/// `evaluate` takes `&self`: a network forward pass is logically read-only (tch's
/// `Module::forward` takes `&self`), so one evaluator can be borrowed by many searches, by both
/// players of a self-match, or wrapped in an `Arc`; an implementation that keeps a cache or
/// statistics uses interior mutability. An implementation that owns tch tensors is `Send` but not
/// `Sync`, and then lives on the single inference thread that drives all the searches; nothing
/// here requires `Sync`.
pub trait Evaluator {
    /// One evaluation per request, in the same order.
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError>;
}

impl<E: Evaluator + ?Sized> Evaluator for &E {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        (**self).evaluate(batch)
    }
}

impl<E: Evaluator + ?Sized> Evaluator for Box<E> {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        (**self).evaluate(batch)
    }
}

impl<E: Evaluator + ?Sized> Evaluator for Arc<E> {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        (**self).evaluate(batch)
    }
}

/// A uniform policy and a certain draw for every position: measures the cost of the search
/// itself, and is the "knows nothing" baseline.
#[derive(Clone, Copy, Debug, Default)]
pub struct Uniform;

impl Evaluator for Uniform {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        Ok(batch.iter().map(|r| Evaluation::uniform_draw(r.moves.len())).collect())
    }
}

/// Material counting: value `tanh(scale * (own - opponent))` with men worth 1 and kings
/// `king_value`, WDL from [`Evaluation::wdl_from_value`]; the policy is uniform except that
/// promotions weigh `promotion_weight` times as much.
///
/// Captures are not favoured because they cannot be: in draughts a capture is forced, so when
/// one is legal every legal move is a capture.
#[derive(Clone, Copy, Debug)]
pub struct Material {
    /// Slope of the squashing function per man of material difference.
    pub scale: f32,
    /// What a king is worth in men.
    pub king_value: f32,
    /// Relative policy weight of a move that crowns a man.
    pub promotion_weight: f32,
}

impl Default for Material {
    fn default() -> Material {
        Material { scale: 0.5, king_value: 3.0, promotion_weight: 2.0 }
    }
}

impl Material {
    /// Material of `color`: men plus `king_value` per king.
    fn material(&self, pos: &Position, color: Color) -> f32 {
        pos.men(color).count() as f32 + self.king_value * pos.kings(color).count() as f32
    }

    /// The value of `pos` for the side to move, in (-1, 1).
    pub fn value(&self, pos: &Position) -> f32 {
        let us = pos.side_to_move();
        (self.scale * (self.material(pos, us) - self.material(pos, !us))).tanh()
    }

    /// The policy over `moves`.
    pub fn policy(&self, moves: &[Move]) -> Vec<f32> {
        let w: Vec<f32> = moves.iter().map(|m| if m.promotes() { self.promotion_weight } else { 1.0 }).collect();
        let total: f32 = w.iter().sum();
        w.into_iter().map(|x| x / total).collect()
    }

    /// The evaluation of one request.
    pub fn evaluate_one(&self, req: &EvalRequest) -> Evaluation {
        Evaluation {
            policy: self.policy(&req.moves),
            wdl: Evaluation::wdl_from_value(self.value(&req.position)),
            moves_left: None,
        }
    }
}

impl Evaluator for Material {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        Ok(batch.iter().map(|r| self.evaluate_one(r)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use draughts_core::Rules;

    #[test]
    fn material_sign_and_policy() {
        let pos = Position::from_fen("W:WK28,33:B10").unwrap();
        let m = Material::default();
        let v = m.value(&pos);
        assert!(v > 0.9, "{v}");
        assert!((m.value(&pos.flipped()) - v).abs() < 1e-6);
        let black = pos.with_side_to_move(Color::Black);
        assert!((m.value(&black) + v).abs() < 1e-6);
        let req = EvalRequest::new(Position::from_fen("W:W7,33:B45").unwrap(), &Rules::FMJD);
        let e = m.evaluate_one(&req);
        assert!((e.policy.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        // 7-1 and 7-2 crown: twice the weight of 33-28 and 33-29.
        for (mv, p) in req.moves.iter().zip(&e.policy) {
            let want = if mv.promotes() { 2.0 / 6.0 } else { 1.0 / 6.0 };
            assert!((p - want).abs() < 1e-6, "{mv} {p}");
        }
        assert!((e.value() - (e.wdl[0] - e.wdl[2])).abs() < 1e-6);
    }

    #[test]
    fn cache_key_sees_counters() {
        let mut req = EvalRequest::new(Position::start(), &Rules::FMJD);
        let k = req.cache_key();
        req.counters.no_progress = 1;
        assert_ne!(req.cache_key(), k);
        req.counters.no_progress = 0;
        req.repetitions = 2;
        assert_ne!(req.cache_key(), k);
        req.repetitions = 1;
        assert_eq!(req.cache_key(), k);
    }
}
