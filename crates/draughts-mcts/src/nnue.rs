//! The native sparse network as an [`Evaluator`]: no libtorch and no inference thread; each
//! position is evaluated from scratch on the caller's thread (a few microseconds).
//!
//! A leaf with a capture pending is not quiet: the network, trained on quiet positions (the
//! alpha-beta generator's value targets), misjudges it. With a capture resolution
//! ([`NnueEvaluator::with_capture_resolution`]) its value comes from the forced capture sequences
//! instead: captures are compulsory in draughts, so the side to move picks the best of its
//! captures, down to quiet positions, which the network values (a quiescence search without a
//! stand-pat). The policy stays the network's at the leaf.
//!
//! It evaluates in float by default; [`NnueEvaluator::with_precision`] makes it run quantised
//! ([`Precision::Int8`]: the alpha-beta engine's precision, about 1.5 times the evaluations a
//! second with the policy, `draughts bench nnue`).

use std::cell::RefCell;
use std::sync::Arc;

use draughts_core::{Move, Position, Rules};
use draughts_nnue::{Network, Precision, Scratch};

use crate::evaluator::{EvalError, EvalRequest, Evaluation, Evaluator};

/// Evaluates with a [`Network`] (`draughts-nnue`). Cheap to create: share the network between
/// evaluators (one per thread) with an `Arc`.
#[derive(Debug)]
pub struct NnueEvaluator {
    net: Arc<Network>,
    scratch: RefCell<Scratch>,
    /// Capture resolution: the rules the captures follow and the most positions one leaf's
    /// resolution visits.
    resolve: Option<(Rules, usize)>,
    precision: Precision,
}

/// Plies a capture resolution follows at most (beyond them, the network's value).
const RESOLVE_PLIES: u32 = 16;

impl NnueEvaluator {
    /// An evaluator of `net`.
    pub fn new(net: Arc<Network>) -> NnueEvaluator {
        NnueEvaluator { net, scratch: RefCell::new(Scratch::default()), resolve: None, precision: Precision::Float }
    }

    /// The same evaluator in `precision` (float where the network cannot be quantised).
    pub fn with_precision(mut self, precision: Precision) -> NnueEvaluator {
        self.precision = self.net.supported(precision);
        self
    }

    /// The precision it evaluates in.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The same evaluator valuing a leaf with a capture pending by its forced capture sequences
    /// under `rules`, visiting at most `max_nodes` positions per leaf (0: off).
    pub fn with_capture_resolution(mut self, rules: Rules, max_nodes: usize) -> NnueEvaluator {
        self.resolve = (max_nodes > 0).then_some((rules, max_nodes));
        self
    }

    /// Win, draw and loss of `pos` (whose legal moves are `moves`) for the side to move, resolving
    /// captures: `budget` positions may still be expanded.
    fn resolved(&self, pos: &Position, moves: &[Move], rules: &Rules, scratch: &mut Scratch, budget: &mut usize, ply: u32) -> [f32; 3] {
        if moves.is_empty() {
            return [0.0, 0.0, 1.0];
        }
        if !moves[0].is_capture() || *budget == 0 || ply >= RESOLVE_PLIES {
            return self.net.evaluate_position_with(self.precision, pos, &[], scratch, &mut Vec::new()).wdl();
        }
        *budget -= 1;
        let mut best: Option<[f32; 3]> = None;
        for mv in moves {
            let child = pos.play(mv);
            let replies = child.legal_moves_with(rules);
            let w = self.resolved(&child, &replies, rules, scratch, budget, ply + 1);
            let mine = [w[2], w[1], w[0]];
            if best.is_none_or(|b| mine[0] - mine[2] > b[0] - b[2]) {
                best = Some(mine);
            }
        }
        best.expect("a capture was there")
    }

    /// The network.
    pub fn network(&self) -> &Arc<Network> {
        &self.net
    }
}

impl Clone for NnueEvaluator {
    fn clone(&self) -> NnueEvaluator {
        NnueEvaluator { net: self.net.clone(), scratch: RefCell::new(Scratch::default()), resolve: self.resolve, precision: self.precision }
    }
}

