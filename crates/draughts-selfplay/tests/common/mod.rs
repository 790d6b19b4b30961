//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::cell::RefCell;

use draughts_mcts::{EvalError, EvalRequest, Evaluation, Evaluator, MctsConfig};
use draughts_selfplay::SelfplayConfig;

/// Wraps an evaluator and records the size of every batch.
#[derive(Debug, Default)]
pub struct Counting<E> {
    pub inner: E,
    pub batches: RefCell<Vec<usize>>,
}

impl<E> Counting<E> {
    pub fn new(inner: E) -> Counting<E> {
        Counting { inner, batches: RefCell::default() }
    }

    pub fn calls(&self) -> usize {
        self.batches.borrow().len()
    }

    pub fn positions(&self) -> usize {
        self.batches.borrow().iter().sum()
    }
}

impl<E: Evaluator> Evaluator for Counting<E> {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        self.batches.borrow_mut().push(batch.len());
        self.inner.evaluate(batch)
    }
}

/// Tiny searches: 4 simulations full, 2 fast.
pub fn tiny_mcts() -> MctsConfig {
    MctsConfig { simulations: 4, fast_simulations: 2, ..MctsConfig::default() }
}

/// A small pool configuration with resignation off.
pub fn small_config(games_in_flight: usize, max_plies: u32) -> SelfplayConfig {
    SelfplayConfig {
        games_in_flight,
        max_batch: games_in_flight,
        max_plies,
        resign_consecutive: 0,
        seed: 7,
        ..SelfplayConfig::default()
    }
}
