//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::cell::RefCell;

use draughts_core::{Game, Move, Position, Rules};
use draughts_mcts::{EvalError, EvalRequest, Evaluation, Evaluator, Search, SearchOutcome};

pub fn pos(fen: &str) -> Position {
    Position::from_fen(fen).unwrap()
}

pub fn game(fen: &str) -> Game {
    Game::from_position(pos(fen), Rules::FMJD)
}

pub fn hub(game: &Game, text: &str) -> Move {
    game.position().parse_hub_move(text).unwrap()
}

/// Wraps an evaluator, records every batch and checks that no request is terminal.
pub struct Recording<E> {
    pub inner: E,
    pub rules: Rules,
    pub batches: RefCell<Vec<usize>>,
    pub positions: RefCell<Vec<Position>>,
}

impl<E> Recording<E> {
    pub fn new(inner: E) -> Recording<E> {
        Recording { inner, rules: Rules::FMJD, batches: RefCell::default(), positions: RefCell::default() }
    }

    pub fn requests(&self) -> usize {
        self.batches.borrow().iter().sum()
    }
}

impl<E: Evaluator> Evaluator for Recording<E> {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        for r in batch {
            assert!(!r.moves.is_empty(), "terminal (no moves) sent: {}", r.position);
            let g = Game::with_counters(r.position, r.counters, self.rules);
            assert_eq!(g.outcome(), None, "terminal sent: {} {:?}", r.position, r.counters);
            if let Some(n) = self.rules.draw.repetition {
                assert!(r.repetitions < n as u32, "repeated position sent: {} x{}", r.position, r.repetitions);
            }
            assert_eq!(r.moves, r.position.legal_moves_with(&self.rules));
            self.positions.borrow_mut().push(r.position);
        }
        self.batches.borrow_mut().push(batch.len());
        self.inner.evaluate(batch)
    }
}

/// Checks the invariants every outcome must satisfy.
pub fn check_outcome(search: &Search, out: &SearchOutcome) {
    let legal = search.game().legal_moves();
    assert_eq!(out.policy_target.len(), legal.len());
    for ((mv, p), l) in out.policy_target.iter().zip(&legal) {
        assert_eq!(mv, l);
        assert!(p.is_finite() && *p >= 0.0, "{mv} {p}");
    }
    let total: f32 = out.policy_target.iter().map(|(_, p)| p).sum();
    assert!((total - 1.0).abs() < 1e-4, "policy target sums to {total}");
    assert!(legal.contains(&out.best));
    let wdl: f32 = out.root_wdl.iter().sum();
    assert!((wdl - 1.0).abs() < 1e-4, "{:?}", out.root_wdl);
    assert!((out.root_wdl[0] - out.root_wdl[2] - out.root_value).abs() < 1e-4);
    let child_visits: u32 = out.children.iter().map(|c| c.visits).sum();
    assert_eq!(child_visits + 1, out.visits, "root visits = its own evaluation + children");
}