impl Evaluator for NnueEvaluator {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        let mut scratch = self.scratch.try_borrow_mut().map_err(|_| EvalError::new("evaluator used re-entrantly"))?;
        Ok(batch
            .iter()
            .map(|r| {
                let mut policy = Vec::with_capacity(r.moves.len());
                let out = self.net.evaluate_position_with(self.precision, &r.position, &r.moves, &mut scratch, &mut policy);
                let wdl = match self.resolve {
                    Some((rules, nodes)) if r.moves.first().is_some_and(|m| m.is_capture()) => {
                        self.resolved(&r.position, &r.moves, &rules, &mut scratch, &mut { nodes }, 0)
                    }
                    _ => out.wdl(),
                };
                Evaluation { policy, wdl, moves_left: out.moves_left }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::EvalRequest;

    fn network() -> (tempfile::TempDir, Arc<Network>) {
        let dir = tempfile::tempdir().unwrap();
        let arch = draughts_model::NetConfig { accumulator: 16, hidden: vec![8], ..draughts_model::NetConfig::sparse() };
        let tensors = draughts_nnue::testing::random_tensors(&arch, 5, 1.0);
        let path = draughts_nnue::testing::write_checkpoint(dir.path(), "t", 1, &arch, &tensors);
        (dir, Arc::new(Network::load(&path).unwrap()))
    }

    fn wdl(e: &NnueEvaluator, fen: &str) -> [f32; 3] {
        let pos = Position::from_fen(fen).unwrap();
        e.evaluate(&[EvalRequest::new(pos, &Rules::FMJD)]).unwrap().remove(0).wdl
    }

    fn raw(net: &Network, fen: &str) -> [f32; 3] {
        net.evaluate_position(&Position::from_fen(fen).unwrap(), &[], &mut Scratch::default(), &mut Vec::new()).wdl()
    }

    #[test]
    fn a_leaf_with_a_capture_pending_takes_the_value_of_its_captures() {
        let (_dir, net) = network();
        let plain = NnueEvaluator::new(net.clone());
        let resolving = NnueEvaluator::new(net.clone()).with_capture_resolution(Rules::FMJD, 64);
        // White must take the last black man: a won position, whatever the network says of it.
        assert_eq!(wdl(&resolving, "W:W28:B23"), [1.0, 0.0, 0.0]);
        assert_eq!(wdl(&plain, "W:W28:B23"), raw(&net, "W:W28:B23"));
        // One forced capture into a quiet position: the network's value of that position, seen
        // from the other side.
        let after = raw(&net, "B:W19,40:B10");
        assert_eq!(wdl(&resolving, "W:W28,40:B10,23"), [after[2], after[1], after[0]]);
        // A quiet leaf is the network's.
        assert_eq!(wdl(&resolving, "W:W31-50:B1-20"), raw(&net, "W:W31-50:B1-20"));
        // The policy is the network's at the leaf either way.
        let pos = Position::from_fen("W:W28,40:B10,23").unwrap();
        let req = [EvalRequest::new(pos, &Rules::FMJD)];
        assert_eq!(plain.evaluate(&req).unwrap()[0].policy, resolving.evaluate(&req).unwrap()[0].policy);
        // Off, it is the plain evaluator.
        let off = NnueEvaluator::new(net.clone()).with_capture_resolution(Rules::FMJD, 0);
        assert_eq!(wdl(&off, "W:W28:B23"), raw(&net, "W:W28:B23"));
    }

    #[test]
    fn a_quantised_evaluator_runs_in_int8_throughout() {
        let (_dir, net) = network();
        let e = NnueEvaluator::new(net.clone()).with_capture_resolution(Rules::FMJD, 64).with_precision(Precision::Int8);
        assert_eq!(e.precision(), Precision::Int8);
        let int8 = |fen: &str| {
            let pos = Position::from_fen(fen).unwrap();
            let mut policy = Vec::new();
            let out = net.evaluate_position_with(Precision::Int8, &pos, &pos.legal_moves(), &mut Scratch::default(), &mut policy);
            (out.wdl(), policy)
        };
        // A quiet leaf: the quantised network's value and policy, not the float one's.
        let pos = Position::from_fen("W:W31-50:B1-20").unwrap();
        let got = e.evaluate(&[EvalRequest::new(pos, &Rules::FMJD)]).unwrap().remove(0);
        assert_eq!((got.wdl, got.policy), int8("W:W31-50:B1-20"));
        assert_ne!(got.wdl, raw(&net, "W:W31-50:B1-20"));
        // A capture resolved into a quiet position valued in int8 too.
        let after = int8("B:W19,40:B10").0;
        assert_eq!(wdl(&e, "W:W28,40:B10,23"), [after[2], after[1], after[0]]);
        assert_eq!(e.clone().precision(), Precision::Int8);
    }

    #[test]
    fn the_side_to_move_picks_its_best_capture_and_the_reply_is_resolved_too() {
        let (_dir, net) = network();
        let e = NnueEvaluator::new(net.clone()).with_capture_resolution(Rules::FMJD, 64);
        // White has two captures; after each, Black must recapture or not; the resolved value
        // is the best, for White, of the two lines' resolved values (computed here by hand).
        let pos = Position::from_fen("W:W32,34,45:B9,16,27,29").unwrap();
        let moves = pos.legal_moves_with(&Rules::FMJD);
        assert!(moves.len() >= 2 && moves.iter().all(|m| m.is_capture()), "{moves:?}");
        let line = |mv: &Move| {
            let child = pos.play(mv);
            let w = wdl(&e, &child.to_fen());
            [w[2], w[1], w[0]]
        };
        let best = moves.iter().map(line).max_by(|a, b| (a[0] - a[2]).total_cmp(&(b[0] - b[2]))).unwrap();
        assert_eq!(wdl(&e, &pos.to_fen()), best);
        // A budget of one position: the root's captures lead to the network's values.
        let tight = NnueEvaluator::new(net.clone()).with_capture_resolution(Rules::FMJD, 1);
        let shallow = moves
            .iter()
            .map(|m| {
                let w = raw(&net, &pos.play(m).to_fen());
                [w[2], w[1], w[0]]
            })
            .max_by(|a, b| (a[0] - a[2]).total_cmp(&(b[0] - b[2])))
            .unwrap();
        assert_eq!(wdl(&tight, &pos.to_fen()), shallow);
    }
}
